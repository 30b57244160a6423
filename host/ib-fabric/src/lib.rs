//! `wloc-ib`: parsers of InfiniBand discovery output, for wloc's fabric
//! readers.
//!
//! Three text formats, each parsed into the same [`Subnet`] model:
//! * the *ports report* of `ibnetdiscover -p` ([`parse_ports_report`]):
//!   one line per port (type, LID, port number, port GUID, width, speed,
//!   then the peer port if any), and `DR path` lines that carry node
//!   GUIDs;
//! * the default *topology file* of `ibnetdiscover`
//!   ([`parse_topology_file`]): `Switch`/`Ca`/`Rt` blocks followed by one
//!   `[port]` line per connected port, as rdma-core's man page describes;
//! * the unicast forwarding table of one switch, as `ibroute` prints it
//!   ([`parse_ibroute`]).
//!
//! Every error names the line it was found on ([`ParseError`]).  The crate
//! has no dependencies and no `unsafe`: it runs natively in the host and,
//! unchanged, inside the sandboxed fabric reader component.

use std::collections::{HashMap, HashSet};
use std::fmt;

/// Longest node description kept (InfiniBand's NodeDescription is 64
/// bytes; some tools print a little more).
pub const MAX_DESCRIPTION: usize = 256;
/// Highest port number (port numbers are 8-bit; 255 is reserved).
pub const MAX_PORT: u32 = 254;
/// Highest LID (16-bit).
pub const MAX_LID: u32 = 0xffff;
/// Most lines read from one file: a fabric of 64K ports prints fewer.
pub const MAX_LINES: usize = 1 << 20;

/// A parse failure, at a 1-based line number (0: the whole input).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The line it was found on.
    pub line: usize,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for ParseError {}

fn err<T>(line: usize, message: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        line,
        message: message.into(),
    })
}

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeKind {
    /// A switch.
    Switch,
    /// A channel adapter (a host's or a storage server's NIC).
    Ca,
    /// A router between subnets.
    Router,
}

impl NodeKind {
    /// `switch`, `ca` or `router`.
    pub fn name(self) -> &'static str {
        match self {
            NodeKind::Switch => "switch",
            NodeKind::Ca => "ca",
            NodeKind::Router => "router",
        }
    }
}

/// The signalling speed of one lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Speed {
    /// Single data rate: 2.5 Gb/s, 8b/10b.
    Sdr,
    /// Double data rate: 5 Gb/s, 8b/10b.
    Ddr,
    /// Quad data rate: 10 Gb/s, 8b/10b.
    Qdr,
    /// FDR10: 10.3125 Gb/s, 64b/66b.
    Fdr10,
    /// Fourteen data rate: 14.0625 Gb/s, 64b/66b.
    Fdr,
    /// Enhanced data rate: 25.78125 Gb/s, 64b/66b.
    Edr,
    /// High data rate: 53.125 Gb/s PAM4, 50 Gb/s of data after FEC.
    Hdr,
    /// Next data rate: 106.25 Gb/s PAM4, 100 Gb/s of data.
    Ndr,
    /// eXtended data rate: 212.5 Gb/s PAM4, 200 Gb/s of data.
    Xdr,
}

/// Every speed, slowest first.
pub const SPEEDS: [Speed; 9] = [
    Speed::Sdr,
    Speed::Ddr,
    Speed::Qdr,
    Speed::Fdr10,
    Speed::Fdr,
    Speed::Edr,
    Speed::Hdr,
    Speed::Ndr,
    Speed::Xdr,
];

/// The lane counts a port can run at.
pub const WIDTHS: [u32; 5] = [1, 2, 4, 8, 12];

impl Speed {
    /// The name ibnetdiscover prints (`QDR`, `FDR10`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Speed::Sdr => "SDR",
            Speed::Ddr => "DDR",
            Speed::Qdr => "QDR",
            Speed::Fdr10 => "FDR10",
            Speed::Fdr => "FDR",
            Speed::Edr => "EDR",
            Speed::Hdr => "HDR",
            Speed::Ndr => "NDR",
            Speed::Xdr => "XDR",
        }
    }

    /// The speed of a name, if it is one.
    pub fn parse(s: &str) -> Option<Speed> {
        SPEEDS.into_iter().find(|v| v.name() == s)
    }

    /// Data rate of one lane in Gb/s: the signalling rate less the line
    /// encoding (8b/10b up to QDR, 64b/66b for FDR10 to EDR; HDR and later
    /// are quoted by their data rate after PAM4 and FEC).
    pub fn lane_data_gbps(self) -> f64 {
        match self {
            Speed::Sdr => 2.5 * 8.0 / 10.0,
            Speed::Ddr => 5.0 * 8.0 / 10.0,
            Speed::Qdr => 10.0 * 8.0 / 10.0,
            Speed::Fdr10 => 10.3125 * 64.0 / 66.0,
            Speed::Fdr => 14.0625 * 64.0 / 66.0,
            Speed::Edr => 25.78125 * 64.0 / 66.0,
            Speed::Hdr => 50.0,
            Speed::Ndr => 100.0,
            Speed::Xdr => 200.0,
        }
    }

    /// Signalling rate of one lane in Gb/s.
    pub fn lane_signal_gbps(self) -> f64 {
        match self {
            Speed::Sdr => 2.5,
            Speed::Ddr => 5.0,
            Speed::Qdr => 10.0,
            Speed::Fdr10 => 10.3125,
            Speed::Fdr => 14.0625,
            Speed::Edr => 25.78125,
            Speed::Hdr => 53.125,
            Speed::Ndr => 106.25,
            Speed::Xdr => 212.5,
        }
    }
}

