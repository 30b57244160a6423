//! The topology map of the OpenMP runtimes: every available OS proc with
//! its ids at each level (socket, die, tile, module, caches, NUMA domain,
//! core, thread), built from a wloc topology.

use std::collections::HashMap;

use wloc_core::object::{Depth, group_kind};
use wloc_core::{CpuSet, ObjId, ObjType, Topology};

/// The kinds of levels of the topology map, from the outermost to the innermost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HwType {
    /// A package (socket).
    Socket,
    /// A processor group (hwloc Groups other than tiles, modules and cpuinfo nodes).
    ProcGroup,
    /// A NUMA domain (`node_N id` levels of a cpuinfo file too).
    Numa,
    /// A die.
    Die,
    /// The last-level cache, whichever level it is (only a name for OMP_PLACES).
    Llc,
    /// A level-3 cache.
    L3,
    /// A tile.
    Tile,
    /// A module (cluster of cores).
    Module,
    /// A level-2 cache.
    L2,
    /// A level-1 data cache.
    L1,
    /// A core.
    Core,
    /// A hardware thread (OS proc).
    Thread,
}

/// All types, from the coarsest to the finest.
const ALL_TYPES: [HwType; 12] = [
    HwType::Socket,
    HwType::ProcGroup,
    HwType::Numa,
    HwType::Die,
    HwType::Llc,
    HwType::L3,
    HwType::Tile,
    HwType::Module,
    HwType::L2,
    HwType::L1,
    HwType::Core,
    HwType::Thread,
];

impl HwType {
    /// Parses the keywords of `granularity=` and of `OMP_PLACES` (singular).
    pub fn from_keyword(w: &str) -> Option<Self> {
        Some(match w {
            "socket" | "package" => HwType::Socket,
            "group" | "proc_group" | "processor_group" => HwType::ProcGroup,
            "node" | "numa_domain" | "numa" => HwType::Numa,
            "die" => HwType::Die,
            "ll_cache" | "llc" => HwType::Llc,
            "l3_cache" => HwType::L3,
            "tile" => HwType::Tile,
            "module" => HwType::Module,
            "l2_cache" => HwType::L2,
            "l1_cache" => HwType::L1,
            "core" => HwType::Core,
            "thread" | "fine" => HwType::Thread,
            _ => return None,
        })
    }

    /// The keyword naming this type.
    pub fn keyword(self) -> &'static str {
        match self {
            HwType::Socket => "socket",
            HwType::ProcGroup => "group",
            HwType::Numa => "numa_domain",
            HwType::Die => "die",
            HwType::Llc => "ll_cache",
            HwType::L3 => "l3_cache",
            HwType::Tile => "tile",
            HwType::Module => "module",
            HwType::L2 => "l2_cache",
            HwType::L1 => "l1_cache",
            HwType::Core => "core",
            HwType::Thread => "thread",
        }
    }

    /// The runtime's name of one object of this type.
    pub fn singular(self) -> &'static str {
        match self {
            HwType::Socket => "socket",
            HwType::ProcGroup => "processor group",
            HwType::Numa => "NUMA domain",
            HwType::Die => "die",
            HwType::Llc => "LL cache",
            HwType::L3 => "L3 cache",
            HwType::Tile => "tile",
            HwType::Module => "module",
            HwType::L2 => "L2 cache",
            HwType::L1 => "L1 cache",
            HwType::Core => "core",
            HwType::Thread => "thread",
        }
    }

    /// The runtime's name of several objects of this type.
    pub fn plural(self) -> &'static str {
        match self {
            HwType::Socket => "sockets",
            HwType::ProcGroup => "processor groups",
            HwType::Numa => "NUMA domains",
            HwType::Die => "dice",
            HwType::Llc => "LL caches",
            HwType::L3 => "L3 caches",
            HwType::Tile => "tiles",
            HwType::Module => "modules",
            HwType::L2 => "L2 caches",
            HwType::L1 => "L1 caches",
            HwType::Core => "cores",
            HwType::Thread => "threads",
        }
    }

    /// Which of two redundant levels is kept (the higher one).
    fn preference(self) -> i32 {
        match self {
            HwType::Socket => 110,
            HwType::ProcGroup => 100,
            HwType::Core => 95,
            HwType::Thread => 90,
            HwType::Numa => 85,
            HwType::Die => 80,
            HwType::Tile => 75,
            HwType::Module => 73,
            HwType::L3 => 70,
            HwType::L2 => 65,
            HwType::L1 => 60,
            HwType::Llc => 5,
        }
    }

    /// Sockets, cores and threads always stay in the map.
    fn is_main(self) -> bool {
        matches!(self, HwType::Socket | HwType::Core | HwType::Thread)
    }
}

