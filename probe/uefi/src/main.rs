//! `wloc-uefi`: a UEFI application that reads the machine's topology from
//! the hardware, without an operating system, and prints it to the serial
//! port.
//!
//! It asks every CPU for its CPUID answers through the firmware's MP
//! services, reads the MADT, SRAT, SLIT and HMAT that the firmware's
//! configuration table points to, builds a `wloc-core` topology with
//! `wloc-probe`, prints it between the markers [`BEGIN`] and [`END`] (see
//! `report` for the line format, then, after the line [`XML`], the
//! topology as an hwloc XML document), and leaves QEMU through its
//! `isa-debug-exit` device (I/O port 0xf4): code 3 (QEMU exit status 7)
//! when everything worked, 0 (exit status 1) with an `error` line
//! otherwise.  On a machine without that device, the firmware's reset
//! service powers it off instead.
#![no_std]
#![no_main]

extern crate alloc;

mod cpus;
mod report;
mod serial;

use alloc::format;
use alloc::string::String;
use core::fmt::Write;

use uefi::prelude::*;
use uefi::table::cfg::ConfigTableEntry;
use wloc_core::object::ObjAttr;
use wloc_core::{ObjType, Topology, TypeFilter};
use wloc_probe::acpi::{AcpiTables, Checksum, Madt, PhysicalMemory, Signature};

use cpus::MpCpuid;
use serial::SerialOut;

/// Line printed before the topology.
pub const BEGIN: &str = "=== wloc-uefi begin ===";
/// Line printed between the report and the hwloc XML document.
pub const XML: &str = "=== wloc-uefi xml ===";
/// Start of the line printed after it, followed by `ok` or `failed`.
pub const END: &str = "=== wloc-uefi end";

/// The value written to `isa-debug-exit` on success.  QEMU exits with
/// `(value << 1) | 1`, so success is status 7 and cannot be mistaken for
/// a plain QEMU failure (status 1).
const EXIT_SUCCESS: u32 = 3;

#[entry]
fn main() -> Status {
    let mut out = SerialOut::open();
    let _ = writeln!(out, "{BEGIN}");
    let ok = match run(&mut out) {
        Ok(()) => true,
        Err(e) => {
            let _ = writeln!(out, "error {e}");
            false
        }
    };
    let _ = writeln!(out, "{END} {} ===", if ok { "ok" } else { "failed" });
    out.flush();
    exit(ok)
}

/// Probes the machine and prints its topology.
fn run(out: &mut SerialOut) -> Result<(), String> {
    let tables = acpi_tables()?;
    let madt = match tables.as_ref().and_then(|t| t.get(Signature::MADT)) {
        Some(b) => Some(Madt::parse(b).map_err(|e| format!("cannot parse the MADT: {e}"))?),
        None => None,
    };
    let cpus = MpCpuid::new(madt.as_ref())?;

    let mut topo = Topology::new();
    topo.set_all_types_filter(TypeFilter::KeepAll);
    topo.include_disallowed = true;
    let mut topo = cpus.discover(topo)?;

    let numa = match &tables {
        Some(t) => {
            let numa = t
                .numa(Checksum::Verify)
                .map_err(|e| format!("cannot parse the ACPI NUMA tables: {e}"))?;
            numa.apply(&mut topo, &|apic| cpus.os_index_of_apic(apic))
                .map_err(|e| format!("cannot apply the ACPI NUMA tables: {e}"))?;
            Some(numa)
        }
        None => None,
    };
    if numa.as_ref().is_none_or(|n| n.nodes.is_empty()) {
        set_single_node_memory(&mut topo, ram_bytes()?)?;
    }
    let serial_error = |_| String::from("cannot write to the serial port");
    report::print(out, &topo, &cpus, tables.as_ref(), numa.as_ref()).map_err(serial_error)?;
    // hwloc 2 format, so that hwloc 2.x and wloc both read it back.
    let xml = wloc_xml::export(&topo, wloc_xml::XmlVersion::V2);
    writeln!(out, "{XML}").map_err(serial_error)?;
    out.write_str(&xml).map_err(serial_error)
}

