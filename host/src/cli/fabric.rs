//! `wloc fabric`: InfiniBand fabrics joined with node topologies (see the
//! crate `wloc-fabric`).
//!
//! The fabric files (ibnetdiscover ports reports or topology files,
//! ibroute tables) are read by a fabric reader component in the sandbox:
//! the built-in `ib-fabric`, or the one `--reader` names, admitted by the
//! policy like every component and granted read access to exactly the
//! files handed to it: those the user names, and those found inside the
//! folder the user names.  A link in that folder that leads out of it is
//! skipped with a warning, whatever the reader's grant: the folder may
//! be someone else's.  Node topologies (hwloc XML, v1 to v3) are read by
//! the host, under the same rule.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Args, Subcommand, ValueEnum};
use wloc_fabric::{export, Fabric};
use wloc_runtime::fs::Handed;
use wloc_runtime::{builtin, enforce, FileAccess, RunOptions};

/// Options of `wloc fabric`.
#[derive(Args, Debug)]
pub struct FabricArgs {
    #[command(subcommand)]
    query: Query,
}

/// Where the fabric and the node topologies come from.
#[derive(Args, Debug, Clone)]
pub(super) struct Input {
    /// A folder laid out as `hwloc/NODE.xml` and `ib-raw/` (ports reports
    /// `ib-subnet-SUBNET.txt`, forwarding tables
    /// `ibroutes-SUBNET/ibroute-SUBNET-LID.txt`), or one fabric file.
    dir: PathBuf,
    /// More files, named one by one: fabric files, or node topologies
    /// (`.xml`, named after their host).
    #[arg(long = "file", value_name = "FILE")]
    files: Vec<PathBuf>,
    /// A fabric reader component (`.wasm`) to use instead of the
    /// built-in one; the policy must allow it.
    #[arg(long, value_name = "WASM")]
    reader: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    Graphml,
    Gexf,
    Dot,
    Json,
    Svg,
}

#[derive(Subcommand, Debug)]
enum Query {
    /// One line per subnet: `SUBNET switches=S adapters=A hosts=H cables=C`.
    Summary {
        #[command(flatten)]
        input: Input,
    },
    /// The fabric as GraphML, GEXF, DOT, JSON or an SVG picture.
    Export {
        /// The format.
        #[arg(long = "of", value_enum, value_name = "FORMAT")]
        format: Format,
        #[command(flatten)]
        input: Input,
        /// Write to this file instead of standard output.
        out: Option<PathBuf>,
    },
    /// The route between two hosts: from the forwarding tables, else a shortest path.
    Path {
        #[command(flatten)]
        input: Input,
        /// The source host.
        from: String,
        /// The target host.
        to: String,
    },
    /// The hosts within N cable hops of a host (`HOPS HOST` lines; 2 = the same switch).
    Near {
        #[command(flatten)]
        input: Input,
        /// The host.
        host: String,
        /// The largest hop count (2 by default).
        n: Option<u32>,
    },
    /// For HOST, the adapter port that reaches OTHER and the NUMA nodes and PUs local to it.
    Local {
        #[command(flatten)]
        input: Input,
        /// The host whose topology is looked at.
        host: String,
        /// The host to reach.
        other: String,
    },
    /// The hosts whose adapters are cabled to a switch (by GUID).
    Under {
        #[command(flatten)]
        input: Input,
        /// The switch GUID (`0x0008f10500108c9e`).
        switch: String,
    },
    /// The switch levels of each subnet (1 = leaf switches): `SUBNET LEVEL GUID DESCRIPTION` lines.
    Levels {
        #[command(flatten)]
        input: Input,
    },
    /// Slurm's topology.conf (topology/tree): leaf switches with their nodes, upper switches with the switches below.
    Slurm {
        #[command(flatten)]
        input: Input,
        /// Host names for Slurm: a file of `FABRIC-NAME SLURM-NAME` lines.
        #[arg(long, value_name = "MAP")]
        names: Option<PathBuf>,
    },
    /// Follows every route of the forwarding tables and checks that each
    /// ends at its target without a loop: `SUBNET routes=N` lines.
    Routes {
        #[command(flatten)]
        input: Input,
    },
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
fn list(p: &Path) -> Result<Vec<PathBuf>, String> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(p)
        .map_err(|e| format!("cannot list {}: {e}", p.display()))?
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
    input: &Input,
    warned: &mut BTreeSet<PathBuf>,
) -> Result<(Vec<Found>, Vec<Xml>), String> {
    let mut fabric = Vec::new();
    let mut xmls = Vec::new();
    let d = &input.dir;
    let named = |f: &Path| -> Result<PathBuf, String> {
        std::fs::canonicalize(f).map_err(|e| format!("{}: {e}", f.display()))
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
                    if let Lead::Inside(t) = lead(&base, &f, warned) {
                        if t.is_file() {
                            fabric.push(inside(t));
                        }
                    }
                }
            } else if real.is_file() && name.ends_with(".txt") {
                fabric.push(inside(real));
            }
        }
        if let Lead::Inside(hw) = lead(&base, &base.join("hwloc"), warned) {
            if hw.is_dir() {
                for p in list(&hw)? {
                    if p.extension().is_none_or(|e| e != "xml") {
                        continue;
                    }
                    if let Lead::Inside(real) = lead(&base, &p, warned) {
                        if real.is_file() {
                            xmls.push((p, real, Some(base.clone())));
                        }
                    }
                }
            }
        }
    } else if d.is_file() {
        fabric.push(Found {
            path: named(d)?,
            within: None,
        });
    } else {
        return Err(format!("{} is neither a folder nor a file", d.display()));
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
        return Err(format!("no fabric files in {}", d.display()));
    }
    Ok((fabric, xmls))
}

