//! `wloc calc`: combine locations into CPU or NUMA node sets and convert
//! them, as hwloc-calc does.
//!
//! Options are read in order, as hwloc-calc reads them: an option that
//! changes how locations are read (`--pi`, `--ni`, `--no`) applies to the
//! locations after it, and topology options come first.

use std::io::{BufRead, Write};

use clap::Args;
use wloc::tool_flags::{
    parse_local_memory_flags, parse_restrict_flags, parse_set_format, split_restrict,
};
use wloc_core::memattrs;
use wloc_core::{CpuSet, ObjType, Topology, TypeFilter};
use wloc_locality::query::{self, LevelSpec};
use wloc_locality::{CpusetFormat, Locations, WordOptions};

use super::topology::{
    InputArgs, Load, LoadErrors, RestrictFlags, TopologyArgs, keep_all, parse_input_format,
};

/// Options of `wloc calc`, named as hwloc-calc's (see `wloc calc --help`).
#[derive(Args, Debug)]
#[command(disable_help_flag = true)]
pub struct CalcArgs {
    /// Options and locations, read in order as hwloc-calc reads them.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0.., value_name = "ARGS")]
    pub args: Vec<String>,
}

const USAGE: &str = "\
Usage: wloc calc [topology options] [options] <location> ...
 <location> may be a space-separated list of cpusets or objects, e.g:
    core:2-3          the third and fourth cores
    node:1.pu:2       the third PU of the second NUMA node
    pu:even, core:6:4 even PUs; four cores from the seventh, wrapping around
    0x12345678        a CPU set given a bitmask string
    os=eth0           the operating system device named eth0
    pci=0000:01:02.0  the PCI device with the given bus ID
    pci[8086:1521]:1  the second PCI device with that vendor and device id
  with prefix ~ to remove, ^ for xor and x for intersection.
  Without locations, one line of locations per line of standard input.
Topology options (must be at the beginning):
  -i, --input <file|dir|description>  read the topology from XML, image, fsroot, CPUID dump or synthetic
  --if, --input-format <format>       xml, synthetic, fsroot, cpuid or image
  --no-smt[=N]              only keep the first (N-th) PU of each core in the output
  --cpukind <n>             only keep PUs of CPU kind n
  --cpukind <name>=<value>  only keep PUs whose CPU kind has that info
  --restrict [nodeset=]<set>  restrict the topology to some PUs or NUMA nodes
  --restrict-flags <n>      restriction flags (a number or hwloc's names: remove_cpuless,
                            adapt_misc, adapt_io, bynodeset, remove_memless)
  --disallowed              include objects disallowed by administrative limits
Conversion options:
  [default]                 report the combined locations as a CPU set
  -N, --number-of <type|depth>   number of objects intersecting the set
  -I, --intersect <type|depth>   indexes of the objects intersecting the set
  -H, --hierarchical <type1>.<type2>...  objects as type1:i.type2:j...
  --largest                 the largest objects inside the set
  --local-memory            the NUMA nodes local to the set
  --local-memory-flags <x>  which local nodes: larger, smaller (or a number; 4 for all)
  --best-memattr <attr>     only the best local node for a memory attribute (name or id)
Formatting options:
  -l, --logical / -p, --physical   logical (default) or OS indexes
  --li, --logical-input, --lo, --logical-output     logical indexes for input or output only
  --pi, --physical-input, --po, --physical-output   OS indexes for input or output only
  -n, --nodeset             NUMA node sets instead of CPU sets
  --ni, --nodeset-input, --no, --nodeset-output     the same for input or output only
  --sep <sep>               output separator
  --taskset                 taskset form of sets
  --cof, --cpuset-output-format <hwloc|list|taskset>  form of output sets
  --cif, --cpuset-input-format <hwloc|list|taskset>   form of input sets (guessed otherwise)
  --single                  keep a single PU of the set
  -q, --quiet / -v, --verbose      fewer or more messages
  -h, --help                show this usage
";

/// The form of a shown set: one of the shared forms, or systemd's D-Bus
/// API form, which only hwloc-calc writes (and no tool reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SetOutput {
    Set(CpusetFormat),
    SystemdDbusApi,
}

