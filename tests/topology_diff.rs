//! `wloc diff` and `wloc patch` against hwloc 2.9's `hwloc-diff` and
//! `hwloc-patch`: conformance cases exported as hwloc 2 XML, edited in the
//! ways hwloc's diff format expresses (a NUMA node's memory, an info value,
//! an object's name), must give the same diff document in both tools, and
//! each tool must apply the other's diff, in both directions.  Edits the
//! format cannot express give exit code 1 in both (`--format hwloc` for
//! wloc, whose default then writes its own diff); bad diff documents give
//! a clear error, never a panic.

use crate::common;
use crate::common::assert_success as ok;
use crate::common::show_output as show;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A conformance case, and the edits (old text, new text) that make NEW.
struct Case {
    file: &'static str,
    edits: &'static [(&'static str, &'static str)],
}

const CASES: &[Case] = &[
    Case {
        file: "24em64t-2n6c2t-pci.xml",
        edits: &[
            // NUMA node L#1's memory, a topology info of the root, an OS device's name.
            ("local_memory=\"19327348736\"", "local_memory=\"1000\""),
            (
                "name=\"HostName\" value=\"mirage004\"",
                "name=\"HostName\" value=\"newhost\"",
            ),
            ("name=\"eth1\"", "name=\"ethX\""),
        ],
    },
    Case {
        file: "16-2gr2gr2n2c+misc.xml",
        edits: &[
            (
                "gp_index=\"20\" local_memory=\"1073741824\"",
                "gp_index=\"20\" local_memory=\"2147483648\"",
            ),
            (
                // The Misc object's name (a userdata entry is named
                // "MyName" too, and is kept).
                "gp_index=\"25\" name=\"MyName\"",
                "gp_index=\"25\" name=\"Renamed &amp; &quot;quoted&quot;\"",
            ),
            (
                "value=\"group:2 group:2 node:2 core:2 1\"",
                "value=\"edited\"",
            ),
        ],
    },
    Case {
        file: "16amd64-4distances.xml",
        edits: &[
            ("local_memory=\"8587984896\"", "local_memory=\"4294967296\""),
            (
                "name=\"DMIBoardName\" value=\"S4881 \"",
                "name=\"DMIBoardName\" value=\"\"",
            ),
        ],
    },
];

fn run(program: &Path, args: &[&Path], cwd: &Path) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(cwd)
        .env("LC_ALL", "C")
        .output()
        .unwrap_or_else(|e| panic!("{} runs: {e}", program.display()))
}

fn p(s: &str) -> PathBuf {
    PathBuf::from(s)
}

fn wloc(args: &[&str], cwd: &Path) -> Output {
    let args: Vec<PathBuf> = args.iter().map(|a| p(a)).collect();
    let refs: Vec<&Path> = args.iter().map(|a| a.as_path()).collect();
    run(&common::wloc(), &refs, cwd)
}

fn hwloc(tool: &str, args: &[&str], cwd: &Path) -> Output {
    let args: Vec<PathBuf> = args.iter().map(|a| p(a)).collect();
    let refs: Vec<&Path> = args.iter().map(|a| a.as_path()).collect();
    run(Path::new(tool), &refs, cwd)
}

/// `wloc ls --of xml` of a file.
fn ls_xml(file: &str, dir: &Path) -> String {
    let o = wloc(&["ls", "-i", file, "--if", "xml", "--of", "xml"], dir);
    ok(&format!("wloc ls {file}"), &o);
    String::from_utf8(o.stdout).unwrap()
}

/// Writes `old.xml` (the case as hwloc 2 XML) and `new.xml` (edited) in `dir`.
fn prepare(case: &Case, dir: &Path) {
    let old = dir.join("old.xml");
    common::export_case_v2(case.file, &old, true);
    let mut text = std::fs::read_to_string(&old).unwrap();
    for (from, to) in case.edits {
        assert_eq!(
            text.matches(from).count(),
            1,
            "{}: the edit of {from} needs exactly one match",
            case.file
        );
        text = text.replace(from, to);
    }
    std::fs::write(dir.join("new.xml"), text).unwrap();
}

