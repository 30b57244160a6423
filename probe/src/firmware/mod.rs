//! What the probes that run without an operating system share: the UEFI
//! application (`probe/uefi`) and the PVH unikernel (`probe/pvh`).
//!
//! Each of them knows how to run `cpuid` on another CPU (UEFI MP services;
//! INIT-SIPI-SIPI to a real-mode trampoline) and where the ACPI tables
//! and the RAM are; everything after that is here, so that both print
//! the same topology for the same machine:
//!
//! - [`CpuidCollector`] asks every CPU for its CPUID answers through a
//!   [`CpuRunner`], waking each one as few times as it can;
//! - [`assemble`] turns those answers and the ACPI tables into a topology
//!   ([`apply_numa`] alone serves the UEFI application on ARM, whose CPUs
//!   come from the MADT and PPTT instead);
//! - [`report::print_x86_cpus`] and [`report::print`] write the line
//!   report the boot tests read.

pub mod report;

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::cell::RefCell;
use core::fmt;

use wloc_core::object::ObjAttr;
use wloc_core::{ObjType, Topology, TypeFilter};

use crate::acpi::{AcpiError, AcpiNuma, AcpiTables, Checksum, Madt};
use crate::{CpuidSource, ProbeError};

/// Why a probe without an OS could not build the topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FirmwareError {
    /// The CPU the probe runs on is not among the CPUs listed.
    NoBootProcessor,
    /// A CPU did not answer its CPUID queries; the message says which and
    /// why (as the [`CpuRunner`] reported it).
    Cpu(String),
    /// x86 discovery failed on the answers.
    Discovery(ProbeError),
    /// The ACPI NUMA tables are present but invalid.
    Acpi(AcpiError),
    /// The ACPI NUMA tables do not fit the topology (the message says why).
    ApplyNuma(String),
    /// The machine's RAM could not be measured.
    Memory(String),
    /// The topology could not be finished after adding the RAM.
    Finish(String),
}

impl fmt::Display for FirmwareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FirmwareError::NoBootProcessor => {
                f.write_str("the current processor is not among the enabled ones")
            }
            FirmwareError::Cpu(m) => f.write_str(m),
            FirmwareError::Discovery(e) => write!(f, "CPUID discovery failed: {e}"),
            FirmwareError::Acpi(e) => write!(f, "cannot parse the ACPI NUMA tables: {e}"),
            FirmwareError::ApplyNuma(m) => write!(f, "cannot apply the ACPI NUMA tables: {m}"),
            FirmwareError::Memory(m) => write!(f, "cannot measure the RAM: {m}"),
            FirmwareError::Finish(m) => write!(f, "cannot finish the topology: {m}"),
        }
    }
}

/// One enabled CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cpu {
    /// Its number for the [`CpuRunner`] (MP services number, MADT index).
    pub number: usize,
    /// Its APIC id.
    pub apic_id: u32,
    /// The OS index given to its PU (see [`CpuidCollector::new`]).
    pub os_index: u32,
    /// Whether it is the processor the probe runs on.
    pub bsp: bool,
}

/// Runs CPUID on one CPU: what a probe provides for [`CpuidCollector`].
pub trait CpuRunner {
    /// Writes into `out[i]` the answer of `cpu` to `queries[i]`
    /// (`(leaf, subleaf)` → `[eax, ebx, ecx, edx]`; both slices have the
    /// same length).  Never called for the boot processor, which the
    /// collector asks itself.  The error names the CPU and says why.
    fn run(&self, cpu: &Cpu, queries: &[(u32, u32)], out: &mut [[u32; 4]]) -> Result<(), String>;
}

/// CPUID on the processor the caller runs on (zeros on other
/// architectures, which have no such instruction).
pub fn cpuid_here(leaf: u32, subleaf: u32) -> [u32; 4] {
    #[cfg(target_arch = "x86_64")]
    {
        let r = raw_cpuid::native_cpuid::cpuid_count(leaf, subleaf);
        [r.eax, r.ebx, r.ecx, r.edx]
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (leaf, subleaf);
        [0; 4]
    }
}

