//! `wloc-guest`: what a wloc discovery component needs.
//!
//! It holds the bindings of the `discovery-backend` world of
//! `wloc:backend@0.1.0` (the types, the host imports `files`, `cpuid`,
//! `log` and `config`, and the [`export!`] macro) and
//! [`discovery_from_topology`], which turns a topology built with
//! `wloc-core` into the record the host expects.
//!
//! A component crate (crate-type `cdylib`, built for `wasm32-wasip2`)
//! implements [`Guest`] and exports it:
//!
//! ```ignore
//! struct MyBackend;
//! impl wloc_guest::Guest for MyBackend {
//!     fn discover() -> Result<wloc_guest::Discovery, String> { /* ... */ }
//! }
//! wloc_guest::export!(MyBackend with_types_in wloc_guest::bindings);
//! ```

/// The generated bindings of the `discovery-backend` world.
pub mod bindings {
    wit_bindgen::generate!({
        world: "discovery-backend",
        path: "../../wit/backend@0.1.0",
        pub_export_macro: true,
        default_bindings_module: "wloc_guest::bindings",
    });
}

pub use bindings::wloc::backend::types::*;
pub use bindings::wloc::backend::{config, cpuid, files, log};
pub use bindings::{Guest, export};

/// The host's CPUID answers (the `cpuid` import) as a `wloc-probe` source.
pub struct HostCpuid {
    pus: usize,
}

impl HostCpuid {
    /// A source over the PUs the host lets the component query (none when
    /// CPUID is not granted, or the topology is not this machine's).
    pub fn new() -> Self {
        HostCpuid {
            pus: cpuid::pu_count() as usize,
        }
    }
}

impl Default for HostCpuid {
    fn default() -> Self {
        Self::new()
    }
}

impl wloc_probe::CpuidSource for HostCpuid {
    fn pu_count(&self) -> usize {
        self.pus
    }

    fn os_index(&self, pu: usize) -> u32 {
        cpuid::os_index(pu as u32)
    }

    fn cpuid(&self, pu: usize, leaf: u32, subleaf: u32) -> [u32; 4] {
        let (a, b, c, d) = cpuid::query(pu as u32, leaf, subleaf);
        [a, b, c, d]
    }
}

use wloc_core::bitmap::{Bitmap as CoreBitmap, Set, SetKind};
use wloc_core::{ObjId, ObjKind, ObjType, Topology};

/// Converts a set into the WIT form.
pub fn bitmap_of(b: &CoreBitmap) -> Bitmap {
    Bitmap {
        words: b.words().to_vec(),
        infinite: b.is_infinite(),
    }
}

fn set_of<K: SetKind>(s: &Set<K>) -> Bitmap {
    bitmap_of(s.bitmap())
}

wloc_core::wit_conversions!(pub);

/// The WIT name of a type.
pub fn object_type_of(t: ObjType) -> ObjectType {
    wit_type(t)
}

fn infos_of(infos: &[wloc_core::object::Info]) -> Vec<Info> {
    infos
        .iter()
        .map(|i| Info {
            name: i.name.clone(),
            value: i.value.clone(),
        })
        .collect()
}

