//! The engine settings that compiled code depends on.  The runtime and the
//! build script that precompiles the built-in components both take them
//! from here (the build script includes this file), so the precompiled
//! artifacts fit the runtime's engine; wasmtime refuses any that do not.

/// The wasmtime configuration of every [`crate::Runtime`]: the component
/// model, epoch interruption (deadlines), fuel metering and optimised
/// Cranelift code.
pub fn engine_config() -> wasmtime::Config {
    let mut config = wasmtime::Config::new();
    config.wasm_component_model(true);
    config.epoch_interruption(true);
    config.consume_fuel(true);
    config.cranelift_opt_level(wasmtime::OptLevel::Speed);
    config.parallel_compilation(true);
    config
}