/// How the topology map was obtained (`KMP_TOPOLOGY_METHOD`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Every level wloc knows (caches, NUMA domains, groups), as the runtime's hwloc method.
    Hwloc,
    /// The levels CPUID's x2APIC ids give: socket, die, tile, module, core, thread.
    Cpuid,
    /// A `/proc/cpuinfo`-format file: node levels, socket, core, thread.
    Cpuinfo,
    /// Every OS proc its own socket.
    Flat,
}

impl Method {
    /// Parses `KMP_TOPOLOGY_METHOD` values (`cpuid_leaf31`, `cpuid_leaf11`,
    /// `cpuid_leaf4`, `x2apic` and `cpuid` all mean [`Method::Cpuid`]).
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s.to_ascii_lowercase().as_str() {
            "hwloc" | "all" => Method::Hwloc,
            "cpuid" | "cpuid_leaf31" | "cpuid_leaf11" | "cpuid_leaf4" | "x2apic" | "x2apic_id"
            | "apic" | "legacy_apic" => Method::Cpuid,
            "cpuinfo" | "/proc/cpuinfo" => Method::Cpuinfo,
            "flat" => Method::Flat,
            _ => return None,
        })
    }

    fn keeps(self, t: HwType) -> bool {
        match self {
            Method::Hwloc => true,
            Method::Cpuid => matches!(
                t,
                HwType::Socket
                    | HwType::Die
                    | HwType::Tile
                    | HwType::Module
                    | HwType::Core
                    | HwType::Thread
            ),
            Method::Cpuinfo => matches!(
                t,
                HwType::Socket | HwType::Numa | HwType::Core | HwType::Thread
            ),
            Method::Flat => matches!(t, HwType::Socket | HwType::Core | HwType::Thread),
        }
    }
}

/// Intel hybrid core types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CoreType {
    /// An efficiency (Atom) core.
    Atom,
    /// A performance (Core) core.
    Core,
    /// A CPU kind without a known core type.
    Unknown,
}

impl CoreType {
    /// The runtime's name of the core type.
    pub fn name(self) -> &'static str {
        match self {
            CoreType::Atom => "Intel Atom(R) processor",
            CoreType::Core => "Intel(R) Core(TM) processor",
            CoreType::Unknown => "unknown",
        }
    }
}

/// One OS proc of the map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HwThread {
    /// The OS proc id.
    pub os_id: u32,
    /// The id at each level of the map (as printed in the map); `u32::MAX` where the proc has no object of that level.
    pub labels: Vec<u32>,
    /// The object at each level, unique within the level.
    objs: Vec<u64>,
    /// Rank of the object among its parent's children in the map, at each level.
    pub child_nums: Vec<u32>,
    /// Core type on hybrid machines.
    pub core_type: Option<CoreType>,
    /// Core efficiency on machines with several CPU kinds (0 is the least efficient).
    pub efficiency: Option<i32>,
}

/// Where a level type resolves in the map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// The map level at this index.
    Level(usize),
    /// The whole machine (a level holding a single object was dropped).
    Whole,
}

/// The topology map: levels and the available OS procs, sorted by their ids.
#[derive(Clone, Debug)]
pub struct Machine {
    method: Method,
    types: Vec<HwType>,
    threads: Vec<HwThread>,
    equivalent: HashMap<HwType, Option<HwType>>,
    counts: Vec<usize>,
    ratios: Vec<usize>,
    available: CpuSet,
}

/// What one level of the map is made of before redundant levels are removed.
#[derive(Clone, Copy, Debug)]
enum Source {
    Depth(usize),
    Numa,
}

