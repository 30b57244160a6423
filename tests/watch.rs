//! Dynamic properties: the `annotate-sensors` component on fixture trees
//! (`tests/data/sensors`, laid over a Linux recording) with values
//! computed by hand, through the library (two samples 2 s apart, the
//! files changed between them) and through `wloc watch` (JSON lines,
//! object and property choice, the terminal table, an unreadable RAPL
//! energy file).

use crate::annotate::watch;
use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use wloc::model::{Topology, TypeFilter};
use wloc_discovery::annotations::{self, Annotators};

const RECORDING: &str = "16amd64-8n2c";

fn fixtures() -> PathBuf {
    common::workspace().join("tests/data/sensors")
}

/// Copies a fixture state over an fsroot (links kept as links).
fn lay(state: &str, root: &Path) {
    let st = Command::new("cp")
        .arg("-a")
        .arg(fixtures().join(state).join("."))
        .arg(root)
        .status()
        .expect("cp runs");
    assert!(st.success(), "cannot copy the {state} fixtures");
}

/// The recording with the first fixture state over it.
fn fsroot(tmp: &common::TempDir) -> PathBuf {
    let root = common::unpack(RECORDING, &tmp.0);
    lay("first", &root);
    root
}

/// `object name` -> (value, unit).
fn by_name(topo: &Topology, props: &[wloc_runtime::Property]) -> HashMap<String, (f64, String)> {
    let mut m = HashMap::new();
    for p in props {
        let key = format!("{} {}", annotations::object_label(topo, p.object), p.name);
        assert!(
            m.insert(key.clone(), (p.value, p.unit.clone())).is_none(),
            "{key} given twice"
        );
    }
    m
}

fn expect(m: &HashMap<String, (f64, String)>, key: &str, value: f64, unit: &str) {
    let (v, u) = m
        .get(key)
        .unwrap_or_else(|| panic!("no {key} among {:?}", sorted_keys(m)));
    assert!(
        (v - value).abs() <= 1e-9 * value.abs().max(1.0),
        "{key}: {v}, expected {value}"
    );
    assert_eq!(u, unit, "{key}");
}

fn sorted_keys(m: &HashMap<String, (f64, String)>) -> Vec<&String> {
    let mut k: Vec<&String> = m.keys().collect();
    k.sort();
    k
}

