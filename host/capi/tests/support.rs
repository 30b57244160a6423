//! What the C library's tests share: the library cargo built, installed
//! under hwloc's soname in a private folder, and the packages the C side
//! needs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use wloc_core::topology::TypeFilter;

#[path = "../../../tests/common/packages.rs"]
mod packages;

#[path = "../../../tests/common/hwloc_reference.rs"]
mod hwloc_reference;

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The shared library cargo built with this test (`libhwloc.so`).
pub fn built_library() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("deps folder");
    [deps.join("libhwloc.so"), deps.join("../libhwloc.so")]
        .into_iter()
        .find(|p| p.is_file())
        .expect("libhwloc.so next to the test binary (cargo builds the cdylib with the tests)")
}

/// A private folder holding the library as `libhwloc.so.15` (what
/// programs linked with hwloc load) and `libwloc.so`.
pub fn library_dir(tag: &str) -> PathBuf {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("capi-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("library folder");
    let lib = built_library();
    for name in ["libhwloc.so.15", "libwloc.so"] {
        std::os::unix::fs::symlink(&lib, dir.join(name)).expect("library link");
    }
    dir
}

/// Debian packages a test needs, each named with a file it ships.
pub fn require(packages: &[(&str, &str)]) {
    if let Err(e) = packages::require_packages(packages) {
        panic!("{e}");
    }
}

/// What building hwloc 2.14.0 from its source takes.
pub fn require_hwloc_source_build() {
    require(packages::HWLOC_SOURCE_BUILD);
}

/// gcc, hwloc 2.9's headers (the ABI the library implements), libnuma's
/// (one test uses libnuma's helpers) and Debian's libhwloc (the oracle).
pub fn require_c_toolchain() {
    if let Err(e) = packages::require_packages(&[
        ("/usr/bin/gcc", "gcc"),
        ("/usr/include/hwloc.h", "libhwloc-dev"),
        ("/usr/include/numa.h", "libnuma-dev"),
        ("/usr/bin/lstopo-no-graphics", "hwloc"),
    ]) {
        panic!("{e}");
    }
}

/// Runs a compiler command (`gcc ARGS`); a compile that fails fails the
/// test with the command and the compiler's messages.
pub fn compile(c: &mut Command) {
    let o = c
        .output()
        .unwrap_or_else(|e| panic!("{:?}: {e}", c.get_program()));
    assert!(
        o.status.success(),
        "{c:?} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[path = "../../../tests/common/topology_env.rs"]
mod topology_env;
pub use topology_env::TOPOLOGY_ENV;

/// Clears [`TOPOLOGY_ENV`] from `c`.
pub fn clear_topology_env(c: &mut Command) -> &mut Command {
    for v in TOPOLOGY_ENV {
        c.env_remove(v);
    }
    c
}

/// Points `c` at wloc's library in `lib` (`LD_LIBRARY_PATH`), or at the
/// reference when `None`: hwloc 2.14.0's own library ([`reference_library`]),
/// which the library follows where hwloc 2.9 (Debian's) behaves otherwise.
/// Debian's unmodified 2.9 programs run on either.
pub fn use_library<'c>(c: &'c mut Command, lib: Option<&Path>) -> &'c mut Command {
    match lib {
        Some(l) => c.env("LD_LIBRARY_PATH", l),
        None => c.env("LD_LIBRARY_PATH", reference_library()),
    }
}

/// The folder where hwloc 2.14.0 is built from `tests/data/hwloc-2.14`
/// (once per target folder), shared by the tests that run its suites and
/// those that compare with its library.
pub fn hwloc_2_14_work() -> PathBuf {
    hwloc_reference::hwloc_2_14_work(Path::new(env!("CARGO_TARGET_TMPDIR")))
}

/// The folder holding hwloc 2.14.0's `libhwloc.so.15`, built from its
/// source (about 3 minutes on two cores the first time, then reused): the
/// reference the comparisons run Debian's hwloc tools against.
pub fn reference_library() -> PathBuf {
    // Built (or found built) once per test binary.
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            require_hwloc_source_build();
            hwloc_reference::build_reference_library(
                &workspace(),
                Path::new(env!("CARGO_TARGET_TMPDIR")),
            )
            .unwrap_or_else(|e| panic!("{e}"))
        })
        .clone()
}

/// Writes this machine's topology to `path` as `wloc ls --of image`
/// publishes it: with lstopo's filters (everything, I/O devices that
/// matter), so that objects are numbered as when lstopo discovers, then
/// annotated.
pub fn this_machine_image(path: &Path) {
    let mut all = wloc_core::Topology::new();
    all.set_all_types_filter(TypeFilter::KeepAll);
    all.set_io_types_filter(TypeFilter::KeepImportant);
    let source = wloc_discovery::input::Source::ThisSystem;
    let discovery = wloc_discovery::Discovery::new(None);
    let mut model = discovery
        .load(&source, all)
        .expect("discovering this machine");
    wloc_discovery::annotations::annotate_discovered_quietly(&discovery, &source, &mut model);
    wloc_image::write(&model, path).expect("writing the image");
}

/// The public headers of hwloc 2.14, taken from the release tarball into
/// `dir`: its `include` folder. The configuration header is the 2.9 kit's
/// (Debian's configure output): 2.14 defines nothing more on Linux with
/// glibc but optional components.
pub fn hwloc_2_14_headers(dir: &Path) -> PathBuf {
    require(&[("/usr/bin/xz", "xz-utils")]);
    let tarball = workspace().join("tests/data/hwloc-2.14/hwloc-2.14.0.tar.xz");
    let o = Command::new("tar")
        .arg("xJf")
        .arg(&tarball)
        .arg("-C")
        .arg(dir)
        .args(["--wildcards", "hwloc-2.14.0/include/*"])
        .output()
        .expect("tar runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let inc = dir.join("hwloc-2.14.0/include");
    std::fs::copy(
        workspace().join("tests/data/hwloc-2.9/include/hwloc/autogen/config.h"),
        inc.join("hwloc/autogen/config.h"),
    )
    .unwrap();
    inc
}

/// The `.xml` files of the folders `dirs` of `tests/data`, sorted.
pub fn xml_files(dirs: &[&str]) -> Vec<PathBuf> {
    let data = workspace().join("tests/data");
    let mut files: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| {
            std::fs::read_dir(data.join(d))
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    files.sort();
    files
}
