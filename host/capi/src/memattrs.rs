//! `hwloc/memattrs.h`: memory attributes (capacity, locality, bandwidth,
//! latency, custom ones) over the model's [`MemAttr`]s, and
//! `hwloc_get_local_numanode_objs`.
//!
//! hwloc numbers attributes 0 to 7 for its predefined ones (Capacity and
//! Locality computed from the NUMA nodes) and registers custom ones after;
//! the model keeps the stored ones by name, custom ones in registration
//! order, which gives the same ids.

// `unsigned long` is u64 on LP64 only: the casts stay for other ABIs.
#![allow(clippy::unnecessary_cast)]

use std::os::raw::{c_char, c_int, c_uint, c_ulong};

use wloc_core::memattrs::{Initiator, MemAttr, MemAttrValue, PREDEFINED, flags};
use wloc_core::object::Depth;
use wloc_core::{CpuSet, ObjId, ObjType, Topology};

use crate::ffi::{c_str, fail};
use crate::handle::{hwloc_topology, hwloc_topology_t};
use crate::types::*;

/// `hwloc_memattr_id_t`.
pub type hwloc_memattr_id_t = c_uint;

/// `HWLOC_LOCATION_TYPE_CPUSET`.
pub const LOCATION_TYPE_CPUSET: c_int = 1;
/// `HWLOC_LOCATION_TYPE_OBJECT`.
pub const LOCATION_TYPE_OBJECT: c_int = 0;
/// `HWLOC_LOCAL_NUMANODE_FLAG_LARGER_LOCALITY`.
pub const LOCAL_NUMANODE_FLAG_LARGER_LOCALITY: c_ulong = 1 << 0;
/// `HWLOC_LOCAL_NUMANODE_FLAG_SMALLER_LOCALITY`.
pub const LOCAL_NUMANODE_FLAG_SMALLER_LOCALITY: c_ulong = 1 << 1;
/// `HWLOC_LOCAL_NUMANODE_FLAG_ALL`.
pub const LOCAL_NUMANODE_FLAG_ALL: c_ulong = 1 << 2;
/// `HWLOC_LOCAL_NUMANODE_FLAG_INTERSECT_LOCALITY` (hwloc 2.12).
pub const LOCAL_NUMANODE_FLAG_INTERSECT_LOCALITY: c_ulong = 1 << 3;

const ID_CAPACITY: usize = 0;
const ID_LOCALITY: usize = 1;

/// An attribute as hwloc numbers it.
struct Attr {
    id: usize,
    name: String,
    flags: u64,
    /// Its position in the model's list, if it has one yet.
    pos: Option<usize>,
}

impl Attr {
    /// Capacity and Locality: computed, read-only, no initiator.
    fn is_convenience(&self) -> bool {
        self.id == ID_CAPACITY || self.id == ID_LOCALITY
    }

    fn needs_initiator(&self) -> bool {
        self.flags & flags::NEED_INITIATOR != 0
    }

    fn higher_first(&self) -> bool {
        self.flags & flags::HIGHER_FIRST != 0
    }
}

fn is_predefined(name: &str) -> bool {
    PREDEFINED.iter().any(|(n, _)| *n == name)
}

/// The attribute with hwloc's id `id`.
fn attr(m: &Topology, id: hwloc_memattr_id_t) -> Option<Attr> {
    let id = id as usize;
    if let Some(&(name, flags)) = PREDEFINED.get(id) {
        let pos = if id < 2 {
            None
        } else {
            m.memattrs.iter().position(|a| a.name == name)
        };
        return Some(Attr {
            id,
            name: name.into(),
            flags,
            pos,
        });
    }
    let pos = m
        .memattrs
        .iter()
        .enumerate()
        .filter(|(_, a)| !is_predefined(&a.name))
        .nth(id - PREDEFINED.len())?
        .0;
    let a = &m.memattrs[pos];
    Some(Attr {
        id,
        name: a.name.clone(),
        flags: a.flags,
        pos: Some(pos),
    })
}

