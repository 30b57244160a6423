//! Synthetic topologies: hwloc's one-line description language.
//!
//! A description such as `"pack:2 [numa(memory=64GB)] l3:1(size=32MB) core:8 pu:2"`
//! lists, from the top of the machine down, the type of each level and the
//! number of children each object of the previous level has.  [`parse`]
//! turns it into a [`Description`], [`Description::build`] fills a
//! [`Topology`] with the objects it describes, and [`export`] writes a
//! symmetric topology back as a description, as
//! `hwloc_topology_export_synthetic` (`lstopo --of synthetic`) does.
//!
//! # Grammar
//!
//! ```text
//! description := [ "(" attrs ")" ] { ws item } [ ws ]
//! item        := level | "[" type [ "(" attrs ")" ] "]"
//! level       := [ type ":" ] number [ "(" attrs ")" ]
//! attrs       := [ attr { " " attr } [ " " ] ]
//! attr        := "size=" size | "memory=" size | "memorysidecachesize=" size
//!              | "indexes=" ( list | loops | types )
//! ws          := { " " | "\n" }
//! ```
//!
//! * Types are read as hwloc's `hwloc_type_sscanf` reads them:
//!   case-insensitive prefixes of at least two letters (`pack`, `socket`,
//!   `numa`, `node`, `co`, `pu`, `die`, `group`, `group2`), and caches as
//!   `l<N>`, `l<N>d`, `l<N>u`, `l<N>i`, optionally followed by (a prefix of)
//!   `cache` (`l2`, `L1dCache`, `l1i`).  `Tile...` and `Module...`
//!   (case-sensitive) are read as groups.  Machine, Misc, memory-side caches
//!   and I/O types are refused as levels; only NUMA nodes go in brackets.
//! * Numbers are read like C's `strtoul(.., 0)`: decimal, `0x` hexadecimal
//!   or `0` octal.  Sizes take an optional unit: `kB`, `MB`, `GB`, `TB`
//!   (powers of 1000) or `kiB`, `MiB`, `GiB`, `TiB` (powers of 1024), in any
//!   case.  `size=` applies to caches, `memory=` to everything else (it only
//!   matters for NUMA nodes), `memorysidecachesize=` (hwloc 3) puts a
//!   memory-side cache of that size in front of NUMA nodes.
//! * `indexes=` gives the OS indexes of every object of the level (or of
//!   every attached NUMA node, in the order they are created): an explicit
//!   list `0,2,4,6,1,3,5,7`, interleaving loops `step*count:step*count...`
//!   (`2*4:1*2`), or a list of level types `numa:core` meaning "interleave by
//!   NUMA node first, then by core".
//! * When no type is given at all (`"2 3 4 5 6"`), types are guessed as hwloc
//!   does (NUMA level, package, core, up to four caches, then groups).  The
//!   last level is always made of PUs.  A NUMA level holding one node is
//!   added below the root when the description has none.
//!
//! # Differences from hwloc
//!
//! Where hwloc 2.9 (the reference) and hwloc 3.0 differ, this module
//! follows 2.9 semantics and accepts the 3.0 syntax additions:
//!
//! * `memorysidecachesize=` (3.0) is accepted and builds a memory-side cache.
//! * NUMA nodes in brackets get no default memory size (2.9); 3.0 gives them
//!   1 GiB like NUMA levels.
//! * Unknown attributes are errors (2.9); 3.0 warns and ignores them.
//! * [`export`] writes the memory-side caches in front of NUMA nodes as a
//!   `memorysidecachesize=` attribute (3.0); hwloc 2.9 aborts on them.
//! * Topology infos go to [`Topology::infos`] (where 3.0 keeps them); the
//!   v2 XML writer puts them on the root object as 2.9 does.
//!
//! The parser is stricter than hwloc where hwloc silently ignores input or
//! reads undefined data; every such case is an error with a byte position:
//! junk between a type name and its `:` or `]`, empty or malformed sizes,
//! negative numbers, `indexes=` values that hwloc would ignore (wrong
//! length, duplicates, interleavings that do not cover the level, loop types
//! naming a level that is not above the indexed one), memory-side caches as
//! levels (hwloc aborts), and descriptions above the size limits
//! ([`MAX_PUS`], [`MAX_OBJECTS`], [`MAX_LEVELS`], [`MAX_OS_INDEX`] and the
//! build budgets [`MAX_BUILD_SET_WORDS`] and [`MAX_BUILD_WORK`]).

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use crate::bitmap::{CpuSet, NodeSet};
use crate::object::{
    group_kind, CacheAttr, CacheKind, Depth, GroupAttr, Info, NumaAttr, ObjAttr, ObjId, ObjKind,
    ObjType, Object, PageType,
};
use crate::topology::Topology;

// ---------------------------------------------------------------------------
// Limits and constants
// ---------------------------------------------------------------------------

/// Most levels a description may list after the root (hwloc's limit of 128
/// levels, counting the root and room for an added NUMA level).
pub const MAX_LEVELS: usize = 126;

/// Most PUs a description may describe.
pub const MAX_PUS: u64 = 1 << 20;

/// Most objects (every level, attached NUMA nodes and memory-side caches)
/// a description may describe.
pub const MAX_OBJECTS: u64 = 1 << 22;

/// Largest OS index an `indexes=` list may give.
pub const MAX_OS_INDEX: u32 = (1 << 24) - 1;

/// Most 64-bit words of CPU sets a build may allocate, estimated as the
/// number of objects times the words needed to hold the highest PU index.
/// Sets are dense bitmaps, so this bounds the memory a build needs.
pub const MAX_BUILD_SET_WORDS: u64 = 1 << 25;

/// Most work a build may need, estimated as the number of objects times
/// the sum of the arities (set comparisons while inserting by cpuset, which
/// is quadratic in the arity, in hwloc too) times the cost of a comparison
/// (the words of a set plus 40).  It bounds build time to about two
/// seconds: 4096 PUs in one level pass, 8192 do not; `pack:64 core:64 pu:8`
/// passes.
pub const MAX_BUILD_WORK: u64 = 1 << 32;

/// Memory given to NUMA levels without a `memory=` attribute (1 GiB).
pub const DEFAULT_NUMA_MEMORY: u64 = 1 << 30;

/// Page size recorded in the single page type of synthetic NUMA nodes.
const PAGE_SIZE: u64 = 4096;

/// Line size of synthetic caches.
const CACHE_LINESIZE: u32 = 64;

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// What went wrong with a synthetic description or export.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SyntheticErrorKind {
    /// A token is not the name of an hwloc object type.
    UnknownType,
    /// The type exists but is not allowed there (Machine, Misc, I/O and
    /// memory-side cache levels; anything but NUMA nodes in brackets; I/O
    /// types in `indexes=` loops).
    DisallowedType,
    /// A level type is not immediately followed by `:`.
    MissingColon,
    /// A level has no number of objects.
    MissingArity,
    /// A level has 0 objects.
    ZeroArity,
    /// A number of objects does not fit in 32 bits.
    ArityTooLarge,
    /// More than [`MAX_LEVELS`] levels.
    TooManyLevels,
    /// No level at all, or the last level is not made of PUs.
    MissingPuLevel,
    /// PU, Package, Die, Core or NUMA node levels appear more than once.
    DuplicateLevel,
    /// NUMA nodes given both as a level and in brackets.
    NumaLevelAndAttached,
    /// Some levels have a type and others do not.
    MixedUnnamedLevels,
    /// A `(` has no matching `)`.
    UnclosedParenthesis,
    /// A `[` is not closed by `]` right after its type and attributes.
    UnclosedBracket,
    /// Attributes are not separated by one space, or junk follows one.
    MissingSeparator,
    /// An attribute name is unknown or does not apply to the type.
    UnknownAttribute,
    /// A size is missing, malformed, negative or overflows 64 bits.
    BadSize,
    /// An `indexes=` value is malformed or does not fit the level.
    BadIndexes,
    /// The description exceeds a size limit (named in the message).
    TooLarge,
    /// The topology refused an object or could not be finished.
    Topology,
    /// Export flags with unknown bits.
    InvalidFlags,
    /// Export of a topology that was not finished.
    NotFinished,
    /// Export of a topology whose root subtree is not symmetric.
    NonSymmetric,
    /// Export of a topology whose memory is not attached symmetrically.
    MemoryNotSymmetric,
    /// Export with [`ExportFlags::V1`] of a memory layout hwloc 1.x cannot
    /// describe (several memory children at one place, or NUMA nodes
    /// attached at different depths).
    V1Incompatible,
}

/// An error from [`parse`], [`Description::build`] or [`export`].
///
/// Parse errors carry the byte offset in the description where the problem
/// was found; the message quotes the offending token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntheticError {
    kind: SyntheticErrorKind,
    position: Option<usize>,
    message: String,
}

impl SyntheticError {
    fn new(kind: SyntheticErrorKind, position: Option<usize>, message: String) -> Self {
        SyntheticError {
            kind,
            position,
            message,
        }
    }

    fn at(kind: SyntheticErrorKind, position: usize, message: String) -> Self {
        Self::new(kind, Some(position), message)
    }

    /// The kind of problem.
    pub fn kind(&self) -> SyntheticErrorKind {
        self.kind
    }

    /// Byte offset in the description where the problem was found; `None`
    /// for errors that concern the whole description or an export.
    pub fn position(&self) -> Option<usize> {
        self.position
    }

    /// Human-readable explanation, naming the bad token or the limit.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for SyntheticError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some(p) => write!(
                f,
                "invalid synthetic description at byte {p}: {}",
                self.message
            ),
            None => write!(f, "synthetic topology: {}", self.message),
        }
    }
}

impl core::error::Error for SyntheticError {}

/// At most this many characters of input are quoted in messages.
const QUOTE_MAX: usize = 24;

/// The token starting at `pos`, for messages: up to the next space, bracket
/// or parenthesis, shortened to [`QUOTE_MAX`] characters.
fn token_at(text: &str, pos: usize) -> String {
    let Some(rest) = text.get(pos..) else {
        return String::new();
    };
    let mut out = String::new();
    for (n, c) in rest.chars().enumerate() {
        if n == 0 && matches!(c, '(' | ')' | '[' | ']') {
            out.push(c);
            continue;
        }
        if c.is_whitespace() || matches!(c, '(' | ')' | '[' | ']') {
            break;
        }
        if n >= QUOTE_MAX {
            out.push_str("...");
            break;
        }
        out.push(c);
    }
    if out.is_empty() {
        String::from("end of description")
    } else {
        format!("`{out}`")
    }
}

// ---------------------------------------------------------------------------
// Parsed form
// ---------------------------------------------------------------------------

/// NUMA node attached in brackets below every object of a level (`[numa]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attached {
    /// Memory of each node in bytes, 0 when not given.
    pub memory: u64,
    /// Size of the memory-side cache in front of each node, 0 for none.
    pub memory_side_cache_size: u64,
    /// Byte offset of the `[` in the description.
    pub position: usize,
}

/// Where a level of a [`Description`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LevelOrigin {
    /// The root Machine level, which is never written.
    Root,
    /// Written with its type.
    Typed,
    /// Written as a bare number; its type was guessed.
    Guessed,
    /// The single-node NUMA level added when the description has no NUMA node.
    Implicit,
}

/// One level of a [`Description`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Level {
    /// Type of the level's objects.
    pub obj_type: ObjType,
    /// Number of objects below each object of the previous level (1 for the root).
    pub arity: u32,
    /// Number of objects in the level.
    pub width: u64,
    /// Data, instruction or unified, for caches.
    pub cache_kind: Option<CacheKind>,
    /// Group depth (from `groupN`, or numbered from the bottom group level
    /// up), for groups.
    pub group_depth: Option<u32>,
    /// Cache size, or NUMA node memory, in bytes once defaults are applied
    /// (other types ignore it).
    pub size: u64,
    /// Size of the memory-side cache in front of NUMA nodes, 0 for none.
    pub memory_side_cache_size: u64,
    /// OS indexes of the level's objects, left to right, when `indexes=` was given.
    pub indexes: Option<Vec<u32>>,
    /// NUMA nodes attached below each object of the level.
    pub attached: Vec<Attached>,
    /// Byte offset of the level in the description, if written.
    pub position: Option<usize>,
    /// Where the level comes from.
    pub origin: LevelOrigin,
}

/// A parsed synthetic description: the levels from the root down to the
/// PUs, with attributes, OS index lists and attached NUMA nodes.
///
/// Made by [`parse`] (or [`str::parse`]); always valid for [`Description::build`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Description {
    text: String,
    info_start: usize,
    levels: Vec<Level>,
    attached_indexes: Option<Vec<u32>>,
    attached_total: u64,
}

impl core::str::FromStr for Description {
    type Err = SyntheticError;
    fn from_str(s: &str) -> Result<Self, SyntheticError> {
        parse(s)
    }
}

// ---------------------------------------------------------------------------
// Type names
// ---------------------------------------------------------------------------

/// A type as read from a description.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TypeSpec {
    ty: ObjType,
    cache_kind: Option<CacheKind>,
    group_depth: Option<u32>,
}

impl TypeSpec {
    fn plain(ty: ObjType) -> Self {
        TypeSpec {
            ty,
            cache_kind: None,
            group_depth: None,
        }
    }
}

/// Matches `name` (lowercase) case-insensitively at `pos`, as hwloc's
/// `hwloc__type_match`: matching stops at the first byte that is neither a
/// letter nor `-`, and at least `min` bytes must have matched.  Returns the
/// offset where matching stopped.
#[doc(alias = "hwloc__type_match")]
fn type_match(s: &[u8], pos: usize, name: &str, min: usize) -> Option<usize> {
    let name = name.as_bytes();
    let mut i = 0;
    loop {
        let Some(&c) = s.get(pos + i) else {
            return (i >= min).then_some(pos + i);
        };
        match name.get(i) {
            Some(&t) if c.to_ascii_lowercase() == t => i += 1,
            _ => {
                if c.is_ascii_alphabetic() || c == b'-' {
                    return None;
                }
                return (i >= min).then_some(pos + i);
            }
        }
    }
}

/// Reads a run of decimal digits at `pos` as a `u32`; `None` if there is no
/// digit, `Some(None)` on overflow.
fn decimal_u32(s: &[u8], pos: usize) -> Option<(Option<u32>, usize)> {
    let mut end = pos;
    let mut v: Option<u32> = Some(0);
    while let Some(&c) = s.get(end) {
        if !c.is_ascii_digit() {
            break;
        }
        v = v
            .and_then(|v| v.checked_mul(10))
            .and_then(|v| v.checked_add(u32::from(c - b'0')));
        end += 1;
    }
    (end > pos).then_some((v, end))
}

