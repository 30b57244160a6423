//! Sigstore keyless signatures, verified offline against a trusted root.
//!
//! A keyless cosign signature carries the signer's short-lived
//! certificate (issued by a Fulcio CA to an OIDC identity) and a bundle
//! from the Rekor transparency log: the log's *signed entry timestamp*
//! (SET) over the entry it integrated, and when.  Nothing is fetched:
//! the admin installs Sigstore's `trusted_root.json` (certificate
//! authorities and transparency-log keys, each with a validity window),
//! and [`verify_keyless`] checks, with `t` the entry's `integratedTime`:
//!
//! 1. the SET (ECDSA, DER) verifies, with the key of the log whose id
//!    (sha256 of its DER public key) is the bundle's `logID` and whose
//!    window contains `t`, over the canonical JSON
//!    `{"body":..,"integratedTime":..,"logID":..,"logIndex":..}`;
//! 2. the entry's body (a `hashedrekord` 0.0.1) records the sha256 of the
//!    payload, the signature and the certificate at hand: the log
//!    vouches for this signature, not for another;
//! 3. the certificate chains to a CA of the trusted root whose window
//!    contains `t`: it is signed by the first certificate of that CA's
//!    chain, which is a CA certificate; every certificate of the path is
//!    valid at `t` (a Fulcio certificate lives ten minutes: `t` proves it
//!    was used then);
//! 4. the signature over the payload verifies with the certificate's key;
//! 5. the identity is the certificate's one subject alternative name (an
//!    e-mail address or a URI) and its OIDC issuer extension
//!    (1.3.6.1.4.1.57264.1.8, a DER UTF8String, or the older
//!    1.3.6.1.4.1.57264.1.1, raw text; both must agree if both are there).
//!
//! Built from the RustCrypto crates rather than the `sigstore` crate,
//! which pulls an async runtime and an HTTP client for what is here a
//! handful of offline checks.

use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use der::{Decode, Encode};
use serde::Deserialize;
use spki::ObjectIdentifier;
use x509_cert::Certificate;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{BasicConstraints, ExtendedKeyUsage, KeyUsage, SubjectAltName};

use crate::cosign::{Hash, RegistryKey, SigError};
use crate::digest::sha256_hex;

/// Largest trusted root read.
const MAX_ROOT_BYTES: u64 = 4 << 20;

const OID_ISSUER_V2: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.4.1.57264.1.8");
const OID_ISSUER_V1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.4.1.57264.1.1");
const OID_ECDSA_SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.2");
const OID_ECDSA_SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.3");
const OID_CODE_SIGNING: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.3");
const OID_BASIC_CONSTRAINTS: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.19");
const OID_KEY_USAGE: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.15");
const OID_EXT_KEY_USAGE: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.37");
const OID_SAN: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.17");

/// Critical extensions understood here; a certificate with another
/// critical extension is refused (RFC 5280 4.2).
const KNOWN_CRITICAL: [ObjectIdentifier; 4] = [
    OID_BASIC_CONSTRAINTS,
    OID_KEY_USAGE,
    OID_EXT_KEY_USAGE,
    OID_SAN,
];

/// A window of validity, in seconds since the epoch (`end` excluded from
/// nothing: both bounds are inclusive, as X.509's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Window {
    start: i64,
    end: Option<i64>,
}

impl Window {
    fn contains(&self, t: i64) -> bool {
        t >= self.start && self.end.is_none_or(|e| t <= e)
    }
}

/// A certificate authority of the trusted root.
#[derive(Clone, Debug)]
struct Authority {
    /// Its chain, the issuing certificate first.
    chain: Vec<Certificate>,
    window: Window,
}

/// A transparency log's key.
#[derive(Clone, Debug)]
struct LogKey {
    /// sha256 of its DER public key: the log's id.
    id: String,
    key: RegistryKey,
    window: Window,
}

