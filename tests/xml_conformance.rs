//! Runs the conformance suite's XML cases against `wloc ls` at full level.

use crate::common;

#[test]
fn every_xml_case_passes_at_full_level() {
    common::run_conformance("xml", "full");
}
