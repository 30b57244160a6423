//! Whose files wloc trusts: the one ownership check shared by the admin
//! policy, the folders of the component search path and the compiled
//! cache.
//!
//! A file that decides what runs (the policy) or what is offered to run
//! (a component folder) is trusted only if it and every folder above it
//! belong to root or to the effective user, and no one else can write
//! them (a folder writable by others is accepted above the file only when
//! it is sticky, as `/tmp`).  Otherwise an environment kept by `sudo -E`
//! would let another user choose root's policy.  Paths are walked from
//! `/` one component at a time (`openat` with `O_NOFOLLOW`) and each
//! folder is checked on its descriptor (`fstat`), as ssh checks the
//! folders above `authorized_keys`, so that no rename between check and
//! use swaps what was checked.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{self as rfs, FileType, Mode, OFlags};

/// The flags that open a folder to reach entries in it: `O_PATH` where
/// there is one, so that a folder the user may search but not list (mode
/// 0711) can still be passed through.
pub fn walk_flags() -> OFlags {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let base = OFlags::PATH;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let base = OFlags::RDONLY;
    base | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// The effective user id of this process.
pub fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Why a folder met on the way to a trusted file may not be passed
/// through: not a folder, owned by another user than root or this one,
/// or writable by others without being sticky.
pub fn check_ancestor(st: &rfs::Stat, shown: &Path) -> Result<(), String> {
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return Err(format!("{} is not a folder", shown.display()));
    }
    check_owner(st, shown)?;
    let mode = st.st_mode;
    // Others may rename entries of a group- or world-writable folder,
    // unless it is sticky (then only their own).
    if mode & 0o022 != 0 && mode & 0o1000 == 0 {
        return Err(format!(
            "{} is writable by others (mode {:o}) and not sticky",
            shown.display(),
            mode & 0o7777
        ));
    }
    Ok(())
}

/// Why a trusted file or folder itself may not be used: owned by another
/// user than root or this one, or writable by others (sticky or not: a
/// sticky folder still lets others add their own entries).
pub fn check_trusted(st: &rfs::Stat, shown: &Path) -> Result<(), String> {
    check_owner(st, shown)?;
    let mode = st.st_mode;
    if mode & 0o022 != 0 {
        return Err(format!(
            "{} is writable by others (mode {:o})",
            shown.display(),
            mode & 0o7777
        ));
    }
    Ok(())
}

fn check_owner(st: &rfs::Stat, shown: &Path) -> Result<(), String> {
    let uid = st.st_uid;
    if uid != 0 && uid != euid() {
        return Err(format!(
            "{} belongs to user {uid}, not to this user or root",
            shown.display()
        ));
    }
    Ok(())
}

/// Opens the folder holding `path` (its last component excluded) from
/// `/`, checking every folder on the way with [`check_ancestor`];
/// symbolic links above the last component are resolved first and the
/// folders they lead to are the ones checked.  Returns the parent's
/// descriptor, the last component and the path as walked, for messages.
fn open_parent(path: &Path) -> Result<(OwnedFd, std::ffi::OsString, PathBuf), String> {
    let name = match path.components().next_back() {
        Some(Component::Normal(n)) => n.to_owned(),
        _ => return Err(format!("{} does not end with a file name", path.display())),
    };
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| format!("no current folder to find {}: {e}", path.display()))?
            .join(path)
    };
    let parent = abs.parent().unwrap_or(Path::new("/"));
    let resolved = std::fs::canonicalize(parent)
        .map_err(|e| format!("cannot resolve {}: {e}", parent.display()))?;
    let mut shown = PathBuf::from("/");
    let mut fd = rfs::openat(rfs::CWD, "/", walk_flags(), Mode::empty())
        .map_err(|e| format!("cannot open /: {e}"))?;
    let st = rfs::fstat(&fd).map_err(|e| format!("cannot stat /: {e}"))?;
    check_ancestor(&st, &shown)?;
    for c in resolved.components() {
        let Component::Normal(n) = c else { continue };
        shown.push(n);
        fd = rfs::openat(&fd, n, walk_flags(), Mode::empty())
            .map_err(|e| format!("cannot open {}: {e}", shown.display()))?;
        let st = rfs::fstat(&fd).map_err(|e| format!("cannot stat {}: {e}", shown.display()))?;
        check_ancestor(&st, &shown)?;
    }
    shown.push(&name);
    Ok((fd, name, shown))
}

