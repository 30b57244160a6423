//! hwloc 1.x XML export through the C library
//! (`HWLOC_TOPOLOGY_EXPORT_XML_FLAG_V1`): Debian's unmodified lstopo
//! writes the same bytes with `--export-xml-flags 1` on this library as on
//! libhwloc, and the file and buffer exports agree, with hwloc's errors
//! and the application's userdata.

mod support;

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::ptr::null_mut;

use hwloc::export::*;
use hwloc::objects::*;
use hwloc::topology::*;
use hwloc::types::*;
use wloc_core::topology::TypeFilter;

const V1: std::os::raw::c_ulong = 1;

const SYNTHETIC: &[&str] = &[
    "pack:2 core:2 pu:2",
    "pack:2 [numa] core:4 pu:2",
    "pack:2 [numa] [numa] core:2 pu:2",
    "numa:2 pack:2 l3:1 l2:2 l1:1 core:1 pu:4",
    "pack:4 die:2 core:3 pu:1",
    "pack:2 [numa(memory=1GB)] group:2 [numa] core:2 pu:1",
];

/// The conformance documents in hwloc 2's form, written to `dir`.
fn xml_cases(dir: &Path) -> Vec<PathBuf> {
    let files = support::xml_files(&["conformance/xml", "conformance/linux", "conformance/x86"]);
    let mut out = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let mut keep = wloc_core::Topology::new();
        keep.set_all_types_filter(TypeFilter::KeepAll);
        keep.include_disallowed = true;
        let Ok(t) = wloc_xml::import_file(f, keep) else {
            continue;
        };
        let p = dir.join(format!(
            "{i:03}-{}",
            f.file_name().unwrap().to_string_lossy()
        ));
        std::fs::write(&p, wloc_xml::export_hwloc2(&t)).unwrap();
        out.push(p);
    }
    out
}

fn lstopo_v1(input: &str, lib: Option<&Path>, env: Option<(&str, &str)>) -> (Option<i32>, Vec<u8>) {
    let mut c = Command::new("lstopo-no-graphics");
    c.args([
        "--whole-io",
        "-i",
        input,
        "--of",
        "xml",
        "--export-xml-flags",
        "1",
        "-",
    ]);
    support::clear_topology_env(&mut c);
    support::use_library(&mut c, lib);
    if let Some((k, v)) = env {
        c.env(k, v);
    }
    let o = c.output().expect("lstopo runs");
    (o.status.code(), o.stdout)
}

#[test]
fn lstopo_writes_hwloc1_xml_as_on_libhwloc() {
    support::require(&[("/usr/bin/lstopo-no-graphics", "hwloc")]);
    let lib = support::library_dir("xml-v1");
    let inputs_dir = lib.join("inputs");
    std::fs::create_dir_all(&inputs_dir).unwrap();
    let mut inputs: Vec<String> = xml_cases(&inputs_dir)
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    inputs.extend(SYNTHETIC.iter().map(|s| s.to_string()));
    let (mut compared, mut differ) = (0, Vec::new());
    for input in &inputs {
        // HWLOC_XML_EXPORT_SUPPORT does not change version 1 documents.
        for env in [None, Some(("HWLOC_XML_EXPORT_SUPPORT", "0"))] {
            let theirs = lstopo_v1(input, None, env);
            assert_eq!(theirs.0, Some(0), "libhwloc cannot export {input}");
            let ours = lstopo_v1(input, Some(&lib), env);
            compared += 1;
            if ours != theirs {
                let (a, b) = (
                    String::from_utf8_lossy(&theirs.1),
                    String::from_utf8_lossy(&ours.1),
                );
                let line = a
                    .lines()
                    .zip(b.lines())
                    .position(|(x, y)| x != y)
                    .unwrap_or(0);
                differ.push(format!(
                    "{input} {env:?}: exit {:?}/{:?}, line {}:\n  libhwloc {:?}\n  wloc     {:?}",
                    theirs.0,
                    ours.0,
                    line + 1,
                    a.lines().nth(line).unwrap_or(""),
                    b.lines().nth(line).unwrap_or("")
                ));
            }
        }
    }
    eprintln!("{compared} exports compared, {} differ", differ.len());
    assert!(compared >= 2 * 50, "only {compared} exports compared");
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

fn errno() -> c_int {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// The application's export callback: one userdata of the root.
unsafe extern "C" fn export_cb(
    reserved: *mut c_void,
    topology: hwloc_topology_t,
    obj: hwloc_obj_t,
) {
    let name = CString::new("MyData").unwrap();
    // SAFETY: called by the library with its context, as hwloc calls it.
    let r = unsafe {
        hwloc_export_obj_userdata(
            reserved,
            topology,
            obj,
            name.as_ptr(),
            b"hello".as_ptr().cast(),
            5,
        )
    };
    assert_eq!(r, 0);
}

#[test]
fn v1_file_and_buffer_exports_agree() {
    let desc = CString::new("pack:2 [numa] [numa] core:2 pu:2").unwrap();
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("capi-v1-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("v1.xml");
    let cfile = CString::new(file.to_str().unwrap()).unwrap();
    let mut t = null_mut();
    let mut marker = 0u8;
    // SAFETY: the C API used as a C program would.
    unsafe {
        assert_eq!(hwloc_topology_init(&mut t), 0);
        assert_eq!(hwloc_topology_set_synthetic(t, desc.as_ptr()), 0);
        assert_eq!(hwloc_topology_load(t), 0);

        let mut buf: *mut c_char = null_mut();
        let mut len: c_int = 0;
        assert_eq!(
            hwloc_topology_export_xmlbuffer(t, &mut buf, &mut len, V1),
            0
        );
        let doc = CStr::from_ptr(buf).to_str().unwrap().to_string();
        assert_eq!(len as usize, doc.len() + 1);
        hwloc_free_xmlbuffer(t, buf);
        assert!(
            doc.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc.dtd\">\n<topology>\n"),
            "{doc}"
        );
        assert!(
            !doc.contains("gp_index") && !doc.contains("<support"),
            "{doc}"
        );
        // Two nodes per package: a Group holds each package's nodes.
        assert_eq!(doc.matches("type=\"Socket\"").count(), 2, "{doc}");
        assert_eq!(doc.matches("type=\"NUMANode\"").count(), 4, "{doc}");
        assert_eq!(doc.matches("type=\"Group\"").count(), 2, "{doc}");

        assert_eq!(hwloc_topology_export_xml(t, cfile.as_ptr(), V1), 0);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), doc);

        // Unknown flags: EINVAL, as hwloc.
        assert_eq!(hwloc_topology_export_xml(t, cfile.as_ptr(), 2), -1);
        assert_eq!(errno(), libc::EINVAL);
        assert_eq!(
            hwloc_topology_export_xmlbuffer(t, &mut buf, &mut len, 3),
            -1
        );
        assert_eq!(errno(), libc::EINVAL);

        // The application's userdata goes into version 1 documents too.
        let root = hwloc_get_obj_by_depth(t, 0, 0);
        (*root).userdata = (&mut marker as *mut u8).cast();
        hwloc_topology_set_userdata_export_callback(t, Some(export_cb));
        assert_eq!(
            hwloc_topology_export_xmlbuffer(t, &mut buf, &mut len, V1),
            0
        );
        let with = CStr::from_ptr(buf).to_str().unwrap().to_string();
        hwloc_free_xmlbuffer(t, buf);
        assert!(
            with.contains("<userdata name=\"MyData\" length=\"5\">hello</userdata>"),
            "{with}"
        );
        (*root).userdata = null_mut();
        hwloc_topology_destroy(t);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
