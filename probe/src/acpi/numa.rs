//! From MADT, SRAT, SLIT and HMAT to NUMA nodes, distances, memory
//! attributes and memory-side caches, as hwloc shows them on Linux.
//!
//! hwloc's Linux backend does not read ACPI tables: it reads what the
//! kernel derived from them in sysfs.  To describe a machine the way
//! hwloc would, the kernel's derivations are reproduced here:
//!
//! - **Node numbers.**  Linux numbers proximity domains in the order it
//!   first meets them: enabled processor, x2APIC, GICC and generic initiator
//!   entries of the SRAT in table order, then enabled memory entries.  A
//!   domain becomes a node when it has processors, populated memory (a
//!   non-empty range that is not only hot-pluggable) or a generic
//!   initiator.
//! - **Distances.**  Linux uses the SLIT only if every local distance is
//!   10 and every other one is larger; otherwise (or without a SLIT) it
//!   reports 10 locally and 20 elsewhere.  hwloc records the matrix as
//!   `NUMALatency` when there are at least two nodes.
//! - **Memory attributes.**  For every memory target, Linux keeps the
//!   best CPU initiators only (its `access1` class): the processor domain
//!   the HMAT attaches to the memory if it has CPUs, otherwise the
//!   initiators with the best value of every measure (so a target the
//!   HMAT gives no value for keeps them all, as in Linux).  Values are
//!   normalised as `entry × base unit`, latencies turned from picoseconds
//!   into nanoseconds (rounded up) for revision 2, and revision-1 values
//!   divided by 10; values above 2³²−1 are dropped.  hwloc stores read
//!   and write values as `Read*`/`Write*` attributes (bandwidth in MiB/s,
//!   taking the kernel's MB/s as is, latency in ns) and their average as
//!   `Bandwidth`/`Latency` when both are known, with the node's cpuset
//!   as initiator.
//! - **Locality.**  hwloc adds the CPUs of the best initiators to a
//!   node's cpuset; a CPU-less node without initiators gets the CPUs of
//!   the nodes nearest to it by distance, unless all are equally far.
//! - **Memory-side caches.**  One per level for each target, direct
//!   mapped caches with associativity 1, others 0 (unknown).

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;
use alloc::vec::Vec;

use wloc_core::distances::{Distances, kind};
use wloc_core::memattrs::{self, Initiator, MemAttr};
use wloc_core::object::{CacheAttr, CacheKind, ObjAttr};
use wloc_core::{CpuSet, NodeSet, ObjType, Object, Topology, TopologyError};

use super::hmat::{CacheAssociativity, CacheWritePolicy, Hmat, HmatDataType, HmatLocality};
use super::madt::Madt;
use super::slit::Slit;
use super::srat::{Srat, SratEntry};

/// Most NUMA nodes created (Linux's `MAX_NUMNODES` at its largest);
/// domains past that many are ignored, as Linux does.
pub const MAX_NUMA_NODES: usize = 1024;

/// Distance Linux reports inside a node when the SLIT does not say.
pub const LOCAL_DISTANCE: u64 = 10;
/// Distance Linux reports between nodes when the SLIT does not say.
pub const REMOTE_DISTANCE: u64 = 20;

/// A NUMA node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AcpiNode {
    /// The node's number, as Linux gives it.
    pub os_index: u32,
    /// Its ACPI proximity domain.
    pub domain: u32,
    /// Its processors (usable ones only when a MADT was given), sorted:
    /// APIC ids on x86, ACPI processor UIDs on ARM (SRAT GICC affinity).
    pub apic_ids: Vec<u32>,
    /// Bytes of memory in its enabled, not hot-pluggable ranges.
    pub memory: u64,
    /// Bytes of memory in its hot-pluggable ranges.
    pub hot_pluggable_memory: u64,
    /// Whether some of its memory is non-volatile.
    pub non_volatile: bool,
    /// Whether it has a generic initiator.
    pub generic_initiator: bool,
    /// Nodes whose processors make up this node's cpuset: itself when it
    /// has processors, its best HMAT initiators, or for a CPU-less node
    /// without initiators its nearest nodes.  Sorted.
    pub locality: Vec<u32>,
}

/// The distance matrix between nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AcpiDistances {
    /// Row-major values in the order of [`AcpiNuma::nodes`].
    pub values: Vec<u64>,
    /// Whether they come from the SLIT (or are Linux's 10/20 defaults).
    pub from_slit: bool,
}

