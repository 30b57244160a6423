//! Discovery on small in-memory trees: expected structures, and malformed
//! inputs that must neither panic nor hang.

use wloc_core::object::Depth;
use wloc_core::{ObjType, Topology, TypeFilter};

use crate::{DiscoveryError, FsAccess, MemFs, Options, discover};

const CPU: &str = "/sys/devices/system/cpu";
const NODE: &str = "/sys/devices/system/node";

/// A kernel cpumask (32-bit hex words, most significant first).
fn mask(cpus: &[u32]) -> String {
    let max = cpus.iter().copied().max().unwrap_or(0);
    let mut words = vec![0u32; (max as usize / 32 + 1).max(2)];
    for &c in cpus {
        words[c as usize / 32] |= 1 << (c % 32);
    }
    let v: Vec<String> = words.iter().rev().map(|w| format!("{w:08x}")).collect();
    format!("{}\n", v.join(","))
}

/// `packages` x `cores` x `threads` PUs numbered package-major, with an L2
/// per core, an L3 per package, and one NUMA node per package.
fn machine(packages: u32, cores: u32, threads: u32) -> MemFs {
    let mut fs = MemFs::new();
    let n = packages * cores * threads;
    fs.add_file(&format!("{CPU}/online"), format!("0-{}\n", n - 1));
    fs.add_file(&format!("{NODE}/online"), format!("0-{}\n", packages - 1));
    let mut cpuinfo = String::new();
    for p in 0..packages {
        let pcpus: Vec<u32> = (p * cores * threads..(p + 1) * cores * threads).collect();
        for c in 0..cores {
            let first = (p * cores + c) * threads;
            let ccpus: Vec<u32> = (first..first + threads).collect();
            for &cpu in &ccpus {
                let t = format!("{CPU}/cpu{cpu}/topology");
                fs.add_file(&format!("{t}/core_cpus"), mask(&ccpus));
                fs.add_file(&format!("{t}/package_cpus"), mask(&pcpus));
                fs.add_file(&format!("{t}/core_id"), format!("{c}\n"));
                fs.add_file(&format!("{t}/physical_package_id"), format!("{p}\n"));
                let caches: [(u32, &str, &[u32], &str); 3] = [
                    (1, "Data", &ccpus, "32K"),
                    (2, "Unified", &ccpus, "1024K"),
                    (3, "Unified", &pcpus, "16384K"),
                ];
                for (j, (level, kind, set, size)) in caches.iter().enumerate() {
                    let d = format!("{CPU}/cpu{cpu}/cache/index{j}");
                    fs.add_file(&format!("{d}/level"), format!("{level}\n"));
                    fs.add_file(&format!("{d}/type"), format!("{kind}\n"));
                    fs.add_file(&format!("{d}/size"), format!("{size}\n"));
                    fs.add_file(&format!("{d}/coherency_line_size"), "64\n");
                    fs.add_file(&format!("{d}/number_of_sets"), "64\n");
                    fs.add_file(&format!("{d}/physical_line_partition"), "1\n");
                    fs.add_file(&format!("{d}/shared_cpu_map"), mask(set));
                }
                cpuinfo.push_str(&format!(
                    "processor\t: {cpu}\nvendor_id\t: GenuineIntel\nmodel name\t: Test CPU {p}\nphysical id\t: {p}\ncore id\t\t: {c}\n\n"
                ));
            }
        }
        fs.add_file(&format!("{NODE}/node{p}/cpumap"), mask(&pcpus));
        fs.add_file(
            &format!("{NODE}/node{p}/meminfo"),
            format!("Node {p} MemTotal:       1048576 kB\nNode {p} MemFree: 10 kB\n"),
        );
        let row: Vec<String> = (0..packages)
            .map(|q| if q == p { "10".into() } else { "20".into() })
            .collect();
        fs.add_file(
            &format!("{NODE}/node{p}/distance"),
            format!("{}\n", row.join(" ")),
        );
    }
    fs.add_file("/proc/cpuinfo", cpuinfo);
    fs.add_file("/proc/meminfo", "MemTotal:       4194304 kB\n");
    fs.add_file(
        "/proc/hwloc-nofile-info",
        "OSName: Linux\nArchitecture: x86_64\n",
    );
    fs.add_file("/sys/class/dmi/id/board_vendor", "Test Inc.\n");
    fs
}

fn topo_all() -> Topology {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    t.set_io_types_filter(TypeFilter::KeepAll);
    t
}

fn count(t: &Topology, ty: ObjType) -> usize {
    t.objs_by_type(ty).len()
}

#[test]
fn discovers_a_small_machine() {
    let fs = machine(2, 2, 2);
    let t = discover(&fs, &Options::default(), topo_all()).unwrap();
    t.check().unwrap();
    assert_eq!(count(&t, ObjType::Package), 2);
    assert_eq!(count(&t, ObjType::L3Cache), 2);
    assert_eq!(count(&t, ObjType::L2Cache), 4);
    assert_eq!(count(&t, ObjType::L1Cache), 4);
    assert_eq!(count(&t, ObjType::Core), 4);
    assert_eq!(count(&t, ObjType::PU), 8);
    assert_eq!(t.level(Depth::NumaNode).len(), 2);
    let l3 = t.obj(t.objs_by_type(ObjType::L3Cache)[0]);
    let c = l3.cache().unwrap();
    assert_eq!((c.size, c.linesize, c.associativity), (16 << 20, 64, 4096));
    let pkg = t.obj(t.objs_by_type(ObjType::Package)[1]);
    assert_eq!(pkg.os_index, Some(1));
    assert_eq!(pkg.info("CPUModel"), Some("Test CPU 1"));
    assert_eq!(t.obj(t.root()).info("DMIBoardVendor"), Some("Test Inc."));
    assert_eq!(t.obj(t.root()).total_memory, 2 << 30);
    assert_eq!(t.distances.len(), 1);
    assert_eq!(t.distances[0].values, vec![10, 20, 20, 10]);
    assert!(
        t.infos
            .iter()
            .any(|i| i.name == "OSName" && i.value == "Linux")
    );
}

