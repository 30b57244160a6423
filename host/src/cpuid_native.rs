//! CPUID of this machine: running code on a chosen PU (Linux), writing
//! CPUID dumps in the format of hwloc's `hwloc-gather-cpuid`, and
//! answering the x86 discovery component from a dump or from this
//! machine, without the operating system's topology files.
//!
//! - [`LinuxPuRunner`] implements the probe's
//!   [`PuRunner`](wloc_probe::PuRunner) by pinning the calling thread
//!   through `wloc-bind`, so that `wloc_probe::NativeSource::with_runner`
//!   executes `cpuid` on every PU.
//! - [`gather_pu`] asks any [`CpuidSource`] for the leaves
//!   `hwloc-gather-cpuid` records and formats them as it does.
//! - [`DumpProvider`] answers the x86 discovery component's `cpuid`
//!   queries from a dump, and `gather_this_machine` makes such a dump of
//!   this machine in memory.

use std::fmt::Write as _;

#[cfg(target_os = "linux")]
pub use linux::LinuxPuRunner;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub use linux::LiveProvider;
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

/// The contents of the `hwloc-cpuid-info` file of an x86 dump.
pub const CPUID_INFO: &str = "Architecture: x86\n";

/// Where Linux exposes the firmware's ACPI tables (readable by root only).
pub const SYSFS_ACPI_TABLES: &str = "/sys/firmware/acpi/tables";

/// A recorded or gathered CPUID dump, answering the x86 component's
/// `cpuid` queries.  `os_indexes[pu]` is the OS index of the dump's PU
/// `pu` (a dump numbers PUs from 0; a gathered machine may not).
pub struct DumpProvider {
    dump: wloc_probe::DumpSource,
    os_indexes: Vec<u32>,
}

impl DumpProvider {
    /// Answers from `dump`, whose PU `i` has OS index `os_indexes[i]`
    /// (the dump's own numbering when `os_indexes` is `None`).
    pub fn new(dump: wloc_probe::DumpSource, os_indexes: Option<Vec<u32>>) -> Self {
        let os_indexes = os_indexes
            .unwrap_or_else(|| (0..dump.pu_count()).map(|pu| dump.os_index(pu)).collect());
        DumpProvider { dump, os_indexes }
    }
}

impl wloc_runtime::CpuidProvider for DumpProvider {
    fn pu_count(&self) -> u32 {
        self.os_indexes.len().min(self.dump.pu_count()) as u32
    }
    fn os_index(&self, pu: u32) -> u32 {
        self.os_indexes.get(pu as usize).copied().unwrap_or(0)
    }
    fn query(&self, pu: u32, leaf: u32, subleaf: u32) -> [u32; 4] {
        self.dump.cpuid(pu as usize, leaf, subleaf)
    }
}

/// Runs `each` with the `puN` dump text of every PU this process may
/// use (its position from 0, its OS index, the text), pinning the calling
/// thread on each in turn and giving it its affinity back at the end, as
/// `hwloc-gather-cpuid` does.  Returns the OS indexes of the PUs.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub fn gather_every_pu(
    mut each: impl FnMut(usize, u32, String) -> Result<(), String>,
) -> Result<Vec<u32>, String> {
    let runner =
        LinuxPuRunner::new().map_err(|e| format!("cannot read this thread's CPU affinity: {e}"))?;
    let pus = runner.pus().to_vec();
    if pus.is_empty() {
        return Err("no online PU in this process's CPU affinity".into());
    }
    let src = wloc_probe::NativeSource::with_runner(runner);
    for (pu, &os) in pus.iter().enumerate() {
        if !src.runner().pin(pu) {
            return Err(format!("cannot bind to PU P#{os}"));
        }
        each(pu, os, gather_pu(&src, pu))?;
    }
    src.runner()
        .restore()
        .map_err(|e| format!("cannot restore this thread's CPU affinity: {e}"))?;
    Ok(pus)
}

