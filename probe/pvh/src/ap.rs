//! CPUID on the application processors (APs), woken with INIT-SIPI-SIPI.
//!
//! Nothing has started the APs for us (the BIOS parked them), so the boot
//! processor (BSP) starts each one itself through its local APIC: an INIT
//! IPI resets the AP, a STARTUP IPI makes it run, in real mode, the
//! trampoline copied to [`TRAMPOLINE`].  The trampoline never leaves real
//! mode: it reads the job the BSP wrote below 64 KiB (a count and
//! `(leaf, subleaf)` pairs), executes `cpuid` for each one, writes the
//! answers beside them, sets a done flag and halts.  The next INIT resets
//! it again, so an AP can be asked more queries later, as the shared
//! collector does when discovery needs a leaf it did not ask in advance.
//!
//! The APs run one at a time: the job area is shared, and an AP's work
//! is a few dozen `cpuid`s.

use alloc::format;
use alloc::string::String;
use core::ptr;

use wloc_probe::firmware::{Cpu, CpuRunner};
use x86_64::instructions::port::Port;
use x86_64::registers::model_specific::Msr;

/// Where the trampoline runs: a STARTUP IPI's vector is a page number
/// below 1 MiB (here 8: CS = 0x800, IP = 0).
const TRAMPOLINE: usize = 0x8000;
/// The job: `u32` count at +0, `u32` done flag at +4, queries from +16.
const JOB: usize = 0x9000;
/// Where the AP writes its answers, 16 bytes each.
const ANSWERS: usize = 0xa000;
/// Queries per wake: the answers must end below 64 KiB, the reach of
/// the trampoline's real-mode offsets.
const MAX_QUERIES: usize = 256;
const _: () = assert!(JOB + 16 + 8 * MAX_QUERIES <= ANSWERS);
const _: () = assert!(ANSWERS + 16 * MAX_QUERIES <= 0x10000);
/// How long an AP may take to answer, in seconds of the RTC.
const AP_TIMEOUT_SECONDS: u32 = 10;

core::arch::global_asm!(
    ".pushsection .rodata.ap_trampoline, \"a\"",
    ".globl wloc_ap_trampoline",
    ".globl wloc_ap_trampoline_end",
    "wloc_ap_trampoline:",
    ".code16",
    "    cli",
    "    xorw %ax, %ax",
    "    movw %ax, %ds",
    "    movl {job}, %ebp",
    "    movw $({job} + 16), %si",
    "    movw ${answers}, %di",
    "    testl %ebp, %ebp",
    "    jz 2f",
    "1:  movl (%si), %eax",
    "    movl 4(%si), %ecx",
    "    cpuid",
    "    movl %eax, (%di)",
    "    movl %ebx, 4(%di)",
    "    movl %ecx, 8(%di)",
    "    movl %edx, 12(%di)",
    "    addw $8, %si",
    "    addw $16, %di",
    "    decl %ebp",
    "    jnz 1b",
    "2:  movl $1, {job} + 4",
    "3:  cli",
    "    hlt",
    "    jmp 3b",
    "wloc_ap_trampoline_end:",
    ".code64",
    ".popsection",
    job = const JOB,
    answers = const ANSWERS,
    options(att_syntax)
);

unsafe extern "C" {
    static wloc_ap_trampoline: u8;
    static wloc_ap_trampoline_end: u8;
}

/// IA32_APIC_BASE: the local APIC's address and mode.
const IA32_APIC_BASE: u32 = 0x1b;
/// The x2APIC interrupt command register.
const X2APIC_ICR: u32 = 0x830;
/// xAPIC register offsets.
const XAPIC_SVR: usize = 0xf0;
const XAPIC_ICR_LOW: usize = 0x300;
const XAPIC_ICR_HIGH: usize = 0x310;
/// ICR delivery status: the previous IPI is still being sent (xAPIC).
const ICR_PENDING: u32 = 1 << 12;
const ICR_INIT_ASSERT: u32 = 0xc500;
const ICR_INIT_DEASSERT: u32 = 0x8500;
const ICR_STARTUP: u32 = 0x4600;

