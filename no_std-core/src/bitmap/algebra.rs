//! Set algebra (and, or, xor, and-not, not, with fallible twins),
//! inclusion and intersection tests, hwloc's orderings, and the
//! operators (`&`, `|`, `^`, `-`, `!`) for [`Bitmap`] and the typed sets.

use core::cmp::Ordering;

use super::*;

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

impl Bitmap {
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

/// Implements `&`, `|`, `^`, `-` (difference), `!` and the assigning forms
/// for a type with inherent `and`/`or`/`xor`/`and_not`/`not` and
/// `*_assign` methods, for both values and references.
macro_rules! impl_set_ops {
    ([$($g:tt)*] $T:ty) => {
        impl_set_ops!(@bin [$($g)*] $T, BitAnd, bitand, BitAndAssign, bitand_assign, and, and_assign);
        impl_set_ops!(@bin [$($g)*] $T, BitOr, bitor, BitOrAssign, bitor_assign, or, or_assign);
        impl_set_ops!(@bin [$($g)*] $T, BitXor, bitxor, BitXorAssign, bitxor_assign, xor, xor_assign);
        impl_set_ops!(@bin [$($g)*] $T, Sub, sub, SubAssign, sub_assign, and_not, and_not_assign);

        impl<$($g)*> core::ops::Not for &$T {
            type Output = $T;
            #[inline]
            fn not(self) -> $T {
                <$T>::not(self)
            }
        }

        impl<$($g)*> core::ops::Not for $T {
            type Output = $T;
            #[inline]
            fn not(mut self) -> $T {
                self.invert();
                self
            }
        }
    };
    (@bin [$($g:tt)*] $T:ty, $Tr:ident, $m:ident, $ATr:ident, $am:ident, $op:ident, $aop:ident) => {
        impl<$($g)*> core::ops::$Tr<&$T> for &$T {
            type Output = $T;
            #[inline]
            fn $m(self, rhs: &$T) -> $T {
                <$T>::$op(self, rhs)
            }
        }

        impl<$($g)*> core::ops::$Tr<$T> for &$T {
            type Output = $T;
            #[inline]
            fn $m(self, rhs: $T) -> $T {
                <$T>::$op(self, &rhs)
            }
        }

        impl<$($g)*> core::ops::$Tr<&$T> for $T {
            type Output = $T;
            #[inline]
            fn $m(mut self, rhs: &$T) -> $T {
                self.$aop(rhs);
                self
            }
        }

        impl<$($g)*> core::ops::$Tr<$T> for $T {
            type Output = $T;
            #[inline]
            fn $m(mut self, rhs: $T) -> $T {
                self.$aop(&rhs);
                self
            }
        }

        impl<$($g)*> core::ops::$ATr<&$T> for $T {
            #[inline]
            fn $am(&mut self, rhs: &$T) {
                self.$aop(rhs);
            }
        }

        impl<$($g)*> core::ops::$ATr<$T> for $T {
            #[inline]
            fn $am(&mut self, rhs: $T) {
                self.$aop(&rhs);
            }
        }
    };
}

pub(super) use impl_set_ops;

impl_set_ops!([] Bitmap);

#[cfg(test)]
mod tests {
    extern crate std;

    use super::super::test_util::*;
    use super::*;
    use alloc::string::String;
    use alloc::vec::Vec;

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
}