fn group_type(o: &wloc_core::Object) -> HwType {
    let sub = o.subtype.as_deref().unwrap_or("").to_ascii_lowercase();
    let kind = o.group().map_or(0, |g| g.kind);
    if sub == "tile" || kind == group_kind::INTEL_TILE {
        HwType::Tile
    } else if sub == "module"
        || sub == "cluster"
        || kind == group_kind::INTEL_MODULE
        || kind == group_kind::LINUX_CLUSTER
        || kind == group_kind::AMD_COMPUTE_UNIT
    {
        HwType::Module
    } else if sub.starts_with("node") {
        HwType::Numa
    } else {
        HwType::ProcGroup
    }
}

fn obj_type(o: &wloc_core::Object) -> Option<HwType> {
    Some(match o.obj_type {
        ObjType::Package => HwType::Socket,
        ObjType::Die => HwType::Die,
        ObjType::Core => HwType::Core,
        ObjType::PU => HwType::Thread,
        ObjType::L1Cache => HwType::L1,
        ObjType::L2Cache => HwType::L2,
        ObjType::L3Cache => HwType::L3,
        ObjType::Group => group_type(o),
        _ => return None,
    })
}

/// A key unique to a missing object below `parent`.
fn missing_obj(parent: u64) -> u64 {
    (1 << 63) | parent
}

