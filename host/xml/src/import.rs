//! Reading hwloc XML documents (versions 1.x, 2 and 3) into a [`Topology`].
//!
//! The document is read in three passes:
//!
//! 1. the object tree is parsed and checked into a temporary tree of
//!    [`Parsed`] objects, converting version 2 attributes to their hwloc 3
//!    meaning and marking the objects the type filters reject;
//! 2. the kept objects are inserted with [`Topology::insert_by_parent`] in
//!    document order (children of rejected objects go to the nearest kept
//!    ancestor, and normal children are sorted by CPU set as hwloc does);
//! 3. the topology-wide elements after the root object (distances, memory
//!    attributes, CPU kinds, infos, memory tiers, PCI localities, support)
//!    are read, resolving object references through the gp indexes of the
//!    inserted objects.
//!
//! Finally [`Topology::finish`] is called.

use std::collections::{HashMap, HashSet};

use roxmltree::ParsingOptions;
use tree::{Attribute, Document, Node};
use wloc_core::bitmap::{CpuSet, MAX_SET_BITS, NodeSet};
use wloc_core::cpukinds::CpuKind;
use wloc_core::distances::{Distances, kind as dist_kind};
use wloc_core::memattrs::{self, Initiator, MemAttr};
use wloc_core::object::{
    BridgeAttr, BridgeUpstream, CacheAttr, CacheKind, GroupAttr, Info, NumaAttr, ObjAttr, ObjKind,
    ObjType, Object, OsDevTypes, PageType, PciAttr,
};
use wloc_core::topology::{InsertError, MemTier, PciLocality};
use wloc_core::{ObjId, Topology, UserData};

use super::XmlError;

mod tree;
mod v1;

/// Objects on the longest path from the root object down, the root
/// included: the topology's own limit ([`wloc_core::MAX_TREE_DEPTH`] parent
/// links below the root), so that every tree wloc holds can be written and
/// read back.  Real topologies are a few tens of levels deep; the bound is
/// checked before anything recurses (roxmltree's tokenizer recurses once
/// per nested element and has no limit of its own, see [`precheck`]).
pub(super) const MAX_DEPTH: usize = wloc_core::MAX_TREE_DEPTH + 1;

/// hwloc's group kind for Intel modules (a `Module` object type in old documents).
const GROUP_KIND_INTEL_MODULE: u32 = 102;
/// hwloc's group kind for Intel tiles (a `Tile` object type in old documents).
const GROUP_KIND_INTEL_TILE: u32 = 103;
/// hwloc's group kind for Intel dies: such groups are read as Die objects.
const GROUP_KIND_INTEL_DIE: u32 = 104;

/// Root infos of version 2 documents that hwloc 3 moves to the topology infos.
use crate::hwloc2::TOPOLOGY_INFOS as V2_TOPOLOGY_INFOS;

/// OS-device backends whose version 2 `Backend` info on the device implies a
/// topology `Backend` info in hwloc 3, in the order hwloc 3 adds them.
const V2_DEVICE_BACKENDS: [&str; 6] = ["CUDA", "NVML", "RSMI", "LevelZero", "OpenCL", "GL"];

/// One object of the document, checked, before insertion.
struct Parsed {
    /// Boxed: parsed objects move several times (into their parent, out of
    /// rejected ones, into the topology), a pointer is cheaper to move.
    obj: Box<Object>,
    /// Whether the type filters keep it (the root is always kept).
    keep: bool,
    children: Vec<Parsed>,
}

/// What the children of an object need to know about their (kept) parent.
#[derive(Clone, Copy)]
struct ParentInfo<'p> {
    obj_type: ObjType,
    cpuset: Option<&'p CpuSet>,
    has_nodeset: bool,
}

struct Importer<'a, 'input> {
    doc: &'a Document<'input>,
    reading: Reading,
    major: u32,
    warnings: Vec<String>,
    /// Warnings past [`MAX_WARNINGS`], counted only.
    warnings_dropped: usize,
    /// Topology infos, in document order (v3 `<info>`, moved v2 root infos).
    topo_infos: Vec<Info>,
    /// Backends of [`V2_DEVICE_BACKENDS`] named by version 2 OS devices.
    need_backend: [bool; 6],
    allowed_cpuset: Option<CpuSet>,
    allowed_nodeset: Option<NodeSet>,
    /// PCI localities derived from the host bridges of version 2 documents.
    derived_localities: Vec<PciLocality>,
    seen_gp: HashSet<u64>,
    /// hwloc 1.x documents only: what the conversion to the version 2
    /// model needs once the tree is read.
    v1: V1State,
}

/// What an hwloc 1.x document leaves for after its object tree is read.
#[derive(Default)]
struct V1State {
    /// `local_memory` of the root object: the memory of a machine without
    /// NUMA nodes, given to the NUMA node made for it.
    machine_memory: u64,
    /// `<page_type>` entries of the root object, likewise.
    machine_pages: Vec<PageType>,
    /// OS indexes of every NUMA node, in document order: version 1
    /// distance matrices list their objects in that order.
    numa_order: Vec<u32>,
    /// The `<distances>` matrices of the root object: (element, object count,
    /// values already multiplied by `latency_base`).
    distances: Vec<(usize, usize, Vec<f32>)>,
    /// The next gp index once the document's objects are numbered as
    /// hwloc numbers them (0 before): objects added later get the
    /// following ones.
    next_gp: u64,
    /// Whether the root object was a NUMA node and a Machine was made
    /// above it (a Machine hwloc makes with an unknown OS index).
    machine_made: bool,
}

/// Maps from the document's object references to the inserted objects.
#[derive(Default)]
struct Refs {
    by_gp: HashMap<u64, ObjId>,
    by_os: HashMap<(ObjType, u32), ObjId>,
}

impl Refs {
    fn by_gp_typed(&self, topo: &Topology, t: ObjType, gp: u64) -> Option<ObjId> {
        self.by_gp
            .get(&gp)
            .copied()
            .filter(|&id| topo.obj(id).obj_type == t)
    }
}

/// Reads `text` into `topo` and finishes it.
pub(super) fn import(text: &str, topo: Topology) -> Result<(Topology, Vec<String>), XmlError> {
    import_as(text, topo, Reading::Hwloc3)
}

/// How version 2 documents are read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Reading {
    /// As hwloc 3 reads them: the root's topology-wide infos become
    /// topology infos, and the compute backends of OS devices are named
    /// there too.
    Hwloc3,
    /// As hwloc 2 reads them: root infos stay on the root, as written.
    Hwloc2,
}

pub(super) fn import_as(
    text: &str,
    topo: Topology,
    reading: Reading,
) -> Result<(Topology, Vec<String>), XmlError> {
    // hwloc 2/3 documents as hwloc and wloc write them take the fast
    // tokeniser; everything else (hwloc 1.x, unusual constructs, errors) the
    // reference parser, whose verdict and messages are the same either way.
    if let Some(doc) = Document::parse_fast(text, MAX_ELEMENT_DEPTH) {
        return import_doc(&doc, topo, reading);
    }
    import_reference_as(text, topo, reading)
}

/// [`import`] through roxmltree only (also the reference the fast path is
/// tested against).
pub(super) fn import_reference(
    text: &str,
    topo: Topology,
) -> Result<(Topology, Vec<String>), XmlError> {
    import_reference_as(text, topo, Reading::Hwloc3)
}

fn import_reference_as(
    text: &str,
    topo: Topology,
    reading: Reading,
) -> Result<(Topology, Vec<String>), XmlError> {
    precheck(text)?;
    let opts = ParsingOptions {
        allow_dtd: true,
        ..ParsingOptions::default()
    };
    let rox = roxmltree::Document::parse_with_options(text, opts).map_err(|e| {
        let pos = e.pos();
        let mut msg = e.to_string();
        let suffix = format!(" at {}:{}", pos.row, pos.col);
        if let Some(stripped) = msg.strip_suffix(&suffix) {
            msg = stripped.to_string();
        }
        XmlError::at(format!("malformed XML: {msg}"), pos.row, pos.col)
    })?;
    import_doc(&Document::from_roxmltree(&rox), topo, reading)
}

