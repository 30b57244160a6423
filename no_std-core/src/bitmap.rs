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

use alloc::string::String;
use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::ops::{
    BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not, Sub, SubAssign,
};
use core::str::FromStr;
use smallvec::SmallVec;

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

/// The infinite prefix of the hwloc and taskset forms.
const INFINITE_PREFIX: &str = "0xf...f";

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

/// Number of bytes of the offending input kept in a [`BitmapParseError`].
const ERROR_INPUT_MAX: usize = 64;

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

// ---------------------------------------------------------------------------
// Bitmap
// ---------------------------------------------------------------------------

/// A binary set operation, for [`Bitmap::try_combine`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SetOp {
    /// Intersection ([`Bitmap::and`]).
    And,
    /// Union ([`Bitmap::or`]).
    Or,
    /// Symmetric difference ([`Bitmap::xor`]).
    Xor,
    /// Difference ([`Bitmap::and_not`]).
    AndNot,
}

/// Word storage of a [`Bitmap`]: sets of up to 128 indexes (NUMA node sets,
/// the CPU sets of most machines) live inline, without a heap allocation,
/// in the same 24 bytes a `Vec` takes.
type Words = SmallVec<[u64; 2]>;

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
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Bitmap {
    /// Bits `64*i .. 64*i+63` live in `words[i]`; never ends with a word
    /// equal to the fill value (`0`, or `!0` when `infinite`).
    words: Words,
    /// Value of every bit past `words`.
    infinite: bool,
}

impl Bitmap {
    // ----- construction ---------------------------------------------------

    /// The empty set (`hwloc_bitmap_alloc`).
    #[doc(alias = "hwloc_bitmap_alloc")]
    #[inline]
    pub const fn new() -> Self {
        Bitmap {
            words: Words::new_const(),
            infinite: false,
        }
    }

    /// The set of all indexes (`hwloc_bitmap_alloc_full`); it is infinite.
    #[doc(alias = "hwloc_bitmap_alloc_full")]
    #[inline]
    pub const fn full() -> Self {
        Bitmap {
            words: Words::new_const(),
            infinite: true,
        }
    }

    /// The set containing only `i` (`hwloc_bitmap_only`).
    #[doc(alias = "hwloc_bitmap_only")]
    pub fn from_index(i: u32) -> Self {
        let mut b = Bitmap::new();
        b.set(i);
        b
    }

    /// [`from_index`](Self::from_index), or [`AllocError`] when the
    /// storage up to index `i` cannot be allocated.
    pub fn try_from_index(i: u32) -> Result<Self, AllocError> {
        let mut b = Bitmap::new();
        b.try_set(i)?;
        Ok(b)
    }

    /// [`all_but`](Self::all_but), or [`AllocError`] when the storage up
    /// to index `i` cannot be allocated.
    pub fn try_all_but(i: u32) -> Result<Self, AllocError> {
        let mut b = Bitmap::full();
        b.try_unset(i)?;
        Ok(b)
    }

    /// [`from_words`](Self::from_words), or [`AllocError`] when the
    /// storage cannot be allocated.
    pub fn try_from_words(words: &[u64]) -> Result<Self, AllocError> {
        let mut w = try_words(words.len())?;
        w.extend_from_slice(words);
        let mut b = Bitmap {
            words: w,
            infinite: false,
        };
        b.normalize();
        Ok(b)
    }

    /// A copy of the set, or [`AllocError`] when its storage cannot be
    /// allocated ([`Clone`] aborts instead).
    pub fn try_clone(&self) -> Result<Self, AllocError> {
        let mut words = try_words(self.words.len())?;
        words.extend_from_slice(&self.words);
        Ok(Bitmap {
            words,
            infinite: self.infinite,
        })
    }

    /// Every index except `i` (`hwloc_bitmap_allbut`); it is infinite.
    #[doc(alias = "hwloc_bitmap_allbut")]
    pub fn all_but(i: u32) -> Self {
        let mut b = Bitmap::full();
        b.unset(i);
        b
    }

    /// The indexes `first..=last`, or `first..` (infinite) when `last` is
    /// `None`.  Empty when `last < first`.
    pub fn from_range(first: u32, last: Option<u32>) -> Self {
        let mut b = Bitmap::new();
        b.set_range(first, last);
        b
    }

    /// A finite set from 64-bit words, least significant first: bit `j` of
    /// `words[i]` is index `64*i + j` (`hwloc_bitmap_from_ulongs`).
    #[doc(alias = "hwloc_bitmap_from_ulongs")]
    pub fn from_words(words: &[u64]) -> Self {
        let mut b = Bitmap {
            words: Words::from_slice(words),
            infinite: false,
        };
        b.normalize();
        b
    }

    /// A finite set from a single 64-bit mask (`hwloc_bitmap_from_ulong`).
    #[doc(alias = "hwloc_bitmap_from_ulong")]
    pub fn from_u64(mask: u64) -> Self {
        Bitmap::from_words(&[mask])
    }

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
        if self.infinite {
            FULL
        } else {
            0
        }
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

    // ----- single-bit and range modification ------------------------------

    /// Adds index `i` (`hwloc_bitmap_set`).
    ///
    /// Storage grows to index `i`: setting index 4 billion in a finite set
    /// allocates 512 MiB.
    #[doc(alias = "hwloc_bitmap_set")]
    pub fn set(&mut self, i: u32) {
        infallible(self.assign_bit(i, true, Self::grow));
    }

    /// [`set`](Self::set), or [`AllocError`] (the set unchanged) when the
    /// storage cannot grow to index `i`.
    pub fn try_set(&mut self, i: u32) -> Result<(), AllocError> {
        self.assign_bit(i, true, Self::try_ensure_len)
    }

    /// Removes index `i` (`hwloc_bitmap_clr`).  An infinite set stores
    /// words up to index `i`.
    #[doc(alias = "hwloc_bitmap_clr")]
    pub fn unset(&mut self, i: u32) {
        infallible(self.assign_bit(i, false, Self::grow));
    }

    /// [`unset`](Self::unset), or [`AllocError`] (the set unchanged) when
    /// an infinite set's storage cannot grow to index `i`.
    pub fn try_unset(&mut self, i: u32) -> Result<(), AllocError> {
        self.assign_bit(i, false, Self::try_ensure_len)
    }

    fn assign_bit<E>(
        &mut self,
        i: u32,
        value: bool,
        grow: impl FnOnce(&mut Self, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.is_set(i) == value {
            return Ok(());
        }
        let wi = word_index(i);
        grow(self, wi + 1)?;
        if value {
            self.words[wi] |= bit_of(i);
        } else {
            self.words[wi] &= !bit_of(i);
        }
        self.normalize();
        Ok(())
    }

    /// Replaces the 64-bit word `i` (indexes `64*i ..= 64*i+63`) by `mask`,
    /// keeping every other index (`hwloc_bitmap_set_ith_ulong`), or
    /// [`AllocError`] (the set unchanged) when the storage cannot grow to
    /// that word.
    #[doc(alias = "hwloc_bitmap_set_ith_ulong")]
    pub fn try_set_word(&mut self, i: usize, mask: u64) -> Result<(), AllocError> {
        if self.word(i) == mask {
            return Ok(());
        }
        self.try_ensure_len(i.checked_add(1).ok_or(AllocError)?)?;
        self.words[i] = mask;
        self.normalize();
        Ok(())
    }

    /// Adds indexes `first..=last`, or `first..` when `last` is `None`
    /// (`hwloc_bitmap_set_range`).  Nothing happens when `last < first`.
    #[doc(alias = "hwloc_bitmap_set_range")]
    pub fn set_range(&mut self, first: u32, last: Option<u32>) {
        infallible(self.assign_range(first, last, true, Self::grow));
    }

    /// [`set_range`](Self::set_range), or [`AllocError`] (the set
    /// unchanged) when the storage cannot grow to the range.
    pub fn try_set_range(&mut self, first: u32, last: Option<u32>) -> Result<(), AllocError> {
        self.assign_range(first, last, true, Self::try_ensure_len)
    }

    /// Removes indexes `first..=last`, or `first..` when `last` is `None`
    /// (`hwloc_bitmap_clr_range`).  Nothing happens when `last < first`.
    #[doc(alias = "hwloc_bitmap_clr_range")]
    pub fn unset_range(&mut self, first: u32, last: Option<u32>) {
        infallible(self.assign_range(first, last, false, Self::grow));
    }

    /// [`unset_range`](Self::unset_range), or [`AllocError`] (the set
    /// unchanged) when the storage cannot grow to the range.
    pub fn try_unset_range(&mut self, first: u32, last: Option<u32>) -> Result<(), AllocError> {
        self.assign_range(first, last, false, Self::try_ensure_len)
    }

    /// Growth (`grow`) comes first, before any bit changes: a failure
    /// leaves the set as it was.
    fn assign_range<E>(
        &mut self,
        first: u32,
        last: Option<u32>,
        value: bool,
        grow: impl FnOnce(&mut Self, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        let Some(last) = last else {
            // Infinite range: the tail becomes `value` from `first` on.
            let wi = word_index(first);
            grow(self, wi + 1)?;
            self.words.truncate(wi + 1);
            let mask = FULL << (first % 64);
            if value {
                self.words[wi] |= mask;
            } else {
                self.words[wi] &= !mask;
            }
            self.infinite = value;
            self.normalize();
            return Ok(());
        };
        if last < first {
            return Ok(());
        }
        let mut end = u64::from(last);
        if self.infinite == value {
            // Bits past the stored words already have the wanted value.
            let stored = self.words.len() as u64 * 64;
            if u64::from(first) >= stored {
                return Ok(());
            }
            end = end.min(stored - 1);
        }
        let (fw, lw) = (word_index(first), (end / 64) as usize);
        grow(self, lw + 1)?;
        let lo_mask = FULL << (first % 64);
        let hi_mask = FULL >> (63 - end % 64);
        let apply = |w: &mut u64, mask: u64| {
            if value {
                *w |= mask;
            } else {
                *w &= !mask;
            }
        };
        if fw == lw {
            apply(&mut self.words[fw], lo_mask & hi_mask);
        } else {
            apply(&mut self.words[fw], lo_mask);
            self.words[fw + 1..lw].fill(if value { FULL } else { 0 });
            apply(&mut self.words[lw], hi_mask);
        }
        self.normalize();
        Ok(())
    }

    /// Makes the set empty (`hwloc_bitmap_zero`).
    #[doc(alias = "hwloc_bitmap_zero")]
    #[inline]
    pub fn clear(&mut self) {
        self.words.clear();
        self.infinite = false;
    }

    /// Makes the set full (`hwloc_bitmap_fill`).
    #[doc(alias = "hwloc_bitmap_fill")]
    #[inline]
    pub fn fill(&mut self) {
        self.words.clear();
        self.infinite = true;
    }

    /// Keeps only the lowest set index, if any (`hwloc_bitmap_singlify`).
    /// An infinite set keeps its first index and becomes finite.
    #[doc(alias = "hwloc_bitmap_singlify")]
    pub fn singlify(&mut self) {
        match self.find_from(0, true) {
            Some(p) => {
                let wi = (p / 64) as usize;
                self.words.clear();
                self.words.resize(wi + 1, 0);
                self.words[wi] = 1u64 << (p % 64);
                self.infinite = false;
            }
            None => self.clear(),
        }
    }

    // ----- queries --------------------------------------------------------

    /// Number of set indexes, `None` when infinite (`hwloc_bitmap_weight`).
    /// Saturates at `u32::MAX` (only reachable with all of `0..=u32::MAX`).
    #[doc(alias = "hwloc_bitmap_weight")]
    pub fn weight(&self) -> Option<u32> {
        if self.infinite {
            return None;
        }
        let total: u64 = self.words.iter().map(|w| u64::from(w.count_ones())).sum();
        Some(u32::try_from(total).unwrap_or(u32::MAX))
    }

    /// First position `>= start` whose bit equals `value`.  Positions are
    /// `u64` because the answer may be 2^32 (just past the index space).
    fn find_from(&self, start: u64, value: bool) -> Option<u64> {
        let flip = if value { 0 } else { FULL };
        let tail_matches = self.infinite == value;
        let mut wi = (start / 64) as usize;
        if wi >= self.words.len() {
            return tail_matches.then_some(start);
        }
        let mut w = (self.words[wi] ^ flip) & (FULL << (start % 64));
        loop {
            if w != 0 {
                return Some(wi as u64 * 64 + u64::from(w.trailing_zeros()));
            }
            wi += 1;
            match self.words.get(wi) {
                Some(&next) => w = next ^ flip,
                None => return tail_matches.then_some(wi as u64 * 64),
            }
        }
    }

    /// Last position whose bit equals `value`, `None` if there is none or
    /// infinitely many.
    fn find_last(&self, value: bool) -> Option<u64> {
        if self.infinite == value {
            return None;
        }
        let flip = if value { 0 } else { FULL };
        self.words
            .iter()
            .enumerate()
            .rev()
            .find(|(_, &w)| w ^ flip != 0)
            .map(|(i, &w)| i as u64 * 64 + 63 - u64::from((w ^ flip).leading_zeros()))
    }

    /// Lowest set index, `None` if empty (`hwloc_bitmap_first`).
    #[doc(alias = "hwloc_bitmap_first")]
    #[inline]
    pub fn first(&self) -> Option<u32> {
        to_index(self.find_from(0, true))
    }

    /// Highest set index, `None` if empty or infinite (`hwloc_bitmap_last`).
    #[doc(alias = "hwloc_bitmap_last")]
    #[inline]
    pub fn last(&self) -> Option<u32> {
        to_index(self.find_last(true))
    }

    /// Lowest set index strictly above `after`, or the lowest set index when
    /// `after` is `None` (`hwloc_bitmap_next`).
    #[doc(alias = "hwloc_bitmap_next")]
    #[inline]
    pub fn next_set(&self, after: Option<u32>) -> Option<u32> {
        let start = after.map_or(0, |a| u64::from(a) + 1);
        to_index(self.find_from(start, true))
    }

    /// Lowest unset index, `None` if the set is full
    /// (`hwloc_bitmap_first_unset`).
    #[doc(alias = "hwloc_bitmap_first_unset")]
    #[inline]
    pub fn first_unset(&self) -> Option<u32> {
        to_index(self.find_from(0, false))
    }

    /// Lowest unset index strictly above `after`, or the lowest unset index
    /// when `after` is `None` (`hwloc_bitmap_next_unset`).
    #[doc(alias = "hwloc_bitmap_next_unset")]
    #[inline]
    pub fn next_unset(&self, after: Option<u32>) -> Option<u32> {
        let start = after.map_or(0, |a| u64::from(a) + 1);
        to_index(self.find_from(start, false))
    }

    /// Highest unset index, `None` if the set is finite (infinitely many
    /// unset indexes) or full (`hwloc_bitmap_last_unset`).
    #[doc(alias = "hwloc_bitmap_last_unset")]
    #[inline]
    pub fn last_unset(&self) -> Option<u32> {
        to_index(self.find_last(false))
    }

    /// Iterates over the set indexes in increasing order.  For an infinite
    /// set the iteration goes on up to `u32::MAX`: check
    /// [`is_infinite`](Self::is_infinite) first.
    #[inline]
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            bitmap: self,
            next: 0,
        }
    }

