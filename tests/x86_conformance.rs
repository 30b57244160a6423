//! Runs the conformance suite's x86 CPUID dumps against `wloc ls --if cpuid`
//! at full level.

mod common;

use std::process::Command;

#[test]
fn every_x86_case_passes_at_full_level() {
    let conf = common::conformance();
    let out = Command::new("python3")
        .arg(conf.join("run.py"))
        .arg("--tool")
        .arg(common::wloc())
        .args(["--level", "full"])
        .arg(conf.join("x86"))
        .output()
        .expect("python3 runs the conformance runner");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or("");
    assert!(
        out.status.success() && last.ends_with(" 0 failed"),
        "conformance x86 cases failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