/// Reads a type name at `pos` as `hwloc_type_sscanf` does.  Returns the
/// type and the offset where the name ends, or `None` when no type matches.
/// I/O, Misc, Machine and memory-side cache types are returned too; callers
/// decide where they are allowed.
#[doc(alias = "hwloc_type_sscanf")]
fn scan_type(s: &[u8], pos: usize) -> Option<(TypeSpec, usize)> {
    const OSDEV_NAMES: &[(&str, usize, ObjType)] = &[
        ("osdev", 2, ObjType::OSDevice),
        ("block", 4, ObjType::OSDevice),
        ("network", 3, ObjType::OSDevice),
        ("openfabrics", 7, ObjType::OSDevice),
        ("dma", 3, ObjType::OSDevice),
        ("gpu", 3, ObjType::OSDevice),
        ("coproc", 5, ObjType::OSDevice),
        ("co-processor", 6, ObjType::OSDevice),
    ];
    let pcidev = ("pcidev", 3, ObjType::PCIDevice);
    let names = OSDEV_NAMES.iter().chain(&ObjType::SSCANF_NAMES);
    for &(name, min, ty) in names.chain([&pcidev]) {
        if let Some(end) = type_match(s, pos, name, min) {
            return Some((TypeSpec::plain(ty), end));
        }
    }
    // Caches: l<N>[d|u|i][cache].
    let first = *s.get(pos)?;
    if (first == b'l' || first == b'L') && s.get(pos + 1).is_some_and(|c| c.is_ascii_digit()) {
        let (depth, mut end) = decimal_u32(s, pos + 1)?;
        let depth = depth?;
        let kind = match s.get(end).map(|c| c.to_ascii_lowercase()) {
            Some(b'i') => {
                end += 1;
                CacheKind::Instruction
            }
            Some(b'd') => {
                end += 1;
                CacheKind::Data
            }
            Some(b'u') => {
                end += 1;
                CacheKind::Unified
            }
            _ => CacheKind::Unified,
        };
        let ty = ObjType::cache_for(depth, kind)?;
        let end = type_match(s, end, "cache", 0)?;
        return Some((
            TypeSpec {
                ty,
                cache_kind: Some(kind),
                group_depth: None,
            },
            end,
        ));
    }
    if let Some(end) = type_match(s, pos, "group", 2) {
        let (group_depth, end) = match decimal_u32(s, end) {
            Some((Some(d), e)) => (Some(d), e),
            Some((None, _)) => return None,
            None => (None, end),
        };
        return Some((
            TypeSpec {
                ty: ObjType::Group,
                cache_kind: None,
                group_depth,
            },
            end,
        ));
    }
    None
}

/// hwloc reads unknown names starting with these (case-sensitive) as groups.
fn future_group_name(s: &[u8], pos: usize) -> Option<usize> {
    let rest = s.get(pos..)?;
    if rest.starts_with(b"Tile") || rest.starts_with(b"Module") {
        let mut end = pos;
        while s
            .get(end)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'-' || *c == b'_')
        {
            end += 1;
        }
        Some(end)
    } else {
        None
    }
}

// ---------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------

/// Reads an unsigned number at `pos` like `strtoull(.., 0)` without sign or
/// leading spaces: `0x` hexadecimal, `0` octal, or decimal.  Returns the
/// value (`None` on overflow) and the end offset, or `None` without digits.
fn c_number(s: &[u8], pos: usize) -> Option<(Option<u64>, usize)> {
    let digit = |c: u8, radix: u32| (c as char).to_digit(radix);
    let (radix, start) = match (s.get(pos), s.get(pos + 1), s.get(pos + 2)) {
        (Some(b'0'), Some(b'x' | b'X'), Some(&c)) if digit(c, 16).is_some() => (16, pos + 2),
        (Some(b'0'), _, _) => (8, pos),
        (Some(c), _, _) if c.is_ascii_digit() => (10, pos),
        _ => return None,
    };
    let mut v: Option<u64> = Some(0);
    let mut end = start;
    while let Some(d) = s.get(end).and_then(|&c| digit(c, radix)) {
        v = v
            .and_then(|v| v.checked_mul(u64::from(radix)))
            .and_then(|v| v.checked_add(u64::from(d)));
        end += 1;
    }
    Some((v, end))
}

/// Size units, checked in this order as hwloc does (case-insensitive).
const UNITS: &[(&str, u64)] = &[
    ("tb", 1_000_000_000_000),
    ("tib", 1 << 40),
    ("gb", 1_000_000_000),
    ("gib", 1 << 30),
    ("mb", 1_000_000),
    ("mib", 1 << 20),
    ("kb", 1_000),
    ("kib", 1 << 10),
];

/// Reads a size with an optional unit at `pos`; the size must end at a
/// space or `)`.
fn parse_size(text: &str, pos: usize) -> Result<(u64, usize), SyntheticError> {
    let s = text.as_bytes();
    let bad = |why: &str| {
        SyntheticError::at(
            SyntheticErrorKind::BadSize,
            pos,
            format!("bad size {} ({why})", token_at(text, pos)),
        )
    };
    let (value, mut end) = c_number(s, pos).ok_or_else(|| bad("expected a number"))?;
    let mut value = value.ok_or_else(|| bad("too large"))?;
    for &(unit, mul) in UNITS {
        let n = unit.len();
        if s.get(end..end + n)
            .is_some_and(|u| u.eq_ignore_ascii_case(unit.as_bytes()))
        {
            value = value.checked_mul(mul).ok_or_else(|| bad("too large"))?;
            end += n;
            break;
        }
    }
    match s.get(end) {
        Some(b' ' | b')') => Ok((value, end)),
        _ => Err(bad(
            "expected a number with an optional kB, KiB, MB, MiB, GB, GiB, TB or TiB unit",
        )),
    }
}

// ---------------------------------------------------------------------------
// Attributes
// ---------------------------------------------------------------------------

#[derive(Default)]
struct RawAttrs {
    size: Option<u64>,
    memory_side_cache_size: Option<u64>,
    indexes: Option<(usize, usize)>,
}

/// Parses the attributes after the `(` at `open`; returns them and the
/// offset after the closing `)`.
fn parse_attrs(
    text: &str,
    open: usize,
    is_cache: bool,
    into: &mut RawAttrs,
) -> Result<usize, SyntheticError> {
    let s = text.as_bytes();
    if !s[open..].contains(&b')') {
        return Err(SyntheticError::at(
            SyntheticErrorKind::UnclosedParenthesis,
            open,
            String::from("attribute list `(` is never closed by `)`"),
        ));
    }
    let mut p = open + 1;
    while s.get(p) != Some(&b')') {
        let rest = &s[p..];
        if is_cache && rest.starts_with(b"size=") {
            let (v, e) = parse_size(text, p + 5)?;
            into.size = Some(v);
            p = e;
        } else if !is_cache && rest.starts_with(b"memory=") {
            let (v, e) = parse_size(text, p + 7)?;
            into.size = Some(v);
            p = e;
        } else if rest.starts_with(b"memorysidecachesize=") {
            let (v, e) = parse_size(text, p + 20)?;
            into.memory_side_cache_size = Some(v);
            p = e;
        } else if rest.starts_with(b"indexes=") {
            let start = p + 8;
            let mut e = start;
            while s.get(e).is_some_and(|&c| c != b' ' && c != b')') {
                e += 1;
            }
            into.indexes = Some((start, e));
            p = e;
        } else {
            let what = if rest.starts_with(b"size=") {
                " (size= applies to caches; use memory=)"
            } else if rest.starts_with(b"memory=") {
                " (memory= does not apply to caches; use size=)"
            } else {
                ""
            };
            return Err(SyntheticError::at(
                SyntheticErrorKind::UnknownAttribute,
                p,
                format!("unknown attribute {}{what}", token_at(text, p)),
            ));
        }
        match s.get(p) {
            Some(b' ') => p += 1,
            Some(b')') => {}
            _ => {
                return Err(SyntheticError::at(
                    SyntheticErrorKind::MissingSeparator,
                    p,
                    format!(
                        "expected a space or `)` after an attribute, found {}",
                        token_at(text, p)
                    ),
                ))
            }
        }
    }
    Ok(p + 1)
}

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

struct RawLevel {
    spec: Option<TypeSpec>,
    arity: u32,
    width: u64,
    attrs: RawAttrs,
    attached: Vec<Attached>,
    position: usize,
    origin: LevelOrigin,
}

fn too_large(position: Option<usize>, what: &str, limit: u64) -> SyntheticError {
    SyntheticError::new(
        SyntheticErrorKind::TooLarge,
        position,
        format!("the description has more than {limit} {what}, the limit"),
    )
}

/// Parses a synthetic description.
///
/// Accepts what hwloc 2.9 and 3.0 accept (see the [module](self)
/// documentation for the grammar and the few deliberate differences) and
/// applies hwloc's defaults: guessed types for bare numbers, an implicit
/// NUMA level, default cache and NUMA sizes, group depths, and OS index
/// lists computed from `indexes=`.
pub fn parse(desc: &str) -> Result<Description, SyntheticError> {
    let s = desc.as_bytes();
    let mut levels: Vec<RawLevel> = vec![RawLevel {
        spec: Some(TypeSpec::plain(ObjType::Machine)),
        arity: 1,
        width: 1,
        attrs: RawAttrs::default(),
        attached: Vec::new(),
        position: 0,
        origin: LevelOrigin::Root,
    }];
    let mut attached_indexes: Option<(usize, usize)> = None;
    let mut attached_total: u64 = 0;
    let mut objects: u64 = 1;
    let mut pos = 0;
    if s.first() == Some(&b'(') {
        pos = parse_attrs(desc, 0, false, &mut levels[0].attrs)?;
    }
    let info_start = pos;

    loop {
        while matches!(s.get(pos), Some(b' ' | b'\n')) {
            pos += 1;
        }
        let Some(&c) = s.get(pos) else { break };

        if c == b'[' {
            let open = pos;
            let (spec, mut p) = scan_type(s, pos + 1).ok_or_else(|| {
                SyntheticError::at(
                    SyntheticErrorKind::UnknownType,
                    open + 1,
                    format!("unknown attached object type {}", token_at(desc, open + 1)),
                )
            })?;
            if spec.ty != ObjType::NUMANode {
                return Err(SyntheticError::at(
                    SyntheticErrorKind::DisallowedType,
                    open + 1,
                    format!(
                        "only NUMA nodes may be attached in brackets, not {}",
                        token_at(desc, open + 1)
                    ),
                ));
            }
            let mut attrs = RawAttrs::default();
            if s.get(p) == Some(&b'(') {
                p = parse_attrs(desc, p, false, &mut attrs)?;
            }
            if s.get(p) != Some(&b']') {
                return Err(SyntheticError::at(
                    SyntheticErrorKind::UnclosedBracket,
                    p,
                    format!(
                        "expected `]` to close the `[` at byte {open}, found {}",
                        token_at(desc, p)
                    ),
                ));
            }
            pos = p + 1;
            let level = levels.last_mut().expect("the root level is always there");
            attached_total = attached_total.saturating_add(level.width);
            let mscs = attrs.memory_side_cache_size.unwrap_or(0);
            let per = if mscs != 0 { 2 } else { 1 };
            objects = objects.saturating_add(level.width.saturating_mul(per));
            if objects > MAX_OBJECTS {
                return Err(too_large(Some(open), "objects", MAX_OBJECTS));
            }
            if attrs.indexes.is_some() {
                attached_indexes = attrs.indexes;
            }
            level.attached.push(Attached {
                memory: attrs.size.unwrap_or(0),
                memory_side_cache_size: mscs,
                position: open,
            });
            continue;
        }

        // A normal level.
        let start = pos;
        let mut spec = None;
        if !c.is_ascii_digit() {
            let (sp, end) = match scan_type(s, pos) {
                Some(found) => found,
                None => match future_group_name(s, pos) {
                    Some(end) => (TypeSpec::plain(ObjType::Group), end),
                    None => {
                        return Err(SyntheticError::at(
                            SyntheticErrorKind::UnknownType,
                            pos,
                            format!("unknown object type {}", token_at(desc, pos)),
                        ))
                    }
                },
            };
            if matches!(sp.ty, ObjType::Machine | ObjType::MemCache)
                || matches!(sp.ty.kind(), ObjKind::Io | ObjKind::Misc)
            {
                return Err(SyntheticError::at(
                    SyntheticErrorKind::DisallowedType,
                    pos,
                    format!(
                        "{} levels are not allowed in synthetic descriptions ({})",
                        sp.ty,
                        token_at(desc, pos)
                    ),
                ));
            }
            if s.get(end) != Some(&b':') {
                return Err(SyntheticError::at(
                    SyntheticErrorKind::MissingColon,
                    end,
                    format!(
                        "expected `:` and a number of objects after type {}",
                        token_at(desc, pos)
                    ),
                ));
            }
            spec = Some(sp);
            pos = end + 1;
        }
        let (arity, end) = c_number(s, pos).ok_or_else(|| {
            SyntheticError::at(
                SyntheticErrorKind::MissingArity,
                pos,
                format!(
                    "expected a number of objects, found {}",
                    token_at(desc, pos)
                ),
            )
        })?;
        let arity = match arity {
            Some(0) => {
                return Err(SyntheticError::at(
                    SyntheticErrorKind::ZeroArity,
                    pos,
                    format!("a level cannot have 0 objects ({})", token_at(desc, start)),
                ))
            }
            Some(a) => u32::try_from(a).ok(),
            None => None,
        }
        .ok_or_else(|| {
            SyntheticError::at(
                SyntheticErrorKind::ArityTooLarge,
                pos,
                format!(
                    "number of objects {} is above the maximum {}",
                    token_at(desc, pos),
                    u32::MAX
                ),
            )
        })?;
        pos = end;
        if levels.len() > MAX_LEVELS {
            return Err(SyntheticError::at(
                SyntheticErrorKind::TooManyLevels,
                start,
                format!("more than {MAX_LEVELS} levels, the limit"),
            ));
        }
        let parent_width = levels.last().map_or(1, |l| l.width);
        let width = parent_width.saturating_mul(u64::from(arity));
        if width > MAX_PUS {
            return Err(too_large(Some(start), "PUs", MAX_PUS));
        }
        objects = objects.saturating_add(width);
        if objects > MAX_OBJECTS {
            return Err(too_large(Some(start), "objects", MAX_OBJECTS));
        }
        let mut attrs = RawAttrs::default();
        if s.get(pos) == Some(&b'(') {
            let is_cache = spec.is_some_and(|sp: TypeSpec| sp.ty.is_cache());
            pos = parse_attrs(desc, pos, is_cache, &mut attrs)?;
        }
        if attrs.memory_side_cache_size.is_some_and(|m| m != 0) {
            // Memory-side caches in front of NUMA nodes (counted for any
            // level, in case its type is guessed as NUMA).
            objects = objects.saturating_add(width);
            if objects > MAX_OBJECTS {
                return Err(too_large(Some(start), "objects", MAX_OBJECTS));
            }
        }
        levels.push(RawLevel {
            spec,
            arity,
            width,
            attrs,
            attached: Vec::new(),
            position: start,
            origin: if spec.is_some() {
                LevelOrigin::Typed
            } else {
                LevelOrigin::Guessed
            },
        });
    }

    finish_levels(desc, info_start, levels, attached_indexes, attached_total)
}

fn count_check(levels: &[RawLevel], ty: ObjType, what: &str) -> Result<(), SyntheticError> {
    let mut seen = levels
        .iter()
        .skip(1)
        .filter(|l| l.spec.is_some_and(|sp| sp.ty == ty));
    if let (Some(_), Some(second)) = (seen.next(), seen.next()) {
        return Err(SyntheticError::at(
            SyntheticErrorKind::DuplicateLevel,
            second.position,
            format!("a synthetic description cannot have several {what} levels"),
        ));
    }
    Ok(())
}

