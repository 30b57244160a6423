//! Thin wrappers over the Linux system calls used for binding.  libc has
//! the `SYS_*` numbers but no wrappers for the NUMA calls (those live in
//! libnuma, which would be a C dependency), so they are called through
//! `libc::syscall` here.

use std::io;

use libc::{c_long, c_ulong};
use wloc_core::bitmap::{Bitmap, Set, SetKind};

/// Linux memory policy modes (`MPOL_*` in `<linux/mempolicy.h>`).
pub(crate) const MPOL_DEFAULT: i32 = 0;
pub(crate) const MPOL_PREFERRED: i32 = 1;
pub(crate) const MPOL_BIND: i32 = 2;
pub(crate) const MPOL_INTERLEAVE: i32 = 3;
pub(crate) const MPOL_LOCAL: i32 = 4;
pub(crate) const MPOL_PREFERRED_MANY: i32 = 5;
pub(crate) const MPOL_WEIGHTED_INTERLEAVE: i32 = 6;
/// Mode flags that may be or'ed into a mode returned by get_mempolicy.
pub(crate) const MPOL_MODE_FLAGS: i32 = (1 << 15) | (1 << 14) | (1 << 13);

/// `get_mempolicy` flag: query the policy of an address.
pub(crate) const MPOL_F_ADDR: c_ulong = 2;

/// `mbind` flags.
pub(crate) const MPOL_MF_STRICT: c_ulong = 1;
pub(crate) const MPOL_MF_MOVE: c_ulong = 2;

const WORD_BITS: usize = c_ulong::BITS as usize;

/// Largest mask size tried when the kernel asks for a bigger buffer.
use crate::raw::MAX_CPU_MASK_BITS as MAX_MASK_BITS;

/// The words of a finite set as the kernel lays out bit masks (arrays of
/// `unsigned long`, bit `i` in word `i / BITS`).  At least `min_bits`
/// bits long.
pub(crate) fn to_kernel_mask<K: SetKind>(set: &Set<K>, min_bits: usize) -> Vec<c_ulong> {
    let last = set.last().map(|l| l as usize + 1).unwrap_or(0);
    let bits = last.max(min_bits).max(1);
    let mut words = vec![0 as c_ulong; bits.div_ceil(WORD_BITS)];
    for i in set.iter() {
        let i = i as usize;
        words[i / WORD_BITS] |= 1 << (i % WORD_BITS);
    }
    words
}

/// The set held in a kernel bit mask.
pub(crate) fn from_kernel_mask<K: SetKind>(words: &[c_ulong]) -> Set<K> {
    let mut set = Bitmap::new();
    kernel_mask_into(words, &mut set);
    Set::from_bitmap(set)
}

/// Makes `set` the set held in a kernel bit mask, in place.
pub(crate) fn kernel_mask_into(words: &[c_ulong], set: &mut Bitmap) {
    // Whole words at a time: a query answered a million times must not
    // set its bits one by one.
    let mut wide = [0u64; 16];
    if WORD_BITS == 64 && words.len() <= wide.len() {
        for (w, &word) in wide.iter_mut().zip(words) {
            // c_ulong is u64 here, u32 on 32-bit targets.
            #[allow(clippy::unnecessary_cast)]
            let word = word as u64;
            *w = word;
        }
        set.assign_words(&wide[..words.len()]);
    } else {
        let b = set;
        b.assign_words(&[]);
        for (w, &word) in words.iter().enumerate() {
            let mut x = word;
            while x != 0 {
                let bit = x.trailing_zeros() as usize;
                b.set((w * WORD_BITS + bit) as u32);
                x &= x - 1;
            }
        }
    }
}