/// Reads a parsed document into `topo` and finishes it.
fn import_doc(
    doc: &Document,
    mut topo: Topology,
    reading: Reading,
) -> Result<(Topology, Vec<String>), XmlError> {
    let top = doc.root_element();
    let mut imp = Importer {
        doc,
        reading,
        major: 0,
        warnings: Vec::new(),
        warnings_dropped: 0,
        topo_infos: Vec::new(),
        need_backend: [false; 6],
        allowed_cpuset: None,
        allowed_nodeset: None,
        derived_localities: Vec::new(),
        seen_gp: HashSet::new(),
        v1: V1State::default(),
    };
    if top.tag_name().name() != "topology" {
        return Err(imp.err(
            top,
            format!(
                "the document element is <{}>, not <topology>: this is not an hwloc XML topology",
                top.tag_name().name()
            ),
        ));
    }
    imp.major = imp.version(top)?;

    let mut elements = top.children().filter(|n| n.is_element());
    let root_node = match elements.next() {
        Some(n) if n.tag_name().name() == "object" => n,
        Some(n) => {
            return Err(imp.err(
                n,
                format!(
                    "expected the root <object> as first element of <topology>, found <{}>",
                    n.tag_name().name()
                ),
            ));
        }
        None => return Err(imp.err(top, "<topology> contains no <object>")),
    };
    imp.check_text_children(top)?;

    // Pass 1: the object tree.
    let mut root = imp.parse_tree(&topo, root_node)?;
    if imp.major == 1 {
        root = imp.v1_convert_tree(&topo, root);
    }
    // Like hwloc 2 and 3, require the NUMA nodes that these versions always
    // have (hwloc 1.x documents may have none: one is made below).
    if imp.major >= 2 && root.obj.nodeset.as_ref().is_none_or(|n| n.is_empty()) {
        return Err(imp.err(
            root_node,
            "the root object has no nodeset or an empty one (documents of hwloc 2 and later always have NUMA nodes)",
        ));
    }

    // Pass 2: insertion.
    let mut refs = Refs::default();
    imp.install_root(&mut topo, root, &mut refs)?;
    if imp.major == 1 {
        imp.v1_finish(&mut topo, &refs)?;
        // hwloc 1.x documents end with the root object; hwloc 2 reads nothing after it.
        if let Some(node) = elements.next() {
            let name = node.tag_name().name();
            imp.warn(
                node,
                format!("ignoring <{name}> after the root object of an hwloc 1.x document, and everything after it"),
            );
        }
    }

    // Pass 3: topology-wide elements.
    let mut got_localities = false;
    let mut got_support = false;
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for node in elements {
        let name = node.tag_name().name();
        if let Some(&(_, cap)) = TOPOLOGY_ELEMENT_CAPS.iter().find(|(n, _)| *n == name) {
            let seen = counts.entry(name).or_default();
            *seen += 1;
            if *seen > cap {
                return Err(imp.err(
                    node,
                    format!("more than {cap} <{name}> elements (real topologies have a few)"),
                ));
            }
        }
        match name {
            "object" => {
                return Err(imp.err(node, "a topology has a single root <object>"));
            }
            "distances2" => imp.distances(&mut topo, &refs, node, false)?,
            "distances2hetero" => imp.distances(&mut topo, &refs, node, true)?,
            "support" => {
                imp.support(&mut topo, node, got_support)?;
                got_support = true;
            }
            "memattr" => imp.memattr(&mut topo, &refs, node)?,
            "cpukind" => imp.cpukind(&mut topo, node)?,
            "info" => {
                if let Some(info) = imp.info(node)? {
                    imp.topo_infos.push(info);
                }
            }
            "memtier" => imp.memtier(&mut topo, node)?,
            "pci_locality" => {
                imp.pci_locality(&mut topo, node)?;
                got_localities = true;
            }
            _ => {
                // hwloc stops reading at the first element it does not know.
                let w = format!(
                    "ignoring unknown element <{name}> after the root object, and everything after it"
                );
                imp.warn(node, w);
                break;
            }
        }
    }

    // hwloc 3 records the topology Backend of version 2 OS devices.
    if imp.major <= 2 {
        for (i, backend) in V2_DEVICE_BACKENDS.iter().enumerate() {
            if imp.reading == Reading::Hwloc2 {
                break;
            }
            let present = imp
                .topo_infos
                .iter()
                .any(|info| info.name == "Backend" && info.value == *backend);
            if imp.need_backend[i] && !present {
                imp.topo_infos.push(Info {
                    name: "Backend".into(),
                    value: (*backend).into(),
                });
            }
        }
        if !got_localities {
            topo.pci_localities = std::mem::take(&mut imp.derived_localities);
        }
    }
    topo.infos.append(&mut imp.topo_infos);
    if let Some(c) = imp.allowed_cpuset.take() {
        topo.allowed_cpuset = c;
    }
    if let Some(n) = imp.allowed_nodeset.take() {
        topo.allowed_nodeset = n;
    }

    // hwloc trusts the sets of the document; wrong ones (a child outside its
    // parent, overlapping siblings...) would give an unusable topology:
    // `finish` checks the tree it made.
    topo.finish().map_err(|e| match e {
        wloc_core::TopologyError::Check(e) => XmlError::new(format!(
            "the document describes an inconsistent topology: {}",
            clip(&e.to_string())
        )),
        e => XmlError::new(format!(
            "the document describes an invalid topology: {}",
            clip(&e.to_string())
        )),
    })?;
    // hwloc keeps a document whose sets do not add up (a PU deleted by
    // hand leaves its core's cpuset as it was) as written: so does wloc,
    // with a warning.
    if let Err(e) = topo.check_hwloc() {
        imp.push_warning(
            None,
            format!(
                "the document's tree breaks hwloc's rules, kept as written: {}",
                clip(&e.to_string())
            ),
        );
    }
    Ok((topo, imp.finish_warnings()))
}

impl<'a, 'input> Importer<'a, 'input> {
    // ------------------------------------------------------------ errors

    fn pos(&self, at: usize) -> (u32, u32) {
        let p = self.doc.text_pos_at(at);
        (p.row, p.col)
    }

    fn err(&self, node: Node, msg: impl Into<String>) -> XmlError {
        let (l, c) = self.pos(node.range().start);
        XmlError::at(msg, l, c)
    }

    fn attr_err(&self, attr: &Attribute, msg: impl Into<String>) -> XmlError {
        let (l, c) = self.pos(attr.range().start);
        XmlError::at(msg, l, c)
    }

    fn warn(&mut self, node: Node, msg: impl Into<String>) {
        self.push_warning(Some(node.range().start), msg.into());
    }

    /// Records a warning, with its line and column when `at` is given.
    /// Only the first [`MAX_WARNINGS`] are kept: finding a position scans
    /// the text from its start, and a document may repeat one mistake in
    /// every element (the others are counted, see [`Importer::finish_warnings`]).
    fn push_warning(&mut self, at: Option<usize>, msg: String) {
        if self.warnings.len() >= MAX_WARNINGS {
            self.warnings_dropped += 1;
            return;
        }
        let w = match at {
            Some(at) => {
                let (l, c) = self.pos(at);
                format!("line {l}, column {c}: {msg}")
            }
            None => msg,
        };
        self.warnings.push(w);
    }

    /// The warnings, with a last line counting those left out.
    fn finish_warnings(mut self) -> Vec<String> {
        if self.warnings_dropped > 0 {
            let more = format!("{} more warnings not shown", self.warnings_dropped);
            self.warnings.push(more);
        }
        self.warnings
    }

    /// Rejects non-blank text between elements (hwloc's own parser would).
    fn check_text_children(&self, node: Node) -> Result<(), XmlError> {
        for c in node.children() {
            if c.is_text() && c.text().is_some_and(|t| !t.trim().is_empty()) {
                return Err(self.err(
                    c,
                    format!("unexpected text inside <{}>", node.tag_name().name()),
                ));
            }
        }
        Ok(())
    }

    /// The element children of a node, after rejecting non-blank text
    /// between them ([`Importer::check_text_children`]).
    fn element_children<'n, 'i>(&self, node: Node<'n, 'i>) -> Result<Vec<Node<'n, 'i>>, XmlError> {
        self.check_text_children(node)?;
        Ok(node.children().filter(|c| c.is_element()).collect())
    }

    // ------------------------------------------------------------ header

    fn version(&self, top: Node) -> Result<u32, XmlError> {
        let Some(attr) = top.attribute_node("version") else {
            // hwloc 1.x wrote no version: read it as hwloc 2 does.
            return Ok(1);
        };
        let v = attr.value();
        let parsed = v.split_once('.').and_then(|(maj, min)| {
            let ok = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            if ok(maj) && ok(min) {
                maj.parse::<u32>().ok()
            } else {
                None
            }
        });
        match parsed {
            Some(m @ (1..=3)) => Ok(m),
            Some(0) => Err(self.attr_err(
                &attr,
                format!("hwloc XML version {v} is not supported (only versions 1.x, 2.x and 3.x are)"),
            )),
            Some(_) => Err(self.attr_err(
                &attr,
                format!(
                    "hwloc XML version {v} is too recent (only versions 1.x, 2.x and 3.x are supported)"
                ),
            )),
            None => Err(self.attr_err(
                &attr,
                format!("invalid topology version \"{v}\" (expected MAJOR.MINOR, such as 2.0)"),
            )),
        }
    }

    // ------------------------------------------------------------ objects

    /// Parses the object tree below `root` without recursion (the depth of
    /// the document is bounded, but debug builds have large stack frames).
    fn parse_tree(&mut self, topo: &Topology, root: Node<'a, 'input>) -> Result<Parsed, XmlError> {
        struct Frame<'a, 'input> {
            parsed: Parsed,
            /// The children of the object's element; the object elements
            /// among them (all after the other elements) are still to read.
            pending: tree::Children<'a, 'input>,
        }
        let (parsed, kids) = self.parse_object(topo, root, None)?;
        let mut stack = vec![Frame {
            parsed,
            pending: kids,
        }];
        loop {
            let next = stack.last_mut().and_then(|f| {
                f.pending
                    .find(|c| c.is_element() && c.tag_name().name() == "object")
            });
            match next {
                Some(node) => {
                    if stack.len() >= MAX_DEPTH {
                        return Err(self.err(
                            node,
                            format!(
                                "objects are nested more than {} levels below the root object, the limit",
                                wloc_core::MAX_TREE_DEPTH
                            ),
                        ));
                    }
                    // Children of rejected objects go to the nearest kept ancestor.
                    let v1 = self.major == 1;
                    let parent = stack.iter().rev().find(|f| f.parsed.keep).map(|f| {
                        let o = &f.parsed.obj;
                        // In hwloc 1.x documents NUMA nodes sit in the CPU
                        // tree; their children move to the NUMA node's
                        // parent (or to a group with the node's locality),
                        // a normal object covering the node's CPUs.
                        let obj_type = if v1 && o.obj_type == ObjType::NUMANode {
                            ObjType::Group
                        } else {
                            o.obj_type
                        };
                        ParentInfo {
                            obj_type,
                            cpuset: o.cpuset.as_ref(),
                            has_nodeset: o.nodeset.is_some(),
                        }
                    });
                    let (parsed, kids) = self.parse_object(topo, node, parent)?;
                    stack.push(Frame {
                        parsed,
                        pending: kids,
                    });
                }
                None => {
                    let done = stack.pop().map(|f| f.parsed);
                    match (stack.last_mut(), done) {
                        (Some(up), Some(done)) => up.parsed.children.push(done),
                        (None, Some(done)) => return Ok(done),
                        (_, None) => unreachable!("the stack holds the root until the end"),
                    }
                }
            }
        }
    }

