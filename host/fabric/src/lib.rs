//! `wloc-fabric`: InfiniBand fabrics joined with the topologies of the
//! machines they connect.
//!
//! A [`Fabric`] is built from parsed subnets ([`wloc_ib::Subnet`], read
//! natively or returned by a sandboxed fabric reader component) and the
//! hwloc XML topologies of the nodes.  Each subnet is a petgraph graph
//! whose vertices are switches, channel adapters and routers and whose
//! edges aggregate the parallel cables between two nodes (their count and
//! total data rate).  Channel adapters are grouped into [`Host`]s by the
//! port GUIDs and node GUIDs that the OpenFabrics OS devices of each
//! node's topology carry (`Port<N>GID<M>`, `NodeGUID`), so that a host's
//! adapter is an object of its own topology, with its NUMA node and PUs.
//!
//! Queries: [`Fabric::path`] (the forwarding tables' route, or a shortest
//! path where the subnet has none), [`Fabric::hosts_under`],
//! [`Fabric::switch_levels`], [`Fabric::near`], [`Fabric::local`] and
//! [`Fabric::check_routes`].  Exports are in [`export`].

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::Path;

use petgraph::stable_graph::{NodeIndex, StableUnGraph};
use wloc_core::object::OsDevTypes;
use wloc_core::{ObjId, ObjType, Topology, TypeFilter};
use wloc_ib::{End, NodeKind, Speed, data_gbps};

pub mod export;
pub mod slurm;

/// A port of a subnet: its node's vertex and its number.
pub type PortRef = (NodeIndex, u32);

/// A vertex: one switch, channel adapter or router of a subnet.
#[derive(Clone, Debug)]
pub struct FabricNode {
    /// Node GUID (for an adapter known only by its port, the port GUID).
    pub guid: u64,
    /// What it is.
    pub kind: NodeKind,
    /// Node description.
    pub description: String,
    /// Its ports.
    pub ports: Vec<wloc_ib::Port>,
    /// The host it belongs to (index in [`Fabric::hosts`]), for an adapter.
    pub host: Option<usize>,
}

/// One cable of an edge.
#[derive(Clone, Debug)]
pub struct Cable {
    /// Port on the edge's first node (the lower node index).
    pub port_a: u32,
    /// Port on the edge's second node.
    pub port_b: u32,
    /// Lanes, if known.
    pub width: Option<u32>,
    /// Lane speed, if known.
    pub speed: Option<Speed>,
}

impl Cable {
    /// Data rate in Gb/s (0 when unknown).
    pub fn gbps(&self) -> f64 {
        data_gbps(self.width, self.speed)
    }
}

/// An edge: the parallel cables between two nodes.
#[derive(Clone, Debug, Default)]
pub struct FabricEdge {
    /// The cables.
    pub cables: Vec<Cable>,
}

impl FabricEdge {
    /// Total data rate in Gb/s.
    pub fn gbps(&self) -> f64 {
        self.cables.iter().map(Cable::gbps).sum()
    }
}

/// One subnet as a graph.
pub struct SubnetGraph {
    /// The subnet prefix (`fe80:0000:0000:0000`).
    pub name: String,
    /// Nodes and aggregated edges.
    pub graph: StableUnGraph<FabricNode, FabricEdge>,
    /// Node GUID -> vertex.
    pub by_guid: HashMap<u64, NodeIndex>,
    /// Port GUID -> (vertex, port number).
    pub by_port_guid: HashMap<u64, (NodeIndex, u32)>,
    /// LID -> (vertex, port number); a switch's LID is its port 0.
    pub by_lid: HashMap<u32, (NodeIndex, u32)>,
    /// (vertex, port) -> the peer's (vertex, port).
    pub peer: HashMap<(NodeIndex, u32), (NodeIndex, u32)>,
    /// Forwarding tables by switch vertex: LID -> (output port, line).
    pub routes: HashMap<NodeIndex, HashMap<u32, (u32, usize)>>,
    /// Number of physical cables.
    pub cable_count: usize,
}

