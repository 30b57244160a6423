//! `hwloc/distances.h`: distance matrices between objects, read from and
//! written to the model's [`Distances`], and the Group objects hwloc builds
//! from them (`HWLOC_DISTANCES_ADD_FLAG_GROUP`).
//!
//! A matrix handed to C is a copy inside a [`Handed`] allocation that
//! also remembers which model matrix it came from, so that
//! `hwloc_distances_get_name` and `hwloc_distances_release_remove` find it
//! again, as hwloc's container does.

// `unsigned long` is u64 on LP64 only: the casts stay for other ABIs.
#![allow(clippy::unnecessary_cast)]

use std::os::raw::{c_char, c_int, c_uint, c_ulong, c_void};
use std::ptr::{null, null_mut};

use wloc_core::distances::{Distances, group, kind, transform};
use wloc_core::topology::TypeFilter;
use wloc_core::{ObjId, ObjType, Topology};

use crate::ffi::{c_str, fail, guard, set_errno};
use crate::handle::{hwloc_topology, hwloc_topology_t};
use crate::mirror::type_from_c;
use crate::types::*;

const KIND_FROM_ALL: u64 = kind::FROM_OS | kind::FROM_USER;
const KIND_MEANS_ALL: u64 = kind::MEANS_LATENCY | kind::MEANS_BANDWIDTH;
const KIND_ALL: u64 = KIND_FROM_ALL | KIND_MEANS_ALL | kind::HETEROGENEOUS_TYPES;
/// `HWLOC_DISTANCES_ADD_FLAG_GROUP`.
pub const ADD_FLAG_GROUP: c_ulong = 1 << 0;
/// `HWLOC_DISTANCES_ADD_FLAG_GROUP_INACCURATE`.
pub const ADD_FLAG_GROUP_INACCURATE: c_ulong = 1 << 1;
/// `HWLOC_DISTANCES_TRANSFORM_REMOVE_NULL`.
pub const TRANSFORM_REMOVE_NULL: c_int = 0;
/// `HWLOC_DISTANCES_TRANSFORM_LINKS`.
pub const TRANSFORM_LINKS: c_int = 1;
/// `HWLOC_DISTANCES_TRANSFORM_MERGE_SWITCH_PORTS`.
pub const TRANSFORM_MERGE_SWITCH_PORTS: c_int = 2;
/// `HWLOC_DISTANCES_TRANSFORM_TRANSITIVE_CLOSURE`.
pub const TRANSFORM_TRANSITIVE_CLOSURE: c_int = 3;

/// Which model matrix a handed-out copy came from: its position then,
/// and what identifies it (a matrix may move when an earlier one is
/// removed).
#[derive(Clone, Debug, PartialEq)]
struct Origin {
    index: usize,
    name: Option<String>,
    kind: u64,
    objs: Vec<ObjId>,
}

impl Origin {
    fn of(index: usize, d: &Distances) -> Origin {
        Origin {
            index,
            name: d.name.clone(),
            kind: d.kind,
            objs: d.objs.clone(),
        }
    }

    fn is(&self, d: &Distances) -> bool {
        d.name == self.name && d.kind == self.kind && d.objs == self.objs
    }

    /// The matrix's current position in the model.
    fn find(&self, m: &Topology) -> Option<usize> {
        if m.distances.get(self.index).is_some_and(|d| self.is(d)) {
            return Some(self.index);
        }
        m.distances.iter().position(|d| self.is(d))
    }
}

/// What `hwloc_distances_get*` allocates: hwloc's public structure first,
/// so that the pointer handed to C is the pointer to free.
#[repr(C)]
struct Handed {
    public: hwloc_distances_s,
    origin: Origin,
    objs: Vec<hwloc_obj_t>,
    values: Vec<u64>,
}

