//! The topology's life and configuration as the C API exposes it:
//! init, flags, sources, type filters, userdata, dup, check, destroy,
//! restriction and object insertion. The handle itself is
//! `crate::handle`'s, the C objects `crate::mirror`'s, the load
//! `crate::load`'s; the public items are re-exported here.

use std::os::raw::{c_char, c_int, c_ulong, c_void};
use std::ptr::null_mut;

use wloc_core::topology::TypeFilter;
use wloc_core::{ObjAttr, ObjId, ObjType, Object, Topology};

use wloc_input::Source as Input;

use crate::ffi::{c_str, fail, guard, set_errno};
use crate::handle::*;
use crate::types::*;

pub use crate::handle::{
    FLAG_DONT_CHANGE_BINDING, FLAG_IMPORT_SUPPORT, FLAG_INCLUDE_DISALLOWED, FLAG_IS_THISSYSTEM,
    FLAG_NO_CPUKINDS, FLAG_NO_DISTANCES, FLAG_NO_MEMATTRS, FLAG_RESTRICT_TO_CPUBINDING,
    FLAG_RESTRICT_TO_MEMBINDING, FLAG_THISSYSTEM_ALLOWED_RESOURCES, hwloc_topology,
    hwloc_topology_t,
};
pub use crate::load::hwloc_topology_load;
use crate::mirror::*;
use crate::source::*;

/// `hwloc_topology_init`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_init(topologyp: *mut hwloc_topology_t) -> c_int {
    guard(-1, || {
        if topologyp.is_null() {
            return fail(libc::EINVAL);
        }
        let t = Box::into_raw(hwloc_topology::new());
        // SAFETY: the caller gives a place for the handle.
        unsafe { *topologyp = t };
        0
    })
}

/// `hwloc_topology_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_destroy(topology: hwloc_topology_t) {
    entry!(topology, (), |h| {
        let Some(t) = h.into_box() else {
            return;
        };
        for s in t.sets {
            crate::types::free_raw(s);
        }
        drop(t);
    })
}

/// `hwloc_topology_abi_check`: 0 when the library's ABI is the
/// application's (hwloc 2.x).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_abi_check(_topology: hwloc_topology_t) -> c_int {
    guard(-1, || 0)
}

/// `hwloc_topology_set_flags`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_set_flags(
    topology: hwloc_topology_t,
    flags: c_ulong,
) -> c_int {
    entry!(topology, -1, |h| {
        let Some(t) = h.get_mut() else {
            return fail(libc::EINVAL);
        };
        if t.loaded {
            return fail(libc::EBUSY);
        }
        // Restricting to the binding needs a topology of this system,
        // which the flags must say (hwloc refuses them alone).
        let restricts = FLAG_RESTRICT_TO_CPUBINDING | FLAG_RESTRICT_TO_MEMBINDING;
        if flags & !ALL_FLAGS != 0 || (flags & restricts != 0 && flags & FLAG_IS_THISSYSTEM == 0) {
            return fail(libc::EINVAL);
        }
        t.flags = flags;
        0
    })
}

/// `hwloc_topology_get_flags`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_get_flags(topology: hwloc_topology_t) -> c_ulong {
    entry!(topology, 0, |h| {
        h.get().map_or(0, |t| t.flags as c_ulong)
    })
}

/// `hwloc_topology_is_thissystem`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_is_thissystem(topology: hwloc_topology_t) -> c_int {
    entry!(topology, 0, |h| {
        h.get().map_or(0, |t| c_int::from(t.model.is_thissystem))
    })
}

fn set_source(h: Handle<'_>, s: Option<Source>) -> c_int {
    let Some(t) = h.get_mut() else {
        return fail(libc::EINVAL);
    };
    if t.loaded {
        return fail(libc::EBUSY);
    }
    match s {
        Some(s) => {
            t.source = s;
            0
        }
        None => fail(libc::EINVAL),
    }
}

/// `hwloc_topology_set_xml`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_set_xml(
    topology: hwloc_topology_t,
    xmlpath: *const c_char,
) -> c_int {
    entry!(topology, -1, |h| {
        // SAFETY: a NUL-terminated path or NULL.
        let Some(path) = (unsafe { crate::ffi::c_path(xmlpath) }) else {
            return set_source(h, None);
        };
        // Read now, as hwloc's XML backend reads it when it is chosen: a
        // file removed or changed before the load does not matter.
        match wloc_xml::read_file(&path) {
            Ok(text) => set_source(h, Some(Source::XmlBuffer(text))),
            Err(e) => {
                crate::ffi::verbose(&format!("hwloc_topology_set_xml: {e}"));
                let missing = std::fs::symlink_metadata(&path).is_err();
                fail(if missing { libc::ENOENT } else { libc::EINVAL })
            }
        }
    })
}

