//! `hwloc/shmem.h`: sharing a topology between processes through a file.
//!
//! hwloc copies its topology structures into a file mapped at one fixed
//! address that every process must be able to map too. wloc writes its
//! topology image instead ([`wloc_image`]), which holds no address at
//! all: it reads the same wherever it lies. So the address and length the
//! caller negotiates are checked as hwloc does (page-aligned; the adopter
//! must pass what the writer passed, recorded in the segment's header)
//! but never need to be free: no call fails with `EBUSY`, and a process
//! may adopt the same segment any number of times.
//!
//! The adopter reads the segment into its own memory rather than mapping
//! it: like every image reader of wloc, it never maps a file that another
//! process may truncate (a mapped page cut off raises `SIGBUS`). The
//! adopted topology is an ordinary topology of the adopting process,
//! destroyed with `hwloc_topology_destroy`. hwloc documents adopted
//! topologies as read-only; here a change affects only that process's
//! copy.
//!
//! The segment, at `fileoffset` and `length` bytes long (the file is
//! extended to its end, as hwloc does):
//!
//! | bytes  | field |
//! | ------ | ----- |
//! | 0..4   | header version, 1 (hwloc's) |
//! | 4..8   | header length, 48 (hwloc's is 24: each refuses the other's file with `EINVAL`) |
//! | 8..16  | mapping address given to the writer |
//! | 16..24 | mapping length given to the writer |
//! | 24..32 | magic `wlocshm1` |
//! | 32..40 | length of the topology image |
//! | 40..48 | length of the extras |
//!
//! then the image, then the extras: what hwloc's copy keeps that the
//! image does not hold (topology flags, the topology's and objects'
//! userdata pointers, the support flags, the type filters).

use std::os::raw::{c_int, c_ulong, c_void};

use wloc_core::topology::TypeFilter;
use wloc_core::{ObjType, Topology};

use crate::ffi::{fail, guard};
use crate::handle::{hwloc_topology, hwloc_topology_t};
use crate::load::new_loaded;
use crate::source::Source;
use crate::types::{
    hwloc_topology_cpubind_support, hwloc_topology_discovery_support,
    hwloc_topology_membind_support, hwloc_topology_misc_support,
};

/// `HWLOC_SHMEM_HEADER_VERSION`.
const HEADER_VERSION: u32 = 1;
/// Length of our segment header.
const HEADER_LEN: usize = 48;
/// Tells our segments from hwloc's and from anything else.
const MAGIC: [u8; 8] = *b"wlocshm1";

/// A failure: the `errno` hwloc sets.
type Res<T> = Result<T, c_int>;

/// The system's page size.
fn page_size() -> u64 {
    wloc_bind::raw::page_size() as u64
}

/// Checks the arguments hwloc requires page-aligned.
fn check_aligned(fileoffset: u64, addr: *mut c_void, length: usize) -> Res<()> {
    let page = page_size();
    let aligned = |v: u64| v.is_multiple_of(page);
    if aligned(fileoffset)
        && aligned(addr as usize as u64)
        && aligned(length as u64)
        && i64::try_from(fileoffset).is_ok()
    {
        Ok(())
    } else {
        Err(libc::EINVAL)
    }
}

/// The raw bytes of a support structure (`repr(C)`, bytes only).
fn support_bytes<T: Copy>(s: &T) -> &[u8] {
    // SAFETY: T is one of hwloc's support structures: repr(C) structs of
    // unsigned chars, without padding.
    unsafe { std::slice::from_raw_parts(s as *const T as *const u8, std::mem::size_of::<T>()) }
}

/// Fills a support structure from its raw bytes.
fn set_support<T: Copy>(s: &mut T, bytes: &[u8]) {
    let n = std::mem::size_of::<T>().min(bytes.len());
    // SAFETY: as support_bytes; every byte value is valid for a c_uchar.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), s as *mut T as *mut u8, n) };
}

