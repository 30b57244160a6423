//! The archived body of an image: the finished topology as rkyv records.
//!
//! Objects are stored in breadth-first order, so that the root is entry 0
//! and the children of every object are one run of the table (its memory,
//! normal, I/O then misc children), and as columns (one array per field:
//! struct of arrays).  Every link (parent, children, levels, distance and
//! memory attribute objects) is an index into that table; every set, string
//! and attribute an index into a shared table.  So the archive holds a few
//! dozen relative pointers whatever the size of the machine, bytecheck has
//! almost nothing to check, and the checks of the object table are tight
//! loops over small arrays of integers (see `validate`).  rkyv lays the
//! records out little-endian with relative offsets, so the bytes mean the
//! same at any address in any process.

use rkyv::{Archive, Serialize};
use std::collections::HashMap;
use wloc_core::cpukinds::Ranking;
use wloc_core::memattrs::Initiator;

use wloc_core::object::{BridgeUpstream, CacheKind, ObjAttr, ObjKind, ObjType, PciAttr};
use wloc_core::{Bitmap, ObjId, Topology};

/// A name/value info.
#[derive(Archive, Serialize, Debug, Clone, PartialEq)]
pub struct Info {
    /// Name.
    pub name: String,
    /// Value.
    pub value: String,
}

/// PCI identity.
#[derive(Archive, Serialize, Debug, Clone, PartialEq)]
pub struct Pci {
    pub domain: u32,
    pub bus: u8,
    pub dev: u8,
    pub func: u8,
    pub revision: u8,
    pub class_id: u16,
    pub vendor_id: u16,
    pub device_id: u16,
    pub subvendor_id: u16,
    pub subdevice_id: u16,
    pub prog_if: u8,
    pub linkspeed: f32,
}

/// Type-specific attributes.
#[derive(Archive, Serialize, Debug, Clone, PartialEq)]
pub enum Attr {
    None,
    Numa {
        local_memory: u64,
        /// (size, count) pairs.
        page_types: Vec<(u64, u64)>,
    },
    Cache {
        size: u64,
        depth: u32,
        linesize: u32,
        associativity: i32,
        /// [`CacheKind::code`].
        kind: u32,
        inclusive: bool,
    },
    Group {
        depth: u32,
        kind: u32,
        subkind: u32,
        dont_merge: bool,
    },
    Pci(Pci),
    Bridge {
        /// `None` for a host bridge.
        upstream: Option<Pci>,
        domain: u32,
        secondary_bus: u8,
        subordinate_bus: u8,
        depth: u32,
    },
    OsDev(u32),
}

impl Attr {
    /// The variant's rank (0 for `None` to 6 for `OsDev`): the attribute
    /// table is sorted by it.
    pub fn kind_code(&self) -> u8 {
        match self {
            Attr::None => 0,
            Attr::Numa { .. } => 1,
            Attr::Cache { .. } => 2,
            Attr::Group { .. } => 3,
            Attr::Pci(_) => 4,
            Attr::Bridge { .. } => 5,
            Attr::OsDev(_) => 6,
        }
    }
}

/// A distance matrix.
#[derive(Archive, Serialize, Debug, Clone, PartialEq)]
pub struct Dist {
    pub name: Option<String>,
    pub kind: u64,
    pub objs: Vec<u32>,
    /// Row-major, `objs.len()²` values.
    pub values: Vec<u64>,
}

/// Who a memory attribute value is for.
#[derive(Archive, Serialize, Debug, Clone, PartialEq)]
pub enum Init {
    None,
    /// A set of [`Body::set_start`].
    CpuSet(u32),
    Object(u32),
}

/// One memory attribute value.
#[derive(Archive, Serialize, Debug, Clone, PartialEq)]
pub struct MemValue {
    pub target: u32,
    pub initiator: Init,
    pub value: u64,
}

/// A memory attribute.
#[derive(Archive, Serialize, Debug, Clone, PartialEq)]
pub struct MemAttr {
    pub name: String,
    pub flags: u64,
    pub values: Vec<MemValue>,
}

