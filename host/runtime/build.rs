//! Builds the guest components (`../../components`, a workspace of its
//! own) for `wasm32-wasip2` and leaves their `.wasm` files in `OUT_DIR`,
//! where `builtin.rs` embeds them.  The paths of the test-only hostile
//! components are given to the tests as `WLOC_HOSTILE*_WASM`.
//!
//! The nested cargo uses its own target directory (`$OUT_DIR/wasm-target`,
//! or `$WLOC_WASM_TARGET_DIR`) so it never waits on the outer build's lock,
//! and none of the outer build's flags or wrappers (clippy's included).

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.join("../..");
    let components = root.join("components");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    let target_dir = std::env::var_os("WLOC_WASM_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| out.join("wasm-target"));

    for p in [
        "components/Cargo.toml",
        "components/Cargo.lock",
        "components/guest",
        "components/synthetic",
        "components/linux-discovery",
        "components/x86-discovery",
        "probe/src",
        "probe/Cargo.toml",
        "components/linux/src",
        "components/linux/Cargo.toml",
        "components/hostile",
        "components/hostile-net",
        "components/hostile-v2",
        "wit",
        "no_std-core/src",
        "no_std-core/Cargo.toml",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(p).display());
    }
    println!("cargo:rerun-if-env-changed=WLOC_WASM_TARGET_DIR");

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args([
        "build",
        "--release",
        "--target",
        "wasm32-wasip2",
        "--manifest-path",
    ])
    .arg(components.join("Cargo.toml"))
    .env("CARGO_TARGET_DIR", &target_dir);
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_BUILD_TARGET",
        "RUSTC_WORKSPACE_WRAPPER",
        "CLIPPY_ARGS",
        "RUSTDOCFLAGS",
        "CARGO_ENCODED_RUSTDOCFLAGS",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run cargo to build the wloc components: {e}"));
    if !status.success() {
        panic!(
            "building the wloc components failed ({status}); they need the wasm32-wasip2 target: rustup target add wasm32-wasip2"
        );
    }
    let built = target_dir.join("wasm32-wasip2/release");
    for name in [
        "wloc_component_synthetic",
        "wloc_component_linux",
        "wloc_component_x86",
        "wloc_component_hostile",
        "wloc_component_hostile_net",
        "wloc_component_hostile_v2",
    ] {
        let from = built.join(format!("{name}.wasm"));
        let to = out.join(format!("{name}.wasm"));
        copy(&from, &to);
    }
    for (var, name) in [
        ("WLOC_HOSTILE_WASM", "wloc_component_hostile"),
        ("WLOC_HOSTILE_NET_WASM", "wloc_component_hostile_net"),
        ("WLOC_HOSTILE_V2_WASM", "wloc_component_hostile_v2"),
    ] {
        println!(
            "cargo:rustc-env={var}={}",
            out.join(format!("{name}.wasm")).display()
        );
    }
}

fn copy(from: &Path, to: &Path) {
    std::fs::copy(from, to)
        .unwrap_or_else(|e| panic!("cannot copy {} to {}: {e}", from.display(), to.display()));
}
