//! hwloc topology diffs: what `hwloc-diff` computes, writes and
//! `hwloc-patch` applies.
//!
//! hwloc's diff format expresses only three changes between two
//! topologies of the same structure, each located by the depth and logical
//! index of the object in the old topology:
//!
//! - the local memory size of a NUMA node (`obj_attr_type="0"`),
//! - the name of an object (`obj_attr_type="1"`),
//! - the value of an info (`obj_attr_type="2"`, with the info's name).
//!
//! Any other difference (an object added, removed or moved, another type,
//! OS index, set or type-specific attribute, infos added, removed or
//! renamed, distances, memory attributes, CPU kinds...) makes the diff
//! "too complex": [`compute`] then returns where it found them, and no
//! diff document should be written (hwloc-diff writes none and exits 1).
//! As hwloc, NUMA page types are not compared.
//!
//! Infos are compared as a version 2 document shows them: the topology
//! infos of the wloc model (`Backend`, `OSName`, `HostName`...) are infos of
//! the root object, after its own, so that diffs between hwloc 2 documents
//! are those hwloc 2.9 computes, byte for byte ([`to_xml`]).
//!
//! [`parse`] reads the documents hwloc writes (`<topologydiff
//! refname="...">` with `<diff>` children) and [`apply`] applies them, in
//! either direction, all or nothing.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use roxmltree::{Document, Node, ParsingOptions};
use wloc_core::Topology;
use wloc_core::object::{Depth, Info, ObjAttr, ObjId};

use crate::XmlError;
use crate::export::Writer;
use crate::hwloc2::v2_infos;

/// hwloc's `type` of an object attribute change.
const TYPE_OBJ_ATTR: i64 = 0;
/// hwloc's `type` of a too-complex marker.
const TYPE_TOO_COMPLEX: i64 = 1;

/// What changes in one object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttrChange {
    /// The local memory of a NUMA node (`index` is always 0 in hwloc).
    Size {
        /// Which memory size (hwloc's `obj_attr_index`; always 0).
        index: u64,
        /// The size in bytes in the old topology.
        old: u64,
        /// The size in bytes in the new topology.
        new: u64,
    },
    /// The object's name.
    Name {
        /// The name in the old topology.
        old: String,
        /// The name in the new topology.
        new: String,
    },
    /// The value of the info `name`.
    Info {
        /// The info's name, which is the same in both topologies.
        name: String,
        /// The value in the old topology.
        old: String,
        /// The value in the new topology.
        new: String,
    },
}

/// One change ("hunk") of a diff: an attribute of the object at hwloc
/// depth `depth` (negative for special levels: -3 NUMA nodes, -6 OS
/// devices...) and logical index `index`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// hwloc depth of the object in the old topology (negative for the
    /// special levels).
    pub depth: i32,
    /// Logical index of the object within its level.
    pub index: u32,
    /// What changes in that object.
    pub attr: AttrChange,
}

impl Change {
    /// The same change, from new to old.
    pub fn reversed(&self) -> Change {
        let attr = match &self.attr {
            AttrChange::Size { index, old, new } => AttrChange::Size {
                index: *index,
                old: *new,
                new: *old,
            },
            AttrChange::Name { old, new } => AttrChange::Name {
                old: new.clone(),
                new: old.clone(),
            },
            AttrChange::Info { name, old, new } => AttrChange::Info {
                name: name.clone(),
                old: new.clone(),
                new: old.clone(),
            },
        };
        Change {
            depth: self.depth,
            index: self.index,
            attr,
        }
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = format!("object at depth {} index {}", self.depth, self.index);
        match &self.attr {
            AttrChange::Size { old, new, .. } => {
                write!(f, "local memory of the {at}: {old} -> {new}")
            }
            AttrChange::Name { old, new } => write!(f, "name of the {at}: '{old}' -> '{new}'"),
            AttrChange::Info { name, old, new } => {
                write!(f, "info {name} of the {at}: '{old}' -> '{new}'")
            }
        }
    }
}

/// A difference hwloc's format cannot express, at the object (of the old
/// topology) where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooComplex {
    /// hwloc depth of the object in the old topology (negative for the
    /// special levels).
    pub depth: i32,
    /// Logical index of the object within its level.
    pub index: u32,
    /// What differs, naming the object.
    pub reason: String,
}

/// The result of [`compute`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Computed {
    /// The changes hwloc's format expresses, in hwloc's order.
    pub changes: Vec<Change>,
    /// The differences it cannot express; when not empty, the diff is too
    /// complex and must not be written.
    pub too_complex: Vec<TooComplex>,
}

/// A diff read from a document.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopologyDiff {
    /// The `refname` attribute: the name of the reference topology.
    pub refname: Option<String>,
    /// The changes, in the document's order.
    pub changes: Vec<Change>,
}

/// Why [`apply`] refused a diff: the first change that does not apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApplyError {
    /// The change's position in the diff, from 1.
    pub hunk: usize,
    /// The change, in the direction it was applied.
    pub change: Change,
    /// Why it does not apply.
    pub reason: String,
}

impl fmt::Display for ApplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "change #{} ({}) does not apply: {}",
            self.hunk, self.change, self.reason
        )
    }
}

impl core::error::Error for ApplyError {}

// ------------------------------------------------------------------ compute

fn depth_code(topo: &Topology, id: ObjId) -> i32 {
    topo.obj(id).depth().to_i32()
}

/// `Core L#3 (depth 4)`.
fn label(topo: &Topology, id: ObjId) -> String {
    let o = topo.obj(id);
    format!(
        "{} L#{} (depth {})",
        o.obj_type.xml_name(),
        o.logical_index(),
        depth_code(topo, id)
    )
}

/// An object of one topology named so that it can be found in another.
fn key(topo: &Topology, id: ObjId) -> (i32, u32) {
    (depth_code(topo, id), topo.obj(id).logical_index())
}

struct Differ<'a> {
    old: &'a Topology,
    new: &'a Topology,
    out: Computed,
}