/// Data rate in Gb/s of a link of `width` lanes at `speed`; 0 when either
/// is unknown.
pub fn data_gbps(width: Option<u32>, speed: Option<Speed>) -> f64 {
    match (width, speed) {
        (Some(w), Some(s)) => f64::from(w) * s.lane_data_gbps(),
        _ => 0.0,
    }
}

/// One port of a node.
#[derive(Clone, Debug, PartialEq)]
pub struct Port {
    /// Its number (0 is a switch's management port).
    pub number: u32,
    /// Its port GUID (a switch's ports share the switch's).
    pub guid: u64,
    /// Its LID (a switch's ports share the switch's base LID), 0 if unknown.
    pub lid: u32,
    /// Active lanes, if known.
    pub width: Option<u32>,
    /// Lane speed, if known (`???` for a port that is down).
    pub speed: Option<Speed>,
}

/// A switch, channel adapter or router.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Its node GUID where the input gives it; for a channel adapter
    /// known only by its ports, the GUID of its first port.
    pub guid: u64,
    /// What it is.
    pub kind: NodeKind,
    /// Its node description (`mirage006 HCA-1`).
    pub description: String,
    /// Its ports, by number.
    pub ports: Vec<Port>,
}

impl Node {
    /// The port numbered `n`.
    pub fn port(&self, n: u32) -> Option<&Port> {
        self.ports.iter().find(|p| p.number == n)
    }
}

/// One end of a cable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct End {
    /// The node's [`Node::guid`].
    pub node: u64,
    /// The port number.
    pub port: u32,
}

/// A physical link (one cable), each counted once.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// One end.
    pub a: End,
    /// The other end.
    pub b: End,
    /// Active lanes, if known.
    pub width: Option<u32>,
    /// Lane speed, if known.
    pub speed: Option<Speed>,
}

/// One entry of a switch's forwarding table: packets for `lid` leave
/// through `port`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteEntry {
    /// Destination LID.
    pub lid: u32,
    /// Output port (0: the switch itself).
    pub port: u32,
    /// The destination's port GUID, when the table names it.
    pub dest: Option<u64>,
    /// The line of the table it was read from.
    pub line: usize,
}

/// The unicast forwarding table of one switch.
#[derive(Clone, Debug, PartialEq)]
pub struct RouteTable {
    /// The switch's GUID.
    pub switch: u64,
    /// The switch's LID.
    pub lid: u32,
    /// Its entries, in the order of the table.
    pub entries: Vec<RouteEntry>,
}

/// One subnet: its nodes, cables and forwarding tables.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Subnet {
    /// Its name (the subnet prefix, as in `fe80:0000:0000:0000`).
    pub name: String,
    /// Switches, channel adapters and routers.
    pub nodes: Vec<Node>,
    /// Cables, each once.
    pub links: Vec<Link>,
    /// Forwarding tables.
    pub routes: Vec<RouteTable>,
}

// ---------------------------------------------------------------------
// Small lexical helpers.

fn parse_u64_hex(s: &str) -> Option<u64> {
    let h = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    if h.is_empty() || h.len() > 16 {
        return None;
    }
    u64::from_str_radix(h, 16).ok()
}

fn guid(line: usize, s: &str, what: &str) -> Result<u64, ParseError> {
    parse_u64_hex(s).ok_or_else(|| ParseError {
        line,
        message: format!("{what} {:?} is not a 64-bit hexadecimal GUID", shown(s)),
    })
}

fn number(line: usize, s: &str, what: &str, max: u32) -> Result<u32, ParseError> {
    let v = if let Some(h) = s.strip_prefix("0x") {
        u32::from_str_radix(h, 16).ok()
    } else {
        s.parse::<u32>().ok()
    };
    match v {
        Some(v) if v <= max => Ok(v),
        Some(v) => err(line, format!("{what} {v} is out of range (at most {max})")),
        None => err(line, format!("{what} {:?} is not a number", shown(s))),
    }
}

/// A piece of input fit for an error message: short, no control
/// characters.
fn shown(s: &str) -> String {
    shown_up_to(s, 40)
}

/// The first `n` characters of `s`, control characters made visible.
fn shown_up_to(s: &str, n: usize) -> String {
    let mut out: String = s
        .chars()
        .take(n)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if s.chars().count() > n {
        out.push('…');
    }
    out
}

fn description(line: usize, s: &str) -> Result<String, ParseError> {
    if s.len() > MAX_DESCRIPTION {
        return err(
            line,
            format!(
                "node description is {} bytes long (at most {MAX_DESCRIPTION})",
                s.len()
            ),
        );
    }
    if s.chars().any(char::is_control) {
        return err(line, "node description holds a control character");
    }
    Ok(s.to_string())
}

fn width(line: usize, s: &str) -> Result<Option<u32>, ParseError> {
    if s.starts_with('?') {
        return Ok(None);
    }
    let n = s
        .strip_suffix('x')
        .and_then(|n| n.parse::<u32>().ok())
        .filter(|n| WIDTHS.contains(n));
    match n {
        Some(n) => Ok(Some(n)),
        None => err(
            line,
            format!("link width {:?} is none of 1x, 2x, 4x, 8x, 12x", shown(s)),
        ),
    }
}

