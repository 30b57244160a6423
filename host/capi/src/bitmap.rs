//! `hwloc/bitmap.h`: the bitmap API over wloc's [`Bitmap`].
//!
//! Every C bitmap is a boxed [`hwloc_bitmap_s`] holding a canonical
//! [`Bitmap`], so results never depend on how a set was built (hwloc's
//! `ulongs_count`). Functions whose result may alias an input compute the
//! new value from shared views first and store it afterwards, except the
//! combinations whose result is their first input: as in hwloc, those
//! change it in place (combining into a large set makes no copy of it).
//!
//! NULL bitmaps, which hwloc does not accept, give the function's error
//! value with `errno` = `EINVAL`: -1 for `int` functions (predicates
//! included), 0 for `unsigned long` ones, NULL for constructors.
//!
//! Every function whose storage the caller sizes (an index, a word index,
//! a copy or a combination of large sets) grows it fallibly: when memory
//! runs out it returns -1 (NULL for `hwloc_bitmap_dup`) with `errno` =
//! `ENOMEM` and leaves the set as it was, as hwloc does, instead of
//! aborting the process.

use std::cmp::Ordering;
use std::os::raw::{c_char, c_int, c_uint, c_ulong};

use wloc_core::bitmap::{AllocError, SetOp};
use wloc_core::{Bitmap, ObjType};

use crate::ffi::{c_str, c_strdup, fail, guard, set_errno, snprintf_out};
use crate::handle::{hwloc_topology, hwloc_topology_t};
use crate::types::{hwloc_bitmap_t, hwloc_const_bitmap_t};

// hwloc's words are `unsigned long`; wloc's are u64: they must match.
const _: () = assert!(std::mem::size_of::<c_ulong>() == 8);

/// Number of 64-bit words the 32-bit index space spans: a word index at
/// or above it names no addressable index.
const MAX_WORDS: c_uint = 1 << 26;

pub use crate::types::hwloc_bitmap_s;
pub(crate) use crate::types::{free_raw, new_raw};

/// The set behind a C bitmap, `None` for NULL.
///
/// # Safety
/// `b` is NULL or a live bitmap from this library; the reference must be
/// dropped before the same bitmap is modified.
unsafe fn get<'a>(b: hwloc_const_bitmap_t) -> Option<&'a Bitmap> {
    // SAFETY: see above.
    unsafe { b.as_ref() }.map(hwloc_bitmap_s::bits)
}

/// The C bitmap, mutably, `None` for NULL. Its set is changed through
/// [`hwloc_bitmap_s::update`] or [`hwloc_bitmap_s::set_bits`], which keep
/// hwloc's layout of it current.
///
/// # Safety
/// `b` is NULL or a live bitmap from this library, with no other live
/// reference to it.
unsafe fn get_mut<'a>(b: hwloc_bitmap_t) -> Option<&'a mut hwloc_bitmap_s> {
    // SAFETY: see above.
    unsafe { b.as_mut() }
}

/// Replaces the set of `res` (NULL gives -1/EINVAL).
///
/// # Safety
/// `res` is NULL or a live bitmap with no live reference to it.
unsafe fn store(res: hwloc_bitmap_t, value: Bitmap) -> c_int {
    // SAFETY: see above.
    match unsafe { get_mut(res) } {
        Some(b) => {
            b.set_bits(value);
            0
        }
        None => fail(libc::EINVAL),
    }
}

/// Modifies the set of `b` in place (NULL gives -1/EINVAL).
///
/// # Safety
/// As [`store`].
unsafe fn modify(b: hwloc_bitmap_t, f: impl FnOnce(&mut Bitmap)) -> c_int {
    // SAFETY: see above.
    match unsafe { get_mut(b) } {
        Some(b) => {
            b.update(f);
            0
        }
        None => fail(libc::EINVAL),
    }
}

/// [`store`] of a value that may have failed to allocate (-1/ENOMEM,
/// `res` unchanged).
///
/// # Safety
/// As [`store`].
unsafe fn try_store(res: hwloc_bitmap_t, value: Result<Bitmap, AllocError>) -> c_int {
    match value {
        // SAFETY: see above.
        Ok(v) => unsafe { store(res, v) },
        Err(AllocError) => fail(libc::ENOMEM),
    }
}

/// [`modify`] with a change that may fail to allocate (-1/ENOMEM; the
/// fallible methods then leave the set unchanged).
///
/// # Safety
/// As [`store`].
unsafe fn try_modify(
    b: hwloc_bitmap_t,
    f: impl FnOnce(&mut Bitmap) -> Result<(), AllocError>,
) -> c_int {
    // SAFETY: see above.
    match unsafe { get_mut(b) } {
        Some(b) => match b.update(f) {
            Ok(()) => 0,
            Err(AllocError) => fail(libc::ENOMEM),
        },
        None => fail(libc::EINVAL),
    }
}

/// An int query on one set (NULL gives -1/EINVAL).
///
/// # Safety
/// `b` is NULL or a live bitmap.
unsafe fn query(b: hwloc_const_bitmap_t, f: impl FnOnce(&Bitmap) -> c_int) -> c_int {
    // SAFETY: see above.
    match unsafe { get(b) } {
        Some(bits) => f(bits),
        None => fail(libc::EINVAL),
    }
}

/// An int query on two sets (a NULL one gives -1/EINVAL).
///
/// # Safety
/// `a` and `b` are NULL or live bitmaps.
unsafe fn query2(
    a: hwloc_const_bitmap_t,
    b: hwloc_const_bitmap_t,
    f: impl FnOnce(&Bitmap, &Bitmap) -> c_int,
) -> c_int {
    // SAFETY: see above.
    match unsafe { (get(a), get(b)) } {
        (Some(x), Some(y)) => f(x, y),
        _ => fail(libc::EINVAL),
    }
}

/// `res = a op b`, or `res = !a` when `op` is `None` (`b` is then `a`);
/// `res` may be `a` or `b`. When `res` is `a`, the result is computed in
/// place, as hwloc does, so that combining into a large set needs no
/// second copy of it; otherwise a new set is made and stored.
///
/// # Safety
/// All three are NULL or live bitmaps.
unsafe fn binary(
    res: hwloc_bitmap_t,
    a: hwloc_const_bitmap_t,
    b: hwloc_const_bitmap_t,
    op: Option<SetOp>,
) -> c_int {
    if res.is_null() || a.is_null() || b.is_null() {
        return fail(libc::EINVAL);
    }
    if std::ptr::eq(res.cast_const(), a) {
        if op.is_none() || std::ptr::eq(a, b) {
            // SAFETY: `res` is live; no other reference to it is taken.
            return unsafe {
                modify(res, |x| match op {
                    None => x.invert(),
                    Some(SetOp::And | SetOp::Or) => {}
                    Some(SetOp::Xor | SetOp::AndNot) => x.clear(),
                })
            };
        }
        let op = op.expect("checked above");
        // SAFETY: `b` is a live bitmap other than `res`: the shared view
        // of it and the exclusive one of `res` do not overlap.
        let other = unsafe { get(b) }.expect("checked non-NULL");
        // SAFETY: as above.
        return unsafe { try_modify(res, |x| x.try_combine_assign(other, op)) };
    }
    // The shared views end with this statement, before `res` is written.
    // SAFETY: see above.
    let value = match unsafe { (get(a), get(b)) } {
        (Some(x), Some(y)) => match op {
            Some(op) => x.try_combine(y, op),
            None => x.try_not(),
        },
        _ => return fail(libc::EINVAL),
    };
    // SAFETY: no reference to any input is alive any more.
    unsafe { try_store(res, value) }
}