impl Differ<'_> {
    fn too_complex(&mut self, id: ObjId, reason: String) {
        let (depth, index) = key(self.old, id);
        self.out.too_complex.push(TooComplex {
            depth,
            index,
            reason: format!("{}: {reason}", label(self.old, id)),
        });
    }

    fn change(&mut self, id: ObjId, attr: AttrChange) {
        let (depth, index) = key(self.old, id);
        self.out.changes.push(Change { depth, index, attr });
    }

    /// hwloc's `hwloc_diff_trees`: the object, then its normal, memory,
    /// I/O and Misc children; a subtree that differs in structure is one
    /// too-complex entry, and the walk goes on with its siblings.
    fn tree(&mut self, a: ObjId, b: ObjId) {
        if let Err(reason) = self.object(a, b) {
            self.too_complex(a, reason);
        }
    }

    fn object(&mut self, a: ObjId, b: ObjId) -> Result<(), String> {
        let (o1, o2) = (self.old.obj(a), self.new.obj(b));
        if o1.depth() != o2.depth() {
            return Err(format!("depth {} in NEW", o2.depth().to_i32()));
        }
        if o1.obj_type != o2.obj_type {
            return Err(format!("type {} in NEW", o2.obj_type.xml_name()));
        }
        if o1.subtype != o2.subtype {
            return Err(format!(
                "subtype {:?} in OLD, {:?} in NEW",
                o1.subtype, o2.subtype
            ));
        }
        if o1.os_index != o2.os_index {
            return Err(format!(
                "OS index {:?} in OLD, {:?} in NEW",
                o1.os_index, o2.os_index
            ));
        }
        if o1.cpuset != o2.cpuset {
            return Err("cpuset differs".into());
        }
        if o1.complete_cpuset != o2.complete_cpuset {
            return Err("complete cpuset differs".into());
        }
        if o1.nodeset != o2.nodeset {
            return Err("nodeset differs".into());
        }
        if o1.complete_nodeset != o2.complete_nodeset {
            return Err("complete nodeset differs".into());
        }
        match (&o1.name, &o2.name) {
            (Some(n1), Some(n2)) if n1 != n2 => self.change(
                a,
                AttrChange::Name {
                    old: n1.clone(),
                    new: n2.clone(),
                },
            ),
            // As hwloc-diff: a missing name is the empty string (which
            // hwloc's diff format writes for it and reads back as no name).
            (Some(n1), None) if !n1.is_empty() => self.change(
                a,
                AttrChange::Name {
                    old: n1.clone(),
                    new: String::new(),
                },
            ),
            (None, Some(n2)) if !n2.is_empty() => self.change(
                a,
                AttrChange::Name {
                    old: String::new(),
                    new: n2.clone(),
                },
            ),
            _ => {}
        }
        match (&o1.attr, &o2.attr) {
            // As hwloc, page types are not compared.
            (ObjAttr::Numa(m1), ObjAttr::Numa(m2)) if m1.local_memory != m2.local_memory => {
                let (old, new) = (m1.local_memory, m2.local_memory);
                self.change(a, AttrChange::Size { index: 0, old, new });
            }
            (ObjAttr::Numa(_), ObjAttr::Numa(_)) => {}
            (x, y) if x != y => return Err("type-specific attributes differ".into()),
            _ => {}
        }
        let i1 = v2_infos(self.old, a);
        let i2 = v2_infos(self.new, b);
        if i1.len() != i2.len() {
            return Err(format!("{} infos in OLD, {} in NEW", i1.len(), i2.len()));
        }
        for (x, y) in i1.iter().zip(&i2) {
            if x.name != y.name {
                return Err(format!("info {} in OLD where NEW has {}", x.name, y.name));
            }
            if x.value != y.value {
                self.change(
                    a,
                    AttrChange::Info {
                        name: x.name.clone(),
                        old: x.value.clone(),
                        new: y.value.clone(),
                    },
                );
            }
        }
        type Children = fn(&wloc_core::Object) -> &[ObjId];
        let lists: [(&str, Children); 4] = [
            ("normal", |o| o.children()),
            ("memory", |o| o.memory_children()),
            ("I/O", |o| o.io_children()),
            ("Misc", |o| o.misc_children()),
        ];
        for (what, list) in lists {
            let c1 = list(self.old.obj(a)).to_vec();
            let c2 = list(self.new.obj(b)).to_vec();
            for (&x, &y) in c1.iter().zip(&c2) {
                self.tree(x, y);
            }
            if c1.len() != c2.len() {
                return Err(format!(
                    "{} {what} children in OLD, {} in NEW",
                    c1.len(),
                    c2.len()
                ));
            }
        }
        Ok(())
    }

    /// What hwloc compares after the tree, when the tree is not too
    /// complex; and what wloc's model has and hwloc 2 does not (memory
    /// tiers, PCI localities).
    fn topology_wide(&self) -> Result<(), String> {
        let (t1, t2) = (self.old, self.new);
        if t1.allowed_cpuset != t2.allowed_cpuset {
            return Err("allowed cpuset differs".into());
        }
        if t1.allowed_nodeset != t2.allowed_nodeset {
            return Err("allowed nodeset differs".into());
        }
        if t1.distances.len() != t2.distances.len() {
            return Err(format!(
                "{} distance matrices in OLD, {} in NEW",
                t1.distances.len(),
                t2.distances.len()
            ));
        }
        // hwloc does not diff matrices between objects of several types
        // ("too lazy to support this case", hwloc 2.9's diff.c), even
        // identical ones.
        let mixed = |t: &Topology, objs: &[ObjId]| {
            objs.windows(2)
                .any(|w| t.obj(w[0]).obj_type != t.obj(w[1]).obj_type)
        };
        for (n, (d1, d2)) in t1.distances.iter().zip(&t2.distances).enumerate() {
            if mixed(t1, &d1.objs) || mixed(t2, &d2.objs) {
                return Err(format!(
                    "distance matrix #{} is between objects of several types",
                    n + 1
                ));
            }
            let objs1: Vec<_> = d1.objs.iter().map(|&o| key(t1, o)).collect();
            let objs2: Vec<_> = d2.objs.iter().map(|&o| key(t2, o)).collect();
            if d1.name != d2.name || d1.kind != d2.kind || d1.values != d2.values || objs1 != objs2
            {
                return Err(format!("distance matrix #{} differs", n + 1));
            }
        }
        if t1.memattrs.len() != t2.memattrs.len() {
            return Err("memory attributes differ".into());
        }
        for (m1, m2) in t1.memattrs.iter().zip(&t2.memattrs) {
            let same = m1.name == m2.name
                && m1.flags == m2.flags
                && m1.values.len() == m2.values.len()
                && m1.values.iter().zip(&m2.values).all(|(v1, v2)| {
                    use wloc_core::memattrs::Initiator;
                    let init = match (&v1.initiator, &v2.initiator) {
                        (None, None) => true,
                        (Some(Initiator::CpuSet(s1)), Some(Initiator::CpuSet(s2))) => s1 == s2,
                        (Some(Initiator::Object(o1)), Some(Initiator::Object(o2))) => {
                            key(t1, *o1) == key(t2, *o2)
                        }
                        _ => false,
                    };
                    init && v1.value == v2.value && key(t1, v1.target) == key(t2, v2.target)
                });
            if !same {
                return Err(format!("memory attribute {} differs", m1.name));
            }
        }
        if t1.cpukinds != t2.cpukinds {
            return Err("CPU kinds differ".into());
        }
        if t1.memtiers != t2.memtiers {
            return Err("memory tiers differ".into());
        }
        if t1.pci_localities != t2.pci_localities {
            return Err("PCI bus localities differ".into());
        }
        Ok(())
    }
}