    /// Parses one `<object>`: its attributes and non-object children.
    /// Returns it without children (room made for them), and the children
    /// of its element, whose `<object>` elements are still to read.
    fn parse_object(
        &mut self,
        topo: &Topology,
        node: Node<'a, 'input>,
        parent: Option<ParentInfo>,
    ) -> Result<(Parsed, tree::Children<'a, 'input>), XmlError> {
        let is_root = parent.is_none();
        let mut attrs = node.attributes();
        let mut group_kind = None;
        // hwloc 1.x typed every cache `Cache`; its level and kind come from
        // the depth and cache_type attributes (resolved once they are read).
        let mut old_cache = false;
        let obj_type = match attrs.next() {
            Some(a) if a.name() == "type" => {
                let v = a.value();
                match ObjType::parse(v) {
                    Some(t) => t,
                    None if self.major == 1 && v.eq_ignore_ascii_case("Cache") => {
                        old_cache = true;
                        ObjType::L1Cache
                    }
                    None if v.eq_ignore_ascii_case("Tile") => {
                        group_kind = Some(GROUP_KIND_INTEL_TILE);
                        ObjType::Group
                    }
                    None if v.eq_ignore_ascii_case("Module") => {
                        group_kind = Some(GROUP_KIND_INTEL_MODULE);
                        ObjType::Group
                    }
                    None => return Err(self.attr_err(&a, format!("unknown object type \"{v}\""))),
                }
            }
            Some(a) => return Err(self.attr_err(
                &a,
                format!(
                    "object attribute {} found before the type attribute (type must come first)",
                    a.name()
                ),
            )),
            None => return Err(self.err(node, "<object> without a type attribute")),
        };

        let mut b = ObjBuilder::new(obj_type);
        if let Some(k) = group_kind {
            b.group.kind = k;
        }
        for a in attrs {
            self.object_attr(&mut b, &a, is_root)?;
        }

        // Non-object children come first: infos, page types, userdata.
        let mut object_children = 0;
        self.check_text_children(node)?;
        for c in node.children().filter(|c| c.is_element()) {
            let tag = c.tag_name().name();
            if tag == "object" {
                object_children += 1;
                continue;
            }
            if object_children > 0 {
                return Err(self.err(
                    c,
                    format!("<{tag}> found after child objects (it must come before them)"),
                ));
            }
            match tag {
                "info" => {
                    if let Some(info) = self.info(c)? {
                        if self.major == 1 && matches!(info.name.as_str(), "Type" | "CoProcType") {
                            // hwloc 1.x kept the subtype in these infos.
                            b.subtype = Some(info.value);
                        } else if is_root
                            && self.major <= 2
                            && self.reading == Reading::Hwloc3
                            && V2_TOPOLOGY_INFOS.contains(&info.name.as_str())
                        {
                            self.topo_infos.push(info);
                        } else {
                            b.infos.push(info);
                        }
                    }
                }
                "page_type" => {
                    if obj_type != ObjType::NUMANode && !is_root {
                        return Err(self.err(
                            c,
                            format!("<page_type> inside a {obj_type} object (only NUMA nodes have page types)"),
                        ));
                    }
                    // Kept for version 2 output (hwloc 3 ignores them); the
                    // machine-wide page types of old root objects are dropped.
                    if let Some(p) = self.page_type(c)? {
                        if obj_type == ObjType::NUMANode {
                            b.page_types.push(p);
                        } else if self.major == 1 {
                            // Memory of a machine without NUMA nodes.
                            self.v1.machine_pages.push(p);
                        }
                    }
                }
                "distances" if self.major == 1 => self.v1_distances(c, is_root)?,
                "userdata" => {
                    let u = self.userdata(c)?;
                    b.userdata.push(u);
                }
                _ => {
                    return Err(self.err(c, format!("unexpected <{tag}> inside <object>")));
                }
            }
        }

        if self.major == 1 && !self.v1_fixup(&mut b, node, old_cache)? {
            // An inconsistent group of an old document: dropped, its
            // children go to its parent (as for filtered objects).
            let obj = Object::new(ObjType::Group, None);
            return Ok((
                Parsed {
                    obj: Box::new(obj),
                    keep: false,
                    children: Vec::with_capacity(object_children),
                },
                node.children(),
            ));
        }
        let obj = self.finish_object(b, node, parent)?;
        let keep = is_root || topo.keeps_object(&obj);
        if self.major == 1 && obj.obj_type == ObjType::NUMANode {
            self.v1.numa_order.extend(obj.os_index);
        }

        if obj.obj_type == ObjType::Bridge {
            self.note_host_bridge(&obj, parent);
        }

        Ok((
            Parsed {
                obj: Box::new(obj),
                keep,
                children: Vec::with_capacity(object_children),
            },
            node.children(),
        ))
    }

