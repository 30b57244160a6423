//! The `files` interface: grants, fsroot rebasing, symbolic links, and
//! every way out of the grants refused — natively and from a component.

mod common;

use common::*;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wloc_runtime::fs::{FileAccess, FileError};

const SECRET: &str = "SECRET-CONTENT";

/// A recorded machine:
///
/// ```text
/// root/secret                                   (outside the grants)
/// root/sys/devices/system/cpu/online            "0-3"
/// root/sys/devices/system/cpu/cpu0/node0 -> ../../node/node0
/// root/sys/devices/system/node/node0/meminfo    "Node 0 MemTotal"
/// root/sys/link_etc -> /etc
/// root/sys/link_passwd -> /etc/passwd
/// root/sys/up -> ../..
/// root/sys/to_secret -> ../secret
/// root/sys/abs -> /sys/devices/system/cpu/online
/// root/sys/loop -> loop
/// root/sys/fifo                                 (a FIFO: never served)
/// ```
fn tree(name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("files-{name}"));
    let _ = std::fs::remove_dir_all(&root);
    let cpu = root.join("sys/devices/system/cpu");
    let node = root.join("sys/devices/system/node/node0");
    std::fs::create_dir_all(cpu.join("cpu0")).unwrap();
    std::fs::create_dir_all(cpu.join("cpu1")).unwrap();
    std::fs::create_dir_all(&node).unwrap();
    std::fs::write(root.join("secret"), SECRET).unwrap();
    std::fs::write(cpu.join("online"), "0-3\n").unwrap();
    std::fs::write(node.join("meminfo"), "Node 0 MemTotal\n").unwrap();
    symlink("../../node/node0", cpu.join("cpu0/node0")).unwrap();
    let sys = root.join("sys");
    symlink("/etc", sys.join("link_etc")).unwrap();
    symlink("/etc/passwd", sys.join("link_passwd")).unwrap();
    symlink("../..", sys.join("up")).unwrap();
    symlink("../secret", sys.join("to_secret")).unwrap();
    symlink("/sys/devices/system/cpu/online", sys.join("abs")).unwrap();
    symlink("loop", sys.join("loop")).unwrap();
    let fifo = sys.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        c.as_c_str(),
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
    )
    .unwrap();
    root
}

fn read(fa: &FileAccess, p: &str) -> Result<String, FileError> {
    fa.read(p, 4096).map(|b| String::from_utf8(b).unwrap())
}

#[test]
fn fsroot_grant_reads_inside_and_refuses_outside() {
    let root = tree("fsroot");
    let fa = FileAccess::new(&["/sys"], Some(&root)).unwrap();
    assert_eq!(
        read(&fa, "/sys/devices/system/cpu/online").unwrap(),
        "0-3\n"
    );
    // A link inside the grant, and an absolute link read in the fsroot.
    assert_eq!(
        read(&fa, "/sys/devices/system/cpu/cpu0/node0/meminfo").unwrap(),
        "Node 0 MemTotal\n"
    );
    assert_eq!(read(&fa, "/sys/abs").unwrap(), "0-3\n");
    for p in [
        "/secret",
        "/sys/../secret",
        "/sys/devices/../../secret",
        "/etc/passwd",
        "/sys/link_etc/passwd",
        "/sys/link_passwd",
        "/sys/up/secret",
        "/sys/to_secret",
        "/proc/self/environ",
        "sys/devices/system/cpu/online",
        "",
    ] {
        assert_eq!(read(&fa, p), Err(FileError::Denied), "{p}");
    }
    assert_eq!(read(&fa, "/sys/missing"), Err(FileError::NotFound));
    assert!(matches!(read(&fa, "/sys/loop"), Err(FileError::Io(_))));
    // A FIFO is never opened (it could block): only regular files are
    // read, anything else is answered as a missing file would be, and
    // left out of listings.
    assert_eq!(read(&fa, "/sys/fifo"), Err(FileError::NotFound));
    assert!(!fa.list_dir("/sys").unwrap().iter().any(|n| n == "fifo"));
    // Directories, links and globs follow the same rules.
    assert_eq!(
        fa.list_dir("/sys/devices/system/cpu").unwrap(),
        vec!["cpu0", "cpu1", "online"]
    );
    assert_eq!(fa.list_dir("/"), Err(FileError::Denied));
    assert_eq!(fa.list_dir("/sys/up"), Err(FileError::Denied));
    assert_eq!(fa.list_dir("/sys/link_etc"), Err(FileError::Denied));
    assert_eq!(fa.read_link("/sys/link_etc").unwrap(), "/etc");
    assert_eq!(fa.read_link("/sys/up/secret"), Err(FileError::Denied));
    assert_eq!(
        fa.glob("/sys/devices/system/cpu/cpu*").unwrap(),
        vec![
            "/sys/devices/system/cpu/cpu0",
            "/sys/devices/system/cpu/cpu1"
        ]
    );
    assert_eq!(
        fa.glob("/sys/devices/system/cpu/cpu?/node*/meminfo")
            .unwrap(),
        vec!["/sys/devices/system/cpu/cpu0/node0/meminfo"]
    );
    assert_eq!(fa.glob("/*"), Err(FileError::Denied));
    assert_eq!(fa.glob("/sys/up/*"), Err(FileError::Denied));
    // Content is cut at the size asked for.
    assert_eq!(fa.read("/sys/devices/system/cpu/online", 2).unwrap(), b"0-");
}

