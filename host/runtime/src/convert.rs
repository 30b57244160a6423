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

use wloc_core::bitmap::Bitmap as CoreBitmap;
use wloc_core::cpukinds::CpuKind;
use wloc_core::distances::Distances as CoreDistances;
use wloc_core::memattrs::{Initiator as CoreInitiator, MemAttr};
use wloc_core::object::{
    BridgeAttr as CoreBridgeAttr, BridgeUpstream, CacheAttr as CoreCacheAttr,
    CacheKind as CoreCacheKind, GroupAttr as CoreGroupAttr, Info as CoreInfo,
    NumaAttr as CoreNumaAttr, OsDevTypes, PageType as CorePageType, PciAttr as CorePciAttr,
};
use wloc_core::topology::{MemTier, PciLocality};
use wloc_core::{CpuSet, NodeSet, ObjAttr, ObjId, ObjKind, ObjType, Object, Topology};

use crate::bindings::types::{
    Bitmap, CacheKind, Discovery, Distances, Info, Initiator, Object as WitObject, ObjectAttr,
    ObjectType, PciAttr,
};
use wloc_trust::Limits;

type Res<T> = Result<T, String>;

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

struct Checker<'a> {
    limits: &'a Limits,
}

impl Checker<'_> {
    fn string(&self, what: &str, s: &str) -> Res<()> {
        if s.len() > self.limits.max_string_bytes {
            return Err(format!(
                "{what} is {} bytes long (at most {})",
                s.len(),
                self.limits.max_string_bytes
            ));
        }
        Ok(())
    }

    fn bitmap(&self, what: &str, b: &Bitmap, may_be_infinite: bool) -> Res<CoreBitmap> {
        if b.words.len() > self.limits.max_bitmap_words {
            return Err(format!(
                "{what} has {} words (at most {})",
                b.words.len(),
                self.limits.max_bitmap_words
            ));
        }
        if b.infinite && !may_be_infinite {
            return Err(format!("{what} is infinite"));
        }
        Ok(if b.infinite {
            let inverted: Vec<u64> = b.words.iter().map(|w| !w).collect();
            let mut x = CoreBitmap::from_words(&inverted);
            x.invert();
            x
        } else {
            CoreBitmap::from_words(&b.words)
        })
    }

    fn cpuset(&self, what: &str, b: &Option<Bitmap>) -> Res<Option<CpuSet>> {
        b.as_ref()
            .map(|b| self.bitmap(what, b, false).map(CpuSet::from_bitmap))
            .transpose()
    }

    fn nodeset(&self, what: &str, b: &Option<Bitmap>) -> Res<Option<NodeSet>> {
        b.as_ref()
            .map(|b| self.bitmap(what, b, false).map(NodeSet::from_bitmap))
            .transpose()
    }

    fn infos(&self, what: &str, infos: &[Info]) -> Res<Vec<CoreInfo>> {
        if infos.len() > self.limits.max_infos {
            return Err(format!(
                "{what} has {} infos (at most {})",
                infos.len(),
                self.limits.max_infos
            ));
        }
        let mut out = Vec::with_capacity(infos.len());
        for i in infos {
            if i.name.is_empty() {
                return Err(format!("{what} has an info without a name"));
            }
            self.string(&format!("{what}: info name"), &i.name)?;
            self.string(&format!("{what}: info {}", i.name), &i.value)?;
            out.push(CoreInfo {
                name: i.name.clone(),
                value: i.value.clone(),
            });
        }
        Ok(out)
    }
}

