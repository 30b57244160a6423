//! The discovery context and the order of its phases.

use wloc_core::object::Info;
use wloc_core::{CpuSet, NodeSet, ObjId, ObjType, Topology, TypeFilter};

use crate::parse;
use crate::{DiscoveryError, FsAccess, Options};

/// Most CPUs considered (Linux supports at most 8192 today).
pub(crate) const MAX_CPUS: usize = 16384;

/// Where a range of PCI buses is attached.
#[derive(Clone, Debug)]
pub(crate) struct Locality {
    pub domain: u32,
    pub bus_min: u8,
    pub bus_max: u8,
    pub parent: ObjId,
    pub cpuset: CpuSet,
}

/// A locality forced by `HWLOC_PCI_LOCALITY`.
#[derive(Clone, Debug)]
pub(crate) struct Forced {
    pub domain: u32,
    pub bus_first: u32,
    pub bus_last: u32,
    pub cpuset: CpuSet,
}

/// The architectures whose quirks hwloc knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arch {
    X86,
    Ia64,
    Arm,
    Power,
    S390,
    Loongarch,
    Unknown,
}

/// What `uname` would say, as far as it is known.
#[derive(Clone, Debug, Default)]
pub(crate) struct Uname {
    pub sysname: String,
    pub release: String,
    pub version: String,
    pub nodename: String,
    pub machine: String,
}

impl Uname {
    /// Whether the kernel release is known and at least `major.minor`
    /// (`"6.1.0-13-amd64"` is 6.1).
    pub fn release_at_least(&self, major: u32, minor: u32) -> bool {
        let mut parts = self.release.split(|c: char| !c.is_ascii_digit());
        let mut next = || parts.next().and_then(|p| p.parse::<u32>().ok());
        match (next(), next()) {
            (Some(a), Some(b)) => (a, b) >= (major, minor),
            _ => false,
        }
    }
}

/// A value of a memory attribute found in sysfs, kept by OS index until the
/// nodes are in the tree.
#[derive(Clone, Debug)]
pub(crate) struct PendingMemAttr {
    pub name: &'static str,
    pub node: ObjId,
    pub initiator: CpuSet,
    pub value: u64,
}

/// One processor of `/proc/cpuinfo`.
#[derive(Clone, Debug, Default)]
pub(crate) struct CpuinfoProc {
    pub pproc: u32,
    pub infos: Vec<Info>,
    pub physical_id: Option<u32>,
    pub core_id: Option<u32>,
}

pub(crate) struct Ctx<'a> {
    pub fs: &'a dyn FsAccess,
    pub opts: &'a Options,
    pub topo: Topology,
    pub arch: Arch,
    pub uname: Uname,
    pub pagesize: u64,
    pub fallback_nbprocessors: i64,
    pub is_amd_with_cu: bool,
    /// An Intel Xeon Phi (KNL or KNM), whose NUMA nodes need a quirk.
    pub is_knl: bool,
    pub is_fake_numa_uniform: i64,
    pub cpukinds_enabled: i32,
    /// ARM: sysfs gives each CPU's MIDR register; then the CPU infos come
    /// from it (per kind) and not from cpuinfo, whichever way kinds are made.
    pub has_sysfs_midr_regs: bool,
    pub cpukinds_use_midr: bool,
    pub cpukinds_use_cppc: i32,
    pub cpukinds_maxfreq_enabled: i32,
    pub cpukinds_maxfreq_adjust: u32,
    /// Topology-wide infos gathered early (SoC), added at the end.
    pub global_infos: Vec<Info>,
    /// Infos for every package, from ARM MIDR registers common to all kinds.
    pub cpukinds_pkg_infos: Vec<Info>,
    /// NUMA nodes in the tree, by OS index.
    pub numa_nodes: Vec<(u32, ObjId)>,
    pub pending_memattrs: Vec<PendingMemAttr>,
    /// PCI bus localities: (domain, first bus, last bus, parent object).
    pub pci_localities: Vec<Locality>,
    pub pci_forced: Vec<Forced>,
    pub grouping_next_subkind: u32,
    /// `discovery.*` support flags found (hwloc's `topology->support`).
    pub support: Vec<&'static str>,
}

