//! `wloc ps` finds processes that `wloc bind` started, and `wloc info`
//! prints what hwloc-info prints.

use crate::common;

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::{run_wloc, wloc};

fn text(o: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The last CPU this test may use.
fn last_cpu() -> u32 {
    *common::allowed_cpus()
        .last()
        .expect("this test may use a CPU") as u32
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
    let want = wloc::model::CpuSet::from_index(cpu)
        .bitmap()
        .to_hwloc_string();
    assert_eq!(text(&o).0, format!("{pid}\t{want}\t\tsleep\n"));
    let o = run_wloc(["ps", "--name", "slee", "-p"]);
    assert!(text(&o).0.contains(&format!("{pid}\t")), "{}", text(&o).0);
    let o = run_wloc(["ps", "--name", "no-such-process-name"]);
    assert_eq!(text(&o).0, "");

    for args in [
        vec![],
        vec!["-p"],
        vec!["-c"],
        vec!["-t"],
        vec!["--short-name"],
        vec!["--pid-cmd", "echo"],
        vec!["--pid-cmd", "echo first; echo second"],
        vec!["--pid-cmd", "printf 'no newline'"],
        vec!["--pid-cmd", "true"],
        vec!["-c", "--pid-cmd", "printf '\\tx\\0y'; :"],
        vec!["--pid-cmd", "head -c 5000 /dev/zero | tr '\\0' x; :"],
    ] {
        let mut w = vec!["ps", "--pid", pid.as_str()];
        w.extend(args.iter().copied());
        let o = run_wloc(&w);
        let h = common::hwloc_2_14_tool("hwloc-ps")
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
    let want = wloc::model::CpuSet::from_index(cpu)
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
    for desc in [
        "pack:2 [numa] l3:1 core:12 pu:2",
        "numa:2 pack:1 l2:2 core:2 pu:1",
        "pack:2 die:2 core:3 pu:2",
        "group:2 pack:2 core:2 pu:2",
    ] {
        let o = run_wloc(["info", "-i", desc]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{desc}: {err}");
        let h = common::hwloc_2_14_tool("hwloc-info")
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
    let desc = "pack:2 [numa(memory=1073741824)] l3:1 l2:2 core:1 pu:2";
    for loc in ["core:1", "pu:5", "l2:3", "pack:1", "numa:1", "machine:0"] {
        let o = run_wloc(["info", "-i", desc, loc]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{loc}: {err}");
        let h = common::hwloc_2_14_tool("hwloc-info")
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
    // hwloc-info reports a location naming nothing and exits 0.
    let o = run_wloc(["info", "-i", desc, "core:99"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o).1.contains("core:99"), "{}", text(&o).1);
}

#[test]
fn info_support_matches_hwloc_on_this_machine() {
    let o = run_wloc(["info", "--support"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let h = common::hwloc_2_14_tool("hwloc-info")
        .arg("--support")
        .output()
        .unwrap();
    let hw = text(&h).0;
    // Exactly hwloc 2.14's flags, in its order (with weighted interleave,
    // which 2.9 predates).
    let ours: Vec<&str> = out.lines().collect();
    let theirs: Vec<&str> = hw.lines().collect();
    assert_eq!(ours, theirs);
    assert!(out.contains("weighted_interleave"));
    // A synthetic topology binds nothing.
    let o = Command::new(wloc())
        .args(["info", "--support", "-i", "pu:2"])
        .env_remove("WLOC_THISSYSTEM")
        .env_remove("HWLOC_THISSYSTEM")
        .output()
        .unwrap();
    assert!(text(&o).0.contains("cpubind:set_thisproc_cpubind = 0\n"));
}

/// `wloc info` with `--ancestors`, `--ancestor`, `--children`,
/// `--descendants`, `--local-memory`, `--best-memattr`, `-n` and
/// `--restrict`, against hwloc-info over conformance cases exported as
/// hwloc 2 XML (so that both read the same gp indexes and infos) and
/// synthetic topologies (silent output, which leaves gp indexes out).
#[test]
fn info_relations_match_hwloc_info() {
    let tmp = common::TempDir::new("info-relations");
    let mut inputs: Vec<String> = Vec::new();
    for case in [
        "24em64t-2n6c2t-pci.xml",
        "64intel64-heteromem.xml",
        "memorysidecaches.xml",
        "16amd64-8n2c-cpusets.xml",
        "fakecpukinds.xml",
        "8intel64-4n2t-memattrs.xml",
        "16-2gr2gr2n2c+misc.xml",
        "192em64t-12gr2n8c2t.xml",
    ] {
        let dst = tmp.0.join(case);
        common::export_case_v2(case, &dst, true);
        inputs.push(dst.to_string_lossy().into_owned());
    }
    let queries: &[&str] = &[
        "pu:3",
        // hwloc's location language: hierarchies, steps, counts, names,
        // and words that name no object.
        "-s pack:1.core:1",
        "-s core:1.pu:1 core:0-1.pu:1",
        "-s pu:even pu:odd",
        "-s pu:1:2 pu:2:3",
        "-s os=eth0 os=sda pci=0000:02:00.0",
        "-s numa:0.pu:1",
        "-s -p core:1-2 pu:3",
        "-s pack pu 0x3 nosuch:1 pack:9.core:0",
        "-s group:1 l3:0.core:1",
        "pack:0.core:1.pu:0",
        "--ancestors pu:3",
        "-s --ancestors pu:3",
        "--ancestor pack pu:5",
        "--ancestor l2 pu:1-2",
        "--ancestor numa pu:0",
        "--ancestor pu pu:1",
        "--ancestor frob pu:0",
        "--children pack:0",
        "-s --children root",
        "--children root",
        "--children pci:0",
        "--children core:0 root pack:0",
        "--descendants pu pack:1",
        "-s --descendants core root",
        "--descendants numa root",
        "-s --descendants numa numa:0",
        "-s --descendants pu numa:1",
        "--descendants memcache pack:0",
        "--descendants pci root",
        "--descendants bridge root",
        "--descendants l1i root",
        "--descendants misc root",
        "--descendants group root",
        "-s --descendants osdev pci:1",
        "-s --ancestors os:0",
        "--ancestors numa:1",
        "-n -s --descendants pu pack:0 pack:1",
        "-n --ancestors pu:1",
        "-n core:0-1",
        "--local-memory pu:0",
        "-s --local-memory core:1",
        "--best-memattr bandwidth pu:0",
        "--best-memattr capacity --local-memory-flags 7 pu:0",
        "--restrict nodeset=0x1 --descendants numa root",
        "--restrict nodeset=0x2 -s --children root",
    ];
    let synthetic: &[&str] = &[
        "pack:2 [numa] l3:1 core:2 pu:2",
        "numa:2 pack:1 l2:2 core:2 pu:2",
        "group:2 pack:2 core:2 pu:2",
        "pack:2 die:2 core:3 pu:1",
    ];
    let silent: &[&str] = &[
        "-s --ancestors pu:3",
        "-s --ancestor pack pu:5",
        "-s --ancestor group pu:5",
        "-s --children root",
        "-s --descendants pu pack:1",
        "-s --descendants numa root",
        "-n -s --children pack:0 pack:1",
        "-s --descendants die root",
        "-s --local-memory pu:3",
    ];
    let mut cases: Vec<Vec<String>> = Vec::new();
    for i in &inputs {
        for q in queries {
            let mut a = vec!["-i".to_string(), i.clone()];
            a.extend(q.split(' ').map(String::from));
            cases.push(a);
        }
    }
    for d in synthetic {
        for q in silent {
            let mut a = vec!["-i".to_string(), d.to_string()];
            a.extend(q.split(' ').map(String::from));
            cases.push(a);
        }
    }
    let mut bad = Vec::new();
    for a in &cases {
        let h = common::hwloc_2_14_tool("hwloc-info")
            .args(a)
            .output()
            .unwrap();
        let w = Command::new(wloc()).arg("info").args(a).output().unwrap();
        let (wout, werr) = text(&w);
        assert!(!werr.contains("panicked"), "{a:?}: {werr}");
        if text(&h).0 != wout {
            bad.push(format!(
                "{a:?}\n  hwloc: {:?}\n  wloc:  {wout:?}",
                text(&h).0
            ));
        }
    }
    println!(
        "{} hwloc-info invocations compared, {} differ",
        cases.len(),
        bad.len()
    );
    for b in &bad {
        println!("{b}");
    }
    assert!(cases.len() >= 300, "only {} invocations", cases.len());
    assert!(
        bad.is_empty(),
        "{} invocations differ (listed above)",
        bad.len()
    );
    // Bad types are reported as hwloc-info reports them.
    let o = run_wloc(["info", "-i", "pu:2", "--ancestor", "frob", "pu:0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("unrecognized --ancestor type frob"));
    let o = run_wloc(["info", "-i", "pu:2", "--descendants", "group", "root"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("unavailable --descendants type group"));
    let o = run_wloc(["info", "-i", "pu:2", "--best-memattr", "nope", "pu:0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("unrecognized memattr nope"));
}

/// A location that names nothing is reported on standard error while the
/// others are shown, and, as with hwloc-info, the command still succeeds.
#[test]
fn info_reports_bad_locations_and_goes_on() {
    let args = ["-i", "pack:2 pu:2", "core:9", "pu:0"];
    let w = run_wloc(["info"].iter().chain(args.iter()));
    let h = common::hwloc_2_14_tool("hwloc-info")
        .args(args)
        .output()
        .unwrap();
    assert_eq!(w.status.success(), h.status.success());
    assert!(w.status.success());
    assert_eq!(text(&w).0, text(&h).0);
    assert!(text(&w).1.contains("core:9"), "{}", text(&w).1);
}