/// hwloc builds a cache from the first CPU of its set only, and looks at
/// `index0` to `index9` of every CPU: a cache that its first CPU lists
/// under an index the others lack is built; one that its first CPU does
/// not list is not (hwloc 2.9 does the same on such recordings).
#[test]
fn caches_are_built_from_their_first_cpu_at_any_index() {
    let full = discover(&machine(1, 2, 2), &Options::default(), topo_all()).unwrap();
    let mut fs = machine(1, 2, 2);
    // The L2 of core 0 is listed under cpu1 only: not built.
    fs.remove(&format!("{CPU}/cpu0/cache/index1"));
    // The L1 of core 1 is listed by cpu2 (its first CPU) under index3
    // only, beyond every index of the first and last CPUs: built.
    fs.remove(&format!("{CPU}/cpu2/cache/index0"));
    fs.remove(&format!("{CPU}/cpu3/cache/index0"));
    for (f, v) in [
        ("level", "1\n"),
        ("type", "Data\n"),
        ("size", "32K\n"),
        ("coherency_line_size", "64\n"),
        ("number_of_sets", "64\n"),
        ("physical_line_partition", "1\n"),
        ("shared_cpu_map", "00000000,0000000c\n"),
    ] {
        fs.add_file(&format!("{CPU}/cpu2/cache/index3/{f}"), v);
    }
    let t = discover(&fs, &Options::default(), topo_all()).unwrap();
    t.check().unwrap();
    for ty in [ObjType::L1Cache, ObjType::L3Cache, ObjType::Core] {
        assert_eq!(count(&t, ty), count(&full, ty), "{ty:?}");
    }
    assert_eq!(
        count(&t, ObjType::L2Cache),
        count(&full, ObjType::L2Cache) - 1
    );
    let l1s = t.objs_by_type(ObjType::L1Cache);
    let last = t.obj(*l1s.last().unwrap());
    assert_eq!(last.cpuset.as_ref().unwrap().first(), Some(2));
}

#[test]
fn numa_distances_make_groups() {
    let mut fs = machine(4, 1, 1);
    let rows = ["10 20 40 40", "20 10 40 40", "40 40 10 20", "40 40 20 10"];
    for (p, r) in rows.iter().enumerate() {
        fs.add_file(&format!("{NODE}/node{p}/distance"), format!("{r}\n"));
    }
    let t = discover(&fs, &Options::default(), topo_all()).unwrap();
    t.check().unwrap();
    let groups = t.objs_by_type(ObjType::Group);
    assert_eq!(groups.len(), 2);
    assert_eq!(t.obj(groups[0]).children().len(), 2);
    // Without grouping.
    let opts = Options {
        grouping: Some(false),
        ..Options::default()
    };
    let t = discover(&fs, &opts, topo_all()).unwrap();
    assert_eq!(count(&t, ObjType::Group), 0);
}

#[test]
fn cgroup_v2_restricts_allowed_resources() {
    let mut fs = machine(2, 2, 1);
    fs.add_file("/sys/fs/cgroup/cpuset.cpus.effective", "0-3\n");
    fs.add_file("/sys/fs/cgroup/job/cpuset.cpus.effective", "0-1\n");
    fs.add_file("/sys/fs/cgroup/job/cpuset.mems.effective", "0\n");
    fs.add_file("/proc/self/cgroup", "0::/job\n");
    let t = discover(&fs, &Options::default(), topo_all()).unwrap();
    t.check().unwrap();
    assert_eq!(count(&t, ObjType::PU), 2);
    assert_eq!(t.level(Depth::NumaNode).len(), 1);
    assert!(
        t.infos
            .iter()
            .any(|i| i.name == "LinuxCgroup" && i.value == "/job")
    );
    let mut all = topo_all();
    all.include_disallowed = true;
    let t = discover(&fs, &Options::default(), all).unwrap();
    assert_eq!(count(&t, ObjType::PU), 4);
}

#[test]
fn allowed_resources_alone_read_the_legacy_cpuset() {
    let mut fs = MemFs::new();
    fs.add_file("/proc/mounts", "none /dev/cpuset cpuset rw 0 0\n");
    fs.add_file("/proc/self/cpuset", "/dummy\n");
    fs.add_file("/dev/cpuset/dummy/cpus", "1-6,10,12-14\n");
    fs.add_file("/dev/cpuset/dummy/mems", "1-2\n");
    let a = crate::allowed_resources(&fs).unwrap();
    assert_eq!(a.cgroup, "/dummy");
    assert_eq!(a.cpuset.to_string(), "0x0000747e");
    assert_eq!(a.nodeset.to_string(), "0x00000006");
    // A bad list leaves everything allowed; no cgroup mounted, nothing.
    fs.add_file("/dev/cpuset/dummy/mems", "x-\n");
    assert!(crate::allowed_resources(&fs).unwrap().nodeset.is_full());
    assert_eq!(crate::allowed_resources(&MemFs::new()), None);
}

#[test]
fn cpuinfo_fallback_without_sysfs_topology() {
    let mut fs = MemFs::new();
    fs.add_file(
        "/proc/cpuinfo",
        "processor\t: 0\nphysical id\t: 0\ncore id\t: 0\n\nprocessor\t: 1\nphysical id\t: 0\ncore id\t: 1\n\n\
         processor\t: 2\nphysical id\t: 1\ncore id\t: 0\n\nprocessor\t: 3\nphysical id\t: 1\ncore id\t: 1\n",
    );
    fs.add_file("/proc/meminfo", "MemTotal: 1024 kB\n");
    let t = discover(&fs, &Options::default(), topo_all()).unwrap();
    t.check().unwrap();
    assert_eq!(count(&t, ObjType::Package), 2);
    assert_eq!(count(&t, ObjType::Core), 4);
    assert_eq!(count(&t, ObjType::PU), 4);
    assert_eq!(
        t.obj(t.level(Depth::NumaNode)[0])
            .numa()
            .unwrap()
            .local_memory,
        1 << 20
    );
}

#[test]
fn nothing_readable_is_an_error() {
    let fs = MemFs::new();
    assert!(matches!(
        discover(&fs, &Options::default(), topo_all()),
        Err(DiscoveryError::NoCpus(_))
    ));
    // A CPU directory without topology still gives PUs.
    let mut fs = MemFs::new();
    fs.add_dir(&format!("{CPU}/cpu0"))
        .add_dir(&format!("{CPU}/cpu1"));
    let t = discover(&fs, &Options::default(), topo_all()).unwrap();
    assert_eq!(count(&t, ObjType::PU), 2);
}