/// The diff from `old` to `new` (both finished), as hwloc 2.9's
/// `hwloc_topology_diff_build` computes it.
pub fn compute(old: &Topology, new: &Topology) -> Computed {
    let mut d = Differ {
        old,
        new,
        out: Computed::default(),
    };
    d.tree(old.root(), new.root());
    if d.out.too_complex.is_empty()
        && let Err(reason) = d.topology_wide()
    {
        d.too_complex(old.root(), reason);
    }
    d.out
}

// ------------------------------------------------------------------ write

/// The diff document hwloc writes for these changes (`hwloc-diff`'s
/// output), with `refname` naming the reference topology.
pub fn to_xml(changes: &[Change], refname: &str) -> String {
    let mut w = Writer::new();
    w.out
        .push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    w.out
        .push_str("<!DOCTYPE topologydiff SYSTEM \"hwloc2-diff.dtd\">\n");
    w.open(0, "topologydiff");
    w.attr("refname", refname);
    if changes.is_empty() {
        w.end_empty();
        return w.out;
    }
    w.end_open();
    for c in changes {
        w.open(2, "diff");
        w.attr("type", &TYPE_OBJ_ATTR.to_string());
        w.attr("obj_depth", &c.depth.to_string());
        w.attr("obj_index", &c.index.to_string());
        match &c.attr {
            AttrChange::Size { index, old, new } => {
                w.attr("obj_attr_type", "0");
                w.attr("obj_attr_index", &index.to_string());
                w.attr("obj_attr_oldvalue", &old.to_string());
                w.attr("obj_attr_newvalue", &new.to_string());
            }
            AttrChange::Name { old, new } => {
                w.attr("obj_attr_type", "1");
                w.attr("obj_attr_oldvalue", old);
                w.attr("obj_attr_newvalue", new);
            }
            AttrChange::Info { name, old, new } => {
                w.attr("obj_attr_type", "2");
                w.attr("obj_attr_name", name);
                w.attr("obj_attr_oldvalue", old);
                w.attr("obj_attr_newvalue", new);
            }
        }
        w.end_empty();
    }
    w.close(0, "topologydiff");
    w.out
}

// ------------------------------------------------------------------ read

fn err_at(doc: &Document, node: Node, msg: impl Into<String>) -> XmlError {
    let p = doc.text_pos_at(node.range().start);
    XmlError::at(msg, p.row, p.col)
}

/// Reads an hwloc topology diff document.
///
/// # Errors
///
/// Malformed XML, a root element other than `<topologydiff>`, children
/// other than `<diff>`, unknown attributes (hwloc refuses them too), a
/// change without its mandatory attributes or with non-numeric ones, an
/// unknown change type, and too-complex markers (which cannot be applied).
pub fn parse(text: &str) -> Result<TopologyDiff, XmlError> {
    parse_with(text, false)
}

/// Reads a diff document as hwloc's C library does: `<diff>` elements
/// that are not object-attribute changes (a too-complex marker, an
/// unknown or missing type) are skipped instead of refused; everything
/// else is checked as [`parse`] checks it.
///
/// # Errors
///
/// As [`parse`], but for the skipped elements.
pub fn parse_as_hwloc(text: &str) -> Result<TopologyDiff, XmlError> {
    parse_with(text, true)
}

fn parse_with(text: &str, skip_other_types: bool) -> Result<TopologyDiff, XmlError> {
    // The XML parser recurses once per nested element: bounded first, as
    // for a topology document.
    crate::import::precheck(text)?;
    let opts = ParsingOptions {
        allow_dtd: true,
        ..ParsingOptions::default()
    };
    let doc = Document::parse_with_options(text, opts).map_err(|e| {
        let p = e.pos();
        XmlError::at(format!("not an XML document: {e}"), p.row, p.col)
    })?;
    let root = doc.root_element();
    if root.tag_name().name() != "topologydiff" {
        return Err(err_at(
            &doc,
            root,
            format!(
                "not an hwloc topology diff: the root element is <{}>, not <topologydiff>",
                root.tag_name().name()
            ),
        ));
    }
    let mut diff = TopologyDiff {
        refname: root.attribute("refname").map(str::to_string),
        changes: Vec::new(),
    };
    for (n, node) in root.children().filter(|c| c.is_element()).enumerate() {
        let hunk = n + 1;
        let tag = node.tag_name().name();
        if tag != "diff" {
            return Err(err_at(
                &doc,
                node,
                format!("unknown element <{tag}> in <topologydiff> (only <diff> is allowed)"),
            ));
        }
        let change_type = node.attribute("type").map(|v| v.trim().parse::<i64>());
        if skip_other_types && !matches!(change_type, Some(Ok(TYPE_OBJ_ATTR) | Err(_))) {
            continue;
        }
        diff.changes.push(parse_one(&doc, node, hunk)?);
    }
    Ok(diff)
}

fn parse_one(doc: &Document, node: Node, hunk: usize) -> Result<Change, XmlError> {
    const KNOWN: [&str; 8] = [
        "type",
        "obj_depth",
        "obj_index",
        "obj_attr_type",
        "obj_attr_index",
        "obj_attr_name",
        "obj_attr_oldvalue",
        "obj_attr_newvalue",
    ];
    let err = |msg: String| err_at(doc, node, format!("diff #{hunk}: {msg}"));
    if let Some(a) = node.attributes().find(|a| !KNOWN.contains(&a.name())) {
        return Err(err(format!("unknown attribute {}", a.name())));
    }
    let get = |name: &str| {
        node.attribute(name)
            .ok_or_else(|| err(format!("missing attribute {name}")))
    };
    let int = |name: &str| -> Result<i64, XmlError> {
        let v = get(name)?;
        v.trim()
            .parse::<i64>()
            .map_err(|_| err(format!("{name}=\"{v}\" is not an integer")))
    };
    match int("type")? {
        TYPE_OBJ_ATTR => {}
        TYPE_TOO_COMPLEX => {
            return Err(err(
                "a too-complex marker: the topologies differ in a way hwloc's diff format cannot express, so there is nothing to apply".into(),
            ))
        }
        t => return Err(err(format!("unknown change type {t}"))),
    }
    let depth = int("obj_depth")?;
    let depth = i32::try_from(depth).map_err(|_| err(format!("obj_depth {depth} out of range")))?;
    let index = int("obj_index")?;
    let index = u32::try_from(index).map_err(|_| err(format!("obj_index {index} out of range")))?;
    let old = get("obj_attr_oldvalue")?;
    let new = get("obj_attr_newvalue")?;
    let attr = match int("obj_attr_type")? {
        0 => {
            let size = |name: &str, v: &str| {
                parse_u64(v).ok_or_else(|| err(format!("{name}=\"{v}\" is not a size")))
            };
            let index = match node.attribute("obj_attr_index") {
                Some(v) => size("obj_attr_index", v)?,
                None => 0,
            };
            AttrChange::Size {
                index,
                old: size("obj_attr_oldvalue", old)?,
                new: size("obj_attr_newvalue", new)?,
            }
        }
        1 => AttrChange::Name {
            old: old.into(),
            new: new.into(),
        },
        2 => AttrChange::Info {
            name: get("obj_attr_name")?.into(),
            old: old.into(),
            new: new.into(),
        },
        t => return Err(err(format!("unknown object attribute type {t}"))),
    };
    Ok(Change { depth, index, attr })
}

