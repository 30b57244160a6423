//! hwloc 1.x cluster archives (what hwloc 1.x's hwloc-compress-dir
//! writes: v1 XML references and v1 topology diffs, numbering depths as
//! hwloc 1.x did: NUMA nodes a normal level, -3 bridges, -4 PCI devices,
//! -5 OS devices) read by `wloc uncompress-dir`, `wloc patch` and `wloc
//! fabric`. The diffs are made here from the v1 node topologies of the
//! recorded cluster `tests/data/fabric/plafrim.txz`: nodes whose
//! documents differ only in info values and object names (InfiniBand
//! GUIDs, MAC addresses, host names...).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{self, TempDir};

fn ok(what: &str, o: &Output) -> String {
    assert!(
        o.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What wloc writes for a topology file.
fn ls_xml(file: &Path) -> String {
    let f = file.to_string_lossy();
    ok(
        &format!("wloc ls {f}"),
        &common::run_wloc_in(
            &["ls", "-i", &f, "--if", "xml", "--of", "xml"],
            Path::new("."),
        ),
    )
}

/// The value of attribute `name` in one line of XML.
fn attr<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let pat = format!(" {name}=\"");
    let at = line.find(&pat)? + pat.len();
    Some(&line[at..at + line[at..].find('"')?])
}

/// hwloc 1.x's (depth, logical index) of every object of a symmetric v1
/// document, in document order, by line: I/O objects at their special
/// depths, the others at their nesting depth (NUMA nodes included).
fn hunk(depth: i64, index: usize, attr: &str) -> String {
    format!("  <diff type=\"0\" obj_depth=\"{depth}\" obj_index=\"{index}\" {attr}/>\n")
}

/// An hwloc 1.x diff from `old` to `new` (v1 documents of the same
/// structure, line by line), or None when they differ in more than info
/// values and object names; with the special depths it touched.
fn v1_diff(refname: &str, old: &str, new: &str) -> Option<(String, Vec<i64>)> {
    let (a, b): (Vec<_>, Vec<_>) = (old.lines().collect(), new.lines().collect());
    if a.len() != b.len() {
        return None;
    }
    let mut stack: Vec<(i64, usize)> = Vec::new();
    let mut normal_open = 0i64;
    let mut open_kinds: Vec<bool> = Vec::new();
    let mut counts: BTreeMap<(String, i64), usize> = BTreeMap::new();
    let mut out = String::new();
    let mut touched = Vec::new();
    for (x, y) in a.iter().zip(&b) {
        let (tx, ty) = (x.trim(), y.trim());
        if tx.starts_with("<object ") {
            let ty_ = attr(tx, "type")?.to_string();
            let special = match ty_.as_str() {
                "Bridge" => Some(-3),
                "PCIDev" => Some(-4),
                "OSDev" => Some(-5),
                "Misc" => return None,
                _ => None,
            };
            let depth = special.unwrap_or(normal_open);
            let n = counts.entry((ty_, depth)).or_default();
            let at = (depth, *n);
            *n += 1;
            if tx != ty {
                // Only the name and the local memory may differ.
                let strip = |l: &str| {
                    let mut l = l.to_string();
                    for a in ["name", "local_memory"] {
                        if let Some(v) = attr(&l, a) {
                            l = l.replacen(&format!(" {a}=\"{v}\""), "", 1);
                        }
                    }
                    l
                };
                if strip(tx) != strip(ty) {
                    return None;
                }
                let (na, nb) = (attr(tx, "name"), attr(ty, "name"));
                if na != nb {
                    out.push_str(&hunk(
                        at.0,
                        at.1,
                        &format!(
                            "obj_attr_type=\"1\" obj_attr_oldvalue=\"{}\" obj_attr_newvalue=\"{}\"",
                            na?, nb?
                        ),
                    ));
                }
                let (ma, mb) = (attr(tx, "local_memory"), attr(ty, "local_memory"));
                if ma != mb {
                    out.push_str(&hunk(
                        at.0,
                        at.1,
                        &format!(
                            "obj_attr_type=\"0\" obj_attr_index=\"0\" obj_attr_oldvalue=\"{}\" obj_attr_newvalue=\"{}\"",
                            ma?, mb?
                        ),
                    ));
                }
                touched.push(at.0);
            }
            if !tx.ends_with("/>") {
                stack.push(at);
                open_kinds.push(special.is_none());
                if special.is_none() {
                    normal_open += 1;
                }
            }
            continue;
        }
        if tx == "</object>" {
            if ty != "</object>" {
                return None;
            }
            stack.pop();
            if open_kinds.pop()? {
                normal_open -= 1;
            }
            continue;
        }
        if tx == ty {
            continue;
        }
        if !(tx.starts_with("<info ") && ty.starts_with("<info ")) {
            return None;
        }
        let name = attr(tx, "name")?;
        if attr(ty, "name")? != name {
            return None;
        }
        let &(depth, index) = stack.last()?;
        out.push_str(&hunk(
            depth,
            index,
            &format!(
                "obj_attr_type=\"2\" obj_attr_name=\"{name}\" obj_attr_oldvalue=\"{}\" obj_attr_newvalue=\"{}\"",
                attr(tx, "value")?,
                attr(ty, "value")?
            ),
        ));
        touched.push(depth);
    }
    let doc = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topologydiff SYSTEM \"hwloc.dtd\">\n<topologydiff refname=\"{refname}\">\n{out}</topologydiff>\n"
    );
    Some((doc, touched))
}

