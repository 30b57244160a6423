//! Hostile discovery records against the whole `wloc` command: each test
//! component (built from `components/hostile/NAME`) returns a record that
//! is deep, wide, has huge indexes or describes an invalid tree.  `wloc`
//! must either refuse it with a message naming the component and the rule,
//! then fall back to the input's own discovery, or build a valid tree that
//! its XML export reads back identically; always within a few seconds and
//! with its peak memory measured by the kernel.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use common::{TempDir, wloc};

/// A machine the fallback synthetic discovery describes.
const FALLBACK: &str = "pack:1 pu:3";

/// The time one run may take (compiling the component included).
const MAX_TIME: Duration = Duration::from_secs(5);

/// Peak memory of one run: wloc with wasmtime, the compiled component,
/// its record as the host holds it (at most tens of MB here) and the
/// component's own memory (lowered into the host's copy).
const MAX_PEAK_MIB: u64 = 400;

fn component(name: &str) -> PathBuf {
    let p = Path::new(wloc_runtime::test_components_dir()).join(format!("hostile-{name}.wasm"));
    assert!(p.is_file(), "{} was not built", p.display());
    p
}

struct Run {
    status: ExitStatus,
    stdout: String,
    stderr: String,
    peak_mib: u64,
    took: Duration,
}

/// A policy allowing the component, a cache and a user folder of its own.
struct Env {
    dir: TempDir,
}

impl Env {
    fn new(name: &str, file: &Path) -> Env {
        let dir = TempDir::new(&format!("hostile-records-{name}"));
        std::fs::write(dir.0.join("policy.toml"), "[limits]\ndeadline_ms = 10000\n").unwrap();
        let env = Env { dir };
        let out = env.run(&["component", "allow", file.to_str().unwrap()]);
        assert!(out.status.success(), "allow failed: {}", out.stderr);
        env
    }

    /// Runs `wloc ARGS` and measures its peak resident memory (`wait4`).
    fn run(&self, args: &[&str]) -> Run {
        let out_path = self.dir.0.join("stdout");
        let err_path = self.dir.0.join("stderr");
        let start = Instant::now();
        let child = std::process::Command::new(wloc())
            .env("LC_ALL", "C")
            .env("WLOC_POLICY", self.dir.0.join("policy.toml"))
            .env("WLOC_CACHE_DIR", self.dir.0.join("cache"))
            .env("XDG_DATA_HOME", self.dir.0.join("data"))
            .env_remove("WLOC_COMPONENTS_PATH")
            .env_remove("WLOC_COMPONENTS")
            .args(args)
            .stdout(std::fs::File::create(&out_path).unwrap())
            .stderr(std::fs::File::create(&err_path).unwrap())
            .spawn()
            .expect("wloc runs");
        let (status, peak_kib) = common::wait4_peak_kib(child);
        let took = start.elapsed();
        let run = Run {
            status,
            stdout: std::fs::read_to_string(&out_path).unwrap(),
            stderr: std::fs::read_to_string(&err_path).unwrap(),
            peak_mib: peak_kib >> 10,
            took,
        };
        assert!(
            run.status.code().is_some(),
            "wloc {args:?} was killed by a signal: {:?} {}",
            run.status,
            run.stderr
        );
        run
    }
}

/// Runs the component over the fallback machine, with the bounds checked.
fn run_component(name: &str, of: &str) -> (Env, Run) {
    let file = component(name);
    let env = Env::new(name, &file);
    let args = [
        "ls",
        "-i",
        FALLBACK,
        "--no-annotate",
        "--component",
        file.to_str().unwrap(),
        "--of",
        of,
    ];
    // The first run compiles the component; the measured one uses the cache.
    env.run(&args);
    let run = env.run(&args);
    eprintln!("{name}: {:?}, peak {} MiB", run.took, run.peak_mib);
    assert!(run.took < MAX_TIME, "{name} took {:?}", run.took);
    assert!(
        run.peak_mib <= MAX_PEAK_MIB,
        "{name}: peak {} MiB over {MAX_PEAK_MIB} MiB",
        run.peak_mib
    );
    (env, run)
}