fn parse_output_format(opt: &str, v: &str) -> super::Result<SetOutput> {
    if v == "systemd-dbus-api" {
        return Ok(SetOutput::SystemdDbusApi);
    }
    parse_set_format(v)
        .map(SetOutput::Set)
        .map_err(|_| format!("Unrecognized {opt} argument {v}").into())
}

/// Output settings gathered from the options.
struct Output {
    logical_out: bool,
    nodeset_out: bool,
    /// `--oo`: objects as `Type:index`, not indexes alone.
    object_out: bool,
    number_of: Option<String>,
    intersect: Option<String>,
    hierarchical: Option<String>,
    largest: bool,
    local_memory: bool,
    local_flags: u64,
    best_memattr: Option<String>,
    no_smt: Option<u32>,
    /// `--default-nodes`: keep only the NUMA nodes allocations go to by default.
    default_nodes: bool,
    single: bool,
    format: SetOutput,
    sep: Option<String>,
    cpukind: Option<CpuSet>,
}

/// What `-N` or `-I` counts or lists.
enum Listed {
    Level(LevelSpec),
    /// hwloc-calc 2.14's `memorytier`: the tiers of the NUMA nodes.
    MemoryTier,
    /// hwloc-calc 2.14's `cpukind`: the CPU kinds of the PUs.
    CpuKind,
}

/// Resolved conversion levels.
struct Levels {
    number_of: Option<Listed>,
    intersect: Option<Listed>,
    hierarchical: Option<Vec<LevelSpec>>,
    /// hwloc's id of the `--best-memattr` attribute, with its suffixes.
    best_memattr: Option<(usize, query::BestNodeFlags)>,
}

fn take_value<'a>(args: &'a [String], i: &mut usize, opt: &str) -> super::Result<&'a str> {
    *i += 1;
    Ok(args
        .get(*i)
        .map(String::as_str)
        .ok_or_else(|| format!("option {opt} needs a value\n{USAGE}"))?)
}

fn cpukind_set(topo: &Topology, spec: &str) -> CpuSet {
    if let Some((name, value)) = spec.split_once('=') {
        let mut set = CpuSet::new();
        for k in &topo.cpukinds {
            if k.infos.iter().any(|i| i.name == name && i.value == value) {
                set.or_assign(&k.cpuset);
            }
        }
        if set.is_empty() {
            eprintln!("Couldn't find any CPU kind matching {name}={value}, keeping no PU.");
        }
        set
    } else {
        let idx = spec.trim().parse::<usize>().unwrap_or(0);
        match topo.cpukinds.get(idx) {
            Some(k) => k.cpuset.clone(),
            None => {
                eprintln!("Couldn't find CPU kind #{idx}, keeping no PU.");
                CpuSet::new()
            }
        }
    }
}

