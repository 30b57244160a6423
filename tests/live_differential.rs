//! Differential test on the machine the tests run on: `wloc ls --of xml`
//! and hwloc 2.9's `lstopo-no-graphics --of xml` must describe the same
//! machine at full level (objects, attributes, I/O, disallowed marks,
//! NUMA distances).

use crate::common;

use std::process::Command;

#[test]
fn this_machine_matches_hwloc_at_full_level() {
    common::require_hwloc();
    let tmp = common::TempDir::new("live");
    let ours = tmp.0.join("wloc.xml");
    let theirs = tmp.0.join("hwloc.xml");
    let o = common::run_wloc([
        "ls".as_ref(),
        "--of".as_ref(),
        "xml".as_ref(),
        ours.as_os_str(),
    ]);
    assert!(
        o.status.success(),
        "wloc ls failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let h = Command::new("lstopo-no-graphics")
        .args(["--of", "xml"])
        .arg(&theirs)
        .env_remove("HWLOC_XMLFILE")
        .env_remove("HWLOC_SYNTHETIC")
        .env_remove("HWLOC_FSROOT")
        .output()
        .expect("lstopo-no-graphics runs");
    assert!(
        h.status.success(),
        "lstopo failed: {}",
        String::from_utf8_lossy(&h.stderr)
    );
    if let Err(e) = common::compare_full(&theirs, &ours) {
        panic!("wloc and hwloc differ on this machine: {e}");
    }
}
