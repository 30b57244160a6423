//! wloc's built-in annotation component for dynamic properties: what the
//! machine is doing now, each reading a property of the object it
//! describes, in SI units (the WIT's `dynamic-property`).
//!
//! * hwmon (`/sys/class/hwmon/hwmon*`): temperatures (°C), fans (Hz:
//!   revolutions per second), voltages (V), currents (A), power (W),
//!   energy (J) and frequencies (Hz).  `coretemp` readings labelled
//!   `Package id P` go to that Package and `Core C` to that Core of the
//!   package; a chip that belongs to a PCI device of the topology goes to
//!   it; the others go to the Machine.
//! * thermal zones (`/sys/class/thermal/thermal_zone*`): °C, Machine.
//! * cpufreq: each PU's current frequency (`scaling_cur_freq`), Hz.
//! * RAPL (`/sys/class/powercap/intel-rapl*:*`): each zone's energy
//!   counter (J) and, from the previous sample, its power (W) across
//!   counter wraps at `max_energy_range_uj`; package zones and their core,
//!   uncore and dram subzones go to their Package, `psys` to the Machine.
//! * `/proc/stat`: busy and idle CPU time of each PU and of the Machine
//!   (s), and, from the previous sample, utilisation (%).
//! * node `meminfo`: each NUMA node's memory total, free and used (B).
//! * EDAC (`/sys/devices/system/edac/mc/mc*`): corrected and uncorrected
//!   error counts of each memory controller and of each of its DIMMs (or
//!   ranks), on the Machine.
//!
//! A component instance lives for one sample, so rates need the previous
//! one: the host hands it back in the setting `sample.previous` (one
//! `OBJECT<TAB>NAME<TAB>VALUE` line per property this component returned
//! last time) with the seconds since in `sample.elapsed`.  Without them
//! (the first sample) power and utilisation are not given.
//!
//! A file that exists but cannot be read (RAPL's `energy_uj` is root-only
//! since Linux 5.10) is an unavailable reading, not an error: whatever
//! the host answers instead of the bytes (denied, an I/O error), the
//! reading is left out.  Every file is read again on every sample, in a
//! few batched calls.
//!
//! Property names have no spaces (labels' spaces become `_`), so that a
//! reading prints as `object name value unit`.

use std::collections::HashMap;

wit_bindgen::generate!({
    world: "annotation-backend",
    path: "../../wit/backend@0.1.0",
});

mod calc;

use calc::{first_line, numbered, reading, token};
use wloc::backend::files;
use wloc::backend::topology;
use wloc::backend::types::{DynamicProperty, Object, ObjectAttr, ObjectType};

/// Bytes read of a sensor file: they hold one short line.
const SMALL_FILE: u32 = 256;
/// Bytes read of `/proc/stat` and of a node's `meminfo`: a line per CPU
/// (about 60 bytes each) plus the interrupt counts.
const STAT_FILE: u32 = 4 << 20;

/// hwmon sensor kinds: file prefix, property quantity, unit, and the
/// factor from the file's unit (Documentation/hwmon/sysfs-interface) to
/// the property's.
const SENSORS: [(&str, &str, &str, f64); 7] = [
    ("temp", "temperature", "°C", 1e-3),
    ("fan", "fan", "Hz", 1.0 / 60.0),
    ("power", "power", "W", 1e-6),
    ("energy", "energy", "J", 1e-6),
    ("in", "voltage", "V", 1e-3),
    ("curr", "current", "A", 1e-3),
    ("freq", "frequency", "Hz", 1.0),
];

struct Annotator;

impl Guest for Annotator {
    fn annotate() -> Result<Annotations, String> {
        let objects = topology::objects();
        let view = View::new(&objects)?;
        let prev = Previous {
            values: wloc::backend::config::get("sample.previous")
                .map(|t| calc::previous(&t))
                .unwrap_or_default(),
            elapsed: wloc::backend::config::get("sample.elapsed").and_then(|t| calc::elapsed(&t)),
        };
        let mut props = Vec::new();
        hwmon(&view, &mut props);
        thermal(view.root, &mut props);
        cpufreq(&view, &mut props);
        rapl(&view, &prev, &mut props);
        proc_stat(&view, &prev, &mut props);
        node_memory(&view, &mut props);
        edac(view.root, &mut props);
        Ok(Annotations {
            infos: Vec::new(),
            misc: Vec::new(),
            distances: Vec::new(),
            memattrs: Vec::new(),
            properties: props,
        })
    }
}

export!(Annotator);

