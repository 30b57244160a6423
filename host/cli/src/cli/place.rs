//! `wloc place`: the OS procs each OpenMP thread gets under KMP_AFFINITY,
//! GOMP_CPU_AFFINITY or OMP_PLACES/OMP_PROC_BIND, printed or handed to a
//! command as an explicit environment any OpenMP runtime follows.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use clap::Args;
use wloc_core::{CpuSet, Topology};
use wloc_discovery::Discovery;
use wloc_discovery::input::{InputFormat, Source};
use wloc_openmp::{
    CpuinfoError, KmpAffinity, Method, PlacesSpec, Policy, ProcBind, flat_topology, parse_places,
    place, topology_from_cpuinfo,
};

use super::topology::{InputArgs, Load, LoadErrors, TopologyArgs};

/// Options of `wloc place`.  Without a placement option, the settings
/// are read from KMP_AFFINITY, GOMP_CPU_AFFINITY, OMP_PLACES and
/// OMP_PROC_BIND (in that order of precedence), and likewise
/// OMP_NUM_THREADS, KMP_TOPOLOGY_METHOD and KMP_CPUINFO_FILE.
#[derive(Args, Debug)]
pub struct PlaceArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Number of OpenMP threads (default: OMP_NUM_THREADS, else one per available OS proc).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// A KMP_AFFINITY setting, e.g. `granularity=fine,compact,1,0`.
    #[arg(long, value_name = "STR", conflicts_with_all = ["gomp_cpu_affinity", "omp_places", "omp_proc_bind"])]
    pub kmp_affinity: Option<String>,
    /// A GOMP_CPU_AFFINITY list, e.g. `3,0-2` or `0-15:4`.
    #[arg(long, value_name = "STR", conflicts_with_all = ["omp_places", "omp_proc_bind"])]
    pub gomp_cpu_affinity: Option<String>,
    /// An OMP_PLACES value: threads, cores, ll_caches, numa_domains, sockets (with an optional count) or `{...}` lists.
    #[arg(long, value_name = "STR")]
    pub omp_places: Option<String>,
    /// An OMP_PROC_BIND value: close, spread, primary, true or false.
    #[arg(long, value_name = "STR")]
    pub omp_proc_bind: Option<String>,
    /// How the topology map is built: hwloc (all of wloc's levels), cpuid (the levels CPUID gives, from this machine or the -i input), cpuinfo or flat.
    #[arg(long, value_name = "METHOD")]
    pub topology_method: Option<String>,
    /// The /proc/cpuinfo-format file of the cpuinfo method (default /proc/cpuinfo).
    #[arg(long, value_name = "FILE")]
    pub cpuinfo_file: Option<PathBuf>,
    /// The initial affinity mask, as a list (`0-3,8`); default: this process's mask on this machine, else every proc.
    #[arg(long, value_name = "SET")]
    pub initial_mask: Option<String>,
    /// Print the runtime's topology map and bindings on standard error.
    #[arg(long)]
    pub verbose: bool,
    /// Command to run with the equivalent explicit OpenMP environment.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The placement policy from the options, else from the environment.
fn policy(a: &PlaceArgs) -> super::Result<Policy> {
    let from_options = a.kmp_affinity.is_some()
        || a.gomp_cpu_affinity.is_some()
        || a.omp_places.is_some()
        || a.omp_proc_bind.is_some();
    let get = |opt: &Option<String>, name: &str| -> Option<String> {
        if from_options { opt.clone() } else { env(name) }
    };
    if let Some(k) = get(&a.kmp_affinity, "KMP_AFFINITY") {
        return Ok(Policy::Kmp(
            KmpAffinity::parse(&k).map_err(|e| e.to_string())?,
        ));
    }
    if let Some(g) = get(&a.gomp_cpu_affinity, "GOMP_CPU_AFFINITY") {
        return Ok(Policy::Kmp(
            KmpAffinity::from_gomp(&g).map_err(|e| e.to_string())?,
        ));
    }
    let places = get(&a.omp_places, "OMP_PLACES");
    let bind = get(&a.omp_proc_bind, "OMP_PROC_BIND");
    let bind = match (&bind, &places) {
        (Some(b), _) => ProcBind::parse(b).map_err(|e| e.to_string())?,
        // Places without a policy bind the threads.
        (None, Some(_)) => ProcBind::True,
        (None, None) => ProcBind::False,
    };
    let places = match places {
        Some(p) => parse_places(&p).map_err(|e| e.to_string())?,
        // A binding policy without places binds to cores.
        None => PlacesSpec::Abstract {
            level: wloc_openmp::HwType::Core,
            count: None,
        },
    };
    Ok(Policy::Places { places, bind })
}

fn thread_count(a: &PlaceArgs) -> super::Result<Option<usize>> {
    if let Some(n) = a.threads {
        return Ok(Some(n));
    }
    match env("OMP_NUM_THREADS") {
        None => Ok(None),
        Some(v) => {
            let first = v.split(',').next().unwrap_or("").trim();
            Ok(first
                .parse::<usize>()
                .map(Some)
                .map_err(|_| format!("OMP_NUM_THREADS: \"{v}\" is not a number of threads"))?)
        }
    }
}

