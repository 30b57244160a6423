//! Topology objects: their types, kinds and attributes.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use thin_vec::ThinVec;

use crate::bitmap::{CpuSet, NodeSet};

/// Index of an object inside its [`Topology`](crate::Topology).
///
/// Ids stay valid for the life of the topology; an object removed by
/// filtering simply stops being reachable.
pub type ObjId = usize;

/// Every kind of object hwloc knows about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ObjType {
    /// The whole machine (or system image); always the root.
    Machine,
    /// A physical package (socket).
    Package,
    /// A die inside a package.
    Die,
    /// A core: computation unit with one or more hardware threads.
    Core,
    /// A processing unit (hardware thread, logical processor).
    PU,
    /// Level-1 data (or unified) cache.
    L1Cache,
    /// Level-2 data or unified cache.
    L2Cache,
    /// Level-3 data or unified cache.
    L3Cache,
    /// Level-4 data or unified cache.
    L4Cache,
    /// Level-5 data or unified cache.
    L5Cache,
    /// Level-1 instruction cache.
    L1ICache,
    /// Level-2 instruction cache.
    L2ICache,
    /// Level-3 instruction cache.
    L3ICache,
    /// A group of objects that does not fit any other type (clusters, boards, ...).
    Group,
    /// A NUMA node: a set of processors around some memory.
    NUMANode,
    /// A memory-side cache in front of one or more NUMA nodes.
    MemCache,
    /// A host bridge or PCI bridge.
    Bridge,
    /// A PCI device.
    PCIDevice,
    /// An operating-system device (block device, NIC, GPU, ...).
    OSDevice,
    /// Anything else, attached wherever the user wants.
    Misc,
}

/// The four families of objects and the child list each belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjKind {
    /// CPU-side objects with a cpuset: Machine, Package, Die, Core, PU, caches, Group.
    Normal,
    /// Memory objects: NUMA nodes and memory-side caches.
    Memory,
    /// I/O objects: bridges, PCI devices and OS devices.
    Io,
    /// Misc objects.
    Misc,
}

impl ObjType {
    /// The CPU cache types (data and unified, then instruction), memory-side
    /// caches excluded.
    pub const CPU_CACHES: [ObjType; 8] = [
        ObjType::L1Cache,
        ObjType::L2Cache,
        ObjType::L3Cache,
        ObjType::L4Cache,
        ObjType::L5Cache,
        ObjType::L1ICache,
        ObjType::L2ICache,
        ObjType::L3ICache,
    ];

    /// All types, in hwloc's enumeration order.
    pub const ALL: [ObjType; 20] = [
        ObjType::Machine,
        ObjType::Package,
        ObjType::Core,
        ObjType::PU,
        ObjType::L1Cache,
        ObjType::L2Cache,
        ObjType::L3Cache,
        ObjType::L4Cache,
        ObjType::L5Cache,
        ObjType::L1ICache,
        ObjType::L2ICache,
        ObjType::L3ICache,
        ObjType::Group,
        ObjType::NUMANode,
        ObjType::Bridge,
        ObjType::PCIDevice,
        ObjType::OSDevice,
        ObjType::Misc,
        ObjType::MemCache,
        ObjType::Die,
    ];

