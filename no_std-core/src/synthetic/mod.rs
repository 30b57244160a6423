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
//! Where hwloc 2.14 (the reference) and hwloc 3.0 differ, this module
//! follows 2.14 semantics and accepts the 3.0 syntax additions:
//!
//! * `memorysidecachesize=` (3.0) is accepted and builds a memory-side cache.
//! * NUMA nodes in brackets get 1 GiB when no memory size is given, like
//!   NUMA levels (2.14 and 3.0; 2.9 gave them none).
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

mod builder;
mod exporter;
mod indexes;
mod parser;
#[cfg(test)]
mod tests;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::object::{CacheKind, ObjType};

pub use exporter::{ExportFlags, export};
pub use parser::parse;

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

/// Most 64-bit words of sets a build may allocate, estimated as the
/// number of objects times the words needed to hold the highest PU index
/// (CPU sets) and the highest NUMA node index (node sets).
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
    /// Memory of each node in bytes ([`DEFAULT_NUMA_MEMORY`] when not given).
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

    /// The highest NUMA node OS index: of a NUMA level's `indexes=` or
    /// width, and of the nodes attached in brackets.
    fn max_numa_index(&self) -> u64 {
        let mut max = 0;
        for l in self
            .levels
            .iter()
            .filter(|l| l.obj_type == ObjType::NUMANode)
        {
            let m = match &l.indexes {
                Some(idx) => idx.iter().copied().max().map_or(0, u64::from),
                None => l.width.saturating_sub(1),
            };
            max = max.max(m);
        }
        let attached = match &self.attached_indexes {
            Some(idx) => idx.iter().copied().max().map_or(0, u64::from),
            None => self.attached_total.saturating_sub(1),
        };
        max.max(attached)
    }

    /// Checks the build budgets ([`MAX_BUILD_SET_WORDS`], [`MAX_BUILD_WORK`]).
    fn check_budget(&self) -> Result<(), SyntheticError> {
        let objects = self.object_count();
        // Every object holds a CPU set and a node set, each as wide as the
        // highest index it may hold.
        let (pu, numa) = (self.max_pu_index(), self.max_numa_index());
        let words = (pu / 64 + 1).saturating_add(numa / 64 + 1);
        if objects.saturating_mul(words) > MAX_BUILD_SET_WORDS {
            return Err(SyntheticError::new(
                SyntheticErrorKind::TooLarge,
                None,
                format!(
                    "{objects} objects with PU indexes up to {pu} and NUMA node indexes up to {numa} need more than {MAX_BUILD_SET_WORDS} set words, the limit"
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
