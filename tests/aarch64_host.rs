//! wloc on an aarch64 Linux host: the workspace's `wloc` built for
//! `aarch64-unknown-linux-gnu` (Debian's `gcc-aarch64-linux-gnu` links
//! it) and run under `qemu-aarch64` user emulation, side by side with the
//! x86_64 `wloc` these tests were built with:
//!
//! - every ARM recording of `tests/data/conformance/linux` (found by its
//!   `/proc/cpuinfo`), and a sample of the other recordings, XML cases,
//!   CPUID dumps and synthetic descriptions, give the same output;
//! - the same component files, byte for byte, give the same results: the
//!   built-in ones (same digests), a third-party one admitted by digest and
//!   the same one signed on x86_64 with `wloc component sign` and admitted
//!   by signature; a changed byte is refused on both;
//! - compiled code is cached per host: one cache folder used by both
//!   holds one artifact of each architecture for the same digest;
//! - binding (`wloc bind`, `--get`, `wloc calc`) works under the emulator,
//!   which forwards `sched_setaffinity`; CPUID discovery of this machine
//!   and `gather-cpuid` are refused on aarch64 with a clear error;
//! - a topology image written on either host is adopted on the other;
//! - wloc's C library built for aarch64 passes hwloc 2.9's own C tests
//!   under the emulator, as `libhwloc.so.15`.
//!
//! Needs `qemu-aarch64` (Debian `qemu-user-static`, or `qemu-user`),
//! `gcc-aarch64-linux-gnu` and the `aarch64-unknown-linux-gnu` Rust target:
//! installed when missing (as root); `WLOC_SKIP_QEMU=1` skips the tests
//! when they cannot be, and `WLOC_AARCH64=0` skips them.  The aarch64
//! `wloc` (and, for the C library's test, `libhwloc.so` and its discovery
//! module) is built by the first test that needs it, into `wloc-aarch64`
//! beside this test's target folder (see `docs/testing.md` for how long
//! that takes).

use crate::common;
use crate::qemu_boot::qemu_prerequisites;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Instant;

use common::{TempDir, show_output, wloc, workspace};

const TARGET: &str = "aarch64-unknown-linux-gnu";
const LINKER: &str = "aarch64-linux-gnu-gcc";
/// The aarch64 C library and loader of `libc6-arm64-cross`, which
/// `gcc-aarch64-linux-gnu` installs.  The emulator runs the loader
/// itself, which loads `wloc` with its libraries from there: with
/// `qemu-aarch64 -L /usr/aarch64-linux-gnu` the emulator would instead
/// look up every absolute path in that folder first, and `/` itself is
/// there, so that a walk from `/` down (the compiled-code cache's) would
/// happen inside it.
const LIB: &str = "/usr/aarch64-linux-gnu/lib";
const LOADER: &str = "/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1";
/// Debian's user-mode emulators: `qemu-user-static`'s, else
/// `qemu-user`'s.
const QEMU_STATIC: &str = "/usr/bin/qemu-aarch64-static";
const QEMU_DYNAMIC: &str = "/usr/bin/qemu-aarch64";

/// The aarch64 `wloc` and the emulator that runs it.
struct Arm {
    qemu: PathBuf,
    wloc: PathBuf,
    /// Where the aarch64 runs keep compiled components between runs (a
    /// cross build has no precompiled built-ins: they are compiled on first
    /// use, slowly under the emulator, and cached).
    cache: PathBuf,
}

/// The aarch64 build, made once; `None` when its prerequisites are
/// missing and `WLOC_SKIP_QEMU=1` says to skip.
fn arm() -> Option<&'static Arm> {
    static ARM: OnceLock<Option<Arm>> = OnceLock::new();
    ARM.get_or_init(|| {
        // The cross build compiles wasmtime for aarch64 (37 CPU-minutes
        // from scratch, a few minutes once built): `WLOC_AARCH64=0` skips
        // these tests on a machine that cannot afford it.
        if std::env::var_os("WLOC_AARCH64").is_some_and(|v| v == "0") {
            eprintln!("aarch64 host tests skipped: WLOC_AARCH64=0");
            return None;
        }
        let qemu = if Path::new(QEMU_DYNAMIC).exists() && !Path::new(QEMU_STATIC).exists() {
            QEMU_DYNAMIC
        } else {
            QEMU_STATIC
        };
        let package = if qemu == QEMU_STATIC {
            "qemu-user-static"
        } else {
            "qemu-user"
        };
        qemu_prerequisites(
            "aarch64 host tests",
            &[
                (qemu, package),
                // What the build needs, tests/aarch64-build.sh installs.
                (LOADER, "libc6-arm64-cross"),
            ],
            TARGET,
        )
        .then(|| {
            let (wloc, target_dir) = build_wloc();
            let cache = target_dir.join("test-cache");
            std::fs::create_dir_all(&cache).expect("cache folder");
            Arm {
                qemu: qemu.into(),
                wloc,
                cache,
            }
        })
    })
    .as_ref()
}

