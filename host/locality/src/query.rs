//! hwloc-calc's conversions of a set: the objects it intersects, counted,
//! listed or shown hierarchically, the largest objects it contains, and
//! the NUMA nodes local to it.

use wloc_core::object::Depth;
use wloc_core::topology::TypeDepth;
use wloc_core::{CpuSet, NodeSet, ObjId, ObjKind, ObjType, Topology};

use crate::LevelFilter;
use crate::types::{OsDevCode, depth_from_i32, osdev_code, parse_type, spec_depth, type_label};

/// A level named by a type or a depth, as `-N`, `-I` and `-H` take it,
/// with the filter hwloc 2.x reads in brackets after the type
/// (`numa[mcdram]`, `numa[tier=1]`, `os[gpu]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LevelSpec {
    /// hwloc's integer depth (negative for special levels).
    pub depth: i64,
    /// Only OS devices of this kind (`net`, `block`, ...).
    pub osdev: Option<OsDevCode>,
    /// Only NUMA nodes that are high-bandwidth memory (`hbm`, `mcdram`).
    pub only_hbm: bool,
    /// The subtype or memory tier asked for in brackets.
    filter: LevelFilter,
}

impl LevelSpec {
    /// Whether the level's filters keep `id` (hwloc_calc_check_object_filtered).
    pub fn keeps(&self, topo: &Topology, id: ObjId) -> bool {
        let o = topo.obj(id);
        if !self.filter.keeps(o) {
            return false;
        }
        if self.only_hbm
            && o.obj_type == ObjType::NUMANode
            && o.subtype.as_deref() != Some("MCDRAM")
        {
            return false;
        }
        o.obj_type != ObjType::OSDevice || self.osdev.is_none() || osdev_code(o) == self.osdev
    }
}

/// Why a type or depth names no usable level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LevelError {
    /// Neither a type nor a number.
    Unrecognized(String),
    /// No object of the type.
    Unavailable(String),
    /// The type sits at several depths.
    Multiple(String),
}

impl core::fmt::Display for LevelError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            LevelError::Unrecognized(s) => write!(f, "unrecognized type or depth {s}"),
            LevelError::Unavailable(s) => write!(f, "unavailable type {s}"),
            LevelError::Multiple(s) => write!(
                f,
                "cannot use type {s} with multiple depth, please use the relevant depth"
            ),
        }
    }
}

impl std::error::Error for LevelError {}

/// Resolves a type name, with an optional `[filter]`, or a depth number
/// to a level, as hwloc-calc 2.14 does: a depth is a whole non-negative
/// number below the topology's depth.
pub fn parse_level_spec(topo: &Topology, s: &str) -> Result<LevelSpec, LevelError> {
    let unrecognized = || LevelError::Unrecognized(s.to_string());
    let (name, inner) = match s.find('[') {
        Some(i) => {
            let end = s[i..].find(']').ok_or_else(unrecognized)? + i;
            if end + 1 != s.len() {
                return Err(unrecognized());
            }
            (&s[..i], Some(&s[i + 1..end]))
        }
        None => (s, None),
    };
    if let Some(spec) = parse_type(name) {
        let depth = match spec_depth(topo, &spec) {
            TypeDepth::Depth(d) => d.to_i32() as i64,
            TypeDepth::Unknown => return Err(LevelError::Unavailable(s.to_string())),
            TypeDepth::Multiple => return Err(LevelError::Multiple(s.to_string())),
        };
        let mut level = LevelSpec {
            depth,
            osdev: spec.osdev,
            only_hbm: false,
            filter: LevelFilter::default(),
        };
        if let Some(inner) = inner {
            // An OS device kind in brackets filters on the kind (`os[gpu]`);
            // anything else is a subtype or a memory tier.
            match parse_type(inner) {
                Some(t)
                    if spec.obj_type == ObjType::OSDevice && t.obj_type == ObjType::OSDevice =>
                {
                    level.osdev = t.osdev
                }
                _ => level.filter = LevelFilter::parse(inner),
            }
        }
        return Ok(level);
    }
    if inner.is_none() && (name.eq_ignore_ascii_case("hbm") || name.eq_ignore_ascii_case("mcdram"))
    {
        return Ok(LevelSpec {
            depth: Depth::NumaNode.to_i32() as i64,
            osdev: None,
            only_hbm: true,
            filter: LevelFilter::default(),
        });
    }
    if inner.is_some() || name.starts_with('-') {
        return Err(unrecognized());
    }
    let n = crate::parse_c_integer(name).ok_or_else(unrecognized)?;
    if n < 0 || n >= topo.depth() as i64 {
        return Err(LevelError::Unavailable(s.to_string()));
    }
    Ok(LevelSpec {
        depth: n,
        osdev: None,
        only_hbm: false,
        filter: LevelFilter::default(),
    })
}

