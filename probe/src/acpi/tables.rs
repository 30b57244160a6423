//! Finding tables: walking the RSDP and the RSDT/XSDT through physical
//! memory (firmware), or looking tables up by signature among files
//! (`/sys/firmware/acpi/tables`).

use alloc::vec;
use alloc::vec::Vec;

use super::sdt::{
    AcpiError, Checksum, Reader, SDT_HEADER_LEN, SdtHeader, Signature, byte_sum, parse_table,
};

/// Largest table read through physical memory (the biggest real tables,
/// DSDTs of large servers, are a few hundred KiB).
pub const MAX_TABLE_LEN: u32 = 16 << 20;

/// Largest number of tables an RSDT/XSDT may list.
pub const MAX_TABLES: usize = 4096;

/// Most bytes read for all tables together through physical memory.
pub const MAX_TOTAL_LEN: usize = 64 << 20;

/// Reads physical memory, for walking tables from the RSDP.  A UEFI
/// application implements it over identity-mapped memory.
pub trait PhysicalMemory {
    /// Copies `buf.len()` bytes at physical `address` into `buf`; returns
    /// false when that memory cannot be read.
    fn read(&self, address: u64, buf: &mut [u8]) -> bool;
}

impl<T: PhysicalMemory + ?Sized> PhysicalMemory for &T {
    fn read(&self, address: u64, buf: &mut [u8]) -> bool {
        (**self).read(address, buf)
    }
}

/// The Root System Description Pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rsdp {
    /// OEM id.
    pub oem_id: [u8; 6],
    /// 0 for ACPI 1.0, 2 from ACPI 2.0 on.
    pub revision: u8,
    /// Physical address of the RSDT.
    pub rsdt_address: u32,
    /// Length of the structure (revision 2: at least 36).
    pub length: u32,
    /// Physical address of the XSDT (revision 2), 0 if none.
    pub xsdt_address: u64,
}

impl Rsdp {
    /// Size of a revision-0 RSDP.
    pub const V1_LEN: usize = 20;
    /// Size of a revision-2 RSDP.
    pub const V2_LEN: usize = 36;

    /// Parses an RSDP from its bytes (20 for revision 0, `length` for
    /// later revisions).
    pub fn parse(bytes: &[u8], checksum: Checksum) -> Result<Rsdp, AcpiError> {
        let r = Reader::new(Signature::RSDP, bytes);
        if r.slice(0, 8)? != b"RSD PTR " {
            let s = r.slice(0, 4)?;
            return Err(AcpiError::BadSignature {
                expected: Signature::RSDP,
                found: Signature([s[0], s[1], s[2], s[3]]),
            });
        }
        let v1 = r.slice(0, Self::V1_LEN)?;
        if checksum == Checksum::Verify && byte_sum(v1) != 0 {
            return Err(AcpiError::BadChecksum {
                table: Signature::RSDP,
                sum: byte_sum(v1),
            });
        }
        let mut rsdp = Rsdp {
            oem_id: r.bytes(9)?,
            revision: r.u8(15)?,
            rsdt_address: r.u32(16)?,
            length: Self::V1_LEN as u32,
            xsdt_address: 0,
        };
        if rsdp.revision >= 2 {
            let length = r.u32(20)?;
            if (length as usize) < Self::V2_LEN || length > 4096 {
                return Err(r.bad_length(0, length.into(), "an ACPI 2.0 RSDP has 36 bytes"));
            }
            let all = r.slice(0, length as usize)?;
            if checksum == Checksum::Verify && byte_sum(all) != 0 {
                return Err(AcpiError::BadChecksum {
                    table: Signature::RSDP,
                    sum: byte_sum(all),
                });
            }
            rsdp.length = length;
            rsdp.xsdt_address = r.u64(24)?;
        }
        Ok(rsdp)
    }
}

/// A set of ACPI tables, each kept as its bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AcpiTables {
    tables: Vec<(Signature, Vec<u8>)>,
    /// Tables listed by the RSDT/XSDT that could not be read or were
    /// rejected (bad length or checksum), with the reason.
    pub skipped: Vec<AcpiError>,
}

impl AcpiTables {
    /// No tables.
    pub fn new() -> Self {
        AcpiTables::default()
    }

    /// Adds a table (such as the contents of a file of
    /// `/sys/firmware/acpi/tables`).  Its header must be complete; the
    /// rest is checked when the table is parsed.  Returns its signature.
    pub fn insert(&mut self, bytes: Vec<u8>) -> Result<Signature, AcpiError> {
        let h = SdtHeader::parse(&bytes)?;
        self.tables.push((h.signature, bytes));
        Ok(h.signature)
    }

    /// The first table with this signature.
    pub fn get(&self, signature: Signature) -> Option<&[u8]> {
        self.all(signature).next()
    }

