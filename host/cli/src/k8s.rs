//! Kubernetes: the `NodeResourceTopology` object (API group
//! `topology.node.k8s.io`, version `v1alpha2`, the custom resource of the
//! Kubernetes topology-aware scheduling work group) describing one node's
//! NUMA zones, as `wloc k8s nrt` prints it.
//!
//! What is filled in:
//!
//! - `metadata.name`: the node name (see [`default_node_name`]).
//! - `zones`: one per NUMA node, named `node-N` (N its OS index), of
//!   type `Node`, as the topology updaters of Kubernetes name them.
//! - a zone's `costs`: the NUMA distances from that node to every node
//!   of the matrix (itself included), `name: node-M`, `value: distance`,
//!   when the topology has a NUMA latency matrix (`NUMALatency`, the
//!   firmware's SLIT distances on Linux); left out otherwise.
//! - a zone's `resources`: `cpu`, with capacity the PUs of the node and
//!   allocatable and available the allowed ones, and `memory`, with
//!   capacity the node's local memory in bytes and allocatable and
//!   available the same when the node is allowed, else 0.  Nothing is
//!   reserved (no kubelet reservation, no running pod is known), so
//!   available equals allocatable.
//!
//! What is left out, on purpose:
//!
//! - `topologyPolicies`: deprecated in v1alpha2 and no longer required by
//!   its schema; it described the kubelet's Topology Manager policy,
//!   which is kubelet configuration, not hardware.
//! - top-level `attributes` (`topologyManagerPolicy`,
//!   `topologyManagerScope`, pod fingerprints): kubelet configuration and
//!   state again, which a hardware topology does not know.
//! - zone `attributes`: the API defines none for NUMA zones.
//!
//! A PU belongs to one zone: the NUMA node whose cpuset holds it, the
//! smallest such cpuset first, then the lowest OS index (in hwloc, memory
//! without CPUs such as HBM or persistent memory shares the cpuset of
//! the CPUs' own node, while Linux lists the CPUs under one node only),
//! so the zones' CPU capacities add up to the PUs.

use serde::Serialize;
use wloc_core::Topology;
use wloc_core::object::{ObjAttr, ObjId, ObjType};

/// `apiVersion` of the object.
pub const API_VERSION: &str = "topology.node.k8s.io/v1alpha2";
/// `kind` of the object.
pub const KIND: &str = "NodeResourceTopology";

/// A `NodeResourceTopology` object, in the API's field order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeResourceTopology {
    /// The API group and version ([`API_VERSION`]).
    pub api_version: &'static str,
    /// The object kind ([`KIND`]).
    pub kind: &'static str,
    /// The node's name.
    pub metadata: Metadata,
    /// Node attributes: the site infos asked for (`--info`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attributes: Vec<Attribute>,
    /// One zone per NUMA node.
    pub zones: Vec<Zone>,
}

/// A name and a value, as the API's `attributes` hold them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Attribute {
    /// The attribute's name.
    pub name: String,
    /// Its value.
    pub value: String,
}

/// The root object's infos `names` (site infos such as `Rack`) as node
/// attributes; fails when the root lacks one of them.
pub fn site_attributes(
    topo: &Topology,
    names: &[String],
) -> Result<Vec<Attribute>, crate::MissingSiteInfo> {
    names
        .iter()
        .map(|n| {
            Ok(Attribute {
                name: n.clone(),
                value: crate::site_info(topo, n)?.to_string(),
            })
        })
        .collect()
}

/// The object's metadata: its name alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Metadata {
    /// The node's name.
    pub name: String,
}

/// One zone: a NUMA node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Zone {
    /// The zone's name (`node-N`, N the NUMA node's OS index).
    pub name: String,
    /// The zone's type (`Node`).
    #[serde(rename = "type")]
    pub zone_type: &'static str,
    /// Distances to the other zones, when the topology has them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub costs: Vec<Cost>,
    /// The zone's CPUs and memory.
    pub resources: Vec<Resource>,
}

/// The distance from a zone to the zone `name`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Cost {
    /// The other zone's name.
    pub name: String,
    /// The distance to it.
    pub value: i64,
}

/// One resource of a zone; quantities as Kubernetes quantity strings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Resource {
    /// The resource's name (`cpu`, `memory`).
    pub name: &'static str,
    /// All of it: the node's PUs, or its local memory in bytes.
    pub capacity: String,
    /// The allowed part (see the module documentation).
    pub allocatable: String,
    /// Equal to `allocatable`: nothing is known to be reserved or used.
    pub available: String,
}

/// An empty topology with the filters `wloc k8s nrt` loads with: the
/// default filters, disallowed PUs and NUMA nodes included (they count
/// in the capacity, not in what is allocatable).
pub fn nrt_topology() -> Topology {
    let mut t = Topology::new();
    t.include_disallowed = true;
    t
}

