//! hwloc 1.x documents (`<topology>` without a `version` attribute), read
//! the way hwloc 2 reads them and converted to the version 2 model.
//!
//! What differs from version 2, and what becomes of it:
//!
//! - NUMA nodes sit in the CPU tree as ordinary objects.  Each becomes a
//!   memory child of its parent, and its own children are given to that
//!   parent.  When the node covers other CPUs than its parent (its complete
//!   cpuset differs), a Group of kind "memory" with the node's sets is put
//!   in between so that the node keeps its locality; an MCDRAM node without
//!   CPUs beside a single plain node of the same parent (Knights Landing)
//!   stays next to it without a group.  A NUMA node at the root gets a
//!   Machine above it, which also receives the node's infos.
//! - Caches may be typed `Cache`: the `depth` and `cache_type` attributes
//!   give the level and kind (L1..L5, L1i..L3i).
//! - Without NUMA nodes, objects have no nodesets and the root carries the
//!   machine memory (`local_memory`, `<page_type>`): a NUMA node P#0 with
//!   that memory is made for the whole machine.
//! - Distance matrices are `<distances nbobjs= relative_depth=
//!   latency_base=>` elements with one `<latency value=>` per pair.  Only
//!   those of the root object whose size is the number of NUMA nodes are
//!   kept, as NUMA latencies (kind "from OS, means latency", no name) over
//!   the NUMA nodes in document order; a value is `value * latency_base`.
//!   When all values are (nearly) whole, they are rounded; otherwise they
//!   are multiplied by 1000 and the root gets the info
//!   `xmlv1DistancesScale=1000.000000` saying so.
//! - `online_cpuset` and `os_level` are dropped, `dmi_board_vendor` and
//!   `dmi_board_name` become `DMIBoardVendor`/`DMIBoardName` infos, `Type`
//!   and `CoProcType` infos become the subtype, Misc objects with a cpuset
//!   become Groups, and missing allowed sets mean "everything allowed".
//! - Objects with only some of their sets (a cpuset without a complete
//!   cpuset, a nodeset without a cpuset...) are refused, except groups,
//!   which old hwloc versions wrote that way for I/O: those are dropped and
//!   their children given to their parent.

use super::tree::{Attribute, Node};
use wloc_core::bitmap::{CpuSet, NodeSet};
use wloc_core::distances::{Distances, kind as dist_kind};
use wloc_core::object::{GroupAttr, NumaAttr, ObjAttr, ObjType, Object, group_kind};
use wloc_core::{Topology, TypeFilter};

use super::{Importer, ObjBuilder, Parsed, Refs};
use crate::XmlError;

/// hwloc's scale for version 1 distances that are not whole numbers.
const FLOAT_SCALE: f32 = 1000.0;

impl Importer<'_, '_> {
    /// Version 1 conversions of one object once its attributes and
    /// non-object children are read.  Returns `false` for a group whose
    /// sets are inconsistent: it is dropped.
    pub(super) fn v1_fixup(
        &mut self,
        b: &mut ObjBuilder,
        node: Node,
        old_cache: bool,
    ) -> Result<bool, XmlError> {
        if old_cache {
            b.obj_type = ObjType::cache_for(b.cache.depth, b.cache.kind).ok_or_else(|| {
                self.err(
                    node,
                    format!(
                        "Cache object with depth {} and cache_type {}: hwloc knows levels 1 to 5 \
                         (1 to 3 for instruction caches)",
                        b.cache.depth,
                        b.cache.kind.code()
                    ),
                )
            })?;
        }
        if b.obj_type == ObjType::Misc && b.cpuset.is_some() {
            b.obj_type = ObjType::Group;
        }
        let t = b.obj_type;
        let problem = if b.cpuset.is_some() != b.complete_cpuset.is_some() {
            Some("only one of cpuset and complete_cpuset")
        } else if b.nodeset.is_some() != b.complete_nodeset.is_some() {
            Some("only one of nodeset and complete_nodeset")
        } else if b.nodeset.is_some() && b.cpuset.is_none() {
            Some("a nodeset but no cpuset")
        } else {
            None
        };
        match problem {
            None => Ok(true),
            Some(p) if t == ObjType::Group => {
                self.warn(node, format!("ignoring a Group object with {p}"));
                Ok(false)
            }
            Some(p) => Err(self.err(node, format!("{t} object with {p}"))),
        }
    }

