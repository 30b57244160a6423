//! The files a command is given: every file argument is read here, and
//! every file a command writes is written here.
//!
//! Reading: a named file is opened without blocking and read only if it
//! is a regular file of bounded size ([`wloc_trust::file`]); a FIFO, a
//! device (`/dev/zero`) or a folder is refused at once, with an error
//! naming the argument and the file.  `-` reads standard input, bounded
//! the same way.
//!
//! Writing: through [`wloc_trust::atomic`]: the old file or the complete
//! new one, never a part, and no temporary left behind.

use std::path::{Path, PathBuf};

use wloc_trust::atomic::WriteError;
use wloc_trust::file::ReadError;

/// The most read of a file argument: 256 MiB, as of a topology.
pub const MAX_BYTES: u64 = wloc_trust::file::MAX_INPUT_BYTES;

/// Why a file argument could not be read or an output written.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The file could not be read (not a regular file, too large, missing).
    #[error("cannot read {what} '{}': {}", .source.path().display(), .source.reason())]
    Read {
        /// The role of the file ("the diff", "the distances file").
        what: String,
        /// Why.
        source: ReadError,
    },
    /// The file is not UTF-8 text.
    #[error("cannot read {what} '{}': not UTF-8 text", .path.display())]
    NotText {
        /// The role of the file.
        what: String,
        /// The file.
        path: PathBuf,
    },
    /// The output could not be written; the old file, if any, is intact.
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// The bytes of the file argument `path` (its role `what`, for errors), at
/// most `max` bytes, read to its end
/// ([`wloc_trust::file::read_regular_to_end`]).
pub fn read(path: &Path, what: &str, max: u64) -> Result<Vec<u8>, FileError> {
    wloc_trust::file::read_regular_to_end(path, max).map_err(|source| FileError::Read {
        what: what.to_string(),
        source,
    })
}

/// The text of the file argument `path`, at most [`MAX_BYTES`].
pub fn read_text(path: &Path, what: &str) -> Result<String, FileError> {
    String::from_utf8(read(path, what, MAX_BYTES)?).map_err(|_| FileError::NotText {
        what: what.to_string(),
        path: path.to_path_buf(),
    })
}

/// The text of the argument `arg`: a file, or standard input for `-`.
pub fn read_text_arg(arg: &str, what: &str) -> Result<String, FileError> {
    if arg != "-" {
        return read_text(Path::new(arg), what);
    }
    let shown = Path::new("<standard input>");
    let bytes = wloc_trust::file::read_stream(std::io::stdin().lock(), shown, MAX_BYTES).map_err(
        |source| FileError::Read {
            what: what.to_string(),
            source,
        },
    )?;
    String::from_utf8(bytes).map_err(|_| FileError::NotText {
        what: what.to_string(),
        path: shown.to_path_buf(),
    })
}

/// Refuses `path` at once unless it is missing or a regular file (for
/// arguments that are a file when one exists, such as `component deny`'s).
pub fn regular_or_missing(path: &Path, what: &str) -> Result<bool, FileError> {
    match wloc_trust::file::open_regular(path, u64::MAX) {
        Ok(_) => Ok(true),
        Err(e) if e.is_not_found() => Ok(false),
        Err(source) => Err(FileError::Read {
            what: what.to_string(),
            source,
        }),
    }
}

/// Writes `bytes` to `path`: the old file or the complete new one.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    Ok(wloc_trust::atomic::write(path, bytes)?)
}
