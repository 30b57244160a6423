//! Topology images: one discovery, many processes.
//!
//! An image is a finished [`Topology`] written once (by a launcher, a
//! resource manager, `wloc ls --of image FILE`) and adopted by any number
//! of processes, any number of times, in microseconds, without discovering
//! or parsing anything.
//!
//! # Format
//!
//! A 64-byte header followed by the body, all little-endian:
//!
//! | bytes  | field |
//! | ------ | ----- |
//! | 0..8   | magic `\x89WLOCIMG` |
//! | 8..12  | format version ([`FORMAT_VERSION`]) |
//! | 12..16 | header length (64) |
//! | 16..24 | body length in bytes |
//! | 24..32 | xxh3-64 checksum of the body |
//! | 32..36 | number of objects |
//! | 36..40 | reserved (0) |
//! | 40..64 | version of wloc that wrote it, NUL-padded |
//!
//! Version 4 added the objects' `<userdata>` elements (kept raw, as the
//! XML commands keep them); version 5 the optional publication stamp
//! ([`Publication`], written by [`write_published`]); an image of another
//! version is refused with an error naming both versions and saying how
//! to write it again.
//!
//! The body is an [rkyv](https://docs.rs/rkyv) archive of the topology (see
//! the `format` module).  The objects are in breadth-first order (the
//! root first; the children of an object consecutive, memory, normal, I/O
//! then misc children) and stored as columns, one array per field, each
//! of 1, 2, 4 or 8 bytes per entry (the narrowest that holds its values):
//! every link is an object index, every set, string, attribute and info
//! an index into a shared table, and the children of an object are the
//! run of objects naming it as parent.  So the archive holds a few dozen
//! relative offsets whatever the size of the machine.  Nothing in it is
//! an address, so it reads the same wherever it is mapped, in every
//! process, with ASLR; there is no fixed-address mapping to negotiate and
//! no limit on how often a process adopts.
//!
//! # Adopting
//!
//! [`adopt`] checks the header (magic, version, length, checksum of every
//! byte of the body), then validates the archive once with bytecheck
//! (every offset, length, enum tag and UTF-8 string) and its own checks
//! of every index and range (each column's width and length, each index
//! in its table, each attribute fitting its object's type, normal and
//! memory objects having their sets, parents before children and the
//! parent column non-decreasing, families in order, every run of sets and
//! infos a range of its table), written as reductions over columns that
//! the compiler vectorizes, and returns an [`AdoptedTopology`]: a
//! read-only view answering levels, objects by type, depth and index,
//! parents and children, sets, attributes, infos, distances, memory
//! attributes, CPU kinds and topology infos straight from the image.
//! [`AdoptedTopology::to_topology`] builds a full [`Topology`] when the
//! whole model is needed (restriction, type filters, the XML or console
//! writers).
//!
//! An image names each distinct set and string once and counts, rather
//! than stores, a set's leading zero words, so its topology can be many
//! times its size once every object has its own sets at full width.
//! Adopting allocates nothing of that (sets are built one query at a
//! time, each at most 2^14 words); [`AdoptedTopology::to_topology`]
//! computes from the image what the topology would take and refuses,
//! before building anything, an image asking more than [`REBUILD_SLACK`]
//! (64 MiB) plus [`REBUILD_RATIO`] (128) bytes per byte of the image.
//! Error messages quote at most [`QUOTE_MAX`] bytes of what the image
//! holds.
//!
//! # A file changed under a reader
//!
//! A shared mapping of a regular file that someone truncates raises
//! SIGBUS, and one whose bytes change after validation could lead the
//! reader outside the image.  So an image is only *mapped* when the kernel
//! guarantees it cannot change: a memfd sealed against writing and
//! shrinking ([`write_memfd`] makes one; `F_GET_SEALS` is checked on every
//! adopt).  Any other regular file is *read* into private memory with one
//! `read` (an image of a 1,300-object machine is about 70 KB: a few
//! microseconds), so that later changes, truncation or removal of the
//! file do not reach the reader; a file truncated while it is read is
//! refused as truncated.  [`write`] never changes a published file: it
//! writes a read-only temporary file beside it and renames it over, so a
//! reader sees the old image or the new one, never a part.
//!
//! # A file that is not an image
//!
//! The path of an image comes from the command line or the environment
//! (`WLOC_IMAGE`), and may name anything.  [`adopt`] opens it without
//! blocking (`O_NONBLOCK|O_CLOEXEC`: a FIFO with no writer does not
//! hang it) and, on the descriptor (`fstat`), accepts only a regular file
//! (a memfd is one) of at most [`MAX_IMAGE_BYTES`]; it then reads at
//! most the size `fstat` saw (`/dev/zero`, or a file growing while it is
//! read, is not followed).  Anything else is refused with an error naming
//! the file.  [`adopt_file`] checks a descriptor it is handed the same
//! way; [`adopt_stream`] reads standard input (a pipe) in sequence, and
//! refuses it once it passes [`MAX_IMAGE_BYTES`].
//!
//! # A launcher and its ranks
//!
//! ```no_run
//! use std::process::Command;
//! # fn discover() -> wloc_core::Topology { unimplemented!() }
//!
//! // The launcher discovers once per node and publishes the image...
//! let topo: wloc_core::Topology = discover();
//! let path = std::env::temp_dir().join("node.wlocimg");
//! wloc_image::write(&topo, &path).unwrap();
//! // ...and hands its path to every rank (the `wloc` command reads
//! // WLOC_IMAGE too).
//! for rank in 0..4 {
//!     Command::new("./rank").env("WLOC_IMAGE", &path).arg(rank.to_string()).spawn().unwrap();
//! }
//!
//! // In each rank: adopt, then query.
//! let img = wloc_image::adopt(std::env::var_os("WLOC_IMAGE").unwrap()).unwrap();
//! let cores = img.objs_by_type(wloc_core::ObjType::Core);
//! let mine = &cores[3 % cores.len()];
//! println!("rank 3 runs on core L#{} {}", mine.logical_index(), mine.cpuset().unwrap());
//! ```
//!
//! With a sealed memfd instead of a file, every rank maps the same pages
//! (no private copy): the launcher calls [`write_memfd`], lets the ranks
//! inherit the descriptor, and passes `/proc/<launcher pid>/fd/<fd>` (or
//! the rank adopts the inherited descriptor with [`adopt_file`]).

