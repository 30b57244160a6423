//! SLIT: relative distances between proximity domains.

use alloc::vec::Vec;

use super::sdt::{AcpiError, Checksum, Reader, SdtHeader, Signature, parse_table};

/// Offset of the matrix.
const MATRIX: usize = 44;

/// The parsed SLIT: an N×N matrix of one-byte distances, indexed by
/// proximity domain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slit {
    /// The table header.
    pub header: SdtHeader,
    /// N, the number of localities.
    pub count: usize,
    /// Row-major distances: `matrix[i * count + j]` from domain `i` to `j`.
    /// 10 is local; 255 means unreachable.
    pub matrix: Vec<u8>,
}

impl Slit {
    /// Parses a SLIT, verifying its checksum.
    pub fn parse(bytes: &[u8]) -> Result<Slit, AcpiError> {
        Slit::parse_with(bytes, Checksum::Verify)
    }

    /// Parses a SLIT, verifying its checksum or not.
    pub fn parse_with(bytes: &[u8], checksum: Checksum) -> Result<Slit, AcpiError> {
        let (header, body) = parse_table(bytes, Some(Signature::SLIT), checksum)?;
        let r = Reader::new(Signature::SLIT, body);
        let n = r.u64(36)?;
        // The table holds 36 + 8 + N² bytes.
        let size = n
            .checked_mul(n)
            .and_then(|s| usize::try_from(s).ok())
            .filter(|&s| s <= r.len() - MATRIX.min(r.len()))
            .ok_or_else(|| {
                r.bad_length(
                    0,
                    header.length.into(),
                    "too short for the N×N matrix its locality count announces",
                )
            })?;
        let count = n as usize;
        Ok(Slit {
            header,
            count,
            matrix: r.slice(MATRIX, size)?.to_vec(),
        })
    }

    /// The distance from domain `from` to domain `to`.
    pub fn distance(&self, from: u32, to: u32) -> Option<u8> {
        let (i, j) = (from as usize, to as usize);
        if i < self.count && j < self.count {
            self.matrix.get(i * self.count + j).copied()
        } else {
            None
        }
    }

    /// Whether Linux would use the table: every local distance is 10 and
    /// every other one is larger.
    pub fn is_valid(&self) -> bool {
        (0..self.count).all(|i| {
            (0..self.count).all(|j| {
                let d = self.matrix.get(i * self.count + j).copied().unwrap_or(0);
                if i == j { d == 10 } else { d > 10 }
            })
        })
    }
}
