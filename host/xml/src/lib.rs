//! hwloc XML topologies: import and export.
//!
//! This module reads the XML documents written by hwloc 2.x (`<topology
//! version="2.0">`) and hwloc 3.x (`version="3.0"`) into a
//! [`Topology`], and writes a [`Topology`] back in either format, following
//! hwloc 3.0's rules (attribute and element order, formatting, and the
//! conversions between the two formats).
//!
//! What changes between the two formats:
//!
//! | | version 2 | version 3 |
//! | --- | --- | --- |
//! | object identifier | `gp_index="N"` | `gp_index="N" id="objN"` |
//! | `osdev_type` | one code (0 block, 1 GPU, 2 network, 3 OpenFabrics, 4 DMA, 5 co-processor) | bitmask (1 storage, 2 memory, 4 GPU, 8 co-processor, 16 network, 32 OpenFabrics, 64 DMA) |
//! | topology infos (`Backend`, `OSName`, `HostName`, ...) | `<info>` of the root object | `<info>` elements after the root object |
//! | memory tiers, PCI bus localities | absent | `<memtier>`, `<pci_locality>` |
//!
//! hwloc 1.x documents (no `version` attribute) are read as hwloc 2 reads
//! them, and converted to the version 2 model (NUMA nodes moved from the CPU
//! tree to the memory children of their parents, `Cache` objects typed by
//! level, distance matrices turned into NUMA latencies, a NUMA node made for
//! machines without one); hwloc 3 refuses them.
//! `<userdata>` elements are kept raw and written back as read (as
//! hwloc's tools do); base64 content is checked, not decoded.  NUMA
//! `<page_type>` entries are kept but only written in version 2 documents:
//! hwloc 3 ignores them.
//!
//! Importing fills a caller-provided [`Topology`] (whose type filters are
//! already set, for instance for `--no-io`), drops the objects those filters
//! reject the way hwloc's XML importer does (their children move up to the
//! nearest kept ancestor), then calls [`Topology::finish`].
//!
//! Without the default `std` feature the crate is `no_std` (with `alloc`)
//! and offers only [`export`]: a bootloader or UEFI application can print
//! hwloc XML without an operating system.
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

use alloc::string::String;
#[cfg(feature = "std")]
use alloc::vec::Vec;
use core::fmt;
#[cfg(feature = "std")]
use std::path::Path;

#[cfg(feature = "std")]
use wloc_core::Topology;

#[cfg(feature = "std")]
pub mod diff;
mod export;
mod export_v1;
pub mod hwloc2;
#[cfg(feature = "std")]
mod import;
#[cfg(test)]
mod proptests;

pub use export::{
    SUPPORT_ORDER, escape_text, export, export_as, export_canonical, export_hwloc2,
    export_hwloc2_without_support,
};
pub use export_v1::export_v1;
pub use hwloc2::v2_infos;

/// Which hwloc XML format to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum XmlVersion {
    /// hwloc 2.x format (`<topology version="2.0">`), readable by hwloc 2.x
    /// and 3.x (lstopo's `--export-xml-flags 2` in hwloc 3).
    V2,
    /// hwloc 3.0 format (`<topology version="3.0">`), hwloc 3's default.
    V3,
}

/// An error while reading an hwloc XML document.
///
/// The message names what was wrong; [`line`](XmlError::line) and
/// [`column`](XmlError::column) locate it in the document when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XmlError {
    message: String,
    position: Option<(u32, u32)>,
    file: Option<String>,
}

impl XmlError {
    /// An error without a position in the document.
    pub fn new(message: impl Into<String>) -> Self {
        XmlError {
            message: message.into(),
            position: None,
            file: None,
        }
    }

    /// An error at a line and column (both starting at 1).
    pub fn at(message: impl Into<String>, line: u32, column: u32) -> Self {
        XmlError {
            message: message.into(),
            position: Some((line, column)),
            file: None,
        }
    }

    /// What was wrong, without the position.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The line (starting at 1) where the problem is, when known.
    pub fn line(&self) -> Option<u32> {
        self.position.map(|p| p.0)
    }

    /// The column (starting at 1) where the problem is, when known.
    pub fn column(&self) -> Option<u32> {
        self.position.map(|p| p.1)
    }

    /// The file the document came from, for errors of [`import_file`].
    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }
}

impl fmt::Display for XmlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.position) {
            (Some(file), Some((line, col))) => write!(f, "{file}:{line}:{col}: {}", self.message),
            (Some(file), None) => write!(f, "{file}: {}", self.message),
            (None, Some((line, col))) => {
                write!(f, "line {line}, column {col}: {}", self.message)
            }
            (None, None) => f.write_str(&self.message),
        }
    }
}

impl core::error::Error for XmlError {}

#[cfg(feature = "std")]
/// Reads an hwloc XML document (version 1.x, 2 or 3) into `topo`, calls
/// [`Topology::finish`] and returns the finished topology.
///
/// `topo` should be freshly created; its type filters (and
/// `include_disallowed`) are honoured.  Entries of the document that hwloc
/// would ignore with a warning (distances or memory attribute values that
/// refer to objects that are not in the topology, unknown attributes...) are
/// dropped silently; use [`import_str_with_warnings`] to see them.
///
/// # Errors
///
/// Malformed XML, a document that is not an hwloc version 1.x, 2 or 3 topology,
/// invalid values (unknown types, bad bitmaps, non-numeric attributes...),
/// impossible structures (children of a PU, I/O objects with cpusets,
/// distance matrices with the wrong number of values...), objects nested
/// more than 256 levels deep, and topologies that [`Topology::finish`] or
/// [`Topology::check`] refuse.
pub fn import_str(text: &str, topo: Topology) -> Result<Topology, XmlError> {
    import_str_with_warnings(text, topo).map(|(t, _)| t)
}

