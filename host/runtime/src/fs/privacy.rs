//! Which paths are private to a process: the one rule, whatever the grant,
//! that keeps a component from reading the environment, command line,
//! memory map, open files or identity of the `wloc` process or of any
//! other process through `/proc`.
//!
//! Paths are the component's view (`["proc", "self", "cgroup"]`), checked
//! once as asked and once after their links are resolved, so that every
//! spelling (`/proc/./self`, `/proc//self`, `/proc/mounts` ->
//! `self/mounts`, `/proc/self` -> `/proc/PID`) meets the same rule.

/// The files about the process wloc describes that discovery needs, as
/// hwloc's Linux backend reads them: its cgroup and cpuset membership
/// (`/proc/self/cgroup`, `/proc/self/cpuset`) and its mount table
/// (`/proc/self/mounts`, also reached as `/proc/mounts`), where the cgroup
/// and cpuset hierarchies are found.  They are served only as
/// `/proc/self/NAME` (or `/proc/mounts`), never as `/proc/PID/NAME`, and
/// only the files themselves: not their folder, not a listing of it.
pub const OWN_PROCESS_FILES: &[&str] = &["cgroup", "cpuset", "mounts"];

/// Machine-wide `/proc` entries withheld because they show other
/// processes (their PIDs: `loadavg`'s last PID, `locks`, `sysvipc`,
/// `timer_list`, `sched_debug`, `sys/kernel/ns_last_pid`), the reading
/// process's keys (`keys`, `key-users`), memory or kernel addresses
/// (`kcore`, `vmcore`, `kpage*`, `kallsyms`, `vmallocinfo`, `iomem`,
/// `ioports`, `slabinfo`, `pagetypeinfo`, `modules`), a secret of this
/// boot (`sys/kernel/random/boot_id`), or because reading consumes them
/// (`kmsg`).  Paths below `/proc`, component by component.
pub const PROC_FILES_WITHHELD: &[&[&str]] = &[
    &["kallsyms"],
    &["keys"],
    &["key-users"],
    &["vmallocinfo"],
    &["iomem"],
    &["ioports"],
    &["slabinfo"],
    &["pagetypeinfo"],
    &["modules"],
    &["sys", "kernel", "random", "boot_id"],
    &["kcore"],
    &["vmcore"],
    &["kmsg"],
    &["kpagecount"],
    &["kpageflags"],
    &["kpagecgroup"],
    &["kpageidle"],
    &["loadavg"],
    &["locks"],
    &["sysvipc"],
    &["timer_list"],
    &["sched_debug"],
    &["sys", "kernel", "ns_last_pid"],
];

/// What a path is, for the privacy rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Privacy {
    /// Anything that describes the machine: served under the grants.
    Machine,
    /// One of [`OWN_PROCESS_FILES`] of the process wloc describes.
    OwnProcessFile,
    /// Private to a process, or withheld: never served.
    Private,
}

/// Whether a `/proc` entry name is a process folder (`self`,
/// `thread-self` or a PID).
pub fn is_process_folder(name: &str) -> bool {
    name == "self"
        || name == "thread-self"
        || (!name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()))
}

/// Classifies a path (its components, without `.`, `..` or empty ones).
///
/// `own_pid` is the folder name `/proc/self` resolves to on the running
/// system, so that a resolved `/proc/PID/cgroup` of wloc's own process is
/// still served; a path as the component asked it is classified with
/// `None`, so a component naming any PID is refused and learns none.
pub fn classify<S: AsRef<str>>(comps: &[S], own_pid: Option<&str>) -> Privacy {
    if comps.len() < 2 || comps[0].as_ref() != "proc" {
        return Privacy::Machine;
    }
    let folder = comps[1].as_ref();
    if is_process_folder(folder) {
        let own = folder == "self" || own_pid == Some(folder);
        if own && comps.len() == 3 && OWN_PROCESS_FILES.contains(&comps[2].as_ref()) {
            return Privacy::OwnProcessFile;
        }
        return Privacy::Private;
    }
    let below = &comps[1..];
    let withheld = PROC_FILES_WITHHELD
        .iter()
        .any(|w| below.len() >= w.len() && w.iter().zip(below).all(|(a, b)| *a == b.as_ref()));
    if withheld {
        Privacy::Private
    } else {
        Privacy::Machine
    }
}

/// Whether an entry of a listed folder may be shown: process folders and
/// withheld entries of `/proc` are left out, so that a listing or a glob
/// never reveals a PID.
pub fn listable<S: AsRef<str>>(folder: &[S], name: &str) -> bool {
    // Listings outside /proc (thousands of sysfs entries per discovery)
    // hold nothing private: no path is built for them.
    if folder.first().is_none_or(|f| f.as_ref() != "proc") {
        return true;
    }
    if folder.len() == 1 && folder[0].as_ref() == "proc" && is_process_folder(name) {
        return false;
    }
    let mut path: Vec<&str> = folder.iter().map(AsRef::as_ref).collect();
    path.push(name);
    classify(&path, None) != Privacy::Private
}

