//! Tables built by hand: QEMU-like NUMA machines, Linux's derivations, and
//! malformed input.

use alloc::collections::BTreeMap;
use alloc::string::ToString;
use alloc::vec;
use alloc::vec::Vec;

use super::*;
use wloc_core::memattrs::Initiator;
use wloc_core::{CpuSet, NodeSet, ObjType, Object, Topology, TypeFilter};

// ------------------------------------------------------------ builder

/// A table with a valid header and checksum around `body`.
pub(super) fn table(sig: &[u8; 4], revision: u8, body: &[u8]) -> Vec<u8> {
    let mut t = Vec::new();
    t.extend_from_slice(sig);
    t.extend_from_slice(&((36 + body.len()) as u32).to_le_bytes());
    t.push(revision);
    t.push(0); // checksum, fixed below
    t.extend_from_slice(b"WLOCTS");
    t.extend_from_slice(b"TESTTABL");
    t.extend_from_slice(&1u32.to_le_bytes());
    t.extend_from_slice(b"WLOC");
    t.extend_from_slice(&1u32.to_le_bytes());
    t.extend_from_slice(body);
    fix_checksum(&mut t);
    t
}

pub(super) fn fix_checksum(t: &mut [u8]) {
    t[9] = 0;
    let sum = t.iter().fold(0u8, |s, &b| s.wrapping_add(b));
    t[9] = 0u8.wrapping_sub(sum);
}

/// Little-endian field writer.
#[derive(Default)]
pub(super) struct W(pub(super) Vec<u8>);

impl W {
    pub(super) fn u8(mut self, v: u8) -> Self {
        self.0.push(v);
        self
    }
    pub(super) fn u16(mut self, v: u16) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub(super) fn u32(mut self, v: u32) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub(super) fn u64(mut self, v: u64) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub(super) fn raw(mut self, v: &[u8]) -> Self {
        self.0.extend_from_slice(v);
        self
    }
}

pub(super) fn madt(entries: &[Vec<u8>]) -> Vec<u8> {
    madt_rev(5, entries)
}

pub(super) fn madt_rev(rev: u8, entries: &[Vec<u8>]) -> Vec<u8> {
    let body = W::default()
        .u32(0xfee0_0000)
        .u32(1)
        .raw(&entries.concat())
        .0;
    table(b"APIC", rev, &body)
}

fn lapic(uid: u8, apic: u8, flags: u32) -> Vec<u8> {
    W::default().u8(0).u8(8).u8(uid).u8(apic).u32(flags).0
}

fn x2apic(apic: u32, flags: u32, uid: u32) -> Vec<u8> {
    W::default()
        .u8(9)
        .u8(16)
        .u16(0)
        .u32(apic)
        .u32(flags)
        .u32(uid)
        .0
}

fn ioapic() -> Vec<u8> {
    W::default()
        .u8(1)
        .u8(12)
        .u8(0)
        .u8(0)
        .u32(0xfec0_0000)
        .u32(0)
        .0
}

pub(super) fn srat(entries: &[Vec<u8>]) -> Vec<u8> {
    srat_rev(3, entries)
}

pub(super) fn srat_rev(rev: u8, entries: &[Vec<u8>]) -> Vec<u8> {
    let body = W::default().u32(1).u64(0).raw(&entries.concat()).0;
    table(b"SRAT", rev, &body)
}

fn srat_cpu(domain: u32, apic: u8, flags: u32) -> Vec<u8> {
    let d = domain.to_le_bytes();
    W::default()
        .u8(0)
        .u8(16)
        .u8(d[0])
        .u8(apic)
        .u32(flags)
        .u8(0)
        .raw(&d[1..])
        .u32(0)
        .0
}

pub(super) fn srat_mem(domain: u32, base: u64, len: u64, flags: u32) -> Vec<u8> {
    W::default()
        .u8(1)
        .u8(40)
        .u32(domain)
        .u16(0)
        .u64(base)
        .u64(len)
        .u32(0)
        .u32(flags)
        .u64(0)
        .0
}

fn srat_x2apic(domain: u32, apic: u32, flags: u32) -> Vec<u8> {
    W::default()
        .u8(2)
        .u8(24)
        .u16(0)
        .u32(domain)
        .u32(apic)
        .u32(flags)
        .u32(0)
        .u32(0)
        .0
}

fn srat_gi(domain: u32, flags: u32) -> Vec<u8> {
    W::default()
        .u8(5)
        .u8(32)
        .u8(0)
        .u8(1)
        .u32(domain)
        .raw(&[0xab; 16])
        .u32(flags)
        .u32(0)
        .0
}

pub(super) fn slit(n: u64, m: &[u8]) -> Vec<u8> {
    table(b"SLIT", 1, &W::default().u64(n).raw(m).0)
}

pub(super) fn hmat(entries: &[Vec<u8>]) -> Vec<u8> {
    hmat_rev(2, entries)
}

fn hmat_rev(rev: u8, entries: &[Vec<u8>]) -> Vec<u8> {
    table(b"HMAT", rev, &W::default().u32(0).raw(&entries.concat()).0)
}

pub(super) fn hmat_domain(flags: u16, initiator: u32, memory: u32) -> Vec<u8> {
    W::default()
        .u16(0)
        .u16(0)
        .u32(40)
        .u16(flags)
        .u16(0)
        .u32(initiator)
        .u32(memory)
        .u32(0)
        .u64(0)
        .u64(0)
        .0
}

