//! Bad input through the C API gets hwloc's error return and `errno`,
//! never a crash: NULL handles and objects, objects of another topology,
//! unparsable XML and synthetic descriptions, unknown flags, calls before
//! load.

use std::ffi::CString;
use std::os::raw::c_int;
use std::ptr::{null, null_mut};

use hwloc::bitmap::*;
use hwloc::objects::*;
use hwloc::topology::*;

fn errno() -> c_int {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn synthetic(desc: &str) -> hwloc_topology_t {
    synthetic_keeping_misc(desc, false)
}

fn synthetic_keeping_misc(desc: &str, keep_misc: bool) -> hwloc_topology_t {
    let d = CString::new(desc).unwrap();
    let mut t = null_mut();
    // SAFETY: the C API used as a C program would.
    unsafe {
        assert_eq!(hwloc_topology_init(&mut t), 0);
        assert_eq!(hwloc_topology_set_synthetic(t, d.as_ptr()), 0);
        if keep_misc {
            // HWLOC_OBJ_MISC (17), HWLOC_TYPE_FILTER_KEEP_ALL (0).
            assert_eq!(hwloc_topology_set_type_filter(t, 17, 0), 0);
        }
        assert_eq!(hwloc_topology_load(t), 0);
    }
    t
}

#[test]
fn null_handles_get_errors() {
    // SAFETY: every call below takes NULL where a C program might pass it.
    unsafe {
        assert_eq!(hwloc_topology_init(null_mut()), -1);
        assert_eq!(hwloc_topology_load(null_mut()), -1);
        assert_eq!(errno(), libc::EINVAL);
        hwloc_topology_destroy(null_mut());
        hwloc_topology_check(null_mut());
        assert_eq!(hwloc_topology_get_depth(null_mut()), 0);
        assert!(hwloc_get_obj_by_depth(null_mut(), 0, 0).is_null());
        assert_eq!(hwloc_get_nbobjs_by_depth(null_mut(), 0), 0);
        assert_eq!(hwloc_get_type_depth(null_mut(), 0), -1);
        assert!(hwloc_topology_get_topology_cpuset(null_mut()).is_null());
        assert_eq!(hwloc_topology_set_xml(null_mut(), null()), -1);
        assert_eq!(hwloc_topology_restrict(null_mut(), null(), 0), -1);
        assert!(hwloc_topology_insert_misc_object(null_mut(), null_mut(), null()).is_null());
        assert_eq!(hwloc_obj_type_snprintf(null_mut(), 0, null_mut(), 0), -1);
        assert_eq!(
            hwloc_obj_attr_snprintf(null_mut(), 0, null_mut(), null(), 1),
            -1
        );
        assert_eq!(hwloc_obj_add_info(null_mut(), null(), null()), -1);
        assert_eq!(hwloc_type_sscanf(null(), null_mut(), null_mut(), 0), -1);
        let mut b = null_mut();
        let mut len = 0;
        assert_eq!(
            hwloc::export::hwloc_topology_export_xmlbuffer(null_mut(), &mut b, &mut len, 0),
            -1
        );
        assert_eq!(hwloc_bitmap_weight(null()), -1);
    }
}

#[test]
fn unparsable_sources_are_refused() {
    let mut t = null_mut();
    let bad_xml = CString::new("<topology version=\"2.0\"><object type=").unwrap();
    let bad_synth = CString::new("pack:2 core:").unwrap();
    let missing = CString::new("/nonexistent/topology.xml").unwrap();
    // SAFETY: the C API used as a C program would.
    unsafe {
        assert_eq!(hwloc_topology_init(&mut t), 0);
        assert_eq!(hwloc_topology_set_synthetic(t, bad_synth.as_ptr()), -1);
        assert_eq!(errno(), libc::EINVAL);
        let len = bad_xml.as_bytes_with_nul().len() as c_int;
        assert_eq!(hwloc_topology_set_xmlbuffer(t, bad_xml.as_ptr(), len), 0);
        assert_eq!(hwloc_topology_load(t), -1);
        assert_eq!(errno(), libc::EINVAL);
        // A missing file is refused when named, as libhwloc refuses it
        // (its XML backend reads the file then); the handle stays usable.
        assert_eq!(hwloc_topology_set_xml(t, missing.as_ptr()), -1);
        assert_eq!(errno(), libc::ENOENT);
        assert_eq!(hwloc_topology_load(t), -1);
        assert_eq!(hwloc_topology_set_xmlbuffer(t, bad_xml.as_ptr(), -5), -1);
        hwloc_topology_destroy(t);
    }
}

#[test]
fn flags_and_state_are_checked() {
    let mut t = null_mut();
    // SAFETY: the C API used as a C program would.
    unsafe {
        assert_eq!(hwloc_topology_init(&mut t), 0);
        assert_eq!(hwloc_topology_set_flags(t, 1 << 20), -1);
        assert_eq!(errno(), libc::EINVAL);
        assert_eq!(hwloc_topology_set_type_filter(t, 999, 0), -1);
        assert_eq!(hwloc_topology_set_type_filter(t, 3, 1), -1); // PU cannot go
        assert_eq!(hwloc_topology_set_type_filter(t, 0, 42), -1);
        // Before a load the topology is its root Machine alone, as in
        // hwloc (programs free their userdata from it on error paths).
        assert_eq!(hwloc_topology_get_depth(t), 1);
        let root = hwloc_get_obj_by_depth(t, 0, 0);
        assert!(!root.is_null());
        assert_eq!((*root).type_, 0);
        assert_eq!(hwloc_get_nbobjs_by_depth(t, 0), 1);
        assert!(hwloc_get_obj_by_depth(t, 1, 0).is_null());
        assert!(hwloc_get_obj_by_depth(t, 0, 1).is_null());
        hwloc_topology_destroy(t);
    }
    let t = synthetic("pack:2 pu:2");
    // SAFETY: the C API used as a C program would.
    unsafe {
        assert_eq!(hwloc_topology_load(t), -1);
        assert_eq!(errno(), libc::EBUSY);
        assert_eq!(hwloc_topology_set_flags(t, 0), -1);
        let set = hwloc_bitmap_alloc();
        assert_eq!(hwloc_topology_restrict(t, set, 1 << 30), -1);
        // An empty set leaves nothing: refused, the topology unchanged.
        assert_eq!(hwloc_topology_restrict(t, set, 0), -1);
        assert_eq!(
            hwloc_get_nbobjs_by_depth(t, hwloc_topology_get_depth(t) - 1),
            4
        );
        hwloc_bitmap_free(set);
        assert!(hwloc_get_obj_by_depth(t, 99, 0).is_null());
        assert!(hwloc_get_obj_by_depth(t, -42, 0).is_null());
        assert!(hwloc_get_obj_by_depth(t, 0, 7).is_null());
        assert_eq!(hwloc_get_depth_type(t, 77), -1);
        hwloc_topology_destroy(t);
    }
}

#[test]
fn objects_of_another_topology_are_refused() {
    let plain = synthetic("pack:2 pu:2");
    // SAFETY: a loaded handle; Misc objects are filtered out by default.
    unsafe {
        let root = hwloc_get_obj_by_depth(plain, 0, 0);
        assert!(hwloc_topology_insert_misc_object(plain, root, null()).is_null());
        assert_eq!(errno(), libc::EINVAL);
        hwloc_topology_destroy(plain);
    }
    let a = synthetic_keeping_misc("pack:2 pu:2", true);
    let b = synthetic_keeping_misc("pack:2 pu:2", true);
    let name = CString::new("m").unwrap();
    // SAFETY: the C API used as a C program would; the foreign object is
    // a valid object of the other topology.
    unsafe {
        let foreign = hwloc_get_obj_by_depth(b, 1, 0);
        assert!(!foreign.is_null());
        assert!(hwloc_topology_insert_misc_object(a, foreign, name.as_ptr()).is_null());
        assert_eq!(errno(), libc::EINVAL);
        let mut objs = [null_mut(); 4];
        assert_eq!(hwloc_get_closest_objs(a, foreign, objs.as_mut_ptr(), 4), 0);
        // A Group never allocated by this topology cannot be inserted.
        let g = hwloc_topology_alloc_group_object(b);
        assert!(hwloc_topology_insert_group_object(a, g).is_null());
        // Its own object is accepted (the refusal above was the foreign one).
        let own = hwloc_get_obj_by_depth(a, 1, 0);
        assert!(!hwloc_topology_insert_misc_object(a, own, name.as_ptr()).is_null());
        hwloc_topology_destroy(a);
        hwloc_topology_destroy(b);
    }
}

#[test]
fn bitmap_strings_that_do_not_parse_are_refused() {
    // SAFETY: the C API used as a C program would.
    unsafe {
        let b = hwloc_bitmap_alloc();
        let s = CString::new("garbage!").unwrap();
        assert_eq!(hwloc_bitmap_sscanf(b, s.as_ptr()), -1);
        assert_eq!(hwloc_bitmap_list_sscanf(b, s.as_ptr()), -1);
        assert_eq!(hwloc_bitmap_taskset_sscanf(b, s.as_ptr()), -1);
        hwloc_bitmap_free(b);
    }
}
