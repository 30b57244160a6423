//! Memory tiers as hwloc 2.10 to 2.14 guess them when a topology is loaded:
//! NUMA nodes grouped by kind (from the `DAXType` and `CXLDevice` infos and
//! the `GPUMemory` subtype) and by local bandwidth and latency, the kinds
//! of unknown tiers guessed (DRAM and HBM from their bandwidths, or by the
//! `HWLOC_MEMTIERS_GUESS` rules), the tiers ordered by bandwidth, then each
//! node given its tier's kind as subtype and its rank as the `MemoryTier`
//! info, and the root the `MemoryTiersNr` info (both only with several
//! tiers).  `HWLOC_MEMTIERS` may force the tiers instead ([`forced`]).
//!
//! The caller reads the environment (this crate has none) into
//! [`Options`] and decides when to run it; [`guess`] and [`forced`] build
//! the tiers, [`apply`] writes them into the topology.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::bitmap::{CpuSet, NodeSet};
use crate::memattrs::Initiator;
use crate::object::{Depth, Info, ObjId};
use crate::topology::Topology;

/// Memory tier kinds (hwloc's `HWLOC_MEMORY_TIER_*` bits).
pub mod kinds {
    /// High-bandwidth memory.
    pub const HBM: u64 = 1 << 0;
    /// Ordinary memory.
    pub const DRAM: u64 = 1 << 1;
    /// Memory of a GPU.
    pub const GPU: u64 = 1 << 2;
    /// Specific-purpose memory (usually HBM).
    pub const SPM: u64 = 1 << 3;
    /// Non-volatile memory.
    pub const NVM: u64 = 1 << 4;
    /// Behind CXL (with one of the others, or alone for CXL DRAM).
    pub const CXL: u64 = 1 << 5;
}

/// The subtype hwloc gives nodes of a tier of these kinds (`None` for an
/// unknown kind, which sets no subtype).
pub fn kind_name(k: u64) -> Option<&'static str> {
    use kinds::*;
    Some(match k {
        DRAM => "DRAM",
        HBM => "HBM",
        GPU => "GPUMemory",
        SPM => "SPM",
        NVM => "NVM",
        x if x == CXL || x == CXL | DRAM => "CXL-DRAM",
        x if x == CXL | HBM => "CXL-HBM",
        x if x == CXL | GPU => "CXL-GPUMemory",
        x if x == CXL | SPM => "CXL-SPM",
        x if x == CXL | NVM => "CXL-NVM",
        _ => return None,
    })
}

/// The kinds a name stands for, ignoring case; 0 for an unknown name.
pub fn kind_parse(s: &str) -> u64 {
    use kinds::*;
    const NAMES: [(&str, u64); 10] = [
        ("DRAM", DRAM),
        ("HBM", HBM),
        ("GPUMemory", GPU),
        ("SPM", SPM),
        ("NVM", NVM),
        ("CXL-DRAM", CXL | DRAM),
        ("CXL-HBM", CXL | HBM),
        ("CXL-GPUMemory", CXL | GPU),
        ("CXL-SPM", CXL | SPM),
        ("CXL-NVM", CXL | NVM),
    ];
    NAMES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(s))
        .map_or(0, |&(_, k)| k)
}

/// How tiers are guessed (hwloc's environment variables, read by the
/// caller).
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// `HWLOC_MEMTIERS_GUESS=none`: kinds are not guessed.
    pub guess_none: bool,
    /// `spm_is_hbm` (or `all`): specific-purpose memory is HBM.
    pub spm_is_hbm: bool,
    /// `node0_is_dram` (or `all`): node 0's unknown tier is DRAM.
    pub node0_is_dram: bool,
    /// `HWLOC_MEMTIERS_BANDWIDTH_THRESHOLD`: relative bandwidth difference
    /// that separates two tiers (0.1).
    pub bandwidth_threshold: f32,
    /// `HWLOC_MEMTIERS_LATENCY_THRESHOLD`, likewise for latencies (0.1).
    pub latency_threshold: f32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            guess_none: false,
            spm_is_hbm: false,
            node0_is_dram: false,
            bandwidth_threshold: 0.1,
            latency_threshold: 0.1,
        }
    }
}

