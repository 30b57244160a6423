//! MADT parsing: no input may panic; what parses is consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wloc_probe::acpi::{Checksum, Madt};

fuzz_target!(|data: &[u8]| {
    let t = acpi_common::table(b"APIC", data);
    let _ = Madt::parse(&t);
    match Madt::parse_with(&t, Checksum::Ignore) {
        Ok(m) => {
            for p in &m.processors {
                assert!(p.x2apic || p.apic_id < 0xff);
                let _ = m.is_usable(p);
            }
            let ids: Vec<_> = m.processors.iter().map(|p| p.apic_id).collect();
            let mut dedup = ids.clone();
            dedup.sort_unstable();
            dedup.dedup();
            assert_eq!(ids.len(), dedup.len());
            for (i, g) in m.giccs.iter().enumerate() {
                assert_eq!(g.mpidr & !wloc_probe::acpi::MPIDR_HWID_MASK, 0);
                assert!(
                    !m.giccs[..i]
                        .iter()
                        .any(|h| h.mpidr == g.mpidr || h.uid == g.uid)
                );
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});

#[path = "acpi_common.rs"]
mod acpi_common;
