//! The printed report: one fact per line, `KEY field=value ...`, easy to
//! read by eye and by the boot tests.
//!
//! - `cpu os=N apic=A mp=M [bsp]`: the CPUs reached, by OS index.
//! - `cpuid-queries N`: CPUID answers collected over all CPUs.
//! - `cpuid OS LEAF SUBLEAF => EAX EBX ECX EDX`: every answer, in hex,
//!   enough to replay the machine as a CPUID dump.
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

use crate::acpi::{AcpiNuma, AcpiTables};
use wloc_core::memattrs::Initiator;
use wloc_core::synthetic::{self, ExportFlags};
use wloc_core::{ObjType, Topology};

use super::{CpuRunner, CpuidCollector};

/// Writes the CPU lines of an x86 machine: the CPUs reached and their
/// CPUID answers.  They come first, then [`print`]'s lines.
pub fn print_x86_cpus<R: CpuRunner>(out: &mut dyn Write, cpus: &CpuidCollector<R>) -> fmt::Result {
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

/// Writes the lines every probe prints: ACPI tables, the topology's
/// synthetic description, objects, distances and memory attributes.
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
