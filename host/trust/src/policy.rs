//! The admin's policy: which components may run, with what, within which
//! limits.
//!
//! The policy is a TOML file, `/etc/wloc/policy.toml` unless `--policy` or
//! `WLOC_POLICY` names another.  Without a file, built-in components run
//! with what they ask for and nothing else runs.
//!
//! ```toml
//! # Limits of every component (each may be lowered or raised per entry).
//! [limits]
//! deadline_ms = 10000
//! memory_mib = 256
//!
//! # Built-in components run unless disabled; their grants can be narrowed.
//! [builtin.x86]
//! enabled = false
//! [builtin.linux]
//! files = ["/sys", "/proc"]
//!
//! # Publishers whose signatures are trusted: a wloc ed25519 key (for
//! # the signature embedded in the component, and registry signatures),
//! # and cosign keys for registry signatures (PEM text, or the absolute
//! # path of a PEM file trusted as this file is).
//! [[publisher]]
//! name = "acme"
//! key = "ed25519:9f0c…"       # 64 hexadecimal digits
//! cosign_keys = ["/etc/wloc/keys/acme-cosign.pub"]
//!
//! # Sigstore identities (keyless registry signatures): the OIDC issuer
//! # and the certificate's subject, both compared exactly.
//! [[identity]]
//! name = "acme-ci"
//! issuer = "https://token.actions.githubusercontent.com"
//! subject = "https://github.com/acme/nic/.github/workflows/release.yml@refs/heads/main"
//!
//! # The trusted root keyless signatures are checked against.
//! [sigstore]
//! trusted_root = "/etc/wloc/trusted_root.json"
//!
//! # Allowed components, by component digest, by publisher or by
//! # identity (optionally only one component name), with what they are
//! # granted: never more than their manifest asks for.
//! [[allow]]
//! publisher = "acme"
//! name = "acme-nic"
//! files = ["/sys/class/net", "/sys/devices"]
//! config = ["acme.*"]
//! limits = { deadline_ms = 2000 }
//!
//! [[allow]]
//! digest = "sha256:3b5d…"
//! cpuid = true
//!
//! # Only the versions (of the manifest) a semver requirement accepts.
//! [[allow]]
//! publisher = "acme"
//! name = "acme-tool"
//! version = "<2"
//!
//! # Refused whatever else says (by digest, name, publisher or identity).
//! [[deny]]
//! name = "old-tool"
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::cosign::{RegistryKey, RegistrySigners, Signer};
use crate::limits::Limits;
use crate::manifest::{Capabilities, check_root, root_within};
use crate::signing::PublicKey;
use crate::sigstore::TrustedRoot;

/// The system policy file.
pub const SYSTEM_POLICY: &str = "/etc/wloc/policy.toml";

/// Largest policy file read.
const MAX_POLICY_BYTES: u64 = 4 << 20;

/// Limits an entry may set (absent ones are inherited).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct LimitSettings {
    /// Wall-clock deadline of one run, in milliseconds.
    pub deadline_ms: Option<u64>,
    /// Fuel of one run (about one unit per instruction).
    pub fuel: Option<u64>,
    /// Linear memory, in MiB.
    pub memory_mib: Option<u64>,
    /// Objects returned.
    pub max_objects: Option<usize>,
    /// Data returned, in MiB.
    pub max_returned_mib: Option<u64>,
    /// File contents read in one run, in MiB.
    pub max_read_mib: Option<u64>,
}

impl LimitSettings {
    fn apply(&self, l: &mut Limits) {
        if let Some(v) = self.deadline_ms {
            l.deadline = Duration::from_millis(v);
        }
        if let Some(v) = self.fuel {
            l.fuel = v;
        }
        if let Some(v) = self.memory_mib {
            l.memory_bytes = usize::try_from(v.saturating_mul(1 << 20)).unwrap_or(usize::MAX);
        }
        if let Some(v) = self.max_objects {
            l.max_objects = v;
        }
        if let Some(v) = self.max_returned_mib {
            l.max_returned_bytes = v.saturating_mul(1 << 20);
        }
        if let Some(v) = self.max_read_mib {
            l.max_read_bytes = v.saturating_mul(1 << 20);
        }
    }

    fn check(&self, what: &str) -> Result<(), String> {
        let checks = [
            ("deadline_ms", self.deadline_ms, 1, 24 * 3600 * 1000),
            ("fuel", self.fuel, 1, u64::MAX),
            ("memory_mib", self.memory_mib, 1, 64 << 10),
            (
                "max_objects",
                self.max_objects.map(|v| v as u64),
                1,
                1 << 28,
            ),
            ("max_returned_mib", self.max_returned_mib, 1, 64 << 10),
            ("max_read_mib", self.max_read_mib, 1, 64 << 10),
        ];
        for (name, v, lo, hi) in checks {
            if let Some(v) = v
                && (v < lo || v > hi)
            {
                return Err(format!(
                    "{what}: {name} = {v} is out of range ({lo} to {hi})"
                ));
            }
        }
        Ok(())
    }
}

/// What the policy says of one built-in component.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuiltinRule {
    /// `false` disables it.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Narrowed file roots (absent: what it asks for).
    pub files: Option<Vec<String>>,
    /// Narrowed CPUID access.
    pub cpuid: Option<bool>,
    /// Narrowed settings.
    pub config: Option<Vec<String>>,
    /// Its limits.
    #[serde(default)]
    pub limits: LimitSettings,
}

/// A trusted publisher.
#[derive(Clone, Debug)]
pub struct Publisher {
    /// The name entries refer to.
    pub name: String,
    /// The wloc key its components are signed with (embedded signatures
    /// and registry signatures).
    pub key: Option<PublicKey>,
    /// Its cosign keys (registry signatures).
    pub cosign_keys: Vec<RegistryKey>,
}

impl Publisher {
    /// Whether `k` is one of its keys (its wloc ed25519 key counts as a
    /// registry key too).
    pub fn has_registry_key(&self, k: &RegistryKey) -> bool {
        self.cosign_keys.contains(k)
            || matches!((k, &self.key), (RegistryKey::Ed25519(e), Some(p)) if *e == p.0)
    }
}

/// A Sigstore identity (`[[identity]]`): keyless signatures whose
/// certificate names exactly this issuer and subject.  No patterns: a
/// regular expression over subjects is where over-broad trust hides
/// (an unanchored match, a `.` in a domain); list each identity.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    /// The name entries refer to.
    pub name: String,
    /// The OIDC issuer (the certificate's 1.3.6.1.4.1.57264.1.8).
    pub issuer: String,
    /// The certificate's subject alternative name (e-mail or URI).
    pub subject: String,
}