    /// A version 1 `<distances>` element of an object.
    /// A finite number in an attribute; the error names it as `what`,
    /// followed by `place`.
    fn finite(&self, a: &Attribute, what: &str, place: &str) -> Result<f32, XmlError> {
        a.value()
            .trim()
            .parse::<f32>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| {
                self.attr_err(
                    a,
                    format!(
                        "invalid {what} \"{}\"{place} (expected a number)",
                        a.value()
                    ),
                )
            })
    }

    pub(super) fn v1_distances(&mut self, node: Node, is_root: bool) -> Result<(), XmlError> {
        let mut nbobjs: u64 = 0;
        let mut reldepth: u64 = 0;
        let mut base: f32 = 0.0;
        for a in node.attributes() {
            match a.name() {
                "nbobjs" => nbobjs = self.num(&a)?,
                "relative_depth" => reldepth = self.num(&a)?,
                "latency_base" => base = self.finite(&a, "latency_base", " in <distances>")?,
                other => {
                    return Err(
                        self.attr_err(&a, format!("unexpected attribute {other} in <distances>"))
                    );
                }
            }
        }
        let mut values = Vec::new();
        for c in self.element_children(node)? {
            if c.tag_name().name() != "latency" {
                return Err(self.err(
                    c,
                    format!(
                        "unexpected <{}> inside <distances> (only <latency> elements)",
                        c.tag_name().name()
                    ),
                ));
            }
            let attr = c
                .attribute_node("value")
                .ok_or_else(|| self.err(c, "<latency> without a value attribute"))?;
            if let Some(other) = c.attributes().find(|a| a.name() != "value") {
                return Err(self.attr_err(
                    &other,
                    format!("unexpected attribute {} in <latency>", other.name()),
                ));
            }
            self.no_children(c)?;
            let v = self.finite(&attr, "latency value", "")?;
            values.push(v * base);
        }
        if nbobjs == 0 || reldepth == 0 || base == 0.0 {
            self.warn(
                node,
                "ignoring <distances> without nonzero nbobjs, relative_depth and latency_base",
            );
            return Ok(());
        }
        if nbobjs.checked_mul(nbobjs) != Some(values.len() as u64) {
            return Err(self.err(
                node,
                format!(
                    "<distances> with nbobjs {nbobjs} has {} <latency> elements instead of {nbobjs}x{nbobjs}",
                    values.len()
                ),
            ));
        }
        if nbobjs < 2 {
            self.warn(node, "ignoring <distances> with a single object");
        } else if !is_root {
            // Only NUMA distances matter, and hwloc 1.x put those on the root.
            self.warn(node, "ignoring <distances> of a non-root object");
        } else {
            self.v1
                .distances
                .push((node.range().start, nbobjs as usize, values));
        }
        Ok(())
    }

    /// Moves the NUMA nodes of a version 1 tree to the memory side of their
    /// parents (see the module documentation), and numbers the objects as
    /// hwloc does (see [`GpCounter`]).
    pub(super) fn v1_convert_tree(&mut self, topo: &Topology, mut root: Parsed) -> Parsed {
        // The root object is allocated before the document is read.
        let mut gp = GpCounter { next: 1 };
        gp.number(&mut root.obj);
        let mut root = if root.obj.obj_type == ObjType::NUMANode {
            // Only possible when old hwloc dropped the Machine level.
            let numa = &root.obj;
            let mut m = Object::new(ObjType::Machine, None);
            m.cpuset = numa.cpuset.clone();
            m.complete_cpuset = numa.cpuset.clone();
            m.nodeset = numa.nodeset.clone();
            m.complete_nodeset = numa.complete_nodeset.clone();
            m.infos = numa.infos.clone();
            gp.number(&mut m);
            self.v1.machine_made = true;
            Parsed {
                obj: Box::new(m),
                keep: true,
                children: vec![root],
            }
        } else {
            root
        };
        let groups_allowed = topo.type_filter(ObjType::Group) != TypeFilter::KeepNone;
        // The NUMA node moved below the Machine made above is numbered already.
        let numbered = self.v1.machine_made;
        v1_move_numa(&mut root, None, groups_allowed, &mut gp, numbered);
        // The memory groups get their indexes last, in the order of their
        // NUMA nodes, which is the order in which a walk meets them.
        let mut stack = vec![&mut root];
        while let Some(p) = stack.pop() {
            if p.obj.gp_index == 0 {
                p.obj.gp_index = gp.next;
                gp.next = gp.next.saturating_add(1);
            }
            stack.extend(p.children.iter_mut().rev());
        }
        self.v1.next_gp = gp.next;
        root
    }

    /// After insertion: the NUMA node of a machine that had none, and the
    /// distance matrices.
    pub(super) fn v1_finish(&mut self, topo: &mut Topology, refs: &Refs) -> Result<(), XmlError> {
        let root = topo.root();
        if topo
            .obj(root)
            .complete_nodeset
            .as_ref()
            .is_none_or(|n| n.is_empty())
        {
            let cpuset = topo.obj(root).cpuset.clone();
            let mut node = Object::new(ObjType::NUMANode, Some(0));
            node.complete_cpuset = cpuset.clone();
            node.cpuset = cpuset;
            node.nodeset = Some(NodeSet::from_index(0));
            node.complete_nodeset = Some(NodeSet::from_index(0));
            node.attr = ObjAttr::Numa(NumaAttr {
                local_memory: self.v1.machine_memory,
                page_types: std::mem::take(&mut self.v1.machine_pages),
            });
            // hwloc allocates the node before it looks for its parent (a
            // memory group it may make there takes the next index).
            node.gp_index = topo.alloc_gp_index();
            topo.insert_by_cpuset(node).map_err(|e| {
                XmlError::new(format!(
                    "cannot add the NUMA node of a machine without NUMA nodes: {e}"
                ))
            })?;
        }

        let order = std::mem::take(&mut self.v1.numa_order);
        let mut seen = std::collections::HashSet::new();
        let unique = order.iter().all(|os| seen.insert(*os));
        for (at, n, floats) in std::mem::take(&mut self.v1.distances) {
            let (l, c) = self.pos(at);
            let here = format!("line {l}, column {c}");
            if n != order.len() {
                self.warnings.push(format!(
                    "{here}: ignoring <distances> between {n} objects: there are {} NUMA nodes",
                    order.len()
                ));
                continue;
            }
            let objs: Option<Vec<_>> = order
                .iter()
                .map(|&os| refs.by_os.get(&(ObjType::NUMANode, os)).copied())
                .collect();
            let Some(objs) = objs.filter(|_| unique) else {
                self.warnings.push(format!(
                    "{here}: ignoring <distances>: the NUMA nodes do not have distinct os indexes"
                ));
                continue;
            };
            let (values, scaled) = v1_distance_values(&floats);
            if scaled {
                topo.obj_mut(root)
                    .add_info("xmlv1DistancesScale", &format!("{FLOAT_SCALE:.6}"));
            }
            let kind = dist_kind::FROM_OS | dist_kind::MEANS_LATENCY;
            if let Some(d) = Distances::new(None, kind, objs, values) {
                topo.distances.push(d);
            }
        }
        Ok(())
    }
}

