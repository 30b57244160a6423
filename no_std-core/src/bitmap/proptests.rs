//! Property tests of the whole module against a model.

extern crate std;

use super::test_util::*;
use super::*;
use alloc::string::ToString;
use alloc::vec::Vec;
use core::cmp::Ordering;
use proptest::prelude::*;

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
    (proptest::collection::vec(arb_word(), 0..6), any::<bool>()).prop_map(|(words, infinite)| {
        let mut b = Bitmap {
            words: words.into(),
            infinite,
        };
        b.normalize();
        b
    })
}

#[derive(Clone, Debug)]
enum Op {
    Set(u32),
    Unset(u32),
    SetRange(u32, Option<u32>),
    UnsetRange(u32, Option<u32>),
}

/// An in-place set operation.
type InPlace = fn(&mut Bitmap, &Bitmap);
/// The pure twin of an [`InPlace`] operation.
type Pure = fn(&Bitmap, &Bitmap) -> Bitmap;

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
        let forms: [(InPlace, Pure); 4] = [
            (Bitmap::and_assign, Bitmap::and),
            (Bitmap::or_assign, Bitmap::or),
            (Bitmap::xor_assign, Bitmap::xor),
            (Bitmap::and_not_assign, Bitmap::and_not),
        ];
        for (in_place, pure) in forms {
            let mut x = a.clone();
            in_place(&mut x, &b);
            prop_assert_eq!(x, pure(&a, &b));
        }
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
