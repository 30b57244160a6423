//! `wloc-probe`: reads a machine's topology from the hardware itself
//! (CPUID and ACPI tables), without an operating system.
//!
//! The x86 part works as hwloc's `x86` discovery backend does: every
//! processing unit (PU) is asked for its CPUID leaves, and the answers
//! (APIC ids, extended topology levels, cache descriptions, vendor quirks,
//! hybrid core types) are turned into packages, dies, groups, cores, PUs,
//! caches and CPU kinds.
//!
//! CPUID answers come from a [`CpuidSource`]:
//!
//! - [`DumpSource`] replays a directory written by `hwloc-gather-cpuid`
//!   (one `puN` file per PU plus `hwloc-cpuid-info`), parsed from bytes so
//!   that the crate stays `no_std`;
//! - `NativeSource` (x86_64 only) executes the `cpuid` instruction, on the
//!   current CPU or on any PU through a [`PuRunner`] the host provides (it
//!   pins the calling thread).
//!
//! [`discover`] is pure: it only talks to its source, so it runs the same
//! way in firmware, in a WebAssembly sandbox whose host answers CPUID
//! queries, or on a recorded dump.
//!
//! NUMA comes from ACPI: [`acpi`] parses the MADT, SRAT, SLIT and HMAT
//! from bytes (found from the RSDP in firmware, or read from
//! `/sys/firmware/acpi/tables`) and turns them into NUMA nodes,
//! distances, memory attributes and memory-side caches as hwloc shows
//! them on Linux.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

pub mod acpi;
mod dump;
mod error;
pub mod firmware;
mod source;
mod x86;

pub use dump::{CPUID_INFO_FILE, DumpError, DumpSource, MAX_DUMP_PUS};
pub use error::ProbeError;
#[cfg(target_arch = "x86_64")]
pub use source::NativeSource;
#[cfg(target_arch = "x86_64")]
pub use source::native::CurrentCpu;
pub use source::{CpuidSource, PuRunner};
pub use x86::{
    MAX_OS_INDEX, X86Options, annotate_discovered, discover, discover_with, group_kind_x86,
    setting as x86_setting,
};