/// The previous sample, as the host gave it back.
struct Previous {
    values: HashMap<(u64, String), f64>,
    elapsed: Option<f64>,
}

impl Previous {
    fn get(&self, object: u64, name: &str) -> Option<f64> {
        self.values.get(&(object, name.to_string())).copied()
    }
}

fn prop(object: u64, name: String, value: f64, unit: &str) -> DynamicProperty {
    DynamicProperty {
        object,
        name,
        value,
        unit: unit.to_string(),
    }
}

/// The objects this component attaches readings to.
struct View {
    root: u64,
    /// Package OS index -> gp index.
    packages: HashMap<u32, u64>,
    /// (package gp index or none, core OS index) -> gp index.
    cores: HashMap<(Option<u64>, u32), u64>,
    /// PU OS index -> gp index, in topology order.
    pus: Vec<(u32, u64)>,
    /// NUMA node OS index -> gp index, in topology order.
    nodes: Vec<(u32, u64)>,
    /// PCI bus id (`dddd:bb:dd.f`) -> gp index.
    pci: HashMap<String, u64>,
}

impl View {
    fn new(objects: &[Object]) -> Result<View, String> {
        let root = objects
            .iter()
            .find(|o| o.parent.is_none())
            .ok_or("the topology has no root")?;
        let parent: HashMap<u32, (u32, ObjectType)> = objects
            .iter()
            .map(|o| (o.id, (o.parent.unwrap_or(o.id), o.type_)))
            .collect();
        // The Package above an object, if any.
        let package_of = |mut id: u32| -> Option<u64> {
            for _ in 0..256 {
                let &(p, _) = parent.get(&id)?;
                if p == id {
                    return None;
                }
                if parent.get(&p).is_some_and(|x| x.1 == ObjectType::Package) {
                    return Some(u64::from(p));
                }
                id = p;
            }
            None
        };
        let mut v = View {
            root: u64::from(root.id),
            packages: HashMap::new(),
            cores: HashMap::new(),
            pus: Vec::new(),
            nodes: Vec::new(),
            pci: HashMap::new(),
        };
        for o in objects {
            let gp = u64::from(o.id);
            match (o.type_, o.os_index) {
                (ObjectType::Package, Some(os)) => {
                    v.packages.insert(os, gp);
                }
                (ObjectType::Core, Some(os)) => {
                    v.cores.insert((package_of(o.id), os), gp);
                }
                (ObjectType::Pu, Some(os)) => v.pus.push((os, gp)),
                (ObjectType::NumaNode, Some(os)) => v.nodes.push((os, gp)),
                _ => {}
            }
            let pci = match &o.attr {
                ObjectAttr::Pci(p) => Some((p.domain, p.bus, p.dev, p.function)),
                ObjectAttr::Bridge(b) => b
                    .upstream
                    .as_ref()
                    .map(|p| (p.domain, p.bus, p.dev, p.function)),
                _ => None,
            };
            if let Some((d, b, dev, f)) = pci {
                v.pci.insert(format!("{d:04x}:{b:02x}:{dev:02x}.{f:x}"), gp);
            }
        }
        Ok(v)
    }

    /// The only Package, when there is exactly one.
    fn single_package(&self) -> Option<u64> {
        (self.packages.len() == 1)
            .then(|| self.packages.values().next().copied())
            .flatten()
    }
}

/// Reads files in one call; a file that cannot be read (missing, denied,
/// an I/O error such as EACCES on a root-only file) is `None`.
fn read_all(paths: &[String], max: u32) -> Vec<Option<Vec<u8>>> {
    if paths.is_empty() {
        return Vec::new();
    }
    files::read_many(paths, max)
        .into_iter()
        .map(Result::ok)
        .collect()
}

/// Reads files in one call, by path.
fn read_map(paths: &[String], max: u32) -> HashMap<String, Vec<u8>> {
    paths
        .iter()
        .zip(read_all(paths, max))
        .filter_map(|(p, c)| Some((p.clone(), c?)))
        .collect()
}

/// The entries of a folder named `PREFIX<number>`, by number.
fn numbered_entries(dir: &str, prefix: &str) -> Vec<(u32, String)> {
    let Ok(entries) = files::list_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(u32, String)> = entries
        .into_iter()
        .filter_map(|e| Some((numbered(&e, prefix)?, e)))
        .collect();
    out.sort();
    out
}

/// One sensor file of an hwmon chip.
struct Sensor {
    kind: usize,
    /// `temp1`, `fan2`, ...
    stem: String,
    input: String,
    label: Option<String>,
}

