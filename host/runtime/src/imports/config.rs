//! The `config` import: the settings the host passes.

use crate::bindings::config;
use crate::state::HostState;

impl config::Host for HostState {
    fn get(&mut self, name: String) -> wasmtime::Result<Option<String>> {
        Ok(self.config.get(&name).cloned())
    }
}