fn speed(line: usize, s: &str) -> Result<Option<Speed>, ParseError> {
    if s.starts_with('?') {
        return Ok(None);
    }
    match Speed::parse(s) {
        Some(v) => Ok(Some(v)),
        None => err(
            line,
            format!(
                "link speed {:?} is none of SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR",
                shown(s)
            ),
        ),
    }
}

/// `4xQDR` (the topology file's form) as width and speed.
fn rate_token(line: usize, s: &str) -> Result<(Option<u32>, Option<Speed>), ParseError> {
    match s.split_once('x') {
        Some((w, sp)) => Ok((width(line, &format!("{w}x"))?, speed(line, sp)?)),
        None => err(line, format!("link rate {:?} is not WIDTHxSPEED", shown(s))),
    }
}

fn lines(text: &str) -> Result<impl Iterator<Item = (usize, &str)>, ParseError> {
    if text.lines().nth(MAX_LINES).is_some() {
        return err(0, format!("more than {MAX_LINES} lines"));
    }
    Ok(text.lines().enumerate().map(|(i, l)| (i + 1, l)))
}

/// Collects nodes and cables, checking that every port and every cable
/// end is described once and consistently.
#[derive(Default)]
struct Builder {
    nodes: Vec<Node>,
    index: HashMap<u64, usize>,
    links: Vec<Link>,
    /// Cable ends already used, with the line that used them.
    ends: HashMap<End, (End, usize)>,
}

impl Builder {
    fn node(
        &mut self,
        line: usize,
        guid: u64,
        kind: NodeKind,
        desc: &str,
    ) -> Result<usize, ParseError> {
        if let Some(&i) = self.index.get(&guid) {
            let n = &mut self.nodes[i];
            if n.kind != kind {
                return err(
                    line,
                    format!(
                        "GUID {guid:#018x} is a {} here but a {} before",
                        kind.name(),
                        n.kind.name()
                    ),
                );
            }
            if n.description.is_empty() {
                n.description = description(line, desc)?;
            }
            return Ok(i);
        }
        self.index.insert(guid, self.nodes.len());
        self.nodes.push(Node {
            guid,
            kind,
            description: description(line, desc)?,
            ports: Vec::new(),
        });
        Ok(self.nodes.len() - 1)
    }

    fn port(&mut self, line: usize, node: usize, p: Port) -> Result<(), ParseError> {
        let n = &mut self.nodes[node];
        if let Some(old) = n.ports.iter_mut().find(|q| q.number == p.number) {
            if old.guid != p.guid {
                return err(
                    line,
                    format!(
                        "port {} of {:#018x} has GUID {:#018x} here but {:#018x} before",
                        p.number, n.guid, p.guid, old.guid
                    ),
                );
            }
            if old.lid == 0 {
                old.lid = p.lid;
            }
            old.width = old.width.or(p.width);
            old.speed = old.speed.or(p.speed);
            return Ok(());
        }
        n.ports.push(p);
        Ok(())
    }

    /// A cable between two ends, seen from `a`; the same cable seen from
    /// `b` later is not counted again.
    fn link(&mut self, line: usize, l: Link) -> Result<(), ParseError> {
        if l.a == l.b {
            return err(line, "a port is cabled to itself");
        }
        for (x, y) in [(l.a, l.b), (l.b, l.a)] {
            if let Some(&(peer, first)) = self.ends.get(&x)
                && peer != y
            {
                return err(
                    line,
                    format!(
                        "port {} of {:#018x} is cabled to {:#018x} port {} here but to {:#018x} port {} on line {first}",
                        x.port, x.node, y.node, y.port, peer.node, peer.port
                    ),
                );
            }
        }
        if self.ends.contains_key(&l.a) {
            return Ok(());
        }
        self.ends.insert(l.a, (l.b, line));
        self.ends.insert(l.b, (l.a, line));
        self.links.push(l);
        Ok(())
    }

    fn finish(mut self, name: &str) -> Subnet {
        for n in &mut self.nodes {
            n.ports.sort_by_key(|p| p.number);
        }
        Subnet {
            name: name.to_string(),
            nodes: self.nodes,
            links: self.links,
            routes: Vec::new(),
        }
    }
}

// ---------------------------------------------------------------------
// The ports report.

fn kind_code(line: usize, s: &str) -> Result<NodeKind, ParseError> {
    match s {
        "SW" => Ok(NodeKind::Switch),
        "CA" => Ok(NodeKind::Ca),
        "RT" => Ok(NodeKind::Router),
        _ => err(
            line,
            format!("node type {:?} is none of SW, CA, RT", shown(s)),
        ),
    }
}

/// One port as a ports report line shows it.
struct PortRef {
    kind: NodeKind,
    lid: u32,
    port: u32,
    guid: u64,
}

fn port_ref(line: usize, t: &[&str]) -> Result<PortRef, ParseError> {
    if t.len() < 4 {
        return err(line, "a port needs a type, a LID, a port number and a GUID");
    }
    Ok(PortRef {
        kind: kind_code(line, t[0])?,
        lid: number(line, t[1], "LID", MAX_LID)?,
        port: number(line, t[2], "port number", MAX_PORT)?,
        guid: guid(line, t[3], "port GUID")?,
    })
}

