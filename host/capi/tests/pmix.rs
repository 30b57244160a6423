//! Debian's unmodified PMIx 4.2 (`libpmix2`, which links libhwloc.so.15)
//! sharing the node's topology through hwloc's shmem API, on wloc's
//! library and on Debian's libhwloc.
//!
//! A small PMIx server (`c/pmix_job.c`) starts with
//! `PMIX_SERVER_SHARE_TOPOLOGY`: PMIx loads the topology (or takes the
//! server's as `PMIX_TOPOLOGY2`), writes it with
//! `hwloc_shmem_topology_write` into `hwloc.sm` in the server's temporary
//! folder and hands its clients the `PMIX_HWLOC_SHMEM_FILE/ADDR/SIZE`
//! keys; each forked client calls `PMIx_Init`, then `PMIx_Load_topology`
//! (PMIx 4.1 and later), which adopts the segment
//! (`hwloc_shmem_topology_adopt`), or adopts it itself from the keys (as
//! PMIx 3.x clients do). Every process prints a fingerprint of its
//! topology (levels, synthetic description, every object's sets), which
//! must be the server's, and the same on both libraries.
//!
//! Discoveries are counted from outside, the same way for both libraries:
//! `strace` records every file each process of the job opens, and a
//! discovery of this machine is an open of `cpu0/topology/core_id` in
//! `/sys` (libhwloc's Linux backend and wloc's sandboxed Linux component
//! each read it once per discovery; adopting a segment, XML or an image
//! reads no sysfs file). A control job without sharing counts one
//! discovery per process on both libraries.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Clients per job.
const CLIENTS: usize = 4;

/// What one process of the job printed.
#[derive(Debug, Default)]
struct Block {
    role: String,
    rank: u32,
    pid: u32,
    lib: String,
    /// `PMIX_HWLOC_SHMEM_FILE`, `_ADDR`, `_SIZE` as the client got them.
    shmem: Option<(String, String, String)>,
    /// `hwloc_shmem_topology_adopt`'s return value and errno (`keys`).
    adopt: Option<(i32, i32)>,
    mapped: Option<bool>,
    /// Time to get the topology, microseconds.
    load_us: Option<u64>,
    /// Peak resident memory, kB.
    hwm_kb: Option<u64>,
    fingerprint: Vec<String>,
}

/// The blocks of the job's standard output.
fn blocks(out: &str) -> Vec<Block> {
    let mut all = Vec::new();
    let mut cur: Option<Block> = None;
    for line in out.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["BEGIN", role, rank, pid] => {
                cur = Some(Block {
                    role: role.to_string(),
                    rank: rank.parse().expect("rank"),
                    pid: pid.parse().expect("pid"),
                    ..Block::default()
                })
            }
            ["END", ..] => all.extend(cur.take()),
            ["lib", file] => cur.as_mut().expect("in a block").lib = file.to_string(),
            ["shmem", "none"] => {}
            ["shmem", file, addr, size] => {
                cur.as_mut().expect("in a block").shmem =
                    Some((file.to_string(), addr.to_string(), size.to_string()))
            }
            ["adopt", rc, errno] => {
                cur.as_mut().expect("in a block").adopt =
                    Some((rc.parse().expect("rc"), errno.parse().expect("errno")))
            }
            ["mapped", yes] => cur.as_mut().expect("in a block").mapped = Some(*yes == "yes"),
            ["load_us", v] => cur.as_mut().expect("in a block").load_us = v.parse().ok(),
            ["hwm_kb", v] => cur.as_mut().expect("in a block").hwm_kb = v.parse().ok(),
            ["fp", ..] => cur
                .as_mut()
                .expect("in a block")
                .fingerprint
                .push(line.to_string()),
            _ => {}
        }
    }
    all
}

