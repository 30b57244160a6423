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