impl SubnetGraph {
    /// Vertices of one kind.
    pub fn of_kind(&self, k: NodeKind) -> Vec<NodeIndex> {
        let mut v: Vec<_> = self
            .graph
            .node_indices()
            .filter(|&i| self.graph[i].kind == k)
            .collect();
        v.sort_by_key(|&i| self.graph[i].guid);
        v
    }

    /// A name for a vertex in messages: its description and GUID.
    pub fn label(&self, n: NodeIndex) -> String {
        let v = &self.graph[n];
        format!("{} ({:#018x})", v.description, v.guid)
    }
}

/// The adapter of a host on a subnet, as its topology shows it.
#[derive(Clone, Debug)]
pub struct Nic {
    /// The subnet (index in [`Fabric::subnets`]).
    pub subnet: usize,
    /// The adapter's vertex.
    pub node: NodeIndex,
    /// The port number on the adapter.
    pub port: u32,
    /// The OS device of the host's topology (`mlx4_0`), if joined.
    pub osdev: Option<ObjId>,
    /// How the adapter was found to be the host's.
    pub joined_by: JoinedBy,
}

/// How an adapter was joined to its host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinedBy {
    /// A `Port<N>GID<M>` info of an OpenFabrics device holds its port GUID.
    PortGuid,
    /// The `NodeGUID` info of an OpenFabrics device is its node GUID.
    NodeGuid,
    /// Its node description names the host (the device, when found, by
    /// the description's second word or as the host's only OpenFabrics
    /// device).
    Description,
}

impl JoinedBy {
    /// `port-guid`, `node-guid` or `description`.
    pub fn name(self) -> &'static str {
        match self {
            JoinedBy::PortGuid => "port-guid",
            JoinedBy::NodeGuid => "node-guid",
            JoinedBy::Description => "description",
        }
    }
}

/// A machine: its topology (if an XML was given) and its adapters.
pub struct Host {
    /// Its name (the XML file's stem, else the first word of its
    /// adapters' node descriptions).
    pub name: String,
    /// Its topology.
    pub topology: Option<Topology>,
    /// Its adapter ports on the fabric.
    pub nics: Vec<Nic>,
}

/// A fabric: subnets and hosts.
pub struct Fabric {
    /// Subnets, by name.
    pub subnets: Vec<SubnetGraph>,
    /// Hosts, by name.
    pub hosts: Vec<Host>,
}

/// A route between two hosts.
#[derive(Clone, Debug)]
pub struct Route {
    /// The subnet (index).
    pub subnet: usize,
    /// Vertices from the source adapter to the target adapter.
    pub nodes: Vec<NodeIndex>,
    /// Output port taken at each vertex but the last.
    pub ports: Vec<u32>,
    /// Whether it comes from the forwarding tables (else a shortest path).
    pub from_tables: bool,
}

/// Counts of one subnet, as `wloc fabric summary` prints them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The subnet.
    pub subnet: String,
    /// Switches.
    pub switches: usize,
    /// Channel adapters.
    pub adapters: usize,
    /// Hosts joined to a node topology.
    pub hosts: usize,
    /// Physical cables.
    pub cables: usize,
    /// Edges (node pairs joined by one cable or more).
    pub edges: usize,
}

/// What a host's topology says of an OpenFabrics device: its object,
/// node GUID, and ports as (number, subnet prefix, port GUID).
struct OfDevice {
    obj: ObjId,
    node_guid: Option<u64>,
    ports: Vec<(u32, String, u64)>,
}

fn parse_guid_groups(s: &str) -> Option<u64> {
    let hex: String = s.chars().filter(|c| *c != ':').collect();
    if hex.len() != 16 {
        return None;
    }
    u64::from_str_radix(&hex, 16).ok()
}