/// Why opening a trusted path failed.
#[derive(Debug)]
pub enum OpenError {
    /// The file (or a folder above it) does not exist.
    Missing(io::Error),
    /// It exists but may not be trusted, or cannot be opened: the message
    /// names the file or folder and why.
    Refused(String),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Missing(e) => write!(f, "{e}"),
            OpenError::Refused(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for OpenError {}

/// Opens the regular file `path` for reading, refusing it unless it and
/// every folder above it pass the ownership check (see the module
/// documentation).  The file itself must not be a symbolic link.
pub fn open_trusted_file(path: &Path) -> Result<File, OpenError> {
    let (dir, name, shown) = open_parent(path).map_err(|m| {
        if !path.exists() {
            OpenError::Missing(rustix::io::Errno::NOENT.into())
        } else {
            OpenError::Refused(m)
        }
    })?;
    // Opened as a place first (O_PATH: a device's driver never sees it, a
    // FIFO does not block), looked at, and read only through that place.
    let place = rfs::openat(
        &dir,
        &name,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| {
        if e == rustix::io::Errno::NOENT {
            OpenError::Missing(e.into())
        } else {
            OpenError::Refused(format!("cannot open {}: {e}", shown.display()))
        }
    })?;
    let st = rfs::fstat(&place)
        .map_err(|e| OpenError::Refused(format!("cannot stat {}: {e}", shown.display())))?;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => {}
        FileType::Symlink => {
            return Err(OpenError::Refused(format!(
                "{} is a symbolic link",
                shown.display()
            )));
        }
        _ => {
            return Err(OpenError::Refused(format!(
                "{} is not a regular file",
                shown.display()
            )));
        }
    }
    check_trusted(&st, &shown).map_err(OpenError::Refused)?;
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let through = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&place));
    let fd = match rfs::open(&through, flags, Mode::empty()) {
        Ok(fd) => fd,
        // Without /proc: by name again, not following a link, and checked
        // to be the same file.
        Err(rustix::io::Errno::NOENT) => {
            let fd = rfs::openat(&dir, &name, flags | OFlags::NOFOLLOW, Mode::empty())
                .map_err(|e| OpenError::Refused(format!("cannot open {}: {e}", shown.display())))?;
            let again = rfs::fstat(&fd)
                .map_err(|e| OpenError::Refused(format!("cannot stat {}: {e}", shown.display())))?;
            if (again.st_dev, again.st_ino) != (st.st_dev, st.st_ino) {
                return Err(OpenError::Refused(format!(
                    "{} was replaced while it was being opened",
                    shown.display()
                )));
            }
            fd
        }
        Err(e) => {
            return Err(OpenError::Refused(format!(
                "cannot open {}: {e}",
                shown.display()
            )));
        }
    };
    // Reads of a regular file do not block; clear the flag all the same.
    let _ = rfs::fcntl_setfl(&fd, OFlags::empty());
    Ok(File::from(fd))
}

