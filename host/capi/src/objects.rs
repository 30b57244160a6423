//! Object types, levels and depths, objects by depth, type and attribute
//! strings, infos, and the traversal functions hwloc exports (the rest of
//! `hwloc/helper.h` is inline and walks the C mirror).

use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_uint, c_ulong};
use std::ptr::null_mut;
use std::sync::OnceLock;

use wloc_core::object::Depth;
use wloc_core::topology::{SameLocalityError, TypeDepth};
use wloc_core::units::memory_size;
use wloc_core::{ObjKind, ObjType};

use crate::ffi::{c_str, fail, guard, set_errno, snprintf_out};
use crate::handle::{Handle, hwloc_topology_t};
use crate::mirror::{Node, type_from_c};
use crate::types::*;

/// `HWLOC_TYPE_DEPTH_UNKNOWN`.
const DEPTH_UNKNOWN: c_int = -1;
/// `HWLOC_TYPE_DEPTH_MULTIPLE`.
const DEPTH_MULTIPLE: c_int = -2;
/// `HWLOC_TYPE_UNORDERED`.
const TYPE_UNORDERED: c_int = c_int::MAX;

fn type_depth_to_c(d: TypeDepth) -> c_int {
    match d {
        TypeDepth::Depth(d) => d.to_i32(),
        TypeDepth::Unknown => DEPTH_UNKNOWN,
        TypeDepth::Multiple => DEPTH_MULTIPLE,
    }
}

/// `hwloc_topology_get_depth`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_get_depth(topology: hwloc_topology_t) -> c_int {
    entry!(topology, 0, |h| {
        match h.loaded() {
            Some(t) => t.model.depth() as c_int,
            // Before a load (or after a failed one) hwloc's topology is its
            // root Machine alone: one level.
            None => h.get().map_or(0, |_| 1),
        }
    })
}

/// The root Machine an unloaded topology shows at depth 0, as hwloc's
/// does before a load and after a failed one (programs free their
/// userdata from `hwloc_get_root_obj` on their error paths).
fn unloaded_root(h: Handle<'_>, depth: c_int, idx: c_uint) -> hwloc_obj_t {
    match h.get() {
        Some(t) if depth == 0 && idx == 0 => t.ptr_of(t.model.root()),
        _ => null_mut(),
    }
}

/// `hwloc_get_type_depth`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_get_type_depth(
    topology: hwloc_topology_t,
    type_: hwloc_obj_type_t,
) -> c_int {
    entry!(topology, DEPTH_UNKNOWN, |h| {
        let (Some(t), Some(ty)) = (h.loaded(), type_from_c(type_)) else {
            return DEPTH_UNKNOWN;
        };
        type_depth_to_c(t.model.type_depth(ty))
    })
}

/// `hwloc_get_memory_parents_depth`: the depth of the normal parents of
/// NUMA nodes, or `HWLOC_TYPE_DEPTH_MULTIPLE` when they differ.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_get_memory_parents_depth(topology: hwloc_topology_t) -> c_int {
    entry!(topology, DEPTH_UNKNOWN, |h| {
        let Some(t) = h.loaded() else {
            return DEPTH_UNKNOWN;
        };
        let m = &t.model;
        let mut depth = DEPTH_UNKNOWN;
        for &n in m.level(Depth::NumaNode) {
            // Up through memory-side caches to the first normal object.
            let mut p = m.obj(n).parent();
            while let Some(id) = p {
                if m.obj(id).kind() == ObjKind::Normal {
                    break;
                }
                p = m.obj(id).parent();
            }
            let Some(p) = p else { continue };
            let d = m.obj(p).depth().to_i32();
            if depth == DEPTH_UNKNOWN {
                depth = d;
            } else if depth != d {
                return DEPTH_MULTIPLE;
            }
        }
        depth
    })
}

/// The model depth of hwloc's integer depth, if the topology has it.
pub(crate) fn depth_from_c(t: &wloc_core::Topology, depth: c_int) -> Option<Depth> {
    let d = Depth::from_i64(i64::from(depth))?;
    match d {
        Depth::Normal(n) if n >= t.depth() => None,
        d => Some(d),
    }
}

