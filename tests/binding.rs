//! Binding really binds: commands started by `wloc bind`, this test's own
//! threads bound through the `wloc-bind` library, and memory policies,
//! each checked with the kernel's own view (`/proc/PID/status`,
//! `sched_getaffinity`, `get_mempolicy`).  Outputs are compared with
//! hwloc-bind where it is installed.

use crate::common;

use std::process::Command;
use std::sync::OnceLock;

use common::{run_wloc, wloc};
use wloc::model::{CpuSet, NodeSet, Topology};
use wloc_bind::{BindError, Binder, CpuBindFlags, MemBindFlags, MemPolicy};

const MPOL_DEFAULT: i32 = 0;
const MPOL_PREFERRED: i32 = 1;
const MPOL_BIND: i32 = 2;
const MPOL_INTERLEAVE: i32 = 3;
const MPOL_LOCAL: i32 = 4;
const MPOL_PREFERRED_MANY: i32 = 5;
const MPOL_WEIGHTED_INTERLEAVE: i32 = 6;
const MPOL_F_ADDR: libc::c_ulong = 2;

fn text(o: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// This machine's topology, discovered once.
fn topo() -> &'static Topology {
    static T: OnceLock<Topology> = OnceLock::new();
    T.get_or_init(|| {
        wloc_discovery::Discovery::new(None)
            .load(&wloc_discovery::input::Source::ThisSystem, Topology::new())
            .expect("discover this machine")
    })
}

/// The memory policy of the calling thread, or of the page at `addr`,
/// from the kernel: mode and node mask.
fn kernel_policy(addr: *const u8) -> (i32, u64) {
    let mut mode: libc::c_int = -1;
    let mut mask = [0 as libc::c_ulong; 16];
    let flags = if addr.is_null() { 0 } else { MPOL_F_ADDR };
    // SAFETY: buffers are writable and sized as passed.
    let r = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut mode as *mut libc::c_int,
            mask.as_mut_ptr(),
            (mask.len() * 64) as libc::c_ulong,
            addr,
            flags,
        )
    };
    assert_eq!(r, 0, "get_mempolicy: {}", std::io::Error::last_os_error());
    (mode, mask[0])
}

/// The `Cpus_allowed_list` line of a status file.
fn cpus_allowed(status: &str) -> String {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap_or_else(|| panic!("no Cpus_allowed_list in {status}"))
        .trim()
        .to_string()
}

