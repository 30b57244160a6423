//! Restriction of a finished topology to a set of PUs or NUMA nodes, as
//! hwloc's `hwloc_topology_restrict` with its `HWLOC_RESTRICT_FLAG_*`
//! flags: objects left without PUs (or nodes) go, children are reordered
//! as `hwloc__reorder_children` does, and distances, memory attributes and
//! CPU kinds forget what went away.

use alloc::vec::Vec;

use core::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign};

use super::Topology;
use crate::bitmap::{Bitmap, CpuSet, NodeSet};
use crate::object::*;

/// hwloc's restriction flags (`HWLOC_RESTRICT_FLAG_*`, same values), for
/// [`Topology::restrict_with_flags`].
///
/// Any bits can be held (a caller may read them from a number), but
/// only [`RestrictFlags::ALL`] are valid, in the combinations
/// [`RestrictFlags::validate`] accepts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RestrictFlags(u64);

impl RestrictFlags {
    /// No flag: restrict by cpuset, keep CPU-less NUMA nodes.
    pub const NONE: Self = Self(0);
    /// Remove NUMA nodes left without PUs.
    #[doc(alias = "HWLOC_RESTRICT_FLAG_REMOVE_CPULESS")]
    pub const REMOVE_CPULESS: Self = Self(1);
    /// Move Misc objects of removed objects to their parent.
    #[doc(alias = "HWLOC_RESTRICT_FLAG_ADAPT_MISC")]
    pub const ADAPT_MISC: Self = Self(2);
    /// Move I/O objects of removed objects to their parent.
    #[doc(alias = "HWLOC_RESTRICT_FLAG_ADAPT_IO")]
    pub const ADAPT_IO: Self = Self(4);
    /// The set is a NUMA node set.
    #[doc(alias = "HWLOC_RESTRICT_FLAG_BYNODESET")]
    pub const BYNODESET: Self = Self(8);
    /// With [`BYNODESET`](Self::BYNODESET), remove PUs left without NUMA nodes.
    #[doc(alias = "HWLOC_RESTRICT_FLAG_REMOVE_MEMLESS")]
    pub const REMOVE_MEMLESS: Self = Self(16);
    /// Every flag hwloc 2.9 knows.
    pub const ALL: Self = Self(31);

    /// No flag.
    pub const fn empty() -> Self {
        Self::NONE
    }

    /// The flags as hwloc's bits.
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// Flags from hwloc's bits, `None` if a bit is not a known flag.
    pub const fn from_bits(bits: u64) -> Option<Self> {
        if bits & !Self::ALL.0 == 0 {
            Some(Self(bits))
        } else {
            None
        }
    }

    /// Flags from any bits, unknown ones kept (and rejected by
    /// [`validate`](Self::validate)), as hwloc's functions receive them.
    pub const fn from_bits_retain(bits: u64) -> Self {
        Self(bits)
    }

    /// Whether no bit is set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether every flag of `other` is set.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether some flag of `other` is set.
    pub const fn intersects(self, other: Self) -> bool {
        self.0 & other.0 != 0
    }

    /// Checks the flags as `hwloc_topology_restrict` does before touching
    /// the topology: only known flags, no
    /// [`REMOVE_CPULESS`](Self::REMOVE_CPULESS) with a node set, no
    /// [`REMOVE_MEMLESS`](Self::REMOVE_MEMLESS) without one.
    pub const fn validate(self) -> Result<(), RestrictError> {
        if Self::from_bits(self.0).is_none() {
            Err(RestrictError::InvalidFlags(self))
        } else if self.contains(Self::BYNODESET) {
            if self.contains(Self::REMOVE_CPULESS) {
                Err(RestrictError::CpulessWithNodeset)
            } else {
                Ok(())
            }
        } else if self.contains(Self::REMOVE_MEMLESS) {
            Err(RestrictError::MemlessWithoutNodeset)
        } else {
            Ok(())
        }
    }
}

impl BitOr for RestrictFlags {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

impl BitOrAssign for RestrictFlags {
    fn bitor_assign(&mut self, rhs: Self) {
        self.0 |= rhs.0;
    }
}

impl BitAnd for RestrictFlags {
    type Output = Self;
    fn bitand(self, rhs: Self) -> Self {
        Self(self.0 & rhs.0)
    }
}

impl BitAndAssign for RestrictFlags {
    fn bitand_assign(&mut self, rhs: Self) {
        self.0 &= rhs.0;
    }
}

/// Why a restriction was refused; the topology is left unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestrictError {
    /// Bits outside [`RestrictFlags::ALL`].
    InvalidFlags(RestrictFlags),
    /// [`RestrictFlags::REMOVE_CPULESS`] with [`RestrictFlags::BYNODESET`].
    CpulessWithNodeset,
    /// [`RestrictFlags::REMOVE_MEMLESS`] without [`RestrictFlags::BYNODESET`].
    MemlessWithoutNodeset,
    /// The cpuset holds no allowed PU.
    NoAllowedPu,
    /// The node set holds no allowed NUMA node.
    NoAllowedNumaNode,
    /// Removing the CPU-less NUMA nodes would leave none.
    NoNumaNodeLeft,
    /// Removing the memory-less PUs would leave none.
    NoPuLeft,
}

