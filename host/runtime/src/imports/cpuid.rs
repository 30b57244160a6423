//! The `cpuid` import: the answers of the [`CpuidSource`](crate::CpuidSource)
//! the host chose, or no PU at all.

use crate::bindings::cpuid;
use crate::state::HostState;

impl HostState {
    /// The PUs a component may ask about: the source's, at most as many
    /// as the import's `u32` numbers reach.
    fn cpuid_pus(&self) -> u32 {
        self.cpuid
            .as_ref()
            .map_or(0, |c| u32::try_from(c.pu_count()).unwrap_or(u32::MAX))
    }
}

impl cpuid::Host for HostState {
    fn pu_count(&mut self) -> wasmtime::Result<u32> {
        Ok(self.cpuid_pus())
    }

    fn os_index(&mut self, pu: u32) -> wasmtime::Result<u32> {
        let pus = self.cpuid_pus();
        Ok(match &self.cpuid {
            Some(c) if pu < pus => c.os_index(pu as usize),
            _ => 0,
        })
    }

    fn query(
        &mut self,
        pu: u32,
        leaf: u32,
        subleaf: u32,
    ) -> wasmtime::Result<(u32, u32, u32, u32)> {
        let pus = self.cpuid_pus();
        Ok(match &self.cpuid {
            Some(c) if pu < pus => {
                let [a, b, c2, d] = c.cpuid(pu as usize, leaf, subleaf);
                (a, b, c2, d)
            }
            _ => (0, 0, 0, 0),
        })
    }
}
