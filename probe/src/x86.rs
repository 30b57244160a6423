//! x86 CPUID decoding into a topology, with the rules of hwloc's x86 backend.
//!
//! Discovery has two steps, as in hwloc:
//!
//! 1. every PU is asked for its leaves and the answers are reduced to a
//!    `ProcInfo`: APIC id, the ids of the package, die, module, tile,
//!    core, ... it belongs to, its caches with an id shared by the PUs that
//!    share the cache, vendor and model strings, hybrid core type;
//! 2. PUs with equal ids become one object (ids are only compared within a
//!    package), inserted by cpuset: packages (with the CPU infos), groups
//!    (AMD compute units and complexes, Intel modules and tiles, unknown
//!    extended-topology levels), dies, cores, PUs and caches from the
//!    outermost level in.  Hybrid processors get CPU kinds.
//!
//! Which leaf is trusted for what depends on the vendor:
//!
//! | information | Intel / Zhaoxin | AMD / Hygon |
//! | --- | --- | --- |
//! | package | leaf 1 (legacy), then 0x1F or 0xB | leaf 1, 0x80000008 (without x2APIC), then 0x80000026 or 0xB (AMD only) |
//! | core | leaf 4 subleaf 0, then 0x1F or 0xB | 0x80000008, 0x8000001E (family 17h+), then 0x80000026 or 0xB (AMD only) |
//! | die, module, tile, complex | 0x1F | 0x80000026 (AMD: die, complex) |
//! | APIC id | leaf 1, then 0x1F or 0xB | leaf 1, 0x8000001E, then 0x80000026 or 0xB (AMD only) |
//! | compute unit | | 0x8000001E (families 15h and 16h) |
//! | caches | leaf 4 | 0x8000001D with TOPOEXT, else 0x80000005/6 |
//! | hybrid | 0x1A | 0x80000026 |
//!
//! Every loop over subleaves is bounded and every shift is checked, so any
//! register values give a topology (or a clear error), never a panic.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use raw_cpuid::{CpuId, CpuIdResult};
use wloc_core::object::{CacheAttr, CacheKind, GroupAttr, Info, group_kind};
use wloc_core::{CpuSet, NodeSet, ObjAttr, ObjType, Object, Topology, TopologyError};

use crate::error::ProbeError;
use crate::source::CpuidSource;

/// Largest OS index accepted for a PU (cpusets stay small).
pub const MAX_OS_INDEX: u32 = 1 << 20;

/// Group kinds used by this backend beyond the shared
/// [`wloc_core::object::group_kind`] values (hwloc's numbering).
pub mod group_kind_x86 {
    /// AMD core complex (CCX), from leaf 0x80000026.
    pub const AMD_COMPLEX: u32 = 121;
}

/// The settings hwloc's x86 backend reads from its environment, by the
/// names a host passes them under (hwloc's variable names without
/// `HWLOC_`): one home for the names, shared by the hosts that read the
/// environment and the x86 component that reads its configuration.
pub mod setting {
    /// `HWLOC_X86_TOPOEXT_NUMANODES`: NUMA nodes from the node ids of
    /// AMD's topology extensions (leaf 0x8000001E).
    pub const TOPOEXT_NUMANODES: &str = "X86_TOPOEXT_NUMANODES";
    /// Every setting [`super::X86Options::from_lookup`] asks for.
    pub const NAMES: &[&str] = &[TOPOEXT_NUMANODES];
}

/// What the environment changes in x86 discovery (hwloc's `HWLOC_X86_*`
/// variables).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct X86Options {
    /// Make NUMA nodes from the node ids AMD and Hygon processors give in
    /// leaf 0x8000001E (`HWLOC_X86_TOPOEXT_NUMANODES=1`), one per node id
    /// of a package, without memory sizes.
    pub topoext_numanodes: bool,
}

impl X86Options {
    /// The options a lookup of the [`setting`] names gives.  hwloc
    /// documents `HWLOC_X86_TOPOEXT_NUMANODES=1` as enabling the NUMA
    /// nodes and `0` as the default: a value whose leading integer is not
    /// 0 enables them (as `atoi` reads it), anything else does not.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<alloc::string::String>) -> Self {
        X86Options {
            topoext_numanodes: lookup(setting::TOPOEXT_NUMANODES).is_some_and(|v| atoi(&v) != 0),
        }
    }
}

/// C's `atoi`: optional blanks and sign, then the leading digits (0 when
/// there are none; saturating instead of overflowing).
fn atoi(s: &str) -> i64 {
    let s = s.trim_start();
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let v = digits
        .bytes()
        .take_while(u8::is_ascii_digit)
        .fold(0i64, |acc, d| {
            acc.saturating_mul(10).saturating_add(i64::from(d - b'0'))
        });
    if neg { -v } else { v }
}

/// Id value meaning "not reported" (hwloc's `(unsigned)-1`).
const UNKNOWN: u32 = u32::MAX;

/// Bound on the subleaves of cache leaves (4 and 0x8000001D).
const MAX_CACHE_SUBLEAVES: u32 = 16;
/// Bound on the subleaves of extended topology leaves (0xB, 0x1F, 0x80000026).
const MAX_TOPO_SUBLEAVES: u32 = 32;

// Indexes of `ProcInfo::ids`.
const PKG: usize = 0;
const CORE: usize = 1;
/// AMD node: not turned into NUMA nodes, but it tells cores apart
/// (Hygon repeats core ids in each node of a package).
const NODE: usize = 2;
const UNIT: usize = 3;
const TILE: usize = 4;
const MODULE: usize = 5;
const DIE: usize = 6;
const COMPLEX: usize = 7;
const ID_COUNT: usize = 8;

