//! Writing a symmetric topology back as a description
//! ([`export`](super::export)).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::object::{CacheKind, Depth, ObjId, ObjKind, ObjType};
use crate::topology::Topology;

use super::indexes::Loop;
use super::{SyntheticError, SyntheticErrorKind};

// Export
// ---------------------------------------------------------------------------

/// Flags of [`export`], with the values of hwloc's
/// `HWLOC_TOPOLOGY_EXPORT_SYNTHETIC_FLAG_*`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ExportFlags(u64);

impl ExportFlags {
    /// No flag: extended types, attributes and memory children.
    pub const NONE: ExportFlags = ExportFlags(0);
    /// Write caches as `Cache`, packages as `Socket` and dies as `Group`
    /// (for hwloc < 1.9).
    pub const NO_EXTENDED_TYPES: ExportFlags = ExportFlags(1 << 0);
    /// Leave out attributes: sizes, memory and OS indexes (for hwloc < 1.10).
    pub const NO_ATTRS: ExportFlags = ExportFlags(1 << 1);
    /// Write memory as hwloc 1.x expects: each single NUMA child as a
    /// `NUMANode:1` level, packages as `Socket`, dies as `Group`.
    pub const V1: ExportFlags = ExportFlags(1 << 2);
    /// Leave out memory children entirely.
    pub const IGNORE_MEMORY: ExportFlags = ExportFlags(1 << 3);
    const ALL: u64 = 0xf;

    /// The flags of an hwloc flag value; `None` if unknown bits are set.
    pub fn from_bits(bits: u64) -> Option<ExportFlags> {
        (bits & !Self::ALL == 0).then_some(ExportFlags(bits))
    }

    /// The hwloc flag value.
    pub fn bits(self) -> u64 {
        self.0
    }

