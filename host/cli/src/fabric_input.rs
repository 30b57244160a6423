//! Fabrics as `wloc fabric`, `wloc graph --fabric` and `wloc slurm
//! topology` read them: InfiniBand fabric files (ibnetdiscover ports
//! reports or topology files, ibroute tables) read by a fabric reader
//! component in the sandbox, joined with node topologies (see the crate
//! `wloc-fabric`).
//!
//! The reader is the built-in `ib-fabric`, or the one `--reader` names,
//! admitted by the policy like every component and granted read access to
//! exactly the files handed to it: those the user names, and those found
//! inside the folder the user names.  A link in that folder that leads out
//! of it is skipped with a warning, whatever the reader's grant: the
//! folder may be someone else's.  Node topologies (hwloc XML, v1 to v3)
//! are read by the host, under the same rule.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use wloc_fabric::Fabric;
use wloc_runtime::fs::Handed;
use wloc_runtime::{FileAccess, RunOptions, builtin, enforce};

use crate::folder::{Folder, FolderError};
use wloc_discovery::{Discovery, SetupError};

/// Why a fabric could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FabricInputError {
    /// A folder could not be listed.
    #[error("cannot list {}: {source}", path.display())]
    List {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file or folder the user named could not be found.
    #[error("{}: {source}", path.display())]
    Named {
        /// The path named.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The fabric argument is neither a folder nor a file.
    #[error("{} is neither a folder nor a regular file", .0.display())]
    NeitherFolderNorFile(PathBuf),
    /// Nothing to hand the reader.
    #[error("no fabric files in {}", .0.display())]
    NoFabricFiles(PathBuf),
    /// A fabric file's path cannot be handed to the reader.
    #[error("{} is not a UTF-8 path", .0.display())]
    NotUtf8Path(PathBuf),
    /// A file (a reader component, a node topology, a names map) could
    /// not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The fabric files could not be opened for the reader.
    #[error("cannot open the fabric files: {0}")]
    Hand(#[source] std::io::Error),
    /// The policy or the component runtime is not available.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The reader was refused, could not be loaded, or failed.
    #[error(transparent)]
    Component(#[from] wloc_runtime::ComponentError),
    /// A node topology of the folder could not be read through it.
    #[error(transparent)]
    Folder(#[from] FolderError),
    /// A node topology's path is not inside the folder it was found in.
    #[error("{} is not inside {}", path.display(), folder.display())]
    Outside {
        /// The topology's path, links resolved.
        path: PathBuf,
        /// The folder.
        folder: PathBuf,
    },
    /// A `NAME.diff.xml` node topology is not a valid diff.
    #[error("{}: not a valid hwloc topology diff: {why}", path.display())]
    BadDiff {
        /// The diff.
        path: PathBuf,
        /// What the diff parser said.
        why: String,
    },
    /// A diff names no reference topology.
    #[error("{}: the diff names no reference topology (refname)", .0.display())]
    NoReference(PathBuf),
    /// A diff's reference is not a topology of its folder.
    #[error("{}: its reference '{reference}' is not a topology of the same folder", path.display())]
    ReferenceNotFound {
        /// The diff.
        path: PathBuf,
        /// The reference it names.
        reference: String,
    },
    /// A diff does not apply to its reference.
    #[error("{}: cannot apply it to '{reference}': {why}", path.display())]
    Apply {
        /// The diff.
        path: PathBuf,
        /// The reference it names.
        reference: String,
        /// Why.
        why: String,
    },
    /// The Slurm names map is not valid.
    #[error("{}: {why}", path.display())]
    Names {
        /// The map file.
        path: PathBuf,
        /// What is wrong in it.
        why: String,
    },
    /// The fabric model refused what was read (a node topology, the
    /// joined fabric, a Slurm export), in its own words.
    #[error("{0}")]
    Fabric(String),
}

/// Where the fabric and the node topologies come from.
#[derive(clap::Args, Debug, Clone)]
pub struct FabricInput {
    /// A folder laid out as `hwloc/NODE.xml` and `ib-raw/` (ports reports
    /// `ib-subnet-SUBNET.txt`, forwarding tables
    /// `ibroutes-SUBNET/ibroute-SUBNET-LID.txt`), or one fabric file.
    pub dir: PathBuf,
    /// More files, named one by one: fabric files, or node topologies
    /// (`.xml`, named after their host).
    #[arg(long = "file", value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// A fabric reader component (`.wasm`) to use instead of the
    /// built-in one; the policy must allow it.
    #[arg(long, value_name = "WASM")]
    pub reader: Option<PathBuf>,
}

/// A fabric file to hand the reader: its path with links resolved, and
/// the folder (links resolved) it was found in and must stay inside, or
/// `None` for a file the user named.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Found {
    path: PathBuf,
    within: Option<PathBuf>,
}

/// A node topology: the path it was found at (which names the host) and
/// the path read, links resolved.
/// A node topology: the path it was found at, the path its links lead to,
/// and the folder it was found in (`None`: a file the user named).
type Xml = (PathBuf, PathBuf, Option<PathBuf>);

/// Where an entry of a fabric folder leads.
enum Lead {
    /// Somewhere inside the folder: the path, links resolved.
    Inside(PathBuf),
    /// Out of the folder, through a link (warned about).
    Outside,
    /// Nowhere: missing, or a link to nothing.
    Missing,
}

/// Where `p`, an entry of the fabric folder `base` (links resolved), leads.
/// A link out of the folder is skipped, with a warning naming it (once:
/// `warned` keeps the links already named), so that a folder made by
/// someone else cannot hand the reader files of the user running wloc.
fn lead(base: &Path, p: &Path, warned: &mut BTreeSet<PathBuf>) -> Lead {
    let Ok(real) = std::fs::canonicalize(p) else {
        return Lead::Missing;
    };
    if real.starts_with(base) {
        return Lead::Inside(real);
    }
    if warned.insert(p.to_path_buf()) {
        eprintln!(
            "wloc: warning: skipped {p:?}: it is a link that leads out of the fabric folder {base:?} (to {real:?})"
        );
    }
    Lead::Outside
}

/// The entries of a folder, sorted.
fn list(p: &Path) -> Result<Vec<PathBuf>, FabricInputError> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(p)
        .map_err(|source| FabricInputError::List {
            path: p.to_path_buf(),
            source,
        })?
        .flatten()
        .map(|e| e.path())
        .collect();
    v.sort();
    Ok(v)
}

/// The files of a fabric folder: fabric files and node topologies.  What
/// is found in the folder is kept only where it stays inside the folder
/// (links leading out are skipped with a warning); a file the user named
/// (the folder argument itself, or `--file`) is taken where its links
/// lead.
fn collect(
    input: &FabricInput,
    warned: &mut BTreeSet<PathBuf>,
) -> Result<(Vec<Found>, Vec<Xml>), FabricInputError> {
    let mut fabric = Vec::new();
    let mut xmls = Vec::new();
    let d = &input.dir;
    let named = |f: &Path| -> Result<PathBuf, FabricInputError> {
        std::fs::canonicalize(f).map_err(|source| FabricInputError::Named {
            path: f.to_path_buf(),
            source,
        })
    };
    if d.is_dir() {
        let base = named(d)?;
        let inside = |p: PathBuf| Found {
            path: p,
            within: Some(base.clone()),
        };
        let raw = match lead(&base, &base.join("ib-raw"), warned) {
            Lead::Inside(r) if r.is_dir() => Some(r),
            Lead::Outside => None,
            Lead::Inside(_) | Lead::Missing => Some(base.clone()),
        };
        for p in match &raw {
            Some(r) => list(r)?,
            None => Vec::new(),
        } {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let Lead::Inside(real) = lead(&base, &p, warned) else {
                continue;
            };
            if real.is_dir() && name.starts_with("ibroutes-") {
                for f in list(&real)? {
                    if let Lead::Inside(t) = lead(&base, &f, warned)
                        && t.is_file()
                    {
                        fabric.push(inside(t));
                    }
                }
            } else if real.is_file() && name.ends_with(".txt") {
                fabric.push(inside(real));
            }
        }
        if let Lead::Inside(hw) = lead(&base, &base.join("hwloc"), warned)
            && hw.is_dir()
        {
            for p in list(&hw)? {
                if p.extension().is_none_or(|e| e != "xml") {
                    continue;
                }
                if let Lead::Inside(real) = lead(&base, &p, warned)
                    && real.is_file()
                {
                    xmls.push((p, real, Some(base.clone())));
                }
            }
        }
    } else if d.is_file() {
        fabric.push(Found {
            path: named(d)?,
            within: None,
        });
    } else {
        return Err(FabricInputError::NeitherFolderNorFile(d.clone()));
    }
    for f in &input.files {
        if f.extension().is_some_and(|e| e == "xml") {
            xmls.push((f.clone(), f.clone(), None));
        } else {
            fabric.push(Found {
                path: named(f)?,
                within: None,
            });
        }
    }
    if fabric.is_empty() {
        return Err(FabricInputError::NoFabricFiles(d.clone()));
    }
    Ok((fabric, xmls))
}

/// The subnets of fabric folders (laid out as `wloc fabric` reads them;
/// their node topologies are not read) or files, read by the built-in
/// fabric reader or by `reader`.
pub fn read_subnets(
    d: &Discovery,
    paths: &[PathBuf],
    reader: Option<&Path>,
) -> Result<Vec<wloc_ib::Subnet>, FabricInputError> {
    let mut files = Vec::new();
    let mut warned = BTreeSet::new();
    for p in paths {
        let (f, _) = collect(
            &FabricInput {
                dir: p.clone(),
                files: Vec::new(),
                reader: None,
            },
            &mut warned,
        )?;
        files.extend(f);
    }
    read_fabric(d, &files, reader)
}

/// The limits of a fabric reader's run unless the policy sets others:
/// the defaults of every component, with files up to 64 MiB (a ports
/// report of a fabric of 100,000 ports is about 15 MiB) instead of 1 MiB.
/// The reader asks for one byte more than it accepts, so that a file the
/// limits cut is reported, not read in part.
fn fabric_limits() -> wloc_runtime::Limits {
    wloc_runtime::Limits {
        max_file_bytes: (64 << 20) + 1,
        ..wloc_runtime::Limits::default()
    }
}

/// Runs the fabric reader in the sandbox on `files`: its grant for the
/// run is exactly those of the files that the policy's grant holds, and
/// nothing else.
fn read_fabric(
    d: &Discovery,
    files: &[Found],
    reader: Option<&Path>,
) -> Result<Vec<wloc_ib::Subnet>, FabricInputError> {
    let mut paths = Vec::new();
    for f in files {
        let s = f
            .path
            .to_str()
            .ok_or_else(|| FabricInputError::NotUtf8Path(f.path.clone()))?
            .to_string();
        if !paths.contains(&s) {
            paths.push(s);
        }
    }
    let policy = d.policy()?;
    let rt = d.runtime()?;
    let (mut adm, bytes) = match reader {
        None => {
            let b = &builtin::IB_FABRIC;
            let adm = enforce::admit_builtin(policy, b, fabric_limits())?;
            (adm, None)
        }
        Some(p) => {
            let bytes = read_named(p)?;
            let label = p.display().to_string();
            // A third-party reader gets the same file-size limit as the
            // built-in one (the policy may narrow it): fabric files are
            // larger than the 1 MiB other components are limited to.
            let digest = wloc_runtime::cache::component_digest(&bytes);
            let adm = enforce::admit_known(
                policy,
                &bytes,
                digest,
                false,
                &label,
                &label,
                fabric_limits(),
            )?;
            (adm, Some(bytes))
        }
    };
    // The run's grant is exactly the files handed that the policy's grant
    // holds (the built-in reader's is `/` unless `[builtin.ib-fabric]`
    // narrows it), never a folder: the reader is refused everything else.
    let kept: Vec<String> = paths
        .iter()
        .filter(|p| {
            adm.grant
                .caps
                .files
                .iter()
                .any(|g| wloc_runtime::manifest::root_within(p, g))
        })
        .cloned()
        .collect();
    adm.grant.caps.files = kept.clone();
    let c = match &bytes {
        None => rt.load_builtin_fabric_reader(&adm, &builtin::IB_FABRIC),
        Some(bytes) => rt.load_fabric_reader_admitted(&adm, bytes),
    }?;
    let mut handed: Vec<Handed<'_>> = Vec::new();
    for f in files {
        let Some(path) = f.path.to_str() else {
            continue;
        };
        if kept.iter().any(|k| k == path) && !handed.iter().any(|h| h.path == path) {
            handed.push(Handed {
                path,
                within: f.within.as_deref(),
            });
        }
    }
    let access = FileAccess::handed(&handed).map_err(FabricInputError::Hand)?;
    let opts = RunOptions {
        files: Arc::new(access),
        limits: fabric_limits(),
        config: Arc::new(
            [("files".to_string(), paths.join("\n"))]
                .into_iter()
                .collect(),
        ),
        ..RunOptions::default()
    };
    Ok(rt.read_fabric(&c, &opts)?)
}

/// The fabric of `input`: its subnets, read by the fabric reader in the
/// sandbox, joined with its node topologies, read by the host.
pub fn load(d: &Discovery, input: &FabricInput) -> Result<Fabric, FabricInputError> {
    let (files, xmls) = collect(input, &mut BTreeSet::new())?;
    let subnets = read_fabric(d, &files, input.reader.as_deref())?;
    // Each node topology's text: one found in the folder is read through a
    // handle on the folder (a link made or swapped in since `collect`
    // cannot lead out of it; what is not a regular file is skipped); one
    // the user named is read where it is.
    let mut folders: Vec<(PathBuf, Folder)> = Vec::new();
    let mut texts: Vec<(PathBuf, String)> = Vec::new();
    for (found, real, within) in &xmls {
        let text = match within {
            None => String::from_utf8(read_named(real)?).map_err(|_| FabricInputError::Read {
                path: found.clone(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"),
            })?,
            Some(base) => {
                let i = match folders.iter().position(|(b, _)| b == base) {
                    Some(i) => i,
                    None => {
                        folders.push((base.clone(), Folder::open(base)?));
                        folders.len() - 1
                    }
                };
                let rel = real
                    .strip_prefix(base)
                    .map_err(|_| FabricInputError::Outside {
                        path: real.clone(),
                        folder: base.clone(),
                    })?;
                match folders[i].1.read_text(rel)? {
                    Some(t) => t,
                    None => continue,
                }
            }
        };
        texts.push((found.clone(), text));
    }
    let mut topologies = Vec::new();
    let file_name = |p: &std::path::Path| {
        p.file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    for (found, text) in &texts {
        let file = file_name(found);
        match file.strip_suffix(".diff.xml") {
            // A compressed folder (hwloc-compress-dir): NAME.diff.xml is
            // the topology of NAME as a diff to its reference.
            Some(name) => topologies.push((name.to_string(), diffed(found, text, &texts)?)),
            None => {
                let name = file.strip_suffix(".xml").unwrap_or(&file).to_string();
                topologies.push((
                    name,
                    wloc_fabric::read_topology_str(text, found)
                        .map_err(FabricInputError::Fabric)?,
                ));
            }
        }
    }
    Fabric::build(subnets, topologies).map_err(FabricInputError::Fabric)
}

/// The topology a diff `found` (of text `text`) gives when applied to its
/// reference, which must be one of the full topologies of `texts` (the
/// same folder's, each with its text), as hwloc-compress-dir writes them.
fn diffed(
    found: &std::path::Path,
    text: &str,
    texts: &[(PathBuf, String)],
) -> Result<wloc_core::Topology, FabricInputError> {
    use crate::xml::diff;
    let d = diff::parse(text).map_err(|e| FabricInputError::BadDiff {
        path: found.to_path_buf(),
        why: e.to_string(),
    })?;
    let r = d
        .refname
        .as_deref()
        .filter(|r| !r.is_empty())
        .ok_or_else(|| FabricInputError::NoReference(found.to_path_buf()))?;
    let (ref_found, ref_text) = texts
        .iter()
        .find(|(f, _)| {
            f.file_name().is_some_and(|n| n.to_string_lossy() == r) && !r.ends_with(".diff.xml")
        })
        .ok_or_else(|| FabricInputError::ReferenceNotFound {
            path: found.to_path_buf(),
            reference: r.to_string(),
        })?;
    let mut topo =
        wloc_fabric::read_topology_str(ref_text, ref_found).map_err(FabricInputError::Fabric)?;
    diff::apply_with_reference(ref_text, &mut topo, text, &d.changes, false).map_err(|e| {
        FabricInputError::Apply {
            path: found.to_path_buf(),
            reference: r.to_string(),
            why: e.to_string(),
        }
    })?;
    Ok(topo)
}

/// The fabric of `input` as Slurm's `topology.conf` (or, with `yaml`,
/// `topology.yaml`), host names mapped by the `names` file
/// (`FABRIC-NAME SLURM-NAME` lines).
pub fn slurm_topology(
    d: &Discovery,
    input: &FabricInput,
    names: Option<&std::path::Path>,
    yaml: bool,
) -> Result<String, FabricInputError> {
    let f = load(d, input)?;
    let map =
        match names {
            Some(p) => wloc_fabric::slurm::parse_names(
                &String::from_utf8(read_named(p)?).map_err(|_| FabricInputError::Read {
                    path: p.to_path_buf(),
                    source: std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"),
                })?,
            )
            .map_err(|why| FabricInputError::Names {
                path: p.to_path_buf(),
                why,
            })?,
            None => Default::default(),
        };
    let rename = |h: &str| map.get(h).cloned().unwrap_or_else(|| h.to_string());
    if yaml {
        wloc_fabric::slurm::topology_yaml(&f, &rename)
    } else {
        wloc_fabric::slurm::topology_conf(&f, &rename)
    }
    .map_err(FabricInputError::Fabric)
}

/// The bytes of a file the user named: a regular file only, bounded
/// ([`wloc_trust::file::read_regular_to_end`]).
fn read_named(p: &Path) -> Result<Vec<u8>, FabricInputError> {
    wloc_trust::file::read_regular_to_end(p, crate::files::MAX_BYTES).map_err(|e| {
        FabricInputError::Read {
            path: p.to_path_buf(),
            source: e.into_io(),
        }
    })
}
