//! The built-in annotation components, run after the discovery of this
//! machine or of a recorded fsroot:
//! * `annotate-dmi`: DMI infos of the root;
//! * `annotate-sensors`: dynamic properties (hwmon, thermal zones,
//!   cpufreq, RAPL power, PU utilisation, NUMA node memory use, EDAC
//!   error counts), for `wloc watch`;
//! * `annotate-pci-names`: `PCIVendor` and `PCIDevice` infos of PCI
//!   devices and bridges, from the system's `pci.ids`.
//!
//! Each runs sandboxed with read-only grants on its own files (rebased
//! under the fsroot when there is one).  A component that fails is
//! reported as a warning: the topology stays as discovery left it.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use wloc_core::{ObjType, Topology};
use wloc_runtime::annotate::topology_objects;
use wloc_runtime::{
    FileAccess, Limits, LoadedAnnotator, Property, RunOptions, Runtime, builtin, enforce,
};

use crate::input::Source;
use crate::{Discovery, SetupError};

/// Whether the built-in annotations apply to a source: this machine
/// (through Linux or CPUID discovery) or a recorded `/sys` and `/proc`
/// tree.  A recorded CPUID dump is another machine: this one's files
/// would not describe it.
pub fn applies_to(source: &Source) -> bool {
    matches!(
        source,
        Source::ThisSystem | Source::CpuidThisSystem | Source::Fsroot(..)
    )
}

/// The fsroot of a source, if it has one.
pub fn fsroot_of(source: &Source) -> Option<&Path> {
    match source {
        Source::Fsroot(p, _) => Some(p),
        _ => None,
    }
}

/// Limits of an annotation run: they read a few small files, except
/// `pci.ids` (1.3 MB in 2023), so the file cap is raised and the deadline
/// shortened.
fn annotation_limits() -> Limits {
    Limits {
        deadline: Duration::from_secs(3),
        max_file_bytes: 16 << 20,
        ..Limits::default()
    }
}

/// Loaded annotation components with their grants, ready to run again and
/// again (each run gets a fresh instance).
pub struct Annotators<'d> {
    runtime: &'d Runtime,
    loaded: Vec<(LoadedAnnotator, RunOptions)>,
    /// Per component, its last sample and when it was taken: handed back
    /// on the next one (settings `sample.previous` and `sample.elapsed`),
    /// since rates (power from energy counters, utilisation from CPU
    /// times) need two readings and each run is a fresh instance.
    last: Mutex<Vec<Option<(Instant, String)>>>,
}

impl<'d> Annotators<'d> {
    /// Loads the built-in annotation components through the admin's
    /// policy (which may disable them, narrow their files or set their
    /// limits), granted their files below `fsroot` (or `/`), into the
    /// run's runtime.  Components that cannot be loaded are left out, each
    /// with a warning; the error is a runtime that cannot start or a policy
    /// that cannot be read.
    pub fn builtin(
        d: &'d Discovery,
        fsroot: Option<&Path>,
    ) -> Result<(Annotators<'d>, Vec<String>), SetupError> {
        Self::builtin_matching(d, fsroot, |_, _| true, &BTreeMap::new())
    }

    /// As [`Annotators::builtin`], for the built-in components `wanted`
    /// accepts, given the files each would be granted, with `settings`.
    /// The PCI names component is left out when neither of its databases
    /// exists, since it could name nothing.
    pub fn builtin_matching(
        d: &'d Discovery,
        fsroot: Option<&Path>,
        wanted: impl Fn(&builtin::Builtin, &FileAccess) -> bool,
        settings: &BTreeMap<String, String>,
    ) -> Result<(Annotators<'d>, Vec<String>), SetupError> {
        Self::builtin_rooted(d, |_| fsroot, wanted, settings)
    }