/// The copy of the model's matrix `index`, for C.
fn hand_out(t: &hwloc_topology, index: usize) -> *mut hwloc_distances_s {
    let d = &t.model.distances[index];
    let mut h = Box::new(Handed {
        public: hwloc_distances_s {
            nbobjs: d.objs.len() as c_uint,
            objs: null_mut(),
            kind: d.kind as c_ulong,
            values: null_mut(),
        },
        origin: Origin::of(index, d),
        objs: d.objs.iter().map(|&o| t.ptr_of(o)).collect(),
        values: d.values.clone(),
    });
    // Written again where it lives, padding zeroed as hwloc's calloc.
    let (nbobjs, kind) = (h.public.nbobjs, h.public.kind);
    // SAFETY: plain C data, all-zero valid.
    unsafe { crate::mirror::zero_in_place(&mut h.public) };
    h.public.nbobjs = nbobjs;
    h.public.kind = kind;
    h.public.objs = h.objs.as_mut_ptr();
    h.public.values = h.values.as_mut_ptr();
    Box::into_raw(h) as *mut hwloc_distances_s
}

/// The container of a matrix handed out by [`hand_out`].
///
/// # Safety
/// `d` came from [`hand_out`] and was not released.
unsafe fn handed<'a>(d: *mut hwloc_distances_s) -> Option<&'a mut Handed> {
    // SAFETY: hwloc_distances_s is the first field of the repr(C) Handed.
    unsafe { (d as *mut Handed).as_mut() }
}

/// The single type of a matrix's objects (`None` when they differ).
fn unique_type(m: &Topology, objs: &[ObjId]) -> Option<ObjType> {
    let first = m.obj(*objs.first()?).obj_type;
    objs.iter()
        .all(|&o| m.obj(o).obj_type == first)
        .then_some(first)
}

/// Which object types a query selects.
enum TypeSel {
    Any,
    /// Matrices whose objects are all of this type.
    Is(ObjType),
    /// No matrix (a type that does not exist).
    Never,
}

/// Which matrices a query selects.
struct Query<'a> {
    name: Option<&'a str>,
    ty: TypeSel,
    kind: u64,
}

impl Query<'_> {
    fn matches(&self, m: &Topology, d: &Distances) -> bool {
        if self.name.is_some() && d.name.as_deref() != self.name {
            return false;
        }
        match self.ty {
            TypeSel::Any => {}
            TypeSel::Is(ty) if unique_type(m, &d.objs) == Some(ty) => {}
            _ => return false,
        }
        let (from, means) = (self.kind & KIND_FROM_ALL, self.kind & KIND_MEANS_ALL);
        !(from != 0 && from & d.kind == 0 || means != 0 && means & d.kind == 0)
    }
}

/// `hwloc__distances_get`: fills up to `*nrp` copies, NULLs the rest of
/// the array and stores the number of matching matrices in `*nrp`.
///
/// # Safety
/// `nrp` is NULL or valid; `distancesp` holds `*nrp` pointers.
unsafe fn get(
    t: &hwloc_topology,
    q: Query<'_>,
    nrp: *mut c_uint,
    distancesp: *mut *mut hwloc_distances_s,
    flags: c_ulong,
) -> c_int {
    if flags != 0 || nrp.is_null() {
        return fail(libc::EINVAL);
    }
    // SAFETY: checked non-NULL above.
    let max = unsafe { *nrp } as usize;
    if max > 0 && distancesp.is_null() {
        return fail(libc::EINVAL);
    }
    let mut nr = 0usize;
    for (i, d) in t.model.distances.iter().enumerate() {
        if !q.matches(&t.model, d) {
            continue;
        }
        if nr < max {
            // SAFETY: the caller's array holds max pointers.
            unsafe { *distancesp.add(nr) = hand_out(t, i) };
        }
        nr += 1;
    }
    for i in nr..max {
        // SAFETY: as above.
        unsafe { *distancesp.add(i) = null_mut() };
    }
    // SAFETY: checked non-NULL above.
    unsafe { *nrp = nr as c_uint };
    0
}

/// `hwloc_distances_get`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_distances_get(
    topology: hwloc_topology_t,
    nrp: *mut c_uint,
    distancesp: *mut *mut hwloc_distances_s,
    kind: c_ulong,
    flags: c_ulong,
) -> c_int {
    entry!(topology, |t: Loaded| {
        let q = Query {
            name: None,
            ty: TypeSel::Any,
            kind: kind as u64,
        };
        // SAFETY: the caller's arrays, as hwloc documents them.
        unsafe { get(t, q, nrp, distancesp, flags) }
    })
}