const LEAF_EXT_TOPO_V1: u32 = 0x0b;
const LEAF_EXT_TOPO_V2: u32 = 0x1f;
const LEAF_AMD_EXT_TOPO: u32 = 0x8000_0026;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Vendor {
    Intel,
    Amd,
    Zhaoxin,
    Hygon,
    Unknown,
}

impl Vendor {
    fn from_name(name: &str) -> Vendor {
        match name {
            "GenuineIntel" => Vendor::Intel,
            "AuthenticAMD" => Vendor::Amd,
            "CentaurHauls" | "  Shanghai  " => Vendor::Zhaoxin,
            "HygonGenuine" => Vendor::Hygon,
            _ => Vendor::Unknown,
        }
    }
    fn amd_like(self) -> bool {
        matches!(self, Vendor::Amd | Vendor::Hygon)
    }
    fn intel_like(self) -> bool {
        matches!(self, Vendor::Intel | Vendor::Zhaoxin)
    }
}

/// What every PU shares: read from the first PU, plus flags raised while
/// looking at PUs.
#[derive(Debug)]
struct Machine {
    highest: u32,
    highest_ext: u32,
    vendor: Vendor,
    x2apic: bool,
    topoext: bool,
    hybrid_flag: bool,
    want_caches: bool,
    is_knl: bool,
    is_hybrid: bool,
    found_unit: bool,
    found_complex: bool,
    found_module: bool,
    found_tile: bool,
    found_die: bool,
}

#[derive(Clone, Debug)]
struct CacheInfo {
    kind: CacheKind,
    level: u32,
    nbthreads_sharing: u32,
    cacheid: u32,
    linesize: u32,
    ways: i32,
    size: u64,
    inclusive: bool,
}

/// What one PU says about itself.
#[derive(Clone, Debug)]
struct ProcInfo {
    apicid: u32,
    ids: [u32; ID_COUNT],
    /// One entry per extended-topology level: the id for levels of unknown
    /// type, [`UNKNOWN`] for the others.  Empty without such levels.
    otherids: Vec<u32>,
    caches: Vec<CacheInfo>,
    vendor: String,
    model: String,
    stepping: u32,
    model_number: u32,
    family: u32,
    hybrid_core_type: u32,
    power_efficiency_ranking: u32,
}

impl ProcInfo {
    fn new() -> Self {
        ProcInfo {
            apicid: 0,
            ids: [UNKNOWN; ID_COUNT],
            otherids: Vec::new(),
            caches: Vec::new(),
            vendor: String::new(),
            model: String::new(),
            stepping: 0,
            model_number: 0,
            family: 0,
            hybrid_core_type: 0,
            power_efficiency_ranking: 0,
        }
    }
}

/// Index of the most significant set bit, from 1 (`fls(0) == 0`).
fn fls(x: u32) -> u32 {
    32 - x.leading_zeros()
}

/// Index of the least significant set bit, from 1 (`ffs(0) == 0`).
fn ffs(x: u32) -> u32 {
    if x == 0 { 0 } else { x.trailing_zeros() + 1 }
}

/// A NUL-terminated byte string as text.
fn c_string(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

fn regs_bytes(regs: &[u32]) -> Vec<u8> {
    regs.iter().flat_map(|r| r.to_le_bytes()).collect()
}

/// One PU's view of the CPUID instruction.
struct Pu<'a> {
    src: &'a dyn CpuidSource,
    pu: usize,
}

impl Pu<'_> {
    fn cpuid(&self, leaf: u32, subleaf: u32) -> [u32; 4] {
        self.src.cpuid(self.pu, leaf, subleaf)
    }
}

/// Reads the machine-wide facts from the first PU.  `None` when CPUID
/// has no leaf 1.
fn read_machine(src: &dyn CpuidSource, topo: &Topology) -> Option<Machine> {
    let reader = move |leaf: u32, subleaf: u32| {
        let r = src.cpuid(0, leaf, subleaf);
        CpuIdResult {
            eax: r[0],
            ebx: r[1],
            ecx: r[2],
            edx: r[3],
        }
    };
    let cpuid = CpuId::with_cpuid_reader(reader);
    let highest = src.cpuid(0, 0, 0)[0];
    if highest < 1 {
        return None;
    }
    let vendor = cpuid
        .get_vendor_info()
        .map_or(Vendor::Unknown, |v| Vendor::from_name(v.as_str()));
    let x2apic = cpuid.get_feature_info().is_some_and(|f| f.has_x2apic());
    let highest_ext = src.cpuid(0, 0x8000_0000, 0)[0];
    let hybrid_flag = highest >= 7 && src.cpuid(0, 7, 0)[3] & (1 << 15) != 0;
    // TOPOEXT is read raw: raw-cpuid only reports it for AMD, and Hygon has it too.
    let topoext = vendor != Vendor::Intel
        && highest_ext >= 0x8000_0001
        && src.cpuid(0, 0x8000_0001, 0)[2] & (1 << 22) != 0;
    let want_caches = ObjType::CPU_CACHES.into_iter().any(|t| topo.keeps_type(t));
    Some(Machine {
        highest,
        highest_ext,
        vendor,
        x2apic,
        topoext,
        hybrid_flag,
        want_caches,
        is_knl: false,
        is_hybrid: false,
        found_unit: false,
        found_complex: false,
        found_module: false,
        found_tile: false,
        found_die: false,
    })
}

fn cache_kind(code: u32) -> CacheKind {
    match code {
        1 => CacheKind::Data,
        2 => CacheKind::Instruction,
        _ => CacheKind::Unified,
    }
}

