//! Compiles the libhwloc side of the benchmark (csrc/harness.c) when
//! libhwloc's headers are installed (Debian: libhwloc-dev).  Without them
//! the crate still builds, with the `no_hwloc` cfg, and the benchmark
//! refuses to run with a message saying what to install: the workspace's
//! tests and lints must not need libhwloc.
use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(no_hwloc)");
    println!("cargo::rerun-if-changed=csrc/harness.c");
    let header = ["/usr/include/hwloc.h", "/usr/local/include/hwloc.h"]
        .iter()
        .any(|p| Path::new(p).exists());
    if !header {
        println!("cargo::rustc-cfg=no_hwloc");
        return;
    }
    cc::Build::new()
        .file("csrc/harness.c")
        .opt_level(2)
        .compile("wlocbenchhwloc");
    println!("cargo::rustc-link-lib=hwloc");
}
