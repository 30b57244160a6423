//! The Wasm OCI artifact (CNCF TAG Runtime "Wasm OCI Artifact layout",
//! as wkg writes and reads it): an image manifest whose config has media
//! type `application/vnd.wasm.config.v0+json` and lists the component's
//! imports and exports, and one `application/wasm` layer, the component.

use std::collections::BTreeMap;

use crate::OciError;
use crate::types::DescriptorChecks as _;
use crate::types::{
    ComponentInfo, Descriptor, MANIFEST, Manifest, TITLE, VERSION, WASM_CONFIG, WASM_LAYER,
    WasmConfig,
};

/// Largest config blob read.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// An artifact ready to push or store: the manifest, the config and the
/// layer, each with its bytes.
#[derive(Clone, Debug)]
pub struct Artifact {
    /// The manifest's bytes (what its digest is of).
    pub manifest: Vec<u8>,
    /// The config's bytes.
    pub config: Vec<u8>,
    /// The component's bytes.
    pub layer: Vec<u8>,
}

/// `YYYY-MM-DDTHH:MM:SSZ` of a Unix time (days to civil date, as in
/// Howard Hinnant's `civil_from_days`; no date crate for one line).
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86400) as i64;
    let rem = secs % 86400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

impl Artifact {
    /// The artifact of a component: its config lists the imports and
    /// exports found in it; `version` and `title` become annotations;
    /// `created` is a Unix time.
    pub fn build(
        component: &[u8],
        version: Option<&str>,
        title: Option<&str>,
        created: u64,
    ) -> Result<Artifact, OciError> {
        let found = wloc_trust::manifest::inspect(component)
            .map_err(|e| OciError::invalid("the component", e))?;
        let layer_digest = crate::digest_of(component);
        let config = WasmConfig {
            created: Some(rfc3339(created)),
            author: None,
            architecture: "wasm".into(),
            os: "wasip2".into(),
            layer_digests: vec![layer_digest.clone()],
            component: Some(ComponentInfo {
                exports: found.exports,
                imports: found.imports,
                target: None,
            }),
        };
        let config =
            serde_json::to_vec(&config).map_err(|e| OciError::invalid("config", e.to_string()))?;
        let mut annotations = BTreeMap::new();
        if let Some(v) = version {
            annotations.insert(VERSION.to_string(), v.to_string());
        }
        if let Some(t) = title {
            annotations.insert(TITLE.to_string(), t.to_string());
        }
        let manifest = Manifest {
            schema_version: 2,
            media_type: Some(MANIFEST.into()),
            artifact_type: None,
            subject: None,
            config: Descriptor {
                media_type: WASM_CONFIG.into(),
                digest: crate::digest_of(&config),
                size: config.len() as u64,
                artifact_type: None,
                annotations: BTreeMap::new(),
            },
            layers: vec![Descriptor {
                media_type: WASM_LAYER.into(),
                digest: layer_digest,
                size: component.len() as u64,
                artifact_type: None,
                annotations: BTreeMap::new(),
            }],
            annotations,
        };
        let manifest = serde_json::to_vec(&manifest)
            .map_err(|e| OciError::invalid("manifest", e.to_string()))?;
        Ok(Artifact {
            manifest,
            config,
            layer: component.to_vec(),
        })
    }
}

/// Parses a manifest and checks it is a Wasm artifact: an image manifest
/// (not an index), the Wasm config media type, exactly one
/// `application/wasm` layer, well-formed digests.  `what` names it.
pub fn check_manifest(what: &str, bytes: &[u8], media_type: &str) -> Result<Manifest, OciError> {
    if media_type == crate::types::INDEX {
        return Err(OciError::invalid(
            what,
            "an image index, not a Wasm artifact's manifest",
        ));
    }
    let m = Manifest::parse(bytes, &[MANIFEST]).map_err(|e| OciError::invalid(what, e))?;
    if m.config.media_type != WASM_CONFIG {
        return Err(OciError::invalid(
            what,
            format!(
                "config media type {:?}, not {WASM_CONFIG}: not a Wasm artifact",
                wloc_trust::text::sanitize(&m.config.media_type, 100)
            ),
        ));
    }
    m.config.check(what)?;
    let wasm: Vec<&Descriptor> = m
        .layers
        .iter()
        .filter(|l| l.media_type == WASM_LAYER)
        .collect();
    if m.layers.len() != 1 || wasm.len() != 1 {
        return Err(OciError::invalid(
            what,
            format!(
                "{} layers, {} of them {WASM_LAYER}: a Wasm artifact has one",
                m.layers.len(),
                wasm.len()
            ),
        ));
    }
    wasm[0].check(what)?;
    Ok(m)
}

/// Checks a config blob is a Wasm config naming the layer.
pub fn check_config(what: &str, bytes: &[u8], layer: &Descriptor) -> Result<WasmConfig, OciError> {
    let c: WasmConfig = serde_json::from_slice(bytes)
        .map_err(|e| OciError::invalid(what, format!("not a Wasm config: {e}")))?;
    if c.architecture != "wasm" {
        return Err(OciError::invalid(
            what,
            format!(
                "architecture {:?}, not wasm",
                wloc_trust::text::sanitize(&c.architecture, 40)
            ),
        ));
    }
    if !c.layer_digests.is_empty() && !c.layer_digests.contains(&layer.digest) {
        return Err(OciError::invalid(
            what,
            "layerDigests does not name the layer",
        ));
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_000_000), "2026-11-30T00:53:20Z");
    }
}
