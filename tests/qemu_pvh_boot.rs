//! Boots the PVH unikernel (`probe/pvh`) with `qemu-system-x86_64
//! -kernel`, no UEFI and no bootloader, for the configurations of
//! `tests/qemu_boot.rs`, and runs that module's checks on its report
//! (exactly the configured machine: CPUs, caches, dies, NUMA nodes,
//! distances, HMAT attributes; its CPUID replayed in hwloc; its XML read
//! back by `wloc ls -i` and lstopo).  Each boot is also compared with
//! the UEFI application's on the same configuration: the XML documents
//! must be the same, memory aside when there is no SRAT (the RAM then
//! comes from the firmware's memory map, which SeaBIOS and OVMF draw
//! differently).
//!
//! Needs what `qemu_boot` needs, plus SeaBIOS and QEMU's PVH option ROM
//! (Debian packages `seabios` and `qemu-system-data`, which
//! `qemu-system-x86` pulls in) and the `x86_64-unknown-none` Rust
//! target; installed when missing, or skipped with `WLOC_SKIP_QEMU=1`.

use crate::qemu_boot::{self, Report, boot_uefi, run_qemu, with_booter};

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The unikernel, built once; `None` when QEMU is missing and not
/// required.
fn kernel() -> Option<&'static Path> {
    static KERNEL: OnceLock<Option<PathBuf>> = OnceLock::new();
    KERNEL
        .get_or_init(|| {
            qemu_boot::qemu_prerequisites(
                "QEMU PVH boot tests",
                &[
                    ("/usr/bin/qemu-system-x86_64", "qemu-system-x86"),
                    ("/usr/share/seabios/bios-256k.bin", "seabios"),
                    ("/usr/share/qemu/pvh.bin", "qemu-system-data"),
                ],
                "x86_64-unknown-none",
            )
            .then(|| {
                qemu_boot::build_firmware(
                    "probe/pvh",
                    "x86_64-unknown-none",
                    "wloc-pvh",
                    "wloc-pvh",
                )
            })
        })
        .as_deref()
}

/// Boots the unikernel on a configuration, checks that its XML is the
/// UEFI application's, and returns its report for `qemu_boot`'s checks.
fn boot_pvh(tag: &str, cpu: &str, args: &[&str]) -> Option<Report> {
    let elf = kernel()?;
    let boot_args = ["-kernel".to_string(), elf.display().to_string()];
    let console = run_qemu(&format!("pvh-{tag}"), cpu, &boot_args, args);
    let pvh = Report::parse(&console, "wloc-pvh");
    assert!(
        pvh.text.lines().any(|l| l.starts_with("cpuid-queries ")),
        "{tag}: no CPUID answers\n{}",
        pvh.text
    );
    let uefi = boot_uefi(tag, cpu, args)?;
    let has_srat = pvh.tables.iter().any(|t| t == "SRAT");
    assert_eq!(
        has_srat,
        uefi.tables.iter().any(|t| t == "SRAT"),
        "{tag}: SRAT in one boot only"
    );
    let xml = |r: &Report| {
        let x = r
            .xml
            .clone()
            .unwrap_or_else(|| panic!("{tag}: no XML\n{}", r.text));
        if has_srat { x } else { without_memory(&x) }
    };
    let (ours, theirs) = (xml(&pvh), xml(&uefi));
    if ours != theirs {
        let diff: Vec<String> = ours
            .lines()
            .zip(theirs.lines())
            .filter(|(a, b)| a != b)
            .take(10)
            .map(|(a, b)| format!("pvh:  {a}\nuefi: {b}"))
            .collect();
        panic!(
            "{tag}: the PVH and UEFI probes print different XML ({} and {} lines):\n{}",
            ours.lines().count(),
            theirs.lines().count(),
            diff.join("\n")
        );
    }
    Some(pvh)
}

