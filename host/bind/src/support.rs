//! What binding features work on this kernel, as hwloc-info --support
//! reports them.

use wloc_core::NodeSet;

use crate::{Binder, mem, sys};

/// The binding features available for a topology on this system.  All
/// are false when the topology does not describe the running system.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Support {
    /// CPU binding of this process, of other processes and of threads (set and get).
    pub cpubind: bool,
    /// Where this process, other processes and this thread last ran.
    pub last_cpu_location: bool,
    /// Memory policies of the calling thread (set and get).
    pub thisthread_membind: bool,
    /// Binding of memory areas, bound allocation, migration and page
    /// location (the kernel's NUMA calls work).
    pub area_membind: bool,
    /// `MPOL_PREFERRED_MANY` (Linux 5.15 and later); `bind` falls back to
    /// `MPOL_PREFERRED` on a single node without it.
    pub preferred_many: bool,
    /// `MPOL_WEIGHTED_INTERLEAVE` (Linux 6.9 and later).
    pub weighted_interleave: bool,
}

impl Support {
    /// The features in hwloc-info's `--support` names and order, with
    /// `membind:weighted_interleave_membind` as newer hwloc versions add it.
    pub fn features(&self) -> Vec<(&'static str, bool)> {
        let c = self.cpubind;
        let l = self.last_cpu_location;
        let t = self.thisthread_membind;
        let a = self.area_membind;
        vec![
            ("cpubind:set_thisproc_cpubind", c),
            ("cpubind:get_thisproc_cpubind", c),
            ("cpubind:set_proc_cpubind", c),
            ("cpubind:get_proc_cpubind", c),
            ("cpubind:set_thisthread_cpubind", c),
            ("cpubind:get_thisthread_cpubind", c),
            ("cpubind:set_thread_cpubind", c),
            ("cpubind:get_thread_cpubind", c),
            ("cpubind:get_thisproc_last_cpu_location", l),
            ("cpubind:get_proc_last_cpu_location", l),
            ("cpubind:get_thisthread_last_cpu_location", l),
            // Linux memory policies belong to threads.
            ("membind:set_thisproc_membind", false),
            ("membind:get_thisproc_membind", false),
            ("membind:set_proc_membind", false),
            ("membind:get_proc_membind", false),
            ("membind:set_thisthread_membind", t),
            ("membind:get_thisthread_membind", t),
            ("membind:set_area_membind", a),
            ("membind:get_area_membind", a),
            ("membind:alloc_membind", a),
            ("membind:firsttouch_membind", t),
            ("membind:bind_membind", t),
            ("membind:interleave_membind", t),
            ("membind:nexttouch_membind", false),
            ("membind:migrate_membind", a),
            ("membind:get_area_memlocation", a),
            (
                "membind:weighted_interleave_membind",
                self.weighted_interleave,
            ),
        ]
    }
}

impl Binder<'_> {
    /// Probes which binding features work here.  Policies are tried in a
    /// short-lived thread so that the caller's own policy is untouched.
    pub fn support(&self) -> Support {
        if !self.topology().is_thissystem {
            return Support::default();
        }
        let cpubind = sys::sched_getaffinity::<wloc_core::bitmap::CpuKind>(0).is_ok();
        let last_cpu_location = sys::getcpu().is_ok()
            && std::fs::metadata(format!("/proc/{}/stat", std::process::id())).is_ok();
        let numa = sys::get_mempolicy(std::ptr::null(), 0, |_, _| ()).is_ok();
        let node = self.topology().nodeset().first().unwrap_or(0);
        let preferred_many = numa
            && std::thread::scope(|s| {
                s.spawn(|| {
                    let mask = sys::to_kernel_mask(&NodeSet::from_index(node), 0);
                    sys::set_mempolicy(sys::MPOL_PREFERRED_MANY, Some(&mask)).is_ok()
                })
                .join()
                .unwrap_or(false)
            });
        Support {
            cpubind,
            last_cpu_location,
            thisthread_membind: numa,
            area_membind: numa,
            preferred_many,
            weighted_interleave: numa && mem::kernel_has_weighted_interleave(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_topologies_support_nothing() {
        let t = crate::tests::synthetic("pack:2 pu:2", false);
        let s = Binder::new(&t).support();
        assert_eq!(s, Support::default());
        assert!(s.features().iter().all(|(_, v)| !v));
        assert_eq!(s.features().len(), 27);
    }
}
