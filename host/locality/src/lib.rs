//! `wloc-locality`: the location language of hwloc-calc and hwloc-bind.
//!
//! A location designates a set of PUs and NUMA nodes of a [`Topology`]:
//! objects (`core:2-3`, `pack:0.core:1.pu:0`, `numa:1`, `l3:0`, `pu:even`,
//! `core:6:4` for four cores from the seventh one, wrapping around), I/O
//! devices (`os=eth0`, `pci=0000:02:03.0`, `pci[10de:1db4]:1`), the whole
//! machine (`all`, `root`) and cpuset strings (`0x0000000f,0x1`, and with
//! an explicit [`CpusetFormat`] also `0-3,8` or `0xf00f`).  A word may
//! start with an operator that says how it combines with what the words
//! before it designate: none for union, `~` to remove, `x` to intersect,
//! `^` for symmetric difference.
//!
//! [`evaluate`] reads a list of words strictly (any problem is an error);
//! [`resolve_word`] reads one word the lenient way hwloc-calc does, with
//! the problems that do not stop it (an index that names no object)
//! returned as warnings.  [`query`] holds hwloc-calc's conversions
//! (`--number-of`, `--intersect`, `--hierarchical`, `--largest`,
//! `--local-memory`) and [`distrib`] hwloc-distrib's distribution.

use wloc_core::object::Depth;
use wloc_core::topology::TypeDepth;
use wloc_core::{CpuSet, NodeSet, ObjId, ObjType, Topology};

pub mod distrib;
mod error;
pub mod query;
pub mod types;

pub use error::LocationError;
use types::{parse_type, spec_depth};

/// The string forms of a CPU or node set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpusetFormat {
    /// hwloc's form: comma-separated 32-bit hexadecimal words, `0x0000000f,0x1`.
    Hwloc,
    /// A list of indexes and ranges, `0-3,8`.
    List,
    /// One hexadecimal number, as taskset prints it, `0xf00f`.
    Taskset,
}

impl CpusetFormat {
    /// Parses `hwloc`, `list` or `taskset`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "hwloc" => Some(CpusetFormat::Hwloc),
            "list" => Some(CpusetFormat::List),
            "taskset" => Some(CpusetFormat::Taskset),
            _ => None,
        }
    }

    /// A set (of PUs or NUMA nodes) in this form.
    pub fn show(self, b: &wloc_core::Bitmap) -> String {
        match self {
            CpusetFormat::Hwloc => b.to_hwloc_string(),
            CpusetFormat::List => b.to_list_string(),
            CpusetFormat::Taskset => b.to_taskset_string(),
        }
    }
}

/// A set as systemd's D-Bus API takes `AllowedCPUs` and
/// `AllowedMemoryNodes` (hwloc-calc 2.14's `systemd-dbus-api` form):
/// `ay 0xNNNN` with the number of bytes, then each byte of the mask, least
/// significant first (`ay 0x0001 0x05` for 0 and 2).  `None` for an empty
/// or infinite set, which that form cannot carry.
pub fn systemd_dbus_api(b: &wloc_core::Bitmap) -> Option<String> {
    if b.is_infinite() {
        return None;
    }
    let last = b.last()?;
    let bytes = last / 8 + 1;
    let mut s = format!("ay 0x{bytes:04x}");
    for i in 0..bytes {
        let byte = (0..8).fold(0u8, |acc, bit| {
            acc | (u8::from(b.is_set(i * 8 + bit)) << bit)
        });
        s.push_str(&format!(" 0x{byte:02x}"));
    }
    Some(s)
}

/// Options of location evaluation (hwloc-calc/hwloc-bind semantics).
#[derive(Clone, Debug)]
pub struct EvalOptions {
    /// Object indexes in locations are OS (physical) indexes rather than logical ones.
    pub physical_input: bool,
}

impl Default for EvalOptions {
    /// Logical indexes.
    fn default() -> Self {
        EvalOptions {
            physical_input: false,
        }
    }
}

