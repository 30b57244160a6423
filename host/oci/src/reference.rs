//! References: where an artifact is.
//!
//! * `REGISTRY/REPOSITORY[:TAG][@sha256:HEX]`: in a registry; the first
//!   part is a registry only if it has a `.` or a `:`, or is `localhost`
//!   (as docker reads it), and a registry must be given: wloc has no
//!   default registry;
//! * `oci:DIR[:NAME]`: in an OCI image layout folder, the manifest whose
//!   `org.opencontainers.image.ref.name` is NAME (skopeo's syntax);
//! * `NS:PKG[@VERSION]`: a wkg package name, resolved by [`crate::wkg`].

use crate::OciError;

/// Where an artifact is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// In a registry.
    Registry(Reference),
    /// In a layout folder.
    Layout {
        /// The folder.
        dir: std::path::PathBuf,
        /// The name in its index (none: the only manifest).
        name: Option<String>,
    },
    /// A wkg package name, to resolve.
    Package(PackageName),
}

/// A reference to a registry's artifact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// `host[:port]`.
    pub registry: String,
    /// `path/of/repository`.
    pub repository: String,
    /// The tag.
    pub tag: Option<String>,
    /// `sha256:HEX`.
    pub digest: Option<String>,
}

/// A wkg package name with an optional version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackageName {
    /// The namespace (`wasi` of `wasi:http`).
    pub namespace: String,
    /// The package (`http` of `wasi:http`).
    pub package: String,
    /// The version, if given.
    pub version: Option<semver::Version>,
}

fn bad(text: &str, why: impl Into<String>) -> OciError {
    OciError::Reference {
        text: wloc_trust::text::sanitize(text, 200),
        why: why.into(),
    }
}

/// A tag: 1 to 128 of `[A-Za-z0-9_.-]`, not starting with `.` or `-`.
pub fn valid_tag(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= 128
        && !t.starts_with(['.', '-'])
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}

/// A repository path: `/`-separated parts of lowercase letters, digits
/// and single separators `.`, `_`, `__` or `-` runs, as the distribution
/// specification's grammar has them.
fn valid_repository(r: &str) -> bool {
    !r.is_empty()
        && r.len() <= 255
        && r.split('/').all(|part| {
            let b = part.as_bytes();
            !b.is_empty()
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"._-".contains(c))
        })
}

/// A wkg label: lowercase words of letters and digits joined by `-`.
fn valid_label(l: &str) -> bool {
    !l.is_empty()
        && l.split('-').all(|w| {
            !w.is_empty()
                && w.starts_with(|c: char| c.is_ascii_lowercase())
                && w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

impl Reference {
    /// Parses `REGISTRY/REPOSITORY[:TAG][@sha256:HEX]`.
    pub fn parse(text: &str) -> Result<Reference, OciError> {
        let (rest, digest) = match text.split_once('@') {
            Some((r, d)) => {
                if !crate::types::valid_digest(d) {
                    return Err(bad(
                        text,
                        "the digest is not sha256:<64 lowercase hexadecimal digits>",
                    ));
                }
                (r, Some(d.to_string()))
            }
            None => (text, None),
        };
        let (registry, path) = rest
            .split_once('/')
            .ok_or_else(|| bad(text, "no registry: write REGISTRY/REPOSITORY[:TAG]"))?;
        if !(registry.contains(['.', ':']) || registry == "localhost") {
            return Err(bad(
                text,
                format!(
                    "'{registry}' is not a registry host (give one with a '.' or a port, or localhost)"
                ),
            ));
        }
        if registry.is_empty()
            || !registry
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
        {
            return Err(bad(text, "invalid registry host"));
        }
        let (repository, tag) = match path.rsplit_once(':') {
            Some((r, t)) if !t.contains('/') => (r, Some(t.to_string())),
            _ => (path, None),
        };
        if !valid_repository(repository) {
            return Err(bad(
                text,
                format!(
                    "invalid repository '{repository}' (lowercase letters, digits, '.', '_', '-', '/')"
                ),
            ));
        }
        if let Some(t) = &tag
            && !valid_tag(t)
        {
            return Err(bad(text, format!("invalid tag '{t}'")));
        }
        Ok(Reference {
            registry: registry.to_string(),
            repository: repository.to_string(),
            tag,
            digest,
        })
    }

    /// What to ask the registry's manifest endpoint for: the digest if
    /// given, else the tag, else `latest`.
    pub fn manifest_ref(&self) -> &str {
        self.digest
            .as_deref()
            .or(self.tag.as_deref())
            .unwrap_or("latest")
    }

    /// The same repository at another tag.
    pub fn with_tag(&self, tag: &str) -> Reference {
        Reference {
            tag: Some(tag.to_string()),
            digest: None,
            ..self.clone()
        }
    }

    /// The same repository at a digest.
    pub fn with_digest(&self, digest: &str) -> Reference {
        Reference {
            digest: Some(digest.to_string()),
            ..self.clone()
        }
    }

    /// `registry/repository`.
    pub fn name(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }
}

impl std::fmt::Display for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.registry, self.repository)?;
        if let Some(t) = &self.tag {
            write!(f, ":{t}")?;
        }
        if let Some(d) = &self.digest {
            write!(f, "@{d}")?;
        }
        Ok(())
    }
}

