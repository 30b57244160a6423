//! Whole Linux discovery over an in-memory tree built from fuzzer input:
//! a small well-formed machine (CPUs, caches, NUMA nodes with distances,
//! cgroup, PCI devices with OS devices) whose files the input replaces,
//! removes, or turns into links, plus arbitrary discovery settings.  No
//! input may panic or hang, and every topology returned must pass the
//! model's consistency check.
#![no_main]

use std::collections::BTreeMap;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use wloc_core::{Topology, TypeFilter};
use wloc_linux::{MemFs, Options, discover};

const CPU: &str = "/sys/devices/system/cpu";
const NODE: &str = "/sys/devices/system/node";
const PCI: &str = "/sys/devices/pci0000:00";

/// Paths the discovery reads; `{c}` is a CPU, `{n}` a node, `{i}` a small
/// index, `{d}` a PCI device of the base machine.
const PATHS: &[&str] = &[
    "/sys/devices/system/cpu/online",
    "/sys/devices/system/cpu/possible",
    "/sys/devices/system/cpu/present",
    "/sys/devices/system/cpu/cpu{c}",
    "/sys/devices/system/cpu/cpu{c}/online",
    "/sys/devices/system/cpu/cpu{c}/topology",
    "/sys/devices/system/cpu/cpu{c}/topology/core_cpus",
    "/sys/devices/system/cpu/cpu{c}/topology/thread_siblings",
    "/sys/devices/system/cpu/cpu{c}/topology/core_siblings",
    "/sys/devices/system/cpu/cpu{c}/topology/package_cpus",
    "/sys/devices/system/cpu/cpu{c}/topology/die_cpus",
    "/sys/devices/system/cpu/cpu{c}/topology/cluster_cpus",
    "/sys/devices/system/cpu/cpu{c}/topology/core_id",
    "/sys/devices/system/cpu/cpu{c}/topology/die_id",
    "/sys/devices/system/cpu/cpu{c}/topology/cluster_id",
    "/sys/devices/system/cpu/cpu{c}/topology/physical_package_id",
    "/sys/devices/system/cpu/cpu{c}/topology/book_id",
    "/sys/devices/system/cpu/cpu{c}/topology/book_siblings",
    "/sys/devices/system/cpu/cpu{c}/topology/drawer_id",
    "/sys/devices/system/cpu/cpu{c}/topology/drawer_siblings",
    "/sys/devices/system/cpu/cpu{c}/cache/index{i}",
    "/sys/devices/system/cpu/cpu{c}/cache/index{i}/level",
    "/sys/devices/system/cpu/cpu{c}/cache/index{i}/type",
    "/sys/devices/system/cpu/cpu{c}/cache/index{i}/size",
    "/sys/devices/system/cpu/cpu{c}/cache/index{i}/coherency_line_size",
    "/sys/devices/system/cpu/cpu{c}/cache/index{i}/number_of_sets",
    "/sys/devices/system/cpu/cpu{c}/cache/index{i}/ways_of_associativity",
    "/sys/devices/system/cpu/cpu{c}/cache/index{i}/physical_line_partition",
    "/sys/devices/system/cpu/cpu{c}/cache/index{i}/shared_cpu_map",
    "/sys/devices/system/cpu/cpu{c}/cache/index{i}/shared_cpu_list",
    "/sys/devices/system/cpu/cpu{c}/cache/index{i}/id",
    "/sys/devices/system/cpu/cpu{c}/cpufreq/cpuinfo_max_freq",
    "/sys/devices/system/cpu/cpu{c}/cpufreq/base_frequency",
    "/sys/devices/system/cpu/cpu{c}/cpu_capacity",
    "/sys/devices/system/cpu/cpu{c}/acpi_cppc/nominal_freq",
    "/sys/devices/system/cpu/cpu{c}/acpi_cppc/highest_perf",
    "/sys/devices/system/cpu/cpu{c}/regs/identification/midr_el1",
    "/sys/devices/system/cpu/cpu{c}/node{n}",
    "/sys/devices/cpu_atom/cpus",
    "/sys/devices/cpu_core/cpus",
    "/sys/devices/system/node/online",
    "/sys/devices/system/node/possible",
    "/sys/devices/system/node/has_cpu",
    "/sys/devices/system/node/has_memory",
    "/sys/devices/system/node/node{n}",
    "/sys/devices/system/node/node{n}/cpumap",
    "/sys/devices/system/node/node{n}/cpulist",
    "/sys/devices/system/node/node{n}/distance",
    "/sys/devices/system/node/node{n}/meminfo",
    "/sys/devices/system/node/node{n}/hugepages/hugepages-2048kB/nr_hugepages",
    "/sys/devices/system/node/node{n}/hugepages/hugepages-{i}kB/nr_hugepages",
    "/sys/devices/system/node/node{n}/memory_side_cache/index{i}/size",
    "/sys/devices/system/node/node{n}/memory_side_cache/index{i}/line_size",
    "/sys/devices/system/node/node{n}/memory_side_cache/index{i}/indexing",
    "/sys/devices/system/node/node{n}/access0/initiators/read_bandwidth",
    "/sys/devices/system/node/node{n}/access0/initiators/read_latency",
    "/sys/devices/system/node/node{n}/access0/initiators/node{i}",
    "/sys/devices/system/node/node{n}/access1/initiators/write_bandwidth",
    "/sys/devices/system/node/node{n}/memory_tier",
    "/sys/devices/virtual/memory_tiering/memory_tier{i}/nodelist",
    "/sys/kernel/mm/hugepages/hugepages-{i}kB/nr_hugepages",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/mounts",
    "/proc/cmdline",
    "/proc/self/cgroup",
    "/proc/self/cpuset",
    "/proc/hwloc-nofile-info",
    "/proc/sys/kernel/osrelease",
    "/proc/driver/nvidia/gpus/{d}/numa_status",
    "/sys/fs/cgroup/cpuset.cpus.effective",
    "/sys/fs/cgroup/cpuset.mems.effective",
    "/sys/fs/cgroup/cgroup.controllers",
    "/sys/fs/cgroup/cpuset/cpuset.cpus",
    "/sys/fs/cgroup/cpuset/cpuset.mems",
    "/dev/cpuset/cpus",
    "/dev/cpuset/mems",
    "/sys/class/dmi/id/board_vendor",
    "/sys/class/dmi/id/product_name",
    "/sys/firmware/dmi/entries/17-{i}/raw",
    "/sys/bus/soc/devices/soc{i}/soc_id",
    "/sys/bus/pci/devices",
    "/sys/bus/pci/devices/{d}",
    "/sys/bus/pci/slots/{i}/address",
    "/sys/devices/pci0000:00/{d}/class",
    "/sys/devices/pci0000:00/{d}/config",
    "/sys/devices/pci0000:00/{d}/vendor",
    "/sys/devices/pci0000:00/{d}/device",
    "/sys/devices/pci0000:00/{d}/local_cpus",
    "/sys/devices/pci0000:00/{d}/numa_node",
    "/sys/devices/pci0000:00/{d}/current_link_speed",
    "/sys/devices/pci0000:00/{d}/current_link_width",
    "/sys/devices/pci0000:00/{d}/net/eth{i}/address",
    "/sys/devices/pci0000:00/{d}/nvme/nvme0/nvme0n1/size",
    "/sys/class/net/eth{i}",
    "/sys/class/block/nvme0n1",
    "/sys/class/block/nvme0n1/dev",
    "/sys/class/infiniband/mlx5_{i}",
    "/sys/class/drm/card{i}",
    "/sys/class/dma/dma{i}chan0",
    "/sys/bus/dax/devices/dax{i}.0",
    "/sys/bus/dax/devices/dax{i}.0/target_node",
    "/sys/bus/cxl/devices/region{i}",
    "/run/udev/data/b259:0",
];

