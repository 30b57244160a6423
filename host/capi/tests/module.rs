//! The discovery module (`libwloc_discover.so`): the library carries no
//! WebAssembly engine, maps the module only when a load discovers, finds
//! it only beside its own file, and refuses one it cannot trust, one of
//! another build, and a reply that is not a sound image.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use wloc_input::discover::{BUILD_ID, MODULE_FILE};

/// A C program that loads the topology its environment names and prints
/// the number of PUs, or the failure and `errno`, then whether the module
/// is mapped in the process.
const PROBE: &str = r#"
#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <string.h>
int main(void) {
  hwloc_topology_t t;
  hwloc_topology_init(&t);
  if (hwloc_topology_load(t))
    printf("load failed errno %d\n", errno);
  else
    printf("pus %d\n", hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU));
  FILE *f = fopen("/proc/self/maps", "r");
  char line[4096];
  int mapped = 0;
  while (f && fgets(line, sizeof line, f))
    if (strstr(line, "libwloc_discover"))
      mapped = 1;
  printf("module mapped %d\n", mapped);
  hwloc_topology_destroy(t);
  return 0;
}
"#;

/// Compiles the probe against hwloc's headers into `dir`.
fn probe(dir: &Path) -> PathBuf {
    let src = dir.join("probe.c");
    std::fs::write(&src, PROBE).unwrap();
    let exe = dir.join("probe");
    support::compile(
        Command::new("gcc")
            .arg("-o")
            .arg(&exe)
            .arg(&src)
            .arg("-lhwloc"),
    );
    exe
}