/// The subnets of fabric folders (laid out as `wloc fabric` reads them;
/// their node topologies are not read) or files, read by the built-in
/// fabric reader or by `reader`.
pub(super) fn read_subnets(
    paths: &[PathBuf],
    reader: Option<&Path>,
) -> Result<Vec<wloc_ib::Subnet>, String> {
    let mut files = Vec::new();
    let mut warned = BTreeSet::new();
    for p in paths {
        let (f, _) = collect(
            &Input {
                dir: p.clone(),
                files: Vec::new(),
                reader: None,
            },
            &mut warned,
        )?;
        files.extend(f);
    }
    read_fabric(&files, reader)
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
fn read_fabric(files: &[Found], reader: Option<&Path>) -> Result<Vec<wloc_ib::Subnet>, String> {
    let mut paths = Vec::new();
    for f in files {
        let s = f
            .path
            .to_str()
            .ok_or_else(|| format!("{} is not a UTF-8 path", f.path.display()))?
            .to_string();
        if !paths.contains(&s) {
            paths.push(s);
        }
    }
    let policy = wloc::input::policy()?;
    let rt = wloc::input::runtime()?;
    let (mut adm, bytes) = match reader {
        None => {
            let b = &builtin::IB_FABRIC;
            let adm =
                enforce::admit_builtin(policy, b, fabric_limits()).map_err(|e| e.to_string())?;
            (adm, None)
        }
        Some(p) => {
            let bytes =
                std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
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
            )
            .map_err(|e| e.to_string())?;
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
    }
    .map_err(|e| e.to_string())?;
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
    let access =
        FileAccess::handed(&handed).map_err(|e| format!("cannot open the fabric files: {e}"))?;
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
    rt.read_fabric(&c, &opts).map_err(|e| e.to_string())
}

fn load(input: &Input) -> Result<Fabric, String> {
    let (files, xmls) = collect(input, &mut BTreeSet::new())?;
    let subnets = read_fabric(&files, input.reader.as_deref())?;
    // Each node topology's text: one found in the folder is read through a
    // handle on the folder (a link made or swapped in since `collect`
    // cannot lead out of it; what is not a regular file is skipped); one
    // the user named is read where it is.
    let mut folders: Vec<(PathBuf, super::store::Folder)> = Vec::new();
    let mut texts: Vec<(PathBuf, String)> = Vec::new();
    for (found, real, within) in &xmls {
        let text = match within {
            None => std::fs::read_to_string(real)
                .map_err(|e| format!("cannot read {}: {e}", found.display()))?,
            Some(base) => {
                let i = match folders.iter().position(|(b, _)| b == base) {
                    Some(i) => i,
                    None => {
                        folders.push((base.clone(), super::store::Folder::open(base)?));
                        folders.len() - 1
                    }
                };
                let rel = real
                    .strip_prefix(base)
                    .map_err(|_| format!("{} is not inside {}", real.display(), base.display()))?;
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
                topologies.push((name, wloc_fabric::read_topology_str(text, found)?));
            }
        }
    }
    Fabric::build(subnets, topologies)
}

/// The topology a diff `found` (of text `text`) gives when applied to its
/// reference, which must be one of the full topologies of `texts` (the
/// same folder's, each with its text), as hwloc-compress-dir writes them.
fn diffed(
    found: &std::path::Path,
    text: &str,
    texts: &[(PathBuf, String)],
) -> Result<wloc_core::Topology, String> {
    use wloc::xml::diff;
    let d = diff::parse(text)
        .map_err(|e| format!("{}: not a valid hwloc topology diff: {e}", found.display()))?;
    let r = d
        .refname
        .as_deref()
        .filter(|r| !r.is_empty())
        .ok_or_else(|| {
            format!(
                "{}: the diff names no reference topology (refname)",
                found.display()
            )
        })?;
    let (ref_found, ref_text) = texts
        .iter()
        .find(|(f, _)| {
            f.file_name().is_some_and(|n| n.to_string_lossy() == r) && !r.ends_with(".diff.xml")
        })
        .ok_or_else(|| {
            format!(
                "{}: its reference '{r}' is not a topology of the same folder",
                found.display()
            )
        })?;
    let mut topo = wloc_fabric::read_topology_str(ref_text, ref_found)?;
    diff::apply_with_reference(ref_text, &mut topo, text, &d.changes, false)
        .map_err(|e| format!("{}: cannot apply it to '{r}': {e}", found.display()))?;
    Ok(topo)
}

/// The fabric of `input` as Slurm's `topology.conf` (or, with `yaml`,
/// `topology.yaml`), host names mapped by the `names` file
/// (`FABRIC-NAME SLURM-NAME` lines).
pub(super) fn slurm_topology(
    input: &Input,
    names: Option<&std::path::Path>,
    yaml: bool,
) -> Result<String, String> {
    let f = load(input)?;
    let map = match names {
        Some(p) => wloc_fabric::slurm::parse_names(
            &std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?,
        )
        .map_err(|e| format!("{}: {e}", p.display()))?,
        None => Default::default(),
    };
    let rename = |h: &str| map.get(h).cloned().unwrap_or_else(|| h.to_string());
    if yaml {
        wloc_fabric::slurm::topology_yaml(&f, &rename)
    } else {
        wloc_fabric::slurm::topology_conf(&f, &rename)
    }
}

fn host(f: &Fabric, name: &str) -> Result<usize, String> {
    f.host(name)
}

pub fn run(a: &FabricArgs) -> super::Result {
    match &a.query {
        Query::Summary { input } => {
            let f = load(input)?;
            let mut s = String::new();
            for x in f.summary() {
                s.push_str(&format!(
                    "{} switches={} adapters={} hosts={} cables={}\n",
                    x.subnet, x.switches, x.adapters, x.hosts, x.cables
                ));
            }
            super::print(&s)
        }
        Query::Export { format, input, out } => {
            let f = load(input)?;
            let text = match format {
                Format::Graphml => export::graphml(&f),
                Format::Gexf => export::gexf(&f),
                Format::Dot => export::dot(&f),
                Format::Json => {
                    let mut s = serde_json::to_string_pretty(&export::json(&f))
                        .map_err(|e| e.to_string())?;
                    s.push('\n');
                    s
                }
                Format::Svg => export::svg(&f),
            };
            match out {
                Some(p) => std::fs::write(p, text)
                    .map_err(|e| format!("cannot write {}: {e}", p.display()).into()),
                None => super::print(&text),
            }
        }
        Query::Path { input, from, to } => {
            let f = load(input)?;
            let r = f.path(host(&f, from)?, host(&f, to)?)?;
            let g = &f.subnets[r.subnet];
            let mut s = format!(
                "subnet {} ({}), {} hops\n",
                g.name,
                if r.from_tables {
                    "forwarding tables"
                } else {
                    "shortest path"
                },
                r.nodes.len() - 1
            );
            for (i, n) in r.nodes.iter().enumerate() {
                let v = &g.graph[*n];
                let who = match v.host {
                    Some(h) => format!("{} ", f.hosts[h].name),
                    None => String::new(),
                };
                s.push_str(&format!(
                    "{:#018x} {} {who}'{}'",
                    v.guid,
                    v.kind.name(),
                    v.description
                ));
                if let Some(p) = r.ports.get(i) {
                    s.push_str(&format!(" out port {p}"));
                }
                s.push('\n');
            }
            super::print(&s)
        }
        Query::Near { input, host: h, n } => {
            let f = load(input)?;
            let near = f.near(host(&f, h)?, n.unwrap_or(2));
            let s: String = near
                .iter()
                .map(|(d, o)| format!("{d} {}\n", f.hosts[*o].name))
                .collect();
            super::print(&s)
        }
        Query::Local {
            input,
            host: h,
            other,
        } => {
            let f = load(input)?;
            let l = f.local(host(&f, h)?, host(&f, other)?)?;
            let numa: Vec<String> = l.numa.iter().map(u32::to_string).collect();
            super::print(&format!(
                "subnet {} device {} port {} numa {} pus {}\n",
                l.subnet,
                l.device,
                l.port,
                if numa.is_empty() {
                    "-".to_string()
                } else {
                    numa.join(",")
                },
                l.pus
            ))
        }
        Query::Under { input, switch } => {
            let f = load(input)?;
            let hex = switch.trim_start_matches("0x");
            let g = u64::from_str_radix(hex, 16)
                .map_err(|_| format!("{switch:?} is not a switch GUID"))?;
            let s: String = f.hosts_under(g)?.into_iter().map(|h| h + "\n").collect();
            super::print(&s)
        }
        Query::Levels { input } => {
            let f = load(input)?;
            let mut s = String::new();
            for (si, g) in f.subnets.iter().enumerate() {
                for (n, l) in f.switch_levels(si) {
                    let v = &g.graph[n];
                    s.push_str(&format!(
                        "{} {l} {:#018x} '{}'\n",
                        g.name, v.guid, v.description
                    ));
                }
            }
            super::print(&s)
        }
        Query::Slurm { input, names } => {
            super::print(&slurm_topology(input, names.as_deref(), false)?)
        }
        Query::Routes { input } => {
            let f = load(input)?;
            let mut s = String::new();
            for (si, g) in f.subnets.iter().enumerate() {
                let n = f.check_routes_of(si)?;
                s.push_str(&format!("{} routes={n}\n", g.name));
            }
            super::print(&s)
        }
    }
}
