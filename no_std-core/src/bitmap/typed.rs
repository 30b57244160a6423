//! Bitmaps tagged with the kind of index they hold: [`CpuSet`] and
//! [`NodeSet`].

use alloc::string::String;
use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::marker::PhantomData;
use core::str::FromStr;

use super::algebra::impl_set_ops;
use super::*;

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

/// Defines methods of [`Set`] that forward to the [`Bitmap`] method of
/// the same name, each with its own documentation and attributes (and
/// `#[inline]`), by the form of its signature:
///
/// - `get fn f(&self, args) -> R;` returns `self.bits.f(args)`;
/// - `edit fn f(&mut self, args);` calls `self.bits.f(args)`;
/// - `with fn f(&self, other: &Self) -> R;` returns `self.bits.f(&other.bits)`;
/// - `combine fn f(&self, other: &Self) -> Self;` wraps `self.bits.f(&other.bits)`;
/// - `assign fn f(&mut self, other: &Self);` calls `self.bits.f(&other.bits)`;
/// - `make fn f(args) -> Self;` wraps `Bitmap::f(args)`;
/// - `parse fn f(s: &str) -> Result<Self, BitmapParseError>;` wraps `Bitmap::f(s)`.
macro_rules! delegate {
    () => {};
    ($(#[$m:meta])* get fn $f:ident(&self $(, $a:ident: $t:ty)*) -> $r:ty; $($rest:tt)*) => {
        $(#[$m])*
        #[inline]
        pub fn $f(&self $(, $a: $t)*) -> $r {
            self.bits.$f($($a),*)
        }
        delegate!($($rest)*);
    };
    ($(#[$m:meta])* edit fn $f:ident(&mut self $(, $a:ident: $t:ty)*); $($rest:tt)*) => {
        $(#[$m])*
        #[inline]
        pub fn $f(&mut self $(, $a: $t)*) {
            self.bits.$f($($a),*);
        }
        delegate!($($rest)*);
    };
    ($(#[$m:meta])* with fn $f:ident(&self, $o:ident: &Self) -> $r:ty; $($rest:tt)*) => {
        $(#[$m])*
        #[inline]
        pub fn $f(&self, $o: &Self) -> $r {
            self.bits.$f(&$o.bits)
        }
        delegate!($($rest)*);
    };
    ($(#[$m:meta])* combine fn $f:ident(&self, $o:ident: &Self) -> Self; $($rest:tt)*) => {
        $(#[$m])*
        #[inline]
        pub fn $f(&self, $o: &Self) -> Self {
            Set::wrap(self.bits.$f(&$o.bits))
        }
        delegate!($($rest)*);
    };
    ($(#[$m:meta])* assign fn $f:ident(&mut self, $o:ident: &Self); $($rest:tt)*) => {
        $(#[$m])*
        #[inline]
        pub fn $f(&mut self, $o: &Self) {
            self.bits.$f(&$o.bits);
        }
        delegate!($($rest)*);
    };
    ($(#[$m:meta])* make fn $f:ident($($a:ident: $t:ty),*) -> Self; $($rest:tt)*) => {
        $(#[$m])*
        #[inline]
        pub fn $f($($a: $t),*) -> Self {
            Set::wrap(Bitmap::$f($($a),*))
        }
        delegate!($($rest)*);
    };
    ($(#[$m:meta])* parse fn $f:ident(s: &str) -> Result<Self, BitmapParseError>; $($rest:tt)*) => {
        $(#[$m])*
        #[inline]
        pub fn $f(s: &str) -> Result<Self, BitmapParseError> {
            Bitmap::$f(s).map(Set::wrap)
        }
        delegate!($($rest)*);
    };
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

    /// Complement.
    #[must_use]
    #[inline]
    pub fn not(&self) -> Self {
        Set::wrap(Bitmap::not(&self.bits))
    }

    delegate! {
        /// The set containing only `i`.
        make fn from_index(i: u32) -> Self;

        /// Every index except `i`.
        make fn all_but(i: u32) -> Self;

        /// `first..=last`, or `first..` when `last` is `None`.
        make fn from_range(first: u32, last: Option<u32>) -> Self;

        /// A finite set from 64-bit words, least significant first.
        make fn from_words(words: &[u64]) -> Self;

        /// A finite set from a single 64-bit mask.
        make fn from_u64(mask: u64) -> Self;

        /// The stored 64-bit words; see [`Bitmap::words`].
        get fn words(&self) -> &[u64];

        /// The `i`-th 64-bit word, including the infinite part.
        get fn word(&self, i: usize) -> u64;

        /// Number of 64-bit words holding every set index, `None` if infinite.
        get fn nr_words(&self) -> Option<usize>;

        /// Whether no index is set.
        get fn is_empty(&self) -> bool;

        /// Whether every index is set.
        get fn is_full(&self) -> bool;

        /// Whether all indexes above some point are set.
        get fn is_infinite(&self) -> bool;

        /// Whether index `i` is set.
        get fn is_set(&self, i: u32) -> bool;

        /// Adds index `i`.
        edit fn set(&mut self, i: u32);

        /// Removes index `i`.
        edit fn unset(&mut self, i: u32);

        /// Adds `first..=last`, or `first..` when `last` is `None`.
        edit fn set_range(&mut self, first: u32, last: Option<u32>);

        /// Removes `first..=last`, or `first..` when `last` is `None`.
        edit fn unset_range(&mut self, first: u32, last: Option<u32>);

        /// Makes the set empty.
        edit fn clear(&mut self);

        /// Makes the set full.
        edit fn fill(&mut self);

        /// Keeps only the lowest set index.
        edit fn singlify(&mut self);

        /// Number of set indexes, `None` if infinite.
        get fn weight(&self) -> Option<u32>;

        /// Lowest set index, `None` if empty.
        get fn first(&self) -> Option<u32>;

        /// Highest set index, `None` if empty or infinite.
        get fn last(&self) -> Option<u32>;

        /// Lowest set index above `after` (or the lowest if `None`).
        get fn next_set(&self, after: Option<u32>) -> Option<u32>;

        /// Lowest unset index, `None` if full.
        get fn first_unset(&self) -> Option<u32>;

        /// Lowest unset index above `after` (or the lowest if `None`).
        get fn next_unset(&self, after: Option<u32>) -> Option<u32>;

        /// Highest unset index, `None` if finite or full.
        get fn last_unset(&self) -> Option<u32>;

        /// Iterates over the set indexes (up to `u32::MAX` if infinite).
        get fn iter(&self) -> Iter<'_>;

        /// Iterates over the runs of set indexes.
        get fn ranges(&self) -> Ranges<'_>;

        /// Intersection.
        #[must_use]
        combine fn and(&self, other: &Self) -> Self;

        /// Union.
        #[must_use]
        combine fn or(&self, other: &Self) -> Self;

        /// Symmetric difference.
        #[must_use]
        combine fn xor(&self, other: &Self) -> Self;

        /// Difference: indexes of `self` not in `other`.
        #[must_use]
        combine fn and_not(&self, other: &Self) -> Self;

        /// In-place intersection.
        assign fn and_assign(&mut self, other: &Self);

        /// In-place union.
        assign fn or_assign(&mut self, other: &Self);

        /// In-place symmetric difference.
        assign fn xor_assign(&mut self, other: &Self);

        /// In-place difference.
        assign fn and_not_assign(&mut self, other: &Self);

        /// In-place complement.
        edit fn invert(&mut self);

        /// Whether the sets share an index.
        with fn intersects(&self, other: &Self) -> bool;

        /// Whether `self ⊇ sub`.
        with fn includes(&self, sub: &Self) -> bool;

        /// Whether `self ⊆ sup`.
        with fn is_included_in(&self, sup: &Self) -> bool;

        /// Compares by lowest index; see [`Bitmap::compare_first`].
        with fn compare_first(&self, other: &Self) -> Ordering;

        /// Compares from the highest index; see [`Bitmap::compare_last`].
        with fn compare_last(&self, other: &Self) -> Ordering;

        /// Parses the hwloc form; see [`Bitmap::parse`].
        parse fn parse(s: &str) -> Result<Self, BitmapParseError>;

        /// Parses the list form; see [`Bitmap::parse_list`].
        parse fn parse_list(s: &str) -> Result<Self, BitmapParseError>;

        /// Parses the taskset form; see [`Bitmap::parse_taskset`].
        parse fn parse_taskset(s: &str) -> Result<Self, BitmapParseError>;

        /// The hwloc form (same as `Display`).
        get fn to_hwloc_string(&self) -> String;

        /// The list form.
        get fn to_list_string(&self) -> String;

        /// The taskset form.
        get fn to_taskset_string(&self) -> String;
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

impl_set_ops!([K: SetKind] Set<K>);

#[cfg(test)]
mod tests {
    extern crate std;

    use super::super::test_util::*;
    use super::*;
    use alloc::string::ToString;

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
}
