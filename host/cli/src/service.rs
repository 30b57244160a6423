//! The topology service (`wloc service`): discovers this machine once, with
//! every object kept, and publishes its image at one well-known path
//! (`/run/wloc/topology.img`) for every process of the machine to adopt;
//! discovers and publishes again when the machine changes.
//!
//! - **What it publishes**: the machine as `wloc ls` discovers it (the same
//!   components, under the same policy, annotated the same way), with every
//!   object type kept (I/O, caches, memory-side caches, Misc) and the
//!   disallowed objects included; the allowed sets are the whole machine,
//!   not the service's own cgroup (each adopter computes its own).  The
//!   image holds no process list and no environment.  Each image carries a
//!   [`Publication`] stamp: boot id, generation, CPUs and NUMA nodes online.
//! - **Where**: a folder owned by root that neither group nor others may
//!   write (created 0755 when missing); the image is written with
//!   [`wloc_image::write_published`] (a temporary file beside it, synced,
//!   renamed over it; mode 0644), so readers see the old image or the new
//!   one, and a failed write (a full disk) leaves the old one and no
//!   temporary.
//! - **When**: at start; on kernel uevents of the `cpu`, `memory`, `node`
//!   and `pci` subsystems (a netlink socket, no udev), once no new one came
//!   for the debounce time; on SIGHUP; and when a periodic check finds the
//!   CPUs or NUMA nodes online differing from the last stamp (or the
//!   published file gone or replaced).  SIGTERM and SIGINT stop it.
//! - **Bad states** (discovery fails, a component refused by the policy,
//!   the folder unsafe, the disk full) keep the previous image; the reason
//!   is logged.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use wloc_core::object::ObjAttr;
use wloc_core::{ObjType, Topology, TypeFilter};
use wloc_discovery::Discovery;
use wloc_discovery::input::Source;
use wloc_image::{ImageError, Publication};

/// Where the image is published unless `--path` says otherwise.
pub const DEFAULT_PATH: &str = "/run/wloc/topology.img";

/// The kernel files a stamp copies.
pub const BOOT_ID: &str = "/proc/sys/kernel/random/boot_id";
/// CPUs online.
pub const CPUS_ONLINE: &str = "/sys/devices/system/cpu/online";
/// NUMA nodes online (absent on kernels without NUMA).
pub const NODES_ONLINE: &str = "/sys/devices/system/node/online";

/// The uevent subsystems after which the machine is discovered again.
pub const SUBSYSTEMS: [&str; 4] = ["cpu", "memory", "node", "pci"];

/// How the service runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// The published image.
    pub path: PathBuf,
    /// Quiet time after the last uevent before discovering again.
    pub debounce: Duration,
    /// Time between two checks of the online sets.
    pub check_interval: Duration,
    /// Publish one image and return.
    pub once: bool,
}

/// Why the service could not publish (or start).
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The folder of the image is not one only root may write.
    #[error("refusing to publish in '{}': {why}", folder.display())]
    Folder {
        /// The folder.
        folder: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// A kernel file of the stamp could not be read.
    #[error("cannot read {path}: {source}")]
    State {
        /// The file.
        path: &'static str,
        /// What the system said.
        source: std::io::Error,
    },
    /// Discovery failed (a component refused by the policy, say).
    #[error("discovery failed: {0}")]
    Discovery(String),
    /// The online sets changed during every discovery tried.
    #[error("the CPUs or NUMA nodes online changed during each of {0} discoveries")]
    Unstable(usize),
    /// The image could not be written (a full disk, say).
    #[error("cannot write the image: {0}")]
    Write(ImageError),
    /// Signals or the uevent socket could not be set up.
    #[error("cannot set up {what}: {source}")]
    Setup {
        /// What was being set up.
        what: &'static str,
        /// What the system said.
        source: std::io::Error,
    },
}