/// The plafrim cluster unpacked, and its v1 archive: (tmp, cluster,
/// archive folder, nodes given as diffs).
fn archive() -> (TempDir, PathBuf, PathBuf, Vec<String>) {
    let tmp = TempDir::new("xml-v1-diff");
    common::unpack_fabric("plafrim.txz", &tmp.0);
    let cluster = tmp.0.join("plafrim");
    let hw = cluster.join("hwloc");
    let mut nodes: Vec<String> = std::fs::read_dir(&hw)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".xml").map(str::to_string))
        .collect();
    nodes.sort();
    let read = |n: &str| std::fs::read_to_string(hw.join(format!("{n}.xml"))).unwrap();
    let arch = tmp.0.join("v1c");
    std::fs::create_dir(&arch).unwrap();
    let mut diffed = Vec::new();
    let mut refs = Vec::new();
    let mut depths = Vec::new();
    for n in &nodes {
        let text = read(n);
        let made = refs.iter().find_map(|r: &String| {
            v1_diff(&format!("{r}.xml"), &read(r), &text).filter(|(_, t)| !t.is_empty())
        });
        match made {
            Some((doc, touched)) => {
                std::fs::write(arch.join(format!("{n}.diff.xml")), doc).unwrap();
                depths.extend(touched);
                diffed.push(n.clone());
            }
            None => {
                std::fs::write(arch.join(format!("{n}.xml")), &text).unwrap();
                refs.push(n.clone());
            }
        }
    }
    // The archive has diffs touching OS devices (hwloc 1.x depth -5) and
    // the root (depth 0).
    assert!(diffed.len() >= 10, "only {} nodes diffed", diffed.len());
    assert!(depths.contains(&-5), "no diff touches an OS device");
    assert!(depths.contains(&0), "no diff touches the root");
    (tmp, cluster, arch, diffed)
}

#[test]
fn uncompress_dir_and_patch_read_hwloc_1_archives() {
    let (tmp, cluster, arch, diffed) = archive();
    let o = common::run_wloc_in(&["uncompress-dir", "v1c", "back"], &tmp.0);
    ok("uncompress-dir", &o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("Failed"), "{err}");
    for n in &diffed {
        let want = ls_xml(&cluster.join("hwloc").join(format!("{n}.xml")));
        assert_eq!(
            ls_xml(&tmp.0.join("back").join(format!("{n}.xml"))),
            want,
            "{n} from its v1 diff"
        );
        // wloc patch, with the refname the diff names.
        let d = arch.join(format!("{n}.diff.xml"));
        let o = common::run_wloc_in(
            &["patch", "refname", &d.to_string_lossy(), "patched.xml"],
            &arch,
        );
        ok(&format!("patch {n}"), &o);
        assert_eq!(ls_xml(&arch.join("patched.xml")), want, "{n} patched");
    }
}

#[test]
fn fabric_reads_a_folder_of_hwloc_1_diffs() {
    let (tmp, cluster, arch, diffed) = archive();
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let want = ok(
        "fabric summary",
        &common::run_wloc_in(&["fabric", "summary", &s(&cluster)], &tmp.0),
    );
    let want_local = ok(
        "fabric local",
        &common::run_wloc_in(
            &["fabric", "local", &s(&cluster), &diffed[0], &diffed[1]],
            &tmp.0,
        ),
    );
    // The cluster with its hwloc/ folder compressed.
    let hw = cluster.join("hwloc");
    std::fs::remove_dir_all(&hw).unwrap();
    std::fs::rename(&arch, &hw).unwrap();
    assert_eq!(
        ok(
            "fabric summary of diffs",
            &common::run_wloc_in(&["fabric", "summary", &s(&cluster)], &tmp.0)
        ),
        want
    );
    assert_eq!(
        ok(
            "fabric local of a diffed host",
            &common::run_wloc_in(
                &["fabric", "local", &s(&cluster), &diffed[0], &diffed[1]],
                &tmp.0
            )
        ),
        want_local
    );
}