/// The record is refused with a message naming the component and each of
/// `expect`, and the input's own discovery gives the topology.
fn refused(name: &str, expect: &[&str]) {
    let (_env, run) = run_component(name, "synthetic");
    assert!(run.status.success(), "{name}: wloc failed: {}", run.stderr);
    assert!(
        run.stdout.contains("PU:3"),
        "{name}: no fallback: {}\n{}",
        run.stdout,
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!("hostile-{name}")),
        "{name}: {}",
        run.stderr
    );
    for e in expect {
        assert!(
            run.stderr.contains(e),
            "{name}: expected {e:?} in: {}",
            run.stderr
        );
    }
}

/// The record gives the topology, whose XML export `wloc` reads back
/// identically.  Returns the XML.
fn accepted(name: &str) -> String {
    let (env, run) = run_component(name, "xml");
    assert!(run.status.success(), "{name}: wloc failed: {}", run.stderr);
    assert!(
        !run.stderr.contains(&format!("hostile-{name}")),
        "{name} was refused: {}",
        run.stderr
    );
    let xml = run.stdout;
    let file = env.dir.0.join("export.xml");
    std::fs::write(&file, &xml).unwrap();
    let back = env.run(&[
        "ls",
        "-i",
        file.to_str().unwrap(),
        "--no-annotate",
        "--of",
        "xml",
    ]);
    assert!(
        back.status.success(),
        "{name}: read-back failed: {}",
        back.stderr
    );
    assert_eq!(
        back.stdout, xml,
        "{name}: the export does not read back identically"
    );
    xml
}

#[test]
fn chains_deeper_than_the_limit_are_refused() {
    for name in ["deep-misc", "deep-bridge", "deep-group"] {
        refused(
            name,
            &[
                "returned invalid data",
                "depth 257",
                "deepest tree accepted (256)",
            ],
        );
    }
}

#[test]
fn sets_nesting_deeper_than_the_limit_are_refused() {
    refused(
        "deep-sets",
        // Refused by the host's own height check or by the core's insertion,
        // whichever sees the object first: both name the limit.
        &["returned invalid data", "deeper than", "256"],
    );
}

#[test]
fn huge_os_indexes_are_refused_before_any_set_is_built() {
    refused(
        "pu-index",
        &[
            "returned invalid data",
            "OS index 4294967295",
            "cap of 1048575",
        ],
    );
    refused(
        "node-index",
        &[
            "returned invalid data",
            "OS index 4294967295",
            "cap of 1048575",
        ],
    );
}

#[test]
fn a_numa_node_under_a_pu_is_refused() {
    refused(
        "numa-under-pu",
        &["returned invalid data", "cannot be a child of", "PU"],
    );
}

#[test]
fn identical_groups_are_merged_quickly() {
    let xml = accepted("same-groups");
    assert_eq!(xml.matches("type=\"PU\"").count(), 4, "{xml}");
    // One Group stands for the 20,000 identical ones (or none: a Group
    // identical to the Machine is merged into it).
    assert!(xml.matches("type=\"Group\"").count() <= 1, "{xml}");
}

#[test]
fn objects_without_parents_keep_distinct_gp_indexes() {
    let xml = accepted("no-parents");
    assert_eq!(xml.matches("type=\"PU\"").count(), 2, "{xml}");
    assert_eq!(xml.matches("type=\"NUMANode\"").count(), 2, "{xml}");
}

#[test]
fn nul_in_an_info_name_is_refused() {
    refused("nul-info", &["returned invalid data", "XML cannot carry"]);
}

#[test]
fn overlapping_cpu_kinds_are_split_as_hwloc_does() {
    let xml = accepted("cpukinds-overlap");
    // {0-2} and {2-3} become {0-1}, {2} (both infos) and {3}.
    let kinds: Vec<&str> = xml
        .lines()
        .filter(|l| l.trim_start().starts_with("<cpukind "))
        .collect();
    assert_eq!(kinds.len(), 3, "{xml}");
    for set in ["0x00000003", "0x00000004", "0x00000008"] {
        assert!(
            kinds
                .iter()
                .any(|k| k.contains(&format!("cpuset=\"{set}\""))),
            "{set}: {xml}"
        );
    }
}

#[test]
fn cpu_kinds_naming_absent_pus_are_refused() {
    refused(
        "cpukinds-absent",
        &[
            "returned invalid data",
            "CPU kind 0",
            "names PUs 0x00000006",
            "does not have",
        ],
    );
}

#[test]
fn memory_attributes_target_only_numa_nodes() {
    refused(
        "memattr-target",
        &["returned invalid data", "targets are NUMA nodes"],
    );
}
