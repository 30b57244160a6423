//! `wloc-linux`: discovers a Linux machine's topology from `/sys` and `/proc`
//! through an abstract, read-only file access, so the same code runs natively
//! and inside a sandboxed WebAssembly component.
//!
//! [`discover`] follows the rules of hwloc's Linux backend: PUs, cores,
//! clusters, dies, packages and caches from `/sys/devices/system/cpu` (or
//! `/proc/cpuinfo` on kernels without sysfs topology), NUMA nodes with their
//! memory, distances, memory-side caches and HMAT initiators from
//! `/sys/devices/system/node`, cgroup restrictions, DMI and CPU infos, CPU
//! kinds, groups from NUMA distances, memory tiers, and the PCI hierarchy
//! with its OS devices.  It performs no I/O except through [`FsAccess`], reads
//! no environment (the host passes [`Options`]), starts no thread, and never
//! panics on malformed input.
#![warn(missing_docs)]

mod cgroup;
mod cpu;
mod cpukinds;
mod ctx;
mod distgroup;
mod dmi;
mod fs;
mod infos;
mod knl;
mod memtiers;
pub mod mounts;
mod numa;
mod osdev;
pub mod parse;
mod pci;
#[cfg(test)]
mod tests;

use std::fmt;

#[cfg(feature = "native")]
pub use fs::NativeFs;
pub use fs::{FsAccess, MAX_DIR_ENTRIES, MAX_FILE_SIZE, MemEntry, MemFs, components};
pub use infos::{DMI_FILES, DMI_FOLDERS};

use wloc_core::{Topology, TopologyError};

/// Settings of the discovery, taken by the host from hwloc's environment
/// variables (`HWLOC_*`, or their `WLOC_*` equivalents); see
/// [`Options::from_lookup`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Whether the tree is the running machine's (`/`) rather than a
    /// recording; then OS infos come from `/proc/sys/kernel`.
    pub this_system: bool,
    /// The machine architecture as `uname -m` prints it, for the running
    /// machine (recordings carry theirs in `/proc/hwloc-nofile-info`).
    pub machine: Option<String>,
    /// `HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES`: keep NUMA nodes made of NVIDIA
    /// GPU memory (`None`: hwloc's default, kept except on POWER).
    pub keep_nvidia_gpu_numa_nodes: Option<bool>,
    /// `HWLOC_PCI_LOCALITY`: forced localities of PCI buses
    /// (`domain:bus-bus cpuset;...`).  A value naming a readable file is
    /// resolved by the host, which passes the file's content here.
    pub pci_locality: Option<String>,
    /// `HWLOC_CPUKINDS`: `none`/`0` disables CPU kinds; otherwise enables
    /// them, with `maxfreq=`, `freqadjust=`, `cppc=` and `midr=` settings.
    pub cpukinds: Option<String>,
    /// `HWLOC_LINUX_CPUKINDS` (hwloc 2.14's name): `none`/`0` disables CPU
    /// kinds; anything else enables them, also on the AMD processors where
    /// they are off by default, with `cppc=` or `midr=` settings.
    pub linux_cpukinds: Option<String>,
    /// `HWLOC_DONT_MERGE_CLUSTER_GROUPS`: keep cluster groups even when
    /// identical to their parent or child.
    pub dont_merge_cluster_groups: bool,
    /// `HWLOC_DEBUG_ALLOW_OVERLAPPING_NODE_CPUSETS`: 0 drops NUMA nodes whose
    /// CPUs overlap previous nodes' (default), 1 and 2 keep them.
    pub allow_overlapping_node_cpusets: u32,
    /// `HWLOC_USE_NUMA_DISTANCES` bitmask (default 7): 1 distances, 2 use
    /// them to locate CPU-less nodes, 4 use HMAT initiators.
    pub use_numa_distances: Option<u32>,
    /// `HWLOC_GROUPING`: build groups from NUMA distances (default on; like
    /// hwloc, OS distances group with exact values only, whatever
    /// `HWLOC_GROUPING_ACCURACY` says).
    pub grouping: Option<bool>,
    /// `HWLOC_VIRTUAL_LINUX_OSDEV`: also report virtual OS devices (`lo`, ...).
    pub virtual_osdev: bool,
    /// `HWLOC_MEMTIERS`: forced memory tiers (`0x3=DRAM;0xc=HBM`) or `none`.
    pub memtiers: Option<String>,
    /// `HWLOC_MEMTIERS_GUESS`: `none`, `all`, `spm_is_hbm`, `node0_is_dram`.
    pub memtiers_guess: Option<String>,
    /// `HWLOC_DEBUG_SORT_CHILDREN`: OS devices in name order below each
    /// parent, whatever order sysfs lists them in.
    pub sort_os_devices: bool,
    /// `HWLOC_MEMTIERS_BANDWIDTH_THRESHOLD`: relative bandwidth difference
    /// that separates two tiers (0.1 when unset).
    pub memtiers_bandwidth_threshold: Option<String>,
    /// `HWLOC_MEMTIERS_LATENCY_THRESHOLD`, likewise for latencies.
    pub memtiers_latency_threshold: Option<String>,
    /// `HWLOC_MEMTIERS_REFRESH` (any value): guessed tier kinds replace the
    /// subtypes nodes already have.
    pub memtiers_refresh: bool,
    /// `HWLOC_DUMPED_HWDATA_DIR`: where `hwloc-dump-hwdata` wrote its files
    /// (`/var/run/hwloc` when unset, as hwloc built for `/var`), read inside the file-system root.
    pub dumped_hwdata_dir: Option<String>,
    /// `HWLOC_KNL_NUMA_QUIRK`: 0 disables the Xeon Phi (KNL) NUMA quirk.
    pub knl_numa_quirk: Option<bool>,
    /// `HWLOC_KNL_HDH_FALLBACK`: 1 ignores the dumped KNL data, 0 never
    /// guesses what it lacks (unset: guess only what is missing).
    pub knl_hdh_fallback: Option<i64>,
    /// `HWLOC_KNL_MSCACHE_L3`: 0 makes the KNL MCDRAM cache a memory-side
    /// cache object instead of an L3 cache (the default, as hwloc).
    pub knl_mscache_l3: Option<bool>,
}