/// The folder the aarch64 builds go to: `wloc-aarch64` beside this
/// test's target folder, or `$WLOC_AARCH64_TARGET_DIR`.
fn arm_target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // TARGET/release/deps/e2e-HASH
    std::env::var_os("WLOC_AARCH64_TARGET_DIR")
        .map(PathBuf::from)
        .or_else(|| exe.ancestors().nth(3).map(|t| t.join("wloc-aarch64")))
        .unwrap_or_else(|| std::env::temp_dir().join("wloc-aarch64-target"))
}

/// The cargo profile of the cross build (`Cargo.toml`: optimised less
/// than `release`, which halves its cost): the folder it builds into.
const PROFILE: &str = "cross-test";

/// Runs the cross build (`tests/aarch64-build.sh`, its one home, which
/// `.ci/run` also starts early in the background) into
/// [`arm_target_dir`].  The guest components are taken from the x86_64
/// build's component folder when it is there (`WLOC_WASM_TARGET_DIR`,
/// unless the environment names one already): the same `.wasm` files,
/// built once.
fn cross_build() -> PathBuf {
    let target_dir = arm_target_dir();
    let mut cmd = Command::new("bash");
    cmd.arg(workspace().join("tests/aarch64-build.sh"))
        .arg(&target_dir);
    // $OUT_DIR/test-components -> $OUT_DIR/wasm-target
    let wasm = Path::new(wloc_runtime::test_components_dir())
        .parent()
        .map(|o| o.join("wasm-target"));
    if std::env::var_os("WLOC_WASM_TARGET_DIR").is_none()
        && let Some(w) = wasm.filter(|w| w.join("wasm32-wasip2/release").is_dir())
    {
        cmd.env("WLOC_WASM_TARGET_DIR", w);
    }
    let start = Instant::now();
    let o = cmd.output().expect("bash runs");
    assert!(
        o.status.success(),
        "tests/aarch64-build.sh failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    common::timing(&format!("cross build for {TARGET}"), start);
    target_dir
}

/// Builds `wloc`, its C library and the library's discovery module for
/// aarch64 in one cargo run (one feature resolution, so wasmtime compiles
/// once for all three) and returns the executable and the folder they
/// were built in.
fn build_wloc() -> (PathBuf, PathBuf) {
    let target_dir = cross_build();
    let file = target_dir.join(TARGET).join(PROFILE).join("wloc");
    assert!(file.exists(), "{} was not built", file.display());
    (file, target_dir)
}

/// Which `wloc` runs a command.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Host {
    X86,
    Arm,
}

/// What both hosts run with: a policy file of their own (empty unless a
/// test writes it), no components from the environment, a user data
/// folder and the C locale.
struct Env {
    dir: TempDir,
    arm: &'static Arm,
}

impl Env {
    fn new(tag: &str, arm: &'static Arm) -> Env {
        let dir = TempDir::new(&format!("aarch64-{tag}"));
        std::fs::write(dir.0.join("policy.toml"), "").unwrap();
        Env { dir, arm }
    }

    fn policy(&self) -> PathBuf {
        self.dir.0.join("policy.toml")
    }

    fn cmd(&self, host: Host) -> Command {
        let mut c = match host {
            Host::X86 => Command::new(wloc()),
            Host::Arm => {
                let mut c = Command::new(&self.arm.qemu);
                c.args([LOADER, "--library-path", LIB]).arg(&self.arm.wloc);
                c.env("WLOC_CACHE_DIR", &self.arm.cache);
                c
            }
        };
        if host == Host::X86 {
            c.env("WLOC_CACHE_DIR", self.dir.0.join("cache-x86"));
        }
        c.env("LC_ALL", "C")
            .env("WLOC_POLICY", self.policy())
            .env("XDG_DATA_HOME", self.dir.0.join("data"))
            .env_remove("WLOC_COMPONENTS_PATH")
            .env_remove("WLOC_COMPONENTS")
            .env_remove("WLOC_IMAGE");
        c
    }

