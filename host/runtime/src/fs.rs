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
//!   cannot stall the host), directories are listed, links are read.
//!
//! Anything else is answered [`FileError::Denied`].

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};

/// Why a file operation failed, as the `files` interface reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileError {
    /// Nothing at that path.
    NotFound,
    /// Outside every granted root, or leaving them through a link.
    Denied,
    /// Over a size or count limit.
    TooLarge,
    /// Any other failure.
    Io(String),
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::NotFound => f.write_str("not found"),
            FileError::Denied => f.write_str("denied: outside the granted roots"),
            FileError::TooLarge => f.write_str("too large"),
            FileError::Io(s) => f.write_str(s),
        }
    }
}

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
    missing: Vec<String>,
}

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

/// Matches `*` (any run of characters) and `?` (one character).
pub fn wildcard_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

fn is_pattern(c: &str) -> bool {
    c.contains(['*', '?'])
}

impl FileAccess {
    /// Opens the granted roots, absolute paths of the described machine
    /// (`/sys`, `/proc/cpuinfo`), below `fsroot` when given.  Roots that do
    /// not exist are left out (see [`FileAccess::missing`]); a root that is
    /// not absolute or holds `..` is an error.
    pub fn new(roots: &[&str], fsroot: Option<&Path>) -> io::Result<FileAccess> {
        let base = match fsroot {
            Some(r) => Some(Dir::open_ambient_dir(r, ambient_authority())?),
            None => None,
        };
        let mut grants = Vec::new();
        let mut missing = Vec::new();
        for root in roots {
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
        Ok(FileAccess {
            grants,
            fsroot: fsroot.map(Path::to_path_buf),
            missing,
        })
    }

    /// No access at all.
    pub fn none() -> FileAccess {
        FileAccess {
            grants: Vec::new(),
            fsroot: None,
            missing: Vec::new(),
        }
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
    /// when `follow_last`), staying inside the grants.
    fn resolve(&self, comps: Vec<String>, follow_last: bool) -> Result<Vec<String>, FileError> {
        let mut todo: std::collections::VecDeque<String> = comps.into();
        let mut done: Vec<String> = Vec::new();
        let mut hops = 0;
        while let Some(c) = todo.pop_front() {
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
        Ok(done)
    }

    /// Runs an operation on a path: first straight through the grant's
    /// handle (links that stay inside that root are followed by the
    /// kernel), and when that leaves the root, again after resolving the
    /// links here.
    fn with_path<T>(
        &self,
        path: &str,
        follow_last: bool,
        op: impl Fn(&Grant, &Path) -> io::Result<T>,
    ) -> Result<T, FileError> {
        let comps = split_request(path)?;
        if let Some((g, rel)) = self.locate(&comps) {
            match op(g, &rel) {
                Ok(v) => return Ok(v),
                Err(e) if is_escape(&e) => {}
                Err(e) => return Err(io_error(e)),
            }
        } else if !self.above_grant(&comps) {
            return Err(FileError::Denied);
        }
        let owned = comps.iter().map(|c| c.to_string()).collect();
        let resolved = self.resolve(owned, follow_last)?;
        let (g, rel) = self.locate(&resolved).ok_or(FileError::Denied)?;
        op(g, &rel).map_err(|e| {
            if is_escape(&e) {
                FileError::Denied
            } else {
                io_error(e)
            }
        })
    }

    /// Reads a file, at most `max` bytes of it.
    pub fn read(&self, path: &str, max: usize) -> Result<Vec<u8>, FileError> {
        // Regular files and sysfs attributes return everything up to the
        // buffer's size in one read, so a short read ends them and saves
        // one system call per file.  procfs files are produced in pieces
        // (seq_file) and are read until end of file.
        let short_read_ends = !(path == "/proc" || path.starts_with("/proc/"));
        self.with_path(path, true, |g, rel| {
            let mut opts = OpenOptions::new();
            opts.read(true)
                .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
            let mut f = g.dir.open_with(rel, &opts)?;
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
            let hint = f.metadata().map_or(0, |m| m.len() as usize);
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
        })
    }

    /// The entry names of a directory, sorted.
    pub fn list_dir(&self, path: &str) -> Result<Vec<String>, FileError> {
        let names = self.with_path(path, true, |g, rel| {
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
                if let Ok(n) = e.file_name().into_string() {
                    names.push(n);
                }
            }
            Ok(names)
        });
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
        let t = self.with_path(path, false, |g, rel| g.dir.read_link_contents(rel))?;
        t.into_os_string()
            .into_string()
            .map_err(|_| FileError::Io("link target is not UTF-8".into()))
    }

    /// Whether something exists at a path (following links).
    pub fn exists(&self, path: &str) -> bool {
        self.with_path(path, true, |g, rel| g.dir.metadata(rel))
            .is_ok()
    }

    /// Paths matching a pattern whose components may hold `*` and `?`,
    /// sorted, spelled as the pattern spells them.
    pub fn glob(&self, pattern: &str) -> Result<Vec<String>, FileError> {
        self.glob_counted(pattern, &mut 0)
    }

    /// [`FileAccess::glob`], adding the directories it listed to `listings`.
    pub fn glob_counted(
        &self,
        pattern: &str,
        listings: &mut usize,
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
                    let names = match self.list_dir(dir_path) {
                        Ok(n) => n,
                        Err(FileError::Denied) if candidates.len() == 1 => {
                            return Err(FileError::Denied)
                        }
                        Err(FileError::TooLarge) => return Err(FileError::TooLarge),
                        Err(_) => continue,
                    };
                    for n in names {
                        // Like shells, `*` does not match hidden names.
                        let visible = !n.starts_with('.') || c.starts_with('.');
                        if visible && wildcard_match(c, &n) {
                            next.push(format!("{dir}/{n}"));
                            if next.len() > MAX_GLOB_RESULTS {
                                return Err(FileError::TooLarge);
                            }
                        }
                    }
                }
            } else {
                for dir in &candidates {
                    next.push(format!("{dir}/{c}"));
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
    fn wildcards() {
        assert!(wildcard_match("cpu*", "cpu12"));
        assert!(wildcard_match("cpu?", "cpu1"));
        assert!(!wildcard_match("cpu?", "cpu12"));
        assert!(wildcard_match("*", ""));
        assert!(wildcard_match("n*e*", "node0e"));
        assert!(!wildcard_match("node*", "cpu0"));
        assert!(wildcard_match("a*b*c", "aXbYbZc"));
    }

    #[test]
    fn requests_are_absolute_without_dotdot() {
        assert_eq!(split_request("relative"), Err(FileError::Denied));
        assert_eq!(split_request("/a/../b"), Err(FileError::Denied));
        assert_eq!(split_request("/a/./b//c").unwrap(), vec!["a", "b", "c"]);
        assert_eq!(split_request("/a\0b"), Err(FileError::Denied));
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
}
