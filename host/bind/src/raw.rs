//! The system calls below [`Binder`](crate::Binder), for callers that
//! keep their own rules on top of them (the C library follows hwloc's
//! checks and `errno` values, not the [`Binder`](crate::Binder)'s): a
//! thread's affinity by Linux thread id or `pthread_t`, where a thread
//! last ran, anonymous pages for bound allocations, the page size. Every
//! system call the binding code of wloc makes lives in this crate.

use std::io;
use std::ptr::NonNull;

use wloc_core::CpuSet;

use crate::{cpu, sys};

/// The largest CPU mask (bits) offered to the kernel while probing its
/// mask size (a buffer smaller than the kernel's mask is `EINVAL`, so the
/// size doubles from 1024). One value for every caller: 2^22 bits (512
/// KiB) is far above any kernel's `NR_CPUS` (8192 at most today) yet
/// bounds the probe; it is the larger of the two limits wloc used to have
/// (the C library's), so no caller gives up earlier than before.
pub const MAX_CPU_MASK_BITS: usize = 1 << 22;

/// The CPU affinity of thread `tid` (0: the calling thread), with the
/// kernel's `errno` on failure.
pub fn thread_affinity_of(tid: i32) -> io::Result<CpuSet> {
    sys::sched_getaffinity(tid)
}

/// Sets the CPU affinity of thread `tid` (0: the calling thread) to the
/// PUs of `set` as given (no check against a topology).
pub fn set_thread_affinity_of(tid: i32, set: &CpuSet) -> io::Result<()> {
    sys::sched_setaffinity(tid, &sys::to_kernel_mask(set, 0))
}

/// The CPU affinity of `thread`, a thread of this process
/// (`pthread_getaffinity_np`, its mask grown as the kernel needs).
pub fn pthread_affinity(thread: libc::pthread_t) -> io::Result<CpuSet> {
    let mut bits = 1024usize;
    loop {
        let mut mask = sys::to_kernel_mask(&CpuSet::new(), bits);
        // SAFETY: the kernel writes at most size_of_val(mask) bytes; the
        // thread handle is the caller's, a live thread of this process.
        let r = unsafe {
            libc::pthread_getaffinity_np(
                thread,
                std::mem::size_of_val(mask.as_slice()),
                mask.as_mut_ptr() as *mut libc::cpu_set_t,
            )
        };
        match r {
            0 => return Ok(sys::from_kernel_mask(&mask)),
            libc::EINVAL if bits < MAX_CPU_MASK_BITS => bits *= 2,
            e => return Err(io::Error::from_raw_os_error(e)),
        }
    }
}

/// Sets the CPU affinity of `thread`, a thread of this process
/// (`pthread_setaffinity_np`), to the PUs of `set` as given.
pub fn set_pthread_affinity(thread: libc::pthread_t, set: &CpuSet) -> io::Result<()> {
    let mask = sys::to_kernel_mask(set, 0);
    // SAFETY: the mask holds size_of_val(mask) bytes; the thread handle is
    // the caller's, a live thread of this process.
    let r = unsafe {
        libc::pthread_setaffinity_np(
            thread,
            std::mem::size_of_val(mask.as_slice()),
            mask.as_ptr() as *const libc::cpu_set_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(r))
    }
}

/// Whether `thread` is the calling thread.
pub fn is_calling_thread(thread: libc::pthread_t) -> bool {
    // SAFETY: pthread_self and pthread_equal have no preconditions.
    unsafe { libc::pthread_equal(thread, libc::pthread_self()) != 0 }
}

/// The Linux thread id of the calling thread.
pub fn current_tid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

/// The CPU thread `tid` last ran on, from its `stat` file: a thread of
/// this process is under `/proc/self/task`, `/proc/TID` works for threads
/// of any process. `None` when neither can be read.
pub fn thread_last_cpu(tid: i32) -> Option<u32> {
    [
        format!("/proc/self/task/{tid}/stat"),
        format!("/proc/{tid}/stat"),
    ]
    .iter()
    .find_map(|p| cpu::stat_last_cpu(p).ok())
}

/// The system's page size.
pub fn page_size() -> usize {
    sys::page_size()
}

/// The number of online processors (`sysconf(_SC_NPROCESSORS_ONLN)`), at
/// least 1.
pub fn online_cpus() -> usize {
    // SAFETY: sysconf has no memory effects.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(1)
}

/// Maps `len` bytes of private anonymous memory (zeroed, readable and
/// writable), to be bound with the NUMA calls and released with
/// [`unmap`]; the kernel's `errno` on failure.
pub fn map_anonymous(len: usize) -> io::Result<NonNull<u8>> {
    // SAFETY: a fresh private anonymous mapping touches no existing memory.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    NonNull::new(p.cast()).ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))
}

/// Unmaps `len` bytes at `ptr` (`munmap`), with the kernel's `errno` on
/// failure.
///
/// # Safety
/// Nothing uses the pages afterwards: they are a mapping from
/// [`map_anonymous`] (or one the caller owns), released whole.
pub unsafe fn unmap(ptr: *mut u8, len: usize) -> io::Result<()> {
    // SAFETY: the caller gives up the mapping, see above.
    if unsafe { libc::munmap(ptr.cast(), len) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calling_threads_affinity_round_trips_by_tid_and_pthread() {
        std::thread::spawn(|| {
            let all = thread_affinity_of(0).unwrap();
            assert_eq!(
                pthread_affinity(
                    // SAFETY: pthread_self has no preconditions.
                    unsafe { libc::pthread_self() }
                )
                .unwrap(),
                all
            );
            let first = CpuSet::from_index(all.first().unwrap());
            set_thread_affinity_of(current_tid(), &first).unwrap();
            assert_eq!(thread_affinity_of(0).unwrap(), first);
            assert_eq!(thread_last_cpu(current_tid()), first.first());
            // SAFETY: as above.
            let me = unsafe { libc::pthread_self() };
            assert!(is_calling_thread(me));
            set_pthread_affinity(me, &all).unwrap();
            assert_eq!(thread_affinity_of(0).unwrap(), all);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn anonymous_pages_map_and_unmap() {
        let len = page_size() * 2;
        let p = map_anonymous(len).unwrap();
        // SAFETY: the mapping holds len zeroed bytes; unmapped once after.
        unsafe {
            assert_eq!(*p.as_ptr().add(len - 1), 0);
            unmap(p.as_ptr(), len).unwrap();
        }
        assert!(online_cpus() >= 1);
    }
}
