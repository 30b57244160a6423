//! `hwloc/bitmap.h`: the bitmap API over wloc's [`Bitmap`].

use wloc_core::Bitmap;

/// `struct hwloc_bitmap_s`: opaque to C.
#[derive(Clone, Debug, Default)]
pub struct hwloc_bitmap_s {
    pub(crate) bits: Bitmap,
}

/// A new C bitmap holding `bits`.
pub(crate) fn new_raw(bits: Bitmap) -> *mut hwloc_bitmap_s {
    Box::into_raw(Box::new(hwloc_bitmap_s { bits }))
}

/// Frees a C bitmap from [`new_raw`] (NULL is fine).
pub(crate) fn free_raw(b: *mut hwloc_bitmap_s) {
    if !b.is_null() {
        // SAFETY: every C bitmap is a Box from new_raw.
        drop(unsafe { Box::from_raw(b) });
    }
}
