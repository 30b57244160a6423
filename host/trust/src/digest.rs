//! sha256 digests in hexadecimal: what names a component's bytes in the
//! policy, in signatures and in the compiled cache.

use sha2::{Digest, Sha256};

/// Lower-case hexadecimal of bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The sha256 digest of bytes, in hexadecimal.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Normalises a digest written as `sha256:HEX` or `HEX`.
pub fn parse_digest(s: &str) -> Result<String, String> {
    let h = s.strip_prefix("sha256:").unwrap_or(s).to_ascii_lowercase();
    if h.len() != 64 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!(
            "digest {:?} is not sha256:<64 hexadecimal digits>",
            crate::text::sanitize(s, 80)
        ));
    }
    Ok(h)
}
