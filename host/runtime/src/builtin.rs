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