#[test]
fn cpuless_node_located_by_hmat_initiators_and_memory_side_cache() {
    let mut fs = machine(2, 1, 1);
    fs.add_file(&format!("{NODE}/online"), "0-2\n");
    fs.add_file(&format!("{NODE}/node2/cpumap"), mask(&[]));
    fs.add_file(
        &format!("{NODE}/node2/meminfo"),
        "Node 2 MemTotal: 2048 kB\n",
    );
    fs.add_dir(&format!("{NODE}/node2/access0/initiators/node1"));
    fs.add_file(
        &format!("{NODE}/node2/access0/initiators/read_bandwidth"),
        "100\n",
    );
    fs.add_file(
        &format!("{NODE}/node2/access0/initiators/write_bandwidth"),
        "300\n",
    );
    let msc = format!("{NODE}/node0/memory_side_cache/index1");
    fs.add_file(&format!("{msc}/size"), "1073741824\n");
    fs.add_file(&format!("{msc}/line_size"), "64\n");
    fs.add_file(&format!("{msc}/indexing"), "0\n");
    for p in 0..3 {
        fs.add_file(&format!("{NODE}/node{p}/distance"), "10 20 30\n");
    }
    let t = discover(&fs, &Options::default(), topo_all()).unwrap();
    t.check().unwrap();
    let nodes = t.level(Depth::NumaNode);
    assert_eq!(nodes.len(), 3);
    let n2 = *nodes
        .iter()
        .find(|&&n| t.obj(n).os_index == Some(2))
        .unwrap();
    let parent = t.obj(n2).parent().unwrap();
    assert_eq!(t.obj(parent).obj_type, ObjType::Package);
    assert_eq!(t.obj(parent).os_index, Some(1));
    assert_eq!(t.level(Depth::MemCache).len(), 1);
    let bw = t.memattrs.iter().find(|m| m.name == "Bandwidth").unwrap();
    assert_eq!(bw.values[0].value, 200);
}

#[test]
fn pci_tree_with_os_devices() {
    let mut fs = machine(2, 1, 1);
    let dev = "/sys/devices/pci0000:00";
    let bridge_cfg = {
        let mut c = vec![0u8; 64];
        c[0x0e] = 1;
        c[0x18] = 0;
        c[0x19] = 1;
        c[0x1a] = 2;
        c
    };
    fs.add_file(&format!("{dev}/0000:00:01.0/config"), bridge_cfg);
    fs.add_file(&format!("{dev}/0000:00:01.0/class"), "0x060400\n");
    fs.add_file(&format!("{dev}/0000:00:01.0/vendor"), "0x8086\n");
    let nic = format!("{dev}/0000:00:01.0/0000:01:00.0");
    fs.add_file(&format!("{nic}/class"), "0x020000\n");
    fs.add_file(&format!("{nic}/vendor"), "0x15b3\n");
    fs.add_file(&format!("{nic}/device"), "0x1017\n");
    fs.add_file(&format!("{nic}/local_cpus"), mask(&[1]));
    fs.add_file(&format!("{nic}/net/eth0/address"), "00:11:22:33:44:55\n");
    fs.add_file(&format!("{dev}/0000:00:01.0/local_cpus"), mask(&[1]));
    fs.add_link(
        "/sys/bus/pci/devices/0000:00:01.0",
        "../../../devices/pci0000:00/0000:00:01.0",
    );
    fs.add_link(
        "/sys/bus/pci/devices/0000:01:00.0",
        "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0",
    );
    fs.add_link(
        "/sys/class/net/eth0",
        "../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/net/eth0",
    );
    fs.add_link("/sys/class/net/lo", "../../devices/virtual/net/lo");
    fs.add_file("/sys/bus/pci/slots/3/address", "0000:01:00\n");
    let t = discover(&fs, &Options::default(), topo_all()).unwrap();
    t.check().unwrap();
    assert_eq!(count(&t, ObjType::Bridge), 2);
    let pcidevs = t.objs_by_type(ObjType::PCIDevice);
    assert_eq!(pcidevs.len(), 1);
    let nic = t.obj(pcidevs[0]);
    assert_eq!(nic.pci().unwrap().vendor_id, 0x15b3);
    assert_eq!(nic.info("PCISlot"), Some("3"));
    let osdevs = t.objs_by_type(ObjType::OSDevice);
    assert_eq!(osdevs.len(), 1);
    assert_eq!(t.obj(osdevs[0]).name.as_deref(), Some("eth0"));
    assert_eq!(t.obj(osdevs[0]).info("Address"), Some("00:11:22:33:44:55"));
    // The host bridge hangs below the package of CPU 1.
    let mut p = t.obj(pcidevs[0]).parent().unwrap();
    while t.obj(p).obj_type != ObjType::Package {
        p = t.obj(p).parent().unwrap();
    }
    assert_eq!(t.obj(p).os_index, Some(1));
    assert_eq!(t.pci_localities.len(), 1);
    // Forced locality moves it.
    let opts = Options {
        pci_locality: Some("0000:00-02 0x1".into()),
        ..Options::default()
    };
    let t = discover(&fs, &opts, topo_all()).unwrap();
    let mut p = t
        .obj(t.objs_by_type(ObjType::PCIDevice)[0])
        .parent()
        .unwrap();
    while t.obj(p).obj_type != ObjType::Package {
        p = t.obj(p).parent().unwrap();
    }
    assert_eq!(t.obj(p).os_index, Some(0));
}

/// Files whose content is replaced by garbage in the robustness tests.
fn garbage_values() -> Vec<Vec<u8>> {
    vec![
        b"".to_vec(),
        b"\n".to_vec(),
        b"-1\n".to_vec(),
        b"4294967296\n".to_vec(),
        b"99999999999999999999999999\n".to_vec(),
        b"0-4294967295\n".to_vec(),
        b"ffffffff,ffffffff,ffffffff\n".to_vec(),
        b"zz,zz\n".to_vec(),
        b"0x\n".to_vec(),
        b",,,,\n".to_vec(),
        b"5-2\n".to_vec(),
        vec![0xff; 300],
        vec![0u8; 10],
        "ff,".repeat(40_000).into_bytes(),
        b"Node 0 MemTotal: 18446744073709551615 kB\n".to_vec(),
        b"10 20\n".to_vec(),
        "10 ".repeat(5000).into_bytes(),
    ]
}

