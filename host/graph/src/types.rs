//! Type filters with an is-a hierarchy: `cache`, `compute`, `io`,
//! `memory`, and every plain type name hwloc reads.

use std::fmt;

use wloc_core::ObjType;

/// A set of object types, read from a comma-separated list of classes
/// and type names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TypeSet {
    types: Vec<ObjType>,
}

/// A name that is neither a class nor a type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeSetError(pub String);

impl fmt::Display for TypeSetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown object type or class '{}' (expected cache, compute, io, memory or a type name such as core, l3, numa, pci, os)",
            self.0
        )
    }
}

impl std::error::Error for TypeSetError {}

/// The types a class name stands for.
fn class(name: &str) -> Option<Vec<ObjType>> {
    Some(match name.to_ascii_lowercase().as_str() {
        "cache" | "caches" => {
            let mut v = ObjType::CPU_CACHES.to_vec();
            v.push(ObjType::MemCache);
            v
        }
        "compute" => vec![ObjType::Core, ObjType::PU],
        "io" => vec![ObjType::Bridge, ObjType::PCIDevice, ObjType::OSDevice],
        "memory" => vec![ObjType::NUMANode, ObjType::MemCache],
        _ => return None,
    })
}

impl TypeSet {
    /// Every type.
    pub fn all() -> Self {
        TypeSet {
            types: ObjType::ALL.to_vec(),
        }
    }

    /// Reads `cache,compute`, `pu`, `l3,os`, ...
    pub fn parse(s: &str) -> Result<Self, TypeSetError> {
        let mut types = Vec::new();
        for word in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match class(word) {
                Some(v) => types.extend(v),
                None => types.push(ObjType::parse(word).ok_or_else(|| TypeSetError(word.into()))?),
            }
        }
        if types.is_empty() {
            return Err(TypeSetError(s.into()));
        }
        types.sort();
        types.dedup();
        Ok(TypeSet { types })
    }

    /// Whether objects of type `t` belong.
    pub fn contains(&self, t: ObjType) -> bool {
        self.types.contains(&t)
    }

    /// The types, in enumeration order.
    pub fn types(&self) -> &[ObjType] {
        &self.types
    }
}
