//! Intel Xeon Phi (KNL, KNM) NUMA quirk, as hwloc's Linux backend applies
//! it: the cluster mode (All2All, Hemisphere, Quadrant, SNC2, SNC4) and
//! memory mode (Cache, Flat, Hybrid25, Hybrid50) come from the file
//! `hwloc-dump-hwdata` wrote (`knl_memoryside_cache`), what it lacks is
//! guessed from the NUMA nodes and their distances; then each sub-NUMA
//! cluster becomes a Group holding its DDR node (subtype `DRAM`) and its
//! MCDRAM node (`MCDRAM`), with bandwidths telling them apart, and the
//! MCDRAM used as a cache becomes an L3 (subtype `MemorySideCache`) or a
//! memory-side cache object (`HWLOC_KNL_MSCACHE_L3=0`).

use wloc_core::object::{CacheAttr, CacheKind, Info, group_kind};
use wloc_core::{CpuSet, NodeSet, ObjAttr, ObjId, ObjType, Object};

use crate::ctx::{Ctx, PendingMemAttr};
use crate::numa::NodeInfo;

const GIB: i64 = 1 << 30;

/// What is known of the machine's modes and MCDRAM cache (hwloc's
/// `knl_hwdata`): empty modes and negative values are unknown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Hwdata {
    pub memory_mode: String,
    pub cluster_mode: String,
    /// Bytes; the other cache fields count only when this is positive.
    pub cache_size: i64,
    pub associativity: i64,
    pub inclusiveness: i64,
    pub line_size: i64,
}

impl Default for Hwdata {
    fn default() -> Self {
        Hwdata {
            memory_mode: String::new(),
            cluster_mode: String::new(),
            cache_size: -1,
            associativity: -1,
            inclusiveness: -1,
            line_size: -1,
        }
    }
}

/// The integer at the start of `s` after blanks, as `sscanf("%lld")`
/// reads it (`None` without digits: the field keeps its value).
fn scan_int(s: &str) -> Option<i64> {
    let t = s.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let end = digits
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    if end == 0 {
        return None;
    }
    let v = digits[..end].parse::<i64>().unwrap_or(i64::MAX);
    Some(if neg { -v } else { v })
}

/// A mode is kept to 31 bytes, as hwloc's 32-byte buffers keep it.
fn mode(v: &str) -> String {
    let mut end = v.len().min(31);
    while !v.is_char_boundary(end) {
        end -= 1;
    }
    v[..end].to_string()
}

/// Reads a `knl_memoryside_cache` file (its first 511 bytes, as hwloc):
/// `version: N`, then `name: value` lines, each counted only when it ends
/// with a newline; cache fields from version 1, modes from version 2.
/// `None` when the header is not `version: <int>`.  Cache fields are all
/// forgotten (size -1) when one of them is missing.
pub(crate) fn parse_hwdata(content: &[u8], hw: &mut Hwdata) -> Option<()> {
    let content = &content[..content.len().min(511)];
    let end = content
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(content.len());
    let text = String::from_utf8_lossy(&content[..end]);
    let version = scan_int(text.strip_prefix("version:")?)?;
    let mut rest = text.as_ref();
    while let Some(nl) = rest.find('\n') {
        let line = &rest[..nl];
        rest = &rest[nl + 1..];
        if version >= 1 {
            let int = |name: &str| line.strip_prefix(name).and_then(scan_int);
            if let Some(v) = int("cache_size:") {
                hw.cache_size = v;
            } else if let Some(v) = int("line_size:") {
                hw.line_size = v;
            } else if let Some(v) = int("inclusiveness:") {
                hw.inclusiveness = v;
            } else if let Some(v) = int("associativity:") {
                hw.associativity = v;
            }
        }
        if version >= 2 {
            if let Some(v) = line.strip_prefix("cluster_mode: ") {
                hw.cluster_mode = mode(v);
            } else if let Some(v) = line.strip_prefix("memory_mode: ") {
                hw.memory_mode = mode(v);
            }
        }
    }
    if hw.cache_size == -1 || hw.line_size == -1 || hw.associativity == -1 || hw.inclusiveness == -1
    {
        hw.cache_size = -1;
    }
    Some(())
}

/// The distinct values of a distance matrix with how often each occurs
/// (the diagonal once per node, each pair once), by increasing count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Summary {
    pub values: Vec<(u32, u64)>,
}

