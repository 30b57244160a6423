//! Builds the guest components (`../../components`, a workspace of its
//! own) for `wasm32-wasip2` and leaves their `.wasm` files in `OUT_DIR`,
//! where `builtin.rs` embeds them.  The paths of the test-only hostile
//! components are given to the tests as `WLOC_HOSTILE*_WASM`, and every
//! folder of `components/hostile/` with a `manifest.toml` becomes
//! `$OUT_DIR/test-components/hostile-NAME.wasm` (`WLOC_TEST_COMPONENTS_DIR`).
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

    // What to rebuild on is read from the dependency files the last
    // build of the components wrote (every source file of every guest, the
    // core and the probe included), plus every manifest, the hostile
    // components' folder (a new one, its `manifest.toml`) and the WIT
    // files; on the first build there are none, and it runs anyway.
    println!(
        "cargo:rerun-if-changed={}",
        components.join("Cargo.toml").display()
    );
    println!(
        "cargo:rerun-if-changed={}",
        components.join("Cargo.lock").display()
    );
    println!("cargo:rerun-if-changed={}", root.join("wit").display());
    println!(
        "cargo:rerun-if-changed={}",
        components.join("hostile").display()
    );
    if let Ok(entries) = std::fs::read_dir(&components) {
        for e in entries.flatten() {
            let m = e.path().join("Cargo.toml");
            if m.is_file() {
                println!("cargo:rerun-if-changed={}", m.display());
            }
        }
    }
    println!("cargo:rerun-if-env-changed=WLOC_WASM_TARGET_DIR");
    ensure_wasm_target();

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
    // 128-bit SIMD (on in every wasmtime engine wloc configures) lets
    // memchr scan a component's large inputs, such as pci.ids, 16 bytes
    // at a time.
    cmd.env("CARGO_ENCODED_RUSTFLAGS", "-Ctarget-feature=+simd128");
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run cargo to build the wloc components: {e}"));
    if !status.success() {
        fail(&format!(
            "building the wloc components (components/, for wasm32-wasip2) failed ({status}); see the errors above"
        ));
    }
    let built = target_dir.join("wasm32-wasip2/release");
    watch_dependency_files(&built, &root);
    // The components the tests load as built, without manifests.
    for (var, name) in [
        ("WLOC_HOSTILE_WASM", "wloc_component_hostile"),
        ("WLOC_HOSTILE_NET_WASM", "wloc_component_hostile_net"),
        ("WLOC_HOSTILE_V2_WASM", "wloc_component_hostile_v2"),
        ("WLOC_EXAMPLE_VENDOR_WASM", "wloc_component_example_vendor"),
    ] {
        let to = out.join(format!("{name}.wasm"));
        copy(&built.join(format!("{name}.wasm")), &to);
        println!("cargo:rustc-env={var}={}", to.display());
    }
    embed_manifests(&built, &out, &test_manifests(&components.join("hostile")));
    precompile_builtins(&out);
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
        "files = [\"/sys\", \"/proc\", \"/run/udev/data\", \"/dev/cpuset\", \"/var/run/hwloc\", \"mounts:cgroup2,cgroup,cpuset\"]\ncpuid = true\nconfig = [\"*\"]",
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
        "DMI infos of the root",
        "files = [\"/sys/class/dmi\", \"/sys/devices/virtual/dmi\"]\nconfig = [\"*\"]",
    ),
    (
        "wloc_component_annotate_sensors",
        "annotate-sensors",
        "annotation",
        "hwmon, thermal, cpufreq, RAPL, CPU load, NUMA memory use and EDAC readings",
        "files = [\"/sys/class/hwmon\", \"/sys/class/thermal\", \"/sys/class/powercap\", \"/sys/devices\", \"/proc/stat\"]\nconfig = [\"*\"]",
    ),
    (
        "wloc_component_annotate_pci_names",
        "annotate-pci-names",
        "annotation",
        "PCI vendor and device names from pci.ids",
        "files = [\"/usr/share/misc/pci.ids\", \"/usr/share/hwdata/pci.ids\"]\nconfig = [\"*\"]",
    ),
    (
        "wloc_component_ib_fabric",
        "ib-fabric",
        "fabric",
        "InfiniBand fabrics from ibnetdiscover and ibroute output",
        // Fabric files may be anywhere an admin keeps them, so the
        // request is `/`; it is never granted as such: each run's grant is
        // exactly the files the command hands the reader (those the user
        // names, and those found inside the folder the user names).
        "files = [\"/\"]\nconfig = [\"files\"]",
    ),
];

