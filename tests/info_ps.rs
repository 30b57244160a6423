//! `wloc ps` finds processes that `wloc bind` started, and `wloc info`
//! prints what hwloc-info prints.

mod common;

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::{require_hwloc, run_wloc, wloc};

fn text(o: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The last CPU this test may use.
fn last_cpu() -> u32 {
    // SAFETY: cpu_set_t is plain data; the call fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
            0
        );
        (0..libc::CPU_SETSIZE as usize)
            .rfind(|&i| libc::CPU_ISSET(i, &set))
            .unwrap() as u32
    }
}

/// Starts `sleep` through `wloc bind` on one PU and waits until the
/// command runs (`wloc` has replaced itself by `sleep`).
// The caller kills and waits for the child (`stop`); an assertion failing
// here leaves a `sleep 30` behind, which ends by itself.
#[allow(clippy::zombie_processes)]
fn bound_sleep(cpu: u32) -> Child {
    let child = Command::new(wloc())
        .args(["bind", "-p", &format!("pu:{cpu}"), "--", "sleep", "30"])
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        let comm =
            std::fs::read_to_string(format!("/proc/{}/comm", child.id())).unwrap_or_default();
        if comm.trim() == "sleep" {
            return child;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "sleep did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stop(mut c: Child) {
    let _ = c.kill();
    let _ = c.wait();
}

#[test]
fn ps_finds_a_process_that_bind_started() {
    let cpu = last_cpu();
    let child = bound_sleep(cpu);
    let pid = child.id().to_string();

    let o = run_wloc(["ps"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with(&format!("{pid}\t")))
        .unwrap_or_else(|| panic!("pid {pid} not listed:\n{out}"));
    assert!(line.ends_with("\t\tsleep"), "{line}");

    let o = run_wloc(["ps", "-c", "--pid", &pid]);
    let want = wloc::core::CpuSet::from_index(cpu)
        .bitmap()
        .to_hwloc_string();
    assert_eq!(text(&o).0, format!("{pid}\t{want}\t\tsleep\n"));
    let o = run_wloc(["ps", "--name", "slee", "-p"]);
    assert!(text(&o).0.contains(&format!("{pid}\t")), "{}", text(&o).0);
    let o = run_wloc(["ps", "--name", "no-such-process-name"]);
    assert_eq!(text(&o).0, "");

    require_hwloc();
    for args in [
        vec![],
        vec!["-p"],
        vec!["-c"],
        vec!["-t"],
        vec!["--short-name"],
    ] {
        let mut w = vec!["ps", "--pid", pid.as_str()];
        w.extend(args.iter().copied());
        let o = run_wloc(&w);
        let h = Command::new("hwloc-ps")
            .args(["--pid", &pid])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(text(&o).0, text(&h).0, "{w:?}");
    }
    stop(child);
}

#[test]
fn ps_shows_bound_threads() {
    // This test process: bind one of its threads, then list threads.
    let cpu = last_cpu();
    let (tx, rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let t = std::thread::spawn(move || {
        // SAFETY: cpu_set_t is plain data and gettid has no preconditions.
        let tid = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu as usize, &mut set);
            assert_eq!(
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
                0
            );
            libc::syscall(libc::SYS_gettid) as i32
        };
        tx.send(tid).unwrap();
        let _ = done_rx.recv();
    });
    let tid = rx.recv().unwrap();
    let pid = std::process::id().to_string();
    let o = run_wloc(["ps", "-t", "-c", "--pid", &pid]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let want = wloc::core::CpuSet::from_index(cpu)
        .bitmap()
        .to_hwloc_string();
    assert!(out.starts_with(&format!("{pid}\t")), "{out}");
    assert!(out.contains(&format!("\n {tid}\t{want}\t\t")), "{out}");
    // Without -t an unbound process with a bound thread is not shown.
    let o = run_wloc(["ps", "--pid", &pid]);
    if last_cpu_is_not_alone() {
        assert_eq!(text(&o).0, "");
    }
    done_tx.send(()).unwrap();
    t.join().unwrap();
}

/// Whether the machine has more than one PU (else everything is "bound").
fn last_cpu_is_not_alone() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() > 1)
}

#[test]
fn ps_rejects_bad_arguments() {
    let o = run_wloc(["ps", "--uid", "someone"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("invalid --uid 'someone'"));
    let o = run_wloc(["ps", "--pid", "-3"]);
    assert_ne!(o.status.code(), Some(0));
}

#[test]
fn info_lists_levels_like_hwloc_info() {
    require_hwloc();
    for desc in [
        "pack:2 [numa] l3:1 core:12 pu:2",
        "numa:2 pack:1 l2:2 core:2 pu:1",
        "pack:2 die:2 core:3 pu:2",
        "group:2 pack:2 core:2 pu:2",
    ] {
        let o = run_wloc(["info", "-i", desc]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{desc}: {err}");
        let h = Command::new("hwloc-info")
            .args(["-i", desc])
            .output()
            .unwrap();
        assert_eq!(out, text(&h).0, "{desc}");
        let o = run_wloc(["info", "-i", desc, "--topology"]);
        assert_eq!(text(&o).0, out);
    }
}

#[test]
fn info_describes_objects_like_hwloc_info() {
    require_hwloc();
    let desc = "pack:2 [numa(memory=1073741824)] l3:1 l2:2 core:1 pu:2";
    for loc in ["core:1", "pu:5", "l2:3", "pack:1", "numa:1", "machine:0"] {
        let o = run_wloc(["info", "-i", desc, loc]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{loc}: {err}");
        let h = Command::new("hwloc-info")
            .args(["-i", desc, loc])
            .output()
            .unwrap();
        let hw = text(&h).0;
        // gp indexes are numbering choices; hwloc adds the backend's infos.
        let keep = |s: &str| {
            s.lines()
                .filter(|l| !l.starts_with(" gp index") && !l.starts_with(" info "))
                .map(|l| format!("{l}\n"))
                .collect::<String>()
        };
        assert_eq!(keep(&out), keep(&hw), "{loc}");
    }
    let o = run_wloc(["info", "-i", desc, "-s", "pu:1-2"]);
    assert_eq!(text(&o).0, "PU:1\nPU:2\n");
    let o = run_wloc(["info", "-i", desc, "core:99"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("core:99"), "{}", text(&o).1);
}

#[test]
fn info_support_matches_hwloc_on_this_machine() {
    require_hwloc();
    let o = run_wloc(["info", "--support"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let h = Command::new("hwloc-info")
        .arg("--support")
        .output()
        .unwrap();
    let hw = text(&h).0;
    // hwloc 2.9 predates weighted interleave.
    let ours: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with("membind:weighted_interleave"))
        .collect();
    let theirs: Vec<&str> = hw.lines().collect();
    assert_eq!(ours, theirs);
    assert!(out.contains("membind:weighted_interleave_membind = "));
    // A synthetic topology binds nothing.
    let o = Command::new(wloc())
        .args(["info", "--support", "-i", "pu:2"])
        .env_remove("WLOC_THISSYSTEM")
        .env_remove("HWLOC_THISSYSTEM")
        .output()
        .unwrap();
    assert!(text(&o).0.contains("cpubind:set_thisproc_cpubind = 0\n"));
}
