//! The functions and flags hwloc 2.10 to 2.14 added to `hwloc.h` and
//! `hwloc/memattrs.h`, as their documentation describes them.

use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::ptr::null_mut;

use wloc_core::ObjType;

use crate::bitmap::{hwloc_bitmap_alloc, hwloc_bitmap_free, hwloc_bitmap_s};
use crate::memattrs::*;
use crate::test_support::{objs_of, synthetic};
use crate::topology::*;
use crate::types::*;

fn list(b: *const hwloc_bitmap_s) -> String {
    // SAFETY: a live bitmap of the test's.
    let b = unsafe { &*b };
    b.bits().to_list_string()
}

#[test]
fn the_api_version_is_2_14s() {
    assert_eq!(crate::hwloc_get_api_version(), 0x0002_0c00);
}

#[test]
fn other_objects_sets_are_added_to_a_groups() {
    let t = synthetic("pack:2 [numa] core:2 pu:2");
    let cores = objs_of(t, ObjType::Core);
    // SAFETY: a loaded handle, its objects, and a Group it allocated.
    unsafe {
        let g = hwloc_topology_alloc_group_object(t);
        assert!(!g.is_null());
        assert_eq!(hwloc_obj_add_other_obj_sets(g, cores[1]), 0);
        assert_eq!(list((*g).cpuset), "2-3");
        assert_eq!(hwloc_obj_add_other_obj_sets(g, cores[2]), 0);
        assert_eq!(list((*g).cpuset), "2-5");
        assert_eq!(list((*g).complete_cpuset), "2-5");
        assert_eq!(list((*g).nodeset), "0-1");
        assert_eq!(list((*g).complete_nodeset), "0-1");
        // With itself: nothing changes; NULL: refused.
        assert_eq!(hwloc_obj_add_other_obj_sets(g, g), 0);
        assert_eq!(list((*g).cpuset), "2-5");
        assert_eq!(hwloc_obj_add_other_obj_sets(null_mut(), g), -1);
        assert_eq!(hwloc_topology_free_group_object(t, g), 0);
        hwloc_topology_destroy(t);
    }
}

#[test]
fn groups_not_inserted_are_freed_once() {
    let t = synthetic("pack:2 core:2 pu:1");
    let pack = objs_of(t, ObjType::Package)[0];
    // SAFETY: a loaded handle and its objects.
    unsafe {
        let g = hwloc_topology_alloc_group_object(t);
        assert_eq!(hwloc_topology_free_group_object(t, g), 0);
        // Freed already, or never a pending Group: refused, not freed.
        assert_eq!(hwloc_topology_free_group_object(t, g), -1);
        assert_eq!(hwloc_topology_free_group_object(t, pack), -1);
        assert_eq!((*pack).type_, ObjType::Package.index() as i32);
        assert_eq!(hwloc_topology_free_group_object(null_mut(), pack), -1);
        hwloc_topology_destroy(t);
    }
}

#[test]
fn a_subtype_is_set_replaced_and_removed() {
    let t = synthetic("pack:2 core:2 pu:1");
    let pack = objs_of(t, ObjType::Package)[1];
    let export = || {
        let mut buf: *mut c_char = null_mut();
        let mut len = 0;
        // SAFETY: a loaded handle; the buffer is freed below.
        unsafe {
            assert_eq!(
                crate::export::hwloc_topology_export_xmlbuffer(t, &mut buf, &mut len, 0),
                0
            );
            let s = CStr::from_ptr(buf).to_string_lossy().into_owned();
            crate::export::hwloc_free_xmlbuffer(t, buf);
            s
        }
    };
    let sub = CString::new("Slow").unwrap();
    // SAFETY: a loaded handle and its object.
    unsafe {
        assert_eq!(hwloc_obj_set_subtype(t, pack, sub.as_ptr()), 0);
        assert_eq!(CStr::from_ptr((*pack).subtype).to_str(), Ok("Slow"));
        assert!(export().contains("subtype=\"Slow\""));
        let other = CString::new("Fast").unwrap();
        assert_eq!(hwloc_obj_set_subtype(t, pack, other.as_ptr()), 0);
        assert!(export().contains("subtype=\"Fast\""));
        assert_eq!(hwloc_obj_set_subtype(t, pack, std::ptr::null()), 0);
        assert!((*pack).subtype.is_null());
        assert!(!export().contains("subtype="));
        assert_eq!(hwloc_obj_set_subtype(t, null_mut(), sub.as_ptr()), -1);
        hwloc_topology_destroy(t);
    }
}

#[test]
fn the_default_nodeset_covers_the_machine_with_nodes_like_the_first() {
    let t = synthetic("pack:2 [numa] core:2 pu:1");
    let nodes = objs_of(t, ObjType::NUMANode);
    // SAFETY: a loaded handle, its objects, a bitmap of the test's.
    unsafe {
        let set = hwloc_bitmap_alloc();
        assert_eq!(hwloc_topology_get_default_nodeset(t, set, 0), 0);
        assert_eq!(list(set), "0-1");
        // Another kind of memory beside the first node, local to the
        // whole machine: not needed to cover it, so not taken.
        let hbm = CString::new("HBM").unwrap();
        assert_eq!(hwloc_obj_set_subtype(t, nodes[1], hbm.as_ptr()), 0);
        assert_eq!(hwloc_topology_get_default_nodeset(t, set, 0), 0);
        // Still needed to cover the second package's PUs: taken.
        assert_eq!(list(set), "0-1");
        assert_eq!(hwloc_topology_get_default_nodeset(t, set, 1), -1);
        assert_eq!(hwloc_topology_get_default_nodeset(t, null_mut(), 0), -1);
        hwloc_bitmap_free(set);
        hwloc_topology_destroy(t);
    }
}

#[test]
fn nodes_whose_locality_intersects_are_found() {
    let t = synthetic("pack:2 [numa] core:2 pu:1");
    // SAFETY: a loaded handle, bitmaps and arrays of the test's.
    unsafe {
        let set = hwloc_bitmap_alloc();
        (*set).set_bits(wloc_core::Bitmap::parse_list("1-2").unwrap());
        let mut loc = hwloc_location {
            type_: LOCATION_TYPE_CPUSET,
            location: hwloc_location_u { cpuset: set },
        };
        let mut found = [null_mut(); 4];
        let mut nr = 4;
        assert_eq!(
            hwloc_get_local_numanode_objs(t, &mut loc, &mut nr, found.as_mut_ptr(), 0),
            0
        );
        assert_eq!(nr, 0);
        nr = 4;
        assert_eq!(
            hwloc_get_local_numanode_objs(
                t,
                &mut loc,
                &mut nr,
                found.as_mut_ptr(),
                LOCAL_NUMANODE_FLAG_INTERSECT_LOCALITY
            ),
            0
        );
        assert_eq!(nr, 2);
        hwloc_bitmap_free(set);
        hwloc_topology_destroy(t);
    }
}
