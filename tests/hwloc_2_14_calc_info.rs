//! `wloc calc` and `wloc info` read and answer as hwloc 2.14's tools do
//! where 2.14 differs from 2.9: each case is a command of hwloc 2.14's own
//! tests (utils/hwloc/test-hwloc-calc.sh, test-hwloc-info.sh) and the
//! output 2.14's expected file gives for it.  tests/hwloc_2_14_tools.rs
//! runs those whole scripts when hwloc 2.14 is built; these cases run
//! without it, in a few seconds.

use crate::common::{conformance, run_wloc};

/// Runs `wloc SUB -i DESC --if synthetic ARGS` and returns its standard
/// output, checking that it succeeded.
fn synth(sub: &str, desc: &str, args: &[&str]) -> String {
    let mut all = vec![sub, "-i", desc, "--if", "synthetic"];
    all.extend_from_slice(args);
    let out = run_wloc(&all);
    assert!(
        out.status.success(),
        "wloc {all:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

const FLAT: &str = "node:4 core:4 pu:4";

#[test]
fn calc_compares_memory_objects_by_their_node_sets() {
    // A single input NUMA node does not bring the other nodes of its locality.
    let t = "pack:2 [numa] group:2 [numa] [numa] pu:2";
    assert_eq!(synth("calc", t, &["-I", "node", "node:2"]), "2\n");
    // CPU-less NUMA nodes are found like the others.
    let out = synth(
        "calc",
        "pack:4 [numa] pu:2",
        &["--restrict", "0xc3", "-I", "node", "node:1", "node:2"],
    );
    assert_eq!(out, "1,2\n");
    // Objects below one of two NUMA nodes of a Package are those that
    // intersect it.
    let out = synth(
        "calc",
        "pack:2 [numa] [numa] core:4 pu:1",
        &["sock:1.numa:1.core:1-2"],
    );
    assert_eq!(out, "0x00000060\n");
    let out = synth(
        "calc",
        "pack:2 [numa] group:2 core:4 1",
        &["--nodeset-output", "pack:1.group:1.numa:0"],
    );
    assert_eq!(out, "0x00000002\n");
}

#[test]
fn calc_object_output_and_intersecting_local_memory() {
    let out = synth("calc", FLAT, &["core:10-15", "-I", "NUMANode", "--oo"]);
    assert_eq!(out, "NUMANode:2,NUMANode:3\n");
    let t = "pack:2 [numa] pu:2";
    let out = synth(
        "calc",
        t,
        &["--local-memory-flags", "intersect", "pack:0", "pack:1.pu:0"],
    );
    assert_eq!(out, "0,1\n");
    let t = "[numa] pack:2 [numa] die:2 [numa] pu:2";
    let out = synth("calc", t, &["--best-memattr", "locality", "pu:3", "--oo"]);
    assert_eq!(out, "NUMANode:1\n");
}

#[test]
fn calc_default_nodes_keep_one_node_per_locality() {
    let t = "pack:2 [numa] [numa] pu:2";
    assert_eq!(synth("calc", t, &["-I", "numa", "all"]), "0,1,2,3\n");
    assert_eq!(
        synth("calc", t, &["--default-nodes", "-I", "numa", "all"]),
        "0,2\n"
    );
}

#[test]
fn calc_reads_open_ended_lists_and_infinite_sets() {
    assert_eq!(
        synth("calc", FLAT, &["--cof", "hwloc", "3-"]),
        "0xf...f,0xfffffff8\n"
    );
    assert_eq!(
        synth("calc", FLAT, &["--cof", "hwloc", "3-4,7-34,62,66"]),
        "0x00000004,0x40000007,0xffffff98\n"
    );
    assert_eq!(synth("calc", FLAT, &["--cof", "list", "0xf...f00"]), "8-\n");
    assert_eq!(
        synth("calc", FLAT, &["0xf...fff0000ffff0000"]),
        "0xf...f,0xffff0000,0xffff0000\n"
    );
}

#[test]
fn calc_writes_the_systemd_dbus_api_form() {
    let cof = "--cpuset-output-format";
    assert_eq!(
        synth(
            "calc",
            FLAT,
            &[cof, "systemd-dbus-api", "0x8000000080000001"]
        ),
        "ay 0x0008 0x01 0x00 0x00 0x80 0x00 0x00 0x00 0x80\n"
    );
    assert_eq!(
        synth(
            "calc",
            FLAT,
            &[
                "--nodeset-output-format",
                "systemd-dbus-api",
                "node:0",
                "node:2"
            ]
        ),
        "ay 0x0001 0x05\n"
    );
    // Neither an empty nor an infinite set has that form.
    for set in ["", "0xf...f"] {
        let out = run_wloc([
            "calc",
            "-i",
            FLAT,
            "--if",
            "synthetic",
            cof,
            "systemd-dbus-api",
            set,
        ]);
        assert!(!out.status.success(), "{set:?} was accepted");
        assert!(out.stdout.is_empty());
    }
    // Nor is it read.
    let out = run_wloc([
        "calc",
        "-i",
        FLAT,
        "--if",
        "synthetic",
        "--cif",
        "systemd-dbus-api",
        "1",
    ]);
    assert!(!out.status.success());
}

#[test]
fn calc_lists_cpu_kinds_and_filters_levels() {
    let xml = conformance().join("linux/fakeheterocpunuma.xml");
    let xml = xml.to_str().expect("a UTF-8 path");
    let run = |args: &[&str]| {
        let mut all = vec!["calc", "--if", "xml", "-i", xml];
        all.extend_from_slice(args);
        let out = run_wloc(&all);
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).expect("UTF-8")
    };
    assert_eq!(run(&["-N", "cpukind", "0xf0f0"]), "2\n");
    assert_eq!(run(&["-I", "cpukind", "0xff00"]), "0,2\n");
    assert_eq!(
        run(&["-I", "cpukind", "--oo", "0xff00"]),
        "cpukind:0,cpukind:2\n"
    );
    let heteromem = conformance().join("xml/64intel64-heteromem.xml");
    let heteromem = heteromem.to_str().expect("a UTF-8 path");
    let run = |args: &[&str]| {
        let mut all = vec!["calc", "--if", "xml", "-i", heteromem];
        all.extend_from_slice(args);
        let out = run_wloc(&all);
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).expect("UTF-8")
    };
    // 4 DRAM and 4 HBM nodes: a filter is a subtype, compared without case.
    assert_eq!(run(&["-N", "numa", "all"]), "8\n");
    assert_eq!(run(&["-N", "numa[hbm]", "all"]), "4\n");
    assert_eq!(run(&["-N", "numa[subtype=DRAM]", "all"]), "4\n");
    assert_eq!(run(&["-N", "numa[mcdram]", "all"]), "0\n");
    assert_eq!(
        run(&["-H", "numa[HBM]", "all"]).split(' ').count(),
        4,
        "-H keeps the filter"
    );
}