    #[inline(never)]
    fn object_attr(
        &mut self,
        b: &mut ObjBuilder,
        a: &Attribute,
        is_root: bool,
    ) -> Result<(), XmlError> {
        let t = b.obj_type;
        let v = a.value();
        let is_cache = t.is_cache() || t == ObjType::MemCache;
        let is_pci = matches!(t, ObjType::PCIDevice | ObjType::Bridge);
        match a.name() {
            "type" => return Err(self.attr_err(a, "duplicate type attribute")),
            "os_index" => {
                b.os_index = if v.trim() == "-1" {
                    None
                } else {
                    let os = self.num::<u32>(a)?;
                    // A PU or NUMA node index is a bit of the sets built
                    // from it: refused at the cap before any is built.
                    if os >= MAX_SET_BITS && matches!(t, ObjType::PU | ObjType::NUMANode) {
                        return Err(self.attr_err(
                            a,
                            format!(
                                "{t} os_index {os} is at or above the cap of {MAX_SET_BITS} on PU and NUMA node indexes"
                            ),
                        ));
                    }
                    Some(os)
                }
            }
            "gp_index" => b.gp_index = self.num::<u64>(a)?,
            "id" => match v.strip_prefix("obj") {
                Some(rest) => b.gp_index = self.num_str::<u64>(a, rest)?,
                None => self.push_warning(
                    None,
                    format!("ignoring object id \"{v}\" that does not start with \"obj\""),
                ),
            },
            "cpuset" => b.cpuset = Some(self.bitmap(a)?),
            "complete_cpuset" => b.complete_cpuset = Some(self.bitmap(a)?),
            "nodeset" => b.nodeset = Some(self.bitmap(a)?),
            "complete_nodeset" => b.complete_nodeset = Some(self.bitmap(a)?),
            "allowed_cpuset" => {
                let s: CpuSet = self.bitmap(a)?;
                if is_root {
                    self.allowed_cpuset = Some(s);
                }
            }
            "allowed_nodeset" => {
                let s: NodeSet = self.bitmap(a)?;
                if is_root {
                    self.allowed_nodeset = Some(s);
                }
            }
            "name" => b.name = Some(v.to_string()),
            "subtype" => b.subtype = Some(v.to_string()),
            "cache_size"
            | "cache_linesize"
            | "cache_associativity"
            | "cache_type"
            | "cache_inclusive"
                if !is_cache =>
            {
                self.ignore_attr(a, t)
            }
            "cache_size" => b.cache.size = self.num(a)?,
            "cache_linesize" => b.cache.linesize = self.num(a)?,
            "cache_associativity" => b.cache.associativity = self.num(a)?,
            "cache_type" => {
                let code: u32 = self.num(a)?;
                match CacheKind::from_code(code) {
                    Some(k) => b.cache.kind = k,
                    None => self.push_warning(None, format!("ignoring invalid cache_type {code}")),
                }
            }
            "cache_inclusive" => b.cache.inclusive = self.num::<u32>(a)? != 0,
            "local_memory" => {
                let m: u64 = self.num(a)?;
                if t == ObjType::NUMANode {
                    b.local_memory = m;
                } else if is_root && self.major == 1 {
                    // Memory of a machine without NUMA nodes.
                    self.v1.machine_memory = m;
                } else {
                    self.ignore_attr(a, t);
                }
            }
            "depth" => {
                let d: u32 = self.num(a)?;
                if is_cache {
                    b.cache.depth = d;
                } else if !matches!(t, ObjType::Group | ObjType::Bridge) {
                    // Group and bridge depths are recomputed; others have none.
                    self.ignore_attr(a, t);
                }
            }
            "kind" | "subkind" | "dont_merge" if t != ObjType::Group => self.ignore_attr(a, t),
            "kind" => b.group.kind = self.num(a)?,
            "subkind" => b.group.subkind = self.num(a)?,
            "dont_merge" => b.group.dont_merge = self.num::<u32>(a)? != 0,
            "pci_busid" | "pci_type" | "pci_link_speed" if !is_pci => self.ignore_attr(a, t),
            "pci_busid" => {
                let f = scan(v, "%x:%x:%x.%x")
                    .filter(|f| {
                        f[1] <= 0xff && f[2] <= 0xff && f[3] <= 0xf && f[0] <= u32::MAX.into()
                    })
                    .ok_or_else(|| {
                        self.attr_err(
                            a,
                            format!(
                                "invalid pci_busid \"{v}\" (expected DDDD:BB:DD.F in hexadecimal)"
                            ),
                        )
                    })?;
                b.pci.domain = f[0] as u32;
                b.pci.bus = f[1] as u8;
                b.pci.dev = f[2] as u8;
                b.pci.func = f[3] as u8;
            }
            "pci_type" => {
                let f = scan(v, "%x [%x:%x] [%x:%x] %x %x")
                    .or_else(|| scan(v, "%x [%x:%x] [%x:%x] %x").map(|mut f| {
                        f.push(0);
                        f
                    }))
                    .filter(|f| {
                        f[..5].iter().all(|&x| x <= 0xffff) && f[5] <= 0xff && f[6] <= 0xff
                    })
                    .ok_or_else(|| {
                        self.attr_err(
                            a,
                            format!(
                                "invalid pci_type \"{v}\" (expected CCCC [VVVV:DDDD] [SSSS:ssss] RR PP in hexadecimal)"
                            ),
                        )
                    })?;
                b.pci.class_id = f[0] as u16;
                b.pci.vendor_id = f[1] as u16;
                b.pci.device_id = f[2] as u16;
                b.pci.subvendor_id = f[3] as u16;
                b.pci.subdevice_id = f[4] as u16;
                b.pci.revision = f[5] as u8;
                b.pci.prog_if = f[6] as u8;
            }
            "pci_link_speed" => {
                b.pci.linkspeed = v
                    .trim()
                    .parse::<f32>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| {
                        self.attr_err(
                            a,
                            format!("invalid pci_link_speed \"{v}\" (expected a number)"),
                        )
                    })?;
            }
            "bridge_type" | "bridge_pci" if t != ObjType::Bridge => self.ignore_attr(a, t),
            "bridge_type" => {
                let f = scan(v, "%u-%u").ok_or_else(|| {
                    self.attr_err(a, format!("invalid bridge_type \"{v}\" (expected U-D)"))
                })?;
                if f[0] > 1 || f[1] != 1 {
                    return Err(self.attr_err(
                        a,
                        format!(
                            "unsupported bridge_type \"{v}\" (upstream must be 0 for host or 1 for PCI, downstream 1 for PCI)"
                        ),
                    ));
                }
                b.bridge_pci_upstream = f[0] == 1;
            }
            "bridge_pci" => {
                let f = scan(v, "%x:[%x-%x]")
                    .filter(|f| f[1] <= 0xff && f[2] <= 0xff && f[0] <= u32::MAX.into())
                    .ok_or_else(|| {
                        self.attr_err(
                            a,
                            format!(
                                "invalid bridge_pci \"{v}\" (expected DDDD:[SS-ss] in hexadecimal)"
                            ),
                        )
                    })?;
                b.bridge_domain = f[0] as u32;
                b.bridge_secondary = f[1] as u8;
                b.bridge_subordinate = f[2] as u8;
            }
            "osdev_type" if t != ObjType::OSDevice => self.ignore_attr(a, t),
            "osdev_type" => b.osdev_raw = Some(self.num(a)?),
            // Attributes of hwloc 1.x that hwloc 2 drops or converts.
            "online_cpuset" | "os_level" if self.major == 1 => {}
            "dmi_board_vendor" | "dmi_board_name" if self.major == 1 => {
                if !v.is_empty() {
                    let name = if a.name() == "dmi_board_vendor" {
                        "DMIBoardVendor"
                    } else {
                        "DMIBoardName"
                    };
                    b.infos.push(Info {
                        name: name.into(),
                        value: v.into(),
                    });
                }
            }
            other => {
                let w = format!("ignoring unknown object attribute {other}");
                self.push_warning(None, w);
            }
        }
        Ok(())
    }

    fn ignore_attr(&mut self, a: &Attribute, t: ObjType) {
        let msg = format!("ignoring attribute {} of a {t} object", a.name());
        self.push_warning(Some(a.range().start), msg);
    }

    /// Turns the collected attributes into an object and applies hwloc's
    /// checks and version conversions.
    #[inline(never)]
    fn finish_object(
        &mut self,
        b: ObjBuilder,
        node: Node,
        parent: Option<ParentInfo>,
    ) -> Result<Object, XmlError> {
        let mut t = b.obj_type;
        if parent.is_some() && t == ObjType::Machine {
            // Non-root machines become groups, as in hwloc.
            t = ObjType::Group;
        }
        if parent.is_none() && t != ObjType::Machine && !(self.major == 1 && t == ObjType::NUMANode)
        {
            return Err(self.err(node, format!("the root object is a {t}, not a Machine")));
        }
        if let Some(p) = parent {
            // The topology's own rule (and words), checked here too so
            // that the error points at the element.
            if !t.can_be_child_of(p.obj_type) {
                let e = InsertError::WrongParent {
                    child: t,
                    parent: p.obj_type,
                };
                return Err(self.err(node, e.to_string()));
            }
        }
        if t == ObjType::Group
            && (b.group.kind == GROUP_KIND_INTEL_DIE || b.subtype.as_deref() == Some("Die"))
        {
            t = ObjType::Die;
        }
        if t.is_cache() && ObjType::cache_for(b.cache.depth, b.cache.kind) != Some(t) {
            return Err(self.err(
                node,
                format!(
                    "invalid {t} object with cache depth {} and cache type {} (they do not match the object type)",
                    b.cache.depth,
                    b.cache.kind.code()
                ),
            ));
        }
        let with_sets = matches!(t.kind(), ObjKind::Normal | ObjKind::Memory);
        if with_sets && b.cpuset.is_none() {
            return Err(self.err(node, format!("{t} object without a cpuset")));
        }
        if !with_sets && (b.cpuset.is_some() || b.nodeset.is_some()) {
            return Err(self.err(
                node,
                format!("{t} object with a cpuset or nodeset (it cannot have one)"),
            ));
        }
        if let Some(p) = parent {
            if b.cpuset.is_some() && p.cpuset.is_none() {
                return Err(self.err(
                    node,
                    format!("{t} object with a cpuset while its parent has none"),
                ));
            }
            if b.nodeset.is_some() && !p.has_nodeset {
                return Err(self.err(
                    node,
                    format!("{t} object with a nodeset while its parent has none"),
                ));
            }
        }
        if t == ObjType::NUMANode && b.nodeset.is_none() {
            return Err(self.err(node, "NUMANode object without a nodeset"));
        }
        if matches!(t, ObjType::PU | ObjType::NUMANode) && b.os_index.is_none() {
            return Err(self.err(node, format!("{t} object without an os_index")));
        }

        // A PU's set is its own index, and so is a NUMA node's nodeset, as
        // hwloc's checker requires: a document may not have the reader
        // build sets it does not spell out (one node per index up to 2^20,
        // each with a set that wide, costs the square of the count).
        let own = match t {
            ObjType::PU => Some((
                "cpuset",
                b.complete_cpuset
                    .as_ref()
                    .or(b.cpuset.as_ref())
                    .map(|c| c.bitmap()),
            )),
            ObjType::NUMANode => Some((
                "nodeset",
                b.complete_nodeset
                    .as_ref()
                    .or(b.nodeset.as_ref())
                    .map(|n| n.bitmap()),
            )),
            _ => None,
        };
        if let (Some((what, Some(set))), Some(os)) = (own, b.os_index)
            && (set.weight() != Some(1) || !set.is_set(os))
        {
            return Err(self.err(
                node,
                format!("{t} P#{os} has {what} {set}; it must hold its own index and only it"),
            ));
        }
        let mut obj = Object::new(t, b.os_index);
        obj.name = b.name;
        obj.subtype = b.subtype;
        if with_sets {
            obj.cpuset = b.cpuset;
            obj.complete_cpuset = b.complete_cpuset;
            obj.nodeset = b.nodeset;
            obj.complete_nodeset = b.complete_nodeset;
        }
        obj.infos = b.infos;
        obj.userdata = b.userdata.into_iter().collect();
        obj.gp_index = b.gp_index;
        if obj.gp_index != 0 && !self.seen_gp.insert(obj.gp_index) {
            self.warn(
                node,
                format!(
                    "gp_index {} is used by several objects; this {t} gets a new one",
                    obj.gp_index
                ),
            );
            obj.gp_index = 0;
        }
        obj.attr = match t {
            ObjType::NUMANode => ObjAttr::Numa(NumaAttr {
                local_memory: b.local_memory,
                page_types: b.page_types,
            }),
            _ if t.is_cache() || t == ObjType::MemCache => ObjAttr::Cache(b.cache),
            ObjType::Group => ObjAttr::Group(b.group),
            ObjType::PCIDevice => ObjAttr::Pci(b.pci),
            ObjType::Bridge => ObjAttr::Bridge(BridgeAttr {
                upstream: if b.bridge_pci_upstream {
                    BridgeUpstream::Pci(b.pci)
                } else {
                    BridgeUpstream::Host
                },
                domain: b.bridge_domain,
                secondary_bus: b.bridge_secondary,
                subordinate_bus: b.bridge_subordinate,
                depth: 0,
            }),
            ObjType::OSDevice => {
                let raw = b.osdev_raw.unwrap_or(0);
                let types = if self.major >= 3 {
                    let bits = u32::try_from(raw).unwrap_or(0);
                    if u64::from(bits) != raw {
                        self.warn(node, format!("ignoring invalid osdev_type {raw}"));
                    }
                    OsDevTypes(bits)
                } else {
                    if let Some(backend) = obj.info("Backend")
                        && let Some(i) = V2_DEVICE_BACKENDS.iter().position(|b| *b == backend)
                    {
                        self.need_backend[i] = true;
                    }
                    osdev_types_from_v2(raw, &obj)
                };
                ObjAttr::OsDev(types)
            }
            _ => ObjAttr::None,
        };
        Ok(obj)
    }

    /// Records the locality of a version 2 host bridge (hwloc 3 keeps a
    /// `pci_locality` for each host bridge attached to a normal object).
    fn note_host_bridge(&mut self, obj: &Object, parent: Option<ParentInfo>) {
        if self.major >= 3 {
            return;
        }
        let (Some(b), Some(p)) = (obj.bridge(), parent) else {
            return;
        };
        if b.upstream != BridgeUpstream::Host || p.obj_type.kind() != ObjKind::Normal {
            return;
        }
        if let Some(cpuset) = p.cpuset {
            self.derived_localities.push(PciLocality {
                domain: b.domain,
                bus_min: b.secondary_bus,
                bus_max: b.subordinate_bus,
                cpuset: cpuset.clone(),
            });
        }
    }

    // ------------------------------------------------------------ insertion

    fn install_root(
        &mut self,
        topo: &mut Topology,
        root: Parsed,
        refs: &mut Refs,
    ) -> Result<(), XmlError> {
        let Parsed {
            obj, mut children, ..
        } = root;
        let root_id = topo.root();
        // Reserve every gp index of the document first, so that objects
        // without one get fresh indexes that no later object uses.  The
        // next index is hwloc's: it allocates each object it reads, in
        // document order, an index of its own (the root excepted) and then
        // raises its counter past the gp_index the document gives; objects
        // added later (hwloc-annotate's Misc) get the indexes after it.
        // An object without a gp_index keeps the one hwloc allocated it,
        // unless the document gives that index to another object.
        // The root keeps the topology's index when the document gives none.
        let root_gp = match obj.gp_index {
            0 => topo.obj(root_id).gp_index,
            g => g,
        };
        self.seen_gp.insert(root_gp);
        let mut next_gp = root_gp.saturating_add(1).max(1);
        let mut count = 0;
        let mut stack: Vec<&mut Parsed> = children.iter_mut().rev().collect();
        while let Some(p) = stack.pop() {
            let allocated = next_gp;
            next_gp = next_gp
                .saturating_add(1)
                .max(p.obj.gp_index.saturating_add(1));
            if p.obj.gp_index == 0 && !self.seen_gp.contains(&allocated) {
                self.seen_gp.insert(allocated);
                p.obj.gp_index = allocated;
            }
            count += 1;
            stack.extend(p.children.iter_mut().rev());
        }
        if self.v1.next_gp != 0 {
            // hwloc 1.x documents carry no gp index: they were numbered
            // as hwloc allocates (see `v1_convert_tree`).
            next_gp = self.v1.next_gp;
        }
        topo.reserve_gp_index(next_gp - 1);
        topo.reserve_objects(count);
        refs.by_gp.reserve(count + 1);
        {
            let r = topo.root_mut();
            if obj.gp_index != 0 {
                r.gp_index = obj.gp_index;
            }
            if obj.os_index.is_some() || self.v1.machine_made {
                r.os_index = obj.os_index;
            }
            r.name = obj.name;
            r.subtype = obj.subtype;
            r.infos = obj.infos;
            r.userdata = obj.userdata;
            r.cpuset = obj.cpuset;
            r.complete_cpuset = obj.complete_cpuset;
            r.nodeset = obj.nodeset;
            r.complete_nodeset = obj.complete_nodeset;
        }
        let gp = topo.obj(root_id).gp_index;
        refs.by_gp.insert(gp, root_id);
        // Depth first, an object then its children, with an explicit stack
        // (the tree may be as deep as the topology allows).
        let mut stack: Vec<(ObjId, Parsed)> = Vec::new();
        let kids = self.children_in_order(topo, root_id, children);
        stack.extend(kids.into_iter().rev().map(|p| (root_id, p)));
        while let Some((parent, p)) = stack.pop() {
            let (id, children) = self.insert_parsed(topo, parent, p, refs)?;
            let kids = self.children_in_order(topo, id, children);
            stack.extend(kids.into_iter().rev().map(|p| (id, p)));
        }
        Ok(())
    }

    /// The kept objects among `children` of `parent` (children of rejected
    /// objects take their place), in insertion order: document order, but
    /// normal children sorted by CPU set as hwloc does.
    fn children_in_order(
        &mut self,
        topo: &Topology,
        parent: ObjId,
        children: Vec<Parsed>,
    ) -> Vec<Parsed> {
        let mut some_ignored = false;
        let kept = if children.iter().all(|c| c.keep) {
            children
        } else {
            let mut kept = Vec::with_capacity(children.len());
            for c in children {
                flatten(c, &mut kept, &mut some_ignored);
            }
            kept
        };
        // Normal children must be ordered by their first PU: consecutive
        // normal children whose sets are both known must not decrease.
        let mut ordered = true;
        let mut prev: Option<Option<&CpuSet>> = None;
        for p in kept.iter().filter(|p| p.obj.kind() == ObjKind::Normal) {
            let cur = set_of(p);
            if let (Some(Some(a)), Some(b)) = (prev, cur)
                && a.compare_first(b) == std::cmp::Ordering::Greater
            {
                ordered = false;
                break;
            }
            prev = Some(cur);
        }
        if ordered {
            // The common case: document order, no scratch vectors.
            return kept;
        }
        let normal: Vec<usize> = (0..kept.len())
            .filter(|&i| kept[i].obj.kind() == ObjKind::Normal)
            .collect();
        let mut order: Vec<usize> = (0..kept.len()).collect();
        if !ordered {
            if !some_ignored {
                self.push_warning(None, format!(
                    "children of the object with gp_index {} are out of order in the document; reordering them by cpuset",
                    topo.obj(parent).gp_index
                ));
            }
            let mut sorted = normal.clone();
            sorted.sort_by(|&a, &b| match (set_of(&kept[a]), set_of(&kept[b])) {
                (Some(x), Some(y)) => x.compare_first(y),
                _ => std::cmp::Ordering::Equal,
            });
            for (slot, idx) in normal.iter().zip(sorted) {
                order[*slot] = idx;
            }
        }
        let mut slots: Vec<Option<Parsed>> = kept.into_iter().map(Some).collect();
        order
            .into_iter()
            .filter_map(|idx| slots[idx].take())
            .collect()
    }

    /// Inserts one kept object below `parent`; returns its id and its
    /// children, still to insert.  The document was checked while parsed
    /// (types, nesting depth), so the topology refuses nothing here unless
    /// both disagree; the error says which object then.
    fn insert_parsed(
        &mut self,
        topo: &mut Topology,
        parent: ObjId,
        p: Parsed,
        refs: &mut Refs,
    ) -> Result<(ObjId, Vec<Parsed>), XmlError> {
        let Parsed { obj, children, .. } = p;
        let t = obj.obj_type;
        let os = obj.os_index;
        let gp = obj.gp_index;
        let id = topo.insert_by_parent(parent, *obj).map_err(|e| {
            XmlError::new(format!(
                "object with gp_index {gp}: {}",
                clip(&e.to_string())
            ))
        })?;
        refs.by_gp.insert(topo.obj(id).gp_index, id);
        if let (Some(os), ObjType::PU | ObjType::NUMANode) = (os, t) {
            refs.by_os.entry((t, os)).or_insert(id);
        }
        Ok((id, children))
    }

    // ------------------------------------------------------------ small elements

    /// An `<info name= value=>`; `None` when a name or value is missing.
    fn info(&mut self, node: Node) -> Result<Option<Info>, XmlError> {
        let mut name = None;
        let mut value = None;
        for a in node.attributes() {
            match a.name() {
                "name" => name = Some(a.value()),
                "value" => value = Some(a.value()),
                other => {
                    return Err(
                        self.attr_err(&a, format!("unexpected attribute {other} in <info>"))
                    );
                }
            }
        }
        self.no_children(node)?;
        match (name, value) {
            (Some(n), Some(v)) => Ok(Some(Info {
                name: n.into(),
                value: v.into(),
            })),
            _ => {
                self.warn(node, "ignoring <info> without a name or a value");
                Ok(None)
            }
        }
    }

    /// A `<page_type size= count=>`; `None` for zero-sized entries, which
    /// hwloc skips.
    fn page_type(&mut self, node: Node) -> Result<Option<PageType>, XmlError> {
        let mut page = PageType::default();
        for a in node.attributes() {
            match a.name() {
                "size" => page.size = self.num(&a)?,
                "count" => page.count = self.num(&a)?,
                other => {
                    return Err(
                        self.attr_err(&a, format!("unexpected attribute {other} in <page_type>"))
                    );
                }
            }
        }
        self.no_children(node)?;
        Ok((page.size != 0).then_some(page))
    }

    /// A `<userdata>` element, kept raw as hwloc's tools keep it.  The
    /// content must have the declared length (the encoded length for
    /// base64), as hwloc checks; base64 content must also be valid base64.
    fn userdata(&mut self, node: Node) -> Result<UserData, XmlError> {
        let mut name = None;
        let mut length = 0u64;
        let mut base64 = false;
        for a in node.attributes() {
            match a.name() {
                // hwloc reads a missing length as 0.
                "length" => length = self.num::<u64>(&a)?,
                // Any other encoding is plain text for hwloc.
                "encoding" => base64 = a.value() == "base64",
                "name" => name = Some(a.value().to_string()),
                other => {
                    return Err(
                        self.attr_err(&a, format!("unexpected attribute {other} in <userdata>"))
                    );
                }
            }
        }
        if let Some(c) = node.children().find(|c| c.is_element()) {
            return Err(self.err(c, "<userdata> cannot contain elements"));
        }
        let content = node.text().unwrap_or("");
        let expected = if base64 {
            // 4 characters per 3 bytes, the last group padded.
            length.div_ceil(3).checked_mul(4)
        } else {
            Some(length)
        };
        if expected != Some(content.len() as u64) {
            let what = if base64 { "base64 characters" } else { "bytes" };
            return Err(self.err(
                node,
                format!(
                    "<userdata> declares length {length} but its content has {} {what}{}",
                    content.len(),
                    match expected {
                        Some(e) if base64 => format!(" (expected {e})"),
                        _ => String::new(),
                    }
                ),
            ));
        }
        if base64 && let Err(msg) = check_base64(content, length) {
            return Err(self.err(
                node,
                format!("<userdata> with invalid base64 content: {msg}"),
            ));
        }
        Ok(UserData {
            name,
            base64,
            length,
            content: content.to_string(),
        })
    }

    fn no_children(&self, node: Node) -> Result<(), XmlError> {
        if let Some(c) = node.children().find(|c| c.is_element()) {
            return Err(self.err(
                c,
                format!(
                    "<{}> cannot contain <{}>",
                    node.tag_name().name(),
                    c.tag_name().name()
                ),
            ));
        }
        self.check_text_children(node)
    }

    fn support(
        &mut self,
        topo: &mut Topology,
        node: Node,
        seen_before: bool,
    ) -> Result<(), XmlError> {
        if !seen_before {
            topo.support.clear();
        }
        let mut name = None;
        let mut value = 1i64;
        for a in node.attributes() {
            match a.name() {
                "name" => name = Some(a.value()),
                "value" => value = self.num(&a)?,
                other => self.warn(node, format!("ignoring unknown support attribute {other}")),
            }
        }
        self.no_children(node)?;
        let Some(name) = name else {
            self.warn(node, "ignoring <support> without a name");
            return Ok(());
        };
        // hwloc's marker that support was exported is kept: with
        // HWLOC_TOPOLOGY_FLAG_IMPORT_SUPPORT, any <support> means "the
        // support is what the file says" (all else unsupported).  Writers
        // put the marker back themselves and skip this name.
        if value != 0 && value != 1 {
            self.warn(
                node,
                format!(
                    "support {name} has value {value}; it is kept as a plain supported feature"
                ),
            );
        }
        if value != 0 && !topo.support.iter().any(|s| s == name) {
            topo.support.push(name.to_string());
        } else if value == 0 {
            topo.support.retain(|s| s != name);
        }
        Ok(())
    }

    fn cpukind(&mut self, topo: &mut Topology, node: Node) -> Result<(), XmlError> {
        let mut cpuset: Option<CpuSet> = None;
        let mut forced = None;
        for a in node.attributes() {
            match a.name() {
                "cpuset" => cpuset = Some(self.bitmap(&a)?),
                "forced_efficiency" => forced = Some(self.num::<i32>(&a)?),
                other => {
                    return Err(
                        self.attr_err(&a, format!("unexpected attribute {other} in <cpukind>"))
                    );
                }
            }
        }
        let mut infos = Vec::new();
        for c in node.children().filter(|c| c.is_element()) {
            if c.tag_name().name() != "info" {
                return Err(self.err(
                    c,
                    format!("unexpected <{}> inside <cpukind>", c.tag_name().name()),
                ));
            }
            if let Some(i) = self.info(c)? {
                infos.push(i);
            }
        }
        self.check_text_children(node)?;
        let Some(cpuset) = cpuset else {
            return Err(self.err(node, "<cpukind> without a cpuset"));
        };
        // hwloc's "unknown efficiency" value.
        let forced = forced.filter(|&f| f != -1);
        if cpuset.is_empty() {
            self.warn(node, "ignoring <cpukind> with an empty cpuset");
            return Ok(());
        }
        let after = wloc_core::cpukinds::infos_after_register(&topo.cpukinds, &cpuset, &infos);
        if after > MAX_CPUKIND_INFOS {
            return Err(self.err(
                node,
                format!(
                    "this CPU kind would leave the kinds with up to {after} infos once overlapping \
                     kinds are split (at most {MAX_CPUKIND_INFOS})"
                ),
            ));
        }
        register_cpukind(&mut topo.cpukinds, cpuset, forced, infos);
        Ok(())
    }

    fn memtier(&mut self, topo: &mut Topology, node: Node) -> Result<(), XmlError> {
        let mut kinds = None;
        let mut nodeset: Option<NodeSet> = None;
        for a in node.attributes() {
            match a.name() {
                "kinds" => kinds = Some(self.num::<u64>(&a)?),
                "nodeset" => nodeset = Some(self.bitmap(&a)?),
                other => self.warn(node, format!("ignoring unknown memtier attribute {other}")),
            }
        }
        self.no_children(node)?;
        match nodeset {
            Some(nodeset) => topo.memtiers.push(MemTier {
                kinds: kinds.unwrap_or(0),
                nodeset,
            }),
            None => self.warn(node, "ignoring <memtier> without a nodeset"),
        }
        Ok(())
    }

    fn pci_locality(&mut self, topo: &mut Topology, node: Node) -> Result<(), XmlError> {
        let mut domain = None;
        let mut bus_min = None;
        let mut bus_max = None;
        let mut cpuset: Option<CpuSet> = None;
        for a in node.attributes() {
            match a.name() {
                "domain" => domain = Some(self.c_num(&a, u32::MAX.into())? as u32),
                "bus_min" => bus_min = Some(self.c_num(&a, 0xff)? as u8),
                "bus_max" => bus_max = Some(self.c_num(&a, 0xff)? as u8),
                "cpuset" => cpuset = Some(self.bitmap(&a)?),
                other => self.warn(
                    node,
                    format!("ignoring unknown pci_locality attribute {other}"),
                ),
            }
        }
        self.no_children(node)?;
        match (domain, bus_min, bus_max, cpuset) {
            (Some(domain), Some(bus_min), Some(bus_max), Some(cpuset)) => {
                topo.pci_localities.push(PciLocality {
                    domain,
                    bus_min,
                    bus_max,
                    cpuset,
                })
            }
            _ => self.warn(
                node,
                "ignoring <pci_locality> without domain, bus_min, bus_max and cpuset",
            ),
        }
        Ok(())
    }

    // ------------------------------------------------------------ distances

    fn distances(
        &mut self,
        topo: &mut Topology,
        refs: &Refs,
        node: Node,
        hetero: bool,
    ) -> Result<(), XmlError> {
        let tag = node.tag_name().name();
        let mut nbobjs: u64 = 0;
        let mut unique_type = None;
        let mut indexing = hetero;
        let mut os_indexing = false;
        let mut gp_indexing = hetero;
        let mut kind: u64 = 0;
        let mut name = None;
        for a in node.attributes() {
            match a.name() {
                "nbobjs" => nbobjs = self.num(&a)?,
                "type" => {
                    unique_type = Some(ObjType::parse(a.value()).ok_or_else(|| {
                        self.attr_err(
                            &a,
                            format!("unknown object type \"{}\" in <{tag}>", a.value()),
                        )
                    })?)
                }
                "indexing" => {
                    indexing = true;
                    match a.value() {
                        "os" => os_indexing = true,
                        "gp" => gp_indexing = true,
                        _ => {}
                    }
                }
                "kind" => kind = self.num(&a)?,
                "name" => name = Some(a.value().to_string()),
                other => self.warn(node, format!("ignoring unknown {tag} attribute {other}")),
            }
        }
        if nbobjs == 0 || (!hetero && unique_type.is_none()) || !indexing || kind == 0 {
            return Err(self.err(
                node,
                format!("<{tag}> lacks some of its nbobjs, type, indexing and kind attributes"),
            ));
        }
        let n = nbobjs;
        let nn = n
            .checked_mul(n)
            .ok_or_else(|| self.err(node, format!("<{tag}> nbobjs {n} is too large")))?;
        let mut indexes: Vec<(Option<ObjType>, u64)> = Vec::new();
        let mut values: Vec<u64> = Vec::new();
        for c in self.element_children(node)? {
            let ctag = c.tag_name().name();
            let is_index = match ctag {
                "indexes" => true,
                "u64values" => false,
                "info" => {
                    self.info(c)?;
                    continue;
                }
                _ => return Err(self.err(c, format!("unexpected <{ctag}> inside <{tag}>"))),
            };
            let Some(len_attr) = c.attribute_node("length") else {
                return Err(self.err(c, format!("<{ctag}> without a length attribute")));
            };
            let len: u64 = self.num(&len_attr)?;
            if let Some(e) = c.children().find(|e| e.is_element()) {
                return Err(self.err(e, format!("<{ctag}> cannot contain elements")));
            }
            let content: String = c.children().filter_map(|t| t.text()).collect();
            if content.len() as u64 != len {
                return Err(self.err(
                    c,
                    format!(
                        "<{ctag}> content is {} bytes long but its length attribute says {len}",
                        content.len()
                    ),
                ));
            }
            for tok in content.split_ascii_whitespace() {
                if is_index {
                    if indexes.len() as u64 >= n {
                        return Err(self.err(c, format!("<{tag}> has more than {n} indexes")));
                    }
                    let (t, num) = if hetero {
                        let (ts, ns) = tok.split_once(':').ok_or_else(|| {
                            self.err(
                                c,
                                format!(
                                    "invalid index \"{tok}\" in <{tag}> (expected TYPE:GPINDEX)"
                                ),
                            )
                        })?;
                        let t = ObjType::parse(ts).ok_or_else(|| {
                            self.err(
                                c,
                                format!("unknown object type \"{ts}\" in <{tag}> indexes"),
                            )
                        })?;
                        (Some(t), ns)
                    } else {
                        (None, tok)
                    };
                    let v = parse_c_u64(num).ok_or_else(|| {
                        self.err(
                            c,
                            format!("invalid index \"{tok}\" in <{tag}> (expected a number)"),
                        )
                    })?;
                    indexes.push((t, v));
                } else {
                    if values.len() as u64 >= nn {
                        return Err(self.err(c, format!("<{tag}> has more than {nn} values")));
                    }
                    let v = parse_c_u64(tok).ok_or_else(|| {
                        self.err(
                            c,
                            format!("invalid value \"{tok}\" in <{tag}> (expected a number)"),
                        )
                    })?;
                    values.push(v);
                }
            }
        }
        if indexes.len() as u64 != n {
            return Err(self.err(
                node,
                format!("<{tag}> has {} indexes instead of {n}", indexes.len()),
            ));
        }
        if values.len() as u64 != nn {
            return Err(self.err(
                node,
                format!(
                    "<{tag}> has {} values instead of {nn} ({n}x{n})",
                    values.len()
                ),
            ));
        }
        let label = match &name {
            Some(nm) => format!("<{tag}> \"{nm}\""),
            None => format!("<{tag}>"),
        };
        if n < 2 {
            self.warn(node, format!("ignoring {label} with a single object"));
            return Ok(());
        }
        if let Some(t) = unique_type {
            let needs_os = matches!(t, ObjType::PU | ObjType::NUMANode);
            if needs_os && !os_indexing {
                self.warn(
                    node,
                    format!("ignoring {label} between {t} objects without os indexing"),
                );
                return Ok(());
            }
            if !needs_os && !gp_indexing {
                self.warn(
                    node,
                    format!("ignoring {label} between {t} objects without gp indexing"),
                );
                return Ok(());
            }
        }
        let n = n as usize;
        let mut objs = Vec::with_capacity(n);
        let mut missing = Vec::new();
        for &(t, idx) in &indexes {
            let t = t.or(unique_type).unwrap_or(ObjType::Machine);
            let by_os = !hetero && matches!(t, ObjType::PU | ObjType::NUMANode);
            let found = if by_os {
                u32::try_from(idx)
                    .ok()
                    .and_then(|os| refs.by_os.get(&(t, os)).copied())
            } else {
                refs.by_gp_typed(topo, t, idx)
            };
            if found.is_none() {
                missing.push(if by_os {
                    format!("{t} P#{idx}")
                } else {
                    format!("{t} gp_index {idx}")
                });
            }
            objs.push(found);
        }
        if !missing.is_empty() {
            let count = missing.len();
            let mut list = missing
                .iter()
                .take(4)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if count > 4 {
                list.push_str(", ...");
            }
            if n - count < 2 {
                self.warn(
                    node,
                    format!(
                        "ignoring {label}: {count} of its {n} objects are not in the topology ({list})"
                    ),
                );
                return Ok(());
            }
            self.warn(
                node,
                format!(
                    "{label}: dropping {count} of its {n} objects that are not in the topology ({list})"
                ),
            );
        }
        let keep: Vec<usize> = (0..n).filter(|&i| objs[i].is_some()).collect();
        let mut vals = Vec::with_capacity(keep.len() * keep.len());
        for &i in &keep {
            for &j in &keep {
                vals.push(values[i * n + j]);
            }
        }
        let objs: Vec<ObjId> = keep.iter().filter_map(|&i| objs[i]).collect();
        if hetero {
            kind |= dist_kind::HETEROGENEOUS_TYPES;
        }
        match Distances::new(name, kind, objs, vals) {
            Some(d) => topo.distances.push(d),
            None => self.warn(node, format!("ignoring inconsistent {label}")),
        }
        Ok(())
    }

    // ------------------------------------------------------------ memory attributes

    fn memattr(&mut self, topo: &mut Topology, refs: &Refs, node: Node) -> Result<(), XmlError> {
        let mut name = None;
        let mut flags = None;
        for a in node.attributes() {
            match a.name() {
                "name" => name = Some(a.value().to_string()),
                "flags" => flags = Some(self.num::<u64>(&a)?),
                other => {
                    return Err(
                        self.attr_err(&a, format!("unexpected attribute {other} in <memattr>"))
                    );
                }
            }
        }
        // Which attribute the values go to, if any.
        let mut target_attr: Option<usize> = None;
        match (&name, flags) {
            (Some(name), Some(flags)) => {
                let predefined = memattrs::PREDEFINED.iter().find(|(n, _)| n == name);
                if let Some((_, pflags)) = predefined {
                    if *pflags != flags {
                        self.warn(
                            node,
                            format!("ignoring memory attribute {name} with flags {flags} (hwloc defines it with flags {pflags})"),
                        );
                    } else if matches!(name.as_str(), "Capacity" | "Locality") {
                        self.warn(
                            node,
                            format!("ignoring values of the computed memory attribute {name}"),
                        );
                    }
                }
                let virtual_attr = matches!(name.as_str(), "Capacity" | "Locality");
                let flags_ok = predefined.is_none_or(|(_, f)| *f == flags);
                if flags_ok && !virtual_attr {
                    match topo.memattrs.iter().position(|m| m.name == *name) {
                        Some(i) if topo.memattrs[i].flags == flags => target_attr = Some(i),
                        Some(_) => self.warn(
                            node,
                            format!(
                                "ignoring memory attribute {name} declared again with other flags"
                            ),
                        ),
                        None => {
                            topo.memattrs.push(MemAttr::new(name, flags));
                            target_attr = Some(topo.memattrs.len() - 1);
                        }
                    }
                }
            }
            _ => self.warn(
                node,
                "ignoring the values of a <memattr> without a name or flags",
            ),
        }
        let need_initiator = flags.unwrap_or(0) & memattrs::flags::NEED_INITIATOR != 0;
        for c in self.element_children(node)? {
            match c.tag_name().name() {
                "memattr_value" => {
                    let v = self.memattr_value(topo, refs, c, need_initiator)?;
                    if let (Some(i), Some((target, initiator, value))) = (target_attr, v) {
                        topo.memattrs[i].set(target, initiator, value);
                    }
                }
                "info" => {
                    self.info(c)?;
                }
                other => return Err(self.err(c, format!("unexpected <{other}> inside <memattr>"))),
            }
        }
        Ok(())
    }

    #[allow(clippy::type_complexity)]
    fn memattr_value(
        &mut self,
        topo: &Topology,
        refs: &Refs,
        node: Node,
        need_initiator: bool,
    ) -> Result<Option<(ObjId, Option<Initiator>, u64)>, XmlError> {
        let mut target_gp = None;
        let mut target_type = None;
        let mut value = None;
        let mut ini_cpuset: Option<CpuSet> = None;
        let mut ini_gp = None;
        let mut ini_type = None;
        for a in node.attributes() {
            match a.name() {
                "target_obj_gp_index" => target_gp = Some(self.num::<u64>(&a)?),
                "target_obj_type" => target_type = Some(self.obj_type_attr(&a)?),
                "value" => value = Some(self.num::<u64>(&a)?),
                "initiator_cpuset" => ini_cpuset = Some(self.bitmap(&a)?),
                "initiator_obj_gp_index" => ini_gp = Some(self.num::<u64>(&a)?),
                "initiator_obj_type" => ini_type = Some(self.obj_type_attr(&a)?),
                other => {
                    return Err(self.attr_err(
                        &a,
                        format!("unexpected attribute {other} in <memattr_value>"),
                    ));
                }
            }
        }
        self.no_children(node)?;
        let Some(target_type) = target_type else {
            return Err(self.err(node, "<memattr_value> without a target_obj_type"));
        };
        let (Some(target_gp), Some(value)) = (target_gp, value) else {
            return Err(self.err(
                node,
                "<memattr_value> without a value or a target_obj_gp_index",
            ));
        };
        let initiator = if need_initiator {
            if let Some(c) = ini_cpuset {
                Some(Initiator::CpuSet(c))
            } else if let (Some(gp), Some(t)) = (ini_gp, ini_type) {
                match refs.by_gp_typed(topo, t, gp) {
                    Some(id) => Some(Initiator::Object(id)),
                    None => {
                        self.warn(
                            node,
                            format!("ignoring memory attribute value whose initiator {t} with gp_index {gp} is not in the topology"),
                        );
                        return Ok(None);
                    }
                }
            } else {
                return Err(self.err(node, "<memattr_value> without initiator attributes"));
            }
        } else {
            None
        };
        match refs.by_gp_typed(topo, target_type, target_gp) {
            Some(target) => Ok(Some((target, initiator, value))),
            None => {
                self.warn(
                    node,
                    format!("ignoring memory attribute value whose target {target_type} with gp_index {target_gp} is not in the topology"),
                );
                Ok(None)
            }
        }
    }

    // ------------------------------------------------------------ values

    fn num<T: std::str::FromStr>(&self, a: &Attribute) -> Result<T, XmlError> {
        self.num_str(a, a.value())
    }

    fn num_str<T: std::str::FromStr>(&self, a: &Attribute, s: &str) -> Result<T, XmlError> {
        let t = s.trim();
        let valid = !t.is_empty()
            && t.trim_start_matches('-')
                .bytes()
                .all(|b| b.is_ascii_digit());
        valid.then(|| t.parse::<T>().ok()).flatten().ok_or_else(|| {
            self.attr_err(
                a,
                format!(
                    "invalid {} \"{}\" (expected {})",
                    a.name(),
                    a.value(),
                    number_kind::<T>()
                ),
            )
        })
    }

    /// A number in C notation (decimal, `0x` hexadecimal or `0` octal).
    fn c_num(&self, a: &Attribute, max: u64) -> Result<u64, XmlError> {
        parse_c_u64(a.value().trim())
            .filter(|&v| v <= max)
            .ok_or_else(|| {
                self.attr_err(
                    a,
                    format!(
                        "invalid {} \"{}\" (expected a number up to {max:#x})",
                        a.name(),
                        a.value()
                    ),
                )
            })
    }

    fn bitmap<K: wloc_core::bitmap::SetKind>(
        &self,
        a: &Attribute,
    ) -> Result<wloc_core::bitmap::Set<K>, XmlError> {
        let s = wloc_core::bitmap::Set::<K>::parse(a.value()).map_err(|e| {
            self.attr_err(
                a,
                format!("invalid {} \"{}\": {e}", a.name(), short(a.value())),
            )
        })?;
        // The highest index the set spells out (an infinite set's last
        // cleared one): as PU and NUMA node indexes, below the cap.
        let top = if s.is_infinite() {
            s.last_unset()
        } else {
            s.last()
        };
        if let Some(top) = top.filter(|&t| t >= MAX_SET_BITS) {
            return Err(self.attr_err(
                a,
                format!(
                    "{} \"{}\" names index {top}, at or above the cap of {MAX_SET_BITS} on PU and NUMA node indexes",
                    a.name(),
                    short(a.value())
                ),
            ));
        }
        Ok(s)
    }

    fn obj_type_attr(&self, a: &Attribute) -> Result<ObjType, XmlError> {
        ObjType::parse(a.value()).ok_or_else(|| {
            self.attr_err(
                a,
                format!("unknown object type \"{}\" in {}", a.value(), a.name()),
            )
        })
    }
}

