//! `wloc slurm node`, `gres` and `topology`: the `slurm.conf` node line
//! `slurmd -C` prints and `gres.conf` lines for GPUs and NICs, from a
//! topology or a folder of topology files (see [`wloc::slurm`]), and
//! `topology.conf`/`topology.yaml` from a fabric (see `wloc fabric`).

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use wloc::slurm;
use wloc_core::{Topology, TypeFilter};
use wloc_discovery::Discovery;
use wloc_discovery::input::InputFormat;

use super::topology::{InputArgs, Load, LoadErrors, TopologyArgs};

/// Options of `wloc slurm`.
#[derive(Args, Debug)]
pub struct SlurmArgs {
    #[command(subcommand)]
    pub command: SlurmCommand,
}

#[derive(Subcommand, Debug)]
pub enum SlurmCommand {
    /// Print the slurm.conf node line `slurmd -C` prints (NodeName CPUs Boards SocketsPerBoard CoresPerSocket ThreadsPerCore RealMemory).
    Node(NodeArgs),
    /// Print gres.conf lines binding GPUs and NICs to their local cores.
    Gres(NodeArgs),
    /// Print Slurm's topology.conf (topology/tree) or topology.yaml (a tree and a block topology) for an InfiniBand fabric.
    Topology(TopologyConfArgs),
}

/// Options of `wloc slurm topology`.
#[derive(Args, Debug)]
pub struct TopologyConfArgs {
    /// The fabric: a folder as `wloc fabric` reads (`ib-raw/`, `hwloc/`), or fabric files.
    #[command(flatten)]
    pub input: wloc::fabric_input::FabricInput,
    /// `conf` for topology.conf (Slurm 2x.x's topology/tree), `yaml` for
    /// topology.yaml (Slurm 25.05 and later).
    #[arg(long = "of", value_name = "FORMAT", default_value = "conf", value_parser = ["conf", "yaml"])]
    pub format: String,
    /// Host names for Slurm: a file of `FABRIC-NAME SLURM-NAME` lines (names not listed are kept).
    #[arg(long, value_name = "MAP")]
    pub names: Option<PathBuf>,
}

/// Options of `wloc slurm node` and `wloc slurm gres`.
#[derive(Args, Debug)]
pub struct NodeArgs {
    /// The topology (XML file, synthetic description, fsroot...) or a
    /// folder of topology files `*.xml`, one node each, named after the
    /// file; this machine by default.
    #[command(flatten)]
    pub input: InputArgs,
    /// The node name (default: the topology's HostName info, else this
    /// machine's host name, up to the first dot).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Add the root object's info NAME (a site info such as Rack, see
    /// `wloc annotate`) to the node line's `Features=`; repeatable
    /// (`wloc slurm node` only).
    #[arg(long = "info", value_name = "NAME")]
    pub infos: Vec<String>,
}

/// The `*.xml` files of `dir`, sorted, when `dir` is a folder holding
/// some (a folder without any is an fsroot or a CPUID dump).
fn xml_files(dir: &Path) -> Option<Vec<PathBuf>> {
    if !dir.is_dir() {
        return None;
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "xml"))
        .collect();
    files.sort();
    (!files.is_empty()).then_some(files)
}

/// Loads one topology as slurmd does (see [`slurm::slurmd_topology`]).
fn load(discovery: &Discovery, input: InputArgs, io: TypeFilter) -> super::Result<Topology> {
    let args = TopologyArgs::from_input(input);
    let (topo, _) = args.load(
        discovery,
        Load::new(slurm::slurmd_topology(io), LoadErrors::Named("this system")),
    )?;
    Ok(topo)
}

/// The (name, topology) pairs `-i` names.
fn nodes(
    discovery: &Discovery,
    a: &NodeArgs,
    io: TypeFilter,
) -> super::Result<Vec<(String, Topology)>> {
    let dir_files = match (&a.input.input, a.input.input_format) {
        (Some(i), None) => xml_files(Path::new(i)),
        _ => None,
    };
    match dir_files {
        Some(files) => {
            if a.name.is_some() {
                return Err("--name names one node: it cannot be used with a folder of topologies (each node is named after its file)".into());
            }
            files
                .into_iter()
                .map(|f| {
                    let name = f
                        .file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let input = InputArgs {
                        input: Some(f.to_string_lossy().into_owned()),
                        input_format: Some(InputFormat::Xml),
                    };
                    load(discovery, input, io).map(|t| (name, t))
                })
                .collect()
        }
        None => {
            let topo = load(discovery, a.input.clone(), io)?;
            let name = a
                .name
                .clone()
                .unwrap_or_else(|| slurm::default_node_name(&topo));
            Ok(vec![(name, topo)])
        }
    }
}

pub fn run(discovery: &Discovery, a: &SlurmArgs) -> super::Result {
    let mut out = String::new();
    match &a.command {
        SlurmCommand::Node(n) => {
            for (name, topo) in nodes(discovery, n, TypeFilter::KeepNone)? {
                out.push_str(&slurm::node_line(&name, &slurm::node_counts(&topo)));
                let features = slurm::site_features(&topo, &n.infos)
                    .map_err(|e| format!("node {name}: {e}"))?;
                if !features.is_empty() {
                    out.push_str(&format!(" Features={}", features.join(",")));
                }
                out.push('\n');
            }
        }
        SlurmCommand::Gres(n) => {
            if !n.infos.is_empty() {
                return Err(
                    "--info adds node features: it applies to `wloc slurm node` only".into(),
                );
            }
            for (name, topo) in nodes(discovery, n, TypeFilter::KeepAll)? {
                for d in slurm::gres_devices(&topo) {
                    out.push_str(&slurm::gres_line(&name, &d));
                    out.push('\n');
                }
            }
        }
        SlurmCommand::Topology(t) => {
            out = wloc::fabric_input::slurm_topology(
                discovery,
                &t.input,
                t.names.as_deref(),
                t.format == "yaml",
            )?;
        }
    }
    super::print(&out)
}
