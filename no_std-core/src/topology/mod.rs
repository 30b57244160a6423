//! The topology tree: insertion, filtering, levels and queries.
//!
//! Objects live in an arena and refer to each other by [`ObjId`].  A
//! backend builds a topology in two steps: it adds objects (by cpuset with
//! [`Topology::insert_by_cpuset`], or under an explicit parent with
//! [`Topology::insert_by_parent`]), then calls [`Topology::finish`], which
//! propagates sets, applies type filters, merges redundant levels and
//! computes depths, logical indexes and the special levels, as hwloc does at
//! the end of its discovery.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::cmp::Ordering;

use crate::bitmap::{CpuSet, NodeSet};
use crate::cpukinds::CpuKind;
use crate::distances::Distances;
use crate::memattrs::MemAttr;
use crate::object::*;

/// How much of a type to keep (hwloc's `hwloc_type_filter_e`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeFilter {
    /// Keep every object of the type.
    KeepAll,
    /// Remove every object of the type.
    KeepNone,
    /// Keep only objects that bring structure (levels that differ from their neighbours).
    KeepStructure,
    /// For I/O and Misc: keep only objects deemed important.
    KeepImportant,
}

/// A special (non-normal) level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpecialLevel {
    /// NUMA nodes.
    NumaNode = 0,
    /// Bridges.
    Bridge = 1,
    /// PCI devices.
    PciDevice = 2,
    /// OS devices.
    OsDevice = 3,
    /// Misc objects.
    Misc = 4,
    /// Memory-side caches.
    MemCache = 5,
}

impl SpecialLevel {
    fn of(depth: Depth) -> Option<SpecialLevel> {
        Some(match depth {
            Depth::NumaNode => SpecialLevel::NumaNode,
            Depth::Bridge => SpecialLevel::Bridge,
            Depth::PciDevice => SpecialLevel::PciDevice,
            Depth::OsDevice => SpecialLevel::OsDevice,
            Depth::Misc => SpecialLevel::Misc,
            Depth::MemCache => SpecialLevel::MemCache,
            _ => return None,
        })
    }
}

/// Where a type lives in the level structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeDepth {
    /// Exactly one level has that type.
    Depth(Depth),
    /// No object of that type.
    Unknown,
    /// Several levels have that type (Groups, or caches of different kinds).
    Multiple,
}

/// Errors raised while building a topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TopologyError {
    /// An object's set intersects a sibling's without inclusion.
    Intersection {
        /// The object being inserted.
        new: String,
        /// The object it conflicts with.
        existing: String,
    },
    /// The topology has no PU.
    NoPu,
    /// The topology has no NUMA node.
    NoNuma,
    /// An object is not where the structure allows it.
    Invalid(String),
}

impl core::fmt::Display for TopologyError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            TopologyError::Intersection { new, existing } => write!(
                f,
                "{new} intersects {existing} without inclusion; it cannot be placed in the tree"
            ),
            TopologyError::NoPu => f.write_str("topology does not contain any PU"),
            TopologyError::NoNuma => f.write_str("topology does not contain any NUMA node"),
            TopologyError::Invalid(s) => f.write_str(s),
        }
    }
}

/// A memory tier: NUMA nodes of similar performance.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MemTier {
    /// Kinds of memory in the tier (hwloc 3 `kinds` bitmask: DRAM, HBM, NVM, ...).
    pub kinds: u64,
    /// Nodes in the tier.
    pub nodeset: NodeSet,
}

/// The locality of a PCI bus range, as recorded in hwloc 3 XML (`pci_locality`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PciLocality {
    /// PCI domain.
    pub domain: u32,
    /// First bus.
    pub bus_min: u8,
    /// Last bus.
    pub bus_max: u8,
    /// PUs close to those buses.
    pub cpuset: CpuSet,
}

/// A machine's topology.
#[derive(Clone, Debug)]
pub struct Topology {
    objs: Vec<Option<Object>>,
    root: ObjId,
    levels: Vec<Vec<ObjId>>,
    special: [Vec<ObjId>; 6],
    type_depth: [TypeDepth; 20],
    filters: [TypeFilter; 20],
    next_gp_index: u64,
    /// PUs the process may use.
    pub allowed_cpuset: CpuSet,
    /// NUMA nodes the process may use.
    pub allowed_nodeset: NodeSet,
    /// Keep disallowed PUs and NUMA nodes in the tree (lstopo's `--disallowed`).
    pub include_disallowed: bool,
    /// Distance matrices.
    pub distances: Vec<Distances>,
    /// Memory attributes (bandwidth, latency, custom ones).
    pub memattrs: Vec<MemAttr>,
    /// CPU kinds, from least to most efficient once ranked.
    pub cpukinds: Vec<CpuKind>,
    /// Memory tiers.
    pub memtiers: Vec<MemTier>,
    /// Topology-wide infos (hwloc 3 keeps them outside the root object).
    pub infos: Vec<Info>,
    /// Supported features recorded by the discovering machine (`support` in XML).
    pub support: Vec<String>,
    /// PCI bus localities recorded in hwloc 3 XML.
    pub pci_localities: Vec<PciLocality>,
    /// Whether this topology describes the running system (binding allowed).
    pub is_thissystem: bool,
    /// How CPU kinds are ranked (`HWLOC_CPUKINDS_RANKING`).
    pub cpukinds_ranking: crate::cpukinds::Ranking,
    /// The allowed sets as requested before `finish` narrowed them to the
    /// PUs and nodes that exist, and the narrowed values it produced: a
    /// later `finish` starts again from the request unless the caller
    /// changed the sets in between.
    allowed_request: Option<((CpuSet, NodeSet), (CpuSet, NodeSet))>,
    /// First and last PU of each object's complete cpuset, cached so that
    /// inserting among many siblings rejects disjoint ones without walking
    /// their bitmaps.  `None` means unknown: recomputed on use.
    set_bounds: Vec<Option<(u32, u32)>>,
    finished: bool,
}