impl<'a> Ctx<'a> {
    pub fn new(fs: &'a dyn FsAccess, opts: &'a Options, topo: Topology) -> Self {
        Ctx {
            fs,
            opts,
            topo,
            arch: Arch::Unknown,
            uname: Uname::default(),
            pagesize: 4096,
            fallback_nbprocessors: -1,
            is_amd_with_cu: false,
            is_knl: false,
            is_fake_numa_uniform: 0,
            cpukinds_enabled: -1,
            has_sysfs_midr_regs: false,
            cpukinds_use_midr: false,
            cpukinds_use_cppc: -1,
            cpukinds_maxfreq_enabled: -1,
            cpukinds_maxfreq_adjust: 10,
            global_infos: Vec::new(),
            cpukinds_pkg_infos: Vec::new(),
            numa_nodes: Vec::new(),
            pending_memattrs: Vec::new(),
            pci_localities: Vec::new(),
            pci_forced: Vec::new(),
            grouping_next_subkind: 0,
            support: Vec::new(),
        }
    }

    // ------------------------------------------------------------ file helpers

    pub fn read(&self, path: &str) -> Option<Vec<u8>> {
        self.fs.read(path)
    }

    /// The file as text, `None` when missing or empty (hwloc treats empty
    /// reads as failures).
    pub fn read_text(&self, path: &str) -> Option<String> {
        let b = self.fs.read(path)?;
        if b.is_empty() {
            return None;
        }
        Some(parse::text(&b))
    }

    /// The first line of a non-empty file.
    pub fn read_line(&self, path: &str) -> Option<String> {
        let b = self.fs.read(path)?;
        if b.is_empty() {
            return None;
        }
        Some(parse::first_line(&b))
    }

    pub fn read_uint(&self, path: &str) -> Option<u32> {
        let b = self.fs.read(path)?;
        (!b.is_empty()).then(|| parse::as_uint(&b))
    }

    pub fn read_u64(&self, path: &str) -> Option<u64> {
        let b = self.fs.read(path)?;
        (!b.is_empty()).then(|| parse::as_u64(&b))
    }

    pub fn read_int(&self, path: &str) -> Option<i64> {
        let b = self.fs.read(path)?;
        (!b.is_empty()).then(|| parse::as_int(&b))
    }

    pub fn read_cpumask(&self, path: &str) -> Option<CpuSet> {
        parse::cpumask(&self.fs.read(path)?)
    }

    pub fn read_cpulist(&self, path: &str) -> Option<CpuSet> {
        parse::cpulist(&self.fs.read(path)?)
    }

    pub fn read_nodelist(&self, path: &str) -> Option<NodeSet> {
        parse::cpulist(&self.fs.read(path)?)
    }

    pub fn list(&self, dir: &str) -> Vec<String> {
        self.fs.list(dir).unwrap_or_default()
    }

    /// The entries of the sysfs folder `dir` in the order `readdir` gives
    /// them, where that order is known: on the running machine's sysfs
    /// (64-bit kernel 4.8 or later) by kernfs name hash; elsewhere
    /// (recordings, whose order depends on the file system they were
    /// unpacked on, and folders of network namespaces, whose hash is
    /// salted with the namespace's address) by name.  hwloc enumerates
    /// some folders in `readdir` order and gives its objects their gp
    /// indexes in that order.
    pub fn readdir_order(&self, dir: &str, names: &mut [String]) {
        names.sort();
        let m = self.uname.machine.as_str();
        let is_64bit = m.contains("64") || m == "s390x";
        let namespaced = dir.trim_end_matches('/') == "/sys/class/net";
        if self.opts.this_system && !namespaced && is_64bit && self.uname.release_at_least(4, 8) {
            names.sort_by_cached_key(|n| parse::kernfs_name_hash(n));
        }
    }

    pub fn keeps(&self, t: ObjType) -> bool {
        self.topo.keeps_type(t)
    }

    pub fn filter(&self, t: ObjType) -> TypeFilter {
        self.topo.type_filter(t)
    }

    pub fn numa_node(&self, os: u32) -> Option<ObjId> {
        self.numa_nodes
            .iter()
            .find(|(o, _)| *o == os)
            .map(|(_, id)| *id)
    }

    // ------------------------------------------------------------ phases

