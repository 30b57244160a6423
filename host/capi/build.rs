//! Gives the shared library hwloc 2.x's soname, so that programs linked
//! with `-lhwloc` against it (or against hwloc) record `libhwloc.so.15`.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhwloc.so.15");
}
