//! Hostile annotation records against the whole `wloc` command: each test
//! component (built from `components/hostile/annotate-*`, of the
//! `annotation-backend` world) reads the topology and returns floods of
//! infos or Misc objects, chains deeper than the tree may be, or records
//! naming objects that do not exist.  `wloc ls --component FILE` runs it
//! after discovery; `wloc` must either refuse the record with a message
//! naming the component and the rule, leaving the topology exactly as
//! discovery made it, or apply it and write a topology whose XML export
//! reads back identically; always within a few seconds and with its peak
//! memory measured by the kernel.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{TempDir, wait_measured, wloc};

/// The time one run may take (compiling the component included).
const MAX_TIME: Duration = Duration::from_secs(5);

/// Peak memory of one run: wloc with wasmtime, the compiled component,
/// its own memory (at most 256 MiB) and the record as the host holds it.
const MAX_PEAK_MIB: i64 = 400;

/// Runs are killed after this long, so that a hung one fails its test.
const KILL_AFTER: Duration = Duration::from_secs(60);

fn component(name: &str) -> PathBuf {
    let p = Path::new(wloc_runtime::test_components_dir()).join(format!("hostile-{name}.wasm"));
    assert!(p.is_file(), "{} was not built", p.display());
    p
}

struct Run {
    stdout: String,
    stderr: String,
}

/// A policy allowing the component, a cache and a user folder of its own.
struct Env {
    dir: TempDir,
    file: PathBuf,
    name: String,
}

impl Env {
    fn new(name: &str) -> Env {
        let file = component(name);
        let dir = TempDir::new(&format!("hostile-annotations-{name}"));
        std::fs::write(dir.0.join("policy.toml"), "[limits]\ndeadline_ms = 10000\n").unwrap();
        let env = Env {
            dir,
            file,
            name: name.to_string(),
        };
        env.run(&["component", "allow", env.file.to_str().unwrap()]);
        env
    }

    /// Runs `wloc ARGS`, which must exit normally with success; returns
    /// its output and checks its time and peak memory.
    fn run(&self, args: &[&str]) -> Run {
        let out_path = self.dir.0.join("stdout");
        let err_path = self.dir.0.join("stderr");
        let (mut cmd, measure) = common::measured(wloc());
        let child = cmd
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
        let ended = wait_measured(child, measure, KILL_AFTER);
        let run = Run {
            stdout: std::fs::read_to_string(&out_path).unwrap(),
            stderr: std::fs::read_to_string(&err_path).unwrap(),
        };
        let peak_mib = ended.peak_kib >> 10;
        eprintln!(
            "{}: wloc {:?}: exit {}, {:?}, peak {peak_mib} MiB",
            self.name,
            &args[..args.len().min(3)],
            ended.code,
            ended.elapsed
        );
        assert!(
            ended.code >= 0,
            "{}: wloc {args:?} was killed by signal {}: {}",
            self.name,
            -ended.code,
            run.stderr
        );
        assert_eq!(
            ended.code, 0,
            "{}: wloc {args:?} failed: {}",
            self.name, run.stderr
        );
        assert!(
            ended.elapsed < MAX_TIME,
            "{}: wloc {args:?} took {:?}",
            self.name,
            ended.elapsed
        );
        assert!(
            peak_mib <= MAX_PEAK_MIB,
            "{}: wloc {args:?}: peak {peak_mib} MiB over {MAX_PEAK_MIB} MiB",
            self.name
        );
        run
    }

    /// The XML export of `input` with the component run on it.  The
    /// first run compiles the component; the measured one uses the cache.
    fn annotated(&self, input: &str) -> Run {
        let args = [
            "ls",
            "-i",
            input,
            "--no-annotate",
            "--component",
            self.file.to_str().unwrap(),
            "--of",
            "xml",
        ];
        self.run(&args);
        self.run(&args)
    }

    /// The XML export of `input` without any annotation.
    fn plain(&self, input: &str) -> String {
        self.run(&["ls", "-i", input, "--no-annotate", "--of", "xml"])
            .stdout
    }

    /// The component's record on `input` is refused with a message naming
    /// the component and holding each of `expect`, and the topology is
    /// the one discovery made.
    fn refused(&self, input: &str, expect: &[&str]) {
        let run = self.annotated(input);
        let name = &self.name;
        assert!(
            run.stderr.contains(&format!("component hostile-{name} ")),
            "{name} on {input}: the message does not name it: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains("returned invalid data"),
            "{name} on {input}: {}",
            run.stderr
        );
        for e in expect {
            assert!(
                run.stderr.contains(e),
                "{name} on {input}: expected {e:?} in: {}",
                run.stderr
            );
        }
        assert_eq!(
            run.stdout,
            self.plain(input),
            "{name} on {input}: a refused record changed the topology"
        );
    }