#[test]
fn watch_fixture_values_match_hand_computed_ones() {
    let tmp = common::TempDir::new("watch-lib");
    let root = fsroot(&tmp);
    let source = wloc_discovery::input::Source::Fsroot(root.clone(), None);
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepImportant);
    let discovery = wloc_discovery::Discovery::new(None);
    let topo = discovery.load(&source, t).expect("the recording loads");
    let (ann, warnings) = Annotators::builtin_matching(
        &discovery,
        Some(&root),
        |b, _| b.name == wloc_runtime::builtin::ANNOTATE_SENSORS_NAME,
        &BTreeMap::new(),
    )
    .expect("the runtime starts");
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(ann.names(), ["annotate-sensors"]);

    let t0 = Instant::now();
    let (first, warnings) = ann.sample_at(&topo, t0);
    assert!(warnings.is_empty(), "{warnings:?}");
    let m = by_name(&topo, &first);
    // Counters, but no rate yet.
    expect(&m, "Package:0 energy.rapl.package-0", 262_140.0, "J");
    expect(&m, "PU:0 cpu-time.busy", 1.5, "s");
    expect(&m, "Machine:0 temperature.nct6775.temp1", 45.0, "°C");
    expect(&m, "NUMANode:0 memory.used", 805_306_368.0, "B");
    assert!(
        !m.keys()
            .any(|k| k.contains(" power.rapl") || k.contains(" utilisation")),
        "rates without a previous sample: {:?}",
        sorted_keys(&m)
    );

    // The files change; the next sample reads them again.
    lay("second", &root);
    let (second, warnings) = ann.sample_at(&topo, t0 + Duration::from_secs(2));
    assert!(warnings.is_empty(), "{warnings:?}");
    let m = by_name(&topo, &second);
    for (key, value, unit) in [
        ("Package:1 temperature", 63.0, "°C"),
        ("Core:3 temperature", 59.5, "°C"),
        ("Machine:0 temperature.nct6775.temp1", 47.5, "°C"),
        ("Machine:0 fan.nct6775.CPU_Fan", 25.0, "Hz"),
        ("Machine:0 voltage.nct6775.in0", 1.056, "V"),
        ("Machine:0 current.nct6775.curr1", 2.5, "A"),
        ("Machine:0 power.nct6775.power1", 130.25, "W"),
        ("Machine:0 energy.nct6775.energy1", 3601.0, "J"),
        (
            "Machine:0 temperature.thermal_zone0.x86_pkg_temp",
            56.125,
            "°C",
        ),
        ("PU:0 frequency", 2.6e9, "Hz"),
        ("PU:4 frequency", 1.2e9, "Hz"),
        ("Package:0 energy.rapl.package-0", 2.0, "J"),
        // The counter wrapped at max_energy_range_uj.
        ("Package:0 power.rapl.package-0", 2.664_425, "W"),
        ("Package:0 power.rapl.package-0.core", 20.0, "W"),
        ("Package:0 power.rapl.package-0.dram", 2.0, "W"),
        ("Package:1 power.rapl.package-1", 100.0, "W"),
        ("Package:1 power.rapl.package-1.uncore", 1.5, "W"),
        ("Machine:0 utilisation", 60.0, "%"),
        ("PU:0 utilisation", 50.0, "%"),
        ("PU:4 utilisation", 100.0, "%"),
        ("PU:0 cpu-time.busy", 2.25, "s"),
        ("PU:0 cpu-time.idle", 9.25, "s"),
        ("NUMANode:0 memory.used", 939_524_096.0, "B"),
        ("NUMANode:0 memory.free", 134_217_728.0, "B"),
        ("NUMANode:0 memory.total", 1_073_741_824.0, "B"),
        ("NUMANode:1 memory.used", 49_741_824.0, "B"),
        ("Machine:0 errors.corrected.mc0", 4.0, ""),
        ("Machine:0 errors.uncorrected.mc0", 0.0, ""),
        ("Machine:0 errors.corrected.mc0.dimm0", 1.0, ""),
        ("Machine:0 errors.corrected.mc0.dimm1", 3.0, ""),
        ("Machine:0 errors.uncorrected.mc1", 1.0, ""),
        ("Machine:0 errors.uncorrected.mc1.rank0", 1.0, ""),
    ] {
        expect(&m, key, value, unit);
    }
    // PUs that /proc/stat does not list have no CPU time.
    assert!(!m.contains_key("PU:2 cpu-time.busy"));
}