/// Link targets: relative ones that sysfs uses, loops and escapes.
const TARGETS: &[&str] = &[
    ".",
    "..",
    "../..",
    "/",
    "self",
    "../../../devices/pci0000:00/0000:00:01.0",
    "../../devices/pci0000:00/0000:00:02.0/0000:01:00.0/net/eth0",
    "../../node/node0",
    "../../../devices/system/node/node1",
    "../../devices/platform/hmem.0/dax0.0",
    "../../../../../../../../../../etc",
];

const DEVICES: &[&str] = &["0000:00:01.0", "0000:00:02.0", "0000:00:02.0/0000:01:00.0"];

/// One entry of the tree being built.
#[derive(Clone, Debug)]
enum Entry {
    File(Vec<u8>),
    Link(String),
    Dir,
}

#[derive(Arbitrary, Debug)]
struct PathSel {
    template: u8,
    index: u8,
    /// A name appended below the template, to reach unlisted files.
    suffix: Option<String>,
}

impl PathSel {
    fn path(&self) -> String {
        let t = PATHS[self.template as usize % PATHS.len()];
        let i = self.index as u32;
        let mut p = t
            .replace("{c}", &(i % 9).to_string())
            .replace("{n}", &(i % 5).to_string())
            .replace("{i}", &(i % 4).to_string())
            .replace("{d}", DEVICES[i as usize % DEVICES.len()]);
        if let Some(s) = &self.suffix {
            p.push('/');
            p.push_str(s);
        }
        p
    }
}