    fn run<S: AsRef<std::ffi::OsStr>>(&self, host: Host, args: &[S]) -> Output {
        self.cmd(host).args(args).output().expect("wloc runs")
    }

    /// Runs `args` on both hosts and fails unless both succeed with the
    /// same standard output; returns it.
    fn same<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(&self, args: &[S]) -> String {
        let x = self.run(Host::X86, args);
        let a = self.run(Host::Arm, args);
        assert!(
            x.status.success(),
            "x86_64 wloc {args:?}: {}",
            show_output(&x)
        );
        assert!(
            a.status.success(),
            "aarch64 wloc {args:?}: {}",
            show_output(&a)
        );
        assert!(
            x.stdout == a.stdout,
            "wloc {args:?} differs between the hosts:\n{}",
            first_difference(&x.stdout, &a.stdout)
        );
        String::from_utf8_lossy(&x.stdout).into_owned()
    }
}

/// The first line where two outputs differ, for assertion messages.
fn first_difference(x: &[u8], a: &[u8]) -> String {
    let (x, a) = (String::from_utf8_lossy(x), String::from_utf8_lossy(a));
    let mut xl = x.lines();
    let mut al = a.lines();
    for n in 1.. {
        match (xl.next(), al.next()) {
            (None, None) => return "same lines, different bytes".into(),
            (l, r) if l != r => return format!("line {n}:\n  x86_64:  {l:?}\n  aarch64: {r:?}"),
            _ => {}
        }
    }
    unreachable!()
}

/// The `/proc/cpuinfo` of a Linux recording, read from its tarball.
fn recorded_cpuinfo(tarball: &Path) -> Option<String> {
    use std::io::Read;
    let f = std::fs::File::open(tarball).ok()?;
    let mut archive = tar::Archive::new(bzip2::read::BzDecoder::new(f));
    for entry in archive.entries().ok()? {
        let mut e = entry.ok()?;
        if e.path().ok()?.ends_with("proc/cpuinfo") {
            let mut s = String::new();
            e.read_to_string(&mut s).ok()?;
            return Some(s);
        }
    }
    None
}

/// Whether a `/proc/cpuinfo` is an ARM machine's (32 or 64 bits): the
/// kernel's ARM fields, or an ARM processor name.
fn is_arm(cpuinfo: &str) -> bool {
    cpuinfo.lines().any(|l| {
        let Some((key, value)) = l.split_once(':') else {
            return false;
        };
        let key = key.trim();
        matches!(key, "CPU architecture" | "CPU implementer")
            || (matches!(key, "Processor" | "model name")
                && (value.contains("ARM") || value.contains("AArch64")))
    })
}

/// The Linux recordings (names without `.tar.bz2`), ARM ones first.
fn recordings() -> (Vec<String>, Vec<String>) {
    let dir = common::conformance().join("linux");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let n = e.ok()?.file_name().to_string_lossy().into_owned();
            n.strip_suffix(".tar.bz2").map(str::to_string)
        })
        .collect();
    names.sort();
    names.into_iter().partition(|n| {
        recorded_cpuinfo(&dir.join(format!("{n}.tar.bz2"))).is_some_and(|c| is_arm(&c))
    })
}

#[test]
fn arm_recordings_are_recognised() {
    assert!(is_arm("Processor\t: ARMv7 Processor rev 1 (v7l)\n"));
    assert!(is_arm(
        "processor\t: 0\nCPU implementer\t: 0x41\nCPU architecture: 8\n"
    ));
    assert!(!is_arm("processor\t: 0\nmodel name\t: Intel(R) Xeon(R)\n"));
    assert!(!is_arm("processor  : 0\narch       : IA-64\n"));
}

/// Lists a recording (unpacked under `tmp`) on both hosts: console, verbose
/// and XML.
fn same_fsroot(env: &Env, name: &str) {
    let tmp = TempDir::new("aarch64-rec");
    let root = common::unpack(name, &tmp.0);
    let root = root.to_str().unwrap();
    for extra in [&[][..], &["-v"], &["--of", "xml"]] {
        let mut args = vec!["ls", "-i", root, "--if", "fsroot"];
        args.extend_from_slice(extra);
        let out = env.same(&args);
        assert!(out.contains("PU"), "{name} {extra:?}: {out}");
    }
}

