//! Registry signatures in cosign's storage format, verified with a key.
//!
//! cosign stores the signatures of an artifact whose manifest has the
//! digest `sha256:HEX` as an OCI image manifest tagged `sha256-HEX.sig`
//! ([`signature_tag`]) in the same repository.  Each layer of media type
//! [`SIMPLESIGNING_MEDIA_TYPE`] is one signature:
//!
//! * the layer's blob is the *simple-signing payload*, JSON naming the
//!   signed manifest digest in `critical.image.docker-manifest-digest`
//!   (with `critical.type` = `cosign container image signature`);
//! * the annotation [`SIGNATURE_ANNOTATION`] is the base64 of the
//!   signature over the payload blob's bytes exactly as stored (ECDSA:
//!   ASN.1 DER over its SHA-256; ed25519: over the bytes themselves);
//! * keyless signatures also carry [`CERTIFICATE_ANNOTATION`] (the
//!   signer's certificate, PEM), [`CHAIN_ANNOTATION`] and
//!   [`BUNDLE_ANNOTATION`] (the transparency log's signed entry
//!   timestamp), checked by [`crate::sigstore`].
//!
//! [`parse`] reads a signature manifest and its layer blobs as fetched
//! (no HTTP here), [`verify_signature`] checks one signature and
//! [`RegistrySigners`] binds the signers to a component's bytes through
//! the artifact manifest they signed (those of cosign v3's Sigstore
//! bundles too, see [`crate::bundle`]).  [`make_signature`] writes the
//! same format (for tests, vendors and `push`).

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use der::{Decode, Encode};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use spki::{AlgorithmIdentifierOwned, ObjectIdentifier, SubjectPublicKeyInfoOwned};

use crate::digest::parse_digest;
use crate::digest::sha256_hex;
use crate::oci::{self, Descriptor, Manifest};
use crate::sigstore::TrustedRoot;

/// Media type of a layer holding a simple-signing payload.
pub const SIMPLESIGNING_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// Annotation holding the base64 signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// Annotation holding the signer's certificate (PEM).
pub const CERTIFICATE_ANNOTATION: &str = "dev.sigstore.cosign/certificate";
/// Annotation holding the certificate's chain (PEM).
pub const CHAIN_ANNOTATION: &str = "dev.sigstore.cosign/chain";
/// Annotation holding the transparency log's bundle (JSON).
pub const BUNDLE_ANNOTATION: &str = "dev.sigstore.cosign/bundle";
/// `critical.type` of a cosign payload.
pub const PAYLOAD_TYPE: &str = "cosign container image signature";

/// The media types of the manifests a signature is read from: OCI's,
/// and Docker's schema 2, which older cosign releases wrote.
const SIGNATURE_MANIFEST_TYPES: &[&str] = &[oci::MANIFEST, oci::DOCKER_MANIFEST];

/// At most this many signature layers are checked (each costs a
/// signature verification or more).
pub const MAX_SIGNATURES: usize = 64;

/// Largest payload, certificate or bundle read.
const MAX_FIELD_BYTES: usize = 1 << 20;

pub(crate) const OID_ED25519: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.112");
pub(crate) const OID_EC_PUBLIC_KEY: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
pub(crate) const OID_P256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
pub(crate) const OID_P384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.34");

/// The tag of the signature manifest of the artifact whose manifest has
/// the digest `digest` (`sha256:HEX` or `HEX`).
pub fn signature_tag(digest: &str) -> Result<String, String> {
    Ok(format!("sha256-{}.sig", parse_digest(digest)?))
}

/// Why one registry signature was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SigError {
    /// The signature manifest, a layer or an annotation is not what
    /// cosign writes.
    Malformed(String),
    /// A blob's bytes do not have the digest or size its descriptor says.
    BlobMismatch(String),
    /// The payload names another manifest digest than the one verified.
    WrongDigest {
        /// What the payload names.
        named: String,
        /// The manifest digest verified.
        expected: String,
    },
    /// No trusted key verifies the signature.
    UnknownKey,
    /// A keyless signature that does not verify with its certificate's key.
    BadSignature(String),
    /// A keyless signature while the policy names no trusted root.
    NoTrustedRoot,
    /// The certificate does not chain to the trusted root at the time the
    /// log integrated it, or does not name one identity.
    Certificate(String),
    /// The transparency log's entry is missing, altered, or signed by a
    /// log the trusted root does not list.
    Log(String),
    /// The component's bytes are not the layer of the signed manifest.
    NotThisComponent(String),
    /// A signed statement that is not a signature of an artifact (an
    /// attestation, or another payload type).
    NotASignature(String),
    /// A form of signature wloc does not verify (yet), refused as such.
    Unsupported(String),
}

