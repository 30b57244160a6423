//! Arbitrary register values and arbitrary dump bytes never panic, and a
//! topology that discovery accepts is consistent.

use proptest::prelude::*;
use wloc_core::{Topology, TypeFilter};
use wloc_probe::{CpuidSource, DumpSource, discover};

/// Leaves discovery reads; subleaves 0 to 3 of each get random registers.
const LEAVES: &[u32] = &[
    0,
    1,
    4,
    7,
    0xb,
    0x1a,
    0x1f,
    0x8000_0000,
    0x8000_0001,
    0x8000_0002,
    0x8000_0005,
    0x8000_0006,
    0x8000_0008,
    0x8000_001d,
    0x8000_001e,
    0x8000_0026,
];
const VENDORS: &[&[u8; 12]] = &[
    b"GenuineIntel",
    b"AuthenticAMD",
    b"HygonGenuine",
    b"CentaurHauls",
    b"  Shanghai  ",
    b"VIA VIA VIA ",
];

#[derive(Debug, Clone)]
struct Random {
    /// Per PU: `(leaf index, subleaf) -> registers`.
    regs: Vec<Vec<[u32; 4]>>,
}

impl CpuidSource for Random {
    fn pu_count(&self) -> usize {
        self.regs.len()
    }
    fn os_index(&self, pu: usize) -> u32 {
        pu as u32
    }
    fn cpuid(&self, pu: usize, leaf: u32, subleaf: u32) -> [u32; 4] {
        match LEAVES.iter().position(|&l| l == leaf) {
            Some(i) if subleaf < 4 => self.regs[pu][i * 4 + subleaf as usize],
            // Beyond the table, repeat subleaf 3 so that loops must stop by themselves.
            Some(i) => self.regs[pu][i * 4 + 3],
            None => [subleaf, leaf, 0, 0],
        }
    }
}

fn source() -> impl Strategy<Value = Random> {
    let regs = prop::collection::vec(any::<[u32; 4]>(), LEAVES.len() * 4);
    (
        prop::collection::vec(regs, 1..=8),
        0..VENDORS.len(),
        any::<bool>(),
        0u32..0x30,
        0x8000_0000u32..0x8000_0030,
    )
        .prop_map(|(mut regs, v, same_leaf0, highest, highest_ext)| {
            let name = VENDORS[v];
            let w = |i: usize| u32::from_le_bytes([name[i], name[i + 1], name[i + 2], name[i + 3]]);
            for (pu, r) in regs.iter_mut().enumerate() {
                if same_leaf0 || pu == 0 {
                    r[0] = [highest, w(0), w(8), w(4)];
                    r[7 * 4] = [highest_ext, 0, 0, 0];
                }
            }
            Random { regs }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_registers_never_panic(src in source(), icaches in any::<bool>()) {
        let mut topo = Topology::new();
        if icaches {
            topo.set_icache_types_filter(TypeFilter::KeepAll);
        }
        if let Ok(t) = discover(&src, topo) {
            prop_assert_eq!(t.check(), Ok(()));
        }
    }

    #[test]
    fn random_dump_bytes_never_panic(
        info in prop::collection::vec(any::<u8>(), 0..40),
        pus in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..200), 0..4),
        lines in prop::collection::vec("[0-9a-f]{1,3}( [0-9a-f]{1,9}){4} => ([0-9a-fx]{1,9} ){3}[0-9a-f]{1,8}", 0..20),
    ) {
        let mut files: Vec<(String, Vec<u8>)> = vec![("hwloc-cpuid-info".into(), info)];
        for (i, p) in pus.into_iter().enumerate() {
            files.push((format!("pu{i}"), p));
        }
        let _ = DumpSource::from_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())));
        let text = lines.join("\n");
        let d = DumpSource::from_files([("hwloc-cpuid-info", &b"Architecture: x86\n"[..]), ("pu0", text.as_bytes())]);
        if let Ok(d) = d {
            let _ = discover(&d, Topology::new());
        }
    }
}
