//! Recordings with a CPU taken offline, as Linux shows it: the CPU leaves
//! `online`, its `online` file says 0, its `topology` and `cache` folders
//! are gone and its NUMA node no longer lists it.  wloc must describe the
//! machine as hwloc 2.9 does from the same tree: the CPU is left out of the
//! tree and kept in the complete sets, and objects are still ordered by
//! their complete sets.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{TempDir, compare_full, hwloc_xml_of_fsroot, require_hwloc, root_attr, unpack, wloc};

/// Recordings and the CPU taken offline in each: the first CPU of a
/// second package (the case that orders a package before one with a lower
/// online CPU), the last CPU, and CPUs inside dies and s390 books.
const CASES: &[(&str, u32)] = &[
    ("40intel64-2g2n4c+pcilocality", 1),
    ("40intel64-4n10c+pci-conflicts", 39),
    ("fakecpuid1f-64intel64-2p4d2n2c2t", 43),
    ("16amd64-8n2c", 15),
    ("20s390-2g6s4c", 4),
];

/// Parses a Linux CPU list (`0-3,8`).
fn cpulist(s: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.parse::<u32>().unwrap()..=b.parse::<u32>().unwrap()),
            None => out.push(part.parse().unwrap()),
        }
    }
    out
}

/// Formats a CPU list as Linux does.
fn format_cpulist(cpus: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Takes `cpu` offline in the recording at `root`, as the kernel does.
fn take_offline(root: &Path, cpu: u32) {
    let cpus = root.join("sys/devices/system/cpu");
    let online = cpulist(&std::fs::read_to_string(cpus.join("online")).unwrap());
    assert!(online.contains(&cpu), "cpu{cpu} is online in the recording");
    let rest: Vec<u32> = online.into_iter().filter(|&c| c != cpu).collect();
    std::fs::write(cpus.join("online"), format_cpulist(&rest) + "\n").unwrap();
    let dir = cpus.join(format!("cpu{cpu}"));
    std::fs::write(dir.join("online"), "0\n").unwrap();
    for sub in ["topology", "cache"] {
        let _ = std::fs::remove_dir_all(dir.join(sub));
    }
    // NUMA nodes list online CPUs only.
    let nodes = root.join("sys/devices/system/node");
    for entry in std::fs::read_dir(&nodes).into_iter().flatten().flatten() {
        let node = entry.path();
        let Ok(list) = std::fs::read_to_string(node.join("cpulist")) else {
            continue;
        };
        let kept: Vec<u32> = cpulist(&list).into_iter().filter(|&c| c != cpu).collect();
        std::fs::write(node.join("cpulist"), format_cpulist(&kept) + "\n").unwrap();
        if let Ok(map) = std::fs::read_to_string(node.join("cpumap")) {
            std::fs::write(node.join("cpumap"), clear_bit(&map, cpu)).unwrap();
        }
    }
}

/// Clears bit `cpu` of a Linux CPU mask (`00000000,0000ffff`).
fn clear_bit(mask: &str, cpu: u32) -> String {
    let mut words: Vec<String> = mask.trim().split(',').map(String::from).collect();
    let idx = words.len() - 1 - (cpu / 32) as usize;
    let w = u32::from_str_radix(&words[idx], 16).unwrap() & !(1 << (cpu % 32));
    words[idx] = format!("{w:08x}");
    words.join(",") + "\n"
}

#[test]
fn offline_cpus_stay_in_the_complete_sets_as_in_hwloc() {
    require_hwloc();
    let tmp = TempDir::new("offline-cpus");
    let mut failures = Vec::new();
    for &(name, cpu) in CASES {
        let dest = tmp.0.join(name);
        std::fs::create_dir_all(&dest).unwrap();
        let root = unpack(name, &dest);
        take_offline(&root, cpu);
        let ours = Command::new(wloc())
            .arg("ls")
            .arg("-i")
            .arg(&root)
            .args(["--if", "fsroot", "--of", "xml", "-"])
            .output()
            .expect("wloc runs");
        if !ours.status.success() {
            failures.push(format!(
                "{name} with cpu{cpu} offline: wloc failed: {}",
                String::from_utf8_lossy(&ours.stderr)
            ));
            continue;
        }
        let theirs = hwloc_xml_of_fsroot(&root, &[]);
        let ours = String::from_utf8(ours.stdout).unwrap();
        for attr in ["cpuset", "complete_cpuset", "allowed_cpuset"] {
            let (a, b) = (root_attr(&theirs, attr), root_attr(&ours, attr));
            let (a, b) = (a.unwrap_or_default(), b.unwrap_or_default());
            if a != b {
                failures.push(format!(
                    "{name} with cpu{cpu} offline: root {attr} {b}, hwloc says {a}"
                ));
            }
        }
        let (h, w) = (dest.join("hwloc.xml"), dest.join("wloc.xml"));
        std::fs::write(&h, &theirs).unwrap();
        std::fs::write(&w, &ours).unwrap();
        if let Err(e) = compare_full(&h, &w) {
            failures.push(format!("{name} with cpu{cpu} offline: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn cpu_lists_round_trip() {
    assert_eq!(format_cpulist(&cpulist("0-3,5,7-8\n")), "0-3,5,7-8");
    assert_eq!(clear_bit("00000000,00000003", 1), "00000000,00000001\n");
    assert_eq!(clear_bit("00000001,00000000", 32), "00000000,00000000\n");
}
