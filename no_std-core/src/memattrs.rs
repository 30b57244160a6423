//! Memory attributes: how well initiators (CPUs, devices) reach memory targets.

use alloc::string::String;
use alloc::vec::Vec;

use crate::bitmap::CpuSet;
use crate::object::{Depth, ObjId};
use crate::topology::Topology;

/// Memory attribute flags (hwloc's `HWLOC_MEMATTR_FLAG_*`).
pub mod flags {
    /// Higher values are better (bandwidth, capacity).
    pub const HIGHER_FIRST: u64 = 1 << 0;
    /// Lower values are better (latency).
    pub const LOWER_FIRST: u64 = 1 << 1;
    /// Values depend on the initiator.
    pub const NEED_INITIATOR: u64 = 1 << 2;
}

/// Who accesses the memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Initiator {
    /// A set of PUs.
    CpuSet(CpuSet),
    /// An object (PU, NUMA node, device, ...).
    Object(ObjId),
}

/// One measured value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemAttrValue {
    /// The memory (usually a NUMA node).
    pub target: ObjId,
    /// Who accesses it, for attributes that need an initiator.
    pub initiator: Option<Initiator>,
    /// The value.
    pub value: u64,
}

/// A named memory attribute with its values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemAttr {
    /// Name (`Bandwidth`, `Latency`, ... or a custom one).
    pub name: String,
    /// Flags (see [`flags`]).
    pub flags: u64,
    /// Values.
    pub values: Vec<MemAttrValue>,
}

/// Names and flags of the attributes hwloc predefines, in hwloc's id order.
/// Capacity and Locality are computed from the topology, not stored.
pub const PREDEFINED: [(&str, u64); 8] = [
    ("Capacity", flags::HIGHER_FIRST),
    ("Locality", flags::LOWER_FIRST),
    ("Bandwidth", flags::HIGHER_FIRST | flags::NEED_INITIATOR),
    ("Latency", flags::LOWER_FIRST | flags::NEED_INITIATOR),
    ("ReadBandwidth", flags::HIGHER_FIRST | flags::NEED_INITIATOR),
    (
        "WriteBandwidth",
        flags::HIGHER_FIRST | flags::NEED_INITIATOR,
    ),
    ("ReadLatency", flags::LOWER_FIRST | flags::NEED_INITIATOR),
    ("WriteLatency", flags::LOWER_FIRST | flags::NEED_INITIATOR),
];

impl MemAttr {
    /// A new attribute without values.
    pub fn new(name: &str, flags: u64) -> Self {
        MemAttr {
            name: name.into(),
            flags,
            values: Vec::new(),
        }
    }

    /// Whether values need an initiator.
    pub fn needs_initiator(&self) -> bool {
        self.flags & flags::NEED_INITIATOR != 0
    }

    /// Sets a value, replacing an existing one for the same target and initiator.
    pub fn set(&mut self, target: ObjId, initiator: Option<Initiator>, value: u64) {
        let initiator = if self.needs_initiator() {
            initiator
        } else {
            None
        };
        match self
            .values
            .iter_mut()
            .find(|v| v.target == target && v.initiator == initiator)
        {
            Some(v) => v.value = value,
            None => self.values.push(MemAttrValue {
                target,
                initiator,
                value,
            }),
        }
    }

    /// The value for a target and an initiator (`hwloc_memattr_get_value`).
    #[doc(alias = "hwloc_memattr_get_value")]
    pub fn get(&self, target: ObjId, initiator: Option<&Initiator>) -> Option<u64> {
        self.values
            .iter()
            .find(|v| v.target == target && v.initiator.as_ref() == initiator)
            .map(|v| v.value)
    }

    /// Drops values whose target or initiator object is gone.
    pub fn retain_objects(&mut self, alive: impl Fn(ObjId) -> bool) {
        self.values.retain(|v| {
            alive(v.target)
                && match &v.initiator {
                    Some(Initiator::Object(o)) => alive(*o),
                    _ => true,
                }
        });
    }
}

/// A memory attribute as hwloc numbers them (`hwloc_memattr_id_t`): the
/// [`PREDEFINED`] ones are ids 0 to 7, custom ones follow in the order
/// they were registered.
#[derive(Clone, Copy, Debug)]
pub struct AttrRef<'a> {
    /// hwloc's id.
    pub id: usize,
    /// The attribute's name.
    pub name: &'a str,
    /// Its flags (see [`flags`]).
    pub flags: u64,
    /// The stored values; `None` for Capacity and Locality, computed from
    /// the NUMA nodes, and for predefined attributes without values.
    pub stored: Option<&'a MemAttr>,
}

