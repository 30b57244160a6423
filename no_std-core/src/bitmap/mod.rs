//! hwloc-compatible bitmaps: CPU sets and NUMA node sets.
//!
//! A [`Bitmap`] is an unbounded set of non-negative indexes that may be
//! *infinite*: every index above some point is set.  This mirrors
//! `hwloc_bitmap_t`, and the three string forms are those of hwloc:
//!
//! | form | example | printer / parser |
//! | --- | --- | --- |
//! | hwloc | `0x00000078,,0x00000004`, `0xf...f,0xfffffffc` | [`Display`](core::fmt::Display) / [`Bitmap::parse`] |
//! | list | `2,67-70`, `2-` | [`Bitmap::to_list_string`] / [`Bitmap::parse_list`] |
//! | taskset | `0x780000000000000004`, `0xf...ffffffffffffffffc` | [`Bitmap::to_taskset_string`] / [`Bitmap::parse_taskset`] |
//!
//! The printers produce exactly what hwloc 2.9 on a 64-bit host prints
//! (`hwloc_bitmap_snprintf`, `hwloc_bitmap_list_snprintf`,
//! `hwloc_bitmap_taskset_snprintf`).  The parsers accept a strict subset of
//! what the hwloc parsers accept, chosen so that every accepted string means
//! the same set for hwloc; inputs on which hwloc reads uninitialised memory,
//! asserts, or silently drops data (`"0x1,"`, `",0x1"`, `"3-1"`, `"5x7"`,
//! octal `"010"` in lists, chunks wider than 32 bits...) are rejected with a
//! [`BitmapParseError`].  After the `0xf...f` prefix, the bits a chunk
//! (or taskset digit) leaves above it belong to the infinite part:
//! `0xf...f,0x00000003` is `0-1,32-`, as hwloc 2.14 reads it (hwloc 2.9
//! rounded the explicit part up to 64 bits and read `0-1,64-`).
//!
//! [`Set<K>`] wraps a bitmap with a kind marker so that CPU sets
//! ([`CpuSet`]) and NUMA node sets ([`NodeSet`]) cannot be mixed up.
//!
//! The module is split by sub-concept: the type and its word storage
//! here; building and editing sets in `construct`; indexing and
//! iteration in `iter`; set algebra and ordering in `algebra`; the three
//! string forms (printing, parsing and their errors) in `format`; the
//! typed [`CpuSet`] and [`NodeSet`] in `typed`.

use core::fmt;
use smallvec::SmallVec;

mod algebra;
mod construct;
mod format;
mod iter;
#[cfg(test)]
mod proptests;
#[cfg(feature = "serde")]
mod serde_impls;
#[cfg(test)]
mod test_util;
mod typed;

pub use algebra::SetOp;
pub use format::{BitmapFormat, BitmapParseError, BitmapParseErrorKind};
pub use iter::{Iter, Ranges};
pub use typed::{CpuKind, CpuSet, NodeKind, NodeSet, Set, SetKind};

/// All bits of a storage word set.
const FULL: u64 = !0;

/// Number of bit positions a parsed string may describe: every index written
/// in a string, every bit position spanned by a hex string, and the first
/// index of an infinite set's all-set tail must be below this.  It keeps
/// hostile inputs such as `"99999999999999-"` from allocating gigabytes (a
/// bitmap up to this bound needs at most 2 MiB), and keeps every parsed set
/// printable in all three forms within the bound.
pub const MAX_PARSE_BITS: u32 = 1 << 24;

/// Largest index the parsers accept (`MAX_PARSE_BITS - 1`).
pub const MAX_PARSE_INDEX: u32 = MAX_PARSE_BITS - 1;

/// Number of indexes a set read from binary untrusted input may span:
/// component records and topology images hold PU and NUMA node indexes
/// below this (2^20, a million), so that one such set takes at most
/// 128 KiB, whatever a hostile source claims.
pub const MAX_SET_BITS: u32 = 1 << 20;

