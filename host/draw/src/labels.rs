//! The text lstopo writes in each box (`lstopo_obj_snprintf`,
//! `prepare_text`), with hwloc's type names and memory sizes.
//!
//! The host crate has the console listing's equivalents, but this crate
//! sits below it (the host depends on it), so the few short helpers the
//! labels need live here.

use wloc_core::object::{BridgeUpstream, CacheKind};
use wloc_core::{ObjId, ObjType, Object, Topology};

use crate::{DrawOptions, IndexType};

/// hwloc's short or long type name of an object (`hwloc_obj_type_snprintf`):
/// `L2`/`L2Cache`, `L1d`, `Group0`, `HostBridge`, `PCI`, `Net`/`Network`...
pub fn type_name(o: &Object, verbose: bool) -> String {
    match o.obj_type {
        t if t.is_cache() => {
            let (depth, kind) = match o.cache() {
                Some(c) => (c.depth, c.kind),
                None => (t.cache_level().unwrap_or(0), CacheKind::Unified),
            };
            let letter = match kind {
                CacheKind::Unified => "",
                CacheKind::Data => "d",
                CacheKind::Instruction => "i",
            };
            format!("L{depth}{letter}{}", if verbose { "Cache" } else { "" })
        }
        ObjType::Group => match o.group() {
            Some(g) if g.depth != u32::MAX => format!("Group{}", g.depth),
            _ => "Group".into(),
        },
        ObjType::Bridge => match o.bridge().map(|b| &b.upstream) {
            Some(BridgeUpstream::Pci(_)) => "PCIBridge".into(),
            _ => "HostBridge".into(),
        },
        ObjType::PCIDevice => "PCI".into(),
        ObjType::OSDevice => {
            let types = o.osdev_types().unwrap_or_default();
            match types.v2_code(o.subtype.as_deref()) {
                Some(0) => "Block",
                Some(1) => "GPU",
                Some(2) if verbose => "Network",
                Some(2) => "Net",
                Some(3) => "OpenFabrics",
                Some(4) => "DMA",
                Some(5) if verbose => "Co-Processor",
                Some(5) => "CoProc",
                _ => "",
            }
            .into()
        }
        t => t.xml_name().into(),
    }
}

pub use wloc_core::units::memory_size;

/// `hwloc_obj_attr_snprintf` without verbosity: a NUMA node's local
/// memory, a cache's size.
fn attrs(o: &Object) -> String {
    let mut parts = Vec::new();
    if o.obj_type == ObjType::NUMANode {
        let local = o.numa().map(|n| n.local_memory).unwrap_or(0);
        if local != 0 {
            parts.push(memory_size(local, false));
        }
    }
    if o.obj_type.is_cache() || o.obj_type == ObjType::MemCache {
        parts.push(memory_size(o.cache().map(|c| c.size).unwrap_or(0), false));
    }
    parts.join(" ")
}

