//! `hwloc/export.h`: XML export to a file or a buffer, synthetic export,
//! and the userdata an application exports with its objects.

use std::os::raw::{c_char, c_int, c_ulong, c_void};

use base64::Engine;
use wloc_core::{Topology, UserData};

use crate::ffi::{c_str, c_strdup, fail, guard};
use crate::handle::{hwloc_topology, hwloc_topology_t};
use crate::types::*;

/// `HWLOC_TOPOLOGY_EXPORT_XML_FLAG_V1`.
const XML_FLAG_V1: c_ulong = 1;

/// Decodes base64 userdata content (`None` if it is not base64).
pub(crate) fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let clean: String = s.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD.decode(clean).ok()
}

/// What the export callback adds to: a copy of the model, so the
/// application's userdata goes into the document and not into the topology.
struct ExportContext {
    topology: *const hwloc_topology,
    model: Topology,
}

/// The document of a topology, with the userdata its export callback
/// gives: hwloc 2.x's format, or hwloc 1.x's with
/// `HWLOC_TOPOLOGY_EXPORT_XML_FLAG_V1`.
fn xml_of(topology: hwloc_topology_t, t: &hwloc_topology, flags: c_ulong) -> Result<String, c_int> {
    if flags & !XML_FLAG_V1 != 0 {
        return Err(libc::EINVAL);
    }
    // HWLOC_XML_EXPORT_SUPPORT=0: no support elements, as in hwloc; hwloc
    // 1.x documents have none anyway.
    let no_support =
        wloc_trust::env::var("HWLOC_XML_EXPORT_SUPPORT").is_some_and(|v| crate::ffi::atoi(&v) == 0);
    let export = if flags & XML_FLAG_V1 != 0 {
        wloc_xml::export_v1
    } else if no_support {
        wloc_xml::export_hwloc2_without_support
    } else {
        wloc_xml::export_hwloc2
    };
    let Some(cb) = t.export_cb else {
        return Ok(export(&t.model));
    };
    let mut ctx = ExportContext {
        topology: t,
        model: t.model.clone(),
    };
    // hwloc asks only about objects that carry application data.
    for id in t.model.iter_dfs() {
        let obj = t.ptr_of(id);
        // SAFETY: the topology's own object.
        if obj.is_null() || unsafe { (*obj).userdata }.is_null() {
            continue;
        }
        // SAFETY: the application's callback, called as hwloc does, with
        // our context as the reserved pointer it hands back.
        unsafe { cb(&mut ctx as *mut ExportContext as *mut c_void, topology, obj) };
    }
    Ok(export(&ctx.model))
}

/// `hwloc_topology_export_xml`: `-` is the standard output.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_export_xml(
    topology: hwloc_topology_t,
    xmlpath: *const c_char,
    flags: c_ulong,
) -> c_int {
    entry!(topology, -1, |h| {
        // SAFETY: a NUL-terminated path or NULL.
        let path = unsafe { crate::ffi::c_path(xmlpath) };
        // SAFETY: as above.
        let (Some(t), Some(path)) = (h.loaded_mut(), path) else {
            return fail(libc::EINVAL);
        };
        let t = &*t;
        let doc = match xml_of(h.raw(), t, flags) {
            Ok(d) => d,
            Err(e) => return fail(e),
        };
        let written = if path.as_os_str() == "-" {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(doc.as_bytes()).and_then(|_| out.flush())
        } else {
            // Written into the file that is there, as hwloc's fopen("w")
            // does, not by renaming a new one over it: callers keep a
            // descriptor of the file they named and read the export back
            // through it (hwloc's shmem test exports into its mkstemp file,
            // then maps that descriptor); a rename would leave it empty.
            std::fs::write(&path, doc.as_bytes())
        };
        match written {
            Ok(()) => 0,
            Err(e) => fail(e.raw_os_error().unwrap_or(libc::EIO)),
        }
    })
}

/// `hwloc_topology_export_xmlbuffer`: the buffer is NUL-terminated and
/// `buflen` counts the terminator, as in hwloc; free it with
/// `hwloc_free_xmlbuffer`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_export_xmlbuffer(
    topology: hwloc_topology_t,
    xmlbuffer: *mut *mut c_char,
    buflen: *mut c_int,
    flags: c_ulong,
) -> c_int {
    entry!(topology, -1, |h| {
        let Some(t) = h.loaded_mut() else {
            return fail(libc::EINVAL);
        };
        let t = &*t;
        if xmlbuffer.is_null() || buflen.is_null() {
            return fail(libc::EINVAL);
        }
        let doc = match xml_of(h.raw(), t, flags) {
            Ok(d) => d,
            Err(e) => return fail(e),
        };
        let Ok(len) = c_int::try_from(doc.len() + 1) else {
            return fail(libc::ENOMEM);
        };
        let p = c_strdup(&doc);
        if p.is_null() {
            return fail(libc::ENOMEM);
        }
        // SAFETY: the caller gives places for the buffer and its length.
        unsafe {
            *xmlbuffer = p;
            *buflen = len;
        }
        0
    })
}

