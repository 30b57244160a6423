//! Boots the UEFI application (`probe/uefi`, built for
//! `aarch64-unknown-uefi`) in `qemu-system-aarch64 -M virt` with Debian's
//! AAVMF firmware for a matrix of machine configurations, and checks that
//! the topology it prints from the ACPI tables alone (MADT GICC
//! structures, PPTT, SRAT GICC affinity, SLIT, HMAT) is exactly the
//! configured one, and that `wloc` and hwloc 2.9's `lstopo-no-graphics`
//! read its XML back as that machine.
//!
//! Clusters are hwloc `Group` objects of subtype `Cluster`, as hwloc's
//! Linux backend shows ARM clusters; packages and clusters are named by
//! their PPTT offsets (QEMU does not mark their ids valid) and cores by
//! their processor's UID (or their offset, with threads), as Linux names
//! them.  QEMU 7.2's PPTT has no caches, so these machines have none.
//!
//! Needs `qemu-system-aarch64` and AAVMF (Debian packages
//! `qemu-system-arm` and `qemu-efi-aarch64`) and the
//! `aarch64-unknown-uefi` Rust target: the tests install them when they
//! are missing (as root), and fail saying what to install when they
//! cannot, unless `WLOC_SKIP_QEMU=1` skips them.

use crate::common;

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::qemu_boot::{Report, blocks, build_firmware, qemu_prerequisites, set};
use common::{TempDir, run_wloc};

const QEMU: &str = "qemu-system-aarch64";
const AAVMF_CODE: &str = "/usr/share/AAVMF/AAVMF_CODE.fd";
const AAVMF_VARS: &str = "/usr/share/AAVMF/AAVMF_VARS.fd";
const TARGET: &str = "aarch64-unknown-uefi";
/// Longest a boot may take before QEMU is killed (a boot takes about 7 s
/// alone under TCG; the tests boot several at once on two cores).
const BOOT_TIMEOUT: Duration = Duration::from_secs(180);
/// How many times a boot is tried when the firmware hangs before the
/// application begins (seen once in CI with 64 vCPUs: AAVMF printed its
/// banner and nothing for 240 s; the same boot takes 8 s). A hang after
/// the application began is never retried: that is wloc's.
const FIRMWARE_ATTEMPTS: u32 = 2;
const MIB: u64 = 1 << 20;

/// The application, built once; `None` when QEMU or AAVMF is missing and
/// not required.
fn app() -> Option<&'static Path> {
    static APP: OnceLock<Option<PathBuf>> = OnceLock::new();
    APP.get_or_init(|| {
        qemu_prerequisites(
            "ARM QEMU boot tests",
            &[
                ("/usr/bin/qemu-system-aarch64", "qemu-system-arm"),
                (AAVMF_CODE, "qemu-efi-aarch64"),
            ],
            TARGET,
        )
        .then(|| build_firmware("probe/uefi", TARGET, "wloc-uefi-aarch64", "wloc-uefi.efi"))
    })
    .as_deref()
}

/// Boots the application on `-M virt` with these extra QEMU arguments
/// (`machine` options appended to `virt,gic-version=3`, which allows
/// more than 8 CPUs) and returns its report, or `None` when the tests
/// are skipped.
fn boot(tag: &str, machine: &str, args: &[&str]) -> Option<Report> {
    let efi = app()?;
    for attempt in 1..=FIRMWARE_ATTEMPTS {
        match boot_once(efi, tag, machine, args) {
            Boot::Finished(report) => return Some(*report),
            Boot::FirmwareHung(console) if attempt < FIRMWARE_ATTEMPTS => eprintln!(
                "{tag}: the firmware hung before the application began (attempt {attempt}); booting again; console:\n{console}"
            ),
            Boot::FirmwareHung(console) => panic!(
                "{tag}: the firmware hung before the application began, {FIRMWARE_ATTEMPTS} times; console:\n{console}"
            ),
        }
    }
    unreachable!("the last attempt returns or panics")
}

/// How one boot ended.
enum Boot {
    /// QEMU exited and the application's report was read.
    Finished(Box<Report>),
    /// QEMU was killed after [`BOOT_TIMEOUT`] without the application
    /// having printed its first line; the console so far.
    FirmwareHung(String),
}

