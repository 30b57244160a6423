//! ARM tables built by hand: MADT GICC structures, PPTTs as QEMU's virt
//! machine and servers write them, SRAT GICC affinity, and malformed
//! input.

use alloc::vec;
use alloc::vec::Vec;

use super::tests::{ENABLED, W, madt, slit, srat, table};
use super::*;
use crate::ProbeError;
use wloc_core::object::CacheKind;
use wloc_core::{CpuSet, ObjType, Topology, TypeFilter};

// ------------------------------------------------------------ builders

/// A GICC structure of ACPI 6.0 (80 bytes).
fn gicc(uid: u32, mpidr: u64, flags: u32) -> Vec<u8> {
    W::default()
        .u8(0x0b)
        .u8(80)
        .u16(0)
        .u32(uid) // CPU interface number
        .u32(uid)
        .u32(flags)
        .u32(0) // parking protocol
        .u32(23) // performance interrupt
        .u64(0) // parked address
        .u64(0) // GICC base
        .u64(0) // GICV
        .u64(0) // GICH
        .u32(25) // VGIC maintenance interrupt
        .u64(0x80a_0000) // GICR
        .u64(mpidr)
        .u8(0)
        .u8(0)
        .u16(0)
        .0
}

fn srat_gicc(domain: u32, uid: u32, flags: u32) -> Vec<u8> {
    W::default()
        .u8(3)
        .u8(18)
        .u32(domain)
        .u32(uid)
        .u32(flags)
        .u32(0)
        .0
}

/// One PPTT structure, placed at a known offset by [`pptt`].
enum S {
    /// A processor hierarchy node: flags, parent index (into the list),
    /// ACPI processor ID, private resources (indexes).
    Node(u32, Option<usize>, u32, Vec<usize>),
    /// A cache: flags, next level (index), size, sets, ways, attributes,
    /// line size, cache ID (written only when `Some`: a 28-byte structure).
    Cache(u32, Option<usize>, u32, u32, u8, u8, u16, Option<u32>),
}

fn struct_len(s: &S) -> usize {
    match s {
        S::Node(_, _, _, r) => 20 + 4 * r.len(),
        S::Cache(.., id) => {
            if id.is_some() {
                28
            } else {
                24
            }
        }
    }
}

/// A PPTT of these structures; references are by index into `structs`.
/// Returns the table and the offset of every structure.
fn pptt(rev: u8, structs: &[S]) -> (Vec<u8>, Vec<u32>) {
    let mut offsets = Vec::new();
    let mut at = 36;
    for s in structs {
        offsets.push(at as u32);
        at += struct_len(s);
    }
    let off = |i: Option<usize>| i.map_or(0, |i| offsets[i]);
    let mut w = W::default();
    for s in structs {
        w = match s {
            S::Node(flags, parent, id, res) => {
                let mut w = w
                    .u8(0)
                    .u8(struct_len(s) as u8)
                    .u16(0)
                    .u32(*flags)
                    .u32(off(*parent))
                    .u32(*id)
                    .u32(res.len() as u32);
                for &r in res {
                    w = w.u32(offsets[r]);
                }
                w
            }
            S::Cache(flags, next, size, sets, ways, attrs, line, id) => {
                let w = w
                    .u8(1)
                    .u8(struct_len(s) as u8)
                    .u16(0)
                    .u32(*flags)
                    .u32(off(*next))
                    .u32(*size)
                    .u32(*sets)
                    .u8(*ways)
                    .u8(*attrs)
                    .u16(*line);
                match id {
                    Some(id) => w.u32(*id),
                    None => w,
                }
            }
        };
    }
    (table(b"PPTT", rev, &w.0), offsets)
}

const PACKAGE: u32 = node_flags::PHYSICAL_PACKAGE;
/// QEMU's leaves: ID valid, leaf.
const CPU: u32 = node_flags::ID_VALID | node_flags::LEAF;
const THREAD: u32 = CPU | node_flags::IS_THREAD;

