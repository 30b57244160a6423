//! `hwloc/diff.h`: topology diffs, computed, parsed, written and applied
//! by [`wloc_xml::diff`]; this module converts between its [`Change`]s
//! and hwloc's C linked list (entries and strings `malloc`'ed, freed by
//! `hwloc_topology_diff_destroy`).

use std::collections::HashMap;
use std::os::raw::{c_char, c_int, c_ulong, c_void};
use std::ptr::null_mut;

use wloc_core::{ObjId, Topology};
use wloc_xml::diff::{AttrChange, Change, Computed};

use crate::ffi::{c_str, c_strdup, fail, guard};
use crate::handle::{Handle, hwloc_topology_t};
use crate::types::*;

/// `HWLOC_TOPOLOGY_DIFF_OBJ_ATTR`.
pub const DIFF_OBJ_ATTR: c_int = 0;
/// `HWLOC_TOPOLOGY_DIFF_TOO_COMPLEX`.
pub const DIFF_TOO_COMPLEX: c_int = 1;
/// `HWLOC_TOPOLOGY_DIFF_OBJ_ATTR_SIZE`.
pub const DIFF_OBJ_ATTR_SIZE: c_int = 0;
/// `HWLOC_TOPOLOGY_DIFF_OBJ_ATTR_NAME`.
pub const DIFF_OBJ_ATTR_NAME: c_int = 1;
/// `HWLOC_TOPOLOGY_DIFF_OBJ_ATTR_INFO`.
pub const DIFF_OBJ_ATTR_INFO: c_int = 2;
/// `HWLOC_TOPOLOGY_DIFF_APPLY_REVERSE`.
pub const DIFF_APPLY_REVERSE: c_ulong = 1 << 0;

/// One entry of hwloc's list.
#[derive(Clone, Debug, PartialEq)]
enum Entry {
    Change(Change),
    TooComplex { depth: i32, index: u32 },
}

/// hwloc's list order: walking the old topology as `hwloc_diff_trees`
/// does, an object's attribute changes, then its children's entries
/// (normal, memory, I/O, Misc), then its too-complex marker (a subtree
/// found too complex early has no entries below it, so a marker after
/// them is where hwloc puts it either way).
fn ordered(old: &Topology, c: Computed) -> Vec<Entry> {
    let key = |id: ObjId| {
        let o = old.obj(id);
        (o.depth().to_i32(), o.logical_index())
    };
    let mut changes: HashMap<(i32, u32), Vec<Change>> = HashMap::new();
    let mut order_keys: Vec<(i32, u32)> = Vec::new();
    for ch in c.changes {
        let k = (ch.depth, ch.index);
        if !changes.contains_key(&k) {
            order_keys.push(k);
        }
        changes.entry(k).or_default().push(ch);
    }
    let mut complex: HashMap<(i32, u32), usize> = HashMap::new();
    for tc in &c.too_complex {
        *complex.entry((tc.depth, tc.index)).or_default() += 1;
    }
    enum Visit {
        Enter(ObjId),
        Exit(ObjId),
    }
    let mut out = Vec::new();
    let mut stack = vec![Visit::Enter(old.root())];
    while let Some(v) = stack.pop() {
        match v {
            Visit::Enter(id) => {
                out.extend(
                    changes
                        .remove(&key(id))
                        .into_iter()
                        .flatten()
                        .map(Entry::Change),
                );
                stack.push(Visit::Exit(id));
                let o = old.obj(id);
                let kids = [
                    o.children(),
                    o.memory_children(),
                    o.io_children(),
                    o.misc_children(),
                ];
                for &k in kids.iter().rev().flat_map(|l| l.iter().rev()) {
                    stack.push(Visit::Enter(k));
                }
            }
            Visit::Exit(id) => {
                let (depth, index) = key(id);
                for _ in 0..complex.remove(&(depth, index)).unwrap_or(0) {
                    out.push(Entry::TooComplex { depth, index });
                }
            }
        }
    }
    // Entries at places the walk did not see (none expected) go last.
    for k in order_keys {
        out.extend(changes.remove(&k).into_iter().flatten().map(Entry::Change));
    }
    let mut rest: Vec<_> = complex.into_iter().collect();
    rest.sort_unstable();
    for ((depth, index), n) in rest {
        out.extend((0..n).map(|_| Entry::TooComplex { depth, index }));
    }
    out
}

