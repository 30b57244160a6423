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
/// root/sys/fifo                                 (a FIFO: must not block)
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
    // A FIFO reads as empty instead of blocking.
    assert_eq!(read(&fa, "/sys/fifo").unwrap(), "");
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
    let fa = FileAccess::new(&["/proc/self/status"], None).unwrap();
    assert!(read(&fa, "/proc/self/status").unwrap().contains("Pid:"));
    assert_eq!(read(&fa, "/proc/self/environ"), Err(FileError::Denied));
    assert_eq!(read(&fa, "/proc/self/status/x"), Err(FileError::Denied));
    assert_eq!(fa.list_dir("/proc/self"), Err(FileError::Denied));
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