impl Options {
    /// The options the values of `HWLOC_MEMTIERS_GUESS`,
    /// `HWLOC_MEMTIERS_BANDWIDTH_THRESHOLD` and
    /// `HWLOC_MEMTIERS_LATENCY_THRESHOLD` give (`None`: unset).  A
    /// threshold that is not a number counts as 0, as C's `atof` reads it.
    pub fn from_values(guess: Option<&str>, bw: Option<&str>, lat: Option<&str>) -> Self {
        let mut o = Options::default();
        if let Some(g) = guess {
            if g == "none" {
                o.guess_none = true;
            }
            let all = g == "all";
            o.spm_is_hbm = all || g.contains("spm_is_hbm");
            o.node0_is_dram = all || g.contains("node0_is_dram");
        }
        let num = |s: &str| s.trim().parse::<f32>().ok().filter(|x| x.is_finite());
        if let Some(b) = bw {
            o.bandwidth_threshold = num(b).unwrap_or(0.0);
        }
        if let Some(l) = lat {
            o.latency_threshold = num(l).unwrap_or(0.0);
        }
        o
    }
}

/// One tier: its nodes, their kinds and the range of their local
/// bandwidths (0: unknown).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tier {
    /// The nodes (by OS index).
    pub nodeset: NodeSet,
    /// Their kinds (see [`kinds`]; 0: unknown).
    pub kinds: u64,
    /// The lowest local bandwidth of a node of the tier that has one.
    pub bw_min: u64,
    /// The local bandwidth of the tier's last node in bandwidth order.
    pub bw_max: u64,
}

/// Tiers forced by `HWLOC_MEMTIERS` (`0x3=DRAM;0xc=HBM`, in that order,
/// unknown kind names giving unknown tiers).  `None` when the value does
/// not describe tiers (a part without `=`, a nodeset that is empty or not
/// a nodeset, an infinite one): tiers are guessed then, as in hwloc.
pub fn forced(value: &str) -> Option<Vec<Tier>> {
    let mut tiers = Vec::new();
    for part in value.split(';') {
        let (set, kind) = part.split_once('=')?;
        let nodeset = NodeSet::parse(set.trim()).ok()?;
        if nodeset.is_empty() || nodeset.is_infinite() {
            return None;
        }
        tiers.push(Tier {
            nodeset,
            kinds: kind_parse(kind),
            bw_min: 0,
            bw_max: 0,
        });
    }
    Some(tiers)
}

/// What hwloc knows of one node while it groups them.
struct NodeInfo {
    os: Option<u32>,
    kinds: u64,
    bw: u64,
    lat: u64,
    rank: usize,
}

/// The value of the predefined attribute `name` for `node` accessed from
/// its own CPUs: the first value whose initiator is a set including them
/// (0 when none, or when the node has no CPU).
pub fn local_value(topo: &Topology, name: &str, node: ObjId, cpuset: &CpuSet) -> u64 {
    if cpuset.is_empty() {
        return 0;
    }
    let Some(attr) = topo.memattrs.iter().find(|m| m.name == name) else {
        return 0;
    };
    attr.values
        .iter()
        .find(|v| {
            v.target == node
                && matches!(&v.initiator, Some(Initiator::CpuSet(c)) if c.includes(cpuset))
        })
        .map_or(0, |v| v.value)
}

/// Whether two nonzero values differ by more than `threshold` (relative).
fn differ(a: u64, b: u64, threshold: f32) -> bool {
    if a == 0 || b == 0 {
        return false;
    }
    let mut r = a as f32 / b as f32;
    if r < 1.0 {
        r = 1.0 / r;
    }
    r > 1.0 + threshold
}

/// Groups the NUMA nodes in tiers, guesses unknown kinds and orders the
/// tiers, as hwloc does.  `None` without NUMA nodes.
pub fn guess(topo: &Topology, opts: &Options) -> Option<Vec<Tier>> {
    guess_among(topo, topo.level(Depth::NumaNode), opts)
}

