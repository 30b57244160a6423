//! Read-only file access confined to granted roots: the native side of the
//! `files` interface.
//!
//! A component names files by absolute paths of the machine it describes
//! (`/sys/devices/system/cpu/online`).  [`FileAccess`] answers them from
//! directory handles (cap-std [`Dir`]s) opened once on the granted roots,
//! below an fsroot when one is given (`-i DIR --if fsroot`: the component
//! asks for `/sys/...` and gets `DIR/sys/...` without knowing).
//!
//! Rules:
//! * a requested path must be absolute and must not contain `..`;
//! * it must lie inside a granted root (a directory, or a single file);
//! * symbolic links are followed only while they stay inside the grants:
//!   a link may lead from one granted root to another (sysfs's
//!   `cpu0/node0 -> ../../node/node0`), never out of them.  Links are
//!   resolved here, component by component, with a hop limit; every
//!   operation then goes through a cap-std handle, which the kernel
//!   (`openat2` with `RESOLVE_BENEATH`) confines to that root anyway;
//! * only reading: files are opened read-only and non-blocking (a FIFO
//!   cannot stall the host), directories are listed, links are read;
//! * only regular files are read: a device node, FIFO or socket (which a
//!   recording unpacked as root may hold anywhere) is answered
//!   [`FileError::NotFound`], left out of listings, and never opened
//!   where it can be: every file of a recording, and of this machine
//!   outside `/sys` and `/proc` (kernel filesystems that hold none), is
//!   looked at before it is opened, since opening some devices acts
//!   (a watchdog starts, a tape rewinds).  The opened descriptor is
//!   looked at again (`fstat`) before anything is read from it;
//!
//! * files private to a process are never served, whatever the grant
//!   ([`privacy`]): everything under `/proc/PID/`, `/proc/self/` and
//!   `/proc/thread-self/` except [`OWN_PROCESS_FILES`], and the few
//!   machine-wide `/proc` files that reveal other processes or memory
//!   ([`PROC_FILES_WITHHELD`]).  The rule is checked on the path as asked
//!   and again on the path its links lead to; listings of `/proc` leave
//!   process folders out;
//! * every read is charged to the run's [`ReadBudget`] while it happens,
//!   so a run never holds more file data than its budget (plus one file
//!   per reading thread).
//!
//! Anything else is answered [`FileError::Denied`].

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, FileTypeExt, Metadata, OpenOptions, OpenOptionsExt};

mod budget;
mod error;
pub mod privacy;

pub use budget::ReadBudget;
pub use error::{BudgetKind, FileError};
use privacy::Privacy;
/// `*` and `?` patterns, as the trust model matches setting names
/// (moved to `wloc-trust`, which decides grants without this module).
pub use wloc_trust::text::wildcard_match;

/// Most symbolic links followed while resolving one path (Linux's limit).
pub const MAX_SYMLINK_HOPS: usize = 40;
/// Most components in a path, links included.
pub const MAX_PATH_COMPONENTS: usize = 256;
/// Longest path accepted, in bytes.
pub const MAX_PATH_BYTES: usize = 4096;
/// Most entries returned by one `list-dir`.
pub const MAX_DIR_ENTRIES: usize = 1 << 16;
/// Most paths returned by one `glob`.
pub const MAX_GLOB_RESULTS: usize = 1 << 16;
/// Most directories listed by one `glob`.
pub const MAX_GLOB_LISTINGS: usize = 1 << 14;

/// A file the host hands a component ([`FileAccess::handed`]).
#[derive(Clone, Copy, Debug)]
pub struct Handed<'a> {
    /// Its absolute path, links resolved (what the component asks for).
    pub path: &'a str,
    /// The folder it was found in, absolute with links resolved, which it
    /// must not leave; `None` for a file the user named.
    pub within: Option<&'a Path>,
}

/// One granted root, opened.
#[derive(Debug)]
struct Grant {
    /// Its components as the component sees them (`["sys", "devices"]`).
    vpath: Vec<String>,
    /// The directory itself, or the directory holding a granted file.
    dir: Dir,
    /// For a file grant, the file's name in `dir`.
    file: Option<String>,
}

/// Read-only access to the granted roots, shared by every run that uses it.
#[derive(Debug)]
pub struct FileAccess {
    grants: Vec<Grant>,
    fsroot: Option<PathBuf>,
    /// Whether the files are the running system's: no fsroot, or one
    /// that is `/` spelled otherwise (`//`, as hwloc's gather test uses).
    running_system: bool,
    missing: Vec<String>,
    /// The roots as they were asked for (`mounts:` ones unexpanded).
    requested: Vec<String>,
}

/// Largest mount table read to expand a `mounts:` root.
const MAX_MOUNT_TABLE_BYTES: u64 = 4 << 20;