/// A zeroed list entry from `malloc` (hwloc frees entries with `free`).
fn alloc_entry() -> *mut hwloc_topology_diff_u {
    // SAFETY: calloc of one entry; all-zero is a valid union value.
    unsafe { libc::calloc(1, std::mem::size_of::<hwloc_topology_diff_u>()) as *mut _ }
}

/// The C list of `entries` (NULL when empty, or when memory runs out:
/// then `Err` with nothing left allocated).
fn to_c(entries: &[Entry]) -> Result<hwloc_topology_diff_t, ()> {
    let mut first: hwloc_topology_diff_t = null_mut();
    let mut last: hwloc_topology_diff_t = null_mut();
    for e in entries {
        let p = alloc_entry();
        if p.is_null() {
            // SAFETY: the entries made so far, a list of ours.
            unsafe { hwloc_topology_diff_destroy(first) };
            return Err(());
        }
        // Field by field into the zeroed entry: a whole-union write would
        // leave the padding after the type undefined. The entry is linked
        // first so that a failure below frees it with the rest.
        // SAFETY: p is a fresh zeroed entry; last the previous one.
        unsafe {
            match last.as_mut() {
                Some(l) => l.generic.next = p,
                None => first = p,
            }
            last = p;
            match e {
                Entry::TooComplex { depth, index } => {
                    let c = &mut (*p).too_complex;
                    c.type_ = DIFF_TOO_COMPLEX;
                    c.obj_depth = *depth;
                    c.obj_index = *index;
                }
                Entry::Change(ch) => {
                    let a = &mut (*p).obj_attr;
                    a.type_ = DIFF_OBJ_ATTR;
                    a.obj_depth = ch.depth;
                    a.obj_index = ch.index;
                    if attr_to_c(&ch.attr, &mut a.diff).is_err() {
                        hwloc_topology_diff_destroy(first);
                        return Err(());
                    }
                }
            }
        }
    }
    Ok(first)
}

/// Writes an attribute change into a zeroed union, field by field.
fn attr_to_c(a: &AttrChange, out: &mut hwloc_topology_diff_obj_attr_u) -> Result<(), ()> {
    let mut string = |type_, name: Option<&str>, old: &str, new: &str| {
        // SAFETY: writes of Copy fields of the union's member.
        let s = unsafe { &mut out.string };
        s.type_ = type_;
        s.name = name.map_or(null_mut(), c_strdup);
        s.oldvalue = c_strdup(old);
        s.newvalue = c_strdup(new);
        if (name.is_some() && s.name.is_null()) || s.oldvalue.is_null() || s.newvalue.is_null() {
            return Err(()); // freed with the entry by the caller
        }
        Ok(())
    };
    match a {
        AttrChange::Size { index, old, new } => {
            // SAFETY: as above.
            let u = unsafe { &mut out.uint64 };
            u.type_ = DIFF_OBJ_ATTR_SIZE;
            u.index = *index;
            u.oldvalue = *old;
            u.newvalue = *new;
            Ok(())
        }
        AttrChange::Name { old, new } => string(DIFF_OBJ_ATTR_NAME, None, old, new),
        AttrChange::Info { name, old, new } => string(DIFF_OBJ_ATTR_INFO, Some(name), old, new),
    }
}

/// Reads a C list: its changes up to the first entry that is not one
/// (a too-complex marker or an unknown type), and that entry's position.
///
/// # Safety
/// `diff` is NULL or a list as hwloc builds them.
unsafe fn from_c(mut diff: hwloc_topology_diff_t) -> (Vec<Change>, Option<usize>) {
    let mut out = Vec::new();
    // SAFETY: see above.
    while let Some(d) = unsafe { diff.as_ref() } {
        // SAFETY: every member starts with the type; obj_attr is the
        // member of type OBJ_ATTR.
        let change = unsafe {
            if d.generic.type_ == DIFF_OBJ_ATTR {
                change_from_c(&d.obj_attr)
            } else {
                None
            }
        };
        match change {
            Some(c) => out.push(c),
            None => {
                let at = out.len();
                return (out, Some(at));
            }
        }
        // SAFETY: see above.
        diff = unsafe { d.generic.next };
    }
    (out, None)
}

