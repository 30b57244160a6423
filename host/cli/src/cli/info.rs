//! `wloc info`: objects with their attributes, the topology levels and
//! the supported features, as hwloc-info shows them.

use std::fmt::Write as _;

use clap::Args;
use wloc::console::type_name;
use wloc_bind::Binder;
use wloc_core::memattrs::{self, Initiator};
use wloc_core::object::{BridgeUpstream, CacheKind, Depth};
use wloc_core::topology::TypeDepth;
use wloc_core::{ObjId, ObjKind, ObjType, Topology, TypeFilter};

use super::topology::{Load, LoadErrors, TopologyArgs, keep_all};

/// Options of `wloc info`, named as hwloc-info's.
#[derive(Args, Debug)]
pub struct InfoArgs {
    #[command(flatten)]
    pub topo_args: TopologyArgs,
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
    /// Show each object's ancestors up to the root, starting with itself.
    #[arg(long)]
    pub ancestors: bool,
    /// Show only each object's ancestor (or itself) of this type, or its
    /// ancestors of a kind (`kind=all|normal|cache|cpu|memory|io`).
    #[arg(long, value_name = "TYPE")]
    pub ancestor: Option<String>,
    /// Show each object's children (normal, memory, I/O then Misc).
    #[arg(long)]
    pub children: bool,
    /// Show each object's descendants of this type, or of a kind
    /// (`kind=all|normal|cache|cpu|memory|io`).
    #[arg(long, value_name = "TYPE")]
    pub descendants: Option<String>,
    /// Only show the attribute of this name (`info NAME` for an info attribute).
    #[arg(long = "get-attr", value_name = "NAME")]
    pub get_attr: Option<String>,
    /// Only report the first matching object of each location.
    #[arg(long)]
    pub first: bool,
    /// Show the default NUMA nodes (where allocations go by default) local to each object.
    #[arg(long)]
    pub default_nodes: bool,
    /// Show the NUMA nodes local to each object.
    #[arg(long)]
    pub local_memory: bool,
    /// Which local NUMA nodes (hwloc's names or a number; implies --local-memory).
    #[arg(long, value_name = "FLAGS")]
    pub local_memory_flags: Option<String>,
    /// Show only the best local NUMA node for this memory attribute (name or id; implies --local-memory).
    #[arg(long, value_name = "ATTR")]
    pub best_memattr: Option<String>,
    /// Prefix each line with the index of the object it is about.
    #[arg(short = 'n')]
    pub index_prefix: bool,
    /// Filter objects of a type: TYPE:KIND, KIND being all, none, structure or important.
    #[arg(long = "filter", value_name = "TYPE:KIND")]
    pub filters: Vec<String>,
    /// Do not keep instruction caches.
    #[arg(long)]
    pub no_icaches: bool,
    /// Do not keep any I/O device or bridge.
    #[arg(long)]
    pub no_io: bool,
    /// Do not keep I/O bridges except host bridges.
    #[arg(long)]
    pub no_bridges: bool,
    /// Keep all I/O devices and bridges.
    #[arg(long)]
    pub whole_io: bool,
    /// Objects: TYPE:INDEX, TYPE:FIRST-LAST, TYPE:all or TYPE (for example core:0, numa:all, pci:1);
    /// `levels`, `topology` and `support` show those reports in their place.
    pub locations: Vec<String>,
}

/// The levels of the topology, as `hwloc-info --topology` lists them.
fn levels(topo: &Topology) -> String {
    let mut out = String::new();
    // hwloc-info's label column: 18 wide, one more per level past eight.
    let width = (topo.normal_levels().len() + 10).max(18);
    for (d, level) in topo.normal_levels().iter().enumerate() {
        let Some(&first) = level.first() else {
            continue;
        };
        let o = topo.obj(first);
        let label = format!("{}depth {d}:", " ".repeat(d));
        let _ = writeln!(
            out,
            "{label:<width$} {} {} (type #{})",
            level.len(),
            type_name(o, true),
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
                "{label:<width$} {n} {} (type #{})",
                t.xml_name(),
                t.index()
            );
        }
    }
    out
}

