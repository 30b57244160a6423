//! Writing a [`Topology`] as an hwloc XML document (version 2 or 3).
//!
//! The output follows hwloc's own writer byte for byte: the XML
//! declaration and `hwloc2.dtd` doctype, two-space indentation, attributes
//! in hwloc's order, `/>` for elements without children, and hwloc's
//! escaping (`&#10;`, `&#13;`, `&#9;`, `&quot;`, `&lt;`, `&gt;`, `&amp;`).
//! Names, subtypes and infos lose the characters hwloc drops (anything but
//! printable ASCII, tabs and line breaks).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use wloc_core::distances::{Distances, kind as dist_kind};
use wloc_core::memattrs::{self, Initiator, MemAttr};
use wloc_core::object::{BridgeAttr, BridgeUpstream, Info, ObjAttr, ObjType, Object, PciAttr};
use wloc_core::{ObjId, Topology, UserData};

use super::XmlVersion;
use crate::hwloc2::v2_infos;

/// Support flags (`part.field` of hwloc's `struct hwloc_topology_support`)
/// in the order hwloc writes them.
pub const SUPPORT_ORDER: [&str; 33] = [
    "discovery.pu",
    "discovery.numa",
    "discovery.numa_memory",
    "discovery.disallowed_pu",
    "discovery.disallowed_numa",
    "discovery.cpukind_efficiency",
    "cpubind.set_thisproc_cpubind",
    "cpubind.get_thisproc_cpubind",
    "cpubind.set_proc_cpubind",
    "cpubind.get_proc_cpubind",
    "cpubind.set_thisthread_cpubind",
    "cpubind.get_thisthread_cpubind",
    "cpubind.set_thread_cpubind",
    "cpubind.get_thread_cpubind",
    "cpubind.get_thisproc_last_cpu_location",
    "cpubind.get_proc_last_cpu_location",
    "cpubind.get_thisthread_last_cpu_location",
    "membind.set_thisproc_membind",
    "membind.get_thisproc_membind",
    "membind.set_proc_membind",
    "membind.get_proc_membind",
    "membind.set_thisthread_membind",
    "membind.get_thisthread_membind",
    "membind.set_area_membind",
    "membind.get_area_membind",
    "membind.alloc_membind",
    "membind.firsttouch_membind",
    "membind.bind_membind",
    "membind.interleave_membind",
    // hwloc 2.14 (MPOL_WEIGHTED_INTERLEAVE, Linux 6.9).
    "membind.weighted_interleave_membind",
    "membind.nexttouch_membind",
    "membind.migrate_membind",
    "membind.get_area_memlocation",
];

/// Number of values per `<indexes>` or `<u64values>` element, as hwloc.
const VALUES_PER_LINE: usize = 10;

/// Writes `topo` as a complete hwloc XML document in the given format.
///
/// Version 2 documents follow hwloc 3's conversion rules
/// (`--export-xml-flags 2`): OS device types become hwloc 2 codes, the
/// topology infos go to the root object, OS devices of compute backends get
/// a `Backend` info, and memory tiers, PCI localities and the
/// `cache_inclusive` attribute (unknown to hwloc 2) are left out.
pub fn export(topo: &Topology, version: XmlVersion) -> String {
    export_with(topo, version, version == XmlVersion::V2, false, true)
}

/// A version 2 document as hwloc 2.x itself writes it, which differs from
/// hwloc 3's version 2 conversion ([`export`]) in one attribute: PCI types
/// carry no programming interface. This is what wloc's C library
/// (libhwloc.so.15) exports, so that hwloc 2.9's tools print the same bytes
/// on it as on libhwloc.
pub fn export_hwloc2(topo: &Topology) -> String {
    export_with(topo, XmlVersion::V2, true, true, true)
}

/// [`export_hwloc2`] without the `support` elements, as hwloc writes when
/// `HWLOC_XML_EXPORT_SUPPORT=0`.
pub fn export_hwloc2_without_support(topo: &Topology) -> String {
    export_with(topo, XmlVersion::V2, true, true, false)
}

