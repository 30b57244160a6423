//! Annotation components through the runtime API: the built-in DMI and
//! sensors component and PCI names component on files below an fsroot,
//! and the example third-party component.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use wloc_core::object::{OsDevTypes, PciAttr};
use wloc_core::{ObjAttr, ObjType, Object, Topology, TypeFilter};
use wloc_runtime::{FileAccess, Limits, LogTarget, RunOptions, Runtime, builtin};

struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let p = std::env::temp_dir().join(format!("wloc-annot-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(&p).unwrap();
        Dir(p)
    }
    fn write(&self, rel: &str, content: &str) {
        let p = self.0.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Two packages of two cores, a PCI device 0000:01:00.0 (14e4:1639) with a
/// network interface `eth0` below it.
fn topology() -> Topology {
    let mut t = Topology::new();
    t.set_all_types_filter(TypeFilter::KeepAll);
    let mut t = wloc_core::synthetic::parse("pack:2 core:2 pu:1")
        .unwrap()
        .build(t)
        .unwrap();
    let root = t.root();
    let mut pci = Object::new(ObjType::PCIDevice, None);
    pci.attr = ObjAttr::Pci(PciAttr {
        domain: 0,
        bus: 1,
        dev: 0,
        func: 0,
        class_id: 0x0200,
        vendor_id: 0x14e4,
        device_id: 0x1639,
        subvendor_id: 0,
        subdevice_id: 0,
        revision: 0,
        linkspeed: 0.0,
        prog_if: 0,
    });
    let p = t.insert_by_parent(root, pci).unwrap();
    let mut nic = Object::new(ObjType::OSDevice, None);
    nic.name = Some("eth0".into());
    nic.attr = ObjAttr::OsDev(OsDevTypes(16));
    t.insert_by_parent(p, nic).unwrap();
    t.finish().unwrap();
    t
}

fn opts(roots: &[&str], fsroot: &Path) -> RunOptions {
    RunOptions {
        files: Arc::new(FileAccess::new(roots, Some(fsroot)).unwrap()),
        limits: Limits {
            max_file_bytes: 16 << 20,
            ..Limits::default()
        },
        log: LogTarget::Capture,
        ..RunOptions::default()
    }
}

fn infos_of(t: &Topology, ty: ObjType) -> Vec<(String, String)> {
    t.objs_by_type(ty)
        .into_iter()
        .flat_map(|o| t.obj(o).infos.clone())
        .map(|i| (i.name, i.value))
        .collect()
}

#[test]
fn dmi_and_sensors_land_on_the_right_objects() {
    let d = Dir::new("dmi");
    d.write("sys/class/dmi/id/board_vendor", "Acme Boards\n");
    d.write("sys/class/dmi/id/product_name", "X1000\n");
    d.write("sys/class/dmi/id/board_serial", "");
    d.write("sys/class/hwmon/hwmon0/name", "coretemp\n");
    d.write("sys/class/hwmon/hwmon0/temp1_input", "61000\n");
    d.write("sys/class/hwmon/hwmon0/temp1_label", "Package id 1\n");
    d.write("sys/class/hwmon/hwmon0/temp2_input", "58500\n");
    d.write("sys/class/hwmon/hwmon0/temp2_label", "Core 3\n");
    d.write("sys/class/thermal/thermal_zone3/type", "acpitz\n");
    d.write("sys/class/thermal/thermal_zone3/temp", "30000\n");
    d.write(
        "sys/devices/system/cpu/cpu2/cpufreq/scaling_cur_freq",
        "1800000\n",
    );
    let rt = Runtime::new().unwrap();
    let c = rt
        .load_annotator(builtin::ANNOTATE_DMI_NAME, builtin::annotate_dmi_wasm())
        .unwrap();
    let mut t = topology();
    let props = rt
        .annotate(&c, &opts(builtin::ANNOTATE_DMI_ROOTS, &d.0), &mut t)
        .unwrap();
    // DMI only: the readings are the sensors component's.
    assert!(props.is_empty(), "{props:?}");
    let sensors = rt
        .load_annotator(
            builtin::ANNOTATE_SENSORS_NAME,
            builtin::annotate_sensors_wasm(),
        )
        .unwrap();
    let props = rt
        .annotate(
            &sensors,
            &opts(builtin::ANNOTATE_SENSORS_ROOTS, &d.0),
            &mut t,
        )
        .unwrap();
    let root_infos = infos_of(&t, ObjType::Machine);
    assert!(root_infos.contains(&("DMIBoardVendor".into(), "Acme Boards".into())));
    assert!(root_infos.contains(&("DMIProductName".into(), "X1000".into())));
    assert!(!root_infos.iter().any(|(n, _)| n == "DMIBoardSerial"));
    let shown: Vec<String> = props
        .iter()
        .map(|p| {
            let o = t.obj(p.object);
            format!(
                "{}#{} {} {} {}",
                o.obj_type.xml_name(),
                o.logical_index(),
                p.name,
                p.value,
                p.unit
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            "Package#1 temperature 61 °C",
            "Core#3 temperature 58.5 °C",
            "Machine#0 temperature.thermal_zone3.acpitz 30 °C",
            "PU#2 frequency 1800000000 Hz",
        ]
    );
}

#[test]
fn pci_names_come_from_the_granted_database() {
    let d = Dir::new("pci");
    d.write(
        "usr/share/hwdata/pci.ids",
        "14e4  Broadcom Inc. and subsidiaries\n\t1639  NetXtreme II BCM5709 Gigabit Ethernet\n",
    );
    let rt = Runtime::new().unwrap();
    let c = rt
        .load_annotator(
            builtin::ANNOTATE_PCI_NAMES_NAME,
            builtin::annotate_pci_names_wasm(),
        )
        .unwrap();
    let mut t = topology();
    rt.annotate(&c, &opts(builtin::ANNOTATE_PCI_NAMES_ROOTS, &d.0), &mut t)
        .unwrap();
    assert_eq!(
        infos_of(&t, ObjType::PCIDevice),
        [
            ("PCIVendor".into(), "Broadcom Inc. and subsidiaries".into()),
            (
                "PCIDevice".into(),
                "NetXtreme II BCM5709 Gigabit Ethernet".into()
            )
        ]
    );
}

#[test]
fn the_example_vendor_component_annotates_network_interfaces() {
    let d = Dir::new("vendor");
    d.write("sys/class/net/eth0/mtu", "9000\n");
    d.write("sys/class/net/eth0/speed", "25000\n");
    let wasm = fs::read(env!("WLOC_EXAMPLE_VENDOR_WASM")).unwrap();
    let rt = Runtime::new().unwrap();
    let c = rt.load_annotator("example-vendor", &wasm).unwrap();
    let mut t = topology();
    rt.annotate(&c, &opts(&["/sys/class/net"], &d.0), &mut t)
        .unwrap();
    assert_eq!(
        infos_of(&t, ObjType::OSDevice),
        [
            ("MTU".into(), "9000".into()),
            ("LinkSpeed".into(), "25000 Mb/s".into())
        ]
    );
}

#[test]
fn a_discovery_component_is_not_an_annotator() {
    let rt = Runtime::new().unwrap();
    let e = rt
        .load_annotator("synthetic", builtin::synthetic_wasm())
        .err()
        .expect("refused");
    assert!(e.to_string().contains("annotation backend"), "{e}");
}

#[test]
fn invalid_annotations_leave_the_topology_unchanged() {
    use wloc_runtime::annotate::{Annotations, DynamicProperty, apply};
    use wloc_runtime::bindings::types::Info;
    let mut t = topology();
    let before = format!("{:?}", infos_of(&t, ObjType::Machine));
    let root_gp = t.obj(t.root()).gp_index;
    let bad = Annotations {
        infos: vec![(
            root_gp,
            Info {
                name: "Good".into(),
                value: "1".into(),
            },
        )],
        misc: vec![],
        distances: vec![],
        memattrs: vec![],
        properties: vec![DynamicProperty {
            object: 999_999,
            name: "temperature".into(),
            value: 1.0,
            unit: "°C".into(),
        }],
    };
    let e = apply(&bad, &mut t, &Limits::default()).unwrap_err();
    assert!(
        matches!(e, wloc_runtime::RecordError::NoObject { gp: 999_999, .. }),
        "{e}"
    );
    assert!(
        e.to_string().contains("no object has gp index 999999"),
        "{e}"
    );
    assert_eq!(format!("{:?}", infos_of(&t, ObjType::Machine)), before);
    let nan = Annotations {
        properties: vec![DynamicProperty {
            object: root_gp,
            name: "x".into(),
            value: f64::NAN,
            unit: "W".into(),
        }],
        ..bad
    };
    assert!(apply(&nan, &mut t, &Limits::default()).is_err());
    let esc = Annotations {
        infos: vec![(
            root_gp,
            Info {
                name: "Evil\u{1b}[2J".into(),
                value: "x".into(),
            },
        )],
        properties: vec![],
        ..nan
    };
    assert!(
        apply(&esc, &mut t, &Limits::default())
            .unwrap_err()
            .to_string()
            .contains("control character")
    );
    let misc = Annotations {
        infos: vec![],
        misc: vec![(root_gp, "Rack 12".into())],
        ..esc
    };
    apply(&misc, &mut t, &Limits::default()).unwrap();
    assert_eq!(t.objs_by_type(ObjType::Misc).len(), 1);
}

#[test]
fn device_link_matrices_may_mix_types_when_their_kind_says_so() {
    use wloc_runtime::annotate::{Annotations, apply};
    use wloc_runtime::bindings::types::Distances;
    let mut t = topology();
    let eth0 = t.objs_by_type(ObjType::OSDevice)[0];
    let pack = t.objs_by_type(ObjType::Package)[0];
    let gp = |t: &Topology, o| u32::try_from(t.obj(o).gp_index).unwrap();
    let links = |kind: u64| Annotations {
        infos: Vec::new(),
        misc: Vec::new(),
        distances: vec![Distances {
            name: Some("TestLinkBandwidth".into()),
            kind,
            objects: vec![gp(&t, eth0), gp(&t, pack)],
            values: vec![0, 25_000, 25_000, 0],
        }],
        memattrs: Vec::new(),
        properties: Vec::new(),
    };
    let limits = wloc_runtime::Limits::default();
    let plain = links(8);
    let e = apply(&plain, &mut t.clone(), &limits)
        .unwrap_err()
        .to_string();
    assert!(e.contains("mixes objects of several types"), "{e}");
    // Bandwidth (8) between heterogeneous types (16), as hwloc's NVLink.
    let hetero = links(8 | 16);
    apply(&hetero, &mut t, &limits).unwrap();
    let d = t.distances.last().unwrap();
    assert_eq!(d.name.as_deref(), Some("TestLinkBandwidth"));
    assert_eq!(d.objs, [eth0, pack]);
    assert_eq!(d.value(0, 1), Some(25_000));
}
