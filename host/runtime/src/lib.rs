//! `wloc-runtime`: runs wloc's backends (discovery, annotation and
//! fabric readers) as sandboxed WebAssembly components.
//!
//! A [`Runtime`] owns a wasmtime [`Engine`](wasmtime::Engine) compiled
//! with fuel metering and epoch interruption, a linker holding the host
//! side of the `wloc:backend@0.1.0` imports, and a thread that advances
//! the epoch.  [`Runtime::load_admitted`] compiles a component the
//! admin's policy admitted (or takes it from
//! the [compiled cache](cache)) and checks its imports and exports;
//! [`Runtime::discover`] runs its `discover` export in a fresh store and
//! instance, with a deadline, a fuel budget and a memory cap, then checks
//! what it returned and builds the topology from it.
//!
//! What a component gets:
//! * `files`: read-only access to the granted roots only ([`FileAccess`]);
//! * `cpuid`: answers of a [`CpuidSource`] the host chose, or nothing;
//! * `log`: messages shown on standard error, rate-limited and escaped;
//! * `config`: the settings the host passes.
//! * WASI: clocks, random numbers, an empty environment, no arguments, no
//!   preopened directory, closed standard input, standard output dropped,
//!   standard error kept (8 KiB) for error reports.  Sockets are not
//!   linked at all: a component importing them is refused when loaded.
//!
//! Whatever a component does (trap, spin, exhaust its memory, return bad
//! data) ends as a [`ComponentError`] naming it, and the runtime stays
//! usable for the next run.
//!
//! What a component may do is decided by `wloc-trust` (manifests,
//! signatures, the policy, the grant), re-exported here under the old
//! paths ([`manifest`], [`signing`], [`policy`], [`enforce`]); this crate
//! runs what it decides.  Modules, each using only those listed before it:
//!
//! * [`error`] (why a record is refused), [`engine_config`],
//!   [`bindings`] (every `bindgen!`, both worlds), [`builtin`],
//!   [`code_memory`], [`cache`], [`fs`] (file access, the privacy rule,
//!   the read budget);
//! * `options` ([`RunOptions`], narrowed to a grant), [`enforce`];
//! * `state` (what a store holds), `imports` (one file per imported
//!   interface, the WASI subset, and the one linker);
//! * `ticker` (the epoch thread), `world` (what differs between the two
//!   worlds), [`convert`] (checks of a discovery record);
//! * `runtime` (the engine and the one load and run path), then the
//!   worlds' entry points: `discovery` and [`annotate`].

pub mod error;

pub mod bindings;
pub mod builtin;
pub mod cache;
pub mod code_memory;
pub mod engine_config;
pub mod fs;

mod options;

pub mod enforce;

mod imports;
mod state;

pub mod convert;
mod ticker;
mod world;

mod runtime;

pub mod annotate;
mod discovery;
pub mod fabric;

pub use wloc_trust::{ComponentError, ErrorKind, Limits};
pub use wloc_trust::{env, manifest, policy, signing};

pub use annotate::{LoadedAnnotator, Property};
pub use bindings::types::Discovery;
pub use cache::{CacheOutcome, CompiledCache};
pub use discovery::{LoadedComponent, RunOutput, build_topology};
pub use error::{RecordError, TopologyViewError};
pub use fabric::LoadedFabricReader;
pub use fs::FileAccess;
pub use options::{LogTarget, RunOptions, SharedCpuid};
pub use runtime::Runtime;
pub use wloc_probe::CpuidSource;

/// The folder of the hostile test components built with the runtime
/// (`hostile-NAME.wasm`, with manifests), for the end-to-end tests.
#[doc(hidden)]
pub fn test_components_dir() -> &'static str {
    env!("WLOC_TEST_COMPONENTS_DIR")
}
