//! Command-line parsing and dispatch for `wloc`: the clap definition of
//! every command, and the one error path from a command's result to a
//! message and an exit code.

mod annotate;
mod bind;
mod calc;
mod component;
mod diff;
mod distrib;
mod fabric;
mod gather_cpuid;
mod gather_topology;
mod graph;
mod info;
mod k8s;
mod ls;
mod ls_draw;
mod manual;
mod patch;
mod place;
mod ps;
mod service;
mod slurm;
mod store;
mod topology;
mod watch;

use std::cell::RefCell;
use std::io::Write;

use clap::{Parser, Subcommand};

/// Hardware locality: discover a machine's topology, show it, and act on it.
#[derive(Parser, Debug)]
#[command(name = "wloc", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

// `ls` carries lstopo's many options; the command line is parsed once.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
enum Command {
    /// Show the topology (as lstopo does): console listing, XML, synthetic, JSON or a picture (SVG, text art, PNG, HTML).
    Ls(ls::LsArgs),
    /// Manage sandboxed components: list, inspect, verify, keygen, sign, embed, allow, deny, add, pull, push, mirror, update.
    Component(component::ComponentArgs),
    /// Record this machine's CPUID, one file per PU, as hwloc-gather-cpuid does (x86 Linux).
    GatherCpuid(gather_cpuid::GatherCpuidArgs),
    /// Run a command bound to a location, or show and change bindings, as hwloc-bind does.
    Bind(bind::BindArgs),
    /// Show objects with their attributes, the topology levels or the supported features, as hwloc-info does.
    Info(info::InfoArgs),
    /// List bound processes and threads, as hwloc-ps does.
    Ps(ps::PsArgs),
    /// Compute OpenMP thread placement (KMP_AFFINITY, GOMP_CPU_AFFINITY, OMP_PLACES) and optionally run a command with it.
    Place(place::PlaceArgs),
    /// Record this machine's sysfs/procfs files into NAME.tar.bz2 with NAME.output and NAME.xml, as hwloc-gather-topology does.
    GatherTopology(gather_topology::GatherTopologyArgs),
    /// Combine locations into CPU or NUMA node sets and convert them, as hwloc-calc does.
    Calc(calc::CalcArgs),
    /// Spread N CPU sets evenly over the machine, as hwloc-distrib does.
    Distrib(distrib::DistribArgs),
    /// Compute the difference between two XML topologies: hwloc's diff XML (as hwloc-diff) where it can say it, wloc's own diff otherwise.
    Diff(diff::DiffArgs),
    /// Apply a topology diff (hwloc's or wloc's) to an XML topology (-R: backwards), as hwloc-patch does.
    Patch(patch::PatchArgs),
    /// Sample dynamic properties (temperatures, power, frequencies) and print `object name value unit` lines.
    Watch(watch::WatchArgs),
    /// Print Slurm configuration for a node: its slurm.conf line (as `slurmd -C`) or gres.conf lines for its GPUs and NICs.
    Slurm(slurm::SlurmArgs),
    /// The topology as a graph: export it (DOT, GraphML, JSON) or query paths, nearest objects and hop distances.
    Graph(graph::GraphArgs),
    /// InfiniBand fabrics joined with node topologies: summary, export, path, near, local.
    Fabric(fabric::FabricArgs),
    /// Print Kubernetes objects for a node: its NodeResourceTopology (NUMA zones with CPUs, memory and distances).
    K8s(k8s::K8sArgs),
    /// Add infos, Misc objects, distances, memory attributes or CPU kinds to an XML topology, as hwloc-annotate does.
    Annotate(annotate::AnnotateArgs),
    /// Compress a directory of XML topologies into NAME.xml references and NAME.diff.xml diffs (-R: uncompress), as hwloc-compress-dir does.
    CompressDir(store::CompressDirArgs),
    /// Write every topology of a directory compress-dir made (or of a store file) as XML files.
    UncompressDir(store::UncompressDirArgs),
    /// A single-file store of many topologies: pack, list, get one, time.
    Store(store::StoreArgs),
    /// Publish this machine's topology image for every process to adopt (run as root), again whenever the machine changes.
    Service(service::ServiceArgs),
    /// Write the shell completion script for a shell on standard output.
    Completions(manual::CompletionsArgs),
    /// Write the manual pages (one per command) into a folder.
    Manual(manual::ManualArgs),
}