/// The binding support flags hwloc 2.14's `hwloc-info --support` prints,
/// in its order.
const HWLOC_BINDING_SUPPORT: [&str; 27] = [
    "cpubind:set_thisproc_cpubind",
    "cpubind:get_thisproc_cpubind",
    "cpubind:set_proc_cpubind",
    "cpubind:get_proc_cpubind",
    "cpubind:set_thisthread_cpubind",
    "cpubind:get_thisthread_cpubind",
    "cpubind:set_thread_cpubind",
    "cpubind:get_thread_cpubind",
    "cpubind:get_thisproc_last_cpu_location",
    "cpubind:get_proc_last_cpu_location",
    "cpubind:get_thisthread_last_cpu_location",
    "membind:set_thisproc_membind",
    "membind:get_thisproc_membind",
    "membind:set_proc_membind",
    "membind:get_proc_membind",
    "membind:set_thisthread_membind",
    "membind:get_thisthread_membind",
    "membind:set_area_membind",
    "membind:get_area_membind",
    "membind:alloc_membind",
    "membind:firsttouch_membind",
    "membind:bind_membind",
    "membind:interleave_membind",
    "membind:weighted_interleave_membind",
    "membind:nexttouch_membind",
    "membind:migrate_membind",
    "membind:get_area_memlocation",
];

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
        // What the discovery recorded (Linux when it found kinds to rank).
        (
            "discovery:cpukind_efficiency",
            topo.support
                .iter()
                .any(|s| s == "discovery.cpukind_efficiency")
                || topo.cpukinds.iter().any(|k| k.forced_efficiency.is_some()),
        ),
    ];
    for (name, v) in discovery {
        let _ = writeln!(out, "{name} = {}", b(v));
    }
    // The binding features hwloc 2.14 prints, in its order.
    let features = Binder::new(topo).support().features();
    for name in HWLOC_BINDING_SUPPORT {
        let v = features.iter().any(|(n, v)| *n == name && *v);
        let _ = writeln!(out, "{name} = {}", b(v));
    }
    // As hwloc, the support recorded in an XML file is only used on request.
    let imported = !thissys
        && !topo.support.is_empty()
        && wloc_discovery::input::env_var("IMPORT_SUPPORT").is_some_and(|v| v != "0");
    let _ = writeln!(out, "misc:imported_support = {}", b(imported));
    out
}

/// The objects a location word designates, in hwloc's location language
/// (`core:2-3`, `pack:0.core:1`, `pu:even`, `pu:1:2`, `os=eth0`, ...).
fn find_objects(topo: &Topology, word: &str, physical: bool) -> super::Result<Vec<ObjId>> {
    // hwloc-info shows the objects of `type:index`, `type=name` and
    // `type[...]` words (hierarchical ones too); set strings name none.
    let typelen = word
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric())
        .count();
    if typelen == 0 || !matches!(word.as_bytes().get(typelen), Some(b':' | b'=' | b'[')) {
        return Err(format!(
            "invalid location '{word}': not an object location (TYPE:INDEX, TYPE=NAME)"
        )
        .into());
    }
    let opts = wloc_locality::WordOptions {
        physical_input: physical,
        ..wloc_locality::WordOptions::default()
    };
    let r = wloc_locality::resolve_word(topo, word, &opts)
        .map_err(|e| format!("invalid location '{word}': {e}"))?;
    if r.objects.is_empty() {
        return Err(format!("invalid location '{word}': no such object").into());
    }
    Ok(r.objects)
}

/// The PCI attribute lines hwloc-info prints for a PCI device or the
/// upstream side of a PCI bridge.
fn pci_attr_lines(p: &wloc_core::object::PciAttr) -> Vec<(&'static str, String)> {
    let mut v = vec![
        ("attr PCI bus id", pci_busid(p.domain, p.bus, p.dev, p.func)),
        ("attr PCI class", format!("{:04x}", p.class_id)),
        (
            "attr PCI id",
            format!("{:04x}:{:04x}", p.vendor_id, p.device_id),
        ),
    ];
    if p.linkspeed != 0.0 {
        // hwloc-info 2.14's value ends with a newline: an empty line follows.
        v.push(("attr PCI linkspeed", format!("{:.6} GB/s\n", p.linkspeed)));
    }
    v
}

