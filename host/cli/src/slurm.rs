//! Slurm configuration from a topology: the `slurm.conf` node line that
//! `slurmd -C` prints, and `gres.conf` lines binding GPUs and NICs to
//! their local cores (`wloc slurm node`, `wloc slurm gres`).
//!
//! The node counts follow Slurm 22.05's `xcpuinfo_hwloc_topo_get`
//! (`src/slurmd/common/xcpuinfo.c`), which reads hwloc's topology with
//! disallowed PUs included (`HWLOC_TOPOLOGY_FLAG_WHOLE_SYSTEM`), L1, L2,
//! L4, L5 caches and Misc objects filtered out:
//!
//! - `CPUs`: the number of PUs.
//! - `Boards`: when the root's first child is a Group, the number of
//!   objects at that Group's depth (at least 1); else 1.
//! - sockets: the Packages holding at least one Core; when none does,
//!   the number of Packages, and 1 when there is no Package.
//!   `SocketsPerBoard` is sockets / boards, rounded down, as slurmd
//!   prints it (0 when there are more boards than sockets).
//! - `CoresPerSocket`: the number of Cores (1 when there is none) divided
//!   by sockets, rounded down.
//! - `ThreadsPerCore`: CPUs divided by the number of Cores (1 when there
//!   is none), rounded down.
//! - `RealMemory`: slurmd reads the host's memory; here it is the sum of
//!   every NUMA node's local memory in bytes, divided by 1,048,576 and
//!   rounded down (MiB), which is what Linux's `MemTotal` gives on the
//!   machine the topology was recorded on.
//!
//! Slurm 22.05 (Debian 12's) does not remove Intel E-cores (later
//! versions do unless `SlurmdParameters=allow_ecores`), and its socket
//! is the Package (`l3cache_as_socket` and `numa_node_as_socket` are
//! `slurm.conf` settings this module does not follow).

use std::collections::HashMap;

use wloc_core::object::{Depth, ObjAttr, ObjId, ObjKind, ObjType, OsDevTypes};
use wloc_core::topology::TypeDepth;
use wloc_core::{Bitmap, Topology, TypeFilter};

/// An empty topology with the filters slurmd loads with: every object
/// kept but L1, L2, L4, L5 caches and Misc objects, Groups kept where
/// they bring structure, disallowed PUs and NUMA nodes included, and I/O
/// objects as `io` says (slurmd keeps none; `gres` needs them).
pub fn slurmd_topology(io: TypeFilter) -> Topology {
    let mut t = Topology::new();
    for ty in [
        ObjType::L1Cache,
        ObjType::L2Cache,
        ObjType::L4Cache,
        ObjType::L5Cache,
        ObjType::Misc,
    ] {
        let _ = t.set_type_filter(ty, TypeFilter::KeepNone);
    }
    t.set_io_types_filter(io);
    t.include_disallowed = true;
    t
}

/// What `slurmd -C` counts on a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeCounts {
    /// `CPUs`: the usable PUs.
    pub cpus: u64,
    /// `Boards`.
    pub boards: u64,
    /// `SocketsPerBoard`.
    pub sockets_per_board: u64,
    /// `CoresPerSocket`.
    pub cores_per_socket: u64,
    /// `ThreadsPerCore`.
    pub threads_per_core: u64,
    /// MiB, see the module documentation.
    pub real_memory: u64,
}

/// The Cores below `id` through normal children, as Slurm's
/// `_core_child_count`.
fn core_child_count(topo: &Topology, id: ObjId) -> u64 {
    let o = topo.obj(id);
    if o.obj_type == ObjType::Core {
        return 1;
    }
    o.children()
        .iter()
        .map(|&c| core_child_count(topo, c))
        .sum()
}