/// All the options of reading one word, hwloc-calc's included.
#[derive(Clone, Debug)]
pub struct WordOptions {
    /// Object indexes in locations are OS (physical) indexes rather than logical ones.
    pub physical_input: bool,
    /// Set strings in locations are NUMA node sets rather than CPU sets.
    pub nodeset_input: bool,
    /// The form of set strings; `None` guesses as hwloc 2.9 does (a string
    /// with a comma is the hwloc form, one without is the taskset form, and
    /// both need hexadecimal digits with `0x`).
    pub cpuset_format: Option<CpusetFormat>,
    /// Accept numeric depths as types (`2:1` for the second object of
    /// depth 2), as hwloc 2.14's tools do (hwloc-calc 2.9 refused them).
    pub depth_numbers: bool,
}

impl Default for WordOptions {
    /// Logical indexes, CPU sets, guessed set forms, numeric depths accepted.
    fn default() -> Self {
        WordOptions::from(&EvalOptions::default())
    }
}

impl From<&EvalOptions> for WordOptions {
    fn from(o: &EvalOptions) -> Self {
        WordOptions {
            physical_input: o.physical_input,
            nodeset_input: false,
            cpuset_format: None,
            depth_numbers: true,
        }
    }
}

/// What a list of locations designates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Locations {
    /// The PUs designated.
    pub cpuset: CpuSet,
    /// The NUMA nodes designated.
    pub nodeset: NodeSet,
}

/// How a word combines with the words before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Union (no prefix).
    Or,
    /// Removal (`~`).
    AndNot,
    /// Intersection (`x`).
    And,
    /// Symmetric difference (`^`).
    Xor,
}

impl Op {
    /// Applies the operator to the CPU and node sets of `acc`.
    pub fn apply(self, acc: &mut Locations, new: &Locations) {
        match self {
            Op::Or => {
                acc.cpuset.or_assign(&new.cpuset);
                acc.nodeset.or_assign(&new.nodeset);
            }
            Op::AndNot => {
                acc.cpuset.and_not_assign(&new.cpuset);
                acc.nodeset.and_not_assign(&new.nodeset);
            }
            Op::And => {
                acc.cpuset.and_assign(&new.cpuset);
                acc.nodeset.and_assign(&new.nodeset);
            }
            Op::Xor => {
                acc.cpuset.xor_assign(&new.cpuset);
                acc.nodeset.xor_assign(&new.nodeset);
            }
        }
    }
}

/// One word, resolved.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// How it combines with the words before it.
    pub op: Op,
    /// What it designates.
    pub sets: Locations,
    /// Problems that did not stop it (indexes that name no object).
    pub warnings: Vec<LocationError>,
    /// The objects it names, in the order hwloc's tools find them (none
    /// for set strings and `all`).
    pub objects: Vec<ObjId>,
}

/// Evaluates a list of location words, left to right, as hwloc-calc does,
/// but strictly: a word that is not understood, or an index that names no
/// object, is an error.
pub fn evaluate(
    topo: &Topology,
    words: &[String],
    opts: &EvalOptions,
) -> Result<Locations, LocationError> {
    let opts = WordOptions::from(opts);
    let mut acc = Locations::default();
    for w in words {
        let r = resolve_word(topo, w, &opts)?;
        if let Some(e) = r.warnings.into_iter().next() {
            return Err(e);
        }
        r.op.apply(&mut acc, &r.sets);
    }
    Ok(acc)
}