fn of_devices(t: &Topology) -> Vec<OfDevice> {
    let mut out = Vec::new();
    for id in t.objs_by_type(ObjType::OSDevice) {
        let o = t.obj(id);
        let is_of = o
            .osdev_types()
            .is_some_and(|k| k.has(OsDevTypes::OPENFABRICS));
        let node_guid = o.info("NodeGUID").and_then(parse_guid_groups);
        if !is_of && node_guid.is_none() {
            continue;
        }
        let mut ports = Vec::new();
        for i in &o.infos {
            // Port<N>GID<M> = prefix (4 groups) : port GUID (4 groups).
            let Some(rest) = i.name.strip_prefix("Port") else {
                continue;
            };
            let Some((n, _)) = rest.split_once("GID") else {
                continue;
            };
            let Ok(n) = n.parse::<u32>() else { continue };
            let groups: Vec<&str> = i.value.split(':').collect();
            if groups.len() != 8 {
                continue;
            }
            let prefix = groups[..4].join(":");
            if let Some(g) = parse_guid_groups(&groups[4..].join(":"))
                && g != 0
            {
                ports.push((n, prefix, g));
            }
        }
        out.push(OfDevice {
            obj: id,
            node_guid,
            ports,
        });
    }
    out
}

/// The host name in an adapter's node description (`mirage006 HCA-1`
/// gives `mirage006`), when it has one: a first word followed by more,
/// which is not a vendor's product string.
fn host_of_description(d: &str) -> Option<String> {
    let (first, rest) = d.split_once(' ')?;
    if first.is_empty() || rest.is_empty() {
        return None;
    }
    let generic = [
        "MT",
        "Mellanox",
        "Voltaire",
        "Infiniscale",
        "ConnectX",
        "QLogic",
        "Intel",
    ];
    if generic.iter().any(|g| first.starts_with(g)) {
        return None;
    }
    Some(first.to_string())
}

/// The OpenFabrics device of a host that a node description names: the
/// description's second word (`miriel078 qib0`), else the host's only
/// OpenFabrics device.
fn device_named_by(t: &Topology, description: &str) -> Option<ObjId> {
    let devs = of_devices(t);
    let word = description.split(' ').nth(1).unwrap_or("");
    devs.iter()
        .find(|d| t.obj(d.obj).name.as_deref() == Some(word))
        .or(if devs.len() == 1 { devs.first() } else { None })
        .map(|d| d.obj)
}

/// Reads a node's hwloc XML (v1, v2 or v3), I/O objects kept.
pub fn read_topology(path: &Path) -> Result<Topology, String> {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    t.set_io_types_filter(TypeFilter::KeepAll);
    wloc_xml::import_file(path, t).map_err(|e| format!("{}: {e}", path.display()))
}

/// As [`read_topology`], from the XML document `text` already read (from
/// the file `name`, which errors name).
pub fn read_topology_str(text: &str, name: &Path) -> Result<Topology, String> {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    t.set_io_types_filter(TypeFilter::KeepAll);
    wloc_xml::import_str(text, t).map_err(|e| format!("{}: {e}", name.display()))
}