pub(super) fn hmat_lb(
    hier: u8,
    dtype: u8,
    base: u64,
    inits: &[u32],
    targs: &[u32],
    entries: &[u16],
) -> Vec<u8> {
    assert_eq!(entries.len(), inits.len() * targs.len());
    let len = 32 + 4 * (inits.len() + targs.len()) + 2 * entries.len();
    let mut w = W::default()
        .u16(1)
        .u16(0)
        .u32(len as u32)
        .u8(hier)
        .u8(dtype)
        .u8(0)
        .u8(0)
        .u32(inits.len() as u32)
        .u32(targs.len() as u32)
        .u32(0)
        .u64(base);
    for &i in inits.iter().chain(targs) {
        w = w.u32(i);
    }
    for &e in entries {
        w = w.u16(e);
    }
    w.0
}

pub(super) fn hmat_cache(memory: u32, size: u64, attrs: u32, handles: &[u16]) -> Vec<u8> {
    let mut w = W::default()
        .u16(2)
        .u16(0)
        .u32((32 + 2 * handles.len()) as u32)
        .u32(memory)
        .u32(0)
        .u64(size)
        .u32(attrs)
        .u16(0)
        .u16(handles.len() as u16);
    for &h in handles {
        w = w.u16(h);
    }
    w.0
}

/// Cache attributes: levels, level, associativity, write policy, line size.
pub(super) fn cache_attrs(total: u32, level: u32, assoc: u32, policy: u32, line: u32) -> u32 {
    total | level << 4 | assoc << 8 | policy << 12 | line << 16
}

pub(super) const ENABLED: u32 = 1;
const HOTPLUG: u32 = 2;
const GIB: u64 = 1 << 30;

/// What `qemu-system-x86_64 -machine q35,hmat=on -smp 4,sockets=2,cores=2
/// -m 2G,slots=2,maxmem=4G` with two 1 GiB nodes (CPUs 0-1 in node 0,
/// 2-3 in node 1) and `-numa dist` 10/21 shows.
fn qemu_two_nodes() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let m = madt(&[
        lapic(0, 0, ENABLED),
        lapic(1, 1, ENABLED),
        lapic(2, 2, ENABLED),
        lapic(3, 3, ENABLED),
        ioapic(),
    ]);
    let s = srat_rev(
        1,
        &[
            srat_cpu(0, 0, ENABLED),
            srat_cpu(0, 1, ENABLED),
            srat_cpu(1, 2, ENABLED),
            srat_cpu(1, 3, ENABLED),
            srat_mem(0, 0, 0xa0000, ENABLED),
            srat_mem(0, 0x10_0000, GIB - 0x10_0000, ENABLED),
            srat_mem(1, GIB, GIB, ENABLED),
            srat_mem(1, 0x1_0000_0000, 2 * GIB, ENABLED | HOTPLUG),
            srat_mem(0, 0, 0, 0),
        ],
    );
    let d = slit(2, &[10, 21, 21, 10]);
    (m, s, d)
}

/// A PU topology with `n` PUs whose APIC id is their OS index.
fn pus(n: u32) -> Topology {
    let mut t = Topology::new();
    t.set_type_filter(ObjType::MemCache, TypeFilter::KeepAll)
        .unwrap();
    for i in 0..n {
        t.insert_by_cpuset(Object::with_cpuset(
            ObjType::PU,
            Some(i),
            CpuSet::from_index(i),
        ))
        .unwrap();
    }
    t.finish().unwrap();
    t
}

fn identity(a: u32) -> Option<u32> {
    Some(a)
}

fn cpuset(bits: &[u32]) -> CpuSet {
    let mut c = CpuSet::new();
    for &b in bits {
        c.set(b);
    }
    c
}

// ------------------------------------------------------------ headers

#[test]
fn header_and_checksum() {
    let t = table(b"SLIT", 1, &W::default().u64(1).u8(10).0);
    let (h, body) = parse_table(&t, Some(Signature::SLIT), Checksum::Verify).unwrap();
    assert_eq!(h.signature, Signature::SLIT);
    assert_eq!(h.length, 45);
    assert_eq!(h.oem_id, *b"WLOCTS");
    assert_eq!(body.len(), 45);
    // Trailing bytes past the length are ignored.
    let mut longer = t.clone();
    longer.extend_from_slice(&[1, 2, 3]);
    assert_eq!(Slit::parse(&longer).unwrap().count, 1);
    // A wrong checksum is an error unless ignored.
    let mut bad = t.clone();
    bad[44] = 11;
    assert_eq!(
        Slit::parse(&bad),
        Err(AcpiError::BadChecksum {
            table: Signature::SLIT,
            sum: 1
        })
    );
    assert_eq!(
        Slit::parse_with(&bad, Checksum::Ignore).unwrap().matrix,
        vec![11]
    );
    // Wrong signature.
    assert!(matches!(
        Srat::parse(&t),
        Err(AcpiError::BadSignature { expected, found }) if expected == Signature::SRAT && found == Signature::SLIT
    ));
    // Truncated header, length too short, length past the data.
    assert!(matches!(
        Slit::parse(&t[..20]),
        Err(AcpiError::Truncated { offset: 16, .. })
    ));
    let mut short = t.clone();
    short[4..8].copy_from_slice(&20u32.to_le_bytes());
    assert!(matches!(
        Slit::parse_with(&short, Checksum::Ignore),
        Err(AcpiError::BadLength { length: 20, .. })
    ));
    assert!(matches!(
        Slit::parse(&t[..44]),
        Err(AcpiError::BadLength { length: 45, .. })
    ));
    let e = Slit::parse(&t[..44]).unwrap_err().to_string();
    assert!(e.contains("SLIT"), "{e}");
}

// ------------------------------------------------------------ MADT