/// A decimal or `0x` hexadecimal number, as hwloc's `strtoull(.., 0)`
/// reads sizes (octal is not accepted).
fn parse_u64(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

// ------------------------------------------------------------------ apply

/// The object an hwloc depth and logical index name.
fn locate(topo: &Topology, depth: i32, index: u32) -> Option<ObjId> {
    let d = Depth::from_i64(depth.into())?;
    topo.level(d).get(index as usize).copied()
}

fn apply_one(topo: &mut Topology, c: &Change) -> Result<(), String> {
    // hwloc 3 locates topology infos one level below the deepest.
    let topology_infos = c.depth >= 0 && c.depth as u32 == topo.depth();
    let id = match locate(topo, c.depth, c.index) {
        Some(id) => Some(id),
        None if topology_infos && matches!(c.attr, AttrChange::Info { .. }) => None,
        None => {
            return Err(format!(
                "there is no object at depth {} index {}",
                c.depth, c.index
            ));
        }
    };
    match (&c.attr, id) {
        (AttrChange::Size { old, new, .. }, Some(id)) => {
            let l = label(topo, id);
            let o = topo.obj_mut(id);
            let ObjAttr::Numa(m) = &mut o.attr else {
                return Err(format!("{l} is not a NUMA node"));
            };
            if m.local_memory != *old {
                return Err(format!(
                    "{l} has {} bytes of local memory, not {old}",
                    m.local_memory
                ));
            }
            m.local_memory = *new;
            let delta = new.wrapping_sub(*old);
            let mut at = Some(id);
            while let Some(x) = at {
                let o = topo.obj_mut(x);
                o.total_memory = o.total_memory.wrapping_add(delta);
                at = o.parent();
            }
        }
        (AttrChange::Name { old, new }, Some(id)) => {
            let l = label(topo, id);
            let o = topo.obj_mut(id);
            // As hwloc-patch: an empty name in the diff is no name.
            let current = o.name.as_deref().unwrap_or("");
            if current != old {
                return Err(if current.is_empty() {
                    format!("{l} has no name")
                } else {
                    format!("{l} is named '{current}', not '{old}'")
                });
            }
            o.name = (!new.is_empty()).then(|| new.clone());
        }
        (AttrChange::Info { name, old, new }, id) => {
            let matches = |i: &Info| i.name == *name && i.value == *old;
            let root = topo.root();
            let slot = match id {
                Some(id) => {
                    if let Some(i) = topo.obj_mut(id).infos.iter_mut().find(|i| matches(i)) {
                        Some(i)
                    } else if id == root {
                        topo.infos.iter_mut().find(|i| matches(i))
                    } else {
                        None
                    }
                }
                None => topo.infos.iter_mut().find(|i| matches(i)),
            };
            match slot {
                Some(i) => i.value = new.clone(),
                None => {
                    let what = match id {
                        Some(id) => label(topo, id),
                        None => "the topology".into(),
                    };
                    return Err(format!("{what} has no info {name} with value '{old}'"));
                }
            }
        }
        // Only infos apply to the topology itself.
        (_, None) => {
            return Err(format!(
                "there is no object at depth {} index {}",
                c.depth, c.index
            ));
        }
    }
    Ok(())
}

/// Applies `changes` to `topo` (from new to old when `reverse`), all or
/// nothing, as `hwloc_topology_diff_apply` does.
///
/// # Errors
///
/// The first change that does not apply (no object at its place, not a
/// NUMA node, an old value that is not the object's), with its position
/// from 1; `topo` is then left unchanged.
pub fn apply(topo: &mut Topology, changes: &[Change], reverse: bool) -> Result<(), ApplyError> {
    let mut t = topo.clone();
    for (n, c) in changes.iter().enumerate() {
        let c = if reverse { c.reversed() } else { c.clone() };
        if let Err(reason) = apply_one(&mut t, &c) {
            return Err(ApplyError {
                hunk: n + 1,
                change: c,
                reason,
            });
        }
    }
    *topo = t;
    Ok(())
}

// ------------------------------------------------------------------ hwloc 1.x

/// How a diff numbers depths: as hwloc 1.x (NUMA nodes a normal level;
/// -3 bridges, -4 PCI devices, -5 OS devices) or as hwloc 2 and later
/// (-3 NUMA nodes, -4 bridges, -5 PCI devices, -6 OS devices...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Numbering {
    /// hwloc 1.x's depths.
    V1,
    /// hwloc 2's and 3's depths.
    V2,
}

/// The system identifier of a document's DOCTYPE, if it has one before its
/// root element.
fn doctype_dtd(text: &str) -> Option<&str> {
    let at = text.find("<!DOCTYPE")?;
    // A DOCTYPE is only that of the document before any element.
    let before = &text[..at];
    if before
        .match_indices('<')
        .any(|(i, _)| !before[i..].starts_with("<?") && !before[i..].starts_with("<!--"))
    {
        return None;
    }
    let decl = &text[at..];
    let decl = &decl[..decl.find('>')?];
    let sys = &decl[decl.find("SYSTEM")? + "SYSTEM".len()..];
    let sys = sys.trim_start();
    let q = sys.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let rest = &sys[1..];
    Some(&rest[..rest.find(q)?])
}

/// The numbering of a diff document, when its DOCTYPE tells it
/// (`hwloc.dtd` for hwloc 1.x, `hwloc2-diff.dtd` for hwloc 2 and later).
pub fn diff_numbering(diff_text: &str) -> Option<Numbering> {
    match doctype_dtd(diff_text)? {
        "hwloc.dtd" => Some(Numbering::V1),
        d if d.starts_with("hwloc2") || d.starts_with("hwloc3") => Some(Numbering::V2),
        _ => None,
    }
}