impl Fabric {
    /// Builds the fabric from parsed subnets and node topologies (name,
    /// topology).  Cables are aggregated into edges; adapters are joined
    /// to hosts by port GUID, then node GUID, then the host name of their
    /// description.  Fails on a forwarding table of a switch the subnet
    /// does not have, or an entry whose port leads nowhere.
    pub fn build(
        subnets: Vec<wloc_ib::Subnet>,
        topologies: Vec<(String, Topology)>,
    ) -> Result<Fabric, String> {
        let mut graphs = Vec::new();
        for s in subnets {
            graphs.push(build_subnet(s)?);
        }
        graphs.sort_by(|a, b| a.name.cmp(&b.name));
        let mut hosts: Vec<Host> = Vec::new();
        // (prefix, port GUID) / port GUID / node GUID -> (host, device, port).
        let mut by_port: HashMap<(String, u64), (usize, ObjId, u32)> = HashMap::new();
        let mut by_port_any: HashMap<u64, (usize, ObjId, u32)> = HashMap::new();
        let mut by_node: HashMap<u64, (usize, ObjId)> = HashMap::new();
        let mut topologies = topologies;
        topologies.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, t) in topologies {
            let h = hosts.len();
            for d in of_devices(&t) {
                if let Some(g) = d.node_guid {
                    by_node.entry(g).or_insert((h, d.obj));
                }
                for (n, prefix, g) in d.ports {
                    by_port.entry((prefix, g)).or_insert((h, d.obj, n));
                    by_port_any.entry(g).or_insert((h, d.obj, n));
                }
            }
            hosts.push(Host {
                name,
                topology: Some(t),
                nics: Vec::new(),
            });
        }
        let mut by_name: HashMap<String, usize> = hosts
            .iter()
            .enumerate()
            .map(|(i, h)| (h.name.clone(), i))
            .collect();
        for (si, g) in graphs.iter_mut().enumerate() {
            for n in g.of_kind(NodeKind::Ca) {
                let v = &g.graph[n];
                let mut found: Option<(usize, Option<ObjId>, Vec<u32>)> = None;
                let mut how = JoinedBy::PortGuid;
                for p in &v.ports {
                    let hit = by_port
                        .get(&(g.name.clone(), p.guid))
                        .or_else(|| by_port_any.get(&p.guid));
                    if let Some(&(h, obj, _)) = hit {
                        let e = found.get_or_insert((h, Some(obj), Vec::new()));
                        if e.0 == h {
                            e.2.push(p.number);
                        }
                    }
                }
                if found.is_none()
                    && let Some(&(h, obj)) = by_node.get(&v.guid)
                {
                    how = JoinedBy::NodeGuid;
                    found = Some((h, Some(obj), v.ports.iter().map(|p| p.number).collect()));
                }
                if found.is_none()
                    && let Some(name) = host_of_description(&v.description)
                {
                    how = JoinedBy::Description;
                    let h = *by_name.entry(name.clone()).or_insert_with(|| {
                        hosts.push(Host {
                            name,
                            topology: None,
                            nics: Vec::new(),
                        });
                        hosts.len() - 1
                    });
                    let dev = hosts[h]
                        .topology
                        .as_ref()
                        .and_then(|t| device_named_by(t, &v.description));
                    found = Some((h, dev, v.ports.iter().map(|p| p.number).collect()));
                }
                if let Some((h, osdev, ports)) = found {
                    g.graph[n].host = Some(h);
                    for port in ports {
                        hosts[h].nics.push(Nic {
                            subnet: si,
                            node: n,
                            port,
                            osdev,
                            joined_by: how,
                        });
                    }
                }
            }
        }
        Ok(Fabric {
            subnets: graphs,
            hosts,
        })
    }

    /// The host of a name.
    pub fn host(&self, name: &str) -> Result<usize, String> {
        self.hosts
            .iter()
            .position(|h| h.name == name)
            .ok_or_else(|| format!("no host named {name:?} on the fabric"))
    }

    /// Counts per subnet.
    pub fn summary(&self) -> Vec<Summary> {
        self.subnets
            .iter()
            .enumerate()
            .map(|(si, g)| {
                let joined: HashSet<usize> = self
                    .hosts
                    .iter()
                    .enumerate()
                    .filter(|(_, h)| h.topology.is_some() && h.nics.iter().any(|n| n.subnet == si))
                    .map(|(i, _)| i)
                    .collect();
                Summary {
                    subnet: g.name.clone(),
                    switches: g.of_kind(NodeKind::Switch).len(),
                    adapters: g.of_kind(NodeKind::Ca).len(),
                    hosts: joined.len(),
                    cables: g.cable_count,
                    edges: g.graph.edge_count(),
                }
            })
            .collect()
    }

    /// The route from host `a` to host `b`: on the first subnet where
    /// both have a port, following the forwarding tables when the subnet
    /// has them, else a shortest path.
    pub fn path(&self, a: usize, b: usize) -> Result<Route, String> {
        let (si, pa, pb) = self.shared_ports(a, b)?;
        let g = &self.subnets[si];
        if g.routes.is_empty() {
            shortest(g, si, pa.0, pb.0)
        } else {
            trace(g, si, pa, pb)
        }
    }

    /// The first subnet on which both hosts have an adapter port, and the
    /// two ports (cabled ones first).
    fn shared_ports(&self, a: usize, b: usize) -> Result<(usize, PortRef, PortRef), String> {
        let (ha, hb) = (&self.hosts[a], &self.hosts[b]);
        for (si, g) in self.subnets.iter().enumerate() {
            let cabled = |n: &&Nic| n.subnet == si && g.peer.contains_key(&(n.node, n.port));
            if let (Some(x), Some(y)) = (ha.nics.iter().find(cabled), hb.nics.iter().find(cabled)) {
                return Ok((si, (x.node, x.port), (y.node, y.port)));
            }
        }
        Err(format!(
            "{} and {} share no subnet",
            self.hosts[a].name, self.hosts[b].name
        ))
    }

    /// Checks every route of every subnet with forwarding tables: from
    /// each adapter port to each other adapter port, the tables must lead
    /// to the target without a loop.  Returns the number of routes.
    pub fn check_routes(&self) -> Result<usize, String> {
        let mut n = 0;
        for si in 0..self.subnets.len() {
            n += self.check_routes_of(si)?;
        }
        Ok(n)
    }

    /// As [`Fabric::check_routes`], for one subnet (0 routes when it has
    /// no forwarding tables).
    pub fn check_routes_of(&self, si: usize) -> Result<usize, String> {
        let g = &self.subnets[si];
        if g.routes.is_empty() {
            return Ok(0);
        }
        let mut ports = Vec::new();
        for v in g.of_kind(NodeKind::Ca) {
            for p in &g.graph[v].ports {
                if g.peer.contains_key(&(v, p.number)) && p.lid != 0 {
                    ports.push((v, p.number));
                }
            }
        }
        let mut n = 0;
        for &a in &ports {
            for &b in &ports {
                if a.0 != b.0 {
                    trace(g, si, a, b).map_err(|e| format!("subnet {}: {e}", g.name))?;
                    n += 1;
                }
            }
        }
        Ok(n)
    }

    /// Hosts whose adapters are cabled to a switch (by GUID), by name.
    pub fn hosts_under(&self, switch: u64) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        let mut found = false;
        for g in &self.subnets {
            let Some(&s) = g.by_guid.get(&switch) else {
                continue;
            };
            found = true;
            for n in g.graph.neighbors(s) {
                if let Some(h) = g.graph[n].host {
                    out.push(self.hosts[h].name.clone());
                }
            }
        }
        if !found {
            return Err(format!("no switch {switch:#018x} on the fabric"));
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// Switch levels of a fat tree, per subnet: level 1 for the switches
    /// cabled to adapters (leaves), then one more per hop away from the
    /// nearest leaf.  (switch vertex, level) pairs.
    pub fn switch_levels(&self, si: usize) -> Vec<(NodeIndex, u32)> {
        let g = &self.subnets[si];
        let mut level: HashMap<NodeIndex, u32> = HashMap::new();
        let mut q = VecDeque::new();
        for s in g.of_kind(NodeKind::Switch) {
            if g.graph
                .neighbors(s)
                .any(|n| g.graph[n].kind != NodeKind::Switch)
            {
                level.insert(s, 1);
                q.push_back(s);
            }
        }
        while let Some(s) = q.pop_front() {
            let l = level[&s];
            for n in g.graph.neighbors(s) {
                if g.graph[n].kind == NodeKind::Switch && !level.contains_key(&n) {
                    level.insert(n, l + 1);
                    q.push_back(n);
                }
            }
        }
        let mut v: Vec<_> = level.into_iter().collect();
        v.sort_by_key(|&(n, l)| (l, g.graph[n].guid));
        v
    }

    /// Hosts within `max` cable hops of a host (2 = behind the same
    /// switch), over every subnet it is on: (hops, host) sorted by hops
    /// then name.
    pub fn near(&self, h: usize, max: u32) -> Vec<(u32, usize)> {
        let mut best: BTreeMap<usize, u32> = BTreeMap::new();
        for (si, g) in self.subnets.iter().enumerate() {
            let starts: Vec<NodeIndex> = self.hosts[h]
                .nics
                .iter()
                .filter(|n| n.subnet == si)
                .map(|n| n.node)
                .collect();
            let dist = bfs(g, &starts, max);
            for (n, d) in dist {
                if let Some(o) = g.graph[n].host
                    && o != h
                {
                    let e = best.entry(o).or_insert(d);
                    *e = (*e).min(d);
                }
            }
        }
        let mut v: Vec<(u32, usize)> = best.into_iter().map(|(o, d)| (d, o)).collect();
        v.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then(self.hosts[a.1].name.cmp(&self.hosts[b.1].name))
        });
        v
    }

    /// For host `h`, the adapter port that reaches `other` (on the subnet
    /// of [`Fabric::path`]) and what is local to it in `h`'s topology:
    /// the OS device, the NUMA nodes and the PUs of its locality.
    pub fn local(&self, h: usize, other: usize) -> Result<Locality, String> {
        let (si, pa, _) = self.shared_ports(h, other)?;
        let host = &self.hosts[h];
        let nic = host
            .nics
            .iter()
            .find(|n| n.subnet == si && (n.node, n.port) == pa)
            .ok_or("internal: the port is not the host's")?;
        let t = host
            .topology
            .as_ref()
            .ok_or_else(|| format!("{} has no topology (no XML was given)", host.name))?;
        let dev = nic.osdev.ok_or_else(|| {
            format!(
                "{}'s topology has no OpenFabrics device for {}",
                host.name,
                self.subnets[si].label(nic.node)
            )
        })?;
        // The nearest ancestor with a cpuset: the device's locality.
        let mut a = t.obj(dev).parent();
        while let Some(id) = a {
            if t.obj(id).cpuset.is_some() {
                break;
            }
            a = t.obj(id).parent();
        }
        let anc = a.ok_or("the device has no ancestor with a cpuset")?;
        let o = t.obj(anc);
        // Complete sets: recorded topologies often carry a restricted
        // allowed set (the recording job's), which is not the locality.
        let cpuset = o
            .complete_cpuset
            .clone()
            .or_else(|| o.cpuset.clone())
            .unwrap_or_default();
        let nodeset = o
            .complete_nodeset
            .clone()
            .or_else(|| o.nodeset.clone())
            .unwrap_or_default();
        let numa: Vec<u32> = t
            .objs_by_type(ObjType::NUMANode)
            .into_iter()
            .filter(|&n| {
                let x = t.obj(n);
                x.complete_nodeset
                    .as_ref()
                    .or(x.nodeset.as_ref())
                    .is_some_and(|s| s.bitmap().is_included_in(nodeset.bitmap()))
            })
            .filter_map(|n| t.obj(n).os_index)
            .collect();
        Ok(Locality {
            subnet: self.subnets[si].name.clone(),
            device: t.obj(dev).name.clone().unwrap_or_default(),
            port: nic.port,
            numa,
            pus: cpuset.bitmap().to_list_string(),
        })
    }
}