const DISCOVERY_LEN: usize = std::mem::size_of::<hwloc_topology_discovery_support>();
const CPUBIND_LEN: usize = std::mem::size_of::<hwloc_topology_cpubind_support>();
const MEMBIND_LEN: usize = std::mem::size_of::<hwloc_topology_membind_support>();
const MISC_LEN: usize = std::mem::size_of::<hwloc_topology_misc_support>();
const SUPPORT_LEN: usize = DISCOVERY_LEN + CPUBIND_LEN + MEMBIND_LEN + MISC_LEN;

fn filter_code(f: TypeFilter) -> u8 {
    match f {
        TypeFilter::KeepAll => 0,
        TypeFilter::KeepNone => 1,
        TypeFilter::KeepStructure => 2,
        TypeFilter::KeepImportant => 3,
    }
}

fn filter_of(c: u8) -> Option<TypeFilter> {
    Some(match c {
        0 => TypeFilter::KeepAll,
        1 => TypeFilter::KeepNone,
        2 => TypeFilter::KeepStructure,
        3 => TypeFilter::KeepImportant,
        _ => return None,
    })
}

/// What the image does not hold and hwloc's copy keeps.
#[derive(Debug, PartialEq)]
struct Extras {
    flags: u64,
    userdata: u64,
    support: [u8; SUPPORT_LEN],
    filters: Vec<u8>,
    /// (gp_index, userdata pointer) of every object with userdata.
    obj_userdata: Vec<(u64, u64)>,
}

impl Extras {
    fn of(t: &hwloc_topology) -> Extras {
        let mut support = [0u8; SUPPORT_LEN];
        // SAFETY: a loaded topology's support pointers are its own parts.
        let parts: [&[u8]; 4] = unsafe {
            [
                support_bytes(&*t.support.discovery),
                support_bytes(&*t.support.cpubind),
                support_bytes(&*t.support.membind),
                support_bytes(&*t.support.misc),
            ]
        };
        let mut at = 0;
        for p in parts {
            support[at..at + p.len()].copy_from_slice(p);
            at += p.len();
        }
        let obj_userdata = t
            .model
            .iter_dfs()
            .into_iter()
            .filter_map(|id| {
                let p = t.ptr_of(id);
                // SAFETY: ptr_of gives the live C object of a live id.
                let ud = unsafe { p.as_ref() }?.userdata;
                (!ud.is_null()).then(|| (t.model.obj(id).gp_index, ud as usize as u64))
            })
            .collect();
        Extras {
            flags: t.flags,
            userdata: t.userdata as usize as u64,
            support,
            filters: ObjType::ALL
                .iter()
                .map(|&ty| filter_code(t.model.type_filter(ty)))
                .collect(),
            obj_userdata,
        }
    }

    fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&self.flags.to_le_bytes());
        v.extend_from_slice(&self.userdata.to_le_bytes());
        v.extend_from_slice(&self.support);
        v.push(self.filters.len() as u8);
        v.extend_from_slice(&self.filters);
        v.extend_from_slice(&(self.obj_userdata.len() as u64).to_le_bytes());
        for (gp, ud) in &self.obj_userdata {
            v.extend_from_slice(&gp.to_le_bytes());
            v.extend_from_slice(&ud.to_le_bytes());
        }
        v
    }

    /// Parses extras; `None` when they are malformed.
    fn parse(mut b: &[u8]) -> Option<Extras> {
        fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
            let (head, tail) = (b.get(..n)?, b.get(n..)?);
            *b = tail;
            Some(head)
        }
        let u64_of = |b: &mut &[u8]| -> Option<u64> {
            Some(u64::from_le_bytes(take(b, 8)?.try_into().ok()?))
        };
        // Only the flags hwloc defines: a damaged or forged file cannot
        // set others.
        let flags = u64_of(&mut b)? & crate::handle::ALL_FLAGS;
        let userdata = u64_of(&mut b)?;
        let support = take(&mut b, SUPPORT_LEN)?.try_into().ok()?;
        let nfilters = *take(&mut b, 1)?.first()? as usize;
        let filters = take(&mut b, nfilters)?.to_vec();
        let n = usize::try_from(u64_of(&mut b)?).ok()?;
        if n > b.len() / 16 {
            return None;
        }
        let mut obj_userdata = Vec::with_capacity(n);
        for _ in 0..n {
            obj_userdata.push((u64_of(&mut b)?, u64_of(&mut b)?));
        }
        b.is_empty().then_some(Extras {
            flags,
            userdata,
            support,
            filters,
            obj_userdata,
        })
    }
}

