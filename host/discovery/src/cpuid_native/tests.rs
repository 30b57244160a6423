//! Dumps replayed and written back, ACPI tables, and this machine.

use super::*;
use wloc_core::Topology;
use wloc_probe::DumpSource;

fn replay(pu0: &str) -> DumpSource {
    DumpSource::from_files([
        ("hwloc-cpuid-info", CPUID_INFO.as_bytes()),
        ("pu0", pu0.as_bytes()),
    ])
    .unwrap()
}

/// A dump written by hwloc 2.9's hwloc-gather-cpuid, replayed, is
/// written back identically (an AMD EPYC guest: TOPOEXT, leaf 0xb,
/// leaves up to 0x1c and 0x80000021).
#[test]
fn replays_hwloc_dump_identically() {
    let orig = "\
# mask e[abcd]x => e[abcd]x
1 0 0 0 0 => 1c 68747541 444d4163 69746e65
1 1 0 0 0 => a10f11 20800 fffa3203 178bfbff
1 2 0 0 0 => 0 0 0 0
1 3 0 0 0 => 0 0 0 0
5 4 0 0 0 => 0 0 0 0
1 5 0 0 0 => 0 0 0 0
1 6 0 0 0 => 4 0 0 0
5 7 0 0 0 => 1 f1bf07ab 405fc6 10
5 7 0 1 0 => 20 0 0 0
1 9 0 0 0 => 0 0 0 0
1 a 0 0 0 => 0 0 0 0
5 b 0 0 0 => 0 1 100 0
5 b 0 1 0 => 5 2 201 0
5 b 0 2 0 => 0 0 2 0
5 d 0 0 0 => e7 980 980 0
5 d 0 1 0 => f 9a8 1800 0
5 d 0 2 0 => 100 240 0 0
5 d 0 5 0 => 40 340 0 0
5 d 0 6 0 => 200 380 0 0
5 d 0 7 0 => 400 580 0 0
5 d 0 b 0 => 10 0 1 0
5 d 0 c 0 => 18 0 1 0
5 f 0 0 0 => 0 0 0 0
5 f 0 1 0 => 0 0 0 0
5 10 0 0 0 => 0 0 0 0
5 10 0 1 0 => 0 0 0 0
5 10 0 2 0 => 0 0 0 0
5 10 0 3 0 => 0 0 0 0
5 14 0 0 0 => 0 0 0 0
5 14 0 1 0 => 0 0 0 0
1 15 0 0 0 => 0 0 0 0
1 16 0 0 0 => 0 0 0 0
5 17 0 0 0 => 0 0 0 0
5 18 0 0 0 => 0 0 0 0
1 19 0 0 0 => 0 0 0 0
5 1a 0 0 0 => 0 0 0 0
5 1c 0 0 0 => 0 0 0 0
1 80000000 0 0 0 => 80000021 68747541 444d4163 69746e65
1 80000001 0 0 0 => a10f11 40000000 4003f3 2fd3fbff
1 80000002 0 0 0 => 20444d41 43595045 0 0
1 80000003 0 0 0 => 0 0 0 0
1 80000004 0 0 0 => 0 0 0 0
1 80000005 0 0 0 => ff48ff40 ff48ff40 20080140 20080140
1 80000006 0 0 0 => 5c002200 6c004200 4006140 a009140
1 80000007 0 0 0 => 0 0 0 100
1 80000008 0 0 0 => 303030 50020005 7001 0
1 8000000a 0 0 0 => 0 0 0 0
1 80000019 0 0 0 => 0 0 0 0
1 8000001a 0 0 0 => 6 0 0 0
1 8000001b 0 0 0 => 0 0 0 0
1 8000001c 0 0 0 => 0 0 0 0
5 8000001d 0 0 0 => 121 1c0003f 3f 0
5 8000001d 0 1 0 => 122 1c0003f 3f 0
5 8000001d 0 2 0 => 143 1c0003f 7ff 2
5 8000001d 0 3 0 => 4163 3c0003f 7fff 1
5 8000001d 0 4 0 => 0 0 0 0
1 8000001e 0 0 0 => 0 0 0 0
1 8000001f 0 0 0 => 0 0 0 0
5 80000020 0 0 0 => 0 0 0 0
5 80000020 0 1 0 => 0 0 0 0
1 80000021 0 0 0 => 204 0 86 0
";
    assert_eq!(gather_pu(&replay(orig), 0), orig);
}

