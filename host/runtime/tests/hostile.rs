//! Hostile components: each misbehaviour is refused or contained with a
//! clear message, and the same runtime keeps working afterwards.

mod common;

use common::*;
use std::time::{Duration, Instant};
use wloc_core::ObjType;
use wloc_runtime::ErrorKind;

#[test]
fn spinning_forever_hits_the_deadline() {
    let t = Instant::now();
    let (k, msg) = kind_of(hostile_run("spin", &[], |l| {
        l.deadline = Duration::from_millis(200);
        l.fuel = u64::MAX / 2;
    }));
    assert_eq!(k, ErrorKind::Deadline(Duration::from_millis(200)), "{msg}");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(msg.contains("past its deadline"), "{msg}");
    still_works();
}

#[test]
fn spinning_forever_runs_out_of_fuel() {
    let (k, msg) = kind_of(hostile_run("spin", &[], |l| {
        l.fuel = 50_000_000;
        l.deadline = Duration::from_secs(60);
    }));
    assert_eq!(k, ErrorKind::OutOfFuel { budget: 50_000_000 }, "{msg}");
    assert!(msg.contains("fuel"), "{msg}");
    still_works();
}

#[test]
fn allocating_without_bound_hits_the_memory_cap() {
    let (k, msg) = kind_of(hostile_run("alloc", &[], |l| l.memory_bytes = 64 << 20));
    match k {
        ErrorKind::OutOfMemory { wanted, cap } => {
            assert_eq!(cap, 64 << 20);
            assert!(wanted > cap);
        }
        k => panic!("{k:?}: {msg}"),
    }
    assert!(msg.contains("memory"), "{msg}");
    still_works();
}

#[test]
fn a_panic_is_reported_with_its_message() {
    let (k, msg) = kind_of(hostile_run("panic", &[], |_| {}));
    match k {
        ErrorKind::Panic(m) => assert!(m.contains("panicked on purpose"), "{m}"),
        k => panic!("{k:?}: {msg}"),
    }
    still_works();
}

#[test]
fn traps_exits_and_errors_are_reported() {
    let (k, msg) = kind_of(hostile_run("unreachable", &[], |_| {}));
    assert!(matches!(k, ErrorKind::Trap(_)), "{msg}");
    let (k, msg) = kind_of(hostile_run("exit", &[], |_| {}));
    // WASI 0.2 `exit` only tells success from failure.
    assert_eq!(k, ErrorKind::Exit(1), "{msg}");
    assert!(msg.contains("exited with status 1"), "{msg}");
    let (k, msg) = kind_of(hostile_run("error", &[], |_| {}));
    assert_eq!(
        k,
        ErrorKind::Failed("hostile component gave up on purpose".into()),
        "{msg}"
    );
    still_works();
}

/// Malformed records: each is refused with a message naming the problem.
#[test]
fn malformed_data_is_refused() {
    let cases: &[(&str, &str)] = &[
        ("huge-bitmap", "has 131072 words (at most 65536)"),
        ("infinite-cpuset", "cpuset is infinite"),
        ("empty-pu", "needs a non-empty cpuset"),
        ("pu-without-os-index", "a PU needs an OS index"),
        // PU P#0 with the cpuset {1}: index 1 is past the record's PUs.
        (
            "pu-set-mismatch",
            "cpuset holds index 1, beyond 0, the highest PU index of the record",
        ),
        (
            "parent-out-of-range",
            "parent id 77 is not an object of this discovery",
        ),
        ("parent-later", "does not come before it"),
        ("cycle", "does not come before it"),
        ("self-parent", "does not come before it"),
        ("duplicate-ids", "id 2 is used by object 1 and by object 2"),
        ("two-roots", "a second root Machine"),
        ("machine-child", "a Machine can only be the root"),
        ("pu-child", "cannot be a child of object 1"),
        ("bad-attr", "has cache attributes, which a PU cannot have"),
        ("io-without-parent", "needs a parent"),
        ("huge-strings", "bytes long (at most 65536)"),
        ("distances-size", "has 1 objects and 2 values instead of 1²"),
        (
            "distances-unknown-object",
            "refers to id 99, which is no object",
        ),
        (
            "memattr-unknown-target",
            "refers to id 1234, which is no object",
        ),
    ];
    for (mode, want) in cases {
        let (k, msg) = kind_of(hostile_run(mode, &[], |_| {}));
        assert!(
            matches!(k, ErrorKind::InvalidData(_)),
            "{mode}: {k:?}: {msg}"
        );
        assert!(msg.contains(want), "{mode}: {msg}");
        assert!(msg.contains("returned invalid data"), "{mode}: {msg}");
        eprintln!("{mode}: {msg}");
    }
    still_works();
}