/// The edited attributes are in `file` as NEW has them, and the old ones gone.
fn assert_edits(case: &Case, file: &Path, forward: bool) {
    let text = std::fs::read_to_string(file).unwrap();
    for (from, to) in case.edits {
        let (gone, there) = if forward { (from, to) } else { (to, from) };
        assert!(
            text.contains(there) && !text.contains(gone),
            "{}: {} should have {there} and not {gone}",
            case.file,
            file.display()
        );
    }
}

#[test]
fn wloc_diff_writes_hwlocs_diff_and_hwloc_patch_applies_it() {
    common::require_hwloc();
    for case in CASES {
        let tmp = common::TempDir::new("topodiff-w");
        let dir = &tmp.0;
        prepare(case, dir);
        let o = wloc(&["diff", "old.xml", "new.xml", "w.diff.xml"], dir);
        ok(&format!("{}: wloc diff", case.file), &o);
        let o = hwloc("hwloc-diff", &["old.xml", "new.xml", "h.diff.xml"], dir);
        ok(&format!("{}: hwloc-diff", case.file), &o);
        let ours = std::fs::read_to_string(dir.join("w.diff.xml")).unwrap();
        let theirs = std::fs::read_to_string(dir.join("h.diff.xml")).unwrap();
        assert_eq!(ours, theirs, "{}: wloc's diff is not hwloc's", case.file);
        assert_eq!(
            ours.matches("<diff ").count(),
            case.edits.len(),
            "{}: one change per edit",
            case.file
        );

        // Forward: hwloc-patch OLD wloc's diff = NEW.
        let o = hwloc(
            "hwloc-patch",
            &["old.xml", "w.diff.xml", "patched.xml"],
            dir,
        );
        ok(&format!("{}: hwloc-patch", case.file), &o);
        if let Err(e) = common::compare_full(&dir.join("new.xml"), &dir.join("patched.xml")) {
            panic!("{}: hwloc-patch of wloc's diff is not NEW:\n{e}", case.file);
        }
        assert_edits(case, &dir.join("patched.xml"), true);

        // Backward: hwloc-patch -R NEW wloc's diff = OLD.
        let o = hwloc(
            "hwloc-patch",
            &["-R", "new.xml", "w.diff.xml", "reverted.xml"],
            dir,
        );
        ok(&format!("{}: hwloc-patch -R", case.file), &o);
        if let Err(e) = common::compare_full(&dir.join("old.xml"), &dir.join("reverted.xml")) {
            panic!(
                "{}: hwloc-patch -R of wloc's diff is not OLD:\n{e}",
                case.file
            );
        }
        assert_edits(case, &dir.join("reverted.xml"), false);

        // wloc's --refname, and the empty diff of equal topologies.
        let o = wloc(&["diff", "--refname", "ref.xml", "old.xml", "new.xml"], dir);
        ok("wloc diff --refname", &o);
        assert!(String::from_utf8_lossy(&o.stdout).contains("<topologydiff refname=\"ref.xml\">"));
        let o = wloc(&["diff", "old.xml", "old.xml"], dir);
        let h = hwloc("hwloc-diff", &["old.xml", "old.xml"], dir);
        ok("wloc diff of equal topologies", &o);
        assert_eq!(o.stdout, h.stdout, "{}: empty diffs differ", case.file);
    }
}