/// The segment of a topology: header, image, extras.
fn segment(t: &hwloc_topology, addr: u64, length: u64) -> Vec<u8> {
    let image = wloc_image::to_bytes(&t.model);
    let extras = Extras::of(t).to_bytes();
    let mut v = Vec::with_capacity(HEADER_LEN + image.len() + extras.len());
    v.extend_from_slice(&HEADER_VERSION.to_le_bytes());
    v.extend_from_slice(&(HEADER_LEN as u32).to_le_bytes());
    v.extend_from_slice(&addr.to_le_bytes());
    v.extend_from_slice(&length.to_le_bytes());
    v.extend_from_slice(&MAGIC);
    v.extend_from_slice(&(image.len() as u64).to_le_bytes());
    v.extend_from_slice(&(extras.len() as u64).to_le_bytes());
    v.extend_from_slice(&image);
    v.extend_from_slice(&extras);
    v
}

/// `length` rounded up to whole pages.
fn page_round(length: usize) -> usize {
    let page = page_size() as usize;
    length.div_ceil(page) * page
}

/// `hwloc_shmem_topology_get_length`: the segment's length, in whole
/// pages.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_shmem_topology_get_length(
    topology: hwloc_topology_t,
    lengthp: *mut usize,
    flags: c_ulong,
) -> c_int {
    entry!(topology, -1, |h| {
        if flags != 0 || lengthp.is_null() {
            return fail(libc::EINVAL);
        }
        let t = match h.loaded_or_einval() {
            Ok(t) => t,
            Err(e) => return fail(e),
        };
        // SAFETY: checked non-NULL; the caller gives a place for it.
        unsafe { *lengthp = page_round(segment(t, 0, 0).len()) };
        0
    })
}

/// The caller's descriptor as a [`File`](std::fs::File) that is never
/// closed: the file operations below are the standard library's, not
/// system calls of this library's own.
///
/// # Safety
/// `fd` is open for the whole use of the returned value (hwloc's
/// contract for the shmem functions' descriptor).
unsafe fn callers_file(fd: c_int) -> std::mem::ManuallyDrop<std::fs::File> {
    use std::os::fd::FromRawFd;
    // SAFETY: open for the call (above); ManuallyDrop never closes it.
    std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) })
}

/// hwloc's `errno` for a failed file operation: the system's, else `EIO`.
fn errno_of(e: &std::io::Error) -> c_int {
    e.raw_os_error().unwrap_or(libc::EIO)
}

/// Writes all of `bytes` at `offset` of `fd`.
fn pwrite_all(fd: c_int, bytes: &[u8], offset: u64) -> Res<()> {
    use std::os::unix::fs::FileExt;
    libc::off_t::try_from(offset).map_err(|_| libc::EINVAL)?;
    // SAFETY: the caller's descriptor, open for this call.
    let file = unsafe { callers_file(fd) };
    file.write_all_at(bytes, offset).map_err(|e| errno_of(&e))
}

/// The size of the file behind `fd`.
fn file_size(fd: c_int) -> Res<u64> {
    // SAFETY: the caller's descriptor, open for this call.
    let file = unsafe { callers_file(fd) };
    file.metadata().map(|m| m.len()).map_err(|_| libc::EINVAL)
}

