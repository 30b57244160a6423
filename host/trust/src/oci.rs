//! The OCI documents that carry components and their registry
//! signatures: media types, descriptors, image manifests and indexes,
//! and the digest of a blob.  One home for both readers: the signature
//! checks here ([`crate::cosign`]) and the registry client and layout
//! folders of `wloc-oci`.
//!
//! Written here rather than taken from the `oci-spec` crate: wloc needs
//! three plain structures, and `oci-spec` brings builder and getter
//! derive macros (derive_builder, getset, strum) that would add more
//! compile time than these lines.  Unknown fields are ignored; a
//! repeated annotation key is refused rather than resolved, because Go
//! clients keep the last value and others the first, and a signature
//! must not mean two things.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::digest::sha256_hex;

/// Media type of an OCI image manifest.
pub const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// Media type of a Docker image manifest (schema 2), which older
/// signers use for signature manifests.
pub const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
/// Media type of an OCI image index.
pub const INDEX: &str = "application/vnd.oci.image.index.v1+json";
/// Media type of the Wasm artifact's config (CNCF TAG Runtime, wkg).
pub const WASM_CONFIG: &str = "application/vnd.wasm.config.v0+json";
/// Media type of the Wasm artifact's one layer.
pub const WASM_LAYER: &str = "application/wasm";
/// The annotation naming a manifest in a layout's `index.json`.
pub const REF_NAME: &str = "org.opencontainers.image.ref.name";
/// The annotation giving an artifact's version.
pub const VERSION: &str = "org.opencontainers.image.version";
/// The annotation giving an artifact's title.
pub const TITLE: &str = "org.opencontainers.image.title";
/// Media type of the OCI empty descriptor's blob (`{}`), the config of
/// artifacts that have none, such as Sigstore bundles.
pub const EMPTY: &str = "application/vnd.oci.empty.v1+json";

/// `sha256:HEX` of `bytes`, the digest form of OCI.
pub fn digest_of(bytes: &[u8]) -> String {
    format!("sha256:{}", sha256_hex(bytes))
}

/// Whether `d` is `sha256:` and 64 lowercase hexadecimal digits (the only
/// form wloc accepts: it also names a file in a layout folder).
pub fn valid_digest(d: &str) -> bool {
    d.strip_prefix("sha256:").is_some_and(|h| {
        h.len() == 64
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

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
    /// The artifact type of the manifest it names (in an index of
    /// referrers, what each referrer is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_type: Option<String>,
    /// Annotations (each key once).
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "unique_keys"
    )]
    pub annotations: BTreeMap<String, String>,
}

/// Bytes that are not what their descriptor names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlobMismatch {
    /// The size differs (checked first: it needs no hashing).
    Size {
        /// Announced.
        announced: u64,
        /// Received.
        received: u64,
    },
    /// The digest differs, or is not `sha256:HEX`.
    Digest {
        /// Named by the descriptor.
        expected: String,
        /// Of the bytes received.
        actual: String,
    },
}

impl fmt::Display for BlobMismatch {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            BlobMismatch::Size {
                announced,
                received,
            } => write!(f, "{received} bytes received, {announced} announced"),
            BlobMismatch::Digest { expected, actual } => write!(
                f,
                "digest mismatch: expected {}, received {actual}",
                crate::text::sanitize(expected, 80)
            ),
        }
    }
}

impl Descriptor {
    /// Checks that `blob` has this descriptor's size and digest.
    pub fn verify(&self, blob: &[u8]) -> Result<(), BlobMismatch> {
        if blob.len() as u64 != self.size {
            return Err(BlobMismatch::Size {
                announced: self.size,
                received: blob.len() as u64,
            });
        }
        let actual = digest_of(blob);
        if actual != self.digest {
            return Err(BlobMismatch::Digest {
                expected: self.digest.clone(),
                actual,
            });
        }
        Ok(())
    }
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
    /// The manifest this one refers to (a signature or bundle names the
    /// artifact it is about), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<Descriptor>,
    /// Annotations (each key once).
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "unique_keys"
    )]
    pub annotations: BTreeMap<String, String>,
}