fn level_of(topo: &Topology, depth: i64) -> &[ObjId] {
    match depth_from_i32(depth) {
        Some(d) => topo.level(d),
        None => &[],
    }
}

/// Whether an object intersects the sets, as hwloc-calc 2.14 compares: a
/// memory object by its node set, another by its CPU set, I/O and Misc
/// objects by their first ancestor's.
fn intersects(topo: &Topology, id: ObjId, cpus: &CpuSet, nodes: &NodeSet) -> bool {
    if topo.obj(id).kind() == ObjKind::Memory {
        return topo
            .obj(id)
            .nodeset
            .as_ref()
            .is_some_and(|s| s.intersects(nodes));
    }
    let mut id = id;
    while matches!(topo.obj(id).kind(), ObjKind::Io | ObjKind::Misc) {
        match topo.obj(id).parent() {
            Some(p) => id = p,
            None => return false,
        }
    }
    topo.obj(id)
        .cpuset
        .as_ref()
        .is_some_and(|s| s.intersects(cpus))
}

/// The objects of a level that intersect the sets and pass the level's
/// filters, in level order (`--number-of` counts them, `--intersect`
/// lists them).
pub fn intersecting(
    topo: &Topology,
    level: &LevelSpec,
    cpus: &CpuSet,
    nodes: &NodeSet,
) -> Vec<ObjId> {
    level_of(topo, level.depth)
        .iter()
        .copied()
        .filter(|&id| intersects(topo, id, cpus, nodes) && level.keeps(topo, id))
        .collect()
}

/// The memory tiers (`MemoryTier` info of NUMA nodes) of the nodes in
/// `nodes`, as hwloc-calc's `-N memorytier` and `-I memorytier` list them.
pub fn memory_tiers(topo: &Topology, nodes: &NodeSet) -> Vec<u32> {
    let mut tiers: Vec<u32> = topo
        .level(Depth::NumaNode)
        .iter()
        .filter(|&&id| {
            topo.obj(id)
                .nodeset
                .as_ref()
                .is_some_and(|s| s.intersects(nodes))
        })
        .filter_map(|&id| topo.obj(id).info("MemoryTier"))
        .map(|t| crate::c_atoi(t) as u32)
        .collect();
    tiers.sort_unstable();
    tiers.dedup();
    tiers
}

/// The indexes of the CPU kinds with PUs in `cpus`, as hwloc-calc's
/// `-N cpukind` and `-I cpukind` list them.
pub fn cpukinds_of(topo: &Topology, cpus: &CpuSet) -> Vec<usize> {
    topo.cpukinds
        .iter()
        .enumerate()
        .filter(|(_, k)| k.cpuset.intersects(cpus))
        .map(|(i, _)| i)
        .collect()
}

/// The index hwloc's tools print: logical, or OS index (`None` when unknown).
pub fn index_of(topo: &Topology, id: ObjId, logical: bool) -> Option<u32> {
    let o = topo.obj(id);
    if logical {
        Some(o.logical_index())
    } else {
        o.os_index
    }
}

/// `--hierarchical`: every combination `type1:i.type2:j...` of objects of
/// the levels that intersect the set and pass the level's filters, each
/// index relative to its parent in the combination (filtered objects
/// still take an index, as in hwloc-calc).
pub fn hierarchical(
    topo: &Topology,
    levels: &[LevelSpec],
    set: &CpuSet,
    logical: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    hier_rec(
        topo,
        levels,
        set,
        logical,
        topo.root(),
        String::new(),
        &mut out,
    );
    out
}

fn hier_rec(
    topo: &Topology,
    levels: &[LevelSpec],
    set: &CpuSet,
    logical: bool,
    root: ObjId,
    prefix: String,
    out: &mut Vec<String>,
) {
    let Some((level, below)) = levels.split_first() else {
        return;
    };
    let root_set = topo.obj(root).cpuset.clone().unwrap_or_default();
    let mut logi = 0u32;
    for &id in level_of(topo, level.depth) {
        let o = topo.obj(id);
        let cs = o.cpuset.clone().unwrap_or_default();
        if !cs.intersects(&root_set) {
            continue;
        }
        if cs.intersects(set) && level.keeps(topo, id) {
            let idx = if logical { Some(logi) } else { o.os_index };
            let label = type_label(o);
            let dot = if prefix.is_empty() { "" } else { "." };
            let s = match idx {
                Some(i) => format!("{prefix}{dot}{label}:{i}"),
                None => format!("{prefix}{dot}{label}:-1"),
            };
            if below.is_empty() {
                out.push(s);
            } else {
                hier_rec(topo, below, &set.and(&cs), logical, id, s, out);
            }
        }
        logi += 1;
    }
}

