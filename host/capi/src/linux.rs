//! `hwloc/linux.h`: thread binding by Linux thread id, the last CPU of a
//! thread (through `wloc-bind`'s system calls, as hwloc's own calls), and
//! kernel cpumask files.

use std::os::raw::{c_char, c_int};
use std::path::Path;

use wloc_core::{Bitmap, CpuSet};

use crate::ffi::{c_str, fail, guard};
use crate::handle::hwloc_topology_t;
use crate::types::{hwloc_bitmap_t, hwloc_const_bitmap_t};

/// The kernel's `errno` of a failed call, as the C functions return it.
fn os_errno(e: &std::io::Error) -> c_int {
    e.raw_os_error().unwrap_or(libc::EINVAL)
}

/// `hwloc_linux_set_tid_cpubind`: `sched_setaffinity` on thread `tid`
/// (0: the calling thread). An empty or infinite set is EINVAL, as in
/// hwloc.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_linux_set_tid_cpubind(
    _topology: hwloc_topology_t,
    tid: libc::pid_t,
    set: hwloc_const_bitmap_t,
) -> c_int {
    guard(-1, || {
        // SAFETY: the caller passes NULL or a live bitmap.
        let Some(set) = (unsafe { set.as_ref() }) else {
            return fail(libc::EINVAL);
        };
        // hwloc refuses an empty or infinite set before any call.
        if set.bits().last().is_none() {
            return fail(libc::EINVAL);
        }
        match wloc_bind::raw::set_thread_affinity_of(tid, &CpuSet::from_bitmap(set.bits().clone()))
        {
            Ok(()) => 0,
            Err(e) => fail(os_errno(&e)),
        }
    })
}

/// `hwloc_linux_get_tid_cpubind`: `sched_getaffinity` on thread `tid`
/// (0: the calling thread). With a loaded topology, PUs past the last one
/// of its complete cpuset are left out, as hwloc does.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_linux_get_tid_cpubind(
    topology: hwloc_topology_t,
    tid: libc::pid_t,
    set: hwloc_bitmap_t,
) -> c_int {
    entry!(topology, -1, |h| {
        // SAFETY: the caller passes NULL or a live bitmap.
        let Some(out) = (unsafe { set.as_mut() }) else {
            return fail(libc::EINVAL);
        };
        let mut bits = match wloc_bind::raw::thread_affinity_of(tid) {
            Ok(s) => s.bitmap().clone(),
            Err(e) => return fail(os_errno(&e)),
        };
        // SAFETY: the caller passes NULL or a live topology.
        let last = h.loaded().and_then(|t| t.model.complete_cpuset().last());
        if let Some(last) = last {
            bits.unset_range(last.saturating_add(1), None);
        }
        out.set_bits(bits);
        0
    })
}

/// `hwloc_linux_get_tid_last_cpu_location`: the PU thread `tid` (0: the
/// calling thread) last ran on. Failures are ENOSYS, as in hwloc.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_linux_get_tid_last_cpu_location(
    _topology: hwloc_topology_t,
    tid: libc::pid_t,
    set: hwloc_bitmap_t,
) -> c_int {
    guard(-1, || {
        // SAFETY: the caller passes NULL or a live bitmap.
        let Some(out) = (unsafe { set.as_mut() }) else {
            return fail(libc::EINVAL);
        };
        let tid = if tid == 0 {
            wloc_bind::raw::current_tid()
        } else {
            tid
        };
        match wloc_bind::raw::thread_last_cpu(tid) {
            Some(cpu) => {
                out.set_bits(Bitmap::from_index(cpu));
                0
            }
            None => fail(libc::ENOSYS),
        }
    })
}

/// The value of a hex number at the start of `s` as `sscanf("%lx")` reads
/// it: leading white space and `0x` skipped; `None` without any digit.
/// Too large values saturate, as `strtoul` does.
fn scan_hex(s: &str) -> Option<u64> {
    let s = s.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let digits = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(rest) if rest.starts_with(|c: char| c.is_ascii_hexdigit()) => rest,
        _ => s,
    };
    let n = digits.bytes().take_while(u8::is_ascii_hexdigit).count();
    if n == 0 {
        return None;
    }
    Some(u64::from_str_radix(&digits[..n], 16).unwrap_or(u64::MAX))
}

/// A kernel cpumask (`00000000,0000000f`: comma-separated 32-bit hex
/// chunks, most significant first), read as hwloc does: leading zero
/// chunks are skipped and reading stops at the first chunk that is not a
/// hex number.
fn parse_cpumask(text: &str) -> Bitmap {
    let mut chunks: Vec<u64> = Vec::new();
    let mut rest = text;
    while let Some(v) = scan_hex(rest) {
        if v != 0 || !chunks.is_empty() {
            chunks.push(v);
        }
        match rest.find(',') {
            Some(p) => rest = &rest[p + 1..],
            None => break,
        }
    }
    let mut words = vec![0u64; chunks.len().div_ceil(2)];
    // The last chunk holds bits 0-31, the one before bits 32-63, ...
    for (k, &c) in chunks.iter().rev().enumerate() {
        words[k / 2] |= c << (32 * (k % 2));
    }
    Bitmap::from_words(&words)
}