/// A set as hwloc-info 2.14 prints it: in hwloc's form, cut to the 511
/// characters of its buffer.
fn set_text(b: &wloc_core::Bitmap) -> String {
    let mut s = b.to_hwloc_string();
    s.truncate(511);
    s
}

fn pci_busid(domain: u32, bus: u8, dev: u8, func: u8) -> String {
    format!("{domain:04x}:{bus:02x}:{dev:02x}.{func:01x}")
}

/// hwloc's long name of an object (`hwloc_obj_type_snprintf` verbose):
/// `PCI`, `HostBridge`, `Network`, `L2Cache`, `Group0`, ...
fn full_type(topo: &Topology, id: ObjId) -> String {
    wloc_locality::types::type_label(topo.obj(id))
}

/// Every attribute of an object, as hwloc-info prints them, each line
/// after `prefix`.
fn describe(topo: &Topology, id: ObjId, prefix: &str) -> String {
    let o = topo.obj(id);
    let mut out = String::new();
    let mut line = |k: &str, v: &dyn std::fmt::Display| {
        let _ = writeln!(out, "{prefix} {k} = {v}");
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
        line("cpuset", &set_text(cs.bitmap()));
        if let Some(c) = &o.complete_cpuset {
            line("complete cpuset", &set_text(c.bitmap()));
        }
        line(
            "allowed cpuset",
            &set_text((cs & &topo.allowed_cpuset).bitmap()),
        );
    }
    if let Some(ns) = &o.nodeset {
        line("nodeset", &set_text(ns.bitmap()));
        if let Some(c) = &o.complete_nodeset {
            line("complete nodeset", &set_text(c.bitmap()));
        }
        line(
            "allowed nodeset",
            &set_text((ns & &topo.allowed_nodeset).bitmap()),
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
            -1 => line("attr cache line ways", &"Fully-associative"),
            ways => line("attr cache line ways", &ways),
        }
    }
    if let Some(g) = o.group() {
        line("attr group depth", &g.depth);
    }
    if let Some(b) = o.bridge() {
        match &b.upstream {
            BridgeUpstream::Pci(p) => {
                line("attr bridge upstream type", &"PCI");
                for (k, v) in pci_attr_lines(p) {
                    line(k, &v);
                }
            }
            _ => line("attr bridge upstream type", &"Host"),
        }
        line("attr bridge downstream type", &"PCI");
        line(
            "attr PCI secondary bus bus",
            &format!("{:02x}", b.secondary_bus),
        );
        line(
            "attr PCI subordinate bus bus",
            &format!("{:02x}", b.subordinate_bus),
        );
    }
    if let Some(p) = o.pci()
        && o.obj_type == ObjType::PCIDevice
    {
        for (k, v) in pci_attr_lines(p) {
            line(k, &v);
        }
    }
    if o.obj_type == ObjType::OSDevice {
        line("attr osdev type", &full_type(topo, id));
    }
    line("symmetric subtree", &(o.symmetric_subtree() as u8));
    for i in &o.infos {
        line(&format!("info {}", i.name), &i.value);
    }
    // Topology-wide infos are the root's in hwloc 2.
    if id == topo.root() {
        for i in &topo.infos {
            line(&format!("info {}", i.name), &i.value);
        }
    }
    if o.kind() == ObjKind::Normal {
        let empty = wloc_core::CpuSet::new();
        let cs = o.cpuset.as_ref().unwrap_or(&empty);
        for (i, k) in topo.cpukinds.iter().enumerate() {
            let partially = if cs.is_included_in(&k.cpuset) {
                ""
            } else if cs.intersects(&k.cpuset) {
                " (partially)"
            } else {
                continue;
            };
            line("cpukind", &format!("{i}{partially}"));
            if k.efficiency != -1 {
                line("cpukind efficiency", &k.efficiency);
            }
            for info in &k.infos {
                line(&format!("cpukind info {}", info.name), &info.value);
            }
        }
    }
    if o.obj_type == ObjType::NUMANode {
        for (name, value) in numa_memattrs(topo, id) {
            line(&name, &value);
        }
    }
    out
}

