//! Command-line parsing and dispatch for `wloc`.

use std::io::Write;
use std::path::Path;

use clap::{Args, Parser, Subcommand};
use wloc::console::{ConsoleOptions, IndexMode};
use wloc::input::{self, InputFormat, LoadError};
use wloc::xml::XmlVersion;
use wloc_core::{ObjType, Topology, TypeFilter};

/// Hardware locality: discover a machine's topology, show it, and act on it.
#[derive(Parser, Debug)]
#[command(name = "wloc", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Show the topology (as lstopo does): console listing, XML, synthetic or JSON.
    Ls(LsArgs),
    /// Manage sandboxed components: list, inspect, verify, keygen, sign, embed, allow, deny, add.
    Component(crate::cmd_component::ComponentArgs),
    /// Record this machine's CPUID, one file per PU, as hwloc-gather-cpuid does (x86 Linux).
    GatherCpuid(GatherCpuidArgs),
    /// Run a command bound to a location, or show and change bindings, as hwloc-bind does.
    Bind(crate::cmd_bind::BindArgs),
    /// Show objects with their attributes, the topology levels or the supported features, as hwloc-info does.
    Info(crate::cmd_info::InfoArgs),
    /// List bound processes and threads, as hwloc-ps does.
    Ps(crate::cmd_ps::PsArgs),
    /// Compute OpenMP thread placement (KMP_AFFINITY, GOMP_CPU_AFFINITY, OMP_PLACES) and optionally run a command with it.
    Place(crate::cmd_place::PlaceArgs),
    /// Record this machine's sysfs/procfs files into NAME.tar.bz2 with NAME.output and NAME.xml, as hwloc-gather-topology does.
    GatherTopology(crate::cmd_gather_topology::GatherTopologyArgs),
    /// Combine locations into CPU or NUMA node sets and convert them, as hwloc-calc does.
    Calc(crate::cmd_calc::CalcArgs),
    /// Spread N CPU sets evenly over the machine, as hwloc-distrib does.
    Distrib(crate::cmd_distrib::DistribArgs),
    /// Sample dynamic properties (temperatures, power, frequencies) and print `object name value unit` lines.
    Watch(crate::cmd_watch::WatchArgs),
}