#![warn(missing_docs)]

mod format;
mod publication;
mod rebuild;
mod validate;
mod view;

use std::fmt;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use rkyv::util::AlignedVec;
use wloc_core::Topology;
use wloc_core::object::Depth;

pub use publication::{MAX_BOOT_ID_BYTES, MAX_ONLINE_LIST_BYTES, Publication};
pub use rebuild::{REBUILD_RATIO, REBUILD_SLACK};
pub use view::{AdoptedTopology, CpuKindRef, DistancesRef, MemAttrRef, MemTierRef, ObjRef};

/// The largest image adopted: 256 MiB (`wloc_trust::file::MAX_INPUT_BYTES`,
/// the cap on every topology file wloc reads).  An image of a
/// 1,300-object machine is about 70 KB.
pub const MAX_IMAGE_BYTES: u64 = wloc_trust::file::MAX_INPUT_BYTES;

/// First bytes of every image.
pub const MAGIC: [u8; 8] = *b"\x89WLOCIMG";
/// The image format this build writes and reads.
pub const FORMAT_VERSION: u32 = 5;
/// Length of the header before the body.
pub const HEADER_LEN: usize = 64;
/// The special levels in the order the image stores them.
pub const SPECIAL_DEPTHS: [Depth; 6] = [
    Depth::NumaNode,
    Depth::Bridge,
    Depth::PciDevice,
    Depth::OsDevice,
    Depth::Misc,
    Depth::MemCache,
];