#[test]
fn every_arm_recording_lists_the_same_on_both_hosts() {
    let Some(arm) = arm() else { return };
    let env = Env::new("arm-recordings", arm);
    let (arm_cases, _) = recordings();
    assert!(
        !arm_cases.is_empty(),
        "no ARM recording found in tests/data/conformance/linux"
    );
    for name in &arm_cases {
        same_fsroot(&env, name);
    }
}

#[test]
fn other_inputs_list_the_same_on_both_hosts() {
    let Some(arm) = arm() else { return };
    let env = Env::new("inputs", arm);
    // One recording in five of the other architectures.
    let (_, others) = recordings();
    for name in others.iter().step_by(5) {
        same_fsroot(&env, name);
    }
    let conf = common::conformance();
    // One XML case in six.
    let mut xml: Vec<PathBuf> = std::fs::read_dir(conf.join("xml"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    xml.sort();
    assert!(xml.len() >= 10);
    for file in xml.iter().step_by(6) {
        let f = file.to_str().unwrap();
        env.same(&["ls", "-i", f, "--of", "xml"]);
        env.same(&["ls", "-i", f, "-v"]);
    }
    // CPUID dumps recorded on x86 machines: the x86 component runs from
    // the recorded leaves on either host.
    let mut dumps: Vec<PathBuf> = std::fs::read_dir(conf.join("x86"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".tar.bz2"))
        .collect();
    dumps.sort();
    for tarball in dumps.iter().step_by(7) {
        let tmp = TempDir::new("aarch64-cpuid");
        let f = std::fs::File::open(tarball).unwrap();
        tar::Archive::new(bzip2::read::BzDecoder::new(f))
            .unpack(&tmp.0)
            .unwrap();
        let top = std::fs::read_dir(&tmp.0).unwrap().next().unwrap().unwrap();
        let dir = top.path();
        let out = env.same(&[
            "ls",
            "-i",
            dir.to_str().unwrap(),
            "--if",
            "cpuid",
            "--of",
            "xml",
        ]);
        assert!(out.contains("type=\"PU\""), "{}: {out}", tarball.display());
    }
    for desc in [
        "pack:2 core:4 pu:2",
        "node:2 pack:2 l3:1 core:6 l2:1 l1d:1 pu:2",
        "pack:4 [numa] group:2 core:8 pu:1",
    ] {
        env.same(&["ls", "-i", desc, "--of", "xml"]);
        env.same(&["ls", "-i", desc, "--of", "synthetic"]);
        env.same(&[
            "calc",
            "-i",
            desc,
            "core:3-5",
            "--hierarchical",
            "package.core",
        ]);
    }
}

/// The `(name, digest)` of every component `wloc component list` shows.
fn listed_digests(listing: &str) -> Vec<(String, String)> {
    listing
        .lines()
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let d = w.iter().find(|x| x.starts_with("sha256:"))?;
            Some((w[0].to_string(), d.to_string()))
        })
        .collect()
}

/// A third-party discovery component (not built in, unsigned) copied
/// into `dir`: `hostile-read-dotdot`, which reads `/sys/ok` and tries to
/// leave its grant through `..`, and reports each answer as an info.
fn third_party(dir: &Path) -> PathBuf {
    let built = Path::new(wloc_runtime::test_components_dir()).join("hostile-read-dotdot.wasm");
    assert!(built.is_file(), "{} was not built", built.display());
    let file = dir.join("third-party.wasm");
    std::fs::copy(&built, &file).unwrap();
    file
}

/// A recorded tree holding `/sys/ok`, and the arguments of `wloc ls` that
/// run `component` on it.
fn fsroot_run(dir: &Path, component: &Path) -> Vec<String> {
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("sys")).unwrap();
    std::fs::write(root.join("sys/ok"), "fine\n").unwrap();
    [
        "ls",
        "-i",
        root.to_str().unwrap(),
        "--if",
        "fsroot",
        "--no-annotate",
        "--component",
        component.to_str().unwrap(),
        "--of",
        "xml",
    ]
    .map(String::from)
    .to_vec()
}

/// What the third-party component reports when it ran.
const RAN: &str = "name=\"control /sys/ok\" value=\"read fine\"";