    /// Iterates over the maximal runs of set indexes as `(first, last)`, in
    /// increasing order; `last` is `None` for the infinite tail.
    #[inline]
    pub fn ranges(&self) -> Ranges<'_> {
        Ranges {
            bitmap: self,
            next: 0,
        }
    }

    // ----- set algebra ----------------------------------------------------

    /// Applies `f` word by word, including to the fill values (which must map
    /// to 0 or `!0`, true for every bitwise operator).
    fn combine(&self, other: &Self, f: impl Fn(u64, u64) -> u64) -> Self {
        infallible(self.combine_with(other, f, |n| Ok(Words::with_capacity(n))))
    }

    /// [`combine`](Self::combine) with the result's storage from `alloc`.
    fn combine_with<E>(
        &self,
        other: &Self,
        f: impl Fn(u64, u64) -> u64,
        alloc: impl FnOnce(usize) -> Result<Words, E>,
    ) -> Result<Self, E> {
        let (a, b) = (&self.words, &other.words);
        let (fa, fb) = (self.fill_word(), other.fill_word());
        let common = a.len().min(b.len());
        let mut words = alloc(a.len().max(b.len()))?;
        words.extend(a[..common].iter().zip(&b[..common]).map(|(&x, &y)| f(x, y)));
        words.extend(a[common..].iter().map(|&x| f(x, fb)));
        words.extend(b[common..].iter().map(|&y| f(fa, y)));
        let mut r = Bitmap {
            words,
            infinite: f(fa, fb) != 0,
        };
        r.normalize();
        Ok(r)
    }

    /// [`and`](Self::and), [`or`](Self::or), [`xor`](Self::xor) or
    /// [`and_not`](Self::and_not) as `op` says, or [`AllocError`] when the
    /// result's storage cannot be allocated.
    pub fn try_combine(&self, other: &Self, op: SetOp) -> Result<Self, AllocError> {
        let f: fn(u64, u64) -> u64 = match op {
            SetOp::And => |x, y| x & y,
            SetOp::Or => |x, y| x | y,
            SetOp::Xor => |x, y| x ^ y,
            SetOp::AndNot => |x, y| x & !y,
        };
        self.combine_with(other, f, try_words)
    }

    /// In-place [`try_combine`](Self::try_combine): `self = self op other`,
    /// growing only to `other`'s storage, or [`AllocError`] (the set
    /// unchanged) when that growth cannot be allocated.
    pub fn try_combine_assign(&mut self, other: &Self, op: SetOp) -> Result<(), AllocError> {
        let more = other.words.len().saturating_sub(self.words.len());
        self.words.try_reserve(more).map_err(|_| AllocError)?;
        match op {
            SetOp::And => self.and_assign(other),
            SetOp::Or => self.or_assign(other),
            SetOp::Xor => self.xor_assign(other),
            SetOp::AndNot => self.and_not_assign(other),
        }
        Ok(())
    }

    /// [`not`](Self::not), or [`AllocError`] when the result's storage
    /// cannot be allocated.
    pub fn try_not(&self) -> Result<Self, AllocError> {
        let mut words = try_words(self.words.len())?;
        words.extend(self.words.iter().map(|w| !w));
        Ok(Bitmap {
            words,
            infinite: !self.infinite,
        })
    }

    /// In-place [`combine`](Self::combine).
    fn combine_assign(&mut self, other: &Self, f: impl Fn(u64, u64) -> u64) {
        let (fa, fb) = (self.fill_word(), other.fill_word());
        let common = self.words.len().min(other.words.len());
        for (x, &y) in self.words[..common].iter_mut().zip(&other.words[..common]) {
            *x = f(*x, y);
        }
        for x in &mut self.words[common..] {
            *x = f(*x, fb);
        }
        self.words
            .extend(other.words[common..].iter().map(|&y| f(fa, y)));
        self.infinite = f(fa, fb) != 0;
        self.normalize();
    }

    /// Whether `f` is non-zero on some word pair, including the fills.
    fn any_word(&self, other: &Self, f: impl Fn(u64, u64) -> u64) -> bool {
        let (a, b) = (&self.words, &other.words);
        let (fa, fb) = (self.fill_word(), other.fill_word());
        let common = a.len().min(b.len());
        f(fa, fb) != 0
            || a[..common]
                .iter()
                .zip(&b[..common])
                .any(|(&x, &y)| f(x, y) != 0)
            || a[common..].iter().any(|&x| f(x, fb) != 0)
            || b[common..].iter().any(|&y| f(fa, y) != 0)
    }

    /// Intersection (`hwloc_bitmap_and`).
    #[doc(alias = "hwloc_bitmap_and")]
    #[must_use]
    #[inline]
    pub fn and(&self, other: &Self) -> Self {
        self.combine(other, |x, y| x & y)
    }

    /// Union (`hwloc_bitmap_or`).
    #[doc(alias = "hwloc_bitmap_or")]
    #[must_use]
    #[inline]
    pub fn or(&self, other: &Self) -> Self {
        self.combine(other, |x, y| x | y)
    }

    /// Symmetric difference (`hwloc_bitmap_xor`).
    #[doc(alias = "hwloc_bitmap_xor")]
    #[must_use]
    #[inline]
    pub fn xor(&self, other: &Self) -> Self {
        self.combine(other, |x, y| x ^ y)
    }

    /// Difference: indexes of `self` not in `other` (`hwloc_bitmap_andnot`).
    #[doc(alias = "hwloc_bitmap_andnot")]
    #[must_use]
    #[inline]
    pub fn and_not(&self, other: &Self) -> Self {
        self.combine(other, |x, y| x & !y)
    }

    /// Complement (`hwloc_bitmap_not`).
    ///
    /// With `core::ops::Not` in scope, `x.not()` resolves to the operator
    /// (which consumes `x`); write `!&x` or `Bitmap::not(&x)` to keep `x`.
    #[doc(alias = "hwloc_bitmap_not")]
    #[must_use]
    pub fn not(&self) -> Self {
        // Complementing keeps the representation canonical.
        Bitmap {
            words: self.words.iter().map(|w| !w).collect(),
            infinite: !self.infinite,
        }
    }

    /// In-place intersection.
    #[inline]
    pub fn and_assign(&mut self, other: &Self) {
        self.combine_assign(other, |x, y| x & y);
    }

    /// In-place union.
    #[inline]
    pub fn or_assign(&mut self, other: &Self) {
        self.combine_assign(other, |x, y| x | y);
    }

    /// In-place symmetric difference.
    #[inline]
    pub fn xor_assign(&mut self, other: &Self) {
        self.combine_assign(other, |x, y| x ^ y);
    }

    /// In-place difference.
    #[inline]
    pub fn and_not_assign(&mut self, other: &Self) {
        self.combine_assign(other, |x, y| x & !y);
    }

    /// In-place complement.
    pub fn invert(&mut self) {
        for w in &mut self.words {
            *w = !*w;
        }
        self.infinite = !self.infinite;
    }

    /// Whether the sets share an index (`hwloc_bitmap_intersects`).
    #[doc(alias = "hwloc_bitmap_intersects")]
    #[inline]
    pub fn intersects(&self, other: &Self) -> bool {
        self.any_word(other, |x, y| x & y)
    }

    /// Whether every index of `sub` is in `self`, i.e. `self ⊇ sub`
    /// (`hwloc_bitmap_isincluded(sub, self)`).  Everything includes the
    /// empty set.
    #[doc(alias = "hwloc_bitmap_isincluded")]
    #[inline]
    pub fn includes(&self, sub: &Self) -> bool {
        !self.any_word(sub, |x, y| y & !x)
    }

    /// Whether every index of `self` is in `sup` (`self ⊆ sup`).
    #[inline]
    pub fn is_included_in(&self, sup: &Self) -> bool {
        sup.includes(self)
    }

    // ----- ordering -------------------------------------------------------

    /// Compares by lowest set index (`hwloc_bitmap_compare_first`): the set
    /// whose first index is lower is `Less`; the empty set is greater than
    /// any non-empty set.  `Equal` only means the first indexes are equal.
    #[doc(alias = "hwloc_bitmap_compare_first")]
    pub fn compare_first(&self, other: &Self) -> Ordering {
        match (self.find_from(0, true), other.find_from(0, true)) {
            (Some(a), Some(b)) => a.cmp(&b),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        }
    }

    /// Lexicographic comparison starting from the highest index
    /// (`hwloc_bitmap_compare`): an infinite set is greater than a finite
    /// one; otherwise the sets compare like the binary numbers they spell
    /// (so the empty set is the lowest).  `Equal` only for equal sets.
    #[doc(alias = "hwloc_bitmap_compare")]
    pub fn compare_last(&self, other: &Self) -> Ordering {
        if self.infinite != other.infinite {
            return self.infinite.cmp(&other.infinite);
        }
        let n = self.words.len().max(other.words.len());
        for i in (0..n).rev() {
            let (a, b) = (self.word(i), other.word(i));
            if a != b {
                return a.cmp(&b);
            }
        }
        Ordering::Equal
    }

    // ----- strings --------------------------------------------------------

    /// Parses the hwloc form (`hwloc_bitmap_sscanf`): comma-separated 32-bit
    /// hex chunks, most significant first, each with an optional `0x`/`0X`;
    /// an empty chunk is zero; an optional leading `0xf...f` chunk makes
    /// every bit above the explicit chunks set.  `""` is the empty set.
    ///
    /// Examples: `0x00000078,,0x00000004` = `2,67-70`; `0xf...f` = all;
    /// `0xf...f,0xfffffffc` = `0xf...f,0xffffffff,0xfffffffc` = `2-`.
    ///
    /// # Errors
    ///
    /// A [`BitmapParseError`] locating the first invalid byte.
    #[doc(alias = "hwloc_bitmap_sscanf")]
    pub fn parse(s: &str) -> Result<Self, BitmapParseError> {
        parse_hwloc(s)
    }

    /// Parses the list form (`hwloc_bitmap_list_sscanf`): comma- (or space-)
    /// separated decimal indexes `a` and ranges `a-b`, with an optional
    /// infinite range `a-` at the very end.  `""` is the empty set.
    ///
    /// # Errors
    ///
    /// A [`BitmapParseError`] locating the first invalid byte.
    #[doc(alias = "hwloc_bitmap_list_sscanf")]
    pub fn parse_list(s: &str) -> Result<Self, BitmapParseError> {
        parse_list(s)
    }

    /// Parses the taskset form (`hwloc_bitmap_taskset_sscanf`): one hex
    /// number with an optional `0x`, or `0xf...f` followed by the low hex
    /// digits of an infinite set.  `""` and `0x` are the empty set.
    ///
    /// # Errors
    ///
    /// A [`BitmapParseError`] locating the first invalid byte.
    #[doc(alias = "hwloc_bitmap_taskset_sscanf")]
    pub fn parse_taskset(s: &str) -> Result<Self, BitmapParseError> {
        parse_taskset(s)
    }

    /// The hwloc form, exactly as `hwloc_bitmap_snprintf` prints it (same as
    /// [`Display`](fmt::Display)).
    #[doc(alias = "hwloc_bitmap_snprintf")]
    pub fn to_hwloc_string(&self) -> String {
        let mut s = String::new();
        // Writing to a String cannot fail.
        let _ = write_hwloc(self, &mut s);
        s
    }

    /// The list form, exactly as `hwloc_bitmap_list_snprintf` prints it:
    /// `2,67-70`, `8-` for an infinite tail, `""` for the empty set.
    #[doc(alias = "hwloc_bitmap_list_snprintf")]
    pub fn to_list_string(&self) -> String {
        let mut s = String::new();
        let _ = write_list(self, &mut s);
        s
    }

    /// The taskset form, exactly as `hwloc_bitmap_taskset_snprintf` of
    /// hwloc 2.9 on a 64-bit host prints it: `0x780000000000000004`, `0x0`
    /// when empty, `0xf...f` followed by whole 64-bit words (16 digits
    /// each) below the infinite part.
    #[doc(alias = "hwloc_bitmap_taskset_snprintf")]
    pub fn to_taskset_string(&self) -> String {
        let mut s = String::new();
        let _ = write_taskset(self, &mut s);
        s
    }
}

impl PartialOrd for Bitmap {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Bitmap {
    /// Same as [`Bitmap::compare_last`] (`hwloc_bitmap_compare`).
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        self.compare_last(other)
    }
}

impl fmt::Display for Bitmap {
    /// The hwloc form, as `hwloc_bitmap_snprintf` prints it.
    #[doc(alias = "hwloc_bitmap_snprintf")]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hwloc(self, f)
    }
}

impl fmt::Debug for Bitmap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hwloc(self, f)
    }
}

impl FromStr for Bitmap {
    type Err = BitmapParseError;

    /// Same as [`Bitmap::parse`] (the hwloc form).
    #[inline]
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_hwloc(s)
    }
}

impl FromIterator<u32> for Bitmap {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        let mut b = Bitmap::new();
        b.extend(iter);
        b
    }
}

