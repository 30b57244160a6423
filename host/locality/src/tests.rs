//! Unit tests of location evaluation over synthetic topologies.

use super::*;

fn synth(desc: &str) -> Topology {
    let mut t = Topology::new();
    t.set_all_types_filter(wloc_core::TypeFilter::KeepAll);
    wloc_core::synthetic::parse(desc).unwrap().build(t).unwrap()
}

fn calc(topo: &Topology, words: &str) -> String {
    let words: Vec<String> = words.split_whitespace().map(String::from).collect();
    let mut acc = Locations::default();
    for w in &words {
        if let Ok(r) = resolve_word(topo, w, &WordOptions::default()) {
            r.op.apply(&mut acc, &r.sets);
        }
    }
    acc.cpuset.to_hwloc_string()
}

#[test]
fn objects_ranges_and_keywords() {
    let t = synth("pack:2 core:4 pu:2");
    assert_eq!(calc(&t, "core:1-2"), "0x0000003c");
    assert_eq!(calc(&t, "core:1:3"), "0x000000fc");
    assert_eq!(calc(&t, "core:6:4"), "0x0000f00f");
    assert_eq!(calc(&t, "pu:even"), "0x00005555");
    assert_eq!(calc(&t, "pu:odd"), "0x0000aaaa");
    assert_eq!(calc(&t, "core:2-"), "0x0000fff0");
    assert_eq!(calc(&t, "pu:3-1"), "0x0000fff8");
    assert_eq!(calc(&t, "pack:1.core:1.pu:0"), "0x00000400");
    assert_eq!(calc(&t, "Core:1"), "0x0000000c");
    assert_eq!(calc(&t, "all"), "0x0000ffff");
}

#[test]
fn operators_combine_left_to_right() {
    let t = synth("pack:2 core:4 pu:2");
    assert_eq!(calc(&t, "pack:0 ^core:0-4"), "0x00000300");
    assert_eq!(calc(&t, "pack:0 xcore:3-4"), "0x000000c0");
    assert_eq!(calc(&t, "pu:0 ~pu:0"), "0x0");
    assert_eq!(calc(&t, "~pu:0 all"), "0x0000ffff");
}

#[test]
fn set_strings_in_hwloc_forms() {
    let t = synth("pack:2 core:4 pu:2");
    assert_eq!(calc(&t, "0x5"), "0x00000005");
    assert_eq!(calc(&t, "1,3"), "0x00000001,0x00000003");
    assert_eq!(calc(&t, "0xf...f,0x1,0x2"), "0xf...f,0x00000001,0x00000002");
    // hwloc 2.14 guesses: a list when it has a dash and no 0x, the
    // taskset form when it has no comma.
    assert_eq!(calc(&t, "1-3"), "0x0000000e");
    assert_eq!(calc(&t, "3-"), "0xf...f,0xfffffff8");
    assert_eq!(calc(&t, "5"), "0x00000005");
    assert_eq!(calc(&t, "0xf...ff00"), "0xf...f,0xffffff00");
    assert_eq!(calc(&t, "foo"), "0x0");
    let opts = WordOptions {
        cpuset_format: Some(CpusetFormat::List),
        ..WordOptions::default()
    };
    let l = resolve_word(&t, "1-3", &opts).unwrap().sets;
    assert_eq!(l.cpuset.to_hwloc_string(), "0x0000000e");
}

#[test]
fn physical_input_uses_os_indexes() {
    let t = synth("pack:2 core:2 pu:2(indexes=0,2,4,6,1,3,5,7)");
    let opts = EvalOptions {
        physical_input: true,
    };
    let l = evaluate(&t, &["pu:2".to_string()], &opts).unwrap();
    assert_eq!(l.cpuset.to_hwloc_string(), "0x00000004");
    let l = evaluate(&t, &["pu:1".to_string()], &EvalOptions::default()).unwrap();
    assert_eq!(l.cpuset.to_hwloc_string(), "0x00000004");
}

#[test]
fn numa_nodes_give_both_sets() {
    let t = synth("pack:2 [numa] core:2 pu:2");
    let l = evaluate(&t, &["numa:1".to_string()], &EvalOptions::default()).unwrap();
    assert_eq!(l.cpuset.to_hwloc_string(), "0x000000f0");
    assert_eq!(l.nodeset.to_hwloc_string(), "0x00000002");
    let l = evaluate(&t, &["pack:1.numa:0".to_string()], &EvalOptions::default()).unwrap();
    assert_eq!(l.nodeset.to_hwloc_string(), "0x00000002");
}

#[test]
fn errors_name_the_word() {
    let t = synth("pack:2 core:4 pu:2");
    let e = evaluate(&t, &["frob:1".to_string()], &EvalOptions::default()).unwrap_err();
    assert!(e.to_string().contains("frob:1"), "{e}");
    let e = evaluate(&t, &["core:99".to_string()], &EvalOptions::default()).unwrap_err();
    assert!(e.to_string().contains("core:99"), "{e}");
    let e = evaluate(&t, &["core:x".to_string()], &EvalOptions::default()).unwrap_err();
    assert!(e.to_string().contains("core:x"), "{e}");
    let e = evaluate(&t, &["l3:0".to_string()], &EvalOptions::default()).unwrap_err();
    assert!(matches!(e, LocationError::NoSuchLevel(_)), "{e}");
    assert!(evaluate(&t, &["os=eth0".to_string()], &EvalOptions::default()).is_err());
}

