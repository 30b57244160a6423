//! Turning a component's `discovery` record into topology objects.
//!
//! Nothing a component returns is trusted: sizes are capped, every
//! reference is resolved, and types, attributes and sets are checked
//! before anything reaches the tree.  Objects with a parent are attached
//! with [`Topology::insert_by_parent`] (parents must come first, which
//! also rules out cycles), the others are placed by their sets with
//! [`Topology::insert_by_cpuset`].  A violation is an error naming the
//! object and the rule; this code never panics on bad data.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::time::{Duration, Instant};

use wloc_core::bitmap::Bitmap as CoreBitmap;
use wloc_core::bitmap::MAX_SET_BITS;
use wloc_core::distances::Distances as CoreDistances;
use wloc_core::memattrs::{Initiator as CoreInitiator, MemAttr, MemAttrValue};
use wloc_core::object::{
    BridgeAttr as CoreBridgeAttr, BridgeUpstream, CacheAttr as CoreCacheAttr,
    CacheKind as CoreCacheKind, GroupAttr as CoreGroupAttr, Info as CoreInfo,
    NumaAttr as CoreNumaAttr, OsDevTypes, PageType as CorePageType, PciAttr as CorePciAttr,
};
use wloc_core::topology::{MemTier, PciLocality};
use wloc_core::{
    CpuSet, MAX_TREE_DEPTH, NodeSet, ObjAttr, ObjId, ObjKind, ObjType, Object, Topology,
};

use crate::bindings::types::{
    Bitmap, CacheKind, Discovery, Distances, Info, Initiator, Object as WitObject, ObjectAttr,
    ObjectType, PciAttr,
};
use wloc_trust::Limits;

use crate::error::{RecordError, invalid};

type Res<T> = Result<T, RecordError>;

/// The core type of a WIT type.
pub fn obj_type(t: ObjectType) -> ObjType {
    match t {
        ObjectType::Machine => ObjType::Machine,
        ObjectType::Package => ObjType::Package,
        ObjectType::Die => ObjType::Die,
        ObjectType::Core => ObjType::Core,
        ObjectType::Pu => ObjType::PU,
        ObjectType::L1Cache => ObjType::L1Cache,
        ObjectType::L2Cache => ObjType::L2Cache,
        ObjectType::L3Cache => ObjType::L3Cache,
        ObjectType::L4Cache => ObjType::L4Cache,
        ObjectType::L5Cache => ObjType::L5Cache,
        ObjectType::L1iCache => ObjType::L1ICache,
        ObjectType::L2iCache => ObjType::L2ICache,
        ObjectType::L3iCache => ObjType::L3ICache,
        ObjectType::Group => ObjType::Group,
        ObjectType::NumaNode => ObjType::NUMANode,
        ObjectType::MemCache => ObjType::MemCache,
        ObjectType::Bridge => ObjType::Bridge,
        ObjectType::PciDevice => ObjType::PCIDevice,
        ObjectType::OsDevice => ObjType::OSDevice,
        ObjectType::Misc => ObjType::Misc,
    }
}

/// Bytes the record takes, roughly as the host holds it.
fn size_of(d: &Discovery) -> u64 {
    fn s(x: &str) -> u64 {
        x.len() as u64 + 24
    }
    fn b(x: &Bitmap) -> u64 {
        x.words.len() as u64 * 8 + 32
    }
    fn ob(x: &Option<Bitmap>) -> u64 {
        x.as_ref().map_or(8, b)
    }
    fn infos(x: &[Info]) -> u64 {
        x.iter().map(|i| s(&i.name) + s(&i.value)).sum::<u64>() + 24
    }
    let mut n: u64 = 0;
    for o in &d.objects {
        n += 96
            + o.name.as_deref().map_or(0, s)
            + o.subtype.as_deref().map_or(0, s)
            + ob(&o.cpuset)
            + ob(&o.complete_cpuset)
            + ob(&o.nodeset)
            + ob(&o.complete_nodeset)
            + infos(&o.infos);
        if let ObjectAttr::Numa(a) = &o.attr {
            n += a.page_types.len() as u64 * 16;
        }
    }
    for m in &d.distances {
        n += 64 + m.objects.len() as u64 * 4 + m.values.len() as u64 * 8;
        n += m.name.as_deref().map_or(0, s);
    }
    for m in &d.memattrs {
        n += 64 + s(&m.name);
        for v in &m.values {
            n += 32;
            if let Some(Initiator::Cpuset(c)) = &v.initiator {
                n += b(c);
            }
        }
    }
    for k in &d.cpukinds {
        n += 32 + b(&k.cpuset) + infos(&k.infos);
    }
    n += infos(&d.infos);
    n += ob(&d.allowed_cpuset) + ob(&d.allowed_nodeset);
    n += d.support.iter().map(|x| s(x)).sum::<u64>();
    n += d.memtiers.iter().map(|m| 16 + b(&m.nodeset)).sum::<u64>();
    n += d
        .pci_localities
        .iter()
        .map(|m| 16 + b(&m.cpuset))
        .sum::<u64>();
    n
}

/// Objects (or values) checked between two looks at the clock.
const CLOCK_EVERY: usize = 1024;

/// The time budget of the host's own work on a record: the run's deadline
/// again, counted from the start of the checks, so that no record makes
/// the host work longer than a component may.
pub(crate) struct Clock {
    start: Instant,
    limit: Duration,
    n: usize,
}

impl Clock {
    pub(crate) fn new(limit: Duration) -> Clock {
        Clock {
            start: Instant::now(),
            limit,
            n: 0,
        }
    }

    /// Counts one unit of work and looks at the clock every
    /// [`CLOCK_EVERY`] units.
    pub(crate) fn tick(&mut self) -> Res<()> {
        self.n += 1;
        if self.n.is_multiple_of(CLOCK_EVERY) {
            self.check()?;
        }
        Ok(())
    }

    pub(crate) fn check(&self) -> Res<()> {
        if self.start.elapsed() > self.limit {
            return Err(RecordError::Deadline(self.limit));
        }
        Ok(())
    }
}

/// What bounds the indexes of a set.
#[derive(Clone, Copy)]
enum Bound {
    /// A set of PUs: below the record's highest PU index (see [`Scan`]).
    Cpus,
    /// A set of NUMA nodes: below the record's highest node index.
    Nodes,
    /// Only the cap [`MAX_SET_BITS`] (the root's complete sets, allowed
    /// sets, memory tiers and PCI localities).
    Cap,
}

/// The highest index a finite list of words holds, without allocating.
fn highest(words: &[u64]) -> Option<u64> {
    let i = words.iter().rposition(|&w| w != 0)?;
    Some(i as u64 * 64 + 63 - u64::from(words[i].leading_zeros()))
}

/// Whether finite words hold exactly the index `os`.
fn is_singleton(words: &[u64], os: u32) -> bool {
    let at = os as usize / 64;
    words
        .iter()
        .enumerate()
        .all(|(i, &w)| w == if i == at { 1 << (os % 64) } else { 0 })
        && words.len() > at
}

/// The first character of `s` that no exporter can write (NUL), if any.
fn xml_safe(s: &str) -> Option<char> {
    // NUL ends a C string and cannot be written at all. Other characters
    // XML cannot carry (C0 controls but tab, line feed and carriage
    // return) occur in real firmware strings (DMI): they are kept, and the
    // XML writer drops them as hwloc's does, rather than losing the record.
    s.chars().find(|&c| c == '\0')
}

struct Checker<'a> {
    limits: &'a Limits,
    /// One past the highest PU index of the record.
    cpu_bound: u64,
    /// One past the highest NUMA node index of the record.
    node_bound: u64,
    /// Infos accepted so far in the whole record.
    infos_total: usize,
}