#[test]
fn huge_lists_are_refused() {
    let (k, msg) = kind_of(hostile_run("huge-list", &[], |l| l.max_objects = 1000));
    assert!(matches!(k, ErrorKind::InvalidData(_)), "{msg}");
    assert!(
        msg.contains("5002 objects returned (at most 1000)"),
        "{msg}"
    );
    let (_, msg) = kind_of(hostile_run("huge-list", &[], |l| {
        l.max_returned_bytes = 100_000
    }));
    assert!(
        msg.contains("bytes of data returned (at most 100000)"),
        "{msg}"
    );
    // Within the limits the same record is fine.
    let t = hostile_run("huge-list", &[], |_| {}).unwrap();
    assert_eq!(count(&t, ObjType::PU), 5001);
    still_works();
}

#[test]
fn floods_are_contained() {
    let mut o = opts(&[("mode", "log-flood")]);
    o.limits.max_log_messages = 10;
    let out = runtime().run(hostile(), &o).unwrap();
    assert_eq!(out.logs.len(), 11, "{:?}", out.logs);
    assert!(out.logs[10].contains("the rest are dropped"));
    assert!(
        out.logs.iter().all(|l| !l.contains('\x1b')),
        "{:?}",
        out.logs
    );
    assert!(
        out.logs[0].starts_with("wloc: component hostile error: flood 0 \\u{1b}[31mred"),
        "{}",
        out.logs[0]
    );
    // Printing is swallowed, never shown, never fatal.
    hostile_run("print-flood", &[], |_| {}).unwrap();
    still_works();
}

#[test]
fn read_many_with_too_many_paths_is_stopped() {
    let (k, msg) = kind_of(hostile_run("read-huge", &[("paths", "/x")], |_| {}));
    assert!(matches!(k, ErrorKind::HostLimit(_)), "{msg}");
    assert!(
        msg.contains("read-many with 200000 paths (at most 65536 per call)"),
        "{msg}"
    );
    still_works();
}

#[test]
fn sockets_are_refused_at_load_time() {
    let e = match runtime().load("hostile-net", HOSTILE_NET) {
        Ok(_) => panic!("a component importing sockets was loaded"),
        Err(e) => e,
    };
    assert!(matches!(e.kind, ErrorKind::Link(_)), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("hostile-net") && msg.contains("wasi:sockets"),
        "{msg}"
    );
    eprintln!("{msg}");
    still_works();
}

#[test]
fn a_newer_wit_version_is_refused_at_load_time() {
    let e = match runtime().load("hostile-v2", HOSTILE_V2) {
        Ok(_) => panic!("a wloc:backend@0.2.0 component was loaded"),
        Err(e) => e,
    };
    assert!(matches!(e.kind, ErrorKind::Link(_)), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("hostile-v2") && msg.contains("wloc:backend/"),
        "{msg}"
    );
    assert!(msg.contains("@0.2.0"), "{msg}");
    eprintln!("{msg}");
    still_works();
}