/// One boot of `efi` (see [`boot`]).
fn boot_once(efi: &Path, tag: &str, machine: &str, args: &[&str]) -> Boot {
    let esp = TempDir::new(&format!("arm-esp-{tag}"));
    let boot_dir = esp.0.join("EFI/BOOT");
    std::fs::create_dir_all(&boot_dir).unwrap();
    std::fs::copy(efi, boot_dir.join("BOOTAA64.EFI")).unwrap();
    let mut child = Command::new(QEMU)
        .args(["-accel", "tcg", "-cpu", "max"])
        .arg("-machine")
        .arg(format!("virt,gic-version=3{machine}"))
        .arg("-drive")
        .arg(format!(
            "if=pflash,format=raw,readonly=on,file={AAVMF_CODE}"
        ))
        // The variable store is written to a temporary overlay only.
        .arg("-drive")
        .arg(format!(
            "if=pflash,format=raw,snapshot=on,file={AAVMF_VARS}"
        ))
        .args([
            "-nographic",
            "-serial",
            "stdio",
            "-monitor",
            "none",
            "-net",
            "none",
        ])
        .arg("-drive")
        .arg(format!("format=raw,file=fat:rw:{}", esp.0.display()))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("qemu starts");
    // Read the console on threads so that a full pipe never blocks QEMU.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = stdout.read_to_end(&mut b);
        b
    });
    let err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = stderr.read_to_end(&mut b);
        b
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > BOOT_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let console = String::from_utf8_lossy(&out.join().unwrap()).into_owned();
    let errors = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
    let Some(status) = status else {
        if !console.contains(&Report::begin_marker("wloc-uefi")) {
            return Boot::FirmwareHung(format!("{console}\n{errors}"));
        }
        panic!("{tag}: QEMU did not finish within {BOOT_TIMEOUT:?}; console:\n{console}\n{errors}");
    };
    common::timing(&format!("{tag} boot"), start);
    let report = Report::parse(&console, "wloc-uefi");
    // The application powers the machine off through PSCI: QEMU exits 0.
    assert!(
        status.success(),
        "{tag}: QEMU exit status {status}:\n{console}\n{errors}"
    );
    Boot::Finished(Box::new(report))
}

/// Checks the CPU side of a machine of `packages` packages of `clusters`
/// clusters of `cores` cores of `threads` threads, numbered in order.
fn check_cpus(r: &Report, packages: u32, clusters: u32, cores: u32, threads: u32) {
    let n = packages * clusters * cores * threads;
    // QEMU gives CPU i the UID i; Linux numbers the boot CPU 0, then
    // the MADT's order.
    assert_eq!(
        r.cpus,
        (0..n).map(|i| (i, i)).collect::<Vec<_>>(),
        "{}",
        r.text
    );
    assert_eq!(r.boot, Some(0), "{}", r.text);
    assert!(r.tables.iter().any(|t| t == "APIC"), "{}", r.text);
    assert!(r.tables.iter().any(|t| t == "PPTT"), "{}", r.text);
    let pus: BTreeSet<u32> = r.of_type("PU").iter().map(|o| o.os.unwrap()).collect();
    assert_eq!(pus, (0..n).collect(), "{}", r.text);
    assert_eq!(r.cpusets("PU"), blocks(n, 1), "PUs\n{}", r.text);
    assert_eq!(
        r.cpusets("Package"),
        blocks(n, n / packages),
        "packages\n{}",
        r.text
    );
    let groups = r.of_type("Group");
    if clusters > 1 && cores > 1 {
        assert_eq!(
            r.cpusets("Group"),
            blocks(n, cores * threads),
            "clusters\n{}",
            r.text
        );
        assert!(
            groups
                .iter()
                .all(|g| g.attrs.get("subtype").map(String::as_str) == Some("Cluster")),
            "{}",
            r.text
        );
    } else {
        // A cluster as large as its package, or of one core, adds nothing.
        assert!(groups.is_empty(), "no cluster group expected\n{}", r.text);
    }
    assert_eq!(r.cpusets("Core"), blocks(n, threads), "cores\n{}", r.text);
    assert!(r.of_type("Die").is_empty(), "{}", r.text);
    if threads == 1 {
        // Cores are named by their processor's UID.
        let core_os: Vec<u32> = r.of_type("Core").iter().map(|o| o.os.unwrap()).collect();
        assert_eq!(core_os, (0..n).collect::<Vec<_>>(), "{}", r.text);
    }
    let pkg_os: BTreeSet<u32> = r.of_type("Package").iter().map(|o| o.os.unwrap()).collect();
    assert_eq!(pkg_os.len(), packages as usize, "package ids\n{}", r.text);
    // QEMU's PPTT: per package a node, per cluster a node, per core a
    // leaf, or a node and a leaf per thread.
    let per_core = if threads > 1 { 1 + threads } else { 1 };
    assert_eq!(
        r.pptt_nodes as u32,
        packages * (1 + clusters * (1 + cores * per_core)),
        "{}",
        r.text
    );
}