/// `hwloc_topology_set_xmlbuffer`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_set_xmlbuffer(
    topology: hwloc_topology_t,
    buffer: *const c_char,
    size: c_int,
) -> c_int {
    entry!(topology, -1, |h| {
        let s = guard(Err(libc::EINVAL), || {
            if buffer.is_null() || size <= 0 {
                return Err(libc::EINVAL);
            }
            // SAFETY: the caller's buffer holds size bytes (the terminator
            // included, as hwloc's export gives it).
            let bytes = unsafe { std::slice::from_raw_parts(buffer as *const u8, size as usize) };
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            crate::ffi::try_text(&bytes[..end])
                .map(Source::XmlBuffer)
                .map_err(|_| libc::ENOMEM)
        });
        match s {
            Ok(s) => set_source(h, Some(s)),
            Err(e) => fail(e),
        }
    })
}

/// `hwloc_topology_set_synthetic`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_set_synthetic(
    topology: hwloc_topology_t,
    description: *const c_char,
) -> c_int {
    entry!(topology, -1, |h| {
        // SAFETY: a NUL-terminated string or NULL.
        let d = unsafe { c_str(description) }.map(|d| d.into_owned());
        // hwloc checks the description when it is given.
        if let Some(desc) = &d
            && wloc_core::synthetic::parse(desc).is_err()
        {
            return fail(libc::EINVAL);
        }
        set_source(h, d.map(|d| Source::Input(Input::Synthetic(d))))
    })
}

/// `hwloc_topology_set_fsroot`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_set_fsroot(
    topology: hwloc_topology_t,
    fsroot_path: *const c_char,
) -> c_int {
    entry!(topology, -1, |h| {
        // SAFETY: a NUL-terminated path or NULL.
        let p = unsafe { crate::ffi::c_path(fsroot_path) }.map(|p| {
            if p.as_os_str() == "/" {
                Source::THIS_SYSTEM
            } else {
                Source::Input(Input::Fsroot(p, wloc_input::cpuid_beside()))
            }
        });
        set_source(h, p)
    })
}

/// `hwloc_topology_set_pid`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_set_pid(
    topology: hwloc_topology_t,
    pid: libc::pid_t,
) -> c_int {
    entry!(topology, -1, |h| {
        let Some(t) = h.get_mut() else {
            return fail(libc::EINVAL);
        };
        if t.loaded {
            return fail(libc::EBUSY);
        }
        t.pid = pid;
        0
    })
}

/// `hwloc_topology_set_components`: wloc runs no plugin; blacklisting
/// `linux` makes this system's discovery hwloc's `noos` one (a Machine of
/// the online PUs), other names are checked and recorded.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_set_components(
    topology: hwloc_topology_t,
    flags: c_ulong,
    name: *const c_char,
) -> c_int {
    entry!(topology, -1, |h| {
        let Some(t) = h.get_mut() else {
            return fail(libc::EINVAL);
        };
        if t.loaded {
            return fail(libc::EBUSY);
        }
        // HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST is the only flag, and
        // the only use.
        // SAFETY: a NUL-terminated name or NULL.
        let Some(name) = (unsafe { c_str(name) }) else {
            return fail(libc::EINVAL);
        };
        if flags != 1 {
            return fail(libc::EINVAL);
        }
        let base = name.split(':').next().unwrap_or_default();
        if !COMPONENT_NAMES.contains(&base) || (base == "x86" && !X86_BACKEND) {
            return fail(libc::EINVAL);
        }
        t.blacklist.push(base.to_owned());
        0
    })
}

fn filter_from_c(f: c_int) -> Option<TypeFilter> {
    Some(match f {
        0 => TypeFilter::KeepAll,
        1 => TypeFilter::KeepNone,
        2 => TypeFilter::KeepStructure,
        3 => TypeFilter::KeepImportant,
        _ => return None,
    })
}

fn filter_to_c(f: TypeFilter) -> c_int {
    match f {
        TypeFilter::KeepAll => 0,
        TypeFilter::KeepNone => 1,
        TypeFilter::KeepStructure => 2,
        TypeFilter::KeepImportant => 3,
    }
}

fn with_filters(
    h: Handle<'_>,
    f: c_int,
    apply: impl FnOnce(&mut Topology, TypeFilter) -> bool,
) -> c_int {
    let Some(t) = h.get_mut() else {
        return fail(libc::EINVAL);
    };
    if t.loaded {
        return fail(libc::EBUSY);
    }
    let Some(f) = filter_from_c(f) else {
        return fail(libc::EINVAL);
    };
    if apply(&mut t.model, f) {
        0
    } else {
        fail(libc::EINVAL)
    }
}