#[derive(Arbitrary, Debug)]
enum Op {
    Write(PathSel, Vec<u8>),
    /// Replaces a file's content with text, which reaches the parsers
    /// quicker than raw bytes.
    Text(PathSel, String),
    Truncate(PathSel, u8),
    Remove(PathSel),
    Link(PathSel, u8),
    LinkTo(PathSel, String),
    Dir(PathSel),
}

#[derive(Arbitrary, Debug)]
struct Settings {
    this_system: bool,
    keep_nvidia_gpu_numa_nodes: Option<bool>,
    pci_locality: Option<String>,
    cpukinds: Option<String>,
    dont_merge_cluster_groups: bool,
    allow_overlapping_node_cpusets: u8,
    use_numa_distances: Option<u8>,
    grouping: Option<bool>,
    virtual_osdev: bool,
    memtiers: Option<String>,
    memtiers_guess: Option<String>,
    knl_numa_quirk: Option<bool>,
    knl_hdh_fallback: Option<i8>,
    knl_mscache_l3: Option<bool>,
    io_filter: u8,
    all_filter: u8,
    include_disallowed: bool,
}

#[derive(Arbitrary, Debug)]
struct Input {
    /// Packages, cores, threads and NUMA nodes of the base machine (each
    /// taken modulo a small number), and what it has (bits: cgroup v2,
    /// cgroup v1, PCI, HMAT and memory-side caches, no cpuinfo).
    shape: [u8; 5],
    settings: Settings,
    ops: Vec<Op>,
}

/// A kernel cpumask (32-bit words, most significant first).
fn mask(cpus: impl IntoIterator<Item = u32>) -> String {
    let mut words = vec![0u32; 2];
    for c in cpus {
        let w = c as usize / 32;
        if words.len() <= w {
            words.resize(w + 1, 0);
        }
        words[w] |= 1 << (c % 32);
    }
    let v: Vec<String> = words.iter().rev().map(|w| format!("{w:08x}")).collect();
    format!("{}\n", v.join(","))
}