/// An index (or `None`) as hwloc's `int` result: -1 for none; indexes
/// past `INT_MAX` wrap as they do in hwloc.
fn index_result(i: Option<u32>) -> c_int {
    i.map_or(-1, |i| i as c_int)
}

/// A `prev` argument of `next`/`next_unset`: -1 (or any negative) means
/// "from the start".
fn prev_arg(prev: c_int) -> Option<u32> {
    u32::try_from(prev).ok()
}

/// An `end` argument of the range functions: -1 is infinite; other values
/// are read as `unsigned`, as hwloc does.
fn end_arg(end: c_int) -> Option<u32> {
    (end != -1).then_some(end as u32)
}

/// `Ordering` as hwloc's -1/0/1.
fn ordering_result(o: Ordering) -> c_int {
    match o {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    }
}

/// The set whose word `i` is `mask` and every other bit zero.
fn ith_word(i: c_uint, mask: c_ulong) -> Result<Bitmap, AllocError> {
    let mut b = Bitmap::new();
    b.try_set_word(i as usize, mask)?;
    Ok(b)
}

// ----- life ------------------------------------------------------------------

/// `hwloc_bitmap_alloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_alloc() -> hwloc_bitmap_t {
    guard(std::ptr::null_mut(), || new_raw(Bitmap::new()))
}

/// `hwloc_bitmap_alloc_full`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_alloc_full() -> hwloc_bitmap_t {
    guard(std::ptr::null_mut(), || new_raw(Bitmap::full()))
}

/// `hwloc_bitmap_free`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_free(bitmap: hwloc_bitmap_t) {
    guard((), || free_raw(bitmap))
}

/// `hwloc_bitmap_dup`: NULL for NULL, as in hwloc, and NULL with `errno`
/// = `ENOMEM` when the copy cannot be allocated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_dup(bitmap: hwloc_const_bitmap_t) -> hwloc_bitmap_t {
    guard(std::ptr::null_mut(), || {
        // SAFETY: the caller passes NULL or a live bitmap.
        match unsafe { get(bitmap) }.map(Bitmap::try_clone) {
            None => std::ptr::null_mut(),
            Some(Ok(b)) => new_raw(b),
            Some(Err(AllocError)) => {
                set_errno(libc::ENOMEM);
                std::ptr::null_mut()
            }
        }
    })
}

/// `hwloc_bitmap_copy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_copy(
    dst: hwloc_bitmap_t,
    src: hwloc_const_bitmap_t,
) -> c_int {
    guard(-1, || {
        // SAFETY: the caller passes NULL or live bitmaps; the copy is taken
        // before `dst` is written (they may be the same).
        let Some(value) = (unsafe { get(src) }).map(Bitmap::try_clone) else {
            return fail(libc::EINVAL);
        };
        if dst.is_null() {
            return fail(libc::EINVAL);
        }
        // SAFETY: as above.
        unsafe { try_store(dst, value) }
    })
}

// ----- strings -----------------------------------------------------------------

/// The three string forms of hwloc.
#[derive(Clone, Copy)]
enum Form {
    Hwloc,
    List,
    Taskset,
}

impl Form {
    fn print(self, b: &Bitmap) -> String {
        match self {
            Form::Hwloc => b.to_hwloc_string(),
            Form::List => b.to_list_string(),
            Form::Taskset => b.to_taskset_string(),
        }
    }

    fn parse(self, s: &str) -> Option<Bitmap> {
        match self {
            // As hwloc 2.14: the bits a chunk (or digit) after `0xf...f`
            // leaves above it belong to the infinite part (hwloc 2.9 read
            // them as whole 64-bit words: `0xf...f,0x00000003` was
            // `0-1,64-`, it is `0-1,32-` now).
            Form::Hwloc => Bitmap::parse(s).ok(),
            Form::List => Bitmap::parse_list(s).ok(),
            Form::Taskset => Bitmap::parse_taskset(s).ok(),
        }
    }
}

/// `*_snprintf`.
///
/// # Safety
/// As the C functions: `buf` holds `buflen` bytes (or is NULL).
unsafe fn snprintf(
    form: Form,
    buf: *mut c_char,
    buflen: usize,
    set: hwloc_const_bitmap_t,
) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    let Some(b) = (unsafe { get(set) }) else {
        return fail(libc::EINVAL);
    };
    let s = form.print(b);
    // SAFETY: the caller's buffer holds buflen bytes.
    unsafe { snprintf_out(buf, buflen, &s) }
}

/// `*_asprintf`: a `malloc`ed string the caller frees with `free`.
///
/// # Safety
/// `strp` is NULL or writable; `set` is NULL or a live bitmap.
unsafe fn asprintf(form: Form, strp: *mut *mut c_char, set: hwloc_const_bitmap_t) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    let Some(b) = (unsafe { get(set) }) else {
        return fail(libc::EINVAL);
    };
    if strp.is_null() {
        return fail(libc::EINVAL);
    }
    let s = form.print(b);
    let p = c_strdup(&s);
    if p.is_null() {
        return fail(libc::ENOMEM);
    }
    // SAFETY: strp is writable (checked non-NULL above).
    unsafe { *strp = p };
    c_int::try_from(s.len()).unwrap_or(c_int::MAX)
}

/// `*_sscanf`: 0, or -1 with the set emptied (as hwloc does) when the
/// string is invalid.
///
/// # Safety
/// `set` is NULL or a live bitmap; `string` NULL or NUL-terminated.
unsafe fn sscanf(form: Form, set: hwloc_bitmap_t, string: *const c_char) -> c_int {
    // SAFETY: the caller passes NULL or a NUL-terminated string.
    let Some(s) = (unsafe { c_str(string) }) else {
        return fail(libc::EINVAL);
    };
    match form.parse(&s) {
        // SAFETY: the caller passes NULL or a live bitmap.
        Some(b) => unsafe { store(set, b) },
        None => {
            // SAFETY: as above.
            if unsafe { store(set, Bitmap::new()) } == 0 {
                set_errno(libc::EINVAL);
            }
            -1
        }
    }
}

