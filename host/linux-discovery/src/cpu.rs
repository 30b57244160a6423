//! Processors: `/sys/devices/system/cpu` (PUs, cores, clusters, dies,
//! packages, s390 books and drawers, caches) and `/proc/cpuinfo` (infos, and
//! the topology itself on kernels without sysfs CPU topology).

use std::collections::HashMap;

use wloc_core::object::{CacheAttr, CacheKind, GroupAttr, Info, group_kind};
use wloc_core::{CpuSet, ObjAttr, ObjType, Object};

use crate::ctx::{Arch, CpuinfoProc, Ctx, MAX_CPUS, truncate};
use crate::parse;

const CPU: &str = "/sys/devices/system/cpu";

/// Most cache `indexN` directories hwloc looks at per CPU.
const MAX_CACHE_INDEX: u32 = 10;

fn add_info(infos: &mut Vec<Info>, name: &str, value: &str) {
    if !value.is_empty() {
        infos.push(Info {
            name: name.into(),
            value: value.into(),
        });
    }
}

fn replace_info(infos: &mut Vec<Info>, name: &str, value: &str) {
    if value.is_empty() {
        return;
    }
    infos.retain(|i| i.name != name);
    add_info(infos, name, value);
}

/// A Group object of a given kind.
pub(crate) fn group(
    os: Option<u32>,
    cpuset: CpuSet,
    subtype: Option<&str>,
    kind: u32,
    subkind: u32,
    dont_merge: bool,
) -> Object {
    let mut g = Object::with_cpuset(ObjType::Group, os, cpuset);
    g.subtype = subtype.map(|s| s.to_string());
    g.attr = ObjAttr::Group(GroupAttr {
        depth: 0,
        kind,
        subkind,
        dont_merge,
    });
    g
}

