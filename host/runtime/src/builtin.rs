//! Components built into wloc, embedded at build time (see `build.rs`).

/// The synthetic discovery component: hwloc's synthetic description
/// language (setting `description`), compiled to WebAssembly.
pub const SYNTHETIC_NAME: &str = "synthetic";

/// The bytes of the synthetic discovery component.
pub fn synthetic_wasm() -> &'static [u8] {
    include_bytes!(concat!(env!("OUT_DIR"), "/wloc_component_synthetic.wasm"))
}
