//! Host bindings of `wloc:backend@0.1.0`, both worlds: every `bindgen!`
//! of the runtime is here.
//!
//! * the `discovery-backend` world, at the top of this module
//!   ([`DiscoveryBackend`], and the interfaces [`types`], [`files`],
//!   [`cpuid`], [`log`], [`config`]);
//! * the `annotation-backend` world, in [`annotation`]: the interfaces it
//!   shares with the discovery world are those above (`with`), so one
//!   host implementation serves both; it adds [`topology`].
//!
//! Every import may trap (`trappable`): the host stops a component that
//! goes over a per-call limit instead of answering it.

// What `bindgen!` generates carries the WIT files' documentation where
// they have some; the rest (the generated traits, `Pre` types, accessors
// and fields) has no source a comment could be written in.
#![allow(missing_docs)]

wasmtime::component::bindgen!({
    world: "discovery-backend",
    path: "../../wit/backend@0.1.0",
    imports: { default: trappable },
});

pub use self::wloc::backend::types;
pub use self::wloc::backend::{config, cpuid, files, log};

/// Host bindings of the `annotation-backend` world.
pub mod annotation {
    wasmtime::component::bindgen!({
        world: "annotation-backend",
        path: "../../wit/backend@0.1.0",
        imports: { default: trappable },
        with: {
            "wloc:backend/types": crate::bindings::types,
            "wloc:backend/files": crate::bindings::files,
            "wloc:backend/log": crate::bindings::log,
            "wloc:backend/config": crate::bindings::config,
        },
    });

    pub use self::wloc::backend::topology;
}

pub use annotation::topology;
pub use annotation::{AnnotationBackend, AnnotationBackendPre};

/// Host bindings of the `fabric-reader` world of `wloc:fabric@0.2.0`: the
/// `reader` export (subnets with GUIDs, LIDs, ports, rates and forwarding
/// tables); its imports are `wloc:backend@0.1.0`'s, served by the same
/// host implementation.
pub mod fabric {
    wasmtime::component::bindgen!({
        world: "fabric-reader",
        path: "../../wit/fabric@0.2.0",
        imports: { default: trappable },
        with: {
            "wloc:backend/files": crate::bindings::files,
            "wloc:backend/log": crate::bindings::log,
            "wloc:backend/config": crate::bindings::config,
        },
    });

    pub use self::exports::wloc::fabric::reader;
}

/// Host bindings of the first `fabric-reader` world, of
/// `wloc:backend@0.1.0` (nodes and links only), still loadable.
pub mod fabric_v1 {
    wasmtime::component::bindgen!({
        world: "fabric-reader",
        path: "../../wit/backend@0.1.0",
        imports: { default: trappable },
        with: {
            "wloc:backend/files": crate::bindings::files,
            "wloc:backend/log": crate::bindings::log,
            "wloc:backend/config": crate::bindings::config,
        },
    });

    pub use self::exports::fabric;
}
