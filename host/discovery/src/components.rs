//! Components found on a search path and the `--component`/`--components`
//! choice of discovery and annotation components (`wloc ls`).
//!
//! Components are found on a search path, as hwloc finds plugins:
//! `WLOC_COMPONENTS_PATH` (colon-separated), then the user folder
//! (`$XDG_DATA_HOME/wloc/components` or `~/.local/share/wloc/components`),
//! then the system folder `/usr/lib/wloc/components`.  Being on the path
//! never means being allowed: every component goes through the policy.

use std::path::{Path, PathBuf};

use wloc_core::Topology;
use wloc_runtime::enforce::{self, Admission};
use wloc_runtime::manifest::{self, Kind};
use wloc_runtime::policy::Policy;
use wloc_runtime::{RunOptions, Runtime, builtin};

use crate::Discovery;
use crate::input::{LoadError, Source};

/// The system folder of components.
pub const SYSTEM_DIR: &str = "/usr/lib/wloc/components";

/// Largest component file read.
pub const MAX_COMPONENT_BYTES: u64 = 256 << 20;

/// The folders searched for components, first match first.
pub fn search_path() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(p) = wloc_runtime::env::var_os("WLOC_COMPONENTS_PATH") {
        dirs.extend(std::env::split_paths(&p).filter(|d| !d.as_os_str().is_empty()));
    }
    if let Some(d) = user_dir() {
        dirs.push(d);
    }
    dirs.push(PathBuf::from(SYSTEM_DIR));
    dirs
}

/// The user folder of components.
pub fn user_dir() -> Option<PathBuf> {
    user_dir_or_why().ok()
}

/// Why there is no user folder of components.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoUserDir {
    /// Neither `XDG_DATA_HOME` nor `HOME` is set (or wloc runs privileged
    /// and reads neither).
    #[error("no user folder for components: HOME is not set")]
    Unset,
    /// `HOME` is set to a relative path, which would depend on the
    /// current folder.
    #[error("no user folder for components: HOME ('{0}') is not an absolute path")]
    Relative(String),
}

/// The user folder of components, or why there is none.  As the XDG
/// rules say, a relative `XDG_DATA_HOME` is ignored.
pub fn user_dir_or_why() -> Result<PathBuf, NoUserDir> {
    if let Some(x) =
        wloc_runtime::env::var_os("XDG_DATA_HOME").filter(|v| Path::new(v).is_absolute())
    {
        return Ok(PathBuf::from(x).join("wloc/components"));
    }
    match wloc_runtime::env::var_os("HOME").filter(|v| !v.is_empty()) {
        Some(h) if Path::new(&h).is_absolute() => {
            Ok(PathBuf::from(h).join(".local/share/wloc/components"))
        }
        Some(h) => Err(NoUserDir::Relative(h.to_string_lossy().into_owned())),
        None => Err(NoUserDir::Unset),
    }
}

/// Reads a component file, at most `MAX_COMPONENT_BYTES` bytes.
pub fn read_component(path: &Path) -> Result<Vec<u8>, ComponentFileError> {
    // A regular file only: a FIFO or device is refused at once.
    wloc_trust::file::read_regular_to_end(path, MAX_COMPONENT_BYTES).map_err(|e| match e {
        wloc_trust::file::ReadError::TooLarge { .. } => {
            ComponentFileError::TooLarge(path.to_path_buf())
        }
        e => ComponentFileError::Read {
            path: path.to_path_buf(),
            source: e.into_io(),
        },
    })
}

/// Why a component file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ComponentFileError {
    /// It could not be opened or read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It is larger than [`MAX_COMPONENT_BYTES`].
    #[error("{} is larger than {MAX_COMPONENT_BYTES} bytes", .0.display())]
    TooLarge(PathBuf),
}

/// A component list (`HWLOC_COMPONENTS`) that names something that
/// cannot be a component (the name, sanitised for the message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid component name '{0}' in the component list")]
pub struct BadComponentName(pub String);

/// Installed components: `.wasm` files of the search path, first of a
/// file name wins.
pub fn installed() -> Vec<PathBuf> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for dir in search_path() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "wasm") && p.is_file())
            .collect();
        files.sort();
        for f in files {
            if seen.insert(f.file_name().map(|n| n.to_owned())) {
                out.push(f);
            }
        }
    }
    out
}

/// A component selection, as `HWLOC_COMPONENTS`: names in order, `-NAME`
/// to exclude, `stop` to end the list.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// Names to run, in order.
    pub names: Vec<String>,
    /// Names excluded.
    pub excluded: Vec<String>,
}

