//! How the library presents wloc's topologies as hwloc 2.x does, beyond
//! the rules it shares with the XML export ([`wloc_xml::hwloc2`]): the
//! infos hwloc adds when it discovers, and hwloc 2's 16-bit PCI domains.

use std::os::raw::c_char;

use wloc_core::{ObjId, ObjType, Topology};

use crate::ffi::{c_str, verbose};

/// The root's infos as hwloc 2 shows them ([`wloc_xml::hwloc2::present`]);
/// for a topology wloc discovered (or a launcher's image of it), with the
/// `hwlocVersion` and `ProcessName` infos hwloc adds when it discovers
/// (none with `HWLOC_DONT_ADD_VERSION_INFO`, any value, as in hwloc).
/// `hwlocVersion` is the API version this library implements (README).
pub(crate) fn hwloc2_infos(m: &mut Topology, discovered: bool) {
    let mut added = Vec::new();
    if discovered && wloc_trust::env::var_os("HWLOC_DONT_ADD_VERSION_INFO").is_none() {
        added.push(wloc_core::object::Info {
            name: "hwlocVersion".into(),
            value: crate::HWLOC_RELEASE.into(),
        });
        if let Some(value) = process_name() {
            added.push(wloc_core::object::Info {
                name: "ProcessName".into(),
                value,
            });
        }
    }
    wloc_xml::hwloc2::present(m, discovered, added);
}

/// hwloc 2's ABI holds 16-bit PCI domains (Debian's libhwloc is built
/// without `--enable-32bits-pci-domain`), and its discovery leaves out the
/// PCI devices and bridges of wider domains rather than truncating them;
/// their OS devices end up below the root.  wloc discovers them (as hwloc
/// 3 does); this library answers as libhwloc does.
pub(crate) fn hwloc2_pci_domains(m: &mut Topology) {
    let wide = |o: &wloc_core::Object| {
        o.pci().is_some_and(|p| p.domain > 0xffff) || o.bridge().is_some_and(|b| b.domain > 0xffff)
    };
    // One walk: the wide objects with no wide ancestor go, with all below
    // them; the OS devices among those move to the root (what hangs below
    // such a device, which hwloc's discovery never makes, goes with it).
    let root = m.root();
    let (mut tops, mut osdevs) = (Vec::new(), Vec::new());
    let mut stack = vec![(root, false)];
    while let Some((id, inside)) = stack.pop() {
        let o = m.obj(id);
        let here = inside || wide(o);
        if here && !inside {
            tops.push(id);
        }
        if here && o.obj_type == ObjType::OSDevice {
            osdevs.push(o.clone());
            continue;
        }
        let below = o
            .children()
            .iter()
            .chain(o.memory_children())
            .chain(o.io_children());
        let below: Vec<ObjId> = below.copied().collect();
        stack.extend(below.into_iter().rev().map(|c| (c, here)));
    }
    if tops.is_empty() {
        return;
    }
    m.remove_subtrees(&tops);
    for o in osdevs {
        let _ = m.insert_by_parent(root, o);
    }
    if let Err(e) = m.finish() {
        verbose(&format!("leaving out PCI objects of 32-bit domains: {e}"));
    }
}

/// The program's short name, as glibc's `program_invocation_short_name`.
pub(crate) fn process_name() -> Option<String> {
    unsafe extern "C" {
        static program_invocation_short_name: *const c_char;
    }
    // SAFETY: glibc sets this pointer before main to a string that lives
    // for the whole process.
    let p = unsafe { program_invocation_short_name };
    // SAFETY: NULL or a NUL-terminated string.
    unsafe { c_str(p) }
        .map(|s| s.into_owned())
        .filter(|s| !s.is_empty())
}

/// hwloc 2.10-2.14's memory tiers ([`wloc_core::memtiers`]), computed when
/// a topology is loaded from a synthetic description, or from XML when
/// `HWLOC_MEMTIERS_REFRESH` is set (any value; then the tiers' kinds
/// replace the nodes' subtypes), as hwloc computes them for every backend
/// but XML.  `HWLOC_MEMTIERS` forces the tiers (`none`: no tiers), else
/// they are guessed with `HWLOC_MEMTIERS_GUESS` and the bandwidth and
/// latency thresholds.  (A discovered topology has them already: the Linux
/// component computes them, as hwloc 3 does.)
pub(crate) fn hwloc2_memory_tiers(m: &mut Topology, xml: bool) {
    use wloc_core::memtiers;
    let var = wloc_trust::env::var;
    let refresh = wloc_trust::env::var_os("HWLOC_MEMTIERS_REFRESH").is_some();
    if xml && !refresh {
        return;
    }
    let mut force = refresh;
    let forced = match var("HWLOC_MEMTIERS").as_deref() {
        Some("none") => return,
        Some(v) => memtiers::forced(v),
        None => None,
    };
    let tiers = match forced {
        Some(t) => {
            force = true;
            t
        }
        None => {
            let opts = memtiers::Options::from_values(
                var("HWLOC_MEMTIERS_GUESS").as_deref(),
                var("HWLOC_MEMTIERS_BANDWIDTH_THRESHOLD").as_deref(),
                var("HWLOC_MEMTIERS_LATENCY_THRESHOLD").as_deref(),
            );
            match memtiers::guess(m, &opts) {
                Some(t) => t,
                None => return,
            }
        }
    };
    memtiers::apply(m, &tiers, force);
}