/// Splits `temp1_input` into the sensor kind and its stem.
fn sensor_of(name: &str, suffix: &str) -> Option<(usize, String)> {
    let stem = name.strip_suffix(suffix)?;
    SENSORS
        .iter()
        .enumerate()
        .find_map(|(k, (prefix, ..))| numbered(stem, prefix).map(|_| (k, stem.to_string())))
}

/// Sort key putting `temp2` before `temp10`.
fn natural(stem: &str) -> (usize, String) {
    (stem.len(), stem.to_string())
}

fn hwmon(view: &View, props: &mut Vec<DynamicProperty>) {
    let base = "/sys/class/hwmon";
    // One listing per chip, then every name, label and input in one call.
    let mut chip_sensors: Vec<(String, Vec<Sensor>)> = Vec::new();
    let mut paths: Vec<String> = Vec::new();
    for (_, chip) in numbered_entries(base, "hwmon") {
        let dir = format!("{base}/{chip}");
        let Ok(entries) = files::list_dir(&dir) else {
            continue;
        };
        let mut sensors: Vec<Sensor> = Vec::new();
        for e in &entries {
            if let Some((kind, stem)) = sensor_of(e, "_input") {
                let label = format!("{stem}_label");
                sensors.push(Sensor {
                    kind,
                    input: format!("{dir}/{e}"),
                    label: entries.contains(&label).then(|| format!("{dir}/{label}")),
                    stem,
                });
            }
        }
        sensors.sort_by_key(|a| (a.kind, natural(&a.stem)));
        paths.push(format!("{dir}/name"));
        for s in &sensors {
            paths.push(s.input.clone());
            paths.extend(s.label.clone());
        }
        chip_sensors.push((chip, sensors));
    }
    let contents = read_map(&paths, SMALL_FILE);
    for (chip, sensors) in &chip_sensors {
        let dir = format!("{base}/{chip}");
        let name = contents
            .get(&format!("{dir}/name"))
            .map(|b| token(&first_line(b)))
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| chip.clone());
        // The device the chip belongs to, when it is a PCI device of the
        // topology (GPUs, NVMe drives, network cards, AMD CPU sensors).
        let device = files::read_link(&dir)
            .ok()
            .or_else(|| files::read_link(&format!("{dir}/device")).ok())
            .and_then(|l| calc::pci_busid(&l))
            .and_then(|id| view.pci.get(&id).copied());
        let labels: Vec<Option<String>> = sensors
            .iter()
            .map(|s| {
                s.label
                    .as_ref()
                    .and_then(|l| contents.get(l))
                    .map(|b| first_line(b).trim().to_string())
                    .filter(|l| !l.is_empty())
            })
            .collect();
        // coretemp names its package in a `Package id P` label.
        let chip_package = labels.iter().flatten().find_map(|l| {
            l.strip_prefix("Package id ")
                .and_then(|p| p.trim().parse::<u32>().ok())
        });
        let package_gp = chip_package
            .and_then(|p| view.packages.get(&p).copied())
            .or(view.single_package());
        for (s, label) in sensors.iter().zip(&labels) {
            let Some(raw) = contents.get(&s.input).and_then(|b| reading(b)) else {
                continue;
            };
            let (_, quantity, unit, factor) = SENSORS[s.kind];
            let mut target = None;
            if name == "coretemp"
                && let Some(l) = label
            {
                if let Some(p) = l.strip_prefix("Package id ") {
                    target = p
                        .trim()
                        .parse::<u32>()
                        .ok()
                        .and_then(|p| view.packages.get(&p).copied());
                } else if let Some(c) = l.strip_prefix("Core ") {
                    target = c
                        .trim()
                        .parse::<u32>()
                        .ok()
                        .and_then(|c| view.cores.get(&(package_gp, c)).copied());
                }
            }
            let prop_name = match target {
                Some(_) => quantity.to_string(),
                None => format!(
                    "{quantity}.{name}.{}",
                    label
                        .as_deref()
                        .map(token)
                        .unwrap_or_else(|| s.stem.clone())
                ),
            };
            let object = target
                .or(device)
                .or(if matches!(name.as_str(), "k10temp" | "zenpower") {
                    view.single_package()
                } else {
                    None
                })
                .unwrap_or(view.root);
            props.push(prop(object, prop_name, raw * factor, unit));
        }
    }
}