/// A path split into components, `..` refused.  Borrowed: thousands of
/// paths go through here per discovery.
fn split_request(path: &str) -> Result<Vec<&str>, FileError> {
    if !path.starts_with('/') || path.contains('\0') || path.len() > MAX_PATH_BYTES {
        return Err(FileError::Denied);
    }
    let mut out = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => return Err(FileError::Denied),
            c => out.push(c),
        }
    }
    if out.len() > MAX_PATH_COMPONENTS {
        return Err(FileError::Denied);
    }
    Ok(out)
}

fn io_error(e: io::Error) -> FileError {
    match e.kind() {
        io::ErrorKind::NotFound => FileError::NotFound,
        _ => match e.raw_os_error() {
            Some(code) if code == rustix::io::Errno::NOTDIR.raw_os_error() => FileError::NotFound,
            _ => FileError::Io(e.to_string()),
        },
    }
}

/// Whether cap-std refused an operation because the path left its root.
fn is_escape(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::PermissionDenied
        || e.raw_os_error() == Some(rustix::io::Errno::XDEV.raw_os_error())
        || e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error())
}

fn rel_path<S: AsRef<str>>(comps: &[S]) -> PathBuf {
    if comps.is_empty() {
        return PathBuf::from(".");
    }
    // One allocation, where collecting components would grow the buffer
    // once per component.
    let len = comps.iter().map(|c| c.as_ref().len() + 1).sum();
    let mut p = String::with_capacity(len);
    for (i, c) in comps.iter().enumerate() {
        if i > 0 {
            p.push('/');
        }
        p.push_str(c.as_ref());
    }
    PathBuf::from(p)
}

/// Whether two component lists are equal.
fn same<A: AsRef<str>>(a: &[A], b: &[String]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.as_ref() == y)
}

fn is_pattern(c: &str) -> bool {
    c.contains(['*', '?'])
}

/// Refuses what is not a regular file: a directory as the kernel would
/// (`EISDIR`), anything else (device node, FIFO, socket) as not found, so
/// that a component cannot tell it from a missing file.
fn regular(m: &Metadata) -> io::Result<()> {
    if m.is_file() {
        Ok(())
    } else if m.is_dir() {
        Err(io::Error::from_raw_os_error(
            rustix::io::Errno::ISDIR.raw_os_error(),
        ))
    } else {
        Err(io::ErrorKind::NotFound.into())
    }
}

/// Whether a directory entry is a device node, FIFO or socket (left out of
/// listings).  An entry whose type the directory does not tell is kept:
/// reading it is checked anyway.
fn special(ft: &cap_std::fs::FileType) -> bool {
    ft.is_char_device() || ft.is_block_device() || ft.is_fifo() || ft.is_socket()
}