/// What QEMU 7.2's virt machine writes for `-smp` with `sockets`,
/// `clusters`, `cores` and `threads`: package nodes (physical package,
/// ID not valid) numbered by socket, cluster and core containers, and
/// leaves numbered by CPU index; no caches.
fn qemu_pptt(sockets: u32, clusters: u32, cores: u32, threads: u32) -> Vec<u8> {
    let mut s = Vec::new();
    let mut cpu = 0;
    for socket in 0..sockets {
        let p = s.len();
        s.push(S::Node(PACKAGE, None, socket, vec![]));
        for cluster in 0..clusters {
            let c = s.len();
            s.push(S::Node(0, Some(p), cluster, vec![]));
            for core in 0..cores {
                if threads > 1 {
                    let k = s.len();
                    s.push(S::Node(0, Some(c), core, vec![]));
                    for _ in 0..threads {
                        s.push(S::Node(THREAD, Some(k), cpu, vec![]));
                        cpu += 1;
                    }
                } else {
                    s.push(S::Node(CPU, Some(c), cpu, vec![]));
                    cpu += 1;
                }
            }
        }
    }
    pptt(2, &s).0
}

fn qemu_madt(n: u32) -> Vec<u8> {
    let e: Vec<Vec<u8>> = (0..n)
        .map(|i| gicc(i, u64::from(i % 16) | u64::from(i / 16) << 8, ENABLED))
        .collect();
    madt(&e)
}

fn keep_all() -> Topology {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    t
}

fn arm(m: &[u8], p: Option<&[u8]>, boot: Option<u64>) -> Result<Topology, ProbeError> {
    let madt = Madt::parse(m).unwrap();
    let pptt = p.map(|p| Pptt::parse(p).unwrap());
    discover_arm(&madt, pptt.as_ref(), boot, keep_all())
}

fn set(bits: &[u32]) -> CpuSet {
    let mut s = CpuSet::new();
    for &b in bits {
        s.set(b);
    }
    s
}

fn range(a: u32, b: u32) -> CpuSet {
    set(&(a..b).collect::<Vec<_>>())
}

/// `(os index, cpuset)` of the objects of a type, in logical order.
fn objs(t: &Topology, ty: ObjType) -> Vec<(Option<u32>, CpuSet)> {
    t.objs_by_type(ty)
        .into_iter()
        .map(|id| {
            let o = t.obj(id);
            (o.os_index, o.cpuset.clone().unwrap_or_default())
        })
        .collect()
}

// ------------------------------------------------------------ MADT

#[test]
fn madt_gicc_structures() {
    let m = madt(&[
        gicc(0, 0x0, ENABLED),
        gicc(1, 0x1, 0),
        gicc(2, 0x100, 8),                    // online-capable
        gicc(3, 0x1, ENABLED),                // MPIDR of UID 1 again: left out
        gicc(4, 0x1_0000_0000_0000, ENABLED), // not an affinity bit
        gicc(0, 0x2, ENABLED),                // UID 0 again
        gicc(5, 0xff_0000_0002, ENABLED),     // Aff3
    ]);
    let m = Madt::parse(&m).unwrap();
    assert!(m.processors.is_empty());
    let got: Vec<(u32, u64, bool, bool)> = m
        .giccs
        .iter()
        .map(|g| (g.uid, g.mpidr, g.enabled, g.online_capable))
        .collect();
    assert_eq!(
        got,
        [
            (0, 0, true, false),
            (1, 1, false, false),
            (2, 0x100, false, true),
            (5, 0xff_0000_0002, true, false),
        ]
    );
    assert!(m.is_gicc_usable(&m.giccs[2]));
    assert!(!m.is_gicc_usable(&m.giccs[1]));
    assert_eq!(m.gicc_by_uid(5).map(|g| g.mpidr), Some(0xff_0000_0002));
    // The boot processor first, then table order; disabled ones left out.
    let cpus = arm_cpus(&m, Some(0x8000_0000 | 0xff_0000_0002));
    let order: Vec<(u32, u32)> = cpus.iter().map(|c| (c.os_index, c.uid)).collect();
    assert_eq!(order, [(0, 5), (1, 0)]);
    assert_eq!(os_index_of_uid(&cpus, 0), Some(1));
    assert_eq!(os_index_of_uid(&cpus, 2), None);
}