/// Whether `s` starts with `prefix`, ignoring case (hwloc_strncasecmp).
fn starts_with_ci(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len() && s.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

fn resolve_levels(topo: &Topology, out: &Output) -> super::Result<Levels> {
    let one = |s: &Option<String>, opt: &str| -> super::Result<Option<Listed>> {
        match s {
            Some(s) if starts_with_ci(s, "memorytier") => Ok(Some(Listed::MemoryTier)),
            Some(s) if starts_with_ci(s, "cpukind") => Ok(Some(Listed::CpuKind)),
            Some(s) => Ok(query::parse_level_spec(topo, s)
                .map(|l| Some(Listed::Level(l)))
                .map_err(|e| format!("{opt}: {e}"))?),
            None => Ok(None),
        }
    };
    let number_of = one(&out.number_of, "--number-of")?;
    let intersect = one(&out.intersect, "--intersect")?;
    let hierarchical = match &out.hierarchical {
        Some(h) => {
            let mut levels = Vec::new();
            for part in h.split('.') {
                let l = query::parse_level_spec(topo, part)
                    .map_err(|e| format!("--hierarchical: {e}"))?;
                if l.depth < 0 && l.depth != -3 {
                    return Err(
                        format!("unsupported (non-normal) --hierarchical type {part}").into(),
                    );
                }
                levels.push(l);
            }
            Some(levels)
        }
        None => None,
    };
    let best_memattr = match &out.best_memattr {
        Some(s) => {
            let (name, flags) = query::split_best_memattr(s);
            let attr = memattrs::find_attribute(topo, &name)
                .ok_or_else(|| format!("unrecognized memattr {name}"))?;
            Some((attr.id, flags))
        }
        None => None,
    };
    Ok(Levels {
        number_of,
        intersect,
        hierarchical,
        best_memattr,
    })
}

/// The PU index of `--no-smt=N`, as hwloc-calc 2.9 reads it: `-1` is
/// its "not set" value (no filtering), another negative N becomes the
/// unsigned index it converts to (no core has that many PUs: nothing is
/// kept).
fn no_smt_index(v: &str) -> Result<Option<u32>, std::num::ParseIntError> {
    let n: i32 = v.trim().parse()?;
    Ok(match n {
        -1 => None,
        // The same bits as hwloc's `(unsigned) n`.
        n => Some(n as u32),
    })
}

/// Why one result could not be shown.
enum Failure {
    /// `--largest` found a part of the set that no object covers.
    Uncovered,
    /// The systemd-dbus-api form cannot carry an empty or infinite set.
    NotSystemd,
}

/// Converts and prints one result (its CPU set and its node set, both
/// kept as hwloc-calc 2.14 keeps them).
fn output(
    topo: &Topology,
    out: &Output,
    levels: &Levels,
    sets: Locations,
    w: &mut impl Write,
) -> std::io::Result<Result<(), Failure>> {
    let Locations {
        mut cpuset,
        mut nodeset,
    } = sets;
    if let Some(k) = &out.cpukind {
        cpuset.and_assign(k);
    }
    if let Some(which) = out.no_smt {
        if topo.objs_by_type(ObjType::Core).is_empty() {
            eprintln!("Topology has no Core object, ignoring --no-smt");
        } else {
            query::singlify_per_core(topo, &mut cpuset, which);
        }
    }
    if out.default_nodes {
        nodeset.and_assign(&query::default_nodeset(topo));
    }
    if out.single {
        cpuset.singlify();
    }
    let logical = out.logical_out;
    let list_sep = out.sep.as_deref().unwrap_or(",");
    let listed = levels
        .number_of
        .as_ref()
        .map(|l| (true, l))
        .or(levels.intersect.as_ref().map(|l| (false, l)));
    if out.largest {
        let sep = out.sep.as_deref().unwrap_or(" ");
        let (objs, ok) = match query::largest(topo, &cpuset, logical) {
            Ok(v) => (v, true),
            Err(v) => (v, false),
        };
        write!(w, "{}", objs.join(sep))?;
        if !ok {
            return Ok(Err(Failure::Uncovered));
        }
        writeln!(w)?;
    } else if let Some((count, listed)) = listed {
        let items: Vec<String> = match listed {
            Listed::CpuKind => query::cpukinds_of(topo, &cpuset)
                .into_iter()
                .map(|i| {
                    if out.object_out {
                        format!("cpukind:{i}")
                    } else {
                        i.to_string()
                    }
                })
                .collect(),
            Listed::MemoryTier => query::memory_tiers(topo, &nodeset)
                .into_iter()
                .map(|i| {
                    if out.object_out {
                        format!("MemoryTier:{i}")
                    } else {
                        i.to_string()
                    }
                })
                .collect(),
            Listed::Level(l) => query::intersecting(topo, l, &cpuset, &nodeset)
                .into_iter()
                .map(|id| {
                    let idx = match query::index_of(topo, id, logical) {
                        Some(i) => i.to_string(),
                        None => "-1".into(),
                    };
                    if out.object_out {
                        format!("{}:{idx}", type_name(topo.obj(id)))
                    } else {
                        idx
                    }
                })
                .collect(),
        };
        if count {
            writeln!(w, "{}", items.len())?;
        } else {
            writeln!(w, "{}", items.join(list_sep))?;
        }
    } else if let Some(hier) = &levels.hierarchical {
        let sep = out.sep.as_deref().unwrap_or(" ");
        writeln!(
            w,
            "{}",
            query::hierarchical(topo, hier, &cpuset, logical).join(sep)
        )?;
    } else if out.local_memory {
        // hwloc rejects unknown flags (and flags it could not parse).
        let mut nodes = if out.local_flags & !query::local_flags::MASK != 0 {
            Vec::new()
        } else {
            query::local_numanodes(topo, &cpuset, out.local_flags)
        };
        if let Some((id, flags)) = levels.best_memattr {
            let best = query::best_nodes(topo, id, &nodes, &cpuset, flags);
            nodes = best.into_iter().map(|i| nodes[i]).collect();
        }
        let idx: Vec<String> = nodes
            .into_iter()
            .map(|id| {
                let o = topo.obj(id);
                let i = if logical {
                    o.logical_index().to_string()
                } else {
                    o.os_index.unwrap_or(u32::MAX).to_string()
                };
                if out.object_out {
                    format!("{}:{i}", type_name(o))
                } else {
                    i
                }
            })
            .collect();
        writeln!(w, "{}", idx.join(list_sep))?;
    } else {
        let set = if out.nodeset_out {
            nodeset.into_bitmap()
        } else {
            cpuset.into_bitmap()
        };
        match out.format {
            SetOutput::Set(f) => writeln!(w, "{}", f.show(&set))?,
            SetOutput::SystemdDbusApi => match wloc_locality::systemd_dbus_api(&set) {
                Some(s) => writeln!(w, "{s}")?,
                None => return Ok(Err(Failure::NotSystemd)),
            },
        }
    }
    Ok(Ok(()))
}

/// An object's type as hwloc-calc's `--oo` prints it (hwloc_obj_type_snprintf,
/// not verbose: `L2` rather than `L2Cache`).
fn type_name(o: &wloc_core::Object) -> String {
    let label = wloc_locality::types::type_label(o);
    match label.strip_suffix("Cache") {
        Some(short) if o.obj_type.is_cache() => short.to_string(),
        _ => label,
    }
}

/// State of location reading that options change as they come.
struct Reader {
    opts: WordOptions,
    quiet: bool,
}

impl Reader {
    /// Adds one location word to `acc` (both its CPU and node sets),
    /// reporting problems on standard error.  Returns whether the word was
    /// understood.
    fn word(&self, topo: &Topology, word: &str, acc: &mut Locations) -> bool {
        match wloc_locality::resolve_word(topo, word, &self.opts) {
            Ok(r) => {
                if !self.quiet {
                    for w in &r.warnings {
                        eprintln!("wloc: {w}");
                    }
                }
                r.op.apply(acc, &r.sets);
                true
            }
            Err(e) => {
                if !self.quiet {
                    eprintln!("wloc: {e}");
                }
                eprintln!("ignored unrecognized argument {word}");
                false
            }
        }
    }
}

/// Runs `wloc calc`.
pub fn run(d: &wloc_discovery::Discovery, a: &CalcArgs) -> super::Result {
    let args = &a.args;
    let mut i = 0;
    // Topology options first, read in order as hwloc-calc reads them.
    // They fill the shared `TopologyArgs` (the same `--if` parser, the
    // same loading, restriction and error naming as the other commands),
    // but are not parsed by its clap definition: hwloc-calc reads its
    // options in order among the locations (`--pi`, `--ni`, `--no` apply
    // to the locations after them), stops at the first word that is not a
    // topology option, and answers a missing value or `-h` with its own
    // usage text.  A clap definition cannot keep that order (options
    // and locations form one trailing list here) nor that usage output.
    let mut topology = TopologyArgs::from_input(InputArgs::default());
    let mut restrict_flags = wloc_core::RestrictFlags::NONE;
    let mut cpukind: Option<String> = None;
    while i < args.len() {
        let arg = args[i].as_str();
        match arg {
            "--disallowed" | "--whole-system" => topology.disallowed = true,
            "--restrict" => {
                let spec = take_value(args, &mut i, arg)?;
                restrict_flags |= split_restrict(spec).1;
                topology.restrict = Some(spec.to_string());
            }
            "--restrict-flags" => {
                restrict_flags = parse_restrict_flags(take_value(args, &mut i, arg)?)
            }
            "--cpukind" => cpukind = Some(take_value(args, &mut i, arg)?.to_string()),
            "-i" | "--input" => {
                topology.input.input = Some(take_value(args, &mut i, arg)?.to_string())
            }
            "--if" | "--input-format" => {
                topology.input.input_format =
                    Some(parse_input_format(take_value(args, &mut i, arg)?)?);
            }
            _ => break,
        }
        i += 1;
    }
    if args[i..].iter().any(|a| a == "-h" || a == "--help") {
        return super::print(USAGE);
    }
    // As hwloc-calc: every object kept, I/O included.
    let how = Load {
        restrict_flags: RestrictFlags::Given(restrict_flags),
        quiet: args[i..].iter().any(|a| a == "-q" || a == "--quiet"),
        ..Load::new(
            keep_all(TypeFilter::KeepAll),
            LoadErrors::Named("this system"),
        )
    };
    let (topo, _) = topology.load(d, how)?;
    let mut out = Output {
        logical_out: true,
        nodeset_out: false,
        object_out: false,
        number_of: None,
        intersect: None,
        hierarchical: None,
        largest: false,
        local_memory: false,
        // hwloc-calc 2.12.1 on: nodes whose locality intersects the set count too.
        local_flags: query::local_flags::LARGER_LOCALITY
            | query::local_flags::SMALLER_LOCALITY
            | query::local_flags::INTERSECT_LOCALITY,
        best_memattr: None,
        no_smt: None,
        default_nodes: false,
        single: false,
        format: SetOutput::Set(CpusetFormat::Hwloc),
        sep: None,
        cpukind: cpukind.as_deref().map(|k| cpukind_set(&topo, k)),
    };
    let mut reader = Reader {
        // Numeric depths are levels too (`2:1`), as hwloc-calc 2.14 reads them.
        opts: WordOptions::default(),
        quiet: false,
    };
    // hwloc's verbosity: -q lowers it, -v raises it.
    let mut verbose = 0i32;
    let mut acc = Locations::default();
    let mut locations = 0usize;
    while i < args.len() {
        let arg = args[i].as_str();
        if arg.starts_with('-') {
            match arg {
                "-v" | "--verbose" => verbose += 1,
                "-q" | "--quiet" => {
                    verbose -= 1;
                    reader.quiet = true
                }
                "--disallowed" | "--whole-system" | "--restrict" | "--restrict-flags" | "--cpukind" | "-i"
                | "--input" | "--if" | "--input-format" => {
                    return Err(format!(
                        "input option {arg} disallowed after options using the topology (put it first)"
                    )
                    .into())
                }
                "--no-smt" => out.no_smt = Some(0),
                a if a.starts_with("--no-smt=") => {
                    out.no_smt = no_smt_index(&a[9..]).map_err(|_| format!("invalid PU index in {a}"))?;
                }
                "--default-nodes" => out.default_nodes = true,
                "-N" | "--number-of" => out.number_of = Some(take_value(args, &mut i, arg)?.into()),
                "-I" | "--intersect" => out.intersect = Some(take_value(args, &mut i, arg)?.into()),
                "-H" | "--hierarchical" => out.hierarchical = Some(take_value(args, &mut i, arg)?.into()),
                "--local-memory" => out.local_memory = true,
                "--local-memory-flags" => {
                    let v = take_value(args, &mut i, arg)?;
                    out.local_memory = true;
                    out.local_flags = parse_local_memory_flags(v);
                }
                "--best-memattr" => {
                    out.best_memattr = Some(take_value(args, &mut i, arg)?.into());
                    out.local_memory = true;
                }
                "--pulist" | "--proclist" => out.intersect = Some("pu".into()),
                "--nodelist" => out.intersect = Some("numa".into()),
                "--largest" | "--objects" => out.largest = true,
                "--version" => {
                    return super::print(&format!("wloc calc {}\n", env!("CARGO_PKG_VERSION")));
                }
                "-l" | "--logical" => {
                    reader.opts.physical_input = false;
                    out.logical_out = true;
                }
                "--li" | "--logical-input" => reader.opts.physical_input = false,
                "--lo" | "--logical-output" => out.logical_out = true,
                "-p" | "--physical" => {
                    reader.opts.physical_input = true;
                    out.logical_out = false;
                }
                "--pi" | "--physical-input" => reader.opts.physical_input = true,
                "--po" | "--physical-output" => out.logical_out = false,
                "-n" | "--nodeset" => {
                    reader.opts.nodeset_input = true;
                    out.nodeset_out = true;
                }
                "--ni" | "--nodeset-input" => reader.opts.nodeset_input = true,
                "--no" | "--nodeset-output" => out.nodeset_out = true,
                "--oo" | "--object-output" => out.object_out = true,
                "--sep" => out.sep = Some(take_value(args, &mut i, arg)?.into()),
                "--single" => out.single = true,
                "--taskset" => out.format = SetOutput::Set(CpusetFormat::Taskset),
                "--cof" | "--cpuset-output-format" => {
                    out.format = parse_output_format(arg, take_value(args, &mut i, arg)?)?;
                }
                "--nof" | "--nodeset-output-format" => {
                    out.format = parse_output_format(arg, take_value(args, &mut i, arg)?)?;
                    out.nodeset_out = true;
                }
                "--cif" | "--cpuset-input-format" => {
                    let v = take_value(args, &mut i, arg)?;
                    if v == "systemd-dbus-api" {
                        return Err("The systemd-dbus-api format is not supported on input".into());
                    }
                    reader.opts.cpuset_format = Some(
                        parse_set_format(v).map_err(|_| format!("Unrecognized {arg} argument {v}"))?,
                    );
                }
                _ => return Err(format!("Unrecognized option: {arg}\n{USAGE}").into()),
            }
        } else {
            // As hwloc-calc 2.14: without a location it understood, it reads
            // locations from standard input.
            if reader.word(&topo, arg, &mut acc) {
                locations += 1;
            }
        }
        i += 1;
    }
    let converting = out.largest
        || out.number_of.is_some()
        || out.intersect.is_some()
        || out.hierarchical.is_some()
        || out.local_memory;
    if converting && out.nodeset_out && !reader.opts.nodeset_input {
        eprintln!(
            "ignoring --nodeset-output when output conversion is enabled (--largest, -N, -I, -H, --local-memory, etc)"
        );
        out.nodeset_out = false;
    }
    let levels = resolve_levels(&topo, &out)?;
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    let res: std::io::Result<Result<(), Failure>> = (|| {
        if locations > 0 {
            return output(&topo, &out, &levels, acc, &mut w);
        }
        if verbose >= 0 {
            writeln!(w, "Waiting for locations to process on stdin...")?;
        }
        w.flush()?;
        let stdin = std::io::stdin();
        let mut line = Vec::new();
        let mut lock = stdin.lock();
        loop {
            line.clear();
            if lock.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            let text = String::from_utf8_lossy(&line);
            let mut acc = Locations::default();
            for word in text.split([' ', '\n']).filter(|s| !s.is_empty()) {
                reader.word(&topo, word, &mut acc);
            }
            match output(&topo, &out, &levels, acc, &mut w)? {
                Ok(()) => {}
                Err(Failure::Uncovered) => eprintln!("No object included in this cpuset"),
                Err(f) => return Ok(Err(f)),
            }
        }
        Ok(Ok(()))
    })();
    let flushed = w.flush();
    match res.and_then(|c| flushed.map(|_| c))? {
        Ok(()) => Ok(()),
        Err(Failure::Uncovered) => Err("No object included in this cpuset".into()),
        Err(Failure::NotSystemd) => Err(
            "Empty and infinite sets are not supported with the systemd-dbus-api output format"
                .into(),
        ),
    }
}