impl Checker<'_> {
    fn string(&self, what: &(impl fmt::Display + ?Sized), s: &str) -> Res<()> {
        if s.len() > self.limits.max_string_bytes {
            return Err(invalid!(
                "{what} is {} bytes long (at most {})",
                s.len(),
                self.limits.max_string_bytes
            ));
        }
        if let Some(c) = xml_safe(s) {
            return Err(invalid!(
                "{what} holds the character {c:?}, which XML cannot carry"
            ));
        }
        Ok(())
    }

    /// A set, checked before anything is allocated: its length, its
    /// highest index against `bound` and [`MAX_SET_BITS`].
    fn bitmap(
        &self,
        what: &(impl fmt::Display + ?Sized),
        b: &Bitmap,
        may_be_infinite: bool,
        bound: Bound,
    ) -> Res<CoreBitmap> {
        if b.words.len() > self.limits.max_bitmap_words {
            return Err(invalid!(
                "{what} has {} words (at most {})",
                b.words.len(),
                self.limits.max_bitmap_words
            ));
        }
        if b.infinite && !may_be_infinite {
            return Err(invalid!("{what} is infinite"));
        }
        let cap = u64::from(MAX_SET_BITS);
        if b.infinite {
            // The all-set tail starts after the last word that is not full.
            let tail = b.words.iter().rposition(|&w| w != !0).map_or(0, |i| i + 1) as u64 * 64;
            if tail > cap {
                return Err(invalid!(
                    "{what} is infinite from index {tail}, beyond the cap of {}",
                    cap - 1
                ));
            }
            let inverted: Vec<u64> = b.words.iter().map(|w| !w).collect();
            let mut x = CoreBitmap::from_words(&inverted);
            x.invert();
            return Ok(x);
        }
        if let Some(top) = highest(&b.words) {
            if top >= cap {
                return Err(invalid!(
                    "{what} holds index {top}, beyond the cap of {}",
                    cap - 1
                ));
            }
            let (limit, noun) = match bound {
                Bound::Cpus => (self.cpu_bound, "PU"),
                Bound::Nodes => (self.node_bound, "NUMA node"),
                Bound::Cap => (cap, ""),
            };
            if top >= limit {
                return Err(if limit == 0 {
                    invalid!("{what} holds index {top}, and the record has no {noun}")
                } else {
                    invalid!(
                        "{what} holds index {top}, beyond {}, the highest {noun} index of the record",
                        limit - 1
                    )
                });
            }
        }
        Ok(CoreBitmap::from_words(&b.words))
    }

    fn cpuset(
        &self,
        what: &(impl fmt::Display + ?Sized),
        b: &Option<Bitmap>,
        bound: Bound,
    ) -> Res<Option<CpuSet>> {
        b.as_ref()
            .map(|b| self.bitmap(what, b, false, bound).map(CpuSet::from_bitmap))
            .transpose()
    }

    fn nodeset(
        &self,
        what: &(impl fmt::Display + ?Sized),
        b: &Option<Bitmap>,
        bound: Bound,
    ) -> Res<Option<NodeSet>> {
        b.as_ref()
            .map(|b| self.bitmap(what, b, false, bound).map(NodeSet::from_bitmap))
            .transpose()
    }

    /// Infos of one object (or kind, or the topology): at most
    /// `max_infos` each and `max_total_infos` in the record; names not
    /// empty; every string XML-safe.
    fn infos(&mut self, what: &(impl fmt::Display + ?Sized), infos: &[Info]) -> Res<Vec<CoreInfo>> {
        if infos.len() > self.limits.max_infos {
            return Err(invalid!(
                "{what} has {} infos (at most {})",
                infos.len(),
                self.limits.max_infos
            ));
        }
        self.infos_total += infos.len();
        if self.infos_total > self.limits.max_total_infos {
            return Err(invalid!(
                "the record holds more than {} infos in all",
                self.limits.max_total_infos
            ));
        }
        let mut out = Vec::with_capacity(infos.len());
        for i in infos {
            if i.name.is_empty() {
                return Err(invalid!("{what} has an info without a name"));
            }
            self.string(&Field(what, "info name", ""), &i.name)?;
            self.string(&Field(what, "info ", &i.name), &i.value)?;
            out.push(CoreInfo {
                name: i.name.clone(),
                value: i.value.clone(),
            });
        }
        Ok(out)
    }
}

fn pci_attr(what: &(impl fmt::Display + ?Sized), p: &PciAttr) -> Res<CorePciAttr> {
    if !p.link_speed.is_finite() || p.link_speed < 0.0 {
        return Err(invalid!("{what} has link speed {}", p.link_speed));
    }
    if p.dev > 31 || p.function > 7 {
        return Err(invalid!(
            "{what} has PCI address {:02x}.{:x}, beyond device 1f function 7",
            p.dev,
            p.function
        ));
    }
    Ok(CorePciAttr {
        domain: p.domain,
        bus: p.bus,
        dev: p.dev,
        func: p.function,
        class_id: p.class_id,
        vendor_id: p.vendor_id,
        device_id: p.device_id,
        subvendor_id: p.subvendor_id,
        subdevice_id: p.subdevice_id,
        revision: p.revision,
        linkspeed: p.link_speed,
        prog_if: p.prog_if,
    })
}

/// The core attribute of an object, checked against its type; `None`
/// keeps the type's defaults.
fn attr(what: &(impl fmt::Display + ?Sized), t: ObjType, a: &ObjectAttr) -> Res<Option<ObjAttr>> {
    let wrong = |name: &str| invalid!("{what} has {name} attributes, which a {t} cannot have");
    Ok(Some(match a {
        ObjectAttr::None => return Ok(None),
        ObjectAttr::Numa(n) => {
            if t != ObjType::NUMANode {
                return Err(wrong("NUMA"));
            }
            if n.page_types.len() > 64 {
                return Err(invalid!(
                    "{what} has {} page types (at most 64)",
                    n.page_types.len()
                ));
            }
            ObjAttr::Numa(CoreNumaAttr {
                local_memory: n.local_memory,
                page_types: n
                    .page_types
                    .iter()
                    .map(|p| CorePageType {
                        size: p.size,
                        count: p.count,
                    })
                    .collect(),
            })
        }
        ObjectAttr::Cache(c) => {
            let kind = match c.kind {
                CacheKind::Unified => CoreCacheKind::Unified,
                CacheKind::Data => CoreCacheKind::Data,
                CacheKind::Instruction => CoreCacheKind::Instruction,
            };
            if t == ObjType::MemCache {
                if c.depth == 0 || c.depth > 16 {
                    return Err(invalid!("{what} has memory-side cache depth {}", c.depth));
                }
            } else if let Some(level) = t.cache_level() {
                if c.depth != level {
                    return Err(invalid!("{what} is a {t} with cache depth {}", c.depth));
                }
                if t.is_icache() != (kind == CoreCacheKind::Instruction) {
                    return Err(invalid!("{what} is a {t} with cache kind {kind:?}"));
                }
            } else {
                return Err(wrong("cache"));
            }
            if c.associativity < -1 {
                return Err(invalid!("{what} has associativity {}", c.associativity));
            }
            ObjAttr::Cache(CoreCacheAttr {
                size: c.size,
                depth: c.depth,
                linesize: c.linesize,
                associativity: c.associativity,
                kind,
                inclusive: c.inclusive,
            })
        }
        ObjectAttr::Group(g) => {
            if t != ObjType::Group {
                return Err(wrong("group"));
            }
            ObjAttr::Group(CoreGroupAttr {
                depth: 0,
                kind: g.kind,
                subkind: g.subkind,
                dont_merge: g.dont_merge,
            })
        }
        ObjectAttr::Pci(p) => {
            if t != ObjType::PCIDevice {
                return Err(wrong("PCI"));
            }
            ObjAttr::Pci(pci_attr(what, p)?)
        }
        ObjectAttr::Bridge(b) => {
            if t != ObjType::Bridge {
                return Err(wrong("bridge"));
            }
            if b.secondary_bus > b.subordinate_bus {
                return Err(invalid!(
                    "{what} has secondary bus {:02x} above subordinate bus {:02x}",
                    b.secondary_bus,
                    b.subordinate_bus
                ));
            }
            ObjAttr::Bridge(CoreBridgeAttr {
                upstream: match &b.upstream {
                    None => BridgeUpstream::Host,
                    Some(p) => BridgeUpstream::Pci(pci_attr(what, p)?),
                },
                domain: b.domain,
                secondary_bus: b.secondary_bus,
                subordinate_bus: b.subordinate_bus,
                depth: 0,
            })
        }
        ObjectAttr::OsDevice(kinds) => {
            if t != ObjType::OSDevice {
                return Err(wrong("OS device"));
            }
            if *kinds >= 1 << 7 {
                return Err(invalid!(
                    "{what} has unknown OS device kind bits {kinds:#x}"
                ));
            }
            ObjAttr::OsDev(OsDevTypes(*kinds))
        }
    }))
}

