//! Many topologies: wloc's own diff (everything hwloc's format calls too
//! complex) applied exactly or refused at a named change; `wloc
//! store pack` / `uncompress-dir` on hwloc's cluster corpus (ratio and
//! exact round trip), uncompressing what hwloc-compress-dir made; `wloc
//! store` random access, independence from input order, clear errors
//! on corrupt stores; files that are not topologies skipped with a
//! warning, as hwloc-compress-dir does.

use crate::common;
use crate::common::assert_success as ok;
use crate::common::show_output as show;

use std::path::{Path, PathBuf};
use std::process::Output;

fn fails(what: &str, o: &Output, want: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.code() == Some(1)
            && err.starts_with("wloc: ")
            && err.contains(want)
            && !err.contains("panicked"),
        "{what} should fail with `{want}`: {}",
        show(o)
    );
}

fn ls_xml(file: &Path) -> String {
    let o = common::run_wloc_in(
        &[
            "ls",
            "-i",
            &file.to_string_lossy(),
            "--if",
            "xml",
            "--of",
            "xml",
        ],
        Path::new("."),
    );
    ok(&format!("wloc ls {}", file.display()), &o);
    String::from_utf8(o.stdout).unwrap()
}

/// hwloc's compress-dir corpus (21 nodes), unpacked in `dir`.
fn corpus(dir: &Path, which: &str) -> PathBuf {
    let tgz = common::workspace().join(format!(
        "tests/data/cluster/test-hwloc-compress-dir.{which}.tar.gz"
    ));
    assert!(
        tgz.exists(),
        "{} is missing: the checkout is incomplete",
        tgz.display()
    );
    let o = std::process::Command::new("tar")
        .arg("-C")
        .arg(dir)
        .arg("-xzf")
        .arg(&tgz)
        .output()
        .expect("tar runs");
    assert!(o.status.success(), "tar: {}", show(&o));
    dir.join(format!("test-hwloc-compress-dir.{which}"))
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

#[test]
fn rich_diff_applies_exactly_and_refuses_conflicts_by_name() {
    let tmp = common::TempDir::new("store-richdiff");
    let dir = &tmp.0;
    let c = corpus(dir, "input");
    let node = |n: &str| c.join(n).to_string_lossy().into_owned();
    // Two different machines (other PCI devices, cores, caches, memory):
    // too complex for hwloc's format, so wloc writes its own.
    let o = common::run_wloc_in(
        &["diff", &node("node001.xml"), &node("visu01.xml"), "d.diff"],
        dir,
    );
    ok("wloc diff node001 visu01", &o);
    let d = std::fs::read_to_string(dir.join("d.diff")).unwrap();
    assert!(
        d.starts_with("wloc-topology-diff 1\nrefname node001.xml\n@@ "),
        "{}",
        &d[..200.min(d.len())]
    );
    ok(
        "patch",
        &common::run_wloc_in(&["patch", &node("node001.xml"), "d.diff", "p.xml"], dir),
    );
    assert_eq!(ls_xml(&dir.join("p.xml")), ls_xml(&c.join("visu01.xml")));
    ok(
        "patch -R",
        &common::run_wloc_in(
            &["patch", "-R", &node("visu01.xml"), "d.diff", "r.xml"],
            dir,
        ),
    );
    assert_eq!(ls_xml(&dir.join("r.xml")), ls_xml(&c.join("node001.xml")));

    // A diff between two nodes (MACs, GUIDs, host name, a PCI revision
    // byte) refused on a third machine, naming the first change that does
    // not fit; nothing is written.
    let o = common::run_wloc_in(
        &["diff", &node("node001.xml"), &node("node002.xml"), "n.diff"],
        dir,
    );
    ok("wloc diff node001 node002", &o);
    let o = common::run_wloc_in(&["patch", &node("bigmem01.xml"), "n.diff", "x.xml"], dir);
    fails("patching another machine", &o, "change #1 (@@ -");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("does not apply: line ") && err.contains("(in "),
        "{err}"
    );
    assert!(!dir.join("x.xml").exists());
    // Applied twice: the second time, the old values are gone.
    ok(
        "patch",
        &common::run_wloc_in(&["patch", &node("node001.xml"), "n.diff", "y.xml"], dir),
    );
    fails(
        "patching twice",
        &common::run_wloc_in(&["patch", "y.xml", "n.diff", "z.xml"], dir),
        "does not apply",
    );

    // NUMA page types, which hwloc's diffs ignore, are in wloc's.
    let text = std::fs::read_to_string(c.join("node001.xml")).unwrap();
    let edited = text.replacen(
        "<page_type size=\"2097152\" count=\"0\"/>",
        "<page_type size=\"2097152\" count=\"7\"/>",
        1,
    );
    assert_ne!(text, edited);
    std::fs::write(dir.join("pages.xml"), edited).unwrap();
    let o = common::run_wloc_in(&["diff", &node("node001.xml"), "pages.xml", "pg.xml"], dir);
    ok("hwloc-style diff of page types", &o);
    assert!(String::from_utf8_lossy(&o.stderr).contains("Found no difference"));
    ok(
        "wloc diff --format wloc",
        &common::run_wloc_in(
            &[
                "diff",
                "--format",
                "wloc",
                &node("node001.xml"),
                "pages.xml",
                "pg.diff",
            ],
            dir,
        ),
    );
    let d = std::fs::read_to_string(dir.join("pg.diff")).unwrap();
    assert!(d.contains("+") && d.contains("count=\"7\""), "{d}");
    ok(
        "patch page types",
        &common::run_wloc_in(
            &["patch", &node("node001.xml"), "pg.diff", "pg-new.xml"],
            dir,
        ),
    );
    assert_eq!(
        ls_xml(&dir.join("pg-new.xml")),
        ls_xml(&dir.join("pages.xml"))
    );

    // Bad wloc diffs name their line.
    std::fs::write(
        dir.join("bad.diff"),
        "wloc-topology-diff 1\n@@ -1,1 +1,1 @@\n+x\n",
    )
    .unwrap();
    fails(
        "a bad diff",
        &common::run_wloc_in(&["patch", &node("node001.xml"), "bad.diff", "b.xml"], dir),
        "line 3: expected a `-` line",
    );
    std::fs::write(dir.join("v9.diff"), "wloc-topology-diff 9\n").unwrap();
    fails(
        "a later version",
        &common::run_wloc_in(&["patch", &node("node001.xml"), "v9.diff", "b.xml"], dir),
        "version 9",
    );
}