fn ok(o: &std::process::Output) -> String {
    assert!(
        o.status.success(),
        "wloc watch failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).expect("UTF-8")
}

#[test]
fn watch_json_lines_for_chosen_objects_and_properties() {
    let tmp = common::TempDir::new("watch-json");
    let root = fsroot(&tmp);
    let o = watch(
        &root,
        &[
            "--json",
            "--count",
            "2",
            "--interval",
            "30",
            "-o",
            "package:0",
            "-o",
            "numa:1",
            "power",
            "memory.used",
        ],
    );
    let text = ok(&o);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON object per line"))
        .collect();
    let got: Vec<String> = lines
        .iter()
        .map(|v| {
            format!(
                "{} {} {} {} {}",
                v["sample"], v["object"], v["name"], v["value"], v["unit"]
            )
        })
        .collect();
    // The files do not change: the power of the same counter read twice is 0.
    let one = |s: u32| {
        vec![
            format!("{s} \"Package:0\" \"power.rapl.package-0\" 0.0 \"W\""),
            format!("{s} \"Package:0\" \"power.rapl.package-0.core\" 0.0 \"W\""),
            format!("{s} \"Package:0\" \"power.rapl.package-0.dram\" 0.0 \"W\""),
            format!("{s} \"NUMANode:1\" \"memory.used\" 49741824.0 \"B\""),
        ]
    };
    let mut expected = one(0);
    expected.extend(one(1));
    assert_eq!(got, expected);
    assert_eq!(lines[0]["type"], "Package");
    assert_eq!(lines[0]["os_index"], 0);
    assert!(lines[4]["time"].as_f64().unwrap() > lines[0]["time"].as_f64().unwrap());

    // Bad object and an object without properties are told.
    let o = watch(&root, &["--count", "1", "-o", "core:999"]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("core:999"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = watch(&root, &["--count", "1", "-o", "l2:0"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("have no dynamic property"));
}

#[test]
fn watch_draws_a_table_on_a_terminal() {
    let tmp = common::TempDir::new("watch-tty");
    let root = fsroot(&tmp);
    // `script` gives wloc a pseudo-terminal as standard output.
    common::require_packages(&[("/usr/bin/script", "bsdutils")]).unwrap();
    let cmd = format!(
        "{} watch -i {} --if fsroot --count 2 --interval 20 -o pu:0 frequency utilisation",
        common::wloc().display(),
        root.display()
    );
    let o = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .expect("script runs");
    let text = String::from_utf8_lossy(&o.stdout).replace('\r', "");
    assert!(o.status.success(), "{text}");
    // Two screens, each cleared, each with a header row.
    assert_eq!(text.matches("\x1b[H\x1b[2J").count(), 2, "{text:?}");
    assert!(text.contains("sample 2, every 20 ms"), "{text}");
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("PU:0") || l.starts_with("OBJECT"))
        .collect();
    assert_eq!(
        rows,
        [
            "OBJECT  PROPERTY        VALUE  UNIT",
            "PU:0    frequency  2394000000  Hz",
            "OBJECT  PROPERTY        VALUE  UNIT",
            "PU:0    frequency  2394000000  Hz",
        ]
    );
}

/// RAPL energy is root-only on recent kernels: a file that exists but
/// cannot be read leaves that zone out, and nothing else.  The file is
/// made unreadable with its mode; as root (whom modes do not stop) wloc
/// runs as `nobody`, so that the kernel refuses the read as it does on a
/// real machine.
#[test]
fn watch_leaves_out_an_unreadable_energy_file() {
    let tmp = common::TempDir::new("watch-eacces");
    let root = fsroot(&tmp);
    let energy = root.join("sys/devices/virtual/powercap/intel-rapl/intel-rapl:1/energy_uj");
    assert!(energy.is_file());
    let st = Command::new("chmod")
        .arg("000")
        .arg(&energy)
        .status()
        .unwrap();
    assert!(st.success());
    let args = [
        "watch",
        "-i",
        root.to_str().unwrap(),
        "--if",
        "fsroot",
        "--count",
        "1",
        "--interval",
        "20",
        "*rapl*",
    ];
    let root_user = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    let o = if root_user {
        common::require_packages(&[("/usr/bin/setpriv", "util-linux")]).unwrap();
        // The test's folder must be open to nobody.
        std::fs::set_permissions(&tmp.0, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(common::wloc())
            .args(args)
            .output()
            .unwrap()
    } else {
        common::run_wloc(args)
    };
    let text = ok(&o);
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let names: Vec<&str> = text.lines().map(|l| l.split(' ').nth(1).unwrap()).collect();
    assert_eq!(
        names,
        [
            "power.rapl.package-0",
            "energy.rapl.package-0",
            "power.rapl.package-0.core",
            "energy.rapl.package-0.core",
            "power.rapl.package-0.dram",
            "energy.rapl.package-0.dram",
            "power.rapl.package-1.uncore",
            "energy.rapl.package-1.uncore",
        ],
        "{text}"
    );
}