/// An object of the record as error messages name it, formatted only
/// when an error is written (a record has up to a million objects).
#[derive(Clone, Copy)]
struct Described<'a>(usize, &'a WitObject);

impl fmt::Display for Described<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Described(i, o) = self;
        write!(f, "object {i} (id {}, {})", o.id, obj_type(o.type_))
    }
}

fn describe(i: usize, o: &WitObject) -> Described<'_> {
    Described(i, o)
}

/// A part of something named in an error message: `what: partdetail`.
struct Field<'a, W: ?Sized>(&'a W, &'a str, &'a str);

impl<W: fmt::Display + ?Sized> fmt::Display for Field<'_, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}{}", self.0, self.1, self.2)
    }
}

/// Where each object of the record went.
#[derive(Clone, Copy)]
enum Placed {
    /// In the tree with this id.
    At(ObjId),
    /// Dropped by the type filters while being placed by its sets.
    Filtered,
}

/// The checks of a distance matrix's shape, whoever sends it (a discovery
/// or an annotation record): at least one object, objects² values, known
/// kind bits.  Returns the number of objects.
pub(crate) fn check_distances_shape(what: &str, m: &Distances) -> Res<usize> {
    let n = m.objects.len();
    if n == 0 {
        return Err(invalid!("{what} has no object"));
    }
    if n.checked_mul(n) != Some(m.values.len()) {
        return Err(invalid!(
            "{what} has {n} objects and {} values instead of {n}²",
            m.values.len()
        ));
    }
    if m.kind >= 1 << 5 {
        return Err(invalid!("{what} has unknown kind bits {:#x}", m.kind));
    }
    Ok(n)
}

/// Caps on the lists of a record besides its objects.
const MAX_DISTANCES: usize = 4096;
const MAX_MEMATTRS: usize = 4096;
/// Real machines have a handful of CPU kinds; registering one costs a
/// pass over those already there.
const MAX_CPUKINDS: usize = 256;
const MAX_SUPPORT: usize = 4096;
const MAX_MEMTIERS: usize = 4096;
const MAX_PCI_LOCALITIES: usize = 65536;
/// Siblings the core may look at while placing a record's objects by
/// their sets.  Placing among `w` siblings costs `O(w)`: real machines
/// placed PU by PU cost a few hundred per object, while a flat record of
/// 262,144 PUs without parents would cost 3.4e10.  About 0.1 s of work.
const MAX_PLACEMENT_VISITS: u64 = 1 << 26;

/// Checks a discovery and adds its content to `topo` (not finished).
///
/// The work is O(n log n) in the record's size for records whose objects
/// have parents (what `wloc-guest` sends); objects placed by their sets
/// cost the core's placement (a pass over the siblings on the way down)
/// and, like everything here, are bounded by the run's deadline.
pub fn apply(d: &Discovery, topo: &mut Topology, limits: &Limits) -> Res<()> {
    let mut clock = Clock::new(limits.deadline);
    check_sizes(d, limits)?;
    let ids = Ids::new(d)?;
    ids.check_depths(d)?;
    let scan = Scan::new(d, &ids)?;
    let mut ck = Checker {
        limits,
        cpu_bound: scan.cpu_bound,
        node_bound: scan.node_bound,
        infos_total: 0,
    };
    let keep_ids = topo.ids().nth(1).is_none()
        && d.objects
            .iter()
            .enumerate()
            .all(|(i, o)| Some(i) == ids.root || o.id >= 2);
    if keep_ids {
        // Objects the host creates (while placing, or when finishing) get
        // gp indexes above every id the component gave.
        if let Some(max) = d.objects.iter().map(|o| o.id).max() {
            topo.reserve_gp_index(u64::from(max));
        }
    }
    let placed = insert_objects(d, topo, &mut ck, &ids, keep_ids, &mut clock)?;
    let resolve = |what: &str, id: u32| -> Res<Option<ObjId>> {
        match ids.index.get(&id) {
            None => Err(invalid!("{what} refers to id {id}, which is no object")),
            Some(&i) => Ok(match placed[i] {
                Placed::At(o) => Some(o),
                Placed::Filtered => None,
            }),
        }
    };
    apply_distances(d, topo, &ck, &resolve, &mut clock)?;
    apply_memattrs(d, topo, &ck, &resolve, &mut clock)?;
    apply_cpukinds(d, topo, &mut ck, &scan, &mut clock)?;
    apply_rest(d, topo, &mut ck)?;
    clock.check()
}

/// The counts and the size of the record, before anything else.
fn check_sizes(d: &Discovery, limits: &Limits) -> Res<()> {
    if d.objects.len() > limits.max_objects {
        return Err(RecordError::TooMany {
            what: "objects".into(),
            count: d.objects.len(),
            max: limits.max_objects,
        });
    }
    let size = size_of(d);
    if size > limits.max_returned_bytes {
        return Err(invalid!(
            "{size} bytes of data returned (at most {})",
            limits.max_returned_bytes
        ));
    }
    for (what, n, max) in [
        ("distance matrices", d.distances.len(), MAX_DISTANCES),
        ("memory attributes", d.memattrs.len(), MAX_MEMATTRS),
        ("CPU kinds", d.cpukinds.len(), MAX_CPUKINDS),
        ("support names", d.support.len(), MAX_SUPPORT),
        ("memory tiers", d.memtiers.len(), MAX_MEMTIERS),
        ("PCI localities", d.pci_localities.len(), MAX_PCI_LOCALITIES),
    ] {
        if n > max {
            return Err(RecordError::TooMany {
                what: what.into(),
                count: n,
                max,
            });
        }
    }
    Ok(())
}

/// The record's ids: unique, each with its position; and the root.
struct Ids {
    index: HashMap<u32, usize>,
    /// The Machine without a parent, if any.
    root: Option<usize>,
}

impl Ids {
    fn new(d: &Discovery) -> Res<Ids> {
        let mut index: HashMap<u32, usize> = HashMap::with_capacity(d.objects.len());
        for (i, o) in d.objects.iter().enumerate() {
            if let Some(first) = index.insert(o.id, i) {
                return Err(invalid!(
                    "id {} is used by object {first} and by object {i}",
                    o.id
                ));
            }
        }
        let root = d
            .objects
            .iter()
            .position(|o| o.type_ == ObjectType::Machine && o.parent.is_none());
        Ok(Ids { index, root })
    }

    /// The depth of every object along the record's parent links, in one
    /// pass (parents come first; a parent that does not is refused later,
    /// when the object is placed): none may be deeper than
    /// [`MAX_TREE_DEPTH`].  An object without a parent is counted at
    /// depth 1, under the root.
    fn check_depths(&self, d: &Discovery) -> Res<()> {
        let mut depth: Vec<u32> = Vec::with_capacity(d.objects.len());
        for (i, o) in d.objects.iter().enumerate() {
            let me = match o.parent.and_then(|p| self.index.get(&p)) {
                Some(&pi) if pi < i => depth[pi] + 1,
                _ if Some(i) == self.root => 0,
                _ => 1,
            };
            if me as usize > MAX_TREE_DEPTH {
                return Err(invalid!(
                    "{}: its parent links put it at depth {me}, deeper than the deepest tree accepted ({MAX_TREE_DEPTH})",
                    describe(i, o)
                ));
            }
            depth.push(me);
        }
        Ok(())
    }
}

/// What the record's PUs and NUMA nodes are, found before any set is
/// built: their OS indexes (unique, below [`MAX_SET_BITS`]) and the
/// bounds of every other set.
struct Scan {
    pus: Vec<u32>,
    cpu_bound: u64,
    node_bound: u64,
}