/// One object-attribute entry as a [`Change`] (`None` for an unknown
/// attribute type).
///
/// # Safety
/// `a` is an entry as hwloc builds them (strings NUL-terminated or NULL).
unsafe fn change_from_c(a: &hwloc_topology_diff_obj_attr_s) -> Option<Change> {
    // SAFETY: see above; each member is read for its own type.
    let attr = unsafe {
        let s = |p: *mut c_char| c_str(p).map(|v| v.into_owned()).unwrap_or_default();
        match a.diff.generic.type_ {
            DIFF_OBJ_ATTR_SIZE => AttrChange::Size {
                index: a.diff.uint64.index,
                old: a.diff.uint64.oldvalue,
                new: a.diff.uint64.newvalue,
            },
            DIFF_OBJ_ATTR_NAME => AttrChange::Name {
                old: s(a.diff.string.oldvalue),
                new: s(a.diff.string.newvalue),
            },
            DIFF_OBJ_ATTR_INFO => AttrChange::Info {
                name: s(a.diff.string.name),
                old: s(a.diff.string.oldvalue),
                new: s(a.diff.string.newvalue),
            },
            _ => return None,
        }
    };
    Some(Change {
        depth: a.obj_depth,
        index: a.obj_index,
        attr,
    })
}

/// `hwloc_topology_diff_build`: 0 when the diff says everything, 1 when
/// it has too-complex entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_diff_build(
    topology: hwloc_topology_t,
    newtopology: hwloc_topology_t,
    flags: c_ulong,
    diff: *mut hwloc_topology_diff_t,
) -> c_int {
    entry!(topology, -1, |h| {
        // SAFETY: the second handle is under the same contract as the
        // first (entry!'s); each is used in turn.
        let new_h = unsafe { Handle::new(newtopology) };
        // loaded_mut takes the program's in-place edits into the model.
        if h.loaded_mut().is_none() || new_h.loaded_mut().is_none() {
            return fail(libc::EINVAL);
        }
        let (Some(old), Some(new)) = (h.loaded(), new_h.loaded()) else {
            return fail(libc::EINVAL);
        };
        if flags != 0 || diff.is_null() {
            return fail(libc::EINVAL);
        }
        let computed = wloc_xml::diff::compute(&old.model, &new.model);
        let complex = !computed.too_complex.is_empty();
        let Ok(list) = to_c(&ordered(&old.model, computed)) else {
            return fail(libc::ENOMEM);
        };
        // SAFETY: checked non-NULL.
        unsafe { *diff = list };
        c_int::from(complex)
    })
}

/// `hwloc_topology_diff_apply`: all or nothing; `-N` when the N-th entry
/// does not apply.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_diff_apply(
    topology: hwloc_topology_t,
    diff: hwloc_topology_diff_t,
    flags: c_ulong,
) -> c_int {
    entry!(topology, |t: LoadedMut| {
        if flags & !DIFF_APPLY_REVERSE != 0 {
            return fail(libc::EINVAL);
        }
        // SAFETY: a list from hwloc_topology_diff_build/load.
        let (changes, stop) = unsafe { from_c(diff) };
        let mut m = t.model.clone();
        let reverse = flags & DIFF_APPLY_REVERSE != 0;
        if let Err(e) = wloc_xml::diff::apply(&mut m, &changes, reverse) {
            return fail_at(e.hunk);
        }
        if let Some(at) = stop {
            return fail_at(at + 1);
        }
        t.model = m;
        t.sync();
        0
    })
}

/// hwloc's `-N` for the N-th entry (from 1), with `errno` = `EINVAL`.
fn fail_at(n: usize) -> c_int {
    crate::ffi::set_errno(libc::EINVAL);
    -c_int::try_from(n).unwrap_or(c_int::MAX)
}

/// `hwloc_topology_diff_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_diff_destroy(diff: hwloc_topology_diff_t) -> c_int {
    guard(-1, || {
        let mut d = diff;
        while !d.is_null() {
            // SAFETY: entries and strings malloc'ed, as hwloc's are; each
            // member is read for its own type.
            unsafe {
                let next = (*d).generic.next;
                if (*d).generic.type_ == DIFF_OBJ_ATTR {
                    let a = &(*d).obj_attr.diff;
                    if matches!(a.generic.type_, DIFF_OBJ_ATTR_NAME | DIFF_OBJ_ATTR_INFO) {
                        libc::free(a.string.name as *mut c_void);
                        libc::free(a.string.oldvalue as *mut c_void);
                        libc::free(a.string.newvalue as *mut c_void);
                    }
                }
                libc::free(d as *mut c_void);
                d = next;
            }
        }
        0
    })
}