/// `[sigstore]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SigstoreSettings {
    /// Sigstore's `trusted_root.json`, an absolute path.
    pub trusted_root: Option<PathBuf>,
}

/// An `[[allow]]` entry.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllowRule {
    /// `sha256:HEX` of the component file.
    pub digest: Option<String>,
    /// A `[[publisher]]` name.
    pub publisher: Option<String>,
    /// An `[[identity]]` name.
    pub identity: Option<String>,
    /// Only the component of this name.
    pub name: Option<String>,
    /// Only the versions this semver requirement accepts (`"=1.2.0"`,
    /// `"<2"`): pinned versions.
    pub version: Option<String>,
    /// Granted file roots.
    #[serde(default)]
    pub files: Vec<String>,
    /// Granted CPUID access.
    #[serde(default)]
    pub cpuid: bool,
    /// Granted settings (names or `*`/`?` patterns).
    #[serde(default)]
    pub config: Vec<String>,
    /// Its limits.
    #[serde(default)]
    pub limits: LimitSettings,
}

/// A `[[deny]]` entry: any field that matches refuses the component.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DenyRule {
    /// `sha256:HEX` of the component file.
    pub digest: Option<String>,
    /// A component name.
    pub name: Option<String>,
    /// A `[[publisher]]` name.
    pub publisher: Option<String>,
    /// An `[[identity]]` name.
    pub identity: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPublisher {
    name: String,
    key: Option<String>,
    #[serde(default)]
    cosign_keys: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    #[serde(default)]
    limits: LimitSettings,
    #[serde(default)]
    builtin: BTreeMap<String, BuiltinRule>,
    #[serde(default)]
    publisher: Vec<RawPublisher>,
    #[serde(default)]
    identity: Vec<Identity>,
    #[serde(default)]
    sigstore: SigstoreSettings,
    #[serde(default)]
    allow: Vec<AllowRule>,
    #[serde(default)]
    deny: Vec<DenyRule>,
}

/// A parsed and checked policy.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// The file it was read from (none: the default policy).
    pub path: Option<PathBuf>,
    /// Limits of every component.
    pub limits: LimitSettings,
    /// Built-in components, by name.
    pub builtin: BTreeMap<String, BuiltinRule>,
    /// Trusted publishers.
    pub publishers: Vec<Publisher>,
    /// Trusted Sigstore identities.
    pub identities: Vec<Identity>,
    /// `[sigstore]`.
    pub sigstore: SigstoreSettings,
    /// Allowed components.
    pub allow: Vec<AllowRule>,
    /// Refused components.
    pub deny: Vec<DenyRule>,
}

/// Who a decision is about.
#[derive(Clone, Copy, Debug)]
pub struct Subject<'a> {
    /// Its manifest name.
    pub name: &'a str,
    /// Its manifest version.
    pub version: &'a str,
    /// sha256 of its file, hexadecimal.
    pub digest: &'a str,
    /// The key of a valid embedded signature.
    pub signer: Option<&'a PublicKey>,
    /// Verified registry signatures ([`crate::cosign::RegistrySigners`]);
    /// they count only if they were verified for these bytes (the same
    /// component digest).
    pub registry: Option<&'a RegistrySigners>,
    /// Built into wloc.
    pub builtin: bool,
    /// What its manifest asks for.
    pub requested: &'a Capabilities,
}

/// The policy's answer.
#[derive(Clone, Debug)]
pub enum Decision {
    /// It may run with these capabilities and limits; `by` says which
    /// entry allowed it.
    Allowed {
        /// What it gets (never more than requested).
        grant: Capabilities,
        /// Its limits.
        limits: Limits,
        /// The entry that allowed it.
        by: String,
    },
    /// It may not run (why).
    Denied(String),
}

pub use crate::digest::parse_digest;

/// Largest cosign key file read.
const MAX_KEY_BYTES: u64 = 64 << 10;

/// A `cosign_keys` item: PEM text, or the absolute path of a PEM file,
/// trusted as the policy is ([`crate::owner`]): whoever can change it
/// chooses what runs.
fn cosign_key(item: &str) -> Result<RegistryKey, String> {
    if item.trim_start().starts_with("-----BEGIN") {
        return RegistryKey::from_pem(item);
    }
    let path = Path::new(item);
    if !path.is_absolute() {
        return Err(format!(
            "cosign key {:?} is neither PEM text nor an absolute path",
            crate::text::sanitize(item, 80)
        ));
    }
    let f = crate::owner::open_trusted_file(path).map_err(|e| match e {
        crate::owner::OpenError::Missing(e) => format!("cannot read cosign key {item}: {e}"),
        crate::owner::OpenError::Refused(why) => format!("cosign key {item} is not trusted: {why}"),
    })?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(f, MAX_KEY_BYTES), &mut text)
        .map_err(|e| format!("cannot read cosign key {item}: {e}"))?;
    RegistryKey::from_pem(&text).map_err(|e| format!("cosign key {item}: {e}"))
}

/// The part of `requested` that `offered` covers: file roots inside an
/// offered root (or offered roots inside a requested one), CPUID if both,
/// and settings one side's pattern covers on the other side.
pub fn intersect(requested: &Capabilities, offered: &Capabilities) -> Capabilities {
    let mut files: Vec<String> = Vec::new();
    for r in &requested.files {
        if offered.files.iter().any(|o| root_within(r, o)) {
            files.push(r.clone());
        } else {
            for o in &offered.files {
                if root_within(o, r) {
                    files.push(o.clone());
                }
            }
        }
    }
    files.sort();
    files.dedup();
    let mut config: Vec<String> = Vec::new();
    for r in &requested.config {
        if offered
            .config
            .iter()
            .any(|o| crate::text::wildcard_match(o, r))
        {
            config.push(r.clone());
        } else {
            for o in &offered.config {
                if crate::text::wildcard_match(r, o) {
                    config.push(o.clone());
                }
            }
        }
    }
    config.sort();
    config.dedup();
    Capabilities {
        files,
        cpuid: requested.cpuid && offered.cpuid,
        config,
    }
}

fn check_caps(what: &str, files: &[String], config: &[String]) -> Result<(), String> {
    for f in files {
        check_root(f).map_err(|e| format!("{what}: {e}"))?;
    }
    for c in config {
        if c.is_empty() || c.chars().any(char::is_control) {
            return Err(format!("{what}: invalid config name {c:?}"));
        }
    }
    Ok(())
}

/// A TOML error as its message and position only: the file's text is never
/// quoted (a policy file may be one the reader could not otherwise read).
fn toml_error(text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(span) => {
            let before = &text.as_bytes()[..span.start.min(text.len())];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
            format!("line {line}, column {column}: {}", e.message().trim_end())
        }
        None => e.message().trim_end().to_string(),
    }
}

