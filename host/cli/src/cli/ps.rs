//! `wloc ps`: list the processes (and threads) bound to part of the
//! machine, as hwloc-ps does.

use clap::Args;
use wloc::console::type_name;
use wloc::processes::{
    comm, current_uid, owned_by, parse_uid, pids, process_name, task_set, thread_ids,
};
use wloc_bind::Binder;
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

/// Runs `wloc ps`.
pub fn run(d: &wloc_discovery::Discovery, a: &PsArgs) -> super::Result {
    let uid_filter = match a.uid.as_deref() {
        None => Some(current_uid()),
        Some(u) => parse_uid(u)?,
    };
    if let Some(p) = a.pid
        && p <= 0
    {
        return Err(format!("invalid --pid {p}: process ids are positive").into());
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
    let (topo, _) = args.load(d, how)?;
    let binder = Binder::new(&topo);
    let topo_set = topo.cpuset().clone();
    let physical = a.physical && !a.logical;
    let mut out = String::new();
    for pid in pids()? {
        if a.pid.is_some_and(|p| p != pid) {
            continue;
        }
        if uid_filter.is_some_and(|uid| !owned_by(pid, uid)) {
            continue;
        }
        let Some(name) = process_name(pid, a.short_name) else {
            continue;
        };
        if let Some(n) = &a.name
            && !name.contains(n.as_str())
        {
            continue;
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
