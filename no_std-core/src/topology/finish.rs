//! Completing the tree once objects are in, as hwloc's
//! `hwloc_topology_load` does after discovery: sets propagated, disallowed
//! resources and filtered types removed, empty objects dropped, levels
//! that add no structure merged, then levels, depths, logical indexes,
//! special levels, total memory, symmetric subtrees, group depths and CPU
//! kind ranks computed.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::filters::{osdev_is_important, pci_class_is_important};
use super::{SpecialLevel, Topology, TopologyError, TypeDepth, TypeFilter};
use crate::bitmap::{CpuSet, NodeSet};
use crate::object::*;

impl Topology {
    /// Completes the topology after objects were added: sets are
    /// propagated, filters applied, redundant levels merged, and depths,
    /// logical indexes and special levels computed.  The result is then
    /// checked ([`check`](Self::check)): a tree that breaks an invariant
    /// (siblings whose sets intersect, a normal leaf that is not a PU,
    /// ...) is an error, [`TopologyError::Check`].
    pub fn finish(&mut self) -> Result<(), TopologyError> {
        let root = self.root;
        {
            let r = self.obj_mut(root);
            if r.cpuset.as_ref().is_none_or(|c| c.is_empty())
                && r.complete_cpuset.as_ref().is_none_or(|c| c.is_empty())
            {
                return Err(TopologyError::NoPu);
            }
        }
        // A machine with no NUMA node gets one holding everything.
        if self
            .obj(root)
            .complete_nodeset
            .as_ref()
            .is_none_or(|n| n.is_empty())
        {
            let mut node = Object::new(ObjType::NUMANode, Some(0));
            node.cpuset = self.obj(root).cpuset.clone();
            node.complete_cpuset = self.obj(root).complete_cpuset.clone();
            node.nodeset = Some(NodeSet::from_index(0));
            let _ = self.insert_memory(node)?;
        }
        {
            let r = self.obj_mut(root);
            let cc = r.complete_cpuset.clone().unwrap_or_default();
            let cn = r.complete_nodeset.clone().unwrap_or_default();
            let c = r.cpuset.get_or_insert_with(CpuSet::new);
            *c = &*c & &cc;
            let n = r.nodeset.get_or_insert_with(NodeSet::new);
            *n = &*n & &cn;
        }
        let rc = self.obj(root).cpuset.clone().unwrap_or_default();
        let rn = self.obj(root).nodeset.clone().unwrap_or_default();
        let current = (self.allowed_cpuset.clone(), self.allowed_nodeset.clone());
        let (req_c, req_n) = match self.allowed_request.take() {
            Some((request, narrowed)) if narrowed == current => request,
            _ => current,
        };
        self.allowed_cpuset = &req_c & &rc;
        self.allowed_nodeset = &req_n & &rn;
        self.allowed_request = Some((
            (req_c, req_n),
            (self.allowed_cpuset.clone(), self.allowed_nodeset.clone()),
        ));
        self.propagate_nodeset(root, None);
        self.fixup_sets(root);
        if !self.include_disallowed {
            let (ac, an) = (self.allowed_cpuset.clone(), self.allowed_nodeset.clone());
            self.remove_unused_sets(root, &ac, &an);
        }
        // The walk copies every child list (it removes objects): skip it
        // when no filter can remove anything.
        if self.type_filters_may_remove() {
            self.apply_type_filters(root);
            self.replace_displaced_memory()?;
        }
        self.filter_bridges(root, 0);
        self.remove_empty_children(root);
        if self.obj(root).cpuset.as_ref().is_none_or(|c| c.is_empty()) {
            return Err(TopologyError::NoPu);
        }
        if self.obj(root).nodeset.as_ref().is_none_or(|n| n.is_empty()) {
            return Err(TopologyError::NoNuma);
        }
        self.rebuild_levels();
        self.rank_cpukinds();
        // Only insertion uses the bounds: give their memory back.
        self.set_bounds = Vec::new();
        // Insertion refuses wrong parents and trees too deep, but objects
        // attached by parent bring their sets as given: whatever the
        // source, only a consistent tree comes out.
        self.check()?;
        self.finished = true;
        Ok(())
    }

    /// What [`finish`](Self::finish) and the restrictions do once the
    /// objects are in place: levels connected and merged, total memory,
    /// symmetric subtrees, group depths and references recomputed.
    pub(super) fn rebuild_levels(&mut self) {
        let root = self.root;
        self.connect();
        self.merge_structure_levels();
        self.connect();
        self.propagate_total_memory(root);
        self.propagate_symmetric(root);
        self.set_group_depths();
        self.refresh_references();
        self.index_pus();
        self.index_links();
    }

