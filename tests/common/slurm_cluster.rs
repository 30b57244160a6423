//! A real Slurm on this machine for the tests: Debian's munge, slurmctld
//! and slurmd (Slurm 22.05) started as one controller and one node on
//! localhost, with their configuration, state, spool, logs and munge key
//! in a temporary folder.
//!
//! * The node is this machine, named by its short host name, described by
//!   the line `wloc slurm node` prints for it: slurmctld refusing it, or
//!   slurmd reporting less than it says, keeps the node from becoming idle
//!   and [`SlurmCluster::start`] fails with the daemons' logs.
//! * A `topology.conf` may be given ([`ClusterConfig::topology_conf`]) with
//!   `TopologyPlugin=topology/tree`, and node lines for other nodes
//!   ([`ClusterConfig::extra_nodes`], such as the hosts of a fabric; they
//!   stay down, no slurmd runs for them), so that `scontrol show topology`
//!   shows what a generated file holds.
//! * Clients (`scontrol`, `sinfo`, `srun`) run with [`SlurmCluster::command`],
//!   which points them at the cluster's `slurm.conf`.
//! * One cluster at a time: [`SlurmCluster::start`] waits for any other one
//!   (in this process or another test process) to stop.  The ports are
//!   free ones chosen at start.
//! * The daemons run in the foreground as children of the test; dropping
//!   the cluster (also when the test panics) stops each of them by its
//!   pid (SIGTERM, then SIGKILL after 5 s), and the kernel kills them if
//!   the test's thread dies first.
//!
//! The daemons run as root (Slurm's node daemon needs it) and munged as
//! user munge; [`SlurmCluster::start`] refuses to run as another user.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::TempDir;

/// Debian packages the cluster needs, each with a file it ships.
const PACKAGES: [(&str, &str); 4] = [
    ("/usr/sbin/munged", "munge"),
    ("/usr/sbin/slurmctld", "slurmctld"),
    ("/usr/sbin/slurmd", "slurmd"),
    ("/usr/bin/scontrol", "slurm-client"),
];

/// How long the daemons get to come up.
const START_TIMEOUT: Duration = Duration::from_secs(40);

/// What to put in the cluster beside this machine.
#[derive(Clone, Debug, Default)]
pub struct ClusterConfig {
    /// The text of a `topology.conf` for `topology/tree`.
    pub topology_conf: Option<String>,
    /// More `NodeName=` lines for `slurm.conf` (nodes without a slurmd).
    pub extra_nodes: Vec<String>,
    /// This machine's node line, instead of the one `wloc slurm node`
    /// prints (to check that Slurm refuses a wrong one).
    pub node_line: Option<String>,
    /// A folder put first on slurmd's `LD_LIBRARY_PATH` (and so on its
    /// job steps'): where wloc's `libhwloc.so.15` is, to run Slurm on it.
    pub slurmd_library_path: Option<PathBuf>,
    /// `WLOC_IMAGE` for slurmd: the topology image wloc's library adopts
    /// instead of discovering.
    pub slurmd_image: Option<PathBuf>,
    /// `TaskPlugin=task/affinity` (jobs bound with `--cpu-bind`) instead
    /// of `task/none`.
    pub task_affinity: bool,
}

/// A running controller and node; stopped when dropped.
pub struct SlurmCluster {
    /// The folder holding `slurm.conf`, `topology.conf`, state and logs.
    pub dir: PathBuf,
    /// The generated `slurm.conf`.
    pub conf: PathBuf,
    /// This machine's node name (its short host name).
    pub node: String,
    /// The `NodeName=` line `wloc slurm node` printed for this machine.
    pub node_line: String,
    daemons: Vec<(&'static str, Child)>,
    _tmp: TempDir,
    _lock: ClusterLock,
}

/// Held while a cluster runs: a lock within this process and one on a
/// file for other processes.
struct ClusterLock {
    _guard: MutexGuard<'static, ()>,
    _file: std::fs::File,
}

fn lock() -> Result<ClusterLock, String> {
    static ONE: Mutex<()> = Mutex::new(());
    // A test that panicked with the lock held leaves it poisoned: its
    // cluster was stopped all the same.
    let guard = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(std::env::temp_dir().join("wloc-tests-slurm.lock"))
        .map_err(|e| format!("cannot open the Slurm cluster lock: {e}"))?;
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor we own; released when it is closed.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
    Ok(ClusterLock {
        _guard: guard,
        _file: file,
    })
}

/// A TCP port nobody listens on now.
fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("cannot find a free port: {e}"))
}