#[test]
fn huge_ranges_finish() {
    let t = synth("pack:2 core:4 pu:2");
    assert_eq!(calc(&t, "pu:5-2"), "0x0000ffe0");
    assert_eq!(calc(&t, "pu:20-"), "0x0");
    assert_eq!(calc(&t, "pu:0:4000000000"), "0x0000ffff");
}

#[test]
fn level_filters_in_brackets_select_by_subtype() {
    let mut t = synth("pack:2 core:2 pu:1");
    let cores: Vec<ObjId> = t
        .objs_by_type(ObjType::Core)
        .into_iter()
        .filter(|&id| t.obj(id).logical_index() % 2 == 1)
        .collect();
    for id in cores {
        t.obj_mut(id).subtype = Some("Fast".into());
    }
    assert_eq!(calc(&t, "core[fast]:1"), "0x00000008");
    assert_eq!(calc(&t, "core[subtype=FAST]:all"), "0x0000000a");
    // An empty filter filters nothing, as in hwloc.
    assert_eq!(calc(&t, "core[]:0"), "0x00000001");
    assert_eq!(calc(&t, "pack:1.core[fast]:0"), "0x00000008");
    assert_eq!(calc(&t, "core[slow]:0"), "0x0");
    assert!(resolve_word(&t, "core[fast:0", &WordOptions::default()).is_err());
    assert!(resolve_word(&t, "core[fast]0", &WordOptions::default()).is_err());
}

#[test]
fn systemd_dbus_api_form() {
    let b = wloc_core::Bitmap::parse("0x00000001,0x80000001").unwrap();
    assert_eq!(
        systemd_dbus_api(&b).as_deref(),
        Some("ay 0x0005 0x01 0x00 0x00 0x80 0x01")
    );
    assert_eq!(systemd_dbus_api(&wloc_core::Bitmap::new()), None);
    assert_eq!(systemd_dbus_api(&wloc_core::Bitmap::full()), None);
}

#[test]
fn level_specs_take_filters() {
    let t = synth("pack:2 [numa] [numa] core:2 pu:2");
    let numa = query::parse_level_spec(&t, "numa").unwrap();
    let all = NodeSet::parse("0xf").unwrap();
    let cpus = t.cpuset().clone();
    assert_eq!(query::intersecting(&t, &numa, &cpus, &all).len(), 4);
    // Memory objects are compared by node set alone.
    let one = NodeSet::parse("0x4").unwrap();
    let ids = query::intersecting(&t, &numa, &cpus, &one);
    assert_eq!(ids.len(), 1);
    assert_eq!(t.obj(ids[0]).os_index, Some(2));
    // No synthetic node has a subtype.
    let hbm = query::parse_level_spec(&t, "numa[hbm]").unwrap();
    assert!(query::intersecting(&t, &hbm, &cpus, &all).is_empty());
    assert!(query::parse_level_spec(&t, "numa[hbm").is_err());
    assert!(query::parse_level_spec(&t, "-3").is_err());
    assert!(query::parse_level_spec(&t, "9").is_err());
    assert_eq!(query::parse_level_spec(&t, "2").unwrap().depth, 2);
}

#[test]
fn default_nodes_cover_the_machine_once() {
    let t = synth("pack:2 [numa] [numa] pu:2");
    assert_eq!(query::default_nodeset(&t).to_hwloc_string(), "0x00000005");
}

#[test]
fn best_nodes_fall_back_to_the_default_nodes_when_asked() {
    let t = synth("pack:2 [numa] [numa] pu:2");
    let nodes: Vec<_> = t.level(wloc_core::object::Depth::NumaNode).to_vec();
    let (name, flags) = query::split_best_memattr("bandwidth,strict,default");
    assert_eq!(name, "bandwidth");
    assert!(flags.strict && flags.default);
    let (name, flags) = query::split_best_memattr("Capacity");
    assert_eq!(
        (name.as_str(), flags),
        ("Capacity", query::BestNodeFlags::default())
    );
    // No Bandwidth value anywhere: no best node, or the default ones.
    let all = t.cpuset().clone();
    assert!(query::best_nodes(&t, 2, &nodes, &all, query::BestNodeFlags::default()).is_empty());
    let default = query::BestNodeFlags {
        default: true,
        ..Default::default()
    };
    assert_eq!(query::best_nodes(&t, 2, &nodes, &all, default), [0, 2]);
    // Capacity: equal nodes all count.
    assert_eq!(
        query::best_nodes(&t, 0, &nodes, &all, default),
        [0, 1, 2, 3]
    );
}