/// `hwloc_get_depth_type`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_get_depth_type(
    topology: hwloc_topology_t,
    depth: c_int,
) -> hwloc_obj_type_t {
    entry!(topology, -1, |h| {
        let Some(t) = h.loaded() else {
            return -1;
        };
        let special = match depth {
            -3 => Some(ObjType::NUMANode),
            -4 => Some(ObjType::Bridge),
            -5 => Some(ObjType::PCIDevice),
            -6 => Some(ObjType::OSDevice),
            -7 => Some(ObjType::Misc),
            -8 => Some(ObjType::MemCache),
            _ => None,
        };
        if let Some(s) = special {
            return s.index() as c_int;
        }
        depth_from_c(&t.model, depth)
            .and_then(|d| t.model.depth_type(d))
            .map_or(-1, |ty| ty.index() as c_int)
    })
}

/// `hwloc_get_nbobjs_by_depth`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_get_nbobjs_by_depth(
    topology: hwloc_topology_t,
    depth: c_int,
) -> c_uint {
    entry!(topology, 0, |h| {
        let Some(t) = h.loaded() else {
            return c_uint::from(!unloaded_root(h, depth, 0).is_null());
        };
        depth_from_c(&t.model, depth).map_or(0, |d| t.model.level(d).len() as c_uint)
    })
}

/// `hwloc_get_obj_by_depth`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_get_obj_by_depth(
    topology: hwloc_topology_t,
    depth: c_int,
    idx: c_uint,
) -> hwloc_obj_t {
    entry!(topology, null_mut(), |h| {
        let Some(t) = h.loaded() else {
            return unloaded_root(h, depth, idx);
        };
        depth_from_c(&t.model, depth)
            .and_then(|d| t.model.level(d).get(idx as usize).copied())
            .map_or(null_mut(), |id| t.ptr_of(id))
    })
}

/// Names of the types, NUL-terminated, in hwloc's enumeration order.
fn type_names() -> &'static [CString] {
    static NAMES: OnceLock<Vec<CString>> = OnceLock::new();
    NAMES.get_or_init(|| {
        ObjType::ALL
            .iter()
            .map(|t| CString::new(t.xml_name()).expect("type names hold no NUL"))
            .chain(std::iter::once(CString::new("Unknown").expect("no NUL")))
            .collect()
    })
}

/// `hwloc_obj_type_string`.
#[unsafe(no_mangle)]
pub extern "C" fn hwloc_obj_type_string(type_: hwloc_obj_type_t) -> *const c_char {
    guard(std::ptr::null(), || {
        let names = type_names();
        let i = type_from_c(type_).map_or(names.len() - 1, |t| t.index());
        names[i].as_ptr()
    })
}

fn kind_is(type_: hwloc_obj_type_t, f: impl Fn(ObjType) -> bool) -> c_int {
    c_int::from(type_from_c(type_).is_some_and(f))
}

/// `hwloc_obj_type_is_normal`.
#[unsafe(no_mangle)]
pub extern "C" fn hwloc_obj_type_is_normal(type_: hwloc_obj_type_t) -> c_int {
    guard(0, || kind_is(type_, |t| t.kind() == ObjKind::Normal))
}
/// `hwloc_obj_type_is_io`.
#[unsafe(no_mangle)]
pub extern "C" fn hwloc_obj_type_is_io(type_: hwloc_obj_type_t) -> c_int {
    guard(0, || kind_is(type_, |t| t.kind() == ObjKind::Io))
}
/// `hwloc_obj_type_is_memory`.
#[unsafe(no_mangle)]
pub extern "C" fn hwloc_obj_type_is_memory(type_: hwloc_obj_type_t) -> c_int {
    guard(0, || kind_is(type_, |t| t.kind() == ObjKind::Memory))
}
/// `hwloc_obj_type_is_cache`: CPU caches, data, unified or instruction.
#[unsafe(no_mangle)]
pub extern "C" fn hwloc_obj_type_is_cache(type_: hwloc_obj_type_t) -> c_int {
    guard(0, || kind_is(type_, ObjType::is_cache))
}
/// `hwloc_obj_type_is_dcache`.
#[unsafe(no_mangle)]
pub extern "C" fn hwloc_obj_type_is_dcache(type_: hwloc_obj_type_t) -> c_int {
    guard(0, || kind_is(type_, ObjType::is_dcache))
}
/// `hwloc_obj_type_is_icache`.
#[unsafe(no_mangle)]
pub extern "C" fn hwloc_obj_type_is_icache(type_: hwloc_obj_type_t) -> c_int {
    guard(0, || kind_is(type_, ObjType::is_icache))
}

