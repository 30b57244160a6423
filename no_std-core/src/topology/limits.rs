//! Tests of the limits every source meets: the depth limit
//! ([`MAX_TREE_DEPTH`]) on each insertion path, the parent/child type
//! rules, every pass over a tree at the limit running on a small stack,
//! and random trees (deep, wide, mixed, invalid) either refused or
//! consistent once finished.

extern crate std;

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use proptest::prelude::*;

use super::*;
use crate::object::{BridgeAttr, BridgeUpstream, CacheAttr, GroupAttr};

/// The smallest stack the passes must fit at the depth limit: a quarter
/// of the 2 MiB a spawned thread gets by default.
const SMALL_STACK: usize = 256 * 1024;

/// Runs `f` on a thread with a [`SMALL_STACK`] stack; a stack overflow
/// aborts the test process, which fails the test.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(f)
        .expect("spawn a test thread")
        .join()
        .expect("the test thread panicked")
}

fn pu(os: u32) -> Object {
    Object::with_cpuset(ObjType::PU, Some(os), CpuSet::from_index(os))
}

fn numa(os: u32, set: CpuSet) -> Object {
    let mut n = Object::with_cpuset(ObjType::NUMANode, Some(os), set);
    n.nodeset = Some(NodeSet::from_index(os));
    n
}

fn group(set: CpuSet) -> Object {
    let mut g = Object::with_cpuset(ObjType::Group, None, set);
    g.attr = ObjAttr::Group(GroupAttr {
        dont_merge: true,
        ..GroupAttr::default()
    });
    g
}

fn bridge() -> Object {
    let mut b = Object::new(ObjType::Bridge, None);
    b.attr = ObjAttr::Bridge(BridgeAttr {
        upstream: BridgeUpstream::Host,
        domain: 0,
        secondary_bus: 0,
        subordinate_bus: 0,
        depth: 0,
    });
    b
}

/// Links from the root of every live object, by walking parents.
fn max_depth(t: &Topology) -> usize {
    t.ids().map(|id| t.depth_below_root(id)).max().unwrap_or(0)
}

#[test]
fn insertion_by_parent_stops_at_the_limit() {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    let mut parent = t.root();
    for _ in 0..MAX_TREE_DEPTH {
        parent = t
            .insert_by_parent(parent, Object::new(ObjType::Misc, None))
            .unwrap();
    }
    assert_eq!(t.depth_below_root(parent), MAX_TREE_DEPTH);
    let before = t.ids().count();
    let e = t.insert_by_parent(parent, Object::new(ObjType::Misc, None));
    assert_eq!(e, Err(InsertError::TooDeep(ObjType::Misc)));
    assert!(e.unwrap_err().to_string().contains("256"));
    assert_eq!(t.ids().count(), before, "a refused object leaves no trace");
    assert!(t.obj(parent).misc_children().is_empty());
}

#[test]
fn insertion_by_cpuset_stops_at_the_limit() {
    // Strictly nested sets, largest first: each group goes below the last.
    let n = MAX_TREE_DEPTH as u32 + 8;
    let mut t = Topology::new();
    let mut refused = None;
    for k in 0..n {
        match t.insert_by_cpuset(group(CpuSet::from_range(0, Some(n - k)))) {
            Ok(_) => {}
            Err(e) => {
                refused = Some((k, e));
                break;
            }
        }
    }
    let (k, e) = refused.expect("a chain past the limit is refused");
    assert_eq!(k as usize, MAX_TREE_DEPTH);
    assert_eq!(
        e,
        TopologyError::Insert(InsertError::TooDeep(ObjType::Group))
    );
    assert_eq!(max_depth(&t), MAX_TREE_DEPTH);
}

