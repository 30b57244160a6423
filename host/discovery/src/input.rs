//! Choosing and loading a topology source: XML, synthetic, fsroot, CPUID
//! dump or topology image.
//!
//! The source comes from the command line (`-i` and `--if`) or, when none is
//! given, from the environment: first `WLOC_IMAGE` (a topology image a
//! launcher wrote for its processes), then hwloc's variables and their
//! `WLOC_` equivalents, in hwloc's order: fsroot (`WLOC_FSROOT`), CPUID dump
//! (`WLOC_CPUID_PATH`), synthetic (`WLOC_SYNTHETIC`), XML (`WLOC_XMLFILE`).
//! A file given with `-i` is an image when it starts with the image magic
//! number, whatever its name.

use std::fmt;
use std::path::{Path, PathBuf};

use wloc_core::Topology;

use crate::Discovery;

// What a topology is read from and how the command line and the
// environment choose it live in `wloc-input`, shared with the C library.
pub use wloc_input::{
    CpuidBeside, InputFormat, ResolveError, Source, env_var, guess_format, resolve,
};

/// Why a topology could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// The input or format given was not usable.
    BadInput(String),
    /// The XML document was rejected.
    Xml(wloc_xml::XmlError),
    /// The synthetic description was rejected.
    Synthetic(wloc_core::synthetic::SyntheticError),
    /// This kind of input is not available in this build.
    Unsupported(String),
    /// Linux discovery (of this machine or of a recorded fsroot) failed.
    Linux(wloc_linux::DiscoveryError),
    /// A sandboxed component failed or was refused.
    Component(wloc_runtime::ComponentError),
    /// The topology image was refused.
    Image(wloc_image::ImageError),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::BadInput(s) | LoadError::Unsupported(s) => f.write_str(s),
            LoadError::Xml(e) => write!(f, "{e}"),
            LoadError::Synthetic(e) => write!(f, "invalid synthetic description: {e}"),
            LoadError::Linux(e) => write!(f, "Linux discovery failed: {e}"),
            LoadError::Image(e) => write!(f, "{e}"),
            // The synthetic component reports description errors in the
            // words of the native parser.
            LoadError::Component(e) => match &e.kind {
                wloc_runtime::ErrorKind::Failed(m)
                    if e.component == wloc_runtime::builtin::SYNTHETIC_NAME =>
                {
                    f.write_str(m)
                }
                _ => write!(f, "{e}"),
            },
        }
    }
}

impl std::error::Error for LoadError {}

impl Discovery {
    /// Loads a topology from a source into `topo`, whose type filters and
    /// flags the caller has set.
    pub fn load(&self, source: &Source, topo: Topology) -> Result<Topology, LoadError> {
        let d = self;
        match source {
            Source::Xml(path) => {
                if path.as_os_str() == "-" {
                    // At most as much as a named file (`/dev/zero` redirected
                    // to standard input is refused, not read without end).
                    let max = wloc_xml::MAX_FILE_BYTES;
                    let mut bytes = Vec::new();
                    std::io::Read::read_to_end(
                        &mut std::io::Read::take(std::io::stdin().lock(), max + 1),
                        &mut bytes,
                    )
                    .map_err(|e| {
                        LoadError::BadInput(format!("cannot read XML from standard input: {e}"))
                    })?;
                    if bytes.len() as u64 > max {
                        return Err(LoadError::BadInput(format!(
                            "cannot read XML from standard input: larger than {max} bytes, the most wloc reads of such a file"
                        )));
                    }
                    let text = String::from_utf8(bytes).map_err(|e| {
                        LoadError::BadInput(format!(
                            "XML from standard input is not valid UTF-8 (invalid byte at offset {})",
                            e.utf8_error().valid_up_to()
                        ))
                    })?;
                    wloc_xml::import_str(&text, topo).map_err(LoadError::Xml)
                } else {
                    wloc_xml::import_file(path, topo).map_err(LoadError::Xml)
                }
            }
            Source::Synthetic(desc) => load_synthetic(d, desc, topo),
            Source::Fsroot(p, cpuid) => load_linux(d, p, cpuid.as_ref(), topo),
            Source::Cpuid(p) => load_cpuid_dump(d, p, topo),
            Source::CpuidThisSystem => load_cpuid_this_system(d, topo),
            Source::ThisSystem => load_linux_this_system(d, topo),
            Source::Image(p) => {
                let img = if p.as_os_str() == "-" {
                    let stdin = std::io::stdin();
                    let fd = std::os::fd::AsFd::as_fd(&stdin)
                        .try_clone_to_owned()
                        .map_err(|e| {
                            LoadError::BadInput(format!("cannot read standard input: {e}"))
                        })?;
                    wloc_image::adopt_stream(&std::fs::File::from(fd))
                } else {
                    wloc_image::adopt(p)
                };
                img.and_then(|img| img.to_topology_into(topo))
                    .map_err(LoadError::Image)
            }
        }
    }
}

