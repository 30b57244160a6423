//! HMAT parsing, then memory attributes and memory-side caches of a
//! three-node machine (two with CPUs, one memory only): no input may
//! panic and the topology must stay consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wloc_probe::acpi::{Checksum, Hmat, Srat, acpi_numa};

fn srat() -> Vec<u8> {
    let mut t = b"SRAT\0\0\0\0\x03\0FUZZ  FUZZTABL\x01\0\0\0FUZZ\x01\0\0\0".to_vec();
    t.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    for apic in 0u8..4 {
        t.extend_from_slice(&[0, 16, apic / 2, apic, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    }
    for d in 0u32..3 {
        t.extend_from_slice(&[1, 40]);
        t.extend_from_slice(&d.to_le_bytes());
        t.extend_from_slice(&[0, 0]);
        t.extend_from_slice(&(u64::from(d) << 30).to_le_bytes());
        t.extend_from_slice(&(1u64 << 30).to_le_bytes());
        t.extend_from_slice(&[0; 4]);
        t.extend_from_slice(&1u32.to_le_bytes());
        t.extend_from_slice(&[0; 8]);
    }
    let len = t.len() as u32;
    t[4..8].copy_from_slice(&len.to_le_bytes());
    t
}

fuzz_target!(|data: &[u8]| {
    let t = acpi_common::table(b"HMAT", data);
    let _ = Hmat::parse(&t);
    match Hmat::parse_with(&t, Checksum::Ignore) {
        Ok(h) => {
            for l in &h.localities {
                assert_eq!(l.entries.len(), l.initiators.len() * l.targets.len());
            }
            let s = Srat::parse_with(&srat(), Checksum::Ignore).unwrap();
            let numa = acpi_numa(None, Some(&s), None, Some(&h));
            assert_eq!(numa.nodes.len(), 3);
            for m in &numa.memattrs {
                assert!(m.value > 0 && m.value <= u64::from(u32::MAX));
            }
            acpi_common::apply_and_check(&numa);
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});

#[path = "acpi_common.rs"]
mod acpi_common;
