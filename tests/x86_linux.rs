//! The Linux and x86 discoveries together: a recorded fsroot
//! (`HWLOC_FSROOT`, `-i DIR --if fsroot`) with a CPUID dump beside it
//! (`HWLOC_CPUID_PATH`), as hwloc 2.14's `tests/hwloc/x86+linux` runs them.
//! Linux discovers the recording; the x86 pass adds what sysfs does not
//! say: which caches are inclusive, the CPU kinds of a hybrid processor.
//! The recording is hwloc's Lakefield machine (one Core and four Atoms),
//! taken from the hwloc 2.14.0 tarball of `tests/data/hwloc-2.14`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

/// Unpacks hwloc 2.14's `x86+linux/NAME.tar.bz2` into `dest`: the folder
/// holding `fsroot/` and `cpuid/`.
fn unpack_x86_linux(name: &str, dest: &Path) -> PathBuf {
    let member = format!("hwloc-2.14.0/tests/hwloc/x86+linux/{name}.tar.bz2");
    let st = Command::new("tar")
        .arg("xJf")
        .arg(common::workspace().join("tests/data/hwloc-2.14/hwloc-2.14.0.tar.xz"))
        .arg("-C")
        .arg(dest)
        .arg(&member)
        .status()
        .expect("tar runs");
    assert!(st.success(), "cannot extract {member}");
    let f = std::fs::File::open(dest.join(&member)).unwrap();
    tar::Archive::new(bzip2::read::BzDecoder::new(f))
        .unpack(dest)
        .unwrap();
    dest.join(name)
}

/// `wloc ls -i FSROOT --if fsroot --of xml` with `env`.
fn ls_fsroot(dir: &Path, env: &[(&str, &Path)]) -> String {
    let mut c = Command::new(common::wloc());
    c.arg("ls")
        .arg("-i")
        .arg(dir.join("fsroot"))
        .args(["--if", "fsroot", "--of", "xml"]);
    for v in ["HWLOC_CPUID_PATH", "WLOC_CPUID_PATH", "HWLOC_COMPONENTS"] {
        c.env_remove(v);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().expect("wloc runs");
    assert!(
        o.status.success(),
        "wloc ls failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn a_cpuid_dump_beside_an_fsroot_adds_what_sysfs_does_not_say() {
    let tmp = common::TempDir::new("x86-linux");
    let dir = unpack_x86_linux("5intel64-hybrid-lakefield", &tmp.0);
    let cpuid = dir.join("cpuid");

    // The recording alone: Linux knows the kinds only by frequency.
    let alone = ls_fsroot(&dir, &[]);
    assert!(!alone.contains("CoreType"), "{alone}");

    // With the dump (and as the component list of hwloc's test orders
    // them): the Atoms and the Core get their CoreType and efficiency on
    // top of Linux's frequencies, and the L3 is inclusive.
    for env in [
        vec![("HWLOC_CPUID_PATH", cpuid.as_path())],
        vec![
            ("WLOC_CPUID_PATH", cpuid.as_path()),
            ("HWLOC_COMPONENTS", Path::new("linux,x86,stop")),
        ],
    ] {
        let both = ls_fsroot(&dir, &env);
        let kinds: Vec<&str> = both
            .lines()
            .filter(|l| l.contains("<cpukind") || l.contains("CoreType") || l.contains("Frequency"))
            .map(str::trim)
            .collect();
        assert_eq!(
            kinds,
            [
                r#"<cpukind cpuset="0x0000000f" forced_efficiency="0">"#,
                r#"<info name="FrequencyMaxMHz" value="2800"/>"#,
                r#"<info name="FrequencyBaseMHz" value="1400"/>"#,
                r#"<info name="CoreType" value="IntelAtom"/>"#,
                r#"<cpukind cpuset="0x00000010" forced_efficiency="1">"#,
                r#"<info name="FrequencyMaxMHz" value="3000"/>"#,
                r#"<info name="FrequencyBaseMHz" value="2000"/>"#,
                r#"<info name="CoreType" value="IntelCore"/>"#,
            ],
            "{both}"
        );
        assert!(
            both.contains(
                r#"<info name="CPUModel" value="Intel(R) Core(TM) i5-L16G7 CPU @ 1.40GHz"/>"#
            ),
            "{both}"
        );
    }

    // hwloc's x86 component left out: the dump is not read.
    let listed = ls_fsroot(
        &dir,
        &[
            ("HWLOC_CPUID_PATH", cpuid.as_path()),
            ("HWLOC_COMPONENTS", Path::new("linux,stop")),
        ],
    );
    assert_eq!(listed, alone);

    // A dump that cannot be read is an error naming it.
    let o = Command::new(common::wloc())
        .args(["ls", "--if", "fsroot", "-i"])
        .arg(dir.join("fsroot"))
        .env("HWLOC_CPUID_PATH", dir.join("missing"))
        .env_remove("HWLOC_COMPONENTS")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("missing"), "{err}");
}

#[test]
fn with_x86_listed_first_the_processors_have_cpuids_identities() {
    let tmp = common::TempDir::new("x86-first");
    let dir = unpack_x86_linux("64amd64-4p2n4ca2co", &tmp.0);
    let cpuid = dir.join("cpuid");
    // PU 8 is the first core of the second node of package 0: sysfs
    // numbers cores per node (0), CPUID per package (8).
    let core_of_pu8 = |xml: &str| {
        xml.lines()
            .find(|l| l.contains(r#"type="Core""#) && l.contains(r#"cpuset="0x00000100""#))
            .map(|l| {
                l.split(r#"os_index=""#)
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .unwrap_or_else(|| panic!("no core of PU 8 in {xml}"))
    };
    let linux_first = ls_fsroot(
        &dir,
        &[
            ("HWLOC_CPUID_PATH", cpuid.as_path()),
            ("HWLOC_COMPONENTS", Path::new("linux,x86,stop")),
        ],
    );
    assert_eq!(core_of_pu8(&linux_first), "0");
    let x86_first = ls_fsroot(
        &dir,
        &[
            ("HWLOC_CPUID_PATH", cpuid.as_path()),
            ("HWLOC_COMPONENTS", Path::new("x86,linux,stop")),
        ],
    );
    assert_eq!(core_of_pu8(&x86_first), "8");
    let backends: Vec<&str> = x86_first
        .lines()
        .filter(|l| l.contains(r#"name="Backend""#))
        .map(str::trim)
        .collect();
    assert_eq!(
        backends,
        [
            r#"<info name="Backend" value="x86"/>"#,
            r#"<info name="Backend" value="Linux"/>"#
        ]
    );
}