/// Reads a small kernel file, trimmed; `Ok(None)` when it does not exist.
fn read_kernel_file(path: &'static str) -> Result<Option<String>, ServiceError> {
    // The largest online list a stamp accepts, plus one byte to notice more.
    let cap = wloc_image::MAX_ONLINE_LIST_BYTES as u64 + 1;
    let err = |source| ServiceError::State { path, source };
    let f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(err(e)),
    };
    let mut s = String::new();
    f.take(cap).read_to_string(&mut s).map_err(err)?;
    Ok(Some(s.trim().to_string()))
}

/// What the machine looks like now, as a stamp (generation left 0).
pub fn machine_state() -> Result<Publication, ServiceError> {
    let boot_id = read_kernel_file(BOOT_ID)?.ok_or(ServiceError::State {
        path: BOOT_ID,
        source: std::io::ErrorKind::NotFound.into(),
    })?;
    Ok(Publication {
        boot_id,
        generation: 0,
        cpus_online: read_kernel_file(CPUS_ONLINE)?.unwrap_or_default(),
        nodes_online: read_kernel_file(NODES_ONLINE)?.unwrap_or_default(),
    })
}

/// Whether two stamps saw the same machine (boot and online sets).
fn same_machine(a: &Publication, b: &Publication) -> bool {
    a.boot_id == b.boot_id && a.cpus_online == b.cpus_online && a.nodes_online == b.nodes_online
}

/// The folder of the image.
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Creates the folder of `path` when it is missing (mode 0755, whatever
/// the umask), then checks it ([`check_folder`]).
pub fn prepare_folder(path: &Path) -> Result<(), ServiceError> {
    let folder = folder_of(path);
    let err = |why: String| ServiceError::Folder {
        folder: folder.to_path_buf(),
        why,
    };
    if std::fs::symlink_metadata(folder).is_err() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(folder)
            .map_err(|e| err(format!("cannot create it: {e}")))?;
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| err(format!("cannot set its mode to 0755: {e}")))?;
    }
    check_folder(folder)
}

/// Refuses a folder anyone but root may write: adopters trust the image
/// because only root can have put it there.
pub fn check_folder(folder: &Path) -> Result<(), ServiceError> {
    let err = |why: String| ServiceError::Folder {
        folder: folder.to_path_buf(),
        why,
    };
    let m = std::fs::metadata(folder).map_err(|e| err(format!("cannot look at it: {e}")))?;
    if !m.is_dir() {
        return Err(err("it is not a folder".into()));
    }
    if m.uid() != 0 {
        return Err(err(format!(
            "it is owned by uid {}, not root: only root may publish the image every process trusts (chown root)",
            m.uid()
        )));
    }
    let mode = m.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(err(format!(
            "its mode {mode:04o} lets group or others write it, and so replace the image (chmod go-w)"
        )));
    }
    // The folders above it, and the folder itself not being a link: the
    // rules every adopter applies (wloc_published), so that no user can
    // swap a folder on the way for one of theirs.
    match wloc_published::check_folder_chain(folder, &wloc_published::ROOT) {
        Ok(()) => Ok(()),
        Err(wloc_published::FolderProblem::Absent) => Err(err("it is gone".into())),
        Err(wloc_published::FolderProblem::Untrusted(why)) => Err(err(why)),
    }
}

