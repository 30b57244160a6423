//! Slurm's `topology.conf` (plugin `topology/tree`) and `topology.yaml`
//! (a tree and a block topology) from a fabric.
//!
//! One `SwitchName=` line per switch that leads to hosts, as a spanning
//! tree of each connected part of each subnet (see [`topology_conf`]).
//! Disconnected parts are separate trees (Slurm keeps a job within one).
//! A host on several subnets is listed under its first subnet only, so
//! that every node is under exactly one leaf.

use std::collections::{BTreeSet, HashMap};

use wloc_ib::NodeKind;

use crate::Fabric;

/// Longest switch or node name Slurm's topology plugin takes.
pub const MAX_NAME: usize = 64;

/// A switch's name: `ib<SUBNET INDEX>-<GUID>`.
fn switch_name(si: usize, guid: u64) -> String {
    format!("ib{si}-{guid:016x}")
}

/// Checks a name Slurm will read: at most 64 bytes, no blank, `,`, `=`,
/// `#`, brackets or control character.
fn check_name(n: &str) -> Result<(), String> {
    if n.is_empty() || n.len() > MAX_NAME {
        return Err(format!(
            "name {n:?} is empty or longer than {MAX_NAME} characters"
        ));
    }
    if n.chars()
        .any(|c| c.is_whitespace() || c.is_control() || ",=#[]".contains(c))
    {
        return Err(format!("name {n:?} holds a character Slurm cannot take"));
    }
    Ok(())
}

/// `topology.conf` for the fabric, host names mapped by `names` (the
/// fabric's host name to the Slurm node name).
///
/// Per connected part of each subnet, the switches form a tree: its root
/// is the switch of highest [`Fabric::switch_levels`] level (lowest GUID
/// on ties), every other switch hangs below the switch through which a
/// breadth-first walk from the root first reaches it.  A switch lists its
/// child switches (`Switches=`); the hosts cabled to it go to a leaf of
/// their own (`Nodes=`), named after the switch with `-n`, so that leaves
/// hold only nodes as the tree plugin expects.  Each host is under one
/// leaf: its first subnet's, its lowest-GUID switch's.
///
/// Fails when a name is too long or holds a character Slurm cannot take,
/// or when a host with an adapter is cabled to no switch.
pub fn topology_conf(f: &Fabric, names: &dyn Fn(&str) -> String) -> Result<String, String> {
    let mut out = String::from("# topology.conf for topology/tree, written by wloc\n");
    for (subnet, switches) in tree(f, names)? {
        out.push_str(&format!("# subnet {subnet}\n"));
        for s in switches {
            if s.switches.is_empty() {
                out.push_str(&format!(
                    "SwitchName={} Nodes={}\n",
                    s.name,
                    s.nodes.join(",")
                ));
            } else {
                out.push_str(&format!(
                    "SwitchName={} Switches={}\n",
                    s.name,
                    s.switches.join(",")
                ));
            }
        }
    }
    Ok(out)
}

/// One switch of Slurm's tree: a leaf lists nodes, an upper switch the
/// switches below it (never both, as the tree plugin expects).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeSwitch {
    /// The switch name Slurm sees.
    pub name: String,
    /// Slurm node names, for a leaf.
    pub nodes: Vec<String>,
    /// Names of the switches below, for an upper switch.
    pub switches: Vec<String>,
}

