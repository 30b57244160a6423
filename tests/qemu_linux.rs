//! Linux machines wloc has never seen: QEMU boots Debian's kernel on
//! machines configured here (packages, dies, SMT, NUMA nodes with
//! distances, PCI bridges and a second host bridge on another node, NVMe,
//! SATA, network and persistent-memory devices, an offline CPU, a cgroup
//! restriction, HMAT attributes, memory-side caches and memory without
//! CPUs) and runs `wloc ls` and hwloc 2.9's `lstopo-no-graphics` side by
//! side inside.  Both must describe the same machine.
//!
//! The guest has no disk: a small initramfs (busybox and the 9p modules)
//! mounts this machine's root read-only over virtio-9p and runs both tools
//! from it, so the kernel's real sysfs is what they read.  QEMU emulates
//! the CPUs (TCG), so a boot takes a minute or two.
//!
//! Needs `qemu-system-x86_64`, a Debian kernel in `/boot` with its
//! modules, `busybox` and `cpio` (packages `qemu-system-x86`,
//! `linux-image-amd64`, `busybox-static`, `cpio`, `kmod`).  The tests
//! install them when they are missing (as root), and fail saying what to
//! install when they cannot, unless `WLOC_SKIP_QEMU=1` skips them.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use common::{TempDir, compare_full, require_hwloc, root_attr, wloc};

const QEMU: &str = "qemu-system-x86_64";
/// Longest a boot may take before QEMU is killed.
const BOOT_TIMEOUT: Duration = Duration::from_secs(420);
/// Longest a guest with a job of its own may run (the service's
/// discoveries, each a compile of the Linux component under emulation).
const JOB_TIMEOUT: Duration = Duration::from_secs(900);
/// Modules the guest loads before mounting the root, in order.
const BOOT_MODULES: &[&str] = &[
    "virtio_ring",
    "virtio",
    "virtio_pci_modern_dev",
    "virtio_pci_legacy_dev",
    "virtio_pci",
    "netfs",
    "fscache",
    "9pnet",
    "9pnet_virtio",
    "9p",
];
/// Device drivers the guest loads from the shared root.
const DEVICE_MODULES: &str =
    "nvme virtio_blk virtio_net e1000e e1000 ahci sd_mod nfit nd_pmem dax_pmem device_dax";

/// The guest's first program: mounts the shared root and an output folder,
/// runs the job written there, and powers off.
const INIT: &str = r#"#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in $(cat /modules); do insmod /mods/$m.ko; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro hostroot /mnt
mount -t 9p -o trans=virtio,version=9p2000.L out /out
mount --bind /proc /mnt/proc; mount --bind /sys /mnt/sys; mount --bind /dev /mnt/dev
mount --bind /out /mnt/mnt
chroot /mnt /bin/sh /mnt/job > /out/job.log 2>&1
echo $? > /out/rc
poweroff -f
"#;

/// A kernel, its version and the initramfs built for it; `None` when
/// something is missing and not required.
struct Guest {
    kernel: PathBuf,
    initrd: PathBuf,
    _dir: TempDir,
}

fn guest() -> Option<&'static Guest> {
    static GUEST: OnceLock<Option<Guest>> = OnceLock::new();
    GUEST
        .get_or_init(|| match prepare() {
            Ok(g) => Some(g),
            Err(missing) => {
                assert!(
                    std::env::var("WLOC_SKIP_QEMU").is_ok_and(|v| v == "1"),
                    "{missing}: the QEMU Linux tests need it (WLOC_SKIP_QEMU=1 skips them)"
                );
                eprintln!("skipping the QEMU Linux tests (WLOC_SKIP_QEMU=1): {missing}");
                None
            }
        })
        .as_ref()
}

