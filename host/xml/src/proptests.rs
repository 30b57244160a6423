//! Property tests: random trees survive an XML round trip in both versions.

use proptest::prelude::*;
use wloc_core::object::ObjType;
use wloc_core::{Object, Topology, TypeFilter};

use super::{export, import_str, XmlVersion};

/// A random synthetic description: optional levels in hwloc's order, then PUs.
fn description() -> impl Strategy<Value = String> {
    let levels = ["pack", "die", "l3", "group", "l2", "l1", "core"];
    (
        proptest::collection::vec(proptest::option::of(1u32..4), levels.len()),
        1u32..4,
        0usize..levels.len(),
    )
        .prop_map(move |(arities, pus, numa_at)| {
            let mut parts = Vec::new();
            for (i, (name, arity)) in levels.iter().zip(arities).enumerate() {
                if let Some(a) = arity {
                    let mut p = format!("{name}:{a}");
                    if name.starts_with('l') {
                        p.push_str(&format!("(size={}KB)", 16 << i));
                    }
                    if i == numa_at && parts.is_empty() {
                        p.push_str(" [numa(memory=1GB)]");
                    }
                    parts.push(p);
                }
            }
            parts.push(format!("pu:{pus}"));
            parts.join(" ")
        })
}

fn keep_all() -> Topology {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    t
}

/// Printable text, including the characters XML must escape.
fn text() -> impl Strategy<Value = String> {
    "[ -~éß€]{0,16}"
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_trees_round_trip_through_xml(
        desc in description(),
        infos in proptest::collection::vec((0usize..64, text(), text()), 0..8),
        miscs in proptest::collection::vec((0usize..64, text()), 0..4),
    ) {
        let mut t = wloc_core::synthetic::parse(&desc).unwrap().build(keep_all()).unwrap();
        let ids = t.iter_dfs();
        for (at, name, value) in &infos {
            let id = ids[at % ids.len()];
            t.obj_mut(id).add_info(name, value);
        }
        for (at, name) in &miscs {
            let parent = ids[at % ids.len()];
            if t.obj(parent).obj_type == ObjType::Misc {
                continue;
            }
            let mut m = Object::new(ObjType::Misc, None);
            m.name = Some(name.clone());
            t.insert_by_parent(parent, m);
        }
        t.finish().unwrap();
        t.check().unwrap();
        for v in [XmlVersion::V3, XmlVersion::V2] {
            let first = export(&t, v);
            let back = import_str(&first, keep_all()).unwrap_or_else(|e| panic!("{e}\n{first}"));
            back.check().unwrap();
            let second = export(&back, v);
            let again = export(&import_str(&second, keep_all()).unwrap(), v);
            prop_assert_eq!(&second, &again);
            if v == XmlVersion::V3 {
                prop_assert_eq!(&first, &second);
            }
            prop_assert_eq!(back.objs_by_type(ObjType::PU).len(), t.objs_by_type(ObjType::PU).len());
            prop_assert_eq!(back.objs_by_type(ObjType::Misc).len(), t.objs_by_type(ObjType::Misc).len());
        }
    }
}
