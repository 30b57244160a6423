//! Fabric readers: components of the `fabric-reader` world that read the
//! files the admin names (ibnetdiscover and ibroute output, or any other
//! fabric description) and return subnets.
//!
//! Two versions load through the same path ([`crate::runtime`], one
//! enforcement point): `wloc:fabric@0.2.0` (ports, GUIDs, LIDs, widths,
//! speeds, forwarding tables) and the first `fabric-reader` world of
//! `wloc:backend@0.1.0` (nodes and links with a rate), whose snapshots
//! are converted.  Everything a reader returns is checked here before the
//! host uses it: counts, lengths, characters, ranges, and that every cable
//! joins ports of nodes the subnet has.

use std::collections::{HashMap, HashSet};

use wloc_ib::{End, Link, Node, NodeKind, Port, RouteEntry, RouteTable, Speed, Subnet};
use wloc_trust::grant::Admission;
use wloc_trust::{ComponentError, ErrorKind};

use crate::bindings::fabric::reader as v2;
use crate::bindings::fabric_v1::exports::fabric as v1;
use crate::builtin::Builtin;
use crate::cache;
use crate::error::{RecordError, invalid};
use crate::options::RunOptions;
use crate::runtime::{Loaded, Runtime};
use crate::world::{FabricV1World, FabricWorld};

/// Most subnets in one answer.
pub const MAX_SUBNETS: usize = 64;
/// Most nodes in one subnet.
pub const MAX_NODES: usize = 1 << 16;
/// Most cables in one subnet.
pub const MAX_LINKS: usize = 1 << 18;
/// Most forwarding-table entries in one subnet.
pub const MAX_ROUTE_ENTRIES: usize = 1 << 24;

/// A fabric reader ready to run, of either WIT version.
pub enum LoadedFabricReader {
    /// `wloc:fabric@0.2.0`.
    V2(Loaded<FabricWorld>),
    /// `wloc:backend@0.1.0`.
    V1(Loaded<FabricV1World>),
}

impl LoadedFabricReader {
    /// Its name.
    pub fn name(&self) -> &str {
        match self {
            LoadedFabricReader::V2(c) => c.name(),
            LoadedFabricReader::V1(c) => c.name(),
        }
    }
    /// The sha256 digest of its bytes.
    pub fn digest(&self) -> &str {
        match self {
            LoadedFabricReader::V2(c) => c.digest(),
            LoadedFabricReader::V1(c) => c.digest(),
        }
    }
    /// The WIT package it speaks.
    pub fn wit(&self) -> &'static str {
        match self {
            LoadedFabricReader::V2(_) => "wloc:fabric@0.2.0",
            LoadedFabricReader::V1(_) => "wloc:backend@0.1.0",
        }
    }
}

impl Runtime {
    /// Loads a fabric reader the policy admitted: as a
    /// `wloc:fabric@0.2.0` component, else as a `wloc:backend@0.1.0` one.
    pub fn load_fabric_reader_admitted(
        &self,
        adm: &Admission,
        wasm: &[u8],
    ) -> Result<LoadedFabricReader, ComponentError> {
        let digest = cache::component_digest(wasm);
        self.load_fabric(adm, wasm, &digest, &[])
    }

    /// Loads the built-in fabric reader the policy admitted.
    pub fn load_builtin_fabric_reader(
        &self,
        adm: &Admission,
        b: &Builtin,
    ) -> Result<LoadedFabricReader, ComponentError> {
        self.load_fabric(adm, b.wasm, b.digest, b.precompiled)
    }