impl fmt::Display for SigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SigError::Malformed(m) => write!(f, "malformed signature: {m}"),
            SigError::BlobMismatch(m) => write!(f, "signature blob altered: {m}"),
            SigError::WrongDigest { named, expected } => write!(
                f,
                "the signature is for manifest {named}, not for {expected}"
            ),
            SigError::UnknownKey => write!(f, "no trusted key verifies the signature"),
            SigError::BadSignature(m) => write!(f, "bad signature: {m}"),
            SigError::NoTrustedRoot => write!(
                f,
                "keyless signature, but the policy names no [sigstore] trusted_root"
            ),
            SigError::Certificate(m) => write!(f, "certificate refused: {m}"),
            SigError::Log(m) => write!(f, "transparency log entry refused: {m}"),
            SigError::NotThisComponent(m) => write!(f, "{m}"),
            SigError::NotASignature(m) => write!(f, "not a signature: {m}"),
            SigError::Unsupported(m) => write!(f, "not verified: {m}"),
        }
    }
}

impl std::error::Error for SigError {}

fn malformed(m: impl Into<String>) -> SigError {
    SigError::Malformed(m.into())
}

/// A public key that may sign registry signatures: ECDSA P-256 or P-384
/// (cosign's keys), or ed25519 (a wloc publisher key).  The algorithm is
/// the key's, from its SubjectPublicKeyInfo: a signature is only ever
/// checked with the algorithm of the key it is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegistryKey {
    /// ECDSA over P-256.
    P256(p256::ecdsa::VerifyingKey),
    /// ECDSA over P-384.
    P384(p384::ecdsa::VerifyingKey),
    /// ed25519.
    Ed25519(ed25519_dalek::VerifyingKey),
}

/// A hash of an ECDSA signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hash {
    Sha256,
    Sha384,
}

impl RegistryKey {
    /// Reads a DER SubjectPublicKeyInfo.
    pub fn from_spki_der(der: &[u8]) -> Result<RegistryKey, String> {
        let spki = SubjectPublicKeyInfoOwned::from_der(der)
            .map_err(|e| format!("not a DER public key (SubjectPublicKeyInfo): {e}"))?;
        RegistryKey::from_spki(&spki)
    }

    /// Reads a parsed SubjectPublicKeyInfo.
    pub fn from_spki(spki: &SubjectPublicKeyInfoOwned) -> Result<RegistryKey, String> {
        let bits = spki
            .subject_public_key
            .as_bytes()
            .ok_or("the public key has unused bits")?;
        let alg = &spki.algorithm;
        if alg.oid == OID_ED25519 {
            if alg.parameters.is_some() {
                return Err("an ed25519 key has no parameters".into());
            }
            let b: [u8; 32] = bits.try_into().map_err(|_| "an ed25519 key is 32 bytes")?;
            return ed25519_dalek::VerifyingKey::from_bytes(&b)
                .map(RegistryKey::Ed25519)
                .map_err(|_| "not a valid ed25519 point".to_string());
        }
        if alg.oid != OID_EC_PUBLIC_KEY {
            return Err(format!(
                "unsupported key algorithm {} (ECDSA P-256/P-384 or ed25519)",
                alg.oid
            ));
        }
        let curve: ObjectIdentifier = alg
            .parameters
            .as_ref()
            .and_then(|p| p.decode_as().ok())
            .ok_or("an EC key without a named curve")?;
        if curve == OID_P256 {
            p256::ecdsa::VerifyingKey::from_sec1_bytes(bits)
                .map(RegistryKey::P256)
                .map_err(|_| "not a valid P-256 point".into())
        } else if curve == OID_P384 {
            p384::ecdsa::VerifyingKey::from_sec1_bytes(bits)
                .map(RegistryKey::P384)
                .map_err(|_| "not a valid P-384 point".into())
        } else {
            Err(format!("unsupported curve {curve} (P-256 or P-384)"))
        }
    }

    /// Reads a PEM `PUBLIC KEY` (PKIX), as `cosign generate-key-pair`
    /// writes `cosign.pub`.
    pub fn from_pem(text: &str) -> Result<RegistryKey, String> {
        let (label, der) = der::pem::decode_vec(text.trim().as_bytes())
            .map_err(|e| format!("not a PEM public key: {e}"))?;
        if label != "PUBLIC KEY" {
            return Err(format!("PEM label {label:?} is not \"PUBLIC KEY\""));
        }
        RegistryKey::from_spki_der(&der)
    }