impl Ctx<'_> {
    /// The sets in `topology/{file}` of the CPUs `cpus[k]` whose `skip[k]`
    /// is false, read in one batch and restricted to `cpuset`, with their
    /// `k`; unreadable or unparsable files are left out.
    fn topology_sets(
        &self,
        cpus: &[u32],
        skip: &[bool],
        file: &str,
        cpuset: &CpuSet,
    ) -> Vec<(usize, CpuSet)> {
        let idx: Vec<usize> = (0..cpus.len()).filter(|&k| !skip[k]).collect();
        let paths: Vec<String> = idx
            .iter()
            .map(|&k| format!("{CPU}/cpu{}/topology/{file}", cpus[k]))
            .collect();
        idx.iter()
            .zip(self.read_batch(&paths))
            .filter_map(|(&k, b)| {
                let set = parse::cpumask(&b?)?;
                Some((k, &set & cpuset))
            })
            .collect()
    }

    /// Reads several files in one batch.
    pub(crate) fn read_batch(&self, paths: &[String]) -> Vec<Option<Vec<u8>>> {
        if paths.is_empty() {
            return Vec::new();
        }
        let refs: Vec<&str> = paths.iter().map(|s| s.as_str()).collect();
        let mut out = self.fs.read_many(&refs);
        out.resize(paths.len(), None);
        out
    }

    // ------------------------------------------------------------ cpuinfo

    fn cpuinfo_field(&self, prefix: &str, value: &str, infos: &mut Vec<Info>, is_global: bool) {
        match self.arch {
            Arch::X86 => match prefix {
                "vendor_id" => add_info(infos, "CPUVendor", value),
                "model name" => add_info(infos, "CPUModel", value),
                "model" => add_info(infos, "CPUModelNumber", value),
                "cpu family" => add_info(infos, "CPUFamilyNumber", value),
                "stepping" => add_info(infos, "CPUStepping", value),
                _ => {}
            },
            Arch::Ia64 => match prefix {
                "vendor" => add_info(infos, "CPUVendor", value),
                "model name" => add_info(infos, "CPUModel", value),
                "model" => add_info(infos, "CPUModelNumber", value),
                "family" => add_info(infos, "CPUFamilyNumber", value),
                _ => {}
            },
            Arch::Arm => {
                let name = match prefix {
                    "Processor" | "model name" if !self.has_sysfs_midr_regs => "CPUModel",
                    "CPU implementer" if !self.has_sysfs_midr_regs => "CPUImplementer",
                    "CPU architecture" if !self.has_sysfs_midr_regs => "CPUArchitecture",
                    "CPU variant" if !self.has_sysfs_midr_regs => "CPUVariant",
                    "CPU part" if !self.has_sysfs_midr_regs => "CPUPart",
                    "CPU revision" if !self.has_sysfs_midr_regs => "CPURevision",
                    "Hardware" => "HardwareName",
                    "Revision" => "HardwareRevision",
                    "Serial" => "HardwareSerial",
                    _ => return,
                };
                add_info(infos, name, value);
            }
            Arch::Power => {
                if prefix == "cpu" {
                    add_info(infos, "CPUModel", value);
                } else if prefix == "platform" {
                    add_info(infos, "PlatformName", value);
                } else if prefix == "model" {
                    replace_info(infos, "PlatformModel", value);
                } else if prefix.eq_ignore_ascii_case("vendor") {
                    add_info(infos, "PlatformVendor", value);
                } else if prefix == "Board ID" {
                    add_info(infos, "PlatformBoardID", value);
                } else if prefix == "Board" || prefix.eq_ignore_ascii_case("Machine") {
                    replace_info(infos, "PlatformModel", value);
                } else if prefix.eq_ignore_ascii_case("Revision") || prefix == "Hardware rev" {
                    let n = if is_global {
                        "PlatformRevision"
                    } else {
                        "CPURevision"
                    };
                    add_info(infos, n, value);
                } else if prefix == "SVR" {
                    add_info(infos, "SystemVersionRegister", value);
                } else if prefix == "PVR" {
                    add_info(infos, "ProcessorVersionRegister", value);
                }
            }
            Arch::Loongarch => match prefix {
                "Model Name" => add_info(infos, "CPUModel", value),
                "CPU Family" => add_info(infos, "CPUFamily", value),
                "CPU Revision" => add_info(infos, "CPURevision", value),
                _ => {}
            },
            Arch::S390 | Arch::Unknown => {
                if prefix == "model name"
                    || prefix == "Processor"
                    || prefix == "chip type"
                    || prefix == "cpu model"
                    || prefix.eq_ignore_ascii_case("cpu")
                {
                    replace_info(infos, "CPUModel", value);
                }
            }
        }
    }

    /// Parses `/proc/cpuinfo` into per-processor infos and global ones
    /// (lines outside any `processor` section).
    pub(crate) fn parse_cpuinfo(&self) -> (Vec<CpuinfoProc>, Vec<Info>) {
        let mut procs: Vec<CpuinfoProc> = Vec::new();
        let mut global = Vec::new();
        let Some(t) = self.read("/proc/cpuinfo") else {
            return (procs, global);
        };
        let t = parse::text(&t);
        let mut cur: Option<usize> = None;
        for raw in t.split('\n') {
            // hwloc reads lines into 128-byte buffers and ignores the rest.
            let line = truncate(raw, 127);
            if line.is_empty() {
                cur = None;
                continue;
            }
            let Some(colon) = line.find(':') else {
                continue;
            };
            if !line.as_bytes()[0].is_ascii_alphabetic() {
                continue;
            }
            let prefix = line[..colon].trim_end_matches([' ', '\t']);
            let value = line[colon + 1..].trim_start_matches([' ', '\t']);
            if prefix == "processor" {
                match parse::strtoul(value, 0) {
                    Some((v, _)) if v <= parse::MAX_INDEX as u64 => {
                        if procs.len() >= MAX_CPUS {
                            break;
                        }
                        procs.push(CpuinfoProc {
                            pproc: v as u32,
                            ..Default::default()
                        });
                        cur = Some(procs.len() - 1);
                    }
                    _ => return (Vec::new(), Vec::new()),
                }
                continue;
            }
            match cur {
                Some(c) => {
                    let p = &mut procs[c];
                    if prefix == "physical id" {
                        p.physical_id = parse::strtoul(value, 0).map(|x| x.0 as u32);
                    } else if prefix == "core id" {
                        p.core_id = parse::strtoul(value, 0).map(|x| x.0 as u32);
                    }
                    let mut infos = std::mem::take(&mut p.infos);
                    self.cpuinfo_field(prefix, value, &mut infos, false);
                    procs[c].infos = infos;
                }
                None => self.cpuinfo_field(prefix, value, &mut global, true),
            }
        }
        (procs, global)
    }

    /// Inserts PUs (in increasing order) into a topology that holds no other
    /// CPU object yet: directly below the root, which keeps large flat
    /// machines linear instead of quadratic.
    pub(crate) fn insert_pus(&mut self, pus: &[u32]) {
        let root = self.topo.root();
        let flat = self.topo.obj(root).children().is_empty() && pus.windows(2).all(|w| w[0] < w[1]);
        for &i in pus {
            let o = Object::with_cpuset(ObjType::PU, Some(i), CpuSet::from_index(i));
            if flat {
                // PUs directly below the root: never refused.
                let _ = self.topo.insert_by_parent(root, o);
            } else {
                let _ = self.topo.insert_by_cpuset(o);
            }
        }
    }

    /// Topology from `/proc/cpuinfo` alone (PUs, packages from `physical
    /// id`, cores from `core id`), for kernels without sysfs topology.
    pub(crate) fn look_cpuinfo(&mut self, mut procs: Vec<CpuinfoProc>) {
        if procs.is_empty() {
            self.fallback_pu_level();
            return;
        }
        self.support.push("discovery.pu");
        let mut pus: Vec<u32> = procs.iter().map(|p| p.pproc).collect();
        pus.sort_unstable();
        pus.dedup();
        self.insert_pus(&pus);
        if procs.iter().all(|p| p.physical_id.is_some()) && self.keeps(ObjType::Package) {
            let mut order: Vec<u32> = Vec::new();
            let mut sets: HashMap<u32, (CpuSet, Vec<Info>)> = HashMap::new();
            for p in procs.iter_mut() {
                let id = p.physical_id.unwrap_or(0);
                let e = sets.entry(id).or_insert_with(|| {
                    order.push(id);
                    (CpuSet::new(), std::mem::take(&mut p.infos))
                });
                e.0.set(p.pproc);
            }
            for id in order {
                if let Some((set, infos)) = sets.remove(&id) {
                    let mut o = Object::with_cpuset(ObjType::Package, Some(id), set);
                    o.infos = infos;
                    let _ = self.topo.insert_by_cpuset(o);
                }
            }
        }
        if procs.iter().all(|p| p.core_id.is_some()) && self.keeps(ObjType::Core) {
            let mut order: Vec<(Option<u32>, u32)> = Vec::new();
            let mut sets: HashMap<(Option<u32>, u32), CpuSet> = HashMap::new();
            for p in &procs {
                let key = (p.physical_id, p.core_id.unwrap_or(0));
                sets.entry(key)
                    .or_insert_with(|| {
                        order.push(key);
                        CpuSet::new()
                    })
                    .set(p.pproc);
            }
            for key in order {
                if let Some(set) = sets.remove(&key) {
                    let _ = self.topo.insert_by_cpuset(Object::with_cpuset(
                        ObjType::Core,
                        Some(key.1),
                        set,
                    ));
                }
            }
        }
    }

    // ------------------------------------------------------------ sysfs

    /// CPU topology from sysfs; `false` when `/sys/devices/system/cpu`
    /// cannot be listed.
    pub(crate) fn look_sysfscpu(&mut self, old: bool, procs: Vec<CpuinfoProc>) -> bool {
        let online = self.read_cpulist(&format!("{CPU}/online"));
        let Some(entries) = self.fs.list(CPU) else {
            return false;
        };
        let mut all: Vec<u32> = entries
            .iter()
            .filter_map(|n| n.strip_prefix("cpu"))
            .filter_map(|n| parse::strtoul(n, 0))
            .filter(|(v, used)| *used > 0 && *v <= parse::MAX_INDEX as u64)
            .map(|(v, _)| v as u32)
            .collect();
        all.sort_unstable();
        all.dedup();
        all.truncate(MAX_CPUS);
        {
            let root = self.topo.root_mut();
            let cc = root.complete_cpuset.get_or_insert_with(CpuSet::new);
            for &c in &all {
                cc.set(c);
            }
        }
        let mut cpus: Vec<u32> = match &online {
            Some(on) => all.iter().copied().filter(|&c| on.is_set(c)).collect(),
            None => {
                let paths: Vec<String> =
                    all.iter().map(|c| format!("{CPU}/cpu{c}/online")).collect();
                let res = self.read_batch(&paths);
                all.iter()
                    .zip(res)
                    .filter(|(_, r)| match r {
                        Some(b) if !b.is_empty() => {
                            parse::atoi(&parse::text(&b[..b.len().min(1)])) != 0
                        }
                        _ => true,
                    })
                    .map(|(c, _)| *c)
                    .collect()
            }
        };

        // Core sets, read for every CPU; a failed read tells whether the
        // topology directory exists at all.
        let core_file = if old { "thread_siblings" } else { "core_cpus" };
        let paths: Vec<String> = cpus
            .iter()
            .map(|c| format!("{CPU}/cpu{c}/topology/{core_file}"))
            .collect();
        let raw_core_bytes = self.read_batch(&paths);
        let mut raw_core: HashMap<u32, CpuSet> = HashMap::new();
        let mut keep = Vec::with_capacity(cpus.len());
        for (c, b) in cpus.iter().zip(raw_core_bytes) {
            match b {
                Some(b) => {
                    if let Some(s) = parse::cpumask(&b) {
                        raw_core.insert(*c, s);
                    }
                    keep.push(*c);
                }
                None => {
                    if self.fs.exists(&format!("{CPU}/cpu{c}/topology")) {
                        keep.push(*c);
                    }
                }
            }
        }
        cpus = keep;
        let mut cpuset = CpuSet::new();
        for &c in &cpus {
            cpuset.set(c);
        }
        self.support.push("discovery.pu");
        self.support.push("discovery.disallowed_pu");
        let n = cpus.len();
        // The kernel exposes the same topology files for every CPU: files
        // missing for the first one are not looked for in the others.
        let topo_files: Option<std::collections::HashSet<String>> = cpus
            .first()
            .and_then(|c| self.fs.list(&format!("{CPU}/cpu{c}/topology")))
            .map(|v| v.into_iter().collect());
        let has = |f: &str| topo_files.as_ref().is_none_or(|s| s.contains(f));

        // Cores.
        let mut notfirst_core = vec![false; n];
        let mut notfirst_cluster = vec![false; n];
        let mut notfirst_die = vec![false; n];
        let mut cores: Vec<Option<CpuSet>> = vec![None; n];
        let mut core_ids: HashMap<u32, Option<u32>> = HashMap::new();
        let mut thread_with_coreid: i32 = if self.is_amd_with_cu { -1 } else { 0 };
        let read_id = |ctx: &Self, cpu: u32, file: &str| -> Option<u32> {
            ctx.read(&format!("{CPU}/cpu{cpu}/topology/{file}"))
                .filter(|b| !b.is_empty())
                .and_then(|b| parse::os_index(&b))
        };
        if self.keeps(ObjType::Core) {
            for (k, &i) in cpus.iter().enumerate() {
                let Some(raw) = raw_core.get(&i) else {
                    continue;
                };
                let mut coreset = raw & &cpuset;
                if coreset.weight().unwrap_or(0) > 1 && thread_with_coreid == -1 {
                    let mine = read_id(self, i, "core_id");
                    core_ids.insert(i, mine);
                    let sib = match coreset.first() {
                        Some(f) if f == i => coreset.next_set(Some(i)),
                        f => f,
                    };
                    let theirs = sib.and_then(|s| read_id(self, s, "core_id"));
                    thread_with_coreid = i32::from(theirs != mine);
                }
                if coreset.first() != Some(i) {
                    notfirst_core[k] = true;
                    notfirst_cluster[k] = true;
                    notfirst_die[k] = true;
                }
                if !notfirst_core[k] || thread_with_coreid != 0 {
                    if thread_with_coreid != 0 {
                        coreset = CpuSet::from_index(i);
                    }
                    cores[k] = Some(coreset);
                }
            }
        }

        // Clusters.
        let mut clusters: Vec<Option<CpuSet>> = vec![None; n];
        if self.keeps(ObjType::Group) && has("cluster_cpus") {
            for (k, set) in self.topology_sets(&cpus, &notfirst_core, "cluster_cpus", &cpuset) {
                if set.weight() == Some(1) {
                    continue;
                }
                if set.first() != Some(cpus[k]) {
                    notfirst_cluster[k] = true;
                    notfirst_die[k] = true;
                    continue;
                }
                clusters[k] = Some(set);
            }
        }

        // Dies.
        let mut dies: Vec<Option<CpuSet>> = vec![None; n];
        if self.keeps(ObjType::Die) && has("die_cpus") {
            for (k, set) in self.topology_sets(&cpus, &notfirst_cluster, "die_cpus", &cpuset) {
                if set.weight() == Some(1) {
                } else if set.first() != Some(cpus[k]) {
                    notfirst_die[k] = true;
                } else {
                    if clusters[k].as_ref() == Some(&set) {
                        clusters[k] = None;
                    }
                    dies[k] = Some(set);
                }
            }
        }

        // Packages.
        let mut packages: Vec<Option<CpuSet>> = vec![None; n];
        let pkg_file = if old { "core_siblings" } else { "package_cpus" };
        if self.keeps(ObjType::Package) && has(pkg_file) {
            for (k, set) in self.topology_sets(&cpus, &notfirst_die, pkg_file, &cpuset) {
                if clusters[k].as_ref() == Some(&set) {
                    clusters[k] = None;
                }
                // A die as large as its package is still made (and numbered):
                // the core merges a Die level identical to the Package level,
                // as hwloc 2.14 does.
                if set.first() == Some(cpus[k]) {
                    packages[k] = Some(set);
                }
            }
        }

        // Identifiers of the objects that will be created, in one batch.
        let mut id_paths: Vec<String> = Vec::new();
        let mut id_slots: Vec<(usize, usize)> = Vec::new();
        for k in 0..n {
            let c = cpus[k];
            let wanted = [
                (cores[k].is_some() && !core_ids.contains_key(&c), "core_id"),
                (clusters[k].is_some(), "cluster_id"),
                (dies[k].is_some(), "die_id"),
                (packages[k].is_some(), "physical_package_id"),
            ];
            for (slot, (w, file)) in wanted.iter().enumerate() {
                if *w && has(file) {
                    id_paths.push(format!("{CPU}/cpu{c}/topology/{file}"));
                    id_slots.push((k, slot));
                }
            }
        }
        let mut ids: Vec<[Option<u32>; 4]> = vec![[None; 4]; n];
        for (&(k, slot), b) in id_slots.iter().zip(self.read_batch(&id_paths)) {
            ids[k][slot] = b
                .filter(|b| !b.is_empty())
                .and_then(|b| parse::os_index(&b));
        }
        for (k, c) in cpus.iter().enumerate() {
            if let Some(id) = core_ids.get(c) {
                ids[k][0] = *id;
            }
        }

        let mut procs_by_pu: HashMap<u32, usize> = HashMap::new();
        for (j, p) in procs.iter().enumerate() {
            procs_by_pu.entry(p.pproc).or_insert(j);
        }
        let mut procs = procs;
        let caches = self.sysfs_caches(&cpus, &cpuset, &raw_core, old);
        let dont_merge = self.opts.dont_merge_cluster_groups;
        let s390 = self.arch == Arch::S390 && self.keeps(ObjType::Group) && has("book_siblings");
        let flat = caches.is_empty()
            && !s390
            && cores.iter().all(|c| c.is_none())
            && packages.iter().all(|c| c.is_none())
            && clusters.iter().all(|c| c.is_none())
            && dies.iter().all(|c| c.is_none());
        if flat {
            self.insert_pus(&cpus);
            return true;
        }

        for (k, &i) in cpus.iter().enumerate() {
            if let Some(set) = cores[k].take() {
                let _ =
                    self.topo
                        .insert_by_cpuset(Object::with_cpuset(ObjType::Core, ids[k][0], set));
            }
            if let Some(set) = packages[k].take() {
                let mut p = Object::with_cpuset(ObjType::Package, ids[k][3], set);
                if let Some(&j) = procs_by_pu.get(&i) {
                    p.infos = std::mem::take(&mut procs[j].infos);
                }
                let _ = self.topo.insert_by_cpuset(p);
            }
            if let Some(set) = clusters[k].take() {
                let g = group(
                    ids[k][1],
                    set,
                    Some("Cluster"),
                    group_kind::LINUX_CLUSTER,
                    0,
                    dont_merge,
                );
                let _ = self.topo.insert_by_cpuset(g);
            }
            if let Some(set) = dies[k].take() {
                let _ =
                    self.topo
                        .insert_by_cpuset(Object::with_cpuset(ObjType::Die, ids[k][2], set));
            }
            if s390 {
                self.s390_books(i, &cpuset);
            }
            let _ = self.topo.insert_by_cpuset(Object::with_cpuset(
                ObjType::PU,
                Some(i),
                CpuSet::from_index(i),
            ));
            for c in caches.iter().filter(|c| c.0 == i) {
                let _ = self.topo.insert_by_cpuset(c.1.clone());
            }
        }
        true
    }

    fn s390_books(&mut self, i: u32, cpuset: &CpuSet) {
        let topo = format!("{CPU}/cpu{i}/topology");
        let Some(bookset) = self.read_cpumask(&format!("{topo}/book_siblings")) else {
            return;
        };
        let bookset = &bookset & cpuset;
        if bookset.first() == Some(i)
            && let Some(id) = self.read_int(&format!("{topo}/book_id"))
        {
            let os = u32::try_from(id).ok();
            let g = group(os, bookset, Some("Book"), group_kind::S390_BOOK, 0, false);
            let _ = self.topo.insert_by_cpuset(g);
        }
        let Some(drawerset) = self.read_cpumask(&format!("{topo}/drawer_siblings")) else {
            return;
        };
        let drawerset = &drawerset & cpuset;
        if drawerset.first() == Some(i)
            && let Some(id) = self.read_int(&format!("{topo}/drawer_id"))
        {
            let os = u32::try_from(id).ok();
            let g = group(
                os,
                drawerset,
                Some("Drawer"),
                group_kind::S390_BOOK,
                1,
                false,
            );
            let _ = self.topo.insert_by_cpuset(g);
        }
    }

    /// Caches of every CPU, as (first PU, cache object).
    fn sysfs_caches(
        &self,
        cpus: &[u32],
        cpuset: &CpuSet,
        raw_core: &HashMap<u32, CpuSet>,
        old: bool,
    ) -> Vec<(u32, Object)> {
        let mut out = Vec::new();
        let any_cache = ObjType::CPU_CACHES.iter().any(|&t| self.keeps(t));
        if !any_cache || cpus.is_empty() {
            return out;
        }
        // Every CPU's `index0` to `index9`, as hwloc reads them: a CPU may
        // list caches under indexes that the first and last CPUs lack (a
        // shared cache listed under some of its CPUs only).  One batch;
        // missing folders cost one failed open each.
        let todo: Vec<(u32, u32)> = cpus
            .iter()
            .flat_map(|&c| (0..MAX_CACHE_INDEX).map(move |j| (c, j)))
            .collect();
        let paths: Vec<String> = todo
            .iter()
            .map(|(c, j)| format!("{CPU}/cpu{c}/cache/index{j}/shared_cpu_map"))
            .collect();
        let mut maps: Vec<(u32, u32, CpuSet)> = todo
            .iter()
            .zip(self.read_batch(&paths))
            .filter_map(|(&(c, j), b)| {
                let set = parse::cpumask::<wloc_core::bitmap::CpuKind>(&b?)?;
                Some((c, j, set))
            })
            .collect();
        maps.sort_by_key(|m| (m.0, m.1));
        let mut all: Vec<(u32, u32, CpuSet)> = Vec::with_capacity(maps.len());
        for (c, j, mut set) in maps {
            if set.is_empty() {
                // ia64 reports empty L3 and L2i maps: use the core instead.
                if let Some(core) = raw_core.get(&c) {
                    set = core.clone();
                } else if !old {
                    // Nothing better known.
                }
            }
            all.push((c, j, &set & cpuset));
        }
        // A cache is described by the first CPU of its set, as hwloc does:
        // an entry of another CPU adds nothing, even when the first CPU does
        // not list that cache (hwloc then has no such cache either).
        let firsts: Vec<(u32, u32, CpuSet)> = all
            .into_iter()
            .filter(|(c, _, set)| set.first() == Some(*c))
            .collect();
        const FILES: [&str; 7] = [
            "level",
            "type",
            "id",
            "size",
            "coherency_line_size",
            "number_of_sets",
            "physical_line_partition",
        ];
        let paths: Vec<String> = firsts
            .iter()
            .flat_map(|(c, j, _)| {
                FILES
                    .iter()
                    .map(move |f| format!("{CPU}/cpu{c}/cache/index{j}/{f}"))
            })
            .collect();
        let mut res = self.read_batch(&paths).into_iter();
        for (c, _j, set) in firsts {
            let vals: Vec<Option<Vec<u8>>> =
                (0..FILES.len()).map(|_| res.next().flatten()).collect();
            let nonempty = |k: usize| vals[k].as_ref().filter(|b| !b.is_empty());
            let Some(depth) = nonempty(0).map(|b| parse::as_uint(b)) else {
                continue;
            };
            let kind = match nonempty(1).map(|b| parse::text(&b[..b.len().min(19)])) {
                Some(t) if t.starts_with("Data") => CacheKind::Data,
                Some(t) if t.starts_with("Instruction") => CacheKind::Instruction,
                _ => CacheKind::Unified,
            };
            let id = nonempty(2).map(|b| parse::as_uint(b));
            let Some(otype) = ObjType::cache_for(depth, kind) else {
                continue;
            };
            if !self.keeps(otype) {
                continue;
            }
            let kb = nonempty(3).map(|b| parse::as_uint(b)).unwrap_or(0) as u64;
            // A KNL's L3 (its MCDRAM cache) has no size here: the NUMA
            // quirk adds it.
            if kb == 0 && otype == ObjType::L3Cache && self.is_knl {
                continue;
            }
            let linesize = nonempty(4).map(|b| parse::as_uint(b)).unwrap_or(0);
            let sets = nonempty(5).map(|b| parse::as_uint(b)).unwrap_or(0) as u64;
            let lines_per_tag = nonempty(6).map(|b| parse::as_uint(b)).unwrap_or(1) as u64;
            let associativity = if linesize == 0 || lines_per_tag == 0 || sets == 0 || sets == 1 {
                0
            } else {
                ((kb << 10) / linesize as u64 / lines_per_tag / sets).min(i32::MAX as u64) as i32
            };
            let mut o = Object::with_cpuset(otype, id.filter(|&v| v != u32::MAX), set);
            o.attr = ObjAttr::Cache(CacheAttr {
                size: kb << 10,
                depth,
                linesize,
                associativity,
                kind,
                inclusive: false,
            });
            out.push((c, o));
        }
        out
    }
}
