//! The consistency checker of a finished tree, after hwloc's
//! `hwloc_topology_check`: links, sibling ranks, child order, sets, levels
//! and indexes.

use alloc::string::String;
use core::cmp::Ordering;

use super::{Topology, MAX_TREE_DEPTH};
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
    /// hwloc's `hwloc_topology_check` does (which aborts instead).
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
    /// holds; NUMA nodes and PUs have OS indexes.
    #[doc(alias = "hwloc_topology_check")]
    pub fn check(&self) -> Result<(), CheckError> {
        self.first_violation()
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
                    if let Some(ccs) = &co.complete_cpuset {
                        if !cc.includes(ccs) {
                            return Err(format!(
                                "{} is not inside its parent's cpuset",
                                self.describe(ch)
                            ));
                        }
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
        if let Some(last) = self.levels.last() {
            if last.iter().any(|&id| self.obj(id).obj_type != ObjType::PU) {
                return Err("the bottom level is not made of PUs".into());
            }
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
}