impl Scan {
    fn new(d: &Discovery, ids: &Ids) -> Res<Scan> {
        let cap = u64::from(MAX_SET_BITS);
        let mut pus: HashSet<u32> = HashSet::new();
        let mut nodes: HashSet<u32> = HashSet::new();
        let mut cpu_bound = 0u64;
        let mut node_bound = 0u64;
        for (i, o) in d.objects.iter().enumerate() {
            let (seen, bound, noun) = match o.type_ {
                ObjectType::Pu => (&mut pus, &mut cpu_bound, "PU"),
                ObjectType::NumaNode => (&mut nodes, &mut node_bound, "NUMA node"),
                _ => continue,
            };
            let what = describe(i, o);
            let os = o
                .os_index
                .ok_or_else(|| invalid!("{what}: a {noun} needs an OS index"))?;
            if u64::from(os) >= cap {
                return Err(invalid!(
                    "{what}: OS index {os} is beyond the cap of {}",
                    cap - 1
                ));
            }
            if !seen.insert(os) {
                return Err(invalid!("{what}: two {noun}s have OS index {os}"));
            }
            *bound = (*bound).max(u64::from(os) + 1);
        }
        // The root's complete sets also name PUs and nodes without objects
        // (offline ones): they widen the bounds, within the cap.
        if let Some(r) = ids.root.map(|i| &d.objects[i]) {
            let top = |b: &Option<Bitmap>| -> Res<u64> {
                match b
                    .as_ref()
                    .filter(|b| !b.infinite)
                    .and_then(|b| highest(&b.words))
                {
                    Some(t) if t >= cap => Err(invalid!(
                        "the root's sets hold index {t}, beyond the cap of {}",
                        cap - 1
                    )),
                    Some(t) => Ok(t + 1),
                    None => Ok(0),
                }
            };
            cpu_bound = cpu_bound.max(top(&r.complete_cpuset)?).max(top(&r.cpuset)?);
            node_bound = node_bound
                .max(top(&r.complete_nodeset)?)
                .max(top(&r.nodeset)?);
        }
        let mut pus: Vec<u32> = pus.into_iter().collect();
        pus.sort_unstable();
        Ok(Scan {
            pus,
            cpu_bound,
            node_bound,
        })
    }
}

/// The root Machine of the record: its name, subtype and infos go to the
/// topology's root, its complete sets add offline PUs and nodes.
fn apply_root(
    what: &(impl fmt::Display + ?Sized),
    o: &WitObject,
    topo: &mut Topology,
    ck: &mut Checker,
) -> Res<()> {
    let t = ObjType::Machine;
    let infos = ck.infos(what, &o.infos)?;
    if let Some(n) = &o.name {
        ck.string(&Field(&what, "name", ""), n)?;
    }
    if let Some(s) = &o.subtype {
        ck.string(&Field(&what, "subtype", ""), s)?;
    }
    attr(what, t, &o.attr)?;
    // The root's sets are rebuilt from its PUs and NUMA nodes, but its
    // complete sets also hold what has no object: offline PUs and nodes.
    // They come from the record.
    let full_cpuset = match ck.cpuset(
        &Field(&what, "complete cpuset", ""),
        &o.complete_cpuset,
        Bound::Cpus,
    )? {
        Some(c) => Some(c),
        None => ck.cpuset(&Field(&what, "cpuset", ""), &o.cpuset, Bound::Cpus)?,
    };
    let full_nodeset = match ck.nodeset(
        &Field(&what, "complete nodeset", ""),
        &o.complete_nodeset,
        Bound::Nodes,
    )? {
        Some(n) => Some(n),
        None => ck.nodeset(&Field(&what, "nodeset", ""), &o.nodeset, Bound::Nodes)?,
    };
    let r = topo.root_mut();
    if let Some(c) = full_cpuset {
        let rc = r.complete_cpuset.get_or_insert_with(CpuSet::new);
        *rc = &*rc | &c;
    }
    if let Some(n) = full_nodeset {
        let rn = r.complete_nodeset.get_or_insert_with(NodeSet::new);
        *rn = &*rn | &n;
    }
    if o.name.is_some() {
        r.name = o.name.clone();
    }
    if o.subtype.is_some() {
        r.subtype = o.subtype.clone();
    }
    r.infos.extend(infos);
    Ok(())
}

/// Checks every object and inserts it: under its parent, or by its sets.
/// Returns where each went.
fn insert_objects(
    d: &Discovery,
    topo: &mut Topology,
    ck: &mut Checker,
    ids: &Ids,
    keep_ids: bool,
    clock: &mut Clock,
) -> Res<Vec<Placed>> {
    let mut placed: Vec<Placed> = Vec::with_capacity(d.objects.len());
    // Groups placed by their sets, by set: a Group whose set another one
    // of the record has already is merged into it, as hwloc drops a Group
    // identical to an existing object (kept side by side, such Groups
    // could only nest, one level per copy).
    let mut groups: HashMap<Vec<u64>, usize> = HashMap::new();
    let visits_before = topo.placement_visits();
    for (i, o) in d.objects.iter().enumerate() {
        clock.tick()?;
        let t = obj_type(o.type_);
        let what = describe(i, o);
        let parent = parent_of(&what, i, o, ids, &placed)?;
        if t == ObjType::Machine {
            if parent.is_some() {
                return Err(invalid!("{what}: a Machine can only be the root"));
            }
            if Some(i) != ids.root {
                return Err(invalid!("{what}: a second root Machine"));
            }
            apply_root(&what, o, topo, ck)?;
            placed.push(Placed::At(topo.root()));
            continue;
        }
        let sets = object_sets(&what, o, t, ck)?;
        let parent_id = parent_slot(&what, d, topo, t, &sets, parent)?;
        let mut obj = described_object(&what, o, t, ck)?;
        if parent_id.is_none()
            && t == ObjType::Group
            && let Some(set) = sets.full_cpuset()
        {
            let key = set.words().to_vec();
            if let Some(&first) = groups.get(&key) {
                placed.push(placed[first]);
                continue;
            }
            groups.insert(key, i);
        }
        obj.cpuset = sets.cpuset;
        obj.complete_cpuset = sets.complete_cpuset;
        obj.nodeset = sets.nodeset;
        obj.complete_nodeset = sets.complete_nodeset;
        if keep_ids {
            obj.gp_index = u64::from(o.id);
        }
        placed.push(insert_one(&what, topo, parent_id, obj, visits_before)?);
    }
    Ok(placed)
}

/// The parent of object `i`: an earlier object of this record, with
/// where it went.
fn parent_of(
    what: &Described,
    i: usize,
    o: &WitObject,
    ids: &Ids,
    placed: &[Placed],
) -> Res<Option<(usize, Placed)>> {
    let Some(p) = o.parent else {
        return Ok(None);
    };
    match ids.index.get(&p) {
        None => Err(invalid!(
            "{what}: parent id {p} is not an object of this discovery"
        )),
        Some(&pi) if pi >= i => Err(invalid!(
            "{what}: parent id {p} is object {pi}, which does not come before it (parents come first; cycles are impossible)"
        )),
        Some(&pi) => Ok(Some((pi, placed[pi]))),
    }
}

/// The four sets of an object, checked.
struct Sets {
    cpuset: Option<CpuSet>,
    complete_cpuset: Option<CpuSet>,
    nodeset: Option<NodeSet>,
    complete_nodeset: Option<NodeSet>,
}

impl Sets {
    /// The complete cpuset, else the cpuset.
    fn full_cpuset(&self) -> Option<&CpuSet> {
        self.complete_cpuset.as_ref().or(self.cpuset.as_ref())
    }

    /// Whether there are no CPUs to place the object by.
    fn cpuless(&self) -> bool {
        self.full_cpuset().is_none_or(|c| c.is_empty())
    }
}

