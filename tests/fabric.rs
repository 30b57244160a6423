//! `wloc fabric` on the recorded InfiniBand clusters of
//! `tests/data/fabric` (unpacked at run time), read in the sandbox by
//! the built-in fabric reader: counts cross-checked with netloc's own
//! output, every forwarding-table route, the join with node topologies
//! (hwloc XML v1 and v2), exports read back by XML parsers and graphviz,
//! NIC locality compared with hwloc-calc, and hostile inputs.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{self, TempDir, run_wloc};

/// The four archives unpacked in a temporary folder (removed when the
/// value is dropped): (archive, cluster dir).
pub(crate) struct Clusters(#[allow(dead_code)] TempDir, Vec<(String, PathBuf)>);

impl std::ops::Deref for Clusters {
    type Target = [(String, PathBuf)];
    fn deref(&self) -> &Self::Target {
        &self.1
    }
}

pub(crate) fn clusters() -> Clusters {
    let tmp = TempDir::new("fabric");
    let mut out = Vec::new();
    for a in ["plafrim", "plafrim2", "plafrim-xmlv2", "plafrim2-xmlv2"] {
        let dest = tmp.0.join(a);
        common::unpack_fabric(&format!("{a}.txz"), &dest);
        let top: Vec<_> = std::fs::read_dir(&dest)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(top.len(), 1);
        out.push((a.to_string(), top[0].clone()));
    }
    Clusters(tmp, out)
}

fn ok(args: &[&str]) -> String {
    let o = run_wloc(args);
    assert!(
        o.status.success(),
        "wloc {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn fails(args: &[&str]) -> String {
    let o = run_wloc(args);
    assert!(!o.status.success(), "wloc {args:?} should fail");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// netloc's node count (nodes.txt, 4th line) and its physical links as
/// unordered node pairs and cables (draw.json `links`, each listed from
/// both ends).
fn netloc(dir: &Path, subnet: &str) -> (usize, usize, usize) {
    let nodes = std::fs::read_to_string(dir.join(format!("netloc/IB-{subnet}-nodes.txt"))).unwrap();
    let n: usize = nodes.lines().nth(3).unwrap().trim().parse().unwrap();
    let draw: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(format!("netloc/IB-{subnet}-draw.json"))).unwrap(),
    )
    .unwrap();
    let links = draw["links"].as_array().unwrap();
    let pairs: HashSet<BTreeSet<String>> = links
        .iter()
        .map(|l| {
            [
                l["from"].as_str().unwrap().to_string(),
                l["to"].as_str().unwrap().to_string(),
            ]
            .into_iter()
            .collect()
        })
        .collect();
    (n, pairs.len(), links.len() / 2)
}

#[test]
fn summary_counts_match_netloc() {
    let expected: HashMap<&str, &str> = HashMap::from([
        (
            "plafrim",
            "fe80:0000:0000:0000 switches=9 adapters=125 hosts=119 cables=201\n",
        ),
        (
            "plafrim2",
            "fe80:0000:0000:0000 switches=7 adapters=96 hosts=95 cables=155\n\
             fe80:0000:0000:0001 switches=1 adapters=23 hosts=13 cables=23\n",
        ),
    ]);
    let all = clusters();
    for (a, dir) in all.iter() {
        let out = ok(&["fabric", "summary", s(dir)]);
        assert_eq!(out, expected[a.trim_end_matches("-xmlv2")], "{a}");
        let json: serde_json::Value =
            serde_json::from_str(&ok(&["fabric", "export", "--of", "json", s(dir)])).unwrap();
        for sub in json["subnets"].as_array().unwrap() {
            let name = sub["name"].as_str().unwrap();
            let (nodes, pairs, cables) = netloc(dir, name);
            assert_eq!(
                sub["nodes"].as_array().unwrap().len(),
                nodes,
                "{a} {name} nodes"
            );
            assert_eq!(
                sub["edges"].as_array().unwrap().len(),
                pairs,
                "{a} {name} edges"
            );
            assert_eq!(
                sub["cables"].as_u64().unwrap() as usize,
                cables,
                "{a} {name} cables"
            );
            // Edges carry rates: 4x QDR is 32 Gb/s of data per cable.
            for e in sub["edges"].as_array().unwrap() {
                let links = e["links"].as_str().unwrap();
                if links == "1×4x QDR" {
                    assert_eq!(e["gbps"].as_f64().unwrap(), 32.0);
                }
            }
        }
    }
}

#[test]
fn every_route_ends_at_its_target() {
    let all = clusters();
    for (a, dir) in all.iter().filter(|(a, _)| !a.ends_with("xmlv2")) {
        let o = run_wloc(["fabric", "routes", s(dir)]);
        assert!(
            o.status.success(),
            "{a}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let out = String::from_utf8(o.stdout).unwrap();
        // Every ordered pair of adapter ports.
        let want = if a == "plafrim" {
            "fe80:0000:0000:0000 routes=15500\n"
        } else {
            "fe80:0000:0000:0000 routes=9120\nfe80:0000:0000:0001 routes=506\n"
        };
        assert_eq!(out, want, "{a}");
        if a == "plafrim2" {
            // One recorded table is truncated and repeats a LID: it is
            // named with its line and left out, not trusted.
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains("ibroute-fe80:0000:0000:0000-60.txt:65: LID 63 is routed twice"),
                "{err}"
            );
        }
    }
    let dir = &all[1].1;
    let out = ok(&["fabric", "path", s(dir), "miriel001", "sirocco01"]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].contains("(forwarding tables), 4 hops"), "{out}");
    assert!(
        lines[1].contains("miriel001") && lines[5].contains("sirocco01"),
        "{out}"
    );
}

