//! The grant decision: whether a component may run and what it gets.
//!
//! [`admit`] reads the component's manifest and signature, asks the
//! [`Policy`], and checks every import against the grant: an interface
//! that is not granted, a WIT version the host does not speak, sockets or
//! any other unknown import refuse the component at load time, with a
//! message naming it and the capability.  The [`Grant`] it returns says
//! what the component gets: file roots, CPUID, settings, limits and the
//! [`Interfaces`] to link.  `wloc-runtime` (the one enforcement point)
//! then links *only* those interfaces, and every run of the component
//! goes through [`Grant::narrow`], which drops file roots, CPUID and
//! settings that were not granted and applies the policy's limits,
//! whatever the caller passed.
//!
//! WIT versions: the host speaks the versions in [`WIT_VERSIONS`]; when a
//! new version is added, its bindings are linked by the runtime from the
//! same [`Interfaces`], so no version has a way around the grant.

use crate::error::{ComponentError, ErrorKind};
use crate::limits::Limits;
use crate::manifest::{Capabilities, Inspection, Kind, Manifest, inspect, root_within};
use crate::policy::{Decision, Policy, Subject, intersect};
use crate::signing::{PublicKey, SignatureState, component_digest, digest_inspected};
use crate::text::sanitize;

/// The WIT package of wloc's interfaces.
pub const WIT_PACKAGE: &str = "wloc:backend";
/// The versions of it this host speaks.
pub const WIT_VERSIONS: &[&str] = &["0.1.0"];

/// What a fabric reader exports: the `reader` interface of
/// `wloc:fabric@0.2.0`, or the `fabric` interface of the
/// `wloc:backend@0.1.0` `fabric-reader` world.
pub const FABRIC_EXPORTS: &[&str] = &["wloc:fabric/reader@0.2.0", "fabric"];

/// The WASI interfaces linked for Rust's standard library (with an empty
/// context: no environment, arguments, preopens; clocks and random
/// numbers only).  Anything else of WASI (sockets above all) is refused.
const WASI_LINKED: &[&str] = &[
    "wasi:io/error",
    "wasi:io/poll",
    "wasi:io/streams",
    "wasi:clocks/wall-clock",
    "wasi:clocks/monotonic-clock",
    "wasi:random/random",
    "wasi:random/insecure",
    "wasi:random/insecure-seed",
    "wasi:cli/exit",
    "wasi:cli/environment",
    "wasi:cli/stdin",
    "wasi:cli/stdout",
    "wasi:cli/stderr",
    "wasi:cli/terminal-input",
    "wasi:cli/terminal-output",
    "wasi:cli/terminal-stdin",
    "wasi:cli/terminal-stdout",
    "wasi:cli/terminal-stderr",
    "wasi:filesystem/preopens",
    "wasi:filesystem/types",
];

/// Which of wloc's interfaces are linked for a component (`types` and
/// `log` always are).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Interfaces {
    /// `files`.
    pub files: bool,
    /// `cpuid`.
    pub cpuid: bool,
    /// `config`.
    pub config: bool,
    /// `topology` (annotation backends).
    pub topology: bool,
}

impl Interfaces {
    /// Everything a discovery backend can import.
    pub const DISCOVERY_ALL: Interfaces = Interfaces {
        files: true,
        cpuid: true,
        config: true,
        topology: false,
    };
}

/// What a component was granted.
#[derive(Clone, Debug)]
pub struct Grant {
    /// Capabilities (never more than its manifest asks for).
    pub caps: Capabilities,
    /// Limits of each run.
    pub limits: Limits,
    /// Interfaces linked.
    pub interfaces: Interfaces,
}

/// The settings of a run that a [`Grant`] narrows (the runtime's run
/// options).
pub trait Narrow {
    /// These settings, narrowed to `grant`.
    fn narrowed(&self, grant: &Grant) -> Self;
}

impl Grant {
    /// The run options of a run, narrowed to the grant: file roots outside
    /// it are dropped, CPUID and settings that were not granted are
    /// removed, and the limits are the grant's.
    pub fn narrow<O: Narrow>(&self, opts: &O) -> O {
        opts.narrowed(self)
    }

    /// The file roots a run keeps of `roots`, those its caller opened:
    /// `None` when all of them lie inside the grant (the caller's access
    /// is kept as it is), else what both the caller and the grant name.
    pub fn files_kept(&self, roots: Vec<String>) -> Option<Vec<String>> {
        let inside = |r: &String| self.caps.files.iter().any(|g| root_within(r, g));
        if roots.iter().all(inside) {
            return None;
        }
        Some(
            intersect(
                &Capabilities {
                    files: roots,
                    ..Capabilities::default()
                },
                &self.caps,
            )
            .files,
        )
    }
}

