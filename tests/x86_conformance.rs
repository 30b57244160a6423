//! Runs the conformance suite's x86 CPUID dumps against `wloc ls --if cpuid`
//! at full level.

use crate::common;

#[test]
fn every_x86_case_passes_at_full_level() {
    common::run_conformance("x86", "full");
}
