//! Differential tests of `wloc distrib` against hwloc 2.9's
//! `hwloc-distrib`: the same arguments over synthetic topologies and the
//! conformance XML cases must print the same sets, byte for byte.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

const SYNTHETIC: &[&str] = &[
    "pack:2 core:4 pu:2",
    "pack:2 [numa] l3:1 core:2 l1i:1 pu:2",
    "numa:2 pack:1 l2:2 core:2 pu:2",
    "group:2 pack:2 core:2 pu:2",
    "pack:3 die:2 core:3 pu:1",
    "pack:2 core:2 pu:2(indexes=0,4,1,5,2,6,3,7)",
    "pack:3 core:5 pu:1",
];

const XML_CASES: &[&str] = &[
    "16em64t-4s2c2t.xml",
    "192em64t-12gr2n8c2t.xml",
    "96em64t-4n4d3ca2co-pci.xml",
    "16amd64-8n2c-cpusets.xml",
];

fn run(prog: &Path, sub: Option<&str>, args: &[String]) -> Output {
    let mut c = Command::new(prog);
    if let Some(s) = sub {
        c.arg(s);
    }
    c.args(args)
        .env("LC_ALL", "C")
        .env_remove("HWLOC_XMLFILE")
        .env_remove("HWLOC_SYNTHETIC")
        .output()
        .expect("program runs")
}

#[test]
fn distrib_matches_hwloc_distrib() {
    common::require_hwloc();
    let tmp = common::TempDir::new("distrib-diff");
    let mut topos: Vec<Vec<String>> = SYNTHETIC
        .iter()
        .map(|s| {
            vec![
                "-i".into(),
                s.to_string(),
                "--if".into(),
                "synthetic".into(),
            ]
        })
        .collect();
    for case in XML_CASES {
        let dst = tmp.0.join(case);
        common::export_case_v2(case, &dst, false);
        topos.push(vec![
            "-i".into(),
            dst.to_string_lossy().into_owned(),
            "--if".into(),
            "xml".into(),
        ]);
    }
    let variants: &[&str] = &[
        "1",
        "2",
        "3",
        "5",
        "7",
        "16",
        "40",
        "3 --single",
        "5 --reverse",
        "5 --reverse --single",
        "4 --taskset",
        "6 --from core",
        "6 --to core",
        "3 --at core",
        "9 --at pu",
        "4 --to pack",
        "5 --from pack --to core",
        "7 --ignore core",
        "6 --ignore pack --single",
        "3 --from numa",
        "3 --to l3",
        "3 --at frob",
    ];
    let wloc = common::wloc();
    let hwloc = Path::new("hwloc-distrib");
    let mut bad = Vec::new();
    let mut count = 0;
    for t in &topos {
        for v in variants {
            let mut args = t.clone();
            args.extend(v.split(' ').map(String::from));
            let h = run(hwloc, None, &args);
            let w = run(&wloc, Some("distrib"), &args);
            count += 1;
            bad.extend(common::stdout_mismatch("hwloc-distrib", &args, &h, &w));
        }
    }
    common::assert_no_differences("hwloc-distrib", count, &bad, 50);
}

#[test]
fn distrib_rejects_bad_numbers_clearly() {
    let o = common::run_wloc(["distrib", "-i", "pack:2 pu:2", "many"]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("many"), "{e}");
    let o = common::run_wloc(["distrib", "-i", "pack:2 pu:2", "--at", "frob", "2"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("frob"));
}