/// The host name in a node description, as netloc took it.
fn host_word(desc: &str) -> &str {
    desc.split(' ').next().unwrap_or("")
}

#[test]
fn join_finds_the_host_of_every_adapter_with_an_xml() {
    let all = clusters();
    for (a, dir) in all.iter() {
        let xmls: HashSet<String> = std::fs::read_dir(dir.join("hwloc"))
            .unwrap()
            .map(|e| {
                e.unwrap()
                    .path()
                    .file_stem()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        let json: serde_json::Value =
            serde_json::from_str(&ok(&["fabric", "export", "--of", "json", s(dir)])).unwrap();
        let mut checked = 0;
        for sub in json["subnets"].as_array().unwrap() {
            for n in sub["nodes"].as_array().unwrap() {
                if n["kind"] != "ca" {
                    continue;
                }
                let w = host_word(n["description"].as_str().unwrap());
                if xmls.contains(w) {
                    assert_eq!(n["host"].as_str(), Some(w), "{a}: {n}");
                    checked += 1;
                }
            }
        }
        assert!(checked >= 95, "{a}: {checked}");
        // Joined hosts have their adapter as an OS device of their topology.
        let hosts = json["hosts"].as_array().unwrap();
        for h in hosts.iter().filter(|h| h["topology"] == true) {
            for nic in h["nics"].as_array().unwrap() {
                assert!(nic["device"].is_string(), "{a}: {h}");
            }
        }
        if a.starts_with("plafrim2") {
            // `bright` is on both subnets (no XML: joined by its
            // descriptions); the mistral nodes' adapters have generic
            // descriptions and are found by the port GUIDs of their XMLs.
            let subnets_of = |h: &serde_json::Value| -> BTreeSet<String> {
                h["nics"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|n| n["subnet"].as_str().unwrap().to_string())
                    .collect()
            };
            let bright = hosts.iter().find(|h| h["name"] == "bright").unwrap();
            assert_eq!(subnets_of(bright).len(), 2, "{a}: {bright}");
            let mistral: Vec<_> = hosts
                .iter()
                .filter(|h| h["name"].as_str().unwrap().starts_with("mistral"))
                .collect();
            assert_eq!(mistral.len(), 13, "{a}");
            for h in mistral {
                let nic = &h["nics"][0];
                assert_eq!(nic["subnet"], "fe80:0000:0000:0001", "{a}: {h}");
                assert_eq!(nic["joined_by"], "port-guid", "{a}: {h}");
                assert_eq!(nic["device"], "mlx4_0", "{a}: {h}");
            }
        }
    }
}

#[test]
fn nic_locality_matches_hwloc() {
    common::require_hwloc();
    let all = clusters();
    // hwloc reads the v1 files; their v2 re-exports keep only the PUs
    // the recording job was allowed (complete sets keep the others), and
    // wloc gives the same answer from both.
    for (dir, v2, host, other, dev) in [
        (&all[1].1, &all[3].1, "sirocco01", "miriel001", "mlx4_0"),
        (&all[0].1, &all[2].1, "dancharia", "mirage006", "mlx4_1"),
    ] {
        let out = ok(&["fabric", "local", s(dir), host, other]);
        let xml = dir.join(format!("hwloc/{host}.xml"));
        let calc = |what: &str| {
            let o = Command::new("hwloc-calc")
                .args([
                    "--disallowed",
                    "-i",
                    s(&xml),
                    &format!("os={dev}"),
                    "--po",
                    "--intersect",
                    what,
                ])
                .env_remove("HWLOC_XMLFILE")
                .env_remove("HWLOC_FSROOT")
                .env_remove("HWLOC_COMPONENTS")
                .output()
                .unwrap();
            assert!(
                o.status.success() && !o.stdout.is_empty(),
                "hwloc-calc {xml:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            String::from_utf8(o.stdout).unwrap().trim().to_string()
        };
        let want = format!(
            "subnet fe80:0000:0000:0000 device {dev} port 1 numa {} pus {}\n",
            calc("numa"),
            calc("pu")
        );
        assert_eq!(out, want);
        assert_eq!(ok(&["fabric", "local", s(v2), host, other]), want);
    }
}

#[test]
fn exports_parse_back() {
    if let Err(e) = common::require_packages(&[("/usr/bin/dot", "graphviz")]) {
        panic!("{e}");
    }
    let all = clusters();
    let dir = &all[1].1;
    let tmp = TempDir::new("fabric-export");
    let nodes = 103 + 24;
    let edges = {
        let (_, a, _) = netloc(dir, "fe80:0000:0000:0000");
        let (_, b, _) = netloc(dir, "fe80:0000:0000:0001");
        a + b
    };
    for (fmt, node, edge) in [("graphml", "node", "edge"), ("gexf", "node", "edge")] {
        let out = tmp.0.join(format!("f.{fmt}"));
        ok(&["fabric", "export", "--of", fmt, s(dir), s(&out)]);
        let text = std::fs::read_to_string(&out).unwrap();
        let d = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{fmt}: {e}"));
        assert_eq!(
            d.descendants().filter(|n| n.has_tag_name(node)).count(),
            nodes,
            "{fmt}"
        );
        assert_eq!(
            d.descendants().filter(|n| n.has_tag_name(edge)).count(),
            edges,
            "{fmt}"
        );
    }
    let gexf = std::fs::read_to_string(tmp.0.join("f.gexf")).unwrap();
    assert!(gexf.contains("xmlns=\"http://gexf.net/1.3\" version=\"1.3\""));
    let svg = ok(&["fabric", "export", "--of", "svg", s(dir)]);
    let d = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(d.root_element().tag_name().name(), "svg");
    let dot_file = tmp.0.join("f.dot");
    ok(&["fabric", "export", "--of", "dot", s(dir), s(&dot_file)]);
    let o = Command::new("dot")
        .arg("-Tjson")
        .arg(&dot_file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["edges"].as_array().unwrap().len(), edges);
    assert!(
        std::fs::read_to_string(&dot_file)
            .unwrap()
            .contains("label=\"32 Gb/s\"")
    );
}

#[test]
fn topology_files_read_like_ports_reports() {
    // The handwritten file after rdma-core's man page.
    let fixture = common::workspace().join("tests/data/fabric/handwritten-topology.txt");
    assert_eq!(
        ok(&["fabric", "summary", s(&fixture)]),
        "handwritten-topology switches=2 adapters=3 hosts=0 cables=4\n"
    );
    // A topology file written from a recorded ports report describes the
    // same subnet.
    let all = clusters();
    let dir = &all[0].1;
    let report = dir.join("ib-raw/ib-subnet-fe80:0000:0000:0000.txt");
    let tmp = TempDir::new("fabric-topo");
    let topo = tmp.0.join("ib-subnet-fe80:0000:0000:0000.txt");
    std::fs::write(
        &topo,
        topology_file_of(&std::fs::read_to_string(&report).unwrap()),
    )
    .unwrap();
    let a = ok(&["fabric", "summary", s(dir)]);
    let b = ok(&[
        "fabric",
        "summary",
        s(&topo),
        "--file",
        s(&dir.join("hwloc/dancharia.xml")),
    ]);
    assert_eq!(
        b,
        "fe80:0000:0000:0000 switches=9 adapters=125 hosts=1 cables=201\n"
    );
    assert_eq!(
        a,
        "fe80:0000:0000:0000 switches=9 adapters=125 hosts=119 cables=201\n"
    );
}

/// Writes a ports report (`ibnetdiscover -p`) as a topology file: one
/// block per node, one `[port]` line per cabled port.
fn topology_file_of(report: &str) -> String {
    struct N {
        kind: String,
        desc: String,
        lid: String,
        ports: Vec<String>,
        max: u32,
    }
    let mut nodes: Vec<(String, N)> = Vec::new();
    for l in report.lines().filter(|l| !l.starts_with("DR path")) {
        let t: Vec<&str> = l.split_whitespace().collect();
        if t.len() < 11 || t[6] != "-" {
            continue;
        }
        let id = |k: &str, g: &str| format!("{}-{}", if k == "SW" { "S" } else { "H" }, &g[2..]);
        let descs = &l[l.find("( '").unwrap() + 3..l.rfind("' )").unwrap()];
        let (mine, peer) = descs.split_once("' - '").unwrap();
        let me = id(t[0], t[3]);
        let line = if t[0] == "SW" {
            format!(
                "[{}]\t\"{}\"[{}]\t\t# \"{}\" lid {} {}{}",
                t[2],
                id(t[7], t[10]),
                t[9],
                peer,
                t[8],
                t[4],
                t[5]
            )
        } else {
            format!(
                "[{}]({})\t\"{}\"[{}]\t\t# lid {} lmc 0 \"{}\" lid {} {}{}",
                t[2],
                &t[3][2..],
                id(t[7], t[10]),
                t[9],
                t[1],
                peer,
                t[8],
                t[4],
                t[5]
            )
        };
        let port: u32 = t[2].parse().unwrap();
        match nodes.iter_mut().find(|(k, _)| *k == me) {
            Some((_, n)) => {
                n.ports.push(line);
                n.max = n.max.max(port);
            }
            None => nodes.push((
                me,
                N {
                    kind: t[0].into(),
                    desc: mine.into(),
                    lid: t[1].into(),
                    ports: vec![line],
                    max: port,
                },
            )),
        }
    }
    let mut out = String::from("#\n# Topology file: written by wloc's tests\n#\n\n");
    for (id, n) in nodes {
        if n.kind == "SW" {
            out.push_str(&format!(
                "vendid=0x8f1\ndevid=0x5a5a\nswitchguid=0x{g}({g})\nSwitch\t36 \"{id}\"\t\t# \"{}\" base port 0 lid {} lmc 0\n",
                n.desc, n.lid, g = &id[2..]
            ));
        } else {
            out.push_str(&format!(
                "vendid=0x2c9\ncaguid=0x{}\nCa\t{} \"{id}\"\t\t# \"{}\"\n",
                &id[2..],
                n.max.max(2),
                n.desc
            ));
        }
        for p in n.ports {
            out.push_str(&p);
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

#[test]
fn hostile_fabric_files_are_named_errors() {
    let all = clusters();
    let dir = &all[0].1;
    let report =
        std::fs::read_to_string(dir.join("ib-raw/ib-subnet-fe80:0000:0000:0000.txt")).unwrap();
    let tmp = TempDir::new("fabric-hostile");
    let write = |name: &str, text: &str| {
        let p = tmp.0.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    // Truncated in the middle of a line.
    let cut = &report[..report.find("CA    44").unwrap() + 20];
    let lines = cut.lines().count();
    let p = write("ib-subnet-cut.txt", cut);
    let e = fails(&["fabric", "summary", s(&p)]);
    assert!(
        e.contains(&format!("ib-subnet-cut.txt:{lines}: the last line is cut")),
        "{e}"
    );
    // Cut at the end of a line, inside a cable's second description.
    let p = write(
        "ib-subnet-cut2.txt",
        &format!("{}\n", &cut[..cut.len() - 8]),
    );
    let e = fails(&["fabric", "summary", s(&p)]);
    assert!(e.contains(&format!("ib-subnet-cut2.txt:{lines}: ")), "{e}");
    // Garbage.
    let p = write("ib-subnet-garbage.txt", "\u{1}\u{2}binary\u{0}junk\n");
    let e = fails(&["fabric", "summary", s(&p)]);
    assert!(
        e.contains("ib-subnet-garbage.txt:1: not a ports report"),
        "{e}"
    );
    // A huge description, an impossible LID.
    let p = write(
        "ib-subnet-huge.txt",
        &format!("CA 1 1 0x12 4x QDR '{}'\n", "x".repeat(100_000)),
    );
    let e = fails(&["fabric", "summary", s(&p)]);
    assert!(
        e.contains(":1: node description is 100000 bytes long"),
        "{e}"
    );
    let p = write("ib-subnet-lid.txt", "SW 99999999 1 0x12 4x QDR 'x'\n");
    assert!(fails(&["fabric", "summary", s(&p)]).contains(":1: LID 99999999 is out of range"));
    // Huge: more than a reader reads (64 MiB; sparse, so cheap to write).
    let big = tmp.0.join("ib-subnet-big.txt");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(70 << 20)
        .unwrap();
    let e = fails(&["fabric", "summary", s(&big)]);
    assert!(e.contains("ib-subnet-big.txt: larger than 64 MiB"), "{e}");
    // A file that is not UTF-8 text.
    std::fs::write(
        tmp.0.join("ib-subnet-bin.txt"),
        b"CA 1 1 0x12 4x QDR 'x'\n\xff\xfe\n",
    )
    .unwrap();
    let e = fails(&["fabric", "summary", s(&tmp.0.join("ib-subnet-bin.txt"))]);
    assert!(e.contains("ib-subnet-bin.txt:2: not UTF-8 text"), "{e}");
    // A loop in the forwarding tables: the leaf switch of mirage006
    // (LID 142) sends packets for mirage005 (LID 59, its port 31) up
    // port 1 to the next switch, which sends them back.
    let raw = tmp.0.join("loop/ib-raw");
    std::fs::create_dir_all(raw.join("ibroutes-fe80:0000:0000:0000")).unwrap();
    std::fs::copy(
        dir.join("ib-raw/ib-subnet-fe80:0000:0000:0000.txt"),
        raw.join("ib-subnet-fe80:0000:0000:0000.txt"),
    )
    .unwrap();
    let src = dir.join("ib-raw/ibroutes-fe80:0000:0000:0000");
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let mut text = std::fs::read_to_string(&p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with("-142.txt") {
            text = text.replace("0x003b 031 :", "0x003b 001 :");
        }
        std::fs::write(raw.join("ibroutes-fe80:0000:0000:0000").join(&name), &text).unwrap();
    }
    let e = fails(&["fabric", "routes", s(&tmp.0.join("loop"))]);
    assert!(
        e.contains("the route to LID 59 loops")
            && e.contains("(forwarding table of the switch of LID 142, line 60)"),
        "{e}"
    );
}

/// A third party's reader of the first `fabric-reader` world
/// (`wloc:backend@0.1.0`) runs through the same policy: refused until
/// allowed, then fed only the files named (it checks that it cannot read
/// another), its snapshots converted (4 lanes at 32 Gb/s are 4x QDR).
#[test]
fn readers_of_the_first_wit_version_still_load() {
    let reader =
        std::path::Path::new(wloc_runtime::test_components_dir()).join("hostile-fabric-v1.wasm");
    let tmp = TempDir::new("fabric-v1");
    let policy = tmp.0.join("policy.toml");
    std::fs::write(&policy, "").unwrap();
    let fabric = tmp.0.join("tiny");
    std::fs::write(
        &fabric,
        "node 0xaa switch 8 leaf\nnode 0x11 ca 1 alpha HCA-1\nnode 0x22 ca 1 beta HCA-1\n\
         link 0x11 1 0xaa 1 32 4\nlink 0x22 1 0xaa 2 32 4\nlink 0xaa 2 0x22 1 32 4\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        Command::new(common::wloc())
            .args(args)
            .env("WLOC_POLICY", &policy)
            .env("WLOC_CACHE_DIR", tmp.0.join("cache"))
            .env("LC_ALL", "C")
            .output()
            .unwrap()
    };
    let args = ["fabric", "summary", s(&fabric), "--reader", s(&reader)];
    let o = run(&args);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not allowed"),
        "{o:?}"
    );
    let o = run(&["component", "allow", s(&reader), "--files", "/"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "tiny switches=1 adapters=2 hosts=0 cables=2\n"
    );
    let o = run(&[
        "fabric",
        "export",
        "--of",
        "json",
        s(&fabric),
        "--reader",
        s(&reader),
    ]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["subnets"][0]["edges"][0]["links"], "1×4x QDR");
    // The built-in reader is not a discovery component, and a discovery
    // component is not a fabric reader.
    let ls = run(&["ls", "--component", s(&reader), "-i", "pack:1 pu:2"]);
    assert!(
        String::from_utf8_lossy(&ls.stderr).contains("fabric, not discovery"),
        "{}",
        String::from_utf8_lossy(&ls.stderr)
    );
}

/// Slurm's topology.conf: every host under exactly one leaf, every
/// switch named once and reachable from one root per connected fabric,
/// names at most 64 characters, the map applied.
#[test]
fn slurm_topology_puts_every_host_under_one_switch() {
    let all = clusters();
    for (a, dir) in all.iter().filter(|(a, _)| !a.ends_with("xmlv2")) {
        let tmp = TempDir::new("fabric-slurm");
        let map = tmp.0.join("names");
        std::fs::write(&map, "# fabric name, Slurm name\nbright bright-login\n").unwrap();
        let conf = ok(&["fabric", "slurm", s(dir), "--names", s(&map)]);
        let mut switches: HashMap<String, (Vec<String>, Vec<String>)> = HashMap::new();
        for l in conf.lines().filter(|l| !l.starts_with('#')) {
            let mut name = String::new();
            let (mut nodes, mut subs) = (Vec::new(), Vec::new());
            for w in l.split_whitespace() {
                let (k, v) = w.split_once('=').unwrap();
                let list = v.split(',').map(String::from);
                match k {
                    "SwitchName" => name = v.to_string(),
                    "Nodes" => nodes.extend(list),
                    "Switches" => subs.extend(list),
                    _ => panic!("{a}: {l}"),
                }
            }
            assert!(
                name.len() <= 64 && !(nodes.is_empty() && subs.is_empty()),
                "{a}: {l}"
            );
            assert!(
                nodes.is_empty() || subs.is_empty(),
                "{a}: leaves hold nodes only: {l}"
            );
            assert!(switches.insert(name, (nodes, subs)).is_none(), "{a}: {l}");
        }
        let mut hosts: Vec<&String> = switches.values().flat_map(|(n, _)| n).collect();
        let count = hosts.len();
        hosts.sort();
        hosts.dedup();
        assert_eq!(hosts.len(), count, "{a}: a host under two leaves");
        // Every host with an adapter on a switch (netloc's hosts, and
        // those known only by their descriptions).
        let json: serde_json::Value =
            serde_json::from_str(&ok(&["fabric", "export", "--of", "json", s(dir)])).unwrap();
        let with_nics = json["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|h| !h["nics"].as_array().unwrap().is_empty())
            .count();
        assert_eq!(count, with_nics, "{a}");
        if a == "plafrim2" {
            assert!(hosts.iter().any(|h| *h == "bright-login"));
        }
        // One root per connected fabric: one subnet on plafrim, two on
        // plafrim2; every other switch is some switch's child once.
        let children: Vec<&String> = switches.values().flat_map(|(_, s)| s).collect();
        let roots: Vec<&String> = switches.keys().filter(|k| !children.contains(k)).collect();
        assert_eq!(
            roots.len(),
            if a == "plafrim" { 1 } else { 2 },
            "{a}: {roots:?}"
        );
        assert_eq!(children.len(), switches.len() - roots.len(), "{a}");
        assert!(children.iter().all(|c| switches.contains_key(*c)), "{a}");
    }
}

/// `wloc slurm topology --of yaml`: the tree topology holds the switches
/// of topology.conf with the same nodes and children, and the block
/// topology one block per leaf, its base block size the smallest leaf's.
#[test]
fn slurm_topology_yaml_matches_the_conf() {
    let all = clusters();
    for (a, dir) in all.iter().filter(|(a, _)| !a.ends_with("xmlv2")) {
        let conf = ok(&["slurm", "topology", s(dir)]);
        let yaml = ok(&["slurm", "topology", "--of", "yaml", s(dir)]);
        // topology.conf as (switch, key, value) triples.
        let mut want = Vec::new();
        for l in conf.lines().filter(|l| !l.starts_with('#')) {
            let mut w = l.split_whitespace().map(|w| w.split_once('=').unwrap());
            let (_, name) = w.next().unwrap();
            let (k, v) = w.next().unwrap();
            let k = if k == "Nodes" { "nodes" } else { "children" };
            want.push((name.to_string(), k.to_string(), v.to_string()));
        }
        let (tree, blocks) = yaml.split_once("- topology: fabric-blocks").unwrap();
        assert!(
            tree.contains("- topology: fabric\n  cluster_default: true\n  tree:\n    switches:\n"),
            "{a}: {yaml}"
        );
        let mut got = Vec::new();
        let mut lines = tree
            .lines()
            .skip_while(|l| !l.contains("switches:"))
            .skip(1);
        while let (Some(sw), Some(kv)) = (lines.next(), lines.next()) {
            let name = sw.trim().strip_prefix("- switch: ").unwrap();
            let (k, v) = kv.trim().split_once(": ").unwrap();
            got.push((name.to_string(), k.to_string(), v.to_string()));
        }
        assert_eq!(got, want, "{a}");
        let leaves: Vec<_> = want.iter().filter(|(_, k, _)| k == "nodes").collect();
        let min = leaves
            .iter()
            .map(|(_, _, v)| v.split(',').count())
            .min()
            .unwrap();
        assert!(
            blocks.contains(&format!("block_sizes:\n      - {min}\n")),
            "{a}: {blocks}"
        );
        assert_eq!(blocks.matches("- block: ").count(), leaves.len(), "{a}");
    }
}