/// `hwloc_compare_types`: negative when `type1` contains `type2`'s
/// objects, positive the other way, `HWLOC_TYPE_UNORDERED` when the two
/// cannot be compared.
#[unsafe(no_mangle)]
pub extern "C" fn hwloc_compare_types(type1: hwloc_obj_type_t, type2: hwloc_obj_type_t) -> c_int {
    guard(TYPE_UNORDERED, || {
        let (Some(a), Some(b)) = (type_from_c(type1), type_from_c(type2)) else {
            return TYPE_UNORDERED;
        };
        match a.compare(b) {
            Some(std::cmp::Ordering::Less) => -1,
            Some(std::cmp::Ordering::Equal) => 0,
            Some(std::cmp::Ordering::Greater) => 1,
            None => TYPE_UNORDERED,
        }
    })
}

/// What `hwloc_type_sscanf` reads besides the type: the attributes it
/// fills.
struct ParsedType {
    obj_type: ObjType,
    cache_type: Option<c_int>,
    group_depth: Option<u32>,
    bridge_upstream: Option<c_int>,
    osdev: Option<u32>,
}

fn parse_type(s: &str) -> Option<ParsedType> {
    let spec = wloc_locality::types::parse_type(s)?;
    let t = spec.obj_type;
    let lower = s.to_ascii_lowercase();
    // Caches say their kind after the level: l2d is data, l1i instruction.
    let cache_type = t.is_cache().then(|| {
        let after = lower
            .trim_start_matches('l')
            .trim_start_matches(|c: char| c.is_ascii_digit());
        match after.as_bytes().first() {
            Some(b'i') => 2,
            Some(b'd') => 1,
            _ => 0,
        }
    });
    let bridge_upstream = (t == ObjType::Bridge).then(|| {
        if lower.starts_with("hostbridge") {
            0
        } else if lower.starts_with("pcibridge") {
            1
        } else {
            -1
        }
    });
    Some(ParsedType {
        obj_type: t,
        cache_type,
        group_depth: spec.group_depth,
        bridge_upstream,
        osdev: spec.osdev,
    })
}

/// `hwloc_type_sscanf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_type_sscanf(
    string: *const c_char,
    typep: *mut hwloc_obj_type_t,
    attrp: *mut hwloc_obj_attr_u,
    attrsize: usize,
) -> c_int {
    guard(-1, || {
        // SAFETY: a NUL-terminated string or NULL.
        let Some(s) = (unsafe { c_str(string) }) else {
            return fail(libc::EINVAL);
        };
        let Some(p) = parse_type(&s) else {
            return fail(libc::EINVAL);
        };
        if !typep.is_null() {
            // SAFETY: the caller gives a place for the type.
            unsafe { *typep = p.obj_type.index() as c_int };
        }
        if attrp.is_null() {
            return 0;
        }
        // SAFETY: the caller's union holds attrsize bytes; each member is
        // written only when that many bytes are there, as hwloc does.
        unsafe {
            if let Some(ct) = p.cache_type {
                if attrsize >= std::mem::size_of::<hwloc_cache_attr_s>() {
                    (*attrp).cache.depth = p.obj_type.cache_level().unwrap_or(0);
                    (*attrp).cache.type_ = ct;
                }
            } else if p.obj_type == ObjType::Group {
                if attrsize >= std::mem::size_of::<hwloc_group_attr_s>() {
                    (*attrp).group.depth = p.group_depth.unwrap_or(u32::MAX);
                }
            } else if let Some(up) = p.bridge_upstream {
                if attrsize >= std::mem::size_of::<hwloc_bridge_attr_s>() {
                    (*attrp).bridge.upstream_type = up;
                    (*attrp).bridge.downstream_type = 1;
                }
            } else if p.obj_type == ObjType::OSDevice
                && attrsize >= std::mem::size_of::<hwloc_osdev_attr_s>()
            {
                (*attrp).osdev.type_ = p.osdev.map_or(-1, |c| c as c_int);
            }
        }
        0
    })
}