#[test]
fn malformed_files_never_panic() {
    let base = machine(2, 2, 2);
    let mut paths: Vec<String> = Vec::new();
    for c in 0..8 {
        for f in [
            "core_cpus",
            "package_cpus",
            "core_id",
            "physical_package_id",
        ] {
            paths.push(format!("{CPU}/cpu{c}/topology/{f}"));
        }
        for j in 0..3 {
            for f in ["level", "type", "size", "number_of_sets", "shared_cpu_map"] {
                paths.push(format!("{CPU}/cpu{c}/cache/index{j}/{f}"));
            }
        }
    }
    for p in 0..2 {
        for f in ["cpumap", "meminfo", "distance"] {
            paths.push(format!("{NODE}/node{p}/{f}"));
        }
    }
    paths.extend(
        [
            "/sys/devices/system/cpu/online",
            "/sys/devices/system/node/online",
            "/proc/cpuinfo",
            "/proc/meminfo",
            "/proc/hwloc-nofile-info",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let values = garbage_values();
    // Every file with every value, one at a time.
    for p in &paths {
        for v in &values {
            let mut fs = base.clone();
            fs.add_file(p, v.clone());
            if let Ok(t) = discover(&fs, &Options::default(), topo_all()) {
                t.check().unwrap_or_else(|e| panic!("{p} = {v:?}: {e}"));
            }
        }
    }
    // Many files at once, pseudo-randomly.
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..200 {
        let mut fs = base.clone();
        for p in &paths {
            if next() % 4 == 0 {
                let v = &values[(next() % values.len() as u64) as usize];
                fs.add_file(p, v.clone());
            }
        }
        if let Ok(t) = discover(&fs, &Options::default(), topo_all()) {
            t.check().unwrap();
        }
    }
}

#[test]
fn hostile_trees_terminate() {
    let mut fs = machine(1, 2, 1);
    // Link loops where devices are listed.
    fs.add_link("/sys/class/net/a", "b");
    fs.add_link("/sys/class/net/b", "a");
    fs.add_link(
        "/sys/bus/pci/devices/0000:00:00.0",
        "../../../bus/pci/devices/0000:00:00.0",
    );
    fs.add_link("/sys/class/block/sda", "../../class/block/sda");
    // A CPU index far too large, and odd directory names.
    fs.add_dir(&format!("{CPU}/cpu4294967295/topology"));
    fs.add_dir(&format!("{CPU}/cpu-1"));
    fs.add_dir(&format!("{NODE}/node999999999"));
    // Bridges that claim overlapping and inverted bus ranges.
    for (i, (sec, sub)) in [(1u8, 200u8), (1, 1), (5, 3), (0, 0)].iter().enumerate() {
        let mut c = vec![0u8; 64];
        c[0x0e] = 1;
        c[0x19] = *sec;
        c[0x1a] = *sub;
        let d = format!("/sys/bus/pci/devices/0000:00:0{}.0", i + 1);
        fs.add_file(&format!("{d}/config"), c);
        fs.add_file(&format!("{d}/class"), "0x060400\n");
    }
    fs.add_file("/proc/self/cgroup", "0::/../../etc\n");
    fs.add_file("/sys/fs/cgroup/cpuset.cpus.effective", "0-1\n");
    fs.add_file("/sys/firmware/dmi/entries/17-0/raw", vec![17u8; 40]);
    fs.add_file(
        "/proc/driver/nvidia/gpus/0000:00:01.0/numa_status",
        "Node: -5\nMemory: x\n",
    );
    let t = discover(&fs, &Options::default(), topo_all()).unwrap();
    t.check().unwrap();
    assert_eq!(count(&t, ObjType::PU), 2);
}

#[test]
fn many_cpus_without_topology_stay_fast() {
    let mut fs = MemFs::new();
    let n = 4096;
    fs.add_file(&format!("{CPU}/online"), format!("0-{}\n", n - 1));
    for c in 0..n {
        fs.add_file(&format!("{CPU}/cpu{c}/topology/core_cpus"), "");
    }
    let start = std::time::Instant::now();
    let t = discover(&fs, &Options::default(), topo_all()).unwrap();
    assert_eq!(count(&t, ObjType::PU), n);
    assert!(start.elapsed().as_secs() < 60);
}

#[test]
fn read_many_is_used_for_batches() {
    use std::cell::Cell;
    struct Counting<'a> {
        inner: &'a MemFs,
        singles: Cell<usize>,
        batches: Cell<usize>,
    }
    impl FsAccess for Counting<'_> {
        fn read(&self, path: &str) -> Option<Vec<u8>> {
            self.singles.set(self.singles.get() + 1);
            self.inner.read(path)
        }
        fn read_many(&self, paths: &[&str]) -> Vec<Option<Vec<u8>>> {
            self.batches.set(self.batches.get() + 1);
            paths.iter().map(|p| self.inner.read(p)).collect()
        }
        fn list(&self, dir: &str) -> Option<Vec<String>> {
            self.inner.list(dir)
        }
        fn read_link(&self, path: &str) -> Option<String> {
            self.inner.read_link(path)
        }
    }
    let fs = machine(2, 4, 2);
    let c = Counting {
        inner: &fs,
        singles: Cell::new(0),
        batches: Cell::new(0),
    };
    let t = discover(&c, &Options::default(), topo_all()).unwrap();
    assert_eq!(count(&t, ObjType::PU), 16);
    // Per-CPU files come in batches: the single reads do not grow with
    // the number of CPUs.
    assert!(c.singles.get() < 60, "{} single reads", c.singles.get());
}