#[test]
fn garbage_and_tampered_bytes_are_refused() {
    let e = runtime()
        .load("garbage", b"\0asm\x0d\0\x01\0garbage")
        .err()
        .expect("garbage loaded");
    assert!(matches!(e.kind, ErrorKind::Compile(_)), "{e}");
    // A flipped byte in the middle of the code: refused, or at least a
    // different digest (which a policy pinning digests refuses).
    let mut bytes = wloc_runtime::builtin::synthetic_wasm().to_vec();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    match runtime().load("tampered", &bytes) {
        Err(e) => assert!(
            matches!(e.kind, ErrorKind::Compile(_) | ErrorKind::Link(_)),
            "{e}"
        ),
        Ok(c) => assert_ne!(c.digest(), synthetic().digest()),
    }
    still_works();
}

#[test]
fn no_environment_no_arguments_no_wasi_files() {
    // The host has an environment (no test changes the one its threads
    // share); the guest must see none of it.
    assert!(std::env::var_os("PATH").is_some());
    let t = hostile_run("env", &[], |_| {}).unwrap();
    let env = t.infos.iter().find(|i| i.name == "env").unwrap();
    assert_eq!(env.value, "");
    let args = t.infos.iter().find(|i| i.name == "args").unwrap();
    assert_eq!(args.value, "");
    let t = hostile_run("wasi-fs", &[("paths", "/etc/passwd\n/\n/tmp/x")], |_| {}).unwrap();
    let wasi: Vec<_> = t
        .infos
        .iter()
        .filter(|i| i.name.starts_with("wasi "))
        .collect();
    assert_eq!(wasi.len(), 6);
    for i in wasi {
        assert!(i.value.starts_with("error"), "{}: {}", i.name, i.value);
    }
    assert!(!std::path::Path::new("/tmp/x.wloc-hostile").exists());
    still_works();
}

/// What a run costs beyond the component's own work: a new store, WASI
/// context and instance, the call, the record lifted and checked.
#[test]
fn per_run_overhead_is_small() {
    let o = opts(&[("mode", "good")]);
    let _ = runtime().run(hostile(), &o).unwrap();
    let mut times: Vec<Duration> = (0..200)
        .map(|_| {
            let t = Instant::now();
            runtime()
                .discover(hostile(), &o, lstopo_topology())
                .unwrap();
            t.elapsed()
        })
        .collect();
    times.sort();
    eprintln!(
        "per run (store, instance, call, checks, finish): median {:?}, p90 {:?}",
        times[100], times[180]
    );
    assert!(times[100] < Duration::from_millis(20), "{:?}", times[100]);
}

/// The `cpuid` import answers from the provider the host gives, zeros for
/// PUs it does not have, and nothing without a provider.
#[test]
fn cpuid_comes_from_the_host_provider() {
    struct Fake;
    impl wloc_runtime::CpuidSource for Fake {
        fn pu_count(&self) -> usize {
            2
        }
        fn os_index(&self, pu: usize) -> u32 {
            [5, 7][pu]
        }
        fn cpuid(&self, pu: usize, leaf: u32, subleaf: u32) -> [u32; 4] {
            [pu as u32, leaf, subleaf, 42]
        }
    }
    let mut o = opts(&[("mode", "cpuid")]);
    o.cpuid = Some(std::sync::Arc::new(Fake));
    let t = runtime()
        .discover(hostile(), &o, lstopo_topology())
        .unwrap();
    let infos: Vec<(String, String)> = t
        .infos
        .iter()
        .map(|i| (i.name.clone(), i.value.clone()))
        .collect();
    assert_eq!(
        infos,
        [
            ("pu-count", "2"),
            ("pu 0", "os 5: 0 1f 3 2a"),
            ("pu 1", "os 7: 1 1f 3 2a"),
            ("pu 2", "os 0: 0 0 0 0"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    let t = hostile_run("cpuid", &[], |_| {}).unwrap();
    assert_eq!(t.infos[0].value, "0");
    still_works();
}
