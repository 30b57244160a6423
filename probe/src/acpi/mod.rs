//! ACPI tables that describe NUMA (MADT, SRAT, SLIT and HMAT) and the
//! processor topology of ARM machines (MADT GICC structures and PPTT).
//!
//! Every parser works on a byte slice holding one whole table (as read
//! from `/sys/firmware/acpi/tables/NAME` or from physical memory), checks
//! every length against the bytes it has, and reports problems as
//! [`AcpiError`]s naming the table and the offset.  No input makes them
//! panic.  Checksums are verified unless [`Checksum::Ignore`] is asked for.
//!
//! [`AcpiTables`] finds tables: from the RSDP through a
//! [`PhysicalMemory`] reader (firmware), or from table files added by
//! signature.  [`acpi_numa`] turns the four tables into NUMA nodes,
//! distances, memory attributes and memory-side caches the way Linux and
//! hwloc present them, and [`AcpiNuma::apply`] puts them into a topology.
//! On ARM, [`discover_arm`] first builds packages, clusters, cores, PUs
//! and caches from the MADT and the PPTT, as Linux numbers them.

mod arm;
mod hmat;
mod madt;
mod numa;
mod pptt;
mod sdt;
mod slit;
mod srat;
mod tables;

pub use arm::{ArmCpu, arm_cpus, discover_arm, os_index_of_uid};
pub use hmat::{
    CacheAssociativity, CacheWritePolicy, Hmat, HmatCache, HmatDataType, HmatDomain, HmatLocality,
};
pub use madt::{MPIDR_HWID_MASK, Madt, MadtGicc, MadtProcessor};
pub use numa::{
    AcpiDistances, AcpiMemAttr, AcpiMemCache, AcpiNode, AcpiNuma, LOCAL_DISTANCE, MAX_NUMA_NODES,
    MemAttrKind, REMOTE_DISTANCE, acpi_numa,
};
pub use pptt::{
    MAX_CACHE_LEVEL, Pptt, PpttCache, PpttCacheType, PpttCpuCache, PpttProcessor, cache_flags,
    node_flags,
};
pub use sdt::{AcpiError, Checksum, SDT_HEADER_LEN, SdtHeader, Signature, parse_table};
pub use slit::Slit;
pub use srat::{Srat, SratEntry};
pub use tables::{AcpiTables, MAX_TABLE_LEN, MAX_TABLES, MAX_TOTAL_LEN, PhysicalMemory, Rsdp};

impl AcpiTables {
    /// Parses the MADT, SRAT, SLIT and HMAT present and interprets them
    /// with [`acpi_numa`].  A table that is present but invalid is an
    /// error.
    pub fn numa(&self, checksum: Checksum) -> Result<AcpiNuma, AcpiError> {
        let madt = self
            .get(Signature::MADT)
            .map(|b| Madt::parse_with(b, checksum))
            .transpose()?;
        let srat = self
            .get(Signature::SRAT)
            .map(|b| Srat::parse_with(b, checksum))
            .transpose()?;
        let slit = self
            .get(Signature::SLIT)
            .map(|b| Slit::parse_with(b, checksum))
            .transpose()?;
        let hmat = self
            .get(Signature::HMAT)
            .map(|b| Hmat::parse_with(b, checksum))
            .transpose()?;
        Ok(acpi_numa(
            madt.as_ref(),
            srat.as_ref(),
            slit.as_ref(),
            hmat.as_ref(),
        ))
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_arm;
