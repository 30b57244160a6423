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
//! ([`TopoGraph::add_interconnect`]), and `fabric-link` between the
//! machine's network adapters and the nodes of the fabric around it
//! (switches, other machines' adapters, routers: vertices of their own,
//! [`TopoGraph::join_fabric`] from a fabric reader's subnets, or one by
//! one with [`TopoGraph::add_fabric_node`] and
//! [`TopoGraph::add_fabric_link`]).
//!
//! Queries: hop distances over the tree edges ([`TopoGraph::hops`]),
//! shortest paths over the tree edges ([`TopoGraph::path`]) or over every
//! edge, weighted ([`TopoGraph::weighted_path`]), the N nearest objects of
//! some types by hwloc's locality rules ([`TopoGraph::nearest`]).  Exports
//! ([`export`]) write DOT, GraphML and JSON of the whole graph or of a view
//! filtered by [`TypeSet`], with the vertices' properties.

use std::collections::{BTreeSet, HashMap};
use std::fmt;

use petgraph::Direction;
use petgraph::graph::{DiGraph, UnGraph};
use petgraph::visit::EdgeRef;
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
    /// A network cable (or the parallel cables) between an adapter of the
    /// machine, a switch, another machine's adapter or a router, with its
    /// data rate.
    FabricLink,
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
            EdgeKind::FabricLink => "fabric-link",
        }
    }

    /// Whether the edge is one of the tree's (parent to child).
    pub fn is_tree(self) -> bool {
        !matches!(
            self,
            EdgeKind::NumaDistance | EdgeKind::Interconnect | EdgeKind::FabricLink
        )
    }

    /// Whether the edge's weight is a rate (MB/s) rather than a distance.
    pub fn weight_is_rate(self) -> bool {
        matches!(self, EdgeKind::Interconnect | EdgeKind::FabricLink)
    }
}

impl fmt::Display for EdgeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An edge: its type and, for `numa-distance` edges, the distance; for
/// `interconnect` edges, the rate (hwloc's unit for bandwidth matrices,
/// MB/s) and the link's kind (`NVLink`); for `fabric-link` edges, the
/// data rate of its cables together, also in MB/s, and their kind
/// (`InfiniBand`, `InfiniBand x2` for two parallel cables).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The edge's type.
    pub kind: EdgeKind,
    /// The distance or rate, for the edge types that carry one.
    pub weight: Option<u64>,
    /// The link's kind, for interconnect and fabric-link edges.
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
    /// What is measured (`temperature`, `power`...).
    pub name: String,
    /// The reading, in `unit`.
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

/// A node of the network fabric around the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FabricKind {
    /// A switch of the fabric.
    Switch,
    /// Another machine's (or a storage server's) network adapter.
    Adapter,
    /// A router between subnets.
    Router,
}

impl FabricKind {
    /// The name exports use as the vertex's type.
    pub fn name(self) -> &'static str {
        match self {
            FabricKind::Switch => "Switch",
            FabricKind::Adapter => "Adapter",
            FabricKind::Router => "Router",
        }
    }
}

/// What a vertex is: an object of the topology, or a node of the fabric
/// around the machine.  Objects sort first, by type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VertexType {
    /// An object of the topology, of this type.
    Object(ObjType),
    /// A node of the fabric, of this kind.
    Fabric(FabricKind),
}

impl fmt::Display for VertexType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VertexType::Object(t) => t.fmt(f),
            VertexType::Fabric(k) => f.write_str(k.name()),
        }
    }
}

/// A fabric node to add to the graph ([`TopoGraph::add_fabric_node`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FabricNode {
    /// Switch, adapter or router.
    pub kind: FabricKind,
    /// Its node GUID: the vertex's identity.
    pub guid: u64,
    /// Its node description (`switch-1 ...`, `node02 HCA-1`).
    pub description: String,
    /// The subnet it is on (`fe80:0000:0000:0000`).
    pub subnet: String,
    /// For an adapter, the machine it belongs to, when known.
    pub host: Option<String>,
    /// Its ports' numbers and GUIDs where they differ from the node's
    /// (an adapter's ports): the vertex is findable by them too.
    pub port_guids: Vec<(u32, u64)>,
}