/// Every attribute, in id order.
fn all_attrs(m: &Topology) -> impl Iterator<Item = Attr> + '_ {
    // One pass over the registered attributes (asking `attr` for each id
    // would scan them once per id: registering n attributes cost n^3).
    let predefined = (0..PREDEFINED.len()).filter_map(move |i| attr(m, i as hwloc_memattr_id_t));
    let custom = m
        .memattrs
        .iter()
        .enumerate()
        .filter(|(_, a)| !is_predefined(&a.name))
        .enumerate()
        .map(|(k, (pos, a))| Attr {
            id: PREDEFINED.len() + k,
            name: a.name.clone(),
            flags: a.flags,
            pos: Some(pos),
        });
    predefined.chain(custom)
}

/// An initiator given by C (`struct hwloc_location`); `Err` for an
/// invalid one (NULL or empty cpuset, NULL or foreign object).
///
/// # Safety
/// `loc` is NULL or a valid location.
unsafe fn initiator(
    t: &hwloc_topology,
    loc: *const hwloc_location,
) -> Result<Option<Initiator>, ()> {
    // SAFETY: see above.
    let Some(l) = (unsafe { loc.as_ref() }) else {
        return Ok(None);
    };
    match l.type_ {
        LOCATION_TYPE_CPUSET => {
            // SAFETY: the cpuset member for a cpuset location.
            let b = unsafe { l.location.cpuset.as_ref() }.ok_or(())?;
            let set = CpuSet::from_bitmap(b.bits().clone());
            if set.is_empty() {
                return Err(());
            }
            Ok(Some(Initiator::CpuSet(set)))
        }
        LOCATION_TYPE_OBJECT => {
            // SAFETY: the object member for an object location.
            let o = unsafe { l.location.object };
            t.id_of(o).map(|id| Some(Initiator::Object(id))).ok_or(())
        }
        _ => Err(()),
    }
}

/// hwloc's initiator matching: a cpuset matches a stored cpuset that
/// contains it, an object only itself.
fn matches(query: &Initiator, stored: &Initiator) -> bool {
    match (query, stored) {
        (Initiator::CpuSet(q), Initiator::CpuSet(s)) => q.is_included_in(s),
        (Initiator::Object(q), Initiator::Object(s)) => q == s,
        _ => false,
    }
}

/// One target of an attribute as hwloc lists it.
struct Target {
    obj: ObjId,
    /// The value without initiator.
    value: u64,
    /// Initiators (cpusets narrowed to the topology's PUs) and values.
    initiators: Vec<(Initiator, u64)>,
}

impl Target {
    fn find(&self, query: &Initiator) -> Option<&(Initiator, u64)> {
        self.initiators.iter().find(|(s, _)| matches(query, s))
    }
}

/// The live targets of a stored attribute, in the order they were first
/// given values, as hwloc refreshes them: initiators outside the
/// topology dropped, and targets left without initiators.
fn targets(m: &Topology, a: &Attr) -> Vec<Target> {
    let Some(stored) = a.pos.map(|p| &m.memattrs[p]) else {
        return Vec::new();
    };
    let topo_set = m.cpuset();
    let mut out: Vec<Target> = Vec::new();
    for v in &stored.values {
        if m.get(v.target).is_none() {
            continue;
        }
        let i = match out.iter().position(|t| t.obj == v.target) {
            Some(i) => i,
            None => {
                out.push(Target {
                    obj: v.target,
                    value: v.value,
                    initiators: Vec::new(),
                });
                out.len() - 1
            }
        };
        let init = match &v.initiator {
            Some(Initiator::CpuSet(c)) => {
                let c = c & topo_set;
                (!c.is_empty()).then_some(Initiator::CpuSet(c))
            }
            Some(Initiator::Object(o)) => m.get(*o).map(|_| Initiator::Object(*o)),
            None => None,
        };
        if let Some(init) = init {
            out[i].initiators.push((init, v.value));
        }
    }
    if a.needs_initiator() {
        out.retain(|t| !t.initiators.is_empty());
    }
    out
}

/// The value of Capacity or Locality for an object.
fn convenience_value(m: &Topology, id: usize, obj: ObjId) -> Option<u64> {
    let o = m.obj(obj);
    if id == ID_CAPACITY {
        return (o.obj_type == ObjType::NUMANode).then(|| o.numa().map_or(0, |n| n.local_memory));
    }
    o.cpuset
        .as_ref()
        .map(|c| c.weight().map_or(u64::MAX, u64::from))
}