/// Loads a built-in component through the policy (which may disable it,
/// narrow its grant or set its limits): the one path every component
/// takes.
fn load_builtin<'d>(
    d: &'d Discovery,
    b: &wloc_runtime::builtin::Builtin,
) -> Result<(&'d wloc_runtime::Runtime, wloc_runtime::LoadedComponent), LoadError> {
    let policy = d.policy().map_err(|e| LoadError::BadInput(e.to_string()))?;
    let rt = d
        .runtime()
        .map_err(|e| LoadError::Unsupported(e.to_string()))?;
    let adm = wloc_runtime::enforce::admit_builtin(policy, b, wloc_runtime::Limits::default())
        .map_err(LoadError::Component)?;
    let c = rt.load_builtin(&adm, b).map_err(LoadError::Component)?;
    Ok((rt, c))
}

/// Builds a synthetic description in the sandboxed built-in synthetic
/// component.  The description is parsed natively first, which is cheap,
/// so that syntax errors keep the parser's positions and wording.
fn load_synthetic(d: &Discovery, desc: &str, topo: Topology) -> Result<Topology, LoadError> {
    wloc_core::synthetic::parse(desc).map_err(LoadError::Synthetic)?;
    let (rt, c) = load_builtin(d, &wloc_runtime::builtin::SYNTHETIC)?;
    let opts = wloc_runtime::RunOptions::with_config([("description", desc)]);
    rt.discover(&c, &opts, topo).map_err(LoadError::Component)
}

/// hwloc's Linux discovery settings, from `WLOC_*`/`HWLOC_*` variables.
pub fn linux_options(this_system: bool) -> wloc_linux::Options {
    let mut o = wloc_linux::Options::from_lookup(env_var);
    // Like hwloc, HWLOC_PCI_LOCALITY may name a file holding the localities.
    if let Some(v) = o.pci_locality.take() {
        o.pci_locality = pci_locality_value(v);
    }
    o.this_system = this_system;
    if this_system {
        o.machine = Some(
            match std::env::consts::ARCH {
                "x86" => "i686",
                "arm" => "armv7l",
                "powerpc64" => "ppc64",
                "powerpc" => "ppc",
                a => a,
            }
            .to_string(),
        );
    }
    o
}

/// Largest `HWLOC_PCI_LOCALITY` file read (hwloc's limit).
const MAX_PCI_LOCALITY_FILE: usize = 64 * 1024;

/// Why a `HWLOC_PCI_LOCALITY` file is ignored (told in the warning).
#[derive(Debug, thiserror::Error)]
enum PciLocalityFileError {
    #[error("its path is not UTF-8")]
    NotUtf8Path,
    #[error("{0}")]
    Open(std::io::Error),
    #[error("not a regular file")]
    NotAFile,
    #[error("not a regular file (or gone)")]
    Gone,
    #[error("{0}")]
    Read(wloc_runtime::fs::FileError),
    #[error("larger than {MAX_PCI_LOCALITY_FILE} bytes")]
    TooLarge,
    #[error("not UTF-8 text")]
    NotText,
}

