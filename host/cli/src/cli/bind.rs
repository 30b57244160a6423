//! `wloc bind`: run a command bound to a location, or show and change the
//! binding of a process, as hwloc-bind does.

use std::os::unix::process::CommandExt;

use clap::Args;
use wloc::tool_flags::parse_set_format;
use wloc_bind::{BindError, Binder, CpuBindFlags, MemBindFlags, MemPolicy, MemSet};
use wloc_core::{CpuSet, NodeSet, ObjType, Topology, TypeFilter};
use wloc_locality::CpusetFormat;

use super::topology::{Load, LoadErrors, TopologyArgs, keep_all};

/// Options of `wloc bind`, named as hwloc-bind's.  Options may also
/// appear between locations: `--cpubind` and `--membind` choose what the
/// locations after them bind.
#[derive(Args, Debug)]
pub struct BindArgs {
    #[command(flatten)]
    pub topo_args: TopologyArgs,
    /// Use the following locations for CPU binding (the default).
    #[arg(long)]
    pub cpubind: bool,
    /// Use the following locations for memory binding.
    #[arg(long)]
    pub membind: bool,
    /// Policy of --membind: default, firsttouch, bind (the default), interleave, weighted or nexttouch.
    #[arg(long, value_name = "POLICY")]
    pub mempolicy: Option<String>,
    /// Bind on a single PU (or node) of the location to prevent migration.
    #[arg(long)]
    pub single: bool,
    /// Require strict binding (memory: MPOL_BIND rather than MPOL_PREFERRED_MANY).
    #[arg(long)]
    pub strict: bool,
    /// Show the current binding (of --pid or --tid, or of this process) instead of binding.
    #[arg(long)]
    pub get: bool,
    /// Show the PUs where the process (or --pid, --tid) last ran.
    #[arg(short = 'e', long = "get-last-cpu-location")]
    pub get_last_cpu_location: bool,
    /// Show (and parse) sets as NUMA node sets.
    #[arg(long)]
    pub nodeset: bool,
    /// Act on process PID (all its threads) instead of running a command.
    #[arg(long, value_name = "PID")]
    pub pid: Option<i32>,
    /// Act on thread TID instead of running a command.
    #[arg(long, value_name = "TID")]
    pub tid: Option<i32>,
    /// Show sets in taskset form (same as --cof taskset).
    #[arg(long)]
    pub taskset: bool,
    /// Format of shown sets: hwloc, list or taskset.
    #[arg(long, value_name = "FORMAT")]
    pub cof: Option<String>,
    /// Object indexes in locations are logical (the default).
    #[arg(short = 'l', long)]
    pub logical: bool,
    /// Object indexes in locations are physical (OS) indexes.
    #[arg(short = 'p', long)]
    pub physical: bool,
    /// Run the command even if binding failed.
    #[arg(short = 'f', long)]
    pub force: bool,
    /// Hide non-fatal error messages.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Show what is bound where.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// Locations (`core:1`, `numa:0`, `0x3`, ...), then the command and its arguments, optionally after `--`.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "LOCATION|COMMAND"
    )]
    pub words: Vec<String>,
}

/// The PUs local to a set of NUMA nodes (hwloc_cpuset_from_nodeset).
fn nodes_to_cpus(topo: &Topology, nodes: &NodeSet) -> CpuSet {
    let mut cpus = CpuSet::new();
    for id in topo.objs_by_type(ObjType::NUMANode) {
        let o = topo.obj(id);
        if let (Some(cs), Some(os)) = (&o.cpuset, o.os_index)
            && nodes.is_set(os)
        {
            cpus |= cs;
        }
    }
    cpus
}

/// Whether binding acts on PUs or on memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Cpu,
    Mem,
}

/// The command line after its locations are read.
struct Plan {
    cpu_words: Vec<String>,
    mem_words: Vec<String>,
    cpuset: Option<CpuSet>,
    nodeset: Option<NodeSet>,
    policy: Option<MemPolicy>,
    single: bool,
    strict: bool,
    get: bool,
    last: bool,
    use_nodeset: bool,
    pid: Option<i32>,
    tid: Option<i32>,
    format: CpusetFormat,
    physical: bool,
    force: bool,
    quiet: bool,
    verbose: bool,
    mode: Mode,
    /// Why the first word of the command is not a location, if it failed as one.
    not_a_location: Option<super::Error>,
    command: Vec<String>,
}

impl Plan {
    fn from_args(a: &BindArgs) -> super::Result<Plan> {
        let mut format = if a.taskset {
            CpusetFormat::Taskset
        } else {
            CpusetFormat::Hwloc
        };
        if let Some(c) = &a.cof {
            format = parse_set_format(c)?;
        }
        Ok(Plan {
            cpu_words: Vec::new(),
            mem_words: Vec::new(),
            cpuset: None,
            nodeset: None,
            policy: a.mempolicy.as_deref().map(str::parse).transpose()?,
            single: a.single,
            strict: a.strict,
            get: a.get,
            last: a.get_last_cpu_location,
            use_nodeset: a.nodeset,
            pid: a.pid,
            tid: a.tid,
            format,
            physical: a.physical && !a.logical,
            force: a.force,
            quiet: a.quiet,
            verbose: a.verbose,
            mode: if a.membind && !a.cpubind {
                Mode::Mem
            } else {
                Mode::Cpu
            },
            not_a_location: None,
            command: Vec::new(),
        })
    }

