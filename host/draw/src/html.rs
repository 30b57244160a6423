//! An interactive page: the SVG picture, with each object's attributes,
//! sets and infos shown on hover or click, a search box, and the bound
//! processes highlighted on demand.  One self-contained file: no network,
//! no external script or style.
//!
//! The page reads commands from its URL fragment, so that it can be
//! driven without a pointer (scripts, headless browsers):
//! `#click=Core_3_rect` clicks an element, `#search=L2` searches,
//! `#pid=1234` highlights a process's PUs; several are joined with `&`.

use std::fmt::Write;

use wloc_core::bitmap::CpuSet;
use wloc_core::object::{BridgeUpstream, ObjAttr};
use wloc_core::{ObjId, Topology};

use crate::Scene;

/// A process whose binding the page can highlight (what `wloc ps` lists).
#[derive(Clone, Debug)]
pub struct Process {
    /// Process id.
    pub pid: i32,
    /// Its name.
    pub name: String,
    /// The PUs it is bound to.
    pub cpuset: CpuSet,
}

/// A JSON string literal, safe inside a `<script>` element.
fn js(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            // `</script>` and `<!--` must not appear in the script.
            '<' => o.push_str("\\u003c"),
            '>' => o.push_str("\\u003e"),
            '&' => o.push_str("\\u0026"),
            c if (c as u32) < 0x20 || c == '\u{2028}' || c == '\u{2029}' => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// The attribute rows of an object: (name, value).
fn attributes(topo: &Topology, id: ObjId) -> Vec<(String, String)> {
    let o = topo.obj(id);
    let mut v: Vec<(String, String)> = Vec::new();
    let mut add = |k: &str, val: String| v.push((k.to_string(), val));
    add("type", o.obj_type.xml_name().to_string());
    if let Some(s) = &o.subtype {
        add("subtype", s.clone());
    }
    if let Some(n) = &o.name {
        add("name", n.clone());
    }
    add("logical index", o.logical_index().to_string());
    if let Some(os) = o.os_index {
        add("os index", os.to_string());
    }
    add("depth", o.depth().to_i32().to_string());
    if o.total_memory != 0 {
        add("total memory", format!("{} bytes", o.total_memory));
    }
    match &o.attr {
        ObjAttr::Numa(n) => {
            add("local memory", format!("{} bytes", n.local_memory));
            for p in &n.page_types {
                add("page type", format!("{} bytes x {}", p.size, p.count));
            }
        }
        ObjAttr::Cache(c) => {
            add("cache size", format!("{} bytes", c.size));
            add("cache line size", c.linesize.to_string());
            add("associativity", c.associativity.to_string());
        }
        ObjAttr::Group(g) => add("group depth", g.depth.to_string()),
        ObjAttr::Pci(p) => {
            add(
                "bus id",
                format!(
                    "{:04x}:{:02x}:{:02x}.{:01x}",
                    p.domain, p.bus, p.dev, p.func
                ),
            );
            add(
                "vendor:device",
                format!("{:04x}:{:04x}", p.vendor_id, p.device_id),
            );
            add("class", format!("{:04x}", p.class_id));
            if p.linkspeed != 0.0 {
                add("link speed", format!("{:.2} GB/s", p.linkspeed));
            }
        }
        ObjAttr::Bridge(b) => {
            if let BridgeUpstream::Pci(p) = &b.upstream {
                add(
                    "bus id",
                    format!(
                        "{:04x}:{:02x}:{:02x}.{:01x}",
                        p.domain, p.bus, p.dev, p.func
                    ),
                );
            }
            add(
                "buses",
                format!(
                    "{:04x}:[{:02x}-{:02x}]",
                    b.domain, b.secondary_bus, b.subordinate_bus
                ),
            );
        }
        _ => {}
    }
    if let Some(s) = &o.cpuset {
        add("cpuset", s.to_hwloc_string());
        add("cpus", s.to_list_string());
    }
    if let Some(s) = &o.complete_cpuset {
        add("complete cpuset", s.to_hwloc_string());
    }
    if let Some(s) = &o.nodeset {
        add("nodeset", s.to_hwloc_string());
    }
    for i in &o.infos {
        add(&format!("info {}", i.name), i.value.clone());
    }
    if id == topo.root() {
        for i in &topo.infos {
            add(&format!("info {}", i.name), i.value.clone());
        }
    }
    v
}

/// The objects' table as a JavaScript object keyed by `Type_logical`, the
/// prefix of the picture's element ids.
fn objects_json(topo: &Topology) -> String {
    let mut out = String::from("{");
    let mut first = true;
    for id in topo.iter_dfs() {
        let o = topo.obj(id);
        let key = format!("{}_{}", crate::type_name(o, false), o.logical_index());
        if !first {
            out.push(',');
        }
        first = false;
        let _ = write!(
            out,
            "\n{}:{{\"t\":{},\"l\":{},\"os\":{},\"name\":{},\"sub\":{},\"label\":{},\"a\":[",
            js(&key),
            js(o.obj_type.xml_name()),
            o.logical_index(),
            o.os_index.map(i64::from).unwrap_or(-1),
            js(o.name.as_deref().unwrap_or("")),
            js(o.subtype.as_deref().unwrap_or("")),
            js(&format!(
                "{} L#{}",
                crate::type_name(o, false),
                o.logical_index()
            )),
        );
        for (i, (k, v)) in attributes(topo, id).iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "[{},{}]", js(k), js(v));
        }
        out.push_str("]}");
    }
    out.push_str("\n}");
    out
}

