//! The C API's answers (objects by depth and index, parents, children,
//! siblings, cousins, sets, infos) equal the Rust model's, for random
//! synthetic topologies and for the conformance XML recordings.

use std::ffi::{CStr, CString};
use std::os::raw::c_int;
use std::path::Path;

use hwloc::topology::*;
use hwloc::types::*;
use proptest::prelude::*;
use wloc_core::Topology;
use wloc_core::object::Depth;

/// Loads a topology through the C API.
fn load(set: impl FnOnce(hwloc_topology_t) -> c_int) -> Result<hwloc_topology_t, String> {
    let mut t: hwloc_topology_t = std::ptr::null_mut();
    // SAFETY: the C API's own contract, followed as a C program would.
    unsafe {
        assert_eq!(hwloc_topology_init(&mut t), 0);
        if set(t) != 0 {
            hwloc_topology_destroy(t);
            return Err("source refused".into());
        }
        if hwloc_topology_load(t) != 0 {
            hwloc_topology_destroy(t);
            return Err("load failed".into());
        }
    }
    Ok(t)
}

/// The bitmap behind a C set pointer, `None` for NULL.
fn bits(b: hwloc_bitmap_t) -> Option<String> {
    // SAFETY: NULL or a bitmap of the mirror.
    (!b.is_null()).then(|| unsafe { hwloc::bitmap::debug_string(b) })
}

/// Checks every object of every level against the model.
fn check(t: hwloc_topology_t) -> Result<(), String> {
    // SAFETY: a loaded handle from `load`.
    let m: &Topology = unsafe { model(t) }.ok_or("not loaded")?;
    let mut depths: Vec<Depth> = (0..m.depth()).map(Depth::Normal).collect();
    depths.extend([
        Depth::NumaNode,
        Depth::Bridge,
        Depth::PciDevice,
        Depth::OsDevice,
        Depth::Misc,
        Depth::MemCache,
    ]);
    // SAFETY: C API calls on a loaded topology; every pointer read comes
    // from the mirror.
    unsafe {
        if hwloc::objects::hwloc_topology_get_depth(t) as u32 != m.depth() {
            return Err("depth differs".into());
        }
        for d in depths {
            let level = m.level(d);
            let cd = d.to_i32();
            if hwloc::objects::hwloc_get_nbobjs_by_depth(t, cd) as usize != level.len() {
                return Err(format!("level {cd}: count differs"));
            }
            let mut prev: hwloc_obj_t = std::ptr::null_mut();
            for (i, &id) in level.iter().enumerate() {
                let o = m.obj(id);
                let c = hwloc::objects::hwloc_get_obj_by_depth(t, cd, i as u32);
                let co = c
                    .as_ref()
                    .ok_or(format!("level {cd}: object {i} missing"))?;
                let what = format!("level {cd} object {i}");
                if co.type_ != o.obj_type.index() as c_int
                    || co.logical_index != o.logical_index()
                    || co.depth != cd
                    || co.gp_index != o.gp_index
                    || co.os_index != o.os_index.unwrap_or(u32::MAX)
                    || co.total_memory != o.total_memory
                {
                    return Err(format!("{what}: fields differ"));
                }
                if co.prev_cousin != prev || (!prev.is_null() && (*prev).next_cousin != c) {
                    return Err(format!("{what}: cousins differ"));
                }
                prev = c;
                let parent = o.parent().map(|p| hwloc_ptr(t, p));
                if parent.unwrap_or(std::ptr::null_mut()) != co.parent {
                    return Err(format!("{what}: parent differs"));
                }
                let kids: Vec<hwloc_obj_t> =
                    o.children().iter().map(|&k| hwloc_ptr(t, k)).collect();
                let ckids: Vec<hwloc_obj_t> = (0..co.arity as usize)
                    .map(|k| *co.children.add(k))
                    .collect();
                if kids != ckids
                    || co.first_child != kids.first().copied().unwrap_or(std::ptr::null_mut())
                    || co.last_child != kids.last().copied().unwrap_or(std::ptr::null_mut())
                {
                    return Err(format!("{what}: children differ"));
                }
                for (list, first, arity) in [
                    (o.memory_children(), co.memory_first_child, co.memory_arity),
                    (o.io_children(), co.io_first_child, co.io_arity),
                    (o.misc_children(), co.misc_first_child, co.misc_arity),
                ] {
                    let mut walked = Vec::new();
                    let mut k = first;
                    while !k.is_null() {
                        walked.push(k);
                        k = (*k).next_sibling;
                    }
                    let want: Vec<hwloc_obj_t> = list.iter().map(|&k| hwloc_ptr(t, k)).collect();
                    if walked != want || arity as usize != want.len() {
                        return Err(format!("{what}: special children differ"));
                    }
                }
                let sets = [
                    (
                        o.cpuset.as_ref().map(|s| format!("{:?}", s.bitmap())),
                        co.cpuset,
                    ),
                    (
                        o.complete_cpuset
                            .as_ref()
                            .map(|s| format!("{:?}", s.bitmap())),
                        co.complete_cpuset,
                    ),
                    (
                        o.nodeset.as_ref().map(|s| format!("{:?}", s.bitmap())),
                        co.nodeset,
                    ),
                    (
                        o.complete_nodeset
                            .as_ref()
                            .map(|s| format!("{:?}", s.bitmap())),
                        co.complete_nodeset,
                    ),
                ];
                for (want, got) in sets {
                    if want != bits(got) {
                        return Err(format!("{what}: sets differ"));
                    }
                }
                let infos = wloc_xml::v2_infos(m, id);
                if infos.len() != co.infos_count as usize {
                    return Err(format!("{what}: info count differs"));
                }
                for (k, inf) in infos.iter().enumerate() {
                    let ci = *co.infos.add(k);
                    if CStr::from_ptr(ci.name).to_str() != Ok(inf.name.as_str())
                        || CStr::from_ptr(ci.value).to_str() != Ok(inf.value.as_str())
                    {
                        return Err(format!("{what}: info {k} differs"));
                    }
                }
            }
        }
    }
    Ok(())
}