#[test]
fn insertion_above_a_deep_subtree_cannot_push_it_past_the_limit() {
    // Smallest set first: each new group goes above the chain, pushing
    // all of it one level down.
    let n = MAX_TREE_DEPTH as u32 + 8;
    let mut t = Topology::new();
    let mut refused = None;
    for k in 0..n {
        let before = t.ids().count();
        if let Err(e) = t.insert_by_cpuset(group(CpuSet::from_range(0, Some(k)))) {
            assert_eq!(t.ids().count(), before);
            refused = Some((k, e));
            break;
        }
    }
    let (k, e) = refused.expect("pushing the chain past the limit is refused");
    assert_eq!(k as usize, MAX_TREE_DEPTH);
    assert_eq!(
        e,
        TopologyError::Insert(InsertError::TooDeep(ObjType::Group))
    );
    assert_eq!(max_depth(&t), MAX_TREE_DEPTH);
}

#[test]
fn memory_caches_cannot_chain_past_the_limit() {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    t.insert_by_cpuset(pu(0)).unwrap();
    t.insert_by_cpuset(numa(0, CpuSet::from_index(0))).unwrap();
    // Memory-side caches of growing levels each go above the last one.
    let mut refused = None;
    for level in 1..=(MAX_TREE_DEPTH as u32 + 4) {
        let mut mc = Object::with_cpuset(ObjType::MemCache, None, CpuSet::from_index(0));
        mc.nodeset = Some(NodeSet::from_index(0));
        mc.attr = ObjAttr::Cache(CacheAttr {
            depth: level,
            ..CacheAttr::default()
        });
        if let Err(e) = t.insert_by_cpuset(mc) {
            refused = Some(e);
            break;
        }
    }
    assert_eq!(
        refused,
        Some(TopologyError::Insert(InsertError::TooDeep(
            ObjType::MemCache
        )))
    );
    assert_eq!(max_depth(&t), MAX_TREE_DEPTH);
}

#[test]
fn wrong_parents_are_refused_by_every_path() {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    let root = t.root();
    let p0 = t.insert_by_parent(root, pu(0)).unwrap();
    let n0 = t
        .insert_by_parent(root, numa(0, CpuSet::from_index(0)))
        .unwrap();
    let misc = t
        .insert_by_parent(root, Object::new(ObjType::Misc, None))
        .unwrap();
    let br = t.insert_by_parent(root, bridge()).unwrap();
    let mut mc = Object::new(ObjType::MemCache, None);
    mc.cpuset = Some(CpuSet::from_index(0));
    let mc = t.insert_by_parent(root, mc).unwrap();
    let before = t.ids().count();
    let refused = [
        (p0, numa(1, CpuSet::from_index(0))),
        (p0, pu(1)),
        (n0, numa(1, CpuSet::from_index(0))),
        (n0, Object::new(ObjType::MemCache, None)),
        (n0, bridge()),
        (n0, pu(1)),
        (misc, pu(1)),
        (misc, numa(1, CpuSet::from_index(0))),
        (misc, bridge()),
        (br, pu(1)),
        (br, numa(1, CpuSet::from_index(0))),
        (mc, pu(1)),
        (mc, bridge()),
        (root, Object::new(ObjType::Machine, None)),
    ];
    for (parent, obj) in refused {
        let (child, pt) = (obj.obj_type, t.obj(parent).obj_type);
        let e = t.insert_by_parent(parent, obj).unwrap_err();
        assert_eq!(e, InsertError::WrongParent { child, parent: pt });
        assert_eq!(
            e.to_string(),
            format!("a {child} object cannot be a child of a {pt} object")
        );
    }
    assert_eq!(t.ids().count(), before);
    assert_eq!(
        t.insert_by_parent(12345, pu(1)),
        Err(InsertError::NoSuchParent(12345))
    );
    // Misc goes anywhere; memory below a memory-side cache; I/O below a
    // PU or another I/O object.
    for parent in [p0, n0, misc, br, mc] {
        t.insert_by_parent(parent, Object::new(ObjType::Misc, None))
            .unwrap();
    }
    t.insert_by_parent(mc, numa(2, CpuSet::from_index(0)))
        .unwrap();
    t.insert_by_parent(br, Object::new(ObjType::PCIDevice, None))
        .unwrap();
    t.insert_by_parent(p0, Object::new(ObjType::OSDevice, None))
        .unwrap();
    t.finish().unwrap();
    t.check().unwrap();
    // A PU with several bits cannot take objects inside it by cpuset.
    let mut t = Topology::new();
    let mut wide = pu(0);
    wide.cpuset = Some(CpuSet::from_range(0, Some(3)));
    wide.complete_cpuset = wide.cpuset.clone();
    t.insert_by_cpuset(wide).unwrap();
    assert_eq!(
        t.insert_by_cpuset(Object::with_cpuset(
            ObjType::Core,
            None,
            CpuSet::from_range(0, Some(1))
        )),
        Err(TopologyError::Insert(InsertError::WrongParent {
            child: ObjType::Core,
            parent: ObjType::PU
        }))
    );
}

