//! Unit tests over synthetic topologies.

use super::*;
use crate::export::View;

fn synth(desc: &str) -> Topology {
    let mut t = Topology::new();
    t.set_all_types_filter(wloc_core::TypeFilter::KeepAll);
    wloc_core::synthetic::parse(desc).unwrap().build(t).unwrap()
}

fn first(g: &TopoGraph, t: ObjType, logical: u32) -> NodeIndex {
    g.graph()
        .node_indices()
        .find(|&n| g.vertex(n).obj_type == t && g.vertex(n).logical_index == logical)
        .unwrap()
}

#[test]
fn every_object_is_a_vertex_with_typed_edges() {
    let t = synth("pack:2 numa:1 core:2 pu:2");
    let g = TopoGraph::new(&t);
    assert_eq!(g.graph().node_count(), t.iter_dfs().len());
    let count = |k: EdgeKind| g.graph().edge_weights().filter(|e| e.kind == k).count();
    assert_eq!(count(EdgeKind::Memory), 2);
    // Every non-root object has one tree edge in.
    let tree: usize = [
        EdgeKind::Child,
        EdgeKind::Memory,
        EdgeKind::Io,
        EdgeKind::Misc,
    ]
    .into_iter()
    .map(count)
    .sum();
    assert_eq!(tree, g.graph().node_count() - 1);
    let root = g.by_obj(t.root()).unwrap();
    assert_eq!(g.by_gp_index(g.vertex(root).gp_index), Some(root));
}

#[test]
fn type_classes() {
    let c = TypeSet::parse("cache").unwrap();
    assert!(c.contains(ObjType::L1ICache) && c.contains(ObjType::L5Cache));
    assert!(c.contains(ObjType::MemCache) && !c.contains(ObjType::Core));
    let c = TypeSet::parse("compute,io").unwrap();
    assert!(c.contains(ObjType::PU) && c.contains(ObjType::OSDevice));
    assert!(!c.contains(ObjType::NUMANode));
    let m = TypeSet::parse("memory").unwrap();
    assert!(m.contains(ObjType::NUMANode) && m.contains(ObjType::MemCache));
    assert_eq!(TypeSet::parse("l3").unwrap().types(), &[ObjType::L3Cache]);
    assert!(TypeSet::parse("bogus").is_err());
    assert!(TypeSet::parse("").is_err());
}

#[test]
fn hops_path_and_nearest() {
    let t = synth("pack:2 core:2 pu:2");
    let g = TopoGraph::new(&t);
    let pu0 = first(&g, ObjType::PU, 0);
    let pu3 = first(&g, ObjType::PU, 3);
    let pu5 = first(&g, ObjType::PU, 5);
    // pu0 - core0 - pack0 - core1 - pu3.
    let (cost, path) = g.path(pu0, pu3).unwrap();
    assert_eq!(cost, 4);
    assert_eq!(g.vertex(path[2]).obj_type, ObjType::Package);
    let (cost, path) = g.path(pu0, pu5).unwrap();
    assert_eq!(cost, 6);
    assert_eq!(g.vertex(path[3]).obj_type, ObjType::Machine);
    let hops = g.hops(pu0, Some(2));
    let labels: Vec<(u32, String)> = hops
        .iter()
        .map(|r| (r.hops, g.vertex(r.node).label()))
        .collect();
    assert_eq!(
        labels,
        [
            (0, "PU:0".to_string()),
            (1, "Core:0".to_string()),
            (2, "Package:0".to_string()),
            (2, "PU:1".to_string()),
        ]
    );
    let near = g.nearest(pu0, &TypeSet::parse("pu").unwrap(), 3);
    let idx: Vec<u32> = near
        .iter()
        .map(|r| g.vertex(r.node).logical_index)
        .collect();
    assert_eq!(idx, [1, 2, 3]);
}

#[test]
fn numa_distances_become_weighted_edges() {
    let mut t = synth("pack:2 numa:1 pu:2");
    let nodes = t.objs_by_type(ObjType::NUMANode);
    t.distances.push(
        wloc_core::distances::Distances::new(
            Some("NUMALatency".into()),
            wloc_core::distances::kind::MEANS_LATENCY,
            nodes,
            vec![10, 21, 21, 10],
        )
        .unwrap(),
    );
    let g = TopoGraph::new(&t);
    let d: Vec<&Edge> = g
        .graph()
        .edge_weights()
        .filter(|e| e.kind == EdgeKind::NumaDistance)
        .collect();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].weight, Some(21));
}

#[test]
fn exports_are_well_formed() {
    let mut t = synth("pack:2 numa:1 core:2 pu:2");
    let root = t.root();
    t.obj_mut(root).add_info("Odd", "<a & \"b\">");
    let g = TopoGraph::new(&t);
    let view = View::new(&g, None);
    let xml = view.to_graphml();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let nodes = doc.descendants().filter(|n| n.has_tag_name("node")).count();
    assert_eq!(nodes, g.graph().node_count());
    assert!(xml.contains("&lt;a &amp; &quot;b&quot;&gt;"));
    let dot = view.to_dot();
    assert!(dot.starts_with("digraph topology {"));
    assert!(dot.contains("[label=\"memory\"]"));
    let json = view.to_json();
    assert_eq!(
        json["vertices"].as_array().unwrap().len(),
        g.graph().node_count()
    );
    // A filtered view links PUs to their nearest kept ancestor.
    let f = TypeSet::parse("pack,pu").unwrap();
    let v = View::new(&g, Some(&f));
    assert_eq!(v.nodes.len(), 2 + 8);
    assert_eq!(v.edges.len(), 8);
    assert!(v.edges.iter().all(|e| e.2.kind == EdgeKind::Child));
}