/// `hwloc_memattr_get_by_name`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_memattr_get_by_name(
    topology: hwloc_topology_t,
    name: *const c_char,
    id: *mut hwloc_memattr_id_t,
) -> c_int {
    entry!(topology, -1, |h| {
        // SAFETY: a NUL-terminated name.
        let (Some(t), Some(name)) = (h.loaded(), unsafe { c_str(name) }) else {
            return fail(libc::EINVAL);
        };
        if id.is_null() {
            return fail(libc::EINVAL);
        }
        match all_attrs(&t.model).find(|a| a.name == name) {
            Some(a) => {
                // SAFETY: checked non-NULL.
                unsafe { *id = a.id as hwloc_memattr_id_t };
                0
            }
            None => fail(libc::EINVAL),
        }
    })
}

/// `hwloc_memattr_get_name`: the name stays valid as long as the topology.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_memattr_get_name(
    topology: hwloc_topology_t,
    id: hwloc_memattr_id_t,
    name: *mut *const c_char,
) -> c_int {
    entry!(topology, |t: Loaded| {
        let Some(a) = attr(&t.model, id).filter(|_| !name.is_null()) else {
            return fail(libc::EINVAL);
        };
        // SAFETY: checked non-NULL.
        unsafe { *name = t.kept.string(&a.name) };
        0
    })
}

/// `hwloc_memattr_get_flags`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_memattr_get_flags(
    topology: hwloc_topology_t,
    id: hwloc_memattr_id_t,
    flagsp: *mut c_ulong,
) -> c_int {
    entry!(topology, |t: Loaded| {
        let Some(a) = attr(&t.model, id).filter(|_| !flagsp.is_null()) else {
            return fail(libc::EINVAL);
        };
        // SAFETY: checked non-NULL.
        unsafe { *flagsp = a.flags as c_ulong };
        0
    })
}

/// `hwloc_memattr_register`: a custom attribute, with exactly one of the
/// higher/lower-first flags and a name not used yet (`EBUSY`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_memattr_register(
    topology: hwloc_topology_t,
    name: *const c_char,
    flags_: c_ulong,
    id: *mut hwloc_memattr_id_t,
) -> c_int {
    entry!(topology, -1, |h| {
        // SAFETY: a NUL-terminated name.
        let (Some(t), Some(name)) = (h.loaded_mut(), unsafe { c_str(name) }) else {
            return fail(libc::EINVAL);
        };
        let f = flags_ as u64;
        let order = f & (flags::HIGHER_FIRST | flags::LOWER_FIRST);
        let known = flags::HIGHER_FIRST | flags::LOWER_FIRST | flags::NEED_INITIATOR;
        if f & !known != 0 || order.count_ones() != 1 || id.is_null() {
            return fail(libc::EINVAL);
        }
        if all_attrs(&t.model).any(|a| a.name == name) {
            return fail(libc::EBUSY);
        }
        t.model.memattrs.push(MemAttr::new(&name, f));
        let new_id = all_attrs(&t.model).count() - 1;
        // SAFETY: checked non-NULL.
        unsafe { *id = new_id as hwloc_memattr_id_t };
        0
    })
}

/// `hwloc_memattr_get_value`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_memattr_get_value(
    topology: hwloc_topology_t,
    id: hwloc_memattr_id_t,
    target_node: hwloc_obj_t,
    initiator_: *mut hwloc_location,
    flags_: c_ulong,
    value: *mut u64,
) -> c_int {
    entry!(topology, |t: Loaded| {
        let m = &t.model;
        let (Some(a), Some(tg)) = (attr(m, id), t.id_of(target_node)) else {
            return fail(libc::EINVAL);
        };
        if flags_ != 0 || value.is_null() {
            return fail(libc::EINVAL);
        }
        let v = if a.is_convenience() {
            convenience_value(m, a.id, tg)
        } else {
            let all = targets(m, &a);
            let target = all.iter().find(|x| x.obj == tg);
            if a.needs_initiator() {
                // SAFETY: the caller's location or NULL.
                let init = unsafe { initiator(t, initiator_) };
                match (target, init) {
                    (Some(x), Ok(Some(q))) => x.find(&q).map(|(_, v)| *v),
                    _ => None,
                }
            } else {
                target.map(|x| x.value)
            }
        };
        match v {
            Some(v) => {
                // SAFETY: checked non-NULL.
                unsafe { *value = v };
                0
            }
            None => fail(libc::EINVAL),
        }
    })
}