    /// Handles an option met among the locations; returns how many words it used.
    fn option(&mut self, words: &[String]) -> super::Result<usize> {
        let value = |what: &str| -> super::Result<&String> {
            Ok(words
                .get(1)
                .ok_or_else(|| format!("option {} needs {what}", words[0]))?)
        };
        let id = |what: &str| -> super::Result<i32> {
            let v = value(what)?;
            Ok(v.parse()
                .map_err(|_| format!("invalid {what} '{v}' after {}", words[0]))?)
        };
        match words[0].as_str() {
            "--cpubind" => self.mode = Mode::Cpu,
            "--membind" => self.mode = Mode::Mem,
            "--single" => self.single = true,
            "--strict" => self.strict = true,
            "--get" => self.get = true,
            "-e" | "--get-last-cpu-location" => self.last = true,
            "--nodeset" => self.use_nodeset = true,
            "--taskset" => self.format = CpusetFormat::Taskset,
            "-l" | "--logical" => self.physical = false,
            "-p" | "--physical" => self.physical = true,
            "-f" | "--force" => self.force = true,
            "-q" | "--quiet" => self.quiet = true,
            "-v" | "--verbose" => self.verbose = true,
            "--mempolicy" => {
                self.policy = Some(value("a policy")?.parse()?);
                return Ok(2);
            }
            "--cof" => {
                self.format = parse_set_format(value("a format")?)?;
                return Ok(2);
            }
            "--pid" => {
                self.pid = Some(id("a process id")?);
                return Ok(2);
            }
            "--tid" => {
                self.tid = Some(id("a thread id")?);
                return Ok(2);
            }
            o => {
                return Err(format!(
                    "unrecognized option '{o}' (options go before the command, or use -- before it)"
                )
                .into());
            }
        }
        Ok(1)
    }

    /// Evaluates the CPU or memory locations read so far.
    fn evaluate(&self, topo: &Topology, mode: Mode) -> super::Result<(CpuSet, NodeSet)> {
        let words = match mode {
            Mode::Cpu => &self.cpu_words,
            Mode::Mem => &self.mem_words,
        };
        // With --nodeset, bare set strings are NUMA node sets.
        if self.use_nodeset
            && let [w] = words.as_slice()
            && let Ok(b) = w.parse::<wloc_core::Bitmap>()
        {
            let nodes = NodeSet::from_bitmap(b);
            return Ok((nodes_to_cpus(topo, &nodes), nodes));
        }
        let opts = wloc_locality::EvalOptions {
            physical_input: self.physical,
        };
        let loc = wloc_locality::evaluate(topo, words, &opts).map_err(|e| e.to_string())?;
        let nodes = if loc.nodeset.is_empty() {
            loc.cpuset.to_nodeset(topo)
        } else {
            loc.nodeset
        };
        Ok((loc.cpuset, nodes))
    }

    /// Reads options, locations and the command from the free words.
    fn read_words(&mut self, topo: &Topology, words: &[String]) -> super::Result {
        let mut i = 0;
        while i < words.len() {
            let w = &words[i];
            if w == "--" {
                i += 1;
                break;
            }
            if w.starts_with('-') && w.len() > 1 {
                i += self.option(&words[i..])?;
                continue;
            }
            let mode = self.mode;
            match mode {
                Mode::Cpu => self.cpu_words.push(w.clone()),
                Mode::Mem => self.mem_words.push(w.clone()),
            }
            match self.evaluate(topo, mode) {
                Ok((cpus, nodes)) => match mode {
                    Mode::Cpu => self.cpuset = Some(cpus),
                    Mode::Mem => self.nodeset = Some(nodes),
                },
                Err(e) => {
                    // As hwloc-bind: the first word that is not a location starts the command.
                    match mode {
                        Mode::Cpu => self.cpu_words.pop(),
                        Mode::Mem => self.mem_words.pop(),
                    };
                    if self.verbose {
                        eprintln!("wloc: assuming the command starts at {w}");
                    }
                    self.not_a_location = Some(e);
                    break;
                }
            }
            i += 1;
        }
        self.command = words[i..].to_vec();
        Ok(())
    }
}

