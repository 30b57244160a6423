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
    // All 28 ran (none skipped with 77 would still count as passed: say
    // so); the kit's hwloc_api_version wants 2.9's API number and its
    // hwloc_synthetic 2.9's synthetic memory (the kit's run.sh says why).
    assert!(summary.contains("28 of 28 pass"), "{summary}");
}

/// hwloc's C tests under valgrind report no error (`--error-exitcode`):
/// objects fully initialised, no read of freed or foreign memory. Most of
/// them discover this machine, through the discovery module, which used
/// to crash under valgrind in rustix's aux-vector reading (rustix issue
/// 1559). The one suppression (`valgrind.supp`) is of a dependency's
/// compiled code, not the library's. `hwloc_object_userdata` is left out:
/// it exports a buffer it leaves uninitialised on purpose ("we want binary
/// data"), which valgrind reports wherever it is read, in libhwloc too.
/// All 27 take about 100 s under valgrind on two cores.
#[test]
fn hwloc_2_9_c_tests_run_clean_under_valgrind() {
    support::require_c_toolchain();
    support::require(&[("/usr/bin/valgrind", "valgrind")]);
    let lib = support::library_dir("ctests-valgrind");
    let work = lib.join("work");
    let kit = support::workspace().join("tests/data/hwloc-2.9");
    let supp = support::workspace().join("host/capi/tests/valgrind.supp");
    let tests: Vec<String> = std::fs::read_dir(kit.join("tests"))
        .expect("the kit's tests")
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".c").map(str::to_owned)
        })
        // hwloc_api_version wants 2.9's API number (the kit's run.sh
        // says why it is left out).
        .filter(|t| {
            ![
                "hwloc_object_userdata",
                "hwloc_api_version",
                "hwloc_synthetic",
            ]
            .contains(&t.as_str())
        })
        .collect();
    assert_eq!(tests.len(), 27, "{tests:?}");
    let start = std::time::Instant::now();
    let out = Command::new("bash")
        .arg(kit.join("run.sh"))
        .arg(&lib)
        .arg(&work)
        .env("HWLOC_CTESTS", tests.join(" "))
        .env(
            "HWLOC_CTESTS_WRAP",
            format!(
                "valgrind -q --error-exitcode=99 --suppressions={}",
                supp.display()
            ),
        )
        .output()
        .expect("run.sh runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = stdout.lines().last().unwrap_or_default().to_string();
    if !summary.contains("27 of 27 pass") {
        let logs: String = tests
            .iter()
            .filter(|t| summary.contains(&format!(" {t}(")))
            .map(|t| {
                let text =
                    std::fs::read_to_string(work.join(format!("{t}.log"))).unwrap_or_default();
                let head: Vec<&str> = text
                    .lines()
                    .filter(|l| l.starts_with("=="))
                    .take(40)
                    .collect();
                format!("--- {t}\n{}\n", head.join("\n"))
            })
            .collect();
        panic!("{summary}\n{logs}");
    }
    eprintln!("{summary} under valgrind in {:?}", start.elapsed());
}
