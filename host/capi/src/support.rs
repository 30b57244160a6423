//! The support flags (`hwloc_topology_get_support`): their fields by
//! name, as the model and hwloc's XML record them, and the binding support
//! hwloc reports on Linux.

use crate::types::*;

pub(crate) fn discovery_field<'a>(
    d: &'a mut hwloc_topology_discovery_support,
    f: &str,
) -> Option<&'a mut u8> {
    Some(match f {
        "pu" => &mut d.pu,
        "numa" => &mut d.numa,
        "numa_memory" => &mut d.numa_memory,
        "disallowed_pu" => &mut d.disallowed_pu,
        "disallowed_numa" => &mut d.disallowed_numa,
        "cpukind_efficiency" => &mut d.cpukind_efficiency,
        _ => return None,
    })
}

pub(crate) fn cpubind_field<'a>(
    c: &'a mut hwloc_topology_cpubind_support,
    f: &str,
) -> Option<&'a mut u8> {
    Some(match f {
        "set_thisproc_cpubind" => &mut c.set_thisproc_cpubind,
        "get_thisproc_cpubind" => &mut c.get_thisproc_cpubind,
        "set_proc_cpubind" => &mut c.set_proc_cpubind,
        "get_proc_cpubind" => &mut c.get_proc_cpubind,
        "set_thisthread_cpubind" => &mut c.set_thisthread_cpubind,
        "get_thisthread_cpubind" => &mut c.get_thisthread_cpubind,
        "set_thread_cpubind" => &mut c.set_thread_cpubind,
        "get_thread_cpubind" => &mut c.get_thread_cpubind,
        "get_thisproc_last_cpu_location" => &mut c.get_thisproc_last_cpu_location,
        "get_proc_last_cpu_location" => &mut c.get_proc_last_cpu_location,
        "get_thisthread_last_cpu_location" => &mut c.get_thisthread_last_cpu_location,
        _ => return None,
    })
}

pub(crate) fn membind_field<'a>(
    m: &'a mut hwloc_topology_membind_support,
    f: &str,
) -> Option<&'a mut u8> {
    Some(match f {
        "set_thisproc_membind" => &mut m.set_thisproc_membind,
        "get_thisproc_membind" => &mut m.get_thisproc_membind,
        "set_proc_membind" => &mut m.set_proc_membind,
        "get_proc_membind" => &mut m.get_proc_membind,
        "set_thisthread_membind" => &mut m.set_thisthread_membind,
        "get_thisthread_membind" => &mut m.get_thisthread_membind,
        "set_area_membind" => &mut m.set_area_membind,
        "get_area_membind" => &mut m.get_area_membind,
        "alloc_membind" => &mut m.alloc_membind,
        "firsttouch_membind" => &mut m.firsttouch_membind,
        "bind_membind" => &mut m.bind_membind,
        "interleave_membind" => &mut m.interleave_membind,
        "nexttouch_membind" => &mut m.nexttouch_membind,
        "migrate_membind" => &mut m.migrate_membind,
        "get_area_memlocation" => &mut m.get_area_memlocation,
        "weighted_interleave_membind" => &mut m.weighted_interleave_membind,
        _ => return None,
    })
}

/// Fills the binding support of a topology of this system, as hwloc 2.9
/// reports it on Linux (statically, as hwloc does): all CPU binding and
/// last-location queries; memory policies of threads and areas (not of
/// processes), bound allocation, first-touch, bind, interleave,
/// migration and page location; no next-touch.
pub(crate) fn fill_support(
    cpu: &mut hwloc_topology_cpubind_support,
    mem: &mut hwloc_topology_membind_support,
) {
    *cpu = hwloc_topology_cpubind_support {
        set_thisproc_cpubind: 1,
        get_thisproc_cpubind: 1,
        set_proc_cpubind: 1,
        get_proc_cpubind: 1,
        set_thisthread_cpubind: 1,
        get_thisthread_cpubind: 1,
        set_thread_cpubind: 1,
        get_thread_cpubind: 1,
        get_thisproc_last_cpu_location: 1,
        get_proc_last_cpu_location: 1,
        get_thisthread_last_cpu_location: 1,
    };
    *mem = hwloc_topology_membind_support {
        set_thisproc_membind: 0,
        get_thisproc_membind: 0,
        set_proc_membind: 0,
        get_proc_membind: 0,
        set_thisthread_membind: 1,
        get_thisthread_membind: 1,
        set_area_membind: 1,
        get_area_membind: 1,
        alloc_membind: 1,
        firsttouch_membind: 1,
        bind_membind: 1,
        interleave_membind: 1,
        nexttouch_membind: 0,
        migrate_membind: 1,
        get_area_memlocation: 1,
        // As hwloc 2.14: when the kernel has the policy's sysfs folder.
        weighted_interleave_membind: u8::from(wloc_bind::kernel_has_weighted_interleave()),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn support_is_hwloc_29_on_linux() {
        let mut c = hwloc_topology_cpubind_support::default();
        let mut m = hwloc_topology_membind_support::default();
        fill_support(&mut c, &mut m);
        assert_eq!(c.set_thread_cpubind + c.get_thisthread_last_cpu_location, 2);
        assert_eq!(
            m.set_thisproc_membind + m.get_proc_membind + m.nexttouch_membind,
            0
        );
        assert_eq!(
            m.set_area_membind + m.get_area_memlocation + m.migrate_membind,
            3
        );
    }
}