/// The properties of an object or fabric node, as a vertex holds them.
#[derive(Clone, Debug, PartialEq)]
pub struct Vertex {
    /// The object in the topology it was built from (none for a fabric node).
    pub obj: Option<ObjId>,
    /// The global persistent index: an object's stable identity (none for
    /// a fabric node, whose identity is its GUID).
    pub gp_index: Option<u64>,
    /// The object's type, or the fabric node's kind.
    pub vertex_type: VertexType,
    /// The object's OS index, when it has one.
    pub os_index: Option<u32>,
    /// The object's logical index within its type (for a fabric node,
    /// its rank among the fabric nodes of its kind).
    pub logical_index: u32,
    /// The object's name (a fabric node's description).
    pub name: Option<String>,
    /// The object's subtype.
    pub subtype: Option<String>,
    /// In hwloc's form (`0x0000000f`).
    pub cpuset: Option<String>,
    /// In hwloc's form, like the cpuset.
    pub nodeset: Option<String>,
    /// The object's infos (name, value), in order.
    pub infos: Vec<(String, String)>,
    /// `dddd:bb:dd.f`, for PCI devices and PCI bridges.
    pub pci_busid: Option<String>,
    /// The OS device's name (`eth0`, `mlx5_0`), for OS devices.
    pub osdev_name: Option<String>,
    /// A fabric node's GUID.
    pub fabric_guid: Option<u64>,
    /// Dynamic properties merged in ([`TopoGraph::add_properties`]).
    pub properties: Vec<VertexProperty>,
}

impl Vertex {
    /// The vertex's identifier in exports: `obj<gp_index>` for an object,
    /// `fabric<GUID in hex>` for a fabric node.
    pub fn id(&self) -> String {
        match (self.gp_index, self.fabric_guid) {
            (Some(gp), _) => format!("obj{gp}"),
            (None, Some(g)) => format!("fabric{g:016x}"),
            (None, None) => format!("vertex{}", self.logical_index),
        }
    }

    /// The object's type, for an object of the topology.
    pub fn obj_type(&self) -> Option<ObjType> {
        match self.vertex_type {
            VertexType::Object(t) => Some(t),
            VertexType::Fabric(_) => None,
        }
    }

    /// A short name that is also a location the command line reads:
    /// `os=eth0`, `pci=0000:02:00.0`, `guid=0x...` for a fabric node, else
    /// `Type:logical index`.
    pub fn label(&self) -> String {
        if let Some(n) = &self.osdev_name {
            return format!("os={n}");
        }
        if let Some(g) = self.fabric_guid {
            return format!("guid={g:#018x}");
        }
        if self.obj_type() == Some(ObjType::PCIDevice)
            && let Some(b) = &self.pci_busid
        {
            return format!("pci={b}");
        }
        format!("{}:{}", self.vertex_type, self.logical_index)
    }
}

/// A topology seen as a graph.
pub struct TopoGraph {
    graph: DiGraph<Vertex, Edge>,
    /// The tree edges and fabric cables, undirected, weight 1; same node indexes.
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
    /// Fabric nodes added so far, by kind: their logical indexes.
    fabric_count: HashMap<FabricKind, u32>,
}

/// An object reached by a query, with its distance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reached {
    /// The vertex reached.
    pub node: NodeIndex,
    /// Edges followed from the start to reach it.
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
        obj: Some(id),
        gp_index: Some(o.gp_index),
        vertex_type: VertexType::Object(o.obj_type),
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
        fabric_guid: None,
        properties: Vec::new(),
    }
}

/// Whether an info names a GUID or UUID (`NodeGUID`, `SysImageGUID`,
/// `NVIDIAUUID`, `AMDUUID`, `LevelZeroUUID`).
fn is_guid_info(name: &str) -> bool {
    name.ends_with("GUID") || name.ends_with("UUID")
}

