//! Adding objects: by cpuset, following hwloc's
//! `hwloc_insert_object_by_cpuset` (inclusion and type-order rules, merging
//! of equal objects, memory objects placed by locality), and under an
//! explicit parent, as hwloc's `hwloc_insert_object_by_parent`.

use core::cmp::Ordering;
use thin_vec::ThinVec;

use super::{MAX_TREE_DEPTH, SetCmp, Topology, TopologyError, TypeFilter};
use crate::bitmap::{CpuSet, NodeSet};
use crate::object::*;

/// Why [`Topology::insert_by_cpuset`] or [`Topology::insert_by_parent`]
/// refused an object (besides [`TopologyError::Intersection`]).  A refused
/// object leaves the topology as it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsertError {
    /// I/O and Misc objects go under a parent
    /// ([`Topology::insert_by_parent`]), not by cpuset.
    ByParentOnly(ObjType),
    /// A normal object has neither a cpuset nor a complete cpuset.
    NoCpuset(ObjType),
    /// A memory object's nodeset does not hold exactly one node.
    NotOneNode(ObjType),
    /// A memory object's nodeset is not included in its complete nodeset.
    NodesetOutsideComplete(ObjType),
    /// The object would be, or would push existing objects, more than
    /// [`MAX_TREE_DEPTH`] parent links below the root.
    TooDeep(ObjType),
    /// The parent cannot hold a child of this type
    /// ([`ObjType::can_be_child_of`]).
    WrongParent {
        /// The type of the refused object.
        child: ObjType,
        /// The type of the parent it was given (or placed under).
        parent: ObjType,
    },
    /// The parent id names no object of this topology.
    NoSuchParent(ObjId),
}

impl core::fmt::Display for InsertError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            InsertError::ByParentOnly(t) => {
                write!(f, "{t} objects are attached by parent, not by cpuset")
            }
            InsertError::NoCpuset(t) => write!(f, "{t} object has no cpuset"),
            InsertError::NotOneNode(t) => {
                write!(f, "{t} object needs a nodeset with exactly one node")
            }
            InsertError::NodesetOutsideComplete(t) => write!(
                f,
                "{t} object's nodeset is not included in its complete nodeset"
            ),
            InsertError::TooDeep(t) => write!(
                f,
                "{t} object would make the tree deeper than {MAX_TREE_DEPTH} levels below the root, the limit"
            ),
            InsertError::WrongParent { child, parent } => {
                write!(f, "a {child} object cannot be a child of a {parent} object")
            }
            InsertError::NoSuchParent(id) => {
                write!(f, "parent object {id} is not in the topology")
            }
        }
    }
}

impl core::error::Error for InsertError {}

/// Outcome of [`Topology::insert_by_cpuset`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inserted {
    /// The object was added with this id.
    New(ObjId),
    /// An equivalent object existed; the new one was merged into it.
    Merged(ObjId),
}

impl Inserted {
    /// The id of the object now in the tree.
    pub fn id(self) -> ObjId {
        match self {
            Inserted::New(i) | Inserted::Merged(i) => i,
        }
    }
}

/// Cached first and last PUs of an object's sets, for the placement's
/// fast rejection of disjoint siblings.
#[derive(Clone, Copy, Debug)]
pub(super) struct SetBounds {
    /// Of the complete cpuset, when it has a PU.
    complete: Option<(u32, u32)>,
    /// Whether the object has a complete cpuset (possibly empty).
    has_complete: bool,
    /// Of the cpuset, when it has a PU.
    plain: Option<(u32, u32)>,
}

impl SetBounds {
    /// Whether [`Topology::cmp_sets`] of the two objects is surely
    /// `Different`: their ranges of the sets it compares (complete
    /// cpusets when both have one, cpusets otherwise) do not overlap.
    /// Gives the first PU of each when so.
    #[inline]
    fn disjoint(&self, other: &SetBounds) -> Option<(u32, u32)> {
        let ((af, al), (bf, bl)) = if self.has_complete && other.has_complete {
            (self.complete?, other.complete?)
        } else {
            (self.plain?, other.plain?)
        };
        (al < bf || af > bl).then_some((af, bf))
    }
}