/// [`guess`] among some of the NUMA nodes only (those hwloc would keep,
/// when the tree still holds disallowed ones).  `None` without nodes.
pub fn guess_among(topo: &Topology, nodes: &[ObjId], opts: &Options) -> Option<Vec<Tier>> {
    if nodes.is_empty() {
        return None;
    }
    let mut infos: Vec<NodeInfo> = nodes
        .iter()
        .map(|&n| {
            let o = topo.obj(n);
            let dax = o.info("DAXType");
            let mut k = if o.subtype.as_deref() == Some("GPUMemory") {
                kinds::GPU
            } else if dax == Some("NVM") {
                kinds::NVM
            } else if dax == Some("SPM") {
                kinds::SPM
            } else {
                0
            };
            if o.info("CXLDevice").is_some() {
                k &= kinds::NVM;
                k |= kinds::CXL;
            }
            let cpuset = o.cpuset.clone().unwrap_or_default();
            NodeInfo {
                os: o.os_index,
                kinds: k,
                bw: local_value(topo, "Bandwidth", n, &cpuset),
                lat: local_value(topo, "Latency", n, &cpuset),
                rank: 0,
            }
        })
        .collect();
    // Unknown kinds first, then by kind; by decreasing bandwidth within one.
    infos.sort_by(|a, b| a.kinds.cmp(&b.kinds).then(b.bw.cmp(&a.bw)));
    for i in 1..infos.len() {
        let (prev, cur) = (&infos[i - 1], &infos[i]);
        let next = cur.kinds != prev.kinds
            || differ(cur.bw, prev.bw, opts.bandwidth_threshold)
            || differ(cur.lat, prev.lat, opts.latency_threshold);
        infos[i].rank = prev.rank + usize::from(next);
    }
    let nr = infos.last().map_or(0, |i| i.rank + 1);
    let mut tiers: Vec<Tier> = (0..nr)
        .map(|_| Tier {
            nodeset: NodeSet::new(),
            kinds: 0,
            bw_min: 0,
            bw_max: 0,
        })
        .collect();
    for i in &infos {
        let t = &mut tiers[i.rank];
        if let Some(os) = i.os {
            t.nodeset.set(os);
        }
        t.kinds = i.kinds;
        if t.bw_min == 0 {
            t.bw_min = i.bw;
        }
        t.bw_max = i.bw;
    }
    guess_kinds(&mut tiers, opts);
    sort_tiers(&mut tiers);
    Some(tiers)
}

/// Guesses the kinds of unknown tiers (hwloc's
/// `hwloc__guess_memory_tiers_types`).
fn guess_kinds(tiers: &mut [Tier], opts: &Options) {
    if opts.guess_none || tiers.len() == 1 {
        return;
    }
    let unknown: Vec<usize> = (0..tiers.len()).filter(|&i| tiers[i].kinds == 0).collect();
    let spm: Vec<usize> = (0..tiers.len())
        .filter(|&i| tiers[i].kinds == kinds::SPM)
        .collect();
    if unknown.len() == 2 && spm.is_empty() {
        guess_dram_hbm(tiers, unknown[0], unknown[1], opts.node0_is_dram);
    } else if unknown.len() == 1 && spm.len() == 1 {
        guess_dram_hbm(tiers, unknown[0], spm[0], opts.node0_is_dram);
    }
    if opts.spm_is_hbm {
        for t in tiers.iter_mut().filter(|t| t.kinds == kinds::SPM) {
            t.kinds = kinds::HBM;
        }
    }
    if opts.node0_is_dram
        && let Some(t) = tiers
            .iter_mut()
            .find(|t| t.nodeset.is_set(0) && t.kinds == 0)
    {
        t.kinds = kinds::DRAM;
    }
}

/// Two tiers whose bandwidths differ by more than twice are DRAM (the
/// slower) and HBM, unless node 0, said to be DRAM, is in the faster one.
fn guess_dram_hbm(tiers: &mut [Tier], a: usize, b: usize, node0_is_dram: bool) {
    if tiers[a].bw_min == 0 || tiers[b].bw_min == 0 {
        return;
    }
    let (lo, hi) = if tiers[a].bw_min > tiers[b].bw_min {
        (b, a)
    } else {
        (a, b)
    };
    if tiers[hi].bw_min <= tiers[lo].bw_max.saturating_mul(2) {
        return;
    }
    if node0_is_dram && tiers[hi].nodeset.is_set(0) {
        return;
    }
    tiers[lo].kinds = kinds::DRAM;
    tiers[hi].kinds = kinds::HBM;
}

/// Whether tier `a` goes before `b`: higher average bandwidth first when
/// both have one, else (or when equal) the lower kind bits first.
fn before(a: &Tier, b: &Tier) -> bool {
    if a.bw_min != 0 && b.bw_min != 0 {
        let sa = u128::from(a.bw_min) + u128::from(a.bw_max);
        let sb = u128::from(b.bw_min) + u128::from(b.bw_max);
        if sa != sb {
            return sa > sb;
        }
    }
    a.kinds < b.kinds
}

/// Orders tiers with [`before`].  That order is not total (tiers without a
/// bandwidth compare by kind only), which the standard sorts may refuse:
/// a stable insertion sort gives a deterministic order instead (the tier
/// count is bounded by the node count).
fn sort_tiers(tiers: &mut [Tier]) {
    for i in 1..tiers.len() {
        let mut j = i;
        while j > 0 && before(&tiers[j], &tiers[j - 1]) {
            tiers.swap(j, j - 1);
            j -= 1;
        }
    }
}