/// `hwloc_bitmap_snprintf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_snprintf(
    buf: *mut c_char,
    buflen: usize,
    bitmap: hwloc_const_bitmap_t,
) -> c_int {
    // SAFETY: the caller's contract is snprintf's.
    guard(-1, || unsafe { snprintf(Form::Hwloc, buf, buflen, bitmap) })
}

/// `hwloc_bitmap_asprintf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_asprintf(
    strp: *mut *mut c_char,
    bitmap: hwloc_const_bitmap_t,
) -> c_int {
    // SAFETY: the caller's contract is asprintf's.
    guard(-1, || unsafe { asprintf(Form::Hwloc, strp, bitmap) })
}

/// `hwloc_bitmap_sscanf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_sscanf(
    bitmap: hwloc_bitmap_t,
    string: *const c_char,
) -> c_int {
    // SAFETY: the caller passes a bitmap and a C string.
    guard(-1, || unsafe { sscanf(Form::Hwloc, bitmap, string) })
}

/// `hwloc_bitmap_list_snprintf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_list_snprintf(
    buf: *mut c_char,
    buflen: usize,
    bitmap: hwloc_const_bitmap_t,
) -> c_int {
    // SAFETY: the caller's contract is snprintf's.
    guard(-1, || unsafe { snprintf(Form::List, buf, buflen, bitmap) })
}

/// `hwloc_bitmap_list_asprintf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_list_asprintf(
    strp: *mut *mut c_char,
    bitmap: hwloc_const_bitmap_t,
) -> c_int {
    // SAFETY: the caller's contract is asprintf's.
    guard(-1, || unsafe { asprintf(Form::List, strp, bitmap) })
}

/// `hwloc_bitmap_list_sscanf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_list_sscanf(
    bitmap: hwloc_bitmap_t,
    string: *const c_char,
) -> c_int {
    // SAFETY: the caller passes a bitmap and a C string.
    guard(-1, || unsafe { sscanf(Form::List, bitmap, string) })
}

/// `hwloc_bitmap_taskset_snprintf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_taskset_snprintf(
    buf: *mut c_char,
    buflen: usize,
    bitmap: hwloc_const_bitmap_t,
) -> c_int {
    // SAFETY: the caller's contract is snprintf's.
    guard(-1, || unsafe {
        snprintf(Form::Taskset, buf, buflen, bitmap)
    })
}

/// `hwloc_bitmap_taskset_asprintf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_taskset_asprintf(
    strp: *mut *mut c_char,
    bitmap: hwloc_const_bitmap_t,
) -> c_int {
    // SAFETY: the caller's contract is asprintf's.
    guard(-1, || unsafe { asprintf(Form::Taskset, strp, bitmap) })
}

/// `hwloc_bitmap_taskset_sscanf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_taskset_sscanf(
    bitmap: hwloc_bitmap_t,
    string: *const c_char,
) -> c_int {
    // SAFETY: the caller passes a bitmap and a C string.
    guard(-1, || unsafe { sscanf(Form::Taskset, bitmap, string) })
}

// ----- building ------------------------------------------------------------------

/// `hwloc_bitmap_zero`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_zero(bitmap: hwloc_bitmap_t) {
    guard((), || {
        // SAFETY: the caller passes NULL or a live bitmap.
        unsafe { modify(bitmap, Bitmap::clear) };
    })
}

/// `hwloc_bitmap_fill`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_fill(bitmap: hwloc_bitmap_t) {
    guard((), || {
        // SAFETY: the caller passes NULL or a live bitmap.
        unsafe { modify(bitmap, Bitmap::fill) };
    })
}

/// `hwloc_bitmap_only`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_only(bitmap: hwloc_bitmap_t, id: c_uint) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(-1, || unsafe {
        try_store(bitmap, Bitmap::try_from_index(id))
    })
}

/// `hwloc_bitmap_allbut`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_allbut(bitmap: hwloc_bitmap_t, id: c_uint) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(-1, || unsafe { try_store(bitmap, Bitmap::try_all_but(id)) })
}

/// `hwloc_bitmap_from_ulong`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_from_ulong(bitmap: hwloc_bitmap_t, mask: c_ulong) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(-1, || unsafe { store(bitmap, Bitmap::from_u64(mask)) })
}

/// `hwloc_bitmap_from_ith_ulong`: -1/ENOMEM for a word past the 32-bit
/// index space (hwloc cannot allocate it either).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_from_ith_ulong(
    bitmap: hwloc_bitmap_t,
    i: c_uint,
    mask: c_ulong,
) -> c_int {
    guard(-1, || {
        if i >= MAX_WORDS {
            return fail(libc::ENOMEM);
        }
        // SAFETY: the caller passes NULL or a live bitmap.
        unsafe { try_store(bitmap, ith_word(i, mask)) }
    })
}

/// `hwloc_bitmap_from_ulongs`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_from_ulongs(
    bitmap: hwloc_bitmap_t,
    nr: c_uint,
    masks: *const c_ulong,
) -> c_int {
    guard(-1, || {
        let words: &[c_ulong] = if nr == 0 {
            &[]
        } else if masks.is_null() {
            return fail(libc::EINVAL);
        } else {
            // SAFETY: the caller's array holds nr words.
            unsafe { std::slice::from_raw_parts(masks, nr as usize) }
        };
        // SAFETY: the caller passes NULL or a live bitmap.
        unsafe { try_store(bitmap, Bitmap::try_from_words(words)) }
    })
}

// ----- modifying ---------------------------------------------------------------

/// `hwloc_bitmap_set`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_set(bitmap: hwloc_bitmap_t, id: c_uint) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(-1, || unsafe { try_modify(bitmap, |b| b.try_set(id)) })
}

/// `hwloc_bitmap_set_range`: `end` -1 is infinite.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_set_range(
    bitmap: hwloc_bitmap_t,
    begin: c_uint,
    end: c_int,
) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(-1, || unsafe {
        try_modify(bitmap, |b| b.try_set_range(begin, end_arg(end)))
    })
}

/// `hwloc_bitmap_set_ith_ulong`: replaces word `i`, keeping the rest.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_set_ith_ulong(
    bitmap: hwloc_bitmap_t,
    i: c_uint,
    mask: c_ulong,
) -> c_int {
    guard(-1, || {
        if i >= MAX_WORDS {
            return fail(libc::ENOMEM);
        }
        // SAFETY: the caller passes NULL or a live bitmap.
        unsafe { try_modify(bitmap, |b| b.try_set_word(i as usize, mask)) }
    })
}

/// `hwloc_bitmap_clr`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_clr(bitmap: hwloc_bitmap_t, id: c_uint) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(-1, || unsafe { try_modify(bitmap, |b| b.try_unset(id)) })
}