/// The files each process opened (successfully), by process id, from
/// `strace -ff -o DIR/t`: one file `t.TID` per thread, whose `clone`
/// lines (`CLONE_THREAD`: a thread of the same process) tell which
/// process each thread belongs to.
fn opened(dir: &Path) -> BTreeMap<u32, Vec<String>> {
    let mut by_tid: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    let mut thread_of: BTreeMap<u32, u32> = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(tid) = name.strip_prefix("t.").and_then(|p| p.parse().ok()) else {
            continue;
        };
        let text = std::fs::read_to_string(e.path()).unwrap();
        for l in text.lines() {
            let ret = l
                .rsplit_once(" = ")
                .and_then(|(_, r)| r.trim().parse::<u32>().ok());
            if l.starts_with("clone") && l.contains("CLONE_THREAD") {
                if let Some(child) = ret {
                    thread_of.insert(child, tid);
                }
            } else if l.starts_with("open")
                && ret.is_some()
                && let Some(path) = l.split('"').nth(1)
            {
                by_tid.entry(tid).or_default().push(path.to_string());
            }
        }
    }
    let mut by_pid: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for (tid, paths) in by_tid {
        let mut pid = tid;
        while let Some(&parent) = thread_of.get(&pid) {
            pid = parent;
        }
        by_pid.entry(pid).or_default().extend(paths);
    }
    by_pid
}

/// An open that only discovering this machine makes.
fn is_discovery(path: &str) -> bool {
    path.ends_with("cpu0/topology/core_id")
}

/// One job, traced.
struct Job {
    blocks: Vec<Block>,
    opened: BTreeMap<u32, Vec<String>>,
    stderr: String,
    tmpdir: PathBuf,
}

impl Job {
    fn server(&self) -> &Block {
        let s: Vec<&Block> = self.blocks.iter().filter(|b| b.role == "server").collect();
        assert_eq!(s.len(), 1, "{:?}", self.blocks);
        s[0]
    }

    fn clients(&self) -> Vec<&Block> {
        self.blocks.iter().filter(|b| b.role == "client").collect()
    }

    /// The processes that discovered the machine, one entry per discovery.
    fn discoveries(&self) -> Vec<u32> {
        self.opened
            .iter()
            .flat_map(|(pid, paths)| paths.iter().filter(|p| is_discovery(p)).map(|_| *pid))
            .collect()
    }

    /// The clients PMIx reports as having adopted the shared segment (its
    /// `pmix_hwloc_verbose` output, `[host:PID] ... shmem adopted`).
    fn adopted_by(&self) -> Vec<u32> {
        self.pmix_reports(" shmem adopted")
    }

    /// The processes whose PMIx reported `what` (`[host:PID] ... what`).
    fn pmix_reports(&self, what: &str) -> Vec<u32> {
        let mut pids: Vec<u32> = self
            .stderr
            .lines()
            .filter(|l| l.ends_with(what))
            .filter_map(|l| l.split(']').next()?.rsplit(':').next()?.parse().ok())
            .collect();
        pids.sort();
        pids
    }

    fn shmem_file(&self) -> PathBuf {
        self.tmpdir.join("hwloc.sm")
    }
}

/// How a job runs.
#[derive(Clone, Copy)]
struct Setup<'a> {
    /// The server's libhwloc: wloc's library folder, `None` for Debian's.
    lib: Option<&'a Path>,
    /// The clients' libhwloc, likewise.
    client_lib: Option<&'a Path>,
    /// `pmix`: PMIx loads the topology; `host`: the server loads it and
    /// passes it as `PMIX_TOPOLOGY2`; `alone`: PMIx loads it and does not
    /// share it.
    mode: &'a str,
    /// `load`: clients call `PMIx_Load_topology`; `keys`: they adopt the
    /// segment the `PMIX_HWLOC_SHMEM_*` keys name (PMIx 3.x clients).
    way: &'a str,
    /// `WLOC_IMAGE` for every process of the job.
    image: Option<&'a Path>,
}

impl Setup<'_> {
    fn tag(&self) -> String {
        let name = |l: Option<&Path>| if l.is_some() { "wloc" } else { "libhwloc" };
        let clients = if self.lib == self.client_lib {
            String::new()
        } else {
            format!("-clients-on-{}", name(self.client_lib))
        };
        format!(
            "{}{clients}-{}-{}{}",
            name(self.lib),
            self.mode,
            self.way,
            if self.image.is_some() { "-image" } else { "" }
        )
    }
}

