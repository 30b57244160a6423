//! The host side of a component's imports, one file per WIT interface of
//! `wloc:backend` ([`files`], [`cpuid`], [`log`], [`config`],
//! [`topology`]; `types` has no function) and the WASI subset ([`wasi`]),
//! and the one linker of them all ([`link_granted`]), for both worlds.

mod config;
mod cpuid;
mod files;
mod log;
mod topology;
mod wasi;

use wasmtime::component::{HasSelf, Linker};
use wloc_trust::grant::Interfaces;

use crate::bindings::{self, types};
use crate::state::HostState;

impl types::Host for HostState {}

/// Links the WASI interfaces Rust's standard library needs ([`wasi`])
/// and, of wloc's, `types`, `log` and the granted ones only: a component
/// importing anything else cannot be instantiated.  Every WIT version the
/// host speaks is linked here, from the same grant, for both worlds.
pub(crate) fn link_granted(
    linker: &mut Linker<HostState>,
    granted: Interfaces,
) -> wasmtime::Result<()> {
    type T = HostState;
    bindings::types::add_to_linker::<T, HasSelf<T>>(linker, |s| s)?;
    bindings::log::add_to_linker::<T, HasSelf<T>>(linker, |s| s)?;
    if granted.files {
        bindings::files::add_to_linker::<T, HasSelf<T>>(linker, |s| s)?;
    }
    if granted.cpuid {
        bindings::cpuid::add_to_linker::<T, HasSelf<T>>(linker, |s| s)?;
    }
    if granted.config {
        bindings::config::add_to_linker::<T, HasSelf<T>>(linker, |s| s)?;
    }
    if granted.topology {
        bindings::topology::add_to_linker::<T, HasSelf<T>>(linker, |s| s)?;
    }
    wasi::link(linker)
}