/// A CPU kind.
#[derive(Archive, Serialize, Debug, Clone, PartialEq)]
pub struct CpuKind {
    /// A set of [`Body::set_start`].
    pub cpuset: u32,
    pub forced_efficiency: Option<i32>,
    pub efficiency: i32,
    pub infos: Vec<Info>,
}

/// A memory tier.
#[derive(Archive, Serialize, Debug, Clone, PartialEq)]
pub struct MemTier {
    pub kinds: u64,
    /// A set of [`Body::set_start`].
    pub nodeset: u32,
}

/// A PCI bus range's locality.
#[derive(Archive, Serialize, Debug, Clone, PartialEq)]
pub struct PciLocality {
    pub domain: u32,
    pub bus_min: u8,
    pub bus_max: u8,
    /// A set of [`Body::set_start`].
    pub cpuset: u32,
}

/// One `<userdata>` element of an object, kept raw as the XML import reads
/// it (see [`wloc_core::UserData`]).
#[derive(Archive, Serialize, Debug, Clone, PartialEq)]
pub struct UserDataRec {
    /// Index of the object it belongs to.
    pub obj: u32,
    pub name: Option<String>,
    pub base64: bool,
    /// The declared length (decoded bytes for base64 content).
    pub length: u64,
    /// The content as written (still encoded when `base64`).
    pub content: String,
}

/// The publication stamp of an image a topology service published
/// (format version 5): see [`crate::Publication`].
#[derive(Archive, Serialize, Debug, Clone, PartialEq)]
pub struct Stamp {
    pub boot_id: String,
    pub generation: u64,
    pub cpus_online: String,
    pub nodes_online: String,
}

/// A column of unsigned integers, each stored in `width` bytes
/// little-endian: 1, 2, 4 or 8, the narrowest that holds the column's
/// largest value (most columns of a machine fit in one or two bytes, which
/// makes the image, its reading, checksum and mapping several times
/// cheaper than fixed 32- or 64-bit fields).
#[derive(Archive, Serialize, Debug, Clone, PartialEq, Default)]
pub struct Col {
    pub width: u8,
    pub bytes: Vec<u8>,
}

impl Col {
    /// The narrowest column holding `values`.
    pub fn of(values: &[u64]) -> Col {
        Col::at_least(values, 1)
    }

    /// The narrowest column holding `values`, `min` bytes wide at least.
    pub fn at_least(values: &[u64], min: usize) -> Col {
        let max = values.iter().copied().max().unwrap_or(0);
        let width = if max <= u8::MAX as u64 {
            1
        } else if max <= u16::MAX as u64 {
            2
        } else if max <= u32::MAX as u64 {
            4
        } else {
            8
        }
        .max(min);
        let mut bytes = Vec::with_capacity(values.len() * width);
        for v in values {
            bytes.extend_from_slice(&v.to_le_bytes()[..width]);
        }
        Col {
            width: width as u8,
            bytes,
        }
    }
}

/// Calls `f(i, value)` for every entry of a column of `W`-byte values: one
/// tight loop per width, which the compiler can vectorize.
#[inline(always)]
fn each<const W: usize>(bytes: &[u8], mut f: impl FnMut(usize, u64)) {
    for (i, c) in bytes.chunks_exact(W).enumerate() {
        let mut v = [0u8; 8];
        v[..W].copy_from_slice(c);
        f(i, u64::from_le_bytes(v));
    }
}

impl ArchivedCol {
    /// Number of entries (the width is validated first: 1, 2, 4 or 8).
    pub fn len(&self) -> usize {
        match self.width {
            1 | 2 | 4 | 8 => self.bytes.len() / self.width as usize,
            _ => usize::MAX,
        }
    }

    /// Whether the width is valid and the bytes hold whole entries.
    pub fn well_formed(&self) -> bool {
        matches!(self.width, 1 | 2 | 4 | 8) && self.bytes.len().is_multiple_of(self.width as usize)
    }