/// What is local to the adapter port that reaches another host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Locality {
    /// The subnet.
    pub subnet: String,
    /// The OS device (`mlx4_0`).
    pub device: String,
    /// Its port.
    pub port: u32,
    /// OS indexes of the NUMA nodes local to it.
    pub numa: Vec<u32>,
    /// PUs local to it, as a list (`0-7,16-23`).
    pub pus: String,
}

fn bfs(g: &SubnetGraph, starts: &[NodeIndex], max: u32) -> HashMap<NodeIndex, u32> {
    let mut dist = HashMap::new();
    let mut q = VecDeque::new();
    for &s in starts {
        dist.insert(s, 0);
        q.push_back(s);
    }
    while let Some(n) = q.pop_front() {
        let d = dist[&n];
        if d >= max {
            continue;
        }
        // Only switches forward traffic: an adapter is an end.
        if d > 0 && g.graph[n].kind != NodeKind::Switch {
            continue;
        }
        for m in g.graph.neighbors(n) {
            if let std::collections::hash_map::Entry::Vacant(e) = dist.entry(m) {
                e.insert(d + 1);
                q.push_back(m);
            }
        }
    }
    dist
}

fn shortest(g: &SubnetGraph, si: usize, a: NodeIndex, b: NodeIndex) -> Result<Route, String> {
    let mut prev: HashMap<NodeIndex, NodeIndex> = HashMap::new();
    let mut seen = HashSet::from([a]);
    let mut q = VecDeque::from([a]);
    while let Some(n) = q.pop_front() {
        if n == b {
            break;
        }
        if n != a && g.graph[n].kind != NodeKind::Switch {
            continue;
        }
        for m in g.graph.neighbors(n) {
            if seen.insert(m) {
                prev.insert(m, n);
                q.push_back(m);
            }
        }
    }
    if !seen.contains(&b) {
        return Err(format!("no path from {} to {}", g.label(a), g.label(b)));
    }
    let mut nodes = vec![b];
    while let Some(&p) = prev.get(nodes.last().unwrap_or(&a)) {
        nodes.push(p);
    }
    nodes.reverse();
    let ports = nodes
        .windows(2)
        .map(|w| {
            g.peer
                .iter()
                .filter(|(k, v)| k.0 == w[0] && v.0 == w[1])
                .map(|(k, _)| k.1)
                .min()
                .unwrap_or(0)
        })
        .collect();
    Ok(Route {
        subnet: si,
        nodes,
        ports,
        from_tables: false,
    })
}

