//! Topology images: every conformance case written as an image and adopted
//! gives the same `ls --of xml` as its original; damaged images are
//! refused with the right message; many adopts in one process and across
//! processes (ASLR on) all succeed.

use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::Command;

use crate::common;

/// A `--tool` for the conformance runner: it runs the case as asked, then
/// writes the same input as an image and lists the image, and fails unless
/// both XML outputs are byte for byte the same.
fn round_trip_tool(dir: &Path) -> std::path::PathBuf {
    let script = dir.join("via-image.sh");
    let text = format!(
        r#"#!/bin/bash
# called as: ls -i INPUT --if KIND --of xml [case options]
set -u
W='{wloc}'
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
input="$3"; kind="$5"; shift 7
"$W" ls -i "$input" --if "$kind" --of xml "$@" > "$t/direct.xml" || exit $?
"$W" ls -i "$input" --if "$kind" --of image "$t/topo.img" "$@" || exit $?
"$W" ls -i "$t/topo.img" --of xml "$@" > "$t/image.xml" || exit $?
if ! cmp -s "$t/direct.xml" "$t/image.xml"; then
  echo "the image's XML differs from the original's:" >&2
  diff "$t/direct.xml" "$t/image.xml" | head -20 >&2
  exit 1
fi
cat "$t/image.xml"
"#,
        wloc = common::wloc().display()
    );
    std::fs::write(&script, text).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    script
}

#[test]
fn every_conformance_case_is_the_same_through_an_image() {
    let tmp = common::TempDir::new("image");
    let tool = round_trip_tool(tmp.0.as_path());
    let conf = common::conformance();
    let out = Command::new("python3")
        .arg(conf.join("run.py"))
        .arg("--tool")
        .arg(&tool)
        .args(["--level", "full"])
        .arg(conf.join("xml"))
        .arg(conf.join("linux"))
        .arg(conf.join("x86"))
        .output()
        .expect("python3 runs the conformance runner");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or("");
    let passed: usize = last
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(
        out.status.success() && last.ends_with(" 0 failed") && passed >= 80,
        "cases failed through an image:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn case_image(dir: &Path) -> std::path::PathBuf {
    let xml = common::conformance().join("xml/16amd64-4distances.xml");
    let img = dir.join("topo.img");
    if img.exists() {
        return img;
    }
    let o = common::run_wloc([
        "ls".as_ref(),
        "-i".as_ref(),
        xml.as_os_str(),
        "--of".as_ref(),
        "image".as_ref(),
        img.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    img
}

fn refused(img: &Path) -> String {
    let o = common::run_wloc([
        "calc".as_ref(),
        "-i".as_ref(),
        img.as_os_str(),
        "pu:0".as_ref(),
    ]);
    assert!(!o.status.success(), "a damaged image was accepted");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!err.contains("panicked"), "{err}");
    // WLOC_IMAGE reports the same.
    let o = Command::new(common::wloc())
        .args(["calc", "pu:0"])
        .env("WLOC_IMAGE", img)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err2 = String::from_utf8_lossy(&o.stderr);
    assert!(
        err2.contains(err.trim().rsplit(": ").next().unwrap()),
        "{err2} vs {err}"
    );
    err
}

fn damaged(dir: &Path, name: &str, change: impl FnOnce(&mut Vec<u8>)) -> std::path::PathBuf {
    let mut bytes = std::fs::read(case_image(dir)).unwrap();
    change(&mut bytes);
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn damaged_images_are_refused_with_what_is_wrong() {
    let tmp = common::TempDir::new("image");
    let d = tmp.0.as_path();
    let e = refused(&damaged(d, "trunc.img", |b| b.truncate(b.len() / 2)));
    assert!(e.contains("truncated topology image"), "{e}");
    let e = refused(&damaged(d, "short.img", |b| b.truncate(20)));
    assert!(e.contains("truncated topology image"), "{e}");
    let e = refused(&damaged(d, "flip.img", |b| {
        let i = b.len() - 100;
        b[i] ^= 0x40;
    }));
    assert!(e.contains("corrupted topology image: body checksum"), "{e}");
    let current = format!("this wloc reads version {}", wloc::image::FORMAT_VERSION);
    let e = refused(&damaged(d, "v9.img", |b| b[8] = 9));
    assert!(
        e.contains("format version 9") && e.contains(&current),
        "{e}"
    );
    // The previous layout (fixed-size records in depth-first order).
    let e = refused(&damaged(d, "v2.img", |b| b[8] = 2));
    assert!(
        e.contains("format version 2") && e.contains(&current),
        "{e}"
    );
    let e = refused(&damaged(d, "long.img", |b| b.extend_from_slice(&[0; 16])));
    assert!(e.contains("invalid topology image"), "{e}");
    // Forced as an image, another file is refused by its magic number.
    let xml = common::conformance().join("xml/16amd64-4distances.xml");
    let o = common::run_wloc([
        "calc".as_ref(),
        "-i".as_ref(),
        xml.as_os_str(),
        "--if".as_ref(),
        "image".as_ref(),
        "pu:0".as_ref(),
    ]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not a wloc topology image"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn ten_thousand_adopts_in_one_process() {
    let tmp = common::TempDir::new("image");
    let img = case_image(tmp.0.as_path());
    let first = wloc::image::adopt(&img).unwrap();
    let pus = first.objs_by_type(wloc::model::ObjType::PU).len();
    assert!(pus > 0);
    let topo = first.to_topology().unwrap();
    let fd = wloc::image::write_memfd(&topo).unwrap();
    let memfd = std::fs::File::from(fd);
    for i in 0..10_000 {
        let a = if i % 2 == 0 {
            wloc::image::adopt(&img).unwrap()
        } else {
            let a = wloc::image::adopt_file(&memfd).unwrap();
            assert!(a.is_mapped());
            a
        };
        assert_eq!(a.objs_by_type(wloc::model::ObjType::PU).len(), pus);
    }
    // Many views alive at once, at different addresses.
    let many: Vec<_> = (0..100)
        .map(|_| wloc::image::adopt_file(&memfd).unwrap())
        .collect();
    assert!(many.iter().all(|a| a.len() == first.len()));
}

#[test]
fn many_processes_adopt_one_image() {
    let aslr = std::fs::read_to_string("/proc/sys/kernel/randomize_va_space").unwrap_or_default();
    eprintln!("randomize_va_space = {}", aslr.trim());
    let tmp = common::TempDir::new("image");
    let img = case_image(tmp.0.as_path());
    let expected = common::run_wloc([
        "calc".as_ref(),
        "-i".as_ref(),
        img.as_os_str(),
        "core:3".as_ref(),
    ]);
    assert!(expected.status.success());
    // A sealed memfd the children inherit, named through /proc/self/fd.
    let topo = wloc::image::adopt(&img).unwrap().to_topology().unwrap();
    let memfd = wloc::image::write_memfd(&topo).unwrap();
    let via_fd = format!("/proc/self/fd/{}", memfd.as_raw_fd());
    let mut children = Vec::new();
    for i in 0..200 {
        let image = if i % 2 == 0 {
            img.display().to_string()
        } else {
            via_fd.clone()
        };
        children.push(
            Command::new(common::wloc())
                .args(["calc", "core:3"])
                .env("WLOC_IMAGE", image)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap(),
        );
    }
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(o.stdout, expected.stdout);
    }
    drop(memfd);
}