/// The memory attributes hwloc fills from the HMAT.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum MemAttrKind {
    /// Average of read and write bandwidth, MiB/s.
    Bandwidth,
    /// Average of read and write latency, ns.
    Latency,
    /// Read bandwidth, MiB/s.
    ReadBandwidth,
    /// Write bandwidth, MiB/s.
    WriteBandwidth,
    /// Read latency, ns.
    ReadLatency,
    /// Write latency, ns.
    WriteLatency,
}

impl MemAttrKind {
    /// hwloc's name of the attribute.
    pub fn name(self) -> &'static str {
        match self {
            MemAttrKind::Bandwidth => "Bandwidth",
            MemAttrKind::Latency => "Latency",
            MemAttrKind::ReadBandwidth => "ReadBandwidth",
            MemAttrKind::WriteBandwidth => "WriteBandwidth",
            MemAttrKind::ReadLatency => "ReadLatency",
            MemAttrKind::WriteLatency => "WriteLatency",
        }
    }
}

/// One memory attribute value: from the target node's cpuset to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AcpiMemAttr {
    /// Which attribute.
    pub kind: MemAttrKind,
    /// The memory node (OS index).
    pub target: u32,
    /// The value, in hwloc's units.
    pub value: u64,
}

/// A memory-side cache in front of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AcpiMemCache {
    /// The node (OS index).
    pub node: u32,
    /// Its level (1 is nearest the memory).
    pub level: u32,
    /// Size in bytes.
    pub size: u64,
    /// Line size in bytes.
    pub line_size: u32,
    /// Associativity from the HMAT.
    pub associativity: CacheAssociativity,
    /// Write policy from the HMAT.
    pub write_policy: CacheWritePolicy,
}

impl AcpiMemCache {
    /// hwloc's associativity: 1 for direct mapped, 0 (unknown) otherwise.
    pub fn hwloc_associativity(&self) -> i32 {
        i32::from(self.associativity == CacheAssociativity::DirectMapped)
    }
}

/// What the ACPI tables say about NUMA.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AcpiNuma {
    /// The nodes, by OS index.
    pub nodes: Vec<AcpiNode>,
    /// Distances, when there are at least two nodes.
    pub distances: Option<AcpiDistances>,
    /// Memory attributes, by target and kind.
    pub memattrs: Vec<AcpiMemAttr>,
    /// Memory-side caches, by node and level.
    pub memcaches: Vec<AcpiMemCache>,
}

/// Linux's `hmat_normalize`: `entry × base`, 0 when unknown or too large,
/// latencies in ns.
fn normalize(entry: u16, base: u64, data_type: HmatDataType, revision: u8) -> u32 {
    if entry == 0 || entry == 0xffff {
        return 0;
    }
    let Some(v) = u64::from(entry)
        .checked_mul(base)
        .filter(|&v| v <= u64::from(u32::MAX))
    else {
        return 0;
    };
    let v = v as u32;
    if revision == 1 {
        if v < 10 {
            return 0;
        }
        v.div_ceil(10)
    } else if data_type.is_latency() {
        v.div_ceil(1000)
    } else {
        v
    }
}

/// Best values of a target for CPU initiators (Linux's `access1` class):
/// read latency, write latency, read bandwidth, write bandwidth.
#[derive(Clone, Copy, Debug, Default)]
struct Access {
    rlat: u32,
    wlat: u32,
    rbw: u32,
    wbw: u32,
}

impl Access {
    fn update(&mut self, t: HmatDataType, v: u32) {
        let lat = t.is_latency();
        if t.covers_read() {
            if lat { self.rlat = v } else { self.rbw = v }
        }
        if t.covers_write() {
            if lat { self.wlat = v } else { self.wbw = v }
        }
    }

    /// Pushes the known values as memory attributes of node `target`:
    /// bandwidths then latencies, each read, write and (when both are
    /// known) their average.
    fn push_memattrs(&self, target: u32, out: &mut Vec<AcpiMemAttr>) {
        use MemAttrKind::*;
        push_read_write(
            out,
            target,
            [ReadBandwidth, WriteBandwidth, Bandwidth],
            self.rbw,
            self.wbw,
        );
        push_read_write(
            out,
            target,
            [ReadLatency, WriteLatency, Latency],
            self.rlat,
            self.wlat,
        );
    }
}

