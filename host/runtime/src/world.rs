//! The two worlds of `wloc:backend@0.1.0` a component can be loaded in,
//! and what differs between them for the one load and run path of
//! [`crate::runtime`]: the bindings of their export, what the host links
//! for bytes it trusts itself, and what the caller passes to a run.

use wasmtime::Store;
use wasmtime::component::InstancePre;
use wloc_trust::grant::{Admission, Interfaces};
use wloc_trust::manifest::Kind;

use crate::bindings::fabric::FabricReaderPre;
use crate::bindings::fabric::reader::Subnet;
use crate::bindings::fabric_v1::FabricReaderPre as FabricReaderV1Pre;
use crate::bindings::fabric_v1::exports::fabric::Snapshot;
use crate::bindings::types::{Annotations, Discovery};
use crate::bindings::{AnnotationBackendPre, DiscoveryBackendPre};
use crate::state::HostState;

/// What a component's export returns: its record, or the reason it
/// gives for having none.  The `string` is the WIT `result`'s error
/// type, the component's own words, shown as "failed: ...".
pub type GuestResult<R> = Result<R, String>;

/// A world a component is loaded in: [`DiscoveryWorld`] or
/// [`AnnotationWorld`].
pub trait World {
    /// The component, linked and ready to be instantiated in this world.
    #[doc(hidden)]
    type Pre;
    /// What its export returns.
    type Record;
    /// What a component of this world does (it names the world in errors).
    const KIND: Kind;
    /// The WIT package of the world (it names the world in errors).
    const PACKAGE: &'static str;
    /// Every interface a component of this world may import: what is
    /// linked for bytes the host itself trusts.
    const ALL: Interfaces;
    /// Whether runs get the caller's CPUID answers.
    const CPUID: bool;
    /// Checks the linked component against the world's exports.
    #[doc(hidden)]
    fn pre(pre: InstancePre<HostState>) -> wasmtime::Result<Self::Pre>;
    /// Instantiates the component in `store` (errors: `(true, e)`) and
    /// calls its export (errors: `(false, e)`).
    #[doc(hidden)]
    fn call(
        pre: &Self::Pre,
        store: &mut Store<HostState>,
    ) -> Result<GuestResult<Self::Record>, (bool, wasmtime::Error)>;
    /// Why an admitted component may not be loaded in this world, if
    /// it may not.
    fn refuses(adm: &Admission) -> Option<String>;
}

/// The `discovery-backend` world: `discover` returns objects.
pub struct DiscoveryWorld;

impl World for DiscoveryWorld {
    type Pre = DiscoveryBackendPre<HostState>;
    type Record = Discovery;
    const KIND: Kind = Kind::Discovery;
    const PACKAGE: &'static str = "wloc:backend@0.1.0";
    const ALL: Interfaces = Interfaces::DISCOVERY_ALL;
    const CPUID: bool = true;

    fn pre(pre: InstancePre<HostState>) -> wasmtime::Result<Self::Pre> {
        DiscoveryBackendPre::new(pre)
    }

    fn call(
        pre: &Self::Pre,
        store: &mut Store<HostState>,
    ) -> Result<GuestResult<Discovery>, (bool, wasmtime::Error)> {
        pre.instantiate(&mut *store)
            .map_err(|e| (true, e))
            .and_then(|b| b.call_discover(store).map_err(|e| (false, e)))
    }

    fn refuses(adm: &Admission) -> Option<String> {
        (adm.manifest.kind == Kind::Fabric)
            .then(|| "its manifest says fabric, not discovery".to_string())
    }
}

/// The `annotation-backend` world: `annotate` reads the finished
/// topology (the `topology` import) and returns annotations.
pub struct AnnotationWorld;

impl World for AnnotationWorld {
    type Pre = AnnotationBackendPre<HostState>;
    type Record = Annotations;
    const KIND: Kind = Kind::Annotation;
    const PACKAGE: &'static str = "wloc:backend@0.1.0";
    /// The discovery imports and WASI as for every component, plus the
    /// read-only view of the topology.
    const ALL: Interfaces = Interfaces {
        topology: true,
        ..Interfaces::DISCOVERY_ALL
    };
    const CPUID: bool = false;

    fn pre(pre: InstancePre<HostState>) -> wasmtime::Result<Self::Pre> {
        AnnotationBackendPre::new(pre)
    }

    fn call(
        pre: &Self::Pre,
        store: &mut Store<HostState>,
    ) -> Result<GuestResult<Annotations>, (bool, wasmtime::Error)> {
        pre.instantiate(&mut *store)
            .map_err(|e| (true, e))
            .and_then(|b| b.call_annotate(store).map_err(|e| (false, e)))
    }

    fn refuses(adm: &Admission) -> Option<String> {
        (adm.manifest.kind != Kind::Annotation)
            .then(|| format!("its manifest says {}, not annotation", adm.manifest.kind))
    }
}

/// Why a component may not be loaded as a fabric reader, if it may not.
fn refuses_unless_fabric(adm: &Admission) -> Option<String> {
    (adm.manifest.kind != Kind::Fabric)
        .then(|| format!("its manifest says {}, not fabric", adm.manifest.kind))
}

/// The `fabric-reader` world of `wloc:fabric@0.2.0`: `read` returns
/// subnets with ports, rates and forwarding tables.
pub struct FabricWorld;

impl World for FabricWorld {
    type Pre = FabricReaderPre<HostState>;
    type Record = Vec<Subnet>;
    const KIND: Kind = Kind::Fabric;
    const PACKAGE: &'static str = "wloc:fabric@0.2.0";
    /// Files, log and config; never CPUID or the topology.
    const ALL: Interfaces = Interfaces {
        files: true,
        cpuid: false,
        config: true,
        topology: false,
    };
    const CPUID: bool = false;

    fn pre(pre: InstancePre<HostState>) -> wasmtime::Result<Self::Pre> {
        FabricReaderPre::new(pre)
    }

    fn call(
        pre: &Self::Pre,
        store: &mut Store<HostState>,
    ) -> Result<GuestResult<Vec<Subnet>>, (bool, wasmtime::Error)> {
        pre.instantiate(&mut *store)
            .map_err(|e| (true, e))
            .and_then(|b| {
                b.wloc_fabric_reader()
                    .call_read(store)
                    .map_err(|e| (false, e))
            })
    }

    fn refuses(adm: &Admission) -> Option<String> {
        refuses_unless_fabric(adm)
    }
}

/// The first `fabric-reader` world, of `wloc:backend@0.1.0`: `read`
/// returns snapshots of nodes and links.
pub struct FabricV1World;

impl World for FabricV1World {
    type Pre = FabricReaderV1Pre<HostState>;
    type Record = Vec<Snapshot>;
    const KIND: Kind = Kind::Fabric;
    const PACKAGE: &'static str = "wloc:backend@0.1.0";
    const ALL: Interfaces = FabricWorld::ALL;
    const CPUID: bool = false;

    fn pre(pre: InstancePre<HostState>) -> wasmtime::Result<Self::Pre> {
        FabricReaderV1Pre::new(pre)
    }

    fn call(
        pre: &Self::Pre,
        store: &mut Store<HostState>,
    ) -> Result<GuestResult<Vec<Snapshot>>, (bool, wasmtime::Error)> {
        pre.instantiate(&mut *store)
            .map_err(|e| (true, e))
            .and_then(|b| b.fabric().call_read(store).map_err(|e| (false, e)))
    }

    fn refuses(adm: &Admission) -> Option<String> {
        refuses_unless_fabric(adm)
    }
}
