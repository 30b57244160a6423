//! Indexing and iteration: weight, first/last/next set and unset
//! indexes, singlify, and the iterators over indexes and runs.

use core::iter::FusedIterator;

use super::*;

impl Bitmap {
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
    pub(super) fn find_from(&self, start: u64, value: bool) -> Option<u64> {
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
    pub(super) fn find_last(&self, value: bool) -> Option<u64> {
        if self.infinite == value {
            return None;
        }
        let flip = if value { 0 } else { FULL };
        self.words
            .iter()
            .enumerate()
            .rev()
            .find(|&(_, &w)| w ^ flip != 0)
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
        self.find_after(after, true)
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
        self.find_after(after, false)
    }

    /// Lowest index strictly above `after` (from 0 when `None`) whose bit
    /// is `value`.
    fn find_after(&self, after: Option<u32>, value: bool) -> Option<u32> {
        let start = after.map_or(0, |a| u64::from(a) + 1);
        to_index(self.find_from(start, value))
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
}

impl<'a> IntoIterator for &'a Bitmap {
    type Item = u32;
    type IntoIter = Iter<'a>;

    #[inline]
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

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

#[cfg(test)]
mod tests {
    extern crate std;

    use super::super::test_util::*;
    use super::*;
    use alloc::vec::Vec;

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
}