/// The type of the objects at hwloc depth `depth` (`None` if no such level).
fn depth_type(m: &Topology, depth: c_int) -> Option<ObjType> {
    crate::objects::depth_from_c(m, depth).and_then(|d| m.depth_type(d))
}

/// `hwloc_distances_get_by_depth`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_distances_get_by_depth(
    topology: hwloc_topology_t,
    depth: c_int,
    nrp: *mut c_uint,
    distancesp: *mut *mut hwloc_distances_s,
    kind: c_ulong,
    flags: c_ulong,
) -> c_int {
    entry!(topology, |t: Loaded| {
        if flags != 0 {
            return fail(libc::EINVAL);
        }
        let Some(ty) = depth_type(&t.model, depth) else {
            return fail(libc::EINVAL);
        };
        let q = Query {
            name: None,
            ty: TypeSel::Is(ty),
            kind: kind as u64,
        };
        // SAFETY: the caller's arrays, as hwloc documents them.
        unsafe { get(t, q, nrp, distancesp, flags) }
    })
}

/// `hwloc_distances_get_by_type`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_distances_get_by_type(
    topology: hwloc_topology_t,
    type_: hwloc_obj_type_t,
    nrp: *mut c_uint,
    distancesp: *mut *mut hwloc_distances_s,
    kind: c_ulong,
    flags: c_ulong,
) -> c_int {
    entry!(topology, |t: Loaded| {
        let q = Query {
            name: None,
            ty: type_from_c(type_).map_or(TypeSel::Never, TypeSel::Is),
            kind: kind as u64,
        };
        // SAFETY: the caller's arrays, as hwloc documents them.
        unsafe { get(t, q, nrp, distancesp, flags) }
    })
}

/// `hwloc_distances_get_by_name`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_distances_get_by_name(
    topology: hwloc_topology_t,
    name: *const c_char,
    nrp: *mut c_uint,
    distancesp: *mut *mut hwloc_distances_s,
    flags: c_ulong,
) -> c_int {
    entry!(topology, |t: Loaded| {
        // SAFETY: a NUL-terminated name or NULL (every matrix then).
        let name = unsafe { c_str(name) };
        let q = Query {
            name: name.as_deref(),
            ty: TypeSel::Any,
            kind: KIND_ALL,
        };
        // SAFETY: the caller's arrays, as hwloc documents them.
        unsafe { get(t, q, nrp, distancesp, flags) }
    })
}

/// `hwloc_distances_get_name`: the matrix's name, valid as long as the
/// topology (NULL for an anonymous or removed matrix).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_distances_get_name(
    topology: hwloc_topology_t,
    distances: *mut hwloc_distances_s,
) -> *const c_char {
    entry!(topology, null(), |h| {
        let Some(t) = h.loaded() else {
            return null();
        };
        // SAFETY: a matrix from hwloc_distances_get*.
        let Some(h) = (unsafe { handed(distances) }) else {
            return null();
        };
        let Some(i) = h.origin.find(&t.model) else {
            return null();
        };
        match &t.model.distances[i].name {
            Some(n) => t.kept.string(n),
            None => null(),
        }
    })
}

/// `hwloc_distances_release`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_distances_release(
    _topology: hwloc_topology_t,
    distances: *mut hwloc_distances_s,
) {
    guard((), || {
        if !distances.is_null() {
            // SAFETY: a matrix from hand_out, released once.
            drop(unsafe { Box::from_raw(distances as *mut Handed) });
        }
    })
}

/// `hwloc_distances_release_remove`: removes the matrix from the
/// topology, then releases the copy.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_distances_release_remove(
    topology: hwloc_topology_t,
    distances: *mut hwloc_distances_s,
) -> c_int {
    entry!(topology, -1, |h| {
        let Some(t) = h.loaded_mut() else {
            return fail(libc::EINVAL);
        };
        // SAFETY: a matrix from hwloc_distances_get*.
        let Some(d) = (unsafe { handed(distances) }) else {
            return fail(libc::EINVAL);
        };
        let Some(i) = d.origin.find(&t.model) else {
            return fail(libc::EINVAL);
        };
        t.model.distances.remove(i);
        // SAFETY: as above; the copy is not used after.
        unsafe { hwloc_distances_release(h.raw(), distances) };
        0
    })
}

