//! `wloc annotate` against Debian's hwloc-annotate (hwloc 2.9): the same
//! command lines on the same hwloc 2 XML files give the same topology
//! (both outputs read back and written by lstopo, then compared as text),
//! and bad command lines or files fail clearly.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// One command line, after the input and output files.
type Step<'a> = &'a [&'a str];

/// A topology as hwloc 2.9 writes it after reading it.
fn normalised(xml: &Path) -> Result<String, String> {
    let o = Command::new("lstopo-no-graphics")
        .arg("-i")
        .arg(xml)
        .args(["--if", "xml", "--of", "xml", "-"])
        .env("HWLOC_HIDE_ERRORS", "2")
        .output()
        .expect("lstopo-no-graphics runs");
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    } else {
        Err(format!(
            "hwloc cannot read {}: {}",
            xml.display(),
            String::from_utf8_lossy(&o.stderr)
        ))
    }
}

fn show(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs the steps with both tools on copies of `input`, each step
/// changing its file in place, then compares the results: the first
/// failure or difference, if any.
fn compare_steps(input: &Path, dir: &Path, steps: &[(Step, Step)]) -> Result<(), String> {
    let theirs = dir.join("hwloc.xml");
    let ours = dir.join("wloc.xml");
    std::fs::copy(input, &theirs).expect("copy");
    std::fs::copy(input, &ours).expect("copy");
    for (opts, step) in steps {
        let h = Command::new("hwloc-annotate")
            .args(*opts)
            .arg(&theirs)
            .arg(&theirs)
            .args(*step)
            .current_dir(dir)
            .output()
            .expect("hwloc-annotate runs");
        if !h.status.success() {
            return Err(format!(
                "hwloc-annotate {opts:?} {step:?} failed: {}",
                show(&h)
            ));
        }
        let mut args: Vec<&std::ffi::OsStr> = vec!["annotate".as_ref()];
        args.extend(opts.iter().map(std::ffi::OsStr::new));
        args.push(ours.as_os_str());
        args.push(ours.as_os_str());
        args.extend(step.iter().map(std::ffi::OsStr::new));
        let w = Command::new(common::wloc())
            .args(&args)
            .current_dir(dir)
            .output()
            .expect("wloc runs");
        if !w.status.success() {
            return Err(format!(
                "wloc annotate {opts:?} {step:?} failed: {}",
                show(&w)
            ));
        }
    }
    let (a, b) = (normalised(&theirs)?, normalised(&ours)?);
    if a != b {
        let line = a
            .lines()
            .zip(b.lines())
            .position(|(x, y)| x != y)
            .unwrap_or(a.lines().count().min(b.lines().count()));
        return Err(format!(
            "line {} of the results differs:\n  hwloc: {}\n  wloc:  {}",
            line + 1,
            a.lines().nth(line).unwrap_or("(end)"),
            b.lines().nth(line).unwrap_or("(end)")
        ));
    }
    Ok(())
}

/// Conformance XML cases that wloc exports and hwloc 2.9 reads, as hwloc 2
/// XML files in `dir`.
fn v2_cases(dir: &Path) -> Vec<(String, PathBuf)> {
    let xml = common::conformance().join("xml");
    let mut names: Vec<String> = std::fs::read_dir(&xml)
        .expect("conformance xml folder")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".xml"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for n in names {
        let v2 = dir.join(format!("in-{n}"));
        if !common::export_v2(&xml.join(&n), &v2, true).status.success() {
            continue;
        }
        if normalised(&v2).is_ok() {
            out.push((n, v2));
        }
    }
    out
}

const NONE: Step = &[];

/// The same edits, on every conformance case hwloc reads: infos (added,
/// replaced, cleared), Misc objects everywhere, a subtype, a NUMA size, a
/// distances matrix between two PUs, a CPU kind, a memory attribute and
/// its values.
#[test]
fn every_annotation_gives_hwlocs_topology_on_every_case() {
    common::require_hwloc();
    let tmp = common::TempDir::new("annotate-diff");
    std::fs::write(
        tmp.0.join("pus.dist"),
        "name=Wire\n6\n2\npu:0\npu:1\n10\n20\n30\n10\n",
    )
    .expect("distances file");
    let steps: &[(Step, Step)] = &[
        (NONE, &["--", "root", "pu:all", "--", "info", "Rack", "r12"]),
        (&["--ri"], &["root", "info", "Rack", "r13"]),
        (&["--ci"], &["pu:0", "none"]),
        (NONE, &["root", "misc", "Chassis 7"]),
        (NONE, &["numa:all", "misc", "leaf"]),
        (NONE, &["numa:0", "subtype", "HBM"]),
        (NONE, &["numa:0", "size", "3GiB"]),
        (NONE, &["dummy", "distances", "pus.dist"]),
        (
            NONE,
            &["dummy", "cpukind", "0x1", "2", "0", "CoreType", "Tiny"],
        ),
        (NONE, &["x", "memattr", "Cost", "lower,need_init"]),
        (NONE, &["numa:0", "memattr", "Cost", "pu:0", "7"]),
        (NONE, &["numa:0", "memattr", "cost", "0x3", "9"]),
    ];
    let mut failures = Vec::new();
    let cases = v2_cases(&tmp.0);
    for (name, input) in &cases {
        if let Err(e) = compare_steps(input, &tmp.0, steps) {
            failures.push(format!("{name}: {e}"));
        }
    }
    common::assert_no_differences("hwloc-annotate", cases.len(), &failures, 20);
}

/// Edits that need particular topologies: memory attributes with object
/// initiators, CPU kinds split and extended, distances replaced, Misc
/// objects under Misc objects (hwloc walks the growing Misc level), I/O
/// objects by name and PCI address, caches by size, Groups built from
/// distances and distances transformed.
#[test]
fn targeted_annotations_give_hwlocs_topology() {
    common::require_hwloc();
    let tmp = common::TempDir::new("annotate-targeted");
    std::fs::write(
        tmp.0.join("packs.dist"),
        "name=Rack\n6\n4\npack:0\npack:1\npack:2\npack:3\n2*2\n",
    )
    .expect("distances file");
    std::fs::write(
        tmp.0.join("hetero.dist"),
        "5\n2\ncore:0\nl3:1\n10\n20\n30\n10\n",
    )
    .expect("distances file");
    std::fs::write(
        tmp.0.join("pus.dist"),
        "name=PUs\n5\n4\npu:0\npu:1\npu:2\npu:3\n2*2\n",
    )
    .expect("distances file");
    std::fs::write(
        tmp.0.join("numa.dist"),
        "name=Mixed\n10\n3\npu:0\nnuma:1\nnuma:3\n1\n2\n3\n4\n5\n6\n7\n8\n9\n",
    )
    .expect("distances file");
    let cases: &[(&str, &[(Step, Step)])] = &[
        (
            "8intel64-4n2t-memattrs.xml",
            &[
                (NONE, &["x", "memattr", "MyPerf", "need_init,higher"]),
                (NONE, &["numa:2", "memattr", "MyPerf", "0x11", "2345"]),
                (NONE, &["numa:0", "memattr", "Latency", "numa:1", "123"]),
                (NONE, &["numa:1", "memattr", "bandwidth", "0x3", "77"]),
                (NONE, &["numa:all", "memattr", "9", "pu:2", "5"]),
                (NONE, &["x", "memattr", "Spare", "1"]),
                (NONE, &["numa:1", "memattr", "Spare", "none", "4"]),
            ],
        ),
        (
            "fakecpukinds.xml",
            &[
                (
                    NONE,
                    &["d", "cpukind", "0x0f", "0", "0", "CoreType", "Small"],
                ),
                (NONE, &["d", "cpukind", "0xf0", "1", "0", "CoreType", "Big"]),
                (NONE, &["d", "cpukind", "0x3c", "-1", "0", "Foo", "bar"]),
                (NONE, &["d", "cpukind", "0xff", "4", "0"]),
            ],
        ),
        (
            "16amd64-4distances.xml",
            &[
                (&["--cd"], &["all", "none"]),
                (NONE, &["d", "distances", "numa.dist"]),
            ],
        ),
        (
            "16em64t-4s2c2t.xml",
            &[
                (&["--cd"], &["d", "distances", "packs.dist"]),
                (NONE, &["d", "distances", "hetero.dist"]),
                (NONE, &["l3:1", "size", "8MiB"]),
                (NONE, &["2:0", "info", "Depth2", "yes"]),
                (
                    NONE,
                    &["--", "pack:1.core:all", "l2:0-2", "--", "misc", "M"],
                ),
            ],
        ),
        (
            // Groups from distances (hwloc's grouping), then transforms.
            "16em64t-4s2c2t.xml",
            &[
                (&["--cd"], &["d", "distances", "packs.dist", "group$"]),
                (
                    NONE,
                    &["d", "distances-transform", "Rack", "remove-obj", "pack:3"],
                ),
                (
                    NONE,
                    &["d", "distances", "pus.dist", "group$,group_inaccurate"],
                ),
                (
                    NONE,
                    &[
                        "d",
                        "distances-transform",
                        "PUs",
                        "replace-objs",
                        "pu",
                        "core",
                    ],
                ),
            ],
        ),
        (
            "nvidiaDGX2.xml",
            &[
                (
                    NONE,
                    &[
                        "d",
                        "distances-transform",
                        "NVLinkBandwidth",
                        "merge-switch-ports",
                    ],
                ),
                (
                    NONE,
                    &["d", "distances-transform", "NVLinkBandwidth", "links"],
                ),
            ],
        ),
        (
            "nvidiaDGX2.xml",
            &[(
                NONE,
                &[
                    "d",
                    "distances-transform",
                    "NVLinkBandwidth",
                    "transitive-closure",
                ],
            )],
        ),
        (
            "power8gpudistances.xml",
            &[
                (
                    NONE,
                    &[
                        "--",
                        "d",
                        "--",
                        "distances-transform",
                        "NVLinkBandwidth",
                        "replace-objs",
                        "nvml",
                        "opencl",
                    ],
                ),
                (
                    NONE,
                    &[
                        "d",
                        "distances-transform",
                        "NVLinkBandwidth",
                        "replace-objs",
                        "package",
                        "numa",
                    ],
                ),
            ],
        ),
        (
            "16-2gr2gr2n2c+misc.xml",
            &[
                (NONE, &["root", "misc", "Rack12"]),
                (NONE, &["misc:0", "info", "Site", "X"]),
                (NONE, &["misc:all", "misc", "sub"]),
                (NONE, &["all", "misc", "leaf"]),
            ],
        ),
        (
            "24em64t-2n6c2t-pci.xml",
            &[
                (NONE, &["os=eth0", "info", "Switch", "sw1"]),
                (NONE, &["os:all", "info", "A", "b"]),
                (NONE, &["pci:0", "misc", "m"]),
                (NONE, &["bridge:all", "subtype", "Br"]),
                (NONE, &["pci[8086:10c9]:all", "info", "NIC", "intel"]),
            ],
        ),
    ];
    let mut failures = Vec::new();
    for (i, (case, steps)) in cases.iter().enumerate() {
        // A case may come twice, with other steps.
        let input = tmp.0.join(format!("in-{i}-{case}"));
        common::export_case_v2(case, &input, true);
        if let Err(e) = compare_steps(&input, &tmp.0, steps) {
            failures.push(format!("{case}: {e}"));
        }
    }
    common::assert_no_differences("hwloc-annotate", cases.len(), &failures, cases.len());
}

/// Bad locations, annotations and files: exit 1, a message naming what
/// was wrong, and no output written.
#[test]
fn bad_annotations_fail_clearly() {
    let tmp = common::TempDir::new("annotate-bad");
    let input = tmp.0.join("in.xml");
    common::export_case_v2("16em64t-4s2c2t.xml", &input, false);
    std::fs::write(
        tmp.0.join("bad.dist"),
        "5\n2\npu:0\npu:1\n10\n20\nfar\n10\n",
    )
    .unwrap();
    std::fs::write(tmp.0.join("short.dist"), "5\n3\npu:0\npu:1\n").unwrap();
    std::fs::write(tmp.0.join("nowhere.dist"), "5\n2\npu:0\npu:99\n2*1\n").unwrap();
    let out = tmp.0.join("out.xml");
    let cases: &[(&[&str], &str)] = &[
        (
            &["core:99", "info", "a", "b"],
            "location 'core:99' names no object",
        ),
        (&["dummy", "info", "a", "b"], "unknown location 'dummy'"),
        (&["fish:0", "info", "a", "b"], "invalid location 'fish:0'"),
        (&["core:0", "colour", "red"], "unknown annotation 'colour'"),
        (&["core:0", "info", "a"], "info NAME VALUE"),
        (&["numa:0", "size", "2 parsecs"], "unknown unit"),
        (
            &["d", "distances", "bad.dist"],
            "line 7: 'far' is not a distance value",
        ),
        (
            &["d", "distances", "short.dist"],
            "line 5: the file ends before object #2",
        ),
        (&["d", "distances", "nowhere.dist"], "line 4"),
        (
            &["d", "distances", "missing.dist"],
            "cannot read the distances file",
        ),
        (
            &["numa:0", "memattr", "Speed", "0x1", "3"],
            "no memory attribute named 'Speed'",
        ),
        (
            &["numa:0", "memattr", "Capacity", "0x1", "3"],
            "cannot be set",
        ),
        (
            &["numa:0", "memattr", "Latency", "none", "3"],
            "needs an initiator",
        ),
        (&["x", "memattr", "Latency", "higher"], "already exists"),
        (
            &["x", "memattr", "Mine", "need_initiator"],
            "exactly one of higher_first",
        ),
        (&["x", "cpukind", "0x0", "1", "0"], "empty"),
        (
            &["d", "distances-transform", "Nothing", "links"],
            "no distances matrix is named 'Nothing'",
        ),
        (
            &["d", "distances-transform", "X", "fold"],
            "unknown distances-transform operation 'fold'",
        ),
        (
            &["d", "distances-transform", "X", "remove-obj"],
            "missing arguments",
        ),
    ];
    for (args, want) in cases {
        let mut a: Vec<&std::ffi::OsStr> =
            vec!["annotate".as_ref(), input.as_os_str(), out.as_os_str()];
        a.extend(args.iter().map(std::ffi::OsStr::new));
        let o = Command::new(common::wloc())
            .args(&a)
            .current_dir(&tmp.0)
            .output()
            .expect("wloc runs");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: expected '{want}' in: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} wrote an output");
    }
    let o = common::run_wloc([
        "annotate".as_ref(),
        tmp.0.join("none.xml").as_os_str(),
        out.as_os_str(),
        "root".as_ref(),
        "none".as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("none.xml"));
}
