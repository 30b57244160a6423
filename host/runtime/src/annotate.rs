//! Annotation backends: components of the `annotation-backend` world that
//! read the finished topology (the `topology` import) and return infos,
//! Misc objects, distances, memory attributes and dynamic properties
//! (temperatures, frequencies, power, ...).
//!
//! They run like discovery backends: one fresh store and instance per
//! run, the same limits, the same host imports (`files`, `log`,
//! `config`), loaded, linked and run through the same path
//! ([`crate::runtime`], [`crate::imports`]) so that one place decides
//! what a component may import.  What they return is
//! checked as a whole before anything touches the topology: a failing or
//! misbehaving annotation component leaves the topology as it was.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use wloc_core::bitmap::Bitmap as CoreBitmap;
use wloc_core::distances::Distances as CoreDistances;
use wloc_core::memattrs::{Initiator as CoreInitiator, MemAttr};
use wloc_core::object::Info as CoreInfo;
use wloc_core::{CpuSet, ObjId, ObjKind, ObjType, Object, Topology};
use wloc_trust::grant::Admission;
use wloc_trust::{ComponentError, ErrorKind, Limits};

use crate::bindings::types::{
    BridgeAttr, CacheAttr, CacheKind, GroupAttr, Initiator, NumaAttr, Object as WitObject,
    ObjectAttr, ObjectType, PageType, PciAttr,
};
use crate::builtin::Builtin;
use crate::cache;
use crate::convert::{InitKey, init_key};
use crate::error::{RecordError, TopologyViewError, invalid};
use crate::options::RunOptions;
use crate::runtime::{Loaded, Runtime};
use crate::world::AnnotationWorld;

/// Host bindings of the `annotation-backend` world (in
/// [`crate::bindings`] with the discovery world's).
pub use crate::bindings::annotation as bindings;
pub use crate::bindings::types::{Annotations, DynamicProperty};

/// An annotation component ready to run.
pub type LoadedAnnotator = Loaded<AnnotationWorld>;

/// What an annotation run returned, before it is checked.
pub struct AnnotationOutput {
    /// The record.
    pub annotations: Annotations,
    /// Captured log lines ([`crate::LogTarget::Capture`]).
    pub logs: Vec<String>,
    /// Fuel used.
    pub fuel_used: u64,
    /// Time from the new store to the returned record.
    pub elapsed: Duration,
}

/// A measured value attached to an object of the topology.
#[derive(Clone, Debug, PartialEq)]
pub struct Property {
    /// The object it describes.
    pub object: ObjId,
    /// Its name, such as `temperature` or `power.acpi.power1`.
    pub name: String,
    /// The value, in `unit`.
    pub value: f64,
    /// The unit symbol (`°C`, `Hz`, `W`, `V`, `A`, `RPM`, ...).
    pub unit: String,
}

/// Longest unit symbol accepted.
const MAX_UNIT_BYTES: usize = 16;

impl Runtime {
    /// Compiles (or loads from the cache) an annotation component and
    /// checks that the host gives everything it imports and that it
    /// exports `annotate`.
    ///
    /// It skips the admin's policy: only for tests, with the
    /// `test-support` feature.  Programs load through
    /// [`Runtime::load_annotator_admitted`] or
    /// [`Runtime::load_builtin_annotator`].
    #[cfg(any(test, feature = "test-support"))]
    pub fn load_annotator(
        &self,
        name: &str,
        wasm: &[u8],
    ) -> Result<LoadedAnnotator, ComponentError> {
        self.load_trusted(name, wasm)
    }

    /// Loads an annotation component the policy admitted
    /// ([`crate::enforce::admit`]): only its granted interfaces are
    /// linked, and every run is narrowed to its grant.  `wasm` must be
    /// the admitted bytes.
    pub fn load_annotator_admitted(
        &self,
        adm: &Admission,
        wasm: &[u8],
    ) -> Result<LoadedAnnotator, ComponentError> {
        self.load_granted(adm, wasm, &cache::component_digest(wasm), &[])
    }

