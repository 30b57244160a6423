//! How hwloc 2 presents what hwloc 3 (and wloc) keep elsewhere: the
//! topology infos on the root object, in hwloc 2's order, and the infos
//! hwloc 2 gave objects that hwloc 3 dropped or wrote differently. One
//! home for these rules: the version 2 export ([`crate::export_hwloc2`],
//! [`crate::export`] in version 2) and wloc's C library (libhwloc.so.15,
//! whose objects must look as hwloc 2.x's) both use them.

use alloc::string::ToString;
use alloc::vec::Vec;

use wloc_core::object::{Info, ObjType, Object};
use wloc_core::{ObjId, Topology};

/// Root infos of version 2 documents that hwloc 3 moves to the topology
/// infos.
pub const TOPOLOGY_INFOS: [&str; 11] = [
    "Backend",
    "SyntheticDescription",
    "LinuxCgroup",
    "WindowsBuildEnvironment",
    "OSName",
    "OSRelease",
    "OSVersion",
    "HostName",
    "Architecture",
    "hwlocVersion",
    "ProcessName",
];

/// The topology infos hwloc 2's Linux backend adds after naming itself
/// (`Backend`): its discovery writes them in this order.
const AFTER_BACKEND: [&str; 6] = [
    "LinuxCgroup",
    "OSName",
    "OSRelease",
    "OSVersion",
    "HostName",
    "Architecture",
];

/// The infos of an object as a version 2 document shows them: the
/// topology infos are the root's (after its own), OS devices of compute
/// backends have a `Backend` info, and the caches of a machine the x86
/// backend discovered have an `Inclusive` info ([`x86_inclusive_info`]).
pub fn v2_infos(topo: &Topology, id: ObjId) -> Vec<Info> {
    let o = topo.obj(id);
    let mut infos = o.infos.clone();
    if id == topo.root() {
        infos.extend(topo.infos.iter().cloned());
    }
    if let Some(backend) = v2_osdev_backend(o) {
        infos.push(Info {
            name: "Backend".into(),
            value: backend.into(),
        });
    }
    if o.obj_type.is_cache()
        && x86_discovered(topo)
        && let Some(i) = x86_inclusive_info(o)
    {
        infos.push(i);
    }
    infos
}

/// Whether the x86 backend discovered the topology's processors: wloc's
/// x86 discovery (a CPUID dump) names itself `Backend` `x86`, as hwloc's
/// does, in the topology infos or, once presented as hwloc 2 does, the
/// root's.
fn x86_discovered(m: &Topology) -> bool {
    m.obj(m.root())
        .infos
        .iter()
        .chain(&m.infos)
        .any(|i| i.name == "Backend" && i.value == "x86")
}

/// The `Inclusive` info hwloc 2's x86 backend gives every CPU cache it
/// discovers or annotates (hwloc 3 keeps it as an attribute, as wloc
/// does): `1` or `0`. None for other objects and for a cache that has one
/// already (an imported hwloc 2 document's).
pub fn x86_inclusive_info(o: &Object) -> Option<Info> {
    if !o.obj_type.is_cache() || o.info("Inclusive").is_some() {
        return None;
    }
    let c = o.cache()?;
    Some(Info {
        name: "Inclusive".into(),
        value: if c.inclusive { "1" } else { "0" }.into(),
    })
}

/// The `Backend` info hwloc 2 kept inside OS devices of compute backends.
fn v2_osdev_backend(o: &Object) -> Option<&'static str> {
    if o.obj_type != ObjType::OSDevice || o.info("Backend").is_some() {
        return None;
    }
    Some(match o.subtype.as_deref()? {
        "CUDA" => "CUDA",
        "NVML" => "NVML",
        "OpenCL" => "OpenCL",
        "RSMI" => "RSMI",
        "LevelZero" => "LevelZero",
        "Display" => "GL",
        _ => return None,
    })
}