#[test]
fn a_v1_diff_naming_no_object_is_refused_naming_it() {
    let (_tmp, _cluster, arch, diffed) = archive();
    let d = std::fs::read_to_string(arch.join(format!("{}.diff.xml", diffed[0]))).unwrap();
    let at = d.find("<diff ").unwrap();
    for (depth, index, want) in [
        ("-5", "999", "hwloc 1.x depth -5 (OS device level"),
        ("-4", "999", "hwloc 1.x depth -4 (PCI device level"),
        ("42", "0", "no hwloc 1.x depth 42"),
        ("1", "999", "hwloc 1.x depth 1 index 999"),
    ] {
        let bad = format!(
            "{}<diff type=\"0\" obj_depth=\"{depth}\" obj_index=\"{index}\" obj_attr_type=\"1\" obj_attr_oldvalue=\"a\" obj_attr_newvalue=\"b\"/>\n  {}",
            &d[..at],
            &d[at..]
        );
        std::fs::write(arch.join("bad.diff.xml"), bad).unwrap();
        let o = common::run_wloc_in(&["patch", "refname", "bad.diff.xml", "out.xml"], &arch);
        assert!(!o.status.success(), "depth {depth} index {index} applied");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "depth {depth} index {index}: {err}");
        assert!(err.contains("change #1"), "{err}");
        assert!(!arch.join("out.xml").exists());
    }
}

/// `text` with the `nth` (from the end) line holding `needle` passed
/// through `edit`.
fn edit_line(text: &str, needle: &str, nth: usize, edit: impl Fn(&str) -> String) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| i)
        .rev()
        .nth(nth)
        .unwrap_or_else(|| panic!("no {needle} #{nth} from the end"));
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        if i == at {
            out.push_str(&edit(l));
        } else {
            out.push_str(l);
        }
        out.push('\n');
    }
    out
}

#[test]
fn v1_diffs_reach_numa_nodes_bridges_and_pci_devices() {
    let tmp = TempDir::new("xml-v1-diff-places");
    common::unpack_fabric("plafrim.txz", &tmp.0);
    let hw = tmp.0.join("plafrim/hwloc");
    // manumanu: 20 NUMA nodes, under packages; no I/O.
    for (node, io) in [("fourmi004", true), ("manumanu", false)] {
        let text = std::fs::read_to_string(hw.join(format!("{node}.xml"))).unwrap();
        // A NUMA node's memory (a positive hwloc 1.x depth that counts the
        // NUMA level), a PCI device's and a bridge's name (-4, -3).
        let new = edit_line(&text, "type=\"NUMANode\"", 0, |l| {
            let v = attr(l, "local_memory").unwrap();
            l.replace(
                &format!("local_memory=\"{v}\""),
                &format!("local_memory=\"{}\"", v.parse::<u64>().unwrap() - 4096),
            )
        });
        let new = if io {
            let new = edit_line(&new, "type=\"PCIDev\"", 1, |l| {
                l.replacen("name=\"\"", "name=\"HCA\"", 1)
            });
            edit_line(&new, "type=\"Bridge\"", 2, |l| {
                l.replacen("name=\"\"", "name=\"bridge\"", 1)
            })
        } else {
            new
        };
        let (doc, touched) = v1_diff(&format!("{node}.xml"), &text, &new).expect("a v1 diff");
        assert_eq!(touched.contains(&-4) && touched.contains(&-3), io, "{doc}");
        assert!(touched.iter().any(|d| *d > 0), "{doc}");
        std::fs::write(tmp.0.join(format!("{node}-new.xml")), &new).unwrap();
        std::fs::write(tmp.0.join(format!("{node}.diff.xml")), &doc).unwrap();
        let o = common::run_wloc_in(
            &[
                "patch",
                &hw.join(format!("{node}.xml")).to_string_lossy(),
                &format!("{node}.diff.xml"),
                "out.xml",
            ],
            &tmp.0,
        );
        ok(&format!("patch {node}"), &o);
        assert_eq!(
            ls_xml(&tmp.0.join("out.xml")),
            ls_xml(&tmp.0.join(format!("{node}-new.xml"))),
            "{node}: {doc}"
        );
    }
}