fn processes_json(ps: &[Process]) -> String {
    let mut out = String::from("[");
    for (i, p) in ps.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let pus: Vec<String> = p.cpuset.iter().map(|c| c.to_string()).collect();
        let _ = write!(
            out,
            "\n{{\"pid\":{},\"name\":{},\"set\":{},\"pus\":[{}]}}",
            p.pid,
            js(&p.name),
            js(&p.cpuset.to_list_string()),
            pus.join(",")
        );
    }
    out.push_str("\n]");
    out
}

const STYLE: &str = r#"
body { font-family: sans-serif; margin: 0; display: flex; flex-direction: column; height: 100vh; }
#bar { padding: 6px; background: #eee; border-bottom: 1px solid #aaa; display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }
#main { display: flex; flex: 1; min-height: 0; }
#picture { flex: 1; overflow: auto; padding: 4px; }
#info { width: 26em; overflow: auto; border-left: 1px solid #aaa; padding: 6px; font-size: 13px; }
#info table { border-collapse: collapse; }
#info td { border-bottom: 1px solid #ddd; padding: 2px 4px; vertical-align: top; word-break: break-all; }
#info td:first-child { color: #555; white-space: nowrap; }
#results { font-size: 13px; }
svg rect, svg text { cursor: pointer; }
svg rect.hover { stroke: #06c; stroke-width: 2px; }
svg rect.selected { stroke: #06c; stroke-width: 3px; }
svg rect.hit { stroke: #d00; stroke-width: 3px; }
svg rect.bound { fill: #ffd400; }
"#;

const SCRIPT: &str = r##"
"use strict";
const svg = document.querySelector("#picture svg");
const info = document.getElementById("info");
let selected = null;
function keyOf(el) {
  const m = el && el.id && el.id.match(/^(.*_\d+)_(rect|text|line)(_\d+)?$/);
  return m && OBJS[m[1]] ? m[1] : null;
}
function rectsOf(key) {
  return Array.from(svg.querySelectorAll("rect")).filter(r => keyOf(r) === key);
}
function show(key) {
  const o = OBJS[key];
  info.textContent = "";
  const h = document.createElement("h3");
  h.id = "info-title";
  h.textContent = o.label + (o.name ? " " + o.name : "");
  info.appendChild(h);
  const t = document.createElement("table");
  t.id = "info-table";
  for (const [k, v] of o.a) {
    const tr = t.insertRow();
    tr.insertCell().textContent = k;
    tr.insertCell().textContent = v;
  }
  info.appendChild(t);
}
function select(key) {
  for (const r of svg.querySelectorAll("rect.selected")) r.classList.remove("selected");
  selected = key;
  if (key) { for (const r of rectsOf(key)) r.classList.add("selected"); show(key); }
}
svg.addEventListener("mouseover", e => {
  const k = keyOf(e.target);
  for (const r of svg.querySelectorAll("rect.hover")) r.classList.remove("hover");
  if (k) { for (const r of rectsOf(k)) r.classList.add("hover"); show(k); }
});
svg.addEventListener("mouseout", () => {
  for (const r of svg.querySelectorAll("rect.hover")) r.classList.remove("hover");
  if (selected) show(selected);
});
svg.addEventListener("click", e => { select(keyOf(e.target)); });
function search(q) {
  for (const r of svg.querySelectorAll("rect.hit")) r.classList.remove("hit");
  const res = document.getElementById("results");
  q = q.trim().toLowerCase();
  if (!q) { res.textContent = ""; return []; }
  const m = q.match(/^([a-z0-9]+)\s*[:# ]\s*(l#|p#)?(\d+)$/);
  const found = [];
  for (const [key, o] of Object.entries(OBJS)) {
    const ty = key.replace(/_\d+$/, "").toLowerCase();
    let ok;
    if (m) {
      const idx = Number(m[3]);
      ok = (ty === m[1] || o.t.toLowerCase() === m[1]) && (m[2] === "p#" ? o.os === idx : o.l === idx);
    } else {
      ok = ty === q || o.t.toLowerCase() === q || (o.name && o.name.toLowerCase().includes(q))
        || (o.sub && o.sub.toLowerCase().includes(q));
    }
    if (ok) found.push(key);
  }
  let shown = 0;
  for (const k of found) { const rs = rectsOf(k); if (rs.length) shown++; for (const r of rs) r.classList.add("hit"); }
  res.textContent = found.length + " found (" + shown + " drawn): " + found.map(k => OBJS[k].label).join(", ");
  return found;
}
document.getElementById("search").addEventListener("input", e => search(e.target.value));
function highlight(pid) {
  for (const r of svg.querySelectorAll("rect.bound")) r.classList.remove("bound");
  const p = PROCS.find(p => String(p.pid) === String(pid));
  const out = document.getElementById("bound");
  if (!p) { out.textContent = ""; return; }
  const pus = new Set(p.pus);
  let n = 0;
  for (const [key, o] of Object.entries(OBJS)) {
    if (o.t === "PU" && pus.has(o.os)) for (const r of rectsOf(key)) { r.classList.add("bound"); n++; }
  }
  out.textContent = p.pid + " " + p.name + " bound to PUs " + p.set + " (" + n + " drawn)";
}
const procs = document.getElementById("procs");
for (const p of PROCS) {
  const opt = document.createElement("option");
  opt.value = p.pid;
  opt.textContent = p.pid + " " + p.name + " (" + p.set + ")";
  procs.appendChild(opt);
}
procs.addEventListener("change", e => highlight(e.target.value));
function fragment() {
  for (const part of decodeURIComponent(location.hash.slice(1)).split("&")) {
    const i = part.indexOf("=");
    if (i < 0) continue;
    const k = part.slice(0, i), v = part.slice(i + 1);
    if (k === "click") {
      const el = document.getElementById(v);
      if (el) el.dispatchEvent(new MouseEvent("click", { bubbles: true }));
    } else if (k === "search") {
      document.getElementById("search").value = v;
      search(v);
    } else if (k === "pid") {
      procs.value = v;
      highlight(v);
    }
  }
}
window.addEventListener("hashchange", fragment);
fragment();
"##;

/// Renders a scene laid out for SVG as a self-contained interactive page.
pub fn render(topo: &Topology, scene: &Scene, title: &str, processes: &[Process]) -> String {
    let svg = crate::svg::render(topo, scene);
    let svg = svg.split_once("?>\n").map(|(_, rest)| rest).unwrap_or(&svg);
    let root_label = wloc_xml::escape_text(title);
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{root_label}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<div id=\"bar\"><strong>{root_label}</strong>\n<label>Search <input id=\"search\" type=\"search\" placeholder=\"core, L2, pu:3, pu p#5, eth0\"></label>\n<span id=\"results\"></span>\n<label>Process <select id=\"procs\"><option value=\"\">(none)</option></select></label>\n<span id=\"bound\"></span></div>\n<div id=\"main\"><div id=\"picture\">\n{svg}</div>\n<div id=\"info\">Hover over or click an object.</div></div>\n<script>\nconst OBJS = {};\nconst PROCS = {};\n{SCRIPT}</script>\n</body>\n</html>\n",
        objects_json(topo),
        processes_json(processes),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_strings_cannot_close_the_script() {
        assert_eq!(js("</script>"), "\"\\u003c/script\\u003e\"");
        assert_eq!(js("a\"b\\"), "\"a\\\"b\\\\\"");
    }

    #[test]
    fn pages_carry_every_object() {
        let topo = wloc_core::synthetic::parse("pack:2 core:2 pu:2")
            .unwrap()
            .build(Topology::new())
            .unwrap();
        let scene = crate::layout(&topo, &crate::DrawOptions::default(), crate::Backend::Svg);
        let page = render(&topo, &scene, "t", &[]);
        for key in ["\"Package_1\":", "\"Core_3\":", "\"PU_7\":"] {
            assert!(page.contains(key), "{key} missing");
        }
        // Self-contained: nothing is fetched (the namespace URIs are names).
        assert!(!page.contains("src="));
        assert!(!page.contains("href="));
    }
}
