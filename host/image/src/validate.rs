//! Checks of an archive bytecheck accepted: bytecheck proves every offset,
//! length, tag and string sound (the body holds only a few dozen of them:
//! the object table is columns of plain integers); these checks prove the
//! topology's own links sound, so that the view and the rebuild can index
//! and slice without bounds failures and walk without cycles.
//!
//! What the view and the rebuild rely on, and where it is proved:
//! - every column of the object table has `n` entries (`first_child` and
//!   `info_start` `n + 1`), `n ≥ 1`: [`lengths`];
//! - every type code is known, every attribute, string and set index is in
//!   its table or the "none" value, the attribute fits the type, normal and
//!   memory objects have their four sets: [`objects`];
//! - `first_child` and `info_start` are non-decreasing from their first
//!   value to the length of what they index, so that every run is a valid
//!   range; the children runs tile `1..n` (they start at 1 and end at
//!   `n`); every object `c ≥ 1` has a parent `p < c` and lies in the run of
//!   `p`.  The runs being disjoint, each object is in exactly one run, its
//!   parent's: the table is a tree rooted at 0, walked without cycles.
//!   Within a run, families come in order: [`tree`];
//! - the set table's runs are valid ranges of at most [`MAX_SET_WORDS`]
//!   words: [`sets`];
//! - every other object, set or string index (levels, distances, memory
//!   attributes, CPU kinds, tiers, PCI localities, infos) is in range.
//!
//! The per-object checks are branch-free loops accumulating one "bad"
//! flag (the image is refused as a whole); only a refused image is walked
//! again to say which entry was wrong.

use wloc_core::object::{ObjKind, ObjType};

use crate::ImageError;
use crate::format::{self, ArchivedAttr, ArchivedBody, ArchivedInit, F_OS_INDEX, F_SYMMETRIC};

fn bad(m: impl Into<String>) -> ImageError {
    ImageError::Invalid(m.into())
}

/// Sets are bounded so that a hostile image cannot make the rebuild
/// allocate without limit (2^14 words: a million PUs or NUMA nodes, the
/// same cap as for the records of components).
const MAX_SET_WORDS: u32 = wloc_core::bitmap::MAX_SET_BITS / 64;

/// Global persistent indexes are bounded far below `u64::MAX` (2^62).
const MAX_GP_INDEX: u64 = 1 << 62;

/// Attribute kinds, as [`ArchivedAttr`]'s variants.
const A_NONE: u8 = 0;
const A_NUMA: u8 = 1;
const A_CACHE: u8 = 2;
const A_GROUP: u8 = 3;
const A_PCI: u8 = 4;
const A_BRIDGE: u8 = 5;
const A_OSDEV: u8 = 6;
/// Matches no type: a cache attribute with an unknown cache kind, an
/// index past the attribute table.
const A_INVALID: u8 = 0xff;
/// The attribute kind of an unknown type code: matches no attribute.
const A_UNKNOWN_TYPE: u8 = 0xfe;

/// What validation needs to know of a type code.
#[derive(Clone, Copy)]
struct TypeInfo {
    /// The attribute kind it must have ([`A_UNKNOWN_TYPE`] for an unknown
    /// code).
    attr: u8,
    /// Normal and memory objects have all four sets.
    needs_sets: bool,
    /// PU and NUMA OS indexes become bits of the root's sets.
    os_bounded: bool,
    /// [`format::family_rank`].
    rank: u8,
}

/// One entry per possible code, so that indexing by a `u8` needs no check.
fn type_table() -> [TypeInfo; 256] {
    let mut t = [TypeInfo {
        attr: A_UNKNOWN_TYPE,
        needs_sets: false,
        os_bounded: false,
        rank: 0,
    }; 256];
    for (code, &ty) in ObjType::ALL.iter().enumerate() {
        let attr = match ty {
            ObjType::NUMANode => A_NUMA,
            ObjType::Group => A_GROUP,
            ObjType::PCIDevice => A_PCI,
            ObjType::Bridge => A_BRIDGE,
            ObjType::OSDevice => A_OSDEV,
            ObjType::MemCache => A_CACHE,
            t if t.is_cache() => A_CACHE,
            _ => A_NONE,
        };
        debug_assert_eq!(format::obj_type(code as u8), Some(ty));
        t[code] = TypeInfo {
            attr,
            needs_sets: matches!(ty.kind(), ObjKind::Normal | ObjKind::Memory),
            os_bounded: matches!(ty, ObjType::PU | ObjType::NUMANode),
            rank: format::family_rank(ty.kind()),
        };
    }
    t
}

