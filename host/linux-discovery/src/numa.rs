//! NUMA nodes: `/sys/devices/system/node` (memory, distances, memory-side
//! caches, HMAT initiators and access attributes), NVIDIA GPU memory nodes,
//! DAX-backed nodes, and the single node of NUMA-less machines.

use wloc_core::distances::{Distances, kind as dist_kind};
use wloc_core::object::{CacheAttr, CacheKind, Info, NumaAttr, PageType};
use wloc_core::topology::Inserted;
use wloc_core::{CpuSet, NodeSet, ObjAttr, ObjId, ObjType, Object};

use crate::ctx::{Arch, Ctx, PendingMemAttr};
use crate::parse;

const NODE: &str = "/sys/devices/system/node";

/// Most NUMA nodes considered (Linux supports 1024); bounds the distance
/// matrix.
const MAX_NODES: usize = 1024;

/// A node being built, before insertion.
pub(crate) struct NodeInfo {
    pub os: u32,
    /// Its gp index, taken when hwloc allocates the node: before any
    /// memory-side cache and any Group its insertion creates.
    gp: u64,
    pub cpuset: CpuSet,
    memory: u64,
    page_types: Vec<PageType>,
    subtype: Option<String>,
    infos: Vec<Info>,
}

impl NodeInfo {
    /// The NUMA node object, to insert.
    pub(crate) fn into_object(self) -> Object {
        let nodeset = NodeSet::from_index(self.os);
        let mut o = Object::new(ObjType::NUMANode, Some(self.os));
        o.gp_index = self.gp;
        // No complete cpuset: as hwloc, the tree gives it (the map may
        // list offline CPUs).
        o.cpuset = Some(self.cpuset);
        o.nodeset = Some(nodeset.clone());
        o.complete_nodeset = Some(nodeset);
        o.subtype = self.subtype;
        o.infos = self.infos;
        o.attr = ObjAttr::Numa(NumaAttr {
            local_memory: self.memory,
            page_types: self.page_types,
        });
        o
    }
}

fn push_info(infos: &mut Vec<Info>, name: &str, value: &str) {
    infos.push(Info {
        name: name.into(),
        value: value.into(),
    });
}

