//! Checks of an archive bytecheck accepted: bytecheck proves every offset,
//! length, tag and string sound; these checks prove the topology's own
//! links sound, so that the view and the rebuild can index without bounds
//! failures and walk without cycles.

use wloc_core::object::{Depth, ObjKind, ObjType};

use crate::format::{self, ArchivedAttr, ArchivedBody, ArchivedInit, ArchivedSet};
use crate::ImageError;

fn bad(m: impl Into<String>) -> ImageError {
    ImageError::Invalid(m.into())
}

/// Sets are bounded so that a hostile image cannot make the rebuild
/// allocate without limit (2^14 words: a million PUs or NUMA nodes).
const MAX_SET_WORDS: usize = 1 << 14;

fn check_set(s: &ArchivedSet, what: &str, i: usize) -> Result<(), ImageError> {
    if s.words.len() > MAX_SET_WORDS {
        return Err(bad(format!("object {i}: {what} has too many words")));
    }
    Ok(())
}

/// Validates the tree and every index of an archive.
pub fn tree(b: &ArchivedBody) -> Result<(), ImageError> {
    let n = b.objects.len();
    if n == 0 {
        return Err(bad("no object"));
    }
    if n >= u32::MAX as usize {
        return Err(bad("too many objects"));
    }
    let idx = |v: u32, what: &str| -> Result<usize, ImageError> {
        let v = v as usize;
        if v < n {
            Ok(v)
        } else {
            Err(bad(format!("{what} refers to object {v} of {n}")))
        }
    };
    let nsets = b.sets.len();
    for s in b.sets.iter() {
        check_set(s, "a set", 0)?;
    }
    // Each non-root object is listed exactly once, by its parent.
    let mut listed = vec![false; n];
    for (i, o) in b.objects.iter().enumerate() {
        let t = format::obj_type(o.ty)
            .ok_or_else(|| bad(format!("object {i}: unknown type code {}", o.ty)))?;
        if i == 0 {
            if t != ObjType::Machine || o.parent.is_some() {
                return Err(bad("the first object is not a Machine root"));
            }
        } else {
            match o.parent.as_ref() {
                Some(p) if (p.to_native() as usize) < i => {}
                _ => {
                    return Err(bad(format!(
                        "object {i}: its parent does not come before it"
                    )))
                }
            }
        }
        // The OS index of a PU or a NUMA node is a bit of the root's sets
        // once rebuilt: it is bounded as the sets are.
        if let Some(os) = o.os_index.as_ref() {
            if matches!(t, ObjType::PU | ObjType::NUMANode)
                && os.to_native() as usize >= MAX_SET_WORDS * 64
            {
                return Err(bad(format!(
                    "object {i}: OS index {} is too large",
                    os.to_native()
                )));
            }
        }
        if Depth::from_i64(o.depth.to_native() as i64).is_none() {
            return Err(bad(format!(
                "object {i}: invalid depth {}",
                o.depth.to_native()
            )));
        }
        let attr_ok = match (&o.attr, t) {
            (ArchivedAttr::Numa { .. }, ObjType::NUMANode) => true,
            (ArchivedAttr::Cache { kind, .. }, t) if t.is_cache() || t == ObjType::MemCache => {
                wloc_core::object::CacheKind::from_code(kind.to_native()).is_some()
            }
            (ArchivedAttr::Group { .. }, ObjType::Group) => true,
            (ArchivedAttr::Pci(_), ObjType::PCIDevice) => true,
            (ArchivedAttr::Bridge { .. }, ObjType::Bridge) => true,
            (ArchivedAttr::OsDev(_), ObjType::OSDevice) => true,
            (ArchivedAttr::None, t) => {
                !matches!(
                    t,
                    ObjType::NUMANode
                        | ObjType::Group
                        | ObjType::PCIDevice
                        | ObjType::Bridge
                        | ObjType::OSDevice
                        | ObjType::MemCache
                ) && !t.is_cache()
            }
            _ => false,
        };
        if !attr_ok {
            return Err(bad(format!(
                "object {i}: attributes do not match its type {t}"
            )));
        }
        let sets = [
            (&o.cpuset, "cpuset"),
            (&o.complete_cpuset, "complete cpuset"),
            (&o.nodeset, "nodeset"),
            (&o.complete_nodeset, "complete nodeset"),
        ];
        for (s, what) in sets {
            let s = s.to_native();
            if s == format::NO_SET {
                if matches!(t.kind(), ObjKind::Normal | ObjKind::Memory) {
                    return Err(bad(format!("object {i} ({t}) has no {what}")));
                }
            } else if s as usize >= nsets {
                return Err(bad(format!("object {i}: its {what} is set {s} of {nsets}")));
            }
        }
        let counts = o.child_counts.map(|c| c.to_native() as usize);
        if counts.iter().try_fold(0usize, |a, &c| a.checked_add(c)) != Some(o.children.len()) {
            return Err(bad(format!("object {i}: child counts do not add up")));
        }
        let mut kids = o.children.iter();
        let kinds = [ObjKind::Normal, ObjKind::Memory, ObjKind::Io, ObjKind::Misc];
        for (count, kind) in counts.into_iter().zip(kinds) {
            for c in kids.by_ref().take(count) {
                let c = idx(c.to_native(), "a child list")?;
                let co = &b.objects[c];
                if c <= i || co.parent.as_ref().map(|p| p.to_native() as usize) != Some(i) {
                    return Err(bad(format!(
                        "object {c} is listed as a child of object {i}, which is not its parent"
                    )));
                }
                let ct = format::obj_type(co.ty).ok_or_else(|| bad("unknown type code"))?;
                if ct.kind() != kind {
                    return Err(bad(format!(
                        "object {c} ({ct}) is in the wrong child list of object {i}"
                    )));
                }
                if std::mem::replace(&mut listed[c], true) {
                    return Err(bad(format!("object {c} is listed twice as a child")));
                }
            }
        }
    }
    if let Some(i) = listed.iter().skip(1).position(|&l| !l) {
        return Err(bad(format!(
            "object {} is not listed among its parent's children",
            i + 1
        )));
    }
    for l in b.levels.iter() {
        for v in l.iter() {
            idx(v.to_native(), "a level")?;
        }
    }
    if b.special.len() != crate::SPECIAL_DEPTHS.len() {
        return Err(bad(format!(
            "{} special levels instead of 6",
            b.special.len()
        )));
    }
    for l in b.special.iter() {
        for v in l.iter() {
            idx(v.to_native(), "a special level")?;
        }
    }
    for d in b.distances.iter() {
        for v in d.objs.iter() {
            idx(v.to_native(), "a distance matrix")?;
        }
        let k = d.objs.len();
        if k.checked_mul(k) != Some(d.values.len()) {
            return Err(bad(format!(
                "a distance matrix over {k} objects holds {} values",
                d.values.len()
            )));
        }
    }
    for m in b.memattrs.iter() {
        for v in m.values.iter() {
            idx(v.target.to_native(), "a memory attribute target")?;
            match &v.initiator {
                ArchivedInit::Object(o) => {
                    idx(o.to_native(), "a memory attribute initiator")?;
                }
                ArchivedInit::CpuSet(s) => check_set(s, "initiator", 0)?,
                ArchivedInit::None => {}
            }
        }
    }
    for k in b.cpukinds.iter() {
        check_set(&k.cpuset, "CPU kind", 0)?;
    }
    for t in b.memtiers.iter() {
        check_set(&t.nodeset, "memory tier", 0)?;
    }
    for p in b.pci_localities.iter() {
        check_set(&p.cpuset, "PCI locality", 0)?;
    }
    check_set(&b.allowed_cpuset, "allowed cpuset", 0)?;
    check_set(&b.allowed_nodeset, "allowed nodeset", 0)?;
    if b.cpukinds_ranking as usize >= format::RANKINGS.len() {
        return Err(bad(format!(
            "unknown CPU kinds ranking {}",
            b.cpukinds_ranking
        )));
    }
    Ok(())
}