fn pci_attr(what: &str, p: &PciAttr) -> Res<CorePciAttr> {
    if !p.link_speed.is_finite() || p.link_speed < 0.0 {
        return Err(format!("{what} has link speed {}", p.link_speed));
    }
    if p.dev > 31 || p.function > 7 {
        return Err(format!(
            "{what} has PCI address {:02x}.{:x}, beyond device 1f function 7",
            p.dev, p.function
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
fn attr(what: &str, t: ObjType, a: &ObjectAttr) -> Res<Option<ObjAttr>> {
    let wrong = |name: &str| format!("{what} has {name} attributes, which a {t} cannot have");
    Ok(Some(match a {
        ObjectAttr::None => return Ok(None),
        ObjectAttr::Numa(n) => {
            if t != ObjType::NUMANode {
                return Err(wrong("NUMA"));
            }
            if n.page_types.len() > 64 {
                return Err(format!(
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
                    return Err(format!("{what} has memory-side cache depth {}", c.depth));
                }
            } else if let Some(level) = t.cache_level() {
                if c.depth != level {
                    return Err(format!("{what} is a {t} with cache depth {}", c.depth));
                }
                if t.is_icache() != (kind == CoreCacheKind::Instruction) {
                    return Err(format!("{what} is a {t} with cache kind {kind:?}"));
                }
            } else {
                return Err(wrong("cache"));
            }
            if c.associativity < -1 {
                return Err(format!("{what} has associativity {}", c.associativity));
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
                return Err(format!(
                    "{what} has secondary bus {:02x} above subordinate bus {:02x}",
                    b.secondary_bus, b.subordinate_bus
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
                return Err(format!("{what} has unknown OS device kind bits {kinds:#x}"));
            }
            ObjAttr::OsDev(OsDevTypes(*kinds))
        }
    }))
}

fn describe(i: usize, o: &WitObject) -> String {
    format!("object {i} (id {}, {})", o.id, obj_type(o.type_))
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
        return Err(format!("{what} has no object"));
    }
    if n.checked_mul(n) != Some(m.values.len()) {
        return Err(format!(
            "{what} has {n} objects and {} values instead of {n}²",
            m.values.len()
        ));
    }
    if m.kind >= 1 << 5 {
        return Err(format!("{what} has unknown kind bits {:#x}", m.kind));
    }
    Ok(n)
}

/// Checks a discovery and adds its content to `topo` (not finished).
pub fn apply(d: &Discovery, topo: &mut Topology, limits: &Limits) -> Res<()> {
    let ck = Checker { limits };
    if d.objects.len() > limits.max_objects {
        return Err(format!(
            "{} objects returned (at most {})",
            d.objects.len(),
            limits.max_objects
        ));
    }
    let size = size_of(d);
    if size > limits.max_returned_bytes {
        return Err(format!(
            "{size} bytes of data returned (at most {})",
            limits.max_returned_bytes
        ));
    }
    for (what, n, max) in [
        ("distance matrices", d.distances.len(), 4096),
        ("memory attributes", d.memattrs.len(), 4096),
        ("CPU kinds", d.cpukinds.len(), 4096),
        ("support names", d.support.len(), 4096),
        ("memory tiers", d.memtiers.len(), 4096),
        ("PCI localities", d.pci_localities.len(), 65536),
    ] {
        if n > max {
            return Err(format!("{n} {what} returned (at most {max})"));
        }
    }

    // Ids: unique; kept as gp indexes when the topology is fresh and no id
    // could collide with the root's gp index 1.
    let mut index: HashMap<u32, usize> = HashMap::with_capacity(d.objects.len());
    for (i, o) in d.objects.iter().enumerate() {
        if let Some(first) = index.insert(o.id, i) {
            return Err(format!(
                "id {} is used by object {first} and by object {i}",
                o.id
            ));
        }
    }
    let root_index = d
        .objects
        .iter()
        .position(|o| o.type_ == ObjectType::Machine && o.parent.is_none());
    let keep_ids = topo.ids().nth(1).is_none()
        && d.objects
            .iter()
            .enumerate()
            .all(|(i, o)| Some(i) == root_index || o.id >= 2);

    let mut placed: Vec<Placed> = Vec::with_capacity(d.objects.len());
    let mut pus: HashSet<u32> = HashSet::new();
    let mut nodes: HashSet<u32> = HashSet::new();
    for (i, o) in d.objects.iter().enumerate() {
        let t = obj_type(o.type_);
        let what = describe(i, o);
        // The parent: an earlier object of this record.
        let parent = match o.parent {
            None => None,
            Some(p) => match index.get(&p) {
                None => {
                    return Err(format!(
                        "{what}: parent id {p} is not an object of this discovery"
                    ))
                }
                Some(&pi) if pi >= i => {
                    return Err(format!(
                        "{what}: parent id {p} is object {pi}, which does not come before it (parents come first; cycles are impossible)"
                    ))
                }
                Some(&pi) => Some((pi, placed[pi])),
            },
        };
        if t == ObjType::Machine {
            if parent.is_some() {
                return Err(format!("{what}: a Machine can only be the root"));
            }
            if Some(i) != root_index {
                return Err(format!("{what}: a second root Machine"));
            }
            let infos = ck.infos(&what, &o.infos)?;
            if let Some(n) = &o.name {
                ck.string(&format!("{what}: name"), n)?;
            }
            if let Some(s) = &o.subtype {
                ck.string(&format!("{what}: subtype"), s)?;
            }
            attr(&what, t, &o.attr)?;
            // The root's sets are rebuilt from its PUs and NUMA nodes, but
            // its complete sets also hold what has no object: offline PUs
            // and nodes.  They come from the record.
            let full_cpuset =
                match ck.cpuset(&format!("{what}: complete cpuset"), &o.complete_cpuset)? {
                    Some(c) => Some(c),
                    None => ck.cpuset(&format!("{what}: cpuset"), &o.cpuset)?,
                };
            let full_nodeset =
                match ck.nodeset(&format!("{what}: complete nodeset"), &o.complete_nodeset)? {
                    Some(n) => Some(n),
                    None => ck.nodeset(&format!("{what}: nodeset"), &o.nodeset)?,
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
            placed.push(Placed::At(topo.root()));
            continue;
        }
        let kind = t.kind();

        // Sets.
        let cpuset = ck.cpuset(&format!("{what}: cpuset"), &o.cpuset)?;
        let ccpuset = ck.cpuset(&format!("{what}: complete cpuset"), &o.complete_cpuset)?;
        let nodeset = ck.nodeset(&format!("{what}: nodeset"), &o.nodeset)?;
        let cnodeset = ck.nodeset(&format!("{what}: complete nodeset"), &o.complete_nodeset)?;
        match kind {
            ObjKind::Io | ObjKind::Misc => {
                if cpuset.is_some() || ccpuset.is_some() || nodeset.is_some() || cnodeset.is_some()
                {
                    return Err(format!("{what}: I/O and Misc objects carry no sets"));
                }
            }
            ObjKind::Normal | ObjKind::Memory => {
                if let (Some(c), Some(cc)) = (&cpuset, &ccpuset) {
                    if !cc.includes(c) {
                        return Err(format!("{what}: cpuset is not inside complete cpuset"));
                    }
                }
                if let (Some(n), Some(cn)) = (&nodeset, &cnodeset) {
                    if !cn.includes(n) {
                        return Err(format!("{what}: nodeset is not inside complete nodeset"));
                    }
                }
            }
        }
        let full_cpuset = ccpuset.as_ref().or(cpuset.as_ref());
        let full_nodeset = cnodeset.as_ref().or(nodeset.as_ref());
        // Groups of CPU-less NUMA nodes (built from distances) hold memory
        // only; their parent places them.  Other objects need CPUs.
        let cpuless = full_cpuset.is_none_or(|c| c.is_empty());
        if kind == ObjKind::Normal && cpuless && (t != ObjType::Group || o.parent.is_none()) {
            return Err(format!("{what}: a {t} needs a non-empty cpuset"));
        }
        match t {
            ObjType::PU => {
                let os = o
                    .os_index
                    .ok_or_else(|| format!("{what}: a PU needs an OS index"))?;
                if full_cpuset != Some(&CpuSet::from_index(os)) {
                    return Err(format!(
                        "{what}: the cpuset of PU P#{os} must be {{{os}}}, not {}",
                        full_cpuset.map_or(String::new(), |c| c.to_string())
                    ));
                }
                if !pus.insert(os) {
                    return Err(format!("{what}: two PUs have OS index {os}"));
                }
            }
            ObjType::NUMANode => {
                let os = o
                    .os_index
                    .ok_or_else(|| format!("{what}: a NUMA node needs an OS index"))?;
                if full_nodeset != Some(&NodeSet::from_index(os)) {
                    return Err(format!(
                        "{what}: the nodeset of NUMA node P#{os} must be {{{os}}}"
                    ));
                }
                if !nodes.insert(os) {
                    return Err(format!("{what}: two NUMA nodes have OS index {os}"));
                }
            }
            _ => {}
        }

        // Where it goes.
        let parent_id = match parent {
            None => None,
            Some((pi, Placed::At(pid))) => {
                let pt = obj_type(d.objects[pi].type_);
                let pk = pt.kind();
                let ok = match kind {
                    ObjKind::Normal => pk == ObjKind::Normal && pt != ObjType::PU,
                    ObjKind::Memory => pk == ObjKind::Normal || pt == ObjType::MemCache,
                    ObjKind::Io => pk == ObjKind::Normal || pk == ObjKind::Io,
                    ObjKind::Misc => true,
                };
                if !ok {
                    return Err(format!(
                        "{what}: a {t} cannot be a child of {}",
                        describe(pi, &d.objects[pi])
                    ));
                }
                if kind == ObjKind::Normal && pid != topo.root() {
                    let p = topo.obj(pid);
                    if let (Some(mine), Some(theirs)) = (
                        full_cpuset,
                        p.complete_cpuset.as_ref().or(p.cpuset.as_ref()),
                    ) {
                        if !theirs.includes(mine) {
                            return Err(format!(
                                "{what}: cpuset {mine} is not inside its parent's {theirs}"
                            ));
                        }
                    }
                }
                Some(pid)
            }
            // The parent was filtered out: place by sets, or under the root.
            Some((_, Placed::Filtered)) => match kind {
                // Nothing to place a CPU-less group by: keep it at the top.
                ObjKind::Normal if cpuless => Some(topo.root()),
                ObjKind::Normal | ObjKind::Memory => None,
                _ => Some(topo.root()),
            },
        };
        if parent_id.is_none() && matches!(kind, ObjKind::Io | ObjKind::Misc) {
            return Err(format!("{what}: a {t} needs a parent"));
        }
        if parent_id.is_none() && kind == ObjKind::Memory && full_cpuset.is_none() {
            return Err(format!(
                "{what}: a {t} without a parent needs a cpuset to be placed"
            ));
        }

        let mut obj = Object::new(t, o.os_index);
        if let Some(a) = attr(&what, t, &o.attr)? {
            obj.attr = a;
        }
        if let Some(n) = &o.name {
            ck.string(&format!("{what}: name"), n)?;
        }
        if let Some(s) = &o.subtype {
            ck.string(&format!("{what}: subtype"), s)?;
        }
        obj.name = o.name.clone();
        obj.subtype = o.subtype.clone();
        obj.infos = ck.infos(&what, &o.infos)?;
        obj.cpuset = cpuset;
        obj.complete_cpuset = ccpuset;
        obj.nodeset = nodeset;
        obj.complete_nodeset = cnodeset;
        if keep_ids {
            obj.gp_index = u64::from(o.id);
        }
        let p = match parent_id {
            Some(pid) => Placed::At(topo.insert_by_parent(pid, obj)),
            None => match topo.insert_by_cpuset(obj) {
                Ok(Some(ins)) => Placed::At(ins.id()),
                Ok(None) => Placed::Filtered,
                Err(e) => return Err(format!("{what}: {e}")),
            },
        };
        placed.push(p);
    }

    // References from matrices and attributes.
    let resolve = |what: &str, id: u32| -> Res<Option<ObjId>> {
        match index.get(&id) {
            None => Err(format!("{what} refers to id {id}, which is no object")),
            Some(&i) => Ok(match placed[i] {
                Placed::At(o) => Some(o),
                Placed::Filtered => None,
            }),
        }
    };
    for (k, m) in d.distances.iter().enumerate() {
        let what = format!("distance matrix {k}");
        if let Some(n) = &m.name {
            ck.string(&format!("{what}: name"), n)?;
        }
        let n = check_distances_shape(&what, m)?;
        let mut seen = HashSet::new();
        let mut objs = Vec::with_capacity(n);
        let mut complete = true;
        for &id in &m.objects {
            if !seen.insert(id) {
                return Err(format!("{what} lists id {id} twice"));
            }
            match resolve(&what, id)? {
                Some(o) => objs.push(o),
                None => complete = false,
            }
        }
        if complete {
            let dist = CoreDistances::new(m.name.clone(), m.kind, objs, m.values.clone())
                .ok_or_else(|| format!("{what} has a wrong number of values"))?;
            topo.distances.push(dist);
        }
    }
    for (k, m) in d.memattrs.iter().enumerate() {
        let what = format!("memory attribute {k} ({})", m.name);
        if m.name.is_empty() {
            return Err(format!("memory attribute {k} has no name"));
        }
        ck.string(&what, &m.name)?;
        use wloc_core::memattrs::flags as f;
        let order = m.flags & (f::HIGHER_FIRST | f::LOWER_FIRST);
        if m.flags >= 1 << 3 || (order != f::HIGHER_FIRST && order != f::LOWER_FIRST) {
            return Err(format!(
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
        {
            if *pf != m.flags {
                return Err(format!(
                    "{what} has flags {:#x}, hwloc defines {pf:#x}",
                    m.flags
                ));
            }
        }
        let slot = match topo.memattrs.iter().position(|x| x.name == m.name) {
            Some(i) if topo.memattrs[i].flags == m.flags => i,
            Some(_) => return Err(format!("{what} exists already with other flags")),
            None => {
                topo.memattrs.push(MemAttr::new(&m.name, m.flags));
                topo.memattrs.len() - 1
            }
        };
        for v in &m.values {
            let Some(target) = resolve(&what, v.target)? else {
                continue;
            };
            let initiator = match &v.initiator {
                None => None,
                Some(Initiator::Object(id)) => match resolve(&what, *id)? {
                    Some(o) => Some(CoreInitiator::Object(o)),
                    None => continue,
                },
                Some(Initiator::Cpuset(c)) => Some(CoreInitiator::CpuSet(CpuSet::from_bitmap(
                    ck.bitmap(&format!("{what}: initiator"), c, false)?,
                ))),
            };
            if m.flags & f::NEED_INITIATOR != 0 && initiator.is_none() {
                return Err(format!("{what} needs initiators and a value has none"));
            }
            topo.memattrs[slot].set(target, initiator, v.value);
        }
    }
    for (k, c) in d.cpukinds.iter().enumerate() {
        let what = format!("CPU kind {k}");
        let set = CpuSet::from_bitmap(ck.bitmap(&what, &c.cpuset, false)?);
        if set.is_empty() {
            return Err(format!("{what} has no PU"));
        }
        let infos = ck.infos(&what, &c.infos)?;
        topo.cpukinds
            .push(CpuKind::new(set, c.forced_efficiency, infos));
    }
    let infos = ck.infos("the topology", &d.infos)?;
    topo.infos.extend(infos);
    for s in &d.support {
        ck.string("a support name", s)?;
        if !topo.support.iter().any(|x| x == s) {
            topo.support.push(s.clone());
        }
    }
    for (k, m) in d.memtiers.iter().enumerate() {
        let nodeset =
            NodeSet::from_bitmap(ck.bitmap(&format!("memory tier {k}"), &m.nodeset, false)?);
        topo.memtiers.push(MemTier {
            kinds: m.kinds,
            nodeset,
        });
    }
    for (k, l) in d.pci_localities.iter().enumerate() {
        let what = format!("PCI locality {k}");
        if l.bus_min > l.bus_max {
            return Err(format!(
                "{what} has bus range {:02x}-{:02x}",
                l.bus_min, l.bus_max
            ));
        }
        let cpuset = CpuSet::from_bitmap(ck.bitmap(&what, &l.cpuset, false)?);
        topo.pci_localities.push(PciLocality {
            domain: l.domain,
            bus_min: l.bus_min,
            bus_max: l.bus_max,
            cpuset,
        });
    }
    if let Some(c) = &d.allowed_cpuset {
        let c = CpuSet::from_bitmap(ck.bitmap("the allowed cpuset", c, true)?);
        topo.allowed_cpuset = &topo.allowed_cpuset & &c;
    }
    if let Some(n) = &d.allowed_nodeset {
        let n = NodeSet::from_bitmap(ck.bitmap("the allowed nodeset", n, true)?);
        topo.allowed_nodeset = &topo.allowed_nodeset & &n;
    }
    Ok(())
}