#[test]
fn bound_command_sees_its_mask() {
    let o = run_wloc(["bind", "pu:0", "--", "cat", "/proc/self/status"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let mine = cpus_allowed(&out);
    assert!(!mine.contains(',') && !mine.contains('-'), "one PU: {mine}");
    // The first PU of the topology, in OS numbering.
    let first = topo().cpuset().first().unwrap();
    assert_eq!(mine, first.to_string());
    {
        common::require_hwloc();
        let h = Command::new("hwloc-bind")
            .args(["pu:0", "--", "cat", "/proc/self/status"])
            .output()
            .unwrap();
        assert_eq!(mine, cpus_allowed(&String::from_utf8_lossy(&h.stdout)));
    }
    // hwloc-bind also takes the command without `--`, and physical indexes.
    let last = *common::allowed_cpus().last().unwrap();
    let o = run_wloc([
        "bind",
        "-p",
        &format!("pu:{last}"),
        "cat",
        "/proc/self/status",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(cpus_allowed(&out), last.to_string());
}

#[test]
fn single_keeps_one_pu_and_get_reports_it() {
    let o = run_wloc([
        "bind",
        "--single",
        "machine:0",
        "--",
        "cat",
        "/proc/self/status",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let first = topo().cpuset().first().unwrap();
    assert_eq!(cpus_allowed(&out), first.to_string());

    // `--get` and `-e` inside a bound command, as hwloc-bind prints them.
    let w = wloc();
    let w = w.to_str().unwrap();
    let last = *common::allowed_cpus().last().unwrap();
    let pu = format!("pu:{last}");
    let expect = CpuSet::from_index(last as u32).bitmap().to_hwloc_string();
    for (args, want) in [
        (vec!["--get"], expect.clone()),
        (vec!["-e"], expect.clone()),
        (vec!["--get", "--taskset"], format!("{:#x}", 1u64 << last)),
        (vec!["--get", "--nodeset"], "0x00000001".to_string()),
    ] {
        let mut cmd = vec!["bind", "-p", pu.as_str(), "--", w, "bind"];
        cmd.extend(args.iter().copied());
        let o = run_wloc(&cmd);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{cmd:?}: {err}");
        if topo().nodeset().weight() == Some(1) || !args.contains(&"--nodeset") {
            assert_eq!(out.trim(), want, "{cmd:?}");
        }
        {
            common::require_hwloc();
            let h = Command::new("hwloc-bind")
                .args(["-p", &pu, "--", "hwloc-bind"])
                .args(&args)
                .output()
                .unwrap();
            assert_eq!(out, String::from_utf8_lossy(&h.stdout), "{cmd:?}");
        }
    }
}

#[test]
fn binds_another_process_and_reads_it_back() {
    let mut child = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = child.id().to_string();
    let last = *common::allowed_cpus().last().unwrap();
    let o = run_wloc(["bind", "--pid", &pid, "-p", &format!("pu:{last}")]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    assert_eq!(cpus_allowed(&status), last.to_string());
    let o = run_wloc(["bind", "--pid", &pid, "--get", "--cof", "list"]);
    assert_eq!(text(&o).0.trim(), last.to_string());
    let o = run_wloc(["bind", "--tid", &pid, "--get", "--cof", "list"]);
    assert_eq!(text(&o).0.trim(), last.to_string());
    let o = run_wloc(["bind", "--pid", &pid, "-e", "--cof", "list"]);
    assert!(o.status.success(), "{}", text(&o).1);
    // Through the library, every thread of the process.
    let b = Binder::new(topo());
    let p: i32 = pid.parse().unwrap();
    b.bind_process_cpu(p, topo().cpuset(), CpuBindFlags::empty())
        .unwrap();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    assert_eq!(
        cpus_allowed(&status),
        topo().cpuset().bitmap().to_list_string()
    );
    assert_eq!(
        b.process_cpu_binding(p, CpuBindFlags::empty()).unwrap(),
        *topo().cpuset()
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn binds_this_thread() {
    let b = Binder::new(topo());
    for cpu in common::allowed_cpus() {
        std::thread::spawn(move || {
            let b = Binder::new(topo());
            b.bind_cpu(&CpuSet::from_index(cpu as u32), CpuBindFlags::THREAD)
                .unwrap();
            assert_eq!(common::allowed_cpus(), vec![cpu]);
            assert_eq!(
                b.cpu_binding(CpuBindFlags::THREAD).unwrap(),
                CpuSet::from_index(cpu as u32)
            );
            assert_eq!(
                b.last_cpu_location(CpuBindFlags::THREAD).unwrap(),
                CpuSet::from_index(cpu as u32)
            );
            // SAFETY: gettid has no preconditions.
            let tid = unsafe { libc::syscall(libc::SYS_gettid) } as i32;
            assert_eq!(
                b.thread_cpu_binding(tid).unwrap(),
                CpuSet::from_index(cpu as u32)
            );
            assert_eq!(
                b.thread_last_cpu_location(tid).unwrap(),
                CpuSet::from_index(cpu as u32)
            );
        })
        .join()
        .unwrap();
    }
    // The test's main thread was not touched.
    assert_eq!(
        b.cpu_binding(CpuBindFlags::THREAD).unwrap().weight(),
        Some(common::allowed_cpus().len() as u32)
    );
}

#[test]
fn memory_policies_reach_the_kernel() {
    let node = topo().nodeset().first().unwrap();
    let nodes = NodeSet::from_index(node);
    let bit = 1u64 << node;
    // Each thread has its own policy: use fresh ones.
    std::thread::spawn(move || {
        let b = Binder::new(topo());
        let support = b.support();
        b.bind_memory(&nodes, MemPolicy::Bind, MemBindFlags::STRICT)
            .unwrap();
        assert_eq!(kernel_policy(std::ptr::null()), (MPOL_BIND, bit));
        assert_eq!(
            b.memory_binding(MemBindFlags::empty()).unwrap(),
            (nodes.clone(), MemPolicy::Bind)
        );

        b.bind_memory(&nodes, MemPolicy::Bind, MemBindFlags::empty())
            .unwrap();
        let (mode, mask) = kernel_policy(std::ptr::null());
        if support.preferred_many {
            assert_eq!((mode, mask), (MPOL_PREFERRED_MANY, bit));
        } else {
            assert_eq!((mode, mask), (MPOL_PREFERRED, bit));
        }

        b.bind_memory(&nodes, MemPolicy::Interleave, MemBindFlags::empty())
            .unwrap();
        assert_eq!(kernel_policy(std::ptr::null()), (MPOL_INTERLEAVE, bit));
        assert_eq!(
            b.memory_binding(MemBindFlags::empty()).unwrap(),
            (nodes.clone(), MemPolicy::Interleave)
        );

        let r = b.bind_memory(&nodes, MemPolicy::WeightedInterleave, MemBindFlags::empty());
        if support.weighted_interleave {
            r.unwrap();
            assert_eq!(
                kernel_policy(std::ptr::null()),
                (MPOL_WEIGHTED_INTERLEAVE, bit)
            );
        } else {
            assert!(matches!(r, Err(BindError::Unsupported { .. })), "{r:?}");
        }

        // A CPU set stands for its local nodes.
        b.bind_memory(
            topo().cpuset(),
            MemPolicy::FirstTouch,
            MemBindFlags::empty(),
        )
        .unwrap();
        assert_eq!(kernel_policy(std::ptr::null()).0, MPOL_LOCAL);
        assert_eq!(
            b.memory_binding(MemBindFlags::empty()).unwrap().1,
            MemPolicy::FirstTouch
        );
        b.bind_memory(&nodes, MemPolicy::Default, MemBindFlags::MIGRATE)
            .unwrap();
        assert_eq!(kernel_policy(std::ptr::null()).0, MPOL_DEFAULT);

        assert!(matches!(
            b.bind_memory(&nodes, MemPolicy::NextTouch, MemBindFlags::empty()),
            Err(BindError::Unsupported { .. })
        ));
        assert!(matches!(
            b.bind_memory(&nodes, MemPolicy::Bind, MemBindFlags::PROCESS),
            Err(BindError::Unsupported { .. })
        ));
    })
    .join()
    .unwrap();
}

#[test]
fn memory_areas_and_allocations_are_bound() {
    let node = topo().nodeset().first().unwrap();
    let nodes = NodeSet::from_index(node);
    let bit = 1u64 << node;
    let b = Binder::new(topo());
    let mut mem = b
        .allocate_bound_memory(1 << 20, &nodes, MemPolicy::Bind, MemBindFlags::STRICT)
        .unwrap();
    assert!(mem.is_bound());
    assert_eq!(kernel_policy(mem.as_slice().as_ptr()), (MPOL_BIND, bit));
    mem.as_mut_slice().fill(1);
    assert_eq!(
        b.area_memory_binding(mem.as_slice(), MemBindFlags::STRICT)
            .unwrap(),
        (nodes.clone(), MemPolicy::Bind)
    );
    assert_eq!(
        b.area_memory_location(mem.as_slice(), MemBindFlags::empty())
            .unwrap(),
        nodes
    );

    let mut other = b
        .allocate_bound_memory(
            1 << 16,
            &nodes,
            MemPolicy::FirstTouch,
            MemBindFlags::empty(),
        )
        .unwrap();
    other.as_mut_slice()[0] = 1;
    b.bind_memory_area(
        other.as_slice(),
        &nodes,
        MemPolicy::Interleave,
        MemBindFlags::MIGRATE | MemBindFlags::STRICT,
    )
    .unwrap();
    assert_eq!(
        kernel_policy(other.as_slice().as_ptr()),
        (MPOL_INTERLEAVE, bit)
    );
    assert_eq!(b.migrate_process_memory(None, &nodes, &nodes).unwrap(), 0);
}

#[test]
fn bad_sets_and_ids_are_refused() {
    let b = Binder::new(topo());
    let e = b
        .bind_cpu(&CpuSet::new(), CpuBindFlags::THREAD)
        .unwrap_err();
    assert!(matches!(e, BindError::InvalidSet { .. }), "{e}");
    assert!(e.to_string().contains("empty"), "{e}");
    let e = b
        .bind_cpu(&CpuSet::from_index(100_000), CpuBindFlags::THREAD)
        .unwrap_err();
    assert!(e.to_string().contains("has no PU 100000"), "{e}");
    let missing = topo().complete_nodeset().last().unwrap() + 1;
    let e = b
        .bind_memory(
            &NodeSet::from_index(missing),
            MemPolicy::Bind,
            MemBindFlags::empty(),
        )
        .unwrap_err();
    assert!(matches!(e, BindError::InvalidSet { .. }), "{e}");
    assert!(
        e.to_string().contains(&format!("no NUMA node {missing}")),
        "{e}"
    );
    let e = b
        .allocate_bound_memory(
            4096,
            &NodeSet::new(),
            MemPolicy::Bind,
            MemBindFlags::empty(),
        )
        .unwrap_err();
    assert!(matches!(e, BindError::InvalidSet { .. }), "{e}");
    let e = b
        .bind_process_cpu(i32::MAX - 1, topo().cpuset(), CpuBindFlags::empty())
        .unwrap_err();
    assert!(matches!(e, BindError::NoSuchTask { .. }), "{e}");

    let o = run_wloc(["bind", "--pid", "2147483646", "pu:0"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no process or thread with id 2147483646"),
        "{err}"
    );
    let o = run_wloc(["bind", "--pid", "x1", "pu:0"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run_wloc([
        "bind",
        "--membind",
        "--mempolicy",
        "nexttouch",
        "numa:0",
        "--",
        "true",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("unsupported: Linux has no next-touch policy"),
        "{err}"
    );
    let o = run_wloc(["bind", "--mempolicy", "sideways", "pu:0", "--", "true"]);
    assert!(
        text(&o)
            .1
            .contains("unknown memory binding policy 'sideways'")
    );
    let o = run_wloc(["bind", "pu:0", "--", "/nonexistent/command"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.contains("cannot run '/nonexistent/command'"), "{err}");
    let o = run_wloc(["bind", "--get", "pu:0"]);
    assert!(text(&o).1.contains("at the same time"));
}

#[test]
fn others_processes_need_permission() {
    // SAFETY: getuid has no preconditions.
    let root = unsafe { libc::getuid() } == 0;
    let mut cmd = if root {
        // Drop to an unprivileged user, if setpriv can.
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
        c.arg(wloc());
        c
    } else {
        Command::new(wloc())
    };
    cmd.args(["bind", "--pid", "1", "pu:0"]);
    // The unprivileged user has no home for the component cache.
    cmd.env("HOME", std::env::temp_dir());
    let o = match cmd.output() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipping: cannot run setpriv: {e}");
            return;
        }
    };
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("cannot set the CPU binding of process 1: permission denied"),
        "{err}"
    );
}

#[test]
fn membind_policy_is_inherited_by_the_command() {
    let w = wloc();
    let w = w.to_str().unwrap();
    for (policy, name) in [("interleave", "interleave"), ("bind", "bind")] {
        let o = run_wloc([
            "bind",
            "--membind",
            "numa:0",
            "--mempolicy",
            policy,
            "--",
            w,
            "bind",
            "--get",
            "--membind",
            "--nodeset",
        ]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{err}");
        let first = NodeSet::from_index(topo().nodeset().first().unwrap());
        assert_eq!(
            out,
            format!("{} ({name})\n", first.bitmap().to_hwloc_string())
        );
        {
            common::require_hwloc();
            let h = Command::new("hwloc-bind")
                .args([
                    "--membind",
                    "node:0",
                    "--mempolicy",
                    policy,
                    "--",
                    "hwloc-bind",
                ])
                .args(["--get", "--membind", "--nodeset"])
                .output()
                .unwrap();
            assert_eq!(out, String::from_utf8_lossy(&h.stdout));
        }
    }
    // Strict binding is MPOL_BIND, seen by the command's own get_mempolicy.
    let o = run_wloc([
        "bind",
        "--strict",
        "--membind",
        "numa:0",
        "--",
        "cat",
        "/proc/self/status",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
}

#[test]
fn foreign_topologies_bind_only_when_declared_this_system() {
    let n = common::allowed_cpus().len();
    let desc = format!("pu:{n}");
    let o = Command::new(wloc())
        .args(["bind", "-i", &desc, "pu:0", "--", "true"])
        .env_remove("WLOC_THISSYSTEM")
        .env_remove("HWLOC_THISSYSTEM")
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("does not describe this system"), "{err}");
    if common::allowed_cpus() == (0..n).collect::<Vec<_>>() {
        let o = run_wloc([
            "bind",
            "-i",
            &desc,
            "--thissystem",
            "pu:0",
            "--",
            "cat",
            "/proc/self/status",
        ]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{err}");
        assert_eq!(cpus_allowed(&out), "0");
        let o = Command::new(wloc())
            .args(["bind", "-i", &desc, "pu:0", "--", "true"])
            .env("WLOC_THISSYSTEM", "1")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o).1);
    }
}
