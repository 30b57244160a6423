//! One interface over a registry and a layout folder: pull (an artifact
//! checked whole, and the cosign signatures and Sigstore bundles found
//! beside it), push and copy (mirror), list versions.

use crate::OciError;
use crate::artifact::{Artifact, MAX_CONFIG_BYTES, check_config, check_manifest};
use crate::client::{Client, MAX_MANIFEST_BYTES};
use crate::layout::Layout;
use crate::reference::Reference;
use crate::types::DescriptorChecks as _;
use crate::types::{
    BUNDLE_MEDIA_TYPE, DOCKER_MANIFEST, Descriptor, INDEX, Index, MANIFEST, Manifest, WasmConfig,
};

/// Most layers of a signature manifest fetched (the number the signature
/// checks read), and the size of each.
const MAX_SIGNATURE_LAYERS: usize = wloc_trust::cosign::MAX_SIGNATURES;
const MAX_SIGNATURE_BLOB: u64 = 1 << 20;
/// Most Sigstore bundles read beside an artifact; each bundle manifest,
/// blob and the index listing them is at most [`MAX_SIGNATURE_BLOB`].
const MAX_BUNDLES: usize = 32;

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

/// A Sigstore bundle found beside an artifact (cosign v3's signature):
/// an image manifest whose subject is the artifact's manifest, listed
/// by the registry's referrers API or the referrers tag `sha256-HEX`,
/// and its blobs, every one checked against its digest.  What verifies
/// it is in `wloc-trust` ([`wloc_trust::bundle`]).
#[derive(Clone, Debug)]
pub struct BundleArtifact {
    /// The bundle manifest's bytes (kept byte for byte: its digest is
    /// what the referrers index names).
    pub manifest: Vec<u8>,
    /// Its descriptor in the referrers index (with its artifact type).
    pub descriptor: Descriptor,
    /// Its config blob (the OCI empty blob `{}`), copied by a mirror.
    pub config: Vec<u8>,
    /// Its one layer: the bundle's JSON.
    pub bundle: Vec<u8>,
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
    /// Sigstore bundles found beside it.
    pub bundles: Vec<BundleArtifact>,
    /// Why signatures or bundles found beside it could not be fetched (a
    /// layer too large, a blob missing, a malformed signature manifest,
    /// a referrer about another subject): anyone who may add a signature
    /// can add a bad one, so these never fail the pull; they are shown
    /// with the refused signatures.
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

/// The referrers tag (`sha256-HEX`) of a manifest digest.
pub fn referrers_tag(manifest_digest: &str) -> Result<String, OciError> {
    wloc_trust::bundle::referrers_tag(manifest_digest)
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
        let (signatures, mut signature_problems) = match self.signatures(&manifest_digest) {
            Ok(found) => found,
            Err(e) => (Vec::new(), vec![e.to_string()]),
        };
        let bundles = self.bundles(&manifest_digest, &mut signature_problems);
        Ok(Pulled {
            manifest,
            manifest_digest,
            parsed,
            config_bytes,
            config,
            component,
            signatures,
            bundles,
            signature_problems,
        })
    }

    /// The referrers of a manifest: the registry's referrers API, else
    /// (no API, or a layout folder) the index tagged `sha256-HEX`; an
    /// empty list if neither has any.
    fn referrers(&self, manifest_digest: &str) -> Result<Vec<Descriptor>, OciError> {
        let tag = referrers_tag(manifest_digest)?;
        let what = format!("referrers of {manifest_digest} in {}", self.describe());
        let api = match self {
            Store::Registry { client, reference } => {
                client.referrers(reference, manifest_digest, MAX_SIGNATURE_BLOB)?
            }
            Store::Layout { .. } => None,
        };
        let bytes = match api {
            Some(b) => b,
            None => match self.manifest_named(Some(&tag))? {
                Some((b, _, _)) => b,
                None => return Ok(Vec::new()),
            },
        };
        if bytes.len() as u64 > MAX_SIGNATURE_BLOB {
            return Err(OciError::TooLarge {
                what,
                size: bytes.len() as u64,
                limit: MAX_SIGNATURE_BLOB,
            });
        }
        let index: Index = serde_json::from_slice(&bytes)
            .map_err(|e| OciError::invalid(&what, format!("not an OCI image index: {e}")))?;
        if index.schema_version != 2 || index.media_type.as_deref().is_some_and(|t| t != INDEX) {
            return Err(OciError::invalid(&what, "not an OCI image index"));
        }
        Ok(index.manifests)
    }

