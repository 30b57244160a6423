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
use wloc_core::object::{Depth, Info, ObjAttr, ObjId};
use wloc_core::Topology;

use crate::export::{v2_infos, Writer};
use crate::XmlError;

/// hwloc's `type` of an object attribute change.
const TYPE_OBJ_ATTR: i64 = 0;
/// hwloc's `type` of a too-complex marker.
const TYPE_TOO_COMPLEX: i64 = 1;

/// What changes in one object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttrChange {
    /// The local memory of a NUMA node (`index` is always 0 in hwloc).
    Size { index: u64, old: u64, new: u64 },
    /// The object's name.
    Name { old: String, new: String },
    /// The value of the info `name`.
    Info {
        name: String,
        old: String,
        new: String,
    },
}

/// One change ("hunk") of a diff: an attribute of the object at hwloc
/// depth `depth` (negative for special levels: -3 NUMA nodes, -6 OS
/// devices...) and logical index `index`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub depth: i32,
    pub index: u32,
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
    pub depth: i32,
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
            (Some(_), None) => return Err("name removed in NEW".into()),
            (None, Some(_)) => return Err("name added in NEW".into()),
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
        for (n, (d1, d2)) in t1.distances.iter().zip(&t2.distances).enumerate() {
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
    if d.out.too_complex.is_empty() {
        if let Err(reason) = d.topology_wide() {
            d.too_complex(old.root(), reason);
        }
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
            ))
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
            match &o.name {
                Some(n) if n == old => o.name = Some(new.clone()),
                Some(n) => return Err(format!("{l} is named '{n}', not '{old}'")),
                None => return Err(format!("{l} has no name")),
            }
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
            ))
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
    fn bad_documents_are_refused_with_a_reason() {
        for (doc, want) in [
            ("garbage", "not an XML document"),
            ("<topology/>", "not <topologydiff>"),
            ("<topologydiff><foo/></topologydiff>", "unknown element <foo>"),
            ("<topologydiff><diff type=\"1\" obj_depth=\"0\" obj_index=\"0\"/></topologydiff>", "too-complex"),
            ("<topologydiff><diff type=\"0\" obj_depth=\"0\" obj_index=\"0\" obj_attr_type=\"2\" obj_attr_oldvalue=\"a\" obj_attr_newvalue=\"b\"/></topologydiff>", "missing attribute obj_attr_name"),
            ("<topologydiff><diff type=\"0\" obj_depth=\"x\"/></topologydiff>", "not an integer"),
            ("<topologydiff><diff type=\"0\" bogus=\"1\"/></topologydiff>", "unknown attribute bogus"),
            ("<topologydiff><diff type=\"0\" obj_depth=\"0\" obj_index=\"0\" obj_attr_type=\"0\" obj_attr_oldvalue=\"1\" obj_attr_newvalue=\"-2\"/></topologydiff>", "not a size"),
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
            format!("<topologydiff><diff type=\"0\" {attrs} obj_attr_oldvalue=\"1\" obj_attr_newvalue=\"2\"/></topologydiff>")
        };
        for (attrs, want) in [
            ("obj_depth=\"2147483648\" obj_index=\"0\" obj_attr_type=\"1\"", "obj_depth 2147483648 out of range"),
            ("obj_depth=\"-2147483649\" obj_index=\"0\" obj_attr_type=\"1\"", "obj_depth -2147483649 out of range"),
            ("obj_depth=\"99999999999999999999\" obj_index=\"0\" obj_attr_type=\"1\"", "obj_depth=\"99999999999999999999\" is not an integer"),
            ("obj_depth=\"0\" obj_index=\"-1\" obj_attr_type=\"1\"", "obj_index -1 out of range"),
            ("obj_depth=\"0\" obj_index=\"4294967296\" obj_attr_type=\"1\"", "obj_index 4294967296 out of range"),
            ("obj_depth=\"0\" obj_index=\"\" obj_attr_type=\"1\"", "obj_index=\"\" is not an integer"),
            ("obj_depth=\"0\" obj_index=\"1x\" obj_attr_type=\"1\"", "obj_index=\"1x\" is not an integer"),
            ("obj_depth=\"0\" obj_index=\"0\" obj_attr_type=\"-9223372036854775808\"", "unknown object attribute type"),
            ("obj_depth=\"0\" obj_index=\"0\" obj_attr_type=\"0\" obj_attr_index=\"-1\"", "obj_attr_index=\"-1\" is not a size"),
            ("obj_depth=\"0\" obj_index=\"0\" obj_attr_type=\"0\" obj_attr_index=\"0x1ffffffffffffffff\"", "is not a size"),
            ("obj_depth=\"0\" obj_index=\"0\"", "missing attribute obj_attr_type"),
            ("obj_index=\"0\" obj_attr_type=\"1\"", "missing attribute obj_depth"),
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
}