    pub fn run(mut self) -> Result<Topology, DiscoveryError> {
        self.gather_system_info();
        self.check_kernel_cmdline();
        self.soc_info();
        self.setup_cpukinds();

        self.look_cpu()?;
        // hwloc adds these at the end of its first phase; the PCI locality
        // quirks look at DMI infos.
        self.add_global_infos();

        let io_wanted = self.keeps(ObjType::Bridge) || self.keeps(ObjType::PCIDevice);
        if io_wanted {
            self.look_pci();
            self.look_pci_slots();
        }
        if self.cpukinds_enabled != 0 {
            self.annotate_packages_with_cpukinds();
        }
        if self.keeps(ObjType::OSDevice) {
            self.look_osdevs();
        }
        if self.keeps(ObjType::Misc) {
            self.dmi_memory_modules();
        }
        self.commit_memattrs();

        for name in [
            "discovery.pu",
            "discovery.numa",
            "discovery.numa_memory",
            "discovery.disallowed_pu",
            "discovery.disallowed_numa",
            "discovery.cpukind_efficiency",
        ] {
            if self.support.contains(&name) && !self.topo.support.iter().any(|s| s == name) {
                self.topo.support.push(name.to_string());
            }
        }
        // A cgroup that allows nothing that exists (a stale or foreign
        // recording) is ignored rather than leaving an empty topology.
        if !self
            .topo
            .allowed_cpuset
            .intersects(self.topo.complete_cpuset())
        {
            self.topo.allowed_cpuset = CpuSet::full();
        }
        if !self
            .topo
            .allowed_nodeset
            .intersects(self.topo.complete_nodeset())
        {
            self.topo.allowed_nodeset = NodeSet::full();
        }
        if self.opts.sort_os_devices {
            self.topo.sort_os_devices_by_name();
        }
        self.topo.finish()?;
        self.build_memtiers();
        Ok(self.topo)
    }

    /// `/proc/hwloc-nofile-info` of recordings, or the running kernel's names.
    fn gather_system_info(&mut self) {
        if self.opts.this_system {
            let k = |f: &str| {
                self.read_line(&format!("/proc/sys/kernel/{f}"))
                    .unwrap_or_default()
            };
            self.uname = Uname {
                sysname: k("ostype"),
                release: k("osrelease"),
                version: k("version"),
                nodename: k("hostname"),
                machine: self.opts.machine.clone().unwrap_or_default(),
            };
        } else if let Some(t) = self.read_text("/proc/hwloc-nofile-info") {
            for line in t.lines() {
                if let Some(v) = line.strip_prefix("OSName: ") {
                    self.uname.sysname = v.to_string();
                } else if let Some(v) = line.strip_prefix("OSRelease: ") {
                    self.uname.release = v.to_string();
                } else if let Some(v) = line.strip_prefix("OSVersion: ") {
                    self.uname.version = v.to_string();
                } else if let Some(v) = line.strip_prefix("HostName: ") {
                    self.uname.nodename = v.to_string();
                } else if let Some(v) = line.strip_prefix("Architecture: ") {
                    self.uname.machine = v.to_string();
                } else if let Some(v) = line.strip_prefix("FallbackNbProcessors: ") {
                    self.fallback_nbprocessors = parse::atoi(v);
                } else if let Some(v) = line.strip_prefix("PageSize: ") {
                    let p = parse::strtoul(v, 10).map(|x| x.0).unwrap_or(0);
                    if p.is_power_of_two() && p <= 1 << 30 {
                        self.pagesize = p;
                    }
                }
            }
        }
        let m = self.uname.machine.as_str();
        self.arch = if m == "x86_64"
            || (m.len() == 4 && m.starts_with('i') && m.ends_with("86"))
            || m == "k1om"
        {
            Arch::X86
        } else if m == "aarch64" || m.starts_with("arm") {
            Arch::Arm
        } else if m.starts_with("ppc") || m.starts_with("power") {
            Arch::Power
        } else if m.starts_with("s390") {
            Arch::S390
        } else if m.starts_with("loongarch") {
            Arch::Loongarch
        } else if m == "ia64" {
            Arch::Ia64
        } else {
            Arch::Unknown
        };
    }

    /// Fake NUMA (`numa=fake=`) disables what relies on firmware tables.
    fn check_kernel_cmdline(&mut self) {
        let Some(line) = self.read_line("/proc/cmdline") else {
            return;
        };
        if let Some(i) = line.find("numa=fake=") {
            let rest = &line[i + 10..];
            match parse::strtoul(rest, 10) {
                Some((w, used)) if rest[used..].starts_with('U') => {
                    self.is_fake_numa_uniform = w.min(i64::MAX as u64) as i64;
                }
                _ => self.is_fake_numa_uniform = -1,
            }
        }
    }

