//! Errors, bounds-checked reading and the common System Description Table
//! header.

use core::fmt;

/// A table signature (`APIC`, `SRAT`, ...).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Signature(pub [u8; 4]);

impl Signature {
    /// `APIC`: the Multiple APIC Description Table.
    pub const MADT: Signature = Signature(*b"APIC");
    /// `SRAT`: the System Resource Affinity Table.
    pub const SRAT: Signature = Signature(*b"SRAT");
    /// `SLIT`: the System Locality Information Table.
    pub const SLIT: Signature = Signature(*b"SLIT");
    /// `HMAT`: the Heterogeneous Memory Attribute Table.
    pub const HMAT: Signature = Signature(*b"HMAT");
    /// `PPTT`: the Processor Properties Topology Table.
    pub const PPTT: Signature = Signature(*b"PPTT");
    /// `RSDT`: the Root System Description Table (32-bit pointers).
    pub const RSDT: Signature = Signature(*b"RSDT");
    /// `XSDT`: the Extended System Description Table (64-bit pointers).
    pub const XSDT: Signature = Signature(*b"XSDT");
    /// Not a table: names the Root System Description Pointer in errors.
    pub const RSDP: Signature = Signature(*b"RSDP");
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &b in &self.0 {
            if b.is_ascii_graphic() || b == b' ' {
                write!(f, "{}", b as char)?;
            } else {
                write!(f, "\\x{b:02x}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Signature({self})")
    }
}

/// Why an ACPI table was rejected.  Offsets count from the start of the
/// table (or of the RSDP).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AcpiError {
    /// A field or structure runs past the end of the table.
    Truncated {
        /// The table.
        table: Signature,
        /// Where the field or structure starts.
        offset: usize,
        /// How many bytes it needs there.
        needed: usize,
        /// How many bytes the table has.
        available: usize,
    },
    /// The table does not have the expected signature.
    BadSignature {
        /// The signature asked for.
        expected: Signature,
        /// The signature found.
        found: Signature,
    },
    /// A length field is impossible (too short for its structure, longer
    /// than the data, or absurdly large).
    BadLength {
        /// The table.
        table: Signature,
        /// Where the structure with that length starts.
        offset: usize,
        /// The length it claims.
        length: u64,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The bytes of the table do not sum to zero.
    BadChecksum {
        /// The table.
        table: Signature,
        /// The sum of its bytes, modulo 256.
        sum: u8,
    },
    /// The table revision is not one this parser understands.
    BadRevision {
        /// The table.
        table: Signature,
        /// Its revision.
        revision: u8,
    },
    /// A field holds a value the specification does not allow.
    Invalid {
        /// The table.
        table: Signature,
        /// Where the field is.
        offset: usize,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Physical memory could not be read (RSDP walking).
    Memory {
        /// The table being read.
        table: Signature,
        /// The physical address.
        address: u64,
        /// The number of bytes asked for.
        length: usize,
    },
}

impl fmt::Display for AcpiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AcpiError::Truncated {
                table,
                offset,
                needed,
                available,
            } => write!(
                f,
                "ACPI {table}: {needed} bytes needed at offset {offset:#x} but the table has only {available}"
            ),
            AcpiError::BadSignature { expected, found } => {
                write!(
                    f,
                    "ACPI table has signature {found:?}, expected {expected:?}"
                )
            }
            AcpiError::BadLength {
                table,
                offset,
                length,
                reason,
            } => write!(
                f,
                "ACPI {table}: structure at offset {offset:#x} has length {length}: {reason}"
            ),
            AcpiError::BadChecksum { table, sum } => write!(
                f,
                "ACPI {table}: checksum mismatch (bytes sum to {sum:#04x} instead of 0)"
            ),
            AcpiError::BadRevision { table, revision } => {
                write!(f, "ACPI {table}: unsupported revision {revision}")
            }
            AcpiError::Invalid {
                table,
                offset,
                reason,
            } => write!(
                f,
                "ACPI {table}: invalid field at offset {offset:#x}: {reason}"
            ),
            AcpiError::Memory {
                table,
                address,
                length,
            } => write!(
                f,
                "ACPI {table}: cannot read {length} bytes of physical memory at {address:#x}"
            ),
        }
    }
}

impl core::error::Error for AcpiError {}

/// Whether table checksums are verified.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Checksum {
    /// A table whose bytes do not sum to zero is rejected with
    /// [`AcpiError::BadChecksum`].
    #[default]
    Verify,
    /// Checksums are not looked at (some firmware gets them wrong, and
    /// tables edited by hand rarely fix them).
    Ignore,
}