/// Opens the folder `path` (for listing), refusing it unless it and
/// every folder above it pass the ownership check; the folder itself
/// must not be writable by others even when sticky, since others could
/// then add entries to it.  It must not be a symbolic link.
pub fn open_trusted_dir(path: &Path) -> Result<OwnedFd, OpenError> {
    let (dir, name, shown) = open_parent(path).map_err(|m| {
        if !path.exists() {
            OpenError::Missing(rustix::io::Errno::NOENT.into())
        } else {
            OpenError::Refused(m)
        }
    })?;
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rfs::openat(&dir, &name, flags, Mode::empty()).map_err(|e| {
        if e == rustix::io::Errno::NOENT {
            OpenError::Missing(e.into())
        } else {
            OpenError::Refused(format!("cannot open {}: {e}", shown.display()))
        }
    })?;
    let st = rfs::fstat(&fd)
        .map_err(|e| OpenError::Refused(format!("cannot stat {}: {e}", shown.display())))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return Err(OpenError::Refused(format!(
            "{} is not a folder",
            shown.display()
        )));
    }
    check_trusted(&st, &shown).map_err(OpenError::Refused)?;
    Ok(fd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A fresh folder under the temporary folder, mode 0700, removed on
    /// drop.
    struct Tmp(PathBuf);
    impl Tmp {
        fn new(tag: &str) -> Tmp {
            let p = std::env::temp_dir().join(format!(
                "wloc-owner-{tag}-{}-{}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or(0)
            ));
            std::fs::create_dir(&p).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700)).unwrap();
            Tmp(p)
        }
    }
    impl Drop for Tmp {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn write(p: &Path, mode: u32) {
        std::fs::write(p, b"x").unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    fn refused(r: Result<File, OpenError>) -> String {
        match r {
            Err(OpenError::Refused(m)) => m,
            Err(e) => panic!("expected a refusal, got {e:?}"),
            Ok(_) => panic!("expected a refusal, the file was accepted"),
        }
    }

    #[test]
    fn own_private_file_is_accepted() {
        let t = Tmp::new("ok");
        let f = t.0.join("policy.toml");
        write(&f, 0o644);
        let mut s = String::new();
        io::Read::read_to_string(&mut open_trusted_file(&f).unwrap(), &mut s).unwrap();
        assert_eq!(s, "x");
    }

    #[test]
    fn missing_file_is_missing_not_refused() {
        let t = Tmp::new("missing");
        assert!(matches!(
            open_trusted_file(&t.0.join("absent.toml")),
            Err(OpenError::Missing(_))
        ));
        assert!(matches!(
            open_trusted_file(&t.0.join("no/such/absent.toml")),
            Err(OpenError::Missing(_))
        ));
    }

    #[test]
    fn file_writable_by_others_is_refused() {
        let t = Tmp::new("gw-file");
        let f = t.0.join("policy.toml");
        write(&f, 0o664);
        let m = refused(open_trusted_file(&f));
        assert!(
            m.contains("policy.toml") && m.contains("writable by others"),
            "{m}"
        );
    }

    #[test]
    fn group_writable_folder_above_is_refused() {
        let t = Tmp::new("gw-dir");
        let d = t.0.join("d");
        std::fs::create_dir(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o775)).unwrap();
        let f = d.join("policy.toml");
        write(&f, 0o644);
        let m = refused(open_trusted_file(&f));
        assert!(
            m.contains("writable by others") && m.contains("not sticky"),
            "{m}"
        );
        // A component folder writable by its group is refused as well.
        assert!(matches!(open_trusted_dir(&d), Err(OpenError::Refused(_))));
    }

    #[test]
    fn sticky_folder_above_is_accepted_but_not_as_the_folder_itself() {
        let t = Tmp::new("sticky");
        let d = t.0.join("d");
        std::fs::create_dir(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let f = d.join("policy.toml");
        write(&f, 0o600);
        assert!(open_trusted_file(&f).is_ok());
        // Others may add their own files to a sticky folder: not a
        // component folder to trust.
        assert!(matches!(open_trusted_dir(&d), Err(OpenError::Refused(_))));
        let sub = d.join("components");
        std::fs::create_dir(&sub).unwrap();
        std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(open_trusted_dir(&sub).is_ok());
    }

    #[test]
    fn symbolic_link_is_refused() {
        let t = Tmp::new("link");
        let f = t.0.join("real.toml");
        write(&f, 0o644);
        let l = t.0.join("policy.toml");
        std::os::unix::fs::symlink(&f, &l).unwrap();
        let m = refused(open_trusted_file(&l));
        assert!(m.contains("symbolic link"), "{m}");
    }

    #[test]
    fn fifo_is_refused_without_blocking() {
        let t = Tmp::new("fifo");
        let f = t.0.join("policy.toml");
        rfs::mknodat(rfs::CWD, &f, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
        let m = refused(open_trusted_file(&f));
        assert!(m.contains("not a regular file"), "{m}");
    }

    #[test]
    fn file_or_folder_of_another_user_is_refused() {
        if euid() != 0 {
            eprintln!("skipped: chown to another user needs root");
            return;
        }
        // 65534 is "nobody" on most systems; the user need not exist.
        let other = Some(rustix::fs::Uid::from_raw(65534));
        let t = Tmp::new("chown");
        let f = t.0.join("policy.toml");
        write(&f, 0o644);
        rfs::chown(&f, other, None).unwrap();
        let m = refused(open_trusted_file(&f));
        assert!(m.contains("belongs to user 65534"), "{m}");

        let d = t.0.join("d");
        std::fs::create_dir(&d).unwrap();
        let g = d.join("policy.toml");
        write(&g, 0o644);
        rfs::chown(&d, other, None).unwrap();
        let m = refused(open_trusted_file(&g));
        assert!(
            m.contains("belongs to user 65534") && m.contains("/d"),
            "{m}"
        );
        assert!(matches!(open_trusted_dir(&d), Err(OpenError::Refused(_))));
    }
}
