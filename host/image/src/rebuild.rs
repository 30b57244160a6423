//! Building a full [`Topology`] from a validated image, as the XML import
//! does: objects attached under their parents in table order (so every
//! child list keeps its order), topology-wide data attached, then
//! [`Topology::finish`] and the consistency check.
//!
//! An image stores each distinct set, string and attribute once and
//! objects name them by index, and a set's leading zero words are only
//! counted, not stored; the rebuilt topology gives every object its own
//! copies, at full width. So a small image can describe a topology many
//! times its size: what the rebuild would allocate is computed from the
//! image first, and an image asking more than [`REBUILD_SLACK`] plus
//! [`REBUILD_RATIO`] bytes per byte of the image is refused before
//! anything is built.

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
use crate::{ImageError, clip};

/// The most a rebuild may allocate for any image (see the module
/// documentation), plus [`REBUILD_RATIO`] bytes per byte of the image.
pub const REBUILD_SLACK: u64 = 64 << 20;
/// See [`REBUILD_SLACK`]. A real machine's image rebuilds into about 10
/// to 20 times its size (objects of 336 bytes for about 50 bytes of
/// image each); sets at full width grow with the number of PUs, to about
/// 60 times for 16,384 PUs.
pub const REBUILD_RATIO: u64 = 128;

/// What rebuilding `b` allocates, in bytes, estimated from the image
/// alone (a bound, not the exact figure): the objects, every object's
/// copy of its sets at full width, of its name, subtype, infos and
/// userdata, and the topology-wide sets.
pub(crate) fn rebuild_cost(b: &ArchivedBody) -> u64 {
    let nsets = b.set_skip.len();
    // Bytes of each set, rebuilt (8 per word, skipped words included).
    let set_bytes: Vec<u64> = (0..nsets)
        .map(|s| {
            let stored = b.set_start[s + 1].to_native() - b.set_start[s].to_native();
            8 * (u64::from(b.set_skip[s].to_native()) + u64::from(stored))
        })
        .collect();
    let set = |s: usize| set_bytes.get(s).copied().unwrap_or(0);
    let string = |s: usize| b.strings.get(s).map_or(0, |s| s.len() as u64);
    let n = b.ty.len() as u64;
    let mut cost = n * (std::mem::size_of::<wloc_core::object::Object>() as u64 + 32);
    for col in [
        &b.cpuset,
        &b.complete_cpuset,
        &b.nodeset,
        &b.complete_nodeset,
    ] {
        col.each(|_, v| {
            if v != 0 {
                cost = cost.saturating_add(set(v as usize - 1));
            }
        });
    }
    for col in [&b.subtype, &b.name] {
        col.each(|_, v| {
            if v != 0 {
                cost = cost.saturating_add(string(v as usize - 1));
            }
        });
    }
    let info = std::mem::size_of::<Info>() as u64;
    for [k, v] in b.obj_infos.iter() {
        cost = cost
            .saturating_add(info + string(k.to_native() as usize) + string(v.to_native() as usize));
    }
    let userdata = std::mem::size_of::<wloc_core::UserData>() as u64;
    for u in b.userdata.iter() {
        let name = u.name.as_ref().map_or(0, |s| s.len() as u64);
        cost = cost.saturating_add(userdata + name + u.content.len() as u64);
    }
    let mut sets = vec![b.allowed_cpuset.to_native(), b.allowed_nodeset.to_native()];
    sets.extend(b.cpukinds.iter().map(|k| k.cpuset.to_native()));
    sets.extend(b.memtiers.iter().map(|t| t.nodeset.to_native()));
    sets.extend(b.pci_localities.iter().map(|p| p.cpuset.to_native()));
    for m in b.memattrs.iter() {
        sets.extend(m.values.iter().filter_map(|v| match &v.initiator {
            ArchivedInit::CpuSet(s) => Some(s.to_native()),
            _ => None,
        }));
    }
    sets.iter()
        .fold(cost, |c, &s| c.saturating_add(set(s as usize)))
}

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

/// Rebuilds the topology of a validated body of `image_len` bytes into
/// `t`, after checking what it would allocate (see [`REBUILD_SLACK`]).
pub fn rebuild(
    b: &ArchivedBody,
    mut t: Topology,
    image_len: usize,
) -> Result<Topology, ImageError> {
    let cost = rebuild_cost(b);
    let limit = REBUILD_SLACK.saturating_add(REBUILD_RATIO.saturating_mul(image_len as u64));
    if cost > limit {
        return Err(ImageError::Invalid(format!(
            "its topology would take about {cost} bytes to build, more than {limit} ({REBUILD_SLACK} plus {REBUILD_RATIO} per byte of the image)"
        )));
    }
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
        ids[i] = t.insert_by_parent(parent, obj).map_err(|e| {
            ImageError::Invalid(format!("the image describes an invalid topology: {e}"))
        })?;
        t.reserve_gp_index(gp);
        stack.extend(run(i).rev());
    }
    for u in b.userdata.iter() {
        t.obj_mut(ids[u.obj.to_native() as usize])
            .userdata
            .push(wloc_core::UserData {
                name: u.name.as_ref().map(|s| s.as_str().to_string()),
                base64: u.base64,
                length: u.length.to_native(),
                content: u.content.as_str().to_string(),
            });
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
    // (The messages quote sets and names of the image: clipped.)
    t.finish().map_err(|e| {
        ImageError::Invalid(format!(
            "the image describes an invalid topology: {}",
            clip(&e.to_string())
        ))
    })?;
    // Images hold only trees hwloc's checker accepts (their writer refuses
    // others): an image that does not was altered.
    t.check_hwloc().map_err(|e| {
        ImageError::Invalid(format!(
            "the image describes an inconsistent topology: {}",
            clip(&e.to_string())
        ))
    })?;
    Ok(t)
}