/// `hwloc_topology_set_type_filter`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_set_type_filter(
    topology: hwloc_topology_t,
    type_: hwloc_obj_type_t,
    filter: c_int,
) -> c_int {
    entry!(topology, -1, |h| {
        with_filters(h, filter, |m, f| {
            type_from_c(type_).is_some_and(|t| m.set_type_filter(t, f).is_ok())
        })
    })
}

/// `hwloc_topology_get_type_filter`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_get_type_filter(
    topology: hwloc_topology_t,
    type_: hwloc_obj_type_t,
    filter: *mut c_int,
) -> c_int {
    entry!(topology, -1, |h| {
        let (Some(t), Some(ty)) = (h.get(), type_from_c(type_)) else {
            return fail(libc::EINVAL);
        };
        if filter.is_null() {
            return fail(libc::EINVAL);
        }
        // SAFETY: the caller gives a place for the filter.
        unsafe { *filter = filter_to_c(t.model.type_filter(ty)) };
        0
    })
}

/// `hwloc_topology_set_all_types_filter`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_set_all_types_filter(
    topology: hwloc_topology_t,
    filter: c_int,
) -> c_int {
    entry!(topology, -1, |h| {
        with_filters(h, filter, |m, f| {
            m.set_all_types_filter(f);
            true
        })
    })
}

/// `hwloc_topology_set_cache_types_filter`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_set_cache_types_filter(
    topology: hwloc_topology_t,
    filter: c_int,
) -> c_int {
    entry!(topology, -1, |h| {
        with_filters(h, filter, |m, f| {
            m.set_cache_types_filter(f);
            true
        })
    })
}

/// `hwloc_topology_set_icache_types_filter`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_set_icache_types_filter(
    topology: hwloc_topology_t,
    filter: c_int,
) -> c_int {
    entry!(topology, -1, |h| {
        with_filters(h, filter, |m, f| {
            m.set_icache_types_filter(f);
            true
        })
    })
}

/// `hwloc_topology_set_io_types_filter`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_set_io_types_filter(
    topology: hwloc_topology_t,
    filter: c_int,
) -> c_int {
    entry!(topology, -1, |h| {
        with_filters(h, filter, |m, f| {
            m.set_io_types_filter(f);
            true
        })
    })
}

/// `hwloc_topology_set_userdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_set_userdata(
    topology: hwloc_topology_t,
    userdata: *const c_void,
) {
    entry!(topology, (), |h| {
        if let Some(t) = h.get_mut() {
            t.userdata = userdata as *mut c_void;
        }
    })
}

/// `hwloc_topology_get_userdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_get_userdata(topology: hwloc_topology_t) -> *mut c_void {
    entry!(topology, std::ptr::null_mut(), |h| {
        h.get().map_or(null_mut(), |t| t.userdata)
    })
}

/// `hwloc_topology_get_support`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_get_support(
    topology: hwloc_topology_t,
) -> *const hwloc_topology_support {
    entry!(topology, std::ptr::null(), |h| {
        h.get().map_or(std::ptr::null(), |t| &t.support as *const _)
    })
}

/// `hwloc_topology_check`: aborts, as hwloc's assertions do, when the
/// topology breaks an invariant.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_check(topology: hwloc_topology_t) {
    entry!(topology, (), |h| {
        let Some(t) = h.loaded() else {
            return;
        };
        if let Err(e) = t.model.check_hwloc() {
            eprintln!("wloc: h.raw() check failed: {}", e.message());
            std::process::abort();
        }
    })
}

/// `hwloc_topology_dup`: a copy with the same objects, userdata pointers
/// and topology userdata.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_dup(
    newtopology: *mut hwloc_topology_t,
    oldtopology: hwloc_topology_t,
) -> c_int {
    entry!(oldtopology, -1, |h| {
        let Some(old) = h.loaded_mut() else {
            return fail(libc::EINVAL);
        };
        let old = &*old;
        if newtopology.is_null() {
            return fail(libc::EINVAL);
        }
        let mut t = hwloc_topology::new();
        t.model = old.model.clone();
        t.loaded = true;
        t.flags = old.flags;
        t.source = old.source.clone();
        t.pid = old.pid;
        t.userdata = old.userdata;
        t.export_cb = old.export_cb;
        t.import_cb = old.import_cb;
        t.sync();
        for (id, n) in &old.nodes {
            if let Some(m) = t.nodes.get_mut(id) {
                m.obj.userdata = n.obj.userdata;
            }
        }
        *t.support_parts = *old.support_parts;
        // SAFETY: the caller gives a place for the handle.
        unsafe { *newtopology = Box::into_raw(t) };
        0
    })
}

/// `hwloc_topology_refresh`: the mirror is always current, nothing to do.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_refresh(topology: hwloc_topology_t) -> c_int {
    entry!(topology, -1, |h| {
        if h.get().is_none() {
            return fail(libc::EINVAL);
        }
        0
    })
}