/// Options of `wloc ls`, named as lstopo's.
#[derive(Args, Debug)]
struct LsArgs {
    /// Read the topology from an XML file, a directory (fsroot or CPUID dump) or a synthetic description.
    #[arg(short = 'i', long = "input", value_name = "INPUT")]
    input: Option<String>,
    /// Force the input format: xml, synthetic, fsroot or cpuid.
    #[arg(long = "if", alias = "input-format", value_name = "FORMAT", value_parser = parse_input_format)]
    input_format: Option<InputFormat>,
    /// Force the output format: console, xml, synthetic or json.
    #[arg(long = "of", alias = "output-format", value_name = "FORMAT", value_parser = parse_output_format)]
    output_format: Option<OutputFormat>,
    /// Overwrite the output file if it exists.
    #[arg(short = 'f', long)]
    force: bool,
    /// Include additional details (twice for even more).
    #[arg(short = 'v', long, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Reduce the amount of details shown.
    #[arg(short = 's', long)]
    silent: bool,
    /// Display logical object indexes only.
    #[arg(short = 'l', long)]
    logical: bool,
    /// Display OS (physical) object indexes only.
    #[arg(short = 'p', long)]
    physical: bool,
    /// Show the cpuset of each object.
    #[arg(short = 'c', long)]
    cpuset: bool,
    /// Only show the cpuset of each object.
    #[arg(short = 'C', long = "cpuset-only")]
    cpuset_only: bool,
    /// Show cpusets in taskset form.
    #[arg(long)]
    taskset: bool,
    /// Do not show any I/O device or bridge.
    #[arg(long)]
    no_io: bool,
    /// Do not show I/O bridges except host bridges.
    #[arg(long)]
    no_bridges: bool,
    /// Show all I/O devices and bridges.
    #[arg(long)]
    whole_io: bool,
    /// Do not show caches.
    #[arg(long)]
    no_caches: bool,
    /// Do not show instruction caches.
    #[arg(long)]
    no_icaches: bool,
    /// Do not show levels that have no hierarchical impact.
    #[arg(long)]
    merge: bool,
    /// Do not collapse identical PCI devices.
    #[arg(long)]
    no_collapse: bool,
    /// Filter objects of a type: TYPE:KIND, KIND being all, none, structure or important.
    #[arg(long = "filter", value_name = "TYPE:KIND")]
    filters: Vec<String>,
    /// Ignore objects of the given type.
    #[arg(long = "ignore", value_name = "TYPE")]
    ignore: Vec<String>,
    /// Include objects disallowed by administrative limits.
    #[arg(long)]
    disallowed: bool,
    /// Restrict the topology to some PUs, to NUMA nodes (nodeset=SET) or
    /// to this process's binding (binding).
    #[arg(long = "restrict", value_name = "[nodeset=]SET|binding")]
    restrict: Option<String>,
    /// Restriction flags: a number or hwloc's names (remove_cpuless,
    /// adapt_misc, adapt_io, bynodeset, remove_memless).
    #[arg(long = "restrict-flags", value_name = "FLAGS")]
    restrict_flags: Option<String>,
    /// Assume the input describes the system we run on.
    #[arg(long)]
    thissystem: bool,
    /// Do not run the built-in annotation components (DMI infos, PCI names) after Linux discovery.
    #[arg(long)]
    no_annotate: bool,
    /// Add a component (.wasm) for this run; it still needs the policy's approval.
    #[arg(long = "component", value_name = "FILE")]
    component: Vec<String>,
    /// Select and order components as HWLOC_COMPONENTS does: NAME, -NAME to exclude, stop.
    #[arg(long = "components", value_name = "LIST", allow_hyphen_values = true)]
    components: Option<String>,
    /// The component policy file (default: $WLOC_POLICY, else /etc/wloc/policy.toml).
    #[arg(long = "policy", value_name = "FILE")]
    policy: Option<std::path::PathBuf>,
    /// XML export flags: 2 writes hwloc 2.x XML (version 3.0 otherwise).
    #[arg(long, value_name = "N", default_value_t = 0)]
    export_xml_flags: u64,
    /// Synthetic export flags, as hwloc's HWLOC_TOPOLOGY_EXPORT_SYNTHETIC_FLAG_* bits.
    #[arg(long, value_name = "N", default_value_t = 0)]
    export_synthetic_flags: u64,
    /// Output file (`-` for standard output; `-.xml` and the like pick a format).
    output: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OutputFormat {
    Console,
    Xml,
    Synthetic,
    Json,
}

fn parse_input_format(s: &str) -> Result<InputFormat, String> {
    InputFormat::parse(s).ok_or_else(|| {
        format!("unknown input format '{s}' (expected xml, synthetic, fsroot or cpuid)")
    })
}

fn parse_output_format(s: &str) -> Result<OutputFormat, String> {
    Ok(match s {
        "console" | "txt" | "ascii" => OutputFormat::Console,
        "xml" => OutputFormat::Xml,
        "synthetic" => OutputFormat::Synthetic,
        "json" => OutputFormat::Json,
        _ => {
            return Err(format!(
                "unknown output format '{s}' (expected console, xml, synthetic or json)"
            ))
        }
    })
}

fn parse_filter_kind(s: &str) -> Option<TypeFilter> {
    Some(match s {
        "all" => TypeFilter::KeepAll,
        "none" => TypeFilter::KeepNone,
        "structure" => TypeFilter::KeepStructure,
        "important" => TypeFilter::KeepImportant,
        _ => return None,
    })
}

/// Applies a `--filter TYPE:KIND` (TYPE may also be all, cache, icache or io).
fn apply_filter(topo: &mut Topology, spec: &str) -> Result<(), String> {
    let (t, k) = spec.split_once(':').unwrap_or((spec, "none"));
    let kind = parse_filter_kind(k).ok_or_else(|| {
        format!("invalid filter kind '{k}' in --filter {spec} (expected all, none, structure or important)")
    })?;
    match t {
        "all" => topo.set_all_types_filter(kind),
        "cache" => topo.set_cache_types_filter(kind),
        "icache" => topo.set_icache_types_filter(kind),
        "io" => topo.set_io_types_filter(kind),
        _ => {
            let ty = ObjType::parse(t)
                .ok_or_else(|| format!("unknown object type '{t}' in --filter {spec}"))?;
            topo.set_type_filter(ty, kind)
                .map_err(|e| format!("cannot apply --filter {spec}: {e}"))?;
        }
    }
    Ok(())
}

/// Builds an empty topology with lstopo's filters and the user's.
fn configured_topology(a: &LsArgs) -> Result<Topology, String> {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    t.set_io_types_filter(TypeFilter::KeepImportant);
    if a.merge {
        t.set_all_types_filter(TypeFilter::KeepStructure);
    }
    if a.no_caches {
        // lstopo drops memory-side caches with the CPU caches.
        t.set_cache_types_filter(TypeFilter::KeepNone);
        t.set_type_filter(ObjType::MemCache, TypeFilter::KeepNone)
            .map_err(|e| e.to_string())?;
    }
    if a.no_icaches {
        t.set_icache_types_filter(TypeFilter::KeepNone);
    }
    if a.no_io {
        t.set_io_types_filter(TypeFilter::KeepNone);
    } else if a.whole_io {
        t.set_io_types_filter(TypeFilter::KeepAll);
    }
    if a.no_bridges {
        t.set_type_filter(ObjType::Bridge, TypeFilter::KeepNone)
            .map_err(|e| e.to_string())?;
    }
    for f in &a.filters {
        apply_filter(&mut t, f)?;
    }
    for i in &a.ignore {
        apply_filter(&mut t, &format!("{i}:none"))?;
    }
    t.include_disallowed = a.disallowed;
    Ok(t)
}

/// Where the output goes and in which format.
fn output_target(a: &LsArgs) -> Result<(Option<String>, OutputFormat), String> {
    let mut format = a.output_format;
    let mut path = None;
    if let Some(out) = &a.output {
        let ext = Path::new(out).extension().and_then(|e| e.to_str());
        let from_ext = match ext {
            Some("xml") => Some(OutputFormat::Xml),
            Some("synthetic") => Some(OutputFormat::Synthetic),
            Some("json") => Some(OutputFormat::Json),
            Some("txt") | Some("console") => Some(OutputFormat::Console),
            _ => None,
        };
        if format.is_none() {
            format = from_ext;
        }
        let stdout = out == "-" || (out.starts_with("-.") && from_ext.is_some());
        if !stdout {
            if format.is_none() {
                return Err(format!(
                    "cannot guess the output format of '{out}': use --of console, xml, synthetic or json"
                ));
            }
            path = Some(out.clone());
        }
    }
    Ok((path, format.unwrap_or(OutputFormat::Console)))
}

fn run_ls(a: &LsArgs) -> Result<(), String> {
    let (path, format) = output_target(a)?;
    if let Some(p) = &path {
        if Path::new(p).exists() && !a.force {
            return Err(format!("output file '{p}' exists; use -f to overwrite it"));
        }
    }
    let mut topo = configured_topology(a)?;
    if let Some(r) = input::env_var("CPUKINDS_RANKING") {
        topo.cpukinds_ranking = wloc_core::cpukinds::Ranking::parse(&r)
            .ok_or_else(|| format!("unknown CPU kinds ranking '{r}' in HWLOC_CPUKINDS_RANKING"))?;
    }
    let source = input::resolve(a.input.as_deref(), a.input_format).map_err(|e| e.to_string())?;
    let mut preamble = String::new();
    if a.verbose > 0 && a.input_format.is_none() && format == OutputFormat::Console {
        // lstopo says how it understood an input whose format it guessed.
        if let Some(i) = &a.input {
            let what = match &source {
                input::Source::Xml(_) => "a XML file",
                input::Source::Synthetic(_) => "a synthetic topology description",
                input::Source::Cpuid(_) => "a cpuid dump",
                input::Source::CpuidThisSystem => "",
                input::Source::Fsroot(_) => "a file-system root",
                input::Source::ThisSystem => "",
            };
            preamble = format!("assuming `{i}' is {what}\n");
        }
    }
    let mut topo = crate::cmd_component::load_for_ls(
        &source,
        topo,
        &a.component,
        a.components.as_deref(),
        a.policy.as_deref(),
    )
    .map_err(|e| match e {
        LoadError::Xml(_) | LoadError::Synthetic(_) | LoadError::Component(_) => format!(
            "failed to load topology from {}: {e}",
            a.input.as_deref().unwrap_or("the environment")
        ),
        other => other.to_string(),
    })?;
    if a.thissystem || input::env_var("THISSYSTEM").is_some_and(|v| v != "0") {
        topo.is_thissystem = true;
    }
    if let Some(spec) = &a.restrict {
        // --restrict-flags replaces the flag nodeset= implies, as lstopo
        // does when it comes after --restrict.
        let flags = match &a.restrict_flags {
            Some(f) => Some(crate::cmd_calc::parse_restrict_flags(f)?),
            None => None,
        };
        if spec == "binding" {
            // Only a topology of this system has this process's binding;
            // lstopo keeps the others whole, silently.
            if topo.is_thissystem {
                let set =
                    crate::cmd_place::own_affinity().ok_or("cannot read this process's binding")?;
                let set = format!("{set}");
                crate::cmd_calc::restrict_topology(&mut topo, &set, flags.unwrap_or(0), false);
            }
        } else {
            let (set, implied) = crate::cmd_calc::split_restrict(spec);
            crate::cmd_calc::restrict_topology(&mut topo, set, flags.unwrap_or(implied), false);
        }
    }
    if !a.no_annotate {
        wloc::annotations::annotate_discovered(&source, &mut topo);
    }
    let text = match format {
        OutputFormat::Console => {
            let opts = ConsoleOptions {
                verbose: a.verbose > 0,
                very_verbose: a.verbose > 1,
                silent: a.silent,
                index_mode: if a.logical {
                    IndexMode::Logical
                } else if a.physical {
                    IndexMode::Physical
                } else {
                    IndexMode::Default
                },
                show_cpuset: a.cpuset,
                show_cpuset_only: a.cpuset_only,
                taskset: a.taskset,
                collapse: !a.no_collapse,
                ..ConsoleOptions::default()
            };
            preamble + &wloc::console::render(&topo, &opts)
        }
        OutputFormat::Xml => {
            let version = if a.export_xml_flags & 2 != 0 {
                XmlVersion::V2
            } else {
                XmlVersion::V3
            };
            wloc::xml::export(&topo, version)
        }
        OutputFormat::Synthetic => {
            let flags = wloc_core::synthetic::ExportFlags::from_bits(a.export_synthetic_flags)
                .ok_or_else(|| {
                    format!(
                        "invalid --export-synthetic-flags {}: unknown flag bits",
                        a.export_synthetic_flags
                    )
                })?;
            let mut s = wloc_core::synthetic::export(&topo, flags)
                .map_err(|e| format!("cannot export a synthetic description: {e}"))?;
            s.push('\n');
            s
        }
        OutputFormat::Json => wloc::json::export(&topo),
    };
    match path {
        Some(p) => std::fs::write(&p, text).map_err(|e| format!("cannot write '{p}': {e}")),
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
                Ok(()) => Ok(()),
                // A closed pipe (`wloc ls | head`) is not an error worth reporting.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                Err(e) => Err(format!("cannot write the output: {e}")),
            }
        }
    }
}

