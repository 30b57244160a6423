//! SLIT parsing, then the distances of a four-node machine: no input may
//! panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wloc_probe::acpi::{Checksum, Slit, Srat, acpi_numa};

/// Four domains 0 to 3 with two CPUs and memory each, but domain 3
/// memory only.
const SRAT: &[u8] = &[
    b'S', b'R', b'A', b'T', 0, 0, 0, 0, 3, 0, b'F', b'U', b'Z', b'Z', b' ', b' ', b'F', b'U', b'Z',
    b'Z', b'T', b'A', b'B', b'L', 1, 0, 0, 0, b'F', b'U', b'Z', b'Z', 1, 0, 0, 0,
];

fn srat() -> Vec<u8> {
    let mut t = SRAT.to_vec();
    t.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    for apic in 0u8..6 {
        t.extend_from_slice(&[0, 16, apic / 2, apic, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    }
    for d in 0u32..4 {
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
    let t = acpi_common::table(b"SLIT", data);
    let _ = Slit::parse(&t);
    match Slit::parse_with(&t, Checksum::Ignore) {
        Ok(slit) => {
            assert_eq!(slit.matrix.len(), slit.count * slit.count);
            let _ = slit.is_valid();
            let s = Srat::parse_with(&srat(), Checksum::Ignore).unwrap();
            let numa = acpi_numa(None, Some(&s), Some(&slit), None);
            assert_eq!(numa.nodes.len(), 4);
            acpi_common::apply_and_check(&numa);
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});

#[path = "acpi_common.rs"]
mod acpi_common;
