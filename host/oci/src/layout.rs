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

/// Largest `index.json` read.
const MAX_INDEX_BYTES: u64 = 16 << 20;

/// A layout folder.
pub struct Layout {
    dir: PathBuf,
}

fn read_file(path: &Path, max: u64) -> Result<Vec<u8>, OciError> {
    wloc_trust::file::read_regular_to_end(path, max).map_err(|e| OciError::file(path, e))
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
            dir: dir.to_path_buf(),
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
            dir: dir.to_path_buf(),
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
        let path = self.blob_path(&d.digest);
        let bytes = match wloc_trust::file::read_regular_to_end(&path, d.size) {
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
        let path = self.blob_path(&digest);
        let present = wloc_trust::file::read_regular_to_end(&path, bytes.len() as u64)
            .is_ok_and(|b| b == bytes);
        if !present {
            std::fs::create_dir_all(self.dir.join("blobs/sha256"))
                .map_err(|e| OciError::file(&self.dir, e))?;
            wloc_trust::atomic::write(&path, bytes).map_err(|e| OciError::file(&path, e))?;
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