impl Machine {
    /// Builds the map of the PUs of `topo` that are in `available`, with the
    /// levels `method` models.  Levels whose objects each hold exactly one
    /// object of the next level are merged (the runtime's preference decides
    /// which name stays; sockets, cores and threads always stay), and
    /// outermost levels other than sockets holding one object are dropped.
    pub fn new(topo: &Topology, method: Method, available: &CpuSet) -> Machine {
        let levels = topo.normal_levels();
        // The levels of the map, outermost first.
        let mut layers: Vec<(HwType, Source)> = Vec::new();
        let numa_nodes: Vec<ObjId> = if method.keeps(HwType::Numa) {
            topo.level(Depth::NumaNode)
                .iter()
                .copied()
                .filter(|&n| topo.obj(n).cpuset.as_ref().is_some_and(|c| !c.is_empty()))
                .collect()
        } else {
            Vec::new()
        };
        let numa_parent_depth = numa_nodes
            .iter()
            .filter_map(|&n| topo.obj(n).parent())
            .map(|p| match topo.obj(p).depth() {
                Depth::Normal(d) => d as usize,
                _ => 0,
            })
            .min();
        if numa_parent_depth == Some(0) {
            layers.push((HwType::Numa, Source::Numa));
        }
        for (d, level) in levels.iter().enumerate().skip(1) {
            if let Some(&first) = level.first()
                && let Some(t) = obj_type(topo.obj(first))
                && method.keeps(t)
            {
                layers.push((t, Source::Depth(d)));
            }
            if numa_parent_depth == Some(d) {
                layers.push((HwType::Numa, Source::Numa));
            }
        }
        // Sockets and cores are always modelled.
        let pu_depth = levels.len().saturating_sub(1);
        if !layers.iter().any(|l| l.0 == HwType::Socket) {
            layers.insert(0, (HwType::Socket, Source::Depth(0)));
        }
        if !layers.iter().any(|l| l.0 == HwType::Core) {
            let at = layers.len().saturating_sub(1);
            layers.insert(at, (HwType::Core, Source::Depth(pu_depth)));
        }

        // CPU kinds, per OS proc.
        let mut kinds: HashMap<u32, (Option<CoreType>, i32)> = HashMap::new();
        if topo.cpukinds.len() > 1 {
            for k in &topo.cpukinds {
                let ct =
                    k.infos
                        .iter()
                        .find(|i| i.name == "CoreType")
                        .map(|i| match i.value.as_str() {
                            "IntelAtom" => CoreType::Atom,
                            "IntelCore" => CoreType::Core,
                            _ => CoreType::Unknown,
                        });
                for pu in k.cpuset.iter() {
                    kinds.insert(pu, (ct, k.efficiency));
                }
            }
        }

        let pus: &[ObjId] = levels.last().map_or(&[], |v| v.as_slice());
        let mut threads = Vec::with_capacity(pus.len());
        let mut sub_ids: HashMap<(u64, u64), u32> = HashMap::new();
        let mut next_sub: HashMap<(usize, u64), u32> = HashMap::new();
        let mut chain: Vec<ObjId> = Vec::new();
        for &pu in pus {
            let p = topo.obj(pu);
            let Some(os) = p.os_index else { continue };
            chain.clear();
            let mut cur = Some(pu);
            while let Some(c) = cur {
                chain.push(c);
                cur = topo.obj(c).parent();
            }
            chain.reverse();
            let node = numa_nodes
                .iter()
                .copied()
                .find(|&n| topo.obj(n).cpuset.as_ref().is_some_and(|c| c.is_set(os)));
            let mut labels = Vec::with_capacity(layers.len());
            let mut objs = Vec::with_capacity(layers.len());
            let mut parent_key = 0u64;
            for (i, &(t, src)) in layers.iter().enumerate() {
                let obj = match src {
                    Source::Numa => node,
                    Source::Depth(d) => chain.get(d).copied(),
                };
                let key = obj.map_or(missing_obj(parent_key), |o| o as u64);
                // Ids: sub-ids (rank under the parent object) except for
                // sockets, and the file's ids with the cpuinfo method.
                let sub = {
                    let n = next_sub.entry((i, parent_key)).or_insert(0);
                    *sub_ids.entry((parent_key, key)).or_insert_with(|| {
                        *n += 1;
                        *n - 1
                    })
                };
                let label = match (obj, t) {
                    (None, _) => u32::MAX,
                    (Some(o), HwType::Thread) => topo.obj(o).sibling_rank(),
                    (Some(_), HwType::Core) if matches!(src, Source::Depth(d) if d == pu_depth) => {
                        sub
                    }
                    (Some(o), HwType::Socket) if matches!(src, Source::Depth(0)) => {
                        let _ = o;
                        0
                    }
                    (Some(o), HwType::Socket) => {
                        let ob = topo.obj(o);
                        ob.os_index.unwrap_or(ob.logical_index())
                    }
                    // A cpuinfo file's ids are the hardware's own; other
                    // inputs may number cores across packages.
                    (Some(o), _) if method == Method::Cpuinfo => {
                        topo.obj(o).os_index.unwrap_or(sub)
                    }
                    _ => sub,
                };
                labels.push(label);
                objs.push(key);
                parent_key = key;
            }
            // A PU standing for its own core is thread 0 of it.
            if matches!(layers.get(layers.len().wrapping_sub(2)), Some((HwType::Core, Source::Depth(d))) if *d == pu_depth)
                && let Some(l) = labels.last_mut()
            {
                *l = 0;
            }
            let (core_type, efficiency) = match kinds.get(&os) {
                Some(&(ct, e)) => (ct, Some(e)),
                None => (None, None),
            };
            if available.is_set(os) {
                threads.push(HwThread {
                    os_id: os,
                    labels,
                    objs,
                    child_nums: Vec::new(),
                    core_type,
                    efficiency,
                });
            }
        }
        let mut m = Machine {
            method,
            types: layers.iter().map(|l| l.0).collect(),
            threads,
            equivalent: HashMap::new(),
            counts: Vec::new(),
            ratios: Vec::new(),
            available: CpuSet::new(),
        };
        m.threads
            .sort_by(|a, b| a.labels.cmp(&b.labels).then(a.os_id.cmp(&b.os_id)));
        m.remove_radix1_levels();
        m.drop_single_top_levels();
        m.compute_counts();
        m.available = m.threads.iter().map(|t| t.os_id).collect();
        m
    }

    /// Number of distinct children at level `l2` of each object of level `l1`, or `None` when one has several.
    fn is_radix1(&self, l1: usize, l2: usize) -> bool {
        let mut child: HashMap<u64, u64> = HashMap::new();
        for t in &self.threads {
            match child.get(&t.objs[l1]) {
                Some(&c) if c != t.objs[l2] => return false,
                Some(_) => {}
                None => {
                    child.insert(t.objs[l1], t.objs[l2]);
                }
            }
        }
        true
    }

