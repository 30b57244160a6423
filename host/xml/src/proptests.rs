//! Property tests: random trees survive an XML round trip in both versions.

use proptest::prelude::*;
use wloc_core::object::ObjType;
use wloc_core::{Object, Topology, TypeFilter};

use super::{XmlVersion, export, import_str};

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
            t.insert_by_parent(parent, m).unwrap();
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

/// A small hwloc 1.x document with what such documents hold: NUMA nodes in
/// the CPU tree, `Cache` objects, page types, a distance matrix, a group,
/// I/O objects and old attributes.
const V1_DOC: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc.dtd">
<topology>
  <object type="Machine" os_index="0" cpuset="0x0000000f" complete_cpuset="0x0000000f" online_cpuset="0x0000000f" allowed_cpuset="0x0000000f" nodeset="0x00000003" complete_nodeset="0x00000003" allowed_nodeset="0x00000003" dmi_board_vendor="V">
    <info name="Backend" value="Linux"/>
    <distances nbobjs="2" relative_depth="1" latency_base="10.000000">
      <latency value="1.000000"/>
      <latency value="2.100000"/>
      <latency value="2.100000"/>
      <latency value="1.000000"/>
    </distances>
    <object type="Group" cpuset="0x0000000f" complete_cpuset="0x0000000f" nodeset="0x00000003" complete_nodeset="0x00000003" depth="0">
      <object type="NUMANode" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" local_memory="1073741824">
        <page_type size="4096" count="262144"/>
        <object type="Socket" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001">
          <object type="Cache" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" cache_size="6291456" depth="2" cache_linesize="64" cache_associativity="24" cache_type="0">
            <object type="Cache" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" cache_size="32768" depth="1" cache_linesize="64" cache_associativity="8" cache_type="1">
              <object type="Core" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001">
                <object type="PU" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001"/>
              </object>
            </object>
            <object type="Core" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000001" complete_nodeset="0x00000001">
              <object type="PU" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000001" complete_nodeset="0x00000001"/>
            </object>
          </object>
        </object>
        <object type="Bridge" os_index="0" bridge_type="0-1" depth="0" bridge_pci="0000:[00-01]">
          <object type="PCIDev" os_index="0" pci_busid="0000:00:01.0" pci_type="0200 [8086:10c9] [0000:0000] 01" pci_link_speed="0.000000">
            <object type="OSDev" name="eth0" osdev_type="2"/>
          </object>
        </object>
      </object>
      <object type="NUMANode" os_index="1" cpuset="0x0000000c" complete_cpuset="0x0000000c" nodeset="0x00000002" complete_nodeset="0x00000002" local_memory="1073741824">
        <object type="Socket" os_index="1" cpuset="0x0000000c" complete_cpuset="0x0000000c" nodeset="0x00000002" complete_nodeset="0x00000002">
          <info name="Type" value="Sub"/>
          <object type="PU" os_index="2" cpuset="0x00000004" complete_cpuset="0x00000004" nodeset="0x00000002" complete_nodeset="0x00000002"/>
          <object type="PU" os_index="3" cpuset="0x00000008" complete_cpuset="0x00000008" nodeset="0x00000002" complete_nodeset="0x00000002"/>
        </object>
      </object>
    </object>
  </object>
</topology>
"#;

/// Values that stress attribute parsing.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("7".to_string()),
        Just("99999999999999999999".to_string()),
        Just("0x0000000f".to_string()),
        Just("0x00000010".to_string()),
        Just("1e40".to_string()),
        Just("NaN".to_string()),
        Just("Cache".to_string()),
        Just("NUMANode".to_string()),
        Just("Misc".to_string()),
        Just("Group".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Mutated hwloc 1.x documents load or are refused with a message,
    /// never panic; what loads exports and loads again.
    #[test]
    fn mutated_v1_documents_never_panic(
        edits in proptest::collection::vec((0usize..1000, token()), 1..6),
        cuts in proptest::collection::vec(0usize..1000, 0..3),
    ) {
        // Attribute values are between quotes: replace some of them.
        let mut doc = V1_DOC.to_string();
        for (at, tok) in &edits {
            let quotes: Vec<usize> = doc.match_indices('"').map(|(i, _)| i).collect();
            let pairs = quotes.len() / 2;
            // Skip the XML declaration and DOCTYPE values (first 3 pairs).
            let k = 3 + at % (pairs - 3);
            let (a, b) = (quotes[2 * k], quotes[2 * k + 1]);
            doc.replace_range(a + 1..b, tok);
        }
        // Drop some whole lines (elements or their ends).
        for at in &cuts {
            let lines: Vec<&str> = doc.lines().collect();
            let i = 3 + at % (lines.len() - 4);
            let mut kept = lines.clone();
            kept.remove(i);
            doc = kept.join("\n");
        }
        match import_str(&doc, keep_all()) {
            Ok(t) => {
                for v in [XmlVersion::V3, XmlVersion::V2] {
                    let out = export(&t, v);
                    let back = import_str(&out, keep_all());
                    prop_assert!(back.is_ok(), "own export does not import: {:?}\n{}", back.err(), out);
                }
            }
            Err(e) => prop_assert!(!e.message().is_empty()),
        }
    }

    /// The unmutated document loads with its two NUMA nodes, caches and
    /// distances whatever the filters.
    #[test]
    fn v1_document_loads_under_any_filters(all in 0usize..4, io in 0usize..4) {
        let f = [TypeFilter::KeepAll, TypeFilter::KeepNone, TypeFilter::KeepStructure, TypeFilter::KeepImportant];
        let mut t = Topology::new();
        t.set_cache_types_filter(f[all % 3]);
        t.set_type_filter(ObjType::Group, f[all]).ok();
        t.set_io_types_filter(f[io]);
        let t = import_str(V1_DOC, t).unwrap();
        prop_assert_eq!(t.objs_by_type(ObjType::NUMANode).len(), 2);
        prop_assert_eq!(t.objs_by_type(ObjType::PU).len(), 4);
        prop_assert_eq!(t.distances.len(), 1);
    }
}
