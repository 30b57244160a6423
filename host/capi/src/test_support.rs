//! What the unit tests of several modules share: topologies loaded
//! through the C API, and their C objects of a type.

use std::ffi::CString;
use std::ptr::null_mut;

use wloc_core::ObjType;

use crate::handle::{hwloc_topology_t, loaded};
use crate::load::hwloc_topology_load;
use crate::topology::{hwloc_topology_init, hwloc_topology_set_synthetic};
use crate::types::hwloc_obj_t;

/// A topology loaded from a synthetic description (destroy it with
/// `hwloc_topology_destroy`).
pub(crate) fn synthetic(desc: &str) -> hwloc_topology_t {
    let mut t = null_mut();
    let d = CString::new(desc).unwrap();
    // SAFETY: a fresh handle, a valid description.
    unsafe {
        assert_eq!(hwloc_topology_init(&mut t), 0);
        assert_eq!(hwloc_topology_set_synthetic(t, d.as_ptr()), 0);
        assert_eq!(hwloc_topology_load(t), 0);
    }
    t
}

/// The C objects of a type, in the model's order.
pub(crate) fn objs_of(t: hwloc_topology_t, ty: ObjType) -> Vec<hwloc_obj_t> {
    // SAFETY: a loaded handle.
    let tt = unsafe { loaded(t) }.unwrap();
    tt.model
        .objs_by_type(ty)
        .iter()
        .map(|&i| tt.ptr_of(i))
        .collect()
}
