//! `wloc component pull`, `push`, `mirror`, `list --updates` and
//! `update`: components in OCI registries and layout folders
//! ([`wloc_oci`]), installed only after the same admission as
//! `wloc component add`.
//!
//! A pulled component is installed as `NAME.wasm` in the components
//! folder with `NAME.wasm.origin.json` beside it: where it came from
//! (reference, version, manifest digest, component digest), which
//! `list --updates` and `update` read.  The origin counts only while its
//! component digest is the installed file's.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use serde::{Deserialize, Serialize};
use wloc_discovery::components::{MAX_COMPONENT_BYTES, SYSTEM_DIR, installed, read_component};
use wloc_oci::client::{Client, Credentials, Options, PlainHttp};
use wloc_oci::layout::Layout;
use wloc_oci::reference::{Reference, Target};
use wloc_oci::{Pulled, Store};
use wloc_runtime::enforce;
use wloc_runtime::policy::Policy;
use wloc_trust::cosign;

/// How to reach registries (`pull`, `push`, `mirror`, `list --updates`,
/// `update`).
#[derive(Args, Debug, Clone)]
pub struct RemoteArgs {
    /// The registry of a wkg package name (`ns:pkg@version`), instead of
    /// wkg's configuration.
    #[arg(long, value_name = "HOST")]
    registry: Option<String>,
    /// wkg's configuration file (default: $XDG_CONFIG_HOME/wasm-pkg/config.toml).
    #[arg(long, value_name = "FILE")]
    wkg_config: Option<PathBuf>,
    /// Speak plain HTTP to every registry (by default only the hosts
    /// wkg's configuration marks `protocol = "http"` and a loopback
    /// registry without TLS get HTTP).
    #[arg(long)]
    plain_http: bool,
    /// Trust this CA certificate (PEM) instead of the web's roots.
    #[arg(long, value_name = "FILE")]
    ca_file: Option<PathBuf>,
    /// Seconds to wait for a connection or for each read or write.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    timeout: f64,
    /// User name at the registry (the password or token from
    /// $WLOC_REGISTRY_PASSWORD); sent only to the registry of the
    /// reference (for `mirror`: the destination's, see the manual).
    #[arg(long, value_name = "USER")]
    username: Option<String>,
}

impl RemoteArgs {
    /// The command's client: plain HTTP per host (wkg's `protocol =
    /// "http"` hosts, or all with `--plain-http`), the credentials for
    /// no registry until [`Client::send_credentials_to`] names one.
    fn client(&self) -> super::super::Result<Client> {
        if !(self.timeout > 0.0 && self.timeout <= 3600.0) {
            return Err(format!(
                "--timeout {} is not between 0 and 3600 seconds",
                self.timeout
            )
            .into());
        }
        let ca_pem = match &self.ca_file {
            Some(f) => Some(wloc::files::read_text(f, "the CA certificate")?.into_bytes()),
            None => None,
        };
        let credentials = match &self.username {
            Some(u) => Some(Credentials {
                username: u.clone(),
                password: wloc_runtime::env::var("WLOC_REGISTRY_PASSWORD")
                    .ok_or("--username needs the password in $WLOC_REGISTRY_PASSWORD")?,
                registries: Default::default(),
            }),
            None => None,
        };
        let plain_http = if self.plain_http {
            PlainHttp::All
        } else {
            // An unreadable configuration grants nothing (a wkg name
            // that needs it fails on it in `open`).
            PlainHttp::Hosts(self.wkg().map(|c| c.plain_http_hosts()).unwrap_or_default())
        };
        Ok(Client::new(Options {
            timeout: Duration::from_secs_f64(self.timeout),
            plain_http,
            ca_pem,
            credentials,
            ..Options::default()
        })?)
    }

    fn wkg(&self) -> super::super::Result<wloc_oci::wkg::Config> {
        match self
            .wkg_config
            .clone()
            .or_else(wloc_oci::wkg::default_config_path)
        {
            Some(p) => Ok(wloc_oci::wkg::Config::load(&p)?),
            None => Ok(Default::default()),
        }
    }