/// The first largest object inside `set`: from the root, go down into the
/// first child that intersects the set until an object is included in it
/// (hwloc_get_first_largest_obj_inside_cpuset).
#[doc(alias = "hwloc_get_first_largest_obj_inside_cpuset")]
pub fn first_largest_inside(topo: &Topology, set: &CpuSet) -> Option<ObjId> {
    let mut id = topo.root();
    let cs = |id: ObjId| topo.obj(id).cpuset.clone().unwrap_or_default();
    if !cs(id).intersects(set) {
        return None;
    }
    while !cs(id).is_included_in(set) {
        match topo
            .obj(id)
            .children()
            .iter()
            .copied()
            .find(|&c| cs(c).intersects(set))
        {
            Some(c) => id = c,
            None => return Some(id),
        }
    }
    Some(id)
}

/// `--largest`: the largest objects that together make the set, each as
/// `Type:index` (`Type` alone when the object has no OS index and physical
/// indexes are asked for).  `Err` carries the objects found before a part
/// of the set that no object covers.
#[doc(alias = "hwloc_get_largest_objs_inside_cpuset")]
pub fn largest(topo: &Topology, set: &CpuSet, logical: bool) -> Result<Vec<String>, Vec<String>> {
    let mut remaining = set.clone();
    let mut out = Vec::new();
    while !remaining.is_empty() {
        let Some(id) = first_largest_inside(topo, &remaining) else {
            return Err(out);
        };
        let o = topo.obj(id);
        let label = type_label(o);
        out.push(match index_of(topo, id, logical) {
            Some(i) => format!("{label}:{i}"),
            None => label,
        });
        remaining.and_not_assign(&o.cpuset.clone().unwrap_or_default());
    }
    Ok(out)
}

/// Flags of [`local_numanodes`], as hwloc's `HWLOC_LOCAL_NUMANODE_FLAG_*`.
pub mod local_flags {
    /// Nodes whose locality contains the set.
    pub const LARGER_LOCALITY: u64 = 1 << 0;
    /// Nodes whose locality is inside the set.
    pub const SMALLER_LOCALITY: u64 = 1 << 1;
    /// Every node.
    pub const ALL: u64 = 1 << 2;
    /// Nodes whose locality intersects the set (hwloc 2.12).
    pub const INTERSECT_LOCALITY: u64 = 1 << 3;
    /// The flags hwloc knows; others make it select nothing.
    pub const MASK: u64 = LARGER_LOCALITY | SMALLER_LOCALITY | ALL | INTERSECT_LOCALITY;
}

/// Parses `--local-memory-flags`: a number, or names (`larger`, `smaller`,
/// `all`) joined with `,` or `|`.
pub fn parse_local_flags(s: &str) -> Option<u64> {
    if let Some(n) = crate::parse_c_integer(s) {
        return u64::try_from(n).ok();
    }
    let mut f = 0;
    for part in s.split([',', '|']) {
        f |= match part.to_ascii_lowercase().as_str() {
            "larger" | "larger_locality" => local_flags::LARGER_LOCALITY,
            "smaller" | "smaller_locality" => local_flags::SMALLER_LOCALITY,
            "all" => local_flags::ALL,
            "intersect" | "intersect_locality" => local_flags::INTERSECT_LOCALITY,
            _ => return None,
        };
    }
    Some(f)
}

/// The NUMA nodes local to a set of PUs (hwloc_get_local_numanode_objs):
/// those with exactly that locality, plus larger or smaller ones as the
/// flags say, in logical order.
#[doc(alias = "hwloc_get_local_numanode_objs")]
pub fn local_numanodes(topo: &Topology, set: &CpuSet, flags: u64) -> Vec<ObjId> {
    topo.level(Depth::NumaNode)
        .iter()
        .copied()
        .filter(|&id| {
            let cs = topo.obj(id).cpuset.clone().unwrap_or_default();
            flags & local_flags::ALL != 0
                || (flags & local_flags::INTERSECT_LOCALITY != 0 && cs.intersects(set))
                || (flags & local_flags::LARGER_LOCALITY != 0 && set.is_included_in(&cs))
                || (flags & local_flags::SMALLER_LOCALITY != 0 && cs.is_included_in(set))
                || cs == *set
        })
        .collect()
}