/// `hwloc_bitmap_clr_range`: `end` -1 is infinite.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_clr_range(
    bitmap: hwloc_bitmap_t,
    begin: c_uint,
    end: c_int,
) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(-1, || unsafe {
        try_modify(bitmap, |b| b.try_unset_range(begin, end_arg(end)))
    })
}

/// `hwloc_bitmap_singlify`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_singlify(bitmap: hwloc_bitmap_t) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(-1, || unsafe { modify(bitmap, Bitmap::singlify) })
}

/// Keeps, in each core that `set` intersects, only the `which`-th PU of
/// the core that is in `set` (the whole core goes when it has fewer).
/// PUs outside every core stay.
fn singlify_per_core(t: &hwloc_topology, set: &mut Bitmap, which: u32) {
    let m = &t.model;
    for core in m.objs_by_type(ObjType::Core) {
        let Some(core_set) = m.obj(core).cpuset.as_ref().map(|c| c.bitmap()) else {
            continue;
        };
        if !set.intersects(core_set) {
            continue;
        }
        let keep = core_set
            .iter()
            .filter(|&pu| set.is_set(pu))
            .nth(which as usize);
        set.and_not_assign(core_set);
        if let Some(pu) = keep {
            set.set(pu);
        }
    }
}

/// `hwloc_bitmap_singlify_per_core` (declared in `hwloc/helper.h`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_singlify_per_core(
    topology: hwloc_topology_t,
    cpuset: hwloc_bitmap_t,
    which: c_uint,
) -> c_int {
    entry!(topology, -1, |h| {
        // SAFETY: the caller passes NULL or a live topology.
        let Some(t) = h.loaded() else {
            return fail(libc::EINVAL);
        };
        // SAFETY: the caller passes NULL or a live bitmap (never one of
        // the topology's own sets, as hwloc documents for modifications).
        unsafe { modify(cpuset, |b| singlify_per_core(t, b, which)) }
    })
}

// ----- consulting --------------------------------------------------------------

/// `hwloc_bitmap_to_ulong`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_to_ulong(bitmap: hwloc_const_bitmap_t) -> c_ulong {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(0, || match unsafe { get(bitmap) } {
        Some(b) => b.word(0),
        None => {
            set_errno(libc::EINVAL);
            0
        }
    })
}

/// `hwloc_bitmap_to_ith_ulong`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_to_ith_ulong(
    bitmap: hwloc_const_bitmap_t,
    i: c_uint,
) -> c_ulong {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(0, || match unsafe { get(bitmap) } {
        Some(b) => b.word(i as usize),
        None => {
            set_errno(libc::EINVAL);
            0
        }
    })
}

/// `hwloc_bitmap_to_ulongs`: fills `masks[0..nr]`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_to_ulongs(
    bitmap: hwloc_const_bitmap_t,
    nr: c_uint,
    masks: *mut c_ulong,
) -> c_int {
    guard(-1, || {
        // SAFETY: the caller passes NULL or a live bitmap.
        let Some(b) = (unsafe { get(bitmap) }) else {
            return fail(libc::EINVAL);
        };
        if nr == 0 {
            return 0;
        }
        if masks.is_null() {
            return fail(libc::EINVAL);
        }
        // SAFETY: the caller's array holds nr words.
        let out = unsafe { std::slice::from_raw_parts_mut(masks, nr as usize) };
        for (i, w) in out.iter_mut().enumerate() {
            *w = b.word(i);
        }
        0
    })
}

/// `hwloc_bitmap_nr_ulongs`: words up to the last set index, -1 when
/// infinite.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_nr_ulongs(bitmap: hwloc_const_bitmap_t) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(-1, || unsafe {
        query(bitmap, |b| b.nr_words().map_or(-1, |n| n as c_int))
    })
}

/// `hwloc_bitmap_isset`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_isset(bitmap: hwloc_const_bitmap_t, id: c_uint) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(-1, || unsafe {
        query(bitmap, |b| c_int::from(b.is_set(id)))
    })
}

/// `hwloc_bitmap_iszero`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_iszero(bitmap: hwloc_const_bitmap_t) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(-1, || unsafe {
        query(bitmap, |b| c_int::from(b.is_empty()))
    })
}

/// `hwloc_bitmap_isfull`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_isfull(bitmap: hwloc_const_bitmap_t) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(-1, || unsafe {
        query(bitmap, |b| c_int::from(b.is_full()))
    })
}

/// `hwloc_bitmap_first`: -1 when empty.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_first(bitmap: hwloc_const_bitmap_t) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(-1, || unsafe { query(bitmap, |b| index_result(b.first())) })
}

/// `hwloc_bitmap_next`: the first index after `prev` (-1 for the first),
/// -1 if none.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_next(bitmap: hwloc_const_bitmap_t, prev: c_int) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(-1, || unsafe {
        query(bitmap, |b| index_result(b.next_set(prev_arg(prev))))
    })
}

/// `hwloc_bitmap_last`: -1 when empty or infinite.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_last(bitmap: hwloc_const_bitmap_t) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(-1, || unsafe { query(bitmap, |b| index_result(b.last())) })
}

/// `hwloc_bitmap_weight`: -1 when infinite.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_weight(bitmap: hwloc_const_bitmap_t) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(-1, || unsafe {
        query(bitmap, |b| index_result(b.weight()))
    })
}

/// `hwloc_bitmap_first_unset`: -1 when full.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_first_unset(bitmap: hwloc_const_bitmap_t) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(-1, || unsafe {
        query(bitmap, |b| index_result(b.first_unset()))
    })
}

/// `hwloc_bitmap_next_unset`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_next_unset(
    bitmap: hwloc_const_bitmap_t,
    prev: c_int,
) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(-1, || unsafe {
        query(bitmap, |b| index_result(b.next_unset(prev_arg(prev))))
    })
}

/// `hwloc_bitmap_last_unset`: -1 when finite or full.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_last_unset(bitmap: hwloc_const_bitmap_t) -> c_int {
    // SAFETY: the caller passes NULL or a live bitmap.
    guard(-1, || unsafe {
        query(bitmap, |b| index_result(b.last_unset()))
    })
}

// ----- combining -----------------------------------------------------------------

/// `hwloc_bitmap_or`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_or(
    res: hwloc_bitmap_t,
    bitmap1: hwloc_const_bitmap_t,
    bitmap2: hwloc_const_bitmap_t,
) -> c_int {
    // SAFETY: the caller passes NULL or live bitmaps.
    guard(-1, || unsafe {
        binary(res, bitmap1, bitmap2, Some(SetOp::Or))
    })
}

/// `hwloc_bitmap_and`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_and(
    res: hwloc_bitmap_t,
    bitmap1: hwloc_const_bitmap_t,
    bitmap2: hwloc_const_bitmap_t,
) -> c_int {
    // SAFETY: the caller passes NULL or live bitmaps.
    guard(-1, || unsafe {
        binary(res, bitmap1, bitmap2, Some(SetOp::And))
    })
}

