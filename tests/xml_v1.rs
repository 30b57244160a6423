//! hwloc 1.x XML documents (the per-node topologies of the PlaFRIM fabric
//! recordings) read by wloc as hwloc 2.9 reads them: for every document,
//! wloc's reading must equal hwloc's reading of the same file and the
//! hwloc 2 re-export shipped beside it, at full level.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `*/hwloc/*.xml` files below `dir`, sorted.
fn node_xmls(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for cluster in std::fs::read_dir(dir).unwrap() {
        let hw = cluster.unwrap().path().join("hwloc");
        if let Ok(entries) = std::fs::read_dir(&hw) {
            out.extend(
                entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|e| e == "xml")),
            );
        }
    }
    out.sort();
    out
}

#[test]
fn wloc_reads_hwloc1_documents_as_hwloc2_does() {
    common::require_hwloc();
    let tmp = common::TempDir::new("xml-v1");
    let mut failures = Vec::new();
    let mut count = 0;
    for base in ["plafrim", "plafrim2"] {
        let v1_dir = tmp.0.join(base);
        let v2_dir = tmp.0.join(format!("{base}-xmlv2"));
        common::unpack_fabric(&format!("{base}.txz"), &v1_dir);
        common::unpack_fabric(&format!("{base}-xmlv2.txz"), &v2_dir);
        let inputs = node_xmls(&v1_dir);
        assert!(!inputs.is_empty(), "no hwloc/*.xml in {base}.txz");
        for input in inputs {
            count += 1;
            let rel = input.strip_prefix(&v1_dir).unwrap().to_path_buf();
            let label = format!("{base}/{}", rel.display());
            let text = std::fs::read_to_string(&input).unwrap();
            assert!(
                !text.contains("<topology version="),
                "{label} is not an hwloc 1.x document"
            );
            let ours = tmp.0.join("ours.xml");
            let out = common::run_wloc([
                "ls".as_ref(),
                "-i".as_ref(),
                input.as_os_str(),
                "--of".as_ref(),
                "xml".as_ref(),
                "-f".as_ref(),
                ours.as_os_str(),
            ]);
            if !out.status.success() {
                failures.push(format!(
                    "{label}: wloc failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
                continue;
            }
            let theirs = tmp.0.join("hwloc.xml");
            let h = Command::new("lstopo-no-graphics")
                .arg("-i")
                .arg(&input)
                .args(["--of", "xml", "-"])
                .env("HWLOC_HIDE_ERRORS", "2")
                .output()
                .expect("lstopo-no-graphics runs");
            assert!(
                h.status.success(),
                "hwloc 2.9 cannot read {label}: {}",
                String::from_utf8_lossy(&h.stderr)
            );
            std::fs::write(&theirs, &h.stdout).unwrap();
            if let Err(e) = common::compare_full(&theirs, &ours) {
                failures.push(format!("{label}: differs from hwloc 2.9's reading: {e}"));
            }
            let v2 = v2_dir.join(&rel);
            if let Err(e) = common::compare_full(&v2, &ours) {
                failures.push(format!("{label}: differs from the v2 re-export: {e}"));
            }
        }
    }
    println!("{count} hwloc 1.x documents compared");
    assert!(count >= 240, "expected 240 documents, found {count}");
    assert!(
        failures.is_empty(),
        "{} of {count} documents failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
