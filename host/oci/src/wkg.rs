//! wkg package names (`ns:pkg@version`) resolved to OCI references as
//! `wkg` resolves them: the registry from wkg's configuration file
//! (`package_registry_overrides`, then `namespace_registries`, then
//! `default_registry`) or `--registry`, then the registry's metadata
//! (`https://HOST/.well-known/wasm-pkg/registry.json`: the OCI registry
//! and a namespace prefix; none found means the host itself, no prefix),
//! and the repository `PREFIX NS/PKG` with the version as tag.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::OciError;
use crate::client::Client;
use crate::reference::{PackageName, Reference};

/// The parts of wkg's configuration file wloc reads.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Config {
    /// The registry of packages no other entry names.
    #[serde(default)]
    pub default_registry: Option<String>,
    /// Registries by namespace (a host, or a table with `registry` and
    /// inline `metadata`).
    #[serde(default)]
    pub namespace_registries: BTreeMap<String, NamespaceRegistry>,
    /// Registries by package (`ns:pkg`).
    #[serde(default)]
    pub package_registry_overrides: BTreeMap<String, NamespaceRegistry>,
    /// Per-registry settings (`[registry."HOST".oci]`).
    #[serde(default)]
    pub registry: BTreeMap<String, RegistryConfig>,
}

/// A registry named for a namespace or package.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum NamespaceRegistry {
    /// Just its host.
    Host(String),
    /// Its host and metadata given inline.
    Full {
        /// The host.
        registry: String,
        /// The metadata (as the well-known document would say it).
        #[serde(default)]
        metadata: Option<Metadata>,
    },
}

/// `[registry."HOST"]`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct RegistryConfig {
    /// `[registry."HOST".oci]`.
    #[serde(default)]
    pub oci: Option<OciConfig>,
}

/// `[registry."HOST".oci]`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct OciConfig {
    /// `http` or `https`.
    #[serde(default)]
    pub protocol: Option<String>,
}

/// A registry's metadata (`registry.json`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// The preferred protocol (`oci`).
    #[serde(default)]
    pub preferred_protocol: Option<String>,
    /// The OCI settings.
    #[serde(default)]
    pub oci: Option<OciMetadata>,
    /// Old form of `oci.registry`.
    #[serde(default)]
    pub oci_registry: Option<String>,
    /// Old form of `oci.namespacePrefix`.
    #[serde(default)]
    pub oci_namespace_prefix: Option<String>,
}

/// The OCI part of a registry's metadata.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OciMetadata {
    /// The OCI registry host.
    #[serde(default)]
    pub registry: Option<String>,
    /// Prefix of repository names.
    #[serde(default)]
    pub namespace_prefix: Option<String>,
}

/// wkg's configuration file: `$XDG_CONFIG_HOME/wasm-pkg/config.toml`,
/// else `$HOME/.config/wasm-pkg/config.toml`.
pub fn default_config_path() -> Option<PathBuf> {
    let env = wloc_trust::env::var_os;
    if let Some(x) = env("XDG_CONFIG_HOME").filter(|v| Path::new(v).is_absolute()) {
        return Some(PathBuf::from(x).join("wasm-pkg/config.toml"));
    }
    env("HOME")
        .filter(|v| Path::new(v).is_absolute())
        .map(|h| PathBuf::from(h).join(".config/wasm-pkg/config.toml"))
}

impl Config {
    /// Reads a configuration file (a missing one is empty).
    pub fn load(path: &Path) -> Result<Config, OciError> {
        if !path.exists() {
            return Ok(Config::default());
        }
        let bytes = wloc_trust::file::read_regular_to_end(path, 1 << 20)
            .map_err(|e| OciError::file(path, e))?;
        let text = String::from_utf8(bytes).map_err(|_| OciError::file(path, "not UTF-8"))?;
        toml::from_str(&text).map_err(|e| OciError::file(path, e.message().trim_end()))
    }