/// The memory attribute lines of a NUMA node, by attribute id: the value
/// of attributes without initiator, then one line per initiator.
fn numa_memattrs(topo: &Topology, id: ObjId) -> Vec<(String, u64)> {
    let mut lines = Vec::new();
    let mut attr_id = 0;
    while let Some(attr) = memattrs::attribute(topo, attr_id) {
        attr_id += 1;
        let name = attr.name;
        if attr.id < 2 {
            let value = memattrs::builtin_value(topo, attr.id, id);
            lines.push((format!("memory attribute {name}"), value));
            continue;
        }
        let Some(m) = attr.stored else {
            continue;
        };
        for v in m.values.iter().filter(|v| v.target == id) {
            if attr.flags & memattrs::flags::NEED_INITIATOR == 0 {
                lines.push((format!("memory attribute {name}"), v.value));
                break;
            }
            let from = match &v.initiator {
                Some(Initiator::CpuSet(c)) => c.bitmap().to_hwloc_string(),
                Some(Initiator::Object(i)) => {
                    let Some(io) = topo.get(*i) else {
                        continue;
                    };
                    match io.os_index {
                        Some(os) => {
                            format!("{} L#{} P#{os}", full_type(topo, *i), io.logical_index())
                        }
                        None => format!("{} L#{}", full_type(topo, *i), io.logical_index()),
                    }
                }
                None => continue,
            };
            lines.push((
                format!("memory attribute {name} from initiator {from}"),
                v.value,
            ));
        }
    }
    lines
}

/// What is shown about each object of the locations.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Relation {
    /// The object itself.
    Itself,
    /// The object and its ancestors up to the root (`--ancestors`).
    Ancestors,
    /// The object or its first ancestor at this depth (`--ancestor`).
    Ancestor(Depth),
    /// Its ancestors of a kind (`--ancestor kind=...`).
    AncestorKind(Kind),
    /// Its descendants of a kind, depth first (`--descendants kind=...`).
    DescendantsKind(Kind),
    /// Its local NUMA nodes (with these flags) that are default nodes
    /// (`--default-nodes`).
    DefaultMemory(u64),
    /// Its children (`--children`).
    Children,
    /// Its descendants at this depth (`--descendants`).
    Descendants(Depth),
    /// Its local NUMA nodes with these flags, maybe only the best for a
    /// memory attribute of this id (`--local-memory`, `--best-memattr`).
    LocalMemory(u64, Option<(usize, wloc_locality::query::BestNodeFlags)>),
}

/// A kind of objects that `--ancestor` and `--descendants` take
/// (hwloc-info 2.11's `kind=...`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    All,
    Normal,
    Cache,
    Cpu,
    Memory,
    Io,
}

impl Kind {
    fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "all" => Kind::All,
            "normal" => Kind::Normal,
            "cache" => Kind::Cache,
            "cpu" => Kind::Cpu,
            "memory" => Kind::Memory,
            "io" => Kind::Io,
            _ => return None,
        })
    }

    fn matches(self, t: ObjType) -> bool {
        match self {
            Kind::All => true,
            Kind::Normal => t.kind() == ObjKind::Normal,
            Kind::Cache => t.is_cache(),
            Kind::Cpu => t.kind() == ObjKind::Normal && !t.is_cache(),
            Kind::Memory => t.kind() == ObjKind::Memory,
            Kind::Io => t.kind() == ObjKind::Io,
        }
    }
}

/// The kind of `--ancestor` or `--descendants` (`kind=cache`, or a kind
/// name alone), as hwloc-info reads it before trying a type.
fn relation_kind(s: &str) -> Option<Kind> {
    Kind::parse(s.strip_prefix("kind=").unwrap_or(s))
}

/// Resolves the type of `--ancestor` or `--descendants` to a depth as
/// hwloc-info does, with its messages.
fn relation_depth(topo: &Topology, opt: &str, s: &str) -> super::Result<Depth> {
    let spec = wloc_locality::types::parse_type(s)
        .ok_or_else(|| format!("unrecognized --{opt} type {s}"))?;
    match wloc_locality::types::spec_depth(topo, &spec) {
        TypeDepth::Depth(d) => Ok(d),
        TypeDepth::Unknown => Err(format!("unavailable --{opt} type {s}").into()),
        TypeDepth::Multiple => Err(format!("multiple --{opt} type {s}").into()),
    }
}