/// The BSP's local APIC, in the mode the firmware left it.
enum LocalApic {
    /// xAPIC registers at this (identity-mapped) address.
    XApic(usize),
    /// x2APIC: registers are MSRs.
    X2Apic,
}

/// Starts APs by APIC id and has them run CPUID.
pub struct ApRunner {
    apic: LocalApic,
}

impl ApRunner {
    /// Finds the BSP's local APIC and copies the trampoline below 1 MiB.
    /// `low_memory_is_ram` says whether the firmware's memory map has
    /// 0x8000-0x10000 as RAM; without it no AP is started.
    pub fn new(low_memory_is_ram: bool) -> Result<ApRunner, String> {
        if !low_memory_is_ram {
            return Err(String::from(
                "the memory map does not give 0x8000-0x10000 as RAM: no room for the AP trampoline",
            ));
        }
        // SAFETY: IA32_APIC_BASE exists on every x86-64 processor.
        let base = unsafe { Msr::new(IA32_APIC_BASE).read() };
        if base & (1 << 11) == 0 {
            return Err(String::from("the local APIC is disabled (IA32_APIC_BASE)"));
        }
        let apic = if base & (1 << 10) != 0 {
            LocalApic::X2Apic
        } else {
            let addr = (base & 0xf_ffff_f000) as usize;
            if addr >= 1 << 32 {
                return Err(format!(
                    "the local APIC at {addr:#x} is above the 4 GiB mapped"
                ));
            }
            LocalApic::XApic(addr)
        };
        if let LocalApic::XApic(addr) = apic {
            // Software-enable the APIC (SVR bit 8), keeping its vector.
            // SAFETY: `addr` is the xAPIC page, identity-mapped.
            unsafe {
                let svr = (addr + XAPIC_SVR) as *mut u32;
                svr.write_volatile(svr.read_volatile() | 0x100);
            }
        }
        // SAFETY: the trampoline symbols delimit bytes of .rodata, and
        // the memory map says the destination is RAM nobody else uses
        // (the BIOS is done; the kernel lives above 1 MiB).
        unsafe {
            let start = ptr::addr_of!(wloc_ap_trampoline);
            let end = ptr::addr_of!(wloc_ap_trampoline_end);
            let len = end as usize - start as usize;
            ptr::copy_nonoverlapping(start, TRAMPOLINE as *mut u8, len);
        }
        Ok(ApRunner { apic })
    }

    /// Sends one IPI to `apic_id`.
    fn ipi(&self, apic_id: u32, command: u32) -> Result<(), String> {
        match self.apic {
            LocalApic::X2Apic => {
                // SAFETY: the x2APIC ICR takes destination and command in
                // one write.
                unsafe {
                    Msr::new(X2APIC_ICR).write((u64::from(apic_id) << 32) | u64::from(command))
                };
            }
            LocalApic::XApic(addr) => {
                if apic_id > 0xff {
                    return Err(format!(
                        "APIC id {apic_id:#x} cannot be reached in xAPIC mode"
                    ));
                }
                // SAFETY: the ICR registers of the identity-mapped xAPIC.
                unsafe {
                    let low = (addr + XAPIC_ICR_LOW) as *mut u32;
                    let high = (addr + XAPIC_ICR_HIGH) as *mut u32;
                    wait_idle(low)?;
                    high.write_volatile(apic_id << 24);
                    low.write_volatile(command);
                    wait_idle(low)?;
                }
            }
        }
        Ok(())
    }

