//! SRAT parsing, then NUMA nodes from it applied to a small machine: no
//! input may panic and the topology must stay consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wloc_probe::acpi::{Checksum, Srat, acpi_numa};

fuzz_target!(|data: &[u8]| {
    let t = acpi_common::table(b"SRAT", data);
    let _ = Srat::parse(&t);
    match Srat::parse_with(&t, Checksum::Ignore) {
        Ok(s) => {
            let numa = acpi_numa(None, Some(&s), None, None);
            for n in &numa.nodes {
                assert!(!n.apic_ids.is_empty() || n.memory > 0 || n.generic_initiator);
            }
            if let Some(d) = &numa.distances {
                assert_eq!(d.values.len(), numa.nodes.len() * numa.nodes.len());
            }
            if numa.nodes.len() <= 64 {
                acpi_common::apply_and_check(&numa);
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});

#[path = "acpi_common.rs"]
mod acpi_common;