    /// The Sigstore bundles beside a manifest: the referrers of artifact
    /// type [`BUNDLE_MEDIA_TYPE`] (others, such as SBOMs, are not read),
    /// at most 32, each an image manifest of that artifact type whose
    /// subject is `manifest_digest`, with one bundle layer.
    /// Why one could not be read is added to `problems` (the others are
    /// still read: a bad referrer anyone added must not hide them).
    pub fn bundles(
        &self,
        manifest_digest: &str,
        problems: &mut Vec<String>,
    ) -> Vec<BundleArtifact> {
        let listed: Vec<Descriptor> = match self.referrers(manifest_digest) {
            Ok(all) => all
                .into_iter()
                .filter(|d| d.artifact_type.as_deref() == Some(BUNDLE_MEDIA_TYPE))
                .collect(),
            Err(e) => {
                problems.push(e.to_string());
                return Vec::new();
            }
        };
        if listed.len() > MAX_BUNDLES {
            problems.push(
                OciError::invalid(
                    format!("referrers of {manifest_digest} in {}", self.describe()),
                    format!("{} Sigstore bundles (at most {MAX_BUNDLES})", listed.len()),
                )
                .to_string(),
            );
            return Vec::new();
        }
        let mut out = Vec::new();
        for d in listed {
            match self.bundle(manifest_digest, d) {
                Ok(b) => out.push(b),
                Err(e) => problems.push(e.to_string()),
            }
        }
        out
    }

    /// One bundle a referrer lists: its manifest of the bundle artifact
    /// type, about `manifest_digest`, with one bundle layer.
    fn bundle(&self, manifest_digest: &str, d: Descriptor) -> Result<BundleArtifact, OciError> {
        {
            let what = format!(
                "Sigstore bundle manifest {} of {}",
                d.digest,
                self.describe()
            );
            d.check_within(&what, MAX_SIGNATURE_BLOB)?;
            if d.media_type != MANIFEST {
                return Err(OciError::invalid(
                    &what,
                    format!(
                        "media type {:?}, not {MANIFEST}",
                        wloc_trust::text::sanitize(&d.media_type, 100)
                    ),
                ));
            }
            let manifest = match self {
                Store::Registry { client, reference } => {
                    client.manifest(&reference.with_digest(&d.digest))?.0
                }
                Store::Layout { layout, .. } => layout.read_blob(&d, MAX_SIGNATURE_BLOB)?,
            };
            crate::check_blob(&what, &manifest, &d)?;
            let m =
                Manifest::parse(&manifest, &[MANIFEST]).map_err(|e| OciError::invalid(&what, e))?;
            if m.artifact_type.as_deref() != Some(BUNDLE_MEDIA_TYPE) {
                return Err(OciError::invalid(
                    &what,
                    format!("its artifact type is not {BUNDLE_MEDIA_TYPE}"),
                ));
            }
            if m.subject.as_ref().map(|s| s.digest.as_str()) != Some(manifest_digest) {
                return Err(OciError::invalid(
                    &what,
                    format!("its subject is not {manifest_digest}"),
                ));
            }
            let [layer] = m.layers.as_slice() else {
                return Err(OciError::invalid(
                    &what,
                    format!("{} layers, not one bundle", m.layers.len()),
                ));
            };
            let config = self.blob(&m.config, MAX_SIGNATURE_BLOB)?;
            let bundle = self.blob(layer, MAX_SIGNATURE_BLOB)?;
            Ok(BundleArtifact {
                manifest,
                descriptor: d,
                config,
                bundle,
            })
        }
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
                        artifact_type: None,
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
    /// signatures and Sigstore bundles.
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
        self.put_bundles(&p.manifest_digest, &p.bundles)
    }

    /// Stores Sigstore bundles of the artifact `manifest_digest`: each
    /// bundle manifest byte for byte under its digest, with its blobs,
    /// and each listed in the referrers index tagged `sha256-HEX` (what
    /// was already listed there is kept), which registries without the
    /// referrers API and layout folders are read through.
    pub fn put_bundles(
        &self,
        manifest_digest: &str,
        bundles: &[BundleArtifact],
    ) -> Result<(), OciError> {
        if bundles.is_empty() {
            return Ok(());
        }
        let tag = referrers_tag(manifest_digest)?;
        for b in bundles {
            match self {
                Store::Registry { client, reference } => {
                    client.push_blob(reference, &b.config)?;
                    client.push_blob(reference, &b.bundle)?;
                    client.push_manifest(reference, &b.descriptor.digest, &b.manifest, MANIFEST)?;
                }
                Store::Layout { layout, .. } => {
                    layout.write_blob(&b.config)?;
                    layout.write_blob(&b.bundle)?;
                    layout.write_blob(&b.manifest)?;
                }
            }
        }
        let what = format!("referrers index {tag} of {}", self.describe());
        let mut index = match self.manifest_named(Some(&tag))? {
            Some((bytes, _, _)) => serde_json::from_slice::<Index>(&bytes)
                .map_err(|e| OciError::invalid(&what, format!("not an OCI image index: {e}")))?,
            None => Index {
                schema_version: 2,
                media_type: Some(INDEX.into()),
                manifests: Vec::new(),
                annotations: Default::default(),
            },
        };
        for b in bundles {
            if !index
                .manifests
                .iter()
                .any(|d| d.digest == b.descriptor.digest)
            {
                let mut d = b.descriptor.clone();
                d.annotations.remove(crate::types::REF_NAME);
                index.manifests.push(d);
            }
        }
        let bytes =
            serde_json::to_vec(&index).map_err(|e| OciError::invalid(&what, e.to_string()))?;
        self.put(&tag, &bytes, INDEX, &[])
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