/// The C object of a model id, found the way C finds it.
fn hwloc_ptr(t: hwloc_topology_t, id: wloc_core::ObjId) -> hwloc_obj_t {
    // SAFETY: a loaded handle.
    let m = unsafe { model(t) }.expect("loaded");
    let o = m.obj(id);
    // SAFETY: C API call on a loaded topology.
    unsafe { hwloc::objects::hwloc_get_obj_by_depth(t, o.depth().to_i32(), o.logical_index()) }
}

fn synthetic() -> impl Strategy<Value = String> {
    (
        1u32..4,
        1u32..3,
        1u32..4,
        1u32..3,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(p, n, c, pu, numa, l2)| {
            let mut s = format!("pack:{p}");
            if numa {
                s += &format!(" [numa] numa:{n}");
            }
            if l2 {
                s += " l2:1";
            }
            s + &format!(" core:{c} pu:{pu}")
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn synthetic_topologies_mirror_the_model(desc in synthetic()) {
        let d = CString::new(desc.clone()).unwrap();
        // SAFETY: a NUL-terminated description.
        let t = load(|t| unsafe { hwloc_topology_set_synthetic(t, d.as_ptr()) });
        let Ok(t) = t else { return Ok(()) };
        let r = check(t);
        // SAFETY: a handle from `load`.
        unsafe { hwloc_topology_destroy(t) };
        prop_assert!(r.is_ok(), "{desc}: {:?}", r);
    }
}

#[test]
fn conformance_recordings_mirror_the_model() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/conformance/xml");
    let mut checked = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "xml") {
            continue;
        }
        let c = CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        let Ok(t) = load(|t| unsafe { hwloc_topology_set_xml(t, c.as_ptr()) }) else {
            continue;
        };
        let r = check(t);
        // SAFETY: a handle from `load`.
        unsafe { hwloc_topology_destroy(t) };
        assert!(r.is_ok(), "{}: {:?}", p.display(), r);
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} recordings loaded");
}