/// Checks the level structure, guesses missing types, adds the implicit
/// NUMA level, applies defaults and resolves `indexes=`.
fn finish_levels(
    desc: &str,
    info_start: usize,
    mut levels: Vec<RawLevel>,
    attached_indexes: Option<(usize, usize)>,
    attached_total: u64,
) -> Result<Description, SyntheticError> {
    let count = levels.len();
    if count == 1 {
        return Err(SyntheticError::at(
            SyntheticErrorKind::MissingPuLevel,
            desc.len(),
            String::from("the description has no level; it must end with a number of PUs"),
        ));
    }
    {
        let last = &mut levels[count - 1];
        match last.spec {
            Some(sp) if sp.ty != ObjType::PU => {
                return Err(SyntheticError::at(
                    SyntheticErrorKind::MissingPuLevel,
                    last.position,
                    format!(
                        "the last level must be made of PUs, not {} ({})",
                        sp.ty,
                        token_at(desc, last.position)
                    ),
                ))
            }
            _ => {}
        }
    }
    count_check(&levels, ObjType::PU, "PU")?;
    if let Some(l) = levels[..count - 1]
        .iter()
        .skip(1)
        .find(|l| l.spec.is_some_and(|sp| sp.ty == ObjType::PU))
    {
        // A PU level above the last one: the last is typed or not, either
        // way there are two PU levels.
        return Err(SyntheticError::at(
            SyntheticErrorKind::DuplicateLevel,
            l.position,
            String::from("a synthetic description cannot have several PU levels"),
        ));
    }
    count_check(&levels, ObjType::Package, "package")?;
    count_check(&levels, ObjType::Die, "die")?;
    count_check(&levels, ObjType::NUMANode, "NUMA node")?;
    count_check(&levels, ObjType::Core, "core")?;
    let has_numa_level = levels
        .iter()
        .any(|l| l.spec.is_some_and(|sp| sp.ty == ObjType::NUMANode));
    let has_attached = levels.iter().any(|l| !l.attached.is_empty());
    if has_numa_level && has_attached {
        let pos = levels
            .iter()
            .flat_map(|l| l.attached.iter())
            .map(|a| a.position)
            .next()
            .unwrap_or(0);
        return Err(SyntheticError::at(
            SyntheticErrorKind::NumaLevelAndAttached,
            pos,
            String::from(
                "a synthetic description cannot have NUMA nodes both as a level and attached",
            ),
        ));
    }
    let last_spec = levels[count - 1].spec;
    levels[count - 1].spec = Some(TypeSpec::plain(ObjType::PU));
    if last_spec.is_none() {
        levels[count - 1].origin = LevelOrigin::Guessed;
    } else {
        levels[count - 1].origin = LevelOrigin::Typed;
    }

    // Bare numbers: all intermediate levels untyped, or none.
    let unset = levels[1..count - 1]
        .iter()
        .filter(|l| l.spec.is_none())
        .count();
    if unset != 0 && unset != count - 2 {
        let typed = levels[1..count - 1]
            .iter()
            .find(|l| l.spec.is_some())
            .map_or(0, |l| l.position);
        return Err(SyntheticError::at(
            SyntheticErrorKind::MixedUnnamedLevels,
            typed,
            String::from("a synthetic description cannot mix levels with and without a type"),
        ));
    }
    if unset != 0 {
        guess_types(&mut levels[1..count - 1], has_attached);
    }
    let has_numa_level = levels
        .iter()
        .any(|l| l.spec.is_some_and(|sp| sp.ty == ObjType::NUMANode));

    // A NUMA level with a single node below the root when there is no NUMA node.
    if !has_numa_level && !has_attached {
        levels.insert(
            1,
            RawLevel {
                spec: Some(TypeSpec::plain(ObjType::NUMANode)),
                arity: 1,
                width: 1,
                attrs: RawAttrs::default(),
                attached: Vec::new(),
                position: info_start,
                origin: LevelOrigin::Implicit,
            },
        );
    }

    // Defaults: group depths are numbered from the top group level down,
    // starting at the number of group levels without an explicit depth.
    let mut group_counter = levels
        .iter()
        .filter(|l| l.spec.is_some_and(|sp| sp.ty == ObjType::Group))
        .count() as u32;
    let mut out: Vec<Level> = Vec::with_capacity(levels.len());
    for raw in &levels {
        let sp = raw.spec.unwrap_or(TypeSpec::plain(ObjType::Group));
        let ty = sp.ty;
        let mut size = raw.attrs.size.unwrap_or(0);
        let mut group_depth = None;
        let mut cache_kind = None;
        if ty == ObjType::Group {
            group_depth = Some(match sp.group_depth {
                Some(d) => d,
                None => {
                    let d = group_counter;
                    group_counter = group_counter.saturating_sub(1);
                    d
                }
            });
        } else if let Some(depth) = ty.cache_level() {
            cache_kind = Some(sp.cache_kind.unwrap_or(if ty.is_icache() {
                CacheKind::Instruction
            } else {
                CacheKind::Unified
            }));
            if size == 0 {
                size = if depth == 1 {
                    32 * 1024
                } else {
                    (256 * 1024) << (2 * depth)
                };
            }
        } else if ty == ObjType::NUMANode && size == 0 {
            size = DEFAULT_NUMA_MEMORY;
        }
        out.push(Level {
            obj_type: ty,
            arity: raw.arity,
            width: raw.width,
            cache_kind,
            group_depth,
            size,
            memory_side_cache_size: raw.attrs.memory_side_cache_size.unwrap_or(0),
            indexes: None,
            attached: raw.attached.clone(),
            position: match raw.origin {
                LevelOrigin::Root | LevelOrigin::Implicit => None,
                _ => Some(raw.position),
            },
            origin: raw.origin,
        });
    }
    for (i, raw) in levels.iter().enumerate() {
        if let Some(span) = raw.attrs.indexes {
            let idx = resolve_indexes(desc, span, out[i].width, &out, Some(i))?;
            out[i].indexes = Some(idx);
        }
    }
    let attached_indexes = match attached_indexes {
        Some(span) => Some(resolve_indexes(desc, span, attached_total, &out, None)?),
        None => None,
    };
    Ok(Description {
        text: String::from(desc),
        info_start,
        levels: out,
        attached_indexes,
        attached_total,
    })
}

/// Gives types to levels written as bare numbers, as hwloc does: in
/// priority a NUMA level (unless NUMA nodes are attached), a package, a
/// core, up to four caches, then groups; placed as groups, package, NUMA,
/// caches (L3, L2, L1d, L1i), core.
fn guess_types(mid: &mut [RawLevel], has_attached: bool) {
    let mut n = mid.len();
    let need_numa = usize::from(n >= 1 && !has_attached);
    n -= need_numa;
    let need_pack = usize::from(n >= 1);
    n -= need_pack;
    let need_core = usize::from(n >= 1);
    n -= need_core;
    let need_caches = n.min(4);
    n -= need_caches;
    let need_groups = n;
    let mut types: Vec<TypeSpec> = Vec::with_capacity(mid.len());
    for _ in 0..need_groups {
        types.push(TypeSpec::plain(ObjType::Group));
    }
    if need_pack == 1 {
        types.push(TypeSpec::plain(ObjType::Package));
    }
    if need_numa == 1 {
        types.push(TypeSpec::plain(ObjType::NUMANode));
    }
    let cache = |ty, kind| TypeSpec {
        ty,
        cache_kind: Some(kind),
        group_depth: None,
    };
    if need_caches >= 3 {
        types.push(cache(ObjType::L3Cache, CacheKind::Unified));
    }
    if need_caches >= 1 {
        types.push(cache(ObjType::L2Cache, CacheKind::Unified));
    }
    if need_caches >= 2 {
        types.push(cache(ObjType::L1Cache, CacheKind::Data));
    }
    if need_caches >= 4 {
        types.push(cache(ObjType::L1ICache, CacheKind::Instruction));
    }
    if need_core == 1 {
        types.push(TypeSpec::plain(ObjType::Core));
    }
    for (l, t) in mid.iter_mut().zip(types) {
        l.spec = Some(t);
    }
}

/// Computes the OS index array of an `indexes=` value at `span` for a level
/// (or the attached NUMA nodes when `level` is `None`) of `total` objects.
fn resolve_indexes(
    text: &str,
    span: (usize, usize),
    total: u64,
    levels: &[Level],
    level: Option<usize>,
) -> Result<Vec<u32>, SyntheticError> {
    let (start, end) = span;
    let s = &text.as_bytes()[start..end];
    let err = |at: usize, msg: String| {
        SyntheticError::at(SyntheticErrorKind::BadIndexes, start + at, msg)
    };
    let total_usize =
        usize::try_from(total).map_err(|_| err(0, String::from("too many objects")))?;
    if total == 0 {
        return Err(err(
            0,
            String::from("indexes= given for NUMA nodes that are never created"),
        ));
    }

    let array: Vec<u32> = if s.iter().all(|&c| c.is_ascii_digit() || c == b',') {
        // An explicit list.
        let mut out = Vec::with_capacity(total_usize.min(s.len() / 2 + 1));
        let mut p = 0;
        loop {
            let Some((v, e)) = decimal_u32(s, p) else {
                return Err(err(
                    p,
                    format!("expected an OS index, found {}", token_at(text, start + p)),
                ));
            };
            match v {
                Some(v) if v <= MAX_OS_INDEX => out.push(v),
                _ => {
                    return Err(err(
                        p,
                        format!(
                            "OS index {} is above the maximum {MAX_OS_INDEX}",
                            token_at(text, start + p)
                        ),
                    ))
                }
            }
            if out.len() as u64 > total {
                return Err(err(
                    p,
                    format!("indexes= lists more than the {total} objects of the level"),
                ));
            }
            p = e;
            if p == s.len() {
                break;
            }
            p += 1; // the comma
        }
        if out.len() as u64 != total {
            return Err(err(
                0,
                format!(
                    "indexes= lists {} OS indexes for {total} objects",
                    out.len()
                ),
            ));
        }
        out
    } else {
        let loops = if s.first().is_some_and(|c| c.is_ascii_digit()) {
            numeric_loops(text, start, end)?
        } else {
            type_loops(text, start, end, total, levels, level)?
        };
        interleave(&loops, total, total_usize).map_err(|m| err(0, m))?
    };
    // Duplicates.
    let max = array.iter().copied().max().unwrap_or(0) as usize;
    let mut seen = vec![false; max + 1];
    for (i, &v) in array.iter().enumerate() {
        if core::mem::replace(&mut seen[v as usize], true) {
            return Err(err(
                0,
                format!("indexes= gives OS index {v} twice (at position {i})"),
            ));
        }
    }
    Ok(array)
}

/// One interleaving loop: `count` values, each `step` objects apart.
#[derive(Clone, Copy, Debug)]
struct Loop {
    step: u64,
    count: u64,
}

/// Reads `step*count:step*count...`.
fn numeric_loops(text: &str, start: usize, end: usize) -> Result<Vec<Loop>, SyntheticError> {
    let s = &text.as_bytes()[..end];
    let mut out = Vec::new();
    let mut p = start;
    loop {
        let bad = |at: usize, what: &str| {
            SyntheticError::at(
                SyntheticErrorKind::BadIndexes,
                at,
                format!("bad interleaving loop {}: {what}", token_at(text, at)),
            )
        };
        let (step, e) = c_number(s, p).ok_or_else(|| bad(p, "expected step*count"))?;
        let step = step.ok_or_else(|| bad(p, "step too large"))?;
        if s.get(e) != Some(&b'*') {
            return Err(bad(p, "expected `*` after the step"));
        }
        if step == 0 {
            return Err(bad(p, "step 0"));
        }
        let (count, e2) = c_number(s, e + 1).ok_or_else(|| bad(p, "expected a count after `*`"))?;
        let count = count.ok_or_else(|| bad(p, "count too large"))?;
        if count == 0 {
            return Err(bad(p, "count 0"));
        }
        out.push(Loop { step, count });
        if e2 == end {
            break;
        }
        if s.get(e2) != Some(&b':') {
            return Err(bad(e2, "expected `:` between loops"));
        }
        p = e2 + 1;
    }
    Ok(out)
}

/// Reads `type:type...` and turns it into loops over the named levels.
fn type_loops(
    text: &str,
    start: usize,
    end: usize,
    total: u64,
    levels: &[Level],
    level: Option<usize>,
) -> Result<Vec<Loop>, SyntheticError> {
    let s = &text.as_bytes()[..end];
    // Levels that have children: every level but the last.
    let searchable = levels.len().saturating_sub(1);
    let mut depths: Vec<usize> = Vec::new();
    let mut p = start;
    loop {
        let bad =
            |at: usize, what: String| SyntheticError::at(SyntheticErrorKind::BadIndexes, at, what);
        let (sp, e) = scan_type(s, p)
            .ok_or_else(|| bad(p, format!("unknown type {} in indexes=", token_at(text, p))))?;
        if matches!(sp.ty.kind(), ObjKind::Io | ObjKind::Misc) {
            return Err(SyntheticError::at(
                SyntheticErrorKind::DisallowedType,
                p,
                format!("{} cannot name an interleaving level", sp.ty),
            ));
        }
        if e != end && s.get(e) != Some(&b':') {
            return Err(bad(
                e,
                format!("expected `:` between types, found {}", token_at(text, e)),
            ));
        }
        let found = levels[..searchable].iter().position(|l| {
            l.obj_type == sp.ty
                && (sp.ty != ObjType::Group
                    || sp.group_depth.is_none()
                    || sp.group_depth == l.group_depth)
        });
        let d = found.ok_or_else(|| {
            bad(
                p,
                format!("no level above the PUs has type {}", token_at(text, p)),
            )
        })?;
        if level.is_some_and(|cur| d >= cur) {
            return Err(bad(
                p,
                format!("level {} is not above the indexed level", token_at(text, p)),
            ));
        }
        if depths.contains(&d) {
            return Err(bad(p, format!("level {} named twice", token_at(text, p))));
        }
        depths.push(d);
        if e == end {
            break;
        }
        p = e + 1;
    }
    let mut out = Vec::with_capacity(depths.len());
    for &d in &depths {
        let prev = depths.iter().copied().filter(|&o| o < d).max().unwrap_or(0);
        let width = levels[d].width;
        let step = total / width;
        let count = width / levels[prev].width.max(1);
        if step == 0 || count == 0 {
            return Err(SyntheticError::at(
                SyntheticErrorKind::BadIndexes,
                start,
                String::from("interleaving levels do not divide the indexed objects"),
            ));
        }
        out.push(Loop { step, count });
    }
    Ok(out)
}

