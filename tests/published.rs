//! Programs adopt the topology `wloc service` publishes instead of
//! discovering, and get what their own discovery would give them: the
//! `wloc` commands and Debian's unmodified hwloc tools on wloc's
//! `libhwloc.so.15`, with their filters, in a cgroup of their own; and
//! they refuse an image they may not trust or that is stale, saying why
//! when asked (`WLOC_DEBUG=1`).
//!
//! The image is published with `wloc service --once` into a folder of the
//! test's (`WLOC_SERVICE_IMAGE` points the programs at it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common;

/// A published image in a root-owned folder (mode 0755) of its own.
struct Published {
    dir: common::TempDir,
    image: PathBuf,
}

impl Published {
    fn new(tag: &str) -> Published {
        let dir = common::TempDir::new(tag);
        let folder = dir.0.join("run");
        std::fs::create_dir(&folder).unwrap();
        set_mode(&folder, 0o755);
        set_mode(&dir.0, 0o755);
        let image = folder.join("topology.img");
        let o = Command::new(common::wloc())
            .args(["service", "--once", "--path"])
            .arg(&image)
            .output()
            .expect("wloc service");
        common::assert_success("wloc service --once", &o);
        Published { dir, image }
    }

    /// `c` pointed at this image, with the reasons for not adopting it
    /// told, and no other source named.
    fn env<'c>(&self, c: &'c mut Command) -> &'c mut Command {
        let more = ["WLOC_XMLFILE", "WLOC_POLICY", "WLOC_NO_SERVICE"];
        for v in common::topology_env::TOPOLOGY_ENV.iter().chain(&more) {
            c.env_remove(v);
        }
        c.env("WLOC_SERVICE_IMAGE", &self.image)
            .env("WLOC_DEBUG", "1")
    }
}

fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// XML without gp indexes: they number objects in the order discovery
/// inserted them (hwloc's own tests leave them out for that reason).
fn without_gp_index(xml: &[u8]) -> String {
    let s = String::from_utf8_lossy(xml);
    let mut out = String::with_capacity(s.len());
    let mut rest = &s[..];
    while let Some(i) = rest.find(" gp_index=\"") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 11..];
        rest = &after[after.find('"').map_or(after.len(), |j| j + 1)..];
    }
    out.push_str(rest);
    out
}

const NOT_ADOPTED: &str = "not adopting the published topology";

/// Runs `c`; its output, and whether it adopted the image (it says when
/// it did not, under `WLOC_DEBUG`).
fn run(c: &mut Command) -> (Output, bool) {
    let o = c.output().expect("run");
    let adopted = !String::from_utf8_lossy(&o.stderr).contains(NOT_ADOPTED);
    (o, adopted)
}

/// How many CPU topology files of `/sys` a run opens (`strace`): a
/// discovery reads them, an adoption none.
fn sysfs_topology_reads(c: &mut Command) -> usize {
    let log = common::TempDir::new("published-strace");
    let trace = log.0.join("trace");
    let mut s = Command::new("strace");
    s.args(["-f", "-qq", "-e", "trace=openat,openat2,open", "-o"])
        .arg(&trace)
        .arg(c.get_program())
        .args(c.get_args());
    for (k, v) in c.get_envs() {
        match v {
            Some(v) => s.env(k, v),
            None => s.env_remove(k),
        };
    }
    let o = s.output().expect("strace");
    assert!(o.status.success(), "{}", common::show_output(&o));
    std::fs::read_to_string(&trace)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("devices/system/cpu/cpu") && l.contains("topology"))
        .count()
}