    fn soc_info(&mut self) {
        let mut socs: Vec<u32> = self
            .list("/sys/bus/soc/devices")
            .iter()
            .filter_map(|n| n.strip_prefix("soc"))
            .filter_map(|n| parse::strtoul(n, 10).map(|x| x.0 as u32))
            .collect();
        socs.sort_unstable();
        socs.truncate(64);
        for i in socs {
            for (file, suffix) in [
                ("soc_id", "ID"),
                ("family", "Family"),
                ("revision", "Revision"),
            ] {
                if let Some(v) = self.read_line(&format!("/sys/bus/soc/devices/soc{i}/{file}"))
                    && !v.is_empty()
                {
                    self.global_infos.push(Info {
                        name: format!("SoC{i}{suffix}"),
                        value: truncate(&v, 63),
                    });
                }
            }
        }
    }

    fn setup_cpukinds(&mut self) {
        if self.arch == Arch::Arm
            && self
                .fs
                .exists("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1")
        {
            self.has_sysfs_midr_regs = true;
            self.cpukinds_use_midr = true;
        }
        // hwloc 2.14's variable first, then 3.0's (which also takes the
        // frequency settings).
        if let Some(env) = self
            .opts
            .linux_cpukinds
            .as_ref()
            .or(self.opts.cpukinds.as_ref())
        {
            if env == "none" || env == "0" {
                self.cpukinds_enabled = 0;
            } else {
                self.cpukinds_enabled = 1;
                let num = |key: &str| env.find(key).map(|i| parse::atoi(&env[i + key.len()..]));
                if let Some(v) = num("cppc=") {
                    self.cpukinds_use_cppc = v.clamp(-1, 1) as i32;
                }
                if let Some(v) = num("midr=") {
                    self.cpukinds_use_midr = v != 0;
                }
                if let Some(v) = num("maxfreq=") {
                    self.cpukinds_maxfreq_enabled = v.clamp(-1, 1) as i32;
                }
                if let Some(v) = num("freqadjust=") {
                    self.cpukinds_maxfreq_adjust = v.clamp(0, 1000) as u32;
                }
            }
        }
    }

    /// The CPU phase: cpuinfo, cgroups, CPU topology, CPU kinds, memory.
    fn look_cpu(&mut self) -> Result<(), DiscoveryError> {
        let old_filenames = self.check_sysfs_cpu_path();
        let (procs, global) = self.parse_cpuinfo();
        if self.arch == Arch::X86
            && let Some(p0) = procs.first()
        {
            let get = |n: &str| {
                p0.infos
                    .iter()
                    .find(|i| i.name == n)
                    .map(|i| i.value.clone())
            };
            let model = get("CPUModelNumber");
            self.is_knl = get("CPUVendor").as_deref() == Some("GenuineIntel")
                && get("CPUFamilyNumber").as_deref() == Some("6")
                && matches!(model.as_deref(), Some("87" | "133"));
            if get("CPUVendor").as_deref() == Some("AuthenticAMD") {
                let fam = get("CPUFamilyNumber").unwrap_or_default();
                if fam == "21" || fam == "22" {
                    self.is_amd_with_cu = true;
                } else if parse::atoi(&fam) < 0x1a && self.cpukinds_enabled == -1 {
                    // AMD processors before Zen 5 (family 0x1a) are never
                    // hybrid: hwloc 2.14 does not look for CPU kinds there
                    // unless asked (CPPC reads are slow on Zen 2/3).
                    self.cpukinds_enabled = 0;
                }
            }
        }
        let cgroup_name = self.allowed_resources();

        self.topo.root_mut().infos.extend(global);
        match old_filenames {
            Some(old) => {
                if !self.look_sysfscpu(old, procs) {
                    self.fallback_pu_level();
                }
            }
            None => {
                if procs.is_empty() && self.fs.list("/sys/devices/system/cpu").is_none() {
                    return Err(DiscoveryError::NoCpus(
                        "neither /sys/devices/system/cpu nor /proc/cpuinfo is readable".into(),
                    ));
                }
                if procs.is_empty() && self.fallback_nbprocessors < 1 {
                    // Count the online cpuN entries instead.
                    let online = self.read_cpulist("/sys/devices/system/cpu/online");
                    let n = self
                        .list("/sys/devices/system/cpu")
                        .iter()
                        .filter_map(|e| e.strip_prefix("cpu"))
                        .filter_map(|e| parse::strtoul(e, 10))
                        .filter(|(v, used)| {
                            *used > 0 && online.as_ref().is_none_or(|o| o.is_set(*v as u32))
                        })
                        .count();
                    if n > 0 {
                        self.fallback_nbprocessors = n.min(MAX_CPUS) as i64;
                    }
                }
                self.look_cpuinfo(procs)
            }
        }
        if self.topo.complete_cpuset().is_empty() {
            return Err(DiscoveryError::NoCpus(
                "neither /sys/devices/system/cpu nor /proc/cpuinfo describe a processor".into(),
            ));
        }
        if self.cpukinds_enabled != 0 {
            self.look_cpukinds();
        }
        let machine_memory = self.read("/proc/meminfo");
        self.look_numa(machine_memory.as_deref());
        if let Some(name) = cgroup_name {
            self.topo.infos.push(Info {
                name: "LinuxCgroup".into(),
                value: name,
            });
        }
        Ok(())
    }

