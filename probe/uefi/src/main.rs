//! `wloc-uefi`: a UEFI application that reads the machine's topology from
//! the hardware, without an operating system, and prints it to the serial
//! port.  It builds for `x86_64-unknown-uefi` and `aarch64-unknown-uefi`.
//!
//! On x86 it asks every CPU for its CPUID answers through the firmware's
//! MP services; on ARM it reads the boot processor's MPIDR and takes the
//! processors from the MADT's GICC structures and their topology and
//! caches from the PPTT.  It reads the MADT, SRAT, SLIT and HMAT that the
//! firmware's configuration table points to, builds a `wloc-core`
//! topology with `wloc-probe`, prints it between the markers [`BEGIN`]
//! and [`END`] (see `report` for the line format, then, after the line
//! [`XML`], the topology as an hwloc XML document), and leaves.
//!
//! On x86 it leaves QEMU through its `isa-debug-exit` device (I/O port
//! 0xf4): code 3 (QEMU exit status 7) when everything worked, 0 (exit
//! status 1) with an `error` line otherwise; on a machine without that
//! device, the firmware's reset service powers it off instead.  On ARM
//! the reset service powers the machine off (PSCI `SYSTEM_OFF` under
//! QEMU, which then exits with status 0): the end marker says whether it
//! worked.
#![no_std]
#![no_main]

extern crate alloc;

#[cfg(target_arch = "x86_64")]
mod cpus;
mod report;
mod serial;

use alloc::format;
use alloc::string::String;
use core::fmt::Write;

use uefi::prelude::*;
use uefi::table::cfg::ConfigTableEntry;
use wloc_core::Topology;
use wloc_probe::acpi::{AcpiNuma, AcpiTables, Checksum, Madt, PhysicalMemory, Signature};

use wloc_probe::firmware::empty_topology;

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
#[cfg(target_arch = "x86_64")]
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

/// The MADT, if the firmware has one.
fn madt(tables: Option<&AcpiTables>) -> Result<Option<Madt>, String> {
    match tables.and_then(|t| t.get(Signature::MADT)) {
        Some(b) => Ok(Some(
            Madt::parse(b).map_err(|e| format!("cannot parse the MADT: {e}"))?,
        )),
        None => Ok(None),
    }
}

/// Reads the NUMA tables and puts them into the topology; `to_pu` maps
/// the processor ids of the SRAT to PUs.  Without NUMA tables the one
/// node gets the RAM of the firmware's memory map.
fn apply_numa(
    tables: Option<&AcpiTables>,
    topo: &mut Topology,
    to_pu: &dyn Fn(u32) -> Option<u32>,
) -> Result<Option<AcpiNuma>, String> {
    wloc_probe::firmware::apply_numa(tables, topo, to_pu, &ram_bytes).map_err(|e| format!("{e}"))
}

/// Prints the common report and the XML document.
fn finish_report(
    out: &mut SerialOut,
    topo: &Topology,
    tables: Option<&AcpiTables>,
    numa: Option<&AcpiNuma>,
) -> Result<(), String> {
    let serial_error = |_| String::from("cannot write to the serial port");
    report::print(out, topo, tables, numa).map_err(serial_error)?;
    // hwloc 2 format, so that hwloc 2.x and wloc both read it back.
    let xml = wloc_xml::export(topo, wloc_xml::XmlVersion::V2);
    writeln!(out, "{XML}").map_err(serial_error)?;
    out.write_str(&xml).map_err(serial_error)
}

/// Probes the machine and prints its topology.
#[cfg(target_arch = "x86_64")]
fn run(out: &mut SerialOut) -> Result<(), String> {
    let tables = acpi_tables()?;
    let madt = madt(tables.as_ref())?;
    let cpus = cpus::mp_cpuid(madt.as_ref())?;
    let mut topo = cpus
        .discover(empty_topology())
        .map_err(|e| format!("{e}"))?;
    let numa = apply_numa(tables.as_ref(), &mut topo, &|apic| {
        cpus.os_index_of_apic(apic)
    })?;
    report::print_x86_cpus(out, &cpus)
        .map_err(|_| String::from("cannot write to the serial port"))?;
    finish_report(out, &topo, tables.as_ref(), numa.as_ref())
}

/// Probes the machine and prints its topology.
#[cfg(target_arch = "aarch64")]
fn run(out: &mut SerialOut) -> Result<(), String> {
    use wloc_probe::acpi::{Pptt, arm_cpus, discover_arm, os_index_of_uid};
    let tables = acpi_tables()?.ok_or_else(|| {
        String::from("the firmware publishes no ACPI tables (a device tree alone is not read)")
    })?;
    let madt = madt(Some(&tables))?
        .ok_or_else(|| String::from("the firmware's ACPI tables have no MADT"))?;
    let pptt = match tables.get(Signature::PPTT) {
        Some(b) => Some(Pptt::parse(b).map_err(|e| format!("cannot parse the PPTT: {e}"))?),
        None => None,
    };
    let boot = boot_mpidr();
    let cpus = arm_cpus(&madt, Some(boot));
    let mut topo = discover_arm(&madt, pptt.as_ref(), Some(boot), empty_topology())
        .map_err(|e| format!("{e}"))?;
    let numa = apply_numa(Some(&tables), &mut topo, &|uid| os_index_of_uid(&cpus, uid))?;
    report::print_arm_cpus(out, &cpus, boot, pptt.as_ref())
        .map_err(|_| String::from("cannot write to the serial port"))?;
    finish_report(out, &topo, Some(&tables), numa.as_ref())
}

/// The MPIDR of the processor this application runs on.
#[cfg(target_arch = "aarch64")]
fn boot_mpidr() -> u64 {
    let v: u64;
    // SAFETY: MPIDR_EL1 is readable at EL1 and above, where UEFI
    // applications run; reading it has no side effect.
    unsafe {
        core::arch::asm!("mrs {}, mpidr_el1", out(reg) v, options(nomem, nostack, preserves_flags));
    }
    v
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
#[cfg(target_arch = "x86_64")]
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

/// Powers the machine off through the firmware's reset service (PSCI
/// `SYSTEM_OFF` on QEMU's virt machine, which ends QEMU with status 0).
#[cfg(target_arch = "aarch64")]
fn exit(ok: bool) -> Status {
    let status = if ok { Status::SUCCESS } else { Status::ABORTED };
    uefi::runtime::reset(uefi::runtime::ResetType::SHUTDOWN, status, None)
}