/// The base machine: `p` packages of `c` cores of `t` threads, `n` NUMA
/// nodes (spread over the packages), with caches and optional parts.
fn base(shape: [u8; 5]) -> BTreeMap<String, Entry> {
    let p = shape[0] as u32 % 3 + 1;
    let c = shape[1] as u32 % 3 + 1;
    let t = shape[2] as u32 % 2 + 1;
    let n = (shape[3] as u32 % 4).max(1);
    let flags = shape[4];
    let mut fs: BTreeMap<String, Entry> = BTreeMap::new();
    fn put(fs: &mut BTreeMap<String, Entry>, path: String, content: String) {
        fs.insert(path, Entry::File(content.into_bytes()));
    }
    let total = p * c * t;
    put(
        &mut fs,
        format!("{CPU}/online"),
        format!("0-{}\n", total - 1),
    );
    put(
        &mut fs,
        format!("{CPU}/possible"),
        format!("0-{}\n", total + 1),
    );
    put(&mut fs, format!("{NODE}/online"), format!("0-{}\n", n - 1));
    let mut cpuinfo = String::new();
    for pk in 0..p {
        let pcpus = pk * c * t..(pk + 1) * c * t;
        for co in 0..c {
            let first = (pk * c + co) * t;
            let ccpus = first..first + t;
            for cpu in ccpus.clone() {
                let tp = format!("{CPU}/cpu{cpu}/topology");
                put(&mut fs, format!("{tp}/core_cpus"), mask(ccpus.clone()));
                put(
                    &mut fs,
                    format!("{tp}/thread_siblings"),
                    mask(ccpus.clone()),
                );
                put(&mut fs, format!("{tp}/package_cpus"), mask(pcpus.clone()));
                put(&mut fs, format!("{tp}/core_siblings"), mask(pcpus.clone()));
                put(&mut fs, format!("{tp}/die_cpus"), mask(pcpus.clone()));
                put(&mut fs, format!("{tp}/cluster_cpus"), mask(ccpus.clone()));
                put(&mut fs, format!("{tp}/core_id"), format!("{co}\n"));
                put(&mut fs, format!("{tp}/die_id"), "0\n".into());
                put(
                    &mut fs,
                    format!("{tp}/physical_package_id"),
                    format!("{pk}\n"),
                );
                let caches: [(u32, &str, String, &str); 4] = [
                    (1, "Data", mask(ccpus.clone()), "32K"),
                    (1, "Instruction", mask(ccpus.clone()), "32K"),
                    (2, "Unified", mask(ccpus.clone()), "1024K"),
                    (3, "Unified", mask(pcpus.clone()), "16384K"),
                ];
                for (j, (level, kind, set, size)) in caches.into_iter().enumerate() {
                    let d = format!("{CPU}/cpu{cpu}/cache/index{j}");
                    put(&mut fs, format!("{d}/level"), format!("{level}\n"));
                    put(&mut fs, format!("{d}/type"), format!("{kind}\n"));
                    put(&mut fs, format!("{d}/size"), format!("{size}\n"));
                    put(&mut fs, format!("{d}/coherency_line_size"), "64\n".into());
                    put(&mut fs, format!("{d}/number_of_sets"), "64\n".into());
                    put(&mut fs, format!("{d}/ways_of_associativity"), "8\n".into());
                    put(
                        &mut fs,
                        format!("{d}/physical_line_partition"),
                        "1\n".into(),
                    );
                    put(&mut fs, format!("{d}/shared_cpu_map"), set);
                    put(
                        &mut fs,
                        format!("{d}/id"),
                        format!("{}\n", if level == 3 { pk } else { first }),
                    );
                }
                put(
                    &mut fs,
                    format!("{CPU}/cpu{cpu}/cpufreq/cpuinfo_max_freq"),
                    format!("{}\n", 2_000_000 + 100_000 * (cpu % 2)),
                );
                cpuinfo.push_str(&format!(
                    "processor\t: {cpu}\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nmodel name\t: Fuzz CPU\nstepping\t: 4\nphysical id\t: {pk}\ncore id\t\t: {co}\n\n"
                ));
            }
        }
    }
    if flags & 16 == 0 {
        put(&mut fs, "/proc/cpuinfo".into(), cpuinfo);
    }
    // Nodes take the packages in turn; extra nodes have no CPU.
    for node in 0..n {
        let cpus: Vec<u32> = if node < p {
            (0..p)
                .filter(|pk| pk % n == node)
                .flat_map(|pk| pk * c * t..(pk + 1) * c * t)
                .collect()
        } else {
            Vec::new()
        };
        let d = format!("{NODE}/node{node}");
        put(&mut fs, format!("{d}/cpumap"), mask(cpus));
        let dist: Vec<String> = (0..n)
            .map(|o| {
                if o == node {
                    "10".into()
                } else {
                    format!("{}", 20 + o + node)
                }
            })
            .collect();
        put(
            &mut fs,
            format!("{d}/distance"),
            format!("{}\n", dist.join(" ")),
        );
        put(
            &mut fs,
            format!("{d}/meminfo"),
            format!(
                "Node {node} MemTotal:       4194304 kB\nNode {node} MemFree:        1024 kB\n"
            ),
        );
        put(
            &mut fs,
            format!("{d}/hugepages/hugepages-2048kB/nr_hugepages"),
            "4\n".into(),
        );
        if flags & 8 != 0 {
            put(
                &mut fs,
                format!("{d}/memory_side_cache/index1/size"),
                "1073741824\n".into(),
            );
            put(
                &mut fs,
                format!("{d}/memory_side_cache/index1/line_size"),
                "64\n".into(),
            );
            put(
                &mut fs,
                format!("{d}/memory_side_cache/index1/indexing"),
                "0\n".into(),
            );
            put(
                &mut fs,
                format!("{d}/access0/initiators/read_bandwidth"),
                "10000\n".into(),
            );
            put(
                &mut fs,
                format!("{d}/access0/initiators/read_latency"),
                "100\n".into(),
            );
        }
    }
    put(
        &mut fs,
        "/proc/meminfo".into(),
        "MemTotal:       16777216 kB\nHugepagesize:       2048 kB\n".into(),
    );
    put(
        &mut fs,
        "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages".into(),
        "0\n".into(),
    );
    put(
        &mut fs,
        "/sys/class/dmi/id/board_vendor".into(),
        "Fuzz Inc.\n".into(),
    );
    put(
        &mut fs,
        "/proc/hwloc-nofile-info".into(),
        "OSName: Linux\nArchitecture: x86_64\nFallbackNbProcessors: 4\nPageSize: 4096\n".into(),
    );
    if flags & 1 != 0 {
        put(
            &mut fs,
            "/sys/fs/cgroup/cpuset.cpus.effective".into(),
            format!("0-{}\n", total.saturating_sub(2)),
        );
        put(
            &mut fs,
            "/sys/fs/cgroup/cpuset.mems.effective".into(),
            "0\n".into(),
        );
        put(&mut fs, "/proc/self/cgroup".into(), "0::/\n".into());
    } else if flags & 2 != 0 {
        put(
            &mut fs,
            "/proc/mounts".into(),
            "cgroup /dev/cpuset cpuset rw 0 0\n".into(),
        );
        put(&mut fs, "/proc/self/cpuset".into(), "/job\n".into());
        put(&mut fs, "/dev/cpuset/job/cpus".into(), "1\n".into());
        put(&mut fs, "/dev/cpuset/job/mems".into(), "0\n".into());
    }
    if flags & 4 != 0 {
        let devs: [(&str, &str, &[u8]); 3] = [
            ("0000:00:01.0", "0x010802\n", &[0x86, 0x80, 0x53, 0x09]),
            ("0000:00:02.0", "0x060400\n", &[0x86, 0x80, 0x01, 0x02]),
            (
                "0000:00:02.0/0000:01:00.0",
                "0x020000\n",
                &[0xb3, 0x15, 0x17, 0x10],
            ),
        ];
        for (d, class, ids) in devs {
            let path = format!("{PCI}/{d}");
            put(&mut fs, format!("{path}/class"), class.into());
            let mut config = vec![0u8; 256];
            config[..4].copy_from_slice(ids);
            config[0x0e] = if class.starts_with("0x0604") { 1 } else { 0 };
            config[0x19] = 1;
            config[0x1a] = 1;
            config[0x34] = 0x40;
            config[0x40] = 0x10;
            config[0x52] = 0x43;
            fs.insert(format!("{path}/config"), Entry::File(config));
            put(&mut fs, format!("{path}/local_cpus"), mask(0..total));
            put(&mut fs, format!("{path}/numa_node"), "0\n".into());
            let name = d.rsplit('/').next().unwrap_or(d);
            fs.insert(
                format!("/sys/bus/pci/devices/{name}"),
                Entry::Link(format!("../../../devices/pci0000:00/{d}")),
            );
        }
        let eth = format!("{PCI}/0000:00:02.0/0000:01:00.0/net/eth0");
        fs.insert(
            format!("{eth}/address"),
            Entry::File(b"00:11:22:33:44:55\n".to_vec()),
        );
        fs.insert(
            format!("{eth}/device"),
            Entry::Link("../../../0000:01:00.0".into()),
        );
        fs.insert(
            "/sys/class/net/eth0".into(),
            Entry::Link("../../devices/pci0000:00/0000:00:02.0/0000:01:00.0/net/eth0".into()),
        );
        let blk = format!("{PCI}/0000:00:01.0/nvme/nvme0/nvme0n1");
        fs.insert(format!("{blk}/size"), Entry::File(b"2048\n".to_vec()));
        fs.insert(format!("{blk}/dev"), Entry::File(b"259:0\n".to_vec()));
        fs.insert(
            "/sys/class/block/nvme0n1".into(),
            Entry::Link("../../devices/pci0000:00/0000:00:01.0/nvme/nvme0/nvme0n1".into()),
        );
        fs.insert(
            "/run/udev/data/b259:0".into(),
            Entry::File(b"E:ID_SERIAL=fuzz\n".to_vec()),
        );
    }
    if flags & 8 != 0 {
        for node in 0..n {
            fs.insert(
                format!("{NODE}/node{node}/access0/initiators/node0"),
                Entry::Link("../../../node0".into()),
            );
        }
    }
    fs
}