/// `hwloc_bitmap_andnot`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_andnot(
    res: hwloc_bitmap_t,
    bitmap1: hwloc_const_bitmap_t,
    bitmap2: hwloc_const_bitmap_t,
) -> c_int {
    // SAFETY: the caller passes NULL or live bitmaps.
    guard(-1, || unsafe {
        binary(res, bitmap1, bitmap2, Some(SetOp::AndNot))
    })
}

/// `hwloc_bitmap_xor`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_xor(
    res: hwloc_bitmap_t,
    bitmap1: hwloc_const_bitmap_t,
    bitmap2: hwloc_const_bitmap_t,
) -> c_int {
    // SAFETY: the caller passes NULL or live bitmaps.
    guard(-1, || unsafe {
        binary(res, bitmap1, bitmap2, Some(SetOp::Xor))
    })
}

/// `hwloc_bitmap_not`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_not(
    res: hwloc_bitmap_t,
    bitmap: hwloc_const_bitmap_t,
) -> c_int {
    // SAFETY: the caller passes NULL or live bitmaps.
    guard(-1, || unsafe { binary(res, bitmap, bitmap, None) })
}

// ----- comparing -----------------------------------------------------------------

/// `hwloc_bitmap_intersects`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_intersects(
    bitmap1: hwloc_const_bitmap_t,
    bitmap2: hwloc_const_bitmap_t,
) -> c_int {
    // SAFETY: the caller passes NULL or live bitmaps.
    guard(-1, || unsafe {
        query2(bitmap1, bitmap2, |a, b| c_int::from(a.intersects(b)))
    })
}

/// `hwloc_bitmap_isincluded`: whether `sub_bitmap` ⊆ `super_bitmap`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_isincluded(
    sub_bitmap: hwloc_const_bitmap_t,
    super_bitmap: hwloc_const_bitmap_t,
) -> c_int {
    // SAFETY: the caller passes NULL or live bitmaps.
    guard(-1, || unsafe {
        query2(sub_bitmap, super_bitmap, |sub, sup| {
            c_int::from(sup.includes(sub))
        })
    })
}

/// `hwloc_bitmap_isequal`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_isequal(
    bitmap1: hwloc_const_bitmap_t,
    bitmap2: hwloc_const_bitmap_t,
) -> c_int {
    // SAFETY: the caller passes NULL or live bitmaps.
    guard(-1, || unsafe {
        query2(bitmap1, bitmap2, |a, b| c_int::from(a == b))
    })
}

/// `hwloc_bitmap_compare_first`: by lowest index, the empty set highest;
/// -1, 0 or 1 as documented (hwloc 2.9 may return other values of the
/// same sign).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_compare_first(
    bitmap1: hwloc_const_bitmap_t,
    bitmap2: hwloc_const_bitmap_t,
) -> c_int {
    // SAFETY: the caller passes NULL or live bitmaps.
    guard(-1, || unsafe {
        query2(bitmap1, bitmap2, |a, b| ordering_result(a.compare_first(b)))
    })
}

/// `hwloc_bitmap_compare`: lexicographic from the highest index.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_compare(
    bitmap1: hwloc_const_bitmap_t,
    bitmap2: hwloc_const_bitmap_t,
) -> c_int {
    // SAFETY: the caller passes NULL or live bitmaps.
    guard(-1, || unsafe {
        query2(bitmap1, bitmap2, |a, b| ordering_result(a.compare_last(b)))
    })
}

/// `HWLOC_BITMAP_EQUAL` and friends (hwloc's `private/misc.h`).
const BITMAP_EQUAL: c_int = 0;
const BITMAP_INCLUDED: c_int = 1;
const BITMAP_CONTAINS: c_int = 2;
const BITMAP_INTERSECTS: c_int = 3;
const BITMAP_DIFFERENT: c_int = 4;

/// How `a` and `b` relate by inclusion; the empty set is included in
/// every set.
fn inclusion(a: &Bitmap, b: &Bitmap) -> c_int {
    if a == b {
        BITMAP_EQUAL
    } else if b.includes(a) {
        BITMAP_INCLUDED
    } else if a.includes(b) {
        BITMAP_CONTAINS
    } else if a.intersects(b) {
        BITMAP_INTERSECTS
    } else {
        BITMAP_DIFFERENT
    }
}

/// `hwloc_bitmap_compare_inclusion` (exported by hwloc for its tools,
/// declared in its `private/misc.h`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_bitmap_compare_inclusion(
    bitmap1: hwloc_const_bitmap_t,
    bitmap2: hwloc_const_bitmap_t,
) -> c_int {
    // SAFETY: the caller passes NULL or live bitmaps.
    guard(-1, || unsafe { query2(bitmap1, bitmap2, inclusion) })
}

/// The set behind a C bitmap in `Debug` form, for tests comparing the C
/// mirror with the model.
///
/// # Safety
/// `b` is a valid, non-NULL C bitmap.
pub unsafe fn debug_string(b: *const hwloc_bitmap_s) -> String {
    // SAFETY: see above.
    format!("{:?}", unsafe { (*b).bits() })
}

#[cfg(test)]
mod tests {
    //! Expected values marked "hwloc 2.9" were printed by Debian's
    //! libhwloc 2.9.0 for the same calls.

    use super::*;
    use std::ffi::{CStr, CString};

    /// A C bitmap from a list string.
    fn bm(list: &str) -> hwloc_bitmap_t {
        let s = CString::new(list).unwrap();
        // SAFETY: a fresh bitmap and a C string.
        unsafe {
            let b = hwloc_bitmap_alloc();
            assert_eq!(hwloc_bitmap_list_sscanf(b, s.as_ptr()), 0, "{list}");
            b
        }
    }

    /// The three strings of a C bitmap through the asprintf functions,
    /// checking their return values and freeing with `free`.
    fn strings(b: hwloc_const_bitmap_t) -> [String; 3] {
        let fns: [unsafe extern "C" fn(*mut *mut c_char, hwloc_const_bitmap_t) -> c_int; 3] = [
            hwloc_bitmap_asprintf,
            hwloc_bitmap_list_asprintf,
            hwloc_bitmap_taskset_asprintf,
        ];
        fns.map(|f| {
            let mut p: *mut c_char = std::ptr::null_mut();
            // SAFETY: a live bitmap; the string is malloc'ed, freed here.
            unsafe {
                let n = f(&mut p, b);
                let s = CStr::from_ptr(p).to_str().unwrap().to_owned();
                libc::free(p.cast());
                assert_eq!(n as usize, s.len());
                s
            }
        })
    }

    fn hw(b: hwloc_const_bitmap_t) -> String {
        strings(b)[0].clone()
    }

