//! Debian's unmodified Open MPI 4.1 (`mpirun`, which loads libhwloc
//! through libopen-pal) on wloc's libhwloc.so.15: the bindings it reports
//! and the ones its ranks find themselves in (`taskset` inside each rank)
//! are those it gives on libhwloc, for `--bind-to core` and
//! `--map-by ppr:1:socket` (Open MPI 4.1's name for packages); on hwloc
//! XML topologies of bigger machines (`HWLOC_XMLFILE`), the mapper's
//! bindings and the reports are those of libhwloc; with a launcher's
//! image of this machine (`WLOC_IMAGE`), mpirun reports what it reports
//! when discovering, and nothing discovers.

mod support;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use wloc_core::topology::TypeFilter;

/// mpirun as root, without any topology input from the test's
/// environment, on wloc's library in `lib` (Debian's when `None`; the
/// daemons and ranks get the same `LD_LIBRARY_PATH`), with `env` added.
fn mpirun(lib: Option<&Path>, env: &[(&str, &OsStr)]) -> Command {
    let mut c = Command::new("mpirun");
    c.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    support::clear_topology_env(&mut c).env_remove("OMPI_MCA_hwloc_base_topo_file");
    support::use_library(&mut c, lib);
    if lib.is_some() {
        // mpirun and its daemons load the library named here.
        c.args(["-x", "LD_LIBRARY_PATH"]);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

/// What a run printed: its standard output, then its standard error
/// (where mpirun writes its reports).
fn printed(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `mpirun`'s report and the ranks' own masks, with job ids and pids
/// (which change from run to run) left out, sorted.
fn bindings(np: usize, args: &[&str], lib: Option<&Path>) -> Vec<String> {
    bindings_with(np, args, lib, &[])
}

/// [`bindings`] with more environment.
fn bindings_with(
    np: usize,
    args: &[&str],
    lib: Option<&Path>,
    env: &[(&str, &OsStr)],
) -> Vec<String> {
    let mut c = mpirun(lib, env);
    c.args(["--report-bindings", "-np", &np.to_string()])
        .args(args)
        .args([
            "sh",
            "-c",
            "echo rank-mask $(taskset -p $$ | sed 's/.*: //')",
        ]);
    let o = c.output().expect("mpirun runs");
    let text = printed(&o);
    assert!(o.status.success(), "mpirun {args:?} failed:\n{text}");
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

/// A conformance recording of a bigger machine, written as hwloc 2 XML
/// (the recordings are hwloc 3's, which hwloc 2.9 does not read).
fn hwloc2_xml(name: &str, dir: &Path) -> PathBuf {
    let src = support::workspace()
        .join("tests/data/conformance/xml")
        .join(name);
    let text = std::fs::read_to_string(&src).unwrap();
    let mut keep = wloc_core::Topology::new();
    keep.set_all_types_filter(TypeFilter::KeepAll);
    keep.include_disallowed = true;
    let t = wloc_xml::import_str(&text, keep).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    let out = dir.join(name);
    std::fs::write(&out, wloc_xml::export_hwloc2(&t)).unwrap();
    out
}

/// mpirun's exit code and its lines about bindings: the mapper's
/// (`BOUND PROC ... TO`, `rmaps_base_verbose`), `--display-map`'s
/// (`Bound:`), `--report-bindings`' (`MCW rank N bound to`) and Open
/// MPI's warnings about ranks it could not bind; the pid of mpirun and
/// the job id (which change from run to run) left out, sorted.
fn mapped(lib: Option<&Path>, env: &[(&str, &OsStr)], args: &[&str]) -> (Option<i32>, Vec<String>) {
    let mut c = mpirun(lib, env);
    // A job Open MPI cannot place may wait forever: fail instead.
    c.args(["--timeout", "120"]);
    let o = c
        .args(["--display-map", "--mca", "rmaps_base_verbose", "5"])
        .arg("--report-bindings")
        .args(args)
        .arg("true")
        .output()
        .expect("mpirun runs");
    let text = printed(&o);
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| {
            [
                "BOUND PROC",
                "Bound:",
                " bound",
                "not bound",
                "support binding processes",
            ]
            .iter()
            .any(|k| l.contains(k))
        })
        .map(|l| {
            let l = l.trim();
            // "[host:PID] ..." loses its first bracket; "[[JOB," and
            // "jobid: [JOB," lose the job number.
            let l = match l.strip_prefix('[') {
                Some(rest) if !rest.starts_with('[') => {
                    rest.split_once(']').map_or(l, |(_, r)| r.trim())
                }
                _ => l,
            };
            let mut out = String::new();
            let mut rest = l;
            while let Some(at) = rest.find('[') {
                out.push_str(&rest[..=at]);
                rest = &rest[at + 1..];
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                if digits > 0 && rest[digits..].starts_with(',') {
                    out.push_str("JOB");
                    rest = &rest[digits..];
                }
            }
            out.push_str(rest);
            out
        })
        .collect();
    lines.sort();
    (o.status.code(), lines)
}

/// Open MPI on hwloc XML topologies of bigger machines than this one
/// (4 packages of 2 cores of 2 threads; 16 dies of 6 cores with 4 NUMA
/// nodes): the same bindings on wloc's library as on libhwloc.
///
/// With `HWLOC_XMLFILE` alone, hwloc says the topology is not this
/// system's and cannot bind: `mpirun --bind-to core` refuses on both.
/// With `HWLOC_THISSYSTEM=1` it binds, and `:if-supported` lets the job
/// go on when a rank's PUs are not on this 2-PU machine (Open MPI warns):
/// the mapper's bindings (rmaps verbose), `--display-map`'s and the ranks
/// that could bind (`--report-bindings`) are compared for several mapping
/// and binding policies.
#[test]
fn mpirun_binds_on_xml_topologies_as_on_libhwloc() {
    support::require_c_toolchain();
    support::require(&[("/usr/bin/mpirun", "openmpi-bin")]);
    let lib = support::library_dir("openmpi-xml");
    let runs: [&[&str]; 6] = [
        &["--bind-to", "core:if-supported", "-np", "4"],
        &["--bind-to", "core:if-supported", "-np", "8"],
        &[
            "--map-by",
            "socket",
            "--bind-to",
            "core:if-supported",
            "-np",
            "6",
        ],
        &[
            "--map-by",
            "core",
            "--bind-to",
            "socket:if-supported",
            "-np",
            "4",
        ],
        &[
            "--use-hwthread-cpus",
            "--bind-to",
            "hwthread:if-supported",
            "-np",
            "12",
        ],
        &[
            "--map-by",
            "numa",
            "--bind-to",
            "numa:if-supported",
            "-np",
            "4",
        ],
    ];
    let (mut compared, mut bound) = (0, 0);
    for name in ["16em64t-4s2c2t.xml", "96em64t-4n4d3ca2co-pci.xml"] {
        let xml = hwloc2_xml(name, &lib);
        let file = [("HWLOC_XMLFILE", xml.as_os_str())];
        // Not this system: no binding, on both.
        let refused = ["--bind-to", "core", "-np", "2"];
        let theirs = mapped(None, &file, &refused);
        let ours = mapped(Some(&lib), &file, &refused);
        assert_ne!(theirs.0, Some(0), "{name}: libhwloc bound anyway");
        assert!(
            theirs
                .1
                .iter()
                .any(|l| l.contains("support binding processes")),
            "{name}: {theirs:?}"
        );
        assert_eq!(ours, theirs, "{name}: mpirun {refused:?}");
        compared += 1;
        let this_system = [
            ("HWLOC_XMLFILE", xml.as_os_str()),
            ("HWLOC_THISSYSTEM", OsStr::new("1")),
        ];
        for args in runs {
            let theirs = mapped(None, &this_system, args);
            let ours = mapped(Some(&lib), &this_system, args);
            assert_eq!(theirs.0, Some(0), "{name}: libhwloc: {args:?}: {theirs:?}");
            assert_eq!(ours, theirs, "{name}: mpirun {args:?}");
            compared += 1;
            bound += theirs.1.iter().filter(|l| l.contains("BOUND PROC")).count();
        }
    }
    eprintln!("{compared} jobs compared, {bound} mapper bindings");
    // The bindings are the bigger machines': far more than this one has.
    assert!(bound >= 60, "only {bound} bindings reported");
}

/// Discoveries of this machine in an `strace -f` log: opens of
/// `cpu0/topology/core_id` in `/sys` (libhwloc's Linux backend and wloc's
/// sandboxed Linux component each read it once per discovery; reading
/// XML or an image opens no sysfs file), as in tests/pmix.rs.
fn discoveries(trace: &Path) -> usize {
    std::fs::read_to_string(trace)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("cpu0/topology/core_id\"") && !l.contains("= -1"))
        .count()
}

/// With `WLOC_IMAGE` naming an image of this machine, mpirun on wloc's
/// library reports the bindings it reports when discovering (and that
/// libhwloc gives), its ranks are bound alike, and the job discovers
/// nothing; without the image it discovers.
#[test]
fn mpirun_on_a_launchers_image_binds_without_discovering() {
    support::require_c_toolchain();
    support::require(&[
        ("/usr/bin/mpirun", "openmpi-bin"),
        ("/usr/bin/strace", "strace"),
    ]);
    let lib = support::library_dir("openmpi-image");
    let image = lib.join("this.img");
    support::this_machine_image(&image);
    let with_image = [("WLOC_IMAGE", image.as_os_str())];
    let runs: [(usize, &[&str]); 3] = [
        (2, &["--bind-to", "core"]),
        (1, &["--map-by", "ppr:1:socket", "--bind-to", "core"]),
        (2, &["--bind-to", "hwthread"]),
    ];
    for (np, args) in runs {
        let theirs = bindings(np, args, None);
        let discovered = bindings(np, args, Some(&lib));
        let adopted = bindings_with(np, args, Some(&lib), &with_image);
        assert_eq!(discovered, theirs, "mpirun {args:?}");
        assert_eq!(adopted, theirs, "mpirun {args:?} on the image");
    }
    // The same job under strace: mpirun and every rank, followed.
    let traced = |env: &[(&str, &OsStr)], tag: &str| -> (usize, String) {
        let trace = lib.join(format!("trace-{tag}"));
        let c = mpirun(Some(&lib), env);
        let prog = c.get_program().to_os_string();
        let args: Vec<_> = c.get_args().map(|a| a.to_os_string()).collect();
        let mut s = Command::new("strace");
        s.args(["-f", "-qq", "-e", "trace=open,openat,openat2", "-o"])
            .arg(&trace)
            .arg(prog)
            .args(args)
            .args(["--report-bindings", "--bind-to", "core", "-np", "2", "true"]);
        for (k, v) in c.get_envs() {
            match v {
                Some(v) => s.env(k, v),
                None => s.env_remove(k),
            };
        }
        let o = s.output().expect("strace runs mpirun");
        assert!(
            o.status.success(),
            "{tag}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let log = std::fs::read_to_string(&trace).unwrap_or_default();
        (discoveries(&trace), log)
    };
    let (found, _) = traced(&[], "discovering");
    assert!(
        found >= 1,
        "the control job discovered nothing: the count is blind"
    );
    let (found, log) = traced(&with_image, "image");
    assert_eq!(found, 0, "mpirun discovered with WLOC_IMAGE set");
    assert!(
        log.contains(&format!("\"{}\"", image.display())),
        "mpirun did not read the image"
    );
}
