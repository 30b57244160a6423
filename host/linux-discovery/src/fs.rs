//! File access: the [`FsAccess`] trait, the native implementation
//! ([`NativeFs`], feature `native`) and an in-memory one ([`MemFs`]).

use std::collections::BTreeMap;

/// Largest file read, in bytes: sysfs and procfs files are small, and a
/// recording could hold anything.
pub const MAX_FILE_SIZE: usize = 1 << 20;

/// Largest number of entries returned for one directory.
pub const MAX_DIR_ENTRIES: usize = 1 << 16;

/// Read-only access to a filesystem tree rooted at `/` (or at a recorded
/// fsroot).
///
/// Paths are absolute (`/sys/devices/system/cpu/online`).  Every method
/// answers `None` when the path is missing or unreadable; implementations
/// never panic.  Discovery goes through this trait only, so the same code
/// runs natively ([`NativeFs`]) and inside a sandbox whose host serves the
/// files.
pub trait FsAccess {
    /// The whole content of a small file (implementations may truncate huge
    /// files, at [`MAX_FILE_SIZE`] for instance).
    fn read(&self, path: &str) -> Option<Vec<u8>>;

    /// Several files at once; a sandbox host answers them in one call.
    fn read_many(&self, paths: &[&str]) -> Vec<Option<Vec<u8>>> {
        paths.iter().map(|p| self.read(p)).collect()
    }

    /// At most the first `max` bytes of a file.  Reading less matters for
    /// files whose every byte costs, such as PCI config space on virtual
    /// machines.
    fn read_prefix(&self, path: &str, max: usize) -> Option<Vec<u8>> {
        self.read(path).map(|mut v| {
            v.truncate(max);
            v
        })
    }

    /// [`read_prefix`](FsAccess::read_prefix) of several files at once.
    fn read_many_prefix(&self, paths: &[&str], max: usize) -> Vec<Option<Vec<u8>>> {
        paths.iter().map(|p| self.read_prefix(p, max)).collect()
    }

    /// The entry names of a directory (without `.` and `..`), in any order.
    fn list(&self, dir: &str) -> Option<Vec<String>>;

    /// The target of a symbolic link, as stored in the link.
    fn read_link(&self, path: &str) -> Option<String>;

    /// Whether anything (file, directory or link) exists at `path`.
    fn exists(&self, path: &str) -> bool {
        self.read_link(path).is_some() || self.read(path).is_some() || self.list(path).is_some()
    }
}

impl<T: FsAccess + ?Sized> FsAccess for &T {
    fn read(&self, path: &str) -> Option<Vec<u8>> {
        (**self).read(path)
    }
    fn read_many(&self, paths: &[&str]) -> Vec<Option<Vec<u8>>> {
        (**self).read_many(paths)
    }
    fn read_prefix(&self, path: &str, max: usize) -> Option<Vec<u8>> {
        (**self).read_prefix(path, max)
    }
    fn read_many_prefix(&self, paths: &[&str], max: usize) -> Vec<Option<Vec<u8>>> {
        (**self).read_many_prefix(paths, max)
    }
    fn list(&self, dir: &str) -> Option<Vec<String>> {
        (**self).list(dir)
    }
    fn read_link(&self, path: &str) -> Option<String> {
        (**self).read_link(path)
    }
    fn exists(&self, path: &str) -> bool {
        (**self).exists(path)
    }
}

/// Splits an absolute path into its components, refusing `..`, empty
/// names are skipped (`//`), `.` is skipped.  `None` for a path that would
/// climb above the root or holds a NUL byte.
pub fn components(path: &str) -> Option<Vec<&str>> {
    if path.contains('\0') {
        return None;
    }
    let mut out = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(feature = "native")]
pub use native::NativeFs;

#[cfg(feature = "native")]
mod native {
    use super::*;
    use std::io::Read;
    use std::path::{Path, PathBuf};

    /// [`FsAccess`] on the real filesystem, confined below a root directory
    /// (`/` for the running machine, or a recorded fsroot).
    ///
    /// Absolute paths are joined under the root; paths with `..`
    /// components are refused.  Only regular files are read (never FIFOs
    /// or devices, which could block), and at most [`MAX_FILE_SIZE`] bytes
    /// of each.
    #[derive(Clone, Debug)]
    pub struct NativeFs {
        root: PathBuf,
    }

    impl NativeFs {
        /// File access below `root`.
        pub fn new(root: impl Into<PathBuf>) -> Self {
            NativeFs { root: root.into() }
        }

        /// The root directory.
        pub fn root(&self) -> &Path {
            &self.root
        }

        fn resolve(&self, path: &str) -> Option<PathBuf> {
            let comps = components(path)?;
            let mut p = self.root.clone();
            for c in comps {
                p.push(c);
            }
            Some(p)
        }
    }