fn check(ret: c_long) -> io::Result<c_long> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// The CPU affinity of a thread (`tid` 0 is the calling thread).
pub(crate) fn sched_getaffinity<K: SetKind>(tid: i32) -> io::Result<Set<K>> {
    let mut bits = 1024usize;
    loop {
        let mut words = vec![0 as c_ulong; bits / WORD_BITS];
        // SAFETY: the buffer holds `bits / 8` writable bytes.
        let ret = unsafe {
            libc::syscall(
                libc::SYS_sched_getaffinity,
                tid as libc::pid_t,
                bits / 8,
                words.as_mut_ptr(),
            )
        };
        match check(ret) {
            Ok(n) => {
                words.truncate((n as usize).div_ceil(std::mem::size_of::<c_ulong>()));
                return Ok(from_kernel_mask(&words));
            }
            // The buffer is smaller than the kernel's CPU mask.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && bits < MAX_MASK_BITS => bits *= 2,
            Err(e) => return Err(e),
        }
    }
}

/// Sets the CPU affinity of a thread (`tid` 0 is the calling thread).
pub(crate) fn sched_setaffinity(tid: i32, mask: &[c_ulong]) -> io::Result<()> {
    // SAFETY: the kernel reads `len` bytes from the mask.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_sched_setaffinity,
            tid as libc::pid_t,
            std::mem::size_of_val(mask),
            mask.as_ptr(),
        )
    };
    check(ret).map(|_| ())
}

/// The CPU the calling thread runs on.
pub(crate) fn getcpu() -> io::Result<u32> {
    let mut cpu: libc::c_uint = 0;
    // SAFETY: both pointers are valid or null as the call allows.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_getcpu,
            &mut cpu as *mut libc::c_uint,
            std::ptr::null_mut::<libc::c_uint>(),
            std::ptr::null_mut::<libc::c_void>(),
        )
    };
    check(ret).map(|_| cpu)
}

/// The largest node mask [`get_mempolicy`] offers the kernel: Linux has
/// at most 1024 nodes (`NODES_SHIFT` 10); four times that for margin.
const MAX_NODE_MASK_BITS: usize = 4096;

/// `set_mempolicy(mode, nodes)`.  The kernel reads `maxnode - 1` bits,
/// hence the `+ 1` (as libnuma does).
pub(crate) fn set_mempolicy(mode: i32, nodes: Option<&[c_ulong]>) -> io::Result<()> {
    let (ptr, maxnode) = match nodes {
        Some(n) => (n.as_ptr(), n.len() * WORD_BITS + 1),
        None => (std::ptr::null(), 0),
    };
    // SAFETY: the kernel reads `maxnode - 1` bits from `ptr`, which we own.
    let ret = unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, ptr, maxnode as c_ulong) };
    check(ret).map(|_| ())
}

/// `get_mempolicy`, handing the mode and the node mask to `then`.  The kernel
/// wants a mask of at least `nr_node_ids` bits (EINVAL otherwise): one
/// word is tried first, then twice as many, so that the usual call is one
/// system call and no read of `/sys/devices/system/node/possible`, which
/// this call made each time (a binding asking a million times read it a
/// million times).
#[inline(always)]
pub(crate) fn get_mempolicy<R>(
    addr: *const u8,
    flags: c_ulong,
    then: impl FnOnce(i32, &[c_ulong]) -> R,
) -> io::Result<R> {
    // The first try uses a buffer on the stack: the usual query is then
    // one system call and no allocation.
    let mut first = [0 as c_ulong; 1];
    let mut mode: libc::c_int = 0;
    // SAFETY: `mode` and the mask buffer are writable and sized as passed.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut mode as *mut libc::c_int,
            first.as_mut_ptr(),
            WORD_BITS as c_ulong,
            addr,
            flags,
        )
    };
    if ret >= 0 {
        return Ok(then(mode, &first));
    }
    let words = get_mempolicy_wide(addr, flags, &mut mode)?;
    Ok(then(mode, &words))
}

