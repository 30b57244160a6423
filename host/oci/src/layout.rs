//! The OCI image layout folder: `oci-layout`, `index.json` naming the
//! manifests (`org.opencontainers.image.ref.name`), and `blobs/sha256/HEX`.
//! skopeo's `oci:DIR:NAME` reads and writes the same.
//!
//! Every file is written atomically (a blob under its digest, complete or
//! absent); `index.json` is rewritten under the lock beside it, so that
//! two mirrors into one folder both land.  Blobs are read as regular
//! files only, bounded by the size their descriptor announces, and
//! checked against their digest.

use std::path::{Path, PathBuf};

use crate::OciError;
use crate::types::DescriptorChecks as _;
use crate::types::{Descriptor, INDEX, Index, REF_NAME};

/// The blob `digest` (checked `sha256:HEX`) in the opened `blobs/sha256`.
fn blob_in(blobs: &std::os::fd::OwnedFd, digest: &str) -> PathBuf {
    wloc_trust::file::fd_path(blobs).join(digest.trim_start_matches("sha256:"))
}

/// The folder as an absolute path: it is recorded as the origin of what
/// is installed from it, and `update` may run from another folder.
fn absolute(dir: &Path) -> Result<PathBuf, OciError> {
    std::path::absolute(dir).map_err(|e| OciError::file(dir, e))
}

/// Largest `index.json` read.
const MAX_INDEX_BYTES: u64 = 16 << 20;

/// A layout folder.
pub struct Layout {
    dir: PathBuf,
}

fn read_file(path: &Path, max: u64) -> Result<Vec<u8>, OciError> {
    wloc_trust::file::read_regular_no_link(path, max).map_err(|e| OciError::file(path, e))
}

impl Layout {
    /// An existing layout folder (its `oci-layout` says version 1.0.0).
    pub fn open(dir: &Path) -> Result<Layout, OciError> {
        let marker = dir.join("oci-layout");
        let text = read_file(&marker, 4096)?;
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Marker {
            image_layout_version: String,
        }
        let m: Marker = serde_json::from_slice(&text)
            .map_err(|e| OciError::file(&marker, format!("not an OCI layout marker: {e}")))?;
        if m.image_layout_version != "1.0.0" {
            return Err(OciError::file(
                &marker,
                format!(
                    "layout version {:?} (1.0.0 expected)",
                    wloc_trust::text::sanitize(&m.image_layout_version, 20)
                ),
            ));
        }
        Ok(Layout {
            dir: absolute(dir)?,
        })
    }

    /// A layout folder, made if missing.
    pub fn create(dir: &Path) -> Result<Layout, OciError> {
        if dir.join("oci-layout").exists() {
            return Layout::open(dir);
        }
        std::fs::create_dir_all(dir.join("blobs/sha256")).map_err(|e| OciError::file(dir, e))?;
        wloc_trust::atomic::write(
            &dir.join("oci-layout"),
            br#"{"imageLayoutVersion":"1.0.0"}"#,
        )
        .map_err(|e| OciError::file(dir, e))?;
        Ok(Layout {
            dir: absolute(dir)?,
        })
    }