    /// The names `hwloc_type_sscanf` reads as types without attributes
    /// (neither caches, groups nor OS devices), each with the shortest
    /// prefix it accepts, in the order they are tried.
    pub const SSCANF_NAMES: [(&'static str, usize, ObjType); 14] = [
        ("machine", 2, ObjType::Machine),
        ("numanode", 2, ObjType::NUMANode),
        ("node", 2, ObjType::NUMANode),
        ("memcache", 5, ObjType::MemCache),
        ("memory-side cache", 8, ObjType::MemCache),
        ("package", 2, ObjType::Package),
        ("socket", 2, ObjType::Package),
        ("die", 2, ObjType::Die),
        ("core", 2, ObjType::Core),
        ("pu", 2, ObjType::PU),
        ("misc", 4, ObjType::Misc),
        ("bridge", 4, ObjType::Bridge),
        ("hostbridge", 6, ObjType::Bridge),
        ("pcibridge", 5, ObjType::Bridge),
    ];

    /// Position in [`ObjType::ALL`], usable as an array index.
    #[inline]
    pub fn index(self) -> usize {
        match self {
            ObjType::Machine => 0,
            ObjType::Package => 1,
            ObjType::Core => 2,
            ObjType::PU => 3,
            ObjType::L1Cache => 4,
            ObjType::L2Cache => 5,
            ObjType::L3Cache => 6,
            ObjType::L4Cache => 7,
            ObjType::L5Cache => 8,
            ObjType::L1ICache => 9,
            ObjType::L2ICache => 10,
            ObjType::L3ICache => 11,
            ObjType::Group => 12,
            ObjType::NUMANode => 13,
            ObjType::Bridge => 14,
            ObjType::PCIDevice => 15,
            ObjType::OSDevice => 16,
            ObjType::Misc => 17,
            ObjType::MemCache => 18,
            ObjType::Die => 19,
        }
    }

    /// The family of this type (what `hwloc_obj_type_is_normal`,
    /// `hwloc_obj_type_is_memory` and `hwloc_obj_type_is_io` tell).
    #[doc(alias = "hwloc_obj_type_is_normal")]
    #[doc(alias = "hwloc_obj_type_is_memory")]
    #[doc(alias = "hwloc_obj_type_is_io")]
    #[inline]
    pub fn kind(self) -> ObjKind {
        match self {
            ObjType::NUMANode | ObjType::MemCache => ObjKind::Memory,
            ObjType::Bridge | ObjType::PCIDevice | ObjType::OSDevice => ObjKind::Io,
            ObjType::Misc => ObjKind::Misc,
            _ => ObjKind::Normal,
        }
    }

    /// Whether an object of this type may be a child of a `parent` object.
    ///
    /// These are the structural rules of hwloc's `hwloc_topology_check`
    /// and of its XML importer, in one place; every insertion path of the
    /// [`Topology`](crate::Topology) applies them:
    ///
    /// - a Machine is only ever the root;
    /// - normal objects go under normal objects other than PUs (a PU is a
    ///   leaf of the normal tree);
    /// - memory objects (NUMA nodes, memory-side caches) go under normal
    ///   objects other than PUs, or under a memory-side cache (a NUMA node
    ///   holds no memory child);
    /// - I/O objects go under normal or I/O objects;
    /// - Misc objects go anywhere.
    pub fn can_be_child_of(self, parent: ObjType) -> bool {
        if self == ObjType::Machine {
            return false;
        }
        let pk = parent.kind();
        match self.kind() {
            ObjKind::Normal => pk == ObjKind::Normal && parent != ObjType::PU,
            ObjKind::Memory => {
                (pk == ObjKind::Normal && parent != ObjType::PU) || parent == ObjType::MemCache
            }
            ObjKind::Io => matches!(pk, ObjKind::Normal | ObjKind::Io),
            ObjKind::Misc => true,
        }
    }

    /// Whether this is a CPU-side cache (data, unified or instruction;
    /// `hwloc_obj_type_is_cache`).
    #[doc(alias = "hwloc_obj_type_is_cache")]
    pub fn is_cache(self) -> bool {
        self.cache_level().is_some()
    }

    /// Whether this is a data or unified CPU cache (`hwloc_obj_type_is_dcache`).
    #[doc(alias = "hwloc_obj_type_is_dcache")]
    pub fn is_dcache(self) -> bool {
        matches!(
            self,
            ObjType::L1Cache
                | ObjType::L2Cache
                | ObjType::L3Cache
                | ObjType::L4Cache
                | ObjType::L5Cache
        )
    }

    /// Whether this is an instruction cache (`hwloc_obj_type_is_icache`).
    #[doc(alias = "hwloc_obj_type_is_icache")]
    pub fn is_icache(self) -> bool {
        matches!(
            self,
            ObjType::L1ICache | ObjType::L2ICache | ObjType::L3ICache
        )
    }

    /// Cache level (1 to 5) of a CPU cache type.
    pub fn cache_level(self) -> Option<u32> {
        match self {
            ObjType::L1Cache | ObjType::L1ICache => Some(1),
            ObjType::L2Cache | ObjType::L2ICache => Some(2),
            ObjType::L3Cache | ObjType::L3ICache => Some(3),
            ObjType::L4Cache => Some(4),
            ObjType::L5Cache => Some(5),
            _ => None,
        }
    }

    /// The cache type for a level and a cache kind (instruction caches exist for levels 1 to 3).
    pub fn cache_for(level: u32, kind: CacheKind) -> Option<ObjType> {
        Some(match (level, kind) {
            (1, CacheKind::Instruction) => ObjType::L1ICache,
            (2, CacheKind::Instruction) => ObjType::L2ICache,
            (3, CacheKind::Instruction) => ObjType::L3ICache,
            (_, CacheKind::Instruction) => return None,
            (1, _) => ObjType::L1Cache,
            (2, _) => ObjType::L2Cache,
            (3, _) => ObjType::L3Cache,
            (4, _) => ObjType::L4Cache,
            (5, _) => ObjType::L5Cache,
            _ => return None,
        })
    }

    /// Rank from the top of the machine to the bottom: a type with a smaller
    /// order may contain types with a larger one.
    pub(crate) fn order(self) -> u32 {
        match self {
            ObjType::Machine => 0,
            ObjType::Group => 1,
            ObjType::MemCache => 2,
            ObjType::NUMANode => 3,
            ObjType::Package => 4,
            ObjType::Die => 5,
            ObjType::L5Cache => 6,
            ObjType::L4Cache => 7,
            ObjType::L3Cache => 8,
            ObjType::L3ICache => 9,
            ObjType::L2Cache => 10,
            ObjType::L2ICache => 11,
            ObjType::L1Cache => 12,
            ObjType::L1ICache => 13,
            ObjType::Core => 14,
            ObjType::Bridge => 15,
            ObjType::PCIDevice => 16,
            ObjType::OSDevice => 17,
            ObjType::PU => 18,
            ObjType::Misc => 19,
        }
    }

    /// Which object survives when a parent and its only child cover the same
    /// set and one of them may go: the one with the higher priority.
    pub(crate) fn merge_priority(self) -> i32 {
        match self {
            ObjType::Machine => 90,
            ObjType::Package => 40,
            ObjType::Core => 60,
            ObjType::PU | ObjType::NUMANode | ObjType::PCIDevice | ObjType::OSDevice => 100,
            ObjType::Die => 30,
            t if t.is_dcache() => 20,
            ObjType::L1ICache | ObjType::L2ICache | ObjType::L3ICache | ObjType::MemCache => 19,
            _ => 0,
        }
    }

    /// Compares two types in the machine's containment order
    /// (`hwloc_compare_types`).
    ///
    /// Returns `None` when they cannot be ordered (a normal type against a
    /// memory, I/O or misc type, except Machine).
    #[doc(alias = "hwloc_compare_types")]
    pub fn compare(self, other: ObjType) -> Option<core::cmp::Ordering> {
        let n1 = self.kind() == ObjKind::Normal;
        let n2 = other.kind() == ObjKind::Normal;
        if (!n1 && n2 && other != ObjType::Machine) || (!n2 && n1 && self != ObjType::Machine) {
            return None;
        }
        Some(self.order().cmp(&other.order()))
    }

    /// hwloc's name of the type, as used in XML (`L1iCache`, `PCIDev`, ...).
    pub fn xml_name(self) -> &'static str {
        match self {
            ObjType::Machine => "Machine",
            ObjType::Package => "Package",
            ObjType::Die => "Die",
            ObjType::Core => "Core",
            ObjType::PU => "PU",
            ObjType::L1Cache => "L1Cache",
            ObjType::L2Cache => "L2Cache",
            ObjType::L3Cache => "L3Cache",
            ObjType::L4Cache => "L4Cache",
            ObjType::L5Cache => "L5Cache",
            ObjType::L1ICache => "L1iCache",
            ObjType::L2ICache => "L2iCache",
            ObjType::L3ICache => "L3iCache",
            ObjType::Group => "Group",
            ObjType::NUMANode => "NUMANode",
            ObjType::MemCache => "MemCache",
            ObjType::Bridge => "Bridge",
            ObjType::PCIDevice => "PCIDev",
            ObjType::OSDevice => "OSDev",
            ObjType::Misc => "Misc",
        }
    }

