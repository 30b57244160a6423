//! The OCI documents wloc reads and writes, and the Wasm artifact's config.
//!
//! Written here rather than taken from the `oci-spec` crate: wloc needs
//! five plain structures, and `oci-spec` brings builder and getter
//! derive macros (derive_builder, getset, strum) that would add more
//! compile time than these lines; unknown fields are kept out of the
//! way by serde's defaults either way.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Media type of an OCI image manifest (one home: the signature checks
/// of wloc-trust read the same manifests).
pub const MANIFEST: &str = wloc_trust::cosign::OCI_MANIFEST_MEDIA_TYPE;
/// Media type of an OCI image index.
pub const INDEX: &str = "application/vnd.oci.image.index.v1+json";
/// Media type of the Wasm artifact's config (CNCF TAG Runtime, wkg).
pub const WASM_CONFIG: &str = "application/vnd.wasm.config.v0+json";
/// Media type of the Wasm artifact's one layer.
pub const WASM_LAYER: &str = wloc_trust::cosign::WASM_LAYER_MEDIA_TYPE;
/// The annotation naming a manifest in a layout's `index.json`.
pub const REF_NAME: &str = "org.opencontainers.image.ref.name";
/// The annotation giving an artifact's version.
pub const VERSION: &str = "org.opencontainers.image.version";
/// The annotation giving an artifact's title.
pub const TITLE: &str = "org.opencontainers.image.title";
/// Media type of a cosign simple-signing payload layer.
pub const COSIGN_PAYLOAD: &str = wloc_trust::cosign::SIMPLESIGNING_MEDIA_TYPE;

/// A content descriptor.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    /// What the content is.
    pub media_type: String,
    /// `sha256:HEX`.
    pub digest: String,
    /// Its size in bytes.
    pub size: u64,
    /// Annotations.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// An image manifest.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// Always 2.
    pub schema_version: u32,
    /// [`MANIFEST`] (optional in the specification, always written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// The artifact type, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_type: Option<String>,
    /// The config blob.
    pub config: Descriptor,
    /// The layers.
    pub layers: Vec<Descriptor>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// An image index (also a layout folder's `index.json`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Index {
    /// Always 2.
    pub schema_version: u32,
    /// [`INDEX`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// The manifests.
    pub manifests: Vec<Descriptor>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// What the Wasm artifact's config says of the component.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
pub struct ComponentInfo {
    /// Its exports.
    #[serde(default)]
    pub exports: Vec<String>,
    /// Its imports.
    #[serde(default)]
    pub imports: Vec<String>,
    /// The world it targets, if known.
    #[serde(default)]
    pub target: Option<String>,
}

/// The config of a Wasm artifact (`application/vnd.wasm.config.v0+json`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WasmConfig {
    /// When it was made (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// Who made it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// Always `wasm`.
    pub architecture: String,
    /// `wasip2` for a component.
    pub os: String,
    /// The digests of the layers.
    #[serde(default)]
    pub layer_digests: Vec<String>,
    /// The component's imports and exports (absent for a core module).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<ComponentInfo>,
}

/// Whether `d` is `sha256:` and 64 lowercase hexadecimal digits.
pub fn valid_digest(d: &str) -> bool {
    d.strip_prefix("sha256:").is_some_and(|h| {
        h.len() == 64
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

impl Descriptor {
    /// [`Descriptor::check`], and an announced size of at most `limit`
    /// (refused before any download).
    pub fn check_within(&self, what: &str, limit: u64) -> Result<(), crate::OciError> {
        self.check(what)?;
        if self.size > limit {
            return Err(crate::OciError::TooLarge {
                what: what.to_string(),
                size: self.size,
                limit,
            });
        }
        Ok(())
    }

    /// Checks the digest's form (it names a file in a layout folder).
    pub fn check(&self, what: &str) -> Result<(), crate::OciError> {
        if valid_digest(&self.digest) {
            Ok(())
        } else {
            Err(crate::OciError::invalid(
                what,
                format!(
                    "digest {:?} is not sha256:<64 hexadecimal digits>",
                    wloc_trust::text::sanitize(&self.digest, 80)
                ),
            ))
        }
    }
}