/// Follows the forwarding tables from an adapter port to another's LID.
fn trace(
    g: &SubnetGraph,
    si: usize,
    from: (NodeIndex, u32),
    to: (NodeIndex, u32),
) -> Result<Route, String> {
    let target = g.graph[to.0]
        .ports
        .iter()
        .find(|p| p.number == to.1)
        .map(|p| p.lid)
        .filter(|&l| l != 0)
        .ok_or_else(|| format!("{} port {} has no LID", g.label(to.0), to.1))?;
    let mut nodes = vec![from.0];
    let mut ports = vec![from.1];
    let mut seen = HashSet::new();
    // The table entry that sent the packet to `cur`: (switch, line).
    let mut sent_by: Option<(NodeIndex, usize)> = None;
    let mut cur = *g
        .peer
        .get(&from)
        .ok_or_else(|| format!("{} port {} is not cabled", g.label(from.0), from.1))?;
    loop {
        nodes.push(cur.0);
        if cur.0 == to.0 {
            return Ok(Route {
                subnet: si,
                nodes,
                ports,
                from_tables: true,
            });
        }
        if g.graph[cur.0].kind != NodeKind::Switch {
            return Err(format!(
                "the route to LID {target} ends at {}, not at {}",
                g.label(cur.0),
                g.label(to.0)
            ));
        }
        if !seen.insert(cur.0) {
            let by = sent_by.map_or(String::new(), |(sw, line)| {
                let lid = g.graph[sw].ports.first().map_or(0, |p| p.lid);
                format!(" (forwarding table of the switch of LID {lid}, line {line})")
            });
            return Err(format!(
                "the route to LID {target} loops: it comes back to switch {}{by}",
                g.label(cur.0)
            ));
        }
        let Some(table) = g.routes.get(&cur.0) else {
            // No table for this switch (none was given, or it was
            // damaged): the rest of the way is a shortest path.
            let rest = shortest(g, si, cur.0, to.0)?;
            ports.extend(rest.ports);
            nodes.extend(rest.nodes.into_iter().skip(1));
            return Ok(Route {
                subnet: si,
                nodes,
                ports,
                from_tables: false,
            });
        };
        let &(out, line) = table
            .get(&target)
            .ok_or_else(|| format!("switch {} has no route to LID {target}", g.label(cur.0)))?;
        ports.push(out);
        sent_by = Some((cur.0, line));
        cur = *g.peer.get(&(cur.0, out)).ok_or_else(|| {
            format!(
                "forwarding table of switch {} line {line}: LID {target} leaves through port {out}, which is not cabled",
                g.label(cur.0)
            )
        })?;
    }
}