#[test]
fn madt_processors() {
    let t = madt(&[
        lapic(0, 0, ENABLED),
        ioapic(),
        lapic(1, 2, 0),
        lapic(2, 4, 2),
        lapic(3, 0xff, ENABLED),
        x2apic(0x100, ENABLED, 7),
        x2apic(2, ENABLED, 8),
        x2apic(u32::MAX, ENABLED, 9),
    ]);
    let m = Madt::parse(&t).unwrap();
    assert_eq!(m.local_apic_address, 0xfee0_0000);
    let ids: Vec<_> = m
        .processors
        .iter()
        .map(|p| (p.uid, p.apic_id, p.enabled, p.online_capable, p.x2apic))
        .collect();
    assert_eq!(
        ids,
        vec![
            (0, 0, true, false, false),
            (1, 2, false, false, false),
            (2, 4, false, true, false),
            (7, 0x100, true, false, true),
        ]
    );
    assert_eq!(m.enabled_apic_ids().collect::<Vec<_>>(), vec![0, 0x100]);
    assert!(m.is_usable(&m.processors[2]));
    assert!(!m.is_usable(&m.processors[1]));
    // Online-capable means nothing before revision 5.
    let old = Madt::parse(&madt_rev(4, &[lapic(2, 4, 2)])).unwrap();
    assert!(!old.is_usable(&old.processors[0]));
}

/// The MADT of a Firecracker VM with two CPUs, as read from
/// `/sys/firmware/acpi/tables/APIC`.
#[test]
fn real_firecracker_madt() {
    let t: &[u8] = &[
        0x41, 0x50, 0x49, 0x43, 0x48, 0x00, 0x00, 0x00, 0x06, 0x56, 0x46, 0x49, 0x52, 0x45, 0x43,
        0x4b, 0x46, 0x43, 0x56, 0x4d, 0x4d, 0x41, 0x44, 0x54, 0x00, 0x00, 0x00, 0x00, 0x46, 0x43,
        0x41, 0x54, 0x19, 0x01, 0x24, 0x20, 0x00, 0x00, 0xe0, 0xfe, 0x00, 0x00, 0x00, 0x00, 0x01,
        0x0c, 0x00, 0x00, 0x00, 0x00, 0xc0, 0xfe, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00,
        0x01, 0x00, 0x00, 0x00, 0x00, 0x08, 0x01, 0x01, 0x01, 0x00, 0x00, 0x00,
    ];
    let m = Madt::parse(t).unwrap();
    assert_eq!(m.header.revision, 6);
    assert_eq!(m.header.oem_id, *b"FIRECK");
    assert_eq!(m.local_apic_address, 0xfee0_0000);
    let p: Vec<_> = m
        .processors
        .iter()
        .map(|p| (p.uid, p.apic_id, p.enabled, p.x2apic))
        .collect();
    assert_eq!(p, vec![(0, 0, true, false), (1, 1, true, false)]);
}

#[test]
fn madt_bad_entries() {
    // Zero length would loop forever.
    let mut zero = lapic(0, 0, ENABLED);
    zero[1] = 0;
    assert!(matches!(
        Madt::parse(&madt(&[zero])),
        Err(AcpiError::BadLength {
            offset: 44,
            length: 0,
            ..
        })
    ));
    // Past the end.
    let mut long = lapic(0, 0, ENABLED);
    long[1] = 9;
    assert!(matches!(
        Madt::parse(&madt(&[long])),
        Err(AcpiError::BadLength {
            offset: 44,
            length: 9,
            ..
        })
    ));
    // Too short for its type.
    let mut short = x2apic(1, 1, 1);
    short[1] = 12;
    short.truncate(12);
    assert!(matches!(
        Madt::parse(&madt(&[short])),
        Err(AcpiError::BadLength { length: 12, .. })
    ));
    // A lone trailing byte cannot hold a subtable header.
    assert!(matches!(
        Madt::parse(&madt(&[vec![0]])),
        Err(AcpiError::Truncated {
            offset: 44,
            needed: 2,
            ..
        })
    ));
    // Table without its fixed fields.
    assert!(matches!(
        Madt::parse(&table(b"APIC", 5, &[0; 6])),
        Err(AcpiError::Truncated { offset: 40, .. })
    ));
}

// ------------------------------------------------------------ SRAT

#[test]
fn srat_entries() {
    let t = srat(&[
        srat_cpu(0x0102_0304, 5, ENABLED),
        srat_cpu(1, 6, 0),
        srat_mem(0x0102_0304, 0x1000, 0x2000, ENABLED | HOTPLUG | 4),
        srat_x2apic(9, 0x1234, ENABLED),
        srat_gi(4, ENABLED),
        srat_gi(5, 0),
        srat_mem(0, 0, 0, 0),
        // A GICC affinity entry (type 3) that is not enabled.
        W::default().u8(3).u8(18).raw(&[0; 16]).0,
    ]);
    let s = Srat::parse(&t).unwrap();
    assert_eq!(s.disabled, 4);
    assert_eq!(
        s.entries,
        vec![
            SratEntry::Processor {
                domain: 0x0102_0304,
                apic_id: 5,
                x2apic: false,
                clock_domain: 0
            },
            SratEntry::Memory {
                domain: 0x0102_0304,
                base: 0x1000,
                length: 0x2000,
                hot_pluggable: true,
                non_volatile: true
            },
            SratEntry::Processor {
                domain: 9,
                apic_id: 0x1234,
                x2apic: true,
                clock_domain: 0
            },
            SratEntry::GenericInitiator {
                domain: 4,
                handle_type: 1,
                handle: [0xab; 16]
            },
        ]
    );
    // Revision 1: 8-bit domains only.
    let old = Srat::parse(&srat_rev(
        1,
        &[
            srat_cpu(0x0102_0304, 5, ENABLED),
            srat_mem(0x304, 0, 1, ENABLED),
        ],
    ))
    .unwrap();
    assert_eq!(old.entries[0].domain(), 4);
    assert_eq!(old.entries[1].domain(), 4);
}