/// Why a command failed.  Every failure but [`Error::Output`] is told
/// on standard error as `wloc: MESSAGE`, with exit code 1; the message is
/// the error's text.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A command's own report: what was wrong, in words.
    #[error("{0}")]
    Message(String),
    /// Standard output could not be written.  A closed pipe (`wloc ls |
    /// head`) ends the command quietly; other errors are told.
    #[error("cannot write the output: {0}")]
    Output(std::io::Error),
    /// Processes could not be listed or shown on the topology.
    #[error(transparent)]
    Processes(#[from] wloc::processes::ProcessError),
    /// A fabric could not be read.
    #[error(transparent)]
    FabricInput(#[from] wloc::fabric_input::FabricInputError),
    /// A folder (of topologies, say) could not be read.
    #[error(transparent)]
    Folder(#[from] wloc::folder::FolderError),
    /// The components' policy or runtime is not available.
    #[error(transparent)]
    Setup(#[from] wloc_discovery::SetupError),
    /// This machine's CPUID could not be gathered.
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    #[error(transparent)]
    Gather(#[from] wloc_discovery::cpuid_native::GatherError),
    /// A file argument could not be read, or an output written.
    #[error(transparent)]
    File(#[from] wloc::files::FileError),
    /// A component file could not be read.
    #[error(transparent)]
    ComponentFile(#[from] wloc_discovery::components::ComponentFileError),
    /// A site info asked for is not recorded.
    #[error(transparent)]
    MissingSiteInfo(#[from] wloc::MissingSiteInfo),
    /// Site infos cannot be Slurm node features.
    #[error(transparent)]
    SiteFeature(#[from] wloc::slurm::SiteFeatureError),
    /// An unknown form of shown sets.
    #[error(transparent)]
    SetFormat(#[from] wloc::tool_flags::UnknownSetFormat),
    /// A size that cannot be read.
    #[error(transparent)]
    Size(#[from] wloc::topo_edit::SizeError),
    /// An unknown input format name.
    #[error(transparent)]
    InputFormat(#[from] topology::UnknownInputFormat),
    /// The topology service could not publish.
    #[error(transparent)]
    Service(#[from] wloc::service::ServiceError),
}

impl From<String> for Error {
    fn from(m: String) -> Self {
        Error::Message(m)
    }
}

impl From<&str> for Error {
    fn from(m: &str) -> Self {
        Error::Message(m.to_string())
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Output(e)
    }
}

/// What a command returns.
pub type Result<T = ()> = std::result::Result<T, Error>;

/// Progress messages on standard output that must not stop the work
/// they describe: the first failed write silences the rest and is
/// returned by [`finish`](Self::finish).
#[derive(Default)]
pub struct Progress {
    silent: bool,
    failed: RefCell<Option<std::io::Error>>,
}

impl Progress {
    /// Messages shown unless `silent`.
    pub fn new(silent: bool) -> Self {
        Progress {
            silent,
            failed: RefCell::new(None),
        }
    }

    /// Prints one line.
    pub fn say(&self, line: &str) {
        if self.silent || self.failed.borrow().is_some() {
            return;
        }
        if let Err(e) = writeln!(std::io::stdout(), "{line}") {
            *self.failed.borrow_mut() = Some(e);
        }
    }

    /// The first write that failed, as the command's error.
    pub fn finish(self) -> Result {
        match self.failed.into_inner() {
            Some(e) => Err(Error::Output(e)),
            None => Ok(()),
        }
    }
}

/// Writes `text` to standard output and flushes it.
pub fn print(text: &str) -> Result {
    print_bytes(text.as_bytes())
}

/// Writes bytes (a PNG picture, ...) on standard output.
pub fn print_bytes(bytes: &[u8]) -> Result {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()?;
    Ok(())
}

/// Which argument is not UTF-8, for clap's error that does not say: its
/// place, the option it follows, and its bytes as far as they show.
fn not_utf8_argument(args: impl Iterator<Item = std::ffi::OsString>) -> String {
    let args: Vec<std::ffi::OsString> = args.collect();
    let Some(i) = args.iter().position(|a| a.to_str().is_none()) else {
        return "an argument is not valid UTF-8".to_string();
    };
    let shown = args[i].to_string_lossy();
    let after = args[..i]
        .last()
        .and_then(|p| p.to_str())
        .filter(|p| p.starts_with('-') && i > 1)
        .map(|p| format!(", the value of {p}"))
        .unwrap_or_default();
    format!("argument {i} ('{shown}'{after}) is not valid UTF-8, which this argument must be")
}

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) if e.kind() == clap::error::ErrorKind::InvalidUtf8 => {
            eprintln!("wloc: {}", not_utf8_argument(std::env::args_os()));
            return 2;
        }
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    // The run's discovery context: the policy `wloc ls --policy` names
    // (else `WLOC_POLICY`, else the system file), read, and the component
    // runtime, started, only once a component runs.
    let policy = match &cli.command {
        Command::Ls(a) => a.policy.clone(),
        Command::Service(a) => a.policy.clone(),
        _ => None,
    };
    let d = &wloc_discovery::Discovery::new(policy);
    let res = match &cli.command {
        Command::Ls(a) => ls::run(d, a),
        Command::Component(a) => component::run(a),
        Command::GatherCpuid(a) => gather_cpuid::run(a),
        Command::Bind(a) => bind::run(d, a),
        Command::Info(a) => info::run(d, a),
        Command::Ps(a) => ps::run(d, a),
        Command::Place(a) => place::run(d, a),
        Command::GatherTopology(a) => gather_topology::run(d, a),
        Command::Calc(a) => calc::run(d, a),
        Command::Distrib(a) => distrib::run(d, a),
        Command::Diff(a) => diff::run(a),
        Command::Patch(a) => patch::run(a),
        Command::Watch(a) => watch::run(d, a),
        Command::Slurm(a) => slurm::run(d, a),
        Command::Graph(a) => graph::run(d, a),
        Command::Fabric(a) => fabric::run(d, a),
        Command::K8s(a) => k8s::run(d, a),
        Command::Annotate(a) => annotate::run(a),
        Command::CompressDir(a) => store::compress_dir(a),
        Command::UncompressDir(a) => store::uncompress_dir(a),
        Command::Store(a) => store::store(a),
        Command::Service(a) => service::run(d, a),
        Command::Completions(a) => manual::completions(a),
        Command::Manual(a) => manual::manual(a),
    };
    match res {
        Ok(()) => 0,
        // A closed pipe is not an error worth reporting.
        Err(Error::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("wloc: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }

    #[test]
    fn a_non_utf8_argument_is_named() {
        use std::os::unix::ffi::OsStringExt;
        let args = ["wloc", "annotate", "-o"]
            .map(std::ffi::OsString::from)
            .into_iter()
            .chain([std::ffi::OsString::from_vec(b"\xff.xml".to_vec())]);
        let m = super::not_utf8_argument(args);
        assert!(
            m.starts_with("argument 3 ('\u{fffd}.xml', the value of -o)"),
            "{m}"
        );
    }
}
