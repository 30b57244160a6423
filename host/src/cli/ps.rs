//! `wloc ps`: list the processes (and threads) bound to part of the
//! machine, as hwloc-ps does.

use std::os::unix::fs::MetadataExt;

use clap::Args;
use wloc::console::type_name;
use wloc_bind::{BindError, Binder, CpuBindFlags};
use wloc_core::{CpuSet, ObjId, Topology};
use wloc_locality::query::first_largest_inside;

use super::topology::{Load, LoadErrors, TopologyArgs};

/// Options of `wloc ps`, named as hwloc-ps's.
#[derive(Args, Debug)]
pub struct PsArgs {
    /// Show all processes, including those that are not bound.
    #[arg(short = 'a')]
    pub all: bool,
    /// Only show process PID.
    #[arg(long, value_name = "PID")]
    pub pid: Option<i32>,
    /// Only show processes whose name contains NAME.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Only show processes of the user with this uid, or of all users with `all` (default: the current user).
    #[arg(long, value_name = "UID")]
    pub uid: Option<String>,
    /// Show logical object indexes (the default).
    #[arg(short = 'l', long)]
    pub logical: bool,
    /// Show physical (OS) object indexes.
    #[arg(short = 'p', long)]
    pub physical: bool,
    /// Show CPU sets instead of objects.
    #[arg(short = 'c', long)]
    pub cpuset: bool,
    /// Show a single object containing the whole binding.
    #[arg(long)]
    pub single_ancestor: bool,
    /// Show the threads of processes that have some bound thread.
    #[arg(short = 't', long)]
    pub threads: bool,
    /// Show where tasks last ran instead of their binding.
    #[arg(short = 'e', long = "get-last-cpu-location")]
    pub get_last_cpu_location: bool,
    /// Show only the short process name (`comm`) instead of its command path.
    #[arg(long)]
    pub short_name: bool,
    /// Run CMD with the process id appended (through `/bin/sh -c`) and
    /// append the first line it prints to the process line.
    #[arg(long, value_name = "CMD")]
    pub pid_cmd: Option<String>,
}

/// The longest line hwloc-ps keeps from `--pid-cmd` (its buffer holds
/// 1024 bytes with the terminating NUL).
const PID_CMD_MAX: usize = 1023;

/// Runs `CMD PID` through `/bin/sh -c` (as `popen` does), and returns the
/// first line of its standard output without the newline, at most
/// [`PID_CMD_MAX`] bytes and cut at a NUL byte.  Its standard error goes
/// through; the rest of its output is not read, and it is waited for.
/// A command that cannot start gives an empty string.
fn pid_cmd_output(cmd: &str, pid: i32) -> String {
    use std::io::Read;
    let child = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("{cmd} {pid}"))
        .stdout(std::process::Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        return String::new();
    };
    let mut line = Vec::new();
    if let Some(out) = child.stdout.take() {
        let mut bytes = std::io::BufReader::new(out).bytes();
        while line.len() < PID_CMD_MAX {
            match bytes.next() {
                Some(Ok(b'\n')) | None | Some(Err(_)) => break,
                Some(Ok(b)) => line.push(b),
            }
        }
        // Closing the pipe here, as pclose does, stops a talkative command.
    }
    let _ = child.wait();
    if let Some(nul) = line.iter().position(|&b| b == 0) {
        line.truncate(nul);
    }
    String::from_utf8_lossy(&line).into_owned()
}

/// The smallest object covering `set` (`hwloc_get_obj_covering_cpuset`).
fn covering(topo: &Topology, set: &CpuSet) -> ObjId {
    let mut id = topo.root();
    loop {
        let next = topo.obj(id).children().iter().find(|&&c| {
            topo.obj(c)
                .cpuset
                .as_ref()
                .is_some_and(|cs| set.is_included_in(cs))
        });
        match next {
            Some(&c) => id = c,
            None => return id,
        }
    }
}

