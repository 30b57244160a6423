//! Hand-built listings, and a comparison with lstopo-no-graphics.

use super::*;
use wloc_core::TypeFilter;
use wloc_core::object::{BridgeAttr, CacheAttr, NumaAttr, ObjAttr, Object, PciAttr};

// ------------------------------------------------------------ hand-built

fn pu_set(first: u32, last: u32) -> CpuSet {
    CpuSet::from_range(first, Some(last))
}

fn pci(bus: u8, dev: u8, func: u8, class_id: u16, device_id: u16, link: f32) -> PciAttr {
    PciAttr {
        bus,
        dev,
        func,
        class_id,
        vendor_id: 0x8086,
        device_id,
        subvendor_id: 0x8086,
        linkspeed: link,
        ..PciAttr::default()
    }
}

/// One package, an L2, a core with two PUs, 16GB of memory, a host
/// bridge with three identical Ethernet functions, a fourth one on the
/// next device, a SATA controller with a disk, and a Misc object.
fn io_topology() -> Topology {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    t.set_io_types_filter(TypeFilter::KeepAll);
    let all = pu_set(0, 1);
    let mut pack = Object::with_cpuset(ObjType::Package, Some(0), all.clone());
    pack.add_info("CPUModel", "Fake CPU @ 2GHz");
    t.insert_by_cpuset(pack).unwrap();
    let mut l2 = Object::with_cpuset(ObjType::L2Cache, Some(0), all.clone());
    l2.attr = ObjAttr::Cache(CacheAttr {
        size: 1 << 20,
        depth: 2,
        linesize: 64,
        associativity: 16,
        ..CacheAttr::default()
    });
    t.insert_by_cpuset(l2).unwrap();
    t.insert_by_cpuset(Object::with_cpuset(ObjType::Core, Some(0), all.clone()))
        .unwrap();
    for p in 0..2 {
        t.insert_by_cpuset(Object::with_cpuset(ObjType::PU, Some(p), pu_set(p, p)))
            .unwrap();
    }
    let root = t.root();
    let mut numa = Object::with_cpuset(ObjType::NUMANode, Some(0), all);
    numa.nodeset = Some(NodeSet::from_index(0));
    numa.complete_nodeset = Some(NodeSet::from_index(0));
    numa.attr = ObjAttr::Numa(NumaAttr {
        local_memory: 16 << 30,
        page_types: Vec::new(),
    });
    t.insert_by_parent(root, numa).unwrap();
    let mut bridge = Object::new(ObjType::Bridge, None);
    bridge.attr = ObjAttr::Bridge(BridgeAttr {
        upstream: BridgeUpstream::Host,
        domain: 0,
        secondary_bus: 0,
        subordinate_bus: 1,
        depth: 0,
    });
    let bridge = t.insert_by_parent(root, bridge).unwrap();
    for (dev, func) in [(1, 0), (1, 1), (1, 2), (2, 0)] {
        let mut o = Object::new(ObjType::PCIDevice, None);
        o.attr = ObjAttr::Pci(pci(0, dev, func, 0x0200, 0x10d3, 0.25));
        t.insert_by_parent(bridge, o).unwrap();
    }
    let mut sata = Object::new(ObjType::PCIDevice, None);
    sata.attr = ObjAttr::Pci(pci(0, 3, 0, 0x0106, 0x2922, 0.0));
    let sata = t.insert_by_parent(bridge, sata).unwrap();
    let mut disk = Object::new(ObjType::OSDevice, None);
    disk.name = Some("sda".into());
    disk.subtype = Some("Disk".into());
    disk.attr = ObjAttr::OsDev(wloc_core::object::OsDevTypes(
        wloc_core::object::OsDevTypes::STORAGE,
    ));
    disk.add_info("Size", "10485760");
    t.insert_by_parent(sata, disk).unwrap();
    let mut misc = Object::new(ObjType::Misc, None);
    misc.name = Some("My Misc".into());
    t.insert_by_parent(root, misc).unwrap();
    t.finish().unwrap();
    t
}

// Expected outputs below were produced by lstopo-no-graphics 2.9 on the
// same machine written as XML.