impl Policy {
    /// Parses policy text; `origin` names it in messages.
    pub fn parse(text: &str, origin: &str) -> Result<Policy, String> {
        let raw: RawPolicy = toml::from_str(text)
            .map_err(|e| format!("invalid policy {origin}: {}", toml_error(text, &e)))?;
        let err = |m: String| format!("invalid policy {origin}: {m}");
        raw.limits.check("[limits]").map_err(err)?;
        for (name, b) in &raw.builtin {
            let what = format!("[builtin.{name}]");
            b.limits.check(&what).map_err(err)?;
            check_caps(
                &what,
                b.files.as_deref().unwrap_or_default(),
                b.config.as_deref().unwrap_or_default(),
            )
            .map_err(err)?;
        }
        let mut publishers = Vec::new();
        for (i, p) in raw.publisher.iter().enumerate() {
            let what = format!("[[publisher]] {} ({:?})", i + 1, p.name);
            if p.name.is_empty() || publishers.iter().any(|q: &Publisher| q.name == p.name) {
                return Err(err(format!("{what}: empty or repeated name")));
            }
            let key = p
                .key
                .as_deref()
                .map(PublicKey::parse)
                .transpose()
                .map_err(|e| err(format!("{what}: {e}")))?;
            let mut cosign_keys = Vec::new();
            for k in &p.cosign_keys {
                cosign_keys.push(cosign_key(k).map_err(|e| err(format!("{what}: {e}")))?);
            }
            if key.is_none() && cosign_keys.is_empty() {
                return Err(err(format!("{what}: give a `key` or `cosign_keys`")));
            }
            publishers.push(Publisher {
                name: p.name.clone(),
                key,
                cosign_keys,
            });
        }
        for (i, id) in raw.identity.iter().enumerate() {
            let what = format!("[[identity]] {} ({:?})", i + 1, id.name);
            if id.name.is_empty() || raw.identity[..i].iter().any(|j| j.name == id.name) {
                return Err(err(format!("{what}: empty or repeated name")));
            }
            if id.issuer.is_empty() || id.subject.is_empty() {
                return Err(err(format!("{what}: empty issuer or subject")));
            }
        }
        if let Some(r) = &raw.sigstore.trusted_root
            && !r.is_absolute()
        {
            return Err(err(format!(
                "[sigstore] trusted_root {:?} is not an absolute path",
                r.display()
            )));
        }
        let known = |n: &str| publishers.iter().any(|p| p.name == n);
        let known_identity = |n: &str| raw.identity.iter().any(|p| p.name == n);
        let mut allow = raw.allow;
        for (i, a) in allow.iter_mut().enumerate() {
            let what = format!("[[allow]] {}", i + 1);
            match (&a.digest, &a.publisher, &a.identity) {
                (Some(d), None, None) => {
                    a.digest = Some(parse_digest(d).map_err(|e| err(format!("{what}: {e}")))?)
                }
                (None, Some(p), None) if known(p) => {}
                (None, Some(p), None) => {
                    return Err(err(format!(
                        "{what}: publisher {p:?} is not a [[publisher]]"
                    )));
                }
                (None, None, Some(n)) if known_identity(n) => {}
                (None, None, Some(n)) => {
                    return Err(err(format!(
                        "{what}: identity {n:?} is not an [[identity]]"
                    )));
                }
                _ => {
                    return Err(err(format!(
                        "{what}: give exactly one of `digest`, `publisher` and `identity`"
                    )));
                }
            }
            if let Some(n) = &a.name
                && !crate::manifest::valid_name(n)
            {
                return Err(err(format!("{what}: invalid component name {n:?}")));
            }
            if let Some(v) = &a.version {
                semver::VersionReq::parse(v)
                    .map_err(|e| err(format!("{what}: version {v:?}: {e}")))?;
            }
            a.limits.check(&what).map_err(err)?;
            check_caps(&what, &a.files, &a.config).map_err(err)?;
        }
        let mut deny = raw.deny;
        for (i, d) in deny.iter_mut().enumerate() {
            let what = format!("[[deny]] {}", i + 1);
            if d.digest.is_none()
                && d.name.is_none()
                && d.publisher.is_none()
                && d.identity.is_none()
            {
                return Err(err(format!(
                    "{what}: give a digest, a name, a publisher or an identity"
                )));
            }
            if let Some(n) = &d.identity
                && !known_identity(n)
            {
                return Err(err(format!(
                    "{what}: identity {n:?} is not an [[identity]]"
                )));
            }
            if let Some(x) = &d.digest {
                d.digest = Some(parse_digest(x).map_err(|e| err(format!("{what}: {e}")))?);
            }
            if let Some(p) = &d.publisher
                && !known(p)
            {
                return Err(err(format!(
                    "{what}: publisher {p:?} is not a [[publisher]]"
                )));
            }
        }
        Ok(Policy {
            path: None,
            limits: raw.limits,
            builtin: raw.builtin,
            publishers,
            identities: raw.identity,
            sigstore: raw.sigstore,
            allow,
            deny,
        })
    }