/// The uid and gid of a user.
fn user_ids(name: &str) -> Option<(u32, u32)> {
    let c = std::ffi::CString::new(name).ok()?;
    // SAFETY: getpwnam with a valid C string; the result is read at once.
    let pw = unsafe { libc::getpwnam(c.as_ptr()) };
    if pw.is_null() {
        return None;
    }
    // SAFETY: non-null result of getpwnam.
    Some(unsafe { ((*pw).pw_uid, (*pw).pw_gid) })
}

/// The last lines of a file, for error messages.
fn tail(path: &Path, lines: usize) -> String {
    let mut s = String::new();
    if let Ok(mut f) = std::fs::File::open(path) {
        let _ = f.read_to_string(&mut s);
    }
    let all: Vec<&str> = s.lines().collect();
    let from = all.len().saturating_sub(lines);
    format!("--- {} ---\n{}", path.display(), all[from..].join("\n"))
}

/// This machine's short host name, as Slurm names nodes.
pub fn short_hostname() -> String {
    let o = Command::new("hostname")
        .arg("-s")
        .output()
        .expect("hostname runs");
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

impl SlurmCluster {
    /// Installs the packages if needed, writes the configuration and
    /// starts munged, slurmctld and slurmd; returns once the node is idle.
    pub fn start(config: &ClusterConfig) -> Result<Self, String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("a Slurm cluster needs root (slurmd runs as root)".into());
        }
        super::require_packages(&PACKAGES)?;
        let lock = lock()?;
        let tmp = TempDir::new("slurm-cluster");
        let dir = tmp.0.clone();
        let node = short_hostname();
        let o = super::run_wloc(["slurm", "node"]);
        let node_line = match &config.node_line {
            Some(l) => l.clone(),
            None => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        };
        if !o.status.success() || !node_line.starts_with(&format!("NodeName={node} ")) {
            return Err(format!(
                "wloc slurm node printed '{node_line}' for this machine ({node}): {}",
                String::from_utf8_lossy(&o.stderr)
            ));
        }
        let (munge_uid, munge_gid) =
            user_ids("munge").ok_or("user munge is missing (package munge)")?;
        let munge_dir = dir.join("munge");
        for d in ["munge", "state", "spool", "log"] {
            std::fs::create_dir_all(dir.join(d)).map_err(|e| format!("{d}: {e}"))?;
        }
        // munged wants its socket folder owned by it and reachable by all.
        let c = std::ffi::CString::new(munge_dir.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: chown of a folder we created, with a valid C string.
        if unsafe { libc::chown(c.as_ptr(), munge_uid, munge_gid) } != 0 {
            return Err(format!("cannot chown {} to munge", munge_dir.display()));
        }
        let mut cluster = SlurmCluster {
            conf: dir.join("slurm.conf"),
            dir: dir.clone(),
            node: node.clone(),
            node_line: node_line.clone(),
            daemons: Vec::new(),
            _tmp: tmp,
            _lock: lock,
        };
        // A key of our own: the cluster does not depend on /etc/munge.
        let key = munge_dir.join("munge.key");
        let k = Command::new("/usr/sbin/mungekey")
            .arg("--create")
            .arg(format!("--keyfile={}", key.display()))
            .uid(munge_uid)
            .gid(munge_gid)
            .output()
            .map_err(|e| format!("cannot run mungekey: {e}"))?;
        if !k.status.success() {
            return Err(format!(
                "mungekey failed: {}",
                String::from_utf8_lossy(&k.stderr)
            ));
        }
        let socket = munge_dir.join("munge.socket");
        let mut munged = Command::new("/usr/sbin/munged");
        munged
            .arg("--foreground")
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--key-file={}", key.display()))
            .arg(format!(
                "--pid-file={}",
                munge_dir.join("munged.pid").display()
            ))
            .arg(format!(
                "--log-file={}",
                munge_dir.join("munged.log").display()
            ))
            .arg(format!(
                "--seed-file={}",
                munge_dir.join("munged.seed").display()
            ))
            .uid(munge_uid)
            .gid(munge_gid);
        cluster.spawn("munged", munged, &dir.join("log/munged.out"))?;
        cluster.wait_for(|_| socket.exists(), "munged's socket")?;

        let ctld_port = free_port()?;
        let slurmd_port = free_port()?;
        let mut conf = format!(
            "# A one-node cluster on localhost for wloc's tests.\n\
             ClusterName=wloctest\n\
             SlurmctldHost={node}(127.0.0.1)\n\
             SlurmctldPort={ctld_port}\n\
             SlurmdPort={slurmd_port}\n\
             SlurmUser=root\n\
             SlurmdUser=root\n\
             AuthType=auth/munge\n\
             CredType=cred/munge\n\
             AuthInfo=socket={socket}\n\
             StateSaveLocation={dir}/state\n\
             SlurmdSpoolDir={dir}/spool\n\
             SlurmctldPidFile={dir}/slurmctld.pid\n\
             SlurmdPidFile={dir}/slurmd.pid\n\
             SlurmctldLogFile={dir}/log/slurmctld.log\n\
             SlurmdLogFile={dir}/log/slurmd.log\n\
             ProctrackType=proctrack/linuxproc\n\
             TaskPlugin={task}\n\
             SelectType=select/cons_tres\n\
             {select_params}\
             MpiDefault=none\n\
             SwitchType=switch/none\n\
             JobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\n\
             ReturnToService=2\n\
             SlurmdTimeout=60\n",
            socket = socket.display(),
            dir = dir.display(),
            task = if config.task_affinity {
                "task/affinity"
            } else {
                "task/none"
            },
            // Cores as the unit a job gets, for --cpu-bind=cores.
            select_params = if config.task_affinity {
                "SelectTypeParameters=CR_Core\n"
            } else {
                ""
            },
        );
        if let Some(t) = &config.topology_conf {
            std::fs::write(dir.join("topology.conf"), t).map_err(|e| e.to_string())?;
            conf.push_str("TopologyPlugin=topology/tree\n");
        }
        conf.push_str(&format!("{node_line} NodeAddr=127.0.0.1 State=UNKNOWN\n"));
        for extra in &config.extra_nodes {
            conf.push_str(extra);
            conf.push('\n');
        }
        conf.push_str("PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n");
        std::fs::write(&cluster.conf, conf).map_err(|e| e.to_string())?;

        let mut ctld = Command::new("/usr/sbin/slurmctld");
        ctld.arg("-D").arg("-f").arg(&cluster.conf);
        cluster.spawn("slurmctld", ctld, &dir.join("log/slurmctld.out"))?;
        cluster.wait_for(
            |c| {
                c.command("scontrol")
                    .arg("ping")
                    .output()
                    .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("is UP"))
            },
            "slurmctld to answer",
        )?;
        let mut slurmd = Command::new("/usr/sbin/slurmd");
        slurmd
            .arg("-D")
            .arg("-f")
            .arg(&cluster.conf)
            .arg("-N")
            .arg(&node);
        if let Some(lib) = &config.slurmd_library_path {
            slurmd.env("LD_LIBRARY_PATH", lib);
        }
        if let Some(image) = &config.slurmd_image {
            slurmd.env("WLOC_IMAGE", image);
        }
        cluster.spawn("slurmd", slurmd, &dir.join("log/slurmd.out"))?;
        let state = |c: &SlurmCluster| {
            c.command("sinfo")
                .args(["-h", "-N", "-n", &node, "-o", "%T"])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .unwrap_or_default()
        };
        // A node line slurmctld refuses, or that promises more than slurmd
        // finds, leaves the node invalid or drained: no need to wait.
        cluster.wait_for(
            |c| matches!(state(c).as_str(), "idle" | "inval" | "drained" | "draining"),
            "the node to be idle",
        )?;
        let s = state(&cluster);
        if s != "idle" {
            let reason = cluster
                .scontrol(&["show", "node", &node])
                .unwrap_or_default();
            return Err(format!(
                "the node is {s}, not idle, with the line {node_line}:\n{reason}\n{}",
                cluster.logs()
            ));
        }
        Ok(cluster)
    }

    /// Starts a daemon, its output in `out`.
    fn spawn(&mut self, name: &'static str, mut cmd: Command, out: &Path) -> Result<(), String> {
        let log = std::fs::File::create(out).map_err(|e| e.to_string())?;
        let err = log.try_clone().map_err(|e| e.to_string())?;
        cmd.stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .env("SLURM_CONF", &self.conf);
        // SAFETY: prctl in the child before exec, no allocation.
        unsafe {
            cmd.pre_exec(|| {
                // Killed with the test thread that started it, should the
                // test die without dropping the cluster.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        self.daemons.push((name, child));
        Ok(())
    }

    /// Polls `ready` until it holds, failing with the logs when a daemon
    /// exits or the time is up.
    fn wait_for(
        &mut self,
        ready: impl Fn(&SlurmCluster) -> bool,
        what: &str,
    ) -> Result<(), String> {
        let start = Instant::now();
        loop {
            if ready(self) {
                return Ok(());
            }
            let exited = self
                .daemons
                .iter_mut()
                .find_map(|(name, child)| match child.try_wait() {
                    Ok(Some(status)) => Some((*name, status)),
                    _ => None,
                });
            if let Some((name, status)) = exited {
                return Err(format!(
                    "{name} exited ({status}) while waiting for {what}\n{}",
                    self.logs()
                ));
            }
            if start.elapsed() > START_TIMEOUT {
                return Err(format!(
                    "timed out after {START_TIMEOUT:?} waiting for {what}\n{}",
                    self.logs()
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The end of every daemon's log, for error messages.
    pub fn logs(&self) -> String {
        [
            "log/munged.out",
            "munge/munged.log",
            "log/slurmctld.out",
            "log/slurmctld.log",
            "log/slurmd.out",
            "log/slurmd.log",
        ]
        .iter()
        .map(|f| tail(&self.dir.join(f), 15))
        .collect::<Vec<_>>()
        .join("\n")
    }

    /// A Slurm client command (`scontrol`, `sinfo`, `srun`...) talking to
    /// this cluster, run in its folder.
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf).current_dir(&self.dir);
        c
    }

    /// `scontrol ARGS`: its standard output, or an error with its messages.
    pub fn scontrol(&self, args: &[&str]) -> Result<String, String> {
        let o = self
            .command("scontrol")
            .args(args)
            .output()
            .map_err(|e| format!("cannot run scontrol: {e}"))?;
        output_or_error("scontrol", args, &o)
    }

    /// `srun ARGS` (with a time limit): its standard output, or an error.
    /// The pid of a daemon the cluster started (`slurmd`, `slurmctld`,
    /// `munged`).
    pub fn pid(&self, daemon: &str) -> Option<u32> {
        self.daemons
            .iter()
            .find(|(name, _)| *name == daemon)
            .map(|(_, c)| c.id())
    }

    pub fn srun(&self, args: &[&std::ffi::OsStr]) -> Result<String, String> {
        let o = self
            .command("timeout")
            .arg("60")
            .arg("srun")
            .args(args)
            .output()
            .map_err(|e| format!("cannot run srun: {e}"))?;
        output_or_error("srun", args, &o)
    }
}

fn output_or_error<A: std::fmt::Debug>(what: &str, args: A, o: &Output) -> Result<String, String> {
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    } else {
        Err(format!(
            "{what} {args:?} failed ({}): {}{}",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ))
    }
}

impl Drop for SlurmCluster {
    /// Stops the daemons by their pids, the node first.
    fn drop(&mut self) {
        for (_, child) in self.daemons.iter_mut().rev() {
            let Ok(pid) = i32::try_from(child.id()) else {
                continue;
            };
            if let Ok(None) = child.try_wait() {
                // SAFETY: signalling our own child, which has not been reaped.
                unsafe { libc::kill(pid, libc::SIGTERM) };
                let start = Instant::now();
                while start.elapsed() < Duration::from_secs(5) {
                    if let Ok(Some(_)) = child.try_wait() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