#[test]
#[ignore = "benchmark: cargo test -p wloc-linux --release -- --ignored big_machine"]
fn big_machine() {
    let fs = machine(32, 64, 2);
    let start = std::time::Instant::now();
    let t = discover(&fs, &Options::default(), topo_all()).unwrap();
    eprintln!("4096 PUs discovered in {:?}", start.elapsed());
    assert_eq!(count(&t, ObjType::PU), 4096);
}

#[test]
fn cgroup_allowing_nothing_is_ignored() {
    let mut fs = machine(2, 1, 1);
    fs.add_file("/sys/fs/cgroup/cpuset.cpus.effective", "40-41\n");
    fs.add_file("/sys/fs/cgroup/cpuset.mems.effective", "7\n");
    fs.add_file("/proc/self/cgroup", "0::/\n");
    let t = discover(&fs, &Options::default(), topo_all()).unwrap();
    t.check().unwrap();
    assert_eq!(count(&t, ObjType::PU), 2);
    assert_eq!(t.level(Depth::NumaNode).len(), 2);
}

#[test]
fn gpu_numa_nodes_dax_and_s390_books() {
    let mut fs = machine(2, 1, 1);
    fs.add_file(&format!("{NODE}/online"), "0-2\n");
    fs.add_file(&format!("{NODE}/node2/cpumap"), "0\n");
    fs.add_file(
        &format!("{NODE}/node2/meminfo"),
        "Node 2 MemTotal: 4096 kB\n",
    );
    fs.add_file(
        "/proc/driver/nvidia/gpus/0000:04:00.0/numa_status",
        "Node: 2\nStatus: online\n",
    );
    fs.add_file("/sys/bus/pci/devices/0000:04:00.0/local_cpus", mask(&[1]));
    let t = discover(&fs, &Options::default(), topo_all()).unwrap();
    let gpu = t
        .level(Depth::NumaNode)
        .iter()
        .copied()
        .find(|&n| t.obj(n).os_index == Some(2))
        .unwrap();
    assert_eq!(t.obj(gpu).subtype.as_deref(), Some("GPUMemory"));
    assert_eq!(t.obj(gpu).info("PCIBusID"), Some("0000:04:00.0"));
    // Hidden on POWER by default.
    fs.add_file("/proc/hwloc-nofile-info", "Architecture: ppc64le\n");
    let t = discover(&fs, &Options::default(), topo_all()).unwrap();
    assert_eq!(t.level(Depth::NumaNode).len(), 2);
    let opts = Options {
        keep_nvidia_gpu_numa_nodes: Some(true),
        ..Options::default()
    };
    assert_eq!(
        discover(&fs, &opts, topo_all())
            .unwrap()
            .level(Depth::NumaNode)
            .len(),
        3
    );

    // A DAX device in kmem mode backs node 1, another one is an OS device.
    let mut fs = machine(2, 1, 1);
    fs.add_file("/sys/bus/dax/devices/dax0.0/target_node", "1\n");
    fs.add_link(
        "/sys/bus/dax/drivers/kmem/dax0.0",
        "../../../../devices/platform/hmem.0/dax0.0",
    );
    fs.add_link(
        "/sys/bus/dax/devices/dax0.0",
        "../../../devices/platform/hmem.0/dax0.0",
    );
    fs.add_file("/sys/devices/platform/hmem.0/dax0.0/target_node", "1\n");
    fs.add_file(
        "/sys/devices/platform/ndbus0/region1/dax1.0/dax1.0/size",
        "1073741824\n",
    );
    fs.add_file(
        "/sys/devices/platform/ndbus0/region1/dax1.0/numa_node",
        "0\n",
    );
    fs.add_link(
        "/sys/bus/dax/devices/dax1.0",
        "../../../devices/platform/ndbus0/region1/dax1.0/dax1.0",
    );
    let t = discover(&fs, &Options::default(), topo_all()).unwrap();
    t.check().unwrap();
    let n1 = t.level(Depth::NumaNode)[1];
    assert_eq!(t.obj(n1).info("DAXType"), Some("SPM"));
    assert_eq!(t.obj(n1).info("DAXParent"), Some("hmem.0"));
    let osdevs = t.objs_by_type(ObjType::OSDevice);
    assert_eq!(osdevs.len(), 1);
    let dax = t.obj(osdevs[0]);
    assert_eq!(dax.subtype.as_deref(), Some("NVM"));
    assert_eq!(dax.info("Size"), Some("1048576KiB"));

    // s390 books and drawers become groups.
    let mut fs = machine(4, 1, 1);
    fs.add_file("/proc/hwloc-nofile-info", "Architecture: s390x\n");
    for c in 0..4 {
        let t = format!("{CPU}/cpu{c}/topology");
        let book: &[u32] = if c < 2 { &[0, 1] } else { &[2, 3] };
        fs.add_file(&format!("{t}/book_siblings"), mask(book));
        fs.add_file(&format!("{t}/book_id"), format!("{}\n", c / 2));
        fs.add_file(&format!("{t}/drawer_siblings"), mask(&[0, 1, 2, 3]));
        fs.add_file(&format!("{t}/drawer_id"), "0\n");
    }
    let t = discover(&fs, &Options::default(), topo_all()).unwrap();
    t.check().unwrap();
    let groups = t.objs_by_type(ObjType::Group);
    assert_eq!(groups.len(), 2);
    assert!(
        groups
            .iter()
            .all(|&g| t.obj(g).subtype.as_deref() == Some("Book"))
    );
}

#[test]
fn cpu_kinds_from_frequencies_and_capacities() {
    let mut fs = machine(1, 4, 1);
    for c in 0..4 {
        let max = if c < 2 { "3000000\n" } else { "2000000\n" };
        fs.add_file(&format!("{CPU}/cpu{c}/cpufreq/cpuinfo_max_freq"), max);
        fs.add_file(
            &format!("{CPU}/cpu{c}/cpu_capacity"),
            if c < 2 { "1024\n" } else { "512\n" },
        );
    }
    let t = discover(&fs, &Options::default(), topo_all()).unwrap();
    assert_eq!(t.cpukinds.len(), 2);
    for k in &t.cpukinds {
        assert!(k.infos.iter().any(|i| i.name == "FrequencyMaxMHz"));
        assert!(k.infos.iter().any(|i| i.name == "LinuxCapacity"));
        assert!(k.forced_efficiency.is_some());
    }
    let opts = Options {
        cpukinds: Some("none".into()),
        ..Options::default()
    };
    assert!(
        discover(&fs, &opts, topo_all())
            .unwrap()
            .cpukinds
            .is_empty()
    );
}