#[test]
fn srat_bad_entries() {
    let mut m = srat_mem(0, 0, 1, ENABLED);
    m[1] = 24;
    m.truncate(24);
    assert!(matches!(
        Srat::parse(&srat(&[m])),
        Err(AcpiError::BadLength {
            offset: 48,
            length: 24,
            ..
        })
    ));
    let mut z = srat_cpu(0, 0, ENABLED);
    z[1] = 1;
    assert!(matches!(
        Srat::parse(&srat(&[z])),
        Err(AcpiError::BadLength { length: 1, .. })
    ));
    assert!(matches!(
        Srat::parse(&table(b"SRAT", 3, &[1, 0, 0, 0])),
        Err(AcpiError::Truncated { offset: 36, .. })
    ));
}

// ------------------------------------------------------------ SLIT

#[test]
fn slit_matrix() {
    let s = Slit::parse(&slit(3, &[10, 20, 30, 20, 10, 25, 30, 25, 10])).unwrap();
    assert_eq!(s.count, 3);
    assert_eq!(s.distance(0, 2), Some(30));
    assert_eq!(s.distance(2, 1), Some(25));
    assert_eq!(s.distance(3, 0), None);
    assert!(s.is_valid());
    assert!(!Slit::parse(&slit(2, &[10, 10, 10, 10])).unwrap().is_valid());
    assert!(!Slit::parse(&slit(2, &[11, 20, 20, 10])).unwrap().is_valid());
    // N² bytes, not N⁴: 4 localities need 16 bytes.
    let four = Slit::parse(&slit(4, &[10; 16])).unwrap();
    assert_eq!(four.matrix.len(), 16);
    assert_eq!(Slit::parse(&slit(0, &[])).unwrap().count, 0);
}

#[test]
fn slit_bad_sizes() {
    for n in [3u64, 1 << 32, u64::MAX, (1 << 32) + 1, 1 << 63] {
        let r = Slit::parse(&slit(n, &[10; 4]));
        assert!(
            matches!(
                r,
                Err(AcpiError::BadLength {
                    table: Signature::SLIT,
                    ..
                })
            ),
            "{n}: {r:?}"
        );
    }
    assert!(matches!(
        Slit::parse(&table(b"SLIT", 1, &[2, 0, 0])),
        Err(AcpiError::Truncated {
            offset: 36,
            needed: 8,
            ..
        })
    ));
}

// ------------------------------------------------------------ HMAT

#[test]
fn hmat_structures() {
    let t = hmat(&[
        hmat_domain(1, 0, 1),
        hmat_lb(0, 0, 1000, &[0], &[0, 1], &[5, 10]),
        hmat_lb(1, 3, 1, &[0, 1], &[1], &[300, 0xffff]),
        hmat_cache(1, 10 << 10, cache_attrs(2, 1, 1, 1, 64), &[0x10, 0x11]),
        // Unknown structure types are skipped.
        W::default().u16(9).u16(0).u32(12).u32(0).0,
    ]);
    let h = Hmat::parse(&t).unwrap();
    assert_eq!(
        h.domains,
        vec![HmatDomain {
            flags: 1,
            initiator_domain: 0,
            memory_domain: 1,
            range: None
        }]
    );
    assert!(h.domains[0].has_initiator());
    let l = &h.localities[0];
    assert_eq!(l.data_type, HmatDataType::AccessLatency);
    assert_eq!(l.memory_hierarchy, 0);
    assert_eq!(l.entry_base_unit, 1000);
    assert_eq!(l.entry(0, 1), Some(10));
    assert_eq!(l.entry(1, 1), None);
    let l = &h.localities[1];
    assert_eq!(l.memory_hierarchy, 1);
    assert_eq!(l.data_type, HmatDataType::AccessBandwidth);
    assert_eq!((l.entry(0, 1), l.entry(1, 1)), (Some(300), Some(0xffff)));
    let c = &h.caches[0];
    assert_eq!(
        (
            c.memory_domain,
            c.size,
            c.total_levels,
            c.level,
            c.line_size
        ),
        (1, 10 << 10, 2, 1, 64)
    );
    assert_eq!(c.associativity, CacheAssociativity::DirectMapped);
    assert_eq!(c.write_policy, CacheWritePolicy::WriteBack);
    assert_eq!(c.smbios_handles, vec![0x10, 0x11]);
    // Revision 1 domains carry an address range.
    let old = Hmat::parse(&hmat_rev(1, &[hmat_domain(3, 0, 1)])).unwrap();
    assert_eq!(old.domains[0].range, Some((0, 0)));
}

