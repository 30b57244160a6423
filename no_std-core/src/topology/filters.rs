//! Type filters: which object types a topology keeps, as hwloc's
//! `hwloc_topology_set_type_filter` and its helpers, with the same
//! restrictions (Machine, PU and NUMA nodes always kept, Groups only for
//! structure, I/O and Misc kept all, none or when "important").

use super::Topology;
use crate::object::*;

/// How much of a type to keep (hwloc's `hwloc_type_filter_e`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeFilter {
    /// Keep every object of the type.
    KeepAll,
    /// Remove every object of the type.
    KeepNone,
    /// Keep only objects that bring structure (levels that differ from their neighbours).
    KeepStructure,
    /// For I/O and Misc: keep only objects deemed important.
    KeepImportant,
}

impl TypeFilter {
    /// The name lstopo's `--filter TYPE:KIND` and the Linux component's
    /// `filter.*` settings give this filter: `all`, `none`, `structure`
    /// or `important`.
    pub fn name(self) -> &'static str {
        match self {
            TypeFilter::KeepAll => "all",
            TypeFilter::KeepNone => "none",
            TypeFilter::KeepStructure => "structure",
            TypeFilter::KeepImportant => "important",
        }
    }

    /// The filter that [`name`](Self::name) calls `name`; `None` for any
    /// other text (names are case-sensitive, as lstopo's).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "all" => TypeFilter::KeepAll,
            "none" => TypeFilter::KeepNone,
            "structure" => TypeFilter::KeepStructure,
            "important" => TypeFilter::KeepImportant,
            _ => return None,
        })
    }
}

/// Why [`Topology::set_type_filter`] refused a filter (hwloc answers
/// `EINVAL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterError {
    /// Machine, PU and NUMA node objects are always kept.
    AlwaysKept(ObjType),
    /// Group objects are only ever kept for structure.
    GroupOnlyForStructure,
    /// I/O and Misc objects have no structure to keep.
    NoStructure(ObjType),
}

impl core::fmt::Display for FilterError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            FilterError::AlwaysKept(t) => write!(f, "{t} objects cannot be filtered out"),
            FilterError::GroupOnlyForStructure => {
                f.write_str("Group objects can only be kept for structure")
            }
            FilterError::NoStructure(t) => write!(f, "{t} objects have no structure to keep"),
        }
    }
}

impl core::error::Error for FilterError {}

/// Whether a PCI class is worth showing when only important I/O is kept.
pub fn pci_class_is_important(class_id: u16) -> bool {
    let base = class_id >> 8;
    matches!(base, 0x00 | 0x01 | 0x02 | 0x03 | 0x06 | 0x0b | 0x12)
        || matches!(class_id, 0x0c04 | 0x0c06 | 0x0502)
}

/// Whether an OS device is worth showing when only important I/O is kept.
pub fn osdev_is_important(types: OsDevTypes) -> bool {
    types.0 != OsDevTypes::DMA
}

impl Topology {
    /// Sets the filter of a type (`hwloc_topology_set_type_filter`), with
    /// hwloc's restrictions: Machine, PU and NUMA nodes are always kept,
    /// Groups are never kept unconditionally, and I/O and Misc have no
    /// structure to keep.  "Important" means "all" for normal and memory
    /// types.
    #[doc(alias = "hwloc_topology_set_type_filter")]
    pub fn set_type_filter(&mut self, t: ObjType, f: TypeFilter) -> Result<(), FilterError> {
        let f = match (t, f) {
            (ObjType::Machine | ObjType::PU | ObjType::NUMANode, f) if f != TypeFilter::KeepAll => {
                return Err(FilterError::AlwaysKept(t));
            }
            (ObjType::Group, TypeFilter::KeepAll) => {
                return Err(FilterError::GroupOnlyForStructure);
            }
            (t, TypeFilter::KeepStructure) if matches!(t.kind(), ObjKind::Io | ObjKind::Misc) => {
                return Err(FilterError::NoStructure(t));
            }
            (t, TypeFilter::KeepImportant) if !matches!(t.kind(), ObjKind::Io | ObjKind::Misc) => {
                TypeFilter::KeepAll
            }
            (_, f) => f,
        };
        self.filters[t.index()] = f;
        Ok(())
    }