/// Decodes one subleaf of the deterministic cache leaves (4 and
/// 0x8000001D share the layout).
fn decode_cache_subleaf(r: [u32; 4]) -> CacheInfo {
    let [eax, ebx, ecx, edx] = r;
    let linesize = (ebx & 0xfff) + 1;
    let partitions = ((ebx >> 12) & 0x3ff) + 1;
    let ways = ((ebx >> 22) & 0x3ff) + 1;
    // hwloc keeps the set count in 32 bits: 0xffffffff + 1 sets is 0.
    let sets = ecx.wrapping_add(1);
    CacheInfo {
        kind: cache_kind(eax & 0x1f),
        level: (eax >> 5) & 0x7,
        nbthreads_sharing: ((eax >> 14) & 0xfff) + 1,
        cacheid: 0,
        linesize,
        ways: if eax & (1 << 9) != 0 { -1 } else { ways as i32 },
        // At most 2^12 * 2^10 * 2^10 * (2^32 - 1): fits in 64 bits.
        size: u64::from(linesize) * u64::from(partitions) * u64::from(ways) * u64::from(sets),
        inclusive: edx & 0x2 != 0,
    }
}

/// Caches of leaf 0x8000001D (AMD topology extensions).
fn read_amd_caches_topoext(p: &Pu, info: &mut ProcInfo) {
    for sub in 0..MAX_CACHE_SUBLEAVES {
        let r = p.cpuid(0x8000_001d, sub);
        if r[0] & 0x1f == 0 {
            break;
        }
        info.caches.push(decode_cache_subleaf(r));
    }
}

/// One cache of the legacy AMD leaves 0x80000005/6.
fn legacy_amd_cache(info: &mut ProcInfo, level: u32, kind: CacheKind, sharing: u32, reg: u32) {
    let size = match level {
        1 => u64::from(reg >> 24) << 10,
        2 => u64::from(reg >> 16) << 10,
        _ => u64::from(reg >> 18) << 19,
    };
    if size == 0 {
        return;
    }
    const WAYS: [i32; 16] = [0, 1, 2, 0, 4, 0, 8, 0, 16, 0, 32, 48, 64, 96, 128, -1];
    let ways = if level == 1 {
        match (reg >> 16) & 0xff {
            0xff => -1,
            w => w as i32,
        }
    } else {
        WAYS[((reg >> 12) & 0xf) as usize]
    };
    info.caches.push(CacheInfo {
        kind,
        level,
        nbthreads_sharing: sharing,
        cacheid: 0,
        linesize: reg & 0xff,
        ways,
        size,
        // K8 to K10 caches are exclusive.
        inclusive: false,
    });
}

/// Caches of the legacy AMD leaves 0x80000005 (L1) and 0x80000006 (L2, L3).
fn read_amd_caches_legacy(p: &Pu, info: &mut ProcInfo, legacy_max_log_proc: u32) {
    let l1 = p.cpuid(0x8000_0005, 0);
    legacy_amd_cache(info, 1, CacheKind::Data, 1, l1[2]);
    legacy_amd_cache(info, 1, CacheKind::Instruction, 1, l1[3]);
    let l23 = p.cpuid(0x8000_0006, 0);
    if l23[2] & 0xf000 != 0 {
        legacy_amd_cache(info, 2, CacheKind::Unified, 1, l23[2]);
    }
    if l23[3] & 0xf000 != 0 {
        // The L3 is shared by the whole package.
        legacy_amd_cache(info, 3, CacheKind::Unified, legacy_max_log_proc, l23[3]);
    }
}

/// Caches of leaf 4 (Intel deterministic cache parameters).
fn read_intel_caches(p: &Pu, m: &Machine, info: &mut ProcInfo) {
    for sub in 0..MAX_CACHE_SUBLEAVES {
        let r = p.cpuid(4, sub);
        if r[0] & 0x1f == 0 {
            break;
        }
        if m.is_knl && (r[0] >> 5) & 0x7 == 3 {
            // Knights Landing reports an L3 of size 0 shared by the whole
            // machine: ignore it (and whatever follows).
            break;
        }
        info.caches.push(decode_cache_subleaf(r));
    }
}

/// Package and core ids of leaf 0x80000008 (AMD without x2APIC).
fn read_amd_cores_legacy(p: &Pu, info: &mut ProcInfo) {
    let ecx = p.cpuid(0x8000_0008, 0)[2];
    let id_size = (ecx >> 12) & 0xf;
    let max_cores = if id_size == 0 {
        (ecx & 0xff) + 1
    } else {
        1 << id_size
    };
    // No SMT in this legacy leaf: the logical processor id is the core id.
    info.ids[PKG] = info.apicid / max_cores;
    info.ids[CORE] = info.apicid % max_cores;
}

/// Extended APIC id, node and compute unit or core of leaf 0x8000001E.
fn read_amd_cores_topoext(p: &Pu, m: &mut Machine, info: &mut ProcInfo) {
    let [eax, ebx, ecx, _] = p.cpuid(0x8000_001e, 0);
    info.apicid = eax;
    // Family 16h leaves the node id reserved.
    info.ids[NODE] = if info.family == 0x16 { 0 } else { ecx & 0xff };
    if info.family <= 0x16 {
        // Families 15h and 16h: compute units; the core id comes from 0x80000008.
        info.ids[UNIT] = ebx & 0xff;
        m.found_unit = true;
    } else {
        info.ids[CORE] = ebx & 0xff;
    }
}

