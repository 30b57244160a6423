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

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::{self, Write};

use wloc_core::memattrs::Initiator;
use wloc_core::synthetic::{self, ExportFlags};
use wloc_core::{ObjType, Topology};
use wloc_probe::acpi::{AcpiNuma, AcpiTables};

#[cfg(target_arch = "x86_64")]
use crate::cpus::MpCpuid;
#[cfg(target_arch = "aarch64")]
use wloc_probe::acpi::{ArmCpu, Pptt};

/// Writes the CPU lines of an x86 machine: the CPUs reached through the
/// MP services and their CPUID answers.
#[cfg(target_arch = "x86_64")]
pub fn print_x86_cpus(out: &mut dyn Write, cpus: &MpCpuid) -> fmt::Result {
    for c in cpus.cpus() {
        writeln!(
            out,
            "cpu os={} apic={} mp={}{}",
            c.os_index,
            c.apic_id,
            c.number,
            if c.bsp { " bsp" } else { "" }
        )?;
    }
    writeln!(out, "cpuid-queries {}", cpus.answered())?;
    for (pu, c) in cpus.cpus().iter().enumerate() {
        for ((leaf, sub), [a, b, cx, d]) in cpus.answers(pu) {
            writeln!(
                out,
                "cpuid {} {leaf:x} {sub:x} => {a:x} {b:x} {cx:x} {d:x}",
                c.os_index
            )?;
        }
    }
    Ok(())
}

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

/// Writes the machine-independent part of the report.
pub fn print(
    out: &mut dyn Write,
    topo: &Topology,
    tables: Option<&AcpiTables>,
    numa: Option<&AcpiNuma>,
) -> fmt::Result {
    match tables {
        Some(t) => {
            let sigs: Vec<String> = t.signatures().map(|s| alloc::format!("{s}")).collect();
            writeln!(
                out,
                "acpi tables={} skipped={}",
                sigs.join(","),
                t.skipped.len()
            )?;
            for e in &t.skipped {
                writeln!(out, "acpi-skipped {e}")?;
            }
        }
        None => writeln!(out, "acpi none")?,
    }
    if let Some(n) = numa {
        writeln!(out, "acpi-numa nodes={}", n.nodes.len())?;
    }
    match synthetic::export(topo, ExportFlags::NONE) {
        Ok(s) => writeln!(out, "synthetic {s}")?,
        Err(e) => writeln!(out, "synthetic-error {e}")?,
    }
    for id in topo.iter_dfs() {
        let o = topo.obj(id);
        write!(out, "obj {} os=", o.obj_type)?;
        match o.os_index {
            Some(i) => write!(out, "{i}")?,
            None => write!(out, "-")?,
        }
        write!(out, " logical={} parent=", o.logical_index())?;
        match o.parent() {
            Some(p) => {
                let p = topo.obj(p);
                write!(out, "{}:{}", p.obj_type, p.logical_index())?
            }
            None => write!(out, "-")?,
        }
        let cpuset = o.cpuset.as_ref().map(|s| s.to_list_string());
        let nodeset = o.nodeset.as_ref().map(|s| s.to_list_string());
        write!(
            out,
            " cpuset={} nodeset={}",
            cpuset.as_deref().unwrap_or("-"),
            nodeset.as_deref().unwrap_or("-")
        )?;
        if let Some(c) = o.cache() {
            write!(
                out,
                " size={} depth={} line={} assoc={}",
                c.size, c.depth, c.linesize, c.associativity
            )?;
        }
        if let Some(n) = o.numa() {
            write!(out, " memory={}", n.local_memory)?;
        }
        if let Some(s) = &o.subtype {
            write!(out, " subtype={s}")?;
        }
        writeln!(out)?;
        if matches!(o.obj_type, ObjType::Machine | ObjType::Package) {
            for i in &o.infos {
                writeln!(
                    out,
                    "info {}:{} {}={}",
                    o.obj_type,
                    o.logical_index(),
                    i.name,
                    i.value
                )?;
            }
        }
    }
    for d in &topo.distances {
        let nodes: Vec<String> = d
            .objs
            .iter()
            .map(|&id| match topo.obj(id).os_index {
                Some(i) => alloc::format!("{i}"),
                None => String::from("-"),
            })
            .collect();
        let values: Vec<String> = d.values.iter().map(|v| alloc::format!("{v}")).collect();
        writeln!(
            out,
            "distances {} nodes={} values={}",
            d.name.as_deref().unwrap_or("-"),
            nodes.join(","),
            values.join(",")
        )?;
    }
    for a in &topo.memattrs {
        for v in &a.values {
            let target = topo.obj(v.target);
            write!(out, "memattr {} target=", a.name)?;
            match target.os_index {
                Some(i) => write!(out, "{i}")?,
                None => write!(out, "-")?,
            }
            match &v.initiator {
                Some(Initiator::CpuSet(s)) => write!(out, " initiator={}", s.to_list_string())?,
                Some(Initiator::Object(id)) => {
                    let o = topo.obj(*id);
                    write!(out, " initiator={}:{}", o.obj_type, o.logical_index())?
                }
                None => write!(out, " initiator=-")?,
            }
            writeln!(out, " value={}", v.value)?;
        }
    }
    Ok(())
}