/// Resolves one location word.  Hard errors (a word that is not
/// understood) are `Err`; an index that names no object leaves the sets
/// without it and adds a warning, as hwloc-calc goes on in that case.
pub fn resolve_word(
    topo: &Topology,
    word: &str,
    opts: &WordOptions,
) -> Result<Resolved, LocationError> {
    let (op, arg) = match word.as_bytes().first() {
        Some(b'~') => (Op::AndNot, &word[1..]),
        Some(b'x') => (Op::And, &word[1..]),
        Some(b'^') => (Op::Xor, &word[1..]),
        _ => (Op::Or, word),
    };
    let mut ctx = Ctx {
        topo,
        opts,
        word,
        only_hbm: None,
        warnings: Vec::new(),
        sets: Locations::default(),
        objects: Vec::new(),
    };
    if arg == "all" || arg == "root" {
        ctx.sets = Locations {
            cpuset: topo.cpuset().clone(),
            nodeset: topo.nodeset().clone(),
        };
    } else {
        let typelen = arg
            .bytes()
            .take_while(|c| c.is_ascii_alphanumeric())
            .count();
        let next = arg.as_bytes().get(typelen).copied();
        if typelen > 0 && matches!(next, Some(b':' | b'=' | b'[')) {
            ctx.location(arg, typelen)?;
        } else {
            ctx.sets = parse_set_string(topo, arg, opts).map_err(|reason| {
                if reason.is_empty() {
                    LocationError::Unrecognized(word.to_string())
                } else {
                    LocationError::BadSet {
                        word: word.to_string(),
                        reason,
                    }
                }
            })?;
        }
    }
    Ok(Resolved {
        op,
        sets: ctx.sets,
        warnings: ctx.warnings,
        objects: ctx.objects,
    })
}

/// The NUMA nodes whose PUs intersect `cpuset` (hwloc_cpuset_to_nodeset).
#[doc(alias = "hwloc_cpuset_to_nodeset")]
pub fn cpuset_to_nodeset(topo: &Topology, cpuset: &CpuSet) -> NodeSet {
    let mut n = NodeSet::new();
    for id in topo.level(Depth::NumaNode) {
        let o = topo.obj(*id);
        if o.cpuset.as_ref().is_some_and(|c| c.intersects(cpuset))
            && let Some(os) = o.os_index
        {
            n.set(os);
        }
    }
    n
}

/// The PUs near the NUMA nodes of `nodeset` (hwloc_cpuset_from_nodeset).
#[doc(alias = "hwloc_cpuset_from_nodeset")]
pub fn cpuset_from_nodeset(topo: &Topology, nodeset: &NodeSet) -> CpuSet {
    let mut c = CpuSet::new();
    for id in topo.level(Depth::NumaNode) {
        let o = topo.obj(*id);
        if o.os_index.is_some_and(|os| nodeset.is_set(os))
            && let Some(cs) = &o.cpuset
        {
            c.or_assign(cs);
        }
    }
    c
}

/// Parses a set string into both sets; the error says why the form
/// given or guessed cannot read it.
fn parse_set_string(topo: &Topology, arg: &str, opts: &WordOptions) -> Result<Locations, String> {
    let format = match opts.cpuset_format {
        Some(f) => f,
        None => guess_set_format(arg),
    };
    let bits = match format {
        CpusetFormat::Hwloc => wloc_core::Bitmap::parse(arg),
        CpusetFormat::List => wloc_core::Bitmap::parse_list(arg),
        CpusetFormat::Taskset => wloc_core::Bitmap::parse_taskset(arg),
    }
    .map_err(|e| e.to_string())?;
    Ok(if opts.nodeset_input {
        let nodeset = NodeSet::from_bitmap(bits);
        Locations {
            cpuset: cpuset_from_nodeset(topo, &nodeset),
            nodeset,
        }
    } else {
        let cpuset = CpuSet::from_bitmap(bits);
        Locations {
            nodeset: cpuset_to_nodeset(topo, &cpuset),
            cpuset,
        }
    })
}

fn starts_with_ci(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len() && s.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

fn all_hex(s: &str) -> bool {
    s.bytes().all(|c| c.is_ascii_hexdigit())
}

/// hwloc 2.14's guess of a set string's form when none is given: a
/// string without a `0x` prefix that has a `-` is a list (`3-`, `0-3,8`),
/// else one with a comma is the hwloc form, else the taskset form.  A
/// string its form cannot read is then refused by that form's parser.
fn guess_set_format(arg: &str) -> CpusetFormat {
    if !starts_with_ci(arg, "0x") && arg.contains('-') {
        CpusetFormat::List
    } else if arg.contains(',') {
        CpusetFormat::Hwloc
    } else {
        CpusetFormat::Taskset
    }
}

/// A level chosen by a location's type: its depth and the filters the
/// type carries.
#[derive(Clone, Debug)]
struct Level {
    depth: Depth,
    obj_type: Option<ObjType>,
    /// hwloc 2.x's filter in brackets after the type (`numa[mcdram]`).
    filter: LevelFilter,
}

/// A filter written in brackets after a type (`numa[mcdram]`,
/// `numa[subtype=HBM]`, `numa[tier=1]`), as hwloc-calc 2.x reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LevelFilter {
    /// Only objects of this subtype (compared case-insensitively).
    subtype: Option<String>,
    /// Only NUMA nodes whose `MemoryTier` info is this.
    tier: Option<i64>,
}