/// Bytes of RAM an operating system could use, from the firmware's
/// memory map: free memory and what the firmware and this application
/// occupy until boot services end.
fn ram_bytes() -> Result<u64, String> {
    use uefi::mem::memory_map::{MemoryMap, MemoryType};
    let map = uefi::boot::memory_map(MemoryType::LOADER_DATA)
        .map_err(|e| format!("cannot read the firmware's memory map: {e:?}"))?;
    Ok(map
        .entries()
        .filter(|d| {
            matches!(
                d.ty,
                MemoryType::CONVENTIONAL
                    | MemoryType::LOADER_CODE
                    | MemoryType::LOADER_DATA
                    | MemoryType::BOOT_SERVICES_CODE
                    | MemoryType::BOOT_SERVICES_DATA
                    | MemoryType::ACPI_RECLAIM
            )
        })
        .map(|d| d.page_count.saturating_mul(4096))
        .fold(0u64, u64::saturating_add))
}

/// Without NUMA tables the machine has the one node discovery added:
/// give it the machine's RAM.
fn set_single_node_memory(topo: &mut Topology, bytes: u64) -> Result<(), String> {
    let nodes = topo.objs_by_type(ObjType::NUMANode);
    if let [node] = nodes[..] {
        if let ObjAttr::Numa(a) = &mut topo.obj_mut(node).attr {
            a.local_memory = bytes;
        }
        // Finishing again recomputes the memory totals.
        topo.finish()
            .map_err(|e| format!("cannot finish the topology: {e}"))?;
    }
    Ok(())
}

/// Physical memory as UEFI leaves it: identity mapped.
struct IdentityMapped;

impl PhysicalMemory for IdentityMapped {
    fn read(&self, address: u64, buf: &mut [u8]) -> bool {
        // Address 0 is never an ACPI table; wrapping ranges are bogus pointers.
        if address == 0 || address.checked_add(buf.len() as u64).is_none() {
            return false;
        }
        // SAFETY: UEFI identity-maps all memory while boot services run,
        // and the addresses come from the firmware's own ACPI tables.
        unsafe {
            core::ptr::copy_nonoverlapping(address as *const u8, buf.as_mut_ptr(), buf.len());
        }
        true
    }
}

/// The ACPI tables the firmware publishes, or `None` when its
/// configuration table has no RSDP.
fn acpi_tables() -> Result<Option<AcpiTables>, String> {
    let rsdp = uefi::system::with_config_table(|entries| {
        let find = |guid| {
            entries
                .iter()
                .find(|e| e.guid == guid)
                .map(|e| e.address as u64)
        };
        find(ConfigTableEntry::ACPI2_GUID).or_else(|| find(ConfigTableEntry::ACPI_GUID))
    });
    let Some(rsdp) = rsdp else {
        return Ok(None);
    };
    AcpiTables::from_rsdp(&IdentityMapped, rsdp, Checksum::Verify)
        .map(Some)
        .map_err(|e| format!("cannot read the ACPI tables from the RSDP at {rsdp:#x}: {e}"))
}

/// Leaves through `isa-debug-exit`; if the write did not stop the
/// machine (no such device), shuts down through the firmware.
///
/// The port is written directly rather than with the `qemu-exit` crate
/// because that crate halts forever when the device is absent, and a
/// real machine should power off instead.
fn exit(ok: bool) -> Status {
    // QEMU exits with status `(value << 1) | 1`.
    let value: u32 = if ok { EXIT_SUCCESS } else { 0 };
    // SAFETY: port 0xf4 is unused on PCs; under QEMU the isa-debug-exit
    // device there stops the virtual machine.
    unsafe {
        core::arch::asm!("out dx, eax", in("dx") 0xf4u16, in("eax") value,
            options(nomem, nostack, preserves_flags));
    }
    let status = if ok { Status::SUCCESS } else { Status::ABORTED };
    uefi::runtime::reset(uefi::runtime::ResetType::SHUTDOWN, status, None)
}
