//! A job restricted by its cgroup, with the cgroup v2 hierarchy (or the v1
//! cpuset one) mounted somewhere other than `/sys/fs/cgroup`, as the mount
//! table says: wloc must find it there, as hwloc does, through the Linux
//! component's grant of the mount points the table names.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{TempDir, compare_full, hwloc_xml_of_fsroot, require_hwloc, root_attr, unpack, wloc};

/// Mounts a cgroup hierarchy at `/MOUNT` in the recording and puts the
/// process in `/job`, allowed CPUs 2-5 and NUMA node 1.
fn restrict(root: &Path, v2: bool) {
    let (mount, line) = if v2 {
        (
            "cgroup/unified",
            "cgroup2 /cgroup/unified cgroup2 rw,nosuid,nodev,noexec 0 0\n",
        )
    } else {
        (
            "cgroup/cpu\\040set",
            "cgroup /cgroup/cpu\\040set cgroup rw,nosuid,cpuset 0 0\n",
        )
    };
    let dir = root.join(mount.replace("\\040", " "));
    let job = dir.join("job");
    std::fs::create_dir_all(&job).unwrap();
    let proc_self = root.join("proc/self");
    std::fs::create_dir_all(&proc_self).unwrap();
    let table = format!("proc /proc proc rw 0 0\nsysfs /sys sysfs rw 0 0\n{line}");
    std::fs::write(root.join("proc/mounts"), &table).unwrap();
    std::fs::write(proc_self.join("mounts"), &table).unwrap();
    if v2 {
        std::fs::write(dir.join("cgroup.controllers"), "cpuset cpu io memory\n").unwrap();
        std::fs::write(proc_self.join("cgroup"), "0::/job\n").unwrap();
        std::fs::write(job.join("cpuset.cpus.effective"), "2-5\n").unwrap();
        std::fs::write(job.join("cpuset.mems.effective"), "1\n").unwrap();
    } else {
        std::fs::write(proc_self.join("cgroup"), "3:cpuset:/job\n").unwrap();
        std::fs::write(job.join("cpuset.cpus"), "2-5\n").unwrap();
        std::fs::write(job.join("cpuset.mems"), "1\n").unwrap();
    }
}

#[test]
fn cgroups_mounted_anywhere_restrict_as_in_hwloc() {
    require_hwloc();
    let tmp = TempDir::new("cgroup-mounts");
    let name = "16amd64-8n2c";
    for v2 in [true, false] {
        let dest = tmp.0.join(if v2 { "v2" } else { "v1" });
        std::fs::create_dir_all(&dest).unwrap();
        let root = unpack(name, &dest);
        restrict(&root, v2);
        let ours = Command::new(wloc())
            .arg("ls")
            .arg("-i")
            .arg(&root)
            .args(["--if", "fsroot", "--of", "xml", "--disallowed", "-"])
            .output()
            .expect("wloc runs");
        assert!(
            ours.status.success(),
            "{}",
            String::from_utf8_lossy(&ours.stderr)
        );
        let theirs = hwloc_xml_of_fsroot(&root, &["--disallowed"]);
        let ours = String::from_utf8(ours.stdout).unwrap();
        // The job's CPUs 2-5 and node 1, not the whole machine.
        assert_eq!(
            root_attr(&ours, "allowed_cpuset").as_deref(),
            Some("0x0000003c"),
            "v2 {v2}"
        );
        assert_eq!(
            root_attr(&ours, "allowed_nodeset").as_deref(),
            Some("0x00000002"),
            "v2 {v2}"
        );
        for attr in ["allowed_cpuset", "allowed_nodeset", "cpuset"] {
            assert_eq!(
                root_attr(&ours, attr),
                root_attr(&theirs, attr),
                "v2 {v2}: {attr}"
            );
        }
        let (h, w) = (dest.join("hwloc.xml"), dest.join("wloc.xml"));
        std::fs::write(&h, &theirs).unwrap();
        std::fs::write(&w, &ours).unwrap();
        if let Err(e) = compare_full(&h, &w) {
            panic!("v2 {v2}: {e}");
        }
    }
}
