//! `wloc-discovery`: a topology discovered from the source
//! [`wloc_input`] names.
//!
//! A [`Discovery`] is the context of one run (one `wloc` command, one
//! request of the C library's discovery module): the admin's policy every
//! component passes and the component runtime they run in, as an explicit
//! value rather than process globals.  Through it:
//! * [`input`] loads a source (XML, synthetic, fsroot, CPUID dump, topology
//!   image, this machine), through the sandboxed built-in components;
//! * [`components`] adds the components `wloc ls --component` and
//!   `--components` name, found on the components' search path;
//! * [`annotations`] runs the built-in annotation components;
//! * [`cpuid_native`] runs CPUID on this machine's PUs and answers the x86
//!   component from a dump.

pub mod annotations;
pub mod components;
mod context;
pub mod cpuid_native;
pub mod input;

pub use context::{Discovery, SetupError};
