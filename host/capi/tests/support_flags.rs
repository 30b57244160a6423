//! `hwloc_topology_get_support` answers as libhwloc does for every kind
//! of source: this machine, XML with and without
//! `HWLOC_TOPOLOGY_FLAG_IMPORT_SUPPORT`, synthetic descriptions and
//! recorded Linux machines (which say whether they found NUMA nodes);
//! and an XML export writes those flags, as hwloc writes its structure.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

/// `c/support_flags.c`, built against hwloc 2.9's headers.
fn program(dir: &Path) -> PathBuf {
    let exe = dir.join("support_flags");
    let src = support::workspace().join("host/capi/tests/c/support_flags.c");
    support::compile(
        Command::new("gcc")
            .args(["-O1", "-Wall", "-o"])
            .arg(&exe)
            .arg(&src)
            .arg("-lhwloc"),
    );
    exe
}

/// Runs `exe ARGS` on Debian's libhwloc (`lib` None) or on this library.
fn run(exe: &Path, args: &[&str], lib: Option<&Path>) -> String {
    let mut c = Command::new(exe);
    c.args(args);
    support::clear_topology_env(&mut c);
    support::use_library(&mut c, lib);
    let o = c.output().expect("program runs");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn support_flags_are_libhwlocs() {
    support::require_c_toolchain();
    let lib = support::library_dir("support-flags");
    let exe = program(&lib);
    let data = support::workspace().join("tests/data");
    // Recorded machines with and without NUMA nodes in sysfs.
    let mut fsroots = Vec::new();
    for name in ["16amd64-8n2c", "2arm-2c"] {
        let ok = Command::new("tar")
            .arg("xjf")
            .arg(data.join(format!("conformance/linux/{name}.tar.bz2")))
            .arg("-C")
            .arg(&lib)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "{name} unpacks");
        fsroots.push(lib.join(name).display().to_string());
    }
    // A document hwloc wrote with its support flags, one without memory
    // sizes, and one of the test kit's.
    let with_support = lib.join("with-support.xml");
    let o = Command::new("lstopo-no-graphics")
        .args(["-i", "pack:2 [numa] core:2 pu:2", "--of", "xml"])
        .arg(&with_support)
        .output()
        .unwrap();
    assert!(o.status.success());
    let kit_xml = data.join("hwloc-2.9/xml/fakecpukinds.xml");
    // The same document without its <support> elements, and an hwloc 1.x
    // document (which has none): with HWLOC_TOPOLOGY_FLAG_IMPORT_SUPPORT
    // every flag is unset.
    let no_support = lib.join("no-support.xml");
    let text = std::fs::read_to_string(&with_support).unwrap();
    let kept: Vec<&str> = text.lines().filter(|l| !l.contains("<support ")).collect();
    std::fs::write(&no_support, kept.join("\n")).unwrap();
    let v1 = lib.join("v1.xml");
    let sets = |c: &str| {
        format!(
            r#"cpuset="{c}" complete_cpuset="{c}" online_cpuset="{c}" allowed_cpuset="{c}" nodeset="0x1" complete_nodeset="0x1" allowed_nodeset="0x1""#
        )
    };
    std::fs::write(
        &v1,
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc.dtd\">\n<topology>\n\
             <object type=\"Machine\" os_index=\"0\" {}>\
             <object type=\"NUMANode\" os_index=\"0\" {} local_memory=\"1073741824\">\
             <object type=\"PU\" os_index=\"0\" {}/><object type=\"PU\" os_index=\"1\" {}/>\
             </object></object>\n</topology>\n",
            sets("0x3"),
            sets("0x3"),
            sets("0x1"),
            sets("0x2")
        ),
    )
    .unwrap();
    let mut cases: Vec<Vec<String>> = vec![vec!["this".into()]];
    for xml in [&with_support, &kit_xml, &no_support, &v1] {
        for how in ["xml", "xml-import"] {
            cases.push(vec![how.into(), xml.display().to_string()]);
        }
    }
    for desc in [
        "pack:2 core:2 pu:1",
        "pack:2 [numa] core:4 pu:2",
        "node:2 pack:1 pu:2",
    ] {
        cases.push(vec!["synthetic".into(), desc.into()]);
    }
    for root in &fsroots {
        cases.push(vec!["fsroot".into(), root.clone()]);
    }
    let mut differ = Vec::new();
    for case in &cases {
        let args: Vec<&str> = case.iter().map(String::as_str).collect();
        let theirs = run(&exe, &args, None);
        assert!(
            theirs.contains("discovery.pu "),
            "{args:?} on libhwloc: {theirs}"
        );
        let ours = run(&exe, &args, Some(&lib));
        if ours != theirs {
            let lines: Vec<String> = theirs
                .lines()
                .zip(ours.lines())
                .filter(|(a, b)| a != b)
                .map(|(a, b)| format!("libhwloc {a} / wloc {b}"))
                .collect();
            differ.push(format!("{args:?}: {}", lines.join(", ")));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