fn attr_kind(a: &ArchivedAttr) -> u8 {
    match a {
        ArchivedAttr::None => A_NONE,
        ArchivedAttr::Numa { .. } => A_NUMA,
        ArchivedAttr::Cache { kind, .. } => {
            if wloc_core::object::CacheKind::from_code(kind.to_native()).is_some() {
                A_CACHE
            } else {
                A_INVALID
            }
        }
        ArchivedAttr::Group { .. } => A_GROUP,
        ArchivedAttr::Pci(_) => A_PCI,
        ArchivedAttr::Bridge { .. } => A_BRIDGE,
        ArchivedAttr::OsDev(_) => A_OSDEV,
    }
}

use rkyv::rend::u32_le;

/// Whether a run table (`starts`, one more entry than runs) is
/// non-decreasing from 0 to `len`.
fn runs_ok(starts: &[u32_le], len: usize) -> bool {
    let Some(first) = starts.first() else {
        return false;
    };
    let mut bad = first.to_native() != 0;
    bad |= starts.last().map(|v| v.to_native() as usize) != Some(len);
    for w in starts.windows(2) {
        bad |= w[1].to_native() < w[0].to_native();
    }
    !bad
}

/// The largest entry of an index list is below `n`: a loop the compiler
/// vectorizes, where an early exit per entry would not be.
fn all_below(l: &[u32_le], n: usize) -> bool {
    (l.iter().fold(0u32, |m, v| m.max(v.to_native())) as usize) < n || l.is_empty()
}

/// Validates every index and the tree of an archive.
pub fn tree(b: &ArchivedBody) -> Result<(), ImageError> {
    let n = lengths(b)?;
    let nsets = sets(b)?;
    objects(b, n, nsets)?;
    links(b)?;
    rest(b, n, nsets)
}

/// Every column of the object table is well formed and has its length.
fn lengths(b: &ArchivedBody) -> Result<usize, ImageError> {
    let n = b.ty.len();
    if n == 0 {
        return Err(bad("no object"));
    }
    if n >= u32::MAX as usize {
        return Err(bad("too many objects"));
    }
    if b.flags.len() != n {
        return Err(bad(format!(
            "the flags column has {} entries for {n} objects",
            b.flags.len()
        )));
    }
    let cols = [
        ("os_index", &b.os_index, n),
        ("depth", &b.depth, n),
        ("logical_index", &b.logical_index, n),
        ("parent", &b.parent, n),
        ("gp_index", &b.gp_index, n),
        ("total_memory", &b.total_memory, n),
        ("attr", &b.attr, n),
        ("subtype", &b.subtype, n),
        ("name", &b.name, n),
        ("cpuset", &b.cpuset, n),
        ("complete_cpuset", &b.complete_cpuset, n),
        ("nodeset", &b.nodeset, n),
        ("complete_nodeset", &b.complete_nodeset, n),
        ("info_start", &b.info_start, n + 1),
    ];
    for (what, col, len) in cols {
        if !col.well_formed() || col.len() != len {
            return Err(bad(format!(
                "the {what} column is not {len} entries of 1, 2, 4 or 8 bytes"
            )));
        }
    }
    Ok(n)
}

/// The set table: valid runs of bounded length.  Returns the number of sets.
fn sets(b: &ArchivedBody) -> Result<usize, ImageError> {
    let nsets = b.set_infinite.len();
    if b.set_start.len() != nsets + 1 || !runs_ok(&b.set_start, b.set_words.len()) {
        return Err(bad("the set table's runs are not ranges of its words"));
    }
    if b.set_skip.len() != nsets {
        return Err(bad("the set table's skip counts do not match its sets"));
    }
    // Skipped and stored words together (runs checked above: no wrap).
    let mut longest = 0u64;
    for (w, skip) in b.set_start.windows(2).zip(b.set_skip.iter()) {
        let len = w[1].to_native() - w[0].to_native();
        longest = longest.max(len as u64 + skip.to_native() as u64);
    }
    if longest > MAX_SET_WORDS as u64 {
        return Err(bad("a set has too many words"));
    }
    Ok(nsets)
}