    /// Whether [`finish`](Self::finish) ran since the last structural change.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    fn propagate_nodeset(&mut self, id: ObjId, parent_nodeset: Option<&NodeSet>) {
        // Sets grow in place (`or_assign`) and child lists are walked by
        // index: this runs once per object of every load.
        // The object's own sets are overwritten below: take them out and
        // reuse their storage instead of cloning.
        let o = self.obj_mut(id);
        let mut ns = o.nodeset.take().unwrap_or_default();
        ns.clear();
        if let Some(p) = parent_nodeset {
            ns.or_assign(p);
        }
        let mut cns = o.complete_nodeset.take().unwrap_or_default();
        cns.or_assign(&ns);
        for i in 0..self.obj(id).memory_children.len() {
            let m = self.obj(id).memory_children[i];
            if self.obj(m).obj_type == ObjType::MemCache {
                self.propagate_memory_nodesets(m);
            }
            let mo = self.obj(m);
            if let Some(n) = &mo.nodeset {
                ns.or_assign(n);
            }
            // A complete set left unset is the plain one.
            if let Some(n) = mo.complete_nodeset.as_ref().or(mo.nodeset.as_ref()) {
                cns.or_assign(n);
            }
        }
        let nchildren = self.obj(id).children.len();
        for i in 0..nchildren {
            let c = self.obj(id).children[i];
            self.propagate_nodeset(c, Some(&ns));
        }
        for i in 0..nchildren {
            let co = self.obj(self.obj(id).children[i]);
            if let Some(n) = &co.nodeset {
                ns.or_assign(n);
            }
            if let Some(n) = &co.complete_nodeset {
                cns.or_assign(n);
            }
        }
        let o = self.obj_mut(id);
        o.nodeset = Some(ns);
        o.complete_nodeset = Some(cns);
    }

    /// Gives the memory-side cache `top` and those below it the nodes of
    /// the memory below them, as hwloc's `hwloc__attach_memory_object`
    /// keeps them.  Insertion by cpuset does so already, but a cache
    /// attached by parent brings its nodeset as given, or none: left so,
    /// [`fixup_sets`](Self::fixup_sets) would empty the nodesets of the
    /// NUMA nodes below it, which then went as empty while the root still
    /// counted them, and the next `finish` found no NUMA node at all.
    /// NUMA nodes keep their own nodesets; a cache's complete nodeset only
    /// grows (it may name nodes that are offline).  A loop, not recursion:
    /// memory-side caches may chain down to the depth limit.
    fn propagate_memory_nodesets(&mut self, top: ObjId) {
        // Caches breadth first: walked backwards, each comes after every
        // cache below it.
        let mut caches = vec![top];
        let mut i = 0;
        while i < caches.len() {
            let o = self.obj(caches[i]);
            caches.extend(
                o.memory_children
                    .iter()
                    .copied()
                    .filter(|&c| self.obj(c).obj_type == ObjType::MemCache),
            );
            i += 1;
        }
        for &id in caches.iter().rev() {
            let o = self.obj_mut(id);
            let mut ns = o.nodeset.take().unwrap_or_default();
            ns.clear();
            let mut cns = o.complete_nodeset.take().unwrap_or_default();
            for &c in &self.obj(id).memory_children {
                let co = self.obj(c);
                if let Some(n) = &co.nodeset {
                    ns.or_assign(n);
                }
                if let Some(n) = co.complete_nodeset.as_ref().or(co.nodeset.as_ref()) {
                    cns.or_assign(n);
                }
            }
            cns.or_assign(&ns);
            let o = self.obj_mut(id);
            o.nodeset = Some(ns);
            o.complete_nodeset = Some(cns);
        }
    }

    fn fixup_sets(&mut self, id: ObjId) {
        // The parent's sets are taken out while its children are narrowed
        // in place (and put back after): no set is copied per object.
        let o = self.obj_mut(id);
        let (pc, pcc, pn, pcn) = (
            o.cpuset.take().unwrap_or_default(),
            o.complete_cpuset.take().unwrap_or_default(),
            o.nodeset.take().unwrap_or_default(),
            o.complete_nodeset.take().unwrap_or_default(),
        );
        // Walked by index: nothing here changes the child lists.
        let n = o.children.len() + o.memory_children.len();
        for i in 0..n {
            let c = self.normal_or_memory_child(id, i);
            let co = self.obj_mut(c);
            let cs = co.cpuset.get_or_insert_with(CpuSet::new);
            cs.and_assign(&pc);
            let ns = co.nodeset.get_or_insert_with(NodeSet::new);
            ns.and_assign(&pn);
            match &mut co.complete_cpuset {
                Some(x) => x.and_assign(&pcc),
                None => co.complete_cpuset = co.cpuset.clone(),
            }
            match &mut co.complete_nodeset {
                Some(x) => x.and_assign(&pcn),
                None => co.complete_nodeset = co.nodeset.clone(),
            }
            if co.kind() == ObjKind::Memory {
                // Memory objects take their parent's sets (hwloc: a CPU-side
                // parent may have gone), except a complete cpuset that
                // already covers the parent's CPUs: hwloc's discovery fixes
                // sets while a node still hangs below its memory Group, so a
                // node keeps its own complete cpuset (offline CPUs of its
                // map left out) once the Group merges into its parent, and a
                // tree finished again keeps what the first finish gave.
                let own = co.complete_cpuset.take().filter(|c| c.includes(&pc));
                co.cpuset = Some(pc.clone());
                co.complete_cpuset = Some(match own {
                    Some(mut c) => {
                        c.and_assign(&pcc);
                        c
                    }
                    None => pcc.clone(),
                });
            }
        }
        for i in 0..n {
            self.fixup_sets(self.normal_or_memory_child(id, i));
        }
        let o = self.obj_mut(id);
        o.cpuset = Some(pc);
        o.complete_cpuset = Some(pcc);
        o.nodeset = Some(pn);
        o.complete_nodeset = Some(pcn);
    }

    fn remove_unused_sets(&mut self, id: ObjId, ac: &CpuSet, an: &NodeSet) {
        let o = self.obj_mut(id);
        // Usually nothing is disallowed: a read-only inclusion test avoids
        // rewriting (and renormalising) every set.
        if let Some(c) = &mut o.cpuset
            && !c.is_included_in(ac)
        {
            c.and_assign(ac);
        }
        if let Some(n) = &mut o.nodeset
            && !n.is_included_in(an)
        {
            n.and_assign(an);
        }
        let n = o.children.len() + o.memory_children.len();
        for i in 0..n {
            self.remove_unused_sets(self.normal_or_memory_child(id, i), ac, an);
        }
    }

    /// Whether [`apply_type_filters`](Self::apply_type_filters) can remove
    /// an object under the current filters (it mirrors its `drop` rule).
    fn type_filters_may_remove(&self) -> bool {
        ObjType::ALL.iter().any(|&t| match self.filters[t.index()] {
            TypeFilter::KeepNone => !matches!(t, ObjType::PU | ObjType::NUMANode),
            TypeFilter::KeepImportant => matches!(t, ObjType::PCIDevice | ObjType::OSDevice),
            _ => false,
        })
    }

    /// Removes objects whose type filter rejects them, keeping their children.
    ///
    /// Each object's child lists are rebuilt once, after its children were
    /// filtered: a removed child's lists are spliced in as
    /// [`remove_single`](Self::remove_single) would, but without a scan of
    /// the parent's lists per removal (a record with a million filtered
    /// Misc objects under one parent took minutes that way).
    fn apply_type_filters(&mut self, id: ObjId) {
        let o = self.obj(id);
        let children: Vec<ObjId> = o
            .children
            .iter()
            .chain(&o.memory_children)
            .chain(&o.io_children)
            .chain(&o.misc_children)
            .copied()
            .collect();
        for &c in &children {
            self.apply_type_filters(c);
        }
        if children.iter().any(|&c| self.filtered_out(c)) {
            self.splice_filtered_children(id);
        }
    }

    /// Memory objects whose parent a type filter removed were handed to
    /// the parent's parent, whose cpuset may be larger than theirs: each
    /// goes where hwloc attaches memory, below the highest object with its
    /// cpuset, or below a new memory Group of that cpuset (as hwloc does
    /// when, say, packages are ignored and a node spanned one package's
    /// caches).  Sets are then propagated again.
    fn replace_displaced_memory(&mut self) -> Result<(), TopologyError> {
        let mut displaced = Vec::new();
        for id in self.iter_dfs() {
            let o = self.obj(id);
            for &m in &o.memory_children {
                if self.obj(m).cpuset != o.cpuset {
                    displaced.push((id, m));
                }
            }
        }
        if displaced.is_empty() {
            return Ok(());
        }
        for (parent, m) in displaced {
            self.obj_mut(parent).memory_children.retain(|&x| x != m);
            let cpuset = self.obj(m).cpuset.clone().unwrap_or_default();
            let complete = self.obj(m).complete_cpuset.clone();
            let target = self.find_memory_parent(&cpuset, complete)?;
            let first = self.obj(m).nodeset.as_ref().and_then(|n| n.first());
            let pos = self
                .obj(target)
                .memory_children
                .iter()
                .position(|&x| self.obj(x).nodeset.as_ref().and_then(|n| n.first()) > first);
            let t = self.obj_mut(target);
            match pos {
                Some(i) => t.memory_children.insert(i, m),
                None => t.memory_children.push(m),
            }
            self.obj_mut(m).parent = Some(target);
        }
        let root = self.root;
        self.propagate_nodeset(root, None);
        self.fixup_sets(root);
        Ok(())
    }

    /// Rebuilds `id`'s child lists without its filtered-out children,
    /// whose own lists take their place.  Kept out of the recursive walk
    /// so that its locals do not weigh on every level of the stack.
    #[inline(never)]
    fn splice_filtered_children(&mut self, id: ObjId) {
        // Lists spliced in place of removed children, then what removed
        // children of other kinds hand up, in the order they were removed.
        let mut lists: [thin_vec::ThinVec<ObjId>; 4] = Default::default();
        let mut handed: [Vec<ObjId>; 4] = Default::default();
        let mut resort = false;
        let o = self.objs[id].as_mut().expect("live object");
        let own = [
            core::mem::take(&mut o.children),
            core::mem::take(&mut o.memory_children),
            core::mem::take(&mut o.io_children),
            core::mem::take(&mut o.misc_children),
        ];
        for (k, list) in own.iter().enumerate() {
            for &c in list {
                if !self.filtered_out(c) {
                    lists[k].push(c);
                    continue;
                }
                let co = self.objs[c].take().expect("live object");
                let theirs = [
                    &co.children,
                    &co.memory_children,
                    &co.io_children,
                    &co.misc_children,
                ];
                for (j, l) in theirs.iter().enumerate() {
                    if j == k {
                        lists[k].extend_from_slice(l);
                    } else {
                        handed[j].extend_from_slice(l);
                    }
                }
                resort |= k == 0 && !co.children.is_empty();
                for l in theirs {
                    for &g in l.iter() {
                        self.obj_mut(g).parent = Some(id);
                    }
                }
            }
        }
        for (l, h) in lists.iter_mut().zip(&handed) {
            l.extend_from_slice(h);
        }
        if resort {
            // Normal children must stay sorted by their first PU.
            lists[0].sort_by(|&a, &b| self.cmp_first(a, b));
        }
        let [children, memory, io, misc] = lists;
        let o = self.obj_mut(id);
        o.children = children;
        o.memory_children = memory;
        o.io_children = io;
        o.misc_children = misc;
    }

    /// Whether the type filters remove object `id` (never the root, PUs or
    /// NUMA nodes).
    fn filtered_out(&self, id: ObjId) -> bool {
        if id == self.root {
            return false;
        }
        let o = self.obj(id);
        let t = o.obj_type;
        match self.filters[t.index()] {
            TypeFilter::KeepNone => !matches!(t, ObjType::PU | ObjType::NUMANode),
            TypeFilter::KeepImportant => match t {
                // Bridges are judged later, once their children are known.
                // Unimportant PCI functions go; OS devices below them move up.
                ObjType::PCIDevice => !o.pci().is_some_and(|p| pci_class_is_important(p.class_id)),
                ObjType::OSDevice => !o.osdev_types().is_some_and(osdev_is_important),
                _ => false,
            },
            _ => false,
        }
    }

    fn filter_bridges(&mut self, id: ObjId, depth: u32) {
        // Only I/O children are removed here: normal ones are walked by index.
        for i in 0..self.obj(id).children.len() {
            self.filter_bridges(self.obj(id).children[i], 0);
        }
        for c in self.obj(id).io_children.clone() {
            self.filter_bridges(c, depth + 1);
            if let ObjAttr::Bridge(b) = &mut self.obj_mut(c).attr {
                b.depth = depth;
            }
            let co = self.obj(c);
            let important = self.filters[co.obj_type.index()] == TypeFilter::KeepImportant;
            let bridge_like = co.obj_type == ObjType::Bridge
                || (co.obj_type == ObjType::PCIDevice
                    && co.pci().is_some_and(|p| p.class_id >> 8 == 0x06)
                    && co.subtype.as_deref() != Some("NVSwitch"));
            if important && co.io_children.is_empty() && bridge_like {
                self.remove_subtree(c);
            }
        }
    }

    /// Removes normal objects without PUs and memory objects without
    /// nodes, unless memory or I/O hangs below them: the empty normal and
    /// memory children of `id` (after their own empty children), each
    /// parent's lists rebuilt once: a scan of
    /// the lists per removal made many empty siblings cost their square.
    /// Returns whether `id` is left without normal, memory or I/O children.
    fn remove_empty_children(&mut self, id: ObjId) -> bool {
        let children = self.obj(id).normal_and_memory_children();
        let mut gone = Vec::new();
        for c in children {
            if self.remove_empty_children(c) && self.is_empty_leaf(c) {
                gone.push(c);
            }
        }
        if !gone.is_empty() {
            gone.sort_unstable();
            let is_gone = |x: &ObjId| gone.binary_search(x).is_ok();
            let o = self.obj_mut(id);
            o.children.retain(|x| !is_gone(x));
            o.memory_children.retain(|x| !is_gone(x));
            for &g in &gone {
                self.free_subtree(g);
            }
            self.finished = false;
        }
        let o = self.obj(id);
        o.children.is_empty() && o.memory_children.is_empty() && o.io_children.is_empty()
    }

    /// Whether `id`, which has no normal, memory or I/O child left, is a
    /// normal object without PUs or a memory object without nodes.
    fn is_empty_leaf(&self, id: ObjId) -> bool {
        let o = self.obj(id);
        match o.kind() {
            ObjKind::Normal => o.cpuset.as_ref().is_none_or(|c| c.is_empty()),
            ObjKind::Memory => o.nodeset.as_ref().is_none_or(|n| n.is_empty()),
            _ => false,
        }
    }

    /// Recomputes sibling ranks, normal levels, depths, logical indexes and special levels.
    pub fn connect(&mut self) {
        let root = self.root;
        self.connect_children(root);
        self.connect_levels();
        self.connect_special_levels();
    }

    fn connect_children(&mut self, id: ObjId) {
        // Walked by index (no list changes here): no copies per object.
        for list in 0..4 {
            let len = Self::child_list(self.obj(id), list).len();
            for rank in 0..len {
                let c = Self::child_list(self.obj(id), list)[rank];
                let co = self.obj_mut(c);
                co.sibling_rank = rank as u32;
                co.parent = Some(id);
                self.connect_children(c);
            }
        }
    }

    /// The normal, memory, I/O or Misc children (`list` 0 to 3).
    fn child_list(o: &Object, list: usize) -> &[ObjId] {
        match list {
            0 => &o.children,
            1 => &o.memory_children,
            2 => &o.io_children,
            _ => &o.misc_children,
        }
    }

    /// The `i`-th of the normal then memory children of `id`.
    #[inline]
    fn normal_or_memory_child(&self, id: ObjId, i: usize) -> ObjId {
        let o = self.obj(id);
        match o.children.get(i) {
            Some(&c) => c,
            None => o.memory_children[i - o.children.len()],
        }
    }

    fn has_same_type_below(&self, under: ObjId, like: ObjId) -> bool {
        self.obj(under)
            .children
            .iter()
            .any(|&c| self.same_level_type(c, like) || self.has_same_type_below(c, like))
    }

    fn connect_levels(&mut self) {
        let root = self.root;
        self.type_depth = [TypeDepth::Unknown; 20];
        self.levels.clear();
        {
            let r = self.obj_mut(root);
            r.depth = Depth::Normal(0);
            r.logical_index = 0;
            r.sibling_rank = 0;
            r.parent = None;
        }
        self.type_depth[self.obj(root).obj_type.index()] = TypeDepth::Depth(Depth::Normal(0));
        self.levels.push(vec![root]);
        let mut objs: Vec<ObjId> = self.obj(root).children.to_vec();
        while !objs.is_empty() {
            let mut top = objs
                .iter()
                .copied()
                .find(|&i| self.obj(i).obj_type != ObjType::PU)
                .unwrap_or(objs[0]);
            for &o in &objs {
                if !self.same_level_type(top, o) && self.has_same_type_below(o, top) {
                    top = o;
                }
            }
            let mut taken = Vec::new();
            let mut next = Vec::new();
            for &o in &objs {
                if self.same_level_type(top, o) {
                    taken.push(o);
                    next.extend_from_slice(&self.obj(o).children);
                } else {
                    next.push(o);
                }
            }
            let d = self.levels.len() as u32;
            for (i, &o) in taken.iter().enumerate() {
                let ob = self.obj_mut(o);
                ob.depth = Depth::Normal(d);
                ob.logical_index = i as u32;
            }
            let t = self.obj(top).obj_type.index();
            self.type_depth[t] = match self.type_depth[t] {
                TypeDepth::Unknown => TypeDepth::Depth(Depth::Normal(d)),
                _ => TypeDepth::Multiple,
            };
            self.levels.push(taken);
            objs = next;
        }
    }

    fn connect_special_levels(&mut self) {
        for l in self.special.iter_mut() {
            l.clear();
        }
        let mut stack = vec![self.root];
        let mut order = Vec::new();
        while let Some(id) = stack.pop() {
            order.push(id);
            let o = self.obj(id);
            for list in [
                &o.misc_children,
                &o.io_children,
                &o.memory_children,
                &o.children,
            ] {
                stack.extend(list.iter().rev());
            }
        }
        for id in order {
            let t = self.obj(id).obj_type;
            if let Some(d) = Depth::special_for(t) {
                let s = SpecialLevel::of(d).expect("special depth") as usize;
                let idx = self.special[s].len() as u32;
                self.special[s].push(id);
                let o = self.obj_mut(id);
                o.depth = d;
                o.logical_index = idx;
            }
        }
    }

    /// Removes levels made only of single children identical to their
    /// parents, when the type filter says they only matter for structure.
    pub(super) fn merge_structure_levels(&mut self) {
        let mut i = self.levels.len();
        while i > 1 {
            i -= 1;
            if i >= self.levels.len() {
                continue;
            }
            let (p0, c0) = (self.levels[i - 1][0], self.levels[i][0]);
            let (t1, t2) = (self.obj(p0).obj_type, self.obj(c0).obj_type);
            let dont_merge = |topo: &Self, lvl: usize| {
                topo.levels[lvl]
                    .iter()
                    .any(|&o| topo.obj(o).group().is_some_and(|g| g.dont_merge))
            };
            let mut replace_parent = self.filters[t1.index()] == TypeFilter::KeepStructure
                && !(t1 == ObjType::Group && dont_merge(self, i - 1));
            let mut replace_child = self.filters[t2.index()] == TypeFilter::KeepStructure
                && !(t1 == ObjType::Group && dont_merge(self, i));
            // A Die level identical to the Package level above it always
            // goes (hwloc 2.14 and 3.0), whatever the filters.
            if !replace_parent && !replace_child && t1 == ObjType::Package && t2 == ObjType::Die {
                replace_child = true;
            }
            if !replace_parent && !replace_child {
                continue;
            }
            if replace_parent && replace_child {
                if t1.merge_priority() >= t2.merge_priority() {
                    replace_parent = false;
                } else {
                    replace_child = false;
                }
            }
            if !self.levels_identical(i) {
                continue;
            }
            let pairs: Vec<(ObjId, ObjId)> = self.levels[i - 1]
                .iter()
                .copied()
                .zip(self.levels[i].iter().copied())
                .collect();
            for (parent, child) in pairs {
                if replace_child {
                    self.remove_single(child);
                } else if parent == self.root {
                    self.replace_root(child);
                } else {
                    // Keep the child in the grand-parent, with the parent's
                    // memory, I/O and misc children in front of its own.
                    self.hoist_into_parent(parent, child);
                }
            }
            if replace_parent {
                self.levels.remove(i - 1);
            } else {
                self.levels.remove(i);
            }
        }
    }

    fn levels_identical(&self, i: usize) -> bool {
        let (up, down) = (&self.levels[i - 1], &self.levels[i]);
        if up.len() != down.len() {
            return false;
        }
        let check_memory = self.obj(down[0]).obj_type == ObjType::PU;
        up.iter().zip(down).all(|(&p, &c)| {
            let po = self.obj(p);
            self.obj(c).parent == Some(p)
                && po.children.len() == 1
                && (!check_memory || po.memory_children.is_empty())
        })
    }

    fn hoist_into_parent(&mut self, parent: ObjId, child: ObjId) {
        let gp = self.obj(parent).parent.expect("non-root parent");
        let p = self.objs[parent].take().expect("live parent");
        {
            let g = self.obj_mut(gp);
            if let Some(pos) = g.children.iter().position(|&x| x == parent) {
                g.children[pos] = child;
            }
        }
        self.take_place_of(&p, child, Some(gp));
    }

    fn replace_root(&mut self, child: ObjId) {
        let old = self.root;
        let p = self.objs[old].take().expect("live root");
        self.take_place_of(&p, child, None);
        self.root = child;
    }

    /// `child` takes the place of `p`, its removed parent: it gets `p`'s
    /// memory, I/O and Misc children (before its own) and its parent
    /// `parent`.
    fn take_place_of(&mut self, p: &Object, child: ObjId, parent: Option<ObjId>) {
        for &c in p
            .memory_children
            .iter()
            .chain(&p.io_children)
            .chain(&p.misc_children)
        {
            self.obj_mut(c).parent = Some(child);
        }
        let co = self.obj_mut(child);
        co.parent = parent;
        prepend(&mut co.memory_children, &p.memory_children);
        prepend(&mut co.io_children, &p.io_children);
        prepend(&mut co.misc_children, &p.misc_children);
    }

    pub(super) fn propagate_total_memory(&mut self, id: ObjId) -> u64 {
        let o = self.obj(id);
        let n = o.children.len() + o.memory_children.len();
        let mut total = 0u64;
        for i in 0..n {
            let c = self.normal_or_memory_child(id, i);
            total = total.saturating_add(self.propagate_total_memory(c));
        }
        let o = self.obj_mut(id);
        if let ObjAttr::Numa(n) = &mut o.attr {
            total = total.saturating_add(n.local_memory);
            // Sorted by size, with zero-sized entries dropped.
            n.page_types.retain(|p| p.size != 0);
            n.page_types.sort_by_key(|p| p.size);
        }
        o.total_memory = total;
        total
    }

    pub(super) fn propagate_symmetric(&mut self, id: ObjId) -> bool {
        let nchildren = self.obj(id).children.len();
        let mut ok = true;
        for i in 0..nchildren {
            if !self.propagate_symmetric(self.obj(id).children[i]) {
                ok = false;
            }
        }
        if ok && nchildren > 1 {
            let mut cur = self.obj(id).children.clone();
            loop {
                let d0 = self.obj(cur[0]).depth;
                let a0 = self.obj(cur[0]).children.len();
                if cur
                    .iter()
                    .any(|&c| self.obj(c).depth != d0 || self.obj(c).children.len() != a0)
                {
                    ok = false;
                    break;
                }
                if a0 == 0 {
                    break;
                }
                cur = cur.iter().map(|&c| self.obj(c).children[0]).collect();
            }
        }
        self.obj_mut(id).symmetric_subtree = ok;
        ok
    }

    pub(super) fn set_group_depths(&mut self) {
        let mut gd = 0;
        for l in 0..self.levels.len() {
            if self.obj(self.levels[l][0]).obj_type == ObjType::Group {
                for j in 0..self.levels[l].len() {
                    let id = self.levels[l][j];
                    if let ObjAttr::Group(g) = &mut self.obj_mut(id).attr {
                        g.depth = gd;
                    }
                }
                gd += 1;
            }
        }
    }

    /// Drops distance and memory-attribute entries that refer to removed objects.
    pub(super) fn refresh_references(&mut self) {
        let objs = &self.objs;
        let alive = |id: ObjId| objs.get(id).is_some_and(|o| o.is_some());
        for d in &mut self.distances {
            d.retain_objects(alive);
        }
        self.distances.retain(|d| d.nbobjs() > 1);
        for m in &mut self.memattrs {
            m.retain_objects(alive);
        }
    }

    pub(super) fn rank_cpukinds(&mut self) {
        let root = self.root;
        let arch = self
            .obj(root)
            .info("Architecture")
            .map(String::from)
            .or_else(|| {
                self.infos
                    .iter()
                    .find(|i| i.name == "Architecture")
                    .map(|i| i.value.clone())
            });
        crate::cpukinds::rank(&mut self.cpukinds, self.cpukinds_ranking, arch.as_deref());
    }
}

