//! Boots the UEFI application (`probe/uefi`) under QEMU with OVMF for a
//! matrix of machine configurations and checks that the topology it
//! prints from the firmware (CPUID on every CPU through MP services, ACPI
//! MADT/SRAT/SLIT/HMAT) is exactly the configured one.
//!
//! QEMU 7.2 under TCG has known CPUID quirks (L1 caches said to be per
//! thread, no x2APIC hence no leaf 0xB, leaf 4 counting cores rather
//! than core ids): the assertions are on what QEMU really configures.
//!
//! Needs `qemu-system-x86_64` and OVMF (Debian packages `qemu-system-x86`
//! and `ovmf`) and the `x86_64-unknown-uefi` Rust target: the tests
//! install them when they are missing (as root), and fail saying what to
//! install when they cannot, unless `WLOC_SKIP_QEMU=1` skips them.
//!
//! `tests/qemu_pvh_boot.rs` runs the same configurations and checks on
//! the PVH unikernel (`probe/pvh`) through [`with_booter`].

use crate::common;

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use common::{TempDir, run_wloc, workspace};

const OVMF: &str = "/usr/share/ovmf/OVMF.fd";
pub(crate) const QEMU: &str = "qemu-system-x86_64";
/// Longest a boot may take before QEMU is killed (a boot takes 5-20 s
/// alone; CI boots several at once on two cores).
pub(crate) const BOOT_TIMEOUT: Duration = Duration::from_secs(240);
/// QEMU's exit status when the application reports success through
/// `isa-debug-exit` (it writes 3; QEMU exits with `3 << 1 | 1`).
pub(crate) const SUCCESS_STATUS: i32 = 7;

/// The application, built once; `None` when QEMU or OVMF is missing and
/// not required.
fn app() -> Option<&'static Path> {
    static APP: OnceLock<Option<PathBuf>> = OnceLock::new();
    APP.get_or_init(|| {
        qemu_prerequisites(
            "QEMU boot tests",
            &[
                ("/usr/bin/qemu-system-x86_64", "qemu-system-x86"),
                (OVMF, "ovmf"),
            ],
            "x86_64-unknown-uefi",
        )
        .then(|| {
            build_firmware(
                "probe/uefi",
                "x86_64-unknown-uefi",
                "wloc-uefi",
                "wloc-uefi.efi",
            )
        })
    })
    .as_deref()
}

/// Installs what a set of QEMU boot tests needs (Debian packages and a
/// Rust target) when it is missing; false (the tests are skipped) only
/// when it cannot be and `WLOC_SKIP_QEMU=1` says so.
pub(crate) fn qemu_prerequisites(tests: &str, packages: &[(&str, &str)], target: &str) -> bool {
    let needed =
        common::require_packages(packages).and_then(|()| common::require_rust_target(target));
    if let Err(m) = needed {
        assert!(
            std::env::var("WLOC_SKIP_QEMU").is_ok_and(|v| v == "1"),
            "{m}: the {tests} need it (WLOC_SKIP_QEMU=1 skips them)"
        );
        eprintln!("skipping the {tests} (WLOC_SKIP_QEMU=1): {m}");
        return false;
    }
    true
}