impl Extend<u32> for Bitmap {
    fn extend<I: IntoIterator<Item = u32>>(&mut self, iter: I) {
        for i in iter {
            self.set(i);
        }
    }
}

impl<'a> IntoIterator for &'a Bitmap {
    type Item = u32;
    type IntoIter = Iter<'a>;

    #[inline]
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

// ---------------------------------------------------------------------------
// Iterators
// ---------------------------------------------------------------------------

/// Iterator over the set indexes of a [`Bitmap`], from [`Bitmap::iter`].
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    bitmap: &'a Bitmap,
    /// Next candidate position; past `u32::MAX` once exhausted.
    next: u64,
}

impl Iterator for Iter<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.next > u64::from(u32::MAX) {
            return None;
        }
        match to_index(self.bitmap.find_from(self.next, true)) {
            Some(i) => {
                self.next = u64::from(i) + 1;
                Some(i)
            }
            None => {
                self.next = u64::MAX;
                None
            }
        }
    }
}

impl FusedIterator for Iter<'_> {}

/// Iterator over the runs of set indexes of a [`Bitmap`], from
/// [`Bitmap::ranges`]: `(first, Some(last))`, or `(first, None)` for the
/// infinite tail.
#[derive(Clone, Debug)]
pub struct Ranges<'a> {
    bitmap: &'a Bitmap,
    /// Next candidate position; past `u32::MAX` once exhausted.
    next: u64,
}

impl Iterator for Ranges<'_> {
    type Item = (u32, Option<u32>);

    fn next(&mut self) -> Option<(u32, Option<u32>)> {
        if self.next > u64::from(u32::MAX) {
            return None;
        }
        let Some(first) = to_index(self.bitmap.find_from(self.next, true)) else {
            self.next = u64::MAX;
            return None;
        };
        match self.bitmap.find_from(u64::from(first), false) {
            // The run ends just before the next unset position, which may be
            // 2^32 for a finite set holding u32::MAX.
            Some(end) => {
                self.next = end;
                Some((first, Some((end - 1) as u32)))
            }
            None => {
                self.next = u64::MAX;
                Some((first, None))
            }
        }
    }
}

impl FusedIterator for Ranges<'_> {}

// ---------------------------------------------------------------------------
// Printing
// ---------------------------------------------------------------------------

/// `hwloc_bitmap_snprintf` with 64-bit `unsigned long`: `0xf...f` for the
/// infinite part, then the 32-bit halves of the remaining words, most
/// significant first, as `0x%08x`; zero halves print as nothing between
/// commas, except the last one which prints `0x0`; leading zero halves of a
/// finite set are skipped; `0x0` if nothing else was printed.
#[doc(alias = "hwloc_bitmap_snprintf")]
fn write_hwloc(b: &Bitmap, out: &mut impl fmt::Write) -> fmt::Result {
    let mut need_comma = false;
    let mut wrote = false;
    // As hwloc 2.14: the all-ones 32-bit chunks just below the infinite
    // part belong to it (`0xf...f,,,,,0x000000f0` for `4-7,160-`, where
    // hwloc 2.9 wrote `0xf...f,0xffffffff,,,,,0x000000f0`).
    let mut in_ones = b.infinite;
    if b.infinite {
        out.write_str(INFINITE_PREFIX)?;
        need_comma = true;
        wrote = true;
    }
    let n = b.words.len();
    for i in (0..n).rev() {
        let w = b.words[i];
        for (half, is_low) in [((w >> 32) as u32, false), (w as u32, true)] {
            if in_ones && half == u32::MAX {
                continue;
            }
            in_ones = false;
            let comma = if need_comma { "," } else { "" };
            if half != 0 {
                write!(out, "{comma}0x{half:08x}")?;
                need_comma = true;
                wrote = true;
            } else if i == 0 && is_low {
                write!(out, "{comma}0x0")?;
                wrote = true;
            } else if need_comma {
                out.write_char(',')?;
            }
        }
    }
    if !wrote {
        out.write_str("0x0")?;
    }
    Ok(())
}

/// `hwloc_bitmap_list_snprintf`.
#[doc(alias = "hwloc_bitmap_list_snprintf")]
fn write_list(b: &Bitmap, out: &mut impl fmt::Write) -> fmt::Result {
    for (k, (first, last)) in b.ranges().enumerate() {
        if k > 0 {
            out.write_char(',')?;
        }
        match last {
            Some(last) if last == first => write!(out, "{first}")?,
            Some(last) => write!(out, "{first}-{last}")?,
            None => write!(out, "{first}-")?,
        }
    }
    Ok(())
}

/// `hwloc_bitmap_taskset_snprintf` of hwloc 2.14 with 64-bit `unsigned long`.
#[doc(alias = "hwloc_bitmap_taskset_snprintf")]
fn write_taskset(b: &Bitmap, out: &mut impl fmt::Write) -> fmt::Result {
    let mut started = false;
    if b.infinite {
        out.write_str(INFINITE_PREFIX)?;
        // As hwloc 2.14: all-ones 32-bit chunks just below the infinite
        // part belong to it (see `write_hwloc`).
        let mut in_ones = true;
        for &w in b.words.iter().rev() {
            for half in [(w >> 32) as u32, w as u32] {
                if in_ones && half == u32::MAX {
                    continue;
                }
                in_ones = false;
                write!(out, "{half:08x}")?;
            }
        }
        return Ok(());
    }
    for &w in b.words.iter().rev() {
        if started {
            write!(out, "{w:016x}")?;
        } else {
            // A canonical finite set's top word is non-zero.
            write!(out, "0x{w:x}")?;
            started = true;
        }
    }
    if !started {
        out.write_str("0x0")?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Parse errors
// ---------------------------------------------------------------------------

/// The string form a parser was reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BitmapFormat {
    /// hwloc's own form, `0x00000078,,0x00000004`.
    Hwloc,
    /// The list form, `2,67-70`.
    List,
    /// The taskset form, `0x780000000000000004`.
    Taskset,
}

impl BitmapFormat {
    /// A short lowercase name for messages.
    pub const fn name(self) -> &'static str {
        match self {
            BitmapFormat::Hwloc => "hwloc",
            BitmapFormat::List => "list",
            BitmapFormat::Taskset => "taskset",
        }
    }
}

/// Why a bitmap string was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BitmapParseErrorKind {
    /// A character that may not appear at this position.
    UnexpectedChar(char),
    /// A number was expected (end of input, or `0x` without digits).
    MissingNumber,
    /// An hwloc-form chunk is wider than 32 bits.
    ChunkOverflow,
    /// The hwloc form starts with a comma (hwloc miscounts the chunks).
    LeadingEmptyChunk,
    /// The hwloc form ends with a comma (hwloc drops data then).
    TrailingEmptyChunk,
    /// A list index has a leading zero, which hwloc reads as octal.
    LeadingZero,
    /// A list range ends below its start.
    ReversedRange {
        /// The range start.
        first: u32,
        /// The range end, lower than `first`.
        last: u32,
    },
    /// An infinite list range `a-` is followed by more input.
    InfiniteRangeNotLast,
    /// A list holds separators but no index.
    NoItems,
    /// A list ends with more than one separator.
    TrailingSeparators,
    /// An index, or the bit span of a hex string, reaches
    /// [`MAX_PARSE_BITS`].
    TooLarge,
}

impl fmt::Display for BitmapParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnexpectedChar(c) => write!(f, "unexpected character {c:?}"),
            Self::MissingNumber => f.write_str("expected a number"),
            Self::ChunkOverflow => f.write_str("chunk does not fit in 32 bits"),
            Self::LeadingEmptyChunk => f.write_str("leading empty chunk"),
            Self::TrailingEmptyChunk => f.write_str("trailing empty chunk"),
            Self::LeadingZero => f.write_str("index with a leading zero (hwloc reads it as octal)"),
            Self::ReversedRange { first, last } => {
                write!(f, "range end {last} is below range start {first}")
            }
            Self::InfiniteRangeNotLast => f.write_str("infinite range must come last"),
            Self::NoItems => f.write_str("separators without any index"),
            Self::TrailingSeparators => f.write_str("more than one trailing separator"),
            Self::TooLarge => write!(f, "index too large (the maximum is {MAX_PARSE_INDEX})"),
        }
    }
}

/// Error returned by the bitmap parsers: which form, the offending input
/// (truncated to its first 64 bytes), the byte offset and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BitmapParseError {
    format: BitmapFormat,
    input: String,
    truncated: bool,
    position: usize,
    kind: BitmapParseErrorKind,
}

impl BitmapParseError {
    fn new(format: BitmapFormat, s: &str, position: usize, kind: BitmapParseErrorKind) -> Self {
        let mut end = s.len().min(ERROR_INPUT_MAX);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        BitmapParseError {
            format,
            input: String::from(&s[..end]),
            truncated: end < s.len(),
            position,
            kind,
        }
    }

    /// The form that was being parsed.
    #[inline]
    pub fn format(&self) -> BitmapFormat {
        self.format
    }

    /// The offending input, truncated to its first 64 bytes.
    #[inline]
    pub fn input(&self) -> &str {
        &self.input
    }

    /// Byte offset of the error in the input.
    #[inline]
    pub fn position(&self) -> usize {
        self.position
    }

    /// Why the input was rejected.
    #[inline]
    pub fn kind(&self) -> BitmapParseErrorKind {
        self.kind
    }
}

impl fmt::Display for BitmapParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid {} bitmap string {:?}{} at byte {}: {}",
            self.format.name(),
            self.input,
            if self.truncated { "..." } else { "" },
            self.position,
            self.kind
        )
    }
}

impl core::error::Error for BitmapParseError {}

// ---------------------------------------------------------------------------
// Parsers
// ---------------------------------------------------------------------------

/// The character starting at byte `pos` (a char boundary) of `s`.
fn char_at(s: &str, pos: usize) -> char {
    s[pos..].chars().next().unwrap_or('\0')
}

#[inline]
fn hex_value(c: u8) -> Option<u64> {
    match c {
        b'0'..=b'9' => Some(u64::from(c - b'0')),
        b'a'..=b'f' => Some(u64::from(c - b'a' + 10)),
        b'A'..=b'F' => Some(u64::from(c - b'A' + 10)),
        _ => None,
    }
}

/// Rejects an infinite set whose all-set tail starts at or past
/// [`MAX_PARSE_BITS`], so that its list form stays parseable.
fn check_tail(bm: Bitmap) -> Result<Bitmap, BitmapParseErrorKind> {
    // Finite sets (nearly every parsed one) have no tail: skip the scan.
    if !bm.infinite {
        return Ok(bm);
    }
    let tail_start = bm.find_last(false).map_or(0, |p| p + 1);
    if tail_start > u64::from(MAX_PARSE_INDEX) {
        Err(BitmapParseErrorKind::TooLarge)
    } else {
        Ok(bm)
    }
}

fn parse_hwloc(s: &str) -> Result<Bitmap, BitmapParseError> {
    use BitmapParseErrorKind as K;
    let err = |pos, kind| BitmapParseError::new(BitmapFormat::Hwloc, s, pos, kind);
    let b = s.as_bytes();

    let (infinite, body_start) = match s.strip_prefix(INFINITE_PREFIX) {
        Some("") => return Ok(Bitmap::full()),
        Some(rest) if rest.starts_with(',') => (true, INFINITE_PREFIX.len() + 1),
        Some(_) => {
            let pos = INFINITE_PREFIX.len();
            return Err(err(pos, K::UnexpectedChar(char_at(s, pos))));
        }
        None => (false, 0),
    };
    if s.is_empty() {
        return Ok(Bitmap::new());
    }
    if body_start == b.len() || b[b.len() - 1] == b',' {
        return Err(err(b.len(), K::TrailingEmptyChunk));
    }
    if b[0] == b',' {
        return Err(err(0, K::LeadingEmptyChunk));
    }

    let body = &b[body_start..];
    let chunks = 1 + body.iter().filter(|&&c| c == b',').count();
    if chunks > (MAX_PARSE_BITS / 32) as usize {
        return Err(err(body_start, K::TooLarge));
    }
    let mut words = Words::from_elem(0, chunks.div_ceil(2));
    let mut pos = body_start;
    for (k, chunk) in body.split(|&c| c == b',').enumerate() {
        let value = parse_hex_chunk(s, chunk, pos).map_err(|(p, kind)| err(p, kind))?;
        let idx = chunks - 1 - k; // chunk index from the least significant
        words[idx / 2] |= value << (32 * (idx % 2));
        pos += chunk.len() + 1;
    }
    if infinite && !chunks.is_multiple_of(2) {
        // Bits from 32*chunks on are set; the top half of the last word.
        words[chunks / 2] |= FULL << 32;
    }
    let mut bm = Bitmap { words, infinite };
    bm.normalize();
    check_tail(bm).map_err(|kind| err(body_start, kind))
}

/// One hwloc-form chunk of `s` starting at byte `start`: empty (zero) or an
/// optional `0x`/`0X` followed by hex digits whose value fits in 32 bits.
fn parse_hex_chunk(
    s: &str,
    chunk: &[u8],
    start: usize,
) -> Result<u64, (usize, BitmapParseErrorKind)> {
    if chunk.is_empty() {
        return Ok(0);
    }
    let skip = if chunk.len() >= 2 && chunk[0] == b'0' && (chunk[1] == b'x' || chunk[1] == b'X') {
        2
    } else {
        0
    };
    let digits = &chunk[skip..];
    if digits.is_empty() {
        return Err((start + skip, BitmapParseErrorKind::MissingNumber));
    }
    let mut value: u64 = 0;
    for (j, &c) in digits.iter().enumerate() {
        let pos = start + skip + j;
        let Some(d) = hex_value(c) else {
            // `pos` is a char boundary: every byte before it was ASCII.
            return Err((pos, BitmapParseErrorKind::UnexpectedChar(char_at(s, pos))));
        };
        value = (value << 4) | d;
        if value > u64::from(u32::MAX) {
            return Err((start, BitmapParseErrorKind::ChunkOverflow));
        }
    }
    Ok(value)
}