/// Sets `value` on the model as hwloc does: the initiator that matches
/// the given one is updated, else a new one is added.
fn set_value(m: &mut Topology, a: &Attr, tg: ObjId, init: Option<Initiator>, value: u64) {
    let pos = match a.pos {
        Some(p) => p,
        None => {
            m.memattrs.push(MemAttr::new(&a.name, a.flags));
            m.memattrs.len() - 1
        }
    };
    let need = a.needs_initiator();
    let stored = &mut m.memattrs[pos];
    let slot = stored.values.iter_mut().find(|v| {
        v.target == tg
            && (!need
                || match (&init, &v.initiator) {
                    (Some(q), Some(s)) => matches(q, s),
                    _ => false,
                })
    });
    match slot {
        Some(v) => v.value = value,
        None => stored.values.push(MemAttrValue {
            target: tg,
            initiator: if need { init } else { None },
            value,
        }),
    }
}

/// `hwloc_memattr_set_value`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_memattr_set_value(
    topology: hwloc_topology_t,
    id: hwloc_memattr_id_t,
    target_node: hwloc_obj_t,
    initiator_: *mut hwloc_location,
    flags_: c_ulong,
    value: u64,
) -> c_int {
    entry!(topology, |t: LoadedMut| {
        let (Some(a), Some(tg)) = (attr(&t.model, id), t.id_of(target_node)) else {
            return fail(libc::EINVAL);
        };
        if flags_ != 0 || a.is_convenience() {
            return fail(libc::EINVAL);
        }
        // SAFETY: the caller's location or NULL.
        let Ok(init) = (unsafe { initiator(t, initiator_) }) else {
            return fail(libc::EINVAL);
        };
        if a.needs_initiator() && init.is_none() {
            return fail(libc::EINVAL);
        }
        set_value(&mut t.model, &a, tg, init, value);
        0
    })
}

/// Keeps the first best of the values seen.
fn better(higher_first: bool, new: u64, best: Option<u64>) -> bool {
    match best {
        None => true,
        Some(b) if higher_first => new > b,
        Some(b) => new < b,
    }
}

/// `hwloc_memattr_get_best_target`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_memattr_get_best_target(
    topology: hwloc_topology_t,
    id: hwloc_memattr_id_t,
    initiator_: *mut hwloc_location,
    flags_: c_ulong,
    best: *mut hwloc_obj_t,
    value: *mut u64,
) -> c_int {
    entry!(topology, |t: Loaded| {
        let m = &t.model;
        let Some(a) = attr(m, id) else {
            return fail(libc::EINVAL);
        };
        if flags_ != 0 || best.is_null() {
            return fail(libc::EINVAL);
        }
        let candidates: Vec<(ObjId, u64)> = if a.is_convenience() {
            m.level(Depth::NumaNode)
                .iter()
                .map(|&n| (n, convenience_value(m, a.id, n).unwrap_or(0)))
                .collect()
        } else if a.needs_initiator() {
            // SAFETY: the caller's location or NULL.
            match unsafe { initiator(t, initiator_) } {
                Ok(Some(q)) => targets(m, &a)
                    .iter()
                    .filter_map(|x| x.find(&q).map(|(_, v)| (x.obj, *v)))
                    .collect(),
                _ => Vec::new(),
            }
        } else {
            targets(m, &a).iter().map(|x| (x.obj, x.value)).collect()
        };
        let mut found: Option<(ObjId, u64)> = None;
        for (o, v) in candidates {
            if better(a.higher_first(), v, found.map(|f| f.1)) {
                found = Some((o, v));
            }
        }
        let Some((o, v)) = found else {
            return fail(libc::ENOENT);
        };
        // SAFETY: best checked non-NULL; value NULL or a place.
        unsafe {
            *best = t.ptr_of(o);
            if let Some(p) = value.as_mut() {
                *p = v;
            }
        }
        0
    })
}