/// The topology-wide sets, in the order of `hwloc_topology::sets`.
fn topo_set(h: Handle<'_>, i: usize) -> hwloc_const_bitmap_t {
    h.loaded()
        .map_or(std::ptr::null(), |t| t.sets[i] as *const hwloc_bitmap_s)
}

/// `hwloc_topology_get_complete_cpuset`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_get_complete_cpuset(
    topology: hwloc_topology_t,
) -> hwloc_const_bitmap_t {
    entry!(topology, std::ptr::null(), |h| topo_set(h, 0))
}
/// `hwloc_topology_get_topology_cpuset`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_get_topology_cpuset(
    topology: hwloc_topology_t,
) -> hwloc_const_bitmap_t {
    entry!(topology, std::ptr::null(), |h| topo_set(h, 1))
}
/// `hwloc_topology_get_allowed_cpuset`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_get_allowed_cpuset(
    topology: hwloc_topology_t,
) -> hwloc_const_bitmap_t {
    entry!(topology, std::ptr::null(), |h| topo_set(h, 2))
}
/// `hwloc_topology_get_complete_nodeset`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_get_complete_nodeset(
    topology: hwloc_topology_t,
) -> hwloc_const_bitmap_t {
    entry!(topology, std::ptr::null(), |h| topo_set(h, 3))
}
/// `hwloc_topology_get_topology_nodeset`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_get_topology_nodeset(
    topology: hwloc_topology_t,
) -> hwloc_const_bitmap_t {
    entry!(topology, std::ptr::null(), |h| topo_set(h, 4))
}
/// `hwloc_topology_get_allowed_nodeset`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_get_allowed_nodeset(
    topology: hwloc_topology_t,
) -> hwloc_const_bitmap_t {
    entry!(topology, std::ptr::null(), |h| topo_set(h, 5))
}

/// `hwloc_topology_restrict`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_restrict(
    topology: hwloc_topology_t,
    set: hwloc_const_bitmap_t,
    flags: c_ulong,
) -> c_int {
    entry!(topology, |t: LoadedMut| {
        // SAFETY: a bitmap from hwloc_bitmap_alloc or an object's.
        let Some(set) = (unsafe { set.as_ref() }) else {
            return fail(libc::EINVAL);
        };
        let Some(f) = wloc_core::topology::RestrictFlags::from_bits(flags) else {
            return fail(libc::EINVAL);
        };
        let mut m = t.model.clone();
        match m.restrict_with_flags(set.bits(), f) {
            Ok(()) => {
                t.model = m;
                t.sync();
                0
            }
            Err(_) => fail(libc::EINVAL),
        }
    })
}

/// `hwloc_topology_allow`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_allow(
    topology: hwloc_topology_t,
    cpuset: hwloc_const_bitmap_t,
    nodeset: hwloc_const_bitmap_t,
    flags: c_ulong,
) -> c_int {
    entry!(topology, |t: LoadedMut| {
        // As hwloc: EINVAL without HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED.
        if t.flags & FLAG_INCLUDE_DISALLOWED == 0 {
            return fail(libc::EINVAL);
        }
        // As hwloc: ALL and LOCAL_RESTRICTIONS take no set.
        if matches!(flags, 1 | 2) && (!cpuset.is_null() || !nodeset.is_null()) {
            return fail(libc::EINVAL);
        }
        let m = &mut t.model;
        let (cc, cn) = (m.complete_cpuset().clone(), m.complete_nodeset().clone());
        match flags {
            1 => {
                m.allowed_cpuset = cc;
                m.allowed_nodeset = cn;
            }
            2 => {
                if !m.is_thissystem {
                    return fail(libc::EINVAL);
                }
                match wloc_bind::thread_affinity() {
                    Ok(c) => m.allowed_cpuset = &c & &cc,
                    Err(_) => return fail(libc::EINVAL),
                }
            }
            4 => {
                // SAFETY: bitmaps from hwloc_bitmap_alloc or NULL.
                let (c, n) = unsafe { (cpuset.as_ref(), nodeset.as_ref()) };
                if c.is_none() && n.is_none() {
                    return fail(libc::EINVAL);
                }
                if let Some(c) = c {
                    let c = wloc_core::CpuSet::from_bitmap(c.bits().clone());
                    let c = &c & &cc;
                    if c.is_empty() {
                        return fail(libc::EINVAL);
                    }
                    m.allowed_cpuset = c;
                }
                if let Some(n) = n {
                    let n = wloc_core::NodeSet::from_bitmap(n.bits().clone());
                    let n = &n & &cn;
                    if n.is_empty() {
                        return fail(libc::EINVAL);
                    }
                    m.allowed_nodeset = n;
                }
            }
            _ => return fail(libc::EINVAL),
        }
        t.sync();
        0
    })
}