    fn remove_level(&mut self, l: usize) {
        self.types.remove(l);
        for t in &mut self.threads {
            t.labels.remove(l);
            t.objs.remove(l);
        }
    }

    fn set_equivalent(&mut self, removed: HwType, kept: Option<HwType>) {
        for v in self.equivalent.values_mut() {
            if *v == Some(removed) {
                *v = kept;
            }
        }
        self.equivalent.insert(removed, kept);
    }

    /// Merges adjacent levels where each object holds a single object of
    /// the next one, keeping the preferred name.
    fn remove_radix1_levels(&mut self) {
        let (mut i1, mut i2) = (0usize, 1usize);
        while i1 + 1 < self.types.len() && i2 < self.types.len() {
            let (t1, t2) = (self.types[i1], self.types[i2]);
            if t1.is_main() && t2.is_main() {
                i1 = i2;
                i2 += 1;
                continue;
            }
            if !self.is_radix1(i1, i2) {
                i1 = i2;
                i2 += 1;
                continue;
            }
            if t1.preference() > t2.preference() {
                self.set_equivalent(t2, Some(t1));
                self.remove_level(i2);
            } else {
                // Keep the outer level's ids when the inner ones say nothing.
                let first = self.threads.first().map(|t| t.labels[i2]);
                if self.threads.iter().all(|t| Some(t.labels[i2]) == first) {
                    for t in &mut self.threads {
                        t.labels[i2] = t.labels[i1];
                    }
                }
                self.set_equivalent(t1, Some(t2));
                self.remove_level(i1);
            }
        }
    }

    /// Outermost levels holding a single object (a machine-wide NUMA node
    /// or group) add nothing to the map; sockets always stay.
    fn drop_single_top_levels(&mut self) {
        while self.types.len() > 1 && self.types[0] != HwType::Socket {
            let first = self.threads.first().map(|t| t.objs[0]);
            if !self.threads.iter().all(|t| Some(t.objs[0]) == first) {
                break;
            }
            let t = self.types[0];
            self.set_equivalent(t, None);
            self.remove_level(0);
        }
    }

    fn compute_counts(&mut self) {
        let depth = self.types.len();
        self.counts = vec![0; depth];
        self.ratios = vec![0; depth];
        for l in 0..depth {
            let mut children: HashMap<u64, usize> = HashMap::new();
            let mut seen: HashMap<u64, ()> = HashMap::new();
            let mut prev: Option<(u64, u64)> = None;
            let mut counter = 0u32;
            for i in 0..self.threads.len() {
                let parent = if l == 0 {
                    0
                } else {
                    self.threads[i].objs[l - 1]
                };
                let obj = self.threads[i].objs[l];
                match prev {
                    Some((p, _)) if p != parent => counter = 0,
                    Some((_, o)) if o != obj => counter += 1,
                    _ => {}
                }
                prev = Some((parent, obj));
                if self.threads[i].child_nums.len() < depth {
                    self.threads[i].child_nums.resize(depth, 0);
                }
                self.threads[i].child_nums[l] = counter;
                if seen.insert(obj, ()).is_none() {
                    self.counts[l] += 1;
                    *children.entry(parent).or_insert(0) += 1;
                }
            }
            self.ratios[l] = children.values().copied().max().unwrap_or(0);
        }
    }

    /// The method that built the map.
    pub fn method(&self) -> Method {
        self.method
    }

    /// The levels of the map, outermost first.
    pub fn types(&self) -> &[HwType] {
        &self.types
    }

    /// The available OS procs, sorted by their ids at each level (the map's order).
    pub fn threads(&self) -> &[HwThread] {
        &self.threads
    }

    /// The available OS procs.
    pub fn available(&self) -> &CpuSet {
        &self.available
    }

    /// Number of objects at each level.
    pub fn counts(&self) -> &[usize] {
        &self.counts
    }

    /// Largest number of children of one object, at each level.
    pub fn ratios(&self) -> &[usize] {
        &self.ratios
    }

    /// Whether every object of a level has the same number of children.
    pub fn is_uniform(&self) -> bool {
        self.ratios.iter().product::<usize>() == self.threads.len()
    }

