//! Hostile components against the whole `wloc` command: each test
//! component (built from `components/hostile/NAME`) tries one attack, and the
//! host must refuse or contain it with a clear message, never crash or
//! hang, and never let anything outside a grant be read.  Also: the
//! policy's allow and deny entries, signatures, tampering, built-ins
//! disabled by the policy, and the `wloc component` commands.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{TempDir, wloc};

/// A test component's path.
fn component(name: &str) -> PathBuf {
    let p = Path::new(wloc_runtime::test_components_dir()).join(format!("hostile-{name}.wasm"));
    assert!(p.is_file(), "{} was not built", p.display());
    p
}

/// A machine the fallback synthetic discovery describes.
const FALLBACK: &str = "pack:1 pu:3";

/// A sandbox of one test: a policy file, a cache, a user folder, and an
/// fsroot holding `/sys/ok` and links out of `/sys`.
struct Env {
    dir: TempDir,
}

impl Env {
    fn new(tag: &str) -> Env {
        let dir = TempDir::new(&format!("hostile-{tag}"));
        let sys = dir.0.join("root/sys");
        std::fs::create_dir_all(&sys).unwrap();
        std::fs::write(sys.join("ok"), "fine\n").unwrap();
        std::fs::create_dir_all(dir.0.join("root/etc")).unwrap();
        std::fs::write(dir.0.join("root/etc/passwd"), "SECRET-IN-FSROOT\n").unwrap();
        std::os::unix::fs::symlink("/etc", sys.join("escape")).unwrap();
        std::os::unix::fs::symlink("../../../../../../../etc", sys.join("rel-escape")).unwrap();
        std::os::unix::fs::symlink("escape", sys.join("hop")).unwrap();
        // Short limits, so that the tests of spinning and hoarding are quick.
        std::fs::write(
            dir.0.join("policy.toml"),
            "[limits]\ndeadline_ms = 2000\nmemory_mib = 64\n",
        )
        .unwrap();
        Env { dir }
    }

    fn policy(&self) -> PathBuf {
        self.dir.0.join("policy.toml")
    }

    fn fsroot(&self) -> PathBuf {
        self.dir.0.join("root")
    }

