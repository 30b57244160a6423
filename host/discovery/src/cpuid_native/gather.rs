//! A `puN` file of a `hwloc-gather-cpuid` dump from any CPUID source.

use std::fmt::Write as _;

use wloc_probe::CpuidSource;

/// Most subleaves asked for in one "until invalid" loop: real processors
/// stop far earlier, a dump replay or a broken CPU could go on forever.
const MAX_SUBLEAVES: u32 = 256;

/// The text of one `puN` file of a `hwloc-gather-cpuid` dump for PU `pu`
/// of `src`: the same leaves, subleaves, masks and line format as hwloc's
/// tool (hwloc 2.9 and the leaves later versions added: 0x1d, 0x1e,
/// 0x20, 0x80000022, 0x80000023 and 0x80000026).
pub fn gather_pu(src: &dyn CpuidSource, pu: usize) -> String {
    let mut g = Gather {
        src,
        pu,
        out: String::from("# mask e[abcd]x => e[abcd]x\n"),
    };
    let highest = src.cpuid(pu, 0, 0)[0];
    let highest_ext = src.cpuid(pu, 0x8000_0000, 0)[0];
    let has = |l: u32| highest >= l;
    let has_ext = |l: u32| highest_ext >= l;

    g.dump(1, 0, 0);
    let mut x2apic = false;
    if has(1) {
        x2apic = g.dump(1, 1, 0)[2] & (1 << 21) != 0;
    }
    for l in [2, 3] {
        if has(l) {
            g.dump(1, l, 0);
        }
    }
    if has(4) {
        g.until(4, |r| r[0] & 0x1f == 0);
    }
    for l in [5, 6] {
        if has(l) {
            g.dump(1, l, 0);
        }
    }
    let mut sgx = false;
    if has(7) {
        let r = g.dump(5, 7, 0);
        sgx = r[1] & (1 << 2) != 0;
        g.up_to(7, r[0]);
    }
    for l in [9, 0xa] {
        if has(l) {
            g.dump(1, l, 0);
        }
    }
    if x2apic && has(0xb) {
        g.until(0xb, |r| r[2] & 0xff00 == 0);
    }
    if has(0xd) {
        let r0 = g.dump(5, 0xd, 0);
        let r1 = g.dump(5, 0xd, 1);
        let (lo, hi) = (r0[0] | r1[2], r0[3] | r1[3]);
        for i in 2..32 {
            if lo & (1 << i) != 0 {
                g.dump(5, 0xd, i);
            }
        }
        for i in 0..32 {
            if hi & (1 << i) != 0 {
                g.dump(5, 0xd, i + 32);
            }
        }
    }
    if has(0xf) {
        g.dump(5, 0xf, 0);
        g.dump(5, 0xf, 1);
    }
    if has(0x10) {
        for i in 0..4 {
            g.dump(5, 0x10, i);
        }
    }
    if sgx && has(0x12) {
        g.dump(5, 0x12, 0);
        g.dump(5, 0x12, 1);
        for i in 2..MAX_SUBLEAVES {
            if g.dump(5, 0x12, i)[0] & 0xf == 0 {
                break;
            }
        }
    }
    if has(0x14) {
        g.dump(5, 0x14, 0);
        g.dump(5, 0x14, 1);
    }
    for l in [0x15, 0x16] {
        if has(l) {
            g.dump(1, l, 0);
        }
    }
    if has(0x17) {
        let max = g.dump(5, 0x17, 0)[0];
        if max >= 3 {
            g.up_to(0x17, max);
        }
    }
    if has(0x18) {
        let max = g.dump(5, 0x18, 0)[0];
        g.up_to(0x18, max);
    }
    if has(0x19) {
        g.dump(1, 0x19, 0);
    }
    for l in [0x1a, 0x1c] {
        if has(l) {
            g.dump(5, l, 0);
        }
    }
    if has(0x1d) {
        g.dump(5, 0x1d, 0);
        g.dump(5, 0x1d, 1);
    }
    if has(0x1e) {
        g.dump(5, 0x1e, 0);
    }
    if has(0x1f) {
        g.until(0x1f, |r| r[2] & 0xff00 == 0);
    }
    if has(0x20) {
        let max = g.dump(5, 0x20, 0)[0];
        g.up_to(0x20, max);
    }

    g.dump(1, 0x8000_0000, 0);
    let mut topoext = false;
    if has_ext(0x8000_0001) {
        topoext = g.dump(1, 0x8000_0001, 0)[2] & (1 << 22) != 0;
    }
    for l in [
        0x8000_0002,
        0x8000_0003,
        0x8000_0004,
        0x8000_0005,
        0x8000_0006,
        0x8000_0007,
        0x8000_0008,
        0x8000_000a,
        0x8000_0019,
        0x8000_001a,
        0x8000_001b,
        0x8000_001c,
    ] {
        if has_ext(l) {
            g.dump(1, l, 0);
        }
    }
    if has_ext(0x8000_001d) {
        g.until(0x8000_001d, |r| r[0] & 0x1f == 0);
    }
    if topoext && has_ext(0x8000_001e) {
        g.dump(1, 0x8000_001e, 0);
    }
    if has_ext(0x8000_001f) {
        g.dump(1, 0x8000_001f, 0);
    }
    if has_ext(0x8000_0020) {
        g.dump(5, 0x8000_0020, 0);
        g.dump(5, 0x8000_0020, 1);
    }
    for l in [0x8000_0021, 0x8000_0022, 0x8000_0023] {
        if has_ext(l) {
            g.dump(1, l, 0);
        }
    }
    if has_ext(0x8000_0026) {
        g.until(0x8000_0026, |r| r[2] & 0xff00 == 0);
    }
    g.out
}

struct Gather<'a> {
    src: &'a dyn CpuidSource,
    pu: usize,
    out: String,
}

impl Gather<'_> {
    /// One line: the mask (1: eax is an input, 5: eax and ecx), the four
    /// input registers (unused ones zero), `=>` and the four outputs.
    fn dump(&mut self, mask: u32, leaf: u32, sub: u32) -> [u32; 4] {
        let sub = if mask & 4 != 0 { sub } else { 0 };
        let r = self.src.cpuid(self.pu, leaf, sub);
        let _ = writeln!(
            self.out,
            "{mask:x} {leaf:x} 0 {sub:x} 0 => {:x} {:x} {:x} {:x}",
            r[0], r[1], r[2], r[3]
        );
        r
    }

    /// Subleaves from 0 until one for which `stop` holds (written too).
    fn until(&mut self, leaf: u32, stop: fn(&[u32; 4]) -> bool) {
        for i in 0..MAX_SUBLEAVES {
            if stop(&self.dump(5, leaf, i)) {
                break;
            }
        }
    }

    /// Subleaves 1 to `max`.
    fn up_to(&mut self, leaf: u32, max: u32) {
        for i in 1..=max.min(MAX_SUBLEAVES) {
            self.dump(5, leaf, i);
        }
    }
}
