//! Hostile files against the whole `wloc` command, as someone who hands
//! an admin a folder or a recording would make them: a fabric folder
//! whose links lead out of it (to a secret of the user running wloc, to
//! a process's environment, to another folder), a recording with a FIFO
//! and a device node where DMI files should be, the HTML page, which
//! must not list other users' processes, and inputs that are not regular
//! files: `/dev/zero` and FIFOs named by `-i`, `WLOC_IMAGE` or
//! `HWLOC_XMLFILE`, endless standard input, and CPUID dumps (alone or in
//! a recording) holding FIFOs and links leading out of their folder.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{TempDir, wloc};

/// What no output may hold: the content of the secret file.
const SECRET: &str = "TOPSECRET42";

/// Runs `cmd`, killed and failed after `limit`: a hang is a failure, not
/// a stuck test run.
fn bounded(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("wloc runs");
    // Read both pipes while waiting, so that a large output cannot block
    // the child.
    let out = child.stdout.take().unwrap();
    let err = child.stderr.take().unwrap();
    let read = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let (out, err) = (read(Box::new(out)), read(Box::new(err)));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A fabric folder made by someone else: its good file, a link inside it
/// (kept), and links out of it: to a secret file of the user running
/// wloc (absolute and relative), to a process's environment, and a
/// forwarding-table folder that is a link to the secret's folder.
struct Folder {
    tmp: TempDir,
    fabric: PathBuf,
    secret: PathBuf,
}

impl Folder {
    fn new(tag: &str, good_name: &str, good: &str, secret: &str) -> Folder {
        let tmp = TempDir::new(tag);
        let private = tmp.0.join("private");
        std::fs::create_dir_all(&private).unwrap();
        let secret_file = private.join("ports.txt");
        std::fs::write(&secret_file, secret).unwrap();
        std::fs::write(private.join("ibroute-x-1.txt"), secret).unwrap();
        let fabric = tmp.0.join("fabric");
        let raw = fabric.join("ib-raw");
        std::fs::create_dir_all(&raw).unwrap();
        std::fs::write(raw.join(good_name), good).unwrap();
        let link = |target: &Path, name: &str| {
            std::os::unix::fs::symlink(target, raw.join(name)).unwrap();
        };
        link(Path::new(good_name), "inside.txt");
        link(&secret_file, "leak.txt");
        link(Path::new("../../private/ports.txt"), "relative.txt");
        link(Path::new("/proc/self/environ"), "environ.txt");
        link(&private, "ibroutes-x");
        Folder {
            tmp,
            fabric,
            secret: secret_file,
        }
    }

    /// Runs wloc with a policy and a cache of this test's own.
    fn run(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new(wloc());
        cmd.args(args)
            .env("WLOC_POLICY", self.tmp.0.join("policy.toml"))
            .env("WLOC_CACHE_DIR", self.tmp.0.join("cache"))
            .env("LC_ALL", "C");
        bounded(cmd, Duration::from_secs(120))
    }

    /// Checks that every link out of the folder was named once in a
    /// warning, and that nothing of the secret came out.
    fn check_skipped(&self, o: &Output) {
        let err = text(&o.stderr);
        for name in ["leak.txt", "relative.txt", "environ.txt", "ibroutes-x"] {
            let warned = err
                .lines()
                .filter(|l| l.contains("warning: skipped") && l.contains(&format!("/{name}\"")))
                .count();
            assert_eq!(warned, 1, "one warning names {name}:\n{err}");
        }
        assert!(
            !err.contains("inside.txt"),
            "a link inside the folder is kept:\n{err}"
        );
        for out in [&o.stdout, &o.stderr] {
            assert!(
                !text(out).contains(SECRET),
                "the secret leaked:\n{}",
                text(out)
            );
        }
    }
}

/// A third-party reader that returns what it reads (a node per `node`
/// line, named by the rest of the line; a subnet per file, named after
/// it) sees the files inside the folder and nothing of what its links
/// lead to outside, whatever the policy grants it; a file the user names
/// himself is read where its link leads.
#[test]
fn fabric_folder_links_out_are_not_followed() {
    let reader = Path::new(wloc_runtime::test_components_dir()).join("hostile-fabric-v1.wasm");
    let f = Folder::new(
        "hostile-fabric-links",
        "good.txt",
        "node 0xaa switch 8 leaf\nnode 0x11 ca 1 alpha HCA-1\nlink 0x11 1 0xaa 1 32 4\n",
        &format!("node 0x99 ca 1 {SECRET}\n"),
    );
    std::fs::write(f.tmp.0.join("policy.toml"), "").unwrap();
    let o = f.run(&["component", "allow", s(&reader), "--files", "/"]);
    assert!(o.status.success(), "{}", text(&o.stderr));

    let o = f.run(&["fabric", "summary", s(&f.fabric), "--reader", s(&reader)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        "good.txt switches=1 adapters=1 hosts=0 cables=1\n"
    );
    f.check_skipped(&o);

    let o = f.run(&[
        "fabric",
        "export",
        "--of",
        "json",
        s(&f.fabric),
        "--reader",
        s(&reader),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("alpha HCA-1"),
        "{}",
        text(&o.stdout)
    );
    f.check_skipped(&o);

    // Slurm's topology and the machine's graph take the same folders.
    let o = f.run(&["slurm", "topology", s(&f.fabric), "--reader", s(&reader)]);
    f.check_skipped(&o);
    let o = f.run(&[
        "graph",
        "-i",
        "pack:1 pu:2",
        "--of",
        "json",
        "--fabric",
        s(&f.fabric),
        "--fabric-reader",
        s(&reader),
    ]);
    f.check_skipped(&o);

    // Named by the user: read where the link leads (and only that file).
    let named = f.tmp.0.join("named.txt");
    std::os::unix::fs::symlink(&f.secret, &named).unwrap();
    let o = f.run(&["fabric", "summary", s(&named), "--reader", s(&reader)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        "ports.txt switches=0 adapters=1 hosts=0 cables=0\n"
    );
}

/// The built-in reader (granted `/` by default) is handed the folder's
/// own files only: the same summary as without the links, a warning per
/// link, and none of the secret fabric's node descriptions.
#[test]
fn builtin_fabric_reader_gets_the_folder_only() {
    let good = std::fs::read_to_string(
        common::workspace().join("tests/data/fabric/handwritten-topology.txt"),
    )
    .unwrap();
    // The secret is a fabric file too, with a node description that
    // would show in an export if it were read.
    let secret = good.replace("ISR9024 Voltaire", SECRET);
    assert_ne!(secret, good);
    let f = Folder::new("hostile-fabric-builtin", "topology.txt", &good, &secret);
    std::fs::write(f.tmp.0.join("policy.toml"), "").unwrap();
    let clean = TempDir::new("hostile-fabric-clean");
    std::fs::create_dir_all(clean.0.join("ib-raw")).unwrap();
    std::fs::write(clean.0.join("ib-raw/topology.txt"), &good).unwrap();

    let expected = f.run(&["fabric", "summary", s(&clean.0)]);
    assert!(expected.status.success(), "{}", text(&expected.stderr));
    let o = f.run(&["fabric", "summary", s(&f.fabric)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), text(&expected.stdout));
    f.check_skipped(&o);
    let o = f.run(&["fabric", "export", "--of", "json", s(&f.fabric)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("ISR9024 Voltaire"));
    f.check_skipped(&o);
}

/// The recording the DMI tests use, unpacked; its fsroot.
fn recording(tmp: &TempDir) -> PathBuf {
    let tarball = common::conformance()
        .join("linux")
        .join("40intel64-2g2n4c+pcilocality.tar.bz2");
    let st = Command::new("tar")
        .arg("xjf")
        .arg(&tarball)
        .arg("-C")
        .arg(&tmp.0)
        .status()
        .expect("tar runs");
    assert!(st.success(), "cannot unpack {}", tarball.display());
    std::fs::read_dir(&tmp.0)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .expect("the recording holds a directory")
}

/// The value of info `name` in an XML export, if any.
fn info(xml: &str, name: &str) -> Option<String> {
    let key = format!("<info name=\"{name}\" value=\"");
    let at = xml.find(&key)? + key.len();
    Some(xml[at..].split('"').next()?.to_string())
}

/// A recording unpacked as root can hold device nodes and FIFOs
/// anywhere: at `sys/class/dmi/id/product_name` a FIFO (no writer: a
/// blocking open would wait forever), and as root a character device
/// (1:5, endless zeros) at `sys_vendor`.  wloc finishes, shows neither,
/// and still reads the regular DMI files beside them.
#[test]
fn recordings_with_device_nodes_and_fifos_are_read_safely() {
    let tmp = TempDir::new("hostile-recording");
    let root = recording(&tmp);
    let ls = || {
        let mut cmd = Command::new(wloc());
        cmd.args(["ls", "-i", s(&root), "--if", "fsroot", "--of", "xml"])
            .env("LC_ALL", "C");
        bounded(cmd, Duration::from_secs(120))
    };
    let before = ls();
    assert!(before.status.success(), "{}", text(&before.stderr));
    let before = text(&before.stdout);
    let board = info(&before, "DMIBoardName").expect("the recording has DMI files");
    assert!(info(&before, "DMIProductName").is_some());

    // The recording holds the DMI files twice, as sysfs shows them: under
    // the class folder and under the device's own folder, which the DMI
    // component reads first.  Both copies are replaced.
    let ids: Vec<PathBuf> = ["sys/class/dmi/id", "sys/devices/virtual/dmi/id"]
        .iter()
        .map(|d| root.join(d))
        .filter(|d| d.join("product_name").exists())
        .collect();
    assert!(!ids.is_empty(), "the recording has DMI folders");
    for id in &ids {
        std::fs::remove_file(id.join("product_name")).unwrap();
        let fifo = std::ffi::CString::new(s(&id.join("product_name"))).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    }
    let device = if is_root() {
        for id in &ids {
            std::fs::remove_file(id.join("sys_vendor")).unwrap();
            let path = std::ffi::CString::new(s(&id.join("sys_vendor"))).unwrap();
            // SAFETY: a valid NUL-terminated path.
            let r =
                unsafe { libc::mknod(path.as_ptr(), libc::S_IFCHR | 0o644, libc::makedev(1, 5)) };
            assert_eq!(r, 0, "mknod as root");
        }
        true
    } else {
        println!("not root: no device node can be made, only the FIFO is checked");
        false
    };

    let after = ls();
    assert!(after.status.success(), "{}", text(&after.stderr));
    let after = text(&after.stdout);
    assert_eq!(info(&after, "DMIBoardName"), Some(board));
    assert_eq!(info(&after, "DMIProductName"), None, "the FIFO is not read");
    if device {
        assert_eq!(info(&after, "DMISysVendor"), None, "the device is not read");
    }
}

/// `--of html` lists no process unless `--ps` asks, and then only the
/// current user's unless `--uid all` is given.  Checked with two
/// processes bound to PU 0: one of this user, one (as root) of `nobody`.
#[test]
fn html_page_lists_processes_only_when_asked() {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    if cpus < 2 {
        println!("one CPU: no process can be bound to part of the machine");
        return;
    }
    let mut mine = Command::new("taskset")
        .args(["-c", "0", "sleep", "60"])
        .spawn()
        .expect("taskset runs");
    let mut other = is_root().then(|| {
        Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "taskset",
                "-c",
                "0",
                "sleep",
                "60",
            ])
            .spawn()
            .expect("setpriv runs")
    });
    if other.is_none() {
        println!("not root: no process of another user can be started");
    }
    std::thread::sleep(Duration::from_millis(300));
    let page = |extra: &[&str]| {
        let mut cmd = Command::new(wloc());
        cmd.args(["ls", "--of", "html"]).args(extra).arg("-");
        let o = bounded(cmd, Duration::from_secs(120));
        assert!(o.status.success(), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    let listed = |html: &str, pid: u32| html.contains(&format!("\"pid\":{pid},"));

    let plain = page(&[]);
    assert!(plain.contains("const PROCS = [\n];"), "no process at all");
    assert!(!listed(&plain, mine.id()));

    let ps = page(&["--ps"]);
    assert!(
        listed(&ps, mine.id()),
        "this user's bound process is listed"
    );
    let all = page(&["--ps", "--uid", "all"]);
    assert!(listed(&all, mine.id()));
    if let Some(o) = &other {
        assert!(!listed(&ps, o.id()), "another user's process is not");
        assert!(listed(&all, o.id()), "--uid all lists every user's");
    }
    // The console listing shows bound processes on their objects too, as
    // lstopo's does.
    let mut cmd = Command::new(wloc());
    cmd.args(["ls", "--ps", "--of", "console"]);
    let o = bounded(cmd, Duration::from_secs(120));
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains(&format!(" {} ", mine.id())),
        "{}",
        text(&o.stdout)
    );

    for c in [Some(&mut mine), other.as_mut()].into_iter().flatten() {
        let _ = c.kill();
        let _ = c.wait();
    }
}

/// How a measured run of `wloc` ended.
struct Measured {
    code: i32,
    stdout: String,
    stderr: String,
    /// Peak resident memory of the process, in KiB (the kernel's
    /// accounting of the process itself, from `wait4`).
    peak_kib: i64,
    elapsed: Duration,
}

/// Runs `wloc ARGS` with `envs` set (and hwloc's and wloc's input
/// variables removed otherwise), standard input from `stdin` (else
/// nothing), killed after 60 s, and measures its peak resident memory.
/// With `limit_as`, under a 2 GiB address-space limit too, so that a
/// regression fails here instead of taking the machine's memory (only
/// for commands that create no wasmtime engine, whose reservations such
/// a limit would break).
fn measured(
    args: &[&str],
    envs: &[(&str, &str)],
    stdin: Option<&Path>,
    limit_as: bool,
) -> Measured {
    let dir = TempDir::new("hostile-files-run");
    let (out, err) = (dir.0.join("stdout"), dir.0.join("stderr"));
    let (mut cmd, measure) = common::measured("sh");
    cmd.arg("-c")
        .arg(if limit_as {
            "ulimit -v 2097152 && exec \"$0\" \"$@\""
        } else {
            "exec \"$0\" \"$@\""
        })
        .arg(wloc())
        .args(args)
        .env("LC_ALL", "C")
        .env("WLOC_CACHE_DIR", dir.0.join("cache"))
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
    for v in [
        "WLOC_IMAGE",
        "WLOC_XMLFILE",
        "HWLOC_XMLFILE",
        "WLOC_FSROOT",
        "HWLOC_FSROOT",
        "WLOC_CPUID_PATH",
        "HWLOC_CPUID_PATH",
        "WLOC_SYNTHETIC",
        "HWLOC_SYNTHETIC",
        "WLOC_COMPONENTS",
        "HWLOC_COMPONENTS",
    ] {
        cmd.env_remove(v);
    }
    cmd.envs(envs.iter().copied());
    cmd.stdin(match stdin {
        Some(p) => Stdio::from(std::fs::File::open(p).unwrap()),
        None => Stdio::null(),
    });
    let child = cmd.spawn().expect("sh runs");
    let common::Ended {
        code,
        peak_kib,
        elapsed,
    } = common::wait_measured(child, measure, Duration::from_secs(60));
    Measured {
        code,
        stdout: std::fs::read_to_string(out).unwrap_or_default(),
        stderr: std::fs::read_to_string(err).unwrap_or_default(),
        peak_kib,
        elapsed,
    }
}

/// Makes a FIFO at `p`, with no writer: a blocking open for reading
/// would wait forever.
fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(s(p)).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
    assert_eq!(rc, 0, "mkfifo {}", p.display());
}

/// `/dev/zero` and a FIFO with no writer, named as the input (`-i`, with
/// and without `--if`, `WLOC_IMAGE`, `HWLOC_XMLFILE`), are refused at
/// once, exit 1, with an error naming the file and saying it is not a
/// regular file, within 10 seconds and 128 MiB.  (Before, `/dev/zero`
/// grew memory until the allocator gave up and the FIFO blocked forever.)
#[test]
fn devices_and_fifos_named_as_input_are_refused_at_once() {
    let tmp = TempDir::new("hostile-input-fifo");
    let fifo = tmp.0.join("topology");
    mkfifo(&fifo);
    let fifo = s(&fifo);
    let zero = "/dev/zero";
    // The arguments, the environment, the file the error must name.
    type Case<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>, &'a str);
    let cases: Vec<Case> = vec![
        (vec!["ls", "-i", zero], vec![], zero),
        (vec!["ls", "-i", zero, "--if", "xml"], vec![], zero),
        (vec!["ls", "-i", zero, "--if", "image"], vec![], zero),
        (vec!["ls"], vec![("WLOC_IMAGE", zero)], zero),
        (vec!["ls"], vec![("HWLOC_XMLFILE", zero)], zero),
        (vec!["ls", "-i", fifo], vec![], fifo),
        (vec!["ls", "-i", fifo, "--if", "xml"], vec![], fifo),
        (vec!["ls", "-i", fifo, "--if", "image"], vec![], fifo),
        (vec!["ls"], vec![("WLOC_IMAGE", fifo)], fifo),
        (vec!["ls"], vec![("HWLOC_XMLFILE", fifo)], fifo),
    ];
    for (args, envs, named) in &cases {
        let what = format!("{envs:?} wloc {}", args.join(" "));
        let r = measured(args, envs, None, true);
        println!(
            "{what}: exit {} in {:?}, peak {} KiB: {}",
            r.code,
            r.elapsed,
            r.peak_kib,
            r.stderr.trim_end()
        );
        assert_eq!(r.code, 1, "{what}: {}", r.stderr);
        assert!(
            r.stderr.contains(named) && r.stderr.contains("not a regular file"),
            "{what}: the error names the file and what is wrong: {}",
            r.stderr
        );
        assert!(
            r.stderr.lines().count() <= 2,
            "{what}: a short error: {}",
            r.stderr
        );
        assert!(
            r.elapsed < Duration::from_secs(10),
            "{what}: {:?}",
            r.elapsed
        );
        assert!(r.peak_kib < 128 * 1024, "{what}: peak {} KiB", r.peak_kib);
    }
}

/// Standard input (`-i -`) may be anything the user redirects to it;
/// `/dev/zero` is read up to the 256 MiB cap on topology files, then
/// refused with a clear error, in little time and bounded memory.
#[test]
fn endless_standard_input_is_refused_past_the_cap() {
    for format in ["image", "xml"] {
        let args = ["ls", "-i", "-", "--if", format];
        let r = measured(&args, &[], Some(Path::new("/dev/zero")), true);
        println!(
            "wloc {} < /dev/zero: exit {} in {:?}, peak {} KiB: {}",
            args.join(" "),
            r.code,
            r.elapsed,
            r.peak_kib,
            r.stderr.trim_end()
        );
        assert_eq!(r.code, 1, "{format}: {}", r.stderr);
        assert!(
            r.stderr.contains("larger than 268435456 bytes"),
            "{format}: {}",
            r.stderr
        );
        assert!(
            r.elapsed < Duration::from_secs(20),
            "{format}: {:?}",
            r.elapsed
        );
        // The cap, plus wloc itself.
        assert!(r.peak_kib < 400 * 1024, "{format}: peak {} KiB", r.peak_kib);
    }
}

/// A CPUID dump folder (`-i DIR --if cpuid`) whose PU file is a FIFO, or
/// a link leading out of the folder: the FIFO is not opened and the link
/// not followed (a warning names it); the dump, missing its PU, is then
/// refused at once.
#[test]
fn cpuid_dump_with_fifo_or_link_out_is_refused_at_once() {
    let tmp = TempDir::new("hostile-cpuid-dump");
    std::fs::write(tmp.0.join("secret"), SECRET).unwrap();
    for tag in ["fifo", "link"] {
        let dump = tmp.0.join(tag);
        std::fs::create_dir_all(&dump).unwrap();
        std::fs::write(dump.join("hwloc-cpuid-info"), "Architecture: x86\n").unwrap();
        if tag == "fifo" {
            mkfifo(&dump.join("pu0"));
        } else {
            std::os::unix::fs::symlink("../secret", dump.join("pu0")).unwrap();
        }
        let r = measured(&["ls", "-i", s(&dump), "--if", "cpuid"], &[], None, false);
        println!(
            "{tag}: exit {} in {:?}, peak {} KiB: {}",
            r.code,
            r.elapsed,
            r.peak_kib,
            r.stderr.trim_end()
        );
        assert_eq!(r.code, 1, "{tag}: {}", r.stderr);
        assert!(
            r.stderr.contains("cannot read CPUID dump"),
            "{tag}: {}",
            r.stderr
        );
        if tag == "link" {
            assert!(
                r.stderr.contains("warning: skipped") && r.stderr.contains("/pu0'"),
                "{tag}: {}",
                r.stderr
            );
        }
        assert!(!r.stderr.contains(SECRET) && !r.stdout.contains(SECRET));
        assert!(
            r.elapsed < Duration::from_secs(30),
            "{tag}: {:?}",
            r.elapsed
        );
        assert!(r.peak_kib < 400 * 1024, "{tag}: peak {} KiB", r.peak_kib);
    }
}

/// A recording whose `cpuid/` folder holds a FIFO and links leading out
/// of it (to a file of the user running wloc, absolute and relative):
/// the FIFO is never opened, the links never followed (a warning names
/// each), the damaged dump is left out, and the rest of the discovery
/// goes on: the same topology as without the folder, within 60 seconds
/// and 400 MiB.
#[test]
fn recording_with_fifo_and_links_out_in_its_cpuid_folder() {
    let tmp = TempDir::new("hostile-recording-cpuid");
    let root = recording(&tmp);
    let secret = tmp.0.join("secret");
    std::fs::write(&secret, SECRET).unwrap();
    let ls = || {
        measured(
            &["ls", "-i", s(&root), "--if", "fsroot", "--of", "xml"],
            &[],
            None,
            false,
        )
    };
    let before = ls();
    assert_eq!(before.code, 0, "{}", before.stderr);

    let cpuid = root.join("cpuid");
    std::fs::create_dir_all(&cpuid).unwrap();
    std::fs::write(cpuid.join("hwloc-cpuid-info"), "Architecture: x86\n").unwrap();
    mkfifo(&cpuid.join("pu0"));
    std::os::unix::fs::symlink(&secret, cpuid.join("pu1")).unwrap();
    std::os::unix::fs::symlink("../../secret", cpuid.join("pu2")).unwrap();
    let after = ls();
    println!(
        "exit {} in {:?}, peak {} KiB: {}",
        after.code,
        after.elapsed,
        after.peak_kib,
        after.stderr.trim_end()
    );
    assert_eq!(after.code, 0, "{}", after.stderr);
    assert_eq!(
        after.stdout, before.stdout,
        "the rest of the discovery goes on"
    );
    for name in ["pu1", "pu2"] {
        let warned = after
            .stderr
            .lines()
            .filter(|l| l.contains("warning: skipped") && l.contains(&format!("/cpuid/{name}'")))
            .count();
        assert_eq!(warned, 1, "one warning names {name}:\n{}", after.stderr);
    }
    assert!(!after.stderr.contains("pu0"), "a FIFO is left out silently");
    assert!(!after.stdout.contains(SECRET) && !after.stderr.contains(SECRET));
    assert!(
        after.elapsed < Duration::from_secs(60),
        "{:?}",
        after.elapsed
    );
    assert!(after.peak_kib < 400 * 1024, "peak {} KiB", after.peak_kib);
}