    fn list(b: hwloc_const_bitmap_t) -> String {
        strings(b)[1].clone()
    }

    fn free_all(bs: &[hwloc_bitmap_t]) {
        for &b in bs {
            // SAFETY: bitmaps from bm/alloc, freed once.
            unsafe { hwloc_bitmap_free(b) };
        }
    }

    #[test]
    fn strings_of_empty_full_and_infinite_sets_match_hwloc() {
        // SAFETY: live bitmaps throughout.
        unsafe {
            let b = hwloc_bitmap_alloc();
            assert_eq!(strings(b), ["0x0", "", "0x0"]); // hwloc 2.9
            hwloc_bitmap_fill(b);
            assert_eq!(strings(b), ["0xf...f", "0-", "0xf...f"]);
            hwloc_bitmap_allbut(b, 3);
            assert_eq!(
                strings(b),
                ["0xf...f,0xfffffff7", "0-2,4-", "0xf...ffffffff7"]
            );
            hwloc_bitmap_only(b, 70);
            assert_eq!(
                strings(b),
                ["0x00000040,,0x0", "70", "0x400000000000000000"]
            );
            hwloc_bitmap_zero(b);
            hwloc_bitmap_set_range(b, 64, -1);
            assert_eq!(
                strings(b),
                ["0xf...f,,0x0", "64-", "0xf...f0000000000000000"]
            );
            hwloc_bitmap_zero(b);
            hwloc_bitmap_set_range(b, 32, 63);
            assert_eq!(
                strings(b),
                ["0xffffffff,0x0", "32-63", "0xffffffff00000000"]
            );
            hwloc_bitmap_fill(b);
            hwloc_bitmap_set_ith_ulong(b, 2, 0x5);
            assert_eq!(
                strings(b),
                [
                    "0xf...f,,0x00000005,0xffffffff,0xffffffff,0xffffffff,0xffffffff",
                    "0-128,130,192-",
                    "0xf...f0000000000000005ffffffffffffffffffffffffffffffff"
                ]
            );
            free_all(&[b]);
        }
    }

    #[test]
    fn queries_return_minus_one_as_hwloc_does() {
        // SAFETY: live bitmaps throughout.
        unsafe {
            let b = hwloc_bitmap_alloc();
            let q = |b| {
                [
                    hwloc_bitmap_weight(b),
                    hwloc_bitmap_first(b),
                    hwloc_bitmap_last(b),
                    hwloc_bitmap_first_unset(b),
                    hwloc_bitmap_last_unset(b),
                    hwloc_bitmap_nr_ulongs(b),
                    hwloc_bitmap_iszero(b),
                    hwloc_bitmap_isfull(b),
                ]
            };
            // weight, first, last, first_unset, last_unset, nr_ulongs,
            // iszero, isfull (hwloc 2.9).
            assert_eq!(q(b), [0, -1, -1, 0, -1, 0, 1, 0]);
            hwloc_bitmap_fill(b);
            assert_eq!(q(b), [-1, 0, -1, -1, -1, -1, 0, 1]);
            hwloc_bitmap_allbut(b, 3);
            assert_eq!(q(b), [-1, 0, -1, 3, 3, -1, 0, 0]);
            hwloc_bitmap_only(b, 70);
            assert_eq!(q(b), [1, 70, 70, 0, -1, 2, 0, 0]);
            hwloc_bitmap_zero(b);
            hwloc_bitmap_set_range(b, 32, -1);
            assert_eq!(q(b), [-1, 32, -1, 0, 31, -1, 0, 0]);
            assert_eq!(hwloc_bitmap_to_ith_ulong(b, 0), 0xffff_ffff_0000_0000);
            assert_eq!(hwloc_bitmap_to_ith_ulong(b, 7), !0);

            // Walking {3, 200-} (hwloc 2.9).
            let w = bm("3,200-");
            let next: Vec<c_int> = [-1, 3, 250, 199, -5]
                .iter()
                .map(|&p| hwloc_bitmap_next(w, p))
                .collect();
            assert_eq!(next, [3, 200, 251, 200, 3]);
            let next_unset: Vec<c_int> = [-1, 2, 198, 199]
                .iter()
                .map(|&p| hwloc_bitmap_next_unset(w, p))
                .collect();
            assert_eq!(next_unset, [0, 4, 199, -1]);
            free_all(&[b, w]);
        }
    }

    #[test]
    fn ranges_singlify_and_words_match_hwloc() {
        // SAFETY: live bitmaps throughout.
        unsafe {
            let b = hwloc_bitmap_alloc();
            hwloc_bitmap_set_range(b, 5, 3);
            assert_eq!(list(b), "");
            hwloc_bitmap_set_range(b, 100, 200);
            hwloc_bitmap_clr_range(b, 150, -1);
            assert_eq!(hw(b), "0x003fffff,0xfffffff0,,,0x0"); // hwloc 2.9
            hwloc_bitmap_fill(b);
            hwloc_bitmap_clr_range(b, 0, 95);
            // hwloc 2.14 merges the all-ones chunk into 0xf...f (2.9:
            // 0xf...f,0xffffffff,,,0x0).
            assert_eq!(hw(b), "0xf...f,,,0x0");

            hwloc_bitmap_fill(b);
            hwloc_bitmap_clr(b, 0);
            hwloc_bitmap_singlify(b);
            assert_eq!(list(b), "1");
            hwloc_bitmap_zero(b);
            hwloc_bitmap_set_range(b, 128, -1);
            hwloc_bitmap_singlify(b);
            assert_eq!(hw(b), "0x00000001,,,,0x0");
            hwloc_bitmap_zero(b);
            hwloc_bitmap_singlify(b);
            assert_eq!(list(b), "");

            hwloc_bitmap_from_ith_ulong(b, 1, 0xf0);
            assert_eq!(list(b), "68-71");
            assert_eq!(hwloc_bitmap_nr_ulongs(b), 2);
            let masks: [c_ulong; 4] = [1, 0, 3, 0];
            assert_eq!(hwloc_bitmap_from_ulongs(b, 4, masks.as_ptr()), 0);
            assert_eq!(list(b), "0,128-129");
            assert_eq!(hwloc_bitmap_nr_ulongs(b), 3);
            let mut out: [c_ulong; 4] = [9; 4];
            let inf = bm("1,64-");
            assert_eq!(hwloc_bitmap_to_ulongs(inf, 3, out.as_mut_ptr()), 0);
            assert_eq!(out, [2, !0, !0, 9]);
            assert_eq!(hwloc_bitmap_from_ith_ulong(b, MAX_WORDS, 1), -1);
            free_all(&[b, inf]);
        }
    }