/// The names of the settings a host passes to the Linux component besides
/// the hwloc variables of [`SETTING_NAMES`]; the host and the component
/// both use these constants.
pub mod setting {
    use wloc_core::ObjType;

    /// `1` when the tree is the running machine's ([`Options::this_system`](super::Options::this_system)).
    pub const THIS_SYSTEM: &str = "this-system";
    /// The running machine's architecture ([`Options::machine`](super::Options::machine)).
    pub const MACHINE: &str = "machine";
    /// hwloc's PCI locality (`HWLOC_PCI_LOCALITY`); a host that read the
    /// file passes its content under this name.
    pub const PCI_LOCALITY: &str = "PCI_LOCALITY";
    /// The I/O type filters, with the type each one sets; values are
    /// [`TypeFilter::name`](wloc_core::TypeFilter::name)s.
    pub const FILTERS: [(&str, ObjType); 3] = [
        ("filter.pci", ObjType::PCIDevice),
        ("filter.bridge", ObjType::Bridge),
        ("filter.osdev", ObjType::OSDevice),
    ];
}

/// The hwloc variable names (without `HWLOC_`) that [`Options::from_lookup`]
/// asks for, so that a host can forward exactly these settings.
pub const SETTING_NAMES: &[&str] = &[
    "KEEP_NVIDIA_GPU_NUMA_NODES",
    setting::PCI_LOCALITY,
    "CPUKINDS",
    "LINUX_CPUKINDS",
    "DONT_MERGE_CLUSTER_GROUPS",
    "DEBUG_ALLOW_OVERLAPPING_NODE_CPUSETS",
    "USE_NUMA_DISTANCES",
    "GROUPING",
    "VIRTUAL_LINUX_OSDEV",
    "MEMTIERS",
    "MEMTIERS_GUESS",
    "DEBUG_SORT_CHILDREN",
    "MEMTIERS_BANDWIDTH_THRESHOLD",
    "MEMTIERS_LATENCY_THRESHOLD",
    "MEMTIERS_REFRESH",
    "DUMPED_HWDATA_DIR",
    "KNL_NUMA_QUIRK",
    "KNL_HDH_FALLBACK",
    "KNL_MSCACHE_L3",
];

