//! Links the unikernel at 1 MiB with `layout.ld` (which keeps the PVH
//! ELF note in a PT_NOTE segment QEMU looks for), as a fixed-address
//! executable: QEMU loads it where it was linked and applies no
//! relocations, so it must not be position independent.

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo:rerun-if-changed=layout.ld");
    println!("cargo:rustc-link-arg-bins=-T{dir}/layout.ld");
    println!("cargo:rustc-link-arg-bins=--no-pie");
}
