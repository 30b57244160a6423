//! What a C program may rely on from the library's memory (issue 43,
//! items 6-13), checked by `c/memory_safety.c` built against hwloc 2.9's
//! headers: a Group the caller allocated is the object inserted (never
//! freed under it), every object, attribute union, diff entry and distance
//! matrix handed out is initialised to its last byte (valgrind checks),
//! diff documents are bounded (nesting, devices, FIFOs), `hwloc_obj_add_info`
//! is linear, a huge synthetic NUMA index fails instead of aborting, C
//! paths are bytes, and an object the library did not allocate is refused
//! without a read past it.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The test program, built once per test binary run.
fn program(dir: &Path) -> PathBuf {
    let exe = dir.join("memory_safety");
    let src = support::workspace().join("host/capi/tests/c/memory_safety.c");
    support::compile(
        Command::new("gcc")
            .args(["-g", "-O1", "-Wall", "-o"])
            .arg(&exe)
            .arg(&src)
            .arg("-lhwloc"),
    );
    exe
}

fn require() {
    support::require_c_toolchain();
    support::require(&[("/usr/bin/valgrind", "valgrind")]);
}

/// Runs `memory_safety MODE ARG` on this library, under valgrind when
/// asked (errors in the program or the library make it exit 99).
fn run(tag: &str, mode: &str, arg: Option<&Path>, valgrind: bool) -> Output {
    require();
    let lib = support::library_dir(tag);
    let exe = program(&lib);
    let work = lib.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut c = if valgrind {
        let mut c = Command::new("valgrind");
        c.args(["-q", "--error-exitcode=99", "--track-origins=yes"])
            .arg(&exe);
        c
    } else {
        Command::new(&exe)
    };
    c.arg(mode).arg(arg.unwrap_or(&work));
    support::clear_topology_env(&mut c);
    support::use_library(&mut c, Some(&lib));
    c.output().expect("program runs")
}

fn assert_ok(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what}: {:?}\n{}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Item 6: hwloc returns the caller's own pointer when the Group is
/// inserted; the library used to free it and return another object
/// (valgrind: `res == g` fails, then reads of freed memory).
#[test]
fn inserted_group_is_the_callers_object() {
    let o = run("ms-group", "group", None, true);
    assert_ok(&o, "group insertion");
}

/// Item 6, its class: a Group whose sets disagree with each other or
/// with the tree (a complete cpuset wider than its cpuset removed a
/// Package the caller still held) never removes an existing object;
/// valgrind sees no read of freed memory.
#[test]
fn group_insertion_never_removes_held_objects() {
    let o = run("ms-groupsets", "groupsets", None, true);
    assert_ok(&o, "group insertion with disagreeing sets");
}

/// Item 7: a Group from `hwloc_topology_alloc_group_object` is zeroed as
/// hwloc's calloc (depth 0, kind 0), and no byte of any object, attribute
/// union, diff entry or distance matrix is left unwritten.
#[test]
fn everything_handed_out_is_initialised() {
    let xml = support::workspace().join("tests/data/hwloc-2.9/xml/32em64t-2n8c2t-pci-normalio.xml");
    let o = run("ms-init", "init", Some(&xml), true);
    assert_ok(&o, "initialised memory");
}

/// Item 8: 20,000 nested elements in a diff document overflowed the
/// stack; they get -1/EINVAL from the buffer and the file readers.
#[test]
fn deeply_nested_diffs_are_refused() {
    let o = run("ms-diffnest", "diffnest", None, false);
    assert_ok(&o, "nested diff documents");
}

/// Item 9: `/dev/zero` was read until memory ran out and a FIFO blocked
/// the open; both are refused at once (the program dies of SIGALRM after
/// 10 s, or of its 1 GiB address-space limit, otherwise).
#[test]
fn diff_loading_refuses_devices_and_fifos() {
    let o = run("ms-diffdev", "diffdev", None, false);
    assert_ok(&o, "diff from a device or a FIFO");
}

/// Item 10: 8,000 `hwloc_obj_add_info` calls on one object took a minute
/// (each copied and re-set the whole list); they take well under a second
/// (the program fails above 1 s, and dies of SIGALRM after 20 s).
#[test]
fn add_info_is_linear() {
    let o = run("ms-addinfo", "addinfo", None, false);
    assert_ok(&o, "8,000 infos");
}

/// Item 11: a synthetic description with NUMA index 16,777,215 gave every
/// object a 2 MiB node set, and under a memory limit the library aborted
/// the process; the set budget counts NUMA indexes, and the load fails.
#[test]
fn huge_numa_indexes_fail_instead_of_aborting() {
    let o = run("ms-synth", "synth", None, false);
    assert_ok(&o, "synthetic description with a huge NUMA index");
}

/// Item 12: a path that is not UTF-8 named another file (with U+FFFD in
/// its name) for the XML reader, the export and the diff functions.
#[test]
fn c_paths_are_bytes() {
    let o = run("ms-paths", "paths", None, false);
    assert_ok(&o, "non-UTF-8 paths");
}

/// Item 13: `hwloc_obj_add_info` on a program's own `struct hwloc_obj`
/// read past it (valgrind: invalid read); it is refused with EINVAL.
#[test]
fn foreign_objects_are_refused_without_reading_past_them() {
    let o = run("ms-foreign", "foreign", None, true);
    assert_ok(&o, "foreign object");
}