/// The counts `slurmd -C` prints for `topo` (see the module documentation).
pub fn node_counts(topo: &Topology) -> NodeCounts {
    let root = topo.obj(topo.root());
    let boards = match root.children().first() {
        Some(&first) if topo.obj(first).obj_type == ObjType::Group => {
            (topo.level(topo.obj(first).depth()).len() as u64).max(1)
        }
        _ => 1,
    };
    let packages: &[ObjId] = match topo.type_depth(ObjType::Package) {
        TypeDepth::Depth(d @ Depth::Normal(_)) => topo.level(d),
        _ => &[],
    };
    let mut sockets = packages
        .iter()
        .filter(|&&p| core_child_count(topo, p) > 0)
        .count() as u64;
    if sockets == 0 {
        sockets = (topo.objs_by_type(ObjType::Package).len() as u64).max(1);
    }
    let cores = (topo.objs_by_type(ObjType::Core).len() as u64).max(1);
    let cpus = topo.objs_by_type(ObjType::PU).len() as u64;
    NodeCounts {
        cpus,
        boards,
        sockets_per_board: sockets / boards,
        cores_per_socket: cores / sockets,
        threads_per_core: cpus / cores,
        real_memory: real_memory_mib(topo),
    }
}

/// The sum of every NUMA node's local memory, in MiB rounded down.
pub fn real_memory_mib(topo: &Topology) -> u64 {
    let bytes: u64 = topo
        .objs_by_type(ObjType::NUMANode)
        .iter()
        .map(|&n| match &topo.obj(n).attr {
            ObjAttr::Numa(a) => a.local_memory,
            _ => 0,
        })
        .sum();
    bytes / (1024 * 1024)
}

/// The `slurm.conf` node line, as `slurmd -C` prints its first line.
pub fn node_line(name: &str, c: &NodeCounts) -> String {
    format!(
        "NodeName={name} CPUs={} Boards={} SocketsPerBoard={} CoresPerSocket={} ThreadsPerCore={} RealMemory={}",
        c.cpus,
        c.boards,
        c.sockets_per_board,
        c.cores_per_socket,
        c.threads_per_core,
        c.real_memory
    )
}

/// Why site infos cannot be Slurm node features.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SiteFeatureError {
    /// The root object lacks one of the infos.
    #[error(transparent)]
    Missing(#[from] crate::MissingSiteInfo),
    /// A value holds a character a Slurm feature cannot (or is empty).
    #[error(
        "info {name}={value:?} cannot be a Slurm feature (letters, digits, '_', '.' and '-' only)"
    )]
    NotAFeature {
        /// The info's name.
        name: String,
        /// Its value.
        value: String,
    },
}

/// The values of the root object's infos `names` (site infos such as
/// `Rack`, recorded with `wloc annotate FILE FILE root info Rack r12`),
/// in the order asked, as Slurm node features: `Features=r12,...` in the
/// node line.  Fails when the root lacks one of them or when a value
/// holds a character a Slurm feature cannot.
pub fn site_features(topo: &Topology, names: &[String]) -> Result<Vec<String>, SiteFeatureError> {
    let mut out = Vec::new();
    for n in names {
        let v = crate::site_info(topo, n)?;
        if v.is_empty()
            || !v
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
        {
            return Err(SiteFeatureError::NotAFeature {
                name: n.clone(),
                value: v.to_string(),
            });
        }
        out.push(v.to_string());
    }
    Ok(out)
}

/// A host name as slurmd uses it: up to the first dot.
pub fn short_name(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

/// The topology's `HostName` info (topology-wide, else the root's).
pub fn topology_hostname(topo: &Topology) -> Option<String> {
    topo.infos
        .iter()
        .chain(topo.obj(topo.root()).infos.iter())
        .find(|i| i.name == "HostName" && !i.value.is_empty())
        .map(|i| i.value.clone())
}

/// This machine's host name.
pub fn this_hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is writable for its whole length.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let s = String::from_utf8_lossy(&buf[..end]).into_owned();
    (!s.is_empty()).then_some(s)
}

/// The node name: the topology's `HostName`, else this machine's host
/// name, shortened at the first dot as slurmd does.
pub fn default_node_name(topo: &Topology) -> String {
    let full = topology_hostname(topo)
        .or_else(this_hostname)
        .unwrap_or_else(|| "localhost".to_string());
    short_name(&full).to_string()
}