/// Object attributes collected before the object is built.
/// Checks that `s` is standard base64 (`A-Z a-z 0-9 + /`, `=` padding
/// only at the end) that decodes to `length` bytes.  Its length is
/// already known to be `4 * ceil(length / 3)`.
fn check_base64(s: &str, length: u64) -> Result<(), String> {
    let pad = s.bytes().rev().take_while(|&b| b == b'=').count();
    let body = &s[..s.len() - pad];
    if let Some((i, c)) = body
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '+' || c == '/'))
    {
        return Err(format!(
            "character {c:?} at offset {i} is not a base64 character"
        ));
    }
    let expected_pad = ((3 - length % 3) % 3) as usize;
    if pad != expected_pad {
        return Err(format!(
            "{pad} padding characters where a length of {length} needs {expected_pad}"
        ));
    }
    Ok(())
}

struct ObjBuilder {
    obj_type: ObjType,
    os_index: Option<u32>,
    gp_index: u64,
    name: Option<String>,
    subtype: Option<String>,
    cpuset: Option<CpuSet>,
    complete_cpuset: Option<CpuSet>,
    nodeset: Option<NodeSet>,
    complete_nodeset: Option<NodeSet>,
    infos: Vec<Info>,
    cache: CacheAttr,
    local_memory: u64,
    page_types: Vec<PageType>,
    group: GroupAttr,
    pci: PciAttr,
    bridge_pci_upstream: bool,
    bridge_domain: u32,
    bridge_secondary: u8,
    bridge_subordinate: u8,
    osdev_raw: Option<u64>,
    userdata: Vec<UserData>,
}