    /// Parses a type name as hwloc's `hwloc_type_sscanf` does: full names,
    /// common abbreviations and old names, case-insensitively
    /// (`pack`, `socket`, `node`, `numa`, `l2`, `l1i`, `pci`, `os`, ...).
    ///
    /// Returns the type and, for caches written as `l2d`/`l2u`/`l2i`, the
    /// cache kind that was spelled out.
    #[doc(alias = "hwloc_type_sscanf")]
    pub fn parse(name: &str) -> Option<ObjType> {
        // Documents spell types as hwloc writes them: match those first,
        // without building a lowercase copy.
        if let Some(&t) = ObjType::ALL.iter().find(|t| t.xml_name() == name) {
            return Some(t);
        }
        let lower: String = name.chars().map(|c| c.to_ascii_lowercase()).collect();
        let s = lower.as_str();
        let starts = |full: &str, min: usize| s.len() >= min && full.starts_with(s);
        // Caches: lN, lNd, lNu, lNi, lNcache, lNdcache, lNicache, lNucache.
        if let Some(rest) = s.strip_prefix('l') {
            let mut chars = rest.chars();
            if let Some(d) = chars.next().and_then(|c| c.to_digit(10)) {
                let tail = chars.as_str();
                let tail = tail.strip_suffix("cache").unwrap_or(tail);
                let kind = match tail {
                    "" | "d" | "u" => CacheKind::Unified,
                    "i" => CacheKind::Instruction,
                    _ => return None,
                };
                return ObjType::cache_for(d, kind);
            }
        }
        Some(match s {
            _ if starts("machine", 2) || s == "system" => ObjType::Machine,
            _ if starts("package", 2) || starts("socket", 2) => ObjType::Package,
            _ if starts("die", 2) => ObjType::Die,
            _ if starts("core", 2) => ObjType::Core,
            _ if starts("pu", 2) => ObjType::PU,
            _ if starts("group", 2) || s == "cluster" => ObjType::Group,
            _ if starts("numanode", 2) || starts("node", 2) => ObjType::NUMANode,
            _ if starts("memcache", 3) || s == "memorysidecache" => ObjType::MemCache,
            _ if starts("bridge", 2) || s == "hostbridge" || s == "pcibridge" => ObjType::Bridge,
            _ if starts("pcidev", 2) || s == "pcidevice" => ObjType::PCIDevice,
            _ if starts("osdev", 2) || s == "osdevice" => ObjType::OSDevice,
            _ if starts("misc", 2) => ObjType::Misc,
            _ => return None,
        })
    }
}