/// Version 1 latencies as integers: rounded when every value is a
/// non-negative whole number (within 0.001), else scaled by
/// [`FLOAT_SCALE`] (then `true`).
fn v1_distance_values(floats: &[f32]) -> (Vec<u64>, bool) {
    let whole = floats.iter().all(|&f| {
        let frac = f - f.trunc();
        f >= 0.0 && !(frac > 0.001 && frac < 0.999)
    });
    if whole {
        (floats.iter().map(|&f| (f + 0.5) as u64).collect(), false)
    } else {
        let v = floats.iter().map(|&f| (FLOAT_SCALE * f) as u64).collect();
        (v, true)
    }
}

/// hwloc's gp index counter while it reads a document: every object it
/// allocates takes the next index (memory groups too, although they are
/// renumbered at the end), and a `gp_index` attribute replaces the
/// object's and raises the counter past it.
struct GpCounter {
    next: u64,
}

impl GpCounter {
    /// Numbers one object of the document.
    fn number(&mut self, obj: &mut Object) {
        let allocated = self.next;
        self.next = self.next.saturating_add(1);
        if obj.gp_index == 0 {
            obj.gp_index = allocated;
        } else {
            self.next = self.next.max(obj.gp_index.saturating_add(1));
        }
    }

    /// An index used by an object that is renumbered later.
    fn skip(&mut self) {
        self.next = self.next.saturating_add(1);
    }
}

