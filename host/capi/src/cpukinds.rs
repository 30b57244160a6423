//! `hwloc/cpukinds.h`: kinds of CPU cores, over the model's
//! [`CpuKind`]s.

use std::os::raw::{c_int, c_uint, c_ulong};

use wloc_core::cpukinds::{self, CpuKind};
use wloc_core::object::Info;
use wloc_core::{CpuSet, Topology};

use crate::ffi::{c_str, fail};
use crate::handle::hwloc_topology_t;
use crate::kept::Kept;
use crate::types::*;

// SAFETY: the raw pointers inside only point into the owned CStrings
// and are only handed out, never dereferenced here.
unsafe impl Send for Kept {}
// SAFETY: as above; every access goes through the Mutex.
unsafe impl Sync for Kept {}

/// `hwloc_cpukinds_get_nr`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_cpukinds_get_nr(
    topology: hwloc_topology_t,
    flags: c_ulong,
) -> c_int {
    entry!(topology, |t: Loaded| {
        if flags != 0 {
            return fail(libc::EINVAL);
        }
        c_int::try_from(t.model.cpukinds.len()).unwrap_or(c_int::MAX)
    })
}

/// The model set of a C bitmap (`None` for NULL).
fn cpuset_of(b: hwloc_const_bitmap_t) -> Option<CpuSet> {
    // SAFETY: NULL or a bitmap from hwloc_bitmap_alloc.
    unsafe { b.as_ref() }.map(|b| CpuSet::from_bitmap(b.bits().clone()))
}

/// `hwloc_cpukinds_get_by_cpuset`: the kind containing all of `cpuset`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_cpukinds_get_by_cpuset(
    topology: hwloc_topology_t,
    cpuset: hwloc_const_bitmap_t,
    flags: c_ulong,
) -> c_int {
    entry!(topology, |t: Loaded| {
        if flags != 0 {
            return fail(libc::EINVAL);
        }
        let Some(set) = cpuset_of(cpuset).filter(|s| !s.is_empty()) else {
            return fail(libc::EINVAL);
        };
        for (i, k) in t.model.cpukinds.iter().enumerate() {
            if set.is_included_in(&k.cpuset) {
                return i as c_int;
            }
            if set.intersects(&k.cpuset) {
                return fail(libc::EXDEV);
            }
        }
        fail(libc::ENOENT)
    })
}

/// `hwloc_cpukinds_get_info`: the infos array stays valid until the
/// kinds change.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_cpukinds_get_info(
    topology: hwloc_topology_t,
    kind_index: c_uint,
    cpuset: hwloc_bitmap_t,
    efficiencyp: *mut c_int,
    nr_infosp: *mut c_uint,
    infosp: *mut *mut hwloc_info_s,
    flags: c_ulong,
) -> c_int {
    entry!(topology, |t: Loaded| {
        if flags != 0 {
            return fail(libc::EINVAL);
        }
        let Some(k) = t.model.cpukinds.get(kind_index as usize) else {
            return fail(libc::ENOENT);
        };
        // SAFETY: each output is NULL or a place the caller gives.
        unsafe {
            if let Some(c) = cpuset.as_mut() {
                c.set_bits(k.cpuset.bitmap().clone());
            }
            if let Some(e) = efficiencyp.as_mut() {
                *e = k.efficiency;
            }
            if !nr_infosp.is_null() && !infosp.is_null() {
                let (n, p) = t.kept.kind_infos(kind_index as usize, &k.infos);
                *nr_infosp = n;
                *infosp = p;
            }
        }
        0
    })
}

/// The machine's architecture, which decides how kinds are ranked.
fn architecture(m: &Topology) -> Option<String> {
    m.obj(m.root())
        .info("Architecture")
        .map(String::from)
        .or_else(|| {
            m.infos
                .iter()
                .find(|i| i.name == "Architecture")
                .map(|i| i.value.clone())
        })
}

/// Reads the caller's infos array.
///
/// # Safety
/// `infos` holds `n` entries (or is NULL when `n` is 0).
unsafe fn read_infos(n: c_uint, infos: *const hwloc_info_s) -> Option<Vec<Info>> {
    if n == 0 {
        return Some(Vec::new());
    }
    if infos.is_null() {
        return None;
    }
    // SAFETY: see above.
    let infos = unsafe { std::slice::from_raw_parts(infos, n as usize) };
    infos
        .iter()
        .map(|i| {
            // SAFETY: NUL-terminated strings, as hwloc requires.
            let (name, value) = unsafe { (c_str(i.name), c_str(i.value)) };
            Some(Info {
                name: name?.into_owned(),
                value: value?.into_owned(),
            })
        })
        .collect()
}