impl Default for Topology {
    fn default() -> Self {
        Self::new()
    }
}

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

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum SetCmp {
    Equal,
    Included,
    Contains,
    Intersects,
    Different,
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

/// Whether a PCI class is worth showing when only important I/O is kept.
pub fn pci_class_is_important(class_id: u16) -> bool {
    let base = class_id >> 8;
    matches!(base, 0x00 | 0x01 | 0x02 | 0x03 | 0x06 | 0x0b | 0x12)
        || matches!(class_id, 0x0c04 | 0x0c06 | 0x0502)
}

/// Whether an OS device is worth showing when only important I/O is kept.
pub fn osdev_is_important(types: OsDevTypes) -> bool {
    types.0 != OsDevTypes::DMA
}

impl Topology {
    /// An empty topology holding only a Machine root, with hwloc's default filters.
    pub fn new() -> Self {
        let mut root = Object::new(ObjType::Machine, Some(0));
        root.gp_index = 1;
        root.cpuset = Some(CpuSet::new());
        root.complete_cpuset = Some(CpuSet::new());
        root.nodeset = Some(NodeSet::new());
        root.complete_nodeset = Some(NodeSet::new());
        let mut filters = [TypeFilter::KeepAll; 20];
        for t in [
            ObjType::L1ICache,
            ObjType::L2ICache,
            ObjType::L3ICache,
            ObjType::MemCache,
            ObjType::Misc,
            ObjType::Bridge,
            ObjType::PCIDevice,
            ObjType::OSDevice,
        ] {
            filters[t.index()] = TypeFilter::KeepNone;
        }
        filters[ObjType::Group.index()] = TypeFilter::KeepStructure;
        Topology {
            objs: vec![Some(root)],
            root: 0,
            levels: vec![vec![0]],
            special: Default::default(),
            type_depth: [TypeDepth::Unknown; 20],
            filters,
            next_gp_index: 2,
            allowed_cpuset: CpuSet::full(),
            allowed_nodeset: NodeSet::full(),
            include_disallowed: false,
            distances: Vec::new(),
            memattrs: Vec::new(),
            cpukinds: Vec::new(),
            memtiers: Vec::new(),
            infos: Vec::new(),
            support: Vec::new(),
            pci_localities: Vec::new(),
            is_thissystem: false,
            cpukinds_ranking: crate::cpukinds::Ranking::Default,
            allowed_request: None,
            set_bounds: Vec::new(),
            finished: false,
        }
    }

    // ------------------------------------------------------------ filters

    /// Sets the filter of a type, with hwloc's restrictions: Machine, PU and
    /// NUMA nodes are always kept, Groups are never kept unconditionally, and
    /// I/O and Misc have no structure to keep.  "Important" means "all" for
    /// normal and memory types.
    pub fn set_type_filter(&mut self, t: ObjType, f: TypeFilter) -> Result<(), TopologyError> {
        let f = match (t, f) {
            (ObjType::Machine | ObjType::PU | ObjType::NUMANode, f) if f != TypeFilter::KeepAll => {
                return Err(TopologyError::Invalid(alloc::format!(
                    "{t} objects cannot be filtered out"
                )))
            }
            (ObjType::Group, TypeFilter::KeepAll) => {
                return Err(TopologyError::Invalid(
                    "Group objects can only be kept for structure".into(),
                ))
            }
            (t, TypeFilter::KeepStructure) if matches!(t.kind(), ObjKind::Io | ObjKind::Misc) => {
                return Err(TopologyError::Invalid(alloc::format!(
                    "{t} objects have no structure to keep"
                )))
            }
            (t, TypeFilter::KeepImportant) if !matches!(t.kind(), ObjKind::Io | ObjKind::Misc) => {
                TypeFilter::KeepAll
            }
            (_, f) => f,
        };
        self.filters[t.index()] = f;
        Ok(())
    }

    /// Sets the filter of every type, skipping types that refuse it (as hwloc does).
    pub fn set_all_types_filter(&mut self, f: TypeFilter) {
        for t in ObjType::ALL {
            let _ = self.set_type_filter(t, f);
        }
    }

    /// Sets the filter of all CPU caches (data, unified and instruction).
    pub fn set_cache_types_filter(&mut self, f: TypeFilter) {
        for t in ObjType::ALL.iter().filter(|t| t.is_cache()) {
            let _ = self.set_type_filter(*t, f);
        }
    }

    /// Sets the filter of instruction caches.
    pub fn set_icache_types_filter(&mut self, f: TypeFilter) {
        for t in ObjType::ALL.iter().filter(|t| t.is_icache()) {
            let _ = self.set_type_filter(*t, f);
        }
    }

    /// Sets the filter of bridges, PCI devices and OS devices.
    pub fn set_io_types_filter(&mut self, f: TypeFilter) {
        for t in [ObjType::Bridge, ObjType::PCIDevice, ObjType::OSDevice] {
            let _ = self.set_type_filter(t, f);
        }
    }

    /// The filter of a type.
    pub fn type_filter(&self, t: ObjType) -> TypeFilter {
        self.filters[t.index()]
    }

    /// Whether objects of this type may be kept at all.
    pub fn keeps_type(&self, t: ObjType) -> bool {
        self.filters[t.index()] != TypeFilter::KeepNone
    }

    /// Whether this particular object passes its type filter on its own
    /// (structure filters are applied later, level by level).
    pub fn keeps_object(&self, o: &Object) -> bool {
        match self.filters[o.obj_type.index()] {
            TypeFilter::KeepNone => false,
            TypeFilter::KeepImportant => match o.obj_type {
                ObjType::PCIDevice => o.pci().is_some_and(|p| pci_class_is_important(p.class_id)),
                ObjType::OSDevice => o.osdev_types().is_some_and(osdev_is_important),
                _ => true,
            },
            _ => true,
        }
    }

    // ------------------------------------------------------------ access

    /// The root object's id.
    pub fn root(&self) -> ObjId {
        self.root
    }

    /// The object with this id.
    ///
    /// # Panics
    /// If the id was never returned by this topology or the object was removed.
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
    pub fn obj_mut(&mut self, id: ObjId) -> &mut Object {
        if let Some(b) = self.set_bounds.get_mut(id) {
            *b = None;
        }
        self.objs[id]
            .as_mut()
            .expect("object id refers to a removed object")
    }

    /// The object with this id, if it is still in the topology.
    pub fn get(&self, id: ObjId) -> Option<&Object> {
        self.objs.get(id).and_then(|o| o.as_ref())
    }

    /// Number of normal levels.
    pub fn depth(&self) -> u32 {
        self.levels.len() as u32
    }

    /// Objects of a level, left to right.
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
    pub fn normal_levels(&self) -> &[Vec<ObjId>] {
        &self.levels
    }

    /// Where objects of a type are.
    pub fn type_depth(&self, t: ObjType) -> TypeDepth {
        if let Some(d) = Depth::special_for(t) {
            return TypeDepth::Depth(d);
        }
        self.type_depth[t.index()]
    }

    /// The type of a level's objects.
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

    /// The root's cpuset: allowed PUs of the topology.
    pub fn cpuset(&self) -> &CpuSet {
        self.obj(self.root)
            .cpuset
            .as_ref()
            .expect("root has a cpuset")
    }
    /// The root's complete cpuset: every PU, online or not.
    pub fn complete_cpuset(&self) -> &CpuSet {
        self.obj(self.root)
            .complete_cpuset
            .as_ref()
            .expect("root has a complete cpuset")
    }
    /// The root's nodeset.
    pub fn nodeset(&self) -> &NodeSet {
        self.obj(self.root)
            .nodeset
            .as_ref()
            .expect("root has a nodeset")
    }
    /// The root's complete nodeset.
    pub fn complete_nodeset(&self) -> &NodeSet {
        self.obj(self.root)
            .complete_nodeset
            .as_ref()
            .expect("root has a complete nodeset")
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

    /// Finds an object by type and OS index.
    pub fn obj_by_os_index(&self, t: ObjType, os: u32) -> Option<ObjId> {
        self.objs_by_type(t)
            .into_iter()
            .find(|&i| self.obj(i).os_index == Some(os))
    }

    fn push(&mut self, mut obj: Object) -> ObjId {
        if obj.gp_index == 0 {
            obj.gp_index = self.alloc_gp_index();
        } else {
            self.reserve_gp_index(obj.gp_index);
        }
        obj.parent = None;
        self.objs.push(Some(obj));
        self.finished = false;
        self.objs.len() - 1
    }

    fn describe(&self, id: ObjId) -> String {
        let o = self.obj(id);
        let mut s = String::from(o.obj_type.xml_name());
        if let Some(os) = o.os_index {
            s.push_str(&alloc::format!(" P#{os}"));
        }
        if let Some(c) = o.complete_cpuset.as_ref().or(o.cpuset.as_ref()) {
            s.push_str(&alloc::format!(" (cpuset {c})"));
        }
        s
    }

    // ------------------------------------------------------------ insertion

    /// Replaces the root object's attributes (type stays Machine unless the
    /// caller changes it, infos and names are taken as given).
    pub fn root_mut(&mut self) -> &mut Object {
        let r = self.root;
        self.obj_mut(r)
    }

    /// Adds an object as the last child of `parent` in the list its kind
    /// belongs to, without looking at its sets.  This is how XML import and
    /// I/O discovery attach objects.  Returns its id.
    pub fn insert_by_parent(&mut self, parent: ObjId, obj: Object) -> ObjId {
        let t = obj.obj_type;
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
        id
    }

    /// Inserts a normal or memory object where its sets say it belongs, as
    /// hwloc's `hwloc_insert_object_by_cpuset`.
    ///
    /// Normal objects need a cpuset (or complete cpuset); memory objects a
    /// nodeset with a single node.  An object equal to an existing one of
    /// the same type is merged into it.  Objects whose type is filtered out
    /// are dropped and `Ok(None)` is returned.
    pub fn insert_by_cpuset(&mut self, mut obj: Object) -> Result<Option<Inserted>, TopologyError> {
        match obj.kind() {
            ObjKind::Normal => {}
            ObjKind::Memory => return self.insert_memory(obj),
            _ => {
                return Err(TopologyError::Invalid(alloc::format!(
                    "{} objects are attached by parent, not by cpuset",
                    obj.obj_type
                )))
            }
        }
        if obj.cpuset.is_none() && obj.complete_cpuset.is_none() {
            return Err(TopologyError::Invalid(alloc::format!(
                "{} object has no cpuset",
                obj.obj_type
            )));
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
        if o.obj_type == ObjType::PU {
            if let Some(os) = o.os_index {
                let allowed = o.cpuset.as_ref().is_some_and(|c| c.is_set(os));
                let root = self.root;
                let r = self.obj_mut(root);
                if allowed {
                    r.cpuset.get_or_insert_with(CpuSet::new).set(os);
                }
                r.complete_cpuset.get_or_insert_with(CpuSet::new).set(os);
            }
        }
        Ok(Some(res))
    }

    /// First and last PU of an object's complete cpuset (cached).
    fn bounds(&mut self, id: ObjId) -> Option<(u32, u32)> {
        if self.set_bounds.len() < self.objs.len() {
            self.set_bounds.resize(self.objs.len(), None);
        }
        if let Some(b) = self.set_bounds[id] {
            return Some(b);
        }
        let c = self.objs[id].as_ref()?.complete_cpuset.as_ref()?;
        let b = (c.first()?, c.last()?);
        self.set_bounds[id] = Some(b);
        Some(b)
    }

    fn obj_set(&self, id: ObjId) -> Option<&CpuSet> {
        let o = self.obj(id);
        o.complete_cpuset.as_ref().or(o.cpuset.as_ref())
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

    fn cmp_types(&self, a: ObjId, b: ObjId) -> SetCmp {
        let (oa, ob) = (self.obj(a), self.obj(b));
        match oa.obj_type.compare(ob.obj_type) {
            None => SetCmp::Different,
            Some(Ordering::Greater) => SetCmp::Included,
            Some(Ordering::Less) => SetCmp::Contains,
            Some(Ordering::Equal) => {
                if let (Some(g1), Some(g2)) = (oa.group(), ob.group()) {
                    if g1.kind != g2.kind || g1.subkind != g2.subkind {
                        return SetCmp::Different;
                    }
                }
                SetCmp::Equal
            }
        }
    }

    /// Orders two objects of one level by their first PU.
    fn cmp_first(&self, a: ObjId, b: ObjId) -> Ordering {
        match (self.obj_set(a), self.obj_set(b)) {
            (Some(x), Some(y)) => x.compare_first(y),
            _ => Ordering::Equal,
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

    fn insert_normal_under(&mut self, cur: ObjId, new: ObjId) -> Result<Inserted, TopologyError> {
        let children = self.obj(cur).children.clone();
        let mut kept: Vec<ObjId> = Vec::with_capacity(children.len() + 1);
        let mut moved: Vec<ObjId> = Vec::new();
        let mut take_memory_from: Option<ObjId> = None;
        let mut put_at: Option<usize> = None;
        let new_bounds = self.bounds(new);
        for &child in &children {
            // Fast path: siblings whose PU ranges do not overlap are disjoint.
            if let (Some((nf, nl)), Some((cf, cl))) = (new_bounds, self.bounds(child)) {
                if nl < cf || nf > cl {
                    if put_at.is_none() && nf < cf {
                        put_at = Some(kept.len());
                    }
                    kept.push(child);
                    continue;
                }
            }
            let setres = self.cmp_sets(new, child);
            let mut res = setres;
            if res == SetCmp::Equal {
                if let Some(m) = self.try_merge_group(child, new) {
                    return Ok(Inserted::Merged(m));
                }
                res = self.cmp_types(new, child);
            }
            match res {
                SetCmp::Equal => {
                    self.merge_equal(new, child);
                    return Ok(Inserted::Merged(child));
                }
                SetCmp::Included => return self.insert_normal_under(child, new),
                SetCmp::Intersects => {
                    return Err(TopologyError::Intersection {
                        new: self.describe(new),
                        existing: self.describe(child),
                    })
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
        Ok(Inserted::New(new))
    }

    fn insert_memory(&mut self, mut obj: Object) -> Result<Option<Inserted>, TopologyError> {
        if !self.keeps_type(obj.obj_type) {
            return Ok(None);
        }
        let nodeset = match &obj.nodeset {
            Some(n) if n.weight() == Some(1) => n.clone(),
            _ => {
                return Err(TopologyError::Invalid(alloc::format!(
                    "{} object needs a nodeset with exactly one node",
                    obj.obj_type
                )))
            }
        };
        match &obj.complete_nodeset {
            None => obj.complete_nodeset = Some(nodeset.clone()),
            Some(c) if !c.includes(&nodeset) => {
                return Err(TopologyError::Invalid(alloc::format!(
                    "{} object's nodeset is not included in its complete nodeset",
                    obj.obj_type
                )))
            }
            _ => {}
        }
        if obj.cpuset.is_none() {
            obj.cpuset = Some(obj.complete_cpuset.clone().unwrap_or_default());
        }
        if obj.complete_cpuset.is_none() {
            obj.complete_cpuset = obj.cpuset.clone();
        }
        let cpuset = obj.cpuset.clone().unwrap_or_default();
        let parent = self.find_memory_parent(&cpuset)?;
        let id = self.push(obj);
        let res = self.attach_memory(parent, id);
        match res {
            Some(Inserted::New(i)) => {
                let o = self.obj(i);
                if o.obj_type == ObjType::NUMANode {
                    if let Some(os) = o.os_index {
                        let root = self.root;
                        let r = self.obj_mut(root);
                        r.nodeset.get_or_insert_with(NodeSet::new).set(os);
                        r.complete_nodeset.get_or_insert_with(NodeSet::new).set(os);
                    }
                }
            }
            _ => self.objs[id] = None,
        }
        Ok(res)
    }

    /// The highest normal object whose set equals `cpuset`, or a new
    /// memory Group of that set when none exists (as hwloc does for NUMA
    /// nodes local to several packages, or with no CPU at all).
    fn find_memory_parent(&mut self, cpuset: &CpuSet) -> Result<ObjId, TopologyError> {
        let root = self.root;
        let mut parent = root;
        if !cpuset.is_empty() {
            // Walk down to the smallest object covering the set, stopping at an exact match.
            loop {
                let mut next = None;
                for &c in &self.obj(parent).children {
                    if let Some(cs) = self.obj(c).cpuset.as_ref() {
                        if cs.includes(cpuset) && !cs.is_empty() {
                            next = Some(c);
                            break;
                        }
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
        g.complete_cpuset = Some(cpuset.clone());
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

    fn attach_memory(&mut self, parent: ObjId, new: ObjId) -> Option<Inserted> {
        let first = self.first_node(new);
        let list = self.obj(parent).memory_children.clone();
        for (pos, &cur) in list.iter().enumerate() {
            let cf = self.first_node(cur);
            if first < cf {
                self.obj_mut(parent).memory_children.insert(pos, new);
                self.obj_mut(new).parent = Some(parent);
                return Some(Inserted::New(new));
            }
            if first == cf {
                let (tn, tc) = (self.obj(new).obj_type, self.obj(cur).obj_type);
                if tn == ObjType::NUMANode {
                    if tc == ObjType::NUMANode {
                        return None;
                    }
                    return self.attach_memory(cur, new);
                }
                if tc == ObjType::MemCache {
                    let dc = self.obj(cur).cache().map(|c| c.depth).unwrap_or(0);
                    let dn = self.obj(new).cache().map(|c| c.depth).unwrap_or(0);
                    if dc == dn {
                        return None;
                    }
                    if dc > dn {
                        return self.attach_memory(cur, new);
                    }
                }
                // The new memcache goes above the existing object.
                self.obj_mut(parent).memory_children[pos] = new;
                self.obj_mut(new).memory_children = vec![cur];
                self.obj_mut(new).parent = Some(parent);
                self.obj_mut(cur).parent = Some(new);
                return Some(Inserted::New(new));
            }
        }
        self.obj_mut(parent).memory_children.push(new);
        self.obj_mut(new).parent = Some(parent);
        Some(Inserted::New(new))
    }

    // ------------------------------------------------------------ removal

    /// Unlinks one object, moving its children of every kind into its
    /// parent at its place.  The root cannot be removed this way.
    fn remove_single(&mut self, id: ObjId) {
        let Some(parent) = self.obj(id).parent else {
            return;
        };
        let o = self.objs[id].take().expect("live object");
        for &c in o
            .children
            .iter()
            .chain(&o.memory_children)
            .chain(&o.io_children)
            .chain(&o.misc_children)
        {
            self.obj_mut(c).parent = Some(parent);
        }
        let p = self.obj_mut(parent);
        let splice = |list: &mut Vec<ObjId>, with: &[ObjId], also_append: bool| {
            if let Some(pos) = list.iter().position(|&x| x == id) {
                list.splice(pos..=pos, with.iter().copied());
            } else if also_append {
                list.extend_from_slice(with);
            }
        };
        match o.obj_type.kind() {
            ObjKind::Normal => {
                splice(&mut p.children, &o.children, true);
                p.memory_children.extend_from_slice(&o.memory_children);
                p.io_children.extend_from_slice(&o.io_children);
                p.misc_children.extend_from_slice(&o.misc_children);
            }
            ObjKind::Memory => {
                splice(&mut p.memory_children, &o.memory_children, true);
                p.misc_children.extend_from_slice(&o.misc_children);
            }
            ObjKind::Io => {
                splice(&mut p.io_children, &o.io_children, true);
                p.misc_children.extend_from_slice(&o.misc_children);
            }
            ObjKind::Misc => {
                splice(&mut p.misc_children, &o.misc_children, true);
            }
        }
        if o.obj_type.kind() == ObjKind::Normal && !o.children.is_empty() {
            // Normal children must stay sorted by their first PU.
            let mut ch = core::mem::take(&mut self.obj_mut(parent).children);
            ch.sort_by(|&a, &b| self.cmp_first(a, b));
            self.obj_mut(parent).children = ch;
        }
    }

    /// Removes an object and everything below it.
    pub fn remove_subtree(&mut self, id: ObjId) {
        if let Some(parent) = self.obj(id).parent {
            let p = self.obj_mut(parent);
            for list in [
                &mut p.children,
                &mut p.memory_children,
                &mut p.io_children,
                &mut p.misc_children,
            ] {
                list.retain(|&x| x != id);
            }
        }
        let mut stack = vec![id];
        while let Some(i) = stack.pop() {
            if let Some(o) = self.objs[i].take() {
                stack.extend(o.children);
                stack.extend(o.memory_children);
                stack.extend(o.io_children);
                stack.extend(o.misc_children);
            }
        }
        self.finished = false;
    }

    // ------------------------------------------------------------ finishing

    /// Completes the topology after objects were added: sets are
    /// propagated, filters applied, redundant levels merged, and depths,
    /// logical indexes and special levels computed.
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
        self.apply_type_filters(root);
        self.filter_bridges(root, 0);
        self.remove_empty(root);
        if self.obj(root).cpuset.as_ref().is_none_or(|c| c.is_empty()) {
            return Err(TopologyError::NoPu);
        }
        if self.obj(root).nodeset.as_ref().is_none_or(|n| n.is_empty()) {
            return Err(TopologyError::NoNuma);
        }
        self.connect();
        self.merge_structure_levels();
        self.connect();
        self.propagate_total_memory(root);
        self.propagate_symmetric(root);
        self.set_group_depths();
        self.refresh_references();
        self.rank_cpukinds();
        self.set_bounds.clear();
        self.finished = true;
        Ok(())
    }

    /// Whether [`finish`](Self::finish) ran since the last structural change.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    fn propagate_nodeset(&mut self, id: ObjId, parent_nodeset: Option<&NodeSet>) {
        let mut ns = parent_nodeset.cloned().unwrap_or_default();
        let mut cns = self.obj(id).complete_nodeset.clone().unwrap_or_default();
        cns = &cns | &ns;
        for m in self.obj(id).memory_children.clone() {
            let mo = self.obj(m);
            if let Some(n) = &mo.nodeset {
                ns = &ns | n;
            }
            // A complete set left unset is the plain one.
            if let Some(n) = mo.complete_nodeset.as_ref().or(mo.nodeset.as_ref()) {
                cns = &cns | n;
            }
        }
        let children = self.obj(id).children.clone();
        for &c in &children {
            self.propagate_nodeset(c, Some(&ns));
        }
        for &c in &children {
            let co = self.obj(c);
            if let Some(n) = &co.nodeset {
                ns = &ns | n;
            }
            if let Some(n) = &co.complete_nodeset {
                cns = &cns | n;
            }
        }
        let o = self.obj_mut(id);
        o.nodeset = Some(ns);
        o.complete_nodeset = Some(cns);
    }

    fn fixup_sets(&mut self, id: ObjId) {
        let o = self.obj(id);
        let (pc, pcc, pn, pcn) = (
            o.cpuset.clone().unwrap_or_default(),
            o.complete_cpuset.clone().unwrap_or_default(),
            o.nodeset.clone().unwrap_or_default(),
            o.complete_nodeset.clone().unwrap_or_default(),
        );
        let children: Vec<ObjId> = o
            .children
            .iter()
            .chain(&o.memory_children)
            .copied()
            .collect();
        for c in children {
            let co = self.obj_mut(c);
            let cs = co.cpuset.take().unwrap_or_default();
            co.cpuset = Some(&cs & &pc);
            let ns = co.nodeset.take().unwrap_or_default();
            co.nodeset = Some(&ns & &pn);
            co.complete_cpuset = Some(match co.complete_cpuset.take() {
                Some(x) => &x & &pcc,
                None => co.cpuset.clone().unwrap_or_default(),
            });
            co.complete_nodeset = Some(match co.complete_nodeset.take() {
                Some(x) => &x & &pcn,
                None => co.nodeset.clone().unwrap_or_default(),
            });
            if co.kind() == ObjKind::Memory {
                co.cpuset = Some(pc.clone());
                co.complete_cpuset = Some(pcc.clone());
            }
            self.fixup_sets(c);
        }
    }

    fn remove_unused_sets(&mut self, id: ObjId, ac: &CpuSet, an: &NodeSet) {
        let o = self.obj_mut(id);
        if let Some(c) = o.cpuset.take() {
            o.cpuset = Some(&c & ac);
        }
        if let Some(n) = o.nodeset.take() {
            o.nodeset = Some(&n & an);
        }
        let children: Vec<ObjId> = o
            .children
            .iter()
            .chain(&o.memory_children)
            .copied()
            .collect();
        for c in children {
            self.remove_unused_sets(c, ac, an);
        }
    }

    /// Removes objects whose type filter rejects them, keeping their children.
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
        for c in children {
            self.apply_type_filters(c);
        }
        if id == self.root {
            return;
        }
        let o = self.obj(id);
        let t = o.obj_type;
        let drop = match self.filters[t.index()] {
            TypeFilter::KeepNone => !matches!(t, ObjType::PU | ObjType::NUMANode),
            TypeFilter::KeepImportant => match t {
                // Bridges are judged later, once their children are known.
                // Unimportant PCI functions go; OS devices below them move up.
                ObjType::PCIDevice => !o.pci().is_some_and(|p| pci_class_is_important(p.class_id)),
                ObjType::OSDevice => !o.osdev_types().is_some_and(osdev_is_important),
                _ => false,
            },
            _ => false,
        };
        if drop {
            self.remove_single(id);
        }
    }

    fn filter_bridges(&mut self, id: ObjId, depth: u32) {
        for c in self.obj(id).children.clone() {
            self.filter_bridges(c, 0);
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

    /// Removes normal objects without PUs and memory objects without nodes,
    /// unless memory or I/O hangs below them.  Returns whether `id` was removed.
    fn remove_empty(&mut self, id: ObjId) -> bool {
        let o = self.obj(id);
        let children: Vec<ObjId> = o
            .children
            .iter()
            .chain(&o.memory_children)
            .copied()
            .collect();
        for c in children {
            self.remove_empty(c);
        }
        let o = self.obj(id);
        if id == self.root
            || !o.children.is_empty()
            || !o.memory_children.is_empty()
            || !o.io_children.is_empty()
        {
            return false;
        }
        let empty = match o.kind() {
            ObjKind::Normal => o.cpuset.as_ref().is_none_or(|c| c.is_empty()),
            ObjKind::Memory => o.nodeset.as_ref().is_none_or(|n| n.is_empty()),
            _ => false,
        };
        if empty {
            self.remove_subtree(id);
        }
        empty
    }

    /// Recomputes sibling ranks, normal levels, depths, logical indexes and special levels.
    pub fn connect(&mut self) {
        let root = self.root;
        self.connect_children(root);
        self.connect_levels();
        self.connect_special_levels();
    }

    fn connect_children(&mut self, id: ObjId) {
        let o = self.obj(id);
        let lists = [
            o.children.clone(),
            o.memory_children.clone(),
            o.io_children.clone(),
            o.misc_children.clone(),
        ];
        for list in lists {
            for (rank, &c) in list.iter().enumerate() {
                let co = self.obj_mut(c);
                co.sibling_rank = rank as u32;
                co.parent = Some(id);
                self.connect_children(c);
            }
        }
    }

    fn same_level_type(&self, a: ObjId, b: ObjId) -> bool {
        self.cmp_types(a, b) == SetCmp::Equal
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
        let mut objs: Vec<ObjId> = self.obj(root).children.clone();
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
    fn merge_structure_levels(&mut self) {
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
        for &c in p
            .memory_children
            .iter()
            .chain(&p.io_children)
            .chain(&p.misc_children)
        {
            self.obj_mut(c).parent = Some(child);
        }
        let co = self.obj_mut(child);
        co.parent = Some(gp);
        prepend(&mut co.memory_children, &p.memory_children);
        prepend(&mut co.io_children, &p.io_children);
        prepend(&mut co.misc_children, &p.misc_children);
    }

    fn replace_root(&mut self, child: ObjId) {
        let old = self.root;
        let p = self.objs[old].take().expect("live root");
        for &c in p
            .memory_children
            .iter()
            .chain(&p.io_children)
            .chain(&p.misc_children)
        {
            self.obj_mut(c).parent = Some(child);
        }
        let co = self.obj_mut(child);
        co.parent = None;
        prepend(&mut co.memory_children, &p.memory_children);
        prepend(&mut co.io_children, &p.io_children);
        prepend(&mut co.misc_children, &p.misc_children);
        self.root = child;
    }

    fn propagate_total_memory(&mut self, id: ObjId) -> u64 {
        let o = self.obj(id);
        let children: Vec<ObjId> = o
            .children
            .iter()
            .chain(&o.memory_children)
            .copied()
            .collect();
        let mut total = 0u64;
        for c in children {
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

    fn propagate_symmetric(&mut self, id: ObjId) -> bool {
        let children = self.obj(id).children.clone();
        let mut ok = true;
        for &c in &children {
            if !self.propagate_symmetric(c) {
                ok = false;
            }
        }
        if ok && children.len() > 1 {
            let mut cur = children.clone();
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

    fn set_group_depths(&mut self) {
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
    fn refresh_references(&mut self) {
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

    fn rank_cpukinds(&mut self) {
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

    // ------------------------------------------------------------ restriction

    /// Removes the PUs outside `set` (hwloc's `hwloc_topology_restrict` by
    /// cpuset), dropping objects left without PUs, and NUMA nodes left with
    /// no PU when `remove_cpuless` is set.
    pub fn restrict(&mut self, set: &CpuSet, remove_cpuless: bool) -> Result<(), TopologyError> {
        if !set.intersects(&self.allowed_cpuset) {
            return Err(TopologyError::Invalid(
                "restriction set does not contain any allowed PU".into(),
            ));
        }
        let dropped = set.not();
        let mut dropped_nodes = NodeSet::new();
        if remove_cpuless {
            for n in self.objs_by_type(ObjType::NUMANode) {
                let o = self.obj(n);
                let cs = o.cpuset.clone().unwrap_or_default();
                if cs.is_empty() || dropped.includes(&cs) {
                    if let Some(os) = o.os_index {
                        dropped_nodes.set(os);
                    }
                }
            }
            if dropped_nodes.includes(&self.allowed_nodeset) {
                return Err(TopologyError::Invalid(
                    "restriction would remove every NUMA node".into(),
                ));
            }
        }
        let root = self.root;
        self.restrict_rec(root, &dropped, &dropped_nodes, remove_cpuless);
        self.allowed_cpuset = self.allowed_cpuset.and_not(&dropped);
        self.allowed_nodeset = self.allowed_nodeset.and_not(&dropped_nodes);
        self.finish_restrict(&dropped);
        Ok(())
    }

    /// Removes the NUMA nodes outside `set` (hwloc's `hwloc_topology_restrict`
    /// with `HWLOC_RESTRICT_FLAG_BYNODESET`), dropping memory objects left
    /// without nodes.  PUs stay, even those whose nodes all went away,
    /// unless `remove_memless` is set: then PUs whose nodes are all removed
    /// go too, with the objects left without PUs
    /// (`HWLOC_RESTRICT_FLAG_REMOVE_MEMLESS`).
    pub fn restrict_by_nodeset(
        &mut self,
        set: &NodeSet,
        remove_memless: bool,
    ) -> Result<(), TopologyError> {
        if !set.intersects(&self.allowed_nodeset) {
            return Err(TopologyError::Invalid(
                "restriction set does not contain any allowed NUMA node".into(),
            ));
        }
        let dropped_nodes = set.not();
        let mut dropped = CpuSet::new();
        if remove_memless {
            for pu in self.objs_by_type(ObjType::PU) {
                let o = self.obj(pu);
                let empty_cpus = o.cpuset.as_ref().is_none_or(|c| c.is_empty());
                let gone = o.nodeset.as_ref().is_none_or(|n| dropped_nodes.includes(n));
                if empty_cpus || gone {
                    if let Some(os) = o.os_index {
                        dropped.set(os);
                    }
                }
            }
            if dropped.includes(&self.allowed_cpuset) {
                return Err(TopologyError::Invalid(
                    "restriction would remove every PU".into(),
                ));
            }
        }
        let root = self.root;
        self.restrict_nodeset_rec(root, &dropped, &dropped_nodes, remove_memless);
        self.allowed_nodeset = self.allowed_nodeset.and_not(&dropped_nodes);
        self.allowed_cpuset = self.allowed_cpuset.and_not(&dropped);
        self.finish_restrict(&dropped);
        Ok(())
    }

    /// Restriction by node set, below `id`: as hwloc, only subtrees whose
    /// sets lose something are visited, and an object goes when it has no
    /// normal or memory child left and no node (PUs only with
    /// `remove_memless`).
    fn restrict_nodeset_rec(&mut self, id: ObjId, dc: &CpuSet, dn: &NodeSet, remove_memless: bool) {
        let o = self.obj_mut(id);
        let mut modified = false;
        if o.complete_nodeset
            .as_ref()
            .is_some_and(|n| n.intersects(dn))
        {
            for s in [&mut o.nodeset, &mut o.complete_nodeset]
                .into_iter()
                .flatten()
            {
                *s = s.and_not(dn);
            }
            modified = true;
        }
        if o.complete_cpuset.as_ref().is_some_and(|c| c.intersects(dc)) {
            for s in [&mut o.cpuset, &mut o.complete_cpuset]
                .into_iter()
                .flatten()
            {
                *s = s.and_not(dc);
            }
            modified = true;
        }
        if modified {
            let children = o.children.clone();
            for c in children {
                self.restrict_nodeset_rec(c, dc, dn, remove_memless);
            }
            if remove_memless {
                self.reorder_children_after_restrict(id);
            }
            let memory = self.obj(id).memory_children.clone();
            for c in memory {
                self.restrict_nodeset_rec(c, dc, dn, remove_memless);
            }
        }
        let o = self.obj(id);
        if id != self.root
            && o.children.is_empty()
            && o.memory_children.is_empty()
            && o.nodeset.as_ref().is_none_or(|n| n.is_empty())
            && (o.obj_type != ObjType::PU || remove_memless)
            && matches!(o.kind(), ObjKind::Normal | ObjKind::Memory)
        {
            self.remove_subtree(id);
        }
    }

    /// What both restrictions do once objects are gone: levels rebuilt,
    /// memory and symmetry recomputed, distances, memory attributes and
    /// CPU kinds cleared of what went away.
    fn finish_restrict(&mut self, dropped: &CpuSet) {
        let root = self.root;
        self.connect();
        self.merge_structure_levels();
        self.connect();
        self.propagate_total_memory(root);
        self.propagate_symmetric(root);
        self.set_group_depths();
        self.refresh_references();
        for k in &mut self.cpukinds {
            k.cpuset = k.cpuset.and_not(dropped);
        }
        self.cpukinds.retain(|k| !k.cpuset.is_empty());
        self.allowed_request = None;
        self.set_bounds.clear();
        self.finished = true;
    }

    fn restrict_rec(&mut self, id: ObjId, dc: &CpuSet, dn: &NodeSet, remove_cpuless: bool) {
        let o = self.obj_mut(id);
        // As hwloc, only objects whose PUs change (or CPU-less ones whose
        // nodes may go) get their children reordered.
        let modified = o.complete_cpuset.as_ref().is_some_and(|c| c.intersects(dc))
            || (remove_cpuless && o.complete_cpuset.as_ref().is_some_and(|c| c.is_empty()));
        for s in [&mut o.cpuset, &mut o.complete_cpuset]
            .into_iter()
            .flatten()
        {
            *s = s.and_not(dc);
        }
        for s in [&mut o.nodeset, &mut o.complete_nodeset]
            .into_iter()
            .flatten()
        {
            *s = s.and_not(dn);
        }
        let children: Vec<ObjId> = o
            .children
            .iter()
            .chain(&o.memory_children)
            .copied()
            .collect();
        for c in children {
            self.restrict_rec(c, dc, dn, remove_cpuless);
        }
        let o = self.obj(id);
        if id != self.root
            && o.children.is_empty()
            && o.memory_children.is_empty()
            && o.cpuset.as_ref().is_none_or(|c| c.is_empty())
            && (o.obj_type != ObjType::NUMANode || remove_cpuless)
            && (o.kind() == ObjKind::Normal || o.kind() == ObjKind::Memory)
        {
            if o.obj_type == ObjType::NUMANode
                && !o.nodeset.as_ref().is_none_or(|n| n.is_empty())
                && !remove_cpuless
            {
                return;
            }
            self.remove_subtree(id);
        } else if modified {
            self.reorder_children_after_restrict(id);
        }
    }

    /// Reorders normal children by their first PU as hwloc's
    /// `hwloc__reorder_children` does after a restriction: each child in
    /// turn goes before the first one it does not sort after, so children
    /// that compare equal (CPU-less ones) end up in reverse order.
    fn reorder_children_after_restrict(&mut self, id: ObjId) {
        let old = core::mem::take(&mut self.obj_mut(id).children);
        let mut ranked: Vec<(usize, ObjId)> = old.into_iter().enumerate().collect();
        ranked.sort_by(|&(ia, a), &(ib, b)| self.cmp_first(a, b).then(ib.cmp(&ia)));
        self.obj_mut(id).children = ranked.into_iter().map(|(_, c)| c).collect();
    }

    // ------------------------------------------------------------ checks

    /// Verifies the tree's invariants and returns the first violation.
    ///
    /// Checked: parent links and sibling ranks; normal children ordered by
    /// first PU without intersection and inside their parent's sets; a PU
    /// has no normal child; memory children only under normal or memory
    /// objects; each normal level holds one type; logical indexes follow
    /// level order; cpusets are included in complete cpusets; the root's
    /// sets contain every PU and NUMA node; NUMA nodes and PUs have OS indexes.
    pub fn check(&self) -> Result<(), String> {
        use alloc::format;
        let root = self.root;
        if self.obj(root).parent.is_some() {
            return Err("root has a parent".into());
        }
        let mut seen_gp = alloc::collections::BTreeSet::new();
        for id in self.iter_dfs() {
            let o = self.obj(id);
            if !seen_gp.insert(o.gp_index) {
                return Err(format!("gp_index {} used twice", o.gp_index));
            }
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
                all = &all | c;
            }
        }
        if !self.complete_cpuset().includes(&all) {
            return Err("root complete cpuset misses some PUs".into());
        }
        for &n in self.level(Depth::NumaNode) {
            let os = self.obj(n).os_index.unwrap_or(u32::MAX);
            if !self.complete_nodeset().is_set(os) {
                return Err(format!("root complete nodeset misses NUMA node {os}"));
            }
        }
        Ok(())
    }
}

fn prepend(list: &mut Vec<ObjId>, front: &[ObjId]) {
    if front.is_empty() {
        return;
    }
    let mut v = Vec::with_capacity(front.len() + list.len());
    v.extend_from_slice(front);
    v.extend_from_slice(list);
    *list = v;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::CacheAttr;

    fn cs(first: u32, last: u32) -> CpuSet {
        CpuSet::from_range(first, Some(last))
    }

    /// 2 packages x 2 cores x 2 PUs, PUs numbered 0-7, with an L2 per core.
    fn small_machine() -> Topology {
        let mut t = Topology::new();
        // Insert bottom-up and out of order on purpose: the tree must not depend on it.
        for pu in (0..8).rev() {
            t.insert_by_cpuset(Object::with_cpuset(
                ObjType::PU,
                Some(pu),
                CpuSet::from_index(pu),
            ))
            .unwrap();
        }
        for core in 0..4 {
            let mut l2 = Object::with_cpuset(ObjType::L2Cache, None, cs(core * 2, core * 2 + 1));
            l2.attr = ObjAttr::Cache(CacheAttr {
                size: 1 << 20,
                depth: 2,
                linesize: 64,
                associativity: 8,
                ..Default::default()
            });
            t.insert_by_cpuset(l2).unwrap();
            t.insert_by_cpuset(Object::with_cpuset(
                ObjType::Core,
                Some(core),
                cs(core * 2, core * 2 + 1),
            ))
            .unwrap();
        }
        for p in 0..2 {
            t.insert_by_cpuset(Object::with_cpuset(
                ObjType::Package,
                Some(p),
                cs(p * 4, p * 4 + 3),
            ))
            .unwrap();
            let mut n = Object::with_cpuset(ObjType::NUMANode, Some(p), cs(p * 4, p * 4 + 3));
            n.nodeset = Some(NodeSet::from_index(p));
            n.attr = ObjAttr::Numa(NumaAttr {
                local_memory: 1 << 30,
                page_types: Vec::new(),
            });
            t.insert_by_cpuset(n).unwrap();
        }
        t.finish().unwrap();
        t
    }

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

    #[test]
    fn default_numa_node_and_filters() {
        let mut t = Topology::new();
        for pu in 0..2 {
            t.insert_by_cpuset(Object::with_cpuset(
                ObjType::PU,
                Some(pu),
                CpuSet::from_index(pu),
            ))
            .unwrap();
        }
        let mut l1i = Object::with_cpuset(ObjType::L1ICache, None, cs(0, 0));
        l1i.attr = ObjAttr::Cache(CacheAttr {
            size: 32768,
            depth: 1,
            ..Default::default()
        });
        // Instruction caches are dropped by default.
        assert_eq!(t.insert_by_cpuset(l1i).unwrap(), None);
        t.finish().unwrap();
        t.check().unwrap();
        assert_eq!(t.level(Depth::NumaNode).len(), 1);
        assert_eq!(t.nodeset(), &NodeSet::from_index(0));
    }

    #[test]
    fn disallowed_pus_are_removed_unless_asked() {
        for include in [false, true] {
            let mut t = Topology::new();
            t.include_disallowed = include;
            for pu in 0..4 {
                t.insert_by_cpuset(Object::with_cpuset(
                    ObjType::PU,
                    Some(pu),
                    CpuSet::from_index(pu),
                ))
                .unwrap();
            }
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

    #[test]
    fn restrict_drops_objects_and_keeps_consistency() {
        let mut t = small_machine();
        t.restrict(&cs(0, 3), true).unwrap();
        assert!(t.is_finished());
        t.check().unwrap();
        assert_eq!(t.objs_by_type(ObjType::PU).len(), 4);
        assert_eq!(t.level(Depth::NumaNode).len(), 1);
        assert!(t.restrict(&cs(100, 101), false).is_err());
    }

    #[test]
    fn restrict_by_nodeset_keeps_pus_unless_memless_go() {
        let mut t = small_machine();
        t.restrict_by_nodeset(&NodeSet::from_index(1), false)
            .unwrap();
        t.check().unwrap();
        assert_eq!(t.level(Depth::NumaNode).len(), 1);
        assert_eq!(t.objs_by_type(ObjType::PU).len(), 8);
        assert_eq!(t.allowed_nodeset, NodeSet::from_index(1));
        assert_eq!(t.obj(t.root()).nodeset, Some(NodeSet::from_index(1)));
        let mut t = small_machine();
        t.restrict_by_nodeset(&NodeSet::from_index(1), true)
            .unwrap();
        t.check().unwrap();
        assert_eq!(t.objs_by_type(ObjType::PU).len(), 4);
        assert_eq!(t.objs_by_type(ObjType::Package).len(), 1);
        assert_eq!(t.allowed_cpuset, cs(4, 7));
        let mut t = small_machine();
        assert!(t
            .restrict_by_nodeset(&NodeSet::from_index(5), false)
            .is_err());
        assert_eq!(t.level(Depth::NumaNode).len(), 2);
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
}

#[cfg(test)]
mod insertion_tests {
    use super::*;

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