/// [`export`] or [`export_hwloc2`] (`hwloc2`), with or without the
/// `support` elements (hwloc leaves them out when
/// `HWLOC_XML_EXPORT_SUPPORT=0`).
pub fn export_as(topo: &Topology, version: XmlVersion, hwloc2: bool, with_support: bool) -> String {
    let hwloc2 = hwloc2 && version == XmlVersion::V2;
    export_with(
        topo,
        version,
        version == XmlVersion::V2,
        hwloc2,
        with_support,
    )
}

/// The canonical document of `topo`: version 3 (what `wloc ls --of xml`
/// writes) with the NUMA nodes' page types kept, as version 2 writes them
/// (first in the node's element). wloc reads them back; this is the form
/// wloc's topology diffs and stores use, so that a round trip keeps page
/// types.
pub fn export_canonical(topo: &Topology) -> String {
    export_with(topo, XmlVersion::V3, true, false, true)
}

fn export_with(
    topo: &Topology,
    version: XmlVersion,
    page_types: bool,
    hwloc2: bool,
    with_support: bool,
) -> String {
    let v3 = version == XmlVersion::V3;
    let mut w = Writer {
        out: String::with_capacity(64 * 1024),
        pci_prog_if: !hwloc2,
    };
    w.out
        .push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    w.out
        .push_str("<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n");
    w.open(0, "topology");
    w.attr("version", if v3 { "3.0" } else { "2.0" });
    w.end_open();

    objects(&mut w, topo, v3, page_types);
    distances(&mut w, topo);
    if with_support {
        support(&mut w, topo);
    }
    memory_attributes(&mut w, topo);
    cpukinds(&mut w, topo);
    if v3 {
        for i in &topo.infos {
            info(&mut w, 2, i);
        }
        for t in &topo.memtiers {
            w.open(2, "memtier");
            w.attr("kinds", &t.kinds.to_string());
            w.attr("nodeset", &t.nodeset.to_string());
            w.end_empty();
        }
        for l in &topo.pci_localities {
            w.open(2, "pci_locality");
            w.attr("domain", &format!("{:#x}", l.domain));
            w.attr("bus_min", &format!("{:#x}", l.bus_min));
            w.attr("bus_max", &format!("{:#x}", l.bus_max));
            w.attr("cpuset", &l.cpuset.to_string());
            w.end_empty();
        }
    }
    w.close(0, "topology");
    w.out
}

/// Appends XML text with hwloc's indentation and escaping.
pub(crate) struct Writer {
    pub(crate) out: String,
    /// Whether `pci_type` ends with the programming interface (hwloc 3,
    /// in both versions it writes).
    pub(crate) pci_prog_if: bool,
}

impl Writer {
    pub(crate) fn new() -> Self {
        Writer {
            out: String::new(),
            pci_prog_if: true,
        }
    }

    fn indent(&mut self, n: usize) {
        self.out.extend(core::iter::repeat_n(' ', n));
    }

    /// Starts `<tag` (attributes follow).
    pub(crate) fn open(&mut self, indent: usize, tag: &str) {
        self.indent(indent);
        self.out.push('<');
        self.out.push_str(tag);
    }

    pub(crate) fn attr(&mut self, name: &str, value: &str) {
        self.out.push(' ');
        self.out.push_str(name);
        self.out.push_str("=\"");
        if !value.contains(['\n', '\r', '\t', '"', '<', '>', '&']) {
            self.out.push_str(value);
            self.out.push('"');
            return;
        }
        for c in value.chars() {
            match c {
                '\n' => self.out.push_str("&#10;"),
                '\r' => self.out.push_str("&#13;"),
                '\t' => self.out.push_str("&#9;"),
                '"' => self.out.push_str("&quot;"),
                '<' => self.out.push_str("&lt;"),
                '>' => self.out.push_str("&gt;"),
                '&' => self.out.push_str("&amp;"),
                c => self.out.push(c),
            }
        }
        self.out.push('"');
    }

