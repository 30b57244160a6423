//! Random damage to a valid discovery record: the host answers every
//! variant with a topology or a clear error, never with a panic or an
//! internal error, and what it accepts passes the consistency check.

mod common;

use common::*;
use wloc_runtime::bindings::types::{Bitmap, Discovery, ObjectAttr, ObjectType};
use wloc_runtime::{ErrorKind, Limits, build_topology};

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const TYPES: [ObjectType; 20] = [
    ObjectType::Machine,
    ObjectType::Package,
    ObjectType::Die,
    ObjectType::Core,
    ObjectType::Pu,
    ObjectType::L1Cache,
    ObjectType::L2Cache,
    ObjectType::L3Cache,
    ObjectType::L4Cache,
    ObjectType::L5Cache,
    ObjectType::L1iCache,
    ObjectType::L2iCache,
    ObjectType::L3iCache,
    ObjectType::Group,
    ObjectType::NumaNode,
    ObjectType::MemCache,
    ObjectType::Bridge,
    ObjectType::PciDevice,
    ObjectType::OsDevice,
    ObjectType::Misc,
];

fn random_bitmap(r: &mut Rng) -> Bitmap {
    let n = r.below(4);
    Bitmap {
        words: (0..n)
            .map(|_| {
                if r.below(2) == 0 {
                    r.next()
                } else {
                    1 << r.below(64)
                }
            })
            .collect(),
        infinite: r.below(8) == 0,
    }
}

fn mutate(d: &mut Discovery, r: &mut Rng) {
    let n = d.objects.len();
    let i = r.below(n);
    let j = r.below(n);
    match r.below(14) {
        0 => d.objects[i].parent = Some(d.objects[j].id),
        1 => d.objects[i].parent = None,
        2 => d.objects[i].type_ = TYPES[r.below(TYPES.len())],
        3 => d.objects[i].cpuset = Some(random_bitmap(r)),
        4 => d.objects[i].cpuset = None,
        5 => d.objects[i].nodeset = Some(random_bitmap(r)),
        6 => d.objects[i].complete_cpuset = Some(random_bitmap(r)),
        7 => d.objects[i].os_index = Some(r.below(200) as u32),
        8 => d.objects[i].os_index = None,
        9 => d.objects[i].id = r.below(2 * n) as u32,
        10 => d.objects.swap(i, j),
        11 => {
            d.objects[i].attr = d.objects[j].attr.clone();
        }
        12 => d.objects[i].attr = ObjectAttr::None,
        _ => {
            let o = d.objects[i].clone();
            d.objects.push(o);
        }
    }
}

#[test]
fn damaged_records_never_panic_the_host() {
    let desc =
        "pack:2 [numa(memory=1GB memorysidecachesize=64MB)] l3:1(size=8MB) core:2 l1i:1 pu:2";
    let base = runtime()
        .run(synthetic(), &opts(&[("description", desc)]))
        .unwrap()
        .discovery;
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut ok, mut refused) = (0, 0);
    for round in 0..3000 {
        let mut d = base.clone();
        for _ in 0..1 + r.below(4) {
            mutate(&mut d, &mut r);
        }
        match build_topology("mutant", "00", &d, &Limits::default(), lstopo_topology()) {
            Ok(t) => {
                t.check().unwrap();
                ok += 1;
            }
            Err(e) => {
                assert!(
                    !matches!(&e.kind, ErrorKind::Topology(m) if m.contains("internal error")),
                    "round {round}: {e}"
                );
                refused += 1;
            }
        }
    }
    eprintln!("{ok} accepted, {refused} refused");
    assert!(ok > 0 && refused > 0);
}