/// A `DR path` line: the directed route (output ports from the
/// discovering node) that reached a node, its kind and node GUID.
struct DrPath {
    path: Vec<u32>,
    kind: NodeKind,
    node_guid: u64,
}

fn parse_dr(line: usize, l: &str) -> Result<DrPath, ParseError> {
    let bad = |what: &str| ParseError {
        line,
        message: format!("DR path line: {what}"),
    };
    let (head, tail) = l.split_once("->").ok_or_else(|| bad("no `->`"))?;
    let path_text = head
        .rsplit(';')
        .next()
        .ok_or_else(|| bad("no route"))?
        .trim();
    let mut path = Vec::new();
    for p in path_text.split(',') {
        path.push(number(line, p.trim(), "DR path port", MAX_PORT)?);
        if path.len() > 64 {
            return Err(bad("the route has more than 64 hops"));
        }
    }
    let tail = tail.trim();
    let tail = tail
        .strip_prefix("new ")
        .or_else(|| tail.strip_prefix("known "))
        .ok_or_else(|| bad("expected `new` or `known`"))?;
    let (kind, rest) = if let Some(r) = tail.strip_prefix("Switch ") {
        (NodeKind::Switch, r)
    } else if let Some(r) = tail.strip_prefix("Channel Adapter ") {
        (NodeKind::Ca, r)
    } else if let Some(r) = tail.strip_prefix("Router ") {
        (NodeKind::Router, r)
    } else {
        return Err(bad("unknown node type"));
    };
    let inner = rest
        .strip_prefix('{')
        .and_then(|r| r.split_once('}'))
        .ok_or_else(|| bad("no {GUID}"))?
        .0;
    Ok(DrPath {
        path,
        kind,
        node_guid: guid(line, inner, "node GUID")?,
    })
}

/// Parses the ports report of `ibnetdiscover -p` (with or without `-g`,
/// `-l`, `-s`...): one line per port, `DR path` lines ignored except for
/// the node GUIDs of channel adapters they give.  `name` names the subnet.
pub fn parse_ports_report(name: &str, text: &str) -> Result<Subnet, ParseError> {
    let mut b = Builder::default();
    let mut drs: Vec<DrPath> = Vec::new();
    let mut any = false;
    for (ln, l) in lines(text)? {
        let l = l.trim_end();
        if l.trim().is_empty() || l.starts_with('#') {
            continue;
        }
        if l.starts_with("DR path") {
            drs.push(parse_dr(ln, l)?);
            continue;
        }
        any = true;
        // The descriptions are quoted at the end; the fields before them
        // are separated by blanks.
        let quote = l.find('\'').unwrap_or(l.len());
        let (fields, descs) = l.split_at(quote);
        let paren = fields.trim_end().strip_suffix('(');
        let fields_only = paren.unwrap_or(fields);
        let t: Vec<&str> = fields_only.split_whitespace().collect();
        let me = port_ref(ln, &t)?;
        if t.len() < 6 {
            return err(ln, "a port needs a width and a speed after its GUID");
        }
        let w = width(ln, t[4])?;
        let s = speed(ln, t[5])?;
        let descs = descs.trim();
        let (my_desc, peer) = if t.len() > 6 {
            if t[6] != "-" || t.len() != 11 {
                return err(
                    ln,
                    "after the speed, expected `- TYPE LID PORT GUID` (the peer) or the description",
                );
            }
            if paren.is_none() {
                return err(ln, "the descriptions of a connected port are missing");
            }
            let peer = port_ref(ln, &t[7..])?;
            let inner = descs
                .strip_suffix(')')
                .map(str::trim_end)
                .and_then(|d| d.strip_prefix('\''))
                .and_then(|d| d.strip_suffix('\''))
                .ok_or_else(|| ParseError {
                    line: ln,
                    message: "expected ( 'DESCRIPTION' - 'PEER DESCRIPTION' )".into(),
                })?;
            let (a, bdesc) = inner.split_once("' - '").ok_or_else(|| ParseError {
                line: ln,
                message: "expected ( 'DESCRIPTION' - 'PEER DESCRIPTION' )".into(),
            })?;
            (a.to_string(), Some((peer, bdesc.to_string())))
        } else {
            let d = descs
                .strip_prefix('\'')
                .and_then(|d| d.strip_suffix('\''))
                .unwrap_or(descs);
            (d.to_string(), None)
        };
        let i = b.node(ln, me.guid, me.kind, &my_desc)?;
        b.port(
            ln,
            i,
            Port {
                number: me.port,
                guid: me.guid,
                lid: me.lid,
                width: w,
                speed: s,
            },
        )?;
        if let Some((p, pdesc)) = peer {
            let j = b.node(ln, p.guid, p.kind, &pdesc)?;
            b.port(
                ln,
                j,
                Port {
                    number: p.port,
                    guid: p.guid,
                    lid: p.lid,
                    width: w,
                    speed: s,
                },
            )?;
            b.link(
                ln,
                Link {
                    a: End {
                        node: me.guid,
                        port: me.port,
                    },
                    b: End {
                        node: p.guid,
                        port: p.port,
                    },
                    width: w,
                    speed: s,
                },
            )?;
        }
    }
    if !any {
        return err(0, "no port lines: not an `ibnetdiscover -p` ports report");
    }
    let mut subnet = b.finish(name);
    apply_node_guids(&mut subnet, &drs);
    Ok(subnet)
}

