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

/// Global persistent indexes are bounded far below `u64::MAX` (2^62).
const MAX_GP_INDEX: u64 = 1 << 62;

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
    let nstrings = b.strings.len();
    let ninfos = b.obj_infos.len();
    let nchildren = b.children.len();
    let nattrs = b.attrs.len();
    let objects = &b.objects[..];
    // One linear pass, O(1) per object and per listed child.  Each non-root
    // object must be listed exactly once, by its parent: every listed child
    // names the lister as its parent and has the list's family, each family
    // list is strictly increasing (the writer lists children in depth-first
    // order), so no object is listed twice; then n - 1 listings in all
    // cover every non-root object.
    let mut listings = 0usize;
    for (i, o) in objects.iter().enumerate() {
        let t = format::obj_type(o.ty)
            .ok_or_else(|| bad(format!("object {i}: unknown type code {}", o.ty)))?;
        if o.flags & !(format::F_SYMMETRIC | format::F_OS_INDEX | format::F_PARENT) != 0 {
            return Err(bad(format!("object {i}: unknown flags {:#x}", o.flags)));
        }
        if i == 0 {
            if t != ObjType::Machine || o.parent().is_some() {
                return Err(bad("the first object is not a Machine root"));
            }
        } else {
            match o.parent() {
                Some(p) if (p as usize) < i => {}
                _ => {
                    return Err(bad(format!(
                        "object {i}: its parent does not come before it"
                    )))
                }
            }
        }
        // The OS index of a PU or a NUMA node is a bit of the root's sets
        // once rebuilt: it is bounded as the sets are.
        if let Some(os) = o.os_index() {
            if matches!(t, ObjType::PU | ObjType::NUMANode) && os as usize >= MAX_SET_WORDS * 64 {
                return Err(bad(format!("object {i}: OS index {os} is too large")));
            }
        }
        // The rebuild keeps allocating gp indexes above the largest one
        // read: bounded so that the counter cannot overflow.
        if o.gp_index.to_native() >= MAX_GP_INDEX {
            return Err(bad(format!(
                "object {i}: global persistent index {} is too large",
                o.gp_index.to_native()
            )));
        }
        if Depth::from_i64(o.depth.to_native() as i64).is_none() {
            return Err(bad(format!(
                "object {i}: invalid depth {}",
                o.depth.to_native()
            )));
        }
        let a = o.attr.to_native();
        let attr = if a == format::NO_ATTR {
            &ArchivedAttr::None
        } else {
            b.attrs.get(a as usize).ok_or_else(|| {
                bad(format!(
                    "object {i}: its attributes are entry {a} of {nattrs}"
                ))
            })?
        };
        let attr_ok = match (attr, t) {
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
        for (s, what) in [(&o.subtype, "subtype"), (&o.name, "name")] {
            let s = s.to_native();
            if s != format::NO_STR && s as usize >= nstrings {
                return Err(bad(format!(
                    "object {i}: its {what} is string {s} of {nstrings}"
                )));
            }
        }
        let [istart, ilen] = o.infos.map(|v| v.to_native() as usize);
        if istart.checked_add(ilen).is_none_or(|e| e > ninfos) {
            return Err(bad(format!(
                "object {i}: its infos are past the info table"
            )));
        }
        let counts = o.child_counts.map(|c| c.to_native() as usize);
        let start = o.children.to_native() as usize;
        let kids = counts
            .iter()
            .try_fold(start, |a, &c| a.checked_add(c))
            .filter(|&e| e <= nchildren)
            .map(|e| &b.children[start..e])
            .ok_or_else(|| bad(format!("object {i}: its children are past the child table")))?;
        listings += kids.len();
        let mut kids = kids.iter();
        let kinds = [ObjKind::Normal, ObjKind::Memory, ObjKind::Io, ObjKind::Misc];
        for (count, kind) in counts.into_iter().zip(kinds) {
            let mut prev = i;
            for c in kids.by_ref().take(count) {
                let c = c.to_native() as usize;
                let Some(co) = objects.get(c) else {
                    return Err(bad(format!("a child list refers to object {c} of {n}")));
                };
                if c <= prev || co.parent() != Some(i as u32) {
                    return Err(bad(format!(
                        "object {c} is listed out of order or as a child of object {i}, which is not its parent"
                    )));
                }
                prev = c;
                let ct = format::obj_type(co.ty).ok_or_else(|| bad("unknown type code"))?;
                if ct.kind() != kind {
                    return Err(bad(format!(
                        "object {c} ({ct}) is in the wrong child list of object {i}"
                    )));
                }
            }
        }
    }
    if listings != n - 1 {
        return Err(bad(format!(
            "{listings} objects are listed as children instead of {}",
            n - 1
        )));
    }
    // The largest index of each list against the count: a loop the
    // compiler vectorizes, where an early exit per entry would not be.
    let in_range =
        |l: &[rkyv::rend::u32_le]| l.iter().fold(0u32, |m, v| m.max(v.to_native())) < n as u32;
    for l in b.levels.iter() {
        if !in_range(l) {
            return Err(bad("a level refers to an object past the table"));
        }
    }
    if b.special.len() != crate::SPECIAL_DEPTHS.len() {
        return Err(bad(format!(
            "{} special levels instead of 6",
            b.special.len()
        )));
    }
    for l in b.special.iter() {
        if !in_range(l) {
            return Err(bad("a special level refers to an object past the table"));
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