    /// Entry `i` (a column of a validated body, `i` below its length).
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        let b = &self.bytes[..];
        match self.width {
            1 => b[i] as u64,
            2 => u16::from_le_bytes([b[2 * i], b[2 * i + 1]]) as u64,
            4 => u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().expect("4 bytes")) as u64,
            _ => u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().expect("8 bytes")),
        }
    }

    /// Entry `i` as an optional index (stored + 1, 0 for none).
    #[inline]
    pub fn opt(&self, i: usize) -> Option<usize> {
        (self.get(i) as usize).checked_sub(1)
    }

    /// Calls `f(i, value)` for every entry, one loop per width.
    #[inline(always)]
    pub fn each(&self, f: impl FnMut(usize, u64)) {
        let b = &self.bytes[..];
        match self.width {
            1 => each::<1>(b, f),
            2 => each::<2>(b, f),
            4 => each::<4>(b, f),
            _ => each::<8>(b, f),
        }
    }

    /// The largest entry (0 for an empty column) of a well-formed column.
    pub fn max(&self) -> u64 {
        crate::validate::min_max(self, 0..self.len()).1
    }
}

/// The whole topology.
///
/// The object table is the columns from `ty` to `info_start`: entry `i` of
/// each describes object `i`, in breadth-first order (root first; the
/// children of an object are consecutive, memory, normal, I/O then misc
/// children, each family in its order).
#[derive(Archive, Serialize, Debug, Clone, PartialEq)]
pub struct Body {
    /// [`ObjType::index`].
    pub ty: Vec<u8>,
    /// [`F_SYMMETRIC`], [`F_OS_INDEX`].
    pub flags: Vec<u8>,
    /// Meaningful with [`F_OS_INDEX`].
    pub os_index: Col,
    /// hwloc's integer depth plus 8 ([`wloc_core::object::Depth::to_i32`]
    /// is -3 to -8 for the special levels).
    pub depth: Col,
    pub logical_index: Col,
    /// Index of the parent (0 for the root itself).  Breadth-first order
    /// makes this column non-decreasing: the children of object `i` are
    /// the run of entries equal to `i` (after the root), found by binary
    /// search, so that no child table needs checking.
    pub parent: Col,
    pub gp_index: Col,
    /// Shifted right by [`Body::total_memory_shift`] (memory sizes are
    /// multiples of pages: they fit in fewer bytes).
    pub total_memory: Col,
    /// Index + 1 into [`Body::attrs`] (0 for none): objects of a level
    /// mostly share their attributes (caches), so each distinct one is
    /// stored once; the table is sorted by [`Attr::kind_code`].
    pub attr: Col,
    /// Index + 1 into [`Body::strings`] (0 for none).
    pub subtype: Col,
    pub name: Col,
    /// The four sets, as set index + 1 (0 for none): objects share most
    /// of them (a core and its caches), so each distinct set is stored
    /// once.
    pub cpuset: Col,
    pub complete_cpuset: Col,
    pub nodeset: Col,
    pub complete_nodeset: Col,
    // (`parent`, `attr` and the four set columns have one width.)
    /// `n + 1` entries: the infos of object `i` are
    /// `obj_infos[info_start[i] .. info_start[i + 1]]`.
    pub info_start: Col,
    /// Name and value of every object info, as string indexes.
    pub obj_infos: Vec<[u32; 2]>,
    /// The distinct type-specific attributes of the objects.
    pub attrs: Vec<Attr>,
    /// The distinct subtypes, names, info names and values of the objects.
    pub strings: Vec<String>,
    /// Every set of the image (`nsets + 1` entries): the words of set `s`
    /// are `set_words[set_start[s] .. set_start[s + 1]]`, bits `64*i ..
    /// 64*i+63` in word `i`.
    pub set_start: Vec<u32>,
    pub set_words: Vec<u64>,
    /// Per set, the number of zero words before its stored words (leading
    /// zero words are not stored: most sets are a few bits far from 0).
    pub set_skip: Vec<u32>,
    /// Per set, non-zero when every bit past its words is set.
    pub set_infinite: Vec<u8>,
    /// Left shift of every `total_memory` entry (below 64).
    pub total_memory_shift: u8,
    /// Normal levels, from the root down, as object indexes.
    pub levels: Vec<Vec<u32>>,
    /// Special levels in [`crate::SPECIAL_DEPTHS`] order.
    pub special: Vec<Vec<u32>>,
    /// Set indexes.
    pub allowed_cpuset: u32,
    pub allowed_nodeset: u32,
    pub include_disallowed: bool,
    pub is_thissystem: bool,
    /// [`ranking_code`].
    pub cpukinds_ranking: u8,
    pub distances: Vec<Dist>,
    pub memattrs: Vec<MemAttr>,
    pub cpukinds: Vec<CpuKind>,
    pub memtiers: Vec<MemTier>,
    pub infos: Vec<Info>,
    pub support: Vec<String>,
    pub pci_localities: Vec<PciLocality>,
    /// The objects' `<userdata>` elements (format version 4), by object
    /// index (non-decreasing), each object's in its order.  Most
    /// topologies have none: a list, not a column.
    pub userdata: Vec<UserDataRec>,
    /// What the publisher saw (format version 5), `None` for an image
    /// written by [`crate::write`]: covered by the body's checksum and
    /// renamed into place with the topology it describes.
    pub publication: Option<Stamp>,
}

