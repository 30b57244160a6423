//! The read-side view of an adopted image.

use rkyv::util::AlignedVec;
use rkyv::vec::ArchivedVec;
use wloc_core::Topology;
use wloc_core::bitmap::{Bitmap, CpuSet, NodeSet};
use wloc_core::object::{
    BridgeAttr, BridgeUpstream, CacheAttr, Depth, GroupAttr, NumaAttr, ObjAttr, ObjKind, ObjType,
    OsDevTypes, PageType, PciAttr,
};
use wloc_core::topology::TypeDepth;

use crate::format::{self, ArchivedAttr, ArchivedBody, ArchivedInit};
use crate::{HEADER_LEN, ImageError, check_header};

/// Where the image bytes live.
pub(crate) enum Backing {
    /// Read into private memory.
    Owned(AlignedVec<16>),
    /// A read-only mapping of a sealed memfd.
    Mapped(memmap2::Mmap),
}

/// An adopted image: a read-only topology answered from the image itself.
///
/// Object handles ([`ObjRef`]) are indexes into the image's object table,
/// in breadth-first order (the root is 0, the children of an object are
/// consecutive).  Sets are returned as owned
/// [`CpuSet`]/[`NodeSet`] values built from the stored words.
pub struct AdoptedTopology {
    backing: Backing,
    writer: String,
}

impl std::fmt::Debug for AdoptedTopology {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdoptedTopology")
            .field("objects", &self.len())
            .field("bytes", &self.bytes().len())
            .field("mapped", &self.is_mapped())
            .field("writer", &self.writer)
            .finish()
    }
}

/// The bitmap of a set of a validated body (`s` in range).
fn bitmap(b: &ArchivedBody, s: u32) -> Bitmap {
    let skip = b.set_skip[s as usize].to_native() as usize;
    let stored = set_words(b, s);
    let mut words: Vec<u64> = Vec::with_capacity(skip + stored.len());
    words.resize(skip, 0);
    words.extend(stored.iter().map(|w| w.to_native()));
    if b.set_infinite[s as usize] != 0 {
        // An infinite set is the complement of the finite set of the
        // complemented words.
        let inv: Vec<u64> = words.iter().map(|w| !w).collect();
        Bitmap::from_words(&inv).not()
    } else {
        Bitmap::from_words(&words)
    }
}

/// The words of a set of a validated body (runs checked by validation).
fn set_words(b: &ArchivedBody, s: u32) -> &[rkyv::rend::u64_le] {
    let s = s as usize;
    &b.set_words[b.set_start[s].to_native() as usize..b.set_start[s + 1].to_native() as usize]
}

/// Entry `i` of a set column (set index + 1, 0 for none) as a set.
fn opt_set(b: &ArchivedBody, col: &format::ArchivedCol, i: usize) -> Option<Bitmap> {
    col.opt(i).map(|s| bitmap(b, s as u32))
}

pub(crate) fn cpuset(b: &ArchivedBody, s: u32) -> CpuSet {
    CpuSet::from_bitmap(bitmap(b, s))
}

pub(crate) fn nodeset(b: &ArchivedBody, s: u32) -> NodeSet {
    NodeSet::from_bitmap(bitmap(b, s))
}

pub(crate) fn opt_cpuset(b: &ArchivedBody, col: &format::ArchivedCol, i: usize) -> Option<CpuSet> {
    opt_set(b, col, i).map(CpuSet::from_bitmap)
}

pub(crate) fn opt_nodeset(
    b: &ArchivedBody,
    col: &format::ArchivedCol,
    i: usize,
) -> Option<NodeSet> {
    opt_set(b, col, i).map(NodeSet::from_bitmap)
}

fn set_has(b: &ArchivedBody, s: u32, i: u32) -> bool {
    // Words before the stored ones are zero.
    let skip = b.set_skip[s as usize].to_native();
    let Some(w) = (i / 64).checked_sub(skip) else {
        return false;
    };
    match set_words(b, s).get(w as usize) {
        Some(w) => w.to_native() & (1u64 << (i % 64)) != 0,
        None => b.set_infinite[s as usize] != 0,
    }
}

