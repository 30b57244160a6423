//! `wloc-graph`: a finished [`Topology`] seen as a graph (after yloc's
//! "topology as a graph"), built with `petgraph`.
//!
//! Every object is a vertex, I/O and Misc objects included, identified by
//! its global persistent index (`gp_index`) and findable by the stable ids
//! other sources use ([`VertexKey`]: PCI bus id, OS device name, GUID or
//! UUID infos), so that what they say about a device (dynamic properties,
//! links) lands on it.  Edges are typed: `child` (parent to normal
//! child), `memory` (parent to memory child), `io` (parent to I/O child),
//! `misc` (parent to Misc child), `numa-distance` between NUMA nodes,
//! weighted by the topology's NUMA latency matrix when there is one, and
//! `interconnect` between devices linked directly (GPU to GPU, GPU to
//! CPU), with the link's kind and rate: from the topology's bandwidth
//! matrices between I/O objects (hwloc's `NVLinkBandwidth`,
//! `XGMIBandwidth`, which a discovery or annotation component reports as
//! a distances record) or added by another source
//! ([`TopoGraph::add_interconnect`]).
//!
//! Queries: hop distances over the tree edges ([`TopoGraph::hops`]),
//! shortest paths over the tree edges ([`TopoGraph::path`]) or over every
//! edge, weighted ([`TopoGraph::weighted_path`]), the N nearest objects of
//! some types by hwloc's locality rules ([`TopoGraph::nearest`]).  Exports
//! ([`export`]) write DOT, GraphML and JSON of the whole graph or of a view
//! filtered by [`TypeSet`], with the vertices' properties.

use std::collections::HashMap;
use std::fmt;

use petgraph::graph::{DiGraph, UnGraph};
use petgraph::visit::EdgeRef;
use petgraph::Direction;
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
    /// A direct link between devices (NVLink, xGMI, ...), with its rate.
    Interconnect,
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
            EdgeKind::Interconnect => "interconnect",
        }
    }

    /// Whether the edge is one of the tree's (parent to child).
    pub fn is_tree(self) -> bool {
        !matches!(self, EdgeKind::NumaDistance | EdgeKind::Interconnect)
    }
}

impl fmt::Display for EdgeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An edge: its type and, for `numa-distance` edges, the distance; for
/// `interconnect` edges, the rate (hwloc's unit for bandwidth matrices,
/// MB/s) and the link's kind (`NVLink`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    pub kind: EdgeKind,
    pub weight: Option<u64>,
    pub link: Option<String>,
}

impl Edge {
    fn tree(kind: EdgeKind) -> Self {
        Edge {
            kind,
            weight: None,
            link: None,
        }
    }
}

/// A dynamic property a vertex holds (a reading: temperature, power...).
#[derive(Clone, Debug, PartialEq)]
pub struct VertexProperty {
    pub name: String,
    pub value: f64,
    /// SI unit symbol.
    pub unit: String,
}

/// A stable id by which another source names an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VertexKey {
    /// The global persistent index.
    GpIndex(u64),
    /// `dddd:bb:dd.f` (or `bb:dd.f` in domain 0), of a PCI device.
    PciBusId(String),
    /// An OS device's name (`eth0`, `nvml0`, `mlx5_0`).
    OsDevice(String),
    /// The value of a `*GUID` or `*UUID` info (`NodeGUID`, `NVIDIAUUID`).
    Guid(String),
}

impl VertexKey {
    /// Reads `pci=BUSID`, `os=NAME`, `guid=ID` or `gp=N`.
    pub fn parse(s: &str) -> Option<Self> {
        let (k, v) = s.split_once('=')?;
        Some(match k {
            "pci" => VertexKey::PciBusId(v.into()),
            "os" => VertexKey::OsDevice(v.into()),
            "guid" => VertexKey::Guid(v.into()),
            "gp" => VertexKey::GpIndex(v.parse().ok()?),
            _ => return None,
        })
    }
}

/// The properties of an object, as a vertex holds them.
#[derive(Clone, Debug, PartialEq)]
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
    /// Dynamic properties merged in ([`TopoGraph::add_properties`]).
    pub properties: Vec<VertexProperty>,
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
    /// Every edge, undirected, with its cost for [`TopoGraph::weighted_path`].
    weighted: UnGraph<(), f64>,
    by_obj: HashMap<ObjId, NodeIndex>,
    by_gp: HashMap<u64, NodeIndex>,
    by_busid: HashMap<String, NodeIndex>,
    by_osdev: HashMap<String, NodeIndex>,
    by_guid: HashMap<String, NodeIndex>,
    /// Each NUMA node's distance to itself in the NUMA latency matrix.
    numa_diagonal: HashMap<NodeIndex, u64>,
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
        properties: Vec::new(),
    }
}

/// Whether an info names a GUID or UUID (`NodeGUID`, `SysImageGUID`,
/// `NVIDIAUUID`, `AMDUUID`, `LevelZeroUUID`).
fn is_guid_info(name: &str) -> bool {
    name.ends_with("GUID") || name.ends_with("UUID")
}