#[test]
fn madt_short_gicc_is_refused() {
    let mut e = gicc(0, 0, ENABLED);
    e.truncate(40);
    e[1] = 40; // the ACPI 5.0 form, without MPIDR
    let m = madt(&[e]);
    assert!(matches!(
        Madt::parse(&m),
        Err(AcpiError::BadLength { length: 40, .. })
    ));
}

// ------------------------------------------------------------ PPTT

#[test]
fn qemu_sockets_clusters_cores() {
    let p = qemu_pptt(2, 2, 2, 1);
    let parsed = Pptt::parse(&p).unwrap();
    assert_eq!(parsed.processors.len(), 14);
    assert!(parsed.caches.is_empty());
    let t = arm(&qemu_madt(8), Some(&p), Some(0)).unwrap();
    // Packages and clusters are named by their offsets (no valid ID),
    // cores by their processor's UID.
    assert_eq!(
        objs(&t, ObjType::Package),
        [(Some(36), range(0, 4)), (Some(176), range(4, 8))]
    );
    let groups = objs(&t, ObjType::Group);
    assert_eq!(
        groups,
        [
            (Some(56), range(0, 2)),
            (Some(116), range(2, 4)),
            (Some(196), range(4, 6)),
            (Some(256), range(6, 8)),
        ]
    );
    let g = t.obj(t.objs_by_type(ObjType::Group)[0]);
    assert_eq!(g.subtype.as_deref(), Some("Cluster"));
    let cores = objs(&t, ObjType::Core);
    assert_eq!(cores.len(), 8);
    assert_eq!(cores[5], (Some(5), set(&[5])));
    assert_eq!(objs(&t, ObjType::PU).len(), 8);
    assert_eq!(t.check(), Ok(()));
    assert!(
        t.infos
            .iter()
            .any(|i| i.name == "Backend" && i.value == "ACPI")
    );
}

#[test]
fn qemu_threads_make_cores_of_containers() {
    let p = qemu_pptt(1, 2, 2, 2);
    let t = arm(&qemu_madt(8), Some(&p), Some(0)).unwrap();
    assert_eq!(objs(&t, ObjType::Package), [(Some(36), range(0, 8))]);
    // Cores are the containers above the threads: named by offset.
    let cores = objs(&t, ObjType::Core);
    let sets: Vec<CpuSet> = cores.iter().map(|c| c.1.clone()).collect();
    assert_eq!(sets, [range(0, 2), range(2, 4), range(4, 6), range(6, 8)]);
    assert_eq!(cores[0].0, Some(76));
    assert_eq!(objs(&t, ObjType::Group).len(), 2);
}

#[test]
fn one_cluster_per_package_is_no_group() {
    let p = qemu_pptt(2, 1, 4, 1);
    let t = arm(&qemu_madt(8), Some(&p), Some(0)).unwrap();
    assert_eq!(objs(&t, ObjType::Package).len(), 2);
    assert!(objs(&t, ObjType::Group).is_empty());
    // One core per cluster: clusters of one PU are not groups either.
    let p = qemu_pptt(1, 4, 1, 1);
    let t = arm(&qemu_madt(4), Some(&p), Some(0)).unwrap();
    assert!(objs(&t, ObjType::Group).is_empty());
    assert_eq!(objs(&t, ObjType::Core).len(), 4);
}

#[test]
fn boot_processor_is_pu_zero() {
    let p = qemu_pptt(2, 1, 2, 1);
    // Booting on the processor of UID 2 (MPIDR 2): it becomes PU 0.
    let t = arm(&qemu_madt(4), Some(&p), Some(2)).unwrap();
    let pkgs = objs(&t, ObjType::Package);
    // UIDs 0 and 1 (the first package) are PUs 1 and 2, UIDs 2 and 3
    // PUs 0 and 3.
    assert_eq!(pkgs, [(Some(116), set(&[0, 3])), (Some(36), set(&[1, 2]))]);
    let cores: Vec<_> = objs(&t, ObjType::Core);
    assert!(cores.contains(&(Some(2), set(&[0]))));
    assert!(cores.contains(&(Some(0), set(&[1]))));
}

