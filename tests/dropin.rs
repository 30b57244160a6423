//! wloc as a drop-in for the hwloc 2.9 installed on users' machines:
//! the XML wloc writes by default is read by hwloc 2.9's
//! `lstopo-no-graphics`; `compress-dir`/`uncompress-dir` keep
//! hwloc-compress-dir's layout both ways; `ibroute` dumps that end with the
//! tool's own error keep their entries; `calc --no-smt=N`, `info
//! --support` and `slurm node` answer as hwloc 2.9's tools and slurmd do.
//! Debian's hwloc (and slurmd) are installed by the tests when missing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common;
use crate::common::{TempDir, run_wloc};

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

fn ok(o: &Output, what: &str) -> String {
    common::assert_success(what, o);
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `lstopo-no-graphics -i FILE --of xml -`: hwloc 2.9's reading of `file`,
/// as its own XML (the normal form the comparisons use).
fn hwloc_read(file: &Path) -> Result<String, String> {
    let o = Command::new("lstopo-no-graphics")
        .arg("-i")
        .arg(file)
        .args(["--if", "xml", "--of", "xml", "-"])
        .output()
        .expect("lstopo-no-graphics runs");
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&o.stderr).into_owned())
    }
}

/// The conformance XML cases (`tests/data/conformance/xml/*.xml`).
fn xml_cases() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(common::conformance().join("xml"))
        .expect("conformance xml folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    v.sort();
    assert!(v.len() >= 20, "only {} conformance XML cases", v.len());
    v
}

fn version_of(xml: &str) -> Option<String> {
    // The version is an attribute of the <topology> element itself.
    let start = xml.find("<topology")?;
    let tag = &xml[start..start + xml[start..].find('>')?];
    let at = tag.find(" version=\"")? + " version=\"".len();
    Some(tag[at..at + tag[at..].find('"')?].to_string())
}

// ------------------------------------------------------------------ XML

#[test]
fn hwloc_2_9_reads_every_xml_wloc_writes_by_default() {
    common::require_hwloc();
    let tmp = TempDir::new("dropin-xml");
    let mut inputs: Vec<(String, Vec<String>)> = xml_cases()
        .iter()
        .map(|p| (p.display().to_string(), vec!["-i".into(), s(p).into()]))
        .collect();
    for syn in [
        "pack:2 core:2 pu:2",
        "node:2 l3:1 core:3 pu:2",
        "pack:2 [numa] l2:2 core:2 pu:1",
        "group:2 pack:2 core:4 pu:2",
    ] {
        inputs.push((syn.to_string(), vec!["-i".into(), syn.into()]));
    }
    let mut bad = Vec::new();
    let mut count = 0;
    for (i, (what, args)) in inputs.iter().enumerate() {
        for extra in [&[][..], &["--whole-io", "--disallowed"][..]] {
            let out = tmp.0.join(format!("{i}.xml"));
            let o = run_wloc(
                ["ls"]
                    .iter()
                    .map(|a| a.to_string())
                    .chain(args.iter().cloned())
                    .chain(extra.iter().map(|a| a.to_string()))
                    .chain(["--of".into(), "xml".into(), "-f".into(), s(&out).into()]),
            );
            ok(&o, &format!("wloc ls {what}"));
            let text = std::fs::read_to_string(&out).unwrap();
            count += 1;
            if version_of(&text).as_deref() != Some("2.0") {
                bad.push(format!("{what} {extra:?}: version {:?}", version_of(&text)));
                continue;
            }
            if let Err(e) = hwloc_read(&out) {
                bad.push(format!("{what} {extra:?}: lstopo-no-graphics fails: {e}"));
            }
        }
    }
    common::assert_no_differences("ls --of xml read by lstopo", count, &bad, 2 * 24);
}

