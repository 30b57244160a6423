//! wloc's built-in annotation component for the machine's identity and
//! sensors.
//!
//! * DMI: the files of `/sys/class/dmi/id` become infos of the root
//!   object, named as hwloc's Linux backend names them (`DMIBoardVendor`,
//!   `DMIProductName`, ...): at most 63 bytes, up to the first newline.
//! * hwmon (`/sys/class/hwmon/hwmon*`): temperatures, fans, power,
//!   voltages, currents and frequencies become dynamic properties with
//!   their units.  `coretemp` readings labelled `Package id P` go to that
//!   Package and `Core C` to that Core of the package; a chip that
//!   belongs to a PCI device present in the topology goes to it; the
//!   others go to the Machine.
//! * thermal zones (`/sys/class/thermal/thermal_zone*`): temperatures of
//!   the Machine.
//! * cpufreq: the current frequency of each PU
//!   (`/sys/devices/system/cpu/cpuN/cpufreq/scaling_cur_freq`).
//!
//! Property names have no spaces (labels' spaces become `_`), so that a
//! reading prints as `object name value unit`.  All files are read in a
//! few batched calls.
//!
//! The setting `readings=none` leaves the sensors out, for callers that
//! only want the infos (`wloc ls`).

use std::collections::HashMap;

wit_bindgen::generate!({
    world: "annotation-backend",
    path: "../../wit/backend@0.1.0",
});

use wloc::backend::files;
use wloc::backend::topology;
use wloc::backend::types::{DynamicProperty, Info, Object, ObjectAttr, ObjectType};

// hwloc's DMI files and info names, and their folders, as Linux
// discovery reads them.
use wloc_linux::{DMI_FILES, DMI_FOLDERS};

/// Bytes read of a sensor or DMI file: they hold one short line.
const SMALL_FILE: u32 = 256;

/// hwmon sensor kinds: file prefix, property quantity, unit, and the
/// factor from the file's unit to the property's.
const SENSORS: [(&str, &str, &str, f64); 6] = [
    ("temp", "temperature", "°C", 1e-3),
    ("fan", "fan", "RPM", 1.0),
    ("power", "power", "W", 1e-6),
    ("in", "voltage", "V", 1e-3),
    ("curr", "current", "A", 1e-3),
    ("freq", "frequency", "Hz", 1.0),
];

struct Annotator;

impl Guest for Annotator {
    fn annotate() -> Result<Annotations, String> {
        let objects = topology::objects();
        let view = View::new(&objects)?;
        let mut out = Annotations {
            infos: Vec::new(),
            misc: Vec::new(),
            distances: Vec::new(),
            memattrs: Vec::new(),
            properties: Vec::new(),
        };
        out.infos = dmi_infos(view.root);
        if wloc::backend::config::get("readings").as_deref() != Some("none") {
            hwmon(&view, &mut out.properties);
            thermal(view.root, &mut out.properties);
            cpufreq(&view, &mut out.properties);
        }
        Ok(out)
    }
}

export!(Annotator);

/// The objects this component attaches readings to.
struct View {
    root: u64,
    /// Package OS index -> gp index.
    packages: HashMap<u32, u64>,
    /// (package gp index or none, core OS index) -> gp index.
    cores: HashMap<(Option<u64>, u32), u64>,
    /// PU OS index -> gp index.
    pus: Vec<(u32, u64)>,
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
}