#[test]
fn info_reports_the_topology_and_levels_keywords() {
    let t = "node:2 core:3 pu:4";
    let out = synth("info", t, &["topology"]);
    assert!(
        out.contains("info SyntheticDescription = node:2 core:3 pu:4\n"),
        "{out}"
    );
    assert!(
        out.ends_with("depth = 4\nPUs = 24\nNUMANodes = 2\nCPU kinds = 0\n"),
        "{out}"
    );
    assert_eq!(
        synth(
            "info",
            t,
            &["--get-attr", "info SyntheticDescription", "topology"]
        ),
        "node:2 core:3 pu:4\n"
    );
    let out = synth("info", t, &["levels", "support"]);
    assert!(out.starts_with("depth 0:"), "{out}");
    assert!(
        out.contains("membind:weighted_interleave_membind = 0\n"),
        "{out}"
    );
}

#[test]
fn info_ancestors_and_descendants_of_a_kind() {
    let out = synth(
        "info",
        "node:2 l4:2 l3:2 core:2 l2:2 l1d:2 pu:2",
        &["--ancestor", "kind=cache", "-n", "-s", "l1d:4", "l1d:8"],
    );
    assert_eq!(
        out,
        "0.0: L2Cache:2\n0.1: L3Cache:0\n0.2: L4Cache:0\n1.0: L2Cache:4\n1.1: L3Cache:1\n1.2: L4Cache:0\n"
    );
    let t = "pack:4 [numa] l3:2 [numa] [numa] core:4 pu:2";
    let out = synth(
        "info",
        t,
        &["--descendants", "kind=memory", "-n", "-s", "l3:1", "l3:7"],
    );
    assert_eq!(
        out,
        "0.0: NUMANode:2\n0.1: NUMANode:3\n1.0: NUMANode:17\n1.1: NUMANode:18\n"
    );
    let out = synth(
        "info",
        t,
        &[
            "--ancestor",
            "kind=normal",
            "--first",
            "-s",
            "numa:3",
            "numa:14",
        ],
    );
    assert_eq!(out, "L3Cache:1\nPackage:2\n");
    let out = synth(
        "info",
        t,
        &[
            "--ancestor",
            "kind=normal",
            "--first",
            "--get-attr",
            "allowed cpuset",
            "numa:3",
            "numa:14",
        ],
    );
    assert_eq!(out, "0x0000ff00\n0x0000ffff,0x0\n");
}

#[test]
fn info_default_nodes_of_an_object() {
    let out = synth(
        "info",
        "pack:2 [numa] [numa] pu:2",
        &["-s", "--default-nodes", "pu:3"],
    );
    assert_eq!(out, "NUMANode:2\n");
}