    /// Loads a built-in annotation component the policy admitted, from
    /// the code precompiled when wloc was built when wasmtime accepts it.
    pub fn load_builtin_annotator(
        &self,
        adm: &Admission,
        b: &Builtin,
    ) -> Result<LoadedAnnotator, ComponentError> {
        self.load_granted(adm, b.wasm, b.digest, b.precompiled)
    }

    /// Runs a component's `annotate` in a fresh store, showing it `topo`,
    /// and returns its record, unchecked.
    pub fn run_annotator(
        &self,
        c: &LoadedAnnotator,
        opts: &RunOptions,
        topo: &Topology,
    ) -> Result<AnnotationOutput, ComponentError> {
        let objects = topology_objects(topo).map_err(|m| {
            ComponentError::new(c.name(), c.digest(), ErrorKind::Failed(m.to_string()))
        })?;
        self.run_annotator_on(c, opts, Arc::new(objects))
    }

    /// As [`Runtime::run_annotator`], with the topology already converted
    /// by [`topology_objects`] (repeated runs share it).
    pub fn run_annotator_on(
        &self,
        c: &LoadedAnnotator,
        opts: &RunOptions,
        objects: Arc<Vec<WitObject>>,
    ) -> Result<AnnotationOutput, ComponentError> {
        let ran = self.run_world(c, opts, Some(objects))?;
        Ok(AnnotationOutput {
            annotations: ran.record,
            logs: ran.logs,
            fuel_used: ran.fuel_used,
            elapsed: ran.elapsed,
        })
    }

    /// Runs an annotation component and adds what it returned to `topo`.
    /// Returns its dynamic properties.  On any error `topo` is unchanged.
    pub fn annotate(
        &self,
        c: &LoadedAnnotator,
        opts: &RunOptions,
        topo: &mut Topology,
    ) -> Result<Vec<Property>, ComponentError> {
        let out = self.run_annotator(c, opts, topo)?;
        apply(&out.annotations, topo, &opts.limits).map_err(|m| {
            ComponentError::new(c.name(), c.digest(), ErrorKind::InvalidData(m.to_string()))
        })
    }
}

fn bitmap_of(b: &CoreBitmap) -> crate::bindings::types::Bitmap {
    crate::bindings::types::Bitmap {
        words: b.words().to_vec(),
        infinite: b.is_infinite(),
    }
}

wloc_core::wit_conversions!(pub);

/// The topology as the `topology` import shows it: every object, parents
/// first, with its gp index as `id` and its parent's as `parent`, all its
/// sets, attributes and infos.
pub fn topology_objects(topo: &Topology) -> Result<Vec<WitObject>, TopologyViewError> {
    let gp = |id: ObjId| -> Result<u32, TopologyViewError> {
        let g = topo.obj(id).gp_index;
        u32::try_from(g).map_err(|_| TopologyViewError::GpIndex(g))
    };
    let order = topo.iter_dfs();
    let mut out = Vec::with_capacity(order.len());
    for id in order {
        let o = topo.obj(id);
        out.push(WitObject {
            id: gp(id)?,
            parent: o.parent().map(gp).transpose()?,
            type_: wit_type(o.obj_type),
            os_index: o.os_index,
            name: o.name.clone(),
            subtype: o.subtype.clone(),
            cpuset: o.cpuset.as_ref().map(|s| bitmap_of(s.bitmap())),
            complete_cpuset: o.complete_cpuset.as_ref().map(|s| bitmap_of(s.bitmap())),
            nodeset: o.nodeset.as_ref().map(|s| bitmap_of(s.bitmap())),
            complete_nodeset: o.complete_nodeset.as_ref().map(|s| bitmap_of(s.bitmap())),
            attr: wit_attr(&o.attr),
            infos: o
                .infos
                .iter()
                .map(|i| crate::bindings::types::Info {
                    name: i.name.clone(),
                    value: i.value.clone(),
                })
                .collect(),
        });
    }
    Ok(out)
}