impl LevelFilter {
    /// Reads the text between the brackets.
    pub(crate) fn parse(inner: &str) -> LevelFilter {
        if let Some(t) = inner.strip_prefix("tier=") {
            return LevelFilter {
                subtype: None,
                tier: Some(c_atoi(t)),
            };
        }
        let sub = inner.strip_prefix("subtype=").unwrap_or(inner);
        LevelFilter {
            // As hwloc, an empty subtype filters nothing.
            subtype: (!sub.is_empty()).then(|| sub.to_string()),
            tier: None,
        }
    }

    /// Whether `o` passes the filter.
    pub(crate) fn keeps(&self, o: &wloc_core::object::Object) -> bool {
        if let Some(st) = &self.subtype
            && !o
                .subtype
                .as_deref()
                .is_some_and(|s| s.eq_ignore_ascii_case(st))
        {
            return false;
        }
        if let Some(t) = self.tier
            && o.obj_type == ObjType::NUMANode
            && o.info("MemoryTier").map(c_atoi) != Some(t)
        {
            return false;
        }
        true
    }
}

/// Splits `[FILTER]REST` into the filter's text and the rest.
fn split_filter(s: &str) -> Option<(&str, &str)> {
    let inner = s.strip_prefix('[')?;
    let end = inner.find(']')?;
    Some((&inner[..end], &inner[end + 1..]))
}

/// A parsed index range: `first`, how many, the step, and whether it wraps.
#[derive(Clone, Copy, Debug)]
struct Range {
    first: u32,
    /// `None` means "to the end" (`all`, `odd`, `even`, `N-`).
    amount: Option<i64>,
    step: u32,
    wrap: bool,
}

/// Parses the index range of a location, up to its first dot.
fn parse_range(s: &str) -> Result<Range, String> {
    let first_byte = s.as_bytes().first().copied();
    if !first_byte.is_some_and(|c| c.is_ascii_digit()) {
        let kw = |first, step| Range {
            first,
            amount: None,
            step,
            wrap: false,
        };
        return if s.starts_with("all") {
            Ok(kw(0, 1))
        } else if s.starts_with("odd") {
            Ok(kw(1, 2))
        } else if s.starts_with("even") {
            Ok(kw(0, 2))
        } else {
            Err(format!("unrecognized range keyword `{s}'"))
        };
    }
    let n = s.bytes().take_while(|c| c.is_ascii_digit()).count();
    let first: i64 = s[..n].parse().unwrap_or(i64::MAX);
    let first = first.min(u32::MAX as i64) as u32;
    let rest = &s[n..];
    let signed = |t: &str| -> (Option<i64>, usize) {
        let b = t.as_bytes();
        let mut i = 0;
        let neg = match b.first() {
            Some(b'-') => {
                i = 1;
                true
            }
            Some(b'+') => {
                i = 1;
                false
            }
            _ => false,
        };
        let d = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if d == 0 {
            return (None, 0);
        }
        let v: i64 = t[i..i + d].parse().unwrap_or(i64::MAX / 4);
        (Some(if neg { -v } else { v }), i + d)
    };
    match rest.as_bytes().first() {
        None => Ok(Range {
            first,
            amount: Some(1),
            step: 1,
            wrap: false,
        }),
        Some(b'-') => {
            let (last, used) = signed(&rest[1..]);
            if used + 1 != rest.len() {
                return Err(format!(
                    "invalid character at `{}' after range at `{s}'",
                    &rest[1 + used..]
                ));
            }
            let amount = match last {
                None => None,
                // hwloc reads an amount of -1 as "to the end" (`5-4` is `5-`).
                Some(l) if l - first as i64 + 1 == -1 => None,
                Some(l) => Some(l - first as i64 + 1),
            };
            Ok(Range {
                first,
                amount,
                step: 1,
                wrap: false,
            })
        }
        Some(b':') => {
            let (amount, used) = signed(&rest[1..]);
            if used + 1 != rest.len() {
                return Err(format!(
                    "invalid character at `{}' after range at `{s}'",
                    &rest[1 + used..]
                ));
            }
            let Some(amount) = amount else {
                return Err(format!("missing width in range at `{s}'"));
            };
            Ok(Range {
                first,
                amount: Some(amount),
                step: 1,
                wrap: true,
            })
        }
        Some(_) => Err(format!(
            "invalid character at `{rest}' after index at `{s}'"
        )),
    }
}