    /// The store `text` names (a wkg name resolved), with its client.
    fn open<'c>(
        &self,
        text: &str,
        client: &'c Client,
        create: bool,
    ) -> super::super::Result<Store<'c>> {
        Ok(match Target::parse(text)? {
            Target::Registry(reference) => Store::Registry { client, reference },
            Target::Layout { dir, name } => Store::Layout {
                layout: if create {
                    Layout::create(&dir)?
                } else {
                    Layout::open(&dir)?
                },
                name,
            },
            Target::Package(p) => {
                let cfg = self.wkg()?;
                // Plain HTTP stays with the hosts wkg's configuration
                // names: a registry its metadata names gets HTTPS unless
                // named too.
                let reference = wloc_oci::wkg::resolve(&p, &cfg, self.registry.as_deref(), client)?;
                Store::Registry { client, reference }
            }
        })
    }
}

impl From<wloc_oci::OciError> for super::super::Error {
    fn from(e: wloc_oci::OciError) -> Self {
        super::super::Error::Message(e.to_string())
    }
}

/// Where a component came from.
#[derive(Serialize, Deserialize, Debug, Clone)]
struct Origin {
    /// `oci:DIR` or `REGISTRY/REPOSITORY`: where its versions are.
    source: String,
    /// The version (tag or layout name) pulled.
    tag: String,
    /// Its manifest digest.
    manifest_digest: String,
    /// The installed component's digest (wloc's canonical digest).
    component_digest: String,
}

fn origin_path(wasm: &Path) -> PathBuf {
    let mut s = wasm.as_os_str().to_owned();
    s.push(".origin.json");
    PathBuf::from(s)
}

fn read_origin(wasm: &Path, bytes: &[u8]) -> Option<Origin> {
    let text = wloc_trust::file::read_regular_to_end(&origin_path(wasm), 64 << 10).ok()?;
    let o: Origin = serde_json::from_slice(&text).ok()?;
    (o.component_digest == wloc_runtime::cache::component_digest(bytes)).then_some(o)
}

/// The store `origin.source` names at `tag`.
fn store_of<'c>(source: &str, tag: &str, client: &'c Client) -> super::super::Result<Store<'c>> {
    Ok(match source.strip_prefix("oci:") {
        Some(dir) => Store::Layout {
            layout: Layout::open(Path::new(dir))?,
            name: Some(tag.to_string()),
        },
        None => Store::Registry {
            client,
            reference: Reference::parse(source)?.with_tag(tag),
        },
    })
}

/// Lets the command's credentials go to the registry of `store` (none
/// for a layout folder).
fn credentials_to(store: &Store) {
    if let Store::Registry { client, reference } = store {
        client.send_credentials_to(&reference.registry);
    }
}

fn source_of(store: &Store) -> String {
    match store {
        Store::Registry { reference, .. } => reference.name(),
        Store::Layout { layout, .. } => format!("oci:{}", layout.dir().display()),
    }
}

/// Pulls and admits: the policy must allow the component, else nothing.
fn pull_admitted(
    policy: &Policy,
    store: &Store,
) -> super::super::Result<(Pulled, enforce::Admission)> {
    let pulled = store.pull(MAX_COMPONENT_BYTES)?;
    let label = store.describe();
    let (signers, refused) = registry_signers(policy, &pulled)
        .map_err(|e| format!("{label}: {e}; nothing installed"))?;
    let a = match &signers {
        Some(s) => enforce::admit_registry(policy, &pulled.component, s, &label, &label),
        None => enforce::admit(policy, &pulled.component, false, &label, &label),
    }
    .map_err(|e| {
        let why = if refused.is_empty() {
            String::new()
        } else {
            format!(" (registry signatures refused: {})", refused.join("; "))
        };
        format!("{label}: {e}{why}; nothing installed")
    })?;
    Ok((pulled, a))
}