impl Ctx<'_> {
    /// NUMA nodes, or a single node holding the whole machine memory.
    pub(crate) fn look_numa(&mut self, machine_meminfo: Option<&[u8]>) {
        if self.fs.list(NODE).is_some() {
            self.look_sysfsnode();
        }
        if !self.numa_nodes.is_empty() {
            return;
        }
        let mut node = Object::new(ObjType::NUMANode, Some(0));
        let cpuset = self
            .topo
            .obj(self.topo.root())
            .cpuset
            .clone()
            .unwrap_or_default();
        node.cpuset = Some(cpuset.clone());
        node.complete_cpuset = Some(cpuset);
        node.nodeset = Some(NodeSet::from_index(0));
        let memory = machine_meminfo.and_then(parse::meminfo_total).unwrap_or(0);
        let page_types = self.machine_page_types(machine_meminfo, memory);
        node.attr = ObjAttr::Numa(NumaAttr {
            local_memory: memory,
            page_types,
        });
        // hwloc allocates the node before inserting it: a Group its
        // insertion creates (and may later drop) comes after it.
        node.gp_index = self.topo.alloc_gp_index();
        if let Ok(Some(ins)) = self.topo.insert_by_cpuset(node) {
            self.numa_nodes.push((0, ins.id()));
        }
    }

    /// Page types of a NUMA-less machine: the huge pages sysfs counts in
    /// `/sys/kernel/mm/hugepages` (as hwloc, an entry whose count cannot
    /// be read is left out), else `/proc/meminfo`'s one huge page size.
    fn machine_page_types(&self, meminfo: Option<&[u8]>, memory: u64) -> Vec<PageType> {
        const HUGEPAGES: &str = "/sys/kernel/mm/hugepages";
        let mut out = Vec::new();
        let mut remaining = memory;
        if self.fs.list(HUGEPAGES).is_some() {
            let dirs: Vec<String> = self
                .list(HUGEPAGES)
                .into_iter()
                .filter(|n| n.starts_with("hugepages-"))
                .collect();
            let paths: Vec<String> = dirs
                .iter()
                .map(|d| format!("{HUGEPAGES}/{d}/nr_hugepages"))
                .collect();
            for (dir, count) in dirs.iter().zip(self.read_batch(&paths)) {
                let Some(count) = count else { continue };
                let kb = parse::strtoul(&dir["hugepages-".len()..], 0).map_or(0, |(v, _)| v);
                let size = kb.saturating_mul(1024);
                let count = parse::as_u64(&count);
                out.push(PageType { size, count });
                remaining = remaining.saturating_sub(size.saturating_mul(count));
            }
        } else if let Some(m) = meminfo {
            let size = parse::meminfo_field(m, "Hugepagesize:")
                .unwrap_or(0)
                .saturating_mul(1024);
            let count = parse::meminfo_field(m, "HugePages_Total:").unwrap_or(0);
            if size != 0 {
                out.push(PageType { size, count });
                remaining = remaining.saturating_sub(size.saturating_mul(count));
            }
        }
        out.insert(
            0,
            PageType {
                size: self.pagesize,
                count: remaining / self.pagesize.max(1),
            },
        );
        out
    }

    /// The OS indexes of the NUMA nodes sysfs knows.
    fn list_sysfsnode(&self) -> Vec<u32> {
        if let Some(set) = self.read_nodelist(&format!("{NODE}/online")) {
            return set.iter().take(MAX_NODES).collect();
        }
        let mut v: Vec<u32> = self
            .list(NODE)
            .iter()
            .filter_map(|n| n.strip_prefix("node"))
            .filter_map(|n| parse::strtoul(n, 0))
            .filter(|(v, used)| *used > 0 && *v <= parse::MAX_INDEX as u64)
            .map(|(v, _)| v as u32)
            .collect();
        v.sort_unstable();
        v.dedup();
        v.truncate(MAX_NODES);
        v
    }

    fn look_sysfsnode(&mut self) {
        let indexes = self.list_sysfsnode();
        let nbnodes = indexes.len();
        if nbnodes == 0 {
            return;
        }
        self.support.push("discovery.numa");
        self.support.push("discovery.numa_memory");
        self.support.push("discovery.disallowed_numa");
        let mut need_memcaches = self.keeps(ObjType::MemCache);
        let mut need_memattrs = true;
        let mut use_initiators = self.opts.use_numa_distances.is_none_or(|v| v & 4 != 0);
        let mut allow_overlap = self.opts.allow_overlapping_node_cpusets;
        if self.is_fake_numa_uniform != 0 {
            need_memcaches = false;
            need_memattrs = false;
            use_initiators = false;
            allow_overlap = 2;
        }
        let use_distances = self.opts.use_numa_distances.is_none_or(|v| v & 3 != 0);
        let use_distances_for_cpuless = self.opts.use_numa_distances.is_none_or(|v| v & 2 != 0);

        // cpumap and meminfo of every node, in one batch.
        let mut paths = Vec::with_capacity(2 * nbnodes);
        for os in &indexes {
            paths.push(format!("{NODE}/node{os}/cpumap"));
            paths.push(format!("{NODE}/node{os}/meminfo"));
        }
        let res = self.read_batch(&paths);
        // Huge page sizes: the machine's, else the first node's.
        let hugepage_dir = self
            .fs
            .list("/sys/kernel/mm/hugepages")
            .or_else(|| {
                self.fs
                    .list(&format!("{NODE}/node{}/hugepages", indexes[0]))
            })
            .unwrap_or_default();
        let hugepage_sizes: Vec<u64> = hugepage_dir
            .iter()
            .filter_map(|n| n.strip_prefix("hugepages-"))
            .filter_map(|n| parse::strtoul(n, 0).map(|x| x.0))
            .filter(|&kb| kb != 0)
            .take(16)
            .collect();
        let mut nodes: Vec<Option<NodeInfo>> = Vec::with_capacity(nbnodes);
        let mut union = CpuSet::new();
        for (i, &os) in indexes.iter().enumerate() {
            let Some(cpuset) = res[2 * i]
                .as_deref()
                .and_then(parse::cpumask::<wloc_core::bitmap::CpuKind>)
            else {
                nodes.push(None);
                continue;
            };
            if union.intersects(&cpuset) && allow_overlap == 0 {
                nodes.push(None);
                continue;
            }
            union = &union | &cpuset;
            let memory = res[2 * i + 1]
                .as_deref()
                .and_then(parse::meminfo_total)
                .unwrap_or(0);
            nodes.push(Some(NodeInfo {
                os,
                gp: 0,
                cpuset,
                memory,
                page_types: Vec::new(),
                subtype: None,
                infos: Vec::new(),
            }));
        }
        // Nodes whose CPUs could not be read or overlap (not the GPU
        // nodes dropped below): the KNL quirk gives up on those.
        let failed = nodes.iter().any(Option::is_none);
        // hwloc allocates every node in this first loop, before anything
        // else of this phase (even the GPU nodes it drops below).
        for n in nodes.iter_mut().flatten() {
            n.gp = self.topo.alloc_gp_index();
        }
        if !hugepage_sizes.is_empty() {
            let mut paths = Vec::new();
            let mut slots = Vec::new();
            for (i, n) in nodes.iter().enumerate() {
                if let Some(n) = n {
                    for &kb in &hugepage_sizes {
                        paths.push(format!(
                            "{NODE}/node{}/hugepages/hugepages-{kb}kB/nr_hugepages",
                            n.os
                        ));
                        slots.push((i, kb));
                    }
                }
            }
            for ((i, kb), b) in slots.into_iter().zip(self.read_batch(&paths)) {
                if let (Some(n), Some(b)) = (nodes[i].as_mut(), b) {
                    let count = parse::strtoul(&parse::text(&b), 0)
                        .map(|x| x.0)
                        .unwrap_or(0);
                    n.page_types.push(PageType {
                        size: kb.saturating_mul(1024),
                        count,
                    });
                }
            }
        }
        for n in nodes.iter_mut().flatten() {
            let huge: u64 = n
                .page_types
                .iter()
                .map(|p| p.size.saturating_mul(p.count))
                .fold(0, u64::saturating_add);
            let normal = n.memory.saturating_sub(huge) / self.pagesize.max(1);
            n.page_types.insert(
                0,
                PageType {
                    size: self.pagesize,
                    count: normal,
                },
            );
        }

        self.nvidia_gpu_nodes(&mut nodes);
        self.annotate_dax_nodes(&mut nodes);

        let distances = if nbnodes > 1 && use_distances {
            self.read_distances(&indexes)
        } else {
            None
        };

        // A Xeon Phi's nodes go in its clusters instead (without HMAT,
        // memory-side caches or distances, as hwloc).
        if self.knl_quirk_enabled() {
            self.knl_numa_quirk(nodes, distances.as_deref(), failed);
            return;
        }

        // HMAT access directories, listed once.
        let access: Vec<Option<(String, Vec<String>)>> = nodes
            .iter()
            .map(|n| match n {
                Some(n) if use_initiators || need_memattrs => self.node_access(n.os),
                _ => None,
            })
            .collect();

        // Memory trees: nodes with CPUs first, then CPU-less ones (maybe
        // located by HMAT initiators or distances).
        let mut order: Vec<usize> = Vec::with_capacity(nbnodes);
        for i in 0..nbnodes {
            if nodes[i].as_ref().is_some_and(|n| !n.cpuset.is_empty()) {
                if use_initiators {
                    self.read_node_initiators(i, &mut nodes, &access);
                }
                order.push(i);
            }
        }
        let mut pending_attrs: Vec<(usize, &'static str, CpuSet, u64)> = Vec::new();
        for i in 0..nbnodes {
            if nodes[i].is_none() {
                continue;
            }
            if nodes[i].as_ref().is_some_and(|n| n.cpuset.is_empty()) {
                let fixed = use_initiators
                    && self.read_node_initiators(i, &mut nodes, &access)
                    && nodes[i].as_ref().is_some_and(|n| !n.cpuset.is_empty());
                if !fixed
                    && use_distances_for_cpuless
                    && let Some(d) = &distances
                {
                    fixup_cpuless_from_distances(i, nbnodes, &mut nodes, d);
                }
                order.push(i);
            }
            if need_memattrs && let (Some(n), Some((dir, _))) = (&nodes[i], &access[i]) {
                for (name, v) in self.read_node_local_memattrs(dir) {
                    pending_attrs.push((i, name, n.cpuset.clone(), v));
                }
            }
        }

        // Memory-side caches of every node, all read (and given their gp
        // indexes) before the first insertion, as hwloc builds its trees.
        let trees: Vec<(usize, Vec<Object>)> = order
            .into_iter()
            .filter_map(|i| {
                let n = nodes[i].as_ref()?;
                let caches = if need_memcaches {
                    self.read_node_mscaches(n.os, &n.cpuset)
                } else {
                    Vec::new()
                };
                Some((i, caches))
            })
            .collect();

        // Insert memory-side caches and nodes.
        let mut ids: Vec<Option<ObjId>> = vec![None; nbnodes];
        for (i, caches) in trees {
            let Some(n) = nodes[i].take() else {
                continue;
            };
            for cache in caches {
                let _ = self.topo.insert_by_cpuset(cache);
            }
            match self.topo.insert_by_cpuset(n.into_object()) {
                Ok(Some(Inserted::New(id))) | Ok(Some(Inserted::Merged(id))) => {
                    ids[i] = Some(id);
                    if !self.numa_nodes.iter().any(|(_, x)| *x == id) {
                        self.numa_nodes.push((indexes[i], id));
                    }
                }
                _ => {}
            }
        }
        for (i, name, initiator, value) in pending_attrs {
            if let Some(node) = ids[i] {
                self.pending_memattrs.push(PendingMemAttr {
                    name,
                    node,
                    initiator,
                    value,
                });
            }
        }

        // The latency matrix between the nodes that made it into the tree.
        if let Some(values) = distances {
            let keep: Vec<usize> = (0..nbnodes).filter(|&i| ids[i].is_some()).collect();
            if keep.len() >= 2 {
                let objs: Vec<ObjId> = keep.iter().filter_map(|&i| ids[i]).collect();
                let mut v = Vec::with_capacity(keep.len() * keep.len());
                for &i in &keep {
                    for &j in &keep {
                        v.push(values[i * nbnodes + j]);
                    }
                }
                let kind = dist_kind::FROM_OS | dist_kind::MEANS_LATENCY;
                if self.keeps(ObjType::Group) && self.opts.grouping != Some(false) {
                    self.groups_by_distances(&objs, &v, kind);
                }
                if let Some(d) = Distances::new(Some("NUMALatency".into()), kind, objs, v) {
                    self.topo.distances.push(d);
                }
            }
        }
    }

    /// NUMA nodes made of NVIDIA GPU memory: annotated and relocated near
    /// their GPU, or dropped (by default on POWER).
    fn nvidia_gpu_nodes(&self, nodes: &mut [Option<NodeInfo>]) {
        let gpus = match self.fs.list("/proc/driver/nvidia/gpus") {
            Some(g) => g,
            None => return,
        };
        let keep = self
            .opts
            .keep_nvidia_gpu_numa_nodes
            .unwrap_or(self.arch != Arch::Power);
        for gpu in gpus.iter().take(1024) {
            let Some(line) = self.read(&format!("/proc/driver/nvidia/gpus/{gpu}/numa_status"))
            else {
                continue;
            };
            let t = parse::text(&line[..line.len().min(255)]);
            let Some(p) = t.find("Node:") else {
                continue;
            };
            let os = parse::atoi(&t[p + 5..]);
            let Some(slot) = nodes
                .iter_mut()
                .find(|n| n.as_ref().is_some_and(|n| n.os as i64 == os))
            else {
                continue;
            };
            if keep {
                if let Some(n) = slot.as_mut() {
                    n.subtype = Some("GPUMemory".into());
                    push_info(&mut n.infos, "PCIBusID", gpu);
                    n.cpuset = self
                        .read_cpumask(&format!("/sys/bus/pci/devices/{gpu}/local_cpus"))
                        .unwrap_or_default();
                }
            } else {
                *slot = None;
            }
        }
    }

    /// Marks nodes backed by a DAX device in `kmem` mode.
    fn annotate_dax_nodes(&self, nodes: &mut [Option<NodeInfo>]) {
        let Some(devs) = self.fs.list("/sys/bus/dax/devices") else {
            return;
        };
        let mut devs = devs;
        devs.sort();
        for dev in devs.iter().take(4096) {
            if !self.dax_is_kmem(dev) {
                continue;
            }
            let Some(target) = self.read_int(&format!("/sys/bus/dax/devices/{dev}/target_node"))
            else {
                continue;
            };
            if target < 0 {
                continue;
            }
            if let Some(n) = nodes.iter_mut().flatten().find(|n| n.os as i64 == target) {
                push_info(&mut n.infos, "DAXDevice", dev);
                let mut infos = std::mem::take(&mut n.infos);
                self.annotate_dax_parent(&mut infos, dev, None);
                n.infos = infos;
            }
        }
    }

    pub(crate) fn dax_is_kmem(&self, name: &str) -> bool {
        self.fs.exists(&format!("/sys/bus/dax/drivers/kmem/{name}"))
    }

    /// `DAXType` (NVM or SPM), CXL devices and `DAXParent` infos of a DAX
    /// device.  When `osdev_types` is given, NVM adds the storage kind.
    pub(crate) fn annotate_dax_parent(
        &self,
        infos: &mut Vec<Info>,
        name: &str,
        osdev_types: Option<&mut u32>,
    ) {
        let Some(link) = self.fs.read_link(&format!("/sys/bus/dax/devices/{name}")) else {
            return;
        };
        let mut begin = link.as_str();
        while let Some(r) = begin.strip_prefix("../") {
            begin = r;
        }
        if let Some(r) = begin.strip_prefix("devices/") {
            begin = r;
        }
        if let Some(r) = begin.strip_prefix("platform/") {
            begin = r;
        }
        let mut parent = begin.to_string();
        if let Some(pos) = begin.find(name)
            && pos > 0
            && begin.as_bytes()[pos - 1] == b'/'
        {
            let mut end = pos;
            if end > 0 && begin.as_bytes()[end - 1] == b'/' {
                end -= 1;
            }
            parent = begin[..end].to_string();
        }
        let daxtype = if parent.contains("ndbus") {
            if let Some(t) = osdev_types {
                *t |= wloc_core::object::OsDevTypes::STORAGE;
            }
            "NVM"
        } else {
            "SPM"
        };
        push_info(infos, "DAXType", daxtype);
        if let Some(r) = parent.find("/region")
            && let Some((region, used)) = parse::strtoul(&parent[r + 7..], 10)
            && used > 0
            && parent.as_bytes()[r + 7].is_ascii_digit()
        {
            self.annotate_cxl_dax(infos, region);
        }
        push_info(infos, "DAXParent", &parent);
    }

    /// `CXLDevice` (and `CXLDeviceInterleaveWays`) of a DAX region.
    fn annotate_cxl_dax(&self, infos: &mut Vec<Info>, region: u64) {
        let mut bdfs: Vec<String> = Vec::new();
        for i in 0..16u32 {
            let Some(decoder) =
                self.read_line(&format!("/sys/bus/cxl/devices/region{region}/target{i}"))
            else {
                break;
            };
            let decoder = crate::ctx::truncate(&decoder, 19);
            let Some(dpath) = self
                .fs
                .read_link(&format!("/sys/bus/cxl/devices/{decoder}"))
            else {
                break;
            };
            let Some(ep) = dpath.find("endpoint") else {
                break;
            };
            let Some(slash) = dpath[ep..].find('/') else {
                break;
            };
            let endpoint = &dpath[ep..ep + slash];
            let Some(uport) = self
                .fs
                .read_link(&format!("/sys/bus/cxl/devices/{endpoint}/uport"))
            else {
                break;
            };
            let Some(root) = uport.find("/pci") else {
                break;
            };
            // "/pciDDDD:BB/" then BDFs of 12 characters each.
            let mut pos = root + 11;
            if uport.as_bytes().get(pos) != Some(&b'/') {
                break;
            }
            let mut last: Option<&str> = None;
            while pos + 13 <= uport.len() {
                let cand = &uport[pos + 1..pos + 13];
                if parse::pci_busid(cand).is_some() && cand.len() == 12 {
                    last = Some(cand);
                    pos += 13;
                } else {
                    break;
                }
            }
            if let Some(b) = last {
                bdfs.push(b.to_string());
            }
        }
        if !bdfs.is_empty() {
            if bdfs.len() > 1 {
                push_info(infos, "CXLDeviceInterleaveWays", &bdfs.len().to_string());
            }
            push_info(infos, "CXLDevice", &bdfs.join(","));
        }
    }

    /// The `nodeN/distance` rows, as an `n*n` matrix; `None` if any row is
    /// missing or short.
    fn read_distances(&self, indexes: &[u32]) -> Option<Vec<u64>> {
        let n = indexes.len();
        let paths: Vec<String> = indexes
            .iter()
            .map(|os| format!("{NODE}/node{os}/distance"))
            .collect();
        let mut values = Vec::with_capacity(n * n);
        for b in self.read_batch(&paths) {
            let b = b?;
            let t = parse::text(&b[..b.len().min(11 * n)]);
            let mut rest = t.as_str();
            let mut found = 0;
            while let Some((v, used)) = parse::strtoul(rest, 0) {
                values.push(v.min(u32::MAX as u64));
                found += 1;
                if found == n || used >= rest.len() {
                    break;
                }
                rest = &rest[used + 1..];
            }
            if found != n {
                return None;
            }
        }
        Some(values)
    }

    /// The HMAT access directory of a node (`access1` without generic
    /// initiators, else `access0`) and its initiator entries.
    fn node_access(&self, os: u32) -> Option<(String, Vec<String>)> {
        for a in ["access1", "access0"] {
            let dir = format!("{NODE}/node{os}/{a}/initiators");
            if let Some(list) = self.fs.list(&dir) {
                return Some((dir, list));
            }
        }
        None
    }

    /// Adds the CPUs of a node's HMAT initiators to its cpuset; `false`
    /// when the kernel exposes none.
    fn read_node_initiators(
        &self,
        i: usize,
        nodes: &mut [Option<NodeInfo>],
        access: &[Option<(String, Vec<String>)>],
    ) -> bool {
        let Some(os) = nodes[i].as_ref().map(|n| n.os) else {
            return false;
        };
        let Some((_, list)) = &access[i] else {
            return false;
        };
        let mut add = CpuSet::new();
        let mut sorted = list.clone();
        sorted.sort();
        for name in sorted {
            let Some(rest) = name.strip_prefix("node") else {
                continue;
            };
            let Some((ini, _)) = parse::strtoul(rest, 10) else {
                continue;
            };
            if ini == os as u64 {
                continue;
            }
            if let Some(other) = nodes.iter().flatten().find(|n| n.os as u64 == ini) {
                add = &add | &other.cpuset;
            }
        }
        if let Some(n) = nodes[i].as_mut() {
            n.cpuset = &n.cpuset | &add;
        }
        true
    }

    /// Bandwidths and latencies between a node and its initiators.
    fn read_node_local_memattrs(&self, dir: &str) -> Vec<(&'static str, u64)> {
        let files = [
            "read_bandwidth",
            "write_bandwidth",
            "read_latency",
            "write_latency",
        ];
        let paths: Vec<String> = files.iter().map(|f| format!("{dir}/{f}")).collect();
        let v: Vec<u64> = self
            .read_batch(&paths)
            .into_iter()
            .map(|b| {
                b.filter(|b| !b.is_empty())
                    .map(|b| parse::as_uint(&b) as u64)
                    .unwrap_or(0)
            })
            .collect();
        let (rbw, wbw, rlat, wlat) = (v[0], v[1], v[2], v[3]);
        let mut out = Vec::new();
        if rbw > 0 {
            out.push(("ReadBandwidth", rbw));
        }
        if wbw > 0 {
            out.push(("WriteBandwidth", wbw));
        }
        if rbw > 0 && wbw > 0 {
            out.push(("Bandwidth", (rbw + wbw) / 2));
        }
        if rlat > 0 {
            out.push(("ReadLatency", rlat));
        }
        if wlat > 0 {
            out.push(("WriteLatency", wlat));
        }
        if rlat > 0 && wlat > 0 {
            out.push(("Latency", (rlat + wlat) / 2));
        }
        out
    }

    /// Memory-side caches in front of a node, deepest level first, with
    /// their gp indexes taken in the order hwloc allocates them (the
    /// order of the `indexN` entries, taken as name order).
    fn read_node_mscaches(&mut self, os: u32, cpuset: &CpuSet) -> Vec<Object> {
        let dir = format!("{NODE}/node{os}/memory_side_cache");
        let Some(entries) = self.fs.list(&dir) else {
            return Vec::new();
        };
        let mut depths: Vec<u32> = entries
            .iter()
            .filter_map(|e| e.strip_prefix("index"))
            .map(|d| parse::atoi(d).clamp(0, 64) as u32)
            .collect();
        depths.sort_unstable();
        depths.dedup();
        let mut out = Vec::new();
        for depth in depths.into_iter().rev() {
            let p = format!("{dir}/index{depth}");
            let (Some(size), Some(line), Some(indexing)) = (
                self.read_u64(&format!("{p}/size")),
                self.read_uint(&format!("{p}/line_size")),
                self.read_uint(&format!("{p}/indexing")),
            ) else {
                continue;
            };
            let mut c = Object::new(ObjType::MemCache, None);
            c.cpuset = Some(cpuset.clone());
            c.complete_cpuset = Some(cpuset.clone());
            c.nodeset = Some(NodeSet::from_index(os));
            c.complete_nodeset = Some(NodeSet::from_index(os));
            c.attr = ObjAttr::Cache(CacheAttr {
                size,
                depth,
                linesize: line,
                associativity: if indexing == 0 { 1 } else { 0 },
                kind: CacheKind::Unified,
                inclusive: false,
            });
            out.push(c);
        }
        for c in out.iter_mut().rev() {
            c.gp_index = self.topo.alloc_gp_index();
        }
        out
    }
}

/// Locates a CPU-less node near the nodes it is strictly closest to.
fn fixup_cpuless_from_distances(
    i: usize,
    nbnodes: usize,
    nodes: &mut [Option<NodeInfo>],
    distances: &[u64],
) {
    let mut min = u32::MAX as u64;
    let mut nb = 0;
    for j in 0..nbnodes {
        if j == i || nodes[j].is_none() {
            continue;
        }
        let d = distances[i * nbnodes + j];
        if d < min {
            min = d;
            nb = 1;
        } else if d == min {
            nb += 1;
        }
    }
    if min <= distances[i * nbnodes + i] || min == u32::MAX as u64 || nb == nbnodes - 1 {
        return;
    }
    let mut add = CpuSet::new();
    for j in 0..nbnodes {
        if j != i
            && distances[i * nbnodes + j] == min
            && let Some(n) = &nodes[j]
        {
            add = &add | &n.cpuset;
        }
    }
    if let Some(n) = nodes[i].as_mut() {
        n.cpuset = &n.cpuset | &add;
    }
}
