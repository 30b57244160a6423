//! hwloc 2.14.0's own `make check` against this library: its C test
//! programs and its topology script suites (2.14's `lstopo-no-graphics`
//! running on this library), as `tests/data/hwloc-2.14/run.sh` runs them.
//!
//! Every test passes except those listed in
//! `tests/data/hwloc-2.14/known-failures.txt`, each with the reason it
//! fails. The test fails when a test outside the list fails (a
//! regression) and when a listed one passes (the list must shrink with the
//! library's progress, never hide it).

mod support;

use std::collections::BTreeSet;

use std::process::Command;

/// The known failures of the library's suites (`SUITE/NAME` per line, `#`
/// starts a comment; the `tools/` lines are the command's).
fn known_failures() -> BTreeSet<String> {
    let path = support::workspace().join("tests/data/hwloc-2.14/known-failures.txt");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty() && !l.starts_with("tools/"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn hwloc_2_14_make_check() {
    support::require_hwloc_source_build();
    let lib = support::library_dir("hwloc-2.14");
    // Built once per target folder (about 3 minutes on two cores) and
    // reused; one run at a time, as the suite writes into its tree.
    // (The same folder as the command's tool tests, tests/hwloc_2_14_tools.rs.)
    let work = support::hwloc_2_14_work();
    let script = support::workspace().join("tests/data/hwloc-2.14/run.sh");
    let out = Command::new("flock")
        .arg(work.join("lock"))
        .arg("bash")
        .arg(&script)
        .arg(&lib)
        .arg(&work)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("run.sh starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}");
    assert!(
        out.status.success(),
        "run.sh failed ({}): {}\n{}",
        out.status,
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
    let failed: BTreeSet<String> = std::fs::read_to_string(work.join("failed.txt"))
        .expect("run.sh lists the failures")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    let known = known_failures();
    let new: Vec<_> = failed.difference(&known).collect();
    let fixed: Vec<_> = known.difference(&failed).collect();
    assert!(
        new.is_empty() && fixed.is_empty(),
        "failing and not in known-failures.txt: {new:?}\n\
         in known-failures.txt but passing (remove them): {fixed:?}\n\
         logs under {}",
        work.display()
    );
    let total = stdout
        .lines()
        .last()
        .unwrap_or_default()
        .split_whitespace()
        .next()
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0)
        + failed.len();
    assert_eq!(total, 181, "the suite ran {total} tests, not 181: {stdout}");
}