/// The localities `HWLOC_PCI_LOCALITY` gives: the value itself, or, when
/// it names something that exists, as in hwloc, the content of that file.
/// The file is read as a regular file of at most 64 KiB, opened without
/// blocking (through [`wloc_runtime::FileAccess`], as a component's files
/// are); anything else (a FIFO, a device, a larger file) is ignored with a
/// warning, as hwloc ignores a file too large.
fn pci_locality_value(v: String) -> Option<String> {
    let p = Path::new(&v);
    // Not a path (nothing there, as hwloc's open fails): the localities.
    let Ok(full) = std::fs::canonicalize(p) else {
        return Some(v);
    };
    let read = || -> Result<String, PciLocalityFileError> {
        use PciLocalityFileError as E;
        let full = full.to_str().ok_or(E::NotUtf8Path)?;
        let files = wloc_runtime::FileAccess::new(&[full], None).map_err(E::Open)?;
        // A root that is neither a regular file nor a folder is not opened.
        if !files.missing().is_empty() {
            return Err(E::NotAFile);
        }
        let bytes = files
            .read(full, MAX_PCI_LOCALITY_FILE + 1)
            .map_err(|e| match e {
                wloc_runtime::fs::FileError::NotFound => E::Gone,
                e => E::Read(e),
            })?;
        if bytes.len() > MAX_PCI_LOCALITY_FILE {
            return Err(E::TooLarge);
        }
        String::from_utf8(bytes).map_err(|_| E::NotText)
    };
    match read() {
        Ok(text) => Some(text),
        Err(why) => {
            eprintln!(
                "wloc: warning: ignoring the HWLOC_PCI_LOCALITY file '{}': {why}",
                p.display()
            );
            None
        }
    }
}

/// The settings given to the Linux discovery component.
fn linux_settings(opts: &wloc_linux::Options, topo: &Topology) -> Vec<(String, String)> {
    use wloc_linux::setting;
    let mut config = wloc_input::backend_settings(wloc_linux::SETTING_NAMES);
    // A PCI locality file was read by the host: pass its content.
    if let Some(v) = &opts.pci_locality {
        config.retain(|(k, _)| k != setting::PCI_LOCALITY);
        config.push((setting::PCI_LOCALITY.into(), v.clone()));
    }
    if opts.this_system {
        config.push((setting::THIS_SYSTEM.into(), "1".into()));
    }
    if let Some(m) = &opts.machine {
        config.push((setting::MACHINE.into(), m.clone()));
    }
    for (key, ty) in setting::FILTERS {
        config.push((key.into(), topo.type_filter(ty).name().into()));
    }
    config
}

/// Discovers this machine with the Linux component, annotated from its
/// CPUID on x86.
fn load_linux_this_system(d: &Discovery, topo: Topology) -> Result<Topology, LoadError> {
    run_linux(d, Path::new("/"), true, None, topo)
}

/// Discovers a recorded fsroot with the Linux component, then, as hwloc's
/// x86 backend does after the Linux one, annotates it from a CPUID dump:
/// the one named beside it (`cpuid`, which must be readable), else the one
/// the recording holds (`cpuid/`, left out when damaged).
///
/// When the x86 backend is listed first, hwloc's x86 backend discovers
/// the processors and Linux only adds to them (memory, NUMA nodes, infos):
/// the x86 component discovers the dump too, the packages, dies, cores
/// and caches both find take the identities CPUID gives them (its core
/// ids; caches without an index), and x86 names itself first among the
/// backends.  (The tree stays Linux's: an object only one of them finds
/// stays as Linux has it.)
fn load_linux(
    d: &Discovery,
    root: &Path,
    cpuid: Option<&CpuidBeside>,
    topo: Topology,
) -> Result<Topology, LoadError> {
    let dump = match cpuid {
        Some(c) => Some(named_cpuid_dump(&c.dump)?),
        None => recorded_cpuid(root),
    };
    let x86_first = match cpuid {
        Some(c) if c.x86_first => Some(
            run_x86(d, named_cpuid_dump(&c.dump)?, None, topo.clone())
                .map_err(|e| bad_cpuid_dump(&c.dump, e))?,
        ),
        _ => None,
    };
    let mut t = run_linux(d, root, false, dump, topo)?;
    if let Some(x86) = x86_first {
        adopt_x86_identities(&mut t, &x86);
        let root_obj = t.root();
        t.obj_mut(root_obj).infos.insert(
            0,
            wloc_core::object::Info {
                name: "Backend".into(),
                value: "x86".into(),
            },
        );
    }
    Ok(t)
}

