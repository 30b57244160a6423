//! The `topology` import of annotation backends: the finished topology,
//! read-only, as [`crate::annotate::topology_objects`] converted it.

use crate::bindings::topology;
use crate::bindings::types::Object;
use crate::state::HostState;

impl topology::Host for HostState {
    fn objects(&mut self) -> wasmtime::Result<Vec<Object>> {
        Ok((*self.topology).clone())
    }
}
