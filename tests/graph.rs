//! `wloc graph` on conformance XML cases with PCI devices and NICs:
//! DOT that Graphviz reads, GraphML that roxmltree reads with one node
//! per object, the PUs nearest a NIC and paths between PUs.

use crate::common;

use std::collections::HashMap;
use std::path::PathBuf;

/// Conformance cases with PCI devices, with a NIC each has.
const CASES: [(&str, &str); 3] = [
    ("24em64t-2n6c2t-pci", "eth0"),
    ("96em64t-4n4d3ca2co-pci", "eth2"),
    ("32em64t-2n8c2t-pci-wholeio", "ib0"),
];

fn xml(case: &str) -> PathBuf {
    common::conformance()
        .join("xml")
        .join(format!("{case}.xml"))
}

fn wloc_ok(args: &[&str]) -> String {
    let out = common::run_wloc(args);
    assert!(
        out.status.success(),
        "wloc {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// A cpuset in hwloc's form as the OS indexes it holds.
fn bits(set: &str) -> Vec<u32> {
    let words: Vec<&str> = set.split(',').collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().rev().enumerate() {
        // hwloc leaves zero words out between commas.
        let w = w.strip_prefix("0x").unwrap_or(w);
        let v = if w.is_empty() {
            0
        } else {
            u32::from_str_radix(w, 16).expect("hex word")
        };
        for b in 0..32 {
            if v & (1 << b) != 0 {
                out.push(i as u32 * 32 + b);
            }
        }
    }
    out
}

#[test]
fn graph_dot_output_parses_with_graphviz() {
    if let Err(e) = common::require_packages(&[("/usr/bin/dot", "graphviz")]) {
        panic!("{e}");
    }
    let dir = common::TempDir::new("graph-dot");
    for (case, _) in CASES {
        let x = xml(case);
        let x = x.to_str().unwrap();
        for filter in [None, Some("compute,io,memory")] {
            let out = dir.0.join(format!("{case}.dot"));
            let mut args = vec!["graph", "-i", x, "--of", "dot"];
            if let Some(f) = filter {
                args.extend(["--filter", f]);
            }
            args.push(out.to_str().unwrap());
            wloc_ok(&args);
            let svg = std::process::Command::new("/usr/bin/dot")
                .arg("-Tsvg")
                .arg(&out)
                .output()
                .expect("dot runs");
            assert!(
                svg.status.success() && svg.stdout.starts_with(b"<?xml"),
                "{case}: dot rejects the output: {}",
                String::from_utf8_lossy(&svg.stderr)
            );
        }
    }
}

#[test]
fn graph_graphml_has_one_node_per_object_and_typed_edges() {
    for (case, _) in CASES {
        let x = xml(case);
        let text = wloc_ok(&["graph", "-i", x.to_str().unwrap(), "--of", "graphml"]);
        let doc = roxmltree::Document::parse(&text).expect("well-formed GraphML");
        let nodes: Vec<_> = doc
            .descendants()
            .filter(|n| n.has_tag_name("node"))
            .collect();
        // One node per object: as many as the input's objects.
        let src = std::fs::read_to_string(&x).unwrap();
        let opts = roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        };
        let input = roxmltree::Document::parse_with_options(&src, opts).unwrap();
        let objects = input
            .descendants()
            .filter(|n| n.has_tag_name("object"))
            .count();
        assert_eq!(nodes.len(), objects, "{case}");
        let labels: Vec<String> = doc
            .descendants()
            .filter(|n| n.has_tag_name("edge"))
            .map(|e| {
                e.children()
                    .find(|d| d.attribute("key") == Some("label"))
                    .and_then(|d| d.text())
                    .expect("edge label")
                    .to_string()
            })
            .collect();
        for l in &labels {
            assert!(
                [
                    "child",
                    "memory",
                    "io",
                    "misc",
                    "numa-distance",
                    "interconnect"
                ]
                .contains(&l.as_str()),
                "{case}: edge label {l}"
            );
        }
        for kind in ["child", "memory", "io", "numa-distance"] {
            assert!(labels.iter().any(|l| l == kind), "{case}: no {kind} edge");
        }
        // Tree edges: one per object but the root.
        let tree = labels
            .iter()
            .filter(|l| *l != "numa-distance" && *l != "interconnect")
            .count();
        assert_eq!(tree, objects - 1, "{case}");
    }
}

#[test]
fn graph_near_a_nic_gives_its_numa_nodes_pus_first() {
    for (case, nic) in CASES {
        let x = xml(case);
        let x = x.to_str().unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&wloc_ok(&["graph", "-i", x, "--of", "json"])).unwrap();
        let vertices = json["vertices"].as_array().unwrap();
        let by_id: HashMap<&str, &serde_json::Value> = vertices
            .iter()
            .map(|v| (v["id"].as_str().unwrap(), v))
            .collect();
        let parent: HashMap<&str, &str> = json["edges"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["type"] != "numa-distance")
            .map(|e| (e["target"].as_str().unwrap(), e["source"].as_str().unwrap()))
            .collect();
        // The NIC's first ancestor with a cpuset, and its local NUMA nodes.
        let mut id = vertices.iter().find(|v| v["osdev_name"] == *nic).unwrap()["id"]
            .as_str()
            .unwrap();
        while by_id[id]["cpuset"].is_null() {
            id = parent[id];
        }
        let near: Vec<u32> = bits(by_id[id]["cpuset"].as_str().unwrap());
        let local: Vec<u32> = vertices
            .iter()
            .filter(|v| v["type"] == "NUMANode")
            .map(|v| bits(v["cpuset"].as_str().unwrap()))
            .filter(|c| c.iter().any(|p| near.contains(p)))
            .flatten()
            .collect();
        let mut expected: Vec<u64> = vertices
            .iter()
            .filter(|v| {
                v["type"] == "PU" && local.contains(&(v["os_index"].as_u64().unwrap() as u32))
            })
            .map(|v| v["logical_index"].as_u64().unwrap())
            .collect();
        expected.sort();
        assert!(!expected.is_empty(), "{case}");
        let n = (expected.len() + 2).to_string();
        let out = wloc_ok(&["graph", "near", "-i", x, &format!("os={nic}"), "pu", &n]);
        let got: Vec<u64> = out
            .lines()
            .map(|l| {
                let label = l.split_whitespace().nth(1).unwrap();
                label.strip_prefix("PU:").unwrap().parse().unwrap()
            })
            .collect();
        assert_eq!(got.len(), expected.len() + 2, "{case}: {out}");
        assert_eq!(got[..expected.len()], expected[..], "{case}: {out}");
        // Hop counts never decrease.
        let hops: Vec<u32> = out
            .lines()
            .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
            .collect();
        assert!(hops.windows(2).all(|w| w[0] <= w[1]), "{case}: {out}");
    }
}