/// `wloc ls` adopts the image and prints, for every filter set, what its
/// discovery prints with the same filters.
#[test]
fn commands_adopt_and_match_discovery() {
    common::require_packages(&[("/usr/bin/strace", "strace")]).unwrap_or_else(|e| panic!("{e}"));
    let p = Published::new("published-commands");
    for opts in [
        &[][..],
        &["--no-io"],
        &["--no-caches"],
        &["--no-icaches"],
        &["--whole-io"],
        &["--disallowed"],
    ] {
        let mut adopt = Command::new(common::wloc());
        p.env(&mut adopt).args(["ls", "--of", "xml"]).args(opts);
        let (a, adopted) = run(&mut adopt);
        common::assert_success("wloc ls on the published image", &a);
        assert!(adopted, "{opts:?}: {}", String::from_utf8_lossy(&a.stderr));
        let mut discover = Command::new(common::wloc());
        p.env(&mut discover)
            .env("WLOC_NO_SERVICE", "1")
            .args(["ls", "--of", "xml"])
            .args(opts);
        let (d, adopted) = run(&mut discover);
        common::assert_success("wloc ls discovering", &d);
        assert!(!adopted, "WLOC_NO_SERVICE=1 opts out");
        assert_eq!(
            without_gp_index(&a.stdout),
            without_gp_index(&d.stdout),
            "wloc ls {opts:?}: the published image gives another topology than discovery"
        );
    }
    let mut calc = Command::new(common::wloc());
    p.env(&mut calc).args(["calc", "--number-of", "pu", "all"]);
    assert_eq!(
        sysfs_topology_reads(&mut calc),
        0,
        "calc adopted, reading no CPU topology file"
    );
    let mut calc = Command::new(common::wloc());
    p.env(&mut calc)
        .env("WLOC_NO_SERVICE", "1")
        .args(["calc", "--number-of", "pu", "all"]);
    assert!(
        sysfs_topology_reads(&mut calc) > 0,
        "a discovery reads CPU topology files"
    );
}

/// Debian's unmodified lstopo-no-graphics on wloc's library adopts the
/// image and prints what it prints when the library discovers.
#[test]
fn hwloc_programs_adopt_through_the_library() {
    common::require_hwloc();
    common::require_packages(&[("/usr/bin/strace", "strace")]).unwrap_or_else(|e| panic!("{e}"));
    let p = Published::new("published-library");
    let lib = common::wloc_libhwloc_dir("published");
    for opts in [
        &["--of", "xml"][..],
        &["--of", "xml", "--no-io"],
        &["-v"],
        &["--of", "xml", "--disallowed"],
    ] {
        let mut adopt = Command::new("lstopo-no-graphics");
        p.env(&mut adopt).env("LD_LIBRARY_PATH", &lib).args(opts);
        let (a, adopted) = run(&mut adopt);
        common::assert_success("lstopo-no-graphics on the published image", &a);
        assert!(adopted, "{opts:?}: {}", String::from_utf8_lossy(&a.stderr));
        let mut discover = Command::new("lstopo-no-graphics");
        p.env(&mut discover)
            .env("LD_LIBRARY_PATH", &lib)
            .env("WLOC_NO_SERVICE", "1")
            .args(opts);
        let (d, _) = run(&mut discover);
        common::assert_success("lstopo-no-graphics discovering", &d);
        assert_eq!(
            without_gp_index(&a.stdout),
            without_gp_index(&d.stdout),
            "lstopo-no-graphics {opts:?}"
        );
    }
    let mut adopt = Command::new("hwloc-calc");
    p.env(&mut adopt)
        .env("LD_LIBRARY_PATH", &lib)
        .args(["--number-of", "core", "all"]);
    assert_eq!(sysfs_topology_reads(&mut adopt), 0, "hwloc-calc adopted");
    let _ = std::fs::remove_dir_all(&lib);
}

/// A cpuset cgroup of the test's own (v1 or v2, whichever this machine
/// mounts), allowing one CPU; removed on drop.
struct Cgroup {
    dir: PathBuf,
    tasks: &'static str,
}