struct Ctx<'a> {
    topo: &'a Topology,
    opts: &'a WordOptions,
    word: &'a str,
    /// Set once the word names `hbm`/`mcdram`: NUMA nodes are filtered on it.
    only_hbm: Option<bool>,
    warnings: Vec<LocationError>,
    sets: Locations,
    /// Every object named, before I/O and Misc ones are walked up.
    objects: Vec<ObjId>,
}

impl<'a> Ctx<'a> {
    fn err_word(&self) -> String {
        self.word.to_string()
    }

    /// Parses the type or depth at the start of `s` (`typelen` bytes).
    fn parse_level(
        &mut self,
        s: &str,
        typelen: usize,
    ) -> Result<(Level, Option<types::TypeSpec>), LocationError> {
        let name = &s[..typelen];
        if typelen > 20 {
            return Err(LocationError::Unrecognized(self.err_word()));
        }
        if let Some(spec) = parse_type(name) {
            return match spec_depth(self.topo, &spec) {
                TypeDepth::Depth(d) => Ok((
                    Level {
                        depth: d,
                        obj_type: Some(spec.obj_type),
                        filter: LevelFilter::default(),
                    },
                    Some(spec),
                )),
                TypeDepth::Unknown => Err(LocationError::NoSuchLevel(s.to_string())),
                TypeDepth::Multiple => Err(LocationError::MultipleLevels(s.to_string())),
            };
        }
        if name.eq_ignore_ascii_case("hbm") || name.eq_ignore_ascii_case("mcdram") {
            self.only_hbm.get_or_insert(true);
            return Ok((
                Level {
                    depth: Depth::NumaNode,
                    obj_type: Some(ObjType::NUMANode),
                    filter: LevelFilter::default(),
                },
                None,
            ));
        }
        let depth =
            parse_c_integer(name).ok_or_else(|| LocationError::Unrecognized(self.err_word()))?;
        if !self.opts.depth_numbers || depth < 0 || depth >= self.topo.depth() as i64 {
            return Err(LocationError::InvalidDepth(s.to_string()));
        }
        Ok((
            Level {
                depth: Depth::Normal(depth as u32),
                obj_type: None,
                filter: LevelFilter::default(),
            },
            None,
        ))
    }

    /// A type/depth location (`arg[typelen]` is `:`, `=` or `[`).
    fn location(&mut self, arg: &str, typelen: usize) -> Result<(), LocationError> {
        let (mut level, spec) = self.parse_level(arg, typelen)?;
        let mut sep = &arg[typelen..];
        let is_special = !matches!(level.depth, Depth::Normal(_) | Depth::NumaNode);
        if !is_special && sep.starts_with('[') {
            let (inner, rest) =
                split_filter(sep).ok_or_else(|| LocationError::Unrecognized(self.err_word()))?;
            if !rest.starts_with(':') {
                return Err(LocationError::Unrecognized(self.err_word()));
            }
            level.filter = LevelFilter::parse(inner);
            sep = rest;
        }
        if is_special {
            let t = level.obj_type;
            let value = &sep[1..];
            return match (sep.as_bytes()[0], t) {
                (b':' | b'[', _) => self.iodev_by_index(level, spec, sep),
                (b'=', Some(ObjType::PCIDevice)) => {
                    let id = find_pci_by_busid(self.topo, value)
                        .ok_or_else(|| LocationError::NoSuchPciDevice(value.to_string()))?;
                    self.add(id);
                    Ok(())
                }
                (b'=', Some(ObjType::OSDevice)) => {
                    let id = self
                        .find_named(ObjType::OSDevice, value)
                        .ok_or_else(|| LocationError::NoSuchOsDevice(value.to_string()))?;
                    self.add(id);
                    Ok(())
                }
                (b'=', Some(ObjType::Misc)) => {
                    let id = self
                        .find_named(ObjType::Misc, value)
                        .ok_or_else(|| LocationError::NoSuchMisc(value.to_string()))?;
                    self.add(id);
                    Ok(())
                }
                _ => Err(LocationError::Unrecognized(self.err_word())),
            };
        }
        let root_c = self.topo.complete_cpuset().clone();
        let root_n = self.topo.complete_nodeset().clone();
        self.object_range(&root_c, &root_n, level, &sep[1..])
    }