#[test]
fn graph_path_between_pus_goes_through_their_common_ancestor() {
    let x = xml("24em64t-2n6c2t-pci");
    let x = x.to_str().unwrap();
    // Two PUs of one core.
    let out = wloc_ok(&["graph", "path", "-i", x, "pu:0", "pu:1"]);
    assert_eq!(out, "PU:0\nCore:0\nPU:1\n");
    // PUs of two packages meet at the machine.
    let out = wloc_ok(&["graph", "path", "-i", x, "pu:0", "pu:23"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.first(), Some(&"PU:0"));
    assert_eq!(lines.last(), Some(&"PU:23"));
    assert_eq!(lines[lines.len() / 2], "Machine:0", "{out}");
    assert!(lines.contains(&"Package:0") && lines.contains(&"Package:1"));
    // Everything within one hop of a core: itself, its PUs and its parent.
    let out = wloc_ok(&["graph", "hops", "-i", x, "core:0", "1"]);
    assert_eq!(out.lines().count(), 4, "{out}");
    assert!(out.starts_with("0 Core:0\n"));
}

#[test]
fn graph_bad_locations_and_types_are_told() {
    let x = xml("24em64t-2n6c2t-pci");
    let x = x.to_str().unwrap();
    for (args, needle) in [
        (
            vec!["graph", "path", "-i", x, "pu:0", "os=nosuch0"],
            "os=nosuch0",
        ),
        (
            vec!["graph", "hops", "-i", x, "pci=0000:ff:1f.7"],
            "pci=0000:ff:1f.7",
        ),
        (
            vec!["graph", "near", "-i", x, "pu:0-3", "pu"],
            "names 4 objects",
        ),
        (vec!["graph", "near", "-i", x, "pu:0", "bogus"], "bogus"),
        (
            vec!["graph", "-i", x, "--filter", "nope", "--of", "json"],
            "nope",
        ),
    ] {
        let out = common::run_wloc(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.starts_with("wloc: ") && err.contains(needle),
            "{args:?}: {err}"
        );
    }
}

/// The PUs `wloc graph near` gives first for a NIC are those hwloc-calc
/// gives as the NIC's locality (`os=NIC --intersect pu`), in its order;
/// checked by hand for one case: eth2 of 96em64t-4n4d3ca2co-pci hangs
/// below the second package, whose 24 PUs are L#24-47.
#[test]
fn graph_near_a_nic_matches_hwloc_calc() {
    common::require_hwloc();
    let tmp = common::TempDir::new("graph-near-hwloc");
    let (_, by_hand) = (
        "96em64t-4n4d3ca2co-pci",
        (24..48).map(|i| i.to_string()).collect::<Vec<_>>(),
    );
    for (case, nic) in CASES {
        let v2 = tmp.0.join(format!("{case}.xml"));
        common::export_case_v2(&format!("{case}.xml"), &v2, true);
        let calc = std::process::Command::new("hwloc-calc")
            .arg("-i")
            .arg(&v2)
            .arg(format!("os={nic}"))
            .args(["--intersect", "pu"])
            .output()
            .expect("hwloc-calc runs");
        assert!(calc.status.success(), "{case}");
        let hwloc: Vec<String> = String::from_utf8(calc.stdout)
            .unwrap()
            .trim()
            .split(',')
            .map(str::to_string)
            .collect();
        if case == "96em64t-4n4d3ca2co-pci" {
            assert_eq!(hwloc, by_hand);
        }
        let x = xml(case);
        let out = wloc_ok(&[
            "graph",
            "near",
            "-i",
            x.to_str().unwrap(),
            &format!("os={nic}"),
            "pu",
            &hwloc.len().to_string(),
        ]);
        let got: Vec<String> = out
            .lines()
            .map(|l| {
                l.split_whitespace()
                    .nth(1)
                    .unwrap()
                    .trim_start_matches("PU:")
                    .to_string()
            })
            .collect();
        assert_eq!(got, hwloc, "{case}");
    }
}

/// NVLink on a POWER8 machine with 4 GPUs (hwloc's `NVLinkBandwidth`
/// matrix, MB/s): GPU pairs and their CPU are linked directly.
#[test]
fn graph_interconnects_and_weighted_paths_on_nvlink_gpus() {
    let x = common::conformance().join("xml/power8gpudistances.xml");
    let x = x.to_str().unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&wloc_ok(&["graph", "-i", x, "--of", "json"])).unwrap();
    let name: HashMap<&str, String> = json["vertices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let n = v["osdev_name"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| {
                    format!("{}:{}", v["type"].as_str().unwrap(), v["logical_index"])
                });
            (v["id"].as_str().unwrap(), n)
        })
        .collect();
    let mut links: Vec<String> = json["edges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "interconnect")
        .map(|e| {
            format!(
                "{} {} {} {}",
                name[e["source"].as_str().unwrap()],
                name[e["target"].as_str().unwrap()],
                e["link"].as_str().unwrap(),
                e["rate"]
            )
        })
        .collect();
    links.sort();
    assert_eq!(
        links,
        [
            "nvml0 Package:0 NVLink 40000",
            "nvml0 nvml1 NVLink 40000",
            "nvml1 Package:0 NVLink 40000",
            "nvml2 Package:1 NVLink 40000",
            "nvml2 nvml3 NVLink 40000",
            "nvml3 Package:1 NVLink 40000",
        ]
    );
    // Linked GPUs: one hop.  GPUs of two packages: through their CPUs.
    assert_eq!(
        wloc_ok(&["graph", "path", "-i", x, "os=nvml0", "os=nvml1"]),
        "os=nvml0\nos=nvml1\n"
    );
    assert_eq!(
        wloc_ok(&["graph", "path", "-i", x, "os=nvml0", "os=nvml3"]),
        "os=nvml0\nPackage:0\nMachine:0\nPackage:1\nos=nvml3\n"
    );
    // GraphML and DOT carry the link's kind and rate.
    let gml = wloc_ok(&[
        "graph",
        "-i",
        x,
        "--filter",
        "os,package",
        "--of",
        "graphml",
    ]);
    let doc = roxmltree::Document::parse(&gml).unwrap();
    let inter = doc
        .descendants()
        .filter(|n| n.has_tag_name("edge"))
        .filter(|e| {
            e.children()
                .any(|d| d.attribute("key") == Some("label") && d.text() == Some("interconnect"))
        })
        .count();
    assert_eq!(inter, 6);
    let dot = wloc_ok(&["graph", "-i", x, "--of", "dot"]);
    assert!(dot.contains("[label=\"interconnect\", link=\"NVLink\", rate=40000"));
    common::require_packages(&[("/usr/bin/dot", "graphviz")]).unwrap();
    let mut child = std::process::Command::new("/usr/bin/dot")
        .arg("-Tsvg")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("dot runs");
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), dot.as_bytes()).unwrap();
    let svg = child.wait_with_output().unwrap();
    assert!(svg.status.success() && svg.stdout.starts_with(b"<?xml"));
}

