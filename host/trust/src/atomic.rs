//! Writing a file so that it is the old one or the complete new one, never
//! a part: the one way every wloc command writes a file it names, and the
//! lock around files several processes edit.
//!
//! [`AtomicFile`] writes into an unnamed file (`O_TMPFILE`) of the target's
//! folder, or where the filesystem has none into a hidden file with a short
//! name (`.wl` and 10 hex digits, so that a 255-byte target name still
//! works), syncs it, gives it a name and renames it over the target, then
//! syncs the folder.  A failed write removes the temporary; a killed one
//! leaves nothing (the unnamed file dies with its descriptor), but for the
//! instant between naming and renaming.  An existing target keeps its
//! permission bits; a link to a regular file is written through (the link
//! stays).  A target that is a FIFO or a character device (`/dev/stdout`,
//! `/dev/null`) is a stream: written directly, and a FIFO nobody reads is
//! refused at once instead of waiting.
//!
//! [`lock_beside`] takes an exclusive `flock` on `FILE.lock`, for a
//! read-modify-rename of `FILE` that no concurrent edit may lose.
//!
//! [`SignalCleanup`] runs a cleanup when SIGINT, SIGTERM or SIGHUP arrive
//! (for work that stages named entries, such as `gather-topology`).

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustix::fs::{self as rfs, AtFlags, CWD, FileType, Mode, OFlags, RenameFlags};
use rustix::io::Errno;

/// Why a file was not written.  Each error names the file.
#[derive(Debug)]
pub struct WriteError {
    /// The file, as the caller named it.
    pub path: PathBuf,
    /// What was being done.
    pub what: &'static str,
    /// What the system said.
    pub source: io::Error,
}

impl WriteError {
    /// The error of `what` failing on `path`, from the system's errno.
    fn of<'a>(path: &'a Path, what: &'static str) -> impl Fn(Errno) -> WriteError + 'a {
        move |e| WriteError {
            path: path.to_path_buf(),
            what,
            source: e.into(),
        }
    }
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot write '{}': {}: {}",
            self.path.display(),
            self.what,
            self.source
        )
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// What an [`AtomicFile`] writes into.
enum Temp {
    /// An `O_TMPFILE`: no name until it is complete.
    Unnamed,
    /// A hidden file of the folder, removed unless committed.
    Named(OsString),
    /// The target itself: a FIFO or character device.
    Stream,
    /// Put in place: nothing to remove.
    Done,
}

/// A file being written: [`AtomicFile::commit`] puts it in place, dropping
/// it uncommitted leaves the target as it was and no temporary behind.
pub struct AtomicFile {
    file: File,
    /// The target as the caller named it (for messages).
    shown: PathBuf,
    /// The folder of the target, and the target's name in it.
    dir: OwnedFd,
    name: OsString,
    temp: Temp,
}

/// A short name no other writer is likely to pick (creation refuses it
/// anyway if it exists): the standard library's hasher keys are random per
/// process.
fn temp_name() -> OsString {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(u64::from(std::process::id()));
    OsString::from(format!(".wl{:010x}", h.finish() & 0xff_ffff_ffff))
}