/// The signers of the cosign signatures and Sigstore bundles found
/// beside a pulled artifact that verify with the policy's keys or its
/// trusted root (`None` when there are none, or the component is not
/// the layer of the artifact manifest they sign), and why each other
/// signature was refused.  Both kinds are bound alike: to the artifact
/// manifest's digest, whose one Wasm layer must be these bytes.
fn registry_signers(
    policy: &Policy,
    pulled: &Pulled,
) -> Result<(Option<cosign::RegistrySigners>, Vec<String>), String> {
    let mut refused = pulled.signature_problems.clone();
    if pulled.signatures.is_empty() && pulled.bundles.is_empty() {
        return Ok((None, refused));
    }
    let keys = policy.registry_keys();
    let root = policy.trusted_root()?;
    let trust = cosign::Trust {
        keys: &keys,
        root: root.as_ref(),
    };
    let mut found = match cosign::RegistrySigners::bind(&pulled.manifest, &pulled.component) {
        Ok(s) => s,
        Err(e) => return Ok((None, vec![e.to_string()])),
    };
    for sig in &pulled.signatures {
        let blobs: Vec<&[u8]> = sig.layers.iter().map(|(_, b)| b.as_slice()).collect();
        if let Err(e) = found.add_signatures(&sig.manifest, &blobs, &trust) {
            refused.push(e.to_string());
        }
    }
    for b in &pulled.bundles {
        found.add_bundle(&b.manifest, &b.bundle, &trust);
    }
    refused.extend(found.refused.iter().map(|e| e.to_string()));
    Ok((Some(found), refused))
}

fn install_dir(system: bool) -> super::super::Result<PathBuf> {
    Ok(if system {
        PathBuf::from(SYSTEM_DIR)
    } else {
        wloc_discovery::components::user_dir_or_why().map_err(|e| e.to_string())?
    })
}

/// Writes the component (old file or new, never part) and then its origin.
fn install(
    dir: &Path,
    store: &Store,
    pulled: &Pulled,
    a: &enforce::Admission,
) -> super::super::Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let to = dir.join(format!("{}.wasm", a.manifest.name));
    wloc::files::write(&to, &pulled.component)?;
    let origin = Origin {
        source: source_of(store),
        tag: store.tag(),
        manifest_digest: pulled.manifest_digest.clone(),
        component_digest: a.digest.clone(),
    };
    let json = serde_json::to_vec_pretty(&origin).map_err(|e| e.to_string())?;
    wloc::files::write(&origin_path(&to), &json)?;
    Ok(to)
}

fn signatures_note(p: &Pulled) -> String {
    let mut s = String::new();
    if !p.signatures.is_empty() {
        s += &format!(", {} cosign signature artifact(s)", p.signatures.len());
    }
    if !p.bundles.is_empty() {
        s += &format!(", {} Sigstore bundle(s)", p.bundles.len());
    }
    if !s.is_empty() {
        s += " beside it";
    }
    s
}

/// `wloc component pull REF`.
pub fn pull(
    policy: &Policy,
    reference: &str,
    remote: &RemoteArgs,
    system: bool,
) -> super::super::Result {
    let dir = install_dir(system)?;
    let client = remote.client()?;
    let store = remote.open(reference, &client, false)?;
    credentials_to(&store);
    let (pulled, a) = pull_admitted(policy, &store)?;
    let to = install(&dir, &store, &pulled, &a)?;
    writeln!(
        std::io::stdout(),
        "{}: installed {} {} from {} ({}){}; allowed ({})",
        to.display(),
        a.manifest.name,
        a.manifest.version,
        store.describe(),
        pulled.manifest_digest,
        signatures_note(&pulled),
        a.by
    )?;
    Ok(())
}

/// `wloc component push FILE REF`.
pub fn push(
    file: &Path,
    reference: &str,
    sign: Option<&Path>,
    remote: &RemoteArgs,
) -> super::super::Result {
    // The key first: a push that cannot be signed is not made.
    let key = match sign {
        Some(k) => {
            let text = wloc::files::read_text(k, "the key")?;
            let secret = wloc_runtime::signing::parse_secret_key(&text)
                .map_err(|e| format!("{}: {e}", k.display()))?;
            Some(cosign::RegistrySigningKey::Ed25519(secret))
        }
        None => None,
    };
    let bytes = read_component(file)?;
    let found =
        wloc_runtime::manifest::inspect(&bytes).map_err(|e| format!("{}: {e}", file.display()))?;
    let m = found.manifest.as_ref();
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let title = m.map(|m| format!("{}.wasm", m.name));
    let artifact = wloc_oci::artifact::Artifact::build(
        &bytes,
        m.map(|m| m.version.as_str()),
        title.as_deref(),
        created,
    )?;
    let client = remote.client()?;
    let store = remote.open(reference, &client, true)?;
    credentials_to(&store);
    let digest = store.push(&artifact)?;
    writeln!(
        std::io::stdout(),
        "{}: pushed to {} ({digest})",
        file.display(),
        store.describe()
    )?;
    if let Some(key) = key {
        let s = cosign::make_signature(&digest, &source_of(&store), &key)?;
        store.put_signature(&digest, &s.manifest, &[&s.config, &s.payload])?;
        writeln!(
            std::io::stdout(),
            "{}: signed in cosign's format ({})",
            store.describe(),
            wloc_oci::signature_tag(&digest)?
        )?;
    }
    Ok(())
}

