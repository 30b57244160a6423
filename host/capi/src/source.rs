//! Where `hwloc_topology_load` reads from: the source a program chose
//! (`hwloc_topology_set_xml` and friends), else the environment's
//! (`HWLOC_XMLFILE`, `HWLOC_SYNTHETIC`, ..., `HWLOC_COMPONENTS`), else this
//! system.

use std::path::PathBuf;

use wloc_input::Source as Input;

/// Where `hwloc_topology_load` reads the topology from: one of wloc's
/// sources (the enum the `wloc` command and the discovery module share),
/// or what only the C API names.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Source {
    /// Not chosen: the environment, else this system.
    Default,
    /// `hwloc_topology_set_xmlbuffer`.
    XmlBuffer(String),
    /// `hwloc_topology_set_xml` (a file), `hwloc_topology_set_synthetic`,
    /// `hwloc_topology_set_fsroot` (`/`: this system), or what the
    /// environment names: an image (`WLOC_IMAGE`), a CPUID dump
    /// (`HWLOC_CPUID_PATH`), ...
    Input(Input),
}

impl Source {
    /// This system, discovered by the sandboxed components.
    pub(crate) const THIS_SYSTEM: Source = Source::Input(Input::ThisSystem);

    /// Whether the source is this system.
    pub(crate) fn is_this_system(&self) -> bool {
        // The C API names no CPUID-only discovery of this machine; if it
        // came, it would be this machine's discovery all the same.
        matches!(
            self,
            Source::Input(Input::ThisSystem | Input::CpuidThisSystem)
        )
    }
}

/// The discovery components hwloc 2.9 knows (its plugins included), by
/// the names `hwloc_topology_set_components` and `HWLOC_COMPONENTS` take.
pub(crate) const COMPONENT_NAMES: [&str; 15] = [
    "noos",
    "linux",
    "linuxio",
    "x86",
    "synthetic",
    "xml",
    "xml_nolibxml",
    "xml_libxml",
    "pci",
    "gl",
    "opencl",
    "cuda",
    "nvml",
    "rsmi",
    "levelzero",
];

/// Whether hwloc has its x86 backend here: it is built for x86 targets
/// only, so elsewhere the `x86` component is unknown and
/// `HWLOC_CPUID_PATH` is not read.
pub(crate) const X86_BACKEND: bool = cfg!(any(target_arch = "x86", target_arch = "x86_64"));

/// Where the environment sends a load whose source was not chosen, in
/// hwloc's order (fsroot, CPUID dump, synthetic, XML), after a launcher's
/// topology image.
pub(crate) fn source_from_env() -> Source {
    // A privileged process (setuid, capabilities) ignores wloc's and
    // hwloc's input variables: its caller may not choose its topology.
    if wloc_trust::env::secure_mode() {
        return Source::THIS_SYSTEM;
    }
    match wloc_input::resolve(None, None) {
        // hwloc's fsroot `/` is this system; its CPUID dumps are read by
        // the x86 backend, which only x86 builds have.
        Ok(Input::Fsroot(p)) if p.as_os_str() == "/" => Source::THIS_SYSTEM,
        Ok(Input::Cpuid(_)) if !X86_BACKEND => Source::THIS_SYSTEM,
        Ok(s) => Source::Input(s),
        Err(_) => Source::THIS_SYSTEM,
    }
}

/// The source when `HWLOC_COMPONENTS` chooses the components: an `xml=` or
/// `synthetic=` entry names its input; otherwise the machine, read by
/// the Linux and x86 components, which still honour `HWLOC_FSROOT` and
/// `HWLOC_CPUID_PATH` (as hwloc's do), while `HWLOC_XMLFILE` and
/// `HWLOC_SYNTHETIC` are ignored.
pub(crate) fn source_from_components() -> Source {
    if wloc_trust::env::secure_mode() {
        return Source::THIS_SYSTEM;
    }
    let list = wloc_trust::env::var("HWLOC_COMPONENTS").unwrap_or_default();
    for entry in list.split(',') {
        if let Some(p) = entry.strip_prefix("xml=").filter(|p| !p.is_empty()) {
            return Source::Input(Input::Xml(PathBuf::from(p)));
        }
        if let Some(d) = entry.strip_prefix("synthetic=").filter(|d| !d.is_empty()) {
            return Source::Input(Input::Synthetic(d.to_string()));
        }
    }
    let var = |n: &str| wloc_trust::env::var(n).filter(|v| !v.is_empty());
    match (var("HWLOC_FSROOT"), var("HWLOC_CPUID_PATH")) {
        (Some(f), _) if f != "/" => Source::Input(Input::Fsroot(PathBuf::from(f))),
        (_, Some(c)) if X86_BACKEND => Source::Input(Input::Cpuid(PathBuf::from(c))),
        _ => Source::THIS_SYSTEM,
    }
}
