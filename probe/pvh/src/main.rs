//! `wloc-pvh`: a unikernel that reads the machine's topology from the
//! hardware and prints it to the serial port, booted directly by
//! `qemu-system-x86_64 -kernel wloc-pvh` (no UEFI, no bootloader).
//!
//! QEMU enters it through its PVH ELF note (see `boot`).  It then:
//!
//! - copies the PVH start info (RSDP address, memory map, command line);
//!   without an RSDP there (or with `wloc.rsdp=bios` on the command line)
//!   it searches the BIOS areas (`start_info`);
//! - reads the MADT, SRAT, SLIT and HMAT from the RSDP;
//! - starts every application processor the MADT lists with
//!   INIT-SIPI-SIPI so that each one runs its own CPUID (`ap`);
//! - builds the topology with `wloc-probe`'s firmware module, the same
//!   code the UEFI application uses, and prints the same report and hwloc
//!   XML on COM1 between the markers [`BEGIN`], [`XML`] and [`END`];
//! - leaves QEMU through `isa-debug-exit` (I/O port 0xf4): code 3 (QEMU
//!   exit status 7) when everything worked, 0 (exit status 1) with an
//!   `error` line otherwise.  Without that device it halts.
#![no_std]
#![no_main]

extern crate alloc;

mod ap;
mod boot;
mod start_info;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use linked_list_allocator::LockedHeap;
use uart_16550::{Config, Uart16550Tty};
use wloc_probe::acpi::{AcpiTables, Checksum, Madt, PhysicalMemory, Signature};
use wloc_probe::firmware::{self, Cpu, CpuidCollector, apic_id_here};
use x86_64::instructions::port::Port;

use start_info::StartInfo;

/// Line printed before the topology.
pub const BEGIN: &str = "=== wloc-pvh begin ===";
/// Line printed between the report and the hwloc XML document.
pub const XML: &str = "=== wloc-pvh xml ===";
/// Start of the line printed after it, followed by `ok` or `failed`.
pub const END: &str = "=== wloc-pvh end";

/// The value written to `isa-debug-exit` on success (QEMU exits with
/// `(value << 1) | 1` = 7, which a plain QEMU failure cannot give).
const EXIT_SUCCESS: u32 = 3;
/// COM1.
const COM1: u16 = 0x3f8;
/// Bytes of heap, in `.bss`.  The report and XML of a 128-PU machine
/// take well under 1 MiB.
const HEAP_BYTES: usize = 16 << 20;

#[global_allocator]
static HEAP: LockedHeap = LockedHeap::empty();

#[repr(C, align(4096))]
struct HeapSpace([u8; HEAP_BYTES]);
static mut HEAP_SPACE: HeapSpace = HeapSpace([0; HEAP_BYTES]);

/// Called by `boot` in long mode with the start info's physical address.
#[unsafe(no_mangle)]
extern "C" fn pvh_main(start_info: u32) -> ! {
    // SAFETY: called once, before any allocation; the space is ours.
    unsafe {
        HEAP.lock()
            .init(core::ptr::addr_of_mut!(HEAP_SPACE).cast(), HEAP_BYTES);
    }
    let mut out = serial();
    let _ = writeln!(out, "{BEGIN}");
    let ok = match run(&mut out, u64::from(start_info)) {
        Ok(()) => true,
        Err(e) => {
            let _ = writeln!(out, "error {e}");
            false
        }
    };
    let _ = writeln!(out, "{END} {} ===", if ok { "ok" } else { "failed" });
    exit(ok)
}

/// A writer to COM1, or to nowhere when the port does not answer.
fn serial() -> impl Write {
    // SAFETY: COM1's ports; nothing else in this program uses them.
    match unsafe { Uart16550Tty::new_port(COM1, Config::default()) } {
        Ok(tty) => Output::Serial(tty),
        Err(_) => Output::None,
    }
}

enum Output<T> {
    Serial(T),
    None,
}

impl<T: Write> Write for Output<T> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        match self {
            Output::Serial(t) => t.write_str(s),
            Output::None => Ok(()),
        }
    }
}

/// Probes the machine and prints its topology.
fn run(out: &mut dyn Write, start_info: u64) -> Result<(), String> {
    let info = StartInfo::read(&IdentityMapped, start_info)?;
    let tables = acpi_tables(out, &info)?;
    let madt = match tables.as_ref().and_then(|t| t.get(Signature::MADT)) {
        Some(b) => Some(Madt::parse(b).map_err(|e| format!("cannot parse the MADT: {e}"))?),
        None => None,
    };
    let cpus = enabled_cpus(madt.as_ref());
    let runner = if cpus.len() > 1 {
        Some(ap::ApRunner::new(info.is_ram(0x8000, 0x10000))?)
    } else {
        None
    };
    let collector = CpuidCollector::new(ApsOrNone(runner), cpus, madt.as_ref());
    let (topo, numa) = firmware::assemble(&collector, tables.as_ref(), &|| info.ram_bytes())
        .map_err(|e| format!("{e}"))?;
    let serial_error = |_| serial_error();
    firmware::report::print_x86_cpus(out, &collector).map_err(serial_error)?;
    firmware::report::print(out, &topo, tables.as_ref(), numa.as_ref()).map_err(serial_error)?;
    // hwloc 2 format, so that hwloc 2.x and wloc both read it back.
    let xml = wloc_xml::export(&topo, wloc_xml::XmlVersion::V2);
    writeln!(out, "{XML}").map_err(serial_error)?;
    out.write_str(&xml).map_err(serial_error)
}