/// The dumps of the conformance recordings that the current
/// hwloc-gather-cpuid wrote (the others come from older versions,
/// which recorded leaf 0xb without the x2APIC flag and fewer leaves)
/// come back identically from a replay.
#[test]
fn conformance_dumps_round_trip() {
    const CURRENT: [&str; 8] = [
        "AMD-19h-Zen4-2xEpyc-9654",
        "AMD-K8-SantaRosa-2xOpteron-2218",
        "AMD-K8-SledgeHammer-2xOpteron-250",
        "Intel-ArrowLake-CoreUltra5-225U",
        "Intel-Core-2xXeon-E5345",
        "Intel-Haswell-2xXeon-E5-2680v3",
        "Intel-IvyBridge-12xXeon-E5-4620v2",
        "Intel-KnightsCorner-XeonPhi-SE10P",
    ];
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/conformance/x86");
    assert!(dir.is_dir(), "{} is missing", dir.display());
    let tmp = std::env::temp_dir().join(format!("wloc-gather-rt-{}", std::process::id()));
    for name in CURRENT {
        let out = tmp.join(name);
        std::fs::create_dir_all(&out).unwrap();
        let ok = std::process::Command::new("tar")
            .arg("xjf")
            .arg(dir.join(format!("{name}.tar.bz2")))
            .arg("-C")
            .arg(&out)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "cannot unpack {name}");
        let pus = walk(&out);
        assert!(!pus.is_empty(), "{name}: no pu0");
        for pu0 in pus {
            let text = std::fs::read_to_string(&pu0).unwrap();
            assert_eq!(gather_pu(&replay(&text), 0), text, "{}", pu0.display());
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Tables in sysfs files put NUMA nodes on the PUs whose APIC ids
/// the SRAT lists: four PUs with APIC ids 0, 1, 2, 3 replayed from a
/// dump, domain 0 holding APIC ids 0-1 and domain 1 APIC ids 2-3.
#[test]
fn acpi_files_give_numa_nodes() {
    fn table(sig: &[u8; 4], rev: u8, body: &[u8]) -> Vec<u8> {
        let mut t = sig.to_vec();
        t.extend_from_slice(&((36 + body.len()) as u32).to_le_bytes());
        t.extend_from_slice(&[rev, 0]);
        t.extend_from_slice(b"WLOCTSTESTTABL\x01\0\0\0WLOC\x01\0\0\0");
        t.extend_from_slice(body);
        let sum = t.iter().fold(0u8, |s, &b| s.wrapping_add(b));
        t[9] = 0u8.wrapping_sub(sum);
        t
    }
    let mut srat = vec![1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    for apic in 0u8..4 {
        srat.extend_from_slice(&[0, 16, apic / 2, apic, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    }
    for d in 0u32..2 {
        srat.extend_from_slice(&[1, 40]);
        srat.extend_from_slice(&d.to_le_bytes());
        srat.extend_from_slice(&[0, 0]);
        srat.extend_from_slice(&(u64::from(d) << 30).to_le_bytes());
        srat.extend_from_slice(&(1u64 << 30).to_le_bytes());
        srat.extend_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    }
    let mut slit = 2u64.to_le_bytes().to_vec();
    slit.extend_from_slice(&[10, 17, 17, 10]);
    let root = std::env::temp_dir().join(format!("wloc-acpi-files-{}", std::process::id()));
    let dir = root.join("sys/firmware/acpi/tables");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SRAT"), table(b"SRAT", 3, &srat)).unwrap();
    std::fs::write(dir.join("SLIT"), table(b"SLIT", 1, &slit)).unwrap();
    std::fs::write(dir.join("DSDT"), b"not read").unwrap();
    // PUs listed with APIC ids 3, 2, 1, 0: OS index and APIC id differ.
    let mut files = vec![("hwloc-cpuid-info".to_string(), CPUID_INFO.to_string())];
    for pu in 0u32..4 {
        files.push((
            format!("pu{pu}"),
            format!(
                "1 0 0 0 0 => 1 756e6547 6c65746e 49656e69\n1 1 0 0 0 => 0 {:x} 0 0\n",
                (3 - pu) << 24
            ),
        ));
    }
    let dump = || {
        DumpProvider::new(
            DumpSource::from_files(files.iter().map(|(n, b)| (n.as_str(), b.as_bytes()))).unwrap(),
            None,
        )
    };
    // The x86 component, granted the tables under this fsroot.
    let grant =
        wloc_runtime::FileAccess::new(wloc_runtime::builtin::X86_ROOTS, Some(&root)).unwrap();
    let t = crate::input::run_x86(
        &crate::Discovery::new(None),
        dump(),
        Some(grant),
        Topology::new(),
    );
    let _ = std::fs::remove_dir_all(&root);
    let t = t.unwrap();
    let nodes = t.objs_by_type(wloc_core::ObjType::NUMANode);
    assert_eq!(nodes.len(), 2);
    let n0 = t.obj_by_os_index(wloc_core::ObjType::NUMANode, 0).unwrap();
    assert_eq!(t.obj(n0).cpuset.as_ref().unwrap().to_list_string(), "2-3");
    assert_eq!(t.obj(n0).numa().unwrap().local_memory, 1 << 30);
    assert_eq!(t.distances[0].values, vec![10, 17, 17, 10]);
    assert_eq!(t.check(), Ok(()));
    // No tables granted: the topology keeps its single node.
    let t =
        crate::input::run_x86(&crate::Discovery::new(None), dump(), None, Topology::new()).unwrap();
    assert_eq!(t.objs_by_type(wloc_core::ObjType::NUMANode).len(), 1);
}

/// This machine through CPUID and, as root, its ACPI tables: the same
/// PUs as the operating system shows.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn discovers_this_machine() {
    let t = crate::Discovery::new(None)
        .load(&crate::input::Source::CpuidThisSystem, Topology::new())
        .unwrap();
    assert_eq!(t.check(), Ok(()));
    let pus = t.objs_by_type(wloc_core::ObjType::PU).len();
    assert_eq!(pus, LinuxPuRunner::new().unwrap().pus().len());
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            v.extend(walk(&p));
        } else if p.file_name().is_some_and(|n| n == "pu0") {
            v.push(p);
        }
    }
    v
}

#[cfg(target_os = "linux")]
#[test]
fn runner_pins_and_restores() {
    // SAFETY: no arguments.
    let tid = unsafe { libc::gettid() };
    let status = || std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).unwrap();
    let before = status();
    let allowed = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("Cpus_allowed_list"))
            .map(String::from)
    };
    let r = LinuxPuRunner::new().unwrap();
    assert!(!r.pus().is_empty());
    for pu in 0..r.pus().len() {
        let mut ran = None;
        wloc_probe::PuRunner::run_on(&r, pu, &mut || ran = wloc_bind::current_pu().ok());
        assert_eq!(ran, Some(r.pus()[pu]));
    }
    let mut called = false;
    wloc_probe::PuRunner::run_on(&r, r.pus().len(), &mut || called = true);
    assert!(!called);
    drop(r);
    // The thread's affinity is back.
    assert_eq!(allowed(&status()), allowed(&before));
    assert_eq!(
        linux::parse_cpu_list("0-3,8,10-11\n"),
        Some(vec![0, 1, 2, 3, 8, 10, 11])
    );
    assert_eq!(linux::parse_cpu_list("3-1"), None);
}

/// The on-demand provider answers on the PU asked (leaf 1's initial
/// APIC ids differ between PUs), keeps answers, and gives the thread
/// its affinity back.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn live_provider_answers_on_each_pu_and_restores() {
    use wloc_probe::CpuidSource;
    // SAFETY: no arguments.
    let tid = unsafe { libc::gettid() };
    let allowed = || {
        std::fs::read_to_string(format!("/proc/self/task/{tid}/status"))
            .unwrap()
            .lines()
            .find(|l| l.starts_with("Cpus_allowed_list"))
            .map(String::from)
    };
    let before = allowed();
    let p = super::LiveProvider::new().unwrap();
    let n = p.pu_count();
    assert!(n >= 1);
    let apic = |pu| p.cpuid(pu, 1, 0)[1] >> 24;
    let ids: std::collections::BTreeSet<u32> = (0..n).map(apic).collect();
    assert_eq!(ids.len(), n, "one initial APIC id per PU");
    assert_eq!(p.cpuid(0, 0, 0), p.cpuid(0, 0, 0));
    assert_eq!(p.cpuid(n, 0, 0), [0; 4], "no such PU");
    p.restore().unwrap();
    assert_eq!(allowed(), before);
}