impl Selection {
    /// Parses a list separated by commas (or spaces).
    pub fn parse(list: &str) -> Result<Selection, BadComponentName> {
        let mut s = Selection::default();
        for tok in list
            .split([',', ' '])
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            if tok == "stop" {
                break;
            }
            let (excl, name) = match tok.strip_prefix('-') {
                Some(n) => (true, n),
                None => (false, tok),
            };
            if !manifest::valid_name(name) && name != "xml" {
                return Err(BadComponentName(wloc_runtime_sanitize(name)));
            }
            if excl {
                s.excluded.push(name.to_string());
            } else if !s.names.iter().any(|n| n == name) {
                s.names.push(name.to_string());
            }
        }
        Ok(s)
    }
}

fn wloc_runtime_sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .take(80)
        .collect()
}

/// The built-in discovery that reads a source.
/// The names of the built-in ways an input is discovered or read: a list
/// naming one of them chooses the input's discovery itself.
const INPUT_DISCOVERY_NAMES: [&str; 5] = [
    builtin::SYNTHETIC_NAME,
    builtin::LINUX_NAME,
    builtin::X86_NAME,
    "xml",
    "image",
];

fn default_name(source: &Source) -> &'static str {
    match source {
        Source::Xml(_) => "xml",
        Source::Image(_) => "image",
        Source::Synthetic(_) => builtin::SYNTHETIC_NAME,
        Source::Fsroot(..) | Source::ThisSystem => builtin::LINUX_NAME,
        Source::Cpuid(_) | Source::CpuidThisSystem => builtin::X86_NAME,
    }
}

/// A candidate of the run: a built-in reading some source, or a file.
enum Candidate {
    Builtin(Source),
    File(PathBuf),
}

/// Finds an installed component by name (its file stem, then its
/// manifest name).
fn find_installed(name: &str) -> Option<PathBuf> {
    let files = installed();
    if let Some(f) = files
        .iter()
        .find(|f| f.file_stem().is_some_and(|s| s == name))
    {
        return Some(f.clone());
    }
    files.into_iter().find(|f| {
        read_component(f)
            .ok()
            .and_then(|b| manifest::inspect(&b).ok())
            .and_then(|i| i.manifest)
            .is_some_and(|m| m.name == name)
    })
}

impl Discovery {
    /// Loads a topology as `wloc ls` does, with the components `--component`
    /// adds and the selection `--components` (or `WLOC_COMPONENTS`) makes.
    ///
    /// Discovery components are alternatives tried in order: the first that
    /// succeeds gives the topology, and one that is refused, traps or returns
    /// bad data is reported on standard error while the next one is tried.
    /// Annotation components then run on the result, each reported on
    /// failure without changing the topology.  Every component, built in or
    /// not, passes the policy.
    pub fn load_with_components(
        &self,
        source: &Source,
        topo: Topology,
        files: &[String],
        list: Option<&str>,
    ) -> Result<Topology, LoadError> {
        load_with_components(self, source, topo, files, list)
    }
}