    /// Whether the procs have several CPU kinds.
    pub fn is_hybrid(&self) -> bool {
        self.threads.iter().any(|t| t.efficiency.is_some())
    }

    /// Where a level type is in the map, following merged levels; `None`
    /// when the machine has no such level.
    pub fn resolve(&self, t: HwType) -> Option<Resolved> {
        if t == HwType::Llc {
            return [HwType::L3, HwType::L2, HwType::L1]
                .into_iter()
                .find_map(|c| self.resolve(c));
        }
        let mut cur = t;
        for _ in 0..ALL_TYPES.len() + 1 {
            if let Some(i) = self.types.iter().rposition(|&x| x == cur) {
                return Some(Resolved::Level(i));
            }
            match self.equivalent.get(&cur) {
                Some(Some(next)) => cur = *next,
                Some(None) => return Some(Resolved::Whole),
                None => return None,
            }
        }
        None
    }

    /// Resolves a level, falling back to the next finer type the machine
    /// has; the second value is the type actually used when it differs.
    pub fn resolve_or_finer(&self, t: HwType) -> (Resolved, Option<HwType>) {
        if let Some(r) = self.resolve(t) {
            return (r, None);
        }
        let start = ALL_TYPES.iter().position(|&x| x == t).unwrap_or(0);
        for &f in &ALL_TYPES[start..] {
            if let Some(r) = self.resolve(f) {
                return (r, Some(f));
            }
        }
        (Resolved::Level(self.types.len() - 1), Some(HwType::Thread))
    }

    /// A key naming the object of `thread` at a resolved level.
    pub(crate) fn key_at(&self, thread: &HwThread, r: Resolved) -> u64 {
        match r {
            Resolved::Level(l) => thread.objs[l],
            Resolved::Whole => 0,
        }
    }

    /// The procs of each object of a level type, in map order (the places
    /// `sockets`, `cores`, `threads`, ... of `OMP_PLACES`).
    pub fn groups(&self, t: HwType) -> Vec<CpuSet> {
        let (r, _) = self.resolve_or_finer(t);
        let mut out: Vec<CpuSet> = Vec::new();
        let mut index: HashMap<u64, usize> = HashMap::new();
        for th in &self.threads {
            let k = self.key_at(th, r);
            let i = *index.entry(k).or_insert_with(|| {
                out.push(CpuSet::new());
                out.len() - 1
            });
            out[i].set(th.os_id);
        }
        out
    }

    /// The map's description line: `2 sockets x 2 cores/socket x 2 threads/core (4 total cores)`.
    pub fn topology_line(&self) -> String {
        let mut s = String::new();
        for (l, t) in self.types.iter().enumerate() {
            if l > 0 {
                s.push_str(" x ");
            }
            s.push_str(&format!("{} {}", self.ratios[l], t.plural()));
            if l > 0 {
                s.push('/');
                s.push_str(self.types[l - 1].singular());
            }
        }
        let cores = self
            .types
            .iter()
            .position(|&t| t == HwType::Core)
            .map_or(0, |l| self.counts[l]);
        format!("{s} ({cores} total cores)")
    }