/// The total memory of object `i` (stored shifted).
pub(crate) fn total_memory(b: &ArchivedBody, i: usize) -> u64 {
    b.total_memory.get(i) << b.total_memory_shift
}

/// The string at an index of the string table (validated).
pub(crate) fn string(b: &ArchivedBody, i: u32) -> Option<&str> {
    b.strings.get(i as usize).map(|s| s.as_str())
}

/// Entry `i` of a string column (string index + 1, 0 for none).
pub(crate) fn opt_string<'a>(
    b: &'a ArchivedBody,
    col: &format::ArchivedCol,
    i: usize,
) -> Option<&'a str> {
    col.opt(i).and_then(|s| string(b, s as u32))
}

/// The infos of object `i` of a validated body.
pub(crate) fn obj_infos(b: &ArchivedBody, i: usize) -> impl Iterator<Item = (&str, &str)> + '_ {
    let (start, end) = (
        b.info_start.get(i) as usize,
        b.info_start.get(i + 1) as usize,
    );
    b.obj_infos[start..end].iter().map(move |[k, v]| {
        let s = |x: &rkyv::rend::u32_le| string(b, x.to_native()).unwrap_or_default();
        (s(k), s(v))
    })
}

/// The children of object `i` of a validated body: one run, memory,
/// normal, I/O then misc children.
pub(crate) fn run(b: &ArchivedBody, i: usize) -> std::ops::Range<usize> {
    // Entries 1.. of the parent column are non-decreasing (validated).
    let p = &b.parent;
    let len = p.len() - 1;
    let i = i as u64;
    let lo = 1 + partition(len, |k| p.get(k + 1) < i);
    let hi = 1 + partition(len, |k| p.get(k + 1) <= i);
    lo..hi
}

/// The family rank of object `i`.
fn rank(b: &ArchivedBody, i: usize) -> u8 {
    format::family_rank(format::obj_type(b.ty[i]).map_or(ObjKind::Misc, |t| t.kind()))
}

/// The children of one family of object `i` (runs are sorted by family,
/// as validation checked).
fn family(b: &ArchivedBody, i: usize, kind: ObjKind) -> std::ops::Range<usize> {
    let r = run(b, i);
    let want = format::family_rank(kind);
    let len = r.len();
    let start = r.start;
    let lo = start + partition(len, |k| rank(b, start + k) < want);
    let hi = start + partition(len, |k| rank(b, start + k) <= want);
    lo..hi
}