/// Checks a string a component returned: its length, and no control
/// characters (they would reach terminals and XML files).
/// `what` describes the string, called only on error: a record holds up
/// to 262,144 strings, whose descriptions would cost more than the checks.
fn check_text(
    what: impl FnOnce() -> String,
    s: &str,
    max: usize,
    may_be_empty: bool,
) -> Result<(), RecordError> {
    if !may_be_empty && s.is_empty() {
        return Err(RecordError::EmptyText { what: what() });
    }
    if s.len() > max {
        return Err(RecordError::LongText {
            what: what(),
            len: s.len(),
            max,
        });
    }
    // Printable ASCII, the common case, needs no decoding.
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Ok(());
    }
    if let Some(c) = s.chars().find(|c| c.is_control()) {
        return Err(RecordError::ControlCharacter {
            what: what(),
            found: c,
        });
    }
    Ok(())
}

/// Checks a record and adds it to `topo`: infos (an info the object has
/// already, same name and value, is not repeated), Misc objects (then the
/// topology is finished again), distances and memory attributes.  Returns
/// the dynamic properties.  Nothing is changed when the record breaks a
/// rule.
pub fn apply(
    a: &Annotations,
    topo: &mut Topology,
    limits: &Limits,
) -> Result<Vec<Property>, RecordError> {
    check_counts(a, limits)?;
    let resolve = Resolver::new(topo);
    // Everything is checked against a copy, which replaces the topology
    // only when all of it went well.
    let mut t = topo.clone();
    let mut clock = crate::convert::Clock::new(limits.deadline);
    add_infos(a, topo, &mut t, &resolve, limits, &mut clock)?;
    add_misc(a, &mut t, &resolve, limits, &mut clock)?;
    add_distances(a, &mut t, &resolve, limits)?;
    add_memattrs(a, &mut t, &resolve, limits, &mut clock)?;
    let props = properties(a, &resolve, limits)?;
    if !a.misc.is_empty() || !a.distances.is_empty() {
        // New objects need levels and indexes; the core is not expected to
        // panic on checked data, but a component must never take the host
        // down.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            t.finish().map_err(|e| e.to_string())?;
            t.check().map_err(|e| e.to_string())
        }));
        match r {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(invalid!("the annotated topology is invalid: {e}")),
            Err(_) => return Err(invalid!("the annotated topology could not be built")),
        }
    }
    *topo = t;
    Ok(props)
}

/// The counts of a record, before anything else.
fn check_counts(a: &Annotations, limits: &Limits) -> Result<(), RecordError> {
    let total = a.infos.len() + a.misc.len() + a.properties.len();
    if total > limits.max_objects {
        return Err(RecordError::TooMany {
            what: "infos, Misc objects and properties".into(),
            count: total,
            max: limits.max_objects,
        });
    }
    if a.infos.len() > limits.max_total_infos {
        return Err(RecordError::TooMany {
            what: "infos".into(),
            count: a.infos.len(),
            max: limits.max_total_infos,
        });
    }
    if a.misc.len() > limits.max_annotation_misc {
        return Err(RecordError::TooMany {
            what: "Misc objects".into(),
            count: a.misc.len(),
            max: limits.max_annotation_misc,
        });
    }
    if a.distances.len() > 4096 || a.memattrs.len() > 4096 {
        return Err(invalid!(
            "{} distance matrices and {} memory attributes returned (at most 4096 each)",
            a.distances.len(),
            a.memattrs.len()
        ));
    }
    Ok(())
}

/// The objects of the topology as a record names them, by gp index.
struct Resolver {
    by_gp: HashMap<u64, ObjId>,
}

impl Resolver {
    fn new(topo: &Topology) -> Resolver {
        Resolver {
            by_gp: topo.ids().map(|i| (topo.obj(i).gp_index, i)).collect(),
        }
    }

    /// The object with gp index `gp`; `what` names the reference.
    fn get(&self, what: &dyn Fn() -> String, gp: u64) -> Result<ObjId, RecordError> {
        self.by_gp
            .get(&gp)
            .copied()
            .ok_or_else(|| RecordError::NoObject { what: what(), gp })
    }
}