impl ObjBuilder {
    fn new(obj_type: ObjType) -> Self {
        ObjBuilder {
            userdata: Vec::new(),
            obj_type,
            os_index: None,
            gp_index: 0,
            name: None,
            subtype: None,
            cpuset: None,
            complete_cpuset: None,
            nodeset: None,
            complete_nodeset: None,
            infos: Vec::new(),
            // Like hwloc, attributes start zeroed: a cache without depth
            // and cache_type attributes does not match its type.
            cache: CacheAttr::default(),
            local_memory: 0,
            page_types: Vec::new(),
            group: GroupAttr::default(),
            pci: PciAttr::default(),
            bridge_pci_upstream: false,
            bridge_domain: 0,
            bridge_secondary: 0,
            bridge_subordinate: 0,
            osdev_raw: None,
        }
    }
}

/// Element nesting accepted before parsing: the objects, plus `<topology>`
/// and the elements that objects contain.
const MAX_ELEMENT_DEPTH: usize = MAX_DEPTH + 3;

/// At most this many of these topology-wide elements, as for what a
/// discovery component returns: registering one costs a pass over those
/// already read (CPU kinds are split and merged, support names and
/// memory attributes looked up by name).
const TOPOLOGY_ELEMENT_CAPS: [(&str, usize); 3] =
    [("cpukind", 256), ("memattr", 4096), ("support", 4096)];