    /// Where one proc sits: `socket 0 core 1 thread 0 ` (the runtime's
    /// wording, trailing space included).
    pub fn location(&self, thread: &HwThread) -> String {
        let mut s = String::new();
        for (l, t) in self.types.iter().enumerate() {
            if thread.labels[l] != u32::MAX {
                s.push_str(&format!("{} {} ", t.singular(), thread.labels[l]));
            }
        }
        if let Some(ct) = thread.core_type {
            s.push_str(&format!("({}) ", ct.name()));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synth(desc: &str) -> Topology {
        wloc_core::synthetic::parse(desc)
            .unwrap()
            .build(Topology::new())
            .unwrap()
    }

    #[test]
    fn seed_machine_map() {
        let t = synth("pack:2(indexes=0,3) core:2 pu:2(indexes=0,4,2,6,1,5,3,7)");
        let m = Machine::new(&t, Method::Hwloc, &CpuSet::full());
        assert_eq!(m.types(), &[HwType::Socket, HwType::Core, HwType::Thread]);
        assert_eq!(
            m.topology_line(),
            "2 sockets x 2 cores/socket x 2 threads/core (4 total cores)"
        );
        let order: Vec<u32> = m.threads().iter().map(|t| t.os_id).collect();
        assert_eq!(order, vec![0, 4, 2, 6, 1, 5, 3, 7]);
        assert_eq!(m.location(&m.threads()[4]), "socket 3 core 0 thread 0 ");
        assert!(m.is_uniform());
        assert_eq!(m.resolve(HwType::Numa), Some(Resolved::Whole));
    }

    #[test]
    fn caches_merge_into_cores_and_sockets() {
        let t = synth("pack:2 l3:1 l2:4 l1:1 core:1 pu:2");
        let m = Machine::new(&t, Method::Hwloc, &CpuSet::full());
        assert_eq!(m.types(), &[HwType::Socket, HwType::Core, HwType::Thread]);
        assert_eq!(m.resolve(HwType::L3), Some(Resolved::Level(0)));
        assert_eq!(m.resolve(HwType::L2), Some(Resolved::Level(1)));
        assert_eq!(m.resolve(HwType::Llc), Some(Resolved::Level(0)));
        assert_eq!(m.resolve(HwType::Tile), None);
        // The next finer type the machine has is L2, merged into cores.
        assert_eq!(
            m.resolve_or_finer(HwType::Tile),
            (Resolved::Level(1), Some(HwType::L2))
        );
        // Shared L3 inside a package stays a level.
        let t = synth("pack:2 l3:2 core:4 pu:2");
        let m = Machine::new(&t, Method::Hwloc, &CpuSet::full());
        assert_eq!(
            m.types(),
            &[HwType::Socket, HwType::L3, HwType::Core, HwType::Thread]
        );
        assert_eq!(
            m.topology_line(),
            "2 sockets x 2 L3 caches/socket x 4 cores/L3 cache x 2 threads/core (16 total cores)"
        );
        let m = Machine::new(&t, Method::Cpuid, &CpuSet::full());
        assert_eq!(m.types(), &[HwType::Socket, HwType::Core, HwType::Thread]);
    }

    #[test]
    fn numa_domains_inside_packages() {
        let t = synth("pack:2 group:2 [numa] core:2 pu:1");
        let m = Machine::new(&t, Method::Hwloc, &CpuSet::full());
        // One NUMA node per group: the group level stands for both.
        assert_eq!(
            m.types(),
            &[
                HwType::Socket,
                HwType::ProcGroup,
                HwType::Core,
                HwType::Thread
            ]
        );
        assert_eq!(m.resolve(HwType::Numa), m.resolve(HwType::ProcGroup));
        assert_eq!(m.groups(HwType::Numa).len(), 4);
        assert_eq!(m.groups(HwType::Socket).len(), 2);
        let t = synth("pack:2 [numa] core:2 pu:1");
        let m = Machine::new(&t, Method::Hwloc, &CpuSet::full());
        assert_eq!(m.resolve(HwType::Numa), Some(Resolved::Level(0)));
    }

    #[test]
    fn restricted_and_nonuniform() {
        let t = synth("pack:2 core:2 pu:2");
        let m = Machine::new(&t, Method::Hwloc, &CpuSet::parse_list("0-4").unwrap());
        assert_eq!(m.threads().len(), 5);
        assert!(!m.is_uniform());
        let m = Machine::new(&t, Method::Hwloc, &CpuSet::parse_list("1,3,5,7").unwrap());
        assert!(m.is_uniform());
        assert_eq!(
            m.topology_line(),
            "2 sockets x 2 cores/socket x 1 threads/core (4 total cores)"
        );
        assert_eq!(m.location(&m.threads()[0]), "socket 0 core 0 thread 1 ");
    }

    #[test]
    fn methods_parse() {
        assert_eq!(Method::parse("cpuid_leaf11"), Some(Method::Cpuid));
        assert_eq!(Method::parse("cpuinfo"), Some(Method::Cpuinfo));
        assert_eq!(Method::parse("flat"), Some(Method::Flat));
        assert_eq!(Method::parse("hwloc"), Some(Method::Hwloc));
        assert_eq!(Method::parse("magic"), None);
    }
}
