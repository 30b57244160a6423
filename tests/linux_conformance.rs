//! Runs the conformance suite's Linux recordings (sysfs/procfs trees)
//! against `wloc ls --if fsroot`, at structure and at full level.

mod common;

use std::process::Command;

fn run(level: &str) {
    let conf = common::conformance();
    let out = Command::new("python3")
        .arg(conf.join("run.py"))
        .arg("--tool")
        .arg(common::wloc())
        .args(["--level", level])
        .arg(conf.join("linux"))
        .output()
        .expect("python3 runs the conformance runner");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or("");
    assert!(
        out.status.success() && last.ends_with(" 0 failed"),
        "conformance linux cases failed at {level} level:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_linux_case_passes_at_structure_level() {
    run("structure");
}

#[test]
fn every_linux_case_passes_at_full_level() {
    run("full");
}
