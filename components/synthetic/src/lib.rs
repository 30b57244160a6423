//! wloc's built-in synthetic discovery component.
//!
//! It reads hwloc's synthetic description from the `description` setting,
//! builds the topology with `wloc_core::synthetic` (every type kept: the
//! host applies the user's filters) and returns it with every object's
//! parent, so the host rebuilds the tree without searching.

use wloc_core::{Topology, TypeFilter};
use wloc_guest::{Discovery, config};

struct Synthetic;

impl wloc_guest::Guest for Synthetic {
    fn discover() -> Result<Discovery, String> {
        let desc = config::get("description").ok_or_else(|| {
            String::from("no synthetic description was given (setting `description`)")
        })?;
        let parsed = wloc_core::synthetic::parse(&desc)
            .map_err(|e| format!("invalid synthetic description: {e}"))?;
        let mut topo = Topology::new();
        topo.set_all_types_filter(TypeFilter::KeepAll);
        let topo = parsed
            .build(topo)
            .map_err(|e| format!("invalid synthetic description: {e}"))?;
        wloc_guest::discovery_from_topology(&topo)
    }
}

wloc_guest::export!(Synthetic with_types_in wloc_guest::bindings);