/// Levels of an extended topology leaf: 0xB and 0x1F (Intel, Zhaoxin,
/// AMD without 0x80000026) or 0x80000026 (AMD).
fn read_extended_topo(p: &Pu, m: &mut Machine, info: &mut ProcInfo, leaf: u32) {
    let mut levels: Vec<[u32; 4]> = Vec::new();
    for sub in 0..MAX_TOPO_SUBLEAVES {
        let r = p.cpuid(leaf, sub);
        // Intel ends the list with an invalid level type, AMD with a level
        // of zero processors: stop at whichever comes first.
        if r[1] & 0xffff == 0 || r[2] & 0xff00 == 0 {
            break;
        }
        levels.push(r);
    }
    let Some(last) = levels.last() else {
        return;
    };
    // Ids are taken up to the package bits, so that they are unique
    // within the package.
    let package_shift = last[0] & 0x1f;
    info.otherids = vec![UNKNOWN; levels.len()];
    let mut shift = 0u32;
    let mut apic_id = 0u32;
    for (level, &[eax, ebx, ecx, edx]) in levels.iter().enumerate() {
        let next_shift = eax & 0x1f;
        let level_type = (ecx >> 8) & 0xff;
        apic_id = edx;
        let id = if package_shift > shift {
            (apic_id >> shift) & ((1u32 << (package_shift - shift)) - 1)
        } else {
            0
        };
        info.apicid = apic_id;
        let amd = leaf == LEAF_AMD_EXT_TOPO;
        match (level_type, amd) {
            (1, _) => {
                if amd {
                    // Heterogeneous core topology: hybrid, with an
                    // efficiency ranking when bit 29 says it is valid.
                    if eax & (1 << 30) != 0 {
                        m.is_hybrid = true;
                        if eax & (1 << 29) != 0 {
                            info.power_efficiency_ranking = (ebx >> 16) & 0xff;
                        }
                    }
                    info.hybrid_core_type = (ebx >> 28) & 0xf;
                }
            }
            (2, _) => info.ids[CORE] = id,
            (3, true) => {
                m.found_complex = true;
                info.ids[COMPLEX] = id;
            }
            (3, false) => {
                m.found_module = true;
                info.ids[MODULE] = id;
            }
            (4, true) => {
                m.found_die = true;
                info.ids[DIE] = id;
            }
            (4, false) => {
                m.found_tile = true;
                info.ids[TILE] = id;
            }
            (5, false) => {
                m.found_die = true;
                info.ids[DIE] = id;
            }
            // Intel die-groups (6) and anything newer are kept as groups
            // of unknown kind, as hwloc does.
            _ => info.otherids[level] = apic_id >> shift,
        }
        shift = next_shift;
    }
    info.apicid = apic_id;
    info.ids[PKG] = apic_id >> shift;
}

/// Everything one PU tells about itself.
fn look_proc(p: &Pu, m: &mut Machine) -> ProcInfo {
    let mut info = ProcInfo::new();
    let vendor = m.vendor;

    // Leaf 1: initial APIC id, legacy package and logical processor ids.
    let [eax, ebx, _, edx] = p.cpuid(1, 0);
    info.apicid = ebx >> 24;
    let max_log_proc_field = (ebx >> 16) & 0xff;
    let legacy_max_log_proc = if edx & (1 << 28) != 0 && max_log_proc_field != 0 {
        1u32 << fls(max_log_proc_field - 1)
    } else {
        1
    };
    info.ids[PKG] = info.apicid / legacy_max_log_proc;
    let legacy_log_proc_id = info.apicid % legacy_max_log_proc;

    // Family, model and stepping, with each vendor's extension rules.
    let model = (eax >> 4) & 0xf;
    let ext_model = (eax >> 16) & 0xf;
    let family = (eax >> 8) & 0xf;
    let ext_family = (eax >> 20) & 0xff;
    info.family = if (vendor == Vendor::Intel || vendor.amd_like()) && family == 0xf {
        family + ext_family
    } else {
        family
    };
    info.model_number = if (vendor == Vendor::Intel && (family == 0x6 || family == 0xf))
        || (vendor.amd_like() && family == 0xf)
        || (vendor == Vendor::Zhaoxin && (family == 0x6 || family == 0x7))
    {
        model + (ext_model << 4)
    } else {
        model
    };
    info.stepping = eax & 0xf;
    if vendor == Vendor::Intel
        && info.family == 0x6
        && (info.model_number == 0x57 || info.model_number == 0x85)
    {
        // Knights Landing and Knights Mill.
        m.is_knl = true;
    }

    let [_, vb, vc, vd] = p.cpuid(0, 0);
    info.vendor = c_string(&regs_bytes(&[vb, vd, vc]));
    if m.highest_ext >= 0x8000_0004 {
        let mut regs = Vec::with_capacity(12);
        for leaf in 0x8000_0002..=0x8000_0004 {
            regs.extend_from_slice(&p.cpuid(leaf, 0));
        }
        info.model = c_string(&regs_bytes(&regs));
    }

    // Legacy core id from the first cache of leaf 4.
    if !vendor.amd_like() && m.highest >= 4 {
        let eax = p.cpuid(4, 0)[0];
        if eax & 0x1f != 0 {
            let max_cores = ((eax >> 26) & 0x3f) + 1;
            // Some virtual machines report more cores than logical processors.
            if let Some(core) = legacy_log_proc_id.checked_div(legacy_max_log_proc / max_cores) {
                info.ids[CORE] = core;
            }
        }
    }

    // Intel hybrid core type.
    if m.highest >= 0x1a && m.hybrid_flag {
        let eax = p.cpuid(0x1a, 0)[0];
        info.hybrid_core_type = eax >> 24;
        m.is_hybrid = true;
    }

    // The hierarchy of threads, cores, dies, ... from the vendor's leaves.
    if !vendor.intel_like() && m.highest_ext >= 0x8000_0008 && !m.x2apic {
        read_amd_cores_legacy(p, &mut info);
    }
    if !vendor.intel_like() && m.topoext {
        read_amd_cores_topoext(p, m, &mut info);
    }
    if vendor == Vendor::Amd && m.highest_ext >= LEAF_AMD_EXT_TOPO {
        read_extended_topo(p, m, &mut info, LEAF_AMD_EXT_TOPO);
    } else if vendor.intel_like() && m.highest >= LEAF_EXT_TOPO_V2 {
        read_extended_topo(p, m, &mut info, LEAF_EXT_TOPO_V2);
    } else if (vendor.intel_like() || vendor == Vendor::Amd)
        && m.highest >= LEAF_EXT_TOPO_V1
        && m.x2apic
    {
        read_extended_topo(p, m, &mut info, LEAF_EXT_TOPO_V1);
    }

    if m.want_caches {
        if !vendor.intel_like() && m.topoext {
            read_amd_caches_topoext(p, &mut info);
        } else if !vendor.intel_like() && m.highest_ext >= 0x8000_0006 {
            read_amd_caches_legacy(p, &mut info, legacy_max_log_proc);
        }
        if !vendor.amd_like() && m.highest >= 4 {
            read_intel_caches(p, m, &mut info);
        }
        let (apicid, family, model_number) = (info.apicid, info.family, info.model_number);
        for c in &mut info.caches {
            cache_id_and_quirks(c, vendor, apicid, family, model_number, legacy_max_log_proc);
        }
    }
    info
}