/// A GUID as matched: lower case, without `0x`, `:`, `-`, spaces or
/// leading zeros (`0x0002:c903:0042:76b1` and `0002c903004276b1` are one
/// GUID).
fn guid_form(s: &str) -> String {
    let s = s.trim().to_ascii_lowercase();
    let s = s.strip_prefix("0x").unwrap_or(&s);
    let s: String = s
        .chars()
        .filter(|c| !matches!(c, ':' | '-' | ' '))
        .collect();
    // Leading zeros do not matter either: `0x10` is the GUID 0x0000000000000010.
    match s.trim_start_matches('0') {
        "" if !s.is_empty() => "0".to_string(),
        t => t.to_string(),
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
        let mut by_guid = HashMap::new();
        for &id in &order {
            let v = vertex(topo, id);
            let gp = v.gp_index;
            let busid = v
                .pci_busid
                .clone()
                .filter(|_| v.obj_type() == Some(ObjType::PCIDevice));
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
            if let Some(gp) = gp {
                by_gp.insert(gp, n);
            }
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
            fabric_count: HashMap::new(),
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

    /// Hop distances over the tree edges (and the fabric's cables) from
    /// `from`, nearest first (ties in depth-first order), up to `max` hops
    /// when given.
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

    /// The shortest path over the tree edges and the fabric's cables
    /// (weight 1 per edge): its length and its vertices, `from` and `to`
    /// included.
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
    /// order: by type (depth), then logical index; then fabric nodes
    /// beyond the machine by cable hops.  `hops` is the distance over the
    /// tree edges and cables.
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
                if m != from && types.contains_vertex(self.graph[m].vertex_type) {
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
                (v.vertex_type, v.logical_index, r.node)
            });
            out.extend(level);
            if out.len() >= n {
                break;
            }
            done = Some(anc);
            below = self.parent(anc);
        }
        if out.len() < n {
            // Beyond the machine: fabric nodes by cable hops, then type
            // and logical index.
            let mut beyond: Vec<Reached> = dist
                .iter()
                .filter(|(m, _)| !seen[m.index()])
                .filter(|(m, _)| types.contains_vertex(self.graph[**m].vertex_type))
                .map(|(m, d)| Reached { node: *m, hops: *d })
                .collect();
            beyond.sort_by_key(|r| {
                let v = &self.graph[r.node];
                (r.hops, v.vertex_type, v.logical_index, r.node)
            });
            out.extend(beyond);
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

    /// Joins the fabric around the machine, from subnets as a fabric
    /// reader returns them (`topo` is the topology the graph was built
    /// from).  On the subnets the machine's adapters are on (OpenFabrics
    /// OS devices, found by port and node GUIDs as
    /// [`wloc_fabric::Fabric`] joins hosts), every node becomes a vertex
    /// (the machine's own adapters are their OS devices' vertices) and
    /// every pair of cabled nodes a `fabric-link` edge.  Fails when no
    /// adapter of the topology is on the fabric.
    pub fn join_fabric(
        &mut self,
        topo: &Topology,
        subnets: Vec<wloc_ib::Subnet>,
    ) -> Result<(), String> {
        let names: Vec<String> = subnets.iter().map(|s| s.name.clone()).collect();
        let me = topo
            .obj(topo.root())
            .info("HostName")
            .unwrap_or("this machine")
            .to_string();
        let f = wloc_fabric::Fabric::build(subnets, vec![(me.clone(), topo.clone())])?;
        let nics = &f.hosts[f.host(&me)?].nics;
        let on: BTreeSet<usize> = nics.iter().map(|n| n.subnet).collect();
        if on.is_empty() {
            return Err(format!(
                "no adapter of this topology is on the fabric ({}): no OpenFabrics OS device has a NodeGUID or port GUID of its adapters",
                names.join(", ")
            ));
        }
        for si in on {
            let sg = &f.subnets[si];
            let mut vertex = HashMap::new();
            for n in sg.graph.node_indices() {
                let node = &sg.graph[n];
                let own = nics
                    .iter()
                    .find(|x| x.subnet == si && x.node == n)
                    .and_then(|x| x.osdev)
                    .and_then(|o| self.by_obj(o));
                let v = match own {
                    Some(v) => v,
                    None => self.add_fabric_node(FabricNode {
                        kind: match node.kind {
                            wloc_ib::NodeKind::Switch => FabricKind::Switch,
                            wloc_ib::NodeKind::Ca => FabricKind::Adapter,
                            wloc_ib::NodeKind::Router => FabricKind::Router,
                        },
                        guid: node.guid,
                        description: node.description.clone(),
                        subnet: sg.name.clone(),
                        host: node.host.map(|h| f.hosts[h].name.clone()),
                        port_guids: node.ports.iter().map(|p| (p.number, p.guid)).collect(),
                    })?,
                };
                vertex.insert(n, v);
            }
            for e in sg.graph.edge_indices() {
                let Some((a, b)) = sg.graph.edge_endpoints(e) else {
                    continue;
                };
                let cables = &sg.graph[e];
                // Data rate in MB/s, as the interconnects' bandwidth matrices.
                let gbps = cables.gbps();
                let rate = (gbps > 0.0).then(|| (gbps * 1000.0 / 8.0).round() as u64);
                self.add_fabric_link(vertex[&a], vertex[&b], cables.cables.len(), rate)?;
            }
        }
        Ok(())
    }

    /// Adds a node of the fabric around the machine (a switch, another
    /// machine's adapter, a router) as a vertex, findable by its GUID.
    /// Fails on a GUID the graph already has (an adapter of this machine
    /// is its OS device's vertex, not a new one).
    pub fn add_fabric_node(&mut self, node: FabricNode) -> Result<NodeIndex, String> {
        let key = guid_form(&format!("{:016x}", node.guid));
        if self.by_guid.contains_key(&key) {
            return Err(format!(
                "the fabric node {:#018x} ({}) is already a vertex",
                node.guid, node.description
            ));
        }
        let count = self.fabric_count.entry(node.kind).or_insert(0);
        let logical_index = *count;
        *count += 1;
        let mut infos = vec![
            ("NodeGUID".to_string(), format!("{:#018x}", node.guid)),
            ("Subnet".to_string(), node.subnet),
        ];
        if let Some(h) = node.host {
            infos.push(("HostName".to_string(), h));
        }
        let mut keys = vec![key];
        for (port, g) in node.port_guids.iter().filter(|(_, g)| *g != node.guid) {
            infos.push((format!("Port{port}GUID"), format!("{g:#018x}")));
            keys.push(guid_form(&format!("{g:016x}")));
        }
        let n = self.graph.add_node(Vertex {
            obj: None,
            gp_index: None,
            vertex_type: VertexType::Fabric(node.kind),
            os_index: None,
            logical_index,
            name: Some(node.description),
            subtype: None,
            cpuset: None,
            nodeset: None,
            infos,
            pci_busid: None,
            osdev_name: None,
            fabric_guid: Some(node.guid),
            properties: Vec::new(),
        });
        self.tree.add_node(());
        self.weighted.add_node(());
        for k in keys {
            self.by_guid.entry(k).or_insert(n);
        }
        Ok(n)
    }

    /// Adds the cables between two vertices of the fabric (an OS device of
    /// the machine or a fabric node on either end): `cables` parallel
    /// cables of `rate` MB/s together (data rate, as hwloc's bandwidth
    /// matrices count).  A fabric link costs one hop in
    /// [`TopoGraph::weighted_path`].
    pub fn add_fabric_link(
        &mut self,
        a: NodeIndex,
        b: NodeIndex,
        cables: usize,
        rate: Option<u64>,
    ) -> Result<(), String> {
        let nodes = self.graph.node_count();
        if a.index() >= nodes || b.index() >= nodes {
            return Err("a fabric link names a vertex the graph lacks".to_string());
        }
        if a == b {
            return Err(format!(
                "a fabric link from {} to itself",
                self.graph[a].label()
            ));
        }
        let link = if cables > 1 {
            format!("InfiniBand x{cables}")
        } else {
            "InfiniBand".to_string()
        };
        self.graph.add_edge(
            a,
            b,
            Edge {
                kind: EdgeKind::FabricLink,
                weight: rate,
                link: Some(link),
            },
        );
        // What reweigh() would give, without rebuilding for every cable.
        self.weighted.add_edge(a, b, 1.0);
        // Cables are hops as tree edges are: beyond the machine, hops and
        // paths go along them.
        self.tree.add_edge(a, b, 1);
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