    /// `Some(false)` for current sysfs topology file names, `Some(true)` for
    /// the old ones (`thread_siblings`, `core_siblings`), `None` without
    /// sysfs CPU topology.
    fn check_sysfs_cpu_path(&self) -> Option<bool> {
        let probe = |cpu: u32| -> Option<bool> {
            let base = format!("/sys/devices/system/cpu/cpu{cpu}/topology");
            if self.fs.exists(&format!("{base}/package_cpus"))
                || self.fs.exists(&format!("{base}/core_cpus"))
            {
                return Some(false);
            }
            if self.fs.exists(&format!("{base}/core_siblings"))
                || self.fs.exists(&format!("{base}/thread_siblings"))
            {
                return Some(true);
            }
            None
        };
        if let Some(r) = probe(0) {
            return Some(r);
        }
        let first = self.read_uint("/sys/devices/system/cpu/online")?;
        probe(first)
    }

    /// A single PU, or as many as `/proc/hwloc-nofile-info` says.
    pub fn fallback_pu_level(&mut self) {
        if self.fallback_nbprocessors >= 1 {
            self.support.push("discovery.pu");
        }
        let n = self.fallback_nbprocessors.clamp(1, MAX_CPUS as i64) as u32;
        let pus: Vec<u32> = (0..n).collect();
        self.insert_pus(&pus);
    }

    /// Topology-wide infos: SoC, DMI, backend, OS and page sizes.
    fn add_global_infos(&mut self) {
        let soc = std::mem::take(&mut self.global_infos);
        self.topo.infos.extend(soc);
        self.dmi_id_infos();
        self.topo.infos.push(Info {
            name: "Backend".into(),
            value: "Linux".into(),
        });
        let u = self.uname.clone();
        for (name, v) in [
            ("OSName", &u.sysname),
            ("OSRelease", &u.release),
            ("OSVersion", &u.version),
            ("HostName", &u.nodename),
            ("Architecture", &u.machine),
        ] {
            if !v.is_empty() {
                self.topo.infos.push(Info {
                    name: name.into(),
                    value: v.clone(),
                });
            }
        }
        if self.fs.list("/sys/kernel/mm/hugepages").is_some() {
            let mut sizes = vec![self.pagesize];
            for n in self.list("/sys/kernel/mm/hugepages") {
                if let Some(kb) = n.strip_prefix("hugepages-")
                    && let Some((v, _)) = parse::strtoul(kb, 0)
                {
                    sizes.push(v.saturating_mul(1024));
                }
            }
            sizes.sort_unstable();
            sizes.dedup();
            sizes.retain(|&s| s != 0);
            self.topo.infos.push(Info {
                name: "PageSizeNr".into(),
                value: sizes.len().to_string(),
            });
            let list: Vec<String> = sizes.iter().map(|s| s.to_string()).collect();
            self.topo.infos.push(Info {
                name: "PageSizes".into(),
                value: list.join(","),
            });
        }
    }
}

/// At most `max` bytes of `s`, cut on a character boundary (hwloc reads
/// many small files into fixed buffers).
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

#[cfg(test)]
mod uname_tests {
    use super::Uname;

    #[test]
    fn release_comparison() {
        let u = |r: &str| Uname {
            release: r.into(),
            ..Uname::default()
        };
        assert!(u("6.1.0-13-amd64").release_at_least(4, 13));
        assert!(u("4.13").release_at_least(4, 13));
        assert!(!u("4.9.0").release_at_least(4, 13));
        assert!(!u("3.99").release_at_least(4, 13));
        assert!(!u("").release_at_least(0, 0));
        assert!(!u("garbage").release_at_least(0, 0));
        assert!(!u("99999999999.1").release_at_least(0, 0));
    }
}
