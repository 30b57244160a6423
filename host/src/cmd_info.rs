//! `wloc info`: objects with their attributes, the topology levels and
//! the supported features, as hwloc-info shows them.

use std::fmt::Write as _;

use clap::Args;
use wloc::input::InputFormat;
use wloc_bind::Binder;
use wloc_core::object::{BridgeUpstream, CacheKind, Depth};
use wloc_core::{ObjId, ObjType, Topology};

use crate::cmd_ps::type_name;

/// Options of `wloc info`, named as hwloc-info's.
#[derive(Args, Debug)]
pub struct InfoArgs {
    /// Read the topology from an XML file, a directory (fsroot or CPUID dump) or a synthetic description.
    #[arg(short = 'i', long = "input", value_name = "INPUT")]
    pub input: Option<String>,
    /// Force the input format: xml, synthetic, fsroot or cpuid.
    #[arg(long = "if", alias = "input-format", value_name = "FORMAT", value_parser = parse_input_format)]
    pub input_format: Option<InputFormat>,
    /// Assume the input topology describes the system we run on (also WLOC_THISSYSTEM=1).
    #[arg(long)]
    pub thissystem: bool,
    /// Report the topology levels (the default without locations).
    #[arg(long)]
    pub topology: bool,
    /// Report the supported discovery and binding features.
    #[arg(long)]
    pub support: bool,
    /// Report the objects given as locations (the default with locations).
    #[arg(long)]
    pub objects: bool,
    /// Only name the objects.
    #[arg(short = 's', long)]
    pub silent: bool,
    /// Object indexes in locations are physical (OS) indexes.
    #[arg(short = 'p', long)]
    pub physical: bool,
    /// Object indexes in locations are logical (the default).
    #[arg(short = 'l', long)]
    pub logical: bool,
    /// Objects: TYPE:INDEX, TYPE:FIRST-LAST, TYPE:all or TYPE (for example core:0, numa:all, pci:1).
    pub locations: Vec<String>,
}

fn parse_input_format(s: &str) -> Result<InputFormat, String> {
    InputFormat::parse(s).ok_or_else(|| {
        format!("unknown input format '{s}' (expected xml, synthetic, fsroot or cpuid)")
    })
}

/// The levels of the topology, as `hwloc-info --topology` lists them.
fn levels(topo: &Topology) -> String {
    let mut out = String::new();
    for (d, level) in topo.normal_levels().iter().enumerate() {
        let Some(&first) = level.first() else {
            continue;
        };
        let o = topo.obj(first);
        let label = format!("{}depth {d}:", " ".repeat(d));
        let _ = writeln!(
            out,
            "{label:<18} {} {} (type #{})",
            level.len(),
            type_name(o),
            o.obj_type.index()
        );
    }
    for (depth, t) in [
        (Depth::NumaNode, ObjType::NUMANode),
        (Depth::Bridge, ObjType::Bridge),
        (Depth::PciDevice, ObjType::PCIDevice),
        (Depth::OsDevice, ObjType::OSDevice),
        (Depth::Misc, ObjType::Misc),
        (Depth::MemCache, ObjType::MemCache),
    ] {
        let n = topo.level(depth).len();
        if n > 0 {
            let label = format!("Special depth {}:", depth.to_i32());
            let _ = writeln!(
                out,
                "{label:<18} {n} {} (type #{})",
                t.xml_name(),
                t.index()
            );
        }
    }
    out
}