/// `hwloc_type_sscanf_as_depth`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_type_sscanf_as_depth(
    string: *const c_char,
    typep: *mut hwloc_obj_type_t,
    topology: hwloc_topology_t,
    depthp: *mut c_int,
) -> c_int {
    entry!(topology, -1, |h| {
        // SAFETY: a NUL-terminated string or NULL.
        let (Some(s), Some(t)) = (unsafe { c_str(string) }, h.loaded()) else {
            return fail(libc::EINVAL);
        };
        let Some(p) = parse_type(&s) else {
            return fail(libc::EINVAL);
        };
        let m = &t.model;
        let mut depth = type_depth_to_c(m.type_depth(p.obj_type));
        if p.obj_type == ObjType::Group
            && depth == DEPTH_MULTIPLE
            && let Some(gd) = p.group_depth
        {
            depth = DEPTH_UNKNOWN;
            for (l, level) in m.normal_levels().iter().enumerate() {
                let o = level.first().map(|&id| m.obj(id));
                if o.is_some_and(|o| {
                    o.obj_type == ObjType::Group && o.group().is_some_and(|g| g.depth == gd)
                }) {
                    depth = l as c_int;
                    break;
                }
            }
        }
        // SAFETY: the caller gives places for the results (typep may be NULL).
        unsafe {
            if !typep.is_null() {
                *typep = p.obj_type.index() as c_int;
            }
            if !depthp.is_null() {
                *depthp = depth;
            }
        }
        0
    })
}

/// The type name of a C object, as `hwloc_obj_type_snprintf` prints it.
///
/// # Safety
/// `obj` points to a valid object whose `attr` is valid.
unsafe fn type_snprintf(obj: &hwloc_obj, verbose: bool) -> String {
    let Some(t) = type_from_c(obj.type_) else {
        return String::new();
    };
    // SAFETY: objects' attr points to their attribute union.
    let attr = unsafe { obj.attr.as_ref() };
    match t {
        t if t.is_cache() => {
            // SAFETY: caches use the cache member.
            let c = attr.map(|a| unsafe { a.cache }).unwrap_or_default();
            let letter = match c.type_ {
                1 => "d",
                2 => "i",
                _ => "",
            };
            format!("L{}{letter}{}", c.depth, if verbose { "Cache" } else { "" })
        }
        ObjType::Group => {
            // SAFETY: Groups use the group member.
            let depth = attr.map_or(u32::MAX, |a| unsafe { a.group.depth });
            if depth == u32::MAX {
                "Group".into()
            } else {
                format!("Group{depth}")
            }
        }
        ObjType::Bridge => {
            // SAFETY: bridges use the bridge member.
            let up = attr.map_or(0, |a| unsafe { a.bridge.upstream_type });
            if up == 1 { "PCIBridge" } else { "HostBridge" }.into()
        }
        ObjType::PCIDevice => "PCI".into(),
        ObjType::OSDevice => {
            // SAFETY: OS devices use the osdev member.
            let code = attr.map_or(-1, |a| unsafe { a.osdev.type_ });
            match code {
                0 => "Block",
                1 => "GPU",
                2 if verbose => "Network",
                2 => "Net",
                3 => "OpenFabrics",
                4 => "DMA",
                5 if verbose => "Co-Processor",
                5 => "CoProc",
                _ => "",
            }
            .into()
        }
        t => t.xml_name().into(),
    }
}

