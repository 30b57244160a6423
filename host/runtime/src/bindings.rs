//! Host bindings of the `discovery-backend` world of `wloc:backend@0.1.0`.
//!
//! Every import may trap (`trappable`): the host stops a component that
//! goes over a per-call limit instead of answering it.

wasmtime::component::bindgen!({
    world: "discovery-backend",
    path: "../../wit/backend@0.1.0",
    imports: { default: trappable },
});

pub use self::wloc::backend::types;
pub use self::wloc::backend::{config, cpuid, files, log};