    /// Ends the start tag of an element that has children.
    pub(crate) fn end_open(&mut self) {
        self.out.push_str(">\n");
    }

    /// Ends an element without children.
    pub(crate) fn end_empty(&mut self) {
        self.out.push_str("/>\n");
    }

    pub(crate) fn close(&mut self, indent: usize, tag: &str) {
        self.indent(indent);
        self.out.push_str("</");
        self.out.push_str(tag);
        self.out.push_str(">\n");
    }

    /// An element with a `length` attribute and text content.
    fn content(&mut self, indent: usize, tag: &str, text: &str) {
        self.open(indent, tag);
        self.attr("length", &text.len().to_string());
        self.out.push('>');
        self.out.push_str(text);
        self.out.push_str("</");
        self.out.push_str(tag);
        self.out.push_str(">\n");
    }
}

/// Escapes text for the content or an attribute value of any XML
/// document wloc writes besides hwloc's (SVG pictures, GraphML, fabric
/// XML): the five markup characters become entities, tabs and line
/// breaks character references (attribute values keep them), and the
/// characters XML 1.0 cannot carry (other control characters, U+FFFE,
/// U+FFFF) become U+FFFD, so the output always parses.
pub fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // As references, so that attribute values keep them too.
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c if c < ' ' || matches!(c, '\u{fffe}' | '\u{ffff}') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// What hwloc keeps of a string it writes: printable ASCII, tabs and line breaks.
pub(crate) fn safe(s: &str) -> String {
    s.chars()
        .filter(|&c| (' '..='~').contains(&c) || matches!(c, '\t' | '\n' | '\r'))
        .collect()
}

/// Drops the characters XML 1.0 cannot carry (other control characters).
fn xml_chars(s: &str) -> String {
    s.chars()
        .filter(|&c| c >= ' ' || matches!(c, '\t' | '\n' | '\r'))
        .filter(|&c| !matches!(c, '\u{fffe}' | '\u{ffff}'))
        .collect()
}

pub(crate) fn info(w: &mut Writer, indent: usize, i: &Info) {
    w.open(indent, "info");
    w.attr("name", &safe(&i.name));
    w.attr("value", &safe(&i.value));
    w.end_empty();
}

/// A `<userdata>` element as hwloc writes it: `name`, `length`, then
/// `encoding`; the content escapes only `&`, `<` and `>` (quotes, tabs and
/// line breaks stay literal), and an empty element is self-closed.
pub(crate) fn userdata(w: &mut Writer, indent: usize, u: &UserData) {
    w.open(indent, "userdata");
    if let Some(n) = &u.name {
        w.attr("name", n);
    }
    w.attr("length", &u.length.to_string());
    if u.base64 {
        w.attr("encoding", "base64");
    }
    if u.content.is_empty() {
        w.end_empty();
        return;
    }
    w.out.push('>');
    for c in u.content.chars() {
        match c {
            '&' => w.out.push_str("&amp;"),
            '<' => w.out.push_str("&lt;"),
            '>' => w.out.push_str("&gt;"),
            c => w.out.push(c),
        }
    }
    w.out.push_str("</userdata>\n");
}

// ---------------------------------------------------------------- objects

enum Step {
    Open(ObjId, usize),
    Close(usize),
}

