#![allow(dead_code)]
//! Shared by the ACPI fuzz targets: turning fuzz input into a table, and
//! a small machine to apply NUMA information to.

use wloc_core::{CpuSet, ObjType, Object, Topology, TypeFilter};
use wloc_probe::acpi::AcpiNuma;

/// Byte 0 picks the layout: with bit 0 set the rest is the whole table
/// (header included, checksum ignored); otherwise it is the body of a
/// table whose header, with the right length and checksum, is built
/// here, with the revision taken from bits 1-3 of byte 0.
pub fn table(sig: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let Some((&mode, rest)) = data.split_first() else {
        return Vec::new();
    };
    if mode & 1 != 0 {
        return rest.to_vec();
    }
    let mut t = Vec::with_capacity(36 + rest.len());
    t.extend_from_slice(sig);
    t.extend_from_slice(&((36 + rest.len()) as u32).to_le_bytes());
    t.push((mode >> 1) & 7);
    t.push(0);
    t.extend_from_slice(b"FUZZ  FUZZTABL\x01\0\0\0FUZZ\x01\0\0\0");
    t.extend_from_slice(rest);
    let sum = t.iter().fold(0u8, |s, &b| s.wrapping_add(b));
    t[9] = 0u8.wrapping_sub(sum);
    t
}

/// Applies NUMA information to a machine of 8 PUs whose APIC ids are
/// 0 to 7, and checks the result.
pub fn apply_and_check(numa: &AcpiNuma) {
    let mut topo = Topology::new();
    topo.set_type_filter(ObjType::MemCache, TypeFilter::KeepAll)
        .unwrap();
    for i in 0..8 {
        topo.insert_by_cpuset(Object::with_cpuset(
            ObjType::PU,
            Some(i),
            CpuSet::from_index(i),
        ))
        .unwrap();
    }
    topo.finish().unwrap();
    if numa.apply(&mut topo, &|a| (a < 8).then_some(a)).is_ok() {
        assert_eq!(topo.check(), Ok(()));
    }
}