/// Whether a topology document is an hwloc 1.x one: its DOCTYPE names
/// `hwloc.dtd`, or (without a DOCTYPE that tells) its `<topology>` has no
/// `version` attribute.
pub fn reference_numbering(reference: &str) -> Numbering {
    match doctype_dtd(reference) {
        Some("hwloc.dtd") => return Numbering::V1,
        Some(d) if d.starts_with("hwloc2") || d.starts_with("hwloc3") => return Numbering::V2,
        _ => {}
    }
    // The root element's attributes, without parsing the whole document.
    let Some(at) = reference.find("<topology") else {
        return Numbering::V2;
    };
    let tag = &reference[at..];
    let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
    if tag.contains("version=") {
        Numbering::V2
    } else {
        Numbering::V1
    }
}

/// Applies a diff read from `diff_text` (its changes `changes`) to `topo`,
/// loaded from the document `reference`, as [`apply`] does, numbering
/// depths as hwloc 1.x did when the diff is a 1.x one: its DOCTYPE says so
/// or, when it does not tell, its reference is an hwloc 1.x document.
///
/// hwloc 1.x's depths are resolved against the reference's own element
/// tree, level by level as hwloc 1.x built its levels (NUMA nodes
/// included), then mapped to the object of `topo` with the same type, OS
/// index and CPU set.
///
/// # Errors
///
/// As [`apply`]; also a 1.x change naming a depth or index the reference
/// does not have, or an object with no counterpart in `topo`.
pub fn apply_with_reference(
    reference: &str,
    topo: &mut Topology,
    diff_text: &str,
    changes: &[Change],
    reverse: bool,
) -> Result<(), ApplyError> {
    let numbering = diff_numbering(diff_text).unwrap_or_else(|| reference_numbering(reference));
    if numbering == Numbering::V2 {
        return apply(topo, changes, reverse);
    }
    let fail = |n: usize, c: &Change, reason: String| ApplyError {
        hunk: n + 1,
        change: if reverse { c.reversed() } else { c.clone() },
        reason,
    };
    let opts = ParsingOptions {
        allow_dtd: true,
        ..ParsingOptions::default()
    };
    let doc = match Document::parse_with_options(reference, opts) {
        Ok(d) => d,
        Err(e) => {
            let c = changes.first().cloned().unwrap_or(Change {
                depth: 0,
                index: 0,
                attr: AttrChange::Name {
                    old: String::new(),
                    new: String::new(),
                },
            });
            return Err(fail(
                0,
                &c,
                format!("the reference is not an XML document: {e}"),
            ));
        }
    };
    let levels = v1_levels(&doc);
    let mut mapped = Vec::with_capacity(changes.len());
    for (n, c) in changes.iter().enumerate() {
        let (depth, index) =
            v1_locate(&doc, &levels, topo, c.depth, c.index).map_err(|r| fail(n, c, r))?;
        mapped.push(Change {
            depth,
            index,
            attr: c.attr.clone(),
        });
    }
    apply(topo, &mapped, reverse)
}

/// Whether an `<object>` is one hwloc 1.x keeps out of its levels.
fn v1_out_of_levels(n: Node) -> bool {
    matches!(
        n.attribute("type"),
        Some("Bridge" | "PCIDev" | "OSDev" | "Misc")
    )
}

/// The children of `n` that go into levels: I/O and Misc objects are
/// replaced by their own such children, as hwloc 1.x's
/// `hwloc_level_filter_objects` does.
fn v1_level_children<'a, 'i>(n: Node<'a, 'i>, out: &mut Vec<Node<'a, 'i>>) {
    for c in n
        .children()
        .filter(|c| c.is_element() && c.tag_name().name() == "object")
    {
        if v1_out_of_levels(c) {
            v1_level_children(c, out);
        } else {
            out.push(c);
        }
    }
}

/// What hwloc 1.x's `hwloc_type_cmp` compares: the type, with the depth
/// (and kind) of caches and the depth of groups.
fn v1_class<'a>(n: Node<'a, '_>) -> (String, Option<&'a str>, Option<&'a str>) {
    let t = n.attribute("type").unwrap_or("").to_string();
    match t.as_str() {
        "Cache" => (t, n.attribute("depth"), n.attribute("cache_type")),
        "Group" => (t, n.attribute("depth"), None),
        _ => (t, None, None),
    }
}

/// Whether `n`'s subtree below it holds an object of `class`.
fn v1_below(n: Node, class: &(String, Option<&str>, Option<&str>)) -> bool {
    let mut kids = Vec::new();
    v1_level_children(n, &mut kids);
    kids.into_iter()
        .any(|k| v1_class(k) == *class || v1_below(k, class))
}

/// hwloc 1.x's levels of a version 1 document, as `hwloc_connect_levels`
/// builds them: from the root's children, repeatedly the topmost type
/// (not PU while another is left) makes a level and its objects are
/// replaced by their children.
fn v1_levels<'a, 'i>(doc: &'a Document<'i>) -> Vec<Vec<Node<'a, 'i>>> {
    let Some(root) = doc
        .root_element()
        .children()
        .find(|c| c.is_element() && c.tag_name().name() == "object")
    else {
        return Vec::new();
    };
    let mut levels = alloc::vec![alloc::vec![root]];
    let mut objs = Vec::new();
    v1_level_children(root, &mut objs);
    while !objs.is_empty() {
        let mut top = objs
            .iter()
            .copied()
            .find(|o| o.attribute("type") != Some("PU"))
            .unwrap_or(objs[0]);
        for &o in &objs {
            let top_class = v1_class(top);
            if v1_class(o) != top_class && v1_below(o, &top_class) {
                top = o;
            }
        }
        let class = v1_class(top);
        let mut level = Vec::new();
        let mut next = Vec::new();
        for &o in &objs {
            if v1_class(o) == class {
                level.push(o);
                v1_level_children(o, &mut next);
            } else {
                next.push(o);
            }
        }
        levels.push(level);
        objs = next;
    }
    levels
}

/// wloc's type of a version 1 `<object>`.
fn v1_type(n: Node) -> Option<wloc_core::object::ObjType> {
    use wloc_core::object::ObjType;
    match n.attribute("type")? {
        "Cache" => {
            let d = n.attribute("depth")?.trim();
            let i = if n.attribute("cache_type").map(str::trim) == Some("2") {
                "i"
            } else {
                ""
            };
            ObjType::parse(&format!("L{d}{i}Cache"))
        }
        "System" => Some(ObjType::Machine),
        t => ObjType::parse(t),
    }
}