#[test]
fn xml_version_3_is_written_when_asked_for() {
    let syn = "pack:2 core:2 pu:2";
    let v = |o: &Output| version_of(&ok(o, "wloc ls"));
    assert_eq!(
        v(&run_wloc(["ls", "-i", syn, "--of", "xml", "-"])).as_deref(),
        Some("2.0")
    );
    assert_eq!(
        v(&run_wloc([
            "ls",
            "-i",
            syn,
            "--of",
            "xml",
            "--xml-version",
            "3",
            "-"
        ]))
        .as_deref(),
        Some("3.0")
    );
    assert_eq!(
        v(&run_wloc([
            "ls",
            "-i",
            syn,
            "--of",
            "xml",
            "--export-xml-flags",
            "2",
            "-"
        ]))
        .as_deref(),
        Some("2.0")
    );
    let o = Command::new(common::wloc())
        .args(["ls", "-i", syn, "--of", "xml", "-"])
        .env("WLOC_XML_VERSION", "3")
        .output()
        .unwrap();
    assert_eq!(v(&o).as_deref(), Some("3.0"));
    // The option wins over the environment.
    let o = Command::new(common::wloc())
        .args(["ls", "-i", syn, "--of", "xml", "--xml-version", "2", "-"])
        .env("WLOC_XML_VERSION", "3")
        .output()
        .unwrap();
    assert_eq!(v(&o).as_deref(), Some("2.0"));
    // A bad value is an error naming the variable.
    let o = Command::new(common::wloc())
        .args(["ls", "-i", syn, "--of", "xml", "-"])
        .env("WLOC_XML_VERSION", "7")
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("WLOC_XML_VERSION"));
    // lstopo 2.9's `--export-xml-flags 1` is hwloc 1.x XML: written so
    // (tests/xml_v1.rs compares it with lstopo's).
    let o = run_wloc([
        "ls",
        "-i",
        syn,
        "--of",
        "xml",
        "--export-xml-flags",
        "1",
        "-",
    ]);
    let text = ok(&o, "wloc ls --export-xml-flags 1");
    assert!(
        text.contains("<!DOCTYPE topology SYSTEM \"hwloc.dtd\">\n<topology>\n"),
        "{text}"
    );
    // With a version, or with both flags, it is refused.
    let o = run_wloc([
        "ls",
        "-i",
        syn,
        "--of",
        "xml",
        "--export-xml-flags",
        "3",
        "-",
    ]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("1.x"),
        "{}",
        common::show_output(&o)
    );
    let help = ok(&run_wloc(["ls", "--help"]), "wloc ls --help");
    assert!(
        help.contains("--xml-version") && help.contains("WLOC_XML_VERSION"),
        "{help}"
    );
}

#[test]
fn store_get_and_uncompress_dir_write_hwloc_2_xml() {
    common::require_hwloc();
    let tmp = TempDir::new("dropin-store");
    let cases = xml_cases();
    let store = tmp.0.join("s.wstore");
    let files: Vec<&str> = cases.iter().take(6).map(|p| s(p)).collect();
    let mut args = vec!["store", "pack", "-o", s(&store)];
    args.extend(files.iter().copied());
    ok(&run_wloc(&args), "store pack");
    let name = cases[0].file_name().unwrap().to_string_lossy().to_string();
    let got = tmp.0.join("got.xml");
    ok(
        &run_wloc(["store", "get", s(&store), &name, "-o", s(&got)]),
        "store get",
    );
    assert_eq!(
        version_of(&std::fs::read_to_string(&got).unwrap()).as_deref(),
        Some("2.0")
    );
    hwloc_read(&got).expect("lstopo reads what store get wrote");
    let out = tmp.0.join("out");
    ok(
        &run_wloc(["uncompress-dir", s(&store), s(&out)]),
        "uncompress-dir of a store",
    );
    let mut n = 0;
    for e in std::fs::read_dir(&out).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(version_of(&text).as_deref(), Some("2.0"), "{}", p.display());
        hwloc_read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        n += 1;
    }
    assert_eq!(n, 6);
}

// ------------------------------------------------------------ compress-dir

