//! The topology image `wloc service` publishes for the whole machine, as
//! every program on it adopts it instead of discovering (the library and
//! the `wloc` commands, when nothing names another source).
//!
//! A process adopts the image only when it may trust it and it is right
//! now ([`adopt`]; `docs/trust-model.md`, "Adopting the published image"):
//! - the file and every folder above it are owned by root (or, for a
//!   process that is neither root nor setuid/setgid, by its own user),
//!   and none of them is writable by others (a folder above the image's
//!   own may be sticky, as `/tmp`); the image's folder and the image are
//!   not writable by group or others, and no path component is a link;
//! - its publication stamp names the running kernel's boot and the CPUs
//!   and NUMA nodes online now;
//! - the image passes the image checker (checksum, structure, a tree
//!   hwloc's checker accepts).
//!
//! The image holds the machine (every object, disallowed ones included);
//! what differs per process is computed here ([`topology_for`]): the
//! allowed CPUs and NUMA nodes of the caller's cgroup, its type filters
//! and flags.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use wloc_core::Topology;
use wloc_image::{AdoptedTopology, ImageError};

/// Where `wloc service` publishes by default.
pub const DEFAULT_PATH: &str = "/run/wloc/topology.img";

/// Names another published image (the service's `--path`).
pub const PATH_VAR: &str = "WLOC_SERVICE_IMAGE";

/// Set to anything but `0`: never adopt the published image.
pub const OPT_OUT_VAR: &str = "WLOC_NO_SERVICE";

/// The boot's identity, which the stamp must name.
const BOOT_ID: &str = "/proc/sys/kernel/random/boot_id";
/// The CPUs online now, as the stamp names them.
const CPUS_ONLINE: &str = "/sys/devices/system/cpu/online";
/// The NUMA nodes online now ("" without the file).
const NODES_ONLINE: &str = "/sys/devices/system/node/online";

/// Why the published image was not adopted (the caller discovers instead,
/// and says this in one line when asked to).
#[derive(Debug, thiserror::Error)]
pub enum NotAdopted {
    /// [`OPT_OUT_VAR`] opts out.
    #[error("{OPT_OUT_VAR} is set")]
    OptedOut,
    /// A variable changes how discovery reads this machine, or names a
    /// policy (the image was discovered without it).
    #[error("{0} is set, which changes discovery")]
    DiscoverySetting(String),
    /// Nothing is published there.
    #[error("no published image at {0}")]
    Absent(PathBuf),
    /// The image, or a folder above it, is not one this process may
    /// trust.
    #[error("{path}: {why}")]
    Untrusted {
        /// The image.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The image checker refused it.
    #[error("{0}")]
    Image(#[from] ImageError),
    /// The image has no publication stamp: no service wrote it.
    #[error("{0}: not written by the service (no publication stamp)")]
    Unstamped(PathBuf),
    /// Published before the machine last booted.
    #[error("{0}: published during another boot")]
    OtherBoot(PathBuf),
    #[error("{path}: published while CPUs {then} were online, now {now}")]
    /// CPUs went online or offline since.
    CpusChanged {
        /// The image.
        path: PathBuf,
        /// The CPUs online when it was published.
        then: String,
        /// The CPUs online now.
        now: String,
    },
    #[error("{path}: published while NUMA nodes {then} were online, now {now}")]
    /// NUMA nodes went online or offline since.
    NodesChanged {
        /// The image.
        path: PathBuf,
        /// The nodes online when it was published.
        then: String,
        /// The nodes online now.
        now: String,
    },
    #[error("cannot read {what}: {source}")]
    /// A file of the running system that the check needs is unreadable.
    System {
        /// The file.
        what: &'static str,
        /// Why.
        source: io::Error,
    },
}

/// Root's trust: only root's files (the service publishing).
pub const ROOT: Caller = Caller {
    uid: 0,
    privileged: true,
};

/// Whose trust an image needs: the users a file may belong to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The real user.
    pub uid: u32,
    /// Root, or setuid/setgid: only root's files are trusted.
    pub privileged: bool,
}

impl Caller {
    /// The calling process.
    pub fn this_process() -> Caller {
        // SAFETY: these calls only read the process's credentials.
        let (uid, euid, gid, egid) = unsafe {
            (
                libc::getuid(),
                libc::geteuid(),
                libc::getgid(),
                libc::getegid(),
            )
        };
        Caller {
            uid,
            // AT_SECURE too: a program given file capabilities, or one
            // that gave its set user id back, is as privileged.
            privileged: euid == 0 || uid != euid || gid != egid || wloc_trust::env::secure_mode(),
        }
    }