    fn load_fabric(
        &self,
        adm: &Admission,
        wasm: &[u8],
        digest: &str,
        precompiled: &'static [u8],
    ) -> Result<LoadedFabricReader, ComponentError> {
        match self.load_granted::<FabricWorld>(adm, wasm, digest, precompiled) {
            Ok(c) => Ok(LoadedFabricReader::V2(c)),
            Err(e2) if matches!(e2.kind, ErrorKind::Link(_)) => {
                match self.load_granted::<FabricV1World>(adm, wasm, digest, precompiled) {
                    Ok(c) => Ok(LoadedFabricReader::V1(c)),
                    Err(_) => Err(e2),
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Runs a fabric reader in a fresh store and returns its subnets,
    /// checked.  It gets only what it was granted, whatever `opts` holds.
    pub fn read_fabric(
        &self,
        c: &LoadedFabricReader,
        opts: &RunOptions,
    ) -> Result<Vec<Subnet>, ComponentError> {
        let bad = |m: RecordError| {
            ComponentError::new(c.name(), c.digest(), ErrorKind::InvalidData(m.to_string()))
        };
        match c {
            LoadedFabricReader::V2(l) => {
                let ran = self.run_world(l, opts, None)?;
                check_v2(ran.record).map_err(bad)
            }
            LoadedFabricReader::V1(l) => {
                let ran = self.run_world(l, opts, None)?;
                check_v1(ran.record).map_err(bad)
            }
        }
    }
}

fn check_text(what: &str, s: &str, max: usize) -> Result<(), RecordError> {
    if s.len() > max {
        return Err(RecordError::LongText {
            what: what.to_string(),
            len: s.len(),
            max,
        });
    }
    if s.chars().any(char::is_control) {
        return Err(invalid!("{what} holds a control character"));
    }
    Ok(())
}

fn speed(s: Option<v2::Speed>) -> Option<Speed> {
    s.map(|s| match s {
        v2::Speed::Sdr => Speed::Sdr,
        v2::Speed::Ddr => Speed::Ddr,
        v2::Speed::Qdr => Speed::Qdr,
        v2::Speed::Fdr10 => Speed::Fdr10,
        v2::Speed::Fdr => Speed::Fdr,
        v2::Speed::Edr => Speed::Edr,
        v2::Speed::Hdr => Speed::Hdr,
        v2::Speed::Ndr => Speed::Ndr,
        v2::Speed::Xdr => Speed::Xdr,
    })
}

fn width(w: Option<u32>, what: &str) -> Result<Option<u32>, RecordError> {
    match w {
        Some(w) if !wloc_ib::WIDTHS.contains(&w) => Err(invalid!(
            "{what}: width {w} is none of 1, 2, 4, 8, 12 lanes"
        )),
        w => Ok(w),
    }
}

/// Checks a `wloc:fabric@0.2.0` answer and converts it.
fn check_v2(subnets: Vec<v2::Subnet>) -> Result<Vec<Subnet>, RecordError> {
    if subnets.len() > MAX_SUBNETS {
        return Err(invalid!(
            "{} subnets (at most {MAX_SUBNETS})",
            subnets.len()
        ));
    }
    let mut names = HashSet::new();
    let mut out = Vec::new();
    for s in subnets {
        check_text("a subnet name", &s.name, 128)?;
        if s.name.is_empty() || !names.insert(s.name.clone()) {
            return Err(invalid!("subnet name {:?} is empty or repeated", s.name));
        }
        let sn = &s.name;
        if s.nodes.len() > MAX_NODES || s.links.len() > MAX_LINKS {
            return Err(invalid!(
                "subnet {sn}: {} nodes and {} cables (at most {MAX_NODES} and {MAX_LINKS})",
                s.nodes.len(),
                s.links.len()
            ));
        }
        let (nodes, ports_of) = v2_nodes(sn, s.nodes)?;
        let links = v2_links(sn, s.links, &ports_of)?;
        let routes = v2_routes(sn, s.routes)?;
        out.push(Subnet {
            name: s.name,
            nodes,
            links,
            routes,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// The port numbers of each node of a subnet, by GUID.
type PortsOf = HashMap<u64, HashSet<u32>>;

/// The nodes of the 0.2.0 subnet `sn`, checked, with the port numbers of
/// each node by GUID.
fn v2_nodes(sn: &str, v2_nodes: Vec<v2::Node>) -> Result<(Vec<Node>, PortsOf), RecordError> {
    let mut ports_of: PortsOf = HashMap::new();
    let mut nodes = Vec::with_capacity(v2_nodes.len());
    for n in v2_nodes {
        check_text(
            "a node description",
            &n.description,
            wloc_ib::MAX_DESCRIPTION,
        )?;
        if n.ports.len() > wloc_ib::MAX_PORT as usize + 1 {
            return Err(invalid!(
                "subnet {sn}: node {:#018x} has {} ports",
                n.guid,
                n.ports.len()
            ));
        }
        let set = ports_of.entry(n.guid).or_default();
        if !set.is_empty() {
            return Err(invalid!(
                "subnet {sn}: node {:#018x} is listed twice",
                n.guid
            ));
        }
        let mut ports = Vec::with_capacity(n.ports.len());
        for p in n.ports {
            let what = format!("subnet {sn}: node {:#018x} port {}", n.guid, p.number);
            if p.number > wloc_ib::MAX_PORT || p.lid > wloc_ib::MAX_LID {
                return Err(invalid!(
                    "{what}: port number or LID {} out of range",
                    p.lid
                ));
            }
            if !set.insert(p.number) {
                return Err(invalid!("{what}: listed twice"));
            }
            ports.push(Port {
                number: p.number,
                guid: p.guid,
                lid: p.lid,
                width: width(p.width, &what)?,
                speed: speed(p.speed),
            });
        }
        nodes.push(Node {
            guid: n.guid,
            kind: match n.kind {
                v2::NodeKind::Switch => NodeKind::Switch,
                v2::NodeKind::Ca => NodeKind::Ca,
                v2::NodeKind::Router => NodeKind::Router,
            },
            description: n.description,
            ports,
        });
    }
    Ok((nodes, ports_of))
}

/// The cables of the 0.2.0 subnet `sn`, checked: each joins ports the
/// subnet has (`ports_of`), at most one cable per port.
fn v2_links(
    sn: &str,
    v2_links: Vec<v2::Link>,
    ports_of: &PortsOf,
) -> Result<Vec<Link>, RecordError> {
    let mut used = HashSet::new();
    let mut links = Vec::with_capacity(v2_links.len());
    for l in v2_links {
        for e in [&l.a, &l.b] {
            if !ports_of.get(&e.node).is_some_and(|p| p.contains(&e.port)) {
                return Err(invalid!(
                    "subnet {sn}: a cable ends at port {} of {:#018x}, which the subnet does not have",
                    e.port,
                    e.node
                ));
            }
            if !used.insert((e.node, e.port)) {
                return Err(invalid!(
                    "subnet {sn}: port {} of {:#018x} has two cables",
                    e.port,
                    e.node
                ));
            }
        }
        links.push(Link {
            a: End {
                node: l.a.node,
                port: l.a.port,
            },
            b: End {
                node: l.b.node,
                port: l.b.port,
            },
            width: width(l.width, &format!("subnet {sn}: a cable"))?,
            speed: speed(l.speed),
        });
    }
    Ok(links)
}

/// The forwarding tables of the 0.2.0 subnet `sn`, checked.
fn v2_routes(sn: &str, v2_routes: Vec<v2::RouteTable>) -> Result<Vec<RouteTable>, RecordError> {
    let total: usize = v2_routes.iter().map(|t| t.entries.len()).sum();
    if total > MAX_ROUTE_ENTRIES {
        return Err(invalid!(
            "subnet {sn}: {total} forwarding entries (at most {MAX_ROUTE_ENTRIES})"
        ));
    }
    let mut routes = Vec::with_capacity(v2_routes.len());
    for t in v2_routes {
        let mut entries = Vec::with_capacity(t.entries.len());
        for e in t.entries {
            if e.lid > wloc_ib::MAX_LID || e.port > 255 {
                return Err(invalid!(
                    "subnet {sn}: forwarding table of {:#018x}: LID {} or port {} out of range",
                    t.switch,
                    e.lid,
                    e.port
                ));
            }
            entries.push(RouteEntry {
                lid: e.lid,
                port: e.port,
                dest: e.dest,
                line: e.line as usize,
            });
        }
        routes.push(RouteTable {
            switch: t.switch,
            lid: t.lid,
            entries,
        });
    }
    Ok(routes)
}

/// A 0.1.0 node id as a GUID: hexadecimal, with or without `0x` and
/// colons.
fn v1_guid(id: &str) -> Result<u64, RecordError> {
    let hex: String = id
        .trim_start_matches("0x")
        .chars()
        .filter(|c| *c != ':')
        .collect();
    if hex.is_empty() || hex.len() > 16 {
        return Err(invalid!("node id {id:?} is not a GUID"));
    }
    u64::from_str_radix(&hex, 16).map_err(|_| invalid!("node id {id:?} is not a GUID"))
}

/// The lane speed whose data rate times `width` is `gbps` (within 2%).
fn v1_speed(gbps: f64, width: u32) -> Option<Speed> {
    if width == 0 || !gbps.is_finite() || gbps <= 0.0 {
        return None;
    }
    let lane = gbps / f64::from(width);
    wloc_ib::SPEEDS
        .into_iter()
        .find(|s| (s.lane_data_gbps() - lane).abs() <= 0.02 * lane)
}

/// Converts `wloc:backend@0.1.0` snapshots: node ids are GUIDs, kinds
/// `switch`, `ca` (or `host`) and `router`; each node gets ports 1 to
/// `ports` (0 too for a switch), with the node's GUID; the lane speed of
/// a link is the one whose data rate fits `speed-gbps` and `width`.
fn check_v1(snaps: Vec<v1::Snapshot>) -> Result<Vec<Subnet>, RecordError> {
    if snaps.len() > MAX_SUBNETS {
        return Err(invalid!(
            "{} snapshots (at most {MAX_SUBNETS})",
            snaps.len()
        ));
    }
    let mut out = Vec::new();
    for s in snaps {
        check_text("a subnet name", &s.subnet, 128)?;
        if s.nodes.len() > MAX_NODES || s.links.len() > MAX_LINKS {
            return Err(invalid!("subnet {}: too many nodes or links", s.subnet));
        }
        let mut ids = HashMap::new();
        let mut nodes = Vec::new();
        for n in &s.nodes {
            check_text("a node name", &n.name, wloc_ib::MAX_DESCRIPTION)?;
            let guid = v1_guid(&n.id)?;
            let kind = match n.kind.as_str() {
                "switch" => NodeKind::Switch,
                "ca" | "host" => NodeKind::Ca,
                "router" => NodeKind::Router,
                k => {
                    return Err(invalid!(
                        "node {}: kind {k:?} is none of switch, ca, router",
                        n.id
                    ));
                }
            };
            if n.ports > wloc_ib::MAX_PORT {
                return Err(invalid!("node {}: {} ports", n.id, n.ports));
            }
            if ids.insert(n.id.clone(), guid).is_some() {
                return Err(invalid!("node {} is listed twice", n.id));
            }
            let first = u32::from(kind != NodeKind::Switch);
            nodes.push(Node {
                guid,
                kind,
                description: n.name.clone(),
                ports: (first..=n.ports)
                    .map(|number| Port {
                        number,
                        guid,
                        lid: 0,
                        width: None,
                        speed: None,
                    })
                    .collect(),
            });
        }
        let mut links = Vec::new();
        let mut used = HashSet::new();
        for l in &s.links {
            let a = *ids
                .get(&l.src)
                .ok_or_else(|| invalid!("a link from unknown node {:?}", l.src))?;
            let b = *ids
                .get(&l.dst)
                .ok_or_else(|| invalid!("a link to unknown node {:?}", l.dst))?;
            // A link listed from both ends is one cable.
            if used.contains(&(b, l.dst_port, a, l.src_port)) {
                continue;
            }
            if !used.insert((a, l.src_port, b, l.dst_port)) {
                continue;
            }
            for (g, p) in [(a, l.src_port), (b, l.dst_port)] {
                if !nodes.iter().any(|n| n.guid == g && n.port(p).is_some()) {
                    return Err(invalid!(
                        "a link ends at port {p} of {g:#018x}, which it does not have"
                    ));
                }
            }
            let w = width(Some(l.width), "a link").ok().flatten();
            let sp = w.and_then(|w| v1_speed(l.speed_gbps, w));
            for n in &mut nodes {
                for (g, p) in [(a, l.src_port), (b, l.dst_port)] {
                    if n.guid == g
                        && let Some(port) = n.ports.iter_mut().find(|x| x.number == p)
                    {
                        port.width = w;
                        port.speed = sp;
                    }
                }
            }
            links.push(Link {
                a: End {
                    node: a,
                    port: l.src_port,
                },
                b: End {
                    node: b,
                    port: l.dst_port,
                },
                width: w,
                speed: sp,
            });
        }
        out.push(Subnet {
            name: s.subnet,
            nodes,
            links,
            routes: Vec::new(),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_rates_and_guids() {
        assert_eq!(v1_speed(32.0, 4), Some(Speed::Qdr));
        assert_eq!(v1_speed(100.0, 4), Some(Speed::Edr));
        assert_eq!(v1_speed(7.0, 4), None);
        assert_eq!(v1_guid("0002:c903:004e:26b1").unwrap(), 0x0002c903004e26b1);
        assert!(v1_guid("zz").is_err());
    }

    fn node(guid: u64, ports: &[u32]) -> v2::Node {
        v2::Node {
            guid,
            kind: v2::NodeKind::Ca,
            description: "h HCA-1".into(),
            ports: ports
                .iter()
                .map(|&number| v2::Port {
                    number,
                    guid,
                    lid: 1,
                    width: Some(4),
                    speed: Some(v2::Speed::Qdr),
                })
                .collect(),
        }
    }

    fn cable(a: u64, pa: u32, b: u64, pb: u32) -> v2::Link {
        v2::Link {
            a: v2::End { node: a, port: pa },
            b: v2::End { node: b, port: pb },
            width: Some(4),
            speed: Some(v2::Speed::Qdr),
        }
    }

    fn subnet(nodes: Vec<v2::Node>, links: Vec<v2::Link>) -> Vec<v2::Subnet> {
        vec![v2::Subnet {
            name: "s".into(),
            nodes,
            links,
            routes: Vec::new(),
        }]
    }

    #[test]
    fn v2_answers_are_checked() {
        let good = check_v2(subnet(
            vec![node(1, &[1]), node(2, &[1])],
            vec![cable(1, 1, 2, 1)],
        ))
        .unwrap();
        assert_eq!(good[0].links.len(), 1);
        let e = check_v2(subnet(
            vec![node(1, &[1]), node(2, &[1])],
            vec![cable(1, 1, 3, 1)],
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("does not have"), "{e}");
        let e = check_v2(subnet(
            vec![node(1, &[1]), node(2, &[1, 2])],
            vec![cable(1, 1, 2, 1), cable(2, 1, 1, 1)],
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("two cables"), "{e}");
        let e = check_v2(subnet(vec![node(1, &[1]), node(1, &[2])], vec![]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("listed twice"), "{e}");
        let mut n = node(1, &[1]);
        n.ports[0].width = Some(3);
        assert!(
            check_v2(subnet(vec![n], vec![]))
                .unwrap_err()
                .to_string()
                .contains("width 3")
        );
        let mut n = node(1, &[1]);
        n.description = "a\u{1b}[2J".into();
        assert!(
            check_v2(subnet(vec![n], vec![]))
                .unwrap_err()
                .to_string()
                .contains("control")
        );
        let mut n = node(1, &[1]);
        n.ports[0].number = 300;
        assert!(
            check_v2(subnet(vec![n], vec![]))
                .unwrap_err()
                .to_string()
                .contains("out of range")
        );
    }
}
