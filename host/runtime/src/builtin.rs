//! Components built into wloc, embedded at build time (see `build.rs`):
//! their bytes (with manifests), their sha256 digests and their code
//! precompiled for the build host.

/// A component built into wloc.
#[derive(Debug)]
pub struct Builtin {
    /// Its name (the one its manifest gives).
    pub name: &'static str,
    /// Its bytes, manifest included: what the policy judges.
    pub wasm: &'static [u8],
    /// The sha256 digest of `wasm`, in hexadecimal, computed at build time.
    pub digest: &'static str,
    /// `wasm` compiled at build time with the runtime's engine settings,
    /// or empty when the build could not (a cross build).  The runtime
    /// falls back on compiling when wasmtime refuses these bytes (another
    /// CPU, another engine configuration).
    pub precompiled: &'static [u8],
    /// The read-only roots it is granted by default.
    pub roots: &'static [&'static str],
}

/// Alignment of the embedded precompiled code: a page, so that its text
/// section (page-aligned inside the artifact) can be made executable
/// where it lies instead of being copied (see [`crate::code_memory`]).
pub const PRECOMPILED_ALIGN: usize = 4096;

/// Bytes aligned to [`PRECOMPILED_ALIGN`].
#[repr(C, align(4096))]
struct PageAligned<T: ?Sized>(T);

/// The bytes, digest and precompiled code of the component `$file` built
/// by `build.rs`.
macro_rules! builtin {
    ($name:expr_2021, $file:literal, $roots:expr_2021) => {{
        const CODE_LEN: usize =
            include_bytes!(concat!(env!("OUT_DIR"), "/", $file, ".cwasm")).len();
        static CODE: PageAligned<[u8; CODE_LEN]> = PageAligned(*include_bytes!(concat!(
            env!("OUT_DIR"),
            "/",
            $file,
            ".cwasm"
        )));
        Builtin {
            name: $name,
            wasm: include_bytes!(concat!(env!("OUT_DIR"), "/", $file, ".wasm")),
            digest: include_str!(concat!(env!("OUT_DIR"), "/", $file, ".sha256")),
            precompiled: &CODE.0,
            roots: $roots,
        }
    }};
}

/// The synthetic discovery component: hwloc's synthetic description
/// language (setting `description`), compiled to WebAssembly.
pub const SYNTHETIC_NAME: &str = "synthetic";

/// The built-in synthetic discovery component.
pub static SYNTHETIC: Builtin = builtin!(SYNTHETIC_NAME, "wloc_component_synthetic", &[]);

/// The bytes of the synthetic discovery component.
pub fn synthetic_wasm() -> &'static [u8] {
    SYNTHETIC.wasm
}

/// The Linux discovery component: `/sys` and `/proc` through the host's
/// batched, read-only file grants.
pub const LINUX_NAME: &str = "linux";

/// The roots the Linux discovery component is granted (read-only): the
/// kernel's trees, and the cgroup and cpuset hierarchies wherever the
/// mount table mounts them, as hwloc finds them.
pub const LINUX_ROOTS: &[&str] = &[
    "/sys",
    "/proc",
    "/run/udev/data",
    "/dev/cpuset",
    "/var/run/hwloc",
    "mounts:cgroup2,cgroup,cpuset",
];

/// The built-in Linux discovery component.
pub static LINUX: Builtin = builtin!(LINUX_NAME, "wloc_component_linux", LINUX_ROOTS);

/// The bytes of the Linux discovery component.
pub fn linux_wasm() -> &'static [u8] {
    LINUX.wasm
}

/// The x86 discovery component: CPUID of every PU through the `cpuid`
/// import, and the ACPI NUMA tables when granted.
pub const X86_NAME: &str = "x86";

/// The roots the x86 discovery component may be granted (read-only).
pub const X86_ROOTS: &[&str] = &["/sys/firmware/acpi/tables"];

/// The built-in x86 discovery component.
pub static X86: Builtin = builtin!(X86_NAME, "wloc_component_x86", X86_ROOTS);

/// The bytes of the x86 discovery component.
pub fn x86_wasm() -> &'static [u8] {
    X86.wasm
}

/// The annotation component for the machine's identity: DMI infos of
/// the root.
pub const ANNOTATE_DMI_NAME: &str = "annotate-dmi";

/// The roots the DMI annotation component is granted (read-only): the
/// class folder and the one its entry links to.
pub const ANNOTATE_DMI_ROOTS: &[&str] = &["/sys/class/dmi", "/sys/devices/virtual/dmi"];

/// The built-in DMI annotation component.
pub static ANNOTATE_DMI: Builtin = builtin!(
    ANNOTATE_DMI_NAME,
    "wloc_component_annotate_dmi",
    ANNOTATE_DMI_ROOTS
);

/// The bytes of the DMI annotation component.
pub fn annotate_dmi_wasm() -> &'static [u8] {
    ANNOTATE_DMI.wasm
}

/// The annotation component for dynamic properties: hwmon, thermal
/// zones, cpufreq, RAPL power, PU utilisation, NUMA node memory use and
/// EDAC error counts.
pub const ANNOTATE_SENSORS_NAME: &str = "annotate-sensors";

