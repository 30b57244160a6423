//! Components built into wloc, embedded at build time (see `build.rs`).

/// The synthetic discovery component: hwloc's synthetic description
/// language (setting `description`), compiled to WebAssembly.
pub const SYNTHETIC_NAME: &str = "synthetic";

/// The bytes of the synthetic discovery component.
pub fn synthetic_wasm() -> &'static [u8] {
    include_bytes!(concat!(env!("OUT_DIR"), "/wloc_component_synthetic.wasm"))
}

/// The Linux discovery component: `/sys` and `/proc` through the host's
/// batched, read-only file grants.
pub const LINUX_NAME: &str = "linux";

/// The roots the Linux discovery component is granted (read-only).
pub const LINUX_ROOTS: &[&str] = &["/sys", "/proc", "/run/udev/data", "/dev/cpuset"];

/// The x86 discovery component: CPUID of every PU through the `cpuid`
/// import, and the ACPI NUMA tables when granted.
pub const X86_NAME: &str = "x86";

/// The roots the x86 discovery component may be granted (read-only).
pub const X86_ROOTS: &[&str] = &["/sys/firmware/acpi/tables"];

/// The bytes of the x86 discovery component.
pub fn x86_wasm() -> &'static [u8] {
    include_bytes!(concat!(env!("OUT_DIR"), "/wloc_component_x86.wasm"))
}

/// The bytes of the Linux discovery component.
pub fn linux_wasm() -> &'static [u8] {
    include_bytes!(concat!(env!("OUT_DIR"), "/wloc_component_linux.wasm"))
}

/// The annotation component for the machine's identity and sensors: DMI
/// infos of the root, and hwmon, thermal and cpufreq readings as dynamic
/// properties.
pub const ANNOTATE_DMI_NAME: &str = "annotate-dmi";

/// The roots the DMI and sensors annotation component is granted
/// (read-only).  `/sys/devices` holds what the class folders link to.
pub const ANNOTATE_DMI_ROOTS: &[&str] = &[
    "/sys/class/dmi",
    "/sys/class/hwmon",
    "/sys/class/thermal",
    "/sys/devices",
];

/// The bytes of the DMI and sensors annotation component.
pub fn annotate_dmi_wasm() -> &'static [u8] {
    include_bytes!(concat!(
        env!("OUT_DIR"),
        "/wloc_component_annotate_dmi.wasm"
    ))
}

/// The annotation component naming PCI vendors and devices (`PCIVendor`
/// and `PCIDevice` infos) from the system's PCI ID database.
pub const ANNOTATE_PCI_NAMES_NAME: &str = "annotate-pci-names";

/// The files the PCI names component is granted (read-only): Debian's
/// `pci.ids` package and `hwdata`'s copy.
pub const ANNOTATE_PCI_NAMES_ROOTS: &[&str] =
    &["/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids"];

/// The bytes of the PCI names annotation component.
pub fn annotate_pci_names_wasm() -> &'static [u8] {
    include_bytes!(concat!(
        env!("OUT_DIR"),
        "/wloc_component_annotate_pci_names.wasm"
    ))
}