impl core::fmt::Display for RestrictError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            RestrictError::InvalidFlags(flags) => {
                write!(f, "invalid restriction flags {:#x}", flags.bits())
            }
            RestrictError::CpulessWithNodeset => {
                f.write_str("flag remove_cpuless cannot be used with a node set")
            }
            RestrictError::MemlessWithoutNodeset => {
                f.write_str("flag remove_memless needs a node set")
            }
            RestrictError::NoAllowedPu => {
                f.write_str("restriction set does not contain any allowed PU")
            }
            RestrictError::NoAllowedNumaNode => {
                f.write_str("restriction set does not contain any allowed NUMA node")
            }
            RestrictError::NoNumaNodeLeft => {
                f.write_str("restriction would remove every NUMA node")
            }
            RestrictError::NoPuLeft => f.write_str("restriction would remove every PU"),
        }
    }
}

impl core::error::Error for RestrictError {}

impl Topology {
    /// Restricts the topology to `set` as hwloc's `hwloc_topology_restrict`
    /// does: a cpuset ([`restrict`](Self::restrict)), or a node set with
    /// [`RestrictFlags::BYNODESET`]
    /// ([`restrict_by_nodeset`](Self::restrict_by_nodeset)).  Invalid flag
    /// combinations are refused before anything changes
    /// ([`RestrictFlags::validate`]); with `ADAPT_MISC` and `ADAPT_IO`, the
    /// Misc and I/O children of removed objects move to the kept parent.
    #[doc(alias = "hwloc_topology_restrict")]
    pub fn restrict_with_flags(
        &mut self,
        set: &Bitmap,
        flags: RestrictFlags,
    ) -> Result<(), RestrictError> {
        flags.validate()?;
        self.restrict_adapt = (
            flags.contains(RestrictFlags::ADAPT_MISC),
            flags.contains(RestrictFlags::ADAPT_IO),
        );
        let done = self.restrict_with_flags_inner(set, flags);
        self.restrict_adapt = (false, false);
        done
    }

    fn restrict_with_flags_inner(
        &mut self,
        set: &Bitmap,
        flags: RestrictFlags,
    ) -> Result<(), RestrictError> {
        if flags.contains(RestrictFlags::BYNODESET) {
            self.restrict_by_nodeset(
                &NodeSet::from_bitmap(set.clone()),
                flags.contains(RestrictFlags::REMOVE_MEMLESS),
            )
        } else {
            self.restrict(
                &CpuSet::from_bitmap(set.clone()),
                flags.contains(RestrictFlags::REMOVE_CPULESS),
            )
        }
    }