/// `hwloc_distances_remove`: every matrix.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_distances_remove(topology: hwloc_topology_t) -> c_int {
    entry!(topology, |t: LoadedMut| {
        t.model.distances.clear();
        0
    })
}

/// `hwloc_distances_remove_by_depth`: the matrices whose objects are all
/// of the type at that depth.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_distances_remove_by_depth(
    topology: hwloc_topology_t,
    depth: c_int,
) -> c_int {
    entry!(topology, |t: LoadedMut| {
        let Some(ty) = depth_type(&t.model, depth) else {
            return fail(libc::EINVAL);
        };
        let m = &mut t.model;
        let keep: Vec<bool> = m
            .distances
            .iter()
            .map(|d| unique_type(m, &d.objs) != Some(ty))
            .collect();
        let mut k = keep.into_iter();
        m.distances.retain(|_| k.next().unwrap_or(true));
        0
    })
}

// ------------------------------------------------------------ transform

/// The type and subtype of a C object (objects in a handed-out matrix
/// are the topology's, or NULL).
fn c_obj(o: hwloc_obj_t) -> Option<(c_int, Option<String>)> {
    // SAFETY: NULL or one of the topology's objects, as hwloc requires.
    let o = unsafe { o.as_ref() }?;
    // SAFETY: a NUL-terminated subtype or NULL.
    let sub = unsafe { c_str(o.subtype) }.map(|s| s.into_owned());
    Some((o.type_, sub))
}

fn is_nvswitch(o: hwloc_obj_t) -> bool {
    c_obj(o).is_some_and(|(_, s)| s.as_deref() == Some("NVSwitch"))
}

/// A handed-out matrix as slices of its current size.
///
/// # Safety
/// `d` is a live matrix whose arrays hold `nbobjs` and `nbobjs²` entries.
unsafe fn arrays<'a>(d: &mut hwloc_distances_s) -> (&'a mut [hwloc_obj_t], &'a mut [u64]) {
    let n = d.nbobjs as usize;
    if d.objs.is_null() || d.values.is_null() {
        return (&mut [], &mut []);
    }
    // SAFETY: see above.
    unsafe {
        (
            std::slice::from_raw_parts_mut(d.objs, n),
            std::slice::from_raw_parts_mut(d.values, n * n),
        )
    }
}

/// `HWLOC_DISTANCES_TRANSFORM_REMOVE_NULL`: drops the rows and columns of
/// NULL objects, keeping the order.
fn remove_null(d: &mut hwloc_distances_s) -> c_int {
    // SAFETY: a live handed-out matrix.
    let (objs, values) = unsafe { arrays(d) };
    let n = objs.len();
    let keep: Vec<usize> = (0..n).filter(|&i| !objs[i].is_null()).collect();
    if keep.len() < 2 {
        return fail(libc::EINVAL);
    }
    if keep.len() == n {
        return 0;
    }
    let nb = keep.len();
    for (ni, &i) in keep.iter().enumerate() {
        for (nj, &j) in keep.iter().enumerate() {
            // Positions only move towards the start: the source is read
            // before it is overwritten.
            values[ni * nb + nj] = values[i * n + j];
        }
    }
    for (ni, &i) in keep.iter().enumerate() {
        objs[ni] = objs[i];
    }
    d.nbobjs = nb as c_uint;
    let types: Vec<c_int> = objs[..nb]
        .iter()
        .filter_map(|&o| c_obj(o).map(|(t, _)| t))
        .collect();
    let hetero = types.windows(2).any(|w| w[0] != w[1]);
    let k = d.kind as u64;
    d.kind = if hetero {
        k | kind::HETEROGENEOUS_TYPES
    } else {
        k & !kind::HETEROGENEOUS_TYPES
    } as c_ulong;
    0
}

/// `HWLOC_DISTANCES_TRANSFORM_LINKS`: bandwidths become numbers of links,
/// dividing by the smallest positive value, the diagonal zeroed.
fn links(d: &mut hwloc_distances_s) -> c_int {
    if d.kind as u64 & kind::MEANS_BANDWIDTH == 0 {
        return fail(libc::EINVAL);
    }
    // SAFETY: a live handed-out matrix.
    let (objs, values) = unsafe { arrays(d) };
    match transform::links_values(values, objs.len()) {
        Ok(()) => 0,
        Err(_) => fail(libc::ENOENT),
    }
}

