//! `wloc-openmp`: OpenMP thread placement on a wloc topology.
//!
//! Given a topology, an initial affinity mask and the settings an OpenMP
//! program would run with, this crate computes the OS proc set each thread
//! is bound to, as the Intel/LLVM runtime and libgomp do:
//!
//! - `KMP_AFFINITY` ([`KmpAffinity`]): types none, compact, scatter,
//!   balanced, explicit, disabled, logical and physical, permute and
//!   offset, granularity (down to hybrid core types), `proclist=[...]`
//!   with `{}` float sets, respect/norespect and the verbose report;
//! - `GOMP_CPU_AFFINITY` ([`KmpAffinity::from_gomp`]);
//! - `OMP_PLACES` with `OMP_PROC_BIND` ([`PlacesSpec`], [`ProcBind`]);
//! - the topology methods of `KMP_TOPOLOGY_METHOD` ([`Method`]): the whole
//!   wloc topology (hwloc), the CPUID levels, a `/proc/cpuinfo`-format
//!   file ([`topology_from_cpuinfo`]) and flat ([`flat_topology`]).
//!
//! [`place`] returns a [`Placement`], which can also be exported as an
//! explicit environment ([`Placement::environment`]) that any OpenMP
//! runtime follows.

mod cpuinfo;
mod error;
mod kmp;
mod machine;
mod places;
mod plan;
mod proclist;

pub use cpuinfo::{CpuinfoRecord, flat_topology, parse_records, topology_from_cpuinfo};
pub use error::{CpuinfoError, ParseError, ParseErrorKind, PlaceError, Setting};
pub use kmp::{AffinityType, Granularity, KmpAffinity};
pub use machine::{CoreType, HwThread, HwType, Machine, Method, Resolved};
pub use places::{PlacesSpec, ProcBind, parse_places};
pub use plan::{MAX_THREADS, Placement, Policy, bind_places, mask_string, place};
pub use proclist::{MAX_ENTRIES, MAX_PROC_ID, ProcEntry, parse_gomp, parse_kmp_proclist};
