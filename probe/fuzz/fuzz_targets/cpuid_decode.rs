//! Decodes arbitrary CPUID register values for 1 to 8 PUs.  No input may
//! panic or loop forever; a topology that discovery returns must be
//! consistent.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use wloc_core::{Topology, TypeFilter};
use wloc_probe::{CpuidSource, discover};

/// Leaves the decoder reads.
const LEAVES: [u32; 16] = [
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
const VENDORS: [&[u8; 12]; 6] = [
    b"GenuineIntel",
    b"AuthenticAMD",
    b"HygonGenuine",
    b"CentaurHauls",
    b"  Shanghai  ",
    b"GenuineTMx86",
];

#[derive(Debug)]
struct Entry {
    pu: u8,
    leaf: u8,
    subleaf: u8,
    regs: [u32; 4],
}

impl<'a> Arbitrary<'a> for Entry {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Entry {
            pu: u.arbitrary()?,
            leaf: u.int_in_range(0..=LEAVES.len() as u8 - 1)?,
            subleaf: u.int_in_range(0..=7)?,
            regs: u.arbitrary()?,
        })
    }
}

#[derive(Debug)]
struct Machine {
    pus: usize,
    /// `(leaf index, subleaf) -> registers` per PU; PU 0's answers stand in
    /// for the other PUs' missing ones so that PUs look alike.
    table: Vec<Vec<Option<[u32; 4]>>>,
    /// Subleaves past 7 repeat subleaf 7 (as a dump with mask 1 does).
    repeat: bool,
    icaches: bool,
}

impl CpuidSource for Machine {
    fn pu_count(&self) -> usize {
        self.pus
    }
    fn os_index(&self, pu: usize) -> u32 {
        pu as u32
    }
    fn cpuid(&self, pu: usize, leaf: u32, subleaf: u32) -> [u32; 4] {
        let Some(l) = LEAVES.iter().position(|&x| x == leaf) else {
            return [0; 4];
        };
        let sub = if subleaf > 7 {
            if !self.repeat {
                return [0; 4];
            }
            7
        } else {
            subleaf as usize
        };
        let at = l * 8 + sub;
        self.table[pu][at].or(self.table[0][at]).unwrap_or([0; 4])
    }
}

fn build(u: &mut Unstructured) -> arbitrary::Result<Machine> {
    let pus = u.int_in_range(1..=8)?;
    let vendor = VENDORS[u.int_in_range(0..=VENDORS.len() - 1)?];
    let highest: u32 = if u.arbitrary()? {
        u.int_in_range(0..=0x30)?
    } else {
        u.arbitrary()?
    };
    let highest_ext: u32 = 0x8000_0000 | u.int_in_range(0..=0x30)?;
    let repeat = u.arbitrary()?;
    let icaches = u.arbitrary()?;
    let mut table = vec![vec![None; LEAVES.len() * 8]; pus];
    let w = |i: usize| u32::from_le_bytes([vendor[i], vendor[i + 1], vendor[i + 2], vendor[i + 3]]);
    table[0][0] = Some([highest, w(0), w(8), w(4)]);
    table[0][7 * 8] = Some([highest_ext, 0, 0, 0]);
    let entries: Vec<Entry> = u.arbitrary()?;
    for (n, e) in entries.into_iter().enumerate() {
        let pu = e.pu as usize % pus;
        let at = e.leaf as usize * 8 + e.subleaf as usize;
        // Leaf 1 and the topology leaves carry per-PU APIC ids: give each
        // PU its own by default so that the deeper code runs.
        let mut regs = e.regs;
        if n % 2 == 0 && e.leaf == 1 {
            regs[1] = (regs[1] & 0x00ff_ffff) | (pu as u32) << 24;
        }
        table[pu][at] = Some(regs);
    }
    for (pu, t) in table.iter_mut().enumerate() {
        if t[8].is_none() {
            t[8] = Some([0x0005_0654, (pu as u32) << 24 | 8 << 16, 1 << 21, 1 << 28]);
        }
    }
    Ok(Machine {
        pus,
        table,
        repeat,
        icaches,
    })
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(m) = build(&mut u) else {
        return;
    };
    let mut topo = Topology::new();
    if m.icaches {
        topo.set_icache_types_filter(TypeFilter::KeepAll);
    }
    if let Ok(t) = discover(&m, topo) {
        assert_eq!(t.check(), Ok(()));
    }
});