    /// As [`Annotators::builtin_matching`], each component granted its
    /// files below the root `root_of` gives it (`None`: `/`).
    fn builtin_rooted<'a>(
        d: &'d Discovery,
        root_of: impl Fn(&builtin::Builtin) -> Option<&'a Path>,
        wanted: impl Fn(&builtin::Builtin, &FileAccess) -> bool,
        settings: &BTreeMap<String, String>,
    ) -> Result<(Annotators<'d>, Vec<String>), SetupError> {
        let mut warnings = Vec::new();
        let policy = d.policy()?;
        let runtime = d.runtime()?;
        let mut loaded = Vec::new();
        for b in [
            &builtin::ANNOTATE_DMI,
            &builtin::ANNOTATE_SENSORS,
            &builtin::ANNOTATE_PCI_NAMES,
        ] {
            let files = match FileAccess::new(b.roots, root_of(b)) {
                Ok(f) => f,
                Err(e) => {
                    warnings.push(format!("component {}: cannot open its files: {e}", b.name));
                    continue;
                }
            };
            if !wanted(b, &files) {
                continue;
            }
            if b.name == builtin::ANNOTATE_PCI_NAMES_NAME && files.roots().is_empty() {
                continue;
            }
            let loaded_one = enforce::admit_builtin(policy, b, annotation_limits())
                .and_then(|adm| runtime.load_builtin_annotator(&adm, b));
            match loaded_one {
                Ok(c) => {
                    let opts = RunOptions {
                        files: Arc::new(files),
                        limits: annotation_limits(),
                        config: Arc::new(settings.clone()),
                        ..RunOptions::default()
                    };
                    loaded.push((c, opts));
                }
                Err(e) => warnings.push(e.to_string()),
            }
        }
        let last = Mutex::new(vec![None; loaded.len()]);
        Ok((
            Annotators {
                runtime,
                loaded,
                last,
            },
            warnings,
        ))
    }

    /// Names of the loaded components.
    pub fn names(&self) -> Vec<&str> {
        self.loaded.iter().map(|(c, _)| c.name()).collect()
    }

    /// Runs every component on `topo` and adds their infos (and Misc
    /// objects, distances, memory attributes) to it.  Returns the dynamic
    /// properties, in component order, and a warning per failure.
    pub fn annotate(&self, topo: &mut Topology) -> (Vec<Property>, Vec<String>) {
        let mut props = Vec::new();
        let mut warnings = Vec::new();
        for (c, opts) in &self.loaded {
            match self.runtime.annotate(c, opts, topo) {
                Ok(p) => props.extend(p),
                Err(e) => warnings.push(e.to_string()),
            }
        }
        (props, warnings)
    }

    /// Samples the dynamic properties of `topo` without changing it.
    pub fn sample(&self, topo: &Topology) -> (Vec<Property>, Vec<String>) {
        self.sample_at(topo, Instant::now())
    }

    /// As [`Annotators::sample`], taken at `now`: rates are computed over
    /// the time since the previous sample's `now`.
    pub fn sample_at(&self, topo: &Topology, now: Instant) -> (Vec<Property>, Vec<String>) {
        let mut props = Vec::new();
        let mut warnings = Vec::new();
        let objects = match topology_objects(topo) {
            Ok(o) => Arc::new(o),
            Err(e) => return (props, vec![e.to_string()]),
        };
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        for (k, (c, opts)) in self.loaded.iter().enumerate() {
            let mut opts = opts.clone();
            if let Some((when, text)) = &last[k] {
                let mut config = (*opts.config).clone();
                let secs = now.saturating_duration_since(*when).as_secs_f64();
                config.insert("sample.previous".into(), text.clone());
                config.insert("sample.elapsed".into(), format!("{secs}"));
                opts.config = Arc::new(config);
            }
            let out = self
                .runtime
                .run_annotator_on(c, &opts, objects.clone())
                .map_err(|e| e.to_string())
                .and_then(|out| {
                    // Checked as a whole, on a scratch copy.
                    let mut scratch = topo.clone();
                    wloc_runtime::annotate::apply(&out.annotations, &mut scratch, &opts.limits)
                        .map_err(|m| {
                            format!(
                                "component {} (sha256 {}): returned invalid data: {m}",
                                c.name(),
                                &c.digest()[..12]
                            )
                        })
                });
            match out {
                Ok(p) => {
                    last[k] = Some((now, previous_text(topo, &p)));
                    props.extend(p);
                }
                Err(w) => warnings.push(w),
            }
        }
        (props, warnings)
    }
}