    /// Every key whose registry signatures count: the publishers' cosign
    /// keys and their wloc ed25519 keys.
    pub fn registry_keys(&self) -> Vec<RegistryKey> {
        let mut keys = Vec::new();
        for p in &self.publishers {
            let ed = p.key.map(|k| RegistryKey::Ed25519(k.0));
            for k in p.cosign_keys.iter().copied().chain(ed) {
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
        keys
    }

    /// The trusted root `[sigstore]` names, read now (none: keyless
    /// signatures are refused).
    pub fn trusted_root(&self) -> Result<Option<TrustedRoot>, String> {
        self.sigstore
            .trusted_root
            .as_deref()
            .map(TrustedRoot::read)
            .transpose()
    }

    /// Reads a policy file, refused unless it and every folder above it
    /// belong to root or this user and no one else may write them (see
    /// [`crate::owner`]): whoever can change the policy chooses what runs.
    pub fn read(path: &Path) -> Result<Policy, String> {
        let shown = path.display().to_string();
        let f = crate::owner::open_trusted_file(path).map_err(|e| match e {
            crate::owner::OpenError::Missing(e) => format!("cannot read policy {shown}: {e}"),
            crate::owner::OpenError::Refused(why) => {
                format!("policy {shown} is not trusted: {why}")
            }
        })?;
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::Read::take(f, MAX_POLICY_BYTES + 1), &mut text)
            .map_err(|e| format!("cannot read policy {shown}: {e}"))?;
        if text.len() as u64 > MAX_POLICY_BYTES {
            return Err(format!(
                "policy {shown} is larger than {MAX_POLICY_BYTES} bytes"
            ));
        }
        let mut p = Policy::parse(&text, &shown)?;
        p.path = Some(path.to_path_buf());
        Ok(p)
    }

    /// The policy file to use: `explicit` (`--policy`), else `WLOC_POLICY`,
    /// else the system file; and whether it was named explicitly.
    pub fn locate(explicit: Option<&Path>) -> (PathBuf, bool) {
        if let Some(p) = explicit {
            return (p.to_path_buf(), true);
        }
        match crate::env::var_os("WLOC_POLICY").filter(|v| !v.is_empty()) {
            Some(p) => (PathBuf::from(p), true),
            None => (PathBuf::from(SYSTEM_POLICY), false),
        }
    }

    /// Loads the policy in force: an explicitly named file must exist; a
    /// missing system file means the default policy.
    pub fn load(explicit: Option<&Path>) -> Result<Policy, String> {
        let (path, named) = Policy::locate(explicit);
        if !named && !path.exists() {
            return Ok(Policy::default());
        }
        Policy::read(&path)
    }

    /// Where the policy came from, for messages.
    pub fn origin(&self) -> String {
        match &self.path {
            Some(p) => p.display().to_string(),
            None => format!("the default policy (no {SYSTEM_POLICY})"),
        }
    }

    fn publisher_of(&self, key: &PublicKey) -> Option<&Publisher> {
        self.publishers.iter().find(|p| p.key.as_ref() == Some(key))
    }

    /// The registry signers of `s` that count: none unless they were
    /// verified for bytes of the same component digest.
    fn registry_signers<'s>(&self, s: &Subject<'s>) -> &'s [Signer] {
        match s.registry {
            Some(r) if r.component_digest() == s.digest => r.signers(),
            _ => &[],
        }
    }

    /// The publishers and identities that signed `s`, embedded or in
    /// the registry.
    fn signed_by(&self, s: &Subject) -> (Vec<&Publisher>, Vec<&Identity>) {
        let mut publishers: Vec<&Publisher> = Vec::new();
        let mut identities: Vec<&Identity> = Vec::new();
        if let Some(p) = s.signer.and_then(|k| self.publisher_of(k)) {
            publishers.push(p);
        }
        for signer in self.registry_signers(s) {
            match signer {
                Signer::Key(k) => {
                    for p in self.publishers.iter().filter(|p| p.has_registry_key(k)) {
                        if !publishers.iter().any(|q| q.name == p.name) {
                            publishers.push(p);
                        }
                    }
                }
                Signer::Identity { issuer, subject } => {
                    for i in self
                        .identities
                        .iter()
                        .filter(|i| &i.issuer == issuer && &i.subject == subject)
                    {
                        if !identities.iter().any(|j| j.name == i.name) {
                            identities.push(i);
                        }
                    }
                }
            }
        }
        (publishers, identities)
    }

    /// Decides whether a component may run, and with what: the policy's
    /// limits over the default ones.
    pub fn decide(&self, s: &Subject) -> Decision {
        self.decide_with_base(s, Limits::default())
    }

    /// As [`Policy::decide`], the policy's limits applying over `base`
    /// (the limits a built-in component needs, for instance).
    pub fn decide_with_base(&self, s: &Subject, base: Limits) -> Decision {
        let signer = s.signer.and_then(|k| self.publisher_of(k));
        let (publishers, identities) = self.signed_by(s);
        // A deny wins over any allow: a revoked publisher or identity
        // refuses what it signed even when another signer is trusted.
        for d in &self.deny {
            let hit = d.digest.as_deref() == Some(s.digest)
                || d.name.as_deref() == Some(s.name)
                || d.publisher
                    .as_ref()
                    .is_some_and(|n| publishers.iter().any(|p| &p.name == n))
                || d.identity
                    .as_ref()
                    .is_some_and(|n| identities.iter().any(|i| &i.name == n));
            if hit {
                return Decision::Denied(format!(
                    "a [[deny]] entry of {} refuses it",
                    self.origin()
                ));
            }
        }
        let mut limits = base;
        self.limits.apply(&mut limits);
        if s.builtin {
            let rule = self.builtin.get(s.name).cloned().unwrap_or_default();
            if rule.enabled == Some(false) {
                return Decision::Denied(format!(
                    "built-in component disabled by [builtin.{}] of {}",
                    s.name,
                    self.origin()
                ));
            }
            let offered = Capabilities {
                files: rule.files.unwrap_or_else(|| s.requested.files.clone()),
                cpuid: rule.cpuid.unwrap_or(s.requested.cpuid),
                config: rule.config.unwrap_or_else(|| s.requested.config.clone()),
            };
            rule.limits.apply(&mut limits);
            return Decision::Allowed {
                grant: intersect(s.requested, &offered),
                limits,
                by: "built-in".into(),
            };
        }
        for a in &self.allow {
            let by = match (&a.digest, &a.publisher, &a.identity) {
                (Some(d), _, _) if d == s.digest => format!("digest, {}", self.origin()),
                (_, Some(p), _) if publishers.iter().any(|q| &q.name == p) => {
                    format!("publisher {p}, {}", self.origin())
                }
                (_, _, Some(i)) if identities.iter().any(|j| &j.name == i) => {
                    format!("identity {i}, {}", self.origin())
                }
                _ => continue,
            };
            if a.name.as_deref().is_some_and(|n| n != s.name) {
                continue;
            }
            if a.version
                .as_deref()
                .is_some_and(|v| !version_matches(v, s.version))
            {
                continue;
            }
            a.limits.apply(&mut limits);
            let offered = Capabilities {
                files: a.files.clone(),
                cpuid: a.cpuid,
                config: a.config.clone(),
            };
            return Decision::Allowed {
                grant: intersect(s.requested, &offered),
                limits,
                by,
            };
        }
        let registry = self.registry_signers(s);
        let why = match (s.signer, signer) {
            _ if !publishers.is_empty() || !identities.is_empty() => {
                let names: Vec<String> = publishers
                    .iter()
                    .map(|p| format!("publisher {}", p.name))
                    .chain(identities.iter().map(|i| format!("identity {}", i.name)))
                    .collect();
                format!("no [[allow]] entry names {} for it", names.join(" or "))
            }
            _ if !registry.is_empty() => {
                let names: Vec<String> = registry.iter().map(|r| r.to_string()).collect();
                format!(
                    "its registry signatures are by {}, which no [[publisher]] or [[identity]] names",
                    names.join(", ")
                )
            }
            (Some(k), _) => {
                format!("it is signed by {k}, which is not a trusted [[publisher]]")
            }
            (None, _) => "it is unsigned and no [[allow]] entry names its digest".into(),
        };
        Decision::Denied(format!("not allowed by {}: {why}", self.origin()))
    }
}

