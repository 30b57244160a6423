//! The archived body of an image: the finished topology as rkyv records.
//!
//! Objects are stored in one table in depth-first order (an object, then its
//! memory, normal, I/O and misc children: the XML export order), so the root
//! is entry 0 and every link (parent, children, levels, distance and memory
//! attribute objects) is an index into that table.  rkyv lays the records
//! out with relative offsets, little-endian, so the bytes mean the same at
//! any address in any process.

use rkyv::{Archive, Serialize};
use wloc_core::cpukinds::Ranking;
use wloc_core::memattrs::Initiator;
use wloc_core::object::{BridgeUpstream, CacheKind, ObjAttr, ObjType, PciAttr};
use wloc_core::{Bitmap, ObjId, Topology};

/// A CPU or node set: its 64-bit words and whether every bit past them is set.
#[derive(Archive, Serialize, Debug, Clone, PartialEq)]
pub struct Set {
    /// Bits `64*i .. 64*i+63` in `words[i]`.
    pub words: Vec<u64>,
    /// Value of every bit past `words`.
    pub infinite: bool,
}

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

/// One object: plain integers only, so that bytecheck has nothing to
/// check per object (every index is checked once, in O(1), by the tree
/// validation) and the record is small (96 bytes).
#[derive(Archive, Serialize, Debug, Clone, PartialEq)]
pub struct Obj {
    /// [`ObjType::index`].
    pub ty: u8,
    /// [`F_SYMMETRIC`], [`F_OS_INDEX`], [`F_PARENT`].
    pub flags: u8,
    /// Meaningful with [`F_OS_INDEX`].
    pub os_index: u32,
    /// hwloc's integer depth ([`wloc_core::object::Depth::to_i32`]).
    pub depth: i32,
    pub logical_index: u32,
    pub sibling_rank: u32,
    /// Index of the parent, meaningful with [`F_PARENT`] (all but the root).
    pub parent: u32,
    pub gp_index: u64,
    pub total_memory: u64,
    /// Index into [`Body::attrs`] ([`NO_ATTR`] for none): objects of a
    /// level mostly share their attributes (caches), so each distinct one
    /// is stored once, out of the object record.
    pub attr: u32,
    /// Subtype and name as indexes into [`Body::strings`] ([`NO_STR`] for
    /// none): a plain index costs validation one comparison, where a string
    /// of its own costs a relative pointer and a UTF-8 check per object.
    pub subtype: u32,
    pub name: u32,
    /// The four sets, as indexes into [`Body::sets`] ([`NO_SET`] for none):
    /// objects share most of them (a core and its caches, every object's
    /// complete and plain sets), so each distinct set is stored once.
    pub cpuset: u32,
    pub complete_cpuset: u32,
    pub nodeset: u32,
    pub complete_nodeset: u32,
    /// First index and count of its infos in [`Body::obj_infos`].
    pub infos: [u32; 2],
    /// Start of its children in [`Body::children`]: normal, memory, I/O
    /// then misc children, `child_counts` of each.
    pub children: u32,
    pub child_counts: [u32; 4],
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
    CpuSet(Set),
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
    pub cpuset: Set,
    pub forced_efficiency: Option<i32>,
    pub efficiency: i32,
    pub infos: Vec<Info>,
}

/// A memory tier.
#[derive(Archive, Serialize, Debug, Clone, PartialEq)]
pub struct MemTier {
    pub kinds: u64,
    pub nodeset: Set,
}

/// A PCI bus range's locality.
#[derive(Archive, Serialize, Debug, Clone, PartialEq)]
pub struct PciLocality {
    pub domain: u32,
    pub bus_min: u8,
    pub bus_max: u8,
    pub cpuset: Set,
}

/// The whole topology.
#[derive(Archive, Serialize, Debug, Clone, PartialEq)]
pub struct Body {
    /// Depth-first; entry 0 is the root.
    pub objects: Vec<Obj>,
    /// The distinct sets of the objects.
    pub sets: Vec<Set>,
    /// The distinct type-specific attributes of the objects.
    pub attrs: Vec<Attr>,
    /// The distinct subtypes and names of the objects.
    pub strings: Vec<String>,
    /// The infos of every object, each object's in one run.
    pub obj_infos: Vec<Info>,
    /// The child lists of every object, each object's in one run.
    pub children: Vec<u32>,
    /// Normal levels, from the root down, as object indexes.
    pub levels: Vec<Vec<u32>>,
    /// Special levels in [`crate::SPECIAL_DEPTHS`] order.
    pub special: Vec<Vec<u32>>,
    pub allowed_cpuset: Set,
    pub allowed_nodeset: Set,
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
}

