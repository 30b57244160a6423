//! Errors of location parsing and evaluation.

use core::fmt;

/// Why a location word could not be evaluated.  Every variant names the
/// word (or the part of it) that was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LocationError {
    /// Neither a known object type, nor a depth, nor a cpuset string.
    Unrecognized(String),
    /// The type or depth names no level of this topology.
    NoSuchLevel(String),
    /// The type exists at several depths (Groups, caches of several kinds).
    MultipleLevels(String),
    /// A numeric depth outside the topology.
    InvalidDepth(String),
    /// The index range after the colon cannot be parsed.
    BadRange {
        /// The whole word.
        word: String,
        /// What is wrong with the range.
        reason: String,
    },
    /// A hierarchical location (`a:1.b:2`) with a part that is not `type:range`
    /// or whose type has no CPU set.
    BadHierarchy(String),
    /// No object of the topology matches an index of the range.
    NoSuchObject(String),
    /// No PCI device has this bus id.
    NoSuchPciDevice(String),
    /// No OS device has this name.
    NoSuchOsDevice(String),
    /// No Misc object has this name.
    NoSuchMisc(String),
    /// A `[vendor:device]` filter that cannot be parsed.
    BadFilter(String),
    /// A cpuset string that does not parse in the form it was read as.
    BadSet {
        /// The word.
        word: String,
        /// Why it was refused.
        reason: String,
    },
}

impl LocationError {
    /// The location word, or the part of it, that was wrong.
    pub fn word(&self) -> &str {
        match self {
            LocationError::Unrecognized(w)
            | LocationError::NoSuchLevel(w)
            | LocationError::MultipleLevels(w)
            | LocationError::InvalidDepth(w)
            | LocationError::BadHierarchy(w)
            | LocationError::NoSuchObject(w)
            | LocationError::NoSuchPciDevice(w)
            | LocationError::NoSuchOsDevice(w)
            | LocationError::NoSuchMisc(w)
            | LocationError::BadFilter(w) => w,
            LocationError::BadRange { word, .. } | LocationError::BadSet { word, .. } => word,
        }
    }
}

impl fmt::Display for LocationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LocationError::Unrecognized(w) => write!(f, "unrecognized location `{w}'"),
            LocationError::NoSuchLevel(w) => {
                write!(f, "could not find level specified by location {w}")
            }
            LocationError::MultipleLevels(w) => write!(f, "found multiple levels for location {w}"),
            LocationError::InvalidDepth(w) => write!(f, "invalid depth in location {w}"),
            LocationError::BadRange { word, reason } => {
                write!(f, "invalid index range in location {word}: {reason}")
            }
            LocationError::BadHierarchy(w) => write!(
                f,
                "invalid hierarchical location {w}: each part must be TYPE:RANGE of a normal or NUMA type"
            ),
            LocationError::NoSuchObject(w) => {
                write!(f, "no object matches the index range of location {w}")
            }
            LocationError::NoSuchPciDevice(w) => write!(f, "invalid PCI device {w}"),
            LocationError::NoSuchOsDevice(w) => write!(f, "invalid OS device {w}"),
            LocationError::NoSuchMisc(w) => write!(f, "invalid Misc object {w}"),
            LocationError::BadFilter(w) => {
                write!(f, "invalid PCI vendor:device matching specification {w}")
            }
            LocationError::BadSet { word, reason } => {
                write!(f, "invalid cpuset string `{word}': {reason}")
            }
        }
    }
}

impl std::error::Error for LocationError {}