/// A sample as handed back to its component: `GP<TAB>NAME<TAB>VALUE`
/// lines (values printed so that they read back exactly).
fn previous_text(topo: &Topology, props: &[Property]) -> String {
    let mut s = String::new();
    for p in props {
        let gp = topo.obj(p.object).gp_index;
        s.push_str(&format!("{gp}\t{}\t{:?}\n", p.name, p.value));
    }
    s
}

/// Runs the built-in annotations on a freshly discovered topology when
/// they apply to its source; failures are printed as warnings.
pub fn annotate_discovered(d: &Discovery, source: &Source, topo: &mut Topology) {
    for w in annotate_discovered_quietly(d, source, topo) {
        eprintln!("wloc: warning: annotation skipped: {w}");
    }
}

/// As [`annotate_discovered`], returning the warnings instead of printing
/// them (for the C library, which prints nothing on its own).
pub fn annotate_discovered_quietly(
    d: &Discovery,
    source: &Source,
    topo: &mut Topology,
) -> Vec<String> {
    annotate_with_databases(d, source, topo, false, true)
}

/// As [`annotate_discovered_quietly`], for wloc's `libhwloc.so.15`: as
/// libhwloc 2.9 does, the PCI devices of a recorded machine are named from
/// this host's `pci.ids` (a database, not the machine's state), where the
/// `wloc` command names them from the recording's own, as hwloc's tests
/// expect.
///
/// `pci_names`: whether libhwloc's `pci` component runs (it names the
/// devices); a program or `HWLOC_COMPONENTS` may leave it out.
pub fn annotate_discovered_as_libhwloc(
    d: &Discovery,
    source: &Source,
    topo: &mut Topology,
    pci_names: bool,
) -> Vec<String> {
    annotate_with_databases(d, source, topo, true, pci_names)
}

fn annotate_with_databases(
    d: &Discovery,
    source: &Source,
    topo: &mut Topology,
    host_databases: bool,
    pci_names: bool,
) -> Vec<String> {
    if !applies_to(source) {
        return Vec::new();
    }
    let wanted = wanted_after_discovery(topo, pci_names);
    let settings = BTreeMap::new();
    let fsroot = fsroot_of(source);
    let root_of = |b: &builtin::Builtin| {
        if host_databases && b.name == builtin::ANNOTATE_PCI_NAMES_NAME {
            None
        } else {
            fsroot
        }
    };
    match Annotators::builtin_rooted(d, root_of, wanted, &settings) {
        Ok((annotators, mut warnings)) => {
            warnings.extend(annotators.annotate(topo).1);
            warnings
        }
        Err(e) => vec![e.to_string()],
    }
}

/// Which built-in components can add something to a discovered topology
/// that keeps no sensor readings, given the files each would be granted:
/// * PCI names, when there are PCI objects to name (and `pci_names`);
/// * DMI infos, when discovery left the root without any and the DMI
///   folder exists.  Linux discovery reads the same `/sys/class/dmi/id`
///   files, as hwloc's Linux backend does; the component adds them to a
///   topology of this machine found another way, such as through CPUID.
fn wanted_after_discovery(
    topo: &Topology,
    pci_names: bool,
) -> impl Fn(&builtin::Builtin, &FileAccess) -> bool + use<> {
    let has_pci = pci_names
        && (!topo.objs_by_type(ObjType::PCIDevice).is_empty()
            || !topo.objs_by_type(ObjType::Bridge).is_empty());
    let has_dmi = topo
        .obj(topo.root())
        .infos
        .iter()
        .any(|i| i.name.starts_with("DMI"));
    move |b: &builtin::Builtin, files: &FileAccess| match b.name {
        builtin::ANNOTATE_PCI_NAMES_NAME => has_pci,
        // Readings are dynamic properties, which a topology does not keep.
        builtin::ANNOTATE_SENSORS_NAME => false,
        builtin::ANNOTATE_DMI_NAME => {
            !has_dmi
                && wloc_linux::DMI_FOLDERS
                    .iter()
                    .any(|dir| files.list_dir(dir).is_ok())
        }
        _ => true,
    }
}