/// The per-object checks: reductions over single columns, whole (the
/// type-independent ones) or per run of objects of one type ([`typed`]).
/// On failure, the first bad object is found again to name it.
fn objects(b: &ArchivedBody, n: usize, nsets: usize) -> Result<(), ImageError> {
    let nstrings = b.strings.len() as u64;
    let nsets64 = nsets as u64;
    // Type-independent: string ranges (stored + 1, 0 for none), global
    // indexes, depths, flags.
    let mut bad = b.subtype.max() > nstrings || b.name.max() > nstrings;
    // The rebuild keeps allocating gp indexes above the largest one read:
    // bounded so that the counter cannot overflow.
    bad |= b.gp_index.max() >= MAX_GP_INDEX;
    // Depth + 8: [`wloc_core::object::Depth::from_i64`] takes normal
    // depths (0 to u32::MAX) and special ones (-3 to -8), not -1 or -2.
    let mut bad_depth = b.depth.max() > u32::MAX as u64 + 8;
    if b.depth.width == 1 {
        bad_depth |= b
            .depth
            .bytes
            .iter()
            .fold(false, |a, &d| a | (d == 6) | (d == 7));
    } else {
        b.depth.each(|_, d| bad_depth |= (d == 6) | (d == 7));
    }
    bad |= bad_depth;
    bad |= b.flags.iter().fold(0u8, |acc, f| acc | f) & !(F_SYMMETRIC | F_OS_INDEX) != 0;
    // The attribute and set columns have one width (the writer's choice),
    // so that the checks per run of one type compile once per width.
    let w = b.attr.width;
    let same = [
        &b.cpuset,
        &b.complete_cpuset,
        &b.nodeset,
        &b.complete_nodeset,
    ]
    .iter()
    .all(|c| c.width == w);
    if !same {
        return Err(ImageError::Invalid(
            "the attribute and set columns have different widths".into(),
        ));
    }
    bad |= !match w {
        1 => typed::<u8>(b, nsets64),
        2 => typed::<u16>(b, nsets64),
        4 => typed::<u32>(b, nsets64),
        _ => typed::<u64>(b, nsets64),
    };
    if bad {
        return Err(bad_object(b, n, nstrings, nsets64));
    }
    Ok(())
}

/// An unsigned integer a column entry reads as, at its own width, so
/// that the reductions below run on narrow lanes (which the compiler
/// vectorizes) rather than on 64-bit ones.
trait Lane: Copy + Ord + Into<u64> {
    const W: usize;
    const MAX: Self;
    const ZERO: Self;
    fn rd(c: &[u8]) -> Self;
}

macro_rules! lane {
    ($t:ty, $w:expr_2021) => {
        impl Lane for $t {
            const W: usize = $w;
            const MAX: Self = <$t>::MAX;
            const ZERO: Self = 0;
            #[inline(always)]
            fn rd(c: &[u8]) -> Self {
                <$t>::from_le_bytes(c[..$w].try_into().expect("chunk of the width"))
            }
        }
    };
}
lane!(u8, 1);
lane!(u16, 2);
lane!(u32, 4);
lane!(u64, 8);

#[inline(always)]
fn min_max_of<L: Lane>(bytes: &[u8]) -> (u64, u64) {
    let (lo, hi) = bytes
        .chunks_exact(L::W)
        .map(L::rd)
        .fold((L::MAX, L::ZERO), |(lo, hi), v| (lo.min(v), hi.max(v)));
    (lo.into(), hi.into())
}

/// The least and largest entries of a validated column in `range` (the
/// lane's largest value and 0 when empty).
pub(crate) fn min_max(col: &format::ArchivedCol, range: std::ops::Range<usize>) -> (u64, u64) {
    let w = col.width as usize;
    let bytes = &col.bytes[range.start * w..range.end * w];
    match w {
        1 => min_max_of::<u8>(bytes),
        2 => min_max_of::<u16>(bytes),
        4 => min_max_of::<u32>(bytes),
        _ => min_max_of::<u64>(bytes),
    }
}

/// The entries of a well-formed column whose largest entry was checked to
/// be below 2^32, as `u32`s (a widening loop the compiler vectorizes), so
/// that the checks over it are plain slice reductions.
fn decode_u32(col: &format::ArchivedCol) -> Vec<u32> {
    let b = &col.bytes[..];
    match col.width {
        1 => b.iter().map(|&v| v as u32).collect(),
        2 => b
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]) as u32)
            .collect(),
        4 => b
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        // (Entries below 2^32: the truncation is exact.)
        _ => b
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")) as u32)
            .collect(),
    }
}