/// The APIC id of the CPU we run on (leaf 0xB, else leaf 1).
pub fn apic_id_here() -> u32 {
    if cpuid_here(0, 0)[0] >= 0xb {
        let r = cpuid_here(0xb, 0);
        if r[1] & 0xffff != 0 {
            return r[3];
        }
    }
    cpuid_here(1, 0)[1] >> 24
}

/// The CPUID answers of one CPU, by `(leaf, subleaf)`.
type Answers = BTreeMap<(u32, u32), [u32; 4]>;

/// A [`CpuidSource`] answering with each CPU's own `cpuid` instruction.
///
/// Waking an application processor (AP) costs far more than a `cpuid`
/// instruction, so each AP is woken once with the whole list of queries
/// discovery will make: the list is learnt by running discovery on the
/// bootstrap processor (BSP) first.  A query an AP was not asked in
/// advance (a CPU whose answers lead discovery elsewhere, as hybrid or
/// unusual caches can) wakes it again for that query alone, so the
/// answers are always the CPU's own.
pub struct CpuidCollector<R> {
    runner: R,
    cpus: Vec<Cpu>,
    answers: RefCell<Vec<Answers>>,
    error: RefCell<Option<String>>,
}

impl<R: CpuRunner> CpuidCollector<R> {
    /// Takes the enabled CPUs (their `os_index` is ignored) and numbers
    /// them as Linux does: the BSP is 0 and the others follow in the order
    /// of the MADT (CPUs missing from it come last, by `number`), so that
    /// PU numbers match what hwloc shows under Linux on the same machine.
    pub fn new(runner: R, mut cpus: Vec<Cpu>, madt: Option<&Madt>) -> CpuidCollector<R> {
        number_like_linux(&mut cpus, madt);
        let n = cpus.len();
        CpuidCollector {
            runner,
            cpus,
            answers: RefCell::new(vec![Answers::new(); n]),
            error: RefCell::new(None),
        }
    }

    /// The CPUs, by OS index.
    pub fn cpus(&self) -> &[Cpu] {
        &self.cpus
    }

    /// Number of CPUID queries answered, over all CPUs.
    pub fn answered(&self) -> usize {
        self.answers.borrow().iter().map(BTreeMap::len).sum()
    }

    /// Every CPUID answer collected for CPU `pu` (an index into
    /// [`cpus`](Self::cpus)): `((leaf, subleaf), [eax, ebx, ecx, edx])`.
    pub fn answers(&self, pu: usize) -> Vec<((u32, u32), [u32; 4])> {
        match self.answers.borrow().get(pu) {
            Some(a) => a.iter().map(|(&q, &r)| (q, r)).collect(),
            None => Vec::new(),
        }
    }

    /// The OS index of the PU with this APIC id.
    pub fn os_index_of_apic(&self, apic_id: u32) -> Option<u32> {
        self.cpus
            .iter()
            .find(|c| c.apic_id == apic_id)
            .map(|c| c.os_index)
    }

    /// Runs the probe's x86 discovery over all CPUs into `topo`.
    pub fn discover(&self, topo: Topology) -> Result<Topology, FirmwareError> {
        let bsp = self
            .cpus
            .iter()
            .position(|c| c.bsp)
            .ok_or(FirmwareError::NoBootProcessor)?;
        // Learn the queries on the BSP; its own answers are kept.  The
        // result is not needed, so an error is reported by the real run.
        let _ = crate::discover(&OneCpu { all: self, pu: bsp }, Topology::new());
        let queries: Vec<(u32, u32)> = self.answers.borrow()[bsp].keys().copied().collect();
        for pu in 0..self.cpus.len() {
            if pu != bsp {
                self.ask(pu, &queries).map_err(FirmwareError::Cpu)?;
            }
        }
        let topo = crate::discover(self, topo).map_err(FirmwareError::Discovery)?;
        match self.error.borrow_mut().take() {
            Some(e) => Err(FirmwareError::Cpu(e)),
            None => Ok(topo),
        }
    }

