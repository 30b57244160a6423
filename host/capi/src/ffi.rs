//! The C boundary's low-level helpers, used by every other module and
//! using none: the entry-point guard (no panic unwinds into C), `errno`,
//! C strings and buffers, diagnostics.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int};

/// Sets the calling thread's `errno`.
pub(crate) fn set_errno(e: c_int) {
    // SAFETY: __errno_location returns the calling thread's errno slot.
    unsafe { *libc::__errno_location() = e }
}

/// Runs an entry point's body, turning a Rust panic into `on_panic` with
/// `errno` = `EINVAL`: no unwinding crosses the C boundary.
#[inline]
pub(crate) fn guard<R>(on_panic: R, body: impl FnOnce() -> R) -> R {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(_) => {
            set_errno(libc::EINVAL);
            on_panic
        }
    }
}

/// Returns -1 with `errno` = `e` (hwloc's usual failure).
pub(crate) fn fail(e: c_int) -> c_int {
    set_errno(e);
    -1
}

/// 0, or -1 with `errno` (hwloc's usual result from a `Result`).
pub(crate) fn status(r: Result<(), c_int>) -> c_int {
    match r {
        Ok(()) => 0,
        Err(e) => fail(e),
    }
}

/// A C string argument as UTF-8 (lossy), or `None` for NULL.
///
/// # Safety
/// `s` is NULL or a NUL-terminated string.
pub(crate) unsafe fn c_str<'a>(s: *const c_char) -> Option<std::borrow::Cow<'a, str>> {
    if s.is_null() {
        None
    } else {
        // SAFETY: the caller passes a NUL-terminated string.
        Some(unsafe { CStr::from_ptr(s) }.to_string_lossy())
    }
}

/// A C path argument as the bytes it is (no UTF-8 conversion: a file
/// named `\xff.xml` is that file), or `None` for NULL.
///
/// # Safety
/// `s` is NULL or a NUL-terminated string.
pub(crate) unsafe fn c_path(s: *const c_char) -> Option<std::path::PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    if s.is_null() {
        return None;
    }
    // SAFETY: the caller passes a NUL-terminated string.
    let bytes = unsafe { CStr::from_ptr(s) }.to_bytes();
    Some(std::ffi::OsStr::from_bytes(bytes).into())
}

/// `bytes` as text (invalid UTF-8 replaced, as `String::from_utf8_lossy`
/// does), its memory reserved fallibly: a caller's buffer may be as large
/// as memory allows, and running out is `ENOMEM`, not an abort.
pub(crate) fn try_text(bytes: &[u8]) -> Result<String, std::collections::TryReserveError> {
    let mut s = String::new();
    s.try_reserve_exact(bytes.len())?;
    for chunk in bytes.utf8_chunks() {
        s.try_reserve(chunk.valid().len() + 3)?;
        s.push_str(chunk.valid());
        if !chunk.invalid().is_empty() {
            s.push(char::REPLACEMENT_CHARACTER);
        }
    }
    Ok(s)
}

/// A copy of `s` allocated with `malloc`, as hwloc's strings are (the
/// caller or hwloc frees it with `free`). NUL bytes end the string.
pub(crate) fn c_strdup(s: &str) -> *mut c_char {
    let bytes = s.as_bytes();
    let n = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    // SAFETY: n + 1 bytes are allocated, n copied, then the terminator.
    unsafe {
        let p = libc::malloc(n + 1) as *mut c_char;
        if p.is_null() {
            return p;
        }
        std::ptr::copy_nonoverlapping(bytes.as_ptr() as *const c_char, p, n);
        *p.add(n) = 0;
        p
    }
}

/// Writes `s` into a caller's buffer as `snprintf` does: at most `size - 1`
/// bytes and a terminator, returning the full length.
///
/// # Safety
/// `buf` is NULL (then `size` must be 0) or holds `size` bytes.
pub(crate) unsafe fn snprintf_out(buf: *mut c_char, size: usize, s: &str) -> c_int {
    if !buf.is_null() && size > 0 {
        let n = s.len().min(size - 1);
        // SAFETY: the caller's buffer holds size bytes; n < size.
        unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr() as *const c_char, buf, n);
            *buf.add(n) = 0;
        }
    }
    c_int::try_from(s.len()).unwrap_or(c_int::MAX)
}

/// C's `atoi`: how hwloc reads its numeric environment variables.
pub(crate) fn atoi(s: &str) -> i64 {
    let s = s.trim_start();
    let (neg, digits) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    let v: i64 = digits[..end].parse().unwrap_or(0);
    if neg { -v } else { v }
}

/// Prints a diagnostic when `WLOC_CAPI_VERBOSE` is set (never in a
/// privileged process): the library is otherwise silent, as libhwloc.
pub(crate) fn verbose(msg: &str) {
    if wloc_trust::env::var_os("WLOC_CAPI_VERBOSE").is_some() {
        eprintln!("wloc: {msg}");
    }
}