/// The CPUID dump of the PU whose OS index is `os` (the text of its
/// `puN` file), gathered on that PU; `None` when it is not an online PU
/// of this process's affinity mask.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub fn gather_one_pu(os: u32) -> Result<Option<String>, String> {
    let runner =
        LinuxPuRunner::new().map_err(|e| format!("cannot read this thread's CPU affinity: {e}"))?;
    let Some(pu) = runner.pus().iter().position(|&p| p == os) else {
        return Ok(None);
    };
    let src = wloc_probe::NativeSource::with_runner(runner);
    if !src.runner().pin(pu) {
        return Err(format!("cannot bind to PU P#{os}"));
    }
    let text = gather_pu(&src, pu);
    src.runner()
        .restore()
        .map_err(|e| format!("cannot restore this thread's CPU affinity: {e}"))?;
    Ok(Some(text))
}

/// Gathers the CPUID leaves of every PU this process may use (see
/// [`gather_every_pu`]) into memory.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub fn gather_this_machine() -> Result<DumpProvider, String> {
    let mut files = Vec::new();
    let pus = gather_every_pu(|pu, _, text| {
        files.push((format!("pu{pu}"), text.into_bytes()));
        Ok(())
    })?;
    files.push((
        wloc_probe::CPUID_INFO_FILE.to_string(),
        CPUID_INFO.as_bytes().to_vec(),
    ));
    let dump = wloc_probe::DumpSource::from_files(files).map_err(|e| e.to_string())?;
    Ok(DumpProvider::new(dump, Some(pus)))
}

#[cfg(target_os = "linux")]
mod linux {
    use std::cell::Cell;
    use std::io;
    use std::marker::PhantomData;

    use wloc_bind::{set_thread_affinity, thread_affinity};

    use wloc_probe::PuRunner;

    use wloc_core::CpuSet;

    /// Largest CPU list accepted, in PUs.
    const MAX_MASK_BITS: usize = 1 << 22;

    /// Pins the calling thread on `cpu` and checks that it runs there.
    fn move_to(cpu: u32) -> bool {
        wloc_bind::pin_thread_to_pu(cpu).unwrap_or(false)
    }

    /// Parses a kernel CPU list such as `0-3,8,10-11`.
    pub(crate) fn parse_cpu_list(s: &str) -> Option<Vec<u32>> {
        let mut v = Vec::new();
        for part in s.trim().split(',').filter(|p| !p.is_empty()) {
            let (a, b) = match part.split_once('-') {
                Some((a, b)) => (a.parse::<u32>().ok()?, b.parse::<u32>().ok()?),
                None => {
                    let a = part.parse::<u32>().ok()?;
                    (a, a)
                }
            };
            if b < a || b - a > MAX_MASK_BITS as u32 {
                return None;
            }
            v.extend(a..=b);
        }
        Some(v)
    }

    /// CPUID of this machine, answered on demand for the PUs a component
    /// asks about: the asking thread is pinned on each PU in turn (once
    /// per PU in a row) and answers are kept.  [`restore`](Self::restore),
    /// called by the thread that asked, gives it its affinity back.
    ///
    /// Components that ask a few leaves of a few PUs (the Linux
    /// component's cache inclusiveness) get them without the cost of a
    /// whole-machine dump.
    #[cfg(target_arch = "x86_64")]
    pub struct LiveProvider {
        pus: Vec<u32>,
        state: std::sync::Mutex<LiveState>,
    }

    #[cfg(target_arch = "x86_64")]
    #[derive(Default)]
    struct LiveState {
        /// The pinned thread, its original affinity and the PU it is on.
        pinned: Option<(std::thread::ThreadId, CpuSet, usize)>,
        answers: std::collections::HashMap<(u32, u32, u32), [u32; 4]>,
    }

    #[cfg(target_arch = "x86_64")]
    impl LiveProvider {
        /// A provider over the online PUs the calling thread may use.
        pub fn new() -> io::Result<Self> {
            Ok(LiveProvider {
                pus: LinuxPuRunner::new()?.pus().to_vec(),
                state: std::sync::Mutex::new(LiveState::default()),
            })
        }

        /// Gives the pinned thread its original affinity back; a no-op
        /// when nothing is pinned or another thread asks.
        pub fn restore(&self) -> io::Result<()> {
            let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            match st.pinned.take() {
                Some((t, original, _)) if t == std::thread::current().id() => {
                    set_thread_affinity(&original)
                }
                other => {
                    st.pinned = other;
                    Ok(())
                }
            }
        }

