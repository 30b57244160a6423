//! `wloc distrib N`: N CPU sets spread as evenly as possible over the
//! machine, as hwloc-distrib prints them.

use std::io::Write;

use clap::Args;
use wloc::tool_flags::parse_set_format;
use wloc_core::object::Depth;
use wloc_core::topology::TypeDepth;
use wloc_core::{Bitmap, TypeFilter};
use wloc_locality::CpusetFormat;
use wloc_locality::types::{parse_type, spec_depth};

use super::topology::{Load, LoadErrors, RestrictFlags, TopologyArgs};

/// Options of `wloc distrib`, named as hwloc-distrib's.
#[derive(Args, Debug)]
pub struct DistribArgs {
    #[command(flatten)]
    pub topo_args: TopologyArgs,
    /// Ignore objects of the given type (may be repeated).
    #[arg(long = "ignore", value_name = "TYPE")]
    pub ignore: Vec<String>,
    /// Distribute starting from objects of the given type.
    #[arg(long, value_name = "TYPE")]
    pub from: Option<String>,
    /// Distribute down to objects of the given type.
    #[arg(long, value_name = "TYPE")]
    pub to: Option<String>,
    /// Distribute among objects of the given type (--from and --to).
    #[arg(long, value_name = "TYPE")]
    pub at: Option<String>,
    /// Distribute by starting from the last objects.
    #[arg(long)]
    pub reverse: bool,
    /// Keep a single PU in each set (the last one with --reverse).
    #[arg(long)]
    pub single: bool,
    /// Show sets in taskset form.
    #[arg(long)]
    pub taskset: bool,
    /// Form of the output sets: hwloc, list or taskset.
    #[arg(long = "cof", alias = "cpuset-output-format", value_name = "FORMAT", value_parser = parse_set_format)]
    pub cof: Option<CpusetFormat>,
    /// Show verbose messages.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// The number of sets to make.
    #[arg(value_name = "N")]
    pub number: String,
}

/// The number as C's `atol` reads it: optional blanks and sign, then digits.
fn parse_count(s: &str) -> super::Result<u64> {
    let t = s.trim_start();
    let digits: String = t
        .strip_prefix('+')
        .unwrap_or(t)
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    if digits.is_empty() {
        return Err(
            format!("invalid number of sets `{s}': expected a non-negative integer").into(),
        );
    }
    Ok(digits
        .parse()
        .map_err(|_| format!("invalid number of sets `{s}': too large"))?)
}

/// The normal depth of a `--from`/`--to` type.
fn type_depth(topo: &wloc_core::Topology, s: &str, opt: &str) -> super::Result<u32> {
    let err = || format!("Unsupported or unavailable type `{s}' passed to {opt}");
    let spec = parse_type(s).ok_or_else(err)?;
    match spec_depth(topo, &spec) {
        TypeDepth::Depth(Depth::Normal(d)) => Ok(d),
        _ => Err(err().into()),
    }
}

/// Runs `wloc distrib`.
pub fn run(d: &wloc_discovery::Discovery, a: &DistribArgs) -> super::Result {
    let n = parse_count(&a.number)?;
    let mut t = wloc_core::Topology::new();
    for ty in &a.ignore {
        match parse_type(ty) {
            // As hwloc, types that cannot be ignored (PU, NUMA nodes) are kept silently.
            Some(spec) => {
                let _ = t.set_type_filter(spec.obj_type, TypeFilter::KeepNone);
            }
            None => eprintln!("Unsupported type `{ty}' passed to --ignore, ignoring."),
        }
    }
    let how = Load {
        restrict_flags: RestrictFlags::Add,
        ..Load::new(t, LoadErrors::Named("this system"))
    };
    let (topo, _) = a.topo_args.load(d, how)?;
    if a.verbose {
        eprintln!("distributing {n}");
    }
    let from = a.at.as_deref().or(a.from.as_deref());
    let to = a.at.as_deref().or(a.to.as_deref());
    let from_depth = match from {
        Some(s) => type_depth(&topo, s, if a.at.is_some() { "--at" } else { "--from" })?,
        None => 0,
    };
    let until = match to {
        Some(s) => type_depth(&topo, s, if a.at.is_some() { "--at" } else { "--to" })?,
        None => u32::MAX,
    };
    let roots = topo.level(Depth::Normal(from_depth)).to_vec();
    let runs = wloc_locality::distrib::distribute(&topo, &roots, n, until, a.reverse);
    let format = a.cof.unwrap_or(if a.taskset {
        CpusetFormat::Taskset
    } else {
        CpusetFormat::Hwloc
    });
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    (|| -> std::io::Result<()> {
        for (set, count) in &runs.0 {
            let mut b: Bitmap = set.bitmap().clone();
            if a.single {
                if a.reverse {
                    if let Some(last) = b.last() {
                        b = Bitmap::from_index(last);
                    }
                } else {
                    b.singlify();
                }
            }
            let line = format.show(&b);
            for _ in 0..*count {
                writeln!(w, "{line}")?;
            }
        }
        w.flush()
    })()?;
    Ok(())
}