/// The roots the sensors component is granted (read-only).
/// `/sys/devices` holds what the class folders link to, the CPUs'
/// cpufreq, the NUMA nodes' `meminfo` and EDAC; `/proc/stat` is the one
/// file of `/proc` it reads (machine-wide CPU times, which the privacy
/// rule serves).
pub const ANNOTATE_SENSORS_ROOTS: &[&str] = &[
    "/sys/class/hwmon",
    "/sys/class/thermal",
    "/sys/class/powercap",
    "/sys/devices",
    "/proc/stat",
];

/// The built-in sensors annotation component.
pub static ANNOTATE_SENSORS: Builtin = builtin!(
    ANNOTATE_SENSORS_NAME,
    "wloc_component_annotate_sensors",
    ANNOTATE_SENSORS_ROOTS
);

/// The bytes of the sensors annotation component.
pub fn annotate_sensors_wasm() -> &'static [u8] {
    ANNOTATE_SENSORS.wasm
}

/// The annotation component naming PCI vendors and devices (`PCIVendor`
/// and `PCIDevice` infos) from the system's PCI ID database.
pub const ANNOTATE_PCI_NAMES_NAME: &str = "annotate-pci-names";

/// The files the PCI names component is granted (read-only): Debian's
/// `pci.ids` package and `hwdata`'s copy.
pub const ANNOTATE_PCI_NAMES_ROOTS: &[&str] =
    &["/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids"];

/// The built-in PCI names annotation component.
pub static ANNOTATE_PCI_NAMES: Builtin = builtin!(
    ANNOTATE_PCI_NAMES_NAME,
    "wloc_component_annotate_pci_names",
    ANNOTATE_PCI_NAMES_ROOTS
);

/// The bytes of the PCI names annotation component.
pub fn annotate_pci_names_wasm() -> &'static [u8] {
    ANNOTATE_PCI_NAMES.wasm
}

/// The InfiniBand fabric reader: ibnetdiscover ports reports and
/// topology files, ibroute forwarding tables.  It is granted no file by
/// default: each run gets the files the admin names.
pub const IB_FABRIC_NAME: &str = "ib-fabric";

/// The built-in InfiniBand fabric reader.
pub static IB_FABRIC: Builtin = builtin!(IB_FABRIC_NAME, "wloc_component_ib_fabric", &[]);

/// Every built-in component, discovery ones first.
pub static ALL: [&Builtin; 7] = [
    &SYNTHETIC,
    &LINUX,
    &X86,
    &ANNOTATE_DMI,
    &ANNOTATE_SENSORS,
    &ANNOTATE_PCI_NAMES,
    &IB_FABRIC,
];

/// Whether `bytes` is the precompiled code of a built-in component, which
/// lives as long as the process and is never written.
pub fn is_embedded_code(bytes: &[u8]) -> bool {
    !bytes.is_empty()
        && ALL.iter().any(|b| {
            std::ptr::eq(b.precompiled.as_ptr(), bytes.as_ptr())
                && b.precompiled.len() == bytes.len()
        })
}

/// Whether `ptr..ptr+len` overlaps the precompiled code of a built-in
/// component.
pub(crate) fn overlaps_embedded_code(ptr: *const u8, len: usize) -> bool {
    let (start, end) = (ptr as usize, (ptr as usize).saturating_add(len));
    ALL.iter().any(|b| {
        let s = b.precompiled.as_ptr() as usize;
        s < end && start < s + b.precompiled.len()
    })
}

/// The built-in component of that name.
pub fn by_name(name: &str) -> Option<&'static Builtin> {
    ALL.iter().copied().find(|b| b.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precompiled_code_is_page_aligned() {
        for b in ALL {
            assert_eq!(
                b.precompiled.as_ptr() as usize % PRECOMPILED_ALIGN,
                0,
                "{}",
                b.name
            );
            assert!(
                is_embedded_code(b.precompiled) || b.precompiled.is_empty(),
                "{}",
                b.name
            );
            assert!(overlaps_embedded_code(b.precompiled.as_ptr(), 1) || b.precompiled.is_empty());
        }
        assert!(!is_embedded_code(&[1, 2, 3]));
        assert!(!is_embedded_code(
            &LINUX.precompiled[..LINUX.precompiled.len() / 2]
        ));
    }

    #[test]
    fn digests_are_those_of_the_embedded_bytes() {
        for b in ALL {
            assert_eq!(
                b.digest,
                wloc_trust::signing::component_digest(b.wasm),
                "{}",
                b.name
            );
        }
    }

    #[test]
    fn precompiled_code_loads_in_the_runtime_engine() {
        if env!("WLOC_BUILTINS_PRECOMPILED") == "0" {
            // A cross build, or one with WLOC_NO_PRECOMPILE: nothing to load.
            return;
        }
        let engine = wasmtime::Engine::new(&crate::engine_config::engine_config()).unwrap();
        for b in ALL {
            assert!(!b.precompiled.is_empty(), "{} was not precompiled", b.name);
            // SAFETY: produced by the build script from `b.wasm` with
            // the same engine settings.
            unsafe { wasmtime::component::Component::deserialize(&engine, b.precompiled) }
                .unwrap_or_else(|e| panic!("{}: {e:#}", b.name));
        }
    }
}
