//! Files wloc reads that anyone may have crafted: topology stores and
//! topology images made as an attacker would (field by field, or written
//! by wloc and then patched, checksums recomputed), which once made wloc
//! expand a few kilobytes into gigabytes. Each command must end quickly,
//! in little memory, with a short error naming the problem.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::common;

/// How a bounded run of `wloc` ended.
struct Run {
    code: i32,
    stderr: String,
    /// Peak resident memory of the process, in KiB.
    peak_kib: i64,
    elapsed: Duration,
}

/// Runs `wloc ARGS` under a 2 GiB address-space limit (a regression then
/// fails here instead of taking the machine's memory; these commands
/// create no wasmtime engine, whose reservations a limit would break),
/// killed after 20 s, and measures its peak resident memory from the
/// kernel's accounting of the process itself (`wait4`).
fn run_bounded(args: &[&std::ffi::OsStr], dir: &Path) -> Run {
    let out = dir.join("stdout");
    let err = dir.join("stderr");
    let (mut cmd, measure) = common::measured("sh");
    let child = cmd
        .arg("-c")
        .arg("ulimit -v 2097152 && exec \"$0\" \"$@\"")
        .arg(common::wloc())
        .args(args)
        .env("LC_ALL", "C")
        // Stored documents are written back as stored (version 3), not
        // loaded and converted: these tests look at the store's bytes.
        .env("WLOC_XML_VERSION", "3")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("sh runs");
    let common::Ended {
        code,
        peak_kib,
        elapsed,
    } = common::wait_measured(child, measure, Duration::from_secs(20));
    Run {
        code,
        stderr: std::fs::read_to_string(err).unwrap_or_default(),
        peak_kib,
        elapsed,
    }
}

/// Checks that a run was refused as `wloc` refuses bad input (exit 1,
/// one short message containing `what`), in little time and memory.
fn assert_refused(what_ran: &str, r: &Run, what: &str) {
    assert_eq!(
        r.code, 1,
        "{what_ran}: exit {} (peak {} KiB, {:?}): {}",
        r.code, r.peak_kib, r.elapsed, r.stderr
    );
    assert!(r.stderr.starts_with("wloc: "), "{what_ran}: {}", r.stderr);
    assert!(r.stderr.contains(what), "{what_ran}: {}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{what_ran}: {}", r.stderr);
    assert!(
        r.stderr.len() < 1000,
        "{what_ran}: a message of {} bytes",
        r.stderr.len()
    );
    // Before the fixes these took gigabytes and aborted, or tens of
    // seconds; now well under a second and the process's own floor
    // (tens of MB). The bounds leave room for a loaded machine.
    assert!(
        r.peak_kib < 128 * 1024,
        "{what_ran}: peak {} KiB",
        r.peak_kib
    );
    assert!(
        r.elapsed < Duration::from_secs(5),
        "{what_ran}: {:?}",
        r.elapsed
    );
}

// ------------------------------------------------------------ stores

/// CRC-32 (IEEE), as the store's checksums.
fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xedb8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

