//! The processes and threads of this machine and where they are bound,
//! read from `/proc`: what `wloc ps` lists, and what `wloc ls --top`
//! (`--ps`) and the interactive picture show on the topology.

use std::os::unix::fs::MetadataExt;

use wloc_bind::{BindError, Binder, CpuBindFlags};
use wloc_core::{CpuSet, Topology};

/// Why the processes could not be listed or added to a topology.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// A `--uid` value that is neither a number nor `all`.
    #[error("invalid --uid '{0}' (expected a number or all)")]
    BadUid(String),
    /// `/proc` could not be listed.
    #[error("cannot list /proc: {0}")]
    Proc(#[source] std::io::Error),
    /// The topology could not be completed after a process was added.
    #[error("cannot add process `{name}' to the topology: {why}")]
    Insert {
        /// The process's Misc object name.
        name: String,
        /// What the topology reported.
        why: String,
    },
}

/// Parses a `--uid` value: a number, or `all` (`None`: every user).
pub fn parse_uid(u: &str) -> Result<Option<u32>, ProcessError> {
    if u == "all" {
        return Ok(None);
    }
    u.parse::<u32>()
        .map(Some)
        .map_err(|_| ProcessError::BadUid(u.to_string()))
}

/// The user id of the process running wloc.
pub fn current_uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// The ids of the processes in `/proc`, sorted.
pub fn pids() -> Result<Vec<i32>, ProcessError> {
    let mut pids: Vec<i32> = std::fs::read_dir("/proc")
        .map_err(ProcessError::Proc)?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    pids.sort_unstable();
    Ok(pids)
}

/// Whether process `pid` belongs to the user `uid` (false when it
/// vanished).
pub fn owned_by(pid: i32, uid: u32) -> bool {
    std::fs::metadata(format!("/proc/{pid}")).is_ok_and(|m| m.uid() == uid)
}

/// The process name hwloc-ps shows: the start of `/proc/PID/cmdline`
/// (first argument, at most 63 bytes), or `comm` with `short`.
/// `None` for kernel threads, which have no command line.
pub fn process_name(pid: i32, short: bool) -> Option<String> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    if cmdline.is_empty() {
        return None;
    }
    if short && let Some(c) = comm(&format!("/proc/{pid}/comm")) {
        return Some(c);
    }
    let head = &cmdline[..cmdline.len().min(63)];
    let end = head.iter().position(|&b| b == 0).unwrap_or(head.len());
    Some(String::from_utf8_lossy(&head[..end]).into_owned())
}

/// The contents of a `comm` file without its newline.
pub fn comm(path: &str) -> Option<String> {
    let c = std::fs::read_to_string(path).ok()?;
    Some(c.trim_end_matches('\n').to_string())
}