/// A GUID as matched: lower case, without `:`, `-` or spaces
/// (`0x0002:c903:0042:76b1` and `0002c903004276b1` are one GUID).
fn guid_form(s: &str) -> String {
    let s = s.trim().to_ascii_lowercase();
    let s = s.strip_prefix("0x").unwrap_or(&s);
    s.chars()
        .filter(|c| !matches!(c, ':' | '-' | ' '))
        .collect()
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
        let mut by_guid = HashMap::new();
        for &id in &order {
            let v = vertex(topo, id);
            let gp = v.gp_index;
            let busid = v
                .pci_busid
                .clone()
                .filter(|_| v.obj_type == ObjType::PCIDevice);
            let osdev = v.osdev_name.clone();
            let guids: Vec<String> = v
                .infos
                .iter()
                .filter(|(k, val)| is_guid_info(k) && !val.trim().is_empty())
                .map(|(_, val)| guid_form(val))
                .collect();
            let n = graph.add_node(v);
            for g in guids {
                by_guid.entry(g).or_insert(n);
            }
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
                    graph.add_edge(from, to, Edge::tree(kind));
                    tree.add_edge(from, to, 1);
                }
            }
        }
        let mut numa_diagonal = HashMap::new();
        if let Some(d) = numa_latency(topo) {
            let n = d.nbobjs();
            for i in 0..n {
                if let (Some(&a), Some(v)) = (by_obj.get(&d.objs[i]), d.value(i, i)) {
                    numa_diagonal.insert(a, v);
                }
            }
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
                            link: None,
                        },
                    );
                }
            }
        }
        let mut g = TopoGraph {
            graph,
            tree,
            weighted: UnGraph::default(),
            by_obj,
            by_gp,
            by_busid,
            by_osdev,
            by_guid,
            numa_diagonal,
        };
        for d in interconnect_matrices(topo) {
            let link = link_kind(d);
            let n = d.nbobjs();
            for i in 0..n {
                for j in 0..n {
                    let (Some(a), Some(b)) = (g.by_obj(d.objs[i]), g.by_obj(d.objs[j])) else {
                        continue;
                    };
                    let vij = d.value(i, j).unwrap_or(0);
                    // 0 is no link; one edge per pair when symmetric.
                    if i == j || vij == 0 || (i > j && Some(vij) == d.value(j, i)) {
                        continue;
                    }
                    g.graph.add_edge(
                        a,
                        b,
                        Edge {
                            kind: EdgeKind::Interconnect,
                            weight: Some(vij),
                            link: Some(link.clone()),
                        },
                    );
                }
            }
        }
        g.reweigh();
        g
    }

    /// Rebuilds the costs [`TopoGraph::weighted_path`] uses: 1 per tree
    /// edge and per interconnect (one hop over a direct link); a NUMA
    /// distance edge costs its distance over the smaller of its ends'
    /// local distances (hwloc's matrices put 10 on the diagonal, so 21 is
    /// 2.1 hops: going through the machine's interconnect is dearer than
    /// staying local).
    fn reweigh(&mut self) {
        let mut w = UnGraph::with_capacity(self.graph.node_count(), self.graph.edge_count());
        for _ in self.graph.node_indices() {
            w.add_node(());
        }
        let local = self.local_numa_distances();
        for e in self.graph.edge_references() {
            let cost = match e.weight().kind {
                EdgeKind::NumaDistance => {
                    let base = [e.source(), e.target()]
                        .iter()
                        .filter_map(|n| local.get(n).copied())
                        .filter(|&v| v > 0)
                        .min()
                        .unwrap_or(10);
                    e.weight().weight.map_or(1.0, |v| v as f64 / base as f64)
                }
                _ => 1.0,
            };
            w.add_edge(e.source(), e.target(), cost);
        }
        self.weighted = w;
    }

    /// The distance of each NUMA node to itself, from the matrix the
    /// `numa-distance` edges come from.
    fn local_numa_distances(&self) -> &HashMap<NodeIndex, u64> {
        &self.numa_diagonal
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

    /// The shortest path over every edge, weighted as
    /// [`TopoGraph::reweigh`] says (a direct GPU link is one hop where the
    /// PCI tree is many): its cost and its vertices, `from` and `to`
    /// included.
    pub fn weighted_path(&self, from: NodeIndex, to: NodeIndex) -> Option<(f64, Vec<NodeIndex>)> {
        petgraph::algo::astar(&self.weighted, from, |n| n == to, |e| *e.weight(), |_| 0.0)
    }

    /// The parent of a vertex (the source of its tree edge in).
    pub fn parent(&self, n: NodeIndex) -> Option<NodeIndex> {
        self.graph
            .edges_directed(n, Direction::Incoming)
            .find(|e| e.weight().kind.is_tree())
            .map(|e| e.source())
    }

    /// The `n` objects of the types of `types` nearest to `from` (`from`
    /// excluded), by hwloc's locality rules: objects below `from` first,
    /// then those that share its parent, then its grandparent..., so that
    /// the PUs nearest a NIC or GPU are those of its locality (its
    /// nearest ancestor with PUs, whose NUMA node is its local one) before
    /// any other; among objects first shared at one ancestor, hwloc's
    /// order: by type (depth), then logical index.  `hops` is the tree
    /// distance.
    pub fn nearest(&self, from: NodeIndex, types: &TypeSet, n: usize) -> Vec<Reached> {
        let dist = petgraph::algo::dijkstra(&self.tree, from, None, |e| *e.weight());
        let mut seen = vec![false; self.graph.node_count()];
        let mut out = Vec::new();
        let mut below = Some(from);
        let mut done: Option<NodeIndex> = None;
        while let Some(anc) = below {
            // The ancestor's subtree, without the part already walked.
            let mut level = Vec::new();
            let mut stack = vec![anc];
            while let Some(m) = stack.pop() {
                if Some(m) == done || seen[m.index()] {
                    continue;
                }
                seen[m.index()] = true;
                if m != from && types.contains(self.graph[m].obj_type) {
                    level.push(Reached {
                        node: m,
                        hops: dist.get(&m).copied().unwrap_or(u32::MAX),
                    });
                }
                stack.extend(
                    self.graph
                        .edges_directed(m, Direction::Outgoing)
                        .filter(|e| e.weight().kind.is_tree())
                        .map(|e| e.target()),
                );
            }
            level.sort_by_key(|r| {
                let v = &self.graph[r.node];
                (v.obj_type, v.logical_index, r.node)
            });
            out.extend(level);
            if out.len() >= n {
                break;
            }
            done = Some(anc);
            below = self.parent(anc);
        }
        out.truncate(n);
        out
    }

    /// The vertex another source names by a stable id.
    pub fn find(&self, key: &VertexKey) -> Option<NodeIndex> {
        match key {
            VertexKey::GpIndex(gp) => self.by_gp_index(*gp),
            VertexKey::PciBusId(b) => self.by_pci_busid(b),
            VertexKey::OsDevice(d) => self.by_osdev_name(d),
            VertexKey::Guid(g) => self.by_guid(g),
        }
    }

    /// The object with a `*GUID` or `*UUID` info of this value (case,
    /// `0x`, `:` and `-` do not matter).
    pub fn by_guid(&self, guid: &str) -> Option<NodeIndex> {
        self.by_guid.get(&guid_form(guid)).copied()
    }

    /// Merges dynamic properties another source gives by stable ids onto
    /// their vertices; returns the keys that name no vertex.
    pub fn add_properties(
        &mut self,
        props: impl IntoIterator<Item = (VertexKey, VertexProperty)>,
    ) -> Vec<VertexKey> {
        let mut unmatched = Vec::new();
        for (k, p) in props {
            match self.find(&k) {
                Some(n) => self.graph[n].properties.push(p),
                None => unmatched.push(k),
            }
        }
        unmatched
    }

    /// Adds a direct link between two devices another source reports (a
    /// GPU-to-GPU link of some kind and rate, in MB/s).
    pub fn add_interconnect(
        &mut self,
        a: &VertexKey,
        b: &VertexKey,
        link: &str,
        rate: Option<u64>,
    ) -> Result<(), String> {
        let na = self
            .find(a)
            .ok_or_else(|| format!("{a:?} names no object"))?;
        let nb = self
            .find(b)
            .ok_or_else(|| format!("{b:?} names no object"))?;
        if na == nb {
            return Err(format!("a link from {a:?} to itself"));
        }
        self.graph.add_edge(
            na,
            nb,
            Edge {
                kind: EdgeKind::Interconnect,
                weight: rate,
                link: Some(link.to_string()),
            },
        );
        self.reweigh();
        Ok(())
    }
}

/// The bandwidth matrices that describe links between devices: those
/// with an I/O object (hwloc's `NVLinkBandwidth` between GPUs and CPUs,
/// `XGMIBandwidth` between AMD GPUs).
fn interconnect_matrices(topo: &Topology) -> Vec<&wloc_core::distances::Distances> {
    topo.distances
        .iter()
        .filter(|d| d.kind & wloc_core::distances::kind::MEANS_BANDWIDTH != 0)
        .filter(|d| {
            d.objs.iter().any(|&id| {
                topo.get(id)
                    .is_some_and(|o| matches!(o.obj_type, ObjType::OSDevice | ObjType::PCIDevice))
            })
        })
        .collect()
}

/// The link kind a matrix's name gives: `NVLinkBandwidth` -> `NVLink`.
fn link_kind(d: &wloc_core::distances::Distances) -> String {
    match d.name.as_deref() {
        Some(n) if n.len() > "Bandwidth".len() && n.ends_with("Bandwidth") => {
            n[..n.len() - "Bandwidth".len()].to_string()
        }
        Some(n) if !n.is_empty() => n.to_string(),
        _ => "link".to_string(),
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