/// The first line of a small file, without its newline.
fn first_line(b: &[u8]) -> String {
    let end = b
        .iter()
        .position(|&c| c == b'\n' || c == 0)
        .unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

fn read_all(paths: &[String]) -> Vec<Option<Vec<u8>>> {
    if paths.is_empty() {
        return Vec::new();
    }
    files::read_many(paths, SMALL_FILE)
        .into_iter()
        .map(Result::ok)
        .collect()
}

/// DMI infos of the root, as hwloc reads them.
fn dmi_infos(root: u64) -> Vec<(u64, Info)> {
    let dir = DMI_FOLDERS.into_iter().find(|d| files::list_dir(d).is_ok());
    let Some(dir) = dir else {
        return Vec::new();
    };
    let paths: Vec<String> = DMI_FILES
        .iter()
        .map(|(f, _)| format!("{dir}/{f}"))
        .collect();
    let mut infos = Vec::new();
    for ((_, name), content) in DMI_FILES.iter().zip(read_all(&paths)) {
        let Some(b) = content else { continue };
        // hwloc reads at most 63 bytes and skips empty files.
        let b = &b[..b.len().min(63)];
        if b.first().is_none_or(|&c| c == 0) {
            continue;
        }
        infos.push((
            root,
            Info {
                name: (*name).to_string(),
                value: first_line(b),
            },
        ));
    }
    infos
}

/// A label as a name component: no spaces, no dots.
fn token(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| {
            if c.is_whitespace() || c == '.' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// Parses an integer reading.
fn reading(b: &[u8]) -> Option<f64> {
    first_line(b).trim().parse::<i64>().ok().map(|v| v as f64)
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
    SENSORS.iter().enumerate().find_map(|(k, (prefix, ..))| {
        let n = stem.strip_prefix(prefix)?;
        (!n.is_empty() && n.bytes().all(|c| c.is_ascii_digit())).then(|| (k, stem.to_string()))
    })
}

/// The last PCI bus id (`dddd:bb:dd.f`) among the components of a path.
fn pci_busid(path: &str) -> Option<String> {
    path.split('/')
        .rfind(|c| {
            let b = c.as_bytes();
            b.len() == 12
                && b[4] == b':'
                && b[7] == b':'
                && b[10] == b'.'
                && c.chars()
                    .enumerate()
                    .all(|(i, ch)| matches!(i, 4 | 7 | 10) || ch.is_ascii_hexdigit())
        })
        .map(str::to_ascii_lowercase)
}

fn hwmon(view: &View, props: &mut Vec<DynamicProperty>) {
    let base = "/sys/class/hwmon";
    let Ok(mut chips) = files::list_dir(base) else {
        return;
    };
    chips.retain(|c| c.starts_with("hwmon"));
    chips.sort_by_key(|c| c[5..].parse::<u32>().unwrap_or(u32::MAX));
    // One listing per chip, then every name, label and input in one call.
    let mut chip_sensors: Vec<(String, Vec<Sensor>)> = Vec::new();
    let mut paths: Vec<String> = Vec::new();
    for chip in &chips {
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
            if let Some(l) = &s.label {
                paths.push(l.clone());
            }
        }
        chip_sensors.push((chip.clone(), sensors));
    }
    let mut contents: HashMap<String, Vec<u8>> = HashMap::new();
    for (p, c) in paths.iter().zip(read_all(&paths)) {
        if let Some(c) = c {
            contents.insert(p.clone(), c);
        }
    }
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
            .and_then(|l| pci_busid(&l))
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
        let single_package = (view.packages.len() == 1)
            .then(|| view.packages.values().next().copied())
            .flatten();
        let package_gp = chip_package
            .and_then(|p| view.packages.get(&p).copied())
            .or(single_package);
        for (s, label) in sensors.iter().zip(&labels) {
            let Some(raw) = contents.get(&s.input).and_then(|b| reading(b)) else {
                continue;
            };
            let (_, quantity, unit, factor) = SENSORS[s.kind];
            let mut target = None;
            if name == "coretemp" {
                if let Some(l) = label {
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
                    single_package
                } else {
                    None
                })
                .unwrap_or(view.root);
            props.push(DynamicProperty {
                object,
                name: prop_name,
                value: raw * factor,
                unit: unit.to_string(),
            });
        }
    }
}

/// Sort key putting `temp2` before `temp10`.
fn natural(stem: &str) -> (usize, String) {
    (stem.len(), stem.to_string())
}

fn thermal(root: u64, props: &mut Vec<DynamicProperty>) {
    let base = "/sys/class/thermal";
    let Ok(mut zones) = files::list_dir(base) else {
        return;
    };
    zones.retain(|z| {
        z.strip_prefix("thermal_zone")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
    });
    zones.sort_by_key(|z| z[12..].parse::<u32>().unwrap_or(u32::MAX));
    let paths: Vec<String> = zones
        .iter()
        .flat_map(|z| [format!("{base}/{z}/type"), format!("{base}/{z}/temp")])
        .collect();
    let contents = read_all(&paths);
    for (i, z) in zones.iter().enumerate() {
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
        props.push(DynamicProperty {
            object: root,
            name: format!("temperature.{z}.{kind}"),
            value: t * 1e-3,
            unit: "°C".into(),
        });
    }
}

fn cpufreq(view: &View, props: &mut Vec<DynamicProperty>) {
    let paths: Vec<String> = view
        .pus
        .iter()
        .map(|(os, _)| format!("/sys/devices/system/cpu/cpu{os}/cpufreq/scaling_cur_freq"))
        .collect();
    for ((_, gp), c) in view.pus.iter().zip(read_all(&paths)) {
        // kHz in the file.
        if let Some(khz) = c.as_deref().and_then(reading) {
            props.push(DynamicProperty {
                object: *gp,
                name: "frequency".into(),
                value: khz * 1e3,
                unit: "Hz".into(),
            });
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
        assert_eq!(sensor_of("in0_input", "_input"), Some((3, "in0".into())));
        assert_eq!(sensor_of("temp_input", "_input"), None);
        assert_eq!(sensor_of("temp1_max", "_input"), None);
        assert_eq!(sensor_of("intrusion0_input", "_input"), None);
    }

    #[test]
    fn pci_bus_ids_are_found_in_paths() {
        assert_eq!(
            pci_busid("../../devices/pci0000:00/0000:00:18.3/hwmon/hwmon2").as_deref(),
            Some("0000:00:18.3")
        );
        assert_eq!(
            pci_busid("../../devices/platform/coretemp.0/hwmon/hwmon1"),
            None
        );
    }

    #[test]
    fn labels_become_name_tokens() {
        assert_eq!(token(" Package id 0\n"), "Package_id_0");
        assert_eq!(token("a.b c"), "a_b_c");
        assert_eq!(reading(b"45000\n"), Some(45000.0));
        assert_eq!(reading(b"x"), None);
        assert_eq!(first_line(b"ab\ncd"), "ab");
    }
}