    fn find_named(&self, t: ObjType, name: &str) -> Option<ObjId> {
        self.topo
            .objs_by_type(t)
            .into_iter()
            .find(|&id| self.topo.obj(id).name.as_deref() == Some(name))
    }

    /// Adds an object's sets, walking up out of I/O and Misc objects.
    fn add(&mut self, mut id: ObjId) {
        self.objects.push(id);
        loop {
            let o = self.topo.obj(id);
            if let Some(c) = &o.cpuset {
                self.sets.cpuset.or_assign(c);
                if let Some(n) = &o.nodeset {
                    self.sets.nodeset.or_assign(n);
                }
                return;
            }
            match o.parent() {
                Some(p) => id = p,
                None => return,
            }
        }
    }

    /// Objects of a level inside the given sets, in level order.
    fn objs_inside(&self, cpuset: &CpuSet, nodeset: &NodeSet, level: &Level) -> Vec<ObjId> {
        let empty_c = CpuSet::new();
        let empty_n = NodeSet::new();
        self.topo
            .level(level.depth)
            .iter()
            .copied()
            .filter(|&id| {
                let o = self.topo.obj(id);
                let c = o.cpuset.as_ref().unwrap_or(&empty_c);
                let n = o.nodeset.as_ref().unwrap_or(&empty_n);
                // hwloc 2.14: objects that intersect the parent's sets (a
                // Core below one of two NUMA nodes of its Package).
                if (!c.is_empty() && !c.intersects(cpuset))
                    || (!n.is_empty() && !n.intersects(nodeset))
                {
                    return false;
                }
                if c.is_empty() && n.is_empty() {
                    return false;
                }
                if !level.filter.keeps(o) {
                    return false;
                }
                if let (Some(hbm), ObjType::NUMANode) = (self.only_hbm, o.obj_type) {
                    let is_hbm = o.subtype.as_deref() == Some("MCDRAM");
                    if hbm != is_hbm {
                        return false;
                    }
                }
                true
            })
            .collect()
    }

