//! `wloc k8s nrt`: the Kubernetes `NodeResourceTopology` object of a
//! node, in YAML or JSON (see [`wloc::k8s`]).

use clap::{Args, Subcommand, ValueEnum};
use wloc::k8s;

use super::topology::{InputArgs, Load, LoadErrors, TopologyArgs};

/// Options of `wloc k8s`.
#[derive(Args, Debug)]
pub struct K8sArgs {
    #[command(subcommand)]
    pub command: K8sCommand,
}

#[derive(Subcommand, Debug)]
pub enum K8sCommand {
    /// Print the node's NodeResourceTopology object (topology.node.k8s.io/v1alpha2): one zone per NUMA node with its CPUs, memory and distances.
    Nrt(NrtArgs),
}

/// Output formats of `wloc k8s nrt`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum NrtFormat {
    #[default]
    Yaml,
    Json,
}

/// Options of `wloc k8s nrt`.
#[derive(Args, Debug)]
pub struct NrtArgs {
    /// The topology (XML file, synthetic description, fsroot...); this
    /// machine by default.
    #[command(flatten)]
    pub input: InputArgs,
    /// The node name, `metadata.name` (default: the topology's HostName
    /// info, else this machine's host name, lower-cased).
    #[arg(long, value_name = "NODE")]
    pub name: Option<String>,
    /// Copy the root object's info NAME (a site info such as Rack, see
    /// `wloc annotate`) into the object's `attributes`; repeatable.
    #[arg(long = "info", value_name = "NAME")]
    pub infos: Vec<String>,
    /// Output format.
    #[arg(long = "of", value_name = "FORMAT", value_enum, default_value_t = NrtFormat::Yaml)]
    pub output_format: NrtFormat,
}

pub fn run(d: &wloc_discovery::Discovery, a: &K8sArgs) -> super::Result {
    match &a.command {
        K8sCommand::Nrt(n) => {
            let args = TopologyArgs::from_input(n.input.clone());
            let (topo, _) = args.load(
                d,
                Load::new(k8s::nrt_topology(), LoadErrors::Named("this system")),
            )?;
            let name = n
                .name
                .clone()
                .unwrap_or_else(|| k8s::default_node_name(&topo));
            if !k8s::valid_object_name(&name) {
                return Err(format!(
                    "'{name}' is not a valid Kubernetes node name (lower-case letters, digits, '-' and '.'): choose one with --name"
                )
                .into());
            }
            let mut nrt = k8s::node_resource_topology(&topo, &name);
            nrt.attributes = k8s::site_attributes(&topo, &n.infos)?;
            let out = match n.output_format {
                NrtFormat::Yaml => k8s::to_yaml(&nrt),
                NrtFormat::Json => k8s::to_json(&nrt),
            };
            super::print(&out)
        }
    }
}
