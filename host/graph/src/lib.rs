//! `wloc-graph`: a finished [`Topology`] seen as a graph (after yloc's
//! "topology as a graph"), built with `petgraph`.
//!
//! Every object is a vertex, I/O and Misc objects included, identified by
//! its global persistent index (`gp_index`) and findable by PCI bus id or
//! OS device name.  Edges are typed: `child` (parent to normal child),
//! `memory` (parent to memory child), `io` (parent to I/O child), `misc`
//! (parent to Misc child) and `numa-distance` between NUMA nodes, weighted
//! by the topology's NUMA latency matrix when there is one.
//!
//! Queries run over the tree edges, undirected, each of weight 1: hop
//! distances ([`TopoGraph::hops`]), shortest paths ([`TopoGraph::path`]),
//! the N nearest objects of some types ([`TopoGraph::nearest`]).  Exports
//! ([`export`]) write DOT, GraphML and JSON of the whole graph or of a view
//! filtered by [`TypeSet`].

use std::collections::HashMap;
use std::fmt;

use petgraph::graph::{DiGraph, UnGraph};
use wloc_core::{ObjId, ObjType, Topology};

pub mod export;
mod types;

pub use petgraph::graph::NodeIndex;
pub use types::{TypeSet, TypeSetError};

/// The type of an edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EdgeKind {
    /// Parent to normal child.
    Child,
    /// Parent to memory child (NUMA node, memory-side cache).
    Memory,
    /// Parent to I/O child (bridge, PCI device, OS device).
    Io,
    /// Parent to Misc child.
    Misc,
    /// NUMA node to NUMA node, weighted by their latency distance.
    NumaDistance,
}

impl EdgeKind {
    /// The name exports use as edge label.
    pub fn name(self) -> &'static str {
        match self {
            EdgeKind::Child => "child",
            EdgeKind::Memory => "memory",
            EdgeKind::Io => "io",
            EdgeKind::Misc => "misc",
            EdgeKind::NumaDistance => "numa-distance",
        }
    }

    /// Whether the edge is one of the tree's (parent to child).
    pub fn is_tree(self) -> bool {
        self != EdgeKind::NumaDistance
    }
}

impl fmt::Display for EdgeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An edge: its type and, for `numa-distance` edges, the distance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    pub kind: EdgeKind,
    pub weight: Option<u64>,
}

/// The properties of an object, as a vertex holds them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vertex {
    /// The object in the topology it was built from.
    pub obj: ObjId,
    /// The global persistent index: the vertex's stable identity.
    pub gp_index: u64,
    pub obj_type: ObjType,
    pub os_index: Option<u32>,
    pub logical_index: u32,
    pub name: Option<String>,
    pub subtype: Option<String>,
    /// In hwloc's form (`0x0000000f`).
    pub cpuset: Option<String>,
    pub nodeset: Option<String>,
    pub infos: Vec<(String, String)>,
    /// `dddd:bb:dd.f`, for PCI devices and PCI bridges.
    pub pci_busid: Option<String>,
    /// The OS device's name (`eth0`, `mlx5_0`), for OS devices.
    pub osdev_name: Option<String>,
}

impl Vertex {
    /// The vertex's identifier in exports: `obj<gp_index>`.
    pub fn id(&self) -> String {
        format!("obj{}", self.gp_index)
    }

    /// A short name that is also a location of hwloc's language:
    /// `os=eth0`, `pci=0000:02:00.0`, else `Type:logical index`.
    pub fn label(&self) -> String {
        if let Some(n) = &self.osdev_name {
            return format!("os={n}");
        }
        if self.obj_type == ObjType::PCIDevice {
            if let Some(b) = &self.pci_busid {
                return format!("pci={b}");
            }
        }
        format!("{}:{}", self.obj_type, self.logical_index)
    }
}