/// Completes the model after an object was added to a loaded topology,
/// then refreshes the mirror.
pub(crate) fn refinish(t: &mut hwloc_topology) -> Result<(), ()> {
    let mut m = t.model.clone();
    match m.finish() {
        Ok(()) => {
            t.model = m;
            t.sync();
            Ok(())
        }
        Err(_) => Err(()),
    }
}

/// `hwloc_topology_insert_misc_object`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_insert_misc_object(
    topology: hwloc_topology_t,
    parent: hwloc_obj_t,
    name: *const c_char,
) -> hwloc_obj_t {
    entry!(topology, null_mut(), |h| {
        let Some(t) = h.loaded_mut() else {
            set_errno(libc::EINVAL);
            return null_mut();
        };
        if !t.model.keeps_type(ObjType::Misc) {
            set_errno(libc::EINVAL);
            return null_mut();
        }
        let Some(pid) = t.id_of(parent) else {
            set_errno(libc::EINVAL);
            return null_mut();
        };
        let mut o = Object::new(ObjType::Misc, None);
        // SAFETY: a NUL-terminated name or NULL.
        o.name = unsafe { c_str(name) }.map(|n| n.into_owned());
        o.gp_index = t.model.alloc_gp_index();
        let gp = o.gp_index;
        if t.model.insert_by_parent(pid, o).is_err() {
            set_errno(libc::EINVAL);
            return null_mut();
        }
        if refinish(t).is_err() {
            set_errno(libc::EINVAL);
            return null_mut();
        }
        t.model
            .obj_by_gp_index(gp)
            .map_or(null_mut(), |id| t.ptr_of(id))
    })
}

/// `hwloc_topology_alloc_group_object`: a Group the caller fills
/// (cpuset, nodeset, subtype, infos, group attributes) before
/// `hwloc_topology_insert_group_object`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_alloc_group_object(
    topology: hwloc_topology_t,
) -> hwloc_obj_t {
    entry!(topology, null_mut(), |h| {
        let Some(t) = h.loaded_mut() else {
            set_errno(libc::EINVAL);
            return null_mut();
        };
        let mut n = Node::new(None);
        n.topo = (t as *mut hwloc_topology).cast();
        n.obj.type_ = ObjType::Group.index() as c_int;
        // As hwloc's: everything else zero (the Group's depth too) and a
        // new global persistent index.
        n.obj.gp_index = t.model.alloc_gp_index();
        let p = &mut n.obj as *mut hwloc_obj;
        t.pending.push(n);
        p
    })
}

/// Reads a pending Group's fields as the caller filled them.
fn group_from_node(n: &Node) -> Object {
    let bits = |b: hwloc_bitmap_t| {
        // SAFETY: NULL or a bitmap from hwloc_bitmap_alloc.
        unsafe { b.as_ref() }.map(|b| b.bits().clone())
    };
    let mut o = Object::new(ObjType::Group, None);
    o.cpuset = bits(n.obj.cpuset).map(wloc_core::CpuSet::from_bitmap);
    o.complete_cpuset = bits(n.obj.complete_cpuset).map(wloc_core::CpuSet::from_bitmap);
    o.nodeset = bits(n.obj.nodeset).map(wloc_core::NodeSet::from_bitmap);
    o.complete_nodeset = bits(n.obj.complete_nodeset).map(wloc_core::NodeSet::from_bitmap);
    // SAFETY: malloc'ed strings or NULL, as hwloc documents for subtype.
    o.subtype = unsafe { c_str(n.obj.subtype) }.map(|s| s.into_owned());
    // SAFETY: as for the subtype.
    o.name = unsafe { c_str(n.obj.name) }.map(|s| s.into_owned());
    o.infos = n.infos_as_model();
    // SAFETY: the group member is the one a Group's attributes use.
    let g = unsafe { n.attr.group };
    o.attr = ObjAttr::Group(wloc_core::object::GroupAttr {
        depth: if g.depth == u32::MAX { 0 } else { g.depth },
        kind: g.kind,
        subkind: g.subkind,
        dont_merge: g.dont_merge != 0,
    });
    o
}