    /// The component's record on `input` is applied: no message, and the
    /// XML export reads back identically.  Returns the XML.
    fn accepted(&self, input: &str) -> String {
        let run = self.annotated(input);
        let name = &self.name;
        assert!(
            !run.stderr.contains(&format!("hostile-{name}")),
            "{name} on {input} was refused: {}",
            run.stderr
        );
        let file = self.dir.0.join("export.xml");
        std::fs::write(&file, &run.stdout).unwrap();
        let back = self.plain(file.to_str().unwrap());
        assert!(
            back == run.stdout,
            "{name} on {input}: the export does not read back identically"
        );
        run.stdout
    }
}

#[test]
fn info_floods_past_an_objects_cap_are_refused() {
    // 64 targets over the 7 objects of this machine: the first object met
    // again would get its 4,097th info.
    Env::new("annotate-info-flood").refused(
        "pack:1 pu:3",
        &[
            "info 24576",
            "object with gp index 1 would have more than 4096 infos",
        ],
    );
}

#[test]
fn info_floods_at_the_caps_are_applied() {
    // 67 objects: 64 distinct targets of 4,096 infos each, 262,144 in all.
    let xml = Env::new("annotate-info-flood").accepted("pack:1 pu:64");
    assert_eq!(xml.matches("<info name=\"flood-").count(), 262_144);
    for t in [0, 63] {
        assert!(xml.contains(&format!("<info name=\"flood-{t}-4095-xxxx")));
    }
}

#[test]
fn a_million_misc_objects_are_refused() {
    Env::new("annotate-misc-flood").refused(
        "pack:1 pu:3",
        &["1000000 infos, Misc objects and properties returned (at most 262144)"],
    );
}

#[test]
fn misc_floods_at_the_cap_are_applied() {
    // On 2 PUs the component returns 65,536 Misc objects under the root.
    let xml = Env::new("annotate-misc-flood").accepted("pack:1 pu:2");
    assert_eq!(xml.matches("<object type=\"Misc\"").count(), 1 << 16);
    assert!(xml.contains("name=\"m65535\""));
}

/// An XML topology of one PU with a chain of `n` Misc objects under its
/// Machine: `n` levels below the root.
fn deep_xml(env: &Env, n: usize) -> PathBuf {
    let base = env.plain("pack:1 pu:1");
    let end = base
        .find("  </object>\n  <support")
        .expect("the root's closing tag");
    let mut chain = String::new();
    for i in 0..n {
        chain.push_str(&format!(
            "<object type=\"Misc\" name=\"d{i}\" gp_index=\"{}\">",
            100 + i
        ));
    }
    chain.push_str(&"</object>".repeat(n));
    let xml = format!("{}{chain}\n{}", &base[..end], &base[end..]);
    let file = env.dir.0.join(format!("deep{n}.xml"));
    std::fs::write(&file, xml).unwrap();
    file
}

#[test]
fn misc_chains_are_refused_at_a_parent_that_does_not_exist_or_too_deep() {
    let env = Env::new("annotate-deep-misc");
    // The chain's first Misc object goes under the deepest PU; the second
    // names a gp index the record guessed, which no object has.
    env.refused("pack:1 pu:3", &["Misc object 1: no object has gp index 7"]);
    // Under a Misc object 255 levels below the root, the first one fits
    // (level 256); the second's parent is still unknown.
    let fits = deep_xml(&env, 255);
    env.refused(
        fits.to_str().unwrap(),
        &["Misc object 1: no object has gp index 355"],
    );
    // 256 levels below the root, the first one would be the 257th.
    let full = deep_xml(&env, 256);
    env.refused(
        full.to_str().unwrap(),
        &["Misc object 0 would be deeper than the deepest tree accepted (256)"],
    );
}

#[test]
fn records_naming_objects_that_do_not_exist_are_refused() {
    let env = Env::new("annotate-bad-targets");
    // The component chooses its fault by the number of PUs it is shown.
    let faults = [
        "info 0: no object has gp index 999999999",
        "info 0: name holds the control character '\\0'",
        "distance matrix 0 has 3 objects and 4 values instead of 3²",
        "distance matrix 0: no object has gp index 999999999",
        "memory attribute 0: no object has gp index 999999999",
        "memory attribute 0: no object has gp index 999999999",
        "property 0: no object has gp index 999999999",
        "Misc object 0: no object has gp index 999999999",
    ];
    for (k, fault) in faults.iter().enumerate() {
        env.refused(&format!("pack:1 pu:{}", k + 1), &[fault]);
    }
    // With more PUs its record is one valid info of the root: the
    // component itself runs and is applied.
    let xml = env.accepted("pack:1 pu:9");
    assert!(xml.contains("<info name=\"HostileAnnotation\" value=\"ran\"/>"));
}
