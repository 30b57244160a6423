//! `wloc service`: the topology service started by the tests (as root, in
//! a folder of the test's own), watched through its log, signalled and
//! stopped by its pid.  It publishes an image equal to discovery with
//! every object kept, stamped with this boot and the CPUs online; SIGHUP
//! publishes the next generation; an unsafe folder and a full disk keep
//! the previous image (and leave no temporary file); SIGTERM stops it
//! with exit code 0.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{self, TempDir};

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A running `wloc service`, its standard error collected line by line;
/// killed by its pid when dropped (a failed test leaves no daemon).
struct Service {
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
}

impl Service {
    fn start(image: &Path, extra: &[&str]) -> Service {
        let mut child = Command::new(common::wloc())
            .arg("service")
            .arg("--path")
            .arg(image)
            .args(extra)
            .env("LC_ALL", "C")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("wloc service starts");
        let log = Arc::new(Mutex::new(Vec::new()));
        let lines = BufReader::new(child.stderr.take().expect("piped"));
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in lines.lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        Service { child, log }
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// Waits (at most 30 s) for a log line containing `needle`, the
    /// `nth` such line (from 1).
    fn wait_for(&self, needle: &str, nth: usize) -> String {
        let start = Instant::now();
        loop {
            let found: Vec<String> = self
                .log
                .lock()
                .unwrap()
                .iter()
                .filter(|l| l.contains(needle))
                .cloned()
                .collect();
            if found.len() >= nth {
                return found[nth - 1].clone();
            }
            if start.elapsed() > Duration::from_secs(30) {
                panic!(
                    "no log line with '{needle}' in 30 s; the log:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn signal(&self, sig: rustix::process::Signal) {
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32).expect("a pid");
        rustix::process::kill_process(pid, sig).expect("the service gets the signal");
    }

    /// Stops it with SIGTERM; its exit code (30 s at most).
    fn stop(&mut self) -> Option<i32> {
        self.signal(rustix::process::Signal::TERM);
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            if start.elapsed() > Duration::from_secs(30) {
                panic!(
                    "the service did not stop on SIGTERM; the log:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A folder for the image, owned by root, mode 0755.
fn image_folder(base: &Path) -> PathBuf {
    let x = base.join("x");
    std::fs::create_dir_all(&x).unwrap();
    std::fs::set_permissions(&x, std::fs::Permissions::from_mode(0o755)).unwrap();
    x
}

fn kernel_file(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn stamp(image: &Path) -> wloc::image::Publication {
    wloc::image::adopt(image)
        .expect("the published image adopts")
        .publication()
        .expect("the published image has a stamp")
}

fn names_in(folder: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `wloc ls` as XML with every object kept, disallowed ones included.
fn xml_of(input: Option<&Path>) -> String {
    let mut args: Vec<std::ffi::OsString> = vec!["ls".into()];
    if let Some(i) = input {
        args.extend(["-i".into(), i.as_os_str().to_owned()]);
    }
    args.extend(["--of", "xml", "--whole-io", "--disallowed"].map(Into::into));
    let o = common::run_wloc(&args);
    common::assert_success("wloc ls", &o);
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn the_service_publishes_reloads_refuses_unsafe_folders_and_stops() {
    if !is_root() {
        eprintln!("skipped: the topology service runs as root");
        return;
    }
    let tmp = TempDir::new("service");
    let x = image_folder(&tmp.0);
    let image = x.join("topology.img");
    let mut svc = Service::start(&image, &["--check-interval", "1", "--debounce", "100"]);
    let first = svc.wait_for("generation 1 (start)", 1);
    assert!(first.contains("CPUs online"), "{first}");

    // The image is this machine as discovery gives it, every object kept,
    // but for the discovering process's own cgroup (an adopter names its
    // own).
    let published = xml_of(Some(&image));
    assert!(!published.contains("\"LinuxCgroup\""), "{published}");
    let discovered: String = xml_of(None)
        .lines()
        .filter(|l| !l.contains("<info name=\"LinuxCgroup\""))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(published, discovered);
    let s = stamp(&image);
    assert_eq!(s.generation, 1);
    assert_eq!(s.boot_id, kernel_file("/proc/sys/kernel/random/boot_id"));
    assert_eq!(s.cpus_online, kernel_file("/sys/devices/system/cpu/online"));
    assert_eq!(
        s.nodes_online,
        kernel_file("/sys/devices/system/node/online")
    );
    let mode = std::fs::metadata(&image).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o644);

    // SIGHUP: the next generation.
    svc.signal(rustix::process::Signal::HUP);
    svc.wait_for("generation 2 (SIGHUP)", 1);
    assert_eq!(stamp(&image).generation, 2);

    // A folder others may write: refused, said why, the image stays.
    std::fs::set_permissions(&x, std::fs::Permissions::from_mode(0o777)).unwrap();
    svc.signal(rustix::process::Signal::HUP);
    let refused = svc.wait_for("not published (SIGHUP)", 1);
    assert!(
        refused.contains("mode 0777 lets group or others write it")
            && refused.contains("the previous image stays"),
        "{refused}"
    );
    assert_eq!(stamp(&image).generation, 2);
    std::fs::set_permissions(&x, std::fs::Permissions::from_mode(0o755)).unwrap();

    // The periodic check (every second here) publishes again an image
    // someone removed.
    std::fs::remove_file(&image).unwrap();
    let again = svc.wait_for("generation 3 (periodic check", 1);
    assert!(again.contains("removed or replaced"), "{again}");
    assert_eq!(stamp(&image).generation, 3);
    assert_eq!(names_in(&x), ["topology.img"]);

    // SIGTERM: a clean stop.
    assert_eq!(svc.stop(), Some(0), "{}", svc.log());
    svc.wait_for("stopping (SIGTERM)", 1);

    // A new run goes on from the old file's generation.
    let out = Command::new(common::wloc())
        .args(["service", "--once", "--path"])
        .arg(&image)
        .output()
        .unwrap();
    common::assert_success("wloc service --once", &out);
    assert_eq!(stamp(&image).generation, 4);

    // Refused from the start: the service exits 1 and says why.
    std::fs::set_permissions(&x, std::fs::Permissions::from_mode(0o775)).unwrap();
    let out = Command::new(common::wloc())
        .args(["service", "--once", "--path"])
        .arg(&image)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("refusing to publish in") && err.contains("mode 0775"),
        "{err}"
    );
    assert_eq!(stamp(&image).generation, 4);
}

/// A tmpfs mounted for one test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).unwrap();
        let ok = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0755"),
                "tmpfs",
            ])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(at.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_keeps_the_previous_image_and_leaves_no_temporary() {
    if !is_root() {
        eprintln!("skipped: the topology service runs as root");
        return;
    }
    let tmp = TempDir::new("service-full");
    let Some(fs) = Tmpfs::mount(&tmp.0.join("mnt"), "2m") else {
        eprintln!("skipped: cannot mount a tmpfs here");
        return;
    };
    let x = image_folder(&fs.0);
    let image = x.join("topology.img");
    let mut svc = Service::start(&image, &[]);
    svc.wait_for("generation 1 (start)", 1);
    // Fill the file system.
    let filler = fs.0.join("filler");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&filler).unwrap();
        let block = vec![0x5au8; 64 << 10];
        while f.write_all(&block).is_ok() {}
        let _ = f.write_all(&[0]);
    }
    svc.signal(rustix::process::Signal::HUP);
    let failed = svc.wait_for("not published (SIGHUP)", 1);
    assert!(
        failed.contains("No space left on device") && failed.contains("the previous image stays"),
        "{failed}"
    );
    assert_eq!(stamp(&image).generation, 1);
    assert_eq!(names_in(&x), ["topology.img"]);
    // Room again: the next publication takes the next generation.
    std::fs::remove_file(&filler).unwrap();
    svc.signal(rustix::process::Signal::HUP);
    svc.wait_for("generation 2 (SIGHUP)", 1);
    assert_eq!(stamp(&image).generation, 2);
    assert_eq!(svc.stop(), Some(0), "{}", svc.log());
    drop(svc);
    drop(fs);
}

#[test]
fn kernel_uevents_make_it_discover_again() {
    if !is_root() {
        eprintln!("skipped: the topology service runs as root");
        return;
    }
    let tmp = TempDir::new("service-uevent");
    let x = image_folder(&tmp.0);
    let image = x.join("topology.img");
    let mut svc = Service::start(&image, &["--debounce", "50"]);
    svc.wait_for("generation 1 (start)", 1);
    if svc.log().contains("no kernel uevents") {
        eprintln!("skipped: no kernel uevents here (not the first network namespace?)");
        return;
    }
    // The kernel sends a synthetic uevent for a device when asked to
    // (`change` on its uevent file): nothing changed, so the service
    // discovers again and publishes nothing new.
    if std::fs::write("/sys/devices/system/cpu/cpu0/uevent", "change").is_err() {
        eprintln!("skipped: cannot ask the kernel for a uevent here");
        return;
    }
    let line = svc.wait_for("(uevent change cpu)", 1);
    assert!(
        line.contains("rediscovered (uevent change cpu): no change, generation 1 stays published"),
        "{line}"
    );
    assert_eq!(stamp(&image).generation, 1);
    assert_eq!(svc.stop(), Some(0), "{}", svc.log());
}