/// Whether the handed-out matrix is the topology's `NVLinkBandwidth`.
fn is_nvlink(t: &hwloc_topology, h: &Handed) -> bool {
    h.origin
        .find(&t.model)
        .is_some_and(|i| t.model.distances[i].name.as_deref() == Some("NVLinkBandwidth"))
}

/// `HWLOC_DISTANCES_TRANSFORM_MERGE_SWITCH_PORTS`: the NVSwitch ports
/// become the first one (their links added up), then NULL objects go.
fn merge_switch_ports(d: &mut hwloc_distances_s) -> c_int {
    // SAFETY: a live handed-out matrix.
    let (objs, values) = unsafe { arrays(d) };
    let switch: Vec<bool> = objs.iter().map(|&o| is_nvswitch(o)).collect();
    match transform::merge_switch_ports_values(values, objs.len(), &switch) {
        Ok(merged) => {
            for j in merged {
                objs[j] = null_mut();
            }
            remove_null(d)
        }
        Err(_) => fail(libc::ENOENT),
    }
}

/// `HWLOC_DISTANCES_TRANSFORM_TRANSITIVE_CLOSURE`: the bandwidth between
/// two objects through the switches is the smaller of what each sends to
/// and receives from them.
fn transitive_closure(d: &mut hwloc_distances_s) -> c_int {
    // SAFETY: a live handed-out matrix.
    let (objs, values) = unsafe { arrays(d) };
    let switch: Vec<bool> = objs.iter().map(|&o| is_nvswitch(o)).collect();
    transform::transitive_closure_values(values, objs.len(), &switch);
    0
}

/// `hwloc_distances_transform`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_distances_transform(
    topology: hwloc_topology_t,
    distances: *mut hwloc_distances_s,
    transform: c_int,
    transform_attr: *mut c_void,
    flags: c_ulong,
) -> c_int {
    entry!(topology, -1, |h| {
        let Some(t) = h.loaded() else {
            return fail(libc::EINVAL);
        };
        if flags != 0 || !transform_attr.is_null() {
            return fail(libc::EINVAL);
        }
        // SAFETY: a matrix from hwloc_distances_get*.
        let Some(h) = (unsafe { handed(distances) }) else {
            return fail(libc::EINVAL);
        };
        match transform {
            TRANSFORM_REMOVE_NULL => remove_null(&mut h.public),
            TRANSFORM_LINKS => links(&mut h.public),
            TRANSFORM_MERGE_SWITCH_PORTS if is_nvlink(t, h) => merge_switch_ports(&mut h.public),
            TRANSFORM_TRANSITIVE_CLOSURE if is_nvlink(t, h) => transitive_closure(&mut h.public),
            _ => fail(libc::EINVAL),
        }
    })
}

// ------------------------------------------------------------ adding

/// A matrix being added (`hwloc_distances_add_handle_t`).
struct Pending {
    name: Option<String>,
    kind: u64,
    /// Objects and values once `hwloc_distances_add_values` gave them.
    matrix: Option<(Vec<ObjId>, Vec<u64>)>,
}

/// Frees a pending matrix (hwloc cancels the handle on every failure).
fn cancel(handle: *mut c_void) {
    if !handle.is_null() {
        // SAFETY: a handle from hwloc_distances_add_create, used once.
        drop(unsafe { Box::from_raw(handle as *mut Pending) });
    }
}

/// `hwloc_distances_add_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_distances_add_create(
    topology: hwloc_topology_t,
    name: *const c_char,
    kind: c_ulong,
    flags: c_ulong,
) -> *mut c_void {
    entry!(topology, null_mut(), |h| {
        if h.loaded().is_none() {
            set_errno(libc::EINVAL);
            return null_mut();
        }
        let k = kind as u64;
        let bad_kind = k & !KIND_ALL != 0
            || (k & KIND_FROM_ALL).count_ones() > 1
            || (k & KIND_MEANS_ALL).count_ones() > 1;
        if bad_kind || flags != 0 {
            set_errno(libc::EINVAL);
            return null_mut();
        }
        let p = Pending {
            // SAFETY: a NUL-terminated name or NULL.
            name: unsafe { c_str(name) }.map(|n| n.into_owned()),
            kind: k,
            matrix: None,
        };
        Box::into_raw(Box::new(p)) as *mut c_void
    })
}

