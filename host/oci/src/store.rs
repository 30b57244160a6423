//! One interface over a registry and a layout folder: pull (an artifact
//! checked whole, and the cosign signatures found beside it), push and
//! copy (mirror), list versions.

use crate::OciError;
use crate::artifact::{Artifact, MAX_CONFIG_BYTES, check_config, check_manifest};
use crate::client::{Client, MAX_MANIFEST_BYTES};
use crate::layout::Layout;
use crate::reference::Reference;
use crate::types::{DOCKER_MANIFEST, Descriptor, MANIFEST, Manifest, WasmConfig};

/// Most layers of a signature manifest fetched (the number the signature
/// checks read), and the size of each.
const MAX_SIGNATURE_LAYERS: usize = wloc_trust::cosign::MAX_SIGNATURES;
const MAX_SIGNATURE_BLOB: u64 = 1 << 20;

/// A cosign signature artifact found beside an artifact: the manifest of
/// the tag `sha256-HEX.sig` (HEX: the artifact manifest's digest) in the
/// same repository, and each of its layers with its descriptor.  Every
/// blob was checked against its digest.  What verifies them is in
/// `wloc-trust`; this crate only fetches them.
#[derive(Clone, Debug)]
pub struct SignatureArtifact {
    /// The signature manifest's bytes.
    pub manifest: Vec<u8>,
    /// Its config blob (copied with it by a mirror).
    pub config: Vec<u8>,
    /// Each layer: its descriptor as JSON text (media type, digest, size,
    /// annotations such as `dev.cosignproject.cosign/signature`) and its
    /// bytes (the simple-signing payload; none when it could not be
    /// fetched).
    pub layers: Vec<(String, Vec<u8>)>,
    /// Whether every blob was fetched (only then is it mirrored).
    pub complete: bool,
}

/// An artifact pulled and checked: media types, one Wasm layer, every
/// digest and size.
#[derive(Clone, Debug)]
pub struct Pulled {
    /// The manifest's bytes.
    pub manifest: Vec<u8>,
    /// Its digest (`sha256:HEX`).
    pub manifest_digest: String,
    /// The manifest.
    pub parsed: Manifest,
    /// The config's bytes.
    pub config_bytes: Vec<u8>,
    /// The config.
    pub config: WasmConfig,
    /// The component.
    pub component: Vec<u8>,
    /// Cosign signatures found beside it.
    pub signatures: Vec<SignatureArtifact>,
    /// Why signatures found beside it could not be fetched (a layer too
    /// large, a blob missing, a malformed signature manifest): anyone who
    /// may add a signature can add a bad one, so these never fail the
    /// pull; they are shown with the refused signatures.
    pub signature_problems: Vec<String>,
}

/// Where artifacts are read or written.
pub enum Store<'a> {
    /// A registry repository (its tag or digest: the artifact).
    Registry {
        /// The client.
        client: &'a Client,
        /// The reference.
        reference: Reference,
    },
    /// A layout folder (the name: the artifact).
    Layout {
        /// The folder.
        layout: Layout,
        /// The name in its index.
        name: Option<String>,
    },
}

/// The cosign tag (`sha256-HEX.sig`) of a manifest digest.
pub fn signature_tag(manifest_digest: &str) -> Result<String, OciError> {
    wloc_trust::cosign::signature_tag(manifest_digest)
        .map_err(|e| OciError::invalid("manifest digest", e))
}