/// Turns a finished topology into a discovery record: every object with
/// its parent (parents first, in depth-first order), with its gp index as
/// id, so that the host rebuilds the same tree without searching.  Sets
/// the host recomputes when it finishes the topology are left out.
pub fn discovery_from_topology(t: &Topology) -> Result<Discovery, String> {
    let id_of = |o: ObjId| -> Result<u32, String> {
        u32::try_from(t.obj(o).gp_index)
            .map_err(|_| format!("gp index {} does not fit an id", t.obj(o).gp_index))
    };
    let mut objects = Vec::new();
    let mut stack: Vec<(ObjId, Option<u32>)> = vec![(t.root(), None)];
    while let Some((id, parent)) = stack.pop() {
        let o = t.obj(id);
        let me = id_of(id)?;
        // Only the sets the host cannot recompute travel: a complete set
        // equal to the plain one is left out, normal objects' nodesets
        // come from their NUMA nodes, and memory objects under a parent
        // take their parent's cpuset, and its complete cpuset unless
        // theirs is narrower (a node whose memory Group left its offline
        // CPUs out, as hwloc's does).
        let kind = o.obj_type.kind();
        let (cpuset, complete_cpuset) = if kind == ObjKind::Memory && parent.is_some() {
            let parent_complete = o.parent().and_then(|p| t.obj(p).complete_cpuset.as_ref());
            (
                None,
                o.complete_cpuset
                    .as_ref()
                    .filter(|c| Some(*c) != parent_complete)
                    .map(set_of),
            )
        } else {
            (
                o.cpuset.as_ref().map(set_of),
                o.complete_cpuset
                    .as_ref()
                    .filter(|c| Some(*c) != o.cpuset.as_ref())
                    .map(set_of),
            )
        };
        let (nodeset, complete_nodeset) = if kind == ObjKind::Normal && parent.is_some() {
            (None, None)
        } else {
            (
                o.nodeset.as_ref().map(set_of),
                o.complete_nodeset
                    .as_ref()
                    .filter(|c| Some(*c) != o.nodeset.as_ref())
                    .map(set_of),
            )
        };
        objects.push(Object {
            id: me,
            parent,
            type_: object_type_of(o.obj_type),
            os_index: o.os_index,
            name: o.name.clone(),
            subtype: o.subtype.clone(),
            cpuset,
            complete_cpuset,
            nodeset,
            complete_nodeset,
            attr: wit_attr(&o.attr),
            infos: infos_of(&o.infos),
        });
        // Pushed in reverse so that children come out in order.
        for list in [
            o.misc_children(),
            o.io_children(),
            o.memory_children(),
            o.children(),
        ] {
            for &c in list.iter().rev() {
                stack.push((c, Some(me)));
            }
        }
    }
    let mut distances = Vec::with_capacity(t.distances.len());
    for d in &t.distances {
        distances.push(Distances {
            name: d.name.clone(),
            kind: d.kind,
            objects: d.objs.iter().map(|&o| id_of(o)).collect::<Result<_, _>>()?,
            values: d.values.clone(),
        });
    }
    let mut memattrs = Vec::with_capacity(t.memattrs.len());
    for m in &t.memattrs {
        let mut values = Vec::with_capacity(m.values.len());
        for v in &m.values {
            values.push(MemattrValue {
                target: id_of(v.target)?,
                initiator: match &v.initiator {
                    None => None,
                    Some(wloc_core::memattrs::Initiator::CpuSet(c)) => {
                        Some(Initiator::Cpuset(set_of(c)))
                    }
                    Some(wloc_core::memattrs::Initiator::Object(o)) => {
                        Some(Initiator::Object(id_of(*o)?))
                    }
                },
                value: v.value,
            });
        }
        memattrs.push(Memattr {
            name: m.name.clone(),
            flags: m.flags,
            values,
        });
    }
    Ok(Discovery {
        objects,
        distances,
        memattrs,
        cpukinds: t
            .cpukinds
            .iter()
            .map(|k| Cpukind {
                cpuset: set_of(&k.cpuset),
                forced_efficiency: k.forced_efficiency,
                infos: infos_of(&k.infos),
            })
            .collect(),
        infos: infos_of(&t.infos),
        allowed_cpuset: Some(set_of(&t.allowed_cpuset)),
        allowed_nodeset: Some(set_of(&t.allowed_nodeset)),
        support: t.support.clone(),
        memtiers: t
            .memtiers
            .iter()
            .map(|m| Memtier {
                kinds: m.kinds,
                nodeset: set_of(&m.nodeset),
            })
            .collect(),
        pci_localities: t
            .pci_localities
            .iter()
            .map(|l| PciLocality {
                domain: l.domain,
                bus_min: l.bus_min,
                bus_max: l.bus_max,
                cpuset: set_of(&l.cpuset),
            })
            .collect(),
    })
}

/// Faster `memcmp` and `bcmp` than wasi-libc's, which compare byte by
/// byte: sets are compared as slices of 64-bit words, and this halves the
/// instructions a topology build executes.  Linked into every component
/// that uses this crate (a definition in the component wins over the
/// C library's).
#[cfg(target_arch = "wasm32")]
mod mem {
    /// # Safety
    /// As C's `memcmp`: both pointers readable for `n` bytes.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY: i + 8 <= n, and both are readable for n bytes.
            let (x, y) = unsafe {
                (
                    (a.add(i) as *const u64).read_unaligned(),
                    (b.add(i) as *const u64).read_unaligned(),
                )
            };
            if x != y {
                break;
            }
            i += 8;
        }
        while i < n {
            // SAFETY: i < n.
            let (x, y) = unsafe { (*a.add(i), *b.add(i)) };
            if x != y {
                return i32::from(x) - i32::from(y);
            }
            i += 1;
        }
        0
    }

    /// # Safety
    /// As C's `bcmp`.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
        // SAFETY: same contract.
        unsafe { memcmp(a, b, n) }
    }
}