/// Reads the objects and values given to `hwloc_distances_add_values`,
/// dropping NULL objects as hwloc does.
///
/// # Safety
/// `objs` holds `nbobjs` pointers and `values` `nbobjs²` values.
unsafe fn read_matrix(
    t: &hwloc_topology,
    nbobjs: usize,
    objs: *const hwloc_obj_t,
    values: *const u64,
) -> Result<(Vec<ObjId>, Vec<u64>), c_int> {
    // SAFETY: see above.
    let objs = unsafe { std::slice::from_raw_parts(objs, nbobjs) };
    if objs[1..].iter().any(|o| o.is_null()) {
        return Err(libc::EINVAL);
    }
    let keep: Vec<usize> = (0..nbobjs).filter(|&i| !objs[i].is_null()).collect();
    if keep.is_empty() {
        return Err(libc::ENOENT);
    }
    let ids = keep
        .iter()
        .map(|&i| t.id_of(objs[i]))
        .collect::<Option<Vec<ObjId>>>()
        .ok_or(libc::EINVAL)?;
    let cells = nbobjs.checked_mul(nbobjs).ok_or(libc::EINVAL)?;
    // SAFETY: see above.
    let values = unsafe { std::slice::from_raw_parts(values, cells) };
    let mut kept = Vec::with_capacity(keep.len() * keep.len());
    for &i in &keep {
        for &j in &keep {
            kept.push(values[i * nbobjs + j]);
        }
    }
    Ok((ids, kept))
}

/// `hwloc_distances_add_values`: on failure the handle is freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_distances_add_values(
    topology: hwloc_topology_t,
    handle: *mut c_void,
    nbobjs: c_uint,
    objs: *mut hwloc_obj_t,
    values: *mut u64,
    flags: c_ulong,
) -> c_int {
    entry!(topology, -1, |h| {
        let (Some(t), false) = (h.loaded(), handle.is_null()) else {
            cancel(handle);
            return fail(libc::EINVAL);
        };
        // SAFETY: a handle from hwloc_distances_add_create.
        let p = unsafe { &mut *(handle as *mut Pending) };
        if p.matrix.is_some() || flags != 0 || nbobjs < 2 || objs.is_null() || values.is_null() {
            cancel(handle);
            return fail(libc::EINVAL);
        }
        // SAFETY: the caller's arrays, as hwloc documents them.
        match unsafe { read_matrix(t, nbobjs as usize, objs, values) } {
            Ok((ids, vals)) => {
                if unique_type(&t.model, &ids).is_none() {
                    p.kind |= kind::HETEROGENEOUS_TYPES;
                }
                p.matrix = Some((ids, vals));
                0
            }
            Err(e) => {
                cancel(handle);
                fail(e)
            }
        }
    })
}

/// `hwloc_distances_add_commit`: the handle is consumed, whatever the
/// result.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_distances_add_commit(
    topology: hwloc_topology_t,
    handle: *mut c_void,
    flags: c_ulong,
) -> c_int {
    entry!(topology, -1, |h| {
        let (Some(t), false) = (h.loaded_mut(), handle.is_null()) else {
            cancel(handle);
            return fail(libc::EINVAL);
        };
        // SAFETY: a handle from hwloc_distances_add_create, consumed here.
        let p = unsafe { Box::from_raw(handle as *mut Pending) };
        if flags & !(ADD_FLAG_GROUP | ADD_FLAG_GROUP_INACCURATE) != 0 {
            return fail(libc::EINVAL);
        }
        let Some((objs, values)) = p.matrix else {
            return fail(libc::EINVAL);
        };
        let Some(d) = Distances::new(p.name, p.kind, objs, values) else {
            return fail(libc::EINVAL);
        };
        if flags & ADD_FLAG_GROUP != 0 && unique_type(&t.model, &d.objs).is_some() {
            let env = wloc_trust::env::var("HWLOC_GROUPING_ACCURACY");
            let acc = group::accuracies(flags & ADD_FLAG_GROUP_INACCURATE != 0, env.as_deref());
            let mut m = t.model.clone();
            if grouping_enabled(&m)
                && group::group_by_distances(&mut m, &d, &acc)
                && m.finish().is_ok()
            {
                // Objects the matrix names survive grouping (ids are stable).
                t.model = m;
                t.model.distances.push(d);
                t.sync();
                return 0;
            }
        }
        t.model.distances.push(d);
        0
    })
}

