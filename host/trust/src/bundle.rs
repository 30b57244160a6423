//! Registry signatures in the Sigstore bundle format (cosign v3's
//! default), verified with a key.
//!
//! `cosign sign` (v3) stores a signature of the artifact manifest
//! `sha256:HEX` as an OCI image manifest *referring* to it: artifact
//! type [`BUNDLE_MEDIA_TYPE`], `subject` = the artifact manifest's
//! descriptor, config = the OCI empty descriptor, and one layer, the
//! bundle (JSON, media type [`BUNDLE_MEDIA_TYPE`]).  Registries list such
//! manifests with the referrers API, or under the tag `sha256-HEX`
//! ([`referrers_tag`]) where they have none; `wloc-oci` fetches them.
//!
//! The bundle's `dsseEnvelope` holds an in-toto Statement naming the
//! signed manifest's sha256 as a subject, with predicate type
//! [`SIGN_PREDICATE`]; its signature is over the DSSE pre-authentication
//! encoding ([`pae`]) of the payload type and payload, made with the key
//! named by `verificationMaterial.publicKey` (a hint only: every trusted
//! key is tried).  What is checked, in order:
//!
//! * the bundle manifest ([`verify_referrer`]): an OCI image manifest of
//!   that artifact type whose subject is the artifact manifest verified,
//!   with one bundle layer whose bytes have its digest and size;
//! * the bundle ([`verify`]): JSON of at most [`MAX_BUNDLE_BYTES`] with
//!   no key repeated in any object, media type [`BUNDLE_MEDIA_TYPE`], a
//!   DSSE envelope of payload type [`IN_TOTO_PAYLOAD_TYPE`] (a
//!   `messageSignature` names no manifest and a certificate means a
//!   keyless signature: both are refused), signed by a trusted key;
//! * then its payload: an in-toto Statement (v1 or v0.1), again without
//!   repeated keys, of predicate type [`SIGN_PREDICATE`] (attestations
//!   are not signatures), one of whose subjects has the verified sha256.
//!
//! The transparency log entries of a key-based bundle are not checked,
//! as for cosign's classic key signatures: the trusted key is what
//! admits.  Keyless bundles (a Fulcio certificate) are not verified yet.

use std::collections::BTreeMap;
use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE};
use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::cosign::{RegistrySigners, SigError, Signer, Trust};
use crate::digest::parse_digest;
use crate::oci::{self, Manifest};

/// Media type of a Sigstore bundle v0.3, and artifact type of the
/// manifest storing one.
pub const BUNDLE_MEDIA_TYPE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
/// The DSSE payload type of an in-toto Statement.
pub const IN_TOTO_PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
/// `_type` of an in-toto Statement v1.
pub const STATEMENT_V1: &str = "https://in-toto.io/Statement/v1";
/// `_type` of an in-toto Statement v0.1 (same fields).
pub const STATEMENT_V01: &str = "https://in-toto.io/Statement/v0.1";
/// The predicate type of `cosign sign`: a signature, not an attestation.
pub const SIGN_PREDICATE: &str = "https://sigstore.dev/cosign/sign/v1";

/// Largest bundle read, and largest payload decoded from it.
pub const MAX_BUNDLE_BYTES: usize = 1 << 20;
/// At most this many DSSE signatures or statement subjects are read.
const MAX_ENTRIES: usize = 16;

/// The tag under which registries without the referrers API list the
/// referrers of the manifest `digest` (`sha256:HEX` or `HEX`):
/// `sha256-HEX`, an image index.
pub fn referrers_tag(digest: &str) -> Result<String, String> {
    Ok(format!("sha256-{}", parse_digest(digest)?))
}

/// DSSE's pre-authentication encoding, the bytes a DSSE signature is
/// over: `DSSEv1 LEN(type) type LEN(payload) payload`, lengths in
/// decimal bytes, separated by one space.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        payload.len()
    )
    .into_bytes();
    out.extend_from_slice(payload);
    out
}

fn malformed(m: impl Into<String>) -> SigError {
    SigError::Malformed(m.into())
}

/// Any JSON value, refused if an object in it repeats a key: parsers
/// disagree on which value wins (Go's keeps the last), and a signed
/// document must not mean two things.  serde_json bounds the nesting.
struct NoRepeatedKeys;

impl<'de> Deserialize<'de> for NoRepeatedKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NoRepeatedKeys)
    }
}