/// The cluster corpus (hwloc's compress-dir test) unpacked in `dir`: the
/// input folder and hwloc 2.9's own compressed folder.
fn cluster(dir: &Path) -> (PathBuf, PathBuf) {
    let data = common::workspace().join("tests/data/cluster");
    for t in [
        "test-hwloc-compress-dir.input.tar.gz",
        "test-hwloc-compress-dir.output.tar.gz",
    ] {
        let st = Command::new("tar")
            .arg("xzf")
            .arg(data.join(t))
            .arg("-C")
            .arg(dir)
            .status()
            .expect("tar runs");
        assert!(st.success(), "unpacking {t}");
    }
    (
        dir.join("test-hwloc-compress-dir.input"),
        dir.join("test-hwloc-compress-dir.output"),
    )
}

/// hwloc's reading of every `*.xml` of `dir`, by file name.
fn normalised(dir: &Path) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if name.ends_with(".xml") {
            let t = hwloc_read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            m.insert(name, t);
        }
    }
    m
}

fn same_topologies(want: &BTreeMap<String, String>, got: &BTreeMap<String, String>, what: &str) {
    assert_eq!(
        want.keys().collect::<Vec<_>>(),
        got.keys().collect::<Vec<_>>(),
        "{what}: not the same files"
    );
    let bad: Vec<&String> = want.keys().filter(|k| want[*k] != got[*k]).collect();
    assert!(bad.is_empty(), "{what}: these topologies differ: {bad:?}");
}

#[test]
fn hwloc_uncompresses_what_wloc_compress_dir_wrote() {
    common::require_hwloc();
    let tmp = TempDir::new("dropin-compress");
    let (input, _) = cluster(&tmp.0);
    let out = tmp.0.join("wloc-out");
    std::fs::create_dir(&out).unwrap();
    let o = run_wloc(["compress-dir", s(&input), s(&out)]);
    let stdout = ok(&o, "wloc compress-dir");
    assert!(
        stdout.contains("Compressed ") && stdout.contains(" on top of "),
        "{stdout}"
    );
    // hwloc's layout: NAME.xml kept whole, NAME.diff.xml against a full one.
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert_eq!(names.len(), 21, "{names:?}");
    let mut diffs = 0;
    for n in &names {
        assert!(n.ends_with(".xml"), "{n}");
        if let Some(stem) = n.strip_suffix(".diff.xml") {
            diffs += 1;
            let text = std::fs::read_to_string(out.join(n)).unwrap();
            let refname = text
                .split("refname=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap_or_else(|| panic!("{n} has no refname"));
            assert!(
                names.contains(&refname.to_string()) && !refname.ends_with(".diff.xml"),
                "{n} refers to {refname}"
            );
            assert!(!names.contains(&format!("{stem}.xml")));
        }
    }
    assert!(diffs >= 10, "only {diffs} diffs: {names:?}");
    let back = tmp.0.join("back");
    std::fs::create_dir(&back).unwrap();
    let o = Command::new("hwloc-compress-dir")
        .arg("-R")
        .arg(&out)
        .arg(&back)
        .output()
        .expect("hwloc-compress-dir runs");
    assert!(o.status.success(), "{}", common::show_output(&o));
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("Failed"),
        "{}",
        common::show_output(&o)
    );
    same_topologies(
        &normalised(&input),
        &normalised(&back),
        "hwloc -R of wloc's",
    );
    // Run again: everything is already there, nothing is rewritten.
    let o = run_wloc(["compress-dir", s(&input), s(&out)]);
    let again = ok(&o, "wloc compress-dir again");
    assert!(again.contains("Compressed 0 new topologies"), "{again}");
    assert!(again.contains("Kept 0 new topologies"), "{again}");
}