/// Checks an object's sets: each on its own, against each other and
/// against its type (I/O and Misc objects have none, other objects need
/// CPUs, a PU's and a NUMA node's sets hold their OS index).
fn object_sets(what: &Described, o: &WitObject, t: ObjType, ck: &Checker) -> Res<Sets> {
    let kind = t.kind();
    let cpuset = ck.cpuset(&Field(what, "cpuset", ""), &o.cpuset, Bound::Cpus)?;
    let ccpuset = ck.cpuset(
        &Field(what, "complete cpuset", ""),
        &o.complete_cpuset,
        Bound::Cpus,
    )?;
    let nodeset = ck.nodeset(&Field(what, "nodeset", ""), &o.nodeset, Bound::Nodes)?;
    let cnodeset = ck.nodeset(
        &Field(what, "complete nodeset", ""),
        &o.complete_nodeset,
        Bound::Nodes,
    )?;
    match kind {
        ObjKind::Io | ObjKind::Misc => {
            if cpuset.is_some() || ccpuset.is_some() || nodeset.is_some() || cnodeset.is_some() {
                return Err(invalid!("{what}: I/O and Misc objects carry no sets"));
            }
        }
        ObjKind::Normal | ObjKind::Memory => {
            if let (Some(c), Some(cc)) = (&cpuset, &ccpuset)
                && !cc.includes(c)
            {
                return Err(invalid!("{what}: cpuset is not inside complete cpuset"));
            }
            if let (Some(n), Some(cn)) = (&nodeset, &cnodeset)
                && !cn.includes(n)
            {
                return Err(invalid!("{what}: nodeset is not inside complete nodeset"));
            }
        }
    }
    let sets = Sets {
        cpuset,
        complete_cpuset: ccpuset,
        nodeset,
        complete_nodeset: cnodeset,
    };
    // Groups of CPU-less NUMA nodes (built from distances) hold memory
    // only; their parent places them.  Other objects need CPUs.
    if kind == ObjKind::Normal && sets.cpuless() && (t != ObjType::Group || o.parent.is_none()) {
        return Err(invalid!("{what}: a {t} needs a non-empty cpuset"));
    }
    // OS indexes were checked (present, unique, capped) by the scan;
    // the sets are compared with them word by word.
    let os = o.os_index.unwrap_or(0);
    let raw = |c: &Option<Bitmap>, cc: &Option<Bitmap>| cc.clone().or_else(|| c.clone());
    match t {
        ObjType::PU => {
            let full = raw(&o.cpuset, &o.complete_cpuset);
            if !full
                .as_ref()
                .is_some_and(|b| !b.infinite && is_singleton(&b.words, os))
            {
                return Err(invalid!(
                    "{what}: the cpuset of PU P#{os} must be {{{os}}}, not {}",
                    sets.full_cpuset().map_or(String::new(), |c| c.to_string())
                ));
            }
        }
        ObjType::NUMANode => {
            let full = raw(&o.nodeset, &o.complete_nodeset);
            if !full
                .as_ref()
                .is_some_and(|b| !b.infinite && is_singleton(&b.words, os))
            {
                return Err(invalid!(
                    "{what}: the nodeset of NUMA node P#{os} must be {{{os}}}"
                ));
            }
        }
        _ => {}
    }
    Ok(sets)
}

/// Where an object of type `t` goes: under the topology object `Some(id)`,
/// or (`None`) where its sets place it.  `parent` is its parent in the
/// record, if it has one.
fn parent_slot(
    what: &Described,
    d: &Discovery,
    topo: &Topology,
    t: ObjType,
    sets: &Sets,
    parent: Option<(usize, Placed)>,
) -> Res<Option<ObjId>> {
    let kind = t.kind();
    let full_cpuset = sets.full_cpuset();
    let parent_id = match parent {
        None => None,
        Some((pi, Placed::At(pid))) => {
            let pt = obj_type(d.objects[pi].type_);
            let pk = pt.kind();
            // As hwloc: normal objects under normal ones other than
            // PUs; memory under normal ones other than PUs, or under
            // memory-side caches; I/O under normal or I/O ones; Misc
            // anywhere.
            let ok = match kind {
                ObjKind::Normal => pk == ObjKind::Normal && pt != ObjType::PU,
                ObjKind::Memory => {
                    (pk == ObjKind::Normal && pt != ObjType::PU) || pt == ObjType::MemCache
                }
                ObjKind::Io => pk == ObjKind::Normal || pk == ObjKind::Io,
                ObjKind::Misc => true,
            };
            if !ok {
                return Err(invalid!(
                    "{what}: a {t} cannot be a child of {}",
                    describe(pi, &d.objects[pi])
                ));
            }
            if kind == ObjKind::Normal && pid != topo.root() {
                let p = topo.obj(pid);
                if let (Some(mine), Some(theirs)) = (
                    full_cpuset,
                    p.complete_cpuset.as_ref().or(p.cpuset.as_ref()),
                ) && !theirs.includes(mine)
                {
                    return Err(invalid!(
                        "{what}: cpuset {mine} is not inside its parent's {theirs}"
                    ));
                }
            }
            Some(pid)
        }
        // The parent was filtered out: place by sets, or under the root.
        Some((_, Placed::Filtered)) => match kind {
            // Nothing to place a CPU-less group by: keep it at the top.
            ObjKind::Normal if sets.cpuless() => Some(topo.root()),
            ObjKind::Normal | ObjKind::Memory => None,
            _ => Some(topo.root()),
        },
    };
    if parent_id.is_none() && matches!(kind, ObjKind::Io | ObjKind::Misc) {
        return Err(invalid!("{what}: a {t} needs a parent"));
    }
    if parent_id.is_none() && kind == ObjKind::Memory && full_cpuset.is_none() {
        return Err(invalid!(
            "{what}: a {t} without a parent needs a cpuset to be placed"
        ));
    }
    Ok(parent_id)
}

/// A new object of type `t` with what describes it: its attributes,
/// name, subtype and infos, checked.  Its sets are added by the caller.
fn described_object(what: &Described, o: &WitObject, t: ObjType, ck: &mut Checker) -> Res<Object> {
    let mut obj = Object::new(t, o.os_index);
    if let Some(a) = attr(what, t, &o.attr)? {
        obj.attr = a;
    }
    if let Some(n) = &o.name {
        ck.string(&Field(what, "name", ""), n)?;
    }
    if let Some(s) = &o.subtype {
        ck.string(&Field(what, "subtype", ""), s)?;
    }
    obj.name = o.name.clone();
    obj.subtype = o.subtype.clone();
    obj.infos = ck.infos(what, &o.infos)?;
    Ok(obj)
}

/// Inserts `obj` under `parent_id`, or by its sets, within the budget of
/// set comparisons the record's placements share (counted from
/// `visits_before`).
fn insert_one(
    what: &Described,
    topo: &mut Topology,
    parent_id: Option<ObjId>,
    obj: Object,
    visits_before: u64,
) -> Res<Placed> {
    Ok(match parent_id {
        Some(pid) => {
            let id = topo
                .insert_by_parent(pid, obj)
                .map_err(|e| invalid!("{what}: {e}"))?;
            Placed::At(id)
        }
        None => match topo.insert_by_cpuset(obj) {
            Ok(Some(ins)) => {
                let visits = topo.placement_visits() - visits_before;
                if visits > MAX_PLACEMENT_VISITS {
                    return Err(invalid!(
                        "{what}: placing the record's objects by their sets has compared {visits} \
                         siblings (at most {MAX_PLACEMENT_VISITS}); objects given with their \
                         parents cost no comparison"
                    ));
                }
                Placed::At(ins.id())
            }
            Ok(None) => Placed::Filtered,
            Err(e) => return Err(invalid!("{what}: {e}")),
        },
    })
}

/// Distance matrices: shape, names, objects resolved (a matrix naming an
/// object the filters dropped is left out).
fn apply_distances(
    d: &Discovery,
    topo: &mut Topology,
    ck: &Checker,
    resolve: &dyn Fn(&str, u32) -> Res<Option<ObjId>>,
    clock: &mut Clock,
) -> Res<()> {
    for (k, m) in d.distances.iter().enumerate() {
        clock.tick()?;
        let what = format!("distance matrix {k}");
        if let Some(n) = &m.name {
            ck.string(&Field(&what, "name", ""), n)?;
        }
        let n = check_distances_shape(&what, m)?;
        let mut seen = HashSet::new();
        let mut objs = Vec::with_capacity(n);
        let mut complete = true;
        for &id in &m.objects {
            if !seen.insert(id) {
                return Err(invalid!("{what} lists id {id} twice"));
            }
            match resolve(&what, id)? {
                Some(o) => objs.push(o),
                None => complete = false,
            }
        }
        if complete {
            let mut distinct: HashSet<ObjId> = HashSet::with_capacity(objs.len());
            if !objs.iter().all(|o| distinct.insert(*o)) {
                return Err(invalid!(
                    "{what} lists two ids of one object (a Group merged into another)"
                ));
            }
            let dist = CoreDistances::new(m.name.clone(), m.kind, objs, m.values.clone())
                .ok_or_else(|| invalid!("{what} has a wrong number of values"))?;
            topo.distances.push(dist);
        }
    }
    Ok(())
}

/// An initiator as a map key.
#[derive(Hash, PartialEq, Eq)]
pub(crate) enum InitKey {
    None,
    Object(ObjId),
    Set(Vec<u64>),
}

