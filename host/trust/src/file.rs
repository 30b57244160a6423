//! Reading a file that anyone may have put where wloc looks: a topology
//! image or XML document named by `-i`, `WLOC_IMAGE` or `HWLOC_XMLFILE`,
//! which may be a FIFO (opening it for reading waits for a writer), a
//! device (`/dev/zero` never ends) or a file larger than wloc should hold.
//!
//! The name is opened as a place only (`O_PATH`: a device's driver never
//! sees it), looked at (`fstat`), and opened for reading through that
//! place (`O_NONBLOCK|O_CLOEXEC|O_NOCTTY`) only if it is a regular file (a
//! memfd is one) of at most the size the caller allows; then at most the
//! size `fstat` saw is read, so a file that grows meanwhile is not
//! followed.  Anything else is refused with an error naming the file.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{self as rfs, FileType, Mode, OFlags};

/// The most wloc reads of a topology file (image or XML document) that
/// anyone may have made: 256 MiB.  The topology of the largest machines
/// takes a few megabytes either way.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Why a file was not read.
#[derive(Debug)]
pub enum ReadError {
    /// Opening, looking at or reading the file failed.
    Io {
        /// The file, as the caller named it.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The file is not a regular file.
    NotRegular {
        /// The file, as the caller named it.
        path: PathBuf,
        /// What it is instead ("a FIFO", "a character device"...).
        kind: &'static str,
    },
    /// The file is larger than the caller allows.
    TooLarge {
        /// The file, as the caller named it.
        path: PathBuf,
        /// Its size, as `fstat` tells it (for a stream, what was read of
        /// it when it passed `max`).
        size: u64,
        /// The most the caller allows.
        max: u64,
    },
}

impl ReadError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ReadError::Io { path, .. }
            | ReadError::NotRegular { path, .. }
            | ReadError::TooLarge { path, .. } => path,
        }
    }

    /// Whether the file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }

    /// The error as an [`io::Error`] that says what was wrong without
    /// naming the file (for callers whose errors name it themselves).
    pub fn into_io(self) -> io::Error {
        match self {
            ReadError::Io { source, .. } => source,
            e => io::Error::new(io::ErrorKind::InvalidData, e.reason()),
        }
    }

    /// What was wrong, without the file's name.
    pub fn reason(&self) -> String {
        match self {
            ReadError::Io { source, .. } => source.to_string(),
            ReadError::NotRegular { kind, .. } => {
                format!("not a regular file ({kind}); only regular files are read")
            }
            ReadError::TooLarge { max, .. } => {
                format!("larger than {max} bytes, the most wloc reads of such a file")
            }
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path().display(), self.reason())
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// What a file type is, in words.
fn kind_of(ft: FileType) -> &'static str {
    match ft {
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        _ => "of an unknown type",
    }
}

/// The size of the open file `fd` if it is a regular file of at most
/// `max` bytes (`path` names it in errors).
pub fn check_regular(fd: impl AsFd, path: &Path, max: u64) -> Result<u64, ReadError> {
    let st = rfs::fstat(fd).map_err(|e| ReadError::Io {
        path: path.to_path_buf(),
        source: e.into(),
    })?;
    let ft = FileType::from_raw_mode(st.st_mode);
    if ft != FileType::RegularFile {
        return Err(ReadError::NotRegular {
            path: path.to_path_buf(),
            kind: kind_of(ft),
        });
    }
    let size = u64::try_from(st.st_size).unwrap_or(0);
    if size > max {
        return Err(ReadError::TooLarge {
            path: path.to_path_buf(),
            size,
            max,
        });
    }
    Ok(size)
}

/// Opens `path` for reading without blocking (a link is followed: the
/// caller names the file) and returns it with its size, if it is a
/// regular file of at most `max` bytes.  The descriptor is close-on-exec
/// and, once checked, blocking again.
pub fn open_regular(path: &Path, max: u64) -> Result<(File, u64), ReadError> {
    open_regular_with(path, max, OFlags::empty())
}

/// [`open_regular`], but a link as the last name is refused, not
/// followed (a file in a folder someone else prepared).
pub fn open_regular_no_link(path: &Path, max: u64) -> Result<(File, u64), ReadError> {
    open_regular_with(path, max, OFlags::NOFOLLOW)
}

/// [`read_regular_to_end`] of [`open_regular_no_link`].
pub fn read_regular_no_link(path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let (f, _) = open_regular_no_link(path, max)?;
    read_stream(f, path, max)
}

/// The folder `base/names[0]/names[1]/...`, opened as a place (`O_PATH`):
/// `base` is followed as its caller named it, and each name below it must
/// be a folder, not a link, so that a folder someone else prepared (an
/// OCI layout on a shared disk) cannot send reads or writes outside it by
/// linking a subfolder elsewhere.  Its entries are reached through
/// [`fd_path`] of the descriptor, which no later rename redirects.
pub fn open_folder_below(base: &Path, names: &[&str]) -> Result<OwnedFd, ReadError> {
    let io = |path: &Path, e: rustix::io::Errno| ReadError::Io {
        path: path.to_path_buf(),
        source: e.into(),
    };
    let place = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut fd = rfs::open(base, place, Mode::empty()).map_err(|e| io(base, e))?;
    let mut shown = base.to_path_buf();
    for name in names {
        shown.push(name);
        fd = match rfs::openat(&fd, *name, place | OFlags::NOFOLLOW, Mode::empty()) {
            Ok(next) => next,
            Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {
                let kind = rfs::statat(&fd, *name, rfs::AtFlags::SYMLINK_NOFOLLOW)
                    .map(|st| kind_of(FileType::from_raw_mode(st.st_mode)))
                    .unwrap_or("not a folder");
                return Err(ReadError::NotRegular { path: shown, kind });
            }
            Err(e) => return Err(io(&shown, e)),
        };
    }
    Ok(fd)
}