#[test]
fn wloc_uncompresses_what_hwloc_compress_dir_wrote() {
    common::require_hwloc();
    let tmp = TempDir::new("dropin-uncompress");
    let (input, hwloc_out) = cluster(&tmp.0);
    let want = normalised(&input);
    // hwloc's recorded output, and one made now by the installed tool.
    let fresh = tmp.0.join("hwloc-now");
    std::fs::create_dir(&fresh).unwrap();
    let o = Command::new("hwloc-compress-dir")
        .arg(&input)
        .arg(&fresh)
        .output()
        .expect("hwloc-compress-dir runs");
    assert!(o.status.success(), "{}", common::show_output(&o));
    for (k, dir) in [hwloc_out, fresh].iter().enumerate() {
        let back = tmp.0.join(format!("back{k}"));
        let o = run_wloc(["uncompress-dir", s(dir), s(&back)]);
        let stdout = ok(&o, "wloc uncompress-dir");
        assert!(stdout.contains("Uncompressed "), "{stdout}");
        same_topologies(&want, &normalised(&back), "wloc uncompress-dir of hwloc's");
        // compress-dir -R is the same command.
        let back = tmp.0.join(format!("backR{k}"));
        ok(
            &run_wloc(["compress-dir", "-R", s(dir), s(&back)]),
            "wloc compress-dir -R",
        );
        same_topologies(&want, &normalised(&back), "wloc compress-dir -R of hwloc's");
    }
}

#[test]
fn uncompress_exits_0_when_a_reference_is_missing_as_hwloc() {
    let tmp = TempDir::new("dropin-missing-ref");
    let (_, hwloc_out) = cluster(&tmp.0);
    // Keep one diff without its reference.
    let lonely = tmp.0.join("lonely");
    std::fs::create_dir(&lonely).unwrap();
    std::fs::copy(
        hwloc_out.join("node003.diff.xml"),
        lonely.join("node003.diff.xml"),
    )
    .unwrap();
    std::fs::write(lonely.join("README"), "not a topology").unwrap();
    let back = tmp.0.join("back");
    let o = run_wloc(["uncompress-dir", "-v", s(&lonely), s(&back)]);
    assert!(o.status.success(), "{}", common::show_output(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("Failed to uncompress") && err.contains("node003.diff.xml"),
        "{err}"
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("Ignoring non-XML and non-diff-XML file README"),
        "{out}"
    );
    assert!(out.contains("Uncompressed 0 new topologies"), "{out}");
}

// ------------------------------------------------------------ fabric

#[test]
fn ibroute_dumps_ending_with_the_tools_error_keep_their_routes() {
    let tmp = TempDir::new("dropin-ibroute");
    common::unpack_fabric("plafrim2.txz", &tmp.0);
    let dir = tmp.0.join("plafrim2");
    let before = ok(
        &run_wloc(["fabric", "path", s(&dir), "miriel001", "sirocco01"]),
        "fabric path",
    );
    assert!(before.contains("(forwarding tables)"), "{before}");
    // Every dump now ends as a failed ibroute run does: its entries, then
    // the tool's error instead of the trailer.
    let mut changed = Vec::new();
    for sub in std::fs::read_dir(dir.join("ib-raw")).unwrap() {
        let sub = sub.unwrap().path();
        if !sub.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&sub).unwrap() {
            let f = f.unwrap().path();
            let text = std::fs::read_to_string(&f).unwrap();
            let mut lines: Vec<&str> = text.lines().collect();
            if lines
                .last()
                .is_some_and(|l| l.contains("valid lids dumped"))
            {
                lines.pop();
            }
            let n = lines.len() + 1;
            let mut t = lines.join("\n");
            t.push_str("\n/usr/sbin/ibroute: iberror: failed: dump tables: linear forwarding table get failed\n");
            std::fs::write(&f, t).unwrap();
            changed.push((f.file_name().unwrap().to_string_lossy().to_string(), n));
        }
    }
    assert!(changed.len() >= 5);
    let o = run_wloc(["fabric", "path", s(&dir), "miriel001", "sirocco01"]);
    let after = ok(&o, "fabric path on dumps with the error line");
    assert_eq!(after, before, "the routes read before the error are kept");
    let err = String::from_utf8_lossy(&o.stderr);
    for (name, line) in &changed {
        // One warning per file, naming it and the line where it stops
        // (the table of LID 60 is damaged before: it is left out).
        let hits: Vec<&str> = err.lines().filter(|l| l.contains(name.as_str())).collect();
        assert_eq!(hits.len(), 1, "{name}: {err}");
        if !hits[0].contains("left out") {
            assert!(
                hits[0].contains(&format!("{name}:{line}: the dump stops")),
                "{name}: {err}"
            );
        }
    }
}

