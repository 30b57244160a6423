//! Native CPU and memory binding on Linux, for wloc topologies.
//!
//! A [`Binder`] wraps a [`Topology`] that describes the system we run on
//! and binds processes, threads and memory to its PUs and NUMA nodes:
//!
//! ```no_run
//! # fn demo(topo: &wloc_core::Topology) -> Result<(), wloc_bind::BindError> {
//! use wloc_bind::{Binder, CpuBindFlags, MemBindFlags, MemPolicy};
//! let binder = Binder::new(topo);
//! let first_pu = wloc_core::CpuSet::from_index(0);
//! binder.bind_cpu(&first_pu, CpuBindFlags::THREAD)?;
//! let nodes = binder.cpu_binding(CpuBindFlags::THREAD)?;
//! binder.bind_memory(&nodes, MemPolicy::Bind, MemBindFlags::empty())?;
//! let buffer = binder.allocate_bound_memory(1 << 20, &first_pu, MemPolicy::Bind, MemBindFlags::STRICT)?;
//! # drop(buffer); Ok(()) }
//! ```
//!
//! CPU sets and NUMA node sets are distinct types; memory functions take
//! either (see [`MemSet`]).  Flags are checked before any system call,
//! and errors are typed ([`BindError`]).  CPU binding uses
//! `sched_setaffinity`; memory binding uses the kernel's NUMA calls
//! (`set_mempolicy`, `get_mempolicy`, `mbind`, `migrate_pages`,
//! `move_pages`) directly.  A topology read from a file binds only when
//! it is marked as this system ([`Topology::is_thissystem`]).

#![cfg(target_os = "linux")]

mod cpu;
mod error;
mod mem;
pub mod raw;
mod support;
mod sys;
mod thread;

pub use error::BindError;
pub use mem::{BoundMemory, MemPolicy, MemSet, kernel_has_weighted_interleave};
pub use support::Support;
pub use thread::{current_pu, pin_thread_to_pu, set_thread_affinity, thread_affinity};

use wloc_core::bitmap::{Set, SetKind};
use wloc_core::{CpuSet, NodeSet, Topology};

bitflags::bitflags! {
    /// Flags of CPU binding operations (hwloc's `HWLOC_CPUBIND_*`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct CpuBindFlags: u32 {
        /// Act on every thread of the process (the default for processes).
        const PROCESS = 1 << 0;
        /// Act on a single thread: the calling one, or the given id taken
        /// as a thread id.
        const THREAD = 1 << 1;
        /// Request strict binding.  Linux binding is always strict (a
        /// thread never runs outside its mask), so this is accepted and
        /// has no further effect.
        const STRICT = 1 << 2;
        /// Do not change the memory binding along with the CPU binding.
        /// Linux CPU binding never touches memory policies, so this is
        /// accepted and has no further effect.
        const NO_MEMORY_BINDING = 1 << 3;
    }
}

bitflags::bitflags! {
    /// Flags of memory binding operations (hwloc's `HWLOC_MEMBIND_*`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct MemBindFlags: u32 {
        /// Act on the whole process.  Linux memory policies belong to
        /// threads, so setting or getting a process policy is unsupported.
        const PROCESS = 1 << 0;
        /// Act on the calling thread (also the default).
        const THREAD = 1 << 1;
        /// Bind strictly: `bind` becomes `MPOL_BIND` (allocation fails
        /// rather than spilling to other nodes) instead of
        /// `MPOL_PREFERRED_MANY`; queries fail if pages differ.
        const STRICT = 1 << 2;
        /// Move pages already allocated to the new nodes.
        const MIGRATE = 1 << 3;
        /// Do not change the CPU binding along with the memory binding.
        /// Linux memory policies never touch CPU binding, so this is
        /// accepted and has no further effect.
        const NO_CPU_BINDING = 1 << 4;
    }
}

/// Binds processes, threads and memory of the system described by a
/// topology.
#[derive(Clone, Copy, Debug)]
pub struct Binder<'t> {
    topo: &'t Topology,
}

impl<'t> Binder<'t> {
    /// A binder for `topo`.  Operations fail with
    /// [`BindError::NotThisSystem`] unless `topo.is_thissystem` is set.
    pub fn new(topo: &'t Topology) -> Self {
        Binder { topo }
    }

    /// The topology this binder works with.
    pub fn topology(&self) -> &'t Topology {
        self.topo
    }

    /// Fails unless the topology describes the running system.
    fn check_system(&self, op: &str) -> Result<(), BindError> {
        if self.topo.is_thissystem {
            Ok(())
        } else {
            Err(BindError::NotThisSystem { op: op.into() })
        }
    }

    /// Checks a CPU set against the topology, as hwloc does: it must not
    /// be empty and every PU must exist; a set covering the whole
    /// topology means every PU, disallowed ones included.
    fn fix_cpuset(&self, op: &str, set: &CpuSet) -> Result<CpuSet, BindError> {
        let (topo, complete) = (self.topo.cpuset(), self.topo.complete_cpuset());
        fix_set(op, set, topo, complete, "CPU set", "PU")
    }

    /// Checks a NUMA node set against the topology, like [`Self::fix_cpuset`].
    fn fix_nodeset(&self, op: &str, set: &NodeSet) -> Result<NodeSet, BindError> {
        let (topo, complete) = (self.topo.nodeset(), self.topo.complete_nodeset());
        fix_set(op, set, topo, complete, "NUMA node set", "NUMA node")
    }
}

