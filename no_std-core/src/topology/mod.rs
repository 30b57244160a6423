//! The topology tree: insertion, filtering, levels and queries.
//!
//! Objects live in an arena and refer to each other by [`ObjId`].  A
//! backend builds a topology in two steps: it adds objects (by cpuset with
//! [`Topology::insert_by_cpuset`], or under an explicit parent with
//! [`Topology::insert_by_parent`]), then calls [`Topology::finish`], which
//! propagates sets, applies type filters, merges redundant levels and
//! computes depths, logical indexes and the special levels, as hwloc does at
//! the end of its discovery.
//!
//! The work is split by job, each in its own module: `filters` (type
//! filters), `access` (queries), `insert` (adding objects), `remove`
//! (taking them out), `finish` (completing the tree), `restrict`
//! (restriction to a set) and `check` (the consistency checker).  Each
//! operation that can fail has its own error type ([`FilterError`],
//! [`InsertError`], [`RestrictError`], [`CheckError`]); [`TopologyError`]
//! gathers them.

mod access;
mod allow;
mod check;
mod filters;
mod finish;
mod insert;
#[cfg(test)]
mod limits;
mod locality;
mod query;
mod remove;
mod restrict;

pub use allow::AllowError;
pub use check::CheckError;
pub use filters::{FilterError, TypeFilter, osdev_is_important, pci_class_is_important};
pub use insert::{InsertError, Inserted};
pub use locality::SameLocalityError;
pub use restrict::{RestrictError, RestrictFlags};

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::cmp::Ordering;

use crate::bitmap::{CpuSet, NodeSet};
use crate::cpukinds::CpuKind;
use crate::distances::Distances;
use crate::memattrs::MemAttr;
use crate::object::*;

/// The deepest tree wloc accepts, counted in parent links from the root
/// (the Machine is at 0), whatever the source: a component's record, XML,
/// an image or the C library.  Real hwloc trees are a few dozen levels deep
/// (about 20 for the deepest recordings, I/O chains included); the limit is
/// generous for them and keeps every pass over the tree bounded.
pub const MAX_TREE_DEPTH: usize = 256;

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
    #[doc(alias = "HWLOC_TYPE_DEPTH_UNKNOWN")]
    Unknown,
    /// Several levels have that type (Groups, or caches of different kinds).
    #[doc(alias = "HWLOC_TYPE_DEPTH_MULTIPLE")]
    Multiple,
}

/// Errors raised while building or changing a topology, saying which
/// operation failed.  Each operation's own error converts into it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TopologyError {
    /// Insertion: an object's set intersects a sibling's without inclusion.
    Intersection {
        /// The object being inserted.
        new: String,
        /// The object it conflicts with.
        existing: String,
    },
    /// Finishing: the topology has no PU.
    NoPu,
    /// Finishing: the topology has no NUMA node.
    NoNuma,
    /// A type filter was refused ([`Topology::set_type_filter`]).
    Filter(FilterError),
    /// An object could not be inserted ([`Topology::insert_by_cpuset`]).
    Insert(InsertError),
    /// A restriction was refused ([`Topology::restrict_with_flags`]).
    Restrict(RestrictError),
    /// The consistency checker found a broken invariant ([`Topology::check`]).
    Check(CheckError),
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
            TopologyError::Filter(e) => e.fmt(f),
            TopologyError::Insert(e) => e.fmt(f),
            TopologyError::Restrict(e) => e.fmt(f),
            TopologyError::Check(e) => e.fmt(f),
        }
    }
}

impl core::error::Error for TopologyError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            TopologyError::Filter(e) => Some(e),
            TopologyError::Insert(e) => Some(e),
            TopologyError::Restrict(e) => Some(e),
            TopologyError::Check(e) => Some(e),
            _ => None,
        }
    }
}

impl From<FilterError> for TopologyError {
    fn from(e: FilterError) -> Self {
        TopologyError::Filter(e)
    }
}

impl From<InsertError> for TopologyError {
    fn from(e: InsertError) -> Self {
        TopologyError::Insert(e)
    }
}

impl From<RestrictError> for TopologyError {
    fn from(e: RestrictError) -> Self {
        TopologyError::Restrict(e)
    }
}

impl From<CheckError> for TopologyError {
    fn from(e: CheckError) -> Self {
        TopologyError::Check(e)
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
    /// First and last PU of each object's complete cpuset and cpuset,
    /// cached so that inserting among many siblings rejects disjoint ones
    /// without walking their bitmaps.  `None` means unknown: recomputed
    /// on use.
    set_bounds: Vec<Option<insert::SetBounds>>,
    /// Siblings looked at while placing objects by their sets, since the
    /// topology was created: lets a caller bound the work a hostile input
    /// makes it do (placement among `w` siblings costs `O(w)`).
    placement_visits: u64,
    /// PU object of each PU OS index (`ObjId::MAX` where none), filled
    /// when levels are rebuilt: covering queries start from it.
    pu_by_os: Vec<ObjId>,
    /// Dense parent/type/logical-index arrays for the queries.
    links: query::Links,
    finished: bool,
    /// During a restriction: whether the Misc and I/O children of removed
    /// objects move to the nearest kept ancestor (hwloc's
    /// `HWLOC_RESTRICT_FLAG_ADAPT_MISC` / `ADAPT_IO`) instead of going.
    restrict_adapt: (bool, bool),
}

impl Default for Topology {
    fn default() -> Self {
        Self::new()
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
            placement_visits: 0,
            pu_by_os: Vec::new(),
            links: query::Links::default(),
            finished: false,
            restrict_adapt: (false, false),
        }
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

    fn obj_set(&self, id: ObjId) -> Option<&CpuSet> {
        let o = self.obj(id);
        o.complete_cpuset.as_ref().or(o.cpuset.as_ref())
    }

    fn cmp_types(&self, a: ObjId, b: ObjId) -> SetCmp {
        let (oa, ob) = (self.obj(a), self.obj(b));
        match oa.obj_type.compare(ob.obj_type) {
            None => SetCmp::Different,
            Some(Ordering::Greater) => SetCmp::Included,
            Some(Ordering::Less) => SetCmp::Contains,
            Some(Ordering::Equal) => {
                if let (Some(g1), Some(g2)) = (oa.group(), ob.group())
                    && (g1.kind != g2.kind || g1.subkind != g2.subkind)
                {
                    return SetCmp::Different;
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

    fn same_level_type(&self, a: ObjId, b: ObjId) -> bool {
        self.cmp_types(a, b) == SetCmp::Equal
    }
}

#[cfg(test)]
mod test_machines {
    use super::*;
    use crate::object::CacheAttr;

    pub(super) fn cs(first: u32, last: u32) -> CpuSet {
        CpuSet::from_range(first, Some(last))
    }

    /// 2 packages x 2 cores x 2 PUs, PUs numbered 0-7, with an L2 per core.
    pub(super) fn small_machine() -> Topology {
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
}