// ------------------------------------------------------------ small gaps

#[test]
fn calc_no_smt_takes_what_hwloc_calc_takes() {
    let syn = "pack:1 core:2 pu:3";
    for n in ["0", "1", "2", "5", "-1", "-2"] {
        let arg = format!("--no-smt={n}");
        for loc in ["all", "core:1"] {
            let theirs = common::hwloc_2_14_tool("hwloc-calc")
                .args(["-i", syn, &arg, loc])
                .env("HWLOC_HIDE_ERRORS", "2")
                .output()
                .unwrap();
            let ours = run_wloc(["calc", "-i", syn, &arg, loc]);
            assert_eq!(
                (ours.status.code(), String::from_utf8_lossy(&ours.stdout)),
                (
                    theirs.status.code(),
                    String::from_utf8_lossy(&theirs.stdout)
                ),
                "calc {arg} {loc}"
            );
        }
    }
}

#[test]
fn info_support_lists_hwloc_2_14s_flags_in_its_order() {
    let names = |o: &Output| -> Vec<String> {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| l.split(" = ").next().map(str::to_string))
            .collect()
    };
    let theirs = common::hwloc_2_14_tool("hwloc-info")
        .arg("--support")
        .output()
        .unwrap();
    let ours = run_wloc(["info", "--support"]);
    assert!(ours.status.success());
    assert_eq!(names(&ours), names(&theirs));
}

#[test]
fn slurm_node_counts_what_slurmd_counts_with_disallowed_pus() {
    common::require_packages(&[("/usr/sbin/slurmd", "slurmd")]).expect("Debian's slurmd");
    let tmp = TempDir::new("dropin-slurm");
    let case = common::conformance().join("xml/irregulargroups-disallowed.xml");
    let v2 = tmp.0.join("node.xml");
    // As a site would record it: every PU, disallowed ones marked.
    ok(
        &run_wloc([
            "ls",
            "-i",
            s(&case),
            "--disallowed",
            "--whole-io",
            "--of",
            "xml",
            s(&v2),
        ]),
        "wloc ls",
    );
    let spool = tmp.0.join("spool");
    std::fs::create_dir_all(&spool).unwrap();
    let conf = tmp.0.join("slurm.conf");
    std::fs::write(
        &conf,
        format!(
            "ClusterName=wloc\nSlurmctldHost=localhost\nSlurmdSpoolDir={}\n",
            spool.display()
        ),
    )
    .unwrap();
    let o = Command::new("/usr/sbin/slurmd")
        .arg("-C")
        .env("SLURM_CONF", &conf)
        .env("HWLOC_XMLFILE", &v2)
        .env("HWLOC_HIDE_ERRORS", "2")
        .output()
        .unwrap();
    let theirs = String::from_utf8_lossy(&o.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    let ours = ok(
        &run_wloc(["slurm", "node", "-i", s(&v2), "--name", "x"]),
        "slurm node",
    );
    let fields = |l: &str| -> Vec<String> {
        l.split_whitespace()
            .filter(|f| !f.starts_with("NodeName=") && !f.starts_with("RealMemory="))
            .map(str::to_string)
            .collect()
    };
    assert!(
        theirs.starts_with("NodeName="),
        "slurmd -C: {}",
        common::show_output(&o)
    );
    assert_eq!(
        fields(&ours),
        fields(&theirs),
        "wloc: {ours}\nslurmd: {theirs}"
    );
}