/// CPU kinds from capacities on AMD machines: hwloc 2.14 does not look for
/// them before Zen 5 (family 0x1a) unless `HWLOC_LINUX_CPUKINDS` asks;
/// kinds found keep their capacity as forced efficiency.
#[test]
fn cpu_kinds_from_capacities_on_amd() {
    let run = |family: u32, linux_cpukinds: Option<&str>| {
        let mut fs = machine(1, 4, 1);
        for c in 0..4 {
            fs.add_file(
                &format!("{CPU}/cpu{c}/cpu_capacity"),
                if c < 2 { "1024\n" } else { "512\n" },
            );
        }
        let cpuinfo: String = (0..4)
            .map(|p| {
                format!("processor\t: {p}\nvendor_id\t: AuthenticAMD\ncpu family\t: {family}\n\n")
            })
            .collect();
        fs.add_file("/proc/cpuinfo", cpuinfo);
        let opts = Options {
            linux_cpukinds: linux_cpukinds.map(String::from),
            ..Options::default()
        };
        let t = discover(&fs, &opts, topo_all()).unwrap();
        let mut eff: Vec<Option<i32>> = t.cpukinds.iter().map(|k| k.forced_efficiency).collect();
        eff.sort();
        eff
    };
    assert_eq!(run(25, None), []);
    assert_eq!(run(25, Some("1")), [Some(512), Some(1024)]);
    assert_eq!(run(26, None), [Some(512), Some(1024)]);
    assert_eq!(run(26, Some("none")), []);
}

/// A machine without NUMA nodes in sysfs takes its huge pages from
/// `/sys/kernel/mm/hugepages`, every size of it, as hwloc does.
#[test]
fn numa_less_huge_pages_from_sysfs() {
    let mut fs = machine(1, 2, 1);
    fs.remove(&format!("{NODE}/online"));
    fs.remove(NODE);
    fs.add_file(
        "/proc/meminfo",
        "MemTotal: 4194304 kB\nHugePages_Total: 0\nHugepagesize: 2048 kB\n",
    );
    fs.add_file(
        "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
        "3\n",
    );
    fs.add_file(
        "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages",
        "1\n",
    );
    let t = discover(&fs, &Options::default(), topo_all()).unwrap();
    let node = t.objs_by_type(ObjType::NUMANode)[0];
    let attr = t.obj(node).numa().unwrap().clone();
    let mut pages: Vec<(u64, u64)> = attr.page_types.iter().map(|p| (p.size, p.count)).collect();
    pages.sort();
    let rest = (4194304 * 1024 - 3 * 2097152 - 1073741824) / 4096;
    assert_eq!(pages, [(4096, rest), (2097152, 3), (1073741824, 1)]);
}

#[test]
fn options_from_environment_lookup() {
    let env = |name: &str| -> Option<String> {
        match name {
            "KEEP_NVIDIA_GPU_NUMA_NODES" => Some("0".into()),
            "PCI_LOCALITY" => Some("0000:00 0x1".into()),
            "USE_NUMA_DISTANCES" => Some("99".into()),
            "GROUPING" => Some("0".into()),
            "VIRTUAL_LINUX_OSDEV" => Some("1".into()),
            _ => None,
        }
    };
    let o = Options::from_lookup(env);
    assert_eq!(o.keep_nvidia_gpu_numa_nodes, Some(false));
    assert_eq!(o.pci_locality.as_deref(), Some("0000:00 0x1"));
    assert_eq!(o.use_numa_distances, Some(7));
    assert_eq!(o.grouping, Some(false));
    assert!(o.virtual_osdev);
    assert_eq!(Options::from_lookup(|_| None), Options::default());
}

#[test]
fn this_system_reads_kernel_names() {
    let mut fs = machine(1, 1, 1);
    fs.add_file("/proc/sys/kernel/ostype", "Linux\n");
    fs.add_file("/proc/sys/kernel/osrelease", "6.1.0\n");
    fs.add_file("/proc/sys/kernel/hostname", "box\n");
    let opts = Options {
        this_system: true,
        machine: Some("aarch64".into()),
        ..Options::default()
    };
    let t = discover(&fs, &opts, topo_all()).unwrap();
    let info = |n: &str| {
        t.infos
            .iter()
            .find(|i| i.name == n)
            .map(|i| i.value.as_str())
    };
    assert_eq!(info("OSRelease"), Some("6.1.0"));
    assert_eq!(info("HostName"), Some("box"));
    assert_eq!(info("Architecture"), Some("aarch64"));
}

/// A PCI Express device without sysfs link files: on a kernel that has
/// them (4.13 and later), it has no PCI Express capability, so config
/// space is not read; on older kernels the link comes from config space.
/// A machine with one network function at 0000:00:02.0 whose config space
/// has a PCI Express capability with link status `lnksta` (low byte).
fn machine_with_pcie_function(lnksta: u8) -> (MemFs, &'static str) {
    let mut fs = machine(1, 1, 1);
    let d = "/sys/devices/pci0000:00/0000:00:02.0";
    let mut cfg = vec![0u8; 256];
    cfg[0x06] = 0x10; // capability list present
    cfg[0x34] = 0x40;
    cfg[0x40] = 0x10; // PCI Express
    cfg[0x40 + 0x12] = lnksta;
    fs.add_file(&format!("{d}/config"), cfg);
    fs.add_file(&format!("{d}/class"), "0x020000\n");
    fs.add_file(&format!("{d}/vendor"), "0x8086\n");
    fs.add_file(&format!("{d}/device"), "0x1234\n");
    fs.add_file(&format!("{d}/revision"), "0x01\n");
    fs.add_link(
        "/sys/bus/pci/devices/0000:00:02.0",
        "../../../devices/pci0000:00/0000:00:02.0",
    );
    (fs, d)
}