fn objects(w: &mut Writer, topo: &Topology, v3: bool, page_types: bool) {
    let root = topo.root();
    let mut stack = vec![Step::Open(root, 2)];
    while let Some(step) = stack.pop() {
        let (id, indent) = match step {
            Step::Close(indent) => {
                w.close(indent, "object");
                continue;
            }
            Step::Open(id, indent) => (id, indent),
        };
        let o = topo.obj(id);
        w.open(indent, "object");
        object_attrs(w, topo, id, o, v3);

        let infos: Vec<Info> = if v3 {
            o.infos.clone()
        } else {
            v2_infos(topo, id)
        };
        let children: Vec<ObjId> = o
            .memory_children()
            .iter()
            .chain(o.children())
            .chain(o.io_children())
            .chain(o.misc_children())
            .copied()
            .filter(|&c| topo.get(c).is_some())
            .collect();
        // hwloc 3 has no page types; version 2 documents carry them.
        let pages = match &o.attr {
            ObjAttr::Numa(n) if page_types => n.page_types.as_slice(),
            _ => &[],
        };
        if infos.is_empty() && children.is_empty() && pages.is_empty() && o.userdata.is_empty() {
            w.end_empty();
            continue;
        }
        w.end_open();
        for p in pages {
            w.open(indent + 2, "page_type");
            w.attr("size", &p.size.to_string());
            w.attr("count", &p.count.to_string());
            w.end_empty();
        }
        for i in &infos {
            info(w, indent + 2, i);
        }
        // hwloc writes userdata after the infos, before the children.
        for u in &o.userdata {
            userdata(w, indent + 2, u);
        }
        stack.push(Step::Close(indent));
        for &c in children.iter().rev() {
            stack.push(Step::Open(c, indent + 2));
        }
    }
}

fn object_attrs(w: &mut Writer, topo: &Topology, id: ObjId, o: &Object, v3: bool) {
    let is_root = id == topo.root();
    w.attr("type", o.obj_type.xml_name());
    if let Some(os) = o.os_index {
        w.attr("os_index", &os.to_string());
    }
    if let Some(cpuset) = &o.cpuset {
        w.attr("cpuset", &cpuset.to_string());
        let complete = o.complete_cpuset.as_ref().unwrap_or(cpuset);
        w.attr("complete_cpuset", &complete.to_string());
        if is_root {
            w.attr("allowed_cpuset", &topo.allowed_cpuset.to_string());
        }
        let nodeset = o.nodeset.clone().unwrap_or_default();
        w.attr("nodeset", &nodeset.to_string());
        let complete = o.complete_nodeset.as_ref().unwrap_or(&nodeset);
        w.attr("complete_nodeset", &complete.to_string());
        if is_root {
            w.attr("allowed_nodeset", &topo.allowed_nodeset.to_string());
        }
    }
    w.attr("gp_index", &o.gp_index.to_string());
    if v3 {
        w.attr("id", &format!("obj{}", o.gp_index));
    }
    if let Some(name) = &o.name {
        w.attr("name", &safe(name));
    }
    if let Some(subtype) = &o.subtype {
        w.attr("subtype", &safe(subtype));
    }
    match &o.attr {
        ObjAttr::Numa(n) => {
            if n.local_memory != 0 {
                w.attr("local_memory", &n.local_memory.to_string());
            }
        }
        ObjAttr::Cache(c) => {
            w.attr("cache_size", &c.size.to_string());
            w.attr("depth", &c.depth.to_string());
            w.attr("cache_linesize", &c.linesize.to_string());
            w.attr("cache_associativity", &c.associativity.to_string());
            w.attr("cache_type", &c.kind.code().to_string());
            // hwloc 2 does not know this attribute (and complains about it).
            if c.inclusive && v3 {
                w.attr("cache_inclusive", "1");
            }
        }
        ObjAttr::Group(g) => {
            w.attr("kind", &g.kind.to_string());
            w.attr("subkind", &g.subkind.to_string());
            if g.dont_merge {
                w.attr("dont_merge", "1");
            }
        }
        ObjAttr::Bridge(b) => bridge_attrs(w, b),
        ObjAttr::Pci(p) => pci_attrs(w, p),
        ObjAttr::OsDev(t) => {
            if v3 {
                w.attr("osdev_type", &t.0.to_string());
            } else if let Some(code) = t.v2_code(o.subtype.as_deref()) {
                w.attr("osdev_type", &code.to_string());
            }
        }
        ObjAttr::None => {}
    }
}

