//! The common locality queries of a finished topology, as hwloc's inline
//! helpers (`hwloc_get_obj_by_type`, `hwloc_get_next_obj_by_type`,
//! `hwloc_get_ancestor_obj_by_type`, `hwloc_get_obj_covering_cpuset`,
//! `hwloc_cpuset_to_nodeset`).
//!
//! They rely on what [`Topology::finish`] leaves behind: levels indexed by
//! logical index (so "object `i` of a type" and "next object" are O(1)),
//! parent links (ancestors are O(depth)) and, for covering queries, a table
//! from PU OS index to PU object, so that the walk starts at the set's
//! first PU and goes up instead of scanning children from the root.

use alloc::vec::Vec;

use super::{Topology, TypeDepth};
use crate::bitmap::{CpuSet, NodeSet};
use crate::object::*;

/// "No parent" in [`Links::parent`].
const NONE: u32 = u32::MAX;

/// Parent, type and logical index of every arena slot, in dense arrays
/// (`None` type for removed objects), valid while the topology is
/// finished.  Walking up a tree or to the next cousin reads these few
/// bytes instead of whole objects.
#[derive(Clone, Debug, Default)]
pub(super) struct Links {
    parent: Vec<u32>,
    ty: Vec<Option<ObjType>>,
    logical: Vec<u32>,
    /// First and last PU of each NUMA node's cpuset, in level order
    /// (`None` for an empty or infinite set).
    numa_bounds: Vec<Option<(u32, u32)>>,
}

impl Topology {
    /// The level holding objects of type `t`, when exactly one does.
    #[inline]
    fn single_level(&self, t: ObjType) -> Option<&[ObjId]> {
        match self.type_depth(t) {
            TypeDepth::Depth(d) => Some(self.level(d)),
            _ => None,
        }
    }

    /// Number of objects of type `t` (`hwloc_get_nbobjs_by_type`): 0 when
    /// none, and `None` when several levels have that type.
    #[doc(alias = "hwloc_get_nbobjs_by_type")]
    #[inline]
    pub fn nb_objs_by_type(&self, t: ObjType) -> Option<usize> {
        match self.type_depth(t) {
            TypeDepth::Depth(d) => Some(self.level(d).len()),
            TypeDepth::Unknown => Some(0),
            TypeDepth::Multiple => None,
        }
    }

    /// Object `idx` (logical index) of a level (`hwloc_get_obj_by_depth`).
    #[doc(alias = "hwloc_get_obj_by_depth")]
    #[inline]
    pub fn obj_by_depth(&self, depth: Depth, idx: usize) -> Option<ObjId> {
        self.level(depth).get(idx).copied()
    }

    /// Object `idx` (logical index) of type `t` (`hwloc_get_obj_by_type`);
    /// `None` also when several levels have that type.
    #[doc(alias = "hwloc_get_obj_by_type")]
    #[inline]
    pub fn obj_by_type(&self, t: ObjType, idx: usize) -> Option<ObjId> {
        self.single_level(t)?.get(idx).copied()
    }

    /// The object after `prev` on its level, or the first object of type
    /// `t` when `prev` is `None` (`hwloc_get_next_obj_by_type`).  `None` at
    /// the end, and when several levels have that type.
    #[doc(alias = "hwloc_get_next_obj_by_type")]
    #[inline]
    pub fn next_obj_by_type(&self, t: ObjType, prev: Option<ObjId>) -> Option<ObjId> {
        let level = self.single_level(t)?;
        match prev {
            None => level.first().copied(),
            Some(p) if self.finished => {
                let q = &self.links;
                if q.ty.get(p).copied().flatten() != Some(t) {
                    return None;
                }
                level.get(q.logical[p] as usize + 1).copied()
            }
            Some(p) => {
                let o = self.get(p)?;
                if o.obj_type != t {
                    return None;
                }
                level.get(o.logical_index as usize + 1).copied()
            }
        }
    }

