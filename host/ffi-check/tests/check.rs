//! The check program on the C library as it is (it passes, against
//! hwloc 2.14's headers, the ones `host/capi/tests/layout.rs` compares
//! offsets with) and on a small source that breaks both rules (it fails,
//! naming the function and the structure).

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn check(args: &[&Path]) -> (bool, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_wloc-ffi-check"))
        .args(args)
        .output()
        .expect("the check program runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), text)
}

/// hwloc 2.14's public headers, from the release tarball the C library's
/// tests use, unpacked into `dir`.
fn hwloc_2_14_headers(dir: &Path) -> PathBuf {
    let tarball = workspace().join("tests/data/hwloc-2.14/hwloc-2.14.0.tar.xz");
    let o = Command::new("tar")
        .arg("xJf")
        .arg(&tarball)
        .arg("-C")
        .arg(dir)
        .args(["--wildcards", "hwloc-2.14.0/include/*"])
        .output()
        .expect("tar runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dir.join("hwloc-2.14.0/include")
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wloc-ffi-check-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn the_c_library_passes_against_hwloc_2_14s_headers() {
    let dir = temp_dir("pass");
    let headers = hwloc_2_14_headers(&dir);
    let src = workspace().join("host/capi/src");
    let (ok, text) = check(&[&src, &headers]);
    assert!(ok, "{text}");
    assert!(text.contains(", 0 problems"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unguarded_export_a_missing_field_and_a_module_circle_fail() {
    let dir = temp_dir("fail");
    let src = dir.join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(src.join("a.rs"), "use crate::b::two;\npub fn one() {}\n").unwrap();
    std::fs::write(src.join("b.rs"), "pub fn two() {\n    crate::a::one()\n}\n").unwrap();
    std::fs::write(
        dir.join("hwloc.h"),
        "struct hwloc_info_s {\n  char *name;\n  char *value;\n};\n",
    )
    .unwrap();
    std::fs::write(
        src.join("bad.rs"),
        r#"
/// `hwloc_topology_get_depth` without the prologue.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_get_depth(topology: hwloc_topology_t) -> c_int {
    unsafe { (*topology).depth }
}

/// `struct hwloc_info_s` without its value.
#[repr(C)]
pub struct hwloc_info_s {
    pub name: *mut c_char,
}
"#,
    )
    .unwrap();
    let (ok, text) = check(&[&src, &dir.join("hwloc.h")]);
    assert!(!ok, "{text}");
    assert!(
        text.contains("fn hwloc_topology_get_depth: exported without the entry guard"),
        "{text}"
    );
    assert!(
        text.contains("hwloc_info_s: fields [name] differ from the header's [name, value]"),
        "{text}"
    );
    assert!(
        text.contains("modules import each other in a circle: a -> b -> a"),
        "{text}"
    );
    assert!(text.contains(", 3 problems"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}