/// Gives the children of every NUMA node below `p` to the node's parent,
/// with a memory group in between when the node's locality differs from
/// the parent's.  `kept_cc` is the complete cpuset of the nearest kept
/// ancestor of `p` (the parent the objects end up under).  Objects are
/// numbered in document order on the way, a memory group (gp index 0
/// until the end) using up the index after its NUMA node's, as in hwloc;
/// the first child is numbered already when `first_numbered`.
fn v1_move_numa(
    p: &mut Parsed,
    kept_cc: Option<&CpuSet>,
    groups_allowed: bool,
    gp: &mut GpCounter,
    first_numbered: bool,
) {
    let own_cc = if p.keep {
        p.obj.complete_cpuset.clone()
    } else {
        kept_cc.cloned()
    };
    let children = std::mem::take(&mut p.children);
    let mut out = Vec::with_capacity(children.len());
    // NUMA nodes attached directly to this parent so far, and whether the
    // first of them has a subtype (for the MCDRAM rule).
    let mut direct = 0usize;
    let mut first_has_subtype = false;
    for (i, mut c) in children.into_iter().enumerate() {
        // The root NUMA node below its made Machine is numbered already,
        // and keeps that Machine's locality.
        let made_root = first_numbered && i == 0;
        if !made_root {
            gp.number(&mut c.obj);
        }
        let is_numa = c.obj.obj_type == ObjType::NUMANode;
        let grouped = is_numa && groups_allowed && !made_root && {
            let differs = c.obj.complete_cpuset != own_cc;
            let mcdram = direct == 1
                && !first_has_subtype
                && c.obj.subtype.as_deref() == Some("MCDRAM")
                && c.obj.complete_cpuset.as_ref().is_some_and(|s| s.is_empty());
            differs && !mcdram
        };
        if grouped {
            gp.skip();
        }
        v1_move_numa(&mut c, own_cc.as_ref(), groups_allowed, gp, false);
        if !is_numa {
            out.push(c);
            continue;
        }
        let moved = std::mem::take(&mut c.children);
        if grouped {
            let mut g = Object::new(ObjType::Group, None);
            g.cpuset = c.obj.cpuset.clone();
            g.complete_cpuset = c.obj.cpuset.clone();
            g.nodeset = c.obj.nodeset.clone();
            g.complete_nodeset = c.obj.complete_nodeset.clone();
            g.attr = ObjAttr::Group(GroupAttr {
                kind: group_kind::MEMORY,
                ..GroupAttr::default()
            });
            let mut children = Vec::with_capacity(moved.len() + 1);
            children.push(c);
            children.extend(moved);
            out.push(Parsed {
                obj: Box::new(g),
                keep: true,
                children,
            });
        } else {
            if direct == 0 {
                first_has_subtype = c.obj.subtype.is_some();
            }
            direct += 1;
            out.push(c);
            out.extend(moved);
        }
    }
    p.children = out;
}

#[cfg(test)]
mod tests {
    use crate::{XmlVersion, export, import_str, import_str_with_warnings};
    use wloc_core::Topology;
    use wloc_core::object::{CacheKind, ObjKind, ObjType};

