//! Helpers shared by the end-to-end tests: where the `wloc` binary, the
//! conformance recordings and hwloc's tools are.
#![allow(dead_code)]

pub mod hwloc_reference;
pub mod packages;
pub mod slurm_cluster;
pub mod topology_env;

pub use packages::require_packages;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `wloc` binary cargo built for these tests.  The first call also
/// makes sure the oracles the tests compare with are installed.
pub fn wloc() -> PathBuf {
    static ORACLES: std::sync::Once = std::sync::Once::new();
    ORACLES.call_once(|| {
        if let Err(e) = require_packages(&[
            ("/usr/bin/lstopo-no-graphics", "hwloc"),
            // hwloc's PCI discovery (a recommended package, left out by
            // minimal installs) and the names it shows.
            (
                "/usr/lib/x86_64-linux-gnu/hwloc/hwloc_pci.so",
                "libhwloc-plugins",
            ),
            ("/usr/share/misc/pci.ids", "pci.ids"),
        ]) {
            eprintln!("warning: {e}");
        }
    });
    PathBuf::from(env!("CARGO_BIN_EXE_wloc"))
}

/// Makes sure a Rust target is installed for the toolchain running the
/// tests (rustup installs a `rust-toolchain.toml`'s targets only along
/// with the toolchain itself).
pub fn require_rust_target(target: &str) -> Result<(), String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let sysroot = Command::new(rustc)
        .current_dir(workspace())
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
    if sysroot.join("lib/rustlib").join(target).is_dir() {
        return Ok(());
    }
    let ok = Command::new("rustup")
        .current_dir(workspace())
        .args(["target", "add", target])
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the Rust target {target} is missing: rustup target add {target}"
        ))
    }
}

/// Prints how long a slow step of a test took (a build, a boot), as a
/// line `timing: WHAT: N s` on the test process's own standard error:
/// written directly rather than with `eprintln!`, which the test harness
/// captures and shows only for failing tests, so that every run shows
/// where its minutes go (docs/testing.md collects them).
pub fn timing(what: &str, since: std::time::Instant) {
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "timing: {what}: {:.1} s",
        since.elapsed().as_secs_f64()
    );
}

/// The workspace root.
pub fn workspace() -> PathBuf {
    // The CLI crate is `host/cli`, two folders below the root.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("the CLI crate sits two folders below the workspace root")
        .to_path_buf()
}

/// The conformance recordings of the repository (`tests/data/conformance`).
pub fn conformance() -> PathBuf {
    let dir = workspace().join("tests/data/conformance");
    assert!(
        dir.join("run.py").exists(),
        "conformance recordings not found at {}: the checkout is incomplete",
        dir.display()
    );
    dir
}

/// Runs `wloc` with arguments.
pub fn run_wloc<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new(wloc())
        .args(args)
        .env("LC_ALL", "C")
        .output()
        .expect("wloc runs")
}

/// Runs `wloc ls` to rewrite the XML topology `src` as an hwloc 2 XML
/// document at `dst`, with every I/O object when `whole_io`, so that
/// hwloc 2.9 reads what wloc reads.
pub fn export_v2(src: &Path, dst: &Path, whole_io: bool) -> std::process::Output {
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "ls".as_ref(),
        "-i".as_ref(),
        src.as_os_str(),
        "--if".as_ref(),
        "xml".as_ref(),
        "--of".as_ref(),
        "xml".as_ref(),
        "--export-xml-flags".as_ref(),
        "2".as_ref(),
    ];
    if whole_io {
        args.push("--whole-io".as_ref());
    }
    args.push(dst.as_os_str());
    run_wloc(args)
}