/// Moves the topology infos to the root object as hwloc 2 shows them: the
/// root's own, then the topology's (where hwloc's `hwloc_obj_add_info`
/// appends after them). For a `discovered` topology (not one imported
/// from a document, which stays as written), hwloc 3's forms become
/// hwloc 2's: the `Backend` infos before the operating system's ones, no
/// page-size infos, `added` (the infos hwloc adds when it discovers, such
/// as `hwlocVersion`, which depend on the caller) appended unless already
/// there, block sizes without their unit.
pub fn present(m: &mut Topology, discovered: bool, added: Vec<Info>) {
    let root = m.root();
    let own = m.obj(root).infos.len();
    // The root's own infos (DMI, platform) come before the topology's.
    let mut infos = v2_infos(m, root);
    m.infos.clear();
    if discovered {
        // hwloc 2's Linux backend names itself before the cgroup and the
        // operating system; hwloc 3 has no page-size infos in version 2.
        let own_kept = infos[..own]
            .iter()
            .filter(|i| !matches!(i.name.as_str(), "Backend" | "PageSizeNr" | "PageSizes"))
            .count();
        infos.retain(|i| i.name != "PageSizeNr" && i.name != "PageSizes");
        // A backend that ran before Linux (x86, listed first) named
        // itself before Linux added the DMI infos: it stays first.
        let first = infos.iter().take_while(|i| i.name == "Backend").count();
        let rest = infos.split_off(first);
        let (backend, mut rest): (Vec<_>, Vec<_>) =
            rest.into_iter().partition(|i| i.name == "Backend");
        let at = rest
            .iter()
            .position(|i| AFTER_BACKEND.contains(&i.name.as_str()))
            .unwrap_or(rest.len())
            .min(own_kept);
        rest.splice(at..at, backend);
        // hwloc 2.14's Linux backend reads the SoC infos first of all (its
        // CPU kinds need them), so they lead the root's infos.
        // (An x86 backend named first never meets SoC infos, which are
        // ARM's.)
        let (mut soc, rest): (Vec<_>, Vec<_>) = rest.into_iter().partition(is_soc_info);
        soc.append(&mut infos);
        soc.extend(rest);
        infos = soc;
        for info in added {
            if !infos.iter().any(|i| i.name == info.name) {
                infos.push(info);
            }
        }
        // hwloc 2.14 computes memory tiers last, after the infos added
        // when it discovers.
        if let Some(at) = infos.iter().position(|i| i.name == "MemoryTiersNr") {
            let tiers = infos.remove(at);
            infos.push(tiers);
        }
        write_sizes_without_unit(m);
    }
    m.obj_mut(root).infos = infos;
}

/// Whether `i` is one of the SoC infos of Linux (`SoC0ID`, `SoC1Family`,
/// ...).
fn is_soc_info(i: &Info) -> bool {
    i.name.strip_prefix("SoC").is_some_and(|rest| {
        let field = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        field.len() < rest.len() && matches!(field, "ID" | "Family" | "Revision")
    })
}

/// hwloc 3 writes block devices' and memory modules' sizes (and the other
/// sizes of [`is_kib_size_info`]) with their unit; hwloc 2 writes the
/// number of KiB alone. (Memory modules' details and Linux capacities as
/// forced efficiencies are hwloc 2.14's as they are 3.0's.)
fn write_sizes_without_unit(m: &mut Topology) {
    for id in m.iter_dfs() {
        let o = m.obj_mut(id);
        let module = o.obj_type == ObjType::Misc && o.subtype.as_deref() == Some("MemoryModule");
        if o.obj_type != ObjType::OSDevice && !module {
            continue;
        }
        for i in o.infos.iter_mut().filter(|i| is_kib_size_info(&i.name)) {
            if let Some(kib) = i.value.strip_suffix("KiB") {
                i.value = kib.to_string();
            }
        }
    }
}

/// The OS device infos hwloc 3 writes in KiB with their unit and hwloc 2
/// as the number alone: block device sizes, the NEC Vector Engine's memory
/// and cache sizes, CXL memory sizes.
fn is_kib_size_info(name: &str) -> bool {
    name == "Size"
        || (name.ends_with("Size") && (name.starts_with("VectorEngine") || name.starts_with("CXL")))
}