    /// Whether files of `owner` may be trusted.
    pub fn trusts(&self, owner: u32) -> bool {
        owner == 0 || (!self.privileged && owner == self.uid)
    }
}

/// Where the published image is looked for: [`PATH_VAR`], else
/// [`DEFAULT_PATH`]; `None` when [`OPT_OUT_VAR`] opts out.
pub fn published_path() -> Result<PathBuf, NotAdopted> {
    // Read as bytes: a value that is not UTF-8 is still set.
    if wloc_trust::env::var_os(OPT_OUT_VAR).is_some_and(|v| v.to_string_lossy().trim() != "0") {
        return Err(NotAdopted::OptedOut);
    }
    Ok(wloc_trust::env::var_os(PATH_VAR)
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_PATH), PathBuf::from))
}

/// The first variable set that changes what the Linux discovery gives
/// (`HWLOC_GROUPING`, `HWLOC_MEMTIERS`, ..., or their `WLOC_` names): a
/// process that sets one asks for a discovery under it.
fn discovery_setting() -> Option<String> {
    wloc_linux::SETTING_NAMES.iter().find_map(|n| {
        ["WLOC_", "HWLOC_"].into_iter().find_map(|prefix| {
            let name = format!("{prefix}{n}");
            // Set to bytes that are not UTF-8 is set all the same.
            wloc_trust::env::var_os(&name)
                .is_some_and(|v| !v.is_empty())
                .then_some(name)
        })
    })
}

/// Why a folder chain is not trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FolderProblem {
    /// A folder of the chain does not exist.
    Absent,
    /// What is wrong with which folder.
    Untrusted(String),
}

/// Checks every folder from `/` down to `folder`, as an image in `folder`
/// needs for `caller` to trust it (and as `wloc service` needs before it
/// publishes there): each a real folder (no symbolic link), owned by a
/// user `caller` trusts, not writable by group or others, except that a
/// folder above `folder` may be when it is sticky (`/tmp`).  An attacker
/// who may write any of them could put another image, or another folder,
/// in the place of the one checked.
pub fn check_folder_chain(folder: &Path, caller: &Caller) -> Result<(), FolderProblem> {
    let untrusted = |why: String| Err(FolderProblem::Untrusted(why));
    if !folder.is_absolute() {
        return untrusted(format!("{} is not an absolute path", folder.display()));
    }
    let ancestors: Vec<&Path> = folder.ancestors().collect();
    for (n, dir) in ancestors.iter().rev().enumerate() {
        let is_own_folder = n + 1 == ancestors.len();
        let m = match std::fs::symlink_metadata(dir) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(FolderProblem::Absent),
            Err(e) => return untrusted(format!("cannot inspect {}: {e}", dir.display())),
        };
        if m.file_type().is_symlink() {
            return untrusted(format!("{} is a symbolic link", dir.display()));
        }
        if !m.is_dir() {
            return untrusted(format!("{} is not a folder", dir.display()));
        }
        if !caller.trusts(m.uid()) {
            return untrusted(format!(
                "the folder {} belongs to user {}",
                dir.display(),
                m.uid()
            ));
        }
        let writable_by_others = m.mode() & 0o022 != 0;
        let sticky = m.mode() & 0o1000 != 0;
        if writable_by_others && (is_own_folder || !sticky) {
            return untrusted(format!(
                "the folder {} may be written by others (mode {:o})",
                dir.display(),
                m.mode() & 0o7777
            ));
        }
    }
    Ok(())
}