/// Gives the packages, dies, cores and caches of `t` the OS index of the
/// object of the same type and cpuset in `x86`, where there is one.
fn adopt_x86_identities(t: &mut Topology, x86: &Topology) {
    use wloc_core::ObjType;
    let types = [ObjType::Package, ObjType::Die, ObjType::Core];
    for ty in types.into_iter().chain(ObjType::CPU_CACHES) {
        let theirs: std::collections::HashMap<_, _> = x86
            .objs_by_type(ty)
            .into_iter()
            .filter_map(|id| {
                let o = x86.obj(id);
                Some((o.cpuset.clone()?, o.os_index))
            })
            .collect();
        for id in t.objs_by_type(ty) {
            let found = t.obj(id).cpuset.as_ref().and_then(|c| theirs.get(c));
            if let Some(&os_index) = found {
                t.obj_mut(id).os_index = os_index;
            }
        }
    }
}

/// Discovers a Linux machine from `root` (`/`, or a recorded fsroot) in
/// the sandboxed Linux component, granted `/sys`, `/proc` and the few
/// other read-only roots it needs, rebased under `root`, and the CPUID
/// answers of `dump` (this machine's on x86 when `this_system`).
fn run_linux(
    d: &Discovery,
    root: &Path,
    this_system: bool,
    dump: Option<crate::cpuid_native::DumpProvider>,
    topo: Topology,
) -> Result<Topology, LoadError> {
    if !root.is_dir() {
        return Err(LoadError::BadInput(format!(
            "cannot read {}: not a directory",
            root.display()
        )));
    }
    let opts = linux_options(this_system);
    let fsroot = (!this_system).then_some(root);
    let files = wloc_runtime::FileAccess::new(wloc_runtime::builtin::LINUX_ROOTS, fsroot)
        .map_err(|e| LoadError::BadInput(format!("cannot open {}: {e}", root.display())))?;
    let (rt, c) = load_builtin(d, &wloc_runtime::builtin::LINUX)?;
    let mut run = wloc_runtime::RunOptions::with_config(linux_settings(&opts, &topo));
    run.files = std::sync::Arc::new(files);
    // On x86, CPUID tells which caches are inclusive (sysfs does not), as
    // hwloc's x86 backend adds it after the Linux one.
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    let live = this_system
        .then(|| crate::cpuid_native::LiveProvider::new().ok())
        .flatten()
        .map(std::sync::Arc::new);
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    if let Some(p) = &live {
        run.cpuid = Some(p.clone());
    }
    if let Some(p) = dump {
        run.cpuid = Some(std::sync::Arc::new(p));
    }
    let result = rt.discover(&c, &run, topo);
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    if let Some(p) = &live {
        p.restore()
            .map_err(|e| LoadError::Unsupported(format!("cannot restore the CPU affinity: {e}")))?;
    }
    let mut t = result.map_err(LoadError::Component)?;
    t.is_thissystem = this_system;
    Ok(t)
}

/// Largest CPUID dump file read (real `puN` files are a few KiB).
const MAX_CPUID_FILE_SIZE: u64 = 1 << 20;

/// Reads a `hwloc-gather-cpuid` directory and discovers its topology with
/// the x86 CPUID decoder.  Only `hwloc-cpuid-info` and `puN` files are
/// read, each at most [`MAX_CPUID_FILE_SIZE`] bytes.
fn load_cpuid_dump(d: &Discovery, dir: &Path, topo: Topology) -> Result<Topology, LoadError> {
    let provider = named_cpuid_dump(dir)?;
    run_x86(d, provider, None, topo).map_err(|e| match e {
        LoadError::Component(c) => bad_cpuid_dump(dir, c),
        other => other,
    })
}