/// Discovers this machine as `wloc ls` does (the Linux component and its
/// annotations, under the run's policy), every object kept, disallowed
/// ones included, the allowed sets the whole machine.  Annotation
/// warnings are returned.
pub fn discover(d: &Discovery) -> Result<(Topology, Vec<String>), ServiceError> {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    t.set_io_types_filter(TypeFilter::KeepAll);
    t.include_disallowed = true;
    if let Some(r) = wloc_discovery::input::env_var("CPUKINDS_RANKING") {
        t.cpukinds_ranking = wloc_core::cpukinds::Ranking::parse(&r).ok_or_else(|| {
            ServiceError::Discovery(format!(
                "unknown CPU kinds ranking '{r}' in HWLOC_CPUKINDS_RANKING"
            ))
        })?;
    }
    // This machine itself, never a source the environment names (nor the
    // image the service publishes).
    let source = Source::ThisSystem;
    let mut topo = d
        .load(&source, t)
        .map_err(|e| ServiceError::Discovery(e.to_string()))?;
    let warnings = wloc_discovery::annotations::annotate_discovered_quietly(d, &source, &mut topo);
    // The service's own cgroup is no adopter's: the image allows the whole
    // machine, each adopter restricts it to its own (and names its own
    // cgroup, the root info `LinuxCgroup` discovery gives).
    topo.allowed_cpuset = topo.cpuset().clone();
    topo.allowed_nodeset = topo.nodeset().clone();
    let per_process = |i: &wloc_core::object::Info| PER_PROCESS_INFOS.contains(&i.name.as_str());
    topo.infos.retain(|i| !per_process(i));
    let root = topo.root();
    topo.obj_mut(root).infos.retain(|i| !per_process(i));
    Ok((topo, warnings))
}

/// Root infos discovery gives that describe the discovering process, not
/// the machine: left out of the image (an adopter adds its own).
pub const PER_PROCESS_INFOS: [&str; 2] = ["LinuxCgroup", "ProcessName"];

/// What a publication's log line compares.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Summary {
    /// PCI devices, as `domain:bus:dev.func`.
    pub pci: BTreeSet<String>,
    /// Objects per type.
    pub counts: BTreeMap<String, usize>,
    /// All objects.
    pub objects: usize,
}

impl Summary {
    /// The summary of a topology.
    pub fn of(topo: &Topology) -> Summary {
        let mut s = Summary::default();
        for &ty in &ObjType::ALL {
            let n = topo.objs_by_type(ty).len();
            if n > 0 {
                s.counts.insert(ty.to_string(), n);
                s.objects += n;
            }
        }
        for id in topo.objs_by_type(ObjType::PCIDevice) {
            if let ObjAttr::Pci(p) = &topo.obj(id).attr {
                s.pci.insert(format!(
                    "{:04x}:{:02x}:{:02x}.{:x}",
                    p.domain, p.bus, p.dev, p.func
                ));
            }
        }
        s
    }
}

/// The log line's account of a publication: the online sets, the PCI
/// devices and the objects, each with what changed since `before`.
pub fn describe(p: &Publication, s: &Summary, before: Option<&(Publication, Summary)>) -> String {
    let mut parts = Vec::new();
    let online = |what: &str, now: &str, was: Option<&str>| match was {
        Some(w) if w != now => format!("{what} {now} (was {w})"),
        _ => format!("{what} {now}"),
    };
    parts.push(online(
        "CPUs online",
        &p.cpus_online,
        before.map(|b| b.0.cpus_online.as_str()),
    ));
    let nodes = if p.nodes_online.is_empty() {
        "none"
    } else {
        &p.nodes_online
    };
    parts.push(online(
        "NUMA nodes online",
        nodes,
        before.map(|b| {
            if b.0.nodes_online.is_empty() {
                "none"
            } else {
                b.0.nodes_online.as_str()
            }
        }),
    ));
    let mut pci = format!("{} PCI devices", s.pci.len());
    if let Some((_, old)) = before {
        let added: Vec<_> = s.pci.difference(&old.pci).cloned().collect();
        let removed: Vec<_> = old.pci.difference(&s.pci).cloned().collect();
        if !added.is_empty() {
            pci += &format!(", added {}", added.join(" "));
        }
        if !removed.is_empty() {
            pci += &format!(", removed {}", removed.join(" "));
        }
    }
    parts.push(pci);
    let mut objects = format!("{} objects", s.objects);
    if let Some((_, old)) = before {
        let types: BTreeSet<&String> = s.counts.keys().chain(old.counts.keys()).collect();
        let changed: Vec<String> = types
            .into_iter()
            .filter_map(|t| {
                let (n, o) = (
                    s.counts.get(t).copied().unwrap_or(0) as i64,
                    old.counts.get(t).copied().unwrap_or(0) as i64,
                );
                (n != o).then(|| format!("{t} {:+}", n - o))
            })
            .collect();
        if changed.is_empty() {
            objects += " (no change)";
        } else {
            objects += &format!(" ({})", changed.join(", "));
        }
    }
    parts.push(objects);
    parts.join(", ")
}