/// Options of `wloc gather-cpuid`.
#[derive(Args, Debug)]
struct GatherCpuidArgs {
    /// Write into a directory that is not empty, replacing its dump files.
    #[arg(short = 'f', long)]
    force: bool,
    /// Do not print progress messages.
    #[arg(short = 's', long)]
    silent: bool,
    /// Output directory, created if needed (read it back with `wloc ls -i DIR --if cpuid`).
    dir: std::path::PathBuf,
}

/// Writes `puN` files (N from 0, PUs of the process's affinity mask that
/// are online, in OS index order) and `hwloc-cpuid-info`, as
/// hwloc-gather-cpuid does.
fn run_gather_cpuid(a: &GatherCpuidArgs) -> Result<(), String> {
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    {
        use wloc::cpuid_native::{gather_pu, LinuxPuRunner, CPUID_INFO};
        let dir = &a.dir;
        let shown = dir.display();
        if dir.exists() {
            let mut entries = std::fs::read_dir(dir)
                .map_err(|e| format!("cannot use '{shown}' as output directory: {e}"))?;
            if entries.next().is_some() {
                if !a.force {
                    return Err(format!(
                        "directory '{shown}' exists and is not empty; use -f to overwrite its dump files"
                    ));
                }
                // Drop an older dump so that no stale `puN` file remains.
                for e in
                    std::fs::read_dir(dir).map_err(|e| format!("cannot read '{shown}': {e}"))?
                {
                    let e = e.map_err(|e| format!("cannot read '{shown}': {e}"))?;
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    if wloc_probe::DumpSource::wants_file(&name) && e.path().is_file() {
                        std::fs::remove_file(e.path()).map_err(|err| {
                            format!("cannot remove '{}': {err}", e.path().display())
                        })?;
                    }
                }
            }
        } else {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create directory '{shown}': {e}"))?;
        }
        let runner = LinuxPuRunner::new()
            .map_err(|e| format!("cannot read this thread's CPU affinity: {e}"))?;
        let pus = runner.pus().to_vec();
        if pus.is_empty() {
            return Err("no online PU in this process's CPU affinity".into());
        }
        let src = wloc_probe::NativeSource::with_runner(runner);
        if !a.silent {
            println!("Gathering in directory {shown} ...");
        }
        for (pu, &os) in pus.iter().enumerate() {
            if !src.runner().pin(pu) {
                return Err(format!("cannot bind to PU P#{os}"));
            }
            let path = dir.join(format!("pu{pu}"));
            if !a.silent {
                println!(
                    "Gathering CPUID of PU P#{os} in path {} ...",
                    path.display()
                );
            }
            std::fs::write(&path, gather_pu(&src, pu))
                .map_err(|e| format!("cannot write '{}': {e}", path.display()))?;
        }
        src.runner()
            .restore()
            .map_err(|e| format!("cannot restore this thread's CPU affinity: {e}"))?;
        let info = dir.join(wloc_probe::CPUID_INFO_FILE);
        std::fs::write(&info, CPUID_INFO)
            .map_err(|e| format!("cannot write '{}': {e}", info.display()))?;
        if pus.iter().enumerate().any(|(i, &os)| i as u32 != os) && !a.silent {
            eprintln!(
                "wloc: PUs are numbered from 0 in the dump; their OS indexes are {}",
                pus.iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            );
        }
        if !a.silent {
            println!("Summary written to {}", info.display());
        }
        Ok(())
    }
    #[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
    {
        Err(format!(
            "cannot gather CPUID into '{}': only x86_64 Linux is supported",
            a.dir.display()
        ))
    }
}

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let res = match &cli.command {
        Command::Ls(a) => run_ls(a),
        Command::Component(a) => crate::cmd_component::run_component(a),
        Command::GatherCpuid(a) => run_gather_cpuid(a),
        Command::Bind(a) => crate::cmd_bind::run_bind(a),
        Command::Info(a) => crate::cmd_info::run_info(a),
        Command::Ps(a) => crate::cmd_ps::run_ps(a),
        Command::Place(a) => crate::cmd_place::run_place(a),
        Command::GatherTopology(a) => crate::cmd_gather_topology::run_gather_topology(a),
        Command::Calc(a) => crate::cmd_calc::run_calc(a),
        Command::Distrib(a) => crate::cmd_distrib::run_distrib(a),
        Command::Watch(a) => crate::cmd_watch::run_watch(a),
    };
    match res {
        Ok(()) => 0,
        Err(msg) => {
            eprintln!("wloc: {msg}");
            1
        }
    }
}