/// A component the policy allowed, with its grant.
#[derive(Clone, Debug)]
pub struct Admission {
    /// Its manifest.
    pub manifest: Manifest,
    /// Its digest ([`component_digest`]), hexadecimal.
    pub digest: String,
    /// Where it came from (a path, or `built-in`).
    pub source: String,
    /// Built into wloc.
    pub builtin: bool,
    /// The key of its valid signature.
    pub signer: Option<PublicKey>,
    /// The policy entry that allowed it.
    pub by: String,
    /// What it was granted.
    pub grant: Grant,
}

/// What can be learnt of a component without running or trusting it.
#[derive(Clone, Debug)]
pub struct Examined {
    /// Its digest ([`component_digest`]), hexadecimal.
    pub digest: String,
    /// Manifest, imports, exports.
    pub inspection: Inspection,
    /// Its signature.
    pub signature: SignatureState,
}

/// Reads a component's manifest, signature, imports and exports.
pub fn examine(bytes: &[u8]) -> Result<Examined, String> {
    examine_known(bytes, None)
}

/// As [`examine`], for bytes whose digest may already be known.
fn examine_known(bytes: &[u8], digest: Option<String>) -> Result<Examined, String> {
    let inspection = inspect(bytes)?;
    let signature = crate::signing::verify_inspected(bytes, &inspection)?;
    let digest = digest.unwrap_or_else(|| digest_inspected(bytes, &inspection));
    Ok(Examined {
        digest,
        inspection,
        signature,
    })
}

/// Splits `wloc:backend/files@0.1.0` into (`files`, `0.1.0`).
fn wloc_import(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix(WIT_PACKAGE)?.strip_prefix('/')?;
    Some(rest.split_once('@').unwrap_or((rest, "")))
}

/// The versionless name of a WASI import (`wasi:io/error@0.2.3` gives
/// `wasi:io/error`).
fn unversioned(name: &str) -> &str {
    name.split_once('@').map_or(name, |(n, _)| n)
}

/// Checks every import against the grant and returns the interfaces to
/// link.  CPUID asked for in the manifest (`requested`) but withheld by
/// the policy is linked with no PU to query, so that a component for
/// which it is optional (Linux discovery's cache inclusiveness) still
/// runs; imported without being asked for, it is refused.
pub fn check_imports(
    kind: Kind,
    imports: &[String],
    requested: &Capabilities,
    grant: &Capabilities,
) -> Result<Interfaces, String> {
    let mut ifaces = Interfaces::default();
    for imp in imports {
        let shown = sanitize(imp, 120);
        if let Some((iface, version)) = wloc_import(imp) {
            if !WIT_VERSIONS.contains(&version) {
                return Err(format!(
                    "it speaks {WIT_PACKAGE}@{} (import {shown}); this host speaks {WIT_PACKAGE}@{}",
                    sanitize(version, 40),
                    WIT_VERSIONS.join(", @")
                ));
            }
            match iface {
                "types" | "log" => {}
                "files" if !grant.files.is_empty() => ifaces.files = true,
                "files" => {
                    return Err(format!(
                        "it imports {shown}, but no file roots are granted (capability `files`)"
                    ));
                }
                "cpuid" if grant.cpuid || requested.cpuid => ifaces.cpuid = true,
                "cpuid" => {
                    return Err(format!(
                        "it imports {shown}, but CPUID is not granted (capability `cpuid`)"
                    ));
                }
                "config" if !grant.config.is_empty() => ifaces.config = true,
                "config" => {
                    return Err(format!(
                        "it imports {shown}, but no settings are granted (capability `config`)"
                    ));
                }
                "topology" if kind == Kind::Annotation => ifaces.topology = true,
                _ => {
                    return Err(format!(
                        "it imports {shown}, which a {kind} backend is never given"
                    ));
                }
            }
        } else if unversioned(imp).starts_with("wasi:sockets/") {
            return Err(format!(
                "it imports {shown}: network access (capability `sockets`) is never granted"
            ));
        } else if WASI_LINKED.contains(&unversioned(imp)) {
        } else {
            return Err(format!("it imports {shown}, which the host never gives"));
        }
    }
    Ok(ifaces)
}

fn refused(name: &str, digest: &str, why: String) -> ComponentError {
    ComponentError::new(name, digest, ErrorKind::Refused(why))
}

/// Decides whether a component may run and what it is granted: the
/// manifest must be there and valid, a signature (if any) must verify,
/// the policy must allow it, and its imports must fit the grant.
/// `label` names the component in errors until its manifest is read.
pub fn admit(
    policy: &Policy,
    bytes: &[u8],
    builtin: bool,
    label: &str,
    source: &str,
) -> Result<Admission, ComponentError> {
    admit_with(
        policy,
        bytes,
        None,
        None,
        builtin,
        label,
        source,
        Limits::default(),
    )
}

