//! XML and synthetic export and userdata (`hwloc/export.h`).

/// Decodes base64 userdata content (`None` if it is not base64).
pub(crate) fn base64_decode(_s: &str) -> Option<Vec<u8>> {
    None
}