#[test]
fn the_checker_refuses_wrong_parents_and_trees_too_deep() {
    // Links changed behind insertion's back (as only this crate can).
    let mut t = super::test_machines::small_machine();
    let pu0 = t.objs_by_type(ObjType::PU)[0];
    let node = t.objs_by_type(ObjType::NUMANode)[0];
    let holder = t.obj(node).parent().unwrap();
    t.obj_mut(holder).memory_children.retain(|&c| c != node);
    t.obj_mut(pu0).memory_children.push(node);
    t.obj_mut(node).parent = Some(pu0);
    t.obj_mut(node).sibling_rank = 0;
    let e = t.check().unwrap_err();
    assert!(e.message().contains("cannot be a child of PU"), "{e}");
}

/// A tree whose deepest object is exactly [`MAX_TREE_DEPTH`] links below
/// the root on each kind of path: normal (groups, then a PU), memory
/// (memory-side caches then a NUMA node, then Misc), I/O (bridges, then
/// a PCI device and an OS device) and Misc.
fn deepest_tree() -> Topology {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    let _ = t.set_type_filter(ObjType::Group, TypeFilter::KeepStructure);
    let root = t.root();
    let one = CpuSet::from_index(0);
    let mut p = root;
    for _ in 0..MAX_TREE_DEPTH - 1 {
        p = t.insert_by_parent(p, group(one.clone())).unwrap();
    }
    t.insert_by_parent(p, pu(0)).unwrap();
    t.insert_by_parent(root, pu(1)).unwrap();
    let mut p = root;
    for level in 0..MAX_TREE_DEPTH as u32 - 2 {
        let mut mc = Object::new(ObjType::MemCache, None);
        mc.nodeset = Some(NodeSet::from_index(0));
        mc.attr = ObjAttr::Cache(CacheAttr {
            depth: MAX_TREE_DEPTH as u32 - level,
            ..CacheAttr::default()
        });
        p = t.insert_by_parent(p, mc).unwrap();
    }
    let n = t.insert_by_parent(p, numa(0, one.clone())).unwrap();
    t.insert_by_parent(n, Object::new(ObjType::Misc, None))
        .unwrap();
    let mut p = root;
    for _ in 0..MAX_TREE_DEPTH - 2 {
        p = t.insert_by_parent(p, bridge()).unwrap();
    }
    let dev = t
        .insert_by_parent(p, Object::new(ObjType::PCIDevice, None))
        .unwrap();
    t.insert_by_parent(dev, Object::new(ObjType::OSDevice, None))
        .unwrap();
    let mut p = root;
    for _ in 0..MAX_TREE_DEPTH {
        p = t
            .insert_by_parent(p, Object::new(ObjType::Misc, None))
            .unwrap();
    }
    t
}

