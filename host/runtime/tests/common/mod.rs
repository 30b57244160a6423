//! Shared by the runtime's tests: one runtime per test binary, with a
//! compiled cache in the target's temporary folder.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use wloc_core::{ObjType, Topology, TypeFilter};
use wloc_runtime::{
    CompiledCache, ComponentError, ErrorKind, LoadedComponent, LogTarget, RunOptions, Runtime,
    builtin,
};

pub const HOSTILE: &[u8] = include_bytes!(env!("WLOC_HOSTILE_WASM"));
pub const HOSTILE_NET: &[u8] = include_bytes!(env!("WLOC_HOSTILE_NET_WASM"));
pub const HOSTILE_V2: &[u8] = include_bytes!(env!("WLOC_HOSTILE_V2_WASM"));

pub fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("wloc-cache");
        Runtime::with_cache(CompiledCache::at(dir)).expect("runtime")
    })
}

pub fn synthetic() -> &'static LoadedComponent {
    static C: OnceLock<LoadedComponent> = OnceLock::new();
    C.get_or_init(|| {
        runtime()
            .load(builtin::SYNTHETIC_NAME, builtin::synthetic_wasm())
            .expect("synthetic component")
    })
}

pub fn hostile() -> &'static LoadedComponent {
    static C: OnceLock<LoadedComponent> = OnceLock::new();
    C.get_or_init(|| {
        runtime()
            .load("hostile", HOSTILE)
            .expect("hostile component")
    })
}

/// lstopo's filters: everything kept, I/O when important.
pub fn lstopo_topology() -> Topology {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    t.set_io_types_filter(TypeFilter::KeepImportant);
    t
}

pub fn config(pairs: &[(&str, &str)]) -> Arc<BTreeMap<String, String>> {
    Arc::new(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

pub fn opts(pairs: &[(&str, &str)]) -> RunOptions {
    RunOptions {
        config: config(pairs),
        log: LogTarget::Capture,
        ..RunOptions::default()
    }
}

/// Runs the synthetic component on a description.
pub fn via_component(desc: &str) -> Result<Topology, ComponentError> {
    runtime().discover(
        synthetic(),
        &opts(&[("description", desc)]),
        lstopo_topology(),
    )
}

/// Builds a description natively.
pub fn native(desc: &str) -> Topology {
    wloc_core::synthetic::parse(desc)
        .unwrap()
        .build(lstopo_topology())
        .unwrap()
}

/// A line per object (depth-first) with everything that describes it,
/// and the topology-wide data.
pub fn dump(t: &Topology) -> Vec<String> {
    let mut out = Vec::new();
    for id in t.iter_dfs() {
        let o = t.obj(id);
        out.push(format!(
            "{} os={:?} gp={} depth={:?} logical={} cpuset={:?} ccpuset={:?} nodeset={:?} cnodeset={:?} attr={:?} name={:?} subtype={:?} infos={:?} mem={} sym={} parent={:?}",
            o.obj_type,
            o.os_index,
            o.gp_index,
            o.depth(),
            o.logical_index(),
            o.cpuset.as_ref().map(|c| c.to_string()),
            o.complete_cpuset.as_ref().map(|c| c.to_string()),
            o.nodeset.as_ref().map(|c| c.to_string()),
            o.complete_nodeset.as_ref().map(|c| c.to_string()),
            o.attr,
            o.name,
            o.subtype,
            o.infos,
            o.total_memory,
            o.symmetric_subtree(),
            o.parent().map(|p| t.obj(p).gp_index),
        ));
    }
    out.push(format!("infos {:?}", t.infos));
    out.push(format!("support {:?}", t.support));
    out.push(format!(
        "allowed {} {}",
        t.allowed_cpuset, t.allowed_nodeset
    ));
    out.push(format!("distances {:?}", t.distances));
    out.push(format!("memattrs {:?}", t.memattrs));
    out.push(format!("cpukinds {:?}", t.cpukinds));
    out.push(format!("memtiers {:?}", t.memtiers));
    out
}

pub fn count(t: &Topology, ty: ObjType) -> usize {
    t.objs_by_type(ty).len()
}

/// Runs the hostile component in a mode.
pub fn hostile_run(
    mode: &str,
    extra: &[(&str, &str)],
    limits: impl FnOnce(&mut wloc_runtime::Limits),
) -> Result<Topology, ComponentError> {
    let mut pairs = vec![("mode", mode)];
    pairs.extend_from_slice(extra);
    let mut o = opts(&pairs);
    limits(&mut o.limits);
    runtime().discover(hostile(), &o, lstopo_topology())
}

/// After a bad run, the same runtime must still run good components.
pub fn still_works() {
    let t = hostile_run("good", &[], |_| {}).expect("a good run after a bad one");
    assert_eq!(count(&t, ObjType::PU), 1);
    let t = via_component("pack:2 core:2 pu:2").expect("synthetic after a bad run");
    assert_eq!(count(&t, ObjType::PU), 8);
}

pub fn kind_of(r: Result<Topology, ComponentError>) -> (ErrorKind, String) {
    match r {
        Ok(_) => panic!("the run should have failed"),
        Err(e) => {
            assert_eq!(e.component, "hostile");
            assert_eq!(e.digest.len(), 64);
            let msg = e.to_string();
            (e.kind, msg)
        }
    }
}
