//! What one component run may still read, charged while reading.
//!
//! Every host function that reads on a component's behalf takes from the
//! same budget before it keeps anything (file contents, listed names,
//! matched paths, link targets), from every reading thread at once, so a
//! run stops at its limit instead of discovering it after a batch has
//! filled the host's memory.

use std::sync::atomic::{AtomicU64, Ordering};

use super::error::{BudgetKind, FileError};

/// Bytes and entries a run may still read.
#[derive(Debug)]
pub struct ReadBudget {
    bytes: AtomicU64,
    entries: AtomicU64,
}

impl ReadBudget {
    /// A budget of `bytes` bytes and `entries` entries.
    pub fn new(bytes: u64, entries: u64) -> ReadBudget {
        ReadBudget {
            bytes: AtomicU64::new(bytes),
            entries: AtomicU64::new(entries),
        }
    }

    /// No limit, for the host's own reads.
    pub fn unlimited() -> ReadBudget {
        ReadBudget::new(u64::MAX, u64::MAX)
    }

    /// Bytes left.
    pub fn bytes_left(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Whether nothing is left of either part.
    pub fn spent(&self) -> Option<BudgetKind> {
        if self.bytes.load(Ordering::Relaxed) == 0 {
            Some(BudgetKind::Bytes)
        } else if self.entries.load(Ordering::Relaxed) == 0 {
            Some(BudgetKind::Entries)
        } else {
            None
        }
    }

    fn take(counter: &AtomicU64, n: u64, kind: BudgetKind) -> Result<(), FileError> {
        // All or nothing; going over leaves the part at zero so that every
        // later request of the run is refused too.
        let r = counter.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
            Some(left.saturating_sub(n))
        });
        match r {
            Ok(left) if left >= n => Ok(()),
            _ => Err(FileError::OverBudget(kind)),
        }
    }

    /// Charges `n` bytes.
    pub fn take_bytes(&self, n: u64) -> Result<(), FileError> {
        Self::take(&self.bytes, n, BudgetKind::Bytes)
    }

    /// Charges one entry of `len` bytes (a name, a path, a link target).
    pub fn take_entry(&self, len: usize) -> Result<(), FileError> {
        Self::take(&self.entries, 1, BudgetKind::Entries)?;
        self.take_bytes(len as u64)
    }

    /// Charges one file read before reading it; the bytes are charged
    /// as they come ([`ReadBudget::take_bytes`]).
    pub fn take_file(&self) -> Result<(), FileError> {
        if let Some(kind) = self.spent() {
            return Err(FileError::OverBudget(kind));
        }
        Self::take(&self.entries, 1, BudgetKind::Entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_until_spent_then_refuses_everything() {
        let b = ReadBudget::new(10, 3);
        assert_eq!(b.take_bytes(4), Ok(()));
        assert_eq!(b.take_bytes(6), Ok(()));
        assert_eq!(b.bytes_left(), 0);
        assert_eq!(
            b.take_bytes(1),
            Err(FileError::OverBudget(BudgetKind::Bytes))
        );
        assert_eq!(b.take_file(), Err(FileError::OverBudget(BudgetKind::Bytes)));
        let b = ReadBudget::new(10, 2);
        assert_eq!(
            b.take_bytes(11),
            Err(FileError::OverBudget(BudgetKind::Bytes))
        );
        assert_eq!(b.bytes_left(), 0);
        let b = ReadBudget::new(100, 2);
        assert_eq!(b.take_entry(5), Ok(()));
        assert_eq!(b.take_file(), Ok(()));
        assert_eq!(
            b.take_entry(1),
            Err(FileError::OverBudget(BudgetKind::Entries))
        );
    }

    #[test]
    fn threads_never_take_more_than_the_budget() {
        let b = ReadBudget::new(1000, u64::MAX);
        let taken = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    while b.take_bytes(7).is_ok() {
                        taken.fetch_add(7, Ordering::Relaxed);
                    }
                });
            }
        });
        assert!(taken.load(Ordering::Relaxed) <= 1000);
        assert!(taken.load(Ordering::Relaxed) > 1000 - 7 * 4);
    }
}
