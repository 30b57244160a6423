//! A setuid program on the library ignores the environment's choices of
//! policy, components, cache and inputs (as glibc's `secure_getenv`), and
//! never prints a file its caller could not read.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

#[test]
fn setuid_programs_ignore_the_callers_environment() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || Command::new("setpriv").arg("--version").output().is_err()
    {
        eprintln!("skipped: needs root and setpriv to make a setuid program");
        return;
    }
    support::require_c_toolchain();
    let dir = support::library_dir("setuid");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let src = dir.join("load.c");
    std::fs::write(
        &src,
        "#include <hwloc.h>\n#include <stdio.h>\nint main(void) { hwloc_topology_t t; hwloc_topology_init(&t);\n\
         if (hwloc_topology_load(t)) { perror(\"load\"); return 1; }\n\
         printf(\"depth %d\\n\", hwloc_topology_get_depth(t)); return 0; }\n",
    )
    .unwrap();
    let exe = dir.join("load-suid");
    let rpath = format!("-Wl,-rpath,{}", dir.display());
    support::compile(
        Command::new("gcc")
            .arg("-o")
            .arg(&exe)
            .arg(&src)
            .arg(&rpath)
            .arg(format!("-L{}", dir.display()))
            .arg("-l:libhwloc.so.15"),
    );
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o4755)).unwrap();
    // A root-only file the caller names as the policy and as the inputs.
    let secret = dir.join("secret.txt");
    std::fs::write(&secret, "root:$6$NOTFORYOU:19000:0:99999:7:::\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&exe)
        .env("WLOC_CAPI_VERBOSE", "1")
        .env("WLOC_POLICY", &secret)
        .env("HWLOC_XMLFILE", &secret)
        .env("WLOC_IMAGE", &secret)
        .env("WLOC_COMPONENTS_PATH", &dir)
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains("NOTFORYOU"), "{all}");
    assert!(out.status.success(), "this machine is discovered: {all}");
    assert!(all.contains("depth "), "{all}");
}