/// The first `k` in `0..len` for which `pred` is false (`pred` true then
/// false over the range).
fn partition(len: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

impl AdoptedTopology {
    pub(crate) fn new(backing: Backing) -> Result<Self, ImageError> {
        let bytes = match &backing {
            Backing::Owned(v) => v.as_slice(),
            Backing::Mapped(m) => &m[..],
        };
        let body = check_header(bytes)?;
        let archived = rkyv::access::<ArchivedBody, rkyv::rancor::Error>(body).map_err(|e| {
            ImageError::Invalid(format!(
                "malformed archive: {}",
                crate::clip(&e.to_string())
            ))
        })?;
        crate::validate::tree(archived)?;
        let w = &bytes[40..64];
        let end = w.iter().position(|&b| b == 0).unwrap_or(w.len());
        let writer = String::from_utf8_lossy(&w[..end]).into_owned();
        Ok(AdoptedTopology { backing, writer })
    }

    fn bytes(&self) -> &[u8] {
        match &self.backing {
            Backing::Owned(v) => v.as_slice(),
            Backing::Mapped(m) => &m[..],
        }
    }

    pub(crate) fn body(&self) -> &ArchivedBody {
        // SAFETY: `new` validated these same bytes with `rkyv::access`
        // (bytecheck) before the view existed, and they cannot change:
        // they are private memory owned by the view, or a mapping of a
        // memfd sealed against writes and shrinking.
        unsafe { rkyv::access_unchecked::<ArchivedBody>(&self.bytes()[HEADER_LEN..]) }
    }

    /// Whether the image is a shared mapping (a sealed memfd) rather than a
    /// private copy.
    pub fn is_mapped(&self) -> bool {
        matches!(self.backing, Backing::Mapped(_))
    }

    /// Size of the image in bytes, header included.
    pub fn image_len(&self) -> usize {
        self.bytes().len()
    }

    /// Version of wloc that wrote the image.
    pub fn writer_version(&self) -> &str {
        &self.writer
    }

    /// The publication stamp of an image a topology service published
    /// ([`crate::write_published`]); `None` for an image written by
    /// [`crate::write`] (validated with the image).
    pub fn publication(&self) -> Option<crate::Publication> {
        self.body()
            .publication
            .as_ref()
            .map(|p| crate::Publication {
                boot_id: p.boot_id.to_string(),
                generation: p.generation.to_native(),
                cpus_online: p.cpus_online.to_string(),
                nodes_online: p.nodes_online.to_string(),
            })
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.body().ty.len()
    }

    /// Always false: an image holds at least its root.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The object at an index of the table, if any.
    pub fn obj(&self, index: usize) -> Option<ObjRef<'_>> {
        (index < self.len()).then(|| ObjRef {
            topo: self,
            b: self.body(),
            index,
        })
    }

    fn at(&self, index: u32) -> ObjRef<'_> {
        // Validation checked that every stored index is in range.
        self.obj(index as usize).expect("validated index")
    }

    fn list<'a>(&'a self, v: &'a [rkyv::rend::u32_le]) -> Vec<ObjRef<'a>> {
        v.iter().map(|i| self.at(i.to_native())).collect()
    }

    /// The root object (a Machine).
    pub fn root(&self) -> ObjRef<'_> {
        self.at(0)
    }

    /// Every object in table order (breadth-first: the root, its children,
    /// their children...).
    pub fn objects(&self) -> impl Iterator<Item = ObjRef<'_>> + '_ {
        (0..self.len() as u32).map(move |i| self.at(i))
    }

    /// Number of normal levels.
    pub fn depth(&self) -> u32 {
        self.body().levels.len() as u32
    }

    fn level_list(&self, depth: Depth) -> Option<&ArchivedVec<rkyv::rend::u32_le>> {
        let b = self.body();
        match depth {
            Depth::Normal(d) => b.levels.get(d as usize),
            d => crate::SPECIAL_DEPTHS
                .iter()
                .position(|&s| s == d)
                .and_then(|i| b.special.get(i)),
        }
    }

    /// Objects of a level (normal or special), left to right.
    pub fn level(&self, depth: Depth) -> Vec<ObjRef<'_>> {
        self.level_list(depth)
            .map(|l| self.list(l))
            .unwrap_or_default()
    }

    /// Number of objects at a depth.
    pub fn nbobjs_at_depth(&self, depth: Depth) -> usize {
        self.level_list(depth).map_or(0, |l| l.len())
    }

    /// The object of logical index `idx` at a depth.
    pub fn obj_at_depth(&self, depth: Depth, idx: usize) -> Option<ObjRef<'_>> {
        self.level_list(depth)
            .and_then(|l| l.get(idx))
            .map(|i| self.at(i.to_native()))
    }

    /// The type of a level's objects.
    pub fn depth_type(&self, depth: Depth) -> Option<ObjType> {
        self.obj_at_depth(depth, 0).map(|o| o.obj_type())
    }

    /// Where objects of a type are, as [`Topology::type_depth`].
    pub fn type_depth(&self, t: ObjType) -> TypeDepth {
        if let Some(d) = Depth::special_for(t) {
            return TypeDepth::Depth(d);
        }
        let mut found = None;
        for d in 0..self.depth() {
            if self.depth_type(Depth::Normal(d)) == Some(t) {
                if found.is_some() {
                    return TypeDepth::Multiple;
                }
                found = Some(Depth::Normal(d));
            }
        }
        found.map_or(TypeDepth::Unknown, TypeDepth::Depth)
    }

    /// All objects of a type, level by level, left to right.
    pub fn objs_by_type(&self, t: ObjType) -> Vec<ObjRef<'_>> {
        if let Some(d) = Depth::special_for(t) {
            return self.level(d);
        }
        (0..self.depth())
            .filter(|&d| self.depth_type(Depth::Normal(d)) == Some(t))
            .flat_map(|d| self.level(Depth::Normal(d)))
            .collect()
    }

    /// The object of a type with this OS index.
    pub fn obj_by_os_index(&self, t: ObjType, os: u32) -> Option<ObjRef<'_>> {
        self.objs_by_type(t)
            .into_iter()
            .find(|o| o.os_index() == Some(os))
    }

    /// The root's cpuset.
    pub fn cpuset(&self) -> CpuSet {
        self.root().cpuset().unwrap_or_default()
    }
    /// The root's complete cpuset.
    pub fn complete_cpuset(&self) -> CpuSet {
        self.root().complete_cpuset().unwrap_or_default()
    }
    /// The root's nodeset.
    pub fn nodeset(&self) -> NodeSet {
        self.root().nodeset().unwrap_or_default()
    }
    /// The root's complete nodeset.
    pub fn complete_nodeset(&self) -> NodeSet {
        self.root().complete_nodeset().unwrap_or_default()
    }
    /// PUs the process may use.
    pub fn allowed_cpuset(&self) -> CpuSet {
        let b = self.body();
        cpuset(b, b.allowed_cpuset.to_native())
    }
    /// NUMA nodes the process may use.
    pub fn allowed_nodeset(&self) -> NodeSet {
        let b = self.body();
        nodeset(b, b.allowed_nodeset.to_native())
    }
    /// Whether the writer described the system it ran on.
    pub fn is_thissystem(&self) -> bool {
        self.body().is_thissystem
    }

    /// Topology-wide infos (name, value).
    pub fn infos(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.body()
            .infos
            .iter()
            .map(|i| (i.name.as_str(), i.value.as_str()))
    }
    /// The first topology info with this name.
    pub fn info(&self, name: &str) -> Option<&str> {
        self.infos().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
    /// Supported features recorded by the writer.
    pub fn support(&self) -> impl Iterator<Item = &str> + '_ {
        self.body().support.iter().map(|s| s.as_str())
    }

    /// Distance matrices.
    pub fn distances(&self) -> impl Iterator<Item = DistancesRef<'_>> + '_ {
        self.body()
            .distances
            .iter()
            .map(move |d| DistancesRef { topo: self, d })
    }
    /// Memory attributes.
    pub fn memattrs(&self) -> impl Iterator<Item = MemAttrRef<'_>> + '_ {
        self.body()
            .memattrs
            .iter()
            .map(move |m| MemAttrRef { topo: self, m })
    }
    /// CPU kinds, from least to most efficient.
    pub fn cpukinds(&self) -> impl Iterator<Item = CpuKindRef<'_>> + '_ {
        let b = self.body();
        b.cpukinds.iter().map(move |k| CpuKindRef { b, k })
    }
    /// Memory tiers.
    pub fn memtiers(&self) -> impl Iterator<Item = MemTierRef<'_>> + '_ {
        let b = self.body();
        b.memtiers.iter().map(move |t| MemTierRef { b, t })
    }

    /// The smallest normal object whose cpuset includes `set` (hwloc's
    /// `hwloc_get_obj_covering_cpuset`), `None` if `set` is empty or
    /// outside the root.
    pub fn covering(&self, set: &CpuSet) -> Option<ObjRef<'_>> {
        if set.is_empty() {
            return None;
        }
        let mut cur = self.root();
        if !cur.cpuset()?.includes(set) {
            return None;
        }
        'down: loop {
            for c in cur.children() {
                if c.cpuset().is_some_and(|cs| cs.includes(set)) {
                    cur = c;
                    continue 'down;
                }
            }
            return Some(cur);
        }
    }

    /// A full [`Topology`] with every object kept, for the operations the
    /// view does not offer (restriction, the XML and console writers...).
    pub fn to_topology(&self) -> Result<Topology, ImageError> {
        let mut t = Topology::new();
        t.set_all_types_filter(wloc_core::TypeFilter::KeepAll);
        t.include_disallowed = self.body().include_disallowed;
        self.to_topology_into(t)
    }

    /// Builds the image's topology into `base`, whose type filters and
    /// flags (`include_disallowed`) apply as when loading an XML file.
    pub fn to_topology_into(&self, base: Topology) -> Result<Topology, ImageError> {
        crate::rebuild::rebuild(self.body(), base, self.image_len())
    }
}