fn serial_error() -> String {
    String::from("cannot write to the serial port")
}

/// The AP runner, absent on a machine of one CPU.
struct ApsOrNone(Option<ap::ApRunner>);

impl firmware::CpuRunner for ApsOrNone {
    fn run(&self, cpu: &Cpu, queries: &[(u32, u32)], out: &mut [[u32; 4]]) -> Result<(), String> {
        match &self.0 {
            Some(r) => r.run(cpu, queries, out),
            None => Err(format!(
                "no way to reach the processor with APIC id {:#x}",
                cpu.apic_id
            )),
        }
    }
}

/// The CPUs to probe: the enabled processors of the MADT, in its order
/// (`number` is the MADT index), and the one we run on even if the MADT
/// misses it.
fn enabled_cpus(madt: Option<&Madt>) -> Vec<Cpu> {
    let me = apic_id_here();
    let mut cpus: Vec<Cpu> = Vec::new();
    if let Some(m) = madt {
        for (number, p) in m.processors.iter().enumerate() {
            if p.enabled || p.apic_id == me {
                cpus.push(Cpu {
                    number,
                    apic_id: p.apic_id,
                    os_index: 0,
                    bsp: p.apic_id == me,
                });
            }
        }
    }
    if !cpus.iter().any(|c| c.bsp) {
        cpus.push(Cpu {
            number: cpus.len(),
            apic_id: me,
            os_index: 0,
            bsp: true,
        });
    }
    cpus
}

/// Physical memory below 4 GiB, identity mapped by `boot`.
struct IdentityMapped;

impl PhysicalMemory for IdentityMapped {
    fn read(&self, address: u64, buf: &mut [u8]) -> bool {
        // Address 0 is never a table; nothing above 4 GiB is mapped.
        match address.checked_add(buf.len() as u64) {
            Some(end) if address != 0 && end <= 1 << 32 => {}
            _ => return false,
        }
        // SAFETY: the first 4 GiB are identity-mapped; the addresses come
        // from the boot ABI, the BIOS areas or the firmware's ACPI tables.
        unsafe {
            core::ptr::copy_nonoverlapping(address as *const u8, buf.as_mut_ptr(), buf.len());
        }
        true
    }
}

/// The ACPI tables from the RSDP the start info gives, else the one found
/// in the BIOS areas; `None` when there is none.  Prints the line
/// `rsdp ADDRESS from=start-info|bios-areas` (or `rsdp none`).
fn acpi_tables(out: &mut dyn Write, info: &StartInfo) -> Result<Option<AcpiTables>, String> {
    // `wloc.rsdp=bios` on the command line ignores the start info's RSDP,
    // so that the search used when a loader gives none can be tested.
    let scan = info.cmdline.split(' ').any(|w| w == "wloc.rsdp=bios");
    let rsdp = match info.rsdp {
        a if a != 0 && !scan => Some((a, "start-info")),
        _ => start_info::find_rsdp(&IdentityMapped).map(|a| (a, "bios-areas")),
    };
    let Some((rsdp, source)) = rsdp else {
        writeln!(out, "rsdp none").map_err(|_| serial_error())?;
        return Ok(None);
    };
    writeln!(out, "rsdp {rsdp:#x} from={source}").map_err(|_| serial_error())?;
    AcpiTables::from_rsdp(&IdentityMapped, rsdp, Checksum::Verify)
        .map(Some)
        .map_err(|e| format!("cannot read the ACPI tables from the RSDP at {rsdp:#x}: {e}"))
}

/// Leaves through `isa-debug-exit`; without that device, halts.
fn exit(ok: bool) -> ! {
    let value: u32 = if ok { EXIT_SUCCESS } else { 0 };
    // SAFETY: port 0xf4 is unused on PCs; under QEMU the isa-debug-exit
    // device there stops the virtual machine.
    unsafe { Port::<u32>::new(0xf4).write(value) };
    loop {
        x86_64::instructions::interrupts::disable();
        x86_64::instructions::hlt();
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    let mut out = serial();
    let _ = writeln!(out, "error panic: {info}");
    let _ = writeln!(out, "{END} failed ===");
    exit(false)
}
