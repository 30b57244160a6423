//! hwloc-calc's conversions of a set: the objects it intersects, counted,
//! listed or shown hierarchically, the largest objects it contains, and
//! the NUMA nodes local to it.

use wloc_core::object::Depth;
use wloc_core::topology::TypeDepth;
use wloc_core::{CpuSet, NodeSet, ObjId, ObjKind, ObjType, Topology};

use crate::types::{OsDevCode, depth_from_i32, osdev_code, parse_type, spec_depth, type_label};

/// A level named by a type or a depth, as `-N`, `-I` and `-H` take it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelSpec {
    /// hwloc's integer depth (negative for special levels).
    pub depth: i64,
    /// Only OS devices of this kind (`net`, `block`, ...).
    pub osdev: Option<OsDevCode>,
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

/// Resolves a type name or a depth number (C `strtoul` syntax, so `-3`
/// is the NUMA level) to a level.
pub fn parse_level_spec(topo: &Topology, s: &str) -> Result<LevelSpec, LevelError> {
    if let Some(spec) = parse_type(s) {
        return match spec_depth(topo, &spec) {
            TypeDepth::Depth(d) => Ok(LevelSpec {
                depth: d.to_i32() as i64,
                osdev: spec.osdev,
            }),
            TypeDepth::Unknown => Err(LevelError::Unavailable(s.to_string())),
            TypeDepth::Multiple => Err(LevelError::Multiple(s.to_string())),
        };
    }
    let n = crate::parse_c_integer(s).ok_or_else(|| LevelError::Unrecognized(s.to_string()))?;
    // hwloc reads the number into an int through unsigned long.
    Ok(LevelSpec {
        depth: n as i32 as i64,
        // A depth number carries hwloc's zeroed attributes: the first OS device kind.
        osdev: Some(0),
    })
}

fn level_of(topo: &Topology, depth: i64) -> &[ObjId] {
    match depth_from_i32(depth) {
        Some(d) => topo.level(d),
        None => &[],
    }
}

/// Whether an object, or its first normal ancestor for memory and I/O
/// objects, intersects the set (CPU set, or node set when `nodes` is given).
fn intersects(topo: &Topology, mut id: ObjId, cpus: &CpuSet, nodes: Option<&NodeSet>) -> bool {
    while topo.obj(id).kind() != ObjKind::Normal {
        match topo.obj(id).parent() {
            Some(p) => id = p,
            None => return false,
        }
    }
    let o = topo.obj(id);
    match nodes {
        Some(n) => o.nodeset.as_ref().is_some_and(|s| s.intersects(n)),
        None => o.cpuset.as_ref().is_some_and(|s| s.intersects(cpus)),
    }
}

/// The objects of a level that intersect the set, in level order
/// (`--number-of` counts them, `--intersect` lists them).  With `nodes`,
/// node sets are compared instead of CPU sets.
pub fn intersecting(
    topo: &Topology,
    level: LevelSpec,
    cpus: &CpuSet,
    nodes: Option<&NodeSet>,
) -> Vec<ObjId> {
    level_of(topo, level.depth)
        .iter()
        .copied()
        .filter(|&id| intersects(topo, id, cpus, nodes))
        .filter(|&id| {
            level.depth != Depth::OsDevice.to_i32() as i64
                || level.osdev.is_none()
                || osdev_code(topo.obj(id)) == level.osdev
        })
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
/// the levels that intersect the set, each index relative to its parent
/// in the combination.
pub fn hierarchical(topo: &Topology, depths: &[i64], set: &CpuSet, logical: bool) -> Vec<String> {
    let mut out = Vec::new();
    hier_rec(
        topo,
        depths,
        set,
        logical,
        topo.root(),
        String::new(),
        0,
        &mut out,
    );
    out
}

#[allow(clippy::too_many_arguments)]
fn hier_rec(
    topo: &Topology,
    depths: &[i64],
    set: &CpuSet,
    logical: bool,
    root: ObjId,
    prefix: String,
    level: usize,
    out: &mut Vec<String>,
) {
    let root_set = topo.obj(root).cpuset.clone().unwrap_or_default();
    let mut logi = 0u32;
    for &id in level_of(topo, depths[level]) {
        let o = topo.obj(id);
        let cs = o.cpuset.clone().unwrap_or_default();
        if !cs.intersects(&root_set) {
            continue;
        }
        if cs.intersects(set) {
            let idx = if logical { Some(logi) } else { o.os_index };
            let label = type_label(o);
            let dot = if level > 0 { "." } else { "" };
            let s = match idx {
                Some(i) => format!("{prefix}{dot}{label}:{i}"),
                None => format!("{prefix}{dot}{label}:-1"),
            };
            if level + 1 < depths.len() {
                hier_rec(topo, depths, &set.and(&cs), logical, id, s, level + 1, out);
            } else {
                out.push(s);
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
    /// The flags hwloc knows; others make it select nothing.
    pub const MASK: u64 = LARGER_LOCALITY | SMALLER_LOCALITY | ALL;
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
                || (flags & local_flags::LARGER_LOCALITY != 0 && set.is_included_in(&cs))
                || (flags & local_flags::SMALLER_LOCALITY != 0 && cs.is_included_in(set))
                || cs == *set
        })
        .collect()
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
