//! hwloc 2.9.0's own C tests of its API (tests/data/hwloc-2.9), built
//! against the system's hwloc 2.9 headers and run against this library
//! as `libhwloc.so.15`.

mod support;

use std::process::Command;

#[test]
fn hwloc_2_9_c_tests_pass_against_this_library() {
    support::require_c_toolchain();
    let lib = support::library_dir("ctests");
    let work = lib.join("work");
    let kit = support::workspace().join("tests/data/hwloc-2.9");
    let out = Command::new("bash")
        .arg(kit.join("run.sh"))
        .arg(&lib)
        .arg(&work)
        .output()
        .expect("run.sh runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = stdout.lines().last().unwrap_or_default().to_string();
    let logs: String = std::fs::read_dir(&work)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            (n.ends_with(".log") || n.ends_with(".build"))
                && summary.contains(n.trim_end_matches(".log").trim_end_matches(".build"))
        })
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(15).collect();
            format!(
                "--- {}\n{}\n",
                e.path().display(),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            )
        })
        .collect();
    assert!(
        summary.starts_with("hwloc 2.9 C tests:") && !summary.contains("failing"),
        "{summary}\n{logs}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // All 30 ran (none skipped with 77 would still count as passed: say so).
    assert!(summary.contains("30 of 30 pass"), "{summary}");
}