    /// Runs `queries` on CPU `pu` and records the answers.
    fn ask(&self, pu: usize, queries: &[(u32, u32)]) -> Result<(), String> {
        let cpu = self.cpus[pu];
        let mut out = vec![[0u32; 4]; queries.len()];
        if cpu.bsp {
            for (o, &(l, s)) in out.iter_mut().zip(queries) {
                *o = cpuid_here(l, s);
            }
        } else {
            self.runner.run(&cpu, queries, &mut out)?;
        }
        let mut answers = self.answers.borrow_mut();
        for (&q, &r) in queries.iter().zip(&out) {
            answers[pu].insert(q, r);
        }
        Ok(())
    }

    fn answer(&self, pu: usize, leaf: u32, subleaf: u32) -> [u32; 4] {
        if let Some(r) = self.answers.borrow()[pu].get(&(leaf, subleaf)) {
            return *r;
        }
        if let Err(e) = self.ask(pu, &[(leaf, subleaf)]) {
            self.error.borrow_mut().get_or_insert(e);
            return [0; 4];
        }
        self.answers.borrow()[pu]
            .get(&(leaf, subleaf))
            .copied()
            .unwrap_or([0; 4])
    }
}

impl<R: CpuRunner> CpuidSource for CpuidCollector<R> {
    fn pu_count(&self) -> usize {
        self.cpus.len()
    }
    fn os_index(&self, pu: usize) -> u32 {
        self.cpus[pu].os_index
    }
    fn cpuid(&self, pu: usize, leaf: u32, subleaf: u32) -> [u32; 4] {
        self.answer(pu, leaf, subleaf)
    }
}

/// One CPU of a [`CpuidCollector`], seen as a machine of one PU.
struct OneCpu<'a, R> {
    all: &'a CpuidCollector<R>,
    pu: usize,
}

impl<R: CpuRunner> CpuidSource for OneCpu<'_, R> {
    fn pu_count(&self) -> usize {
        1
    }
    fn os_index(&self, _pu: usize) -> u32 {
        0
    }
    fn cpuid(&self, _pu: usize, leaf: u32, subleaf: u32) -> [u32; 4] {
        self.all.answer(self.pu, leaf, subleaf)
    }
}

/// Gives OS indexes as Linux does (BSP first, then MADT order) and sorts
/// the CPUs by them.
fn number_like_linux(cpus: &mut [Cpu], madt: Option<&Madt>) {
    let rank = |c: &Cpu| -> (u8, usize) {
        if c.bsp {
            return (0, 0);
        }
        match madt.and_then(|m| m.processors.iter().position(|p| p.apic_id == c.apic_id)) {
            Some(i) => (1, i),
            None => (2, c.number),
        }
    };
    cpus.sort_by_key(rank);
    for (i, c) in cpus.iter_mut().enumerate() {
        c.os_index = i as u32;
    }
}

/// A topology that keeps every object, for discovery to fill.
pub fn empty_topology() -> Topology {
    let mut topo = Topology::new();
    topo.set_all_types_filter(TypeFilter::KeepAll);
    topo.include_disallowed = true;
    topo
}

/// Builds the machine's topology: x86 discovery over every CPU through
/// `cpus`, then [`apply_numa`].  Returns the topology and the NUMA
/// description applied, if any.
pub fn assemble<R: CpuRunner>(
    cpus: &CpuidCollector<R>,
    tables: Option<&AcpiTables>,
    ram_bytes: &dyn Fn() -> Result<u64, String>,
) -> Result<(Topology, Option<AcpiNuma>), FirmwareError> {
    let mut topo = cpus.discover(empty_topology())?;
    let numa = apply_numa(
        tables,
        &mut topo,
        &|apic| cpus.os_index_of_apic(apic),
        ram_bytes,
    )?;
    Ok((topo, numa))
}