#[test]
fn links_between_grants_are_followed_and_out_of_them_refused() {
    let root = tree("split");
    let both = FileAccess::new(
        &["/sys/devices/system/cpu", "/sys/devices/system/node"],
        Some(&root),
    )
    .unwrap();
    assert_eq!(
        read(&both, "/sys/devices/system/cpu/cpu0/node0/meminfo").unwrap(),
        "Node 0 MemTotal\n"
    );
    assert_eq!(
        both.list_dir("/sys/devices/system/cpu/cpu0/node0").unwrap(),
        vec!["meminfo"]
    );
    let cpu_only = FileAccess::new(&["/sys/devices/system/cpu"], Some(&root)).unwrap();
    assert_eq!(
        read(&cpu_only, "/sys/devices/system/cpu/cpu0/node0/meminfo"),
        Err(FileError::Denied)
    );
    assert_eq!(read(&cpu_only, "/sys/abs"), Err(FileError::Denied));
    assert_eq!(
        cpu_only.list_dir("/sys/devices/system"),
        Err(FileError::Denied)
    );
    // Missing roots are reported, not fatal.
    let fa = FileAccess::new(&["/sys", "/nothing/here"], Some(&root)).unwrap();
    assert_eq!(fa.missing(), ["/nothing/here"]);
    assert!(FileAccess::new(&["relative"], Some(&root)).is_err());
    assert!(FileAccess::new(&["/sys/../etc"], Some(&root)).is_err());
}

#[test]
fn file_grants_give_that_file_only() {
    // Without an fsroot: the real /proc, one file of it.
    let fa = FileAccess::new(&["/proc/cpuinfo"], None).unwrap();
    assert!(read(&fa, "/proc/cpuinfo").unwrap().contains("processor"));
    assert_eq!(read(&fa, "/proc/meminfo"), Err(FileError::Denied));
    assert_eq!(read(&fa, "/proc/cpuinfo/x"), Err(FileError::Denied));
    assert_eq!(fa.list_dir("/proc"), Err(FileError::Denied));
    // A granted file private to the process is still withheld.
    let fa = FileAccess::new(&["/proc/self/status"], None).unwrap();
    assert_eq!(read(&fa, "/proc/self/status"), Err(FileError::Denied));
    assert_eq!(read(&fa, "/proc/self/environ"), Err(FileError::Denied));
    assert_eq!(fa.list_dir("/proc/self"), Err(FileError::Denied));
}

/// Every spelling of a file private to a process, on the running system.
const PRIVATE_PATHS: &[&str] = &[
    "/proc/self/environ",
    "/proc/./self/environ",
    "/proc//self/environ",
    "/proc/self/./environ",
    "/proc/self/cmdline",
    "/proc/self/status",
    "/proc/self/maps",
    "/proc/self/auxv",
    "/proc/self/stack",
    "/proc/self/syscall",
    "/proc/self/mem",
    "/proc/self/fd/0",
    "/proc/self/fd/1",
    "/proc/self/root/etc/passwd",
    "/proc/self/task/1/environ",
    "/proc/thread-self/environ",
    "/proc/thread-self/cgroup",
    "/proc/1/environ",
    "/proc/1/cmdline",
    "/proc/1/cgroup",
    "/proc/net/unix",
    "/proc/net/tcp",
    "/proc/kcore",
    "/proc/loadavg",
    "/proc/sys/kernel/ns_last_pid",
];

fn is_process_folder(p: &str) -> bool {
    wloc_runtime::fs::privacy::is_process_folder(p.rsplit('/').next().unwrap())
}

