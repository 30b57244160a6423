//! `wloc-oci`: components shipped the way WebAssembly is shipped.
//!
//! * [`reference`]: OCI references (`registry/repository:tag@digest`),
//!   image layout references (`oci:DIR:NAME`, as skopeo writes them) and
//!   wkg package names (`ns:pkg@version`);
//! * [`wkg`]: resolving a wkg name to a reference as `wkg` does (its
//!   configuration file and the registry's well-known metadata);
//! * [`types`]: the OCI manifest, index and descriptor, and the Wasm
//!   artifact's config (CNCF TAG Runtime "Wasm OCI Artifact layout");
//! * [`artifact`]: building a component's artifact and checking a pulled
//!   one (media types, one `application/wasm` layer, sizes);
//! * [`client`]: the OCI distribution protocol (manifests, blobs, tags,
//!   monolithic upload, bearer and basic authentication), bounded in time
//!   and size, every blob checked against its digest;
//! * [`layout`]: the OCI image layout folder (`oci-layout`, `index.json`,
//!   `blobs/sha256`), written atomically;
//! * [`store`]: one interface over a registry and a layout folder, used
//!   by pull, push and mirror; [`SignatureArtifact`]s found beside an
//!   artifact (cosign's `sha256-HEX.sig` tag) and [`BundleArtifact`]s
//!   (Sigstore bundles: the referrers API, or the `sha256-HEX` tag).

pub mod artifact;
pub mod client;
pub mod error;
pub mod layout;
pub mod reference;
pub mod store;
pub mod types;
pub mod wkg;

pub use error::OciError;
pub use store::{BundleArtifact, Pulled, SignatureArtifact, Store, referrers_tag, signature_tag};

pub use wloc_trust::oci::digest_of;

/// Checks that `bytes` are what the descriptor `d` names.
pub fn check_blob(what: &str, bytes: &[u8], d: &types::Descriptor) -> Result<(), OciError> {
    d.verify(bytes).map_err(|e| match e {
        wloc_trust::oci::BlobMismatch::Size { .. } => OciError::Invalid {
            what: what.to_string(),
            why: e.to_string(),
        },
        wloc_trust::oci::BlobMismatch::Digest { expected, actual } => OciError::Digest {
            what: what.to_string(),
            expected,
            actual,
        },
    })
}
