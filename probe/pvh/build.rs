//! Links the unikernel at 1 MiB with `layout.ld` (which keeps the PVH
//! ELF note in a PT_NOTE segment QEMU looks for), as a fixed-address
//! executable: QEMU loads it where it was linked and applies no
//! relocations, so it must not be position independent.
//!
//! The script is copied into `OUT_DIR` and linked from there: a target
//! folder shared by checkouts in other places keeps this script's output
//! without running it again, and a path into one checkout would then name
//! a file another checkout does not have.

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let script = std::path::Path::new(&out).join("layout.ld");
    std::fs::copy(format!("{dir}/layout.ld"), &script).expect("copying layout.ld into OUT_DIR");
    println!("cargo:rerun-if-changed=layout.ld");
    println!("cargo:rustc-link-arg-bins=-T{}", script.display());
    println!("cargo:rustc-link-arg-bins=--no-pie");
}
