//! Exports of the graph, whole or filtered: DOT (Graphviz), GraphML and
//! JSON.  Vertices are named `obj<gp_index>` (fabric nodes
//! `fabric<GUID>`); edge labels are edge types.
//!
//! A filtered view keeps the objects of some types; each is linked to its
//! nearest kept ancestor by an edge of the type of its own edge to its
//! parent; `numa-distance` and `interconnect` edges stay between kept
//! objects.  Vertices carry their properties (type, indexes, sets, infos,
//! ids) and the dynamic properties merged into the graph.

use std::fmt::Write;

use petgraph::Direction;
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;

use wloc_fabric::export::dot_escape;
use wloc_xml::escape_text;

use crate::{Edge, TopoGraph, TypeSet, Vertex};

/// The vertices and edges an export writes.
pub struct View<'g> {
    /// The graph the vertices and edges are taken from.
    pub graph: &'g TopoGraph,
    /// The vertices written, in the order they are written.
    pub nodes: Vec<NodeIndex>,
    /// The edges written (source, target, edge), between written vertices.
    pub edges: Vec<(NodeIndex, NodeIndex, Edge)>,
}

impl<'g> View<'g> {
    /// The whole graph, or the objects of `filter`'s types.
    pub fn new(graph: &'g TopoGraph, filter: Option<&TypeSet>) -> Self {
        let g = graph.graph();
        let kept = |n: NodeIndex| filter.is_none_or(|f| f.contains_vertex(g[n].vertex_type));
        let nodes: Vec<NodeIndex> = g.node_indices().filter(|&n| kept(n)).collect();
        let parent_edge = |n: NodeIndex| {
            g.edges_directed(n, Direction::Incoming)
                .find(|e| e.weight().kind.is_tree())
        };
        let mut edges = Vec::new();
        for &n in &nodes {
            let Some(own) = parent_edge(n) else { continue };
            let mut up = own.source();
            while !kept(up) {
                match parent_edge(up) {
                    Some(e) => up = e.source(),
                    None => break,
                }
            }
            if kept(up) {
                edges.push((up, n, own.weight().clone()));
            }
        }
        for e in g.edge_references() {
            if !e.weight().kind.is_tree() && kept(e.source()) && kept(e.target()) {
                edges.push((e.source(), e.target(), e.weight().clone()));
            }
        }
        // Tree edges in vertex order, then the others grouped by type.
        edges.sort_by_key(|(a, b, e)| {
            let group = if e.kind.is_tree() {
                0
            } else {
                1 + e.kind as u8
            };
            (group, *a, *b)
        });
        View {
            graph,
            nodes,
            edges,
        }
    }

    fn v(&self, n: NodeIndex) -> &Vertex {
        self.graph.vertex(n)
    }

    /// Graphviz's DOT language.
    pub fn to_dot(&self) -> String {
        let mut s = String::from("digraph topology {\n  node [shape=box];\n");
        for &n in &self.nodes {
            let v = self.v(n);
            let mut label = format!("{} L#{}", v.vertex_type, v.logical_index);
            if let Some(os) = v.os_index {
                let _ = write!(label, " P#{os}");
            }
            if let Some(b) = &v.pci_busid {
                let _ = write!(label, "\\n{b}");
            }
            if let Some(name) = &v.name {
                let _ = write!(label, "\\n{}", dot_escape(name));
            }
            for p in &v.properties {
                let _ = write!(
                    label,
                    "\\n{} {} {}",
                    dot_escape(&p.name),
                    p.value,
                    dot_escape(&p.unit)
                );
            }
            let _ = writeln!(
                s,
                "  {} [label=\"{}\", type=\"{}\"];",
                v.id(),
                label,
                v.vertex_type
            );
        }
        for (a, b, e) in &self.edges {
            let _ = write!(
                s,
                "  {} -> {} [label=\"{}\"",
                self.v(*a).id(),
                self.v(*b).id(),
                e.kind
            );
            if let Some(l) = &e.link {
                let _ = write!(s, ", link=\"{}\"", dot_escape(l));
            }
            if let Some(w) = e.weight {
                let attr = if e.kind.weight_is_rate() {
                    "rate"
                } else {
                    "weight"
                };
                let _ = write!(s, ", {attr}={w}, style=dashed, dir=none");
            }
            s.push_str("];\n");
        }
        s.push_str("}\n");
        s
    }