impl<'de> serde::de::Visitor<'de> for NoRepeatedKeys {
    type Value = NoRepeatedKeys;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_unit<E>(self) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut s: A) -> Result<Self, A::Error> {
        while s.next_element::<NoRepeatedKeys>()?.is_some() {}
        Ok(self)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Self, A::Error> {
        let mut seen = std::collections::BTreeSet::new();
        while let Some(k) = m.next_key::<String>()? {
            m.next_value::<NoRepeatedKeys>()?;
            if !seen.insert(k.clone()) {
                return Err(serde::de::Error::custom(format!(
                    "repeated key {:?}",
                    crate::text::sanitize(&k, 60)
                )));
            }
        }
        Ok(self)
    }
}

/// Parses `bytes` as `T` after refusing repeated keys anywhere in them.
fn strict_json<'a, T: Deserialize<'a>>(bytes: &'a [u8], what: &str) -> Result<T, SigError> {
    serde_json::from_slice::<NoRepeatedKeys>(bytes)
        .map_err(|e| malformed(format!("{what} is not JSON of unique keys: {e}")))?;
    serde_json::from_slice(bytes).map_err(|e| malformed(format!("{what}: {e}")))
}

/// Bundle bytes fields are base64: standard, or the URL-safe alphabet
/// DSSE also allows.
fn decode_base64(text: &str, what: &str) -> Result<Vec<u8>, SigError> {
    STANDARD
        .decode(text)
        .or_else(|_| URL_SAFE.decode(text))
        .map_err(|e| malformed(format!("{what} is not base64: {e}")))
}