fn thermal(root: u64, props: &mut Vec<DynamicProperty>) {
    let base = "/sys/class/thermal";
    let zones = numbered_entries(base, "thermal_zone");
    let paths: Vec<String> = zones
        .iter()
        .flat_map(|(_, z)| [format!("{base}/{z}/type"), format!("{base}/{z}/temp")])
        .collect();
    let contents = read_all(&paths, SMALL_FILE);
    for (i, (_, z)) in zones.iter().enumerate() {
        let Some(t) = contents
            .get(2 * i + 1)
            .and_then(|c| c.as_deref())
            .and_then(reading)
        else {
            continue;
        };
        let kind = contents
            .get(2 * i)
            .and_then(|c| c.as_deref())
            .map(|b| token(&first_line(b)))
            .filter(|k| !k.is_empty())
            .unwrap_or_else(|| "zone".into());
        // m°C in the file.
        props.push(prop(
            root,
            format!("temperature.{z}.{kind}"),
            t * 1e-3,
            "°C",
        ));
    }
}

fn cpufreq(view: &View, props: &mut Vec<DynamicProperty>) {
    let paths: Vec<String> = view
        .pus
        .iter()
        .map(|(os, _)| format!("/sys/devices/system/cpu/cpu{os}/cpufreq/scaling_cur_freq"))
        .collect();
    for ((_, gp), c) in view.pus.iter().zip(read_all(&paths, SMALL_FILE)) {
        // kHz in the file.
        if let Some(khz) = c.as_deref().and_then(reading) {
            props.push(prop(*gp, "frequency".into(), khz * 1e3, "Hz"));
        }
    }
}

/// One RAPL zone: `intel-rapl:0` (a package), `intel-rapl:0:2` (one of
/// its subzones), `intel-rapl-mmio:0`.
struct RaplZone {
    dir: String,
    /// `intel-rapl` or `intel-rapl-mmio`.
    control: String,
    /// The numbers after the control type: `[0]`, `[0, 2]`.
    path: Vec<u32>,
}

fn rapl_zones() -> Vec<RaplZone> {
    let base = "/sys/class/powercap";
    let Ok(entries) = files::list_dir(base) else {
        return Vec::new();
    };
    let mut zones: Vec<RaplZone> = entries
        .into_iter()
        .filter_map(|e| {
            let (control, rest) = e.split_once(':')?;
            if !control.starts_with("intel-rapl") {
                return None;
            }
            let path: Option<Vec<u32>> = rest.split(':').map(|n| n.parse().ok()).collect();
            Some(RaplZone {
                dir: format!("{base}/{e}"),
                control: control.to_string(),
                path: path?,
            })
        })
        .collect();
    zones.sort_by(|a, b| (&a.control, &a.path).cmp(&(&b.control, &b.path)));
    zones
}

fn rapl(view: &View, prev: &Previous, props: &mut Vec<DynamicProperty>) {
    let zones = rapl_zones();
    let paths: Vec<String> = zones
        .iter()
        .flat_map(|z| {
            [
                format!("{}/name", z.dir),
                format!("{}/energy_uj", z.dir),
                format!("{}/max_energy_range_uj", z.dir),
            ]
        })
        .collect();
    let contents = read_all(&paths, SMALL_FILE);
    let names: Vec<Option<String>> = (0..zones.len())
        .map(|i| {
            contents[3 * i]
                .as_deref()
                .map(|b| token(&first_line(b)))
                .filter(|n| !n.is_empty())
        })
        .collect();
    for (i, z) in zones.iter().enumerate() {
        let Some(name) = &names[i] else { continue };
        // A subzone is named after its package zone: `package-0.dram`.
        let top = zones
            .iter()
            .position(|t| t.control == z.control && t.path[..] == z.path[..1]);
        let top_name = top.and_then(|t| names[t].clone());
        let full = match (&top_name, z.path.len()) {
            (_, 1) => name.clone(),
            (Some(t), _) => format!("{t}.{name}"),
            (None, _) => continue,
        };
        let object = top_name
            .as_deref()
            .and_then(calc::rapl_package)
            .and_then(|p| view.packages.get(&p).copied())
            .unwrap_or(view.root);
        let prefix = if z.control == "intel-rapl" {
            "rapl".to_string()
        } else {
            token(z.control.strip_prefix("intel-").unwrap_or(&z.control))
        };
        // µJ in the files; unreadable (root-only) means unavailable.
        let Some(uj) = contents[3 * i + 1].as_deref().and_then(calc::counter) else {
            continue;
        };
        let max = contents[3 * i + 2]
            .as_deref()
            .and_then(calc::counter)
            .map(|m| m as f64 * 1e-6);
        let energy_name = format!("energy.{prefix}.{full}");
        let joules = uj as f64 * 1e-6;
        if let (Some(before), Some(dt)) = (prev.get(object, &energy_name), prev.elapsed)
            && let Some(d) = calc::wrapped_delta(before, joules, max)
        {
            props.push(prop(object, format!("power.{prefix}.{full}"), d / dt, "W"));
        }
        props.push(prop(object, energy_name, joules, "J"));
    }
}