#[cfg(feature = "std")]
/// As [`import_str`], also returning the warnings about the parts of the
/// document that were ignored.
///
/// # Errors
///
/// As [`import_str`].
pub fn import_str_with_warnings(
    text: &str,
    topo: Topology,
) -> Result<(Topology, Vec<String>), XmlError> {
    import::import(text, topo)
}

#[cfg(feature = "std")]
/// Reads a document as hwloc 2.x reads it: a version 2 document's root
/// infos stay on the root object in the order written (hwloc 3, and
/// [`import_str`], move the topology-wide ones to the topology's infos and
/// name the compute backends of OS devices there). wloc's C library uses
/// it, so that programs built for hwloc 2 see what libhwloc shows them.
///
/// # Errors
///
/// As [`import_str`].
pub fn import_str_as_hwloc2(text: &str, topo: Topology) -> Result<Topology, XmlError> {
    import::import_as(text, topo, import::Reading::Hwloc2).map(|(t, _)| t)
}

#[cfg(feature = "std")]
#[doc(hidden)]
/// As [`import_str_with_warnings`], always through the reference XML parser
/// (roxmltree) instead of the fast tokeniser used for hwloc 2/3 documents.
/// Both must give the same topology, warnings and errors: this entry point
/// exists for the tests and fuzz targets that check it.
pub fn import_str_reference(
    text: &str,
    topo: Topology,
) -> Result<(Topology, Vec<String>), XmlError> {
    import::import_reference(text, topo)
}

/// The largest XML file [`import_file`] reads: 256 MiB
/// (`wloc_trust::file::MAX_INPUT_BYTES`, the cap on every topology file
/// wloc reads).  hwloc's XML of a machine of thousands of PUs takes a few
/// megabytes.
#[cfg(feature = "std")]
pub const MAX_FILE_BYTES: u64 = wloc_trust::file::MAX_INPUT_BYTES;

#[cfg(feature = "std")]
/// Reads an hwloc XML file into `topo`, as [`import_str`] does.
///
/// The path may name anything (it comes from `-i` or `HWLOC_XMLFILE`):
/// the file is opened without blocking (`O_NONBLOCK|O_CLOEXEC`: a FIFO
/// with no writer does not hang it), accepted only as a regular file of
/// at most [`MAX_FILE_BYTES`] (checked with `fstat` on the descriptor),
/// and read at most to the size seen then, so `/dev/zero` or a file
/// growing while it is read is refused or cut, never followed.
///
/// # Errors
///
/// As [`import_str`], and when the file cannot be read, is not a regular
/// file, is larger than [`MAX_FILE_BYTES`] or is not UTF-8.  Errors carry
/// the file name.
pub fn import_file(path: &Path, topo: Topology) -> Result<Topology, XmlError> {
    import_file_with_warnings(path, topo).map(|(t, _)| t)
}

#[cfg(feature = "std")]
/// As [`import_file`], also returning the warnings about the parts of the
/// document that were ignored.
///
/// # Errors
///
/// As [`import_file`].
pub fn import_file_with_warnings(
    path: &Path,
    topo: Topology,
) -> Result<(Topology, Vec<String>), XmlError> {
    let text = read_file(path)?;
    import::import(&text, topo).map_err(|e| XmlError {
        file: Some(path.display().to_string()),
        ..e
    })
}

#[cfg(feature = "std")]
/// Reads an hwloc XML file as [`import_str_as_hwloc2`] reads text; the file
/// is read as [`import_file`] reads it.
///
/// # Errors
///
/// As [`import_file`].
pub fn import_file_as_hwloc2(path: &Path, topo: Topology) -> Result<Topology, XmlError> {
    let text = read_file(path)?;
    import_str_as_hwloc2(&text, topo).map_err(|e| XmlError {
        file: Some(path.display().to_string()),
        ..e
    })
}