/// Where one step of the walk down by cpuset ended.
enum Placement {
    /// Inserted or merged.
    Done(Inserted),
    /// The object belongs below this child: the walk goes on there.
    Below(ObjId),
}

fn compare_inclusion<K: crate::bitmap::SetKind>(
    a: &crate::bitmap::Set<K>,
    b: &crate::bitmap::Set<K>,
) -> SetCmp {
    if a == b {
        SetCmp::Equal
    } else if !a.intersects(b) {
        SetCmp::Different
    } else if b.includes(a) {
        SetCmp::Included
    } else if a.includes(b) {
        SetCmp::Contains
    } else {
        SetCmp::Intersects
    }
}

impl Topology {
    fn push(&mut self, mut obj: Object) -> ObjId {
        if obj.gp_index == 0 {
            obj.gp_index = self.alloc_gp_index();
        } else {
            self.reserve_gp_index(obj.gp_index);
        }
        // A copy of an object already in a tree carries its links: the
        // new object starts detached, whatever it was copied from.
        obj.parent = None;
        obj.children.clear();
        obj.memory_children.clear();
        obj.io_children.clear();
        obj.misc_children.clear();
        self.objs.push(Some(obj));
        self.finished = false;
        self.objs.len() - 1
    }

    /// Makes room for `additional` more objects, so that a backend that
    /// knows how many it will add (the XML importer) does not grow the
    /// object arena step by step, moving every object each time.
    pub fn reserve_objects(&mut self, additional: usize) {
        self.objs.reserve(additional);
    }

    /// Replaces the root object's attributes (type stays Machine unless the
    /// caller changes it, infos and names are taken as given).
    pub fn root_mut(&mut self) -> &mut Object {
        let r = self.root;
        self.obj_mut(r)
    }

    /// Adds an object as the last child of `parent` in the list its kind
    /// belongs to, without looking at its sets.  This is how XML import and
    /// I/O discovery attach objects, as hwloc's
    /// `hwloc_insert_object_by_parent`.  Returns its id.
    ///
    /// Refused (and the topology left unchanged) when `parent` is no
    /// object of this topology, when its type cannot hold the object
    /// ([`ObjType::can_be_child_of`]) or when the object would be more than
    /// [`MAX_TREE_DEPTH`] levels below the root.
    #[doc(alias = "hwloc_insert_object_by_parent")]
    pub fn insert_by_parent(&mut self, parent: ObjId, obj: Object) -> Result<ObjId, InsertError> {
        let t = obj.obj_type;
        let Some(p) = self.get(parent) else {
            return Err(InsertError::NoSuchParent(parent));
        };
        if !t.can_be_child_of(p.obj_type) {
            return Err(InsertError::WrongParent {
                child: t,
                parent: p.obj_type,
            });
        }
        if self.depth_below_root(parent) >= MAX_TREE_DEPTH {
            return Err(InsertError::TooDeep(t));
        }
        let os = obj.os_index;
        let pu_allowed = obj
            .cpuset
            .as_ref()
            .zip(os)
            .is_some_and(|(c, os)| c.is_set(os));
        let node_allowed = obj
            .nodeset
            .as_ref()
            .zip(os)
            .is_some_and(|(n, os)| n.is_set(os));
        let id = self.push(obj);
        self.obj_mut(id).parent = Some(parent);
        let p = self.obj_mut(parent);
        match t.kind() {
            ObjKind::Normal => p.children.push(id),
            ObjKind::Memory => p.memory_children.push(id),
            ObjKind::Io => p.io_children.push(id),
            ObjKind::Misc => p.misc_children.push(id),
        }
        let root = self.root;
        if let Some(os) = os {
            let r = self.obj_mut(root);
            if t == ObjType::PU {
                if pu_allowed {
                    r.cpuset.get_or_insert_with(CpuSet::new).set(os);
                }
                r.complete_cpuset.get_or_insert_with(CpuSet::new).set(os);
            } else if t == ObjType::NUMANode {
                if node_allowed {
                    r.nodeset.get_or_insert_with(NodeSet::new).set(os);
                }
                r.complete_nodeset.get_or_insert_with(NodeSet::new).set(os);
            }
        }
        Ok(id)
    }

