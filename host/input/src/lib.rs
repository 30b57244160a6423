//! `wloc-input`: what a topology is read from.
//!
//! The source comes from the command line (`-i` and `--if`) or, when none
//! is given, from the environment: first `WLOC_IMAGE` (a topology image a
//! launcher wrote for its processes), then hwloc's variables and their
//! `WLOC_` equivalents, in hwloc's order: fsroot (`WLOC_FSROOT`), CPUID
//! dump (`WLOC_CPUID_PATH`), synthetic (`WLOC_SYNTHETIC`), XML
//! (`WLOC_XMLFILE`).  A file given with `-i` is an image when it starts
//! with the image magic number, whatever its name.  Every variable is
//! read through [`wloc_trust::env`], so a privileged process reads none.
//!
//! This crate carries no discovery: the `wloc` command loads sources with
//! its sandboxed components, and the C library (`libhwloc.so.15`) reads
//! XML, synthetic descriptions and images itself and asks the discovery
//! module for the rest through [`discover`]'s request and reply.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

pub mod discover;

/// The kinds of input a topology can be read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputFormat {
    /// hwloc XML (v1, v2 or v3).
    Xml,
    /// A synthetic description such as `pack:2 core:4 pu:2`.
    Synthetic,
    /// A recorded Linux `/sys` and `/proc` tree.
    Fsroot,
    /// A directory of per-PU CPUID dumps.
    Cpuid,
    /// A topology image (`wloc ls --of image`).
    Image,
}

impl InputFormat {
    /// Parses lstopo's `--if` names.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "xml" => Some(InputFormat::Xml),
            "synthetic" => Some(InputFormat::Synthetic),
            "fsroot" => Some(InputFormat::Fsroot),
            "cpuid" => Some(InputFormat::Cpuid),
            "image" => Some(InputFormat::Image),
            _ => None,
        }
    }
}

/// A resolved input: what to read and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// An XML file (`-` for standard input).
    Xml(PathBuf),
    /// A synthetic description.
    Synthetic(String),
    /// A recorded filesystem root, and the CPUID dump hwloc's x86 backend
    /// reads with it when one is named (`HWLOC_CPUID_PATH` beside
    /// `HWLOC_FSROOT`, [`cpuid_beside`]).
    Fsroot(PathBuf, Option<CpuidBeside>),
    /// A CPUID dump directory.
    Cpuid(PathBuf),
    /// CPUID of every PU of the machine we run on (and its ACPI tables
    /// when readable), without the operating system's topology files.
    CpuidThisSystem,
    /// The machine we run on.
    ThisSystem,
    /// A topology image.
    Image(PathBuf),
}

/// A CPUID dump read with a recorded fsroot, as hwloc runs its Linux and
/// x86 backends together: Linux discovers the recording, then the x86
/// pass adds what CPUID knows and sysfs does not (CPU infos of packages,
/// which caches are inclusive, hybrid CPU kinds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuidBeside {
    /// The `hwloc-gather-cpuid` folder.
    pub dump: PathBuf,
    /// Whether the component list names `x86` before `linux`
    /// (`HWLOC_COMPONENTS=x86,linux`): the x86 backend then ran first,
    /// and the topology says so (`Backend` `x86` before `Linux`).
    pub x86_first: bool,
}

/// The CPUID dump an fsroot is read with: `WLOC_CPUID_PATH` or
/// `HWLOC_CPUID_PATH`, unless the component list (`HWLOC_COMPONENTS`)
/// leaves the `x86` component out.
pub fn cpuid_beside() -> Option<CpuidBeside> {
    cpuid_beside_in(&wloc_trust::env::var_os)
}

/// [`cpuid_beside`] with the environment `env`.
fn cpuid_beside_in(env: Lookup<'_>) -> Option<CpuidBeside> {
    let list = env("HWLOC_COMPONENTS").map(text);
    if !component_enabled_in(list.as_deref(), "x86") {
        return None;
    }
    let dump = prefixed_var(env, "CPUID_PATH")?;
    let position = |name: &str| list.as_deref()?.split(',').position(|e| e == name);
    let x86_first = match (position("x86"), position("linux")) {
        (Some(x), Some(l)) => x < l,
        (Some(_), None) => true,
        _ => false,
    };
    Some(CpuidBeside {
        dump: dump.into(),
        x86_first,
    })
}