/// No SRAT: one NUMA node holding every PU and the RAM (`-m ram_mib`)
/// less what the firmware reserves for itself; no distances.
fn check_no_numa(r: &Report, n: u32, ram_mib: u64) {
    let nodes = r.of_type("NUMANode");
    assert_eq!(nodes.len(), 1, "{}", r.text);
    assert_eq!(nodes[0].cpuset, (0..n).collect(), "{}", r.text);
    let memory = r.node_memory(0);
    assert!(
        memory <= ram_mib * MIB && memory >= (ram_mib - 64) * MIB,
        "node memory {memory} for {ram_mib} MiB of RAM\n{}",
        r.text
    );
    assert!(r.distances.is_empty(), "{}", r.text);
    assert!(!r.tables.iter().any(|t| t == "SRAT"), "{}", r.text);
}

/// The firmware's synthetic description, with the memory of a single
/// NUMA node (which depends on the firmware) left out.
fn synthetic_without_memory(r: &Report) -> String {
    let s = r.synthetic();
    match (s.find("[NUMANode(memory="), s.find(")]")) {
        (Some(a), Some(b)) if a < b => format!("{}[NUMANode]{}", &s[..a], &s[b + 2..]),
        _ => s.to_string(),
    }
}

/// Writes the XML document the firmware printed to a file and checks
/// that `wloc` rewrites it unchanged.
fn firmware_xml(r: &Report) -> (TempDir, PathBuf) {
    let tmp = TempDir::new("arm-firmware-xml");
    let file = tmp.0.join("firmware.xml");
    std::fs::write(&file, r.xml()).unwrap();
    let f = file.to_str().unwrap();
    let o = run_wloc(["ls", "-i", f, "--of", "xml", "--export-xml-flags", "2", "-"]);
    assert!(
        o.status.success(),
        "wloc reads the firmware's XML: {}\n{}",
        String::from_utf8_lossy(&o.stderr),
        r.xml()
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        r.xml(),
        "wloc rewrites the firmware's XML differently"
    );
    (tmp, file)
}

/// Runs lstopo 2.9 on a file with more arguments.
fn lstopo(file: &Path, args: &[&str]) -> String {
    common::require_hwloc();
    let h = Command::new("lstopo-no-graphics")
        .arg("-i")
        .arg(file)
        .args(args)
        .env("LC_ALL", "C")
        .output()
        .expect("lstopo-no-graphics runs");
    assert!(
        h.status.success(),
        "hwloc reads the firmware's XML: {}",
        String::from_utf8_lossy(&h.stderr)
    );
    String::from_utf8_lossy(&h.stdout).into_owned()
}

/// The XML document reads back, in `wloc` and in hwloc 2.9, as the
/// machine of the firmware's synthetic description, and as [`check_verbose`].
fn check_xml(r: &Report) {
    let (_tmp, file) = firmware_xml(r);
    let f = file.to_str().unwrap();
    let o = run_wloc(["ls", "-i", f, "--of", "synthetic", "-"]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        r.synthetic(),
        "wloc\n{}",
        r.xml()
    );
    assert_eq!(
        lstopo(&file, &["--of", "synthetic", "-"]).trim(),
        r.synthetic(),
        "hwloc\n{}",
        r.xml()
    );
    check_verbose(r);
}

/// `wloc` rewrites the XML document unchanged, and `wloc ls -v` and
/// `lstopo-no-graphics -v` show it alike (memory, caches, attributes).
fn check_verbose(r: &Report) {
    let (_tmp, file) = firmware_xml(r);
    let ours = run_wloc(["ls", "-i", file.to_str().unwrap(), "-v"]);
    assert!(ours.status.success());
    assert_eq!(
        String::from_utf8_lossy(&ours.stdout),
        lstopo(&file, &["-v"]),
        "{}",
        r.xml()
    );
}