    /// Parent links from `id` up to the root (0 for the root), counted up
    /// to just past [`MAX_TREE_DEPTH`]: the tree is never deeper, so the
    /// walk stays short.
    pub(super) fn depth_below_root(&self, id: ObjId) -> usize {
        let mut d = 0;
        let mut cur = id;
        while let Some(p) = self.objs.get(cur).and_then(|o| o.as_ref()?.parent) {
            d += 1;
            cur = p;
            if d > MAX_TREE_DEPTH {
                break;
            }
        }
        d
    }

    /// Whether the subtree of `id`, placed `depth` links below the root,
    /// stays within [`MAX_TREE_DEPTH`].  Walks the subtree with an explicit
    /// stack (it may be the size of the tree) and stops at the first
    /// object too deep.
    fn subtree_fits(&self, id: ObjId, depth: usize) -> bool {
        let mut stack = alloc::vec![(id, depth)];
        while let Some((cur, d)) = stack.pop() {
            if d > MAX_TREE_DEPTH {
                return false;
            }
            let Some(o) = self.get(cur) else { continue };
            for list in [
                &o.children,
                &o.memory_children,
                &o.io_children,
                &o.misc_children,
            ] {
                stack.extend(list.iter().map(|&c| (c, d + 1)));
            }
        }
        true
    }

    /// Inserts a normal or memory object where its sets say it belongs, as
    /// hwloc's `hwloc__insert_object_by_cpuset` (`hwloc_insert_object_by_cpuset`
    /// in hwloc 1.x).
    ///
    /// Normal objects need a cpuset (or complete cpuset); memory objects a
    /// nodeset with a single node.  An object equal to an existing one of
    /// the same type is merged into it.  Objects whose type is filtered out
    /// are dropped and `Ok(None)` is returned.
    #[doc(alias = "hwloc_insert_object_by_cpuset")]
    #[doc(alias = "hwloc__insert_object_by_cpuset")]
    pub fn insert_by_cpuset(&mut self, mut obj: Object) -> Result<Option<Inserted>, TopologyError> {
        match obj.kind() {
            ObjKind::Normal => {}
            ObjKind::Memory => return self.insert_memory(obj),
            _ => return Err(InsertError::ByParentOnly(obj.obj_type).into()),
        }
        if obj.cpuset.is_none() && obj.complete_cpuset.is_none() {
            return Err(InsertError::NoCpuset(obj.obj_type).into());
        }
        if obj.obj_type != ObjType::PU
            && obj.obj_type != ObjType::Machine
            && self.filters[obj.obj_type.index()] == TypeFilter::KeepNone
        {
            return Ok(None);
        }
        if obj.cpuset.is_none() {
            obj.cpuset = obj.complete_cpuset.clone();
        }
        let id = self.push(obj);
        let res = match self.insert_normal_under(self.root, id) {
            Ok(r) => r,
            Err(e) => {
                // The rejected object never joined the tree.
                self.objs[id] = None;
                return Err(e);
            }
        };
        if let Inserted::Merged(_) = res {
            self.objs[id] = None;
        }
        let ins = res.id();
        let o = self.obj(ins);
        if o.obj_type == ObjType::PU
            && let Some(os) = o.os_index
        {
            let allowed = o.cpuset.as_ref().is_some_and(|c| c.is_set(os));
            let root = self.root;
            let r = self.obj_mut(root);
            if allowed {
                r.cpuset.get_or_insert_with(CpuSet::new).set(os);
            }
            r.complete_cpuset.get_or_insert_with(CpuSet::new).set(os);
        }
        Ok(Some(res))
    }