#[test]
fn every_pass_fits_a_small_stack_at_the_limit() {
    on_small_stack(|| {
        let mut t = deepest_tree();
        assert_eq!(max_depth(&t), MAX_TREE_DEPTH);
        t.finish().unwrap();
        t.check().unwrap();
        assert!(max_depth(&t) <= MAX_TREE_DEPTH);
        assert_eq!(t.iter_dfs().len(), t.ids().count());
        let _ = crate::synthetic::export(&t, crate::synthetic::ExportFlags::default());
        // Type filters (the walk that removes objects) and bridge filtering.
        let mut f = t.clone();
        f.set_type_filter(ObjType::Misc, TypeFilter::KeepNone)
            .unwrap();
        f.set_type_filter(ObjType::MemCache, TypeFilter::KeepNone)
            .unwrap();
        f.set_io_types_filter(TypeFilter::KeepImportant);
        f.finish().unwrap();
        f.check().unwrap();
        assert!(f.objs_by_type(ObjType::Misc).is_empty());
        // Restriction, by cpuset and by nodeset.
        let mut r = t.clone();
        r.restrict(&CpuSet::from_index(0), false).unwrap();
        r.check().unwrap();
        let mut r = t.clone();
        r.restrict_with_flags(
            CpuSet::from_index(1).bitmap(),
            RestrictFlags::REMOVE_CPULESS,
        )
        .unwrap();
        r.check().unwrap();
        // Removal of the deep subtrees.
        let mut d = t.clone();
        let root = d.root();
        for c in d.obj(root).misc_children().to_vec() {
            d.remove_subtree(c);
        }
        d.finish().unwrap();
        d.check().unwrap();
    });
}

// ------------------------------------------------------------- random trees

/// One step of building a random tree.
#[derive(Clone, Debug)]
enum Op {
    /// An object under the `parent`-th object inserted so far (modulo).
    ByParent { parent: usize, obj: Spec },
    /// An object placed by its sets.
    ByCpuset(Spec),
    /// A chain of `len` objects of one type, each below the last, from
    /// the `parent`-th object.
    Chain {
        parent: usize,
        ty: usize,
        len: usize,
    },
}

/// An object to create.
#[derive(Clone, Debug)]
struct Spec {
    ty: usize,
    os: Option<u32>,
    set: Option<(u32, u32)>,
    node: Option<u32>,
    dont_merge: bool,
}

const PUS: u32 = 12;

fn make(s: &Spec) -> Object {
    let ty = ObjType::ALL[s.ty % ObjType::ALL.len()];
    let mut o = Object::new(ty, s.os);
    if let Some((a, b)) = s.set {
        let (a, b) = (a % PUS, b % PUS);
        let set = CpuSet::from_range(a.min(b), Some(a.max(b)));
        o.cpuset = Some(set.clone());
        o.complete_cpuset = Some(set);
    }
    if let Some(n) = s.node {
        o.nodeset = Some(NodeSet::from_index(n % 4));
    }
    if let ObjAttr::Group(g) = &mut o.attr {
        g.dont_merge = s.dont_merge;
    }
    o
}

fn arb_spec() -> impl Strategy<Value = Spec> {
    (
        0..ObjType::ALL.len(),
        proptest::option::of(0..PUS),
        proptest::option::weighted(0.8, (0..PUS, 0..PUS)),
        proptest::option::of(0..4u32),
        any::<bool>(),
    )
        .prop_map(|(ty, os, set, node, dont_merge)| Spec {
            ty,
            os,
            set,
            node,
            dont_merge,
        })
}

fn arb_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<usize>(), arb_spec()).prop_map(|(parent, obj)| Op::ByParent { parent, obj }),
        4 => arb_spec().prop_map(Op::ByCpuset),
        1 => (any::<usize>(), 0..ObjType::ALL.len(), 1..400usize)
            .prop_map(|(parent, ty, len)| Op::Chain { parent, ty, len }),
    ]
}

