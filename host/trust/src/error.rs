//! What went wrong with a component: the report every refusal and every
//! failed run ends as, naming the component and its digest.

use std::fmt;
use std::time::Duration;

use crate::text::sanitize;

/// What went wrong with a component.
#[derive(Clone, Debug, PartialEq)]
pub enum ErrorKind {
    /// Not a valid component, or it failed to compile.
    Compile(String),
    /// It imports something the host does not give, or lacks the
    /// expected export (another world or WIT version).
    Link(String),
    /// Instantiation failed (its start code trapped, its memory is too big).
    Instantiate(String),
    /// Its fuel ran out.
    OutOfFuel {
        /// The budget it had.
        budget: u64,
    },
    /// Its deadline passed.
    Deadline(Duration),
    /// It wanted more memory than its cap.
    OutOfMemory {
        /// Bytes it asked for.
        wanted: usize,
        /// The cap.
        cap: usize,
    },
    /// It panicked (the message it printed, if any).
    Panic(String),
    /// Another trap.
    Trap(String),
    /// It called `exit`.
    Exit(i32),
    /// It went over a limit of the host interface.
    HostLimit(String),
    /// It returned an error.
    Failed(String),
    /// It returned data that breaks the rules.
    InvalidData(String),
    /// Its objects do not make a valid topology.
    Topology(String),
    /// The policy or the enforcement point refused it before it ran
    /// (not allowed, bad signature, ungranted import, unknown version).
    Refused(String),
}

/// An error of one component, with its name and digest.
#[derive(Clone, Debug)]
pub struct ComponentError {
    /// The component's name.
    pub component: String,
    /// Its digest ([`crate::signing::component_digest`]), in hexadecimal.
    pub digest: String,
    /// What happened.
    pub kind: ErrorKind,
}

impl fmt::Display for ComponentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let short = &self.digest[..self.digest.len().min(12)];
        write!(f, "component {} (sha256 {short}): ", self.component)?;
        match &self.kind {
            ErrorKind::Compile(s) => write!(f, "cannot be compiled: {s}"),
            ErrorKind::Link(s) => write!(f, "refused at load time: {s}"),
            ErrorKind::Instantiate(s) => write!(f, "cannot be instantiated: {s}"),
            ErrorKind::OutOfFuel { budget } => {
                write!(f, "stopped: it used up its fuel ({budget} units)")
            }
            ErrorKind::Deadline(d) => write!(f, "stopped: it ran past its deadline of {d:?}"),
            ErrorKind::OutOfMemory { wanted, cap } => write!(
                f,
                "stopped: it asked for {wanted} bytes of memory, above its cap of {cap}"
            ),
            ErrorKind::Panic(m) => write!(f, "panicked: {m}"),
            ErrorKind::Trap(m) => write!(f, "trapped: {m}"),
            ErrorKind::Exit(c) => write!(f, "exited with status {c}"),
            ErrorKind::HostLimit(m) => write!(f, "stopped: {m}"),
            ErrorKind::Failed(m) => write!(f, "failed: {}", sanitize(m, 2000)),
            ErrorKind::InvalidData(m) => write!(f, "returned invalid data: {m}"),
            ErrorKind::Topology(m) => write!(f, "returned an invalid topology: {m}"),
            ErrorKind::Refused(m) => write!(f, "refused: {m}"),
        }
    }
}

impl std::error::Error for ComponentError {}

impl ComponentError {
    /// The error `kind` of the component `component` whose bytes have
    /// the sha256 digest `digest`.
    pub fn new(component: &str, digest: &str, kind: ErrorKind) -> ComponentError {
        ComponentError {
            component: component.to_string(),
            digest: digest.to_string(),
            kind,
        }
    }
}
