//! Runs the conformance suite's XML cases against `wloc ls` at full level.

mod common;

use std::process::Command;

#[test]
fn every_xml_case_passes_at_full_level() {
    let conf = common::conformance();
    let out = Command::new("python3")
        .arg(conf.join("run.py"))
        .arg("--tool")
        .arg(common::wloc())
        .args(["--level", "full"])
        .arg(conf.join("xml"))
        .output()
        .expect("python3 runs the conformance runner");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or("");
    assert!(
        out.status.success() && last.ends_with(" 0 failed"),
        "conformance xml cases failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