fn leb(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// A zstd frame holding `data` uncompressed (raw blocks) and declaring
/// its size, as zstd's format allows.
fn zstd_raw(data: &[u8]) -> Vec<u8> {
    // Magic, then one segment with an 8-byte content size.
    let mut f = vec![0x28, 0xb5, 0x2f, 0xfd, 0xe0];
    f.extend_from_slice(&(data.len() as u64).to_le_bytes());
    let chunks: Vec<&[u8]> = if data.is_empty() {
        vec![&[]]
    } else {
        data.chunks(128 * 1024).collect()
    };
    for (i, c) in chunks.iter().enumerate() {
        // Last-block flag, type 0 (raw), size.
        let h = u32::from(i + 1 == chunks.len()) | ((c.len() as u32) << 3);
        f.extend_from_slice(&h.to_le_bytes()[..3]);
        f.extend_from_slice(c);
    }
    f
}

/// A store written field by field following its documented layout
/// (`host/store/src/store.rs`): one reference whose squeezed lines are
/// `reference` and whose document is `doc_size` bytes, it says; one block
/// of `count` nodes, the first named `first`, holding `block` (the node
/// table, then the diffs).
fn store(reference: &[u8], doc_size: u64, first: &str, count: u64, block: &[u8]) -> Vec<u8> {
    let mut file = vec![0u8; 32];
    let mut index = Vec::new();
    // No dictionary.
    for v in [32, 0, 0] {
        leb(&mut index, v);
    }
    let g = zstd_raw(reference);
    let raw = reference.len() as u64;
    for v in [
        1,
        file.len() as u64,
        g.len() as u64,
        raw,
        crc32(reference).into(),
    ] {
        leb(&mut index, v);
    }
    file.extend_from_slice(&g);
    // One reference: group 0, offset 0, its size, its document's size.
    for v in [1, 0, 0, raw, doc_size] {
        leb(&mut index, v);
    }
    let b = zstd_raw(block);
    leb(&mut index, 1);
    leb(&mut index, first.len() as u64);
    index.extend_from_slice(first.as_bytes());
    let raw = block.len() as u64;
    for v in [
        count,
        0,
        file.len() as u64,
        b.len() as u64,
        raw,
        crc32(block).into(),
    ] {
        leb(&mut index, v);
    }
    file.extend_from_slice(&b);
    let f = zstd_raw(&index);
    let at = file.len() as u64;
    file.extend_from_slice(&f);
    file[0..8].copy_from_slice(b"WLOCSTOR");
    file[8..12].copy_from_slice(&2u32.to_le_bytes());
    file[12..16].copy_from_slice(&(index.len() as u32).to_le_bytes());
    file[16..24].copy_from_slice(&at.to_le_bytes());
    file[24..28].copy_from_slice(&(f.len() as u32).to_le_bytes());
    file[28..32].copy_from_slice(&crc32(&f).to_le_bytes());
    file
}

/// A block table entry: `shared` bytes of the previous name, then
/// `rest`; reference 0; an empty diff (1 byte); the reference's size.
fn entry(t: &mut Vec<u8>, shared: u64, rest: &[u8]) {
    leb(t, shared);
    leb(t, rest.len() as u64);
    t.extend_from_slice(rest);
    for v in [0, 1, 0] {
        leb(t, v);
    }
}

/// Runs the three commands that read a store's documents or names.
fn store_commands(file: &Path, name: &str, dir: &Path) -> [(String, Run); 3] {
    let out = dir.join("out");
    [
        (
            "store get".into(),
            run_bounded(
                &[
                    "store".as_ref(),
                    "get".as_ref(),
                    file.as_os_str(),
                    name.as_ref(),
                ],
                dir,
            ),
        ),
        (
            "uncompress-dir".into(),
            run_bounded(
                &["uncompress-dir".as_ref(), file.as_os_str(), out.as_os_str()],
                dir,
            ),
        ),
        (
            "store list".into(),
            run_bounded(&["store".as_ref(), "list".as_ref(), file.as_os_str()], dir),
        ),
    ]
}

#[test]
fn a_store_whose_markers_double_the_text_is_refused_at_once() {
    let tmp = common::TempDir::new("hostile-store-double");
    let d = tmp.0.as_path();
    // In a squeezed line, each 0x02 once repeated everything from the
    // last ` cpuset="` on, earlier copies included: 40 of them are 2^40
    // times the line, from a file of about 150 bytes.
    let mut line = b"\x80\x06Machine\" cpuset=\"0x1\"".to_vec();
    line.extend(std::iter::repeat_n(0x02u8, 40));
    let mut table = Vec::new();
    entry(&mut table, 0, b"n");
    table.push(0);
    // The document's size as the doubling would make it: refused before
    // decoding; then a modest one: refused by the decoder itself.
    for (size, what) in [
        (1u64 << 39, "says its document holds 549755813888 bytes"),
        (10_000, "a document does not decode (node 'n')"),
    ] {
        let file = d.join(format!("double-{size}.wlocstore"));
        let bytes = store(&line, size, "n", 1, &table);
        assert!(bytes.len() < 250, "{} bytes", bytes.len());
        std::fs::write(&file, bytes).unwrap();
        let [get, uncompress, list] = store_commands(&file, "n", d);
        assert_refused(&get.0, &get.1, what);
        assert_refused(&uncompress.0, &uncompress.1, what);
        // Listing decodes no document: it lists the one node.
        assert_eq!(list.1.code, 0, "{}", list.1.stderr);
        assert!(list.1.peak_kib < 128 * 1024);
    }
}

#[test]
fn a_store_whose_names_grow_by_one_byte_is_refused_at_once() {
    let tmp = common::TempDir::new("hostile-store-names");
    let d = tmp.0.as_path();
    // Each node name is the previous one and one byte more: 15,000 names
    // are 112 MB of text from a block of about 120 KB, and once made the
    // block table (and a get, which read it) quadratic.
    let count = 15_000u64;
    let mut table = Vec::new();
    for k in 0..count {
        entry(&mut table, k, b"a");
    }
    table.extend(std::iter::repeat_n(0u8, count as usize));
    let squeezed = b"\x80<topology/>";
    let file = d.join("names.wlocstore");
    let bytes = store(squeezed, 11, "a", count, &table);
    assert!(bytes.len() < 130_000, "{} bytes", bytes.len());
    std::fs::write(&file, bytes).unwrap();
    for (what, run) in store_commands(&file, "aaa", d) {
        assert_refused(&what, &run, "a node name is longer than 1024 bytes");
    }
}

#[test]
fn a_store_of_crafted_names_within_the_limit_still_reads() {
    // The same shape up to the longest name allowed: a valid store, read
    // whole, in little memory.
    let tmp = common::TempDir::new("hostile-store-names-ok");
    let d = tmp.0.as_path();
    let count = 1024u64;
    let mut table = Vec::new();
    for k in 0..count {
        entry(&mut table, k, b"a");
    }
    table.extend(std::iter::repeat_n(0u8, count as usize));
    let file = d.join("names-ok.wlocstore");
    std::fs::write(&file, store(b"\x80<topology/>", 11, "a", count, &table)).unwrap();
    let a = "a".repeat(1024);
    let r = run_bounded(
        &[
            "store".as_ref(),
            "get".as_ref(),
            file.as_os_str(),
            a.as_ref(),
        ],
        d,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(d.join("stdout")).unwrap(),
        "<topology/>"
    );
    let r = run_bounded(&["store".as_ref(), "list".as_ref(), file.as_os_str()], d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let listed = std::fs::read_to_string(d.join("stdout")).unwrap();
    assert_eq!(listed.lines().count(), 1024);
    assert!(r.peak_kib < 128 * 1024, "peak {} KiB", r.peak_kib);
}

// ------------------------------------------------------------ images

/// Bytes of `v` as u32 little-endian words.
fn u32s(v: impl IntoIterator<Item = u32>) -> Vec<u8> {
    v.into_iter().flat_map(u32::to_le_bytes).collect()
}

#[test]
fn an_image_whose_sets_skip_many_zero_words_is_refused_before_building() {
    let tmp = common::TempDir::new("hostile-image");
    let d = tmp.0.as_path();
    // A real image of 4,096 PUs, written by wloc.
    let img = d.join("real.wlocimg");
    let o = common::run_wloc([
        "ls".as_ref(),
        "-i".as_ref(),
        "pack:16 core:16 pu:16".as_ref(),
        "--of".as_ref(),
        "image".as_ref(),
        img.as_os_str(),
    ]);
    common::assert_success("writing an image", &o);
    let mut bytes = std::fs::read(&img).unwrap();
    // Its set table stores, per set, the number of zero words before the
    // stored ones (the sets of PUs 64 to 4,095 skip 1 to 63 words, in
    // PU order): found as that run of u32s.
    let skips = u32s((64..4096u32).map(|pu| pu / 64));
    let at: Vec<usize> = (0..bytes.len().saturating_sub(skips.len()))
        .step_by(4)
        .filter(|&i| bytes[i..i + skips.len()] == skips[..])
        .collect();
    assert_eq!(at.len(), 1, "the PU sets' skip counts are not found once");
    // Each PU set now skips 16,383 zero words (the most a set may have,
    // with its one stored word): 128 KB once built, for each PU's cpuset
    // and complete cpuset, about 1 GB in all from 200 KB.
    bytes[at[0]..at[0] + skips.len()].copy_from_slice(&u32s((64..4096).map(|_| 16_383)));
    // Anyone can recompute the checksum.
    let sum = twox_hash::XxHash3_64::oneshot(&bytes[wloc::image::HEADER_LEN..]);
    bytes[24..32].copy_from_slice(&sum.to_le_bytes());
    assert!(bytes.len() < 400_000, "{} bytes", bytes.len());
    let bad = d.join("hostile.wlocimg");
    std::fs::write(&bad, &bytes).unwrap();
    // Adopted, it answers from the image (one set at a time)...
    let a = wloc::image::adopt(&bad).unwrap();
    let pu = a.objs_by_type(wloc::model::ObjType::PU)[100];
    assert_eq!(pu.cpuset().unwrap().first(), Some(16_383 * 64 + 36));
    // ...and every command that builds its topology refuses it first.
    for (what, args) in [
        ("ls", vec!["ls".as_ref(), "-i".as_ref(), bad.as_os_str()]),
        (
            "ls --if image --of xml",
            vec![
                "ls".as_ref(),
                "--if".as_ref(),
                "image".as_ref(),
                "-i".as_ref(),
                bad.as_os_str(),
                "--of".as_ref(),
                "xml".as_ref(),
            ],
        ),
        (
            "calc",
            vec![
                "calc".as_ref(),
                "-i".as_ref(),
                bad.as_os_str(),
                "pu:0".as_ref(),
            ],
        ),
    ] {
        let r = run_bounded(&args, d);
        assert_refused(
            what,
            &r,
            "invalid topology image: its topology would take about",
        );
    }
    // The real image still reads.
    let r = run_bounded(&["ls".as_ref(), "-i".as_ref(), img.as_os_str()], d);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// An image written from a tree hwloc's checker refuses (as an attacker
/// gets by patching a real image and recomputing its checksum): each is
/// refused by every command that builds the topology, naming the broken
/// rule, where it once gave a tree `lstopo` aborts on.
#[test]
fn an_image_of_a_tree_hwloc_refuses_is_refused() {
    use wloc::model::{ObjAttr, ObjType, Topology};
    let tmp = common::TempDir::new("hostile-image-tree");
    let d = tmp.0.as_path();
    let machine = || {
        wloc::model::synthetic::parse("pack:2 l2:2 core:1 pu:2")
            .unwrap()
            .build(Topology::new())
            .unwrap()
    };
    type Change = fn(&mut Topology);
    let cases: [(&str, Change, &str); 3] = [
        (
            "a package whose cpuset is not its children's",
            |t| {
                let p = t.objs_by_type(ObjType::Package)[0];
                let n = t.objs_by_type(ObjType::NUMANode)[0];
                for id in [p, n] {
                    t.obj_mut(id).cpuset.as_mut().unwrap().unset(3);
                }
            },
            "not the union of its children's",
        ),
        (
            "a NUMA node whose complete nodeset holds two nodes",
            |t| {
                let n = t.objs_by_type(ObjType::NUMANode)[0];
                t.obj_mut(n).complete_nodeset.as_mut().unwrap().set(1);
                t.obj_mut(t.root())
                    .complete_nodeset
                    .as_mut()
                    .unwrap()
                    .set(1);
            },
            "node sets other than its own index",
        ),
        (
            "an L2 cache of depth 200",
            |t| {
                let c = t.objs_by_type(ObjType::L2Cache)[1];
                if let ObjAttr::Cache(a) = &mut t.obj_mut(c).attr {
                    a.depth = 200;
                }
            },
            "cache attributes of another level or kind",
        ),
    ];
    for (what, change, message) in cases {
        let mut t = machine();
        change(&mut t);
        let img = d.join("bad.wlocimg");
        std::fs::write(&img, wloc::image::to_bytes(&t)).unwrap();
        for args in [
            vec!["ls".as_ref(), "-i".as_ref(), img.as_os_str()],
            vec![
                "calc".as_ref(),
                "-i".as_ref(),
                img.as_os_str(),
                "pu:0".as_ref(),
            ],
        ] {
            let r = run_bounded(&args, d);
            assert_refused(what, &r, message);
        }
    }
    // Node sets are recomputed from where nodes are attached: a core
    // claiming a node attached elsewhere reads as the unchanged machine.
    let listing = |t: &Topology| {
        let img = d.join("listed.wlocimg");
        std::fs::write(&img, wloc::image::to_bytes(t)).unwrap();
        let o = common::run_wloc(["ls".as_ref(), "-v".as_ref(), "-i".as_ref(), img.as_os_str()]);
        common::assert_success("ls of an image", &o);
        String::from_utf8(o.stdout).unwrap()
    };
    let mut t = machine();
    let c = t.objs_by_type(ObjType::Core)[2];
    let mut other = t.obj(c).nodeset.clone().unwrap();
    other.set(7);
    t.obj_mut(c).nodeset = Some(other.clone());
    t.obj_mut(c).complete_nodeset = Some(other);
    assert_eq!(listing(&t), listing(&machine()));
}