/// The NUMA nodes where allocations go by default, as hwloc 2.12 guesses
/// them (hwloc_topology_get_default_nodeset): the node of smallest OS
/// index, then, in OS index order, the nodes of its subtype (or, like it,
/// of none) whose locality does not overlap what is taken, until every PU
/// of the machine is covered; then nodes of any kind with a non-empty
/// locality that still does not overlap, until covered.
#[doc(alias = "hwloc_topology_get_default_nodeset")]
pub fn default_nodeset(topo: &Topology) -> NodeSet {
    let mut nodes: Vec<ObjId> = topo.level(Depth::NumaNode).to_vec();
    nodes.sort_by_key(|n| topo.obj(*n).os_index);
    let mut chosen = NodeSet::new();
    let Some((&first, rest)) = nodes.split_first() else {
        return chosen;
    };
    let cpuset = |n: ObjId| topo.obj(n).cpuset.clone().unwrap_or_default();
    let mut remaining = topo.cpuset().clone();
    let mut take = |n: ObjId, remaining: &mut CpuSet| {
        if let Some(i) = topo.obj(n).os_index {
            chosen.set(i);
        }
        remaining.and_not_assign(&cpuset(n));
    };
    take(first, &mut remaining);
    let first_subtype = topo.obj(first).subtype.as_deref();
    for &n in rest {
        if remaining.is_empty() {
            break;
        }
        if topo.obj(n).subtype.as_deref() == first_subtype && cpuset(n).is_included_in(&remaining) {
            take(n, &mut remaining);
        }
    }
    for &n in rest {
        if remaining.is_empty() {
            break;
        }
        let c = cpuset(n);
        if !c.is_empty() && c.is_included_in(&remaining) {
            take(n, &mut remaining);
        }
    }
    chosen
}

/// The suffixes of a `--best-memattr` argument (hwloc 2.14's tools).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BestNodeFlags {
    /// `,strict`: a value counts only when measured from PUs that contain the initiator.
    pub strict: bool,
    /// `,default`: with no best node, the default nodes among them (or all of them).
    pub default: bool,
}

/// Splits the `,default` and `,strict` suffixes out of a `--best-memattr`
/// argument, as hwloc_utils_parse_best_node_flags does (the first of each,
/// wherever it is): the attribute's name and the flags.
pub fn split_best_memattr(arg: &str) -> (String, BestNodeFlags) {
    let mut name = arg.to_string();
    let mut flags = BestNodeFlags::default();
    for (suffix, flag) in [
        (",default", &mut flags.default),
        (",strict", &mut flags.strict),
    ] {
        if name.contains(suffix) {
            name = name.replacen(suffix, "", 1);
            *flag = true;
        }
    }
    (name, flags)
}

/// The positions of the best of `nodes` for memory attribute `attr_id`,
/// seen from the PUs in `initiator` ([`wloc_core::memattrs::best_nodes`]);
/// with no best node and `flags.default`, those of the default nodes
/// ([`default_nodeset`]), or else all of them.
pub fn best_nodes(
    topo: &Topology,
    attr_id: usize,
    nodes: &[ObjId],
    initiator: &CpuSet,
    flags: BestNodeFlags,
) -> Vec<usize> {
    let best = wloc_core::memattrs::attribute(topo, attr_id)
        .map(|a| wloc_core::memattrs::best_nodes(topo, &a, nodes, initiator, flags.strict))
        .unwrap_or_default();
    if !best.is_empty() || !flags.default {
        return best;
    }
    let default = default_nodeset(topo);
    let chosen: Vec<usize> = (0..nodes.len())
        .filter(|&i| {
            topo.obj(nodes[i])
                .os_index
                .is_some_and(|o| default.is_set(o))
        })
        .collect();
    if chosen.is_empty() {
        (0..nodes.len()).collect()
    } else {
        chosen
    }
}

/// Keeps one PU per core (the `which`-th of those in the set), dropping
/// cores with fewer PUs in the set (hwloc_bitmap_singlify_per_core).
#[doc(alias = "hwloc_bitmap_singlify_per_core")]
pub fn singlify_per_core(topo: &Topology, set: &mut CpuSet, which: u32) {
    for id in topo.objs_by_type(ObjType::Core) {
        let core = topo.obj(id).cpuset.clone().unwrap_or_default();
        if !core.intersects(set) {
            continue;
        }
        let pick = core.iter().filter(|&pu| set.is_set(pu)).nth(which as usize);
        set.and_not_assign(&core);
        if let Some(pu) = pick {
            set.set(pu);
        }
    }
}