/// Whether `v` never decreases.
fn non_decreasing(v: &[u32]) -> bool {
    !v.iter().zip(&v[1..]).fold(false, |a, (x, y)| a | (y < x))
}

/// Whether a parent column (entries below the number of objects, itself
/// below 2^32) never decreases and names for every object but the root
/// an object before it: two reductions the compiler vectorizes.
fn parents_ok(col: &format::ArchivedCol) -> bool {
    let v = decode_u32(col);
    let late = v[1..]
        .iter()
        .zip(1..v.len() as u32)
        .fold(false, |a, (&p, c)| a | (p >= c));
    non_decreasing(&v) && !late
}

/// The checks of each object against its type, per run of objects of one
/// type (a machine's breadth-first table is a few dozen such runs): the
/// attribute indexes of the run lie in the range of its type's attribute
/// kind (the attribute table is sorted by kind), the sets of normal and
/// memory objects are present, PU and NUMA OS indexes are bounded; and the
/// tree.  True when all hold.
fn typed<L: Lane>(b: &ArchivedBody, nsets: u64) -> bool {
    let types = type_table();
    let n = b.ty.len();
    // The range of stored attribute values (index + 1) of each kind: the
    // table must be sorted by kind, with no invalid entry.
    let mut ranges = [(1u64, 1u64); 7];
    let mut prev = A_NONE;
    for (i, a) in b.attrs.iter().enumerate() {
        let k = attr_kind(a);
        if k == A_INVALID || k < prev {
            return false;
        }
        if k != prev || i == 0 {
            ranges[k as usize].0 = i as u64 + 1;
        }
        ranges[k as usize].1 = i as u64 + 2;
        prev = k;
    }
    let ty: &[u8] = &b.ty;
    let sets = [
        &b.cpuset,
        &b.complete_cpuset,
        &b.nodeset,
        &b.complete_nodeset,
    ];
    let mut bad = false;
    let mut start = 0;
    while start < n {
        let code = ty[start];
        // The end of the run: 16 entries at a time (a vector compare),
        // then one at a time.
        let mut end = start + 1;
        while end + 16 <= n && ty[end..end + 16].iter().fold(true, |a, &t| a & (t == code)) {
            end += 16;
        }
        while end < n && ty[end] == code {
            end += 1;
        }
        let t = types[code as usize];
        let run = start * L::W..end * L::W;
        let (alo, ahi) = min_max_of::<L>(&b.attr.bytes[run.clone()]);
        bad |= match t.attr {
            A_UNKNOWN_TYPE => true,
            A_NONE => ahi != 0,
            k => {
                let (lo, hi) = ranges[k as usize];
                alo < lo || ahi >= hi
            }
        };
        if t.needs_sets {
            for col in sets {
                bad |= min_max_of::<L>(&col.bytes[run.clone()]).0 == 0;
            }
        }
        // The OS index of a PU or a NUMA node is a bit of the root's sets
        // once rebuilt: it is bounded as the sets are (objects without
        // one store 0).
        if t.os_bounded {
            bad |= min_max(&b.os_index, start..end).1 >= (MAX_SET_WORDS * 64) as u64;
        }
        // Families in order where a run of children changes type.
        if start > 1 && b.parent.get(start) == b.parent.get(start - 1) {
            bad |= t.rank < types[ty[start - 1] as usize].rank;
        }
        start = end;
    }
    // The tree: every object but the root has a parent before it, and the
    // parent column never decreases, so that the children of each object
    // are one run (and, with the check above, families in order).  With
    // parents before children, following parents always ends at the root:
    // the table is a tree, walked without cycles.
    bad |= min_max(&b.parent, 0..n).1 >= n as u64;
    // (Checked below n first, so that the entries fit in 32 bits.)
    bad = bad || !parents_ok(&b.parent);
    // Every set index (stored + 1) is at most the number of sets.
    !bad && sets.iter().all(|c| c.max() <= nsets)
}

