//! CPUID of this machine: running code on a chosen PU (Linux), writing
//! CPUID dumps in the format of hwloc's `hwloc-gather-cpuid`, and
//! answering the x86 discovery component from a dump or from this
//! machine, without the operating system's topology files.
//!
//! - [`LinuxPuRunner`] implements the probe's
//!   [`PuRunner`](wloc_probe::PuRunner) by pinning the calling thread
//!   through `wloc-bind`, so that `wloc_probe::NativeSource::with_runner`
//!   executes `cpuid` on every PU.
//! - [`gather_pu`] asks any [`CpuidSource`] for the leaves
//!   `hwloc-gather-cpuid` records and formats them as it does.
//! - [`DumpProvider`] answers the x86 discovery component's `cpuid`
//!   queries from a dump, and `gather_this_machine` makes such a dump of
//!   this machine in memory.

mod dump;
mod gather;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(test)]
mod tests;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod this_machine;

pub use dump::DumpProvider;
pub use gather::gather_pu;
#[cfg(target_os = "linux")]
pub use linux::LinuxPuRunner;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub use linux::LiveProvider;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub use this_machine::{GatherError, gather_every_pu, gather_one_pu, gather_this_machine};

/// The contents of the `hwloc-cpuid-info` file of an x86 dump.
pub const CPUID_INFO: &str = "Architecture: x86\n";

/// Where Linux exposes the firmware's ACPI tables (readable by root only).
pub const SYSFS_ACPI_TABLES: &str = "/sys/firmware/acpi/tables";