/// Whether `version` satisfies the requirement `req` (checked when the
/// policy was read); a version that is not semver satisfies none.
pub fn version_matches(req: &str, version: &str) -> bool {
    match (
        semver::VersionReq::parse(req),
        semver::Version::parse(version),
    ) {
        (Ok(r), Ok(v)) => r.matches(&v),
        _ => false,
    }
}

/// The text of an `[[allow]]` entry for a component.
pub fn allow_entry(
    comment: &str,
    digest: Option<&str>,
    publisher: Option<&str>,
    name: Option<&str>,
    grant: &Capabilities,
) -> String {
    allow_entry_of(comment, digest, publisher, None, name, grant)
}

/// As [`allow_entry`], which may name an identity instead.
pub fn allow_entry_of(
    comment: &str,
    digest: Option<&str>,
    publisher: Option<&str>,
    identity: Option<&str>,
    name: Option<&str>,
    grant: &Capabilities,
) -> String {
    let mut t = String::new();
    let q = |s: &str| toml::Value::String(s.to_string()).to_string();
    let list = |v: &[String]| {
        let items: Vec<String> = v.iter().map(|s| q(s)).collect();
        format!("[{}]", items.join(", "))
    };
    let _ = writeln!(t, "\n[[allow]]");
    if !comment.is_empty() {
        let _ = writeln!(t, "# {}", comment.replace(['\n', '\r'], " "));
    }
    if let Some(d) = digest {
        let _ = writeln!(t, "digest = {}", q(&format!("sha256:{d}")));
    }
    if let Some(p) = publisher {
        let _ = writeln!(t, "publisher = {}", q(p));
    }
    if let Some(i) = identity {
        let _ = writeln!(t, "identity = {}", q(i));
    }
    if let Some(n) = name {
        let _ = writeln!(t, "name = {}", q(n));
    }
    let _ = writeln!(t, "files = {}", list(&grant.files));
    let _ = writeln!(t, "cpuid = {}", grant.cpuid);
    let _ = writeln!(t, "config = {}", list(&grant.config));
    t
}

/// The text of a `[[deny]]` entry.
pub fn deny_entry(comment: &str, digest: Option<&str>, name: Option<&str>) -> String {
    deny_entry_of(comment, digest, name, None, None)
}

/// The text of a `[[deny]]` entry, which may name a publisher or an
/// identity too.
pub fn deny_entry_of(
    comment: &str,
    digest: Option<&str>,
    name: Option<&str>,
    publisher: Option<&str>,
    identity: Option<&str>,
) -> String {
    let q = |s: &str| toml::Value::String(s.to_string()).to_string();
    let mut t = String::from("\n[[deny]]\n");
    if !comment.is_empty() {
        let _ = writeln!(t, "# {}", comment.replace(['\n', '\r'], " "));
    }
    if let Some(d) = digest {
        let _ = writeln!(t, "digest = {}", q(&format!("sha256:{d}")));
    }
    for (k, v) in [
        ("name", name),
        ("publisher", publisher),
        ("identity", identity),
    ] {
        if let Some(v) = v {
            let _ = writeln!(t, "{k} = {}", q(v));
        }
    }
    t
}

/// The text of a `[[publisher]]` entry.
pub fn publisher_entry(name: &str, key: &PublicKey) -> String {
    publisher_entry_of(name, Some(key), &[])
}

/// The text of a `[[publisher]]` entry with a wloc key, cosign keys
/// (written inline as PEM) or both.
pub fn publisher_entry_of(name: &str, key: Option<&PublicKey>, cosign: &[RegistryKey]) -> String {
    let q = |s: &str| toml::Value::String(s.to_string()).to_string();
    let mut t = format!("\n[[publisher]]\nname = {}\n", q(name));
    if let Some(k) = key {
        let _ = writeln!(t, "key = {}", q(&k.to_string()));
    }
    if !cosign.is_empty() {
        let items: Vec<String> = cosign.iter().map(|k| q(&k.to_pem())).collect();
        let _ = writeln!(t, "cosign_keys = [{}]", items.join(", "));
    }
    t
}

/// The text of an `[[identity]]` entry.
pub fn identity_entry(name: &str, issuer: &str, subject: &str) -> String {
    let q = |s: &str| toml::Value::String(s.to_string()).to_string();
    format!(
        "\n[[identity]]\nname = {}\nissuer = {}\nsubject = {}\n",
        q(name),
        q(issuer),
        q(subject)
    )
}

/// Appends entries to a policy file (created if missing), keeping what is
/// there (comments included), and checks the result parses; on failure
/// the file is left as it was.  See [`edit`].
pub fn append(path: &Path, text: &str) -> Result<(), String> {
    edit(path, |_| Ok(text.to_string()))
}