#[test]
fn arm_one_cpu() {
    let Some(r) = boot("arm-one", "", &["-m", "256", "-smp", "1"]) else {
        return;
    };
    check_cpus(&r, 1, 1, 1, 1);
    check_no_numa(&r, 1, 256);
    assert_eq!(
        synthetic_without_memory(&r),
        "Package:1 [NUMANode] Core:1 PU:1"
    );
    check_xml(&r);
}

#[test]
fn arm_sockets_clusters_cores() {
    let Some(r) = boot(
        "arm-2x2x2",
        "",
        &[
            "-m",
            "512",
            "-smp",
            "8,sockets=2,clusters=2,cores=2,threads=1",
        ],
    ) else {
        return;
    };
    check_cpus(&r, 2, 2, 2, 1);
    check_no_numa(&r, 8, 512);
    assert_eq!(
        synthetic_without_memory(&r),
        "[NUMANode] Package:2 Group:2 Core:2 PU:1"
    );
    check_xml(&r);
}

#[test]
fn arm_clusters_of_threaded_cores() {
    let Some(r) = boot(
        "arm-2x2x2x2",
        "",
        &[
            "-m",
            "512",
            "-smp",
            "16,sockets=2,clusters=2,cores=2,threads=2",
        ],
    ) else {
        return;
    };
    check_cpus(&r, 2, 2, 2, 2);
    check_no_numa(&r, 16, 512);
    assert_eq!(
        synthetic_without_memory(&r),
        "[NUMANode] Package:2 Group:2 Core:2 PU:2"
    );
    check_xml(&r);
}

#[test]
fn arm_many_cpus() {
    let Some(r) = boot(
        "arm-64",
        "",
        &[
            "-m",
            "512",
            "-smp",
            "64,sockets=2,clusters=4,cores=4,threads=2",
        ],
    ) else {
        return;
    };
    check_cpus(&r, 2, 4, 4, 2);
    check_no_numa(&r, 64, 512);
    assert_eq!(
        synthetic_without_memory(&r),
        "[NUMANode] Package:2 Group:4 Core:4 PU:2"
    );
    check_xml(&r);
}

#[test]
fn arm_numa_nodes_with_slit_distances() {
    let Some(r) = boot(
        "arm-numa",
        "",
        &[
            "-m",
            "1G",
            "-smp",
            "8,sockets=2,clusters=1,cores=4,threads=1",
            "-object",
            "memory-backend-ram,size=256M,id=m0",
            "-object",
            "memory-backend-ram,size=768M,id=m1",
            "-numa",
            "node,nodeid=0,cpus=0-3,memdev=m0",
            "-numa",
            "node,nodeid=1,cpus=4-7,memdev=m1",
            "-numa",
            "dist,src=0,dst=1,val=17",
        ],
    ) else {
        return;
    };
    check_cpus(&r, 2, 1, 4, 1);
    for t in ["SRAT", "SLIT"] {
        assert!(r.tables.iter().any(|x| x == t), "{t}\n{}", r.text);
    }
    assert_eq!(r.of_type("NUMANode").len(), 2, "{}", r.text);
    assert_eq!(r.node(0).cpuset, set(&[0, 1, 2, 3]), "{}", r.text);
    assert_eq!(r.node(1).cpuset, set(&[4, 5, 6, 7]), "{}", r.text);
    assert_eq!(r.node(1).nodeset, set(&[1]));
    // ARM's RAM has no legacy hole: the nodes have all of theirs.
    assert_eq!(r.node_memory(0), 256 * MIB, "{}", r.text);
    assert_eq!(r.node_memory(1), 768 * MIB, "{}", r.text);
    assert_eq!(
        r.distances.get("NUMALatency"),
        Some(&(vec![0, 1], vec![10, 17, 17, 10])),
        "{}",
        r.text
    );
    assert!(r.memattrs.is_empty(), "no HMAT, no attributes\n{}", r.text);
    assert_eq!(
        r.synthetic(),
        "Package:2 [NUMANode(memory=268435456)] Core:4 PU:1",
        "{}",
        r.text
    );
    check_xml(&r);
}