/// The switches of Slurm's tree, per subnet (see [`topology_conf`] for
/// how the tree is chosen), each subnet's switches from its roots down.
pub fn tree(
    f: &Fabric,
    names: &dyn Fn(&str) -> String,
) -> Result<Vec<(String, Vec<TreeSwitch>)>, String> {
    let mut out = Vec::new();
    let mut placed: BTreeSet<usize> = BTreeSet::new();
    for (si, g) in f.subnets.iter().enumerate() {
        let levels: HashMap<_, _> = f.switch_levels(si).into_iter().collect();
        let mut switches = g.of_kind(NodeKind::Switch);
        // Roots first: highest level, then lowest GUID.
        switches.sort_by_key(|&s| {
            (
                std::cmp::Reverse(levels.get(&s).copied().unwrap_or(0)),
                g.graph[s].guid,
            )
        });
        let mut parent: HashMap<_, _> = HashMap::new();
        let mut order = Vec::new();
        for &root in &switches {
            if parent.contains_key(&root) {
                continue;
            }
            parent.insert(root, None);
            let mut q = std::collections::VecDeque::from([root]);
            while let Some(s) = q.pop_front() {
                order.push(s);
                let mut next: Vec<_> = g
                    .graph
                    .neighbors(s)
                    .filter(|n| g.graph[*n].kind == NodeKind::Switch && !parent.contains_key(n))
                    .collect();
                next.sort_by_key(|n| g.graph[*n].guid);
                next.dedup();
                for n in next {
                    parent.insert(n, Some(s));
                    q.push_back(n);
                }
            }
        }
        // Hosts of each switch, each host once.
        let mut by_guid = switches.clone();
        by_guid.sort_by_key(|&s| g.graph[s].guid);
        let mut hosts_of: HashMap<_, BTreeSet<String>> = HashMap::new();
        for &s in &by_guid {
            let mut hs: Vec<usize> = g
                .graph
                .neighbors(s)
                .filter_map(|n| g.graph[n].host)
                .collect();
            hs.sort();
            for h in hs {
                if placed.insert(h) {
                    let slurm = names(&f.hosts[h].name);
                    check_name(&slurm)?;
                    hosts_of.entry(s).or_default().insert(slurm);
                }
            }
        }
        // Only switches leading to hosts are written.
        let mut useful: BTreeSet<_> = BTreeSet::new();
        for &s in hosts_of.keys() {
            let mut c = Some(s);
            while let Some(x) = c {
                if !useful.insert(x) {
                    break;
                }
                c = parent[&x];
            }
        }
        if useful.is_empty() {
            continue;
        }
        let mut lines = Vec::new();
        for &s in &order {
            if !useful.contains(&s) {
                continue;
            }
            let name = switch_name(si, g.graph[s].guid);
            let mut children: Vec<String> = order
                .iter()
                .filter(|c| parent[*c] == Some(s) && useful.contains(*c))
                .map(|c| switch_name(si, g.graph[*c].guid))
                .collect();
            if let Some(hs) = hosts_of.get(&s) {
                let leaf = format!("{name}-n");
                let list: Vec<&str> = hs.iter().map(String::as_str).collect();
                let nodes: Vec<String> = list.iter().map(|n| n.to_string()).collect();
                if children.is_empty() {
                    lines.push(TreeSwitch {
                        name,
                        nodes,
                        switches: Vec::new(),
                    });
                    continue;
                }
                lines.push(TreeSwitch {
                    name: leaf.clone(),
                    nodes,
                    switches: Vec::new(),
                });
                children.insert(0, leaf);
            }
            lines.push(TreeSwitch {
                name,
                nodes: Vec::new(),
                switches: children,
            });
        }
        out.push((g.name.clone(), lines));
    }
    for (i, h) in f.hosts.iter().enumerate() {
        if !h.nics.is_empty() && !placed.contains(&i) {
            return Err(format!(
                "host {} is cabled to no switch: Slurm's tree has no place for it",
                h.name
            ));
        }
    }
    Ok(out)
}

/// `topology.yaml` (Slurm 25.05 and later) for the fabric: a tree
/// topology `fabric` (the cluster default, the same switches as
/// [`topology_conf`]) and a block topology `fabric-blocks` with one block
/// per leaf switch (its nodes), `block_sizes` holding the smallest block's
/// size as the base block size, so that every block is usable.
pub fn topology_yaml(f: &Fabric, names: &dyn Fn(&str) -> String) -> Result<String, String> {
    let subnets = tree(f, names)?;
    let mut out = String::from("# topology.yaml, written by wloc\n---\n");
    out.push_str("- topology: fabric\n  cluster_default: true\n  tree:\n    switches:\n");
    let mut leaves = Vec::new();
    for (_, switches) in &subnets {
        for s in switches {
            out.push_str(&format!("      - switch: {}\n", s.name));
            if s.switches.is_empty() {
                out.push_str(&format!("        nodes: {}\n", s.nodes.join(",")));
                leaves.push(s);
            } else {
                out.push_str(&format!("        children: {}\n", s.switches.join(",")));
            }
        }
    }
    if let Some(base) = leaves.iter().map(|s| s.nodes.len()).min() {
        out.push_str("- topology: fabric-blocks\n  cluster_default: false\n  block:\n");
        out.push_str(&format!("    block_sizes:\n      - {base}\n    blocks:\n"));
        for s in &leaves {
            out.push_str(&format!("      - block: {}\n", s.name));
            out.push_str(&format!("        nodes: {}\n", s.nodes.join(",")));
        }
    }
    Ok(out)
}

/// A host-name map from text: `FABRIC-NAME SLURM-NAME` lines, `#`
/// comments; names not in the map are kept as they are.
pub fn parse_names(text: &str) -> Result<HashMap<String, String>, String> {
    let mut m = HashMap::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.split('#').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        let mut t = l.split_whitespace();
        match (t.next(), t.next(), t.next()) {
            (Some(a), Some(b), None) => {
                check_name(b).map_err(|e| format!("line {}: {e}", i + 1))?;
                m.insert(a.to_string(), b.to_string());
            }
            _ => return Err(format!("line {}: expected `FABRIC-NAME SLURM-NAME`", i + 1)),
        }
    }
    Ok(m)
}