impl fmt::Display for ObjType {
    /// The name hwloc prints for the type (`hwloc_obj_type_string`).
    #[doc(alias = "hwloc_obj_type_string")]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.xml_name())
    }
}

/// Whether a cache holds data, instructions or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum CacheKind {
    /// Data and instructions.
    #[default]
    Unified,
    /// Data only.
    Data,
    /// Instructions only.
    Instruction,
}

impl CacheKind {
    /// hwloc's numeric code (`cache_type` in XML): 0 unified, 1 data, 2 instruction.
    pub fn code(self) -> u32 {
        match self {
            CacheKind::Unified => 0,
            CacheKind::Data => 1,
            CacheKind::Instruction => 2,
        }
    }
    /// Inverse of [`CacheKind::code`].
    pub fn from_code(code: u32) -> Option<Self> {
        match code {
            0 => Some(CacheKind::Unified),
            1 => Some(CacheKind::Data),
            2 => Some(CacheKind::Instruction),
            _ => None,
        }
    }
}

/// Attributes of a CPU cache or a memory-side cache.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CacheAttr {
    /// Size in bytes.
    pub size: u64,
    /// Depth (1 for L1, ...).
    pub depth: u32,
    /// Line size in bytes, 0 if unknown.
    pub linesize: u32,
    /// Ways of associativity; -1 means fully associative, 0 unknown.
    pub associativity: i32,
    /// Data, instruction or unified.
    pub kind: CacheKind,
    /// Whether the cache is known to be inclusive (hwloc 3 `cache_inclusive`).
    pub inclusive: bool,
}

/// One page size supported by a NUMA node, with the number of such pages.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PageType {
    /// Page size in bytes.
    pub size: u64,
    /// Number of pages of that size.
    pub count: u64,
}

/// Attributes of a NUMA node.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NumaAttr {
    /// Memory local to the node, in bytes.
    pub local_memory: u64,
    /// Supported page types, sorted by size.
    pub page_types: Vec<PageType>,
}

/// Attributes of a Group.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GroupAttr {
    /// Depth among Group levels, computed when levels are built.
    pub depth: u32,
    /// Why the group exists (backends pick values; smaller kinds win merges).
    pub kind: u32,
    /// Sub-kind refining `kind`.
    pub subkind: u32,
    /// Never merge this group with an identical parent or child.
    pub dont_merge: bool,
}

