//! `wloc component`: list, inspect, verify, sign, install, allow and deny
//! sandboxed components (found on the search path of
//! [`wloc_discovery::components`]); pull, push and mirror them through
//! OCI registries and layout folders ([`oci`]).

mod oci;

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use wloc_discovery::components::{SYSTEM_DIR, installed, read_component};
use wloc_runtime::builtin;
use wloc_runtime::enforce::{self, Examined};
use wloc_runtime::manifest::{self, Capabilities, Manifest};
use wloc_runtime::policy::{self, Policy};
use wloc_runtime::signing::{self, SignatureState};
use wloc_trust::atomic::AtomicFile;

/// Options of `wloc component`.
#[derive(Args, Debug)]
pub struct ComponentArgs {
    #[command(subcommand)]
    command: ComponentCommand,
    /// The policy file (default: $WLOC_POLICY, else /etc/wloc/policy.toml).
    #[arg(long, global = true, value_name = "FILE")]
    policy: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum ComponentCommand {
    /// List built-in and installed components with their capabilities and whether they are allowed.
    List {
        /// Instead, show the newer versions of pulled components in their
        /// registry or layout, and whether the policy would accept each.
        #[arg(long)]
        updates: bool,
        #[command(flatten)]
        remote: oci::RemoteArgs,
    },
    /// Show a component's manifest, signature, imports and the policy's decision.
    Inspect {
        /// The component (.wasm).
        file: PathBuf,
    },
    /// Check a component's manifest, signature and imports against the policy; fails unless it may run.
    Verify {
        /// The component (.wasm).
        file: PathBuf,
    },
    /// Create an ed25519 key pair: PREFIX.key (secret, mode 0600) and PREFIX.pub.
    Keygen {
        /// Path prefix of the two files.
        prefix: PathBuf,
    },
    /// Sign a component (embedding a manifest first with --manifest).
    Sign {
        /// The component (.wasm).
        file: PathBuf,
        /// The secret key file (from `wloc component keygen`).
        #[arg(long)]
        key: PathBuf,
        /// A manifest (TOML) to embed before signing.
        #[arg(long)]
        manifest: Option<PathBuf>,
        /// Where to write the signed component (default: in place).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Embed a manifest (TOML) in a component.
    Embed {
        /// The component (.wasm).
        file: PathBuf,
        /// The manifest.
        #[arg(long)]
        manifest: PathBuf,
        /// Where to write the component (default: in place).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Add an [[allow]] entry for a component to the policy file (by digest, by publisher with --publisher, or by signer identity with --identity).
    Allow {
        /// The component (.wasm).
        file: PathBuf,
        /// Allow every version signed by this publisher (NAME), trusting the key given with --key or --cosign-key.
        #[arg(long, value_name = "NAME")]
        publisher: Option<String>,
        /// The publisher's public key (ed25519:HEX, or a .pub file); must match the signature.
        #[arg(long, value_name = "KEY", requires = "publisher")]
        key: Option<String>,
        /// The publisher's cosign public key (PEM file) for signatures stored in a registry.
        #[arg(
            long,
            value_name = "FILE",
            requires = "publisher",
            conflicts_with = "key"
        )]
        cosign_key: Option<PathBuf>,
        /// Allow it when a Sigstore keyless signature names this OIDC issuer and subject (exactly).
        #[arg(long, num_args = 2, value_names = ["ISSUER", "SUBJECT"], conflicts_with = "publisher")]
        identity: Option<Vec<String>>,
        /// Grant only these file roots (comma-separated; default: what the manifest asks for).
        #[arg(long, value_delimiter = ',')]
        files: Option<Vec<String>>,
        /// Do not grant CPUID even if asked for.
        #[arg(long)]
        no_cpuid: bool,
        /// Grant only these settings (comma-separated; default: what the manifest asks for).
        #[arg(long, value_delimiter = ',')]
        config: Option<Vec<String>>,
    },
    /// Add a [[deny]] entry to the policy file for a component file (its digest and name), a name, a digest (sha256:HEX), a publisher or a signer identity.
    Deny {
        /// A component file, a component name, or sha256:HEX.
        #[arg(required_unless_present_any = ["publisher", "identity"])]
        target: Option<String>,
        /// Revoke a [[publisher]] of the policy: nothing it signed runs.
        #[arg(long, value_name = "NAME")]
        publisher: Option<String>,
        /// Revoke a Sigstore identity: nothing its keyless signatures name runs.
        #[arg(long, num_args = 2, value_names = ["ISSUER", "SUBJECT"])]
        identity: Option<Vec<String>>,
    },
    /// Verify a component and install it in the user folder (or the system folder with --system).
    Add {
        /// The component (.wasm).
        file: PathBuf,
        /// Install in /usr/lib/wloc/components.
        #[arg(long)]
        system: bool,
    },
    /// Pull a component (REGISTRY/REPO:TAG, oci:DIR:NAME or a wkg name ns:pkg@version) and install it if the policy allows it.
    Pull {
        /// Where it is.
        reference: String,
        /// Install in /usr/lib/wloc/components.
        #[arg(long)]
        system: bool,
        #[command(flatten)]
        remote: oci::RemoteArgs,
    },
    /// Push a component as a Wasm OCI artifact (to REGISTRY/REPO:TAG, oci:DIR:NAME or a wkg name).
    Push {
        /// The component (.wasm).
        file: PathBuf,
        /// Where to put it.
        reference: String,
        /// Also store a cosign signature of the pushed artifact beside it, made with this wloc secret key (from `wloc component keygen`).
        #[arg(long, value_name = "KEY")]
        sign: Option<PathBuf>,
        #[command(flatten)]
        remote: oci::RemoteArgs,
    },
    /// Copy an artifact and its cosign signatures between registries and layout folders (oci:DIR[:NAME]).
    Mirror {
        /// Where it is.
        from: String,
        /// Where to copy it (a layout without NAME takes the source's tag).
        to: String,
        #[command(flatten)]
        remote: oci::RemoteArgs,
    },
    /// Install the newest version of a pulled component that the policy allows; the installed one stays otherwise.
    Update {
        /// The component's name.
        name: String,
        #[command(flatten)]
        remote: oci::RemoteArgs,
    },
}

/// The built-in components: name and bytes.
fn builtins() -> Vec<(&'static str, &'static [u8])> {
    vec![
        (builtin::SYNTHETIC_NAME, builtin::synthetic_wasm()),
        (builtin::LINUX_NAME, builtin::linux_wasm()),
        (builtin::X86_NAME, builtin::x86_wasm()),
        (builtin::ANNOTATE_DMI_NAME, builtin::annotate_dmi_wasm()),
        (
            builtin::ANNOTATE_SENSORS_NAME,
            builtin::annotate_sensors_wasm(),
        ),
        (
            builtin::ANNOTATE_PCI_NAMES_NAME,
            builtin::annotate_pci_names_wasm(),
        ),
        (builtin::IB_FABRIC_NAME, builtin::IB_FABRIC.wasm),
    ]
}

fn short(d: &str) -> &str {
    &d[..d.len().min(12)]
}

fn signature_text(s: &SignatureState) -> String {
    match s {
        SignatureState::Unsigned => "unsigned".into(),
        SignatureState::Valid(k) => format!("signed by {k}"),
        SignatureState::Invalid(m) => format!("BAD SIGNATURE: {m}"),
    }
}

/// The policy's view of a component, as one line of text and a flag.
fn decision_text(
    policy: &Policy,
    bytes: &[u8],
    builtin: bool,
    label: &str,
    source: &str,
) -> (bool, String, String) {
    match enforce::admit(policy, bytes, builtin, label, source) {
        Ok(a) => (true, a.grant.caps.summary(), format!("allowed ({})", a.by)),
        Err(e) => (false, "-".into(), format!("refused: {}", refusal(&e))),
    }
}

/// A line saying which roots withhold files private to a process, when a
/// component asks for or is granted such a root (`/`, `/proc`, ...): the
/// grant gives less than it names, whatever the policy says.
fn withheld_text(files: &[String]) -> Option<String> {
    use wloc_runtime::fs::privacy;
    let roots: Vec<&str> = files
        .iter()
        .map(String::as_str)
        .filter(|r| privacy::root_withholds(r))
        .collect();
    (!roots.is_empty()).then(|| format!("under {}, {}", roots.join(", "), privacy::WITHHELD_NOTE))
}

fn refusal(e: &wloc_runtime::ComponentError) -> String {
    match &e.kind {
        wloc_runtime::ErrorKind::Refused(m) => m.clone(),
        _ => e.to_string(),
    }
}

fn list(policy: &Policy) -> super::Result {
    let mut out = std::io::stdout().lock();
    let mut rows: Vec<(String, Vec<u8>, bool)> = builtins()
        .into_iter()
        .map(|(n, b)| (format!("built-in:{n}"), b.to_vec(), true))
        .collect();
    for f in installed() {
        match read_component(&f) {
            Ok(b) => rows.push((f.display().to_string(), b, false)),
            Err(e) => eprintln!("wloc: {e}"),
        }
    }
    for (source, bytes, builtin) in rows {
        let digest = wloc_runtime::cache::component_digest(&bytes);
        let label = Path::new(&source)
            .file_stem()
            .map_or(source.clone(), |s| s.to_string_lossy().into_owned());
        let mut withheld = None;
        let (name, version, kind, requested) = match manifest::inspect(&bytes) {
            Ok(i) => match i.manifest {
                Some(m) => (m.name, m.version, m.kind.to_string(), {
                    withheld = withheld_text(&m.capabilities.files);
                    m.capabilities.summary()
                }),
                None => (
                    label.clone(),
                    "?".into(),
                    "?".into(),
                    "? (no manifest)".into(),
                ),
            },
            Err(e) => (label.clone(), "?".into(), "?".into(), format!("? ({e})")),
        };
        let (_, granted, status) = decision_text(policy, &bytes, builtin, &label, &source);
        writeln!(
            out,
            "{name} {version} {kind} sha256:{} {source}\n  requested: {requested}\n  granted:   {granted}\n  {status}",
            short(&digest)
        )?;
        if let Some(w) = withheld {
            writeln!(out, "  withheld:  {w}")?;
        }
    }
    out.flush()?;
    Ok(())
}

fn inspect(policy: &Policy, file: &Path) -> super::Result {
    let bytes = read_component(file)?;
    let ex: Examined = enforce::examine(&bytes).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut out = String::new();
    use std::fmt::Write as _;
    let _ = writeln!(out, "file:      {}", file.display());
    let _ = writeln!(out, "sha256:    {}", ex.digest);
    match &ex.inspection.manifest {
        Some(m) => {
            let _ = writeln!(out, "name:      {}", m.name);
            let _ = writeln!(out, "version:   {}", m.version);
            let _ = writeln!(out, "kind:      {}", m.kind);
            if !m.description.is_empty() {
                let _ = writeln!(out, "about:     {}", m.description);
            }
            let _ = writeln!(out, "requested: {}", m.capabilities.summary());
            if let Some(w) = withheld_text(&m.capabilities.files) {
                let _ = writeln!(out, "withheld:  {w}");
            }
        }
        None => {
            let _ = writeln!(
                out,
                "manifest:  none (no {} section)",
                manifest::MANIFEST_SECTION
            );
        }
    }
    let _ = writeln!(out, "signature: {}", signature_text(&ex.signature));
    let _ = writeln!(out, "imports:   {}", ex.inspection.imports.join(" "));
    let _ = writeln!(out, "exports:   {}", ex.inspection.exports.join(" "));
    let label = file.display().to_string();
    let (_, granted, status) = decision_text(policy, &bytes, false, &label, &label);
    let _ = writeln!(out, "granted:   {granted}");
    let _ = writeln!(out, "policy:    {status}");
    super::print(&out)?;
    Ok(())
}

fn verify(policy: &Policy, file: &Path) -> super::Result {
    let bytes = read_component(file)?;
    let label = file.display().to_string();
    let a = enforce::admit(policy, &bytes, false, &label, &label).map_err(|e| e.to_string())?;
    writeln!(
        std::io::stdout(),
        "{}: {} {} may run ({}); granted {}",
        file.display(),
        a.manifest.name,
        a.manifest.version,
        a.by,
        a.grant.caps.summary()
    )?;
    Ok(())
}

/// Writes a new file (never over an existing one), complete or not at all.
/// Starts writing the new file `path` (refused if the name exists in any
/// form) and writes `text` into it, not yet under its name.
fn start_new(path: &Path, text: &str, secret: bool) -> super::Result<AtomicFile> {
    let mut f = AtomicFile::create_new(path, if secret { 0o600 } else { 0o666 })
        .map_err(wloc::files::FileError::from)?;
    f.write_all(text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(f)
}

/// Puts a file from [`start_new`] under its name, if still free.
fn commit_new(f: AtomicFile, path: &Path) -> super::Result {
    f.commit_new().map_err(|e| already_exists(e, path))?;
    Ok(())
}

/// The message of a failed [`commit_new`].
fn already_exists(e: wloc_trust::atomic::WriteError, path: &Path) -> String {
    if e.source.kind() == std::io::ErrorKind::AlreadyExists {
        format!("cannot create {}: it exists", path.display())
    } else {
        e.to_string()
    }
}

/// Writes `PREFIX.key` and `PREFIX.pub`, both or neither: both names are
/// checked and both files written before either gets its name, and the
/// key is taken back if the public key cannot be named.
fn keygen(prefix: &Path) -> super::Result {
    let k = signing::generate()?;
    let key = PathBuf::from(format!("{}.key", prefix.display()));
    let public = PathBuf::from(format!("{}.pub", prefix.display()));
    let key_file = start_new(&key, &signing::secret_key_text(&k), true)?;
    let public_file = start_new(&public, &format!("{}\n", signing::public_key(&k)), false)?;
    let named_key = key_file
        .commit_new_undoable()
        .map_err(|e| already_exists(e, &key))?;
    if let Err(e) = commit_new(public_file, &public) {
        // The key this run named a moment ago, through its folder and
        // only if still there: never a file someone put at that path since.
        named_key.remove();
        return Err(e);
    }
    writeln!(std::io::stdout(), "{}", signing::public_key(&k))?;
    Ok(())
}

/// Writes the old file or the complete new one ([`wloc::files::write`]).
fn replace(path: &Path, bytes: &[u8]) -> super::Result {
    Ok(wloc::files::write(path, bytes)?)
}

fn read_manifest(path: &Path) -> super::Result<Manifest> {
    let text = wloc::files::read_text(path, "the manifest")?;
    Ok(Manifest::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?)
}

fn sign(
    file: &Path,
    key: &Path,
    manifest_file: Option<&Path>,
    output: Option<&Path>,
) -> super::Result {
    let text = wloc::files::read_text(key, "the key")?;
    let k = signing::parse_secret_key(&text).map_err(|e| format!("{}: {e}", key.display()))?;
    let mut bytes = read_component(file)?;
    if let Some(m) = manifest_file {
        let m = read_manifest(m)?;
        // Drop an old signature first: embedding refuses signed bytes.
        let unsigned = strip_signature(&bytes)?;
        bytes = manifest::embed(&unsigned, &m).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    let found = manifest::inspect(&bytes).map_err(|e| format!("{}: {e}", file.display()))?;
    if found.manifest.is_none() {
        return Err(format!(
            "{} has no manifest: give one with --manifest (a signature must cover it)",
            file.display()
        )
        .into());
    }
    let signed = signing::sign(&bytes, &k).map_err(|e| format!("{}: {e}", file.display()))?;
    let out = output.unwrap_or(file);
    replace(out, &signed)?;
    writeln!(
        std::io::stdout(),
        "{}: signed by {}, sha256:{}",
        out.display(),
        signing::public_key(&k),
        wloc_runtime::cache::component_digest(&signed)
    )?;
    Ok(())
}

/// The bytes without a trailing signature section.
fn strip_signature(bytes: &[u8]) -> super::Result<Vec<u8>> {
    Ok(signing::unsigned_part(bytes).map(<[u8]>::to_vec)?)
}

fn embed(file: &Path, manifest_file: &Path, output: Option<&Path>) -> super::Result {
    let m = read_manifest(manifest_file)?;
    let bytes = read_component(file)?;
    let out_bytes = manifest::embed(&bytes, &m).map_err(|e| format!("{}: {e}", file.display()))?;
    let out = output.unwrap_or(file);
    replace(out, &out_bytes)?;
    writeln!(
        std::io::stdout(),
        "{}: manifest of {} {} embedded",
        out.display(),
        m.name,
        m.version
    )?;
    Ok(())
}

fn policy_file(explicit: Option<&Path>) -> PathBuf {
    Policy::locate(explicit).0
}

/// Reads and examines a component file that is to be `verb` (`allowed`,
/// `installed`): it needs a manifest, and a signature only if not a bad
/// one.  Its bytes, what was found, and the manifest.
fn examine_file(file: &Path, verb: &str) -> super::Result<(Vec<u8>, Examined, Manifest)> {
    let bytes = read_component(file)?;
    let mut ex = enforce::examine(&bytes).map_err(|e| format!("{}: {e}", file.display()))?;
    let m = ex
        .inspection
        .manifest
        .take()
        .ok_or_else(|| format!("{} has no manifest; it cannot be {verb}", file.display()))?;
    if let SignatureState::Invalid(why) = &ex.signature {
        return Err(format!("{}: bad signature: {why}", file.display()).into());
    }
    Ok((bytes, ex, m))
}

/// The name of the `[[identity]]` of `current` with this issuer and
/// subject, and the entry to add when there is none.
fn identity_name(current: Option<&Policy>, issuer: &str, subject: &str) -> (String, String) {
    let ids = current.map(|c| c.identities.as_slice()).unwrap_or_default();
    if let Some(i) = ids
        .iter()
        .find(|i| i.issuer == issuer && i.subject == subject)
    {
        return (i.name.clone(), String::new());
    }
    let mut name = subject.to_string();
    if ids.iter().any(|i| i.name == name) {
        name = format!("{subject} ({issuer})");
    }
    let entry = policy::identity_entry(&name, issuer, subject);
    (name, entry)
}

/// The `[[publisher]]` entry to add for `p` with the cosign key `k`
/// (none when it is there with that key).
fn cosign_publisher(
    current: Option<&Policy>,
    p: &str,
    k: &wloc_trust::cosign::RegistryKey,
    path: &Path,
) -> Result<String, String> {
    match current.and_then(|c| c.publishers.iter().find(|q| q.name == p)) {
        Some(q) if q.has_registry_key(k) => Ok(String::new()),
        Some(_) => Err(format!(
            "publisher {p} of {} does not have the cosign key {}: add it to its cosign_keys",
            path.display(),
            k.fingerprint()
        )),
        None => Ok(policy::publisher_entry_of(p, None, std::slice::from_ref(k))),
    }
}

#[allow(clippy::too_many_arguments)]
fn allow(
    policy_path: Option<&Path>,
    file: &Path,
    publisher: Option<&str>,
    key: Option<&str>,
    cosign_key: Option<&Path>,
    identity: Option<&[String]>,
    files: Option<Vec<String>>,
    no_cpuid: bool,
    config: Option<Vec<String>>,
) -> super::Result {
    let (_, ex, m) = examine_file(file, "allowed")?;
    let offered = Capabilities {
        files: files.unwrap_or_else(|| m.capabilities.files.clone()),
        cpuid: m.capabilities.cpuid && !no_cpuid,
        config: config.unwrap_or_else(|| m.capabilities.config.clone()),
    };
    let grant = policy::intersect(&m.capabilities, &offered);
    let path = policy_file(policy_path);
    let comment = format!("{} {} ({})", m.name, m.version, m.kind);
    let mut text = String::new();
    match (publisher, cosign_key, identity) {
        (_, _, Some([issuer, subject])) => {
            policy::edit(&path, |current| {
                let (name, mut text) = identity_name(current, issuer, subject);
                text.push_str(&policy::allow_entry_of(
                    &comment,
                    None,
                    None,
                    Some(&name),
                    Some(&m.name),
                    &grant,
                ));
                Ok(text)
            })?;
        }
        (Some(p), Some(cosign_file), _) => {
            let k = wloc_trust::cosign::RegistryKey::from_pem(&wloc::files::read_text(
                cosign_file,
                "the cosign key",
            )?)
            .map_err(|e| format!("{}: {e}", cosign_file.display()))?;
            let entry = policy::allow_entry(&comment, None, Some(p), Some(&m.name), &grant);
            policy::edit(&path, |current| {
                let mut text = cosign_publisher(current, p, &k, &path)?;
                text.push_str(&entry);
                Ok(text)
            })?;
        }
        (Some(_), None, _) if key.is_none() => {
            return Err("--publisher needs --key or --cosign-key".into());
        }
        (Some(p), None, _) => {
            let key_text = key.unwrap_or_default();
            // A file if one exists (a FIFO or device is refused), else
            // the key itself.
            let key_text = if wloc::files::regular_or_missing(Path::new(key_text), "the key")? {
                wloc::files::read_text(Path::new(key_text), "the key")?
            } else {
                key_text.to_string()
            };
            let k = signing::PublicKey::parse(&key_text)?;
            match &ex.signature {
                SignatureState::Valid(s) if *s == k => {}
                SignatureState::Valid(s) => {
                    return Err(format!("{} is signed by {s}, not by {k}", file.display()).into());
                }
                _ => {
                    return Err(
                        format!("{} is not signed; allow it by digest", file.display()).into(),
                    );
                }
            }
            let entry = policy::allow_entry(&comment, None, Some(p), Some(&m.name), &grant);
            // Whether the publisher is known is decided under the lock.
            policy::edit(&path, |current| {
                let mut text = String::new();
                if !current.is_some_and(|c| c.publishers.iter().any(|q| q.name == p)) {
                    text.push_str(&policy::publisher_entry(p, &k));
                }
                text.push_str(&entry);
                Ok(text)
            })?;
        }
        (None, _, _) => text.push_str(&policy::allow_entry(
            &comment,
            Some(&ex.digest),
            None,
            None,
            &grant,
        )),
    }
    if !text.is_empty() {
        policy::append(&path, &text)?;
    }
    writeln!(
        std::io::stdout(),
        "{}: {} allowed in {}, granted {}",
        file.display(),
        m.name,
        path.display(),
        grant.summary()
    )?;
    if let Some(w) = withheld_text(&grant.files) {
        writeln!(std::io::stdout(), "note: {w}")?;
    }
    Ok(())
}

fn deny(
    policy_path: Option<&Path>,
    target: Option<&str>,
    publisher: Option<&str>,
    identity: Option<&[String]>,
) -> super::Result {
    let path = policy_file(policy_path);
    if let Some(p) = publisher {
        policy::append(&path, &policy::deny_entry_of("", None, None, Some(p), None))?;
        writeln!(
            std::io::stdout(),
            "publisher {p}: denied in {}",
            path.display()
        )?;
    }
    if let Some([issuer, subject]) = identity {
        policy::edit(&path, |current| {
            let (name, mut text) = identity_name(current, issuer, subject);
            text.push_str(&policy::deny_entry_of("", None, None, None, Some(&name)));
            Ok(text)
        })?;
        writeln!(
            std::io::stdout(),
            "identity {subject} (issuer {issuer}): denied in {}",
            path.display()
        )?;
    }
    let Some(target) = target else {
        return Ok(());
    };
    let text = if wloc::files::regular_or_missing(Path::new(target), "the component")? {
        let bytes = read_component(Path::new(target))?;
        let digest = wloc_runtime::cache::component_digest(&bytes);
        let name = manifest::inspect(&bytes)
            .ok()
            .and_then(|i| i.manifest)
            .map(|m| m.name);
        policy::deny_entry(target, Some(&digest), name.as_deref())
    } else if target.starts_with("sha256:") {
        // One digest only (a revoked version), not every version of its name.
        let digest = policy::parse_digest(target)?;
        policy::deny_entry("", Some(&digest), None)
    } else if manifest::valid_name(target) {
        policy::deny_entry("", None, Some(target))
    } else {
        return Err(format!(
            "'{target}' is neither a component file, a component name nor sha256:HEX"
        )
        .into());
    };
    policy::append(&path, &text)?;
    writeln!(std::io::stdout(), "{target}: denied in {}", path.display())?;
    Ok(())
}

fn add(policy: &Policy, file: &Path, system: bool) -> super::Result {
    // Where it goes is known before the file is read.
    let dir = if system {
        PathBuf::from(SYSTEM_DIR)
    } else {
        wloc_discovery::components::user_dir_or_why().map_err(|e| e.to_string())?
    };
    let (bytes, ex, m) = examine_file(file, "installed")?;
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let to = dir.join(format!("{}.wasm", m.name));
    replace(&to, &bytes)?;
    let label = to.display().to_string();
    let (_, _, status) = decision_text(policy, &bytes, false, &label, &label);
    writeln!(
        std::io::stdout(),
        "{}: installed {} {} ({}); {status}",
        to.display(),
        m.name,
        m.version,
        signature_text(&ex.signature)
    )?;
    Ok(())
}

/// Runs `wloc component`.
pub fn run(a: &ComponentArgs) -> super::Result {
    let pol = || Policy::load(a.policy.as_deref());
    match &a.command {
        ComponentCommand::List { updates, remote } => {
            if *updates {
                oci::list_updates(&pol()?, remote)
            } else {
                list(&pol()?)
            }
        }
        ComponentCommand::Inspect { file } => inspect(&pol()?, file),
        ComponentCommand::Verify { file } => verify(&pol()?, file),
        ComponentCommand::Keygen { prefix } => keygen(prefix),
        ComponentCommand::Sign {
            file,
            key,
            manifest,
            output,
        } => sign(file, key, manifest.as_deref(), output.as_deref()),
        ComponentCommand::Embed {
            file,
            manifest,
            output,
        } => embed(file, manifest, output.as_deref()),
        ComponentCommand::Allow {
            file,
            publisher,
            key,
            cosign_key,
            identity,
            files,
            no_cpuid,
            config,
        } => allow(
            a.policy.as_deref(),
            file,
            publisher.as_deref(),
            key.as_deref(),
            cosign_key.as_deref(),
            identity.as_deref(),
            files.clone(),
            *no_cpuid,
            config.clone(),
        ),
        ComponentCommand::Deny {
            target,
            publisher,
            identity,
        } => deny(
            a.policy.as_deref(),
            target.as_deref(),
            publisher.as_deref(),
            identity.as_deref(),
        ),
        ComponentCommand::Add { file, system } => add(&pol()?, file, *system),
        ComponentCommand::Pull {
            reference,
            system,
            remote,
        } => oci::pull(&pol()?, reference, remote, *system),
        ComponentCommand::Push {
            file,
            reference,
            sign,
            remote,
        } => oci::push(file, reference, sign.as_deref(), remote),
        ComponentCommand::Mirror { from, to, remote } => oci::mirror(from, to, remote),
        ComponentCommand::Update { name, remote } => oci::update(&pol()?, name, remote),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_of_builtins_under_the_default_policy() {
        let p = Policy::default();
        for (name, bytes) in builtins() {
            let (ok, _, status) = decision_text(&p, bytes, true, name, "built-in");
            assert!(ok, "{name}: {status}");
        }
        // The same bytes from a file are not allowed.
        let (ok, _, status) = decision_text(&p, builtin::synthetic_wasm(), false, "x", "x");
        assert!(!ok && status.contains("unsigned"), "{status}");
    }
}
