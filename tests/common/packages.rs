//! Installing the Debian packages a test needs (shared with the C
//! library's tests in host/capi/tests and the unit tests that compare
//! with hwloc, which include this file by path: so it uses std alone).

use std::path::Path;
use std::process::Command;
// Named from std so that this file also compiles in the `no_std` core
// crate's unit tests, whose prelude is core's.
use std::string::{String, ToString};
use std::vec::Vec;
use std::{eprintln, format};

/// What building hwloc 2.14.0 from `tests/data/hwloc-2.14` takes (its
/// `run.sh`), for the tests that run its suites (the other includers of
/// this file use it not).
#[allow(dead_code)]
pub const HWLOC_SOURCE_BUILD: &[(&str, &str)] = &[
    ("/usr/bin/gcc", "gcc"),
    ("/usr/bin/make", "make"),
    ("/usr/bin/autoreconf", "autoconf"),
    ("/usr/bin/automake", "automake"),
    ("/usr/bin/libtoolize", "libtool"),
    ("/usr/bin/pkg-config", "pkg-config"),
    ("/usr/include/libxml2/libxml/parser.h", "libxml2-dev"),
    // The PCI component, as in Debian's libhwloc (PCI names from pci.ids).
    ("/usr/include/pciaccess.h", "libpciaccess-dev"),
    ("/usr/bin/xz", "xz-utils"),
    ("/usr/bin/flock", "util-linux"),
];

/// Makes sure Debian packages are installed, each named with a file it
/// ships (a path, or a glob such as `/boot/vmlinuz-*`): missing ones are
/// installed with apt-get, so that `cargo test` alone runs every test on a
/// fresh machine.  Installs are serialised across test threads and test
/// binaries by a lock file.  Without root or without the package
/// registry, the error says what to install.
pub fn require_packages(packages: &[(&str, &str)]) -> Result<(), String> {
    let present = |probe: &str| match probe.split_once('*') {
        Some((dir_prefix, _)) => {
            let (dir, prefix) = dir_prefix.rsplit_once('/').unwrap_or(("/", dir_prefix));
            std::fs::read_dir(dir).is_ok_and(|mut e| {
                e.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with(prefix)))
            })
        }
        None => Path::new(probe).exists(),
    };
    let missing = |pk: &[(&str, &str)]| -> Vec<String> {
        pk.iter()
            .filter(|(probe, _)| !present(probe))
            .map(|(_, p)| p.to_string())
            .collect()
    };
    if missing(packages).is_empty() {
        return Ok(());
    }
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(std::env::temp_dir().join("wloc-tests-apt.lock"))
        .map_err(|e| format!("cannot open the install lock: {e}"))?;
    // Released when `lock` is closed.
    lock.lock()
        .map_err(|e| format!("cannot take the install lock: {e}"))?;
    // Another test may have installed them while this one waited.
    let want = missing(packages);
    if want.is_empty() {
        return Ok(());
    }
    let hint = format!(
        "the tests need Debian packages {}: apt-get install {}",
        want.join(", "),
        want.join(" ")
    );
    if !is_root() {
        return Err(format!("{hint} (as root)"));
    }
    eprintln!("installing {} for the tests", want.join(" "));
    let install = || {
        Command::new("apt-get")
            .args(["install", "-y", "-qq", "--no-install-recommends"])
            .args(&want)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let updated = || {
        Command::new("apt-get")
            .args(["update", "-qq"])
            .stdout(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !(install() || (updated() && install())) {
        return Err(format!(
            "{hint} (apt-get failed; is the package registry reachable?)"
        ));
    }
    match missing(packages) {
        m if m.is_empty() => Ok(()),
        m => Err(format!(
            "{} still missing after apt-get install",
            m.join(", ")
        )),
    }
}

/// Whether this process runs as root (its effective user id, from
/// `/proc/self/status`: std alone, for the crates without libc).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            == Some("0")
    })
}
