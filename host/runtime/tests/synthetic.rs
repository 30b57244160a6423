//! The synthetic component, run in the sandbox, builds the same topology
//! as the native synthetic builder.

mod common;

use common::*;
use std::time::Instant;
use wloc_core::ObjType;
use wloc_runtime::ErrorKind;

const DESCRIPTIONS: &[&str] = &[
    "pu:1",
    "pack:2 core:4 pu:2",
    "pack:2 [numa(memory=16GB)] l3:1(size=32MB) core:4 pu:2",
    "numa:2(memory=8GB) pack:1 l2:2(size=1MB) l1d:2 l1i:2 core:1 pu:4",
    "pack:2 die:2 group:2 core:2 pu:2",
    "pack:2(indexes=1,0) core:2 pu:2(indexes=7,6,5,4,3,2,1,0)",
    "pack:2 [numa(memory=4GB memorysidecachesize=1GB)] core:2 [numa(memory=1GB)] pu:2",
    "(memory=2GB) pack:3 core:3 pu:3",
    "pack:4 [numa(memory=64GB)] l3:4(size=32MB) core:16 l2:1(size=1MB) pu:16",
];

#[test]
fn same_topology_as_native() {
    for desc in DESCRIPTIONS {
        let n = native(desc);
        let c = via_component(desc).unwrap_or_else(|e| panic!("{desc}: {e}"));
        let (dn, dc) = (dump(&n), dump(&c));
        assert_eq!(dn.len(), dc.len(), "{desc}: object counts differ");
        for (a, b) in dn.iter().zip(&dc) {
            assert_eq!(a, b, "{desc}");
        }
    }
}

#[test]
fn bad_descriptions_are_reported_by_the_component() {
    let e = via_component("pack:2 bogus:3 pu:2").unwrap_err();
    match &e.kind {
        ErrorKind::Failed(m) => assert!(m.contains("invalid synthetic description"), "{m}"),
        k => panic!("{k:?}"),
    }
    assert!(
        e.to_string().starts_with("component synthetic (sha256 "),
        "{e}"
    );
    let e = runtime()
        .discover(synthetic(), &opts(&[]), lstopo_topology())
        .unwrap_err();
    assert!(e.to_string().contains("no synthetic description"), "{e}");
}

/// 4096 PUs: the host rebuilds the tree by parent in about linear time.
#[test]
fn large_machine_4096_pus() {
    let desc = "pack:4 [numa(memory=64GB)] l3:4(size=32MB) core:16 l2:1(size=1MB) pu:16";
    let t0 = Instant::now();
    let n = native(desc);
    let native_time = t0.elapsed();
    let out = runtime()
        .run(synthetic(), &opts(&[("description", desc)]))
        .unwrap();
    let t1 = Instant::now();
    let c = wloc_runtime::build_topology(
        "synthetic",
        synthetic().digest(),
        &out.discovery,
        &wloc_runtime::Limits::default(),
        lstopo_topology(),
    )
    .unwrap();
    let rebuild = t1.elapsed();
    assert_eq!(count(&c, ObjType::PU), 4096);
    assert_eq!(dump(&n), dump(&c));
    eprintln!(
        "4096 PUs: native build {native_time:?}; component run {:?} ({} objects, {} fuel); host rebuild by parent {rebuild:?}",
        out.elapsed,
        out.discovery.objects.len(),
        out.fuel_used
    );
    // Generous bounds: debug-free release builds do this in milliseconds.
    assert!(rebuild < native_time * 4 + std::time::Duration::from_millis(200));
}

/// Built-in code is used where it lies in the executable by one runtime
/// of the process and copied by the others: loading a built-in again and
/// again, from several runtimes at once, works, and each load runs.
#[test]
fn builtin_loads_repeatedly_from_several_runtimes() {
    use wloc_runtime::{CompiledCache, Limits, Runtime, builtin, enforce, policy::Policy};
    let policy = Policy::parse("", "test").unwrap();
    let adm = enforce::admit_builtin(&policy, &builtin::SYNTHETIC, Limits::default()).unwrap();
    let policy = &policy;
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                let rt = Runtime::with_cache(CompiledCache::disabled()).unwrap();
                let loads: Vec<_> = (0..3)
                    .map(|_| rt.load_builtin(&adm, &builtin::SYNTHETIC).unwrap())
                    .collect();
                for c in &loads {
                    let t = rt
                        .discover(
                            c,
                            &opts(&[("description", "pack:2 pu:3")]),
                            lstopo_topology(),
                        )
                        .unwrap();
                    assert_eq!(count(&t, ObjType::PU), 6);
                }
                // A trap in that code (out of fuel) is caught as usual.
                let starved = enforce::admit_builtin(
                    policy,
                    &builtin::SYNTHETIC,
                    Limits {
                        fuel: 10_000,
                        ..Limits::default()
                    },
                )
                .unwrap();
                let c = rt.load_builtin(&starved, &builtin::SYNTHETIC).unwrap();
                let desc = opts(&[("description", "pack:64 core:64 pu:4")]);
                match rt.discover(&c, &desc, lstopo_topology()) {
                    Err(e) => assert!(matches!(e.kind, ErrorKind::OutOfFuel { .. }), "{e}"),
                    Ok(_) => panic!("10,000 units of fuel built 16,384 PUs"),
                }
            });
        }
    });
}