/// Checks the matrix is one of a KNL (1, 2, 4 or 8 nodes; 10 on the
/// diagonal; symmetric; larger elsewhere; at most 4 values, 2 for 2 nodes,
/// 2 or 4 for 4 nodes, 4 for 8 nodes) and summarizes it.  `Err` names what
/// is wrong.
pub(crate) fn summarize(n: usize, distances: Option<&[u64]>) -> Result<Summary, String> {
    let mut values: Vec<(u32, u64)> = vec![(n as u32, 10)];
    if n == 1 {
        return Ok(Summary { values });
    }
    if n != 2 && n != 4 && n != 8 {
        return Err(format!("{n} NUMA nodes instead of 2, 4 or 8"));
    }
    let d = match distances {
        Some(d) if d.len() == n * n => d,
        _ => return Err("no distance matrix".into()),
    };
    for i in 0..n {
        if d[i * n + i] != 10 {
            return Err("the distance matrix has no 10 on the diagonal".into());
        }
        for j in i + 1..n {
            let v = d[i * n + j];
            if v != d[j * n + i] {
                return Err("the distance matrix is not symmetric".into());
            }
            if v <= 10 {
                return Err("the distance matrix has values <= 10".into());
            }
            if let Some(e) = values.iter_mut().find(|(_, x)| *x == v) {
                e.0 += 1;
            } else if values.len() == 4 {
                return Err("the distance matrix has more than 4 values".into());
            } else {
                values.push((1, v));
            }
        }
    }
    values.sort_by_key(|&(count, _)| count);
    let ok = match n {
        2 => values.len() == 2,
        4 => values.len() == 2 || values.len() == 4,
        _ => values.len() == 4,
    };
    if !ok {
        return Err(format!(
            "a distance matrix of {n} nodes with {} values",
            values.len()
        ));
    }
    Ok(Summary { values })
}

/// The DDR and MCDRAM nodes (indexes in the matrix) of each cluster in
/// SNC2 (4 nodes) or SNC4 (8 nodes) Flat/Hybrid mode: DDR 0 is node 0,
/// the other DDRs are at the DDR-to-DDR distance from it, and each MCDRAM
/// at the DDR-to-local-MCDRAM distance from its DDR.
pub(crate) fn identify(d: &[u64], s: &Summary) -> Option<(Vec<usize>, Vec<usize>)> {
    let counts: Vec<u32> = s.values.iter().map(|v| v.0).collect();
    let (n, clusters, ddr_value, mcdram_value) = match counts.as_slice() {
        [1, 2, 3, 4] => (4, 2, s.values[0].1, s.values[1].1),
        [4, 6, 8, 18] => (8, 4, s.values[1].1, s.values[0].1),
        _ => return None,
    };
    if d.len() != n * n {
        return None;
    }
    let mut ddr = vec![0];
    ddr.extend((0..n).filter(|&i| d[i] == ddr_value).take(clusters - 1));
    if ddr.len() != clusters {
        return None;
    }
    let mut mcdram = vec![0; clusters];
    for i in 1..n {
        if let Some(c) = (0..clusters).find(|&c| d[ddr[c] * n + i] == mcdram_value) {
            mcdram[c] = i;
        }
    }
    if mcdram.contains(&0) {
        return None;
    }
    Some((ddr, mcdram))
}