/// Gives channel adapters their node GUIDs from the `DR path` lines: the
/// node a route reaches is the peer of the last output port of the switch
/// the route's prefix reaches (switches are known by their node GUID in
/// both kinds of lines).  Ports of one adapter then make one node.
fn apply_node_guids(s: &mut Subnet, drs: &[DrPath]) {
    let by_path: HashMap<&[u32], &DrPath> = drs.iter().map(|d| (d.path.as_slice(), d)).collect();
    let mut peer: HashMap<End, End> = HashMap::new();
    for l in &s.links {
        peer.insert(l.a, l.b);
        peer.insert(l.b, l.a);
    }
    // Port GUID (the CA's key so far) -> node GUID.
    let mut node_of: HashMap<u64, u64> = HashMap::new();
    for d in drs {
        if d.kind == NodeKind::Switch || d.path.len() < 3 {
            continue;
        }
        let (last, prefix) = match d.path.split_last() {
            Some(x) => x,
            None => continue,
        };
        let Some(parent) = by_path.get(prefix) else {
            continue;
        };
        if parent.kind != NodeKind::Switch {
            continue;
        }
        if let Some(p) = peer.get(&End {
            node: parent.node_guid,
            port: *last,
        }) {
            node_of.insert(p.node, d.node_guid);
        }
    }
    if node_of.is_empty() {
        return;
    }
    // Merge CA entries with the same node GUID; a node GUID that is
    // already another node's key is left alone.
    let keys: HashSet<u64> = s.nodes.iter().map(|n| n.guid).collect();
    let mut merged: Vec<Node> = Vec::with_capacity(s.nodes.len());
    let mut at: HashMap<u64, usize> = HashMap::new();
    let mut rename: HashMap<u64, u64> = HashMap::new();
    for n in std::mem::take(&mut s.nodes) {
        let new = match node_of.get(&n.guid) {
            Some(&g) if n.kind == NodeKind::Ca && (g == n.guid || !keys.contains(&g)) => g,
            _ => n.guid,
        };
        rename.insert(n.guid, new);
        match at.get(&new) {
            Some(&i) if merged[i].kind == NodeKind::Ca && n.kind == NodeKind::Ca => {
                let m = &mut merged[i];
                for p in n.ports {
                    if m.port(p.number).is_none() {
                        m.ports.push(p);
                    }
                }
                m.ports.sort_by_key(|p| p.number);
            }
            Some(_) => {
                // Two different nodes would share a key: keep the old one.
                rename.insert(n.guid, n.guid);
                at.insert(n.guid, merged.len());
                merged.push(n);
            }
            None => {
                at.insert(new, merged.len());
                merged.push(Node { guid: new, ..n });
            }
        }
    }
    s.nodes = merged;
    for l in &mut s.links {
        for e in [&mut l.a, &mut l.b] {
            if let Some(&g) = rename.get(&e.node) {
                e.node = g;
            }
        }
    }
}

// ---------------------------------------------------------------------
// The topology file.

/// `"S-0002c90200440f20"` as a kind and a GUID.
fn node_id(line: usize, s: &str) -> Result<(NodeKind, u64), ParseError> {
    let inner = s
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(s);
    let (k, g) = inner.split_at(inner.find('-').unwrap_or(0));
    let kind = match k {
        "S" => NodeKind::Switch,
        "H" => NodeKind::Ca,
        "R" => NodeKind::Router,
        _ => {
            return err(
                line,
                format!(
                    "node id {:?} does not start with S-, H- or R-",
                    shown(inner)
                ),
            );
        }
    };
    Ok((kind, guid(line, &g[1..], "node GUID")?))
}

/// The text between the first two double quotes, and what follows.
fn quoted(s: &str) -> Option<(&str, &str)> {
    let a = s.find('"')?;
    let rest = &s[a + 1..];
    let b = rest.find('"')?;
    Some((&rest[..b], &rest[b + 1..]))
}

/// `[N]` at the start of `s`, and what follows.
fn bracket<'a>(line: usize, s: &'a str, what: &str) -> Result<(u32, &'a str), ParseError> {
    let inner = s
        .strip_prefix('[')
        .and_then(|r| r.split_once(']'))
        .ok_or_else(|| ParseError {
            line,
            message: format!("expected [{what}]"),
        })?;
    Ok((number(line, inner.0.trim(), what, MAX_PORT)?, inner.1))
}

/// `(GUID)` at the start of `s`, if there, and what follows.
fn paren_guid(line: usize, s: &str) -> Result<(Option<u64>, &str), ParseError> {
    match s.strip_prefix('(') {
        Some(r) => {
            let (g, rest) = r.split_once(')').ok_or_else(|| ParseError {
                line,
                message: "unclosed (GUID)".into(),
            })?;
            Ok((Some(guid(line, g, "port GUID")?), rest))
        }
        None => Ok((None, s)),
    }
}

/// `lid N` numbers in a comment, in order.
fn lids(line: usize, comment: &str) -> Result<Vec<u32>, ParseError> {
    let t: Vec<&str> = comment.split_whitespace().collect();
    let mut out = Vec::new();
    for w in t.windows(2) {
        if w[0] == "lid" {
            out.push(number(line, w[1], "LID", MAX_LID)?);
        }
    }
    Ok(out)
}