/// [`Discovery::load_with_components`].
fn load_with_components(
    d: &Discovery,
    source: &Source,
    topo: Topology,
    files: &[String],
    list: Option<&str>,
) -> Result<Topology, LoadError> {
    let env_list = wloc_runtime::env::var("WLOC_COMPONENTS").filter(|v| !v.is_empty());
    let list = list.map(str::to_string).or(env_list);
    if files.is_empty() && list.is_none() {
        return d.load(source, topo);
    }
    let sel = Selection::parse(list.as_deref().unwrap_or(""))
        .map_err(|e| LoadError::BadInput(e.to_string()))?;
    let policy = d.policy().map_err(|e| LoadError::BadInput(e.to_string()))?;

    // Discovery and annotation candidates, in order.
    let mut discovery: Vec<(String, Candidate)> = Vec::new();
    let mut annotation: Vec<(String, PathBuf, Vec<u8>, Admission)> = Vec::new();
    let mut extra: Vec<(String, PathBuf)> = files
        .iter()
        .map(|f| (f.clone(), PathBuf::from(f)))
        .collect();
    for n in &sel.names {
        let default = default_name(source);
        if n == default {
            discovery.push((n.clone(), Candidate::Builtin(source.clone())));
        } else if n == builtin::LINUX_NAME
            && matches!(source, Source::Cpuid(_) | Source::CpuidThisSystem)
        {
            discovery.push((n.clone(), Candidate::Builtin(Source::ThisSystem)));
        } else if n == builtin::X86_NAME && matches!(source, Source::ThisSystem) {
            discovery.push((n.clone(), Candidate::Builtin(Source::CpuidThisSystem)));
        } else if INPUT_DISCOVERY_NAMES.contains(&n.as_str()) {
            eprintln!("wloc: component {n} does not apply to this input; skipped");
        } else {
            match find_installed(n) {
                Some(p) => extra.push((n.clone(), p)),
                None => {
                    return Err(LoadError::BadInput(format!(
                        "no component named '{n}' (built in, or on the search path {})",
                        search_path()
                            .iter()
                            .map(|p| p.display().to_string())
                            .collect::<Vec<_>>()
                            .join(":")
                    )));
                }
            }
        }
    }
    let mut file_discovery: Vec<(String, Candidate)> = Vec::new();
    for (label, path) in extra {
        let bytes = read_component(&path).map_err(|e| LoadError::BadInput(e.to_string()))?;
        let shown = path.display().to_string();
        match enforce::admit(policy, &bytes, false, &label, &shown) {
            Err(e) => eprintln!("wloc: {e}"),
            Ok(a) if sel.excluded.contains(&a.manifest.name) => {}
            Ok(a) if a.manifest.kind == Kind::Annotation => {
                annotation.push((label, path, bytes, a))
            }
            Ok(_) => file_discovery.push((label, Candidate::File(path))),
        }
    }
    // Files given with --component come first; the input's own discovery
    // is the fallback unless the list names discovery components.
    file_discovery.append(&mut discovery);
    let mut discovery = file_discovery;
    if !sel
        .names
        .iter()
        .any(|n| INPUT_DISCOVERY_NAMES.contains(&n.as_str()))
    {
        discovery.push((
            default_name(source).to_string(),
            Candidate::Builtin(source.clone()),
        ));
    }
    discovery.retain(|(n, c)| match c {
        Candidate::Builtin(_) => !sel.excluded.contains(n),
        Candidate::File(_) => true,
    });

    let mut result: Option<Topology> = None;
    let mut last_error: Option<LoadError> = None;
    for (name, c) in discovery {
        let attempt = match c {
            Candidate::Builtin(s) => d.load(&s, topo.clone()),
            Candidate::File(p) => run_file(d, policy, &p, source, topo.clone()),
        };
        match attempt {
            Ok(t) => {
                result = Some(t);
                break;
            }
            Err(e) => {
                eprintln!("wloc: discovery with {name} failed: {e}; trying the next component");
                last_error = Some(e);
            }
        }
    }
    let mut topo = match result {
        Some(t) => t,
        None => {
            return Err(last_error.unwrap_or_else(|| {
                LoadError::BadInput("no discovery component left to run (all excluded)".into())
            }));
        }
    };
    if !annotation.is_empty() {
        let rt = runtime(d)?;
        for (_, path, bytes, adm) in annotation {
            let r = rt.load_annotator_admitted(&adm, &bytes).and_then(|c| {
                let opts = adm.grant.narrow(&base_options(&adm, source)?);
                rt.annotate(&c, &opts, &mut topo)
            });
            if let Err(e) = r {
                eprintln!("wloc: annotation with {} failed: {e}", path.display());
            }
        }
    }
    Ok(topo)
}

/// The options of a third-party component's run: its granted roots
/// (below the fsroot when the input is one).
fn base_options(
    adm: &Admission,
    source: &Source,
) -> Result<RunOptions, wloc_runtime::ComponentError> {
    let fsroot = match source {
        Source::Fsroot(p, _) => Some(p.as_path()),
        _ => None,
    };
    let roots: Vec<&str> = adm.grant.caps.files.iter().map(String::as_str).collect();
    let files = wloc_runtime::FileAccess::new(&roots, fsroot).map_err(|e| {
        wloc_runtime::ComponentError {
            component: adm.manifest.name.clone(),
            digest: adm.digest.clone(),
            kind: wloc_runtime::ErrorKind::Refused(format!("cannot open its granted roots: {e}")),
        }
    })?;
    Ok(RunOptions {
        files: std::sync::Arc::new(files),
        ..RunOptions::default()
    })
}

/// The run's runtime, for third-party components as for built-in ones.
fn runtime(d: &Discovery) -> Result<&Runtime, LoadError> {
    d.runtime()
        .map_err(|e| LoadError::Unsupported(e.to_string()))
}

/// Runs a discovery component from a file, under the policy.
fn run_file(
    d: &Discovery,
    policy: &Policy,
    path: &Path,
    source: &Source,
    topo: Topology,
) -> Result<Topology, LoadError> {
    let bytes = read_component(path).map_err(|e| LoadError::BadInput(e.to_string()))?;
    let shown = path.display().to_string();
    let adm =
        enforce::admit(policy, &bytes, false, &shown, &shown).map_err(LoadError::Component)?;
    let rt = runtime(d)?;
    let c = rt
        .load_admitted(&adm, &bytes)
        .map_err(LoadError::Component)?;
    let opts = base_options(&adm, source).map_err(LoadError::Component)?;
    rt.discover(&c, &opts, topo).map_err(LoadError::Component)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_component_lists_like_hwloc() {
        let s = Selection::parse("acme,-x86, linux,stop,other").unwrap();
        assert_eq!(s.names, vec!["acme".to_string(), "linux".to_string()]);
        assert_eq!(s.excluded, vec!["x86".to_string()]);
        assert!(Selection::parse("Bad Name").is_err());
        assert_eq!(Selection::parse("").unwrap(), Selection::default());
    }
}