fn prepend(list: &mut thin_vec::ThinVec<ObjId>, front: &[ObjId]) {
    if front.is_empty() {
        return;
    }
    let mut v = thin_vec::ThinVec::with_capacity(front.len() + list.len());
    v.extend_from_slice(front);
    v.extend_from_slice(list);
    *list = v;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PUs 0..n, each inserted by its cpuset.
    fn insert_pus(t: &mut Topology, n: u32) {
        for pu in 0..n {
            t.insert_by_cpuset(Object::with_cpuset(
                ObjType::PU,
                Some(pu),
                CpuSet::from_index(pu),
            ))
            .unwrap();
        }
    }
    use crate::topology::test_machines::{cs, small_machine};

    #[test]
    fn builds_levels_in_hwloc_order() {
        let t = small_machine();
        t.check().unwrap();
        let types: Vec<ObjType> = t
            .normal_levels()
            .iter()
            .map(|l| t.obj(l[0]).obj_type)
            .collect();
        assert_eq!(
            types,
            vec![
                ObjType::Machine,
                ObjType::Package,
                ObjType::L2Cache,
                ObjType::Core,
                ObjType::PU
            ]
        );
        let pus = t.objs_by_type(ObjType::PU);
        let os: Vec<_> = pus.iter().map(|&p| t.obj(p).os_index.unwrap()).collect();
        assert_eq!(os, (0..8).collect::<Vec<_>>());
        // NUMA nodes hang off packages, whose nodesets follow.
        let numas = t.level(Depth::NumaNode);
        assert_eq!(numas.len(), 2);
        let p1 = t.obj(numas[1]).parent.unwrap();
        assert_eq!(t.obj(p1).obj_type, ObjType::Package);
        assert_eq!(t.obj(p1).nodeset.as_ref().unwrap(), &NodeSet::from_index(1));
        assert_eq!(t.obj(t.root()).total_memory, 2 << 30);
        assert_eq!(
            t.type_depth(ObjType::Core),
            TypeDepth::Depth(Depth::Normal(3))
        );
        assert!(t.obj(t.root()).symmetric_subtree());
    }

    #[test]
    fn die_level_identical_to_packages_is_merged_whatever_the_filter() {
        let build = |dies: &[(u32, u32)]| {
            let mut t = Topology::new();
            t.set_all_types_filter(TypeFilter::KeepAll);
            for (p, set) in [(0u32, (0u32, 3u32)), (1, (4, 7))] {
                t.insert_by_cpuset(Object::with_cpuset(
                    ObjType::Package,
                    Some(p),
                    cs(set.0, set.1),
                ))
                .unwrap();
            }
            for (d, &(a, b)) in dies.iter().enumerate() {
                t.insert_by_cpuset(Object::with_cpuset(ObjType::Die, Some(d as u32), cs(a, b)))
                    .unwrap();
            }
            insert_pus(&mut t, 8);
            t.finish().unwrap();
            t.check().unwrap();
            t.normal_levels()
                .iter()
                .map(|l| t.obj(l[0]).obj_type)
                .collect::<Vec<_>>()
        };
        // One die per package: the Die level goes.
        assert_eq!(
            build(&[(0, 3), (4, 7)]),
            [ObjType::Machine, ObjType::Package, ObjType::PU]
        );
        // Two dies in one package: the whole level stays.
        assert_eq!(
            build(&[(0, 1), (2, 3), (4, 7)]),
            [
                ObjType::Machine,
                ObjType::Package,
                ObjType::Die,
                ObjType::PU
            ]
        );
    }

    #[test]
    fn structure_filter_merges_identical_levels() {
        let mut t = Topology::new();
        t.set_all_types_filter(TypeFilter::KeepStructure);
        for pu in 0..4 {
            t.insert_by_cpuset(Object::with_cpuset(
                ObjType::PU,
                Some(pu),
                CpuSet::from_index(pu),
            ))
            .unwrap();
            t.insert_by_cpuset(Object::with_cpuset(
                ObjType::Core,
                Some(pu),
                CpuSet::from_index(pu),
            ))
            .unwrap();
        }
        t.insert_by_cpuset(Object::with_cpuset(ObjType::Package, Some(0), cs(0, 3)))
            .unwrap();
        t.finish().unwrap();
        t.check().unwrap();
        let types: Vec<ObjType> = t
            .normal_levels()
            .iter()
            .map(|l| t.obj(l[0]).obj_type)
            .collect();
        // Machine has a single Package child: the Package wins over Machine? No:
        // Machine has priority 90 > Package 40, so Package goes; Core (60) < PU (100), so Core goes.
        assert_eq!(types, vec![ObjType::Machine, ObjType::PU]);
    }

    /// A NUMA node whose map lists offline CPUs (in the root's complete
    /// cpuset, not the tree's PUs), given without a complete cpuset, goes
    /// in a memory Group whose complete cpuset the tree derives: the
    /// node's complete cpuset keeps only online CPUs, as hwloc's.
    #[test]
    fn node_complete_cpuset_leaves_offline_cpus_out() {
        for given in [None, Some(cs(0, 7))] {
            let mut t = Topology::new();
            insert_pus(&mut t, 4);
            t.root_mut().complete_cpuset = Some(cs(0, 7));
            let mut node = Object::new(ObjType::NUMANode, Some(0));
            node.cpuset = Some(cs(0, 7));
            node.complete_cpuset = given.clone();
            node.nodeset = Some(NodeSet::from_index(0));
            t.insert_by_cpuset(node).unwrap();
            t.finish().unwrap();
            t.check().unwrap();
            let n = t.level(Depth::NumaNode)[0];
            assert_eq!(t.obj(n).cpuset, Some(cs(0, 3)));
            let want = if given.is_some() { cs(0, 7) } else { cs(0, 3) };
            assert_eq!(t.obj(n).complete_cpuset, Some(want));
            assert_eq!(t.complete_cpuset(), &cs(0, 7));
        }
    }

    #[test]
    fn disallowed_pus_are_removed_unless_asked() {
        for include in [false, true] {
            let mut t = Topology::new();
            t.include_disallowed = include;
            insert_pus(&mut t, 4);
            t.allowed_cpuset = cs(0, 1);
            t.finish().unwrap();
            t.check().unwrap();
            assert_eq!(
                t.objs_by_type(ObjType::PU).len(),
                if include { 4 } else { 2 }
            );
            assert_eq!(t.complete_cpuset(), &cs(0, 3));
        }
    }

    /// The case `prop_random_trees_are_refused_or_consistent` found: a
    /// memory-side cache attached by parent without sets, holding NUMA
    /// node 0, beside one attached with node 0 in its nodeset but no node
    /// below it.  The first `finish` emptied the node's nodeset (its
    /// parent had none), dropped it as empty and kept node 0 in the root's
    /// nodeset; the second found no NUMA node.  Whether the caches are
    /// filtered out (the default) or kept, node 0 stays, as a NUMA node,
    /// through any number of `finish`.
    #[test]
    fn caches_attached_by_parent_take_the_nodes_below_them() {
        for keep_caches in [false, true] {
            let mut t = Topology::new();
            if keep_caches {
                t.set_type_filter(ObjType::MemCache, TypeFilter::KeepAll)
                    .unwrap();
            }
            t.insert_by_cpuset(Object::with_cpuset(
                ObjType::PU,
                Some(5),
                CpuSet::from_index(5),
            ))
            .unwrap();
            let root = t.root();
            let bare = t
                .insert_by_parent(root, Object::new(ObjType::MemCache, None))
                .unwrap();
            let mut n = Object::with_cpuset(ObjType::NUMANode, Some(0), CpuSet::from_index(0));
            n.nodeset = Some(NodeSet::from_index(0));
            let node = t.insert_by_parent(bare, n).unwrap();
            let mut empty = Object::new(ObjType::MemCache, Some(0));
            empty.nodeset = Some(NodeSet::from_index(0));
            t.insert_by_parent(root, empty).unwrap();
            for round in 0..3 {
                t.finish().unwrap_or_else(|e| {
                    panic!("finish #{round} (caches kept: {keep_caches}): {e}")
                });
                t.check().unwrap();
                assert_eq!(t.level(Depth::NumaNode), &[node][..]);
                assert_eq!(t.nodeset(), &NodeSet::from_index(0));
                assert_eq!(t.obj(node).cpuset.as_ref(), Some(&CpuSet::from_index(5)));
                // The cache without memory below it went; the other holds the node.
                let caches = t.level(Depth::MemCache);
                if keep_caches {
                    assert_eq!(caches, &[bare][..]);
                    assert_eq!(t.obj(bare).nodeset, Some(NodeSet::from_index(0)));
                    assert_eq!(t.obj(node).parent, Some(bare));
                } else {
                    assert!(caches.is_empty());
                    assert_eq!(t.obj(node).parent, Some(root));
                }
            }
        }
    }

    #[test]
    fn finishing_again_keeps_nodes_added_since() {
        let mut t = small_machine();
        let mut n = Object::new(ObjType::NUMANode, Some(7));
        n.cpuset = Some(CpuSet::new());
        n.nodeset = Some(NodeSet::from_index(7));
        t.insert_by_cpuset(n).unwrap();
        t.finish().unwrap();
        t.check().unwrap();
        assert_eq!(t.level(Depth::NumaNode).len(), 3);
        assert!(t.allowed_nodeset.is_set(7));
    }

    /// The synthetic machine `desc` built with packages filtered out.
    fn without_packages(desc: &str) -> Topology {
        let mut base = Topology::new();
        base.set_type_filter(ObjType::Package, TypeFilter::KeepNone)
            .unwrap();
        crate::synthetic::parse(desc).unwrap().build(base).unwrap()
    }

    #[test]
    fn memory_of_a_filtered_object_goes_where_hwloc_attaches_it() {
        // The node had its package's cpuset, which is its L3's.
        let t = without_packages("pack:2 [numa] l3:1 core:2 pu:2");
        t.check_hwloc().unwrap();
        for n in t.objs_by_type(ObjType::NUMANode) {
            let parent = t.obj(n).parent.unwrap();
            assert_eq!(t.obj(parent).obj_type, ObjType::L3Cache);
        }
        // The node spanned two L2s: a memory Group of its cpuset holds
        // them, as in hwloc.
        let t = without_packages("numa:2 pack:1 l2:2 core:2 pu:2");
        t.check_hwloc().unwrap();
        let groups = t.objs_by_type(ObjType::Group);
        assert_eq!(groups.len(), 2);
        for g in groups {
            let o = t.obj(g);
            assert_eq!(o.group().unwrap().kind, group_kind::MEMORY);
            assert_eq!(o.memory_children.len(), 1);
            assert_eq!(o.children.len(), 2);
        }
    }
}
