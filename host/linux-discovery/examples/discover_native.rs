//! Runs Linux discovery natively (no sandbox) on a root directory, many
//! times, and prints the time per run: a profiling aid for the discovery
//! code itself (`perf record` this binary).
//!
//! Usage: discover_native ROOT [RUNS]
use std::time::Instant;
use wloc_core::{Topology, TypeFilter};
use wloc_linux::{NativeFs, Options, discover};

fn main() {
    let mut args = std::env::args().skip(1);
    let root = args.next().expect("usage: discover_native ROOT [RUNS]");
    let runs: u32 = args
        .next()
        .map_or(100, |r| r.parse().expect("RUNS is a number"));
    let fs = NativeFs::new(&root);
    let start = Instant::now();
    let mut objects = 0;
    for _ in 0..runs {
        let mut topo = Topology::new();
        topo.set_all_types_filter(TypeFilter::KeepAll);
        topo.set_io_types_filter(TypeFilter::KeepImportant);
        let t = discover(&fs, &Options::default(), topo).expect("discovery");
        objects = t.objs_by_type(wloc_core::ObjType::PU).len();
    }
    println!(
        "{objects} PUs, {:.3} ms per run",
        start.elapsed().as_secs_f64() * 1e3 / f64::from(runs)
    );
}