/// Well-known group kinds, with hwloc's values (they appear in XML as
/// `kind=`).  When two groups cover the same PUs, the smaller kind is kept.
pub mod group_kind {
    /// Set by the user.
    pub const USER: u32 = 0;
    /// From a synthetic description (subkind: group depth in the description).
    pub const SYNTHETIC: u32 = 10;
    /// Intel KNL sub-NUMA cluster.
    pub const INTEL_KNL_SUBNUMA_CLUSTER: u32 = 100;
    /// Unknown level of Intel's extended topology enumeration (subkind: the level).
    pub const INTEL_EXTTOPOENUM_UNKNOWN: u32 = 101;
    /// Intel module.
    pub const INTEL_MODULE: u32 = 102;
    /// Intel tile.
    pub const INTEL_TILE: u32 = 103;
    /// Intel die (when dies are not shown as Die objects).
    pub const INTEL_DIE: u32 = 104;
    /// Intel die-group (kept as an alias of the die kind for groups above dies).
    pub const INTEL_DIE_GROUP: u32 = 104;
    /// s390 book (subkind 0) and drawer (subkind 1).
    pub const S390_BOOK: u32 = 110;
    /// AMD compute unit.
    pub const AMD_COMPUTE_UNIT: u32 = 120;
    /// Solaris hardware performance group.
    pub const SOLARIS_PG_HW_PERF: u32 = 200;
    /// AIX SDL level.
    pub const AIX_SDL_UNKNOWN: u32 = 210;
    /// Windows processor group.
    pub const WINDOWS_PROCESSOR_GROUP: u32 = 220;
    /// Windows relationship of unknown kind.
    pub const WINDOWS_RELATIONSHIP_UNKNOWN: u32 = 221;
    /// Linux cluster (`cluster_cpus`).
    pub const LINUX_CLUSTER: u32 = 222;
    /// Built from distances (subkind: the grouping round).
    pub const DISTANCE: u32 = 900;
    /// Made for attaching I/O with a partial locality.
    pub const IO: u32 = 1000;
    /// Made to attach CPU-less memory or memory with a partial locality.
    pub const MEMORY: u32 = 1001;
    /// Unknown origin (XML import without a kind).
    pub const XML_UNKNOWN: u32 = u32::MAX;
}

/// Identity of a PCI function.
#[derive(Clone, Debug, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PciAttr {
    /// PCI domain.
    pub domain: u32,
    /// Bus number.
    pub bus: u8,
    /// Device number.
    pub dev: u8,
    /// Function number.
    pub func: u8,
    /// Class and subclass (`0x0200` for Ethernet).
    pub class_id: u16,
    /// Vendor id.
    pub vendor_id: u16,
    /// Device id.
    pub device_id: u16,
    /// Subsystem vendor id.
    pub subvendor_id: u16,
    /// Subsystem device id.
    pub subdevice_id: u16,
    /// Revision.
    pub revision: u8,
    /// Link speed in GB/s.
    pub linkspeed: f32,
    /// Programming interface byte (printed after the revision in XML).
    pub prog_if: u8,
}

/// Upstream side of a bridge.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum BridgeUpstream {
    /// A host bridge: the root of a PCI hierarchy.
    Host,
    /// A PCI-to-PCI bridge with its own PCI identity.
    Pci(PciAttr),
}

/// Attributes of a bridge.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BridgeAttr {
    /// What the bridge is on its upstream side.
    pub upstream: BridgeUpstream,
    /// Downstream PCI domain.
    pub domain: u32,
    /// First bus below the bridge.
    pub secondary_bus: u8,
    /// Last bus below the bridge.
    pub subordinate_bus: u8,
    /// Depth of the bridge among bridges (0 for host bridges).
    pub depth: u32,
}

/// Kinds of OS device, as a bitmask so a device may be several at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OsDevTypes(pub u32);

impl OsDevTypes {
    /// Storage (block devices, NVMe namespaces).
    pub const STORAGE: u32 = 1 << 0;
    /// Byte-addressable memory devices (DAX, CXL memory).
    pub const MEMORY: u32 = 1 << 1;
    /// GPU (DRM, CUDA, ...).
    pub const GPU: u32 = 1 << 2;
    /// Co-processor or accelerator.
    pub const COPROC: u32 = 1 << 3;
    /// Network interface.
    pub const NETWORK: u32 = 1 << 4;
    /// OpenFabrics (InfiniBand, RoCE) HCA.
    pub const OPENFABRICS: u32 = 1 << 5;
    /// DMA engine.
    pub const DMA: u32 = 1 << 6;

    /// Whether all bits of `t` are set.
    pub fn has(self, t: u32) -> bool {
        self.0 & t == t && t != 0
    }