/// Opens the image at `path` when `caller` may trust it (the rules of the
/// module's documentation, bar the stamp and the checker).
pub fn open_trusted(path: &Path, caller: &Caller) -> Result<File, NotAdopted> {
    let untrusted = |why: String| NotAdopted::Untrusted {
        path: path.to_path_buf(),
        why,
    };
    if !path.is_absolute() {
        return Err(untrusted("not an absolute path".into()));
    }
    let folder = path
        .parent()
        .ok_or_else(|| untrusted("not a file".into()))?;
    match check_folder_chain(folder, caller) {
        Ok(()) => {}
        Err(FolderProblem::Absent) => return Err(NotAdopted::Absent(path.to_path_buf())),
        Err(FolderProblem::Untrusted(why)) => return Err(untrusted(why)),
    }
    // O_NOFOLLOW: the file itself is no link; O_NONBLOCK: a FIFO put
    // there does not hang the caller.
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => NotAdopted::Absent(path.to_path_buf()),
            _ => untrusted(format!("cannot open it: {e}")),
        })?;
    let m = f
        .metadata()
        .map_err(|e| untrusted(format!("cannot inspect it: {e}")))?;
    if !m.is_file() {
        return Err(untrusted("not a regular file".into()));
    }
    if let Some(kind) = ownership_not_vouched(&f, m.dev()) {
        return Err(untrusted(format!(
            "it is on a {kind} file system, whose owners the kernel takes from elsewhere"
        )));
    }
    if !caller.trusts(m.uid()) {
        return Err(untrusted(format!("it belongs to user {}", m.uid())));
    }
    if m.mode() & 0o022 != 0 {
        return Err(untrusted(format!(
            "it may be written by others (mode {:o})",
            m.mode() & 0o7777
        )));
    }
    Ok(f)
}

/// File systems whose owners and modes a user-space daemon or another
/// machine reports (`statfs` types): a user's FUSE mount, or an NFS
/// export an automounter brings in under a root-owned folder, may say
/// "root, mode 0644" of a file its owner controls.  The service publishes
/// on a local file system (`/run` is a tmpfs), so an image on one of these
/// is never adopted.
const REPORTED_OWNERSHIP: &[(i64, &str)] = &[
    (0x6573_5546, "FUSE"),
    (0x6969, "NFS"),
    (0xff53_4d42, "CIFS"),
    (0xfe53_4d42, "SMB2"),
    (0x517b, "SMB"),
    (0x0102_1997, "9p"),
    (0x00c3_6400, "Ceph"),
    (0x5346_414f, "AFS"),
    (0x6b41_4653, "AFS"),
    (0x7375_7245, "Coda"),
    (0x0bd0_0bd0, "Lustre"),
    (0x4750_4653, "GPFS"),
    (0x0187, "autofs"),
];

/// The same file systems as `/proc/self/mountinfo` names them: some
/// (9p) pass the serving machine's file system type through `statfs`,
/// so the mount table is asked too.
const REPORTED_OWNERSHIP_NAMES: &[&str] = &[
    "fuse", "fuseblk", "virtiofs", "nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "afs",
    "coda", "lustre", "gpfs", "autofs",
];

/// The kind of file system `f` (on device `dev`) is on when its ownership
/// is reported rather than kept by the kernel ([`REPORTED_OWNERSHIP`],
/// [`REPORTED_OWNERSHIP_NAMES`]); also when that cannot be told.
fn ownership_not_vouched(f: &File, dev: u64) -> Option<String> {
    if let Some(kind) = reported_by_statfs(f) {
        return Some(kind.to_string());
    }
    let table = match std::fs::read_to_string("/proc/self/mountinfo") {
        Ok(t) => t,
        Err(_) => return Some("unidentified (no /proc/self/mountinfo)".into()),
    };
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let device = format!("{major}:{minor}");
    // "ID PARENT MAJOR:MINOR ROOT POINT OPTIONS [TAGS...] - TYPE SOURCE ...":
    // the last mount of the device is the one in effect.
    let kind = table
        .lines()
        .filter(|l| l.split(' ').nth(2) == Some(device.as_str()))
        .filter_map(|l| l.split(" - ").nth(1)?.split(' ').next())
        .next_back()?;
    let base = kind.split('.').next().unwrap_or(kind);
    REPORTED_OWNERSHIP_NAMES
        .contains(&base)
        .then(|| kind.to_string())
}