/// Why the command line names no usable source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolveError(String);

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ResolveError {}

/// Reads an environment variable under its `WLOC_` name first, then its
/// `HWLOC_` name (neither in a privileged process: [`wloc_trust::env`]).
pub fn env_var(suffix: &str) -> Option<String> {
    prefixed_var(&wloc_trust::env::var_os, suffix).map(text)
}

/// Reads the environment a source is chosen from: the process's own
/// ([`wloc_trust::env::var_os`]) or, in tests, a table, so that no test
/// changes the environment of the threads it shares its process with.
/// Values are read as the bytes they are: a file name need not be UTF-8,
/// and a variable set to bytes that are not must never count as unset
/// (the machine would be read instead of the file the caller named).
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<OsString>;

/// [`env_var`] in `env`.
fn prefixed_var(env: Lookup<'_>, suffix: &str) -> Option<OsString> {
    env(&format!("WLOC_{suffix}"))
        .or_else(|| env(&format!("HWLOC_{suffix}")))
        .filter(|v| !v.is_empty())
}

/// A variable's value read as text (a description, a list, a setting):
/// bytes that are not UTF-8 become U+FFFD, so that the reader refuses the
/// value, naming it, rather than the variable being ignored.
fn text(v: OsString) -> String {
    v.to_string_lossy().into_owned()
}

/// The settings a discovery backend takes from the environment: each of
/// `names` (an hwloc variable name without `HWLOC_`, such as
/// `X86_TOPOEXT_NUMANODES`) that is set, with its value, read as
/// [`env_var`] reads it (`WLOC_` name first, empty values left out).
/// The command and the discovery module pass these to the components.
pub fn backend_settings(names: &[&str]) -> Vec<(String, String)> {
    backend_settings_in(&wloc_trust::env::var_os, names)
}

/// [`backend_settings`] with the environment `env`.
pub fn backend_settings_in(env: Lookup<'_>, names: &[&str]) -> Vec<(String, String)> {
    names
        .iter()
        .filter_map(|n| prefixed_var(env, n).map(|v| (n.to_string(), text(v))))
        .collect()
}

/// Guesses the format of `-i` as lstopo does: a directory holding a CPUID
/// dump is `cpuid`, another directory is `fsroot`, a regular file
/// starting with the image magic number is an image, anything else that
/// exists (another file, or a FIFO or device, which reading then
/// refuses) is XML, and anything else is a synthetic description.
pub fn guess_format(input: &str) -> InputFormat {
    let p = Path::new(input);
    if p.is_dir() {
        if p.join("hwloc-cpuid-info").exists() || p.join("pu0").exists() {
            InputFormat::Cpuid
        } else {
            InputFormat::Fsroot
        }
    } else if p.is_file() && wloc_image::file_is_image(p) {
        InputFormat::Image
    } else if input == "-" || p.exists() || input.ends_with(".xml") {
        InputFormat::Xml
    } else {
        InputFormat::Synthetic
    }
}

/// Decides the source from `-i`/`--if` and, failing those, the environment.
pub fn resolve(input: Option<&str>, format: Option<InputFormat>) -> Result<Source, ResolveError> {
    resolve_in(&wloc_trust::env::var_os, input, format)
}