    /// The objects of `level` inside the sets picked by `range`, then the
    /// rest of a hierarchical location below each of them.
    fn object_range(
        &mut self,
        root_c: &CpuSet,
        root_n: &NodeSet,
        level: Level,
        s: &str,
    ) -> Result<(), LocationError> {
        let (range_str, rest) = match s.find('.') {
            Some(i) => (&s[..i], Some(&s[i + 1..])),
            None => (s, None),
        };
        let range = parse_range(range_str).map_err(|reason| LocationError::BadRange {
            word: self.err_word(),
            reason,
        })?;
        let next = match rest {
            Some(next) => {
                let tl = next
                    .bytes()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .count();
                let (filter, after) = match split_filter(&next[tl..]) {
                    Some((inner, after)) => (Some(LevelFilter::parse(inner)), after),
                    None => (None, &next[tl..]),
                };
                if tl == 0 || !after.starts_with(':') {
                    return Err(LocationError::BadHierarchy(self.err_word()));
                }
                let (mut nl, _) = self.parse_level(next, tl)?;
                if !matches!(nl.depth, Depth::Normal(_) | Depth::NumaNode) {
                    return Err(LocationError::BadHierarchy(self.err_word()));
                }
                if let Some(f) = filter {
                    nl.filter = f;
                }
                Some((nl, &after[1..]))
            }
            None => None,
        };
        let objs = self.objs_inside(root_c, root_n, &level);
        let width = objs.len() as u32;
        let step = range.step;
        // hwloc computes the count in unsigned 32-bit arithmetic.
        let count: u64 = match range.amount {
            None => (width.wrapping_sub(range.first).wrapping_add(step - 1) / step) as u64,
            Some(a) => (a as i32) as u32 as u64,
        };
        let physical = self.opts.physical_input;
        let max_index = if physical {
            objs.iter()
                .filter_map(|&id| self.topo.obj(id).os_index)
                .max()
                .map(|m| m as u64)
                .unwrap_or(0)
        } else {
            width as u64
        };
        // Past the largest index no object matches, and a wrapping range
        // covers everything after `width` steps: stop there.
        let count = if range.wrap {
            count.min(width as u64 + 1)
        } else {
            count
        };
        let mut i = range.first as u64;
        let mut j = 0u64;
        let mut found = 0u32;
        let mut missing = None;
        while j < count {
            if range.wrap && i >= width as u64 {
                i = 0;
            }
            if !range.wrap && i > max_index {
                missing.get_or_insert(i);
                break;
            }
            let obj = if physical {
                objs.iter()
                    .copied()
                    .find(|&id| self.topo.obj(id).os_index.map(u64::from) == Some(i))
            } else {
                objs.get(i as usize).copied()
            };
            match obj {
                Some(id) => {
                    found += 1;
                    match &next {
                        Some((nl, ns)) => {
                            let o = self.topo.obj(id);
                            let c = o.cpuset.clone().unwrap_or_default();
                            let n = o.nodeset.clone().unwrap_or_default();
                            // As hwloc, a failing sub-location only loses its objects.
                            if let Err(e) = self.object_range(&c, &n, nl.clone(), ns) {
                                self.warnings.push(e);
                            }
                        }
                        None => self.add(id),
                    }
                }
                None => {
                    missing.get_or_insert(i);
                }
            }
            i += step as u64;
            j += 1;
        }
        if missing.is_some() || (found == 0 && count > 0) {
            self.warnings
                .push(LocationError::NoSuchObject(self.err_word()));
        }
        Ok(())
    }