/// The storage a [`Bitmap`] needed could not be allocated: returned by
/// the `try_*` methods (such as [`Bitmap::try_set`]), which leave the set
/// as it was instead of aborting the process as the other methods do when
/// memory runs out.  Setting index 4 billion in a finite set needs 512 MiB.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AllocError;

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("memory allocation for a bitmap failed")
    }
}

impl core::error::Error for AllocError {}

/// Empty word storage with room for `n` words, or [`AllocError`].
fn try_words(n: usize) -> Result<Words, AllocError> {
    let mut w = Words::new();
    w.try_reserve_exact(n).map_err(|_| AllocError)?;
    Ok(w)
}

/// Unwraps the result of a generic step run with infallible growth.
#[inline]
fn infallible<T>(r: Result<T, core::convert::Infallible>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => match e {},
    }
}

#[inline]
fn word_index(i: u32) -> usize {
    (i / 64) as usize
}

#[inline]
fn bit_of(i: u32) -> u64 {
    1u64 << (i % 64)
}

/// Converts an internal position (which may reach 2^32) to a public index.
#[inline]
fn to_index(pos: Option<u64>) -> Option<u32> {
    pos.and_then(|p| u32::try_from(p).ok())
}

/// Word storage of a [`Bitmap`]: sets of up to 128 indexes (NUMA node sets,
/// the CPU sets of most machines) live inline, without a heap allocation,
/// in the same 24 bytes a `Vec` takes.
/// Words stored without a heap allocation (two: 128 CPUs or nodes).
const INLINE_WORDS: usize = 2;
type Words = SmallVec<[u64; INLINE_WORDS]>;

/// An unbounded set of non-negative indexes, possibly infinite (all bits set
/// beyond some index).
///
/// Storage is a vector of 64-bit words plus an `infinite` flag giving the
/// value of every bit past the stored words.  The representation is kept
/// canonical (no trailing word equal to the fill value), so the derived
/// equality and hashing are set equality and set hashing.
///
/// [`Ord`] follows `hwloc_bitmap_compare` (see [`Bitmap::compare_last`]): it
/// is a total order usable for sorting, not the subset relation.
#[derive(PartialEq, Eq, Hash, Default)]
pub struct Bitmap {
    /// Bits `64*i .. 64*i+63` live in `words[i]`; never ends with a word
    /// equal to the fill value (`0`, or `!0` when `infinite`).
    words: Words,
    /// Value of every bit past `words`.
    infinite: bool,
}

/// Storage holding a copy of `w`: word by word while it fits inline (no
/// call to `memcpy` for one or two words), as one copy past that.
#[inline]
fn words_of(w: &[u64]) -> Words {
    if w.len() <= INLINE_WORDS {
        let mut v = Words::new();
        for &x in w {
            v.push(x);
        }
        v
    } else {
        Words::from_slice(w)
    }
}

/// Makes `to` a copy of `w`, keeping a heap allocation it has (SmallVec's
/// `extend_from_slice` costs a `memcpy` call even for one word, hence the
/// loop for the inline sizes).
#[inline]
fn assign_words(to: &mut Words, w: &[u64]) {
    // A set asked for again is mostly what it was: then nothing is written.
    if to.len() == w.len() && to.iter().zip(w).all(|(a, b)| a == b) {
        return;
    }
    to.clear();
    if w.len() <= INLINE_WORDS {
        for &x in w {
            to.push(x);
        }
    } else {
        to.extend_from_slice(w);
    }
}

// By hand: the derived clone copies the words one by one through an
// iterator (SmallVec's `Clone`); a copy of the slice is a few times
// faster, and sets are cloned on every query of the C library.
impl Clone for Bitmap {
    fn clone(&self) -> Self {
        Bitmap {
            words: words_of(&self.words),
            infinite: self.infinite,
        }
    }

    fn clone_from(&mut self, source: &Self) {
        assign_words(&mut self.words, &source.words);
        self.infinite = source.infinite;
    }
}

impl Bitmap {
    // ----- raw words ------------------------------------------------------