/// The name under which an open folder's entries are reached whatever
/// is renamed meanwhile: `/proc/self/fd/N`.
pub fn fd_path(fd: &OwnedFd) -> PathBuf {
    PathBuf::from(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(fd)
    ))
}

fn open_regular_with(path: &Path, max: u64, extra: OFlags) -> Result<(File, u64), ReadError> {
    let io = |e: rustix::io::Errno| ReadError::Io {
        path: path.to_path_buf(),
        source: e.into(),
    };
    // A device is never opened, not even to be refused: opening one can
    // act (a tape rewinds, a watchdog starts). The name is first opened
    // as a place only (O_PATH: no driver sees it), looked at, and a
    // regular file is then opened through that very place, so no rename
    // in between swaps what is read.
    let place =
        rfs::open(path, OFlags::PATH | OFlags::CLOEXEC | extra, Mode::empty()).map_err(io)?;
    check_regular(&place, path, max)?;
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let through = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&place));
    let fd: OwnedFd = match rfs::open(&through, flags, Mode::empty()) {
        Ok(fd) => fd,
        // Without /proc the name is opened again, and checked again.
        Err(rustix::io::Errno::NOENT) => {
            rfs::open(path, flags | extra, Mode::empty()).map_err(io)?
        }
        Err(e) => return Err(io(e)),
    };
    let size = check_regular(&fd, path, max)?;
    // Reads of a regular file do not block; clear the flag all the same,
    // for whoever the descriptor is handed to.
    let _ = rfs::fcntl_setfl(&fd, OFlags::empty());
    Ok((File::from(fd), size))
}

/// Reads at most `len` bytes of `f` from where it stands (fewer when the
/// file ends first): the size `fstat` saw, so that a file growing while
/// it is read is not followed.
pub fn read_up_to(f: &File, len: u64, path: &Path) -> Result<Vec<u8>, ReadError> {
    let cap = usize::try_from(len).unwrap_or(usize::MAX);
    let mut buf = Vec::with_capacity(cap);
    let r: &File = f;
    r.take(len)
        .read_to_end(&mut buf)
        .map_err(|e| ReadError::Io {
            path: path.to_path_buf(),
            source: e,
        })?;
    Ok(buf)
}

/// The bytes of the regular file `path`, of at most `max` bytes, read
/// as [`open_regular`] opens it and at most the size it had then.
pub fn read_regular(path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let (f, size) = open_regular(path, max)?;
    read_up_to(&f, size, path)
}

/// The bytes of the regular file `path`, of at most `max` bytes, read as
/// [`open_regular`] opens it and to its end, not to the size it had when
/// opened: files of `/proc` (`/proc/cpuinfo`) say size 0.
pub fn read_regular_to_end(path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let (f, _) = open_regular(path, max)?;
    read_stream(f, path, max)
}

/// Reads a stream (standard input: a pipe, a terminal, a socket, or a
/// file redirected to it) to its end, refusing it once it passes `max`
/// bytes: at most `max` bytes and one read's chunk (64 KiB) are held.
pub fn read_stream(mut r: impl Read, path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let limit = usize::try_from(max).unwrap_or(usize::MAX);
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = match r.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(ReadError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        if n > limit - buf.len() {
            return Err(ReadError::TooLarge {
                path: path.to_path_buf(),
                size: (buf.len() + n) as u64,
                max,
            });
        }
        // Grow by doubling, never past `max`.
        if buf.capacity() - buf.len() < n {
            let grow = buf.capacity().max(n).min(limit - buf.len());
            buf.reserve_exact(grow);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("wloc-trust-file-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn regular_file_is_read_up_to_its_size() {
        let d = tmp("regular");
        let p = d.join("f");
        std::fs::write(&p, b"hello").unwrap();
        assert_eq!(read_regular(&p, 5).unwrap(), b"hello");
        let e = read_regular(&p, 4).unwrap_err();
        assert!(
            matches!(
                e,
                ReadError::TooLarge {
                    size: 5,
                    max: 4,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().starts_with(&p.display().to_string()), "{e}");
        let e = read_regular(&d.join("missing"), 4).unwrap_err();
        assert!(e.is_not_found(), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn devices_and_fifos_are_refused_at_once() {
        let start = Instant::now();
        let e = read_regular(Path::new("/dev/zero"), MAX_INPUT_BYTES).unwrap_err();
        assert!(
            matches!(
                e,
                ReadError::NotRegular {
                    kind: "a character device",
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("/dev/zero"), "{e}");
        let d = tmp("fifo");
        let fifo = d.join("fifo");
        rfs::mknodat(
            rfs::CWD,
            &fifo,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let e = read_regular(&fifo, MAX_INPUT_BYTES).unwrap_err();
        assert!(
            matches!(e, ReadError::NotRegular { kind: "a FIFO", .. }),
            "{e}"
        );
        let e = read_regular(&d, MAX_INPUT_BYTES).unwrap_err();
        assert!(
            matches!(
                e,
                ReadError::NotRegular {
                    kind: "a directory",
                    ..
                }
            ),
            "{e}"
        );
        assert!(start.elapsed() < Duration::from_secs(5));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn streams_are_bounded() {
        let zeros = File::open("/dev/zero").unwrap();
        let e = read_stream(zeros, Path::new("-"), 1000).unwrap_err();
        assert!(matches!(e, ReadError::TooLarge { max: 1000, .. }), "{e}");
        assert_eq!(read_stream(&b"abc"[..], Path::new("-"), 3).unwrap(), b"abc");
    }
}
