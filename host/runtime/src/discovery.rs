//! Discovery backends: components of the `discovery-backend` world whose
//! `discover` returns objects, distances, memory attributes, CPU kinds
//! and infos, checked ([`convert`]) and built into a topology.

use std::time::Duration;

use wloc_core::Topology;
use wloc_trust::grant::Admission;
use wloc_trust::{ComponentError, ErrorKind, Limits};

use crate::bindings::types::Discovery;
use crate::builtin::Builtin;
use crate::cache;
use crate::convert;
use crate::options::RunOptions;
use crate::runtime::{Loaded, Runtime};
use crate::world::DiscoveryWorld;

/// A discovery component ready to run.
pub type LoadedComponent = Loaded<DiscoveryWorld>;

/// What a run returned, before it is turned into a topology.
pub struct RunOutput {
    /// The record.
    pub discovery: Discovery,
    /// Captured log lines ([`LogTarget::Capture`](crate::LogTarget::Capture)).
    pub logs: Vec<String>,
    /// Fuel used.
    pub fuel_used: u64,
    /// Time from the new store to the returned record.
    pub elapsed: Duration,
}

impl Runtime {
    /// Compiles (or loads from the cache) a component and checks that the
    /// host gives everything it imports and that it exports `discover`.
    ///
    /// It skips the admin's policy (every interface of the world is
    /// linked, runs are not narrowed): only for tests, with the
    /// `test-support` feature.  Programs load through
    /// [`Runtime::load_admitted`] or [`Runtime::load_builtin`].
    #[cfg(any(test, feature = "test-support"))]
    pub fn load(&self, name: &str, wasm: &[u8]) -> Result<LoadedComponent, ComponentError> {
        self.load_trusted(name, wasm)
    }

    /// Loads a component the policy admitted ([`crate::enforce::admit`]):
    /// only its granted interfaces are linked, and every run is narrowed
    /// to its grant.  `wasm` must be the admitted bytes.
    pub fn load_admitted(
        &self,
        adm: &Admission,
        wasm: &[u8],
    ) -> Result<LoadedComponent, ComponentError> {
        self.load_granted(adm, wasm, &cache::component_digest(wasm), &[])
    }

    /// Loads a built-in component the policy admitted, from the code
    /// precompiled when wloc was built when wasmtime accepts it.
    pub fn load_builtin(
        &self,
        adm: &Admission,
        b: &Builtin,
    ) -> Result<LoadedComponent, ComponentError> {
        self.load_granted(adm, b.wasm, b.digest, b.precompiled)
    }

    /// Runs a component's `discover` in a fresh store and returns its
    /// record, unchecked.  A component loaded through the policy gets
    /// only what it was granted, whatever `opts` holds.
    pub fn run(&self, c: &LoadedComponent, opts: &RunOptions) -> Result<RunOutput, ComponentError> {
        let ran = self.run_world(c, opts, None)?;
        Ok(RunOutput {
            discovery: ran.record,
            logs: ran.logs,
            fuel_used: ran.fuel_used,
            elapsed: ran.elapsed,
        })
    }

    /// Runs a component and adds what it found to `topo` (whose type
    /// filters the caller has set), then finishes and checks the topology.
    pub fn discover(
        &self,
        c: &LoadedComponent,
        opts: &RunOptions,
        topo: Topology,
    ) -> Result<Topology, ComponentError> {
        let out = self.run(c, opts)?;
        let limits = c.grant().map_or(&opts.limits, |g| &g.limits);
        build_topology(c.name(), c.digest(), &out.discovery, limits, topo)
    }
}

/// Checks a record, adds it to `topo`, finishes and checks the topology.
pub fn build_topology(
    name: &str,
    digest: &str,
    d: &Discovery,
    limits: &Limits,
    mut topo: Topology,
) -> Result<Topology, ComponentError> {
    let err = |kind| ComponentError::new(name, digest, kind);
    // The core is not expected to panic on checked data; if it does, the
    // component's data still must not take the host down.
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        convert::apply(d, &mut topo, limits).map_err(|e| ErrorKind::InvalidData(e.to_string()))?;
        topo.finish()
            .map_err(|e| ErrorKind::Topology(e.to_string()))?;
        // hwloc's own rules too (sets that add up): whatever a component
        // returns, hwloc's checker accepts what wloc keeps.
        topo.check_hwloc()
            .map_err(|e| ErrorKind::Topology(e.to_string()))?;
        Ok::<_, ErrorKind>(())
    }));
    match r {
        Ok(Ok(())) => Ok(topo),
        Ok(Err(kind)) => Err(err(kind)),
        Err(_) => Err(err(ErrorKind::Topology(
            "the topology could not be built from its objects (internal error)".into(),
        ))),
    }
}
