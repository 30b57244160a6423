//! HMAT: memory attributes (latency, bandwidth) between initiator and
//! memory proximity domains, and memory-side caches.

use alloc::vec::Vec;

use super::sdt::{AcpiError, Checksum, Reader, SdtHeader, Signature, parse_table, walk_subtables};

/// Offset of the first structure.
const ENTRIES: usize = 40;

/// Memory Proximity Domain Attributes (type 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HmatDomain {
    /// Raw flags.  Bit 0: `initiator_domain` is valid (revision 1:
    /// processor domain valid; bit 1 memory domain valid).
    pub flags: u16,
    /// The initiator domain attached to the memory (processor domain in
    /// revision 1).
    pub initiator_domain: u32,
    /// The memory domain.
    pub memory_domain: u32,
    /// Revision 1 only: base and length of the address range.
    pub range: Option<(u64, u64)>,
}

impl HmatDomain {
    /// Whether `initiator_domain` is meaningful.
    pub fn has_initiator(&self) -> bool {
        self.flags & 1 != 0
    }
}

/// What a locality structure measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HmatDataType {
    /// Access (read and write) latency.
    AccessLatency,
    /// Read latency.
    ReadLatency,
    /// Write latency.
    WriteLatency,
    /// Access (read and write) bandwidth.
    AccessBandwidth,
    /// Read bandwidth.
    ReadBandwidth,
    /// Write bandwidth.
    WriteBandwidth,
}

impl HmatDataType {
    /// From the table's code (0 to 5).
    pub fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            0 => HmatDataType::AccessLatency,
            1 => HmatDataType::ReadLatency,
            2 => HmatDataType::WriteLatency,
            3 => HmatDataType::AccessBandwidth,
            4 => HmatDataType::ReadBandwidth,
            5 => HmatDataType::WriteBandwidth,
            _ => return None,
        })
    }

    /// Whether it is a latency (lower is better).
    pub fn is_latency(self) -> bool {
        matches!(
            self,
            HmatDataType::AccessLatency | HmatDataType::ReadLatency | HmatDataType::WriteLatency
        )
    }

    /// Whether it applies to reads.
    pub fn covers_read(self) -> bool {
        !matches!(
            self,
            HmatDataType::WriteLatency | HmatDataType::WriteBandwidth
        )
    }

    /// Whether it applies to writes.
    pub fn covers_write(self) -> bool {
        !matches!(
            self,
            HmatDataType::ReadLatency | HmatDataType::ReadBandwidth
        )
    }
}

/// System Locality Latency and Bandwidth Information (type 1): a matrix
/// from initiator domains to target (memory) domains.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HmatLocality {
    /// Flags bits 0-3: 0 for the memory itself, 1 to 3 for the memory-side
    /// cache of that level.
    pub memory_hierarchy: u8,
    /// Raw flags byte.
    pub flags: u8,
    /// What the values measure.
    pub data_type: HmatDataType,
    /// Minimum transfer size (revision 2, ACPI 6.4).
    pub min_transfer_size: u8,
    /// Multiply entries by this: picoseconds for latencies and MB/s for
    /// bandwidths (revision 2).
    pub entry_base_unit: u64,
    /// Initiator domains (matrix rows).
    pub initiators: Vec<u32>,
    /// Target domains (matrix columns).
    pub targets: Vec<u32>,
    /// Row-major entries; 0 and 0xffff mean "no information".
    pub entries: Vec<u16>,
}

impl HmatLocality {
    /// The raw entry from an initiator domain to a target domain.
    pub fn entry(&self, initiator: u32, target: u32) -> Option<u16> {
        let i = self.initiators.iter().position(|&d| d == initiator)?;
        let t = self.targets.iter().position(|&d| d == target)?;
        self.entries.get(i * self.targets.len() + t).copied()
    }
}

/// How a memory-side cache is indexed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheAssociativity {
    /// None given (0) or a reserved value.
    Other(u8),
    /// Direct mapped (1).
    DirectMapped,
    /// Complex cache indexing (2).
    ComplexIndexing,
}

/// Write policy of a memory-side cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheWritePolicy {
    /// None given (0) or a reserved value.
    Other(u8),
    /// Write-back (1).
    WriteBack,
    /// Write-through (2).
    WriteThrough,
}

/// Memory Side Cache Information (type 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HmatCache {
    /// The memory domain the cache sits in front of.
    pub memory_domain: u32,
    /// Size in bytes.
    pub size: u64,
    /// Number of cache levels in front of this domain (attributes bits 0-3).
    pub total_levels: u8,
    /// Level of this cache, 1 nearest the memory (bits 4-7).
    pub level: u8,
    /// Associativity (bits 8-11).
    pub associativity: CacheAssociativity,
    /// Write policy (bits 12-15).
    pub write_policy: CacheWritePolicy,
    /// Line size in bytes (bits 16-31).
    pub line_size: u16,
    /// Address mode (ACPI 6.5; 0 reserved, 1 extended-linear).
    pub address_mode: u16,
    /// SMBIOS handles of the memory devices making up the cache.
    pub smbios_handles: Vec<u16>,
}