/// The error of a CPUID dump `dir` that cannot be read or decoded.
fn bad_cpuid_dump(dir: &Path, what: impl fmt::Display) -> LoadError {
    LoadError::BadInput(format!("cannot read CPUID dump {}: {what}", dir.display()))
}

/// Reads the CPUID dump folder a user named (`-i DIR --if cpuid`,
/// `HWLOC_CPUID_PATH`).
fn named_cpuid_dump(dir: &Path) -> Result<crate::cpuid_native::DumpProvider, LoadError> {
    // Read as the folder `/NAME` of the folder above it (the user named
    // it: a link is followed to it), so that a link inside it leading
    // out is denied, not resolved inside it as in a recording.
    let full = std::fs::canonicalize(dir).map_err(|e| bad_cpuid_dump(dir, e))?;
    let src = match (full.parent(), full.file_name().and_then(|n| n.to_str())) {
        (Some(parent), Some(name)) => read_cpuid_dump(parent, &format!("/{name}")),
        _ => read_cpuid_dump(&full, "/"),
    }
    .map_err(|e| bad_cpuid_dump(dir, e))?;
    Ok(crate::cpuid_native::DumpProvider::new(src, None))
}

/// Reads the `hwloc-cpuid-info` and `puN` files of a CPUID dump, each at
/// most [`MAX_CPUID_FILE_SIZE`] bytes.  The dump's folder may come from
/// anyone (a recording, `-i DIR --if cpuid`): its files are read as
/// [`wloc_runtime::FileAccess`] serves a component's, through a handle on
/// `base` (the user's folder, or the recording's fsroot) and only within
/// `dir` (`/` of `base`, or `/cpuid`).  Only regular files are read,
/// opened without blocking; a FIFO, device or socket is left out, and a
/// link leading out of the folder is skipped with a warning naming it.
/// (A dump missing a PU is then refused as a whole.)
fn read_cpuid_dump(base: &Path, dir: &str) -> Result<wloc_probe::DumpSource, CpuidDumpError> {
    use wloc_runtime::fs::FileError;
    let shown = |name: &str| base.join(dir.trim_start_matches('/')).join(name);
    let access = wloc_runtime::FileAccess::new(&[dir], Some(base)).map_err(CpuidDumpError::Open)?;
    if !access.missing().is_empty() {
        return Err(CpuidDumpError::NoFolder {
            folder: shown(""),
            base: base.to_path_buf(),
        });
    }
    let names = access.list_dir(dir).map_err(CpuidDumpError::List)?;
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for name in names {
        if !wloc_probe::DumpSource::wants_file(&name) {
            continue;
        }
        if files.len() > wloc_probe::MAX_DUMP_PUS {
            return Err(CpuidDumpError::TooManyFiles);
        }
        let path = format!("{}/{name}", dir.trim_end_matches('/'));
        let bytes = match access.read(&path, MAX_CPUID_FILE_SIZE as usize + 1) {
            Ok(b) => b,
            // Not a regular file (left out, as for a component), or gone.
            Err(FileError::NotFound) => continue,
            Err(FileError::Denied) => {
                eprintln!(
                    "wloc: warning: skipped '{}': a link leading out of the folder",
                    shown(&name).display()
                );
                continue;
            }
            Err(why) => return Err(CpuidDumpError::Read { name, why }),
        };
        if bytes.len() as u64 > MAX_CPUID_FILE_SIZE {
            return Err(CpuidDumpError::TooLarge(name));
        }
        files.push((name, bytes));
    }
    Ok(wloc_probe::DumpSource::from_files(files)?)
}