/// The PCI attributes; hwloc 3 adds the programming interface to
/// `pci_type`, which hwloc 2 writes without it.
/// A bridge's attributes, as hwloc writes them in every XML version.
pub(crate) fn bridge_attrs(w: &mut Writer, b: &BridgeAttr) {
    let up = match b.upstream {
        BridgeUpstream::Host => 0,
        BridgeUpstream::Pci(_) => 1,
    };
    w.attr("bridge_type", &format!("{up}-1"));
    w.attr("depth", &b.depth.to_string());
    w.attr(
        "bridge_pci",
        &format!(
            "{:04x}:[{:02x}-{:02x}]",
            b.domain, b.secondary_bus, b.subordinate_bus
        ),
    );
    if let BridgeUpstream::Pci(p) = &b.upstream {
        pci_attrs(w, p);
    }
}

pub(crate) fn pci_attrs(w: &mut Writer, p: &PciAttr) {
    w.attr(
        "pci_busid",
        &format!(
            "{:04x}:{:02x}:{:02x}.{:01x}",
            p.domain, p.bus, p.dev, p.func
        ),
    );
    let mut pci_type = format!(
        "{:04x} [{:04x}:{:04x}] [{:04x}:{:04x}] {:02x}",
        p.class_id, p.vendor_id, p.device_id, p.subvendor_id, p.subdevice_id, p.revision
    );
    if w.pci_prog_if {
        pci_type += &format!(" {:02x}", p.prog_if);
    }
    w.attr("pci_type", &pci_type);
    w.attr("pci_link_speed", &format!("{:.6}", f64::from(p.linkspeed)));
}

// ---------------------------------------------------------------- topology-wide

fn is_hetero(topo: &Topology, d: &Distances) -> bool {
    d.kind & dist_kind::HETEROGENEOUS_TYPES != 0
        || d.objs
            .windows(2)
            .any(|p| topo.obj(p[0]).obj_type != topo.obj(p[1]).obj_type)
}

fn distances(w: &mut Writer, topo: &Topology) {
    let live: Vec<&Distances> = topo
        .distances
        .iter()
        .filter(|d| d.objs.len() >= 2 && d.objs.iter().all(|&o| topo.get(o).is_some()))
        .collect();
    for hetero in [false, true] {
        for d in live.iter().filter(|d| is_hetero(topo, d) == hetero) {
            one_distances(w, topo, d, hetero);
        }
    }
}

fn one_distances(w: &mut Writer, topo: &Topology, d: &Distances, hetero: bool) {
    let tag = if hetero {
        "distances2hetero"
    } else {
        "distances2"
    };
    let first_type = topo.obj(d.objs[0]).obj_type;
    w.open(2, tag);
    if !hetero {
        w.attr("type", first_type.xml_name());
    }
    w.attr("nbobjs", &d.objs.len().to_string());
    w.attr("kind", &d.kind.to_string());
    if let Some(name) = &d.name {
        w.attr("name", &xml_chars(name));
    }
    let os_indexing = matches!(first_type, ObjType::PU | ObjType::NUMANode);
    if !hetero {
        w.attr("indexing", if os_indexing { "os" } else { "gp" });
    }
    w.end_open();
    let indexes: Vec<String> = d
        .objs
        .iter()
        .map(|&id| {
            let o = topo.obj(id);
            if hetero {
                format!("{}:{}", o.obj_type.xml_name(), o.gp_index)
            } else if os_indexing {
                o.os_index.unwrap_or(u32::MAX).to_string()
            } else {
                o.gp_index.to_string()
            }
        })
        .collect();
    chunks(w, "indexes", indexes.iter().map(String::as_str));
    let values: Vec<String> = d.values.iter().map(u64::to_string).collect();
    chunks(w, "u64values", values.iter().map(String::as_str));
    w.close(2, tag);
}