/// One object of an adopted image.
#[derive(Clone, Copy)]
pub struct ObjRef<'a> {
    topo: &'a AdoptedTopology,
    b: &'a ArchivedBody,
    index: usize,
}

impl std::fmt::Debug for ObjRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} L#{} (image #{})",
            self.obj_type(),
            self.logical_index(),
            self.index
        )
    }
}

impl PartialEq for ObjRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.topo, other.topo) && self.index == other.index
    }
}

// Every column has an entry per object (validated), and `index` is below
// their length: the lookups below cannot fail.
impl<'a> ObjRef<'a> {
    /// Index in the image's object table (breadth-first order).
    pub fn index(&self) -> usize {
        self.index
    }
    /// Object type.
    pub fn obj_type(&self) -> ObjType {
        format::obj_type(self.b.ty[self.index]).expect("validated type")
    }
    /// Finer type name.
    pub fn subtype(&self) -> Option<&'a str> {
        opt_string(self.b, &self.b.subtype, self.index)
    }
    /// Name.
    pub fn name(&self) -> Option<&'a str> {
        opt_string(self.b, &self.b.name, self.index)
    }
    /// OS index (`P#`).
    pub fn os_index(&self) -> Option<u32> {
        (self.b.flags[self.index] & format::F_OS_INDEX != 0)
            .then(|| self.b.os_index.get(self.index) as u32)
    }
    /// Index among the objects of its level.
    pub fn logical_index(&self) -> u32 {
        self.b.logical_index.get(self.index) as u32
    }
    /// Index among the parent's children of the same family.
    pub fn sibling_rank(&self) -> u32 {
        match self.parent() {
            None => 0,
            Some(p) => (self.index - family(self.b, p.index, self.obj_type().kind()).start) as u32,
        }
    }
    /// Depth of its level.
    pub fn depth(&self) -> Depth {
        Depth::from_i64(self.b.depth.get(self.index) as i64 - 8).unwrap_or_default()
    }
    /// Global persistent index.
    pub fn gp_index(&self) -> u64 {
        self.b.gp_index.get(self.index)
    }
    /// Memory below, in bytes.
    pub fn total_memory(&self) -> u64 {
        total_memory(self.b, self.index)
    }
    /// Whether every child subtree has the same shape.
    pub fn symmetric_subtree(&self) -> bool {
        self.b.flags[self.index] & format::F_SYMMETRIC != 0
    }
    /// The parent, `None` for the root.
    pub fn parent(&self) -> Option<ObjRef<'a>> {
        (self.index != 0).then(|| self.topo.at(self.b.parent.get(self.index) as u32))
    }
    fn family(&self, kind: ObjKind) -> Vec<ObjRef<'a>> {
        family(self.b, self.index, kind)
            .map(|i| ObjRef {
                topo: self.topo,
                b: self.b,
                index: i,
            })
            .collect()
    }
    /// Normal children.
    pub fn children(&self) -> Vec<ObjRef<'a>> {
        self.family(ObjKind::Normal)
    }
    /// Number of normal children.
    pub fn arity(&self) -> usize {
        family(self.b, self.index, ObjKind::Normal).len()
    }
    /// Memory children.
    pub fn memory_children(&self) -> Vec<ObjRef<'a>> {
        self.family(ObjKind::Memory)
    }
    /// I/O children.
    pub fn io_children(&self) -> Vec<ObjRef<'a>> {
        self.family(ObjKind::Io)
    }
    /// Misc children.
    pub fn misc_children(&self) -> Vec<ObjRef<'a>> {
        self.family(ObjKind::Misc)
    }
    /// Allowed PUs below.
    pub fn cpuset(&self) -> Option<CpuSet> {
        opt_cpuset(self.b, &self.b.cpuset, self.index)
    }
    /// All PUs below.
    pub fn complete_cpuset(&self) -> Option<CpuSet> {
        opt_cpuset(self.b, &self.b.complete_cpuset, self.index)
    }
    /// Allowed NUMA nodes near.
    pub fn nodeset(&self) -> Option<NodeSet> {
        opt_nodeset(self.b, &self.b.nodeset, self.index)
    }
    /// All NUMA nodes near.
    pub fn complete_nodeset(&self) -> Option<NodeSet> {
        opt_nodeset(self.b, &self.b.complete_nodeset, self.index)
    }
    /// Whether PU `pu` is in the cpuset, without building the set.
    pub fn cpuset_has(&self, pu: u32) -> bool {
        self.b
            .cpuset
            .opt(self.index)
            .is_some_and(|s| set_has(self.b, s as u32, pu))
    }
    /// Name/value infos.
    pub fn infos(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a + use<'a> {
        obj_infos(self.b, self.index)
    }
    /// The first info with this name.
    pub fn info(&self, name: &str) -> Option<&'a str> {
        self.infos().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
    /// Type-specific attributes, as the model's.
    pub fn attr(&self) -> ObjAttr {
        obj_attr(self.b, self.index)
    }
}

