//! Reading a description: type names, numbers, sizes, attributes, and the
//! levels they make ([`parse`](super::parse)).

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use crate::object::{CacheKind, ObjKind, ObjType};

use super::indexes::resolve_indexes;
use super::{
    Attached, DEFAULT_NUMA_MEMORY, Description, Level, LevelOrigin, MAX_LEVELS, MAX_OBJECTS,
    MAX_PUS, SyntheticError, SyntheticErrorKind, token_at,
};

// Type names
// ---------------------------------------------------------------------------

/// A type as read from a description.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct TypeSpec {
    pub(super) ty: ObjType,
    pub(super) cache_kind: Option<CacheKind>,
    pub(super) group_depth: Option<u32>,
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
pub(super) fn decimal_u32(s: &[u8], pos: usize) -> Option<(Option<u32>, usize)> {
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
pub(super) fn scan_type(s: &[u8], pos: usize) -> Option<(TypeSpec, usize)> {
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
pub(super) fn c_number(s: &[u8], pos: usize) -> Option<(Option<u64>, usize)> {
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
                ));
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
                // hwloc 2.14 (and 3.0) give attached nodes the NUMA
                // level's default too, also for an explicit 0; 2.9 none.
                memory: match attrs.size {
                    Some(size) if size != 0 => size,
                    _ => DEFAULT_NUMA_MEMORY,
                },
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
                        ));
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
                ));
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
                ));
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