/// Adds the record's infos to `t` (a copy of `topo`), skipping those the
/// object has already.
fn add_infos(
    a: &Annotations,
    topo: &Topology,
    t: &mut Topology,
    resolve: &Resolver,
    limits: &Limits,
    clock: &mut crate::convert::Clock,
) -> Result<(), RecordError> {
    let max_s = limits.max_string_bytes;
    // The (name, value) pairs of each object touched, to skip repeats
    // without a scan per info.
    let mut has: HashMap<ObjId, HashSet<(&str, &str)>> = HashMap::new();
    for (k, (gp, info)) in a.infos.iter().enumerate() {
        clock.tick()?;
        let what = || format!("info {k}");
        let o = resolve.get(&what, *gp)?;
        check_text(|| format!("{}: name", what()), &info.name, max_s, false)?;
        check_text(
            || format!("{} ({}): value", what(), info.name),
            &info.value,
            max_s,
            true,
        )?;
        let seen = has.entry(o).or_insert_with(|| {
            topo.obj(o)
                .infos
                .iter()
                .map(|i| (i.name.as_str(), i.value.as_str()))
                .collect()
        });
        if !seen.insert((info.name.as_str(), info.value.as_str())) {
            continue;
        }
        let obj = t.obj_mut(o);
        if obj.infos.len() >= limits.max_infos {
            return Err(invalid!(
                "{}: object with gp index {gp} would have more than {} infos",
                what(),
                limits.max_infos
            ));
        }
        obj.infos.push(CoreInfo {
            name: info.name.clone(),
            value: info.value.clone(),
        });
    }
    Ok(())
}

/// Adds the record's Misc objects to `t`, each under the object it names.
fn add_misc(
    a: &Annotations,
    t: &mut Topology,
    resolve: &Resolver,
    limits: &Limits,
    clock: &mut crate::convert::Clock,
) -> Result<(), RecordError> {
    let max_s = limits.max_string_bytes;
    for (k, (gp, name)) in a.misc.iter().enumerate() {
        let what = || format!("Misc object {k}");
        clock.tick()?;
        let parent = resolve.get(&what, *gp)?;
        check_text(|| format!("{}: name", what()), name, max_s, false)?;
        // The tree gets one level deeper under the deepest objects.
        let mut depth = 1;
        let mut cur = parent;
        while let Some(p) = t.obj(cur).parent() {
            depth += 1;
            cur = p;
            if depth > wloc_core::MAX_TREE_DEPTH {
                return Err(invalid!(
                    "{} would be deeper than the deepest tree accepted ({})",
                    what(),
                    wloc_core::MAX_TREE_DEPTH
                ));
            }
        }
        let mut m = Object::new(ObjType::Misc, None);
        m.name = Some(name.clone());
        t.insert_by_parent(parent, m)
            .map_err(|e| invalid!("{}: {e}", what()))?;
    }
    Ok(())
}

/// Adds the record's distance matrices to `t`.
fn add_distances(
    a: &Annotations,
    t: &mut Topology,
    resolve: &Resolver,
    limits: &Limits,
) -> Result<(), RecordError> {
    let max_s = limits.max_string_bytes;
    for (k, m) in a.distances.iter().enumerate() {
        let what = format!("distance matrix {k}");
        if let Some(n) = &m.name {
            check_text(|| format!("{what}: name"), n, max_s, false)?;
        }
        let n = crate::convert::check_distances_shape(&what, m)?;
        let mut seen = HashSet::new();
        let mut objs = Vec::with_capacity(n);
        for &gp in &m.objects {
            if !seen.insert(gp) {
                return Err(invalid!("{what} lists gp index {gp} twice"));
            }
            objs.push(resolve.get(&|| what.clone(), u64::from(gp))?);
        }
        // Several types only when the kind says so, as in hwloc (links
        // between GPUs and CPUs: `NVLinkBandwidth`).
        let ty = t.obj(objs[0]).obj_type;
        let hetero = m.kind & wloc_core::distances::kind::HETEROGENEOUS_TYPES != 0;
        if !hetero && objs.iter().any(|&o| t.obj(o).obj_type != ty) {
            return Err(invalid!(
                "{what} mixes objects of several types (without the heterogeneous kind, 16)"
            ));
        }
        let d = CoreDistances::new(m.name.clone(), m.kind, objs, m.values.clone())
            .ok_or_else(|| invalid!("{what} has a wrong number of values"))?;
        t.distances.push(d);
    }
    Ok(())
}

