//! Resources the process may use: cgroup v1/v2 and legacy cpusets.

use crate::ctx::{Ctx, truncate};
use crate::parse;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CgroupKind {
    V2,
    V1,
    Cpuset,
}

impl Ctx<'_> {
    fn cgroup_mount_point(&self) -> Option<(CgroupKind, String)> {
        if self.fs.exists("/sys/fs/cgroup/cpuset.cpus.effective") {
            return Some((CgroupKind::V2, "/sys/fs/cgroup".into()));
        }
        if self.fs.exists("/sys/fs/cgroup/cpuset/cpuset.cpus") {
            return Some((CgroupKind::V1, "/sys/fs/cgroup/cpuset".into()));
        }
        if self.fs.exists("/dev/cpuset/cpus") {
            return Some((CgroupKind::Cpuset, "/dev/cpuset".into()));
        }
        let mounts = self.read_text("/proc/mounts")?;
        for m in crate::mounts::parse(&mounts) {
            let (dir, kind, opts) = (m.dir, m.fstype, m.options);
            match kind {
                "cgroup2" => {
                    let ctrls = self.read_line(&format!("{dir}/cgroup.controllers"));
                    if let Some(c) = ctrls {
                        let c = truncate(&c, 1023);
                        if c.split(' ').any(|w| w == "cpuset") {
                            return Some((CgroupKind::V2, dir));
                        }
                    }
                }
                "cpuset" => return Some((CgroupKind::Cpuset, dir)),
                "cgroup" => {
                    let opts: Vec<&str> = opts.split(',').collect();
                    if !opts.contains(&"cpuset") {
                        continue;
                    }
                    if opts.contains(&"noprefix") {
                        return Some((CgroupKind::Cpuset, dir));
                    }
                    return Some((CgroupKind::V1, dir));
                }
                _ => {}
            }
        }
        None
    }

    /// The cgroup (or cpuset) of the process whose `/proc` folder is
    /// `process` (`self`, or a PID as hwloc reads it after
    /// `hwloc_topology_set_pid`).
    fn cgroup_name(&self, process: &str) -> Option<String> {
        if let Some(name) = self.read_line(&format!("/proc/{process}/cpuset")) {
            return Some(truncate(&name, 127));
        }
        let t = self.read_text(&format!("/proc/{process}/cgroup"))?;
        for line in t.lines().take(10_000) {
            let line = truncate(line, 255);
            let Some(colon) = line.find(':') else {
                continue;
            };
            let rest = &line[colon..];
            if let Some(p) = rest.strip_prefix(":cpuset:") {
                return Some(p.to_string());
            }
            if let Some(p) = rest.strip_prefix("::") {
                return Some(p.to_string());
            }
        }
        None
    }

    /// Restricts the allowed PUs and NUMA nodes to the cgroup's; returns the
    /// cgroup name for the `LinuxCgroup` info.
    pub fn allowed_resources(&mut self) -> Option<String> {
        self.allowed_resources_of("self")
    }

    /// [`Self::allowed_resources`] of the process whose `/proc` folder is
    /// `process`.
    pub fn allowed_resources_of(&mut self, process: &str) -> Option<String> {
        let (kind, mnt) = self.cgroup_mount_point()?;
        let name = self.cgroup_name(process)?;
        let file = |attr: &str| match kind {
            CgroupKind::V2 => format!("{mnt}{name}/cpuset.{attr}.effective"),
            CgroupKind::V1 => format!("{mnt}{name}/cpuset.{attr}"),
            CgroupKind::Cpuset => format!("{mnt}{name}/{attr}"),
        };
        if let Some(b) = self.read(&file("cpus"))
            && let Some(set) = parse::cpulist(&b)
        {
            self.topo.allowed_cpuset = set;
        }
        if let Some(b) = self.read(&file("mems"))
            && let Some(set) = parse::cpulist(&b)
        {
            self.topo.allowed_nodeset = set;
        }
        Some(name)
    }
}