/// Flags: every child subtree has the same shape.
pub const F_SYMMETRIC: u8 = 1;
/// Flags: the object has an OS index.
pub const F_OS_INDEX: u8 = 2;

/// The order of the families in a run of children (the depth-first order
/// of the XML export: memory, normal, I/O, misc).
pub fn family_rank(kind: ObjKind) -> u8 {
    match kind {
        ObjKind::Memory => 0,
        ObjKind::Normal => 1,
        ObjKind::Io => 2,
        ObjKind::Misc => 3,
    }
}

/// The rankings in code order (new ones appended, so older codes keep
/// their meaning).
pub const RANKINGS: [Ranking; 10] = [
    Ranking::Default,
    Ranking::NoForcedEfficiency,
    Ranking::ForcedEfficiency,
    Ranking::CoreTypeFrequency,
    Ranking::CoreType,
    Ranking::Frequency,
    Ranking::FrequencyMax,
    Ranking::FrequencyBase,
    Ranking::None,
    Ranking::CoreTypeFrequencyStrict,
];

/// The code of a CPU kind ranking in the image.
pub fn ranking_code(r: Ranking) -> u8 {
    RANKINGS.iter().position(|&x| x == r).unwrap_or(0) as u8
}

fn infos(v: &[wloc_core::object::Info]) -> Vec<Info> {
    v.iter()
        .map(|i| Info {
            name: i.name.clone(),
            value: i.value.clone(),
        })
        .collect()
}

fn pci(p: &PciAttr) -> Pci {
    Pci {
        domain: p.domain,
        bus: p.bus,
        dev: p.dev,
        func: p.func,
        revision: p.revision,
        class_id: p.class_id,
        vendor_id: p.vendor_id,
        device_id: p.device_id,
        subvendor_id: p.subvendor_id,
        subdevice_id: p.subdevice_id,
        prog_if: p.prog_if,
        linkspeed: p.linkspeed,
    }
}

fn attr(a: &ObjAttr) -> Attr {
    match a {
        ObjAttr::None => Attr::None,
        ObjAttr::Numa(n) => Attr::Numa {
            local_memory: n.local_memory,
            page_types: n.page_types.iter().map(|p| (p.size, p.count)).collect(),
        },
        ObjAttr::Cache(c) => Attr::Cache {
            size: c.size,
            depth: c.depth,
            linesize: c.linesize,
            associativity: c.associativity,
            kind: c.kind.code(),
            inclusive: c.inclusive,
        },
        ObjAttr::Group(g) => Attr::Group {
            depth: g.depth,
            kind: g.kind,
            subkind: g.subkind,
            dont_merge: g.dont_merge,
        },
        ObjAttr::Pci(p) => Attr::Pci(pci(p)),
        ObjAttr::Bridge(b) => Attr::Bridge {
            upstream: match &b.upstream {
                BridgeUpstream::Host => None,
                BridgeUpstream::Pci(p) => Some(pci(p)),
            },
            domain: b.domain,
            secondary_bus: b.secondary_bus,
            subordinate_bus: b.subordinate_bus,
            depth: b.depth,
        },
        ObjAttr::OsDev(t) => Attr::OsDev(t.0),
    }
}