/// Expands interleaving loops into an OS index array of `total` entries,
/// adding the innermost loop when it is the only one missing (as hwloc does).
fn interleave(loops: &[Loop], total: u64, total_usize: usize) -> Result<Vec<u32>, String> {
    // Loops of one value add nothing; dropping them bounds the work.
    let mut loops: Vec<Loop> = loops.iter().copied().filter(|l| l.count > 1).collect();
    let min_step = loops
        .iter()
        .map(|l| l.step)
        .min()
        .unwrap_or(total)
        .min(total);
    let mut product: u64 = 1;
    for l in &loops {
        product = product
            .checked_mul(l.count)
            .filter(|&p| p <= total)
            .ok_or_else(|| format!("interleaving covers more than the {total} objects"))?;
    }
    if product != total {
        if min_step == total / product {
            loops.push(Loop {
                step: 1,
                count: total / product,
            });
        } else {
            return Err(format!(
                "interleaving covers {product} objects instead of {total}"
            ));
        }
    }
    let mut array = vec![0u64; total_usize];
    let mut mul: u64 = 1;
    for l in &loops {
        for (j, v) in array.iter_mut().enumerate() {
            *v += ((j as u64 / l.step) % l.count) * mul;
        }
        mul = mul.saturating_mul(l.count);
    }
    array
        .into_iter()
        .map(|v| {
            if v < total {
                Ok(v as u32)
            } else {
                Err(format!("interleaving generates out-of-range OS index {v}"))
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Description accessors
// ---------------------------------------------------------------------------

impl Description {
    /// The description as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The text hwloc records as the `SyntheticDescription` info: the
    /// description after the root attributes, if any.
    pub fn info_text(&self) -> &str {
        self.text.get(self.info_start..).unwrap_or("")
    }

    /// All levels, from the root Machine (index 0) down to the PUs (last).
    pub fn levels(&self) -> &[Level] {
        &self.levels
    }

    /// OS indexes of the attached NUMA nodes, in creation order (depth-first,
    /// each object's nodes after its children), when `indexes=` was given
    /// inside brackets.
    pub fn attached_indexes(&self) -> Option<&[u32]> {
        self.attached_indexes.as_deref()
    }

    /// Number of NUMA nodes attached in brackets.
    pub fn attached_count(&self) -> u64 {
        self.attached_total
    }

    /// Number of PUs described.
    pub fn pu_count(&self) -> u64 {
        self.levels.last().map_or(0, |l| l.width)
    }

    /// Number of objects a build creates (memory groups made while
    /// attaching NUMA nodes excluded): every level, attached NUMA nodes and
    /// memory-side caches.
    pub fn object_count(&self) -> u64 {
        let mut n: u64 = 0;
        for l in &self.levels {
            n = n.saturating_add(l.width);
            if l.obj_type == ObjType::NUMANode && l.memory_side_cache_size != 0 {
                n = n.saturating_add(l.width);
            }
            for a in &l.attached {
                let per = if a.memory_side_cache_size != 0 { 2 } else { 1 };
                n = n.saturating_add(l.width.saturating_mul(per));
            }
        }
        n
    }

    fn max_pu_index(&self) -> u64 {
        let last = self.levels.last();
        match last.and_then(|l| l.indexes.as_ref()) {
            Some(idx) => idx.iter().copied().max().map_or(0, u64::from),
            None => last.map_or(0, |l| l.width.saturating_sub(1)),
        }
    }

    /// Checks the build budgets ([`MAX_BUILD_SET_WORDS`], [`MAX_BUILD_WORK`]).
    fn check_budget(&self) -> Result<(), SyntheticError> {
        let objects = self.object_count();
        let words = self.max_pu_index() / 64 + 1;
        if objects.saturating_mul(words) > MAX_BUILD_SET_WORDS {
            return Err(SyntheticError::new(
                SyntheticErrorKind::TooLarge,
                None,
                format!(
                    "{objects} objects with PU indexes up to {} need more than {MAX_BUILD_SET_WORDS} set words, the limit",
                    self.max_pu_index()
                ),
            ));
        }
        let arities: u64 = self
            .levels
            .iter()
            .map(|l| u64::from(l.arity) + l.attached.len() as u64)
            .sum();
        let work = objects
            .saturating_mul(arities)
            .saturating_mul(words.saturating_add(40));
        if work > MAX_BUILD_WORK {
            return Err(SyntheticError::new(
                SyntheticErrorKind::TooLarge,
                None,
                format!(
                    "{objects} objects with arities summing to {arities} need an estimated {work} units of insertion work, above the limit {MAX_BUILD_WORK}"
                ),
            ));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Building
// ---------------------------------------------------------------------------

struct Builder<'a> {
    desc: &'a Description,
    topo: Topology,
    /// Next object number of each level.
    next: Vec<u64>,
    /// Next attached NUMA node number.
    next_attached: u64,
}

fn topo_err(e: crate::topology::TopologyError) -> SyntheticError {
    SyntheticError::new(SyntheticErrorKind::Topology, None, format!("{e}"))
}

impl Builder<'_> {
    /// The OS index of the next object of a level: from `indexes=`, or the
    /// object's number in its level (none for caches and groups).
    fn next_os_index(&mut self, level: usize) -> (u64, Option<u32>) {
        let n = self.next[level];
        self.next[level] += 1;
        let l = &self.desc.levels[level];
        let os = match &l.indexes {
            Some(idx) => idx.get(n as usize).copied(),
            None if l.obj_type.is_cache() || l.obj_type == ObjType::Group => None,
            None => u32::try_from(n).ok(),
        };
        (n, os)
    }

    fn keeps(&self, ty: ObjType) -> bool {
        matches!(ty, ObjType::PU | ObjType::NUMANode | ObjType::Machine) || self.topo.keeps_type(ty)
    }

    /// Builds one object of `level` and, first, its subtree; adds its
    /// cpuset to `parent_set`.
    fn build(&mut self, level: usize, parent_set: &mut CpuSet) -> Result<(), SyntheticError> {
        let (_, os) = self.next_os_index(level);
        let desc = self.desc;
        let l = &desc.levels[level];
        let mut set = CpuSet::new();
        if level + 1 == desc.levels.len() {
            set.set(os.unwrap_or(0));
        } else {
            let arity = desc.levels[level + 1].arity;
            for _ in 0..arity {
                self.build(level + 1, &mut set)?;
            }
        }
        parent_set.or_assign(&set);

        let ty = l.obj_type;
        if self.keeps(ty) {
            let mut obj = Object::with_cpuset(ty, os, set.clone());
            obj.gp_index = self.topo.alloc_gp_index();
            match ty {
                ObjType::Group => {
                    obj.attr = ObjAttr::Group(GroupAttr {
                        depth: 0,
                        kind: group_kind::SYNTHETIC,
                        subkind: l.group_depth.unwrap_or(1).wrapping_sub(1),
                        dont_merge: false,
                    });
                }
                ObjType::NUMANode => {
                    let node = os.unwrap_or(0);
                    obj.nodeset = Some(NodeSet::from_index(node));
                    obj.attr = numa_attr(l.size);
                }
                t if t.is_cache() => {
                    obj.attr = ObjAttr::Cache(CacheAttr {
                        size: l.size,
                        depth: t.cache_level().unwrap_or(1),
                        linesize: CACHE_LINESIZE,
                        associativity: 0,
                        kind: l.cache_kind.unwrap_or_default(),
                        inclusive: false,
                    });
                }
                _ => {}
            }
            self.topo.insert_by_cpuset(obj).map_err(topo_err)?;
            if ty == ObjType::NUMANode && l.memory_side_cache_size != 0 {
                self.insert_memcache(&set, os.unwrap_or(0), l.memory_side_cache_size)?;
            }
        }
        for a in &l.attached {
            self.insert_attached(a, &set)?;
        }
        Ok(())
    }

    fn insert_memcache(
        &mut self,
        set: &CpuSet,
        node: u32,
        size: u64,
    ) -> Result<(), SyntheticError> {
        if !self.keeps(ObjType::MemCache) {
            return Ok(());
        }
        let mut mc = Object::with_cpuset(ObjType::MemCache, None, set.clone());
        mc.gp_index = self.topo.alloc_gp_index();
        mc.nodeset = Some(NodeSet::from_index(node));
        mc.attr = ObjAttr::Cache(CacheAttr {
            size,
            depth: 1,
            linesize: CACHE_LINESIZE,
            associativity: 0,
            kind: CacheKind::Unified,
            inclusive: false,
        });
        self.topo.insert_by_cpuset(mc).map_err(topo_err)?;
        Ok(())
    }

    fn insert_attached(&mut self, a: &Attached, set: &CpuSet) -> Result<(), SyntheticError> {
        let n = self.next_attached;
        self.next_attached += 1;
        let os = match &self.desc.attached_indexes {
            Some(idx) => idx.get(n as usize).copied().unwrap_or(0),
            None => u32::try_from(n).unwrap_or(u32::MAX),
        };
        let mut node = Object::with_cpuset(ObjType::NUMANode, Some(os), set.clone());
        node.gp_index = self.topo.alloc_gp_index();
        node.nodeset = Some(NodeSet::from_index(os));
        node.attr = numa_attr(a.memory);
        self.topo.insert_by_cpuset(node).map_err(topo_err)?;
        if a.memory_side_cache_size != 0 {
            self.insert_memcache(set, os, a.memory_side_cache_size)?;
        }
        Ok(())
    }
}

fn numa_attr(memory: u64) -> ObjAttr {
    ObjAttr::Numa(NumaAttr {
        local_memory: memory,
        page_types: vec![PageType {
            size: PAGE_SIZE,
            count: memory / PAGE_SIZE,
        }],
    })
}

impl Description {
    /// Fills `topo` (a fresh topology whose type filters the caller has
    /// set) with the described objects, as hwloc's synthetic backend does,
    /// and finishes it.
    ///
    /// Objects are created depth-first, children before their parent, and
    /// inserted with [`Topology::insert_by_cpuset`]; attached NUMA nodes
    /// come after the object they are attached to.  PUs are numbered in
    /// order (or from `indexes=`) and their cpusets hold their OS index;
    /// Packages, Dies, Cores and NUMA nodes get their number in their level
    /// as OS index; caches and groups get none unless `indexes=` is given.
    /// Caches get a 64-byte line size; NUMA nodes a single 4 KiB page type;
    /// groups the kind [`group_kind::SYNTHETIC`] with their
    /// group depth minus one as subkind.  The topology infos
    /// `Backend=Synthetic` and `SyntheticDescription` are added, with the
    /// `discovery.pu`, `discovery.numa` and `discovery.numa_memory` supports.
    ///
    /// Fails with [`SyntheticErrorKind::TooLarge`] above the build budgets
    /// and with [`SyntheticErrorKind::Topology`] if the topology refuses an
    /// object or cannot be finished.
    pub fn build(&self, topo: Topology) -> Result<Topology, SyntheticError> {
        self.check_budget()?;
        let mut topo = topo;
        // The object count is known (and bounded by the budget): one
        // allocation for the arena instead of repeated growth.
        topo.reserve_objects(usize::try_from(self.object_count()).unwrap_or(0));
        let mut b = Builder {
            desc: self,
            topo,
            next: vec![0; self.levels.len()],
            next_attached: 0,
        };
        let mut all = CpuSet::new();
        if self.levels.len() > 1 {
            let arity = self.levels[1].arity;
            for _ in 0..arity {
                b.build(1, &mut all)?;
            }
        }
        if let Some(root) = self.levels.first() {
            for a in &root.attached {
                b.insert_attached(a, &all)?;
            }
        }
        let mut topo = b.topo;
        topo.infos.push(Info {
            name: String::from("Backend"),
            value: String::from("Synthetic"),
        });
        topo.infos.push(Info {
            name: String::from("SyntheticDescription"),
            value: String::from(self.info_text()),
        });
        for s in ["discovery.pu", "discovery.numa", "discovery.numa_memory"] {
            if !topo.support.iter().any(|x| x == s) {
                topo.support.push(String::from(s));
            }
        }
        topo.is_thissystem = false;
        topo.finish().map_err(topo_err)?;
        Ok(topo)
    }
}

// ---------------------------------------------------------------------------
// Export
// ---------------------------------------------------------------------------

/// Flags of [`export`], with the values of hwloc's
/// `HWLOC_TOPOLOGY_EXPORT_SYNTHETIC_FLAG_*`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ExportFlags(u64);

impl ExportFlags {
    /// No flag: extended types, attributes and memory children.
    pub const NONE: ExportFlags = ExportFlags(0);
    /// Write caches as `Cache`, packages as `Socket` and dies as `Group`
    /// (for hwloc < 1.9).
    pub const NO_EXTENDED_TYPES: ExportFlags = ExportFlags(1 << 0);
    /// Leave out attributes: sizes, memory and OS indexes (for hwloc < 1.10).
    pub const NO_ATTRS: ExportFlags = ExportFlags(1 << 1);
    /// Write memory as hwloc 1.x expects: each single NUMA child as a
    /// `NUMANode:1` level, packages as `Socket`, dies as `Group`.
    pub const V1: ExportFlags = ExportFlags(1 << 2);
    /// Leave out memory children entirely.
    pub const IGNORE_MEMORY: ExportFlags = ExportFlags(1 << 3);
    const ALL: u64 = 0xf;

    /// The flags of an hwloc flag value; `None` if unknown bits are set.
    pub fn from_bits(bits: u64) -> Option<ExportFlags> {
        (bits & !Self::ALL == 0).then_some(ExportFlags(bits))
    }

    /// The hwloc flag value.
    pub fn bits(self) -> u64 {
        self.0
    }

    /// Whether every flag of `other` is set.
    pub fn contains(self, other: ExportFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl core::ops::BitOr for ExportFlags {
    type Output = ExportFlags;
    fn bitor(self, rhs: ExportFlags) -> ExportFlags {
        ExportFlags(self.0 | rhs.0)
    }
}

impl core::ops::BitOrAssign for ExportFlags {
    fn bitor_assign(&mut self, rhs: ExportFlags) {
        self.0 |= rhs.0;
    }
}

fn export_err(kind: SyntheticErrorKind, msg: &str) -> SyntheticError {
    SyntheticError::new(kind, None, String::from(msg))
}

/// The OS indexes of a level, as `indexes=` writes them: interleaving loops
/// when they reproduce the level exactly, else the full list.  Ends with `)`.
fn export_indexes(topo: &Topology, level: &[ObjId], out: &mut String) {
    let os: Vec<u64> = level
        .iter()
        .map(|&id| topo.obj(id).os_index.map_or(u64::from(u32::MAX), u64::from))
        .collect();
    if let Some(loops) = find_loops(&os) {
        for (n, l) in loops.iter().enumerate() {
            let sep = if n + 1 == loops.len() { ")" } else { ":" };
            out.push_str(&format!("{}*{}{sep}", l.step, l.count));
        }
        return;
    }
    for (n, v) in os.iter().enumerate() {
        let sep = if n + 1 == os.len() { ")" } else { "," };
        out.push_str(&format!("{v}{sep}"));
    }
}

/// Looks for interleaving loops describing `os` exactly (as
/// `hwloc__export_synthetic_indexes`).
#[doc(alias = "hwloc__export_synthetic_indexes")]
fn find_loops(os: &[u64]) -> Option<Vec<Loop>> {
    let total = os.len() as u64;
    if os.first() != Some(&0) {
        return None;
    }
    let mut step: u64 = 1;
    let mut loops = Vec::new();
    while step != total {
        if step == 0 || !total.is_multiple_of(step) {
            return None;
        }
        let i = (1..total).find(|&i| os[i as usize] == step)?;
        let mut j: u64 = 2;
        while j < total / i {
            if os[(i * j) as usize] != step * j {
                break;
            }
            j += 1;
        }
        loops.push(Loop { step: i, count: j });
        step = step.checked_mul(j)?;
    }
    for (i, &v) in os.iter().enumerate() {
        let mut ind: u64 = 0;
        let mut mul: u64 = 1;
        for l in &loops {
            ind = ind.saturating_add(((i as u64 / l.step) % l.count).saturating_mul(mul));
            mul = mul.saturating_mul(l.count);
        }
        if v != ind {
            return None;
        }
    }
    Some(loops)
}

/// Appends the attributes of `id` (`(size=.. memory=.. indexes=..)`).
fn export_attrs(topo: &Topology, flags: ExportFlags, id: ObjId, out: &mut String) {
    let o = topo.obj(id);
    let mut parts: Vec<String> = Vec::new();
    if let (true, Some(c)) = (o.obj_type.is_cache(), o.cache()) {
        if c.size != 0 {
            parts.push(format!("size={}", c.size));
        }
    }
    if let Some(n) = o.numa() {
        if n.local_memory != 0 {
            parts.push(format!("memory={}", n.local_memory));
        }
    }
    if o.obj_type == ObjType::NUMANode && !flags.contains(ExportFlags::V1) {
        let mut size: u64 = 0;
        let mut cur = o.parent();
        while let Some(p) = cur {
            let po = topo.obj(p);
            if po.obj_type != ObjType::MemCache {
                break;
            }
            size = size.saturating_add(po.cache().map_or(0, |c| c.size));
            cur = po.parent();
        }
        if size != 0 {
            parts.push(format!("memorysidecachesize={size}"));
        }
    }
    let mut index_level: Option<&[ObjId]> = None;
    if o.logical_index() == 0 && matches!(o.obj_type, ObjType::PU | ObjType::NUMANode) {
        let level = topo.level(o.depth());
        let differs = level
            .iter()
            .enumerate()
            .any(|(i, &c)| topo.obj(c).os_index != u32::try_from(i).ok());
        if differs {
            index_level = Some(level);
        }
    }
    if parts.is_empty() && index_level.is_none() {
        return;
    }
    out.push('(');
    out.push_str(&parts.join(" "));
    match index_level {
        Some(level) => {
            if !parts.is_empty() {
                out.push(' ');
            }
            out.push_str("indexes=");
            export_indexes(topo, level, out);
        }
        None => out.push(')'),
    }
}

/// Appends `Type[:arity]` and the attributes of `id`.
fn export_obj(
    topo: &Topology,
    flags: ExportFlags,
    id: ObjId,
    arity: Option<usize>,
    out: &mut String,
) {
    let o = topo.obj(id);
    let old = flags.contains(ExportFlags::NO_EXTENDED_TYPES) || flags.contains(ExportFlags::V1);
    let name: String = if o.obj_type.is_cache() && flags.contains(ExportFlags::NO_EXTENDED_TYPES) {
        String::from("Cache")
    } else if o.obj_type == ObjType::Package && old {
        String::from("Socket")
    } else if o.obj_type == ObjType::Die && old {
        String::from("Group")
    } else if o.obj_type.is_cache() {
        let (depth, kind) = o.cache().map_or(
            (o.obj_type.cache_level().unwrap_or(1), CacheKind::Unified),
            |c| (c.depth, c.kind),
        );
        let letter = match kind {
            CacheKind::Unified => "",
            CacheKind::Data => "d",
            CacheKind::Instruction => "i",
        };
        format!("L{depth}{letter}Cache")
    } else {
        String::from(o.obj_type.xml_name())
    };
    out.push_str(&name);
    if let Some(a) = arity {
        out.push_str(&format!(":{a}"));
    }
    if !flags.contains(ExportFlags::NO_ATTRS) {
        export_attrs(topo, flags, id, out);
    }
}

/// Appends the memory children of `parent`; returns whether anything was written.
fn export_memory(
    topo: &Topology,
    flags: ExportFlags,
    parent: ObjId,
    mut needprefix: bool,
    out: &mut String,
) -> Result<bool, SyntheticError> {
    let mem = topo.obj(parent).memory_children();
    if mem.is_empty() {
        return Ok(false);
    }
    let first_numa = |mut id: ObjId| {
        while topo.obj(id).obj_type != ObjType::NUMANode {
            id = *topo.obj(id).memory_children().first()?;
        }
        Some(id)
    };
    if flags.contains(ExportFlags::V1) {
        if mem.len() > 1 {
            return Err(export_err(
                SyntheticErrorKind::V1Incompatible,
                "cannot export to synthetic v1 when several memory children are attached to the same object",
            ));
        }
        let Some(node) = first_numa(mem[0]) else {
            return Ok(false);
        };
        if needprefix {
            out.push(' ');
        }
        export_obj(topo, flags, node, Some(1), out);
        return Ok(true);
    }
    let mut wrote = false;
    for &m in mem {
        let Some(node) = first_numa(m) else { continue };
        if needprefix {
            out.push(' ');
        }
        out.push('[');
        export_obj(topo, flags, node, None, out);
        out.push(']');
        needprefix = true;
        wrote = true;
    }
    Ok(wrote)
}

/// Whether every object at the depth of each NUMA node's parent has the
/// same number of memory children (hwloc's `hwloc_check_memory_symmetric`).
#[doc(alias = "hwloc_check_memory_symmetric")]
fn memory_symmetric(topo: &Topology) -> bool {
    let mut depths: Vec<Depth> = Vec::new();
    for &n in topo.level(Depth::NumaNode) {
        if let Some(p) = topo.obj(n).parent() {
            let d = topo.obj(p).depth();
            if !depths.contains(&d) {
                depths.push(d);
            }
        }
    }
    depths.iter().all(|&d| {
        let level = topo.level(d);
        let first = level
            .first()
            .map_or(0, |&p| topo.obj(p).memory_children().len());
        level
            .iter()
            .all(|&p| topo.obj(p).memory_children().len() == first)
    })
}

/// Depth of the first normal ancestor of a memory object.
fn normal_parent_depth(topo: &Topology, mut id: ObjId) -> Option<Depth> {
    loop {
        let p = topo.obj(id).parent()?;
        if topo.obj(p).kind() == ObjKind::Normal {
            return Some(topo.obj(p).depth());
        }
        id = p;
    }
}

/// Writes a symmetric topology as a synthetic description, as
/// `hwloc_topology_export_synthetic` does (`lstopo --of synthetic`).
///
/// Each normal level is written as `Type:arity` with its attributes (cache
/// sizes, NUMA memory and memory-side cache sizes, and the OS indexes of
/// PUs and NUMA nodes when they differ from the logical order), followed by
/// the NUMA nodes attached to the first object of the level in brackets.
/// I/O and Misc objects are ignored.
///
/// Fails with [`SyntheticErrorKind::NonSymmetric`] when the root subtree is
/// not symmetric, [`SyntheticErrorKind::MemoryNotSymmetric`] when memory is
/// not attached symmetrically (unless [`ExportFlags::IGNORE_MEMORY`]),
/// [`SyntheticErrorKind::V1Incompatible`] for layouts [`ExportFlags::V1`]
/// cannot express, and [`SyntheticErrorKind::NotFinished`] before
/// [`Topology::finish`].
#[doc(alias = "hwloc_topology_export_synthetic")]
pub fn export(topo: &Topology, flags: ExportFlags) -> Result<String, SyntheticError> {
    if !topo.is_finished() {
        return Err(export_err(
            SyntheticErrorKind::NotFinished,
            "cannot export a topology that is not finished",
        ));
    }
    if ExportFlags::from_bits(flags.bits()).is_none() {
        return Err(export_err(
            SyntheticErrorKind::InvalidFlags,
            "unknown export flags",
        ));
    }
    let root = topo.root();
    if !topo.obj(root).symmetric_subtree() {
        return Err(export_err(
            SyntheticErrorKind::NonSymmetric,
            "cannot export to synthetic unless the topology is symmetric",
        ));
    }
    let ignore_memory = flags.contains(ExportFlags::IGNORE_MEMORY);
    if !ignore_memory && !memory_symmetric(topo) {
        return Err(export_err(
            SyntheticErrorKind::MemoryNotSymmetric,
            "cannot export to synthetic unless memory is attached symmetrically",
        ));
    }
    if flags.contains(ExportFlags::V1) {
        let nodes = topo.level(Depth::NumaNode);
        let first = nodes.first().and_then(|&n| normal_parent_depth(topo, n));
        if nodes.iter().any(|&n| normal_parent_depth(topo, n) != first) {
            return Err(export_err(
                SyntheticErrorKind::V1Incompatible,
                "cannot export to synthetic v1 when memory is attached at different depths",
            ));
        }
    }

    let mut out = String::new();
    let mut needprefix = false;
    if !flags.contains(ExportFlags::NO_ATTRS) {
        let before = out.len();
        export_attrs(topo, flags, root, &mut out);
        needprefix = out.len() > before;
    }
    if !ignore_memory && export_memory(topo, flags, root, needprefix, &mut out)? {
        needprefix = true;
    }
    let mut obj = root;
    let mut arity = topo.obj(root).arity();
    while arity != 0 {
        obj = topo.obj(obj).children()[0];
        if needprefix {
            out.push(' ');
        }
        export_obj(topo, flags, obj, Some(arity), &mut out);
        if !ignore_memory {
            export_memory(topo, flags, obj, true, &mut out)?;
        }
        needprefix = true;
        arity = topo.obj(obj).arity();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::topology::TypeFilter;
    use alloc::string::ToString;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    type K = SyntheticErrorKind;

    /// A topology with lstopo's filters: everything kept but I/O and Misc.
    fn lstopo_topology() -> Topology {
        let mut t = Topology::new();
        t.set_all_types_filter(TypeFilter::KeepAll);
        t.set_io_types_filter(TypeFilter::KeepNone);
        let _ = t.set_type_filter(ObjType::Misc, TypeFilter::KeepNone);
        t
    }

    fn build(desc: &str) -> Topology {
        let d = parse(desc).unwrap_or_else(|e| panic!("{desc:?}: {e}"));
        let t = d
            .build(lstopo_topology())
            .unwrap_or_else(|e| panic!("{desc:?}: {e}"));
        t.check().unwrap_or_else(|e| panic!("{desc:?}: {e}"));
        t
    }

    fn exp(desc: &str) -> String {
        export(&build(desc), ExportFlags::NONE).unwrap_or_else(|e| panic!("{desc:?}: {e}"))
    }

    fn err(desc: &str) -> SyntheticError {
        match parse(desc) {
            Ok(d) => panic!("{desc:?} parsed as {d:?}"),
            Err(e) => e,
        }
    }

    fn kind(desc: &str) -> K {
        err(desc).kind()
    }

    fn count(t: &Topology, ty: ObjType) -> usize {
        t.objs_by_type(ty).len()
    }

    fn os_indexes(t: &Topology, ty: ObjType) -> Vec<Option<u32>> {
        t.objs_by_type(ty)
            .iter()
            .map(|&i| t.obj(i).os_index)
            .collect()
    }

    fn types(d: &Description) -> Vec<ObjType> {
        d.levels().iter().map(|l| l.obj_type).collect()
    }

    // ----------------------------------------------------------------- parse

    #[test]
    fn parse_basic_levels() {
        let d = parse("pack:2 core:2 pu:2").unwrap();
        assert_eq!(
            types(&d),
            [
                ObjType::Machine,
                ObjType::NUMANode,
                ObjType::Package,
                ObjType::Core,
                ObjType::PU
            ]
        );
        assert_eq!(d.pu_count(), 8);
        assert_eq!(d.levels()[1].origin, LevelOrigin::Implicit);
        assert_eq!(d.levels()[1].size, DEFAULT_NUMA_MEMORY);
        assert_eq!(d.levels()[2].position, Some(0));
        assert_eq!(d.levels()[3].position, Some(7));
        let widths: Vec<u64> = d.levels().iter().map(|l| l.width).collect();
        assert_eq!(widths, [1, 1, 2, 4, 8]);
        assert_eq!(d.object_count(), 16);
    }

    #[test]
    fn parse_manual_examples() {
        // The examples of hwloc's manual and environment variable docs.
        for desc in [
            "pack:2 node:1 l2:1 core:2 pu:1",
            "2 3 4 5 6",
            "Package:2 NUMANode:3 L2Cache:4 Core:5 PU:6",
            "package:1 group:4 [numa] [numa] core:16 pu:4",
            "pack:3 [numa] L2:2 core:4 pu:2",
            "node:2 core:3 pu:4",
            "node:2 sock:1 cache:1 core:2 pu:1",
            "L2iCache:2(size=32kB) pu:2",
            "NUMANode:3(memory=16MB) pu:2",
            "core:2 PU:2(indexes=0,2,1,3)",
            "numa:2 core:2 PU:2(indexes=numa:core)",
            "(memory=4GB) pack:2 pu:2",
        ] {
            if desc.contains("cache:1") {
                // hwloc 1.x generic "cache" is not a type any more.
                assert_eq!(kind(desc), K::UnknownType, "{desc}");
                continue;
            }
            parse(desc).unwrap_or_else(|e| panic!("{desc}: {e}"));
        }
        let a = parse("2 3 4 5 6").unwrap();
        let b = parse("Package:2 NUMANode:3 L2Cache:4 Core:5 PU:6").unwrap();
        assert_eq!(types(&a), types(&b));
        assert_eq!(
            exp("2 3 4 5 6"),
            exp("Package:2 NUMANode:3 L2Cache:4 Core:5 PU:6")
        );
    }

    #[test]
    fn parse_type_names() {
        let cases: &[(&str, ObjType, Option<CacheKind>)] = &[
            ("pack", ObjType::Package, None),
            ("Package", ObjType::Package, None),
            ("socket", ObjType::Package, None),
            ("SO", ObjType::Package, None),
            ("die", ObjType::Die, None),
            ("core", ObjType::Core, None),
            ("co", ObjType::Core, None),
            ("group", ObjType::Group, None),
            ("gr", ObjType::Group, None),
            ("Tile", ObjType::Group, None),
            ("Module", ObjType::Group, None),
            ("numa", ObjType::NUMANode, None),
            ("node", ObjType::NUMANode, None),
            ("NUMANode", ObjType::NUMANode, None),
            ("l1", ObjType::L1Cache, Some(CacheKind::Unified)),
            ("l1d", ObjType::L1Cache, Some(CacheKind::Data)),
            ("L1dCache", ObjType::L1Cache, Some(CacheKind::Data)),
            ("l1i", ObjType::L1ICache, Some(CacheKind::Instruction)),
            ("L1iCache", ObjType::L1ICache, Some(CacheKind::Instruction)),
            ("l2u", ObjType::L2Cache, Some(CacheKind::Unified)),
            ("l2cache", ObjType::L2Cache, Some(CacheKind::Unified)),
            ("l2ca", ObjType::L2Cache, Some(CacheKind::Unified)),
            ("L3", ObjType::L3Cache, Some(CacheKind::Unified)),
            ("l3i", ObjType::L3ICache, Some(CacheKind::Instruction)),
            ("l4", ObjType::L4Cache, Some(CacheKind::Unified)),
            ("l5", ObjType::L5Cache, Some(CacheKind::Unified)),
        ];
        for &(name, ty, ck) in cases {
            let desc = format!("{name}:2 pu:1");
            let d = parse(&desc).unwrap_or_else(|e| panic!("{desc}: {e}"));
            let l = d.levels().iter().find(|l| l.position == Some(0)).unwrap();
            assert_eq!(l.obj_type, ty, "{desc}");
            assert_eq!(l.cache_kind, ck, "{desc}");
        }
        for bad in [
            "p", "c", "l0", "l6", "l4i", "l2x", "cache", "foo", "tile", "packages", "me",
            "l2cachex",
        ] {
            let desc = format!("{bad}:2 pu:1");
            assert_eq!(kind(&desc), K::UnknownType, "{desc}");
        }
        for bad in [
            "machine", "ma", "misc", "os", "osdev", "pcidev", "bridge", "memcache", "gpu", "net",
            "block",
        ] {
            let desc = format!("{bad}:2 pu:1");
            assert_eq!(kind(&desc), K::DisallowedType, "{desc}");
        }
    }

    #[test]
    fn parse_numbers_and_whitespace() {
        assert_eq!(parse("pack:0x2 pu:010").unwrap().pu_count(), 16);
        assert_eq!(parse("  pack:2\n  pu:2  \n").unwrap().pu_count(), 4);
        assert_eq!(parse("pack:2core:2 pu:1").unwrap().pu_count(), 4);
        assert_eq!(
            parse("pack:4294967295 pu:1").unwrap_err().kind(),
            K::TooLarge
        );
        assert_eq!(kind("pack:4294967296 pu:1"), K::ArityTooLarge);
        assert_eq!(kind("pack:99999999999999999999999 pu:1"), K::ArityTooLarge);
        assert_eq!(kind("pack:0 pu:1"), K::ZeroArity);
        assert_eq!(kind("pack:2 pu:0"), K::ZeroArity);
        // Octal, as strtoul reads it: "0" then junk.
        assert_eq!(kind("pack:2 pu:08"), K::ZeroArity);
        assert_eq!(kind("pack:2 pu:018"), K::DuplicateLevel);
        assert_eq!(kind("pack: 2 pu:1"), K::MissingArity);
        assert_eq!(kind("pack:-2 pu:1"), K::MissingArity);
        assert_eq!(kind("pack pu:1"), K::MissingColon);
        assert_eq!(kind("pack2:2 pu:1"), K::MissingColon);
        assert_eq!(kind("pack:2 pu:2x"), K::UnknownType);
        assert_eq!(kind("pack:2\tpu:2"), K::UnknownType);
    }

    #[test]
    fn parse_structure_errors() {
        assert_eq!(kind(""), K::MissingPuLevel);
        assert_eq!(kind("   "), K::MissingPuLevel);
        assert_eq!(kind("pack:2 core:2"), K::MissingPuLevel);
        assert_eq!(kind("(memory=1GB)"), K::MissingPuLevel);
        assert_eq!(kind("pack:2 pu:2 pu:2"), K::DuplicateLevel);
        assert_eq!(kind("pu:2 core:2 3"), K::DuplicateLevel);
        assert_eq!(kind("pack:2 pack:2 pu:1"), K::DuplicateLevel);
        assert_eq!(kind("die:2 die:2 pu:1"), K::DuplicateLevel);
        assert_eq!(kind("core:2 core:2 pu:1"), K::DuplicateLevel);
        assert_eq!(kind("numa:2 numa:2 pu:1"), K::DuplicateLevel);
        assert_eq!(kind("numa:2 [numa] pu:1"), K::NumaLevelAndAttached);
        assert_eq!(kind("pack:2 [numa] numa:2 pu:1"), K::NumaLevelAndAttached);
        assert_eq!(kind("2 core:2 pu:2"), K::MixedUnnamedLevels);
        assert_eq!(kind("pack:2 2 pu:2"), K::MixedUnnamedLevels);
        // Duplicate caches and groups are fine.
        assert!(parse("l2:2 l2:2 pu:1").is_ok());
        assert!(parse("group:2 group:2 pu:1").is_ok());
        // Position of the second duplicate.
        assert_eq!(err("pack:2 pack:2 pu:1").position(), Some(7));
    }

    #[test]
    fn parse_brackets_and_parentheses() {
        assert_eq!(kind("pack:2 [numa pu:2"), K::UnclosedBracket);
        assert_eq!(kind("pack:2 [numa"), K::UnclosedBracket);
        assert_eq!(kind("pack:2 [numa:1] pu:2"), K::UnclosedBracket);
        assert_eq!(kind("pack:2 [numa(memory=1GB) pu:2"), K::UnclosedBracket);
        assert_eq!(
            kind("pack:2 [numa(memory=1GB] pu:2"),
            K::UnclosedParenthesis
        );
        assert_eq!(
            kind("pack:2 [numa(memory=1GB] pu:2(indexes=0,1,2,3)"),
            K::BadSize
        );
        assert_eq!(kind("pack:2 [numa(memory=1GB"), K::UnclosedParenthesis);
        assert_eq!(kind("pack:2(memory=1 pu:2"), K::UnclosedParenthesis);
        assert_eq!(kind("(memory=1"), K::UnclosedParenthesis);
        assert_eq!(kind("pack:2 [core] pu:2"), K::DisallowedType);
        assert_eq!(kind("pack:2 [memcache] pu:2"), K::DisallowedType);
        assert_eq!(kind("pack:2 [foo] pu:2"), K::UnknownType);
        assert_eq!(kind("pack:2 [ numa] pu:2"), K::UnknownType);
        assert_eq!(kind("pack:2 ] pu:2"), K::UnknownType);
        assert_eq!(kind("pack:2 ) pu:2"), K::UnknownType);
        assert_eq!(kind("pack:2 ( pu:2"), K::UnknownType);
        let d = parse("pack:2 [numa(memory=2GB)] [numa] pu:2").unwrap();
        let p = &d.levels()[1];
        assert_eq!(p.obj_type, ObjType::Package);
        assert_eq!(p.attached.len(), 2);
        assert_eq!(p.attached[0].memory, 2_000_000_000);
        assert_eq!(p.attached[0].position, 7);
        assert_eq!(p.attached[1].memory, 0);
        assert_eq!(d.attached_count(), 4);
        // No implicit NUMA level when NUMA nodes are attached.
        assert_eq!(types(&d), [ObjType::Machine, ObjType::Package, ObjType::PU]);
    }

    #[test]
    fn parse_attributes_and_sizes() {
        let size = |desc: &str, level: usize| parse(desc).unwrap().levels()[level].size;
        assert_eq!(size("l2:2(size=1MB) pu:1", 2), 1_000_000);
        assert_eq!(size("l2:2(size=1MiB) pu:1", 2), 1 << 20);
        assert_eq!(size("l2:2(size=3kB) pu:1", 2), 3000);
        assert_eq!(size("l2:2(size=3KB) pu:1", 2), 3000);
        assert_eq!(size("l2:2(size=3kib) pu:1", 2), 3 << 10);
        assert_eq!(size("l2:2(size=2GiB) pu:1", 2), 2 << 30);
        assert_eq!(size("l2:2(size=2gb) pu:1", 2), 2_000_000_000);
        assert_eq!(size("l2:2(size=1TB) pu:1", 2), 1_000_000_000_000);
        assert_eq!(size("l2:2(size=1TiB) pu:1", 2), 1 << 40);
        assert_eq!(size("l2:2(size=0x10) pu:1", 2), 16);
        assert_eq!(size("l2:2(size=010) pu:1", 2), 8);
        assert_eq!(size("l2:2(size=100 ) pu:1", 2), 100);
        assert_eq!(size("l2:2() pu:1", 2), 4 << 20);
        // Defaults: 32 KiB L1, then 4 MiB L2 times 4 per level; 1 GiB NUMA.
        assert_eq!(size("l1:2 pu:1", 2), 32 << 10);
        assert_eq!(size("l1i:2 pu:1", 2), 32 << 10);
        assert_eq!(size("l3:2 pu:1", 2), 16 << 20);
        assert_eq!(size("l4:2 pu:1", 2), 64 << 20);
        assert_eq!(size("l5:2 pu:1", 2), 256 << 20);
        assert_eq!(size("numa:2 pu:1", 1), 1 << 30);
        assert_eq!(size("numa:2(memory=0) pu:1", 1), 1 << 30);
        assert_eq!(size("numa:2(memory=5GB) pu:1", 1), 5_000_000_000);
        let d = parse("numa:2(memorysidecachesize=1GiB memory=2GiB) pu:1").unwrap();
        assert_eq!(d.levels()[1].memory_side_cache_size, 1 << 30);
        assert_eq!(d.levels()[1].size, 2 << 30);

        for bad in [
            "l2:2(size=) pu:1",
            "l2:2(size=abc) pu:1",
            "l2:2(size=5xyz) pu:1",
            "l2:2(size=-5) pu:1",
            "l2:2(size=1K) pu:1",
            "l2:2(size=99999999999999999999) pu:1",
            "l2:2(size=20000000TB) pu:1",
            "[numa(memory=1.5GB)] pu:1",
        ] {
            assert_eq!(kind(bad), K::BadSize, "{bad}");
        }
        assert_eq!(err("l2:2(size=abc) pu:1").position(), Some(10));
        assert!(err("l2:2(size=abc) pu:1").message().contains("`abc`"));
        assert_eq!(kind("l2:2(memory=1) pu:1"), K::UnknownAttribute);
        assert_eq!(kind("numa:2(size=1) pu:1"), K::UnknownAttribute);
        assert_eq!(kind("numa:2(foo=1) pu:1"), K::UnknownAttribute);
        assert_eq!(kind("numa:2( memory=1) pu:1"), K::UnknownAttribute);
        assert_eq!(
            kind("numa:2(memory=1  indexes=0,1) pu:1"),
            K::UnknownAttribute
        );
        assert_eq!(kind("numa:2(memory=1,indexes=0,1) pu:1"), K::BadSize);
        assert_eq!(kind("numa:2(indexes=0,1x) pu:1"), K::BadIndexes);
    }

    #[test]
    fn parse_guessed_types() {
        let t = |desc: &str| types(&parse(desc).unwrap());
        use ObjType::*;
        assert_eq!(t("2"), [Machine, NUMANode, PU]);
        assert_eq!(t("2 2"), [Machine, NUMANode, PU]);
        assert_eq!(t("2 2 2"), [Machine, Package, NUMANode, PU]);
        assert_eq!(t("2 2 2 2"), [Machine, Package, NUMANode, Core, PU]);
        assert_eq!(
            t("2 2 2 2 2"),
            [Machine, Package, NUMANode, L2Cache, Core, PU]
        );
        assert_eq!(
            t("2 2 2 2 2 2"),
            [Machine, Package, NUMANode, L2Cache, L1Cache, Core, PU]
        );
        assert_eq!(
            t("2 2 2 2 2 2 2 2 2"),
            [Machine, Group, Package, NUMANode, L3Cache, L2Cache, L1Cache, L1ICache, Core, PU]
        );
        // Attached NUMA nodes: no NUMA level is guessed.
        assert_eq!(t("2 [numa] 2 2"), [Machine, Package, Core, PU]);
        let d = parse("2 2 2 2 2 2").unwrap();
        assert_eq!(d.levels()[4].cache_kind, Some(CacheKind::Data));
        assert_eq!(d.levels()[2].origin, LevelOrigin::Guessed);
        // Group depths: numbered from the top down.
        let d = parse("group:2 group:2 group4:2 pu:2").unwrap();
        let g: Vec<Option<u32>> = d.levels().iter().map(|l| l.group_depth).collect();
        assert_eq!(g, [None, None, Some(3), Some(2), Some(4), None]);
    }

    #[test]
    fn parse_indexes() {
        let idx = |desc: &str| {
            let d = parse(desc).unwrap_or_else(|e| panic!("{desc}: {e}"));
            d.levels().last().unwrap().indexes.clone().unwrap()
        };
        assert_eq!(idx("core:2 pu:2(indexes=0,2,1,3)"), [0, 2, 1, 3]);
        assert_eq!(
            idx("pack:2 core:2 pu:2(indexes=2*4:1*2)"),
            [0, 4, 1, 5, 2, 6, 3, 7]
        );
        assert_eq!(
            idx("pack:2 core:2 pu:2(indexes=core:pack)"),
            [0, 4, 1, 5, 2, 6, 3, 7]
        );
        assert_eq!(
            idx("pack:2 core:2 pu:2(indexes=core)"),
            [0, 4, 1, 5, 2, 6, 3, 7]
        );
        assert_eq!(
            idx("pack:2 core:2 pu:2(indexes=pack)"),
            [0, 2, 4, 6, 1, 3, 5, 7]
        );
        assert_eq!(
            idx("pack:2 core:2 pu:2(indexes=pack:core)"),
            [0, 4, 2, 6, 1, 5, 3, 7]
        );
        assert_eq!(
            idx("numa:2 core:2 pu:2(indexes=numa:core)"),
            [0, 4, 2, 6, 1, 5, 3, 7]
        );
        assert_eq!(idx("pack:2 pu:4(indexes=0x1*8)"), [0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(idx("pack:2 pu:2(indexes=4,5,6,7)"), [4, 5, 6, 7]);
        let d = parse("pack:2 numa:2(indexes=3,2,1,0) pu:1").unwrap();
        assert_eq!(d.levels()[2].indexes.as_deref(), Some(&[3, 2, 1, 0][..]));
        let d = parse("pack:2 [numa(indexes=1,0)] pu:1").unwrap();
        assert_eq!(d.attached_indexes(), Some(&[1, 0][..]));

        for bad in [
            "pu:4(indexes=0,1,2)",
            "pu:4(indexes=0,1,2,3,4)",
            "pu:4(indexes=0,1,1,2)",
            "pu:4(indexes=0,,1,2)",
            "pu:4(indexes=0,1,2,)",
            "pu:4(indexes=)",
            "pu:4(indexes=0,1,2,99999999999)",
            "pu:4(indexes=0,1,2,16777216)",
            "pack:2 core:2 pu:2(indexes=2*2:1*2)",
            "pack:2 core:2 pu:2(indexes=0*2)",
            "pack:2 core:2 pu:2(indexes=2*0)",
            "pack:2 core:2 pu:2(indexes=2*)",
            "pack:2 core:2 pu:2(indexes=2x2)",
            "pack:2 core:2 pu:2(indexes=2*4:)",
            "pack:2 core:2 pu:2(indexes=2*4;1*2)",
            "pack:2 core:2 pu:2(indexes=1*3:2*2)",
            "pack:2 core:2 pu:2(indexes=pack:pu)",
            "pack:2 core:2 pu:2(indexes=core:core)",
            "pack:2 core:2 pu:2(indexes=die)",
            "pack:2 core:2 pu:2(indexes=foo)",
            "pack:2(indexes=core) core:2 pu:2",
            "pack:2 [numa(indexes=0,1,2)] pu:1",
            "[numa(indexes=0,0)] pack:2 [numa] pu:1",
        ] {
            assert_eq!(kind(bad), K::BadIndexes, "{bad}");
        }
        assert_eq!(kind("pu:4(indexes=osdev)"), K::DisallowedType);
        // 1*3:2*2 over 6 objects makes [0,1,5,3,1,2]: hwloc misses the duplicate.
        assert!(err("pack:2 core:3 pu:1(indexes=1*3:2*2)")
            .message()
            .contains("twice"));
        assert_eq!(err("pu:4(indexes=0,1,1,2)").position(), Some(13));
    }

    #[test]
    fn parse_limits() {
        assert!(parse("pack:1024 core:1024 pu:1").is_ok());
        let e = err("pack:1024 core:1024 pu:2");
        assert_eq!(e.kind(), K::TooLarge);
        assert!(e.message().contains("1048576"), "{e}");
        assert_eq!(e.position(), Some(20));
        let many = "group:1 ".repeat(MAX_LEVELS - 1) + "pu:1";
        assert!(parse(&many).is_ok());
        let too_many = "group:1 ".repeat(MAX_LEVELS) + "pu:1";
        assert_eq!(kind(&too_many), K::TooManyLevels);
        let objects = "pack:1024 core:1024 l2:1 l1:1 pu:1";
        assert_eq!(kind(objects), K::TooLarge);
        // Parsing is fine but building needs too much memory or time.
        let d = parse("pu:1048576").unwrap();
        assert_eq!(
            d.build(lstopo_topology()).err().map(|e| e.kind()),
            Some(K::TooLarge)
        );
        let d = parse("pack:4 core:65536 pu:4").unwrap();
        assert_eq!(
            d.build(lstopo_topology()).err().map(|e| e.kind()),
            Some(K::TooLarge)
        );
        let d = parse("pu:8192").unwrap();
        let e = d.build(lstopo_topology()).err().unwrap();
        assert_eq!(e.kind(), K::TooLarge);
        assert!(e.message().contains("limit"), "{e}");
        assert_eq!(e.position(), None);
        let idx: Vec<String> = (0..128u32).map(|i| (i * 131_000).to_string()).collect();
        let d = parse(&format!("pack:128 pu:1(indexes={})", idx.join(","))).unwrap();
        assert_eq!(
            d.build(lstopo_topology()).err().map(|e| e.kind()),
            Some(K::TooLarge)
        );
        // Large but realistic machines build.
        let t = build("pack:4 [numa] l3:2 core:16 pu:4");
        assert_eq!(count(&t, ObjType::PU), 512);
        let t = build("pu:4096");
        assert_eq!(count(&t, ObjType::PU), 4096);
    }

    #[test]
    fn error_display() {
        let e = err("pack:2 foo:2 pu:2");
        assert_eq!(e.kind(), K::UnknownType);
        assert_eq!(e.position(), Some(7));
        assert_eq!(
            e.to_string(),
            "invalid synthetic description at byte 7: unknown object type `foo:2`"
        );
        let e = err("pack:2 ");
        assert!(e.to_string().contains("PUs"), "{e}");
        let long = "x".repeat(100);
        assert!(err(&long).message().len() < 60);
        // Non-ASCII input does not panic.
        assert_eq!(kind("pack:2 é:2 pu:1"), K::UnknownType);
        assert_eq!(kind("pack:2(memory=é) pu:1"), K::BadSize);
        assert_eq!(kind("pack:2 [numaé] pu:1"), K::UnclosedBracket);
    }

    // ----------------------------------------------------------------- build

    #[test]
    fn build_counts_and_indexes() {
        let t = build("pack:2 core:2 pu:2");
        assert_eq!(count(&t, ObjType::Package), 2);
        assert_eq!(count(&t, ObjType::Core), 4);
        assert_eq!(count(&t, ObjType::PU), 8);
        assert_eq!(count(&t, ObjType::NUMANode), 1);
        assert_eq!(
            os_indexes(&t, ObjType::Core),
            [Some(0), Some(1), Some(2), Some(3)]
        );
        assert_eq!(t.cpuset().to_string(), "0x000000ff");
        let root = t.obj(t.root());
        assert_eq!(root.obj_type, ObjType::Machine);
        let infos: Vec<(&str, &str)> = t
            .infos
            .iter()
            .map(|i| (i.name.as_str(), i.value.as_str()))
            .collect();
        assert_eq!(
            infos,
            [
                ("Backend", "Synthetic"),
                ("SyntheticDescription", "pack:2 core:2 pu:2")
            ]
        );
        assert!(t.support.iter().any(|s| s == "discovery.numa_memory"));
        assert!(!t.is_thissystem);
        let n = t.obj(t.objs_by_type(ObjType::NUMANode)[0]);
        assert_eq!(n.numa().unwrap().local_memory, 1 << 30);
        assert_eq!(n.numa().unwrap().page_types[0].size, 4096);
        assert_eq!(n.numa().unwrap().page_types[0].count, 1 << 18);
        assert_eq!(n.parent(), Some(t.root()));
    }

    #[test]
    fn build_caches_groups_and_memory() {
        let t = build(
            "pack:2 [numa(memory=2GiB)] l3:1(size=32MB) l2:2 l1d:1(size=48KiB) l1i:1 core:1 pu:2",
        );
        let l3 = t.obj(t.objs_by_type(ObjType::L3Cache)[0]);
        let c = l3.cache().unwrap();
        assert_eq!(
            (c.size, c.depth, c.linesize, c.kind),
            (32_000_000, 3, 64, CacheKind::Unified)
        );
        assert_eq!(l3.os_index, None);
        let l1 = t.obj(t.objs_by_type(ObjType::L1Cache)[0]);
        assert_eq!(l1.cache().unwrap().kind, CacheKind::Data);
        assert_eq!(l1.cache().unwrap().size, 48 << 10);
        let l1i = t.obj(t.objs_by_type(ObjType::L1ICache)[0]);
        assert_eq!(l1i.cache().unwrap().kind, CacheKind::Instruction);
        assert_eq!(count(&t, ObjType::L2Cache), 4);
        assert_eq!(count(&t, ObjType::PU), 8);
        let nodes = t.objs_by_type(ObjType::NUMANode);
        assert_eq!(nodes.len(), 2);
        for (i, &n) in nodes.iter().enumerate() {
            let o = t.obj(n);
            assert_eq!(o.numa().unwrap().local_memory, 2 << 30);
            assert_eq!(o.os_index, Some(i as u32));
            assert_eq!(t.obj(o.parent().unwrap()).obj_type, ObjType::Package);
        }
        assert_eq!(t.obj(t.root()).total_memory, 4 << 30);

        let t = build("group:2 numa:1 core:2 pu:1");
        let g = t.obj(t.objs_by_type(ObjType::Group)[0]);
        let ga = g.group().unwrap();
        assert_eq!((ga.kind, ga.subkind), (group_kind::SYNTHETIC, 0));
        assert_eq!(g.memory_children().len(), 1);
        let t = build("numa:2 core:2 pu:1");
        let g = t.obj(t.objs_by_type(ObjType::Group)[0]);
        assert_eq!(g.group().unwrap().kind, group_kind::MEMORY);
    }

    #[test]
    fn build_os_indexes() {
        let t = build("pack:2 core:2 pu:2(indexes=pack)");
        assert_eq!(
            os_indexes(&t, ObjType::PU),
            [0, 2, 4, 6, 1, 3, 5, 7].map(Some)
        );
        let core0 = t.obj(t.objs_by_type(ObjType::Core)[0]);
        assert_eq!(core0.cpuset.as_ref().unwrap().to_string(), "0x00000005");
        let t = build("pack:2 [numa(indexes=1,0)] pu:1");
        assert_eq!(os_indexes(&t, ObjType::NUMANode), [Some(1), Some(0)]);
        let t = build("pack:2(indexes=1,0) l2:2(indexes=3,2,1,0) pu:1");
        assert_eq!(os_indexes(&t, ObjType::Package), [Some(1), Some(0)]);
        assert_eq!(os_indexes(&t, ObjType::L2Cache), [3, 2, 1, 0].map(Some));
        let t = build("[numa] pack:2 [numa] pu:1");
        // Creation order: each package's node, then the root's.
        assert_eq!(
            os_indexes(&t, ObjType::NUMANode),
            [Some(0), Some(1), Some(2)]
        );
        let root = t.obj(t.root());
        assert_eq!(t.obj(root.memory_children()[0]).os_index, Some(2));
    }

    #[test]
    fn build_memory_side_caches() {
        let t = build("pack:2 [numa(memory=1GB memorysidecachesize=256MiB)] pu:2");
        let mc = t.objs_by_type(ObjType::MemCache);
        assert_eq!(mc.len(), 2);
        let m = t.obj(mc[0]);
        assert_eq!(m.cache().unwrap().size, 256 << 20);
        assert_eq!(t.obj(m.memory_children()[0]).obj_type, ObjType::NUMANode);
        assert_eq!(
            exp("pack:2 [numa(memory=1GB memorysidecachesize=256MiB)] pu:2"),
            "Package:2 [NUMANode(memory=1000000000 memorysidecachesize=268435456)] PU:2"
        );
        // Memory-side caches are dropped by the default filters.
        let d = parse("numa:2(memorysidecachesize=1GB) pu:1").unwrap();
        let t = d.build(Topology::new()).unwrap();
        assert_eq!(count(&t, ObjType::MemCache), 0);
    }

    #[test]
    fn build_respects_filters() {
        let d = parse("pack:2 l2:1 l1i:1 core:1 pu:2").unwrap();
        let t = d.build(Topology::new()).unwrap();
        assert_eq!(count(&t, ObjType::L1ICache), 0);
        assert_eq!(count(&t, ObjType::L2Cache), 2);
        let mut f = Topology::new();
        f.set_cache_types_filter(TypeFilter::KeepNone);
        let t = d.build(f).unwrap();
        assert_eq!(count(&t, ObjType::L2Cache), 0);
        assert_eq!(
            export(&t, ExportFlags::NONE).unwrap(),
            "[NUMANode(memory=1073741824)] Package:2 Core:1 PU:2"
        );
    }

    // ----------------------------------------------------------------- export

    #[test]
    fn export_matches_hwloc_outputs() {
        // Outputs of hwloc 2.9's `lstopo-no-graphics -i DESC --of synthetic`.
        for (desc, want) in [
            ("pack:2 core:2 pu:2", "[NUMANode(memory=1073741824)] Package:2 Core:2 PU:2"),
            ("2 3 4 5 6", "Package:2 Group:3 [NUMANode(memory=1073741824)] L2Cache:4(size=4194304) Core:5 PU:6"),
            ("2 2", "Group:2 [NUMANode(memory=1073741824)] PU:2"),
            ("numa:2 core:2 pu:1", "Group:2 [NUMANode(memory=1073741824)] Core:2 PU:1"),
            ("pack:2 [numa] [numa] pu:2", "Package:2 [NUMANode] [NUMANode] PU:2"),
            ("[numa] pack:2 pu:2", "[NUMANode] Package:2 PU:2"),
            ("pack:2 [numa] pu:2 [numa]", "Package:2 [NUMANode] Group:2 [NUMANode] PU:1"),
            ("pack:2 pu:2(indexes=0,2,1,3)", "[NUMANode(memory=1073741824)] Package:2 PU:2(indexes=2*2:1*2)"),
            ("pack:2 core:2 pu:2(indexes=core:pack)", "[NUMANode(memory=1073741824)] Package:2 Core:2 PU:2(indexes=2*4:1*2)"),
            ("l2:2 l2:2 pu:1", "[NUMANode(memory=1073741824)] L2Cache:2(size=4194304) L2Cache:2(size=4194304) PU:1"),
            ("group:2 group:2 pu:1", "[NUMANode(memory=1073741824)] Group:2 PU:2"),
            ("l3d:2 pu:2", "[NUMANode(memory=1073741824)] L3dCache:2(size=16777216) PU:2"),
            ("core:2 pack:2 pu:1", "[NUMANode(memory=1073741824)] Core:2 Package:2 PU:1"),
            ("Tile:2 core:2 pu:1", "[NUMANode(memory=1073741824)] Group:2 Core:2 PU:1"),
            ("pack:2 [numa(memory=1GB)] [numa(memory=2GB)] pu:2", "Package:2 [NUMANode(memory=1000000000)] [NUMANode(memory=2000000000)] PU:2"),
            ("[NUMANode(indexes=2,0,1)] Package:2 [NUMANode] PU:1", "[NUMANode] Package:2 [NUMANode(indexes=2,0,1)] PU:1"),
        ] {
            assert_eq!(exp(desc), want, "{desc}");
        }
    }

    #[test]
    fn export_flags() {
        let t =
            build("pack:2 [numa(memory=1GB)] die:1 l2:2 l1d:1 core:1 pu:2(indexes=pack:die:core)");
        let e = |f: ExportFlags| export(&t, f).unwrap();
        assert_eq!(
            e(ExportFlags::NONE),
            "Package:2 [NUMANode(memory=1000000000)] Die:1 L2Cache:2(size=4194304) L1dCache:1(size=32768) Core:1 PU:2(indexes=4*2:2*2:1*2)"
        );
        assert_eq!(
            e(ExportFlags::NO_EXTENDED_TYPES),
            "Socket:2 [NUMANode(memory=1000000000)] Group:1 Cache:2(size=4194304) Cache:1(size=32768) Core:1 PU:2(indexes=4*2:2*2:1*2)"
        );
        assert_eq!(
            e(ExportFlags::NO_ATTRS),
            "Package:2 [NUMANode] Die:1 L2Cache:2 L1dCache:1 Core:1 PU:2"
        );
        assert_eq!(
            e(ExportFlags::V1),
            "Socket:2 NUMANode:1(memory=1000000000) Group:1 L2Cache:2(size=4194304) L1dCache:1(size=32768) Core:1 PU:2(indexes=4*2:2*2:1*2)"
        );
        assert_eq!(
            e(ExportFlags::IGNORE_MEMORY),
            "Package:2 Die:1 L2Cache:2(size=4194304) L1dCache:1(size=32768) Core:1 PU:2(indexes=4*2:2*2:1*2)"
        );
        assert_eq!(ExportFlags::from_bits(16), None);
        assert_eq!(ExportFlags::from_bits(15).unwrap().bits(), 15);
        assert!((ExportFlags::V1 | ExportFlags::NO_ATTRS).contains(ExportFlags::V1));
        let t = build("pack:2 [numa] [numa] pu:2");
        assert_eq!(
            export(&t, ExportFlags::V1).unwrap_err().kind(),
            K::V1Incompatible
        );
        let t = build("[numa] pack:2 [numa] pu:1");
        assert_eq!(
            export(&t, ExportFlags::V1).unwrap_err().kind(),
            K::V1Incompatible
        );
    }

    #[test]
    fn export_errors() {
        // Not symmetric: packages with 2 and 3 PUs.
        let mut t = Topology::new();
        for (i, set) in ["0x3", "0x1c"].iter().enumerate() {
            let set: CpuSet = set.parse().unwrap();
            for pu in set.iter() {
                t.insert_by_cpuset(Object::with_cpuset(
                    ObjType::PU,
                    Some(pu),
                    CpuSet::from_index(pu),
                ))
                .unwrap();
            }
            t.insert_by_cpuset(Object::with_cpuset(ObjType::Package, Some(i as u32), set))
                .unwrap();
        }
        t.finish().unwrap();
        let e = export(&t, ExportFlags::NONE).unwrap_err();
        assert_eq!(e.kind(), K::NonSymmetric);
        assert_eq!(e.position(), None);
        assert!(e.to_string().contains("symmetric"));
        // Memory attached asymmetrically: a node on one package only.
        let mut t = lstopo_topology();
        let d = parse("pack:2 [numa] pu:2").unwrap();
        t = d.build(t).unwrap();
        let pack0 = t.objs_by_type(ObjType::Package)[0];
        let mut n = Object::with_cpuset(
            ObjType::NUMANode,
            Some(9),
            t.obj(pack0).cpuset.clone().unwrap(),
        );
        n.nodeset = Some(NodeSet::from_index(9));
        t.insert_by_cpuset(n).unwrap();
        // Node 9 was not in the topology when it was first finished.
        t.allowed_nodeset = NodeSet::full();
        assert_eq!(
            export(&t, ExportFlags::NONE).unwrap_err().kind(),
            K::NotFinished
        );
        t.finish().unwrap();
        assert_eq!(
            export(&t, ExportFlags::NONE).unwrap_err().kind(),
            K::MemoryNotSymmetric
        );
        assert_eq!(
            export(&t, ExportFlags::IGNORE_MEMORY).unwrap(),
            "Package:2 PU:2"
        );
    }

    fn round_trip(desc: &str) -> String {
        let first = exp(desc);
        let second = exp(&first);
        assert_eq!(first, second, "{desc:?} -> {first:?} -> {second:?}");
        let (a, b) = (build(desc), build(&first));
        for ty in ObjType::ALL {
            assert_eq!(count(&a, ty), count(&b, ty), "{desc:?}: {ty}");
            if matches!(ty, ObjType::PU | ObjType::NUMANode) {
                assert_eq!(os_indexes(&a, ty), os_indexes(&b, ty), "{desc:?}: {ty}");
            }
        }
        first
    }

    #[test]
    fn export_round_trips() {
        for desc in [
            "pack:2 core:2 pu:2",
            "pack:2 node:1 l2:1 core:2 pu:1",
            "2 3 4 5 6",
            "2 2 2 2 2 2 2 2 2 2",
            "package:1 group:4 [numa] [numa] core:16 pu:4",
            "pack:3 [numa] L2:2 core:4 pu:2",
            "[numa] pack:2 [numa] pu:1",
            "[NUMANode(indexes=2,0,1)] Package:2 [NUMANode] PU:1",
            "pack:2 [numa(indexes=1,0)] pu:2",
            "pack:4 numa:2(indexes=7,6,5,4,3,2,1,0) core:2 pu:1",
            "pack:2 core:3 pu:2(indexes=0,6,1,7,2,8,3,9,4,10,5,11)",
            "pack:2 core:2 pu:2(indexes=1,0,3,2,5,4,7,6)",
            "pack:2 pu:2(indexes=4,5,6,7)",
            "numa:2(memorysidecachesize=64MB) core:2 pu:2",
            "pack:2 [numa(memorysidecachesize=1GB)] [numa] pu:2",
            "group3:2 group1:2 pu:2",
            "l2:2 l2:2 pu:1",
            "pack:2 pu:2 [numa]",
        ] {
            round_trip(desc);
        }
    }

    // ----------------------------------------------------------------- properties

    /// Level kinds a random description picks from, in a valid order.
    const ORDER: &[&str] = &[
        "group", "pack", "die", "numa", "l3", "l2", "l1d", "l1i", "core",
    ];

    fn arb_description() -> impl Strategy<Value = String> {
        (
            proptest::collection::vec((any::<bool>(), 1u32..4, 0u8..6), ORDER.len()),
            1u32..4,
            0usize..ORDER.len() + 2,
            any::<bool>(),
            any::<u64>(),
        )
            .prop_map(|(picks, pus, attach_at, pu_perm, seed)| {
                let mut parts: Vec<String> = Vec::new();
                let numa_level = picks[3].0;
                let mut widths = 1u64;
                let mut attach = (attach_at, false);
                if !numa_level && attach.0 == 0 {
                    parts.push("[numa(memory=2GB)]".to_string());
                    attach.1 = true;
                }
                for (i, (name, &(take, arity, attr))) in ORDER.iter().zip(&picks).enumerate() {
                    if !take {
                        continue;
                    }
                    widths *= u64::from(arity);
                    let mut level = format!("{name}:{arity}");
                    match (*name, attr) {
                        ("numa", 1..=3) => level.push_str(&format!("(memory={attr}GiB)")),
                        ("l3" | "l2" | "l1d" | "l1i", 1..=3) => {
                            level.push_str(&format!("(size={}KiB)", u32::from(attr) * 256))
                        }
                        _ => {}
                    }
                    parts.push(level);
                    if !numa_level && !attach.1 && attach.0 == i + 1 {
                        parts.push("[numa]".to_string());
                        attach.1 = true;
                    }
                }
                let total = widths * u64::from(pus);
                if pu_perm && total > 1 {
                    // A rotation of the PU indexes.
                    let shift = seed % total;
                    let idx: Vec<String> = (0..total)
                        .map(|i| ((i + shift) % total).to_string())
                        .collect();
                    parts.push(format!("pu:{pus}(indexes={})", idx.join(",")));
                } else {
                    parts.push(format!("pu:{pus}"));
                }
                parts.join(" ")
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        #[test]
        fn prop_random_descriptions_round_trip(desc in arb_description()) {
            let d = parse(&desc).unwrap();
            let t = build(&desc);
            prop_assert_eq!(count(&t, ObjType::PU) as u64, d.pu_count());
            let mut pus = os_indexes(&t, ObjType::PU);
            pus.sort();
            prop_assert_eq!(pus, (0..d.pu_count() as u32).map(Some).collect::<Vec<_>>());
            round_trip(&desc);
        }

        #[test]
        fn prop_parse_never_panics(s in "[ -~\n]{0,40}") {
            if let Ok(d) = parse(&s) {
                if d.object_count() < 2000 {
                    let _ = d.build(lstopo_topology()).map(|t| export(&t, ExportFlags::NONE));
                }
            }
        }

        #[test]
        fn prop_parse_grammar_soup(parts in proptest::collection::vec(
            prop_oneof![
                Just("pack:"), Just("core:"), Just("pu:"), Just("l2:"), Just("numa:"),
                Just("group:"), Just("[numa"), Just("]"), Just("("), Just(")"), Just(" "),
                Just("2"), Just("0"), Just("3"), Just("size=1MB"), Just("memory=1GB"),
                Just("indexes="), Just("0,1"), Just("pack:core"), Just("2*2:1*2"), Just(","),
                Just(":"), Just("*"), Just("0x"), Just("memorysidecachesize=1kB"),
            ],
            0..16,
        )) {
            let s: String = parts.concat();
            if let Ok(d) = parse(&s) {
                prop_assert!(d.pu_count() >= 1);
                let t = d.build(lstopo_topology()).unwrap();
                let e = export(&t, ExportFlags::NONE).unwrap();
                let again = export(&build(&e), ExportFlags::NONE).unwrap();
                prop_assert_eq!(e, again);
            } else if let Err(e) = parse(&s) {
                prop_assert!(e.position().is_some_and(|p| p <= s.len()));
            }
        }
    }

    // ----------------------------------------------------------------- differential

    /// Descriptions compared against hwloc's lstopo.
    const DIFFERENTIAL: &[&str] = &[
        "pack:2 core:2 pu:2",
        "pack:2 node:1 l2:1 core:2 pu:1",
        "2 3 4 5 6",
        "Package:2 NUMANode:3 L2Cache:4 Core:5 PU:6",
        "package:1 group:4 [numa] [numa] core:16 pu:4",
        "pack:3 [numa] L2:2 core:4 pu:2",
        "node:2 core:3 pu:4",
        "L2iCache:2(size=32kB) pu:2",
        "NUMANode:3(memory=16MB) pu:2",
        "core:2 PU:2(indexes=0,2,1,3)",
        "numa:2 core:2 PU:2(indexes=numa:core)",
        "(memory=4GB) pack:2 pu:2",
        "2",
        "2 2",
        "2 2 2 2 2 2 2 2",
        "2 2 2 2 2 2 2 2 2 2",
        "pack:2 [numa(memory=2GiB)] die:2 l3:1(size=32MB) l2:4(size=1MiB) l1d:1(size=48kB) l1i:1 core:1 pu:2",
        "group:2 numa:1 core:2 pu:1",
        "numa:2 core:2 pu:1",
        "pack:2 [numa] [numa] pu:2",
        "[numa] pack:2 [numa] pu:1",
        "pack:2 pu:2 [numa]",
        "pack:2 [numa] pu:2 [numa]",
        "core:2 pack:2 pu:1",
        "l2:2 l2:2 pu:1",
        "group:2 group:2 pu:1",
        "Tile:2 core:2 pu:1",
        "pack:2 core:2 pu:2(indexes=2*4:1*2)",
        "pack:2 core:2 pu:2(indexes=core)",
        "pack:4 numa:2(indexes=7,6,5,4,3,2,1,0) core:2 pu:1",
        "pack:2 [numa(indexes=1,0)] pu:2",
        "pack:2 [numa(memory=1GB)] [numa(memory=2GB indexes=3,2,1,0)] pu:2",
        "socket:2 l3:1 l2:2 l1:1 co:1 pu:2",
        "numa:4(memory=0x100000000) pu:2",
        "group3:2 group1:2 pu:2",
        "pack:2 die:2 [numa] core:4 pu:2",
        "l1:4 pu:1(indexes=3,2,1,0)",
        "pack:2 pu:4(indexes=0,1,2,3,4,5,6,7)",
        "pack:2\ncore:2 pu:1  ",
        "pack:8 l3:2 core:8 pu:2",
        "numa:2 pack:2 core:2 pu:1",
        "pack:2 numa:2 pu:1",
        "numa:2 l3:1 core:2 pu:1",
        "l3:2 numa:1 core:2 pu:2",
        "pack:2 core:2 pu:2(indexes=pack)",
        "[NUMANode(indexes=2,0,1)] Package:2 [NUMANode] PU:1",
        "pack:2 pu:2(indexes=4,5,6,7)",
        "pack:2 group:3 [numa] pu:2",
        "die:2 pack:2 pu:2",
        "l1i:2 l1d:2 pu:1",
        "module:2 pu:2",
        "Module:2 pu:2",
        "pack:2 core:2 pu:2(indexes=2*2:1*2)",
        "pu:4(indexes=0,1,1,2)",
        "memcache:2 pu:2",
        "l2:2(size=) pu:1",
    ];

    fn lstopo(args: &[&str]) -> Option<String> {
        let out = std::process::Command::new("lstopo-no-graphics")
            .args(args)
            .env_remove("HWLOC_SYNTHETIC")
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim_end().to_string())
    }

    /// Per object in XML order: type, os index, cpuset, nodeset, cache size,
    /// NUMA memory, group kind and subkind.
    fn xml_objects(xml: &str) -> Vec<String> {
        let mut out = Vec::new();
        for line in xml.lines() {
            let line = line.trim_start();
            if !line.starts_with("<object ") {
                continue;
            }
            let attr = |name: &str| {
                let key = format!(" {name}=\"");
                line.find(&key).map(|i| {
                    let rest = &line[i + key.len()..];
                    rest[..rest.find('"').unwrap_or(rest.len())].to_string()
                })
            };
            out.push(format!(
                "{} os={:?} cpuset={:?} nodeset={:?} size={:?} memory={:?} kind={:?} subkind={:?} gp={:?}",
                attr("type").unwrap_or_default(),
                attr("os_index"),
                attr("cpuset"),
                attr("nodeset"),
                attr("cache_size"),
                attr("local_memory"),
                attr("kind"),
                attr("subkind"),
                attr("gp_index"),
            ));
        }
        out
    }

    fn our_objects(t: &Topology) -> Vec<String> {
        t.iter_dfs()
            .into_iter()
            .map(|id| {
                let o = t.obj(id);
                format!(
                    "{} os={:?} cpuset={:?} nodeset={:?} size={:?} memory={:?} kind={:?} subkind={:?} gp={:?}",
                    o.obj_type.xml_name(),
                    o.os_index.map(|v| v.to_string()),
                    o.cpuset.as_ref().map(|c| c.to_string()),
                    o.nodeset.as_ref().map(|c| c.to_string()),
                    o.cache().map(|c| c.size.to_string()),
                    o.numa().map(|n| n.local_memory.to_string()).filter(|m| m != "0"),
                    o.group().map(|g| g.kind.to_string()),
                    o.group().map(|g| g.subkind.to_string()),
                    Some(o.gp_index.to_string()),
                )
            })
            .collect()
    }

    /// Compares exports and objects with hwloc's lstopo, when installed.
    /// Run with `--nocapture` to see the report.
    #[test]
    fn differential_against_lstopo() {
        if lstopo(&["--version"]).is_none() {
            std::eprintln!("lstopo-no-graphics not found: skipping the differential check");
            return;
        }
        let mut report: BTreeMap<&str, usize> = BTreeMap::new();
        let mut failures = Vec::new();
        for &desc in DIFFERENTIAL {
            let theirs = lstopo(&["-i", desc, "--of", "synthetic"]);
            let ours = parse(desc).and_then(|d| d.build(lstopo_topology()));
            let (theirs, ours) = match (theirs, ours) {
                (None, Err(_)) => {
                    *report.entry("both refuse").or_default() += 1;
                    continue;
                }
                (Some(_), Err(e)) if desc.contains("indexes") => {
                    // hwloc ignores bad index lists; we refuse them.
                    std::eprintln!("expected difference: {desc:?}: {e}");
                    *report
                        .entry("we refuse bad indexes hwloc ignores")
                        .or_default() += 1;
                    continue;
                }
                (Some(_), Err(e)) if desc.contains("size=)") => {
                    std::eprintln!("expected difference: {desc:?}: {e}");
                    *report
                        .entry("we refuse empty sizes hwloc reads as 0")
                        .or_default() += 1;
                    continue;
                }
                (None, Ok(_)) if desc.starts_with("memcache") => {
                    *report.entry("hwloc aborts, we refuse").or_default() += 1;
                    continue;
                }
                (t, o) => (t, o),
            };
            let (Some(theirs), Ok(t)) = (theirs, ours) else {
                failures.push(format!("{desc:?}: acceptance differs"));
                continue;
            };
            let ours_s = export(&t, ExportFlags::NONE).unwrap();
            if ours_s != theirs {
                failures.push(format!("{desc:?}: export {ours_s:?} != hwloc {theirs:?}"));
                continue;
            }
            for flags in 1..16u64 {
                let f = flags.to_string();
                let theirs = lstopo(&[
                    "-i",
                    desc,
                    "--of",
                    "synthetic",
                    "--export-synthetic-flags",
                    &f,
                ]);
                let ours = export(&t, ExportFlags::from_bits(flags).unwrap()).ok();
                if theirs != ours {
                    failures.push(format!(
                        "{desc:?} flags {flags}: {ours:?} != hwloc {theirs:?}"
                    ));
                }
            }
            let xml = lstopo(&["-i", desc, "--of", "xml"]).unwrap_or_default();
            let (mut a, mut b) = (xml_objects(&xml), our_objects(&t));
            if desc.contains("Tile") || desc.contains("Module") {
                // hwloc gives these groups an uninitialised depth.
                for v in [&mut a, &mut b] {
                    for s in v.iter_mut() {
                        if let Some(i) = s.find(" subkind=") {
                            let j = s.find(" gp=").unwrap_or(s.len());
                            s.replace_range(i..j, "");
                        }
                    }
                }
            }
            let strip_gp = |v: &[String]| -> Vec<String> {
                v.iter()
                    .map(|s| s[..s.find(" gp=").unwrap_or(s.len())].to_string())
                    .collect()
            };
            if strip_gp(&a) != strip_gp(&b) {
                let diff: Vec<String> = a
                    .iter()
                    .zip(&b)
                    .filter(|(x, y)| x != y)
                    .take(3)
                    .map(|(x, y)| format!("\n    hwloc {x}\n    ours  {y}"))
                    .collect();
                failures.push(format!(
                    "{desc:?}: objects differ ({} vs {}){}",
                    a.len(),
                    b.len(),
                    diff.concat()
                ));
                continue;
            }
            if a != b {
                *report.entry("same objects, gp_index differs").or_default() += 1;
            } else {
                *report.entry("identical").or_default() += 1;
            }
        }
        std::eprintln!(
            "differential report over {} descriptions: {report:?}",
            DIFFERENTIAL.len()
        );
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
