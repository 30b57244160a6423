//! The built-in annotation components through the `wloc` command: DMI
//! infos, PCI names from a pci.ids file, sensor readings for `wloc watch`,
//! on a recorded machine with files added under its fsroot, and PCI names
//! of this machine against hwloc's.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The recording used: a Dell PowerEdge R910 with DMI files and PCI devices.
const RECORDING: &str = "40intel64-2g2n4c+pcilocality";

/// A small pci.ids: names for some of the recording's devices, a vendor
/// without its device, a comment and a class section.
const PCI_IDS: &str = "# test database\n\
1000  Broadcom / LSI\n\
\t0079  MegaRAID SAS 2108 [Liberator]\n\
\t\t1028 1f17  PERC H700 Integrated\n\
14e4  Broadcom Inc. and subsidiaries\n\
\t1639  NetXtreme II BCM5709 Gigabit Ethernet\n\
8086  Intel Corporation\n\
\t340a  7500 Chipset PCI Express Root Port 3\n\
C 02  Network controller\n\
\t00  Ethernet controller\n";

/// Unpacks the recording into a fresh directory and returns its fsroot.
fn recording(tmp: &common::TempDir) -> PathBuf {
    let tarball = common::conformance()
        .join("linux")
        .join(format!("{RECORDING}.tar.bz2"));
    let st = Command::new("tar")
        .arg("xjf")
        .arg(&tarball)
        .arg("-C")
        .arg(&tmp.0)
        .status()
        .expect("tar runs");
    assert!(st.success(), "cannot unpack {}", tarball.display());
    fs::read_dir(&tmp.0)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .expect("the recording holds a directory")
}

fn write(root: &Path, rel: &str, content: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, content).unwrap();
}

/// Adds sensors: a coretemp chip per package, a chip with a power
/// reading and a non-numeric temperature, a thermal zone, cpufreq of PU 0.
fn add_sensors(root: &Path) {
    let h0 = "sys/class/hwmon/hwmon0";
    write(root, &format!("{h0}/name"), "coretemp\n");
    write(root, &format!("{h0}/temp1_input"), "51000\n");
    write(root, &format!("{h0}/temp1_label"), "Package id 0\n");
    write(root, &format!("{h0}/temp2_input"), "47000\n");
    write(root, &format!("{h0}/temp2_label"), "Core 1\n");
    let h1 = "sys/class/hwmon/hwmon1";
    write(root, &format!("{h1}/name"), "coretemp\n");
    write(root, &format!("{h1}/temp1_input"), "49500\n");
    write(root, &format!("{h1}/temp1_label"), "Package id 1\n");
    let h2 = "sys/class/hwmon/hwmon2";
    write(root, &format!("{h2}/name"), "acpi power meter\n");
    write(root, &format!("{h2}/power1_input"), "120500000\n");
    write(root, &format!("{h2}/fan1_input"), "2400\n");
    write(root, &format!("{h2}/fan1_label"), "Front Fan\n");
    write(root, &format!("{h2}/temp1_input"), "not a number\n");
    write(root, "sys/class/thermal/thermal_zone0/type", "acpitz\n");
    write(root, "sys/class/thermal/thermal_zone0/temp", "27800\n");
    write(
        root,
        "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
        "2394000\n",
    );
}

/// `(object element's first line, infos)` of every object of an XML export.
fn objects_with_infos(xml: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut out: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for line in xml.lines() {
        let l = line.trim();
        if l.starts_with("<object ") {
            out.push((l.to_string(), Vec::new()));
        } else if let Some(rest) = l.strip_prefix("<info name=\"") {
            let (name, rest) = rest.split_once('"').unwrap();
            let value = rest
                .strip_prefix(" value=\"")
                .and_then(|v| v.rsplit_once('"'))
                .map(|(v, _)| v.to_string())
                .unwrap_or_default();
            if let Some(last) = out.last_mut() {
                last.1.push((name.to_string(), value));
            }
        }
    }
    out
}