/// The children of an object in run order: memory, normal, I/O, misc.
fn run(o: &wloc_core::object::Object) -> impl Iterator<Item = ObjId> + '_ {
    o.memory_children()
        .iter()
        .chain(o.children())
        .chain(o.io_children())
        .chain(o.misc_children())
        .copied()
}

/// Interns sets into the set table.
#[derive(Default)]
struct Sets {
    start: Vec<u32>,
    words: Vec<u64>,
    skip: Vec<u32>,
    infinite: Vec<u8>,
    seen: HashMap<(Vec<u64>, bool), u32>,
}

impl Sets {
    fn intern(&mut self, b: &Bitmap) -> u32 {
        let key = (b.words().to_vec(), b.is_infinite());
        if let Some(&i) = self.seen.get(&key) {
            return i;
        }
        let i = self.infinite.len() as u32;
        self.start.push(self.words.len() as u32);
        let skip = b.words().iter().take_while(|&&w| w == 0).count();
        self.skip.push(skip as u32);
        self.words.extend_from_slice(&b.words()[skip..]);
        self.infinite.push(b.is_infinite() as u8);
        self.seen.insert(key, i);
        i
    }
    /// Index + 1, 0 for none.
    fn opt(&mut self, b: Option<&Bitmap>) -> u64 {
        b.map_or(0, |b| self.intern(b) as u64 + 1)
    }
}

/// Interns strings into the string table.
#[derive(Default)]
struct Strings {
    list: Vec<String>,
    seen: HashMap<String, u32>,
}

impl Strings {
    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.seen.get(s) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push(s.to_string());
        self.seen.insert(s.to_string(), i);
        i
    }
    /// Index + 1, 0 for none.
    fn opt(&mut self, s: &Option<String>) -> u64 {
        s.as_deref().map_or(0, |s| self.intern(s) as u64 + 1)
    }
}

/// Records a finished topology, with the publication stamp if any.
pub fn body_of(topo: &Topology, publication: Option<&crate::Publication>) -> Body {
    let order = breadth_first(topo);
    let index = TableIndex::new(&order);
    let mut sets = Sets::default();
    let mut strings = Strings::default();
    let mut b = body_skeleton(topo, &index, order.len());
    let (mut c, attrs) = record_objects(topo, &order, &index, &mut sets, &mut strings, &mut b);
    b.attrs = sort_attrs_by_kind(attrs, &mut c.attr);
    narrow_columns(&c, &mut b);
    record_topology_lists(topo, &index, &mut sets, &mut b);
    sets.start.push(sets.words.len() as u32);
    b.set_start = sets.start;
    b.set_words = sets.words;
    b.set_infinite = sets.infinite;
    b.set_skip = sets.skip;
    b.strings = strings.list;
    b.publication = publication.map(|p| Stamp {
        boot_id: p.boot_id.clone(),
        generation: p.generation,
        cpus_online: p.cpus_online.clone(),
        nodes_online: p.nodes_online.clone(),
    });
    b
}

/// The objects in breadth-first order: each object's children become one
/// run.  Separate because this order is the table's: every other phase
/// reads it.
fn breadth_first(topo: &Topology) -> Vec<ObjId> {
    let mut order: Vec<ObjId> = vec![topo.root()];
    let mut i = 0;
    while i < order.len() {
        let o = topo.obj(order[i]);
        order.extend(run(o));
        i += 1;
    }
    order
}

