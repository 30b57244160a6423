//! Type filters with an is-a hierarchy: `cache`, `compute`, `io`,
//! `memory`, and every plain type name hwloc reads.

use std::fmt;

use wloc_core::ObjType;

use crate::{FabricKind, VertexType};

/// A set of object types and fabric node kinds, read from a
/// comma-separated list of classes and type names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TypeSet {
    types: Vec<ObjType>,
    fabric: Vec<FabricKind>,
}

/// A name that is neither a class nor a type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeSetError(pub String);

impl fmt::Display for TypeSetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown object type or class '{}' (expected cache, compute, io, memory, fabric or a type name such as core, l3, numa, pci, os, switch, adapter)",
            self.0
        )
    }
}

impl std::error::Error for TypeSetError {}

/// The fabric node kinds a name stands for.
fn fabric_class(name: &str) -> Option<Vec<FabricKind>> {
    Some(match name.to_ascii_lowercase().as_str() {
        "fabric" => vec![FabricKind::Switch, FabricKind::Adapter, FabricKind::Router],
        "switch" | "switches" => vec![FabricKind::Switch],
        "adapter" | "adapters" | "ca" | "hca" => vec![FabricKind::Adapter],
        "router" | "routers" => vec![FabricKind::Router],
        _ => return None,
    })
}

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
    /// Every type and fabric node kind.
    pub fn all() -> Self {
        TypeSet {
            types: ObjType::ALL.to_vec(),
            fabric: vec![FabricKind::Switch, FabricKind::Adapter, FabricKind::Router],
        }
    }

    /// Reads `cache,compute`, `pu`, `l3,os`, ...
    pub fn parse(s: &str) -> Result<Self, TypeSetError> {
        let mut types = Vec::new();
        let mut fabric = Vec::new();
        for word in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            if let Some(v) = class(word) {
                types.extend(v);
            } else if let Some(v) = fabric_class(word) {
                fabric.extend(v);
            } else {
                types.push(ObjType::parse(word).ok_or_else(|| TypeSetError(word.into()))?);
            }
        }
        if types.is_empty() && fabric.is_empty() {
            return Err(TypeSetError(s.into()));
        }
        types.sort();
        types.dedup();
        fabric.sort();
        fabric.dedup();
        Ok(TypeSet { types, fabric })
    }

    /// Whether objects of type `t` belong.
    pub fn contains(&self, t: ObjType) -> bool {
        self.types.contains(&t)
    }

    /// Whether vertices of type `t` (objects or fabric nodes) belong.
    pub fn contains_vertex(&self, t: VertexType) -> bool {
        match t {
            VertexType::Object(t) => self.contains(t),
            VertexType::Fabric(k) => self.fabric.contains(&k),
        }
    }

    /// The object types, in enumeration order.
    pub fn types(&self) -> &[ObjType] {
        &self.types
    }

    /// The fabric node kinds.
    pub fn fabric_kinds(&self) -> &[FabricKind] {
        &self.fabric
    }
}
