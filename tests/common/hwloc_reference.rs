//! hwloc 2.14.0 built from its source (`tests/data/hwloc-2.14`), once per
//! target folder: the reference the library follows where hwloc 2.9
//! (Debian's, whose unmodified programs the tests run) behaves otherwise.
//! Shared by the end-to-end tests and the C library's tests, which include
//! this file by path: so it uses std alone.

use std::format;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::string::String;

/// The folder where hwloc 2.14.0 is unpacked and built (under the target
/// folder's test temporaries, `target_tmp`); `run.sh` runs in it under the
/// folder's `lock` file, also for the suites that run there.
pub fn hwloc_2_14_work(target_tmp: &Path) -> PathBuf {
    let work = target_tmp.join("hwloc-2.14-suite");
    std::fs::create_dir_all(&work).expect("suite folder");
    work
}

/// Builds hwloc 2.14.0 in [`hwloc_2_14_work`] unless it is built already
/// (about 3 minutes on two cores), and returns the folder holding its
/// `libhwloc.so.15`. The packages the build takes must be installed.
pub fn build_reference_library(workspace: &Path, target_tmp: &Path) -> Result<PathBuf, String> {
    let work = hwloc_2_14_work(target_tmp);
    let lib = work.join("install/lib");
    let out = Command::new("flock")
        .arg(work.join("lock"))
        .arg("bash")
        .arg(workspace.join("tests/data/hwloc-2.14/run.sh"))
        .arg("build")
        .arg(&work)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .map_err(|e| format!("run.sh does not start: {e}"))?;
    if !out.status.success() || !lib.join("libhwloc.so.15").is_file() {
        return Err(format!(
            "building hwloc 2.14.0 failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(lib)
}