    fn cmd(&self) -> Command {
        let mut c = Command::new(wloc());
        c.env("LC_ALL", "C")
            .env("WLOC_POLICY", self.policy())
            .env("WLOC_CACHE_DIR", self.dir.0.join("cache"))
            .env("XDG_DATA_HOME", self.dir.0.join("data"))
            .env_remove("WLOC_COMPONENTS_PATH")
            .env_remove("WLOC_COMPONENTS");
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        let start = Instant::now();
        let out = self.cmd().args(args).output().expect("wloc runs");
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "wloc {args:?} took {:?}",
            start.elapsed()
        );
        assert!(
            out.status.code().is_some(),
            "wloc {args:?} was killed by a signal: {out:?}"
        );
        out
    }

    /// Allows a component by digest with `wloc component allow`.
    fn allow(&self, file: &Path, extra: &[&str]) {
        let mut args = vec!["component", "allow", file.to_str().unwrap()];
        args.extend_from_slice(extra);
        let out = self.run(&args);
        assert!(out.status.success(), "allow failed: {}", text(&out.stderr));
    }

    /// Runs `wloc ls --component FILE` over the fallback synthetic machine.
    fn ls_fallback(&self, file: &Path) -> Output {
        self.run(&[
            "ls",
            "-i",
            FALLBACK,
            "--component",
            file.to_str().unwrap(),
            "--of",
            "synthetic",
        ])
    }

    /// The arguments of `wloc ls --component FILE --of xml`, over the
    /// fsroot or (`fsroot` false) this machine.
    fn ls_args(&self, file: &Path, fsroot: bool) -> Vec<String> {
        let mut args: Vec<String> = vec!["ls".into()];
        if fsroot {
            args.extend(["-i".into(), self.fsroot().display().to_string()]);
            args.extend(["--if".into(), "fsroot".into()]);
        }
        args.extend(["--no-annotate", "--component"].map(String::from));
        args.push(file.display().to_string());
        args.extend(["--of", "xml"].map(String::from));
        args
    }

    /// Runs `wloc ls --component FILE` over the fsroot, as XML.
    fn ls_fsroot(&self, file: &Path) -> Output {
        let args = self.ls_args(file, true);
        self.run(&args.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// Runs `wloc ls --component FILE` on this machine (no input), as XML.
    fn ls_live(&self, file: &Path) -> Output {
        let args = self.ls_args(file, false);
        self.run(&args.iter().map(String::as_str).collect::<Vec<_>>())
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The `value` of each topology info named `prefix...`, from XML.
fn infos(xml: &str, prefix: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in xml.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("<info name=\"")
            && let Some((name, rest)) = rest.split_once("\" value=\"")
            && name.starts_with(prefix)
        {
            let value = rest.trim_end_matches("\"/>").to_string();
            out.push((name.to_string(), value));
        }
    }
    out
}

/// A component that is refused or stopped: `wloc ls` reports it on
/// standard error with its name, goes on with the input's own discovery
/// and succeeds.
fn contained(name: &str, expect: &[&str]) {
    let env = Env::new(name);
    let file = component(name);
    env.allow(&file, &["--files", "/sys"]);
    let out = env.ls_fallback(&file);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{name}: wloc failed: {err}");
    // The input's own discovery still ran.
    assert!(text(&out.stdout).contains("PU:3"), "{name}: {err}");
    assert!(err.contains(&format!("hostile-{name}")), "{name}: {err}");
    for e in expect {
        assert!(err.contains(e), "{name}: expected {e:?} in: {err}");
    }
    assert!(
        !err.contains('\x1b'),
        "{name}: raw escape on the terminal: {err:?}"
    );
}

/// A component that probes files: every attempt outside the grant must be
/// refused, the control read inside it must work.
fn probes(name: &str) -> Vec<(String, String)> {
    let env = Env::new(name);
    let file = component(name);
    env.allow(&file, &["--files", "/sys"]);
    let out = env.ls_fsroot(&file);
    let xml = text(&out.stdout);
    assert!(out.status.success(), "{name}: {}", text(&out.stderr));
    let all = infos(&xml, "");
    assert!(
        all.iter()
            .any(|(n, v)| n == "control /sys/ok" && v == "read fine"),
        "{name}: the granted file was not readable: {all:?}"
    );
    for (n, v) in &all {
        assert!(
            !v.contains("LEAKED") && !v.contains("SECRET"),
            "{name}: {n} = {v}"
        );
    }
    let attempts: Vec<_> = all
        .into_iter()
        .filter(|(n, _)| n != "control /sys/ok")
        .collect();
    assert!(attempts.len() >= 4, "{name}: {attempts:?}");
    attempts
}

fn refused_words(v: &str) -> bool {
    v == "denied" || v == "not-found" || v == "no match" || v.starts_with("io:")
}

#[test]
fn dotdot_paths_are_refused() {
    for (n, v) in probes("read-dotdot") {
        assert!(refused_words(&v), "{n} = {v}");
    }
}

#[test]
fn absolute_paths_outside_the_grant_are_refused() {
    // Its manifest asks for "/", the policy grants "/sys".
    for (n, v) in probes("read-absolute") {
        assert!(refused_words(&v), "{n} = {v}");
    }
}

#[test]
fn symlinks_leaving_the_grant_are_refused() {
    for (n, v) in probes("read-symlink") {
        if n.starts_with("readlink") {
            // The link text is data inside the grant; what it names is not.
            assert!(v.starts_with("link text") || refused_words(&v), "{n} = {v}");
        } else {
            assert!(refused_words(&v), "{n} = {v}");
        }
    }
}

#[test]
fn the_environment_is_unreachable() {
    let got = probes("read-environ");
    for (n, v) in &got {
        if n.starts_with("wasi") {
            assert_eq!(v, "empty", "{n}");
        } else {
            assert!(refused_words(v), "{n} = {v}");
        }
    }
    assert!(got.iter().any(|(n, _)| n == "wasi environment"));
}

#[test]
fn writes_are_refused() {
    let env = Env::new("write");
    let file = component("write");
    env.allow(&file, &[]);
    let out = env.ls_fsroot(&file);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got = infos(&text(&out.stdout), "");
    let writes: Vec<_> = got
        .iter()
        .filter(|(n, _)| n.starts_with("write") || n.starts_with("mkdir"))
        .collect();
    assert_eq!(writes.len(), 8, "{got:?}");
    for (n, v) in writes {
        assert!(v.starts_with("refused"), "{n} = {v}");
    }
    assert!(!env.fsroot().join("sys/new-file").exists());
    assert!(!Path::new("/tmp/wloc-hostile-write").exists());
}

#[test]
fn sockets_are_refused_at_load_time() {
    contained("socket", &["wasi:sockets", "never granted", "refused"]);
    contained("net", &["wasi:sockets", "never granted"]);
}

#[test]
fn spinning_is_stopped() {
    let start = Instant::now();
    contained("spin", &["stopped"]);
    assert!(start.elapsed() < Duration::from_secs(30));
}

#[test]
fn unbounded_allocation_is_stopped() {
    contained("alloc", &["memory", "cap"]);
}

#[test]
fn huge_answers_are_refused() {
    // Stopped by its memory cap while building the answer, or refused by
    // the caps on returned data when the cap allows building it.
    let env = Env::new("huge");
    let file = component("huge");
    env.allow(&file, &[]);
    let err = text(&env.ls_fallback(&file).stderr);
    assert!(
        err.contains("hostile-huge")
            && (err.contains("memory") || err.contains("returned invalid data")),
        "{err}"
    );
}

#[test]
fn malformed_sets_are_refused() {
    contained("bad-cpuset", &["returned invalid data"]);
}

#[test]
fn out_of_range_indexes_are_refused() {
    contained("bad-index", &["returned invalid data", "4000000000"]);
}

#[test]
fn parent_cycles_are_refused() {
    contained("cycle", &["returned invalid data", "parent"]);
}

#[test]
fn duplicate_ids_are_refused() {
    contained("duplicate-ids", &["returned invalid data", "id 2"]);
}

#[test]
fn panics_are_reported() {
    contained("panic", &["panicked", "on purpose"]);
}

#[test]
fn exit_is_reported() {
    // WASI's exit carries only success or failure.
    contained("exit", &["exited with status 1"]);
}

#[test]
fn escape_sequences_never_reach_the_terminal() {
    contained("escape-codes", &["gave up", "\\u{1b}"]);
}

#[test]
fn ungranted_interfaces_are_refused_naming_the_capability() {
    contained(
        "cpuid",
        &["refused", "wloc:backend/cpuid", "capability `cpuid`"],
    );
}

#[test]
fn a_newer_wit_version_is_refused() {
    contained(
        "v2",
        &["refused", "wloc:backend@0.2.0", "speaks wloc:backend@0.1.0"],
    );
}

#[test]
fn components_are_denied_by_default() {
    let env = Env::new("default-deny");
    // No policy file: built-ins only.
    let out = env
        .cmd()
        .env_remove("WLOC_POLICY")
        .env("WLOC_POLICY", env.dir.0.join("absent.toml"))
        .args(["ls", "-i", FALLBACK, "--of", "synthetic"])
        .output()
        .unwrap();
    // A named policy file must exist.
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("absent.toml"),
        "{}",
        text(&out.stderr)
    );
    std::fs::write(env.policy(), "# empty\n").unwrap();
    let file = component("spin");
    let out = env.ls_fallback(&file);
    assert!(out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("hostile-spin") && err.contains("not allowed") && err.contains("unsigned"),
        "{err}"
    );
}

#[test]
fn deny_wins_over_allow() {
    let env = Env::new("deny");
    let file = component("read-dotdot");
    env.allow(&file, &[]);
    let out = env.run(&["component", "deny", "hostile-read-dotdot"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = env.ls_fallback(&file);
    let err = text(&out.stderr);
    assert!(err.contains("[[deny]]"), "{err}");
}

#[test]
fn tampered_bytes_lose_their_allowance() {
    let env = Env::new("tamper");
    let file = env.dir.0.join("c.wasm");
    std::fs::copy(component("read-dotdot"), &file).unwrap();
    env.allow(&file, &["--files", "/sys"]);
    // One byte changed in the middle of the code.
    let mut b = std::fs::read(&file).unwrap();
    let mid = b.len() / 2;
    b[mid] ^= 0x55;
    std::fs::write(&file, &b).unwrap();
    let out = env.ls_fallback(&file);
    assert!(out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("not allowed") || err.contains("not a valid"),
        "{err}"
    );
}

#[test]
fn signatures_are_checked() {
    let env = Env::new("sign");
    let key = env.dir.0.join("acme");
    let out = env.run(&["component", "keygen", key.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let public = text(&out.stdout).trim().to_string();
    assert!(public.starts_with("ed25519:"));
    let signed = env.dir.0.join("signed.wasm");
    let out = env.run(&[
        "component",
        "sign",
        component("read-dotdot").to_str().unwrap(),
        "--key",
        &format!("{}.key", key.display()),
        "-o",
        signed.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Signed by a key the policy does not trust.
    std::fs::write(env.policy(), "").unwrap();
    let out = env.run(&["component", "verify", signed.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("not a trusted [[publisher]]"),
        "{}",
        text(&out.stderr)
    );
    // Trusted publisher: allowed, and a later version would be too.
    env.allow(
        &signed,
        &["--publisher", "acme", "--key", &public, "--files", "/sys"],
    );
    let out = env.run(&["component", "verify", signed.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("publisher acme"));
    let out = env.ls_fsroot(&signed);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("read fine"));
    // A byte of the signed content changed: the signature no longer holds.
    let mut b = std::fs::read(&signed).unwrap();
    let at = b.windows(9).position(|w| w == b"read-dotd").unwrap();
    b[at] = b'R';
    let tampered = env.dir.0.join("tampered.wasm");
    std::fs::write(&tampered, &b).unwrap();
    let out = env.run(&["component", "verify", tampered.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("bad signature") || err.contains("invalid manifest"),
        "{err}"
    );
    // A damaged signature.
    let mut b = std::fs::read(&signed).unwrap();
    let n = b.len();
    b[n - 3] ^= 1;
    std::fs::write(&tampered, &b).unwrap();
    let out = env.ls_fallback(&tampered);
    assert!(out.status.success());
    assert!(
        text(&out.stderr).contains("bad signature"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn builtins_can_be_disabled_by_the_policy() {
    let env = Env::new("builtin");
    std::fs::write(env.policy(), "[builtin.synthetic]\nenabled = false\n").unwrap();
    let out = env.run(&["ls", "-i", FALLBACK]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("synthetic") && err.contains("disabled"),
        "{err}"
    );
    // An invalid policy is an error naming the file and the problem.
    std::fs::write(env.policy(), "[[allow]]\ndigest = \"xyz\"\n").unwrap();
    let out = env.run(&["ls", "-i", FALLBACK]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("policy.toml") && err.contains("64 hexadecimal"),
        "{err}"
    );
}

#[test]
fn component_lists_select_and_exclude() {
    let env = Env::new("list");
    std::fs::write(env.policy(), "").unwrap();
    let out = env.run(&[
        "ls",
        "-i",
        FALLBACK,
        "--components",
        "-synthetic",
        "--of",
        "synthetic",
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no discovery component left"),
        "{}",
        text(&out.stderr)
    );
    let out = env.run(&[
        "ls",
        "-i",
        FALLBACK,
        "--components",
        "synthetic,stop,-synthetic",
        "--of",
        "synthetic",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = env.run(&["ls", "-i", FALLBACK, "--components", "nosuch"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("no component named 'nosuch'"));
    // Installed on the search path, found by name, still subject to the policy.
    let out = env.run(&["component", "add", component("panic").to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("refused"),
        "{}",
        text(&out.stdout)
    );
    let out = env.run(&[
        "ls",
        "-i",
        FALLBACK,
        "--components",
        "hostile-panic",
        "--of",
        "synthetic",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("not allowed"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn component_list_and_inspect_show_what_is_granted() {
    let env = Env::new("inspect");
    std::fs::write(env.policy(), "[builtin.x86]\ncpuid = false\n").unwrap();
    let out = env.run(&["component", "list"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    for n in ["synthetic", "linux", "x86", "annotate-dmi"] {
        assert!(
            s.contains(&format!("\n{n} ")) || s.starts_with(&format!("{n} ")),
            "{n}: {s}"
        );
    }
    assert!(
        s.contains("requested: files=/sys/firmware/acpi/tables cpuid"),
        "{s}"
    );
    // With CPUID withheld, the x86 component (which asks for it) is
    // linked with no PU to query: the listing shows the narrower grant,
    // and discovery fails saying why.
    let x86 = s.split("\nx86 ").nth(1).unwrap_or_default();
    let granted = x86.lines().nth(2).unwrap_or_default();
    assert!(
        granted.contains("granted:") && !granted.contains("cpuid"),
        "{s}"
    );
    let out = env.run(&["ls", "--if", "cpuid"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no CPUID access"),
        "{}",
        text(&out.stderr)
    );
    let out = env.run(&[
        "component",
        "inspect",
        component("read-absolute").to_str().unwrap(),
    ]);
    let s = text(&out.stdout);
    assert!(out.status.success());
    assert!(s.contains("name:      hostile-read-absolute"), "{s}");
    assert!(s.contains("requested: files=/"), "{s}");
    assert!(s.contains("wloc:backend/files@0.1.0"), "{s}");
    assert!(s.contains("policy:    refused"), "{s}");
    let out = env.run(&["component", "inspect", "/nonexistent.wasm"]);
    assert!(!out.status.success());
    let garbage = env.dir.0.join("garbage.wasm");
    std::fs::write(&garbage, b"\0asm garbage").unwrap();
    let out = env.run(&["component", "inspect", garbage.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("not a valid WebAssembly"),
        "{}",
        text(&out.stderr)
    );
}

/// An annotator granted `/proc` and `/sys`, allowed as an admin would
/// (`wloc component allow FILE` grants what it asks), reads nothing
/// private to a process and learns no PID, while the files discovery
/// needs are still served.
#[test]
fn a_component_granted_proc_reads_nothing_private() {
    let env = Env::new("read-proc");
    let file = component("read-proc");
    // The admin is told that the grant gives less than it names.
    let out = env.run(&["component", "allow", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains("note: under /proc, files private to a process"),
        "{said}"
    );
    for args in [
        &["component", "inspect", file.to_str().unwrap()][..],
        &["component", "list"][..],
    ] {
        let out = env.run(args);
        let said = text(&out.stdout);
        assert!(
            said.contains("withheld:  under /proc, files private to a process"),
            "{args:?}: {said}"
        );
    }
    let out = env.ls_live(&file);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got = infos(&text(&out.stdout), "");
    let value = |name: &str| {
        got.iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no info {name}: {got:?}"))
            .1
            .clone()
    };
    for p in [
        "/proc/self/cgroup",
        "/proc/self/mounts",
        "/proc/mounts",
        "/proc/cpuinfo",
    ] {
        let v = value(&format!("control {p}"));
        assert!(v.starts_with("read ") && v != "read 0 bytes", "{p}: {v}");
    }
    let mut attempts = 0;
    for (n, v) in &got {
        assert!(!v.contains("LEAKED"), "{n} = {v}");
        if n.starts_with("read ") || n.starts_with("readlink ") {
            assert_eq!(v, "denied", "{n}");
            attempts += 1;
        }
        if n.starts_with("list ") || n.starts_with("glob ") {
            assert!(v == "denied" || v == "no match", "{n} = {v}");
        }
    }
    assert!(attempts >= 80, "{attempts} attempts: {got:?}");
    assert_eq!(value("process folders in list /proc"), "0");
    for pattern in [
        "/proc/*",
        "/proc/*/cmdline",
        "/proc/*/environ",
        "/proc/*/task/*/environ",
    ] {
        assert_eq!(
            value(&format!("process folders in glob {pattern}")),
            "0",
            "{pattern}"
        );
    }
    assert_eq!(value("pids answered other than denied"), "0");
}

/// Runs `wloc` and returns its output with its peak resident memory in
/// KiB, measured by the kernel for that one process (`wait4`).
fn run_measured(env: &Env, args: &[&str]) -> (std::process::ExitStatus, String, u64) {
    let err_path = env.dir.0.join("stderr");
    let child = env
        .cmd()
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("wloc runs");
    let (status, peak_kib) = common::wait4_peak_kib(child);
    let stderr = std::fs::read_to_string(&err_path).unwrap();
    (status, stderr, peak_kib)
}

/// A component asking for 65,536 copies of a 5 MB granted file in one
/// batch, or for endless batches of them, is stopped at its read budget
/// naming the component and the limit, and `wloc`'s peak memory stays
/// within the bound the trust model states: the read budget, plus the
/// component's memory cap, plus one file per reading thread, plus what
/// wloc itself needs.
#[test]
fn a_flood_of_reads_is_stopped_with_memory_bounded() {
    const WLOC_ITSELF_MIB: u64 = 150;
    for (mode, limits, read_mib, memory_mib) in [
        ("one-batch", "max_read_mib = 64\nmemory_mib = 64\n", 64, 64),
        (
            "many-batches",
            "max_read_mib = 64\nmemory_mib = 64\n",
            64,
            64,
        ),
        ("one-batch", "", 256, 256),
    ] {
        let env = Env::new("read-flood");
        std::fs::write(
            env.policy(),
            format!("[limits]\ndeadline_ms = 30000\n{limits}"),
        )
        .unwrap();
        let sys = env.fsroot().join("sys");
        std::fs::write(sys.join("flood"), vec![b'x'; 5 << 20]).unwrap();
        std::fs::write(sys.join("flood-mode"), mode).unwrap();
        let file = component("read-flood");
        env.allow(&file, &[]);
        let args = env.ls_args(&file, true);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (status, err, peak_kib) = run_measured(&env, &args);
        assert!(status.code().is_some(), "{mode}: killed: {status:?} {err}");
        let budget = read_mib << 20;
        assert!(
            err.contains("hostile-read-flood")
                && err.contains(&format!("budget of {budget} bytes")),
            "{mode}: {err}"
        );
        let bound_mib = read_mib + memory_mib + 8 + WLOC_ITSELF_MIB;
        eprintln!(
            "{mode}, read {read_mib} MiB, memory {memory_mib} MiB: peak {} MiB (bound {bound_mib} MiB)",
            peak_kib >> 10
        );
        assert!(
            peak_kib >> 10 <= bound_mib,
            "{mode}: peak {} MiB over {bound_mib} MiB",
            peak_kib >> 10
        );
    }
}

/// A cosign public key (P-256, PKIX PEM, as `cosign.pub`): public, so
/// kept here; the tests that sign make their keys.
const COSIGN_PUB: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE9sOtZjOwM+PBalooYUNPhGpBvaWd
ykhgRfQYJATpwLQxlpuhhGViPxpJrYyVJg0APk7T9H1RcllXzz4U+uyz4A==
-----END PUBLIC KEY-----
";

#[test]
fn registry_signer_entries_from_the_cli() {
    let env = Env::new("registry-entries");
    let file = component("spin");
    let f = file.to_str().unwrap();
    let key = env.dir.0.join("cosign.pub");
    std::fs::write(&key, COSIGN_PUB).unwrap();
    let k = key.to_str().unwrap();
    let out = env.run(&["component", "allow", f, "--publisher", "vendor"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--key or --cosign-key"),
        "{}",
        text(&out.stderr)
    );
    env.allow(&file, &["--publisher", "vendor", "--cosign-key", k]);
    let (issuer, subject) = ("https://accounts.example.com", "release@vendor.example");
    env.allow(&file, &["--identity", issuer, subject]);
    env.allow(&file, &["--identity", issuer, subject]);
    let policy = std::fs::read_to_string(env.policy()).unwrap();
    assert_eq!(policy.matches("[[identity]]").count(), 1, "{policy}");
    assert_eq!(policy.matches("[[publisher]]").count(), 1, "{policy}");
    assert!(
        policy.contains("cosign_keys = [")
            && policy.contains("MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE9sOtZjOwM+PBalooYUNPhGpBvaWd"),
        "{policy}"
    );
    assert!(
        policy.contains(&format!("identity = \"{subject}\"")),
        "{policy}"
    );
    // A key that is not one is named, and the policy is left as it was.
    let bad = env.dir.0.join("bad.pub");
    std::fs::write(&bad, "not a key\n").unwrap();
    let out = env.run(&[
        "component",
        "allow",
        f,
        "--publisher",
        "other",
        "--cosign-key",
        bad.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("bad.pub"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(env.policy()).unwrap(), policy);
    // Revocations.
    for args in [
        &["component", "deny", "--publisher", "vendor"][..],
        &["component", "deny", "--identity", issuer, subject][..],
    ] {
        let out = env.run(args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    }
    let out = env.run(&["component", "deny", "--publisher", "nobody"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("not a [[publisher]]"),
        "{}",
        text(&out.stderr)
    );
    let policy = std::fs::read_to_string(env.policy()).unwrap();
    assert!(
        policy.contains("[[deny]]\npublisher = \"vendor\""),
        "{policy}"
    );
    assert!(
        policy.contains(&format!("[[deny]]\nidentity = \"{subject}\"")),
        "{policy}"
    );
    assert_eq!(policy.matches("[[identity]]").count(), 1, "{policy}");
    // Nothing signs the file: allowed by neither entry.
    let out = env.run(&["component", "verify", f]);
    assert!(!out.status.success());
}