impl Options {
    /// Builds the options from a lookup of hwloc variable names without
    /// their `HWLOC_` prefix (`lookup("PCI_LOCALITY")`); the host decides
    /// which environment (`WLOC_*` first, then `HWLOC_*`) answers.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let num = |name: &str| lookup(name).map(|v| parse::atoi(&v));
        Options {
            this_system: false,
            machine: None,
            keep_nvidia_gpu_numa_nodes: num("KEEP_NVIDIA_GPU_NUMA_NODES").map(|v| v != 0),
            pci_locality: lookup(setting::PCI_LOCALITY),
            cpukinds: lookup("CPUKINDS"),
            linux_cpukinds: lookup("LINUX_CPUKINDS"),
            dont_merge_cluster_groups: num("DONT_MERGE_CLUSTER_GROUPS").is_some_and(|v| v != 0),
            allow_overlapping_node_cpusets: num("DEBUG_ALLOW_OVERLAPPING_NODE_CPUSETS")
                .map(|v| v.clamp(0, 2) as u32)
                .unwrap_or(0),
            use_numa_distances: num("USE_NUMA_DISTANCES").map(|v| v.clamp(0, 7) as u32),
            grouping: num("GROUPING").map(|v| v != 0),
            virtual_osdev: lookup("VIRTUAL_LINUX_OSDEV").is_some(),
            memtiers: lookup("MEMTIERS"),
            memtiers_guess: lookup("MEMTIERS_GUESS"),
            sort_os_devices: lookup("DEBUG_SORT_CHILDREN").is_some(),
            memtiers_bandwidth_threshold: lookup("MEMTIERS_BANDWIDTH_THRESHOLD"),
            memtiers_latency_threshold: lookup("MEMTIERS_LATENCY_THRESHOLD"),
            memtiers_refresh: lookup("MEMTIERS_REFRESH").is_some(),
            dumped_hwdata_dir: lookup("DUMPED_HWDATA_DIR"),
            knl_numa_quirk: num("KNL_NUMA_QUIRK").map(|v| v != 0),
            knl_hdh_fallback: num("KNL_HDH_FALLBACK"),
            knl_mscache_l3: num("KNL_MSCACHE_L3").map(|v| v != 0),
        }
    }
}

/// Why discovery failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiscoveryError {
    /// The tree holds no usable CPU information at all.
    NoCpus(String),
    /// The topology model refused the result.
    Topology(TopologyError),
}

impl fmt::Display for DiscoveryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiscoveryError::NoCpus(s) => write!(f, "no CPU found: {s}"),
            DiscoveryError::Topology(e) => write!(f, "invalid topology: {e}"),
        }
    }
}

impl std::error::Error for DiscoveryError {}

impl From<TopologyError> for DiscoveryError {
    fn from(e: TopologyError) -> Self {
        DiscoveryError::Topology(e)
    }
}

/// Discovers the machine described by `fs` into `topo`, whose type filters
/// and flags the caller has set, and finishes it
/// ([`Topology::finish`]).
///
/// # Errors
///
/// [`DiscoveryError`] when the tree describes no processor at all, or when
/// the topology model rejects the result.
pub fn discover(
    fs: &dyn FsAccess,
    opts: &Options,
    topo: Topology,
) -> Result<Topology, DiscoveryError> {
    ctx::Ctx::new(fs, opts, topo).run()
}

/// The PUs and NUMA nodes the Linux cgroup of `fs`'s process allows, as
/// hwloc's "get allowed resources" hook reads them for a topology said to
/// be this system's (`HWLOC_THISSYSTEM_ALLOWED_RESOURCES`): `None` when no
/// cpuset cgroup is mounted or the process's cgroup is unknown.
pub fn allowed_resources(fs: &dyn FsAccess) -> Option<AllowedResources> {
    allowed_resources_of(fs, None)
}

/// [`allowed_resources`] of process `pid` (`None`: the calling one), as
/// hwloc reads them after `hwloc_topology_set_pid`.
pub fn allowed_resources_of(fs: &dyn FsAccess, pid: Option<u32>) -> Option<AllowedResources> {
    let opts = Options::default();
    let mut c = ctx::Ctx::new(fs, &opts, Topology::new());
    let process = pid.map_or_else(|| "self".to_string(), |p| p.to_string());
    let cgroup = c.allowed_resources_of(&process)?;
    Some(AllowedResources {
        cgroup,
        cpuset: c.topo.allowed_cpuset.clone(),
        nodeset: c.topo.allowed_nodeset.clone(),
    })
}

/// What [`allowed_resources`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowedResources {
    /// The cgroup's name (the `LinuxCgroup` info).
    pub cgroup: String,
    /// The allowed PUs (all when the cgroup's file is missing or unreadable).
    pub cpuset: wloc_core::CpuSet,
    /// The allowed NUMA nodes (all when the file is missing or unreadable).
    pub nodeset: wloc_core::NodeSet,
}

#[cfg(test)]
mod setting_names {
    use super::*;

    #[test]
    fn every_looked_up_setting_is_listed() {
        let asked = std::cell::RefCell::new(Vec::new());
        Options::from_lookup(|n| {
            asked.borrow_mut().push(n.to_string());
            None
        });
        let mut asked = asked.into_inner();
        asked.sort();
        asked.dedup();
        let mut listed: Vec<String> = SETTING_NAMES.iter().map(|s| s.to_string()).collect();
        listed.sort();
        assert_eq!(asked, listed);
    }
}