/// Whether a kernel uevent (`ACTION@DEVPATH\0KEY=VALUE\0...`) is of a
/// subsystem whose changes change the topology; returns `ACTION
/// SUBSYSTEM` for the log.
pub fn relevant_uevent(msg: &[u8]) -> Option<String> {
    let mut fields = msg.split(|&b| b == 0);
    let head = fields.next()?;
    // Kernel messages start with ACTION@DEVPATH (udev's own, on another
    // group, start with "libudev").
    head.iter().position(|&b| b == b'@')?;
    let mut action = None;
    let mut subsystem = None;
    for f in fields {
        if let Some(v) = f.strip_prefix(b"ACTION=") {
            action = Some(String::from_utf8_lossy(v).into_owned());
        } else if let Some(v) = f.strip_prefix(b"SUBSYSTEM=") {
            subsystem = Some(String::from_utf8_lossy(v).into_owned());
        }
    }
    let subsystem = subsystem?;
    SUBSYSTEMS
        .contains(&subsystem.as_str())
        .then(|| format!("{} {subsystem}", action.unwrap_or_default()))
}

/// The kernel's uevent socket (netlink, group 1: kernel messages only).
struct Uevents {
    fd: OwnedFd,
}

impl Uevents {
    fn open() -> std::io::Result<Uevents> {
        use rustix::net::{AddressFamily, SocketFlags, SocketType, netlink};
        let fd = rustix::net::socket_with(
            AddressFamily::NETLINK,
            SocketType::DGRAM,
            SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
            Some(netlink::KOBJECT_UEVENT),
        )?;
        // Room for a burst (a PCI hot-plug sends dozens); an overflow is
        // noticed anyway (ENOBUFS) and counts as a change.
        let _ = rustix::net::sockopt::set_socket_recv_buffer_size(&fd, 1 << 20);
        rustix::net::bind(&fd, &netlink::SocketAddrNetlink::new(0, 1))?;
        Ok(Uevents { fd })
    }

    /// Reads every waiting message; returns the first relevant one (or
    /// `overflow` when messages were lost).
    fn drain(&self) -> Option<String> {
        use rustix::net::{RecvFlags, netlink::SocketAddrNetlink};
        let mut buf = vec![0u8; 16 << 10];
        let mut found = None;
        loop {
            match rustix::net::recvfrom(&self.fd, &mut buf[..], RecvFlags::DONTWAIT) {
                Ok((n, _, from)) => {
                    // From the kernel only (port 0): another process's
                    // message is ignored.
                    let kernel = from
                        .and_then(|a| SocketAddrNetlink::try_from(a).ok())
                        .is_some_and(|a| a.pid() == 0);
                    if kernel && found.is_none() {
                        found = relevant_uevent(&buf[..n.min(buf.len())]);
                    }
                }
                Err(rustix::io::Errno::NOBUFS) => found = Some("uevents lost (overflow)".into()),
                Err(rustix::io::Errno::INTR) => {}
                Err(_) => return found,
            }
        }
    }
}

/// SIGHUP, SIGTERM and SIGINT, blocked and read from a signalfd, so that
/// the loop handles them between two publications, never in the middle
/// of a write.  Written with libc: signal-hook is not in the tree, and
/// rustix has no signalfd nor (outside its libc-free runtime) a signal
/// mask.
struct Signals {
    fd: OwnedFd,
}