/// Arena ids to table indexes (objects removed from the tree are not
/// reachable, hence not recorded: their index is `u32::MAX`).  Separate
/// because every link of the body goes through it.
struct TableIndex {
    /// The table index of each arena id.
    index: Vec<u32>,
}

impl TableIndex {
    /// The indexes of the objects of `order`.
    fn new(order: &[ObjId]) -> Self {
        let max = order.iter().copied().max().unwrap_or(0);
        let mut index = vec![u32::MAX; max + 1];
        for (i, &id) in order.iter().enumerate() {
            index[id] = i as u32;
        }
        TableIndex { index }
    }

    /// The table index of an object, `u32::MAX` if it is not recorded.
    fn ix(&self, id: ObjId) -> u32 {
        self.index.get(id).copied().unwrap_or(u32::MAX)
    }

    /// The table indexes of the recorded objects of `ids`.
    fn ixs(&self, ids: &[ObjId]) -> Vec<u32> {
        ids.iter()
            .map(|&i| self.ix(i))
            .filter(|&i| i != u32::MAX)
            .collect()
    }
}

/// The body before the objects are recorded: levels and the topology's
/// flags and infos filled, columns and tables empty.  Separate so that
/// the phases after it fill one part each.
fn body_skeleton(topo: &Topology, index: &TableIndex, n: usize) -> Body {
    Body {
        ty: Vec::with_capacity(n),
        flags: Vec::with_capacity(n),
        os_index: Col::default(),
        depth: Col::default(),
        logical_index: Col::default(),
        parent: Col::default(),
        gp_index: Col::default(),
        total_memory: Col::default(),
        attr: Col::default(),
        subtype: Col::default(),
        name: Col::default(),
        cpuset: Col::default(),
        complete_cpuset: Col::default(),
        nodeset: Col::default(),
        complete_nodeset: Col::default(),
        info_start: Col::default(),
        obj_infos: Vec::new(),
        attrs: Vec::new(),
        strings: Vec::new(),
        set_start: Vec::new(),
        set_words: Vec::new(),
        set_infinite: Vec::new(),
        set_skip: Vec::new(),
        total_memory_shift: 0,
        levels: topo.normal_levels().iter().map(|l| index.ixs(l)).collect(),
        special: crate::SPECIAL_DEPTHS
            .iter()
            .map(|&d| index.ixs(topo.level(d)))
            .collect(),
        allowed_cpuset: 0,
        allowed_nodeset: 0,
        include_disallowed: topo.include_disallowed,
        is_thissystem: topo.is_thissystem,
        cpukinds_ranking: ranking_code(topo.cpukinds_ranking),
        distances: Vec::new(),
        memattrs: Vec::new(),
        cpukinds: Vec::new(),
        memtiers: Vec::new(),
        infos: infos(&topo.infos),
        support: topo.support.clone(),
        pci_localities: Vec::new(),
        userdata: Vec::new(),
        publication: None,
    }
}

/// The columns' values, narrowed once complete.
#[derive(Default)]
struct Wide {
    os_index: Vec<u64>,
    depth: Vec<u64>,
    logical_index: Vec<u64>,
    parent: Vec<u64>,
    gp_index: Vec<u64>,
    total_memory: Vec<u64>,
    attr: Vec<u64>,
    subtype: Vec<u64>,
    name: Vec<u64>,
    cpuset: Vec<u64>,
    complete_cpuset: Vec<u64>,
    nodeset: Vec<u64>,
    complete_nodeset: Vec<u64>,
    info_start: Vec<u64>,
}