/// As [`admit`] for a component pulled from a registry: the signatures
/// stored beside it, verified by [`crate::cosign::RegistrySigners`] for
/// these bytes, count as well as the embedded one.  A denied digest,
/// publisher or identity is refused whoever signed it.
pub fn admit_registry(
    policy: &Policy,
    bytes: &[u8],
    registry: &crate::cosign::RegistrySigners,
    label: &str,
    source: &str,
) -> Result<Admission, ComponentError> {
    admit_with(
        policy,
        bytes,
        None,
        Some(registry),
        false,
        label,
        source,
        Limits::default(),
    )
}

/// As [`admit`], for bytes whose digest ([`component_digest`]) is already
/// known (those of a component built into wloc, recorded when it was
/// built), running with `base` limits unless the policy sets others.
pub fn admit_known(
    policy: &Policy,
    bytes: &[u8],
    digest: String,
    builtin: bool,
    label: &str,
    source: &str,
    base: Limits,
) -> Result<Admission, ComponentError> {
    admit_with(
        policy,
        bytes,
        Some(digest),
        None,
        builtin,
        label,
        source,
        base,
    )
}

/// As [`admit`], running with `base` limits unless the policy sets
/// others; the digest is computed from the bytes unless given.
#[allow(clippy::too_many_arguments)]
fn admit_with(
    policy: &Policy,
    bytes: &[u8],
    digest: Option<String>,
    registry: Option<&crate::cosign::RegistrySigners>,
    builtin: bool,
    label: &str,
    source: &str,
    base: Limits,
) -> Result<Admission, ComponentError> {
    let ex = match examine_known(bytes, digest.clone()) {
        Ok(ex) => ex,
        Err(e) => {
            let digest = digest.unwrap_or_else(|| component_digest(bytes));
            return Err(refused(label, &digest, e));
        }
    };
    let digest = ex.digest.clone();
    let manifest = ex.inspection.manifest.clone().ok_or_else(|| {
        refused(
            label,
            &digest,
            format!("it has no {} section", crate::manifest::MANIFEST_SECTION),
        )
    })?;
    let name = manifest.name.as_str();
    let signer = match &ex.signature {
        SignatureState::Unsigned => None,
        SignatureState::Valid(k) => Some(*k),
        SignatureState::Invalid(why) => {
            return Err(refused(name, &digest, format!("bad signature: {why}")));
        }
    };
    let subject = Subject {
        name,
        version: &manifest.version,
        digest: &digest,
        signer: signer.as_ref(),
        registry,
        builtin,
        requested: &manifest.capabilities,
    };
    let (caps, limits, by) = match policy.decide_with_base(&subject, base) {
        Decision::Allowed { grant, limits, by } => (grant, limits, by),
        Decision::Denied(why) => return Err(refused(name, &digest, why)),
    };
    let export = match manifest.kind {
        Kind::Discovery => "discover",
        Kind::Annotation => "annotate",
        Kind::Fabric => FABRIC_EXPORTS[0],
    };
    let exported = |e: &String| match manifest.kind {
        Kind::Fabric => FABRIC_EXPORTS.contains(&e.as_str()),
        _ => e == export,
    };
    if !ex.inspection.exports.iter().any(exported) {
        return Err(refused(
            name,
            &digest,
            format!(
                "its manifest says {} but it does not export `{export}`",
                manifest.kind
            ),
        ));
    }
    let interfaces = check_imports(
        manifest.kind,
        &ex.inspection.imports,
        &manifest.capabilities,
        &caps,
    )
    .map_err(|e| refused(name, &digest, e))?;
    Ok(Admission {
        manifest,
        digest,
        source: source.to_string(),
        builtin,
        signer,
        by,
        grant: Grant {
            caps,
            limits,
            interfaces,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::tests::caps;

    fn imports(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn imports_must_fit_the_grant() {
        let g = caps(&["/sys"], false, &["a"]);
        let i = check_imports(
            Kind::Discovery,
            &imports(&[
                "wloc:backend/types@0.1.0",
                "wloc:backend/files@0.1.0",
                "wloc:backend/config@0.1.0",
                "wasi:io/error@0.2.6",
                "wasi:cli/environment@0.2.0",
            ]),
            &g,
            &g,
        )
        .unwrap();
        assert_eq!(
            i,
            Interfaces {
                files: true,
                cpuid: false,
                config: true,
                topology: false
            }
        );
        let e = check_imports(
            Kind::Discovery,
            &imports(&["wloc:backend/cpuid@0.1.0"]),
            &g,
            &g,
        )
        .unwrap_err();
        assert!(e.contains("cpuid") && e.contains("not granted"), "{e}");
        // Asked for but withheld: linked, with no PU to query.
        let asked = caps(&["/sys"], true, &["a"]);
        assert!(
            check_imports(
                Kind::Discovery,
                &imports(&["wloc:backend/cpuid@0.1.0"]),
                &asked,
                &g
            )
            .unwrap()
            .cpuid
        );
        let e = check_imports(
            Kind::Discovery,
            &imports(&["wloc:backend/files@0.1.0"]),
            &caps(&[], false, &[]),
            &caps(&[], false, &[]),
        )
        .unwrap_err();
        assert!(e.contains("capability `files`"), "{e}");
        let e = check_imports(
            Kind::Discovery,
            &imports(&["wloc:backend/log@0.2.0"]),
            &g,
            &g,
        )
        .unwrap_err();
        assert!(
            e.contains("wloc:backend@0.2.0") && e.contains("speaks wloc:backend@0.1.0"),
            "{e}"
        );
        let e = check_imports(
            Kind::Discovery,
            &imports(&["wasi:sockets/tcp@0.2.0"]),
            &g,
            &g,
        )
        .unwrap_err();
        assert!(e.contains("never granted"), "{e}");
        let e = check_imports(
            Kind::Discovery,
            &imports(&["wasi:http/outgoing-handler@0.2.0"]),
            &g,
            &g,
        )
        .unwrap_err();
        assert!(e.contains("never gives"), "{e}");
        let e = check_imports(
            Kind::Discovery,
            &imports(&["wloc:backend/topology@0.1.0"]),
            &g,
            &g,
        )
        .unwrap_err();
        assert!(e.contains("discovery backend is never given"), "{e}");
        assert!(
            check_imports(
                Kind::Annotation,
                &imports(&["wloc:backend/topology@0.1.0"]),
                &g,
                &g
            )
            .unwrap()
            .topology
        );
    }

    /// A deny entry by digest revokes one signed build whoever signs it
    /// and however its signature section is written.
    #[test]
    fn a_deny_by_digest_holds_against_a_re_encoded_signature() {
        use crate::manifest::tests::{component_with_code, sample};
        use crate::signing::{generate, public_key, sign};
        let k = generate().unwrap();
        let signed = sign(&component_with_code(&sample()), &k).unwrap();
        let digest = component_digest(&signed);
        let publisher = format!(
            "[[publisher]]\nname = \"acme\"\nkey = \"{}\"\n[[allow]]\npublisher = \"acme\"\nname = \"acme-nic\"\n",
            public_key(&k)
        );
        // Allowed by its publisher (then refused only for lacking an
        // export, which the test component has none of).
        let p = Policy::parse(&publisher, "test").unwrap();
        let e = admit(&p, &signed, false, "x", "test").unwrap_err();
        assert!(e.to_string().contains("does not export"), "{e}");
        assert_eq!(e.digest, digest);
        let denied = format!("{publisher}[[deny]]\ndigest = \"sha256:{digest}\"\n");
        let p = Policy::parse(&denied, "test").unwrap();
        let e = admit(&p, &signed, false, "x", "test").unwrap_err();
        assert!(e.to_string().contains("[[deny]]"), "{e}");
        // The signature section with a 5-byte size: refused before the
        // policy is asked.
        let padded = crate::signing::tests::reencoded(&signed, 5, 1);
        let e = admit(&p, &padded, false, "x", "test").unwrap_err();
        assert!(e.to_string().contains("shortest encoding"), "{e}");
        // Signed again by a trusted key: the same digest, still denied.
        let k2 = generate().unwrap();
        let resigned = sign(&signed, &k2).unwrap();
        let both = denied.replace(
            "[[deny]]",
            &format!(
                "[[publisher]]\nname = \"other\"\nkey = \"{}\"\n[[allow]]\npublisher = \"other\"\nname = \"acme-nic\"\n[[deny]]",
                public_key(&k2)
            ),
        );
        let p = Policy::parse(&both, "test").unwrap();
        let e = admit(&p, &resigned, false, "x", "test").unwrap_err();
        assert!(e.to_string().contains("[[deny]]"), "{e}");
        assert_eq!(examine(&resigned).unwrap().digest, digest);
    }

    #[test]
    fn refuses_components_without_manifest_or_with_bad_bytes() {
        let p = Policy::default();
        let e = admit(&p, b"\0asm\x0d\0\x01\0", true, "x", "test").unwrap_err();
        assert!(e.to_string().contains("no wloc:manifest"), "{e}");
        let e = admit(&p, b"garbage", true, "x", "test").unwrap_err();
        assert!(e.to_string().contains("not a valid WebAssembly"), "{e}");
    }
}