/// Builds a firmware program of the workspace (`crate_dir`, a cargo
/// workspace of its own) for `target` with cargo, into `dir` beside this
/// test's target directory, and returns the file `name` it made.
pub(crate) fn build_firmware(crate_dir: &str, target: &str, dir: &str, name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // TARGET/release/deps/e2e-HASH
    let target_dir = exe
        .ancestors()
        .nth(3)
        .map(|t| t.join(dir))
        .unwrap_or_else(|| std::env::temp_dir().join(format!("{dir}-target")));
    let src = workspace().join(crate_dir);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let start = std::time::Instant::now();
    let o = Command::new(cargo)
        .current_dir(&src)
        .args(["build", "--release", "--target", target])
        .arg("--manifest-path")
        .arg(src.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .expect("cargo runs");
    assert!(
        o.status.success(),
        "building {crate_dir} for {target} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let file = target_dir.join(target).join("release").join(name);
    assert!(file.exists(), "{} was not built", file.display());
    common::timing(&format!("build {crate_dir} for {target}"), start);
    file
}

/// One object line of the report.
#[derive(Clone, Debug)]
pub(crate) struct Obj {
    pub(crate) ty: String,
    pub(crate) os: Option<u32>,
    pub(crate) cpuset: BTreeSet<u32>,
    pub(crate) nodeset: BTreeSet<u32>,
    pub(crate) attrs: BTreeMap<String, String>,
}

/// What the application printed between its markers.
#[derive(Debug, Default)]
pub(crate) struct Report {
    /// `(os index, APIC id)` of every CPU (x86), or `(os index, ACPI
    /// processor UID)` (ARM).
    pub(crate) cpus: Vec<(u32, u32)>,
    /// The boot CPU, when the report names it (ARM).
    pub(crate) boot: Option<u32>,
    /// CPUID answers: `(os, leaf, subleaf) -> registers`.
    cpuid: BTreeMap<(u32, u32, u32), [u32; 4]>,
    pub(crate) tables: Vec<String>,
    /// Processor hierarchy nodes of the PPTT (ARM).
    pub(crate) pptt_nodes: usize,
    pub(crate) synthetic: Option<String>,
    pub(crate) objs: Vec<Obj>,
    /// name -> (node OS indexes, values)
    pub(crate) distances: BTreeMap<String, (Vec<u32>, Vec<u64>)>,
    /// (name, target) -> (initiator cpuset, value)
    pub(crate) memattrs: BTreeMap<(String, u32), (BTreeSet<u32>, u64)>,
    /// The hwloc XML document printed after the report.
    pub(crate) xml: Option<String>,
    pub(crate) text: String,
}

fn parse_list(s: &str) -> BTreeSet<u32> {
    let mut set = BTreeSet::new();
    if s == "-" || s.is_empty() {
        return set;
    }
    for part in s.split(',') {
        match part.split_once('-') {
            Some((a, b)) => set.extend(a.parse::<u32>().unwrap()..=b.parse::<u32>().unwrap()),
            None => {
                set.insert(part.parse().unwrap());
            }
        }
    }
    set
}

fn fields(words: &[&str]) -> BTreeMap<String, String> {
    words
        .iter()
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

impl Report {
    /// The line a probe named `name` prints first.
    pub(crate) fn begin_marker(name: &str) -> String {
        format!("=== {name} begin ===")
    }

    /// The report of a probe whose markers are `=== NAME begin ===` ...
    /// (`wloc-uefi`, `wloc-pvh`).
    pub(crate) fn parse(console: &str, name: &str) -> Report {
        let begin = console
            .find(&Report::begin_marker(name))
            .unwrap_or_else(|| panic!("no begin marker in the console output:\n{console}"));
        let body = &console[begin..];
        let end = body
            .find(&format!("=== {name} end"))
            .unwrap_or_else(|| panic!("no end marker in the console output:\n{body}"));
        let (body, tail) = body.split_at(end);
        let status = tail.lines().next().unwrap_or("");
        assert!(
            status.starts_with(&format!("=== {name} end ok")),
            "the application failed: {status}\n{body}"
        );
        let (body, xml) = match body.split_once(&format!("=== {name} xml ===")) {
            Some((report, xml)) => (report, Some(xml.trim_start().replace('\r', ""))),
            None => (body, None),
        };
        let mut r = Report {
            text: body.to_string(),
            xml,
            ..Report::default()
        };
        for line in body.lines().skip(1) {
            let line = line.trim_end_matches('\r');
            let w: Vec<&str> = line.split(' ').collect();
            let f = fields(&w);
            match w[0] {
                "cpu" => {
                    let os = f["os"].parse().unwrap();
                    let id = f
                        .get("apic")
                        .or_else(|| f.get("uid"))
                        .expect("apic= or uid=");
                    r.cpus.push((os, id.parse().unwrap()));
                    if w.last() == Some(&"boot") {
                        r.boot = Some(os);
                    }
                }
                "pptt" => r.pptt_nodes = f.get("nodes").map_or(0, |n| n.parse().unwrap()),
                "cpuid" if w.len() == 9 => {
                    let h = |s: &str| u32::from_str_radix(s, 16).unwrap();
                    r.cpuid.insert(
                        (w[1].parse().unwrap(), h(w[2]), h(w[3])),
                        [h(w[5]), h(w[6]), h(w[7]), h(w[8])],
                    );
                }
                "acpi" => {
                    if let Some(t) = f.get("tables") {
                        r.tables = t.split(',').map(String::from).collect();
                    }
                }
                "synthetic" => r.synthetic = Some(line["synthetic ".len()..].to_string()),
                "obj" => r.objs.push(Obj {
                    ty: w[1].to_string(),
                    os: f["os"].parse().ok(),
                    cpuset: parse_list(&f["cpuset"]),
                    nodeset: parse_list(&f["nodeset"]),
                    attrs: f,
                }),
                "distances" => {
                    let nodes = f["nodes"].split(',').map(|s| s.parse().unwrap()).collect();
                    let values = f["values"].split(',').map(|s| s.parse().unwrap()).collect();
                    r.distances.insert(w[1].to_string(), (nodes, values));
                }
                "memattr" => {
                    r.memattrs.insert(
                        (w[1].to_string(), f["target"].parse().unwrap()),
                        (parse_list(&f["initiator"]), f["value"].parse().unwrap()),
                    );
                }
                _ => {}
            }
        }
        r
    }

    /// The synthetic description the probe printed.
    pub(crate) fn synthetic(&self) -> &str {
        self.synthetic.as_deref().expect("a synthetic line")
    }

    /// The XML document the probe printed.
    pub(crate) fn xml(&self) -> &str {
        self.xml.as_deref().expect("an XML document")
    }

    pub(crate) fn of_type(&self, ty: &str) -> Vec<&Obj> {
        self.objs.iter().filter(|o| o.ty == ty).collect()
    }

    /// The cpusets of the objects of a type, sorted.
    pub(crate) fn cpusets(&self, ty: &str) -> Vec<BTreeSet<u32>> {
        let mut v: Vec<_> = self.of_type(ty).iter().map(|o| o.cpuset.clone()).collect();
        v.sort();
        v
    }

    pub(crate) fn node(&self, os: u32) -> &Obj {
        self.objs
            .iter()
            .find(|o| o.ty == "NUMANode" && o.os == Some(os))
            .unwrap_or_else(|| panic!("no NUMA node {os}:\n{}", self.text))
    }

    pub(crate) fn node_memory(&self, os: u32) -> u64 {
        self.node(os).attrs["memory"].parse().unwrap()
    }
}

/// Consecutive blocks of `size` PUs out of `0..n`.
pub(crate) fn blocks(n: u32, size: u32) -> Vec<BTreeSet<u32>> {
    (0..n / size)
        .map(|i| (i * size..(i + 1) * size).collect())
        .collect()
}

pub(crate) fn set(v: &[u32]) -> BTreeSet<u32> {
    v.iter().copied().collect()
}

/// Boots the application with these extra QEMU arguments and returns its
/// report, or `None` when the tests are skipped.
fn boot(tag: &str, args: &[&str]) -> Option<Report> {
    boot_cpu(tag, "Skylake-Server", args)
}

/// Boots a configuration (`tag` names it in messages) and returns the
/// report, or `None` when the QEMU tests are skipped.
pub(crate) type Booter = fn(tag: &str, cpu: &str, args: &[&str]) -> Option<Report>;

thread_local! {
    /// What [`boot_cpu`] boots on this test's thread: the UEFI
    /// application unless [`with_booter`] says otherwise.
    static BOOTER: Cell<Booter> = const { Cell::new(boot_uefi) };
}

/// Runs one of this module's tests (its configuration and its checks)
/// with `booter` booting the machine.
pub(crate) fn with_booter(booter: Booter, test: fn()) {
    BOOTER.set(booter);
    test();
}

/// [`boot`] with another CPU model.
fn boot_cpu(tag: &str, cpu: &str, args: &[&str]) -> Option<Report> {
    BOOTER.get()(tag, cpu, args)
}

/// Boots the UEFI application.  The console of each configuration is
/// kept, so that a module comparing another probe with it (and this
/// one) boots each configuration once per test run.
pub(crate) fn boot_uefi(tag: &str, cpu: &str, args: &[&str]) -> Option<Report> {
    static CONSOLES: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());
    let efi = app()?;
    let key = format!("{cpu} {}", args.join(" "));
    let cached = CONSOLES.lock().unwrap().get(&key).cloned();
    let console = match cached {
        Some(c) => c,
        None => {
            let esp = TempDir::new(&format!("esp-{tag}"));
            let boot_dir = esp.0.join("EFI/BOOT");
            std::fs::create_dir_all(&boot_dir).unwrap();
            std::fs::copy(efi, boot_dir.join("BOOTX64.EFI")).unwrap();
            let mut qemu_args: Vec<String> = ["-bios", OVMF, "-drive"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            qemu_args.push(format!("format=raw,file=fat:rw:{}", esp.0.display()));
            let console = run_qemu(tag, cpu, &qemu_args, args);
            CONSOLES.lock().unwrap().insert(key, console.clone());
            console
        }
    };
    Some(Report::parse(&console, "wloc-uefi"))
}

/// Runs QEMU (TCG, no display, serial on stdout, `isa-debug-exit`) with
/// `boot_args` (firmware and image) and `args` (the machine) and returns
/// its console once it exited with [`SUCCESS_STATUS`].
pub(crate) fn run_qemu(tag: &str, cpu: &str, boot_args: &[String], args: &[&str]) -> String {
    let mut child = Command::new(QEMU)
        .args(["-accel", "tcg", "-cpu", cpu])
        .args([
            "-nographic",
            "-serial",
            "stdio",
            "-monitor",
            "none",
            "-net",
            "none",
        ])
        .args(["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"])
        .args(boot_args)
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
        panic!("{tag}: QEMU did not finish within {BOOT_TIMEOUT:?}; console:\n{console}\n{errors}");
    };
    common::timing(&format!("{tag} boot"), start);
    assert_eq!(
        status.code(),
        Some(SUCCESS_STATUS),
        "{tag}: QEMU exit status {status} (the application did not report success):\n{console}\n{errors}"
    );
    console
}

/// Checks the CPU side of a machine with `packages` packages of `dies`
/// dies of `cores` cores of `threads` threads, numbered in APIC order,
/// with `apic_ids` the APIC ids QEMU gives.
fn check_cpus(r: &Report, packages: u32, dies: u32, cores: u32, threads: u32, apic_ids: &[u32]) {
    let n = packages * dies * cores * threads;
    let os: Vec<u32> = r.cpus.iter().map(|c| c.0).collect();
    assert_eq!(os, (0..n).collect::<Vec<_>>(), "{}", r.text);
    let apic: Vec<u32> = r.cpus.iter().map(|c| c.1).collect();
    assert_eq!(apic, apic_ids, "APIC ids\n{}", r.text);
    assert_eq!(r.cpusets("PU"), blocks(n, 1), "PUs\n{}", r.text);
    let pu_os: BTreeSet<u32> = r.of_type("PU").iter().map(|o| o.os.unwrap()).collect();
    assert_eq!(pu_os, (0..n).collect(), "{}", r.text);
    assert_eq!(
        r.cpusets("Package"),
        blocks(n, n / packages),
        "packages\n{}",
        r.text
    );
    let die_sets = r.cpusets("Die");
    if dies > 1 {
        assert_eq!(die_sets, blocks(n, n / packages / dies), "dies\n{}", r.text);
    } else {
        assert!(die_sets.is_empty(), "no die expected\n{}", r.text);
    }
    assert_eq!(r.cpusets("Core"), blocks(n, threads), "cores\n{}", r.text);
    // QEMU's leaf 4: L2 per core; L3 per die (per package without dies).
    assert_eq!(r.cpusets("L2Cache"), blocks(n, threads), "L2\n{}", r.text);
    assert_eq!(
        r.cpusets("L3Cache"),
        blocks(n, n / packages / dies),
        "L3\n{}",
        r.text
    );
    let infos: Vec<&str> = r
        .text
        .lines()
        .filter(|l| l.starts_with("info Package:"))
        .collect();
    for want in [
        "CPUVendor=GenuineIntel",
        "CPUModelNumber=85",
        "CPUFamilyNumber=6",
    ] {
        let count = infos.iter().filter(|l| l.ends_with(want)).count();
        assert_eq!(
            count, packages as usize,
            "{want} in every package\n{}",
            r.text
        );
    }
    // Every CPU really answered: the APIC id in leaf 1 is its own.
    for &(os, apic) in &r.cpus {
        let leaf1 = r.cpuid[&(os, 1, 0)];
        assert_eq!(leaf1[1] >> 24, apic & 0xff, "CPU {os} leaf 1\n{}", r.text);
    }
}

/// No SRAT: one NUMA node holding every PU and the RAM (`-m ram_mib`)
/// less what the firmware reserves for itself; no distances.
fn check_no_numa(r: &Report, n: u32, ram_mib: u64) {
    let nodes = r.of_type("NUMANode");
    assert_eq!(nodes.len(), 1, "{}", r.text);
    assert_eq!(nodes[0].cpuset, (0..n).collect(), "{}", r.text);
    let memory = r.node_memory(0);
    assert!(
        memory <= ram_mib * MIB && memory >= (ram_mib - 32) * MIB,
        "node memory {memory} for {ram_mib} MiB of RAM\n{}",
        r.text
    );
    assert!(r.distances.is_empty(), "{}", r.text);
    assert!(!r.tables.iter().any(|t| t == "SRAT"), "{}", r.text);
}

/// Leaves whose answers depend on the subleaf (ecx): hwloc-gather-cpuid
/// marks them with mask 5, the others with mask 1 (eax only).
const SUBLEAF_LEAVES: &[u32] = &[
    4,
    7,
    0xb,
    0xd,
    0xf,
    0x10,
    0x12,
    0x14,
    0x17,
    0x18,
    0x1a,
    0x1d,
    0x1e,
    0x1f,
    0x20,
    0x23,
    0x24,
    0x8000_001d,
    0x8000_0020,
    0x8000_0026,
];

/// Writes the CPUID answers the application collected as a
/// hwloc-gather-cpuid dump.
fn write_dump(r: &Report, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("hwloc-cpuid-info"), "Architecture: x86\n").unwrap();
    let mut files: BTreeMap<u32, String> = BTreeMap::new();
    for (&(os, leaf, sub), [a, b, c, d]) in &r.cpuid {
        let mask = if SUBLEAF_LEAVES.contains(&leaf) { 5 } else { 1 };
        files.entry(os).or_default().push_str(&format!(
            "{mask:x} {leaf:x} 0 {sub:x} 0 => {a:x} {b:x} {c:x} {d:x}\n"
        ));
    }
    for (os, text) in files {
        std::fs::write(dir.join(format!("pu{os}")), text).unwrap();
    }
}

/// The CPUID answers collected in the firmware, replayed as a dump, give
/// the same machine in hwloc's x86 backend, in `wloc ls --if cpuid` and
/// in the firmware (memory aside, which CPUID does not describe).
fn check_dump_like_hwloc(r: &Report, tag: &str) {
    common::require_hwloc();
    let tmp = TempDir::new(&format!("dump-{tag}"));
    let dir = tmp.0.join("cpuid");
    write_dump(r, &dir);
    let h = Command::new("lstopo-no-graphics")
        .args(["--of", "synthetic", "-"])
        .env("HWLOC_COMPONENTS", "x86,stop")
        .env("HWLOC_CPUID_PATH", &dir)
        .env("LC_ALL", "C")
        .output()
        .expect("lstopo-no-graphics runs");
    let hwloc_err = String::from_utf8_lossy(&h.stderr);
    assert!(h.status.success(), "hwloc on the dump: {hwloc_err}");
    let o = run_wloc([
        "ls".as_ref(),
        "-i".as_ref(),
        dir.as_os_str(),
        "--if".as_ref(),
        "cpuid".as_ref(),
        "--of".as_ref(),
        "synthetic".as_ref(),
        "-".as_ref(),
    ]);
    assert!(
        o.status.success(),
        "wloc on the dump: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let hwloc = String::from_utf8_lossy(&h.stdout).trim().to_string();
    let wloc = String::from_utf8_lossy(&o.stdout).trim().to_string();
    assert_eq!(
        wloc, hwloc,
        "wloc and hwloc read the firmware's CPUID differently\n{hwloc_err}"
    );
    let firmware = r.synthetic.as_deref().unwrap_or("");
    let without_memory = match (firmware.find("[NUMANode("), firmware.find(")]")) {
        (Some(a), Some(b)) if a < b => {
            format!("{}[NUMANode]{}", &firmware[..a], &firmware[b + 2..])
        }
        _ => firmware.to_string(),
    };
    assert_eq!(
        without_memory, wloc,
        "the firmware and the replayed dump differ"
    );
}

/// The synthetic description, when there is one, reads back in `wloc`
/// into a machine of as many PUs.
fn check_synthetic(r: &Report, n: u32) {
    let desc = r
        .synthetic
        .as_deref()
        .unwrap_or_else(|| panic!("{}", r.text));
    let o = run_wloc(["ls", "-i", desc, "--of", "synthetic", "-"]);
    assert!(
        o.status.success(),
        "{desc}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let back = String::from_utf8_lossy(&o.stdout);
    assert_eq!(back.trim(), desc, "synthetic round trip");
    let o = run_wloc(["ls", "-i", desc, "--of", "xml", "-"]);
    let xml = String::from_utf8_lossy(&o.stdout);
    assert_eq!(xml.matches("type=\"PU\"").count(), n as usize, "{desc}");
    check_xml(r, desc);
}

/// Writes the XML document the firmware printed to a file, checks that
/// `wloc` rewrites it unchanged, and returns the file (in its folder).
fn firmware_xml(r: &Report) -> (TempDir, std::path::PathBuf, &str) {
    let xml = r
        .xml
        .as_deref()
        .unwrap_or_else(|| panic!("no XML document after the report\n{}", r.text));
    let tmp = TempDir::new("firmware-xml");
    let file = tmp.0.join("firmware.xml");
    std::fs::write(&file, xml).unwrap();
    let f = file.to_str().unwrap();
    let o = run_wloc(["ls", "-i", f, "--of", "xml", "--export-xml-flags", "2", "-"]);
    assert!(
        o.status.success(),
        "wloc reads the firmware's XML: {}\n{xml}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        xml,
        "wloc rewrites the firmware's XML differently"
    );
    (tmp, file, xml)
}

/// Runs lstopo 2.9 on a file with more arguments.
fn lstopo(file: &std::path::Path, args: &[&str]) -> String {
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

/// The XML document the firmware printed reads back, in `wloc` and in
/// hwloc 2.9, as the machine the synthetic description names; and
/// `wloc` writes it back unchanged.
fn check_xml(r: &Report, desc: &str) {
    let (_tmp, file, xml) = firmware_xml(r);
    let f = file.to_str().unwrap();
    let o = run_wloc(["ls", "-i", f, "--of", "synthetic", "-"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), desc, "{xml}");
    let theirs = lstopo(&file, &["--of", "synthetic", "-"]);
    assert_eq!(theirs.trim(), desc, "hwloc\n{xml}");
}

#[test]
pub(crate) fn one_cpu() {
    let Some(r) = boot("one", &["-machine", "q35", "-m", "256", "-smp", "1"]) else {
        return;
    };
    check_cpus(&r, 1, 1, 1, 1, &[0]);
    check_no_numa(&r, 1, 256);
    check_dump_like_hwloc(&r, "one");
    check_synthetic(&r, 1);
    assert!(r.tables.iter().any(|t| t == "APIC"), "{}", r.text);
}

#[test]
pub(crate) fn two_sockets_two_cores_two_threads() {
    let Some(r) = boot(
        "2x2x2",
        &[
            "-machine",
            "q35",
            "-m",
            "512",
            "-smp",
            "8,sockets=2,cores=2,threads=2",
        ],
    ) else {
        return;
    };
    check_cpus(&r, 2, 1, 2, 2, &[0, 1, 2, 3, 4, 5, 6, 7]);
    check_no_numa(&r, 8, 512);
    check_dump_like_hwloc(&r, "2x2x2");
    check_synthetic(&r, 8);
}

#[test]
pub(crate) fn three_cores_leave_apic_id_gaps() {
    let Some(r) = boot(
        "2x3",
        &[
            "-machine",
            "q35",
            "-m",
            "512",
            "-smp",
            "6,sockets=2,cores=3",
        ],
    ) else {
        return;
    };
    // Three cores take two bits of the APIC id: 3 and 7 are not used.
    check_cpus(&r, 2, 1, 3, 1, &[0, 1, 2, 4, 5, 6]);
    check_no_numa(&r, 6, 512);
    check_dump_like_hwloc(&r, "2x3");
    check_synthetic(&r, 6);
}

#[test]
pub(crate) fn two_dies_per_package() {
    let Some(r) = boot(
        "dies",
        &[
            "-machine",
            "q35",
            "-m",
            "512",
            "-smp",
            "16,sockets=2,dies=2,cores=2,threads=2",
        ],
    ) else {
        return;
    };
    check_cpus(&r, 2, 2, 2, 2, &(0..16).collect::<Vec<_>>());
    check_no_numa(&r, 16, 512);
    check_dump_like_hwloc(&r, "dies");
    check_synthetic(&r, 16);
    // Dies are numbered within their package.
    let die_os: Vec<u32> = r.of_type("Die").iter().map(|o| o.os.unwrap()).collect();
    assert_eq!(die_os, [0, 1, 0, 1], "{}", r.text);
}

#[test]
pub(crate) fn many_cpus() {
    let Some(r) = boot(
        "128",
        &[
            "-machine",
            "q35",
            "-m",
            "512",
            "-smp",
            "128,sockets=4,cores=16,threads=2",
        ],
    ) else {
        return;
    };
    check_cpus(&r, 4, 1, 16, 2, &(0..128).collect::<Vec<_>>());
    check_no_numa(&r, 128, 512);
    check_dump_like_hwloc(&r, "128");
    check_synthetic(&r, 128);
}

const MIB: u64 = 1 << 20;

#[test]
pub(crate) fn two_numa_nodes_with_slit_distances() {
    let Some(r) = boot(
        "numa",
        &[
            "-machine",
            "q35",
            "-m",
            "1G",
            "-smp",
            "4,sockets=2,cores=2",
            "-object",
            "memory-backend-ram,size=256M,id=m0",
            "-object",
            "memory-backend-ram,size=768M,id=m1",
            "-numa",
            "node,nodeid=0,cpus=0-1,memdev=m0",
            "-numa",
            "node,nodeid=1,cpus=2-3,memdev=m1",
            "-numa",
            "dist,src=0,dst=1,val=17",
        ],
    ) else {
        return;
    };
    check_cpus(&r, 2, 1, 2, 1, &[0, 1, 2, 3]);
    for t in ["SRAT", "SLIT"] {
        assert!(r.tables.iter().any(|x| x == t), "{t}\n{}", r.text);
    }
    assert_eq!(r.of_type("NUMANode").len(), 2, "{}", r.text);
    assert_eq!(r.node(0).cpuset, set(&[0, 1]), "{}", r.text);
    assert_eq!(r.node(1).cpuset, set(&[2, 3]), "{}", r.text);
    assert_eq!(r.node(0).nodeset, set(&[0]));
    // Node 0 loses the legacy hole between 640 KiB and 1 MiB.
    assert_eq!(r.node_memory(0), 256 * MIB - 384 * 1024, "{}", r.text);
    assert_eq!(r.node_memory(1), 768 * MIB, "{}", r.text);
    assert_eq!(
        r.distances.get("NUMALatency"),
        Some(&(vec![0, 1], vec![10, 17, 17, 10])),
        "{}",
        r.text
    );
    assert!(r.memattrs.is_empty(), "no HMAT, no attributes\n{}", r.text);
    check_synthetic(&r, 4);
}

/// The `-numa` arguments of the HMAT the x86 and the ARM machines both
/// get: latencies and bandwidths between the two initiators and three
/// nodes, and a memory-side cache in front of nodes 0 and 2.  Latencies
/// are in ns, bandwidths in bytes per second with QEMU suffixes.  A data
/// type is one table of values for every initiator and target (unset
/// ones are 0), and Linux lets a later table overwrite what an earlier
/// one said: so read and write latencies are always given separately,
/// and bandwidths always as access bandwidths.
pub(crate) fn hmat_numa_args() -> Vec<String> {
    let lb = |i: u32, t: u32, ty: &str, v: &str| {
        let what = if ty.contains("latency") {
            "latency"
        } else {
            "bandwidth"
        };
        format!("hmat-lb,initiator={i},target={t},hierarchy=memory,data-type={ty},{what}={v}")
    };
    let entries = [
        lb(0, 0, "read-latency", "10"),
        lb(0, 0, "write-latency", "12"),
        lb(0, 0, "access-bandwidth", "10G"),
        lb(0, 1, "read-latency", "20"),
        lb(0, 1, "write-latency", "22"),
        lb(0, 1, "access-bandwidth", "5G"),
        lb(0, 2, "read-latency", "30"),
        lb(0, 2, "write-latency", "40"),
        lb(0, 2, "access-bandwidth", "2G"),
        lb(1, 0, "read-latency", "20"),
        lb(1, 0, "write-latency", "22"),
        lb(1, 0, "access-bandwidth", "5G"),
        lb(1, 1, "read-latency", "12"),
        lb(1, 1, "write-latency", "14"),
        lb(1, 1, "access-bandwidth", "8G"),
        lb(1, 2, "read-latency", "50"),
        lb(1, 2, "write-latency", "60"),
        lb(1, 2, "access-bandwidth", "1G"),
        "hmat-cache,node-id=0,size=8M,level=1,associativity=direct,policy=write-back,line=64"
            .to_string(),
        "hmat-cache,node-id=2,size=4M,level=1,associativity=complex,policy=write-through,line=128"
            .to_string(),
    ];
    entries
        .into_iter()
        .flat_map(|e| ["-numa".to_string(), e])
        .collect()
}

#[test]
pub(crate) fn hmat_latencies_bandwidths_and_memory_side_caches() {
    let mut args: Vec<String> = [
        "-machine",
        "q35,hmat=on",
        "-m",
        "1536M",
        "-smp",
        "4,sockets=2,cores=2",
        "-object",
        "memory-backend-ram,size=512M,id=m0",
        "-object",
        "memory-backend-ram,size=512M,id=m1",
        "-object",
        "memory-backend-ram,size=512M,id=m2",
        "-numa",
        "node,nodeid=0,cpus=0-1,memdev=m0,initiator=0",
        "-numa",
        "node,nodeid=1,cpus=2-3,memdev=m1,initiator=1",
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
    args.extend(hmat_numa_args());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let Some(r) = boot("hmat", &args) else {
        return;
    };
    check_cpus(&r, 2, 1, 2, 1, &[0, 1, 2, 3]);
    assert!(r.tables.iter().any(|x| x == "HMAT"), "{}", r.text);
    assert_eq!(r.of_type("NUMANode").len(), 3, "{}", r.text);
    assert_eq!(r.node(0).cpuset, set(&[0, 1]), "{}", r.text);
    assert_eq!(r.node(1).cpuset, set(&[2, 3]), "{}", r.text);
    // The CPU-less node takes the CPUs of the initiator it is attached to.
    assert_eq!(r.node(2).cpuset, set(&[0, 1]), "{}", r.text);
    assert_eq!(r.node_memory(1), 512 * MIB);
    assert_eq!(r.node_memory(2), 512 * MIB);
    assert_eq!(
        r.distances.get("NUMALatency"),
        Some(&(vec![0, 1, 2], vec![10, 21, 17, 21, 10, 28, 17, 28, 10])),
        "{}",
        r.text
    );
    // Linux keeps the best (local) initiator of each target.
    let expect: &[(&str, u32, &[u32], u64)] = &[
        ("Latency", 0, &[0, 1], 11),
        ("ReadLatency", 0, &[0, 1], 10),
        ("WriteLatency", 0, &[0, 1], 12),
        ("Bandwidth", 0, &[0, 1], 10240),
        ("ReadBandwidth", 0, &[0, 1], 10240),
        ("WriteBandwidth", 0, &[0, 1], 10240),
        ("Latency", 1, &[2, 3], 13),
        ("ReadLatency", 1, &[2, 3], 12),
        ("WriteLatency", 1, &[2, 3], 14),
        ("Bandwidth", 1, &[2, 3], 8192),
        ("ReadBandwidth", 1, &[2, 3], 8192),
        ("WriteBandwidth", 1, &[2, 3], 8192),
        ("ReadLatency", 2, &[0, 1], 30),
        ("WriteLatency", 2, &[0, 1], 40),
        ("Latency", 2, &[0, 1], 35),
        ("Bandwidth", 2, &[0, 1], 2048),
        ("ReadBandwidth", 2, &[0, 1], 2048),
        ("WriteBandwidth", 2, &[0, 1], 2048),
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
    // Memory-side caches: node 0 direct mapped, node 2 not.
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
    assert_eq!(cache(2).cpuset, set(&[0, 1]));
    // No synthetic description holds memory-side caches: the XML document
    // is read by both tools and shown alike instead.
    check_xml_like_hwloc(&r);
}

/// The XML document the firmware printed is rewritten unchanged by
/// `wloc`, and `wloc ls` and lstopo 2.9 show it alike (`-v`: with
/// memory, caches and attributes).
fn check_xml_like_hwloc(r: &Report) {
    let (_tmp, file, xml) = firmware_xml(r);
    let ours = run_wloc(["ls", "-i", file.to_str().unwrap(), "-v"]);
    assert_eq!(
        String::from_utf8_lossy(&ours.stdout),
        lstopo(&file, &["-v"]),
        "{xml}"
    );
}

#[test]
pub(crate) fn amd_epyc() {
    let Some(r) = boot_cpu(
        "epyc",
        "EPYC",
        &[
            "-machine",
            "q35",
            "-m",
            "512",
            "-smp",
            "16,sockets=2,cores=4,threads=2",
        ],
    ) else {
        return;
    };
    // QEMU's TCG EPYC has no TOPOEXT: CPUID cannot tell SMT siblings
    // apart from cores (hwloc sees the same), so only packages, PUs and
    // the per-package L3 are asserted, and the reading of the AMD leaves
    // is compared with hwloc's.
    assert_eq!(r.cpus.len(), 16, "{}", r.text);
    assert_eq!(r.cpusets("PU"), blocks(16, 1), "{}", r.text);
    assert_eq!(r.cpusets("Package"), blocks(16, 8), "{}", r.text);
    assert_eq!(r.cpusets("L3Cache"), blocks(16, 8), "{}", r.text);
    for want in ["CPUVendor=AuthenticAMD", "CPUFamilyNumber=23"] {
        let n = r
            .text
            .lines()
            .filter(|l| l.starts_with("info Package:") && l.ends_with(want))
            .count();
        assert_eq!(n, 2, "{want}\n{}", r.text);
    }
    check_no_numa(&r, 16, 512);
    check_dump_like_hwloc(&r, "epyc");
    check_synthetic(&r, 16);
}