/// [`REPORTED_OWNERSHIP`] by `statfs`.
fn reported_by_statfs(f: &File) -> Option<&'static str> {
    // SAFETY: fstatfs fills the zeroed structure it is given.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `f` is an open descriptor and `st` a writable statfs.
    if unsafe { libc::fstatfs(f.as_raw_fd(), &mut st) } != 0 {
        return Some("unidentified");
    }
    #[allow(clippy::unnecessary_cast)]
    let kind = st.f_type as i64;
    REPORTED_OWNERSHIP
        .iter()
        .find(|(magic, _)| *magic == kind)
        .map(|(_, name)| *name)
}

/// The first line of a system file, trimmed.
fn system_line(what: &'static str) -> Result<String, NotAdopted> {
    match std::fs::read_to_string(what) {
        Ok(s) => Ok(s.trim().to_string()),
        Err(source) => Err(NotAdopted::System { what, source }),
    }
}

/// Checks that the image at `path` was published for the machine as it
/// is now: this boot, the CPUs and NUMA nodes online now.
pub fn check_current(path: &Path, img: &AdoptedTopology) -> Result<(), NotAdopted> {
    let stamp = img
        .publication()
        .ok_or_else(|| NotAdopted::Unstamped(path.to_path_buf()))?;
    if stamp.boot_id.trim() != system_line(BOOT_ID)? {
        return Err(NotAdopted::OtherBoot(path.to_path_buf()));
    }
    let cpus = system_line(CPUS_ONLINE)?;
    if stamp.cpus_online.trim() != cpus {
        return Err(NotAdopted::CpusChanged {
            path: path.to_path_buf(),
            then: stamp.cpus_online.trim().to_string(),
            now: cpus,
        });
    }
    let nodes = match std::fs::read_to_string(NODES_ONLINE) {
        Ok(s) => s.trim().to_string(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(NotAdopted::System {
                what: NODES_ONLINE,
                source,
            });
        }
    };
    if stamp.nodes_online.trim() != nodes {
        return Err(NotAdopted::NodesChanged {
            path: path.to_path_buf(),
            then: stamp.nodes_online.trim().to_string(),
            now: nodes,
        });
    }
    Ok(())
}

/// The topology the calling process gets from a published image: what
/// Linux discovery with `base`'s filters and flags gives it, with the
/// allowed CPUs and NUMA nodes of its own cgroup (of process `pid` when
/// given, as after `hwloc_topology_set_pid`).
pub fn topology_for(
    img: &AdoptedTopology,
    base: Topology,
    pid: Option<u32>,
) -> Result<Topology, NotAdopted> {
    let include_disallowed = base.include_disallowed;
    let mut whole = base;
    whole.include_disallowed = true;
    let t = img.to_topology_into(whole)?;
    for_process(t, include_disallowed, pid)
        .map_err(|e| NotAdopted::Image(ImageError::Invalid(e.to_string())))
}