/// `--properties` puts one sample of the sensors on the vertices of a
/// recorded machine; an XML input has no sensors to read.
#[test]
fn graph_exports_carry_dynamic_properties() {
    let tmp = common::TempDir::new("graph-props");
    let root = common::unpack("16amd64-8n2c", &tmp.0);
    let st = std::process::Command::new("cp")
        .arg("-a")
        .arg(common::workspace().join("tests/data/sensors/first/."))
        .arg(&root)
        .status()
        .unwrap();
    assert!(st.success());
    let r = root.to_str().unwrap();
    let args = ["graph", "-i", r, "--if", "fsroot", "--properties", "--of"];
    let json: serde_json::Value =
        serde_json::from_str(&wloc_ok(&[&args[..], &["json"]].concat())).unwrap();
    let numa0 = json["vertices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["type"] == "NUMANode" && v["os_index"] == 0)
        .unwrap();
    let used = numa0["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "memory.used")
        .unwrap();
    assert_eq!(used["value"], 805_306_368.0);
    assert_eq!(used["unit"], "B");
    let gml = wloc_ok(&[&args[..], &["graphml"]].concat());
    let doc = roxmltree::Document::parse(&gml).unwrap();
    assert!(
        doc.descendants()
            .any(|d| d.attribute("key") == Some("properties")
                && d.text().is_some_and(|t| t.contains("temperature=61 °C")))
    );
    let x = xml("24em64t-2n6c2t-pci");
    let o = common::run_wloc([
        "graph",
        "-i",
        x.to_str().unwrap(),
        "--properties",
        "--of",
        "json",
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--properties reads the sensors"));
}

/// `--rates` takes two samples of this machine, so utilisation (from two
/// `/proc/stat` readings) is on the PUs; one sample has none.
#[test]
fn graph_rates_need_two_samples() {
    let has_utilisation = |args: &[&str]| {
        let json: serde_json::Value = serde_json::from_str(&wloc_ok(args)).unwrap();
        json["vertices"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["type"] == "PU")
            .any(|v| {
                v["properties"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|p| p["name"] == "utilisation" && p["unit"] == "%")
            })
    };
    let base = ["graph", "--filter", "pu", "--properties", "--of", "json"];
    assert!(!has_utilisation(&base));
    assert!(has_utilisation(&[&base[..], &["--rates", "300"]].concat()));
    let o = common::run_wloc(["graph", "--rates", "300", "--of", "json"]);
    assert!(!o.status.success(), "--rates without --properties");
}

/// GUID as compared: hex digits only, lower case.
fn guid_key(s: &str) -> String {
    let s = s.trim().to_ascii_lowercase();
    let s = s.strip_prefix("0x").unwrap_or(&s);
    s.chars().filter(|c| c.is_ascii_hexdigit()).collect()
}

#[test]
fn graph_with_a_fabric_matches_netlocs_cables() {
    // A recorded InfiniBand cluster: one node's topology joined with the
    // fabric, cables compared with netloc's own reading of it.
    let tmp = common::TempDir::new("graph-fabric");
    common::unpack_fabric("plafrim2-xmlv2.txz", &tmp.0);
    let dir = tmp.0.join("plafrim2");
    let node = dir.join("hwloc/miriel001.xml");
    let (d, n) = (dir.to_str().unwrap(), node.to_str().unwrap());
    let json: serde_json::Value =
        serde_json::from_str(&wloc_ok(&["graph", "-i", n, "--fabric", d, "--of", "json"]))
            .expect("JSON");
    let vertices = json["vertices"].as_array().unwrap();
    // Every GUID a vertex answers to (node and port GUIDs; an OS
    // device's port GIDs end with its port GUIDs) -> the vertex's id.
    let mut vertex_of: HashMap<String, String> = HashMap::new();
    for v in vertices {
        let Some(infos) = v["infos"].as_object() else {
            continue;
        };
        for (k, val) in infos {
            let val = val.as_str().unwrap();
            let g = if k.ends_with("GUID") {
                guid_key(val)
            } else if k.starts_with("Port") && k.contains("GID") {
                guid_key(&val.split(':').skip(4).collect::<String>())
            } else {
                continue;
            };
            vertex_of.insert(g, v["id"].as_str().unwrap().to_string());
        }
    }
    let ours = vertices
        .iter()
        .find(|v| v["osdev_name"] == "qib0")
        .expect("the node's adapter");
    let our_guid = guid_key(ours["infos"]["NodeGUID"].as_str().unwrap());
    let mut links = std::collections::BTreeSet::new();
    for e in json["edges"].as_array().unwrap() {
        if e["type"] != "fabric-link" {
            continue;
        }
        let a = e["source"].as_str().unwrap().to_string();
        let b = e["target"].as_str().unwrap().to_string();
        assert!(e["rate"].as_u64().unwrap() > 0, "{e}");
        links.insert(if a < b { (a, b) } else { (b, a) });
    }
    // netloc's reading of the subnet the node is on.
    let draw: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("netloc/IB-fe80:0000:0000:0000-draw.json")).unwrap(),
    )
    .unwrap();
    let mut expected = std::collections::BTreeSet::new();
    let mut hostnames = HashMap::new();
    for l in draw["links"].as_array().unwrap() {
        let vertex = |k: &str| {
            let g = guid_key(l[k].as_str().unwrap());
            vertex_of.get(&g).cloned().unwrap_or(g)
        };
        let (a, b) = (vertex("from"), vertex("to"));
        expected.insert(if a < b { (a, b) } else { (b, a) });
    }
    for v in draw["nodes"].as_array().unwrap() {
        let h = v["hostname"].as_str().unwrap_or("");
        if !h.is_empty() {
            hostnames.insert(guid_key(v["id"].as_str().unwrap()), h.to_string());
        }
    }
    let extra: Vec<_> = links.difference(&expected).collect();
    let missing: Vec<_> = expected.difference(&links).collect();
    assert!(
        extra.is_empty() && missing.is_empty(),
        "fabric links against netloc's: not in netloc {extra:?}, missing {missing:?}"
    );
    let our_id = ours["id"].as_str().unwrap();
    assert!(expected.iter().any(|(a, b)| a == our_id || b == our_id));
    // Every other machine's adapter is one vertex, named after its host.
    let (mut adapters, mut named) = (0, 0);
    for v in vertices.iter().filter(|v| v["type"] == "Adapter") {
        adapters += 1;
        let g = guid_key(v["infos"]["NodeGUID"].as_str().unwrap());
        assert_ne!(g, our_guid, "the node's own adapter is its OS device");
        let host = hostnames
            .iter()
            .find(|(k, _)| vertex_of.get(*k) == v["id"].as_str().map(String::from).as_ref());
        if let Some((_, h)) = host {
            assert_eq!(v["infos"]["HostName"].as_str(), Some(h.as_str()), "{v}");
            named += 1;
        }
    }
    let netloc_cas = draw["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["type"] == "host")
        .count();
    assert_eq!(adapters, netloc_cas - 1);
    assert!(named > 80, "{named} adapters named after their host");

    // Queries walk the cables: the nearest adapters are two hops away
    // (through the leaf switch), the PU reaches another host's adapter.
    let near = wloc_ok(&[
        "graph",
        "-i",
        n,
        "--fabric",
        d,
        "near",
        "os=qib0",
        "switch,adapter",
        "3",
    ]);
    let first: Vec<&str> = near.lines().collect();
    assert_eq!(first.len(), 3, "{near}");
    assert!(first[0].starts_with("1 guid=0x"), "{near}");
    assert!(first[1].starts_with("2 guid=0x"), "{near}");
    let other = first[1].split_once(' ').unwrap().1;
    let path = wloc_ok(&["graph", "-i", n, "--fabric", d, "path", "pu:0", other]);
    let hops: Vec<&str> = path.lines().collect();
    assert_eq!(hops.first(), Some(&"PU:0"));
    assert_eq!(hops.last(), Some(&other));
    assert!(hops.contains(&"os=qib0"), "{path}");
    // DOT with the fabric reads back with Graphviz.
    let dot = wloc_ok(&[
        "graph",
        "-i",
        n,
        "--fabric",
        d,
        "--filter",
        "io,fabric",
        "--of",
        "dot",
    ]);
    assert!(dot.contains("label=\"fabric-link\""));
    common::require_packages(&[("/usr/bin/dot", "graphviz")]).expect("graphviz");
    let mut child = std::process::Command::new("dot")
        .arg("-Tsvg")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("dot runs");
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(dot.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());

    // A topology with no adapter on the fabric is told so.
    let other_case = xml("24em64t-2n6c2t-pci");
    let out = common::run_wloc([
        "graph",
        "-i",
        other_case.to_str().unwrap(),
        "--fabric",
        d,
        "--of",
        "json",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no adapter of this topology is on the fabric"),
        "{err}"
    );
}

#[test]
fn graph_of_an_image_is_the_graph_of_its_topology() {
    // An image adopted with -i (recognised by its magic) gives the same
    // graph, exports and queries as the XML it was written from.
    let tmp = common::TempDir::new("graph-image");
    for (case, nic) in CASES {
        let x = xml(case);
        let img = tmp.0.join(format!("{case}.img"));
        let (x, i) = (x.to_str().unwrap(), img.to_str().unwrap());
        wloc_ok(&["ls", "-i", x, "--whole-io", "--of", "image", i]);
        for args in [
            vec!["--of", "json"],
            vec!["--filter", "io,numa", "--of", "graphml"],
        ] {
            let from_xml = wloc_ok(&[&["graph", "-i", x][..], &args].concat());
            let from_img = wloc_ok(&[&["graph", "-i", i][..], &args].concat());
            assert_eq!(from_xml, from_img, "{case} {args:?}");
        }
        let os = format!("os={nic}");
        for q in [
            vec!["near", os.as_str(), "pu", "4"],
            vec!["path", "pu:0", os.as_str()],
            vec!["hops", os.as_str(), "3"],
        ] {
            let a = wloc_ok(&[&["graph", "-i", x][..], &q].concat());
            let b = wloc_ok(&[&["graph", "-i", i][..], &q].concat());
            assert!(!a.is_empty());
            assert_eq!(a, b, "{case} {q:?}");
        }
    }
}

#[test]
fn graph_of_this_machine_has_every_object() {
    // This machine's discovery, I/O included: one vertex per object of
    // `wloc ls --whole-io --of xml`, and queries answer on it.
    let xml = wloc_ok(&["ls", "--whole-io", "--of", "xml"]);
    let objects = xml.matches("<object ").count();
    let json: serde_json::Value =
        serde_json::from_str(&wloc_ok(&["graph", "--of", "json"])).expect("JSON");
    assert_eq!(json["vertices"].as_array().unwrap().len(), objects);
    let near = wloc_ok(&["graph", "near", "pu:0", "pu"]);
    let pus = xml.matches("type=\"PU\"").count();
    assert_eq!(near.lines().count(), pus - 1, "{near}");
    let hops = wloc_ok(&["graph", "hops", "pu:0", "1"]);
    assert!(hops.starts_with("0 PU:0\n1 "), "{hops}");
}