#[test]
fn without_pptt_only_pus() {
    let t = arm(&qemu_madt(3), None, None).unwrap();
    assert_eq!(objs(&t, ObjType::PU).len(), 3);
    assert!(objs(&t, ObjType::Core).is_empty());
    assert!(objs(&t, ObjType::Package).is_empty());
    // No enabled processor.
    let m = madt(&[gicc(0, 0, 0)]);
    assert_eq!(arm(&m, None, None).unwrap_err(), ProbeError::NoPu);
}

#[test]
fn processor_missing_from_pptt() {
    let p = qemu_pptt(1, 1, 2, 1);
    let err = arm(&qemu_madt(3), Some(&p), Some(0)).unwrap_err();
    assert_eq!(err, ProbeError::NotInPptt { uid: 2 });
}

/// Caches of a server-like PPTT (revision 3): per core L1d and L1i
/// leading to a private L2, an L3 per cluster, a system-level cache per
/// package, with cache IDs on the L3.
fn server_pptt() -> Vec<u8> {
    let all = 0x7f; // every field but the cache ID valid
    let data = 0b0000_0011; // read-write, data, write-back
    let inst = 0b0000_0101;
    let unif = 0b0000_1011;
    let mut s = vec![
        // 0: SLC, 1: package
        S::Cache(all, None, 32 << 20, 32768, 16, unif, 64, None),
        S::Node(PACKAGE | node_flags::ID_VALID, None, 7, vec![0]),
    ];
    let mut cpu = 0;
    for cluster in 0..2u32 {
        let l3 = s.len();
        s.push(S::Cache(
            all | cache_flags::CACHE_ID,
            None,
            8 << 20,
            8192,
            16,
            unif,
            64,
            Some(100 + cluster),
        ));
        let c = s.len();
        s.push(S::Node(0, Some(1), cluster, vec![l3]));
        for _ in 0..2 {
            let l2 = s.len();
            s.push(S::Cache(all, None, 1 << 20, 2048, 8, unif, 64, None));
            let l1d = s.len();
            s.push(S::Cache(all, Some(l2), 64 << 10, 256, 4, data, 64, None));
            let l1i = s.len();
            s.push(S::Cache(all, Some(l2), 64 << 10, 256, 4, inst, 64, None));
            s.push(S::Node(CPU, Some(c), cpu, vec![l1d, l1i]));
            cpu += 1;
        }
    }
    pptt(3, &s).0
}

#[test]
fn pptt_caches_levels_sharing_and_attributes() {
    let p = server_pptt();
    let parsed = Pptt::parse(&p).unwrap();
    let leaf = parsed.leaf_for_uid(3).unwrap();
    let found: Vec<(u32, Option<PpttCacheType>, Option<u32>)> = parsed
        .caches_of(leaf)
        .iter()
        .map(|c| (c.level, c.cache.cache_type, c.cache.size))
        .collect();
    assert_eq!(
        found,
        [
            (1, Some(PpttCacheType::Data), Some(64 << 10)),
            (1, Some(PpttCacheType::Instruction), Some(64 << 10)),
            (2, Some(PpttCacheType::Unified), Some(1 << 20)),
            (3, Some(PpttCacheType::Unified), Some(8 << 20)),
            (4, Some(PpttCacheType::Unified), Some(32 << 20)),
        ]
    );
    let t = arm(&qemu_madt(4), Some(&p), Some(0)).unwrap();
    assert_eq!(objs(&t, ObjType::Package), [(Some(7), range(0, 4))]);
    // The clusters have the cpusets of the L3s: hwloc keeps the caches
    // and merges the groups away.
    assert!(objs(&t, ObjType::Group).is_empty());
    let attr = |ty| {
        t.objs_by_type(ty)
            .into_iter()
            .map(|id| {
                let o = t.obj(id);
                let c = o.cache().unwrap();
                (
                    o.os_index,
                    o.cpuset.clone().unwrap(),
                    c.size,
                    c.linesize,
                    c.associativity,
                    c.kind,
                )
            })
            .collect::<Vec<_>>()
    };
    let l1d = attr(ObjType::L1Cache);
    assert_eq!(l1d.len(), 4);
    assert_eq!(l1d[0], (None, set(&[0]), 64 << 10, 64, 4, CacheKind::Data));
    let l1i = attr(ObjType::L1ICache);
    assert_eq!(
        l1i[3],
        (None, set(&[3]), 64 << 10, 64, 4, CacheKind::Instruction)
    );
    let l2 = attr(ObjType::L2Cache);
    assert_eq!(l2.len(), 4);
    assert_eq!(l2[1].2, 1 << 20);
    assert_eq!(l2[1].4, 8);
    let l3 = attr(ObjType::L3Cache);
    assert_eq!(
        l3,
        [
            (Some(100), range(0, 2), 8 << 20, 64, 16, CacheKind::Unified),
            (Some(101), range(2, 4), 8 << 20, 64, 16, CacheKind::Unified),
        ]
    );
    let l4 = attr(ObjType::L4Cache);
    assert_eq!(l4.len(), 1);
    assert_eq!(l4[0].1, range(0, 4));
    assert_eq!(t.check(), Ok(()));
}