/// Puts the NUMA nodes, distances and memory attributes of the ACPI
/// tables into the topology (`to_pu` maps the processor ids of the SRAT,
/// APIC ids or ACPI UIDs, to PU OS indexes); without NUMA tables the one
/// node discovery added gets the RAM `ram_bytes` measures (only called
/// then).  Returns the NUMA description applied, if any.
pub fn apply_numa(
    tables: Option<&AcpiTables>,
    topo: &mut Topology,
    to_pu: &dyn Fn(u32) -> Option<u32>,
    ram_bytes: &dyn Fn() -> Result<u64, String>,
) -> Result<Option<AcpiNuma>, FirmwareError> {
    let numa = match tables {
        Some(t) => {
            let numa = t.numa(Checksum::Verify).map_err(FirmwareError::Acpi)?;
            numa.apply(topo, to_pu)
                .map_err(|e| FirmwareError::ApplyNuma(alloc::format!("{e}")))?;
            Some(numa)
        }
        None => None,
    };
    if numa.as_ref().is_none_or(|n| n.nodes.is_empty()) {
        let bytes = ram_bytes().map_err(FirmwareError::Memory)?;
        set_single_node_memory(topo, bytes)?;
    }
    Ok(numa)
}

/// Without NUMA tables the machine has the one node discovery added:
/// give it the machine's RAM.
fn set_single_node_memory(topo: &mut Topology, bytes: u64) -> Result<(), FirmwareError> {
    let nodes = topo.objs_by_type(ObjType::NUMANode);
    if let [node] = nodes[..] {
        if let ObjAttr::Numa(a) = &mut topo.obj_mut(node).attr {
            a.local_memory = bytes;
        }
        // Finishing again recomputes the memory totals.
        topo.finish()
            .map_err(|e| FirmwareError::Finish(alloc::format!("{e}")))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct NoAps;
    impl CpuRunner for NoAps {
        fn run(&self, cpu: &Cpu, _: &[(u32, u32)], _: &mut [[u32; 4]]) -> Result<(), String> {
            Err(alloc::format!("CPU {} cannot be reached", cpu.apic_id))
        }
    }

    fn cpu(number: usize, apic_id: u32, bsp: bool) -> Cpu {
        Cpu {
            number,
            apic_id,
            os_index: 99,
            bsp,
        }
    }

    #[test]
    fn bsp_first_then_other_cpus_by_number_without_madt() {
        let c = CpuidCollector::new(
            NoAps,
            vec![cpu(0, 4, false), cpu(1, 2, true), cpu(2, 0, false)],
            None,
        );
        let got: Vec<(u32, u32)> = c.cpus().iter().map(|c| (c.os_index, c.apic_id)).collect();
        assert_eq!(got, [(0, 2), (1, 4), (2, 0)]);
        assert_eq!(c.os_index_of_apic(0), Some(2));
        assert_eq!(c.os_index_of_apic(7), None);
    }

    #[test]
    fn an_unreachable_cpu_is_an_error_naming_it() {
        let c = CpuidCollector::new(NoAps, vec![cpu(0, 0, true), cpu(1, 1, false)], None);
        let e = c.discover(Topology::new()).unwrap_err();
        assert_eq!(e, FirmwareError::Cpu("CPU 1 cannot be reached".into()));
    }

    #[test]
    fn no_bsp_is_an_error() {
        let c = CpuidCollector::new(NoAps, vec![cpu(0, 0, false)], None);
        assert_eq!(
            c.discover(Topology::new()).unwrap_err(),
            FirmwareError::NoBootProcessor
        );
    }
}