/// The first object the checks of [`objects`] refuse, as an error (the
/// slow path, taken only for a refused image).
fn bad_object(b: &ArchivedBody, n: usize, nstrings: u64, nsets: u64) -> ImageError {
    let types = type_table();
    let kinds: Vec<u8> = b.attrs.iter().map(attr_kind).collect();
    if kinds.contains(&A_INVALID) {
        return bad("an attribute has an unknown cache kind");
    }
    if kinds.windows(2).any(|w| w[1] < w[0]) {
        return bad("the attribute table is not sorted by kind");
    }
    for i in 0..n {
        let code = b.ty[i];
        let Some(t) = format::obj_type(code) else {
            return bad(format!("object {i}: unknown type code {code}"));
        };
        let info = types[code as usize];
        let ak = match b.attr.opt(i) {
            None => A_NONE,
            Some(a) => b.attrs.get(a).map_or(A_INVALID, attr_kind),
        };
        if ak != info.attr {
            return bad(format!("object {i}: attributes do not match its type {t}"));
        }
        for (col, what) in [
            (&b.cpuset, "cpuset"),
            (&b.complete_cpuset, "complete cpuset"),
            (&b.nodeset, "nodeset"),
            (&b.complete_nodeset, "complete nodeset"),
        ] {
            match col.opt(i) {
                None if info.needs_sets => {
                    return bad(format!("object {i} ({t}) has no {what}"));
                }
                Some(s) if s as u64 >= nsets => {
                    return bad(format!("object {i}: its {what} is set {s} of {nsets}"));
                }
                _ => {}
            }
        }
        for (col, what) in [(&b.subtype, "subtype"), (&b.name, "name")] {
            if let Some(s) = col.opt(i).filter(|&s| s as u64 >= nstrings) {
                return bad(format!(
                    "object {i}: its {what} is string {s} of {nstrings}"
                ));
            }
        }
        let f = b.flags[i];
        if f & !(F_SYMMETRIC | F_OS_INDEX) != 0 {
            return bad(format!("object {i}: unknown flags {f:#x}"));
        }
        let os = b.os_index.get(i);
        if info.os_bounded && os >= (MAX_SET_WORDS * 64) as u64 {
            return bad(format!("object {i}: OS index {os} is too large"));
        }
        let gp = b.gp_index.get(i);
        if gp >= MAX_GP_INDEX {
            return bad(format!(
                "object {i}: global persistent index {gp} is too large"
            ));
        }
        let d = b.depth.get(i) as i128 - 8;
        if i64::try_from(d)
            .ok()
            .and_then(wloc_core::object::Depth::from_i64)
            .is_none()
        {
            return bad(format!("object {i}: invalid depth {d}"));
        }
    }
    let rank = |c: usize| types[b.ty[c] as usize].rank;
    for c in 1..n {
        let p = b.parent.get(c);
        if p >= c as u64 {
            return bad(format!(
                "object {c}: its parent {p} does not come before it"
            ));
        }
        let q = b.parent.get(c - 1);
        if c > 1 && (p < q || (p == q && rank(c) < rank(c - 1))) {
            return bad(format!(
                "object {c}: not in breadth-first order (its parent {p}, families in order)"
            ));
        }
    }
    bad("an object does not fit its type")
}

/// The root and the info runs (the rest of the tree is checked with the
/// objects).
fn links(b: &ArchivedBody) -> Result<(), ImageError> {
    if format::obj_type(b.ty[0]) != Some(ObjType::Machine) || b.parent.get(0) != 0 {
        return Err(bad("the first object is not a Machine root"));
    }
    let ninfos = b.obj_infos.len() as u64;
    // (At most 2^32 - 1 infos, so that the entries decode to 32 bits.)
    let bad_runs = ninfos > u32::MAX as u64
        || b.info_start.get(0) != 0
        || b.info_start.get(b.info_start.len() - 1) != ninfos
        || b.info_start.max() > ninfos
        || !non_decreasing(&decode_u32(&b.info_start));
    if bad_runs {
        return Err(bad("the info runs are not ranges of the info table"));
    }
    let nstrings = b.strings.len();
    if !b
        .obj_infos
        .iter()
        .all(|[k, v]| all_below(&[*k, *v], nstrings))
    {
        return Err(bad("an object info refers to a string past the table"));
    }
    Ok(())
}

