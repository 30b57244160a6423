//! `wloc graph`: the topology as a graph (see the crate `wloc-graph`):
//! exports to DOT, GraphML or JSON, and queries over the tree edges
//! (`path`, `near`, `hops`) with objects named in hwloc's location
//! language (`core:3`, `pci=0000:02:00.0`, `os=eth0`).

use clap::{Args, Subcommand, ValueEnum};
use wloc_core::{Topology, TypeFilter};
use wloc_graph::export::View;
use wloc_graph::{TopoGraph, TypeSet};
use wloc_locality::WordOptions;

use super::topology::{keep_all, InputArgs, Load, LoadErrors, TopologyArgs};

/// Options of `wloc graph`.
#[derive(Args, Debug)]
pub struct GraphArgs {
    #[command(subcommand)]
    query: Option<Query>,
    #[command(flatten)]
    input: InputArgs,
    /// Only export objects of these types and classes (comma-separated:
    /// cache, compute, io, memory or type names such as core, l3, numa, pci, os).
    #[arg(long, value_name = "TYPES")]
    filter: Option<String>,
    /// The export format.
    #[arg(long = "of", value_enum, value_name = "FORMAT")]
    format: Option<Format>,
    /// Write the export to this file instead of standard output.
    #[arg(value_name = "OUT")]
    out: Option<String>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    Dot,
    Graphml,
    Json,
}

#[derive(Subcommand, Debug)]
enum Query {
    /// The shortest path between two objects over the tree edges, one object a line.
    Path {
        #[command(flatten)]
        input: InputArgs,
        /// A location naming one object (`pu:0`, `os=eth0`, `pci=0000:02:00.0`).
        from: String,
        /// A location naming one object.
        to: String,
    },
    /// The N objects of some types nearest to an object (`HOPS OBJECT` lines), ties by logical index.
    Near {
        #[command(flatten)]
        input: InputArgs,
        /// A location naming one object.
        from: String,
        /// Types and classes (`pu`, `core`, `compute`, `cache`, `memory`, `io`, ...).
        types: String,
        /// How many objects (all of them by default).
        n: Option<usize>,
    },
    /// The objects within K hops of an object over the tree edges (`HOPS OBJECT` lines).
    Hops {
        #[command(flatten)]
        input: InputArgs,
        /// A location naming one object.
        from: String,
        /// The largest hop count (no limit by default).
        k: Option<u32>,
    },
}

fn load(input: &InputArgs, outer: &InputArgs) -> Result<Topology, String> {
    // `-i` after the query's name, else before it.
    let args = TopologyArgs::from_input(InputArgs {
        input: input.input.clone().or_else(|| outer.input.clone()),
        input_format: input.input_format.or(outer.input_format),
    });
    let (topo, _) = args.load(Load::new(
        keep_all(TypeFilter::KeepAll),
        LoadErrors::Named("this system"),
    ))?;
    Ok(topo)
}

/// The one object a location names.
fn object(topo: &Topology, g: &TopoGraph, word: &str) -> Result<wloc_graph::NodeIndex, String> {
    let r = wloc_locality::resolve_word(topo, word, &WordOptions::default())
        .map_err(|e| format!("bad location '{word}': {e}"))?;
    if let Some(w) = r.warnings.first() {
        return Err(format!("bad location '{word}': {w}"));
    }
    match r.objects.as_slice() {
        [id] => g
            .by_obj(*id)
            .ok_or_else(|| format!("location '{word}' names no object of the graph")),
        [] => Err(format!(
            "location '{word}' names no object (give one such as core:3, os=eth0 or pci=0000:02:00.0)"
        )),
        many => Err(format!(
            "location '{word}' names {} objects, not one",
            many.len()
        )),
    }
}

pub fn run(a: &GraphArgs) -> super::Result {
    if a.query.is_some() && (a.format.is_some() || a.filter.is_some() || a.out.is_some()) {
        return Err(
            "--of, --filter and OUT only go with an export, not with path, near or hops".into(),
        );
    }
    match &a.query {
        None => export(a),
        Some(Query::Path { input, from, to }) => {
            let topo = load(input, &a.input)?;
            let g = TopoGraph::new(&topo);
            let (f, t) = (object(&topo, &g, from)?, object(&topo, &g, to)?);
            let (_, path) = g
                .path(f, t)
                .ok_or_else(|| format!("no path from {from} to {to}"))?;
            let mut s = String::new();
            for n in path {
                s.push_str(&g.vertex(n).label());
                s.push('\n');
            }
            super::print(&s)
        }
        Some(Query::Near {
            input,
            from,
            types,
            n,
        }) => {
            let types = TypeSet::parse(types).map_err(|e| e.to_string())?;
            let topo = load(input, &a.input)?;
            let g = TopoGraph::new(&topo);
            let f = object(&topo, &g, from)?;
            let found = g.nearest(f, &types, n.unwrap_or(usize::MAX));
            let s: String = found
                .iter()
                .map(|r| format!("{} {}\n", r.hops, g.vertex(r.node).label()))
                .collect();
            super::print(&s)
        }
        Some(Query::Hops { input, from, k }) => {
            let topo = load(input, &a.input)?;
            let g = TopoGraph::new(&topo);
            let f = object(&topo, &g, from)?;
            let s: String = g
                .hops(f, *k)
                .iter()
                .map(|r| format!("{} {}\n", r.hops, g.vertex(r.node).label()))
                .collect();
            super::print(&s)
        }
    }
}

fn export(a: &GraphArgs) -> super::Result {
    let format = a
        .format
        .ok_or("wloc graph needs --of dot, graphml or json (or a query: path, near, hops)")?;
    let filter = match &a.filter {
        Some(f) => Some(TypeSet::parse(f).map_err(|e| e.to_string())?),
        None => None,
    };
    let topo = load(&a.input, &InputArgs::default())?;
    let g = TopoGraph::new(&topo);
    let view = View::new(&g, filter.as_ref());
    let text = match format {
        Format::Dot => view.to_dot(),
        Format::Graphml => view.to_graphml(),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&view.to_json())
                .map_err(|e| format!("cannot write JSON: {e}"))?;
            s.push('\n');
            s
        }
    };
    match &a.out {
        Some(path) if path != "-" => {
            std::fs::write(path, text).map_err(|e| format!("cannot write {path}: {e}").into())
        }
        _ => super::print(&text),
    }
}