/// The trusted root the admin installs: Sigstore's `trusted_root.json`
/// (media type `application/vnd.dev.sigstore.trustedroot+json`); its
/// `ctlogs` and `timestampAuthorities` are not used.
#[derive(Clone, Debug)]
pub struct TrustedRoot {
    authorities: Vec<Authority>,
    logs: Vec<LogKey>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRoot {
    #[serde(default)]
    media_type: Option<String>,
    #[serde(default)]
    tlogs: Vec<RawLog>,
    #[serde(default)]
    certificate_authorities: Vec<RawAuthority>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawLog {
    public_key: RawPublicKey,
    #[serde(default)]
    log_id: Option<RawLogId>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawLogId {
    key_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawPublicKey {
    raw_bytes: String,
    valid_for: RawWindow,
}

#[derive(Deserialize)]
struct RawWindow {
    start: String,
    #[serde(default)]
    end: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawAuthority {
    cert_chain: RawChain,
    valid_for: RawWindow,
}

#[derive(Deserialize)]
struct RawChain {
    certificates: Vec<RawCert>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawCert {
    raw_bytes: String,
}

/// Seconds since the epoch of an RFC 3339 time (`2021-03-07T03:20:29Z`,
/// fractions and offsets allowed).
pub(crate) fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let mut rest = &s[19..];
    if let Some(r) = rest.strip_prefix('.') {
        let n = r.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        rest = &r[n..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let rb = rest.as_bytes();
            if rb.len() != 6 || !matches!(rb[0], b'+' | b'-') || rb[3] != b':' {
                return None;
            }
            let oh: i64 = rest[1..3].parse().ok()?;
            let om: i64 = rest[4..6].parse().ok()?;
            let o = oh * 3600 + om * 60;
            if rb[0] == b'+' { o } else { -o }
        }
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let (yy, mm) = if mo <= 2 {
        (y - 1, mo + 9)
    } else {
        (y, mo - 3)
    };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * mm + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146097 + doe - 719468;
    Some(days * 86400 + h * 3600 + mi * 60 + se - offset)
}

fn window(w: &RawWindow, what: &str) -> Result<Window, String> {
    let t = |s: &str| {
        parse_rfc3339(s).ok_or_else(|| {
            format!(
                "{what}: {:?} is not an RFC 3339 time",
                crate::text::sanitize(s, 40)
            )
        })
    };
    Ok(Window {
        start: t(&w.start)?,
        end: w.end.as_deref().map(t).transpose()?,
    })
}

/// Decodes a certificate, refusing DER that does not re-encode to the
/// same bytes (its signed part is then exactly what was signed).
fn certificate(der_bytes: &[u8], what: &str) -> Result<Certificate, String> {
    let c = Certificate::from_der(der_bytes)
        .map_err(|e| format!("{what}: not a DER certificate: {e}"))?;
    if c.to_der().ok().as_deref() != Some(der_bytes) {
        return Err(format!("{what}: not in distinguished encoding (DER)"));
    }
    Ok(c)
}

impl TrustedRoot {
    /// Parses a `trusted_root.json`.
    pub fn parse(json: &[u8]) -> Result<TrustedRoot, String> {
        let raw: RawRoot = serde_json::from_slice(json)
            .map_err(|e| format!("not a Sigstore trusted root: {e}"))?;
        if let Some(t) = &raw.media_type
            && !t.starts_with("application/vnd.dev.sigstore.trustedroot")
        {
            return Err(format!(
                "media type {:?} is not a Sigstore trusted root",
                crate::text::sanitize(t, 80)
            ));
        }
        let mut logs = Vec::new();
        for (i, l) in raw.tlogs.iter().enumerate() {
            let what = format!("tlogs[{i}]");
            let der = B64
                .decode(&l.public_key.raw_bytes)
                .map_err(|e| format!("{what}: publicKey.rawBytes is not base64: {e}"))?;
            let key = RegistryKey::from_spki_der(&der).map_err(|e| format!("{what}: {e}"))?;
            let id = sha256_hex(&der);
            if let Some(li) = &l.log_id {
                let given = B64
                    .decode(&li.key_id)
                    .map_err(|e| format!("{what}: logId.keyId is not base64: {e}"))?;
                if crate::digest::hex(&given) != id {
                    return Err(format!("{what}: logId.keyId is not the sha256 of its key"));
                }
            }
            logs.push(LogKey {
                id,
                key,
                window: window(&l.public_key.valid_for, &what)?,
            });
        }
        let mut authorities = Vec::new();
        for (i, a) in raw.certificate_authorities.iter().enumerate() {
            let what = format!("certificateAuthorities[{i}]");
            let mut chain = Vec::new();
            for (j, c) in a.cert_chain.certificates.iter().enumerate() {
                let der = B64
                    .decode(&c.raw_bytes)
                    .map_err(|e| format!("{what}: certificate {j} is not base64: {e}"))?;
                chain.push(certificate(&der, &format!("{what}: certificate {j}"))?);
            }
            if chain.is_empty() {
                return Err(format!("{what}: an empty certificate chain"));
            }
            authorities.push(Authority {
                chain,
                window: window(&a.valid_for, &what)?,
            });
        }
        if authorities.is_empty() || logs.is_empty() {
            return Err(
                "a trusted root needs a certificate authority and a transparency log".into(),
            );
        }
        Ok(TrustedRoot { authorities, logs })
    }

    /// Reads a trusted root file, refused unless it and every folder
    /// above it are trusted as the policy is ([`crate::owner`]): whoever
    /// can change it chooses which identities exist.
    pub fn read(path: &Path) -> Result<TrustedRoot, String> {
        let shown = path.display().to_string();
        let f = crate::owner::open_trusted_file(path).map_err(|e| match e {
            crate::owner::OpenError::Missing(e) => format!("cannot read trusted root {shown}: {e}"),
            crate::owner::OpenError::Refused(why) => {
                format!("trusted root {shown} is not trusted: {why}")
            }
        })?;
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::Read::take(f, MAX_ROOT_BYTES + 1), &mut bytes)
            .map_err(|e| format!("cannot read trusted root {shown}: {e}"))?;
        if bytes.len() as u64 > MAX_ROOT_BYTES {
            return Err(format!(
                "trusted root {shown} is larger than {MAX_ROOT_BYTES} bytes"
            ));
        }
        TrustedRoot::parse(&bytes).map_err(|e| format!("trusted root {shown}: {e}"))
    }
}

/// cosign's `dev.sigstore.cosign/bundle` annotation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Bundle {
    #[serde(rename = "SignedEntryTimestamp")]
    signed_entry_timestamp: String,
    #[serde(rename = "Payload")]
    payload: BundlePayload,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BundlePayload {
    body: String,
    #[serde(rename = "integratedTime")]
    integrated_time: i64,
    #[serde(rename = "logIndex")]
    log_index: i64,
    #[serde(rename = "logID")]
    log_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    api_version: String,
    kind: String,
    spec: EntrySpec,
}

#[derive(Deserialize)]
struct EntrySpec {
    data: EntryData,
    signature: EntrySignature,
}

#[derive(Deserialize)]
struct EntryData {
    hash: EntryHash,
}

#[derive(Deserialize)]
struct EntryHash {
    algorithm: String,
    value: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EntrySignature {
    content: String,
    public_key: EntryKey,
}

#[derive(Deserialize)]
struct EntryKey {
    content: String,
}

fn log_err(m: impl Into<String>) -> SigError {
    SigError::Log(m.into())
}

fn cert_err(m: impl Into<String>) -> SigError {
    SigError::Certificate(m.into())
}

/// The canonical JSON the SET signs (RFC 8785: keys sorted, no spaces;
/// `body` is base64 and `logID` hexadecimal, checked by the caller, so
/// neither needs escaping).
fn set_message(p: &BundlePayload) -> Vec<u8> {
    format!(
        "{{\"body\":\"{}\",\"integratedTime\":{},\"logID\":\"{}\",\"logIndex\":{}}}",
        p.body, p.integrated_time, p.log_id, p.log_index
    )
    .into_bytes()
}

/// Checks the bundle and returns the time its log integrated the entry.
fn check_bundle(
    bundle: &str,
    payload: &[u8],
    signature: &[u8],
    leaf_der: &[u8],
    root: &TrustedRoot,
) -> Result<i64, SigError> {
    let b: Bundle = serde_json::from_str(bundle)
        .map_err(|e| log_err(format!("the bundle is not cosign's JSON: {e}")))?;
    let p = &b.payload;
    let base64_chars = |s: &str| {
        s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='))
    };
    if !base64_chars(&p.body)
        || p.log_id.len() != 64
        || !p
            .log_id
            .bytes()
            .all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
        || p.log_index < 0
        || p.integrated_time < 0
    {
        return Err(log_err(
            "the bundle's body, logID, logIndex or integratedTime is malformed",
        ));
    }
    let t = p.integrated_time;
    let log = root.logs.iter().find(|l| l.id == p.log_id).ok_or_else(|| {
        log_err(format!(
            "log {} is not in the trusted root",
            &p.log_id[..16]
        ))
    })?;
    if !log.window.contains(t) {
        return Err(log_err(format!(
            "log {}'s key was not valid at the integrated time {t}",
            &p.log_id[..16]
        )));
    }
    let set = B64
        .decode(&b.signed_entry_timestamp)
        .map_err(|e| log_err(format!("SignedEntryTimestamp is not base64: {e}")))?;
    let hash = match log.key {
        RegistryKey::P384(_) => Hash::Sha384,
        _ => Hash::Sha256,
    };
    if !log.key.verify_with(hash, &set_message(p), &set) {
        return Err(log_err(format!(
            "the signed entry timestamp does not verify with log {}'s key",
            &p.log_id[..16]
        )));
    }
    // The logged entry must be this signature by this certificate.
    let body = B64
        .decode(&p.body)
        .map_err(|e| log_err(format!("the entry body is not base64: {e}")))?;
    let e: Entry = serde_json::from_slice(&body)
        .map_err(|e| log_err(format!("the entry is not a hashedrekord: {e}")))?;
    if e.kind != "hashedrekord" || e.api_version != "0.0.1" {
        return Err(log_err(format!(
            "the entry is a {} {}, not a hashedrekord 0.0.1",
            crate::text::sanitize(&e.kind, 40),
            crate::text::sanitize(&e.api_version, 20)
        )));
    }
    let h = &e.spec.data.hash;
    if h.algorithm != "sha256" || h.value != sha256_hex(payload) {
        return Err(log_err("the logged entry is for another payload"));
    }
    if B64.decode(&e.spec.signature.content).ok().as_deref() != Some(signature) {
        return Err(log_err("the logged entry is for another signature"));
    }
    let logged_pem = B64
        .decode(&e.spec.signature.public_key.content)
        .map_err(|_| log_err("the logged certificate is not base64"))?;
    let logged = Certificate::load_pem_chain(&logged_pem)
        .map_err(|_| log_err("the logged certificate is not PEM"))?;
    if logged.len() != 1 || logged[0].to_der().ok().as_deref() != Some(leaf_der) {
        return Err(log_err("the logged entry is for another certificate"));
    }
    Ok(t)
}

/// The signature hash and whether `key` may make it, for a certificate
/// signature algorithm.
fn cert_signature_ok(cert: &Certificate, issuer: &Certificate) -> bool {
    let alg = &cert.signature_algorithm;
    if *alg != cert.tbs_certificate.signature {
        return false;
    }
    let Ok(key) = RegistryKey::from_spki(&issuer.tbs_certificate.subject_public_key_info) else {
        return false;
    };
    let hash = match (&key, alg.oid) {
        (RegistryKey::P256(_) | RegistryKey::P384(_), o) if o == OID_ECDSA_SHA256 => Hash::Sha256,
        (RegistryKey::P256(_) | RegistryKey::P384(_), o) if o == OID_ECDSA_SHA384 => Hash::Sha384,
        (RegistryKey::Ed25519(_), o) if o == crate::cosign::OID_ED25519 => Hash::Sha256,
        _ => return false,
    };
    let (Ok(tbs), Some(sig)) = (cert.tbs_certificate.to_der(), cert.signature.as_bytes()) else {
        return false;
    };
    cert.tbs_certificate.issuer == issuer.tbs_certificate.subject
        && key.verify_with(hash, &tbs, sig)
}

fn valid_at(c: &Certificate, t: i64) -> bool {
    let v = &c.tbs_certificate.validity;
    let nb = v.not_before.to_unix_duration().as_secs() as i64;
    let na = v.not_after.to_unix_duration().as_secs() as i64;
    (nb..=na).contains(&t)
}

/// The extensions of a certificate, each once, unknown critical ones refused.
fn extensions(c: &Certificate, what: &str) -> Result<Vec<x509_cert::ext::Extension>, SigError> {
    let exts = c.tbs_certificate.extensions.clone().unwrap_or_default();
    for (i, e) in exts.iter().enumerate() {
        if exts[..i].iter().any(|f| f.extn_id == e.extn_id) {
            return Err(cert_err(format!("{what} repeats extension {}", e.extn_id)));
        }
        if e.critical && !KNOWN_CRITICAL.contains(&e.extn_id) {
            return Err(cert_err(format!(
                "{what} has an unknown critical extension {}",
                e.extn_id
            )));
        }
    }
    Ok(exts)
}

fn ext<'a, T: Decode<'a>>(
    exts: &'a [x509_cert::ext::Extension],
    oid: ObjectIdentifier,
    what: &str,
) -> Result<Option<T>, SigError> {
    exts.iter()
        .find(|e| e.extn_id == oid)
        .map(|e| {
            T::from_der(e.extn_value.as_bytes())
                .map_err(|err| cert_err(format!("{what}: extension {oid}: {err}")))
        })
        .transpose()
}

/// Whether a certificate may issue certificates: basic constraints with
/// cA set, and keyCertSign if it has a key usage.
fn is_ca(c: &Certificate, what: &str) -> Result<bool, SigError> {
    let exts = extensions(c, what)?;
    let bc: Option<BasicConstraints> = ext(&exts, OID_BASIC_CONSTRAINTS, what)?;
    let ku: Option<KeyUsage> = ext(&exts, OID_KEY_USAGE, what)?;
    Ok(bc.is_some_and(|b| b.ca) && ku.is_none_or(|k| k.key_cert_sign()))
}

/// The identity a leaf certificate names: (issuer, subject).
fn identity(leaf: &Certificate) -> Result<(String, String), SigError> {
    let what = "the signer's certificate";
    let exts = extensions(leaf, what)?;
    let bc: Option<BasicConstraints> = ext(&exts, OID_BASIC_CONSTRAINTS, what)?;
    if bc.is_some_and(|b| b.ca) {
        return Err(cert_err("the signer's certificate is a CA certificate"));
    }
    let ku: Option<KeyUsage> = ext(&exts, OID_KEY_USAGE, what)?;
    if ku.is_some_and(|k| !k.digital_signature()) {
        return Err(cert_err(
            "the signer's certificate may not sign (key usage)",
        ));
    }
    let eku: Option<ExtendedKeyUsage> = ext(&exts, OID_EXT_KEY_USAGE, what)?;
    if eku.is_some_and(|k| !k.0.contains(&OID_CODE_SIGNING)) {
        return Err(cert_err("the signer's certificate is not for code signing"));
    }
    let san: SubjectAltName = ext(&exts, OID_SAN, what)?
        .ok_or_else(|| cert_err("the signer's certificate has no subject alternative name"))?;
    // Fulcio names one identity; two would leave which one signed open.
    let [name] = san.0.as_slice() else {
        return Err(cert_err(format!(
            "the signer's certificate has {} subject alternative names, not one",
            san.0.len()
        )));
    };
    let subject = match name {
        GeneralName::Rfc822Name(s) | GeneralName::UniformResourceIdentifier(s) => s.to_string(),
        _ => {
            return Err(cert_err(
                "the signer's subject alternative name is not an e-mail address or a URI",
            ));
        }
    };
    let v2 = exts
        .iter()
        .find(|e| e.extn_id == OID_ISSUER_V2)
        .map(|e| {
            der::asn1::Utf8StringRef::from_der(e.extn_value.as_bytes())
                .map(|s| s.as_str().to_string())
                .map_err(|_| cert_err("the OIDC issuer extension (.1.8) is not a UTF8String"))
        })
        .transpose()?;
    let v1 = exts
        .iter()
        .find(|e| e.extn_id == OID_ISSUER_V1)
        .map(|e| {
            String::from_utf8(e.extn_value.as_bytes().to_vec())
                .map_err(|_| cert_err("the OIDC issuer extension (.1.1) is not UTF-8"))
        })
        .transpose()?;
    let issuer = match (v2, v1) {
        (Some(a), Some(b)) if a != b => {
            return Err(cert_err("the two OIDC issuer extensions disagree"));
        }
        (Some(a), _) | (None, Some(a)) => a,
        (None, None) => {
            return Err(cert_err("the signer's certificate names no OIDC issuer"));
        }
    };
    if issuer.is_empty()
        || subject.is_empty()
        || issuer.chars().chain(subject.chars()).any(char::is_control)
    {
        return Err(cert_err(
            "an empty identity or issuer, or one with control characters",
        ));
    }
    Ok((issuer, subject))
}

/// Verifies a keyless signature (see the module's documentation) and
/// returns the signer's (issuer, subject).
pub fn verify_keyless(
    payload: &[u8],
    signature: &[u8],
    cert_pem: &str,
    bundle: Option<&str>,
    root: &TrustedRoot,
) -> Result<(String, String), SigError> {
    // One PEM block, nothing else, and its DER canonical.
    let (label, leaf_der) = der::pem::decode_vec(cert_pem.trim().as_bytes()).map_err(|e| {
        cert_err(format!(
            "the certificate annotation is not one PEM block: {e}"
        ))
    })?;
    if label != "CERTIFICATE" {
        return Err(cert_err(format!("PEM label {label:?} is not CERTIFICATE")));
    }
    let leaf = &certificate(&leaf_der, "the signer's certificate").map_err(cert_err)?;
    let bundle = bundle.ok_or_else(|| {
        log_err("no transparency log bundle: the certificate's time of use cannot be known")
    })?;
    let t = check_bundle(bundle, payload, signature, &leaf_der, root)?;
    if !valid_at(leaf, t) {
        return Err(cert_err(format!(
            "the signer's certificate was not valid at the integrated time {t}"
        )));
    }
    let mut chained = false;
    for a in &root.authorities {
        if !a.window.contains(t) || !cert_signature_ok(leaf, &a.chain[0]) {
            continue;
        }
        for (i, c) in a.chain.iter().enumerate() {
            let what = format!("CA certificate {i}");
            if !is_ca(c, &what)? {
                return Err(cert_err(format!(
                    "{what} of the trusted root that issued the signer's certificate is not a CA"
                )));
            }
            if !valid_at(c, t) {
                return Err(cert_err(format!(
                    "{what} was not valid at the integrated time {t}"
                )));
            }
            if let Some(up) = a.chain.get(i + 1)
                && !cert_signature_ok(c, up)
            {
                return Err(cert_err(format!(
                    "{what} is not signed by the next one of its chain"
                )));
            }
        }
        chained = true;
        break;
    }
    if !chained {
        return Err(cert_err(format!(
            "the signer's certificate does not chain to a certificate authority of the trusted root valid at {t}"
        )));
    }
    let key = RegistryKey::from_spki(&leaf.tbs_certificate.subject_public_key_info)
        .map_err(|e| cert_err(format!("the signer's key: {e}")))?;
    if !key.verify_payload(payload, signature) {
        return Err(SigError::BadSignature(format!(
            "the payload signature does not verify with the certificate's {}",
            key
        )));
    }
    identity(leaf)
}

#[cfg(test)]
pub(crate) mod tests {
    use std::str::FromStr;
    use std::time::Duration;

    use der::asn1::{BitString, Ia5String, OctetString, UtcTime, Utf8StringRef};
    use spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned};
    use x509_cert::ext::Extension;
    use x509_cert::ext::pkix::KeyUsages;
    use x509_cert::name::Name;
    use x509_cert::serial_number::SerialNumber;
    use x509_cert::time::{Time, Validity};
    use x509_cert::{TbsCertificate, certificate::Version};

    use super::*;
    use crate::cosign::{
        BUNDLE_ANNOTATION, CERTIFICATE_ANNOTATION, CosignSignature, RegistrySigningKey,
        SIGNATURE_ANNOTATION, Signer, Trust, assemble, parse, verify_signature,
    };

    pub(crate) const ISSUER: &str = "https://accounts.example.com";
    pub(crate) const EMAIL: &str = "release@acme.example";
    /// The integrated time of the tests' log entries (2025-06-15).
    pub(crate) const T: i64 = 1_750_000_000;

    fn utc(t: i64) -> Time {
        Time::UtcTime(UtcTime::from_unix_duration(Duration::from_secs(t as u64)).unwrap())
    }

    pub(crate) fn extension(oid: ObjectIdentifier, critical: bool, value: Vec<u8>) -> Extension {
        Extension {
            extn_id: oid,
            critical,
            extn_value: OctetString::new(value).unwrap(),
        }
    }

    pub(crate) fn ca_extensions() -> Vec<Extension> {
        vec![
            extension(
                OID_BASIC_CONSTRAINTS,
                true,
                BasicConstraints {
                    ca: true,
                    path_len_constraint: None,
                }
                .to_der()
                .unwrap(),
            ),
            extension(
                OID_KEY_USAGE,
                true,
                KeyUsage(KeyUsages::KeyCertSign | KeyUsages::CRLSign)
                    .to_der()
                    .unwrap(),
            ),
        ]
    }

    /// A Fulcio-like leaf's extensions: code signing, `sans` e-mail
    /// addresses, `issuer` in the .1.8 extension.
    pub(crate) fn leaf_extensions(sans: &[&str], issuer: &str) -> Vec<Extension> {
        let names = sans
            .iter()
            .map(|s| GeneralName::Rfc822Name(Ia5String::new(s).unwrap()))
            .collect();
        vec![
            extension(
                OID_KEY_USAGE,
                true,
                KeyUsage(KeyUsages::DigitalSignature.into())
                    .to_der()
                    .unwrap(),
            ),
            extension(
                OID_EXT_KEY_USAGE,
                false,
                ExtendedKeyUsage(vec![OID_CODE_SIGNING]).to_der().unwrap(),
            ),
            extension(OID_SAN, true, SubjectAltName(names).to_der().unwrap()),
            extension(
                OID_ISSUER_V2,
                false,
                Utf8StringRef::new(issuer).unwrap().to_der().unwrap(),
            ),
        ]
    }

    /// A certificate for `key` named `subject`, issued by `issuer` with
    /// `issuer_key` (ECDSA P-256, SHA-256), valid from `from` to `to`.
    pub(crate) fn issue(
        subject: &str,
        key: &RegistryKey,
        issuer: &str,
        issuer_key: &RegistrySigningKey,
        (from, to): (i64, i64),
        exts: Vec<Extension>,
    ) -> Certificate {
        let alg = AlgorithmIdentifierOwned {
            oid: OID_ECDSA_SHA256,
            parameters: None,
        };
        let tbs = TbsCertificate {
            version: Version::V3,
            serial_number: SerialNumber::new(&[1, 2, 3]).unwrap(),
            signature: alg.clone(),
            issuer: Name::from_str(&format!("CN={issuer}")).unwrap(),
            validity: Validity {
                not_before: utc(from),
                not_after: utc(to),
            },
            subject: Name::from_str(&format!("CN={subject}")).unwrap(),
            subject_public_key_info: SubjectPublicKeyInfoOwned::from_der(&key.spki_der()).unwrap(),
            issuer_unique_id: None,
            subject_unique_id: None,
            extensions: Some(exts),
        };
        let sig = issuer_key.sign(&tbs.to_der().unwrap());
        Certificate {
            tbs_certificate: tbs,
            signature_algorithm: alg,
            signature: BitString::from_bytes(&sig).unwrap(),
        }
    }

    pub(crate) fn pem(c: &Certificate) -> String {
        der::pem::encode_string(
            "CERTIFICATE",
            der::pem::LineEnding::LF,
            &c.to_der().unwrap(),
        )
        .unwrap()
    }

    /// A test Sigstore: a CA, a log, and its trusted root.
    pub(crate) struct Pki {
        pub ca_key: RegistrySigningKey,
        pub ca: Certificate,
        pub log_key: RegistrySigningKey,
    }

    impl Pki {
        pub(crate) fn new() -> Pki {
            let ca_key = RegistrySigningKey::generate_p256().unwrap();
            let ca = issue(
                "test-fulcio",
                &ca_key.public(),
                "test-fulcio",
                &ca_key,
                (T - 86400 * 365, T + 86400 * 365),
                ca_extensions(),
            );
            Pki {
                ca_key,
                ca,
                log_key: RegistrySigningKey::generate_p256().unwrap(),
            }
        }

        /// A trusted_root.json listing `chain` as the CA and the log.
        pub(crate) fn root_json_with(&self, chain: &[&Certificate]) -> String {
            let certs: Vec<serde_json::Value> = chain
                .iter()
                .map(|c| serde_json::json!({ "rawBytes": B64.encode(c.to_der().unwrap()) }))
                .collect();
            let log_der = self.log_key.public().spki_der();
            serde_json::json!({
                "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
                "tlogs": [{
                    "baseUrl": "https://log.example",
                    "hashAlgorithm": "SHA2_256",
                    "publicKey": {
                        "rawBytes": B64.encode(&log_der),
                        "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                        "validFor": { "start": "2025-01-01T00:00:00Z" },
                    },
                    "logId": { "keyId": B64.encode(sha2::Sha256::digest_bytes(&log_der)) },
                }],
                "certificateAuthorities": [{
                    "subject": { "organization": "test", "commonName": "test-fulcio" },
                    "uri": "https://ca.example",
                    "certChain": { "certificates": certs },
                    "validFor": { "start": "2025-01-01T00:00:00.000Z", "end": "2026-01-01T00:00:00Z" },
                }],
            })
            .to_string()
        }

        pub(crate) fn root(&self) -> TrustedRoot {
            TrustedRoot::parse(self.root_json_with(&[&self.ca]).as_bytes()).unwrap()
        }

        /// A leaf for a new key, valid ten minutes around `T`.
        pub(crate) fn leaf(
            &self,
            sans: &[&str],
            issuer: &str,
        ) -> (RegistrySigningKey, Certificate) {
            let k = RegistrySigningKey::generate_p256().unwrap();
            let c = issue(
                "",
                &k.public(),
                "test-fulcio",
                &self.ca_key,
                (T - 300, T + 300),
                leaf_extensions(sans, issuer),
            );
            (k, c)
        }

        /// cosign's bundle for `payload` signed `sig` by `cert`, logged at
        /// `t` and signed by `log`.
        pub(crate) fn bundle(
            &self,
            payload: &[u8],
            sig: &[u8],
            cert: &Certificate,
            t: i64,
            log: &RegistrySigningKey,
        ) -> String {
            let body = serde_json::json!({
                "apiVersion": "0.0.1",
                "kind": "hashedrekord",
                "spec": {
                    "data": { "hash": { "algorithm": "sha256", "value": sha256_hex(payload) } },
                    "signature": {
                        "content": B64.encode(sig),
                        "publicKey": { "content": B64.encode(pem(cert)) },
                    },
                },
            });
            let p = BundlePayload {
                body: B64.encode(body.to_string()),
                integrated_time: t,
                log_index: 7,
                log_id: sha256_hex(&self.log_key.public().spki_der()),
            };
            let set = log.sign(&set_message(&p));
            serde_json::json!({
                "SignedEntryTimestamp": B64.encode(set),
                "Payload": {
                    "body": p.body, "integratedTime": t, "logIndex": 7, "logID": p.log_id,
                },
            })
            .to_string()
        }

        /// A keyless signature of `payload` for `sans`/`issuer`.
        pub(crate) fn sign(&self, payload: &[u8], sans: &[&str], issuer: &str) -> CosignSignature {
            let (k, c) = self.leaf(sans, issuer);
            let sig = k.sign(payload);
            CosignSignature {
                payload: payload.to_vec(),
                bundle: Some(self.bundle(payload, &sig, &c, T, &self.log_key)),
                signature: sig,
                certificate: Some(pem(&c)),
                chain: None,
            }
        }
    }

    trait DigestBytes {
        fn digest_bytes(b: &[u8]) -> Vec<u8>;
    }
    impl DigestBytes for sha2::Sha256 {
        fn digest_bytes(b: &[u8]) -> Vec<u8> {
            use sha2::Digest;
            sha2::Sha256::digest(b).to_vec()
        }
    }

    fn check(s: &CosignSignature, root: &TrustedRoot) -> Result<(String, String), SigError> {
        verify_keyless(
            &s.payload,
            &s.signature,
            s.certificate.as_deref().unwrap(),
            s.bundle.as_deref(),
            root,
        )
    }

    #[test]
    fn rfc3339_times() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("2025-06-15T15:06:40Z"), Some(T));
        assert_eq!(parse_rfc3339("2025-06-15T17:06:40.123+02:00"), Some(T));
        assert_eq!(parse_rfc3339("2000-02-29T00:00:00Z"), Some(951_782_400));
        for bad in [
            "2025-06-15",
            "2025-13-01T00:00:00Z",
            "2025-06-15T00:00:00",
            "x025-06-15T00:00:00Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_keyless_signature_verifies_offline() {
        let pki = Pki::new();
        let s = pki.sign(b"payload", &[EMAIL], ISSUER);
        assert_eq!(
            check(&s, &pki.root()),
            Ok((ISSUER.to_string(), EMAIL.to_string()))
        );
    }

    #[test]
    fn the_issuer_is_the_certificates() {
        // A certificate from another issuer names that issuer: the policy
        // compares it (a wrong issuer is not the trusted identity).
        let pki = Pki::new();
        let s = pki.sign(b"payload", &[EMAIL], "https://evil.example");
        assert_eq!(check(&s, &pki.root()).unwrap().0, "https://evil.example");
    }

    #[test]
    fn a_certificate_expired_at_the_integrated_time_is_refused() {
        let pki = Pki::new();
        let (k, c) = pki.leaf(&[EMAIL], ISSUER);
        let sig = k.sign(b"p");
        // Logged twenty minutes later: the certificate had expired.
        let bundle = pki.bundle(b"p", &sig, &c, T + 1200, &pki.log_key);
        let r = verify_keyless(b"p", &sig, &pem(&c), Some(&bundle), &pki.root());
        assert!(
            matches!(&r, Err(SigError::Certificate(m)) if m.contains("not valid at")),
            "{r:?}"
        );
        // No bundle: no time, refused.
        let r = verify_keyless(b"p", &sig, &pem(&c), None, &pki.root());
        assert!(matches!(r, Err(SigError::Log(_))), "{r:?}");
    }

    #[test]
    fn a_set_by_an_unknown_log_is_refused() {
        let pki = Pki::new();
        let (k, c) = pki.leaf(&[EMAIL], ISSUER);
        let sig = k.sign(b"p");
        let rogue = RegistrySigningKey::generate_p256().unwrap();
        let bundle = pki.bundle(b"p", &sig, &c, T, &rogue);
        let r = verify_keyless(b"p", &sig, &pem(&c), Some(&bundle), &pki.root());
        assert!(
            matches!(&r, Err(SigError::Log(m)) if m.contains("does not verify")),
            "{r:?}"
        );
        // A log id the root does not list.
        let other = Pki {
            log_key: rogue.clone(),
            ..Pki::new()
        };
        let bundle = other.bundle(b"p", &sig, &c, T, &rogue);
        let r = verify_keyless(b"p", &sig, &pem(&c), Some(&bundle), &pki.root());
        assert!(
            matches!(&r, Err(SigError::Log(m)) if m.contains("not in the trusted root")),
            "{r:?}"
        );
    }

    #[test]
    fn the_log_entry_must_be_this_signature() {
        let pki = Pki::new();
        let good = pki.sign(b"payload", &[EMAIL], ISSUER);
        // Another payload signed by the same certificate's key, with the
        // logged bundle of the first: the entry records another hash.
        let mut tampered = good.clone();
        tampered.payload = b"payloaD".to_vec();
        let r = check(&tampered, &pki.root());
        assert!(
            matches!(&r, Err(SigError::Log(m)) if m.contains("another payload")),
            "{r:?}"
        );
        // The same payload and certificate with another valid signature
        // (ECDSA's (r, -s)): the entry logged the first one.
        let (k, c) = pki.leaf(&[EMAIL], ISSUER);
        let first = k.sign(b"payload");
        let bundle = pki.bundle(b"payload", &first, &c, T, &pki.log_key);
        let (r, s) = p256::ecdsa::Signature::from_der(&first)
            .unwrap()
            .split_scalars();
        let second = p256::ecdsa::Signature::from_scalars(r, -s)
            .unwrap()
            .to_der()
            .as_bytes()
            .to_vec();
        assert_ne!(first, second);
        let r = verify_keyless(b"payload", &second, &pem(&c), Some(&bundle), &pki.root());
        assert!(
            matches!(&r, Err(SigError::Log(m)) if m.contains("another signature")),
            "{r:?}"
        );
        assert!(verify_keyless(b"payload", &first, &pem(&c), Some(&bundle), &pki.root()).is_ok());
        // A valid log entry moved onto another certificate.
        let (k2, c2) = pki.leaf(&[EMAIL], ISSUER);
        let mut moved = good.clone();
        moved.signature = k2.sign(b"payload");
        moved.certificate = Some(pem(&c2));
        let r = check(&moved, &pki.root());
        assert!(matches!(r, Err(SigError::Log(_))), "{r:?}");
        // An altered integrated time breaks the SET.
        let b = good
            .bundle
            .clone()
            .unwrap()
            .replace(&format!("{T}"), &format!("{}", T + 1));
        let r = verify_keyless(
            &good.payload,
            &good.signature,
            good.certificate.as_deref().unwrap(),
            Some(&b),
            &pki.root(),
        );
        assert!(
            matches!(&r, Err(SigError::Log(m)) if m.contains("does not verify")),
            "{r:?}"
        );
    }

    #[test]
    fn a_signature_by_another_key_than_the_certificates_is_refused() {
        let pki = Pki::new();
        let (_, c) = pki.leaf(&[EMAIL], ISSUER);
        let other = RegistrySigningKey::generate_p256().unwrap();
        let sig = other.sign(b"p");
        let bundle = pki.bundle(b"p", &sig, &c, T, &pki.log_key);
        let r = verify_keyless(b"p", &sig, &pem(&c), Some(&bundle), &pki.root());
        assert!(matches!(r, Err(SigError::BadSignature(_))), "{r:?}");
    }

    #[test]
    fn two_sans_or_none_are_refused() {
        let pki = Pki::new();
        let s = pki.sign(b"p", &[EMAIL, "attacker@evil.example"], ISSUER);
        let r = check(&s, &pki.root());
        assert!(
            matches!(&r, Err(SigError::Certificate(m)) if m.contains("2 subject alternative")),
            "{r:?}"
        );
        let s = pki.sign(b"p", &[], ISSUER);
        assert!(matches!(
            check(&s, &pki.root()),
            Err(SigError::Certificate(_))
        ));
        // A second SAN extension, an unknown critical extension, or two
        // issuers that disagree.
        let second_san = {
            let mut e = leaf_extensions(&[EMAIL], ISSUER);
            e.push(leaf_extensions(&["attacker@evil.example"], ISSUER).remove(2));
            e
        };
        let unknown_critical = {
            let mut e = leaf_extensions(&[EMAIL], ISSUER);
            e.push(extension(
                ObjectIdentifier::new_unwrap("1.2.3.4"),
                true,
                vec![5, 0],
            ));
            e
        };
        let two_issuers = {
            let mut e = leaf_extensions(&[EMAIL], ISSUER);
            e.push(extension(
                OID_ISSUER_V1,
                false,
                b"https://evil.example".to_vec(),
            ));
            e
        };
        for (exts, want) in [
            (second_san, "repeats extension"),
            (unknown_critical, "unknown critical"),
            (two_issuers, "disagree"),
        ] {
            let k = RegistrySigningKey::generate_p256().unwrap();
            let c = issue(
                "",
                &k.public(),
                "test-fulcio",
                &pki.ca_key,
                (T - 300, T + 300),
                exts,
            );
            let sig = k.sign(b"p");
            let b = pki.bundle(b"p", &sig, &c, T, &pki.log_key);
            let r = verify_keyless(b"p", &sig, &pem(&c), Some(&b), &pki.root());
            assert!(
                matches!(&r, Err(SigError::Certificate(m)) if m.contains(want)),
                "{want}: {r:?}"
            );
        }
        // Two certificates in the annotation.
        let good = pki.sign(b"p", &[EMAIL], ISSUER);
        let two = format!("{}{}", good.certificate.clone().unwrap(), pem(&pki.ca));
        let r = verify_keyless(
            b"p",
            &good.signature,
            &two,
            good.bundle.as_deref(),
            &pki.root(),
        );
        assert!(matches!(r, Err(SigError::Certificate(_))), "{r:?}");
    }

    #[test]
    fn chains_end_at_ca_certificates_of_the_root() {
        let pki = Pki::new();
        // A leaf issued by a certificate that is not a CA, itself issued
        // by the CA: listed in the root or not, it is refused.
        let mid_key = RegistrySigningKey::generate_p256().unwrap();
        let mid = issue(
            "not-a-ca",
            &mid_key.public(),
            "test-fulcio",
            &pki.ca_key,
            (T - 1000, T + 1000),
            leaf_extensions(&["mid@acme.example"], ISSUER),
        );
        let k = RegistrySigningKey::generate_p256().unwrap();
        let leaf = issue(
            "",
            &k.public(),
            "not-a-ca",
            &mid_key,
            (T - 300, T + 300),
            leaf_extensions(&[EMAIL], ISSUER),
        );
        let sig = k.sign(b"p");
        let bundle = pki.bundle(b"p", &sig, &leaf, T, &pki.log_key);
        let r = verify_keyless(b"p", &sig, &pem(&leaf), Some(&bundle), &pki.root());
        assert!(
            matches!(&r, Err(SigError::Certificate(m)) if m.contains("does not chain")),
            "{r:?}"
        );
        let root = TrustedRoot::parse(pki.root_json_with(&[&mid, &pki.ca]).as_bytes()).unwrap();
        let r = verify_keyless(b"p", &sig, &pem(&leaf), Some(&bundle), &root);
        assert!(
            matches!(&r, Err(SigError::Certificate(m)) if m.contains("not a CA")),
            "{r:?}"
        );
        // A CA certificate as the signer is refused too.
        let s = {
            let sig = pki.ca_key.sign(b"p");
            let b = pki.bundle(b"p", &sig, &pki.ca, T, &pki.log_key);
            verify_keyless(b"p", &sig, &pem(&pki.ca), Some(&b), &pki.root())
        };
        assert!(matches!(s, Err(SigError::Certificate(_))), "{s:?}");
    }

    #[test]
    fn a_ca_outside_its_window_does_not_count() {
        let pki = Pki::new();
        let s = pki.sign(b"p", &[EMAIL], ISSUER);
        let json = pki
            .root_json_with(&[&pki.ca])
            .replace("\"2026-01-01T00:00:00Z\"", "\"2025-06-01T00:00:00Z\"");
        let root = TrustedRoot::parse(json.as_bytes()).unwrap();
        assert!(matches!(check(&s, &root), Err(SigError::Certificate(_))));
    }

    #[test]
    fn bad_trusted_roots_are_named() {
        for (json, want) in [
            ("{", "not a Sigstore trusted root"),
            ("{\"tlogs\":[]}", "needs a certificate authority"),
            ("{\"mediaType\":\"text/plain\"}", "media type"),
        ] {
            let e = TrustedRoot::parse(json.as_bytes()).unwrap_err();
            assert!(e.contains(want), "{json}: {e}");
        }
        let pki = Pki::new();
        let j = pki
            .root_json_with(&[&pki.ca])
            .replace("2025-01-01T00:00:00Z", "yesterday");
        assert!(
            TrustedRoot::parse(j.as_bytes())
                .unwrap_err()
                .contains("RFC 3339")
        );
    }

    #[test]
    fn keyless_signatures_in_cosigns_format() {
        let pki = Pki::new();
        let d = sha256_hex(b"manifest");
        let key = RegistrySigningKey::generate_p256().unwrap();
        let made = crate::cosign::make_signature(&d, "r/x", &key).unwrap();
        let s = pki.sign(&made.payload, &[EMAIL], ISSUER);
        let art = assemble(
            made.payload.clone(),
            &[
                (SIGNATURE_ANNOTATION, B64.encode(&s.signature)),
                (CERTIFICATE_ANNOTATION, s.certificate.clone().unwrap()),
                (BUNDLE_ANNOTATION, s.bundle.clone().unwrap()),
            ],
        );
        let sigs = parse(&art.manifest, &[&art.payload]).unwrap();
        let root = pki.root();
        let t = Trust {
            keys: &[],
            root: Some(&root),
        };
        assert_eq!(
            verify_signature(sigs[0].as_ref().unwrap(), &d, &t),
            Ok(Signer::Identity {
                issuer: ISSUER.into(),
                subject: EMAIL.into()
            })
        );
        // Without a trusted root in the policy.
        assert_eq!(
            verify_signature(sigs[0].as_ref().unwrap(), &d, &Trust::default()),
            Err(SigError::NoTrustedRoot)
        );
    }
}