/// A topology seen as a graph.
pub struct TopoGraph {
    graph: DiGraph<Vertex, Edge>,
    /// The tree edges only, undirected, weight 1; same node indexes.
    tree: UnGraph<(), u32>,
    by_obj: HashMap<ObjId, NodeIndex>,
    by_gp: HashMap<u64, NodeIndex>,
    by_busid: HashMap<String, NodeIndex>,
    by_osdev: HashMap<String, NodeIndex>,
}

/// An object reached by a query, with its distance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reached {
    pub node: NodeIndex,
    pub hops: u32,
}

fn vertex(topo: &Topology, id: ObjId) -> Vertex {
    let o = topo.obj(id);
    let pci_busid = o.pci().map(|p| {
        format!(
            "{:04x}:{:02x}:{:02x}.{:01x}",
            p.domain, p.bus, p.dev, p.func
        )
    });
    Vertex {
        obj: id,
        gp_index: o.gp_index,
        obj_type: o.obj_type,
        os_index: o.os_index,
        logical_index: o.logical_index(),
        name: o.name.clone(),
        subtype: o.subtype.clone(),
        cpuset: o.cpuset.as_ref().map(|c| c.to_string()),
        nodeset: o.nodeset.as_ref().map(|n| n.to_string()),
        infos: o
            .infos
            .iter()
            .map(|i| (i.name.clone(), i.value.clone()))
            .collect(),
        pci_busid,
        osdev_name: (o.obj_type == ObjType::OSDevice)
            .then(|| o.name.clone())
            .flatten(),
    }
}

impl TopoGraph {
    /// The graph of a finished topology.
    pub fn new(topo: &Topology) -> Self {
        let order = topo.iter_dfs();
        let mut graph = DiGraph::with_capacity(order.len(), order.len());
        let mut tree = UnGraph::with_capacity(order.len(), order.len());
        let mut by_obj = HashMap::new();
        let mut by_gp = HashMap::new();
        let mut by_busid = HashMap::new();
        let mut by_osdev = HashMap::new();
        for &id in &order {
            let v = vertex(topo, id);
            let gp = v.gp_index;
            let busid = v
                .pci_busid
                .clone()
                .filter(|_| v.obj_type == ObjType::PCIDevice);
            let osdev = v.osdev_name.clone();
            let n = graph.add_node(v);
            tree.add_node(());
            by_obj.insert(id, n);
            by_gp.insert(gp, n);
            if let Some(b) = busid {
                by_busid.entry(b).or_insert(n);
            }
            if let Some(d) = osdev {
                by_osdev.entry(d).or_insert(n);
            }
        }
        for &id in &order {
            let o = topo.obj(id);
            let from = by_obj[&id];
            for (list, kind) in [
                (o.memory_children(), EdgeKind::Memory),
                (o.children(), EdgeKind::Child),
                (o.io_children(), EdgeKind::Io),
                (o.misc_children(), EdgeKind::Misc),
            ] {
                for c in list {
                    let to = by_obj[c];
                    graph.add_edge(from, to, Edge { kind, weight: None });
                    tree.add_edge(from, to, 1);
                }
            }
        }
        if let Some(d) = numa_latency(topo) {
            let n = d.nbobjs();
            for i in 0..n {
                for j in 0..n {
                    let (Some(&a), Some(&b)) = (by_obj.get(&d.objs[i]), by_obj.get(&d.objs[j]))
                    else {
                        continue;
                    };
                    let vij = d.value(i, j);
                    // One edge per pair, both ways when the matrix is asymmetric.
                    if i == j || (i > j && vij == d.value(j, i)) {
                        continue;
                    }
                    graph.add_edge(
                        a,
                        b,
                        Edge {
                            kind: EdgeKind::NumaDistance,
                            weight: vij,
                        },
                    );
                }
            }
        }
        TopoGraph {
            graph,
            tree,
            by_obj,
            by_gp,
            by_busid,
            by_osdev,
        }
    }

    /// The petgraph graph: vertices and typed edges.
    pub fn graph(&self) -> &DiGraph<Vertex, Edge> {
        &self.graph
    }

