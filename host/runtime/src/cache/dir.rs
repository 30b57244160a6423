//! The compiled cache's folder, opened once and then used only through
//! its descriptor.
//!
//! Checks made on a path and then a second open of that path leave a gap
//! in which anyone who can rename entries in a parent folder swaps the
//! checked folder for their own.  So the folder is reached from `/` one
//! component at a time (`openat` with `O_NOFOLLOW|O_DIRECTORY`), each
//! folder's owner and mode are checked on the descriptor (`fstat`) as ssh
//! checks the folders above `authorized_keys`, and every later read,
//! write and rename is relative to the cache folder's descriptor, with
//! `O_NOFOLLOW`, new files created with `O_CREAT|O_EXCL`.

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::CacheError;

/// Largest cache file read (compiled components are a few MiB).
const MAX_FILE_BYTES: u64 = 512 << 20;

/// The flags that open a folder to reach entries in it: `O_PATH` where
/// there is one, so that a folder the user may search but not list (mode
/// 0711) can still be passed through.
fn walk_flags() -> OFlags {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let base = OFlags::PATH;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let base = OFlags::RDONLY;
    base | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// The effective user id of this process.
fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The cache folder, open, checked private to the user.
#[derive(Debug)]
pub(crate) struct CacheDir {
    fd: OwnedFd,
    /// Where it is, for messages.
    path: PathBuf,
}

/// Why a folder above the cache, or the cache itself, may not be used.
fn check_ancestor(st: &rfs::Stat, shown: &Path) -> Result<(), CacheError> {
    let uid = st.st_uid;
    let mode = st.st_mode;
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return Err(CacheError::NotFolder(shown.to_path_buf()));
    }
    if uid != 0 && uid != euid() {
        return Err(CacheError::AncestorOwner {
            path: shown.to_path_buf(),
            uid,
        });
    }
    // Others may rename entries of a group- or world-writable folder,
    // unless it is sticky (then only their own).
    if mode & 0o022 != 0 && mode & 0o1000 == 0 {
        return Err(CacheError::SharedAncestor {
            path: shown.to_path_buf(),
            mode: mode & 0o7777,
        });
    }
    Ok(())
}

/// Why the cache folder itself may not be used.
fn check_cache(st: &rfs::Stat, shown: &Path) -> Result<(), CacheError> {
    let mode = st.st_mode;
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return Err(CacheError::NotFolder(shown.to_path_buf()));
    }
    if st.st_uid != euid() {
        return Err(CacheError::CacheOwner {
            path: shown.to_path_buf(),
            uid: st.st_uid,
        });
    }
    if mode & 0o022 != 0 {
        return Err(CacheError::SharedCache {
            path: shown.to_path_buf(),
            mode: mode & 0o7777,
        });
    }
    Ok(())
}

/// The last component of `path` as written: refused when it is empty (a
/// trailing `/`), `.` or `..`, which name another folder than the one
/// the user seems to give.
fn last_name(path: &Path) -> Result<&std::ffi::OsStr, CacheError> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    let last = bytes.rsplit(|b| *b == b'/').next().unwrap_or(&[]);
    match last {
        b"" | b"." | b".." => Err(CacheError::NoFolderName(path.to_path_buf())),
        _ => Ok(std::ffi::OsStr::from_bytes(last)),
    }
}

