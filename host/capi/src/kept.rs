//! [`Kept`]: the C copies (strings, bitmaps, info arrays) that hwloc
//! hands out as pointers into the topology (CPU kinds'), kept as long as
//! the topology.

use std::collections::HashMap;
use std::ffi::CString;
use std::os::raw::{c_char, c_uint};
use std::sync::Mutex;

use wloc_core::Bitmap;
use wloc_core::object::Info;

use crate::types::*;

/// One kind's infos as C sees them: the array points into the strings.
pub(crate) struct KindInfos {
    pub(crate) model: Vec<Info>,
    pub(crate) _strings: Vec<(CString, CString)>,
    pub(crate) array: Vec<hwloc_info_s>,
}

impl KindInfos {
    pub(crate) fn new(model: &[Info]) -> KindInfos {
        let strings: Vec<(CString, CString)> = model
            .iter()
            .map(|i| (cstring(&i.name), cstring(&i.value)))
            .collect();
        let array = strings
            .iter()
            .map(|(n, v)| hwloc_info_s {
                name: n.as_ptr() as *mut c_char,
                value: v.as_ptr() as *mut c_char,
            })
            .collect();
        KindInfos {
            model: model.to_vec(),
            _strings: strings,
            array,
        }
    }
}

/// A C string of `s` (NUL bytes dropped).
pub(crate) fn cstring(s: &str) -> CString {
    CString::new(s.replace('\0', "")).unwrap_or_default()
}

#[derive(Default)]
pub(crate) struct KeptInner {
    pub(crate) strings: HashMap<String, CString>,
    /// Boxed: C keeps their addresses while the list grows.
    #[allow(clippy::vec_box)]
    pub(crate) bitmaps: Vec<Box<hwloc_bitmap_s>>,
    pub(crate) kinds: HashMap<usize, KindInfos>,
}

/// What the topology hands out by pointer and keeps alive: names
/// (`hwloc_memattr_get_name`, `hwloc_distances_get_name`), initiator
/// cpusets (`hwloc_memattr_get_initiators`) and the infos of CPU kinds
/// (`hwloc_cpukinds_get_info`). Freed with the topology. A Mutex keeps
/// concurrent readers (hwloc allows them) safe.
#[derive(Default)]
pub(crate) struct Kept(pub(crate) Mutex<KeptInner>);

impl Kept {
    pub(crate) fn inner(&self) -> std::sync::MutexGuard<'_, KeptInner> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A C copy of `s`, valid as long as the topology.
    pub(crate) fn string(&self, s: &str) -> *const c_char {
        let mut k = self.inner();
        k.strings
            .entry(s.to_owned())
            .or_insert_with(|| cstring(s))
            .as_ptr()
    }

    /// A C bitmap equal to `b`, valid as long as the topology.
    pub(crate) fn bitmap(&self, b: &Bitmap) -> *mut hwloc_bitmap_s {
        let mut k = self.inner();
        if let Some(x) = k.bitmaps.iter_mut().find(|x| x.bits() == b) {
            return &mut **x;
        }
        let mut x = Box::new(hwloc_bitmap_s::new(b.clone()));
        let p: *mut hwloc_bitmap_s = &mut *x;
        k.bitmaps.push(x);
        p
    }

    /// The C array of kind `idx`'s infos, rebuilt only when they changed
    /// (hwloc's stays valid until the kinds change).
    pub(crate) fn kind_infos(&self, idx: usize, infos: &[Info]) -> (c_uint, *mut hwloc_info_s) {
        let mut k = self.inner();
        let e = k.kinds.entry(idx).or_insert_with(|| KindInfos::new(infos));
        if e.model != infos {
            *e = KindInfos::new(infos);
        }
        let p = if e.array.is_empty() {
            std::ptr::null_mut()
        } else {
            e.array.as_mut_ptr()
        };
        (e.array.len() as c_uint, p)
    }
}