#[test]
fn wloc_patch_applies_hwlocs_diff_both_ways() {
    common::require_hwloc();
    for case in CASES {
        let tmp = common::TempDir::new("topodiff-h");
        let dir = &tmp.0;
        prepare(case, dir);
        let o = hwloc("hwloc-diff", &["old.xml", "new.xml", "h.diff.xml"], dir);
        ok(&format!("{}: hwloc-diff", case.file), &o);
        let new_ls = ls_xml("new.xml", dir);
        let old_ls = ls_xml("old.xml", dir);

        let o = wloc(&["patch", "old.xml", "h.diff.xml", "patched.xml"], dir);
        ok(&format!("{}: wloc patch", case.file), &o);
        assert_eq!(
            ls_xml("patched.xml", dir),
            new_ls,
            "{}: wloc patch of hwloc's diff is not NEW",
            case.file
        );
        assert_edits(case, &dir.join("patched.xml"), true);
        // hwloc 2.9 reads what wloc patch wrote.
        if let Err(e) = common::compare_full(&dir.join("new.xml"), &dir.join("patched.xml")) {
            panic!("{}: wloc patch output is not NEW:\n{e}", case.file);
        }

        let o = wloc(
            &["patch", "-R", "new.xml", "h.diff.xml", "reverted.xml"],
            dir,
        );
        ok(&format!("{}: wloc patch -R", case.file), &o);
        assert_eq!(
            ls_xml("reverted.xml", dir),
            old_ls,
            "{}: wloc patch -R of hwloc's diff is not OLD",
            case.file
        );

        // `refname` finds old.xml; without OUT the topology changes in place.
        std::fs::copy(dir.join("old.xml"), dir.join("inplace.xml")).unwrap();
        let o = wloc(&["patch", "refname", "h.diff.xml", "byref.xml"], dir);
        ok("wloc patch refname", &o);
        assert_eq!(ls_xml("byref.xml", dir), new_ls);
        let o = wloc(&["patch", "inplace.xml", "h.diff.xml"], dir);
        ok("wloc patch in place", &o);
        assert_eq!(ls_xml("inplace.xml", dir), new_ls);

        // The diff from standard input.
        let child = Command::new(common::wloc())
            .args(["patch", "old.xml", "-", "stdin.xml"])
            .current_dir(dir)
            .stdin(std::fs::File::open(dir.join("h.diff.xml")).unwrap())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        ok("wloc patch from standard input", &child);
        assert_eq!(ls_xml("stdin.xml", dir), new_ls);
    }
}

