//! SRAT: which proximity domain each processor, memory range and generic
//! initiator belongs to.

use alloc::vec::Vec;

use super::sdt::{AcpiError, Checksum, Reader, SdtHeader, Signature, parse_table, walk_subtables};

/// Offset of the first affinity structure.
const ENTRIES: usize = 48;

/// One enabled affinity structure of the SRAT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SratEntry {
    /// A processor, by local APIC id (type 0) or x2APIC id (type 2).
    Processor {
        /// Its proximity domain.
        domain: u32,
        /// Its APIC id.
        apic_id: u32,
        /// Whether it came from an x2APIC affinity structure.
        x2apic: bool,
        /// Its clock domain.
        clock_domain: u32,
    },
    /// An ARM processor, by ACPI processor UID (GICC affinity, type 3).
    Gicc {
        /// Its proximity domain.
        domain: u32,
        /// Its ACPI processor UID (as in the MADT's GICC structure).
        uid: u32,
        /// Its clock domain.
        clock_domain: u32,
    },
    /// A range of physical memory (type 1).
    Memory {
        /// Its proximity domain.
        domain: u32,
        /// First physical address.
        base: u64,
        /// Length in bytes.
        length: u64,
        /// Flags bit 1: the range may be hot-plugged (it need not be
        /// populated now).
        hot_pluggable: bool,
        /// Flags bit 2: the range is non-volatile memory.
        non_volatile: bool,
    },
    /// A generic initiator: a device that accesses memory, such as an
    /// accelerator (type 5).
    GenericInitiator {
        /// Its proximity domain.
        domain: u32,
        /// Device handle type: 0 ACPI, 1 PCI.
        handle_type: u8,
        /// The device handle.
        handle: [u8; 16],
    },
}

impl SratEntry {
    /// The proximity domain of the entry.
    pub fn domain(&self) -> u32 {
        match *self {
            SratEntry::Processor { domain, .. }
            | SratEntry::Gicc { domain, .. }
            | SratEntry::Memory { domain, .. }
            | SratEntry::GenericInitiator { domain, .. } => domain,
        }
    }
}

/// The parsed SRAT.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Srat {
    /// The table header.
    pub header: SdtHeader,
    /// Enabled entries, in table order.
    pub entries: Vec<SratEntry>,
    /// Number of entries skipped because they are not enabled (QEMU ends
    /// its SRAT with such a zero-length memory entry).
    pub disabled: usize,
}

impl Srat {
    /// Parses a SRAT, verifying its checksum.
    pub fn parse(bytes: &[u8]) -> Result<Srat, AcpiError> {
        Srat::parse_with(bytes, Checksum::Verify)
    }

    /// Parses a SRAT, verifying its checksum or not.
    pub fn parse_with(bytes: &[u8], checksum: Checksum) -> Result<Srat, AcpiError> {
        let (header, body) = parse_table(bytes, Some(Signature::SRAT), checksum)?;
        let r = Reader::new(Signature::SRAT, body);
        // Reserved fields (the first must be 1 for backward compatibility,
        // which firmware does not always honour: not checked).
        r.slice(36, ENTRIES - 36)?;
        // Revision 1 tables only have 8-bit proximity domains.
        let wide = header.revision >= 2;
        let mut entries = Vec::new();
        let mut disabled = 0;
        walk_subtables(
            &r,
            ENTRIES,
            2,
            |r, off| Ok(r.u8(off + 1)?.into()),
            |off, len| {
                let need = |n: usize, what: &'static str| r.need(off, len, n, what);
                let (enabled, entry) = match r.u8(off)? {
                    0 => {
                        need(16, "a processor affinity entry needs 16 bytes")?;
                        // Bits 0-7 of the domain are at offset 2, bits
                        // 8-31 at offsets 9-11.
                        let mut domain = u32::from(r.u8(off + 2)?);
                        if wide {
                            let hi: [u8; 3] = r.bytes(off + 9)?;
                            domain |= u32::from_le_bytes([0, hi[0], hi[1], hi[2]]);
                        }
                        (
                            r.u32(off + 4)? & 1 != 0,
                            SratEntry::Processor {
                                domain,
                                apic_id: r.u8(off + 3)?.into(),
                                x2apic: false,
                                clock_domain: r.u32(off + 12)?,
                            },
                        )
                    }
                    1 => {
                        need(40, "a memory affinity entry needs 40 bytes")?;
                        let mut domain = r.u32(off + 2)?;
                        if !wide {
                            domain &= 0xff;
                        }
                        let flags = r.u32(off + 28)?;
                        (
                            flags & 1 != 0,
                            SratEntry::Memory {
                                domain,
                                base: r.u64(off + 8)?,
                                length: r.u64(off + 16)?,
                                hot_pluggable: flags & 2 != 0,
                                non_volatile: flags & 4 != 0,
                            },
                        )
                    }
                    2 => {
                        need(24, "an x2APIC affinity entry needs 24 bytes")?;
                        (
                            r.u32(off + 12)? & 1 != 0,
                            SratEntry::Processor {
                                domain: r.u32(off + 4)?,
                                apic_id: r.u32(off + 8)?,
                                x2apic: true,
                                clock_domain: r.u32(off + 16)?,
                            },
                        )
                    }
                    3 => {
                        need(18, "a GICC affinity entry needs 18 bytes")?;
                        (
                            r.u32(off + 10)? & 1 != 0,
                            SratEntry::Gicc {
                                domain: r.u32(off + 2)?,
                                uid: r.u32(off + 6)?,
                                clock_domain: r.u32(off + 14)?,
                            },
                        )
                    }
                    5 => {
                        need(32, "a generic initiator affinity entry needs 32 bytes")?;
                        (
                            r.u32(off + 24)? & 1 != 0,
                            SratEntry::GenericInitiator {
                                domain: r.u32(off + 4)?,
                                handle_type: r.u8(off + 3)?,
                                handle: r.bytes(off + 8)?,
                            },
                        )
                    }
                    // GIC ITS (4), generic port (6), RINTC (7), ...
                    _ => return Ok(()),
                };
                if enabled {
                    entries.push(entry);
                } else {
                    disabled += 1;
                }
                Ok(())
            },
        )?;
        Ok(Srat {
            header,
            entries,
            disabled,
        })
    }
}
