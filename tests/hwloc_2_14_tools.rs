//! hwloc 2.14.0's own tests of its tools (`utils/hwloc/test-hwloc-*.sh`,
//! `utils/lstopo/test-lstopo.sh`) run against the `wloc` command through
//! wrappers named as hwloc's tools (`tests/data/hwloc-2.14/run-tools.sh`).
//!
//! Every script passes except those listed with a reason under `tools/`
//! in `tests/data/hwloc-2.14/known-failures.txt`; the test fails when a
//! script outside the list fails and when a listed one passes.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::common;

#[test]
fn hwloc_2_14_tool_tests() {
    common::require_packages(common::packages::HWLOC_SOURCE_BUILD)
        .unwrap_or_else(|e| panic!("{e}"));
    let data = common::workspace().join("tests/data/hwloc-2.14");
    let known: BTreeSet<String> = std::fs::read_to_string(data.join("known-failures.txt"))
        .expect("known-failures.txt")
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter_map(|l| l.strip_prefix("tools/"))
        .map(str::to_owned)
        .collect();
    // hwloc 2.14 built once per target folder, shared with the library's
    // suite (host/capi/tests/hwloc_2_14_suite.rs) under the same lock.
    let work = common::hwloc_reference::hwloc_2_14_work(Path::new(env!("CARGO_TARGET_TMPDIR")));
    // Kept after the run, for its logs.
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hwloc-2.14-tools");
    let _ = std::fs::remove_dir_all(&out);
    let o = Command::new("flock")
        .arg(work.join("lock"))
        .arg("bash")
        .arg(data.join("run-tools.sh"))
        .arg(common::wloc())
        .arg(&work)
        .arg(&out)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("run-tools.sh starts");
    let stdout = String::from_utf8_lossy(&o.stdout);
    eprintln!("{stdout}");
    assert!(
        o.status.success(),
        "run-tools.sh failed ({}): {stdout}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    let mut ran = 0;
    let mut failed = BTreeSet::new();
    for line in stdout.lines() {
        if let Some((name, verdict)) = line.split_once(": ") {
            ran += 1;
            if verdict == "fail" {
                failed.insert(name.to_owned());
            }
        }
    }
    assert_eq!(ran, 7, "run-tools.sh ran {ran} scripts, not 7: {stdout}");
    let new: Vec<_> = failed.difference(&known).collect();
    let fixed: Vec<_> = known.difference(&failed).collect();
    assert!(
        new.is_empty() && fixed.is_empty(),
        "failing and not in known-failures.txt: {new:?}\n\
         listed but passing (remove them): {fixed:?}\nlogs in {}",
        out.display()
    );
}