/// Whether a granted root holds files that are never served (it is `/`,
/// `/proc`, a process folder, or holds a withheld entry): `wloc component
/// allow` and `list` say so, since such a grant gives less than it names.
pub fn root_withholds(root: &str) -> bool {
    let comps: Vec<&str> = root
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    match comps.as_slice() {
        [] | ["proc"] => true,
        ["proc", folder, ..] if is_process_folder(folder) => true,
        ["proc", below @ ..] => PROC_FILES_WITHHELD.iter().any(|w| {
            let n = w.len().min(below.len());
            w[..n] == below[..n]
        }),
        _ => false,
    }
}

/// What a grant of such a root withholds, in one sentence for people.
pub const WITHHELD_NOTE: &str = "files private to a process (/proc/PID, /proc/self, \
/proc/thread-self, except /proc/self/cgroup, cpuset and mounts) and /proc files that reveal \
other processes or memory are withheld";

/// The PID folder `/proc/self` stands for in this process.
pub fn own_pid() -> &'static str {
    static PID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PID.get_or_init(|| std::process::id().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(p: &str) -> Vec<&str> {
        p.split('/').filter(|s| !s.is_empty()).collect()
    }

    #[test]
    fn process_folders_are_private_except_the_named_files() {
        for p in [
            "/proc/self",
            "/proc/self/environ",
            "/proc/self/cmdline",
            "/proc/self/maps",
            "/proc/self/mem",
            "/proc/self/fd",
            "/proc/self/fd/3",
            "/proc/self/task/1/environ",
            "/proc/self/root/etc/passwd",
            "/proc/thread-self/environ",
            "/proc/thread-self/cgroup",
            "/proc/1/environ",
            "/proc/1/cgroup",
            "/proc/1",
            "/proc/self/cgroup/x",
            "/proc/kcore",
            "/proc/loadavg",
            "/proc/sysvipc/shm",
            "/proc/sys/kernel/ns_last_pid",
            "/proc/kallsyms",
            "/proc/keys",
            "/proc/key-users",
            "/proc/vmallocinfo",
            "/proc/iomem",
            "/proc/slabinfo",
            "/proc/pagetypeinfo",
            "/proc/sys/kernel/random/boot_id",
        ] {
            assert_eq!(classify(&c(p), None), Privacy::Private, "{p}");
        }
        for p in [
            "/proc/self/cgroup",
            "/proc/self/cpuset",
            "/proc/self/mounts",
        ] {
            assert_eq!(classify(&c(p), None), Privacy::OwnProcessFile, "{p}");
        }
        for p in [
            "/proc",
            "/proc/cpuinfo",
            "/proc/meminfo",
            "/proc/mounts",
            "/proc/sys/kernel/osrelease",
            "/proc/driver/nvidia/gpus",
            "/sys/devices/system/cpu/online",
            "/self/environ",
            "/",
        ] {
            assert_eq!(classify(&c(p), None), Privacy::Machine, "{p}");
        }
    }

    #[test]
    fn a_resolved_path_of_this_process_keeps_the_exceptions_only() {
        assert_eq!(
            classify(&c("/proc/4242/cgroup"), Some("4242")),
            Privacy::OwnProcessFile
        );
        assert_eq!(
            classify(&c("/proc/4242/mounts"), Some("4242")),
            Privacy::OwnProcessFile
        );
        assert_eq!(
            classify(&c("/proc/4242/environ"), Some("4242")),
            Privacy::Private
        );
        assert_eq!(
            classify(&c("/proc/4243/cgroup"), Some("4242")),
            Privacy::Private
        );
        assert_eq!(
            classify(&c("/proc/4242/net/dev"), Some("4242")),
            Privacy::Private
        );
    }

    #[test]
    fn roots_that_withhold_files_are_named() {
        for r in [
            "/",
            "/proc",
            "/proc/self",
            "/proc/1/",
            "/proc/sys",
            "/proc/sys/kernel",
        ] {
            assert!(root_withholds(r), "{r}");
        }
        for r in [
            "/sys",
            "/proc/cpuinfo",
            "/proc/sys/vm",
            "/run/udev/data",
            "/proc/driver",
        ] {
            assert!(!root_withholds(r), "{r}");
        }
    }

    #[test]
    fn listings_of_proc_hide_processes() {
        for n in ["1", "self", "thread-self", "4242", "kcore", "loadavg"] {
            assert!(!listable(&["proc"], n), "{n}");
        }
        for n in ["cpuinfo", "meminfo", "mounts", "sys", "driver"] {
            assert!(listable(&["proc"], n), "{n}");
        }
        assert!(!listable(&["proc", "sys", "kernel"], "ns_last_pid"));
        assert!(listable(&["proc", "sys", "kernel"], "osrelease"));
        assert!(listable(&["sys", "devices"], "1"));
    }
}