/// The `--support` report: discovery features from the topology, binding
/// features probed on this kernel.
fn support(topo: &Topology) -> String {
    let mut out = String::new();
    let pus = topo.objs_by_type(ObjType::PU);
    let nodes = topo.objs_by_type(ObjType::NUMANode);
    let b = |v: bool| v as u8;
    let thissys = topo.is_thissystem;
    let discovery = [
        ("discovery:pu", !pus.is_empty()),
        ("discovery:disallowed_pu", thissys),
        ("discovery:numa", !nodes.is_empty()),
        (
            "discovery:numa_memory",
            nodes
                .iter()
                .any(|&n| topo.obj(n).numa().is_some_and(|a| a.local_memory > 0)),
        ),
        ("discovery:disallowed_numa", thissys),
        // Linux discovery always ranks CPU kinds by efficiency.
        (
            "discovery:cpukind_efficiency",
            thissys || topo.cpukinds.iter().any(|k| k.forced_efficiency.is_some()),
        ),
    ];
    for (name, v) in discovery {
        let _ = writeln!(out, "{name} = {}", b(v));
    }
    for (name, v) in Binder::new(topo).support().features() {
        let _ = writeln!(out, "{name} = {}", b(v));
    }
    // As hwloc, the support recorded in an XML file is only used on request.
    let imported = !thissys
        && !topo.support.is_empty()
        && wloc::input::env_var("IMPORT_SUPPORT").is_some_and(|v| v != "0");
    let _ = writeln!(out, "misc:imported_support = {}", b(imported));
    out
}

/// The objects a `TYPE[:INDEXES]` word designates.
fn find_objects(topo: &Topology, word: &str, physical: bool) -> Result<Vec<ObjId>, String> {
    let (tname, idx) = match word.split_once(':') {
        Some((t, i)) => (t, Some(i)),
        None => (word, None),
    };
    let ty = ObjType::parse(tname)
        .ok_or_else(|| format!("invalid location '{word}': unknown object type '{tname}'"))?;
    let mut objs = topo.objs_by_type(ty);
    // `l2` also names unified and data caches only; ObjType::parse picks the level.
    if objs.is_empty() {
        return Err(format!(
            "invalid location '{word}': the topology has no {}",
            ty.xml_name()
        ));
    }
    let index_of = |id: ObjId| -> Option<u32> {
        let o = topo.obj(id);
        if physical {
            o.os_index
        } else {
            Some(o.logical_index())
        }
    };
    let Some(idx) = idx.filter(|i| *i != "all") else {
        return Ok(objs);
    };
    let bad = || format!("invalid location '{word}': expected an index, a range FIRST-LAST or all");
    let (first, last) = match idx.split_once('-') {
        Some((a, "")) => (a.parse::<u32>().map_err(|_| bad())?, u32::MAX),
        Some((a, b)) => (
            a.parse::<u32>().map_err(|_| bad())?,
            b.parse::<u32>().map_err(|_| bad())?,
        ),
        None => {
            let i = idx.parse::<u32>().map_err(|_| bad())?;
            (i, i)
        }
    };
    objs.retain(|&id| index_of(id).is_some_and(|i| (first..=last).contains(&i)));
    if physical {
        objs.sort_by_key(|&id| index_of(id));
    }
    if objs.is_empty() {
        return Err(format!("invalid location '{word}': no such object"));
    }
    Ok(objs)
}

fn pci_busid(domain: u32, bus: u8, dev: u8, func: u8) -> String {
    format!("{domain:04x}:{bus:02x}:{dev:02x}.{func:01x}")
}

/// hwloc's long name of an I/O object (`PCI`, `HostBridge`, `Block`, ...)
/// or of another object.
fn full_type(topo: &Topology, id: ObjId) -> String {
    let o = topo.obj(id);
    match o.obj_type {
        ObjType::Bridge => match o.bridge().map(|b| &b.upstream) {
            Some(BridgeUpstream::Pci(_)) => "PCIBridge".into(),
            _ => "HostBridge".into(),
        },
        ObjType::PCIDevice => "PCI".into(),
        ObjType::OSDevice => osdev_kind(o).unwrap_or("OSDev").into(),
        _ => type_name(o),
    }
}

fn osdev_kind(o: &wloc_core::Object) -> Option<&'static str> {
    let types = o.osdev_types()?;
    Some(match types.v2_code(o.subtype.as_deref())? {
        0 => "Block",
        1 => "GPU",
        2 => "Network",
        3 => "OpenFabrics",
        4 => "DMA",
        5 => "CoProc",
        _ => return None,
    })
}

