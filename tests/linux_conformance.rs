//! Runs the conformance suite's Linux recordings (sysfs/procfs trees)
//! against `wloc ls --if fsroot`, at structure and at full level.

use crate::common;

#[test]
fn every_linux_case_passes_at_structure_level() {
    common::run_conformance("linux", "structure");
}

#[test]
fn every_linux_case_passes_at_full_level() {
    common::run_conformance("linux", "full");
}
