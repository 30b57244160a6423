//! JSON export of the whole topology model.
//!
//! The document nests objects as the tree does: each object lists its
//! memory, normal, I/O and misc children.  Sets are written in hwloc's
//! bitmap string form so they stay readable and exact; distances, memory
//! attributes and CPU kinds refer to objects by their `gp_index`.

use serde::Serialize;
use wloc_core::Topology;
use wloc_core::cpukinds::CpuKind;
use wloc_core::memattrs::Initiator;
use wloc_core::object::{Info, ObjAttr, ObjId};

#[derive(Serialize)]
struct JsonTopology<'a> {
    format: &'static str,
    root: JsonObject<'a>,
    allowed_cpuset: String,
    allowed_nodeset: String,
    #[serde(skip_serializing_if = "<[Info]>::is_empty")]
    infos: &'a [Info],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    distances: Vec<JsonDistances<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    memattrs: Vec<JsonMemAttr<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    cpukinds: Vec<JsonCpuKind<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    memtiers: Vec<JsonMemTier>,
}

#[derive(Serialize)]
struct JsonObject<'a> {
    #[serde(rename = "type")]
    obj_type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    subtype: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    os_index: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    gp_index: u64,
    depth: i32,
    logical_index: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    cpuset: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    complete_cpuset: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nodeset: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    complete_nodeset: Option<String>,
    #[serde(skip_serializing_if = "is_zero")]
    total_memory: u64,
    #[serde(skip_serializing_if = "is_none_attr")]
    attr: &'a ObjAttr,
    #[serde(skip_serializing_if = "<[Info]>::is_empty")]
    infos: &'a [Info],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    memory_children: Vec<JsonObject<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    children: Vec<JsonObject<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    io_children: Vec<JsonObject<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    misc_children: Vec<JsonObject<'a>>,
}

#[derive(Serialize)]
struct JsonDistances<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    kind: u64,
    objects: Vec<u64>,
    values: &'a [u64],
}

#[derive(Serialize)]
struct JsonMemAttrValue {
    target: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    initiator_cpuset: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    initiator: Option<u64>,
    value: u64,
}

#[derive(Serialize)]
struct JsonMemAttr<'a> {
    name: &'a str,
    flags: u64,
    values: Vec<JsonMemAttrValue>,
}

#[derive(Serialize)]
struct JsonCpuKind<'a> {
    cpuset: String,
    efficiency: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    forced_efficiency: Option<i32>,
    infos: &'a [Info],
}

#[derive(Serialize)]
struct JsonMemTier {
    kinds: u64,
    nodeset: String,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_none_attr(a: &&ObjAttr) -> bool {
    matches!(a, ObjAttr::None)
}

fn object(topo: &Topology, id: ObjId) -> JsonObject<'_> {
    let o = topo.obj(id);
    let kids = |ids: &[ObjId]| ids.iter().map(|&c| object(topo, c)).collect::<Vec<_>>();
    JsonObject {
        obj_type: o.obj_type.xml_name(),
        subtype: o.subtype.as_deref(),
        os_index: o.os_index,
        name: o.name.as_deref(),
        gp_index: o.gp_index,
        depth: o.depth().to_i32(),
        logical_index: o.logical_index(),
        cpuset: o.cpuset.as_ref().map(|s| s.to_string()),
        complete_cpuset: o.complete_cpuset.as_ref().map(|s| s.to_string()),
        nodeset: o.nodeset.as_ref().map(|s| s.to_string()),
        complete_nodeset: o.complete_nodeset.as_ref().map(|s| s.to_string()),
        total_memory: o.total_memory,
        attr: &o.attr,
        infos: &o.infos,
        memory_children: kids(o.memory_children()),
        children: kids(o.children()),
        io_children: kids(o.io_children()),
        misc_children: kids(o.misc_children()),
    }
}

fn cpukind(k: &CpuKind) -> JsonCpuKind<'_> {
    JsonCpuKind {
        cpuset: k.cpuset.to_string(),
        efficiency: k.efficiency,
        forced_efficiency: k.forced_efficiency,
        infos: &k.infos,
    }
}

/// Renders the topology as a pretty-printed JSON document.
pub fn export(topo: &Topology) -> String {
    let gp = |id: ObjId| topo.obj(id).gp_index;
    let doc = JsonTopology {
        format: "wloc-topology-1",
        root: object(topo, topo.root()),
        allowed_cpuset: topo.allowed_cpuset.to_string(),
        allowed_nodeset: topo.allowed_nodeset.to_string(),
        infos: &topo.infos,
        distances: topo
            .distances
            .iter()
            .map(|d| JsonDistances {
                name: d.name.as_deref(),
                kind: d.kind,
                objects: d.objs.iter().map(|&o| gp(o)).collect(),
                values: &d.values,
            })
            .collect(),
        memattrs: topo
            .memattrs
            .iter()
            .map(|m| JsonMemAttr {
                name: &m.name,
                flags: m.flags,
                values: m
                    .values
                    .iter()
                    .map(|v| JsonMemAttrValue {
                        target: gp(v.target),
                        initiator_cpuset: match &v.initiator {
                            Some(Initiator::CpuSet(c)) => Some(c.to_string()),
                            _ => None,
                        },
                        initiator: match &v.initiator {
                            Some(Initiator::Object(o)) => Some(gp(*o)),
                            _ => None,
                        },
                        value: v.value,
                    })
                    .collect(),
            })
            .collect(),
        cpukinds: topo.cpukinds.iter().map(cpukind).collect(),
        memtiers: topo
            .memtiers
            .iter()
            .map(|t| JsonMemTier {
                kinds: t.kinds,
                nodeset: t.nodeset.to_string(),
            })
            .collect(),
    };
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_else(|e| {
        // Serialising plain strings and numbers cannot fail; keep a valid document anyway.
        format!("{{\"error\":\"{e}\"}}")
    });
    s.push('\n');
    s
}
