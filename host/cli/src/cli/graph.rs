//! `wloc graph`: the topology as a graph (see the crate `wloc-graph`):
//! exports to DOT, GraphML or JSON (with the machine's dynamic properties
//! on the vertices with `--properties`), and queries (`path`: weighted
//! over every edge; `near`: by hwloc's locality; `hops`: over the tree)
//! with objects named in hwloc's location language (`core:3`,
//! `pci=0000:02:00.0`, `os=eth0`) or by GUID (`guid=...`).  With
//! `--fabric`, the InfiniBand fabric around the machine joins the graph:
//! its switches, routers and other machines' adapters become vertices,
//! linked to the machine's adapters (OS devices, matched by GUID) by
//! `fabric-link` edges.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use wloc_core::{Topology, TypeFilter};
use wloc_discovery::Discovery;
use wloc_discovery::annotations::{self, Annotators};
use wloc_graph::export::View;
use wloc_graph::{TopoGraph, TypeSet, VertexKey, VertexProperty};
use wloc_locality::WordOptions;

use super::topology::{InputArgs, Load, LoadErrors, TopologyArgs, keep_all};

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
    /// Put the dynamic properties of this machine (or of the recorded
    /// fsroot given with -i) on the vertices: one sample of the sensors
    /// component, as `wloc watch` reads it.
    #[arg(long)]
    properties: bool,
    /// With --properties, take two samples MS milliseconds apart so that
    /// the properties computed from two readings (power from energy
    /// counters, utilisation) are there too.
    #[arg(long, value_name = "MS", requires = "properties")]
    rates: Option<u64>,
    /// Join the InfiniBand fabric around the machine: a folder laid out
    /// as `wloc fabric` reads it (`ib-raw/`), or a fabric file
    /// (ibnetdiscover's ports report or topology file, ibroute tables);
    /// may be repeated.  The machine's adapters are found on it by GUID.
    #[arg(long, value_name = "PATH", global = true)]
    fabric: Vec<PathBuf>,
    /// The fabric reader component (`.wasm`) to read `--fabric` with
    /// instead of the built-in one; the policy must allow it.
    #[arg(long, value_name = "WASM", global = true)]
    fabric_reader: Option<PathBuf>,
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
    /// The shortest path between two objects, one object a line: over every
    /// edge, a tree edge or a direct device link costing 1 and a NUMA
    /// distance edge its distance over the local one.
    Path {
        #[command(flatten)]
        input: InputArgs,
        /// A location naming one object (`pu:0`, `os=eth0`, `pci=0000:02:00.0`).
        from: String,
        /// A location naming one object.
        to: String,
    },
    /// The N objects of some types nearest to an object (`HOPS OBJECT`
    /// lines), by hwloc's locality: those below its parent first, then its
    /// grandparent's..., each ancestor's in logical order.
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

fn load(d: &Discovery, input: &InputArgs, outer: &InputArgs) -> super::Result<Topology> {
    // `-i` after the query's name, else before it.
    let args = TopologyArgs::from_input(InputArgs {
        input: input.input.clone().or_else(|| outer.input.clone()),
        input_format: input.input_format.or(outer.input_format),
    });
    let (topo, _) = args.load(
        d,
        Load::new(
            keep_all(TypeFilter::KeepAll),
            LoadErrors::Named("this system"),
        ),
    )?;
    Ok(topo)
}

/// The one object a location (or `guid=ID`) names.
fn object(topo: &Topology, g: &TopoGraph, word: &str) -> super::Result<wloc_graph::NodeIndex> {
    if let Some(id) = word.strip_prefix("guid=") {
        return Ok(g
            .by_guid(id)
            .ok_or_else(|| format!("no object has the GUID or UUID '{id}'"))?);
    }
    let r = wloc_locality::resolve_word(topo, word, &WordOptions::default())
        .map_err(|e| format!("bad location '{word}': {e}"))?;
    if let Some(w) = r.warnings.first() {
        return Err(format!("bad location '{word}': {w}").into());
    }
    match r.objects.as_slice() {
        [id] => Ok(g
            .by_obj(*id)
            .ok_or_else(|| format!("location '{word}' names no object of the graph"))?),
        [] => Err(format!(
            "location '{word}' names no object (give one such as core:3, os=eth0 or pci=0000:02:00.0)"
        ).into()),
        many => Err(format!(
            "location '{word}' names {} objects, not one",
            many.len()
        ).into()),
    }
}