/// The object table: one row per object in `order`, the type and flags
/// and the infos and userdata straight into `b`, the other columns as
/// wide values.  Interns the objects' sets and strings (first, so that
/// they get the lowest indexes) and their distinct attributes, returned
/// in first-seen order.  Separate because it is the one pass over the
/// objects.
fn record_objects(
    topo: &Topology,
    order: &[ObjId],
    index: &TableIndex,
    sets: &mut Sets,
    strings: &mut Strings,
    b: &mut Body,
) -> (Wide, Vec<Attr>) {
    let mut attrs: Vec<Attr> = Vec::new();
    // Keyed by the debug form: `Attr` holds an f32, so it has no `Hash`.
    let mut seen_attr: HashMap<String, u64> = Default::default();
    let mut c = Wide::default();
    for &id in order {
        let o = topo.obj(id);
        b.ty.push(o.obj_type.index() as u8);
        b.flags.push(
            if o.symmetric_subtree() {
                F_SYMMETRIC
            } else {
                0
            } | if o.os_index.is_some() { F_OS_INDEX } else { 0 },
        );
        c.os_index.push(o.os_index.unwrap_or(0) as u64);
        c.depth.push((o.depth().to_i32() as i64 + 8) as u64);
        c.logical_index.push(o.logical_index() as u64);
        c.parent
            .push(o.parent().map(|p| index.ix(p)).unwrap_or(0) as u64);
        c.gp_index.push(o.gp_index);
        c.total_memory.push(o.total_memory);
        c.attr.push(if matches!(o.attr, ObjAttr::None) {
            0
        } else {
            let a = attr(&o.attr);
            1 + *seen_attr.entry(format!("{a:?}")).or_insert_with(|| {
                attrs.push(a);
                (attrs.len() - 1) as u64
            })
        });
        c.subtype.push(strings.opt(&o.subtype));
        c.name.push(strings.opt(&o.name));
        c.cpuset
            .push(sets.opt(o.cpuset.as_ref().map(|s| s.bitmap())));
        c.complete_cpuset
            .push(sets.opt(o.complete_cpuset.as_ref().map(|s| s.bitmap())));
        c.nodeset
            .push(sets.opt(o.nodeset.as_ref().map(|s| s.bitmap())));
        c.complete_nodeset
            .push(sets.opt(o.complete_nodeset.as_ref().map(|s| s.bitmap())));
        c.info_start.push(b.obj_infos.len() as u64);
        for i in &o.infos {
            b.obj_infos
                .push([strings.intern(&i.name), strings.intern(&i.value)]);
        }
        let index = b.ty.len() as u32 - 1;
        b.userdata.extend(o.userdata.iter().map(|u| UserDataRec {
            obj: index,
            name: u.name.clone(),
            base64: u.base64,
            length: u.length,
            content: u.content.clone(),
        }));
    }
    c.info_start.push(b.obj_infos.len() as u64);
    (c, attrs)
}

/// The attribute table sorted by kind (stably), so that the attributes
/// of each kind are one range of indexes: validation then checks an
/// object's attribute against its type with a range, per run of objects
/// of one type.  Renumbers the `attr` column (index + 1) to match.
/// Separate because it must run after every object is recorded and
/// before the column is narrowed.
fn sort_attrs_by_kind(attrs: Vec<Attr>, column: &mut [u64]) -> Vec<Attr> {
    let mut perm: Vec<usize> = (0..attrs.len()).collect();
    perm.sort_by_key(|&i| attrs[i].kind_code());
    let mut new_index = vec![0u64; attrs.len()];
    for (new, &old) in perm.iter().enumerate() {
        new_index[old] = new as u64;
    }
    for a in column.iter_mut().filter(|a| **a != 0) {
        *a = new_index[*a as usize - 1] + 1;
    }
    perm.iter().map(|&i| attrs[i].clone()).collect()
}