/// Loads the topology from `-i` (with `format` for `--if`), with whether
/// it is this machine.
fn load(
    d: &Discovery,
    a: &PlaceArgs,
    format: Option<InputFormat>,
) -> super::Result<(Topology, bool)> {
    let args = TopologyArgs::from_input(InputArgs {
        input: a.input.input.clone(),
        input_format: format,
    });
    let how = Load::new(Topology::new(), LoadErrors::Named("this machine"));
    let (topo, source) = args.load(d, how)?;
    let this_system = matches!(source, Source::ThisSystem | Source::CpuidThisSystem);
    Ok((topo, this_system))
}

/// The processor ids a cpuinfo file lists, for the flat fallback.
fn cpuinfo_processors(text: &str) -> CpuSet {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(k, _)| k.trim_end() == "processor")
        .filter_map(|(_, v)| v.trim().parse::<u32>().ok())
        .filter(|&v| v <= wloc_openmp::MAX_PROC_ID)
        .collect()
}

/// Loads the topology the method models, with whether it is this machine.
fn topology(
    d: &Discovery,
    a: &PlaceArgs,
    method: Method,
    warnings: &mut Vec<String>,
) -> super::Result<(Topology, bool)> {
    match method {
        Method::Hwloc => load(d, a, a.input.input_format),
        // Without -i, this machine's CPUID; with -i, a CPUID dump or any
        // other input, modelled with the levels CPUID gives.
        Method::Cpuid if a.input.input.is_none() => {
            load(d, a, a.input.input_format.or(Some(InputFormat::Cpuid)))
        }
        Method::Cpuid => load(d, a, a.input.input_format),
        Method::Flat => {
            let (t, this) = load(d, a, a.input.input_format)?;
            let flat = flat_topology(t.cpuset()).map_err(|e| e.to_string())?;
            Ok((flat, this))
        }
        Method::Cpuinfo => {
            let path = a
                .cpuinfo_file
                .clone()
                .or_else(|| env("KMP_CPUINFO_FILE").map(PathBuf::from))
                .unwrap_or_else(|| PathBuf::from("/proc/cpuinfo"));
            let this = path == std::path::Path::new("/proc/cpuinfo");
            let text = wloc::files::read_text(&path, "the cpuinfo file")?;
            match topology_from_cpuinfo(&text) {
                Ok(t) => Ok((t, this)),
                // The runtime falls back to the flat model for these.
                Err(e @ (CpuinfoError::IdsNotUnique | CpuinfoError::MissingPhysicalIdField(_))) => {
                    let procs = cpuinfo_processors(&text);
                    if procs.is_empty() {
                        return Err(format!("{}: {e}", path.display()).into());
                    }
                    warnings.push(format!(
                        "KMP_AFFINITY: {}: {e} - using \"flat\" OS <-> physical proc mapping.",
                        path.display()
                    ));
                    Ok((flat_topology(&procs).map_err(|e| e.to_string())?, this))
                }
                Err(e) => Err(format!("{}: {e}", path.display()).into()),
            }
        }
    }
}

/// Runs `wloc place`.
pub fn run(d: &Discovery, a: &PlaceArgs) -> super::Result {
    let policy = policy(a)?;
    let nthreads = thread_count(a)?;
    let method = match a
        .topology_method
        .clone()
        .or_else(|| env("KMP_TOPOLOGY_METHOD"))
    {
        None => Method::Hwloc,
        Some(m) => Method::parse(m.trim()).ok_or_else(|| {
            format!("unknown topology method '{m}' (expected hwloc, cpuid, cpuinfo or flat)")
        })?,
    };
    let mut warnings = Vec::new();
    let (topo, this_system) = topology(d, a, method, &mut warnings)?;
    let initial = match &a.initial_mask {
        Some(s) => CpuSet::parse_list(s.trim())
            .map_err(|e| format!("invalid --initial-mask '{s}': {e}"))?,
        None if this_system => wloc_bind::thread_affinity().unwrap_or_else(|_| CpuSet::full()),
        None => CpuSet::full(),
    };
    let p =
        place(&topo, method, &initial, &policy, nthreads, a.verbose).map_err(|e| e.to_string())?;
    let show_warnings = !matches!(&policy, Policy::Kmp(k) if !k.warnings);
    {
        let mut err = std::io::stderr().lock();
        if show_warnings {
            for w in warnings.iter().chain(&p.warnings) {
                let _ = writeln!(err, "wloc place: warning: {w}");
            }
        }
        for l in &p.report {
            let _ = writeln!(err, "{l}");
        }
    }
    if a.command.is_empty() {
        let mut out = std::io::stdout().lock();
        for (i, s) in p.threads.iter().enumerate() {
            writeln!(out, "{i} {}", s.to_list_string())?;
        }
        out.flush()?;
        return Ok(());
    }
    let mut cmd = std::process::Command::new(&a.command[0]);
    cmd.args(&a.command[1..]);
    for (name, value) in p.environment() {
        match value {
            Some(v) => cmd.env(name, v),
            None => cmd.env_remove(name),
        };
    }
    let err = cmd.exec();
    Err(format!("cannot run '{}': {err}", a.command[0]).into())
}