    /// Opens for reading without blocking on FIFOs: on Unix with
    /// `O_NONBLOCK` (regular files ignore it); elsewhere only after checking
    /// that the path is a regular file.
    fn open_nonblocking(p: &Path) -> Option<std::fs::File> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(p)
                .ok()
        }
        #[cfg(not(unix))]
        {
            if !std::fs::metadata(p).ok()?.is_file() {
                return None;
            }
            std::fs::File::open(p).ok()
        }
    }

    impl FsAccess for NativeFs {
        fn read(&self, path: &str) -> Option<Vec<u8>> {
            self.read_prefix(path, MAX_FILE_SIZE)
        }

        fn read_prefix(&self, path: &str, max: usize) -> Option<Vec<u8>> {
            let p = self.resolve(path)?;
            let mut f = open_nonblocking(&p)?;
            let max = max.min(MAX_FILE_SIZE);
            // No fstat: directories fail to read, and FIFOs opened without
            // blocking read as empty.  A read shorter than asked ends the
            // file (regular files, sysfs attributes and procfs seq files
            // fill the buffer until their end), which saves the final
            // empty read of small files.
            let mut buf = vec![0u8; max.min(512)];
            let mut len = 0;
            loop {
                if len == buf.len() {
                    if len >= max {
                        break;
                    }
                    buf.resize((len * 2).min(max), 0);
                }
                match f.read(&mut buf[len..]) {
                    Ok(0) => break,
                    Ok(n) => {
                        len += n;
                        if len < buf.len() {
                            break;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => return None,
                }
            }
            buf.truncate(len);
            Some(buf)
        }

        fn list(&self, dir: &str) -> Option<Vec<String>> {
            let p = self.resolve(dir)?;
            let rd = std::fs::read_dir(p).ok()?;
            let mut out = Vec::new();
            for e in rd.take(MAX_DIR_ENTRIES) {
                let Ok(e) = e else { continue };
                out.push(e.file_name().to_string_lossy().into_owned());
            }
            Some(out)
        }

        fn read_link(&self, path: &str) -> Option<String> {
            let p = self.resolve(path)?;
            let t = std::fs::read_link(p).ok()?;
            Some(t.to_string_lossy().into_owned())
        }

        fn exists(&self, path: &str) -> bool {
            match self.resolve(path) {
                Some(p) => std::fs::symlink_metadata(p).is_ok(),
                None => false,
            }
        }
    }
}

/// One entry of a [`MemFs`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemEntry {
    /// A regular file and its content.
    File(Vec<u8>),
    /// A symbolic link and its target (relative targets are resolved
    /// against the link's directory when followed).
    Link(String),
    /// A directory (also created implicitly by deeper entries).
    Dir,
}

/// An in-memory [`FsAccess`], for tests and for hosts that ship a recorded
/// tree as data.  Links are followed (up to 40 of them per lookup) when
/// reading files and listing directories, never above the root.
#[derive(Clone, Debug, Default)]
pub struct MemFs {
    entries: BTreeMap<String, MemEntry>,
}

impl MemFs {
    /// An empty tree (only `/`).
    pub fn new() -> Self {
        Self::default()
    }

    fn norm(path: &str) -> Option<String> {
        let comps = components(path)?;
        Some(format!("/{}", comps.join("/")))
    }

    fn add_parents(&mut self, path: &str) {
        let mut cur = String::new();
        let comps: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
        for c in &comps[..comps.len().saturating_sub(1)] {
            cur.push('/');
            cur.push_str(c);
            self.entries.entry(cur.clone()).or_insert(MemEntry::Dir);
        }
    }

    /// Adds (or replaces) a file.
    pub fn add_file(&mut self, path: &str, content: impl Into<Vec<u8>>) -> &mut Self {
        if let Some(p) = Self::norm(path) {
            self.add_parents(&p);
            self.entries.insert(p, MemEntry::File(content.into()));
        }
        self
    }

    /// Adds (or replaces) a symbolic link.
    pub fn add_link(&mut self, path: &str, target: &str) -> &mut Self {
        if let Some(p) = Self::norm(path) {
            self.add_parents(&p);
            self.entries.insert(p, MemEntry::Link(target.to_string()));
        }
        self
    }

    /// Removes an entry and everything below it, as Linux hides a folder.
    pub fn remove(&mut self, path: &str) -> &mut Self {
        if let Some(p) = Self::norm(path) {
            let below = format!("{p}/");
            self.entries
                .retain(|k, _| *k != p && !k.starts_with(&below));
        }
        self
    }

    /// Adds an empty directory.
    pub fn add_dir(&mut self, path: &str) -> &mut Self {
        if let Some(p) = Self::norm(path) {
            self.add_parents(&p);
            self.entries.entry(p).or_insert(MemEntry::Dir);
        }
        self
    }

    /// Resolves links in every component of `path`; `None` on a missing
    /// component, a link loop, or a link climbing above the root.
    fn resolve(&self, path: &str) -> Option<String> {
        let mut todo: Vec<String> = components(path)?
            .iter()
            .rev()
            .map(|s| s.to_string())
            .collect();
        let mut cur: Vec<String> = Vec::new();
        let mut links = 0;
        while let Some(c) = todo.pop() {
            if c == "." || c.is_empty() {
                continue;
            }
            if c == ".." {
                cur.pop()?;
                continue;
            }
            cur.push(c);
            let key = format!("/{}", cur.join("/"));
            match self.entries.get(&key) {
                None => return None,
                Some(MemEntry::Link(t)) => {
                    links += 1;
                    if links > 40 {
                        return None;
                    }
                    cur.pop();
                    if t.starts_with('/') {
                        cur.clear();
                    }
                    for part in t.split('/').rev() {
                        todo.push(part.to_string());
                    }
                }
                Some(_) => {}
            }
        }
        Some(format!("/{}", cur.join("/")))
    }
}

