//! A CPUID dump answering the x86 component's `cpuid` queries.

use wloc_probe::CpuidSource;

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

impl CpuidSource for DumpProvider {
    fn pu_count(&self) -> usize {
        self.os_indexes.len().min(self.dump.pu_count())
    }
    fn os_index(&self, pu: usize) -> u32 {
        self.os_indexes.get(pu).copied().unwrap_or(0)
    }
    fn cpuid(&self, pu: usize, leaf: u32, subleaf: u32) -> [u32; 4] {
        self.dump.cpuid(pu, leaf, subleaf)
    }
}