/// Why an image was not written or adopted.
#[derive(Debug)]
pub enum ImageError {
    /// Reading or writing the file failed.
    Io {
        /// The file.
        path: Option<PathBuf>,
        /// What the system said.
        source: std::io::Error,
    },
    /// The data does not start with [`MAGIC`].
    NotAnImage,
    /// The image has another format version.
    Version {
        /// The version in the image.
        found: u32,
        /// The wloc version that wrote it, as recorded in the header.
        writer: String,
    },
    /// The data is shorter than its header says.
    Truncated {
        /// Bytes the header announces (header included).
        expected: u64,
        /// Bytes present.
        found: u64,
    },
    /// The body's checksum does not match the header's.
    Checksum {
        /// Checksum in the header.
        expected: u64,
        /// Checksum of the body present.
        found: u64,
    },
    /// The image is intact but describes no valid topology.
    Invalid(String),
    /// A publication stamp that is too long or malformed (refused when
    /// written and when read).
    Publication(String),
}

impl fmt::Display for ImageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImageError::Io {
                path: Some(p),
                source,
            } => write!(f, "{}: {source}", p.display()),
            ImageError::Io { path: None, source } => write!(f, "{source}"),
            ImageError::NotAnImage => f.write_str("not a wloc topology image (wrong magic number)"),
            ImageError::Version { found, writer } => write!(
                f,
                "topology image format version {found} (written by wloc {writer}) is not supported: this wloc reads version {FORMAT_VERSION} (write the image again with this wloc: wloc ls -i SOURCE --of image FILE)"
            ),
            ImageError::Truncated { expected, found } => write!(
                f,
                "truncated topology image: {found} bytes present, {expected} expected"
            ),
            ImageError::Checksum { expected, found } => write!(
                f,
                "corrupted topology image: body checksum {found:#018x} does not match the header's {expected:#018x}"
            ),
            ImageError::Invalid(m) => write!(f, "invalid topology image: {m}"),
            ImageError::Publication(m) => write!(f, "bad publication stamp: {m}"),
        }
    }
}

impl std::error::Error for ImageError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ImageError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Longest part of the image quoted in an error message, in bytes.
pub const QUOTE_MAX: usize = 200;

/// `s` cut to [`QUOTE_MAX`] bytes at a character boundary (`...` and the
/// full length marking a cut): error messages quote what the image holds
/// (sets, names), which a hostile image makes as long as it likes.
pub(crate) fn clip(s: &str) -> String {
    if s.len() <= QUOTE_MAX {
        return s.to_string();
    }
    let mut end = QUOTE_MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &s[..end], s.len())
}

fn io_err(path: Option<&Path>) -> impl FnOnce(std::io::Error) -> ImageError + '_ {
    move |source| ImageError::Io {
        path: path.map(Path::to_path_buf),
        source,
    }
}

/// Whether `bytes` start like an image (the magic number alone).
pub fn is_image(bytes: &[u8]) -> bool {
    bytes.len() >= MAGIC.len() && bytes[..MAGIC.len()] == MAGIC
}

/// Whether the file at `path` is a regular file starting with the image
/// magic number (it is opened without blocking: a FIFO is not one).
pub fn file_is_image(path: impl AsRef<Path>) -> bool {
    let mut head = [0u8; 8];
    wloc_trust::file::open_regular(path.as_ref(), u64::MAX)
        .is_ok_and(|(mut f, _)| f.read_exact(&mut head).is_ok())
        && is_image(&head)
}

/// The image of a finished topology, header included.
pub fn to_bytes(topo: &Topology) -> Vec<u8> {
    bytes_of(topo, None)
}

/// The image of a finished topology with an optional publication stamp.
fn bytes_of(topo: &Topology, publication: Option<&Publication>) -> Vec<u8> {
    let body = format::body_of(topo, publication);
    let archived =
        rkyv::to_bytes::<rkyv::rancor::Error>(&body).expect("serialising into memory cannot fail");
    let mut out = Vec::with_capacity(HEADER_LEN + archived.len());
    out.extend_from_slice(&header(&archived, body.ty.len() as u32));
    out.extend_from_slice(&archived);
    out
}