/// Guesses the modes and cache hwloc-dump-hwdata did not give, from the
/// node count, whether the second node has CPUs (an MCDRAM has none) and
/// the distance summary, as hwloc does: Quadrant when the cluster mode is
/// unknown, Flat when the memory mode is, and the 16 GiB of MCDRAM divided
/// among clusters.
pub(crate) fn guess(hw: &mut Hwdata, n: usize, node1_has_cpus: bool, s: &Summary) {
    hw.associativity = 1;
    hw.inclusiveness = 1;
    hw.line_size = 64;
    if hw.cache_size > 0 && !hw.cluster_mode.is_empty() && !hw.memory_mode.is_empty() {
        return;
    }
    let set = |f: &mut String, v: &str| {
        if f.is_empty() {
            *f = v.to_string();
        }
    };
    // Flat/Hybrid: the mode from the cache size, or the size from the mode.
    let flat_or_hybrid = |hw: &mut Hwdata, quarter: i64| {
        if hw.memory_mode.is_empty() {
            hw.memory_mode = if hw.cache_size == quarter {
                "Hybrid25"
            } else if hw.cache_size == 2 * quarter {
                "Hybrid50"
            } else {
                "Flat"
            }
            .into();
        } else if hw.cache_size <= 0 {
            if hw.memory_mode == "Hybrid25" {
                hw.cache_size = quarter;
            } else if hw.memory_mode == "Hybrid50" {
                hw.cache_size = 2 * quarter;
            }
        }
    };
    let cache = |hw: &mut Hwdata, size: i64| {
        if hw.cache_size <= 0 {
            hw.cache_size = size;
        }
    };
    match n {
        1 => {
            set(&mut hw.cluster_mode, "Quadrant");
            set(&mut hw.memory_mode, "Cache");
            cache(hw, 16 * GIB);
        }
        2 => {
            if hw.memory_mode == "Cache" || hw.cluster_mode == "SNC2" || node1_has_cpus {
                set(&mut hw.cluster_mode, "SNC2");
                set(&mut hw.memory_mode, "Cache");
                cache(hw, 8 * GIB);
            } else {
                set(&mut hw.cluster_mode, "Quadrant");
                flat_or_hybrid(hw, 4 * GIB);
            }
        }
        4 => {
            if hw.cluster_mode == "SNC2" || s.values.len() == 4 {
                set(&mut hw.cluster_mode, "SNC2");
                flat_or_hybrid(hw, 2 * GIB);
            } else {
                set(&mut hw.cluster_mode, "SNC4");
                set(&mut hw.memory_mode, "Cache");
                cache(hw, 4 * GIB);
            }
        }
        8 => {
            set(&mut hw.cluster_mode, "SNC4");
            flat_or_hybrid(hw, GIB);
        }
        _ => {}
    }
}

/// How the nodes pair in clusters: (DDR, MCDRAM) indexes, and the number
/// of sub-NUMA clusters (which divides bandwidths).  `Err` says why the
/// modes do not fit the nodes.
type Layout = (Vec<(usize, Option<usize>)>, u64);

fn layout(hw: &mut Hwdata, n: usize, d: Option<&[u64]>, s: &Summary) -> Result<Layout, String> {
    let modes = format!("{}-{}", hw.cluster_mode, hw.memory_mode);
    if !["All2All", "Hemisphere", "Quadrant", "SNC2", "SNC4"].contains(&hw.cluster_mode.as_str()) {
        return Err(format!("no usable cluster mode ({})", hw.cluster_mode));
    }
    if !["Cache", "Flat", "Hybrid25", "Hybrid50"].contains(&hw.memory_mode.as_str()) {
        return Err(format!("no usable memory mode ({})", hw.memory_mode));
    }
    let cache = hw.memory_mode == "Cache";
    let snc: u64 = match hw.cluster_mode.as_str() {
        "SNC2" => 2,
        "SNC4" => 4,
        _ => 1,
    };
    let want = if cache { snc } else { 2 * snc } as usize;
    if n != want {
        return Err(format!("{n} NUMA nodes instead of {want} in mode {modes}"));
    }
    if hw.memory_mode == "Flat" {
        hw.cache_size = 0;
    }
    let pairs = if cache {
        (0..n).map(|i| (i, None)).collect()
    } else if snc == 1 {
        vec![(0, Some(1))]
    } else {
        let (ddr, mcdram) = d
            .and_then(|d| identify(d, s))
            .ok_or_else(|| format!("unexpected distance layout for mode {modes}"))?;
        ddr.into_iter().zip(mcdram.into_iter().map(Some)).collect()
    };
    Ok((pairs, snc))
}

fn add_info(infos: &mut Vec<Info>, name: &str, value: &str) {
    infos.push(Info {
        name: name.into(),
        value: value.into(),
    });
}

