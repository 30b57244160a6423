//! Folders that someone else may have made (a directory of topologies, a
//! fabric folder): their files are read only through a handle on the
//! folder, so that a link in it, or one swapped in while wloc runs,
//! cannot lead out of it.  Such a folder must not hand the user running
//! wloc (root, say) files that only that user may read.

use std::path::{Path, PathBuf};

/// Largest file read from a folder (a topology of the largest machines is
/// a few MiB).
pub const MAX_FOUND_BYTES: u64 = 256 << 20;

/// Why a folder or one of its files could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    /// The folder itself could not be opened.
    #[error("cannot open the folder '{}': {source}", path.display())]
    OpenFolder {
        /// The folder, as named.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file of the folder could not be opened.
    #[error("cannot open '{}': {source}", path.display())]
    Open {
        /// The file, below the folder's name.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file of the folder could not be read.
    #[error("cannot read '{}': {source}", path.display())]
    Read {
        /// The file, below the folder's name.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file read as text is not UTF-8.
    #[error("'{}' is not UTF-8 text", .0.display())]
    NotText(PathBuf),
}

/// A folder whose files are read only through a handle on it (see the
/// module documentation).
pub struct Folder {
    path: PathBuf,
    dir: cap_std::fs::Dir,
}

impl Folder {
    /// Opens the folder `path` (which the user named: it may be a link).
    pub fn open(path: &Path) -> Result<Folder, FolderError> {
        let dir = cap_std::fs::Dir::open_ambient_dir(path, cap_std::ambient_authority()).map_err(
            |source| FolderError::OpenFolder {
                path: path.to_path_buf(),
                source,
            },
        )?;
        Ok(Folder {
            path: path.to_path_buf(),
            dir,
        })
    }

    /// The bytes of the regular file `rel` of the folder, read through the
    /// folder's handle: `None`, with a warning naming it, when a link
    /// leads it out of the folder, when it is not a regular file (a FIFO
    /// would block, a device never end) or is larger than `MAX_FOUND_BYTES`.
    pub fn read(&self, rel: &Path) -> Result<Option<Vec<u8>>, FolderError> {
        use cap_std::fs::OpenOptionsExt;
        use std::io::Read;
        let shown = self.path.join(rel);
        let skip = |why: &str| {
            eprintln!("wloc: warning: skipped '{}': {why}", shown.display());
            Ok(None)
        };
        let mut o = cap_std::fs::OpenOptions::new();
        // O_NONBLOCK: opening a FIFO must not wait for a writer.
        o.read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
        let f = match self.dir.open_with(rel, &o) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            // cap-std refuses a path that leads out of the folder.
            Err(e)
                if e.kind() == std::io::ErrorKind::PermissionDenied
                    || e.raw_os_error() == Some(libc::EXDEV)
                    || e.raw_os_error() == Some(libc::ELOOP) =>
            {
                return skip(&format!(
                    "it leads out of the folder '{}' (a link), or may not be read: {e}",
                    self.path.display()
                ));
            }
            Err(source) => {
                return Err(FolderError::Open {
                    path: shown,
                    source,
                });
            }
        };
        let read_error = |source| FolderError::Read {
            path: shown.clone(),
            source,
        };
        let meta = f.metadata().map_err(read_error)?;
        if !meta.is_file() {
            return skip("not a regular file");
        }
        if meta.len() > MAX_FOUND_BYTES {
            return skip(&format!("larger than {MAX_FOUND_BYTES} bytes"));
        }
        let mut bytes = Vec::new();
        f.into_std()
            .take(MAX_FOUND_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(read_error)?;
        if bytes.len() as u64 > MAX_FOUND_BYTES {
            return skip(&format!("larger than {MAX_FOUND_BYTES} bytes"));
        }
        Ok(Some(bytes))
    }

    /// As [`Folder::read`], as text: a file that is not UTF-8 is an error.
    pub fn read_text(&self, rel: &Path) -> Result<Option<String>, FolderError> {
        self.read(rel)?
            .map(|b| String::from_utf8(b).map_err(|_| FolderError::NotText(self.path.join(rel))))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_read_and_what_is_missing_is_none() {
        let dir = std::env::temp_dir().join(format!("wloc-folder-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.xml"), "text").unwrap();
        std::fs::write(dir.join("b.bin"), [0xffu8, 0xfe]).unwrap();
        let f = Folder::open(&dir).unwrap();
        assert_eq!(
            f.read_text(Path::new("a.xml")).unwrap().as_deref(),
            Some("text")
        );
        assert!(f.read(Path::new("missing")).unwrap().is_none());
        let e = f.read_text(Path::new("b.bin")).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("'{}' is not UTF-8 text", dir.join("b.bin").display())
        );
        std::fs::remove_dir_all(&dir).unwrap();
        let e = Folder::open(&dir).err().unwrap().to_string();
        assert!(
            e.starts_with(&format!("cannot open the folder '{}': ", dir.display())),
            "{e}"
        );
    }
}