    /// The key's SubjectPublicKeyInfo in DER, in one canonical form
    /// (uncompressed EC points), so that equal keys have equal bytes.
    pub fn spki_der(&self) -> Vec<u8> {
        let (oid, params, bits): (ObjectIdentifier, Option<ObjectIdentifier>, Vec<u8>) = match self
        {
            RegistryKey::P256(k) => (
                OID_EC_PUBLIC_KEY,
                Some(OID_P256),
                k.to_encoded_point(false).as_bytes().to_vec(),
            ),
            RegistryKey::P384(k) => (
                OID_EC_PUBLIC_KEY,
                Some(OID_P384),
                k.to_encoded_point(false).as_bytes().to_vec(),
            ),
            RegistryKey::Ed25519(k) => (OID_ED25519, None, k.as_bytes().to_vec()),
        };
        let spki = SubjectPublicKeyInfoOwned {
            algorithm: AlgorithmIdentifierOwned {
                oid,
                parameters: params.map(|p| der::Any::encode_from(&p).expect("an OID encodes")),
            },
            subject_public_key: der::asn1::BitString::from_bytes(&bits).expect("bytes encode"),
        };
        spki.to_der().expect("a key info encodes")
    }

    /// The key as PEM `PUBLIC KEY` text.
    pub fn to_pem(&self) -> String {
        der::pem::encode_string("PUBLIC KEY", der::pem::LineEnding::LF, &self.spki_der())
            .expect("PEM encodes")
    }

    /// `sha256:HEX` of [`RegistryKey::spki_der`]: how messages name it.
    pub fn fingerprint(&self) -> String {
        format!("sha256:{}", sha256_hex(&self.spki_der()))
    }

    /// Verifies `sig` over `msg`: ECDSA signatures are ASN.1 DER over the
    /// `hash` of `msg`, ed25519 ones are 64 bytes over `msg` itself
    /// (strict verification: no malleable signatures or weak keys).
    pub(crate) fn verify_with(&self, hash: Hash, msg: &[u8], sig: &[u8]) -> bool {
        use p256::ecdsa::signature::hazmat::PrehashVerifier;
        let prehash = || match hash {
            Hash::Sha256 => Sha256::digest(msg).to_vec(),
            Hash::Sha384 => sha2::Sha384::digest(msg).to_vec(),
        };
        match self {
            RegistryKey::P256(k) => p256::ecdsa::Signature::from_der(sig)
                .is_ok_and(|s| k.verify_prehash(&prehash(), &s).is_ok()),
            RegistryKey::P384(k) => p384::ecdsa::Signature::from_der(sig)
                .is_ok_and(|s| k.verify_prehash(&prehash(), &s).is_ok()),
            RegistryKey::Ed25519(k) => <[u8; 64]>::try_from(sig).is_ok_and(|b| {
                k.verify_strict(msg, &ed25519_dalek::Signature::from_bytes(&b))
                    .is_ok()
            }),
        }
    }

    /// Verifies a cosign payload signature: ECDSA over SHA-256 (cosign's
    /// hash for every key), ed25519 over the payload.
    pub fn verify_payload(&self, payload: &[u8], sig: &[u8]) -> bool {
        self.verify_with(Hash::Sha256, payload, sig)
    }

    /// Verifies a signature made with the key's own hash, as Sigstore
    /// bundles are signed: ECDSA over SHA-256 for P-256 and SHA-384 for
    /// P-384, ed25519 over `msg` itself.
    pub fn verify_with_own_hash(&self, msg: &[u8], sig: &[u8]) -> bool {
        let hash = match self {
            RegistryKey::P384(_) => Hash::Sha384,
            _ => Hash::Sha256,
        };
        self.verify_with(hash, msg, sig)
    }
}

impl fmt::Display for RegistryKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let alg = match self {
            RegistryKey::P256(_) => "ecdsa-p256",
            RegistryKey::P384(_) => "ecdsa-p384",
            RegistryKey::Ed25519(_) => "ed25519",
        };
        write!(f, "{alg} key {}", self.fingerprint())
    }
}

/// Who a verified registry signature is by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Signer {
    /// A trusted key (the one that verified it).
    Key(RegistryKey),
    /// A Sigstore identity: the OIDC issuer and the certificate's
    /// subject (its one e-mail or URI SAN).
    Identity {
        /// The OIDC issuer.
        issuer: String,
        /// The e-mail address or URI.
        subject: String,
    },
}

impl fmt::Display for Signer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Signer::Key(k) => write!(f, "{k}"),
            Signer::Identity { issuer, subject } => {
                write!(f, "identity {subject:?} (issuer {issuer:?})")
            }
        }
    }
}