fn pci(p: &format::ArchivedPci) -> PciAttr {
    PciAttr {
        domain: p.domain.to_native(),
        bus: p.bus,
        dev: p.dev,
        func: p.func,
        class_id: p.class_id.to_native(),
        vendor_id: p.vendor_id.to_native(),
        device_id: p.device_id.to_native(),
        subvendor_id: p.subvendor_id.to_native(),
        subdevice_id: p.subdevice_id.to_native(),
        revision: p.revision,
        linkspeed: p.linkspeed.to_native(),
        prog_if: p.prog_if,
    }
}

/// The attributes of object `i` of a validated body.
pub(crate) fn obj_attr(b: &ArchivedBody, i: usize) -> ObjAttr {
    b.attrs
        .get(b.attr.opt(i).unwrap_or(usize::MAX))
        .map_or(ObjAttr::None, attr)
}

pub(crate) fn attr(a: &ArchivedAttr) -> ObjAttr {
    match a {
        ArchivedAttr::None => ObjAttr::None,
        ArchivedAttr::Numa {
            local_memory,
            page_types,
        } => ObjAttr::Numa(NumaAttr {
            local_memory: local_memory.to_native(),
            page_types: page_types
                .iter()
                .map(|p| PageType {
                    size: p.0.to_native(),
                    count: p.1.to_native(),
                })
                .collect(),
        }),
        ArchivedAttr::Cache {
            size,
            depth,
            linesize,
            associativity,
            kind,
            inclusive,
        } => ObjAttr::Cache(CacheAttr {
            size: size.to_native(),
            depth: depth.to_native(),
            linesize: linesize.to_native(),
            associativity: associativity.to_native(),
            kind: format::cache_kind(kind.to_native()),
            inclusive: *inclusive,
        }),
        ArchivedAttr::Group {
            depth,
            kind,
            subkind,
            dont_merge,
        } => ObjAttr::Group(GroupAttr {
            depth: depth.to_native(),
            kind: kind.to_native(),
            subkind: subkind.to_native(),
            dont_merge: *dont_merge,
        }),
        ArchivedAttr::Pci(p) => ObjAttr::Pci(pci(p)),
        ArchivedAttr::Bridge {
            upstream,
            domain,
            secondary_bus,
            subordinate_bus,
            depth,
        } => ObjAttr::Bridge(BridgeAttr {
            upstream: match upstream.as_ref() {
                None => BridgeUpstream::Host,
                Some(p) => BridgeUpstream::Pci(pci(p)),
            },
            domain: domain.to_native(),
            secondary_bus: *secondary_bus,
            subordinate_bus: *subordinate_bus,
            depth: depth.to_native(),
        }),
        ArchivedAttr::OsDev(t) => ObjAttr::OsDev(OsDevTypes(t.to_native())),
    }
}