/// Gives the caches the `Inclusive` infos ([`x86_inclusive_info`]) of
/// hwloc 2's x86 backend, as objects of its C API carry them, when it ran:
/// on a machine of x86 architecture (this machine, discovered by Linux
/// then annotated from CPUID), or when it discovered the processors (a
/// CPUID dump, whose version 2 documents [`v2_infos`] shows so too).
pub fn add_x86_cache_infos(m: &mut Topology) {
    let x86 = x86_discovered(m)
        || m.obj(m.root()).infos.iter().chain(&m.infos).any(|i| {
            i.name == "Architecture" && matches!(i.value.as_str(), "x86_64" | "i686" | "i386")
        });
    if !x86 {
        return;
    }
    for id in m.iter_dfs() {
        if let Some(i) = x86_inclusive_info(m.obj(id)) {
            m.obj_mut(id).infos.push(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(name: &str, value: &str) -> Info {
        Info {
            name: name.into(),
            value: value.into(),
        }
    }

    fn names(infos: &[Info]) -> Vec<&str> {
        infos.iter().map(|i| i.name.as_str()).collect()
    }

    /// Two PUs under an inclusive L2 and a non-inclusive L1d each.
    fn with_caches(backend: &str) -> Topology {
        let mut t = wloc_core::synthetic::parse("l2:1 l1d:2 pu:1")
            .unwrap()
            .build(Topology::new())
            .unwrap();
        let l2 = t.objs_by_type(ObjType::L2Cache)[0];
        if let wloc_core::ObjAttr::Cache(c) = &mut t.obj_mut(l2).attr {
            c.inclusive = true;
        }
        t.infos = alloc::vec![info("Backend", backend)];
        t
    }

    fn inclusive_infos(t: &Topology, infos: impl Fn(ObjId) -> Vec<Info>) -> Vec<(ObjType, String)> {
        let mut out = Vec::new();
        for id in t.iter_dfs() {
            for i in infos(id).into_iter().filter(|i| i.name == "Inclusive") {
                out.push((t.obj(id).obj_type, i.value));
            }
        }
        out
    }

    #[test]
    fn caches_the_x86_backend_found_show_inclusive_infos() {
        let want = alloc::vec![
            (ObjType::L2Cache, "1".to_string()),
            (ObjType::L1Cache, "0".to_string()),
            (ObjType::L1Cache, "0".to_string()),
        ];
        // A CPUID dump's topology, in version 2 documents...
        let x86 = with_caches("x86");
        assert_eq!(inclusive_infos(&x86, |id| v2_infos(&x86, id)), want);
        // ... and in the C library's objects, once, however often added.
        let mut lib = with_caches("x86");
        add_x86_cache_infos(&mut lib);
        add_x86_cache_infos(&mut lib);
        assert_eq!(inclusive_infos(&lib, |id| lib.obj(id).infos.clone()), want);
        assert_eq!(inclusive_infos(&lib, |id| v2_infos(&lib, id)), want);
        // Another backend's caches (Linux sysfs of another architecture,
        // synthetic) have none.
        let linux = with_caches("Linux");
        assert!(inclusive_infos(&linux, |id| v2_infos(&linux, id)).is_empty());
        let mut lib = with_caches("Linux");
        add_x86_cache_infos(&mut lib);
        assert!(inclusive_infos(&lib, |id| lib.obj(id).infos.clone()).is_empty());
    }

    #[test]
    fn discovered_infos_take_hwloc2s_order_imported_ones_stay() {
        let base = || {
            let mut t = wloc_core::synthetic::parse("pu:2")
                .unwrap()
                .build(Topology::new())
                .unwrap();
            let root = t.root();
            t.obj_mut(root).infos = alloc::vec![info("DMIBoardName", "b")];
            t.infos = alloc::vec![
                info("OSName", "Linux"),
                info("Backend", "Linux"),
                info("PageSizeNr", "2"),
                info("HostName", "h"),
            ];
            t
        };
        let mut imported = base();
        present(
            &mut imported,
            false,
            alloc::vec![info("hwlocVersion", "2.9.0")],
        );
        let root = imported.root();
        assert!(imported.infos.is_empty());
        assert_eq!(
            names(&imported.obj(root).infos),
            [
                "DMIBoardName",
                "OSName",
                "Backend",
                "PageSizeNr",
                "HostName"
            ]
        );
        let mut found = base();
        present(
            &mut found,
            true,
            alloc::vec![info("hwlocVersion", "2.9.0"), info("HostName", "x")],
        );
        assert_eq!(
            names(&found.obj(root).infos),
            [
                "DMIBoardName",
                "Backend",
                "OSName",
                "HostName",
                "hwlocVersion"
            ]
        );
    }

    #[test]
    fn os_device_sizes_lose_their_unit_as_in_hwloc2() {
        let mut t = wloc_core::synthetic::parse("pu:1")
            .unwrap()
            .build(Topology::new())
            .unwrap();
        let root = t.root();
        let mut dev = Object::new(ObjType::OSDevice, None);
        dev.infos = alloc::vec![
            info("Size", "100KiB"),
            info("VectorEngineMemorySize", "50331648KiB"),
            info("VectorEngineL2Size", "256KiB"),
            info("CXLRAMSize", "4096KiB"),
            info("VectorEngineModel", "1KiB"),
            info("Vendor", "x"),
        ];
        let id = t.insert_by_parent(root, dev).unwrap();
        present(&mut t, true, Vec::new());
        let values: Vec<&str> = t.obj(id).infos.iter().map(|i| i.value.as_str()).collect();
        assert_eq!(values, ["100", "50331648", "256", "4096", "1KiB", "x"]);
    }
}