/// Writes an initiator as a C location (cpusets kept by the topology).
fn to_location(t: &hwloc_topology, i: &Initiator) -> hwloc_location {
    match i {
        Initiator::CpuSet(c) => hwloc_location {
            type_: LOCATION_TYPE_CPUSET,
            location: hwloc_location_u {
                cpuset: t.kept.bitmap(c.bitmap()),
            },
        },
        Initiator::Object(o) => hwloc_location {
            type_: LOCATION_TYPE_OBJECT,
            location: hwloc_location_u {
                object: t.ptr_of(*o),
            },
        },
    }
}

/// `hwloc_memattr_get_best_initiator`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_memattr_get_best_initiator(
    topology: hwloc_topology_t,
    id: hwloc_memattr_id_t,
    target_node: hwloc_obj_t,
    flags_: c_ulong,
    best: *mut hwloc_location,
    value: *mut u64,
) -> c_int {
    entry!(topology, |t: Loaded| {
        let m = &t.model;
        let (Some(a), Some(tg)) = (attr(m, id), t.id_of(target_node)) else {
            return fail(libc::EINVAL);
        };
        if flags_ != 0 || best.is_null() || !a.needs_initiator() {
            return fail(libc::EINVAL);
        }
        let all = targets(m, &a);
        let Some(target) = all.iter().find(|x| x.obj == tg) else {
            return fail(libc::EINVAL);
        };
        let mut found: Option<&(Initiator, u64)> = None;
        for i in &target.initiators {
            if better(a.higher_first(), i.1, found.map(|f| f.1)) {
                found = Some(i);
            }
        }
        let Some((init, v)) = found else {
            return fail(libc::ENOENT);
        };
        // SAFETY: best checked non-NULL; value NULL or a place.
        unsafe {
            *best = to_location(t, init);
            if let Some(p) = value.as_mut() {
                *p = *v;
            }
        }
        0
    })
}

/// Checks hwloc's array arguments: `nrp` given, an array when `*nrp > 0`.
///
/// # Safety
/// `nrp` is NULL or valid.
unsafe fn capacity<T>(nrp: *mut c_uint, array: *mut T) -> Option<usize> {
    // SAFETY: see above.
    let max = unsafe { nrp.as_ref() }.copied()? as usize;
    (max == 0 || !array.is_null()).then_some(max)
}

/// `hwloc_memattr_get_targets`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_memattr_get_targets(
    topology: hwloc_topology_t,
    id: hwloc_memattr_id_t,
    initiator_: *mut hwloc_location,
    flags_: c_ulong,
    nrp: *mut c_uint,
    targets_: *mut hwloc_obj_t,
    values: *mut u64,
) -> c_int {
    entry!(topology, |t: Loaded| {
        let m = &t.model;
        // SAFETY: the caller's count.
        let (Some(a), Some(max)) = (attr(m, id), unsafe { capacity(nrp, targets_) }) else {
            return fail(libc::EINVAL);
        };
        if flags_ != 0 {
            return fail(libc::EINVAL);
        }
        let found: Vec<(ObjId, u64)> = if a.is_convenience() {
            m.level(Depth::NumaNode)
                .iter()
                .map(|&n| (n, convenience_value(m, a.id, n).unwrap_or(0)))
                .collect()
        } else if a.needs_initiator() {
            // SAFETY: the caller's location or NULL.
            let q = unsafe { initiator(t, initiator_) };
            targets(m, &a)
                .iter()
                .filter_map(|x| match &q {
                    // No initiator: every target, value 0 as in hwloc.
                    Ok(None) => Some((x.obj, 0)),
                    Ok(Some(q)) => x.find(q).map(|(_, v)| (x.obj, *v)),
                    Err(()) => None,
                })
                .collect()
        } else {
            targets(m, &a).iter().map(|x| (x.obj, x.value)).collect()
        };
        for (i, (o, v)) in found.iter().take(max).enumerate() {
            // SAFETY: the caller's arrays hold max entries (values may be NULL).
            unsafe {
                *targets_.add(i) = t.ptr_of(*o);
                if !values.is_null() {
                    *values.add(i) = *v;
                }
            }
        }
        // SAFETY: checked non-NULL by capacity.
        unsafe { *nrp = found.len() as c_uint };
        0
    })
}