/// Narrows the complete columns into `b`: each as narrow as its values
/// allow, except that the columns the validation reads together have one
/// width (so that its loop over them is compiled once per width), and
/// total memory shifted right by its common trailing zero bits.
/// Separate because widths are known only once every value is.
fn narrow_columns(c: &Wide, b: &mut Body) {
    let link = [
        &c.parent,
        &c.attr,
        &c.cpuset,
        &c.complete_cpuset,
        &c.nodeset,
        &c.complete_nodeset,
    ]
    .iter()
    .map(|v| Col::of(v).width as usize)
    .max()
    .unwrap_or(1);
    b.os_index = Col::of(&c.os_index);
    b.depth = Col::of(&c.depth);
    b.logical_index = Col::of(&c.logical_index);
    b.parent = Col::at_least(&c.parent, link);
    b.gp_index = Col::of(&c.gp_index);
    let shift = c
        .total_memory
        .iter()
        .filter(|&&m| m != 0)
        .map(|m| m.trailing_zeros())
        .min()
        .unwrap_or(0)
        .min(63);
    b.total_memory_shift = shift as u8;
    b.total_memory = Col::of(
        &c.total_memory
            .iter()
            .map(|m| m >> shift)
            .collect::<Vec<_>>(),
    );
    b.attr = Col::at_least(&c.attr, link);
    b.subtype = Col::of(&c.subtype);
    b.name = Col::of(&c.name);
    b.cpuset = Col::at_least(&c.cpuset, link);
    b.complete_cpuset = Col::at_least(&c.complete_cpuset, link);
    b.nodeset = Col::at_least(&c.nodeset, link);
    b.complete_nodeset = Col::at_least(&c.complete_nodeset, link);
    b.info_start = Col::of(&c.info_start);
}

/// The topology-wide records into `b`: allowed sets, distances, memory
/// attributes, CPU kinds, memory tiers and PCI localities, their sets
/// interned in that order after the objects' ones.  Distances and memory
/// attribute values naming an object that is not recorded are left out.
/// Separate because none of them is a column of the object table.
fn record_topology_lists(topo: &Topology, index: &TableIndex, sets: &mut Sets, b: &mut Body) {
    b.allowed_cpuset = sets.intern(topo.allowed_cpuset.bitmap());
    b.allowed_nodeset = sets.intern(topo.allowed_nodeset.bitmap());
    b.distances = topo
        .distances
        .iter()
        .filter(|d| d.objs.iter().all(|&o| index.ix(o) != u32::MAX))
        .map(|d| Dist {
            name: d.name.clone(),
            kind: d.kind,
            objs: index.ixs(&d.objs),
            values: d.values.clone(),
        })
        .collect();
    b.memattrs = topo
        .memattrs
        .iter()
        .map(|m| MemAttr {
            name: m.name.clone(),
            flags: m.flags,
            values: m
                .values
                .iter()
                .filter_map(|v| {
                    let initiator = match &v.initiator {
                        None => Init::None,
                        Some(Initiator::CpuSet(c)) => Init::CpuSet(sets.intern(c.bitmap())),
                        Some(Initiator::Object(o)) => match index.ix(*o) {
                            u32::MAX => return None,
                            i => Init::Object(i),
                        },
                    };
                    let target = index.ix(v.target);
                    (target != u32::MAX).then_some(MemValue {
                        target,
                        initiator,
                        value: v.value,
                    })
                })
                .collect(),
        })
        .collect();
    b.cpukinds = topo
        .cpukinds
        .iter()
        .map(|k| CpuKind {
            cpuset: sets.intern(k.cpuset.bitmap()),
            forced_efficiency: k.forced_efficiency,
            efficiency: k.efficiency,
            infos: infos(&k.infos),
        })
        .collect();
    b.memtiers = topo
        .memtiers
        .iter()
        .map(|t| MemTier {
            kinds: t.kinds,
            nodeset: sets.intern(t.nodeset.bitmap()),
        })
        .collect();
    b.pci_localities = topo
        .pci_localities
        .iter()
        .map(|p| PciLocality {
            domain: p.domain,
            bus_min: p.bus_min,
            bus_max: p.bus_max,
            cpuset: sets.intern(p.cpuset.bitmap()),
        })
        .collect();
}

/// The type of a code, `None` past the last one.
pub fn obj_type(code: u8) -> Option<ObjType> {
    ObjType::ALL.get(code as usize).copied()
}

/// The cache kind of a code (unknown codes read as unified; validation
/// refuses them first).
pub fn cache_kind(code: u32) -> CacheKind {
    CacheKind::from_code(code).unwrap_or_default()
}