/// The node name: the topology's `HostName` info, else this machine's
/// host name, lower-cased as the kubelet names its node by default.
pub fn default_node_name(topo: &Topology) -> String {
    crate::slurm::topology_hostname(topo)
        .or_else(crate::slurm::this_hostname)
        .unwrap_or_else(|| "localhost".to_string())
        .to_lowercase()
}

/// Whether `name` can name a Kubernetes object such as a node: a DNS
/// subdomain (RFC 1123) of at most 253 characters, lower-case letters,
/// digits, `-` and `.`, beginning and ending with a letter or digit.
pub fn valid_object_name(name: &str) -> bool {
    let b = name.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty()
        && b.len() <= 253
        && b.iter().all(|c| alnum(c) || *c == b'-' || *c == b'.')
        && b.first().is_some_and(alnum)
        && b.last().is_some_and(alnum)
}

/// A byte count as a Kubernetes quantity: with the largest binary suffix
/// (`Ki` .. `Ei`) that divides it exactly, else a plain integer.
pub fn bytes_quantity(bytes: u64) -> String {
    const SUFFIXES: [&str; 6] = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    if bytes == 0 {
        return "0".to_string();
    }
    let mut value = bytes;
    let mut suffix = "";
    for s in SUFFIXES {
        if !value.is_multiple_of(1024) {
            break;
        }
        value /= 1024;
        suffix = s;
    }
    format!("{value}{suffix}")
}

/// A NUMA node's zone name.
fn zone_name(topo: &Topology, id: ObjId) -> String {
    let o = topo.obj(id);
    format!("node-{}", o.os_index.unwrap_or(o.logical_index()))
}

/// The NUMA latency matrix: `NUMALatency` if present, else the first
/// latency matrix between NUMA nodes only.
fn numa_distances(topo: &Topology) -> Option<&wloc_core::distances::Distances> {
    let numa_only = |d: &&wloc_core::distances::Distances| {
        !d.objs.is_empty()
            && d.objs
                .iter()
                .all(|&o| topo.obj(o).obj_type == ObjType::NUMANode)
    };
    topo.distances
        .iter()
        .filter(numa_only)
        .find(|d| d.name.as_deref() == Some("NUMALatency"))
        .or_else(|| {
            topo.distances
                .iter()
                .filter(numa_only)
                .find(|d| d.kind & wloc_core::distances::kind::MEANS_LATENCY != 0)
        })
}

/// The `NodeResourceTopology` of `topo` for node `name` (see the module
/// documentation), zones and costs in OS index order.
pub fn node_resource_topology(topo: &Topology, name: &str) -> NodeResourceTopology {
    let mut nodes = topo.objs_by_type(ObjType::NUMANode);
    let os_order = |id: &ObjId| {
        let o = topo.obj(*id);
        (o.os_index.unwrap_or(u32::MAX), o.logical_index())
    };
    nodes.sort_by_key(os_order);
    // PU → zone, as the module documentation says.
    let mut pus = vec![(0u64, 0u64); nodes.len()];
    for pu in topo.objs_by_type(ObjType::PU) {
        let Some(p) = topo.obj(pu).os_index else {
            continue;
        };
        let owner = nodes
            .iter()
            .enumerate()
            .filter_map(|(i, &n)| {
                let o = topo.obj(n);
                let set = o.complete_cpuset.as_ref().or(o.cpuset.as_ref())?;
                set.is_set(p).then(|| {
                    (
                        set.weight().unwrap_or(u32::MAX),
                        o.os_index.unwrap_or(u32::MAX),
                        i,
                    )
                })
            })
            .min();
        if let Some((_, _, i)) = owner {
            pus[i].0 += 1;
            if topo.allowed_cpuset.is_set(p) {
                pus[i].1 += 1;
            }
        }
    }
    let dist = numa_distances(topo);
    let zones = nodes
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let o = topo.obj(n);
            let memory = match &o.attr {
                ObjAttr::Numa(a) => a.local_memory,
                _ => 0,
            };
            let allowed = o.os_index.is_none_or(|x| topo.allowed_nodeset.is_set(x));
            let mem_alloc = if allowed { memory } else { 0 };
            let costs = dist
                .and_then(|d| {
                    let row = d.index_of(n)?;
                    let mut cols: Vec<usize> = (0..d.nbobjs()).collect();
                    cols.sort_by_key(|&j| os_order(&d.objs[j]));
                    Some(
                        cols.into_iter()
                            .filter_map(|j| {
                                let v = d.value(row, j)?;
                                Some(Cost {
                                    name: zone_name(topo, d.objs[j]),
                                    value: i64::try_from(v).unwrap_or(i64::MAX),
                                })
                            })
                            .collect(),
                    )
                })
                .unwrap_or_default();
            let (cpu_cap, cpu_alloc) = pus[i];
            Zone {
                name: zone_name(topo, n),
                zone_type: "Node",
                costs,
                resources: vec![
                    Resource {
                        name: "cpu",
                        capacity: cpu_cap.to_string(),
                        allocatable: cpu_alloc.to_string(),
                        available: cpu_alloc.to_string(),
                    },
                    Resource {
                        name: "memory",
                        capacity: bytes_quantity(memory),
                        allocatable: bytes_quantity(mem_alloc),
                        available: bytes_quantity(mem_alloc),
                    },
                ],
            }
        })
        .collect();
    NodeResourceTopology {
        api_version: API_VERSION,
        kind: KIND,
        metadata: Metadata {
            name: name.to_string(),
        },
        attributes: Vec::new(),
        zones,
    }
}