impl Signals {
    /// Blocks the signals in this thread (threads started later, such as
    /// the component runtime's, inherit the mask: call it before them) and
    /// opens the descriptor they are read from.
    fn block() -> std::io::Result<Signals> {
        // SAFETY: sigset_t is plain data, initialised by sigemptyset
        // before use; pthread_sigmask and signalfd read it.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for s in [libc::SIGHUP, libc::SIGTERM, libc::SIGINT] {
                libc::sigaddset(&mut set, s);
            }
            let rc = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            if rc != 0 {
                return Err(std::io::Error::from_raw_os_error(rc));
            }
            let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(Signals {
                fd: OwnedFd::from_raw_fd(fd),
            })
        }
    }

    /// The next pending signal's number.
    fn next(&self) -> Option<i32> {
        // SAFETY: signalfd_siginfo is plain data; read fills at most its
        // size, and only a complete one is used.
        unsafe {
            let mut info: libc::signalfd_siginfo = std::mem::zeroed();
            let size = std::mem::size_of::<libc::signalfd_siginfo>();
            let n = libc::read(
                self.fd.as_raw_fd(),
                (&raw mut info).cast::<libc::c_void>(),
                size,
            );
            (n as usize == size).then_some(info.ssi_signo as i32)
        }
    }
}

/// Logs one line on standard error (the journal under systemd).
fn log(line: &str) {
    eprintln!("wloc service: {line}");
}

/// The publishing side: the last image published and its generation.
struct Publisher<'d> {
    d: &'d Discovery,
    path: PathBuf,
    /// The last generation published (or found in the old file).
    generation: u64,
    /// The last publication: its stamp and summary, and the image's
    /// topology without the stamp (to skip publishing an unchanged
    /// machine after a uevent).
    last: Option<(Publication, Summary)>,
    last_bytes: Vec<u8>,
}

/// How many discoveries are tried when the online sets change during one.
const TRIES: usize = 3;

impl Publisher<'_> {
    /// Discovers and publishes; with `only_if_changed`, an image equal to
    /// the last one is not published again (`Ok(false)`).
    fn publish(&mut self, reason: &str, only_if_changed: bool) -> Result<bool, ServiceError> {
        check_folder(folder_of(&self.path))?;
        // The stamp must describe what was discovered: the online sets are
        // read before and after, and discovery runs again when they moved.
        let mut attempt = 0;
        let (state, topo, warnings) = loop {
            attempt += 1;
            let before = machine_state()?;
            let (topo, warnings) = discover(self.d)?;
            let after = machine_state()?;
            if same_machine(&before, &after) {
                break (after, topo, warnings);
            }
            if attempt == TRIES {
                return Err(ServiceError::Unstable(TRIES));
            }
        };
        for w in warnings {
            log(&format!("warning: annotation skipped: {w}"));
        }
        let bytes = wloc_image::to_bytes(&topo);
        let summary = Summary::of(&topo);
        if only_if_changed
            && bytes == self.last_bytes
            && self
                .last
                .as_ref()
                .is_some_and(|(p, _)| same_machine(p, &state))
        {
            return Ok(false);
        }
        let p = Publication {
            generation: self.generation + 1,
            ..state
        };
        wloc_image::write_published(&topo, &self.path, &p).map_err(ServiceError::Write)?;
        self.generation = p.generation;
        log(&format!(
            "published {} generation {} ({reason}): {}",
            self.path.display(),
            p.generation,
            describe(&p, &summary, self.last.as_ref())
        ));
        self.last = Some((p, summary));
        self.last_bytes = bytes;
        Ok(true)
    }

    /// Publishes, logging a failure (the previous image stays).
    fn publish_or_log(&mut self, reason: &str, only_if_changed: bool) {
        match self.publish(reason, only_if_changed) {
            Ok(true) => {}
            Ok(false) => log(&format!(
                "rediscovered ({reason}): no change, generation {} stays published",
                self.generation
            )),
            Err(e) => log(&format!(
                "not published ({reason}): {e}; the previous image stays"
            )),
        }
    }

    /// Why the periodic check wants a new image, if it does.
    fn check(&self) -> Option<String> {
        let now = match machine_state() {
            Ok(s) => s,
            Err(e) => return Some(format!("periodic check: {e}")),
        };
        let last = self.last.as_ref().map(|(p, _)| p)?;
        if last.cpus_online != now.cpus_online {
            return Some("periodic check: CPUs online changed".into());
        }
        if last.nodes_online != now.nodes_online {
            return Some("periodic check: NUMA nodes online changed".into());
        }
        let published = wloc_image::adopt(&self.path)
            .ok()
            .and_then(|i| i.publication());
        if published.map(|p| p.generation) != Some(self.generation) {
            return Some("periodic check: the published image was removed or replaced".into());
        }
        None
    }
}