/// Runs the job under strace.
fn run(exe: &Path, work: &Path, setup: Setup) -> Job {
    let tag = setup.tag();
    let dir = work.join(&tag);
    let _ = std::fs::remove_dir_all(&dir);
    let (tmpdir, traces) = (dir.join("tmp"), dir.join("trace"));
    std::fs::create_dir_all(&tmpdir).unwrap();
    std::fs::create_dir_all(&traces).unwrap();
    let mut c = Command::new("timeout");
    c.arg("120")
        .args([
            "strace",
            "-ff",
            "-qq",
            "-e",
            "trace=open,openat,openat2,clone,clone3",
            "-o",
        ])
        .arg(traces.join("t"))
        .arg(exe)
        .args(["server", &CLIENTS.to_string()])
        .arg(&tmpdir)
        .args([setup.mode, setup.way])
        .env("PMIX_MCA_pmix_hwloc_verbose", "2");
    support::clear_topology_env(&mut c)
        .env_remove("PMIX_MCA_pmix_hwloc_topo_file")
        .env_remove("PMIX_MCA_pmix_hwloc_hole_kind");
    // Debian's PMIx with Debian's libhwloc is the real part compared with
    // here (not hwloc 2.14's library, the reference of the output
    // comparisons): `None` is the system's library.
    match setup.lib {
        Some(l) => c.env("LD_LIBRARY_PATH", l),
        None => c.env_remove("LD_LIBRARY_PATH"),
    };
    if setup.client_lib != setup.lib {
        let l = setup.client_lib.map(|l| l.as_os_str()).unwrap_or_default();
        c.env("PMIX_JOB_CLIENT_LIBRARY_PATH", l);
    }
    if let Some(i) = setup.image {
        c.env("WLOC_IMAGE", i);
    }
    let o = c.output().expect("strace runs the job");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    assert!(
        o.status.success(),
        "{tag}: the job failed ({}):\n{stdout}\n{stderr}",
        o.status
    );
    let job = Job {
        blocks: blocks(&stdout),
        opened: opened(&traces),
        stderr,
        tmpdir,
    };
    assert_eq!(
        job.clients().len(),
        CLIENTS,
        "{tag}:\n{stdout}\n{}",
        job.stderr
    );
    let _ = job.server();
    job
}

/// Checks what holds on both libraries: every process runs on the
/// library asked for, every client got the shmem keys of the server's
/// segment and sees the server's topology, and the job discovered the
/// machine `discoveries` times, in the server only.
fn check_job(setup: &Setup, job: &Job, discoveries: usize) {
    let tag = setup.tag();
    for b in &job.blocks {
        let lib = if b.role == "server" {
            setup.lib
        } else {
            setup.client_lib
        };
        match lib {
            Some(l) => assert!(
                Path::new(&b.lib).starts_with(l),
                "{tag}: {} {} runs on {}",
                b.role,
                b.rank,
                b.lib
            ),
            None => assert!(
                b.lib.starts_with("/usr/lib") || b.lib.starts_with("/lib"),
                "{tag}: {} {} runs on {}",
                b.role,
                b.rank,
                b.lib
            ),
        }
    }
    let server = job.server();
    assert!(!server.fingerprint.is_empty(), "{tag}: empty fingerprint");
    let mut ranks: Vec<u32> = job.clients().iter().map(|c| c.rank).collect();
    ranks.sort();
    assert_eq!(ranks, (0..CLIENTS as u32).collect::<Vec<_>>(), "{tag}");
    for c in job.clients() {
        let (file, _, size) = c
            .shmem
            .as_ref()
            .unwrap_or_else(|| panic!("{tag}: client {} got no PMIX_HWLOC_SHMEM_* keys", c.rank));
        assert_eq!(Path::new(file), job.shmem_file(), "{tag}");
        assert!(
            size.parse::<usize>().is_ok_and(|s| s > 0),
            "{tag}: size {size}"
        );
        assert_eq!(
            c.fingerprint, server.fingerprint,
            "{tag}: client {} sees another topology than the server",
            c.rank
        );
    }
    let found = job.discoveries();
    assert_eq!(
        found.len(),
        discoveries,
        "{tag}: discoveries by pid {found:?} (server {})",
        server.pid
    );
    assert!(
        found.iter().all(|&p| p == server.pid),
        "{tag}: a client discovered: {found:?}"
    );
}