/// Id of a package's L3 half: the half within the package, plus two per
/// previous package (hwloc's unsigned arithmetic, wrapping on absurd ids).
fn split_l3_id(apicid: u32, legacy_max_log_proc: u32, sharing: u32) -> u32 {
    ((apicid % legacy_max_log_proc) / sharing)
        .wrapping_add((apicid / legacy_max_log_proc).wrapping_mul(2))
}

/// Computes the id that PUs sharing a cache have in common, and fixes
/// caches some processors describe wrongly.
fn cache_id_and_quirks(
    c: &mut CacheInfo,
    vendor: Vendor,
    apicid: u32,
    family: u32,
    model: u32,
    legacy_max_log_proc: u32,
) {
    c.cacheid = apicid / c.nbthreads_sharing;
    match vendor {
        Vendor::Intel => {
            // Sharing PUs have the same APIC id once the bits below the
            // sharing count (rounded up to a power of two) are cleared.
            let bits = fls(c.nbthreads_sharing - 1);
            c.cacheid = apicid & !((1u32 << bits) - 1);
        }
        Vendor::Amd if family >= 0x17 && c.level == 3 => {
            // The L3 is shared by 8 (family 17h) or 16 (19h) APIC ids even
            // when fewer cores are enabled and reported.
            let mut n = c.nbthreads_sharing;
            if n & (n - 1) != 0 {
                n = 1 << (1 + ffs(n));
            }
            c.cacheid = apicid / n;
        }
        Vendor::Amd
            if family == 0x10
                && model == 0x9
                && c.level == 3
                && (c.ways == -1 || c.ways % 2 == 0)
                && c.nbthreads_sharing >= 8 =>
        {
            // Magny-Cours: the L3 (and its ways) is split in two halves,
            // and APIC ids of each half are not aligned on its size.
            if c.nbthreads_sharing == 16 {
                c.nbthreads_sharing = 12;
            }
            c.nbthreads_sharing /= 2;
            c.size /= 2;
            if c.ways != -1 {
                c.ways /= 2;
            }
            c.cacheid = split_l3_id(apicid, legacy_max_log_proc, c.nbthreads_sharing);
        }
        Vendor::Amd
            if family == 0x15
                && (model == 0x1 || model == 0x2)
                && c.level == 3
                && c.nbthreads_sharing == 6 =>
        {
            // Bulldozer and Piledriver 12-core packages: same APIC id
            // layout as Magny-Cours.
            c.cacheid = split_l3_id(apicid, legacy_max_log_proc, c.nbthreads_sharing);
        }
        Vendor::Hygon if family == 0x18 && c.level == 3 && c.nbthreads_sharing == 6 => {
            // The L3 is shared by 8 APIC ids even when only 6 are enabled.
            c.cacheid = apicid / 8;
        }
        _ => {}
    }
}

/// Groups PUs by key, in the order of their first PU: the same groups, in
/// the same order, as hwloc's scans for "all later PUs with the same ids".
fn group_by<K: Ord + Clone>(
    items: impl Iterator<Item = (usize, K)>,
    os: &[u32],
) -> Vec<(K, CpuSet, usize)> {
    let mut index: BTreeMap<K, usize> = BTreeMap::new();
    let mut groups: Vec<(K, CpuSet, usize)> = Vec::new();
    for (pu, key) in items {
        match index.get(&key) {
            Some(&g) => groups[g].1.set(os[pu]),
            None => {
                index.insert(key.clone(), groups.len());
                groups.push((key, CpuSet::from_index(os[pu]), pu));
            }
        }
    }
    groups
}

fn os_index(id: u32) -> Option<u32> {
    (id != UNKNOWN).then_some(id)
}