/// Pushes a read and a write value of node `target` as the attributes
/// `kinds` (read, write, average), leaving out unknown (zero) values and
/// the average unless both are known.
fn push_read_write(
    out: &mut Vec<AcpiMemAttr>,
    target: u32,
    kinds: [MemAttrKind; 3],
    read: u32,
    write: u32,
) {
    let [read_kind, write_kind, average_kind] = kinds;
    let mut push = |kind, value: u32| {
        if value > 0 {
            out.push(AcpiMemAttr {
                kind,
                target,
                value: value.into(),
            });
        }
    };
    push(read_kind, read);
    push(write_kind, write);
    if read > 0 && write > 0 {
        push(
            average_kind,
            ((u64::from(read) + u64::from(write)) / 2) as u32,
        );
    }
}

/// The node numbers Linux gives to proximity domains.
fn map_domains(srat: &Srat) -> BTreeMap<u32, u32> {
    let mut map = BTreeMap::new();
    let mut next = 0u32;
    let mut add = |d: u32| {
        if !map.contains_key(&d) && (next as usize) < MAX_NUMA_NODES {
            map.insert(d, next);
            next += 1;
        }
    };
    for e in &srat.entries {
        if !matches!(e, SratEntry::Memory { .. }) {
            add(e.domain());
        }
    }
    for e in &srat.entries {
        if matches!(e, SratEntry::Memory { .. }) {
            add(e.domain());
        }
    }
    map
}

/// Interprets the NUMA tables as Linux and hwloc do (see the module
/// documentation).  Without a SRAT there is no NUMA information and the
/// result is empty.  The MADT, when given, limits node processors to the
/// usable ones.
pub fn acpi_numa(
    madt: Option<&Madt>,
    srat: Option<&Srat>,
    slit: Option<&Slit>,
    hmat: Option<&Hmat>,
) -> AcpiNuma {
    let Some(srat) = srat else {
        return AcpiNuma::default();
    };
    let domain_to_os = map_domains(srat);
    let (mut nodes, has_memory_entry) = gather_nodes(madt, srat, &domain_to_os);
    let index = NodeIndex::new(domain_to_os, &nodes);
    let distances = distance_matrix(&nodes, slit);
    let found = hmat
        .map(|h| hmat_findings(h, &nodes, &index, &has_memory_entry))
        .unwrap_or_default();
    let localities = localities(&nodes, &index, &found.initiators_of, distances.as_ref());
    for (node, l) in nodes.iter_mut().zip(localities) {
        node.locality = l.into_iter().collect();
    }
    AcpiNuma {
        nodes,
        distances,
        memattrs: found.memattrs,
        memcaches: found.memcaches,
    }
}

/// Gathers the SRAT entries per node: usable processors, memory and
/// generic initiators, keeping the domains that become nodes (processors,
/// populated memory or a generic initiator), by OS index.  Also returns
/// the OS indexes with a memory entry (the HMAT's possible targets, even
/// when the memory is only hot-pluggable).  Separate because it is the
/// only phase that reads the SRAT and MADT: the others work on nodes.
fn gather_nodes(
    madt: Option<&Madt>,
    srat: &Srat,
    domain_to_os: &BTreeMap<u32, u32>,
) -> (Vec<AcpiNode>, BTreeSet<u32>) {
    let mut by_os: BTreeMap<u32, AcpiNode> = BTreeMap::new();
    let mut has_memory_entry: BTreeSet<u32> = BTreeSet::new();
    for e in &srat.entries {
        let Some(&os) = domain_to_os.get(&e.domain()) else {
            continue;
        };
        let n = by_os.entry(os).or_insert_with(|| AcpiNode {
            os_index: os,
            domain: e.domain(),
            ..AcpiNode::default()
        });
        match *e {
            SratEntry::Processor { apic_id, .. } => {
                let usable = madt.is_none_or(|m| {
                    m.processors
                        .iter()
                        .any(|p| p.apic_id == apic_id && m.is_usable(p))
                });
                if usable {
                    n.apic_ids.push(apic_id);
                }
            }
            SratEntry::Gicc { uid, .. } => {
                let usable =
                    madt.is_none_or(|m| m.gicc_by_uid(uid).is_some_and(|g| m.is_gicc_usable(g)));
                if usable {
                    n.apic_ids.push(uid);
                }
            }
            SratEntry::Memory {
                length,
                hot_pluggable,
                non_volatile,
                ..
            } => {
                has_memory_entry.insert(os);
                if hot_pluggable {
                    n.hot_pluggable_memory = n.hot_pluggable_memory.saturating_add(length);
                } else {
                    n.memory = n.memory.saturating_add(length);
                }
                n.non_volatile |= non_volatile && length > 0;
            }
            SratEntry::GenericInitiator { .. } => n.generic_initiator = true,
        }
    }
    by_os.retain(|_, n| {
        n.apic_ids.sort_unstable();
        n.apic_ids.dedup();
        !n.apic_ids.is_empty() || n.memory > 0 || n.generic_initiator
    });
    (by_os.into_values().collect(), has_memory_entry)
}