#[test]
fn process_private_files_are_never_served_whatever_the_grant() {
    let own = format!("/proc/{}/environ", std::process::id());
    for roots in [&["/proc", "/sys"][..], &["/"][..], &["/proc/self"][..]] {
        let fa = FileAccess::new(roots, None).unwrap();
        for p in PRIVATE_PATHS.iter().copied().chain([own.as_str()]) {
            assert_eq!(fa.read(p, 4096), Err(FileError::Denied), "{roots:?} {p}");
            assert_eq!(fa.read_link(p), Err(FileError::Denied), "{roots:?} {p}");
            assert!(!fa.exists(p), "{roots:?} {p}");
        }
        for p in [
            "/proc/self",
            "/proc/self/fd",
            "/proc/1",
            "/proc/thread-self",
        ] {
            assert_eq!(fa.list_dir(p), Err(FileError::Denied), "{roots:?} {p}");
            assert_eq!(fa.read_link(p), Err(FileError::Denied), "{roots:?} {p}");
            assert!(
                !matches!(fa.glob(&format!("{p}/*")), Ok(v) if !v.is_empty()),
                "{p}"
            );
        }
    }
    // The grant of "/" also reaches /proc through links elsewhere.
    let fa = FileAccess::new(&["/"], None).unwrap();
    for p in ["/dev/fd/0", "/dev/stdin", "/dev/fd/1"] {
        assert!(
            matches!(fa.read(p, 16), Err(FileError::Denied | FileError::NotFound)),
            "{p}"
        );
    }
    // What discovery needs is still served.
    let fa = FileAccess::new(&["/proc", "/sys"], None).unwrap();
    for p in [
        "/proc/self/cgroup",
        "/proc/self/mounts",
        "/proc/mounts",
        "/proc/cpuinfo",
    ] {
        assert!(!fa.read(p, 1 << 20).unwrap().is_empty(), "{p}");
    }
    // Listings and globs show no process.
    let names = fa.list_dir("/proc").unwrap();
    assert!(names.iter().any(|n| n == "cpuinfo"));
    assert!(!names.iter().any(|n| is_process_folder(n)), "{names:?}");
    for pattern in [
        "/proc/*",
        "/proc/*/cmdline",
        "/proc/*/environ",
        "/proc/*/task/*/environ",
    ] {
        let found = fa.glob(pattern).unwrap();
        assert!(
            !found
                .iter()
                .any(|p| p.split('/').nth(2).is_some_and(is_process_folder)),
            "{pattern}: {found:?}"
        );
    }
}

#[test]
fn process_private_files_of_a_recording_are_withheld_too() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("files-proc-recording");
    let _ = std::fs::remove_dir_all(&root);
    for d in ["proc/self", "proc/1", "proc/sys/kernel", "sys"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    for (f, text) in [
        ("proc/self/cgroup", "0::/job\n"),
        ("proc/self/environ", SECRET),
        ("proc/1/environ", SECRET),
        ("proc/cpuinfo", "processor : 0\n"),
        ("proc/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n"),
        ("proc/sys/kernel/ns_last_pid", "4242\n"),
    ] {
        std::fs::write(root.join(f), text).unwrap();
    }
    symlink("../proc/self/environ", root.join("sys/to_environ")).unwrap();
    let fa = FileAccess::new(&["/proc", "/sys"], Some(&root)).unwrap();
    assert_eq!(read(&fa, "/proc/self/cgroup").unwrap(), "0::/job\n");
    assert!(read(&fa, "/proc/mounts").unwrap().starts_with("cgroup2"));
    for p in [
        "/proc/self/environ",
        "/proc/1/environ",
        "/proc/sys/kernel/ns_last_pid",
        "/sys/to_environ",
    ] {
        assert_eq!(read(&fa, p), Err(FileError::Denied), "{p}");
    }
    assert_eq!(
        fa.list_dir("/proc").unwrap(),
        vec!["cpuinfo", "mounts", "sys"]
    );
    assert_eq!(
        fa.list_dir("/proc/sys/kernel").unwrap(),
        Vec::<String>::new()
    );
}