/// Adds the record's memory attribute values to `t`.
fn add_memattrs(
    a: &Annotations,
    t: &mut Topology,
    resolve: &Resolver,
    limits: &Limits,
    clock: &mut crate::convert::Clock,
) -> Result<(), RecordError> {
    let max_s = limits.max_string_bytes;
    for (k, m) in a.memattrs.iter().enumerate() {
        let what = format!("memory attribute {k}");
        check_text(|| format!("{what}: name"), &m.name, max_s, false)?;
        use wloc_core::memattrs::flags as f;
        let order = m.flags & (f::HIGHER_FIRST | f::LOWER_FIRST);
        if m.flags >= 1 << 3 || (order != f::HIGHER_FIRST && order != f::LOWER_FIRST) {
            return Err(invalid!(
                "{what} ({}) has flags {:#x} (exactly one of 1 and 2, and maybe 4)",
                m.name,
                m.flags
            ));
        }
        if matches!(m.name.as_str(), "Capacity" | "Locality") {
            return Err(invalid!("{what}: {} is computed by the host", m.name));
        }
        let slot = match t.memattrs.iter().position(|x| x.name == m.name) {
            Some(i) if t.memattrs[i].flags == m.flags => i,
            Some(_) => return Err(invalid!("{what} ({}) exists with other flags", m.name)),
            None => {
                t.memattrs.push(MemAttr::new(&m.name, m.flags));
                t.memattrs.len() - 1
            }
        };
        let mut at: HashMap<(ObjId, InitKey), usize> = t.memattrs[slot]
            .values
            .iter()
            .enumerate()
            .map(|(j, v)| ((v.target, init_key(&v.initiator)), j))
            .collect();
        for v in &m.values {
            clock.tick()?;
            let target = resolve.get(&|| what.clone(), v.target as u64)?;
            let tt = t.obj(target).obj_type;
            if tt != ObjType::NUMANode {
                return Err(invalid!(
                    "{what}: the target (gp index {}) is a {tt}; targets are NUMA nodes",
                    v.target
                ));
            }
            let initiator = match &v.initiator {
                None => None,
                Some(Initiator::Object(gp)) => {
                    let o = resolve.get(&|| what.clone(), u64::from(*gp))?;
                    let it = t.obj(o).obj_type;
                    if !matches!(it.kind(), ObjKind::Normal | ObjKind::Memory) {
                        return Err(invalid!(
                            "{what}: the initiator (gp index {gp}) is a {it}, which has no cpuset"
                        ));
                    }
                    Some(CoreInitiator::Object(o))
                }
                Some(Initiator::Cpuset(c)) => {
                    let cap = wloc_core::bitmap::MAX_SET_BITS as usize / 64;
                    if c.infinite
                        || c.words.len() > limits.max_bitmap_words
                        || c.words
                            .iter()
                            .rposition(|&w| w != 0)
                            .is_some_and(|i| i >= cap)
                    {
                        return Err(invalid!("{what}: initiator set is infinite or too large"));
                    }
                    Some(CoreInitiator::CpuSet(CpuSet::from_bitmap(
                        CoreBitmap::from_words(&c.words),
                    )))
                }
            };
            let needs = m.flags & f::NEED_INITIATOR != 0;
            if needs && initiator.is_none() {
                return Err(invalid!("{what} needs initiators and a value has none"));
            }
            // As `MemAttr::set`, with a map instead of a scan per value.
            let initiator = if needs { initiator } else { None };
            let values = &mut t.memattrs[slot].values;
            match at.entry((target, init_key(&initiator))) {
                std::collections::hash_map::Entry::Occupied(e) => values[*e.get()].value = v.value,
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(values.len());
                    values.push(wloc_core::memattrs::MemAttrValue {
                        target,
                        initiator,
                        value: v.value,
                    });
                }
            }
        }
    }
    Ok(())
}