// The fields read, in protobuf's JSON names; the proto names protobuf
// also accepts are aliases, so that one field given both ways is a
// repeated field, refused.  Fields not read are ignored (Sigstore adds
// some between versions).

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawBundle {
    #[serde(alias = "media_type")]
    media_type: String,
    #[serde(alias = "verification_material")]
    verification_material: Material,
    #[serde(default, alias = "dsse_envelope")]
    dsse_envelope: Option<Envelope>,
    #[serde(default, alias = "message_signature")]
    message_signature: Option<IgnoredAny>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Material {
    #[serde(default, alias = "public_key")]
    public_key: Option<IgnoredAny>,
    #[serde(default)]
    certificate: Option<IgnoredAny>,
    #[serde(default, alias = "x509_certificate_chain")]
    x509_certificate_chain: Option<IgnoredAny>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Envelope {
    payload: String,
    #[serde(alias = "payload_type")]
    payload_type: String,
    signatures: Vec<EnvelopeSignature>,
}

#[derive(Deserialize)]
struct EnvelopeSignature {
    sig: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Statement {
    #[serde(rename = "_type")]
    kind: String,
    subject: Vec<Subject>,
    predicate_type: String,
}

#[derive(Deserialize)]
struct Subject {
    #[serde(default)]
    digest: BTreeMap<String, String>,
}

/// A key-based bundle whose form was checked: its DSSE envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bundle {
    /// The envelope's payload type.
    pub payload_type: String,
    /// The decoded payload (the signed statement).
    pub payload: Vec<u8>,
    /// The decoded signatures.
    pub signatures: Vec<Vec<u8>>,
}

/// Reads a bundle: bounded, no repeated key, media type v0.3, a DSSE
/// envelope signed with a key.  A message signature, a keyless bundle or
/// a bundle without verification material is refused, saying which.
pub fn parse(bytes: &[u8]) -> Result<Bundle, SigError> {
    if bytes.len() > MAX_BUNDLE_BYTES {
        return Err(malformed(format!(
            "the bundle is {} bytes, more than {MAX_BUNDLE_BYTES}",
            bytes.len()
        )));
    }
    let raw: RawBundle = strict_json(bytes, "the Sigstore bundle")?;
    if raw.media_type != BUNDLE_MEDIA_TYPE {
        return Err(malformed(format!(
            "bundle media type {:?}, not {BUNDLE_MEDIA_TYPE}",
            crate::text::sanitize(&raw.media_type, 100)
        )));
    }
    let m = &raw.verification_material;
    if m.certificate.is_some() || m.x509_certificate_chain.is_some() {
        return Err(SigError::Unsupported(
            "a keyless Sigstore bundle (a certificate in its verificationMaterial): wloc does not verify keyless bundles yet; sign with a key, or with cosign's classic format".into(),
        ));
    }
    if m.public_key.is_none() {
        return Err(malformed(
            "the bundle's verificationMaterial names neither a public key nor a certificate",
        ));
    }
    let env = match (raw.dsse_envelope, raw.message_signature) {
        (Some(env), None) => env,
        (None, Some(_)) => {
            return Err(SigError::Unsupported(
                "a bundle with a messageSignature signs a blob's digest and names no manifest; cosign sign writes a dsseEnvelope".into(),
            ));
        }
        (Some(_), Some(_)) => {
            return Err(malformed(
                "the bundle has both a dsseEnvelope and a messageSignature",
            ));
        }
        (None, None) => return Err(malformed("the bundle has no dsseEnvelope")),
    };
    if env.payload_type != IN_TOTO_PAYLOAD_TYPE {
        return Err(SigError::NotASignature(format!(
            "DSSE payload type {:?}, not {IN_TOTO_PAYLOAD_TYPE}",
            crate::text::sanitize(&env.payload_type, 100)
        )));
    }
    if env.signatures.is_empty() || env.signatures.len() > MAX_ENTRIES {
        return Err(malformed(format!(
            "{} DSSE signatures (1 to {MAX_ENTRIES})",
            env.signatures.len()
        )));
    }
    let payload = decode_base64(&env.payload, "the DSSE payload")?;
    let signatures = env
        .signatures
        .iter()
        .map(|s| decode_base64(&s.sig, "a DSSE signature"))
        .collect::<Result<_, _>>()?;
    Ok(Bundle {
        payload_type: env.payload_type,
        payload,
        signatures,
    })
}

/// Checks a statement (the payload of a verified envelope) is cosign's
/// signature of the manifest `sha256:{manifest_hex}`.
fn check_statement(payload: &[u8], manifest_hex: &str) -> Result<(), SigError> {
    let s: Statement = strict_json(payload, "the DSSE payload (an in-toto Statement)")?;
    if s.kind != STATEMENT_V1 && s.kind != STATEMENT_V01 {
        return Err(malformed(format!(
            "statement _type {:?}, not {STATEMENT_V1}",
            crate::text::sanitize(&s.kind, 100)
        )));
    }
    if s.predicate_type != SIGN_PREDICATE {
        return Err(SigError::NotASignature(format!(
            "predicate type {:?} (an attestation), not {SIGN_PREDICATE}",
            crate::text::sanitize(&s.predicate_type, 100)
        )));
    }
    if s.subject.is_empty() || s.subject.len() > MAX_ENTRIES {
        return Err(malformed(format!(
            "{} statement subjects (1 to {MAX_ENTRIES})",
            s.subject.len()
        )));
    }
    // Compared as written: lower-case hexadecimal, as in-toto writes it.
    let named: Vec<&str> = s
        .subject
        .iter()
        .filter_map(|x| x.digest.get("sha256").map(String::as_str))
        .collect();
    if named.contains(&manifest_hex) {
        return Ok(());
    }
    Err(SigError::WrongDigest {
        named: match named.first() {
            Some(n) => format!("sha256:{}", crate::text::sanitize(n, 80)),
            None => "no sha256 digest".into(),
        },
        expected: format!("sha256:{manifest_hex}"),
    })
}

/// Verifies a bundle (its bytes) as a signature of the artifact manifest
/// `sha256:{manifest_hex}` by one of the trusted keys: the envelope's
/// signature first, so that only signed statements are read further.
pub fn verify(bytes: &[u8], manifest_hex: &str, trust: &Trust) -> Result<Signer, SigError> {
    let b = parse(bytes)?;
    let signed = pae(&b.payload_type, &b.payload);
    let key = trust
        .keys
        .iter()
        .find(|k| {
            b.signatures
                .iter()
                .any(|s| k.verify_with_own_hash(&signed, s))
        })
        .ok_or(SigError::UnknownKey)?;
    check_statement(&b.payload, manifest_hex)?;
    Ok(Signer::Key(*key))
}

/// Verifies a bundle as stored: `manifest` (the referrer's image
/// manifest) must have artifact type [`BUNDLE_MEDIA_TYPE`], name the
/// artifact manifest `sha256:{manifest_hex}` as its subject and have one
/// bundle layer, whose bytes `blob` are; then [`verify`].
pub fn verify_referrer(
    manifest: &[u8],
    blob: &[u8],
    manifest_hex: &str,
    trust: &Trust,
) -> Result<Signer, SigError> {
    let m = Manifest::parse(manifest, &[oci::MANIFEST])
        .map_err(|e| malformed(format!("the bundle manifest: {e}")))?;
    if m.artifact_type.as_deref() != Some(BUNDLE_MEDIA_TYPE) {
        return Err(malformed(format!(
            "the bundle manifest's artifact type is {:?}, not {BUNDLE_MEDIA_TYPE}",
            crate::text::sanitize(m.artifact_type.as_deref().unwrap_or(""), 100)
        )));
    }
    let expected = format!("sha256:{manifest_hex}");
    match &m.subject {
        Some(s) if s.digest == expected => {}
        Some(s) => {
            return Err(SigError::WrongDigest {
                named: crate::text::sanitize(&s.digest, 80),
                expected,
            });
        }
        None => return Err(malformed("the bundle manifest names no subject")),
    }
    let [layer] = m.layers.as_slice() else {
        return Err(malformed(format!(
            "the bundle manifest has {} layers, not one",
            m.layers.len()
        )));
    };
    if layer.media_type != BUNDLE_MEDIA_TYPE {
        return Err(malformed(format!(
            "the bundle layer has media type {:?}, not {BUNDLE_MEDIA_TYPE}",
            crate::text::sanitize(&layer.media_type, 100)
        )));
    }
    layer
        .verify(blob)
        .map_err(|e| SigError::BlobMismatch(format!("the bundle layer: {e}")))?;
    verify(blob, manifest_hex, trust)
}

/// A Sigstore bundle stored as cosign v3 stores it, made by
/// [`make_bundle`]: the bundle manifest (push it by its digest and list
/// it in the referrers index), its config blob and the bundle.
#[derive(Clone, Debug)]
pub struct MadeBundle {
    /// The bundle manifest (OCI image manifest JSON).
    pub manifest: Vec<u8>,
    /// Its config blob: the OCI empty blob `{}`.
    pub config: Vec<u8>,
    /// Its one layer blob: the bundle.
    pub bundle: Vec<u8>,
}

/// Makes a key-based bundle signing the artifact manifest
/// `artifact_manifest` (its bytes: the subject is their descriptor),
/// named `name` in the statement, with `key` (for tests and vendors).
/// No transparency log entry is made.
pub fn make_bundle(
    artifact_manifest: &[u8],
    name: &str,
    key: &crate::cosign::RegistrySigningKey,
) -> MadeBundle {
    let statement = serde_json::json!({
        "_type": STATEMENT_V1,
        "subject": [{
            "name": name,
            "digest": { "sha256": crate::digest::sha256_hex(artifact_manifest) },
        }],
        "predicateType": SIGN_PREDICATE,
        "predicate": {},
    });
    let payload = serde_json::to_vec(&statement).expect("JSON encodes");
    let sig = key.sign(&pae(IN_TOTO_PAYLOAD_TYPE, &payload));
    let bundle = serde_json::to_vec(&serde_json::json!({
        "mediaType": BUNDLE_MEDIA_TYPE,
        "verificationMaterial": {
            "publicKey": { "hint": key.public().fingerprint() },
            "tlogEntries": [],
        },
        "dsseEnvelope": {
            "payload": STANDARD.encode(&payload),
            "payloadType": IN_TOTO_PAYLOAD_TYPE,
            "signatures": [{ "sig": STANDARD.encode(sig), "keyid": "" }],
        },
    }))
    .expect("JSON encodes");
    let config = b"{}".to_vec();
    let manifest = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2,
        "mediaType": oci::MANIFEST,
        "artifactType": BUNDLE_MEDIA_TYPE,
        "config": { "mediaType": oci::EMPTY, "digest": oci::digest_of(&config), "size": config.len() },
        "layers": [{
            "mediaType": BUNDLE_MEDIA_TYPE,
            "digest": oci::digest_of(&bundle),
            "size": bundle.len(),
            "annotations": { oci::TITLE: "sigstore.bundle.json" },
        }],
        "subject": {
            "mediaType": oci::MANIFEST,
            "digest": oci::digest_of(artifact_manifest),
            "size": artifact_manifest.len(),
        },
    }))
    .expect("JSON encodes");
    MadeBundle {
        manifest,
        config,
        bundle,
    }
}

