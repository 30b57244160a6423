//! Objects with the same locality as another, as
//! `hwloc_get_obj_with_same_locality` finds them.

use super::Topology;
use crate::object::{ObjId, ObjKind, ObjType, Object};

/// Why no object with the same locality was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SameLocalityError {
    /// The types cannot have the same locality (a normal or memory object
    /// and an I/O type, a Misc object, an I/O object other than a PCI or
    /// OS device).
    Invalid,
    /// No such object.
    NotFound,
}

impl core::fmt::Display for SameLocalityError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            SameLocalityError::Invalid => "these object types cannot have the same locality",
            SameLocalityError::NotFound => "no object of that type has the same locality",
        })
    }
}

/// Whether an object's subtype and name match (ignoring ASCII case).
fn matches_names(o: &Object, subtype: Option<&str>, prefix: Option<&str>) -> bool {
    let sub_ok = subtype.is_none_or(|s| {
        o.subtype
            .as_deref()
            .is_some_and(|os| os.eq_ignore_ascii_case(s))
    });
    let name_ok = prefix.is_none_or(|p| {
        o.name.as_deref().is_some_and(|n| {
            n.len() >= p.len() && n.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
        })
    });
    sub_ok && name_ok
}

impl Topology {
    /// The object of type `ty` (with this subtype and name prefix, if
    /// given) with the same locality as `src`: for a normal or memory
    /// object, the first of that type with the same cpuset and nodeset;
    /// for a PCI or OS device, the PCI device it is (or is below) or one of
    /// that PCI device's OS devices.
    #[doc(alias = "hwloc_get_obj_with_same_locality")]
    pub fn obj_with_same_locality(
        &self,
        src: ObjId,
        ty: ObjType,
        subtype: Option<&str>,
        nameprefix: Option<&str>,
    ) -> Result<ObjId, SameLocalityError> {
        let so = self.obj(src);
        let found = match so.kind() {
            ObjKind::Normal | ObjKind::Memory => {
                if !matches!(ty.kind(), ObjKind::Normal | ObjKind::Memory) {
                    return Err(SameLocalityError::Invalid);
                }
                self.objs_by_type(ty).into_iter().find(|&id| {
                    let o = self.obj(id);
                    o.cpuset == so.cpuset
                        && o.nodeset == so.nodeset
                        && matches_names(o, subtype, nameprefix)
                })
            }
            ObjKind::Io => {
                if !matches!(so.obj_type, ObjType::PCIDevice | ObjType::OSDevice)
                    || !matches!(ty, ObjType::PCIDevice | ObjType::OSDevice)
                {
                    return Err(SameLocalityError::Invalid);
                }
                let pcidev = match so.obj_type {
                    ObjType::PCIDevice => Some(src),
                    _ => so
                        .parent()
                        .filter(|&p| self.obj(p).obj_type == ObjType::PCIDevice),
                };
                pcidev.and_then(|p| {
                    if ty == ObjType::PCIDevice {
                        Some(p).filter(|&p| matches_names(self.obj(p), subtype, nameprefix))
                    } else {
                        self.obj(p).io_children().iter().copied().find(|&c| {
                            self.obj(c).obj_type == ObjType::OSDevice
                                && matches_names(self.obj(c), subtype, nameprefix)
                        })
                    }
                })
            }
            ObjKind::Misc => return Err(SameLocalityError::Invalid),
        };
        found.ok_or(SameLocalityError::NotFound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::test_machines::small_machine;

    #[test]
    fn same_sets_find_the_other_type() {
        let t = small_machine();
        let pack1 = t.obj_by_type(ObjType::Package, 1).unwrap();
        let numa1 = t.obj_by_type(ObjType::NUMANode, 1).unwrap();
        assert_eq!(
            t.obj_with_same_locality(pack1, ObjType::NUMANode, None, None),
            Ok(numa1)
        );
        assert_eq!(
            t.obj_with_same_locality(numa1, ObjType::Package, None, None),
            Ok(pack1)
        );
        assert_eq!(
            t.obj_with_same_locality(pack1, ObjType::Core, None, None),
            Err(SameLocalityError::NotFound)
        );
        assert_eq!(
            t.obj_with_same_locality(pack1, ObjType::OSDevice, None, None),
            Err(SameLocalityError::Invalid)
        );
    }
}