/// The text of an XML file, read as [`import_file`] documents (a regular
/// file of at most the size XML imports take, in UTF-8).
#[cfg(feature = "std")]
pub fn read_file(path: &Path) -> Result<String, XmlError> {
    let bytes = wloc_trust::file::read_regular(path, MAX_FILE_BYTES)
        .map_err(|e| XmlError::new(format!("cannot read {}: {}", path.display(), e.reason())))?;
    String::from_utf8(bytes).map_err(|e| {
        XmlError::new(format!(
            "{} is not valid UTF-8 (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

/// The end-to-end tests' package installer, so that the comparison with
/// hwloc runs on a fresh machine rather than skipping quietly.
#[cfg(test)]
#[path = "../../../tests/common/packages.rs"]
mod test_packages;

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use wloc_core::{ObjType, TypeFilter};

    /// `tests/data/conformance` of the tree, found from the package's
    /// folder as Cargo gives it to the test when it runs it (the path
    /// compiled in is the fallback): a test binary left in a target folder
    /// shared with another checkout reads this checkout's data, not that
    /// of a checkout which may be gone.
    pub(crate) fn conformance_dir() -> String {
        let manifest = std::env::var("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_string());
        format!("{manifest}/../../tests/data/conformance")
    }

    /// Keeps every object, as `lstopo --whole-io --disallowed`.
    pub(crate) fn keep_everything() -> Topology {
        let mut t = Topology::new();
        t.set_all_types_filter(TypeFilter::KeepAll);
        t.set_io_types_filter(TypeFilter::KeepAll);
        t.include_disallowed = true;
        t
    }

    /// lstopo's default filters: everything, important I/O only.
    fn lstopo_default() -> Topology {
        let mut t = Topology::new();
        t.set_all_types_filter(TypeFilter::KeepAll);
        t.set_io_types_filter(TypeFilter::KeepImportant);
        t
    }

    pub(crate) fn conformance_files(dirs: &[&str]) -> Vec<PathBuf> {
        let conformance = conformance_dir();
        let mut files = Vec::new();
        for d in dirs {
            let Ok(rd) = std::fs::read_dir(format!("{conformance}/{d}")) else {
                continue;
            };
            for e in rd.flatten() {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "xml") {
                    files.push(p);
                }
            }
        }
        files.sort();
        assert!(
            !files.is_empty(),
            "no conformance XML file under {conformance} (the recordings are in tests/data/conformance)"
        );
        files
    }

    fn read(name: &str) -> Option<String> {
        let p = format!("{}/xml/{name}", conformance_dir());
        match std::fs::read_to_string(&p) {
            Ok(s) => Some(s),
            Err(e) => panic!("{p}: {e} (the recordings are in tests/data/conformance)"),
        }
    }

    #[test]
    fn conformance_files_round_trip_in_both_versions() {
        for path in conformance_files(&["xml", "linux", "x86"]) {
            let t1 = import_file(&path, keep_everything())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            for v in [XmlVersion::V3, XmlVersion::V2] {
                let s1 = export(&t1, v);
                let t2 = import_str(&s1, keep_everything())
                    .unwrap_or_else(|e| panic!("{} {v:?} re-import: {e}", path.display()));
                let s2 = export(&t2, v);
                if v == XmlVersion::V3 {
                    assert!(s1 == s2, "{} does not round-trip in {v:?}", path.display());
                } else {
                    // Version 2 keeps topology infos in the root object; on
                    // reading, hwloc 3 moves back only the well-known ones
                    // (Backend, OSName...), so others (PageSizes) can come
                    // back in another order once.  Nothing else changes.
                    let sorted = |s: &str| {
                        let mut l: Vec<String> = s.lines().map(str::to_string).collect();
                        l.sort();
                        l
                    };
                    assert!(
                        sorted(&s1) == sorted(&s2),
                        "{} does not round-trip in V2",
                        path.display()
                    );
                    let t3 = import_str(&s2, keep_everything()).unwrap();
                    assert!(export(&t3, v) == s2, "{} V2 is not stable", path.display());
                }
                // A cycle through the other format changes nothing either.
                let other = if v == XmlVersion::V3 {
                    XmlVersion::V2
                } else {
                    XmlVersion::V3
                };
                let t3 = import_str(&export(&t2, other), keep_everything()).unwrap();
                if v == XmlVersion::V2 {
                    assert!(export(&t3, v) == s2, "{} V2->V3->V2", path.display());
                }
            }
        }
    }

    #[test]
    fn hwloc_made_documents_are_reproduced_byte_for_byte() {
        // Documents written by hwloc 3 (the others differ only by their
        // <userdata> or by the order of <support> of older hwloc releases).
        let same = [
            "16amd64-4distances.xml",
            "16em64t-4s2c2t-offlines.xml",
            "16em64t-4s2c2t.xml",
            "16intel64-manyVFs.xml",
            "192em64t-24n8c2t.xml",
            "24em64t-2n6c2t-pci.xml",
            "32em64t-2n8c2t-pci-noio.xml",
            "32em64t-2n8c2t-pci-normalio.xml",
            "32em64t-2n8c2t-pci-wholeio.xml",
            "64intel64-heteromem.xml",
            "8intel64-4n2t-memattrs.xml",
            "96em64t-4n4d3ca2co-pci.xml",
            "cxlmem+dax.v3.xml",
            "fakecpukinds.xml",
            "fakeheterodistances.xml",
            "irregulargroups-disallowed.xml",
            "memorysidecaches.xml",
        ];
        for name in same {
            let Some(text) = read(name) else { continue };
            let t = import_str(&text, keep_everything()).unwrap_or_else(|e| panic!("{name}: {e}"));
            let out = export(&t, XmlVersion::V3);
            if out != text {
                let line = out
                    .lines()
                    .zip(text.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(0);
                panic!(
                    "{name} differs at line {}:\n  got      {}\n  expected {}",
                    line + 1,
                    out.lines().nth(line).unwrap_or(""),
                    text.lines().nth(line).unwrap_or("")
                );
            }
        }
    }

    #[test]
    fn version_conversions_follow_hwloc() {
        let (Some(v2), Some(v3)) = (read("cxlmem+dax.v2.xml"), read("cxlmem+dax.v3.xml")) else {
            return;
        };
        // OS device types, topology infos and PCI localities move as in hwloc 3.
        let t = import_str(&v2, lstopo_default()).unwrap();
        assert_eq!(export(&t, XmlVersion::V3), v3);
        let t = import_str(&v3, lstopo_default()).unwrap();
        assert_eq!(export(&t, XmlVersion::V2), v2);
        assert_eq!(t.pci_localities.len(), 2);
        assert!(
            t.infos
                .iter()
                .any(|i| i.name == "HostName" && i.value == "efi")
        );
    }

    #[test]
    fn io_filters_match_hwloc() {
        let Some(whole) = read("32em64t-2n8c2t-pci-wholeio.xml") else {
            return;
        };
        let cases = [
            ("32em64t-2n8c2t-pci-noio.xml", TypeFilter::KeepNone),
            ("32em64t-2n8c2t-pci-normalio.xml", TypeFilter::KeepImportant),
            ("32em64t-2n8c2t-pci-wholeio.xml", TypeFilter::KeepAll),
        ];
        for (expected, filter) in cases {
            let Some(exp) = read(expected) else { continue };
            let mut t = lstopo_default();
            t.set_io_types_filter(filter);
            let t = import_str(&whole, t).unwrap();
            assert_eq!(export(&t, XmlVersion::V3), exp, "{expected}");
        }
        // Without instruction caches.
        let mut t = lstopo_default();
        t.set_icache_types_filter(TypeFilter::KeepNone);
        let t = import_str(&whole, t).unwrap();
        assert!(t.objs_by_type(ObjType::L1ICache).is_empty());
        assert!(!t.objs_by_type(ObjType::L1Cache).is_empty());
        assert!(!t.objs_by_type(ObjType::OSDevice).is_empty());
    }

    /// Our version 2 documents load in hwloc 2.x and come back unchanged,
    /// byte for byte in hwloc 2's own form ([`export_hwloc2`]).
    #[test]
    fn hwloc2_reads_our_v2_documents() {
        let lstopo = "lstopo-no-graphics";
        if let Err(e) =
            crate::test_packages::require_packages(&[("/usr/bin/lstopo-no-graphics", "hwloc")])
        {
            panic!("{e}");
        }
        let dir = std::env::temp_dir().join(format!("wloc-xml-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for path in conformance_files(&["xml", "linux", "x86"]) {
            let t = import_file(&path, keep_everything()).unwrap();
            let ours = export_hwloc2(&t);
            let input = dir.join("in.xml");
            let output = dir.join("out.xml");
            std::fs::write(&input, &ours).unwrap();
            let _ = std::fs::remove_file(&output);
            let st = std::process::Command::new(lstopo)
                .args(["--whole-io", "--disallowed", "-i"])
                .arg(&input)
                .args(["--of", "xml"])
                .arg(&output)
                .output()
                .unwrap();
            assert!(
                st.status.success() && st.stderr.is_empty(),
                "{}: hwloc failed: {}",
                path.display(),
                String::from_utf8_lossy(&st.stderr)
            );
            let theirs = std::fs::read_to_string(&output).unwrap();
            assert_eq!(ours, theirs, "{}", path.display());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    const MINI: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" allowed_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" allowed_nodeset="0x00000001" gp_index="1">
    <info name="Backend" value="Linux"/>
    <object type="NUMANode" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="2" local_memory="1024"/>
    <object type="Core" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="3">
      <object type="PU" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="4"/>
      <object type="PU" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="5"/>
    </object>
  </object>
  TAIL
</topology>
"#;

    fn mini(tail: &str) -> String {
        MINI.replace("TAIL", tail)
    }

    /// Documents that repeat one element or mistake many times: warnings
    /// beyond the first hundred are counted, not positioned (each position
    /// scans the text), and topology-wide elements are capped.
    #[test]
    fn repeated_elements_cost_linear_time() {
        let start = std::time::Instant::now();
        let many = "<support name=\"discovery.pu\" zz=\"1\"/>\n".repeat(4000);
        let (_, warnings) = import_str_with_warnings(&mini(&many), Topology::new()).unwrap();
        assert_eq!(warnings.len(), 101, "{warnings:?}");
        assert_eq!(warnings[100], "3900 more warnings not shown");
        let too_many = "<support name=\"discovery.pu\"/>\n".repeat(4097);
        expect_err(&mini(&too_many), "more than 4096 <support> elements");
        let kinds = "<cpukind cpuset=\"0x1\"/>\n".repeat(257);
        expect_err(&mini(&kinds), "more than 256 <cpukind> elements");
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn minimal_document_loads() {
        let (t, w) = import_str_with_warnings(&mini(""), lstopo_default()).unwrap();
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(t.objs_by_type(ObjType::PU).len(), 2);
        assert_eq!(t.infos.len(), 1);
        assert!(t.obj(t.root()).infos.is_empty());
        let out = export(&t, XmlVersion::V2);
        assert!(out.contains("<info name=\"Backend\" value=\"Linux\"/>"));
    }

    fn expect_err(doc: &str, what: &str) -> XmlError {
        match import_str(doc, lstopo_default()) {
            Ok(_) => panic!("expected an error about {what:?}"),
            Err(e) => {
                let msg = e.to_string();
                assert!(
                    msg.contains(what),
                    "error {msg:?} does not mention {what:?}"
                );
                e
            }
        }
    }

    #[test]
    fn bad_documents_are_errors() {
        let cases: Vec<(String, &str)> = vec![
            ("".into(), "malformed XML"),
            ("<topology version=\"2.0\"><object".into(), "malformed XML"),
            ("<root/>".into(), "not <topology>"),
            ("<topology><object type=\"Machine\"/></topology>".into(), "Machine object without a cpuset"),
            ("<topology version=\"0.9\"/>".into(), "version 0.9 is not supported"),
            ("<topology version=\"4.0\"/>".into(), "too recent"),
            ("<topology version=\"two\"/>".into(), "invalid topology version"),
            ("<topology version=\"2.0\"/>".into(), "no <object>"),
            ("<topology version=\"2.0\"><info name=\"a\" value=\"b\"/></topology>".into(), "expected the root <object>"),
            (mini("").replace("type=\"Core\"", "type=\"Kore\""), "unknown object type \"Kore\""),
            (mini("").replace("cpuset=\"0x00000002\" complete", "cpuset=\"0xzz\" complete"), "invalid cpuset"),
            (mini("").replace("os_index=\"1\"", "os_index=\"one\""), "invalid os_index \"one\""),
            (mini("").replace("gp_index=\"4\"/>", "gp_index=\"4\"><object type=\"Core\" cpuset=\"0x1\"/></object>"), "cannot be a child of a PU"),
            (mini("").replace("<object type=\"Core\" os_index=\"0\"", "<object os_index=\"0\" type=\"Core\""), "before the type attribute"),
            (mini("").replace("type=\"Machine\"", "type=\"Package\""), "not a Machine"),
            (mini("").replace(" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"3\"", " gp_index=\"3\""), "without a cpuset"),
            (mini("").replace("local_memory=\"1024\"/>", "local_memory=\"1024\"><page_type size=\"4096\" count=\"x\"/></object>"), "invalid count"),
            (mini("").replace("<info name=\"Backend\" value=\"Linux\"/>", "<info name=\"Backend\" value=\"Linux\" extra=\"1\"/>"), "unexpected attribute extra"),
            (mini("<distances2 type=\"NUMANode\" nbobjs=\"2\" kind=\"5\" indexing=\"os\"><indexes length=\"4\">0 1 </indexes><u64values length=\"6\">10 20 </u64values></distances2>"), "2 values instead of 4"),
            (mini("<distances2 type=\"NUMANode\" nbobjs=\"2\" kind=\"5\" indexing=\"os\"><indexes length=\"9\">0 1 </indexes><u64values length=\"12\">10 20 20 10 </u64values></distances2>"), "length attribute says 9"),
            (mini("<distances2 type=\"NUMANode\" nbobjs=\"2\" kind=\"5\" indexing=\"os\"><indexes length=\"4\">0 x </indexes><u64values length=\"12\">10 20 20 10 </u64values></distances2>"), "invalid index \"x\""),
            (mini("<distances2 nbobjs=\"2\" kind=\"5\" indexing=\"os\"/>"), "lacks some"),
            (mini("<distances2 type=\"NUMANode\" nbobjs=\"4294967296\" kind=\"5\" indexing=\"os\"><indexes length=\"2\">0 </indexes></distances2>"), "4294967296"),
            (mini("<memattr name=\"Foo\" flags=\"5\"><memattr_value target_obj_type=\"NUMANode\" target_obj_gp_index=\"2\" value=\"1\"/></memattr>"), "without initiator"),
            (mini("<memattr name=\"Foo\" flags=\"1\"><memattr_value target_obj_gp_index=\"2\" value=\"1\"/></memattr>"), "without a target_obj_type"),
            (mini("<cpukind forced_efficiency=\"1\"/>"), "without a cpuset"),
            (mini("<cpukind cpuset=\"0x1\" speed=\"3\"/>"), "unexpected attribute speed"),
            (mini("").replace("type=\"Core\" os_index=\"0\" cpuset=\"0x00000003\"", "type=\"L1Cache\" depth=\"2\" cache_type=\"0\" cpuset=\"0x00000003\""), "do not match"),
            (mini("").replace("<info name=\"Backend\" value=\"Linux\"/>", "<object type=\"OSDev\" cpuset=\"0x1\" osdev_type=\"0\"/>"), "cannot have one"),
            (mini("").replace("<info name=\"Backend\" value=\"Linux\"/>", "<object type=\"PCIDev\" pci_busid=\"0000:zz:00.0\"/>"), "invalid pci_busid"),
            (mini("").replace("<info name=\"Backend\" value=\"Linux\"/>", "<object type=\"Bridge\" bridge_type=\"0-1\" bridge_pci=\"0000:[00-\"/>"), "invalid bridge_pci"),
            (mini("").replace("<info name=\"Backend\" value=\"Linux\"/>", "<object type=\"PCIDev\" pci_type=\"0200 [8086\"/>"), "invalid pci_type"),
            (mini("").replace("<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">", "<!DOCTYPE topology [<!ENTITY e \"x\">]>"), "internal subsets"),
            (mini("").replace("    <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"2\" local_memory=\"1024\"/>\n", ""), "invalid topology"),
            (mini("").replace("<object type=\"PU\" os_index=\"1\" cpuset=\"0x00000002\" complete_cpuset=\"0x00000002\"", "<object type=\"PU\" os_index=\"1\" cpuset=\"0x00000001\" complete_cpuset=\"0x00000001\""), "PU P#1 has cpuset 0x00000001; it must hold its own index"),
            (mini("").replace("nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"2\"", "nodeset=\"0x0\" complete_nodeset=\"0x0\" gp_index=\"2\""), "NUMANode P#0 has nodeset 0x0; it must hold its own index"),
        ];
        let no_nodeset = mini("").replacen(" nodeset=\"0x00000001\"", " nodeset=\"\"", 1);
        expect_err(&no_nodeset, "no nodeset");
        for (doc, what) in &cases {
            expect_err(doc, what);
        }
        // Errors name their place in the document.
        let e = expect_err(
            &mini("").replace("os_index=\"1\"", "os_index=\"one\""),
            "invalid os_index",
        );
        assert_eq!(e.line(), Some(9));
        assert!(e.to_string().starts_with("line 9, column "), "{e}");
    }

    #[test]
    fn dangling_references_are_dropped_with_warnings() {
        let tail = r#"<distances2 type="NUMANode" nbobjs="2" kind="5" name="NUMALatency" indexing="os">
    <indexes length="4">0 7 </indexes>
    <u64values length="12">10 20 20 10 </u64values>
  </distances2>
  <distances2hetero nbobjs="3" kind="21">
    <indexes length="25">NUMANode:2 PU:4 OSDev:99 </indexes>
    <u64values length="18">1 2 3 4 5 6 7 8 9 </u64values>
  </distances2hetero>
  <memattr name="Bandwidth" flags="5">
    <memattr_value target_obj_type="NUMANode" target_obj_gp_index="2" value="20" initiator_cpuset="0x00000003"/>
    <memattr_value target_obj_type="NUMANode" target_obj_gp_index="42" value="30" initiator_cpuset="0x00000003"/>
    <memattr_value target_obj_type="NUMANode" target_obj_gp_index="2" value="40" initiator_obj_gp_index="77" initiator_obj_type="PU"/>
  </memattr>
  <mystery/>
  <cpukind cpuset="0x1"/>"#;
        let (t, w) = import_str_with_warnings(&mini(tail), lstopo_default()).unwrap();
        assert!(
            t.distances.len() == 1 && t.distances[0].objs.len() == 2,
            "{:?}",
            t.distances
        );
        assert_eq!(t.memattrs.len(), 1);
        assert_eq!(t.memattrs[0].values.len(), 1);
        assert!(
            t.cpukinds.is_empty(),
            "elements after an unknown one are ignored"
        );
        let all = w.join("\n");
        for what in [
            "NUMALatency",
            "OSDev",
            "gp_index 42",
            "gp_index 77",
            "<mystery>",
        ] {
            assert!(all.contains(what), "no warning about {what}: {all}");
        }
    }

    #[test]
    fn nesting_is_bounded() {
        let open = r#"<object type="Group" cpuset="0x1" complete_cpuset="0x1" nodeset="0x1" complete_nodeset="0x1">"#;
        let doc = |n: usize| {
            format!(
                "<topology version=\"2.0\"><object type=\"Machine\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\"><object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x1\" nodeset=\"0x1\"/>{}<object type=\"PU\" os_index=\"0\" cpuset=\"0x1\"/>{}</object></topology>",
                open.repeat(n),
                "</object>".repeat(n)
            )
        };
        // Deep but acceptable: the groups are merged away.
        let t = import_str(&doc(super::import::MAX_DEPTH - 3), lstopo_default()).unwrap();
        assert_eq!(t.depth(), 2);
        expect_err(&doc(200_000), "nested more than");
        expect_err(&doc(super::import::MAX_DEPTH), "nested more than");
    }

    /// A document whose deepest objects are `n` links below the root on
    /// every kind of path: a package, groups then a PU (the package holds
    /// a second PU, so that no level is merged away), Misc objects, and
    /// bridges then a PCI device and an OS device.
    fn chains(n: usize) -> String {
        let sets = |c: &str| {
            format!(r#"cpuset="{c}" complete_cpuset="{c}" nodeset="0x1" complete_nodeset="0x1""#)
        };
        let (one, two, both) = (sets("0x1"), sets("0x2"), sets("0x3"));
        let mut d = format!(
            "<topology version=\"3.0\"><object type=\"Machine\" {both}><object type=\"NUMANode\" os_index=\"0\" {both}/><object type=\"Package\" os_index=\"0\" {both}>"
        );
        for _ in 0..n - 2 {
            d.push_str(&format!(
                "<object type=\"Group\" kind=\"1\" dont_merge=\"1\" {one}>"
            ));
        }
        d.push_str(&format!("<object type=\"PU\" os_index=\"0\" {one}/>"));
        d.push_str(&"</object>".repeat(n - 2));
        d.push_str(&format!(
            "<object type=\"PU\" os_index=\"1\" {two}/></object>"
        ));
        for _ in 0..n - 2 {
            d.push_str(
                r#"<object type="Bridge" bridge_type="0-1" depth="0" bridge_pci="0000:[00-01]">"#,
            );
        }
        d.push_str(r#"<object type="PCIDev" pci_busid="0000:01:00.0" pci_type="0200 [8086:1234] [0000:0000] 00 00" pci_link_speed="0.000000"><object type="OSDev" name="eth0" osdev_type="32"/></object>"#);
        d.push_str(&"</object>".repeat(n - 2));
        d.push_str(&r#"<object type="Misc" name="m">"#.repeat(n));
        d.push_str(&"</object>".repeat(n));
        d.push_str("</object></topology>");
        d
    }

    /// Runs `f` on a thread with a `kib` KiB stack (a stack overflow
    /// aborts the test process, which fails the test).
    fn on_stack<T: Send + 'static>(kib: usize, f: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::Builder::new()
            .stack_size(kib * 1024)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap()
    }

    fn deepest(t: &Topology) -> usize {
        t.ids()
            .map(|mut id| {
                let mut d = 0;
                while let Some(p) = t.obj(id).parent() {
                    d += 1;
                    id = p;
                }
                d
            })
            .max()
            .unwrap()
    }

    #[test]
    fn the_deepest_trees_round_trip_on_a_small_stack() {
        let n = wloc_core::MAX_TREE_DEPTH;
        // 256 KiB, an eighth of a spawned thread's default stack, for
        // wloc's own passes: the fast reader, the checks and the writer.
        let t = on_stack(256, move || {
            let t = import_str(&chains(n), keep_everything()).unwrap();
            assert_eq!(deepest(&t), n);
            for v in [XmlVersion::V2, XmlVersion::V3] {
                let out = export(&t, v);
                let back = import_str(&out, keep_everything()).unwrap();
                assert!(export(&back, v) == out, "{v:?} round trip differs");
            }
            // One more level on any path is refused.
            let e = import_str(&chains(n + 1), keep_everything()).unwrap_err();
            assert!(e.to_string().contains("levels below the root"), "{e}");
            let e = import_str(&chains(100_000), keep_everything()).unwrap_err();
            assert!(e.to_string().contains("nested more than"), "{e}");
            t
        });
        // The reference reader (roxmltree, which recurses once per nested
        // element) on a 512 KiB stack, still a quarter of the default.
        on_stack(512, move || {
            for v in [XmlVersion::V2, XmlVersion::V3] {
                let out = export(&t, v);
                let (back, _) = import_str_reference(&out, keep_everything()).unwrap();
                assert_eq!(export(&back, v), out);
            }
            let e = import_str_reference(&chains(100_000), keep_everything()).unwrap_err();
            assert!(e.to_string().contains("nested more than"), "{e}");
        });
    }

    #[test]
    fn memory_below_a_pu_or_a_numa_node_is_refused() {
        let sets = r#"cpuset="0x1" complete_cpuset="0x1" nodeset="0x1" complete_nodeset="0x1""#;
        let pu_parent = format!(
            "<topology version=\"2.0\"><object type=\"Machine\" {sets}><object type=\"PU\" os_index=\"0\" {sets}><object type=\"NUMANode\" os_index=\"0\" {sets}/></object></object></topology>"
        );
        expect_err(
            &pu_parent,
            "a NUMANode object cannot be a child of a PU object",
        );
        let numa_parent = format!(
            "<topology version=\"2.0\"><object type=\"Machine\" {sets}><object type=\"NUMANode\" os_index=\"0\" {sets}><object type=\"NUMANode\" os_index=\"1\" {sets}/></object><object type=\"PU\" os_index=\"0\" {sets}/></object></topology>"
        );
        expect_err(
            &numa_parent,
            "a NUMANode object cannot be a child of a NUMANode object",
        );
    }

    #[test]
    fn large_documents_load() {
        let n = 4096u32;
        // The machine's sets are those of its PUs (hwloc's checker wants
        // the sum of the children).
        let mut all = wloc_core::CpuSet::new();
        all.set_range(0, Some(n - 1));
        let mut doc = format!(
            "<topology version=\"3.0\"><object type=\"Machine\" cpuset=\"{all}\" complete_cpuset=\"{all}\" nodeset=\"0x1\" complete_nodeset=\"0x1\"><object type=\"NUMANode\" os_index=\"0\" cpuset=\"{all}\" nodeset=\"0x1\"/>"
        );
        for i in 0..n {
            let mut s = wloc_core::CpuSet::new();
            s.set(i);
            doc.push_str(&format!(
                "<object type=\"PU\" os_index=\"{i}\" cpuset=\"{s}\"/>"
            ));
        }
        doc.push_str("</object></topology>");
        let t = import_str(&doc, lstopo_default()).unwrap();
        assert_eq!(t.objs_by_type(ObjType::PU).len(), n as usize);
        let out = export(&t, XmlVersion::V3);
        let t2 = import_str(&out, lstopo_default()).unwrap();
        assert_eq!(export(&t2, XmlVersion::V3), out);
    }

    #[test]
    fn strings_are_escaped_like_hwloc() {
        let doc = mini("").replace(
            "gp_index=\"3\">",
            "gp_index=\"3\" name=\"a&quot;b&lt;c&gt;d&amp;e&#10;f&#9;g\u{e9}\">\n<info name=\"k\" value=\"v\u{e9}w\"/>",
        );
        let t = import_str(&doc, lstopo_default()).unwrap();
        let out = export(&t, XmlVersion::V3);
        assert!(
            out.contains(" name=\"a&quot;b&lt;c&gt;d&amp;e&#10;f&#9;g\""),
            "{out}"
        );
        assert!(out.contains("<info name=\"k\" value=\"vw\"/>"), "{out}");
        let t2 = import_str(&out, lstopo_default()).unwrap();
        assert_eq!(export(&t2, XmlVersion::V3), out);
    }

    #[test]
    fn escaped_text_always_parses_back() {
        let raw = "a<b>&\"c'\u{1}d\u{1b}[0m\u{ffff}\te\r\n\u{e9}";
        let doc = format!("<r a=\"{0}\" b='{0}'>{0}</r>", escape_text(raw));
        let parsed = roxmltree::Document::parse(&doc).unwrap();
        let want = "a<b>&\"c'\u{fffd}d\u{fffd}[0m\u{fffd}\te\r\n\u{e9}";
        assert_eq!(parsed.root_element().text(), Some(want));
        assert_eq!(parsed.root_element().attribute("b"), Some(want));
    }

    #[test]
    fn damaged_documents_never_panic() {
        // Deterministic mutations of real documents: each one must load
        // or be refused, and whatever loads must export and load again.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let tokens = [
            "0",
            "-1",
            "99999999999999999999",
            "0x",
            "0xf...f",
            "x",
            "<",
            "\"",
            "obj",
            "PU",
            "Misc",
            ",,",
        ];
        for name in [
            "16em64t-4s2c2t.xml",
            "8intel64-4n2t-memattrs.xml",
            "fakeheterodistances.xml",
            "cxlmem+dax.v2.xml",
        ] {
            let Some(text) = read(name) else { continue };
            for _ in 0..150 {
                let mut s = text.clone().into_bytes();
                for _ in 0..1 + rnd(3) {
                    let pos = rnd(s.len());
                    match rnd(3) {
                        0 => {
                            let end = (pos + 1 + rnd(40)).min(s.len());
                            s.drain(pos..end);
                        }
                        1 => {
                            let t = tokens[rnd(tokens.len())];
                            s.splice(pos..pos, t.bytes());
                        }
                        _ => {
                            let end = (pos + 1 + rnd(300)).min(s.len());
                            let chunk = s[pos..end].to_vec();
                            let at = rnd(s.len());
                            s.splice(at..at, chunk);
                        }
                    }
                }
                let Ok(doc) = String::from_utf8(s) else {
                    continue;
                };
                if let Ok(t) = import_str(&doc, keep_everything()) {
                    for v in [XmlVersion::V2, XmlVersion::V3] {
                        let out = export(&t, v);
                        if let Err(e) = import_str(&out, keep_everything()) {
                            panic!("re-import of a damaged {name} failed: {e}\n{doc}");
                        }
                    }
                }
            }
        }
    }

    /// The minimal document with `ud` after the root's info.
    fn with_userdata(ud: &str) -> String {
        let info = "<info name=\"Backend\" value=\"Linux\"/>";
        MINI.replace(info, &format!("{info}\n    {ud}"))
            .replace("TAIL", "<support name=\"custom.exported_support\"/>")
    }

    #[test]
    fn userdata_round_trips_raw() {
        let uds = [
            r#"<userdata name="a&quot;b" length="8">a&lt;b&amp;"c'&gt;</userdata>"#,
            r#"<userdata length="4">ab	d</userdata>"#,
            r#"<userdata name="b64" length="5" encoding="base64">aGVsbG8=</userdata>"#,
            r#"<userdata name="empty" length="0"/>"#,
        ];
        let doc = with_userdata(&uds.join("\n    "));
        let t = import_str(&doc, lstopo_default()).unwrap();
        let root = t.obj(t.root());
        assert_eq!(root.userdata.len(), 4);
        assert_eq!(root.userdata[0].name.as_deref(), Some("a\"b"));
        assert_eq!(root.userdata[0].content, "a<b&\"c'>");
        assert!(root.userdata[2].base64);
        assert_eq!(root.userdata[2].length, 5);
        assert_eq!(root.userdata[1].name, None);
        let out = export(&t, XmlVersion::V2);
        assert_eq!(out, doc);
        // Version 3 documents carry them the same way.
        let v3 = export(&t, XmlVersion::V3);
        let t3 = import_str(&v3, lstopo_default()).unwrap();
        assert_eq!(t3.obj(t3.root()).userdata, root.userdata);
    }

    #[test]
    fn malformed_userdata_is_refused_clearly() {
        let cases = [
            (
                r#"<userdata length="3">ab</userdata>"#,
                "declares length 3 but its content has 2 bytes",
            ),
            (
                r#"<userdata length="1">ab</userdata>"#,
                "declares length 1 but its content has 2 bytes",
            ),
            (
                r#"<userdata length="18446744073709551615">ab</userdata>"#,
                "declares length 18446744073709551615",
            ),
            (
                r#"<userdata length="18446744073709551615" encoding="base64">aGVs</userdata>"#,
                "declares length 18446744073709551615 but its content has 4 base64 characters",
            ),
            (
                r#"<userdata length="99999999999999999999999">ab</userdata>"#,
                "length",
            ),
            (r#"<userdata length="-1">ab</userdata>"#, "length"),
            (r#"<userdata length="x">ab</userdata>"#, "length"),
            (
                r#"<userdata length="5" encoding="base64">aGVsbG8</userdata>"#,
                "content has 7 base64 characters (expected 8)",
            ),
            (
                r#"<userdata length="3" encoding="base64">a!Vs</userdata>"#,
                "invalid base64 content: character '!' at offset 1",
            ),
            (
                r#"<userdata length="3" encoding="base64">aG=s</userdata>"#,
                "invalid base64 content: character '=' at offset 2",
            ),
            (
                r#"<userdata length="3" encoding="base64">aGV=</userdata>"#,
                "1 padding characters where a length of 3 needs 0",
            ),
            (
                r#"<userdata length="1"><a/></userdata>"#,
                "cannot contain elements",
            ),
            (
                r#"<userdata length="1" size="1">a</userdata>"#,
                "unexpected attribute size in <userdata>",
            ),
        ];
        for (ud, what) in cases {
            let e = expect_err(&with_userdata(ud), what);
            assert!(e.to_string().starts_with("line "), "{e} has no position");
        }
    }

    #[test]
    fn error_display() {
        assert_eq!(XmlError::new("bad").to_string(), "bad");
        assert_eq!(
            XmlError::at("bad", 3, 7).to_string(),
            "line 3, column 7: bad"
        );
        let e = import_file(Path::new("/nonexistent/x.xml"), Topology::new()).unwrap_err();
        assert!(e.to_string().contains("cannot read /nonexistent/x.xml"));
    }

    /// `/dev/zero`, a FIFO with no writer and a folder are refused at
    /// once (not read without end, not waited on), naming the file.
    #[test]
    fn only_regular_files_are_read() {
        let start = std::time::Instant::now();
        let dir = std::env::temp_dir().join(format!("wloc-xml-fifo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("topo.xml");
        let st = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(st.success());
        for (p, kind) in [
            (Path::new("/dev/zero"), "a character device"),
            (fifo.as_path(), "a FIFO"),
            (dir.as_path(), "a directory"),
        ] {
            let e = import_file(p, Topology::new()).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!(
                    "cannot read {}: not a regular file ({kind})",
                    p.display()
                )),
                "{e}"
            );
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
