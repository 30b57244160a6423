//! Where `hwloc_topology_load` reads from: the source a program chose
//! (`hwloc_topology_set_xml` and friends), else the environment's
//! (`HWLOC_XMLFILE`, `HWLOC_SYNTHETIC`, ..., `HWLOC_COMPONENTS`), else this
//! system.

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
