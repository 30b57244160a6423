//! Exports of a fabric: GraphML, GEXF 1.3, DOT, JSON and an SVG picture.
//!
//! Every format holds the same graph: one vertex per switch, channel
//! adapter and router of every subnet (id `SUBNET/GUID`), with its kind,
//! GUID, description, host and subnet; one edge per pair of nodes cabled
//! together, with the number of cables, their widths and speeds and the
//! total data rate in Gb/s.  The writers are small and hand-written: each
//! format is a few fixed elements, and escaping is the only subtle part
//! (done by [`xml_escape`] and [`dot_escape`]).

use std::fmt::Write;

use petgraph::visit::{EdgeRef, IntoEdgeReferences};
use serde_json::json;
use wloc_ib::NodeKind;

use crate::{Fabric, FabricEdge, SubnetGraph};

use wloc_xml::escape_text;

/// Escapes text for a DOT double-quoted string.
pub fn dot_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if c.is_control() => o.push(' '),
            c => o.push(c),
        }
    }
    o
}

fn node_id(g: &SubnetGraph, guid: u64) -> String {
    format!("{}/{guid:016x}", g.name)
}

fn rate(r: f64) -> String {
    // Up to three decimals, trailing zeros dropped (32, 54.545).
    let s = format!("{r:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn cables_text(e: &FabricEdge) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for c in &e.cables {
        let w = c.width.map_or("?".to_string(), |w| format!("{w}x"));
        let s = c.speed.map_or("???", |s| s.name());
        let k = format!("{w} {s}");
        match counts.iter_mut().find(|(x, _)| *x == k) {
            Some((_, n)) => *n += 1,
            None => counts.push((k, 1)),
        }
    }
    counts
        .iter()
        .map(|(k, n)| format!("{n}×{k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

struct V {
    id: String,
    kind: &'static str,
    guid: String,
    desc: String,
    host: String,
    subnet: String,
}

struct E {
    id: String,
    from: String,
    to: String,
    cables: usize,
    gbps: f64,
    text: String,
}

fn flatten(f: &Fabric) -> (Vec<V>, Vec<E>) {
    let mut vs = Vec::new();
    let mut es = Vec::new();
    for g in &f.subnets {
        let mut idx: Vec<_> = g.graph.node_indices().collect();
        idx.sort_by_key(|&i| (g.graph[i].kind, g.graph[i].guid));
        for i in idx {
            let n = &g.graph[i];
            vs.push(V {
                id: node_id(g, n.guid),
                kind: n.kind.name(),
                guid: format!("{:#018x}", n.guid),
                desc: n.description.clone(),
                host: n.host.map(|h| f.hosts[h].name.clone()).unwrap_or_default(),
                subnet: g.name.clone(),
            });
        }
        let mut edges: Vec<_> = g.graph.edge_references().collect();
        edges.sort_by_key(|e| (g.graph[e.source()].guid, g.graph[e.target()].guid));
        for e in edges {
            let (a, b) = (&g.graph[e.source()], &g.graph[e.target()]);
            es.push(E {
                id: format!("{}/{:016x}-{:016x}", g.name, a.guid, b.guid),
                from: node_id(g, a.guid),
                to: node_id(g, b.guid),
                cables: e.weight().cables.len(),
                gbps: e.weight().gbps(),
                text: cables_text(e.weight()),
            });
        }
    }
    (vs, es)
}

/// GraphML, with `kind`, `guid`, `description`, `host`, `subnet` on nodes
/// and `cables`, `gbps`, `links` on edges.
pub fn graphml(f: &Fabric) -> String {
    let (vs, es) = flatten(f);
    let mut o = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n",
    );
    for (id, dom, ty) in [
        ("kind", "node", "string"),
        ("guid", "node", "string"),
        ("description", "node", "string"),
        ("host", "node", "string"),
        ("subnet", "node", "string"),
        ("cables", "edge", "int"),
        ("gbps", "edge", "double"),
        ("links", "edge", "string"),
    ] {
        let _ = writeln!(
            o,
            "  <key id=\"{id}\" for=\"{dom}\" attr.name=\"{id}\" attr.type=\"{ty}\"/>"
        );
    }
    o.push_str("  <graph id=\"fabric\" edgedefault=\"undirected\">\n");
    for v in &vs {
        let _ = writeln!(o, "    <node id=\"{}\">", escape_text(&v.id));
        for (k, val) in [
            ("kind", v.kind),
            ("guid", &v.guid),
            ("description", &v.desc),
            ("host", &v.host),
            ("subnet", &v.subnet),
        ] {
            let _ = writeln!(o, "      <data key=\"{k}\">{}</data>", escape_text(val));
        }
        o.push_str("    </node>\n");
    }
    for e in &es {
        let _ = writeln!(
            o,
            "    <edge id=\"{}\" source=\"{}\" target=\"{}\">\n      <data key=\"cables\">{}</data>\n      <data key=\"gbps\">{}</data>\n      <data key=\"links\">{}</data>\n    </edge>",
            escape_text(&e.id),
            escape_text(&e.from),
            escape_text(&e.to),
            e.cables,
            rate(e.gbps),
            escape_text(&e.text)
        );
    }
    o.push_str("  </graph>\n</graphml>\n");
    o
}

/// GEXF 1.3: node attributes as in [`graphml`], edge weight = total Gb/s.
pub fn gexf(f: &Fabric) -> String {
    let (vs, es) = flatten(f);
    let mut o = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gexf xmlns=\"http://gexf.net/1.3\" version=\"1.3\">\n  <meta>\n    <creator>wloc</creator>\n    <description>InfiniBand fabric</description>\n  </meta>\n  <graph mode=\"static\" defaultedgetype=\"undirected\">\n",
    );
    o.push_str("    <attributes class=\"node\">\n");
    for (i, n) in ["kind", "guid", "host", "subnet"].iter().enumerate() {
        let _ = writeln!(
            o,
            "      <attribute id=\"{i}\" title=\"{n}\" type=\"string\"/>"
        );
    }
    o.push_str("    </attributes>\n    <attributes class=\"edge\">\n      <attribute id=\"0\" title=\"cables\" type=\"integer\"/>\n      <attribute id=\"1\" title=\"links\" type=\"string\"/>\n    </attributes>\n    <nodes>\n");
    for v in &vs {
        let _ = writeln!(
            o,
            "      <node id=\"{}\" label=\"{}\">\n        <attvalues>",
            escape_text(&v.id),
            escape_text(&v.desc)
        );
        for (i, val) in [v.kind, &v.guid, &v.host, &v.subnet].iter().enumerate() {
            let _ = writeln!(
                o,
                "          <attvalue for=\"{i}\" value=\"{}\"/>",
                escape_text(val)
            );
        }
        o.push_str("        </attvalues>\n      </node>\n");
    }
    o.push_str("    </nodes>\n    <edges>\n");
    for e in &es {
        // GEXF weights must be positive: an edge of unknown rate weighs 0.001.
        let w = if e.gbps > 0.0 { e.gbps } else { 0.001 };
        let _ = writeln!(
            o,
            "      <edge id=\"{}\" source=\"{}\" target=\"{}\" weight=\"{}\" label=\"{} Gb/s\">\n        <attvalues>\n          <attvalue for=\"0\" value=\"{}\"/>\n          <attvalue for=\"1\" value=\"{}\"/>\n        </attvalues>\n      </edge>",
            escape_text(&e.id),
            escape_text(&e.from),
            escape_text(&e.to),
            rate(w),
            rate(e.gbps),
            e.cables,
            escape_text(&e.text)
        );
    }
    o.push_str("    </edges>\n  </graph>\n</gexf>\n");
    o
}

/// DOT: one cluster per subnet, switches as boxes, adapters as ellipses
/// labelled with their host, edges labelled with their rate and cables.
pub fn dot(f: &Fabric) -> String {
    let (vs, es) = flatten(f);
    let mut o = String::from("graph fabric {\n  node [fontsize=10];\n  edge [fontsize=8];\n");
    for (si, g) in f.subnets.iter().enumerate() {
        let _ = writeln!(
            o,
            "  subgraph \"cluster_{si}\" {{\n    label=\"{}\";",
            dot_escape(&g.name)
        );
        for v in vs.iter().filter(|v| v.subnet == g.name) {
            let shape = if v.kind == "switch" { "box" } else { "ellipse" };
            let label = if v.host.is_empty() {
                v.desc.clone()
            } else {
                format!("{}\n{}", v.host, v.desc)
            };
            let _ = writeln!(
                o,
                "    \"{}\" [shape={shape}, label=\"{}\", kind=\"{}\", guid=\"{}\"];",
                dot_escape(&v.id),
                dot_escape(&label).replace('\n', "\\n"),
                v.kind,
                v.guid
            );
        }
        o.push_str("  }\n");
    }
    for e in &es {
        let _ = writeln!(
            o,
            "  \"{}\" -- \"{}\" [label=\"{} Gb/s\", gbps={}, cables={}, links=\"{}\"];",
            dot_escape(&e.from),
            dot_escape(&e.to),
            rate(e.gbps),
            rate(e.gbps),
            e.cables,
            dot_escape(&e.text)
        );
    }
    o.push_str("}\n");
    o
}

/// JSON: `{"subnets": [{"name", "nodes": [...], "edges": [...]}], "hosts": [...]}`.
pub fn json(f: &Fabric) -> serde_json::Value {
    let (vs, es) = flatten(f);
    let subnets: Vec<_> = f
        .subnets
        .iter()
        .map(|g| {
            let nodes: Vec<_> = vs
                .iter()
                .filter(|v| v.subnet == g.name)
                .map(|v| {
                    json!({"id": v.id, "kind": v.kind, "guid": v.guid, "description": v.desc,
                           "host": if v.host.is_empty() { serde_json::Value::Null } else { v.host.clone().into() }})
                })
                .collect();
            let edges: Vec<_> = es
                .iter()
                .filter(|e| e.id.starts_with(&format!("{}/", g.name)))
                .map(|e| {
                    json!({"source": e.from, "target": e.to, "cables": e.cables,
                           "gbps": e.gbps, "links": e.text})
                })
                .collect();
            json!({"name": g.name, "cables": g.cable_count, "nodes": nodes, "edges": edges})
        })
        .collect();
    let hosts: Vec<_> = f
        .hosts
        .iter()
        .map(|h| {
            let nics: Vec<_> = h
                .nics
                .iter()
                .map(|n| {
                    let g = &f.subnets[n.subnet];
                    json!({"subnet": g.name, "node": node_id(g, g.graph[n.node].guid), "port": n.port, "joined_by": n.joined_by.name(),
                           "device": n.osdev.and_then(|d| h.topology.as_ref().and_then(|t| t.obj(d).name.clone()))})
                })
                .collect();
            json!({"name": h.name, "topology": h.topology.is_some(), "nics": nics})
        })
        .collect();
    json!({"subnets": subnets, "hosts": hosts})
}

/// An SVG picture: one band per subnet, switches in rows by fat-tree
/// level (the top level highest), adapters at the bottom labelled with
/// their host; edges as lines, thicker for more Gb/s.
pub fn svg(f: &Fabric) -> String {
    const W: f64 = 90.0;
    const H: f64 = 70.0;
    let mut body = String::new();
    let mut y0 = 20.0;
    let mut width: f64 = 400.0;
    for (si, g) in f.subnets.iter().enumerate() {
        let levels = f.switch_levels(si);
        let top = levels.iter().map(|l| l.1).max().unwrap_or(0);
        let mut rows: Vec<Vec<petgraph::stable_graph::NodeIndex>> =
            vec![Vec::new(); top as usize + 1];
        let leveled: std::collections::HashMap<_, _> = levels.iter().copied().collect();
        for (n, l) in &levels {
            rows[(top - l) as usize].push(*n);
        }
        // Switches without adapters nearby and without a level (isolated)
        // go with the top row; adapters and routers at the bottom.
        for n in g.of_kind(NodeKind::Switch) {
            if !leveled.contains_key(&n) {
                rows[0].push(n);
            }
        }
        let mut bottom = g.of_kind(NodeKind::Ca);
        bottom.extend(g.of_kind(NodeKind::Router));
        rows.push(bottom);
        let mut pos = std::collections::HashMap::new();
        let _ = writeln!(
            body,
            "  <text x=\"10\" y=\"{}\" font-size=\"14\" font-weight=\"bold\">subnet {}</text>",
            y0 + 14.0,
            escape_text(&g.name)
        );
        let mut y = y0 + 40.0;
        for row in &rows {
            if row.is_empty() {
                continue;
            }
            for (i, n) in row.iter().enumerate() {
                pos.insert(*n, (20.0 + i as f64 * W + W / 2.0, y));
            }
            width = width.max(40.0 + row.len() as f64 * W);
            y += H;
        }
        for e in g.graph.edge_references() {
            let (Some(a), Some(b)) = (pos.get(&e.source()), pos.get(&e.target())) else {
                continue;
            };
            let sw = 0.5 + (e.weight().gbps() / 32.0).min(8.0);
            let _ = writeln!(
                body,
                "  <line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#888\" stroke-width=\"{sw:.2}\"><title>{} Gb/s ({})</title></line>",
                a.0,
                a.1,
                b.0,
                b.1,
                rate(e.weight().gbps()),
                escape_text(&cables_text(e.weight()))
            );
        }
        let mut nodes: Vec<_> = pos.iter().collect();
        nodes.sort_by(|a, b| a.1.0.total_cmp(&b.1.0).then(a.1.1.total_cmp(&b.1.1)));
        for (n, (x, y)) in nodes {
            let v = &g.graph[*n];
            let label = match v.host {
                Some(h) => f.hosts[h].name.clone(),
                None => v.description.chars().take(14).collect(),
            };
            let (fill, shape) = if v.kind == NodeKind::Switch {
                (
                    "#cde",
                    format!(
                        "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"80\" height=\"24\" rx=\"3\"",
                        x - 40.0,
                        y - 12.0
                    ),
                )
            } else {
                (
                    "#efc",
                    format!("<ellipse cx=\"{x:.1}\" cy=\"{y:.1}\" rx=\"40\" ry=\"12\""),
                )
            };
            let _ = writeln!(
                body,
                "  {shape} fill=\"{fill}\" stroke=\"#333\"><title>{} {:#018x}</title></{}>\n  <text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"9\" text-anchor=\"middle\">{}</text>",
                escape_text(&v.description),
                v.guid,
                if v.kind == NodeKind::Switch {
                    "rect"
                } else {
                    "ellipse"
                },
                y + 3.0,
                escape_text(&label)
            );
        }
        y0 = y + 10.0;
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{y0:.0}\" viewBox=\"0 0 {width:.0} {y0:.0}\" font-family=\"sans-serif\">\n  <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n{body}</svg>\n"
    )
}