    /// The same folder, already opened once.
    pub(crate) fn open_unchecked(dir: &Path) -> Layout {
        Layout {
            dir: dir.to_path_buf(),
        }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `blobs/sha256`, opened without following a link below the folder
    /// (see [`wloc_trust::file::open_folder_below`]): a layout someone
    /// else prepared cannot send a blob's write or read elsewhere.
    fn blobs(&self) -> Result<std::os::fd::OwnedFd, OciError> {
        wloc_trust::file::open_folder_below(&self.dir, &["blobs", "sha256"])
            .map_err(|e| OciError::file(&self.dir, e))
    }

    /// The blob's name as shown in messages.
    fn blob_path(&self, digest: &str) -> PathBuf {
        self.dir
            .join("blobs/sha256")
            .join(digest.trim_start_matches("sha256:"))
    }

    fn index(&self) -> Result<Index, OciError> {
        let path = self.dir.join("index.json");
        if !path.exists() {
            return Ok(Index {
                schema_version: 2,
                media_type: Some(INDEX.into()),
                manifests: Vec::new(),
                annotations: Default::default(),
            });
        }
        let bytes = read_file(&path, MAX_INDEX_BYTES)?;
        serde_json::from_slice(&bytes)
            .map_err(|e| OciError::file(&path, format!("not an OCI index: {e}")))
    }

    /// The names of its manifests, with their descriptors.
    pub fn names(&self) -> Result<Vec<(Option<String>, Descriptor)>, OciError> {
        Ok(self
            .index()?
            .manifests
            .into_iter()
            .map(|d| (d.annotations.get(REF_NAME).cloned(), d))
            .collect())
    }

    /// The descriptor of the manifest named `name`, or of the only one.
    pub fn resolve(&self, name: Option<&str>) -> Result<Descriptor, OciError> {
        let all = self.names()?;
        let shown = self.dir.display();
        let found: Vec<Descriptor> = match name {
            Some(n) => all
                .into_iter()
                .filter(|(r, _)| r.as_deref() == Some(n))
                .map(|(_, d)| d)
                .collect(),
            None => all.into_iter().map(|(_, d)| d).collect(),
        };
        match (found.len(), name) {
            (1, _) => {
                let d = found.into_iter().next().expect("one");
                d.check(&format!("index.json of {shown}"))?;
                Ok(d)
            }
            (0, Some(n)) => Err(OciError::NotFound(format!("{n} in the layout {shown}"))),
            (0, None) => Err(OciError::NotFound(format!(
                "a manifest in the layout {shown}"
            ))),
            (k, _) => Err(OciError::invalid(
                format!("the layout {shown}"),
                format!("{k} manifests match: name one (oci:DIR:NAME)"),
            )),
        }
    }

    /// The blob `d` names: refused if announced larger than `limit`,
    /// checked against its digest and size.
    pub fn read_blob(&self, d: &Descriptor, limit: u64) -> Result<Vec<u8>, OciError> {
        let what = format!("blob {} of {}", d.digest, self.dir.display());
        d.check_within(&what, limit)?;
        let blobs = self.blobs()?;
        let path = blob_in(&blobs, &d.digest);
        let bytes = match wloc_trust::file::read_regular_no_link(&path, d.size) {
            Ok(b) => b,
            Err(wloc_trust::file::ReadError::TooLarge { .. }) => {
                return Err(OciError::invalid(
                    &what,
                    format!("larger than the {} bytes announced", d.size),
                ));
            }
            Err(e) => return Err(OciError::file(&path, e)),
        };
        crate::check_blob(&what, &bytes, d)?;
        Ok(bytes)
    }

    /// Stores a blob under its digest (kept if already there and whole).
    pub fn write_blob(&self, bytes: &[u8]) -> Result<String, OciError> {
        let digest = crate::digest_of(bytes);
        std::fs::create_dir_all(self.dir.join("blobs/sha256"))
            .map_err(|e| OciError::file(&self.dir, e))?;
        let blobs = self.blobs()?;
        let path = blob_in(&blobs, &digest);
        let present = wloc_trust::file::read_regular_no_link(&path, bytes.len() as u64)
            .is_ok_and(|b| b == bytes);
        if !present {
            wloc_trust::atomic::write(&path, bytes)
                .map_err(|e| OciError::file(&self.blob_path(&digest), e))?;
        }
        Ok(digest)
    }

    /// Names a manifest `name` in `index.json` (replacing what had that
    /// name), under the lock beside it.
    pub fn tag(&self, name: &str, mut d: Descriptor) -> Result<(), OciError> {
        let path = self.dir.join("index.json");
        let _lock = wloc_trust::atomic::lock_beside(&path).map_err(|e| OciError::file(&path, e))?;
        let mut index = self.index()?;
        index
            .manifests
            .retain(|m| m.annotations.get(REF_NAME).map(String::as_str) != Some(name));
        d.annotations.insert(REF_NAME.into(), name.into());
        index.manifests.push(d);
        let bytes =
            serde_json::to_vec_pretty(&index).map_err(|e| OciError::file(&path, e.to_string()))?;
        wloc_trust::atomic::write(&path, &bytes).map_err(|e| OciError::file(&path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A fresh folder under the system's temporary folder.
    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("wloc-oci-layout-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_linked_blobs_folder_is_refused_and_nothing_is_written_through_it() {
        let d = scratch("linked");
        let victim = d.join("victim");
        std::fs::create_dir_all(&victim).unwrap();
        let lay = d.join("lay");
        std::fs::create_dir_all(lay.join("blobs")).unwrap();
        std::fs::write(lay.join("oci-layout"), br#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
        symlink(&victim, lay.join("blobs/sha256")).unwrap();
        let layout = Layout::open(&lay).unwrap();
        let e = layout.write_blob(b"* * * * * root true\n").unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);
        // The same with `blobs` itself linked.
        std::fs::remove_file(lay.join("blobs/sha256")).unwrap();
        std::fs::remove_dir(lay.join("blobs")).unwrap();
        std::fs::create_dir_all(victim.join("sha256")).unwrap();
        symlink(&victim, lay.join("blobs")).unwrap();
        assert!(layout.write_blob(b"x").is_err());
        assert_eq!(std::fs::read_dir(victim.join("sha256")).unwrap().count(), 0);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_blob_that_is_a_link_is_not_read() {
        let d = scratch("bloblink");
        let layout = Layout::create(&d.join("lay")).unwrap();
        let secret = d.join("secret");
        std::fs::write(&secret, b"secret").unwrap();
        let digest = crate::digest_of(b"secret");
        symlink(
            &secret,
            d.join("lay/blobs/sha256")
                .join(digest.trim_start_matches("sha256:")),
        )
        .unwrap();
        let desc = Descriptor {
            media_type: "application/octet-stream".into(),
            digest,
            size: 6,
            annotations: Default::default(),
            artifact_type: None,
        };
        let e = layout.read_blob(&desc, 100).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        // A blob written and read back is whole.
        let written = layout.write_blob(b"data").unwrap();
        let desc = Descriptor {
            digest: written,
            size: 4,
            ..desc
        };
        assert_eq!(layout.read_blob(&desc, 100).unwrap(), b"data");
        let _ = std::fs::remove_dir_all(&d);
    }
}