/// The attribute with hwloc's id `id`.
pub fn attribute(topo: &Topology, id: usize) -> Option<AttrRef<'_>> {
    let is_predefined = |m: &&MemAttr| PREDEFINED.iter().any(|(n, _)| *n == m.name);
    if let Some(&(name, flags)) = PREDEFINED.get(id) {
        let stored = if id < 2 {
            None
        } else {
            topo.memattrs.iter().find(|m| m.name == name)
        };
        return Some(AttrRef {
            id,
            name,
            flags,
            stored,
        });
    }
    let m = topo
        .memattrs
        .iter()
        .filter(|m| !is_predefined(m))
        .nth(id - PREDEFINED.len())?;
    Some(AttrRef {
        id,
        name: &m.name,
        flags: m.flags,
        stored: Some(m),
    })
}

/// Finds an attribute as hwloc's tools read one on their command line: by
/// name, ignoring case, or else by id when the text starts with a digit
/// (read as C's `atoi` does).
pub fn find_attribute<'a>(topo: &'a Topology, s: &str) -> Option<AttrRef<'a>> {
    let mut id = 0;
    while let Some(a) = attribute(topo, id) {
        if a.name.eq_ignore_ascii_case(s) {
            return Some(a);
        }
        id += 1;
    }
    if !s.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let n: usize = s[..digits].parse().ok()?;
    attribute(topo, n)
}

/// The value of a built-in attribute computed from the object itself:
/// Capacity (id 0) is its local memory, Locality (id 1) the number of its
/// PUs (an infinite set weighs -1, read as unsigned).
pub fn builtin_value(topo: &Topology, attr_id: usize, obj: ObjId) -> u64 {
    let o = topo.obj(obj);
    if attr_id == 0 {
        o.numa().map(|a| a.local_memory).unwrap_or(0)
    } else {
        o.cpuset
            .as_ref()
            .map(|c| c.weight().map(u64::from).unwrap_or(u64::MAX))
            .unwrap_or(0)
    }
}

/// The targets of an attribute with their values, as seen from the PUs in
/// `initiator` (`hwloc_memattr_get_targets` with a CPU set location).
///
/// Capacity and Locality give every NUMA node.  For attributes that need
/// an initiator, a target counts when one of its values was measured from
/// a CPU set that contains `initiator` (the first such value, in the order
/// values were set); values from objects never match a CPU set.
#[doc(alias = "hwloc_memattr_get_targets")]
pub fn targets(topo: &Topology, attr: &AttrRef<'_>, initiator: &CpuSet) -> Vec<(ObjId, u64)> {
    if attr.id < 2 {
        return topo
            .level(Depth::NumaNode)
            .iter()
            .map(|&n| (n, builtin_value(topo, attr.id, n)))
            .collect();
    }
    let Some(m) = attr.stored else {
        return Vec::new();
    };
    let need = attr.flags & flags::NEED_INITIATOR != 0;
    let mut out: Vec<(ObjId, u64)> = Vec::new();
    for v in &m.values {
        if topo.get(v.target).is_none() || out.iter().any(|(t, _)| *t == v.target) {
            continue;
        }
        if need {
            match &v.initiator {
                Some(Initiator::CpuSet(c))
                    if !initiator.is_empty() && initiator.is_included_in(c) => {}
                _ => continue,
            }
        }
        out.push((v.target, v.value));
    }
    out
}