/// Reads `len` bytes at `offset` of `fd`; a file ending before is
/// `EINVAL` (not a segment written for these arguments).
fn pread_exact(fd: c_int, len: usize, offset: u64) -> Res<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    libc::off_t::try_from(offset).map_err(|_| libc::EINVAL)?;
    let mut buf = vec![0u8; len];
    // SAFETY: the caller's descriptor, open for this call.
    let file = unsafe { callers_file(fd) };
    match file.read_exact_at(&mut buf, offset) {
        Ok(()) => Ok(buf),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(libc::EINVAL),
        Err(e) => Err(errno_of(&e)),
    }
}

fn write_impl(
    t: &hwloc_topology,
    fd: c_int,
    fileoffset: u64,
    addr: *mut c_void,
    length: usize,
) -> Res<()> {
    check_aligned(fileoffset, addr, length)?;
    let seg = segment(t, addr as usize as u64, length as u64);
    // The length must come from hwloc_shmem_topology_get_length for this
    // topology unchanged.
    if seg.len() > length {
        return Err(libc::EINVAL);
    }
    pwrite_all(fd, &seg, fileoffset)?;
    let end = fileoffset
        .checked_add(length as u64)
        .filter(|e| libc::off_t::try_from(*e).is_ok())
        .ok_or(libc::EINVAL)?;
    // SAFETY: the caller's descriptor, open for this call.
    let file = unsafe { callers_file(fd) };
    file.set_len(end).map_err(|e| errno_of(&e))
}

/// `hwloc_shmem_topology_write`: the segment goes into `fd` at
/// `fileoffset`. The address is recorded for the adopters' check, never
/// mapped (see the module documentation).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_shmem_topology_write(
    topology: hwloc_topology_t,
    fd: c_int,
    fileoffset: u64,
    mmap_address: *mut c_void,
    length: usize,
    flags: c_ulong,
) -> c_int {
    entry!(topology, -1, |h| {
        if flags != 0 {
            return fail(libc::EINVAL);
        }
        let r = h
            .loaded_or_einval()
            .and_then(|t| write_impl(t, fd, fileoffset, mmap_address, length));
        match r {
            Ok(()) => 0,
            Err(e) => fail(e),
        }
    })
}

/// Reads and checks a segment, and builds its topology.
fn adopt_impl(
    fd: c_int,
    fileoffset: u64,
    addr: *mut c_void,
    length: usize,
) -> Res<hwloc_topology_t> {
    check_aligned(fileoffset, addr, length)?;
    let h = pread_exact(fd, HEADER_LEN, fileoffset)?;
    let u32_at = |o: usize| u32::from_le_bytes(h[o..o + 4].try_into().expect("4 bytes"));
    let u64_at = |o: usize| u64::from_le_bytes(h[o..o + 8].try_into().expect("8 bytes"));
    if u32_at(0) != HEADER_VERSION
        || u32_at(4) as usize != HEADER_LEN
        || h[24..32] != MAGIC
        || u64_at(8) != addr as usize as u64
        || u64_at(16) != length as u64
    {
        return Err(libc::EINVAL);
    }
    let (image_len, extras_len) = (u64_at(32), u64_at(40));
    // The body is read into memory: it must be in the file and no larger
    // than an image may be (the caller's mapping length alone could ask
    // for more memory than there is, and a failed allocation aborts).
    let file_len = file_size(fd)?;
    let body = image_len
        .checked_add(extras_len)
        .filter(|&b| b.saturating_add(HEADER_LEN as u64) <= length as u64)
        .filter(|_| {
            image_len <= wloc_image::MAX_IMAGE_BYTES && extras_len <= wloc_image::MAX_IMAGE_BYTES
        })
        .filter(|&b| {
            fileoffset
                .checked_add(HEADER_LEN as u64)
                .and_then(|o| o.checked_add(b))
                .is_some_and(|end| end <= file_len)
        })
        .ok_or(libc::EINVAL)? as usize;
    let body = pread_exact(fd, body, fileoffset + HEADER_LEN as u64)?;
    let (image, extras) = body.split_at(image_len as usize);
    let extras = Extras::parse(extras).ok_or(libc::EINVAL)?;
    let model = wloc_image::adopt_bytes(image)
        .and_then(|a| a.to_topology())
        .map_err(|_| libc::EINVAL)?;
    Ok(adopted(model, &extras))
}