fn parse_taskset(s: &str) -> Result<Bitmap, BitmapParseError> {
    use BitmapParseErrorKind as K;
    let err = |pos, kind| BitmapParseError::new(BitmapFormat::Taskset, s, pos, kind);

    let (infinite, start) = if s.starts_with(INFINITE_PREFIX) {
        (true, INFINITE_PREFIX.len())
    } else if s.starts_with("0x") {
        (false, 2)
    } else {
        (false, 0)
    };
    let digits = &s.as_bytes()[start..];
    if digits.is_empty() {
        return Ok(if infinite {
            Bitmap::full()
        } else {
            Bitmap::new()
        });
    }
    if let Some(j) = digits.iter().position(|&c| hex_value(c).is_none()) {
        return Err(err(start + j, K::UnexpectedChar(char_at(s, start + j))));
    }
    if digits.len() > (MAX_PARSE_BITS / 4) as usize {
        return Err(err(start, K::TooLarge));
    }

    let nbits = digits.len() * 4;
    let mut words = Words::from_elem(0, nbits.div_ceil(64));
    // Whole 16-digit groups from the least significant end, then the rest.
    for (i, group) in digits.rchunks(16).enumerate() {
        words[i] = group
            .iter()
            .fold(0u64, |acc, &c| (acc << 4) | hex_value(c).unwrap_or(0));
    }
    if infinite && !nbits.is_multiple_of(64) {
        words[nbits / 64] |= FULL << (nbits % 64);
    }
    let mut bm = Bitmap { words, infinite };
    bm.normalize();
    check_tail(bm).map_err(|kind| err(start, kind))
}

fn parse_list(s: &str) -> Result<Bitmap, BitmapParseError> {
    use BitmapParseErrorKind as K;
    let err = |pos, kind| BitmapParseError::new(BitmapFormat::List, s, pos, kind);
    let b = s.as_bytes();
    let n = b.len();
    let is_sep = |c: u8| c == b',' || c == b' ';

    // A decimal index at `pos`: returns it and the position after it.
    let number = |pos: usize| -> Result<(u32, usize), BitmapParseError> {
        let len = b[pos..].iter().take_while(|c| c.is_ascii_digit()).count();
        if len == 0 {
            return Err(if pos < n {
                err(pos, K::UnexpectedChar(char_at(s, pos)))
            } else {
                err(pos, K::MissingNumber)
            });
        }
        if len > 1 && b[pos] == b'0' {
            return Err(err(pos, K::LeadingZero));
        }
        let mut v: u32 = 0;
        for &c in &b[pos..pos + len] {
            v = v * 10 + u32::from(c - b'0');
            if v > MAX_PARSE_INDEX {
                return Err(err(pos, K::TooLarge));
            }
        }
        Ok((v, pos + len))
    };

    let mut bm = Bitmap::new();
    if n == 0 {
        return Ok(bm);
    }
    let mut pos = 0;
    let mut items = 0usize;
    loop {
        while pos < n && is_sep(b[pos]) {
            pos += 1;
        }
        if pos == n {
            // hwloc accepts a single separator after an item, handled below.
            let kind = if items == 0 {
                K::NoItems
            } else {
                K::TrailingSeparators
            };
            return Err(err(pos, kind));
        }
        let (first, p) = number(pos)?;
        items += 1;
        pos = p;
        if pos == n {
            bm.set(first);
            break;
        }
        match b[pos] {
            b'-' => {
                pos += 1;
                if pos == n {
                    bm.set_range(first, None);
                    break;
                }
                if is_sep(b[pos]) {
                    return Err(err(pos, K::InfiniteRangeNotLast));
                }
                let (last, p) = number(pos)?;
                if last < first {
                    return Err(err(pos, K::ReversedRange { first, last }));
                }
                bm.set_range(first, Some(last));
                pos = p;
                if pos == n {
                    break;
                }
                if !is_sep(b[pos]) {
                    return Err(err(pos, K::UnexpectedChar(char_at(s, pos))));
                }
            }
            c if is_sep(c) => bm.set(first),
            _ => return Err(err(pos, K::UnexpectedChar(char_at(s, pos)))),
        }
        // Consume the separator after the item; one trailing separator is
        // fine.
        pos += 1;
        if pos == n {
            break;
        }
    }
    Ok(bm)
}

// ---------------------------------------------------------------------------
// Typed sets
// ---------------------------------------------------------------------------

/// Marker for the kind of index a [`Set`] holds.
pub trait SetKind:
    Copy
    + Clone
    + fmt::Debug
    + Default
    + PartialEq
    + Eq
    + Hash
    + PartialOrd
    + Ord
    + Send
    + Sync
    + 'static
{
    /// Name of the set kind, as in hwloc XML attributes (`cpuset`,
    /// `nodeset`); also used by [`Debug`](fmt::Debug).
    const NAME: &'static str;
}

/// Kind marker of CPU sets: indexes are OS (physical) processor numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CpuKind;

impl SetKind for CpuKind {
    const NAME: &'static str = "cpuset";
}

/// Kind marker of NUMA node sets: indexes are OS (physical) node numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeKind;

impl SetKind for NodeKind {
    const NAME: &'static str = "nodeset";
}

/// A [`Bitmap`] tagged with the kind of index it holds, so that CPU sets
/// and NUMA node sets cannot be mixed up.  All methods delegate to
/// [`Bitmap`]; see there for details.
pub struct Set<K: SetKind> {
    bits: Bitmap,
    _kind: PhantomData<K>,
}

/// A set of OS processor indexes (`hwloc_cpuset_t`).
pub type CpuSet = Set<CpuKind>;

/// A set of OS NUMA node indexes (`hwloc_nodeset_t`).
pub type NodeSet = Set<NodeKind>;

impl<K: SetKind> Set<K> {
    #[inline]
    const fn wrap(bits: Bitmap) -> Self {
        Set {
            bits,
            _kind: PhantomData,
        }
    }

    /// Wraps a bitmap.
    #[inline]
    pub const fn from_bitmap(bits: Bitmap) -> Self {
        Set::wrap(bits)
    }

    /// The underlying bitmap.
    #[inline]
    pub fn bitmap(&self) -> &Bitmap {
        &self.bits
    }

    /// The underlying bitmap, mutably.
    #[inline]
    pub fn bitmap_mut(&mut self) -> &mut Bitmap {
        &mut self.bits
    }

    /// Unwraps the bitmap.
    #[inline]
    pub fn into_bitmap(self) -> Bitmap {
        self.bits
    }

    /// The empty set.
    #[inline]
    pub const fn new() -> Self {
        Set::wrap(Bitmap::new())
    }

    /// The set of all indexes (infinite).
    #[inline]
    pub const fn full() -> Self {
        Set::wrap(Bitmap::full())
    }

    /// The set containing only `i`.
    #[inline]
    pub fn from_index(i: u32) -> Self {
        Set::wrap(Bitmap::from_index(i))
    }

    /// Every index except `i`.
    #[inline]
    pub fn all_but(i: u32) -> Self {
        Set::wrap(Bitmap::all_but(i))
    }

    /// `first..=last`, or `first..` when `last` is `None`.
    #[inline]
    pub fn from_range(first: u32, last: Option<u32>) -> Self {
        Set::wrap(Bitmap::from_range(first, last))
    }

    /// A finite set from 64-bit words, least significant first.
    #[inline]
    pub fn from_words(words: &[u64]) -> Self {
        Set::wrap(Bitmap::from_words(words))
    }

    /// A finite set from a single 64-bit mask.
    #[inline]
    pub fn from_u64(mask: u64) -> Self {
        Set::wrap(Bitmap::from_u64(mask))
    }

    /// The stored 64-bit words; see [`Bitmap::words`].
    #[inline]
    pub fn words(&self) -> &[u64] {
        self.bits.words()
    }

    /// The `i`-th 64-bit word, including the infinite part.
    #[inline]
    pub fn word(&self, i: usize) -> u64 {
        self.bits.word(i)
    }

    /// Number of 64-bit words holding every set index, `None` if infinite.
    #[inline]
    pub fn nr_words(&self) -> Option<usize> {
        self.bits.nr_words()
    }

    /// Whether no index is set.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }

    /// Whether every index is set.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.bits.is_full()
    }

    /// Whether all indexes above some point are set.
    #[inline]
    pub fn is_infinite(&self) -> bool {
        self.bits.is_infinite()
    }

    /// Whether index `i` is set.
    #[inline]
    pub fn is_set(&self, i: u32) -> bool {
        self.bits.is_set(i)
    }

    /// Adds index `i`.
    #[inline]
    pub fn set(&mut self, i: u32) {
        self.bits.set(i);
    }

    /// Removes index `i`.
    #[inline]
    pub fn unset(&mut self, i: u32) {
        self.bits.unset(i);
    }

    /// Adds `first..=last`, or `first..` when `last` is `None`.
    #[inline]
    pub fn set_range(&mut self, first: u32, last: Option<u32>) {
        self.bits.set_range(first, last);
    }

    /// Removes `first..=last`, or `first..` when `last` is `None`.
    #[inline]
    pub fn unset_range(&mut self, first: u32, last: Option<u32>) {
        self.bits.unset_range(first, last);
    }

    /// Makes the set empty.
    #[inline]
    pub fn clear(&mut self) {
        self.bits.clear();
    }

    /// Makes the set full.
    #[inline]
    pub fn fill(&mut self) {
        self.bits.fill();
    }

    /// Keeps only the lowest set index.
    #[inline]
    pub fn singlify(&mut self) {
        self.bits.singlify();
    }

    /// Number of set indexes, `None` if infinite.
    #[inline]
    pub fn weight(&self) -> Option<u32> {
        self.bits.weight()
    }

    /// Lowest set index, `None` if empty.
    #[inline]
    pub fn first(&self) -> Option<u32> {
        self.bits.first()
    }

    /// Highest set index, `None` if empty or infinite.
    #[inline]
    pub fn last(&self) -> Option<u32> {
        self.bits.last()
    }

    /// Lowest set index above `after` (or the lowest if `None`).
    #[inline]
    pub fn next_set(&self, after: Option<u32>) -> Option<u32> {
        self.bits.next_set(after)
    }

    /// Lowest unset index, `None` if full.
    #[inline]
    pub fn first_unset(&self) -> Option<u32> {
        self.bits.first_unset()
    }

    /// Lowest unset index above `after` (or the lowest if `None`).
    #[inline]
    pub fn next_unset(&self, after: Option<u32>) -> Option<u32> {
        self.bits.next_unset(after)
    }

    /// Highest unset index, `None` if finite or full.
    #[inline]
    pub fn last_unset(&self) -> Option<u32> {
        self.bits.last_unset()
    }

    /// Iterates over the set indexes (up to `u32::MAX` if infinite).
    #[inline]
    pub fn iter(&self) -> Iter<'_> {
        self.bits.iter()
    }

    /// Iterates over the runs of set indexes.
    #[inline]
    pub fn ranges(&self) -> Ranges<'_> {
        self.bits.ranges()
    }

    /// Intersection.
    #[must_use]
    #[inline]
    pub fn and(&self, other: &Self) -> Self {
        Set::wrap(self.bits.and(&other.bits))
    }

    /// Union.
    #[must_use]
    #[inline]
    pub fn or(&self, other: &Self) -> Self {
        Set::wrap(self.bits.or(&other.bits))
    }

    /// Symmetric difference.
    #[must_use]
    #[inline]
    pub fn xor(&self, other: &Self) -> Self {
        Set::wrap(self.bits.xor(&other.bits))
    }

    /// Difference: indexes of `self` not in `other`.
    #[must_use]
    #[inline]
    pub fn and_not(&self, other: &Self) -> Self {
        Set::wrap(self.bits.and_not(&other.bits))
    }

    /// Complement.
    #[must_use]
    #[inline]
    pub fn not(&self) -> Self {
        Set::wrap(Bitmap::not(&self.bits))
    }

    /// In-place intersection.
    #[inline]
    pub fn and_assign(&mut self, other: &Self) {
        self.bits.and_assign(&other.bits);
    }

    /// In-place union.
    #[inline]
    pub fn or_assign(&mut self, other: &Self) {
        self.bits.or_assign(&other.bits);
    }

    /// In-place symmetric difference.
    #[inline]
    pub fn xor_assign(&mut self, other: &Self) {
        self.bits.xor_assign(&other.bits);
    }

    /// In-place difference.
    #[inline]
    pub fn and_not_assign(&mut self, other: &Self) {
        self.bits.and_not_assign(&other.bits);
    }

    /// In-place complement.
    #[inline]
    pub fn invert(&mut self) {
        self.bits.invert();
    }

    /// Whether the sets share an index.
    #[inline]
    pub fn intersects(&self, other: &Self) -> bool {
        self.bits.intersects(&other.bits)
    }

    /// Whether `self ⊇ sub`.
    #[inline]
    pub fn includes(&self, sub: &Self) -> bool {
        self.bits.includes(&sub.bits)
    }

    /// Whether `self ⊆ sup`.
    #[inline]
    pub fn is_included_in(&self, sup: &Self) -> bool {
        self.bits.is_included_in(&sup.bits)
    }

    /// Compares by lowest index; see [`Bitmap::compare_first`].
    #[inline]
    pub fn compare_first(&self, other: &Self) -> Ordering {
        self.bits.compare_first(&other.bits)
    }

    /// Compares from the highest index; see [`Bitmap::compare_last`].
    #[inline]
    pub fn compare_last(&self, other: &Self) -> Ordering {
        self.bits.compare_last(&other.bits)
    }

    /// Parses the hwloc form; see [`Bitmap::parse`].
    #[inline]
    pub fn parse(s: &str) -> Result<Self, BitmapParseError> {
        Bitmap::parse(s).map(Set::wrap)
    }

    /// Parses the list form; see [`Bitmap::parse_list`].
    #[inline]
    pub fn parse_list(s: &str) -> Result<Self, BitmapParseError> {
        Bitmap::parse_list(s).map(Set::wrap)
    }

    /// Parses the taskset form; see [`Bitmap::parse_taskset`].
    #[inline]
    pub fn parse_taskset(s: &str) -> Result<Self, BitmapParseError> {
        Bitmap::parse_taskset(s).map(Set::wrap)
    }

    /// The hwloc form (same as `Display`).
    #[inline]
    pub fn to_hwloc_string(&self) -> String {
        self.bits.to_hwloc_string()
    }

    /// The list form.
    #[inline]
    pub fn to_list_string(&self) -> String {
        self.bits.to_list_string()
    }

    /// The taskset form.
    #[inline]
    pub fn to_taskset_string(&self) -> String {
        self.bits.to_taskset_string()
    }
}