#[test]
fn reads_stop_at_the_budget_while_reading() {
    use wloc_runtime::fs::{BudgetKind, ReadBudget};
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("files-budget");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("data/dir")).unwrap();
    std::fs::write(root.join("data/big"), vec![7u8; 60_000]).unwrap();
    for i in 0..10 {
        std::fs::write(root.join(format!("data/dir/f{i}")), "x").unwrap();
    }
    let fa = FileAccess::new(&["/data"], Some(&root)).unwrap();
    let budget = ReadBudget::new(100_000, u64::MAX);
    assert_eq!(
        fa.read_within("/data/big", 1 << 20, &budget).unwrap().len(),
        60_000
    );
    // The second copy would pass the budget: refused after at most the
    // bytes left plus one were read, and everything after it too.
    assert_eq!(
        fa.read_within("/data/big", 1 << 20, &budget),
        Err(FileError::OverBudget(BudgetKind::Bytes))
    );
    assert_eq!(budget.bytes_left(), 0);
    assert_eq!(
        fa.read_within("/data/dir/f0", 16, &budget),
        Err(FileError::OverBudget(BudgetKind::Bytes))
    );
    assert!(matches!(
        fa.list_dir_within("/data/dir", &budget),
        Err(FileError::OverBudget(_))
    ));
    // Listings and globs are charged name by name.
    let budget = ReadBudget::new(1 << 20, 5);
    assert_eq!(
        fa.list_dir_within("/data/dir", &budget),
        Err(FileError::OverBudget(BudgetKind::Entries))
    );
    let budget = ReadBudget::new(1 << 20, 8);
    assert_eq!(
        fa.glob_counted("/data/dir/*", &mut 0, &budget),
        Err(FileError::OverBudget(BudgetKind::Entries))
    );
    let budget = ReadBudget::new(1 << 20, 100);
    assert_eq!(
        fa.glob_counted("/data/dir/*", &mut 0, &budget)
            .unwrap()
            .len(),
        10
    );
}

/// A component that asks for one large file 65,536 times in one batch is
/// stopped at its read budget with a message naming the limit.
#[test]
fn a_flood_of_reads_ends_at_the_budget() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("files-flood");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("sys")).unwrap();
    std::fs::write(root.join("sys/flood"), vec![b'x'; 5 << 20]).unwrap();
    let wasm = std::fs::read(
        Path::new(wloc_runtime::test_components_dir()).join("hostile-read-flood.wasm"),
    )
    .unwrap();
    let flood = runtime().load("flood", &wasm).unwrap();
    for mode in ["one-batch", "many-batches"] {
        std::fs::write(root.join("sys/flood-mode"), mode).unwrap();
        let mut o = opts(&[]);
        o.files = Arc::new(FileAccess::new(&["/sys"], Some(&root)).unwrap());
        o.limits.max_read_bytes = 8 << 20;
        let e = runtime()
            .run(&flood, &o)
            .err()
            .expect("the flood ran to its end");
        let msg = e.to_string();
        assert!(
            matches!(e.kind, wloc_runtime::ErrorKind::HostLimit(_))
                && msg.contains("budget of 8388608 bytes")
                && msg.contains("flood"),
            "{mode}: {msg}"
        );
    }
    still_works();
}

/// The same checks made from inside a component: nothing outside the
/// grant ever reaches it.
#[test]
fn a_component_cannot_read_outside_its_grant() {
    let root = tree("component");
    let paths = [
        "/secret",
        "/sys/../secret",
        "/etc/passwd",
        "/etc",
        "/sys/link_etc/passwd",
        "/sys/link_etc",
        "/sys/link_passwd",
        "/sys/up/secret",
        "/sys/up",
        "/sys/to_secret",
        "/proc/self/environ",
        "/proc/self",
        "relative/path",
    ];
    let allowed = ["/sys/devices/system/cpu/online", "/sys/abs"];
    let all: Vec<&str> = paths.iter().chain(allowed.iter()).copied().collect();
    let mut o = opts(&[("mode", "read"), ("paths", &all.join("\n"))]);
    o.files = Arc::new(FileAccess::new(&["/sys"], Some(&root)).unwrap());
    let t = runtime()
        .discover(hostile(), &o, lstopo_topology())
        .unwrap();
    for i in &t.infos {
        assert!(!i.value.contains(SECRET), "{} leaked: {}", i.name, i.value);
        assert!(!i.value.contains("root:"), "{} leaked: {}", i.name, i.value);
    }
    let get = |name: String| {
        t.infos
            .iter()
            .find(|i| i.name == name)
            .unwrap_or_else(|| panic!("no info {name}"))
            .value
            .clone()
    };
    for p in paths {
        assert_eq!(get(format!("read {p}")), "denied", "{p}");
        assert_eq!(get(format!("list {p}")), "denied", "{p}");
        assert_eq!(get(format!("glob {p}/*")), "denied", "{p}");
    }
    for p in allowed {
        assert_eq!(get(format!("read {p}")), "read 4 bytes: 0-3\n", "{p}");
    }
    // Reading a link's text is allowed inside the grant; following it is not.
    assert_eq!(get("link /sys/link_etc".into()), "link to /etc");
    still_works();
}