/// Hands a parsed document to C: the list and the malloc'ed refname.
///
/// # Safety
/// `diff` is a place for the list; `refname` NULL or a place.
unsafe fn loaded_diff(
    text: &str,
    diff: *mut hwloc_topology_diff_t,
    refname: *mut *mut c_char,
) -> c_int {
    // As hwloc's reader: entries other than attribute changes are skipped.
    let Ok(d) = wloc_xml::diff::parse_as_hwloc(text) else {
        return fail(libc::EINVAL);
    };
    let entries: Vec<Entry> = d.changes.into_iter().map(Entry::Change).collect();
    let Ok(list) = to_c(&entries) else {
        return fail(libc::ENOMEM);
    };
    // SAFETY: see above.
    unsafe {
        *diff = list;
        if let Some(r) = refname.as_mut() {
            *r = d.refname.as_deref().map_or(null_mut(), c_strdup);
        }
    }
    0
}

/// `hwloc_topology_diff_load_xml`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_diff_load_xml(
    xmlpath: *const c_char,
    diff: *mut hwloc_topology_diff_t,
    refname: *mut *mut c_char,
) -> c_int {
    guard(-1, || {
        // SAFETY: a NUL-terminated path or NULL.
        let Some(path) = (unsafe { crate::ffi::c_path(xmlpath) }) else {
            return fail(libc::EINVAL);
        };
        if diff.is_null() {
            return fail(libc::EINVAL);
        }
        // As every input the library reads: a regular file (a FIFO would
        // block, a device never end) of bounded size, else EINVAL at once.
        let bytes = match wloc_trust::file::read_regular(&path, wloc_xml::MAX_FILE_BYTES) {
            Ok(b) => b,
            Err(wloc_trust::file::ReadError::Io { source, .. }) => {
                return fail(source.raw_os_error().unwrap_or(libc::EINVAL));
            }
            Err(_) => return fail(libc::EINVAL),
        };
        let Ok(text) = String::from_utf8(bytes) else {
            return fail(libc::EINVAL);
        };
        // SAFETY: places checked or given by the caller.
        unsafe { loaded_diff(&text, diff, refname) }
    })
}

/// `hwloc_topology_diff_load_xmlbuffer`: `buflen` counts the terminating
/// NUL, as the export gives it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_diff_load_xmlbuffer(
    xmlbuffer: *const c_char,
    buflen: c_int,
    diff: *mut hwloc_topology_diff_t,
    refname: *mut *mut c_char,
) -> c_int {
    guard(-1, || {
        let Ok(len) = usize::try_from(buflen) else {
            return fail(libc::EINVAL);
        };
        if xmlbuffer.is_null() || len == 0 || diff.is_null() {
            return fail(libc::EINVAL);
        }
        // SAFETY: the caller's buffer holds buflen bytes.
        let bytes = unsafe { std::slice::from_raw_parts(xmlbuffer as *const u8, len) };
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(len);
        let Ok(text) = crate::ffi::try_text(&bytes[..end]) else {
            return fail(libc::ENOMEM);
        };
        // SAFETY: places checked or given by the caller.
        unsafe { loaded_diff(&text, diff, refname) }
    })
}

/// The document for a C list; `None` if it has a too-complex entry
/// (such a diff cannot be written, as in hwloc).
///
/// # Safety
/// `diff` is NULL or a list; `refname` NULL or NUL-terminated.
unsafe fn document(diff: hwloc_topology_diff_t, refname: *const c_char) -> Option<String> {
    // SAFETY: see above.
    let (changes, stop) = unsafe { from_c(diff) };
    if stop.is_some() {
        return None;
    }
    // SAFETY: see above.
    let refname = unsafe { c_str(refname) };
    let xml = wloc_xml::diff::to_xml(&changes, refname.as_deref().unwrap_or(""));
    Some(match refname {
        Some(_) => xml,
        // hwloc writes no refname attribute when none is given.
        None => xml.replacen(" refname=\"\"", "", 1),
    })
}