#[test]
fn pptt_cache_fields_not_valid_are_none() {
    // Only size and type valid; sets unknown make the associativity 0.
    let s = vec![
        S::Cache(
            cache_flags::SIZE | cache_flags::TYPE,
            None,
            48 << 10,
            7,
            9,
            0b1000,
            64,
            None,
        ),
        S::Node(PACKAGE, None, 0, vec![]),
        S::Node(CPU, Some(1), 0, vec![0]),
    ];
    let (p, _) = pptt(2, &s);
    let parsed = Pptt::parse(&p).unwrap();
    let c = &parsed.caches[0];
    assert_eq!(c.size, Some(48 << 10));
    assert_eq!((c.sets, c.associativity, c.line_size), (None, None, None));
    assert_eq!(c.cache_type, Some(PpttCacheType::Unified));
    assert_eq!(c.write_through, None);
    let t = arm(&qemu_madt(1), Some(&p), None).unwrap();
    let l1 = t.obj(t.objs_by_type(ObjType::L1Cache)[0]).cache().unwrap();
    assert_eq!((l1.size, l1.linesize, l1.associativity), (48 << 10, 0, 0));
}

#[test]
fn pptt_bad_tables_are_errors() {
    // A parent that is not a node.
    let (mut p, off) = pptt(
        2,
        &[
            S::Node(PACKAGE, None, 0, vec![]),
            S::Node(CPU, Some(0), 0, vec![]),
        ],
    );
    let at = off[1] as usize + 8;
    p[at..at + 4].copy_from_slice(&1000u32.to_le_bytes());
    super::tests::fix_checksum(&mut p);
    assert!(matches!(
        Pptt::parse(&p),
        Err(AcpiError::Invalid { offset, .. }) if offset == at
    ));
    // A loop of parents.
    let (mut p, off) = pptt(
        2,
        &[
            S::Node(0, None, 0, vec![]),
            S::Node(CPU, Some(0), 0, vec![]),
        ],
    );
    p[off[0] as usize + 8..off[0] as usize + 12].copy_from_slice(&off[1].to_le_bytes());
    super::tests::fix_checksum(&mut p);
    assert!(matches!(
        Pptt::parse(&p),
        Err(AcpiError::Invalid { reason, .. }) if reason.contains("loops")
    ));
    // A loop of caches.
    let (mut p, off) = pptt(
        2,
        &[
            S::Cache(0x7f, None, 1024, 4, 4, 0b1000, 64, None),
            S::Cache(0x7f, Some(0), 1024, 4, 4, 0b1000, 64, None),
            S::Node(CPU, None, 0, vec![1]),
        ],
    );
    p[off[0] as usize + 8..off[0] as usize + 12].copy_from_slice(&off[1].to_le_bytes());
    super::tests::fix_checksum(&mut p);
    assert!(matches!(
        Pptt::parse(&p),
        Err(AcpiError::Invalid { reason, .. }) if reason.contains("loops")
    ));
    // A resource in the middle of a structure.
    let (mut p, off) = pptt(2, &[S::Node(CPU, None, 0, vec![0])]);
    let at = off[0] as usize + 20;
    p[at..at + 4].copy_from_slice(&(off[0] + 4).to_le_bytes());
    super::tests::fix_checksum(&mut p);
    assert!(matches!(Pptt::parse(&p), Err(AcpiError::Invalid { .. })));
    // More resources than the structure holds.
    let (mut p, off) = pptt(2, &[S::Node(CPU, None, 0, vec![])]);
    let at = off[0] as usize + 16;
    p[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    super::tests::fix_checksum(&mut p);
    assert!(matches!(Pptt::parse(&p), Err(AcpiError::BadLength { .. })));
    // Too short for a node, for a cache.
    let p = table(b"PPTT", 2, &W::default().u8(0).u8(12).raw(&[0; 10]).0);
    assert!(matches!(
        Pptt::parse(&p),
        Err(AcpiError::BadLength { length: 12, .. })
    ));
    let p = table(b"PPTT", 2, &W::default().u8(1).u8(20).raw(&[0; 18]).0);
    assert!(matches!(
        Pptt::parse(&p),
        Err(AcpiError::BadLength { length: 20, .. })
    ));
    // Wrong signature.
    let p = table(b"PPTX", 2, &[]);
    assert!(matches!(
        Pptt::parse(&p),
        Err(AcpiError::BadSignature { .. })
    ));
}

// ------------------------------------------------------------ NUMA

#[test]
fn srat_gicc_affinity_makes_nodes() {
    let m = qemu_madt(4);
    let s = srat(&[
        srat_gicc(0, 0, ENABLED),
        srat_gicc(0, 1, ENABLED),
        srat_gicc(1, 2, ENABLED),
        srat_gicc(1, 3, ENABLED),
        srat_gicc(1, 9, ENABLED), // not in the MADT
        srat_gicc(2, 3, 0),       // disabled
        super::tests::srat_mem(0, 0x4000_0000, 256 << 20, ENABLED),
        super::tests::srat_mem(1, 0x5000_0000, 768 << 20, ENABLED),
    ]);
    let parsed = Srat::parse(&s).unwrap();
    assert_eq!(parsed.disabled, 1);
    assert_eq!(
        parsed.entries[2],
        SratEntry::Gicc {
            domain: 1,
            uid: 2,
            clock_domain: 0
        }
    );
    let d = slit(2, &[10, 17, 17, 10]);
    let mut tables = AcpiTables::new();
    for t in [m.clone(), s, d] {
        tables.insert(t).unwrap();
    }
    let numa = tables.numa(Checksum::Verify).unwrap();
    assert_eq!(numa.nodes.len(), 2);
    assert_eq!(numa.nodes[1].apic_ids, [2, 3]);
    // Booting on UID 2 renumbers the PUs; nodes follow the UIDs.
    let madt = Madt::parse(&m).unwrap();
    let p = Pptt::parse(&qemu_pptt(2, 1, 2, 1)).unwrap();
    let cpus = arm_cpus(&madt, Some(2));
    let mut topo = discover_arm(&madt, Some(&p), Some(2), keep_all()).unwrap();
    numa.apply(&mut topo, &|uid| os_index_of_uid(&cpus, uid))
        .unwrap();
    let nodes = objs(&topo, ObjType::NUMANode);
    assert_eq!(nodes, [(Some(1), set(&[0, 3])), (Some(0), set(&[1, 2]))]);
    let dist = &topo.distances[0];
    assert_eq!(dist.values, [10, 17, 17, 10]);
    assert_eq!(topo.check(), Ok(()));
}

#[test]
fn srat_short_gicc_is_refused() {
    let mut e = srat_gicc(0, 0, ENABLED);
    e.truncate(14);
    e[1] = 14;
    assert!(matches!(
        Srat::parse(&srat(&[e])),
        Err(AcpiError::BadLength { length: 14, .. })
    ));
}

/// Every valid table, truncated anywhere and with any byte changed, is
/// rejected or parsed, never a panic; what parses also goes through
/// `discover_arm`.
#[test]
fn arm_mutations_never_panic() {
    let m = qemu_madt(4);
    let tables = [server_pptt(), qemu_pptt(1, 2, 1, 2), m.clone()];
    let madt = Madt::parse(&m).unwrap();
    for t in &tables {
        for cut in 0..t.len() {
            let _ = Pptt::parse_with(&t[..cut], Checksum::Ignore);
            let _ = Madt::parse_with(&t[..cut], Checksum::Ignore);
        }
        for i in 0..t.len() {
            for v in [0u8, 1, 2, 3, 0x24, 0x7f, 0x80, 0xff] {
                let mut x = t.clone();
                x[i] = v;
                if let Ok(p) = Pptt::parse_with(&x, Checksum::Ignore)
                    && let Ok(topo) = discover_arm(&madt, Some(&p), Some(0), keep_all())
                {
                    assert_eq!(topo.check(), Ok(()));
                }
                if let Ok(m2) = Madt::parse_with(&x, Checksum::Ignore) {
                    let _ = discover_arm(&m2, None, Some(0), keep_all());
                }
            }
        }
    }
}

#[test]
fn revision_one_and_edge_ids_as_linux() {
    // Revision 1 (ACPI 6.2): no leaf or thread flags; leaves are the
    // nodes nobody names as parent, and a thread flag is not read.
    let s = [
        S::Node(PACKAGE, None, 0, vec![]),
        S::Node(
            node_flags::ID_VALID | node_flags::IS_THREAD,
            Some(0),
            0,
            vec![],
        ),
        S::Node(
            node_flags::ID_VALID | node_flags::IS_THREAD,
            Some(0),
            1,
            vec![],
        ),
    ];
    let (p, _) = pptt(1, &s);
    let t = arm(&qemu_madt(2), Some(&p), Some(0)).unwrap();
    assert_eq!(
        objs(&t, ObjType::Core),
        [(Some(0), set(&[0])), (Some(1), set(&[1]))]
    );
    assert_eq!(objs(&t, ObjType::Package), [(Some(36), range(0, 2))]);
    // A processor that is its own package: named by its UID when its ID
    // is valid, by its offset otherwise; a thread at the root is its own
    // core, named the same way.
    let (p, _) = pptt(2, &[S::Node(PACKAGE | CPU, None, 5, vec![])]);
    let m = madt(&[gicc(5, 0, ENABLED)]);
    let t = arm(&m, Some(&p), Some(0)).unwrap();
    assert_eq!(objs(&t, ObjType::Package), [(Some(5), set(&[0]))]);
    let (p, _) = pptt(
        2,
        &[S::Node(
            PACKAGE | node_flags::LEAF | node_flags::IS_THREAD,
            None,
            5,
            vec![],
        )],
    );
    let t = arm(&m, Some(&p), Some(0)).unwrap();
    assert_eq!(objs(&t, ObjType::Package), [(Some(36), set(&[0]))]);
    assert_eq!(objs(&t, ObjType::Core), [(Some(36), set(&[0]))]);
}

#[test]
fn too_many_processors_are_refused() {
    let n = crate::MAX_OS_INDEX + 1;
    let e: Vec<Vec<u8>> = (0..n)
        .map(|i| gicc(i, u64::from(i & 0xff) | u64::from(i >> 8) << 8, ENABLED))
        .collect();
    let m = Madt::parse(&madt(&e)).unwrap();
    assert_eq!(m.giccs.len(), n as usize);
    assert!(matches!(
        discover_arm(&m, None, None, keep_all()),
        Err(ProbeError::BadOsIndex { os_index, .. }) if os_index == crate::MAX_OS_INDEX
    ));
}

#[test]
fn cache_levels_stop_at_max_cache_level() {
    // A chain of ten unified caches below one processor.
    let mut s: Vec<S> = (0..10)
        .map(|i| {
            S::Cache(
                0x7f,
                (i < 9).then_some(i + 1),
                1 << 20,
                1024,
                16,
                0b1000,
                64,
                None,
            )
        })
        .collect();
    s.push(S::Node(PACKAGE | CPU, None, 0, vec![0]));
    let (p, _) = pptt(2, &s);
    let parsed = Pptt::parse(&p).unwrap();
    let leaf = parsed.leaf_for_uid(0).unwrap();
    let levels: Vec<u32> = parsed.caches_of(leaf).iter().map(|c| c.level).collect();
    assert_eq!(levels, (1..=MAX_CACHE_LEVEL).collect::<Vec<_>>());
    // hwloc has five levels of CPU caches: deeper ones are not objects.
    let t = arm(&qemu_madt(1), Some(&p), None).unwrap();
    assert_eq!(objs(&t, ObjType::L5Cache).len(), 1);
    assert_eq!(t.check(), Ok(()));
}