/// Runs `wloc bind`.  On success with a command, the command replaces
/// this process and the function does not return.
pub fn run(d: &wloc_discovery::Discovery, a: &BindArgs) -> super::Result {
    // Every object, I/O devices included, as hwloc-bind loads it, so that
    // `os=eth0` works.  A topology read from elsewhere is this system only
    // if the user says so.
    let how = Load::new(
        keep_all(TypeFilter::KeepAll),
        LoadErrors::Named("the environment"),
    );
    let (topo, _) = a.topo_args.load(d, how)?;
    let mut plan = Plan::from_args(a)?;
    plan.read_words(&topo, &a.words)?;
    let binder = Binder::new(&topo);

    if plan.pid.is_some() && plan.tid.is_some() {
        return Err("cannot operate both on a thread (--tid) and a process (--pid)".into());
    }
    let querying = plan.get || plan.last;
    if plan.last && plan.mode == Mode::Mem {
        return Err("--membind and --get-last-cpu-location cannot be combined".into());
    }
    if querying && (plan.cpuset.is_some() || plan.nodeset.is_some()) {
        return Err("cannot show and set the binding at the same time".into());
    }
    if querying {
        super::print(&format!("{}\n", show_binding(&binder, &plan)?))?;
    }

    let mut failed = false;
    let mut report = |e: BindError| {
        if !plan.quiet {
            eprintln!("wloc: {e}");
        }
        failed = true;
    };

    if let Some(nodes) = &plan.nodeset {
        let mut nodes = nodes.clone();
        if plan.single {
            nodes.singlify();
        }
        let policy = plan.policy.unwrap_or(MemPolicy::Bind);
        let mut flags = MemBindFlags::empty();
        if plan.strict {
            flags |= MemBindFlags::STRICT;
        }
        if plan.verbose {
            eprintln!(
                "wloc: binding memory on node set {} ({policy})",
                nodes.bitmap().to_hwloc_string()
            );
        }
        let res = if let Some(pid) = plan.pid {
            binder.bind_process_memory(pid, &nodes, policy, flags)
        } else if let Some(tid) = plan.tid {
            binder.bind_process_memory(tid, &nodes, policy, flags | MemBindFlags::THREAD)
        } else {
            binder.bind_memory(&nodes, policy, flags)
        };
        if let Err(e) = res {
            report(e);
        }
    } else if plan.policy.is_some() && !plan.quiet {
        eprintln!(
            "wloc: --mempolicy ignored unless memory binding is also requested with --membind"
        );
    }

    if let Some(cpus) = &plan.cpuset {
        let mut cpus = cpus.clone();
        if plan.single {
            cpus.singlify();
        }
        let mut flags = CpuBindFlags::empty();
        if plan.strict {
            flags |= CpuBindFlags::STRICT;
        }
        if plan.nodeset.is_some() {
            // Keep the memory binding just set.
            flags |= CpuBindFlags::NO_MEMORY_BINDING;
        }
        if plan.verbose {
            eprintln!(
                "wloc: binding on CPU set {}",
                cpus.bitmap().to_hwloc_string()
            );
        }
        let res = if let Some(pid) = plan.pid {
            binder.bind_process_cpu(pid, &cpus, flags)
        } else if let Some(tid) = plan.tid {
            binder.bind_thread_cpu(tid, &cpus)
        } else {
            binder.bind_cpu(&cpus, flags)
        };
        if let Err(e) = res {
            report(e);
        }
    }

    if failed && !plan.force {
        return Err("binding failed (use -f to run the command anyway)".into());
    }
    if plan.command.is_empty() {
        if querying || plan.pid.is_some() || plan.tid.is_some() {
            return Ok(());
        }
        return Err(match plan.not_a_location {
            Some(e) => e,
            None => "nothing to do: give a command to run after the locations".into(),
        });
    }
    let err = std::process::Command::new(&plan.command[0])
        .args(&plan.command[1..])
        .exec();
    let mut msg = format!("cannot run '{}': {err}", plan.command[0]);
    if let Some(e) = &plan.not_a_location {
        msg.push_str(&format!(" (nor is it a location: {e})"));
    }
    Err(msg.into())
}

/// The text of `--get` or `--get-last-cpu-location`.
fn show_binding(binder: &Binder<'_>, plan: &Plan) -> super::Result<String> {
    let topo = binder.topology();
    let err = |e: BindError| e.to_string();
    if plan.mode == Mode::Mem {
        let (nodes, policy) = match (plan.pid, plan.tid) {
            (Some(p), _) => binder.process_memory_binding(p, MemBindFlags::empty()),
            (_, Some(t)) => binder.process_memory_binding(t, MemBindFlags::THREAD),
            _ => binder.memory_binding(MemBindFlags::empty()),
        }
        .map_err(err)?;
        let set = if plan.use_nodeset {
            plan.format.show(nodes.bitmap())
        } else {
            plan.format.show(nodes_to_cpus(topo, &nodes).bitmap())
        };
        return Ok(format!("{set} ({policy})"));
    }
    let cpus = if plan.last {
        match (plan.pid, plan.tid) {
            (Some(p), _) => binder.process_last_cpu_location(p, CpuBindFlags::empty()),
            (_, Some(t)) => binder.thread_last_cpu_location(t),
            _ => binder.last_cpu_location(CpuBindFlags::empty()),
        }
    } else {
        match (plan.pid, plan.tid) {
            (Some(p), _) => binder.process_cpu_binding(p, CpuBindFlags::empty()),
            (_, Some(t)) => binder.thread_cpu_binding(t),
            _ => binder.cpu_binding(CpuBindFlags::empty()),
        }
    }
    .map_err(err)?;
    Ok(if plan.use_nodeset {
        plan.format.show(cpus.to_nodeset(topo).bitmap())
    } else {
        plan.format.show(cpus.bitmap())
    })
}