/// Sets `name` to `value` in `infos`: the first info of that name is
/// replaced, or one is appended.
fn set_info(infos: &mut Vec<Info>, name: &str, value: String) {
    match infos.iter_mut().find(|i| i.name == name) {
        Some(i) => i.value = value,
        None => infos.push(Info {
            name: name.to_string(),
            value,
        }),
    }
}

/// Writes the tiers into the topology as hwloc 2.14 does: each NUMA node
/// in the first tier holding it gets the tier's kind as subtype (unless it
/// has one and `force` is false; an unknown kind sets none) and, with
/// several tiers, its tier's rank as the `MemoryTier` info; the root then
/// gets `MemoryTiersNr`.
pub fn apply(topo: &mut Topology, tiers: &[Tier], force: bool) {
    let several = tiers.len() > 1;
    let nodes: Vec<ObjId> = topo.level(Depth::NumaNode).to_vec();
    for n in nodes {
        let o = topo.obj_mut(n);
        let Some(os) = o.os_index else { continue };
        let Some((rank, t)) = tiers.iter().enumerate().find(|(_, t)| t.nodeset.is_set(os)) else {
            continue;
        };
        if (o.subtype.is_none() || force)
            && let Some(name) = kind_name(t.kinds)
        {
            o.subtype = Some(name.to_string());
        }
        if several {
            set_info(&mut o.infos, "MemoryTier", rank.to_string());
        }
    }
    if several {
        let root = topo.root();
        set_info(
            &mut topo.obj_mut(root).infos,
            "MemoryTiersNr",
            tiers.len().to_string(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memattrs::MemAttr;
    use crate::synthetic;
    use alloc::vec;

    /// `[numa] pack:2 [numa] [numa] pu:2`: a node for the machine and two
    /// per package, in logical order root node, pack 0's, pack 1's.
    fn machine() -> (Topology, Vec<ObjId>) {
        let t = synthetic::parse("[numa] pack:2 [numa] [numa] pu:2")
            .unwrap()
            .build(Topology::new())
            .unwrap();
        let root = t.root();
        let mut nodes = t.obj(root).memory_children().to_vec();
        for &p in t.obj(root).children() {
            nodes.extend_from_slice(t.obj(p).memory_children());
        }
        (t, nodes)
    }

    fn dax(t: &mut Topology, n: ObjId, v: &str) {
        t.obj_mut(n).infos.push(Info {
            name: "DAXType".into(),
            value: v.into(),
        });
    }

    fn bw(t: &mut Topology, n: ObjId, v: u64) {
        let cpuset = t.obj(n).cpuset.clone().unwrap();
        if !t.memattrs.iter().any(|m| m.name == "Bandwidth") {
            t.memattrs.push(MemAttr::new("Bandwidth", 5));
        }
        let a = t
            .memattrs
            .iter_mut()
            .find(|m| m.name == "Bandwidth")
            .unwrap();
        a.set(n, Some(Initiator::CpuSet(cpuset)), v);
    }

    /// (subtype, MemoryTier) of each node, in `nodes` order.
    fn seen(t: &Topology, nodes: &[ObjId]) -> Vec<(Option<String>, Option<String>)> {
        nodes
            .iter()
            .map(|&n| {
                let o = t.obj(n);
                (o.subtype.clone(), o.info("MemoryTier").map(String::from))
            })
            .collect()
    }

    fn s(x: &str) -> Option<String> {
        Some(x.to_string())
    }

    #[test]
    fn kinds_come_from_dax_types_and_bandwidths() {
        let (mut t, n) = machine();
        dax(&mut t, n[0], "NVM");
        dax(&mut t, n[2], "SPM");
        dax(&mut t, n[4], "SPM");
        let o = Options::default();
        // No bandwidth: unknown, SPM, NVM, in kind order.
        let mut a = t.clone();
        let tiers = guess(&a, &o).unwrap();
        apply(&mut a, &tiers, true);
        assert_eq!(
            seen(&a, &n),
            vec![
                (s("NVM"), s("2")),
                (None, s("0")),
                (s("SPM"), s("1")),
                (None, s("0")),
                (s("SPM"), s("1"))
            ]
        );
        assert_eq!(a.obj(a.root()).info("MemoryTiersNr"), Some("3"));
        // spm_is_hbm and node0_is_dram (node 0 is the first package's first).
        let o2 = Options::from_values(Some("node0_is_dram,spm_is_hbm"), None, None);
        let mut b = t.clone();
        let tiers = guess(&b, &o2).unwrap();
        apply(&mut b, &tiers, true);
        let first = t.obj(n[1]).os_index;
        assert_eq!(
            first,
            Some(0),
            "the synthetic numbering this test relies on"
        );
        assert_eq!(seen(&b, &n)[1], (s("DRAM"), s("1")));
        assert_eq!(seen(&b, &n)[2], (s("HBM"), s("0")));
        // Bandwidths more than twice apart: DRAM and HBM, fastest first.
        for (i, v) in [100, 1000, 10000, 1000, 10000].into_iter().enumerate() {
            bw(&mut t, n[i], v);
        }
        let tiers = guess(&t, &o).unwrap();
        apply(&mut t, &tiers, true);
        assert_eq!(
            seen(&t, &n),
            vec![
                (s("NVM"), s("2")),
                (s("DRAM"), s("1")),
                (s("HBM"), s("0")),
                (s("DRAM"), s("1")),
                (s("HBM"), s("0"))
            ]
        );
    }

    #[test]
    fn a_single_tier_marks_nothing_and_subtypes_stay_unless_forced() {
        let (mut t, n) = machine();
        let tiers = guess(&t, &Options::default()).unwrap();
        assert_eq!(tiers.len(), 1);
        apply(&mut t, &tiers, true);
        assert!(seen(&t, &n).iter().all(|x| *x == (None, None)));
        assert_eq!(t.obj(t.root()).info("MemoryTiersNr"), None);

        t.obj_mut(n[2]).subtype = Some("Mine".into());
        let tiers = forced("0x5=HBM;0x12=SPM;0x8=foo").unwrap();
        assert_eq!(tiers[2].kinds, 0);
        let mut keep = t.clone();
        apply(&mut keep, &tiers, false);
        assert_eq!(keep.obj(n[2]).subtype.as_deref(), Some("Mine"));
        apply(&mut t, &tiers, true);
        let os = t.obj(n[2]).os_index.unwrap();
        let want = tiers.iter().find(|x| x.nodeset.is_set(os)).unwrap().kinds;
        assert_eq!(
            t.obj(n[2]).subtype.as_deref(),
            kind_name(want).or(Some("Mine"))
        );
    }

    #[test]
    fn forced_tiers_that_do_not_parse_are_refused() {
        assert!(forced("0x1=DRAM;0x6=HBM").is_some());
        assert!(forced("0x0=DRAM").is_none());
        assert!(forced("garbage").is_none());
        assert!(forced("0x1=DRAM;").is_none());
        assert!(forced("0x1-=DRAM").is_none());
        for k in [kinds::DRAM, kinds::HBM, kinds::GPU, kinds::SPM, kinds::NVM] {
            assert_eq!(kind_parse(kind_name(k).unwrap()), k);
            assert_eq!(
                kind_parse(kind_name(k | kinds::CXL).unwrap()),
                k | kinds::CXL
            );
        }
        assert_eq!(kind_name(kinds::CXL), Some("CXL-DRAM"));
        assert_eq!(kind_parse("hbm"), kinds::HBM);
        assert_eq!(kind_name(0), None);
    }

    #[test]
    fn options_read_hwlocs_values() {
        let o = Options::from_values(Some("all"), Some("0.5"), Some("x"));
        assert!(o.spm_is_hbm && o.node0_is_dram && !o.guess_none);
        assert_eq!(o.bandwidth_threshold, 0.5);
        assert_eq!(o.latency_threshold, 0.0);
        assert!(Options::from_values(Some("none"), None, None).guess_none);
        assert_eq!(Options::from_values(None, None, None), Options::default());
    }

    #[test]
    fn tiers_without_bandwidth_sort_by_kind_and_never_panic() {
        let mk = |kinds: u64, bw: u64| Tier {
            nodeset: NodeSet::from_index(0),
            kinds,
            bw_min: bw,
            bw_max: bw,
        };
        let mut t = vec![mk(16, 0), mk(0, 10), mk(8, 0), mk(2, 100), mk(1, 0)];
        sort_tiers(&mut t);
        // No tier goes before the one it follows.
        for w in t.windows(2) {
            assert!(!before(&w[1], &w[0]), "{t:?}");
        }
        assert_eq!(t.len(), 5);
        // With bandwidths on both sides the faster goes first.
        let mut u = vec![mk(0, 10), mk(8, 1000)];
        sort_tiers(&mut u);
        assert_eq!(u[0].kinds, 8);
    }
}