/// Which generic resource a device is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GresKind {
    /// OS devices of type GPU or CoProc (CUDA, OpenCL, NVML, RSMI, Level
    /// Zero, DRM `card*`/`renderD*`).
    Gpu,
    /// OS devices of type Network or OpenFabrics.
    Nic,
}

impl GresKind {
    /// The `Name=` of the gres.conf line.
    pub fn name(self) -> &'static str {
        match self {
            GresKind::Gpu => "gpu",
            GresKind::Nic => "nic",
        }
    }
}

/// One device for gres.conf: the OS devices of one PCI device (or one OS
/// device without a PCI parent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GresDevice {
    /// What kind of device it is (its gres name).
    pub kind: GresKind,
    /// The OS devices' names, in topology order.
    pub osdevs: Vec<String>,
    /// The device file, or why none is known (see [`device_file`]);
    /// NICs have none.
    pub file: Result<String, &'static str>,
    /// The logical indexes of the Cores in the device's locality (the
    /// cpuset of its first non-I/O ancestor); `None` when the topology
    /// has no Core.
    pub cores: Option<Bitmap>,
}

/// The kind of an OS device, if it is a GPU or a NIC.
fn gres_kind(t: OsDevTypes) -> Option<GresKind> {
    if t.has(OsDevTypes::GPU) || t.has(OsDevTypes::COPROC) {
        Some(GresKind::Gpu)
    } else if t.has(OsDevTypes::NETWORK) || t.has(OsDevTypes::OPENFABRICS) {
        Some(GresKind::Nic)
    } else {
        None
    }
}

/// The number after `prefix` in `name` (`nvml3` → 3).
fn numbered(name: &str, prefix: &str) -> Option<u32> {
    let n = name.strip_prefix(prefix)?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .then(|| n.parse().ok())
        .flatten()
}

/// The device file of a GPU whose OS devices are `osdevs` (`vendor` is
/// its PCI vendor, when it has a PCI parent), or why none is known:
///
/// - NVIDIA (PCI vendor 0x10de, or an `nvml*`/`cuda*` OS device):
///   `/dev/nvidiaN` from the NVML device `nvmlN` (NVML numbers GPUs in
///   PCI bus order, as the driver numbers its minors); none without an
///   NVML device, since CUDA's and OpenCL's orders are not the minors'.
/// - other GPUs: `/dev/dri/renderDN` from a DRM render node `renderDN`;
///   none otherwise: a DRM `card*` alone is usually a display-only
///   device (a server's BMC graphics), and RSMI, Level Zero and OpenCL
///   indexes name no file.
pub fn device_file(osdevs: &[String], vendor: Option<u16>) -> Result<String, &'static str> {
    let nvidia = vendor == Some(0x10de)
        || osdevs
            .iter()
            .any(|n| numbered(n, "nvml").is_some() || numbered(n, "cuda").is_some());
    if nvidia {
        return osdevs
            .iter()
            .find_map(|n| numbered(n, "nvml"))
            .map(|i| format!("/dev/nvidia{i}"))
            .ok_or("NVIDIA GPU without an NVML device, no /dev/nvidia file known");
    }
    osdevs
        .iter()
        .find_map(|n| numbered(n, "renderD"))
        .map(|i| format!("/dev/dri/renderD{i}"))
        .ok_or(if osdevs.iter().any(|n| numbered(n, "card").is_some()) {
            "no DRM render node (display only?)"
        } else {
            "no device file known"
        })
}