/// A new handle around an adopted model, with what the writer's topology
/// had beside it.
fn adopted(mut model: Topology, x: &Extras) -> hwloc_topology_t {
    for (&ty, &code) in ObjType::ALL.iter().zip(&x.filters) {
        if let Some(f) = filter_of(code) {
            let _ = model.set_type_filter(ty, f);
        }
    }
    let thissystem = model.is_thissystem;
    // No Source of its own: an adopted topology is loaded already, so its
    // source is never loaded from, and its discovery support (the only
    // other use of the source) is the writer's, set below.
    let h = new_loaded(model, Source::Default, x.flags);
    // SAFETY: new_loaded returns a live, loaded handle nobody else holds.
    let t = unsafe { &mut *h };
    t.userdata = x.userdata as usize as *mut c_void;
    for &(gp, ud) in &x.obj_userdata {
        if let Some(id) = t.model.obj_by_gp_index(gp) {
            // SAFETY: the live C object of a live id.
            if let Some(o) = unsafe { t.ptr_of(id).as_mut() } {
                o.userdata = ud as usize as *mut c_void;
            }
        }
    }
    // As hwloc: the writer's discovery and misc support; binding support
    // is this process's on this system, the writer's record otherwise.
    let s = &x.support;
    // SAFETY: the handle's own support parts.
    unsafe {
        set_support(&mut *t.support.discovery, &s[..DISCOVERY_LEN]);
        set_support(&mut *t.support.misc, &s[SUPPORT_LEN - MISC_LEN..]);
        if !thissystem {
            set_support(&mut *t.support.cpubind, &s[DISCOVERY_LEN..]);
            set_support(&mut *t.support.membind, &s[DISCOVERY_LEN + CPUBIND_LEN..]);
        }
    }
    t.support_changed();
    h
}