/// Parses ibnetdiscover's default output, the topology file: blocks of
/// `vendid=`/`devid=`/`sysimgguid=`/`switchguid=`/`caguid=` lines, a node
/// line (`Switch 36 "S-GUID" # "DESC" enhanced port 0 lid 3 lmc 0`, `Ca 2
/// "H-GUID" # "DESC"`, `Rt ...`) and one line per connected port
/// (`[1](PORTGUID) "S-GUID"[7](PEERPORTGUID) # "PEER DESC" lid 3 4xQDR`).
pub fn parse_topology_file(name: &str, text: &str) -> Result<Subnet, ParseError> {
    let mut b = Builder::default();
    // The node whose ports follow: its index, kind, LID and port count.
    let mut cur: Option<(usize, NodeKind, u32, u32)> = None;
    let mut any = false;
    // Port lines describe the far end's LID and rate too; the far node
    // may come later in the file, so its ports are added at the end.
    let mut pending: Vec<(usize, u64, NodeKind, Port, String)> = Vec::new();
    for (ln, raw) in lines(text)? {
        let l = raw.trim();
        if l.is_empty() {
            cur = None;
            continue;
        }
        if l.starts_with('#') {
            continue;
        }
        if let Some((key, _)) = l.split_once('=')
            && [
                "vendid",
                "devid",
                "sysimgguid",
                "switchguid",
                "caguid",
                "routerguid",
            ]
            .contains(&key.trim())
        {
            continue;
        }
        let (body, comment) = match l.find('#') {
            // A `#` inside the quoted node id would be unusual; the node
            // id has no `#`, descriptions are after it.
            Some(i) => (&l[..i], &l[i + 1..]),
            None => (l, ""),
        };
        let first = body.split_whitespace().next().unwrap_or("");
        let kind = match first {
            "Switch" => Some(NodeKind::Switch),
            "Ca" => Some(NodeKind::Ca),
            "Rt" => Some(NodeKind::Router),
            _ => None,
        };
        if let Some(kind) = kind {
            any = true;
            let t: Vec<&str> = body.split_whitespace().collect();
            if t.len() < 3 {
                return err(ln, format!("expected `{first} PORTS \"ID\"`"));
            }
            let nports = number(ln, t[1], "port count", MAX_PORT)?;
            let (k, g) = node_id(ln, t[2])?;
            if k != kind {
                return err(
                    ln,
                    format!("node id {} does not fit a {first}", shown(t[2])),
                );
            }
            let desc = quoted(comment).map(|(d, _)| d).unwrap_or("");
            let lid = lids(ln, quoted(comment).map_or(comment, |(_, r)| r))?
                .first()
                .copied()
                .unwrap_or(0);
            let i = b.node(ln, g, kind, desc)?;
            cur = Some((i, kind, lid, nports));
            continue;
        }
        if l.starts_with('[') {
            let Some((i, kind, node_lid, nports)) = cur else {
                return err(ln, "a [port] line outside a Switch or Ca block");
            };
            let (pn, rest) = bracket(ln, body, "port number")?;
            if pn > nports {
                return err(ln, format!("port {pn} of a node with {nports} ports"));
            }
            let (my_guid, rest) = paren_guid(ln, rest)?;
            // An extended port number (`[ext 1]`) of some switches.
            let rest = rest.trim_start();
            let rest = if rest.starts_with("[ext") {
                rest.split_once(']').map_or(rest, |x| x.1).trim_start()
            } else {
                rest
            };
            let (peer_id, after) = quoted(rest).ok_or_else(|| ParseError {
                line: ln,
                message: "expected the peer's \"S-GUID\" or \"H-GUID\"".into(),
            })?;
            let (pk, pg) = node_id(ln, peer_id)?;
            let (pp, after) = bracket(ln, after.trim_start(), "peer port number")?;
            let (peer_guid, _) = paren_guid(ln, after.trim_start())?;
            // Comment: switch ports `"PEER DESC" lid L RATE`, CA ports
            // `lid L lmc M "PEER DESC" lid PL RATE`.
            let (peer_desc, tail, before) = match quoted(comment) {
                Some((d, t)) => (d, t, &comment[..comment.find('"').unwrap_or(0)]),
                None => ("", comment, ""),
            };
            let rate = tail.split_whitespace().last().unwrap_or("");
            let (w, s) = if rate.contains('x') {
                rate_token(ln, rate)?
            } else {
                (None, None)
            };
            let my_lid = match kind {
                NodeKind::Switch => node_lid,
                _ => lids(ln, before)?.first().copied().unwrap_or(0),
            };
            let peer_lid = lids(ln, tail)?.last().copied().unwrap_or(0);
            let me = b.nodes[i].guid;
            b.port(
                ln,
                i,
                Port {
                    number: pn,
                    guid: my_guid.unwrap_or(me),
                    lid: my_lid,
                    width: w,
                    speed: s,
                },
            )?;
            pending.push((
                ln,
                pg,
                pk,
                Port {
                    number: pp,
                    guid: peer_guid.unwrap_or(pg),
                    lid: peer_lid,
                    width: w,
                    speed: s,
                },
                peer_desc.to_string(),
            ));
            b.link(
                ln,
                Link {
                    a: End { node: me, port: pn },
                    b: End { node: pg, port: pp },
                    width: w,
                    speed: s,
                },
            )?;
            continue;
        }
        return err(
            ln,
            format!("unexpected line {:?} in a topology file", shown(l)),
        );
    }
    if !any {
        return err(
            0,
            "no Switch or Ca blocks: not an ibnetdiscover topology file",
        );
    }
    for (ln, g, k, p, d) in pending {
        let j = b.node(ln, g, k, &d)?;
        // The far end's own block (if any) names its port GUID; a port
        // seen only from its peer gets the node's GUID.
        let n = &b.nodes[j];
        if let Some(old) = n.port(p.number)
            && old.guid != p.guid
            && p.guid == g
        {
            continue;
        }
        b.port(ln, j, p)?;
    }
    Ok(b.finish(name))
}