#[test]
fn too_complex_changes_exit_1_in_both_tools() {
    common::require_hwloc();
    let tmp = common::TempDir::new("topodiff-tc");
    let dir = &tmp.0;
    // A PU removed, and a distance changed.
    common::export_case_v2("24em64t-2n6c2t-pci.xml", &dir.join("pci.xml"), true);
    let text = std::fs::read_to_string(dir.join("pci.xml")).unwrap();
    let last_pu = text.rfind("<object type=\"PU\"").unwrap();
    let end = last_pu + text[last_pu..].find('\n').unwrap() + 1;
    let line_start = text[..last_pu].rfind('\n').unwrap() + 1;
    let removed = format!("{}{}", &text[..line_start], &text[end..]);
    std::fs::write(dir.join("pci-nopu.xml"), removed).unwrap();
    common::export_case_v2("16amd64-4distances.xml", &dir.join("dist.xml"), true);
    let text = std::fs::read_to_string(dir.join("dist.xml")).unwrap();
    let row = "<u64values length=\"30\">10 20 40 40 80 80 80 80 20 10 </u64values>";
    assert!(text.contains(row));
    let edited = text.replacen(
        row,
        "<u64values length=\"30\">10 20 40 40 80 80 80 80 20 11 </u64values>",
        1,
    );
    std::fs::write(dir.join("dist-edited.xml"), edited).unwrap();

    for (old, new, names) in [
        ("pci.xml", "pci-nopu.xml", "Core L#11 (depth 5)"),
        ("dist.xml", "dist-edited.xml", "distance matrix"),
    ] {
        let h = hwloc("hwloc-diff", &[old, new, "h.xml"], dir);
        assert_eq!(h.status.code(), Some(1), "hwloc-diff {new}: {}", show(&h));
        let o = wloc(&["diff", "--format", "hwloc", old, new, "w.xml"], dir);
        assert_eq!(o.status.code(), Some(1), "wloc diff {new}: {}", show(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("too complex") && err.contains(names),
            "wloc diff {new} should say it is too complex at {names}: {err}"
        );
        assert!(!dir.join("h.xml").exists() && !dir.join("w.xml").exists());
        // The reverse is too complex as well.
        let o = wloc(&["diff", "--format", "hwloc", new, old], dir);
        assert_eq!(
            o.status.code(),
            Some(1),
            "wloc diff {new} {old}: {}",
            show(&o)
        );
        // By default wloc writes its own diff instead, which applies both ways.
        let o = wloc(&["diff", old, new, "w.diff"], dir);
        ok("wloc diff (its own format)", &o);
        let text = std::fs::read_to_string(dir.join("w.diff")).unwrap();
        assert!(text.starts_with("wloc-topology-diff 1\n"), "{text}");
        ok("wloc patch", &wloc(&["patch", old, "w.diff", "p.xml"], dir));
        assert_eq!(ls_xml("p.xml", dir), ls_xml(new, dir));
        ok(
            "wloc patch -R",
            &wloc(&["patch", "-R", new, "w.diff", "r.xml"], dir),
        );
        assert_eq!(ls_xml("r.xml", dir), ls_xml(old, dir));
        std::fs::remove_file(dir.join("w.diff")).unwrap();
    }
}

#[test]
fn bad_diffs_fail_clearly() {
    common::require_hwloc();
    let tmp = common::TempDir::new("topodiff-bad");
    let dir = &tmp.0;
    prepare(&CASES[0], dir);
    let o = hwloc("hwloc-diff", &["old.xml", "new.xml", "good.xml"], dir);
    ok("hwloc-diff", &o);
    let good = std::fs::read_to_string(dir.join("good.xml")).unwrap();
    let cases: Vec<(&str, String, &str, &str)> = vec![
        (
            "garbage",
            "garbage\n".into(),
            "old.xml",
            "not an XML document",
        ),
        ("empty", String::new(), "old.xml", "not an XML document"),
        (
            "truncated",
            good[..good.len() / 2].to_string(),
            "old.xml",
            "not an XML document",
        ),
        (
            "a topology",
            std::fs::read_to_string(dir.join("old.xml")).unwrap(),
            "old.xml",
            "not <topologydiff>",
        ),
        (
            "wrong refname",
            good.replace("refname=\"old.xml\"", "refname=\"missing.xml\""),
            "refname",
            "missing.xml",
        ),
        (
            "no refname",
            good.replace(" refname=\"old.xml\"", ""),
            "refname",
            "no refname",
        ),
        // The diff applies to OLD, not to NEW.
        ("wrong direction", good.clone(), "new.xml", "change #1"),
        (
            "a missing object",
            good.replace(
                "obj_depth=\"-6\" obj_index=\"1\"",
                "obj_depth=\"-6\" obj_index=\"99\"",
            ),
            "old.xml",
            "change #2",
        ),
        (
            "a size change of a non-NUMA object",
            good.replace(
                "obj_depth=\"-3\" obj_index=\"1\"",
                "obj_depth=\"1\" obj_index=\"0\"",
            ),
            "old.xml",
            "not a NUMA node",
        ),
        (
            "a too-complex marker",
            good.replace(
                "</topologydiff>",
                "  <diff type=\"1\" obj_depth=\"0\" obj_index=\"0\"/>\n</topologydiff>",
            ),
            "old.xml",
            "too-complex",
        ),
        (
            "a huge depth",
            good.replace("obj_depth=\"0\"", "obj_depth=\"99999999999\""),
            "old.xml",
            "out of range",
        ),
    ];
    for (what, text, old, want) in cases {
        std::fs::write(dir.join("bad.xml"), &text).unwrap();
        let _ = std::fs::remove_file(dir.join("out.xml"));
        let o = wloc(&["patch", old, "bad.xml", "out.xml"], dir);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.starts_with("wloc: ") && err.contains(want),
            "{what}: expected a failure naming '{want}': {}",
            show(&o)
        );
        assert!(!err.contains("panicked"), "{what}: {err}");
        assert!(!dir.join("out.xml").exists(), "{what}: wrote an output");
    }
    // Bytes that are not UTF-8.
    std::fs::write(dir.join("bin.xml"), [0xff, 0xfe, 0x00, 0x3c]).unwrap();
    let o = wloc(&["patch", "old.xml", "bin.xml", "out.xml"], dir);
    assert!(!o.status.success() && !String::from_utf8_lossy(&o.stderr).contains("panicked"));
    // A missing diff file, and missing topologies for wloc diff.
    let o = wloc(&["patch", "old.xml", "nothere.xml", "out.xml"], dir);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("nothere.xml"));
    let o = wloc(&["diff", "old.xml", "nothere.xml"], dir);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("nothere.xml"));
}
