//! The consistency checker of a finished tree, after hwloc's
//! `hwloc_topology_check`: links, sibling ranks, child order, sets, levels
//! and indexes.

use alloc::string::String;
use core::cmp::Ordering;

use super::{MAX_TREE_DEPTH, Topology};
use crate::bitmap::{CpuSet, NodeSet};
use crate::object::*;

/// The first broken invariant [`Topology::check`] found, described in
/// words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckError {
    message: String,
}

impl CheckError {
    /// What is wrong, as [`Display`](core::fmt::Display) prints it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl core::fmt::Display for CheckError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.message)
    }
}

impl core::error::Error for CheckError {}

impl Topology {
    /// Verifies the tree's invariants and returns the first violation, as
    /// hwloc's `hwloc_topology_check` does (which aborts instead); see
    /// [`check_hwloc`](Self::check_hwloc) for the sums of sets it adds.
    ///
    /// Checked: parent links and sibling ranks; every child's type fits its
    /// parent's ([`ObjType::can_be_child_of`]: a PU has no normal or memory
    /// child, a NUMA node no memory child, memory objects no normal or I/O
    /// child, I/O objects no normal or memory child, Misc objects only Misc
    /// children, the Machine is only the root); no object more than
    /// [`MAX_TREE_DEPTH`] links below the root; normal children ordered by
    /// first PU without intersection and inside their parent's sets; each
    /// normal level holds one type; logical indexes follow level order;
    /// cpusets are included in complete cpusets; the root's sets contain
    /// every PU and NUMA node, and its nodeset no node that no NUMA node
    /// holds; NUMA nodes and PUs have OS indexes, their sets hold that
    /// index only; a CPU cache's attributes give its type's level and a
    /// kind the type allows.
    pub fn check(&self) -> Result<(), CheckError> {
        self.first_violation()
            .map_err(|message| CheckError { message })
    }

    /// [`check`](Self::check), then the sums hwloc's `hwloc_topology_check`
    /// also verifies: a normal object's cpuset is exactly the disjoint
    /// union of its normal children's, its nodeset exactly the nodes
    /// attached to it, its ancestors and its descendants, and a memory
    /// object has its parent's cpuset.
    ///
    /// Discovery and annotation records, topology images and the C
    /// library's `hwloc_topology_check` hold trees to these rules.  The
    /// hwloc XML reader does not: hwloc loads documents that break them
    /// (a PU deleted by hand from a file leaves its core's cpuset as it
    /// was) and keeps them as written, and so does wloc, with a warning.
    #[doc(alias = "hwloc_topology_check")]
    pub fn check_hwloc(&self) -> Result<(), CheckError> {
        self.check()?;
        self.check_set_sums()
            .map_err(|message| CheckError { message })
    }