impl CacheDir {
    /// Opens the cache folder `path`, creating it (mode 0700) and any
    /// missing folder above it, and checks it and every folder above it
    /// up to `/`.  Symbolic links above the last component are resolved
    /// first, and the folders they lead to are the ones checked; the
    /// cache folder itself must not be a link.
    pub(crate) fn open(path: &Path) -> Result<CacheDir, CacheError> {
        let name = last_name(path)?;
        if path.components().any(|c| c == Component::ParentDir) {
            return Err(CacheError::ParentDir(path.to_path_buf()));
        }
        let abs = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir()
                .map_err(|source| CacheError::NoCurrentDir {
                    path: path.to_path_buf(),
                    source,
                })?
                .join(path)
        };
        let parent = abs.parent().unwrap_or(Path::new("/"));
        // The longest part of the parent that exists, with its links
        // resolved; the rest is created below.
        let mut existing = parent.to_path_buf();
        let mut missing = Vec::new();
        let resolved = loop {
            match std::fs::canonicalize(&existing) {
                Ok(r) => break r,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    match existing.file_name() {
                        Some(n) => missing.push(n.to_owned()),
                        None => {
                            return Err(CacheError::Resolve {
                                path: parent.to_path_buf(),
                                source: e,
                            });
                        }
                    }
                    existing.pop();
                }
                Err(e) => {
                    return Err(CacheError::Resolve {
                        path: existing,
                        source: e,
                    });
                }
            }
        };
        let mut names: Vec<std::ffi::OsString> = resolved
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_owned()),
                _ => None,
            })
            .collect();
        names.extend(missing.into_iter().rev());
        names.push(name.to_owned());

        let mut shown = PathBuf::from("/");
        let mut fd = rfs::openat(rfs::CWD, "/", walk_flags(), Mode::empty())
            .map_err(|e| CacheError::sys("open", &shown, e))?;
        let st = rfs::fstat(&fd).map_err(|e| CacheError::sys("stat", &shown, e))?;
        check_ancestor(&st, &shown)?;
        let last = names.len() - 1;
        for (i, n) in names.iter().enumerate() {
            shown.push(n);
            fd = open_or_create(&fd, n, &shown)?;
            let st = rfs::fstat(&fd).map_err(|e| CacheError::sys("stat", &shown, e))?;
            if i == last {
                check_cache(&st, &shown)?;
            } else {
                check_ancestor(&st, &shown)?;
            }
        }
        Ok(CacheDir { fd, path: shown })
    }

    /// Checks again that the folder is private (its mode or owner may
    /// have changed since it was opened).
    pub(crate) fn still_private(&self) -> Result<(), CacheError> {
        let st = rfs::fstat(&self.fd).map_err(|e| CacheError::sys("stat", &self.path, e))?;
        check_cache(&st, &self.path)
    }

    /// Where the folder was when it was opened.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The contents of the regular file `name` of the folder, if there is
    /// one and it belongs to this user; `Ok(None)` when it is missing.
    pub(crate) fn read(&self, name: &str) -> io::Result<Option<Vec<u8>>> {
        self.read_checked(name, false)
    }

    /// As [`CacheDir::read`], for a file that only its owner may read or
    /// write (mode 0600 or narrower).
    pub(crate) fn read_private(&self, name: &str) -> io::Result<Option<Vec<u8>>> {
        self.read_checked(name, true)
    }

    fn read_checked(&self, name: &str, private: bool) -> io::Result<Option<Vec<u8>>> {
        // O_NONBLOCK: a FIFO planted here would otherwise block the open.
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
        let fd = match rfs::openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let st = rfs::fstat(&fd)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile || st.st_uid != euid() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{name} is not a regular file of this user"),
            ));
        }
        if private && st.st_mode as u32 & 0o077 != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{name} may be read by others (mode {:o})",
                    st.st_mode as u32 & 0o7777
                ),
            ));
        }
        let size = u64::try_from(st.st_size).unwrap_or(0);
        if size > MAX_FILE_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{name} is larger than {MAX_FILE_BYTES} bytes"),
            ));
        }
        let mut bytes = Vec::with_capacity(size as usize);
        std::fs::File::from(fd)
            .take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)?;
        Ok(Some(bytes))
    }

    /// Creates the file `name` (mode 0600) holding `data`, failing if
    /// anything (a file, a link) is already there.
    pub(crate) fn create_new(&self, name: &str, data: &[u8]) -> io::Result<()> {
        let flags = OFlags::WRONLY
            | OFlags::CREATE
            | OFlags::EXCL
            | OFlags::NOFOLLOW
            | OFlags::CLOEXEC
            | OFlags::NOCTTY;
        let fd = rfs::openat(&self.fd, name, flags, Mode::from_raw_mode(0o600))?;
        let mut f = std::fs::File::from(fd);
        let written = f.write_all(data).and_then(|()| f.sync_all());
        if written.is_err() {
            let _ = self.remove(name);
        }
        written
    }

    /// Replaces the file `name` with one holding `data`, through a new
    /// temporary file and a rename, so that readers never see half a file.
    pub(crate) fn replace(&self, name: &str, data: &[u8]) -> io::Result<()> {
        self.replace_through(name, &temporary_name(name), data)
    }

    /// As [`CacheDir::replace`], through the temporary file `tmp`.
    pub(crate) fn replace_through(&self, name: &str, tmp: &str, data: &[u8]) -> io::Result<()> {
        self.create_new(tmp, data)?;
        rfs::renameat(&self.fd, tmp, &self.fd, name).map_err(|e| {
            let _ = self.remove(tmp);
            io::Error::from(e)
        })
    }

    /// Makes `name` a second name of the file `existing`, failing if
    /// `name` exists (so that the first of two racing writers wins).
    pub(crate) fn link_new(&self, existing: &str, name: &str) -> io::Result<()> {
        rfs::linkat(&self.fd, existing, &self.fd, name, AtFlags::empty()).map_err(Into::into)
    }

    /// Removes the file `name` (a link itself, never what it points to).
    pub(crate) fn remove(&self, name: &str) -> io::Result<()> {
        rfs::unlinkat(&self.fd, name, AtFlags::empty()).map_err(Into::into)
    }
}

