//! Debian's unmodified Open MPI 4.1 (`mpirun`, which loads libhwloc
//! through libopen-pal) on wloc's libhwloc.so.15: the bindings it reports
//! and the ones its ranks find themselves in (`taskset` inside each rank)
//! are those it gives on libhwloc, for `--bind-to core` and
//! `--map-by ppr:1:socket` (Open MPI 4.1's name for packages).

mod support;

use std::path::Path;
use std::process::Command;

/// `mpirun`'s report and the ranks' own masks, with job ids and pids
/// (which change from run to run) left out, sorted.
fn bindings(np: usize, args: &[&str], lib: Option<&Path>) -> Vec<String> {
    let mut c = Command::new("mpirun");
    c.args(["--report-bindings", "-np", &np.to_string()])
        .args(args)
        .args([
            "sh",
            "-c",
            "echo rank-mask $(taskset -p $$ | sed 's/.*: //')",
        ])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env_remove("HWLOC_XMLFILE")
        .env_remove("WLOC_IMAGE");
    match lib {
        // mpirun and its daemons load the library named here.
        Some(l) => {
            c.env("LD_LIBRARY_PATH", l).args(["-x", "LD_LIBRARY_PATH"]);
        }
        None => {
            c.env_remove("LD_LIBRARY_PATH");
        }
    }
    let o = c.output().expect("mpirun runs");
    assert!(
        o.status.success(),
        "mpirun {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| l.contains("bound to") || l.starts_with("rank-mask"))
        // "[host:PID] MCW rank N bound to ...": the pid goes.
        .map(|l| {
            l.split_once(']')
                .map_or(l, |(_, rest)| rest)
                .trim()
                .to_string()
        })
        .collect();
    lines.sort();
    lines
}

#[test]
fn mpirun_binds_ranks_as_on_libhwloc() {
    support::require_c_toolchain();
    support::require(&[("/usr/bin/mpirun", "openmpi-bin")]);
    let lib = support::library_dir("openmpi");
    // Open MPI 4.1 calls packages sockets; this machine has one.
    let runs: [(usize, &[&str]); 2] = [
        (2, &["--bind-to", "core"]),
        (1, &["--map-by", "ppr:1:socket", "--bind-to", "core"]),
    ];
    for (np, args) in runs {
        let theirs = bindings(np, args, None);
        let ours = bindings(np, args, Some(&lib));
        assert_eq!(
            theirs.iter().filter(|l| l.starts_with("rank-mask")).count(),
            np,
            "{theirs:?}"
        );
        assert_eq!(ours, theirs, "mpirun {args:?}");
    }
    // mpirun really ran on wloc's library.
    let o = Command::new("mpirun")
        .args([
            "-np",
            "1",
            "-x",
            "LD_LIBRARY_PATH",
            "sh",
            "-c",
            "grep -h libhwloc /proc/$PPID/maps",
        ])
        .env("LD_LIBRARY_PATH", &lib)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap();
    let maps = String::from_utf8_lossy(&o.stdout);
    assert!(
        maps.lines()
            .any(|l| l.contains("libhwloc.so") && !l.contains("/usr/lib")),
        "the rank's parent did not map wloc's library:\n{maps}"
    );
}
