//! Helpers shared by the tests of the bitmap module.

extern crate std;

use core::hash::{Hash, Hasher};
use std::collections::hash_map::DefaultHasher;

use super::Bitmap;

/// The set of a list string, which must parse.
pub(super) fn list(s: &str) -> Bitmap {
    Bitmap::parse_list(s).unwrap_or_else(|e| panic!("{e}"))
}

/// The hash of `t` with the standard hasher.
pub(super) fn hash_of<T: Hash>(t: &T) -> u64 {
    let mut h = DefaultHasher::new();
    t.hash(&mut h);
    h.finish()
}