/// [`export_v2`] of the conformance XML case `case`; panics naming the
/// case when wloc fails.
pub fn export_case_v2(case: &str, dst: &Path, whole_io: bool) {
    let o = export_v2(&conformance().join("xml").join(case), dst, whole_io);
    assert!(
        o.status.success(),
        "cannot export {case} as hwloc 2 XML: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Prints how many invocations of `tool` were compared and those that
/// differ, then fails unless there were at least `min` and none differ.
pub fn assert_no_differences(tool: &str, count: usize, bad: &[String], min: usize) {
    println!("{count} {tool} invocations compared, {} differ", bad.len());
    for b in bad {
        println!("{b}");
    }
    assert!(count >= min, "only {count} invocations");
    assert!(
        bad.is_empty(),
        "{} of {count} invocations differ (listed above)",
        bad.len()
    );
}

/// Whether a tool from Debian's hwloc package is installed; the tests that
/// compare with hwloc fail with this message when it is not.
pub fn require_hwloc() {
    let _ = wloc();
    let ok = Command::new("lstopo-no-graphics")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "hwloc's lstopo-no-graphics is required for differential tests: apt-get install hwloc"
    );
}

/// A fresh temporary directory removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// Creates a unique directory under the system temp dir.
    pub fn new(tag: &str) -> Self {
        let p = std::env::temp_dir().join(format!(
            "wloc-test-{tag}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        std::fs::create_dir_all(&p).expect("temp dir");
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the conformance runner over one folder of cases at a level and
/// fails with its report unless every case passed.
pub fn run_conformance(folder: &str, level: &str) {
    let conf = conformance();
    let out = Command::new("python3")
        .arg(conf.join("run.py"))
        .arg("--tool")
        .arg(wloc())
        .args(["--level", level])
        .arg(conf.join(folder))
        // The expected documents are hwloc 3.0 XML: compare like with like.
        .env("WLOC_XML_VERSION", "3")
        .output()
        .expect("python3 runs the conformance runner");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or("");
    assert!(
        out.status.success() && last.ends_with(" 0 failed"),
        "conformance {folder} cases failed at {level} level:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Unpacks the Linux conformance recording `name` into `dest` and
/// returns its top directory.
pub fn unpack(name: &str, dest: &Path) -> PathBuf {
    let tarball = conformance().join("linux").join(format!("{name}.tar.bz2"));
    let f = std::fs::File::open(&tarball).unwrap_or_else(|e| panic!("{}: {e}", tarball.display()));
    tar::Archive::new(bzip2::read::BzDecoder::new(f))
        .unpack(dest)
        .unwrap_or_else(|e| panic!("unpacking {}: {e}", tarball.display()));
    let top: Vec<_> = std::fs::read_dir(dest)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(top.len(), 1, "{name} holds one top directory");
    top[0].clone()
}

/// Compares two XML topologies at full level with the conformance
/// suite's `compare.py`; the error is its report.
pub fn compare_full(expected: &Path, actual: &Path) -> Result<(), String> {
    let c = Command::new("python3")
        .arg(conformance().join("compare.py"))
        .arg(expected)
        .arg(actual)
        .args(["--level", "full"])
        .output()
        .expect("compare.py runs");
    if c.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&c.stdout),
            String::from_utf8_lossy(&c.stderr)
        ))
    }
}

/// The value of attribute `name` of the root (Machine) object of an XML
/// topology.
pub fn root_attr(xml: &str, name: &str) -> Option<String> {
    let start = xml.find("type=\"Machine\"")?;
    let tag = &xml[start..start + xml[start..].find('>')?];
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    Some(tag[at..at + tag[at..].find('"')?].to_string())
}

/// hwloc 2.9's XML of a recorded tree (`lstopo-no-graphics --of xml` with
/// only its Linux backend, `HWLOC_FSROOT=root`), with extra lstopo options.
pub fn hwloc_xml_of_fsroot(root: &Path, extra: &[&str]) -> String {
    let out = Command::new("lstopo-no-graphics")
        .args(extra)
        .args(["--of", "xml", "-"])
        .env("HWLOC_COMPONENTS", "linux,stop")
        .env("HWLOC_FSROOT", root)
        .env("HWLOC_HIDE_ERRORS", "2")
        .output()
        .expect("lstopo-no-graphics runs");
    assert!(out.status.success(), "hwloc reads {}", root.display());
    String::from_utf8(out.stdout).expect("hwloc writes UTF-8")
}

/// A command's exit code, standard output and standard error, for
/// assertion messages.
pub fn show_output(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Asserts that a command (described by `what`) succeeded.
pub fn assert_success(what: &str, o: &Output) {
    assert!(o.status.success(), "{what} failed: {}", show_output(o));
}

/// How a child process ended: its exit code (minus the signal number when
/// killed), its peak resident memory from the kernel's accounting of the
/// process itself (`wait4`), and how long it ran.
pub struct Ended {
    /// Exit code, or minus the signal that killed it.
    pub code: i32,
    /// Peak resident memory, KiB.
    pub peak_kib: i64,
    /// Wall time from the call.
    pub elapsed: std::time::Duration,
}

/// A command that runs `program` under GNU time, for [`wait_measured`]:
/// add arguments, environment and standard streams as for `program`.
///
/// The peak memory is then the program's own: GNU time forks it from its
/// own small process.  `wait4` on a child of this test process would
/// count this process's memory at the fork (the kernel keeps the larger
/// of the memory before and after `exec`), and the test process, which
/// runs many tests at once, may hold hundreds of MiB.
pub fn measured(program: impl AsRef<std::ffi::OsStr>) -> (Command, Measure) {
    use std::os::unix::process::CommandExt;
    packages::require_packages(&[("/usr/bin/time", "time")])
        .unwrap_or_else(|m| panic!("{m}: the memory measures need GNU time"));
    let dir = TempDir::new("measured");
    let report = dir.0.join("time");
    let mut c = Command::new("/usr/bin/time");
    c.arg("-f")
        .arg("%M %x")
        .arg("-o")
        .arg(&report)
        .arg(program)
        .process_group(0);
    (c, Measure { _dir: dir, report })
}

/// Where GNU time reports on a [`measured`] command.
pub struct Measure {
    _dir: TempDir,
    report: PathBuf,
}

/// Waits for `child` (spawned from [`measured`]), killing it and what it
/// started after `limit`, and says how it ended.
pub fn wait_measured(
    mut child: std::process::Child,
    measure: Measure,
    limit: std::time::Duration,
) -> Ended {
    let t = std::time::Instant::now();
    let pid = child.id() as libc::pid_t;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if t.elapsed() > limit {
            // SAFETY: signals the process group this test created.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let elapsed = t.elapsed();
    let text = std::fs::read_to_string(&measure.report).unwrap_or_default();
    let signal = text
        .lines()
        .find_map(|l| l.strip_prefix("Command terminated by signal "))
        .and_then(|n| n.trim().parse::<i32>().ok());
    let mut fields = text.lines().last().unwrap_or("").split_whitespace();
    let peak_kib = fields.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    let exit = fields.next().and_then(|x| x.parse::<i32>().ok());
    let code = match (signal, exit, status.code()) {
        (Some(sig), _, _) => -sig,
        (None, Some(x), Some(_)) => x,
        (None, _, Some(c)) => c,
        // GNU time itself was killed (the limit): as the command was.
        (None, _, None) => -libc::SIGKILL,
    };
    Ended {
        code,
        peak_kib,
        elapsed,
    }
}

/// Unpacks the recorded cluster `tests/data/fabric/NAME` (a `.txz`
/// archive) into `dest`, made if missing, with tar and xz-utils.
pub fn unpack_fabric(name: &str, dest: &Path) {
    require_packages(&[("/usr/bin/xz", "xz-utils")]).expect("xz");
    let archive = workspace().join("tests/data/fabric").join(name);
    assert!(archive.exists(), "{} is missing", archive.display());
    std::fs::create_dir_all(dest).unwrap();
    let st = Command::new("tar")
        .arg("xJf")
        .arg(&archive)
        .arg("-C")
        .arg(dest)
        .status()
        .expect("tar runs");
    assert!(st.success(), "tar xJf {} failed", archive.display());
}

/// Runs `wloc ARGS` in the folder `cwd`.
pub fn run_wloc_in(args: &[&str], cwd: &Path) -> Output {
    Command::new(wloc())
        .args(args)
        .current_dir(cwd)
        .env("LC_ALL", "C")
        .output()
        .expect("wloc runs")
}

/// Every XML document of the conformance recordings, sorted: the xml/
/// cases and the expected results of the linux/ and x86/ cases.
pub fn conformance_xmls() -> Vec<PathBuf> {
    let conf = conformance();
    let mut inputs: Vec<PathBuf> = ["xml", "linux", "x86"]
        .iter()
        .flat_map(|d| std::fs::read_dir(conf.join(d)).expect("conformance folder"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    inputs.sort();
    inputs
}

/// The CPUs the calling thread may use, from the kernel.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; the call fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
            0
        );
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&i| libc::CPU_ISSET(i, &set))
            .collect()
    }
}

/// How wloc's run of a command line differs from the hwloc tool's: `None`
/// when both print the same standard output and wloc did not panic, else
/// a report with the command, both outputs and wloc's standard error.
pub fn stdout_mismatch(
    tool: &str,
    args: &[String],
    hwloc: &Output,
    wloc: &Output,
) -> Option<String> {
    let werr = String::from_utf8_lossy(&wloc.stderr);
    if hwloc.stdout == wloc.stdout && !werr.contains("panicked") {
        return None;
    }
    Some(format!(
        "{tool} {}\n  hwloc: {:?}\n  wloc:  {:?}\n  wloc stderr: {}",
        args.iter()
            .map(|a| format!("'{a}'"))
            .collect::<Vec<_>>()
            .join(" "),
        String::from_utf8_lossy(&hwloc.stdout),
        String::from_utf8_lossy(&wloc.stdout),
        werr.trim_end()
    ))
}

/// Waits for `child` with `wait4` and returns how it ended and the peak
/// resident memory the kernel accounted to it, in KiB.
///
/// The peak counts this test process's memory at the fork (see
/// [`measured`]), so it bounds the child's from above.
// The child is reaped by `wait4`, which `Child` does not know of.
#[allow(clippy::zombie_processes)]
pub fn wait4_peak_kib(child: std::process::Child) -> (std::process::ExitStatus, u64) {
    use std::os::unix::process::ExitStatusExt;
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, with valid pointers.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32, "wait4 failed");
    (
        std::process::ExitStatus::from_raw(status),
        usage.ru_maxrss as u64,
    )
}

/// The releases a test names when it accepts, for an invocation, the
/// output of hwloc 2.14's tool or of Debian's hwloc 2.9 tool. The
/// differential tests of `calc`, `info`, `ps` and `ls`'s console listing
/// compare with 2.14 alone ([`hwloc_2_14_tool`]); see
/// `docs/hwloc-differences.md`, "hwloc 2.14 and 2.9", for where 2.9 still runs.
pub const HWLOC_RELEASES: &str = "hwloc 2.14 or hwloc 2.9";

/// A command running hwloc 2.14.0's own tool `name` (built from
/// `tests/data/hwloc-2.14` once per target folder) on its own library:
/// the reference where the tools of hwloc 2.14 and Debian's 2.9 differ
/// (2.14 is the release wloc's commands follow).
pub fn hwloc_2_14_tool(name: &str) -> Command {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let lib = BUILT.get_or_init(|| {
        require_packages(packages::HWLOC_SOURCE_BUILD).unwrap_or_else(|e| panic!("{e}"));
        hwloc_reference::build_reference_library(
            &workspace(),
            Path::new(env!("CARGO_TARGET_TMPDIR")),
        )
        .unwrap_or_else(|e| panic!("{e}"))
    });
    let mut c = Command::new(lib.join("../bin").join(name));
    c.env("LD_LIBRARY_PATH", lib);
    c
}

/// wloc's `libhwloc.so.15`, built with the workspace's tests (the README's
/// test command builds `host/capi`), in a private folder under its soname
/// (`tag` names the folder).
pub fn wloc_libhwloc_dir(tag: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable");
    let deps = exe.parent().expect("deps folder");
    let lib = [deps.join("libhwloc.so"), deps.join("../libhwloc.so")]
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "wloc's libhwloc.so is not built beside {} (cargo test --workspace --release builds it)",
                exe.display()
            )
        });
    let dir = std::env::temp_dir().join(format!("wloc-{tag}-libhwloc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(&lib, dir.join("libhwloc.so.15")).unwrap();
    dir
}

/// How many discoveries an strace log (`-e trace=open,openat,openat2`)
/// shows: each reads cpu0's core id, whatever the library.
pub fn discoveries(trace: &Path) -> usize {
    std::fs::read_to_string(trace)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("cpu0/topology/core_id\"") && !l.contains("= -1"))
        .count()
}