    /// Sets the filter of every type, skipping types that refuse it (as
    /// hwloc's `hwloc_topology_set_all_types_filter` does).
    #[doc(alias = "hwloc_topology_set_all_types_filter")]
    pub fn set_all_types_filter(&mut self, f: TypeFilter) {
        for t in ObjType::ALL {
            let _ = self.set_type_filter(t, f);
        }
    }

    /// Sets the filter of all CPU caches (data, unified and instruction;
    /// `hwloc_topology_set_cache_types_filter`).
    #[doc(alias = "hwloc_topology_set_cache_types_filter")]
    pub fn set_cache_types_filter(&mut self, f: TypeFilter) {
        for t in ObjType::ALL.iter().filter(|t| t.is_cache()) {
            let _ = self.set_type_filter(*t, f);
        }
    }

    /// Sets the filter of instruction caches
    /// (`hwloc_topology_set_icache_types_filter`).
    #[doc(alias = "hwloc_topology_set_icache_types_filter")]
    pub fn set_icache_types_filter(&mut self, f: TypeFilter) {
        for t in ObjType::ALL.iter().filter(|t| t.is_icache()) {
            let _ = self.set_type_filter(*t, f);
        }
    }

    /// Sets the filter of bridges, PCI devices and OS devices
    /// (`hwloc_topology_set_io_types_filter`).
    #[doc(alias = "hwloc_topology_set_io_types_filter")]
    pub fn set_io_types_filter(&mut self, f: TypeFilter) {
        for t in [ObjType::Bridge, ObjType::PCIDevice, ObjType::OSDevice] {
            let _ = self.set_type_filter(t, f);
        }
    }

    /// The filter of a type (`hwloc_topology_get_type_filter`).
    #[doc(alias = "hwloc_topology_get_type_filter")]
    pub fn type_filter(&self, t: ObjType) -> TypeFilter {
        self.filters[t.index()]
    }

    /// Whether objects of this type may be kept at all.
    pub fn keeps_type(&self, t: ObjType) -> bool {
        self.filters[t.index()] != TypeFilter::KeepNone
    }

    /// Whether this particular object passes its type filter on its own
    /// (structure filters are applied later, level by level).
    pub fn keeps_object(&self, o: &Object) -> bool {
        match self.filters[o.obj_type.index()] {
            TypeFilter::KeepNone => false,
            TypeFilter::KeepImportant => match o.obj_type {
                ObjType::PCIDevice => o.pci().is_some_and(|p| pci_class_is_important(p.class_id)),
                ObjType::OSDevice => o.osdev_types().is_some_and(osdev_is_important),
                _ => true,
            },
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitmap::{CpuSet, NodeSet};
    use crate::object::CacheAttr;
    use crate::topology::test_machines::cs;

    #[test]
    fn filter_names_round_trip() {
        for f in [
            TypeFilter::KeepAll,
            TypeFilter::KeepNone,
            TypeFilter::KeepStructure,
            TypeFilter::KeepImportant,
        ] {
            assert_eq!(TypeFilter::from_name(f.name()), Some(f));
        }
        assert_eq!(TypeFilter::KeepImportant.name(), "important");
        assert_eq!(TypeFilter::from_name("All"), None);
        assert_eq!(TypeFilter::from_name(""), None);
    }

    #[test]
    fn default_numa_node_and_filters() {
        let mut t = Topology::new();
        for pu in 0..2 {
            t.insert_by_cpuset(Object::with_cpuset(
                ObjType::PU,
                Some(pu),
                CpuSet::from_index(pu),
            ))
            .unwrap();
        }
        let mut l1i = Object::with_cpuset(ObjType::L1ICache, None, cs(0, 0));
        l1i.attr = ObjAttr::Cache(CacheAttr {
            size: 32768,
            depth: 1,
            ..Default::default()
        });
        // Instruction caches are dropped by default.
        assert_eq!(t.insert_by_cpuset(l1i).unwrap(), None);
        t.finish().unwrap();
        t.check().unwrap();
        assert_eq!(t.level(Depth::NumaNode).len(), 1);
        assert_eq!(t.nodeset(), &NodeSet::from_index(0));
    }
}
