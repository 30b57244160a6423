//! The environment variables through which a test's own environment
//! would choose the topology a program loads (hwloc's and wloc's); tests
//! clear them so that a program discovers this machine unless the test
//! names another source itself.  Shared by the end-to-end tests and the
//! C library's (`host/capi/tests/support.rs`).

/// The variables that name a topology source.
pub const TOPOLOGY_ENV: &[&str] = &[
    "HWLOC_XMLFILE",
    "HWLOC_SYNTHETIC",
    "HWLOC_FSROOT",
    "HWLOC_COMPONENTS",
    "HWLOC_THISSYSTEM",
    "WLOC_IMAGE",
];
