//! `wloc-core`: a `no_std` (+ `alloc`) model of a machine's hardware topology.
//!
//! It holds the object tree (machine, packages, dies, cores, PUs, caches, NUMA
//! nodes, memory-side caches, I/O and misc objects), CPU and NUMA node sets,
//! levels and depths, distance matrices, memory attributes, CPU kinds and
//! synthetic topology descriptions.  It performs no I/O: discovery backends
//! feed it objects, and the host formats it.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;
// The unit tests use std (files, processes), from any module.
#[cfg(test)]
extern crate std;

pub mod bitmap;
pub mod cpukinds;
pub mod distances;
pub mod memattrs;
pub mod memtiers;
pub mod object;
pub mod pci;
pub mod synthetic;
pub mod topology;
pub mod units;
mod wit;

pub use bitmap::{Bitmap, BitmapParseError, CpuSet, NodeSet};
pub use object::{ObjAttr, ObjId, ObjKind, ObjType, Object, UserData};
pub use topology::{
    MAX_TREE_DEPTH, RestrictError, RestrictFlags, Topology, TopologyError, TypeFilter,
};