/// The parsed HMAT.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hmat {
    /// The table header (revision 1 is ACPI 6.2, 2 is ACPI 6.3 and later).
    pub header: SdtHeader,
    /// Memory proximity domain attributes, in table order.
    pub domains: Vec<HmatDomain>,
    /// Latency and bandwidth matrices, in table order.
    pub localities: Vec<HmatLocality>,
    /// Memory-side caches, in table order.
    pub caches: Vec<HmatCache>,
}

impl Hmat {
    /// Parses a HMAT, verifying its checksum.
    pub fn parse(bytes: &[u8]) -> Result<Hmat, AcpiError> {
        Hmat::parse_with(bytes, Checksum::Verify)
    }

    /// Parses a HMAT, verifying its checksum or not.
    pub fn parse_with(bytes: &[u8], checksum: Checksum) -> Result<Hmat, AcpiError> {
        let (header, body) = parse_table(bytes, Some(Signature::HMAT), checksum)?;
        if !matches!(header.revision, 1 | 2) {
            return Err(AcpiError::BadRevision {
                table: Signature::HMAT,
                revision: header.revision,
            });
        }
        let r = Reader::new(Signature::HMAT, body);
        r.slice(36, ENTRIES - 36)?;
        let mut hmat = Hmat {
            header,
            domains: Vec::new(),
            localities: Vec::new(),
            caches: Vec::new(),
        };
        walk_subtables(
            &r,
            ENTRIES,
            8,
            |r, off| Ok(r.u32(off + 4)?.into()),
            |off, len| {
                match r.u16(off)? {
                    0 => hmat
                        .domains
                        .push(parse_domain(&r, off, len, header.revision)?),
                    1 => hmat.localities.push(parse_locality(&r, off, len)?),
                    2 => hmat.caches.push(parse_cache(&r, off, len)?),
                    _ => {}
                }
                Ok(())
            },
        )?;
        Ok(hmat)
    }
}

fn parse_domain(r: &Reader<'_>, off: usize, len: usize, rev: u8) -> Result<HmatDomain, AcpiError> {
    r.need(
        off,
        len,
        40,
        "a memory proximity domain structure needs 40 bytes",
    )?;
    Ok(HmatDomain {
        flags: r.u16(off + 8)?,
        initiator_domain: r.u32(off + 12)?,
        memory_domain: r.u32(off + 16)?,
        range: if rev == 1 {
            Some((r.u64(off + 24)?, r.u64(off + 32)?))
        } else {
            None
        },
    })
}

fn parse_locality(r: &Reader<'_>, off: usize, len: usize) -> Result<HmatLocality, AcpiError> {
    r.need(off, len, 32, "a locality structure needs at least 32 bytes")?;
    let flags = r.u8(off + 8)?;
    let code = r.u8(off + 9)?;
    let data_type = HmatDataType::from_code(code)
        .ok_or_else(|| r.invalid(off + 9, "unknown locality data type"))?;
    let m = r.u32(off + 12)? as u64;
    let n = r.u32(off + 16)? as u64;
    // 32 bytes of header, then m + n domains (4 bytes each) and m×n
    // entries (2 bytes each).  In u128 nothing overflows.
    let needed = 32 + 4 * (u128::from(m) + u128::from(n)) + 2 * u128::from(m) * u128::from(n);
    if needed > len as u128 {
        return Err(r.bad_length(
            off,
            len as u64,
            "too short for the initiator and target lists and the entry matrix",
        ));
    }
    // All counts fit in the table now, so they fit in usize.
    let (m, n) = (m as usize, n as usize);
    let list = |at: usize, count: usize| -> Result<Vec<u32>, AcpiError> {
        let bytes = r.slice(at, count * 4)?;
        Ok(bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    };
    let initiators = list(off + 32, m)?;
    let targets = list(off + 32 + 4 * m, n)?;
    let entries = r
        .slice(off + 32 + 4 * (m + n), 2 * m * n)?
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    Ok(HmatLocality {
        memory_hierarchy: flags & 0xf,
        flags,
        data_type,
        min_transfer_size: r.u8(off + 10)?,
        entry_base_unit: r.u64(off + 24)?,
        initiators,
        targets,
        entries,
    })
}

fn parse_cache(r: &Reader<'_>, off: usize, len: usize) -> Result<HmatCache, AcpiError> {
    r.need(
        off,
        len,
        32,
        "a memory-side cache structure needs at least 32 bytes",
    )?;
    let attrs = r.u32(off + 24)?;
    let handles = usize::from(r.u16(off + 30)?);
    if 32 + 2 * handles > len {
        return Err(r.bad_length(off, len as u64, "too short for its SMBIOS handles"));
    }
    let field = |shift: u32| ((attrs >> shift) & 0xf) as u8;
    Ok(HmatCache {
        memory_domain: r.u32(off + 8)?,
        size: r.u64(off + 16)?,
        total_levels: field(0),
        level: field(4),
        associativity: match field(8) {
            1 => CacheAssociativity::DirectMapped,
            2 => CacheAssociativity::ComplexIndexing,
            v => CacheAssociativity::Other(v),
        },
        write_policy: match field(12) {
            1 => CacheWritePolicy::WriteBack,
            2 => CacheWritePolicy::WriteThrough,
            v => CacheWritePolicy::Other(v),
        },
        line_size: (attrs >> 16) as u16,
        address_mode: r.u16(off + 28)?,
        smbios_handles: r
            .slice(off + 32, 2 * handles)?
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect(),
    })
}