    /// The stored words, least significant first.  Bits past them all equal
    /// [`is_infinite`](Self::is_infinite); the last stored word never equals
    /// that fill value, so an empty or full set stores no word at all.
    #[inline]
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// The `i`-th 64-bit word (indexes `64*i ..= 64*i+63`), including the
    /// infinite part (`hwloc_bitmap_to_ith_ulong`).
    #[doc(alias = "hwloc_bitmap_to_ith_ulong")]
    #[inline]
    pub fn word(&self, i: usize) -> u64 {
        match self.words.get(i) {
            Some(&w) => w,
            None => self.fill_word(),
        }
    }

    /// Number of 64-bit words needed to hold every set index, `None` when
    /// infinite (`hwloc_bitmap_nr_ulongs`).  `Some(0)` for the empty set.
    #[doc(alias = "hwloc_bitmap_nr_ulongs")]
    #[inline]
    pub fn nr_words(&self) -> Option<usize> {
        if self.infinite {
            None
        } else {
            Some(self.words.len())
        }
    }

    #[inline]
    fn fill_word(&self) -> u64 {
        if self.infinite { FULL } else { 0 }
    }

    /// Drops trailing words equal to the fill value.
    #[inline]
    fn normalize(&mut self) {
        let fill = self.fill_word();
        while self.words.last() == Some(&fill) {
            self.words.pop();
        }
    }

    /// Makes sure at least `n` words are stored, extending with the fill.
    #[inline]
    fn ensure_len(&mut self, n: usize) {
        if self.words.len() < n {
            let fill = self.fill_word();
            self.words.resize(n, fill);
        }
    }

    /// [`ensure_len`](Self::ensure_len) that fails, the set unchanged,
    /// when the storage cannot be allocated.
    fn try_ensure_len(&mut self, n: usize) -> Result<(), AllocError> {
        if self.words.len() < n {
            self.words
                .try_reserve(n - self.words.len())
                .map_err(|_| AllocError)?;
            let fill = self.fill_word();
            self.words.resize(n, fill);
        }
        Ok(())
    }

    /// The growth step of the infallible methods, for the generic ones.
    #[inline]
    fn grow(&mut self, n: usize) -> Result<(), core::convert::Infallible> {
        self.ensure_len(n);
        Ok(())
    }

    // ----- predicates -----------------------------------------------------

    /// Whether no index is set (`hwloc_bitmap_iszero`).
    #[doc(alias = "hwloc_bitmap_iszero")]
    #[inline]
    pub fn is_empty(&self) -> bool {
        !self.infinite && self.words.is_empty()
    }

    /// Whether every index is set (`hwloc_bitmap_isfull`).
    #[doc(alias = "hwloc_bitmap_isfull")]
    #[inline]
    pub fn is_full(&self) -> bool {
        self.infinite && self.words.is_empty()
    }

    /// Whether all indexes above some point are set.
    #[inline]
    pub fn is_infinite(&self) -> bool {
        self.infinite
    }

    /// Whether index `i` is set (`hwloc_bitmap_isset`).
    #[doc(alias = "hwloc_bitmap_isset")]
    #[inline]
    pub fn is_set(&self, i: u32) -> bool {
        self.word(word_index(i)) & bit_of(i) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::*;
    use super::*;

    #[test]
    fn canonical_representation() {
        // Equal sets built differently are equal, hash alike and print alike.
        let mut a = Bitmap::new();
        a.set_range(0, Some(1000));
        a.unset_range(64, Some(1000));
        let b = Bitmap::from_range(0, Some(63));
        assert_eq!(a, b);
        assert_eq!(a.words(), &[!0]);
        assert_eq!(hash_of(&a), hash_of(&b));
        let mut c = Bitmap::full();
        c.unset_range(0, Some(500));
        c.set_range(0, Some(500));
        assert_eq!(c, Bitmap::full());
        assert_eq!(hash_of(&c), hash_of(&Bitmap::full()));
        assert_ne!(Bitmap::new(), Bitmap::full());
        assert_ne!(hash_of(&Bitmap::new()), hash_of(&Bitmap::full()));
        assert_eq!(Bitmap::default(), Bitmap::new());
        let x = list("0-200").and(&list("300-"));
        assert!(x.is_empty() && x.words().is_empty());
    }
}