/// The binding (or, with `last`, the last location) of a process or
/// thread, restricted to the topology; `None` if it vanished, cannot be
/// read or is outside.
pub fn task_set(
    binder: &Binder<'_>,
    id: i32,
    thread: bool,
    last: bool,
) -> Result<Option<CpuSet>, BindError> {
    let flags = if thread {
        CpuBindFlags::THREAD
    } else {
        CpuBindFlags::empty()
    };
    let res = if last {
        binder.process_last_cpu_location(id, flags)
    } else {
        binder.process_cpu_binding(id, flags)
    };
    match res {
        Ok(s) => {
            let s = s & binder.topology().cpuset();
            Ok((!s.is_empty()).then_some(s))
        }
        Err(BindError::NoSuchTask { .. }) | Err(BindError::Permission { .. }) => Ok(None),
        Err(BindError::Io { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The thread ids of process `pid`, sorted (none when it vanished).
pub fn thread_ids(pid: i32) -> Vec<i32> {
    let mut tids: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    tids.sort_unstable();
    tids
}

/// The processes of every user bound to part of the topology (as `wloc
/// ps --uid all` lists them), for the interactive picture.
pub fn bound_processes(topo: &Topology) -> Vec<wloc_draw::html::Process> {
    let binder = Binder::new(topo);
    let all = topo.cpuset().clone();
    pids()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|pid| {
            let name = process_name(pid, false)?;
            let set = task_set(&binder, pid, false, false).ok()??;
            (set != all).then_some(wloc_draw::html::Process {
                pid,
                name,
                cpuset: set,
            })
        })
        .collect()
}

/// A process or thread as lstopo's `--top` shows it: a Misc object
/// named `PID NAME` (threads: `PID NAME TID TNAME`) where it is bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopTask {
    /// Whether this is a thread of the process (only for the message
    /// printed when its binding matches no object).
    pub thread: bool,
    /// The Misc object's name.
    pub name: String,
    /// Its binding, restricted to the topology.
    pub cpuset: CpuSet,
}

/// The name of thread `tid` as hwloc 2.9 reads it: its `comm`, opened
/// for reading and writing (so that threads of another user, whose
/// `comm` only they may write, have no name, as with hwloc); nothing is
/// written.
fn thread_comm(pid: i32, tid: i32) -> String {
    use std::io::Read;
    let mut buf = [0u8; 16];
    let n = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/proc/{pid}/task/{tid}/comm"))
        .and_then(|mut f| f.read(&mut buf))
        .unwrap_or(0);
    let name = &buf[..n.min(15)];
    let end = name
        .iter()
        .position(|&b| b == b'\n' || b == 0)
        .unwrap_or(name.len());
    String::from_utf8_lossy(&name[..end]).into_owned()
}

/// The processes and threads lstopo 2.9's `--top` (`--ps`) shows on the
/// topology of this machine, in `/proc` order: every process (of every
/// user, or of `uid` only) bound to part of the topology, and each thread
/// whose binding differs from its process's (a process's binding is the
/// union of its threads').  Kernel threads (no command line) and tasks
/// whose binding cannot be read are skipped.
pub fn top_tasks(topo: &Topology, uid: Option<u32>) -> Vec<TopTask> {
    let binder = Binder::new(topo);
    let all = topo.cpuset().clone();
    let mut out = Vec::new();
    for pid in pids().unwrap_or_default() {
        if uid.is_some_and(|uid| !owned_by(pid, uid)) {
            continue;
        }
        let Some(pname) = process_name(pid, true) else {
            continue;
        };
        // Threads are looked at only when there are several.
        let tids = thread_ids(pid);
        let mut threads = Vec::new();
        if tids.len() > 1 {
            for tid in tids {
                if let Ok(Some(set)) = task_set(&binder, tid, true, false) {
                    threads.push((tid, thread_comm(pid, tid), set));
                }
            }
        }
        let Ok(Some(set)) = task_set(&binder, pid, false, false) else {
            continue;
        };
        let name = if pname.is_empty() {
            pid.to_string()
        } else {
            format!("{pid} {pname}")
        };
        if set != all {
            out.push(TopTask {
                thread: false,
                name: name.clone(),
                cpuset: set.clone(),
            });
        }
        for (tid, tname, tset) in threads {
            if tset == set {
                continue;
            }
            out.push(TopTask {
                thread: true,
                name: if tname.is_empty() {
                    format!("{name} {tid}")
                } else {
                    format!("{name} {tid} {tname}")
                },
                cpuset: tset,
            });
        }
    }
    out
}

/// Adds each task as a Misc object (subtype `Process`, as lstopo 2.9
/// names threads too) below the object whose cpuset is its binding: a
/// Group is inserted for a binding that no object has but that fits the
/// tree; a binding that crosses objects goes to the smallest object
/// covering it, with lstopo's message on standard error.
pub fn insert_top_tasks(topo: &mut Topology, tasks: &[TopTask]) -> Result<(), ProcessError> {
    use wloc_core::object::{GroupAttr, ObjAttr};
    use wloc_core::{ObjType, Object};
    for t in tasks {
        let set = &t.cpuset & topo.cpuset();
        if set.is_empty() {
            continue;
        }
        let parent = if set == *topo.cpuset() {
            // hwloc merges a Group with the root's set into the root.
            Some(topo.root())
        } else if topo.keeps_type(ObjType::Group) {
            let mut g = Object::new(ObjType::Group, None);
            g.cpuset = Some(set.clone());
            g.complete_cpuset = Some(set.clone());
            // lstopo's kind for these Groups: the largest, so that any
            // other Group with the same set wins a merge.
            g.attr = ObjAttr::Group(GroupAttr {
                kind: u32::MAX,
                ..GroupAttr::default()
            });
            match topo.insert_by_cpuset(g) {
                Ok(Some(i)) => Some(i.id()),
                _ => None,
            }
        } else {
            None
        };
        let parent = match parent {
            Some(p) => p,
            None => {
                let Some(c) = topo.obj_covering_cpuset(&set) else {
                    eprintln!("Failed to insert process `{}'", t.name);
                    continue;
                };
                let (what, lower) = if t.thread {
                    ("Thread", "thread")
                } else {
                    ("Process", "process")
                };
                let covering = topo.obj(c).cpuset.clone().unwrap_or_default();
                eprintln!(
                    "{what} `{}' binding {} doesn't match any object, extended to {} before inserting the {lower} in the topology.",
                    t.name,
                    set.bitmap().to_hwloc_string(),
                    covering.bitmap().to_hwloc_string()
                );
                c
            }
        };
        let mut m = Object::new(ObjType::Misc, None);
        m.name = Some(t.name.clone());
        m.subtype = Some("Process".to_string());
        if let Err(e) = topo.insert_by_parent(parent, m) {
            eprintln!("Failed to insert process `{}': {e}", t.name);
        }
        // Levels and indexes are rebuilt before the next lookup by set.
        topo.finish().map_err(|e| ProcessError::Insert {
            name: t.name.clone(),
            why: e.to_string(),
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uids_are_numbers_or_all() {
        assert_eq!(parse_uid("all").unwrap(), None);
        assert_eq!(parse_uid("1000").unwrap(), Some(1000));
        assert_eq!(
            parse_uid("bob").unwrap_err().to_string(),
            "invalid --uid 'bob' (expected a number or all)"
        );
    }

    #[test]
    fn this_process_is_listed_with_its_name() {
        let me = std::process::id() as i32;
        assert!(pids().unwrap().contains(&me));
        assert!(owned_by(me, current_uid()));
        assert!(process_name(me, false).is_some_and(|n| !n.is_empty()));
    }
}
