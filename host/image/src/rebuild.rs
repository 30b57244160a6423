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

use crate::format::{self, ArchivedBody, ArchivedInfo, ArchivedInit};
use crate::view::{
    cpuset, nodeset, obj_attr, obj_infos, opt_cpuset, opt_nodeset, opt_string, total_memory,
};
use crate::ImageError;

fn infos(v: &[ArchivedInfo]) -> Vec<Info> {
    v.iter()
        .map(|i| Info {
            name: i.name.as_str().into(),
            value: i.value.as_str().into(),
        })
        .collect()
}

/// Fills the descriptive fields of `obj` from object `i` of the image.
fn fill(obj: &mut Object, b: &ArchivedBody, i: usize) {
    obj.subtype = opt_string(b, &b.subtype, i).map(Into::into);
    obj.os_index = (b.flags[i] & format::F_OS_INDEX != 0).then(|| b.os_index.get(i) as u32);
    obj.name = opt_string(b, &b.name, i).map(Into::into);
    obj.attr = obj_attr(b, i);
    obj.cpuset = opt_cpuset(b, &b.cpuset, i);
    obj.complete_cpuset = opt_cpuset(b, &b.complete_cpuset, i);
    obj.nodeset = opt_nodeset(b, &b.nodeset, i);
    obj.complete_nodeset = opt_nodeset(b, &b.complete_nodeset, i);
    obj.infos = obj_infos(b, i)
        .map(|(name, value)| Info {
            name: name.into(),
            value: value.into(),
        })
        .collect();
    obj.gp_index = b.gp_index.get(i);
    obj.total_memory = total_memory(b, i);
}

/// Rebuilds the topology of a validated body into `t`.
pub fn rebuild(b: &ArchivedBody, mut t: Topology) -> Result<Topology, ImageError> {
    let n = b.ty.len();
    // The children runs, computed once (the view finds one by binary
    // search).
    let mut runs = vec![0usize; n + 1];
    b.parent.each(|c, p| {
        if c > 0 {
            runs[p as usize + 1] = c + 1;
        }
    });
    // runs[i + 1] is now one past the last child of i, or 0 for none:
    // carry the ends forward so that runs[i]..runs[i + 1] is i's run.
    runs[0] = 1;
    for i in 1..=n {
        runs[i] = runs[i].max(runs[i - 1]);
    }
    let run = |i: usize| runs[i]..runs[i + 1];
    let root = t.root();
    let mut ids: Vec<ObjId> = vec![root; n];
    fill(t.root_mut(), b, 0);
    t.reserve_gp_index(b.gp_index.get(0));
    // Depth-first (an object, then its memory, normal, I/O and misc
    // children), as the XML import inserts: the arena gets the same order.
    // Validation guarantees each object is in exactly one run, its
    // parent's, which comes before it: the walk visits each object once.
    let mut stack: Vec<usize> = run(0).rev().collect();
    while let Some(i) = stack.pop() {
        let ty = format::obj_type(b.ty[i]).expect("validated type");
        let mut obj = Object::new(ty, None);
        fill(&mut obj, b, i);
        let parent = ids[b.parent.get(i) as usize];
        let gp = obj.gp_index;
        ids[i] = t.insert_by_parent(parent, obj);
        t.reserve_gp_index(gp);
        stack.extend(run(i).rev());
    }
    let id = |i: &rkyv::rend::u32_le| ids[i.to_native() as usize];
    t.allowed_cpuset = cpuset(b, b.allowed_cpuset.to_native());
    t.allowed_nodeset = nodeset(b, b.allowed_nodeset.to_native());
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
                    ArchivedInit::CpuSet(s) => Some(Initiator::CpuSet(cpuset(b, s.to_native()))),
                    ArchivedInit::Object(o) => Some(Initiator::Object(id(o))),
                },
                value: v.value.to_native(),
            })
            .collect();
        t.memattrs.push(a);
    }
    for k in b.cpukinds.iter() {
        let mut kind = CpuKind::new(
            cpuset(b, k.cpuset.to_native()),
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
            nodeset: nodeset(b, m.nodeset.to_native()),
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
            cpuset: cpuset(b, p.cpuset.to_native()),
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