    /// Wakes the AP with `apic_id` on the job already written and waits
    /// until it says it is done.
    fn wake(&self, apic_id: u32) -> Result<(), String> {
        let done = (JOB + 4) as *mut u32;
        self.ipi(apic_id, ICR_INIT_ASSERT)?;
        self.ipi(apic_id, ICR_INIT_DEASSERT)?;
        io_delay(10_000);
        let vector = (TRAMPOLINE >> 12) as u32;
        for _ in 0..2 {
            self.ipi(apic_id, ICR_STARTUP | vector)?;
            io_delay(200);
            // SAFETY: the job area is identity-mapped RAM.
            if unsafe { done.read_volatile() } != 0 {
                return Ok(());
            }
        }
        let mut clock = RtcSeconds::new();
        let mut waited = 0;
        loop {
            // SAFETY: as above.
            if unsafe { done.read_volatile() } != 0 {
                return Ok(());
            }
            if clock.ticked() {
                waited += 1;
                if waited > AP_TIMEOUT_SECONDS {
                    return Err(format!(
                        "the processor with APIC id {apic_id:#x} did not run CPUID within {AP_TIMEOUT_SECONDS} s of its STARTUP IPI"
                    ));
                }
            }
            core::hint::spin_loop();
        }
    }
}

impl CpuRunner for ApRunner {
    fn run(&self, cpu: &Cpu, queries: &[(u32, u32)], out: &mut [[u32; 4]]) -> Result<(), String> {
        for (qs, os) in queries.chunks(MAX_QUERIES).zip(out.chunks_mut(MAX_QUERIES)) {
            // SAFETY: the job and answer areas are identity-mapped RAM
            // below 64 KiB that only this code and the halted AP use.
            unsafe {
                ptr::write_volatile(JOB as *mut u32, qs.len() as u32);
                ptr::write_volatile((JOB + 4) as *mut u32, 0);
                for (i, &(leaf, subleaf)) in qs.iter().enumerate() {
                    ptr::write_volatile((JOB + 16 + 8 * i) as *mut u32, leaf);
                    ptr::write_volatile((JOB + 20 + 8 * i) as *mut u32, subleaf);
                }
            }
            self.wake(cpu.apic_id)?;
            for (i, o) in os.iter_mut().enumerate() {
                for (r, v) in o.iter_mut().enumerate() {
                    // SAFETY: as above; the AP wrote these before its
                    // done flag.
                    *v = unsafe { ptr::read_volatile((ANSWERS + 16 * i + 4 * r) as *const u32) };
                }
            }
        }
        Ok(())
    }
}

/// Waits until the xAPIC has sent the previous IPI.
///
/// # Safety
/// `low` is the ICR low register of the local xAPIC.
unsafe fn wait_idle(low: *mut u32) -> Result<(), String> {
    unsafe {
        for _ in 0..1_000_000 {
            if low.read_volatile() & ICR_PENDING == 0 {
                return Ok(());
            }
            core::hint::spin_loop();
        }
        Err(String::from("the local APIC did not send an IPI"))
    }
}

/// About `n` microseconds on PC hardware: writes to the unused POST port
/// 0x80, the classic I/O delay (there is no calibrated timer here).
fn io_delay(n: u32) {
    let mut port = Port::<u8>::new(0x80);
    for _ in 0..n {
        // SAFETY: port 0x80 is the POST diagnostic port; writing it has
        // no effect besides taking time.
        unsafe { port.write(0) };
    }
}

/// Counts seconds with the CMOS real-time clock, for timeouts.
struct RtcSeconds {
    last: u8,
}

impl RtcSeconds {
    fn new() -> RtcSeconds {
        RtcSeconds {
            last: rtc_seconds(),
        }
    }

    /// Whether the RTC's seconds changed since the last call.
    fn ticked(&mut self) -> bool {
        let now = rtc_seconds();
        let ticked = now != self.last;
        self.last = now;
        ticked
    }
}

/// The RTC's seconds register, read outside its update cycle.
fn rtc_seconds() -> u8 {
    let mut index = Port::<u8>::new(0x70);
    let mut data = Port::<u8>::new(0x71);
    // SAFETY: the CMOS index/data ports; registers 0x0A (status A) and
    // 0x00 (seconds) are only read.
    unsafe {
        // The update cycle lasts under 2 ms; a clock that never leaves it
        // (none at all) is read anyway rather than waited on forever.
        for _ in 0..100_000 {
            index.write(0x0a);
            if data.read() & 0x80 == 0 {
                break;
            }
        }
        index.write(0x00);
        data.read()
    }
}