/// The descendants hwloc-info lists for `--descendants`: on a normal
/// level, the objects whose CPU and node sets, not both empty, are inside
/// the object's (the object itself included); on a special level, the
/// objects whose first ancestor with a CPU set is inside the object's CPU
/// and node sets, or, for an object without CPU set, that are below it.
fn descendants(topo: &Topology, id: ObjId, depth: Depth) -> Vec<ObjId> {
    let o = topo.obj(id);
    let level = topo.level(depth).iter().copied();
    if let Depth::Normal(_) = depth {
        let Some(cpus) = &o.cpuset else {
            return Vec::new();
        };
        let empty = wloc_core::NodeSet::new();
        let nodes = o.nodeset.as_ref().unwrap_or(&empty);
        // As hwloc-info 2.14 (hwloc_calc_get_obj_inside_sets_by_depth): the
        // objects whose non-empty sets intersect the object's.
        return level
            .filter(|&c| {
                let co = topo.obj(c);
                let cc = co.cpuset.clone().unwrap_or_default();
                let cn = co.nodeset.as_ref().unwrap_or(&empty);
                (cc.is_empty() || cc.intersects(cpus))
                    && (cn.is_empty() || cn.intersects(nodes))
                    && !(cc.is_empty() && cn.is_empty())
            })
            .collect();
    }
    let ancestors =
        |c: ObjId| std::iter::successors(topo.obj(c).parent(), |&p| topo.obj(p).parent());
    level
        .filter(|&c| match &o.cpuset {
            Some(cpus) => {
                let Some(p) = ancestors(c).find(|&p| topo.obj(p).cpuset.is_some()) else {
                    return false;
                };
                let po = topo.obj(p);
                let inside_c = po.cpuset.as_ref().is_some_and(|pc| pc.is_included_in(cpus));
                let inside_n = match (&po.nodeset, &o.nodeset) {
                    (Some(pn), Some(n)) => pn.is_included_in(n),
                    (None, _) => true,
                    (Some(pn), None) => pn.is_empty(),
                };
                inside_c && inside_n
            }
            None => ancestors(c).any(|p| p == id),
        })
        .collect()
}

/// Children in hwloc's order: normal, memory, I/O, then Misc.
fn all_children(topo: &Topology, id: ObjId) -> Vec<ObjId> {
    let o = topo.obj(id);
    o.children()
        .iter()
        .chain(o.memory_children())
        .chain(o.io_children())
        .chain(o.misc_children())
        .copied()
        .collect()
}

/// Writes what hwloc-info shows about the objects of the locations.
struct ObjectReport<'a> {
    topo: &'a Topology,
    relation: Relation,
    silent: bool,
    index_prefix: bool,
    /// `--get-attr`: only the value of this attribute.
    get_attr: Option<String>,
    /// `--first`: only the first object related to each location's object.
    first: bool,
    /// Index of the object being shown, for `-n`.
    current: usize,
    out: String,
}