/// From proximity domains and OS indexes to positions in the node list.
/// Separate so that every later phase finds a domain's node the same way.
struct NodeIndex {
    /// Linux's node number of every numbered domain.
    domain_to_os: BTreeMap<u32, u32>,
    /// Position in the node list of every OS index that became a node.
    pos: BTreeMap<u32, usize>,
}

impl NodeIndex {
    /// Indexes `nodes`, numbered by `domain_to_os`.
    fn new(domain_to_os: BTreeMap<u32, u32>, nodes: &[AcpiNode]) -> Self {
        let pos = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.os_index, i))
            .collect();
        NodeIndex { domain_to_os, pos }
    }

    /// Position of the node of domain `d`, if it became one.
    fn node_of_domain(&self, d: u32) -> Option<usize> {
        self.domain_to_os
            .get(&d)
            .and_then(|os| self.pos.get(os))
            .copied()
    }

    /// Whether domain `d` is a node with processors.
    fn has_cpu(&self, nodes: &[AcpiNode], d: u32) -> bool {
        self.node_of_domain(d)
            .is_some_and(|i| !nodes[i].apic_ids.is_empty())
    }
}

/// The distance matrix, when there are at least two nodes: the SLIT's
/// values if it is valid, otherwise Linux's 10/20 defaults.  Separate
/// because the locality phase reads it as well as the result.
fn distance_matrix(nodes: &[AcpiNode], slit: Option<&Slit>) -> Option<AcpiDistances> {
    let n = nodes.len();
    (n > 1).then(|| {
        let slit = slit.filter(|s| s.is_valid());
        let mut values = Vec::with_capacity(n * n);
        for a in nodes {
            for b in nodes {
                let d = slit
                    .and_then(|s| s.distance(a.domain, b.domain))
                    .map(u64::from)
                    .unwrap_or(if a.os_index == b.os_index {
                        LOCAL_DISTANCE
                    } else {
                        REMOTE_DISTANCE
                    });
                values.push(d);
            }
        }
        AcpiDistances {
            values,
            from_slit: slit.is_some(),
        }
    })
}

/// What the HMAT phase finds.
#[derive(Default)]
struct HmatFindings {
    /// The best CPU initiators (OS indexes) of every memory target, by
    /// position in the node list.
    initiators_of: BTreeMap<usize, BTreeSet<u32>>,
    /// Memory attributes, sorted by target and kind.
    memattrs: Vec<AcpiMemAttr>,
    /// Memory-side caches, sorted by node and level.
    memcaches: Vec<AcpiMemCache>,
}