pub fn run(d: &Discovery, a: &GraphArgs) -> super::Result {
    if a.query.is_some()
        && (a.format.is_some() || a.filter.is_some() || a.out.is_some() || a.properties)
    {
        return Err(
            "--of, --filter, --properties and OUT only go with an export, not with path, near or hops".into(),
        );
    }
    match &a.query {
        None => export(d, a),
        Some(Query::Path { input, from, to }) => {
            let topo = load(d, input, &a.input)?;
            let g = graph(d, a, &topo)?;
            let (f, t) = (object(&topo, &g, from)?, object(&topo, &g, to)?);
            let (_, path) = g
                .weighted_path(f, t)
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
            let topo = load(d, input, &a.input)?;
            let g = graph(d, a, &topo)?;
            let f = object(&topo, &g, from)?;
            let found = g.nearest(f, &types, n.unwrap_or(usize::MAX));
            let s: String = found
                .iter()
                .map(|r| format!("{} {}\n", r.hops, g.vertex(r.node).label()))
                .collect();
            super::print(&s)
        }
        Some(Query::Hops { input, from, k }) => {
            let topo = load(d, input, &a.input)?;
            let g = graph(d, a, &topo)?;
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

fn export(d: &Discovery, a: &GraphArgs) -> super::Result {
    let format = a
        .format
        .ok_or("wloc graph needs --of dot, graphml or json (or a query: path, near, hops)")?;
    let filter = match &a.filter {
        Some(f) => Some(TypeSet::parse(f).map_err(|e| e.to_string())?),
        None => None,
    };
    let topo = load(d, &a.input, &InputArgs::default())?;
    let mut g = graph(d, a, &topo)?;
    if a.properties {
        add_properties(d, &a.input, &topo, &mut g, a.rates)?;
    }
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
        Some(path) if path != "-" => Ok(wloc::files::write(
            std::path::Path::new(path),
            text.as_bytes(),
        )?),
        _ => super::print(&text),
    }
}

/// The topology's graph, with the fabric of `--fabric` when given.
fn graph(d: &Discovery, a: &GraphArgs, topo: &Topology) -> super::Result<TopoGraph> {
    let mut g = TopoGraph::new(topo);
    if !a.fabric.is_empty() {
        let subnets = wloc::fabric_input::read_subnets(d, &a.fabric, a.fabric_reader.as_deref())?;
        g.join_fabric(topo, subnets)?;
    } else if a.fabric_reader.is_some() {
        return Err("--fabric-reader goes with --fabric".into());
    }
    Ok(g)
}

/// One sample of the sensors component on the vertices (the second of
/// two `rates` ms apart, when given).
fn add_properties(
    d: &Discovery,
    input: &InputArgs,
    topo: &Topology,
    g: &mut TopoGraph,
    rates: Option<u64>,
) -> super::Result {
    let source = TopologyArgs::from_input(input.clone()).source()?;
    if !annotations::applies_to(&source) {
        return Err(
            "--properties reads the sensors of a Linux machine: use this machine or a recorded fsroot (-i DIR --if fsroot)"
                .into(),
        );
    }
    let (annotators, warnings) = Annotators::builtin_matching(
        d,
        annotations::fsroot_of(&source),
        |b, _| b.name == wloc_runtime::builtin::ANNOTATE_SENSORS_NAME,
        &Default::default(),
    )?;
    if let Some(ms) = rates {
        // The first sample is the starting point of the rates; its
        // warnings come again with the second.
        let _ = annotators.sample(topo);
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    let (props, more) = annotators.sample(topo);
    for w in warnings.iter().chain(&more) {
        eprintln!("wloc: warning: {w}");
    }
    let missed = g.add_properties(props.into_iter().map(|p| {
        (
            VertexKey::GpIndex(topo.obj(p.object).gp_index),
            VertexProperty {
                name: p.name,
                value: p.value,
                unit: p.unit,
            },
        )
    }));
    if let Some(k) = missed.first() {
        return Err(format!("a property names an object the graph lacks: {k:?}").into());
    }
    Ok(())
}