// ---------------------------------------------------------------------
// ibroute.

/// Parses one switch's unicast forwarding table as `ibroute` prints it:
/// a `Unicast lids [..] of switch Lid L guid G (DESC):` header, two
/// column-title lines, then `0xLID PORT : (Type portguid 0xG: 'DESC')`
/// lines and a `N valid lids dumped` trailer.
///
/// A dump that ends with the tool's own error (real recordings do:
/// `ibroute: iberror: failed: dump tables: linear forwarding table get
/// failed`, the program's name possibly a path) is refused here; see
/// [`parse_ibroute_partial`], which keeps the entries read before it.
pub fn parse_ibroute(text: &str) -> Result<RouteTable, ParseError> {
    match parse_ibroute_partial(text)? {
        (t, None) => Ok(t),
        (_, Some(stop)) => Err(stop),
    }
}

/// Whether a line of an `ibroute` dump is the tool's error message
/// (`ibroute: iberror: ...`, `/usr/sbin/ibroute: iberror: ...`), printed
/// when it could not read the rest of the table.
fn is_iberror(l: &str) -> bool {
    let Some((prog, rest)) = l.split_once(':') else {
        return false;
    };
    let prog = prog.rsplit('/').next().unwrap_or(prog);
    prog == "ibroute" && rest.trim_start().starts_with("iberror:") || l.starts_with("iberror:")
}

/// As [`parse_ibroute`], but a dump that ends with the tool's own error
/// line (after the entries it did read) gives the table up to its last
/// valid entry, with where and why it stops (the error line's number and
/// text) as the second value. Anything after the error line is ignored:
/// the tool stopped there.
pub fn parse_ibroute_partial(text: &str) -> Result<(RouteTable, Option<ParseError>), ParseError> {
    let mut table: Option<RouteTable> = None;
    let mut seen: HashSet<u32> = HashSet::new();
    let mut dumped = None;
    for (ln, raw) in lines(text)? {
        let l = raw.trim();
        if l.is_empty() || l.starts_with("Lid") || l.starts_with("Port") || l.starts_with('#') {
            continue;
        }
        if let Some(rest) = l.strip_prefix("Unicast lids") {
            if table.is_some() {
                return err(ln, "a second table header");
            }
            let t: Vec<&str> = rest.split_whitespace().collect();
            let pos = |w: &str| t.iter().position(|x| *x == w);
            let (Some(li), Some(gi)) = (pos("Lid"), pos("guid")) else {
                return err(ln, "the header names no switch `Lid` and `guid`");
            };
            let lid = number(
                ln,
                t.get(li + 1).copied().unwrap_or(""),
                "switch LID",
                MAX_LID,
            )?;
            let g = guid(ln, t.get(gi + 1).copied().unwrap_or(""), "switch GUID")?;
            table = Some(RouteTable {
                switch: g,
                lid,
                entries: Vec::new(),
            });
            continue;
        }
        if is_iberror(l) {
            let Some(t) = table else {
                return err(
                    ln,
                    format!("the dump is the tool's error only: {:?}", shown(l)),
                );
            };
            let n = t.entries.len();
            let stop = ParseError {
                line: ln,
                message: format!(
                    "the dump stops with the tool's error {:?}; its {n} entries before this line are kept",
                    // The whole message says why the tool stopped.
                    shown_up_to(l, 200)
                ),
            };
            return Ok((t, Some(stop)));
        }
        if l.ends_with("valid lids dumped") {
            let n = l.split_whitespace().next().unwrap_or("");
            dumped = Some((ln, number(ln, n, "count of valid LIDs", u32::MAX)?));
            continue;
        }
        let Some(t) = table.as_mut() else {
            return err(
                ln,
                "an entry before the `Unicast lids` header (not an ibroute table?)",
            );
        };
        if dumped.is_some() {
            return err(ln, "an entry after the `valid lids dumped` trailer");
        }
        let (head, info) = l.split_once(':').ok_or_else(|| ParseError {
            line: ln,
            message: format!("expected `0xLID PORT : (...)`, found {:?}", shown(l)),
        })?;
        let h: Vec<&str> = head.split_whitespace().collect();
        if h.len() != 2 {
            return err(ln, "expected a LID and an output port before `:`");
        }
        let lid = number(ln, h[0], "destination LID", MAX_LID)?;
        let port = number(ln, h[1], "output port", 255)?;
        if !seen.insert(lid) {
            return err(ln, format!("LID {lid} is routed twice"));
        }
        let dest = match info.split_once("portguid") {
            Some((_, g)) => {
                let g = g.trim_start();
                let g = g
                    .split(|c: char| c == ':' || c.is_whitespace())
                    .next()
                    .unwrap_or("");
                Some(guid(ln, g, "destination port GUID")?)
            }
            None => None,
        };
        t.entries.push(RouteEntry {
            lid,
            port,
            dest,
            line: ln,
        });
    }
    let Some(t) = table else {
        return err(
            0,
            "no `Unicast lids ... of switch` header: not an ibroute table",
        );
    };
    if let Some((ln, n)) = dumped
        && n as usize != t.entries.len()
    {
        return err(
            ln,
            format!(
                "the trailer says {n} LIDs but the table has {} (truncated?)",
                t.entries.len()
            ),
        );
    }
    Ok((t, None))
}