/// HMAT: the best CPU initiators and values of every memory target, and
/// its memory-side caches.  Separate because it is the only phase that
/// reads the HMAT; its parts are the functions it calls.
fn hmat_findings(
    hmat: &Hmat,
    nodes: &[AcpiNode],
    index: &NodeIndex,
    has_memory_entry: &BTreeSet<u32>,
) -> HmatFindings {
    let rev = hmat.header.revision;
    let is_target = |i: usize| has_memory_entry.contains(&nodes[i].os_index);
    let attached = attached_initiators(hmat, index, &is_target);
    // Memory-hierarchy localities, the last one of each measure.
    let mems: Vec<&HmatLocality> = hmat
        .localities
        .iter()
        .filter(|l| l.memory_hierarchy == 0)
        .collect();
    let last_for =
        |pick: fn(HmatDataType) -> bool| mems.iter().rev().find(|l| pick(l.data_type)).copied();
    // Linux's order: write latency, read latency, write bandwidth, read bandwidth.
    let slots: [Option<&HmatLocality>; 4] = [
        last_for(|t| t.is_latency() && t.covers_write()),
        last_for(|t| t.is_latency() && t.covers_read()),
        last_for(|t| !t.is_latency() && t.covers_write()),
        last_for(|t| !t.is_latency() && t.covers_read()),
    ];
    // Every domain listed as an initiator that is a node, by domain.
    let all_initiators: BTreeSet<u32> = hmat
        .localities
        .iter()
        .flat_map(|l| l.initiators.iter().copied())
        .filter(|&d| index.domain_to_os.contains_key(&d))
        .collect();
    let mut found = HmatFindings::default();
    for t in 0..nodes.len() {
        if !is_target(t) {
            continue;
        }
        let target = nodes[t].domain;
        let (acc, chosen) = match attached.get(&t) {
            Some(&p) if index.has_cpu(nodes, p) => {
                (attached_values(&mems, p, target, rev), BTreeSet::from([p]))
            }
            _ if mems.is_empty() => (Access::default(), BTreeSet::new()),
            _ => best_initiators(&slots, &all_initiators, nodes, index, target, rev),
        };
        let os = nodes[t].os_index;
        acc.push_memattrs(os, &mut found.memattrs);
        found.initiators_of.insert(
            t,
            chosen
                .into_iter()
                .filter_map(|d| index.node_of_domain(d))
                .map(|i| nodes[i].os_index)
                .collect(),
        );
        push_memcaches(hmat, target, os, &mut found.memcaches);
    }
    found.memattrs.sort_by_key(|m| (m.target, m.kind));
    found.memcaches.sort_by_key(|c| (c.node, c.level));
    found
}

/// The processor domain the HMAT attaches to each memory target (by
/// position in the node list), when that domain is numbered.  Separate
/// because an attached domain with CPUs overrides the search for the
/// best initiators.
fn attached_initiators(
    hmat: &Hmat,
    index: &NodeIndex,
    is_target: &dyn Fn(usize) -> bool,
) -> BTreeMap<usize, u32> {
    let rev = hmat.header.revision;
    let mut attached: BTreeMap<usize, u32> = BTreeMap::new();
    for d in &hmat.domains {
        let memory_valid = rev > 1 || d.flags & 2 != 0;
        if !memory_valid || !d.has_initiator() {
            continue;
        }
        if let Some(t) = index
            .node_of_domain(d.memory_domain)
            .filter(|&t| is_target(t))
            && index.domain_to_os.contains_key(&d.initiator_domain)
        {
            attached.insert(t, d.initiator_domain);
        }
    }
    attached
}

/// The values from the attached processor domain `p` to `target` in
/// every memory-hierarchy locality, the later ones overriding.  Separate
/// from [`best_initiators`]: with an attached domain there is no search.
fn attached_values(mems: &[&HmatLocality], p: u32, target: u32, rev: u8) -> Access {
    let mut acc = Access::default();
    for l in mems {
        if let Some(e) = l.entry(p, target) {
            acc.update(
                l.data_type,
                normalize(e, l.entry_base_unit, l.data_type, rev),
            );
        }
    }
    acc
}

/// Linux's search for the best CPU initiators of `target` (its
/// `access1` class): for each measure in turn, the initiators with CPUs
/// that reach the best value, narrowing the set measure by measure.
/// Returns the best values and the remaining initiators (domains).
/// Separate because it is the one intricate rule of the HMAT phase.
fn best_initiators(
    slots: &[Option<&HmatLocality>; 4],
    all_initiators: &BTreeSet<u32>,
    nodes: &[AcpiNode],
    index: &NodeIndex,
    target: u32,
    rev: u8,
) -> (Access, BTreeSet<u32>) {
    let mut acc = Access::default();
    let mut set = all_initiators.clone();
    for loc in slots.iter().flatten() {
        let mut best = 0u32;
        for &i in all_initiators {
            if !index.has_cpu(nodes, i) {
                set.remove(&i);
                continue;
            }
            if !set.contains(&i) {
                continue;
            }
            let v = loc
                .entry(i, target)
                .map_or(0, |e| normalize(e, loc.entry_base_unit, loc.data_type, rev));
            let better = v != 0
                && (best == 0
                    || if loc.data_type.is_latency() {
                        v < best
                    } else {
                        v > best
                    });
            if better {
                best = v;
                set.retain(|&x| x >= i);
            }
            if v != best {
                set.remove(&i);
            }
        }
        if best != 0 {
            acc.update(loc.data_type, best);
        }
    }
    (acc, set)
}

