//! The engine settings that compiled code depends on.  The runtime and the
//! build script that precompiles the built-in components both take them
//! from here (the build script includes this file), so the precompiled
//! artifacts fit the runtime's engine; wasmtime refuses any that do not.

/// The wasmtime configuration of every [`crate::Runtime`]: the component
/// model, epoch interruption (deadlines), fuel metering, optimised
/// Cranelift code, memories initialised without a memfd.
pub fn engine_config() -> wasmtime::Config {
    let mut config = wasmtime::Config::new();
    config.wasm_component_model(true);
    config.epoch_interruption(true);
    config.consume_fuel(true);
    config.cranelift_opt_level(wasmtime::OptLevel::Speed);
    config.parallel_compilation(true);
    // Linear memories are initialised by copying, not from a memfd image:
    // writing the image is a file write, so under a file-size limit
    // (`ulimit -f`, RLIMIT_FSIZE) it killed the whole process with
    // SIGXFSZ before any component ran. The copy costs microseconds for
    // the few instances a command makes.
    config.memory_init_cow(false);
    config
}