fn filter(b: u8) -> TypeFilter {
    match b % 4 {
        0 => TypeFilter::KeepAll,
        1 => TypeFilter::KeepImportant,
        2 => TypeFilter::KeepStructure,
        _ => TypeFilter::KeepNone,
    }
}

fuzz_target!(|input: Input| {
    let mut tree = base(input.shape);
    for op in input.ops.iter().take(64) {
        match op {
            Op::Write(p, c) => {
                tree.insert(p.path(), Entry::File(c.clone()));
            }
            Op::Text(p, c) => {
                tree.insert(p.path(), Entry::File(c.clone().into_bytes()));
            }
            Op::Truncate(p, n) => {
                if let Some(Entry::File(c)) = tree.get_mut(&p.path()) {
                    c.truncate(*n as usize);
                }
            }
            Op::Remove(p) => {
                let path = p.path();
                let below = format!("{path}/");
                tree.retain(|k, _| *k != path && !k.starts_with(&below));
            }
            Op::Link(p, t) => {
                tree.insert(
                    p.path(),
                    Entry::Link(TARGETS[*t as usize % TARGETS.len()].into()),
                );
            }
            Op::LinkTo(p, t) => {
                tree.insert(p.path(), Entry::Link(t.clone()));
            }
            Op::Dir(p) => {
                tree.insert(p.path(), Entry::Dir);
            }
        }
    }
    let mut fs = MemFs::new();
    for (path, e) in &tree {
        match e {
            Entry::File(c) => fs.add_file(path, c.clone()),
            Entry::Link(t) => fs.add_link(path, t),
            Entry::Dir => fs.add_dir(path),
        };
    }
    let s = &input.settings;
    let opts = Options {
        this_system: s.this_system,
        machine: s.this_system.then(|| "x86_64".to_string()),
        keep_nvidia_gpu_numa_nodes: s.keep_nvidia_gpu_numa_nodes,
        pci_locality: s.pci_locality.clone(),
        cpukinds: s.cpukinds.clone(),
        linux_cpukinds: None,
        dont_merge_cluster_groups: s.dont_merge_cluster_groups,
        allow_overlapping_node_cpusets: (s.allow_overlapping_node_cpusets % 3) as u32,
        use_numa_distances: s.use_numa_distances.map(|v| (v % 8) as u32),
        grouping: s.grouping,
        virtual_osdev: s.virtual_osdev,
        memtiers: s.memtiers.clone(),
        memtiers_guess: s.memtiers_guess.clone(),
        sort_os_devices: false,
        memtiers_bandwidth_threshold: None,
        memtiers_latency_threshold: None,
        memtiers_refresh: false,
        dumped_hwdata_dir: None,
        knl_numa_quirk: s.knl_numa_quirk,
        knl_hdh_fallback: s.knl_hdh_fallback.map(i64::from),
        knl_mscache_l3: s.knl_mscache_l3,
    };
    let mut topo = Topology::new();
    topo.set_all_types_filter(filter(s.all_filter));
    topo.set_io_types_filter(filter(s.io_filter));
    topo.include_disallowed = s.include_disallowed;
    if let Ok(t) = discover(&fs, &opts, topo) {
        if let Err(e) = t.check() {
            panic!("discovery returned an inconsistent topology: {e}");
        }
    }
});