/// `hwloc_obj_type_snprintf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_obj_type_snprintf(
    string: *mut c_char,
    size: usize,
    obj: hwloc_obj_t,
    verbose: c_int,
) -> c_int {
    guard(-1, || {
        // SAFETY: NULL or a valid object.
        let Some(o) = (unsafe { obj.as_ref() }) else {
            return fail(libc::EINVAL);
        };
        // SAFETY: a valid object; the caller's buffer holds size bytes.
        unsafe { snprintf_out(string, size, &type_snprintf(o, verbose != 0)) }
    })
}

/// `hwloc_pci_class_string` as a Rust string.
fn pci_class(class_id: u16) -> &'static str {
    wloc_core::pci::class_string(class_id)
}

fn pci_busid(p: &hwloc_pcidev_attr_s, sep: &str) -> String {
    let link = if p.linkspeed != 0.0 {
        format!("{sep}link={:.2}GB/s", p.linkspeed)
    } else {
        String::new()
    };
    format!(
        "busid={:04x}:{:02x}:{:02x}.{:01x}{sep}id={:04x}:{:04x}{sep}class={:04x}({}){link}",
        p.domain,
        p.bus,
        p.dev,
        p.func,
        p.vendor_id,
        p.device_id,
        p.class_id,
        pci_class(p.class_id)
    )
}

/// The attributes of a C object as `hwloc_obj_attr_snprintf` prints them.
///
/// # Safety
/// `obj` is a valid object (attr, infos valid).
unsafe fn attr_snprintf(obj: &hwloc_obj, sep: &str, verbose: bool) -> String {
    let t = type_from_c(obj.type_);
    // SAFETY: objects' attr points to their attribute union.
    let attr = unsafe { obj.attr.as_ref() };
    let mut parts: Vec<String> = Vec::new();
    let local = match (t, attr) {
        // SAFETY: NUMA nodes use the numanode member.
        (Some(ObjType::NUMANode), Some(a)) => unsafe { a.numanode.local_memory },
        _ => 0,
    };
    if verbose {
        if local != 0 {
            parts.push(format!(
                "local={}{sep}total={}",
                memory_size(local, true),
                memory_size(obj.total_memory, true)
            ));
        } else if obj.total_memory != 0 {
            parts.push(format!("total={}", memory_size(obj.total_memory, true)));
        }
    } else if local != 0 {
        parts.push(memory_size(local, false));
    }
    match (t, attr) {
        (Some(ty), Some(a)) if ty.is_cache() || ty == ObjType::MemCache => {
            // SAFETY: caches use the cache member.
            let c = unsafe { a.cache };
            if verbose {
                let assoc = match c.associativity {
                    -1 => format!("{sep}fully-associative"),
                    0 => String::new(),
                    n => format!("{sep}ways={n}"),
                };
                parts.push(format!(
                    "size={}{sep}linesize={}{assoc}",
                    memory_size(c.size, true),
                    c.linesize
                ));
            } else {
                parts.push(memory_size(c.size, false));
            }
        }
        (Some(ObjType::Bridge), Some(a)) if verbose => {
            // SAFETY: bridges use the bridge member.
            let b = unsafe { a.bridge };
            let down = format!(
                "buses={:04x}:[{:02x}-{:02x}]",
                b.downstream_pci.domain,
                b.downstream_pci.secondary_bus,
                b.downstream_pci.subordinate_bus
            );
            // hwloc writes a bridge's attributes from the start of the
            // buffer, replacing the memory part.
            parts.clear();
            if b.upstream_type == 1 {
                parts.push(format!("{}{sep}{down}", pci_busid(&b.upstream_pci, sep)));
            } else {
                parts.push(down);
            }
        }
        (Some(ObjType::PCIDevice), Some(a)) if verbose => {
            // SAFETY: PCI devices use the pcidev member.
            parts.push(pci_busid(&unsafe { a.pcidev }, sep));
        }
        _ => {}
    }
    if verbose {
        for i in 0..obj.infos_count as usize {
            // SAFETY: infos holds infos_count entries.
            let inf = unsafe { *obj.infos.add(i) };
            // SAFETY: info strings are NUL-terminated.
            let (name, value) = unsafe { (c_str(inf.name), c_str(inf.value)) };
            let (name, value) = (name.unwrap_or_default(), value.unwrap_or_default());
            let q = if value.contains(' ') { "\"" } else { "" };
            parts.push(format!("{name}={q}{value}{q}"));
        }
    }
    parts.join(sep)
}

