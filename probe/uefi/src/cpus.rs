//! CPUID on every CPU through the firmware's MP services: the
//! [`CpuRunner`] that `wloc-probe`'s shared [`CpuidCollector`] drives
//! (it learns the queries on the boot processor, then wakes each other
//! CPU once with all of them).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::ffi::c_void;
use core::time::Duration;

use uefi::boot::{self, ScopedProtocol};
use uefi::proto::pi::mp::MpServices;
use wloc_probe::acpi::Madt;
use wloc_probe::firmware::{Cpu, CpuRunner, CpuidCollector, apic_id_here};

/// How long one AP may take to answer its queries.
const AP_TIMEOUT: Duration = Duration::from_secs(10);

/// The CPUID source of this application: every enabled CPU, each
/// answering with its own `cpuid` instruction.
pub type MpCpuid = CpuidCollector<MpRunner>;

/// Runs CPUID on an application processor (AP) through MP services.
pub struct MpRunner {
    mp: Option<ScopedProtocol<MpServices>>,
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
    // SAFETY: `arg` is the `Job` that `MpRunner::run` keeps alive until
    // the blocking `startup_this_ap` returns; its pointers cover `len`
    // elements.
    unsafe {
        let job = &*(arg as *const Job);
        for i in 0..job.len {
            let (leaf, subleaf) = *job.queries.add(i);
            let r = core::arch::x86_64::__cpuid_count(leaf, subleaf);
            job.out.add(i).write([r.eax, r.ebx, r.ecx, r.edx]);
        }
    }
}

impl CpuRunner for MpRunner {
    fn run(&self, cpu: &Cpu, queries: &[(u32, u32)], out: &mut [[u32; 4]]) -> Result<(), String> {
        let mp = self
            .mp
            .as_ref()
            .ok_or_else(|| String::from("no MP services to reach other processors"))?;
        let mut job = Job {
            queries: queries.as_ptr(),
            out: out.as_mut_ptr(),
            len: queries.len().min(out.len()),
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
        })
    }
}

/// Lists the enabled CPUs through MP services (only the current one
/// without them) and numbers them as Linux does (see
/// [`CpuidCollector::new`]).
pub fn mp_cpuid(madt: Option<&Madt>) -> Result<MpCpuid, String> {
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
    Ok(CpuidCollector::new(MpRunner { mp }, cpus, madt))
}
