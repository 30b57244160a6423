//! What the PVH boot hands over (`hvm_start_info`, Xen's
//! `arch-x86/hvm/start_info.h`: magic, version, flags, module count and
//! list, command line, then `rsdp_paddr` at +32, `memmap_paddr` at +40
//! and `memmap_entries` at +48), and the BIOS areas searched for the
//! RSDP when it gives none.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use wloc_probe::acpi::{Checksum, PhysicalMemory, Rsdp};

/// `hvm_start_info.magic`.
const MAGIC: u32 = 0x336e_c578;
/// E820 types counted as RAM: usable (1) and ACPI reclaimable (3), as
/// the UEFI probe counts conventional and ACPI-reclaim memory.
const E820_RAM: u32 = 1;
const E820_ACPI: u32 = 3;
/// At most this many bytes of command line are read.
const MAX_CMDLINE: u64 = 4096;
/// At most this many memory map entries are read.
const MAX_MEMMAP: u32 = 1024;

/// One memory map entry.
#[derive(Clone, Copy, Debug)]
pub struct MemoryRange {
    /// Start address.
    pub addr: u64,
    /// Length in bytes.
    pub size: u64,
    /// E820 type.
    pub kind: u32,
}

/// The parts of `hvm_start_info` the probe uses, copied before anything
/// else touches memory.
#[derive(Debug)]
pub struct StartInfo {
    /// Physical address of the RSDP, 0 when not given.
    pub rsdp: u64,
    /// The memory map (version 1 of the structure on), empty before.
    pub memmap: Vec<MemoryRange>,
    /// The kernel command line (QEMU's `-append`), empty when none.
    pub cmdline: String,
}

impl StartInfo {
    /// Reads the structure at `address`.
    pub fn read(mem: &dyn PhysicalMemory, address: u64) -> Result<StartInfo, String> {
        let mut head = [0u8; 56];
        if !mem.read(address, &mut head) {
            return Err(format!("the PVH start info at {address:#x} cannot be read"));
        }
        let u32_at =
            |o: usize| u32::from_le_bytes([head[o], head[o + 1], head[o + 2], head[o + 3]]);
        let u64_at = |o: usize| u64::from(u32_at(o)) | (u64::from(u32_at(o + 4)) << 32);
        if u32_at(0) != MAGIC {
            return Err(format!(
                "no PVH start info at {address:#x} (magic {:#x}, expected {MAGIC:#x})",
                u32_at(0)
            ));
        }
        let version = u32_at(4);
        let mut memmap = Vec::new();
        if version >= 1 {
            let table = u64_at(40);
            let entries = u32_at(48);
            if entries > MAX_MEMMAP {
                return Err(format!(
                    "the PVH memory map has {entries} entries, more than {MAX_MEMMAP}"
                ));
            }
            for i in 0..u64::from(entries) {
                let mut e = [0u8; 24];
                let at = table + 24 * i;
                if !mem.read(at, &mut e) {
                    return Err(format!(
                        "PVH memory map entry {i} at {at:#x} cannot be read"
                    ));
                }
                let q = |o: usize| {
                    u64::from_le_bytes([
                        e[o],
                        e[o + 1],
                        e[o + 2],
                        e[o + 3],
                        e[o + 4],
                        e[o + 5],
                        e[o + 6],
                        e[o + 7],
                    ])
                };
                memmap.push(MemoryRange {
                    addr: q(0),
                    size: q(8),
                    kind: u32::from_le_bytes([e[16], e[17], e[18], e[19]]),
                });
            }
        }
        Ok(StartInfo {
            rsdp: u64_at(32),
            memmap,
            cmdline: read_cmdline(mem, u64_at(24)),
        })
    }

    /// Bytes of RAM an operating system could use.
    pub fn ram_bytes(&self) -> Result<u64, String> {
        if self.memmap.is_empty() {
            return Err(String::from("the PVH start info has no memory map"));
        }
        Ok(self
            .memmap
            .iter()
            .filter(|r| matches!(r.kind, E820_RAM | E820_ACPI))
            .map(|r| r.size)
            .fold(0u64, u64::saturating_add))
    }

    /// Whether `[start, end)` lies inside one usable RAM range.
    pub fn is_ram(&self, start: u64, end: u64) -> bool {
        self.memmap
            .iter()
            .any(|r| r.kind == E820_RAM && r.addr <= start && r.addr.saturating_add(r.size) >= end)
    }
}

/// The NUL-terminated command line at `address` (0: none), at most
/// [`MAX_CMDLINE`] bytes; unreadable bytes and invalid UTF-8 end it.
fn read_cmdline(mem: &dyn PhysicalMemory, address: u64) -> String {
    let mut bytes = Vec::new();
    if address != 0 {
        for i in 0..MAX_CMDLINE {
            let mut b = [0u8];
            if !mem.read(address + i, &mut b) || b[0] == 0 {
                break;
            }
            bytes.push(b[0]);
        }
    }
    String::from_utf8(bytes).unwrap_or_default()
}

/// Searches the RSDP where PC BIOSes put it: the first KiB of the EBDA
/// (whose segment the BIOS data area holds at 0x40E), then
/// 0xE0000-0xFFFFF, on 16-byte boundaries.
pub fn find_rsdp(mem: &dyn PhysicalMemory) -> Option<u64> {
    let mut seg = [0u8; 2];
    let ebda = if mem.read(0x40e, &mut seg) {
        u64::from(u16::from_le_bytes(seg)) << 4
    } else {
        0
    };
    let mut areas: Vec<(u64, u64)> = Vec::new();
    if (0x8_0000..0xa_0000).contains(&ebda) {
        areas.push((ebda, ebda + 1024));
    }
    areas.push((0xe_0000, 0x10_0000));
    for (start, end) in areas {
        let mut at = start;
        while at + Rsdp::V2_LEN as u64 <= end {
            let mut b = [0u8; Rsdp::V2_LEN];
            if mem.read(at, &mut b) && &b[..8] == b"RSD PTR " {
                let len = if b[15] >= 2 {
                    Rsdp::V2_LEN
                } else {
                    Rsdp::V1_LEN
                };
                if Rsdp::parse(&b[..len], Checksum::Verify).is_ok() {
                    return Some(at);
                }
            }
            at += 16;
        }
    }
    None
}