/// [`resolve`] with the environment `env`.
fn resolve_in(
    env: Lookup<'_>,
    input: Option<&str>,
    format: Option<InputFormat>,
) -> Result<Source, ResolveError> {
    if let Some(i) = input {
        let fmt = format.unwrap_or_else(|| guess_format(i));
        return Ok(match fmt {
            InputFormat::Xml => Source::Xml(i.into()),
            InputFormat::Synthetic => Source::Synthetic(i.into()),
            InputFormat::Fsroot => Source::Fsroot(i.into(), cpuid_beside_in(env)),
            InputFormat::Cpuid => Source::Cpuid(i.into()),
            InputFormat::Image => Source::Image(i.into()),
        });
    }
    match format {
        // Like KMP_TOPOLOGY_METHOD=cpuid_leaf11: this machine from CPUID.
        Some(InputFormat::Cpuid) => return Ok(Source::CpuidThisSystem),
        Some(_) => {
            return Err(ResolveError(
                "--if needs an input given with -i (except --if cpuid, which reads this machine's CPUID)".into(),
            ))
        }
        None => {}
    }
    // A launcher's image wins over hwloc's variables, which may be set
    // for the whole job.
    if let Some(v) = env("WLOC_IMAGE").filter(|v| !v.is_empty()) {
        return Ok(Source::Image(v.into()));
    }
    if let Some(v) = prefixed_var(env, "FSROOT") {
        return Ok(Source::Fsroot(v.into(), cpuid_beside_in(env)));
    }
    if let Some(v) = prefixed_var(env, "CPUID_PATH") {
        return Ok(Source::Cpuid(v.into()));
    }
    if let Some(v) = prefixed_var(env, "SYNTHETIC") {
        return Ok(Source::Synthetic(text(v)));
    }
    if let Some(v) = prefixed_var(env, "XMLFILE") {
        return Ok(Source::Xml(v.into()));
    }
    Ok(Source::ThisSystem)
}

/// Where a library load whose caller named no source is sent, as
/// libhwloc sends it: by the environment, else this system.
///
/// When `HWLOC_COMPONENTS` lists components, they choose: an `xml=FILE`
/// or `synthetic=DESC` entry names the input, otherwise the machine is
/// discovered by the Linux and x86 backends, which still honour
/// `HWLOC_FSROOT` and `HWLOC_CPUID_PATH` while `HWLOC_XMLFILE` and
/// `HWLOC_SYNTHETIC` are ignored.  Without it, [`resolve`]'s order holds
/// (a launcher's `WLOC_IMAGE` first).  hwloc's fsroot `/` is this system,
/// and a CPUID dump is this system for a build without the x86 backend
/// (`x86_backend`), as hwloc's non-x86 builds ignore the variable.
pub fn resolve_unnamed(x86_backend: bool) -> Unnamed {
    resolve_unnamed_in(&wloc_trust::env::var_os, x86_backend)
}

/// [`resolve_unnamed`] with the environment `env`.
fn resolve_unnamed_in(env: Lookup<'_>, x86_backend: bool) -> Unnamed {
    let var = |n: &str| env(n).filter(|v| !v.is_empty());
    let this_system = |s: Source| match s {
        Source::Fsroot(p, _) if p.as_os_str() == "/" => Source::ThisSystem,
        Source::Cpuid(_) if !x86_backend => Source::ThisSystem,
        Source::Fsroot(p, Some(_)) if !x86_backend => Source::Fsroot(p, None),
        s => s,
    };
    if let Some(list) = var("HWLOC_COMPONENTS").map(text) {
        for entry in list.split(',') {
            if let Some(p) = entry.strip_prefix("xml=").filter(|p| !p.is_empty()) {
                return Unnamed::ByComponents(Source::Xml(p.into()));
            }
            if let Some(d) = entry.strip_prefix("synthetic=").filter(|d| !d.is_empty()) {
                return Unnamed::ByComponents(Source::Synthetic(d.into()));
            }
        }
        let source = match (var("HWLOC_FSROOT"), var("HWLOC_CPUID_PATH")) {
            (Some(f), _) if f != "/" => Source::Fsroot(f.into(), cpuid_beside_in(env)),
            (_, Some(c)) => Source::Cpuid(c.into()),
            _ => Source::ThisSystem,
        };
        return Unnamed::ByComponents(this_system(source));
    }
    // `resolve` without `-i` fails only for `--if`, which is not given.
    Unnamed::ByEnvironment(this_system(
        resolve_in(env, None, None).unwrap_or(Source::ThisSystem),
    ))
}

