//! Times adopting an image in this process: `adopt_timing IMAGE [N]`.
//!
//! Each round opens the file, checks and validates the image, and answers
//! a first query (the number of PUs); the rounds' median, 10th and 90th
//! percentiles are printed in microseconds, for a private read and, from a
//! sealed memfd holding the same image, for a shared mapping.  Used by
//! `bench/image.sh`.

use std::time::Instant;

fn percentiles(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (at(0.1), at(0.5), at(0.9))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: adopt_timing IMAGE [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(2000);
    let pus = |a: &wloc_image::AdoptedTopology| {
        a.nbobjs_at_depth(wloc_core::object::Depth::Normal(a.depth() - 1))
    };
    let first = match wloc_image::adopt(path) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("adopt_timing: {path}: {e}");
            std::process::exit(1);
        }
    };
    let expected = pus(&first);
    let topo = first.to_topology().expect("the image rebuilds");
    let memfd = std::fs::File::from(wloc_image::write_memfd(&topo).expect("memfd"));
    let proc_path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&memfd));
    for (label, p) in [("read", path.as_str()), ("memfd", proc_path.as_str())] {
        let mut t = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            let start = Instant::now();
            let a = wloc_image::adopt(p).expect("adopt");
            let n = pus(&a);
            let el = start.elapsed().as_secs_f64() * 1e6;
            assert_eq!(n, expected);
            drop(a);
            t.push(el);
        }
        let (p10, p50, p90) = percentiles(t);
        println!("{label} p10 {p10:.1} p50 {p50:.1} p90 {p90:.1} us ({expected} PUs)");
    }
    let mut t = Vec::with_capacity(rounds / 10);
    for _ in 0..(rounds / 10).max(5) {
        let start = Instant::now();
        let a = wloc_image::adopt(path).expect("adopt");
        let topo = a.to_topology().expect("rebuild");
        let el = start.elapsed().as_secs_f64() * 1e6;
        assert!(topo.depth() > 0);
        t.push(el);
    }
    let (p10, p50, p90) = percentiles(t);
    println!("to_topology p10 {p10:.1} p50 {p50:.1} p90 {p90:.1} us");
}