    /// First and last PU of an object's complete cpuset and cpuset (cached).
    #[inline(never)]
    fn bounds(&mut self, id: ObjId) -> Option<SetBounds> {
        if self.set_bounds.len() < self.objs.len() {
            self.set_bounds.resize(self.objs.len(), None);
        }
        if let Some(b) = self.set_bounds[id] {
            return Some(b);
        }
        let o = self.objs[id].as_ref()?;
        let range = |s: &Option<CpuSet>| s.as_ref().and_then(|c| Some((c.first()?, c.last()?)));
        let b = SetBounds {
            complete: range(&o.complete_cpuset),
            has_complete: o.complete_cpuset.is_some(),
            plain: range(&o.cpuset),
        };
        self.set_bounds[id] = Some(b);
        Some(b)
    }

    /// The cached bounds of `id`, computed on a miss.
    #[inline]
    fn cached_bounds(&mut self, id: ObjId) -> Option<SetBounds> {
        match self.set_bounds.get(id) {
            Some(Some(b)) => Some(*b),
            _ => self.bounds(id),
        }
    }

    /// Siblings looked at so far while placing objects by their sets (all
    /// insertions since the topology was created).  A caller inserting
    /// untrusted objects compares it with a budget: placing among `w`
    /// siblings costs `O(w)`, so a very wide level placed object by object
    /// costs `O(w²)`.
    pub fn placement_visits(&self) -> u64 {
        self.placement_visits
    }

    fn cmp_sets(&self, a: ObjId, b: ObjId) -> SetCmp {
        let (oa, ob) = (self.obj(a), self.obj(b));
        let (sa, sb) = match (&oa.complete_cpuset, &ob.complete_cpuset) {
            (Some(x), Some(y)) => (Some(x), Some(y)),
            _ => (oa.cpuset.as_ref(), ob.cpuset.as_ref()),
        };
        match (sa, sb) {
            (Some(x), Some(y)) if !x.is_empty() && !y.is_empty() => compare_inclusion(x, y),
            _ => SetCmp::Different,
        }
    }

    /// Copies the descriptive contents of `src` over `dst`, keeping `dst`'s links.
    fn replace_contents(&mut self, dst: ObjId, src: ObjId) {
        let s = self.obj(src).clone();
        let d = self.obj_mut(dst);
        d.obj_type = s.obj_type;
        d.subtype = s.subtype;
        d.os_index = s.os_index;
        d.name = s.name;
        d.attr = s.attr;
        d.cpuset = s.cpuset;
        d.complete_cpuset = s.complete_cpuset;
        d.nodeset = s.nodeset;
        d.complete_nodeset = s.complete_nodeset;
        d.infos = s.infos;
        d.gp_index = s.gp_index;
    }

    /// Merge rules for Groups with the same set as another object.
    fn try_merge_group(&mut self, old: ObjId, new: ObjId) -> Option<ObjId> {
        let (to, tn) = (self.obj(old).obj_type, self.obj(new).obj_type);
        let gold = self.obj(old).group().cloned();
        let gnew = self.obj(new).group().cloned();
        match (gold, gnew) {
            (Some(go), Some(gn)) => {
                if gn.dont_merge {
                    if go.dont_merge {
                        return None;
                    }
                    self.replace_contents(old, new);
                    return Some(old);
                }
                if !go.dont_merge && gn.kind < go.kind {
                    self.replace_contents(old, new);
                }
                Some(old)
            }
            (None, Some(gn)) if !gn.dont_merge => {
                if to == ObjType::PU && gn.kind == group_kind::MEMORY {
                    return None;
                }
                Some(old)
            }
            (Some(go), None) if !go.dont_merge => {
                if tn == ObjType::PU && go.kind == group_kind::MEMORY {
                    return None;
                }
                self.replace_contents(old, new);
                Some(old)
            }
            _ => None,
        }
    }

    fn merge_equal(&mut self, new: ObjId, old: ObjId) {
        let n = self.obj(new).clone();
        let o = self.obj_mut(old);
        if o.os_index.is_none() {
            o.os_index = n.os_index;
        }
        o.infos.extend(n.infos);
        if o.name.is_none() {
            o.name = n.name;
        }
        if o.subtype.is_none() {
            o.subtype = n.subtype;
        }
        match (&mut o.attr, n.attr) {
            (ObjAttr::Numa(a), ObjAttr::Numa(b)) if a.local_memory == 0 && b.local_memory != 0 => {
                *a = b;
            }
            (ObjAttr::Cache(a), ObjAttr::Cache(b)) => {
                if a.size == 0 {
                    a.size = b.size;
                }
                if a.linesize == 0 {
                    a.linesize = b.linesize;
                }
                if a.associativity == 0 {
                    a.associativity = b.associativity;
                }
            }
            _ => {}
        }
    }