/// A secret key that makes registry signatures.
#[derive(Clone, Debug)]
pub enum RegistrySigningKey {
    /// ECDSA over P-256 (cosign's default).
    P256(p256::ecdsa::SigningKey),
    /// ed25519 (a wloc publisher key).
    Ed25519(ed25519_dalek::SigningKey),
}

impl RegistrySigningKey {
    /// A new P-256 key from the system's random source.
    pub fn generate_p256() -> Result<RegistrySigningKey, String> {
        loop {
            let mut b = [0u8; 32];
            getrandom::fill(&mut b).map_err(|e| format!("no random numbers: {e}"))?;
            // Out-of-range scalars (about 2^-32 of them) are drawn again.
            if let Ok(k) = p256::ecdsa::SigningKey::from_slice(&b) {
                return Ok(RegistrySigningKey::P256(k));
            }
        }
    }

    /// Its public key.
    pub fn public(&self) -> RegistryKey {
        match self {
            RegistrySigningKey::P256(k) => RegistryKey::P256(*k.verifying_key()),
            RegistrySigningKey::Ed25519(k) => RegistryKey::Ed25519(k.verifying_key()),
        }
    }

    /// Signs `msg` as [`RegistryKey::verify_payload`] checks.
    pub fn sign(&self, msg: &[u8]) -> Vec<u8> {
        use p256::ecdsa::signature::Signer as _;
        match self {
            RegistrySigningKey::P256(k) => {
                let s: p256::ecdsa::Signature = k.sign(msg);
                s.to_der().as_bytes().to_vec()
            }
            RegistrySigningKey::Ed25519(k) => {
                ed25519_dalek::Signer::sign(k, msg).to_bytes().to_vec()
            }
        }
    }
}

/// One signature layer of a signature manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CosignSignature {
    /// The payload blob, as stored (the signed bytes).
    pub payload: Vec<u8>,
    /// The decoded signature.
    pub signature: Vec<u8>,
    /// The signer's certificate (PEM), for keyless signatures.
    pub certificate: Option<String>,
    /// Its chain (PEM), informative: only the trusted root is trusted.
    pub chain: Option<String>,
    /// The transparency log's bundle (JSON).
    pub bundle: Option<String>,
}

/// Checks that `blob` is what `d` describes (sha256 digest and size).
fn check_blob(d: &Descriptor, blob: &[u8], what: &str) -> Result<(), SigError> {
    d.verify(blob)
        .map_err(|e| SigError::BlobMismatch(format!("{what}: {e}")))
}

/// Reads a signature manifest (the bytes fetched for tag
/// `sha256-HEX.sig`) and the blobs of its layers, in the manifest's
/// order: each blob must have its descriptor's digest and size, and
/// each layer be a simple-signing payload with a signature annotation.
/// A manifest that is not one is an error; a bad layer is an error of
/// that layer only, so that a layer anyone added cannot hide the others.
/// An adapter from a fetched artifact is one line:
/// `parse(&a.manifest, &a.layers.iter().map(|(_, b)| b.as_slice()).collect::<Vec<_>>())`.
pub fn parse(
    manifest: &[u8],
    blobs: &[&[u8]],
) -> Result<Vec<Result<CosignSignature, SigError>>, SigError> {
    let m = Manifest::parse(manifest, SIGNATURE_MANIFEST_TYPES)
        .map_err(|e| malformed(format!("the signature manifest: {e}")))?;
    if m.layers.len() != blobs.len() {
        return Err(malformed(format!(
            "the signature manifest has {} layers, {} blobs were given",
            m.layers.len(),
            blobs.len()
        )));
    }
    if m.layers.is_empty() || m.layers.len() > MAX_SIGNATURES {
        return Err(malformed(format!(
            "{} signature layers (1 to {MAX_SIGNATURES})",
            m.layers.len()
        )));
    }
    Ok(m.layers
        .iter()
        .zip(blobs)
        .enumerate()
        .map(|(i, (d, blob))| parse_layer(d, blob, &format!("layer {}", i + 1)))
        .collect())
}