pub(crate) fn init_key(i: &Option<CoreInitiator>) -> InitKey {
    match i {
        None => InitKey::None,
        Some(CoreInitiator::Object(o)) => InitKey::Object(*o),
        Some(CoreInitiator::CpuSet(c)) => InitKey::Set(c.words().to_vec()),
    }
}

/// Memory attributes: flags as hwloc defines them; values whose targets
/// are NUMA nodes and whose initiators are non-empty sets of the record's
/// PUs or objects with a cpuset (normal and memory objects), as hwloc
/// allows.  A value given twice for a target and an initiator keeps the
/// last one (found with a map, not a scan).
fn apply_memattrs(
    d: &Discovery,
    topo: &mut Topology,
    ck: &Checker,
    resolve: &dyn Fn(&str, u32) -> Res<Option<ObjId>>,
    clock: &mut Clock,
) -> Res<()> {
    for (k, m) in d.memattrs.iter().enumerate() {
        let what = format!("memory attribute {k} ({})", m.name);
        if m.name.is_empty() {
            return Err(invalid!("memory attribute {k} has no name"));
        }
        ck.string(&what, &m.name)?;
        use wloc_core::memattrs::flags as f;
        let order = m.flags & (f::HIGHER_FIRST | f::LOWER_FIRST);
        if m.flags >= 1 << 3 || (order != f::HIGHER_FIRST && order != f::LOWER_FIRST) {
            return Err(invalid!(
                "{what} has flags {:#x} (exactly one of 1 and 2, and maybe 4)",
                m.flags
            ));
        }
        if matches!(m.name.as_str(), "Capacity" | "Locality") {
            continue;
        }
        if let Some((_, pf)) = wloc_core::memattrs::PREDEFINED
            .iter()
            .find(|(n, _)| *n == m.name)
            && *pf != m.flags
        {
            return Err(invalid!(
                "{what} has flags {:#x}, hwloc defines {pf:#x}",
                m.flags
            ));
        }
        let slot = match topo.memattrs.iter().position(|x| x.name == m.name) {
            Some(i) if topo.memattrs[i].flags == m.flags => i,
            Some(_) => return Err(invalid!("{what} exists already with other flags")),
            None => {
                topo.memattrs.push(MemAttr::new(&m.name, m.flags));
                topo.memattrs.len() - 1
            }
        };
        let needs = m.flags & f::NEED_INITIATOR != 0;
        let mut at: HashMap<(ObjId, InitKey), usize> = topo.memattrs[slot]
            .values
            .iter()
            .enumerate()
            .map(|(j, v)| ((v.target, init_key(&v.initiator)), j))
            .collect();
        for v in &m.values {
            clock.tick()?;
            let Some(target) = resolve(&what, v.target)? else {
                continue;
            };
            let tt = topo.obj(target).obj_type;
            if tt != ObjType::NUMANode {
                return Err(invalid!(
                    "{what}: the target id {} is a {tt}; targets are NUMA nodes",
                    v.target
                ));
            }
            let initiator = match &v.initiator {
                None => None,
                Some(Initiator::Object(id)) => match resolve(&what, *id)? {
                    Some(o) => {
                        let it = topo.obj(o).obj_type;
                        if !matches!(it.kind(), ObjKind::Normal | ObjKind::Memory) {
                            return Err(invalid!(
                                "{what}: the initiator id {id} is a {it}, which has no cpuset"
                            ));
                        }
                        Some(CoreInitiator::Object(o))
                    }
                    None => continue,
                },
                Some(Initiator::Cpuset(c)) => {
                    let set = CpuSet::from_bitmap(ck.bitmap(
                        &format!("{what}: initiator"),
                        c,
                        false,
                        Bound::Cpus,
                    )?);
                    if set.is_empty() {
                        return Err(invalid!("{what}: an initiator set is empty"));
                    }
                    Some(CoreInitiator::CpuSet(set))
                }
            };
            if needs && initiator.is_none() {
                return Err(invalid!("{what} needs initiators and a value has none"));
            }
            // As `MemAttr::set`: no initiator kept where none is needed.
            let initiator = if needs { initiator } else { None };
            let values = &mut topo.memattrs[slot].values;
            match at.entry((target, init_key(&initiator))) {
                std::collections::hash_map::Entry::Occupied(e) => values[*e.get()].value = v.value,
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(values.len());
                    values.push(MemAttrValue {
                        target,
                        initiator,
                        value: v.value,
                    });
                }
            }
        }
    }
    Ok(())
}

/// CPU kinds: each a non-empty set of the record's PUs, registered as
/// hwloc's `hwloc_cpukinds_register` does (overlapping kinds are split
/// into their intersections).
fn apply_cpukinds(
    d: &Discovery,
    topo: &mut Topology,
    ck: &mut Checker,
    scan: &Scan,
    clock: &mut Clock,
) -> Res<()> {
    if d.cpukinds.is_empty() {
        return Ok(());
    }
    let mut pus = CpuSet::new();
    for &p in &scan.pus {
        pus.set(p);
    }
    for (k, c) in d.cpukinds.iter().enumerate() {
        clock.check()?;
        let what = format!("CPU kind {k}");
        let set = CpuSet::from_bitmap(ck.bitmap(&what, &c.cpuset, false, Bound::Cpus)?);
        if set.is_empty() {
            return Err(invalid!("{what} has no PU"));
        }
        if !pus.includes(&set) {
            let absent = set.and_not(&pus);
            return Err(invalid!(
                "{what} names PUs {absent}, which the record does not have"
            ));
        }
        let infos = ck.infos(&what, &c.infos)?;
        // Splitting overlapping kinds copies infos: the kinds' infos
        // are held to the record's cap on infos before the work is done.
        let after = wloc_core::cpukinds::infos_after_register(&topo.cpukinds, &set, &infos);
        let cap = ck.limits.max_total_infos;
        if after > cap {
            return Err(invalid!(
                "{what} would leave the CPU kinds with up to {after} infos once \
                 overlapping kinds are split (at most {cap})"
            ));
        }
        wloc_core::cpukinds::register(&mut topo.cpukinds, &set, c.forced_efficiency, &infos);
    }
    Ok(())
}

