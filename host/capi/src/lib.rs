//! wloc as libhwloc: hwloc 2.x's C ABI (`libhwloc.so.15`, API version
//! 0x00020800) over wloc's topology model.
//!
//! Programs built for hwloc 2.x load this library unchanged. Their
//! topology comes from wloc: XML, synthetic descriptions and topology
//! images are read natively (the library carries no WebAssembly engine);
//! this system, recorded `/sys` trees and CPUID dumps are discovered by
//! the same sandboxed components and policy as `wloc ls`, in the
//! discovery module `libwloc_discover.so`, loaded from the library's own
//! folder only when a load discovers (see `discover.rs`); no native
//! plugin is ever loaded. Binding is done natively.
//!
//! Every exported function catches Rust panics and returns hwloc's error
//! value (with `errno` set to `EINVAL`) instead of unwinding into C.
//!
//! Layout, from the leaves up (no module imports one above it; the FFI
//! check program, `host/ffi-check`, enforces it in CI): `ffi` (the entry
//! guard, `errno`, C strings), [`types`] (the public C structures),
//! `source` (where a load reads from), `kept`, `mirror` (the C objects),
//! `support`, `handle` (the opaque `struct hwloc_topology` and the entry
//! prologue, `entry!`), [`bind`], `hwloc2` (hwloc 2's presentation),
//! `load`, then one module per header area; [`topology`] holds the
//! topology's configuration entries and re-exports the public items.

#![allow(non_camel_case_types)]
// Every entry point takes raw pointers from C; their contracts are hwloc's
// documented ones, written once in hwloc's headers.
#![allow(clippy::missing_safety_doc)]

mod ffi;
#[macro_use]
pub(crate) mod handle;
pub mod bind;
pub mod bitmap;
pub mod cpukinds;
pub mod diff;
mod discover;
pub mod distances;
pub mod export;
mod hwloc2;
mod kept;
pub mod linux;
mod load;
pub mod memattrs;
mod mirror;
pub mod objects;
pub mod shmem;
mod source;
mod support;
pub mod topology;
pub mod types;

#[cfg(test)]
mod api_2_14_tests;
#[cfg(test)]
pub(crate) mod test_support;

/// The hwloc release whose API and behaviour this library implements, as
/// the `hwlocVersion` info of discovered topologies names it.
pub(crate) const HWLOC_RELEASE: &str = "2.14.0";

/// That release's `HWLOC_API_VERSION` (hwloc 2.14 implements API 2.12:
/// the API number follows the interface, not the release).
pub(crate) const HWLOC_API_VERSION: std::os::raw::c_uint = 0x0002_0c00;

/// `hwloc_get_api_version`: the API this library implements.
#[unsafe(no_mangle)]
pub extern "C" fn hwloc_get_api_version() -> std::os::raw::c_uint {
    ffi::guard(0, || HWLOC_API_VERSION)
}