/// An object without that set.
pub const NO_SET: u32 = u32::MAX;

/// An object without type-specific attributes.
pub const NO_ATTR: u32 = u32::MAX;

/// [`Obj::flags`]: every child subtree has the same shape.
pub const F_SYMMETRIC: u8 = 1;
/// [`Obj::flags`]: the object has an OS index.
pub const F_OS_INDEX: u8 = 2;
/// [`Obj::flags`]: the object has a parent (all but the root).
pub const F_PARENT: u8 = 4;

impl ArchivedObj {
    /// The parent's index, `None` for the root.
    pub fn parent(&self) -> Option<u32> {
        (self.flags & F_PARENT != 0).then(|| self.parent.to_native())
    }
    /// The OS index.
    pub fn os_index(&self) -> Option<u32> {
        (self.flags & F_OS_INDEX != 0).then(|| self.os_index.to_native())
    }
}

/// An object without that string.
pub const NO_STR: u32 = u32::MAX;

/// The rankings in code order.
pub const RANKINGS: [Ranking; 9] = [
    Ranking::Default,
    Ranking::NoForcedEfficiency,
    Ranking::ForcedEfficiency,
    Ranking::CoreTypeFrequency,
    Ranking::CoreType,
    Ranking::Frequency,
    Ranking::FrequencyMax,
    Ranking::FrequencyBase,
    Ranking::None,
];

/// The code of a CPU kind ranking in the image.
pub fn ranking_code(r: Ranking) -> u8 {
    RANKINGS.iter().position(|&x| x == r).unwrap_or(0) as u8
}

