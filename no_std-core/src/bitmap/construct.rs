//! Building sets (from indexes, ranges and words) and editing them bit by
//! bit or range by range, with fallible twins that report allocation
//! failure instead of aborting.

use super::*;

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
        // Trailing zero words are left out rather than stored and popped.
        let used = words.iter().rposition(|&w| w != 0).map_or(0, |i| i + 1);
        Bitmap {
            words: super::words_of(&words[..used]),
            infinite: false,
        }
    }

    /// Makes this the finite set of `words` (as [`Bitmap::from_words`]),
    /// keeping its storage: a query answered a million times into the
    /// caller's set then allocates nothing.
    pub fn assign_words(&mut self, words: &[u64]) {
        let used = words.iter().rposition(|&w| w != 0).map_or(0, |i| i + 1);
        super::assign_words(&mut self.words, &words[..used]);
        self.infinite = false;
    }

    /// A finite set from a single 64-bit mask (`hwloc_bitmap_from_ulong`).
    #[doc(alias = "hwloc_bitmap_from_ulong")]
    pub fn from_u64(mask: u64) -> Self {
        Bitmap::from_words(&[mask])
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

#[cfg(test)]
mod tests {
    extern crate std;

    use super::super::test_util::*;
    use super::super::*;
    use super::*;
    use alloc::string::ToString;
    use alloc::vec::Vec;

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
            // Through black_box: an allocation nobody looks at may be
            // optimised away, and assumed to have succeeded.
            assert!(core::hint::black_box(&try_words(usize::MAX)).is_err());
            assert!(core::hint::black_box(&try_words(1 << 58)).is_err());
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
}