        /// Pins the calling thread on PU position `pu`; false if that failed.
        fn pin(&self, st: &mut LiveState, pu: usize) -> bool {
            let me = std::thread::current().id();
            if matches!(&st.pinned, Some((t, _, p)) if *t == me && *p == pu) {
                return true;
            }
            let original = match st.pinned.take() {
                Some((t, original, _)) if t == me => original,
                _ => match thread_affinity() {
                    Ok(m) => m,
                    Err(_) => return false,
                },
            };
            let Some(&cpu) = self.pus.get(pu) else {
                let _ = set_thread_affinity(&original);
                return false;
            };
            let here = move_to(cpu);
            if here {
                st.pinned = Some((me, original, pu));
            } else {
                let _ = set_thread_affinity(&original);
            }
            here
        }
    }

    #[cfg(target_arch = "x86_64")]
    impl Drop for LiveProvider {
        fn drop(&mut self) {
            let _ = self.restore();
        }
    }

    #[cfg(target_arch = "x86_64")]
    impl wloc_runtime::CpuidProvider for LiveProvider {
        fn pu_count(&self) -> u32 {
            self.pus.len() as u32
        }
        fn os_index(&self, pu: u32) -> u32 {
            self.pus.get(pu as usize).copied().unwrap_or(0)
        }
        fn query(&self, pu: u32, leaf: u32, subleaf: u32) -> [u32; 4] {
            let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(&r) = st.answers.get(&(pu, leaf, subleaf)) {
                return r;
            }
            if !self.pin(&mut st, pu as usize) {
                return [0; 4];
            }
            let r = wloc_probe::CpuidSource::cpuid(
                &wloc_probe::NativeSource::current(),
                0,
                leaf,
                subleaf,
            );
            st.answers.insert((pu, leaf, subleaf), r);
            r
        }
    }

    /// Runs code on chosen PUs of this Linux machine by pinning the
    /// calling thread.
    ///
    /// The PUs are those of the thread's affinity mask when the runner is
    /// created that are also online, in increasing OS index.  To pin once
    /// per PU rather than once per call, the thread stays on the last PU
    /// used; its original affinity comes back with
    /// [`restore`](Self::restore) or when the runner is dropped.  The
    /// runner belongs to the thread that created it (it is not `Send`).
    pub struct LinuxPuRunner {
        pus: Vec<u32>,
        original: CpuSet,
        pinned: Cell<Option<usize>>,
        _thread_bound: PhantomData<*const ()>,
    }

    impl LinuxPuRunner {
        /// A runner over the PUs the calling thread may use.
        pub fn new() -> io::Result<Self> {
            let original = thread_affinity()?;
            let online = std::fs::read_to_string("/sys/devices/system/cpu/online")
                .ok()
                .and_then(|s| parse_cpu_list(&s));
            let mut pus: Vec<u32> = original.iter().collect();
            if let Some(online) = online {
                pus.retain(|p| online.binary_search(p).is_ok());
            }
            Ok(LinuxPuRunner {
                pus,
                original,
                pinned: Cell::new(None),
                _thread_bound: PhantomData,
            })
        }

        /// OS indexes of the PUs, increasing.
        pub fn pus(&self) -> &[u32] {
            &self.pus
        }

        /// Moves the calling thread to PU `pu` (a position in
        /// [`pus`](Self::pus)); false if that failed.
        pub fn pin(&self, pu: usize) -> bool {
            if self.pinned.get() == Some(pu) {
                return true;
            }
            let Some(&cpu) = self.pus.get(pu) else {
                return false;
            };
            let ok = move_to(cpu);
            self.pinned.set(ok.then_some(pu));
            ok
        }

        /// Gives the calling thread its original affinity back.
        pub fn restore(&self) -> io::Result<()> {
            if self.pinned.take().is_some() {
                set_thread_affinity(&self.original)?;
            }
            Ok(())
        }
    }

    impl Drop for LinuxPuRunner {
        fn drop(&mut self) {
            let _ = self.restore();
        }
    }

