//! Object type names as hwloc's tools read and print them.

use wloc_core::object::{Depth, ObjAttr};
use wloc_core::topology::TypeDepth;
use wloc_core::{ObjType, Object, Topology};

/// An OS device kind in hwloc 2's numbering (`block` is 0, ... `coproc` is 5).
pub type OsDevCode = u32;

/// A parsed type name: the type and the attribute it may carry
/// (`group2`, `l2i`, `net`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypeSpec {
    /// The object type.
    pub obj_type: ObjType,
    /// For Groups, the group depth given after the name (`group1`).
    pub group_depth: Option<u32>,
    /// For OS devices, the kind named (`net`, `block`, `gpu`, ...).
    pub osdev: Option<OsDevCode>,
}

/// Matches `s` against a lowercase type name, case-insensitively, on at
/// least `min` characters; the name in `s` ends at its first character
/// that is neither a letter nor a dash.  Returns the rest of `s`.
fn type_match<'a>(s: &'a str, name: &str, min: usize) -> Option<&'a str> {
    let sb = s.as_bytes();
    let nb = name.as_bytes();
    let mut i = 0;
    loop {
        let Some(&c) = sb.get(i) else {
            return (i >= min).then_some(&s[i..]);
        };
        let t = nb.get(i).copied().unwrap_or(0);
        if c.to_ascii_lowercase() != t || t == 0 {
            if c.is_ascii_alphabetic() || c == b'-' {
                return None;
            }
            return (i >= min).then_some(&s[i..]);
        }
        i += 1;
    }
}

/// Leading decimal digits of `s` as a number, and the rest.
fn leading_number(s: &str) -> (Option<u64>, &str) {
    let n = s.bytes().take_while(|c| c.is_ascii_digit()).count();
    if n == 0 {
        return (None, s);
    }
    (s[..n].parse().ok().or(Some(u64::MAX)), &s[n..])
}

/// Parses a type name as hwloc does (`hwloc_type_sscanf`): unambiguous
/// prefixes (`pack`, `co`, `nu`), `node` and `socket` aliases, caches as
/// `l2`, `l2d`, `l1i`, `l3cache`, groups with an optional depth, and OS
/// device kinds.
#[doc(alias = "hwloc_type_sscanf")]
pub fn parse_type(s: &str) -> Option<TypeSpec> {
    let plain = |t| {
        Some(TypeSpec {
            obj_type: t,
            group_depth: None,
            osdev: None,
        })
    };
    let osdev = |code| {
        Some(TypeSpec {
            obj_type: ObjType::OSDevice,
            group_depth: None,
            osdev: code,
        })
    };
    let m = |name, min| type_match(s, name, min).is_some();
    // OS device kinds first so that `coproc` does not read as `core`.
    if m("osdev", 2) {
        return osdev(None);
    }
    if m("block", 4) {
        return osdev(Some(0));
    }
    if m("network", 3) {
        return osdev(Some(2));
    }
    if m("openfabrics", 7) {
        return osdev(Some(3));
    }
    if m("dma", 3) {
        return osdev(Some(4));
    }
    if m("gpu", 3) {
        return osdev(Some(1));
    }
    if m("coproc", 5) || m("co-processor", 6) {
        return osdev(Some(5));
    }
    for (name, min, t) in ObjType::SSCANF_NAMES {
        if m(name, min) {
            return plain(t);
        }
    }
    if m("pcidev", 3) {
        return plain(ObjType::PCIDevice);
    }
    let b = s.as_bytes();
    if b.len() >= 2 && (b[0] == b'l' || b[0] == b'L') && b[1].is_ascii_digit() {
        let (level, rest) = leading_number(&s[1..]);
        let level = level.unwrap_or(0);
        let (t, suffix) = match rest.as_bytes().first() {
            Some(b'i' | b'I') => match level {
                1 => (ObjType::L1ICache, &rest[1..]),
                2 => (ObjType::L2ICache, &rest[1..]),
                3 => (ObjType::L3ICache, &rest[1..]),
                _ => return None,
            },
            c => {
                let t = match level {
                    1 => ObjType::L1Cache,
                    2 => ObjType::L2Cache,
                    3 => ObjType::L3Cache,
                    4 => ObjType::L4Cache,
                    5 => ObjType::L5Cache,
                    _ => return None,
                };
                match c {
                    Some(b'd' | b'D' | b'u' | b'U') => (t, &rest[1..]),
                    _ => (t, rest),
                }
            }
        };
        type_match(suffix, "cache", 0)?;
        return plain(t);
    }
    if let Some(rest) = type_match(s, "group", 2) {
        let (d, _) = leading_number(rest);
        return Some(TypeSpec {
            obj_type: ObjType::Group,
            group_depth: d.map(|d| d.min(u32::MAX as u64) as u32),
            osdev: None,
        });
    }
    None
}