/// Names a CPU set as the objects that make it up: `Core:1 PU:4`.
fn objects_string(topo: &Topology, set: &CpuSet, physical: bool, single: bool) -> String {
    let name = |id: ObjId| {
        let o = topo.obj(id);
        let idx = if physical {
            o.os_index
        } else {
            Some(o.logical_index())
        };
        match idx {
            Some(i) => format!("{}:{i}", type_name(o, true)),
            None => type_name(o, true),
        }
    };
    if single {
        return name(covering(topo, set));
    }
    let mut remaining = set.clone();
    let mut parts = Vec::new();
    while let Some(mut id) = first_largest_inside(topo, &remaining) {
        // A cache with a single child says less than that child.
        while topo.obj(id).obj_type.is_cache() && topo.obj(id).children().len() == 1 {
            id = topo.obj(id).children()[0];
        }
        parts.push(name(id));
        let cs = topo.obj(id).cpuset.clone().unwrap_or_default();
        if cs.is_empty() {
            break;
        }
        remaining -= &cs;
    }
    parts.join(" ")
}

/// A process or thread and where it is bound.
struct Task {
    id: i32,
    name: String,
    cpuset: CpuSet,
}

/// The process name hwloc-ps shows: the start of `/proc/PID/cmdline`
/// (first argument, at most 63 bytes), or `comm` with `--short-name`.
/// `None` for kernel threads, which have no command line.
fn process_name(pid: i32, short: bool) -> Option<String> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    if cmdline.is_empty() {
        return None;
    }
    if short {
        if let Some(c) = comm(&format!("/proc/{pid}/comm")) {
            return Some(c);
        }
    }
    let head = &cmdline[..cmdline.len().min(63)];
    let end = head.iter().position(|&b| b == 0).unwrap_or(head.len());
    Some(String::from_utf8_lossy(&head[..end]).into_owned())
}

fn comm(path: &str) -> Option<String> {
    let c = std::fs::read_to_string(path).ok()?;
    Some(c.trim_end_matches('\n').to_string())
}

