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
        .find(|&n| g.vertex(n).obj_type() == Some(t) && g.vertex(n).logical_index == logical)
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
    assert_eq!(g.by_gp_index(g.vertex(root).gp_index.unwrap()), Some(root));
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
    assert_eq!(g.vertex(path[2]).obj_type(), Some(ObjType::Package));
    let (cost, path) = g.path(pu0, pu5).unwrap();
    assert_eq!(cost, 6);
    assert_eq!(g.vertex(path[3]).obj_type(), Some(ObjType::Machine));
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

/// Two packages with a GPU each (PCI device and its `nvml` OS device, the
/// second with a UUID info), linked by NVLink in a bandwidth matrix as
/// hwloc's NVML backend reports it (MB/s, a high value on the diagonal).
fn gpus() -> Topology {
    use wloc_core::object::{ObjAttr, OsDevTypes, PciAttr};
    let mut t = synth("pack:2 numa:1 core:2 pu:2");
    let packs = t.objs_by_type(ObjType::Package);
    let mut osdevs = Vec::new();
    for (k, &p) in packs.iter().enumerate() {
        let mut pci = wloc_core::Object::new(ObjType::PCIDevice, None);
        pci.attr = ObjAttr::Pci(PciAttr {
            domain: 0,
            bus: 0x10 * (k as u8 + 1),
            dev: 0,
            func: 0,
            class_id: 0x0302,
            vendor_id: 0x10de,
            device_id: 0x1db1,
            subvendor_id: 0,
            subdevice_id: 0,
            revision: 0,
            linkspeed: 0.0,
            prog_if: 0,
        });
        let pci = t.insert_by_parent(p, pci).unwrap();
        let mut gpu = wloc_core::Object::new(ObjType::OSDevice, None);
        gpu.name = Some(format!("nvml{k}"));
        gpu.attr = ObjAttr::OsDev(OsDevTypes(4));
        if k == 1 {
            gpu.add_info("NVIDIAUUID", "GPU-8E4C-11AA");
        }
        osdevs.push(t.insert_by_parent(pci, gpu).unwrap());
    }
    t.finish().unwrap();
    let osdevs: Vec<_> = t.objs_by_type(ObjType::OSDevice);
    t.distances.push(
        wloc_core::distances::Distances::new(
            Some("NVLinkBandwidth".into()),
            wloc_core::distances::kind::FROM_OS
                | wloc_core::distances::kind::MEANS_BANDWIDTH
                | wloc_core::distances::kind::HETEROGENEOUS_TYPES,
            osdevs,
            vec![1_000_000, 50_000, 50_000, 1_000_000],
        )
        .unwrap(),
    );
    t
}

#[test]
fn bandwidth_matrices_between_devices_become_interconnects() {
    let t = gpus();
    let g = TopoGraph::new(&t);
    let links: Vec<&Edge> = g
        .graph()
        .edge_weights()
        .filter(|e| e.kind == EdgeKind::Interconnect)
        .collect();
    assert_eq!(links.len(), 1, "one edge per linked pair");
    assert_eq!(links[0].link.as_deref(), Some("NVLink"));
    assert_eq!(links[0].weight, Some(50_000));
    let a = g.by_osdev_name("nvml0").unwrap();
    let b = g.by_osdev_name("nvml1").unwrap();
    // Over the tree: nvml0 - pci - package - machine - package - pci - nvml1.
    assert_eq!(g.path(a, b).unwrap().0, 6);
    // Over every edge, the direct link.
    let (cost, path) = g.weighted_path(a, b).unwrap();
    assert_eq!(cost, 1.0);
    assert_eq!(path, [a, b]);
    // The filtered view keeps the link between kept devices.
    let v = View::new(&g, Some(&TypeSet::parse("os").unwrap()));
    assert_eq!(v.edges.len(), 1);
    assert!(
        v.to_dot()
            .contains("[label=\"interconnect\", link=\"NVLink\", rate=50000")
    );
    assert_eq!(v.to_json()["edges"][0]["rate"], 50_000);
}