/// The GPUs and NICs of `topo` (loaded with I/O objects), one per PCI
/// device, in topology order.
pub fn gres_devices(topo: &Topology) -> Vec<GresDevice> {
    let cores = topo.objs_by_type(ObjType::Core);
    let set_of = |id: ObjId| {
        let o = topo.obj(id);
        o.complete_cpuset.clone().or_else(|| o.cpuset.clone())
    };
    let mut order: Vec<(GresKind, ObjId)> = Vec::new();
    let mut groups: HashMap<(GresKind, ObjId), Vec<String>> = HashMap::new();
    for id in topo.objs_by_type(ObjType::OSDevice) {
        let o = topo.obj(id);
        let ObjAttr::OsDev(types) = o.attr else {
            continue;
        };
        let Some(kind) = gres_kind(types) else {
            continue;
        };
        let key_obj = match o.parent() {
            Some(p) if topo.obj(p).obj_type == ObjType::PCIDevice => p,
            _ => id,
        };
        let key = (kind, key_obj);
        let names = groups.entry(key).or_insert_with(|| {
            order.push(key);
            Vec::new()
        });
        names.push(o.name.clone().unwrap_or_default());
    }
    order
        .into_iter()
        .map(|key @ (kind, obj)| {
            let osdevs = groups.remove(&key).unwrap_or_default();
            let vendor = match &topo.obj(obj).attr {
                ObjAttr::Pci(p) => Some(p.vendor_id),
                _ => None,
            };
            let file = match kind {
                GresKind::Gpu => device_file(&osdevs, vendor),
                GresKind::Nic => Err("network device"),
            };
            // The first non-I/O ancestor's cpuset.
            let mut anc = topo.obj(obj).parent();
            while let Some(a) = anc {
                if topo.obj(a).kind() != ObjKind::Io {
                    break;
                }
                anc = topo.obj(a).parent();
            }
            let local = anc.and_then(set_of);
            let core_set = (!cores.is_empty()).then(|| {
                let mut b = Bitmap::new();
                for &c in &cores {
                    let inside = match (&local, set_of(c)) {
                        (Some(l), Some(s)) => !s.is_empty() && s.is_included_in(l),
                        _ => false,
                    };
                    if inside {
                        b.set(topo.obj(c).logical_index());
                    }
                }
                b
            });
            GresDevice {
                kind,
                osdevs,
                file,
                cores: core_set,
            }
        })
        .collect()
}

/// The gres.conf line of a device on node `name`:
///
/// - with a device file: `NodeName=NAME Name=gpu File=FILE Cores=LIST # OSDEVS`;
/// - a NIC (no device file): `NodeName=NAME Name=nic Count=1 Cores=LIST # OSDEVS`;
/// - a GPU without a known device file: the same line as a NIC's, but
///   commented out (`# NodeName=... # OSDEVS: REASON`), for the
///   administrator to complete.
///
/// `Cores=` lists Core logical indexes (lstopo's `Core L#`), which is
/// how gres.conf numbers cores; it is left out when the topology has no
/// Core or the device's locality holds none.  The trailing comment names
/// the OS devices (Slurm strips comments).
pub fn gres_line(name: &str, d: &GresDevice) -> String {
    let mut line = format!("NodeName={name} Name={}", d.kind.name());
    match &d.file {
        Ok(f) => line.push_str(&format!(" File={f}")),
        Err(_) => line.push_str(" Count=1"),
    }
    if let Some(c) = d.cores.as_ref().filter(|c| !c.is_empty()) {
        line.push_str(&format!(" Cores={}", c.to_list_string()));
    }
    line.push_str(&format!(" # {}", d.osdevs.join(" ")));
    match (&d.file, d.kind) {
        (Err(why), GresKind::Gpu) => format!("# {line}: {why}"),
        _ => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvidia_files_come_from_nvml_only() {
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            device_file(&s(&["cuda1", "opencl0d1", "nvml2"]), Some(0x10de)),
            Ok("/dev/nvidia2".into())
        );
        assert!(device_file(&s(&["cuda0", "renderD128"]), None).is_err());
        assert_eq!(
            device_file(&s(&["rsmi0", "card1", "renderD129"]), Some(0x1002)),
            Ok("/dev/dri/renderD129".into())
        );
        assert!(device_file(&s(&["card0"]), Some(0x102b)).is_err());
        assert!(device_file(&s(&["opencl0d0"]), None).is_err());
    }

    #[test]
    fn host_names_are_shortened() {
        assert_eq!(short_name("node1.example.org"), "node1");
        assert_eq!(short_name("node1"), "node1");
    }
}
