//! CPUID decoding on hand-made register tables: each vendor path, the
//! quirks, CPU kinds and the error cases.

use std::collections::BTreeMap;

use wloc_core::object::{CacheKind, group_kind};
use wloc_core::{ObjType, Topology, TypeFilter};
use wloc_probe::{CpuidSource, ProbeError, discover};

/// A CPUID table per PU; missing entries read zero.
#[derive(Clone, Default)]
struct Table {
    pus: Vec<BTreeMap<(u32, u32), [u32; 4]>>,
}

impl Table {
    fn new(n: usize) -> Self {
        Table {
            pus: vec![BTreeMap::new(); n],
        }
    }
    fn all(&mut self, leaf: u32, sub: u32, regs: [u32; 4]) -> &mut Self {
        for p in &mut self.pus {
            p.insert((leaf, sub), regs);
        }
        self
    }
    fn each(&mut self, leaf: u32, sub: u32, f: impl Fn(usize) -> [u32; 4]) -> &mut Self {
        for (i, p) in self.pus.iter_mut().enumerate() {
            p.insert((leaf, sub), f(i));
        }
        self
    }
    fn vendor(&mut self, highest: u32, name: &[u8; 12]) -> &mut Self {
        let w = |i: usize| u32::from_le_bytes([name[i], name[i + 1], name[i + 2], name[i + 3]]);
        self.all(0, 0, [highest, w(0), w(8), w(4)])
    }
    fn brand(&mut self, s: &str) -> &mut Self {
        let mut b = [0u8; 48];
        b[..s.len()].copy_from_slice(s.as_bytes());
        for (k, leaf) in (0x8000_0002u32..=0x8000_0004).enumerate() {
            let mut r = [0u32; 4];
            for (j, reg) in r.iter_mut().enumerate() {
                let o = k * 16 + j * 4;
                *reg = u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
            }
            self.all(leaf, 0, r);
        }
        self
    }
}

impl CpuidSource for Table {
    fn pu_count(&self) -> usize {
        self.pus.len()
    }
    fn os_index(&self, pu: usize) -> u32 {
        pu as u32
    }
    fn cpuid(&self, pu: usize, leaf: u32, subleaf: u32) -> [u32; 4] {
        self.pus[pu]
            .get(&(leaf, subleaf))
            .copied()
            .unwrap_or([0; 4])
    }
}

/// Leaf 4 / 0x8000001D cache description.
fn cache(
    kind: u32,
    level: u32,
    sharing: u32,
    cores: u32,
    line: u32,
    ways: u32,
    sets: u32,
) -> [u32; 4] {
    [
        kind | level << 5 | (sharing - 1) << 14 | (cores - 1) << 26,
        (line - 1) | (ways - 1) << 22,
        sets - 1,
        if level == 3 { 2 } else { 0 },
    ]
}

fn topo_with_icaches() -> Topology {
    let mut t = Topology::new();
    t.set_icache_types_filter(TypeFilter::KeepAll);
    t
}

