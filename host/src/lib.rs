//! `wloc`: hardware locality on the host.
//!
//! This library loads topologies (XML files, synthetic descriptions, and
//! discovery backends), formats them (hwloc XML v2/v3, lstopo console
//! listings, synthetic descriptions, JSON) and drives the `wloc` command.
//! The topology model itself lives in [`wloc_core`].

pub mod annotations;
pub mod components;
pub mod console;
pub mod cpuid_native;
pub mod input;
pub mod json;
pub mod k8s;
pub mod slurm;
pub mod tool_flags;
pub mod topo_edit;

/// The topology model (the `wloc-core` crate).  Not named `core`, which
/// would shadow Rust's own `core` for users of this crate.
pub use wloc_core as model;

/// hwloc XML import and export (the `wloc-xml` crate).
pub use wloc_xml as xml;

/// Topology images: write once, adopt in any process (the `wloc-image`
/// crate).  See its documentation for the format and a launcher example.
pub use wloc_image as image;