    /// Whether every flag of `other` is set.
    pub fn contains(self, other: ExportFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl core::ops::BitOr for ExportFlags {
    type Output = ExportFlags;
    fn bitor(self, rhs: ExportFlags) -> ExportFlags {
        ExportFlags(self.0 | rhs.0)
    }
}

impl core::ops::BitOrAssign for ExportFlags {
    fn bitor_assign(&mut self, rhs: ExportFlags) {
        self.0 |= rhs.0;
    }
}

fn export_err(kind: SyntheticErrorKind, msg: &str) -> SyntheticError {
    SyntheticError::new(kind, None, String::from(msg))
}

/// The OS indexes of a level, as `indexes=` writes them: interleaving loops
/// when they reproduce the level exactly, else the full list.  Ends with `)`.
fn export_indexes(topo: &Topology, level: &[ObjId], out: &mut String) {
    let os: Vec<u64> = level
        .iter()
        .map(|&id| topo.obj(id).os_index.map_or(u64::from(u32::MAX), u64::from))
        .collect();
    if let Some(loops) = find_loops(&os) {
        for (n, l) in loops.iter().enumerate() {
            let sep = if n + 1 == loops.len() { ")" } else { ":" };
            out.push_str(&format!("{}*{}{sep}", l.step, l.count));
        }
        return;
    }
    for (n, v) in os.iter().enumerate() {
        let sep = if n + 1 == os.len() { ")" } else { "," };
        out.push_str(&format!("{v}{sep}"));
    }
}

/// Looks for interleaving loops describing `os` exactly (as
/// `hwloc__export_synthetic_indexes`).
#[doc(alias = "hwloc__export_synthetic_indexes")]
fn find_loops(os: &[u64]) -> Option<Vec<Loop>> {
    let total = os.len() as u64;
    if os.first() != Some(&0) {
        return None;
    }
    let mut step: u64 = 1;
    let mut loops = Vec::new();
    while step != total {
        if step == 0 || !total.is_multiple_of(step) {
            return None;
        }
        let i = (1..total).find(|&i| os[i as usize] == step)?;
        let mut j: u64 = 2;
        while j < total / i {
            if os[(i * j) as usize] != step * j {
                break;
            }
            j += 1;
        }
        loops.push(Loop { step: i, count: j });
        step = step.checked_mul(j)?;
    }
    for (i, &v) in os.iter().enumerate() {
        let mut ind: u64 = 0;
        let mut mul: u64 = 1;
        for l in &loops {
            ind = ind.saturating_add(((i as u64 / l.step) % l.count).saturating_mul(mul));
            mul = mul.saturating_mul(l.count);
        }
        if v != ind {
            return None;
        }
    }
    Some(loops)
}

/// Appends the attributes of `id` (`(size=.. memory=.. indexes=..)`).
fn export_attrs(topo: &Topology, flags: ExportFlags, id: ObjId, out: &mut String) {
    let o = topo.obj(id);
    let mut parts: Vec<String> = Vec::new();
    if let (true, Some(c)) = (o.obj_type.is_cache(), o.cache())
        && c.size != 0
    {
        parts.push(format!("size={}", c.size));
    }
    if let Some(n) = o.numa()
        && n.local_memory != 0
    {
        parts.push(format!("memory={}", n.local_memory));
    }
    if o.obj_type == ObjType::NUMANode && !flags.contains(ExportFlags::V1) {
        let mut size: u64 = 0;
        let mut cur = o.parent();
        while let Some(p) = cur {
            let po = topo.obj(p);
            if po.obj_type != ObjType::MemCache {
                break;
            }
            size = size.saturating_add(po.cache().map_or(0, |c| c.size));
            cur = po.parent();
        }
        if size != 0 {
            parts.push(format!("memorysidecachesize={size}"));
        }
    }
    let mut index_level: Option<&[ObjId]> = None;
    if o.logical_index() == 0 && matches!(o.obj_type, ObjType::PU | ObjType::NUMANode) {
        let level = topo.level(o.depth());
        let differs = level
            .iter()
            .enumerate()
            .any(|(i, &c)| topo.obj(c).os_index != u32::try_from(i).ok());
        if differs {
            index_level = Some(level);
        }
    }
    if parts.is_empty() && index_level.is_none() {
        return;
    }
    out.push('(');
    out.push_str(&parts.join(" "));
    match index_level {
        Some(level) => {
            if !parts.is_empty() {
                out.push(' ');
            }
            out.push_str("indexes=");
            export_indexes(topo, level, out);
        }
        None => out.push(')'),
    }
}

/// Appends `Type[:arity]` and the attributes of `id`.
fn export_obj(
    topo: &Topology,
    flags: ExportFlags,
    id: ObjId,
    arity: Option<usize>,
    out: &mut String,
) {
    let o = topo.obj(id);
    let old = flags.contains(ExportFlags::NO_EXTENDED_TYPES) || flags.contains(ExportFlags::V1);
    let name: String = if o.obj_type.is_cache() && flags.contains(ExportFlags::NO_EXTENDED_TYPES) {
        String::from("Cache")
    } else if o.obj_type == ObjType::Package && old {
        String::from("Socket")
    } else if o.obj_type == ObjType::Die && old {
        String::from("Group")
    } else if o.obj_type.is_cache() {
        let (depth, kind) = o.cache().map_or(
            (o.obj_type.cache_level().unwrap_or(1), CacheKind::Unified),
            |c| (c.depth, c.kind),
        );
        let letter = match kind {
            CacheKind::Unified => "",
            CacheKind::Data => "d",
            CacheKind::Instruction => "i",
        };
        format!("L{depth}{letter}Cache")
    } else {
        String::from(o.obj_type.xml_name())
    };
    out.push_str(&name);
    if let Some(a) = arity {
        out.push_str(&format!(":{a}"));
    }
    if !flags.contains(ExportFlags::NO_ATTRS) {
        export_attrs(topo, flags, id, out);
    }
}

/// Appends the memory children of `parent`; returns whether anything was written.
fn export_memory(
    topo: &Topology,
    flags: ExportFlags,
    parent: ObjId,
    mut needprefix: bool,
    out: &mut String,
) -> Result<bool, SyntheticError> {
    let mem = topo.obj(parent).memory_children();
    if mem.is_empty() {
        return Ok(false);
    }
    let first_numa = |mut id: ObjId| {
        while topo.obj(id).obj_type != ObjType::NUMANode {
            id = *topo.obj(id).memory_children().first()?;
        }
        Some(id)
    };
    if flags.contains(ExportFlags::V1) {
        if mem.len() > 1 {
            return Err(export_err(
                SyntheticErrorKind::V1Incompatible,
                "cannot export to synthetic v1 when several memory children are attached to the same object",
            ));
        }
        let Some(node) = first_numa(mem[0]) else {
            return Ok(false);
        };
        if needprefix {
            out.push(' ');
        }
        export_obj(topo, flags, node, Some(1), out);
        return Ok(true);
    }
    let mut wrote = false;
    for &m in mem {
        let Some(node) = first_numa(m) else { continue };
        if needprefix {
            out.push(' ');
        }
        out.push('[');
        export_obj(topo, flags, node, None, out);
        out.push(']');
        needprefix = true;
        wrote = true;
    }
    Ok(wrote)
}

/// Whether every object at the depth of each NUMA node's parent has the
/// same number of memory children (hwloc's `hwloc_check_memory_symmetric`).
#[doc(alias = "hwloc_check_memory_symmetric")]
fn memory_symmetric(topo: &Topology) -> bool {
    let mut depths: Vec<Depth> = Vec::new();
    for &n in topo.level(Depth::NumaNode) {
        if let Some(p) = topo.obj(n).parent() {
            let d = topo.obj(p).depth();
            if !depths.contains(&d) {
                depths.push(d);
            }
        }
    }
    depths.iter().all(|&d| {
        let level = topo.level(d);
        let first = level
            .first()
            .map_or(0, |&p| topo.obj(p).memory_children().len());
        level
            .iter()
            .all(|&p| topo.obj(p).memory_children().len() == first)
    })
}

/// Depth of the first normal ancestor of a memory object.
fn normal_parent_depth(topo: &Topology, mut id: ObjId) -> Option<Depth> {
    loop {
        let p = topo.obj(id).parent()?;
        if topo.obj(p).kind() == ObjKind::Normal {
            return Some(topo.obj(p).depth());
        }
        id = p;
    }
}

/// Writes a symmetric topology as a synthetic description, as
/// `hwloc_topology_export_synthetic` does (`lstopo --of synthetic`).
///
/// Each normal level is written as `Type:arity` with its attributes (cache
/// sizes, NUMA memory and memory-side cache sizes, and the OS indexes of
/// PUs and NUMA nodes when they differ from the logical order), followed by
/// the NUMA nodes attached to the first object of the level in brackets.
/// I/O and Misc objects are ignored.
///
/// Fails with [`SyntheticErrorKind::NonSymmetric`] when the root subtree is
/// not symmetric, [`SyntheticErrorKind::MemoryNotSymmetric`] when memory is
/// not attached symmetrically (unless [`ExportFlags::IGNORE_MEMORY`]),
/// [`SyntheticErrorKind::V1Incompatible`] for layouts [`ExportFlags::V1`]
/// cannot express, and [`SyntheticErrorKind::NotFinished`] before
/// [`Topology::finish`].
#[doc(alias = "hwloc_topology_export_synthetic")]
pub fn export(topo: &Topology, flags: ExportFlags) -> Result<String, SyntheticError> {
    if !topo.is_finished() {
        return Err(export_err(
            SyntheticErrorKind::NotFinished,
            "cannot export a topology that is not finished",
        ));
    }
    if ExportFlags::from_bits(flags.bits()).is_none() {
        return Err(export_err(
            SyntheticErrorKind::InvalidFlags,
            "unknown export flags",
        ));
    }
    let root = topo.root();
    if !topo.obj(root).symmetric_subtree() {
        return Err(export_err(
            SyntheticErrorKind::NonSymmetric,
            "cannot export to synthetic unless the topology is symmetric",
        ));
    }
    let ignore_memory = flags.contains(ExportFlags::IGNORE_MEMORY);
    if !ignore_memory && !memory_symmetric(topo) {
        return Err(export_err(
            SyntheticErrorKind::MemoryNotSymmetric,
            "cannot export to synthetic unless memory is attached symmetrically",
        ));
    }
    if flags.contains(ExportFlags::V1) {
        let nodes = topo.level(Depth::NumaNode);
        let first = nodes.first().and_then(|&n| normal_parent_depth(topo, n));
        if nodes.iter().any(|&n| normal_parent_depth(topo, n) != first) {
            return Err(export_err(
                SyntheticErrorKind::V1Incompatible,
                "cannot export to synthetic v1 when memory is attached at different depths",
            ));
        }
    }

    let mut out = String::new();
    let mut needprefix = false;
    if !flags.contains(ExportFlags::NO_ATTRS) {
        let before = out.len();
        export_attrs(topo, flags, root, &mut out);
        needprefix = out.len() > before;
    }
    if !ignore_memory && export_memory(topo, flags, root, needprefix, &mut out)? {
        needprefix = true;
    }
    let mut obj = root;
    let mut arity = topo.obj(root).arity();
    while arity != 0 {
        obj = topo.obj(obj).children()[0];
        if needprefix {
            out.push(' ');
        }
        export_obj(topo, flags, obj, Some(arity), &mut out);
        if !ignore_memory {
            export_memory(topo, flags, obj, true, &mut out)?;
        }
        needprefix = true;
        arity = topo.obj(obj).arity();
    }
    Ok(out)
}