impl Cgroup {
    fn new(cpu: usize) -> Option<Cgroup> {
        let name = format!("wloc-published-{}", std::process::id());
        let (dir, tasks, cpus, mems) = if Path::new("/sys/fs/cgroup/cpuset/cpuset.cpus").exists() {
            (
                PathBuf::from("/sys/fs/cgroup/cpuset").join(&name),
                "tasks",
                "cpuset.cpus",
                "cpuset.mems",
            )
        } else if Path::new("/sys/fs/cgroup/cgroup.controllers").exists() {
            let _ = std::fs::write("/sys/fs/cgroup/cgroup.subtree_control", "+cpuset");
            (
                PathBuf::from("/sys/fs/cgroup").join(&name),
                "cgroup.procs",
                "cpuset.cpus",
                "cpuset.mems",
            )
        } else {
            return None;
        };
        std::fs::create_dir(&dir).ok()?;
        let g = Cgroup { dir, tasks };
        std::fs::write(g.dir.join(cpus), cpu.to_string()).ok()?;
        std::fs::write(g.dir.join(mems), "0").ok()?;
        Some(g)
    }

    /// `program args...` run inside the cgroup (a shell moves itself in,
    /// then runs it).
    fn command(&self, program: &Path) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(format!(
                "echo $$ > '{}' && exec \"$0\" \"$@\"",
                self.dir.join(self.tasks).display()
            ))
            .arg(program);
        c
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// A process in a cgroup that allows one CPU gets, from the image
/// published by a service outside it, the allowed sets (and the
/// `LinuxCgroup` info) its own discovery gives it, with and without the
/// disallowed objects.
#[test]
fn each_process_gets_its_own_allowed_resources() {
    let cpus = common::allowed_cpus();
    let last = *cpus.last().expect("a CPU");
    let p = Published::new("published-cgroup");
    let Some(g) = Cgroup::new(last) else {
        panic!("cannot make a cpuset cgroup here (as root, with the cpuset controller mounted)");
    };
    for opts in [&[][..], &["--disallowed"]] {
        let mut adopt = g.command(&common::wloc());
        p.env(&mut adopt).args(["ls", "--of", "xml"]).args(opts);
        let (a, adopted) = run(&mut adopt);
        common::assert_success("wloc ls in the cgroup", &a);
        assert!(adopted, "{}", String::from_utf8_lossy(&a.stderr));
        let mut discover = g.command(&common::wloc());
        p.env(&mut discover)
            .env("WLOC_NO_SERVICE", "1")
            .args(["ls", "--of", "xml"])
            .args(opts);
        let (d, _) = run(&mut discover);
        common::assert_success("wloc ls discovering in the cgroup", &d);
        let (a, d) = (without_gp_index(&a.stdout), without_gp_index(&d.stdout));
        assert_eq!(a, d, "in a cgroup, {opts:?}");
        let allowed = common::root_attr(&a, "allowed_cpuset").unwrap_or_default();
        let want = format!("0x{:08x}", 1u64 << (last % 32));
        if cpus.len() > 1 && last < 32 {
            assert_eq!(allowed, want, "the cgroup's one CPU");
        }
    }
}

/// `hwloc_topology_set_pid` (lstopo's `--pid`) of a process in a cgroup
/// allowing one CPU: wloc's library gives that process's allowed sets
/// when it adopts the image and when it discovers, as Debian's libhwloc
/// does.
#[test]
fn another_processs_allowed_resources_follow_set_pid() {
    common::require_hwloc();
    let cpus = common::allowed_cpus();
    let last = *cpus.last().expect("a CPU");
    let p = Published::new("published-set-pid");
    let lib = common::wloc_libhwloc_dir("published-set-pid");
    let Some(g) = Cgroup::new(last) else {
        panic!("cannot make a cpuset cgroup here (as root, with the cpuset controller mounted)");
    };
    let mut sleeper = g.command(Path::new("sleep"));
    let sleeper = Killed(sleeper.arg("60").spawn().expect("sleep starts"));
    // Until the shell has moved itself into the cgroup.
    let pid = sleeper.0.id();
    let start = std::time::Instant::now();
    while !std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
        .is_ok_and(|c| c.contains("wloc-published-"))
    {
        assert!(
            start.elapsed().as_secs() < 10,
            "the sleeper never entered the cgroup"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let allowed = |lib: Option<&Path>, discover: bool| -> (String, bool) {
        let mut c = Command::new("lstopo-no-graphics");
        p.env(&mut c)
            .args(["--pid", &pid.to_string(), "--of", "xml"]);
        if let Some(l) = lib {
            c.env("LD_LIBRARY_PATH", l);
        }
        if discover {
            c.env("WLOC_NO_SERVICE", "1");
        }
        let (o, adopted) = run(&mut c);
        common::assert_success("lstopo-no-graphics --pid", &o);
        let xml = String::from_utf8_lossy(&o.stdout).into_owned();
        (
            common::root_attr(&xml, "allowed_cpuset").unwrap_or_default(),
            adopted,
        )
    };
    let (libhwloc, _) = allowed(None, false);
    let (adopting, adopted) = allowed(Some(&lib), false);
    assert!(adopted, "the image is adopted");
    let (discovering, _) = allowed(Some(&lib), true);
    assert_eq!(adopting, libhwloc, "adopting, set_pid");
    assert_eq!(discovering, libhwloc, "discovering, set_pid");
    if cpus.len() > 1 && last < 32 {
        assert_eq!(libhwloc, format!("0x{:08x}", 1u64 << (last % 32)));
    }
    drop(sleeper);
    let _ = std::fs::remove_dir_all(&lib);
}

/// A child killed by its pid when dropped (also when the test fails).
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Images the process may not trust, or that are stale, are not adopted,
/// and `WLOC_DEBUG=1` says why in one line; the program discovers.
#[test]
fn untrusted_or_stale_images_are_refused_with_a_reason() {
    let p = Published::new("published-refused");
    let reason = |p: &Published| {
        let mut c = Command::new(common::wloc());
        p.env(&mut c).args(["calc", "--number-of", "pu", "all"]);
        let (o, adopted) = run(&mut c);
        common::assert_success("wloc calc", &o);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        (adopted, err)
    };
    assert!(reason(&p).0, "a trusted, current image is adopted");

    // A variable that changes discovery asks for a discovery.
    let mut c = Command::new(common::wloc());
    p.env(&mut c)
        .env("HWLOC_MEMTIERS_GUESS", "none")
        .args(["calc", "--number-of", "pu", "all"]);
    let (o, adopted) = run(&mut c);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !adopted && err.contains("HWLOC_MEMTIERS_GUESS is set"),
        "{err}"
    );

    // The folder writable by others.
    let folder = p.image.parent().unwrap().to_path_buf();
    set_mode(&folder, 0o777);
    let (adopted, err) = reason(&p);
    assert!(
        !adopted && err.contains("may be written by others"),
        "{err}"
    );
    set_mode(&folder, 0o755);

    // The image belonging to another user.
    std::os::unix::fs::lchown(&p.image, Some(4242), None).unwrap();
    let (adopted, err) = reason(&p);
    assert!(!adopted && err.contains("belongs to user 4242"), "{err}");
    std::os::unix::fs::lchown(&p.image, Some(0), None).unwrap();

    // Cut short, then one byte changed.
    let bytes = std::fs::read(&p.image).unwrap();
    let ro = |b: &[u8]| {
        let _ = std::fs::remove_file(&p.image);
        std::fs::write(&p.image, b).unwrap();
        set_mode(&p.image, 0o644);
    };
    ro(&bytes[..bytes.len() / 2]);
    let (adopted, err) = reason(&p);
    assert!(!adopted && err.contains(NOT_ADOPTED), "{err}");
    let mut changed = bytes.clone();
    let at = changed.len() - 9;
    changed[at] ^= 0x55;
    ro(&changed);
    let (adopted, _) = reason(&p);
    assert!(!adopted, "a changed byte is caught");

    // A plain image (not the service's: no stamp).
    let _ = std::fs::remove_file(&p.image);
    let o = Command::new(common::wloc())
        .env("WLOC_NO_SERVICE", "1")
        .args(["ls", "--of", "image", "-f"])
        .arg(&p.image)
        .output()
        .unwrap();
    common::assert_success("wloc ls --of image", &o);
    let (adopted, err) = reason(&p);
    assert!(!adopted && err.contains("no publication stamp"), "{err}");
    let _ = &p.dir;
}

/// Debian's unmodified `slurmd -C` and an `mpirun -np 4` job on wloc's
/// library print, with the service's image, what they print on Debian's
/// libhwloc, and discover nothing (counted under strace, every process of
/// the job followed); the control run without the image discovers.
#[test]
fn slurmd_and_mpirun_adopt_and_print_what_libhwloc_prints() {
    common::require_packages(&[
        ("/usr/sbin/slurmd", "slurmd"),
        ("/usr/bin/mpirun", "openmpi-bin"),
        ("/usr/bin/strace", "strace"),
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    let p = Published::new("published-slurm-mpi");
    let lib = common::wloc_libhwloc_dir("published-jobs");
    let traces = common::TempDir::new("published-jobs-traces");
    let programs: [(&str, Vec<&str>); 2] = [
        ("slurmd -C", vec!["/usr/sbin/slurmd", "-C"]),
        (
            "mpirun -np 4",
            vec![
                "mpirun",
                "-np",
                "4",
                "--oversubscribe",
                "-x",
                "LD_LIBRARY_PATH",
                "-x",
                "WLOC_SERVICE_IMAGE",
                "-x",
                "WLOC_NO_SERVICE",
                "sh",
                "-c",
                "grep Cpus_allowed_list /proc/self/status",
            ],
        ),
    ];
    for (name, argv) in &programs {
        let run = |ours: bool, adopt: bool, trace: &Path| {
            let mut c = Command::new("strace");
            c.args(["-f", "-qq", "-e", "trace=open,openat,openat2", "-o"])
                .arg(trace)
                .args(argv);
            p.env(&mut c)
                .env_remove("WLOC_DEBUG")
                .env_remove("LD_LIBRARY_PATH")
                .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
                .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
            // Always set, so that mpirun's -x finds them.
            c.env(
                "LD_LIBRARY_PATH",
                if ours { lib.as_os_str() } else { "".as_ref() },
            )
            .env("WLOC_NO_SERVICE", if adopt { "0" } else { "1" });
            let o = c.output().expect("run");
            assert!(o.status.success(), "{name}: {}", common::show_output(&o));
            let mut lines: Vec<String> = String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| !l.starts_with("UpTime="))
                .map(str::to_owned)
                .collect();
            lines.sort();
            lines
        };
        let (theirs_t, ours_t, control_t) = (
            traces.0.join("theirs"),
            traces.0.join("ours"),
            traces.0.join("control"),
        );
        let theirs = run(false, false, &theirs_t);
        assert!(!theirs.is_empty(), "{name} printed nothing");
        assert_eq!(
            run(true, true, &ours_t),
            theirs,
            "{name} on the published image"
        );
        assert_eq!(run(true, false, &control_t), theirs, "{name} discovering");
        assert!(
            common::discoveries(&control_t) >= 1,
            "{name}: the control run discovered nothing: the count is blind"
        );
        assert_eq!(
            common::discoveries(&ours_t),
            0,
            "{name} discovered with the service's image"
        );
    }
    let _ = std::fs::remove_dir_all(&lib);
}

/// A process in a UTS namespace of its own gets its own host name from
/// the image, as its discovery gives it, not the service's.
#[test]
fn the_host_name_is_the_callers() {
    let p = Published::new("published-hostname");
    let mut c = Command::new("unshare");
    c.args([
        "-u",
        "sh",
        "-c",
        "hostname wloc-uts-test && exec \"$0\" ls -v",
    ])
    .arg(common::wloc());
    p.env(&mut c);
    let (o, adopted) = run(&mut c);
    common::assert_success("wloc ls -v in a UTS namespace", &o);
    assert!(adopted, "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("HostName=wloc-uts-test"), "{out}");
}