impl PackageName {
    /// Parses `NS:PKG[@VERSION]`.
    pub fn parse(text: &str) -> Result<PackageName, OciError> {
        let (name, version) = match text.split_once('@') {
            Some((n, v)) => (
                n,
                Some(semver::Version::parse(v).map_err(|e| bad(text, format!("version: {e}")))?),
            ),
            None => (text, None),
        };
        let (namespace, package) = name
            .split_once(':')
            .ok_or_else(|| bad(text, "a package name is NAMESPACE:PACKAGE"))?;
        if !valid_label(namespace) || !valid_label(package) {
            return Err(bad(
                text,
                "namespace and package are lowercase words joined by '-'",
            ));
        }
        Ok(PackageName {
            namespace: namespace.to_string(),
            package: package.to_string(),
            version,
        })
    }
}

impl std::fmt::Display for PackageName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.namespace, self.package)?;
        if let Some(v) = &self.version {
            write!(f, "@{v}")?;
        }
        Ok(())
    }
}

impl Target {
    /// Parses a registry reference, `oci:DIR[:NAME]` or a wkg name (a
    /// name has no `/`; a registry reference always has one).
    pub fn parse(text: &str) -> Result<Target, OciError> {
        if let Some(rest) = text.strip_prefix("oci:") {
            let (dir, name) = match rest.rsplit_once(':') {
                Some((d, n)) if !n.contains('/') && !d.is_empty() => (d, Some(n.to_string())),
                _ => (rest, None),
            };
            if dir.is_empty() {
                return Err(bad(text, "oci:DIR[:NAME] needs a folder"));
            }
            if let Some(n) = &name
                && (n.is_empty() || n.chars().any(char::is_control))
            {
                return Err(bad(text, "invalid name in the layout"));
            }
            return Ok(Target::Layout {
                dir: dir.into(),
                name,
            });
        }
        if !text.contains('/') {
            return PackageName::parse(text).map(Target::Package);
        }
        Reference::parse(text).map(Target::Registry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references() {
        let r = Reference::parse("127.0.0.1:5000/acme/nic:1.2.0").unwrap();
        assert_eq!(r.registry, "127.0.0.1:5000");
        assert_eq!(r.repository, "acme/nic");
        assert_eq!(r.tag.as_deref(), Some("1.2.0"));
        assert_eq!(r.to_string(), "127.0.0.1:5000/acme/nic:1.2.0");
        let d = format!("sha256:{}", "a".repeat(64));
        let r = Reference::parse(&format!("ghcr.io/a/b@{d}")).unwrap();
        assert_eq!(r.manifest_ref(), d);
        assert_eq!(
            Reference::parse("localhost/x").unwrap().manifest_ref(),
            "latest"
        );
        for badref in [
            "acme/nic:1",
            "nic",
            "ghcr.io/",
            "ghcr.io/UPPER",
            "ghcr.io/a//b",
            "ghcr.io/a:bad tag",
            "ghcr.io/a@sha256:12",
            "ghcr.io/a:-x",
        ] {
            assert!(Reference::parse(badref).is_err(), "{badref}");
        }
    }

    #[test]
    fn targets() {
        assert_eq!(
            Target::parse("oci:/tmp/l:1.0.0").unwrap(),
            Target::Layout {
                dir: "/tmp/l".into(),
                name: Some("1.0.0".into())
            }
        );
        assert_eq!(
            Target::parse("oci:/tmp/l").unwrap(),
            Target::Layout {
                dir: "/tmp/l".into(),
                name: None
            }
        );
        match Target::parse("acme:nic-tool@1.2.3").unwrap() {
            Target::Package(p) => {
                assert_eq!(
                    (p.namespace.as_str(), p.package.as_str()),
                    ("acme", "nic-tool")
                );
                assert_eq!(p.version, Some(semver::Version::new(1, 2, 3)));
            }
            t => panic!("{t:?}"),
        }
        assert!(Target::parse("Acme:x").is_err());
        assert!(Target::parse("acme:x@1.2").is_err());
        assert!(matches!(
            Target::parse("localhost:5000/a:1").unwrap(),
            Target::Registry(_)
        ));
    }
}
