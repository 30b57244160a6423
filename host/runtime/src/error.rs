//! Why the host refuses what a component returned: the typed errors of
//! the record checks ([`crate::convert`], [`crate::annotate`],
//! [`crate::fabric`]).
//!
//! Their text is what users see after "returned invalid data: " (and
//! what tests look for), so each variant's message is the one the checks
//! always gave.

use std::time::Duration;

/// Why a record (a discovery record, annotations or fabric subnets) was
/// refused.  Each message names the part of the record and the rule it
/// broke.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// Checking and building the record took longer than the run's
    /// deadline: no record makes the host work longer than a component may.
    #[error(
        "checking and building the record took longer than the run's deadline ({} ms)",
        .0.as_millis()
    )]
    Deadline(Duration),
    /// A part of the record has more entries than the limits allow.
    #[error("{count} {what} returned (at most {max})")]
    TooMany {
        /// What there are too many of (`objects`, `infos`, ...).
        what: String,
        /// How many the record has.
        count: usize,
        /// How many are allowed.
        max: usize,
    },
    /// A reference to an object (by gp index) that the topology lacks.
    #[error("{what}: no object has gp index {gp}")]
    NoObject {
        /// The part of the record holding the reference.
        what: String,
        /// The gp index it gave.
        gp: u64,
    },
    /// A string that must not be empty is.
    #[error("{what} is empty")]
    EmptyText {
        /// The string (`info 3: name`, ...).
        what: String,
    },
    /// A string is longer than allowed.
    #[error("{what} is {len} bytes long (at most {max})")]
    LongText {
        /// The string.
        what: String,
        /// Its length in bytes.
        len: usize,
        /// The longest allowed.
        max: usize,
    },
    /// A string holds a control character (it would reach terminals and
    /// XML files).
    #[error("{what} holds the control character {found:?}")]
    ControlCharacter {
        /// The string.
        what: String,
        /// The first control character in it.
        found: char,
    },
    /// Any other rule of the record, named in the message.
    #[error("{0}")]
    Invalid(String),
}

/// A [`RecordError::Invalid`] with a formatted message.
macro_rules! invalid {
    ($($arg:tt)*) => {
        $crate::error::RecordError::Invalid(format!($($arg)*))
    };
}
pub(crate) use invalid;

/// Why a topology cannot be shown to an annotation component through the
/// `topology` import.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyViewError {
    /// An object's gp index is beyond the import's 32-bit object ids.
    #[error("gp index {0} does not fit an object id")]
    GpIndex(u64),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages are the ones users and the end-to-end tests see.
    #[test]
    fn messages_are_unchanged() {
        assert_eq!(
            RecordError::Deadline(Duration::from_millis(1500)).to_string(),
            "checking and building the record took longer than the run's deadline (1500 ms)"
        );
        let many = RecordError::TooMany {
            what: "objects".into(),
            count: 7,
            max: 3,
        };
        assert_eq!(many.to_string(), "7 objects returned (at most 3)");
        let gp = RecordError::NoObject {
            what: "info 2".into(),
            gp: 9,
        };
        assert_eq!(gp.to_string(), "info 2: no object has gp index 9");
        let long = RecordError::LongText {
            what: "info 0: name".into(),
            len: 5,
            max: 4,
        };
        assert_eq!(long.to_string(), "info 0: name is 5 bytes long (at most 4)");
        let ctl = RecordError::ControlCharacter {
            what: "property 1: unit".into(),
            found: '\u{1b}',
        };
        assert_eq!(
            ctl.to_string(),
            "property 1: unit holds the control character '\\u{1b}'"
        );
        assert_eq!(invalid!("a {} c", "b").to_string(), "a b c");
        assert_eq!(
            TopologyViewError::GpIndex(1 << 40).to_string(),
            "gp index 1099511627776 does not fit an object id"
        );
    }
}