/// The object as JSON (two-space indentation, a final newline).
pub fn to_json(nrt: &NodeResourceTopology) -> String {
    let mut s = serde_json::to_string_pretty(nrt).unwrap_or_default();
    s.push('\n');
    s
}

/// A YAML double-quoted scalar.  Every string is written so, whatever
/// it holds, so that no value is read back as a number, a boolean, null
/// or another YAML construct (`"16"`, `"yes"`, `"~"`, `"a: b"`); `\`
/// and `"` are escaped, and characters YAML does not allow printed
/// (C0 and C1 controls, DEL, surrogates cannot occur in Rust strings) as
/// `\uXXXX` escapes.
pub fn yaml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The object as YAML, written by hand: the document is small and fixed
/// in shape (mappings, sequences of mappings, strings and integers), so
/// a YAML library would add a dependency for little (serde_yaml, the
/// usual one, is deprecated and unmaintained); every string is
/// double-quoted (see [`yaml_string`]) and integers are plain.
pub fn to_yaml(nrt: &NodeResourceTopology) -> String {
    let q = yaml_string;
    let mut y = String::new();
    y.push_str(&format!("apiVersion: {}\n", q(nrt.api_version)));
    y.push_str(&format!("kind: {}\n", q(nrt.kind)));
    y.push_str("metadata:\n");
    y.push_str(&format!("  name: {}\n", q(&nrt.metadata.name)));
    if !nrt.attributes.is_empty() {
        y.push_str("attributes:\n");
        for a in &nrt.attributes {
            y.push_str(&format!("- name: {}\n", q(&a.name)));
            y.push_str(&format!("  value: {}\n", q(&a.value)));
        }
    }
    if nrt.zones.is_empty() {
        y.push_str("zones: []\n");
        return y;
    }
    y.push_str("zones:\n");
    for z in &nrt.zones {
        y.push_str(&format!("- name: {}\n", q(&z.name)));
        y.push_str(&format!("  type: {}\n", q(z.zone_type)));
        if !z.costs.is_empty() {
            y.push_str("  costs:\n");
            for c in &z.costs {
                y.push_str(&format!("  - name: {}\n", q(&c.name)));
                y.push_str(&format!("    value: {}\n", c.value));
            }
        }
        if z.resources.is_empty() {
            y.push_str("  resources: []\n");
        } else {
            y.push_str("  resources:\n");
            for r in &z.resources {
                y.push_str(&format!("  - name: {}\n", q(r.name)));
                y.push_str(&format!("    capacity: {}\n", q(&r.capacity)));
                y.push_str(&format!("    allocatable: {}\n", q(&r.allocatable)));
                y.push_str(&format!("    available: {}\n", q(&r.available)));
            }
        }
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_quantities_use_a_binary_suffix_only_when_exact() {
        assert_eq!(bytes_quantity(0), "0");
        assert_eq!(bytes_quantity(1000), "1000");
        assert_eq!(bytes_quantity(1024), "1Ki");
        assert_eq!(bytes_quantity(8 << 30), "8Gi");
        assert_eq!(bytes_quantity((8 << 30) + 4096), "8388612Ki");
        assert_eq!(bytes_quantity(1536 << 20), "1536Mi");
    }

    #[test]
    fn node_names_are_dns_subdomains() {
        assert!(valid_object_name("node1.example.org"));
        assert!(!valid_object_name("Node1"));
        assert!(!valid_object_name("node_1"));
        assert!(!valid_object_name("-node"));
        assert!(!valid_object_name(""));
    }

    #[test]
    fn yaml_strings_are_quoted_and_escaped() {
        assert_eq!(yaml_string("16"), "\"16\"");
        assert_eq!(yaml_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(yaml_string("x\u{1}\u{85}"), "\"x\\u0001\\u0085\"");
    }
}
