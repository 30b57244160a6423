//! Publisher signatures of components (ed25519).
//!
//! A signed component ends with a custom section named `wloc:signature`
//! whose payload is 104 bytes:
//!
//! | bytes | content |
//! | --- | --- |
//! | 0..8 | `WLOCSIG1` |
//! | 8..40 | the publisher's ed25519 public key |
//! | 40..104 | the ed25519 signature |
//!
//! The signature is over `wloc:signature:v1\0` followed by the sha256
//! digest of every byte of the file before the signature section, so it
//! covers the code and the manifest.  The section must be the last one:
//! nothing can be appended after signing.  A key in the section proves
//! nothing by itself; the policy says which keys are trusted.
//!
//! That digest is also the component's identity, [`component_digest`]:
//! what `[[allow]]` and `[[deny]]` entries name, what errors show and
//! what the compiled cache is keyed by.  It leaves out the signature
//! section, the one part of the file the signature cannot cover, so that
//! re-encoding that section cannot give one signed build a second
//! digest (a `[[deny]] digest` would miss it while the publisher's
//! `[[allow]]` admitted it); [`inspect`] also refuses the section unless
//! its header is in its shortest encoding.
//!
//! Key files are one line of text: `wloc-ed25519-secret:` and 64
//! hexadecimal digits (the 32-byte seed) for a secret key, written with
//! mode 0600, and `ed25519:` and 64 hexadecimal digits for a public key
//! (the form the policy takes).

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use sha2::{Digest, Sha256};

use crate::digest::{hex, sha256_hex};
pub use crate::manifest::SIGNATURE_SECTION;
use crate::manifest::{Inspection, append_custom_section, inspect};

const MAGIC: &[u8; 8] = b"WLOCSIG1";
const CONTEXT: &[u8] = b"wloc:signature:v1\0";
const PUBLIC_PREFIX: &str = "ed25519:";
const SECRET_PREFIX: &str = "wloc-ed25519-secret:";

/// A publisher's public key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PublicKey(pub VerifyingKey);

impl PublicKey {
    /// Parses `ed25519:HEX` (64 hexadecimal digits).
    pub fn parse(s: &str) -> Result<PublicKey, String> {
        let s = s.trim();
        let h = s.strip_prefix(PUBLIC_PREFIX).ok_or_else(|| {
            format!(
                "public key {:?} does not start with {PUBLIC_PREFIX}",
                short(s)
            )
        })?;
        let bytes = unhex32(h).ok_or_else(|| {
            format!(
                "public key {:?}: expected 64 hexadecimal digits after {PUBLIC_PREFIX}",
                short(s)
            )
        })?;
        VerifyingKey::from_bytes(&bytes)
            .map(PublicKey)
            .map_err(|_| format!("public key {:?} is not a valid ed25519 point", short(s)))
    }
}

impl std::fmt::Display for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{PUBLIC_PREFIX}{}", hex(self.0.as_bytes()))
    }
}

fn short(s: &str) -> String {
    crate::text::sanitize(s, 80)
}

fn unhex32(h: &str) -> Option<[u8; 32]> {
    if h.len() != 64 || !h.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&h[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// A new secret key from the system's random source.
pub fn generate() -> Result<SigningKey, String> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| format!("no random numbers: {e}"))?;
    Ok(SigningKey::from_bytes(&seed))
}

/// The text of a secret key file.
pub fn secret_key_text(k: &SigningKey) -> String {
    format!("{SECRET_PREFIX}{}\n", hex(&k.to_bytes()))
}

/// Parses the text of a secret key file.
pub fn parse_secret_key(text: &str) -> Result<SigningKey, String> {
    let h = text
        .trim()
        .strip_prefix(SECRET_PREFIX)
        .ok_or_else(|| format!("not a wloc secret key (it should start with {SECRET_PREFIX})"))?;
    let seed = unhex32(h).ok_or("a wloc secret key needs 64 hexadecimal digits")?;
    Ok(SigningKey::from_bytes(&seed))
}

/// The public key of a secret key.
pub fn public_key(k: &SigningKey) -> PublicKey {
    PublicKey(k.verifying_key())
}

fn message(unsigned: &[u8]) -> Vec<u8> {
    let mut m = CONTEXT.to_vec();
    m.extend_from_slice(&Sha256::digest(unsigned));
    m
}

/// The bytes before the signature section and that section's payload,
/// given `found`, the [`inspect`]ion of `wasm`.
fn split_inspected<'w, 'f>(
    wasm: &'w [u8],
    found: &'f Inspection,
) -> Result<(&'w [u8], Option<&'f [u8]>), String> {
    match &found.signature {
        None => Ok((wasm, None)),
        Some((payload, section)) => {
            if section.end != wasm.len() || section.start > section.end {
                return Err("bytes follow the signature section".into());
            }
            Ok((&wasm[..section.start], Some(payload)))
        }
    }
}