impl ObjectReport<'_> {
    /// One line naming `shown` (with `relation` after it unless silent),
    /// then its attributes; with `--get-attr`, only that attribute's value.
    fn entry(&mut self, shown: ObjId, prefix: &str, relation: Option<String>) {
        let o = self.topo.obj(shown);
        let label = full_type(self.topo, shown);
        if let Some(name) = &self.get_attr {
            if self.silent {
                return;
            }
            // describe's lines are `PREFIX NAME = VALUE`.
            let head = format!("{prefix} {name} = ");
            for line in describe(self.topo, shown, prefix).lines() {
                if let Some(value) = line.strip_prefix(&head) {
                    let _ = writeln!(self.out, "{value}");
                }
            }
            return;
        }
        if self.silent {
            let _ = writeln!(self.out, "{prefix}{label}:{}", o.logical_index());
            return;
        }
        match relation {
            Some(r) => {
                let _ = writeln!(self.out, "{prefix}{label} L#{} = {r}", o.logical_index());
            }
            None => {
                let _ = writeln!(self.out, "{prefix}{label} L#{}", o.logical_index());
            }
        }
        self.out.push_str(&describe(self.topo, shown, prefix));
    }

    fn prefix(&self, sub: Option<usize>) -> String {
        match (self.index_prefix, sub) {
            (false, _) => String::new(),
            (true, None) => format!("{}: ", self.current),
            (true, Some(i)) => format!("{}.{i}: ", self.current),
        }
    }

    /// Shows a list of related objects, numbered, with their relation;
    /// only the first with `--first`.
    fn related(&mut self, objs: Vec<ObjId>, relation: impl Fn(usize) -> String) {
        let n = if self.first {
            objs.len().min(1)
        } else {
            objs.len()
        };
        for (i, c) in objs.into_iter().take(n).enumerate() {
            let p = self.prefix(Some(i));
            self.entry(c, &p, Some(relation(i)));
        }
    }

    /// Shows one object of the locations.
    fn object(&mut self, id: ObjId) {
        let topo = self.topo;
        let o = topo.obj(id);
        let objs = format!("{} L#{}", full_type(topo, id), o.logical_index());
        let ancestors = || std::iter::successors(o.parent(), |&p| topo.obj(p).parent());
        match self.relation.clone() {
            Relation::Itself => {
                let p = self.prefix(None);
                self.entry(id, &p, None);
            }
            Relation::Ancestors => {
                let chain = std::iter::successors(Some(id), |&p| topo.obj(p).parent());
                for (level, a) in chain.enumerate() {
                    let p = self.prefix(Some(level));
                    let r = (level > 0).then(|| format!("parent #{level} of {objs}"));
                    self.entry(a, &p, r);
                    if self.first {
                        break;
                    }
                }
            }
            Relation::Ancestor(depth) => {
                let found = std::iter::successors(Some(id), |&p| topo.obj(p).parent())
                    .find(|&a| topo.obj(a).depth() == depth);
                if let Some(a) = found {
                    let p = self.prefix(None);
                    self.entry(a, &p, Some(format!("parent of {objs}")));
                }
            }
            Relation::AncestorKind(kind) => {
                let found: Vec<ObjId> = ancestors()
                    .filter(|&a| kind.matches(topo.obj(a).obj_type))
                    .collect();
                // hwloc numbers them from 0 but says "parent #N" only past 0.
                let n = if self.first {
                    found.len().min(1)
                } else {
                    found.len()
                };
                for (level, a) in found.into_iter().take(n).enumerate() {
                    let p = self.prefix(Some(level));
                    let r = (level > 0).then(|| format!("parent #{level} of {objs}"));
                    self.entry(a, &p, r);
                }
            }
            Relation::Children => {
                self.related(all_children(topo, id), |i| format!("child #{i} of {objs}"));
            }
            Relation::Descendants(depth) => {
                self.related(descendants(topo, id, depth), |i| {
                    format!("descendant #{i} of {objs}")
                });
            }
            Relation::DescendantsKind(kind) => {
                let mut found = Vec::new();
                let mut stack: Vec<ObjId> = all_children(topo, id).into_iter().rev().collect();
                while let Some(c) = stack.pop() {
                    if kind.matches(topo.obj(c).obj_type) {
                        found.push(c);
                    }
                    stack.extend(all_children(topo, c).into_iter().rev());
                }
                self.related(found, |i| format!("descendant #{i} of {objs}"));
            }
            Relation::LocalMemory(flags, best) => {
                let cpus = first_cpuset(topo, id);
                let nodes = if flags & !wloc_locality::query::local_flags::MASK != 0 {
                    Vec::new()
                } else {
                    wloc_locality::query::local_numanodes(topo, &cpus, flags)
                };
                let mut shown = nodes.clone();
                if let Some((best, flags)) = best {
                    // hwloc measures from the object's own CPU set.
                    let from = o.cpuset.clone().unwrap_or_default();
                    let keep = wloc_locality::query::best_nodes(topo, best, &nodes, &from, flags);
                    shown = keep.into_iter().map(|i| nodes[i]).collect();
                }
                // As hwloc-info 2.14: numbered among the nodes shown.
                let mut numbered: Vec<(usize, ObjId)> = shown.into_iter().enumerate().collect();
                if self.first {
                    numbered.truncate(1);
                }
                for (i, n) in numbered {
                    let p = self.prefix(Some(i));
                    self.entry(n, &p, Some(format!("local memory #{i} of {objs}")));
                }
            }
            Relation::DefaultMemory(flags) => {
                let cpus = first_cpuset(topo, id);
                let default = wloc_locality::query::default_nodeset(topo);
                let nodes: Vec<ObjId> = wloc_locality::query::local_numanodes(topo, &cpus, flags)
                    .into_iter()
                    .filter(|&n| topo.obj(n).os_index.is_some_and(|i| default.is_set(i)))
                    .collect();
                self.related(nodes, |i| format!("default node #{i} of {objs}"));
            }
        }
        self.current += 1;
    }
}