/// `hwloc_distances_add` (deprecated all-in-one).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_distances_add(
    topology: hwloc_topology_t,
    nbobjs: c_uint,
    objs: *mut hwloc_obj_t,
    values: *mut u64,
    kind: c_ulong,
    flags: c_ulong,
) -> c_int {
    entry!(topology, -1, |h| {
        // SAFETY: hwloc's contracts, passed on.
        unsafe {
            let d = hwloc_distances_add_create(h.raw(), null(), kind, 0);
            if d.is_null() {
                return -1;
            }
            if hwloc_distances_add_values(h.raw(), d, nbobjs, objs, values, 0) < 0 {
                return -1;
            }
            hwloc_distances_add_commit(h.raw(), d, flags)
        }
    })
}

// ------------------------------------------------------------ grouping

/// Whether hwloc would group (`topology->grouping`): Groups are kept and
/// `HWLOC_GROUPING` does not say 0.
fn grouping_enabled(m: &Topology) -> bool {
    let env_off = wloc_trust::env::var("HWLOC_GROUPING").is_some_and(|v| crate::ffi::atoi(&v) == 0);
    m.type_filter(ObjType::Group) != TypeFilter::KeepNone && !env_off
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handle::loaded;
    use crate::test_support::{objs_of, synthetic};
    use crate::topology::hwloc_topology_destroy;
    use std::ffi::{CStr, CString};

    fn add(
        t: hwloc_topology_t,
        objs: &mut [hwloc_obj_t],
        values: &mut [u64],
        kind: u64,
        flags: c_ulong,
    ) -> c_int {
        // SAFETY: a loaded handle and arrays of the right sizes.
        unsafe {
            let h = hwloc_distances_add_create(t, null(), kind as c_ulong, 0);
            assert!(!h.is_null());
            let n = objs.len() as c_uint;
            assert_eq!(
                hwloc_distances_add_values(t, h, n, objs.as_mut_ptr(), values.as_mut_ptr(), 0),
                0
            );
            hwloc_distances_add_commit(t, h, flags)
        }
    }

    #[test]
    fn groups_numa_nodes_by_latency_and_transforms_bandwidths() {
        let t = synthetic("node:4 core:4 pu:1");
        // SAFETY: a handle this test made and still owns.
        let depth0 = unsafe { loaded(t) }.unwrap().model.depth();
        let mut nodes = objs_of(t, ObjType::NUMANode);
        let mut v = vec![8u64; 16];
        for (i, j) in [(0, 1), (1, 0), (2, 3), (3, 2)] {
            v[i * 4 + j] = 4;
        }
        for i in 0..4 {
            v[i * 4 + i] = 1;
        }
        let lat = kind::MEANS_LATENCY | kind::FROM_USER;
        assert_eq!(add(t, &mut nodes, &mut v, lat, ADD_FLAG_GROUP), 0);
        // SAFETY: a handle this test made and still owns.
        let tt = unsafe { loaded(t) }.unwrap();
        assert_eq!(tt.model.depth(), depth0 + 1);
        let mut got = [null_mut(); 2];
        let mut nr: c_uint = 2;
        // SAFETY: a loaded handle, an array of 2.
        unsafe {
            assert_eq!(
                hwloc_distances_get_by_type(
                    t,
                    ObjType::NUMANode.index() as c_int,
                    &mut nr,
                    got.as_mut_ptr(),
                    0,
                    0
                ),
                0
            );
            assert_eq!(nr, 1);
            assert!(got[1].is_null());
            let d = &*got[0];
            assert_eq!(d.nbobjs, 4);
            assert_eq!(*d.values.add(1), 4);
            assert!(hwloc_distances_get_name(t, got[0]).is_null());
            hwloc_distances_release(t, got[0]);
        }
        // A named bandwidth matrix: links, then NULL objects removed.
        let mut bw = vec![0u64; 16];
        bw[1] = 100;
        bw[4] = 100;
        bw[14] = 200;
        bw[11] = 100;
        for i in 0..4 {
            bw[i * 4 + i] = 1000;
        }
        // SAFETY: a loaded handle and arrays of the right sizes.
        unsafe {
            let name = CString::new("BW").unwrap();
            let h = hwloc_distances_add_create(
                t,
                name.as_ptr(),
                (kind::MEANS_BANDWIDTH | kind::FROM_USER) as c_ulong,
                0,
            );
            assert_eq!(
                hwloc_distances_add_values(t, h, 4, nodes.as_mut_ptr(), bw.as_mut_ptr(), 0),
                0
            );
            assert_eq!(hwloc_distances_add_commit(t, h, ADD_FLAG_GROUP), 0);
            let mut nr: c_uint = 1;
            assert_eq!(
                hwloc_distances_get_by_name(t, name.as_ptr(), &mut nr, got.as_mut_ptr(), 0),
                0
            );
            assert_eq!(nr, 1);
            let n = CStr::from_ptr(hwloc_distances_get_name(t, got[0]));
            assert_eq!(n.to_str().unwrap(), "BW");
            assert_eq!(
                hwloc_distances_transform(t, got[0], TRANSFORM_LINKS, null_mut(), 0),
                0
            );
            let d = &mut *got[0];
            let vals = std::slice::from_raw_parts(d.values, 16);
            assert_eq!(vals, &[0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 2, 0]);
            *d.objs = null_mut();
            *d.objs.add(1) = null_mut();
            assert_eq!(
                hwloc_distances_transform(t, got[0], TRANSFORM_REMOVE_NULL, null_mut(), 0),
                0
            );
            assert_eq!(d.nbobjs, 2);
            assert_eq!(std::slice::from_raw_parts(d.values, 4), &[0, 1, 2, 0]);
            // Switch transforms only apply to NVLinkBandwidth.
            assert_eq!(
                hwloc_distances_transform(t, got[0], TRANSFORM_TRANSITIVE_CLOSURE, null_mut(), 0),
                -1
            );
            assert_eq!(hwloc_distances_release_remove(t, got[0]), 0);
            let mut nr: c_uint = 0;
            assert_eq!(hwloc_distances_get(t, &mut nr, null_mut(), 0, 0), 0);
            assert_eq!(nr, 1);
            assert_eq!(hwloc_distances_remove(t), 0);
            nr = 0;
            assert_eq!(hwloc_distances_get(t, &mut nr, null_mut(), 0, 0), 0);
            assert_eq!(nr, 0);
            hwloc_topology_destroy(t);
        }
    }

    #[test]
    fn refuses_bad_kinds_flags_and_null_objects() {
        let t = synthetic("pack:2 pu:2");
        // SAFETY: a loaded handle; NULL arrays are refused before use.
        unsafe {
            let both = (kind::FROM_OS | kind::FROM_USER) as c_ulong;
            assert!(hwloc_distances_add_create(t, null(), both, 0).is_null());
            assert!(hwloc_distances_add_create(t, null(), 0, 1).is_null());
            let h = hwloc_distances_add_create(t, null(), 0, 0);
            let mut objs = [null_mut(), null_mut()];
            let mut v = [0u64; 4];
            assert_eq!(
                hwloc_distances_add_values(t, h, 2, objs.as_mut_ptr(), v.as_mut_ptr(), 0),
                -1
            );
            let h = hwloc_distances_add_create(t, null(), 0, 0);
            assert_eq!(hwloc_distances_add_commit(t, h, 0), -1);
            let mut nr: c_uint = 1;
            assert_eq!(hwloc_distances_get(t, &mut nr, null_mut(), 0, 0), -1);
            assert_eq!(
                hwloc_distances_get_by_depth(t, 99, &mut nr, null_mut(), 0, 0),
                -1
            );
            hwloc_topology_destroy(t);
        }
    }
}