/// Whether hwloc would run its discovery component `name` under the
/// `HWLOC_COMPONENTS` of the environment ([`component_enabled_in`]).
pub fn component_enabled(name: &str) -> bool {
    let list = wloc_trust::env::var_os("HWLOC_COMPONENTS").map(text);
    component_enabled_in(list.as_deref(), name)
}

/// Whether hwloc runs its discovery component `name` under the component
/// list `list` (`HWLOC_COMPONENTS`): every component runs without a list;
/// with one, `-NAME` excludes, the names before `stop` (or a prefix of
/// it) run and those after it do not, and a list without `stop` lets
/// every component it does not exclude run.
pub fn component_enabled_in(list: Option<&str>, name: &str) -> bool {
    let Some(list) = list else {
        return true;
    };
    let entries = list.split(',').filter(|e| !e.is_empty());
    if entries.clone().any(|e| e.strip_prefix('-') == Some(name)) {
        return false;
    }
    for e in entries.filter(|e| !e.starts_with('-')) {
        if "stop".starts_with(e) {
            return false;
        }
        if e == name {
            return true;
        }
    }
    true
}

/// The source of a load whose caller named none ([`resolve_unnamed`]),
/// and what chose it: libhwloc falls back to this system when an input a
/// variable names cannot be read, but not when `HWLOC_COMPONENTS` chose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unnamed {
    /// `HWLOC_COMPONENTS` chose the components, and with them the input.
    ByComponents(Source),
    /// The input variables (or nothing: this system) chose.
    ByEnvironment(Source),
}