/// Infos the CPU kinds may hold once overlapping kinds are split (each cut
/// kind copies the infos of the kind it was cut from), as for a record.
const MAX_CPUKIND_INFOS: usize = 1 << 18;

/// Warnings kept with their position; the rest are only counted.
const MAX_WARNINGS: usize = 100;

/// Attributes accepted on one element before parsing: hwloc's elements
/// have fewer than 20, and the parser's duplicate check compares every
/// pair of an element's attributes.
pub(super) const MAX_ATTRIBUTES: usize = 64;

/// Checks what the XML parser cannot guard against before it runs: it
/// recurses once per nested element, so nesting is bounded here, and DTD
/// internal subsets (whose entities could expand to more elements) are
/// refused, as hwloc's own parser does not support them either.
pub(crate) fn precheck(text: &str) -> Result<(), XmlError> {
    let b = text.as_bytes();
    let at = |i: usize, msg: String| {
        let line = 1 + b[..i].iter().filter(|&&c| c == b'\n').count();
        let start = b[..i]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1);
        let col = 1 + text[start..i].chars().count();
        XmlError::at(msg, line as u32, col as u32)
    };
    let find = |from: usize, pat: &[u8]| -> usize {
        b[from.min(b.len())..]
            .windows(pat.len())
            .position(|w| w == pat)
            .map_or(b.len(), |p| from + p + pat.len())
    };
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'<' {
            i += 1;
            continue;
        }
        let rest = &b[i..];
        if rest.starts_with(b"<!--") {
            i = find(i + 4, b"-->");
        } else if rest.starts_with(b"<![CDATA[") {
            i = find(i + 9, b"]]>");
        } else if rest.starts_with(b"<?") {
            i = find(i + 2, b"?>");
        } else if rest.starts_with(b"<!") {
            let end = find(i + 2, b">");
            if b[i..end].contains(&b'[') {
                return Err(at(
                    i,
                    "DTD internal subsets are not supported in hwloc XML documents".into(),
                ));
            }
            i = end;
        } else if rest.starts_with(b"</") {
            depth = depth.saturating_sub(1);
            i = find(i + 2, b">");
        } else {
            // A start tag: find its end, skipping quoted attribute values.
            let start = i;
            let mut j = i + 1;
            let mut quote = None;
            // Each attribute has one `=` outside quotes.
            let mut attrs = 0usize;
            while j < b.len() {
                match (quote, b[j]) {
                    (None, b'"' | b'\'') => quote = Some(b[j]),
                    (Some(q), c) if c == q => quote = None,
                    (None, b'>') => break,
                    (None, b'=') => attrs += 1,
                    _ => {}
                }
                j += 1;
            }
            if attrs > MAX_ATTRIBUTES {
                return Err(at(
                    start,
                    format!("an element has more than {MAX_ATTRIBUTES} attributes"),
                ));
            }
            if j < b.len() && b[j - 1] != b'/' {
                depth += 1;
                if depth > MAX_ELEMENT_DEPTH {
                    return Err(at(
                        start,
                        format!("elements are nested more than {MAX_ELEMENT_DEPTH} levels deep"),
                    ));
                }
            }
            i = j + 1;
        }
    }
    Ok(())
}