#[test]
fn the_same_component_files_give_the_same_results() {
    let Some(arm) = arm() else { return };
    let env = Env::new("components", arm);
    // The built-in components: the same bytes in both executables.
    let x = env.run(Host::X86, &["component", "list"]);
    let a = env.run(Host::Arm, &["component", "list"]);
    assert!(
        x.status.success() && a.status.success(),
        "{}",
        show_output(&a)
    );
    let builtin = listed_digests(&String::from_utf8_lossy(&x.stdout));
    assert!(builtin.len() >= 7, "{builtin:?}");
    assert_eq!(
        builtin,
        listed_digests(&String::from_utf8_lossy(&a.stdout)),
        "the built-in components differ between the hosts"
    );
    // One of them as a file, inspected on both: same digest, same verdict.
    let synthetic = env.dir.0.join("synthetic.wasm");
    std::fs::write(&synthetic, wloc_runtime::builtin::synthetic_wasm()).unwrap();
    let inspected = env.same(&["component", "inspect", synthetic.to_str().unwrap()]);
    let digest = wloc_runtime::cache::component_digest(wloc_runtime::builtin::synthetic_wasm());
    assert!(inspected.contains(&digest[..12]), "{inspected}");

    // A third-party component: refused until allowed, then admitted by
    // digest, with the same result on both hosts.
    let unsigned = third_party(&env.dir.0);
    let ls = |file: &Path| fsroot_run(&env.dir.0, file);
    for host in [Host::X86, Host::Arm] {
        let o = env.run(host, &ls(&unsigned));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("not allowed") && !String::from_utf8_lossy(&o.stdout).contains(RAN),
            "{host:?} ran a component the policy does not allow: {}",
            show_output(&o)
        );
    }
    let o = env.run(
        Host::X86,
        &[
            "component",
            "allow",
            unsigned.to_str().unwrap(),
            "--files",
            "/sys",
        ],
    );
    assert!(o.status.success(), "{}", show_output(&o));
    let by_digest = env.same(&ls(&unsigned));
    assert!(
        by_digest.contains(RAN) && by_digest.contains("value=\"denied\""),
        "the component's report is missing: {by_digest}"
    );

    // Signed on x86_64 by a publisher the policy trusts: admitted by
    // signature on both hosts, same result.
    let key = env.dir.0.join("acme");
    let o = env.run(Host::X86, &["component", "keygen", key.to_str().unwrap()]);
    assert!(o.status.success(), "{}", show_output(&o));
    let public = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let signed = env.dir.0.join("signed.wasm");
    let o = env.run(
        Host::X86,
        &[
            "component",
            "sign",
            unsigned.to_str().unwrap(),
            "--key",
            &format!("{}.key", key.display()),
            "-o",
            signed.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", show_output(&o));
    std::fs::write(
        env.policy(),
        format!(
            "[[publisher]]\nname = \"acme\"\nkey = \"{public}\"\n\n[[allow]]\npublisher = \"acme\"\nname = \"hostile-read-dotdot\"\nfiles = [\"/sys\"]\n"
        ),
    )
    .unwrap();
    let verified = env.same(&["component", "verify", signed.to_str().unwrap()]);
    assert!(verified.contains("publisher acme"), "{verified}");
    let by_signature = env.same(&ls(&signed));
    assert_eq!(by_signature, by_digest);
    // The unsigned file is not admitted by that policy, on either host; a
    // changed byte breaks the signature on both.
    let mut bytes = std::fs::read(&signed).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    let tampered = env.dir.0.join("tampered.wasm");
    std::fs::write(&tampered, &bytes).unwrap();
    for host in [Host::X86, Host::Arm] {
        for (file, why) in [(&unsigned, "not allowed"), (&tampered, "signature")] {
            let o = env.run(host, &ls(file));
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                (err.contains(why) || err.contains("invalid"))
                    && !String::from_utf8_lossy(&o.stdout).contains(RAN),
                "{host:?} ran {}: {}",
                file.display(),
                show_output(&o)
            );
        }
    }
}