fn header(body: &[u8], nobjs: u32) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&(HEADER_LEN as u32).to_le_bytes());
    h[16..24].copy_from_slice(&(body.len() as u64).to_le_bytes());
    h[24..32].copy_from_slice(&twox_hash::XxHash3_64::oneshot(body).to_le_bytes());
    h[32..36].copy_from_slice(&nobjs.to_le_bytes());
    let v = env!("CARGO_PKG_VERSION").as_bytes();
    let n = v.len().min(24);
    h[40..40 + n].copy_from_slice(&v[..n]);
    h
}

/// The image of `topo` if hwloc's checker accepts its tree
/// ([`Topology::check_hwloc`]), as readers require: an image of a tree
/// whose sets do not add up (as hwloc XML documents edited by hand may
/// give) is refused when written rather than when read.
fn checked_bytes(
    topo: &Topology,
    publication: Option<&Publication>,
) -> Result<Vec<u8>, ImageError> {
    if let Some(p) = publication {
        p.check()?;
    }
    topo.check_hwloc().map_err(|e| {
        ImageError::Invalid(format!(
            "the topology breaks hwloc's rules, which images keep: {}",
            clip(&e.to_string())
        ))
    })?;
    Ok(bytes_of(topo, publication))
}

/// Writes `bytes` to `path` atomically (`wloc_trust::atomic`: the one way
/// wloc writes a file): a new file gets `mode` less the umask, an existing
/// one keeps its permission bits, unless `force_mode`, where the file put
/// in place has exactly `mode`, whatever the umask or the old file.  A
/// failed write (a full disk) leaves the old file and no temporary.
fn write_atomic(path: &Path, bytes: &[u8], mode: u32, force_mode: bool) -> Result<(), ImageError> {
    use std::os::unix::fs::PermissionsExt;
    let err = |e: wloc_trust::atomic::WriteError| ImageError::Io {
        path: Some(path.to_path_buf()),
        source: std::io::Error::new(e.source.kind(), format!("{}: {}", e.what, e.source)),
    };
    let mut f = wloc_trust::atomic::AtomicFile::with_mode(path, mode).map_err(err)?;
    let io = |source| ImageError::Io {
        path: Some(path.to_path_buf()),
        source,
    };
    if force_mode {
        f.file()
            .set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(io)?;
    }
    f.write_all(bytes).map_err(io)?;
    f.commit().map_err(err)
}

/// Writes the image of `topo` to `path` atomically: into a read-only
/// temporary file in the same directory, synced, then renamed over `path`.
/// Readers see the previous file or the complete new one.  A tree that
/// hwloc's checker refuses is not written.
pub fn write(topo: &Topology, path: impl AsRef<Path>) -> Result<(), ImageError> {
    let path = path.as_ref();
    let bytes = checked_bytes(topo, None)?;
    write_atomic(path, &bytes, 0o444, false)
}

/// Writes the image of `topo` with the publication stamp `p` to `path`,
/// atomically as [`write`] does (a temporary file beside it, synced, then
/// renamed over it), mode 0644 exactly (readable by every process that
/// adopts it; the umask and the old file's bits do not change it).  A
/// stamp [`Publication::check`] refuses is not written.
pub fn write_published(topo: &Topology, path: &Path, p: &Publication) -> Result<(), ImageError> {
    let bytes = checked_bytes(topo, Some(p))?;
    write_atomic(path, &bytes, 0o644, true)
}

/// Writes the image of `topo` into a new memfd sealed against writing,
/// shrinking and growing, ready to be mapped by every process that
/// inherits or reopens it (`/proc/PID/fd/N`).  The descriptor is not
/// close-on-exec, so that children inherit it.
pub fn write_memfd(topo: &Topology) -> Result<OwnedFd, ImageError> {
    let bytes = checked_bytes(topo, None)?;
    let err = |e| ImageError::Io {
        path: None,
        source: e,
    };
    // SAFETY: memfd_create takes a NUL-terminated name and flags; the
    // returned descriptor is owned by nobody else.
    let fd = unsafe { libc::memfd_create(c"wloc-image".as_ptr(), libc::MFD_ALLOW_SEALING) };
    if fd < 0 {
        return Err(err(std::io::Error::last_os_error()));
    }
    // SAFETY: `fd` was just created and is valid.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut f = File::from(owned);
    f.write_all(&bytes).map_err(err)?;
    let seals = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE | libc::F_SEAL_SEAL;
    // SAFETY: plain fcntl on a valid descriptor.
    if unsafe { libc::fcntl(f.as_raw_fd(), libc::F_ADD_SEALS, seals) } < 0 {
        return Err(err(std::io::Error::last_os_error()));
    }
    Ok(OwnedFd::from(f))
}