/// `hwloc_topology_diff_export_xml` (`-` is the standard output).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_diff_export_xml(
    diff: hwloc_topology_diff_t,
    refname: *const c_char,
    xmlpath: *const c_char,
) -> c_int {
    guard(-1, || {
        // SAFETY: a NUL-terminated path or NULL.
        let Some(path) = (unsafe { crate::ffi::c_path(xmlpath) }) else {
            return fail(libc::EINVAL);
        };
        // SAFETY: the caller's list and refname.
        let Some(xml) = (unsafe { document(diff, refname) }) else {
            return fail(libc::EINVAL);
        };
        let written = if path.as_os_str() == "-" {
            use std::io::Write;
            std::io::stdout().write_all(xml.as_bytes())
        } else {
            // Into the file the caller named, as hwloc_topology_export_xml
            // (export.rs says why; docs/trust-model.md, "The C library").
            std::fs::write(&path, xml.as_bytes())
        };
        match written {
            Ok(()) => 0,
            Err(e) => fail(e.raw_os_error().unwrap_or(libc::EINVAL)),
        }
    })
}

/// `hwloc_topology_diff_export_xmlbuffer`: a `malloc`'ed buffer (freed by
/// `hwloc_free_xmlbuffer`), its length counting the terminating NUL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_diff_export_xmlbuffer(
    diff: hwloc_topology_diff_t,
    refname: *const c_char,
    xmlbuffer: *mut *mut c_char,
    buflen: *mut c_int,
) -> c_int {
    guard(-1, || {
        if xmlbuffer.is_null() || buflen.is_null() {
            return fail(libc::EINVAL);
        }
        // SAFETY: the caller's list and refname.
        let Some(xml) = (unsafe { document(diff, refname) }) else {
            return fail(libc::EINVAL);
        };
        let Ok(len) = c_int::try_from(xml.len() + 1) else {
            return fail(libc::ENOMEM);
        };
        let p = c_strdup(&xml);
        if p.is_null() {
            return fail(libc::ENOMEM);
        }
        // SAFETY: both places checked non-NULL.
        unsafe {
            *xmlbuffer = p;
            *buflen = len;
        }
        0
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handle::loaded;
    use crate::test_support::synthetic;
    use crate::topology::{hwloc_topology_destroy, hwloc_topology_dup};
    use std::ffi::{CStr, CString};
    use wloc_core::ObjType;

    fn numa0(t: hwloc_topology_t) -> *mut hwloc_obj {
        // SAFETY: a loaded handle.
        let tt = unsafe { loaded(t) }.unwrap();
        tt.ptr_of(tt.model.objs_by_type(ObjType::NUMANode)[0])
    }

    #[test]
    fn build_apply_reverse_and_xml_round_trip() {
        let t1 = synthetic("pack:2 [numa] pu:2");
        let mut t2 = null_mut();
        // SAFETY: loaded handles, lists from this module.
        unsafe {
            assert_eq!(hwloc_topology_dup(&mut t2, t1), 0);
            let mut d = null_mut();
            assert_eq!(hwloc_topology_diff_build(t1, t2, 0, &mut d), 0);
            assert!(d.is_null());
            // A direct edit of the C object is seen, as in hwloc.
            (*(*numa0(t2)).attr).numanode.local_memory += 4096;
            let root = {
                let tt = loaded(t2).unwrap();
                tt.ptr_of(tt.model.root())
            };
            assert_eq!(
                crate::objects::hwloc_obj_add_info(root, c"Foo".as_ptr(), c"Bar".as_ptr()),
                0
            );
            assert_eq!(hwloc_topology_diff_build(t1, t2, 0, &mut d), 1);
            assert_eq!((*d).generic.type_, DIFF_TOO_COMPLEX);
            assert_eq!(
                hwloc_topology_diff_export_xmlbuffer(d, null_mut(), &mut null_mut(), &mut 0),
                -1
            );
            assert_eq!(hwloc_topology_apply_count(t1, d), -1);
            hwloc_topology_diff_destroy(d);
            // Taken out in place, as hwloc's tools edit infos.
            (*root).infos_count -= 1;
            let last = *(*root).infos.add((*root).infos_count as usize);
            assert_eq!(CStr::from_ptr(last.name).to_bytes(), b"Foo");
            libc::free(last.name as *mut c_void);
            libc::free(last.value as *mut c_void);
            assert_eq!(hwloc_topology_diff_build(t1, t2, 0, &mut d), 0);
            let a = (*d).obj_attr;
            assert_eq!(
                (a.type_, a.diff.generic.type_),
                (DIFF_OBJ_ATTR, DIFF_OBJ_ATTR_SIZE)
            );
            assert_eq!(a.diff.uint64.newvalue - a.diff.uint64.oldvalue, 4096);
            assert!(a.next.is_null());
            // Applying to a copy of t1 gives t2; reversing on t2 gives t1.
            let mut t3 = null_mut();
            assert_eq!(hwloc_topology_dup(&mut t3, t1), 0);
            assert_eq!(hwloc_topology_diff_apply(t3, d, 0), 0);
            let mut d2 = null_mut();
            assert_eq!(hwloc_topology_diff_build(t2, t3, 0, &mut d2), 0);
            assert!(d2.is_null());
            // Applied twice, the old value no longer matches: entry 1 fails.
            assert_eq!(hwloc_topology_diff_apply(t3, d, 0), -1);
            assert_eq!(hwloc_topology_diff_apply(t2, d, DIFF_APPLY_REVERSE), 0);
            assert_eq!(hwloc_topology_diff_build(t1, t2, 0, &mut d2), 0);
            assert!(d2.is_null());
            // XML buffer round trip, with and without a refname.
            let mut buf = null_mut();
            let mut len = 0;
            assert_eq!(
                hwloc_topology_diff_export_xmlbuffer(d, null_mut(), &mut buf, &mut len),
                0
            );
            assert_eq!(len as usize, CStr::from_ptr(buf).to_bytes().len() + 1);
            let mut refname = null_mut();
            assert_eq!(
                hwloc_topology_diff_load_xmlbuffer(buf, len, &mut d2, &mut refname),
                0
            );
            assert!(refname.is_null());
            libc::free(buf as *mut c_void);
            let r = CString::new("foobar").unwrap();
            assert_eq!(
                hwloc_topology_diff_export_xmlbuffer(d2, r.as_ptr(), &mut buf, &mut len),
                0
            );
            hwloc_topology_diff_destroy(d2);
            assert_eq!(
                hwloc_topology_diff_load_xmlbuffer(buf, len, &mut d2, &mut refname),
                0
            );
            assert_eq!(CStr::from_ptr(refname).to_str().unwrap(), "foobar");
            assert_eq!((*d2).obj_attr.diff.uint64.newvalue, a.diff.uint64.newvalue);
            libc::free(refname as *mut c_void);
            libc::free(buf as *mut c_void);
            hwloc_topology_diff_destroy(d2);
            hwloc_topology_diff_destroy(d);
            for t in [t1, t2, t3] {
                hwloc_topology_destroy(t);
            }
        }
    }

    /// Applying a list holding a too-complex entry fails at that entry.
    unsafe fn hwloc_topology_apply_count(t: hwloc_topology_t, d: hwloc_topology_diff_t) -> c_int {
        // SAFETY: the caller's handle and list.
        unsafe { hwloc_topology_diff_apply(t, d, 0) }
    }

    #[test]
    fn ordering_puts_markers_after_subtrees() {
        let t = synthetic("pack:2 pu:2");
        // SAFETY: a loaded handle.
        let m = &unsafe { loaded(t) }.unwrap().model;
        let pu0 = m.objs_by_type(ObjType::PU)[0];
        let pd = m.obj(pu0).depth().to_i32();
        let c = Computed {
            changes: vec![
                Change {
                    depth: pd,
                    index: 0,
                    attr: AttrChange::Name {
                        old: "a".into(),
                        new: "b".into(),
                    },
                },
                Change {
                    depth: 0,
                    index: 0,
                    attr: AttrChange::Name {
                        old: "x".into(),
                        new: "y".into(),
                    },
                },
            ],
            too_complex: vec![wloc_xml::diff::TooComplex {
                depth: 0,
                index: 0,
                reason: String::new(),
            }],
        };
        let o = ordered(m, c);
        assert!(matches!(&o[0], Entry::Change(c) if c.depth == 0));
        assert!(matches!(&o[1], Entry::Change(c) if c.depth == pd));
        assert_eq!(o[2], Entry::TooComplex { depth: 0, index: 0 });
        // SAFETY: the handle from synthetic.
        unsafe { hwloc_topology_destroy(t) };
    }
}
