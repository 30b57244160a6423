//! Typed errors of the parsers and of placement.

use std::fmt;

/// The setting a string came from, named as the OpenMP runtimes name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// `KMP_AFFINITY`.
    KmpAffinity,
    /// `GOMP_CPU_AFFINITY`.
    GompCpuAffinity,
    /// `OMP_PLACES`.
    OmpPlaces,
    /// `OMP_PROC_BIND`.
    OmpProcBind,
    /// `KMP_TOPOLOGY_METHOD`.
    KmpTopologyMethod,
}

impl Setting {
    /// The environment variable's name.
    pub fn name(self) -> &'static str {
        match self {
            Setting::KmpAffinity => "KMP_AFFINITY",
            Setting::GompCpuAffinity => "GOMP_CPU_AFFINITY",
            Setting::OmpPlaces => "OMP_PLACES",
            Setting::OmpProcBind => "OMP_PROC_BIND",
            Setting::KmpTopologyMethod => "KMP_TOPOLOGY_METHOD",
        }
    }
}

/// What was wrong with a token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// A word that is not a keyword of the setting.
    UnknownKeyword,
    /// A `granularity=` value that names no granularity.
    UnknownGranularity,
    /// Not a number where one was expected, or one too large.
    BadNumber,
    /// A range whose stride is zero.
    ZeroStride,
    /// A range going the other way than its stride.
    BadRange,
    /// An opening bracket or brace without its closing one (or the reverse).
    Unbalanced,
    /// Something other than what the grammar allows at this point.
    Syntax(&'static str),
    /// The value or a list inside it is empty.
    Empty,
    /// Integer parameters given to a type that takes none (explicit, none, disabled, balanced).
    ParamsNotAllowed,
    /// More integer parameters than the type takes.
    TooManyParams,
    /// Integer parameters before the affinity type.
    ParamsBeforeType,
    /// The `explicit` type without `proclist=`.
    MissingProclist,
}

/// A setting string that could not be parsed: which setting, the bad token and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The setting being parsed.
    pub setting: Setting,
    /// The offending token, as written.
    pub token: String,
    /// What was wrong with it.
    pub kind: ParseErrorKind,
}

impl ParseError {
    pub(crate) fn new(setting: Setting, token: &str, kind: ParseErrorKind) -> Self {
        ParseError {
            setting,
            token: token.to_string(),
            kind,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match &self.kind {
            ParseErrorKind::UnknownKeyword => "unknown keyword".to_string(),
            ParseErrorKind::UnknownGranularity => {
                "unknown granularity (fine, thread, core, tile, die, module, l1_cache, l2_cache, l3_cache, node, group, socket, core_type, core_efficiency)".to_string()
            }
            ParseErrorKind::BadNumber => "not a valid number".to_string(),
            ParseErrorKind::ZeroStride => "range with a zero stride".to_string(),
            ParseErrorKind::BadRange => "range whose bounds go against its stride".to_string(),
            ParseErrorKind::Unbalanced => "unbalanced brackets or braces".to_string(),
            ParseErrorKind::Syntax(s) => format!("syntax error: {s}"),
            ParseErrorKind::Empty => "empty list".to_string(),
            ParseErrorKind::ParamsNotAllowed => "this affinity type takes no integer parameter".to_string(),
            ParseErrorKind::TooManyParams => "too many integer parameters for the affinity type".to_string(),
            ParseErrorKind::ParamsBeforeType => "integer parameter before the affinity type".to_string(),
            ParseErrorKind::MissingProclist => "the explicit type needs proclist=[...]".to_string(),
        };
        write!(f, "{}: {what} in \"{}\"", self.setting.name(), self.token)
    }
}

impl std::error::Error for ParseError {}

/// Why a `/proc/cpuinfo`-format file could not be turned into a topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CpuinfoError {
    /// No `processor` record at all.
    NoProcRecords,
    /// A record (starting at this line) without a `processor` field.
    MissingProcField(usize),
    /// A record (starting at this line) without a `physical id` field.
    MissingPhysicalIdField(usize),
    /// A used field without a value, or with a value that is not a number.
    BadValue {
        /// Line number, from 1.
        line: usize,
        /// The field's name.
        field: String,
    },
    /// A field given twice in one record.
    DuplicateField {
        /// Line number, from 1.
        line: usize,
        /// The field's name.
        field: String,
    },
    /// Two records for the same OS proc.
    DuplicateProcessor(u32),
    /// Two procs with the same node, package, core and thread ids.
    IdsNotUnique,
    /// The topology model refused the result.
    Topology(String),
}

impl fmt::Display for CpuinfoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CpuinfoError::NoProcRecords => write!(f, "cpuinfo file invalid (No processor records)"),
            CpuinfoError::MissingProcField(l) => {
                write!(
                    f,
                    "cpuinfo file missing processor field (record at line {l})"
                )
            }
            CpuinfoError::MissingPhysicalIdField(l) => {
                write!(
                    f,
                    "cpuinfo file missing physical id field (record at line {l})"
                )
            }
            CpuinfoError::BadValue { line, field } => {
                write!(
                    f,
                    "cpuinfo file invalid (bad value of \"{field}\" at line {line})"
                )
            }
            CpuinfoError::DuplicateField { line, field } => {
                write!(
                    f,
                    "cpuinfo file invalid (duplicate field \"{field}\" at line {line})"
                )
            }
            CpuinfoError::DuplicateProcessor(p) => {
                write!(f, "cpuinfo file invalid (processor {p} given twice)")
            }
            CpuinfoError::IdsNotUnique => write!(f, "Physical node/pkg/core/thread ids not unique"),
            CpuinfoError::Topology(m) => write!(f, "cpuinfo topology refused: {m}"),
        }
    }
}

impl std::error::Error for CpuinfoError {}

/// Why a placement could not be computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlaceError {
    /// The topology has no PU that the initial mask allows.
    NoAvailableProcs,
    /// A thread count of zero.
    NoThreads,
    /// None of the OS procs of an explicit list exists among the available procs.
    NoValidProcIds(Setting),
    /// No place of `OMP_PLACES` holds an available proc.
    NoPlaces,
}

impl fmt::Display for PlaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlaceError::NoAvailableProcs => {
                write!(
                    f,
                    "no OS proc of the topology is in the initial affinity mask"
                )
            }
            PlaceError::NoThreads => write!(f, "the number of threads must be at least 1"),
            PlaceError::NoValidProcIds(s) => {
                write!(f, "{}: no valid OS proc IDs specified", s.name())
            }
            PlaceError::NoPlaces => write!(f, "OMP_PLACES: no place holds an available OS proc"),
        }
    }
}

impl std::error::Error for PlaceError {}