    /// Sets of one object: cpuset, complete_cpuset, and nodesets when given.
    fn sets(cpus: &str, nodes: Option<&str>) -> String {
        let mut s = format!(
            r#"cpuset="{cpus}" complete_cpuset="{cpus}" online_cpuset="{cpus}" allowed_cpuset="{cpus}""#
        );
        if let Some(n) = nodes {
            s.push_str(&format!(
                r#" nodeset="{n}" complete_nodeset="{n}" allowed_nodeset="{n}""#
            ));
        }
        s
    }

    fn doc(body: &str) -> String {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc.dtd\">\n<topology>\n{body}\n</topology>\n"
        )
    }

    /// Two sockets with two PUs each, under NUMA nodes 0 and 1 in the CPU tree.
    fn two_numa(distances: &str) -> String {
        let mut b = format!(
            r#"<object type="Machine" os_index="0" {}>{distances}"#,
            sets("0x0000000f", Some("0x00000003"))
        );
        for n in 0..2u32 {
            let cpus = format!("0x{:08x}", 0x3 << (2 * n));
            let node = format!("0x{:08x}", 1 << n);
            b.push_str(&format!(
                r#"<object type="NUMANode" os_index="{n}" {} local_memory="{}"><page_type size="4096" count="{}"/><page_type size="2097152" count="0"/>
                   <object type="Socket" os_index="{n}" {}>"#,
                sets(&cpus, Some(&node)),
                (n + 1) << 30,
                (n + 1) << 18,
                sets(&cpus, Some(&node)),
            ));
            for p in 0..2 {
                let pu = 2 * n + p;
                let one = format!("0x{:08x}", 1 << pu);
                b.push_str(&format!(
                    r#"<object type="Core" os_index="{p}" {}><object type="PU" os_index="{pu}" {}/></object>"#,
                    sets(&one, Some(&node)),
                    sets(&one, Some(&node))
                ));
            }
            b.push_str("</object></object>");
        }
        b.push_str("</object>");
        doc(&b)
    }

    fn numa(t: &Topology, os: u32) -> wloc_core::ObjId {
        t.obj_by_os_index(ObjType::NUMANode, os).expect("NUMA node")
    }

    #[test]
    fn numa_nodes_become_memory_children_and_give_their_children_away() {
        let t = import_str(&two_numa(""), Topology::new()).unwrap();
        assert_eq!(t.objs_by_type(ObjType::NUMANode).len(), 2);
        assert_eq!(t.objs_by_type(ObjType::PU).len(), 4);
        for os in 0..2 {
            let n = t.obj(numa(&t, os));
            assert!(
                n.children().is_empty(),
                "a NUMA node has no normal children"
            );
            // The node keeps its locality: its parent covers exactly its CPUs
            // (the memory group made for it, merged with the Package).
            let p = t.obj(n.parent().unwrap());
            assert_eq!(p.kind(), ObjKind::Normal);
            assert_eq!(p.obj_type, ObjType::Package);
            assert_eq!(p.cpuset, n.cpuset);
            assert!(p.memory_children().contains(&numa(&t, os)));
            let m = n.numa().unwrap();
            assert_eq!(m.local_memory, u64::from(os + 1) << 30);
            assert_eq!(m.page_types.len(), 2);
            assert_eq!(m.page_types[0].size, 4096);
            assert_eq!(m.page_types[0].count, u64::from(os + 1) << 18);
        }
        // The result is a valid version 2 and 3 topology.
        for v in [XmlVersion::V2, XmlVersion::V3] {
            let back = import_str(&export(&t, v), Topology::new()).unwrap();
            assert_eq!(back.objs_by_type(ObjType::NUMANode).len(), 2);
        }
    }

    #[test]
    fn a_numa_node_covering_its_parent_needs_no_group() {
        let all = sets("0x00000003", Some("0x00000001"));
        let d = doc(&format!(
            r#"<object type="Machine" os_index="0" {all}>
                 <object type="NUMANode" os_index="0" {all} local_memory="1024">
                   <object type="Core" os_index="0" {c0}><object type="PU" os_index="0" {c0}/></object>
                   <object type="Core" os_index="1" {c1}><object type="PU" os_index="1" {c1}/></object>
                 </object>
               </object>"#,
            c0 = sets("0x00000001", Some("0x00000001")),
            c1 = sets("0x00000002", Some("0x00000001")),
        ));
        let t = import_str(&d, Topology::new()).unwrap();
        let root = t.obj(t.root());
        assert_eq!(root.memory_children().to_vec(), vec![numa(&t, 0)]);
        assert_eq!(root.children().len(), 2);
        assert!(t.objs_by_type(ObjType::Group).is_empty());
        for &c in root.children() {
            assert_eq!(t.obj(c).obj_type, ObjType::Core);
        }
    }

    #[test]
    fn old_caches_get_their_level_and_kind_from_depth_and_cache_type() {
        let s = |c: &str| sets(c, None);
        let d = doc(&format!(
            r#"<object type="Machine" os_index="0" {m} local_memory="4096">
                 <object type="Cache" {m} cache_size="6291456" depth="2" cache_linesize="64" cache_associativity="24" cache_type="0">
                   <object type="Cache" {m} cache_size="32768" depth="1" cache_linesize="64" cache_associativity="8" cache_type="1">
                     <object type="Cache" {m} cache_size="16384" depth="1" cache_linesize="64" cache_associativity="8" cache_type="2">
                       <object type="Core" os_index="0" {m}><object type="PU" os_index="0" {m}/></object>
                     </object>
                   </object>
                 </object>
               </object>"#,
            m = s("0x00000001")
        ));
        let mut topo = Topology::new();
        topo.set_all_types_filter(wloc_core::TypeFilter::KeepAll);
        let t = import_str(&d, topo).unwrap();
        let l2 = t.obj(t.objs_by_type(ObjType::L2Cache)[0]);
        assert_eq!(l2.cache().unwrap().size, 6291456);
        let l1 = t.obj(t.objs_by_type(ObjType::L1Cache)[0]);
        assert_eq!(l1.cache().unwrap().kind, CacheKind::Data);
        let l1i = t.obj(t.objs_by_type(ObjType::L1ICache)[0]);
        assert_eq!(l1i.cache().unwrap().size, 16384);
        // No NUMA node in the document: one is made with the machine memory.
        let n = t.obj(numa(&t, 0));
        assert_eq!(n.numa().unwrap().local_memory, 4096);
        assert_eq!(n.cpuset, t.obj(t.root()).cpuset);

        let bad = d.replacen(r#"depth="2""#, r#"depth="6""#, 1);
        let e = import_str(&bad, Topology::new()).unwrap_err();
        assert!(e.message().contains("Cache object with depth 6"), "{e}");
        assert!(e.line().is_some());
    }

    #[test]
    fn machine_memory_and_page_types_go_to_the_made_numa_node() {
        let m = sets("0x00000001", None);
        let d = doc(&format!(
            r#"<object type="Machine" os_index="0" {m} local_memory="33738452992">
                 <page_type size="4096" count="8236927"/><page_type size="2097152" count="0"/>
                 <info name="DMIProductName" value="PowerEdge 1950"/>
                 <object type="PU" os_index="0" {m}/>
               </object>"#
        ));
        let t = import_str(&d, Topology::new()).unwrap();
        let a = t.obj(numa(&t, 0)).numa().unwrap();
        assert_eq!(a.local_memory, 33738452992);
        assert_eq!(a.page_types.len(), 2);
        assert_eq!(
            (a.page_types[0].size, a.page_types[0].count),
            (4096, 8236927)
        );
        assert_eq!(
            t.obj(t.root()).info("DMIProductName"),
            Some("PowerEdge 1950")
        );
        let v2 = export(&t, XmlVersion::V2);
        assert!(
            v2.contains(r#"<page_type size="4096" count="8236927"/>"#),
            "{v2}"
        );
    }

    fn latencies(base: &str, values: &[&str]) -> String {
        let mut s = format!(r#"<distances nbobjs="2" relative_depth="1" latency_base="{base}">"#);
        for v in values {
            s.push_str(&format!(r#"<latency value="{v}"/>"#));
        }
        s.push_str("</distances>");
        s
    }

    #[test]
    fn distances_become_numa_latencies() {
        let d = two_numa(&latencies("10.000000", &["1.0", "2.1", "2.1", "1.0"]));
        let t = import_str(&d, Topology::new()).unwrap();
        assert_eq!(t.distances.len(), 1);
        let m = &t.distances[0];
        assert_eq!(m.name, None);
        assert_eq!(m.kind, 5, "from OS, means latency");
        assert_eq!(m.objs, vec![numa(&t, 0), numa(&t, 1)]);
        assert_eq!(m.values, vec![10, 21, 21, 10]);
        assert_eq!(t.obj(t.root()).info("xmlv1DistancesScale"), None);

        // Values that are not whole numbers are scaled by 1000, and said so.
        let d = two_numa(&latencies("1", &["1.0", "1.5", "1.5", "1.0"]));
        let t = import_str(&d, Topology::new()).unwrap();
        assert_eq!(t.distances[0].values, vec![1000, 1500, 1500, 1000]);
        assert_eq!(
            t.obj(t.root()).info("xmlv1DistancesScale"),
            Some("1000.000000")
        );

        // A matrix that is not about the NUMA nodes is dropped with a warning.
        let three = latencies("10", &["1"; 9]).replace(r#"nbobjs="2""#, r#"nbobjs="3""#);
        let (t, w) = import_str_with_warnings(&two_numa(&three), Topology::new()).unwrap();
        assert!(t.distances.is_empty());
        assert!(
            w.iter().any(|w| w.contains("there are 2 NUMA nodes")),
            "{w:?}"
        );
    }

    #[test]
    fn bad_version_1_documents_are_refused_with_a_reason() {
        let cases = [
            (
                two_numa(&latencies("10", &["1", "2", "2"])),
                "has 3 <latency> elements instead of 2x2",
            ),
            (
                two_numa(&latencies("10", &["1", "x", "2", "1"])),
                "invalid latency value \"x\"",
            ),
            (
                two_numa(&latencies("ten", &["1", "2", "2", "1"])),
                "invalid latency_base",
            ),
            (
                two_numa(
                    "<distances nbobjs=\"2\" relative_depth=\"1\" latency_base=\"10\"><info name=\"a\" value=\"b\"/></distances>",
                ),
                "unexpected <info> inside <distances>",
            ),
            (
                two_numa("").replacen(r#" complete_cpuset="0x00000001""#, "", 1),
                "Core object with only one of cpuset and complete_cpuset",
            ),
            (
                two_numa("").replacen(r#"type="Machine""#, r#"type="Cache""#, 1),
                "Cache object with depth 0",
            ),
            (
                doc("<object type=\"Machine\"><object type=\"PU\" os_index=\"0\"/></object>"),
                "without a cpuset",
            ),
            (
                two_numa("").replace("<topology>", "<topology version=\"0.9\">"),
                "version 0.9 is not supported",
            ),
        ];
        for (d, want) in cases {
            let e = import_str(&d, Topology::new()).unwrap_err();
            assert!(
                e.message().contains(want),
                "expected \"{want}\", got \"{e}\""
            );
        }
    }

    #[test]
    fn inconsistent_groups_are_dropped_and_their_children_kept() {
        let d = two_numa("").replacen(
            r#"<object type="NUMANode" os_index="0""#,
            r#"<object type="Group" cpuset="0x00000003" depth="1"><object type="NUMANode" os_index="0""#,
            1,
        );
        let d = d.replacen(
            "</object></object><object type=\"NUMANode\"",
            "</object></object></object><object type=\"NUMANode\"",
            1,
        );
        let (t, w) = import_str_with_warnings(&d, Topology::new()).unwrap();
        assert_eq!(t.objs_by_type(ObjType::NUMANode).len(), 2);
        assert_eq!(t.objs_by_type(ObjType::PU).len(), 4);
        assert!(
            w.iter().any(|w| w.contains("ignoring a Group object")),
            "{w:?}"
        );
    }

    #[test]
    fn a_numa_node_at_the_root_gets_a_machine() {
        let s = sets("0x00000001", Some("0x00000001"));
        let d = doc(&format!(
            r#"<object type="NUMANode" os_index="0" {s} local_memory="2048"><info name="Vendor" value="x"/><object type="PU" os_index="0" {s}/></object>"#
        ));
        let t = import_str(&d, Topology::new()).unwrap();
        let root = t.obj(t.root());
        assert_eq!(root.obj_type, ObjType::Machine);
        assert_eq!(root.info("Vendor"), Some("x"));
        assert_eq!(t.obj(numa(&t, 0)).numa().unwrap().local_memory, 2048);
        assert_eq!(t.objs_by_type(ObjType::PU).len(), 1);
    }

    /// gp index of the first object of a type (and OS index).
    fn gp(t: &Topology, ty: ObjType, os: u32) -> u64 {
        let id = t
            .objs_by_type(ty)
            .into_iter()
            .find(|&i| t.obj(i).os_index == Some(os))
            .expect("object");
        t.obj(id).gp_index
    }

    #[test]
    fn objects_are_numbered_as_hwloc_allocates_them() {
        // Document order from 1 (the root), a memory group made for a NUMA
        // node using up the index after the node's, and the memory groups
        // numbered last.
        let mut topo = Topology::new();
        topo.set_all_types_filter(wloc_core::TypeFilter::KeepAll);
        let t = import_str(&two_numa(""), topo).unwrap();
        assert_eq!(t.obj(t.root()).gp_index, 1);
        assert_eq!(gp(&t, ObjType::NUMANode, 0), 2);
        assert_eq!(gp(&t, ObjType::Package, 0), 4);
        assert_eq!(gp(&t, ObjType::PU, 1), 8);
        assert_eq!(gp(&t, ObjType::NUMANode, 1), 9);
        assert_eq!(gp(&t, ObjType::Package, 1), 11);
        assert_eq!(gp(&t, ObjType::PU, 3), 15);
        // The two groups took 16 and 17 (kept or merged away): objects
        // added later come after them.
        let mut t = t;
        assert_eq!(t.alloc_gp_index(), 18);

        // Without groups (filtered out), no index is used up for them.
        let mut topo = Topology::new();
        topo.set_type_filter(ObjType::Group, wloc_core::TypeFilter::KeepNone)
            .unwrap();
        let t = import_str(&two_numa(""), topo).unwrap();
        assert_eq!(gp(&t, ObjType::Package, 0), 3);
        assert_eq!(gp(&t, ObjType::NUMANode, 1), 8);
    }

    #[test]
    fn the_made_numa_node_and_machine_are_numbered_as_in_hwloc() {
        // No NUMA node in the document: the one made comes after every
        // object of the document (before any group it needs).
        let m = sets("0x00000003", None);
        let d = doc(&format!(
            r#"<object type="Machine" os_index="0" {m} local_memory="4096">
                 <object type="PU" os_index="0" {a}/><object type="PU" os_index="1" {b}/>
               </object>"#,
            a = sets("0x00000001", None),
            b = sets("0x00000002", None),
        ));
        let t = import_str(&d, Topology::new()).unwrap();
        assert_eq!(gp(&t, ObjType::PU, 1), 3);
        assert_eq!(gp(&t, ObjType::NUMANode, 0), 4);

        // A NUMA node at the root keeps the root's index; the Machine made
        // above it takes the next, with no OS index.
        let s = sets("0x00000001", Some("0x00000001"));
        let d = doc(&format!(
            r#"<object type="NUMANode" os_index="0" {s} local_memory="2048"><object type="PU" os_index="0" {s}/></object>"#
        ));
        let t = import_str(&d, Topology::new()).unwrap();
        let root = t.obj(t.root());
        assert_eq!((root.gp_index, root.os_index), (2, None));
        assert_eq!(gp(&t, ObjType::NUMANode, 0), 1);
        assert_eq!(gp(&t, ObjType::PU, 0), 3);
    }
}
