//! What the hostile annotation components share: the bindings of the
//! `annotation-backend` world (a crate of its own: the discovery kit's
//! bindings would make every component that links both claim both
//! worlds' exports), [`annotator!`] to export an attack, and helpers over
//! the topology the host shows.  Never shipped.

/// The generated bindings of the `annotation-backend` world.
pub mod bindings {
    wit_bindgen::generate!({
        world: "annotation-backend",
        path: "../../../wit/backend@0.1.0",
        pub_export_macro: true,
        default_bindings_module: "wloc_hostile_annotation_kit::bindings",
    });
}

pub use bindings::wloc::backend::types::*;
pub use bindings::wloc::backend::{config, files, log, topology};
pub use bindings::{Guest, export};

/// Exports a function `fn() -> Result<Annotations, String>` (the attack)
/// as the component's `annotate`.
#[macro_export]
macro_rules! annotator {
    ($annotate:path) => {
        struct Hostile;

        impl $crate::Guest for Hostile {
            fn annotate() -> ::core::result::Result<$crate::Annotations, ::std::string::String> {
                $annotate()
            }
        }

        $crate::export!(Hostile with_types_in $crate::bindings);
    };
}

/// A record that adds nothing.
pub fn empty() -> Annotations {
    Annotations {
        infos: Vec::new(),
        misc: Vec::new(),
        distances: Vec::new(),
        memattrs: Vec::new(),
        properties: Vec::new(),
    }
}

/// An info.
pub fn info(name: impl Into<String>, value: impl Into<String>) -> Info {
    Info {
        name: name.into(),
        value: value.into(),
    }
}

/// The objects of the current topology, as the `topology` import gives
/// them (ids are gp indexes), or an error when it gives none.
pub fn objects() -> Result<Vec<Object>, String> {
    let objs = topology::objects();
    if objs.is_empty() {
        return Err("the topology has no objects".into());
    }
    Ok(objs)
}

/// The gp index of the root (the object without a parent).
pub fn root(objs: &[Object]) -> Result<u64, String> {
    objs.iter()
        .find(|o| o.parent.is_none())
        .map(|o| u64::from(o.id))
        .ok_or_else(|| "the topology has no root".into())
}

/// The gp index of the deepest object (parents come before children).
pub fn deepest(objs: &[Object]) -> Result<u32, String> {
    let mut depth = std::collections::HashMap::new();
    let mut best = (0usize, None);
    for o in objs {
        let d = o
            .parent
            .and_then(|p| depth.get(&p).copied())
            .map_or(1, |d: usize| d + 1);
        depth.insert(o.id, d);
        if d > best.0 {
            best = (d, Some(o.id));
        }
    }
    best.1.ok_or_else(|| "the topology has no objects".into())
}

/// A gp index no object has: one past the largest (plus `k`).
pub fn unused_gp(objs: &[Object], k: u32) -> u32 {
    objs.iter()
        .map(|o| o.id)
        .max()
        .unwrap_or(0)
        .saturating_add(1)
        .saturating_add(k)
}

/// The number of PUs of the topology.
pub fn pu_count(objs: &[Object]) -> usize {
    objs.iter().filter(|o| o.type_ == ObjectType::Pu).count()
}