/// `wloc component mirror FROM TO`: the artifact and its signatures,
/// byte for byte, checked on the way.
pub fn mirror(from: &str, to: &str, remote: &RemoteArgs) -> super::super::Result {
    let client = remote.client()?;
    let src = remote.open(from, &client, false)?;
    let dst = remote.open(to, &client, true)?;
    // The credentials are for the registry written to; the source gets
    // them only when it is that registry, or when the destination is a
    // layout folder (then they are for the source).
    match (&src, &dst) {
        (Store::Registry { reference: s, .. }, Store::Registry { reference: d, .. }) => {
            if s.registry == d.registry {
                credentials_to(&src);
            }
            credentials_to(&dst);
        }
        _ => {
            credentials_to(&src);
            credentials_to(&dst);
        }
    }
    // A destination without a tag or name takes the source's.
    let dst = match (&dst, to.starts_with("oci:") && !to[4..].contains(':')) {
        (Store::Layout { .. }, true) => dst.at(&src.tag()),
        _ => dst,
    };
    let pulled = src.pull(MAX_COMPONENT_BYTES)?;
    dst.copy_in(&pulled)?;
    writeln!(
        std::io::stdout(),
        "{} -> {} ({}{})",
        src.describe(),
        dst.describe(),
        pulled.manifest_digest,
        signatures_note(&pulled)
    )?;
    Ok(())
}

/// An installed component with an origin: its file, bytes and version.
struct Tracked {
    file: PathBuf,
    name: String,
    version: Option<semver::Version>,
    origin: Origin,
}

fn tracked() -> Vec<Tracked> {
    let mut out = Vec::new();
    for f in installed() {
        let Ok(bytes) = read_component(&f) else {
            continue;
        };
        let Some(origin) = read_origin(&f, &bytes) else {
            continue;
        };
        let m = wloc_runtime::manifest::inspect(&bytes)
            .ok()
            .and_then(|i| i.manifest);
        let (name, version) = match m {
            Some(m) => (m.name, semver::Version::parse(&m.version).ok()),
            None => continue,
        };
        out.push(Tracked {
            file: f,
            name,
            version,
            origin,
        });
    }
    out
}

/// A version pulled and admitted, or why not.
type Candidate = Result<(Pulled, enforce::Admission), String>;

/// Most newer versions of one component looked at, highest first: each
/// costs a pull, and a source may hold any number of tags.
const MAX_CANDIDATES: usize = 16;

/// The tags of a tracked component's source that name versions above the
/// installed one, highest first, at most [`MAX_CANDIDATES`].  Pre-release
/// versions (`2.0.0-rc.1`) are left out, as cargo leaves them out of an
/// update.
fn newer_tags(
    t: &Tracked,
    client: &Client,
) -> super::super::Result<Vec<(String, semver::Version)>> {
    let store = store_of(&t.origin.source, &t.origin.tag, client)?;
    credentials_to(&store);
    let mut found: Vec<(semver::Version, String)> = store
        .tags()?
        .into_iter()
        .filter_map(|tag| semver::Version::parse(&tag).ok().map(|v| (v, tag)))
        .filter(|(v, _)| v.pre.is_empty())
        .filter(|(v, _)| t.version.as_ref().is_none_or(|installed| v > installed))
        .collect();
    found.sort();
    found.reverse();
    found.dedup_by(|a, b| a.0 == b.0);
    found.truncate(MAX_CANDIDATES);
    Ok(found.into_iter().map(|(v, tag)| (tag, v)).collect())
}