#[test]
fn store_pack_round_trips_the_corpus_at_81x() {
    let tmp = common::TempDir::new("store-corpus");
    let dir = &tmp.0;
    let c = corpus(dir, "input");
    std::fs::create_dir(dir.join("out")).unwrap();
    let o = common::run_wloc_in(
        &[
            "store",
            "pack",
            "-o",
            "out/topologies.wstore",
            &c.to_string_lossy(),
        ],
        dir,
    );
    ok("store pack", &o);
    let store = dir.join("out/topologies.wstore");
    let size = std::fs::metadata(&store).unwrap().len();
    let input = dir_size(&c);
    assert!(
        input >= 81 * size,
        "the store of the corpus is {size} bytes, {:.1}x smaller than its {input} bytes (at least 81x wanted)",
        input as f64 / size as f64
    );
    ok(
        "uncompress-dir",
        &common::run_wloc_in(&["uncompress-dir", "out", "back"], dir),
    );
    assert_eq!(names(&dir.join("back")), names(&c));
    for n in names(&c) {
        assert_eq!(
            ls_xml(&dir.join("back").join(&n)),
            ls_xml(&c.join(&n)),
            "{n} round trip"
        );
    }
    // -R as hwloc-compress-dir spells it.
    ok(
        "compress-dir -R",
        &common::run_wloc_in(
            &["compress-dir", "-R", "out/topologies.wstore", "back2"],
            dir,
        ),
    );
    assert_eq!(names(&dir.join("back2")), names(&c));

    // What hwloc-compress-dir made uncompresses too, to the same topologies.
    let h = corpus(dir, "output");
    ok(
        "uncompress-dir of hwloc's",
        &common::run_wloc_in(&["uncompress-dir", &h.to_string_lossy(), "hback"], dir),
    );
    assert_eq!(names(&dir.join("hback")), names(&c));
    for n in ["node002.xml", "bigmem04.xml", "visu06.xml"] {
        assert_eq!(
            ls_xml(&dir.join("hback").join(n)),
            ls_xml(&c.join(n)),
            "{n} from hwloc's diffs"
        );
    }
}

#[test]
fn store_gives_any_node_whatever_the_input_order() {
    let tmp = common::TempDir::new("store-access");
    let dir = &tmp.0;
    let c = corpus(dir, "input");
    let files = names(&c);
    let paths: Vec<String> = files
        .iter()
        .map(|n| c.join(n).to_string_lossy().into_owned())
        .collect();
    let mut args = vec!["store", "pack", "-o", "a.wstore"];
    args.extend(paths.iter().map(String::as_str));
    ok("store pack", &common::run_wloc_in(&args, dir));
    let mut args = vec!["store", "pack", "-o", "b.wstore"];
    args.extend(paths.iter().rev().map(String::as_str));
    ok("store pack reversed", &common::run_wloc_in(&args, dir));
    assert_eq!(
        std::fs::read(dir.join("a.wstore")).unwrap(),
        std::fs::read(dir.join("b.wstore")).unwrap(),
        "the store does not depend on the order of its inputs"
    );
    let o = common::run_wloc_in(&["store", "list", "a.wstore"], dir);
    ok("store list", &o);
    let listed: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect();
    assert_eq!(listed, files);
    for n in ["visu05", "node009.xml", "avakas-frontend1.xml"] {
        let o = common::run_wloc_in(&["store", "get", "a.wstore", n], dir);
        ok("store get", &o);
        let file = if n.ends_with(".xml") {
            n.to_string()
        } else {
            format!("{n}.xml")
        };
        std::fs::write(dir.join("got.xml"), &o.stdout).unwrap();
        assert_eq!(ls_xml(&dir.join("got.xml")), ls_xml(&c.join(&file)), "{n}");
    }
    fails(
        "a missing node",
        &common::run_wloc_in(&["store", "get", "a.wstore", "node999"], dir),
        "no topology named 'node999'",
    );
}