fn run(exe: &Path, lib: &Path, env: &[(&str, &str)]) -> String {
    let out: Output = Command::new(exe)
        .env_clear()
        .env("LD_LIBRARY_PATH", lib)
        .env("WLOC_CAPI_VERBOSE", "1")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// An XML file and an image of a small machine, written by wloc.
fn inputs(dir: &Path) -> (PathBuf, PathBuf) {
    let t = wloc_core::synthetic::parse("pack:2 core:2 pu:2")
        .unwrap()
        .build(wloc_core::Topology::new())
        .unwrap();
    let xml = dir.join("t.xml");
    std::fs::write(&xml, wloc_xml::export_hwloc2(&t)).unwrap();
    let img = dir.join("t.img");
    wloc_image::write(&t, &img).unwrap();
    (xml, img)
}

#[test]
fn the_library_carries_no_webassembly_engine() {
    let lib = std::fs::read(support::built_library()).unwrap();
    // Any code of these crates would bring its symbols and their
    // codegen units' names (wasmparser's names are there: wloc-trust links
    // it to read manifests, and the library uses none of its code).
    for word in [&b"wasmtime"[..], b"cranelift"] {
        assert!(
            !lib.windows(word.len()).any(|w| w == word),
            "libhwloc.so holds {}",
            String::from_utf8_lossy(word)
        );
    }
    // It was 33 MB with wasmtime linked in.
    assert!(lib.len() < 8 << 20, "libhwloc.so is {} bytes", lib.len());
}

#[test]
fn only_discovery_maps_the_module() {
    support::require_c_toolchain();
    let lib = support::library_dir("module-maps");
    let exe = probe(&lib);
    let (xml, img) = inputs(&lib);
    for (name, env) in [
        ("XML", ("HWLOC_XMLFILE", xml.to_str().unwrap())),
        ("synthetic", ("HWLOC_SYNTHETIC", "pack:2 pu:3")),
        ("image", ("WLOC_IMAGE", img.to_str().unwrap())),
    ] {
        let out = run(&exe, &lib, &[env]);
        assert!(
            out.contains("pus ") && !out.contains("failed"),
            "{name}: {out}"
        );
        assert!(out.contains("module mapped 0"), "{name}: {out}");
    }
    // This machine: discovered in the module, found beside the library's
    // real file (the folder holds only a link to it).
    let out = run(&exe, &lib, &[]);
    assert!(
        out.contains("pus ") && out.contains("module mapped 1"),
        "{out}"
    );
}

/// A folder holding a copy of the library (so that its own folder is
/// this one) and, if given, `module` as the module.
fn copied_library(tag: &str, module: Option<&Path>) -> PathBuf {
    let dir = support::library_dir(&format!("module-{tag}"));
    let so = dir.join("libhwloc.so.15");
    std::fs::remove_file(&so).unwrap();
    std::fs::copy(support::built_library(), &so).unwrap();
    if let Some(m) = module {
        std::fs::copy(m, dir.join(MODULE_FILE)).unwrap();
    }
    dir
}

/// A stand-in module: `build_id` as its build id; its discovery entry
/// replies according to `reply` (C statements filling `r`), or aborts.
fn fake_module(dir: &Path, build_id: &str, reply: Option<&str>) -> PathBuf {
    let body = reply.unwrap_or("abort();");
    let src = format!(
        r#"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
struct reply {{ uint8_t *image; size_t image_len; uint8_t *message; size_t message_len; }};
static uint8_t junk[4096];
const char *wloc_discover_build_id(void) {{ return "{build_id}"; }}
int wloc_discover_v1(const uint8_t *q, size_t n, struct reply *r) {{
  (void)q; (void)n; memset(junk, 'x', sizeof junk);
  {body}
  return 0;
}}
void wloc_discover_free_v1(struct reply *r) {{ r->image = 0; r->message = 0; }}
"#
    );
    let c = dir.join("fake.c");
    std::fs::write(&c, src).unwrap();
    let so = dir.join("fake.so");
    support::compile(
        Command::new("gcc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(&so)
            .arg(&c),
    );
    so
}

#[test]
fn a_missing_module_fails_discovery_only() {
    support::require_c_toolchain();
    let dir = copied_library("missing", None);
    let exe = probe(&dir);
    let out = run(&exe, &dir, &[]);
    assert!(out.contains("load failed errno 22"), "{out}");
    assert!(
        out.contains("discovery module") && out.contains("is missing"),
        "{out}"
    );
    let (xml, _) = inputs(&dir);
    let out = run(&exe, &dir, &[("HWLOC_XMLFILE", xml.to_str().unwrap())]);
    assert!(out.contains("pus 8"), "{out}");
}

#[test]
fn modules_that_cannot_be_trusted_are_not_loaded() {
    support::require_c_toolchain();
    let tmp = support::library_dir("module-fakes");
    // Of another build: refused before its discovery entry runs (it
    // would abort the program).
    let other = fake_module(&tmp, "wloc-input 0.0.0 abi 1 sources 0", None);
    let dir = copied_library("other-build", Some(&other));
    let exe = probe(&dir);
    let out = run(&exe, &dir, &[]);
    assert!(out.contains("load failed errno 22"), "{out}");
    assert!(out.contains("is of another build"), "{out}");
    assert!(out.contains("module mapped 1"), "{out}");
    // Writable by others: never opened, let alone loaded.
    std::fs::set_permissions(
        dir.join(MODULE_FILE),
        std::fs::Permissions::from_mode(0o666),
    )
    .unwrap();
    let out = run(&exe, &dir, &[]);
    assert!(
        out.contains("is not trusted") && out.contains("writable by others"),
        "{out}"
    );
    assert!(out.contains("module mapped 0"), "{out}");
    // A link (to the real module): refused too, as any trusted file.
    std::fs::remove_file(dir.join(MODULE_FILE)).unwrap();
    let real = support::built_library().with_file_name(MODULE_FILE);
    std::os::unix::fs::symlink(&real, dir.join(MODULE_FILE)).unwrap();
    let out = run(&exe, &dir, &[]);
    assert!(out.contains("is a symbolic link"), "{out}");
}

#[test]
fn bad_replies_are_refused_not_trusted() {
    support::require_c_toolchain();
    let tmp = support::library_dir("module-replies");
    for (tag, reply, expect) in [
        (
            "junk",
            "r->image = junk; r->image_len = sizeof junk; r->message = 0; r->message_len = 0;",
            "returned a bad image",
        ),
        (
            "huge",
            "r->image = junk; r->image_len = (size_t)1 << 40; r->message = junk; r->message_len = sizeof junk;",
            "more than an image may have",
        ),
        (
            "none",
            "r->image = 0; r->image_len = 5; r->message = 0; r->message_len = 0;",
            "returned no topology",
        ),
    ] {
        let so = fake_module(&tmp, BUILD_ID, Some(reply));
        let dir = copied_library(tag, Some(&so));
        let exe = probe(&dir);
        let out = run(&exe, &dir, &[]);
        assert!(out.contains("load failed errno 22"), "{tag}: {out}");
        assert!(out.contains(expect), "{tag}: {out}");
    }
}