/// `hwloc_obj_attr_snprintf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_obj_attr_snprintf(
    string: *mut c_char,
    size: usize,
    obj: hwloc_obj_t,
    separator: *const c_char,
    verbose: c_int,
) -> c_int {
    guard(-1, || {
        // SAFETY: NULL or a valid object.
        let Some(o) = (unsafe { obj.as_ref() }) else {
            return fail(libc::EINVAL);
        };
        // SAFETY: a NUL-terminated separator or NULL.
        let sep = unsafe { c_str(separator) }.unwrap_or_default();
        // SAFETY: a valid object; the caller's buffer holds size bytes.
        unsafe { snprintf_out(string, size, &attr_snprintf(o, &sep, verbose != 0)) }
    })
}

/// `hwloc_obj_add_info`: appends a name/value pair, even when the name is
/// there already, as hwloc does: to the object's C array, which is what
/// the model takes in at its next use ([`crate::handle::hwloc_topology::pull_from_c`]),
/// in constant time (amortised). An object the library did not allocate is
/// refused with `EINVAL`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_obj_add_info(
    obj: hwloc_obj_t,
    name: *const c_char,
    value: *const c_char,
) -> c_int {
    guard(-1, || {
        if name.is_null() || value.is_null() {
            return fail(libc::EINVAL);
        }
        // SAFETY: checked for being one of the library's live objects
        // before anything is read through it.
        let Some(node) = (unsafe { Node::of_c(obj) }) else {
            return fail(libc::EINVAL);
        };
        // SAFETY: NUL-terminated strings, checked non-NULL.
        match unsafe { node.append_info(name, value) } {
            Ok(()) => 0,
            Err(()) => fail(libc::ENOMEM),
        }
    })
}

/// `hwloc_get_closest_objs`: objects of the same level as `src`, nearest
/// first (sharing the smallest ancestor).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_get_closest_objs(
    topology: hwloc_topology_t,
    src: hwloc_obj_t,
    objs: *mut hwloc_obj_t,
    max: c_uint,
) -> c_uint {
    entry!(topology, 0, |h| {
        let Some(t) = h.loaded() else {
            return 0;
        };
        let Some(sid) = t.id_of(src) else { return 0 };
        let m = &t.model;
        let so = m.obj(sid);
        if so.cpuset.is_none() || objs.is_null() {
            return 0;
        }
        let level = m.level(so.depth());
        let cpuset = |id| m.obj(id).cpuset.clone().unwrap_or_default();
        let mut stored = 0u32;
        let mut parent = sid;
        while stored < max {
            let next = loop {
                let Some(np) = m.obj(parent).parent() else {
                    return stored;
                };
                if cpuset(parent) != cpuset(np) {
                    break np;
                }
                parent = np;
            };
            let (pset, nset) = (cpuset(parent), cpuset(next));
            for &o in level {
                let c = cpuset(o);
                if nset.includes(&c) && !pset.includes(&c) {
                    // SAFETY: the caller's array holds max entries.
                    unsafe { *objs.add(stored as usize) = t.ptr_of(o) };
                    stored += 1;
                    if stored == max {
                        return stored;
                    }
                }
            }
            parent = next;
        }
        stored
    })
}