impl Ctx<'_> {
    /// Whether the KNL quirk applies: a Xeon Phi (Intel family 6, model 87
    /// or 133) unless `HWLOC_KNL_NUMA_QUIRK=0`.
    pub(crate) fn knl_quirk_enabled(&self) -> bool {
        self.is_knl && self.opts.knl_numa_quirk != Some(false)
    }

    /// Inserts the NUMA nodes of a KNL with its clusters and MCDRAM, as
    /// hwloc's `hwloc_linux_knl_numa_quirk`; when the modes cannot be
    /// known or do not fit (or `failed`: a node could not be read), the
    /// nodes are inserted as they are.  Returns the inserted node of each
    /// slot.
    pub(crate) fn knl_numa_quirk(
        &mut self,
        mut nodes: Vec<Option<NodeInfo>>,
        distances: Option<&[u64]>,
        failed: bool,
    ) -> Vec<Option<ObjId>> {
        let n = nodes.len();
        let mut ids = vec![None; n];
        let plan = if failed || nodes.iter().any(Option::is_none) {
            Err("a NUMA node is missing".to_string())
        } else {
            summarize(n, distances).and_then(|s| {
                let mut hw = Hwdata::default();
                if self.opts.knl_hdh_fallback != Some(1) {
                    let dir = self
                        .opts
                        .dumped_hwdata_dir
                        .as_deref()
                        .unwrap_or("/var/run/hwloc");
                    if let Some(b) = self.read(&format!("{dir}/knl_memoryside_cache")) {
                        // A bad header leaves everything to the guess.
                        let _ = parse_hwdata(&b, &mut hw);
                    }
                }
                if self.opts.knl_hdh_fallback != Some(0) {
                    let node1_cpus = nodes
                        .get(1)
                        .and_then(Option::as_ref)
                        .is_some_and(|x| !x.cpuset.is_empty());
                    guess(&mut hw, n, node1_cpus, &s);
                }
                let l = layout(&mut hw, n, distances, &s)?;
                Ok((hw, l))
            })
        };
        let (mut hw, (pairs, snc)) = match plan {
            Ok(p) => p,
            Err(_) => {
                for (i, node) in nodes.into_iter().enumerate() {
                    if let Some(node) = node {
                        ids[i] = self.insert_node(node.into_object());
                    }
                }
                return ids;
            }
        };
        let msc_type = if self.opts.knl_mscache_l3 == Some(false) {
            ObjType::MemCache
        } else {
            ObjType::L3Cache
        };
        if !self.keeps(msc_type) {
            hw.cache_size = 0;
        }
        let root = self.topo.root_mut();
        add_info(&mut root.infos, "ClusterMode", &hw.cluster_mode);
        add_info(&mut root.infos, "MemoryMode", &hw.memory_mode);
        for (d, m) in pairs {
            let Some(ddr) = nodes[d].take() else { continue };
            let mcdram = m.and_then(|m| nodes[m].take());
            let (ddr_id, mcdram_id) = self.knl_add_cluster(ddr, mcdram, &hw, msc_type, snc);
            ids[d] = ddr_id;
            if let Some(m) = m {
                ids[m] = mcdram_id;
            }
        }
        ids
    }

    fn insert_node(&mut self, o: Object) -> Option<ObjId> {
        let os = o.os_index?;
        let id = self.topo.insert_by_cpuset(o).ok().flatten()?.id();
        if !self.numa_nodes.iter().any(|(_, x)| *x == id) {
            self.numa_nodes.push((os, id));
        }
        Some(id)
    }

    /// One cluster: its DDR node, its MCDRAM node (none in Cache mode) in
    /// a `Cluster` Group, their bandwidths, and the MCDRAM cache in front
    /// of the DDR when there is one.
    fn knl_add_cluster(
        &mut self,
        ddr: NodeInfo,
        mcdram: Option<NodeInfo>,
        hw: &Hwdata,
        msc_type: ObjType,
        snc: u64,
    ) -> (Option<ObjId>, Option<ObjId>) {
        let cpuset: CpuSet = ddr.cpuset.clone();
        let ddr_nodeset = NodeSet::from_index(ddr.os);
        let mut ddr_o = ddr.into_object();
        let mut mcdram_o = None;
        if let Some(m) = mcdram {
            let mut m = m.into_object();
            m.subtype = Some("MCDRAM".into());
            // Its memory is local to the DDR's CPUs.
            m.cpuset = Some(cpuset.clone());
            ddr_o.subtype = Some("DRAM".into());
            let mut g = Object::with_cpuset(ObjType::Group, None, cpuset.clone());
            let mut ns = ddr_nodeset.clone();
            if let Some(mn) = &m.nodeset {
                ns = &ns | mn;
            }
            g.complete_nodeset = Some(ns.clone());
            g.nodeset = Some(ns);
            g.subtype = Some("Cluster".into());
            if let ObjAttr::Group(ga) = &mut g.attr {
                ga.kind = group_kind::INTEL_KNL_SUBNUMA_CLUSTER;
            }
            // Filtered out or not, the nodes go where their CPUs are:
            // the cluster's when it exists.
            let _ = self.topo.insert_by_cpuset(g);
            mcdram_o = Some(m);
        }
        let ddr_id = self.insert_node(ddr_o);
        let mcdram_id = mcdram_o.and_then(|m| self.insert_node(m));
        if let (Some(d), Some(m)) = (ddr_id, mcdram_id) {
            for (node, value) in [(d, 90000 / snc), (m, 360000 / snc)] {
                self.pending_memattrs.push(PendingMemAttr {
                    name: "Bandwidth",
                    node,
                    initiator: cpuset.clone(),
                    value,
                });
            }
        }
        if ddr_id.is_some() && hw.cache_size > 0 {
            let mut c = Object::with_cpuset(msc_type, None, cpuset);
            c.attr = ObjAttr::Cache(CacheAttr {
                size: hw.cache_size as u64,
                depth: if msc_type == ObjType::MemCache { 1 } else { 3 },
                linesize: u32::try_from(hw.line_size).unwrap_or(0),
                associativity: i32::try_from(hw.associativity).unwrap_or(0),
                kind: CacheKind::Unified,
                inclusive: hw.inclusiveness != 0,
            });
            add_info(
                &mut c.infos,
                "Inclusive",
                if hw.inclusiveness != 0 { "1" } else { "0" },
            );
            if msc_type == ObjType::MemCache {
                // In front of the DDR only.
                c.complete_nodeset = Some(ddr_nodeset.clone());
                c.nodeset = Some(ddr_nodeset);
            } else {
                c.subtype = Some("MemorySideCache".into());
            }
            let _ = self.topo.insert_by_cpuset(c);
        }
        (ddr_id, mcdram_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SNC4-Flat matrix of a recorded KNL: DDRs 0-3, MCDRAMs 7, 4, 5, 6.
    const SNC4: [u64; 64] = [
        10, 21, 21, 21, 41, 41, 41, 31, //
        21, 10, 21, 21, 31, 41, 41, 41, //
        21, 21, 10, 21, 41, 31, 41, 41, //
        21, 21, 21, 10, 41, 41, 31, 41, //
        41, 31, 41, 41, 10, 41, 41, 41, //
        41, 41, 31, 41, 41, 10, 41, 41, //
        41, 41, 41, 31, 41, 41, 10, 41, //
        31, 41, 41, 41, 41, 41, 41, 10,
    ];

    #[test]
    fn hwdata_files_of_each_version() {
        let mut hw = Hwdata::default();
        let v2 = b"version: 2\ncache_size: 2147483648\nassociativity: 1\ninclusiveness: 1\nline_size: 64\ncluster_mode: SNC4\nmemory_mode: Hybrid50\n";
        assert_eq!(parse_hwdata(v2, &mut hw), Some(()));
        assert_eq!(
            hw,
            Hwdata {
                memory_mode: "Hybrid50".into(),
                cluster_mode: "SNC4".into(),
                cache_size: 2 * GIB,
                associativity: 1,
                inclusiveness: 1,
                line_size: 64,
            }
        );
        // Version 1 has no modes; a line without its newline is not read.
        let mut hw = Hwdata::default();
        let v1 = b"version: 1\ncache_size: 100\nassociativity: 1\ninclusiveness: 0\nline_size: 64\ncluster_mode: SNC2\nmemory_mode: Flat";
        parse_hwdata(v1, &mut hw).unwrap();
        assert_eq!((hw.cache_size, hw.inclusiveness), (100, 0));
        assert!(hw.cluster_mode.is_empty() && hw.memory_mode.is_empty());
        // A missing cache field forgets the cache.
        let mut hw = Hwdata::default();
        parse_hwdata(
            b"version: 2\ncache_size: 100\nmemory_mode: Cache\n",
            &mut hw,
        )
        .unwrap();
        assert_eq!((hw.cache_size, hw.memory_mode.as_str()), (-1, "Cache"));
        // No header: refused, nothing read.
        let mut hw = Hwdata::default();
        assert_eq!(parse_hwdata(b"cache_size: 5\n", &mut hw), None);
        assert_eq!(hw, Hwdata::default());
        assert_eq!(parse_hwdata(b"version: x\n", &mut hw), None);
        // Garbage never panics, modes stay short.
        let long = format!("version: 2\ncluster_mode: {}\n", "é".repeat(40));
        parse_hwdata(long.as_bytes(), &mut hw).unwrap();
        assert!(hw.cluster_mode.len() <= 31);
        parse_hwdata(&[0xff; 600], &mut hw);
    }

    #[test]
    fn distance_matrices_are_checked_and_clusters_found() {
        let s = summarize(8, Some(&SNC4)).unwrap();
        assert_eq!(s.values, vec![(4, 31), (6, 21), (8, 10), (18, 41)]);
        let (ddr, mcdram) = identify(&SNC4, &s).unwrap();
        assert_eq!(ddr, vec![0, 1, 2, 3]);
        assert_eq!(mcdram, vec![7, 4, 5, 6]);
        // SNC2-Flat: 4 nodes, 4 values.
        let snc2 = [
            10, 21, 31, 41, 21, 10, 41, 31, 31, 41, 10, 41, 41, 31, 41, 10,
        ];
        let s2 = summarize(4, Some(&snc2)).unwrap();
        assert_eq!(identify(&snc2, &s2).unwrap(), (vec![0, 1], vec![2, 3]));
        // Not a KNL's matrix.
        assert!(summarize(3, Some(&[10; 9])).is_err());
        assert!(summarize(2, None).is_err());
        assert!(summarize(2, Some(&[10, 20, 21, 10])).is_err());
        assert!(summarize(2, Some(&[10, 9, 9, 10])).is_err());
        assert!(summarize(2, Some(&[11, 20, 20, 10])).is_err());
        assert!(summarize(8, Some(&[10; 64])).is_err());
        assert!(summarize(1, None).is_ok());
    }

    #[test]
    fn missing_modes_are_guessed_from_the_nodes() {
        let one = summarize(1, None).unwrap();
        let mut hw = Hwdata::default();
        guess(&mut hw, 1, false, &one);
        assert_eq!(
            (
                hw.cluster_mode.as_str(),
                hw.memory_mode.as_str(),
                hw.cache_size
            ),
            ("Quadrant", "Cache", 16 * GIB)
        );
        // Two nodes, the second CPU-less: Quadrant-Flat, or Hybrid from
        // the cache size.
        let two = summarize(2, Some(&[10, 31, 31, 10])).unwrap();
        let mut hw = Hwdata::default();
        guess(&mut hw, 2, false, &two);
        assert_eq!(
            (hw.cluster_mode.as_str(), hw.memory_mode.as_str()),
            ("Quadrant", "Flat")
        );
        let mut hw = Hwdata {
            cache_size: 8 * GIB,
            ..Hwdata::default()
        };
        guess(&mut hw, 2, false, &two);
        assert_eq!(hw.memory_mode, "Hybrid50");
        // The second with CPUs: SNC2-Cache.
        let mut hw = Hwdata::default();
        guess(&mut hw, 2, true, &two);
        assert_eq!(
            (
                hw.cluster_mode.as_str(),
                hw.memory_mode.as_str(),
                hw.cache_size
            ),
            ("SNC2", "Cache", 8 * GIB)
        );
        // Eight nodes with a known mode: the cache size follows it.
        let s = summarize(8, Some(&SNC4)).unwrap();
        let mut hw = Hwdata {
            memory_mode: "Hybrid25".into(),
            ..Hwdata::default()
        };
        guess(&mut hw, 8, false, &s);
        assert_eq!((hw.cluster_mode.as_str(), hw.cache_size), ("SNC4", GIB));
        // Modes that do not fit the node count are refused.
        let mut hw = Hwdata {
            cluster_mode: "SNC4".into(),
            memory_mode: "Cache".into(),
            ..Hwdata::default()
        };
        assert!(layout(&mut hw, 8, Some(&SNC4), &s).is_err());
        hw.memory_mode = "Flat".into();
        let (pairs, snc) = layout(&mut hw, 8, Some(&SNC4), &s).unwrap();
        assert_eq!(snc, 4);
        assert_eq!(pairs[0], (0, Some(7)));
        assert_eq!(hw.cache_size, 0);
        hw.cluster_mode = "Octant".into();
        assert!(layout(&mut hw, 8, Some(&SNC4), &s).is_err());
    }
}