#[test]
fn compiled_code_is_cached_per_host() {
    let Some(arm) = arm() else { return };
    let env = Env::new("cache", arm);
    let file = third_party(&env.dir.0);
    let o = env.run(
        Host::X86,
        &[
            "component",
            "allow",
            file.to_str().unwrap(),
            "--files",
            "/sys",
        ],
    );
    assert!(o.status.success(), "{}", show_output(&o));
    let digest = wloc_runtime::cache::component_digest(&std::fs::read(&file).unwrap());
    // One cache folder for both hosts, as a home folder on a network
    // filesystem shared by x86_64 and aarch64 nodes.
    let cache = env.dir.0.join("shared-cache");
    let args = fsroot_run(&env.dir.0, &file);
    let run = |host| {
        let o = env
            .cmd(host)
            .env("WLOC_CACHE_DIR", &cache)
            .args(&args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{host:?}: {}", show_output(&o));
        assert!(String::from_utf8_lossy(&o.stdout).contains(RAN));
        o.stdout
    };
    let artifacts = || -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&cache)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(".cwasm"))
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    let first = run(Host::X86);
    assert_eq!(artifacts().len(), 1, "{:?}", artifacts());
    assert_eq!(run(Host::Arm), first);
    let both = artifacts();
    assert_eq!(both.len(), 2, "one artifact per host: {both:?}");
    for (arch, name) in ["aarch64", "x86_64"].iter().zip(&both) {
        assert!(
            name.starts_with(&digest) && name.contains(&format!("-{arch}-")),
            "{name} is not {digest}'s {arch} code"
        );
    }
    // Each host finds its own artifact again and writes no other.
    let times: Vec<_> = both
        .iter()
        .map(|n| {
            std::fs::metadata(cache.join(n))
                .unwrap()
                .modified()
                .unwrap()
        })
        .collect();
    assert_eq!(run(Host::Arm), first);
    assert_eq!(run(Host::X86), first);
    assert_eq!(artifacts(), both);
    let again: Vec<_> = both
        .iter()
        .map(|n| {
            std::fs::metadata(cache.join(n))
                .unwrap()
                .modified()
                .unwrap()
        })
        .collect();
    assert_eq!(times, again, "an artifact was written again");
}

#[test]
fn cpuid_discovery_is_absent_on_aarch64_and_says_so() {
    let Some(arm) = arm() else { return };
    let env = Env::new("cpuid", arm);
    let o = env.run(Host::Arm, &["ls", "--if", "cpuid"]);
    assert!(!o.status.success(), "{}", show_output(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("CPUID") && err.contains("x86-64"), "{err}");
    let dir = env.dir.0.join("dump");
    let o = env.run(Host::Arm, &["gather-cpuid", dir.to_str().unwrap()]);
    assert!(!o.status.success(), "{}", show_output(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("x86_64"), "{err}");
    // The x86 component itself is there (it reads recorded dumps, see
    // other_inputs_list_the_same_on_both_hosts); this machine's live
    // discovery does not need CPUID.
    let o = env.run(Host::Arm, &["ls", "--of", "synthetic"]);
    assert!(o.status.success(), "{}", show_output(&o));
}

/// The `Cpus_allowed_list` of a `/proc/PID/status` text.
fn cpus_allowed(status: &[u8]) -> String {
    String::from_utf8_lossy(status)
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| panic!("no Cpus_allowed_list"))
}

#[test]
fn binding_works_under_the_emulator() {
    let Some(arm) = arm() else { return };
    let env = Env::new("bind", arm);
    // This machine, discovered by the aarch64 wloc under the emulator.
    let n = env.same(&["calc", "--number-of", "pu", "machine:0"]);
    let n: usize = n.trim().parse().expect("a PU count");
    assert!(n >= 1);
    let last = n - 1;
    for target in ["pu:0".to_string(), format!("pu:{last}")] {
        let o = env.run(
            Host::Arm,
            &["bind", &target, "--", "cat", "/proc/self/status"],
        );
        assert!(o.status.success(), "{}", show_output(&o));
        let x = env.run(
            Host::X86,
            &["bind", &target, "--", "cat", "/proc/self/status"],
        );
        assert_eq!(cpus_allowed(&o.stdout), cpus_allowed(&x.stdout), "{target}");
    }
    // --get inside a command bound by the other host's wloc.
    let arm_get = format!(
        "{} {LOADER} --library-path {LIB} {} bind --get",
        arm.qemu.display(),
        arm.wloc.display()
    );
    let o = env
        .cmd(Host::X86)
        .args(["bind", &format!("pu:{last}"), "--", "sh", "-c", &arm_get])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show_output(&o));
    let x = env.run(Host::X86, &["calc", &format!("pu:{last}")]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        String::from_utf8_lossy(&x.stdout).trim()
    );
    for args in [
        &["calc", "pu:0", "--intersect", "core"][..],
        &["calc", "machine:0", "--hierarchical", "core.pu"],
        &["calc", "-p", "pu:0", "--po"],
        &["calc", "--largest", "core:0"],
    ] {
        env.same(args);
    }
}