/// The set that orders normal siblings.
fn set_of(p: &Parsed) -> Option<&CpuSet> {
    p.obj.complete_cpuset.as_ref().or(p.obj.cpuset.as_ref())
}

/// Moves a parsed object, or the kept objects below it when the filters
/// reject it, to `out`.
fn flatten(p: Parsed, out: &mut Vec<Parsed>, some_ignored: &mut bool) {
    if p.keep {
        out.push(p);
    } else {
        *some_ignored = true;
        for c in p.children {
            flatten(c, out, some_ignored);
        }
    }
}

/// The hwloc 3 meaning of a version 2 `osdev_type` code.
fn osdev_types_from_v2(code: u64, obj: &Object) -> OsDevTypes {
    let sub = obj.subtype.as_deref();
    let compute =
        |s: Option<&str>| matches!(s, Some("CUDA" | "NVML" | "RSMI" | "LevelZero" | "OpenCL"));
    OsDevTypes(match code {
        0 => {
            let dax = obj.name.as_deref().is_some_and(|n| n.starts_with("dax"));
            let cxl = sub == Some("CXLMem");
            if dax {
                // Persistent-memory DAX devices are storage too.
                let nvm = obj.info("DAXType") == Some("NVM");
                OsDevTypes::MEMORY | if nvm { OsDevTypes::STORAGE } else { 0 }
            } else if cxl {
                let pmem = obj.info("CXLPMEMSize").is_some();
                OsDevTypes::MEMORY | if pmem { OsDevTypes::STORAGE } else { 0 }
            } else {
                OsDevTypes::STORAGE
            }
        }
        1 => OsDevTypes::GPU | if compute(sub) { OsDevTypes::COPROC } else { 0 },
        2 => OsDevTypes::NETWORK,
        3 => OsDevTypes::NETWORK | OsDevTypes::OPENFABRICS,
        4 => OsDevTypes::DMA,
        5 => {
            let gpu = matches!(sub, Some("CUDA" | "NVML" | "RSMI" | "LevelZero"))
                || (sub == Some("OpenCL")
                    && obj
                        .info("OpenCLDeviceType")
                        .is_some_and(|t| t.contains("GPU")));
            OsDevTypes::COPROC | if gpu { OsDevTypes::GPU } else { 0 }
        }
        _ => 0,
    })
}

/// Adds a CPU kind the way hwloc registers them: PUs already in a kind get
/// the new infos and efficiency (kinds are split when needed), the others
/// form a new kind.
fn register_cpukind(
    kinds: &mut Vec<CpuKind>,
    cpuset: CpuSet,
    forced: Option<i32>,
    infos: Vec<Info>,
) {
    let mut rest = cpuset.clone();
    let mut added = Vec::new();
    for k in kinds.iter_mut() {
        if !k.cpuset.intersects(&cpuset) {
            continue;
        }
        rest = rest.and_not(&k.cpuset);
        let inter = &k.cpuset & &cpuset;
        if inter != k.cpuset {
            // Split: the part outside the new set keeps the old description.
            let mut outside = k.clone();
            outside.cpuset = k.cpuset.and_not(&cpuset);
            added.push(outside);
            k.cpuset = inter;
        }
        merge_kind(k, forced, &infos);
    }
    kinds.extend(added);
    if !rest.is_empty() {
        kinds.push(CpuKind::new(rest, forced, infos));
    }
}

fn merge_kind(k: &mut CpuKind, forced: Option<i32>, infos: &[Info]) {
    if forced.is_some() {
        k.forced_efficiency = forced;
    }
    // By name, through an index: a kind may be given thousands of infos.
    let mut at: HashMap<String, usize> = HashMap::with_capacity(k.infos.len());
    for (n, x) in k.infos.iter().enumerate() {
        at.entry(x.name.clone()).or_insert(n);
    }
    for i in infos {
        match at.get(&i.name) {
            Some(&n) => k.infos[n].value.clone_from(&i.value),
            None => {
                at.insert(i.name.clone(), k.infos.len());
                k.infos.push(i.clone());
            }
        }
    }
}

/// Parses an unsigned number as C's `strtoull(s, _, 0)` reads a whole
/// token: `0x` hexadecimal, leading-`0` octal, or decimal.
fn parse_c_u64(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        if h.is_empty() || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u64::from_str_radix(h, 16).ok()
    } else if s.len() > 1 && s.starts_with('0') {
        if !s.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
            return None;
        }
        u64::from_str_radix(&s[1..], 8).ok()
    } else {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    }
}

/// Matches `s` against a `scanf`-like pattern where `%x` is a hexadecimal
/// number and `%u` a decimal one; everything else must match literally.
/// Returns the numbers.
fn scan(s: &str, pattern: &str) -> Option<Vec<u64>> {
    let s = s.trim().as_bytes();
    let p = pattern.as_bytes();
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while j < p.len() {
        if p[j] == b'%' && j + 1 < p.len() {
            let hex = p[j + 1] == b'x';
            let start = i;
            while i < s.len()
                && (if hex {
                    s[i].is_ascii_hexdigit()
                } else {
                    s[i].is_ascii_digit()
                })
            {
                i += 1;
            }
            if i == start || i - start > 16 {
                return None;
            }
            let txt = std::str::from_utf8(&s[start..i]).ok()?;
            out.push(u64::from_str_radix(txt, if hex { 16 } else { 10 }).ok()?);
            j += 2;
        } else {
            if i >= s.len() || s[i] != p[j] {
                return None;
            }
            i += 1;
            j += 1;
        }
    }
    (i == s.len()).then_some(out)
}

fn number_kind<T>() -> &'static str {
    let n = std::any::type_name::<T>();
    match n {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a non-negative integer",
        _ => "an integer",
    }
}

/// A prefix of a possibly huge attribute value, for messages.
/// Bytes kept of a message from the core quoting sets or values, which a
/// document can make as long as a 2^20-bit set.
const MESSAGE_MAX: usize = 200;

/// `s` cut to [`MESSAGE_MAX`] bytes (at a character boundary), marked `...`.
fn clip(s: &str) -> String {
    if s.len() <= MESSAGE_MAX {
        return s.to_string();
    }
    let mut end = MESSAGE_MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

fn short(s: &str) -> String {
    if s.len() <= 64 {
        s.to_string()
    } else {
        let mut end = 64;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &s[..end])
    }
}

#[cfg(test)]
mod limit_tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A machine with one NUMA node and one PU, the PU's and the NUMA
    /// node's os_index and the machine's cpuset given.
    fn doc(pu: &str, node: &str, cpuset: &str) -> String {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="{cpuset}" complete_cpuset="{cpuset}" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="1">
    <object type="NUMANode" os_index="{node}" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="4" local_memory="1000"/>
    <object type="PU" os_index="{pu}" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="2"/>
  </object>
</topology>
"#
        )
    }

    /// Both parsers refuse `text` quickly with a short message holding `want`.
    fn refused(text: &str, want: &str) {
        for reference in [false, true] {
            let start = Instant::now();
            let r = if reference {
                import_reference(text, Topology::new())
            } else {
                import(text, Topology::new())
            };
            let e = r.map(|_| ()).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
            assert!(e.len() < 400, "{} bytes: {e}", e.len());
            assert!(
                start.elapsed() < Duration::from_secs(1),
                "{:?}",
                start.elapsed()
            );
        }
    }

    #[test]
    fn the_document_reads() {
        import(&doc("0", "0", "0x00000001"), Topology::new()).unwrap();
    }

    #[test]
    fn pu_and_numa_indexes_at_the_cap_are_refused_before_any_set_is_built() {
        refused(
            &doc("4294967295", "0", "0x00000001"),
            "PU os_index 4294967295 is at or above the cap of 1048576",
        );
        refused(
            &doc("1048576", "0", "0x00000001"),
            "PU os_index 1048576 is at or above",
        );
        refused(
            &doc("0", "4000000000", "0x00000001"),
            "NUMANode os_index 4000000000 is at or above",
        );
    }

    #[test]
    fn sets_naming_an_index_at_the_cap_are_refused_with_a_short_message() {
        // Bit 2^20: one word followed by 2^15 zero words.
        let set = format!("0x00000001{}", ",0x00000000".repeat(1 << 15));
        refused(
            &doc("0", "0", &set),
            "names index 1048576, at or above the cap",
        );
        let infinite = format!("0xf...f,0xfffffffe{}", ",0xffffffff".repeat(1 << 15));
        refused(
            &doc("0", "0", &infinite),
            "names index 1048576, at or above the cap",
        );
    }

    #[test]
    fn elements_with_too_many_attributes_are_refused_before_parsing() {
        let attrs: String = (0..20_000).map(|i| format!(" a{i}=\"{i}\"")).collect();
        let text = doc("0", "0", "0x00000001").replace(
            r#"<object type="PU""#,
            &format!(r#"<object type="PU"{attrs}"#),
        );
        refused(&text, "an element has more than 64 attributes");
    }

    #[test]
    fn messages_from_the_core_are_clipped() {
        let long = "é".repeat(500);
        let c = clip(&long);
        assert!(c.len() <= MESSAGE_MAX + 3 && c.ends_with("..."), "{c}");
        assert_eq!(clip("short"), "short");
    }
}