/// The checks of [`Binder::fix_cpuset`] and [`Binder::fix_nodeset`]:
/// `topo` and `complete` are the topology's sets, `name` names the set
/// in errors and `member` one of its members.
fn fix_set<K: SetKind>(
    op: &str,
    set: &Set<K>,
    topo: &Set<K>,
    complete: &Set<K>,
    name: &str,
    member: &str,
) -> Result<Set<K>, BindError> {
    if set.is_empty() {
        return Err(BindError::InvalidSet {
            op: op.into(),
            reason: format!("the {name} is empty"),
        });
    }
    if set.includes(topo) {
        return Ok(complete.clone());
    }
    if !set.is_included_in(complete) {
        let extra = set - complete;
        return Err(BindError::InvalidSet {
            op: op.into(),
            reason: format!(
                "the topology has no {member} {} (it has {})",
                extra.bitmap().to_list_string(),
                complete.bitmap().to_list_string()
            ),
        });
    }
    Ok(set.clone())
}

/// Checks a process or thread id given by the caller.
fn check_id(op: &str, id: i32) -> Result<(), BindError> {
    if id <= 0 {
        return Err(BindError::NoSuchTask { op: op.into(), id });
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use wloc_core::Bitmap;

    /// A topology built from a synthetic description.
    pub(crate) fn synthetic(desc: &str, thissystem: bool) -> Topology {
        let mut t = wloc_core::synthetic::parse(desc)
            .unwrap()
            .build(Topology::new())
            .unwrap();
        t.is_thissystem = thissystem;
        t
    }

    fn cpus(list: &str) -> CpuSet {
        CpuSet::from_bitmap(Bitmap::parse_list(list).unwrap())
    }

    #[test]
    fn sets_are_checked_against_the_topology() {
        let t = synthetic("numa:2 pu:2", true);
        let b = Binder::new(&t);
        assert_eq!(b.fix_cpuset("x", &cpus("1-2")).unwrap(), cpus("1-2"));
        // A set covering the topology stands for all of it.
        assert_eq!(b.fix_cpuset("x", &CpuSet::full()).unwrap(), cpus("0-3"));
        let e = b.fix_cpuset("bind", &cpus("3-5")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot bind: invalid set: the topology has no PU 4-5 (it has 0-3)"
        );
        assert!(matches!(
            b.fix_cpuset("x", &CpuSet::new()),
            Err(BindError::InvalidSet { .. })
        ));
        assert!(b.fix_nodeset("x", &NodeSet::from_index(2)).is_err());
        assert!(b.fix_nodeset("x", &NodeSet::new()).is_err());
        assert_eq!(
            b.fix_nodeset("x", &NodeSet::from_index(1)).unwrap(),
            NodeSet::from_index(1)
        );
    }

    #[test]
    fn cpusets_designate_their_local_nodes() {
        let t = synthetic("numa:2 pu:2", true);
        assert_eq!(cpus("2").to_nodeset(&t), NodeSet::from_index(1));
        assert_eq!(cpus("1-2").to_nodeset(&t), NodeSet::from_range(0, Some(1)));
        assert_eq!(CpuSet::new().to_nodeset(&t), NodeSet::new());
    }

    #[test]
    fn foreign_topologies_do_not_bind() {
        let t = synthetic("pu:2", false);
        let b = Binder::new(&t);
        let e = b.bind_cpu(&cpus("0"), CpuBindFlags::THREAD).unwrap_err();
        assert!(matches!(e, BindError::NotThisSystem { .. }), "{e}");
        assert!(e.to_string().contains("--thissystem"));
        assert!(matches!(
            b.memory_binding(MemBindFlags::empty()),
            Err(BindError::NotThisSystem { .. })
        ));
    }

    #[test]
    fn flags_fail_before_the_topology_check() {
        let t = synthetic("pu:2", false);
        let b = Binder::new(&t);
        assert!(matches!(
            b.bind_cpu(&cpus("0"), CpuBindFlags::PROCESS | CpuBindFlags::THREAD),
            Err(BindError::BadFlags { .. })
        ));
        assert!(matches!(
            b.bind_memory(
                &NodeSet::from_index(0),
                MemPolicy::NextTouch,
                MemBindFlags::empty()
            ),
            Err(BindError::Unsupported { .. })
        ));
        let buf = [0u8; 16];
        assert!(matches!(
            b.area_memory_binding(&buf, MemBindFlags::THREAD),
            Err(BindError::BadFlags { .. })
        ));
    }
}