impl Store<'_> {
    /// What it is, for messages.
    pub fn describe(&self) -> String {
        match self {
            Store::Registry { reference, .. } => reference.to_string(),
            Store::Layout { layout, name } => match name {
                Some(n) => format!("oci:{}:{n}", layout.dir().display()),
                None => format!("oci:{}", layout.dir().display()),
            },
        }
    }

    /// A manifest's bytes, media type and digest, by tag/name (`None`:
    /// the store's own) ; `Ok(None)` if there is none of that name.
    fn manifest_named(
        &self,
        name: Option<&str>,
    ) -> Result<Option<(Vec<u8>, String, String)>, OciError> {
        let r = match self {
            Store::Registry { client, reference } => {
                let r = match name {
                    Some(n) => reference.with_tag(n),
                    None => reference.clone(),
                };
                client.manifest(&r)
            }
            Store::Layout { layout, name: own } => {
                layout.resolve(name.or(own.as_deref())).and_then(|d| {
                    let bytes = layout.read_blob(&d, MAX_MANIFEST_BYTES)?;
                    Ok((bytes, d.media_type.clone(), d.digest))
                })
            }
        };
        match r {
            Ok(m) => Ok(Some(m)),
            Err(OciError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn blob(&self, d: &Descriptor, limit: u64) -> Result<Vec<u8>, OciError> {
        match self {
            Store::Registry { client, reference } => client.blob(reference, d, limit),
            Store::Layout { layout, .. } => layout.read_blob(d, limit),
        }
    }

    /// Pulls the artifact, the component refused if announced larger
    /// than `max_component` bytes (before it is downloaded).
    pub fn pull(&self, max_component: u64) -> Result<Pulled, OciError> {
        let what = format!("manifest of {}", self.describe());
        let (manifest, media_type, manifest_digest) = self
            .manifest_named(None)?
            .ok_or_else(|| OciError::NotFound(self.describe()))?;
        let parsed = check_manifest(&what, &manifest, &media_type)?;
        let layer = &parsed.layers[0];
        // Sizes first: nothing is downloaded if either is too large.
        for (d, limit, w) in [
            (&parsed.config, MAX_CONFIG_BYTES, "config"),
            (layer, max_component, "component layer"),
        ] {
            if d.size > limit {
                return Err(OciError::TooLarge {
                    what: format!("the {w} of {} (announced)", self.describe()),
                    size: d.size,
                    limit,
                });
            }
        }
        let config_bytes = self.blob(&parsed.config, MAX_CONFIG_BYTES)?;
        let config = check_config(
            &format!("config of {}", self.describe()),
            &config_bytes,
            layer,
        )?;
        let component = self.blob(layer, max_component)?;
        let (signatures, signature_problems) = match self.signatures(&manifest_digest) {
            Ok(found) => found,
            Err(e) => (Vec::new(), vec![e.to_string()]),
        };
        Ok(Pulled {
            manifest,
            manifest_digest,
            parsed,
            config_bytes,
            config,
            component,
            signatures,
            signature_problems,
        })
    }

    /// The cosign signature artifact beside a manifest, if any, and why
    /// some of its blobs could not be fetched.  A layer that cannot be
    /// fetched (too large, missing, not its digest) is kept with no bytes,
    /// so that the signature checks refuse that layer alone and the
    /// others still count; the artifact is then not copied by a mirror.
    pub fn signatures(
        &self,
        manifest_digest: &str,
    ) -> Result<(Vec<SignatureArtifact>, Vec<String>), OciError> {
        let tag = signature_tag(manifest_digest)?;
        let Some((bytes, _, _)) = self.manifest_named(Some(&tag))? else {
            return Ok((Vec::new(), Vec::new()));
        };
        let what = format!("signature manifest {tag} of {}", self.describe());
        let m = Manifest::parse(&bytes, &[MANIFEST, DOCKER_MANIFEST])
            .map_err(|e| OciError::invalid(&what, e))?;
        if m.layers.len() > MAX_SIGNATURE_LAYERS {
            return Err(OciError::invalid(
                &what,
                format!("{} layers (at most {MAX_SIGNATURE_LAYERS})", m.layers.len()),
            ));
        }
        let mut problems = Vec::new();
        let mut fetch = |d: &Descriptor| match self.blob(d, MAX_SIGNATURE_BLOB) {
            Ok(b) => b,
            Err(e) => {
                problems.push(format!("{what}: {e}"));
                Vec::new()
            }
        };
        let config = fetch(&m.config);
        let mut layers = Vec::new();
        for l in &m.layers {
            let b = fetch(l);
            let json =
                serde_json::to_string(l).map_err(|e| OciError::invalid(&what, e.to_string()))?;
            layers.push((json, b));
        }
        let complete = problems.is_empty();
        Ok((
            vec![SignatureArtifact {
                manifest: bytes,
                config,
                layers,
                complete,
            }],
            problems,
        ))
    }

    /// Stores a manifest and its blobs under `tag`.
    fn put(
        &self,
        tag: &str,
        manifest: &[u8],
        media_type: &str,
        blobs: &[&[u8]],
    ) -> Result<(), OciError> {
        match self {
            Store::Registry { client, reference } => {
                for b in blobs {
                    client.push_blob(reference, b)?;
                }
                client.push_manifest(reference, tag, manifest, media_type)
            }
            Store::Layout { layout, .. } => {
                for b in blobs {
                    layout.write_blob(b)?;
                }
                let digest = layout.write_blob(manifest)?;
                layout.tag(
                    tag,
                    Descriptor {
                        media_type: media_type.into(),
                        digest,
                        size: manifest.len() as u64,
                        annotations: Default::default(),
                    },
                )
            }
        }
    }

    /// The tag or name pushes go to (`latest` if none).
    pub fn tag(&self) -> String {
        match self {
            Store::Registry { reference, .. } => {
                reference.tag.clone().unwrap_or_else(|| "latest".into())
            }
            Store::Layout { name, .. } => name.clone().unwrap_or_else(|| "latest".into()),
        }
    }

    /// Pushes an artifact under the store's tag; its manifest digest.
    pub fn push(&self, a: &Artifact) -> Result<String, OciError> {
        self.put(&self.tag(), &a.manifest, MANIFEST, &[&a.config, &a.layer])?;
        Ok(crate::digest_of(&a.manifest))
    }

    /// Copies a pulled artifact here under the store's tag, byte for
    /// byte (so its digest, which signatures name, is kept), with its
    /// signatures.
    pub fn copy_in(&self, p: &Pulled) -> Result<(), OciError> {
        self.put(
            &self.tag(),
            &p.manifest,
            MANIFEST,
            &[&p.config_bytes, &p.component],
        )?;
        for s in p.signatures.iter().filter(|s| s.complete) {
            let blobs: Vec<&[u8]> = std::iter::once(s.config.as_slice())
                .chain(s.layers.iter().map(|(_, b)| b.as_slice()))
                .collect();
            self.put_signature(&p.manifest_digest, &s.manifest, &blobs)?;
        }
        Ok(())
    }

    /// Stores a cosign signature manifest (and its blobs) of the artifact
    /// `manifest_digest` where cosign looks for it: the tag
    /// `sha256-HEX.sig` beside the artifact.
    pub fn put_signature(
        &self,
        manifest_digest: &str,
        manifest: &[u8],
        blobs: &[&[u8]],
    ) -> Result<(), OciError> {
        self.put(&signature_tag(manifest_digest)?, manifest, MANIFEST, blobs)
    }

    /// The tags (registry) or names (layout) there.
    pub fn tags(&self) -> Result<Vec<String>, OciError> {
        match self {
            Store::Registry { client, reference } => client.tags(reference),
            Store::Layout { layout, .. } => {
                Ok(layout.names()?.into_iter().filter_map(|(n, _)| n).collect())
            }
        }
    }

    /// The same store at another tag or name.
    pub fn at(&self, tag: &str) -> Store<'_> {
        match self {
            Store::Registry { client, reference } => Store::Registry {
                client,
                reference: reference.with_tag(tag),
            },
            Store::Layout { layout, .. } => Store::Layout {
                layout: Layout::open_unchecked(layout.dir()),
                name: Some(tag.to_string()),
            },
        }
    }
}

/// The semver versions among `tags`, highest first.
pub fn versions(tags: &[String]) -> Vec<semver::Version> {
    let mut v: Vec<semver::Version> = tags
        .iter()
        .filter_map(|t| semver::Version::parse(t).ok())
        .collect();
    v.sort();
    v.reverse();
    v
}
