//! CPUID on every CPU through the firmware's MP services.
//!
//! Waking an application processor (AP) costs far more than a `cpuid`
//! instruction, so each AP is woken once with the whole list of queries
//! discovery will make: the list is learnt by running discovery on the
//! bootstrap processor (BSP) first.  A query an AP was not asked in
//! advance (a CPU whose answers lead discovery elsewhere, as hybrid or
//! unusual caches can) wakes it again for that query alone, so the
//! answers are always the CPU's own.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::cell::RefCell;
use core::ffi::c_void;
use core::time::Duration;

use uefi::boot::{self, ScopedProtocol};
use uefi::proto::pi::mp::MpServices;
use wloc_core::Topology;
use wloc_probe::acpi::Madt;
use wloc_probe::CpuidSource;

/// How long one AP may take to answer its queries.
const AP_TIMEOUT: Duration = Duration::from_secs(10);

/// The CPUID answers of one CPU, by `(leaf, subleaf)`.
type Answers = BTreeMap<(u32, u32), [u32; 4]>;

/// One enabled CPU.
#[derive(Clone, Copy, Debug)]
pub struct Cpu {
    /// Its number for the MP services.
    pub number: usize,
    /// Its APIC id, as the firmware reports it.
    pub apic_id: u32,
    /// The OS index given to its PU (see [`MpCpuid::new`]).
    pub os_index: u32,
    /// Whether it is the processor this application runs on.
    pub bsp: bool,
}

/// A CPUID source answering with each CPU's own `cpuid` instruction.
pub struct MpCpuid {
    mp: Option<ScopedProtocol<MpServices>>,
    cpus: Vec<Cpu>,
    answers: RefCell<Vec<Answers>>,
    error: RefCell<Option<String>>,
}

fn cpuid_here(leaf: u32, subleaf: u32) -> [u32; 4] {
    let r = core::arch::x86_64::__cpuid_count(leaf, subleaf);
    [r.eax, r.ebx, r.ecx, r.edx]
}

/// The APIC id of the CPU we run on (leaf 0xB, else leaf 1).
fn apic_id_here() -> u32 {
    if cpuid_here(0, 0)[0] >= 0xb {
        let r = cpuid_here(0xb, 0);
        if r[1] & 0xffff != 0 {
            return r[3];
        }
    }
    cpuid_here(1, 0)[1] >> 24
}

/// What an AP is asked to do: answer `len` queries into `out`.
#[repr(C)]
struct Job {
    queries: *const (u32, u32),
    out: *mut [u32; 4],
    len: usize,
}

/// Runs on an AP.  It only executes `cpuid` and writes into the buffer
/// the BSP prepared: boot services must not be called from an AP.
extern "efiapi" fn run_job(arg: *mut c_void) {
    // SAFETY: `arg` is the `Job` that `MpCpuid::ask` keeps alive until
    // the blocking `startup_this_ap` returns; its pointers cover `len`
    // elements.
    unsafe {
        let job = &*(arg as *const Job);
        for i in 0..job.len {
            let (leaf, subleaf) = *job.queries.add(i);
            job.out.add(i).write(cpuid_here(leaf, subleaf));
        }
    }
}

impl MpCpuid {
    /// Lists the enabled CPUs.  OS indexes follow Linux: the BSP is 0 and
    /// the others follow in the order of the MADT (CPUs missing from it
    /// come last, by MP number), so that PU numbers match what hwloc
    /// shows under Linux on the same machine.
    pub fn new(madt: Option<&Madt>) -> Result<MpCpuid, String> {
        let mp = boot::get_handle_for_protocol::<MpServices>()
            .ok()
            .and_then(|h| boot::open_protocol_exclusive::<MpServices>(h).ok());
        let mut cpus = Vec::new();
        match &mp {
            None => cpus.push(Cpu {
                number: 0,
                apic_id: apic_id_here(),
                os_index: 0,
                bsp: true,
            }),
            Some(mp) => {
                let count = mp
                    .get_number_of_processors()
                    .map_err(|e| format!("MP services cannot count the processors: {e:?}"))?;
                let me = mp
                    .who_am_i()
                    .map_err(|e| format!("MP services cannot name the current processor: {e:?}"))?;
                for number in 0..count.total {
                    let info = mp.get_processor_info(number).map_err(|e| {
                        format!("MP services have no information on processor {number}: {e:?}")
                    })?;
                    if !info.is_enabled() && number != me {
                        continue;
                    }
                    let apic_id = u32::try_from(info.processor_id).map_err(|_| {
                        format!(
                            "processor {number} has APIC id {:#x}, wider than 32 bits",
                            info.processor_id
                        )
                    })?;
                    cpus.push(Cpu {
                        number,
                        apic_id,
                        os_index: 0,
                        bsp: number == me,
                    });
                }
            }
        }
        number_like_linux(&mut cpus, madt);
        let n = cpus.len();
        Ok(MpCpuid {
            mp,
            cpus,
            answers: RefCell::new(vec![Answers::new(); n]),
            error: RefCell::new(None),
        })
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
        self.answers.borrow()[pu]
            .iter()
            .map(|(&q, &r)| (q, r))
            .collect()
    }

    /// The OS index of the PU with this APIC id.
    pub fn os_index_of_apic(&self, apic_id: u32) -> Option<u32> {
        self.cpus
            .iter()
            .find(|c| c.apic_id == apic_id)
            .map(|c| c.os_index)
    }

    /// Runs the probe's x86 discovery over all CPUs into `topo`.
    pub fn discover(&self, topo: Topology) -> Result<Topology, String> {
        let bsp =
            self.cpus.iter().position(|c| c.bsp).ok_or_else(|| {
                String::from("the current processor is not among the enabled ones")
            })?;
        // Learn the queries on the BSP; its own answers are kept.  The
        // result is not needed, so an error is reported by the real run.
        let _ = wloc_probe::discover(&OneCpu { all: self, pu: bsp }, Topology::new());
        let queries: Vec<(u32, u32)> = self.answers.borrow()[bsp].keys().copied().collect();
        for pu in 0..self.cpus.len() {
            if pu != bsp {
                self.ask(pu, &queries)?;
            }
        }
        let topo = wloc_probe::discover(self, topo).map_err(|e| format!("{e}"))?;
        match self.error.borrow_mut().take() {
            Some(e) => Err(e),
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
            let mp = self
                .mp
                .as_ref()
                .ok_or_else(|| String::from("no MP services to reach other processors"))?;
            let mut job = Job {
                queries: queries.as_ptr(),
                out: out.as_mut_ptr(),
                len: queries.len(),
            };
            mp.startup_this_ap(
                cpu.number,
                run_job,
                (&mut job as *mut Job).cast(),
                None,
                Some(AP_TIMEOUT),
            )
            .map_err(|e| {
                format!(
                    "processor {} (APIC id {:#x}) did not run CPUID: {:?}",
                    cpu.number,
                    cpu.apic_id,
                    e.status()
                )
            })?;
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
        self.answers.borrow()[pu][&(leaf, subleaf)]
    }
}

impl CpuidSource for MpCpuid {
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

/// One CPU of an [`MpCpuid`], seen as a machine of one PU.
struct OneCpu<'a> {
    all: &'a MpCpuid,
    pu: usize,
}

impl CpuidSource for OneCpu<'_> {
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