#[test]
fn pci_link_speed_from_config_only_on_old_kernels() {
    let (fs, _) = machine_with_pcie_function(0x43); // 8 GT/s x4
    let speed = |release: &str| {
        let mut fs = fs.clone();
        fs.add_file("/proc/sys/kernel/osrelease", format!("{release}\n"));
        let opts = Options {
            this_system: true,
            ..Options::default()
        };
        let t = discover(&fs, &opts, topo_all()).unwrap();
        let dev = t.objs_by_type(ObjType::PCIDevice)[0];
        t.obj(dev).pci().unwrap().linkspeed
    };
    assert!((speed("4.9.0-8-amd64") - 3.938).abs() < 0.01);
    assert!(
        (speed("") - 3.938).abs() < 0.01,
        "unknown release reads config"
    );
    assert_eq!(speed("6.1.0-13-amd64"), 0.0);
}

/// A root complex integrated endpoint: the kernel's link files say
/// `Unknown` and 0, but config space has link status (hwloc reads it there
/// first).  A function whose link files give a speed keeps that one.
#[test]
fn pci_link_speed_from_config_when_sysfs_says_unknown() {
    let (mut fs, d) = machine_with_pcie_function(0x11); // 2.5 GT/s x1
    fs.add_file(&format!("{d}/current_link_speed"), "Unknown\n");
    fs.add_file(&format!("{d}/current_link_width"), "0\n");
    let speed = |fs: &MemFs| {
        let t = discover(fs, &Options::default(), topo_all()).unwrap();
        let dev = t.objs_by_type(ObjType::PCIDevice)[0];
        t.obj(dev).pci().unwrap().linkspeed
    };
    assert!((speed(&fs) - 0.25).abs() < 0.001);
    fs.add_file(&format!("{d}/current_link_speed"), "8.0 GT/s PCIe\n");
    fs.add_file(&format!("{d}/current_link_width"), "4\n");
    assert!(
        (speed(&fs) - 3.938).abs() < 0.01,
        "known link files are used without reading config space"
    );
}

/// Objects get their gp indexes in hwloc's allocation order: a NUMA node
/// before the Group its insertion creates (here one as large as the
/// machine, dropped at once, which hwloc numbers too); PCI functions in
/// `readdir` order (name order for a recording), counting the host bridge
/// device that the topology drops later, then the host bridges.
#[test]
fn gp_indexes_follow_hwloc_allocation_order() {
    let mut fs = machine(2, 1, 1);
    fs.add_file(&format!("{NODE}/online"), "0\n");
    fs.add_file(&format!("{NODE}/node0/cpumap"), mask(&[0, 1]));
    let dev = "/sys/devices/pci0000:00";
    let mut bridge_cfg = vec![0u8; 64];
    bridge_cfg[0x0e] = 1;
    bridge_cfg[0x19] = 1;
    bridge_cfg[0x1a] = 1;
    fs.add_file(&format!("{dev}/0000:00:00.0/class"), "0x060000\n");
    fs.add_file(&format!("{dev}/0000:00:01.0/class"), "0x060400\n");
    fs.add_file(&format!("{dev}/0000:00:01.0/config"), bridge_cfg);
    fs.add_file(
        &format!("{dev}/0000:00:01.0/0000:01:00.0/class"),
        "0x020000\n",
    );
    for (name, path) in [
        ("0000:01:00.0", "0000:00:01.0/0000:01:00.0"),
        ("0000:00:01.0", "0000:00:01.0"),
        ("0000:00:00.0", "0000:00:00.0"),
    ] {
        fs.add_link(
            &format!("/sys/bus/pci/devices/{name}"),
            &format!("../../../devices/pci0000:00/{path}"),
        );
    }
    // Important I/O only (hwloc's default): the host bridge device is
    // numbered, then dropped as useless.
    let mut topo = topo_all();
    topo.set_io_types_filter(TypeFilter::KeepImportant);
    let t = discover(&fs, &Options::default(), topo).unwrap();
    t.check().unwrap();
    let gp = |ty: ObjType| -> Vec<u64> {
        t.objs_by_type(ty)
            .iter()
            .map(|&o| t.obj(o).gp_index)
            .collect()
    };
    let cpu_side = [
        ObjType::Package,
        ObjType::L3Cache,
        ObjType::L2Cache,
        ObjType::L1Cache,
        ObjType::Core,
        ObjType::PU,
    ];
    let last_cpu = cpu_side.iter().flat_map(|&ty| gp(ty)).max().unwrap();
    assert_eq!(gp(ObjType::NUMANode), vec![last_cpu + 1]);
    // + 2: the Group dropped at once; + 3: the host bridge device, dropped
    // later; + 4: the PCI bridge; + 5: the NIC; + 6: the host bridge.
    let nic = gp(ObjType::PCIDevice);
    let mut bridges = gp(ObjType::Bridge);
    bridges.sort_unstable();
    assert_eq!(nic, vec![last_cpu + 5]);
    assert_eq!(bridges, vec![last_cpu + 4, last_cpu + 6]);
}

/// Memory tiers follow hwloc 2.14 (the core's rules): an SPM node (from
/// its DAX device) and a plain one make two tiers, each node names its
/// tier in `MemoryTier` and the topology counts them in `MemoryTiersNr`,
/// after its other infos; a node the cgroup disallows is left out.
#[test]
fn memory_tiers_of_a_discovered_machine() {
    let mut fs = machine(2, 1, 1);
    fs.add_file("/sys/bus/dax/devices/dax0.0/target_node", "1\n");
    fs.add_link(
        "/sys/bus/dax/drivers/kmem/dax0.0",
        "../../../../devices/platform/hmem.0/dax0.0",
    );
    fs.add_link(
        "/sys/bus/dax/devices/dax0.0",
        "../../../devices/platform/hmem.0/dax0.0",
    );
    fs.add_file("/sys/devices/platform/hmem.0/dax0.0/target_node", "1\n");
    let t = discover(&fs, &Options::default(), topo_all()).unwrap();
    let tier = |t: &Topology, os: u32| {
        let n = t
            .level(Depth::NumaNode)
            .iter()
            .copied()
            .find(|&n| t.obj(n).os_index == Some(os))
            .unwrap();
        (
            t.obj(n).subtype.clone(),
            t.obj(n).info("MemoryTier").map(String::from),
        )
    };
    assert_eq!(tier(&t, 0), (None, Some("0".into())));
    assert_eq!(tier(&t, 1), (Some("SPM".into()), Some("1".into())));
    let last = t.infos.last().unwrap();
    assert_eq!(
        (last.name.as_str(), last.value.as_str()),
        ("MemoryTiersNr", "2")
    );
    assert_eq!(t.obj(t.root()).info("MemoryTiersNr"), None);
    assert_eq!(t.memtiers.len(), 2);

    // HWLOC_MEMTIERS forces them; a value that does not parse is ignored.
    let forced = Options {
        memtiers: Some("0x3=HBM".into()),
        ..Options::default()
    };
    let t = discover(&fs, &forced, topo_all()).unwrap();
    assert_eq!(tier(&t, 0), (Some("HBM".into()), None));
    let bad = Options {
        memtiers: Some("0x0=HBM".into()),
        ..Options::default()
    };
    let t = discover(&fs, &bad, topo_all()).unwrap();
    assert_eq!(tier(&t, 1), (Some("SPM".into()), Some("1".into())));

    // A single plain tier: nothing to say.
    let t = discover(&machine(2, 1, 1), &Options::default(), topo_all()).unwrap();
    assert_eq!(tier(&t, 0), (None, None));
    assert!(t.memtiers.is_empty());
    assert!(t.infos.iter().all(|i| i.name != "MemoryTiersNr"));
}