#[test]
fn hmat_bad_structures() {
    assert!(matches!(
        Hmat::parse(&hmat_rev(3, &[])),
        Err(AcpiError::BadRevision { revision: 3, .. })
    ));
    // Huge initiator and target counts.
    let mut lb = hmat_lb(0, 0, 1, &[0], &[0], &[1]);
    lb[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    lb[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(
        Hmat::parse(&hmat(&[lb])),
        Err(AcpiError::BadLength {
            offset: 40,
            length: 42,
            ..
        })
    ));
    // Unknown data type.
    let mut lb = hmat_lb(0, 0, 1, &[0], &[0], &[1]);
    lb[9] = 6;
    assert!(matches!(
        Hmat::parse(&hmat(&[lb])),
        Err(AcpiError::Invalid { offset: 49, .. })
    ));
    // SMBIOS handles past the structure.
    let mut c = hmat_cache(0, 1, 0, &[1]);
    c[30] = 5;
    assert!(matches!(
        Hmat::parse(&hmat(&[c])),
        Err(AcpiError::BadLength { length: 34, .. })
    ));
    // Structure length 0 and past the table.
    let mut d = hmat_domain(0, 0, 0);
    d[4..8].copy_from_slice(&0u32.to_le_bytes());
    assert!(matches!(
        Hmat::parse(&hmat(&[d])),
        Err(AcpiError::BadLength { length: 0, .. })
    ));
    let mut d = hmat_domain(0, 0, 0);
    d[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(
        Hmat::parse(&hmat(&[d])),
        Err(AcpiError::BadLength { .. })
    ));
    // A domain structure too short for its fields.
    let mut d = hmat_domain(0, 0, 0);
    d[4..8].copy_from_slice(&16u32.to_le_bytes());
    d.truncate(16);
    assert!(matches!(
        Hmat::parse(&hmat(&[d])),
        Err(AcpiError::BadLength { length: 16, .. })
    ));
}

// ------------------------------------------------------------ NUMA

#[test]
fn qemu_two_nodes_with_slit() {
    let (m, s, d) = qemu_two_nodes();
    let (m, s, d) = (
        Madt::parse(&m).unwrap(),
        Srat::parse(&s).unwrap(),
        Slit::parse(&d).unwrap(),
    );
    assert_eq!(s.disabled, 1);
    let numa = acpi_numa(Some(&m), Some(&s), Some(&d), None);
    assert_eq!(numa.nodes.len(), 2);
    let n0 = &numa.nodes[0];
    assert_eq!(
        (n0.os_index, n0.domain, n0.apic_ids.clone()),
        (0, 0, vec![0, 1])
    );
    assert_eq!(n0.memory, 0xa0000 + GIB - 0x10_0000);
    let n1 = &numa.nodes[1];
    assert_eq!(
        (n1.os_index, n1.apic_ids.clone(), n1.memory),
        (1, vec![2, 3], GIB)
    );
    assert_eq!(n1.hot_pluggable_memory, 2 * GIB);
    assert_eq!(n1.locality, vec![1]);
    let dist = numa.distances.as_ref().unwrap();
    assert!(dist.from_slit);
    assert_eq!(dist.values, vec![10, 21, 21, 10]);
    assert!(numa.memattrs.is_empty() && numa.memcaches.is_empty());

    let mut topo = pus(4);
    numa.apply(&mut topo, &identity).unwrap();
    let nodes = topo.objs_by_type(ObjType::NUMANode);
    assert_eq!(nodes.len(), 2);
    let n1 = topo.obj_by_os_index(ObjType::NUMANode, 1).unwrap();
    assert_eq!(topo.obj(n1).cpuset, Some(cpuset(&[2, 3])));
    assert_eq!(topo.obj(n1).numa().unwrap().local_memory, GIB);
    assert_eq!(
        topo.obj(topo.root()).complete_nodeset,
        Some({
            let mut n = NodeSet::new();
            n.set(0);
            n.set(1);
            n
        })
    );
    let d = &topo.distances[0];
    assert_eq!(d.name.as_deref(), Some("NUMALatency"));
    assert_eq!(
        d.kind,
        wloc_core::distances::kind::FROM_OS | wloc_core::distances::kind::MEANS_LATENCY
    );
    assert_eq!(d.values, vec![10, 21, 21, 10]);
    assert_eq!(topo.check(), Ok(()));
    // Applying twice gives the same topology.
    let before = topo.objs_by_type(ObjType::NUMANode).len();
    numa.apply(&mut topo, &identity).unwrap();
    assert_eq!(topo.objs_by_type(ObjType::NUMANode).len(), before);
    assert_eq!(topo.distances.len(), 1);
}

#[test]
fn distances_default_to_linux_values() {
    let (m, s, _) = qemu_two_nodes();
    let (m, s) = (Madt::parse(&m).unwrap(), Srat::parse(&s).unwrap());
    let none = acpi_numa(Some(&m), Some(&s), None, None);
    assert_eq!(
        none.distances,
        Some(AcpiDistances {
            values: vec![10, 20, 20, 10],
            from_slit: false
        })
    );
    let bad = Slit::parse(&slit(2, &[10, 5, 5, 10])).unwrap();
    let invalid = acpi_numa(Some(&m), Some(&s), Some(&bad), None);
    assert_eq!(invalid.distances, none.distances);
    // No SRAT, no NUMA.
    assert_eq!(acpi_numa(Some(&m), None, None, None), AcpiNuma::default());
}

/// QEMU's documented HMAT example: node 1 is CPU-less memory whose
/// initiator is node 0, access latency and bandwidth given, one direct
/// mapped memory-side cache per node.
fn qemu_hmat() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let m = madt(&[lapic(0, 0, ENABLED), lapic(1, 1, ENABLED)]);
    let s = srat_rev(
        1,
        &[
            srat_cpu(0, 0, ENABLED),
            srat_cpu(0, 1, ENABLED),
            srat_mem(0, 0, 0xa0000, ENABLED),
            srat_mem(0, 0x10_0000, GIB - 0x10_0000, ENABLED),
            srat_mem(1, GIB, GIB, ENABLED),
            srat_mem(0, 0, 0, 0),
        ],
    );
    let h = hmat(&[
        hmat_domain(1, 0, 0),
        hmat_domain(1, 0, 1),
        // Latencies in ps (base 1000: 5 ns and 10 ns), bandwidths in MB/s.
        hmat_lb(0, 0, 1000, &[0], &[0, 1], &[5, 10]),
        hmat_lb(0, 3, 1, &[0], &[0, 1], &[200, 100]),
        hmat_cache(0, 10 << 10, cache_attrs(1, 1, 1, 1, 8), &[]),
        hmat_cache(1, 10 << 10, cache_attrs(1, 1, 1, 1, 8), &[]),
    ]);
    (m, s, h)
}