fn set(b: &Bitmap) -> Set {
    Set {
        words: b.words().to_vec(),
        infinite: b.is_infinite(),
    }
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

/// Records a finished topology.
pub fn body_of(topo: &Topology) -> Body {
    let order = topo.iter_dfs();
    // Arena ids to table indexes (objects removed from the tree are not
    // reachable, hence not recorded).
    let max = order.iter().copied().max().unwrap_or(0);
    let mut index = vec![u32::MAX; max + 1];
    for (i, &id) in order.iter().enumerate() {
        index[id] = i as u32;
    }
    let ix = |id: ObjId| index.get(id).copied().unwrap_or(u32::MAX);
    let ixs = |ids: &[ObjId]| -> Vec<u32> {
        ids.iter()
            .map(|&i| ix(i))
            .filter(|&i| i != u32::MAX)
            .collect()
    };
    let mut sets: Vec<Set> = Vec::new();
    let mut seen: std::collections::HashMap<(Vec<u64>, bool), u32> = Default::default();
    let mut intern = |b: Option<&Bitmap>| -> u32 {
        let Some(b) = b else { return NO_SET };
        let key = (b.words().to_vec(), b.is_infinite());
        *seen.entry(key).or_insert_with(|| {
            sets.push(set(b));
            (sets.len() - 1) as u32
        })
    };
    let mut strings: Vec<String> = Vec::new();
    let mut seen_str: std::collections::HashMap<String, u32> = Default::default();
    let mut string = |s: &Option<String>| -> u32 {
        let Some(s) = s else { return NO_STR };
        *seen_str.entry(s.clone()).or_insert_with(|| {
            strings.push(s.clone());
            (strings.len() - 1) as u32
        })
    };
    let mut attrs: Vec<Attr> = Vec::new();
    // Keyed by the debug form: `Attr` holds an f32, so it has no `Hash`.
    let mut seen_attr: std::collections::HashMap<String, u32> = Default::default();
    let mut intern_attr = |a: &ObjAttr| -> u32 {
        if matches!(a, ObjAttr::None) {
            return NO_ATTR;
        }
        let a = attr(a);
        *seen_attr.entry(format!("{a:?}")).or_insert_with(|| {
            attrs.push(a);
            (attrs.len() - 1) as u32
        })
    };
    let mut obj_infos: Vec<Info> = Vec::new();
    let mut children: Vec<u32> = Vec::new();
    let objects: Vec<Obj> = order
        .iter()
        .map(|&id| {
            let o = topo.obj(id);
            Obj {
                ty: o.obj_type.index() as u8,
                flags: if o.symmetric_subtree() {
                    F_SYMMETRIC
                } else {
                    0
                } | if o.os_index.is_some() { F_OS_INDEX } else { 0 }
                    | if o.parent().is_some() { F_PARENT } else { 0 },
                os_index: o.os_index.unwrap_or(0),
                depth: o.depth().to_i32(),
                logical_index: o.logical_index(),
                sibling_rank: o.sibling_rank(),
                parent: o.parent().map(ix).unwrap_or(0),
                gp_index: o.gp_index,
                total_memory: o.total_memory,
                subtype: string(&o.subtype),
                name: string(&o.name),
                attr: intern_attr(&o.attr),
                cpuset: intern(o.cpuset.as_ref().map(|s| s.bitmap())),
                complete_cpuset: intern(o.complete_cpuset.as_ref().map(|s| s.bitmap())),
                nodeset: intern(o.nodeset.as_ref().map(|s| s.bitmap())),
                complete_nodeset: intern(o.complete_nodeset.as_ref().map(|s| s.bitmap())),
                infos: {
                    let start = obj_infos.len() as u32;
                    obj_infos.extend(infos(&o.infos));
                    [start, o.infos.len() as u32]
                },
                children: {
                    let start = children.len() as u32;
                    for family in [
                        o.children(),
                        o.memory_children(),
                        o.io_children(),
                        o.misc_children(),
                    ] {
                        children.extend(family.iter().map(|&i| ix(i)));
                    }
                    start
                },
                child_counts: [
                    o.children().len() as u32,
                    o.memory_children().len() as u32,
                    o.io_children().len() as u32,
                    o.misc_children().len() as u32,
                ],
            }
        })
        .collect();
    let levels = topo.normal_levels().iter().map(|l| ixs(l)).collect();
    let special = crate::SPECIAL_DEPTHS
        .iter()
        .map(|&d| ixs(topo.level(d)))
        .collect();
    let distances = topo
        .distances
        .iter()
        .filter(|d| d.objs.iter().all(|&o| ix(o) != u32::MAX))
        .map(|d| Dist {
            name: d.name.clone(),
            kind: d.kind,
            objs: ixs(&d.objs),
            values: d.values.clone(),
        })
        .collect();
    let memattrs = topo
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
                        Some(Initiator::CpuSet(c)) => Init::CpuSet(set(c.bitmap())),
                        Some(Initiator::Object(o)) => match ix(*o) {
                            u32::MAX => return None,
                            i => Init::Object(i),
                        },
                    };
                    let target = ix(v.target);
                    (target != u32::MAX).then_some(MemValue {
                        target,
                        initiator,
                        value: v.value,
                    })
                })
                .collect(),
        })
        .collect();
    Body {
        objects,
        sets,
        attrs,
        strings,
        obj_infos,
        children,
        levels,
        special,
        allowed_cpuset: set(topo.allowed_cpuset.bitmap()),
        allowed_nodeset: set(topo.allowed_nodeset.bitmap()),
        include_disallowed: topo.include_disallowed,
        is_thissystem: topo.is_thissystem,
        cpukinds_ranking: ranking_code(topo.cpukinds_ranking),
        distances,
        memattrs,
        cpukinds: topo
            .cpukinds
            .iter()
            .map(|k| CpuKind {
                cpuset: set(k.cpuset.bitmap()),
                forced_efficiency: k.forced_efficiency,
                efficiency: k.efficiency,
                infos: infos(&k.infos),
            })
            .collect(),
        memtiers: topo
            .memtiers
            .iter()
            .map(|t| MemTier {
                kinds: t.kinds,
                nodeset: set(t.nodeset.bitmap()),
            })
            .collect(),
        infos: infos(&topo.infos),
        support: topo.support.clone(),
        pci_localities: topo
            .pci_localities
            .iter()
            .map(|p| PciLocality {
                domain: p.domain,
                bus_min: p.bus_min,
                bus_max: p.bus_max,
                cpuset: set(p.cpuset.bitmap()),
            })
            .collect(),
    }
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