    /// The nearest ancestor of `id` of type `t`
    /// (`hwloc_get_ancestor_obj_by_type`).
    #[doc(alias = "hwloc_get_ancestor_obj_by_type")]
    #[inline]
    pub fn ancestor_by_type(&self, id: ObjId, t: ObjType) -> Option<ObjId> {
        if self.finished {
            // Dense parent and type arrays: a few bytes per hop instead of
            // a whole object.
            let q = &self.links;
            q.ty.get(id).copied().flatten()?;
            let mut cur = q.parent[id];
            while cur != NONE {
                let c = cur as usize;
                if q.ty[c] == Some(t) {
                    return Some(c);
                }
                cur = q.parent[c];
            }
            return None;
        }
        let mut cur = self.get(id)?.parent;
        while let Some(p) = cur {
            let o = self.obj(p);
            if o.obj_type == t {
                return Some(p);
            }
            cur = o.parent;
        }
        None
    }

    /// The PU with OS index `os`, in O(1) once the topology is finished
    /// (`hwloc_get_pu_obj_by_os_index`).
    #[doc(alias = "hwloc_get_pu_obj_by_os_index")]
    #[inline]
    pub fn pu_by_os_index(&self, os: u32) -> Option<ObjId> {
        match self.pu_by_os.get(os as usize) {
            Some(&id) if id != ObjId::MAX => Some(id),
            _ => None,
        }
    }

    /// The deepest normal object whose cpuset includes `set`
    /// (`hwloc_get_obj_covering_cpuset`); `None` when `set` is empty or
    /// not included in the topology's cpuset.
    #[doc(alias = "hwloc_get_obj_covering_cpuset")]
    pub fn obj_covering_cpuset(&self, set: &CpuSet) -> Option<ObjId> {
        let first = set.first()?;
        if !self.cpuset().includes(set) {
            return None;
        }
        // Start at the set's first PU and go up to the first object that
        // holds the whole set; deeper objects cannot hold it.
        // The table may be stale after changes since the last `finish`.
        let mut cur = match self.pu_by_os_index(first) {
            Some(pu)
                if self
                    .get(pu)
                    .is_some_and(|o| o.obj_type == ObjType::PU && o.os_index == Some(first)) =>
            {
                pu
            }
            _ => return Some(self.covering_from_root(set)),
        };
        loop {
            let o = self.obj(cur);
            if o.cpuset.as_ref().is_some_and(|c| c.includes(set)) {
                return Some(cur);
            }
            match o.parent {
                Some(p) => cur = p,
                None => return Some(cur),
            }
        }
    }