/// A Xeon Phi (KNL) in Quadrant-Hybrid50 mode: two NUMA nodes (DDR with
/// the CPUs, CPU-less MCDRAM), the modes from hwloc-dump-hwdata's file.
fn knl(hwdata: Option<&str>) -> MemFs {
    let mut fs = machine(1, 4, 1);
    let mut cpuinfo = String::new();
    for c in 0..4 {
        cpuinfo.push_str(&format!(
            "processor\t: {c}\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 87\nphysical id\t: 0\ncore id\t\t: {c}\n\n"
        ));
    }
    fs.add_file("/proc/cpuinfo", cpuinfo);
    for c in 0..4 {
        // sysfs gives a KNL's L3 no size: the quirk makes it.
        fs.add_file(&format!("{CPU}/cpu{c}/cache/index2/size"), "0K\n");
    }
    fs.add_file(&format!("{NODE}/online"), "0-1\n");
    fs.add_file(&format!("{NODE}/node1/cpumap"), mask(&[]));
    fs.add_file(
        &format!("{NODE}/node1/meminfo"),
        "Node 1 MemTotal: 2048 kB\n",
    );
    fs.add_file(&format!("{NODE}/node0/distance"), "10 31\n");
    fs.add_file(&format!("{NODE}/node1/distance"), "31 10\n");
    if let Some(h) = hwdata {
        fs.add_file("/var/run/hwloc/knl_memoryside_cache", h.to_string());
    }
    fs
}

#[test]
fn knl_modes_clusters_and_mcdram_cache() {
    let hwdata = "version: 2\ncache_size: 8589934592\nassociativity: 1\ninclusiveness: 1\nline_size: 64\ncluster_mode: Quadrant\nmemory_mode: Hybrid50\n";
    let fs = knl(Some(hwdata));
    let t = discover(&fs, &Options::default(), topo_all()).unwrap();
    t.check().unwrap();
    let root = t.obj(t.root());
    assert_eq!(root.info("ClusterMode"), Some("Quadrant"));
    assert_eq!(root.info("MemoryMode"), Some("Hybrid50"));
    let nodes = t.level(Depth::NumaNode);
    let sub: Vec<_> = nodes.iter().map(|&n| t.obj(n).subtype.clone()).collect();
    assert_eq!(sub, vec![Some("DRAM".into()), Some("MCDRAM".into())]);
    // The MCDRAM is local to the DDR's CPUs.
    assert_eq!(t.obj(nodes[1]).cpuset, t.obj(nodes[0]).cpuset);
    let l3: Vec<_> = t
        .objs_by_type(ObjType::L3Cache)
        .into_iter()
        .filter(|&c| t.obj(c).subtype.as_deref() == Some("MemorySideCache"))
        .collect();
    assert_eq!(l3.len(), 1);
    assert_eq!(t.obj(l3[0]).cache().unwrap().size, 8 << 30);
    assert_eq!(t.obj(l3[0]).info("Inclusive"), Some("1"));
    let bw = t.memattrs.iter().find(|m| m.name == "Bandwidth").unwrap();
    let mut v: Vec<u64> = bw.values.iter().map(|v| v.value).collect();
    v.sort_unstable();
    assert_eq!(v, vec![90000, 360000]);
    // The bandwidths make two tiers, MCDRAM first.
    assert_eq!(t.obj(nodes[1]).info("MemoryTier"), Some("0"));
    // No NUMA distances kept, as hwloc.
    assert!(t.distances.is_empty());

    // HWLOC_KNL_MSCACHE_L3=0: a memory-side cache in front of the DDR.
    let msc = Options {
        knl_mscache_l3: Some(false),
        ..Options::default()
    };
    let t = discover(&fs, &msc, topo_all()).unwrap();
    t.check().unwrap();
    assert_eq!(t.objs_by_type(ObjType::MemCache).len(), 1);

    // Without the file: guessed Quadrant-Flat, no cache.
    let t = discover(&knl(None), &Options::default(), topo_all()).unwrap();
    assert_eq!(t.obj(t.root()).info("MemoryMode"), Some("Flat"));
    assert_eq!(t.objs_by_type(ObjType::MemCache).len(), 0);
    // HWLOC_KNL_NUMA_QUIRK=0, or modes that do not fit: plain nodes.
    let off = Options {
        knl_numa_quirk: Some(false),
        ..Options::default()
    };
    let t = discover(&fs, &off, topo_all()).unwrap();
    assert_eq!(t.obj(t.root()).info("ClusterMode"), None);
    let bad = knl(Some("version: 2\ncluster_mode: SNC4\nmemory_mode: Cache\n"));
    let t = discover(&bad, &Options::default(), topo_all()).unwrap();
    t.check().unwrap();
    assert_eq!(t.obj(t.root()).info("ClusterMode"), None);
    assert_eq!(t.level(Depth::NumaNode).len(), 2);
}
