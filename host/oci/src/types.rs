//! The OCI documents wloc reads and writes, and the Wasm artifact's config.
//!
//! The media types, descriptors, manifests and indexes have one home,
//! `wloc_trust::oci`, shared with the registry signatures' checks; the
//! Wasm config, which only the artifact code reads, is here.

use serde::{Deserialize, Serialize};

pub use wloc_trust::bundle::BUNDLE_MEDIA_TYPE;
pub use wloc_trust::cosign::SIMPLESIGNING_MEDIA_TYPE as COSIGN_PAYLOAD;
pub use wloc_trust::oci::{
    DOCKER_MANIFEST, Descriptor, INDEX, Index, MANIFEST, Manifest, REF_NAME, TITLE, VERSION,
    WASM_CONFIG, WASM_LAYER, valid_digest,
};

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

/// Checks of a descriptor before its blob is fetched.
pub trait DescriptorChecks {
    /// [`DescriptorChecks::check`], and an announced size of at most
    /// `limit` (refused before any download).
    fn check_within(&self, what: &str, limit: u64) -> Result<(), crate::OciError>;
    /// Checks the digest's form (it names a file in a layout folder).
    fn check(&self, what: &str) -> Result<(), crate::OciError>;
}

impl DescriptorChecks for Descriptor {
    fn check_within(&self, what: &str, limit: u64) -> Result<(), crate::OciError> {
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

    fn check(&self, what: &str) -> Result<(), crate::OciError> {
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