/// What differs per process in a whole machine's topology (discovered or
/// adopted with every object kept): the allowed CPUs and NUMA nodes and
/// the `LinuxCgroup` info of the cgroup of process `pid` (the caller when
/// `None`, as hwloc's Linux backend reads them, also after
/// `hwloc_topology_set_pid`), the caller's host name, and the disallowed
/// objects removed unless `include_disallowed`.  One home for both paths:
/// adopting the published image and the C library's discovery for
/// another process.
pub fn for_process(
    mut t: Topology,
    include_disallowed: bool,
    pid: Option<u32>,
) -> Result<Topology, wloc_core::TopologyError> {
    let allowed = wloc_linux::allowed_resources_of(&wloc_linux::NativeFs::new("/"), pid);
    // The caller's cgroup, where discovery puts it (the root's infos);
    // one the discovery of another process left among the topology's
    // infos goes.
    t.infos.retain(|i| i.name != "LinuxCgroup");
    let root = t.root();
    let infos = &mut t.obj_mut(root).infos;
    let at = infos.iter().position(|i| i.name == "LinuxCgroup");
    match (&allowed, at) {
        (Some(a), Some(i)) => infos[i].value = a.cgroup.clone(),
        (Some(a), None) => infos.insert(
            0,
            wloc_core::object::Info {
                name: "LinuxCgroup".into(),
                value: a.cgroup.clone(),
            },
        ),
        (None, Some(i)) => {
            infos.remove(i);
        }
        (None, None) => {}
    }
    // The host name is the caller's UTS namespace's, as its discovery
    // reads it (a container may name itself otherwise).
    // (Kept among the topology's infos or the root's.)
    if let Some(name) = host_name() {
        let root = t.root();
        for info in t.infos.iter_mut().filter(|i| i.name == "HostName") {
            info.value = name.clone();
        }
        for info in t
            .obj_mut(root)
            .infos
            .iter_mut()
            .filter(|i| i.name == "HostName")
        {
            info.value = name.clone();
        }
    }
    let (cpus, nodes) = match allowed {
        Some(a) => (a.cpuset, a.nodeset),
        None => (t.complete_cpuset().clone(), t.complete_nodeset().clone()),
    };
    let (cpus, nodes) = (&cpus & t.complete_cpuset(), &nodes & t.complete_nodeset());
    // Usually (a process in the service's cgroup, or one allowing the
    // whole machine) nothing is disallowed: the tree is final as rebuilt.
    let narrower = cpus != t.allowed_cpuset || nodes != t.allowed_nodeset;
    let everything_allowed = &cpus == t.complete_cpuset() && &nodes == t.complete_nodeset();
    t.allowed_cpuset = cpus;
    t.allowed_nodeset = nodes;
    t.include_disallowed = include_disallowed;
    if narrower || (!include_disallowed && !everything_allowed) {
        t.finish()?;
    }
    t.is_thissystem = true;
    Ok(t)
}

/// Tells, on standard error, why the published image was not adopted,
/// when `WLOC_DEBUG` or hwloc's `HWLOC_DEBUG_VERBOSE` asks (nonzero).
pub fn tell_why_not(why: &NotAdopted) {
    let asked = |n: &str| wloc_trust::env::var(n).is_some_and(|v| !v.is_empty() && v.trim() != "0");
    if asked("WLOC_DEBUG") || asked("HWLOC_DEBUG_VERBOSE") {
        eprintln!("wloc: discovering, not adopting the published topology: {why}");
    }
}

/// This process's host name (`uname`), as the Linux discovery's
/// `HostName` info gives it.
fn host_name() -> Option<String> {
    // SAFETY: uname fills the zeroed structure it is given.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    // SAFETY: the kernel writes a NUL-terminated name into the array.
    let name = unsafe { std::ffi::CStr::from_ptr(u.nodename.as_ptr()) };
    Some(name.to_string_lossy().into_owned())
}

/// The published image, when the calling process may trust it and it is
/// current, as the topology this process gets ([`topology_for`]).
pub fn adopt(base: Topology, pid: Option<u32>) -> Result<Topology, NotAdopted> {
    let path = published_path()?;
    if let Some(name) = discovery_setting() {
        return Err(NotAdopted::DiscoverySetting(name));
    }
    // A policy named for this process: the image was discovered under
    // the system's (read as bytes: a value that is not UTF-8 is set).
    if wloc_trust::env::var_os("WLOC_POLICY").is_some_and(|v| !v.is_empty()) {
        return Err(NotAdopted::DiscoverySetting("WLOC_POLICY".into()));
    }
    let f = open_trusted(&path, &Caller::this_process())?;
    let img = wloc_image::adopt_file(&f)?;
    check_current(&path, &img)?;
    topology_for(&img, base, pid)
}

#[cfg(test)]
mod tests;