/// Uevents not acted on yet.
struct Pending {
    /// The first relevant one, for the log.
    why: String,
    /// When the first and the last came.
    first: Instant,
    last: Instant,
}

/// The longest a stream of uevents delays a publication: a machine whose
/// devices never stop sending events is still published.
const MAX_DEBOUNCE_WAIT: Duration = Duration::from_secs(5);

impl Pending {
    /// When to discover: `debounce` after the last event, but no later
    /// than [`MAX_DEBOUNCE_WAIT`] (or `debounce`, if longer) after the
    /// first.
    fn due(&self, debounce: Duration) -> Instant {
        (self.last + debounce).min(self.first + MAX_DEBOUNCE_WAIT.max(debounce))
    }
}

/// Runs the service: publishes once, then (unless `once`) waits for
/// changes and signals until SIGTERM or SIGINT.  The first publication
/// must succeed (an unsafe folder, a failed discovery end the service);
/// later failures keep the previous image.
pub fn run(d: &Discovery, o: &Options) -> Result<(), ServiceError> {
    // Before anything starts a thread (the component runtime does).
    let signals = if o.once {
        None
    } else {
        Some(Signals::block().map_err(|source| ServiceError::Setup {
            what: "the signals",
            source,
        })?)
    };
    prepare_folder(&o.path)?;
    // Generations go on from the old file's, so that an adopter never sees
    // a number again in one boot.
    let generation = wloc_image::adopt(&o.path)
        .ok()
        .and_then(|i| i.publication())
        .map_or(0, |p| p.generation);
    let mut publisher = Publisher {
        d,
        path: o.path.clone(),
        generation,
        last: None,
        last_bytes: Vec::new(),
    };
    publisher.publish("start", false)?;
    let Some(signals) = signals else {
        return Ok(());
    };
    let uevents = match Uevents::open() {
        Ok(u) => Some(u),
        Err(e) => {
            log(&format!(
                "warning: no kernel uevents ({e}): changes are seen by the periodic check and SIGHUP only"
            ));
            None
        }
    };
    let mut next_check = Instant::now() + o.check_interval;
    let mut pending: Option<Pending> = None;
    loop {
        let now = Instant::now();
        let deadline = match &pending {
            Some(p) => next_check.min(p.due(o.debounce)),
            None => next_check,
        };
        let timeout = rustix::event::Timespec::try_from(deadline.saturating_duration_since(now))
            .unwrap_or(rustix::event::Timespec {
                tv_sec: 1,
                tv_nsec: 0,
            });
        {
            use rustix::event::{PollFd, PollFlags};
            let mut fds = vec![PollFd::new(&signals.fd, PollFlags::IN)];
            if let Some(u) = &uevents {
                fds.push(PollFd::new(&u.fd, PollFlags::IN));
            }
            match rustix::event::poll(&mut fds, Some(&timeout)) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(e) => {
                    return Err(ServiceError::Setup {
                        what: "waiting for events",
                        source: e.into(),
                    });
                }
            }
        }
        while let Some(sig) = signals.next() {
            match sig {
                libc::SIGHUP => {
                    pending = None;
                    publisher.publish_or_log("SIGHUP", false);
                }
                _ => {
                    let name = if sig == libc::SIGINT {
                        "SIGINT"
                    } else {
                        "SIGTERM"
                    };
                    log(&format!(
                        "stopping ({name}); {} stays published",
                        o.path.display()
                    ));
                    return Ok(());
                }
            }
        }
        if let Some(why) = uevents.as_ref().and_then(Uevents::drain) {
            let now = Instant::now();
            pending = Some(match pending.take() {
                Some(p) => Pending { last: now, ..p },
                None => Pending {
                    why,
                    first: now,
                    last: now,
                },
            });
        }
        let now = Instant::now();
        if let Some(p) = &pending
            && now >= p.due(o.debounce)
        {
            let reason = format!("uevent {}", p.why);
            pending = None;
            publisher.publish_or_log(&reason, true);
        }
        if now >= next_check {
            next_check = now + o.check_interval;
            if let Some(reason) = publisher.check() {
                publisher.publish_or_log(&reason, false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uevents_of_the_topology_subsystems_are_relevant() {
        let cpu = b"offline@/devices/system/cpu/cpu1\0ACTION=offline\0DEVPATH=/devices/system/cpu/cpu1\0SUBSYSTEM=cpu\0SEQNUM=1\0";
        assert_eq!(relevant_uevent(cpu).as_deref(), Some("offline cpu"));
        let pci = b"add@/devices/pci0000:00/0000:00:05.0\0ACTION=add\0SUBSYSTEM=pci\0";
        assert_eq!(relevant_uevent(pci).as_deref(), Some("add pci"));
        let usb = b"add@/devices/usb1\0ACTION=add\0SUBSYSTEM=usb\0";
        assert_eq!(relevant_uevent(usb), None);
        assert_eq!(relevant_uevent(b"libudev\0\0\0SUBSYSTEM=cpu"), None);
        assert_eq!(relevant_uevent(b""), None);
    }

    #[test]
    fn the_log_line_says_what_changed() {
        let p = |cpus: &str, g| Publication {
            boot_id: "b".into(),
            generation: g,
            cpus_online: cpus.into(),
            nodes_online: String::new(),
        };
        let s = |pci: &[&str], pus| Summary {
            pci: pci.iter().map(|s| s.to_string()).collect(),
            counts: [("PU".to_string(), pus)].into(),
            objects: pus + pci.len(),
        };
        let first = describe(&p("0-3", 1), &s(&["0000:00:01.0"], 4), None);
        assert_eq!(
            first,
            "CPUs online 0-3, NUMA nodes online none, 1 PCI devices, 5 objects"
        );
        let before = (p("0-3", 1), s(&["0000:00:01.0"], 4));
        let next = describe(&p("0-2", 2), &s(&["0000:00:05.0"], 3), Some(&before));
        assert_eq!(
            next,
            "CPUs online 0-2 (was 0-3), NUMA nodes online none, 1 PCI devices, added 0000:00:05.0, removed 0000:00:01.0, 4 objects (PU -1)"
        );
    }

    #[test]
    fn folders_others_may_write_are_refused() {
        let d = std::env::temp_dir().join(format!("wloc-svc-folder-{}", std::process::id()));
        let path = d.join("x/topology.img");
        let x = d.join("x");
        if !rustix::process::geteuid().is_root() {
            // Made by this user: not root's, so refused.
            let e = prepare_folder(&path).unwrap_err().to_string();
            assert!(e.contains("not root"), "{e}");
            std::fs::remove_dir_all(&d).unwrap();
            return;
        }
        prepare_folder(&path).unwrap();
        let mode = std::fs::metadata(&x).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o755);
        std::fs::set_permissions(&x, std::fs::Permissions::from_mode(0o775)).unwrap();
        let e = check_folder(&x).unwrap_err().to_string();
        assert!(e.contains("mode 0775 lets group or others write it"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