/// [`get_mempolicy`] when one word is too short for the kernel's nodes:
/// the mask, in a buffer twice as long each time the kernel refuses.
#[cold]
fn get_mempolicy_wide(addr: *const u8, flags: c_ulong, mode: &mut i32) -> io::Result<Vec<c_ulong>> {
    let e = io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::EINVAL) {
        return Err(e);
    }
    let mut bits = 2 * WORD_BITS;
    loop {
        let mut words = vec![0 as c_ulong; bits / WORD_BITS];
        // SAFETY: `mode` and the mask buffer are writable and sized as passed.
        let ret = unsafe {
            libc::syscall(
                libc::SYS_get_mempolicy,
                mode as *mut libc::c_int,
                words.as_mut_ptr(),
                bits as c_ulong,
                addr,
                flags,
            )
        };
        match check(ret) {
            Ok(_) => return Ok(words),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && bits < MAX_NODE_MASK_BITS => {
                bits *= 2;
            }
            Err(e) => return Err(e),
        }
    }
}

/// `mbind(addr, len, mode, nodes, flags)`.
pub(crate) fn mbind(
    addr: *const u8,
    len: usize,
    mode: i32,
    nodes: Option<&[c_ulong]>,
    flags: c_ulong,
) -> io::Result<()> {
    let (ptr, maxnode) = match nodes {
        Some(n) => (n.as_ptr(), n.len() * WORD_BITS + 1),
        None => (std::ptr::null(), 0),
    };
    // SAFETY: mbind only changes the policy of the range; the kernel
    // checks that it is mapped and reads `maxnode - 1` bits from `ptr`.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            addr,
            len as c_ulong,
            mode as c_ulong,
            ptr,
            maxnode as c_ulong,
            flags as libc::c_uint,
        )
    };
    check(ret).map(|_| ())
}

/// `migrate_pages(pid, old, new)`: returns the number of pages that
/// could not be moved.
pub(crate) fn migrate_pages(pid: i32, old: &[c_ulong], new: &[c_ulong]) -> io::Result<usize> {
    let n = old.len().max(new.len());
    let mut o = old.to_vec();
    o.resize(n, 0);
    let mut w = new.to_vec();
    w.resize(n, 0);
    // SAFETY: both masks hold `n` words, read as `n * BITS` bits.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_migrate_pages,
            pid as libc::pid_t,
            (n * WORD_BITS + 1) as c_ulong,
            o.as_ptr(),
            w.as_ptr(),
        )
    };
    check(ret).map(|n| n as usize)
}

/// `move_pages(0, pages, nodes, status, flags)` on the calling process:
/// with `nodes` absent, only reports where each page is (a node number
/// or a negative errno such as `-ENOENT` for a page never touched).
pub(crate) fn move_pages(
    pages: &[*const u8],
    nodes: Option<&[libc::c_int]>,
    flags: libc::c_int,
) -> io::Result<Vec<libc::c_int>> {
    let mut status = vec![0 as libc::c_int; pages.len()];
    if let Some(n) = nodes {
        assert_eq!(n.len(), pages.len(), "one node per page");
    }
    // SAFETY: the page, node and status arrays all hold `pages.len()` entries.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            0 as libc::pid_t,
            pages.len() as c_ulong,
            pages.as_ptr(),
            nodes.map_or(std::ptr::null(), |n| n.as_ptr()),
            status.as_mut_ptr(),
            flags,
        )
    };
    check(ret).map(|_| status)
}

/// The system's page size.
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 { p as usize } else { 4096 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wloc_core::CpuSet;

    #[test]
    fn kernel_masks_round_trip() {
        let s = CpuSet::from_bitmap(Bitmap::parse_list("0,5,63-65,200").unwrap());
        let w = to_kernel_mask(&s, 0);
        assert_eq!(w.len(), 201usize.div_ceil(WORD_BITS));
        assert_eq!(from_kernel_mask::<wloc_core::bitmap::CpuKind>(&w), s);
        assert!(to_kernel_mask(&CpuSet::new(), 0).len() == 1);
        assert_eq!(
            to_kernel_mask(&CpuSet::new(), 130).len(),
            130usize.div_ceil(WORD_BITS)
        );
    }

    #[test]
    fn reads_own_affinity() {
        let s: CpuSet = sched_getaffinity(0).unwrap();
        assert!(!s.is_empty());
        let cpu = getcpu().unwrap();
        assert!(s.is_set(cpu));
    }
}