/// The digest that names a component: the sha256, in hexadecimal, of
/// its canonical form, every byte of the file except a final
/// `wloc:signature` section (all of them when it is unsigned).  It is
/// the digest the signature signs, so it does not change when a
/// component is signed, signed again or signed by another key.
///
/// This is the one function that gives a component's digest: admission
/// and the policy's `digest` entries, the `wloc component` commands, the
/// runtime's checks and the compiled cache's key all use it.  Bytes that
/// are not a well-formed component (which are never admitted) are named
/// by the sha256 of all their bytes.
pub fn component_digest(wasm: &[u8]) -> String {
    match inspect(wasm) {
        Ok(found) => digest_inspected(wasm, &found),
        Err(_) => sha256_hex(wasm),
    }
}

/// As [`component_digest`], with `found`, the [`inspect`]ion of `wasm`.
pub fn digest_inspected(wasm: &[u8], found: &Inspection) -> String {
    match split_inspected(wasm, found) {
        Ok((unsigned, _)) => sha256_hex(unsigned),
        Err(_) => sha256_hex(wasm),
    }
}

/// The bytes of a component before its signature section (all of them
/// when it is unsigned).
pub fn unsigned_part(wasm: &[u8]) -> Result<&[u8], String> {
    split_inspected(wasm, &inspect(wasm)?).map(|(unsigned, _)| unsigned)
}

/// Signs a component (replacing an earlier signature) and returns the
/// signed bytes.
pub fn sign(wasm: &[u8], key: &SigningKey) -> Result<Vec<u8>, String> {
    let unsigned = unsigned_part(wasm)?;
    let sig = key.sign(&message(unsigned));
    let mut payload = MAGIC.to_vec();
    payload.extend_from_slice(key.verifying_key().as_bytes());
    payload.extend_from_slice(&sig.to_bytes());
    let mut out = unsigned.to_vec();
    append_custom_section(&mut out, SIGNATURE_SECTION, &payload);
    Ok(out)
}

/// What the signature of a component says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SignatureState {
    /// No signature section.
    Unsigned,
    /// Signed with this key, and the signature matches the bytes.
    Valid(PublicKey),
    /// A signature section that does not verify (why).
    Invalid(String),
}

/// Checks the signature of a component.  Malformed components are errors;
/// a signature that does not match is [`SignatureState::Invalid`].
pub fn verify(wasm: &[u8]) -> Result<SignatureState, String> {
    verify_inspected(wasm, &inspect(wasm)?)
}

