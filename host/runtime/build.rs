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

#[path = "src/engine_config.rs"]
mod engine_config;

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
        "components/annotate-dmi",
        "components/annotate-pci-names",
        "components/example-vendor",
        "components/hostile",
        "components/hostile-net",
        "components/hostile-v2",
        "components/hostile-kit",
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
        "wloc_component_annotate_dmi",
        "wloc_component_annotate_pci_names",
        "wloc_component_example_vendor",
        "wloc_component_hostile",
        "wloc_component_hostile_net",
        "wloc_component_hostile_v2",
    ] {
        let from = built.join(format!("{name}.wasm"));
        let to = out.join(format!("{name}.wasm"));
        copy(&from, &to);
    }
    // The built-in copies get their manifests (the copies above of the
    // others stay as built).
    embed_manifests(&built, &out);
    precompile_builtins(&out);
    for (var, name) in [
        ("WLOC_HOSTILE_WASM", "wloc_component_hostile"),
        ("WLOC_HOSTILE_NET_WASM", "wloc_component_hostile_net"),
        ("WLOC_HOSTILE_V2_WASM", "wloc_component_hostile_v2"),
        ("WLOC_EXAMPLE_VENDOR_WASM", "wloc_component_example_vendor"),
    ] {
        println!(
            "cargo:rustc-env={var}={}",
            out.join(format!("{name}.wasm")).display()
        );
    }
}

/// The manifests of the built-in components (`wloc:manifest` sections),
/// by file name: name, kind, description and requested capabilities.
const BUILTIN_MANIFESTS: &[(&str, &str, &str, &str, &str)] = &[
    (
        "wloc_component_synthetic",
        "synthetic",
        "discovery",
        "hwloc's synthetic description language",
        "config = [\"description\"]",
    ),
    (
        "wloc_component_linux",
        "linux",
        "discovery",
        "Linux discovery from /sys and /proc",
        "files = [\"/sys\", \"/proc\", \"/run/udev/data\", \"/dev/cpuset\"]\ncpuid = true\nconfig = [\"*\"]",
    ),
    (
        "wloc_component_x86",
        "x86",
        "discovery",
        "x86 discovery from CPUID and the ACPI NUMA tables",
        "files = [\"/sys/firmware/acpi/tables\"]\ncpuid = true\nconfig = [\"*\"]",
    ),
    (
        "wloc_component_annotate_dmi",
        "annotate-dmi",
        "annotation",
        "DMI infos and hwmon, thermal and cpufreq readings",
        "files = [\"/sys/class/dmi\", \"/sys/class/hwmon\", \"/sys/class/thermal\", \"/sys/devices\"]\nconfig = [\"*\"]",
    ),
    (
        "wloc_component_annotate_pci_names",
        "annotate-pci-names",
        "annotation",
        "PCI vendor and device names from pci.ids",
        "files = [\"/usr/share/misc/pci.ids\", \"/usr/share/hwdata/pci.ids\"]\nconfig = [\"*\"]",
    ),
];

/// The hostile test components (crate `components/hostile-NAME`) and the
/// capabilities their manifests ask for; they land in
/// `$OUT_DIR/test-components/hostile-NAME.wasm` (`WLOC_TEST_COMPONENTS_DIR`).
const TEST_MANIFESTS: &[(&str, &str)] = &[
    ("read-dotdot", "files = [\"/sys\"]"),
    // Asks for everything; the tests' policy grants /sys only.
    ("read-absolute", "files = [\"/\"]"),
    ("read-symlink", "files = [\"/sys\"]"),
    ("read-environ", "files = [\"/sys\", \"/proc/self/environ\"]"),
    ("write", ""),
    ("socket", ""),
    ("spin", ""),
    ("alloc", ""),
    ("huge", ""),
    ("bad-cpuset", ""),
    ("bad-index", ""),
    ("cycle", ""),
    ("duplicate-ids", ""),
    ("panic", ""),
    // Imports cpuid without asking for it.
    ("cpuid", ""),
    ("exit", ""),
    ("escape-codes", ""),
    // Speaks wloc:backend@0.2.0.
    ("v2", ""),
    ("net", ""),
];