    /// Removes the PUs outside `set` (hwloc's `hwloc_topology_restrict` by
    /// cpuset), dropping objects left without PUs, and NUMA nodes left with
    /// no PU when `remove_cpuless` is set.
    #[doc(alias = "hwloc_topology_restrict")]
    pub fn restrict(&mut self, set: &CpuSet, remove_cpuless: bool) -> Result<(), RestrictError> {
        if !set.intersects(&self.allowed_cpuset) {
            return Err(RestrictError::NoAllowedPu);
        }
        let dropped = set.not();
        let mut dropped_nodes = NodeSet::new();
        if remove_cpuless {
            for n in self.objs_by_type(ObjType::NUMANode) {
                let o = self.obj(n);
                let cs = o.cpuset.clone().unwrap_or_default();
                if (cs.is_empty() || dropped.includes(&cs))
                    && let Some(os) = o.os_index
                {
                    dropped_nodes.set(os);
                }
            }
            if dropped_nodes.includes(&self.allowed_nodeset) {
                return Err(RestrictError::NoNumaNodeLeft);
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
    #[doc(alias = "hwloc_topology_restrict")]
    pub fn restrict_by_nodeset(
        &mut self,
        set: &NodeSet,
        remove_memless: bool,
    ) -> Result<(), RestrictError> {
        if !set.intersects(&self.allowed_nodeset) {
            return Err(RestrictError::NoAllowedNumaNode);
        }
        let dropped_nodes = set.not();
        let mut dropped = CpuSet::new();
        if remove_memless {
            for pu in self.objs_by_type(ObjType::PU) {
                let o = self.obj(pu);
                let empty_cpus = o.cpuset.as_ref().is_none_or(|c| c.is_empty());
                let gone = o.nodeset.as_ref().is_none_or(|n| dropped_nodes.includes(n));
                if (empty_cpus || gone)
                    && let Some(os) = o.os_index
                {
                    dropped.set(os);
                }
            }
            if dropped.includes(&self.allowed_cpuset) {
                return Err(RestrictError::NoPuLeft);
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
            self.adopt_orphans(id);
            self.remove_subtree(id);
        }
    }

    /// What both restrictions do once objects are gone: levels rebuilt,
    /// memory and symmetry recomputed, distances, memory attributes and
    /// CPU kinds cleared of what went away.
    fn finish_restrict(&mut self, dropped: &CpuSet) {
        self.rebuild_levels();
        for k in &mut self.cpukinds {
            k.cpuset = k.cpuset.and_not(dropped);
        }
        let kinds = self.cpukinds.len();
        self.cpukinds.retain(|k| !k.cpuset.is_empty());
        // As hwloc, the kinds left are ranked again when one went away.
        if self.cpukinds.len() != kinds {
            self.rank_cpukinds();
        }
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
        let children = o.normal_and_memory_children();
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
            self.adopt_orphans(id);
            self.remove_subtree(id);
        } else if modified {
            self.reorder_children_after_restrict(id);
        }
    }

    /// Before `id` is removed by a restriction: its Misc and I/O children
    /// move to the end of its parent's lists when the restriction adapts
    /// them.
    fn adopt_orphans(&mut self, id: ObjId) {
        let (misc, io) = self.restrict_adapt;
        let Some(parent) = self.obj(id).parent else {
            return;
        };
        let moved_misc = if misc {
            core::mem::take(&mut self.obj_mut(id).misc_children)
        } else {
            thin_vec::ThinVec::new()
        };
        let moved_io = if io {
            core::mem::take(&mut self.obj_mut(id).io_children)
        } else {
            thin_vec::ThinVec::new()
        };
        for &c in moved_misc.iter().chain(moved_io.iter()) {
            self.obj_mut(c).parent = Some(parent);
        }
        let p = self.obj_mut(parent);
        p.misc_children.extend(moved_misc);
        p.io_children.extend(moved_io);
    }

    /// Reorders normal children by their first PU as hwloc's
    /// `hwloc__reorder_children` does after a restriction: each child in
    /// turn goes before the first one it does not sort after, so children
    /// that compare equal (CPU-less ones) end up in reverse order.
    #[doc(alias = "hwloc__reorder_children")]
    fn reorder_children_after_restrict(&mut self, id: ObjId) {
        let old = core::mem::take(&mut self.obj_mut(id).children);
        let mut ranked: Vec<(usize, ObjId)> = old.into_iter().enumerate().collect();
        ranked.sort_by(|&(ia, a), &(ib, b)| self.cmp_first(a, b).then(ib.cmp(&ia)));
        self.obj_mut(id).children = ranked.into_iter().map(|(_, c)| c).collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::test_machines::{cs, small_machine};
    use alloc::string::ToString;

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
        assert!(
            t.restrict_by_nodeset(&NodeSet::from_index(5), false)
                .is_err()
        );
        assert_eq!(t.level(Depth::NumaNode).len(), 2);
    }

    #[test]
    fn flags_are_checked_before_anything_changes() {
        use RestrictFlags as F;
        let mut t = small_machine();
        let all = Bitmap::from_range(0, Some(7));
        let cases = [
            (
                F::from_bits_retain(32),
                RestrictError::InvalidFlags(F::from_bits_retain(32)),
            ),
            (
                F::BYNODESET | F::REMOVE_CPULESS,
                RestrictError::CpulessWithNodeset,
            ),
            (F::REMOVE_MEMLESS, RestrictError::MemlessWithoutNodeset),
        ];
        for (flags, err) in cases {
            assert_eq!(flags.validate(), Err(err));
            assert_eq!(t.restrict_with_flags(&all, flags), Err(err));
        }
        assert_eq!(
            RestrictError::InvalidFlags(F::from_bits_retain(u64::MAX)).to_string(),
            "invalid restriction flags 0xffffffffffffffff"
        );
        assert_eq!(t.objs_by_type(ObjType::PU).len(), 8);
        assert_eq!(F::from_bits(31), Some(F::ALL));
        assert_eq!(F::from_bits(32), None);
        assert!(F::ALL.contains(F::BYNODESET | F::REMOVE_MEMLESS));
    }

    #[test]
    fn flags_choose_the_kind_of_set() {
        let mut t = small_machine();
        let flags = RestrictFlags::BYNODESET | RestrictFlags::REMOVE_MEMLESS;
        t.restrict_with_flags(&Bitmap::from_index(1), flags)
            .unwrap();
        t.check().unwrap();
        assert_eq!(t.allowed_cpuset, cs(4, 7));
        let mut t = small_machine();
        t.restrict_with_flags(&Bitmap::from_index(1), RestrictFlags::NONE)
            .unwrap();
        t.check().unwrap();
        assert_eq!(t.allowed_cpuset, cs(1, 1));
        assert_eq!(
            t.restrict_with_flags(&Bitmap::from_index(100), RestrictFlags::NONE),
            Err(RestrictError::NoAllowedPu)
        );
    }
}