    impl PuRunner for LinuxPuRunner {
        fn pu_count(&self) -> usize {
            self.pus.len()
        }
        fn os_index(&self, pu: usize) -> u32 {
            self.pus.get(pu).copied().unwrap_or(u32::MAX)
        }
        fn run_on(&self, pu: usize, f: &mut dyn FnMut()) {
            if self.pin(pu) {
                f();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wloc_core::Topology;
    use wloc_probe::DumpSource;

    fn replay(pu0: &str) -> DumpSource {
        DumpSource::from_files([
            ("hwloc-cpuid-info", CPUID_INFO.as_bytes()),
            ("pu0", pu0.as_bytes()),
        ])
        .unwrap()
    }

    /// A dump written by hwloc 2.9's hwloc-gather-cpuid, replayed, is
    /// written back identically (an AMD EPYC guest: TOPOEXT, leaf 0xb,
    /// leaves up to 0x1c and 0x80000021).
    #[test]
    fn replays_hwloc_dump_identically() {
        let orig = "\
# mask e[abcd]x => e[abcd]x
1 0 0 0 0 => 1c 68747541 444d4163 69746e65
1 1 0 0 0 => a10f11 20800 fffa3203 178bfbff
1 2 0 0 0 => 0 0 0 0
1 3 0 0 0 => 0 0 0 0
5 4 0 0 0 => 0 0 0 0
1 5 0 0 0 => 0 0 0 0
1 6 0 0 0 => 4 0 0 0
5 7 0 0 0 => 1 f1bf07ab 405fc6 10
5 7 0 1 0 => 20 0 0 0
1 9 0 0 0 => 0 0 0 0
1 a 0 0 0 => 0 0 0 0
5 b 0 0 0 => 0 1 100 0
5 b 0 1 0 => 5 2 201 0
5 b 0 2 0 => 0 0 2 0
5 d 0 0 0 => e7 980 980 0
5 d 0 1 0 => f 9a8 1800 0
5 d 0 2 0 => 100 240 0 0
5 d 0 5 0 => 40 340 0 0
5 d 0 6 0 => 200 380 0 0
5 d 0 7 0 => 400 580 0 0
5 d 0 b 0 => 10 0 1 0
5 d 0 c 0 => 18 0 1 0
5 f 0 0 0 => 0 0 0 0
5 f 0 1 0 => 0 0 0 0
5 10 0 0 0 => 0 0 0 0
5 10 0 1 0 => 0 0 0 0
5 10 0 2 0 => 0 0 0 0
5 10 0 3 0 => 0 0 0 0
5 14 0 0 0 => 0 0 0 0
5 14 0 1 0 => 0 0 0 0
1 15 0 0 0 => 0 0 0 0
1 16 0 0 0 => 0 0 0 0
5 17 0 0 0 => 0 0 0 0
5 18 0 0 0 => 0 0 0 0
1 19 0 0 0 => 0 0 0 0
5 1a 0 0 0 => 0 0 0 0
5 1c 0 0 0 => 0 0 0 0
1 80000000 0 0 0 => 80000021 68747541 444d4163 69746e65
1 80000001 0 0 0 => a10f11 40000000 4003f3 2fd3fbff
1 80000002 0 0 0 => 20444d41 43595045 0 0
1 80000003 0 0 0 => 0 0 0 0
1 80000004 0 0 0 => 0 0 0 0
1 80000005 0 0 0 => ff48ff40 ff48ff40 20080140 20080140
1 80000006 0 0 0 => 5c002200 6c004200 4006140 a009140
1 80000007 0 0 0 => 0 0 0 100
1 80000008 0 0 0 => 303030 50020005 7001 0
1 8000000a 0 0 0 => 0 0 0 0
1 80000019 0 0 0 => 0 0 0 0
1 8000001a 0 0 0 => 6 0 0 0
1 8000001b 0 0 0 => 0 0 0 0
1 8000001c 0 0 0 => 0 0 0 0
5 8000001d 0 0 0 => 121 1c0003f 3f 0
5 8000001d 0 1 0 => 122 1c0003f 3f 0
5 8000001d 0 2 0 => 143 1c0003f 7ff 2
5 8000001d 0 3 0 => 4163 3c0003f 7fff 1
5 8000001d 0 4 0 => 0 0 0 0
1 8000001e 0 0 0 => 0 0 0 0
1 8000001f 0 0 0 => 0 0 0 0
5 80000020 0 0 0 => 0 0 0 0
5 80000020 0 1 0 => 0 0 0 0
1 80000021 0 0 0 => 204 0 86 0
";
        assert_eq!(gather_pu(&replay(orig), 0), orig);
    }

    /// The dumps of the conformance recordings that the current
    /// hwloc-gather-cpuid wrote (the others come from older versions,
    /// which recorded leaf 0xb without the x2APIC flag and fewer leaves)
    /// come back identically from a replay.
    #[test]
    fn conformance_dumps_round_trip() {
        const CURRENT: [&str; 8] = [
            "AMD-19h-Zen4-2xEpyc-9654",
            "AMD-K8-SantaRosa-2xOpteron-2218",
            "AMD-K8-SledgeHammer-2xOpteron-250",
            "Intel-ArrowLake-CoreUltra5-225U",
            "Intel-Core-2xXeon-E5345",
            "Intel-Haswell-2xXeon-E5-2680v3",
            "Intel-IvyBridge-12xXeon-E5-4620v2",
            "Intel-KnightsCorner-XeonPhi-SE10P",
        ];
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/conformance/x86");
        assert!(dir.is_dir(), "{} is missing", dir.display());
        let tmp = std::env::temp_dir().join(format!("wloc-gather-rt-{}", std::process::id()));
        for name in CURRENT {
            let out = tmp.join(name);
            std::fs::create_dir_all(&out).unwrap();
            let ok = std::process::Command::new("tar")
                .arg("xjf")
                .arg(dir.join(format!("{name}.tar.bz2")))
                .arg("-C")
                .arg(&out)
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "cannot unpack {name}");
            let pus = walk(&out);
            assert!(!pus.is_empty(), "{name}: no pu0");
            for pu0 in pus {
                let text = std::fs::read_to_string(&pu0).unwrap();
                assert_eq!(gather_pu(&replay(&text), 0), text, "{}", pu0.display());
            }
        }
        let _ = std::fs::remove_dir_all(&tmp);
    }

    /// Tables in sysfs files put NUMA nodes on the PUs whose APIC ids
    /// the SRAT lists: four PUs with APIC ids 0, 1, 2, 3 replayed from a
    /// dump, domain 0 holding APIC ids 0-1 and domain 1 APIC ids 2-3.
    #[test]
    fn acpi_files_give_numa_nodes() {
        fn table(sig: &[u8; 4], rev: u8, body: &[u8]) -> Vec<u8> {
            let mut t = sig.to_vec();
            t.extend_from_slice(&((36 + body.len()) as u32).to_le_bytes());
            t.extend_from_slice(&[rev, 0]);
            t.extend_from_slice(b"WLOCTSTESTTABL\x01\0\0\0WLOC\x01\0\0\0");
            t.extend_from_slice(body);
            let sum = t.iter().fold(0u8, |s, &b| s.wrapping_add(b));
            t[9] = 0u8.wrapping_sub(sum);
            t
        }
        let mut srat = vec![1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        for apic in 0u8..4 {
            srat.extend_from_slice(&[0, 16, apic / 2, apic, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        }
        for d in 0u32..2 {
            srat.extend_from_slice(&[1, 40]);
            srat.extend_from_slice(&d.to_le_bytes());
            srat.extend_from_slice(&[0, 0]);
            srat.extend_from_slice(&(u64::from(d) << 30).to_le_bytes());
            srat.extend_from_slice(&(1u64 << 30).to_le_bytes());
            srat.extend_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        }
        let mut slit = 2u64.to_le_bytes().to_vec();
        slit.extend_from_slice(&[10, 17, 17, 10]);
        let root = std::env::temp_dir().join(format!("wloc-acpi-files-{}", std::process::id()));
        let dir = root.join("sys/firmware/acpi/tables");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("SRAT"), table(b"SRAT", 3, &srat)).unwrap();
        std::fs::write(dir.join("SLIT"), table(b"SLIT", 1, &slit)).unwrap();
        std::fs::write(dir.join("DSDT"), b"not read").unwrap();
        // PUs listed with APIC ids 3, 2, 1, 0: OS index and APIC id differ.
        let mut files = vec![("hwloc-cpuid-info".to_string(), CPUID_INFO.to_string())];
        for pu in 0u32..4 {
            files.push((
                format!("pu{pu}"),
                format!(
                    "1 0 0 0 0 => 1 756e6547 6c65746e 49656e69\n1 1 0 0 0 => 0 {:x} 0 0\n",
                    (3 - pu) << 24
                ),
            ));
        }
        let dump = || {
            DumpProvider::new(
                DumpSource::from_files(files.iter().map(|(n, b)| (n.as_str(), b.as_bytes())))
                    .unwrap(),
                None,
            )
        };
        // The x86 component, granted the tables under this fsroot.
        let grant =
            wloc_runtime::FileAccess::new(wloc_runtime::builtin::X86_ROOTS, Some(&root)).unwrap();
        let t = crate::input::run_x86(dump(), Some(grant), Topology::new());
        let _ = std::fs::remove_dir_all(&root);
        let t = t.unwrap();
        let nodes = t.objs_by_type(wloc_core::ObjType::NUMANode);
        assert_eq!(nodes.len(), 2);
        let n0 = t.obj_by_os_index(wloc_core::ObjType::NUMANode, 0).unwrap();
        assert_eq!(t.obj(n0).cpuset.as_ref().unwrap().to_list_string(), "2-3");
        assert_eq!(t.obj(n0).numa().unwrap().local_memory, 1 << 30);
        assert_eq!(t.distances[0].values, vec![10, 17, 17, 10]);
        assert_eq!(t.check(), Ok(()));
        // No tables granted: the topology keeps its single node.
        let t = crate::input::run_x86(dump(), None, Topology::new()).unwrap();
        assert_eq!(t.objs_by_type(wloc_core::ObjType::NUMANode).len(), 1);
    }

    /// This machine through CPUID and, as root, its ACPI tables: the same
    /// PUs as the operating system shows.
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    #[test]
    fn discovers_this_machine() {
        let t =
            crate::input::load(&crate::input::Source::CpuidThisSystem, Topology::new()).unwrap();
        assert_eq!(t.check(), Ok(()));
        let pus = t.objs_by_type(wloc_core::ObjType::PU).len();
        assert_eq!(pus, LinuxPuRunner::new().unwrap().pus().len());
    }

    fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut v = Vec::new();
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                v.extend(walk(&p));
            } else if p.file_name().is_some_and(|n| n == "pu0") {
                v.push(p);
            }
        }
        v
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn runner_pins_and_restores() {
        // SAFETY: no arguments.
        let tid = unsafe { libc::gettid() };
        let status = || std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).unwrap();
        let before = status();
        let allowed = |s: &str| {
            s.lines()
                .find(|l| l.starts_with("Cpus_allowed_list"))
                .map(String::from)
        };
        let r = LinuxPuRunner::new().unwrap();
        assert!(!r.pus().is_empty());
        for pu in 0..r.pus().len() {
            let mut ran = None;
            wloc_probe::PuRunner::run_on(&r, pu, &mut || ran = wloc_bind::current_pu().ok());
            assert_eq!(ran, Some(r.pus()[pu]));
        }
        let mut called = false;
        wloc_probe::PuRunner::run_on(&r, r.pus().len(), &mut || called = true);
        assert!(!called);
        drop(r);
        // The thread's affinity is back.
        assert_eq!(allowed(&status()), allowed(&before));
        assert_eq!(
            linux::parse_cpu_list("0-3,8,10-11\n"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(linux::parse_cpu_list("3-1"), None);
    }

    /// The on-demand provider answers on the PU asked (leaf 1's initial
    /// APIC ids differ between PUs), keeps answers, and gives the thread
    /// its affinity back.
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    #[test]
    fn live_provider_answers_on_each_pu_and_restores() {
        use wloc_runtime::CpuidProvider;
        // SAFETY: no arguments.
        let tid = unsafe { libc::gettid() };
        let allowed = || {
            std::fs::read_to_string(format!("/proc/self/task/{tid}/status"))
                .unwrap()
                .lines()
                .find(|l| l.starts_with("Cpus_allowed_list"))
                .map(String::from)
        };
        let before = allowed();
        let p = super::LiveProvider::new().unwrap();
        let n = p.pu_count();
        assert!(n >= 1);
        let apic = |pu| p.query(pu, 1, 0)[1] >> 24;
        let ids: std::collections::BTreeSet<u32> = (0..n).map(apic).collect();
        assert_eq!(ids.len(), n as usize, "one initial APIC id per PU");
        assert_eq!(p.query(0, 0, 0), p.query(0, 0, 0));
        assert_eq!(p.query(n, 0, 0), [0; 4], "no such PU");
        p.restore().unwrap();
        assert_eq!(allowed(), before);
    }
}