fn attrs(numa: &AcpiNuma, target: u32) -> BTreeMap<&'static str, u64> {
    numa.memattrs
        .iter()
        .filter(|m| m.target == target)
        .map(|m| (m.kind.name(), m.value))
        .collect()
}

#[test]
fn qemu_hmat_two_nodes() {
    let (m, s, h) = qemu_hmat();
    let (m, s, h) = (
        Madt::parse(&m).unwrap(),
        Srat::parse(&s).unwrap(),
        Hmat::parse(&h).unwrap(),
    );
    let numa = acpi_numa(Some(&m), Some(&s), None, Some(&h));
    assert_eq!(numa.nodes.len(), 2);
    assert_eq!(numa.nodes[1].apic_ids, Vec::<u32>::new());
    assert_eq!(numa.nodes[1].memory, GIB);
    // Node 1 is local to node 0's CPUs through the HMAT initiator.
    assert_eq!(numa.nodes[0].locality, vec![0]);
    assert_eq!(numa.nodes[1].locality, vec![0]);
    let a0 = attrs(&numa, 0);
    assert_eq!(
        a0,
        BTreeMap::from([
            ("Bandwidth", 200),
            ("Latency", 5),
            ("ReadBandwidth", 200),
            ("ReadLatency", 5),
            ("WriteBandwidth", 200),
            ("WriteLatency", 5),
        ])
    );
    assert_eq!(attrs(&numa, 1)["Latency"], 10);
    assert_eq!(attrs(&numa, 1)["WriteBandwidth"], 100);
    assert_eq!(numa.memcaches.len(), 2);
    assert_eq!(numa.memcaches[1].node, 1);
    assert_eq!(numa.memcaches[1].size, 10 << 10);
    assert_eq!(numa.memcaches[1].line_size, 8);
    assert_eq!(numa.memcaches[1].hwloc_associativity(), 1);

    let mut topo = pus(2);
    numa.apply(&mut topo, &identity).unwrap();
    assert_eq!(topo.check(), Ok(()));
    let n1 = topo.obj_by_os_index(ObjType::NUMANode, 1).unwrap();
    assert_eq!(topo.obj(n1).cpuset, Some(cpuset(&[0, 1])));
    let caches = topo.objs_by_type(ObjType::MemCache);
    assert_eq!(caches.len(), 2);
    let mc = topo.obj(n1).parent().unwrap();
    assert_eq!(topo.obj(mc).obj_type, ObjType::MemCache);
    assert_eq!(topo.obj(mc).cache().unwrap().associativity, 1);
    let lat = topo.memattrs.iter().find(|a| a.name == "Latency").unwrap();
    assert_eq!(lat.flags, wloc_core::memattrs::PREDEFINED[3].1);
    let init = Initiator::CpuSet(cpuset(&[0, 1]));
    assert_eq!(lat.get(n1, Some(&init)), Some(10));
    let bw = topo
        .memattrs
        .iter()
        .find(|a| a.name == "ReadBandwidth")
        .unwrap();
    let n0 = topo.obj_by_os_index(ObjType::NUMANode, 0).unwrap();
    assert_eq!(bw.get(n0, Some(&init)), Some(200));
    // Without the MemCache filter, caches are dropped but the rest stays.
    let mut plain = Topology::new();
    plain
        .insert_by_cpuset(Object::with_cpuset(
            ObjType::PU,
            Some(0),
            CpuSet::from_index(0),
        ))
        .unwrap();
    plain.finish().unwrap();
    numa.apply(&mut plain, &|a| (a == 0).then_some(0)).unwrap();
    assert!(plain.objs_by_type(ObjType::MemCache).is_empty());
    assert_eq!(plain.objs_by_type(ObjType::NUMANode).len(), 2);
}

#[test]
fn hmat_best_initiators_as_linux() {
    // Nodes 0 and 1 have CPUs, node 2 is memory only, no attached
    // initiator: latencies tie, bandwidth is best from node 1.
    let s = Srat::parse(&srat(&[
        srat_cpu(0, 0, ENABLED),
        srat_cpu(1, 1, ENABLED),
        srat_mem(0, 0, GIB, ENABLED),
        srat_mem(1, GIB, GIB, ENABLED),
        srat_mem(2, 2 * GIB, GIB, ENABLED),
    ]))
    .unwrap();
    let h = Hmat::parse(&hmat(&[
        hmat_lb(0, 1, 1000, &[0, 1], &[0, 1, 2], &[10, 20, 20, 20, 10, 20]),
        hmat_lb(0, 2, 1000, &[0, 1], &[0, 1, 2], &[10, 20, 30, 20, 10, 30]),
        hmat_lb(0, 4, 10, &[0, 1], &[0, 1, 2], &[100, 50, 10, 50, 100, 15]),
        // Write bandwidth unknown from node 0 to node 2 (0xffff).
        hmat_lb(
            0,
            5,
            10,
            &[0, 1],
            &[0, 1, 2],
            &[100, 50, 0xffff, 50, 100, 12],
        ),
        // A cache-level matrix is not used for memory attributes.
        hmat_lb(1, 4, 10, &[0, 1], &[2], &[9999, 9999]),
    ]))
    .unwrap();
    let numa = acpi_numa(None, Some(&s), None, Some(&h));
    assert_eq!(numa.nodes[2].locality, vec![1]);
    assert_eq!(
        attrs(&numa, 2),
        BTreeMap::from([
            ("Bandwidth", 135),
            ("Latency", 25),
            ("ReadBandwidth", 150),
            ("ReadLatency", 20),
            ("WriteBandwidth", 120),
            ("WriteLatency", 30),
        ])
    );
    assert_eq!(numa.nodes[0].locality, vec![0]);
    assert_eq!(attrs(&numa, 0)["ReadLatency"], 10);
    // Latency from node 0 is better and bandwidths tie: node 0 only.
    let h = Hmat::parse(&hmat(&[
        hmat_lb(0, 0, 1000, &[0, 1], &[0, 1, 2], &[10, 20, 20, 20, 10, 30]),
        hmat_lb(0, 3, 1, &[0, 1], &[0, 1, 2], &[100, 50, 100, 50, 100, 100]),
    ]))
    .unwrap();
    let numa = acpi_numa(None, Some(&s), None, Some(&h));
    assert_eq!(numa.nodes[2].locality, vec![0]);
    assert_eq!(attrs(&numa, 2)["Latency"], 20);
    assert_eq!(attrs(&numa, 2)["Bandwidth"], 100);
    // Revision 1: values are divided by 10 (rounded up), under 10 dropped.
    let h1 = Hmat::parse(&hmat_rev(1, &[hmat_lb(0, 1, 1, &[0], &[0, 2], &[95, 9])])).unwrap();
    let numa = acpi_numa(None, Some(&s), None, Some(&h1));
    assert_eq!(attrs(&numa, 0)["ReadLatency"], 10);
    assert!(!attrs(&numa, 2).contains_key("ReadLatency"));
    // Values above 2³²-1 are dropped.
    let big = Hmat::parse(&hmat(&[hmat_lb(0, 4, 1 << 20, &[0], &[0], &[1 << 12])])).unwrap();
    assert!(
        acpi_numa(None, Some(&s), None, Some(&big))
            .memattrs
            .is_empty()
    );
}

