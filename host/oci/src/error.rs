//! The errors of pulling, pushing and mirroring.

/// Why an OCI operation failed.  Every variant names what it was about.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    /// A reference or package name that cannot be parsed.
    #[error("invalid reference '{text}': {why}")]
    Reference {
        /// The text given (sanitised).
        text: String,
        /// What is wrong with it.
        why: String,
    },
    /// The registry could not be reached or did not answer in time.
    #[error("{url}: {why}")]
    Transport {
        /// The URL asked for.
        url: String,
        /// What went wrong (timeout, refused connection, TLS).
        why: String,
    },
    /// A URL the transport rules refuse: plain HTTP to a host not granted
    /// it, a server's redirect, upload location or token realm that would
    /// leave HTTPS for plain HTTP, a URL that is not http or https.
    #[error("{url}: refused: {why}")]
    Refused {
        /// The URL refused (sanitised).
        url: String,
        /// Which rule refuses it.
        why: String,
    },
    /// The command's deadline passed (all its requests together).
    #[error(
        "{url}: the command's deadline passed ({seconds} s for all its requests together): the registry is too slow"
    )]
    Deadline {
        /// The URL being asked for when it passed.
        url: String,
        /// The deadline, in seconds from the command's start.
        seconds: f64,
    },
    /// The registry answered with an error status.
    #[error("{url}: the registry answered {status}{detail}")]
    Status {
        /// The URL asked for.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The registry's error message, if it gave one.
        detail: String,
    },
    /// Something that does not exist there.
    #[error("{0}: not found")]
    NotFound(String),
    /// A blob or manifest larger than accepted, refused before download
    /// when its size is announced.
    #[error("{what} is {size} bytes, more than the {limit} accepted")]
    TooLarge {
        /// What it is.
        what: String,
        /// Its (announced) size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Bytes whose digest is not the one named.
    #[error("{what}: digest mismatch: expected {expected}, received {actual}")]
    Digest {
        /// What it is.
        what: String,
        /// The digest named by the manifest or reference.
        expected: String,
        /// The digest of the bytes received.
        actual: String,
    },
    /// A manifest, config or artifact that is not what it must be.
    #[error("{what}: {why}")]
    Invalid {
        /// What it is.
        what: String,
        /// Why it is refused.
        why: String,
    },
    /// A file of a layout folder or configuration that cannot be read or written.
    #[error("{path}: {why}")]
    File {
        /// The file.
        path: String,
        /// Why.
        why: String,
    },
}

impl OciError {
    pub(crate) fn invalid(what: impl Into<String>, why: impl Into<String>) -> OciError {
        OciError::Invalid {
            what: what.into(),
            why: why.into(),
        }
    }

    pub(crate) fn file(path: &std::path::Path, why: impl std::fmt::Display) -> OciError {
        OciError::File {
            path: path.display().to_string(),
            why: why.to_string(),
        }
    }
}