fn chunks<'s>(w: &mut Writer, tag: &str, items: impl Iterator<Item = &'s str>) {
    let mut text = String::new();
    let mut n = 0;
    for item in items {
        text.push_str(item);
        text.push(' ');
        n += 1;
        if n == VALUES_PER_LINE {
            w.content(4, tag, &text);
            text.clear();
            n = 0;
        }
    }
    if n > 0 {
        w.content(4, tag, &text);
    }
}

fn support(w: &mut Writer, topo: &Topology) {
    let mut names: Vec<&str> = SUPPORT_ORDER
        .iter()
        .copied()
        .filter(|n| topo.support.iter().any(|s| s == n))
        .collect();
    for s in &topo.support {
        if !SUPPORT_ORDER.contains(&s.as_str())
            && s != "custom.exported_support"
            && !names.contains(&s.as_str())
        {
            names.push(s);
        }
    }
    names.push("custom.exported_support");
    for n in names {
        w.open(2, "support");
        w.attr("name", &xml_chars(n));
        w.end_empty();
    }
}

fn memory_attributes(w: &mut Writer, topo: &Topology) {
    // hwloc writes the predefined attributes first (in its id order, only
    // when they have values), then the custom ones in registration order.
    let predefined = |m: &MemAttr| {
        memattrs::PREDEFINED
            .iter()
            .position(|(n, f)| *n == m.name && *f == m.flags)
    };
    let mut list: Vec<&MemAttr> = Vec::new();
    for (name, _) in memattrs::PREDEFINED.iter().skip(2) {
        if let Some(m) = topo
            .memattrs
            .iter()
            .find(|m| m.name == *name && predefined(m).is_some())
            && !m.values.is_empty()
        {
            list.push(m);
        }
    }
    list.extend(topo.memattrs.iter().filter(|m| predefined(m).is_none()));

    for m in list {
        w.open(2, "memattr");
        w.attr("name", &xml_chars(&m.name));
        w.attr("flags", &m.flags.to_string());
        // Values are grouped by target, targets in order of first appearance.
        let mut targets: Vec<ObjId> = Vec::new();
        for v in &m.values {
            if !targets.contains(&v.target) {
                targets.push(v.target);
            }
        }
        let mut lines = String::new();
        let need_initiator = m.needs_initiator();
        for t in targets {
            let Some(target) = topo.get(t) else { continue };
            for v in m.values.iter().filter(|v| v.target == t) {
                let mut line = Writer::new();
                line.open(4, "memattr_value");
                line.attr("target_obj_type", target.obj_type.xml_name());
                line.attr("target_obj_gp_index", &target.gp_index.to_string());
                line.attr("value", &v.value.to_string());
                if need_initiator {
                    match &v.initiator {
                        Some(Initiator::Object(i)) => {
                            let Some(io) = topo.get(*i) else { continue };
                            line.attr("initiator_obj_gp_index", &io.gp_index.to_string());
                            line.attr("initiator_obj_type", io.obj_type.xml_name());
                        }
                        Some(Initiator::CpuSet(c)) => line.attr("initiator_cpuset", &c.to_string()),
                        None => continue,
                    }
                }
                line.end_empty();
                lines.push_str(&line.out);
                if !need_initiator {
                    break;
                }
            }
        }
        if lines.is_empty() {
            w.end_empty();
        } else {
            w.end_open();
            w.out.push_str(&lines);
            w.close(2, "memattr");
        }
    }
}

fn cpukinds(w: &mut Writer, topo: &Topology) {
    for k in &topo.cpukinds {
        w.open(2, "cpukind");
        w.attr("cpuset", &k.cpuset.to_string());
        if let Some(e) = k.forced_efficiency {
            w.attr("forced_efficiency", &e.to_string());
        }
        if k.infos.is_empty() {
            w.end_empty();
            continue;
        }
        w.end_open();
        for i in &k.infos {
            info(w, 4, i);
        }
        w.close(2, "cpukind");
    }
}