    /// All tables with this signature (SSDTs come several at a time).
    pub fn all(&self, signature: Signature) -> impl Iterator<Item = &[u8]> + '_ {
        self.tables
            .iter()
            .filter(move |(s, _)| *s == signature)
            .map(|(_, b)| b.as_slice())
    }

    /// Signatures of the tables held, in insertion order.
    pub fn signatures(&self) -> impl Iterator<Item = Signature> + '_ {
        self.tables.iter().map(|(s, _)| *s)
    }

    /// Reads every table the XSDT (or, before ACPI 2.0 or when there is
    /// no XSDT, the RSDT) lists, starting from the RSDP at `rsdp_address`.
    ///
    /// The RSDP and the root table must be readable and valid; a listed
    /// table that is not is recorded in [`skipped`](Self::skipped).
    pub fn from_rsdp(
        mem: &dyn PhysicalMemory,
        rsdp_address: u64,
        checksum: Checksum,
    ) -> Result<AcpiTables, AcpiError> {
        let mut head = [0u8; Rsdp::V2_LEN];
        let read_rsdp = |buf: &mut [u8]| {
            if mem.read(rsdp_address, buf) {
                Ok(())
            } else {
                Err(AcpiError::Memory {
                    table: Signature::RSDP,
                    address: rsdp_address,
                    length: buf.len(),
                })
            }
        };
        read_rsdp(&mut head[..Rsdp::V1_LEN])?;
        if &head[..8] != b"RSD PTR " {
            return Err(AcpiError::BadSignature {
                expected: Signature::RSDP,
                found: Signature([head[0], head[1], head[2], head[3]]),
            });
        }
        let rsdp = if head[15] >= 2 {
            read_rsdp(&mut head)?;
            let len = u32::from_le_bytes([head[20], head[21], head[22], head[23]]);
            let mut full = vec![0u8; (len as usize).clamp(Rsdp::V2_LEN, 4096)];
            read_rsdp(&mut full)?;
            Rsdp::parse(&full, checksum)?
        } else {
            Rsdp::parse(&head[..Rsdp::V1_LEN], checksum)?
        };
        let (root_sig, root_addr, width) = if rsdp.revision >= 2 && rsdp.xsdt_address != 0 {
            (Signature::XSDT, rsdp.xsdt_address, 8)
        } else {
            (Signature::RSDT, u64::from(rsdp.rsdt_address), 4)
        };
        let root = read_table(mem, root_addr, root_sig)?;
        let (_, root) = parse_table(&root, Some(root_sig), checksum)?;
        let entries = &root[SDT_HEADER_LEN..];
        let mut tables = AcpiTables::new();
        let mut total = 0usize;
        for chunk in entries.chunks_exact(width).take(MAX_TABLES) {
            let addr = if width == 8 {
                u64::from_le_bytes([
                    chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7],
                ])
            } else {
                u64::from(u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]))
            };
            if addr == 0 {
                continue;
            }
            let bytes = match read_table(mem, addr, Signature(*b"????")) {
                Ok(b) => b,
                Err(e) => {
                    tables.skipped.push(e);
                    continue;
                }
            };
            total = total.saturating_add(bytes.len());
            if total > MAX_TOTAL_LEN {
                tables.skipped.push(AcpiError::BadLength {
                    table: Signature(
                        bytes
                            .get(..4)
                            .and_then(|s| s.try_into().ok())
                            .unwrap_or(*b"????"),
                    ),
                    offset: 0,
                    length: bytes.len() as u64,
                    reason: "the tables read so far exceed MAX_TOTAL_LEN",
                });
                break;
            }
            match parse_table(&bytes, None, checksum) {
                Ok((h, _)) => tables.tables.push((h.signature, bytes)),
                Err(e) => tables.skipped.push(e),
            }
        }
        Ok(tables)
    }
}

/// Reads a whole table at a physical address: its header first, then as
/// many bytes as the header's length says (at most [`MAX_TABLE_LEN`]).
fn read_table(
    mem: &dyn PhysicalMemory,
    address: u64,
    what: Signature,
) -> Result<Vec<u8>, AcpiError> {
    let mut head = [0u8; SDT_HEADER_LEN];
    if !mem.read(address, &mut head) {
        return Err(AcpiError::Memory {
            table: what,
            address,
            length: SDT_HEADER_LEN,
        });
    }
    let h = SdtHeader::parse(&head)?;
    if h.length < SDT_HEADER_LEN as u32 || h.length > MAX_TABLE_LEN {
        return Err(AcpiError::BadLength {
            table: h.signature,
            offset: 0,
            length: h.length.into(),
            reason: "not a plausible table length",
        });
    }
    let mut bytes = vec![0u8; h.length as usize];
    if !mem.read(address, &mut bytes) {
        return Err(AcpiError::Memory {
            table: h.signature,
            address,
            length: bytes.len(),
        });
    }
    Ok(bytes)
}