/// Truncates to what a C buffer of `cap` bytes holds (`cap - 1` bytes),
/// on a character boundary.
pub(crate) fn truncate(s: &mut String, cap: usize) {
    if s.len() >= cap {
        let mut end = cap - 1;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
}

/// `%u` of hwloc's unsigned index (an unknown one is `UINT_MAX`).
fn index(i: Option<u32>) -> u32 {
    i.unwrap_or(u32::MAX)
}

/// The main label of an object (`lstopo_obj_snprintf`).
pub(crate) fn obj_label(topo: &Topology, id: ObjId, opts: &DrawOptions) -> String {
    let o = topo.obj(id);
    let t = o.obj_type;
    if let Some(name) = &o.name
        && matches!(t, ObjType::Misc | ObjType::Group)
    {
        return name.clone();
    }
    if t == ObjType::OSDevice {
        let name = o.name.as_deref().unwrap_or("(null)");
        return format!("{} {}", type_name(o, false), name);
    }
    let mut typestr = match &o.subtype {
        Some(s) => s.clone(),
        None => type_name(o, false),
    };
    truncate(&mut typestr, 32);
    let logical = (o.logical_index(), " L#");
    let (idx, prefix) = match opts.index_type {
        IndexType::Default => match t {
            ObjType::PU | ObjType::NUMANode | ObjType::Package | ObjType::Die | ObjType::Core => {
                logical
            }
            _ => (u32::MAX, ""),
        },
        IndexType::Logical => logical,
        IndexType::Physical => (index(o.os_index), " P#"),
    };
    let ti = t.index();
    let mut indexstr = String::new();
    let host_bridge = !matches!(
        o.bridge().map(|b| &b.upstream),
        Some(BridgeUpstream::Pci(_))
    );
    if opts.show_indexes[ti]
        && idx != u32::MAX
        && o.parent().is_some()
        && t != ObjType::PCIDevice
        && (t != ObjType::Bridge || host_bridge)
    {
        indexstr = format!("{prefix}{idx}");
    }
    let mut index2str = String::new();
    if opts.index_type == IndexType::Default && t == ObjType::NUMANode && opts.show_indexes[ti] {
        index2str = format!(" P#{}", index(o.os_index));
    }
    let mut attrstr = String::new();
    let mut totmem = String::new();
    if opts.show_attrs[ti] {
        attrstr = attrs(o);
        if o.parent().is_none() && o.total_memory != 0 {
            totmem = format!(" ({} total)", memory_size(o.total_memory, false));
        }
    }
    if !attrstr.is_empty() {
        format!("{typestr}{indexstr}{index2str} ({attrstr}){totmem}")
    } else {
        format!("{typestr}{indexstr}{index2str}{totmem}")
    }
}

/// The bus id of a PCI device, possibly of a collapsed run of `collapse`
/// devices (`lstopo_busid_snprintf`).
pub(crate) fn busid(topo: &Topology, id: ObjId, collapse: i32, need_domain: bool) -> String {
    let o = topo.obj(id);
    let p = o.pci().cloned().unwrap_or_default();
    let domain = if need_domain {
        format!("{:04x}:", p.domain)
    } else {
        String::new()
    };
    let first = format!("{domain}{:02x}:{:02x}.{:01x}", p.bus, p.dev, p.func);
    if collapse <= 1 {
        return first;
    }
    let li = o.logical_index() as usize + collapse as usize - 1;
    let last = topo
        .level(wloc_core::object::Depth::PciDevice)
        .get(li)
        .and_then(|&l| topo.obj(l).pci())
        .cloned()
        .unwrap_or(p.clone());
    if last.dev == p.dev {
        format!("{first}-{:01x}", last.func)
    } else {
        format!("{first}-{:02x}.{:01x}", last.dev, last.func)
    }
}

/// C's `strtoull(s, NULL, 10)`: leading blanks, then decimal digits;
/// saturates like glibc.
fn strtoull(s: &str) -> u64 {
    let s = s.trim_start();
    let s = s.strip_prefix('+').unwrap_or(s);
    let mut v: u64 = 0;
    for c in s.bytes() {
        if !c.is_ascii_digit() {
            break;
        }
        v = v.saturating_mul(10).saturating_add(u64::from(c - b'0'));
    }
    v
}

/// "N GB" or "N MB" from a size in kB, as lstopo prints device memories.
fn mb_gb(kb: &str, suffix: &str) -> String {
    let mb = strtoull(kb) / 1024;
    if mb >= 10240 {
        format!("{} GB{suffix}", mb / 1024)
    } else {
        format!("{mb} MB{suffix}")
    }
}

/// "N TB", "N GB" or "N MB" from a size in kB (block devices).
fn mb_gb_tb(kb: &str, suffix: &str) -> String {
    let mb = strtoull(kb) / 1024;
    if mb >= 10_485_760 {
        format!("{} TB{suffix}", mb / 1_048_576)
    } else if mb >= 10240 {
        format!("{} GB{suffix}", mb / 1024)
    } else {
        format!("{mb} MB{suffix}")
    }
}

/// The extra lines under an OS device's name: GPU memories and cores,
/// block device sizes.
pub(crate) fn osdev_lines(o: &Object) -> Vec<String> {
    let mut v = Vec::new();
    let code = o
        .osdev_types()
        .unwrap_or_default()
        .v2_code(o.subtype.as_deref());
    let info = |n: &str| o.info(n);
    if code == Some(5) {
        match o.subtype.as_deref() {
            Some("CUDA") => {
                if let Some(x) = info("CUDAGlobalMemorySize") {
                    v.push(mb_gb(x, ""));
                }
                if let Some(x) = info("CUDAL2CacheSize") {
                    let kb = strtoull(x);
                    v.push(if kb >= 10240 {
                        format!("L2 ({} MB)", kb / 1024)
                    } else {
                        format!("L2 ({kb} kB)")
                    });
                }
                if let (Some(a), Some(b), Some(c)) = (
                    info("CUDAMultiProcessors"),
                    info("CUDACoresPerMP"),
                    info("CUDASharedMemorySizePerMP"),
                ) {
                    v.push(format!("{a} MP x ({b} cores + {c} kB)"));
                }
            }
            Some("OpenCL") => {
                if let Some(x) = info("OpenCLComputeUnits") {
                    v.push(format!("{} compute units", strtoull(x)));
                }
                if let Some(x) = info("OpenCLGlobalMemorySize") {
                    v.push(mb_gb(x, ""));
                }
            }
            Some("VectorEngine") => {
                if let Some(x) = info("VectorEngineCores") {
                    v.push(format!("{} cores", strtoull(x)));
                }
                if let Some(x) = info("VectorEngineMemorySize") {
                    v.push(mb_gb(x, ""));
                }
            }
            Some("LevelZero") => {
                if let Some(x) = info("LevelZeroHBMSize") {
                    v.push(mb_gb(x, " (HBM)"));
                }
                if let Some(x) = info("LevelZeroDDRSize").or_else(|| info("LevelZeroMemorySize")) {
                    v.push(mb_gb(x, ""));
                }
                if let (Some(sl), Some(ss), Some(eu), Some(th)) = (
                    info("LevelZeroNumSlices"),
                    info("LevelZeroNumSubslicesPerSlice"),
                    info("LevelZeroNumEUsPerSubslice"),
                    info("LevelZeroNumThreadsPerEU"),
                ) {
                    let plural = if strtoull(sl) > 1 { "s" } else { "" };
                    v.push(format!("{sl} Slice{plural} x {ss} x {eu} x {th} Threads"));
                }
            }
            _ => {}
        }
    } else if code == Some(0) {
        if let Some(x) = info("Size") {
            v.push(mb_gb_tb(x, ""));
        }
        if let Some(x) = info("CXLRAMSize") {
            v.push(mb_gb_tb(x, " (RAM)"));
        }
        if let Some(x) = info("CXLPMEMSize") {
            v.push(mb_gb_tb(x, " (PMEM)"));
        }
    }
    for l in &mut v {
        truncate(l, 128);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_round_like_hwloc() {
        assert_eq!(memory_size(32 * 1024, false), "32KB");
        assert_eq!(memory_size(8 << 20, false), "8192KB");
        assert_eq!(memory_size(12 << 20, false), "12MB");
        assert_eq!(memory_size(16 << 30, false), "16GB");
    }

    #[test]
    fn type_names_short_and_verbose() {
        use wloc_core::object::{CacheAttr, GroupAttr, ObjAttr};
        let mut l1 = Object::new(ObjType::L1Cache, None);
        l1.attr = ObjAttr::Cache(CacheAttr {
            depth: 1,
            kind: CacheKind::Data,
            ..CacheAttr::default()
        });
        assert_eq!(type_name(&l1, false), "L1d");
        assert_eq!(type_name(&l1, true), "L1dCache");
        let mut g = Object::new(ObjType::Group, None);
        g.attr = ObjAttr::Group(GroupAttr {
            depth: u32::MAX,
            ..GroupAttr::default()
        });
        // A group whose level is not known yet, as hwloc names it.
        assert_eq!(type_name(&g, true), "Group");
        g.attr = ObjAttr::Group(GroupAttr::default());
        assert_eq!(type_name(&g, false), "Group0");
    }

    #[test]
    fn strtoull_stops_at_non_digits() {
        assert_eq!(strtoull(" 123abc"), 123);
        assert_eq!(strtoull("x"), 0);
        assert_eq!(strtoull("99999999999999999999999"), u64::MAX);
    }

    #[test]
    fn truncation_keeps_char_boundaries() {
        let mut s = "é".repeat(100);
        truncate(&mut s, 128);
        assert_eq!(s.len(), 126);
    }
}