    /// I/O objects (and memory-side caches) picked by index among all
    /// objects of their level, optionally filtered by PCI vendor and device.
    fn iodev_by_index(
        &mut self,
        level: Level,
        spec: Option<types::TypeSpec>,
        s: &str,
    ) -> Result<(), LocationError> {
        let mut vendor: Option<u32> = None;
        let mut device: Option<u32> = None;
        let mut current = s;
        // An OS device kind named as the type (`gpu:1`) or, in hwloc 2.x, in
        // brackets (`os[gpu]`); or a subtype (`os[nvml]`).
        let mut osdev_kind: Option<types::OsDevCode> = spec.and_then(|t| t.osdev);
        let mut other_filter = LevelFilter::default();
        if let Some(inner) = s.strip_prefix('[')
            && level.obj_type != Some(ObjType::PCIDevice)
        {
            let (inner, after) = inner
                .split_once(']')
                .ok_or_else(|| LocationError::BadFilter(self.err_word()))?;
            match parse_type(inner) {
                Some(t)
                    if level.obj_type == Some(ObjType::OSDevice)
                        && t.obj_type == ObjType::OSDevice =>
                {
                    osdev_kind = t.osdev
                }
                _ => other_filter = LevelFilter::parse(inner),
            }
            if !(after.is_empty() || after.starts_with(':')) {
                return Err(LocationError::BadFilter(self.err_word()));
            }
            current = after;
        } else if let Some(inner) = s.strip_prefix('[') {
            let bad = || LocationError::BadFilter(self.err_word());
            let (v, after) = inner.split_once(':').ok_or_else(bad)?;
            let (d, after) = after.split_once(']').ok_or_else(bad)?;
            let hex = |t: &str| -> Result<Option<u32>, LocationError> {
                let t = t
                    .strip_prefix("0x")
                    .or_else(|| t.strip_prefix("0X"))
                    .unwrap_or(t);
                if t.is_empty() {
                    Ok(None)
                } else if all_hex(t) && t.len() <= 8 {
                    Ok(Some(u32::from_str_radix(t, 16).map_err(|_| bad())?))
                } else {
                    Err(bad())
                }
            };
            vendor = hex(v)?;
            device = hex(d)?;
            if !(after.is_empty() || after.starts_with(':')) {
                return Err(bad());
            }
            current = after;
        }
        let mut range = Range {
            first: 0,
            amount: Some(1),
            step: 1,
            wrap: false,
        };
        if !current.is_empty() {
            let r = &current[1..];
            if r.contains('.') {
                return Err(LocationError::BadHierarchy(self.err_word()));
            }
            range = parse_range(r).map_err(|reason| LocationError::BadRange {
                word: self.err_word(),
                reason,
            })?;
        }
        let objs = self.topo.level(level.depth).to_vec();
        let max = objs.len();
        let mut wrap = range.wrap;
        let mut first = range.first as i64;
        let mut amount = range.amount.unwrap_or(-1);
        let step = range.step as i64;
        let mut prev = None;
        let mut i = 0usize;
        while i < max * (wrap as usize + 1) {
            if i == max && wrap {
                i = 0;
                wrap = false;
            }
            let id = objs[i];
            if prev == Some(id) {
                break;
            }
            i += 1;
            let o = self.topo.obj(id);
            if !other_filter.keeps(o)
                || (osdev_kind.is_some() && types::osdev_code(o) != osdev_kind)
            {
                continue;
            }
            if let Some(p) = self.topo.obj(id).pci() {
                if vendor.is_some_and(|v| v != p.vendor_id as u32)
                    || device.is_some_and(|d| d != p.device_id as u32)
                {
                    continue;
                }
            } else if vendor.is_some() || device.is_some() {
                continue;
            }
            let skip = first != 0;
            first -= 1;
            if skip {
                continue;
            }
            self.add(id);
            prev.get_or_insert(id);
            amount -= 1;
            if amount == 0 {
                break;
            }
            first = step - 1;
        }
        Ok(())
    }
}

/// C's `atoi`: leading blanks, an optional sign and the digits after it;
/// 0 when there are none.
pub(crate) fn c_atoi(s: &str) -> i64 {
    let t = s.trim_start();
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let n = t.bytes().take_while(u8::is_ascii_digit).count();
    let v: i64 = t[..n].parse().unwrap_or(if n == 0 { 0 } else { i64::MAX });
    if neg { -v } else { v }
}

/// Parses an integer as C's `strtol(s, _, 0)` over the whole string:
/// decimal, `0x` hexadecimal or `0` octal.
pub fn parse_c_integer(s: &str) -> Option<i64> {
    let (neg, t) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else if t.len() > 1 && t.starts_with('0') {
        i64::from_str_radix(&t[1..], 8).ok()?
    } else {
        t.parse().ok()?
    };
    Some(if neg { -v } else { v })
}

/// Finds a PCI device by bus id, `DDDD:BB:DD.F` or `BB:DD.F` (domain 0).
pub fn find_pci_by_busid(topo: &Topology, s: &str) -> Option<ObjId> {
    let (domain, rest) = {
        let parts: Vec<&str> = s.split(':').collect();
        match parts.len() {
            3 => (
                u32::from_str_radix(parts[0], 16).ok()?,
                format!("{}:{}", parts[1], parts[2]),
            ),
            2 => (0, s.to_string()),
            _ => return None,
        }
    };
    let (bus, devfn) = rest.split_once(':')?;
    let (dev, func) = devfn.split_once('.')?;
    let bus = u32::from_str_radix(bus, 16).ok()?;
    let dev = u32::from_str_radix(dev, 16).ok()?;
    let func = u32::from_str_radix(func, 16).ok()?;
    topo.objs_by_type(ObjType::PCIDevice)
        .into_iter()
        .find(|&id| {
            topo.obj(id).pci().is_some_and(|p| {
                p.domain == domain
                    && p.bus as u32 == bus
                    && p.dev as u32 == dev
                    && p.func as u32 == func
            })
        })
}

#[cfg(test)]
mod tests;