/// The version at `tag`, pulled and admitted; refused unless the
/// component it holds says it is that version (a tag names a version, and
/// a registry or mirror that re-tags an older signed build must not roll
/// an update back).
fn candidate(
    policy: &Policy,
    t: &Tracked,
    tag: &str,
    version: &semver::Version,
    client: &Client,
) -> Candidate {
    let store = store_of(&t.origin.source, tag, client).map_err(|e| e.to_string())?;
    let (pulled, a) = pull_admitted(policy, &store).map_err(|e| e.to_string())?;
    if a.manifest.name != t.name {
        return Err(format!("it is {}, not {}", a.manifest.name, t.name));
    }
    match semver::Version::parse(&a.manifest.version) {
        Ok(v) if v == *version => Ok((pulled, a)),
        _ => Err(format!(
            "the tag names version {version} but the component it holds is version {:?}",
            wloc_trust::text::sanitize(&a.manifest.version, 40)
        )),
    }
}

/// `wloc component list --updates`.
pub fn list_updates(policy: &Policy, remote: &RemoteArgs) -> super::super::Result {
    let client = remote.client()?;
    let mut out = String::new();
    use std::fmt::Write as _;
    for t in tracked() {
        let current = t.version.as_ref().map_or("?".into(), |v| v.to_string());
        let looked = newer_tags(&t, &client).map(|tags| {
            tags.into_iter()
                .map(|(tag, v)| {
                    // Only the policy's answer is kept, not the bytes.
                    let r = candidate(policy, &t, &tag, &v, &client).map(|(_, a)| a);
                    (tag, r)
                })
                .collect::<Vec<_>>()
        });
        match looked {
            Err(e) => {
                let _ = writeln!(
                    out,
                    "{} {current} ({}): cannot look for updates: {e}",
                    t.name, t.origin.source
                );
            }
            Ok(v) if v.is_empty() => {
                let _ = writeln!(
                    out,
                    "{} {current} ({}): up to date",
                    t.name, t.origin.source
                );
            }
            Ok(v) => {
                let _ = writeln!(out, "{} {current} ({}):", t.name, t.origin.source);
                for (tag, r) in v {
                    match r {
                        Ok(a) => {
                            let _ = writeln!(out, "  {tag}: allowed ({})", a.by);
                        }
                        Err(e) => {
                            let _ = writeln!(out, "  {tag}: refused: {e}");
                        }
                    }
                }
            }
        }
    }
    super::super::print(&out)
}

/// `wloc component update NAME`: the highest newer version the policy
/// allows replaces the installed one (which stays until then).
pub fn update(policy: &Policy, name: &str, remote: &RemoteArgs) -> super::super::Result {
    let t = tracked()
        .into_iter()
        .find(|t| t.name == name)
        .ok_or_else(|| format!("{name}: no installed component of that name came from a registry or layout (pull it first)"))?;
    let client = remote.client()?;
    let mut refused = Vec::new();
    // Highest first; the first one admitted is installed, the rest are
    // not pulled.
    for (tag, version) in newer_tags(&t, &client)? {
        match candidate(policy, &t, &tag, &version, &client) {
            Ok((pulled, a)) => {
                let store = store_of(&t.origin.source, &tag, &client)?;
                let dir = t.file.parent().unwrap_or(Path::new("."));
                let to = install(dir, &store, &pulled, &a)?;
                writeln!(
                    std::io::stdout(),
                    "{}: updated {name} to {} ({}); allowed ({})",
                    to.display(),
                    a.manifest.version,
                    pulled.manifest_digest,
                    a.by
                )?;
                return Ok(());
            }
            Err(e) => refused.push(format!("{tag}: {e}")),
        }
    }
    if refused.is_empty() {
        writeln!(std::io::stdout(), "{name}: up to date")?;
        return Ok(());
    }
    Err(format!(
        "{name}: no newer version may be installed; {} stays:\n  {}",
        t.file.display(),
        refused.join("\n  ")
    )
    .into())
}