    /// The hwloc 2.x single-value `osdev_type` code of this device, `None`
    /// when it has no kind.  Storage and memory devices were block devices;
    /// devices that are both GPU and co-processor were GPUs for management
    /// libraries (NVML, RSMI, displays) and co-processors for compute ones.
    pub fn v2_code(self, subtype: Option<&str>) -> Option<u32> {
        let has = |bits: u32| self.0 & bits != 0;
        Some(if has(Self::STORAGE | Self::MEMORY) {
            0
        } else if has(Self::OPENFABRICS) {
            3
        } else if has(Self::NETWORK) {
            2
        } else if has(Self::DMA) {
            4
        } else if has(Self::GPU) && has(Self::COPROC) {
            if matches!(subtype, Some("NVML" | "RSMI" | "Display")) {
                1
            } else {
                5
            }
        } else if has(Self::COPROC) {
            5
        } else if has(Self::GPU) {
            1
        } else {
            return None;
        })
    }

    /// Converts a hwloc 2.x `osdev_type` code into a bitmask.
    pub fn from_v2_code(code: u32) -> Self {
        OsDevTypes(match code {
            1 => Self::GPU,
            2 => Self::NETWORK,
            3 => Self::OPENFABRICS | Self::NETWORK,
            4 => Self::DMA,
            5 => Self::COPROC,
            _ => Self::STORAGE,
        })
    }
}

/// Attributes that depend on the object type.
#[derive(Clone, Debug, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ObjAttr {
    /// No type-specific attributes.
    #[default]
    None,
    /// NUMA node memory.
    Numa(NumaAttr),
    /// CPU cache or memory-side cache.
    Cache(CacheAttr),
    /// Group.
    Group(GroupAttr),
    /// PCI device.
    Pci(PciAttr),
    /// Bridge.
    Bridge(BridgeAttr),
    /// OS device.
    OsDev(OsDevTypes),
}

/// A name/value annotation, as hwloc's `infos`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Info {
    /// Key, such as `CPUModel`.
    pub name: String,
    /// Value.
    pub value: String,
}

/// Where an object sits in the level structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Depth {
    /// A normal level, 0 being the root.
    Normal(u32),
    /// The NUMA node special level (hwloc depth -3).
    #[doc(alias = "HWLOC_TYPE_DEPTH_NUMANODE")]
    NumaNode,
    /// The bridge special level (-4).
    #[doc(alias = "HWLOC_TYPE_DEPTH_BRIDGE")]
    Bridge,
    /// The PCI device special level (-5).
    #[doc(alias = "HWLOC_TYPE_DEPTH_PCI_DEVICE")]
    PciDevice,
    /// The OS device special level (-6).
    #[doc(alias = "HWLOC_TYPE_DEPTH_OS_DEVICE")]
    OsDevice,
    /// The Misc special level (-7).
    #[doc(alias = "HWLOC_TYPE_DEPTH_MISC")]
    Misc,
    /// The memory-side cache special level (-8).
    #[doc(alias = "HWLOC_TYPE_DEPTH_MEMCACHE")]
    MemCache,
    /// Not placed yet.
    #[default]
    Unknown,
}

impl Depth {
    /// hwloc's integer encoding of the depth.
    pub fn to_i32(self) -> i32 {
        match self {
            Depth::Normal(d) => d as i32,
            Depth::Unknown => -1,
            Depth::NumaNode => -3,
            Depth::Bridge => -4,
            Depth::PciDevice => -5,
            Depth::OsDevice => -6,
            Depth::Misc => -7,
            Depth::MemCache => -8,
        }
    }

    /// A depth from hwloc's integer encoding ([`Depth::to_i32`]); `None`
    /// for an encoding that names no level.
    pub fn from_i64(d: i64) -> Option<Depth> {
        Some(match d {
            d if d >= 0 => Depth::Normal(u32::try_from(d).ok()?),
            -3 => Depth::NumaNode,
            -4 => Depth::Bridge,
            -5 => Depth::PciDevice,
            -6 => Depth::OsDevice,
            -7 => Depth::Misc,
            -8 => Depth::MemCache,
            _ => return None,
        })
    }

    /// The special depth of a non-normal type.
    pub fn special_for(t: ObjType) -> Option<Depth> {
        Some(match t {
            ObjType::NUMANode => Depth::NumaNode,
            ObjType::MemCache => Depth::MemCache,
            ObjType::Bridge => Depth::Bridge,
            ObjType::PCIDevice => Depth::PciDevice,
            ObjType::OSDevice => Depth::OsDevice,
            ObjType::Misc => Depth::Misc,
            _ => return None,
        })
    }
}