    /// Whether the configuration asks for plain HTTP to `registry`.
    pub fn plain_http(&self, registry: &str) -> bool {
        self.registry
            .get(registry)
            .and_then(|r| r.oci.as_ref())
            .and_then(|o| o.protocol.as_deref())
            == Some("http")
    }
}

impl Config {
    /// The hosts the configuration asks plain HTTP for
    /// (`[registry."HOST".oci] protocol = "http"`).
    pub fn plain_http_hosts(&self) -> std::collections::BTreeSet<String> {
        self.registry
            .keys()
            .filter(|h| self.plain_http(h))
            .cloned()
            .collect()
    }
}

/// The OCI reference of a package: `version` (or the package's own)
/// as tag; `registry` overrides the configuration's choice.
pub fn resolve(
    name: &PackageName,
    config: &Config,
    registry: Option<&str>,
    client: &Client,
) -> Result<Reference, OciError> {
    let key = format!("{}:{}", name.namespace, name.package);
    let chosen = match registry {
        Some(r) => NamespaceRegistry::Host(r.to_string()),
        None => config
            .package_registry_overrides
            .get(&key)
            .or_else(|| config.namespace_registries.get(&name.namespace))
            .cloned()
            .or_else(|| config.default_registry.clone().map(NamespaceRegistry::Host))
            .ok_or_else(|| OciError::Reference {
                text: name.to_string(),
                why: "no registry for this namespace: give --registry, or name one in wkg's configuration (namespace_registries)".into(),
            })?,
    };
    let (host, metadata) = match chosen {
        NamespaceRegistry::Host(h) => {
            let m = fetch_metadata(&h, config.plain_http(&h), client);
            (h, m)
        }
        NamespaceRegistry::Full { registry, metadata } => (registry, metadata.unwrap_or_default()),
    };
    let oci = metadata.oci.unwrap_or_default();
    let oci_registry = oci.registry.or(metadata.oci_registry).unwrap_or(host);
    let prefix = oci
        .namespace_prefix
        .or(metadata.oci_namespace_prefix)
        .unwrap_or_default();
    let text = format!(
        "{oci_registry}/{prefix}{}/{}{}",
        name.namespace,
        name.package,
        name.version
            .as_ref()
            .map(|v| format!(":{v}"))
            .unwrap_or_default()
    );
    Reference::parse(&text)
}

/// The registry's well-known metadata; the default (the host itself, no
/// prefix) if it has none or cannot be reached, as wkg does.
fn fetch_metadata(host: &str, plain_http: bool, client: &Client) -> Metadata {
    let scheme = if plain_http { "http" } else { "https" };
    let url = format!("{scheme}://{host}/.well-known/wasm-pkg/registry.json");
    client
        .get_small(&url)
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wkg_configuration() {
        let c: Config = toml::from_str(
            r#"
            default_registry = "example.com"
            [namespace_registries]
            acme = "127.0.0.1:5000"
            [namespace_registries.ba]
            registry = "bytecodealliance.org"
            metadata = { preferredProtocol = "oci", oci = { registry = "ghcr.io", namespacePrefix = "bytecodealliance/" } }
            [registry."127.0.0.1:5000".oci]
            protocol = "http"
            "#,
        )
        .unwrap();
        assert!(c.plain_http("127.0.0.1:5000"));
        assert!(!c.plain_http("example.com"));
        assert_eq!(
            c.plain_http_hosts().into_iter().collect::<Vec<_>>(),
            ["127.0.0.1:5000"]
        );
        let client = Client::new(crate::client::Options {
            timeout: std::time::Duration::from_millis(200),
            ..Default::default()
        })
        .unwrap();
        let r = resolve(
            &PackageName::parse("ba:sample@1.0.0").unwrap(),
            &c,
            None,
            &client,
        )
        .unwrap();
        assert_eq!(r.to_string(), "ghcr.io/bytecodealliance/ba/sample:1.0.0");
    }
}
