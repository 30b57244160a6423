//! Where compiled code is made executable.
//!
//! wasmtime copies precompiled code into fresh memory before making it
//! executable: for the built-in components that is megabytes copied and
//! a page fault per 4 KiB on every run of `wloc`.  Their code is part of
//! this executable already (page-aligned, see [`crate::builtin`]), so on
//! Linux x86-64 the runtime hands wasmtime that memory as it is
//! (`Component::deserialize_raw`) and makes the text section executable
//! in place with `mprotect`.  Pages are then read from the page cache
//! only when they run.
//!
//! This module is the engine's [`CustomCodeMemory`]: it makes every
//! text section executable, the embedded ones and those wasmtime maps
//! itself (compiled or cached components), the way wasmtime's own
//! default does on x86-64 (read+execute, never writable).

use rustix::mm::MprotectFlags;
use wasmtime::CustomCodeMemory;

/// Whether built-in code can be used in place on this platform.
pub const IN_PLACE: bool = cfg!(all(target_os = "linux", target_arch = "x86_64"));

/// Publishes code with `mprotect`.
#[derive(Debug)]
pub struct ProtectInPlace {
    page: usize,
}

impl ProtectInPlace {
    /// The code memory of this machine, if code can be made executable in
    /// place here.
    pub fn new() -> Option<ProtectInPlace> {
        let page = rustix::param::page_size();
        (IN_PLACE && page == crate::builtin::PRECOMPILED_ALIGN).then_some(ProtectInPlace { page })
    }
}

impl CustomCodeMemory for ProtectInPlace {
    fn required_alignment(&self) -> usize {
        self.page
    }

    fn publish_executable(&self, ptr: *const u8, len: usize) -> wasmtime::Result<()> {
        if len == 0 {
            return Ok(());
        }
        // SAFETY: wasmtime passes the page-aligned text section of code
        // it owns (or of built-in code, which lives as long as the
        // process); making it read+execute removes no access it relies
        // on, since the code is never written after this.
        unsafe {
            protect(
                ptr as usize,
                len,
                MprotectFlags::READ | MprotectFlags::EXEC,
                "executable",
            )
        }
    }

    fn unpublish_executable(&self, ptr: *const u8, len: usize) -> wasmtime::Result<()> {
        // wasmtime unpublishes code when it drops it.  Built-in code is
        // part of this executable, may be loaded more than once at a time
        // (each load shares the same bytes) and must never become
        // writable: it stays as it is.
        if crate::builtin::overlaps_embedded_code(ptr, len) || len == 0 {
            return Ok(());
        }
        // SAFETY: wasmtime unpublishes only memory it mapped itself, when
        // that code no longer runs.
        unsafe {
            protect(
                ptr as usize,
                len,
                MprotectFlags::READ | MprotectFlags::WRITE,
                "writable",
            )
        }
    }
}

/// Gives the `len` bytes at address `addr` the access `flags`; `making`
/// names it in the error.  (An address, not a pointer: the kernel changes
/// the pages, nothing here dereferences them.)
///
/// # Safety
///
/// The range must be code memory wasmtime handed over, and nothing may
/// rely on an access the new flags remove.
unsafe fn protect(
    addr: usize,
    len: usize,
    flags: MprotectFlags,
    making: &str,
) -> wasmtime::Result<()> {
    // SAFETY: as the caller promises.
    unsafe { rustix::mm::mprotect(addr as *mut std::ffi::c_void, len, flags) }
        .map_err(|e| wasmtime::format_err!("cannot make compiled code {making}: {e}"))
}