/// One `<userdata>` element of an hwloc XML document, as read.
///
/// wloc does not interpret userdata: like hwloc's command-line tools it
/// keeps the element raw and writes it back unchanged.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct UserData {
    /// The `name` attribute, if any.
    pub name: Option<String>,
    /// Whether the content is base64 (`encoding="base64"`).
    pub base64: bool,
    /// The `length` attribute: the length in bytes of the data (decoded
    /// length for base64 content).
    pub length: u64,
    /// The text content, unescaped (still encoded when `base64`).
    pub content: String,
}

/// One object of the topology.
///
/// The descriptive fields are public.  Tree links (parent, children, depth,
/// logical index) are maintained by the [`Topology`](crate::Topology) and
/// read through accessors.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Object {
    /// Object type.
    pub obj_type: ObjType,
    /// Finer type name (`Cluster`, `HBM`, `NVSwitch`, ...).
    pub subtype: Option<String>,
    /// Index the operating system uses for it (`P#`), if any.
    pub os_index: Option<u32>,
    /// Name (OS device name, Misc name, ...).
    pub name: Option<String>,
    /// Type-specific attributes.
    pub attr: ObjAttr,
    /// Allowed PUs below; `None` for I/O and Misc objects.
    pub cpuset: Option<CpuSet>,
    /// All PUs below, including offline and disallowed ones.
    pub complete_cpuset: Option<CpuSet>,
    /// Allowed NUMA nodes near; `None` for I/O and Misc objects.
    pub nodeset: Option<NodeSet>,
    /// All NUMA nodes near, including disallowed ones.
    pub complete_nodeset: Option<NodeSet>,
    /// Name/value annotations.
    pub infos: Vec<Info>,
    /// Global persistent index, unique in the topology (never 0 once inserted).
    pub gp_index: u64,
    /// Total memory in bytes below this object (computed).
    pub total_memory: u64,
    /// `<userdata>` elements read from hwloc XML, kept raw so that they
    /// are written back as read (a thin list: most objects have none).
    pub userdata: ThinVec<UserData>,
    pub(crate) parent: Option<ObjId>,
    pub(crate) children: ThinVec<ObjId>,
    pub(crate) memory_children: ThinVec<ObjId>,
    pub(crate) io_children: ThinVec<ObjId>,
    pub(crate) misc_children: ThinVec<ObjId>,
    pub(crate) depth: Depth,
    pub(crate) logical_index: u32,
    pub(crate) sibling_rank: u32,
    pub(crate) symmetric_subtree: bool,
}

impl Object {
    /// A new detached object with no sets and default attributes for its type.
    pub fn new(obj_type: ObjType, os_index: Option<u32>) -> Self {
        let attr = match obj_type {
            ObjType::NUMANode => ObjAttr::Numa(NumaAttr::default()),
            ObjType::Group => ObjAttr::Group(GroupAttr::default()),
            ObjType::PCIDevice => ObjAttr::Pci(PciAttr::default()),
            ObjType::Bridge => ObjAttr::Bridge(BridgeAttr {
                upstream: BridgeUpstream::Host,
                domain: 0,
                secondary_bus: 0,
                subordinate_bus: 0,
                depth: 0,
            }),
            ObjType::OSDevice => ObjAttr::OsDev(OsDevTypes::default()),
            t if t.is_cache() || t == ObjType::MemCache => ObjAttr::Cache(CacheAttr {
                depth: t.cache_level().unwrap_or(1),
                kind: if t.is_icache() {
                    CacheKind::Instruction
                } else {
                    CacheKind::Unified
                },
                ..CacheAttr::default()
            }),
            _ => ObjAttr::None,
        };
        Object {
            obj_type,
            subtype: None,
            os_index,
            name: None,
            attr,
            cpuset: None,
            complete_cpuset: None,
            nodeset: None,
            complete_nodeset: None,
            infos: Vec::new(),
            gp_index: 0,
            total_memory: 0,
            parent: None,
            userdata: ThinVec::new(),
            children: ThinVec::new(),
            memory_children: ThinVec::new(),
            io_children: ThinVec::new(),
            misc_children: ThinVec::new(),
            depth: Depth::Unknown,
            logical_index: 0,
            sibling_rank: 0,
            symmetric_subtree: false,
        }
    }

    /// A new object of a normal type covering `cpuset`.
    pub fn with_cpuset(obj_type: ObjType, os_index: Option<u32>, cpuset: CpuSet) -> Self {
        let mut o = Object::new(obj_type, os_index);
        o.complete_cpuset = Some(cpuset.clone());
        o.cpuset = Some(cpuset);
        o
    }

