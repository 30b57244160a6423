//! wloc's built-in x86 discovery component.
//!
//! It decodes the CPUID answers of every PU with `wloc-probe`, asking the
//! host through the `cpuid` import: the host runs the instruction on each
//! PU (pinning a thread there) or replays a recorded dump, and the
//! component cannot tell the difference.  When the host also grants
//! `/sys/firmware/acpi/tables`, the MADT, SRAT, SLIT and HMAT found there
//! add NUMA nodes, distances and memory attributes.  Settings arrive
//! through `config` under hwloc's variable names without `HWLOC_`
//! ([`wloc_probe::x86_setting`]: `X86_TOPOEXT_NUMANODES`).  Every type is
//! kept; the host applies the user's filters when it rebuilds the tree.

use wloc_core::{Topology, TypeFilter};
use wloc_guest::{Discovery, HostCpuid, config, files, log};
use wloc_probe::CpuidSource;
use wloc_probe::acpi::{AcpiTables, Checksum};

/// Where Linux shows the firmware's ACPI tables (readable by root only).
const ACPI_DIR: &str = "/sys/firmware/acpi/tables";
/// The tables that describe NUMA.
const ACPI_TABLES: [&str; 4] = ["APIC", "SRAT", "SLIT", "HMAT"];
/// Largest table read (real ones are a few KiB; HMAT grows with nodes²).
const MAX_TABLE_BYTES: u32 = 4 << 20;

/// The NUMA tables the host lets us read, if any.
fn acpi_tables() -> Option<AcpiTables> {
    let paths: Vec<String> = ACPI_TABLES
        .iter()
        .map(|t| format!("{ACPI_DIR}/{t}"))
        .collect();
    let mut tables = AcpiTables::new();
    let mut any = false;
    for (name, answer) in ACPI_TABLES
        .iter()
        .zip(files::read_many(&paths, MAX_TABLE_BYTES))
    {
        let Ok(bytes) = answer else { continue };
        match tables.insert(bytes) {
            Ok(_) => any = true,
            Err(e) => log::log(
                log::Level::Warning,
                &format!("ignoring ACPI table {name}: {e}"),
            ),
        }
    }
    any.then_some(tables)
}

/// The APIC id of a PU: the x2APIC id of leaf 0xB when the CPU has it,
/// else the initial APIC id of leaf 1.
fn apic_id(src: &HostCpuid, pu: usize) -> u32 {
    let max_leaf = src.cpuid(pu, 0, 0)[0];
    if max_leaf >= 0xb {
        let [_, ebx, _, edx] = src.cpuid(pu, 0xb, 0);
        if ebx & 0xffff != 0 {
            return edx;
        }
    }
    src.cpuid(pu, 1, 0)[1] >> 24
}

struct X86;

impl wloc_guest::Guest for X86 {
    fn discover() -> Result<Discovery, String> {
        let src = HostCpuid::new();
        let pus = src.pu_count();
        if pus == 0 {
            return Err("the host granted no CPUID access (no PU to query)".into());
        }
        let mut topo = Topology::new();
        topo.set_all_types_filter(TypeFilter::KeepAll);
        topo.include_disallowed = true;
        let opts = wloc_probe::X86Options::from_lookup(config::get);
        let mut topo = wloc_probe::discover_with(&src, topo, &opts).map_err(|e| e.to_string())?;
        if let Some(tables) = acpi_tables() {
            match tables.numa(Checksum::Verify) {
                Ok(numa) => {
                    let apic: Vec<(u32, u32)> = (0..pus)
                        .map(|pu| (apic_id(&src, pu), src.os_index(pu)))
                        .collect();
                    let to_pu = |a: u32| apic.iter().find(|(id, _)| *id == a).map(|(_, os)| *os);
                    numa.apply(&mut topo, &to_pu)
                        .map_err(|e| format!("cannot apply the ACPI NUMA tables: {e}"))?;
                }
                Err(e) => log::log(
                    log::Level::Warning,
                    &format!("ignoring the ACPI NUMA tables: {e}"),
                ),
            }
        }
        wloc_guest::discovery_from_topology(&topo)
    }
}

wloc_guest::export!(X86 with_types_in wloc_guest::bindings);