impl<K: SetKind> Clone for Set<K> {
    #[inline]
    fn clone(&self) -> Self {
        Set::wrap(self.bits.clone())
    }

    #[inline]
    fn clone_from(&mut self, source: &Self) {
        self.bits.clone_from(&source.bits);
    }
}

impl<K: SetKind> PartialEq for Set<K> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.bits == other.bits
    }
}

impl<K: SetKind> Eq for Set<K> {}

impl<K: SetKind> PartialOrd for Set<K> {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<K: SetKind> Ord for Set<K> {
    /// Same as [`Set::compare_last`] (`hwloc_bitmap_compare`).
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        self.bits.cmp(&other.bits)
    }
}

impl<K: SetKind> Hash for Set<K> {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.bits.hash(state);
    }
}

impl<K: SetKind> Default for Set<K> {
    #[inline]
    fn default() -> Self {
        Set::new()
    }
}

impl<K: SetKind> fmt::Debug for Set<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", K::NAME, self.bits)
    }
}

impl<K: SetKind> fmt::Display for Set<K> {
    /// The hwloc form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.bits, f)
    }
}

impl<K: SetKind> FromStr for Set<K> {
    type Err = BitmapParseError;

    /// Parses the hwloc form.
    #[inline]
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Set::parse(s)
    }
}

impl<K: SetKind> FromIterator<u32> for Set<K> {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        Set::wrap(Bitmap::from_iter(iter))
    }
}

impl<K: SetKind> Extend<u32> for Set<K> {
    fn extend<I: IntoIterator<Item = u32>>(&mut self, iter: I) {
        self.bits.extend(iter);
    }
}

impl<'a, K: SetKind> IntoIterator for &'a Set<K> {
    type Item = u32;
    type IntoIter = Iter<'a>;

    #[inline]
    fn into_iter(self) -> Iter<'a> {
        self.bits.iter()
    }
}

// ---------------------------------------------------------------------------
// Operators
// ---------------------------------------------------------------------------

/// Implements `&`, `|`, `^`, `-` (difference), `!` and the assigning forms
/// for a type with inherent `and`/`or`/`xor`/`and_not`/`not` and
/// `*_assign` methods, for both values and references.
macro_rules! impl_set_ops {
    ([$($g:tt)*] $T:ty) => {
        impl_set_ops!(@bin [$($g)*] $T, BitAnd, bitand, BitAndAssign, bitand_assign, and, and_assign);
        impl_set_ops!(@bin [$($g)*] $T, BitOr, bitor, BitOrAssign, bitor_assign, or, or_assign);
        impl_set_ops!(@bin [$($g)*] $T, BitXor, bitxor, BitXorAssign, bitxor_assign, xor, xor_assign);
        impl_set_ops!(@bin [$($g)*] $T, Sub, sub, SubAssign, sub_assign, and_not, and_not_assign);

        impl<$($g)*> Not for &$T {
            type Output = $T;
            #[inline]
            fn not(self) -> $T {
                <$T>::not(self)
            }
        }

        impl<$($g)*> Not for $T {
            type Output = $T;
            #[inline]
            fn not(mut self) -> $T {
                self.invert();
                self
            }
        }
    };
    (@bin [$($g:tt)*] $T:ty, $Tr:ident, $m:ident, $ATr:ident, $am:ident, $op:ident, $aop:ident) => {
        impl<$($g)*> $Tr<&$T> for &$T {
            type Output = $T;
            #[inline]
            fn $m(self, rhs: &$T) -> $T {
                <$T>::$op(self, rhs)
            }
        }

        impl<$($g)*> $Tr<$T> for &$T {
            type Output = $T;
            #[inline]
            fn $m(self, rhs: $T) -> $T {
                <$T>::$op(self, &rhs)
            }
        }

        impl<$($g)*> $Tr<&$T> for $T {
            type Output = $T;
            #[inline]
            fn $m(mut self, rhs: &$T) -> $T {
                self.$aop(rhs);
                self
            }
        }

        impl<$($g)*> $Tr<$T> for $T {
            type Output = $T;
            #[inline]
            fn $m(mut self, rhs: $T) -> $T {
                self.$aop(&rhs);
                self
            }
        }

        impl<$($g)*> $ATr<&$T> for $T {
            #[inline]
            fn $am(&mut self, rhs: &$T) {
                self.$aop(rhs);
            }
        }

        impl<$($g)*> $ATr<$T> for $T {
            #[inline]
            fn $am(&mut self, rhs: $T) {
                self.$aop(&rhs);
            }
        }
    };
}

impl_set_ops!([] Bitmap);
impl_set_ops!([K: SetKind] Set<K>);

// ---------------------------------------------------------------------------
// serde
// ---------------------------------------------------------------------------

#[cfg(feature = "serde")]
mod serde_impls {
    use super::{Bitmap, Set, SetKind};
    use core::fmt;
    use serde::de::{self, Deserialize, Deserializer, Visitor};
    use serde::ser::{Serialize, Serializer};