/// The memory-side caches the HMAT puts in front of `target` (a domain),
/// one per level, as caches of node `os`.  Separate because caches do
/// not depend on initiators.
fn push_memcaches(hmat: &Hmat, target: u32, os: u32, memcaches: &mut Vec<AcpiMemCache>) {
    let mut levels = BTreeSet::new();
    for c in hmat.caches.iter().filter(|c| c.memory_domain == target) {
        if c.level == 0 || !levels.insert(c.level) {
            continue;
        }
        memcaches.push(AcpiMemCache {
            node: os,
            level: c.level.into(),
            size: c.size,
            line_size: c.line_size.into(),
            associativity: c.associativity,
            write_policy: c.write_policy,
        });
    }
}

/// Localities, in hwloc's order: nodes with CPUs first, then CPU-less
/// ones, each in OS index order.  A node takes the localities of its
/// best initiators; a CPU-less node still without CPUs takes those of
/// its nearest nodes.  Separate because it is hwloc's rule, not Linux's,
/// and runs last, over every node.
fn localities(
    nodes: &[AcpiNode],
    index: &NodeIndex,
    initiators_of: &BTreeMap<usize, BTreeSet<u32>>,
    distances: Option<&AcpiDistances>,
) -> Vec<BTreeSet<u32>> {
    let pos = &index.pos;
    let mut loc: Vec<BTreeSet<u32>> = nodes
        .iter()
        .map(|n| {
            if n.apic_ids.is_empty() {
                BTreeSet::new()
            } else {
                BTreeSet::from([n.os_index])
            }
        })
        .collect();
    let own_cpus = |loc: &BTreeSet<u32>| {
        loc.iter()
            .any(|os| pos.get(os).is_some_and(|&i| !nodes[i].apic_ids.is_empty()))
    };
    for cpuless in [false, true] {
        for i in 0..nodes.len() {
            if nodes[i].apic_ids.is_empty() != cpuless {
                continue;
            }
            let mut registered = false;
            if let Some(inits) = initiators_of.get(&i) {
                registered = true;
                for os in inits {
                    if *os != nodes[i].os_index
                        && let Some(&j) = pos.get(os)
                    {
                        let add = loc[j].clone();
                        loc[i].extend(add);
                    }
                }
            }
            if cpuless
                && (!registered || !own_cpus(&loc[i]))
                && let Some(d) = distances
            {
                for j in nearest_nodes(d, nodes.len(), i) {
                    let add = loc[j].clone();
                    loc[i].extend(add);
                }
            }
        }
    }
    loc
}

/// hwloc's `fixup_cpuless_node_locality_from_distances`: the nodes
/// (positions) nearest to node `i` of `n`, if they are farther than `i`
/// itself and not all the other nodes.  Separate because it reads only
/// the distance matrix.
fn nearest_nodes(d: &AcpiDistances, n: usize, i: usize) -> Vec<usize> {
    let row = &d.values[i * n..(i + 1) * n];
    let others = (0..n).filter(|&j| j != i);
    let Some(min) = others.clone().map(|j| row[j]).min() else {
        return Vec::new();
    };
    let nb = others.clone().filter(|&j| row[j] == min).count();
    if min > row[i] && nb != n - 1 {
        others.filter(|&j| row[j] == min).collect()
    } else {
        Vec::new()
    }
}

impl AcpiNuma {
    /// The cpuset of a node: the PUs of the nodes of its locality, given
    /// the OS index of the PU with each processor id of [`AcpiNode::apic_ids`]
    /// (an APIC id, or an ACPI processor UID on ARM; `None` for ids that
    /// are not PUs of the topology).
    pub fn node_cpuset(&self, os_index: u32, apic_to_pu: &dyn Fn(u32) -> Option<u32>) -> CpuSet {
        let mut set = CpuSet::new();
        let Some(node) = self.nodes.iter().find(|n| n.os_index == os_index) else {
            return set;
        };
        for l in &node.locality {
            if let Some(m) = self.nodes.iter().find(|n| n.os_index == *l) {
                for &a in &m.apic_ids {
                    if let Some(pu) = apic_to_pu(a) {
                        set.set(pu);
                    }
                }
            }
        }
        set
    }