fn manifest_text(name: &str, kind: &str, description: &str, caps: &str) -> String {
    format!(
        "name = \"{name}\"\nversion = \"{}\"\nkind = \"{kind}\"\ndescription = \"{description}\"\n\n[capabilities]\n{caps}\n",
        std::env::var("CARGO_PKG_VERSION").unwrap_or_default()
    )
}

/// Appends a `wloc:manifest` custom section to a component.
fn with_manifest(wasm: &[u8], text: &str) -> Vec<u8> {
    use wasm_encoder::Section;
    let mut out = wasm.to_vec();
    wasm_encoder::CustomSection {
        name: "wloc:manifest".into(),
        data: text.as_bytes().into(),
    }
    .append_to(&mut out);
    out
}

/// Writes the built-in components with their manifests into `out`, and
/// the test components into `out/test-components`.
fn embed_manifests(built: &Path, out: &Path) {
    for (file, name, kind, description, caps) in BUILTIN_MANIFESTS {
        let wasm = read(&built.join(format!("{file}.wasm")));
        let bytes = with_manifest(&wasm, &manifest_text(name, kind, description, caps));
        write(&out.join(format!("{file}.wasm")), &bytes);
    }
    let dir = out.join("test-components");
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    for (name, caps) in TEST_MANIFESTS {
        let file = format!("wloc_component_hostile_{}", name.replace('-', "_"));
        let wasm = read(&built.join(format!("{file}.wasm")));
        let full = format!("hostile-{name}");
        let text = manifest_text(&full, "discovery", "a hostile test component", caps);
        write(
            &dir.join(format!("{full}.wasm")),
            &with_manifest(&wasm, &text),
        );
    }
    println!("cargo:rustc-env=WLOC_TEST_COMPONENTS_DIR={}", dir.display());
}

/// Records the sha256 digest of each built-in component (with its
/// manifest) as `NAME.sha256`, and its code compiled for this host with the
/// runtime's engine settings as `NAME.cwasm`, so that wloc neither hashes
/// nor compiles its own components when it runs.  A cross build, or a
/// host Cranelift cannot compile for, gets empty `.cwasm` files: the
/// runtime then compiles them on first use and caches them.
fn precompile_builtins(out: &Path) {
    use sha2::{Digest, Sha256};
    println!("cargo:rerun-if-env-changed=WLOC_NO_PRECOMPILE");
    let native = std::env::var("TARGET").ok() == std::env::var("HOST").ok()
        && std::env::var_os("WLOC_NO_PRECOMPILE").is_none();
    let engine = native
        .then(|| wasmtime::Engine::new(&engine_config::engine_config()).ok())
        .flatten();
    // Tells the tests whether precompiled code is to be expected.
    println!(
        "cargo:rustc-env=WLOC_BUILTINS_PRECOMPILED={}",
        u8::from(engine.is_some())
    );
    for (file, ..) in BUILTIN_MANIFESTS {
        let wasm = read(&out.join(format!("{file}.wasm")));
        let digest: String = Sha256::digest(&wasm)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        write(&out.join(format!("{file}.sha256")), digest.as_bytes());
        let code = engine
            .as_ref()
            .and_then(|e| match e.precompile_component(&wasm) {
                Ok(code) => Some(code),
                Err(err) => {
                    println!("cargo:warning=cannot precompile {file}: {err}");
                    None
                }
            })
            .unwrap_or_default();
        write(&out.join(format!("{file}.cwasm")), &code);
    }
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
}

fn write(p: &Path, bytes: &[u8]) {
    std::fs::write(p, bytes).unwrap_or_else(|e| panic!("cannot write {}: {e}", p.display()))
}

fn copy(from: &Path, to: &Path) {
    std::fs::copy(from, to)
        .unwrap_or_else(|e| panic!("cannot copy {} to {}: {e}", from.display(), to.display()));
}