/// `hwloc_memattr_get_initiators`: cpusets returned stay valid as long
/// as the topology.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_memattr_get_initiators(
    topology: hwloc_topology_t,
    id: hwloc_memattr_id_t,
    target_node: hwloc_obj_t,
    flags_: c_ulong,
    nrp: *mut c_uint,
    initiators: *mut hwloc_location,
    values: *mut u64,
) -> c_int {
    entry!(topology, |t: Loaded| {
        let m = &t.model;
        if flags_ != 0 || target_node.is_null() {
            return fail(libc::EINVAL);
        }
        // SAFETY: the caller's count.
        let (Some(a), Some(max)) = (attr(m, id), unsafe { capacity(nrp, initiators) }) else {
            return fail(libc::EINVAL);
        };
        if !a.needs_initiator() {
            // SAFETY: checked non-NULL by capacity.
            unsafe { *nrp = 0 };
            return 0;
        }
        let all = targets(m, &a);
        let Some(target) = t
            .id_of(target_node)
            .and_then(|tg| all.iter().find(|x| x.obj == tg))
        else {
            return fail(libc::EINVAL);
        };
        for (i, (init, v)) in target.initiators.iter().take(max).enumerate() {
            // SAFETY: the caller's arrays hold max entries (values may be NULL).
            unsafe {
                *initiators.add(i) = to_location(t, init);
                if !values.is_null() {
                    *values.add(i) = *v;
                }
            }
        }
        // SAFETY: checked non-NULL by capacity.
        unsafe { *nrp = target.initiators.len() as c_uint };
        0
    })
}

/// The cpuset of a location for `hwloc_get_local_numanode_objs`: an
/// object without one (I/O, Misc) stands for its first ancestor with one.
///
/// # Safety
/// `l` is a valid location.
unsafe fn location_cpuset(t: &hwloc_topology, l: &hwloc_location) -> Option<CpuSet> {
    match l.type_ {
        LOCATION_TYPE_CPUSET => {
            // SAFETY: the cpuset member for a cpuset location.
            let b = unsafe { l.location.cpuset.as_ref() }?;
            Some(CpuSet::from_bitmap(b.bits().clone()))
        }
        LOCATION_TYPE_OBJECT => {
            // SAFETY: the object member for an object location.
            let mut id = t.id_of(unsafe { l.location.object })?;
            loop {
                let o = t.model.obj(id);
                if let Some(c) = &o.cpuset {
                    return Some(c.clone());
                }
                id = o.parent()?;
            }
        }
        _ => None,
    }
}

/// `hwloc_get_local_numanode_objs`: the NUMA nodes whose locality is the
/// location's (or larger, smaller, or all of them, as `flags` say).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_get_local_numanode_objs(
    topology: hwloc_topology_t,
    location: *mut hwloc_location,
    nrp: *mut c_uint,
    nodes: *mut hwloc_obj_t,
    flags_: c_ulong,
) -> c_int {
    entry!(topology, |t: Loaded| {
        let known = LOCAL_NUMANODE_FLAG_LARGER_LOCALITY
            | LOCAL_NUMANODE_FLAG_SMALLER_LOCALITY
            | LOCAL_NUMANODE_FLAG_INTERSECT_LOCALITY
            | LOCAL_NUMANODE_FLAG_ALL;
        // SAFETY: the caller's count.
        let Some(max) = (unsafe { capacity(nrp, nodes) }) else {
            return fail(libc::EINVAL);
        };
        if flags_ & !known != 0 {
            return fail(libc::EINVAL);
        }
        let all = flags_ & LOCAL_NUMANODE_FLAG_ALL != 0;
        // SAFETY: NULL or the caller's location.
        let set = match unsafe { location.as_ref() } {
            None if all => CpuSet::new(),
            None => return fail(libc::EINVAL),
            // SAFETY: a valid location.
            Some(l) => match unsafe { location_cpuset(t, l) } {
                Some(s) => s,
                None => return fail(libc::EINVAL),
            },
        };
        // The flags' bits are wloc_locality's.
        let found = wloc_locality::query::local_numanodes(&t.model, &set, flags_ as u64);
        for (i, n) in found.iter().take(max).enumerate() {
            // SAFETY: the caller's array holds max entries.
            unsafe { *nodes.add(i) = t.ptr_of(*n) };
        }
        // SAFETY: checked non-NULL by capacity.
        unsafe { *nrp = found.len() as c_uint };
        0
    })
}