/// PCIVendor/PCIDevice infos by PCI bus id.
fn pci_names(xml: &str) -> BTreeMap<String, Vec<(String, String)>> {
    let mut m = BTreeMap::new();
    for (head, infos) in objects_with_infos(xml) {
        let Some(rest) = head.split("pci_busid=\"").nth(1) else {
            continue;
        };
        let busid = rest.split('"').next().unwrap().to_string();
        let names: Vec<_> = infos
            .into_iter()
            .filter(|(n, _)| n == "PCIVendor" || n == "PCIDevice")
            .collect();
        m.insert(busid, names);
    }
    m
}

/// `wloc ls` of a recording as XML with every I/O object, and `extra`
/// options.
fn ls(root: &Path, extra: &[&std::ffi::OsStr]) -> std::process::Output {
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "ls".as_ref(),
        "-i".as_ref(),
        root.as_os_str(),
        "--if".as_ref(),
        "fsroot".as_ref(),
        "--of".as_ref(),
        "xml".as_ref(),
        "--whole-io".as_ref(),
    ];
    args.extend_from_slice(extra);
    common::run_wloc(args)
}

fn ls_xml(root: &Path, extra: &[&str]) -> String {
    let extra: Vec<&std::ffi::OsStr> = extra.iter().map(|s| std::ffi::OsStr::new(*s)).collect();
    let o = ls(root, &extra);
    assert!(
        o.status.success(),
        "wloc ls failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn pair(n: &str, v: &str) -> (String, String) {
    (n.to_string(), v.to_string())
}

#[test]
fn recorded_machine_gets_pci_names_from_its_pci_ids() {
    let tmp = common::TempDir::new("annot-pci");
    let root = recording(&tmp);
    write(&root, "usr/share/misc/pci.ids", PCI_IDS);
    let names = pci_names(&ls_xml(&root, &[]));
    // A device known by vendor and device, a vendor whose device is
    // missing, a vendor missing altogether, a PCI bridge.
    assert_eq!(
        names["0000:03:00.0"],
        vec![
            pair("PCIVendor", "Broadcom Inc. and subsidiaries"),
            pair("PCIDevice", "NetXtreme II BCM5709 Gigabit Ethernet")
        ]
    );
    assert_eq!(
        names["0000:01:00.0"],
        vec![
            pair("PCIVendor", "Broadcom / LSI"),
            pair("PCIDevice", "MegaRAID SAS 2108 [Liberator]")
        ]
    );
    assert_eq!(
        names["0000:00:1f.2"],
        vec![pair("PCIVendor", "Intel Corporation")]
    );
    assert_eq!(
        names["0000:00:03.0"],
        vec![
            pair("PCIVendor", "Intel Corporation"),
            pair("PCIDevice", "7500 Chipset PCI Express Root Port 3")
        ]
    );
    assert!(
        names
            .iter()
            .filter(|(b, _)| b.as_str() == "0000:09:03.0")
            .all(|(_, n)| n.is_empty())
    );

    // --no-annotate keeps the numeric ids only.
    let plain = pci_names(&ls_xml(&root, &["--no-annotate"]));
    assert!(plain.values().all(Vec::is_empty));
    assert_eq!(
        plain.keys().collect::<Vec<_>>(),
        names.keys().collect::<Vec<_>>()
    );
}

#[test]
fn dmi_infos_are_set_once_as_hwloc_names_them() {
    let tmp = common::TempDir::new("annot-dmi");
    let root = recording(&tmp);
    let xml = ls_xml(&root, &[]);
    let objs = objects_with_infos(&xml);
    let (_, root_infos) = objs
        .iter()
        .find(|(h, _)| h.contains("type=\"Machine\""))
        .unwrap();
    let dmi: Vec<_> = root_infos
        .iter()
        .filter(|(n, _)| n.starts_with("DMI"))
        .cloned()
        .collect();
    for expected in [
        pair("DMIProductName", "PowerEdge R910"),
        pair("DMIBoardVendor", "Dell Inc."),
        pair("DMIBoardName", "0JRJM9"),
        pair("DMIBIOSDate", "10/26/2011"),
        pair("DMIChassisType", "23"),
    ] {
        assert_eq!(
            dmi.iter().filter(|i| **i == expected).count(),
            1,
            "{expected:?} in {dmi:?}"
        );
    }
    // The console listing shows them too.
    let o = common::run_wloc([
        "ls".as_ref(),
        "-i".as_ref(),
        root.as_os_str(),
        "--if".as_ref(),
        "fsroot".as_ref(),
        "-v".as_ref(),
    ]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("DMIProductName=\"PowerEdge R910\""));
}

/// `wloc watch` on a recorded fsroot with more arguments.
pub(crate) fn watch(root: &Path, extra: &[&str]) -> std::process::Output {
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "watch".as_ref(),
        "-i".as_ref(),
        root.as_os_str(),
        "--if".as_ref(),
        "fsroot".as_ref(),
    ];
    args.extend(extra.iter().map(|s| std::ffi::OsStr::new(*s)));
    common::run_wloc(args)
}