    /// Puts the NUMA information into a topology whose PUs are known:
    /// replaces its NUMA nodes and memory-side caches (such as the single
    /// node [`Topology::finish`] adds) with the nodes and caches found
    /// here, finishes it, then adds the `NUMALatency` distances and the
    /// memory attributes.  `apic_to_pu` gives the OS index of the PU with
    /// an APIC id.  Without nodes, the topology is left as it is.
    pub fn apply(
        &self,
        topo: &mut Topology,
        apic_to_pu: &dyn Fn(u32) -> Option<u32>,
    ) -> Result<(), TopologyError> {
        if self.nodes.is_empty() {
            return Ok(());
        }
        let stale: Vec<_> = topo
            .ids()
            .filter(|&i| matches!(topo.obj(i).obj_type, ObjType::NUMANode | ObjType::MemCache))
            .collect();
        for id in stale {
            if topo.get(id).is_some() {
                topo.remove_subtree(id);
            }
        }
        {
            let root = topo.root_mut();
            root.nodeset = Some(NodeSet::new());
            root.complete_nodeset = Some(NodeSet::new());
        }
        let pus = {
            let r = topo.obj(topo.root());
            r.complete_cpuset
                .clone()
                .or_else(|| r.cpuset.clone())
                .unwrap_or_default()
        };
        let cpusets: BTreeMap<u32, CpuSet> = self
            .nodes
            .iter()
            .map(|n| (n.os_index, &self.node_cpuset(n.os_index, apic_to_pu) & &pus))
            .collect();
        for n in &self.nodes {
            let mut o = Object::new(ObjType::NUMANode, Some(n.os_index));
            if let ObjAttr::Numa(a) = &mut o.attr {
                a.local_memory = n.memory;
            }
            o.nodeset = Some(NodeSet::from_index(n.os_index));
            o.cpuset = cpusets.get(&n.os_index).cloned();
            o.complete_cpuset = o.cpuset.clone();
            topo.insert_by_cpuset(o)?;
        }
        for c in &self.memcaches {
            let mut o = Object::new(ObjType::MemCache, None);
            o.attr = ObjAttr::Cache(CacheAttr {
                size: c.size,
                depth: c.level,
                linesize: c.line_size,
                associativity: c.hwloc_associativity(),
                kind: CacheKind::Unified,
                inclusive: false,
            });
            o.nodeset = Some(NodeSet::from_index(c.node));
            o.cpuset = cpusets.get(&c.node).cloned();
            o.complete_cpuset = o.cpuset.clone();
            topo.insert_by_cpuset(o)?;
        }
        topo.finish()?;
        let ids: Option<Vec<_>> = self
            .nodes
            .iter()
            .map(|n| topo.obj_by_os_index(ObjType::NUMANode, n.os_index))
            .collect();
        if let (Some(d), Some(ids)) = (&self.distances, ids) {
            topo.distances
                .retain(|x| x.name.as_deref() != Some("NUMALatency"));
            if let Some(d) = Distances::new(
                Some(String::from("NUMALatency")),
                kind::FROM_OS | kind::MEANS_LATENCY,
                ids,
                d.values.clone(),
            ) {
                topo.distances.push(d);
            }
        }
        for m in &self.memattrs {
            let Some(target) = topo.obj_by_os_index(ObjType::NUMANode, m.target) else {
                continue;
            };
            let Some(cpuset) = cpusets.get(&m.target).filter(|c| !c.is_empty()) else {
                continue;
            };
            let name = m.kind.name();
            let at = match topo.memattrs.iter().position(|a| a.name == name) {
                Some(i) => i,
                None => {
                    let flags = memattrs::PREDEFINED
                        .iter()
                        .find(|(n, _)| *n == name)
                        .map_or(memattrs::flags::NEED_INITIATOR, |(_, f)| *f);
                    topo.memattrs.push(MemAttr::new(name, flags));
                    topo.memattrs.len() - 1
                }
            };
            topo.memattrs[at].set(target, Some(Initiator::CpuSet(cpuset.clone())), m.value);
        }
        Ok(())
    }
}
