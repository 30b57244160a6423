//! Where CPUID answers come from.

/// Answers CPUID queries for each PU of a machine.
///
/// PUs are numbered `0..pu_count()` in the order discovery visits them;
/// `os_index` gives the number the operating system (or the firmware) uses
/// for each one, which becomes the PU's `P#` and its bit in cpusets.
pub trait CpuidSource {
    /// Number of PUs.
    fn pu_count(&self) -> usize;
    /// OS index of PU `pu` (`0..pu_count()`).
    fn os_index(&self, pu: usize) -> u32;
    /// Registers `[eax, ebx, ecx, edx]` that `cpuid` returns on PU `pu`
    /// for `leaf` (input eax) and `subleaf` (input ecx).
    fn cpuid(&self, pu: usize, leaf: u32, subleaf: u32) -> [u32; 4];
}

impl<T: CpuidSource + ?Sized> CpuidSource for &T {
    fn pu_count(&self) -> usize {
        (**self).pu_count()
    }
    fn os_index(&self, pu: usize) -> u32 {
        (**self).os_index(pu)
    }
    fn cpuid(&self, pu: usize, leaf: u32, subleaf: u32) -> [u32; 4] {
        (**self).cpuid(pu, leaf, subleaf)
    }
}

/// Runs code on a given PU: what a host provides so that
/// `NativeSource` can execute `cpuid` on every PU.
///
/// A host implements it by pinning the calling thread (Linux
/// `sched_setaffinity`, UEFI `MpServices::startup_this_ap`, ...).
/// Discovery asks for all the leaves of one PU before moving to the next,
/// so a runner that stays pinned on the last PU until another one is
/// requested pins once per PU.
pub trait PuRunner {
    /// Number of PUs the runner can reach.
    fn pu_count(&self) -> usize;
    /// OS index of PU `pu`.
    fn os_index(&self, pu: usize) -> u32;
    /// Calls `f` once while running on PU `pu`.  If the runner cannot get
    /// there it may leave `f` uncalled: the query then answers zeros.
    fn run_on(&self, pu: usize, f: &mut dyn FnMut());
}

#[cfg(target_arch = "x86_64")]
pub mod native {
    use super::{CpuidSource, PuRunner};

    fn cpuid_here(leaf: u32, subleaf: u32) -> [u32; 4] {
        let r = raw_cpuid::native_cpuid::cpuid_count(leaf, subleaf);
        [r.eax, r.ebx, r.ecx, r.edx]
    }

    /// The runner of [`NativeSource::current`]: only the CPU we run on.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct CurrentCpu;

    impl PuRunner for CurrentCpu {
        fn pu_count(&self) -> usize {
            1
        }
        fn os_index(&self, _pu: usize) -> u32 {
            0
        }
        fn run_on(&self, _pu: usize, f: &mut dyn FnMut()) {
            f()
        }
    }

    /// CPUID of the machine we run on, executed with the `cpuid` instruction.
    #[derive(Clone, Debug)]
    pub struct NativeSource<R = CurrentCpu> {
        runner: R,
    }

    impl NativeSource<CurrentCpu> {
        /// A source that only knows the CPU the caller runs on (one PU,
        /// OS index 0).  Without an OS to pin threads this is all a
        /// `no_std` program can ask directly.
        pub fn current() -> Self {
            NativeSource { runner: CurrentCpu }
        }
    }

    impl<R: PuRunner> NativeSource<R> {
        /// A source that executes `cpuid` on each PU through `runner`.
        pub fn with_runner(runner: R) -> Self {
            NativeSource { runner }
        }

        /// The runner.
        pub fn runner(&self) -> &R {
            &self.runner
        }
    }

    impl<R: PuRunner> CpuidSource for NativeSource<R> {
        fn pu_count(&self) -> usize {
            self.runner.pu_count()
        }
        fn os_index(&self, pu: usize) -> u32 {
            self.runner.os_index(pu)
        }
        fn cpuid(&self, pu: usize, leaf: u32, subleaf: u32) -> [u32; 4] {
            let mut out = [0; 4];
            self.runner
                .run_on(pu, &mut || out = cpuid_here(leaf, subleaf));
            out
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub use native::NativeSource;