fn count(t: &Topology, ty: ObjType) -> usize {
    t.objs_by_type(ty).len()
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

/// One package, two cores of two threads, leaf 0xB, leaf 4 caches.
fn intel_2c2t() -> Table {
    let mut t = Table::new(4);
    t.vendor(0xb, b"GenuineIntel")
        .each(1, 0, |i| {
            [0x0005_0654, (i as u32) << 24 | 4 << 16, 1 << 21, 1 << 28]
        })
        .all(4, 0, cache(1, 1, 2, 2, 64, 8, 64))
        .all(4, 1, cache(2, 1, 2, 2, 64, 8, 64))
        .all(4, 2, cache(3, 2, 2, 2, 64, 16, 1024))
        .all(4, 3, cache(3, 3, 4, 2, 64, 16, 4096))
        .each(0xb, 0, |i| [1, 2, 0x100, i as u32])
        .each(0xb, 1, |i| [2, 4, 0x201, i as u32])
        .each(0xb, 2, |i| [0, 0, 2, i as u32])
        .all(0x8000_0000, 0, [0x8000_0008, 0, 0, 0])
        .brand("   Test CPU @ 1GHz  ");
    t
}

#[test]
fn intel_leaf_b_and_leaf_4() {
    let t = discover(&intel_2c2t(), topo_with_icaches()).unwrap();
    assert_eq!(count(&t, ObjType::Package), 1);
    assert_eq!(os_indexes(&t, ObjType::Core), [Some(0), Some(1)]);
    assert_eq!(cpusets(&t, ObjType::Core), ["0-1", "2-3"]);
    assert_eq!(count(&t, ObjType::PU), 4);
    assert_eq!(count(&t, ObjType::L3Cache), 1);
    assert_eq!(cpusets(&t, ObjType::L2Cache), ["0-1", "2-3"]);
    assert_eq!(count(&t, ObjType::L1Cache), 2);
    assert_eq!(count(&t, ObjType::L1ICache), 2);
    let l3 = t
        .obj(t.objs_by_type(ObjType::L3Cache)[0])
        .cache()
        .unwrap()
        .clone();
    assert_eq!((l3.size, l3.linesize, l3.associativity), (4 << 20, 64, 16));
    assert!(l3.inclusive);
    let l1 = t
        .obj(t.objs_by_type(ObjType::L1Cache)[0])
        .cache()
        .unwrap()
        .clone();
    assert_eq!(
        (l1.size, l1.kind, l1.inclusive),
        (32 << 10, CacheKind::Data, false)
    );

    let pkg = t.obj(t.objs_by_type(ObjType::Package)[0]);
    let infos: Vec<(&str, &str)> = pkg
        .infos
        .iter()
        .map(|i| (i.name.as_str(), i.value.as_str()))
        .collect();
    assert_eq!(
        infos,
        [
            ("CPUVendor", "GenuineIntel"),
            ("CPUFamilyNumber", "6"),
            ("CPUModelNumber", "85"),
            ("CPUModel", "Test CPU @ 1GHz  "),
            ("CPUStepping", "4"),
        ]
    );
    assert!(
        t.infos
            .iter()
            .any(|i| i.name == "Backend" && i.value == "x86")
    );
    assert_eq!(count(&t, ObjType::NUMANode), 1);
    assert!(t.cpukinds.is_empty());
}

#[test]
fn filters_are_honoured() {
    let mut topo = Topology::new();
    topo.set_cache_types_filter(TypeFilter::KeepNone);
    topo.set_type_filter(ObjType::Core, TypeFilter::KeepNone)
        .unwrap();
    let t = discover(&intel_2c2t(), topo).unwrap();
    assert_eq!(count(&t, ObjType::Core), 0);
    assert_eq!(count(&t, ObjType::L1Cache), 0);
    assert_eq!(count(&t, ObjType::L3Cache), 0);
    assert_eq!(count(&t, ObjType::PU), 4);
}

/// Eight single-thread cores: 2 per module, 2 modules per die-group (leaf
/// 0x1F type 6, unknown to the model), 2 die-groups per package.
#[test]
fn leaf_1f_modules_and_unknown_levels() {
    let mut t = Table::new(8);
    t.vendor(0x1f, b"GenuineIntel")
        .each(1, 0, |i| {
            [0x000b_06a2, (i as u32) << 24 | 8 << 16, 1 << 21, 1 << 28]
        })
        .each(0x1f, 0, |i| [0, 1, 0x100, i as u32])
        .each(0x1f, 1, |i| [1, 2, 0x201, i as u32])
        .each(0x1f, 2, |i| [2, 4, 0x302, i as u32])
        .each(0x1f, 3, |i| [3, 8, 0x603, i as u32])
        .each(0x1f, 4, |i| [0, 0, 4, i as u32]);
    let topo = discover(&t, Topology::new()).unwrap();
    assert_eq!(count(&topo, ObjType::Package), 1);
    assert_eq!(count(&topo, ObjType::Core), 8);
    let groups = topo.objs_by_type(ObjType::Group);
    assert_eq!(groups.len(), 6);
    let modules: Vec<_> = groups
        .iter()
        .map(|&g| topo.obj(g))
        .filter(|g| g.subtype.as_deref() == Some("Module"))
        .collect();
    assert_eq!(modules.len(), 4);
    assert_eq!(
        modules
            .iter()
            .map(|g| g.cpuset.as_ref().unwrap().to_list_string())
            .collect::<Vec<_>>(),
        ["0-1", "2-3", "4-5", "6-7"]
    );
    let unknown: Vec<_> = groups
        .iter()
        .map(|&g| topo.obj(g))
        .filter(|g| g.group().unwrap().kind == group_kind::INTEL_EXTTOPOENUM_UNKNOWN)
        .collect();
    assert_eq!(unknown.len(), 2);
    assert_eq!(unknown[0].group().unwrap().subkind, 3);
    assert_eq!(unknown[1].os_index, Some(1));
    assert_eq!(unknown[1].cpuset.as_ref().unwrap().to_list_string(), "4-7");
}

#[test]
fn leaf_1f_dies() {
    // 2 packages of 2 dies of 2 cores of 2 threads.
    let mut t = Table::new(16);
    t.vendor(0x1f, b"GenuineIntel")
        .each(1, 0, |i| {
            [0x000806f8, (i as u32) << 24 | 16 << 16, 1 << 21, 1 << 28]
        })
        .each(0x1f, 0, |i| [1, 2, 0x100, i as u32])
        .each(0x1f, 1, |i| [2, 4, 0x201, i as u32])
        .each(0x1f, 2, |i| [3, 8, 0x502, i as u32])
        .each(0x1f, 3, |i| [0, 0, 3, i as u32]);
    let topo = discover(&t, Topology::new()).unwrap();
    assert_eq!(os_indexes(&topo, ObjType::Package), [Some(0), Some(1)]);
    assert_eq!(
        os_indexes(&topo, ObjType::Die),
        [Some(0), Some(1), Some(0), Some(1)]
    );
    assert_eq!(
        cpusets(&topo, ObjType::Die),
        ["0-3", "4-7", "8-11", "12-15"]
    );
    // Core ids are unique within the package.
    assert_eq!(
        os_indexes(&topo, ObjType::Core),
        [0, 1, 2, 3, 0, 1, 2, 3].map(Some)
    );
}

/// Two K8 packages of two cores: 0x80000008 and the legacy cache leaves.
#[test]
fn amd_k8_legacy_leaves() {
    let mut t = Table::new(4);
    t.vendor(1, b"AuthenticAMD")
        .each(1, 0, |i| {
            [0x0002_0f12, (i as u32) << 24 | 2 << 16, 0, 1 << 28]
        })
        .all(0x8000_0000, 0, [0x8000_0008, 0, 0, 0])
        .all(0x8000_0008, 0, [0x3028, 0, 1, 0])
        .all(
            0x8000_0005,
            0,
            [
                0,
                0,
                64 << 24 | 2 << 16 | 1 << 8 | 64,
                64 << 24 | 2 << 16 | 1 << 8 | 64,
            ],
        )
        .all(
            0x8000_0006,
            0,
            [0, 0, 1024 << 16 | 8 << 12 | 1 << 8 | 64, 0],
        );
    let topo = discover(&t, topo_with_icaches()).unwrap();
    assert_eq!(os_indexes(&topo, ObjType::Package), [Some(0), Some(1)]);
    assert_eq!(
        os_indexes(&topo, ObjType::Core),
        [Some(0), Some(1), Some(0), Some(1)]
    );
    let l2 = topo
        .obj(topo.objs_by_type(ObjType::L2Cache)[0])
        .cache()
        .unwrap()
        .clone();
    assert_eq!((l2.size, l2.associativity, l2.linesize), (1 << 20, 16, 64));
    assert_eq!(count(&topo, ObjType::L1ICache), 4);
    assert_eq!(count(&topo, ObjType::L3Cache), 0);
    let pkg = topo.obj(topo.objs_by_type(ObjType::Package)[0]);
    assert_eq!(pkg.info("CPUFamilyNumber"), Some("15"));
    assert_eq!(pkg.info("CPUModelNumber"), Some("33"));
    assert_eq!(pkg.info("CPUModel"), None);
}

/// An AMD hybrid with leaf 0x80000026: two performance and two efficiency cores.
#[test]
fn amd_hybrid_cpukinds() {
    let mut t = Table::new(4);
    t.vendor(0x10, b"AuthenticAMD")
        .each(1, 0, |i| {
            [0x00b2_0f40, (i as u32) << 24 | 4 << 16, 1 << 21, 1 << 28]
        })
        .all(0x8000_0000, 0, [0x8000_0026, 0, 0, 0])
        .each(0x8000_0026, 0, |i| {
            let ty = if i < 2 { 0 } else { 1 };
            [1 << 30, 1 | ty << 28, 0x100, i as u32]
        })
        .each(0x8000_0026, 1, |i| [2, 4, 0x201, i as u32])
        .each(0x8000_0026, 2, |i| [0, 0, 0x3, i as u32]);
    let topo = discover(&t, Topology::new()).unwrap();
    let kinds: Vec<(String, String, Option<i32>)> = topo
        .cpukinds
        .iter()
        .map(|k| {
            (
                k.cpuset.to_list_string(),
                k.infos[0].value.clone(),
                k.forced_efficiency,
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("2-3".into(), "AMDEfficiency".into(), Some(0)),
            ("0-1".into(), "AMDPerformance".into(), Some(1)),
        ]
    );
}

/// An Intel hybrid with leaf 0x1A; the Atom cores without L3 are low-power.
#[test]
fn intel_hybrid_cpukinds() {
    let mut t = Table::new(3);
    t.vendor(0x1a, b"GenuineIntel")
        .each(1, 0, |i| {
            [0x000b_06a2, (i as u32) << 24 | 4 << 16, 1 << 21, 1 << 28]
        })
        .all(7, 0, [0, 0, 0, 1 << 15])
        .each(0x1a, 0, |i| {
            [if i == 0 { 0x40 } else { 0x20 } << 24, 0, 0, 0]
        })
        .all(4, 0, cache(1, 1, 1, 4, 64, 8, 64))
        .each(4, 1, |i| {
            if i == 2 {
                [0; 4]
            } else {
                cache(3, 3, 4, 4, 64, 16, 4096)
            }
        })
        .each(0xb, 0, |i| [0, 1, 0x100, i as u32])
        .each(0xb, 1, |i| [2, 4, 0x201, i as u32]);
    let topo = discover(&t, Topology::new()).unwrap();
    let kinds: Vec<(String, &str)> = topo
        .cpukinds
        .iter()
        .map(|k| (k.cpuset.to_list_string(), k.infos[0].value.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("2".into(), "IntelLowPower"),
            ("1".into(), "IntelAtom"),
            ("0".into(), "IntelCore")
        ]
    );
}

#[test]
fn duplicate_apic_ids_are_an_error() {
    let mut t = Table::new(2);
    t.vendor(1, b"GenuineIntel").all(1, 0, [0x600, 0, 0, 0]);
    let e = discover(&t, Topology::new()).unwrap_err();
    assert_eq!(
        e,
        ProbeError::DuplicateApicId {
            first_pu: 0,
            second_pu: 1,
            apic_id: 0
        }
    );
    assert!(e.to_string().contains("APIC id"));
}

#[test]
fn without_leaf_1_only_pus_are_made() {
    let t = Table::new(3);
    let topo = discover(&t, Topology::new()).unwrap();
    assert_eq!(count(&topo, ObjType::PU), 3);
    assert_eq!(count(&topo, ObjType::Package), 0);
}

#[test]
fn bad_sources_are_errors() {
    assert_eq!(
        discover(&Table::new(0), Topology::new()).unwrap_err(),
        ProbeError::NoPu
    );
    struct Huge;
    impl CpuidSource for Huge {
        fn pu_count(&self) -> usize {
            1
        }
        fn os_index(&self, _: usize) -> u32 {
            u32::MAX
        }
        fn cpuid(&self, _: usize, _: u32, _: u32) -> [u32; 4] {
            [0; 4]
        }
    }
    assert!(matches!(
        discover(&Huge, Topology::new()),
        Err(ProbeError::BadOsIndex { .. })
    ));
}

/// A dump whose leaves ignore ecx (mask 1) answers every subleaf the same:
/// subleaf loops must stop on their own.
#[test]
fn subleaf_loops_are_bounded() {
    let mut t = intel_2c2t();
    for p in &mut t.pus {
        for sub in 0..64 {
            p.insert((4, sub), cache(3, 2, 2, 2, 64, 16, 1024));
            p.insert((0xb, sub), [1, 2, 0x100, 0]);
        }
    }
    // Every PU now claims APIC id 0 through leaf 0xB.
    assert!(matches!(
        discover(&t, Topology::new()),
        Err(ProbeError::DuplicateApicId { .. })
    ));
}

/// The CPU running the test answers through the `cpuid` instruction.
#[cfg(target_arch = "x86_64")]
#[test]
fn native_current_cpu() {
    let src = wloc_probe::NativeSource::current();
    assert_eq!(src.pu_count(), 1);
    let leaf0 = src.cpuid(0, 0, 0);
    assert!(leaf0[0] >= 1, "cpuid leaf 0 reports no leaf 1");
    let topo = discover(&src, Topology::new()).unwrap();
    assert_eq!(count(&topo, ObjType::PU), 1);
    let pkg = topo.obj(topo.objs_by_type(ObjType::Package)[0]);
    assert!(pkg.info("CPUVendor").is_some());
}

/// A runner reaching several PUs: here every "PU" is the current CPU with a
/// different OS index, so the APIC ids collide and discovery says so.
#[cfg(target_arch = "x86_64")]
#[test]
fn native_runner_is_used_for_every_pu() {
    use std::cell::RefCell;
    struct Fake(RefCell<Vec<usize>>);
    impl wloc_probe::PuRunner for Fake {
        fn pu_count(&self) -> usize {
            2
        }
        fn os_index(&self, pu: usize) -> u32 {
            10 + pu as u32
        }
        fn run_on(&self, pu: usize, f: &mut dyn FnMut()) {
            self.0.borrow_mut().push(pu);
            f()
        }
    }
    let src = wloc_probe::NativeSource::with_runner(Fake(RefCell::new(Vec::new())));
    assert_eq!(src.os_index(1), 11);
    assert!(matches!(
        discover(&src, Topology::new()),
        Err(ProbeError::DuplicateApicId { .. })
    ));
    let calls = src.runner().0.borrow();
    assert!(calls.contains(&0) && calls.contains(&1));
}

/// Caches found elsewhere (Linux sysfs says nothing of inclusiveness) get
/// the inclusive flag CPUID gives, the same as full CPUID discovery.
#[test]
fn annotation_marks_inclusive_caches_as_discovery_does() {
    use wloc_core::ObjAttr;
    let table = intel_2c2t();
    let types = [
        ObjType::L1Cache,
        ObjType::L1ICache,
        ObjType::L2Cache,
        ObjType::L3Cache,
    ];
    let flags = |t: &Topology| -> Vec<(ObjType, bool)> {
        types
            .iter()
            .flat_map(|&ty| t.objs_by_type(ty).into_iter().map(move |o| (ty, o)))
            .map(|(ty, o)| match &t.obj(o).attr {
                ObjAttr::Cache(c) => (ty, c.inclusive),
                _ => panic!("a cache without cache attributes"),
            })
            .collect()
    };
    let discovered = discover(&table, topo_with_icaches()).unwrap();
    let expected = flags(&discovered);
    assert!(expected.contains(&(ObjType::L3Cache, true)));
    assert!(expected.contains(&(ObjType::L2Cache, false)));
    let mut other = discovered.clone();
    for ty in types {
        for o in other.objs_by_type(ty) {
            if let ObjAttr::Cache(c) = &mut other.obj_mut(o).attr {
                c.inclusive = false;
            }
        }
    }
    let before = flags(&other);
    wloc_probe::annotate_discovered(&Table::new(0), &mut other);
    assert_eq!(flags(&other), before, "no PU, no change");
    wloc_probe::annotate_discovered(&table, &mut other);
    assert_eq!(flags(&other), expected);
}

/// One AMD family 17h package of four PUs in two nodes (leaf 0x8000001E
/// node ids 0 and 1), without x2APIC.
fn amd_zen_two_nodes() -> Table {
    let mut t = Table::new(4);
    t.vendor(0xd, b"AuthenticAMD")
        .each(1, 0, |i| {
            [0x0080_0f12, (i as u32) << 24 | 4 << 16, 0, 1 << 28]
        })
        .all(0x8000_0000, 0, [0x8000_001e, 0, 0, 0])
        .all(0x8000_0001, 0, [0, 0, 1 << 22, 0])
        .all(0x8000_0008, 0, [0, 0, 3, 0])
        .each(0x8000_001e, 0, |i| {
            [i as u32, i as u32, (i as u32 / 2) | 1 << 8, 0]
        });
    t
}

#[test]
fn topoext_numa_nodes_only_when_asked() {
    use wloc_probe::{X86Options, discover_with, x86_setting};
    let t = amd_zen_two_nodes();
    // By default CPUID makes no NUMA node: the finished tree has one.
    let plain = discover(&t, Topology::new()).unwrap();
    assert_eq!(count(&plain, ObjType::NUMANode), 1);
    assert_eq!(count(&plain, ObjType::Core), 4);
    let on = X86Options::from_lookup(|n| (n == x86_setting::TOPOEXT_NUMANODES).then(|| "1".into()));
    assert!(on.topoext_numanodes);
    let numa = discover_with(&t, Topology::new(), &on).unwrap();
    assert_eq!(os_indexes(&numa, ObjType::NUMANode), [Some(0), Some(1)]);
    assert_eq!(cpusets(&numa, ObjType::NUMANode), ["0-1", "2-3"]);
    for id in numa.objs_by_type(ObjType::NUMANode) {
        let o = numa.obj(id);
        assert_eq!(
            o.nodeset.as_ref().unwrap().first(),
            o.os_index,
            "a node's nodeset is its own index"
        );
    }
    assert_eq!(count(&numa, ObjType::Core), 4);
    // Intel processors have no such node ids: the option changes nothing.
    assert_eq!(
        count(
            &discover_with(&intel_2c2t(), Topology::new(), &on).unwrap(),
            ObjType::NUMANode
        ),
        1
    );
}

#[test]
fn the_topoext_setting_is_read_as_hwloc_documents_it() {
    use wloc_probe::{X86Options, x86_setting};
    let with = |v: &'static str| {
        X86Options::from_lookup(move |n| (n == x86_setting::TOPOEXT_NUMANODES).then(|| v.into()))
            .topoext_numanodes
    };
    assert!(with("1"));
    assert!(with(" 2x"));
    assert!(!with("0"));
    assert!(!with(""));
    assert!(!with("yes"));
    assert!(!X86Options::from_lookup(|_| None).topoext_numanodes);
    assert_eq!(x86_setting::NAMES, [x86_setting::TOPOEXT_NUMANODES]);
}