/// Adopts the image at `path` (see [`adopt_file`]): opened without
/// blocking, and refused unless it is a regular file of at most
/// [`MAX_IMAGE_BYTES`] (see the crate documentation).
pub fn adopt(path: impl AsRef<Path>) -> Result<AdoptedTopology, ImageError> {
    let path = path.as_ref();
    let (f, _) =
        wloc_trust::file::open_regular(path, MAX_IMAGE_BYTES).map_err(|e| ImageError::Io {
            path: Some(path.to_path_buf()),
            source: e.into_io(),
        })?;
    adopt_file(&f).map_err(|e| match e {
        ImageError::Io { path: None, source } => ImageError::Io {
            path: Some(path.to_path_buf()),
            source,
        },
        e => e,
    })
}

/// Whether the file is sealed so that its bytes can neither change nor
/// shrink (a sealed memfd).
fn is_sealed(f: &File) -> bool {
    // SAFETY: plain fcntl on a valid descriptor; files that do not support
    // seals return -1.
    let seals = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GET_SEALS) };
    let need = libc::F_SEAL_SHRINK | libc::F_SEAL_WRITE;
    seals >= 0 && seals & need == need
}

/// The size of `f` if it is a regular file of at most [`MAX_IMAGE_BYTES`].
fn regular_len(f: &File) -> Result<usize, ImageError> {
    let len = wloc_trust::file::check_regular(f, Path::new(""), MAX_IMAGE_BYTES)
        .map_err(|e| io_err(None)(e.into_io()))?;
    Ok(usize::try_from(len).expect("at most MAX_IMAGE_BYTES"))
}

/// Adopts the image in an open file: mapped read-only when the file is a
/// sealed memfd, read into private memory otherwise (see the crate
/// documentation), then checked and validated once.  The file must be a
/// regular file (a memfd is one) of at most [`MAX_IMAGE_BYTES`], and at
/// most the size it has when adopting starts is read; a pipe is refused
/// (see [`adopt_stream`]).
pub fn adopt_file(f: &File) -> Result<AdoptedTopology, ImageError> {
    let len = regular_len(f)?;
    if is_sealed(f) {
        // SAFETY: the seals checked above forbid any write or shrink of the
        // file for its whole life, so the mapping stays valid and its
        // bytes constant while the view exists.
        let map = unsafe { memmap2::Mmap::map(f) }.map_err(io_err(None))?;
        return AdoptedTopology::new(view::Backing::Mapped(map));
    }
    // Read from offset 0, whatever the file position of the descriptor,
    // at most the size fstat saw (the checks compare what was read with
    // the header: a file that shrank is truncated, one that grew has a
    // header announcing more than was read).
    // The header first: a file that is no image, or announces another
    // size, is refused without reading (or allocating) the rest.
    let mut head = [0u8; HEADER_LEN];
    let mut got = 0;
    while got < head.len().min(len) {
        match f.read_at(&mut head[got..len.min(HEADER_LEN)], got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_err(None)(e)),
        }
    }
    check_header_of(&head[..got], len as u64)?;
    let mut buf = AlignedVec::<16>::with_capacity(len.max(1));
    while buf.len() < len {
        let pos = buf.len();
        // SAFETY: pread writes at most `len - pos` bytes into the buffer's
        // unused capacity (at least `len`), which starts at `pos`; only the
        // bytes it reports written are then counted in the length.
        // (Reading into the spare capacity skips zeroing the buffer first.)
        let n = unsafe {
            libc::pread(
                f.as_raw_fd(),
                buf.as_mut_ptr().add(pos).cast(),
                len - pos,
                pos as libc::off_t,
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(io_err(None)(e));
        }
        if n == 0 {
            break;
        }
        // SAFETY: the `n` bytes after `pos` were just written by pread.
        unsafe { buf.set_len(pos + n as usize) };
    }
    AdoptedTopology::new(view::Backing::Owned(buf))
}