    /// The kind (normal, memory, I/O or misc) of this object.
    #[inline]
    pub fn kind(&self) -> ObjKind {
        self.obj_type.kind()
    }

    /// The parent, `None` for the root.
    #[inline]
    pub fn parent(&self) -> Option<ObjId> {
        self.parent
    }
    /// Normal children, ordered by cpuset.
    #[inline]
    pub fn children(&self) -> &[ObjId] {
        &self.children
    }
    /// Memory children (NUMA nodes, memory-side caches).
    #[inline]
    pub fn memory_children(&self) -> &[ObjId] {
        &self.memory_children
    }
    /// Normal then memory children, copied so that the tree may change
    /// while they are visited.
    pub(crate) fn normal_and_memory_children(&self) -> Vec<ObjId> {
        self.children
            .iter()
            .chain(&self.memory_children)
            .copied()
            .collect()
    }
    /// I/O children.
    #[inline]
    pub fn io_children(&self) -> &[ObjId] {
        &self.io_children
    }
    /// Misc children.
    #[inline]
    pub fn misc_children(&self) -> &[ObjId] {
        &self.misc_children
    }
    /// Normal arity.
    #[inline]
    pub fn arity(&self) -> usize {
        self.children.len()
    }
    /// Depth of the object's level.
    #[inline]
    pub fn depth(&self) -> Depth {
        self.depth
    }
    /// Index among the objects of the same level, left to right.
    #[inline]
    pub fn logical_index(&self) -> u32 {
        self.logical_index
    }
    /// Index among the parent's children of the same kind.
    #[inline]
    pub fn sibling_rank(&self) -> u32 {
        self.sibling_rank
    }
    /// Whether all children subtrees below are identical in shape.
    pub fn symmetric_subtree(&self) -> bool {
        self.symmetric_subtree
    }

    /// The cache attributes, for caches and memory-side caches.
    pub fn cache(&self) -> Option<&CacheAttr> {
        match &self.attr {
            ObjAttr::Cache(c) => Some(c),
            _ => None,
        }
    }
    /// The NUMA attributes, for NUMA nodes.
    pub fn numa(&self) -> Option<&NumaAttr> {
        match &self.attr {
            ObjAttr::Numa(n) => Some(n),
            _ => None,
        }
    }
    /// The group attributes, for groups.
    pub fn group(&self) -> Option<&GroupAttr> {
        match &self.attr {
            ObjAttr::Group(g) => Some(g),
            _ => None,
        }
    }
    /// The PCI identity of PCI devices and PCI-to-PCI bridges.
    pub fn pci(&self) -> Option<&PciAttr> {
        match &self.attr {
            ObjAttr::Pci(p) => Some(p),
            ObjAttr::Bridge(BridgeAttr {
                upstream: BridgeUpstream::Pci(p),
                ..
            }) => Some(p),
            _ => None,
        }
    }
    /// The bridge attributes, for bridges.
    pub fn bridge(&self) -> Option<&BridgeAttr> {
        match &self.attr {
            ObjAttr::Bridge(b) => Some(b),
            _ => None,
        }
    }
    /// OS device kinds, for OS devices.
    pub fn osdev_types(&self) -> Option<OsDevTypes> {
        match &self.attr {
            ObjAttr::OsDev(t) => Some(*t),
            _ => None,
        }
    }

    /// Value of the first info with this name (`hwloc_obj_get_info_by_name`).
    #[doc(alias = "hwloc_obj_get_info_by_name")]
    pub fn info(&self, name: &str) -> Option<&str> {
        self.infos
            .iter()
            .find(|i| i.name == name)
            .map(|i| i.value.as_str())
    }
    /// Appends an info (duplicates are allowed, as in hwloc's
    /// `hwloc_obj_add_info`).
    #[doc(alias = "hwloc_obj_add_info")]
    pub fn add_info(&mut self, name: &str, value: &str) {
        self.infos.push(Info {
            name: name.into(),
            value: value.into(),
        });
    }
    /// Sets an info, replacing the first one with the same name.
    pub fn set_info(&mut self, name: &str, value: &str) {
        match self.infos.iter_mut().find(|i| i.name == name) {
            Some(i) => i.value = value.into(),
            None => self.add_info(name, value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every object of every topology pays this size, so growth is a
    /// decision (it was 400 bytes before the child lists became ThinVecs;
    /// 336 before `userdata`, a ThinVec: one pointer, no allocation for
    /// the objects without userdata).
    #[test]
    fn objects_stay_small() {
        assert!(core::mem::size_of::<Object>() <= 344);
    }
}
