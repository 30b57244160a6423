//! The printed report: one fact per line, `KEY field=value ...`, easy to
//! read by eye and by the boot tests.
//!
//! - x86: `cpu os=N apic=A mp=M [bsp]`: the CPUs reached, by OS index;
//!   `cpuid-queries N`: CPUID answers collected over all CPUs;
//!   `cpuid OS LEAF SUBLEAF => EAX EBX ECX EDX`: every answer, in hex,
//!   enough to replay the machine as a CPUID dump.
//! - ARM: `cpu os=N uid=U mpidr=M [boot]`: the processors of the MADT, by
//!   OS index; `pptt revision=R nodes=N caches=C` (or `pptt none`), then
//!   one `pptt-node` and `pptt-cache` line per structure, as read.
//! - `acpi tables=SIG,... skipped=N`: tables found from the RSDP.
//! - `synthetic DESC`: the topology as a synthetic description (or
//!   `synthetic-error MESSAGE` when it has no such description).
//! - `obj TYPE os=N|- logical=L parent=TYPE:L|- cpuset=LIST nodeset=LIST
//!   [size=B depth=D line=B assoc=A] [memory=B] [subtype=S]`: every
//!   object, depth first; sets as lists (`0-3,8`).
//! - `info TYPE:L NAME=VALUE`: the infos of the root and the packages.
//! - `distances NAME nodes=OS,... values=V,...`: row-major matrices.
//! - `memattr NAME target=OS initiator=LIST value=V`: memory attributes.
//!
//! The x86 lines and the machine-independent ones are printed by
//! `wloc-probe`'s `firmware::report`, which the PVH unikernel
//! (`probe/pvh`) uses too; the ARM lines are this module's.

#[cfg(target_arch = "aarch64")]
use core::fmt::{self, Write};

#[cfg(target_arch = "aarch64")]
use wloc_probe::acpi::{ArmCpu, Pptt};
pub use wloc_probe::firmware::report::print;
#[cfg(target_arch = "x86_64")]
pub use wloc_probe::firmware::report::print_x86_cpus;

/// Writes the CPU lines of an ARM machine: the processors of the MADT
/// as numbered, and the PPTT's nodes and caches as read.
#[cfg(target_arch = "aarch64")]
pub fn print_arm_cpus(
    out: &mut dyn Write,
    cpus: &[ArmCpu],
    boot_mpidr: u64,
    pptt: Option<&Pptt>,
) -> fmt::Result {
    for c in cpus {
        writeln!(
            out,
            "cpu os={} uid={} mpidr={:#x}{}",
            c.os_index,
            c.uid,
            c.mpidr,
            if c.mpidr == boot_mpidr & wloc_probe::acpi::MPIDR_HWID_MASK {
                " boot"
            } else {
                ""
            }
        )?;
    }
    let Some(p) = pptt else {
        return writeln!(out, "pptt none");
    };
    writeln!(
        out,
        "pptt revision={} nodes={} caches={}",
        p.header.revision,
        p.processors.len(),
        p.caches.len()
    )?;
    for n in &p.processors {
        writeln!(
            out,
            "pptt-node offset={} parent={} flags={:#x} id={} resources={}",
            n.offset,
            n.parent.unwrap_or(0),
            n.flags,
            n.acpi_processor_id,
            n.resources.len()
        )?;
    }
    for c in &p.caches {
        writeln!(
            out,
            "pptt-cache offset={} flags={:#x} next={} size={:?} sets={:?} ways={:?} type={:?} line={:?} id={:?}",
            c.offset,
            c.flags,
            c.next_level.unwrap_or(0),
            c.size,
            c.sets,
            c.associativity,
            c.cache_type,
            c.line_size,
            c.cache_id
        )?;
    }
    Ok(())
}