/// Builds the tree, checking that every refusal leaves the topology as it
/// was, then finishes it: an error, or a tree that passes the checker and
/// is no deeper than the limit.
fn build_and_finish(ops: Vec<Op>, filters_all: bool) -> Result<(), String> {
    let mut t = Topology::new();
    if filters_all {
        t.set_all_types_filter(TypeFilter::KeepAll);
    }
    let mut ids = vec![t.root()];
    let refused = |t: &Topology, before: usize, what: &str| -> Result<(), String> {
        let now = t.ids().count();
        if now != before {
            return Err(format!(
                "{what} was refused but the object count went {before} -> {now}"
            ));
        }
        Ok(())
    };
    for op in ops {
        let before = t.ids().count();
        match op {
            Op::ByParent { parent, obj } => {
                let p = ids[parent % ids.len()];
                if t.get(p).is_none() {
                    continue;
                }
                match t.insert_by_parent(p, make(&obj)) {
                    Ok(id) => ids.push(id),
                    Err(_) => refused(&t, before, "insert_by_parent")?,
                }
            }
            Op::ByCpuset(obj) => match t.insert_by_cpuset(make(&obj)) {
                Ok(Some(ins)) => ids.push(ins.id()),
                Ok(None) => {}
                Err(_) => refused(&t, before, "insert_by_cpuset")?,
            },
            Op::Chain { parent, ty, len } => {
                let mut p = ids[parent % ids.len()];
                let spec = Spec {
                    ty,
                    os: Some(0),
                    set: Some((0, 0)),
                    node: Some(0),
                    dont_merge: true,
                };
                for _ in 0..len {
                    let before = t.ids().count();
                    match t.insert_by_parent(p, make(&spec)) {
                        Ok(id) => {
                            ids.push(id);
                            p = id;
                        }
                        Err(_) => {
                            refused(&t, before, "a chain link")?;
                            break;
                        }
                    }
                }
            }
        }
        if max_depth(&t) > MAX_TREE_DEPTH {
            return Err(format!("the tree got {} levels deep", max_depth(&t)));
        }
    }
    if t.finish().is_ok() {
        t.check()
            .map_err(|e| format!("finished but inconsistent: {e}"))?;
        if max_depth(&t) > MAX_TREE_DEPTH {
            return Err(format!("finished {} levels deep", max_depth(&t)));
        }
        // Finishing again (as after a change) keeps it consistent.
        t.finish()
            .map_err(|e| format!("a second finish failed: {e}"))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn prop_random_trees_are_refused_or_consistent(
        ops in proptest::collection::vec(arb_op(), 0..60),
        filters_all in any::<bool>(),
    ) {
        let res = on_small_stack(move || build_and_finish(ops, filters_all));
        prop_assert!(res.is_ok(), "{}", res.unwrap_err());
    }
}

/// Type filters remove objects with one rebuild of each parent's lists:
/// 200,000 filtered Misc objects under one parent (a scan of the parent's
/// list per removal took minutes for a million).
#[test]
fn many_filtered_children_of_one_parent_are_removed_in_linear_time() {
    extern crate std;
    let mut t = Topology::new();
    let root = t.root();
    for _ in 0..200_000 {
        t.insert_by_parent(root, Object::new(ObjType::Misc, None))
            .unwrap();
    }
    let mut pu = Object::new(ObjType::PU, Some(0));
    pu.cpuset = Some(CpuSet::from_index(0));
    t.insert_by_cpuset(pu).unwrap();
    t.set_type_filter(ObjType::Misc, TypeFilter::KeepNone)
        .unwrap();
    let start = std::time::Instant::now();
    t.finish().unwrap();
    assert!(t.objs_by_type(ObjType::Misc).is_empty());
    assert!(
        start.elapsed() < core::time::Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
}

/// Empty objects are removed with one rebuild of each parent's lists:
/// 100,000 Groups without PUs under one parent (a scan of the parent's
/// lists per removal made this quadratic).
#[test]
fn many_empty_children_of_one_parent_are_removed_in_linear_time() {
    extern crate std;
    let mut t = Topology::new();
    let root = t.root();
    for _ in 0..100_000 {
        let mut g = Object::new(ObjType::Group, None);
        g.cpuset = Some(CpuSet::new());
        t.insert_by_parent(root, g).unwrap();
    }
    let mut pu = Object::new(ObjType::PU, Some(0));
    pu.cpuset = Some(CpuSet::from_index(0));
    t.insert_by_cpuset(pu).unwrap();
    let start = std::time::Instant::now();
    t.finish().unwrap();
    assert!(t.objs_by_type(ObjType::Group).is_empty());
    assert!(
        start.elapsed() < core::time::Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
}