/// `hwloc_linux_read_path_as_cpumask`: reads a kernel cpumask file such
/// as `/sys/devices/system/cpu/cpu0/topology/core_cpus` (the path is used
/// as given: no `HWLOC_FSROOT`). -1 with the `open`/`read` errno.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_linux_read_path_as_cpumask(
    path: *const c_char,
    set: hwloc_bitmap_t,
) -> c_int {
    guard(-1, || {
        // SAFETY: the caller passes NULL or a NUL-terminated path.
        let Some(path) = (unsafe { c_str(path) }) else {
            return fail(libc::EINVAL);
        };
        // SAFETY: the caller passes NULL or a live bitmap.
        let Some(out) = (unsafe { set.as_mut() }) else {
            return fail(libc::EINVAL);
        };
        // As every input the library reads: a regular file (a FIFO would
        // block, a device never end) of bounded size (a mask of 2^22 CPUs
        // is about 1.2 MB of text), else an error at once.
        match wloc_trust::file::read_regular(Path::new(&*path), 4 << 20) {
            Ok(bytes) => {
                out.set_bits(parse_cpumask(&String::from_utf8_lossy(&bytes)));
                0
            }
            Err(wloc_trust::file::ReadError::Io { source, .. }) => {
                fail(source.raw_os_error().unwrap_or(libc::EIO))
            }
            Err(_) => fail(libc::EINVAL),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitmap::{free_raw, hwloc_bitmap_s};

    /// A C bitmap from a list string.
    fn list(s: &str) -> *mut hwloc_bitmap_s {
        crate::bitmap::new_raw(Bitmap::parse_list(s).expect("valid list"))
    }

    #[test]
    fn cpumask_files_read_like_hwloc() {
        assert_eq!(
            parse_cpumask("00000000,0000000f\n"),
            Bitmap::from_range(0, Some(3))
        );
        assert_eq!(
            parse_cpumask("00000001,00000000,00000003\n").to_list_string(),
            "0-1,64"
        );
        assert_eq!(parse_cpumask("80000000,00000000").to_list_string(), "63");
        assert_eq!(parse_cpumask("0,0,0\n"), Bitmap::new());
        assert_eq!(parse_cpumask(""), Bitmap::new());
        assert_eq!(parse_cpumask("\n"), Bitmap::new());
        // Reading stops at the first chunk that is not a number.
        assert_eq!(parse_cpumask("3,zz,1").to_list_string(), "0-1");
    }

    #[test]
    fn read_path_as_cpumask_reads_a_file_and_reports_errors() {
        let dir = std::env::temp_dir().join(format!("wloc-capi-linux-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("mask");
        std::fs::write(&file, "00000000,00000000,00000000,000000f0\n").unwrap();
        let path = std::ffi::CString::new(file.to_str().unwrap()).unwrap();
        let set = list("1");
        // SAFETY: a valid path and bitmap.
        let r = unsafe { hwloc_linux_read_path_as_cpumask(path.as_ptr(), set) };
        assert_eq!(r, 0);
        // SAFETY: set is live.
        assert_eq!(unsafe { (*set).bits() }.to_list_string(), "4-7");
        let missing = std::ffi::CString::new(dir.join("none").to_str().unwrap()).unwrap();
        // SAFETY: as above.
        let r = unsafe { hwloc_linux_read_path_as_cpumask(missing.as_ptr(), set) };
        assert_eq!(r, -1);
        assert_eq!(
            std::io::Error::last_os_error().raw_os_error(),
            Some(libc::ENOENT)
        );
        assert_eq!(
            // SAFETY: NULL arguments are refused.
            unsafe { hwloc_linux_read_path_as_cpumask(std::ptr::null(), set) },
            -1
        );
        free_raw(set);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_calling_threads_binding_round_trips() {
        // Run in a fresh thread so the test's own thread keeps its binding.
        std::thread::spawn(|| {
            let set = list("");
            let null = std::ptr::null_mut();
            // SAFETY: live bitmaps; NULL topology is accepted.
            unsafe {
                assert_eq!(hwloc_linux_get_tid_cpubind(null, 0, set), 0);
                let first = (*set).bits().first().expect("a thread runs somewhere");
                let one = list(&first.to_string());
                assert_eq!(hwloc_linux_set_tid_cpubind(null, 0, one), 0);
                let again = list("");
                assert_eq!(
                    hwloc_linux_get_tid_cpubind(null, wloc_bind::raw::current_tid(), again),
                    0
                );
                assert_eq!((*again).bits(), (*one).bits());
                // The thread now runs on that PU only.
                assert_eq!(hwloc_linux_get_tid_last_cpu_location(null, 0, again), 0);
                assert_eq!((*again).bits(), (*one).bits());
                // Empty and infinite sets are refused.
                let empty = list("");
                assert_eq!(hwloc_linux_set_tid_cpubind(null, 0, empty), -1);
                let infinite = list("0-");
                assert_eq!(hwloc_linux_set_tid_cpubind(null, 0, infinite), -1);
                for b in [set, one, again, empty, infinite] {
                    free_raw(b);
                }
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_missing_thread_is_an_error() {
        let set = list("");
        let null = std::ptr::null_mut();
        // pid_max is at most 2^22, so this thread cannot exist.
        let tid = (1 << 22) + 1;
        // SAFETY: a live bitmap.
        unsafe {
            assert_eq!(hwloc_linux_get_tid_cpubind(null, tid, set), -1);
            assert_eq!(hwloc_linux_get_tid_last_cpu_location(null, tid, set), -1);
            assert_eq!(
                std::io::Error::last_os_error().raw_os_error(),
                Some(libc::ENOSYS)
            );
        }
        free_raw(set);
    }
}