impl FileAccess {
    /// Opens the granted roots, absolute paths of the described machine
    /// (`/sys`, `/proc/cpuinfo`), below `fsroot` when given.  Roots that do
    /// not exist are left out (see [`FileAccess::missing`]); a root that is
    /// not absolute or holds `..` is an error.
    ///
    /// A `mounts:TYPE,...` root stands for the folders where the described
    /// system mounts filesystems of those types, as its mount table
    /// (`/proc/self/mounts`, below `fsroot` when given) lists them.
    pub fn new(roots: &[&str], fsroot: Option<&Path>) -> io::Result<FileAccess> {
        let base = match fsroot {
            Some(r) => Some(Dir::open_ambient_dir(r, ambient_authority())?),
            None => None,
        };
        let mut grants = Vec::new();
        let mut missing = Vec::new();
        let mut expanded: Vec<String> = Vec::new();
        for root in roots {
            match wloc_trust::manifest::mount_types(root) {
                Some(types) => expanded.extend(Self::mount_points(base.as_ref(), &types)),
                None => expanded.push(root.to_string()),
            }
        }
        expanded.dedup();
        for root in &expanded {
            let vpath = split_request(root).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("granted root {root:?} must be an absolute path without '..'"),
                )
            })?;
            let vpath: Vec<String> = vpath.into_iter().map(String::from).collect();
            match Self::open_grant(base.as_ref(), &vpath) {
                Ok(Some(g)) => grants.push(g),
                Ok(None) => missing.push(root.to_string()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => missing.push(root.to_string()),
                // A root that leads out of the fsroot (a link to the host's
                // own files) is not granted; the others still are.
                Err(e) if is_escape(&e) => missing.push(root.to_string()),
                Err(e) => return Err(io::Error::new(e.kind(), format!("cannot open {root}: {e}"))),
            }
        }
        // Longest roots first, so the innermost grant answers.
        grants.sort_by_key(|g| std::cmp::Reverse(g.vpath.len()));
        let running_system =
            fsroot.is_none_or(|r| std::fs::canonicalize(r).is_ok_and(|c| c == Path::new("/")));
        Ok(FileAccess {
            grants,
            fsroot: fsroot.map(Path::to_path_buf),
            running_system,
            missing,
            requested: roots.iter().map(|r| r.to_string()).collect(),
        })
    }

    /// Access to exactly the files a command hands a component (`wloc
    /// fabric`'s fabric files), each named by its absolute path with its
    /// links resolved, and nothing else.  A file found in a folder
    /// ([`Handed::within`]) is opened through a handle on that folder, so
    /// that no link, nor a folder swapped for a link while the command
    /// runs, leads out of it; one the user named is opened where it is.
    /// Files that are not regular files (or not there any more) are left
    /// out, as [`FileAccess::missing`] tells.
    pub fn handed(files: &[Handed<'_>]) -> io::Result<FileAccess> {
        let mut folders: Vec<(&Path, Dir)> = Vec::new();
        let mut grants = Vec::new();
        let mut missing = Vec::new();
        for h in files {
            let vpath: Vec<String> = split_request(h.path)
                .map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("{:?} must be an absolute path without '..'", h.path),
                    )
                })?
                .into_iter()
                .map(String::from)
                .collect();
            let opened = match h.within {
                None => Self::open_grant(None, &vpath),
                Some(folder) => {
                    let rel = Path::new(h.path).strip_prefix(folder).map_err(|_| {
                        io::Error::new(
                            io::ErrorKind::InvalidInput,
                            format!("{} is not inside {}", h.path, folder.display()),
                        )
                    })?;
                    let i = match folders.iter().position(|(f, _)| *f == folder) {
                        Some(i) => i,
                        None => {
                            let d = Dir::open_ambient_dir(folder, ambient_authority()).map_err(
                                |e| io::Error::new(e.kind(), format!("{}: {e}", folder.display())),
                            )?;
                            folders.push((folder, d));
                            folders.len() - 1
                        }
                    };
                    Self::open_handed(&folders[i].1, rel, vpath)
                }
            };
            match opened {
                Ok(Some(g)) if g.file.is_some() => grants.push(g),
                Ok(_) => missing.push(h.path.to_string()),
                Err(e) if e.kind() == io::ErrorKind::NotFound || is_escape(&e) => {
                    missing.push(h.path.to_string())
                }
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("cannot open {}: {e}", h.path),
                    ));
                }
            }
        }
        grants.sort_by_key(|g| std::cmp::Reverse(g.vpath.len()));
        Ok(FileAccess {
            grants,
            fsroot: None,
            running_system: true,
            missing,
            requested: files.iter().map(|h| h.path.to_string()).collect(),
        })
    }

    /// A regular file at `rel` below `folder`, opened as a single-file
    /// grant named `vpath`; cap-std keeps every step inside `folder`.
    fn open_handed(folder: &Dir, rel: &Path, vpath: Vec<String>) -> io::Result<Option<Grant>> {
        if !folder.metadata(rel)?.is_file() {
            return Ok(None);
        }
        let Some(name) = rel.file_name().and_then(|n| n.to_str()) else {
            return Ok(None);
        };
        let dir = match rel.parent() {
            Some(p) if !p.as_os_str().is_empty() => folder.open_dir(p)?,
            _ => folder.try_clone()?,
        };
        Ok(Some(Grant {
            vpath,
            dir,
            file: Some(name.to_string()),
        }))
    }

    /// No access at all.
    pub fn none() -> FileAccess {
        FileAccess {
            grants: Vec::new(),
            fsroot: None,
            running_system: true,
            missing: Vec::new(),
            requested: Vec::new(),
        }
    }

    /// The mount points of filesystems of `types` in the described
    /// system's mount table; nothing when it cannot be read.  Only
    /// absolute paths without `..` are kept.
    fn mount_points(base: Option<&Dir>, types: &[&str]) -> Vec<String> {
        let read = |p: &str| -> Option<String> {
            let f = match base {
                // A recording's copy: a regular file, opened without
                // blocking (a FIFO there must not stall the host).
                Some(b) => {
                    regular(&b.metadata(p).ok()?).ok()?;
                    let mut opts = OpenOptions::new();
                    opts.read(true).custom_flags(
                        (rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32,
                    );
                    let f = b.open_with(p, &opts).ok()?;
                    regular(&f.metadata().ok()?).ok()?;
                    f.into_std()
                }
                None => std::fs::File::open(Path::new("/").join(p)).ok()?,
            };
            let mut text = String::new();
            f.take(MAX_MOUNT_TABLE_BYTES)
                .read_to_string(&mut text)
                .ok()?;
            Some(text)
        };
        let Some(table) = read("proc/self/mounts").or_else(|| read("proc/mounts")) else {
            return Vec::new();
        };
        wloc_linux::mounts::parse(&table)
            .filter(|m| types.contains(&m.fstype))
            .filter(|m| split_request(&m.dir).is_ok())
            .map(|m| m.dir)
            .collect()
    }

    /// The roots as they were asked for, `mounts:` ones unexpanded (what a
    /// grant is checked against).
    pub fn requested(&self) -> &[String] {
        &self.requested
    }

    fn open_grant(base: Option<&Dir>, vpath: &[String]) -> io::Result<Option<Grant>> {
        // The host opens the roots with ordinary resolution (an admin's
        // grant of /proc/self/status means this process's status); below
        // an fsroot, cap-std keeps even that inside the fsroot.
        let (is_dir, is_file) = match base {
            Some(_) if vpath.is_empty() => (true, false),
            Some(b) => {
                let m = b.metadata(rel_path(vpath))?;
                (m.is_dir(), m.is_file())
            }
            None => {
                let m = std::fs::metadata(Path::new("/").join(rel_path(vpath)))?;
                (m.is_dir(), m.is_file())
            }
        };
        let open_dir = |comps: &[String]| -> io::Result<Dir> {
            match base {
                Some(b) if comps.is_empty() => b.try_clone(),
                Some(b) => b.open_dir(rel_path(comps)),
                None => {
                    Dir::open_ambient_dir(Path::new("/").join(rel_path(comps)), ambient_authority())
                }
            }
        };
        if is_dir {
            Ok(Some(Grant {
                vpath: vpath.to_vec(),
                dir: open_dir(vpath)?,
                file: None,
            }))
        } else if is_file {
            let Some((name, parent)) = vpath.split_last() else {
                return Ok(None);
            };
            Ok(Some(Grant {
                vpath: vpath.to_vec(),
                dir: open_dir(parent)?,
                file: Some(name.clone()),
            }))
        } else {
            Ok(None)
        }
    }

    /// Granted roots that did not exist.
    pub fn missing(&self) -> &[String] {
        &self.missing
    }

    /// The granted roots that were opened.
    pub fn roots(&self) -> Vec<String> {
        self.grants
            .iter()
            .map(|g| format!("/{}", g.vpath.join("/")))
            .collect()
    }

    /// The fsroot paths are rebased under.
    pub fn fsroot(&self) -> Option<&Path> {
        self.fsroot.as_deref()
    }

    /// The grant holding a (symlink-free) path and the path relative to
    /// the grant's directory handle.
    fn locate<S: AsRef<str>>(&self, comps: &[S]) -> Option<(&Grant, PathBuf)> {
        for g in &self.grants {
            let n = g.vpath.len();
            match &g.file {
                None if comps.len() >= n && same(&comps[..n], &g.vpath) => {
                    return Some((g, rel_path(&comps[n..])));
                }
                Some(name) if same(comps, &g.vpath) => return Some((g, PathBuf::from(name))),
                _ => {}
            }
        }
        None
    }

    /// Whether a path is an ancestor of some grant (then it exists on the
    /// way to the grant, but is itself not granted).
    fn above_grant<S: AsRef<str>>(&self, comps: &[S]) -> bool {
        self.grants
            .iter()
            .any(|g| g.vpath.len() > comps.len() && same(comps, &g.vpath[..comps.len()]))
    }

    /// Resolves every symbolic link of a path (of the final component too
    /// when `follow_last`), staying inside the grants.  A path whose links
    /// lead through a process's folder (`/dev/fd/0` -> `/proc/self/fd/0`)
    /// is refused unless it ends at one of the files served
    /// ([`privacy::OWN_PROCESS_FILES`]), wherever it ends.
    fn resolve(&self, comps: Vec<String>, follow_last: bool) -> Result<Vec<String>, FileError> {
        let mut todo: std::collections::VecDeque<String> = comps.into();
        let mut done: Vec<String> = Vec::new();
        let mut hops = 0;
        let mut through_private = false;
        while let Some(c) = todo.pop_front() {
            if done.len() >= 2 && privacy::classify(&done, self.own_pid()) == Privacy::Private {
                through_private = true;
            }
            match c.as_str() {
                "" | "." => continue,
                ".." => {
                    // Only link targets bring `..`; what it climbs out of was
                    // resolved already, so lexical is right.
                    done.pop();
                    continue;
                }
                _ => {}
            }
            done.push(c);
            if todo.is_empty() && !follow_last {
                break;
            }
            let Some((g, rel)) = self.locate(&done) else {
                if self.above_grant(&done) {
                    continue;
                }
                return Err(FileError::Denied);
            };
            if done.len() == g.vpath.len() {
                // A granted root itself: opened by the host.
                continue;
            }
            let meta = g.dir.symlink_metadata(&rel).map_err(|e| {
                if is_escape(&e) {
                    FileError::Denied
                } else {
                    io_error(e)
                }
            })?;
            if !meta.file_type().is_symlink() {
                continue;
            }
            hops += 1;
            if hops > MAX_SYMLINK_HOPS {
                return Err(FileError::Io("too many levels of symbolic links".into()));
            }
            let target = g.dir.read_link_contents(&rel).map_err(io_error)?;
            let target = target.to_str().ok_or(FileError::Denied)?;
            if target.contains('\0') || target.len() > MAX_PATH_BYTES {
                return Err(FileError::Denied);
            }
            done.pop();
            if target.starts_with('/') {
                done.clear();
            }
            let mut front: Vec<String> = target
                .split('/')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            if front.len() + todo.len() + done.len() > MAX_PATH_COMPONENTS {
                return Err(FileError::Denied);
            }
            while let Some(s) = front.pop() {
                todo.push_front(s);
            }
        }
        if through_private && privacy::classify(&done, self.own_pid()) != Privacy::OwnProcessFile {
            return Err(FileError::Denied);
        }
        Ok(done)
    }

    /// Whether a grant's tree holds `/proc` (the grant is `/` or lies in
    /// `/proc`): there the kernel must not follow links on its own, since
    /// a link may lead from a machine file into a process's folder
    /// (`/proc/mounts` -> `self/mounts`, `/proc/net` -> `self/net`).
    fn reaches_proc(g: &Grant) -> bool {
        g.vpath.first().is_none_or(|c| c == "proc")
    }

    /// Whether a (resolved) path may be a device node, FIFO or socket, and
    /// must be looked at before it is opened: any path of a recording, and
    /// on this machine any path outside `/sys` and `/proc`, whose kernel
    /// filesystems hold none (and are read thousands of files per
    /// discovery, where one more system call per file shows).
    fn may_hold_devices<S: AsRef<str>>(&self, view: &[S]) -> bool {
        self.fsroot.is_some()
            || !view
                .first()
                .is_some_and(|c| matches!(c.as_ref(), "sys" | "proc"))
    }

    /// The PID `/proc/self` resolves to, on the running system only: in a
    /// recording, `proc/PID` is just a folder and stays private.
    fn own_pid(&self) -> Option<&'static str> {
        self.running_system.then(privacy::own_pid)
    }

    /// Runs an operation on a path, which must not be private to a process
    /// ([`privacy`]) as asked nor where its links lead.  Outside `/proc`,
    /// the operation goes straight through the grant's handle (links that
    /// stay inside that root are followed by the kernel), and when that
    /// leaves the root, again after resolving the links here; a grant that
    /// holds `/proc` always has its links resolved here first.  `op` gets
    /// the grant, the path relative to it and the path as resolved.
    fn with_path<T>(
        &self,
        path: &str,
        follow_last: bool,
        op: impl Fn(&Grant, &Path, &[&str]) -> io::Result<T>,
    ) -> Result<T, FileError> {
        let comps = split_request(path)?;
        if privacy::classify(&comps, None) == Privacy::Private {
            return Err(FileError::Denied);
        }
        match self.locate(&comps) {
            Some((g, rel)) if !Self::reaches_proc(g) => match op(g, &rel, &comps) {
                Ok(v) => return Ok(v),
                Err(e) if is_escape(&e) => {}
                Err(e) => return Err(io_error(e)),
            },
            Some(_) => {}
            None if self.above_grant(&comps) => {}
            None => return Err(FileError::Denied),
        }
        let owned = comps.iter().map(|c| c.to_string()).collect();
        let resolved = self.resolve(owned, follow_last)?;
        if privacy::classify(&resolved, self.own_pid()) == Privacy::Private {
            return Err(FileError::Denied);
        }
        let (g, rel) = self.locate(&resolved).ok_or(FileError::Denied)?;
        let view: Vec<&str> = resolved.iter().map(String::as_str).collect();
        op(g, &rel, &view).map_err(|e| {
            if is_escape(&e) {
                FileError::Denied
            } else {
                io_error(e)
            }
        })
    }

    /// Reads a file, at most `max` bytes of it.
    pub fn read(&self, path: &str, max: usize) -> Result<Vec<u8>, FileError> {
        self.read_within(path, max, &ReadBudget::unlimited())
    }

    /// Reads a file, at most `max` bytes of it, charging the file and its
    /// bytes to `budget` as they are read: no more than one buffer of
    /// `max` bytes is held past the budget, and then the read fails with
    /// [`FileError::OverBudget`].
    pub fn read_within(
        &self,
        path: &str,
        max: usize,
        budget: &ReadBudget,
    ) -> Result<Vec<u8>, FileError> {
        budget.take_file()?;
        // Never read more than the budget could pay for (one byte more,
        // to know that it does not).
        let max = max.min(
            usize::try_from(budget.bytes_left())
                .unwrap_or(usize::MAX)
                .saturating_add(1),
        );
        // Regular files and sysfs attributes return everything up to the
        // buffer's size in one read, so a short read ends them and saves
        // one system call per file.  procfs files are produced in pieces
        // (seq_file) and are read until end of file.
        let short_read_ends = !(path == "/proc" || path.starts_with("/proc/"));
        let bytes = self.with_path(path, true, |g, rel, view| {
            // Looked at before it is opened, where a device node may be:
            // opening one may act on the device.
            if self.may_hold_devices(view) {
                regular(&g.dir.metadata(rel)?)?;
            }
            let mut opts = OpenOptions::new();
            opts.read(true).custom_flags(
                (rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32,
            );
            let mut f = g.dir.open_with(rel, &opts)?;
            // What was opened, whatever was looked at before: a file
            // swapped for a device or FIFO in between is not read.
            let meta = f.metadata()?;
            regular(&meta)?;
            // Most files fit the stack buffer and are then copied at their
            // size: batches hold thousands of results at once, and 4 KiB
            // heap buffers each would be megabytes of fresh pages.
            let mut first = [0u8; 4096];
            let cap = max.clamp(1, first.len());
            let mut len = 0;
            let mut ended = false;
            while len < cap {
                let want = cap - len;
                match f.read(&mut first[len..cap]) {
                    Ok(0) => {
                        ended = true;
                        break;
                    }
                    Ok(n) => {
                        len += n;
                        if short_read_ends && n < want {
                            ended = true;
                            break;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        ended = true;
                        break;
                    }
                    Err(e) => return Err(e),
                }
            }
            if ended || len >= max {
                return Ok(first[..len.min(max)].to_vec());
            }
            // Larger files: the rest goes into a buffer sized from the
            // file's length when it tells one (large regular files such as
            // pci.ids), read up to `max` without zero-filling it first.
            let hint = usize::try_from(meta.len()).unwrap_or(usize::MAX);
            let mut buf = Vec::with_capacity(hint.max(2 * len).min(max).saturating_add(1));
            buf.extend_from_slice(&first[..len]);
            loop {
                match (&mut f)
                    .take((max - buf.len()) as u64)
                    .read_to_end(&mut buf)
                {
                    Ok(_) => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => return Err(e),
                }
            }
            Ok(buf)
        })?;
        budget.take_bytes(bytes.len() as u64)?;
        Ok(bytes)
    }

    /// The entry names of a directory, sorted.
    pub fn list_dir(&self, path: &str) -> Result<Vec<String>, FileError> {
        self.list_dir_within(path, &ReadBudget::unlimited())
    }

    /// [`FileAccess::list_dir`], charging every name to `budget` as it is
    /// read.  Process folders of `/proc` are not listed.
    pub fn list_dir_within(
        &self,
        path: &str,
        budget: &ReadBudget,
    ) -> Result<Vec<String>, FileError> {
        budget.take_file()?;
        let over = std::cell::Cell::new(None);
        let names = self.with_path(path, true, |g, rel, view| {
            if g.file.is_some() {
                return Err(io::Error::from_raw_os_error(
                    rustix::io::Errno::NOTDIR.raw_os_error(),
                ));
            }
            let mut names = Vec::new();
            for e in g.dir.read_dir(rel)? {
                let e = e?;
                if names.len() >= MAX_DIR_ENTRIES {
                    return Err(io::Error::other("too many entries"));
                }
                // Names that are not UTF-8 cannot be asked for; skip them.
                let Ok(n) = e.file_name().into_string() else {
                    continue;
                };
                // Device nodes, FIFOs and sockets are never served.
                if e.file_type().is_ok_and(|t| special(&t)) {
                    continue;
                }
                if !privacy::listable(view, &n) {
                    continue;
                }
                if let Err(FileError::OverBudget(kind)) = budget.take_entry(n.len()) {
                    over.set(Some(kind));
                    return Err(io::Error::other("over budget"));
                }
                names.push(n);
            }
            Ok(names)
        });
        if let Some(kind) = over.get() {
            return Err(FileError::OverBudget(kind));
        }
        match names {
            Err(FileError::Io(s)) if s == "too many entries" => Err(FileError::TooLarge),
            Err(FileError::NotFound) => Err(FileError::NotFound),
            other => other.map(|mut n| {
                n.sort();
                n
            }),
        }
    }

    /// The target of a symbolic link, as written in the link.
    pub fn read_link(&self, path: &str) -> Result<String, FileError> {
        self.read_link_within(path, &ReadBudget::unlimited())
    }

    /// [`FileAccess::read_link`], charging the target to `budget`.
    pub fn read_link_within(&self, path: &str, budget: &ReadBudget) -> Result<String, FileError> {
        budget.take_file()?;
        let t = self.with_path(path, false, |g, rel, _| g.dir.read_link_contents(rel))?;
        let t = t
            .into_os_string()
            .into_string()
            .map_err(|_| FileError::Io("link target is not UTF-8".into()))?;
        budget.take_bytes(t.len() as u64)?;
        Ok(t)
    }

    /// Whether a regular file or a directory exists at a path (following
    /// links); device nodes, FIFOs and sockets are never served, so they
    /// do not count.
    pub fn exists(&self, path: &str) -> bool {
        self.with_path(path, true, |g, rel, _| g.dir.metadata(rel))
            .is_ok_and(|m| m.is_file() || m.is_dir())
    }

    /// Paths matching a pattern whose components may hold `*` and `?`,
    /// sorted, spelled as the pattern spells them.
    pub fn glob(&self, pattern: &str) -> Result<Vec<String>, FileError> {
        self.glob_counted(pattern, &mut 0, &ReadBudget::unlimited())
    }

    /// [`FileAccess::glob`], adding the directories it listed to
    /// `listings` and charging every listed name and every match to
    /// `budget` as they come.
    pub fn glob_counted(
        &self,
        pattern: &str,
        listings: &mut usize,
        budget: &ReadBudget,
    ) -> Result<Vec<String>, FileError> {
        let comps = split_request(pattern)?;
        if comps.is_empty() {
            return if self.exists("/") {
                Ok(vec!["/".into()])
            } else {
                Err(FileError::Denied)
            };
        }
        let mut candidates: Vec<String> = vec![String::new()];
        let start = *listings;
        let last = comps.len().saturating_sub(1);
        for (i, c) in comps.iter().enumerate() {
            let mut next = Vec::new();
            if is_pattern(c) {
                for dir in &candidates {
                    *listings += 1;
                    if *listings - start > MAX_GLOB_LISTINGS {
                        return Err(FileError::TooLarge);
                    }
                    let dir_path = if dir.is_empty() { "/" } else { dir.as_str() };
                    let names = match self.list_dir_within(dir_path, budget) {
                        Ok(n) => n,
                        Err(FileError::Denied) if candidates.len() == 1 => {
                            return Err(FileError::Denied);
                        }
                        Err(e @ (FileError::TooLarge | FileError::OverBudget(_))) => return Err(e),
                        Err(_) => continue,
                    };
                    for n in names {
                        // Like shells, `*` does not match hidden names.
                        let visible = !n.starts_with('.') || c.starts_with('.');
                        if visible && wildcard_match(c, &n) {
                            let p = format!("{dir}/{n}");
                            budget.take_entry(p.len())?;
                            next.push(p);
                            if next.len() > MAX_GLOB_RESULTS {
                                return Err(FileError::TooLarge);
                            }
                        }
                    }
                }
            } else {
                for dir in &candidates {
                    let p = format!("{dir}/{c}");
                    budget.take_entry(p.len())?;
                    next.push(p);
                }
            }
            // Intermediate matches must be directories we can enter; the
            // last ones must exist.
            if i == last || is_pattern(c) {
                next.retain(|p| self.exists(p));
            }
            candidates = next;
            if candidates.is_empty() {
                break;
            }
        }
        candidates.sort();
        Ok(candidates)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_absolute_without_dotdot() {
        assert_eq!(split_request("relative"), Err(FileError::Denied));
        assert_eq!(split_request("/a/../b"), Err(FileError::Denied));
        assert_eq!(split_request("/a/./b//c").unwrap(), vec!["a", "b", "c"]);
        assert_eq!(split_request("/a\0b"), Err(FileError::Denied));
    }

    /// An fsroot that is `/` spelled otherwise (`//`, as hwloc's gather
    /// test sets `HWLOC_FSROOT`) is the running system: its own cgroup
    /// file is served as without an fsroot, other processes' never; in a
    /// recording, `/proc/self` leading to a PID folder stays private.
    #[test]
    fn a_root_spelled_twice_is_the_running_system() {
        let live = FileAccess::new(&["/proc"], None).unwrap();
        let want = live.read("/proc/self/cgroup", 1 << 16).unwrap();
        let slashes = FileAccess::new(&["/proc"], Some(Path::new("//"))).unwrap();
        assert_eq!(slashes.read("/proc/self/cgroup", 1 << 16).unwrap(), want);
        assert_eq!(
            slashes.read("/proc/1/cgroup", 1 << 16),
            Err(FileError::Denied)
        );
        let dir = std::env::temp_dir().join(format!("wloc-fs-selflink-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("proc/42")).unwrap();
        std::fs::write(dir.join("proc/42/cgroup"), "0::/\n").unwrap();
        std::os::unix::fs::symlink("42", dir.join("proc/self")).unwrap();
        let recorded = FileAccess::new(&["/proc"], Some(&dir)).unwrap();
        assert!(recorded.read("/proc/self/cgroup", 64).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn files_of_every_size_read_whole_or_up_to_max() {
        let dir = std::env::temp_dir().join(format!("wloc-fs-sizes-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("data")).unwrap();
        let sizes = [0usize, 1, 4095, 4096, 4097, 8192, 10_000, 70_000];
        for n in sizes {
            let bytes: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
            std::fs::write(dir.join("data").join(n.to_string()), &bytes).unwrap();
        }
        let files = FileAccess::new(&["/data"], Some(&dir)).unwrap();
        for n in sizes {
            let expected: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
            let path = format!("/data/{n}");
            assert_eq!(files.read(&path, 1 << 20).unwrap(), expected, "{n} bytes");
            for max in [1usize, 4096, 5000] {
                assert_eq!(
                    files.read(&path, max).unwrap(),
                    expected[..n.min(max)],
                    "{n} bytes, max {max}"
                );
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A node of `kind` at `path`, or why it could not be made.
    fn mknod(path: &Path, kind: rustix::fs::FileType, dev: u64) -> rustix::io::Result<()> {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            path,
            kind,
            rustix::fs::Mode::from_raw_mode(0o644),
            dev,
        )
    }

    /// A FIFO and (as root) a character device where a recording has a
    /// DMI file: not found, not listed, not existing, and never a wait.
    #[test]
    fn recordings_serve_regular_files_only() {
        let dir = std::env::temp_dir().join(format!("wloc-fs-special-{}", std::process::id()));
        let id = dir.join("sys/class/dmi/id");
        std::fs::create_dir_all(&id).unwrap();
        std::fs::write(id.join("board_name"), "board\n").unwrap();
        mknod(&id.join("product_name"), rustix::fs::FileType::Fifo, 0).unwrap();
        std::os::unix::fs::symlink("product_name", id.join("product_link")).unwrap();
        // /dev/zero's numbers: its endless zeros must not be served.
        let zero = mknod(
            &id.join("sys_vendor"),
            rustix::fs::FileType::CharacterDevice,
            rustix::fs::makedev(1, 5),
        );
        let files = FileAccess::new(&["/sys/class/dmi"], Some(&dir)).unwrap();
        let start = std::time::Instant::now();
        for name in ["product_name", "product_link", "sys_vendor"] {
            let p = format!("/sys/class/dmi/id/{name}");
            assert_eq!(files.read(&p, 1 << 20), Err(FileError::NotFound), "{name}");
            assert!(!files.exists(&p), "{name}");
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
        assert_eq!(
            files.read("/sys/class/dmi/id/board_name", 64).unwrap(),
            b"board\n"
        );
        let listed = files.list_dir("/sys/class/dmi/id").unwrap();
        assert!(!listed.contains(&"product_name".to_string()), "{listed:?}");
        assert!(listed.contains(&"board_name".to_string()), "{listed:?}");
        assert_eq!(
            files.glob("/sys/class/dmi/id/*_name").unwrap(),
            vec!["/sys/class/dmi/id/board_name".to_string()]
        );
        if let Err(e) = zero {
            eprintln!("no character device made ({e}): run as root to check one");
        }
        // The same folder granted on this machine (outside /sys and /proc).
        let live = id.to_str().unwrap();
        let files = FileAccess::new(&[live], None).unwrap();
        for name in ["product_name", "product_link", "sys_vendor"] {
            let p = format!("{live}/{name}");
            assert_eq!(files.read(&p, 1 << 20), Err(FileError::NotFound), "{name}");
        }
        assert_eq!(
            files.read(&format!("{live}/board_name"), 64).unwrap(),
            b"board\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Files handed from a folder are opened through the folder: a path
    /// whose folder is now a link out of it is not served, one the user
    /// named is.
    #[test]
    fn handed_files_stay_in_their_folder() {
        let dir = std::env::temp_dir().join(format!("wloc-fs-handed-{}", std::process::id()));
        let folder = dir.join("fabric");
        let outside = dir.join("outside");
        std::fs::create_dir_all(folder.join("ib-raw")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(folder.join("ib-raw/a.txt"), "inside").unwrap();
        std::fs::write(outside.join("a.txt"), "secret").unwrap();
        // Swapped after the command resolved the path: `moved/a.txt` was a
        // file inside, and `moved` now leads out.
        std::os::unix::fs::symlink(&outside, folder.join("moved")).unwrap();
        let folder = folder.canonicalize().unwrap();
        let good = format!("{}/ib-raw/a.txt", folder.display());
        let swapped = format!("{}/moved/a.txt", folder.display());
        let named = format!("{}/a.txt", outside.canonicalize().unwrap().display());
        let files = FileAccess::handed(&[
            Handed {
                path: &good,
                within: Some(&folder),
            },
            Handed {
                path: &swapped,
                within: Some(&folder),
            },
            Handed {
                path: &named,
                within: None,
            },
        ])
        .unwrap();
        assert_eq!(files.read(&good, 64).unwrap(), b"inside");
        assert_ne!(files.read(&swapped, 64), Ok(b"secret".to_vec()));
        assert_eq!(files.missing(), std::slice::from_ref(&swapped));
        assert_eq!(files.read(&named, 64).unwrap(), b"secret");
        // Nothing but the files handed: not their folder, not a neighbour.
        assert_eq!(
            files.list_dir(&format!("{}/ib-raw", folder.display())),
            Err(FileError::Denied)
        );
        std::fs::write(folder.join("ib-raw/b.txt"), "b").unwrap();
        assert_eq!(
            files.read(&format!("{}/ib-raw/b.txt", folder.display()), 64),
            Err(FileError::Denied)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
