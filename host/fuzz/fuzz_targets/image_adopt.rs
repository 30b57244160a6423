//! Arbitrary bytes as a topology image, twice: as given (the header checks
//! refuse almost everything) and re-sealed with a correct checksum, so
//! that the archive and tree validation see hostile bodies.  Adopting must
//! refuse or accept without panicking; an accepted image must answer every
//! query and rebuild (or refuse to rebuild) without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wloc_core::object::Depth;

fn exercise(bytes: &[u8]) {
    let Ok(img) = wloc_image::adopt_bytes(bytes) else {
        return;
    };
    for o in img.objects() {
        let _ = (
            o.cpuset(),
            o.nodeset(),
            o.complete_cpuset(),
            o.complete_nodeset(),
        );
        let _ = (
            o.children(),
            o.memory_children(),
            o.io_children(),
            o.misc_children(),
        );
        let _ = (
            o.parent(),
            o.attr(),
            o.depth(),
            o.infos().count(),
            o.name(),
            o.subtype(),
        );
        let _ = (
            o.sibling_rank(),
            o.os_index(),
            o.logical_index(),
            o.arity(),
            o.cpuset_has(3),
            o.gp_index(),
            o.total_memory(),
        );
    }
    if let Some(pu) = img.objs_by_type(wloc_core::ObjType::PU).first() {
        if let Some(c) = pu.cpuset() {
            let _ = img.covering(&c);
        }
    }
    let _ = (img.allowed_cpuset(), img.allowed_nodeset(), img.cpuset());
    for k in img.cpukinds() {
        let _ = (k.cpuset(), k.infos().count());
    }
    for t in img.memtiers() {
        let _ = t.nodeset();
    }
    for d in 0..img.depth() + 1 {
        let _ = img.level(Depth::Normal(d));
    }
    for &t in &wloc_core::ObjType::ALL {
        let _ = (img.type_depth(t), img.objs_by_type(t));
    }
    for d in img.distances() {
        let _ = (d.objs(), d.value(0, 0), d.name());
    }
    for m in img.memattrs() {
        let _ = m.values();
    }
    let _ = img.to_topology();
}

fuzz_target!(|data: &[u8]| {
    exercise(data);
    // The same bytes as the body of an image with a valid header.
    let mut v = Vec::with_capacity(wloc_image::HEADER_LEN + data.len());
    v.extend_from_slice(&wloc_image::MAGIC);
    v.extend_from_slice(&wloc_image::FORMAT_VERSION.to_le_bytes());
    v.extend_from_slice(&(wloc_image::HEADER_LEN as u32).to_le_bytes());
    v.extend_from_slice(&(data.len() as u64).to_le_bytes());
    v.extend_from_slice(&twox_hash::XxHash3_64::oneshot(data).to_le_bytes());
    v.resize(wloc_image::HEADER_LEN, 0);
    v.extend_from_slice(data);
    exercise(&v);
});