#[test]
fn cpuless_nodes_take_nearest_cpus() {
    let s = Srat::parse(&srat(&[
        srat_cpu(0, 0, ENABLED),
        srat_cpu(1, 1, ENABLED),
        srat_mem(0, 0, GIB, ENABLED),
        srat_mem(1, GIB, GIB, ENABLED),
        srat_mem(2, 2 * GIB, GIB, ENABLED),
    ]))
    .unwrap();
    let near0 = Slit::parse(&slit(3, &[10, 20, 20, 20, 10, 30, 20, 30, 10])).unwrap();
    let numa = acpi_numa(None, Some(&s), Some(&near0), None);
    assert_eq!(numa.nodes[2].locality, vec![0]);
    let mut topo = pus(2);
    numa.apply(&mut topo, &identity).unwrap();
    let n2 = topo.obj_by_os_index(ObjType::NUMANode, 2).unwrap();
    assert_eq!(topo.obj(n2).cpuset, Some(cpuset(&[0])));
    assert_eq!(topo.check(), Ok(()));
    // Equally far from everything: no locality, attached to the machine.
    let flat = Slit::parse(&slit(3, &[10, 20, 20, 20, 10, 20, 20, 20, 10])).unwrap();
    let numa = acpi_numa(None, Some(&s), Some(&flat), None);
    assert!(numa.nodes[2].locality.is_empty());
    let mut topo = pus(2);
    numa.apply(&mut topo, &identity).unwrap();
    let n2 = topo.obj_by_os_index(ObjType::NUMANode, 2).unwrap();
    assert_eq!(topo.obj(n2).cpuset, Some(CpuSet::new()));
    let p = topo.obj(n2).parent().unwrap();
    assert!(
        p == topo.root() || topo.obj(p).parent() == Some(topo.root()),
        "{:?}",
        topo.obj(p)
    );
    assert_eq!(topo.check(), Ok(()));
}

#[test]
fn linux_node_numbering_and_filters() {
    // Domain 7 appears first among processors, so it is node 0; domain 3
    // only has memory and comes last; domain 5 has a generic initiator.
    // Domain 9 has only hot-pluggable memory and is no node, but keeps
    // its number.  CPU 2 is disabled in the MADT.
    let m = Madt::parse(&madt(&[
        lapic(0, 0, ENABLED),
        lapic(1, 1, ENABLED),
        lapic(2, 2, 0),
    ]))
    .unwrap();
    let s = Srat::parse(&srat(&[
        srat_cpu(7, 0, ENABLED),
        srat_mem(3, 0, GIB, ENABLED),
        srat_x2apic(1, 1, ENABLED),
        srat_cpu(2, 2, ENABLED),
        srat_gi(5, ENABLED),
        srat_mem(9, GIB, GIB, ENABLED | HOTPLUG),
        srat_mem(7, 2 * GIB, GIB, ENABLED),
    ]))
    .unwrap();
    let numa = acpi_numa(Some(&m), Some(&s), None, None);
    let got: Vec<_> = numa
        .nodes
        .iter()
        .map(|n| {
            (
                n.os_index,
                n.domain,
                n.apic_ids.clone(),
                n.memory,
                n.generic_initiator,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 7, vec![0], GIB, false),
            (1, 1, vec![1], 0, false),
            (3, 5, vec![], 0, true),
            (4, 3, vec![], GIB, false),
        ]
    );
    // Without the MADT, CPU 2 makes domain 2 a node.
    let numa = acpi_numa(None, Some(&s), None, None);
    assert_eq!(numa.nodes[2].domain, 2);
    assert_eq!(numa.nodes[2].os_index, 2);
}

#[test]
fn numa_through_tables() {
    let (m, s, h) = qemu_hmat();
    let mut tables = AcpiTables::new();
    for t in [m, s, h] {
        tables.insert(t).unwrap();
    }
    assert_eq!(
        tables.signatures().collect::<Vec<_>>(),
        vec![Signature::MADT, Signature::SRAT, Signature::HMAT]
    );
    let numa = tables.numa(Checksum::Verify).unwrap();
    assert_eq!(numa.nodes.len(), 2);
    assert!(tables.insert(vec![1, 2, 3]).is_err());
    let mut broken = AcpiTables::new();
    broken.insert(slit(9, &[])).unwrap();
    assert!(broken.numa(Checksum::Verify).is_err());
}