/// How an object is named in property listings: its type and logical
/// index (`Package:0`, `PU:3`, `PCIDev:1`), as hwloc-calc names objects.
pub fn object_label(topo: &Topology, id: wloc_core::ObjId) -> String {
    let o = topo.obj(id);
    let t = match o.obj_type {
        ObjType::PCIDevice => "PCIDev",
        ObjType::OSDevice => "OSDev",
        t => t.xml_name(),
    };
    format!("{t}:{}", o.logical_index())
}

/// A value as a property listing prints it: integers without decimals,
/// others with up to 3.
pub fn format_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_print_compactly() {
        assert_eq!(format_value(45.0), "45");
        assert_eq!(format_value(45.5), "45.5");
        assert_eq!(format_value(1.23456), "1.235");
        assert_eq!(format_value(2.4e9), "2400000000");
        assert_eq!(format_value(-3.25), "-3.25");
    }

    #[test]
    fn only_components_that_can_add_something_run_after_discovery() {
        // A recorded tree with a DMI folder, and one without.
        let base = std::env::temp_dir().join(format!("wloc-annot-wanted-{}", std::process::id()));
        let (with_dmi, without_dmi) = (base.join("with"), base.join("without"));
        std::fs::create_dir_all(with_dmi.join("sys/class/dmi/id")).unwrap();
        std::fs::create_dir_all(without_dmi.join("sys/class/hwmon")).unwrap();
        let names_if = |topo: &Topology, fsroot: &Path, pci_names: bool| {
            let wanted = wanted_after_discovery(topo, pci_names);
            [&builtin::ANNOTATE_DMI, &builtin::ANNOTATE_PCI_NAMES]
                .into_iter()
                .filter(|b| wanted(b, &FileAccess::new(b.roots, Some(fsroot)).unwrap()))
                .map(|b| b.name)
                .collect::<Vec<_>>()
        };
        let names = |topo: &Topology, fsroot: &Path| names_if(topo, fsroot, true);
        let desc = wloc_core::synthetic::parse("pu:2").unwrap();
        let mut topo = desc.build(Topology::new()).unwrap();
        assert_eq!(names(&topo, &with_dmi), [builtin::ANNOTATE_DMI_NAME]);
        assert!(names(&topo, &without_dmi).is_empty());
        topo.root_mut().infos.push(wloc_core::object::Info {
            name: "DMIBoardVendor".into(),
            value: "Vendor".into(),
        });
        assert!(names(&topo, &with_dmi).is_empty());

        let mut topo = desc.build(Topology::new()).unwrap();
        topo.set_all_types_filter(wloc_core::TypeFilter::KeepAll);
        let root = topo.root();
        topo.insert_by_parent(root, wloc_core::Object::new(ObjType::PCIDevice, None))
            .unwrap();
        topo.finish().unwrap();
        assert_eq!(
            names(&topo, &with_dmi),
            [builtin::ANNOTATE_DMI_NAME, builtin::ANNOTATE_PCI_NAMES_NAME]
        );
        // Without libhwloc's pci component, nothing names them.
        assert_eq!(
            names_if(&topo, &with_dmi, false),
            [builtin::ANNOTATE_DMI_NAME]
        );
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn annotations_apply_to_this_machine_and_recordings() {
        assert!(applies_to(&Source::ThisSystem));
        assert!(applies_to(&Source::CpuidThisSystem));
        assert!(applies_to(&Source::Fsroot("/x".into(), None)));
        assert!(!applies_to(&Source::Cpuid("dump".into())));
        assert!(!applies_to(&Source::Synthetic("pu:2".into())));
        assert!(!applies_to(&Source::Xml("a.xml".into())));
    }
}