/// Checks that every client adopted the server's segment: PMIx says so
/// (`load`) or `hwloc_shmem_topology_adopt` returned 0 (`keys`), the
/// client opened the segment's file, and it did not discover.
fn check_adopted(tag: &str, job: &Job, way: &str) {
    let mut clients: Vec<u32> = job.clients().iter().map(|c| c.pid).collect();
    clients.sort();
    if way == "keys" {
        for c in job.clients() {
            assert_eq!(c.adopt, Some((0, 0)), "{tag}: client {} adopting", c.rank);
        }
    } else {
        assert_eq!(
            job.adopted_by(),
            clients,
            "{tag}: PMIx's report:\n{}",
            job.stderr
        );
    }
    let shm = job.shmem_file().display().to_string();
    for c in job.clients() {
        let files = job.opened.get(&c.pid).map(Vec::as_slice).unwrap_or(&[]);
        assert!(
            files.contains(&shm),
            "{tag}: client {} did not open {shm}",
            c.rank
        );
        assert!(
            !files.iter().any(|f| is_discovery(f)),
            "{tag}: client {} discovered",
            c.rank
        );
    }
}

/// The median of the clients' values.
fn median(job: &Job, f: impl Fn(&Block) -> Option<u64>) -> u64 {
    let mut v: Vec<u64> = job.clients().iter().filter_map(|c| f(c)).collect();
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// One line of measurements for the test's output.
fn report(setup: &Setup, job: &Job) {
    let adopted = job
        .clients()
        .iter()
        .filter(|c| c.adopt == Some((0, 0)))
        .count()
        .max(job.adopted_by().len());
    eprintln!(
        "{}: {} discoveries; {adopted}/{CLIENTS} clients adopted the segment (bytes: {}, \
         mapped: {}); median client: {} us to get the topology, {} kB peak RSS",
        setup.tag(),
        job.discoveries().len(),
        job.clients()[0]
            .shmem
            .as_ref()
            .map_or("none", |s| s.2.as_str()),
        job.clients()[0].mapped.unwrap_or(false),
        median(job, |c| c.load_us),
        median(job, |c| c.hwm_kb),
    );
}

/// Compiles the PMIx job against Debian's PMIx and hwloc 2.9 headers.
fn build_job(dir: &Path) -> PathBuf {
    let flags = Command::new("pkg-config")
        .args(["--cflags", "--libs", "pmix"])
        .output()
        .expect("pkg-config runs");
    assert!(flags.status.success(), "pkg-config pmix failed");
    let flags = String::from_utf8(flags.stdout).unwrap();
    let exe = dir.join("pmix_job");
    let src = support::workspace().join("host/capi/tests/c/pmix_job.c");
    support::compile(
        Command::new("gcc")
            .args(["-O1", "-Wall", "-o"])
            .arg(&exe)
            .arg(&src)
            .args(flags.split_whitespace())
            .arg("-lhwloc"),
    );
    exe
}

#[test]
fn pmix_clients_adopt_the_servers_topology_discovered_once() {
    support::require_c_toolchain();
    support::require(&[
        ("/usr/lib/x86_64-linux-gnu/pkgconfig/pmix.pc", "libpmix-dev"),
        ("/usr/bin/pkg-config", "pkg-config"),
        ("/usr/bin/strace", "strace"),
    ]);
    let lib = support::library_dir("pmix");
    // PMIx's socket lives in the server's temporary folder: keep its path
    // short (a Unix socket's path is at most 107 bytes).
    let work = std::env::temp_dir().join(format!("wloc-pmix-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let exe = build_job(&work);

    let image = work.join("this.img");
    support::this_machine_image(&image);

    // The control: without sharing, every process discovers, and the
    // count says so on both libraries.
    for l in [None, Some(lib.as_path())] {
        let setup = Setup {
            lib: l,
            client_lib: l,
            mode: "alone",
            way: "load",
            image: None,
        };
        let alone = run(&exe, &work, setup);
        let tag = setup.tag();
        let mut found = alone.discoveries();
        found.sort();
        let mut all: Vec<u32> = alone.blocks.iter().map(|b| b.pid).collect();
        all.sort();
        assert_eq!(found, all, "{tag}: every process discovers once");
        for c in alone.clients() {
            assert!(c.shmem.is_none(), "{tag}: shared anyway");
            assert_eq!(c.fingerprint, alone.server().fingerprint, "{tag}");
        }
        report(&setup, &alone);
    }

    for (mode, way) in [("pmix", "load"), ("host", "keys")] {
        let setup = Setup {
            lib: None,
            client_lib: None,
            mode,
            way,
            image: None,
        };
        let theirs = run(&exe, &work, setup);
        check_job(&setup, &theirs, 1);
        report(&setup, &theirs);

        let setup = Setup {
            lib: Some(&lib),
            client_lib: Some(&lib),
            ..setup
        };
        let ours = run(&exe, &work, setup);
        let tag = setup.tag();
        check_job(&setup, &ours, 1);
        check_adopted(&tag, &ours, way);
        // wloc's adopter reads the segment, never maps it.
        assert!(
            ours.clients().iter().all(|c| c.mapped == Some(false)),
            "{tag}"
        );
        assert_eq!(
            ours.server().fingerprint,
            theirs.server().fingerprint,
            "{tag}: not libhwloc's topology"
        );
        report(&setup, &ours);

        // With a launcher's image of this machine the server adopts it
        // too: the job discovers nothing.
        let setup = Setup {
            image: Some(&image),
            ..setup
        };
        let imaged = run(&exe, &work, setup);
        let tag = setup.tag();
        check_job(&setup, &imaged, 0);
        check_adopted(&tag, &imaged, way);
        let img = image.display().to_string();
        let server_files = &imaged.opened[&imaged.server().pid];
        assert!(
            server_files.contains(&img),
            "{tag}: the server did not read the image"
        );
        assert_eq!(
            imaged.server().fingerprint,
            theirs.server().fingerprint,
            "{tag}: not libhwloc's topology"
        );
        report(&setup, &imaged);

        // A server and clients on different libraries: each refuses the
        // other's segment (`keys` clients see EINVAL, then ask PMIx), and
        // PMIx falls back to the topology's XML, which it publishes too.
        // Still one discovery.
        for (server_lib, client_lib) in [(Some(lib.as_path()), None), (None, Some(lib.as_path()))] {
            let setup = Setup {
                lib: server_lib,
                client_lib,
                mode,
                way,
                image: None,
            };
            let mixed = run(&exe, &work, setup);
            let tag = setup.tag();
            check_job(&setup, &mixed, 1);
            assert_eq!(
                mixed.server().fingerprint,
                theirs.server().fingerprint,
                "{tag}"
            );
            let mut clients: Vec<u32> = mixed.clients().iter().map(|c| c.pid).collect();
            clients.sort();
            assert_eq!(
                mixed.pmix_reports(" v2 xml adopted"),
                clients,
                "{tag}: PMIx's report:\n{}",
                mixed.stderr
            );
            for c in mixed.clients() {
                if way == "keys" {
                    assert_eq!(
                        c.adopt,
                        Some((-1, libc::EINVAL)),
                        "{tag}: client {}",
                        c.rank
                    );
                }
            }
            report(&setup, &mixed);
        }
    }
    let _ = std::fs::remove_dir_all(&work);
}