/// Where objects of a parsed type live: a depth, nowhere, or several levels.
pub fn spec_depth(topo: &Topology, spec: &TypeSpec) -> TypeDepth {
    let d = topo.type_depth(spec.obj_type);
    if spec.obj_type == ObjType::Group
        && d == TypeDepth::Multiple
        && let Some(gd) = spec.group_depth
    {
        for (l, level) in topo.normal_levels().iter().enumerate() {
            if let Some(&first) = level.first() {
                let o = topo.obj(first);
                if o.obj_type == ObjType::Group && o.group().is_some_and(|g| g.depth == gd) {
                    return TypeDepth::Depth(Depth::Normal(l as u32));
                }
            }
        }
        return TypeDepth::Unknown;
    }
    d
}

/// hwloc's integer encoding of a depth, back to a [`Depth`].
pub fn depth_from_i32(d: i64) -> Option<Depth> {
    Depth::from_i64(d)
}

/// The hwloc 2 kind code of an OS device.
pub fn osdev_code(o: &Object) -> Option<OsDevCode> {
    match &o.attr {
        ObjAttr::OsDev(t) => t.v2_code(o.subtype.as_deref()),
        _ => None,
    }
}

/// The type name hwloc's tools print for an object (`hwloc_obj_type_snprintf`
/// in verbose mode): `Package`, `L2Cache`, `L1iCache`, `Group0`, `PCI`, `Net`...
#[doc(alias = "hwloc_obj_type_snprintf")]
pub fn type_label(o: &Object) -> String {
    match o.obj_type {
        t if t.is_cache() => {
            let c = o.cache();
            let depth = c.map(|c| c.depth).unwrap_or(t.cache_level().unwrap_or(1));
            let letter = match c.map(|c| c.kind) {
                Some(wloc_core::object::CacheKind::Data) => "d",
                Some(wloc_core::object::CacheKind::Instruction) => "i",
                _ => "",
            };
            format!("L{depth}{letter}Cache")
        }
        ObjType::Group => match o.group() {
            Some(g) => format!("Group{}", g.depth),
            None => "Group".into(),
        },
        ObjType::Bridge => match o.bridge().map(|b| &b.upstream) {
            Some(wloc_core::object::BridgeUpstream::Host) | None => "HostBridge".into(),
            Some(_) => "PCIBridge".into(),
        },
        ObjType::PCIDevice => "PCI".into(),
        ObjType::OSDevice => match osdev_code(o) {
            Some(0) => "Block",
            Some(1) => "GPU",
            Some(2) => "Network",
            Some(3) => "OpenFabrics",
            Some(4) => "DMA",
            Some(5) => "Co-Processor",
            _ => "",
        }
        .into(),
        ObjType::MemCache => "MemCache".into(),
        t => t.xml_name().into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_and_aliases() {
        assert_eq!(parse_type("pack").unwrap().obj_type, ObjType::Package);
        assert_eq!(parse_type("socket").unwrap().obj_type, ObjType::Package);
        assert_eq!(parse_type("Core").unwrap().obj_type, ObjType::Core);
        assert_eq!(parse_type("node").unwrap().obj_type, ObjType::NUMANode);
        assert_eq!(parse_type("numa").unwrap().obj_type, ObjType::NUMANode);
        assert_eq!(parse_type("pci").unwrap().obj_type, ObjType::PCIDevice);
        assert_eq!(parse_type("os").unwrap().osdev, None);
        assert_eq!(parse_type("net").unwrap().osdev, Some(2));
        assert_eq!(parse_type("coproc").unwrap().osdev, Some(5));
        assert!(parse_type("p").is_none());
        assert!(parse_type("corex").is_none());
        assert!(parse_type("frobnicate").is_none());
    }

    #[test]
    fn caches_and_groups() {
        assert_eq!(parse_type("l3").unwrap().obj_type, ObjType::L3Cache);
        assert_eq!(parse_type("L2cache").unwrap().obj_type, ObjType::L2Cache);
        assert_eq!(parse_type("l1i").unwrap().obj_type, ObjType::L1ICache);
        assert_eq!(parse_type("l1d").unwrap().obj_type, ObjType::L1Cache);
        assert!(parse_type("l4i").is_none());
        assert!(parse_type("l6").is_none());
        assert!(parse_type("l2x").is_none());
        let g = parse_type("group1").unwrap();
        assert_eq!((g.obj_type, g.group_depth), (ObjType::Group, Some(1)));
        assert_eq!(parse_type("group").unwrap().group_depth, None);
    }
}