/// The best of `nodes` for an attribute, from the PUs in `initiator`, as
/// hwloc 2.14's tools choose them (`hwloc_utils_get_best_node_in_array_by_memattr`):
/// the positions of every node with the highest value (or lowest, for
/// attributes where lower is better), ties all kept.
///
/// For attributes that need an initiator, a node's value is its first one
/// measured from a CPU set that intersects `initiator` (that contains it,
/// when `strict`); values measured from objects never match.  A node with no
/// value at all for such an attribute makes the answer empty (hwloc cannot
/// list its initiators).  Other attributes skip nodes without a value.
#[doc(alias = "hwloc_utils_get_best_node_in_array_by_memattr")]
pub fn best_nodes(
    topo: &Topology,
    attr: &AttrRef<'_>,
    nodes: &[ObjId],
    initiator: &CpuSet,
    strict: bool,
) -> Vec<usize> {
    let higher = attr.flags & flags::HIGHER_FIRST != 0;
    let need = attr.flags & flags::NEED_INITIATOR != 0;
    let mut best: Vec<usize> = Vec::new();
    let mut best_value = 0u64;
    for (i, &n) in nodes.iter().enumerate() {
        let value = if attr.id < 2 {
            Some(builtin_value(topo, attr.id, n))
        } else {
            let Some(m) = attr.stored else {
                return Vec::new();
            };
            let mut of_node = m.values.iter().filter(|v| v.target == n).peekable();
            if need && of_node.peek().is_none() {
                return Vec::new();
            }
            of_node
                .find(|v| {
                    !need
                        || matches!(&v.initiator, Some(Initiator::CpuSet(c))
                            if if strict { initiator.is_included_in(c) } else { initiator.intersects(c) })
                })
                .map(|v| v.value)
        };
        let Some(v) = value else {
            continue;
        };
        let better = best.is_empty()
            || if higher {
                v > best_value
            } else {
                v < best_value
            };
        if better {
            best.clear();
            best_value = v;
        }
        if better || v == best_value {
            best.push(i);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_replaces_and_ignores_initiator_when_not_needed() {
        let mut m = MemAttr::new("Capacityish", flags::HIGHER_FIRST);
        m.set(3, Some(Initiator::Object(1)), 10);
        m.set(3, None, 20);
        assert_eq!(m.values.len(), 1);
        assert_eq!(m.get(3, None), Some(20));
        let mut l = MemAttr::new("Latency", flags::LOWER_FIRST | flags::NEED_INITIATOR);
        l.set(3, Some(Initiator::Object(1)), 5);
        l.set(3, Some(Initiator::Object(2)), 7);
        assert_eq!(l.get(3, Some(&Initiator::Object(2))), Some(7));
        l.retain_objects(|o| o != 2);
        assert_eq!(l.values.len(), 1);
    }

    #[test]
    fn best_node_follows_hwloc_tools() {
        let mut t = crate::synthetic::parse("pack:2 [numa] pu:2")
            .unwrap()
            .build(Topology::new())
            .unwrap();
        let nodes: Vec<ObjId> = t.level(Depth::NumaNode).to_vec();
        let mut bw = MemAttr::new("Bandwidth", flags::HIGHER_FIRST | flags::NEED_INITIATOR);
        let all = CpuSet::from_range(0, Some(3));
        bw.set(nodes[0], Some(Initiator::CpuSet(all.clone())), 10);
        bw.set(nodes[1], Some(Initiator::CpuSet(all.clone())), 30);
        bw.set(nodes[1], Some(Initiator::Object(nodes[0])), 99);
        let mut custom = MemAttr::new("Custom", flags::LOWER_FIRST);
        custom.set(nodes[1], None, 5);
        t.memattrs.push(bw);
        t.memattrs.push(custom);
        let bw = find_attribute(&t, "bandwidth").unwrap();
        assert_eq!(bw.id, 2);
        assert_eq!(
            best_nodes(&t, &bw, &nodes, &CpuSet::from_index(0), false),
            [1]
        );
        // An initiator larger than every measured one intersects them, but
        // is not contained in any.
        let wide = CpuSet::from_range(0, Some(8));
        assert_eq!(best_nodes(&t, &bw, &nodes, &wide, false), [1]);
        assert!(best_nodes(&t, &bw, &nodes, &wide, true).is_empty());
        assert!(best_nodes(&t, &bw, &nodes, &CpuSet::new(), false).is_empty());
        assert_eq!(find_attribute(&t, "8").unwrap().name, "Custom");
        assert_eq!(find_attribute(&t, "8abc").unwrap().name, "Custom");
        assert!(find_attribute(&t, "9").is_none());
        assert!(find_attribute(&t, "x8").is_none());
        // Without an initiator, nodes without a value are skipped.
        let custom = find_attribute(&t, "CUSTOM").unwrap();
        assert_eq!(best_nodes(&t, &custom, &nodes, &wide, false), [1]);
        // Capacity ties keep every node.
        let cap = find_attribute(&t, "capacity").unwrap();
        assert_eq!(best_nodes(&t, &cap, &nodes, &all, false), [0, 1]);
        assert_eq!(targets(&t, &cap, &all).len(), 2);
        // A node without any Bandwidth value makes the answer empty.
        let mut one = MemAttr::new("Bandwidth", flags::HIGHER_FIRST | flags::NEED_INITIATOR);
        one.set(nodes[1], Some(Initiator::CpuSet(all.clone())), 30);
        t.memattrs[0] = one;
        let bw = find_attribute(&t, "bandwidth").unwrap();
        assert!(best_nodes(&t, &bw, &nodes, &all, false).is_empty());
    }
}
