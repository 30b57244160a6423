//! Scratch: adopt in a loop for perf.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args[2] == "phases" {
        wloc_image::scratch_phases(&std::fs::read(&args[1]).unwrap());
        return;
    }
    let n: usize = args[2].parse().unwrap();
    let mut path = args[1].clone();
    let _keep;
    if args.get(3).map(|s| s.as_str()) == Some("memfd") {
        let t = wloc_image::adopt(&path).unwrap().to_topology().unwrap();
        let f = std::fs::File::from(wloc_image::write_memfd(&t).unwrap());
        path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&f));
        _keep = f;
    }
    let mut s = 0;
    for _ in 0..n {
        let a = wloc_image::adopt(&path).unwrap();
        s += a.len();
    }
    println!("{s}");
}