/// A temporary name beside `name` that no other writer picks.
pub(crate) fn temporary_name(name: &str) -> String {
    let mut r = [0u8; 8];
    // Without random numbers, the process id and the time still differ
    // between writers; O_EXCL refuses any clash.
    let salt = match getrandom::fill(&mut r) {
        Ok(()) => u64::from_le_bytes(r),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    };
    format!(".{name}.{}-{salt:016x}.tmp", std::process::id())
}

/// Opens the folder `name` in `dir` without following a link, creating
/// it (mode 0700) when it is missing.
fn open_or_create(
    dir: &OwnedFd,
    name: &std::ffi::OsStr,
    shown: &Path,
) -> Result<OwnedFd, CacheError> {
    let open = || rfs::openat(dir.as_fd(), name, walk_flags(), Mode::empty());
    let fd = match open() {
        Err(Errno::NOENT) => {
            match rfs::mkdirat(dir.as_fd(), name, Mode::from_raw_mode(0o700)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(CacheError::sys("create", shown, e)),
            }
            open()
        }
        r => r,
    };
    fd.map_err(|e| match e {
        Errno::NOTDIR | Errno::LOOP => CacheError::LinkOrNotFolder(shown.to_path_buf()),
        e => CacheError::sys("open", shown, e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    /// A fresh folder under the system's temporary folder (root's, mode
    /// 1777: an acceptable parent).
    pub(crate) fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("wloc-cachedir-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
        d
    }

    fn chmod(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    fn is_root() -> bool {
        euid() == 0
    }

    #[test]
    fn creates_a_private_folder_and_its_missing_parents() {
        let s = scratch("create");
        let p = s.join("a/b/cache");
        let d = CacheDir::open(&p).unwrap();
        assert_eq!(d.path(), std::fs::canonicalize(&p).unwrap());
        let mode = std::fs::metadata(&p).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "mode {mode:o}");
        d.replace("x", b"hello").unwrap();
        assert_eq!(d.read("x").unwrap().unwrap(), b"hello");
        assert_eq!(d.read("missing").unwrap(), None);
        std::fs::remove_dir_all(&s).unwrap();
    }

    #[test]
    fn refuses_a_last_component_that_is_not_a_name() {
        let s = scratch("names");
        for bad in ["cache/", "cache/.", "cache/..", "cache//"] {
            let p = PathBuf::from(format!("{}/{bad}", s.display()));
            let e = CacheDir::open(&p).unwrap_err().to_string();
            assert!(e.contains("does not end with a folder name"), "{bad}: {e}");
        }
        let e = CacheDir::open(&s.join("x/../cache"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("'..'"), "{e}");
        std::fs::remove_dir_all(&s).unwrap();
    }

    #[test]
    fn refuses_a_cache_folder_that_is_a_link_or_shared() {
        let s = scratch("link");
        let real = s.join("real");
        std::fs::create_dir(&real).unwrap();
        chmod(&real, 0o700);
        symlink(&real, s.join("link")).unwrap();
        let e = CacheDir::open(&s.join("link")).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        // A link above the cache folder is resolved, and what it leads to
        // is checked.
        symlink(&s, s.join("up")).unwrap();
        CacheDir::open(&s.join("up/real")).unwrap();

        chmod(&real, 0o777);
        let e = CacheDir::open(&real).unwrap_err().to_string();
        assert!(e.contains("writable by others"), "{e}");
        chmod(&real, 0o755);
        let d = CacheDir::open(&real).unwrap();
        // A change after opening is seen.
        chmod(&real, 0o770);
        assert!(d.still_private().is_err());
        chmod(&real, 0o700);
        d.still_private().unwrap();
        std::fs::remove_dir_all(&s).unwrap();
    }

    #[test]
    fn refuses_a_parent_others_may_write_unless_sticky() {
        let s = scratch("parent");
        let shared = s.join("shared");
        std::fs::create_dir(&shared).unwrap();
        chmod(&shared, 0o777);
        let e = CacheDir::open(&shared.join("cache"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("writable by others") && e.contains("not sticky"),
            "{e}"
        );
        // Nothing was created in it.
        assert!(!shared.join("cache").exists());
        chmod(&shared, 0o775);
        assert!(CacheDir::open(&shared.join("cache")).is_err());
        chmod(&shared, 0o1777);
        CacheDir::open(&shared.join("cache")).unwrap();
        // Further up counts too.
        let deep = shared.join("cache/deeper/still");
        chmod(&shared, 0o777);
        assert!(CacheDir::open(&deep).is_err());
        std::fs::remove_dir_all(&s).unwrap();
    }

    #[test]
    fn refuses_folders_of_another_user() {
        if !is_root() {
            eprintln!("skipped: changing a folder's owner needs root");
            return;
        }
        let s = scratch("owner");
        let theirs = s.join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        chmod(&theirs, 0o755);
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        // As a parent: another user may rename the cache folder.
        let e = CacheDir::open(&theirs.join("cache"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("belongs to user 65534"), "{e}");
        // As the cache folder itself.
        let e = CacheDir::open(&theirs).unwrap_err().to_string();
        assert!(e.contains("not to this user"), "{e}");
        std::fs::remove_dir_all(&s).unwrap();
    }

    #[test]
    fn never_follows_a_link_planted_at_a_temporary_name() {
        let s = scratch("planted");
        let d = CacheDir::open(&s.join("cache")).unwrap();
        let victim = s.join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        symlink(&victim, s.join("cache/.tmp")).unwrap();
        assert!(d.replace_through("art", ".tmp", b"overwritten").is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(d.read("art").unwrap(), None);
        // A link at the final name is replaced, not followed.
        symlink(&victim, s.join("cache/art")).unwrap();
        assert!(d.read("art").is_err(), "a link is not read");
        d.replace("art", b"new").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(d.read("art").unwrap().unwrap(), b"new");
        // A FIFO does not block a read.
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            s.join("cache/fifo").as_path(),
            Mode::from_raw_mode(0o600),
        )
        .unwrap();
        assert!(d.read("fifo").is_err());
        std::fs::remove_dir_all(&s).unwrap();
    }

    #[test]
    fn temporary_names_differ() {
        assert_ne!(temporary_name("a"), temporary_name("a"));
    }
}