/// The binding (or last location) of a process or thread, restricted to
/// the topology; `None` if it vanished, cannot be read or is outside.
fn task_set(
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

fn thread_ids(pid: i32) -> Vec<i32> {
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
pub(super) fn bound_processes(topo: &Topology) -> Vec<wloc_draw::html::Process> {
    let binder = Binder::new(topo);
    let all = topo.cpuset().clone();
    let mut pids: Vec<i32> = std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    pids.sort_unstable();
    pids.into_iter()
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
pub(super) struct TopTask {
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
pub(super) fn top_tasks(topo: &Topology, uid: Option<u32>) -> Vec<TopTask> {
    let binder = Binder::new(topo);
    let all = topo.cpuset().clone();
    let mut pids: Vec<i32> = std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    pids.sort_unstable();
    let mut out = Vec::new();
    for pid in pids {
        if let Some(uid) = uid {
            match std::fs::metadata(format!("/proc/{pid}")) {
                Ok(m) if m.uid() == uid => {}
                _ => continue,
            }
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
pub(super) fn insert_top_tasks(topo: &mut Topology, tasks: &[TopTask]) -> Result<(), String> {
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
        topo.finish()
            .map_err(|e| format!("cannot add process `{}' to the topology: {e}", t.name))?;
    }
    Ok(())
}

/// Runs `wloc ps`.
pub fn run(a: &PsArgs) -> super::Result {
    let uid_filter = match a.uid.as_deref() {
        None => {
            // SAFETY: getuid has no preconditions and cannot fail.
            Some(unsafe { libc::getuid() })
        }
        Some("all") => None,
        Some(u) => Some(
            u.parse::<u32>()
                .map_err(|_| format!("invalid --uid '{u}' (expected a number or all)"))?,
        ),
    };
    if let Some(p) = a.pid {
        if p <= 0 {
            return Err(format!("invalid --pid {p}: process ids are positive").into());
        }
    }
    // This machine (or the environment's input), with hwloc's default
    // filters, taken as this system.
    let args = TopologyArgs {
        thissystem: true,
        ..TopologyArgs::default()
    };
    let how = Load::new(
        wloc_core::Topology::new(),
        LoadErrors::Named("the environment"),
    );
    let (topo, _) = args.load(how)?;
    let binder = Binder::new(&topo);
    let topo_set = topo.cpuset().clone();
    let physical = a.physical && !a.logical;
    let mut pids: Vec<i32> = std::fs::read_dir("/proc")
        .map_err(|e| format!("cannot list /proc: {e}"))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    pids.sort_unstable();
    let mut out = String::new();
    for pid in pids {
        if a.pid.is_some_and(|p| p != pid) {
            continue;
        }
        if let Some(uid) = uid_filter {
            match std::fs::metadata(format!("/proc/{pid}")) {
                Ok(m) if m.uid() == uid => {}
                _ => continue,
            }
        }
        let Some(name) = process_name(pid, a.short_name) else {
            continue;
        };
        if let Some(n) = &a.name {
            if !name.contains(n.as_str()) {
                continue;
            }
        }
        let mut threads = Vec::new();
        let mut bound_threads = 0;
        if a.threads {
            let tids = thread_ids(pid);
            if tids.len() > 1 {
                for tid in tids {
                    let Some(set) = task_set(&binder, tid, true, a.get_last_cpu_location)
                        .map_err(|e| e.to_string())?
                    else {
                        continue;
                    };
                    if set != topo_set {
                        bound_threads += 1;
                    }
                    let name = comm(&format!("/proc/{pid}/task/{tid}/comm")).unwrap_or_default();
                    threads.push(Task {
                        id: tid,
                        name,
                        cpuset: set,
                    });
                }
            }
        }
        let Some(set) =
            task_set(&binder, pid, false, a.get_last_cpu_location).map_err(|e| e.to_string())?
        else {
            continue;
        };
        if set == topo_set && bound_threads == 0 && !a.all {
            continue;
        }
        let show = |t: &Task| {
            if a.cpuset {
                t.cpuset.bitmap().to_hwloc_string()
            } else {
                objects_string(&topo, &t.cpuset, physical, a.single_ancestor)
            }
        };
        let proc_task = Task {
            id: pid,
            name,
            cpuset: set,
        };
        let extra = match &a.pid_cmd {
            Some(cmd) => pid_cmd_output(cmd, pid),
            None => String::new(),
        };
        out.push_str(&format!(
            "{}\t{}\t\t{}{}{}\n",
            pid,
            show(&proc_task),
            proc_task.name,
            if extra.is_empty() { "" } else { "\t" },
            extra
        ));
        for t in &threads {
            out.push_str(&format!(" {}\t{}\t\t{}\n", t.id, show(t), t.name));
        }
    }
    super::print(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo(desc: &str) -> Topology {
        wloc_core::synthetic::parse(desc)
            .unwrap()
            .build(Topology::new())
            .unwrap()
    }

    fn cpus(list: &str) -> CpuSet {
        CpuSet::from_bitmap(wloc_core::Bitmap::parse_list(list).unwrap())
    }

    #[test]
    fn sets_are_named_by_their_largest_objects() {
        let t = topo("pack:2 l2:2 core:1 pu:2");
        assert_eq!(objects_string(&t, &cpus("0-7"), false, false), "Machine:0");
        assert_eq!(objects_string(&t, &cpus("4-7"), false, false), "Package:1");
        // A cache with one child gives way to it.
        assert_eq!(objects_string(&t, &cpus("2-3"), false, false), "Core:1");
        assert_eq!(
            objects_string(&t, &cpus("1-3"), false, false),
            "PU:1 Core:1"
        );
        assert_eq!(objects_string(&t, &cpus("1-3"), false, true), "Package:0");
        assert_eq!(objects_string(&t, &cpus("5"), true, false), "PU:5");
    }
}