#[test]
fn arm_hmat_latencies_bandwidths_and_memory_side_caches() {
    let mut args: Vec<String> = [
        "-m",
        "1536M",
        "-smp",
        "8,sockets=2,clusters=2,cores=2,threads=1",
        "-object",
        "memory-backend-ram,size=512M,id=m0",
        "-object",
        "memory-backend-ram,size=512M,id=m1",
        "-object",
        "memory-backend-ram,size=512M,id=m2",
        "-numa",
        "node,nodeid=0,cpus=0-3,memdev=m0,initiator=0",
        "-numa",
        "node,nodeid=1,cpus=4-7,memdev=m1,initiator=1",
        // Memory without CPUs, attached to the CPUs of node 0.
        "-numa",
        "node,nodeid=2,memdev=m2,initiator=0",
        "-numa",
        "dist,src=0,dst=1,val=21",
        "-numa",
        "dist,src=0,dst=2,val=17",
        "-numa",
        "dist,src=1,dst=2,val=28",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // The same HMAT as in the x86 test.
    args.extend(crate::qemu_boot::hmat_numa_args());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let Some(r) = boot("arm-hmat", ",hmat=on", &args) else {
        return;
    };
    check_cpus(&r, 2, 2, 2, 1);
    assert!(r.tables.iter().any(|x| x == "HMAT"), "{}", r.text);
    assert_eq!(r.of_type("NUMANode").len(), 3, "{}", r.text);
    assert_eq!(r.node(0).cpuset, set(&[0, 1, 2, 3]), "{}", r.text);
    assert_eq!(r.node(1).cpuset, set(&[4, 5, 6, 7]), "{}", r.text);
    // The CPU-less node takes the CPUs of the initiator it is attached to.
    assert_eq!(r.node(2).cpuset, set(&[0, 1, 2, 3]), "{}", r.text);
    for n in 0..3 {
        assert_eq!(r.node_memory(n), 512 * MIB, "{}", r.text);
    }
    assert_eq!(
        r.distances.get("NUMALatency"),
        Some(&(vec![0, 1, 2], vec![10, 21, 17, 21, 10, 28, 17, 28, 10])),
        "{}",
        r.text
    );
    let (cpu0, cpu1): (&[u32], &[u32]) = (&[0, 1, 2, 3], &[4, 5, 6, 7]);
    let expect: &[(&str, u32, &[u32], u64)] = &[
        ("Latency", 0, cpu0, 11),
        ("ReadLatency", 0, cpu0, 10),
        ("WriteLatency", 0, cpu0, 12),
        ("Bandwidth", 0, cpu0, 10240),
        ("ReadBandwidth", 0, cpu0, 10240),
        ("WriteBandwidth", 0, cpu0, 10240),
        ("Latency", 1, cpu1, 13),
        ("ReadLatency", 1, cpu1, 12),
        ("WriteLatency", 1, cpu1, 14),
        ("Bandwidth", 1, cpu1, 8192),
        ("ReadBandwidth", 1, cpu1, 8192),
        ("WriteBandwidth", 1, cpu1, 8192),
        ("ReadLatency", 2, cpu0, 30),
        ("WriteLatency", 2, cpu0, 40),
        ("Latency", 2, cpu0, 35),
        ("Bandwidth", 2, cpu0, 2048),
        ("ReadBandwidth", 2, cpu0, 2048),
        ("WriteBandwidth", 2, cpu0, 2048),
    ];
    for &(name, target, init, value) in expect {
        assert_eq!(
            r.memattrs.get(&(name.to_string(), target)),
            Some(&(set(init), value)),
            "{name} of node {target}\n{}",
            r.text
        );
    }
    assert_eq!(r.memattrs.len(), 18, "{}", r.text);
    let caches = r.of_type("MemCache");
    assert_eq!(caches.len(), 2, "{}", r.text);
    let cache = |node: u32| {
        caches
            .iter()
            .find(|c| c.nodeset == set(&[node]))
            .unwrap_or_else(|| panic!("no memory-side cache for node {node}\n{}", r.text))
    };
    let a = &cache(0).attrs;
    assert_eq!(
        (&*a["size"], &*a["depth"], &*a["line"], &*a["assoc"]),
        ("8388608", "1", "64", "1")
    );
    let a = &cache(2).attrs;
    assert_eq!(
        (&*a["size"], &*a["depth"], &*a["line"], &*a["assoc"]),
        ("4194304", "1", "128", "0")
    );
    assert_eq!(cache(2).cpuset, set(&[0, 1, 2, 3]));
    // No synthetic description holds memory-side caches.
    check_verbose(&r);
}
