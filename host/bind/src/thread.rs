//! The calling thread's CPU affinity without a topology: read it, set it,
//! and pin the thread on one PU, for code that must run on every PU in
//! turn (CPUID gathering) or that needs this process's binding before a
//! topology exists.

use std::io;

use wloc_core::CpuSet;

use crate::sys;

/// The CPU affinity of the calling thread.
pub fn thread_affinity() -> io::Result<CpuSet> {
    sys::sched_getaffinity(0)
}

/// Sets the CPU affinity of the calling thread.
pub fn set_thread_affinity(set: &CpuSet) -> io::Result<()> {
    sys::sched_setaffinity(0, &sys::to_kernel_mask(set, 0))
}

/// The PU (OS index) the calling thread runs on.
pub fn current_pu() -> io::Result<u32> {
    sys::getcpu()
}

/// Binds the calling thread to PU `pu` (OS index) and reads back where
/// it runs: `Ok(true)` once it runs there, `Ok(false)` if the kernel has
/// not moved it yet.
pub fn pin_thread_to_pu(pu: u32) -> io::Result<bool> {
    set_thread_affinity(&CpuSet::from_index(pu))?;
    // The kernel migrates the thread before returning; check.
    Ok(current_pu().ok() == Some(pu) || {
        std::thread::yield_now();
        current_pu().ok() == Some(pu)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_the_thread_and_gives_its_affinity_back() {
        let original = thread_affinity().unwrap();
        let first = original.first().expect("some PU");
        assert!(pin_thread_to_pu(first).unwrap());
        assert_eq!(thread_affinity().unwrap(), CpuSet::from_index(first));
        assert_eq!(current_pu().unwrap(), first);
        set_thread_affinity(&original).unwrap();
        assert_eq!(thread_affinity().unwrap(), original);
    }
}