/// The topology's infos and support names, memory tiers, PCI localities
/// and allowed sets.
fn apply_rest(d: &Discovery, topo: &mut Topology, ck: &mut Checker) -> Res<()> {
    let infos = ck.infos("the topology", &d.infos)?;
    topo.infos.extend(infos);
    let mut support: HashSet<String> = topo.support.iter().cloned().collect();
    for s in &d.support {
        ck.string("a support name", s)?;
        if support.insert(s.clone()) {
            topo.support.push(s.clone());
        }
    }
    for (k, m) in d.memtiers.iter().enumerate() {
        let nodeset = NodeSet::from_bitmap(ck.bitmap(
            &format!("memory tier {k}"),
            &m.nodeset,
            false,
            Bound::Cap,
        )?);
        topo.memtiers.push(MemTier {
            kinds: m.kinds,
            nodeset,
        });
    }
    for (k, l) in d.pci_localities.iter().enumerate() {
        let what = format!("PCI locality {k}");
        if l.bus_min > l.bus_max {
            return Err(invalid!(
                "{what} has bus range {:02x}-{:02x}",
                l.bus_min,
                l.bus_max
            ));
        }
        let cpuset = CpuSet::from_bitmap(ck.bitmap(&what, &l.cpuset, false, Bound::Cap)?);
        topo.pci_localities.push(PciLocality {
            domain: l.domain,
            bus_min: l.bus_min,
            bus_max: l.bus_max,
            cpuset,
        });
    }
    if let Some(c) = &d.allowed_cpuset {
        let c = CpuSet::from_bitmap(ck.bitmap("the allowed cpuset", c, true, Bound::Cap)?);
        topo.allowed_cpuset = &topo.allowed_cpuset & &c;
    }
    if let Some(n) = &d.allowed_nodeset {
        let n = NodeSet::from_bitmap(ck.bitmap("the allowed nodeset", n, true, Bound::Cap)?);
        topo.allowed_nodeset = &topo.allowed_nodeset & &n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::types::{CacheKind, Cpukind, GroupAttr, Memattr, MemattrValue};
    use std::time::Instant;

    fn obj(id: u32, parent: Option<u32>, t: ObjectType) -> WitObject {
        WitObject {
            id,
            parent,
            type_: t,
            os_index: None,
            name: None,
            subtype: None,
            cpuset: None,
            complete_cpuset: None,
            nodeset: None,
            complete_nodeset: None,
            attr: ObjectAttr::None,
            infos: Vec::new(),
        }
    }

    fn one(i: u32) -> Option<Bitmap> {
        let mut words = vec![0u64; i as usize / 64 + 1];
        words[i as usize / 64] = 1 << (i % 64);
        Some(Bitmap {
            words,
            infinite: false,
        })
    }

    fn words(w: Vec<u64>) -> Option<Bitmap> {
        Some(Bitmap {
            words: w,
            infinite: false,
        })
    }

    fn pu(id: u32, parent: Option<u32>, os: u32) -> WitObject {
        WitObject {
            os_index: Some(os),
            cpuset: one(os),
            ..obj(id, parent, ObjectType::Pu)
        }
    }

    fn node(id: u32, parent: Option<u32>, os: u32, cpus: u64) -> WitObject {
        WitObject {
            os_index: Some(os),
            nodeset: one(os),
            cpuset: words(vec![cpus]),
            ..obj(id, parent, ObjectType::NumaNode)
        }
    }

    fn record(objects: Vec<WitObject>) -> Discovery {
        Discovery {
            objects,
            distances: Vec::new(),
            memattrs: Vec::new(),
            cpukinds: Vec::new(),
            infos: Vec::new(),
            allowed_cpuset: None,
            allowed_nodeset: None,
            support: Vec::new(),
            memtiers: Vec::new(),
            pci_localities: Vec::new(),
        }
    }

    /// A Machine with `n` PUs under it (ids 2..).
    fn machine(n: u32) -> Vec<WitObject> {
        let mut v = vec![obj(1, None, ObjectType::Machine)];
        v.extend((0..n).map(|i| pu(2 + i, Some(1), i)));
        v
    }

    fn build(d: &Discovery) -> Result<Topology, String> {
        crate::discovery::build_topology("test", "digest", d, &Limits::default(), Topology::new())
            .map_err(|e| e.to_string())
    }

    fn refused(d: &Discovery, expect: &str) {
        let start = Instant::now();
        match build(d) {
            Ok(_) => panic!("accepted; expected {expect:?}"),
            Err(e) => assert!(e.contains(expect), "{e}"),
        }
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn parent_chains_deeper_than_the_limit_are_refused_before_insertion() {
        for t in [ObjectType::Misc, ObjectType::Bridge, ObjectType::Group] {
            let mut v = machine(1);
            for i in 0..100_000u32 {
                let mut o = obj(10 + i, Some(if i == 0 { 1 } else { 9 + i }), t);
                if t == ObjectType::Group {
                    o.cpuset = one(0);
                }
                v.push(o);
            }
            refused(
                &record(v),
                "depth 257, deeper than the deepest tree accepted (256)",
            );
        }
        // At the limit itself, the chain is a valid tree.
        let mut v = machine(1);
        for i in 0..(MAX_TREE_DEPTH as u32) {
            v.push(obj(
                10 + i,
                Some(if i == 0 { 1 } else { 9 + i }),
                ObjectType::Misc,
            ));
        }
        let t = build(&record(v)).unwrap();
        t.check().unwrap();
    }

    #[test]
    fn sets_nesting_deeper_than_the_limit_are_refused() {
        let mut v = machine(512);
        for i in 0..400u32 {
            let n = 512 - i;
            let mut w = vec![0u64; 8];
            for p in 0..n {
                w[p as usize / 64] |= 1 << (p % 64);
            }
            v.push(WitObject {
                cpuset: words(w),
                ..obj(1000 + i, None, ObjectType::Group)
            });
        }
        // Without parents, the groups are placed by their sets: the
        // insertion into the tree refuses the one that would be too deep.
        refused(
            &record(v),
            "Group object would make the tree deeper than 256 levels below the root, the limit",
        );
    }

    #[test]
    fn huge_os_indexes_are_refused_without_building_their_sets() {
        let mut v = machine(1);
        v[1].os_index = Some(u32::MAX);
        refused(
            &record(v),
            "OS index 4294967295 is beyond the cap of 1048575",
        );
        let mut v = machine(1);
        let mut n = node(9, Some(1), 0, 1);
        n.os_index = Some(u32::MAX);
        v.push(n);
        refused(
            &record(v),
            "OS index 4294967295 is beyond the cap of 1048575",
        );
        // Sets beyond the highest PU of the record are refused too.
        let mut v = machine(2);
        v.push(WitObject {
            cpuset: one(5000),
            ..obj(9, Some(1), ObjectType::Core)
        });
        refused(&record(v), "beyond 1, the highest PU index of the record");
    }

    #[test]
    fn a_pu_whose_cpuset_is_not_its_index_is_refused() {
        // Index 1 is a PU of the record, but not this one's. (A set past
        // the record's PUs is refused earlier, as the hostile component's
        // pu-set-mismatch case shows.)
        let mut v = machine(2);
        v[1].cpuset = one(1);
        refused(&record(v), "the cpuset of PU P#0 must be {0}");
    }

    #[test]
    fn a_numa_node_under_a_pu_is_refused() {
        let mut v = machine(1);
        v.push(node(9, Some(2), 0, 1));
        refused(&record(v), "cannot be a child of object 1 (id 2, PU)");
    }

    #[test]
    fn identical_groups_are_merged_in_linear_time() {
        let mut v = machine(4);
        for i in 0..20_000u32 {
            v.push(WitObject {
                cpuset: words(vec![0b11]),
                attr: ObjectAttr::Group(GroupAttr {
                    kind: 0,
                    subkind: 0,
                    dont_merge: true,
                }),
                ..obj(100 + i, None, ObjectType::Group)
            });
        }
        let start = Instant::now();
        let t = build(&record(v)).unwrap();
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
        let groups = t
            .ids()
            .filter(|&i| t.obj(i).obj_type == ObjType::Group)
            .count();
        assert_eq!(groups, 1);
    }

    #[test]
    fn host_created_objects_never_reuse_component_ids() {
        let v = vec![
            obj(1, None, ObjectType::Machine),
            pu(2, None, 0),
            pu(3, None, 1),
            node(4, None, 0, 0b01),
            node(5, None, 1, 0b10),
        ];
        let t = build(&record(v)).unwrap();
        let mut gps: Vec<u64> = t.ids().map(|i| t.obj(i).gp_index).collect();
        let n = gps.len();
        gps.sort_unstable();
        gps.dedup();
        assert_eq!(gps.len(), n);
    }

    #[test]
    fn strings_xml_cannot_carry_are_refused() {
        for name in ["\0", "a\0b"] {
            let mut v = machine(1);
            v[1].infos.push(Info {
                name: name.into(),
                value: "x".into(),
            });
            refused(&record(v), "which XML cannot carry");
        }
        let mut v = machine(1);
        v[1].infos.push(Info {
            name: "tabs\tand\nlines\r, a bell\u{7}".into(),
            value: "ok".into(),
        });
        build(&record(v)).unwrap();
    }

    #[test]
    fn infos_are_capped_in_total() {
        let mut v = machine(128);
        for o in v.iter_mut().skip(1) {
            o.infos = (0..4096)
                .map(|k| Info {
                    name: format!("n{k}"),
                    value: String::new(),
                })
                .collect();
        }
        refused(&record(v), "more than 262144 infos in all");
    }

    /// 63 one-PU kinds and one over all 63 PUs, 4,096 infos each with
    /// 400-byte names: within the caps, but splitting would copy the
    /// infos 63 times over.  Refused quickly, before the splitting.
    #[test]
    fn cpu_kind_splitting_that_would_copy_too_many_infos_is_refused() {
        let infos = |k: usize| -> Vec<Info> {
            (0..4096)
                .map(|i| Info {
                    name: format!("{k}-{i:0>396}"),
                    value: String::new(),
                })
                .collect()
        };
        let kind = |w: u64, k: usize| Cpukind {
            cpuset: Bitmap {
                words: vec![w],
                infinite: false,
            },
            forced_efficiency: None,
            infos: infos(k),
        };
        let mut d = record(machine(63));
        d.cpukinds = (0..63).map(|k| kind(1 << k, k)).collect();
        d.cpukinds.push(kind((1 << 63) - 1, 63));
        let limits = Limits::default();
        let start = Instant::now();
        let e = crate::discovery::build_topology("test", "digest", &d, &limits, Topology::new())
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("once overlapping kinds are split (at most 262144)"),
            "{e}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn cpu_kinds_are_split_as_hwloc_does_and_must_name_pus() {
        let kind = |w: u64, n: &str| Cpukind {
            cpuset: Bitmap {
                words: vec![w],
                infinite: false,
            },
            forced_efficiency: None,
            infos: vec![Info {
                name: n.into(),
                value: "1".into(),
            }],
        };
        let mut d = record(machine(4));
        d.cpukinds = vec![kind(0b0111, "a"), kind(0b1100, "b")];
        let t = build(&d).unwrap();
        let mut sets: Vec<(String, usize)> = t
            .cpukinds
            .iter()
            .map(|k| (k.cpuset.to_string(), k.infos.len()))
            .collect();
        sets.sort();
        assert_eq!(
            sets,
            [
                ("0x00000003".to_string(), 1),
                ("0x00000004".to_string(), 2),
                ("0x00000008".to_string(), 1)
            ]
        );
        let mut d = record(machine(2));
        d.cpukinds = vec![kind(0b1111, "a")];
        refused(&d, "beyond 1, the highest PU index");
        let mut v = machine(4);
        v.remove(2);
        let mut d = record(v);
        d.cpukinds = vec![kind(0b1111, "a")];
        refused(&d, "names PUs 0x00000002, which the record does not have");
    }

    #[test]
    fn memory_attributes_target_numa_nodes_from_objects_with_cpusets() {
        let attr = |target: u32, initiator: u32| Memattr {
            name: "Bandwidth".into(),
            flags: 5,
            values: vec![MemattrValue {
                target,
                initiator: Some(Initiator::Object(initiator)),
                value: 7,
            }],
        };
        let mut v = machine(1);
        v.push(node(9, Some(1), 0, 1));
        v.push(obj(10, Some(1), ObjectType::Misc));
        let mut d = record(v);
        d.memattrs = vec![attr(2, 2)];
        refused(&d, "targets are NUMA nodes");
        d.memattrs = vec![attr(10, 2)];
        refused(&d, "targets are NUMA nodes");
        d.memattrs = vec![attr(9, 10)];
        refused(&d, "is a Misc, which has no cpuset");
        let mut a = attr(9, 2);
        // Repeated values for one target and initiator keep the last.
        for k in 0..50_000 {
            a.values.push(MemattrValue {
                target: 9,
                initiator: Some(Initiator::Object(2)),
                value: k,
            });
        }
        d.memattrs = vec![a];
        let t = build(&d).unwrap();
        let m = t.memattrs.iter().find(|m| m.name == "Bandwidth").unwrap();
        assert_eq!(m.values.len(), 1);
        assert_eq!(m.values[0].value, 49_999);
    }

    #[test]
    fn the_host_side_work_has_the_runs_deadline() {
        let mut v = machine(1);
        for i in 0..200_000u32 {
            v.push(obj(10 + i, Some(1), ObjectType::Misc));
        }
        let limits = Limits {
            deadline: Duration::ZERO,
            ..Limits::default()
        };
        let mut t = Topology::new();
        let e = apply(&record(v), &mut t, &limits).unwrap_err();
        assert_eq!(e, RecordError::Deadline(Duration::ZERO));
        assert!(
            e.to_string()
                .contains("longer than the run's deadline (0 ms)"),
            "{e}"
        );
    }

    /// A record of PUs without parents, all under the root: each is
    /// placed among all the others before it, O(n²) comparisons.  The
    /// host stops at its placement budget, quickly.
    #[test]
    fn a_wide_level_placed_by_sets_is_refused_at_the_placement_budget() {
        let mut v = vec![obj(1, None, ObjectType::Machine)];
        v.extend((0..16_384u32).map(|i| pu(2 + i, None, i)));
        let start = Instant::now();
        refused(&record(v), "siblings (at most 67108864)");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
        // Within the budget, the same shape is placed.
        let mut v = vec![obj(1, None, ObjectType::Machine)];
        v.extend((0..2_048u32).rev().map(|i| pu(2 + i, None, i)));
        assert_eq!(
            build(&record(v)).unwrap().objs_by_type(ObjType::PU).len(),
            2048
        );
    }

    mod records {
        use super::*;
        use proptest::prelude::*;

        const KINDS: [ObjectType; 8] = [
            ObjectType::Package,
            ObjectType::Core,
            ObjectType::Pu,
            ObjectType::Group,
            ObjectType::NumaNode,
            ObjectType::Misc,
            ObjectType::Bridge,
            ObjectType::L2Cache,
        ];

        /// A record from random draws: objects of mixed types with random
        /// parents (earlier, later or none), small sets, a chain of
        /// `deep` objects (deeper than the limit at times), and CPU kinds
        /// that overlap.
        fn record_of(
            draws: &[(u8, u16, u8, u64)],
            deep: u16,
            deep_group: bool,
            kinds: &[u64],
        ) -> Discovery {
            let mut v = vec![obj(1, None, ObjectType::Machine)];
            let mut pu_os = 0u32;
            let mut node_os = 0u32;
            for (k, &(t, parent, sets, bits)) in draws.iter().enumerate() {
                let id = 2 + k as u32;
                let t = KINDS[t as usize % KINDS.len()];
                let parent = match parent % 4 {
                    0 => None,
                    1 => Some(1),
                    _ => Some(1 + u32::from(parent) % (id + 1)),
                };
                let mut o = obj(id, parent, t);
                match t {
                    ObjectType::Pu => {
                        o.os_index = Some(pu_os);
                        o.cpuset = one(pu_os);
                        pu_os += 1 + u32::from(sets % 2);
                    }
                    ObjectType::NumaNode => {
                        o.os_index = Some(node_os);
                        o.nodeset = one(node_os);
                        o.cpuset = words(vec![bits & 0xffff]);
                        node_os += 1;
                    }
                    ObjectType::Misc | ObjectType::Bridge => {}
                    ObjectType::L2Cache => {
                        o.cpuset = words(vec![bits & 0xffff]);
                        o.attr = ObjectAttr::Cache(crate::bindings::types::CacheAttr {
                            size: 1 << 20,
                            depth: 2,
                            linesize: 64,
                            associativity: 8,
                            kind: CacheKind::Unified,
                            inclusive: false,
                        });
                    }
                    _ => o.cpuset = words(vec![bits & 0xffff]),
                }
                if sets == 3 {
                    o.infos.push(Info {
                        name: format!("i{k}"),
                        value: format!("{bits:x}"),
                    });
                }
                v.push(o);
            }
            let first = 100_000;
            for i in 0..u32::from(deep) {
                let parent = if i == 0 { 1 } else { first + i - 1 };
                let t = if deep_group {
                    ObjectType::Group
                } else {
                    ObjectType::Misc
                };
                let mut o = obj(first + i, Some(parent), t);
                if deep_group {
                    o.cpuset = one(0);
                }
                v.push(o);
            }
            let mut d = record(v);
            d.cpukinds = kinds
                .iter()
                .map(|&w| Cpukind {
                    cpuset: Bitmap {
                        words: vec![w & 0xffff],
                        infinite: false,
                    },
                    forced_efficiency: None,
                    infos: vec![Info {
                        name: "CoreType".into(),
                        value: format!("{w:x}"),
                    }],
                })
                .collect();
            d
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            /// Whatever the record, the host refuses it or builds a tree
            /// that passes the core's check and whose XML export reads
            /// back identically.
            #[test]
            fn records_are_refused_or_valid_and_round_trip(
                draws in prop::collection::vec((any::<u8>(), any::<u16>(), 0u8..4, any::<u64>()), 0..60),
                deep in prop_oneof![0u16..8, 250u16..262],
                deep_group in any::<bool>(),
                kinds in prop::collection::vec(any::<u64>(), 0..4),
            ) {
                let d = record_of(&draws, deep, deep_group, &kinds);
                if let Ok(t) = build(&d) {
                    t.check().unwrap();
                    let xml = wloc_xml::export(&t, wloc_xml::XmlVersion::V2);
                    let back = wloc_xml::import_str(&xml, Topology::new())
                        .unwrap_or_else(|e| panic!("{e}\n{xml}"));
                    prop_assert_eq!(wloc_xml::export(&back, wloc_xml::XmlVersion::V2), xml);
                }
            }
        }
    }
}