const IO_DEFAULT: &str = "\
Machine (16GB total)
  NUMANode L#0 (P#0 16GB)
  Package L#0 + L2 L#0 (1024KB) + Core L#0
    PU L#0 (P#0)
    PU L#1 (P#1)
  HostBridge
    4 x { PCI 00:01.0-02.0 (Ethernet) }
    PCI 00:03.0 (SATA)
      Block(Disk) \"sda\"
  Misc My Misc
";

const IO_VERBOSE: &str = "\
Machine (P#0 total=16777216KB)
  NUMANode L#0 (P#0 local=16777216KB total=16777216KB)
  Package L#0 (P#0 CPUModel=\"Fake CPU @ 2GHz\")
    L2Cache L#0 (P#0 size=1024KB linesize=64 ways=16)
      Core L#0 (P#0)
        PU L#0 (P#0)
        PU L#1 (P#1)
  HostBridge L#0 (buses=0000:[00-01])
    4 x { PCI L#0-3 (busid=00:01.0-02.0 id=8086:10d3 class=0200(Ethernet) link=0.25GB/s) }
    PCI L#4 (busid=0000:00:03.0 id=8086:2922 class=0106(SATA))
      Block(Disk) L#0 (Size=10485760) \"sda\"
  Misc L#0 My Misc
depth 0:           1 Machine (type #0)
 depth 1:          1 Package (type #1)
  depth 2:         1 L2Cache (type #5)
   depth 3:        1 Core (type #2)
    depth 4:       2 PU (type #3)
Special depth -3:  1 NUMANode (type #13)
Special depth -4:  1 Bridge (type #14)
Special depth -5:  5 PCIDev (type #15)
Special depth -6:  1 OSDev (type #16)
Special depth -7:  1 Misc (type #17)
Topology not from this system
";

const IO_PHYSICAL: &str = "\
Machine (16GB total)
  NUMANode P#0 (16GB)
  Package P#0 + L2 P#0 (1024KB) + Core P#0
    PU P#0
    PU P#1
  HostBridge
    4 x { PCI 00:01.0-02.0 (Ethernet) }
    PCI 00:03.0 (SATA)
      Block(Disk) \"sda\"
  Misc My Misc
";

#[test]
fn default_listing_merges_chains_and_collapses_pci_functions() {
    assert_eq!(
        render(&io_topology(), &ConsoleOptions::default()),
        IO_DEFAULT
    );
}

#[test]
fn verbose_listing_has_attributes_summary_and_notes() {
    let opts = ConsoleOptions {
        verbose: true,
        ..ConsoleOptions::default()
    };
    assert_eq!(render(&io_topology(), &opts), IO_VERBOSE);
}

#[test]
fn physical_listing_shows_os_indexes_only() {
    let opts = ConsoleOptions {
        index_mode: IndexMode::Physical,
        ..ConsoleOptions::default()
    };
    assert_eq!(render(&io_topology(), &opts), IO_PHYSICAL);
}

#[test]
fn cpusets_disable_merging_and_no_collapse_lists_every_function() {
    let opts = ConsoleOptions {
        show_cpuset: true,
        collapse: false,
        ..ConsoleOptions::default()
    };
    let out = render(&io_topology(), &opts);
    assert!(out.starts_with(
        "Machine (16GB total) cpuset=0x00000003\n  NUMANode L#0 (P#0 16GB) cpuset=0x00000003\n  Package L#0 cpuset=0x00000003\n    L2 L#0 (1024KB) cpuset=0x00000003\n"
    ));
    assert!(out.contains("\n    PCI 00:01.2 (Ethernet)\n    PCI 00:02.0 (Ethernet)\n"));
    let only = ConsoleOptions {
        show_cpuset_only: true,
        ..ConsoleOptions::default()
    };
    assert!(render(&io_topology(), &only).starts_with("0x00000003\n  0x00000003\n  0x00000003\n"));
}

/// `--cof` (lstopo 2.10 and later, so not in the comparison with 2.9's
/// lstopo below; tests/cli.rs compares it with 2.14's): the form of the
/// cpusets, and `-c` implied.
#[test]
fn cpuset_output_formats_imply_cpusets() {
    let list = ConsoleOptions {
        cpuset_format: Some(CpusetFormat::List),
        ..ConsoleOptions::default()
    };
    assert!(
        render(&io_topology(), &list)
            .starts_with("Machine (16GB total) cpuset=0-1\n  NUMANode L#0 (P#0 16GB) cpuset=0-1\n")
    );
    let only = ConsoleOptions {
        show_cpuset_only: true,
        cpuset_format: Some(CpusetFormat::Taskset),
        ..ConsoleOptions::default()
    };
    assert!(render(&io_topology(), &only).starts_with("0x3\n  0x3\n"));
}

#[test]
fn silent_prints_the_summary_and_only_lists_one_type() {
    let opts = ConsoleOptions {
        silent: true,
        ..ConsoleOptions::default()
    };
    let out = render(&io_topology(), &opts);
    assert!(out.starts_with("depth 0:           1 Machine (type #0)\n"));
    assert!(out.ends_with("Special depth -7:  1 Misc (type #17)\n"));
    let only = ConsoleOptions {
        only: Some(ObjType::PU),
        ..ConsoleOptions::default()
    };
    assert_eq!(
        render(&io_topology(), &only),
        "PU L#0 (P#0)\nPU L#1 (P#1)\n"
    );
}

#[test]
fn pci_class_names_follow_hwloc() {
    assert_eq!(pci_class_string(0x0200), "Ethernet");
    assert_eq!(pci_class_string(0x0280), "Network");
    assert_eq!(pci_class_string(0x0001), "VGA");
    assert_eq!(pci_class_string(0x0002), "Other");
    assert_eq!(pci_class_string(0x0903), "Scanern");
    assert_eq!(pci_class_string(0x0b40), "Co-Processor");
    assert_eq!(pci_class_string(0x4012), "Co-Processor");
    assert_eq!(pci_class_string(0x1234), "ProcessingAccelerator");
    assert_eq!(pci_class_string(0x2034), "Other");
}

// ------------------------------------------------------------ differential

use std::path::{Path, PathBuf};
use std::process::Command;

use wloc_discovery::input::Source;

const LSTOPO: &str = "lstopo-no-graphics";
/// The conformance recordings of the repository (`tests/data/conformance`).
const CONFORMANCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/conformance");

/// Synthetic machines, turned into XML by lstopo itself.
const SYNTHETIC: &[&str] = &[
    "pack:2 [numa] l3:1 core:4 pu:2",
    "node:2 2",
    "pack:2 core:2 pu:2",
    "numa:4 pack:1 l2:2 l1d:1 l1i:1 core:1 pu:2",
    "group:2 group:3 numa:1 core:2 pu:1",
    "pack:2 die:2 l3:1 core:3 pu:2",
    "pack:1 [numa(memory=1GB)] [numa(memory=2TB)] core:2 pu:1",
    "pack:2(indexes=1,0) core:2 pu:2(indexes=0,2,4,6,1,3,5,7)",
    "l4:2 l3:2 l2:2 l1:2 core:1 pu:1",
    "pack:3 numa:2 core:5 pu:3",
    "pack:1 l3:1(size=32MB) l2:4(size=1MB) l1d:1(size=48KB) core:1 pu:2",
    "core:1 pu:1",
    "pack:64 core:1 pu:1",
    "pack:4 l3:2 core:4 pu:4",
];

/// lstopo option sets compared; filtering options are applied when the
/// topology is loaded, the others are display options.
const OPTION_SETS: &[&[&str]] = &[
    &[],
    &["-v"],
    &["-p"],
    &["-l"],
    &["-c"],
    &["-v", "-c"],
    &["-v", "-p"],
    &["-v", "-l"],
    &["-v", "-v"],
    &["-s"],
    &["-C"],
    &["--taskset"],
    &["--no-io"],
    &["--whole-io"],
    &["--merge"],
    &["--no-collapse"],
    &["-v", "--whole-io", "--no-collapse"],
    &["--disallowed", "-v"],
    &["--memattrs"],
    &["--distances"],
    &["--cpukinds"],
    &["--only", "numa"],
    &["--only", "pci", "-v"],
];

/// Differences that come from outside this module: (part of the input
/// name, part of the first differing line, why).  They are reported
/// but do not fail the comparison.
const KNOWN_DIFFERENCES: &[(&str, &str, &str)] = &[
    (
        "(as v2)",
        "PageSize",
        "v3 topology infos PageSizeNr/PageSizes come back from wloc's v2 export \
             as root infos, so they move before Backend",
    ),
    (ATTACHED_NUMA, "(2048MB total)", ATTACHED_NUMA_WHY),
    (ATTACHED_NUMA, "total=2097152KB", ATTACHED_NUMA_WHY),
    (ATTACHED_NUMA, "= 1073741824", ATTACHED_NUMA_WHY),
    (ATTACHED_NUMA, "(P#0 1024MB)", ATTACHED_NUMA_WHY),
    (
        "[\"--only\", \"pci\", \"-v\"]",
        "wloc \"Only showing some PCIDev objects\"",
        "lstopo 2.14 says \"Only showing some\", 2.9 \"Only showing\"; wloc follows 2.14 \
             (tests/dropin_gaps.rs compares with 2.14's lstopo)",
    ),
    (
        "xml/16amd64-4distances.xml",
        "wloc \" index      0      1      2      3\"",
        "lstopo 2.14 aligns a distance matrix's row headers to the widest header, 2.9 to \
             the widest cell; wloc follows 2.14 (tests/dropin_gaps.rs compares with 2.14's lstopo)",
    ),
];

/// The synthetic description read directly (not its XML export) whose
/// attached NUMA nodes give no size.
const ATTACHED_NUMA: &str = "synthetic `pack:2 [numa] l3:1 core:4 pu:2' [";
const ATTACHED_NUMA_WHY: &str = "hwloc 2.14 gives a NUMA node attached in a synthetic \
     description 1 GiB when none is given, 2.9 gives none; wloc follows 2.14 \
     (tests/draw.rs compares with 2.14's lstopo)";

/// The end-to-end tests' package installer, so that this comparison runs
/// on a fresh machine as they do rather than skipping quietly.
#[path = "../../../../tests/common/packages.rs"]
mod packages;

/// Makes sure Debian's hwloc (the oracle) is installed: installs it when
/// missing (as root), else fails saying what to install.
fn require_lstopo() {
    if let Err(e) = packages::require_packages(&[
        ("/usr/bin/lstopo-no-graphics", "hwloc"),
        (
            "/usr/lib/x86_64-linux-gnu/hwloc/hwloc_pci.so",
            "libhwloc-plugins",
        ),
    ]) {
        panic!("{e}");
    }
}

fn lstopo(args: &[&str]) -> Result<String, String> {
    let out = Command::new(LSTOPO)
        .args(args)
        .env("HWLOC_DONT_ADD_VERSION_INFO", "1")
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // The input-format guess is input handling, not part of the listing.
    Ok(match text.strip_prefix("assuming `") {
        Some(rest) => rest
            .split_once('\n')
            .map(|(_, r)| r.to_string())
            .unwrap_or_default(),
        None => text,
    })
}

/// The topology lstopo would build from an input with these options.
fn load(source: &Source, args: &[&str]) -> Result<Topology, String> {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    t.set_io_types_filter(TypeFilter::KeepImportant);
    for a in args {
        match *a {
            "--no-io" => t.set_io_types_filter(TypeFilter::KeepNone),
            "--whole-io" => t.set_io_types_filter(TypeFilter::KeepAll),
            "--merge" => t.set_all_types_filter(TypeFilter::KeepStructure),
            "--disallowed" => t.include_disallowed = true,
            _ => {}
        }
    }
    wloc_discovery::Discovery::new(None)
        .load(source, t)
        .map_err(|e| e.to_string())
}

/// lstopo's `-i X --if F` for an input.
fn input_args(source: &Source) -> Vec<String> {
    match source {
        Source::Xml(p) => vec![
            "-i".into(),
            p.to_string_lossy().into_owned(),
            "--if".into(),
            "xml".into(),
        ],
        Source::Synthetic(d) => vec!["-i".into(), d.clone(), "--if".into(), "synthetic".into()],
        other => panic!("unexpected test input {other:?}"),
    }
}

fn console_options(args: &[&str]) -> ConsoleOptions {
    let mut o = ConsoleOptions::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "-v" if o.verbose => o.very_verbose = true,
            "-v" => o.verbose = true,
            "-s" => o.silent = true,
            "-p" => o.index_mode = IndexMode::Physical,
            "-l" => o.index_mode = IndexMode::Logical,
            "-c" => o.show_cpuset = true,
            "-C" => o.show_cpuset_only = true,
            "--taskset" => o.cpuset_format = Some(CpusetFormat::Taskset),
            "--no-collapse" => o.collapse = false,
            "--memattrs" => o.memattrs_only = true,
            "--distances" => o.distances_only = true,
            "--cpukinds" => o.cpukinds_only = true,
            "--only" => o.only = it.next().and_then(|t| ObjType::parse(t)),
            _ => {}
        }
    }
    o
}

/// Where two listings first differ, for the report.
fn first_difference(expected: &str, got: &str) -> String {
    let (e, g): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), got.lines().collect());
    let n = e.len().max(g.len());
    for i in 0..n {
        let (a, b) = (e.get(i).copied(), g.get(i).copied());
        if a != b {
            return format!(
                "line {}: lstopo {:?} / wloc {:?}",
                i + 1,
                a.unwrap_or("<end>"),
                b.unwrap_or("<end>")
            );
        }
    }
    "trailing newline".into()
}

fn scratch_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("wloc-console-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.to_string_lossy().ends_with(suffix));
    v.sort();
    v
}

/// Inputs that hwloc 2.9 and wloc both read: synthetic descriptions (read
/// directly, and as the XML lstopo exports for them), recorded Linux
/// machines exported to XML by lstopo, the version-2 XML files of the
/// conformance suite, and its version-3 files converted by wloc.
fn inputs(dir: &Path, notes: &mut Vec<String>) -> Vec<(String, Source)> {
    let mut v = Vec::new();
    for (i, desc) in SYNTHETIC.iter().enumerate() {
        let out = dir.join(format!("synthetic{i}.xml"));
        let o = out.to_string_lossy().into_owned();
        match lstopo(&["-i", desc, "--if", "synthetic", "-f", "--of", "xml", &o]) {
            Ok(_) => {
                v.push((
                    format!("synthetic `{desc}'"),
                    Source::Synthetic(desc.to_string()),
                ));
                v.push((format!("synthetic `{desc}' (as xml)"), Source::Xml(out)));
            }
            Err(e) => notes.push(format!("synthetic `{desc}': lstopo failed: {e}")),
        }
    }
    let conf = Path::new(CONFORMANCE);
    for tarball in files(&conf.join("linux"), ".tar.bz2") {
        let name = tarball
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace(".tar.bz2", "");
        let root = dir.join(format!("fsroot-{name}"));
        let _ = std::fs::create_dir_all(&root);
        let ok = Command::new("tar")
            .arg("xjf")
            .arg(&tarball)
            .arg("-C")
            .arg(&root)
            .output()
            .is_ok_and(|o| o.status.success());
        let sub = root.join(&name);
        let out = dir.join(format!("linux-{name}.xml"));
        let (s, o) = (sub.to_string_lossy(), out.to_string_lossy());
        if ok
            && lstopo(&[
                "-i",
                &s,
                "--if",
                "fsroot",
                "--whole-io",
                "-f",
                "--of",
                "xml",
                &o,
            ])
            .is_ok()
        {
            v.push((format!("linux/{name}"), Source::Xml(out)));
        } else {
            notes.push(format!(
                "linux/{name}: could not be unpacked or read by lstopo"
            ));
        }
    }
    for sub in ["xml", "linux", "x86"] {
        for xml in files(&conf.join(sub), ".xml") {
            let name = format!("{sub}/{}", xml.file_name().unwrap().to_string_lossy());
            let text = std::fs::read_to_string(&xml).unwrap_or_default();
            if text.contains("<topology version=\"2.0\">") {
                v.push((name, Source::Xml(xml)));
                continue;
            }
            let mut t = Topology::new();
            t.set_all_types_filter(TypeFilter::KeepAll);
            t.set_io_types_filter(TypeFilter::KeepAll);
            match crate::xml::import_file(&xml, t) {
                Ok(topo) => {
                    let out = dir.join(name.replace('/', "-").replace(".xml", ".v2.xml"));
                    let v2 = crate::xml::export(&topo, crate::xml::XmlVersion::V2);
                    std::fs::write(&out, v2).expect("write v2 xml");
                    let o = out.to_string_lossy();
                    match lstopo(&["-i", &o, "--if", "xml"]) {
                        Ok(_) => v.push((format!("{name} (as v2)"), Source::Xml(out))),
                        Err(e) => notes.push(format!(
                            "{name}: lstopo rejects wloc's v2 export: {}",
                            e.lines().next().unwrap_or("")
                        )),
                    }
                }
                Err(e) => notes.push(format!("{name}: wloc cannot import it: {e}")),
            }
        }
    }
    v
}

/// Compares lstopo's console output with `render` on every input and
/// option set.  Differences are listed; the test fails on any that is
/// not a [known one](KNOWN_DIFFERENCES).
#[test]
fn matches_lstopo_no_graphics() {
    require_lstopo();
    let dir = scratch_dir();
    let mut notes = Vec::new();
    let inputs = inputs(&dir, &mut notes);
    let results: Vec<(usize, Vec<String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = inputs
            .chunks(inputs.len().div_ceil(8).max(1))
            .map(|chunk| {
                s.spawn(move || {
                    let mut passed = 0;
                    let mut failures = Vec::new();
                    for (name, source) in chunk {
                        let input = input_args(source);
                        for args in OPTION_SETS {
                            let mut full: Vec<&str> = input.iter().map(|a| a.as_str()).collect();
                            full.extend_from_slice(&["--of", "console"]);
                            full.extend_from_slice(args);
                            let expected = match lstopo(&full) {
                                Ok(e) => e,
                                Err(e) => {
                                    failures.push(format!("{name} {args:?}: lstopo failed: {e}"));
                                    continue;
                                }
                            };
                            let got = match load(source, args) {
                                Ok(t) => render(&t, &console_options(args)),
                                Err(e) => {
                                    failures
                                        .push(format!("{name} {args:?}: wloc import failed: {e}"));
                                    continue;
                                }
                            };
                            if got == expected {
                                passed += 1;
                            } else {
                                failures.push(format!(
                                    "{name} {args:?}: {}",
                                    first_difference(&expected, &got)
                                ));
                            }
                        }
                    }
                    (passed, failures)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("worker"))
            .collect()
    });
    let _ = std::fs::remove_dir_all(&dir);
    let passed: usize = results.iter().map(|r| r.0).sum();
    let failures: Vec<&String> = results.iter().flat_map(|r| &r.1).collect();
    for n in &notes {
        println!("note: {n}");
    }
    let known = |f: &str| {
        KNOWN_DIFFERENCES
            .iter()
            .find(|(input, line, _)| f.contains(input) && f.contains(line))
    };
    let mut unexpected = 0;
    for f in &failures {
        match known(f) {
            Some((_, _, why)) => println!("KNOWN {f}\n      ({why})"),
            None => {
                unexpected += 1;
                println!("DIFF {f}");
            }
        }
    }
    for (input, line, _) in KNOWN_DIFFERENCES {
        if !failures
            .iter()
            .any(|f| f.contains(input) && f.contains(line))
        {
            println!("note: known difference ({input}, {line}) no longer occurs");
        }
    }
    println!(
        "{} inputs x {} option sets: {passed} identical, {} different ({unexpected} unexpected)",
        inputs.len(),
        OPTION_SETS.len(),
        failures.len()
    );
    assert_eq!(unexpected, 0, "listings differ from lstopo");
}
