//! Queries on the tree: objects by id, levels, depths of types, the root's
//! sets, depth-first traversal and global persistent indexes, as hwloc's
//! `hwloc_get_*` accessors.

use alloc::vec;
use alloc::vec::Vec;

use super::{SpecialLevel, Topology, TypeDepth};
use crate::bitmap::{CpuSet, NodeSet};
use crate::object::*;

impl Topology {
    /// The root object's id (`hwloc_get_root_obj`).
    #[doc(alias = "hwloc_get_root_obj")]
    #[inline]
    pub fn root(&self) -> ObjId {
        self.root
    }

    /// The object with this id.
    ///
    /// # Panics
    /// If the id was never returned by this topology or the object was removed.
    #[inline]
    pub fn obj(&self, id: ObjId) -> &Object {
        self.objs[id]
            .as_ref()
            .expect("object id refers to a removed object")
    }

    /// The object with this id, mutably.  Changing sets or types after
    /// [`finish`](Self::finish) requires calling it again.
    ///
    /// # Panics
    /// As [`obj`](Self::obj).
    #[inline]
    pub fn obj_mut(&mut self, id: ObjId) -> &mut Object {
        if let Some(b) = self.set_bounds.get_mut(id) {
            *b = None;
        }
        self.objs[id]
            .as_mut()
            .expect("object id refers to a removed object")
    }

    /// The object with this id, if it is still in the topology.
    #[inline]
    pub fn get(&self, id: ObjId) -> Option<&Object> {
        self.objs.get(id).and_then(|o| o.as_ref())
    }

    /// Number of normal levels (`hwloc_topology_get_depth`).
    #[doc(alias = "hwloc_topology_get_depth")]
    #[inline]
    pub fn depth(&self) -> u32 {
        self.levels.len() as u32
    }

    /// Objects of a level, left to right: its length is
    /// `hwloc_get_nbobjs_by_depth`, walking it `hwloc_get_next_obj_by_depth`.
    #[doc(alias = "hwloc_get_nbobjs_by_depth")]
    #[doc(alias = "hwloc_get_next_obj_by_depth")]
    #[inline]
    pub fn level(&self, depth: Depth) -> &[ObjId] {
        match depth {
            Depth::Normal(d) => self
                .levels
                .get(d as usize)
                .map(|v| v.as_slice())
                .unwrap_or(&[]),
            other => match SpecialLevel::of(other) {
                Some(s) => &self.special[s as usize],
                None => &[],
            },
        }
    }

    /// All normal levels, from the root down.
    #[inline]
    pub fn normal_levels(&self) -> &[Vec<ObjId>] {
        &self.levels
    }

    /// Where objects of a type are (`hwloc_get_type_depth`).
    #[doc(alias = "hwloc_get_type_depth")]
    #[inline]
    pub fn type_depth(&self, t: ObjType) -> TypeDepth {
        if let Some(d) = Depth::special_for(t) {
            return TypeDepth::Depth(d);
        }
        self.type_depth[t.index()]
    }

    /// The type of a level's objects (`hwloc_get_depth_type`).
    #[doc(alias = "hwloc_get_depth_type")]
    #[inline]
    pub fn depth_type(&self, depth: Depth) -> Option<ObjType> {
        self.level(depth).first().map(|&id| self.obj(id).obj_type)
    }

    /// All objects of a type, level by level, left to right.
    pub fn objs_by_type(&self, t: ObjType) -> Vec<ObjId> {
        if let Some(d) = Depth::special_for(t) {
            return self.level(d).to_vec();
        }
        self.levels
            .iter()
            .filter(|l| l.first().is_some_and(|&i| self.obj(i).obj_type == t))
            .flat_map(|l| l.iter().copied())
            .collect()
    }

    /// The root's cpuset: allowed PUs of the topology
    /// (`hwloc_topology_get_topology_cpuset`).
    #[doc(alias = "hwloc_topology_get_topology_cpuset")]
    pub fn cpuset(&self) -> &CpuSet {
        self.obj(self.root)
            .cpuset
            .as_ref()
            .expect("root has a cpuset")
    }
    /// The root's complete cpuset: every PU, online or not
    /// (`hwloc_topology_get_complete_cpuset`).
    #[doc(alias = "hwloc_topology_get_complete_cpuset")]
    pub fn complete_cpuset(&self) -> &CpuSet {
        self.obj(self.root)
            .complete_cpuset
            .as_ref()
            .expect("root has a complete cpuset")
    }
    /// The root's nodeset (`hwloc_topology_get_topology_nodeset`).
    #[doc(alias = "hwloc_topology_get_topology_nodeset")]
    pub fn nodeset(&self) -> &NodeSet {
        self.obj(self.root)
            .nodeset
            .as_ref()
            .expect("root has a nodeset")
    }
    /// The root's complete nodeset (`hwloc_topology_get_complete_nodeset`).
    #[doc(alias = "hwloc_topology_get_complete_nodeset")]
    pub fn complete_nodeset(&self) -> &NodeSet {
        self.obj(self.root)
            .complete_nodeset
            .as_ref()
            .expect("root has a complete nodeset")
    }

