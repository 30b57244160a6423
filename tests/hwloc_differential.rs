//! Differential tests against Debian's hwloc 2.9: hwloc must read what wloc
//! exports as hwloc 2 XML, and describe the same machine.

use crate::common;

use std::process::Command;

/// Each conformance XML document is exported by wloc as v2 XML, read back by
/// `lstopo-no-graphics`, and hwloc's re-export must equal ours at full level.
#[test]
fn hwloc_reads_our_v2_exports_of_every_xml_case() {
    common::require_hwloc();
    let tmp = common::TempDir::new("hwloc-diff");
    let mut failures = Vec::new();
    let mut count = 0;
    let inputs = common::conformance_xmls();
    for input in inputs {
        count += 1;
        let name = input.file_name().unwrap().to_string_lossy().to_string();
        let ours = tmp.0.join(format!("{name}.wloc-v2.xml"));
        let theirs = tmp.0.join(format!("{name}.hwloc.xml"));
        let out = common::export_v2(&input, &ours, false);
        if !out.status.success() {
            failures.push(format!(
                "{name}: wloc failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        let h = Command::new("lstopo-no-graphics")
            .arg("-i")
            .arg(&ours)
            .args(["--if", "xml", "--of", "xml", "--whole-io"])
            .arg(&theirs)
            .env("HWLOC_HIDE_ERRORS", "2")
            .output()
            .expect("lstopo-no-graphics runs");
        if !h.status.success() {
            failures.push(format!(
                "{name}: hwloc 2.9 rejected our v2 export: {}",
                String::from_utf8_lossy(&h.stderr)
            ));
            continue;
        }
        if let Err(e) = common::compare_full(&ours, &theirs) {
            failures.push(format!("{name}: hwloc's re-export differs: {e}"));
        }
    }
    assert!(
        count >= 23,
        "expected the conformance XML documents, found {count}"
    );
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