/// The folder of the link `path`, opened, if only root or this user could
/// have put the link there: the folder is theirs and no one else may
/// write it, and the link is theirs, both looked at through the folder's
/// descriptor (which the write then opens the link through), so that no
/// rename of the folder in between changes what was checked.
fn trusted_link_folder(path: &Path) -> Option<(OwnedFd, OsString)> {
    let me = rustix::process::geteuid().as_raw();
    let trusted = |uid: u32| uid == 0 || uid == me;
    let folder = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name()?.to_owned();
    let fd = rfs::open(
        folder,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let st = rfs::fstat(&fd).ok()?;
    if !trusted(st.st_uid) || st.st_mode & 0o022 != 0 {
        return None;
    }
    let link = rfs::statat(&fd, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW).ok()?;
    (FileType::from_raw_mode(link.st_mode) == FileType::Symlink && trusted(link.st_uid))
        .then_some((fd, name))
}

/// The descriptor a name of the process's own descriptors stands for:
/// `/dev/stdout` (1), `/dev/stderr` (2), `/dev/fd/N`, `/proc/self/fd/N`.
fn own_descriptor(path: &Path) -> Option<i32> {
    let s = path.to_str()?;
    match s {
        "/dev/stdout" => Some(1),
        "/dev/stderr" => Some(2),
        _ => s
            .strip_prefix("/dev/fd/")
            .or_else(|| s.strip_prefix("/proc/self/fd/"))
            .and_then(|n| n.parse::<i32>().ok())
            .filter(|n| *n >= 0),
    }
}

impl AtomicFile {
    /// Starts writing `path`; a new file gets mode 0666 less the umask.
    pub fn create(path: &Path) -> Result<AtomicFile, WriteError> {
        Self::with_mode(path, 0o666)
    }

    /// Starts writing `path`; a new file gets `mode` less the umask, an
    /// existing one keeps its permission bits.
    pub fn with_mode(path: &Path, mode: u32) -> Result<AtomicFile, WriteError> {
        let err = |what| WriteError::of(path, what);
        // What the name leads to decides how it is written.  A link to a
        // regular file is replaced by the new file, never written through:
        // a link someone planted in a folder they may write cannot send a
        // write (root's, say) to a file of their choosing.
        // The process's own descriptors (`/dev/stdout`, `/dev/fd/N`,
        // `/proc/self/fd/N`): written as they are (what the shell
        // redirected them to), never replaced: the name is the system's
        // link, and replacing it broke `/dev/stdout` for every program.
        if let Some(n) = own_descriptor(path) {
            return Self::stream_descriptor(path, n);
        }
        let real = path;
        let mut keep_mode = None;
        let link_stat = rfs::lstat(path)
            .ok()
            .filter(|l| FileType::from_raw_mode(l.st_mode) == FileType::Symlink);
        let link = link_stat.is_some();
        match rfs::stat(path) {
            Ok(st) => match FileType::from_raw_mode(st.st_mode) {
                FileType::RegularFile => {
                    // The permission bits only: a set-user-id or
                    // set-group-id bit on the old file must not pass to a
                    // file this process owns.
                    if !link {
                        keep_mode = Some(st.st_mode & 0o777);
                    }
                }
                // A FIFO or device named as the output is written to. Through
                // a link only if no one else could have put that link there
                // (`/dev/stdout` in root's `/dev`, `/proc/self/fd/1`): a link
                // found in a folder others may write may have been planted
                // to send the write to a device or FIFO of someone's
                // choosing (another user's terminal, `/dev/kmsg`), so it is
                // replaced like any other link.
                FileType::Fifo | FileType::CharacterDevice if !link => {
                    return Self::stream(path, None);
                }
                FileType::Fifo | FileType::CharacterDevice => {
                    if let Some(folder) = trusted_link_folder(path) {
                        return Self::stream(path, Some(folder));
                    }
                }
                FileType::Directory => {
                    return Err(err("it is a directory")(Errno::ISDIR));
                }
                _ => {
                    return Err(err("it is not a regular file, FIFO or device")(
                        Errno::INVAL,
                    ));
                }
            },
            Err(Errno::NOENT) => {}
            Err(e) => return Err(err("cannot look at it")(e)),
        }
        let name = real
            .file_name()
            .ok_or_else(|| err("it names no file")(Errno::INVAL))?
            .to_owned();
        let dir_path = match real.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let dir = rfs::open(
            dir_path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(err("cannot open its folder"))?;
        let create_mode = Mode::from_raw_mode(keep_mode.unwrap_or(mode) & 0o777);
        // O_TMPFILE needs /proc to be named later (linkat of /proc/self/fd).
        let unnamed = if Path::new("/proc/self/fd").is_dir() {
            rfs::openat(
                &dir,
                ".",
                OFlags::WRONLY | OFlags::TMPFILE | OFlags::CLOEXEC,
                create_mode,
            )
            .ok()
        } else {
            None
        };
        let (fd, temp) = match unnamed {
            Some(fd) => (fd, Temp::Unnamed),
            None => {
                let mut tries = 0;
                loop {
                    let t = temp_name();
                    match rfs::openat(
                        &dir,
                        t.as_os_str(),
                        OFlags::WRONLY
                            | OFlags::CREATE
                            | OFlags::EXCL
                            | OFlags::NOFOLLOW
                            | OFlags::CLOEXEC,
                        create_mode,
                    ) {
                        Ok(fd) => break (fd, Temp::Named(t)),
                        Err(Errno::EXIST) if tries < 16 => tries += 1,
                        Err(e) => return Err(err("cannot create a temporary file beside it")(e)),
                    }
                }
            }
        };
        let f = AtomicFile {
            file: File::from(fd),
            shown: path.to_path_buf(),
            dir,
            name,
            temp,
        };
        if let Some(m) = keep_mode {
            // The umask does not apply to the mode the file had.
            rfs::fchmod(&f.file, Mode::from_raw_mode(m)).map_err(err("cannot set its mode"))?;
        }
        Ok(f)
    }

    /// Starts writing a file that must not exist yet, in any form (a
    /// secret key): no FIFO, device or link is written to, and
    /// [`AtomicFile::commit_new`] puts it in place only under a free name.
    pub fn create_new(path: &Path, mode: u32) -> Result<AtomicFile, WriteError> {
        match rfs::lstat(path) {
            Err(Errno::NOENT) => Self::with_mode(path, mode),
            Ok(_) => Err(WriteError::of(path, "it exists already")(Errno::EXIST)),
            Err(e) => Err(WriteError::of(path, "cannot look at it")(e)),
        }
    }

    /// Writes directly to a FIFO or device: there is no old content to
    /// keep.  A FIFO without a reader fails at once (ENXIO).
    fn stream(path: &Path, link: Option<(OwnedFd, OsString)>) -> Result<AtomicFile, WriteError> {
        let err = |what| WriteError::of(path, what);
        let flags = OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
        let opened = match &link {
            // The trusted link, through the folder it was checked in.
            Some((folder, name)) => rfs::openat(folder, name.as_os_str(), flags, Mode::empty()),
            // Not a link when looked at: a link put there since is not followed.
            None => rfs::open(path, flags | OFlags::NOFOLLOW, Mode::empty()),
        };
        let fd = opened.map_err(|e| {
            if e == Errno::NXIO {
                err("it is a FIFO that no process reads")(e)
            } else {
                err("cannot open it")(e)
            }
        })?;
        // The name was a FIFO or device when it was looked at; what was
        // opened must still be one (opening without O_TRUNC changed
        // nothing): a regular file or a link swapped in meanwhile would
        // otherwise be written over from its start.
        let st = rfs::fstat(&fd).map_err(err("cannot look at it"))?;
        if !matches!(
            FileType::from_raw_mode(st.st_mode),
            FileType::Fifo | FileType::CharacterDevice
        ) {
            return Err(err("it was replaced while it was being opened")(
                Errno::AGAIN,
            ));
        }
        let _ = rfs::fcntl_setfl(&fd, OFlags::empty());
        Self::streaming(path, fd)
    }

    /// An [`AtomicFile`] that writes straight to the open `fd` (`path`
    /// names it in errors): nothing to rename or remove.
    fn streaming(path: &Path, fd: OwnedFd) -> Result<AtomicFile, WriteError> {
        let dir = rfs::open(".", OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
            .map_err(WriteError::of(path, "cannot open the current folder"))?;
        Ok(AtomicFile {
            file: File::from(fd),
            shown: path.to_path_buf(),
            dir,
            name: OsString::new(),
            temp: Temp::Stream,
        })
    }

    /// Writes to this process's descriptor `n`, as it is.
    fn stream_descriptor(path: &Path, n: i32) -> Result<AtomicFile, WriteError> {
        let err = |what| WriteError::of(path, what);
        // SAFETY: only duplicated (fcntl checks that `n` is open); the
        // duplicate is ours.
        let fd =
            rustix::io::fcntl_dupfd_cloexec(unsafe { std::os::fd::BorrowedFd::borrow_raw(n) }, 0)
                .map_err(err("the descriptor is not open"))?;
        Self::streaming(path, fd)
    }

    /// The file being written.
    pub fn file(&mut self) -> &mut File {
        &mut self.file
    }

    fn error(&self, what: &'static str) -> impl Fn(io::Error) -> WriteError + '_ {
        move |source| WriteError {
            path: self.shown.clone(),
            what,
            source,
        }
    }

    /// Puts the complete file in place of the target (replacing it).
    pub fn commit(self) -> Result<(), WriteError> {
        self.finish(true)
    }

    /// Puts the complete file in place only if the target does not exist
    /// (for secrets and other files never overwritten).
    pub fn commit_new(self) -> Result<(), WriteError> {
        self.finish(false)
    }

    /// [`AtomicFile::commit_new`], keeping what is needed to take the new
    /// file back ([`NewFile::remove`]) if a later step fails.
    pub fn commit_new_undoable(self) -> Result<NewFile, WriteError> {
        let st = rfs::fstat(&self.file).map_err(|e| self.error("cannot look at it")(e.into()))?;
        let dir = rustix::io::fcntl_dupfd_cloexec(&self.dir, 0)
            .map_err(|e| self.error("cannot keep its folder")(e.into()))?;
        // Held open until then, so that its inode cannot be given to
        // another file that [`NewFile::remove`] would take for it.
        let file = rustix::io::fcntl_dupfd_cloexec(&self.file, 0)
            .map_err(|e| self.error("cannot keep it open")(e.into()))?;
        let name = self.name.clone();
        self.finish(false)?;
        Ok(NewFile {
            dir,
            name,
            id: (st.st_dev, st.st_ino),
            _file: file,
        })
    }

    fn finish(mut self, replace: bool) -> Result<(), WriteError> {
        self.file.flush().map_err(self.error("write failed"))?;
        let named = match self.temp {
            Temp::Stream | Temp::Done => return Ok(()),
            Temp::Named(ref t) => {
                let t = t.clone();
                self.file.sync_all().map_err(self.error("write failed"))?;
                t
            }
            Temp::Unnamed => {
                self.file.sync_all().map_err(self.error("write failed"))?;
                let proc_path = format!("/proc/self/fd/{}", self.file.as_raw_fd());
                let mut tries = 0;
                loop {
                    let t = temp_name();
                    match rfs::linkat(
                        CWD,
                        proc_path.as_str(),
                        &self.dir,
                        t.as_os_str(),
                        AtFlags::SYMLINK_FOLLOW,
                    ) {
                        Ok(()) => {
                            self.temp = Temp::Named(t.clone());
                            break t;
                        }
                        Err(Errno::EXIST) if tries < 16 => tries += 1,
                        Err(e) => return Err(self.error("cannot name the new file")(e.into())),
                    }
                }
            }
        };
        let (dir, name) = (&self.dir, self.name.as_os_str());
        // Whether the temporary name was consumed (renamed away).
        let moved = if replace {
            rfs::renameat(dir, named.as_os_str(), dir, name).map(|()| true)
        } else {
            match rfs::renameat_with(dir, named.as_os_str(), dir, name, RenameFlags::NOREPLACE) {
                // A filesystem without RENAME_NOREPLACE: link refuses an
                // existing name; the temporary name goes on drop.
                Err(Errno::INVAL | Errno::NOSYS) => {
                    rfs::linkat(dir, named.as_os_str(), dir, name, AtFlags::empty()).map(|()| false)
                }
                r => r.map(|()| true),
            }
        };
        match moved {
            Ok(true) => self.temp = Temp::Done,
            Ok(false) => {}
            Err(e) => return Err(self.error("cannot put it in place")(e.into())),
        }
        self.sync_dir()
    }

    /// Syncs the folder, so that the rename itself survives a crash.
    fn sync_dir(&self) -> Result<(), WriteError> {
        rfs::fsync(&self.dir).map_err(|e| self.error("cannot sync its folder")(e.into()))
    }
}

/// A file [`AtomicFile::commit_new_undoable`] put in place.
pub struct NewFile {
    dir: OwnedFd,
    name: OsString,
    id: (u64, u64),
    _file: OwnedFd,
}

impl NewFile {
    /// Removes the file again, through the folder it was named in (not by
    /// path: the path may lead elsewhere by now) and only if the name still
    /// holds that very file: anything else found there is left alone.
    pub fn remove(self) {
        let same = rfs::statat(&self.dir, self.name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|st| (st.st_dev, st.st_ino) == self.id);
        if same {
            let _ = rfs::unlinkat(&self.dir, self.name.as_os_str(), AtFlags::empty());
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for AtomicFile {
    /// A temporary that was not put in place is removed.
    fn drop(&mut self) {
        if let Temp::Named(t) = &self.temp {
            let _ = rfs::unlinkat(&self.dir, t.as_os_str(), AtFlags::empty());
        }
    }
}

/// Writes `bytes` to `path` atomically ([`AtomicFile`]).
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    write_mode(path, bytes, 0o666)
}

/// Writes `bytes` to `path` atomically; a new file gets `mode` less the
/// umask.
pub fn write_mode(path: &Path, bytes: &[u8], mode: u32) -> Result<(), WriteError> {
    let mut f = AtomicFile::with_mode(path, mode)?;
    f.file.write_all(bytes).map_err(|e| WriteError {
        path: path.to_path_buf(),
        what: "write failed",
        source: e,
    })?;
    f.commit()
}

/// An exclusive lock on `FILE.lock` (see [`lock_beside`]), held until
/// dropped.  The lock file stays: removing it would let two processes
/// lock two different files of that name.
pub struct Lock {
    _file: File,
}

/// How long [`lock_beside`] waits for another holder.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Takes an exclusive lock on `FILE.lock` beside `path`, waiting for
/// other holders (up to [`LOCK_WAIT`]): every read-modify-rename of `path` done under it sees
/// the previous one's result.
pub fn lock_beside(path: &Path) -> Result<Lock, WriteError> {
    let lock = lock_path(path);
    let err = |what| WriteError::of(&lock, what);
    let fd = rfs::open(
        &lock,
        OFlags::RDONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        // Only its owner may open it: another user who can read a lock
        // file can hold its lock and stall every edit.
        Mode::from_raw_mode(0o600),
    )
    .map_err(err("cannot open the lock file"))?;
    let st = rfs::fstat(&fd).map_err(err("cannot look at the lock file"))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(err("the lock file is not a regular file")(Errno::INVAL));
    }
    // A lock file another user made (or may open) lets them hold the lock
    // and stall this user's edits: refused at once, naming it, instead of
    // waiting for them.
    if st.st_uid != rustix::process::geteuid().as_raw() || st.st_mode & 0o077 != 0 {
        return Err(err(
            "the lock file belongs to another user or others may open it (remove it)",
        )(Errno::PERM));
    }
    // Edits hold the lock for milliseconds: one held for a minute is
    // stuck or held on purpose, and the edit fails saying so rather than
    // waiting for ever.
    let deadline = std::time::Instant::now() + LOCK_WAIT;
    loop {
        match rfs::flock(&fd, rfs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => break,
            Err(Errno::INTR) => continue,
            Err(Errno::WOULDBLOCK) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(Errno::WOULDBLOCK) => {
                return Err(err("another process has held its lock for a minute")(
                    Errno::WOULDBLOCK,
                ));
            }
            Err(e) => return Err(err("cannot lock")(e)),
        }
    }
    Ok(Lock {
        _file: File::from(fd),
    })
}

/// `FILE.lock`, or where that name would pass the 255 bytes a name may
/// have, `.wlNNNNNNNNNNNNNNNN.lock` after a hash of the name (FNV-1a: the
/// same in every process).
pub fn lock_path(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or(OsStr::new("")).as_bytes();
    if name.len() + ".lock".len() <= 255 {
        let mut s = path.as_os_str().to_owned();
        s.push(".lock");
        return PathBuf::from(s);
    }
    let h = name.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    path.with_file_name(format!(".wl{h:016x}.lock"))
}

/// A cleanup run if SIGINT, SIGTERM or SIGHUP arrive while it is armed;
/// the signal then ends the process as it would have.
///
/// The signals are blocked in the calling thread (and so in threads it
/// starts after) and waited for by a thread of their own, which runs the
/// cleanup, then raises the signal again with its default action.
/// Dropping the guard disarms the cleanup; the signals keep their effect.
pub struct SignalCleanup {
    slot: Slot,
}

/// The armed cleanup, shared with the thread that waits for the signals.
type Slot = Arc<Mutex<Option<Cleanup>>>;

/// A cleanup to arm.
pub type Cleanup = Box<dyn FnOnce() + Send>;

impl SignalCleanup {
    /// Arms `cleanup`.  Call it before starting threads.
    pub fn arm(cleanup: impl FnOnce() + Send + 'static) -> SignalCleanup {
        let slot: Slot = Arc::new(Mutex::new(Some(Box::new(cleanup))));
        start_waiter(&slot);
        SignalCleanup { slot }
    }

    /// Blocks the signals, then runs `make`, which makes what is to be
    /// cleaned up and returns it with its cleanup: a signal that arrives
    /// while `make` runs waits for the cleanup, so that nothing made is
    /// left behind.
    pub fn around<T, E>(
        make: impl FnOnce() -> Result<(T, Cleanup), E>,
    ) -> Result<(SignalCleanup, T), E> {
        let slot: Slot = Arc::new(Mutex::new(None));
        // The waiter takes the lock to run the cleanup: held until set.
        let mut held = slot.lock().unwrap_or_else(|p| p.into_inner());
        start_waiter(&slot);
        let (made, cleanup) = make()?;
        *held = Some(cleanup);
        drop(held);
        Ok((SignalCleanup { slot }, made))
    }
}

/// Blocks SIGINT, SIGTERM and SIGHUP in this thread and starts the thread
/// that waits for them, runs the cleanup in `slot`, then raises the
/// signal again with its default action.
fn start_waiter(slot: &Slot) {
    // SAFETY: sigset_t is plain data, filled by sigemptyset/sigaddset
    // before use; pthread_sigmask only changes this thread's mask.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    };
    let waiter = Arc::clone(slot);
    let spawned = std::thread::Builder::new()
        .name("wloc-signals".into())
        .spawn(move || {
            let mut sig: libc::c_int = 0;
            // SAFETY: `set` is initialised and `sig` is written by
            // sigwait; the signals are blocked in this thread (it
            // inherited the mask), as sigwait requires.
            if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
                return;
            }
            let cleanup = waiter.lock().unwrap_or_else(|p| p.into_inner()).take();
            if let Some(c) = cleanup {
                c();
            }
            // SAFETY: restoring the default action, unblocking and
            // raising the signal in this thread ends the process as the
            // signal would have.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
                let mut one: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut one);
                libc::sigaddset(&mut one, sig);
                libc::pthread_sigmask(libc::SIG_UNBLOCK, &one, std::ptr::null_mut());
                libc::raise(sig);
            }
        });
    if spawned.is_err() {
        // No waiter: unblock again, so that the signals act as before.
        // SAFETY: as above, only this thread's mask changes.
        unsafe {
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }
}

impl Drop for SignalCleanup {
    fn drop(&mut self) {
        if let Ok(mut g) = self.slot.lock() {
            g.take();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("wloc-atomic-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn the_processs_own_descriptors_are_written_as_they_are() {
        use std::os::fd::AsRawFd;
        let d = tmp("ownfd");
        // A regular file behind the descriptor, as `> file` gives stdout:
        // written through it, nothing replaced.
        let f = std::fs::File::create(d.join("redirected")).unwrap();
        for name in [
            format!("/proc/self/fd/{}", f.as_raw_fd()),
            format!("/dev/fd/{}", f.as_raw_fd()),
        ] {
            write(Path::new(&name), b"through ").unwrap();
        }
        assert_eq!(
            std::fs::read(d.join("redirected")).unwrap(),
            b"through through "
        );
        assert!(std::fs::symlink_metadata("/dev/fd").is_ok());
        assert!(write(Path::new("/dev/fd/987654"), b"x").is_err());
        assert_eq!(own_descriptor(Path::new("/dev/stdout")), Some(1));
        assert_eq!(own_descriptor(Path::new("/dev/stderr")), Some(2));
        assert_eq!(own_descriptor(Path::new("/dev/fd/x")), None);
        assert_eq!(own_descriptor(Path::new("/tmp/dev/stdout")), None);
    }

    #[test]
    fn a_new_file_is_taken_back_only_if_still_there() {
        let d = tmp("undo");
        let p = d.join("k.key");
        let mut f = AtomicFile::create_new(&p, 0o600).unwrap();
        f.write_all(b"secret").unwrap();
        let named = f.commit_new_undoable().unwrap();
        named.remove();
        assert!(!p.exists(), "the file just named is removed");
        // Someone else's file at the name by then: left alone.
        let mut f = AtomicFile::create_new(&p, 0o600).unwrap();
        f.write_all(b"secret").unwrap();
        let named = f.commit_new_undoable().unwrap();
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, b"theirs").unwrap();
        named.remove();
        assert_eq!(std::fs::read(&p).unwrap(), b"theirs");
    }

    #[test]
    fn a_link_to_a_device_in_a_shared_folder_is_replaced() {
        let d = tmp("devlink");
        // Writable by everyone, as /dev/shm or /tmp: a link there may be
        // anyone's doing, even when root owns it.
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
        let p = d.join("out.xml");
        std::os::unix::fs::symlink("/dev/null", &p).unwrap();
        write(&p, b"new").unwrap();
        assert!(
            !std::fs::symlink_metadata(&p)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        // In a folder only its owner writes, the link is followed.
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        let q = d.join("null");
        std::os::unix::fs::symlink("/dev/null", &q).unwrap();
        write(&q, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&q)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[test]
    fn replaces_keeps_mode_and_leaves_nothing_else() {
        let d = tmp("replace");
        let p = d.join("f");
        std::fs::write(&p, b"old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        write(&p, b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o640
        );
        assert_eq!(names(&d), ["f"]);
    }

    #[test]
    fn long_name_works() {
        let d = tmp("long");
        let p = d.join("x".repeat(250));
        write(&p, b"a").unwrap();
        write(&p, b"b").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"b");
        assert_eq!(names(&d).len(), 1);
    }

    #[test]
    fn uncommitted_leaves_the_old_file() {
        let d = tmp("drop");
        let p = d.join("f");
        std::fs::write(&p, b"old").unwrap();
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"partial").unwrap();
        drop(f);
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert_eq!(names(&d), ["f"]);
    }

    #[test]
    fn a_link_is_replaced_not_written_through() {
        let d = tmp("link");
        std::fs::write(d.join("real"), b"old").unwrap();
        std::os::unix::fs::symlink("real", d.join("l")).unwrap();
        write(&d.join("l"), b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(d.join("l"))
                .unwrap()
                .file_type()
                .is_file()
        );
        assert_eq!(std::fs::read(d.join("l")).unwrap(), b"new");
        assert_eq!(std::fs::read(d.join("real")).unwrap(), b"old");
    }

    #[test]
    fn set_id_bits_are_not_kept() {
        let d = tmp("setid");
        let p = d.join("f");
        std::fs::write(&p, b"old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o6755)).unwrap();
        write(&p, b"new").unwrap();
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777,
            0o755
        );
    }

    #[test]
    fn a_new_only_file_refuses_a_fifo_or_link() {
        let d = tmp("newfifo");
        let fifo = d.join("k");
        rfs::mknodat(CWD, &fifo, FileType::Fifo, Mode::from_raw_mode(0o666), 0).unwrap();
        assert!(AtomicFile::create_new(&fifo, 0o600).is_err());
        std::os::unix::fs::symlink("nowhere", d.join("l")).unwrap();
        assert!(AtomicFile::create_new(&d.join("l"), 0o600).is_err());
    }

    #[test]
    fn new_only_refuses_an_existing_file() {
        let d = tmp("new");
        let p = d.join("f");
        let mut f = AtomicFile::with_mode(&p, 0o600).unwrap();
        f.write_all(b"one").unwrap();
        f.commit_new().unwrap();
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"two").unwrap();
        assert!(f.commit_new().is_err());
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        assert_eq!(names(&d), ["f"]);
    }

    #[test]
    fn devices_are_streams_and_folders_are_refused() {
        write(Path::new("/dev/null"), b"x").unwrap();
        let d = tmp("dir");
        let e = write(&d, b"x").unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
    }

    #[test]
    fn fifo_without_reader_is_refused_at_once() {
        let d = tmp("fifo");
        let p = d.join("p");
        let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = write(&p, b"x").unwrap_err();
        assert!(e.to_string().contains("no process reads"), "{e}");
    }

    #[test]
    fn lock_names_fit_a_folder() {
        let long = Path::new("/etc").join("p".repeat(253));
        let l = lock_path(&long);
        assert_eq!(l.parent(), Some(Path::new("/etc")));
        assert!(l.file_name().unwrap().len() <= 255);
        assert_eq!(l, lock_path(&long));
        assert_eq!(lock_path(Path::new("a/b.toml")), Path::new("a/b.toml.lock"));
    }

    #[test]
    fn lock_serialises_edits() {
        let d = tmp("lock");
        let p = d.join("n");
        std::fs::write(&p, b"0").unwrap();
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let p = p.clone();
                std::thread::spawn(move || {
                    for _ in 0..10 {
                        let _l = lock_beside(&p).unwrap();
                        let n: u32 = std::fs::read_to_string(&p).unwrap().parse().unwrap();
                        write(&p, (n + 1).to_string().as_bytes()).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "80");
    }
}