/// Everything outside the object table.
fn rest(b: &ArchivedBody, n: usize, nsets: usize) -> Result<(), ImageError> {
    let set_ok = |s: &u32_le| (s.to_native() as usize) < nsets;
    for l in b.levels.iter() {
        if !all_below(l, n) {
            return Err(bad("a level refers to an object past the table"));
        }
    }
    if b.special.len() != crate::SPECIAL_DEPTHS.len() {
        return Err(bad(format!(
            "{} special levels instead of 6",
            b.special.len()
        )));
    }
    for l in b.special.iter() {
        if !all_below(l, n) {
            return Err(bad("a special level refers to an object past the table"));
        }
    }
    for d in b.distances.iter() {
        if !all_below(&d.objs, n) {
            return Err(bad("a distance matrix refers to an object past the table"));
        }
        let k = d.objs.len();
        if k.checked_mul(k) != Some(d.values.len()) {
            return Err(bad(format!(
                "a distance matrix over {k} objects holds {} values",
                d.values.len()
            )));
        }
    }
    for m in b.memattrs.iter() {
        for v in m.values.iter() {
            let ok = (v.target.to_native() as usize) < n
                && match &v.initiator {
                    ArchivedInit::Object(o) => (o.to_native() as usize) < n,
                    ArchivedInit::CpuSet(s) => set_ok(s),
                    ArchivedInit::None => true,
                };
            if !ok {
                return Err(bad(format!(
                    "memory attribute {}: a value refers to an object or set past its table",
                    crate::clip(&m.name)
                )));
            }
        }
    }
    let sets_ok = b.cpukinds.iter().all(|k| set_ok(&k.cpuset))
        && b.memtiers.iter().all(|t| set_ok(&t.nodeset))
        && b.pci_localities.iter().all(|p| set_ok(&p.cpuset))
        && set_ok(&b.allowed_cpuset)
        && set_ok(&b.allowed_nodeset);
    if !sets_ok {
        return Err(bad(
            "a CPU kind, memory tier, PCI locality or allowed set refers to a set past the table",
        ));
    }
    userdata(b, n)?;
    if let Some(p) = b.publication.as_ref() {
        crate::publication::check(
            &p.boot_id,
            p.generation.to_native(),
            &p.cpus_online,
            &p.nodes_online,
        )?;
    }
    if b.total_memory_shift >= 64 {
        return Err(bad(format!(
            "total memory shift {} is not below 64",
            b.total_memory_shift
        )));
    }
    if b.cpukinds_ranking as usize >= format::RANKINGS.len() {
        return Err(bad(format!(
            "unknown CPU kinds ranking {}",
            b.cpukinds_ranking
        )));
    }
    Ok(())
}

/// The userdata list: in object order, each on an object of the table,
/// with the content its declared length says (4 characters per 3 bytes
/// for base64, whose content must be base64), as the XML import requires,
/// so that what an image holds is what an XML file may hold.
fn userdata(b: &ArchivedBody, n: usize) -> Result<(), ImageError> {
    let mut prev = 0u32;
    for u in b.userdata.iter() {
        let obj = u.obj.to_native();
        if obj as usize >= n || obj < prev {
            return Err(bad(
                "a userdata refers to an object past the table or out of order",
            ));
        }
        prev = obj;
        let length = u.length.to_native();
        let content = u.content.as_str();
        let expected = if u.base64 {
            length.div_ceil(3).checked_mul(4)
        } else {
            Some(length)
        };
        if expected != Some(content.len() as u64) {
            return Err(bad(format!(
                "a userdata declares length {length} but holds {} bytes",
                content.len()
            )));
        }
        // What XML cannot carry (control characters but tab and line
        // ends) would make the image's XML export unreadable: hwloc's
        // exporter refuses such userdata too.
        let xml_text = |t: &str| {
            t.chars()
                .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
        };
        if !xml_text(content) || !u.name.as_ref().is_none_or(|n| xml_text(n.as_str())) {
            return Err(bad(
                "a userdata holds control characters, which XML cannot carry",
            ));
        }
        if u.base64 {
            let pad = content.bytes().rev().take_while(|&c| c == b'=').count();
            let body = &content.as_bytes()[..content.len() - pad];
            let alphabet = body
                .iter()
                .all(|&c| c.is_ascii_alphanumeric() || c == b'+' || c == b'/');
            if !alphabet || pad as u64 != (3 - length % 3) % 3 {
                return Err(bad("a base64 userdata holds invalid base64"));
            }
        }
    }
    Ok(())
}