/// As [`verify`], with `found`, the [`inspect`]ion of `wasm` (so that a
/// load parses the component once).
pub fn verify_inspected(wasm: &[u8], found: &Inspection) -> Result<SignatureState, String> {
    let (unsigned, payload) = split_inspected(wasm, found)?;
    let Some(p) = payload else {
        return Ok(SignatureState::Unsigned);
    };
    if p.len() != 104 || &p[..8] != MAGIC {
        return Ok(SignatureState::Invalid(format!(
            "the signature section is malformed ({} bytes; expected {} and 104 bytes)",
            p.len(),
            String::from_utf8_lossy(MAGIC)
        )));
    }
    let mut kb = [0u8; 32];
    kb.copy_from_slice(&p[8..40]);
    let Ok(key) = VerifyingKey::from_bytes(&kb) else {
        return Ok(SignatureState::Invalid(
            "the signature names an invalid public key".into(),
        ));
    };
    let mut sb = [0u8; 64];
    sb.copy_from_slice(&p[40..104]);
    let sig = Signature::from_bytes(&sb);
    // Strict verification refuses malleable signatures and weak keys.
    match key.verify_strict(&message(unsigned), &sig) {
        Ok(()) => Ok(SignatureState::Valid(PublicKey(key))),
        Err(_) => Ok(SignatureState::Invalid(format!(
            "the signature by {} does not match the component's bytes (altered after signing?)",
            PublicKey(key)
        ))),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::manifest::tests::{component_with_code, sample};
    use crate::manifest::{Manifest, embed};

    fn component() -> Vec<u8> {
        let m = Manifest::parse("name = \"x\"\nversion = \"1\"\nkind = \"discovery\"").unwrap();
        embed(b"\0asm\x0d\0\x01\0", &m).unwrap()
    }

    #[test]
    fn signs_and_verifies() {
        let k = generate().unwrap();
        let signed = sign(&component(), &k).unwrap();
        assert_eq!(
            verify(&signed).unwrap(),
            SignatureState::Valid(public_key(&k))
        );
        // Re-signing replaces the signature.
        let k2 = generate().unwrap();
        let resigned = sign(&signed, &k2).unwrap();
        assert_eq!(resigned.len(), signed.len());
        assert_eq!(
            verify(&resigned).unwrap(),
            SignatureState::Valid(public_key(&k2))
        );
        assert_eq!(verify(&component()).unwrap(), SignatureState::Unsigned);
    }

    #[test]
    fn detects_tampering() {
        let k = generate().unwrap();
        let mut signed = sign(&component(), &k).unwrap();
        // Flip a byte of the manifest text.
        let at = signed.windows(7).position(|w| w == b"version").unwrap();
        signed[at] = b'V';
        assert!(matches!(
            verify(&signed),
            Ok(SignatureState::Invalid(_)) | Err(_)
        ));
        // A flipped signature byte.
        let mut signed = sign(&component(), &k).unwrap();
        let n = signed.len();
        signed[n - 1] ^= 1;
        assert!(
            matches!(verify(&signed).unwrap(), SignatureState::Invalid(m) if m.contains("does not match"))
        );
        // Anything appended after the signature.
        let mut signed = sign(&component(), &k).unwrap();
        append_custom_section(&mut signed, "extra", b"x");
        assert!(verify(&signed).unwrap_err().contains("not the last"));
    }

    /// `v` in LEB128 of exactly `len` bytes (padded when longer than
    /// needed).
    fn leb_padded(v: usize, len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| {
                let b = ((v >> (7 * i)) & 0x7f) as u8;
                if i + 1 < len { b | 0x80 } else { b }
            })
            .collect()
    }

    /// `signed` with its signature section written with a size of
    /// `size_len` bytes and a name length of `name_len_len` bytes.
    pub(crate) fn reencoded(signed: &[u8], size_len: usize, name_len_len: usize) -> Vec<u8> {
        let found = inspect(signed).unwrap();
        let (payload, range) = found.signature.unwrap();
        let name = SIGNATURE_SECTION.as_bytes();
        let mut body = leb_padded(name.len(), name_len_len);
        body.extend_from_slice(name);
        body.extend_from_slice(&payload);
        let mut out = signed[..range.start].to_vec();
        out.push(0);
        out.extend(leb_padded(body.len(), size_len));
        out.extend(body);
        out
    }

    #[test]
    fn the_digest_is_that_of_the_signed_bytes_whoever_signs() {
        let unsigned = component_with_code(&sample());
        let (k, k2) = (generate().unwrap(), generate().unwrap());
        let signed = sign(&unsigned, &k).unwrap();
        let d = component_digest(&unsigned);
        assert_eq!(d, sha256_hex(&unsigned));
        assert_eq!(component_digest(&signed), d);
        assert_eq!(component_digest(&sign(&signed, &k2).unwrap()), d);
        assert_ne!(sha256_hex(&signed), d);
        // The shortest encoding is the one `sign` writes.
        assert_eq!(reencoded(&signed, 1, 1), signed);
    }

    #[test]
    fn refuses_every_other_encoding_of_the_signature_section() {
        let k = generate().unwrap();
        let unsigned = component_with_code(&sample());
        let signed = sign(&unsigned, &k).unwrap();
        // A padded size (2 to 5 bytes) or name length: the signature
        // would still verify, the file's sha256 would not be the same.
        let start = inspect(&signed).unwrap().signature.unwrap().1.start;
        for (size_len, name_len_len) in [(2, 1), (5, 1), (1, 2), (5, 5)] {
            let padded = reencoded(&signed, size_len, name_len_len);
            assert_eq!(&padded[..start], &signed[..start]);
            assert_ne!(padded.len(), signed.len());
            let e = inspect(&padded).unwrap_err();
            assert!(
                e.contains("shortest encoding"),
                "{size_len},{name_len_len}: {e}"
            );
            assert!(verify(&padded).is_err());
        }
        // Two signature sections.
        let mut twice = signed.clone();
        let payload = inspect(&signed).unwrap().signature.unwrap().0;
        append_custom_section(&mut twice, SIGNATURE_SECTION, &payload);
        assert!(inspect(&twice).unwrap_err().contains("not the last"));
        // A signature section before another section.
        let mut early = unsigned.clone();
        append_custom_section(&mut early, SIGNATURE_SECTION, &payload);
        append_custom_section(&mut early, "name", b"\0");
        assert!(inspect(&early).unwrap_err().contains("not the last"));
    }

    #[test]
    fn keys_round_trip_and_bad_keys_are_named() {
        let k = generate().unwrap();
        let k2 = parse_secret_key(&secret_key_text(&k)).unwrap();
        assert_eq!(k.to_bytes(), k2.to_bytes());
        let p = public_key(&k);
        assert_eq!(PublicKey::parse(&p.to_string()).unwrap(), p);
        assert!(
            PublicKey::parse("ed25519:abcd")
                .unwrap_err()
                .contains("64 hexadecimal")
        );
        assert!(PublicKey::parse("rsa:00").unwrap_err().contains("ed25519:"));
        assert!(parse_secret_key("ed25519:00").is_err());
    }

    proptest::proptest! {
        /// Damaged components (bytes overwritten, cut or inserted, in the
        /// code section or anywhere else) are read or refused, never a
        /// panic; and what still reads also gives a signature verdict.
        #[test]
        fn damaged_components_never_panic(
            edits in proptest::collection::vec((0usize..400, proptest::num::u8::ANY, 0u8..3), 1..6),
        ) {
            let mut w = component_with_code(&sample());
            for (at, byte, how) in edits {
                let at = at % (w.len() + 1);
                match how {
                    0 if at < w.len() => w[at] = byte,
                    1 => w.truncate(at),
                    _ => w.insert(at, byte),
                }
            }
            if let Ok(found) = inspect(&w) {
                let _ = verify_inspected(&w, &found);
            }
        }
    }
}
