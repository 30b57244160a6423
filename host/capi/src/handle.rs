//! The topology handle an entry point receives from C.

use std::os::raw::c_int;

use crate::topology::hwloc_topology;
use crate::types::hwloc_topology_t;

/// A topology handle as an entry point received it from C, made only by
/// [`entry!`](crate::ffi::entry) (whose safety argument covers it): its
/// methods give the topology behind it, or `None` for NULL.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Handle<'a> {
    ptr: hwloc_topology_t,
    _call: std::marker::PhantomData<&'a mut hwloc_topology>,
}

impl<'a> Handle<'a> {
    /// The handle `ptr`.
    ///
    /// # Safety
    /// `ptr` is NULL or a live handle (from `hwloc_topology_init`, `dup`
    /// or an adopted one, not yet destroyed), used by no one else while
    /// the handle lives except through it.
    pub(crate) unsafe fn new(ptr: hwloc_topology_t) -> Self {
        Handle {
            ptr,
            _call: std::marker::PhantomData,
        }
    }

    /// The pointer, for the functions that take one.
    pub(crate) fn raw(self) -> hwloc_topology_t {
        self.ptr
    }

    /// The topology (`None` for NULL).
    pub(crate) fn get(self) -> Option<&'a hwloc_topology> {
        // SAFETY: NULL or live, as `new` requires.
        unsafe { self.ptr.as_ref() }
    }

    /// The topology, mutably (`None` for NULL).
    pub(crate) fn get_mut(self) -> Option<&'a mut hwloc_topology> {
        // SAFETY: NULL or live and not otherwise used, as `new` requires.
        unsafe { self.ptr.as_mut() }
    }

    /// The loaded topology (`None` for NULL or not loaded).
    pub(crate) fn loaded(self) -> Option<&'a hwloc_topology> {
        self.get().filter(|t| t.loaded)
    }

    /// The loaded topology, or `EINVAL` (for the entries that return
    /// hwloc's error through a `Result`).
    pub(crate) fn loaded_or_einval(self) -> Result<&'a hwloc_topology, c_int> {
        self.loaded().ok_or(libc::EINVAL)
    }

    /// The loaded topology, mutably. What the program changed in place
    /// in the C objects is taken into the model first
    /// ([`hwloc_topology::pull_from_c`]), before the caller changes the
    /// model and mirrors it back.
    pub(crate) fn loaded_mut(self) -> Option<&'a mut hwloc_topology> {
        let t = self.get_mut().filter(|t| t.loaded)?;
        t.pull_from_c();
        Some(t)
    }
}