/// The record's dynamic properties, checked.
fn properties(
    a: &Annotations,
    resolve: &Resolver,
    limits: &Limits,
) -> Result<Vec<Property>, RecordError> {
    let max_s = limits.max_string_bytes;
    let mut props = Vec::with_capacity(a.properties.len());
    for (k, p) in a.properties.iter().enumerate() {
        let what = || format!("property {k}");
        let object = resolve.get(&what, p.object)?;
        check_text(|| format!("{}: name", what()), &p.name, max_s, false)?;
        check_text(
            || format!("{} ({}): unit", what(), p.name),
            &p.unit,
            MAX_UNIT_BYTES,
            true,
        )?;
        if !p.value.is_finite() {
            return Err(invalid!("{} ({}) has value {}", what(), p.name, p.value));
        }
        props.push(Property {
            object,
            name: p.name.clone(),
            value: p.value,
            unit: p.unit.clone(),
        });
    }
    Ok(props)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::types::{Info, Memattr, MemattrValue};
    use std::time::Instant;

    fn empty() -> Annotations {
        Annotations {
            infos: Vec::new(),
            misc: Vec::new(),
            distances: Vec::new(),
            memattrs: Vec::new(),
            properties: Vec::new(),
        }
    }

    /// A finished machine of `n` PUs (through the synthetic description).
    fn machine(n: u32) -> Topology {
        wloc_core::synthetic::parse(&format!("pu:{n}"))
            .and_then(|d| d.build(Topology::new()))
            .expect("synthetic machine")
    }

    fn pu_gps(t: &Topology) -> Vec<u64> {
        t.ids()
            .filter(|&i| t.obj(i).obj_type == ObjType::PU)
            .map(|i| t.obj(i).gp_index)
            .collect()
    }

    #[test]
    fn many_infos_are_added_without_a_scan_per_info() {
        // 63 PUs of 4096 infos each (the most one object may have), and
        // one repeat: 258,049 infos, within the record's 262,144.
        let mut t = machine(63);
        let mut a = empty();
        for gp in pu_gps(&t) {
            for k in 0..4096 {
                a.infos.push((
                    gp,
                    Info {
                        name: format!("n{k}"),
                        value: "v".into(),
                    },
                ));
            }
        }
        // Repeats of pairs an object has are skipped, not counted.
        let first = a.infos[0].clone();
        a.infos.push(first);
        let start = Instant::now();
        apply(&a, &mut t, &Limits::default()).unwrap();
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
        let pu = t.ids().find(|&i| t.obj(i).obj_type == ObjType::PU).unwrap();
        assert_eq!(t.obj(pu).infos.len(), 4096);
    }

    #[test]
    fn infos_and_misc_objects_are_capped() {
        let infos = |t: &Topology, n: usize| {
            let mut a = empty();
            for gp in pu_gps(t).into_iter().take(n) {
                for k in 0..4096 {
                    a.infos.push((
                        gp,
                        Info {
                            name: format!("n{k}"),
                            value: String::new(),
                        },
                    ));
                }
            }
            a
        };
        let mut t = machine(512);
        let before = t.clone();
        // 524,288 infos: more than the 262,144 a record may add, within
        // a bound of 2^20 on everything a record returns (by default the
        // two are equal, and the latter is checked first).
        let wide = Limits {
            max_objects: 1 << 20,
            ..Limits::default()
        };
        let e = apply(&infos(&t, 128), &mut t, &wide)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "524288 infos returned (at most 262144)");
        // 2,097,152 infos: the bound on everything a record returns is
        // checked first.
        let e = apply(&infos(&t, 512), &mut t, &Limits::default())
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "2097152 infos, Misc objects and properties returned (at most 262144)"
        );
        let root = t.obj(t.root()).gp_index;
        let mut a = empty();
        a.misc = (0..200_000).map(|_| (root, "m".to_string())).collect();
        let e = apply(&a, &mut t, &Limits::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("Misc objects returned (at most 65536)"), "{e}");
        assert_eq!(t.ids().count(), before.ids().count());
    }

    #[test]
    fn memory_attribute_targets_are_numa_nodes() {
        let mut t = machine(2);
        let pu = pu_gps(&t)[0];
        let mut a = empty();
        a.memattrs.push(Memattr {
            name: "Custom".into(),
            flags: 1,
            values: vec![MemattrValue {
                target: pu as u32,
                initiator: None,
                value: 1,
            }],
        });
        let e = apply(&a, &mut t, &Limits::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("targets are NUMA nodes"), "{e}");
    }
}