/// Every attribute of an object, as hwloc-info prints them.
fn describe(topo: &Topology, id: ObjId) -> String {
    let o = topo.obj(id);
    let mut out = String::new();
    let mut line = |k: &str, v: &dyn std::fmt::Display| {
        let _ = writeln!(out, " {k} = {v}");
    };
    line("type", &o.obj_type.xml_name());
    line("full type", &full_type(topo, id));
    if let Some(s) = &o.subtype {
        line("subtype", s);
    }
    line("logical index", &o.logical_index());
    if let Some(i) = o.os_index {
        line("os index", &i);
    }
    line("gp index", &o.gp_index);
    if let Some(n) = &o.name {
        line("name", n);
    }
    line("depth", &o.depth().to_i32());
    line("sibling rank", &o.sibling_rank());
    line("children", &o.children().len());
    line("memory children", &o.memory_children().len());
    line("i/o children", &o.io_children().len());
    line("misc children", &o.misc_children().len());
    if let Some(n) = o.numa() {
        line("local memory", &n.local_memory);
    }
    if o.total_memory != 0 {
        line("total memory", &o.total_memory);
    }
    if let Some(cs) = &o.cpuset {
        line("cpuset", &cs.bitmap().to_hwloc_string());
        if let Some(c) = &o.complete_cpuset {
            line("complete cpuset", &c.bitmap().to_hwloc_string());
        }
        line(
            "allowed cpuset",
            &(cs & &topo.allowed_cpuset).bitmap().to_hwloc_string(),
        );
    }
    if let Some(ns) = &o.nodeset {
        line("nodeset", &ns.bitmap().to_hwloc_string());
        if let Some(c) = &o.complete_nodeset {
            line("complete nodeset", &c.bitmap().to_hwloc_string());
        }
        line(
            "allowed nodeset",
            &(ns & &topo.allowed_nodeset).bitmap().to_hwloc_string(),
        );
    }
    if let Some(c) = o.cache() {
        line("attr cache depth", &c.depth);
        let kind = match c.kind {
            CacheKind::Unified => "Unified",
            CacheKind::Data => "Data",
            CacheKind::Instruction => "Instruction",
        };
        line("attr cache type", &kind);
        line("attr cache size", &c.size);
        line("attr cache line size", &c.linesize);
        // As hwloc-info: unknown associativity (0) is not shown.
        match c.associativity {
            0 => {}
            -1 => line("attr cache ways", &"fully-associative"),
            ways => line("attr cache ways", &ways),
        }
    }
    if let Some(g) = o.group() {
        line("attr group depth", &g.depth);
    }
    if let Some(b) = o.bridge() {
        if let BridgeUpstream::Pci(p) = &b.upstream {
            line(
                "attr PCI bus id",
                &pci_busid(p.domain, p.bus, p.dev, p.func),
            );
            line("attr PCI class", &format!("{:04x}", p.class_id));
            line(
                "attr PCI id",
                &format!("{:04x}:{:04x}", p.vendor_id, p.device_id),
            );
        }
        line(
            "attr bridge downstream buses",
            &format!(
                "{:04x}:[{:02x}-{:02x}]",
                b.domain, b.secondary_bus, b.subordinate_bus
            ),
        );
    }
    if let Some(p) = o.pci() {
        if o.obj_type == ObjType::PCIDevice {
            line(
                "attr PCI bus id",
                &pci_busid(p.domain, p.bus, p.dev, p.func),
            );
            line("attr PCI class", &format!("{:04x}", p.class_id));
            line(
                "attr PCI id",
                &format!("{:04x}:{:04x}", p.vendor_id, p.device_id),
            );
            if p.linkspeed > 0.0 {
                line("attr PCI linkspeed", &format!("{:.2} GB/s", p.linkspeed));
            }
        }
    }
    if o.obj_type == ObjType::OSDevice {
        if let Some(k) = osdev_kind(o) {
            line("attr osdev type", &k);
        }
    }
    line("symmetric subtree", &(o.symmetric_subtree() as u8));
    for i in &o.infos {
        line(&format!("info {}", i.name), &i.value);
    }
    if o.obj_type == ObjType::NUMANode {
        if let Some(n) = o.numa() {
            line("memory attribute Capacity", &n.local_memory);
        }
        if let Some(w) = o.cpuset.as_ref().and_then(|c| c.weight()) {
            line("memory attribute Locality", &w);
        }
    }
    if let Some(cs) = o.cpuset.as_ref().filter(|c| !c.is_empty()) {
        if let Some((i, k)) = topo
            .cpukinds
            .iter()
            .enumerate()
            .find(|(_, k)| cs.is_included_in(&k.cpuset))
        {
            line("cpukind", &i);
            line("cpukind efficiency", &k.efficiency);
            for info in &k.infos {
                line(&format!("cpukind info {}", info.name), &info.value);
            }
        }
    }
    out
}

