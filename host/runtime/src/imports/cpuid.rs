//! The `cpuid` import: the answers of the [`CpuidProvider`](crate::CpuidProvider)
//! the host chose, or no PU at all.

use crate::bindings::cpuid;
use crate::state::HostState;

impl cpuid::Host for HostState {
    fn pu_count(&mut self) -> wasmtime::Result<u32> {
        Ok(self.cpuid.as_ref().map_or(0, |c| c.pu_count()))
    }

    fn os_index(&mut self, pu: u32) -> wasmtime::Result<u32> {
        Ok(match &self.cpuid {
            Some(c) if pu < c.pu_count() => c.os_index(pu),
            _ => 0,
        })
    }

    fn query(
        &mut self,
        pu: u32,
        leaf: u32,
        subleaf: u32,
    ) -> wasmtime::Result<(u32, u32, u32, u32)> {
        Ok(match &self.cpuid {
            Some(c) if pu < c.pu_count() => {
                let [a, b, c2, d] = c.query(pu, leaf, subleaf);
                (a, b, c2, d)
            }
            _ => (0, 0, 0, 0),
        })
    }
}