    impl Serialize for Bitmap {
        /// Serializes as the hwloc string form.
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_str(self)
        }
    }

    struct BitmapVisitor;

    impl Visitor<'_> for BitmapVisitor {
        type Value = Bitmap;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an hwloc bitmap string such as \"0x00000003\" or \"0xf...f\"")
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<Bitmap, E> {
            Bitmap::parse(v).map_err(E::custom)
        }
    }

    impl<'de> Deserialize<'de> for Bitmap {
        /// Deserializes from the hwloc string form.
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_str(BitmapVisitor)
        }
    }

    impl<K: SetKind> Serialize for Set<K> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            self.bitmap().serialize(serializer)
        }
    }

    impl<'de, K: SetKind> Deserialize<'de> for Set<K> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            Bitmap::deserialize(deserializer).map(Set::from_bitmap)
        }
    }
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use alloc::string::ToString;
    use alloc::vec::Vec;
    use proptest::prelude::*;
    use std::collections::hash_map::DefaultHasher;

    type K = BitmapParseErrorKind;

    fn list(s: &str) -> Bitmap {
        Bitmap::parse_list(s).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The fallible methods fail, the set unchanged, when the storage
    /// cannot be had: word indexes whose storage is past the address
    /// space (capacity overflow) or is more than any allocator gives
    /// (the allocator's refusal), without a memory limit.
    /// A fallible change and its infallible twin.
    type Fallible = fn(&mut Bitmap) -> Result<(), AllocError>;
    type Plain = fn(&mut Bitmap);

    #[test]
    fn fallible_growth_reports_failure_and_keeps_the_set() {
        for start in [list("1,70-75"), list("3-"), Bitmap::new(), Bitmap::full()] {
            let mut b = start.clone();
            for i in [usize::MAX, 1 << 60, 1 << 58, 1 << 55] {
                assert_eq!(b.try_set_word(i, 0x5), Err(AllocError), "word {i}");
                assert_eq!(b, start);
            }
            assert_eq!(
                AllocError.to_string(),
                "memory allocation for a bitmap failed"
            );
            assert!(try_words(usize::MAX).is_err());
            assert!(try_words(1 << 58).is_err());
            assert_eq!(b.try_ensure_len(1 << 58), Err(AllocError));
            assert_eq!(b, start);
            // A word equal to what is there needs no storage.
            assert_eq!(b.try_set_word(1 << 60, start.fill_word()), Ok(()));
            assert_eq!(b, start);
            // Within reach, each one agrees with its infallible twin.
            let ops: [(&str, Fallible, Plain); 5] = [
                ("set", |b| b.try_set(200), |b| b.set(200)),
                ("unset", |b| b.try_unset(300), |b| b.unset(300)),
                (
                    "set_range",
                    |b| b.try_set_range(100, Some(400)),
                    |b| b.set_range(100, Some(400)),
                ),
                (
                    "unset_range",
                    |b| b.try_unset_range(72, None),
                    |b| b.unset_range(72, None),
                ),
                (
                    "set_word",
                    |b| b.try_set_word(3, 0xf0),
                    |b| {
                        b.unset_range(192, Some(255));
                        b.or_assign(&Bitmap::from_words(&[0, 0, 0, 0xf0]));
                    },
                ),
            ];
            for (name, fallible, plain) in ops {
                let (mut x, mut y) = (start.clone(), start.clone());
                fallible(&mut x).unwrap();
                plain(&mut y);
                assert_eq!(x, y, "{name} on {start}");
            }
            let other = list("0-3,68,500-");
            for (op, f) in [
                (SetOp::And, Bitmap::and as fn(&Bitmap, &Bitmap) -> Bitmap),
                (SetOp::Or, Bitmap::or),
                (SetOp::Xor, Bitmap::xor),
                (SetOp::AndNot, Bitmap::and_not),
            ] {
                assert_eq!(start.try_combine(&other, op), Ok(f(&start, &other)));
                let mut x = start.clone();
                x.try_combine_assign(&other, op).unwrap();
                assert_eq!(x, f(&start, &other));
            }
            assert_eq!(start.try_not(), Ok(Bitmap::not(&start)));
            assert_eq!(start.try_clone(), Ok(start.clone()));
            assert_eq!(
                Bitmap::try_from_words(start.words()),
                Ok(Bitmap::from_words(start.words()))
            );
        }
        assert_eq!(Bitmap::try_from_index(77), Ok(Bitmap::from_index(77)));
        assert_eq!(Bitmap::try_all_but(77), Ok(Bitmap::all_but(77)));
    }

    fn hash_of<T: Hash>(t: &T) -> u64 {
        let mut h = DefaultHasher::new();
        t.hash(&mut h);
        h.finish()
    }

    /// Checks the three printed forms and that each parses back.
    fn check_forms(b: &Bitmap, hwloc: &str, list_form: &str, taskset: &str) {
        assert_eq!(b.to_string(), hwloc, "hwloc form of {list_form}");
        assert_eq!(alloc::format!("{b:?}"), hwloc);
        assert_eq!(b.to_hwloc_string(), hwloc);
        assert_eq!(b.to_list_string(), list_form, "list form of {hwloc}");
        assert_eq!(
            b.to_taskset_string(),
            taskset,
            "taskset form of {list_form}"
        );
        assert_eq!(&Bitmap::parse(hwloc).unwrap(), b, "parse {hwloc}");
        assert_eq!(&hwloc.parse::<Bitmap>().unwrap(), b);
        assert_eq!(
            &Bitmap::parse_list(list_form).unwrap(),
            b,
            "parse_list {list_form}"
        );
        assert_eq!(
            &Bitmap::parse_taskset(taskset).unwrap(),
            b,
            "parse_taskset {taskset}"
        );
    }

    // ----- string vectors ---------------------------------------------------

    /// The vectors of hwloc's own test, tests/hwloc/hwloc_bitmap_string.c.
    #[test]
    fn hwloc_documented_vectors() {
        check_forms(&Bitmap::new(), "0x0", "", "0x0");
        check_forms(&Bitmap::full(), "0xf...f", "0-", "0xf...f");

        let mut b = Bitmap::full();
        b.unset(173);
        b.unset_range(60, Some(70));
        check_forms(
            &b,
            "0xf...f,0xffffdfff,0xffffffff,0xffffffff,0xffffff80,0x0fffffff,0xffffffff",
            "0-59,71-172,174-",
            "0xf...fffffdfffffffffffffffffffffffff800fffffffffffffff",
        );

        let mut b = Bitmap::new();
        b.set(2);
        b.set_range(67, Some(70));
        check_forms(
            &b,
            "0x00000078,,0x00000004",
            "2,67-70",
            "0x780000000000000004",
        );
    }

    /// Outputs of hwloc 2.9 (x86_64) `hwloc_bitmap_{,list_,taskset_}asprintf`
    /// for sets parsed with `hwloc_bitmap_list_sscanf`.
    #[test]
    fn hwloc_2_9_vectors() {
        #[rustfmt::skip]
        let vectors: &[(&str, &str, &str)] = &[
            ("", "0x0", "0x0"),
            ("0", "0x00000001", "0x1"),
            ("1", "0x00000002", "0x2"),
            ("31", "0x80000000", "0x80000000"),
            ("32", "0x00000001,0x0", "0x100000000"),
            ("63", "0x80000000,0x0", "0x8000000000000000"),
            ("64", "0x00000001,,0x0", "0x10000000000000000"),
            ("0-31", "0xffffffff", "0xffffffff"),
            ("0-63", "0xffffffff,0xffffffff", "0xffffffffffffffff"),
            ("0-64", "0x00000001,0xffffffff,0xffffffff", "0x1ffffffffffffffff"),
            ("32-63", "0xffffffff,0x0", "0xffffffff00000000"),
            ("2,67-70", "0x00000078,,0x00000004", "0x780000000000000004"),
            ("0-31,64-95", "0xffffffff,,0xffffffff", "0xffffffff00000000ffffffff"),
            ("0-127", "0xffffffff,0xffffffff,0xffffffff,0xffffffff", "0xffffffffffffffffffffffffffffffff"),
            ("128", "0x00000001,,,,0x0", "0x100000000000000000000000000000000"),
            ("0-", "0xf...f", "0xf...f"),
            ("1-", "0xf...f,0xfffffffe", "0xf...ffffffffe"),
            ("2-", "0xf...f,0xfffffffc", "0xf...ffffffffc"),
            ("31-", "0xf...f,0x80000000", "0xf...f80000000"),
            ("32-", "0xf...f,0x0", "0xf...f00000000"),
            ("33-", "0xf...f,0xfffffffe,0x0", "0xf...ffffffffe00000000"),
            ("63-", "0xf...f,0x80000000,0x0", "0xf...f8000000000000000"),
            ("64-", "0xf...f,,0x0", "0xf...f0000000000000000"),
            ("65-", "0xf...f,0xfffffffe,,0x0", "0xf...ffffffffe0000000000000000"),
            ("100-", "0xf...f,0xfffffff0,,,0x0", "0xf...ffffffff0000000000000000000000000"),
            ("0,32-", "0xf...f,0x00000001", "0xf...f00000001"),
            ("0,64-", "0xf...f,,0x00000001", "0xf...f0000000000000001"),
            ("2-31,64-", "0xf...f,,0xfffffffc", "0xf...f00000000fffffffc"),
            ("2-63,65-", "0xf...f,0xfffffffe,0xffffffff,0xfffffffc", "0xf...ffffffffefffffffffffffffc"),
            ("0-3,128-", "0xf...f,,,,0x0000000f", "0xf...f0000000000000000000000000000000f"),
            ("1,3,5-7,200-", "0xf...f,0xffffff00,,,,,,0x000000ea", "0xf...fffffff000000000000000000000000000000000000000000000000ea"),
        ];
        for &(l, h, t) in vectors {
            check_forms(&list(l), h, l, t);
        }
    }

    #[test]
    fn parse_accepts_hwloc_variants() {
        let b = list("2,67-70");
        // Chunks without padding, without 0x, with 0X.
        assert_eq!(Bitmap::parse("0x78,,0x4").unwrap(), b);
        assert_eq!(Bitmap::parse("78,,4").unwrap(), b);
        assert_eq!(Bitmap::parse("0X78,0x0,0X00000004").unwrap(), b);
        assert_eq!(Bitmap::parse("0x000000078,,0x4").unwrap(), b);
        assert_eq!(Bitmap::parse("").unwrap(), Bitmap::new());
        assert_eq!(Bitmap::parse("0x0").unwrap(), Bitmap::new());
        assert_eq!(Bitmap::parse("0x0,0x0,,0x0").unwrap(), Bitmap::new());
        assert_eq!(Bitmap::parse("0x0,0x1").unwrap(), list("0"));
        assert_eq!(Bitmap::parse("0xFFFFFFFF").unwrap(), list("0-31"));
        // An empty chunk right after the infinite prefix, as hwloc prints.
        assert_eq!(Bitmap::parse("0xf...f,,0x1").unwrap(), list("0,64-"));
        // Taskset form: optional 0x, uppercase digits, leading zeros.
        assert_eq!(Bitmap::parse_taskset("780000000000000004").unwrap(), b);
        assert_eq!(
            Bitmap::parse_taskset("0x00000780000000000000004").unwrap(),
            b
        );
        assert_eq!(
            Bitmap::parse_taskset("0xABC").unwrap(),
            Bitmap::from_u64(0xabc)
        );
        assert_eq!(Bitmap::parse_taskset("").unwrap(), Bitmap::new());
        assert_eq!(Bitmap::parse_taskset("0x").unwrap(), Bitmap::new());
        assert_eq!(Bitmap::parse_taskset("0x0").unwrap(), Bitmap::new());
        // List form: spaces as separators, one trailing separator, runs of
        // separators, overlapping and unsorted items.
        assert_eq!(Bitmap::parse_list("2 67-70").unwrap(), b);
        assert_eq!(Bitmap::parse_list("2, 67-70").unwrap(), b);
        assert_eq!(Bitmap::parse_list(",2,,67-70,").unwrap(), b);
        assert_eq!(Bitmap::parse_list("67-70,2,68-69,2").unwrap(), b);
        assert_eq!(Bitmap::parse_list("5-5").unwrap(), Bitmap::from_index(5));
        assert_eq!(
            Bitmap::parse_list("3-,5-").unwrap_err().kind(),
            K::InfiniteRangeNotLast
        );
        assert_eq!(Bitmap::parse_list("5,3-").unwrap(), list("3-"));
        let max = alloc::format!("{MAX_PARSE_INDEX}");
        assert_eq!(
            Bitmap::parse_list(&max).unwrap().first(),
            Some(MAX_PARSE_INDEX)
        );
        assert_eq!(
            Bitmap::parse_list(&alloc::format!("{max}-"))
                .unwrap()
                .first(),
            Some(MAX_PARSE_INDEX)
        );
    }

    /// Where this module reads the string the way its text says and hwloc
    /// 2.9 (64-bit) rounds the explicit part up to 64 bits.
    #[test]
    fn infinite_prefix_with_partial_word() {
        // hwloc 2.9: 0-1,64-
        assert_eq!(
            Bitmap::parse("0xf...f,0x00000003").unwrap(),
            list("0-1,32-")
        );
        assert_eq!(Bitmap::parse("0xf...f,0xfffffffc").unwrap(), list("2-"));
        assert_eq!(Bitmap::parse("0xf...f,0x3").unwrap(), list("0-1,32-"));
        // hwloc 2.9: 64-; newer hwloc: 4-
        assert_eq!(Bitmap::parse_taskset("0xf...f0").unwrap(), list("4-"));
        assert_eq!(Bitmap::parse_taskset("0xf...f1").unwrap(), list("0,4-"));
        assert_eq!(
            Bitmap::parse_taskset("0xf...ffffffffc").unwrap(),
            list("2-")
        );
        assert_eq!(
            Bitmap::parse_taskset("0xf...f00000000fffffffc").unwrap(),
            list("2-31,64-")
        );
    }

    // ----- parse errors -----------------------------------------------------

    #[test]
    fn parse_errors() {
        #[rustfmt::skip]
        let cases: &[(BitmapFormat, &str, usize, K)] = &[
            (BitmapFormat::Hwloc, "garbage", 0, K::UnexpectedChar('g')),
            (BitmapFormat::Hwloc, "0xg", 2, K::UnexpectedChar('g')),
            (BitmapFormat::Hwloc, "0x", 2, K::MissingNumber),
            (BitmapFormat::Hwloc, "0x1,0x", 6, K::MissingNumber),
            (BitmapFormat::Hwloc, "0x1,", 4, K::TrailingEmptyChunk),
            (BitmapFormat::Hwloc, "0x1,,", 5, K::TrailingEmptyChunk),
            (BitmapFormat::Hwloc, ",", 1, K::TrailingEmptyChunk),
            (BitmapFormat::Hwloc, ",0x1", 0, K::LeadingEmptyChunk),
            (BitmapFormat::Hwloc, ",,0x1", 0, K::LeadingEmptyChunk),
            (BitmapFormat::Hwloc, "0xf...f,", 8, K::TrailingEmptyChunk),
            (BitmapFormat::Hwloc, "0xf...fzz", 7, K::UnexpectedChar('z')),
            (BitmapFormat::Hwloc, "0xf...f0", 7, K::UnexpectedChar('0')),
            (BitmapFormat::Hwloc, "0xF...F", 3, K::UnexpectedChar('.')),
            (BitmapFormat::Hwloc, "0x1,0xf...f", 7, K::UnexpectedChar('.')),
            (BitmapFormat::Hwloc, "0x123456789", 0, K::ChunkOverflow),
            (BitmapFormat::Hwloc, "0x1,,0x1ffffffff", 5, K::ChunkOverflow),
            (BitmapFormat::Hwloc, " 0x1", 0, K::UnexpectedChar(' ')),
            (BitmapFormat::Hwloc, "0x1\n", 3, K::UnexpectedChar('\n')),
            (BitmapFormat::Hwloc, "0x1, 0x2", 4, K::UnexpectedChar(' ')),
            (BitmapFormat::Hwloc, "-0x1", 0, K::UnexpectedChar('-')),
            (BitmapFormat::Hwloc, "0x1,é", 4, K::UnexpectedChar('é')),
            (BitmapFormat::Hwloc, "\u{0}", 0, K::UnexpectedChar('\0')),
            (BitmapFormat::List, "3-1", 2, K::ReversedRange { first: 3, last: 1 }),
            (BitmapFormat::List, "99999999999999-", 0, K::TooLarge),
            (BitmapFormat::List, "0-99999999999999999999999999", 2, K::TooLarge),
            (BitmapFormat::List, "16777216", 0, K::TooLarge),
            (BitmapFormat::List, "4294967295", 0, K::TooLarge),
            (BitmapFormat::List, ",", 1, K::NoItems),
            (BitmapFormat::List, " ", 1, K::NoItems),
            (BitmapFormat::List, ",,", 2, K::NoItems),
            (BitmapFormat::List, "2,,", 3, K::TrailingSeparators),
            (BitmapFormat::List, "2, ", 3, K::TrailingSeparators),
            (BitmapFormat::List, "8-,", 2, K::InfiniteRangeNotLast),
            (BitmapFormat::List, "8- 9", 2, K::InfiniteRangeNotLast),
            (BitmapFormat::List, "8-9-", 3, K::UnexpectedChar('-')),
            (BitmapFormat::List, "5x7", 1, K::UnexpectedChar('x')),
            (BitmapFormat::List, "010", 0, K::LeadingZero),
            (BitmapFormat::List, "1-010", 2, K::LeadingZero),
            (BitmapFormat::List, "0x10", 1, K::UnexpectedChar('x')),
            (BitmapFormat::List, "-5", 0, K::UnexpectedChar('-')),
            (BitmapFormat::List, "1--2", 2, K::UnexpectedChar('-')),
            (BitmapFormat::List, "1 -2", 2, K::UnexpectedChar('-')),
            (BitmapFormat::List, "+1", 0, K::UnexpectedChar('+')),
            (BitmapFormat::List, "1\t2", 1, K::UnexpectedChar('\t')),
            (BitmapFormat::List, "1,ü", 2, K::UnexpectedChar('ü')),
            (BitmapFormat::List, "0xf...f", 1, K::UnexpectedChar('x')),
            (BitmapFormat::Taskset, "0xg", 2, K::UnexpectedChar('g')),
            (BitmapFormat::Taskset, "0X12", 1, K::UnexpectedChar('X')),
            (BitmapFormat::Taskset, "0xf...f..", 7, K::UnexpectedChar('.')),
            (BitmapFormat::Taskset, "0xf...", 3, K::UnexpectedChar('.')),
            (BitmapFormat::Taskset, "0x1 ", 3, K::UnexpectedChar(' ')),
            (BitmapFormat::Taskset, "0x1,0x2", 3, K::UnexpectedChar(',')),
            (BitmapFormat::Taskset, "x1", 0, K::UnexpectedChar('x')),
            (BitmapFormat::Taskset, "0xé", 2, K::UnexpectedChar('é')),
        ];
        for &(format, input, position, kind) in cases {
            let r = match format {
                BitmapFormat::Hwloc => Bitmap::parse(input),
                BitmapFormat::List => Bitmap::parse_list(input),
                BitmapFormat::Taskset => Bitmap::parse_taskset(input),
            };
            let e = r.expect_err(input);
            assert_eq!(
                (e.format(), e.position(), e.kind()),
                (format, position, kind),
                "{input:?}: {e}"
            );
            assert_eq!(e.input(), input);
        }
    }

    #[test]
    fn parse_rejects_huge_inputs_without_allocating() {
        // 2^19 + 1 chunks describe more than MAX_PARSE_BITS bits.
        let mut s = String::from("0x1");
        for _ in 0..(MAX_PARSE_BITS / 32) {
            s.push_str(",0");
        }
        let e = Bitmap::parse(&s).unwrap_err();
        assert_eq!(e.kind(), K::TooLarge);
        assert_eq!(e.input().len(), ERROR_INPUT_MAX);
        assert!(e.to_string().contains("\"... at byte 0"), "{e}");
        // Exactly 2^19 chunks is fine.
        let ok = &s[..s.len() - 2];
        assert_eq!(
            Bitmap::parse(ok).unwrap().first(),
            Some(MAX_PARSE_BITS - 32)
        );

        let mut t = String::from("0x1");
        t.extend(core::iter::repeat_n('0', (MAX_PARSE_BITS / 4) as usize));
        assert_eq!(Bitmap::parse_taskset(&t).unwrap_err().kind(), K::TooLarge);
        let ok = &t[..t.len() - 1];
        assert_eq!(
            Bitmap::parse_taskset(ok).unwrap().first(),
            Some(MAX_PARSE_INDEX - 3)
        );

        // An infinite tail must start at a valid index, so that the list form
        // of every parsed set parses back.
        let mut inf = String::from("0xf...f");
        inf.extend(core::iter::repeat_n('0', (MAX_PARSE_BITS / 4) as usize));
        assert_eq!(Bitmap::parse_taskset(&inf).unwrap_err().kind(), K::TooLarge);
        let b = Bitmap::parse_taskset(&inf[..inf.len() - 1]).unwrap();
        assert_eq!(b.first(), Some(MAX_PARSE_INDEX - 3));
        assert_eq!(Bitmap::parse_list(&b.to_list_string()).unwrap(), b);
        let mut inf = String::from("0xf...f,0x0");
        for _ in 1..(MAX_PARSE_BITS / 32) {
            inf.push_str(",0");
        }
        assert_eq!(Bitmap::parse(&inf).unwrap_err().kind(), K::TooLarge);
        let b = Bitmap::parse(&inf[..inf.len() - 2]).unwrap();
        assert_eq!(b.first(), Some(MAX_PARSE_BITS - 32));
        assert_eq!(Bitmap::parse_list(&b.to_list_string()).unwrap(), b);
        assert_eq!(Bitmap::parse(&b.to_string()).unwrap(), b);
        assert_eq!(Bitmap::parse_taskset(&b.to_taskset_string()).unwrap(), b);
        // The largest tail start: 2^19 chunks whose top bit is set.
        let edge = alloc::format!("0xf...f,0x80000000{}", &inf[11..]);
        let b = Bitmap::parse(&edge).unwrap();
        assert_eq!(b.last_unset(), Some(MAX_PARSE_INDEX - 1));
        assert_eq!(b.to_list_string(), alloc::format!("{}-", MAX_PARSE_INDEX));
        assert_eq!(Bitmap::parse(&b.to_string()).unwrap(), b);
    }

    #[test]
    fn parse_error_display() {
        let e = Bitmap::parse_list("3-1").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid list bitmap string \"3-1\" at byte 2: range end 1 is below range start 3"
        );
        let e = Bitmap::parse("0xg").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid hwloc bitmap string \"0xg\" at byte 2: unexpected character 'g'"
        );
        let e = Bitmap::parse_list("99999999999999-").unwrap_err();
        assert!(e
            .to_string()
            .contains("index too large (the maximum is 16777215)"));
        let e = Bitmap::parse_taskset("0xé").unwrap_err();
        assert!(e
            .to_string()
            .starts_with("invalid taskset bitmap string \"0xé\" at byte 2"));
        // Truncation keeps a char boundary.
        let long: String = core::iter::repeat_n('é', 100).collect();
        let e = Bitmap::parse(&long).unwrap_err();
        assert_eq!(e.input().chars().count(), 32);
        let _: &dyn core::error::Error = &e;
    }

    #[test]
    fn parsers_do_not_panic_on_odd_inputs() {
        let odd = [
            "",
            ",",
            ",,",
            "-",
            "--",
            "0",
            "0x",
            "0xf...f",
            "0xf...f,",
            "0xf...f,,",
            "0xf...",
            "0xf..",
            "f...f",
            "...",
            "0x,0x",
            "1-",
            "-1",
            "1-2-3",
            "\u{0}",
            "\u{feff}0x1",
            "🦀",
            "0x1🦀",
            "1,🦀",
            "0xf...f🦀",
            "4294967295",
            "4294967296",
            "18446744073709551616",
            "0xffffffffffffffffffffffffffffffff",
            "0x0000000000000000000000000000000000001",
        ];
        for s in odd {
            let _ = Bitmap::parse(s);
            let _ = Bitmap::parse_list(s);
            let _ = Bitmap::parse_taskset(s);
            let _ = CpuSet::parse(s);
        }
    }

    // ----- construction and single bits -------------------------------------

    #[test]
    fn edge_bits() {
        for i in [0u32, 1, 31, 32, 63, 64, 65, 127, 128, 1000] {
            let b = Bitmap::from_index(i);
            assert!(b.is_set(i));
            assert!(!b.is_set(i + 1));
            assert_eq!(b.weight(), Some(1));
            assert_eq!((b.first(), b.last()), (Some(i), Some(i)));
            assert_eq!(b.iter().collect::<Vec<_>>(), [i]);
            assert_eq!(b.nr_words(), Some(i as usize / 64 + 1));
            let mut c = b.clone();
            c.unset(i);
            assert!(c.is_empty());
            assert_eq!(c, Bitmap::new());
            assert_eq!(c.words(), &[] as &[u64]);

            let a = Bitmap::all_but(i);
            assert!(a.is_infinite() && !a.is_full());
            assert!(!a.is_set(i) && a.is_set(i + 1));
            assert_eq!(a.first_unset(), Some(i));
            assert_eq!(a.last_unset(), Some(i));
            assert_eq!(a.next_unset(Some(i)), None);
            assert_eq!(Bitmap::not(&a), b);
            let mut d = a.clone();
            d.set(i);
            assert!(d.is_full());
        }
        assert_eq!(Bitmap::from_u64(0), Bitmap::new());
        assert_eq!(Bitmap::from_words(&[0, 0, 0]), Bitmap::new());
        assert_eq!(Bitmap::from_words(&[1, 0, 4]), list("0,130"));
        assert_eq!(Bitmap::from_words(&[1, 0, 4]).words(), &[1, 0, 4]);
        assert_eq!(list("0,130").word(2), 4);
        assert_eq!(list("64-").word(0), 0);
        assert_eq!(list("64-").word(5), !0);
    }

    #[test]
    fn ranges_set_and_unset() {
        let mut b = Bitmap::new();
        b.set_range(5, Some(3));
        assert!(b.is_empty());
        b.set_range(3, Some(200));
        assert_eq!(b.to_list_string(), "3-200");
        b.unset_range(10, Some(100));
        assert_eq!(b.to_list_string(), "3-9,101-200");
        b.set_range(150, None);
        assert_eq!(b.to_list_string(), "3-9,101-");
        b.unset_range(300, Some(400));
        assert_eq!(b.to_list_string(), "3-9,101-299,401-");
        b.set_range(500, Some(600)); // inside the infinite part: no-op
        assert_eq!(b.to_list_string(), "3-9,101-299,401-");
        b.unset_range(120, None);
        assert_eq!(b.to_list_string(), "3-9,101-119");
        b.unset_range(1000, Some(2000)); // beyond a finite set: no-op
        assert_eq!(b.words().len(), 2);
        b.unset_range(0, None);
        assert!(b.is_empty());
        b.set_range(0, None);
        assert!(b.is_full());
        b.unset_range(64, Some(127));
        assert_eq!(b.to_string(), "0xf...f,,,0xffffffff,0xffffffff");
        b.set_range(64, Some(127));
        assert!(b.is_full());
        assert_eq!(Bitmap::from_range(0, Some(63)).words(), &[!0]);
        assert_eq!(Bitmap::from_range(64, Some(64)), Bitmap::from_index(64));
        assert_eq!(Bitmap::from_range(7, None).to_list_string(), "7-");
        b.clear();
        assert!(b.is_empty());
        b.fill();
        assert!(b.is_full());
    }

    #[test]
    fn infinite_sets_with_gaps() {
        let b = list("0-9,20-29,100-");
        assert!(b.is_infinite());
        assert_eq!(b.weight(), None);
        assert_eq!(b.last(), None);
        assert_eq!(b.first(), Some(0));
        assert_eq!(b.first_unset(), Some(10));
        assert_eq!(b.last_unset(), Some(99));
        assert_eq!(b.next_set(Some(9)), Some(20));
        assert_eq!(b.next_set(Some(29)), Some(100));
        assert_eq!(b.next_set(Some(5000)), Some(5001));
        assert_eq!(b.next_unset(Some(29)), Some(30));
        assert_eq!(b.next_unset(Some(99)), None);
        assert_eq!(b.nr_words(), None);
        assert_eq!(
            b.ranges().collect::<Vec<_>>(),
            [(0, Some(9)), (20, Some(29)), (100, None)]
        );
        let first: Vec<u32> = b.iter().skip(18).take(4).collect();
        assert_eq!(first, [28, 29, 100, 101]);
        // The index space ends at u32::MAX.
        let full = Bitmap::full();
        assert_eq!(full.next_set(Some(u32::MAX - 1)), Some(u32::MAX));
        assert_eq!(full.next_set(Some(u32::MAX)), None);
        assert_eq!(full.first_unset(), None);
        assert_eq!(full.last_unset(), None);
        assert_eq!(full.ranges().collect::<Vec<_>>(), [(0, None)]);
        let mut it = full.iter();
        assert_eq!((it.next(), it.next()), (Some(0), Some(1)));
        let tail = Bitmap::from_range(u32::MAX - 2, None);
        assert_eq!(tail.first(), Some(u32::MAX - 2));
        assert_eq!(tail.next_unset(Some(u32::MAX - 3)), None);
        assert_eq!(Bitmap::new().next_unset(Some(u32::MAX)), None);
        assert_eq!(Bitmap::new().next_unset(Some(u32::MAX - 1)), Some(u32::MAX));
    }

    #[test]
    fn iterators() {
        let b = list("1,3,5-7,64,200-202");
        assert_eq!(
            b.iter().collect::<Vec<_>>(),
            [1, 3, 5, 6, 7, 64, 200, 201, 202]
        );
        assert_eq!((&b).into_iter().count(), 9);
        let mut it = b.iter();
        it.by_ref().for_each(drop);
        assert_eq!(it.next(), None);
        assert_eq!(
            b.ranges().collect::<Vec<_>>(),
            [
                (1, Some(1)),
                (3, Some(3)),
                (5, Some(7)),
                (64, Some(64)),
                (200, Some(202))
            ]
        );
        assert_eq!(Bitmap::new().iter().next(), None);
        assert_eq!(Bitmap::new().ranges().next(), None);
        let c: Bitmap = [5u32, 3, 70, 5].into_iter().collect();
        assert_eq!(c.to_list_string(), "3,5,70");
        let mut d = c.clone();
        d.extend([0u32, 1]);
        assert_eq!(d.to_list_string(), "0-1,3,5,70");
        let mut n = 0;
        for i in &d {
            assert!(d.is_set(i));
            n += 1;
        }
        assert_eq!(n, 5);
    }

    // ----- queries checked against hwloc 2.9 ---------------------------------

    /// first, last, weight, first_unset, nr_ulongs, last_unset and singlify
    /// as hwloc 2.9 computes them (-1 = None).
    #[test]
    fn queries_match_hwloc() {
        let g = |v: Option<u32>| v.map_or(-1, i64::from);
        #[rustfmt::skip]
        let cases: &[(&str, [i64; 6], &str)] = &[
            ("0-", [0, -1, -1, -1, -1, -1], "0"),
            ("64-", [64, -1, -1, 0, -1, 63], "64"),
            ("5-9", [5, 9, 5, 0, 1, -1], "5"),
            ("", [-1, -1, 0, 0, 0, -1], ""),
            ("0,64-", [0, -1, -1, 1, -1, 63], "0"),
        ];
        for &(l, expected, single) in cases {
            let mut b = list(l);
            let got = [
                g(b.first()),
                g(b.last()),
                g(b.weight()),
                g(b.first_unset()),
                b.nr_words().map_or(-1, |n| n as i64),
                g(b.last_unset()),
            ];
            assert_eq!(got, expected, "{l}");
            b.singlify();
            assert_eq!(b.to_list_string(), single, "singlify {l}");
        }
    }

    /// hwloc 2.9's `hwloc_bitmap_compare_first` and `hwloc_bitmap_compare`.
    #[test]
    fn ordering_matches_hwloc() {
        use Ordering::{Equal as E, Greater as G, Less as L};
        #[rustfmt::skip]
        let cases: &[(&str, &str, Ordering, Ordering)] = &[
            ("64-", "", L, G),
            ("", "64-", G, L),
            ("0-3", "1", L, G),
            ("2", "0-", G, L),
            ("0-", "1-", L, G),
            ("1-", "0-", G, L),
            ("64-", "0-", G, L),
            ("5", "3-", G, L),
            ("3", "5", L, L),
            ("0-1", "0-", E, L),
            ("", "", E, E),
            ("2", "", L, G),
            ("1,3", "1,2", E, G),
            ("0-2,5-", "0-2,4-", E, L),
            ("100", "0-99", G, G),
        ];
        for &(a, b, first, last) in cases {
            let (a, b) = (list(a), list(b));
            assert_eq!(a.compare_first(&b), first, "compare_first({a}, {b})");
            assert_eq!(a.compare_last(&b), last, "compare_last({a}, {b})");
            assert_eq!(a.cmp(&b), last);
            assert_eq!(b.compare_last(&a), last.reverse());
        }
        let mut v = alloc::vec![list("2-"), list(""), list("0-1"), list("5"), list("0-")];
        v.sort();
        let s: Vec<String> = v.iter().map(Bitmap::to_list_string).collect();
        assert_eq!(s, ["", "0-1", "5", "2-", "0-"]);
    }

    // ----- set algebra -------------------------------------------------------

    #[test]
    fn algebra_with_infinite_sets() {
        let a = list("0-9,100-");
        let b = list("5-150");
        let c = list("3,200-");
        assert_eq!(a.and(&b).to_list_string(), "5-9,100-150");
        assert_eq!(a.or(&b).to_list_string(), "0-");
        assert!(a.or(&b).is_full());
        assert_eq!(a.xor(&b).to_list_string(), "0-4,10-99,151-");
        assert_eq!(a.and_not(&b).to_list_string(), "0-4,151-");
        assert_eq!(b.and_not(&a).to_list_string(), "10-99");
        assert_eq!(Bitmap::not(&a).to_list_string(), "10-99");
        assert_eq!(a.and(&c).to_list_string(), "3,200-");
        assert_eq!(a.xor(&c).to_list_string(), "0-2,4-9,100-199");
        assert!(!a.xor(&c).is_infinite());
        assert_eq!(c.and_not(&a), Bitmap::new());
        assert!(a.includes(&c) && c.is_included_in(&a));
        assert!(!c.includes(&a));
        assert!(a.intersects(&b) && a.intersects(&c) && !b.intersects(&c));
        assert!(list("64-").intersects(&list("1000-")));
        assert!(!list("0-63").intersects(&list("64-")));
        assert!(Bitmap::full().includes(&a));
        assert!(a.includes(&Bitmap::new()));
        assert!(Bitmap::new().includes(&Bitmap::new()));
        assert!(!Bitmap::new().includes(&Bitmap::from_index(0)));
        assert!(!b.includes(&Bitmap::full()));
        assert!(!list("0-99").includes(&list("50-")));
        assert!(list("50-").includes(&list("60-")));
        assert!(!list("60-").includes(&list("50-")));
        assert!(!Bitmap::new().intersects(&Bitmap::full()));
        assert!(Bitmap::full().intersects(&Bitmap::full()));
        let full = Bitmap::full();
        assert_eq!(Bitmap::not(&full), Bitmap::new());
        assert_eq!(Bitmap::new().not(), full);
        assert_eq!(a.and(&full), a);
        assert_eq!(a.or(&Bitmap::new()), a);
        assert_eq!(a.xor(&full), Bitmap::not(&a));
    }

    #[test]
    fn operators() {
        let a = list("0-9,100-");
        let b = list("5-150");
        assert_eq!(&a & &b, a.and(&b));
        assert_eq!(&a | &b, a.or(&b));
        assert_eq!(&a ^ &b, a.xor(&b));
        assert_eq!(&a - &b, a.and_not(&b));
        assert_eq!(!&a, Bitmap::not(&a));
        assert_eq!(!a.clone(), Bitmap::not(&a));
        assert_eq!(a.clone() & b.clone(), a.and(&b));
        assert_eq!(a.clone() | &b, a.or(&b));
        assert_eq!(&a ^ b.clone(), a.xor(&b));
        assert_eq!(a.clone() - b.clone(), a.and_not(&b));
        let mut c = a.clone();
        c &= &b;
        assert_eq!(c, a.and(&b));
        let mut c = a.clone();
        c |= b.clone();
        assert_eq!(c, a.or(&b));
        let mut c = a.clone();
        c ^= &b;
        assert_eq!(c, a.xor(&b));
        let mut c = a.clone();
        c -= b.clone();
        assert_eq!(c, a.and_not(&b));
        let mut c = a.clone();
        c.invert();
        assert_eq!(c, !&a);
    }

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

    // ----- typed sets --------------------------------------------------------

    #[test]
    fn typed_sets() {
        let a: CpuSet = "0x00000078,,0x00000004".parse().unwrap();
        assert_eq!(a.to_list_string(), "2,67-70");
        assert_eq!(a.to_string(), "0x00000078,,0x00000004");
        assert_eq!(alloc::format!("{a:?}"), "cpuset(0x00000078,,0x00000004)");
        let n = NodeSet::from_range(0, Some(1));
        assert_eq!(alloc::format!("{n:?}"), "nodeset(0x00000003)");
        assert_eq!(<CpuKind as SetKind>::NAME, "cpuset");
        assert_eq!(NodeKind::NAME, "nodeset");

        let b = CpuSet::parse_list("0-3").unwrap();
        assert_eq!((&a | &b).to_list_string(), "0-3,67-70");
        assert_eq!((&a & &b).to_list_string(), "2");
        assert_eq!((&a ^ &b).to_list_string(), "0-1,3,67-70");
        assert_eq!((&a - &b).to_list_string(), "67-70");
        assert_eq!((!&b).to_list_string(), "4-");
        assert_eq!((!b.clone()).to_list_string(), "4-");
        let mut c = a.clone();
        c |= &b;
        c -= CpuSet::from_index(70);
        c ^= CpuSet::from_index(71);
        c &= CpuSet::from_range(0, Some(100));
        assert_eq!(c.to_list_string(), "0-3,67-69,71");
        assert!(c.includes(&b) && b.is_included_in(&c) && c.intersects(&a));
        assert_eq!(c.weight(), Some(8));
        assert_eq!(c.iter().count(), 8);
        assert_eq!((&c).into_iter().last(), Some(71));
        assert_eq!(c.ranges().count(), 3);
        assert_eq!(c.first(), Some(0));
        assert_eq!(c.last(), Some(71));
        assert_eq!(c.next_set(Some(3)), Some(67));
        assert_eq!(c.next_unset(Some(0)), Some(4));
        assert_eq!(c.first_unset(), Some(4));
        assert_eq!(CpuSet::all_but(4).last_unset(), Some(4));
        assert_eq!(c.compare_first(&a), Ordering::Less);
        assert_eq!(c.compare_last(&a), Ordering::Greater);
        assert!(c > a);
        assert_eq!(hash_of(&c), hash_of(c.bitmap()));
        let t = CpuSet::parse_taskset(&c.to_taskset_string()).unwrap();
        assert_eq!(t, c);
        assert_eq!(CpuSet::parse(&c.to_hwloc_string()).unwrap(), c);
        let mut s = c.clone();
        s.singlify();
        assert_eq!(s, CpuSet::from_index(0));
        s.set(5);
        s.unset(0);
        s.set_range(10, Some(11));
        s.unset_range(11, None);
        assert_eq!(s.to_list_string(), "5,10");
        s.bitmap_mut().set(6);
        assert!(s.is_set(6));
        s.invert();
        assert!(s.is_infinite() && !s.is_full() && !s.is_empty());
        s.fill();
        assert!(s.is_full());
        s.clear();
        assert_eq!(s, CpuSet::default());
        assert_eq!(CpuSet::full().not(), CpuSet::new());
        assert_eq!(CpuSet::from_u64(3).words(), &[3]);
        assert_eq!(CpuSet::from_words(&[0, 1]).word(1), 1);
        assert_eq!(CpuSet::from_words(&[0, 1]).nr_words(), Some(2));
        let bm: Bitmap = c.clone().into_bitmap();
        assert_eq!(CpuSet::from_bitmap(bm), c);
        let collected: NodeSet = [1u32, 2].into_iter().collect();
        let mut e = collected.clone();
        e.extend([3u32]);
        assert_eq!(e.to_list_string(), "1-3");
        assert_eq!(c.and(&a).or(&b).xor(&b).and_not(&a), CpuSet::new());
        let mut f = a.clone();
        f.and_assign(&b);
        f.or_assign(&b);
        f.xor_assign(&a);
        f.and_not_assign(&b);
        assert_eq!(f.to_list_string(), "67-70");
        assert!(CpuSet::parse("0xg").is_err());
        let mut sorted = alloc::vec![CpuSet::full(), CpuSet::from_index(3), CpuSet::new()];
        sorted.sort();
        assert_eq!(sorted[0], CpuSet::new());
        let mut g = CpuSet::new();
        g.clone_from(&a);
        assert_eq!(g, a);
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serde_from_hwloc_string() {
        use serde::de::value::{Error, StrDeserializer};
        use serde::Deserialize;
        let d = StrDeserializer::<Error>::new("0xf...f,,0x00000001");
        assert_eq!(Bitmap::deserialize(d).unwrap(), list("0,64-"));
        let d = StrDeserializer::<Error>::new("0x00000003");
        assert_eq!(
            NodeSet::deserialize(d).unwrap(),
            NodeSet::from_range(0, Some(1))
        );
        let d = StrDeserializer::<Error>::new("0xg");
        let e = Bitmap::deserialize(d).unwrap_err().to_string();
        assert!(e.contains("unexpected character 'g'"), "{e}");
    }

    // ----- property tests ----------------------------------------------------

    fn arb_word() -> impl Strategy<Value = u64> {
        prop_oneof![
            Just(0u64),
            Just(!0u64),
            any::<u64>(),
            (0u32..64).prop_map(|b| 1u64 << b),
            (0u32..64).prop_map(|b| !0u64 << b),
            (0u32..64).prop_map(|b| !0u64 >> b),
        ]
    }

    /// Finite and infinite bitmaps with up to 6 stored words.
    fn arb_bitmap() -> impl Strategy<Value = Bitmap> {
        (proptest::collection::vec(arb_word(), 0..6), any::<bool>()).prop_map(
            |(words, infinite)| {
                let mut b = Bitmap {
                    words: words.into(),
                    infinite,
                };
                b.normalize();
                b
            },
        )
    }

    #[derive(Clone, Debug)]
    enum Op {
        Set(u32),
        Unset(u32),
        SetRange(u32, Option<u32>),
        UnsetRange(u32, Option<u32>),
    }

    const MODEL_BITS: u32 = 300;

    fn arb_op() -> impl Strategy<Value = Op> {
        let i = 0..MODEL_BITS;
        let last = proptest::option::weighted(0.8, 0..MODEL_BITS);
        prop_oneof![
            i.clone().prop_map(Op::Set),
            i.clone().prop_map(Op::Unset),
            (i.clone(), last.clone()).prop_map(|(f, l)| Op::SetRange(f, l)),
            (i, last).prop_map(|(f, l)| Op::UnsetRange(f, l)),
        ]
    }

    proptest! {
        #[test]
        fn prop_string_round_trips(b in arb_bitmap()) {
            let h = b.to_string();
            prop_assert_eq!(Bitmap::parse(&h).unwrap(), b.clone(), "hwloc {}", h);
            let l = b.to_list_string();
            prop_assert_eq!(Bitmap::parse_list(&l).unwrap(), b.clone(), "list {}", l);
            let t = b.to_taskset_string();
            prop_assert_eq!(Bitmap::parse_taskset(&t).unwrap(), b.clone(), "taskset {}", t);
        }

        #[test]
        fn prop_algebra_identities(a in arb_bitmap(), b in arb_bitmap(), c in arb_bitmap()) {
            let empty = Bitmap::new();
            let full = Bitmap::full();
            prop_assert_eq!(!(&a | &b), &!&a & &!&b);
            prop_assert_eq!(!(&a & &b), &!&a | &!&b);
            prop_assert_eq!(&a & &!&a, empty.clone());
            prop_assert_eq!(&a | &!&a, full.clone());
            prop_assert_eq!(&a ^ &a, empty);
            prop_assert_eq!(!&!&a, a.clone());
            prop_assert_eq!(&a - &b, &a & &!&b);
            prop_assert_eq!(&a ^ &b, &(&a - &b) | &(&b - &a));
            prop_assert_eq!(&a & &(&b | &c), &(&a & &b) | &(&a & &c));
            prop_assert_eq!(&a & &b, &b & &a);
            prop_assert_eq!(a.includes(&b), (&a & &b) == b);
            prop_assert_eq!(a.includes(&b), (&b - &a).is_empty());
            prop_assert_eq!(a.intersects(&b), !(&a & &b).is_empty());
            prop_assert!((&a | &b).includes(&a));
            prop_assert!(a.includes(&(&a & &b)));
            prop_assert_eq!((&a | &b).is_infinite(), a.is_infinite() || b.is_infinite());
            // In-place forms agree with the pure ones.
            let mut x = a.clone();
            x.and_assign(&b);
            prop_assert_eq!(x, a.and(&b));
            let mut x = a.clone();
            x.or_assign(&b);
            prop_assert_eq!(x, a.or(&b));
            let mut x = a.clone();
            x.xor_assign(&b);
            prop_assert_eq!(x, a.xor(&b));
            let mut x = a.clone();
            x.and_not_assign(&b);
            prop_assert_eq!(x, a.and_not(&b));
        }

        #[test]
        fn prop_queries_agree_with_bits(a in arb_bitmap(), probe in 0u32..600) {
            let limit = 64 * 7;
            let bits: Vec<u32> = (0..limit).filter(|&i| a.is_set(i)).collect();
            prop_assert_eq!(a.iter().take_while(|&i| i < limit).collect::<Vec<_>>(), bits.clone());
            prop_assert_eq!(a.first(), a.iter().next());
            prop_assert_eq!(a.first(), (0..=limit).find(|&i| a.is_set(i)));
            prop_assert_eq!(a.first_unset(), (0..=limit).find(|&i| !a.is_set(i)));
            prop_assert_eq!(a.next_set(Some(probe)), (probe + 1..=probe + limit).find(|&i| a.is_set(i)));
            prop_assert_eq!(a.next_unset(Some(probe)), (probe + 1..=probe + limit).find(|&i| !a.is_set(i)));
            if a.is_infinite() {
                prop_assert_eq!(a.weight(), None);
                prop_assert_eq!(a.last(), None);
                prop_assert_eq!(a.last_unset(), (0..limit).rev().find(|&i| !a.is_set(i)));
            } else {
                prop_assert_eq!(a.weight(), Some(bits.len() as u32));
                prop_assert_eq!(a.last(), bits.last().copied());
                prop_assert_eq!(a.last_unset(), None);
                prop_assert_eq!(a.iter().count(), bits.len());
            }
            // Ranges cover exactly the set bits.
            let mut from_ranges = Bitmap::new();
            for (f, l) in a.ranges() {
                from_ranges.set_range(f, l);
            }
            prop_assert_eq!(&from_ranges, &a);
            let mut s = a.clone();
            s.singlify();
            prop_assert_eq!(s.weight(), Some(u32::from(!a.is_empty())));
            prop_assert_eq!(s.first(), a.first());
        }

        #[test]
        fn prop_orderings(a in arb_bitmap(), b in arb_bitmap()) {
            prop_assert_eq!(a.compare_last(&b) == Ordering::Equal, a == b);
            prop_assert_eq!(a.compare_last(&b), b.compare_last(&a).reverse());
            prop_assert_eq!(a.compare_first(&b), b.compare_first(&a).reverse());
            let expected = match (a.first(), b.first()) {
                (Some(x), Some(y)) => x.cmp(&y),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            };
            prop_assert_eq!(a.compare_first(&b), expected);
            if a.is_infinite() == b.is_infinite() && !a.is_infinite() {
                // Finite sets compare as the binary numbers they spell: by
                // highest differing index.
                let d = a.xor(&b).last();
                if let Some(d) = d {
                    let expected = if a.is_set(d) { Ordering::Greater } else { Ordering::Less };
                    prop_assert_eq!(a.compare_last(&b), expected);
                }
            }
            prop_assert!(a != b || hash_of(&a) == hash_of(&b));
        }

        #[test]
        fn prop_matches_model(ops in proptest::collection::vec(arb_op(), 0..40)) {
            let mut b = Bitmap::new();
            let mut model = [false; MODEL_BITS as usize];
            let mut tail = false;
            for op in &ops {
                let (first, last, value) = match *op {
                    Op::Set(i) => { b.set(i); (i, Some(i), true) }
                    Op::Unset(i) => { b.unset(i); (i, Some(i), false) }
                    Op::SetRange(f, l) => { b.set_range(f, l); (f, l, true) }
                    Op::UnsetRange(f, l) => { b.unset_range(f, l); (f, l, false) }
                };
                match last {
                    Some(l) => {
                        for i in first..=l {
                            model[i as usize] = value;
                        }
                    }
                    None => {
                        model[first as usize..].fill(value);
                        tail = value;
                    }
                }
            }
            for i in 0..MODEL_BITS + 130 {
                let expected = model.get(i as usize).copied().unwrap_or(tail);
                prop_assert_eq!(b.is_set(i), expected, "bit {} after {:?}", i, ops);
            }
            prop_assert_eq!(b.is_infinite(), tail);
            prop_assert!(b.words.last() != Some(&b.fill_word()), "not canonical");
            let rebuilt: Bitmap = Bitmap::parse_list(&b.to_list_string()).unwrap();
            prop_assert_eq!(rebuilt, b);
        }

        #[test]
        fn prop_parsers_never_panic(s in "\\PC{0,24}") {
            let _ = Bitmap::parse(&s);
            let _ = Bitmap::parse_list(&s);
            let _ = Bitmap::parse_taskset(&s);
        }

        #[test]
        fn prop_parsers_never_panic_near_miss(s in "(0xf\\.\\.\\.f)?[0-9a-fxX,\\- ]{0,24}") {
            for r in [Bitmap::parse(&s), Bitmap::parse_list(&s), Bitmap::parse_taskset(&s)] {
                match r {
                    // Whatever is accepted prints to something that parses back.
                    Ok(b) => {
                        prop_assert_eq!(Bitmap::parse(&b.to_string()).unwrap(), b.clone());
                        prop_assert_eq!(Bitmap::parse_list(&b.to_list_string()).unwrap(), b);
                    }
                    Err(e) => prop_assert!(e.position() <= s.len()),
                }
            }
        }
    }
}
