//! `wloc fabric`: InfiniBand fabrics joined with node topologies (see the
//! crate `wloc-fabric`; the fabric is read by [`wloc::fabric_input`]).

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use wloc::fabric_input::{FabricInput as Input, load, slurm_topology};
use wloc_fabric::{Fabric, export};

/// Options of `wloc fabric`.
#[derive(Args, Debug)]
pub struct FabricArgs {
    #[command(subcommand)]
    query: Query,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    Graphml,
    Gexf,
    Dot,
    Json,
    Svg,
}

#[derive(Subcommand, Debug)]
enum Query {
    /// One line per subnet: `SUBNET switches=S adapters=A hosts=H cables=C`.
    Summary {
        #[command(flatten)]
        input: Input,
    },
    /// The fabric as GraphML, GEXF, DOT, JSON or an SVG picture.
    Export {
        /// The format.
        #[arg(long = "of", value_enum, value_name = "FORMAT")]
        format: Format,
        #[command(flatten)]
        input: Input,
        /// Write to this file instead of standard output.
        out: Option<PathBuf>,
    },
    /// The route between two hosts: from the forwarding tables, else a shortest path.
    Path {
        #[command(flatten)]
        input: Input,
        /// The source host.
        from: String,
        /// The target host.
        to: String,
    },
    /// The hosts within N cable hops of a host (`HOPS HOST` lines; 2 = the same switch).
    Near {
        #[command(flatten)]
        input: Input,
        /// The host.
        host: String,
        /// The largest hop count (2 by default).
        n: Option<u32>,
    },
    /// For HOST, the adapter port that reaches OTHER and the NUMA nodes and PUs local to it.
    Local {
        #[command(flatten)]
        input: Input,
        /// The host whose topology is looked at.
        host: String,
        /// The host to reach.
        other: String,
    },
    /// The hosts whose adapters are cabled to a switch (by GUID).
    Under {
        #[command(flatten)]
        input: Input,
        /// The switch GUID (`0x0008f10500108c9e`).
        switch: String,
    },
    /// The switch levels of each subnet (1 = leaf switches): `SUBNET LEVEL GUID DESCRIPTION` lines.
    Levels {
        #[command(flatten)]
        input: Input,
    },
    /// Slurm's topology.conf (topology/tree): leaf switches with their nodes, upper switches with the switches below.
    Slurm {
        #[command(flatten)]
        input: Input,
        /// Host names for Slurm: a file of `FABRIC-NAME SLURM-NAME` lines.
        #[arg(long, value_name = "MAP")]
        names: Option<PathBuf>,
    },
    /// Follows every route of the forwarding tables and checks that each
    /// ends at its target without a loop: `SUBNET routes=N` lines.
    Routes {
        #[command(flatten)]
        input: Input,
    },
}

fn host(f: &Fabric, name: &str) -> super::Result<usize> {
    Ok(f.host(name)?)
}

pub fn run(d: &wloc_discovery::Discovery, a: &FabricArgs) -> super::Result {
    match &a.query {
        Query::Summary { input } => {
            let f = load(d, input)?;
            let mut s = String::new();
            for x in f.summary() {
                s.push_str(&format!(
                    "{} switches={} adapters={} hosts={} cables={}\n",
                    x.subnet, x.switches, x.adapters, x.hosts, x.cables
                ));
            }
            super::print(&s)
        }
        Query::Export { format, input, out } => {
            let f = load(d, input)?;
            let text = match format {
                Format::Graphml => export::graphml(&f),
                Format::Gexf => export::gexf(&f),
                Format::Dot => export::dot(&f),
                Format::Json => {
                    let mut s = serde_json::to_string_pretty(&export::json(&f))
                        .map_err(|e| e.to_string())?;
                    s.push('\n');
                    s
                }
                Format::Svg => export::svg(&f),
            };
            match out {
                Some(p) => Ok(wloc::files::write(p, text.as_bytes())?),
                None => super::print(&text),
            }
        }
        Query::Path { input, from, to } => {
            let f = load(d, input)?;
            let r = f.path(host(&f, from)?, host(&f, to)?)?;
            let g = &f.subnets[r.subnet];
            let mut s = format!(
                "subnet {} ({}), {} hops\n",
                g.name,
                if r.from_tables {
                    "forwarding tables"
                } else {
                    "shortest path"
                },
                r.nodes.len() - 1
            );
            for (i, n) in r.nodes.iter().enumerate() {
                let v = &g.graph[*n];
                let who = match v.host {
                    Some(h) => format!("{} ", f.hosts[h].name),
                    None => String::new(),
                };
                s.push_str(&format!(
                    "{:#018x} {} {who}'{}'",
                    v.guid,
                    v.kind.name(),
                    v.description
                ));
                if let Some(p) = r.ports.get(i) {
                    s.push_str(&format!(" out port {p}"));
                }
                s.push('\n');
            }
            super::print(&s)
        }
        Query::Near { input, host: h, n } => {
            let f = load(d, input)?;
            let near = f.near(host(&f, h)?, n.unwrap_or(2));
            let s: String = near
                .iter()
                .map(|(d, o)| format!("{d} {}\n", f.hosts[*o].name))
                .collect();
            super::print(&s)
        }
        Query::Local {
            input,
            host: h,
            other,
        } => {
            let f = load(d, input)?;
            let l = f.local(host(&f, h)?, host(&f, other)?)?;
            let numa: Vec<String> = l.numa.iter().map(u32::to_string).collect();
            super::print(&format!(
                "subnet {} device {} port {} numa {} pus {}\n",
                l.subnet,
                l.device,
                l.port,
                if numa.is_empty() {
                    "-".to_string()
                } else {
                    numa.join(",")
                },
                l.pus
            ))
        }
        Query::Under { input, switch } => {
            let f = load(d, input)?;
            let hex = switch.trim_start_matches("0x");
            let g = u64::from_str_radix(hex, 16)
                .map_err(|_| format!("{switch:?} is not a switch GUID"))?;
            let s: String = f.hosts_under(g)?.into_iter().map(|h| h + "\n").collect();
            super::print(&s)
        }
        Query::Levels { input } => {
            let f = load(d, input)?;
            let mut s = String::new();
            for (si, g) in f.subnets.iter().enumerate() {
                for (n, l) in f.switch_levels(si) {
                    let v = &g.graph[n];
                    s.push_str(&format!(
                        "{} {l} {:#018x} '{}'\n",
                        g.name, v.guid, v.description
                    ));
                }
            }
            super::print(&s)
        }
        Query::Slurm { input, names } => {
            super::print(&slurm_topology(d, input, names.as_deref(), false)?)
        }
        Query::Routes { input } => {
            let f = load(d, input)?;
            let mut s = String::new();
            for (si, g) in f.subnets.iter().enumerate() {
                let n = f.check_routes_of(si)?;
                s.push_str(&format!("{} routes={n}\n", g.name));
            }
            super::print(&s)
        }
    }
}