#[test]
fn corrupt_stores_give_clear_errors() {
    let tmp = common::TempDir::new("store-corrupt");
    let dir = &tmp.0;
    let c = corpus(dir, "input");
    ok(
        "store pack",
        &common::run_wloc_in(
            &["store", "pack", "-o", "s.wstore", &c.to_string_lossy()],
            dir,
        ),
    );
    let good = std::fs::read(dir.join("s.wstore")).unwrap();
    std::fs::write(
        dir.join("text.wstore"),
        "hello, world\n and more text past 32 bytes",
    )
    .unwrap();
    fails(
        "not a store",
        &common::run_wloc_in(&["store", "list", "text.wstore"], dir),
        "not a wloc topology store",
    );
    std::fs::write(dir.join("short.wstore"), &good[..good.len() / 2]).unwrap();
    fails(
        "a truncated store",
        &common::run_wloc_in(&["store", "list", "short.wstore"], dir),
        "corrupt topology store",
    );
    // A damaged byte in the body: the node it is in fails with a clear
    // error, never a wrong document or a panic.
    let mut bad = good.clone();
    bad[good.len() / 3] ^= 0x20;
    std::fs::write(dir.join("bad.wstore"), &bad).unwrap();
    let o = common::run_wloc_in(&["uncompress-dir", "bad.wstore", "out"], dir);
    fails("a damaged store", &o, "corrupt topology store");
    fails(
        "a missing store",
        &common::run_wloc_in(&["store", "list", "nothere.wstore"], dir),
        "cannot open 'nothere.wstore'",
    );
    // A store of the first format version is refused, saying what to do.
    let mut v1 = good.clone();
    v1[8..12].copy_from_slice(&1u32.to_le_bytes());
    std::fs::write(dir.join("v1.wstore"), &v1).unwrap();
    fails(
        "a version 1 store",
        &common::run_wloc_in(&["store", "get", "v1.wstore", "node002"], dir),
        "version 1 of the wloc topology store format is no longer read",
    );
}

#[test]
fn store_pack_skips_files_that_are_not_topologies() {
    let tmp = common::TempDir::new("store-skip");
    let dir = &tmp.0;
    let c = corpus(dir, "input");
    let mixed = dir.join("mixed");
    std::fs::create_dir(&mixed).unwrap();
    for n in ["node002.xml", "visu05.xml"] {
        std::fs::copy(c.join(n), mixed.join(n)).unwrap();
    }
    std::fs::write(mixed.join("README"), "topologies of the cluster\n").unwrap();
    std::fs::write(
        mixed.join("broken.xml"),
        "<?xml version=\"1.0\"?>\n<topology>\n",
    )
    .unwrap();
    let o = common::run_wloc_in(&["store", "pack", "-o", "m.wstore", "mixed"], dir);
    ok("store pack with files that are not topologies", &o);
    let err = String::from_utf8_lossy(&o.stderr);
    for bad in ["README", "broken.xml"] {
        assert!(
            err.contains(&format!("wloc: warning: skipping 'mixed/{bad}'"))
                && err.contains("not a topology wloc can load"),
            "a warning names {bad}: {}",
            show(&o)
        );
    }
    assert!(err.contains("Skipped 2 files"), "{}", show(&o));
    let o = common::run_wloc_in(&["store", "list", "m.wstore"], dir);
    ok("store list", &o);
    let listed: Vec<&str> = std::str::from_utf8(&o.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    assert_eq!(listed, ["node002.xml", "visu05.xml"]);
    // A file named on the command line must load; so must one file.
    fails(
        "store pack of a named file that is not a topology",
        &common::run_wloc_in(&["store", "pack", "-o", "x.wstore", "mixed/README"], dir),
        "README",
    );
    let junk = dir.join("junk");
    std::fs::create_dir(&junk).unwrap();
    std::fs::write(junk.join("a.txt"), "a").unwrap();
    fails(
        "store pack of no topology",
        &common::run_wloc_in(&["store", "pack", "-o", "j.wstore", "junk"], dir),
        "none of the 1 files is a topology",
    );
}