/// Seconds per `/proc/stat` tick: USER_HZ, 100 on every Linux
/// architecture's ABI.
const TICK: f64 = 0.01;

fn proc_stat(view: &View, prev: &Previous, props: &mut Vec<DynamicProperty>) {
    let Some(text) = read_all(&["/proc/stat".to_string()], STAT_FILE)
        .pop()
        .flatten()
    else {
        return;
    };
    let pus: HashMap<u32, u64> = view.pus.iter().copied().collect();
    for (cpu, t) in calc::proc_stat(&String::from_utf8_lossy(&text)) {
        let object = match cpu {
            None => view.root,
            Some(n) => match pus.get(&n) {
                Some(&gp) => gp,
                None => continue,
            },
        };
        let busy = t.busy as f64 * TICK;
        let idle = t.idle as f64 * TICK;
        let before = (
            prev.get(object, "cpu-time.busy"),
            prev.get(object, "cpu-time.idle"),
        );
        if let (Some(b0), Some(i0)) = before
            && let Some(u) = calc::utilisation(b0, i0, busy, idle)
        {
            props.push(prop(object, "utilisation".into(), u, "%"));
        }
        props.push(prop(object, "cpu-time.busy".into(), busy, "s"));
        props.push(prop(object, "cpu-time.idle".into(), idle, "s"));
    }
}

fn node_memory(view: &View, props: &mut Vec<DynamicProperty>) {
    let paths: Vec<String> = view
        .nodes
        .iter()
        .map(|(os, _)| format!("/sys/devices/system/node/node{os}/meminfo"))
        .collect();
    for ((_, gp), c) in view.nodes.iter().zip(read_all(&paths, STAT_FILE)) {
        let Some(c) = c else { continue };
        let m = calc::node_meminfo(&String::from_utf8_lossy(&c));
        for (name, v) in [
            ("memory.used", m.used),
            ("memory.free", m.free),
            ("memory.total", m.total),
        ] {
            if let Some(v) = v {
                props.push(prop(*gp, name.into(), v as f64, "B"));
            }
        }
    }
}

fn edac(root: u64, props: &mut Vec<DynamicProperty>) {
    let base = "/sys/devices/system/edac/mc";
    // (property name, file) in output order.
    let mut wanted: Vec<(String, String)> = Vec::new();
    for (_, mc) in numbered_entries(base, "mc") {
        let dir = format!("{base}/{mc}");
        for (kind, file) in [("corrected", "ce_count"), ("uncorrected", "ue_count")] {
            wanted.push((format!("errors.{kind}.{mc}"), format!("{dir}/{file}")));
        }
        // DIMMs or, with drivers that count by chip select, ranks.
        let mut units = numbered_entries(&dir, "dimm");
        if units.is_empty() {
            units = numbered_entries(&dir, "rank");
        }
        for (_, u) in units {
            for kind in ["corrected", "uncorrected"] {
                // Ranks have the same file names as DIMMs.
                let file = format!("{dir}/{u}/dimm_{}e_count", &kind[..1]);
                wanted.push((format!("errors.{kind}.{mc}.{u}"), file));
            }
        }
    }
    let paths: Vec<String> = wanted.iter().map(|(_, f)| f.clone()).collect();
    let contents = read_all(&paths, SMALL_FILE);
    for ((name, _), c) in wanted.into_iter().zip(contents) {
        if let Some(n) = c.as_deref().and_then(calc::counter) {
            props.push(prop(root, name, n as f64, ""));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sensor_files_are_recognised() {
        assert_eq!(
            sensor_of("temp12_input", "_input"),
            Some((0, "temp12".into()))
        );
        assert_eq!(sensor_of("in0_input", "_input"), Some((4, "in0".into())));
        assert_eq!(
            sensor_of("energy1_input", "_input"),
            Some((3, "energy1".into()))
        );
        assert_eq!(sensor_of("temp_input", "_input"), None);
        assert_eq!(sensor_of("temp1_max", "_input"), None);
        assert_eq!(sensor_of("intrusion0_input", "_input"), None);
    }
}