/// The wloc depth and logical index of the object hwloc 1.x names
/// (`depth`, `index`) in the version 1 document `doc` whose levels are
/// `levels`.
fn v1_locate(
    doc: &Document,
    levels: &[Vec<Node>],
    topo: &Topology,
    depth: i32,
    index: u32,
) -> Result<(i32, u32), String> {
    let special = match depth {
        -3 => Some((Depth::Bridge, "Bridge")),
        -4 => Some((Depth::PciDevice, "PCI device")),
        -5 => Some((Depth::OsDevice, "OS device")),
        _ => None,
    };
    if let Some((d, what)) = special {
        return match topo.level(d).get(index as usize) {
            Some(&id) => Ok((d.to_i32(), topo.obj(id).logical_index())),
            None => Err(format!(
                "there is no object at hwloc 1.x depth {depth} ({what} level, {} objects) index {index}",
                topo.level(d).len()
            )),
        };
    }
    let Some(level) = usize::try_from(depth).ok().and_then(|d| levels.get(d)) else {
        return Err(format!(
            "there is no hwloc 1.x depth {depth} in the reference (its depths are 0 to {} and -3 to -5)",
            levels.len().saturating_sub(1)
        ));
    };
    let Some(&node) = level.get(index as usize) else {
        return Err(format!(
            "there is no object at hwloc 1.x depth {depth} index {index} in the reference (that level has {} {} objects)",
            level.len(),
            level
                .first()
                .and_then(|n| n.attribute("type"))
                .unwrap_or("")
        ));
    };
    if depth == 0 {
        let r = topo.root();
        return Ok((depth_code(topo, r), topo.obj(r).logical_index()));
    }
    let what = format!(
        "the hwloc 1.x object at depth {depth} index {index} ({} os_index {})",
        node.attribute("type").unwrap_or("?"),
        node.attribute("os_index").unwrap_or("none")
    );
    let ty = v1_type(node).ok_or_else(|| format!("{what} has a type wloc does not know"))?;
    let os = node
        .attribute("os_index")
        .and_then(|v| v.trim().parse::<u32>().ok());
    let cpuset = node
        .attribute("cpuset")
        .and_then(|v| wloc_core::bitmap::CpuSet::parse(v.trim()).ok());
    let key = |n: Node| {
        v1_type(n) == Some(ty)
            && n.attribute("os_index")
                .and_then(|v| v.trim().parse::<u32>().ok())
                == os
            && n.attribute("cpuset")
                .and_then(|v| wloc_core::bitmap::CpuSet::parse(v.trim()).ok())
                == cpuset
    };
    // Objects alike in all that are told apart by their order.
    let rank = doc
        .descendants()
        .filter(|n| n.is_element() && n.tag_name().name() == "object")
        .take_while(|n| *n != node)
        .filter(|n| !v1_out_of_levels(*n) && key(*n))
        .count();
    let mut depths: Vec<Depth> = (0..topo.depth()).map(Depth::Normal).collect();
    depths.push(Depth::NumaNode);
    let found = depths
        .into_iter()
        .flat_map(|d| topo.level(d).iter().copied())
        .filter(|&id| {
            let o = topo.obj(id);
            o.obj_type == ty && o.os_index == os && o.cpuset == cpuset
        })
        .nth(rank);
    match found {
        Some(id) => Ok((depth_code(topo, id), topo.obj(id).logical_index())),
        None => Err(format!("{what} has no counterpart in the loaded topology")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topologydiff SYSTEM "hwloc2-diff.dtd">
<topologydiff refname="old.xml">
  <diff type="0" obj_depth="0" obj_index="0" obj_attr_type="2" obj_attr_name="HostName" obj_attr_oldvalue="mirage004" obj_attr_newvalue="newhost"/>
  <diff type="0" obj_depth="-6" obj_index="1" obj_attr_type="1" obj_attr_oldvalue="eth1" obj_attr_newvalue="ethX"/>
  <diff type="0" obj_depth="-3" obj_index="1" obj_attr_type="0" obj_attr_index="0" obj_attr_oldvalue="19327348736" obj_attr_newvalue="1000"/>
</topologydiff>
"#;

    #[test]
    fn deep_nesting_is_refused_before_parsing() {
        // 20,000 nested elements overflowed the parser's stack.
        let n = 20_000;
        let doc = format!(
            "<topologydiff>{}{}</topologydiff>",
            "<diff>".repeat(n),
            "</diff>".repeat(n)
        );
        for skip in [false, true] {
            let e = parse_with(&doc, skip).unwrap_err();
            assert!(e.to_string().contains("nested more than"), "{e}");
        }
    }

    #[test]
    fn hwloc_documents_read_and_write_back_byte_for_byte() {
        let d = parse(DOC).unwrap();
        assert_eq!(d.refname.as_deref(), Some("old.xml"));
        assert_eq!(d.changes.len(), 3);
        assert_eq!(to_xml(&d.changes, "old.xml"), DOC);
        let empty = to_xml(&[], "a.xml");
        assert!(empty.ends_with("<topologydiff refname=\"a.xml\"/>\n"));
        assert!(parse(&empty).unwrap().changes.is_empty());
    }

    #[test]
    fn hwlocs_reading_skips_what_is_not_an_attribute_change() {
        let doc = "<topologydiff refname=\"r\">\
            <diff type=\"0\" obj_depth=\"0\" obj_index=\"0\" obj_attr_type=\"1\" obj_attr_oldvalue=\"a\" obj_attr_newvalue=\"b\"/>\
            <diff type=\"1\" obj_depth=\"0\" obj_index=\"0\"/><diff type=\"7\"/><diff/></topologydiff>";
        assert!(parse(doc).is_err());
        let d = parse_as_hwloc(doc).unwrap();
        assert_eq!(d.changes.len(), 1);
        assert_eq!(d.refname.as_deref(), Some("r"));
        // What is checked stays checked.
        assert!(
            parse_as_hwloc("<topologydiff><diff type=\"0\" bogus=\"1\"/></topologydiff>").is_err()
        );
    }

    #[test]
    fn bad_documents_are_refused_with_a_reason() {
        for (doc, want) in [
            ("garbage", "not an XML document"),
            ("<topology/>", "not <topologydiff>"),
            (
                "<topologydiff><foo/></topologydiff>",
                "unknown element <foo>",
            ),
            (
                "<topologydiff><diff type=\"1\" obj_depth=\"0\" obj_index=\"0\"/></topologydiff>",
                "too-complex",
            ),
            (
                "<topologydiff><diff type=\"0\" obj_depth=\"0\" obj_index=\"0\" obj_attr_type=\"2\" obj_attr_oldvalue=\"a\" obj_attr_newvalue=\"b\"/></topologydiff>",
                "missing attribute obj_attr_name",
            ),
            (
                "<topologydiff><diff type=\"0\" obj_depth=\"x\"/></topologydiff>",
                "not an integer",
            ),
            (
                "<topologydiff><diff type=\"0\" bogus=\"1\"/></topologydiff>",
                "unknown attribute bogus",
            ),
            (
                "<topologydiff><diff type=\"0\" obj_depth=\"0\" obj_index=\"0\" obj_attr_type=\"0\" obj_attr_oldvalue=\"1\" obj_attr_newvalue=\"-2\"/></topologydiff>",
                "not a size",
            ),
        ] {
            let e = parse(doc).unwrap_err().to_string();
            assert!(e.contains(want), "{doc}: {e}");
        }
    }

    /// Numbers at and past the limits of each field, negative where a
    /// count is meant, empty and truncated: refused when read, naming the
    /// attribute, or refused by `apply` naming the object; never a panic.
    #[test]
    fn hostile_numbers_are_refused() {
        let one = |attrs: &str| {
            format!(
                "<topologydiff><diff type=\"0\" {attrs} obj_attr_oldvalue=\"1\" obj_attr_newvalue=\"2\"/></topologydiff>"
            )
        };
        for (attrs, want) in [
            (
                "obj_depth=\"2147483648\" obj_index=\"0\" obj_attr_type=\"1\"",
                "obj_depth 2147483648 out of range",
            ),
            (
                "obj_depth=\"-2147483649\" obj_index=\"0\" obj_attr_type=\"1\"",
                "obj_depth -2147483649 out of range",
            ),
            (
                "obj_depth=\"99999999999999999999\" obj_index=\"0\" obj_attr_type=\"1\"",
                "obj_depth=\"99999999999999999999\" is not an integer",
            ),
            (
                "obj_depth=\"0\" obj_index=\"-1\" obj_attr_type=\"1\"",
                "obj_index -1 out of range",
            ),
            (
                "obj_depth=\"0\" obj_index=\"4294967296\" obj_attr_type=\"1\"",
                "obj_index 4294967296 out of range",
            ),
            (
                "obj_depth=\"0\" obj_index=\"\" obj_attr_type=\"1\"",
                "obj_index=\"\" is not an integer",
            ),
            (
                "obj_depth=\"0\" obj_index=\"1x\" obj_attr_type=\"1\"",
                "obj_index=\"1x\" is not an integer",
            ),
            (
                "obj_depth=\"0\" obj_index=\"0\" obj_attr_type=\"-9223372036854775808\"",
                "unknown object attribute type",
            ),
            (
                "obj_depth=\"0\" obj_index=\"0\" obj_attr_type=\"0\" obj_attr_index=\"-1\"",
                "obj_attr_index=\"-1\" is not a size",
            ),
            (
                "obj_depth=\"0\" obj_index=\"0\" obj_attr_type=\"0\" obj_attr_index=\"0x1ffffffffffffffff\"",
                "is not a size",
            ),
            (
                "obj_depth=\"0\" obj_index=\"0\"",
                "missing attribute obj_attr_type",
            ),
            (
                "obj_index=\"0\" obj_attr_type=\"1\"",
                "missing attribute obj_depth",
            ),
        ] {
            let e = parse(&one(attrs)).unwrap_err().to_string();
            assert!(e.contains(want), "{attrs}: {e}");
        }
        let e = parse("<topologydiff><diff type=\"9223372036854775807\"/></topologydiff>")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown change type 9223372036854775807"), "{e}");
        let e = parse("<topologydiff><diff type=\"0\" obj_depth=\"0\" obj_index=\"0\" obj_attr_type=\"0\" obj_attr_oldvalue=\"18446744073709551616\" obj_attr_newvalue=\"2\"/></topologydiff>").unwrap_err().to_string();
        assert!(
            e.contains("obj_attr_oldvalue=\"18446744073709551616\" is not a size"),
            "{e}"
        );
        for truncated in [
            "<topologydiff><diff type=\"0\" obj_depth=\"1",
            "<topologydiff>",
            "",
        ] {
            let e = parse(truncated).unwrap_err().to_string();
            assert!(e.contains("not an XML document"), "{truncated:?}: {e}");
        }
    }

    #[test]
    fn names_added_or_removed_are_changes_from_or_to_the_empty_name() {
        let d = wloc_core::synthetic::parse("pack:2 pu:2").unwrap();
        let named = d.build(Topology::new()).unwrap();
        let mut unnamed = named.clone();
        let mut named = named;
        let pack = named.objs_by_type(wloc_core::object::ObjType::Package)[1];
        named.obj_mut(pack).name = Some("eth0".into());
        unnamed.obj_mut(pack).name = None;
        // Removed: hwloc-diff writes the new name as "" and hwloc-patch reads it as none.
        let c = compute(&named, &unnamed);
        assert!(c.too_complex.is_empty());
        assert_eq!(c.changes.len(), 1);
        let xml = to_xml(&c.changes, "ref");
        assert!(
            xml.contains(r#"obj_attr_oldvalue="eth0" obj_attr_newvalue="""#),
            "{xml}"
        );
        let back = parse_as_hwloc(&xml).unwrap().changes;
        let mut t = named.clone();
        apply(&mut t, &back, false).unwrap();
        assert_eq!(t.obj(pack).name, None);
        apply(&mut t, &back, true).unwrap();
        assert_eq!(t.obj(pack).name.as_deref(), Some("eth0"));
        // Added: the reverse.
        let c = compute(&unnamed, &named);
        assert_eq!(c.changes.len(), 1);
        let mut t = unnamed.clone();
        apply(&mut t, &c.changes, false).unwrap();
        assert_eq!(t.obj(pack).name.as_deref(), Some("eth0"));
        // A name that is not the expected one is still refused.
        let mut other = named.clone();
        other.obj_mut(pack).name = Some("eth1".into());
        let e = apply(&mut other, &compute(&named, &unnamed).changes, false).unwrap_err();
        assert!(e.reason.contains("is named 'eth1'"), "{}", e.reason);
        let e = apply(
            &mut unnamed.clone(),
            &compute(&named, &unnamed).changes,
            false,
        )
        .unwrap_err();
        assert!(e.reason.contains("has no name"), "{}", e.reason);
    }

    #[test]
    fn changes_at_no_object_are_refused_by_apply() {
        let d = wloc_core::synthetic::parse("pack:2 pu:2").unwrap();
        let topo = d.build(Topology::new()).unwrap();
        let depth = topo.depth() as i32;
        let size = AttrChange::Size {
            index: u64::MAX,
            old: u64::MAX,
            new: 0,
        };
        let name = AttrChange::Name {
            old: "a".into(),
            new: "b".into(),
        };
        for (depth, index, attr) in [
            (i32::MAX, 0, name.clone()),
            (i32::MIN, 0, name.clone()),
            (-1, 0, name.clone()),
            (-2, 0, name.clone()),
            (-9, 0, name.clone()),
            (0, u32::MAX, name.clone()),
            (1, 2, name.clone()),
            // One level below the deepest names the topology, for infos only.
            (depth, 0, size.clone()),
            (depth, 0, name),
            (-3, u32::MAX, size),
        ] {
            let mut t = topo.clone();
            let c = Change { depth, index, attr };
            let e = apply(&mut t, core::slice::from_ref(&c), false).unwrap_err();
            assert_eq!(e.hunk, 1);
            assert!(
                e.reason.contains("there is no object at depth"),
                "{c}: {}",
                e.reason
            );
            let same = crate::export_canonical(&t) == crate::export_canonical(&topo);
            assert!(same, "{c}: the topology changed");
        }
    }

    #[test]
    fn sizes_read_as_strtoull_does() {
        assert_eq!(parse_u64("0x10"), Some(16));
        assert_eq!(parse_u64("42"), Some(42));
        assert_eq!(parse_u64("-1"), None);
    }

    /// Two NUMA nodes of two cores of one PU each, as hwloc 1.x wrote
    /// them (NUMA nodes in the CPU tree): 1.x levels Machine, NUMANode,
    /// Socket, Core, PU.
    fn v1_doc() -> String {
        let sets = |c: &str, n: &str| {
            format!(
                r#"cpuset="{c}" complete_cpuset="{c}" online_cpuset="{c}" allowed_cpuset="{c}" nodeset="{n}" complete_nodeset="{n}" allowed_nodeset="{n}""#
            )
        };
        let mut b = format!(
            r#"<object type="Machine" os_index="0" {}>"#,
            sets("0x0000000f", "0x00000003")
        );
        for n in 0..2u32 {
            let c = format!("0x{:08x}", 0x3 << (2 * n));
            let nn = format!("0x{:08x}", 1 << n);
            b.push_str(&format!(
                r#"<object type="NUMANode" os_index="{n}" {} local_memory="{}"><object type="Socket" os_index="{n}" {}>"#,
                sets(&c, &nn),
                (n + 1) << 30,
                sets(&c, &nn)
            ));
            for p in 0..2 {
                let pu = 2 * n + p;
                let one = format!("0x{:08x}", 1 << pu);
                b.push_str(&format!(
                    r#"<object type="Core" os_index="{p}" {}><object type="PU" os_index="{pu}" {}><info name="Tag" value="pu{pu}"/></object></object>"#,
                    sets(&one, &nn),
                    sets(&one, &nn)
                ));
            }
            b.push_str("</object></object>");
        }
        b.push_str("</object>");
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc.dtd\">\n<topology>\n{b}\n</topology>\n"
        )
    }

    const V1_DIFF: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topologydiff SYSTEM "hwloc.dtd">
<topologydiff refname="a.xml">
  <diff type="0" obj_depth="1" obj_index="1" obj_attr_type="0" obj_attr_index="0" obj_attr_oldvalue="2147483648" obj_attr_newvalue="1000"/>
  <diff type="0" obj_depth="4" obj_index="3" obj_attr_type="2" obj_attr_name="Tag" obj_attr_oldvalue="pu3" obj_attr_newvalue="x"/>
</topologydiff>
"#;

    #[test]
    fn numberings_are_told_by_doctype_or_version() {
        assert_eq!(diff_numbering(V1_DIFF), Some(Numbering::V1));
        assert_eq!(diff_numbering(DOC), Some(Numbering::V2));
        assert_eq!(diff_numbering("<topologydiff/>"), None);
        assert_eq!(reference_numbering(&v1_doc()), Numbering::V1);
        assert_eq!(
            reference_numbering("<topology>\n</topology>"),
            Numbering::V1
        );
        assert_eq!(
            reference_numbering(
                "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n<topology version=\"2.0\">"
            ),
            Numbering::V2
        );
        assert_eq!(
            reference_numbering("<topology version=\"3.0\">"),
            Numbering::V2
        );
    }

    #[test]
    fn hwloc_1_depths_count_the_numa_level() {
        let text = v1_doc();
        let t = crate::import_str(&text, Topology::new()).unwrap();
        let d = parse(V1_DIFF).unwrap();
        let mut p = t.clone();
        apply_with_reference(&text, &mut p, V1_DIFF, &d.changes, false).unwrap();
        let numa = p.level(Depth::NumaNode)[1];
        let ObjAttr::Numa(m) = &p.obj(numa).attr else {
            panic!("not a NUMA node")
        };
        assert_eq!(m.local_memory, 1000);
        let pu = *p.level(Depth::Normal(p.depth() - 1)).last().unwrap();
        assert_eq!(p.obj(pu).os_index, Some(3));
        assert!(
            p.obj(pu)
                .infos
                .iter()
                .any(|i| i.name == "Tag" && i.value == "x")
        );
        // And back.
        apply_with_reference(&text, &mut p, V1_DIFF, &d.changes, true).unwrap();
        assert_eq!(wloc_export(&p), wloc_export(&t));
        // Read with hwloc 2's numbering, depth 1 is not the NUMA level.
        let v2 = V1_DIFF.replace("\"hwloc.dtd\"", "\"hwloc2-diff.dtd\"");
        let mut q = t.clone();
        assert!(apply_with_reference(&text, &mut q, &v2, &d.changes, false).is_err());
    }

    fn wloc_export(t: &Topology) -> String {
        crate::export(t, crate::XmlVersion::V2)
    }

    #[test]
    fn hwloc_1_places_that_do_not_exist_are_named() {
        let text = v1_doc();
        let t = crate::import_str(&text, Topology::new()).unwrap();
        for (depth, index, want) in [
            (9, 0, "no hwloc 1.x depth 9"),
            (1, 2, "hwloc 1.x depth 1 index 2"),
            (
                -5,
                0,
                "hwloc 1.x depth -5 (OS device level, 0 objects) index 0",
            ),
            (-6, 0, "no hwloc 1.x depth -6"),
        ] {
            let c = Change {
                depth,
                index,
                attr: AttrChange::Name {
                    old: "a".into(),
                    new: "b".into(),
                },
            };
            let mut p = t.clone();
            let e = apply_with_reference(&text, &mut p, V1_DIFF, &[c], false).unwrap_err();
            assert!(e.to_string().contains(want), "{e}");
            assert_eq!(e.hunk, 1);
        }
    }
}