/// `hwloc_cpukinds_register`: describes the PUs of `cpuset` (splitting
/// kinds it cuts), then ranks the kinds again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_cpukinds_register(
    topology: hwloc_topology_t,
    cpuset: hwloc_bitmap_t,
    forced_efficiency: c_int,
    nr_infos: c_uint,
    infos: *mut hwloc_info_s,
    flags: c_ulong,
) -> c_int {
    entry!(topology, |t: LoadedMut| {
        if flags != 0 {
            return fail(libc::EINVAL);
        }
        let Some(set) = cpuset_of(cpuset).filter(|s| !s.is_empty()) else {
            return fail(libc::EINVAL);
        };
        // SAFETY: the caller's array of nr_infos entries.
        let Some(infos) = (unsafe { read_infos(nr_infos, infos) }) else {
            return fail(libc::EINVAL);
        };
        let forced = (forced_efficiency >= 0).then_some(forced_efficiency);
        let m = &mut t.model;
        let mut kinds: Vec<CpuKind> = std::mem::take(&mut m.cpukinds);
        cpukinds::register(&mut kinds, &set, forced, &infos);
        cpukinds::rank(&mut kinds, m.cpukinds_ranking, architecture(m).as_deref());
        m.cpukinds = kinds;
        0
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kept::cstring;
    use crate::test_support::synthetic;
    use crate::topology::hwloc_topology_destroy;
    use std::ffi::CStr;
    use std::os::raw::c_char;
    use std::ptr::null_mut;
    use wloc_core::Bitmap;

    fn set(first: u32, last: u32) -> hwloc_bitmap_s {
        hwloc_bitmap_s::new(Bitmap::from_range(first, Some(last)))
    }

    #[test]
    fn registers_ranks_and_finds_kinds() {
        let t = synthetic("pack:4 pu:3");
        // SAFETY: a loaded handle; outputs are places on the stack.
        unsafe {
            assert_eq!(hwloc_cpukinds_get_nr(t, 0), 0);
            assert_eq!(hwloc_cpukinds_get_nr(t, 1), -1);
            let (name, big, small) = (
                cstring("CoreType"),
                cstring("BigCore"),
                cstring("SmallCore"),
            );
            let mut info = hwloc_info_s {
                name: name.as_ptr() as *mut c_char,
                value: big.as_ptr() as *mut c_char,
            };
            let mut s = set(0, 5);
            assert_eq!(hwloc_cpukinds_register(t, &mut s, 1000, 1, &mut info, 0), 0);
            info.value = small.as_ptr() as *mut c_char;
            let mut s = set(6, 8);
            assert_eq!(hwloc_cpukinds_register(t, &mut s, 10, 1, &mut info, 0), 0);
            assert_eq!(hwloc_cpukinds_get_nr(t, 0), 2);
            let mut out = set(0, 0);
            let (mut eff, mut nr, mut infos) = (0, 0, null_mut());
            assert_eq!(
                hwloc_cpukinds_get_info(t, 0, &mut out, &mut eff, &mut nr, &mut infos, 0),
                0
            );
            assert_eq!(*out.bits(), Bitmap::from_range(6, Some(8)));
            assert_eq!((eff, nr), (0, 1));
            assert_eq!(
                CStr::from_ptr((*infos).value).to_str().unwrap(),
                "SmallCore"
            );
            // The same array comes back while the kinds do not change.
            let before = infos;
            assert_eq!(
                hwloc_cpukinds_get_info(t, 0, null_mut(), null_mut(), &mut nr, &mut infos, 0),
                0
            );
            assert_eq!(before, infos);
            assert_eq!(
                hwloc_cpukinds_get_info(t, 2, null_mut(), null_mut(), null_mut(), null_mut(), 0),
                -1
            );
            let s = set(1, 3);
            assert_eq!(hwloc_cpukinds_get_by_cpuset(t, &s, 0), 1);
            let s = set(5, 6);
            assert_eq!(hwloc_cpukinds_get_by_cpuset(t, &s, 0), -1);
            assert_eq!(*libc::__errno_location(), libc::EXDEV);
            let s = set(9, 11);
            assert_eq!(hwloc_cpukinds_get_by_cpuset(t, &s, 0), -1);
            assert_eq!(*libc::__errno_location(), libc::ENOENT);
            assert_eq!(hwloc_cpukinds_get_by_cpuset(t, std::ptr::null(), 0), -1);
            let mut empty_set = hwloc_bitmap_s::new(Bitmap::new());
            assert_eq!(
                hwloc_cpukinds_register(t, &mut empty_set, 0, 0, null_mut(), 0),
                -1
            );
            hwloc_topology_destroy(t);
        }
    }

    #[test]
    fn kept_copies_are_shared_and_stable() {
        let k = Kept::default();
        let a = k.string("Bandwidth");
        let b = k.string("Bandwidth");
        assert_eq!(a, b);
        let s1 = k.bitmap(&Bitmap::from_range(0, Some(3)));
        let s2 = k.bitmap(&Bitmap::from_range(0, Some(3)));
        assert_eq!(s1, s2);
        assert_ne!(s1, k.bitmap(&Bitmap::from_index(9)));
    }
}
