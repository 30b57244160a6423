//! `<userdata>` elements of hwloc XML survive every wloc command that reads
//! and writes XML (`ls`, `annotate`, `diff`/`patch`, `compress-dir`,
//! `store`), byte for byte as hwloc 2.9's tools keep them.
//!
//! `tests/data/dropin/userdata.xml` has userdata of every form (named and
//! unnamed, plain and base64, empty, with characters that need escaping,
//! tabs and line breaks, on the root, a NUMA node and PUs); it is a fixed
//! point of `lstopo-no-graphics -i F --of xml`.

use crate::common;
use crate::common::assert_success as ok;
use crate::common::show_output as show;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn data() -> PathBuf {
    common::workspace().join("tests/data/dropin/userdata.xml")
}

fn original() -> String {
    std::fs::read_to_string(data()).expect("tests/data/dropin/userdata.xml")
}

/// Runs one of hwloc's tools, or says why it cannot (hwloc not installed).
fn hwloc(tool: &str, args: &[&str], cwd: &Path) -> Option<Output> {
    let _ = common::wloc(); // installs hwloc when it can
    match Command::new(tool)
        .args(args)
        .current_dir(cwd)
        .env("LC_ALL", "C")
        .output()
    {
        Ok(o) => Some(o),
        Err(e) => {
            println!(
                "skipping the comparison with {tool}: it cannot run ({e}); apt-get install hwloc"
            );
            None
        }
    }
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The `<userdata` lines of a document.
fn userdata_lines(xml: &str) -> Vec<&str> {
    xml.lines().filter(|l| l.contains("<userdata")).collect()
}

#[test]
fn ls_writes_userdata_back_byte_for_byte() {
    let tmp = common::TempDir::new("userdata-ls");
    let dir = &tmp.0;
    let f = data();
    let f = f.to_str().unwrap();
    let want = original();
    assert_eq!(userdata_lines(&want).len(), 13, "the test file changed");

    let o = common::run_wloc_in(&["ls", "-i", f, "--of", "xml"], dir);
    ok("wloc ls --of xml", &o);
    let ours = String::from_utf8(o.stdout).unwrap();
    assert!(ours == want, "wloc ls changed the document:\n{ours}");

    // Through an hwloc 3 document and back: the same userdata.
    let o = common::run_wloc_in(
        &["ls", "-i", f, "--of", "xml", "--xml-version", "3", "v3.xml"],
        dir,
    );
    ok("wloc ls --xml-version 3", &o);
    let v3 = read(dir, "v3.xml");
    assert_eq!(
        userdata_lines(&v3),
        userdata_lines(&want),
        "hwloc 3 document:\n{v3}"
    );
    let o = common::run_wloc_in(&["ls", "-i", "v3.xml", "--of", "xml"], dir);
    ok("wloc ls of the hwloc 3 document", &o);
    let back = String::from_utf8(o.stdout).unwrap();
    assert_eq!(userdata_lines(&back), userdata_lines(&want));

    if let Some(h) = hwloc("lstopo-no-graphics", &["-i", f, "--of", "xml", "-"], dir) {
        ok("lstopo-no-graphics", &h);
        assert!(
            h.stdout == ours.as_bytes(),
            "lstopo-no-graphics writes otherwise:\n{}",
            String::from_utf8_lossy(&h.stdout)
        );
    }
}

#[test]
fn annotate_keeps_userdata_and_cu_clears_it_where_asked() {
    let tmp = common::TempDir::new("userdata-annotate");
    let dir = &tmp.0;
    std::fs::copy(data(), dir.join("in.xml")).unwrap();
    let want = original();

    // An info added to the root: it follows the root's infos, the
    // userdata stays after it.
    let args = ["in.xml", "added.xml", "root", "info", "Added", "yes"];
    let mut cmd = vec!["annotate"];
    cmd.extend(args);
    ok("wloc annotate", &common::run_wloc_in(&cmd, dir));
    let site = "    <info name=\"Backend\" value=\"Linux\"/>\n";
    let expected = want.replacen(
        site,
        &format!("{site}    <info name=\"Added\" value=\"yes\"/>\n"),
        1,
    );
    assert_ne!(expected, want);
    let ours = read(dir, "added.xml");
    assert!(ours == expected, "wloc annotate wrote:\n{ours}");
    let hargs = ["in.xml", "h-added.xml", "root", "info", "Added", "yes"];
    if let Some(h) = hwloc("hwloc-annotate", &hargs, dir) {
        ok("hwloc-annotate", &h);
        assert_eq!(
            ours,
            read(dir, "h-added.xml"),
            "hwloc-annotate writes otherwise"
        );
    }

    // --cu clears the userdata of the objects at the locations only.
    let args = ["--cu", "in.xml", "cleared.xml", "pu:0", "info", "X", "y"];
    let mut cmd = vec!["annotate"];
    cmd.extend(args);
    ok("wloc annotate --cu", &common::run_wloc_in(&cmd, dir));
    let pu0 = "          <userdata name=\"pu0\" length=\"5\">&lt;pu0&gt;</userdata>\n          <userdata length=\"4\" encoding=\"base64\">cHUwIQ==</userdata>\n";
    assert!(want.contains(pu0));
    let expected = want.replacen(pu0, "          <info name=\"X\" value=\"y\"/>\n", 1);
    let ours = read(dir, "cleared.xml");
    assert!(ours == expected, "wloc annotate --cu wrote:\n{ours}");
    let hargs = ["--cu", "in.xml", "h-cleared.xml", "pu:0", "info", "X", "y"];
    if let Some(h) = hwloc("hwloc-annotate", &hargs, dir) {
        ok("hwloc-annotate --cu", &h);
        assert_eq!(
            ours,
            read(dir, "h-cleared.xml"),
            "hwloc-annotate --cu writes otherwise"
        );
    }
}

#[test]
fn patch_keeps_the_references_userdata() {
    let tmp = common::TempDir::new("userdata-patch");
    let dir = &tmp.0;
    std::fs::copy(data(), dir.join("old.xml")).unwrap();
    let want = original();

    // The empty diff of equal topologies changes nothing.
    let o = common::run_wloc_in(&["diff", "old.xml", "old.xml", "empty.diff.xml"], dir);
    ok("wloc diff of equal topologies", &o);
    ok(
        "wloc patch with an empty diff",
        &common::run_wloc_in(&["patch", "old.xml", "empty.diff.xml", "same.xml"], dir),
    );
    let same = read(dir, "same.xml");
    assert!(same == want, "wloc patch of an empty diff wrote:\n{same}");

    // An info value changed: patching gives the new document, userdata
    // included, and -R the old one.
    let new = want.replacen("value=\"DRAM\"", "value=\"HBM\"", 1);
    assert_ne!(new, want);
    std::fs::write(dir.join("new.xml"), &new).unwrap();
    ok(
        "wloc diff",
        &common::run_wloc_in(&["diff", "old.xml", "new.xml", "d.diff.xml"], dir),
    );
    ok(
        "wloc patch",
        &common::run_wloc_in(&["patch", "old.xml", "d.diff.xml", "p.xml"], dir),
    );
    assert!(
        read(dir, "p.xml") == new,
        "patched:\n{}",
        read(dir, "p.xml")
    );
    ok(
        "wloc patch -R",
        &common::run_wloc_in(&["patch", "-R", "new.xml", "d.diff.xml", "r.xml"], dir),
    );
    assert!(
        read(dir, "r.xml") == want,
        "reverted:\n{}",
        read(dir, "r.xml")
    );
}

#[test]
fn compress_dir_and_store_keep_userdata() {
    let tmp = common::TempDir::new("userdata-store");
    let dir = &tmp.0;
    let input = dir.join("in");
    std::fs::create_dir(&input).unwrap();
    let a = original();
    // b differs by an info value (an hwloc diff expresses it); c only by
    // its userdata, which hwloc's diffs do not carry.
    let b = a.replacen("value=\"DRAM\"", "value=\"HBM\"", 1);
    let c = a.replacen("&lt;pu0&gt;", "&lt;pu9&gt;", 1);
    assert!(b != a && c != a);
    for (n, t) in [("a.xml", &a), ("b.xml", &b), ("c.xml", &c)] {
        std::fs::write(input.join(n), t).unwrap();
    }

    let o = common::run_wloc_in(&["compress-dir", "in", "out"], dir);
    ok("wloc compress-dir", &o);
    let out = dir.join("out");
    assert!(out.join("a.xml").exists(), "{}", show(&o));
    assert!(
        out.join("b.diff.xml").exists(),
        "b is not a diff: {}",
        show(&o)
    );
    assert!(
        out.join("c.xml").exists() && !out.join("c.diff.xml").exists(),
        "c, whose userdata differs, must be kept whole: {}",
        show(&o)
    );
    ok(
        "wloc uncompress-dir",
        &common::run_wloc_in(&["uncompress-dir", "out", "back"], dir),
    );
    ok(
        "wloc compress-dir -R",
        &common::run_wloc_in(&["compress-dir", "-R", "out", "back2"], dir),
    );
    for back in ["back", "back2"] {
        for (n, t) in [("a.xml", &a), ("b.xml", &b), ("c.xml", &c)] {
            let got = read(&dir.join(back), n);
            assert!(&got == t, "{back}/{n}:\n{got}");
        }
    }

    ok(
        "wloc store pack",
        &common::run_wloc_in(&["store", "pack", "-o", "s.wstore", "in"], dir),
    );
    for (n, t) in [("a", &a), ("b", &b), ("c", &c)] {
        let o = common::run_wloc_in(&["store", "get", "s.wstore", n], dir);
        ok("wloc store get", &o);
        assert!(o.stdout == t.as_bytes(), "store get {n}:\n{}", show(&o));
    }
}