#[test]
fn images_written_on_one_host_are_adopted_on_the_other() {
    let Some(arm) = arm() else { return };
    let env = Env::new("image", arm);
    let tmp = TempDir::new("aarch64-image-rec");
    let (arm_cases, _) = recordings();
    let root = common::unpack(&arm_cases[0], &tmp.0);
    let xml_case = common::conformance().join("xml/16amd64-4distances.xml");
    let inputs: Vec<Vec<String>> = vec![
        vec![
            "-i".into(),
            root.display().to_string(),
            "--if".into(),
            "fsroot".into(),
        ],
        vec!["-i".into(), xml_case.display().to_string()],
        vec!["-i".into(), "node:2 pack:1 core:3 pu:2".into()],
    ];
    for (n, input) in inputs.iter().enumerate() {
        let img = |host: Host| env.dir.0.join(format!("{host:?}-{n}.img"));
        for host in [Host::X86, Host::Arm] {
            let mut args = vec!["ls".to_string()];
            args.extend(input.iter().cloned());
            args.extend([
                "--of".into(),
                "image".into(),
                img(host).display().to_string(),
            ]);
            let o = env.run(host, &args);
            assert!(o.status.success(), "{host:?} {args:?}: {}", show_output(&o));
        }
        assert!(
            std::fs::read(img(Host::X86)).unwrap() == std::fs::read(img(Host::Arm)).unwrap(),
            "the hosts write different images of {input:?}"
        );
        let mut direct = vec!["ls".to_string()];
        direct.extend(input.iter().cloned());
        direct.extend(["--of".into(), "xml".into()]);
        let expected = env.same(&direct);
        for (writer, reader) in [(Host::X86, Host::Arm), (Host::Arm, Host::X86)] {
            let file = img(writer).display().to_string();
            let o = env.run(reader, &["ls", "-i", &file, "--of", "xml"]);
            assert!(
                o.status.success(),
                "{reader:?} adopting {writer:?}'s image: {}",
                show_output(&o)
            );
            assert!(
                String::from_utf8_lossy(&o.stdout) == expected,
                "{reader:?} adopting {writer:?}'s image of {input:?}:\n{}",
                first_difference(expected.as_bytes(), &o.stdout)
            );
            // The environment variable, as a launcher hands it to ranks.
            let o = env
                .cmd(reader)
                .env("WLOC_IMAGE", &file)
                .args(["calc", "--number-of", "pu", "machine:0"])
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", show_output(&o));
        }
    }
}