/// `hwloc_topology_get_default_nodeset` (hwloc 2.12): the NUMA nodes
/// where allocations go by default (wloc_locality::query::default_nodeset).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_get_default_nodeset(
    topology: hwloc_topology_t,
    nodeset: hwloc_bitmap_t,
    flags_: c_ulong,
) -> c_int {
    entry!(topology, |t: Loaded| {
        // SAFETY: NULL or a bitmap of the caller's.
        let Some(out) = (unsafe { nodeset.as_mut() }) else {
            return fail(libc::EINVAL);
        };
        if flags_ != 0 {
            return fail(libc::EINVAL);
        }
        let chosen = wloc_locality::query::default_nodeset(&t.model);
        out.set_bits(chosen.into_bitmap());
        0
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitmap::hwloc_bitmap_s;
    use crate::test_support::{objs_of as objs, synthetic};
    use crate::topology::hwloc_topology_destroy;
    use std::ffi::{CStr, CString};
    use std::ptr::{null, null_mut};
    use wloc_core::Bitmap;

    fn obj_loc(o: hwloc_obj_t) -> hwloc_location {
        hwloc_location {
            type_: LOCATION_TYPE_OBJECT,
            location: hwloc_location_u { object: o },
        }
    }

    #[test]
    fn predefined_and_custom_attributes() {
        let t = synthetic("node:4 pu:2");
        let nodes = objs(t, ObjType::NUMANode);
        let pus = objs(t, ObjType::PU);
        // SAFETY: a loaded handle, valid names and places.
        unsafe {
            let mut id = 0;
            let lat = CString::new("Latency").unwrap();
            assert_eq!(hwloc_memattr_get_by_name(t, lat.as_ptr(), &mut id), 0);
            assert_eq!(id, 3);
            let mut name = null();
            assert_eq!(hwloc_memattr_get_name(t, 4, &mut name), 0);
            assert_eq!(CStr::from_ptr(name).to_str().unwrap(), "ReadBandwidth");
            assert_eq!(hwloc_memattr_get_name(t, 8, &mut name), -1);
            let mut v = 0;
            assert_eq!(
                hwloc_memattr_get_value(t, 1, nodes[2], null_mut(), 0, &mut v),
                0
            );
            assert_eq!(v, 2);
            let foo = CString::new("foo").unwrap();
            assert_eq!(hwloc_memattr_register(t, foo.as_ptr(), 0, &mut id), -1);
            assert_eq!(hwloc_memattr_register(t, lat.as_ptr(), 1, &mut id), -1);
            assert_eq!(*libc::__errno_location(), libc::EBUSY);
            let f = (flags::LOWER_FIRST | flags::NEED_INITIATOR) as c_ulong;
            assert_eq!(hwloc_memattr_register(t, foo.as_ptr(), f, &mut id), 0);
            assert_eq!(id, 8);
            let mut loc = obj_loc(pus[7]);
            assert_eq!(
                hwloc_memattr_set_value(t, id, nodes[0], &mut loc, 0, 2345),
                0
            );
            assert_eq!(
                hwloc_memattr_set_value(t, id, nodes[0], null_mut(), 0, 1),
                -1
            );
            let mut node0 = hwloc_bitmap_s::new(Bitmap::from_range(0, Some(1)));
            let mut set_loc = hwloc_location {
                type_: LOCATION_TYPE_CPUSET,
                location: hwloc_location_u { cpuset: &mut node0 },
            };
            for (i, n) in nodes.iter().enumerate() {
                assert_eq!(
                    hwloc_memattr_set_value(t, id, *n, &mut set_loc, 0, (i as u64 + 1) * 10),
                    0
                );
            }
            let mut nr: c_uint = 2;
            let mut locs = [obj_loc(null_mut()), obj_loc(null_mut())];
            assert_eq!(
                hwloc_memattr_get_initiators(
                    t,
                    id,
                    nodes[0],
                    0,
                    &mut nr,
                    locs.as_mut_ptr(),
                    null_mut()
                ),
                0
            );
            assert_eq!(nr, 2);
            assert_eq!(locs[0].type_, LOCATION_TYPE_OBJECT);
            assert_eq!(locs[1].type_, LOCATION_TYPE_CPUSET);
            assert_eq!(
                *(*locs[1].location.cpuset).bits(),
                Bitmap::from_range(0, Some(1))
            );
            // A PU inside the measured cpuset finds its values.
            let mut pu0 = hwloc_bitmap_s::new(Bitmap::from_index(0));
            let mut q = hwloc_location {
                type_: LOCATION_TYPE_CPUSET,
                location: hwloc_location_u { cpuset: &mut pu0 },
            };
            let mut best = null_mut();
            assert_eq!(
                hwloc_memattr_get_best_target(t, id, &mut q, 0, &mut best, &mut v),
                0
            );
            assert_eq!((best, v), (nodes[0], 10));
            let mut out = obj_loc(null_mut());
            assert_eq!(
                hwloc_memattr_get_best_initiator(t, id, nodes[0], 0, &mut out, &mut v),
                0
            );
            assert_eq!((out.type_, v), (LOCATION_TYPE_CPUSET, 10));
            let mut nr: c_uint = 4;
            let mut tg = [null_mut(); 4];
            assert_eq!(
                hwloc_memattr_get_targets(
                    t,
                    id,
                    null_mut(),
                    0,
                    &mut nr,
                    tg.as_mut_ptr(),
                    null_mut()
                ),
                0
            );
            assert_eq!(nr, 4);
            assert_eq!(tg[0], nodes[0]);
            // The whole machine is not inside any measured initiator.
            let mut all = hwloc_bitmap_s::new(Bitmap::from_range(0, Some(7)));
            q.location.cpuset = &mut all;
            assert_eq!(
                hwloc_memattr_get_targets(t, id, &mut q, 0, &mut nr, tg.as_mut_ptr(), null_mut()),
                0
            );
            assert_eq!(nr, 0);
            hwloc_topology_destroy(t);
        }
    }

    #[test]
    fn local_numa_nodes() {
        let t = synthetic("node:4 pu:2");
        let nodes = objs(t, ObjType::NUMANode);
        let root = objs(t, ObjType::Machine)[0];
        // SAFETY: a loaded handle, valid places.
        unsafe {
            let mut nr: c_uint = 4;
            let mut out = [null_mut(); 4];
            assert_eq!(
                hwloc_get_local_numanode_objs(t, null_mut(), &mut nr, out.as_mut_ptr(), 0),
                -1
            );
            let mut loc = obj_loc(root);
            assert_eq!(
                hwloc_get_local_numanode_objs(t, &mut loc, &mut nr, out.as_mut_ptr(), 0),
                0
            );
            assert_eq!(nr, 0);
            nr = 4;
            let f = LOCAL_NUMANODE_FLAG_SMALLER_LOCALITY;
            assert_eq!(
                hwloc_get_local_numanode_objs(t, &mut loc, &mut nr, out.as_mut_ptr(), f),
                0
            );
            assert_eq!((nr, out[3]), (4, nodes[3]));
            let mut set = hwloc_bitmap_s::new(Bitmap::from_range(2, Some(5)));
            let mut l = hwloc_location {
                type_: LOCATION_TYPE_CPUSET,
                location: hwloc_location_u { cpuset: &mut set },
            };
            nr = 4;
            assert_eq!(
                hwloc_get_local_numanode_objs(t, &mut l, &mut nr, out.as_mut_ptr(), f),
                0
            );
            assert_eq!(&out[..nr as usize], &nodes[1..3]);
            hwloc_topology_destroy(t);
        }
    }
}