impl Manifest {
    /// Parses an image manifest: JSON of this shape, `schemaVersion` 2,
    /// and a media type that is absent or one of `media_types`.  The
    /// error says what was wrong, for the caller to name the manifest.
    pub fn parse(bytes: &[u8], media_types: &[&str]) -> Result<Manifest, String> {
        let m: Manifest =
            serde_json::from_slice(bytes).map_err(|e| format!("not an OCI image manifest: {e}"))?;
        if m.schema_version != 2 {
            return Err(format!("schemaVersion {}, not 2", m.schema_version));
        }
        if let Some(t) = &m.media_type
            && !media_types.contains(&t.as_str())
        {
            return Err(format!(
                "media type {:?}, not {}",
                crate::text::sanitize(t, 100),
                media_types.join(" or ")
            ));
        }
        Ok(m)
    }
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
    /// Annotations (each key once).
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "unique_keys"
    )]
    pub annotations: BTreeMap<String, String>,
}

/// A JSON object of strings whose keys appear once: a repeated key is
/// refused rather than resolved.
fn unique_keys<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, String>, D::Error> {
    struct Strings;
    impl<'de> serde::de::Visitor<'de> for Strings {
        type Value = BTreeMap<String, String>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object of strings")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut m: A,
        ) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some((k, v)) = m.next_entry::<String, String>()? {
                if out.contains_key(&k) {
                    return Err(serde::de::Error::custom(format!("repeated key {k:?}")));
                }
                out.insert(k, v);
            }
            Ok(out)
        }
        // `"annotations": null` is read as none, as Go writes an empty map.
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(BTreeMap::new())
        }
    }
    d.deserialize_any(Strings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(extra: &str) -> String {
        format!(
            r#"{{"schemaVersion":2,"mediaType":"{MANIFEST}","config":{{"mediaType":"{WASM_CONFIG}","digest":"sha256:{z}","size":2}},"layers":[{{"mediaType":"{WASM_LAYER}","digest":"sha256:{z}","size":2{extra}}}]}}"#,
            z = "0".repeat(64)
        )
    }

    #[test]
    fn manifests_are_read_and_checked() {
        let m = Manifest::parse(manifest("").as_bytes(), &[MANIFEST]).unwrap();
        assert_eq!(m.layers[0].media_type, WASM_LAYER);
        assert!(m.layers[0].annotations.is_empty());
        let e = Manifest::parse(manifest("").as_bytes(), &[INDEX]).unwrap_err();
        assert!(e.contains("media type"), "{e}");
        let v3 = manifest("").replace("\"schemaVersion\":2", "\"schemaVersion\":3");
        let e = Manifest::parse(v3.as_bytes(), &[MANIFEST]).unwrap_err();
        assert!(e.contains("schemaVersion 3"), "{e}");
        assert!(Manifest::parse(b"[]", &[MANIFEST]).is_err());
    }

    #[test]
    fn a_repeated_annotation_is_refused_and_null_is_none() {
        let dup = manifest(r#","annotations":{"a":"1","a":"2"}"#);
        let e = Manifest::parse(dup.as_bytes(), &[MANIFEST]).unwrap_err();
        assert!(e.contains("repeated key"), "{e}");
        let null = manifest(r#","annotations":null"#);
        assert!(Manifest::parse(null.as_bytes(), &[MANIFEST]).is_ok());
        let not_strings = manifest(r#","annotations":{"a":1}"#);
        assert!(Manifest::parse(not_strings.as_bytes(), &[MANIFEST]).is_err());
    }

    #[test]
    fn blobs_are_checked_by_size_then_digest() {
        let d = Descriptor {
            media_type: WASM_LAYER.into(),
            digest: digest_of(b"ab"),
            size: 2,
            artifact_type: None,
            annotations: BTreeMap::new(),
        };
        assert_eq!(d.verify(b"ab"), Ok(()));
        assert!(matches!(d.verify(b"abc"), Err(BlobMismatch::Size { .. })));
        assert!(matches!(d.verify(b"ba"), Err(BlobMismatch::Digest { .. })));
        assert!(valid_digest(&d.digest));
        assert!(!valid_digest(&d.digest.to_uppercase()));
        assert!(!valid_digest("sha512:00"));
    }
}