/// Appends what `entries` makes of the current policy (`None`: no file
/// yet) to the policy file, under an exclusive lock on `FILE.lock`
/// ([`crate::atomic::lock_beside`]): concurrent edits all land, each
/// seeing the ones before it.  The new file is written beside the old,
/// synced and renamed over it ([`crate::atomic`]): a reader, a kill or a
/// full disk sees the old policy or the new one.
pub fn edit(
    path: &Path,
    entries: impl FnOnce(Option<&Policy>) -> Result<String, String>,
) -> Result<(), String> {
    let shown = path.display();
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let _lock = crate::atomic::lock_beside(path).map_err(|e| e.to_string())?;
    let old = match crate::file::read_regular(path, MAX_POLICY_BYTES) {
        Ok(b) => String::from_utf8(b).map_err(|_| format!("policy {shown} is not UTF-8 text"))?,
        Err(e) if e.is_not_found() => String::new(),
        Err(e) => return Err(format!("cannot read policy {e}")),
    };
    let current = if old.is_empty() && !path.exists() {
        None
    } else {
        Some(Policy::parse(&old, &shown.to_string())?)
    };
    let text = entries(current.as_ref())?;
    let mut new = old;
    if !new.is_empty() && !new.ends_with('\n') {
        new.push('\n');
    }
    new.push_str(&text);
    Policy::parse(&new, &shown.to_string())?;
    crate::atomic::write_mode(path, new.as_bytes(), 0o644).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::tests::caps;
    use crate::signing::{generate, public_key};

    const D1: &str = "1111111111111111111111111111111111111111111111111111111111111111";
    const D2: &str = "2222222222222222222222222222222222222222222222222222222222222222";

    #[test]
    fn empty_policy_allows_builtins_only() {
        let p = Policy::parse("", "test").unwrap();
        let req = caps(&["/sys"], true, &["*"]);
        let s = Subject {
            name: "linux",
            version: "1.0.0",
            digest: D1,
            signer: None,
            registry: None,
            builtin: true,
            requested: &req,
        };
        match p.decide(&s) {
            Decision::Allowed { grant, .. } => assert_eq!(grant, req),
            d => panic!("{d:?}"),
        }
        let s = Subject {
            builtin: false,
            ..s
        };
        match p.decide(&s) {
            Decision::Denied(m) => assert!(m.contains("unsigned"), "{m}"),
            d => panic!("{d:?}"),
        }
    }

    #[test]
    fn grants_are_never_wider_than_requested() {
        let req = caps(
            &["/sys/class/net", "/proc"],
            false,
            &["acme.speed", "other"],
        );
        let off = caps(&["/sys", "/proc/cpuinfo", "/etc"], true, &["acme.*"]);
        let g = intersect(&req, &off);
        assert_eq!(
            g,
            caps(&["/proc/cpuinfo", "/sys/class/net"], false, &["acme.speed"])
        );
        // A requested pattern narrowed to the offered names.
        let g = intersect(&caps(&[], false, &["*"]), &caps(&[], false, &["a", "b"]));
        assert_eq!(g.config, vec!["a".to_string(), "b".to_string()]);
    }

    #[test]
    fn allows_by_digest_and_publisher_and_deny_wins() {
        let k = generate().unwrap();
        let pk = public_key(&k);
        let text = format!(
            r#"
[limits]
deadline_ms = 500
[[publisher]]
name = "acme"
key = "{pk}"
[[allow]]
digest = "sha256:{D1}"
files = ["/sys"]
cpuid = true
limits = {{ memory_mib = 8 }}
[[allow]]
publisher = "acme"
name = "acme-nic"
files = ["/sys/class/net"]
[[deny]]
digest = "{D2}"
"#
        );
        let p = Policy::parse(&text, "test").unwrap();
        let req = caps(&["/sys/class", "/etc"], true, &[]);
        let s = Subject {
            name: "x",
            version: "1.0.0",
            digest: D1,
            signer: None,
            registry: None,
            builtin: false,
            requested: &req,
        };
        match p.decide(&s) {
            Decision::Allowed { grant, limits, by } => {
                assert_eq!(grant, caps(&["/sys/class"], true, &[]));
                assert_eq!(limits.memory_bytes, 8 << 20);
                assert_eq!(limits.deadline, Duration::from_millis(500));
                assert!(by.contains("digest"));
            }
            d => panic!("{d:?}"),
        }
        let s2 = Subject {
            name: "acme-nic",
            digest: D2,
            signer: Some(&pk),
            ..s
        };
        assert!(matches!(p.decide(&s2), Decision::Denied(m) if m.contains("[[deny]]")));
        let d3 = "3333333333333333333333333333333333333333333333333333333333333333";
        let s3 = Subject { digest: d3, ..s2 };
        match p.decide(&s3) {
            Decision::Allowed { grant, by, .. } => {
                assert_eq!(grant, caps(&["/sys/class/net"], false, &[]));
                assert!(by.contains("acme"));
            }
            d => panic!("{d:?}"),
        }
        // Another name of the same publisher is not allowed.
        let s4 = Subject {
            name: "acme-other",
            ..s3
        };
        assert!(matches!(p.decide(&s4), Decision::Denied(m) if m.contains("publisher acme")));
        // An unknown key.
        let other = public_key(&generate().unwrap());
        let s5 = Subject {
            signer: Some(&other),
            ..s3
        };
        assert!(matches!(p.decide(&s5), Decision::Denied(m) if m.contains("not a trusted")));
    }

    #[test]
    fn builtins_can_be_disabled_or_narrowed() {
        let p = Policy::parse(
            "[builtin.x86]\nenabled = false\n[builtin.linux]\nfiles = [\"/sys\"]\nconfig = []\n",
            "test",
        )
        .unwrap();
        let req = caps(&["/sys", "/proc"], false, &["*"]);
        let s = Subject {
            name: "x86",
            version: "1.0.0",
            digest: D1,
            signer: None,
            registry: None,
            builtin: true,
            requested: &req,
        };
        assert!(matches!(p.decide(&s), Decision::Denied(m) if m.contains("disabled")));
        let s = Subject { name: "linux", ..s };
        match p.decide(&s) {
            Decision::Allowed { grant, .. } => assert_eq!(grant, caps(&["/sys"], false, &[])),
            d => panic!("{d:?}"),
        }
    }

    #[test]
    fn bad_policies_are_named() {
        for (text, want) in [
            ("[[allow]]\nfiles = []", "exactly one of"),
            ("[[allow]]\ndigest = \"abc\"", "64 hexadecimal"),
            ("[[allow]]\npublisher = \"nobody\"", "not a [[publisher]]"),
            (
                "[[publisher]]\nname = \"a\"\nkey = \"ed25519:00\"",
                "64 hexadecimal",
            ),
            (
                "[[allow]]\ndigest = \"1111111111111111111111111111111111111111111111111111111111111111\"\nfiles = [\"../etc\"]",
                "absolute",
            ),
            ("[limits]\nmemory_mib = 0", "out of range"),
            ("[limits]\nsockets = true", "unknown field"),
            ("[[deny]]", "give a digest"),
            ("allow = 3", "invalid policy"),
            ("[[allow", "invalid policy"),
        ] {
            let e = Policy::parse(text, "p.toml").unwrap_err();
            assert!(e.contains(want) && e.contains("p.toml"), "{text}: {e}");
        }
    }

    /// Registry signers of `wasm` (in an artifact signed by `keys`, and
    /// keylessly by `ids` (issuer, e-mail) of `pki`).
    fn registry(
        wasm: &[u8],
        keys: &[&crate::cosign::RegistrySigningKey],
        ids: &[(&str, &str)],
        pki: &crate::sigstore::tests::Pki,
        trusted: &[RegistryKey],
    ) -> RegistrySigners {
        use crate::cosign::{
            BUNDLE_ANNOTATION, CERTIFICATE_ANNOTATION, SIGNATURE_ANNOTATION, assemble,
            make_signature,
        };
        use base64::Engine as _;
        let art = crate::cosign::tests::artifact(wasm);
        let d = crate::digest::sha256_hex(&art);
        let mut payload = None;
        type Layer<'a> = (Vec<u8>, Vec<(&'a str, String)>);
        let mut layers: Vec<Layer> = Vec::new();
        for k in keys {
            let m = make_signature(&d, "r/x", k).unwrap();
            let sigs = crate::cosign::parse(&m.manifest, &[&m.payload]).unwrap();
            let b64 = base64::engine::general_purpose::STANDARD
                .encode(&sigs[0].as_ref().unwrap().signature);
            payload = Some(m.payload.clone());
            layers.push((m.payload, vec![(SIGNATURE_ANNOTATION, b64)]));
        }
        let payload = payload.unwrap_or_else(|| {
            make_signature(
                &d,
                "r/x",
                &crate::cosign::RegistrySigningKey::generate_p256().unwrap(),
            )
            .unwrap()
            .payload
        });
        for (issuer, email) in ids {
            let s = pki.sign(&payload, &[email], issuer);
            let b64 = base64::engine::general_purpose::STANDARD.encode(&s.signature);
            layers.push((
                payload.clone(),
                vec![
                    (SIGNATURE_ANNOTATION, b64),
                    (CERTIFICATE_ANNOTATION, s.certificate.unwrap()),
                    (BUNDLE_ANNOTATION, s.bundle.unwrap()),
                ],
            ));
        }
        // One signature manifest with every layer.
        let made: Vec<_> = layers.iter().map(|(p, a)| assemble(p.clone(), a)).collect();
        let mut manifest: serde_json::Value = serde_json::from_slice(&made[0].manifest).unwrap();
        let all: Vec<serde_json::Value> = made
            .iter()
            .map(|m| {
                serde_json::from_slice::<serde_json::Value>(&m.manifest).unwrap()["layers"][0]
                    .clone()
            })
            .collect();
        manifest["layers"] = serde_json::Value::Array(all);
        let manifest = serde_json::to_vec(&manifest).unwrap();
        let blobs: Vec<&[u8]> = made.iter().map(|m| m.payload.as_slice()).collect();
        let root = pki.root();
        let t = crate::cosign::Trust {
            keys: trusted,
            root: Some(&root),
        };
        crate::cosign::registry_signers(&art, wasm, &manifest, &blobs, &t).unwrap()
    }

    fn decide_registry(p: &Policy, wasm: &[u8], name: &str, r: &RegistrySigners) -> Decision {
        let req = caps(&["/sys"], false, &[]);
        let digest = crate::signing::component_digest(wasm);
        p.decide(&Subject {
            name,
            version: "1.0.0",
            digest: &digest,
            signer: None,
            registry: Some(r),
            builtin: false,
            requested: &req,
        })
    }

    #[test]
    fn registry_signers_allow_by_publisher_and_identity() {
        use crate::cosign::RegistrySigningKey;
        use crate::sigstore::tests::{EMAIL, ISSUER, Pki};
        let pki = Pki::new();
        let cosign = RegistrySigningKey::generate_p256().unwrap();
        let ed = generate().unwrap();
        let text = format!(
            r#"
[[publisher]]
name = "acme"
cosign_keys = [{pem:?}]
[[publisher]]
name = "beta"
key = "{ed}"
[[identity]]
name = "acme-ci"
issuer = "{ISSUER}"
subject = "{EMAIL}"
[[allow]]
publisher = "acme"
files = ["/sys"]
[[allow]]
publisher = "beta"
[[allow]]
identity = "acme-ci"
name = "ci-built"
"#,
            pem = cosign.public().to_pem(),
            ed = public_key(&ed),
        );
        let p = Policy::parse(&text, "test").unwrap();
        assert_eq!(p.registry_keys().len(), 2);
        let wasm = b"component bytes".to_vec();
        let keys = p.registry_keys();
        // A cosign P-256 key of a publisher.
        let r = registry(&wasm, &[&cosign], &[], &pki, &keys);
        assert!(
            matches!(decide_registry(&p, &wasm, "x", &r), Decision::Allowed { by, .. } if by.contains("publisher acme"))
        );
        // The publisher's wloc ed25519 key, signing in the registry.
        let r = registry(
            &wasm,
            &[&RegistrySigningKey::Ed25519(ed.clone())],
            &[],
            &pki,
            &keys,
        );
        assert!(
            matches!(decide_registry(&p, &wasm, "x", &r), Decision::Allowed { by, .. } if by.contains("publisher beta"))
        );
        // An unknown key: no signer at all.
        let stranger = RegistrySigningKey::generate_p256().unwrap();
        let r = registry(&wasm, &[&stranger], &[], &pki, &keys);
        assert!(r.signers().is_empty());
        assert_eq!(r.refused, vec![crate::cosign::SigError::UnknownKey]);
        assert!(
            matches!(decide_registry(&p, &wasm, "x", &r), Decision::Denied(m) if m.contains("unsigned"))
        );
        // An identity, for the one name it is allowed.
        let r = registry(&wasm, &[], &[(ISSUER, EMAIL)], &pki, &keys);
        assert!(
            matches!(decide_registry(&p, &wasm, "ci-built", &r), Decision::Allowed { by, .. } if by.contains("identity acme-ci"))
        );
        assert!(
            matches!(decide_registry(&p, &wasm, "other", &r), Decision::Denied(m) if m.contains("identity acme-ci"))
        );
        // The same subject from another issuer is not the identity.
        let r = registry(&wasm, &[], &[("https://evil.example", EMAIL)], &pki, &keys);
        assert!(
            matches!(decide_registry(&p, &wasm, "ci-built", &r), Decision::Denied(m) if m.contains("no [[publisher]] or [[identity]]"))
        );
        // Signers verified for other bytes do not count for these.
        let r = registry(&wasm, &[&cosign], &[], &pki, &keys);
        let other = b"other bytes".to_vec();
        assert!(matches!(
            decide_registry(&p, &other, "x", &r),
            Decision::Denied(_)
        ));
    }

    #[test]
    fn deny_by_identity_publisher_or_digest_wins() {
        use crate::cosign::RegistrySigningKey;
        use crate::sigstore::tests::{EMAIL, ISSUER, Pki};
        let pki = Pki::new();
        let cosign = RegistrySigningKey::generate_p256().unwrap();
        let wasm = b"component bytes".to_vec();
        let digest = crate::signing::component_digest(&wasm);
        let base = format!(
            r#"
[[publisher]]
name = "acme"
cosign_keys = [{pem:?}]
[[identity]]
name = "acme-ci"
issuer = "{ISSUER}"
subject = "{EMAIL}"
[[allow]]
publisher = "acme"
[[allow]]
identity = "acme-ci"
[[allow]]
digest = "sha256:{digest}"
"#,
            pem = cosign.public().to_pem(),
        );
        let allowed = Policy::parse(&base, "test").unwrap();
        let keys = allowed.registry_keys();
        let both = registry(&wasm, &[&cosign], &[(ISSUER, EMAIL)], &pki, &keys);
        assert_eq!(both.signers().len(), 2);
        assert!(matches!(
            decide_registry(&allowed, &wasm, "x", &both),
            Decision::Allowed { .. }
        ));
        for deny in [
            "[[deny]]\nidentity = \"acme-ci\"".to_string(),
            "[[deny]]\npublisher = \"acme\"".to_string(),
            format!("[[deny]]\ndigest = \"{digest}\""),
        ] {
            let p = Policy::parse(&format!("{base}\n{deny}\n"), "test").unwrap();
            assert!(
                matches!(decide_registry(&p, &wasm, "x", &both), Decision::Denied(m) if m.contains("[[deny]]")),
                "{deny}"
            );
        }
        // A denied digest stays denied when re-signed by anyone.
        let p = Policy::parse(
            &format!("{base}\n[[deny]]\ndigest = \"{digest}\"\n"),
            "test",
        )
        .unwrap();
        let again = registry(&wasm, &[&cosign, &cosign], &[(ISSUER, EMAIL)], &pki, &keys);
        assert!(matches!(
            decide_registry(&p, &wasm, "x", &again),
            Decision::Denied(_)
        ));
    }

    #[test]
    fn cosign_keys_may_be_trusted_files() {
        let dir = std::env::temp_dir().join(format!("wloc-cosign-key-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let k = crate::cosign::RegistrySigningKey::generate_p256()
            .unwrap()
            .public();
        let file = dir.join("vendor.pub");
        std::fs::write(&file, k.to_pem()).unwrap();
        let text = format!(
            "[[publisher]]\nname = \"v\"\ncosign_keys = [{:?}]\n",
            file.display().to_string()
        );
        let p = Policy::parse(&text, "test").unwrap();
        assert_eq!(p.publishers[0].cosign_keys, vec![k]);
        assert_eq!(p.registry_keys(), vec![k]);
        // A key file others may write is refused, as the policy would be.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = Policy::parse(&text, "test").unwrap_err();
        assert!(e.contains("not trusted"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn bad_registry_entries_are_named() {
        for (text, want) in [
            (
                "[[publisher]]\nname = \"a\"",
                "give a `key` or `cosign_keys`",
            ),
            (
                "[[publisher]]\nname = \"a\"\ncosign_keys = [\"key.pub\"]",
                "absolute path",
            ),
            (
                "[[publisher]]\nname = \"a\"\ncosign_keys = [\"/nonexistent/key.pub\"]",
                "cannot read cosign key",
            ),
            (
                "[[publisher]]\nname = \"a\"\ncosign_keys = [\"-----BEGIN PUBLIC KEY-----\\nAAAA\\n-----END PUBLIC KEY-----\"]",
                "public key",
            ),
            ("[[allow]]\nidentity = \"ci\"", "not an [[identity]]"),
            ("[[deny]]\nidentity = \"ci\"", "not an [[identity]]"),
            (
                "[[identity]]\nname = \"ci\"\nissuer = \"\"\nsubject = \"s\"",
                "empty issuer",
            ),
            (
                "[[identity]]\nname = \"ci\"\nissuer = \"i\"\nsubject = \"s\"\nsubject_regex = \".*\"",
                "unknown field",
            ),
            (
                "[[identity]]\nname = \"ci\"\nissuer = \"i\"\nsubject = \"s\"\n[[identity]]\nname = \"ci\"\nissuer = \"i\"\nsubject = \"t\"",
                "repeated name",
            ),
            ("[sigstore]\ntrusted_root = \"root.json\"", "absolute path"),
            (
                "[[identity]]\nname = \"ci\"\nissuer = \"i\"\nsubject = \"s\"\n[[allow]]\nidentity = \"ci\"\ndigest = \"1111111111111111111111111111111111111111111111111111111111111111\"",
                "exactly one of",
            ),
        ] {
            let e = Policy::parse(text, "p.toml").unwrap_err();
            assert!(e.contains(want) && e.contains("p.toml"), "{text}: {e}");
        }
    }

    #[test]
    fn entries_round_trip_through_append() {
        let dir = std::env::temp_dir().join(format!("wloc-policy-test-{}", std::process::id()));
        let path = dir.join("policy.toml");
        let _ = std::fs::remove_dir_all(&dir);
        let k = public_key(&generate().unwrap());
        append(&path, &publisher_entry("acme", &k)).unwrap();
        append(
            &path,
            &allow_entry(
                "a \"quoted\"\nname",
                Some(D1),
                None,
                Some("x"),
                &caps(&["/sys"], true, &["a*"]),
            ),
        )
        .unwrap();
        append(
            &path,
            &allow_entry("", None, Some("acme"), None, &caps(&[], false, &[])),
        )
        .unwrap();
        append(&path, &deny_entry("old", Some(D2), None)).unwrap();
        let ck = crate::cosign::RegistrySigningKey::generate_p256()
            .unwrap()
            .public();
        append(&path, &publisher_entry_of("vendor", None, &[ck])).unwrap();
        append(
            &path,
            &identity_entry("ci", "https://issuer.example", "a@b.example"),
        )
        .unwrap();
        append(
            &path,
            &allow_entry_of("", None, None, Some("ci"), None, &caps(&[], false, &[])),
        )
        .unwrap();
        append(
            &path,
            &deny_entry_of("", None, None, Some("vendor"), Some("ci")),
        )
        .unwrap();
        // A bad entry leaves the file as it was.
        let before = std::fs::read_to_string(&path).unwrap();
        assert!(append(&path, "\n[[allow]]\npublisher = \"nobody\"\n").is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
        let p = Policy::read(&path).unwrap();
        assert_eq!(p.allow.len(), 3);
        assert_eq!(p.deny.len(), 2);
        assert_eq!(p.publishers[1].cosign_keys, vec![ck]);
        assert_eq!(p.identities[0].subject, "a@b.example");
        assert_eq!(p.allow[0].files, vec!["/sys".to_string()]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn pinned_versions() {
        let text = format!(
            "[[allow]]\ndigest = \"{D1}\"\nversion = \"<2\"\n[[allow]]\ndigest = \"{D2}\"\nversion = \"=1.2.0\"\n"
        );
        let p = Policy::parse(&text, "test").unwrap();
        let req = caps(&[], false, &[]);
        let at = |digest, version| Subject {
            name: "x",
            version,
            digest,
            signer: None,
            registry: None,
            builtin: false,
            requested: &req,
        };
        let allowed = |s: &Subject| matches!(p.decide(s), Decision::Allowed { .. });
        assert!(allowed(&at(D1, "1.9.3")));
        assert!(!allowed(&at(D1, "2.0.0")));
        assert!(!allowed(&at(D1, "not-semver")));
        assert!(allowed(&at(D2, "1.2.0")));
        assert!(!allowed(&at(D2, "1.2.1")));
        let bad = format!("[[allow]]\ndigest = \"{D1}\"\nversion = \"<<2\"\n");
        let e = Policy::parse(&bad, "test").unwrap_err();
        assert!(e.contains("version"), "{e}");
    }
}