#[test]
fn other_sources_land_on_vertices_by_stable_ids() {
    let t = gpus();
    let mut g = TopoGraph::new(&t);
    let gpu1 = g.by_osdev_name("nvml1").unwrap();
    for key in ["guid=gpu-8e4c-11aa", "guid=GPU8E4C11AA"] {
        assert_eq!(g.find(&VertexKey::parse(key).unwrap()), Some(gpu1), "{key}");
    }
    let pci = g.find(&VertexKey::parse("pci=10:00.0").unwrap()).unwrap();
    assert_eq!(g.vertex(pci).obj_type(), Some(ObjType::PCIDevice));
    assert_eq!(
        g.parent(gpu1).and_then(|p| g.vertex(p).obj_type()),
        Some(ObjType::PCIDevice)
    );
    let temp = |v: f64| VertexProperty {
        name: "temperature".into(),
        value: v,
        unit: "°C".into(),
    };
    let missed = g.add_properties([
        (VertexKey::Guid("GPU-8E4C-11AA".into()), temp(61.0)),
        (VertexKey::PciBusId("0000:10:00.0".into()), temp(40.0)),
        (VertexKey::OsDevice("nvml7".into()), temp(1.0)),
    ]);
    assert_eq!(missed, [VertexKey::OsDevice("nvml7".into())]);
    assert_eq!(g.vertex(gpu1).properties, [temp(61.0)]);
    assert_eq!(g.vertex(pci).properties, [temp(40.0)]);
    let json = View::new(&g, None).to_json();
    let v = json["vertices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["osdev_name"] == "nvml1")
        .unwrap();
    assert_eq!(v["properties"][0]["value"], 61.0);
    // A link another source reports (no rate known), between CPUs' packages.
    let a = VertexKey::GpIndex(
        g.vertex(g.by_pci_busid("0000:10:00.0").unwrap())
            .gp_index
            .unwrap(),
    );
    let b = VertexKey::PciBusId("0000:20:00.0".into());
    g.add_interconnect(&a, &b, "PCIe-P2P", None).unwrap();
    assert!(g.add_interconnect(&a, &a, "x", None).is_err());
    assert!(
        g.add_interconnect(&a, &VertexKey::OsDevice("nosuch".into()), "x", None)
            .is_err()
    );
}

#[test]
fn nearest_follows_hwloc_locality() {
    let t = gpus();
    let g = TopoGraph::new(&t);
    let gpu1 = g.by_osdev_name("nvml1").unwrap();
    let near = g.nearest(gpu1, &TypeSet::parse("pu").unwrap(), 8);
    let idx: Vec<u32> = near
        .iter()
        .map(|r| g.vertex(r.node).logical_index)
        .collect();
    // Package 1's PUs (its locality, NUMA node 1's) in logical order, then the others.
    assert_eq!(idx, [4, 5, 6, 7, 0, 1, 2, 3]);
    let nodes = g.nearest(gpu1, &TypeSet::parse("numa").unwrap(), 1);
    assert_eq!(g.vertex(nodes[0].node).logical_index, 1);
}

#[test]
fn weighted_paths_take_numa_links_by_their_distance() {
    let mut t = synth("pack:2 numa:1 pu:1");
    let nodes = t.objs_by_type(ObjType::NUMANode);
    t.distances.push(
        wloc_core::distances::Distances::new(
            Some("NUMALatency".into()),
            wloc_core::distances::kind::MEANS_LATENCY,
            nodes.clone(),
            vec![10, 12, 12, 10],
        )
        .unwrap(),
    );
    let g = TopoGraph::new(&t);
    let (a, b) = (g.by_obj(nodes[0]).unwrap(), g.by_obj(nodes[1]).unwrap());
    // 12/10 = 1.2 hops, against 4 through the packages and the machine.
    let (cost, path) = g.weighted_path(a, b).unwrap();
    assert!((cost - 1.2).abs() < 1e-12, "{cost}");
    assert_eq!(path, [a, b]);
}

#[test]
fn fabric_nodes_join_by_guid_and_queries_cross_cables() {
    let t = synth("pack:2 core:2 pu:2");
    let mut g = TopoGraph::new(&t);
    let pu0 = first(&g, ObjType::PU, 0);
    let pack1 = first(&g, ObjType::Package, 1);
    let node = |kind, guid, ports: Vec<(u32, u64)>| FabricNode {
        kind,
        guid,
        description: format!("node {guid:x}"),
        subnet: "fe80:0000:0000:0000".into(),
        host: None,
        port_guids: ports,
    };
    let sw = g
        .add_fabric_node(node(FabricKind::Switch, 0x10, vec![(1, 0x10)]))
        .unwrap();
    let ca = g
        .add_fabric_node(node(FabricKind::Adapter, 0x20, vec![(1, 0x21)]))
        .unwrap();
    // A GUID already in the graph is refused; the port GUID finds the adapter.
    assert!(
        g.add_fabric_node(node(FabricKind::Router, 0x20, vec![]))
            .is_err()
    );
    assert_eq!(g.by_guid("0x0000000000000021"), Some(ca));
    assert_eq!(g.by_guid("10"), Some(sw));
    assert_eq!(g.vertex(sw).label(), "guid=0x0000000000000010");
    assert_eq!(g.vertex(ca).id(), "fabric0000000000000020");
    // The package stands in for the machine's adapter here.
    g.add_fabric_link(pack1, sw, 2, Some(25_000)).unwrap();
    g.add_fabric_link(sw, ca, 1, None).unwrap();
    assert!(g.add_fabric_link(sw, sw, 1, None).is_err());
    let links: Vec<&Edge> = g
        .graph()
        .edge_weights()
        .filter(|e| e.kind == EdgeKind::FabricLink)
        .collect();
    assert_eq!(links.len(), 2);
    assert_eq!(links[0].link.as_deref(), Some("InfiniBand x2"));
    // Paths and hops go along cables; near reaches the fabric after the machine.
    let (_, path) = g.path(pu0, ca).unwrap();
    assert_eq!(path.last(), Some(&ca));
    assert!(path.contains(&pack1) && path.contains(&sw));
    let (_, wpath) = g.weighted_path(pu0, ca).unwrap();
    assert_eq!(wpath, path);
    let types = TypeSet::parse("adapter,switch").unwrap();
    let near = g.nearest(pu0, &types, 5);
    assert_eq!(
        near.iter().map(|r| r.node).collect::<Vec<_>>(),
        vec![sw, ca]
    );
    assert_eq!(near[0].hops + 1, near[1].hops);
    let only_pus = TypeSet::parse("pu").unwrap();
    assert!(g.nearest(pu0, &only_pus, 100).iter().all(|r| r.node != sw));
    // Filtered exports keep the fabric kinds asked for.
    let v = View::new(&g, Some(&TypeSet::parse("fabric").unwrap()));
    assert_eq!(v.nodes, vec![sw, ca]);
    assert_eq!(v.edges.len(), 1);
    assert!(
        View::new(&g, Some(&TypeSet::parse("package,switch").unwrap()))
            .to_dot()
            .contains("rate=25000")
    );
}