    /// GraphML, with a data key per vertex property.
    pub fn to_graphml(&self) -> String {
        const NODE_KEYS: [&str; 12] = [
            "type",
            "os_index",
            "logical_index",
            "gp_index",
            "name",
            "subtype",
            "cpuset",
            "nodeset",
            "infos",
            "pci_busid",
            "osdev_name",
            "properties",
        ];
        let mut s = String::from(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n",
        );
        for k in NODE_KEYS {
            let ty = match k {
                "os_index" | "logical_index" | "gp_index" => "long",
                _ => "string",
            };
            let _ = writeln!(
                s,
                "  <key id=\"{k}\" for=\"node\" attr.name=\"{k}\" attr.type=\"{ty}\"/>"
            );
        }
        s.push_str("  <key id=\"label\" for=\"edge\" attr.name=\"label\" attr.type=\"string\"/>\n");
        s.push_str("  <key id=\"weight\" for=\"edge\" attr.name=\"weight\" attr.type=\"long\"/>\n");
        s.push_str("  <key id=\"link\" for=\"edge\" attr.name=\"link\" attr.type=\"string\"/>\n");
        s.push_str("  <key id=\"rate\" for=\"edge\" attr.name=\"rate\" attr.type=\"long\"/>\n");
        s.push_str("  <graph id=\"topology\" edgedefault=\"directed\">\n");
        for &n in &self.nodes {
            let v = self.v(n);
            let _ = writeln!(s, "    <node id=\"{}\">", v.id());
            let infos = v
                .infos
                .iter()
                .map(|(k, val)| format!("{k}={val}"))
                .collect::<Vec<_>>()
                .join(";");
            let dynamic = v
                .properties
                .iter()
                .map(|p| {
                    format!("{}={} {}", p.name, p.value, p.unit)
                        .trim_end()
                        .to_string()
                })
                .collect::<Vec<_>>()
                .join(";");
            let props: [(&str, Option<String>); 12] = [
                ("type", Some(v.vertex_type.to_string())),
                ("os_index", v.os_index.map(|i| i.to_string())),
                ("logical_index", Some(v.logical_index.to_string())),
                ("gp_index", v.gp_index.map(|i| i.to_string())),
                ("name", v.name.clone()),
                ("subtype", v.subtype.clone()),
                ("cpuset", v.cpuset.clone()),
                ("nodeset", v.nodeset.clone()),
                ("infos", (!infos.is_empty()).then_some(infos)),
                ("pci_busid", v.pci_busid.clone()),
                ("osdev_name", v.osdev_name.clone()),
                ("properties", (!dynamic.is_empty()).then_some(dynamic)),
            ];
            for (k, val) in props {
                if let Some(val) = val {
                    let _ = writeln!(s, "      <data key=\"{k}\">{}</data>", escape_text(&val));
                }
            }
            s.push_str("    </node>\n");
        }
        for (a, b, e) in &self.edges {
            let _ = write!(
                s,
                "    <edge source=\"{}\" target=\"{}\"><data key=\"label\">{}</data>",
                self.v(*a).id(),
                self.v(*b).id(),
                e.kind
            );
            if let Some(l) = &e.link {
                let _ = write!(s, "<data key=\"link\">{}</data>", escape_text(l));
            }
            if let Some(w) = e.weight {
                let key = if e.kind.weight_is_rate() {
                    "rate"
                } else {
                    "weight"
                };
                let _ = write!(s, "<data key=\"{key}\">{w}</data>");
            }
            s.push_str("</edge>\n");
        }
        s.push_str("  </graph>\n</graphml>\n");
        s
    }

    /// JSON: `{"vertices": [...], "edges": [...]}`.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        let vertices: Vec<_> = self
            .nodes
            .iter()
            .map(|&n| {
                let v = self.v(n);
                let infos: serde_json::Map<String, serde_json::Value> = v
                    .infos
                    .iter()
                    .map(|(k, val)| (k.clone(), json!(val)))
                    .collect();
                json!({
                    "id": v.id(),
                    "type": v.vertex_type.to_string(),
                    "os_index": v.os_index,
                    "logical_index": v.logical_index,
                    "gp_index": v.gp_index,
                    "name": v.name,
                    "subtype": v.subtype,
                    "cpuset": v.cpuset,
                    "nodeset": v.nodeset,
                    "infos": infos,
                    "pci_busid": v.pci_busid,
                    "osdev_name": v.osdev_name,
                    "properties": v.properties.iter().map(|p| json!({
                        "name": p.name,
                        "value": p.value,
                        "unit": p.unit,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        let edges: Vec<_> = self
            .edges
            .iter()
            .map(|(a, b, e)| {
                let mut o = json!({
                    "source": self.v(*a).id(),
                    "target": self.v(*b).id(),
                    "type": e.kind.name(),
                });
                if let Some(l) = &e.link {
                    o["link"] = json!(l);
                }
                if let Some(w) = e.weight {
                    let key = if e.kind.weight_is_rate() {
                        "rate"
                    } else {
                        "weight"
                    };
                    o[key] = json!(w);
                }
                o
            })
            .collect();
        json!({ "vertices": vertices, "edges": edges })
    }
}