/// Finds the kernel and builds the initramfs.
fn prepare() -> Result<Guest, String> {
    common::require_packages(&[
        ("/usr/bin/qemu-system-x86_64", "qemu-system-x86"),
        ("/usr/bin/cpio", "cpio"),
        ("/bin/busybox", "busybox-static"),
        ("/sbin/insmod", "kmod"),
        ("/boot/vmlinuz-*", "linux-image-amd64"),
    ])?;
    let ok = |cmd: &str, arg: &str| {
        Command::new(cmd)
            .arg(arg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ok(QEMU, "--version") {
        return Err(format!(
            "{QEMU} is not installed (apt-get install qemu-system-x86)"
        ));
    }
    if !ok("cpio", "--version") {
        return Err("cpio is not installed (apt-get install cpio)".into());
    }
    if !Path::new("/mnt").is_dir() {
        return Err("the guest writes its results over /mnt, which is missing here".into());
    }
    let busybox = Path::new("/bin/busybox");
    let bytes = std::fs::read(busybox)
        .map_err(|e| format!("/bin/busybox: {e} (apt-get install busybox-static)"))?;
    if bytes.windows(8).any(|w| w == b"/lib64/l") {
        return Err("/bin/busybox is linked dynamically (apt-get install busybox-static)".into());
    }
    let mut kernels: Vec<PathBuf> = std::fs::read_dir("/boot")
        .map_err(|e| format!("/boot: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("vmlinuz-"))
        })
        .collect();
    kernels.sort();
    let kernel = kernels
        .pop()
        .ok_or("no kernel in /boot (apt-get install linux-image-amd64)")?;
    let version = kernel.file_name().unwrap().to_str().unwrap()["vmlinuz-".len()..].to_string();

    let dir = TempDir::new("qemu-linux-initrd");
    let root = dir.0.join("root");
    for d in ["bin", "mods", "proc", "sys", "dev", "mnt", "out"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::copy(busybox, root.join("bin/busybox")).map_err(|e| format!("busybox: {e}"))?;
    for m in BOOT_MODULES {
        let o = Command::new("modinfo")
            .args(["-k", &version, "-F", "filename", m])
            .output()
            .map_err(|e| format!("modinfo: {e}"))?;
        let file = String::from_utf8_lossy(&o.stdout).trim().to_string();
        if !o.status.success() || !file.ends_with(".ko") {
            return Err(format!(
                "module {m} of kernel {version} not found as an uncompressed .ko ({file})"
            ));
        }
        std::fs::copy(&file, root.join(format!("mods/{m}.ko")))
            .map_err(|e| format!("{file}: {e}"))?;
    }
    std::fs::write(root.join("modules"), BOOT_MODULES.join(" ")).unwrap();
    let init = root.join("init");
    std::fs::write(&init, INIT).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&init, std::fs::Permissions::from_mode(0o755)).unwrap();
    let initrd = dir.0.join("initrd.cpio");
    let list = Command::new("find")
        .arg(".")
        .current_dir(&root)
        .output()
        .map_err(|e| format!("find: {e}"))?;
    let mut cpio = Command::new("cpio")
        .args(["-o", "-H", "newc", "--quiet"])
        .current_dir(&root)
        .stdin(Stdio::piped())
        .stdout(std::fs::File::create(&initrd).unwrap())
        .spawn()
        .map_err(|e| format!("cpio: {e}"))?;
    use std::io::Write;
    cpio.stdin.take().unwrap().write_all(&list.stdout).unwrap();
    if !cpio.wait().is_ok_and(|s| s.success()) {
        return Err("cpio failed to build the initramfs".into());
    }
    Ok(Guest {
        kernel,
        initrd,
        _dir: dir,
    })
}

/// What the host does while a guest runs its own job: given QEMU's
/// monitor socket (QMP) and the output folder.
type HostSide = fn(&Path, &Path);

/// One configured machine.
struct Machine<'a> {
    name: &'a str,
    /// QEMU options beyond the kernel, memory and shares.
    qemu: &'a [&'a str],
    /// Shell commands the guest runs before the tools (as root).
    prep: &'a str,
    /// Compare without NUMA nodes' memory tier subtypes (see
    /// [`without_memory_tiers`]).
    ignore_memory_tiers: bool,
    /// A job of its own instead of running the two tools (`{prep}` is
    /// then unused), and what the host does meanwhile through QEMU's
    /// monitor (QMP socket, output folder).
    job: Option<(String, HostSide)>,
}