    #[test]
    fn comparisons_match_hwloc() {
        // (a, b, compare_first sign, compare, isincluded, intersects,
        // isequal) from hwloc 2.9; hwloc's compare_first returns other
        // magnitudes (-3 for "0" vs "3"), only the sign is documented.
        let cases = [
            ("", "", 0, 0, 1, 0, 1),
            ("", "0", 1, -1, 1, 0, 0),
            ("0", "", -1, 1, 0, 0, 0),
            ("0", "3", -1, -1, 0, 0, 0),
            ("1-2", "1,5", 0, -1, 0, 1, 0),
            ("0-", "0-", 0, 0, 1, 1, 1),
            ("5-", "0-3", 1, 1, 0, 0, 0),
            ("64", "0-63", 1, 1, 0, 0, 0),
            ("0-", "1-", -1, 1, 0, 1, 0),
            ("2,5", "5", -1, 1, 0, 1, 0),
            ("1", "1-", 0, -1, 1, 1, 0),
            ("1-", "2", -1, 1, 0, 1, 0),
        ];
        for (x, y, first, cmp, incl, inter, eq) in cases {
            let (a, b) = (bm(x), bm(y));
            // SAFETY: live bitmaps.
            let got = unsafe {
                (
                    hwloc_bitmap_compare_first(a, b),
                    hwloc_bitmap_compare(a, b),
                    hwloc_bitmap_isincluded(a, b),
                    hwloc_bitmap_intersects(a, b),
                    hwloc_bitmap_isequal(a, b),
                )
            };
            assert_eq!(got, (first, cmp, incl, inter, eq), "{x:?} vs {y:?}");
            free_all(&[a, b]);
        }
    }

    #[test]
    fn compare_inclusion_classifies_pairs() {
        let cases = [
            ("", "", BITMAP_EQUAL),
            ("", "0-", BITMAP_INCLUDED),
            ("3", "", BITMAP_CONTAINS),
            ("1-5", "2-3", BITMAP_CONTAINS),
            ("2-3", "1-", BITMAP_INCLUDED),
            ("0-3", "2-8", BITMAP_INTERSECTS),
            ("0-3", "8-", BITMAP_DIFFERENT),
            ("100-", "70-", BITMAP_INCLUDED),
            ("0-", "0-", BITMAP_EQUAL),
        ];
        for (x, y, want) in cases {
            let (a, b) = (bm(x), bm(y));
            // SAFETY: live bitmaps.
            let got = unsafe { hwloc_bitmap_compare_inclusion(a, b) };
            assert_eq!(got, want, "{x:?} vs {y:?}");
            free_all(&[a, b]);
        }
    }

    #[test]
    fn results_may_alias_their_inputs() {
        // SAFETY: live bitmaps throughout; aliasing is allowed by hwloc.
        unsafe {
            let a = bm("0-3,100-");
            let b = bm("2-5,70");
            hwloc_bitmap_or(a, a, b);
            assert_eq!(list(a), "0-5,70,100-"); // hwloc 2.9
            hwloc_bitmap_free(a);
            let a = bm("0-3,100-");
            hwloc_bitmap_and(b, a, b);
            assert_eq!(list(b), "2-3");
            hwloc_bitmap_free(b);
            let b = bm("2-5,70");
            hwloc_bitmap_xor(a, b, a);
            assert_eq!(list(a), "0-1,4-5,70,100-");
            hwloc_bitmap_andnot(a, a, a);
            assert_eq!(list(a), "");
            let c = bm("0-3,100-");
            hwloc_bitmap_not(c, c);
            assert_eq!(list(c), "4-99");
            hwloc_bitmap_copy(b, b);
            assert_eq!(list(b), "2-5,70");
            // In place, into the first input, with every operation.
            let ops: [(unsafe extern "C" fn(_, _, _) -> c_int, &str, &str); 4] = [
                (hwloc_bitmap_or, "0-5,70,100-", "2-5,70"),
                (hwloc_bitmap_and, "2-3", "2-5,70"),
                (hwloc_bitmap_xor, "0-1,4-5,70,100-", ""),
                (hwloc_bitmap_andnot, "0-1,100-", ""),
            ];
            for (f, with_b, with_itself) in ops {
                let x = bm("0-3,100-");
                assert_eq!(f(x, x, b), 0);
                assert_eq!(list(x), with_b);
                let y = bm("2-5,70");
                assert_eq!(f(y, y, y), 0);
                assert_eq!(list(y), with_itself);
                assert_eq!(f(x, x, std::ptr::null()), -1);
                assert_eq!(f(std::ptr::null_mut(), x, x), -1);
                free_all(&[x, y]);
            }
            free_all(&[a, b, c]);
        }
    }

    /// Parses `s` with one of the sscanf functions into a set holding 5.
    fn scan(
        f: unsafe extern "C" fn(hwloc_bitmap_t, *const c_char) -> c_int,
        s: &str,
    ) -> (c_int, String) {
        let b = bm("5");
        let cs = CString::new(s).unwrap();
        // SAFETY: a live bitmap and a C string.
        let r = unsafe { f(b, cs.as_ptr()) };
        let l = list(b);
        free_all(&[b]);
        (r, l)
    }

    #[test]
    fn sscanf_reads_what_hwloc_reads() {
        let hwloc_form = [
            ("0x0", ""),
            ("0xf...f", "0-"),
            // hwloc 2.14 reads chunks after 0xf...f as 32-bit chunks
            // (2.9 on 64-bit hosts: whole words, 0-1,64-).
            ("0xf...f,0x00000003", "0-1,32-"),
            ("0xf...f,0x00000001,0x00000003", "0-1,32,64-"),
            ("0xf...f,,0x0", "64-"),
            ("0x00000078,,0x00000004", "2,67-70"),
            ("f", "0-3"),
            ("1,2,3", "0-1,33,64"),
            ("0X10", "4"),
            ("ffffffff,ffffffff", "0-63"),
        ];
        for (s, want) in hwloc_form {
            assert_eq!(scan(hwloc_bitmap_sscanf, s), (0, want.into()), "{s:?}");
        }
        let list_form = [
            ("", ""),
            ("0-", "0-"),
            ("1,3-5", "1,3-5"),
            ("1,3-5,", "1,3-5"),
            ("1,,3", "1,3"),
            (",1", "1"),
            ("5 7", "5,7"),
            ("0-3,8-", "0-3,8-"),
        ];
        for (s, want) in list_form {
            assert_eq!(scan(hwloc_bitmap_list_sscanf, s), (0, want.into()), "{s:?}");
        }
        let taskset_form = [
            ("", ""),
            ("0x", ""),
            ("0xf...f", "0-"),
            // As above: digits after 0xf...f as digits (2.9: whole
            // 64-bit words, 64- and 128-).
            ("0xf...f0", "4-"),
            ("0xf...f00000000000000000", "68-"),
            ("0x780000000000000004", "2,67-70"),
            ("0xF", "0-3"),
        ];
        for (s, want) in taskset_form {
            assert_eq!(
                scan(hwloc_bitmap_taskset_sscanf, s),
                (0, want.into()),
                "{s:?}"
            );
        }
    }