// ---------------------------------------------------------------------
// Files and subnets.

/// What a file holds, judged from its first meaningful lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `ibnetdiscover -p`.
    PortsReport,
    /// ibnetdiscover's default output.
    TopologyFile,
    /// `ibroute`.
    Ibroute,
}

/// The format of a file's text, if it is one of the three.
pub fn detect(text: &str) -> Option<Format> {
    for l in text.lines().take(200) {
        let l = l.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        if l.starts_with("Unicast lids") {
            return Some(Format::Ibroute);
        }
        if l.starts_with("DR path")
            || l.starts_with("SW ")
            || l.starts_with("CA ")
            || l.starts_with("RT ")
        {
            return Some(Format::PortsReport);
        }
        if l.starts_with("vendid=")
            || l.starts_with("Switch")
            || l.starts_with("Ca ")
            || l.starts_with("Ca\t")
        {
            return Some(Format::TopologyFile);
        }
        return None;
    }
    None
}

/// The subnet a file belongs to, from its name: `ib-subnet-NAME.txt`,
/// `ibroute-NAME-LID.txt`, else the file's stem.
pub fn subnet_of_file(path: &str) -> String {
    let base = path.rsplit('/').next().unwrap_or(path);
    let stem = base.strip_suffix(".txt").unwrap_or(base);
    if let Some(s) = stem.strip_prefix("ib-subnet-") {
        return s.to_string();
    }
    if let Some(s) = stem.strip_prefix("ibroute-") {
        if let Some((name, lid)) = s.rsplit_once('-')
            && lid.chars().all(|c| c.is_ascii_digit())
            && !name.is_empty()
        {
            return name.to_string();
        }
        return s.to_string();
    }
    stem.to_string()
}

/// A failure in one file of several.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileError {
    /// The file.
    pub file: String,
    /// What was wrong, at which line.
    pub error: ParseError,
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.error.line == 0 {
            write!(f, "{}: {}", self.file, self.error.message)
        } else {
            write!(
                f,
                "{}:{}: {}",
                self.file, self.error.line, self.error.message
            )
        }
    }
}

/// Parses files (path, text) into subnets: each ports report or topology
/// file is a subnet named by [`subnet_of_file`], each forwarding table
/// joins the subnet of its name.  Subnets come sorted by name.
///
/// A forwarding table that does not parse (real recordings hold
/// truncated ones) is left out and reported in the second list (its
/// message says so): routes through its switch then use shortest paths. A
/// table that ends with `ibroute`'s own error line is kept up to its last
/// valid entry, and reported there too, naming the line where it stops.
/// Any other file that does not parse is an error.
pub fn read_files(files: &[(String, String)]) -> Result<(Vec<Subnet>, Vec<FileError>), FileError> {
    let mut warnings = Vec::new();
    let mut subnets: Vec<Subnet> = Vec::new();
    let mut tables: Vec<(String, String, RouteTable)> = Vec::new();
    for (path, text) in files {
        let fe = |error| FileError {
            file: path.clone(),
            error,
        };
        let name = subnet_of_file(path);
        match detect(text) {
            Some(Format::PortsReport) => {
                let s = parse_ports_report(&name, text).map_err(fe)?;
                subnets.push(s);
            }
            Some(Format::TopologyFile) => {
                let s = parse_topology_file(&name, text).map_err(fe)?;
                subnets.push(s);
            }
            Some(Format::Ibroute) => match parse_ibroute_partial(text) {
                Ok((t, stop)) => {
                    if let Some(e) = stop {
                        warnings.push(fe(e));
                    }
                    tables.push((path.clone(), name, t));
                }
                Err(mut e) => {
                    e.message.push_str("; this forwarding table is left out");
                    warnings.push(fe(e));
                }
            },
            None => {
                return Err(fe(ParseError {
                    line: 1,
                    message: "not a ports report, topology file or ibroute table".into(),
                }));
            }
        }
    }
    subnets.sort_by(|a, b| a.name.cmp(&b.name));
    for w in subnets.windows(2) {
        if w[0].name == w[1].name {
            return Err(FileError {
                file: w[1].name.clone(),
                error: ParseError {
                    line: 0,
                    message: "two files describe this subnet".into(),
                },
            });
        }
    }
    for (path, name, t) in tables {
        let at = subnets.iter().position(|s| s.name == name);
        let s = match at {
            Some(i) => &mut subnets[i],
            None if subnets.len() == 1 => &mut subnets[0],
            None => {
                return Err(FileError {
                    file: path,
                    error: ParseError {
                        line: 0,
                        message: format!("no subnet named {name} for this forwarding table"),
                    },
                });
            }
        };
        s.routes.push(t);
    }
    for s in &mut subnets {
        s.routes.sort_by_key(|t| t.lid);
    }
    Ok((subnets, warnings))
}

#[cfg(test)]
mod tests;