/// The document with the value of every `local_memory` attribute
/// replaced by `*`.
fn without_memory(xml: &str) -> String {
    const ATTR: &str = "local_memory=\"";
    let mut out = String::new();
    let mut rest = xml;
    while let Some(i) = rest.find(ATTR) {
        out.push_str(&rest[..i + ATTR.len()]);
        rest = &rest[i + ATTR.len()..];
        let end = rest.find('"').unwrap_or(rest.len());
        out.push('*');
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn memory_is_masked_only_in_local_memory() {
    assert_eq!(
        without_memory(r#"<a local_memory="123" b="4"/><c local_memory="5"/>"#),
        r#"<a local_memory="*" b="4"/><c local_memory="*"/>"#
    );
}

#[test]
fn one_cpu() {
    with_booter(boot_pvh, qemu_boot::one_cpu);
}

#[test]
fn two_sockets_two_cores_two_threads() {
    with_booter(boot_pvh, qemu_boot::two_sockets_two_cores_two_threads);
}

#[test]
fn three_cores_leave_apic_id_gaps() {
    with_booter(boot_pvh, qemu_boot::three_cores_leave_apic_id_gaps);
}

#[test]
fn two_dies_per_package() {
    with_booter(boot_pvh, qemu_boot::two_dies_per_package);
}

#[test]
fn many_cpus() {
    with_booter(boot_pvh, qemu_boot::many_cpus);
}

#[test]
fn two_numa_nodes_with_slit_distances() {
    with_booter(boot_pvh, qemu_boot::two_numa_nodes_with_slit_distances);
}

#[test]
fn hmat_latencies_bandwidths_and_memory_side_caches() {
    with_booter(
        boot_pvh,
        qemu_boot::hmat_latencies_bandwidths_and_memory_side_caches,
    );
}

#[test]
fn amd_epyc() {
    with_booter(boot_pvh, qemu_boot::amd_epyc);
}

/// The RSDP line of a report: `(address, source)`.
fn rsdp(r: &Report) -> (String, String) {
    let line = r
        .text
        .lines()
        .find_map(|l| l.trim_end().strip_prefix("rsdp "))
        .unwrap_or_else(|| panic!("no rsdp line\n{}", r.text));
    let (addr, from) = line.split_once(" from=").unwrap_or((line, ""));
    (addr.to_string(), from.to_string())
}

/// Without the start info's RSDP (`wloc.rsdp=bios` on the command line)
/// the unikernel finds the same one in the BIOS areas and prints the
/// same machine, NUMA tables included.
#[test]
fn rsdp_found_in_the_bios_areas() {
    let Some(elf) = kernel() else {
        return;
    };
    let machine = [
        "-machine",
        "q35",
        "-m",
        "1G",
        "-smp",
        "4,sockets=2,cores=2",
        "-object",
        "memory-backend-ram,size=512M,id=m0",
        "-object",
        "memory-backend-ram,size=512M,id=m1",
        "-numa",
        "node,nodeid=0,cpus=0-1,memdev=m0",
        "-numa",
        "node,nodeid=1,cpus=2-3,memdev=m1",
        "-numa",
        "dist,src=0,dst=1,val=20",
    ];
    let boot = |tag: &str, append: Option<&str>| {
        let mut args = vec!["-kernel".to_string(), elf.display().to_string()];
        if let Some(a) = append {
            args.extend(["-append".to_string(), a.to_string()]);
        }
        let console = run_qemu(tag, "Skylake-Server", &args, &machine);
        Report::parse(&console, "wloc-pvh")
    };
    let given = boot("pvh-rsdp-given", None);
    let scanned = boot("pvh-rsdp-scanned", Some("wloc.rsdp=bios"));
    let (given_at, given_from) = rsdp(&given);
    let (scanned_at, scanned_from) = rsdp(&scanned);
    assert_eq!(given_from, "start-info", "{}", given.text);
    assert_eq!(scanned_from, "bios-areas", "{}", scanned.text);
    assert_eq!(scanned_at, given_at);
    assert!(
        scanned.tables.iter().any(|t| t == "SLIT"),
        "{}",
        scanned.text
    );
    assert!(scanned.xml.is_some(), "{}", scanned.text);
    assert_eq!(scanned.xml, given.xml);
}