    fn first_violation(&self) -> Result<(), String> {
        use alloc::format;
        let root = self.root;
        if self.obj(root).parent.is_some() {
            return Err("root has a parent".into());
        }
        let mut gps = alloc::vec::Vec::new();
        // An explicit stack (object, links below the root): no recursion.
        let mut stack = alloc::vec![(root, 0usize)];
        while let Some((id, depth)) = stack.pop() {
            let o = self
                .get(id)
                .ok_or_else(|| format!("object {id} is linked but removed"))?;
            if depth > MAX_TREE_DEPTH {
                return Err(format!(
                    "{} is {depth} levels below the root, deeper than the limit {MAX_TREE_DEPTH}",
                    self.describe(id)
                ));
            }
            gps.push(o.gp_index);
            let lists: [(&[ObjId], ObjKind); 4] = [
                (&o.children, ObjKind::Normal),
                (&o.memory_children, ObjKind::Memory),
                (&o.io_children, ObjKind::Io),
                (&o.misc_children, ObjKind::Misc),
            ];
            for (list, kind) in lists {
                for (rank, &c) in list.iter().enumerate() {
                    let co = self
                        .get(c)
                        .ok_or_else(|| format!("{} has a removed child", self.describe(id)))?;
                    if co.parent != Some(id) {
                        return Err(format!("{} has a wrong parent link", self.describe(c)));
                    }
                    if co.sibling_rank != rank as u32 {
                        return Err(format!("{} has a wrong sibling rank", self.describe(c)));
                    }
                    if co.kind() != kind {
                        return Err(format!("{} is in the wrong child list", self.describe(c)));
                    }
                    if !co.obj_type.can_be_child_of(o.obj_type) {
                        return Err(format!(
                            "{} cannot be a child of {}",
                            self.describe(c),
                            self.describe(id)
                        ));
                    }
                    stack.push((c, depth + 1));
                }
            }
            if o.obj_type == ObjType::PU && !o.children.is_empty() {
                return Err(format!("{} has normal children", self.describe(id)));
            }
            if matches!(o.kind(), ObjKind::Io | ObjKind::Misc) && !o.memory_children.is_empty() {
                return Err(format!("{} has memory children", self.describe(id)));
            }
            if matches!(o.kind(), ObjKind::Normal | ObjKind::Memory) {
                let (Some(c), Some(cc), Some(n), Some(cn)) = (
                    &o.cpuset,
                    &o.complete_cpuset,
                    &o.nodeset,
                    &o.complete_nodeset,
                ) else {
                    return Err(format!("{} lacks a cpuset or nodeset", self.describe(id)));
                };
                if !cc.includes(c) || !cn.includes(n) {
                    return Err(format!(
                        "{} sets exceed its complete sets (cpuset {c} in {cc}, nodeset {n} in {cn})",
                        self.describe(id)
                    ));
                }
                for w in o.children.windows(2) {
                    let (a, b) = (self.obj_set(w[0]), self.obj_set(w[1]));
                    if let (Some(a), Some(b)) = (a, b) {
                        if a.intersects(b) {
                            return Err(format!("children of {} intersect", self.describe(id)));
                        }
                        if a.compare_first(b) == Ordering::Greater {
                            return Err(format!(
                                "children of {} are not ordered",
                                self.describe(id)
                            ));
                        }
                    }
                }
                for &ch in &o.children {
                    let co = self.obj(ch);
                    if let Some(ccs) = &co.complete_cpuset
                        && !cc.includes(ccs)
                    {
                        return Err(format!(
                            "{} is not inside its parent's cpuset",
                            self.describe(ch)
                        ));
                    }
                }
            } else if o.cpuset.is_some() || o.nodeset.is_some() {
                return Err(format!("{} carries sets", self.describe(id)));
            }
            if matches!(o.obj_type, ObjType::PU | ObjType::NUMANode) && o.os_index.is_none() {
                return Err(format!("{} has no OS index", self.describe(id)));
            }
        }
        gps.sort_unstable();
        if let Some(w) = gps.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("gp_index {} used twice", w[0]));
        }
        for (d, level) in self.levels.iter().enumerate() {
            let Some(&first) = level.first() else {
                return Err(format!("level {d} is empty"));
            };
            for (i, &id) in level.iter().enumerate() {
                let o = self.obj(id);
                if o.depth != Depth::Normal(d as u32) || o.logical_index != i as u32 {
                    return Err(format!(
                        "{} has wrong depth or logical index",
                        self.describe(id)
                    ));
                }
                if !self.same_level_type(first, id) {
                    return Err(format!("level {d} mixes types"));
                }
            }
        }
        if let Some(last) = self.levels.last()
            && last.iter().any(|&id| self.obj(id).obj_type != ObjType::PU)
        {
            return Err("the bottom level is not made of PUs".into());
        }
        let pus = self.objs_by_type(ObjType::PU);
        let mut all = CpuSet::new();
        for &p in &pus {
            if let Some(c) = &self.obj(p).complete_cpuset {
                all.or_assign(c);
            }
        }
        if !self.complete_cpuset().includes(&all) {
            return Err("root complete cpuset misses some PUs".into());
        }
        let mut nodes = NodeSet::new();
        for &n in self.level(Depth::NumaNode) {
            let os = self.obj(n).os_index.unwrap_or(u32::MAX);
            if !self.complete_nodeset().is_set(os) {
                return Err(format!("root complete nodeset misses NUMA node {os}"));
            }
            if let Some(s) = &self.obj(n).nodeset {
                nodes.or_assign(s);
            }
        }
        // The converse, as hwloc's checker has it: every node the root
        // counts is held by a NUMA node of the tree (a next `finish`
        // recomputes the root's nodeset from them).
        if !nodes.includes(self.nodeset()) {
            return Err(format!(
                "root nodeset {} holds nodes that no NUMA node has",
                self.nodeset()
            ));
        }
        self.check_own_sets()
    }

    /// The rules hwloc's checker has for single objects: a PU's sets are
    /// its own index only, as a NUMA node's node sets are; a CPU cache's
    /// attributes name its level and a kind its type allows.
    fn check_own_sets(&self) -> Result<(), String> {
        use alloc::format;
        for id in self.iter_dfs() {
            let o = self.obj(id);
            let only_own = |s: Option<&crate::bitmap::Bitmap>| {
                s.is_some_and(|s| {
                    s.weight() == Some(1) && o.os_index.is_some() && s.first() == o.os_index
                })
            };
            match o.obj_type {
                ObjType::PU
                    if !only_own(o.cpuset.as_ref().map(|s| s.bitmap()))
                        || !only_own(o.complete_cpuset.as_ref().map(|s| s.bitmap())) =>
                {
                    return Err(format!(
                        "{} has sets other than its own index",
                        self.describe(id)
                    ));
                }
                ObjType::NUMANode
                    if !only_own(o.nodeset.as_ref().map(|s| s.bitmap()))
                        || !only_own(o.complete_nodeset.as_ref().map(|s| s.bitmap())) =>
                {
                    return Err(format!(
                        "{} has node sets other than its own index",
                        self.describe(id)
                    ));
                }
                t if t.is_cache() => {
                    let fits = o.cache().is_some_and(|c| {
                        Some(c.depth) == t.cache_level()
                            && (c.kind == CacheKind::Instruction) == t.is_icache()
                    });
                    if !fits {
                        return Err(format!(
                            "{} has cache attributes of another level or kind",
                            self.describe(id)
                        ));
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The sums hwloc's checker verifies, without recursion: a normal
    /// object's cpuset is the disjoint union of its normal children's (a
    /// PU has none), and its nodeset holds exactly the nodes attached
    /// (as memory children) to it, to its ancestors and to its normal
    /// descendants, each node attached once; memory children have their
    /// parent's cpuset and come in the order of their nodes.  The walk keeps two sets per level of the
    /// current path, so its memory is bounded by the tree's depth.
    fn check_set_sums(&self) -> Result<(), String> {
        use alloc::format;
        use alloc::vec::Vec;
        struct Frame {
            id: ObjId,
            next_child: usize,
            /// Nodes attached to this object and its ancestors.
            above: NodeSet,
            /// Nodes attached to the normal descendants finished so far.
            below: NodeSet,
        }
        let enter = |id: ObjId, parent_above: &NodeSet| -> Result<Frame, String> {
            let o = self.obj(id);
            let mut local = NodeSet::new();
            let mut last_first: Option<u32> = None;
            for &m in &o.memory_children {
                let mo = self.obj(m);
                if mo.cpuset != o.cpuset {
                    return Err(format!(
                        "{} does not have its parent's cpuset",
                        self.describe(m)
                    ));
                }
                let ns = mo
                    .nodeset
                    .as_ref()
                    .ok_or_else(|| format!("{} lacks a nodeset", self.describe(m)))?;
                if ns.intersects(&local) {
                    return Err(format!(
                        "memory children of {} share nodes",
                        self.describe(id)
                    ));
                }
                local.or_assign(ns);
                let first = mo.complete_nodeset.as_ref().and_then(|s| s.first());
                if first.is_none() || first <= last_first {
                    return Err(format!(
                        "memory children of {} are not in the order of their nodes",
                        self.describe(id)
                    ));
                }
                last_first = first;
            }
            if local.intersects(parent_above) {
                return Err(format!(
                    "{} has nodes attached to one of its ancestors too",
                    self.describe(id)
                ));
            }
            if o.obj_type != ObjType::PU {
                let mut sum = CpuSet::new();
                for &c in &o.children {
                    if let Some(cs) = &self.obj(c).cpuset {
                        if cs.intersects(&sum) {
                            return Err(format!("children of {} intersect", self.describe(id)));
                        }
                        sum.or_assign(cs);
                    }
                }
                if o.cpuset.as_ref() != Some(&sum) {
                    return Err(format!(
                        "{} has a cpuset that is not the union of its children's ({sum})",
                        self.describe(id)
                    ));
                }
            }
            local.or_assign(parent_above);
            Ok(Frame {
                id,
                next_child: 0,
                above: local,
                below: NodeSet::new(),
            })
        };
        let mut path: Vec<Frame> = alloc::vec![enter(self.root, &NodeSet::new())?];
        while let Some(top) = path.last_mut() {
            let o = self.obj(top.id);
            if let Some(&c) = o.children.get(top.next_child) {
                top.next_child += 1;
                let frame = enter(c, &top.above)?;
                path.push(frame);
                continue;
            }
            let done = path.pop().expect("the path is not empty");
            if done.below.intersects(&done.above) {
                return Err(format!(
                    "{} has nodes attached both below and above it",
                    self.describe(done.id)
                ));
            }
            let mut all = done.above.clone();
            all.or_assign(&done.below);
            if o.nodeset.as_ref() != Some(&all) {
                return Err(format!(
                    "{} has a nodeset that is not the nodes attached above and below it ({all})",
                    self.describe(done.id)
                ));
            }
            if let Some(parent) = path.last_mut() {
                // What this subtree attaches below the parent: its nodes
                // minus those attached to the parent and its ancestors.
                let mine = all.and_not(&parent.above);
                if mine.intersects(&parent.below) {
                    return Err(format!(
                        "children of {} have nodes in common",
                        self.describe(parent.id)
                    ));
                }
                parent.below.or_assign(&mine);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::test_machines::small_machine;
    use alloc::string::ToString;

    #[test]
    fn broken_links_are_reported_with_their_object() {
        let mut t = small_machine();
        assert_eq!(t.check(), Ok(()));
        let pu = t.objs_by_type(ObjType::PU)[1];
        t.obj_mut(pu).sibling_rank = 7;
        let e = t.check().unwrap_err();
        assert_eq!(
            e.message(),
            "PU P#1 (cpuset 0x00000002) has a wrong sibling rank"
        );
        assert_eq!(
            crate::topology::TopologyError::from(e.clone()).to_string(),
            e.to_string()
        );
    }

    #[test]
    fn a_root_node_without_its_numa_node_is_reported() {
        let mut t = small_machine();
        let r = t.root_mut();
        r.nodeset.as_mut().unwrap().set(9);
        r.complete_nodeset.as_mut().unwrap().set(9);
        assert_eq!(
            t.check().unwrap_err().message(),
            "root nodeset 0x00000203 holds nodes that no NUMA node has"
        );
    }

    /// The machine of `small_machine` with one change, and the message the
    /// checker gives for it.
    fn violation(change: impl FnOnce(&mut Topology)) -> String {
        let mut t = small_machine();
        change(&mut t);
        t.check_hwloc().unwrap_err().message().to_string()
    }

    #[test]
    fn children_cpusets_must_add_up_to_their_parent() {
        let m = violation(|t| {
            let p = t.objs_by_type(ObjType::Package)[0];
            t.obj_mut(p).cpuset.as_mut().unwrap().unset(3);
            let n = t.objs_by_type(ObjType::NUMANode)[0];
            t.obj_mut(n).cpuset.as_mut().unwrap().unset(3);
        });
        assert!(m.contains("not the union of its children's"), "{m}");
    }

    #[test]
    fn pus_and_numa_nodes_hold_their_own_index_only() {
        let m = violation(|t| {
            let n = t.objs_by_type(ObjType::NUMANode)[0];
            t.obj_mut(n).complete_nodeset.as_mut().unwrap().set(1);
        });
        assert!(m.contains("node sets other than its own index"), "{m}");
        let m = violation(|t| {
            let p = t.objs_by_type(ObjType::PU)[3];
            t.obj_mut(p).cpuset = Some(CpuSet::new());
        });
        assert!(!m.is_empty(), "{m}");
    }

    #[test]
    fn cache_attributes_name_the_level_of_their_type() {
        for depth in [0, 3, 200] {
            let m = violation(|t| {
                let l2 = t.objs_by_type(ObjType::L2Cache)[1];
                if let ObjAttr::Cache(c) = &mut t.obj_mut(l2).attr {
                    c.depth = depth;
                }
            });
            assert!(m.contains("cache attributes of another level"), "{m}");
        }
        let m = violation(|t| {
            let l2 = t.objs_by_type(ObjType::L2Cache)[0];
            if let ObjAttr::Cache(c) = &mut t.obj_mut(l2).attr {
                c.kind = CacheKind::Instruction;
            }
        });
        assert!(m.contains("another level or kind"), "{m}");
        let m = violation(|t| {
            let l2 = t.objs_by_type(ObjType::L2Cache)[0];
            t.obj_mut(l2).attr = ObjAttr::None;
        });
        assert!(m.contains("another level or kind"), "{m}");
    }

    #[test]
    fn nodesets_are_the_nodes_attached_above_and_below() {
        // A core claiming the other package's node.
        let m = violation(|t| {
            let c = t.objs_by_type(ObjType::Core)[0];
            t.obj_mut(c).nodeset.as_mut().unwrap().set(1);
            t.obj_mut(c).complete_nodeset.as_mut().unwrap().set(1);
        });
        assert!(m.contains("not the nodes attached above and below"), "{m}");
        // A package forgetting its own node.
        let m = violation(|t| {
            let p = t.objs_by_type(ObjType::Package)[1];
            t.obj_mut(p).nodeset = Some(NodeSet::new());
        });
        assert!(m.contains("nodeset"), "{m}");
        // A memory child without its parent's cpuset.
        let m = violation(|t| {
            let n = t.objs_by_type(ObjType::NUMANode)[1];
            t.obj_mut(n).cpuset = Some(CpuSet::from_index(4));
        });
        assert!(m.contains("does not have its parent's cpuset"), "{m}");
    }
}