/// hwloc-info's `topology` keyword: the root's infos about the topology
/// and the machine, then its depth and its numbers of PUs, NUMA nodes and
/// CPU kinds; with `--get-attr`, only the value of the one named (`info
/// NAME` for an info, compared without case).
fn topology_infos(topo: &Topology, only: Option<&str>) -> String {
    // hwloc 2's topology infos (one list, the XML presentation's) and the
    // memory tier count it shows among them.
    let shown =
        |name: &str| name == "MemoryTiersNr" || wloc_xml::hwloc2::TOPOLOGY_INFOS.contains(&name);
    // Topology-wide infos are the root's in hwloc 2.
    let mut lines: Vec<(String, String)> = topo
        .obj(topo.root())
        .infos
        .iter()
        .chain(&topo.infos)
        .filter(|i| shown(&i.name))
        .map(|i| (format!("info {}", i.name), i.value.clone()))
        .collect();
    lines.push(("depth".into(), topo.depth().to_string()));
    lines.push((
        "PUs".into(),
        topo.objs_by_type(ObjType::PU).len().to_string(),
    ));
    lines.push((
        "NUMANodes".into(),
        topo.objs_by_type(ObjType::NUMANode).len().to_string(),
    ));
    lines.push(("CPU kinds".into(), topo.cpukinds.len().to_string()));
    let mut out = String::new();
    for (name, value) in lines {
        match only {
            None => {
                let _ = writeln!(out, "{name} = {value}");
            }
            Some(o) if o.eq_ignore_ascii_case(&name) => {
                let _ = writeln!(out, "{value}");
            }
            Some(_) => {}
        }
    }
    out
}

/// The CPU set of an object or of its first ancestor that has one.
fn first_cpuset(topo: &Topology, id: ObjId) -> wloc_core::CpuSet {
    std::iter::successors(Some(id), |&p| topo.obj(p).parent())
        .find_map(|a| topo.obj(a).cpuset.clone())
        .unwrap_or_default()
}