/// `hwloc_topology_insert_group_object`, as hwloc 2.14's: the Group goes
/// where its sets say and the caller's own pointer is returned, the object
/// keeping its address, userdata and the bitmaps the caller set; when an
/// object with the same sets is there already, the Group is merged into
/// it, freed, and that object returned; when it cannot be inserted (no
/// set, Groups filtered out, a conflict with the tree) it is freed and
/// NULL returned.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_insert_group_object(
    topology: hwloc_topology_t,
    group: hwloc_obj_t,
) -> hwloc_obj_t {
    entry!(topology, null_mut(), |h| {
        let Some(t) = h.loaded_mut() else {
            set_errno(libc::EINVAL);
            return null_mut();
        };
        let Some(pos) = t.pending.iter().position(|n| std::ptr::eq(&n.obj, group)) else {
            set_errno(libc::EINVAL);
            return null_mut();
        };
        // From here on the Group is the library's to keep or free.
        let node = t.pending.swap_remove(pos);
        match insert_group(t, &node) {
            Ok(GroupPlace::Inserted(id)) => {
                // The caller's object becomes the model object's mirror.
                let mut node = node;
                node.id = Some(id);
                t.nodes.insert(id, node);
                t.sync();
                t.ptr_of(id)
            }
            Ok(GroupPlace::Merged(id)) => {
                drop(node);
                t.ptr_of(id)
            }
            Err(()) => {
                drop(node);
                set_errno(libc::EINVAL);
                null_mut()
            }
        }
    })
}

/// `hwloc_topology_free_group_object` (hwloc 2.12): frees a Group from
/// `hwloc_topology_alloc_group_object` that will not be inserted.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_free_group_object(
    topology: hwloc_topology_t,
    group: hwloc_obj_t,
) -> c_int {
    entry!(topology, |t: LoadedMut| {
        // Only a Group this topology handed out and still holds: anything
        // else is refused, never freed.
        let Some(pos) = t.pending.iter().position(|n| std::ptr::eq(&n.obj, group)) else {
            return fail(libc::EINVAL);
        };
        drop(t.pending.swap_remove(pos));
        0
    })
}

/// `hwloc_obj_set_subtype` (hwloc 2.11): replaces the object's subtype
/// with a copy of `subtype` (NULL removes it).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_obj_set_subtype(
    topology: hwloc_topology_t,
    obj: hwloc_obj_t,
    subtype: *const c_char,
) -> c_int {
    entry!(topology, -1, |h| {
        if h.get().is_none() || obj.is_null() {
            return fail(libc::EINVAL);
        }
        let copy = if subtype.is_null() {
            null_mut()
        } else {
            // SAFETY: a NUL-terminated string (the caller's contract).
            let c = unsafe { libc::strdup(subtype) };
            if c.is_null() {
                return fail(libc::ENOMEM);
            }
            c
        };
        // SAFETY: the caller's object; its subtype is malloc'ed or NULL,
        // as hwloc documents (it frees it too). Only the field inside the
        // struct is touched; the model takes it as it takes any edit of
        // the C fields (`pull_from_c`).
        unsafe {
            libc::free((*obj).subtype as *mut c_void);
            (*obj).subtype = copy;
        }
        0
    })
}

/// `hwloc_obj_add_other_obj_sets`: ORs each set `src` has into `dst`'s
/// (allocating it), to build a Group's sets from the objects it will hold.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_obj_add_other_obj_sets(dst: hwloc_obj_t, src: hwloc_obj_t) -> c_int {
    guard(-1, || {
        if dst.is_null() || src.is_null() {
            return fail(libc::EINVAL);
        }
        // SAFETY: two objects of the caller's (maybe the same one); their
        // set fields are NULL or bitmaps of this library
        // (hwloc_bitmap_alloc), as hwloc requires. The sets of `src` are
        // read as pointers first, so no reference aliases `dst`.
        let from = unsafe {
            [
                (*src).cpuset,
                (*src).complete_cpuset,
                (*src).nodeset,
                (*src).complete_nodeset,
            ]
        };
        // SAFETY: as above.
        let to = unsafe {
            [
                &raw mut (*dst).cpuset,
                &raw mut (*dst).complete_cpuset,
                &raw mut (*dst).nodeset,
                &raw mut (*dst).complete_nodeset,
            ]
        };
        for (to, from) in to.into_iter().zip(from) {
            if from.is_null() {
                continue;
            }
            // SAFETY: `to` points at a field of `dst` (see above).
            unsafe {
                if (*to).is_null() {
                    *to = crate::types::new_raw(wloc_core::Bitmap::new());
                } else if *to == from {
                    continue; // the same bitmap: OR-ing changes nothing
                }
                let bits = (*from).bits() | (**to).bits();
                (**to).set_bits(bits);
            }
        }
        0
    })
}

/// Where [`insert_group`] put a Group.
enum GroupPlace {
    /// In the tree under this id: the caller's object stands for it.
    Inserted(ObjId),
    /// Merged into this existing object.
    Merged(ObjId),
}