/// `hwloc_get_largest_objs_inside_cpuset`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_get_largest_objs_inside_cpuset(
    topology: hwloc_topology_t,
    set: hwloc_const_bitmap_t,
    objs: *mut hwloc_obj_t,
    max: c_int,
) -> c_int {
    entry!(topology, -1, |h| {
        // SAFETY: a bitmap from hwloc_bitmap_alloc.
        let (Some(t), Some(set)) = (h.loaded(), unsafe { set.as_ref() }) else {
            return fail(libc::EINVAL);
        };
        let m = &t.model;
        let set = wloc_core::CpuSet::from_bitmap(set.bits().clone());
        let root = m.root();
        if !m
            .obj(root)
            .cpuset
            .as_ref()
            .is_some_and(|c| c.includes(&set))
        {
            return -1;
        }
        if max <= 0 || objs.is_null() {
            return 0;
        }
        let mut out = Vec::new();
        // Depth-first, children left to right, as hwloc's recursion.
        let mut stack = vec![(root, set)];
        while let Some((id, s)) = stack.pop() {
            if out.len() >= max as usize {
                break;
            }
            let o = m.obj(id);
            if o.cpuset.as_ref().is_some_and(|c| *c == s) {
                out.push(id);
                continue;
            }
            for &c in o.children().iter().rev() {
                let cs = m.obj(c).cpuset.clone().unwrap_or_default();
                if cs.intersects(&s) {
                    stack.push((c, &s & &cs));
                }
            }
        }
        for (i, &id) in out.iter().enumerate() {
            // SAFETY: the caller's array holds max entries.
            unsafe { *objs.add(i) = t.ptr_of(id) };
        }
        out.len() as c_int
    })
}

/// `hwloc_get_obj_with_same_locality`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_get_obj_with_same_locality(
    topology: hwloc_topology_t,
    src: hwloc_obj_t,
    type_: hwloc_obj_type_t,
    subtype: *const c_char,
    nameprefix: *const c_char,
    flags: c_ulong,
) -> hwloc_obj_t {
    entry!(topology, null_mut(), |h| {
        let Some(t) = h.loaded() else {
            set_errno(libc::EINVAL);
            return null_mut();
        };
        let (Some(sid), Some(ty)) = (t.id_of(src), type_from_c(type_)) else {
            set_errno(libc::EINVAL);
            return null_mut();
        };
        if flags != 0 {
            set_errno(libc::EINVAL);
            return null_mut();
        }
        // SAFETY: NUL-terminated strings or NULL.
        let (sub, prefix) = unsafe { (c_str(subtype), c_str(nameprefix)) };
        let (sub, prefix) = (sub.as_deref(), prefix.as_deref());
        match t.model.obj_with_same_locality(sid, ty, sub, prefix) {
            Ok(id) => t.ptr_of(id),
            Err(SameLocalityError::Invalid) => {
                set_errno(libc::EINVAL);
                null_mut()
            }
            Err(SameLocalityError::NotFound) => {
                set_errno(libc::ENOENT);
                null_mut()
            }
        }
    })
}

/// `hwloc_pci_class_string`.
#[unsafe(no_mangle)]
pub extern "C" fn hwloc_pci_class_string(class_id: u16) -> *const c_char {
    guard(std::ptr::null(), || {
        static NAMES: OnceLock<
            std::sync::Mutex<std::collections::HashMap<&'static str, &'static std::ffi::CStr>>,
        > = OnceLock::new();
        let name = pci_class(class_id);
        let map = NAMES.get_or_init(Default::default);
        let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(name)
            .or_insert_with(|| {
                // The names are a fixed static table: each is leaked once.
                Box::leak(CString::new(name).unwrap_or_default().into_boxed_c_str())
            })
            .as_ptr()
    })
}

/// `hwloc_topology_reconnect`: levels are always connected here.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_reconnect(
    topology: hwloc_topology_t,
    flags: c_ulong,
) -> c_int {
    entry!(topology, -1, |h| {
        if flags != 0 || h.loaded_mut().is_none() {
            return fail(libc::EINVAL);
        }
        0
    })
}

/// `hwloc_hide_errors`: whether hwloc's error messages are hidden
/// (`HWLOC_HIDE_ERRORS`); wloc's library prints none unless asked.
#[unsafe(no_mangle)]
pub extern "C" fn hwloc_hide_errors() -> c_int {
    guard(1, || {
        wloc_trust::env::var("HWLOC_HIDE_ERRORS")
            .and_then(|v| v.parse::<c_int>().ok())
            .unwrap_or(1)
    })
}