impl Unnamed {
    /// The source chosen.
    pub fn source(&self) -> &Source {
        match self {
            Unnamed::ByComponents(s) | Unnamed::ByEnvironment(s) => s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guesses_formats_like_lstopo() {
        assert_eq!(guess_format("pack:2 pu:2"), InputFormat::Synthetic);
        assert_eq!(guess_format("/"), InputFormat::Fsroot);
        assert_eq!(guess_format("missing.xml"), InputFormat::Xml);
        assert_eq!(guess_format("-"), InputFormat::Xml);
    }

    #[test]
    fn explicit_format_wins() {
        assert_eq!(
            resolve(Some("x"), Some(InputFormat::Xml)).unwrap(),
            Source::Xml("x".into())
        );
        assert!(resolve(None, Some(InputFormat::Xml)).is_err());
    }

    #[test]
    fn component_lists_enable_as_hwlocs() {
        let on = |list: Option<&str>| component_enabled_in(list, "pci");
        assert!(on(None));
        assert!(on(Some("")));
        assert!(!on(Some("linux,stop")));
        assert!(on(Some("linux,pci,stop")));
        assert!(on(Some("linux")));
        assert!(!on(Some("linux,-pci")));
        assert!(!on(Some("pci,-pci")));
        assert!(!on(Some("st,pci")));
        assert!(!on(Some(",,stop,pci")));
        assert!(on(Some("-x86,pci,stop")));
    }

    #[test]
    fn backend_settings_come_from_either_name() {
        let table: std::collections::HashMap<&str, &str> = [
            ("HWLOC_X86_TOPOEXT_NUMANODES", "1"),
            ("WLOC_CPUKINDS", "x"),
            ("HWLOC_CPUKINDS", "y"),
            ("HWLOC_GROUPING", ""),
        ]
        .into_iter()
        .collect();
        let env = |n: &str| table.get(n).map(OsString::from);
        let got = backend_settings_in(
            &env,
            &["X86_TOPOEXT_NUMANODES", "CPUKINDS", "GROUPING", "MEMTIERS"],
        );
        assert_eq!(
            got,
            [
                ("X86_TOPOEXT_NUMANODES".to_string(), "1".to_string()),
                ("CPUKINDS".to_string(), "x".to_string()),
            ]
        );
    }

    #[test]
    fn a_cpuid_dump_is_read_with_an_fsroot_when_x86_runs() {
        let run = |vars: &[(&str, &str)]| {
            let table: std::collections::HashMap<String, String> = vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let env = |n: &str| table.get(n).map(OsString::from);
            (
                resolve_in(&env, Some("rec"), Some(InputFormat::Fsroot)).unwrap(),
                resolve_unnamed_in(&env, true),
            )
        };
        let dump = ("HWLOC_CPUID_PATH", "d");
        let fsroot = ("HWLOC_FSROOT", "rec");
        let beside = |x86_first| {
            Source::Fsroot(
                "rec".into(),
                Some(CpuidBeside {
                    dump: "d".into(),
                    x86_first,
                }),
            )
        };
        assert_eq!(run(&[dump]).0, beside(false));
        assert_eq!(run(&[dump, fsroot]).1.source(), &beside(false));
        let x86_first = ("HWLOC_COMPONENTS", "x86,linux,stop");
        assert_eq!(run(&[dump, fsroot, x86_first]).1.source(), &beside(true));
        assert_eq!(
            run(&[dump, ("HWLOC_COMPONENTS", "linux,x86")]).0,
            beside(false)
        );
        // x86 left out of the list: the dump is not read.
        let plain = Source::Fsroot("rec".into(), None);
        assert_eq!(run(&[dump, ("HWLOC_COMPONENTS", "linux,stop")]).0, plain);
        assert_eq!(run(&[dump, ("HWLOC_COMPONENTS", "-x86")]).0, plain);
        assert_eq!(run(&[]).0, plain);
    }

    #[test]
    fn values_that_are_not_utf8_are_not_unset() {
        use std::os::unix::ffi::OsStringExt;
        let file = OsString::from_vec(b"t\xff.xml".to_vec());
        let env = |n: &str| (n == "HWLOC_XMLFILE").then(|| file.clone());
        assert_eq!(
            resolve_unnamed_in(&env, true).source(),
            &Source::Xml(PathBuf::from(file.clone()))
        );
        let desc =
            |n: &str| (n == "HWLOC_SYNTHETIC").then(|| OsString::from_vec(b"pack:\xff".to_vec()));
        assert!(matches!(
            resolve_unnamed_in(&desc, true).source(),
            Source::Synthetic(s) if s.contains('\u{fffd}')
        ));
    }

    #[test]
    fn unnamed_sources_follow_libhwlocs_choice() {
        let run = |vars: &[(&str, &str)], x86: bool| {
            let table: std::collections::HashMap<String, String> = vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            resolve_unnamed_in(&|n| table.get(n).map(OsString::from), x86)
        };
        assert_eq!(run(&[], true), Unnamed::ByEnvironment(Source::ThisSystem));
        // fsroot `/` is this system, and it comes before XML.
        let xml = ("HWLOC_XMLFILE", "t.xml");
        assert_eq!(
            run(&[xml, ("HWLOC_FSROOT", "/")], true),
            Unnamed::ByEnvironment(Source::ThisSystem)
        );
        assert_eq!(run(&[xml], true).source(), &Source::Xml("t.xml".into()));
        // A launcher's image comes first.
        assert_eq!(
            run(&[xml, ("WLOC_IMAGE", "t.img")], true).source(),
            &Source::Image("t.img".into())
        );
        let dump = ("HWLOC_CPUID_PATH", "dump");
        assert_eq!(
            run(&[xml, dump], true).source(),
            &Source::Cpuid("dump".into())
        );
        assert_eq!(run(&[xml, dump], false).source(), &Source::ThisSystem);
        // A component list ignores the XML and synthetic variables...
        let linux = ("HWLOC_COMPONENTS", "linux,stop");
        assert_eq!(
            run(&[linux, xml], true),
            Unnamed::ByComponents(Source::ThisSystem)
        );
        assert_eq!(
            run(&[linux, xml, ("HWLOC_FSROOT", "/"), dump], true),
            Unnamed::ByComponents(Source::Cpuid("dump".into()))
        );
        // ... and names its own.
        let listed = ("HWLOC_COMPONENTS", "synthetic=pack:2,xml=a.xml");
        assert_eq!(
            run(&[listed, xml], true),
            Unnamed::ByComponents(Source::Synthetic("pack:2".into()))
        );
    }
}