/// Inserts the Group `node` describes into the model (which is left as it
/// was on failure); the mirror is synced but for the Group's own node.
fn insert_group(t: &mut hwloc_topology, node: &Node) -> Result<GroupPlace, ()> {
    let mut o = group_from_node(node);
    // Sets the caller left out are derived as hwloc does: a nodeset
    // only gives the PUs of those nodes.
    // An empty set counts as none, as in hwloc.
    let empty = |c: &Option<wloc_core::CpuSet>| c.as_ref().is_none_or(|c| c.is_empty());
    if empty(&o.cpuset)
        && empty(&o.complete_cpuset)
        && let Some(ns) = o.nodeset.clone().or_else(|| o.complete_nodeset.clone())
    {
        let mut cs = wloc_core::CpuSet::new();
        for n in t.model.objs_by_type(ObjType::NUMANode) {
            let no = t.model.obj(n);
            if no.os_index.is_some_and(|i| ns.is_set(i))
                && let Some(c) = &no.cpuset
            {
                cs = &cs | c;
            }
        }
        o.cpuset = Some(cs);
    }
    // Each set is narrowed to the machine's, as hwloc does: a wider
    // complete set or nodeset would reach past the tree (indexes of
    // nodes or CPUs that are not there).
    let topo_cpuset = t.model.cpuset().clone();
    if let Some(c) = &mut o.cpuset {
        *c = &*c & &topo_cpuset;
    }
    if let Some(c) = &mut o.complete_cpuset {
        *c = &*c & t.model.complete_cpuset();
    }
    if let Some(n) = &mut o.nodeset {
        *n = &*n & t.model.nodeset();
    }
    if let Some(n) = &mut o.complete_nodeset {
        *n = &*n & t.model.complete_nodeset();
    }
    if o.complete_cpuset.is_none() {
        o.complete_cpuset = o.cpuset.clone();
    }
    // Only a complete cpuset given: the Group's cpuset is what of it the
    // machine has (hwloc places such a Group by its complete set).
    if empty(&o.cpuset) {
        o.cpuset = o.complete_cpuset.as_ref().map(|c| c & &topo_cpuset);
    }
    if o.cpuset.as_ref().is_none_or(|c| c.is_empty()) || !t.model.keeps_type(ObjType::Group) {
        return Err(());
    }
    // hwloc compares the Group with the root by complete cpusets when it
    // has one (hwloc_obj_cmp_sets): a Group not strictly inside the root
    // is merged into the root, which is returned.
    let key = o.complete_cpuset.as_ref().or(o.cpuset.as_ref());
    let root_set = t.model.complete_cpuset();
    if key.is_some_and(|k| !k.is_included_in(root_set) || k == root_set) {
        return Ok(GroupPlace::Merged(t.model.root()));
    }
    let cpuset = o.cpuset.clone();
    o.gp_index = node.obj.gp_index;
    let gp = o.gp_index;
    let mut m = t.model.clone();
    let placed = match m.insert_by_cpuset(o) {
        Ok(Some(i)) => i,
        _ => return Err(()),
    };
    if m.finish().is_err() {
        return Err(());
    }
    // Inserting a Group never removes an object that was there: callers
    // hold pointers to them (hwloc keeps every one). Sets that do not
    // agree with each other could make completion drop one; refuse those.
    // Objects are compared by id (the model never moves one): a Group
    // merged into an existing Group of a higher kind gives it its contents,
    // its gp_index among them, as in hwloc, and the existing one stays.
    if t.model.ids().any(|i| m.get(i).is_none()) {
        return Err(());
    }
    t.model = m;
    // The Group itself, if it is still in the tree after completion.
    if let wloc_core::topology::Inserted::New(id) = placed
        && t.model.get(id).is_some_and(|o| o.gp_index == gp)
    {
        return Ok(GroupPlace::Inserted(id));
    }
    t.sync();
    // The object it was merged into (an identical one already there, as
    // hwloc returns).
    t.model
        .get(placed.id())
        .map(|_| placed.id())
        .or_else(|| cpuset.as_ref().and_then(|c| t.model.obj_covering_cpuset(c)))
        .map(GroupPlace::Merged)
        .ok_or(())
}

/// `hwloc_topology_set_userdata_export_callback`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_set_userdata_export_callback(
    topology: hwloc_topology_t,
    export_cb: Option<ExportCallback>,
) {
    entry!(topology, (), |h| {
        if let Some(t) = h.get_mut() {
            t.export_cb = export_cb;
        }
    })
}

/// `hwloc_topology_set_userdata_import_callback`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_set_userdata_import_callback(
    topology: hwloc_topology_t,
    import_cb: Option<ImportCallback>,
) {
    entry!(topology, (), |h| {
        if let Some(t) = h.get_mut() {
            t.import_cb = import_cb;
        }
    })
}

/// The loaded model behind a handle (for tests and the property checks).
///
/// # Safety
/// `topology` is a live handle.
pub unsafe fn model<'a>(topology: hwloc_topology_t) -> Option<&'a Topology> {
    // SAFETY: see above.
    unsafe { loaded(topology) }.map(|t| &t.model)
}

#[cfg(test)]
mod tests {
    use std::ffi::CString;
    use std::ptr::null_mut;