/// Runs `wloc info`.
pub fn run_info(a: &InfoArgs) -> Result<(), String> {
    let topo =
        crate::cmd_bind::load_topology(a.input.as_deref(), a.input_format, a.thissystem, false)?;
    let mut out = String::new();
    let show_objects = !a.locations.is_empty() && !a.topology && !a.support;
    if a.topology || (a.locations.is_empty() && !a.support && !a.objects) {
        out.push_str(&levels(&topo));
    }
    if a.support {
        out.push_str(&support(&topo));
    }
    if show_objects || (a.objects && !a.locations.is_empty()) {
        let physical = a.physical && !a.logical;
        for w in &a.locations {
            for id in find_objects(&topo, w, physical)? {
                let o = topo.obj(id);
                if a.silent {
                    let idx = if physical {
                        o.os_index.unwrap_or(o.logical_index())
                    } else {
                        o.logical_index()
                    };
                    let _ = writeln!(out, "{}:{idx}", o.obj_type.xml_name());
                } else {
                    let _ = writeln!(out, "{} L#{}", full_type(&topo, id), o.logical_index());
                    out.push_str(&describe(&topo, id));
                }
            }
        }
    }
    print!("{out}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo(desc: &str) -> Topology {
        wloc_core::synthetic::parse(desc)
            .unwrap()
            .build(Topology::new())
            .unwrap()
    }

    #[test]
    fn levels_are_listed_like_hwloc_info() {
        let t = topo("pack:2 [numa] l3:1 core:12 pu:2");
        assert_eq!(
            levels(&t),
            "depth 0:           1 Machine (type #0)\n \
             depth 1:          2 Package (type #1)\n  \
             depth 2:         2 L3Cache (type #6)\n   \
             depth 3:        24 Core (type #2)\n    \
             depth 4:       48 PU (type #3)\n\
             Special depth -3:  2 NUMANode (type #13)\n"
        );
    }

    #[test]
    fn objects_are_found_by_type_and_index() {
        let t = topo("pack:2 core:2 pu:2");
        assert_eq!(find_objects(&t, "core:1-2", false).unwrap().len(), 2);
        assert_eq!(find_objects(&t, "pu:all", false).unwrap().len(), 8);
        assert_eq!(find_objects(&t, "pack", false).unwrap().len(), 2);
        assert!(find_objects(&t, "core:9", false)
            .unwrap_err()
            .contains("core:9"));
        assert!(find_objects(&t, "bogus:0", false)
            .unwrap_err()
            .contains("bogus"));
        assert!(find_objects(&t, "core:x", false).is_err());
        let d = describe(&t, find_objects(&t, "core:0", false).unwrap()[0]);
        assert!(
            d.starts_with(" type = Core\n full type = Core\n logical index = 0\n"),
            "{d}"
        );
        assert!(d.contains(" cpuset = 0x00000003\n"), "{d}");
    }
}