#[test]
fn watch_samples_sensor_readings_on_the_right_objects() {
    let tmp = common::TempDir::new("annot-watch");
    let root = recording(&tmp);
    add_sensors(&root);
    // The recording's own /proc/stat and node meminfo give CPU times and
    // memory use too (see the `watch` module): only the sensors here.
    let o = watch(
        &root,
        &[
            "--count",
            "2",
            "--interval",
            "20",
            "temperature",
            "fan",
            "power",
            "frequency",
        ],
    );
    assert!(
        o.status.success(),
        "wloc watch failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8(o.stdout).unwrap();
    let samples: Vec<&str> = text.split("\n\n").collect();
    assert_eq!(samples.len(), 2, "{text}");
    assert_eq!(samples[0].trim_end(), samples[1].trim_end());
    // Core 1 of package 0 is the second core (L#1) of that package.
    let expected = "\
Package:0 temperature 51 °C
Core:1 temperature 47 °C
Package:1 temperature 49.5 °C
Machine:0 fan.acpi_power_meter.Front_Fan 40 Hz
Machine:0 power.acpi_power_meter.power1 120.5 W
Machine:0 temperature.thermal_zone0.acpitz 27.8 °C
PU:0 frequency 2394000000 Hz";
    assert_eq!(samples[0].trim_end(), expected);

    // A filter keeps one quantity.
    let o = watch(&root, &["temperature", "--count", "1"]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(text.lines().all(|l| l.contains(" temperature")));
    let o = watch(&root, &["*.Front_Fan", "--count", "1"]);
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "Machine:0 fan.acpi_power_meter.Front_Fan 40 Hz\n"
    );
}

#[test]
fn watch_reports_bad_requests_clearly() {
    let tmp = common::TempDir::new("annot-watch-bad");
    let root = recording(&tmp);
    // No sensor at all in the recording (CPU times and memory use only).
    let o = watch(&root, &["temperature", "--count", "1"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no dynamic property matches 'temperature'") && err.contains("memory.used"),
        "{err}"
    );

    add_sensors(&root);
    let o = watch(&root, &["humidity", "--count", "1"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no dynamic property matches 'humidity'") && err.contains("frequency"),
        "{err}"
    );

    let o = watch(&root, &["--interval", "0", "--count", "1"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--interval"));

    let o = common::run_wloc(["watch", "-i", "pack:2 pu:2", "--count", "1"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("Linux machine"));
}

#[test]
fn pci_ids_outside_the_grant_are_not_read() {
    let tmp = common::TempDir::new("annot-escape");
    let root = recording(&tmp);
    // A link leaving the grant, then a real file at the second place.
    let secret = tmp.0.join("secret.ids");
    fs::write(&secret, "14e4  Stolen Name\n\t1639  Stolen Device\n").unwrap();
    fs::create_dir_all(root.join("usr/share/misc")).unwrap();
    std::os::unix::fs::symlink(&secret, root.join("usr/share/misc/pci.ids")).unwrap();
    let names = pci_names(&ls_xml(&root, &[]));
    assert!(names.values().all(Vec::is_empty), "{names:?}");
    write(&root, "usr/share/hwdata/pci.ids", PCI_IDS);
    let names = pci_names(&ls_xml(&root, &[]));
    assert_eq!(
        names["0000:02:00.0"][0],
        pair("PCIVendor", "Broadcom Inc. and subsidiaries")
    );
}

#[test]
fn debians_pci_ids_wins_over_hwdatas() {
    let tmp = common::TempDir::new("annot-both");
    let root = recording(&tmp);
    write(&root, "usr/share/misc/pci.ids", PCI_IDS);
    write(
        &root,
        "usr/share/hwdata/pci.ids",
        &PCI_IDS.replace("Broadcom Inc. and subsidiaries", "Other Name"),
    );
    let names = pci_names(&ls_xml(&root, &[]));
    assert_eq!(
        names["0000:03:00.0"][0],
        pair("PCIVendor", "Broadcom Inc. and subsidiaries")
    );
}

/// This machine's PCI names equal those hwloc 2.9 finds with libpciaccess.
#[test]
fn this_machine_pci_names_match_hwloc() {
    if !Path::new("/usr/share/misc/pci.ids").exists() {
        eprintln!("no /usr/share/misc/pci.ids: nothing to compare");
        return;
    }
    common::require_hwloc();
    let o = common::run_wloc(["ls", "--of", "xml", "--whole-io"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ours = pci_names(&String::from_utf8(o.stdout).unwrap());
    let h = Command::new("lstopo-no-graphics")
        .args(["--of", "xml", "--whole-io"])
        .env_remove("HWLOC_XMLFILE")
        .env_remove("HWLOC_SYNTHETIC")
        .env_remove("HWLOC_FSROOT")
        .output()
        .expect("lstopo-no-graphics runs");
    assert!(h.status.success());
    let theirs = pci_names(&String::from_utf8(h.stdout).unwrap());
    assert_eq!(ours, theirs);
    assert!(
        theirs.is_empty() || theirs.values().any(|v| !v.is_empty()),
        "hwloc found no PCI name although pci.ids exists"
    );
}

/// The admin's policy governs the built-in annotation components as it
/// does every other: one disabled does not run (and says so), one whose
/// files are narrowed reads only what is left.
#[test]
fn policy_disables_and_narrows_builtin_annotations() {
    let tmp = common::TempDir::new("annot-policy");
    let root = recording(&tmp);
    write(&root, "usr/share/misc/pci.ids", PCI_IDS);
    let named = |names: &BTreeMap<String, Vec<(String, String)>>| {
        names.values().filter(|n| !n.is_empty()).count()
    };
    assert!(named(&pci_names(&ls_xml(&root, &[]))) > 0);

    let policy = tmp.0.join("policy.toml");
    let run = |text: &str| {
        fs::write(&policy, text).unwrap();
        let o = ls(&root, &["--policy".as_ref(), policy.as_os_str()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (
            pci_names(&String::from_utf8(o.stdout).unwrap()),
            String::from_utf8(o.stderr).unwrap(),
        )
    };
    let (names, err) = run("[builtin.annotate-pci-names]\nenabled = false\n");
    assert_eq!(named(&names), 0, "a disabled component ran");
    assert!(
        err.contains("annotate-pci-names") && err.contains("disabled"),
        "{err}"
    );
    // Granted hwdata's copy only: Debian's file is not read.
    let (names, _) = run("[builtin.annotate-pci-names]\nfiles = [\"/usr/share/hwdata/pci.ids\"]\n");
    assert_eq!(
        named(&names),
        0,
        "a file outside the narrowed grant was read"
    );
    write(&root, "usr/share/hwdata/pci.ids", PCI_IDS);
    let (names, _) = run("[builtin.annotate-pci-names]\nfiles = [\"/usr/share/hwdata/pci.ids\"]\n");
    assert!(named(&names) > 0, "the granted file was not read");
}