    /// A vertex's properties.
    pub fn vertex(&self, n: NodeIndex) -> &Vertex {
        &self.graph[n]
    }

    /// The vertex of a topology object.
    pub fn by_obj(&self, id: ObjId) -> Option<NodeIndex> {
        self.by_obj.get(&id).copied()
    }

    /// The vertex of the object with this global persistent index.
    pub fn by_gp_index(&self, gp: u64) -> Option<NodeIndex> {
        self.by_gp.get(&gp).copied()
    }

    /// The PCI device with this bus id (`0000:02:00.0`, or `02:00.0` in domain 0).
    pub fn by_pci_busid(&self, busid: &str) -> Option<NodeIndex> {
        let full = if busid.matches(':').count() == 1 {
            format!("0000:{busid}")
        } else {
            busid.to_string()
        };
        self.by_busid.get(&full.to_ascii_lowercase()).copied()
    }

    /// The OS device with this name.
    pub fn by_osdev_name(&self, name: &str) -> Option<NodeIndex> {
        self.by_osdev.get(name).copied()
    }

    /// Hop distances over the tree edges from `from`, nearest first (ties
    /// in depth-first order), up to `max` hops when given.
    pub fn hops(&self, from: NodeIndex, max: Option<u32>) -> Vec<Reached> {
        let mut dist = vec![u32::MAX; self.tree.node_count()];
        let mut out = Vec::new();
        let mut queue = std::collections::VecDeque::new();
        dist[from.index()] = 0;
        queue.push_back(from);
        while let Some(n) = queue.pop_front() {
            let d = dist[n.index()];
            out.push(Reached { node: n, hops: d });
            if max.is_some_and(|m| d >= m) {
                continue;
            }
            let mut next: Vec<NodeIndex> = self.tree.neighbors(n).collect();
            next.sort();
            for m in next {
                if dist[m.index()] == u32::MAX {
                    dist[m.index()] = d + 1;
                    queue.push_back(m);
                }
            }
        }
        out.sort_by_key(|r| (r.hops, r.node));
        out
    }

    /// The shortest path over the tree edges (Dijkstra, weight 1 per
    /// edge): its length and its vertices, `from` and `to` included.
    pub fn path(&self, from: NodeIndex, to: NodeIndex) -> Option<(u32, Vec<NodeIndex>)> {
        petgraph::algo::astar(&self.tree, from, |n| n == to, |e| *e.weight(), |_| 0)
    }

    /// The `n` objects of the types of `types` nearest to `from` over the
    /// tree edges (`from` excluded), ties broken by logical index.
    pub fn nearest(&self, from: NodeIndex, types: &TypeSet, n: usize) -> Vec<Reached> {
        let dist = petgraph::algo::dijkstra(&self.tree, from, None, |e| *e.weight());
        let mut found: Vec<Reached> = dist
            .into_iter()
            .filter(|&(m, _)| m != from && types.contains(self.graph[m].obj_type))
            .map(|(node, hops)| Reached { node, hops })
            .collect();
        found.sort_by_key(|r| {
            let v = &self.graph[r.node];
            (r.hops, v.logical_index, v.obj_type, r.node)
        });
        found.truncate(n);
        found
    }
}

/// The NUMA latency matrix: `NUMALatency`, else a latency matrix between
/// NUMA nodes only.
fn numa_latency(topo: &Topology) -> Option<&wloc_core::distances::Distances> {
    let numa_only = |d: &wloc_core::distances::Distances| {
        !d.objs.is_empty()
            && d.objs.iter().all(|&id| {
                topo.get(id)
                    .is_some_and(|o| o.obj_type == ObjType::NUMANode)
            })
    };
    topo.distances
        .iter()
        .find(|d| d.name.as_deref() == Some("NUMALatency") && numa_only(d))
        .or_else(|| {
            topo.distances
                .iter()
                .find(|d| d.kind & wloc_core::distances::kind::MEANS_LATENCY != 0 && numa_only(d))
        })
}

#[cfg(test)]
mod tests;
