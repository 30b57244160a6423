//! `wloc`: hardware locality on the host.
//!
//! This library formats topologies (hwloc XML v2/v3, lstopo console
//! listings, synthetic descriptions, JSON) and drives the `wloc` command.
//! The topology model itself lives in [`wloc_core`]; loading and
//! discovering a topology in [`wloc_discovery`].

pub mod console;
pub mod fabric_input;
pub mod files;
pub mod folder;
pub mod json;
pub mod k8s;
pub mod processes;
pub mod service;
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

/// The value of the root object's info `name`: where site infos live
/// (`wloc annotate FILE FILE root info Rack r12`), for the outputs that
/// carry them (`wloc slurm node --info`, `wloc k8s nrt --info`).
pub fn site_info<'t>(
    topo: &'t wloc_core::Topology,
    name: &str,
) -> Result<&'t str, MissingSiteInfo> {
    topo.obj(topo.root())
        .infos
        .iter()
        .find(|i| i.name == name)
        .map(|i| i.value.as_str())
        .ok_or_else(|| MissingSiteInfo(name.to_string()))
}

/// A site info asked for (by its name) that the root object lacks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the topology has no info {0} on its root object (record it with `wloc annotate FILE FILE root info {0} VALUE`)"
)]
pub struct MissingSiteInfo(pub String);