/// What hwloc's own test kit (`tests/data/hwloc-2.9/run.sh`) says: its
/// list of tests, and the private `config.h` it writes for Linux with
/// glibc.  Read from the script so that the list stays in one place.
fn hwloc_test_kit() -> (Vec<String>, String) {
    let script = std::fs::read_to_string(workspace().join("tests/data/hwloc-2.9/run.sh"))
        .expect("run.sh of the hwloc 2.9 test kit");
    let config = script
        .split_once("<<'H'\n")
        .and_then(|(_, rest)| rest.split_once("\nH\n"))
        .map(|(c, _)| c.to_string())
        .expect("run.sh writes private/autogen/config.h");
    let tests = script
        .split_once("\nall=\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(t, _)| t.split_whitespace().map(String::from).collect())
        .expect("run.sh lists its tests");
    (tests, config)
}

/// wloc's C library built for aarch64 stands in for `libhwloc.so.15`
/// under the emulator: hwloc 2.9.0's own C API tests, cross-compiled with
/// `aarch64-linux-gnu-gcc` against hwloc's headers, pass against it, with
/// this machine discovered by the aarch64 discovery module (the same
/// sandboxed Linux component).  Two are left out: `linux-libnuma` needs
/// libnuma built for aarch64, which no package of the cross toolchain
/// provides, and `shmem` runs itself again through `/bin/sh`, which
/// needs the kernel to start aarch64 programs (binfmt_misc), which
/// user emulation without it cannot.
#[test]
fn the_c_library_passes_hwloc_tests_under_the_emulator() {
    let Some(arm) = arm() else { return };
    let release = arm.wloc.parent().expect("the build's folder").to_path_buf();
    for f in ["libhwloc.so", "libwloc_discover.so"] {
        assert!(release.join(f).exists(), "{f} was not built");
    }
    let tmp = TempDir::new("aarch64-ctests");
    // The soname programs look for, linked to the library's own file so
    // that the discovery module is found beside it.
    let libdir = tmp.0.join("lib");
    std::fs::create_dir_all(&libdir).unwrap();
    std::os::unix::fs::symlink(release.join("libhwloc.so"), libdir.join("libhwloc.so.15")).unwrap();
    std::os::unix::fs::symlink(release.join("libhwloc.so"), libdir.join("libhwloc.so")).unwrap();

    let kit = workspace().join("tests/data/hwloc-2.9");
    let (tests, config) = hwloc_test_kit();
    let work = tmp.0.join("work");
    let private = work.join("inc/private");
    std::fs::create_dir_all(private.join("autogen")).unwrap();
    for h in ["misc.h", "debug.h"] {
        std::fs::copy(kit.join("include/private").join(h), private.join(h)).unwrap();
    }
    // Not an x86 machine: the x86 CPUID macros stay undefined.
    let config: String = config
        .lines()
        .filter(|l| !l.contains("X86_CPUID"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(private.join("autogen/config.h"), config).unwrap();
    let top = work.join("top/tests/hwloc");
    std::fs::create_dir_all(&top).unwrap();
    std::os::unix::fs::symlink(kit.join("xml"), top.join("xml")).unwrap();

    let (mut passed, mut failed) = (Vec::new(), Vec::new());
    for t in tests
        .iter()
        .filter(|t| !matches!(t.as_str(), "linux-libnuma" | "shmem"))
    {
        let source = kit.join("tests").join(format!("{t}.c"));
        if !source.exists() {
            continue;
        }
        let exe = work.join(t);
        let o = Command::new(format!("/usr/bin/{LINKER}"))
            .args(["-O1", "-w"])
            .arg("-I")
            .arg(work.join("inc"))
            .arg("-I")
            .arg(kit.join("include"))
            .arg(format!("-DXMLTESTDIR=\"{}/\"", top.join("xml").display()))
            .arg("-o")
            .arg(&exe)
            .arg(&source)
            .arg("-L")
            .arg(&libdir)
            .args(["-lhwloc", "-lpthread"])
            .output()
            .expect("the cross compiler runs");
        if !o.status.success() {
            failed.push(format!(
                "{t} (build): {}",
                String::from_utf8_lossy(&o.stderr)
            ));
            continue;
        }
        let runs: &[&[&str]] = if t == "xmlbuffer" {
            &[&["0", "0"], &["1", "1"]]
        } else {
            &[&[]]
        };
        let start = Instant::now();
        let mut ok = true;
        for args in runs {
            let o = Command::new("timeout")
                .arg("600")
                .arg(&arm.qemu)
                .arg(LOADER)
                .arg("--library-path")
                .arg(format!("{}:{LIB}", libdir.display()))
                .arg(&exe)
                .args(*args)
                .current_dir(&work)
                .env("HWLOC_TOP_SRCDIR", work.join("top"))
                .env("WLOC_CACHE_DIR", &arm.cache)
                .env_remove("HWLOC_XMLFILE")
                .env_remove("HWLOC_SYNTHETIC")
                .env_remove("HWLOC_FSROOT")
                .env_remove("WLOC_IMAGE")
                .output()
                .expect("the emulator runs");
            // 77: the test skips itself, as automake's driver reads it.
            if !matches!(o.status.code(), Some(0) | Some(77)) {
                ok = false;
                failed.push(format!("{t} {args:?}: {}", show_output(&o)));
            }
        }
        eprintln!(
            "{t}: {} in {:.1} s",
            if ok { "pass" } else { "FAIL" },
            start.elapsed().as_secs_f64()
        );
        if ok {
            passed.push(t.clone());
        }
    }
    eprintln!("{} hwloc C tests pass on aarch64", passed.len());
    assert!(
        failed.is_empty(),
        "{} fail:\n{}",
        failed.len(),
        failed.join("\n")
    );
    // The kit's 28 (its run.sh leaves out hwloc_api_version, which wants
    // 2.9's API number, and hwloc_synthetic, which wants 2.9's synthetic
    // memory) but linux-libnuma and shmem (see above).
    assert_eq!(passed.len(), 26, "{passed:?}");
}