    /// Puts the OS devices among each object's I/O children in name order,
    /// after its other I/O children (hwloc's `HWLOC_DEBUG_SORT_CHILDREN`,
    /// which makes outputs independent of the order directories list their
    /// entries in). For a tree not finished yet: finishing numbers them.
    pub fn sort_os_devices_by_name(&mut self) {
        for id in self.iter_dfs() {
            let mut io = core::mem::take(&mut self.obj_mut(id).io_children);
            let (others, mut osdevs): (Vec<ObjId>, Vec<ObjId>) = io
                .iter()
                .partition(|&&c| self.obj(c).obj_type != ObjType::OSDevice);
            osdevs.sort_by(|&a, &b| self.obj(a).name.cmp(&self.obj(b).name));
            io.clear();
            io.extend(others.into_iter().chain(osdevs));
            self.obj_mut(id).io_children = io;
        }
    }

    /// Every object in depth-first order: an object, then its memory,
    /// normal, I/O and misc children (hwloc's XML export order).
    pub fn iter_dfs(&self) -> Vec<ObjId> {
        let mut out = Vec::with_capacity(self.objs.len());
        let mut stack = vec![self.root];
        while let Some(id) = stack.pop() {
            out.push(id);
            let o = self.obj(id);
            for list in [
                &o.misc_children,
                &o.io_children,
                &o.children,
                &o.memory_children,
            ] {
                stack.extend(list.iter().rev());
            }
        }
        out
    }

    /// Every live object id, in arena order.
    pub fn ids(&self) -> impl Iterator<Item = ObjId> + '_ {
        self.objs
            .iter()
            .enumerate()
            .filter_map(|(i, o)| o.as_ref().map(|_| i))
    }

    /// The next global persistent index and bumps the counter.
    pub fn alloc_gp_index(&mut self) -> u64 {
        let g = self.next_gp_index;
        self.next_gp_index += 1;
        g
    }

    /// Makes sure future gp indexes are above `g` (for imported objects).
    pub fn reserve_gp_index(&mut self, g: u64) {
        if g >= self.next_gp_index {
            self.next_gp_index = g.saturating_add(1);
        }
    }

    /// Finds a live object by gp index.
    pub fn obj_by_gp_index(&self, gp: u64) -> Option<ObjId> {
        self.ids().find(|&i| self.obj(i).gp_index == gp)
    }

    /// Finds an object by type and OS index (for NUMA nodes,
    /// `hwloc_get_numanode_obj_by_os_index`; for PUs,
    /// [`pu_by_os_index`](Self::pu_by_os_index) is faster).
    #[doc(alias = "hwloc_get_numanode_obj_by_os_index")]
    pub fn obj_by_os_index(&self, t: ObjType, os: u32) -> Option<ObjId> {
        self.objs_by_type(t)
            .into_iter()
            .find(|&i| self.obj(i).os_index == Some(os))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::String;

    #[test]
    fn os_devices_sort_by_name_after_the_other_io_children() {
        let mut t = Topology::new();
        t.set_io_types_filter(crate::topology::TypeFilter::KeepAll);
        let root = t.root();
        let osdev = |name: &str| {
            let mut o = Object::new(ObjType::OSDevice, None);
            o.name = Some(String::from(name));
            o
        };
        for name in ["sdb", "nvme0n1"] {
            t.insert_by_parent(root, osdev(name)).unwrap();
        }
        let bridge = t
            .insert_by_parent(root, Object::new(ObjType::Bridge, None))
            .unwrap();
        t.insert_by_parent(root, osdev("dax0.0")).unwrap();
        t.sort_os_devices_by_name();
        let io = t.obj(root).io_children().to_vec();
        assert_eq!(io[0], bridge);
        let names: Vec<_> = io[1..]
            .iter()
            .map(|&c| t.obj(c).name.clone().unwrap_or_default())
            .collect();
        assert_eq!(names, ["dax0.0", "nvme0n1", "sdb"]);
    }
}