    #[test]
    fn invalid_strings_give_minus_one_and_an_empty_set() {
        // hwloc 2.9 returns -1 and empties the set for these.
        for s in ["zz", "0x"] {
            assert_eq!(scan(hwloc_bitmap_sscanf, s), (-1, String::new()), "{s:?}");
        }
        for s in ["a", "-", "1,,"] {
            assert_eq!(
                scan(hwloc_bitmap_list_sscanf, s),
                (-1, String::new()),
                "{s:?}"
            );
        }
        assert_eq!(
            scan(hwloc_bitmap_taskset_sscanf, "0xg"),
            (-1, String::new())
        );
        // hwloc 2.9 returns 0 for these but keeps stale words ("", "0x1,"),
        // ignores what follows ("0xf...fg" is full) or reads them in odd
        // ways ("1-2-3" is 1-3, "8-,1" empty): wloc refuses them.
        for s in ["0x1,", "0xf...fg"] {
            assert_eq!(scan(hwloc_bitmap_sscanf, s), (-1, String::new()), "{s:?}");
        }
        for s in ["3-1", "1-2-3", "8-,1"] {
            assert_eq!(
                scan(hwloc_bitmap_list_sscanf, s),
                (-1, String::new()),
                "{s:?}"
            );
        }
        // "" is the empty set (hwloc leaves the set's first word as it was).
        assert_eq!(scan(hwloc_bitmap_sscanf, ""), (0, String::new()));
    }

    #[test]
    fn snprintf_truncates_and_returns_the_full_length() {
        let b = bm("0-3,100-");
        type Printer = unsafe extern "C" fn(*mut c_char, usize, hwloc_const_bitmap_t) -> c_int;
        // (printer, full length, output for buffer sizes 0..=12) from
        // hwloc 2.9; "X" marks an untouched buffer.
        let cases: [(Printer, c_int, [&str; 13]); 3] = [
            (
                hwloc_bitmap_snprintf,
                31,
                [
                    "X",
                    "",
                    "0",
                    "0x",
                    "0xf",
                    "0xf.",
                    "0xf..",
                    "0xf...",
                    "0xf...f",
                    "0xf...f,",
                    "0xf...f,0",
                    "0xf...f,0x",
                    "0xf...f,0xf",
                ],
            ),
            (
                hwloc_bitmap_list_snprintf,
                8,
                [
                    "X", "", "0", "0-", "0-3", "0-3,", "0-3,1", "0-3,10", "0-3,100", "0-3,100-",
                    "0-3,100-", "0-3,100-", "0-3,100-",
                ],
            ),
            (
                hwloc_bitmap_taskset_snprintf,
                39,
                [
                    "X",
                    "",
                    "0",
                    "0x",
                    "0xf",
                    "0xf.",
                    "0xf..",
                    "0xf...",
                    "0xf...f",
                    "0xf...ff",
                    "0xf...fff",
                    "0xf...ffff",
                    "0xf...fffff",
                ],
            ),
        ];
        for (f, len, outputs) in cases {
            for (n, want) in outputs.iter().enumerate() {
                let mut buf = [b'X' as c_char; 64];
                buf[63] = 0;
                // SAFETY: the buffer holds 64 >= n bytes.
                let r = unsafe { f(buf.as_mut_ptr(), n, b) };
                assert_eq!(r, len);
                // SAFETY: the buffer is NUL-terminated at 63 at the latest.
                let got = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap();
                let got = if n == 0 { &got[..1] } else { got };
                assert_eq!(got, *want, "size {n}");
            }
            // SAFETY: a NULL buffer of size 0 only measures.
            assert_eq!(unsafe { f(std::ptr::null_mut(), 0, b) }, len);
        }
        free_all(&[b]);
    }

    #[test]
    fn null_arguments_are_errors_not_crashes() {
        let null = std::ptr::null_mut();
        // SAFETY: NULL is accepted by every entry point.
        unsafe {
            assert!(hwloc_bitmap_dup(null).is_null());
            hwloc_bitmap_free(null);
            hwloc_bitmap_zero(null);
            assert_eq!(hwloc_bitmap_set(null, 1), -1);
            assert_eq!(hwloc_bitmap_weight(null), -1);
            assert_eq!(hwloc_bitmap_to_ulong(null), 0);
            assert_eq!(hwloc_bitmap_or(null, null, null), -1);
            let b = bm("1");
            assert_eq!(hwloc_bitmap_or(null, b, b), -1);
            assert_eq!(hwloc_bitmap_isequal(b, null), -1);
            assert_eq!(hwloc_bitmap_sscanf(b, std::ptr::null()), -1);
            assert_eq!(hwloc_bitmap_asprintf(std::ptr::null_mut(), b), -1);
            assert_eq!(hwloc_bitmap_from_ulongs(b, 2, std::ptr::null()), -1);
            assert_eq!(
                hwloc_bitmap_singlify_per_core(std::ptr::null_mut(), b, 0),
                -1
            );
            assert_eq!(list(b), "1");
            free_all(&[b]);
        }
    }

    #[test]
    fn singlify_per_core_keeps_the_chosen_pu_of_each_core() {
        use crate::topology::*;
        // (set, which, result) from hwloc 2.9 on "pack:2 core:2 pu:2":
        // cores hold PUs 0-1, 2-3, 4-5, 6-7; other PUs stay as they are.
        let cases = [
            ("0-7", 0, "0,2,4,6"),
            ("0-7", 1, "1,3,5,7"),
            ("0-7", 2, ""),
            ("1-3,8", 0, "1-2,8"),
            ("1-3,8", 1, "3,8"),
            ("0,3,5-7", 0, "0,3,5-6"),
            ("0,3,5-7", 1, "7"),
            ("", 0, ""),
            ("6-", 0, "6,8-"),
            ("6-", 1, "7-"),
            ("6-", 2, "8-"),
            ("1,3,5,7", 1, ""),
        ];
        // SAFETY: a loaded topology and live bitmaps.
        unsafe {
            let mut t: hwloc_topology_t = std::ptr::null_mut();
            assert_eq!(hwloc_topology_init(&mut t), 0);
            let desc = c"pack:2 core:2 pu:2";
            assert_eq!(hwloc_topology_set_synthetic(t, desc.as_ptr()), 0);
            assert_eq!(hwloc_topology_load(t), 0);
            for (set, which, want) in cases {
                let b = bm(set);
                assert_eq!(hwloc_bitmap_singlify_per_core(t, b, which), 0);
                assert_eq!(list(b), want, "{set} which={which}");
                free_all(&[b]);
            }
            hwloc_topology_destroy(t);
        }
    }
}