/// A distance matrix of an adopted image.
#[derive(Clone, Copy)]
pub struct DistancesRef<'a> {
    topo: &'a AdoptedTopology,
    d: &'a format::ArchivedDist,
}

impl<'a> DistancesRef<'a> {
    /// Name (`NUMALatency`...), if any.
    pub fn name(&self) -> Option<&'a str> {
        self.d.name.as_ref().map(|s| s.as_str())
    }
    /// Kind flags (`wloc_core::distances::kind`).
    pub fn kind(&self) -> u64 {
        self.d.kind.to_native()
    }
    /// The objects, in matrix order.
    pub fn objs(&self) -> Vec<ObjRef<'a>> {
        self.topo.list(&self.d.objs)
    }
    /// Number of objects.
    pub fn nbobjs(&self) -> usize {
        self.d.objs.len()
    }
    /// The value from the `i`-th object to the `j`-th.
    pub fn value(&self, i: usize, j: usize) -> Option<u64> {
        let n = self.nbobjs();
        (i < n && j < n)
            .then(|| self.d.values.get(i * n + j).map(|v| v.to_native()))
            .flatten()
    }
}

/// Who a memory attribute value is for, in an adopted image.
#[derive(Clone, Debug)]
pub enum ViewInitiator<'a> {
    /// A set of PUs.
    CpuSet(CpuSet),
    /// An object.
    Object(ObjRef<'a>),
}

