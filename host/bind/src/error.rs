//! Typed errors of binding operations.

use std::fmt;
use std::io;

/// Why a binding operation failed.  Every variant names the operation
/// (for example "set the CPU binding of process 42") so that messages
/// can be shown to users as they are.
#[derive(Debug)]
#[non_exhaustive]
pub enum BindError {
    /// The topology was loaded from a file or description and was not
    /// declared to be the system we run on (`--thissystem`,
    /// `WLOC_THISSYSTEM`/`HWLOC_THISSYSTEM`).
    NotThisSystem {
        /// The operation attempted.
        op: String,
    },
    /// Flags that conflict or that the operation does not take; checked
    /// before any system call.
    BadFlags {
        /// The operation attempted.
        op: String,
        /// What is wrong with the flags.
        reason: &'static str,
    },
    /// The set is empty, names PUs or NUMA nodes that the topology does
    /// not have, or was refused by the kernel.
    InvalidSet {
        /// The operation attempted.
        op: String,
        /// What is wrong with the set.
        reason: String,
    },
    /// The operating system or this kernel lacks the feature.
    Unsupported {
        /// The operation attempted.
        op: String,
        /// What is missing.
        reason: String,
    },
    /// The caller may not act on that process, thread or memory.
    Permission {
        /// The operation attempted.
        op: String,
    },
    /// The process or thread does not exist.
    NoSuchTask {
        /// The operation attempted.
        op: String,
        /// The process or thread id.
        id: i32,
    },
    /// The pages or threads examined are bound differently, and a single
    /// answer was requested with the strict flag.
    Mixed {
        /// The operation attempted.
        op: String,
    },
    /// Another system error.
    Io {
        /// The operation attempted.
        op: String,
        /// The error reported by the system.
        source: io::Error,
    },
}

impl BindError {
    /// The operation that failed, in words.
    pub fn operation(&self) -> &str {
        match self {
            BindError::NotThisSystem { op }
            | BindError::BadFlags { op, .. }
            | BindError::InvalidSet { op, .. }
            | BindError::Unsupported { op, .. }
            | BindError::Permission { op }
            | BindError::NoSuchTask { op, .. }
            | BindError::Mixed { op }
            | BindError::Io { op, .. } => op,
        }
    }

    /// Classifies an error returned by a system call.
    pub(crate) fn from_os(op: impl Into<String>, err: io::Error, id: Option<i32>) -> Self {
        let op = op.into();
        match err.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) => BindError::Permission { op },
            Some(libc::ESRCH) => BindError::NoSuchTask {
                op,
                id: id.unwrap_or(0),
            },
            Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP) => BindError::Unsupported {
                op,
                reason: "the kernel does not implement it".into(),
            },
            _ => BindError::Io { op, source: err },
        }
    }
}

impl fmt::Display for BindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BindError::NotThisSystem { op } => write!(
                f,
                "cannot {op}: the topology does not describe this system \
                 (use --thissystem or WLOC_THISSYSTEM=1 if it does)"
            ),
            BindError::BadFlags { op, reason } => write!(f, "cannot {op}: invalid flags: {reason}"),
            BindError::InvalidSet { op, reason } => write!(f, "cannot {op}: invalid set: {reason}"),
            BindError::Unsupported { op, reason } => {
                write!(f, "cannot {op}: unsupported: {reason}")
            }
            BindError::Permission { op } => write!(f, "cannot {op}: permission denied"),
            BindError::NoSuchTask { op, id } => {
                write!(f, "cannot {op}: no process or thread with id {id}")
            }
            BindError::Mixed { op } => write!(
                f,
                "cannot {op}: the binding differs between the pages or threads examined"
            ),
            BindError::Io { op, source } => write!(f, "cannot {op}: {source}"),
        }
    }
}

impl std::error::Error for BindError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BindError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_is_classified() {
        let e = BindError::from_os("x", io::Error::from_raw_os_error(libc::EPERM), None);
        assert!(matches!(e, BindError::Permission { .. }));
        let e = BindError::from_os("x", io::Error::from_raw_os_error(libc::ESRCH), Some(7));
        assert!(matches!(e, BindError::NoSuchTask { id: 7, .. }));
        let e = BindError::from_os("x", io::Error::from_raw_os_error(libc::ENOSYS), None);
        assert!(matches!(e, BindError::Unsupported { .. }));
        let e = BindError::from_os("x", io::Error::from_raw_os_error(libc::EIO), None);
        assert!(matches!(e, BindError::Io { .. }));
    }

    #[test]
    fn messages_name_the_operation() {
        let e = BindError::NoSuchTask {
            op: "set the CPU binding of process 5".into(),
            id: 5,
        };
        assert_eq!(
            e.to_string(),
            "cannot set the CPU binding of process 5: no process or thread with id 5"
        );
        assert_eq!(e.operation(), "set the CPU binding of process 5");
    }
}