/// Why a CPUID dump could not be read (told after `cannot read CPUID
/// dump DIR: `).
#[derive(Debug, thiserror::Error)]
enum CpuidDumpError {
    /// The folder could not be opened.
    #[error("{0}")]
    Open(std::io::Error),
    /// There is no such folder inside the base.
    #[error("no folder {} (or a link leading out of {})", folder.display(), base.display())]
    NoFolder { folder: PathBuf, base: PathBuf },
    /// The folder could not be listed.
    #[error("{0}")]
    List(wloc_runtime::fs::FileError),
    /// More `puN` files than a dump may have.
    #[error("too many files")]
    TooManyFiles,
    /// A file could not be read.
    #[error("{name}: {why}")]
    Read {
        name: String,
        why: wloc_runtime::fs::FileError,
    },
    /// A file is larger than a dump's files may be.
    #[error("{0} is larger than {MAX_CPUID_FILE_SIZE} bytes")]
    TooLarge(String),
    /// The files do not make a dump.
    #[error(transparent)]
    Dump(#[from] wloc_probe::DumpError),
}

/// The CPUID dump a recording holds (`cpuid/`, as `wloc gather-topology`
/// and `hwloc-gather-topology` write it), so that a recording reads back
/// with the CPUID-derived attributes of the machine it records (which
/// caches are inclusive).  It is read inside the recording only (see
/// [`read_cpuid_dump`]).  A missing or damaged dump leaves them out.
fn recorded_cpuid(root: &Path) -> Option<crate::cpuid_native::DumpProvider> {
    // Only looked at, not followed out of the recording: a `cpuid` link
    // is resolved inside it by `FileAccess`.
    if root.join("cpuid").symlink_metadata().is_err() {
        return None;
    }
    let src = read_cpuid_dump(root, "/cpuid").ok()?;
    Some(crate::cpuid_native::DumpProvider::new(src, None))
}

/// This machine from CPUID on every PU, plus its ACPI NUMA tables when
/// the process may read them (root).
fn load_cpuid_this_system(d: &Discovery, topo: Topology) -> Result<Topology, LoadError> {
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    {
        let provider = crate::cpuid_native::gather_this_machine()
            .map_err(|e| LoadError::Unsupported(e.to_string()))?;
        let files = wloc_runtime::FileAccess::new(wloc_runtime::builtin::X86_ROOTS, None)
            .map_err(|e| LoadError::BadInput(format!("cannot open the ACPI tables: {e}")))?;
        let mut t = run_x86(d, provider, Some(files), topo)?;
        t.is_thissystem = true;
        Ok(t)
    }
    #[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
    {
        let _ = (d, topo);
        Err(LoadError::Unsupported(
            "CPUID discovery of this machine needs x86-64 Linux".into(),
        ))
    }
}

/// Runs the sandboxed x86 discovery component, granted CPUID answers and
/// maybe the ACPI tables, with hwloc's x86 settings from the environment
/// (`HWLOC_X86_TOPOEXT_NUMANODES`, [`wloc_probe::x86_setting`]).
pub(crate) fn run_x86(
    d: &Discovery,
    provider: crate::cpuid_native::DumpProvider,
    files: Option<wloc_runtime::FileAccess>,
    topo: Topology,
) -> Result<Topology, LoadError> {
    let (rt, c) = load_builtin(d, &wloc_runtime::builtin::X86)?;
    let mut run = wloc_runtime::RunOptions::with_config(wloc_input::backend_settings(
        wloc_probe::x86_setting::NAMES,
    ));
    run.cpuid = Some(std::sync::Arc::new(provider));
    if let Some(f) = files {
        run.files = std::sync::Arc::new(f);
    }
    rt.discover(&c, &run, topo).map_err(LoadError::Component)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_an_image_by_its_magic_number() {
        let dir = std::env::temp_dir().join(format!("wloc-guess-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let t = wloc_core::synthetic::parse("pack:2 pu:2")
            .unwrap()
            .build(Topology::new())
            .unwrap();
        let img = dir.join("topo.xml");
        wloc_image::write(&t, &img).unwrap();
        assert_eq!(guess_format(img.to_str().unwrap()), InputFormat::Image);
        let loaded = Discovery::new(None)
            .load(&resolve(img.to_str(), None).unwrap(), Topology::new())
            .unwrap();
        assert_eq!(loaded.objs_by_type(wloc_core::ObjType::PU).len(), 4);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