/// A memory attribute of an adopted image.
#[derive(Clone, Copy)]
pub struct MemAttrRef<'a> {
    topo: &'a AdoptedTopology,
    m: &'a format::ArchivedMemAttr,
}

impl<'a> MemAttrRef<'a> {
    /// Name.
    pub fn name(&self) -> &'a str {
        self.m.name.as_str()
    }
    /// Flags (`wloc_core::memattrs::flags`).
    pub fn flags(&self) -> u64 {
        self.m.flags.to_native()
    }
    /// Values: target, initiator (if any), value.
    pub fn values(&self) -> Vec<(ObjRef<'a>, Option<ViewInitiator<'a>>, u64)> {
        self.m
            .values
            .iter()
            .map(|v| {
                let init = match &v.initiator {
                    ArchivedInit::None => None,
                    ArchivedInit::CpuSet(s) => Some(ViewInitiator::CpuSet(cpuset(
                        self.topo.body(),
                        s.to_native(),
                    ))),
                    ArchivedInit::Object(o) => {
                        Some(ViewInitiator::Object(self.topo.at(o.to_native())))
                    }
                };
                (
                    self.topo.at(v.target.to_native()),
                    init,
                    v.value.to_native(),
                )
            })
            .collect()
    }
}

/// A CPU kind of an adopted image.
#[derive(Clone, Copy)]
pub struct CpuKindRef<'a> {
    b: &'a ArchivedBody,
    k: &'a format::ArchivedCpuKind,
}

impl<'a> CpuKindRef<'a> {
    /// PUs of that kind.
    pub fn cpuset(&self) -> CpuSet {
        cpuset(self.b, self.k.cpuset.to_native())
    }
    /// Efficiency rank (0 is the least efficient).
    pub fn efficiency(&self) -> i32 {
        self.k.efficiency.to_native()
    }
    /// Efficiency forced by the discovery or the user.
    pub fn forced_efficiency(&self) -> Option<i32> {
        self.k.forced_efficiency.as_ref().map(|v| v.to_native())
    }
    /// Infos (`CoreType`, `FrequencyMaxMHz`...).
    pub fn infos(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a + use<'a> {
        self.k
            .infos
            .iter()
            .map(|i| (i.name.as_str(), i.value.as_str()))
    }
}

/// A memory tier of an adopted image.
#[derive(Clone, Copy)]
pub struct MemTierRef<'a> {
    b: &'a ArchivedBody,
    t: &'a format::ArchivedMemTier,
}

impl MemTierRef<'_> {
    /// Kinds of memory (bitmask).
    pub fn kinds(&self) -> u64 {
        self.t.kinds.to_native()
    }
    /// Nodes of the tier.
    pub fn nodeset(&self) -> NodeSet {
        nodeset(self.b, self.t.nodeset.to_native())
    }
}