/// Adopts the image read from a stream, as `-` names standard input: a
/// regular file (or a sealed memfd) redirected to it is adopted as
/// [`adopt_file`] does; a pipe, terminal or socket is read in sequence
/// to its end, and refused once it passes [`MAX_IMAGE_BYTES`] (at most
/// that plus one byte is held).
pub fn adopt_stream(f: &File) -> Result<AdoptedTopology, ImageError> {
    if f.metadata().is_ok_and(|m| m.is_file()) {
        return adopt_file(f);
    }
    let bytes = wloc_trust::file::read_stream(f, Path::new(""), MAX_IMAGE_BYTES)
        .map_err(|e| io_err(None)(e.into_io()))?;
    adopt_bytes(&bytes)
}

/// Adopts an image held in memory (copied once into an aligned buffer).
pub fn adopt_bytes(bytes: &[u8]) -> Result<AdoptedTopology, ImageError> {
    let mut buf = AlignedVec::<16>::with_capacity(bytes.len());
    buf.extend_from_slice(bytes);
    AdoptedTopology::new(view::Backing::Owned(buf))
}

/// The checks of an image's header that need no more than its first
/// [`HEADER_LEN`] bytes (`head`) and the image's size (`total`): the
/// magic number, the format version, the header length and the size the
/// header announces.  A file is checked this way before it is read whole,
/// so that a large file that is no image is refused after one read of
/// 64 bytes.
fn check_header_of(head: &[u8], total: u64) -> Result<(), ImageError> {
    let bytes = head;
    if bytes.len() < MAGIC.len() {
        return Err(if MAGIC.starts_with(bytes) && !bytes.is_empty() {
            ImageError::Truncated {
                expected: HEADER_LEN as u64,
                found: bytes.len() as u64,
            }
        } else {
            ImageError::NotAnImage
        });
    }
    if !is_image(bytes) {
        return Err(ImageError::NotAnImage);
    }
    if bytes.len() < HEADER_LEN {
        return Err(ImageError::Truncated {
            expected: HEADER_LEN as u64,
            found: total.min(bytes.len() as u64),
        });
    }
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
    let version = u32_at(8);
    if version != FORMAT_VERSION {
        let w = &bytes[40..64];
        let end = w.iter().position(|&b| b == 0).unwrap_or(w.len());
        return Err(ImageError::Version {
            found: version,
            writer: String::from_utf8_lossy(&w[..end]).into_owned(),
        });
    }
    if u32_at(12) as usize != HEADER_LEN {
        return Err(ImageError::Invalid(format!(
            "header length {} (expected {HEADER_LEN})",
            u32_at(12)
        )));
    }
    let body_len = u64_at(16);
    let expected = body_len.saturating_add(HEADER_LEN as u64);
    let found = total;
    if found < expected {
        return Err(ImageError::Truncated { expected, found });
    }
    if found > expected {
        return Err(ImageError::Invalid(format!(
            "{} bytes after the {expected} the header announces",
            found - expected
        )));
    }
    Ok(())
}

/// Checks the header of `bytes` and returns the body.
fn check_header(bytes: &[u8]) -> Result<&[u8], ImageError> {
    check_header_of(bytes, bytes.len() as u64)?;
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
    let body = &bytes[HEADER_LEN..];
    let sum = twox_hash::XxHash3_64::oneshot(body);
    if sum != u64_at(24) {
        return Err(ImageError::Checksum {
            expected: u64_at(24),
            found: sum,
        });
    }
    Ok(body)
}

#[cfg(test)]
mod tests;
