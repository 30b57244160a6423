//! Memory attributes: how well initiators (CPUs, devices) reach memory targets.

use alloc::string::String;
use alloc::vec::Vec;

use crate::bitmap::CpuSet;
use crate::object::ObjId;

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

    /// The value for a target and an initiator.
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
}