impl RegistrySigners {
    /// Verifies one stored bundle ([`verify_referrer`]) for the bound
    /// manifest's digest, keeping its signer or why it was refused.
    pub fn add_bundle(&mut self, manifest: &[u8], blob: &[u8], trust: &Trust) {
        let r = verify_referrer(manifest, blob, self.manifest_digest(), trust);
        self.record(r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cosign::{RegistryKey, RegistrySigningKey};
    use crate::digest::sha256_hex;

    fn statement(hex: &str, predicate: &str) -> String {
        format!(
            r#"{{"_type":"{STATEMENT_V1}","subject":[{{"name":"registry.example/acme/tool","digest":{{"sha256":"{hex}"}}}}],"predicateType":"{predicate}","predicate":{{}}}}"#
        )
    }

    /// A bundle as cosign v3 writes it for a key, over `payload`.
    fn bundle_of(payload: &str, key: &RegistrySigningKey) -> String {
        let sig = key.sign(&pae(IN_TOTO_PAYLOAD_TYPE, payload.as_bytes()));
        bundle_signed(payload, &sig)
    }

    /// A bundle of `payload` with the signature `sig`.
    fn bundle_signed(payload: &str, sig: &[u8]) -> String {
        format!(
            r#"{{"mediaType":"{BUNDLE_MEDIA_TYPE}","verificationMaterial":{{"publicKey":{{"hint":"abc"}},"tlogEntries":[{{"logIndex":"1"}}]}},"dsseEnvelope":{{"payload":"{}","payloadType":"{IN_TOTO_PAYLOAD_TYPE}","signatures":[{{"sig":"{}","keyid":""}}]}}}}"#,
            STANDARD.encode(payload),
            STANDARD.encode(sig)
        )
    }

    fn check(bundle: &str, hex: &str, keys: &[RegistryKey]) -> Result<Signer, SigError> {
        verify(bundle.as_bytes(), hex, &Trust { keys, root: None })
    }

    fn p256() -> RegistrySigningKey {
        RegistrySigningKey::generate_p256().unwrap()
    }

    #[test]
    fn a_good_signature_verifies_for_both_algorithms() {
        let d = sha256_hex(b"manifest");
        let ed = RegistrySigningKey::Ed25519(crate::signing::generate().unwrap());
        for k in [p256(), ed] {
            let b = bundle_of(&statement(&d, SIGN_PREDICATE), &k);
            assert_eq!(check(&b, &d, &[k.public()]), Ok(Signer::Key(k.public())));
        }
        // The PAE, byte for byte (DSSE's example).
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world".to_vec()
        );
    }

    #[test]
    fn a_p384_key_signs_over_sha384() {
        use p384::ecdsa::signature::Signer as _;
        use p384::ecdsa::signature::hazmat::PrehashSigner as _;
        use sha2::Digest as _;
        let sk = p384::ecdsa::SigningKey::from_slice(&[7u8; 48]).unwrap();
        let pk = RegistryKey::P384(*sk.verifying_key());
        let d = sha256_hex(b"manifest");
        let payload = statement(&d, SIGN_PREDICATE);
        let signed = pae(IN_TOTO_PAYLOAD_TYPE, payload.as_bytes());
        let s: p384::ecdsa::Signature = sk.sign(&signed);
        let b = bundle_signed(&payload, s.to_der().as_bytes());
        assert_eq!(check(&b, &d, &[pk]), Ok(Signer::Key(pk)));
        // The same key over SHA-256 is not how cosign v3 signs with it.
        let s: p384::ecdsa::Signature = sk.sign_prehash(&sha2::Sha256::digest(&signed)).unwrap();
        let b = bundle_signed(&payload, s.to_der().as_bytes());
        assert_eq!(check(&b, &d, &[pk]), Err(SigError::UnknownKey));
    }

    #[test]
    fn a_wrong_digest_or_predicate_type_is_refused() {
        let d = sha256_hex(b"manifest");
        let k = p256();
        let keys = [k.public()];
        let other = bundle_of(&statement(&sha256_hex(b"other"), SIGN_PREDICATE), &k);
        assert!(matches!(
            check(&other, &d, &keys),
            Err(SigError::WrongDigest { .. })
        ));
        let attest = bundle_of(&statement(&d, "https://slsa.dev/provenance/v1"), &k);
        assert!(
            matches!(check(&attest, &d, &keys), Err(SigError::NotASignature(m)) if m.contains("slsa"))
        );
        let v2 = statement(&d, SIGN_PREDICATE).replace("Statement/v1", "Statement/v2");
        assert!(
            matches!(check(&bundle_of(&v2, &k), &d, &keys), Err(SigError::Malformed(m)) if m.contains("_type"))
        );
        let v01 = statement(&d, SIGN_PREDICATE).replace(STATEMENT_V1, STATEMENT_V01);
        assert!(check(&bundle_of(&v01, &k), &d, &keys).is_ok());
    }

    #[test]
    fn an_unknown_key_or_a_tampered_payload_is_refused() {
        let d = sha256_hex(b"manifest");
        let k = p256();
        let b = bundle_of(&statement(&d, SIGN_PREDICATE), &k);
        assert_eq!(check(&b, &d, &[p256().public()]), Err(SigError::UnknownKey));
        assert_eq!(check(&b, &d, &[]), Err(SigError::UnknownKey));
        // The payload re-encoded with a space: not the signed bytes.
        let signed = STANDARD.encode(statement(&d, SIGN_PREDICATE));
        let spaced = STANDARD.encode(format!(" {}", statement(&d, SIGN_PREDICATE)));
        let t = b.replace(&signed, &spaced);
        assert_ne!(t, b);
        assert_eq!(check(&t, &d, &[k.public()]), Err(SigError::UnknownKey));
        // Another payload type over the same payload: the PAE differs.
        let t = b.replace(
            &format!(r#""payloadType":"{IN_TOTO_PAYLOAD_TYPE}""#),
            r#""payloadType":"application/json""#,
        );
        assert!(matches!(
            check(&t, &d, &[k.public()]),
            Err(SigError::NotASignature(_))
        ));
    }

    #[test]
    fn message_signatures_keyless_and_malformed_bundles_are_refused() {
        let d = sha256_hex(b"manifest");
        let k = p256();
        let keys = [k.public()];
        let msg = format!(
            r#"{{"mediaType":"{BUNDLE_MEDIA_TYPE}","verificationMaterial":{{"publicKey":{{"hint":""}}}},"messageSignature":{{"messageDigest":{{"algorithm":"SHA2_256","digest":"AAAA"}},"signature":"AAAA"}}}}"#
        );
        assert!(
            matches!(check(&msg, &d, &keys), Err(SigError::Unsupported(m)) if m.contains("messageSignature"))
        );
        let b = bundle_of(&statement(&d, SIGN_PREDICATE), &k);
        let keyless = b.replace(
            r#""publicKey":{"hint":"abc"}"#,
            r#""certificate":{"rawBytes":"AAAA"}"#,
        );
        assert!(
            matches!(check(&keyless, &d, &keys), Err(SigError::Unsupported(m)) if m.contains("keyless"))
        );
        for bad in ["", "{", "[]", "null", r#"{"mediaType":1}"#] {
            assert!(
                matches!(check(bad, &d, &keys), Err(SigError::Malformed(_))),
                "{bad}"
            );
        }
        let v02 = b.replace(
            BUNDLE_MEDIA_TYPE,
            "application/vnd.dev.sigstore.bundle+json;version=0.2",
        );
        assert!(
            matches!(check(&v02, &d, &keys), Err(SigError::Malformed(m)) if m.contains("media type"))
        );
        let huge = format!("{b}{}", " ".repeat(MAX_BUNDLE_BYTES));
        assert!(
            matches!(check(&huge, &d, &keys), Err(SigError::Malformed(m)) if m.contains("bytes"))
        );
        let no_sigs = b.replace(r#""signatures":[{"#, r#""signatures":[],"x":[{"#);
        assert!(matches!(
            check(&no_sigs, &d, &keys),
            Err(SigError::Malformed(_))
        ));
    }

    #[test]
    fn repeated_keys_are_refused_in_the_bundle_and_the_statement() {
        let d = sha256_hex(b"manifest");
        let other = sha256_hex(b"other");
        let k = p256();
        let keys = [k.public()];
        let b = bundle_of(&statement(&d, SIGN_PREDICATE), &k);
        // Twice the same field, or a field under both of its names.
        let twice = b.replace(
            r#""mediaType":"#,
            &format!(r#""mediaType":"{BUNDLE_MEDIA_TYPE}","mediaType":"#),
        );
        assert!(
            matches!(check(&twice, &d, &keys), Err(SigError::Malformed(m)) if m.contains("repeated key"))
        );
        let aliased = b.replace(
            r#""mediaType":"#,
            &format!(r#""media_type":"{BUNDLE_MEDIA_TYPE}","mediaType":"#),
        );
        assert!(
            matches!(check(&aliased, &d, &keys), Err(SigError::Malformed(m)) if m.contains("duplicate"))
        );
        // Even in a part not read (the log entries).
        let hidden = b.replace(r#"{"logIndex":"1"}"#, r#"{"logIndex":"1","logIndex":"2"}"#);
        assert!(
            matches!(check(&hidden, &d, &keys), Err(SigError::Malformed(m)) if m.contains("repeated key"))
        );
        // A signed statement naming two digests under one key.
        let dup = statement(&d, SIGN_PREDICATE).replace(
            r#""digest":{"#,
            &format!(r#""digest":{{"sha256":"{other}","#),
        );
        assert!(
            matches!(check(&bundle_of(&dup, &k), &d, &keys), Err(SigError::Malformed(m)) if m.contains("repeated key"))
        );
    }

    /// A bundle stored as cosign v3 stores it: the manifest and the blob.
    fn stored(bundle: &str, subject: &[u8]) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "schemaVersion": 2,
            "mediaType": oci::MANIFEST,
            "artifactType": BUNDLE_MEDIA_TYPE,
            "config": {"mediaType": oci::EMPTY, "digest": oci::digest_of(b"{}"), "size": 2},
            "layers": [{
                "mediaType": BUNDLE_MEDIA_TYPE,
                "digest": oci::digest_of(bundle.as_bytes()),
                "size": bundle.len(),
                "annotations": {oci::TITLE: "sigstore.bundle.json"},
            }],
            "subject": {"mediaType": oci::MANIFEST, "digest": oci::digest_of(subject), "size": subject.len()},
        }))
        .unwrap()
    }

    #[test]
    fn stored_bundles_are_bound_to_the_component_layer() {
        let wasm = b"\0asm\x0d\0\x01\0 some component".to_vec();
        let art = crate::cosign::tests::artifact(&wasm);
        let hex = sha256_hex(&art);
        let k = p256();
        let keys = [k.public()];
        let t = Trust {
            keys: &keys,
            root: None,
        };
        let b = bundle_of(&statement(&hex, SIGN_PREDICATE), &k);
        let m = stored(&b, &art);
        let mut rs = RegistrySigners::bind(&art, &wasm).unwrap();
        rs.add_bundle(&m, b.as_bytes(), &t);
        assert_eq!(rs.signers(), &[Signer::Key(k.public())]);
        assert!(rs.refused.is_empty());
        // As made by make_bundle.
        let made = make_bundle(&art, "r/x", &k);
        let mut rs = RegistrySigners::bind(&art, &wasm).unwrap();
        rs.add_bundle(&made.manifest, &made.bundle, &t);
        assert_eq!(rs.signers(), &[Signer::Key(k.public())], "{:?}", rs.refused);
        // A manifest referring to another artifact.
        let mut rs = RegistrySigners::bind(&art, &wasm).unwrap();
        rs.add_bundle(&stored(&b, b"other"), b.as_bytes(), &t);
        assert!(rs.signers().is_empty());
        assert!(matches!(rs.refused[0], SigError::WrongDigest { .. }));
        // A blob that is not the layer's, another artifact type.
        let mut rs = RegistrySigners::bind(&art, &wasm).unwrap();
        rs.add_bundle(&m, format!("{b} ").as_bytes(), &t);
        let other_type = String::from_utf8(m.clone()).unwrap().replacen(
            &format!(r#""artifactType":"{BUNDLE_MEDIA_TYPE}""#),
            r#""artifactType":"application/spdx+json""#,
            1,
        );
        rs.add_bundle(other_type.as_bytes(), b.as_bytes(), &t);
        assert!(rs.signers().is_empty());
        assert!(matches!(rs.refused[0], SigError::BlobMismatch(_)));
        assert!(matches!(&rs.refused[1], SigError::Malformed(m) if m.contains("artifact type")));
        assert_eq!(
            referrers_tag(&oci::digest_of(&art)).unwrap(),
            format!("sha256-{hex}")
        );
    }
}