    /// hwloc's own walk down from the root, for sets whose first PU is not
    /// a PU object (a topology not finished since its last change).
    fn covering_from_root(&self, set: &CpuSet) -> ObjId {
        let mut cur = self.root;
        'down: loop {
            for &c in &self.obj(cur).children {
                if self.obj(c).cpuset.as_ref().is_some_and(|s| s.includes(set)) {
                    cur = c;
                    continue 'down;
                }
            }
            return cur;
        }
    }

    /// The NUMA nodes whose PUs intersect `cpuset`
    /// (`hwloc_cpuset_to_nodeset`).
    #[doc(alias = "hwloc_cpuset_to_nodeset")]
    pub fn cpuset_to_nodeset(&self, cpuset: &CpuSet) -> NodeSet {
        let mut n = NodeSet::new();
        let nodes = self.level(Depth::NumaNode);
        // First and last PU of each node, when known: nodes whose range
        // misses the set's are skipped without reading their bitmaps.
        let bounds = (self.finished && self.links.numa_bounds.len() == nodes.len())
            .then_some(&self.links.numa_bounds);
        let range = cpuset.first().zip(cpuset.last());
        for (k, &id) in nodes.iter().enumerate() {
            if let (Some(b), Some((lo, hi))) = (bounds, range) {
                match b[k] {
                    Some((first, last)) if last < lo || first > hi => continue,
                    _ => {}
                }
            }
            let o = self.obj(id);
            if o.cpuset.as_ref().is_some_and(|c| c.intersects(cpuset))
                && let Some(os) = o.os_index
            {
                n.set(os);
            }
        }
        n
    }

    /// Fills the dense per-object links that the queries read.
    pub(super) fn index_links(&mut self) {
        let mut q = core::mem::take(&mut self.links);
        q.parent.clear();
        q.ty.clear();
        q.logical.clear();
        for o in &self.objs {
            match o {
                Some(o) => {
                    q.parent.push(o.parent.map_or(NONE, |p| p as u32));
                    q.ty.push(Some(o.obj_type));
                    q.logical.push(o.logical_index);
                }
                None => {
                    q.parent.push(NONE);
                    q.ty.push(None);
                    q.logical.push(0);
                }
            }
        }
        q.numa_bounds.clear();
        for &id in self.level(Depth::NumaNode) {
            let b = self
                .obj(id)
                .cpuset
                .as_ref()
                .and_then(|c| c.first().zip(c.last()));
            q.numa_bounds.push(b);
        }
        self.links = q;
    }

    /// Fills the PU table that [`pu_by_os_index`](Self::pu_by_os_index) reads.
    pub(super) fn index_pus(&mut self) {
        let mut table = core::mem::take(&mut self.pu_by_os);
        table.clear();
        let pus = match self.type_depth[ObjType::PU.index()] {
            TypeDepth::Depth(d) => d,
            _ => {
                self.pu_by_os = table;
                return;
            }
        };
        for &id in self.level(pus) {
            if let Some(os) = self.obj(id).os_index {
                let os = os as usize;
                // OS indexes are dense in practice; a sparse one far away
                // would make the table huge, so such topologies keep the
                // walk from the root.
                if os > 4 * self.objs.len() + 1024 {
                    continue;
                }
                if table.len() <= os {
                    table.resize(os + 1, ObjId::MAX);
                }
                table[os] = id;
            }
        }
        self.pu_by_os = table;
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_machines::{cs, small_machine};
    use super::*;

    #[test]
    fn by_type_and_next() {
        let t = small_machine();
        assert_eq!(t.nb_objs_by_type(ObjType::Core), Some(4));
        assert_eq!(t.nb_objs_by_type(ObjType::Die), Some(0));
        let c2 = t.obj_by_type(ObjType::Core, 2).unwrap();
        assert_eq!(t.obj(c2).os_index, Some(2));
        let mut seen = 0;
        let mut cur = None;
        while let Some(pu) = t.next_obj_by_type(ObjType::PU, cur) {
            assert_eq!(t.obj(pu).logical_index(), seen);
            seen += 1;
            cur = Some(pu);
        }
        assert_eq!(seen, 8);
        assert_eq!(
            t.next_obj_by_type(ObjType::Core, Some(c2)),
            t.obj_by_type(ObjType::Core, 3)
        );
        // A previous object of another type ends the walk.
        assert_eq!(t.next_obj_by_type(ObjType::PU, Some(c2)), None);
    }

    #[test]
    fn ancestors_and_covering() {
        let t = small_machine();
        let pu5 = t.pu_by_os_index(5).unwrap();
        let pkg = t.ancestor_by_type(pu5, ObjType::Package).unwrap();
        assert_eq!(t.obj(pkg).os_index, Some(1));
        assert_eq!(t.ancestor_by_type(pu5, ObjType::NUMANode), None);
        assert_eq!(t.obj_covering_cpuset(&cs(5, 5)), Some(pu5));
        let core = t.obj_covering_cpuset(&cs(4, 5)).unwrap();
        assert_eq!(t.obj(core).obj_type, ObjType::Core);
        assert_eq!(t.obj_covering_cpuset(&cs(4, 7)), Some(pkg));
        assert_eq!(t.obj_covering_cpuset(&cs(3, 4)), Some(t.root()));
        assert_eq!(t.obj_covering_cpuset(&CpuSet::new()), None);
        assert_eq!(t.obj_covering_cpuset(&cs(7, 8)), None);
        // The walk from the root agrees with the one from the PU.
        for (a, b) in [(0, 0), (0, 1), (2, 3), (0, 3), (1, 6), (6, 7)] {
            let set = cs(a, b);
            assert_eq!(
                t.obj_covering_cpuset(&set),
                Some(t.covering_from_root(&set))
            );
        }
    }

    #[test]
    fn unfinished_topologies_walk_the_objects() {
        let mut t = small_machine();
        let pu5 = t.pu_by_os_index(5).unwrap();
        let pkg = t.ancestor_by_type(pu5, ObjType::Package);
        let next = t.next_obj_by_type(ObjType::PU, Some(pu5));
        let root = t.root();
        t.insert_by_parent(root, Object::new(ObjType::Misc, None))
            .unwrap();
        assert!(!t.is_finished());
        assert_eq!(t.ancestor_by_type(pu5, ObjType::Package), pkg);
        assert_eq!(t.next_obj_by_type(ObjType::PU, Some(pu5)), next);
    }

    #[test]
    fn nodesets() {
        let t = small_machine();
        assert_eq!(t.cpuset_to_nodeset(&cs(1, 2)), NodeSet::from_index(0));
        let both = t.cpuset_to_nodeset(&cs(3, 4));
        assert!(both.is_set(0) && both.is_set(1));
        assert!(t.cpuset_to_nodeset(&CpuSet::new()).is_empty());
    }

    extern crate std;
    use alloc::format;
    use alloc::string::{String, ToString};
    use alloc::vec::Vec;
    use proptest::prelude::*;

    /// Random synthetic machines: packages, NUMA nodes, cores and PUs, with
    /// the PU indexes rotated so that OS and logical orders differ.
    fn arb_machine() -> impl Strategy<Value = Topology> {
        (1u32..4, 1u32..3, 1u32..5, 1u32..4, any::<u64>()).prop_map(|(p, n, c, u, seed)| {
            let total = u64::from(p * n * c * u);
            let shift = seed % total;
            let idx: Vec<String> = (0..total)
                .map(|i| ((i + shift) % total).to_string())
                .collect();
            let desc = format!(
                "pack:{p} numa:{n} core:{c} pu:{u}(indexes={})",
                idx.join(",")
            );
            crate::synthetic::parse(&desc)
                .and_then(|d| d.build(Topology::new()))
                .expect("valid description")
        })
    }

    /// The object walks, without the dense arrays and tables.
    fn naive_ancestor(t: &Topology, id: ObjId, ty: ObjType) -> Option<ObjId> {
        let mut cur = t.obj(id).parent();
        while let Some(p) = cur {
            if t.obj(p).obj_type == ty {
                return Some(p);
            }
            cur = t.obj(p).parent();
        }
        None
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn prop_queries_match_object_walks(t in arb_machine(), a in any::<u16>(), b in any::<u16>()) {
            let n = t.nb_objs_by_type(ObjType::PU).unwrap();
            let pa = t.obj_by_type(ObjType::PU, usize::from(a) % n).unwrap();
            let pb = t.obj_by_type(ObjType::PU, usize::from(b) % n).unwrap();
            let mut set = t.obj(pa).cpuset.clone().unwrap();
            set.or_assign(t.obj(pb).cpuset.as_ref().unwrap());
            prop_assert_eq!(t.obj_covering_cpuset(&set), Some(t.covering_from_root(&set)));
            let os = t.obj(pa).os_index.unwrap();
            prop_assert_eq!(t.pu_by_os_index(os), Some(pa));
            for ty in [ObjType::Core, ObjType::Package, ObjType::Machine, ObjType::NUMANode] {
                prop_assert_eq!(t.ancestor_by_type(pa, ty), naive_ancestor(&t, pa, ty));
            }
            let mut walked = Vec::new();
            let mut cur = None;
            while let Some(o) = t.next_obj_by_type(ObjType::Core, cur) {
                walked.push(o);
                cur = Some(o);
            }
            prop_assert_eq!(walked.as_slice(), t.level(t.obj(t.obj_by_type(ObjType::Core, 0).unwrap()).depth()));
            let mut naive = NodeSet::new();
            for &id in t.level(Depth::NumaNode) {
                let o = t.obj(id);
                if o.cpuset.as_ref().unwrap().intersects(&set) {
                    naive.set(o.os_index.unwrap());
                }
            }
            prop_assert_eq!(t.cpuset_to_nodeset(&set), naive);
        }
    }
}
