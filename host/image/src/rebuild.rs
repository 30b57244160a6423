//! Building a full [`Topology`] from a validated image, as the XML import
//! does: objects attached under their parents in table order (so every
//! child list keeps its order), topology-wide data attached, then
//! [`Topology::finish`] and the consistency check.

use wloc_core::cpukinds::CpuKind;
use wloc_core::distances::Distances;
use wloc_core::memattrs::{Initiator, MemAttr, MemAttrValue};
use wloc_core::object::{Info, Object};
use wloc_core::topology::{MemTier, PciLocality};
use wloc_core::{ObjId, Topology};

use crate::format::{self, ArchivedBody, ArchivedInfo, ArchivedInit, ArchivedObj};
use crate::view::{cpuset, nodeset, obj_attr};
use crate::ImageError;

fn infos(v: &[ArchivedInfo]) -> Vec<Info> {
    v.iter()
        .map(|i| Info {
            name: i.name.as_str().into(),
            value: i.value.as_str().into(),
        })
        .collect()
}

/// Fills the descriptive fields of `obj` from the image.
fn fill(obj: &mut Object, o: &ArchivedObj, b: &ArchivedBody) {
    let set = |i: &rkyv::rend::u32_le| b.sets.get(i.to_native() as usize);
    let string = |i: &rkyv::rend::u32_le| {
        b.strings
            .get(i.to_native() as usize)
            .map(|s| s.as_str().into())
    };
    obj.subtype = string(&o.subtype);
    obj.os_index = o.os_index();
    obj.name = string(&o.name);
    obj.attr = obj_attr(b, o);
    obj.cpuset = set(&o.cpuset).map(cpuset);
    obj.complete_cpuset = set(&o.complete_cpuset).map(cpuset);
    obj.nodeset = set(&o.nodeset).map(nodeset);
    obj.complete_nodeset = set(&o.complete_nodeset).map(nodeset);
    let [start, len] = o.infos.map(|v| v.to_native() as usize);
    obj.infos = infos(&b.obj_infos[start..start + len]);
    obj.gp_index = o.gp_index.to_native();
    obj.total_memory = o.total_memory.to_native();
}

/// Rebuilds the topology of a validated body into `t`.
pub fn rebuild(b: &ArchivedBody, mut t: Topology) -> Result<Topology, ImageError> {
    let n = b.objects.len();
    let mut ids: Vec<ObjId> = Vec::with_capacity(n);
    let root = t.root();
    fill(t.root_mut(), &b.objects[0], b);
    t.reserve_gp_index(b.objects[0].gp_index.to_native());
    ids.push(root);
    // Validation guarantees each parent comes before its children.
    for o in b.objects.iter().skip(1) {
        let ty = format::obj_type(o.ty).expect("validated type");
        let mut obj = Object::new(ty, None);
        fill(&mut obj, o, b);
        let parent = ids[o.parent().expect("validated parent") as usize];
        let gp = obj.gp_index;
        ids.push(t.insert_by_parent(parent, obj));
        t.reserve_gp_index(gp);
    }
    let id = |i: &rkyv::rend::u32_le| ids[i.to_native() as usize];
    t.allowed_cpuset = cpuset(&b.allowed_cpuset);
    t.allowed_nodeset = nodeset(&b.allowed_nodeset);
    t.is_thissystem = b.is_thissystem;
    t.cpukinds_ranking = format::RANKINGS[b.cpukinds_ranking as usize];
    for d in b.distances.iter() {
        let objs = d.objs.iter().map(id).collect();
        let values = d.values.iter().map(|v| v.to_native()).collect();
        let name = d.name.as_ref().map(|s| s.as_str().to_string());
        if let Some(d) = Distances::new(name, d.kind.to_native(), objs, values) {
            t.distances.push(d);
        }
    }
    for m in b.memattrs.iter() {
        let mut a = MemAttr::new(m.name.as_str(), m.flags.to_native());
        a.values = m
            .values
            .iter()
            .map(|v| MemAttrValue {
                target: id(&v.target),
                initiator: match &v.initiator {
                    ArchivedInit::None => None,
                    ArchivedInit::CpuSet(s) => Some(Initiator::CpuSet(cpuset(s))),
                    ArchivedInit::Object(o) => Some(Initiator::Object(id(o))),
                },
                value: v.value.to_native(),
            })
            .collect();
        t.memattrs.push(a);
    }
    for k in b.cpukinds.iter() {
        let mut kind = CpuKind::new(
            cpuset(&k.cpuset),
            k.forced_efficiency.as_ref().map(|v| v.to_native()),
            infos(&k.infos),
        );
        kind.efficiency = k.efficiency.to_native();
        t.cpukinds.push(kind);
    }
    t.memtiers = b
        .memtiers
        .iter()
        .map(|m| MemTier {
            kinds: m.kinds.to_native(),
            nodeset: nodeset(&m.nodeset),
        })
        .collect();
    t.infos = infos(&b.infos);
    t.support = b.support.iter().map(|s| s.as_str().to_string()).collect();
    t.pci_localities = b
        .pci_localities
        .iter()
        .map(|p| PciLocality {
            domain: p.domain.to_native(),
            bus_min: p.bus_min,
            bus_max: p.bus_max,
            cpuset: cpuset(&p.cpuset),
        })
        .collect();
    t.finish().map_err(|e| {
        ImageError::Invalid(format!("the image describes an invalid topology: {e}"))
    })?;
    t.check().map_err(|e| {
        ImageError::Invalid(format!("the image describes an inconsistent topology: {e}"))
    })?;
    Ok(t)
}