/// One signature layer of a signature manifest.
fn parse_layer(d: &Descriptor, blob: &[u8], what: &str) -> Result<CosignSignature, SigError> {
    {
        if d.media_type != SIMPLESIGNING_MEDIA_TYPE {
            return Err(malformed(format!(
                "{what} has media type {:?}, not {SIMPLESIGNING_MEDIA_TYPE}",
                crate::text::sanitize(&d.media_type, 80)
            )));
        }
        check_blob(d, blob, what)?;
        if blob.len() > MAX_FIELD_BYTES {
            return Err(malformed(format!(
                "{what}: payload larger than {MAX_FIELD_BYTES} bytes"
            )));
        }
        let ann = &d.annotations;
        let get = |k: &str| -> Result<Option<String>, SigError> {
            match ann.get(k) {
                Some(v) if v.len() > MAX_FIELD_BYTES => {
                    Err(malformed(format!("{what}: annotation {k} is too large")))
                }
                v => Ok(v.cloned()),
            }
        };
        let sig = get(SIGNATURE_ANNOTATION)?
            .ok_or_else(|| malformed(format!("{what} has no {SIGNATURE_ANNOTATION} annotation")))?;
        let signature = B64
            .decode(sig.trim())
            .map_err(|e| malformed(format!("{what}: {SIGNATURE_ANNOTATION} is not base64: {e}")))?;
        Ok(CosignSignature {
            payload: blob.to_vec(),
            signature,
            certificate: get(CERTIFICATE_ANNOTATION)?.filter(|c| !c.is_empty()),
            chain: get(CHAIN_ANNOTATION)?.filter(|c| !c.is_empty()),
            bundle: get(BUNDLE_ANNOTATION)?.filter(|c| !c.is_empty()),
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Payload {
    critical: Critical,
    #[serde(default)]
    #[allow(dead_code)]
    optional: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Critical {
    #[allow(dead_code)]
    identity: PayloadIdentity,
    image: PayloadImage,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PayloadIdentity {
    #[serde(rename = "docker-reference")]
    #[allow(dead_code)]
    docker_reference: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PayloadImage {
    #[serde(rename = "docker-manifest-digest")]
    docker_manifest_digest: String,
}

/// Checks that a simple-signing payload names `sha256:{manifest_hex}`.
/// Repeated keys anywhere in `critical` are refused (serde refuses a
/// repeated field), so a payload cannot name two digests.
pub fn check_payload(payload: &[u8], manifest_hex: &str) -> Result<(), SigError> {
    let p: Payload = serde_json::from_slice(payload).map_err(|e| {
        malformed(format!(
            "the payload is not cosign's simple-signing JSON: {e}"
        ))
    })?;
    if p.critical.kind != PAYLOAD_TYPE {
        return Err(malformed(format!(
            "payload type {:?} is not {PAYLOAD_TYPE:?}",
            crate::text::sanitize(&p.critical.kind, 80)
        )));
    }
    let named = &p.critical.image.docker_manifest_digest;
    let expected = format!("sha256:{manifest_hex}");
    // Compared as written: `sha256:` and lower-case hexadecimal only.
    if *named != expected {
        return Err(SigError::WrongDigest {
            named: crate::text::sanitize(named, 80),
            expected,
        });
    }
    Ok(())
}

/// What registry signatures are checked against: trusted keys and the
/// Sigstore trusted root (for keyless signatures).
#[derive(Clone, Copy, Debug, Default)]
pub struct Trust<'a> {
    /// Keys whose signatures count.
    pub keys: &'a [RegistryKey],
    /// The trusted root, if the policy names one.
    pub root: Option<&'a TrustedRoot>,
}

/// Verifies one signature of the manifest `sha256:{manifest_hex}`: the
/// payload must name that digest; then a keyless signature (one with a
/// certificate) is checked against the trusted root, and any other must
/// verify with one of the trusted keys.
pub fn verify_signature(
    s: &CosignSignature,
    manifest_hex: &str,
    trust: &Trust,
) -> Result<Signer, SigError> {
    check_payload(&s.payload, manifest_hex)?;
    if let Some(cert) = &s.certificate {
        let root = trust.root.ok_or(SigError::NoTrustedRoot)?;
        let (issuer, subject) = crate::sigstore::verify_keyless(
            &s.payload,
            &s.signature,
            cert,
            s.bundle.as_deref(),
            root,
        )?;
        return Ok(Signer::Identity { issuer, subject });
    }
    trust
        .keys
        .iter()
        .find(|k| k.verify_payload(&s.payload, &s.signature))
        .map(|k| Signer::Key(*k))
        .ok_or(SigError::UnknownKey)
}

/// The verified registry signers of one component: only
/// [`RegistrySigners::bind`] makes one, after checking that the
/// component's bytes are the layer of the manifest that was signed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegistrySigners {
    component: String,
    manifest: String,
    signers: Vec<Signer>,
    /// The signatures refused, and why (for messages).
    pub refused: Vec<SigError>,
}

impl RegistrySigners {
    /// The component digest ([`crate::signing::component_digest`]) of
    /// the bytes the signers signed.
    pub fn component_digest(&self) -> &str {
        &self.component
    }

    /// The sha256 (hexadecimal) of the artifact manifest signed.
    pub fn manifest_digest(&self) -> &str {
        &self.manifest
    }

    /// The verified signers.
    pub fn signers(&self) -> &[Signer] {
        &self.signers
    }

    /// Checks that `wasm` is the one `application/wasm` layer of the OCI
    /// manifest `artifact_manifest` (sha256 and size): the signers of
    /// that manifest, none yet.  Signatures are then added with
    /// [`RegistrySigners::add_signatures`] (cosign's `sha256-HEX.sig`)
    /// and [`RegistrySigners::add_bundle`] (Sigstore bundles), each
    /// checked against this manifest's digest, so that signers only ever
    /// count for the bytes of the manifest they signed.
    pub fn bind(artifact_manifest: &[u8], wasm: &[u8]) -> Result<RegistrySigners, SigError> {
        let m = Manifest::parse(artifact_manifest, SIGNATURE_MANIFEST_TYPES)
            .map_err(|e| SigError::NotThisComponent(format!("the artifact manifest: {e}")))?;
        let wasm_layers: Vec<&Descriptor> = m
            .layers
            .iter()
            .filter(|d| d.media_type == oci::WASM_LAYER)
            .collect();
        let [layer] = wasm_layers.as_slice() else {
            return Err(SigError::NotThisComponent(format!(
                "the artifact manifest has {} {} layers, not one",
                wasm_layers.len(),
                oci::WASM_LAYER
            )));
        };
        check_blob(layer, wasm, "the component layer")
            .map_err(|e| SigError::NotThisComponent(e.to_string()))?;
        Ok(RegistrySigners {
            component: crate::signing::component_digest(wasm),
            manifest: sha256_hex(artifact_manifest),
            signers: Vec::new(),
            refused: Vec::new(),
        })
    }

    /// Keeps the outcome of one signature's check: a new signer, or why
    /// it was refused.
    pub(crate) fn record(&mut self, r: Result<Signer, SigError>) {
        match r {
            Ok(signer) if !self.signers.contains(&signer) => self.signers.push(signer),
            Ok(_) => {}
            Err(e) => self.refused.push(e),
        }
    }

    /// Verifies every signature of a cosign signature manifest
    /// (`sig_manifest` and its layer blobs, see [`parse`]) for the bound
    /// manifest's digest.  A malformed signature manifest is an error;
    /// each refused signature is kept in [`RegistrySigners::refused`].
    pub fn add_signatures(
        &mut self,
        sig_manifest: &[u8],
        sig_blobs: &[&[u8]],
        trust: &Trust,
    ) -> Result<(), SigError> {
        for s in parse(sig_manifest, sig_blobs)? {
            let r = s.and_then(|s| verify_signature(&s, &self.manifest, trust));
            self.record(r);
        }
        Ok(())
    }
}

/// [`RegistrySigners::bind`] then [`RegistrySigners::add_signatures`]:
/// the signers of one cosign signature manifest.  A malformed signature
/// manifest or a component that is not the signed layer is an error;
/// each refused signature is kept in [`RegistrySigners::refused`].
pub fn registry_signers(
    artifact_manifest: &[u8],
    wasm: &[u8],
    sig_manifest: &[u8],
    sig_blobs: &[&[u8]],
    trust: &Trust,
) -> Result<RegistrySigners, SigError> {
    let mut out = RegistrySigners::bind(artifact_manifest, wasm)?;
    out.add_signatures(sig_manifest, sig_blobs, trust)?;
    Ok(out)
}

/// A signature artifact in cosign's format, made by [`make_signature`]:
/// the manifest to push with tag [`signature_tag`], and its blobs.
#[derive(Clone, Debug)]
pub struct MadeSignature {
    /// The signature manifest (OCI image manifest JSON).
    pub manifest: Vec<u8>,
    /// Its config blob.
    pub config: Vec<u8>,
    /// Its one layer blob: the simple-signing payload.
    pub payload: Vec<u8>,
}

/// Makes a cosign signature of the artifact manifest `sha256:{digest}`
/// pushed as `reference` (cosign's `docker-reference`: the repository,
/// without tag or digest), with `key`.
pub fn make_signature(
    digest: &str,
    reference: &str,
    key: &RegistrySigningKey,
) -> Result<MadeSignature, String> {
    let hex_digest = parse_digest(digest)?;
    let payload = serde_json::json!({
        "critical": {
            "identity": { "docker-reference": reference },
            "image": { "docker-manifest-digest": format!("sha256:{hex_digest}") },
            "type": PAYLOAD_TYPE,
        },
        "optional": null,
    });
    let payload = serde_json::to_vec(&payload).map_err(|e| e.to_string())?;
    let sig = B64.encode(key.sign(&payload));
    Ok(assemble(payload, &[(SIGNATURE_ANNOTATION, sig)]))
}

/// A signature manifest of one payload layer with `annotations`.
pub(crate) fn assemble(payload: Vec<u8>, annotations: &[(&str, String)]) -> MadeSignature {
    let payload_digest = format!("sha256:{}", sha256_hex(&payload));
    let config = serde_json::json!({
        "architecture": "",
        "config": {},
        "created": "0001-01-01T00:00:00Z",
        "history": [{ "created": "0001-01-01T00:00:00Z" }],
        "os": "",
        "rootfs": { "type": "layers", "diff_ids": [payload_digest] },
    });
    let config = serde_json::to_vec(&config).expect("JSON encodes");
    let ann: serde_json::Map<String, serde_json::Value> = annotations
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.clone())))
        .collect();
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": oci::MANIFEST,
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "size": config.len(),
            "digest": format!("sha256:{}", sha256_hex(&config)),
        },
        "layers": [{
            "mediaType": SIMPLESIGNING_MEDIA_TYPE,
            "size": payload.len(),
            "digest": payload_digest,
            "annotations": ann,
        }],
    });
    MadeSignature {
        manifest: serde_json::to_vec(&manifest).expect("JSON encodes"),
        config,
        payload,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An artifact manifest whose one layer is `wasm`.
    pub(crate) fn artifact(wasm: &[u8]) -> Vec<u8> {
        let config = b"{}";
        serde_json::to_vec(&serde_json::json!({
            "schemaVersion": 2,
            "mediaType": oci::MANIFEST,
            "config": {
                "mediaType": "application/vnd.wasm.config.v0+json",
                "size": config.len(),
                "digest": format!("sha256:{}", sha256_hex(config)),
            },
            "layers": [{
                "mediaType": oci::WASM_LAYER,
                "size": wasm.len(),
                "digest": format!("sha256:{}", sha256_hex(wasm)),
            }],
        }))
        .unwrap()
    }

    fn ed_key() -> RegistrySigningKey {
        RegistrySigningKey::Ed25519(crate::signing::generate().unwrap())
    }

    fn check(made: &MadeSignature, digest: &str, keys: &[RegistryKey]) -> Result<Signer, SigError> {
        let mut sigs = parse(&made.manifest, &[&made.payload])?;
        assert_eq!(sigs.len(), 1);
        verify_signature(&sigs.remove(0)?, digest, &Trust { keys, root: None })
    }

    #[test]
    fn key_signatures_verify_for_both_algorithms() {
        let d = sha256_hex(b"manifest");
        for k in [RegistrySigningKey::generate_p256().unwrap(), ed_key()] {
            let made = make_signature(&d, "registry.example/acme/nic", &k).unwrap();
            let pk = k.public();
            assert_eq!(check(&made, &d, &[pk]).unwrap(), Signer::Key(pk));
            // A key read back from its PEM is the same key.
            let again = RegistryKey::from_pem(&pk.to_pem()).unwrap();
            assert_eq!(again, pk);
            assert_eq!(again.fingerprint(), pk.fingerprint());
        }
    }

    #[test]
    fn unknown_keys_and_other_algorithms_are_refused() {
        let d = sha256_hex(b"manifest");
        let p = RegistrySigningKey::generate_p256().unwrap();
        let e = ed_key();
        let made = make_signature(&d, "r/x", &p).unwrap();
        let other = RegistrySigningKey::generate_p256().unwrap().public();
        assert_eq!(check(&made, &d, &[other]), Err(SigError::UnknownKey));
        // An ed25519 key never accepts an ECDSA signature and back.
        assert_eq!(check(&made, &d, &[e.public()]), Err(SigError::UnknownKey));
        let made_e = make_signature(&d, "r/x", &e).unwrap();
        assert_eq!(check(&made_e, &d, &[p.public()]), Err(SigError::UnknownKey));
        assert!(check(&made_e, &d, &[p.public(), e.public()]).is_ok());
    }

    #[test]
    fn tampered_or_reencoded_payloads_are_refused() {
        let d = sha256_hex(b"manifest");
        let k = RegistrySigningKey::generate_p256().unwrap();
        let made = make_signature(&d, "r/x", &k).unwrap();
        let keys = [k.public()];
        // The same JSON with a space: another blob, the signature fails.
        let mut p = made.payload.clone();
        p.insert(1, b' ');
        let sig = parse(&made.manifest, &[&made.payload]).unwrap()[0]
            .clone()
            .unwrap()
            .signature;
        let re = assemble(p, &[(SIGNATURE_ANNOTATION, B64.encode(&sig))]);
        assert_eq!(check(&re, &d, &keys), Err(SigError::UnknownKey));
        // A blob that is not the layer's digest.
        let mut bad = made.payload.clone();
        bad[5] ^= 1;
        assert!(matches!(
            &parse(&made.manifest, &[&bad]).unwrap()[0],
            Err(SigError::BlobMismatch(_))
        ));
    }

    #[test]
    fn a_payload_naming_another_digest_is_refused() {
        let d = sha256_hex(b"manifest");
        let other = sha256_hex(b"other");
        let k = ed_key();
        let made = make_signature(&other, "r/x", &k).unwrap();
        assert!(matches!(
            check(&made, &d, &[k.public()]),
            Err(SigError::WrongDigest { .. })
        ));
        // A payload naming the digest twice (JSON duplicates) is refused
        // even when signed.
        let dup = format!(
            r#"{{"critical":{{"identity":{{"docker-reference":"r"}},"image":{{"docker-manifest-digest":"sha256:{other}","docker-manifest-digest":"sha256:{d}"}},"type":"{PAYLOAD_TYPE}"}},"optional":null}}"#
        );
        let re = assemble(
            dup.clone().into_bytes(),
            &[(SIGNATURE_ANNOTATION, B64.encode(k.sign(dup.as_bytes())))],
        );
        assert!(
            matches!(check(&re, &d, &[k.public()]), Err(SigError::Malformed(m)) if m.contains("duplicate"))
        );
    }

    #[test]
    fn repeated_annotations_and_bad_layers_are_refused() {
        let d = sha256_hex(b"manifest");
        let k = ed_key();
        let made = make_signature(&d, "r/x", &k).unwrap();
        let text = String::from_utf8(made.manifest.clone()).unwrap();
        let dup = text.replace(
            &format!("\"{SIGNATURE_ANNOTATION}\":"),
            &format!("\"{SIGNATURE_ANNOTATION}\":\"AAAA\",\"{SIGNATURE_ANNOTATION}\":"),
        );
        assert_ne!(dup, text);
        assert!(
            matches!(parse(dup.as_bytes(), &[&made.payload]), Err(SigError::Malformed(m)) if m.contains("repeated key"))
        );
        let other_type = text.replace(SIMPLESIGNING_MEDIA_TYPE, "application/json");
        assert!(
            matches!(&parse(other_type.as_bytes(), &[&made.payload]).unwrap()[0], Err(SigError::Malformed(m)) if m.contains("media type"))
        );
        assert!(parse(&made.manifest, &[]).is_err());
        assert!(parse(b"{", &[]).is_err());
        assert_eq!(signature_tag(&d).unwrap(), format!("sha256-{d}.sig"));
    }

    #[test]
    fn signers_are_bound_to_the_component_layer() {
        let wasm = b"\0asm\x0d\0\x01\0 some component".to_vec();
        let art = artifact(&wasm);
        let k = RegistrySigningKey::generate_p256().unwrap();
        let made = make_signature(&sha256_hex(&art), "r/x", &k).unwrap();
        let keys = [k.public()];
        let t = Trust {
            keys: &keys,
            root: None,
        };
        let rs = registry_signers(&art, &wasm, &made.manifest, &[&made.payload], &t).unwrap();
        assert_eq!(rs.signers(), &[Signer::Key(k.public())]);
        assert_eq!(
            rs.component_digest(),
            crate::signing::component_digest(&wasm)
        );
        // Other bytes than the signed layer.
        let mut other = wasm.clone();
        other.push(0);
        assert!(matches!(
            registry_signers(&art, &other, &made.manifest, &[&made.payload], &t),
            Err(SigError::NotThisComponent(_))
        ));
        // A layer anyone added does not hide a good one.
        let junk = assemble(b"junk".to_vec(), &[(SIGNATURE_ANNOTATION, "AAAA".into())]);
        let mut m: serde_json::Value = serde_json::from_slice(&made.manifest).unwrap();
        let j: serde_json::Value = serde_json::from_slice(&junk.manifest).unwrap();
        m["layers"] = serde_json::json!([j["layers"][0], m["layers"][0]]);
        let m = serde_json::to_vec(&m).unwrap();
        let rs = registry_signers(&art, &wasm, &m, &[&junk.payload, &made.payload], &t).unwrap();
        assert_eq!(rs.signers(), &[Signer::Key(k.public())]);
        assert!(matches!(rs.refused[0], SigError::Malformed(_)));
        // A signature of another manifest is refused, not an error.
        let made2 = make_signature(&sha256_hex(b"x"), "r/x", &k).unwrap();
        let rs = registry_signers(&art, &wasm, &made2.manifest, &[&made2.payload], &t).unwrap();
        assert!(rs.signers().is_empty());
        assert!(matches!(rs.refused[0], SigError::WrongDigest { .. }));
    }
}
