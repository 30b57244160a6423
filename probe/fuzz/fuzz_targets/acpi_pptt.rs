//! PPTT parsing, then an ARM topology built from it and a MADT of eight
//! processors (UIDs 0 to 7): no input may panic and the topology must
//! stay consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wloc_core::{Topology, TypeFilter};
use wloc_probe::acpi::{Checksum, Madt, Pptt, discover_arm};

/// A MADT with eight enabled GICC structures, UIDs 0-7, MPIDRs 0-7.
fn madt() -> Madt {
    let mut body = Vec::new();
    body.extend_from_slice(&0u32.to_le_bytes());
    body.extend_from_slice(&0u32.to_le_bytes());
    for uid in 0..8u32 {
        let mut e = vec![0u8; 80];
        e[0] = 0x0b;
        e[1] = 80;
        e[4..8].copy_from_slice(&uid.to_le_bytes());
        e[8..12].copy_from_slice(&uid.to_le_bytes());
        e[12..16].copy_from_slice(&1u32.to_le_bytes());
        e[68..76].copy_from_slice(&u64::from(uid).to_le_bytes());
        body.extend_from_slice(&e);
    }
    let mut data = vec![0u8];
    data.extend_from_slice(&body);
    Madt::parse(&acpi_common::table(b"APIC", &data)).expect("a valid MADT")
}

fuzz_target!(|data: &[u8]| {
    let t = acpi_common::table(b"PPTT", data);
    let _ = Pptt::parse(&t);
    match Pptt::parse_with(&t, Checksum::Ignore) {
        Ok(p) => {
            for n in &p.processors {
                if let Some(parent) = n.parent {
                    assert!(p.processor_at(parent).is_some());
                }
                assert!(p.ancestors(n).count() <= p.processors.len());
                let _ = p.caches_of(n);
            }
            let mut topo = Topology::new();
            topo.set_all_types_filter(TypeFilter::KeepAll);
            if let Ok(topo) = discover_arm(&madt(), Some(&p), Some(0), topo) {
                assert_eq!(topo.check(), Ok(()));
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});

#[path = "acpi_common.rs"]
mod acpi_common;