// ------------------------------------------------------------ RSDP

struct Mem(BTreeMap<u64, Vec<u8>>);

impl PhysicalMemory for Mem {
    fn read(&self, address: u64, buf: &mut [u8]) -> bool {
        for (&base, bytes) in &self.0 {
            if address >= base {
                let off = (address - base) as usize;
                if let Some(src) = bytes.get(off..off + buf.len()) {
                    buf.copy_from_slice(src);
                    return true;
                }
            }
        }
        false
    }
}

fn rsdp(revision: u8, rsdt: u32, xsdt: u64) -> Vec<u8> {
    let mut r = W::default()
        .raw(b"RSD PTR ")
        .u8(0)
        .raw(b"WLOCTS")
        .u8(revision)
        .u32(rsdt)
        .0;
    let s = r.iter().fold(0u8, |s, &b| s.wrapping_add(b));
    r[8] = 0u8.wrapping_sub(s);
    if revision >= 2 {
        r = W(r).u32(36).u64(xsdt).u8(0).raw(&[0; 3]).0;
        let s = r.iter().fold(0u8, |s, &b| s.wrapping_add(b));
        r[32] = 0u8.wrapping_sub(s);
    }
    r
}

#[test]
fn walks_xsdt_and_rsdt() {
    let (m, s, h) = qemu_hmat();
    let xsdt = table(
        b"XSDT",
        1,
        &W::default()
            .u64(0x2000)
            .u64(0x3000)
            .u64(0)
            .u64(0x9000)
            .u64(0x4000)
            .0,
    );
    let rsdt = table(b"RSDT", 1, &W::default().u32(0x2000).u32(0x3000).0);
    let mut bad_h = h.clone();
    bad_h[40] ^= 1;
    let mem = Mem(BTreeMap::from([
        (0xe0000, rsdp(2, 0x1800, 0x1000)),
        (0xf0000, rsdp(0, 0x1800, 0)),
        (0x1000, xsdt),
        (0x1800, rsdt),
        (0x2000, m),
        (0x3000, s),
        (0x4000, bad_h),
    ]));
    let t = AcpiTables::from_rsdp(&mem, 0xe0000, Checksum::Verify).unwrap();
    assert_eq!(
        t.signatures().collect::<Vec<_>>(),
        vec![Signature::MADT, Signature::SRAT]
    );
    assert_eq!(t.skipped.len(), 2);
    assert!(matches!(
        t.skipped[0],
        AcpiError::Memory {
            address: 0x9000,
            ..
        }
    ));
    assert!(matches!(
        t.skipped[1],
        AcpiError::BadChecksum {
            table: Signature::HMAT,
            ..
        }
    ));
    let t = AcpiTables::from_rsdp(&mem, 0xe0000, Checksum::Ignore).unwrap();
    assert_eq!(t.signatures().count(), 3);
    let t = AcpiTables::from_rsdp(&mem, 0xf0000, Checksum::Verify).unwrap();
    assert_eq!(t.signatures().count(), 2);
    assert!(t.get(Signature::SRAT).is_some());
    // No RSDP there.
    assert!(matches!(
        AcpiTables::from_rsdp(&mem, 0x2000, Checksum::Verify),
        Err(AcpiError::BadSignature { .. })
    ));
    assert!(matches!(
        AcpiTables::from_rsdp(&mem, 0x7000_0000, Checksum::Verify),
        Err(AcpiError::Memory { .. })
    ));
    let mut broken = rsdp(2, 0, 0x1000);
    broken[24] ^= 1;
    assert!(matches!(
        Rsdp::parse(&broken, Checksum::Verify),
        Err(AcpiError::BadChecksum { .. })
    ));
}

// ------------------------------------------------------------ robustness

/// Every valid table, truncated anywhere and with any byte changed, is
/// rejected or parsed, never a panic; what parses also goes through
/// `acpi_numa` and `apply`.
#[test]
fn mutations_never_panic() {
    let (m, s, d) = qemu_two_nodes();
    let (_, s2, h) = qemu_hmat();
    let all: Vec<Vec<u8>> = vec![
        m,
        s,
        d,
        s2,
        h,
        slit(3, &[10, 20, 30, 20, 10, 25, 30, 25, 10]),
    ];
    let parse = |b: &[u8], c: Checksum| {
        let _ = Madt::parse_with(b, c);
        let _ = Srat::parse_with(b, c);
        let _ = Slit::parse_with(b, c);
        let _ = Hmat::parse_with(b, c);
        let _ = Rsdp::parse(b, c);
    };
    for t in &all {
        for cut in 0..t.len() {
            parse(&t[..cut], Checksum::Verify);
            parse(&t[..cut], Checksum::Ignore);
        }
        for i in 0..t.len() {
            for v in [0u8, 1, 2, 0x7f, 0x80, 0xff] {
                let mut x = t.clone();
                x[i] = v;
                parse(&x, Checksum::Ignore);
            }
        }
    }
    // Mutated SRAT and HMAT still give a usable NUMA description.
    let (_, s, h) = qemu_hmat();
    for i in 36..h.len() {
        for v in [0u8, 1, 2, 0xff] {
            let mut x = h.clone();
            x[i] = v;
            if let Ok(h) = Hmat::parse_with(&x, Checksum::Ignore) {
                let s = Srat::parse(&s).unwrap();
                let numa = acpi_numa(None, Some(&s), None, Some(&h));
                let mut topo = pus(2);
                numa.apply(&mut topo, &identity).unwrap();
                assert_eq!(topo.check(), Ok(()));
            }
        }
    }
}