/// Inserts an object; one that conflicts with the tree (an intersection
/// without inclusion, from inconsistent ids) is dropped, as hwloc drops it.
fn insert(topo: &mut Topology, obj: Object) -> Result<(), ProbeError> {
    match topo.insert_by_cpuset(obj) {
        Ok(_) | Err(TopologyError::Intersection { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Appends the CPU description infos, in hwloc's order.
fn add_cpu_infos(obj: &mut Object, info: &ProcInfo) {
    if !info.vendor.is_empty() {
        obj.set_info("CPUVendor", &info.vendor);
    }
    obj.set_info("CPUFamilyNumber", &alloc::format!("{}", info.family));
    obj.set_info("CPUModelNumber", &alloc::format!("{}", info.model_number));
    let model = info.model.trim_start_matches(' ');
    if !model.is_empty() {
        obj.set_info("CPUModel", model);
    }
    obj.set_info("CPUStepping", &alloc::format!("{}", info.stepping));
}

/// Groups of PUs sharing an id of `ids[which]` within a package.
fn add_groups(
    topo: &mut Topology,
    infos: &[ProcInfo],
    os: &[u32],
    which: usize,
    subtype: &str,
    kind: u32,
) -> Result<(), ProbeError> {
    let keyed = infos
        .iter()
        .enumerate()
        .filter(|(_, p)| p.ids[which] != UNKNOWN)
        .map(|(i, p)| (i, (p.ids[PKG], p.ids[which])));
    for ((_, id), set, _) in group_by(keyed, os) {
        let mut g = Object::with_cpuset(ObjType::Group, os_index(id), set);
        g.subtype = Some(subtype.into());
        g.attr = ObjAttr::Group(GroupAttr {
            kind,
            ..GroupAttr::default()
        });
        insert(topo, g)?;
    }
    Ok(())
}

/// NUMA nodes from the node ids of leaf 0x8000001E, one per node id of
/// a package (PUs without one are left out), as hwloc's x86 backend makes
/// them with `HWLOC_X86_TOPOEXT_NUMANODES`: the node's OS index is the
/// id, its memory unknown.
fn add_topoext_numanodes(
    topo: &mut Topology,
    infos: &[ProcInfo],
    os: &[u32],
) -> Result<(), ProbeError> {
    let keyed = infos
        .iter()
        .enumerate()
        .filter(|(_, p)| p.ids[NODE] != UNKNOWN)
        .map(|(i, p)| (i, (p.ids[PKG], p.ids[NODE])));
    for ((_, id), set, _) in group_by(keyed, os) {
        let mut node = Object::new(ObjType::NUMANode, Some(id));
        node.nodeset = Some(NodeSet::from_index(id));
        node.complete_cpuset = Some(set.clone());
        node.cpuset = Some(set);
        insert(topo, node)?;
    }
    Ok(())
}

/// Builds the objects from what the PUs said.
fn summarize(
    topo: &mut Topology,
    m: &Machine,
    opts: &X86Options,
    infos: &[ProcInfo],
    os: &[u32],
) -> Result<(), ProbeError> {
    let all = || infos.iter().enumerate();

    if topo.keeps_type(ObjType::Package) {
        for (id, set, first) in group_by(all().map(|(i, p)| (i, p.ids[PKG])), os) {
            let mut pkg = Object::with_cpuset(ObjType::Package, os_index(id), set);
            add_cpu_infos(&mut pkg, &infos[first]);
            insert(topo, pkg)?;
        }
    }

    // NUMA nodes cannot be filtered out.
    if opts.topoext_numanodes {
        add_topoext_numanodes(topo, infos, os)?;
    }

    if topo.keeps_type(ObjType::Group) {
        // hwloc looks for complexes only when compute units were found,
        // which no processor reports together; keep the same rule.
        if m.found_unit {
            add_groups(
                topo,
                infos,
                os,
                COMPLEX,
                "Complex",
                group_kind_x86::AMD_COMPLEX,
            )?;
        }
        if m.found_unit {
            add_groups(
                topo,
                infos,
                os,
                UNIT,
                "Compute Unit",
                group_kind::AMD_COMPUTE_UNIT,
            )?;
        }
        if m.found_module {
            add_groups(topo, infos, os, MODULE, "Module", group_kind::INTEL_MODULE)?;
        }
        if m.found_tile {
            add_groups(topo, infos, os, TILE, "Tile", group_kind::INTEL_TILE)?;
        }
        // Levels of unknown type, outermost first, as the last PU lists them.
        if let Some(last) = infos.last() {
            for level in (0..last.otherids.len()).rev() {
                if last.otherids[level] == UNKNOWN {
                    continue;
                }
                let keyed = all()
                    .filter(|(_, p)| level < p.otherids.len())
                    .map(|(i, p)| (i, p.otherids[level]));
                for (id, set, _) in group_by(keyed, os) {
                    let mut g = Object::with_cpuset(ObjType::Group, os_index(id), set);
                    g.attr = ObjAttr::Group(GroupAttr {
                        kind: group_kind::INTEL_EXTTOPOENUM_UNKNOWN,
                        subkind: level as u32,
                        ..GroupAttr::default()
                    });
                    insert(topo, g)?;
                }
            }
        }
    }

    if m.found_die && topo.keeps_type(ObjType::Die) {
        // hwloc 3.0 drops a die that covers its whole package (AMD parts
        // whose complexes share one die, or one die per package on Intel):
        // it adds no structure.  Without packages, such a die is kept.
        let packages: BTreeMap<u32, CpuSet> = if topo.keeps_type(ObjType::Package) {
            group_by(all().map(|(i, p)| (i, p.ids[PKG])), os)
                .into_iter()
                .map(|(id, set, _)| (id, set))
                .collect()
        } else {
            BTreeMap::new()
        };
        let keyed = all()
            .filter(|(_, p)| p.ids[DIE] != UNKNOWN)
            .map(|(i, p)| (i, (p.ids[PKG], p.ids[DIE])));
        for ((pkg, id), set, _) in group_by(keyed, os) {
            if packages.get(&pkg) == Some(&set) {
                continue;
            }
            insert(topo, Object::with_cpuset(ObjType::Die, os_index(id), set))?;
        }
    }

    if topo.keeps_type(ObjType::Core) {
        let keyed = all()
            .filter(|(_, p)| p.ids[CORE] != UNKNOWN)
            .map(|(i, p)| (i, (p.ids[PKG], p.ids[NODE], p.ids[CORE])));
        for ((_, _, id), set, _) in group_by(keyed, os) {
            insert(topo, Object::with_cpuset(ObjType::Core, os_index(id), set))?;
        }
    }

    for &o in os {
        insert(
            topo,
            Object::with_cpuset(ObjType::PU, Some(o), CpuSet::from_index(o)),
        )?;
    }

    // Caches, outermost level first, unified then data then instruction.
    let max_level = infos
        .iter()
        .flat_map(|p| p.caches.iter().map(|c| c.level))
        .max()
        .unwrap_or(0);
    for level in (1..=max_level).rev() {
        for kind in [CacheKind::Unified, CacheKind::Data, CacheKind::Instruction] {
            let Some(otype) = ObjType::cache_for(level, kind) else {
                continue;
            };
            if !topo.keeps_type(otype) {
                continue;
            }
            let find = |p: &ProcInfo| {
                p.caches
                    .iter()
                    .position(|c| c.level == level && c.kind == kind)
            };
            let keyed =
                all().filter_map(|(i, p)| find(p).map(|l| (i, (p.ids[PKG], p.caches[l].cacheid))));
            for (_, set, first) in group_by(keyed, os) {
                let p = &infos[first];
                let Some(c) = find(p).map(|l| &p.caches[l]) else {
                    continue;
                };
                let mut obj = Object::with_cpuset(otype, None, set);
                obj.attr = ObjAttr::Cache(CacheAttr {
                    size: c.size,
                    depth: level,
                    linesize: c.linesize,
                    associativity: c.ways,
                    kind: c.kind,
                    inclusive: c.inclusive,
                });
                insert(topo, obj)?;
            }
        }
    }
    Ok(())
}

/// The CPU kinds of a hybrid processor, from the least efficient: their
/// PUs, efficiency and `CoreType` name.
type Kinds = Vec<(CpuSet, u32, &'static str)>;

/// CPU kinds of Intel hybrids (leaf 0x1A): low-power Atoms (family 6
/// Atoms with fewer caches than the others), Atoms, Cores, from the least
/// efficient.
fn cpukinds_intel(infos: &[ProcInfo], os: &[u32]) -> Kinds {
    let max_caches = infos.iter().map(|p| p.caches.len()).max().unwrap_or(0);
    let (mut lp, mut atom, mut core) = (CpuSet::new(), CpuSet::new(), CpuSet::new());
    for (i, p) in infos.iter().enumerate() {
        match p.hybrid_core_type {
            0x20 if p.family == 6 && p.caches.len() < max_caches => lp.set(os[i]),
            0x20 => atom.set(os[i]),
            0x40 => core.set(os[i]),
            _ => {}
        }
    }
    let mut kinds = Kinds::new();
    for (set, name) in [
        (lp, "IntelLowPower"),
        (atom, "IntelAtom"),
        (core, "IntelCore"),
    ] {
        if !set.is_empty() {
            let efficiency = kinds.len() as u32;
            kinds.push((set, efficiency, name));
        }
    }
    kinds
}

/// CPU kinds of AMD hybrids (leaf 0x80000026): low-power, efficiency and
/// performance cores, ranked by the processor when it says so.
fn cpukinds_amd(infos: &[ProcInfo], os: &[u32]) -> Kinds {
    let mut sets = [CpuSet::new(), CpuSet::new(), CpuSet::new()];
    let mut eff = [0u32; 3];
    for (i, p) in infos.iter().enumerate() {
        // Core types: 0 performance, 1 efficiency, 2 low power.
        let k = match p.hybrid_core_type {
            0 => 0,
            1 => 1,
            2 => 2,
            _ => continue,
        };
        sets[k].set(os[i]);
        eff[k] = p.power_efficiency_ranking;
    }
    if eff == [0; 3] {
        let mut next = 0;
        for k in [2, 1, 0] {
            if !sets[k].is_empty() {
                eff[k] = next;
                next += 1;
            }
        }
    }
    let [p, e, lp] = sets;
    [
        (lp, eff[2], "AMDLowPower"),
        (e, eff[1], "AMDEfficiency"),
        (p, eff[0], "AMDPerformance"),
    ]
    .into_iter()
    .filter(|(set, _, _)| !set.is_empty())
    .collect()
}

/// Registers the CPU kinds of a hybrid processor, as hwloc's x86 backend
/// does: each kind's `CoreType` info is added to the kinds already there
/// (another backend's, by frequency) and its efficiency forced.
fn register_cpukinds(topo: &mut Topology, m: &Machine, infos: &[ProcInfo], os: &[u32]) {
    if !m.is_hybrid {
        return;
    }
    let kinds = match m.vendor {
        Vendor::Intel => cpukinds_intel(infos, os),
        Vendor::Amd => cpukinds_amd(infos, os),
        _ => return,
    };
    for (set, efficiency, name) in kinds {
        let info = Info {
            name: "CoreType".into(),
            value: name.into(),
        };
        wloc_core::cpukinds::register(&mut topo.cpukinds, &set, Some(efficiency as i32), &[info]);
    }
}

/// What every PU of `src` says, with the PUs' OS indexes; `None` when
/// two PUs report one APIC id (hwloc then builds nothing from CPUID).
fn look_procs(
    src: &dyn CpuidSource,
    m: &mut Machine,
    n: usize,
) -> Result<(Vec<ProcInfo>, Vec<u32>), ProbeError> {
    let mut infos = Vec::with_capacity(n);
    let mut apic_ids: BTreeMap<u32, usize> = BTreeMap::new();
    for pu in 0..n {
        let info = look_proc(&Pu { src, pu }, m);
        if let Some(&first_pu) = apic_ids.get(&info.apicid) {
            return Err(ProbeError::DuplicateApicId {
                first_pu,
                second_pu: pu,
                apic_id: info.apicid,
            });
        }
        apic_ids.insert(info.apicid, pu);
        infos.push(info);
    }
    let os = (0..n).map(|pu| src.os_index(pu)).collect();
    Ok((infos, os))
}

/// Annotates a topology another backend discovered (Linux sysfs) with
/// what CPUID adds, as hwloc's x86 backend does when it runs after the
/// Linux one (its partial discovery): each package (or, without
/// packages, the root) gets the CPU infos of its first PU, replacing
/// those it has; each CPU cache gets the inclusive flag its first PU's
/// CPUID gives for its level and type (sysfs does not say); hybrid
/// processors get their CPU kinds' `CoreType` and efficiency.  Nothing
/// is added to the tree.  PUs of `src` are matched by OS index; a
/// `src` without PUs, without leaf 1 or whose PUs share an APIC id
/// changes nothing.
pub fn annotate_discovered(src: &dyn CpuidSource, topo: &mut Topology) {
    let n = src.pu_count();
    if n == 0 {
        return;
    }
    let Some(mut m) = read_machine(src, topo) else {
        return;
    };
    let Ok((infos, os)) = look_procs(src, &mut m, n) else {
        return;
    };
    let by_os: BTreeMap<u32, usize> = os.iter().enumerate().map(|(i, &o)| (o, i)).collect();
    let first_pu = |o: &Object| {
        o.complete_cpuset
            .as_ref()
            .or(o.cpuset.as_ref())
            .and_then(|c| c.iter().find_map(|pu| by_os.get(&pu).copied()))
    };
    if topo.keeps_type(ObjType::Package) {
        let packages = topo.objs_by_type(ObjType::Package);
        if packages.is_empty() {
            let root = topo.root();
            add_cpu_infos(topo.obj_mut(root), &infos[0]);
        }
        for id in packages {
            if let Some(i) = first_pu(topo.obj(id)) {
                add_cpu_infos(topo.obj_mut(id), &infos[i]);
            }
        }
    }
    for t in ObjType::CPU_CACHES {
        for id in topo.objs_by_type(t) {
            let o = topo.obj(id);
            let (ObjAttr::Cache(attr), Some(i)) = (&o.attr, first_pu(o)) else {
                continue;
            };
            let (level, kind) = (attr.depth, attr.kind);
            let inclusive = infos[i]
                .caches
                .iter()
                .find(|c| c.level == level && c.kind == kind)
                .is_some_and(|c| c.inclusive);
            if let ObjAttr::Cache(a) = &mut topo.obj_mut(id).attr {
                a.inclusive = inclusive;
            }
        }
    }
    register_cpukinds(topo, &m, &infos, &os);
}

/// Discovers the topology that the CPUID answers of `src` describe, as
/// hwloc's x86 backend does, and finishes `topo` (whose type filters the
/// caller has set).
///
/// The topology gets packages with CPU infos (`CPUVendor`,
/// `CPUFamilyNumber`, `CPUModelNumber`, `CPUModel`, `CPUStepping`), dies,
/// groups, cores, PUs, caches, CPU kinds for hybrid processors, and the
/// topology info `Backend=x86`.  NUMA nodes are not CPUID's business: the
/// finished topology has a single one, as with hwloc's x86 backend alone
/// (unless [`discover_with`] is asked for AMD's topoext nodes).
///
/// Without CPUID leaf 1, only PUs are created.  PUs reporting the same
/// APIC id make discovery fail, as they make hwloc's.
pub fn discover(src: &dyn CpuidSource, topo: Topology) -> Result<Topology, ProbeError> {
    discover_with(src, topo, &X86Options::default())
}

/// [`discover`] with the settings of `opts`: with
/// [`X86Options::topoext_numanodes`], AMD and Hygon processors' node ids
/// become NUMA nodes (hwloc's `HWLOC_X86_TOPOEXT_NUMANODES`).
pub fn discover_with(
    src: &dyn CpuidSource,
    mut topo: Topology,
    opts: &X86Options,
) -> Result<Topology, ProbeError> {
    let n = src.pu_count();
    if n == 0 {
        return Err(ProbeError::NoPu);
    }
    let mut seen = CpuSet::new();
    let mut os = Vec::with_capacity(n);
    for pu in 0..n {
        let o = src.os_index(pu);
        if o >= MAX_OS_INDEX || seen.is_set(o) {
            return Err(ProbeError::BadOsIndex { pu, os_index: o });
        }
        seen.set(o);
        os.push(o);
    }

    match read_machine(src, &topo) {
        None => {
            for &o in &os {
                insert(
                    &mut topo,
                    Object::with_cpuset(ObjType::PU, Some(o), CpuSet::from_index(o)),
                )?;
            }
        }
        Some(mut m) => {
            let (infos, _) = look_procs(src, &mut m, n)?;
            summarize(&mut topo, &m, opts, &infos, &os)?;
            register_cpukinds(&mut topo, &m, &infos, &os);
        }
    }
    topo.infos.push(Info {
        name: "Backend".into(),
        value: "x86".into(),
    });
    topo.finish()?;
    Ok(topo)
}