    use super::*;
    use crate::bitmap::{hwloc_bitmap_alloc, hwloc_bitmap_set_range};
    use crate::load::hwloc_topology_load;
    use crate::objects::hwloc_topology_get_depth;
    use crate::test_support::{objs_of, synthetic};
    use std::ffi::CStr;

    /// hwloc reads the file when the XML source is chosen: a file gone
    /// before the load does not matter, a missing one fails at once.
    #[test]
    fn the_xml_file_is_read_when_chosen() {
        let dir = std::env::temp_dir().join(format!("wloc-capi-set-xml-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("t.xml");
        let model = wloc_core::synthetic::parse("pack:2 core:2 pu:1")
            .unwrap()
            .build(Topology::default())
            .unwrap();
        std::fs::write(&file, wloc_xml::export(&model, wloc_xml::XmlVersion::V2)).unwrap();
        let path = CString::new(file.to_str().unwrap()).unwrap();
        let mut t = null_mut();
        // SAFETY: a fresh handle and NUL-terminated paths.
        unsafe {
            assert_eq!(hwloc_topology_init(&mut t), 0);
            assert_eq!(hwloc_topology_set_xml(t, path.as_ptr()), 0);
            std::fs::remove_file(&file).unwrap();
            assert_eq!(hwloc_topology_load(t), 0);
            assert_eq!(model_of(t).objs_by_type(wloc_core::ObjType::Core).len(), 4);
            hwloc_topology_destroy(t);

            assert_eq!(hwloc_topology_init(&mut t), 0);
            assert_eq!(hwloc_topology_set_xml(t, path.as_ptr()), -1);
            assert_eq!(*libc::__errno_location(), libc::ENOENT);
            hwloc_topology_destroy(t);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn model_of<'a>(t: hwloc_topology_t) -> &'a Topology {
        // SAFETY: a loaded handle of the test's.
        unsafe { model(t) }.unwrap()
    }

    /// A Group of this topology covering PUs `first..=last`, of `kind`,
    /// with `subtype`.
    ///
    /// # Safety
    /// `t` is a loaded handle.
    unsafe fn group(
        t: hwloc_topology_t,
        first: i32,
        last: i32,
        kind: u32,
        subtype: &str,
    ) -> hwloc_obj_t {
        let st = std::ffi::CString::new(subtype).unwrap();
        // SAFETY: the handle is loaded; the Group is the library's own.
        unsafe {
            let g = hwloc_topology_alloc_group_object(t);
            assert!(!g.is_null());
            let set = hwloc_bitmap_alloc();
            assert_eq!(hwloc_bitmap_set_range(set, first as _, last), 0);
            (*g).cpuset = set;
            (*(*g).attr).group.kind = kind;
            assert_eq!(hwloc_obj_set_subtype(t, g, st.as_ptr()), 0);
            g
        }
    }

    /// The subtype of an object of the library.
    fn subtype(o: hwloc_obj_t) -> String {
        // SAFETY: a live object; its subtype is NULL or a C string.
        unsafe { CStr::from_ptr((*o).subtype) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_group_like_an_existing_group_returns_that_group_updated_by_a_lower_kind() {
        let t = synthetic("pack:4 [numa] pu:4");
        // SAFETY: a loaded handle, its own Groups.
        unsafe {
            // Packages 1 and 2 (PUs 4 to 11), of the highest kind.
            let first = hwloc_topology_insert_group_object(t, group(t, 4, 11, u32::MAX, "first"));
            assert!(!first.is_null());
            assert_eq!(hwloc_topology_get_depth(t), 4);
            let gp = (*first).gp_index;
            // The same sets with a lower kind: its contents replace the
            // first Group's, which stays the object (hwloc 2.14).
            let second = group(t, 4, 11, 0, "second");
            let second_gp = (*second).gp_index;
            let res = hwloc_topology_insert_group_object(t, second);
            assert_eq!(res, first);
            assert_eq!(subtype(res), "second");
            assert_eq!((*res).gp_index, second_gp);
            assert_ne!(second_gp, gp);
            // A higher kind again: dropped, the Group unchanged.
            let res = hwloc_topology_insert_group_object(t, group(t, 4, 11, u32::MAX, "third"));
            assert_eq!(res, first);
            assert_eq!(subtype(res), "second");
            assert_eq!(hwloc_topology_get_depth(t), 4);
            assert_eq!(objs_of(t, ObjType::Group), vec![first]);
            // A Group as large as the machine is the root; the NUMA nodes
            // stay with their packages.
            let root = hwloc_topology_insert_group_object(t, group(t, 0, 15, 0, "all"));
            assert_eq!(root, objs_of(t, ObjType::Machine)[0]);
            for p in objs_of(t, ObjType::Package) {
                assert_eq!((*p).memory_arity, 1);
            }
            hwloc_topology_destroy(t);
        }
    }
}
