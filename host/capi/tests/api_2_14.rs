//! hwloc 2.14's API (`tests/data/hwloc-2.14`): every function its public
//! headers declare is exported by the library, and a program built with
//! those headers gets what they document from the functions and flags
//! 2.10 to 2.14 added (`c/api_2_14.c`), on synthetic topologies and on
//! this machine.

mod support;

use std::collections::BTreeSet;
use std::process::Command;

/// The functions a header declares for the library to export
/// (`HWLOC_DECLSPEC` declarations; inline helpers are compiled into the
/// program).
fn declared(header: &str) -> BTreeSet<String> {
    let flat = header.replace('\n', " ");
    flat.split("HWLOC_DECLSPEC")
        .skip(1)
        .filter_map(|decl| {
            let head = decl.split(['(', ';']).next()?;
            let name = head
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .rfind(|w| !w.is_empty())?;
            (name.starts_with("hwloc_") && decl.contains('(')).then(|| name.to_string())
        })
        .collect()
}

#[test]
fn every_function_of_2_14s_headers_is_exported() {
    let lib = support::library_dir("api-2-14-symbols");
    let inc = support::hwloc_2_14_headers(&lib);
    // The public API; not the plugin API (hwloc/plugins.h), nor the
    // interoperability headers of vendor libraries that are absent.
    let mut want = BTreeSet::new();
    for h in [
        "hwloc.h",
        "hwloc/bitmap.h",
        "hwloc/cpukinds.h",
        "hwloc/diff.h",
        "hwloc/distances.h",
        "hwloc/export.h",
        "hwloc/helper.h",
        "hwloc/memattrs.h",
        "hwloc/shmem.h",
        "hwloc/linux.h",
        "hwloc/deprecated.h",
    ] {
        want.extend(declared(&std::fs::read_to_string(inc.join(h)).unwrap()));
    }
    assert!(
        want.len() > 170,
        "only {} functions read: {want:?}",
        want.len()
    );
    let o = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(support::built_library())
        .output()
        .expect("nm runs");
    let exported: BTreeSet<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_string))
        .collect();
    let missing: Vec<&String> = want.difference(&exported).collect();
    assert!(missing.is_empty(), "not exported: {missing:?}");
}

#[test]
fn a_program_built_with_2_14s_headers_gets_what_they_document() {
    support::require_c_toolchain();
    let lib = support::library_dir("api-2-14");
    let inc = support::hwloc_2_14_headers(&lib);
    let exe = lib.join("api_2_14");
    support::compile(
        Command::new("gcc")
            .args(["-O1", "-Wall", "-Werror", "-I"])
            .arg(&inc)
            .arg("-o")
            .arg(&exe)
            .arg(support::workspace().join("host/capi/tests/c/api_2_14.c"))
            // This library itself (soname libhwloc.so.15): Debian's
            // libhwloc.so, which -lhwloc finds, lacks 2.14's functions.
            .arg(support::built_library()),
    );
    for mode in [None, Some("this-system")] {
        let mut c = Command::new(&exe);
        c.args(mode);
        support::clear_topology_env(&mut c);
        support::use_library(&mut c, Some(&lib));
        let o = c.output().expect("the program runs");
        assert!(
            o.status.success(),
            "{mode:?}: {:?}\n{}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