/// Boots `m` and returns the folder holding what the tools wrote, or
/// `None` when the tests are skipped.
fn run(m: &Machine) -> Option<TempDir> {
    let g = guest()?;
    require_hwloc();
    // One machine at a time: two emulated machines on two cores would
    // only slow each other down.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = TempDir::new(&format!("qemu-linux-{}", m.name));
    let w = wloc();
    let w = w.display();
    let default_job = format!(
        "modprobe -a {DEVICE_MODULES} 2>/dev/null; sleep 1\n{prep}\n\
         lstopo-no-graphics --of xml - > /mnt/hwloc.xml\n\
         {w} ls --xml-version 3 --of xml - > /mnt/wloc.xml\n\
         lstopo-no-graphics --disallowed --of xml - > /mnt/hwloc-disallowed.xml\n\
         {w} ls --xml-version 3 --disallowed --of xml - > /mnt/wloc-disallowed.xml\n",
        prep = m.prep
    );
    let job = m.job.as_ref().map_or(default_job, |(j, _)| j.clone());
    std::fs::write(out.0.join("job"), job).unwrap();
    let share = |id: &str, path: &Path, tag: &str, ro: bool| {
        [
            "-fsdev".to_string(),
            format!(
                "local,id={id},path={},security_model=none{}",
                path.display(),
                if ro {
                    ",readonly=on,multidevs=remap"
                } else {
                    ""
                }
            ),
            "-device".to_string(),
            format!("virtio-9p-pci,fsdev={id},mount_tag={tag},bus=pcie.0"),
        ]
    };
    let mut args: Vec<String> = vec![
        "-accel".into(),
        "tcg".into(),
        "-nographic".into(),
        "-no-reboot".into(),
        "-kernel".into(),
        g.kernel.display().to_string(),
        "-initrd".into(),
        g.initrd.display().to_string(),
        "-append".into(),
        "console=ttyS0 quiet panic=-1".into(),
    ];
    args.extend(m.qemu.iter().map(|s| s.to_string()));
    let qmp = out.0.join("qmp.sock");
    if m.job.is_some() {
        args.push("-qmp".into());
        args.push(format!("unix:{},server=on,wait=off", qmp.display()));
    }
    args.extend(share("root", Path::new("/"), "hostroot", true));
    args.extend(share("out", &out.0, "out", false));
    // The job sees the output folder at /mnt, bound over that folder of
    // the read-only root.
    let job_path = out.0.join("job");
    // Emulating several CPUs on a loaded host, the guest kernel now and
    // then stalls at boot (soft lockups of its migration threads, before
    // the job runs), or powers off before its init starts the job (seen
    // once in a full test run, the console ending in early boot messages):
    // such a boot is abandoned and tried once more.  A job that ran
    // leaves its log, so a failing job is never retried.
    let limit = if m.job.is_some() {
        JOB_TIMEOUT
    } else {
        BOOT_TIMEOUT
    };
    let boot = || -> bool {
        let mut child = Command::new(QEMU)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(out.0.join("console.log")).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .expect("qemu starts");
        if let Some((_, host_side)) = &m.job {
            let (qmp, dir, host_side) = (qmp.clone(), out.0.clone(), *host_side);
            std::thread::spawn(move || host_side(&qmp, &dir));
        }
        let start = Instant::now();
        loop {
            if child.try_wait().unwrap().is_some() {
                return out.0.join("job.log").exists();
            }
            let stalled = start.elapsed() > Duration::from_secs(60)
                && !out.0.join("job.log").exists()
                && std::fs::read_to_string(out.0.join("console.log"))
                    .is_ok_and(|c| c.contains("soft lockup"));
            if stalled || start.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let booted = Instant::now();
    if !boot() {
        eprintln!("{}: the guest stalled; booting it again", m.name);
        assert!(
            boot(),
            "{}: the guest did not run its job and power off in {limit:?}, twice; console:\n{}",
            m.name,
            std::fs::read_to_string(out.0.join("console.log")).unwrap_or_default()
        );
    }
    common::timing(&format!("{} boot", m.name), booted);
    let rc = std::fs::read_to_string(out.0.join("rc")).unwrap_or_default();
    assert_eq!(
        rc.trim(),
        "0",
        "{}: the guest job failed ({}); console:\n{}\njob log:\n{}",
        m.name,
        job_path.display(),
        std::fs::read_to_string(out.0.join("console.log")).unwrap_or_default(),
        std::fs::read_to_string(out.0.join("job.log")).unwrap_or_default()
    );
    Some(out)
}

/// Boots a machine and checks it: same topology as hwloc with and without
/// `--disallowed`, same root sets.  Returns what the tools wrote.
fn check(m: &Machine) -> Option<TempDir> {
    let out = run(m)?;
    let mut failures = Vec::new();
    for (h, w) in [
        ("hwloc.xml", "wloc.xml"),
        ("hwloc-disallowed.xml", "wloc-disallowed.xml"),
    ] {
        let (mut hp, mut wp) = (out.0.join(h), out.0.join(w));
        if m.ignore_memory_tiers {
            for p in [&mut hp, &mut wp] {
                let text = std::fs::read_to_string(&*p).unwrap_or_default();
                let stripped = p.with_extension("no-tiers.xml");
                std::fs::write(&stripped, without_memory_tiers(&text)).unwrap();
                *p = stripped;
            }
        }
        if let Err(e) = compare_full(&hp, &wp) {
            failures.push(format!("{} ({w}): {e}", m.name));
        }
        let (hx, wx) = (
            std::fs::read_to_string(&hp).unwrap_or_default(),
            std::fs::read_to_string(&wp).unwrap_or_default(),
        );
        for attr in [
            "cpuset",
            "complete_cpuset",
            "allowed_cpuset",
            "allowed_nodeset",
        ] {
            let (a, b) = (root_attr(&hx, attr), root_attr(&wx, attr));
            if a != b {
                failures.push(format!(
                    "{} ({w}): root {attr} {b:?}, hwloc says {a:?}",
                    m.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Some(out)
}

/// hwloc's `Inclusive` infos of the caches (hwloc 2.9 annotates Linux's
/// caches from CPUID) against wloc's `cache_inclusive` attribute, by
/// cache type and cpuset.
fn inclusive_caches(xml: &str, hwloc: bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, _) in xml.match_indices("<object type=\"L") {
        let tag_end = i + xml[i..].find('>').unwrap();
        let tag = &xml[i..tag_end];
        let ty = &tag["<object type=\"".len()..];
        let ty = &ty[..ty.find('"').unwrap()];
        if !ty.ends_with("Cache") {
            continue;
        }
        let cpuset = tag
            .split(" cpuset=\"")
            .nth(1)
            .map(|s| s[..s.find('"').unwrap()].to_string())
            .unwrap_or_default();
        let inclusive = if hwloc {
            // The infos directly inside this object come before its first child.
            let body = &xml[tag_end..];
            let body = &body[..body.find("<object").unwrap_or(body.len())];
            body.contains("<info name=\"Inclusive\" value=\"1\"/>")
        } else {
            tag.contains(" cache_inclusive=\"1\"")
        };
        if inclusive {
            out.push((ty.to_string(), cpuset));
        }
    }
    out.sort();
    out
}

/// Two packages of two SMT cores on two NUMA nodes, PCI Express root ports
/// with NVMe and network devices, a PCI bridge, a second host bridge on
/// node 1, SATA and persistent memory; CPU 5 offline and the job's cgroup
/// limited to CPUs 0-3 and 6 and to node 0.
#[test]
fn two_packages_with_io_an_offline_cpu_and_a_cgroup() {
    let _ = check(&Machine {
        name: "io",
        qemu: &[
            "-machine",
            "q35,nvdimm=on",
            "-cpu",
            "Skylake-Server",
            "-smp",
            "8,sockets=2,cores=2,threads=2",
            "-m",
            "2G,slots=2,maxmem=4G",
            "-object",
            "memory-backend-ram,size=1G,id=m0",
            "-object",
            "memory-backend-ram,size=1G,id=m1",
            "-numa",
            "node,nodeid=0,memdev=m0,cpus=0-3",
            "-numa",
            "node,nodeid=1,memdev=m1,cpus=4-7",
            "-numa",
            "dist,src=0,dst=1,val=21",
            "-object",
            "memory-backend-ram,id=nv1,size=128M",
            "-device",
            "nvdimm,memdev=nv1,id=nvd1,node=1",
            "-drive",
            "if=none,id=d0,driver=null-co,read-zeroes=on",
            "-drive",
            "if=none,id=d1,driver=null-co,read-zeroes=on",
            "-drive",
            "if=none,id=d2,driver=null-co,read-zeroes=on",
            "-device",
            "ide-hd,drive=d2,bus=ide.0",
            "-device",
            "pcie-root-port,id=rp1,bus=pcie.0,chassis=1",
            "-device",
            "nvme,serial=wloc1,drive=d0,bus=rp1",
            "-device",
            "pcie-root-port,id=rp2,bus=pcie.0,chassis=2",
            "-device",
            "virtio-net-pci,bus=rp2",
            "-device",
            "pcie-pci-bridge,id=br1,bus=pcie.0",
            "-device",
            "e1000,bus=br1,addr=1",
            "-device",
            "pxb-pcie,id=pxb1,bus_nr=128,numa_node=1,bus=pcie.0",
            "-device",
            "pcie-root-port,id=rp3,bus=pxb1,chassis=3",
            "-device",
            "virtio-blk-pci,drive=d1,bus=rp3",
        ],
        prep: "echo 0 > /sys/devices/system/cpu/cpu5/online\n\
               mount -t cgroup2 none /sys/fs/cgroup\n\
               echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control\n\
               mkdir /sys/fs/cgroup/job\n\
               echo 0-3,6 > /sys/fs/cgroup/job/cpuset.cpus\n\
               echo 0 > /sys/fs/cgroup/job/cpuset.mems\n\
               echo $$ > /sys/fs/cgroup/job/cgroup.procs",
        ignore_memory_tiers: false,
        job: None,
    });
}

/// One package of two dies of two SMT cores with inclusive L3 caches, four
/// NUMA nodes whose distances make two groups.
#[test]
fn dies_inclusive_caches_and_distance_groups() {
    let m = Machine {
        name: "dies",
        qemu: &[
            "-machine",
            "q35",
            "-cpu",
            "Skylake-Server",
            "-smp",
            "8,sockets=1,dies=2,cores=2,threads=2",
            "-m",
            "2G",
            "-object",
            "memory-backend-ram,size=512M,id=m0",
            "-object",
            "memory-backend-ram,size=512M,id=m1",
            "-object",
            "memory-backend-ram,size=512M,id=m2",
            "-object",
            "memory-backend-ram,size=512M,id=m3",
            "-numa",
            "node,nodeid=0,memdev=m0,cpus=0-1",
            "-numa",
            "node,nodeid=1,memdev=m1,cpus=2-3",
            "-numa",
            "node,nodeid=2,memdev=m2,cpus=4-5",
            "-numa",
            "node,nodeid=3,memdev=m3,cpus=6-7",
            "-numa",
            "dist,src=0,dst=1,val=20",
            "-numa",
            "dist,src=0,dst=2,val=40",
            "-numa",
            "dist,src=0,dst=3,val=40",
            "-numa",
            "dist,src=1,dst=2,val=40",
            "-numa",
            "dist,src=1,dst=3,val=40",
            "-numa",
            "dist,src=2,dst=3,val=20",
        ],
        prep: "",
        ignore_memory_tiers: false,
        job: None,
    };
    let Some(out) = check(&m) else { return };
    let read = |f: &str| std::fs::read_to_string(out.0.join(f)).unwrap();
    let (h, w) = (
        inclusive_caches(&read("hwloc.xml"), true),
        inclusive_caches(&read("wloc.xml"), false),
    );
    assert!(
        !h.is_empty(),
        "QEMU's Skylake-Server has inclusive L3 caches"
    );
    assert_eq!(w, h, "inclusive caches");
}

/// Memory attribute values as (name, target node, initiator, value), read
/// back with wloc's XML importer so that both tools' documents are seen
/// the same way.
fn memattr_values(xml: &str) -> Vec<(String, Option<u32>, String, u64)> {
    use wloc_core::memattrs::Initiator;
    let t = wloc_xml::import_str(xml, wloc_core::Topology::new()).expect("the XML reads back");
    let mut out = Vec::new();
    for m in &t.memattrs {
        for v in &m.values {
            let initiator = match &v.initiator {
                None => String::new(),
                Some(Initiator::CpuSet(c)) => c.to_string(),
                Some(Initiator::Object(o)) => {
                    format!("{} {:?}", t.obj(*o).obj_type, t.obj(*o).os_index)
                }
            };
            out.push((m.name.clone(), t.obj(v.target).os_index, initiator, v.value));
        }
    }
    out.sort();
    out
}

/// The document without the memory tier subtypes of NUMA nodes (DRAM,
/// HBM, ...): hwloc 2.9 predates memory tiers, which wloc guesses as
/// hwloc 3 does (the conformance recordings check those).
fn without_memory_tiers(xml: &str) -> String {
    let mut out = xml.to_string();
    for tier in ["DRAM", "HBM", "NVM", "SPM", "CXL-DRAM", "CXL-NVM"] {
        out = out.replace(&format!(" subtype=\"{tier}\""), "");
    }
    out
}

/// An AMD EPYC (caches from leaf 0x8000001D) on two NUMA nodes and a
/// third node of memory without CPUs, with HMAT latencies and bandwidths
/// for every initiator and memory-side caches in front of the first two.
#[test]
fn amd_epyc_with_hmat_and_memory_side_caches() {
    let mut qemu: Vec<&str> = vec![
        "-machine",
        "q35,hmat=on",
        "-cpu",
        "EPYC",
        "-smp",
        "4,sockets=1,cores=2,threads=2",
        "-m",
        "2G",
        "-object",
        "memory-backend-ram,size=768M,id=m0",
        "-object",
        "memory-backend-ram,size=768M,id=m1",
        "-object",
        "memory-backend-ram,size=512M,id=m2",
        "-numa",
        "node,nodeid=0,memdev=m0,cpus=0-1,initiator=0",
        "-numa",
        "node,nodeid=1,memdev=m1,cpus=2-3,initiator=1",
        "-numa",
        "node,nodeid=2,memdev=m2,initiator=0",
        "-numa",
        "dist,src=0,dst=1,val=21",
        "-numa",
        "dist,src=0,dst=2,val=17",
        "-numa",
        "dist,src=1,dst=2,val=28",
    ];
    let mut hmat: Vec<String> = Vec::new();
    for (i, t, latency, bandwidth) in [
        (0, 0, 10, "10G"),
        (0, 1, 20, "5G"),
        (0, 2, 30, "2G"),
        (1, 0, 20, "5G"),
        (1, 1, 10, "10G"),
        (1, 2, 40, "1G"),
    ] {
        let pair = format!("hmat-lb,initiator={i},target={t},hierarchy=memory");
        hmat.push(format!("{pair},data-type=access-latency,latency={latency}"));
        hmat.push(format!(
            "{pair},data-type=access-bandwidth,bandwidth={bandwidth}"
        ));
    }
    for n in [0, 1] {
        hmat.push(format!(
            "hmat-cache,node-id={n},size=8M,level=1,associativity=direct,policy=write-back,line=64"
        ));
    }
    for h in &hmat {
        qemu.extend(["-numa", h.as_str()]);
    }
    let m = Machine {
        name: "hmat",
        qemu: &qemu,
        prep: "",
        ignore_memory_tiers: true,
        job: None,
    };
    let Some(out) = check(&m) else { return };
    let read = |f: &str| std::fs::read_to_string(out.0.join(f)).unwrap();
    let (h, w) = (
        memattr_values(&read("hwloc.xml")),
        memattr_values(&read("wloc.xml")),
    );
    assert!(
        h.iter().any(|(name, ..)| name == "Bandwidth"),
        "hwloc read HMAT bandwidths"
    );
    assert_eq!(w, h, "memory attributes");
}

/// The guest job of [`the_service_follows_cpus_plugged_in_and_taken_offline`]:
/// `wloc service` publishing at its default path (no variable set), then
/// Debian's lstopo-no-graphics on wloc's library, asked every 50 ms after
/// each change until it adopts an image showing it (`WLOC_DEBUG=1` says
/// when it does not adopt); the milliseconds that took are written out.
const HOTPLUG_JOB: &str = r#"
mount -t tmpfs -o mode=0755 tmpfs /run
# A writable home: the compiled components are then cached.
export HOME=/run
fail() { echo "step $1 failed"; tail -20 /mnt/why.log; cat /mnt/service.log; exit $1; }
# Milliseconds since boot (/proc/uptime has hundredths of seconds).
ms() { read up rest < /proc/uptime; echo $(( ${up%.*}${up#*.} * 10 )); }
# Waits until the CPUs online are $1, then until the service has logged
# the publication of an image with them; the milliseconds between the two
# go to /mnt/$2.
fresh() {
  start=$(ms); seen=
  while :; do
    now=$(ms)
    if [ -z "$seen" ] && [ "$(cat /sys/devices/system/cpu/online)" = "$1" ]; then seen=$now; fi
    if [ -n "$seen" ] && grep -q "published .*CPUs online $1[ ,]" /mnt/service.log; then
      echo $(( now - seen )) > /mnt/$2; return 0
    fi
    [ $(( now - start )) -gt 300000 ] && { echo "CPUs online never $1 in an image" >> /mnt/why.log; fail $3; }
    sleep 0.02
  done
}
# lstopo-no-graphics on wloc's library: its PUs when it adopted the
# published image, to /mnt/$1 (it says why when it does not adopt).
adopted() {
  LD_LIBRARY_PATH=@LIB@ WLOC_DEBUG=1 lstopo-no-graphics -p --only pu > /mnt/$1 2> /run/why
  if grep -q "not adopting" /run/why; then cat /run/why >> /mnt/why.log; fail $2; fi
}
@WLOC@ service --debounce 50 2> /mnt/service.log &
service=$!
fresh 0-1 first-publication 3
adopted pus-wloc-before 4
touch /mnt/ready-for-cpu
start=$(ms)
# The plugged CPU's number (the kernel chooses it).
until new=$(ls -d /sys/devices/system/cpu/cpu[2-9] 2>/dev/null | head -n 1) && [ -e "$new/online" ]; do
  [ $(( $(ms) - start )) -gt 300000 ] && { echo "no CPU was plugged in" >> /mnt/why.log; fail 5; }
  sleep 0.02
done
n=${new##*cpu}
if [ "$n" = 2 ]; then plugged=0-2; else plugged=0-1,$n; fi
# No udev here: the kernel may have onlined the plugged CPU itself.
grep -qx "$plugged" /sys/devices/system/cpu/online || echo 1 > "$new/online"
fresh "$plugged" cpu-plugged 6
adopted pus-wloc-plugged 7
lstopo-no-graphics -p --only pu > /mnt/pus-libhwloc-plugged
echo 0 > /sys/devices/system/cpu/cpu1/online
fresh "0,$n" cpu1-offline 8
adopted pus-wloc-after 9
lstopo-no-graphics -p --only pu > /mnt/pus-libhwloc-after
# The same image on a 9p share (whose owners the host reports) is refused.
mkdir -m 0755 /mnt/on-9p && cp -p /run/wloc/topology.img /mnt/on-9p/
LD_LIBRARY_PATH=@LIB@ WLOC_DEBUG=1 WLOC_SERVICE_IMAGE=/mnt/on-9p/topology.img \
  lstopo-no-graphics -p --only pu > /dev/null 2> /mnt/why-9p
kill $service
"#;

/// The host's side of the hotplug job: once the guest is ready, plugs a
/// third vCPU in through QMP (`query-hotpluggable-cpus`, `device_add`).
fn plug_in_a_cpu(qmp: &Path, out: &Path) {
    use std::io::{BufRead, BufReader, Write};
    let start = Instant::now();
    while !out.join("ready-for-cpu").exists() {
        if start.elapsed() > JOB_TIMEOUT {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let log = |what: String| {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(out.join("qmp.log"))
            .unwrap();
        let _ = writeln!(f, "{what}");
    };
    let Ok(stream) = std::os::unix::net::UnixStream::connect(qmp) else {
        log(format!("cannot connect to {}", qmp.display()));
        return;
    };
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    let mut greeting = String::new();
    let _ = reader.read_line(&mut greeting);
    // Each command's answer: the next line that is not an event.
    let mut ask = |cmd: serde_json::Value| -> serde_json::Value {
        writeln!(writer, "{cmd}").unwrap();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return serde_json::Value::Null;
            }
            log(line.trim().to_string());
            let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
            if v.get("return").is_some() || v.get("error").is_some() {
                return v;
            }
        }
    };
    ask(serde_json::json!({"execute": "qmp_capabilities"}));
    let cpus = ask(serde_json::json!({"execute": "query-hotpluggable-cpus"}));
    let free = cpus["return"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c.get("qom-path").is_none())
        .min_by_key(|c| {
            let id = |k: &str| c["props"][k].as_u64().unwrap_or(u64::MAX);
            (id("socket-id"), id("core-id"), id("thread-id"))
        });
    let Some(free) = free else {
        log("no free CPU slot".into());
        return;
    };
    let mut args = free["props"].clone();
    args["driver"] = free["type"].clone();
    args["id"] = "plugged".into();
    ask(serde_json::json!({"execute": "device_add", "arguments": args}));
}

/// `wloc service` in a guest whose CPUs change: started with no variable
/// (the default path, `/run/wloc/topology.img`), it republishes when a
/// vCPU is plugged in through QEMU's monitor and onlined, and when a CPU
/// goes offline; Debian's lstopo-no-graphics on wloc's library adopts
/// each new image (it says when it does not) and shows what Debian's
/// libhwloc shows.  How long each change took to reach a program is
/// printed (`timing:` lines); the goal is one second.
#[test]
fn the_service_follows_cpus_plugged_in_and_taken_offline() {
    let lib = common::wloc_libhwloc_dir("qemu-hotplug");
    let job = HOTPLUG_JOB
        .replace("@LIB@", &lib.display().to_string())
        .replace("@WLOC@", &wloc().display().to_string());
    let Some(out) = run(&Machine {
        name: "hotplug",
        qemu: &["-machine", "q35", "-smp", "2,maxcpus=4", "-m", "1G"],
        prep: "",
        ignore_memory_tiers: false,
        job: Some((job, plug_in_a_cpu)),
    }) else {
        return;
    };
    let read = |name: &str| std::fs::read_to_string(out.0.join(name)).unwrap_or_default();
    let pus = |name: &str| -> Vec<String> {
        read(name)
            .lines()
            .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
            .collect()
    };
    assert_eq!(pus("pus-wloc-before"), ["P#0", "P#1"]);
    let plugged = pus("pus-libhwloc-plugged");
    assert_eq!(plugged.len(), 3, "{plugged:?}; {}", read("qmp.log"));
    assert_eq!(pus("pus-wloc-plugged"), plugged);
    let after = pus("pus-libhwloc-after");
    assert_eq!(after, [&plugged[0][..], &plugged[2][..]], "CPU 1 offline");
    assert_eq!(pus("pus-wloc-after"), after);
    assert!(
        read("why-9p").contains("on a 9p file system"),
        "an image on 9p: {}",
        read("why-9p")
    );
    let service = read("service.log");
    assert!(
        service
            .lines()
            .filter(|l| l.contains(" published "))
            .count()
            >= 3,
        "one publication at start and one per change:\n{service}"
    );
    // From the CPUs online changing (the first: from the service's start)
    // to the publication of the image that shows them.
    for what in ["first-publication", "cpu-plugged", "cpu1-offline"] {
        let ms: u64 = read(what)
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{what}: {}", read("why.log")));
        eprintln!("timing: hotplug {what}: {:.2} s", ms as f64 / 1000.0);
    }
}