/// Runs `wloc info`.
pub fn run(d: &wloc_discovery::Discovery, a: &InfoArgs) -> super::Result {
    // As hwloc-info: every object type kept, I/O objects that matter
    // (`important`) too.
    // The filters as hwloc-info applies them (a PU filter is ignored, as
    // there).
    let mut filtered = keep_all(TypeFilter::KeepImportant);
    if a.no_icaches {
        filtered.set_icache_types_filter(TypeFilter::KeepNone);
    }
    if a.no_io {
        filtered.set_io_types_filter(TypeFilter::KeepNone);
    } else if a.whole_io {
        filtered.set_io_types_filter(TypeFilter::KeepAll);
    }
    if a.no_bridges {
        filtered
            .set_type_filter(wloc_core::ObjType::Bridge, TypeFilter::KeepNone)
            .map_err(|e| e.to_string())?;
    }
    for f in &a.filters {
        super::ls::apply_filter(&mut filtered, f)?;
    }
    let how = Load::new(filtered, LoadErrors::Named("the environment"));
    let (topo, _) = a.topo_args.load(d, how)?;
    let relation = if a.ancestors {
        Relation::Ancestors
    } else if let Some(t) = &a.ancestor {
        match relation_kind(t) {
            Some(k) => Relation::AncestorKind(k),
            None => Relation::Ancestor(relation_depth(&topo, "ancestor", t)?),
        }
    } else if a.children {
        Relation::Children
    } else if let Some(t) = &a.descendants {
        match relation_kind(t) {
            Some(k) => Relation::DescendantsKind(k),
            None => Relation::Descendants(relation_depth(&topo, "descendants", t)?),
        }
    } else if a.local_memory || a.local_memory_flags.is_some() || a.best_memattr.is_some() {
        let flags = match &a.local_memory_flags {
            Some(f) => wloc::tool_flags::parse_local_memory_flags(f),
            None => {
                wloc_locality::query::local_flags::LARGER_LOCALITY
                    | wloc_locality::query::local_flags::SMALLER_LOCALITY
            }
        };
        Relation::LocalMemory(flags, None)
    } else if a.default_nodes {
        Relation::DefaultMemory(
            wloc_locality::query::local_flags::LARGER_LOCALITY
                | wloc_locality::query::local_flags::SMALLER_LOCALITY,
        )
    } else {
        Relation::Itself
    };
    let relation = match relation {
        Relation::LocalMemory(flags, None) => match &a.best_memattr {
            Some(m) => {
                let (name, best) = wloc_locality::query::split_best_memattr(m);
                let attr = wloc_core::memattrs::find_attribute(&topo, &name)
                    .ok_or_else(|| format!("unrecognized memattr {name}"))?;
                Relation::LocalMemory(flags, Some((attr.id, best)))
            }
            None => Relation::LocalMemory(flags, None),
        },
        r => r,
    };
    let mut out = String::new();
    let mut failed: Option<super::Error> = None;
    let show_objects = !a.locations.is_empty() && !a.topology && !a.support;
    if a.topology || (a.locations.is_empty() && !a.support && !a.objects) {
        out.push_str(&levels(&topo));
    }
    if a.support {
        out.push_str(&support(&topo));
    }
    if show_objects || (a.objects && !a.locations.is_empty()) {
        let physical = a.physical && !a.logical;
        let mut report = ObjectReport {
            topo: &topo,
            relation,
            silent: a.silent,
            index_prefix: a.index_prefix,
            // hwloc 3.x's name of the cache attribute.
            get_attr: a.get_attr.as_ref().map(|n| match n.as_str() {
                "attr cache inclusive" => "info Inclusive".to_string(),
                n => n.to_string(),
            }),
            first: a.first,
            current: 0,
            out,
        };
        for w in &a.locations {
            // hwloc-info 2.11's keywords, in the place of a location.
            match w.as_str() {
                "levels" => {
                    report.out.push_str(&levels(&topo));
                    continue;
                }
                "support" => {
                    report.out.push_str(&support(&topo));
                    continue;
                }
                "topology" => {
                    report
                        .out
                        .push_str(&topology_infos(&topo, report.get_attr.as_deref()));
                    continue;
                }
                _ => {}
            }
            let ids = if w == "all" || w == "root" {
                vec![topo.root()]
            } else {
                // As hwloc-info, a bad location does not stop the others.
                match find_objects(&topo, w, physical) {
                    Ok(ids) => ids,
                    Err(e) => {
                        failed.get_or_insert(e);
                        continue;
                    }
                }
            };
            for id in ids {
                report.object(id);
            }
        }
        out = report.out;
    }
    super::print(&out)?;
    // hwloc-info reports a bad location and still succeeds.
    if let Some(e) = failed {
        eprintln!("wloc: {e}");
    }
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
        // As hwloc-info: a bare type or a set string names no object.
        assert!(find_objects(&t, "pack", false).is_err());
        assert!(find_objects(&t, "0x3", false).is_err());
        assert_eq!(find_objects(&t, "pack:1.core:0", false).unwrap().len(), 1);
        assert_eq!(find_objects(&t, "pu:1:2", false).unwrap().len(), 2);
        assert_eq!(find_objects(&t, "pu:even", false).unwrap().len(), 4);
        assert!(
            find_objects(&t, "core:9", false)
                .unwrap_err()
                .to_string()
                .contains("core:9")
        );
        assert!(
            find_objects(&t, "bogus:0", false)
                .unwrap_err()
                .to_string()
                .contains("bogus")
        );
        assert!(find_objects(&t, "core:x", false).is_err());
        let d = describe(&t, find_objects(&t, "core:0", false).unwrap()[0], "");
        assert!(
            d.starts_with(" type = Core\n full type = Core\n logical index = 0\n"),
            "{d}"
        );
        assert!(d.contains(" cpuset = 0x00000003\n"), "{d}");
    }
}