/// `hwloc_shmem_topology_adopt`: a new topology from a segment that
/// `hwloc_shmem_topology_write` wrote with the same offset, address and
/// length (`EINVAL` otherwise, and for a file that holds no wloc segment
/// there, such as one of hwloc's own).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_shmem_topology_adopt(
    topologyp: *mut hwloc_topology_t,
    fd: c_int,
    fileoffset: u64,
    mmap_address: *mut c_void,
    length: usize,
    flags: c_ulong,
) -> c_int {
    guard(-1, || {
        if flags != 0 || topologyp.is_null() {
            return fail(libc::EINVAL);
        }
        match adopt_impl(fd, fileoffset, mmap_address, length) {
            Ok(h) => {
                // SAFETY: checked non-NULL; the caller gives a place for it.
                unsafe { *topologyp = h };
                0
            }
            Err(e) => fail(e),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handle::topo_mut;
    use crate::test_support::synthetic;
    use crate::topology::hwloc_topology_destroy;
    use std::os::fd::AsRawFd;

    fn errno() -> c_int {
        // SAFETY: the calling thread's errno slot.
        unsafe { *libc::__errno_location() }
    }

    fn temp_file(name: &str) -> std::fs::File {
        let p = std::env::temp_dir().join(format!("wloc-capi-shmem-{}-{name}", std::process::id()));
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&p)
            .unwrap();
        let _ = std::fs::remove_file(&p);
        f
    }

    const ADDR: usize = 0x7000_0000_0000;

    /// A header alone that names a body as long as the caller's mapping
    /// (64 GiB) is refused with EINVAL: the body is not in the file, and
    /// reading it would have asked for more memory than there is.
    #[test]
    fn a_header_naming_a_body_the_file_lacks_is_refused() {
        let length: usize = 1 << 36;
        let mut h = Vec::with_capacity(HEADER_LEN);
        h.extend_from_slice(&HEADER_VERSION.to_le_bytes());
        h.extend_from_slice(&(HEADER_LEN as u32).to_le_bytes());
        h.extend_from_slice(&(ADDR as u64).to_le_bytes());
        h.extend_from_slice(&(length as u64).to_le_bytes());
        h.extend_from_slice(&MAGIC);
        h.extend_from_slice(&((length - HEADER_LEN) as u64).to_le_bytes());
        h.extend_from_slice(&0u64.to_le_bytes());
        assert_eq!(h.len(), HEADER_LEN);
        let f = temp_file("short");
        std::io::Write::write_all(&mut &f, &h).unwrap();
        let r = adopt_impl(f.as_raw_fd(), 0, ADDR as *mut c_void, length);
        assert_eq!(r.err(), Some(libc::EINVAL));
    }

    #[test]
    fn written_topologies_are_adopted_anywhere_and_destroyed() {
        let t = synthetic("pack:2 core:2 pu:2");
        // SAFETY: the handle made above.
        let th = unsafe { topo_mut(t) }.unwrap();
        th.userdata = 0x1234 as *mut c_void;
        let root = th.ptr_of(th.model.root());
        // SAFETY: the root's live C object.
        unsafe { (*root).userdata = 0x5678 as *mut c_void };
        let f = temp_file("roundtrip");
        let page = page_size();
        let mut len = 0usize;
        // SAFETY: live handles, a writable file and places for results.
        unsafe {
            assert_eq!(hwloc_shmem_topology_get_length(t, &mut len, 0), 0);
            assert_eq!(len as u64 % page, 0);
            assert!(len >= HEADER_LEN);
            let addr = ADDR as *mut c_void;
            assert_eq!(
                hwloc_shmem_topology_write(t, f.as_raw_fd(), page, addr, len, 0),
                0
            );
            assert_eq!(f.metadata().unwrap().len(), page + len as u64);
            // Twice in one process: nothing is mapped at the address.
            for _ in 0..2 {
                let mut a: hwloc_topology_t = std::ptr::null_mut();
                assert_eq!(
                    hwloc_shmem_topology_adopt(&mut a, f.as_raw_fd(), page, addr, len, 0),
                    0
                );
                let at = topo_mut(a).unwrap();
                assert_eq!(at.model.objs_by_type(ObjType::PU).len(), 8);
                assert_eq!(at.userdata as usize, 0x1234);
                let r = at.ptr_of(at.model.root());
                assert_eq!((*r).userdata as usize, 0x5678);
                assert_eq!(at.flags, th.flags);
                hwloc_topology_destroy(a);
            }
            hwloc_topology_destroy(t);
        }
    }

    #[test]
    fn mismatched_or_foreign_segments_are_einval() {
        let t = synthetic("pu:4");
        let f = temp_file("foreign");
        let page = page_size() as usize;
        let mut len = 0usize;
        let addr = ADDR as *mut c_void;
        let mut a: hwloc_topology_t = std::ptr::null_mut();
        // SAFETY: live handles, a writable file and places for results.
        unsafe {
            assert_eq!(hwloc_shmem_topology_get_length(t, &mut len, 0), 0);
            // Unaligned offset, address or length; flags; a short length.
            for (off, ad, l) in [(1, ADDR, len), (0, ADDR + 8, len), (0, ADDR, len + 1)] {
                assert_eq!(
                    hwloc_shmem_topology_write(t, f.as_raw_fd(), off, ad as *mut c_void, l, 0),
                    -1
                );
                assert_eq!(errno(), libc::EINVAL);
            }
            assert_eq!(
                hwloc_shmem_topology_write(t, f.as_raw_fd(), 0, addr, len, 1),
                -1
            );
            assert_eq!(hwloc_shmem_topology_get_length(t, &mut len, 1), -1);
            assert_eq!(
                hwloc_shmem_topology_write(t, f.as_raw_fd(), 0, addr, 0, 0),
                -1
            );
            assert_eq!(errno(), libc::EINVAL);
            assert_eq!(
                hwloc_shmem_topology_write(t, f.as_raw_fd(), 0, addr, len, 0),
                0
            );
            // Another address or length than the writer's.
            let other = (ADDR + page) as *mut c_void;
            assert_eq!(
                hwloc_shmem_topology_adopt(&mut a, f.as_raw_fd(), 0, other, len, 0),
                -1
            );
            assert_eq!(errno(), libc::EINVAL);
            assert_eq!(
                hwloc_shmem_topology_adopt(&mut a, f.as_raw_fd(), 0, addr, len + page, 0),
                -1
            );
            assert_eq!(errno(), libc::EINVAL);
            // hwloc's own header (24 bytes long) is not ours.
            let mut hw = Vec::new();
            hw.extend_from_slice(&1u32.to_le_bytes());
            hw.extend_from_slice(&24u32.to_le_bytes());
            hw.extend_from_slice(&(ADDR as u64).to_le_bytes());
            hw.extend_from_slice(&(len as u64).to_le_bytes());
            hw.resize(len, 0);
            pwrite_all(f.as_raw_fd(), &hw, 0).unwrap();
            assert_eq!(
                hwloc_shmem_topology_adopt(&mut a, f.as_raw_fd(), 0, addr, len, 0),
                -1
            );
            assert_eq!(errno(), libc::EINVAL);
            // An empty file.
            let e = temp_file("empty");
            assert_eq!(
                hwloc_shmem_topology_adopt(&mut a, e.as_raw_fd(), 0, addr, len, 0),
                -1
            );
            assert_eq!(errno(), libc::EINVAL);
            assert!(a.is_null());
            hwloc_topology_destroy(t);
        }
    }

    #[test]
    fn a_damaged_image_is_refused() {
        let t = synthetic("pack:2 pu:2");
        let f = temp_file("damaged");
        let mut len = 0usize;
        let addr = ADDR as *mut c_void;
        let mut a: hwloc_topology_t = std::ptr::null_mut();
        // SAFETY: live handles, a writable file and places for results.
        unsafe {
            assert_eq!(hwloc_shmem_topology_get_length(t, &mut len, 0), 0);
            assert_eq!(
                hwloc_shmem_topology_write(t, f.as_raw_fd(), 0, addr, len, 0),
                0
            );
            // Flip a byte of the image body (after its 64-byte header).
            let at = (HEADER_LEN + 64 + 3) as u64;
            let b = pread_exact(f.as_raw_fd(), 1, at).unwrap();
            pwrite_all(f.as_raw_fd(), &[b[0] ^ 0xff], at).unwrap();
            assert_eq!(
                hwloc_shmem_topology_adopt(&mut a, f.as_raw_fd(), 0, addr, len, 0),
                -1
            );
            assert_eq!(errno(), libc::EINVAL);
            hwloc_topology_destroy(t);
        }
    }

    #[test]
    fn extras_round_trip_and_refuse_garbage() {
        let x = Extras {
            flags: 3,
            userdata: 9,
            support: [1; SUPPORT_LEN],
            filters: vec![0, 1, 2, 3],
            obj_userdata: vec![(1, 2), (3, 4)],
        };
        let b = x.to_bytes();
        assert_eq!(Extras::parse(&b), Some(x));
        assert_eq!(Extras::parse(&b[..b.len() - 1]), None);
        let mut long = b.clone();
        long.push(0);
        assert_eq!(Extras::parse(&long), None);
        assert_eq!(Extras::parse(&[]), None);
    }
}