/// Bounds-checked little-endian reads in one table.
#[derive(Clone, Copy)]
pub(crate) struct Reader<'a> {
    pub(crate) table: Signature,
    pub(crate) bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(table: Signature, bytes: &'a [u8]) -> Self {
        Reader { table, bytes }
    }

    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    pub(crate) fn slice(&self, offset: usize, len: usize) -> Result<&'a [u8], AcpiError> {
        offset
            .checked_add(len)
            .and_then(|end| self.bytes.get(offset..end))
            .ok_or(AcpiError::Truncated {
                table: self.table,
                offset,
                needed: len,
                available: self.bytes.len(),
            })
    }

    fn array<const N: usize>(&self, offset: usize) -> Result<[u8; N], AcpiError> {
        let s = self.slice(offset, N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    pub(crate) fn u8(&self, offset: usize) -> Result<u8, AcpiError> {
        Ok(self.array::<1>(offset)?[0])
    }

    pub(crate) fn u16(&self, offset: usize) -> Result<u16, AcpiError> {
        Ok(u16::from_le_bytes(self.array(offset)?))
    }

    pub(crate) fn u32(&self, offset: usize) -> Result<u32, AcpiError> {
        Ok(u32::from_le_bytes(self.array(offset)?))
    }

    pub(crate) fn u64(&self, offset: usize) -> Result<u64, AcpiError> {
        Ok(u64::from_le_bytes(self.array(offset)?))
    }

    pub(crate) fn bytes<const N: usize>(&self, offset: usize) -> Result<[u8; N], AcpiError> {
        self.array(offset)
    }

    pub(crate) fn invalid(&self, offset: usize, reason: &'static str) -> AcpiError {
        AcpiError::Invalid {
            table: self.table,
            offset,
            reason,
        }
    }

    pub(crate) fn bad_length(&self, offset: usize, length: u64, reason: &'static str) -> AcpiError {
        AcpiError::BadLength {
            table: self.table,
            offset,
            length,
            reason,
        }
    }

    /// A [`Reader::bad_length`] error unless the structure at `offset`,
    /// `len` bytes long, has at least `min` bytes.
    pub(crate) fn need(
        &self,
        offset: usize,
        len: usize,
        min: usize,
        reason: &'static str,
    ) -> Result<(), AcpiError> {
        if len < min {
            Err(self.bad_length(offset, len as u64, reason))
        } else {
            Ok(())
        }
    }
}

/// Size of the common SDT header.
pub const SDT_HEADER_LEN: usize = 36;

/// The header every System Description Table starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdtHeader {
    /// Table signature.
    pub signature: Signature,
    /// Length of the whole table in bytes, header included.
    pub length: u32,
    /// Table revision.
    pub revision: u8,
    /// The checksum byte (all bytes of the table sum to zero).
    pub checksum: u8,
    /// OEM id.
    pub oem_id: [u8; 6],
    /// OEM table id.
    pub oem_table_id: [u8; 8],
    /// OEM revision.
    pub oem_revision: u32,
    /// Vendor id of the tool that built the table.
    pub creator_id: u32,
    /// Revision of that tool.
    pub creator_revision: u32,
}

impl SdtHeader {
    /// Reads the header at the start of `bytes`, without looking at the
    /// rest of the table.
    pub fn parse(bytes: &[u8]) -> Result<SdtHeader, AcpiError> {
        let sig = match bytes.get(..4) {
            Some(s) => Signature([s[0], s[1], s[2], s[3]]),
            None => Signature(*b"????"),
        };
        let r = Reader::new(sig, bytes);
        Ok(SdtHeader {
            signature: sig,
            length: r.u32(4)?,
            revision: r.u8(8)?,
            checksum: r.u8(9)?,
            oem_id: r.bytes(10)?,
            oem_table_id: r.bytes(16)?,
            oem_revision: r.u32(24)?,
            creator_id: r.u32(28)?,
            creator_revision: r.u32(32)?,
        })
    }
}

/// Sum of bytes modulo 256.
pub(crate) fn byte_sum(bytes: &[u8]) -> u8 {
    bytes.iter().fold(0u8, |s, &b| s.wrapping_add(b))
}

/// Checks a whole table: header, signature (when `expected` is given),
/// length (at least the header, at most the bytes given) and checksum.
/// Returns the header and the table cut to its length (bytes past the
/// length are ignored).
pub fn parse_table(
    bytes: &[u8],
    expected: Option<Signature>,
    checksum: Checksum,
) -> Result<(SdtHeader, &[u8]), AcpiError> {
    let header = SdtHeader::parse(bytes)?;
    if let Some(e) = expected
        && header.signature != e
    {
        return Err(AcpiError::BadSignature {
            expected: e,
            found: header.signature,
        });
    }
    let table = header.signature;
    let length = header.length as usize;
    if length < SDT_HEADER_LEN {
        return Err(AcpiError::BadLength {
            table,
            offset: 0,
            length: header.length.into(),
            reason: "shorter than the 36-byte table header",
        });
    }
    let Some(body) = bytes.get(..length) else {
        return Err(AcpiError::BadLength {
            table,
            offset: 0,
            length: header.length.into(),
            reason: "longer than the data given",
        });
    };
    if checksum == Checksum::Verify {
        let sum = byte_sum(body);
        if sum != 0 {
            return Err(AcpiError::BadChecksum { table, sum });
        }
    }
    Ok((header, body))
}

/// Walks subtables laid out one after the other from `start` to the end
/// of the table, each giving its length through `len_of(reader, offset)`;
/// `min_len` is the size of the smallest valid subtable header.  Calls
/// `f(offset, length)` for each.
pub(crate) fn walk_subtables(
    r: &Reader<'_>,
    start: usize,
    min_len: usize,
    len_of: impl Fn(&Reader<'_>, usize) -> Result<u64, AcpiError>,
    mut f: impl FnMut(usize, usize) -> Result<(), AcpiError>,
) -> Result<(), AcpiError> {
    let mut off = start;
    while off < r.len() {
        // The subtable header itself must fit.
        r.slice(off, min_len)?;
        let len = len_of(r, off)?;
        if len < min_len as u64 {
            return Err(r.bad_length(off, len, "shorter than a subtable header"));
        }
        let Ok(len) = usize::try_from(len) else {
            return Err(r.bad_length(off, len, "runs past the end of the table"));
        };
        if off.checked_add(len).is_none_or(|end| end > r.len()) {
            return Err(r.bad_length(off, len as u64, "runs past the end of the table"));
        }
        f(off, len)?;
        off += len;
    }
    Ok(())
}