/// `hwloc_free_xmlbuffer`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_free_xmlbuffer(_topology: hwloc_topology_t, xmlbuffer: *mut c_char) {
    guard((), || {
        // SAFETY: a buffer from hwloc_topology_export_xmlbuffer (malloc'ed) or NULL.
        unsafe { libc::free(xmlbuffer as *mut c_void) }
    })
}

/// Whether hwloc accepts `bytes` as userdata text outside base64: printable
/// characters and the usual whitespace.
fn is_exportable_text(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .all(|&b| (b' '..0x7f).contains(&b) || matches!(b, b'\t' | b'\n' | b'\r'))
}

fn export_userdata(
    reserved: *mut c_void,
    topology: hwloc_topology_t,
    obj: hwloc_obj_t,
    name: *const c_char,
    buffer: *const c_void,
    length: usize,
    encode: bool,
) -> c_int {
    guard(-1, || {
        if reserved.is_null() || (buffer.is_null() && length > 0) {
            return fail(libc::EINVAL);
        }
        // SAFETY: `reserved` is the context xml_of handed to the callback.
        let ctx = unsafe { &mut *(reserved as *mut ExportContext) };
        if !std::ptr::eq(ctx.topology, topology) {
            return fail(libc::EINVAL);
        }
        // SAFETY: the context's topology is alive during its export.
        let t = unsafe { &*ctx.topology };
        let Some(id) = t.id_of(obj) else {
            return fail(libc::EINVAL);
        };
        // SAFETY: a NUL-terminated name or NULL.
        let name = unsafe { c_str(name) }.map(|n| n.into_owned());
        if name
            .as_deref()
            .is_some_and(|n| !is_exportable_text(n.as_bytes()))
        {
            return fail(libc::EINVAL);
        }
        // What the buffer holds: `length` bytes, except a base64 text
        // passed through undecoded, which is 4 bytes per 3 of data.
        let raw_base64 =
            t.userdata_not_decoded && name.as_deref().is_some_and(|n| n.starts_with("base64"));
        let held = if raw_base64 {
            length.div_ceil(3) * 4
        } else {
            length
        };
        let bytes = if held == 0 {
            &[][..]
        } else {
            // SAFETY: the caller's buffer holds `held` bytes, as hwloc
            // reads it.
            unsafe { std::slice::from_raw_parts(buffer as *const u8, held) }
        };
        // hwloc's tools copy userdata through without decoding: the name
        // says how the text was written.
        let (name, encode, text) = if t.userdata_not_decoded {
            let Some(full) = name else {
                return fail(libc::EINVAL);
            };
            let (encoded, rest) = match (full.strip_prefix("base64"), full.strip_prefix("normal")) {
                (Some(r), _) => (true, r),
                (_, Some(r)) => (false, r),
                _ => return fail(libc::EINVAL),
            };
            let real = match rest.strip_prefix(':') {
                Some(n) => Some(n.to_string()),
                None if rest == "-anon" => None,
                None => return fail(libc::EINVAL),
            };
            // The text is a C string: it ends at a NUL, as hwloc writes it.
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            (
                real,
                encoded,
                String::from_utf8_lossy(&bytes[..end]).into_owned(),
            )
        } else if encode {
            (
                name,
                true,
                base64::engine::general_purpose::STANDARD.encode(bytes),
            )
        } else {
            if !is_exportable_text(bytes) {
                return fail(libc::EINVAL);
            }
            (name, false, String::from_utf8_lossy(bytes).into_owned())
        };
        let content = text;
        ctx.model.obj_mut(id).userdata.push(UserData {
            name,
            base64: encode,
            length: length as u64,
            content,
        });
        0
    })
}

/// `hwloc_export_obj_userdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_export_obj_userdata(
    reserved: *mut c_void,
    topology: hwloc_topology_t,
    obj: hwloc_obj_t,
    name: *const c_char,
    buffer: *const c_void,
    length: usize,
) -> c_int {
    entry!(topology, -1, |h| {
        export_userdata(reserved, h.raw(), obj, name, buffer, length, false)
    })
}

/// `hwloc_export_obj_userdata_base64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_export_obj_userdata_base64(
    reserved: *mut c_void,
    topology: hwloc_topology_t,
    obj: hwloc_obj_t,
    name: *const c_char,
    buffer: *const c_void,
    length: usize,
) -> c_int {
    entry!(topology, -1, |h| {
        export_userdata(reserved, h.raw(), obj, name, buffer, length, true)
    })
}

/// `hwloc_topology_export_synthetic`: the description in the caller's
/// buffer, its length returned; -1 with `EINVAL` when the topology is not
/// symmetric enough to be described.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_export_synthetic(
    topology: hwloc_topology_t,
    buffer: *mut c_char,
    buflen: usize,
    flags: c_ulong,
) -> c_int {
    entry!(topology, |t: Loaded| {
        let Some(f) = wloc_core::synthetic::ExportFlags::from_bits(flags) else {
            return fail(libc::EINVAL);
        };
        match wloc_core::synthetic::export(&t.model, f) {
            // SAFETY: the caller's buffer holds buflen bytes.
            Ok(s) => unsafe { crate::ffi::snprintf_out(buffer, buflen, &s) },
            Err(_) => fail(libc::EINVAL),
        }
    })
}