impl FsAccess for MemFs {
    fn read(&self, path: &str) -> Option<Vec<u8>> {
        let p = self.resolve(path)?;
        match self.entries.get(&p)? {
            MemEntry::File(c) => Some(c[..c.len().min(MAX_FILE_SIZE)].to_vec()),
            _ => None,
        }
    }

    fn list(&self, dir: &str) -> Option<Vec<String>> {
        let p = self.resolve(dir)?;
        if p != "/" && !matches!(self.entries.get(&p)?, MemEntry::Dir) {
            return None;
        }
        let prefix = if p == "/" {
            "/".to_string()
        } else {
            format!("{p}/")
        };
        let mut out = Vec::new();
        for k in self.entries.range(prefix.clone()..) {
            let Some(rest) = k.0.strip_prefix(&prefix) else {
                break;
            };
            if !rest.is_empty() && !rest.contains('/') {
                out.push(rest.to_string());
            }
        }
        Some(out)
    }

    fn read_link(&self, path: &str) -> Option<String> {
        let comps = components(path)?;
        let (last, dir) = comps.split_last()?;
        let d = self.resolve(&format!("/{}", dir.join("/")))?;
        let key = if d == "/" {
            format!("/{last}")
        } else {
            format!("{d}/{last}")
        };
        match self.entries.get(&key)? {
            MemEntry::Link(t) => Some(t.clone()),
            _ => None,
        }
    }

    fn exists(&self, path: &str) -> bool {
        self.read_link(path).is_some() || self.resolve(path).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memfs_follows_links_and_refuses_escapes() {
        let mut fs = MemFs::new();
        fs.add_file("/sys/devices/pci0000:00/0000:00:01.0/class", "0x060400\n")
            .add_link(
                "/sys/bus/pci/devices/0000:00:01.0",
                "../../../devices/pci0000:00/0000:00:01.0",
            )
            .add_link("/loop/a", "b")
            .add_link("/loop/b", "a")
            .add_link("/escape", "../../etc");
        assert_eq!(
            fs.read("/sys/bus/pci/devices/0000:00:01.0/class").unwrap(),
            b"0x060400\n"
        );
        assert_eq!(
            fs.list("/sys/bus/pci/devices").unwrap(),
            vec!["0000:00:01.0"]
        );
        assert_eq!(
            fs.read_link("/sys/bus/pci/devices/0000:00:01.0").unwrap(),
            "../../../devices/pci0000:00/0000:00:01.0"
        );
        assert!(fs.read("/loop/a").is_none());
        assert!(fs.list("/escape").is_none());
        assert!(fs.read("/sys/../etc/passwd").is_none());
        assert!(fs.exists("/loop/a"));
        assert!(!fs.exists("/nothing"));
        let mut sorted = fs.list("/").unwrap();
        sorted.sort();
        assert_eq!(sorted, vec!["escape", "loop", "sys"]);
    }

    #[cfg(feature = "native")]
    #[test]
    fn nativefs_is_confined_and_capped() {
        let dir = std::env::temp_dir().join(format!("wloc-linux-nativefs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sys/a")).unwrap();
        std::fs::write(dir.join("sys/a/f"), b"hello").unwrap();
        std::fs::write(dir.join("big"), vec![b'x'; MAX_FILE_SIZE + 10]).unwrap();
        std::os::unix::fs::symlink("f", dir.join("sys/a/l")).unwrap();
        std::os::unix::fs::symlink("loop2", dir.join("loop1")).unwrap();
        std::os::unix::fs::symlink("loop1", dir.join("loop2")).unwrap();
        let fs = NativeFs::new(&dir);
        assert_eq!(fs.read("/sys/a/f").unwrap(), b"hello");
        assert_eq!(fs.read("/sys/a/l").unwrap(), b"hello");
        assert_eq!(fs.read_link("/sys/a/l").unwrap(), "f");
        assert!(fs.read("/sys/a").is_none());
        assert!(fs.read("/sys/../sys/a/f").is_none());
        assert!(fs.read("/loop1").is_none());
        assert!(fs.exists("/loop1"));
        assert_eq!(fs.read("/big").unwrap().len(), MAX_FILE_SIZE);
        assert_eq!(fs.list("/sys").unwrap(), vec!["a"]);
        assert_eq!(fs.read_prefix("/sys/a/f", 2).unwrap(), b"he");
        assert_eq!(fs.read_prefix("/big", 5000).unwrap().len(), 5000);
        // A FIFO without writer must not block.
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        if made {
            assert!(fs.read("/fifo").unwrap_or_default().is_empty());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