    /// Places the normal object `new` below `cur`: walks down (a loop, not
    /// recursion: the walk is as long as the tree is deep) to the smallest
    /// object containing it, merges it into an equal one, or inserts it
    /// there, taking the children it contains.
    fn insert_normal_under(
        &mut self,
        mut cur: ObjId,
        new: ObjId,
    ) -> Result<Inserted, TopologyError> {
        let mut depth = self.depth_below_root(cur);
        'descend: loop {
            match self.place_normal(cur, depth, new)? {
                Placement::Done(r) => return Ok(r),
                Placement::Below(child) => {
                    cur = child;
                    depth += 1;
                    continue 'descend;
                }
            }
        }
    }

    /// One step of [`insert_normal_under`](Self::insert_normal_under) at
    /// `cur`, which is `depth` links below the root.
    fn place_normal(
        &mut self,
        cur: ObjId,
        depth: usize,
        new: ObjId,
    ) -> Result<Placement, TopologyError> {
        let children = self.obj(cur).children.clone();
        let mut kept: ThinVec<ObjId> = ThinVec::with_capacity(children.len() + 1);
        let mut moved: ThinVec<ObjId> = ThinVec::new();
        let mut take_memory_from: Option<ObjId> = None;
        let mut put_at: Option<usize> = None;
        self.placement_visits = self.placement_visits.saturating_add(children.len() as u64);
        let new_bounds = self.bounds(new);
        for &child in &children {
            // Fast path: siblings whose PU ranges do not overlap are disjoint.
            let disjoint = match (&new_bounds, self.cached_bounds(child)) {
                (Some(n), Some(c)) => n.disjoint(&c),
                _ => None,
            };
            if let Some((nf, cf)) = disjoint {
                if put_at.is_none() && nf < cf {
                    put_at = Some(kept.len());
                }
                kept.push(child);
                continue;
            }
            let setres = self.cmp_sets(new, child);
            let mut res = setres;
            if res == SetCmp::Equal {
                if let Some(m) = self.try_merge_group(child, new) {
                    return Ok(Placement::Done(Inserted::Merged(m)));
                }
                res = self.cmp_types(new, child);
            }
            match res {
                SetCmp::Equal => {
                    self.merge_equal(new, child);
                    return Ok(Placement::Done(Inserted::Merged(child)));
                }
                SetCmp::Included => {
                    let ct = self.obj(child).obj_type;
                    if ct == ObjType::PU {
                        // A PU is a leaf: only a malformed PU (several
                        // bits in its set) could contain another object.
                        return Err(InsertError::WrongParent {
                            child: self.obj(new).obj_type,
                            parent: ct,
                        }
                        .into());
                    }
                    return Ok(Placement::Below(child));
                }
                SetCmp::Intersects => {
                    return Err(TopologyError::Intersection {
                        new: self.describe(new),
                        existing: self.describe(child),
                    });
                }
                SetCmp::Different => {
                    if put_at.is_none() && self.cmp_first(new, child) == Ordering::Less {
                        put_at = Some(kept.len());
                    }
                    kept.push(child);
                }
                SetCmp::Contains => {
                    moved.push(child);
                    if setres == SetCmp::Equal {
                        take_memory_from = Some(child);
                    }
                }
            }
        }
        // Refused before anything moves, so that the tree stays as it was.
        let nt = self.obj(new).obj_type;
        let ct = self.obj(cur).obj_type;
        if !nt.can_be_child_of(ct) {
            return Err(InsertError::WrongParent {
                child: nt,
                parent: ct,
            }
            .into());
        }
        let mem_moved: &[ObjId] = match take_memory_from {
            Some(src) => &self.obj(src).memory_children[..],
            None => &[],
        };
        if depth + 1 > MAX_TREE_DEPTH
            || !moved
                .iter()
                .chain(mem_moved)
                .all(|&m| self.subtree_fits(m, depth + 2))
        {
            return Err(InsertError::TooDeep(nt).into());
        }
        match put_at {
            Some(i) => kept.insert(i, new),
            None => kept.push(new),
        }
        for &m in &moved {
            self.obj_mut(m).parent = Some(new);
        }
        {
            let n = self.obj_mut(new);
            n.children = moved;
            n.parent = Some(cur);
        }
        if let Some(src) = take_memory_from {
            let mem = core::mem::take(&mut self.obj_mut(src).memory_children);
            for &m in &mem {
                self.obj_mut(m).parent = Some(new);
            }
            self.obj_mut(new).memory_children = mem;
        }
        self.obj_mut(cur).children = kept;
        Ok(Placement::Done(Inserted::New(new)))
    }

    pub(super) fn insert_memory(
        &mut self,
        mut obj: Object,
    ) -> Result<Option<Inserted>, TopologyError> {
        if !self.keeps_type(obj.obj_type) {
            return Ok(None);
        }
        let nodeset = match &obj.nodeset {
            Some(n) if n.weight() == Some(1) => n.clone(),
            _ => return Err(InsertError::NotOneNode(obj.obj_type).into()),
        };
        match &obj.complete_nodeset {
            None => obj.complete_nodeset = Some(nodeset.clone()),
            Some(c) if !c.includes(&nodeset) => {
                return Err(InsertError::NodesetOutsideComplete(obj.obj_type).into());
            }
            _ => {}
        }
        // A memory Group made for the object takes its complete cpuset as
        // given (hwloc copies it), before it defaults to the cpuset.
        let given_complete = obj.complete_cpuset.clone();
        if obj.cpuset.is_none() {
            obj.cpuset = Some(obj.complete_cpuset.clone().unwrap_or_default());
        }
        if obj.complete_cpuset.is_none() {
            obj.complete_cpuset = obj.cpuset.clone();
        }
        let cpuset = obj.cpuset.clone().unwrap_or_default();
        let parent = self.find_memory_parent(&cpuset, given_complete)?;
        let id = self.push(obj);
        let res = match self.attach_memory(parent, id) {
            Ok(r) => r,
            Err(e) => {
                // The refused object never joined the tree.
                self.objs[id] = None;
                return Err(e.into());
            }
        };
        match res {
            Some(Inserted::New(i)) => {
                let o = self.obj(i);
                if o.obj_type == ObjType::NUMANode
                    && let Some(os) = o.os_index
                {
                    let root = self.root;
                    let r = self.obj_mut(root);
                    r.nodeset.get_or_insert_with(NodeSet::new).set(os);
                    r.complete_nodeset.get_or_insert_with(NodeSet::new).set(os);
                }
            }
            _ => self.objs[id] = None,
        }
        Ok(res)
    }

    /// The highest normal object whose set equals `cpuset`, or a new
    /// memory Group of that set when none exists (as hwloc does for NUMA
    /// nodes local to several packages, or with no CPU at all).  The
    /// Group's complete cpuset is `complete` (the memory object's, as its
    /// source gave it): without one, [`finish`](Self::finish) derives it
    /// from the cpuset within the parent's, so offline CPUs a node's map
    /// lists stay out of the node's complete cpuset, as in hwloc.
    pub(super) fn find_memory_parent(
        &mut self,
        cpuset: &CpuSet,
        complete: Option<CpuSet>,
    ) -> Result<ObjId, TopologyError> {
        let root = self.root;
        let mut parent = root;
        if !cpuset.is_empty() {
            // Walk down to the smallest object covering the set, stopping at an exact match.
            loop {
                let mut next = None;
                for &c in &self.obj(parent).children {
                    if let Some(cs) = self.obj(c).cpuset.as_ref()
                        && cs.includes(cpuset)
                        && !cs.is_empty()
                    {
                        next = Some(c);
                        break;
                    }
                }
                match next {
                    Some(c) if self.obj(c).cpuset.as_ref() == Some(cpuset) => {
                        parent = c;
                        break;
                    }
                    Some(c) => parent = c,
                    None => break,
                }
            }
            if self.obj(parent).obj_type == ObjType::PU {
                parent = self.obj(parent).parent.unwrap_or(root);
            }
            if parent != root && self.obj(parent).cpuset.as_ref() == Some(cpuset) {
                return Ok(parent);
            }
        }
        if !self.keeps_type(ObjType::Group) {
            return Ok(parent);
        }
        let mut g = Object::new(ObjType::Group, None);
        if let ObjAttr::Group(ga) = &mut g.attr {
            ga.kind = group_kind::MEMORY;
        }
        g.cpuset = Some(cpuset.clone());
        g.complete_cpuset = complete;
        let gid = self.push(g);
        match self.insert_normal_under(parent, gid) {
            Ok(Inserted::New(i)) => Ok(i),
            Ok(Inserted::Merged(m)) => {
                self.objs[gid] = None;
                Ok(m)
            }
            Err(_) => {
                self.objs[gid] = None;
                Ok(parent)
            }
        }
    }

    fn first_node(&self, id: ObjId) -> u32 {
        self.obj(id)
            .nodeset
            .as_ref()
            .and_then(|n| n.first())
            .unwrap_or(u32::MAX)
    }

    /// Attaches the memory object `new` below `parent`, among memory
    /// children ordered by first node: a NUMA node goes below the
    /// memory-side caches of its node, a memory-side cache above the
    /// smaller-level ones.  A loop, not recursion: memory-side caches may
    /// chain.  `None` when an equal object is already there.
    fn attach_memory(
        &mut self,
        mut parent: ObjId,
        new: ObjId,
    ) -> Result<Option<Inserted>, InsertError> {
        let first = self.first_node(new);
        let tn = self.obj(new).obj_type;
        'descend: loop {
            let list = self.obj(parent).memory_children.clone();
            for (pos, &cur) in list.iter().enumerate() {
                let cf = self.first_node(cur);
                if first < cf {
                    self.memory_fits(parent, new, None)?;
                    self.obj_mut(parent).memory_children.insert(pos, new);
                    self.obj_mut(new).parent = Some(parent);
                    return Ok(Some(Inserted::New(new)));
                }
                if first == cf {
                    let tc = self.obj(cur).obj_type;
                    if tn == ObjType::NUMANode {
                        if tc == ObjType::NUMANode {
                            return Ok(None);
                        }
                        parent = cur;
                        continue 'descend;
                    }
                    if tc == ObjType::MemCache {
                        let dc = self.obj(cur).cache().map(|c| c.depth).unwrap_or(0);
                        let dn = self.obj(new).cache().map(|c| c.depth).unwrap_or(0);
                        if dc == dn {
                            return Ok(None);
                        }
                        if dc > dn {
                            parent = cur;
                            continue 'descend;
                        }
                    }
                    // The new memcache goes above the existing object.
                    self.memory_fits(parent, new, Some(cur))?;
                    self.obj_mut(parent).memory_children[pos] = new;
                    self.obj_mut(new).memory_children = thin_vec::thin_vec![cur];
                    self.obj_mut(new).parent = Some(parent);
                    self.obj_mut(cur).parent = Some(new);
                    return Ok(Some(Inserted::New(new)));
                }
            }
            self.memory_fits(parent, new, None)?;
            self.obj_mut(parent).memory_children.push(new);
            self.obj_mut(new).parent = Some(parent);
            return Ok(Some(Inserted::New(new)));
        }
    }

    /// Whether `new` may go below `parent`, taking `below` (and its
    /// subtree) under it: the parent's type and the depth limit.
    fn memory_fits(
        &self,
        parent: ObjId,
        new: ObjId,
        below: Option<ObjId>,
    ) -> Result<(), InsertError> {
        let (tn, tp) = (self.obj(new).obj_type, self.obj(parent).obj_type);
        if !tn.can_be_child_of(tp) {
            return Err(InsertError::WrongParent {
                child: tn,
                parent: tp,
            });
        }
        let d = self.depth_below_root(parent) + 1;
        if d > MAX_TREE_DEPTH || below.is_some_and(|b| !self.subtree_fits(b, d + 1)) {
            return Err(InsertError::TooDeep(tn));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::test_machines::cs;
    use alloc::vec::Vec;

    #[test]
    fn equal_objects_merge_and_intersections_fail() {
        let mut t = Topology::new();
        for pu in 0..4 {
            t.insert_by_cpuset(Object::with_cpuset(
                ObjType::PU,
                Some(pu),
                CpuSet::from_index(pu),
            ))
            .unwrap();
        }
        let a = t
            .insert_by_cpuset(Object::with_cpuset(ObjType::Core, Some(0), cs(0, 1)))
            .unwrap()
            .unwrap();
        let b = t
            .insert_by_cpuset(Object::with_cpuset(ObjType::Core, None, cs(0, 1)))
            .unwrap()
            .unwrap();
        assert!(matches!(b, Inserted::Merged(x) if x == a.id()));
        let err = t.insert_by_cpuset(Object::with_cpuset(ObjType::Package, None, cs(1, 2)));
        assert!(matches!(err, Err(TopologyError::Intersection { .. })));
        t.finish().unwrap();
        t.check().unwrap();
    }

    #[test]
    fn cpuless_numa_node_gets_a_memory_group_free_of_pus() {
        let mut t = Topology::new();
        for pu in 0..2 {
            t.insert_by_cpuset(Object::with_cpuset(
                ObjType::PU,
                Some(pu),
                CpuSet::from_index(pu),
            ))
            .unwrap();
        }
        for n in 0..2 {
            let mut node = Object::new(ObjType::NUMANode, Some(n));
            node.cpuset = Some(if n == 0 { cs(0, 1) } else { CpuSet::new() });
            node.nodeset = Some(NodeSet::from_index(n));
            t.insert_by_cpuset(node).unwrap();
        }
        t.finish().unwrap();
        t.check().unwrap();
        assert_eq!(t.level(Depth::NumaNode).len(), 2);
        assert_eq!(t.nodeset(), &NodeSet::from_range(0, Some(1)));
    }

    #[test]
    fn rejected_objects_leave_no_orphan() {
        let mut t = Topology::new();
        for pu in 0..4 {
            t.insert_by_cpuset(Object::with_cpuset(
                ObjType::PU,
                Some(pu),
                CpuSet::from_index(pu),
            ))
            .unwrap();
        }
        t.insert_by_cpuset(Object::with_cpuset(
            ObjType::Core,
            None,
            CpuSet::from_range(0, Some(1)),
        ))
        .unwrap();
        let before = t.ids().count();
        let bad = Object::with_cpuset(ObjType::Package, None, CpuSet::from_range(1, Some(2)));
        assert!(t.insert_by_cpuset(bad).is_err());
        assert_eq!(t.ids().count(), before);
        t.finish().unwrap();
        t.check().unwrap();
    }

    #[test]
    fn many_flat_siblings_insert_quickly_and_in_order() {
        // Thousands of PUs under one parent, in shuffled order: the bounds
        // fast path keeps this from walking every sibling's bitmap.
        let n = 8192u32;
        let mut t = Topology::new();
        let mut order: Vec<u32> = (0..n).collect();
        // A fixed permutation (multiplicative hashing), no randomness needed.
        order.sort_by_key(|&i| i.wrapping_mul(2_654_435_761));
        for pu in order {
            t.insert_by_cpuset(Object::with_cpuset(
                ObjType::PU,
                Some(pu),
                CpuSet::from_index(pu),
            ))
            .unwrap();
        }
        t.finish().unwrap();
        t.check().unwrap();
        let os: Vec<u32> = t
            .objs_by_type(ObjType::PU)
            .iter()
            .map(|&p| t.obj(p).os_index.unwrap())
            .collect();
        assert_eq!(os, (0..n).collect::<Vec<_>>());
    }
}