fn build_subnet(s: wloc_ib::Subnet) -> Result<SubnetGraph, String> {
    let mut graph: StableUnGraph<FabricNode, FabricEdge> = StableUnGraph::default();
    let mut by_guid = HashMap::new();
    let mut by_port_guid = HashMap::new();
    let mut by_lid = HashMap::new();
    for n in s.nodes {
        let kind = n.kind;
        let guid = n.guid;
        let idx = graph.add_node(FabricNode {
            guid: n.guid,
            kind: n.kind,
            description: n.description,
            ports: n.ports,
            host: None,
        });
        by_guid.insert(guid, idx);
        for p in &graph[idx].ports {
            by_port_guid.entry(p.guid).or_insert((idx, p.number));
            if p.lid != 0 {
                let port = if kind == NodeKind::Switch {
                    0
                } else {
                    p.number
                };
                by_lid.entry(p.lid).or_insert((idx, port));
            }
        }
    }
    let mut peer = HashMap::new();
    let cable_count = s.links.len();
    for l in &s.links {
        let end = |e: End| {
            by_guid.get(&e.node).copied().ok_or_else(|| {
                format!(
                    "subnet {}: a cable ends at unknown node {:#018x}",
                    s.name, e.node
                )
            })
        };
        let (a, b) = (end(l.a)?, end(l.b)?);
        peer.insert((a, l.a.port), (b, l.b.port));
        peer.insert((b, l.b.port), (a, l.a.port));
        let (lo, hi, pl, ph) = if a.index() <= b.index() {
            (a, b, l.a.port, l.b.port)
        } else {
            (b, a, l.b.port, l.a.port)
        };
        let cable = Cable {
            port_a: pl,
            port_b: ph,
            width: l.width,
            speed: l.speed,
        };
        match graph.find_edge(lo, hi) {
            Some(e) => graph[e].cables.push(cable),
            None => {
                graph.add_edge(
                    lo,
                    hi,
                    FabricEdge {
                        cables: vec![cable],
                    },
                );
            }
        }
    }
    let mut routes = HashMap::new();
    for t in s.routes {
        let sw = by_guid
            .get(&t.switch)
            .copied()
            .filter(|&i| graph[i].kind == NodeKind::Switch)
            .ok_or_else(|| {
                format!(
                    "subnet {}: forwarding table of switch {:#018x} (LID {}), which the subnet does not have",
                    s.name, t.switch, t.lid
                )
            })?;
        let mut m = HashMap::new();
        for e in t.entries {
            m.insert(e.lid, (e.port, e.line));
        }
        routes.insert(sw, m);
    }
    // Every edge's cables in port order, for stable exports.
    let edges: Vec<_> = graph.edge_indices().collect();
    for e in edges {
        graph[e].cables.sort_by_key(|c| (c.port_a, c.port_b));
    }
    Ok(SubnetGraph {
        name: s.name,
        graph,
        by_guid,
        by_port_guid,
        by_lid,
        peer,
        routes,
        cable_count,
    })
}

#[cfg(test)]
mod tests;
