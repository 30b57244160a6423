//! AMD family 1Ah with two kinds of core complexes (Zen 5 and Zen 5c) in
//! one package, decoded from CPUID dumps in the `hwloc-gather-cpuid`
//! format (`tests/data/`, written by `tests/data/gen_amd_1ah.py`).
//!
//! The expected objects are those hwloc 3.0 (libhwloc 3.0.0a1, x86
//! component alone on the dump) builds from the same dumps, kept next to
//! each dump as `*.hwloc3.xml`: leaf 0x80000026 gives cores, complexes
//! and dies, and a die that covers its whole package is not kept.

use std::path::PathBuf;

use wloc_core::{ObjType, Topology, TypeFilter};
use wloc_probe::{DumpSource, discover};

/// The package's folder, as Cargo gives it to the test when it runs it
/// (the path compiled in is the fallback): a test binary left in a target
/// folder shared with another checkout of the tree reads this checkout's
/// data, not that of a checkout which may be gone.
fn manifest_dir() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into())
        .into()
}

fn load(name: &str) -> Topology {
    let dir = manifest_dir().join("tests/data").join(name);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().into_string().unwrap(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    let src =
        DumpSource::from_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice()))).unwrap();
    let mut topo = Topology::new();
    topo.set_icache_types_filter(TypeFilter::KeepAll);
    discover(&src, topo).unwrap()
}

fn os_indexes(t: &Topology, ty: ObjType) -> Vec<Option<u32>> {
    t.objs_by_type(ty)
        .iter()
        .map(|&o| t.obj(o).os_index)
        .collect()
}

fn cpusets(t: &Topology, ty: ObjType) -> Vec<String> {
    t.objs_by_type(ty)
        .iter()
        .map(|&o| t.obj(o).cpuset.as_ref().unwrap().to_list_string())
        .collect()
}

fn l3_sizes(t: &Topology) -> Vec<u64> {
    t.objs_by_type(ObjType::L3Cache)
        .iter()
        .map(|&o| t.obj(o).cache().unwrap().size)
        .collect()
}

fn kinds(t: &Topology) -> Vec<(String, String)> {
    t.cpukinds
        .iter()
        .map(|k| (k.cpuset.to_list_string(), k.infos[0].value.clone()))
        .collect()
}

/// A Strix Point-like part: 4 Zen 5 cores (16 MB L3) and 8 Zen 5c cores
/// (8 MB L3), two complexes on one die.  Leaf 0x80000026 reports the die
/// level with the same shift as the socket level, so every PU has die id 0:
/// that die is the package, and hwloc 3.0 shows no Die.
#[test]
fn one_die_two_complexes_has_no_die() {
    let t = load("AMD-1Ah-1die-2ccx");
    assert_eq!(os_indexes(&t, ObjType::Package), [Some(0)]);
    assert_eq!(os_indexes(&t, ObjType::Die), []);
    assert!(t.objs_by_type(ObjType::Group).is_empty());
    assert_eq!(cpusets(&t, ObjType::L3Cache), ["0-3,12-15", "4-11,16-23"]);
    assert_eq!(l3_sizes(&t), [16 << 20, 8 << 20]);
    // Core ids are the APIC ids without the thread bit: Zen 5c from 8.
    assert_eq!(
        os_indexes(&t, ObjType::Core),
        [0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15].map(Some)
    );
    assert_eq!(t.objs_by_type(ObjType::L2Cache).len(), 12);
    assert_eq!(t.objs_by_type(ObjType::L1ICache).len(), 12);
    assert_eq!(t.objs_by_type(ObjType::PU).len(), 24);
    // The package sits right above the L3 caches.
    for l3 in t.objs_by_type(ObjType::L3Cache) {
        let parent = t.obj(l3).parent().unwrap();
        assert_eq!(t.obj(parent).obj_type, ObjType::Package);
    }
    assert_eq!(
        kinds(&t),
        [
            ("4-11,16-23".into(), "AMDEfficiency".into()),
            ("0-3,12-15".into(), "AMDPerformance".into()),
        ]
    );
}

/// Two CCDs in one package, 8 Zen 5 cores (32 MB L3) and 16 Zen 5c cores
/// (16 MB L3): the dies are smaller than the package, so hwloc 3.0 keeps
/// them, one above each L3.
#[test]
fn two_ccds_keep_their_dies() {
    let t = load("AMD-1Ah-2ccd");
    assert_eq!(os_indexes(&t, ObjType::Package), [Some(0)]);
    assert_eq!(os_indexes(&t, ObjType::Die), [Some(0), Some(1)]);
    assert_eq!(cpusets(&t, ObjType::Die), ["0-7,24-31", "8-23,32-47"]);
    assert_eq!(cpusets(&t, ObjType::L3Cache), cpusets(&t, ObjType::Die));
    assert_eq!(l3_sizes(&t), [32 << 20, 16 << 20]);
    assert!(t.objs_by_type(ObjType::Group).is_empty());
    let cores: Vec<Option<u32>> = (0..8).chain(16..32).map(Some).collect();
    assert_eq!(os_indexes(&t, ObjType::Core), cores);
    assert_eq!(t.objs_by_type(ObjType::PU).len(), 48);
}