/// The hostile test components and the capabilities their manifests ask
/// for, by name: each folder `components/hostile/NAME` that holds a
/// `manifest.toml` (crate `wloc-component-hostile-NAME`).  That file is
/// the manifest's `[capabilities]` table; the rest of the manifest (name
/// `hostile-NAME`, version, kind, description) is written here.  The
/// folders without one (the shared kit, the multi-mode component) are not
/// test components of their own.
fn test_manifests(hostile: &Path) -> Vec<(String, (String, String))> {
    let entries = std::fs::read_dir(hostile)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", hostile.display()));
    let mut found = Vec::new();
    for e in entries.flatten() {
        let file = e.path().join("manifest.toml");
        if !file.is_file() {
            continue;
        }
        let name = e.file_name().to_string_lossy().into_owned();
        let text = String::from_utf8(read(&file))
            .unwrap_or_else(|_| fail(&format!("{} is not UTF-8", file.display())));
        found.push((name, capabilities(&file, &text)));
    }
    found.sort();
    found
}

/// The kind (`discovery` unless a first line `kind = "..."` says
/// otherwise) and the lines of the `[capabilities]` table a hostile
/// component's `manifest.toml` holds, comments and blank lines left out;
/// anything else in the file stops the build.
fn capabilities(file: &Path, text: &str) -> (String, String) {
    let mut lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .peekable();
    let mut kind = "discovery".to_string();
    if let Some(k) = lines.peek().and_then(|l| l.strip_prefix("kind = ")) {
        kind = k.trim_matches('"').to_string();
        lines.next();
    }
    if lines.next() != Some("[capabilities]") {
        fail(&format!(
            "{} must hold the manifest's [capabilities] table and nothing else (the build writes the rest)",
            file.display()
        ));
    }
    let caps: Vec<&str> = lines.collect();
    if caps.iter().any(|l| l.starts_with('[')) {
        fail(&format!(
            "{}: only the [capabilities] table is read; move other tables out",
            file.display()
        ));
    }
    (kind, caps.join("\n"))
}

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
fn embed_manifests(built: &Path, out: &Path, tests: &[(String, (String, String))]) {
    for (file, name, kind, description, caps) in BUILTIN_MANIFESTS {
        let wasm = read(&built.join(format!("{file}.wasm")));
        let bytes = with_manifest(&wasm, &manifest_text(name, kind, description, caps));
        write(&out.join(format!("{file}.wasm")), &bytes);
    }
    let dir = out.join("test-components");
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    for (name, (kind, caps)) in tests {
        let file = format!("wloc_component_hostile_{}", name.replace('-', "_"));
        let path = built.join(format!("{file}.wasm"));
        if !path.is_file() {
            fail(&format!(
                "components/hostile/{name} has a manifest.toml but built no {file}.wasm: its crate must be named wloc-component-hostile-{name}"
            ));
        }
        let wasm = read(&path);
        let full = format!("hostile-{name}");
        let text = manifest_text(&full, kind, "a hostile test component", caps);
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

/// Stops the build with a message for people, not a panic's backtrace.
fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1)
}

/// The guest components are built for `wasm32-wasip2`.  rustup installs a
/// `rust-toolchain.toml`'s targets only when it installs the toolchain, so
/// a machine that already had the pinned Rust lacks it: add it here, with
/// rustup, for the toolchain this build runs on.
fn ensure_wasm_target() {
    const TARGET: &str = "wasm32-wasip2";
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if sysroot.is_some_and(|s| s.join("lib/rustlib").join(TARGET).is_dir()) {
        return;
    }
    println!(
        "cargo:warning=installing the {TARGET} target with rustup (the guest components are built for it)"
    );
    let status = Command::new("rustup")
        .args(["target", "add", TARGET])
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => fail(&format!(
            "`rustup target add {TARGET}` failed ({s}); wloc's components are built for it. \
             Run it yourself (it needs the network), then build again"
        )),
        Err(e) => fail(&format!(
            "the {TARGET} target is missing and rustup cannot be run ({e}); \
             install that target for your Rust toolchain, then build again"
        )),
    }
}

/// Asks cargo to run this script again when any file the components were
/// built from changes, as their dependency files (`*.d`) list them.
fn watch_dependency_files(built: &Path, root: &Path) {
    let Ok(root) = root.canonicalize() else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(built) else {
        return;
    };
    let mut seen = std::collections::BTreeSet::new();
    for e in entries.flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "d") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        // `target: dep dep ...`, spaces in names escaped with `\`.
        let Some((_, deps)) = text.split_once(": ") else {
            continue;
        };
        let deps = deps.replace("\\ ", "\0");
        for d in deps.split_whitespace() {
            let d = PathBuf::from(d.replace('\0', " "));
            if d.starts_with(&root) && seen.insert(d.clone()) {
                println!("cargo:rerun-if-changed={}", d.display());
            }
        }
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
