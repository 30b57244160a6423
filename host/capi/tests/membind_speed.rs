//! Memory-binding queries as a binding's test suite makes them: no
//! system file is read per call (support and binding queries are answered
//! from memory and one system call), and a million
//! `hwloc_get_membind`/`hwloc_get_area_membind` calls take no longer on
//! this library than on libhwloc (`bench/membind.sh` reports the same
//! comparison).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds `src` (relative to the workspace) against hwloc's headers.
fn program(dir: &Path, src: &str, name: &str) -> PathBuf {
    let exe = dir.join(name);
    support::compile(
        Command::new("gcc")
            .args(["-O2", "-Wall", "-o"])
            .arg(&exe)
            .arg(support::workspace().join(src))
            .arg("-lhwloc"),
    );
    exe
}

/// `exe ARGS` on this library (`lib`) or on Debian's libhwloc (`None`),
/// pinned to one CPU so that both are timed alike.
fn command(exe: &Path, args: &[&str], lib: Option<&Path>) -> Command {
    let mut c = Command::new("taskset");
    c.args(["-c", "0"]).arg(exe).args(args);
    support::clear_topology_env(&mut c);
    c.env_remove("LD_LIBRARY_PATH");
    if let Some(l) = lib {
        c.env("LD_LIBRARY_PATH", l);
    }
    c
}

/// The file-system calls of `exe ROUNDS` (strace's summary), by name.
fn file_calls(exe: &Path, rounds: u32, lib: &Path, dir: &Path) -> Vec<(String, u64)> {
    let log = dir.join(format!("strace-{rounds}"));
    let mut c = Command::new("strace");
    c.args(["-f", "-c", "-U", "name,calls", "-o"]).arg(&log);
    c.args(["-e", "trace=%file,read,pread64,readv,getdents64"]);
    c.arg(exe).arg(rounds.to_string());
    support::clear_topology_env(&mut c);
    c.env("LD_LIBRARY_PATH", lib);
    let st = c.status().expect("strace runs");
    assert!(
        st.success(),
        "{} {rounds} failed under strace: {st}",
        exe.display()
    );
    let text = std::fs::read_to_string(&log).expect("strace summary");
    let mut calls: Vec<(String, u64)> = text
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let name = w.next()?;
            let n = w.next()?.parse().ok()?;
            Some((name.to_string(), n))
        })
        .filter(|(name, _)| name != "total")
        .collect();
    calls.sort();
    calls
}

/// Seconds of each loop (`hwloc_get_membind`, `hwloc_get_area_membind`)
/// of one run.
fn loop_times(c: &mut Command) -> [f64; 2] {
    let o = c.output().expect("benchmark runs");
    assert!(
        o.status.success(),
        "{c:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    let t: Vec<f64> = out
        .split_whitespace()
        .map(|w| w.parse().expect("seconds"))
        .collect();
    [t[0], t[1]]
}

/// The largest best-run ratio (wloc / libhwloc) the test accepts.
const MAX_RATIO: f64 = 1.05;

#[test]
fn membind_queries_read_no_file_and_are_as_fast_as_libhwloc() {
    support::require_c_toolchain();
    support::require(&[("/usr/bin/strace", "strace")]);
    let lib = support::library_dir("membind-speed");

    // No file read per call: the same file-system calls for 10 rounds
    // and for 2000.
    let queries = program(
        &lib,
        "host/capi/tests/c/per_call_queries.c",
        "per_call_queries",
    );
    let few = file_calls(&queries, 10, &lib, &lib);
    let many = file_calls(&queries, 2000, &lib, &lib);
    assert_eq!(
        few, many,
        "file-system calls grow with the number of queries"
    );

    // As fast as libhwloc: alternating runs on one CPU; the best run of
    // each (the least disturbed by the rest of the machine).
    let bench = program(&lib, "bench/capi/membind_queries.c", "membind_queries");
    let calls = "1000000";
    let mut best = [[f64::MAX; 2]; 2];
    // Batches of 7 alternating runs, up to 3 while a ratio is over the
    // bound: a disturbed batch on a shared machine is measured again, a
    // regression stays over it in every batch.
    for _batch in 0..3 {
        for _ in 0..7 {
            for (i, l) in [Some(lib.as_path()), None].into_iter().enumerate() {
                let t = loop_times(&mut command(&bench, &[calls], l));
                for k in 0..2 {
                    best[i][k] = best[i][k].min(t[k]);
                }
            }
        }
        if (0..2).all(|k| best[0][k] / best[1][k] <= MAX_RATIO) {
            break;
        }
    }
    for (k, what) in ["hwloc_get_membind", "hwloc_get_area_membind"]
        .iter()
        .enumerate()
    {
        let ratio = best[0][k] / best[1][k];
        eprintln!(
            "{what}: {calls} calls, wloc {:.3} s, libhwloc {:.3} s, ratio {ratio:.2}",
            best[0][k], best[1][k]
        );
        // The benchmark (bench/membind.sh) measures 0.88-0.96; one best-of-7
        // run on a shared machine has drawn 1.00, so the test allows 5% of
        // noise and still fails on a regression such as the 1.16-1.25 this
        // path once had.
        assert!(
            ratio <= MAX_RATIO,
            "{what} is {ratio:.2}x libhwloc's time (at most {MAX_RATIO} allowed)"
        );
    }
}
