//! `hwloc_topology_load`: reading the chosen source into the model,
//! hwloc 2's presentation of it, then the C mirror.

use std::os::raw::{c_int, c_void};

use wloc_core::{ObjId, Topology};
use wloc_input::Source as Input;
use wloc_input::Unnamed;
use wloc_input::discover::Target;

use crate::ffi::{fail, verbose};
use crate::handle::*;
use crate::hwloc2::{hwloc2_infos, hwloc2_memory_tiers, hwloc2_pci_domains};
use crate::source::*;

/// Why a load failed: the message, kept for `HWLOC_DEBUG_VERBOSE`-style
/// diagnostics, and hwloc's `errno`.
pub(crate) struct LoadFailure(pub(crate) String);

impl hwloc_topology {
    pub(crate) fn load(&mut self) -> Result<(), LoadFailure> {
        let mut base = self.model.clone();
        base.include_disallowed = self.flags & FLAG_INCLUDE_DISALLOWED != 0;
        // Read when the topology is loaded, as hwloc's XML reader does
        // (tools set it after creating their topology).
        self.userdata_not_decoded = wloc_trust::env::var("HWLOC_XML_USERDATA_NOT_DECODED")
            .and_then(|v| v.trim().parse::<i64>().ok())
            .is_some_and(|v| v != 0);
        // An unnamed source is chosen as the command chooses it
        // (wloc-input); only what the input variables chose falls back
        // to this system when it cannot be read.
        let (source, from_env) = match &self.source {
            Source::Default => match wloc_input::resolve_unnamed(X86_BACKEND) {
                Unnamed::ByComponents(s) => (Source::Input(s), false),
                Unnamed::ByEnvironment(s) => (Source::Input(s), true),
            },
            s => (s.clone(), false),
        };
        // A topology read from XML or a synthetic description and said to
        // be this system's may take the process's allowed resources from
        // its Linux cgroup, as hwloc's hook does when asked.
        let cgroup = self.allowed_resources_asked(&source).and_then(|fsroot| {
            let a = wloc_linux::allowed_resources(&wloc_linux::NativeFs::new(fsroot))?;
            base.allowed_cpuset = a.cpuset;
            base.allowed_nodeset = a.nodeset;
            Some(a.cgroup)
        });
        let published = self.published_topology(&source, from_env, &base);
        let (source, mut m) =
            match published.map_or_else(|| self.read_source(&source, base.clone()), Ok) {
                Ok(m) => (source, m),
                // As hwloc, an input named by a variable that cannot be read
                // leaves this machine's discovery.
                Err(LoadFailure(msg)) if from_env && !source.is_this_system() => {
                    verbose(&format!(
                        "ignoring the topology the environment names: {msg}"
                    ));
                    let m = self.read_source(&Source::THIS_SYSTEM, base)?;
                    (Source::THIS_SYSTEM, m)
                }
                Err(e) => return Err(e),
            };
        if let Some(name) = cgroup {
            m.infos.retain(|i| i.name != "LinuxCgroup");
            m.infos.push(wloc_core::object::Info {
                name: "LinuxCgroup".into(),
                value: name,
            });
        }
        let thissystem_env = wloc_trust::env::var("HWLOC_THISSYSTEM");
        m.is_thissystem = match thissystem_env.as_deref() {
            Some(v) if !v.is_empty() => v.parse::<i64>().unwrap_or(0) != 0,
            _ => {
                source.is_this_system()
                    || (from_env && matches!(source, Source::Input(Input::Image(_))))
                    || self.flags & FLAG_IS_THISSYSTEM != 0
            }
        };
        // Recorded support is kept only when asked for, as in hwloc.
        let launcher_image = from_env && matches!(source, Source::Input(Input::Image(_)));
        let recorded = matches!(
            source,
            Source::Input(Input::Xml(_) | Input::Image(_)) | Source::XmlBuffer(_)
        ) && !launcher_image;
        if recorded && self.flags & FLAG_IMPORT_SUPPORT == 0 {
            m.support.clear();
        }
        if self.flags & FLAG_NO_DISTANCES != 0 {
            m.distances.clear();
        }
        if self.flags & FLAG_NO_CPUKINDS != 0 {
            m.cpukinds.clear();
        }
        if self.flags & FLAG_NO_MEMATTRS != 0 {
            for a in &mut m.memattrs {
                a.values.clear();
            }
        }
        // hwloc adds its own infos when it discovers, not when it imports;
        // a launcher's image (WLOC_IMAGE) stands for this machine's
        // discovery.
        let imported = matches!(source, Source::Input(Input::Xml(_)) | Source::XmlBuffer(_))
            || (matches!(source, Source::Input(Input::Image(_))) && !launcher_image);
        if launcher_image {
            wloc_xml::hwloc2::add_x86_cache_infos(&mut m);
        }
        if !imported {
            hwloc2_pci_domains(&mut m);
        }
        hwloc2_infos(&mut m, !imported);
        if self.flags & FLAG_NO_MEMATTRS == 0 {
            let xml = matches!(source, Source::Input(Input::Xml(_)) | Source::XmlBuffer(_));
            if xml || matches!(source, Source::Input(Input::Synthetic(_))) {
                hwloc2_memory_tiers(&mut m, xml);
            }
        }
        self.source = source;
        self.model = m;
        self.loaded = true;
        if self.flags & (FLAG_RESTRICT_TO_CPUBINDING | FLAG_RESTRICT_TO_MEMBINDING) != 0
            && self.model.is_thissystem
        {
            crate::bind::restrict_to_binding(self);
        }
        self.sync();
        self.fill_support();
        self.import_userdata();
        Ok(())
    }

    /// This machine from the image `wloc service` publishes, when nothing
    /// named another source or chose the backends (`HWLOC_COMPONENTS`,
    /// `HWLOC_FSROOT`, a blacklist), and the image is trusted and current
    /// (`wloc_published`); `None` (and the reason, when debugging is asked
    /// for) otherwise, and this machine is discovered.
    fn published_topology(
        &self,
        source: &Source,
        from_env: bool,
        base: &Topology,
    ) -> Option<Topology> {
        let this_machine = from_env
            && *source == Source::Input(Input::ThisSystem)
            && self.blacklist.is_empty()
            && wloc_trust::env::var_os("HWLOC_FSROOT").is_none_or(|v| v.is_empty());
        if !this_machine {
            return None;
        }
        match wloc_published::adopt(base.clone(), self.other_process()) {
            Ok(mut m) => {
                // As after this machine's discovery (read_source).
                wloc_xml::hwloc2::add_x86_cache_infos(&mut m);
                Some(m)
            }
            Err(why) => {
                wloc_published::tell_why_not(&why);
                None
            }
        }
    }

    /// The process `hwloc_topology_set_pid` named, unless it is none or
    /// this one.
    fn other_process(&self) -> Option<u32> {
        u32::try_from(self.pid)
            .ok()
            .filter(|&p| p != 0 && p != std::process::id())
    }

    /// For a source hwloc reads without its Linux backend (XML, a
    /// synthetic description) and a topology said to be this system's
    /// (`HWLOC_THISSYSTEM`, else `HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM`), when
    /// `HWLOC_TOPOLOGY_FLAG_THISSYSTEM_ALLOWED_RESOURCES` or
    /// `HWLOC_THISSYSTEM_ALLOWED_RESOURCES` asks for the allowed resources:
    /// the file system root they are read from (`HWLOC_FSROOT`, else `/`).
    fn allowed_resources_asked(&self, source: &Source) -> Option<std::ffi::OsString> {
        if !matches!(
            source,
            Source::Input(Input::Xml(_) | Input::Synthetic(_)) | Source::XmlBuffer(_)
        ) {
            return None;
        }
        let set = |n: &str| wloc_trust::env::var(n).filter(|v| !v.is_empty());
        let nonzero = |v: String| v.trim().parse::<i64>().unwrap_or(0) != 0;
        let thissystem = match set("HWLOC_THISSYSTEM") {
            Some(v) => nonzero(v),
            None => self.flags & FLAG_IS_THISSYSTEM != 0,
        };
        let asked = self.flags & FLAG_THISSYSTEM_ALLOWED_RESOURCES != 0
            || set("HWLOC_THISSYSTEM_ALLOWED_RESOURCES").is_some_and(nonzero);
        let fsroot = wloc_trust::env::var_os("HWLOC_FSROOT").filter(|v| !v.is_empty());
        (thissystem && asked).then(|| fsroot.unwrap_or_else(|| "/".into()))
    }

    /// Reads the topology of a source into `base` (whose filters and flags
    /// the program set).
    pub(crate) fn read_source(
        &self,
        source: &Source,
        base: Topology,
    ) -> Result<Topology, LoadFailure> {
        let err = |e: &dyn std::fmt::Display| LoadFailure(e.to_string());
        let noos = source.is_this_system() && self.blacklist.iter().any(|b| b == "linux");
        // hwloc's pci component names PCI devices; HWLOC_COMPONENTS or the
        // program's blacklist may leave it out.
        let pci_names =
            wloc_input::component_enabled("pci") && !self.blacklist.iter().any(|b| b == "pci");
        Ok(match source {
            Source::Input(Input::Xml(p)) => {
                wloc_xml::import_file_as_hwloc2(p, base).map_err(|e| err(&e))?
            }
            Source::XmlBuffer(s) => wloc_xml::import_str_as_hwloc2(s, base).map_err(|e| err(&e))?,
            Source::Input(Input::Synthetic(d)) => wloc_core::synthetic::parse(d)
                .map_err(|e| err(&e))?
                .build(base)
                .map_err(|e| err(&e))?,
            // Read here, as any image: the discovery module is not loaded.
            Source::Input(Input::Image(p)) => wloc_image::adopt(p)
                .and_then(|img| img.to_topology_into(base))
                .map_err(|e| err(&e))?,
            Source::Input(Input::Fsroot(p, cpuid)) => {
                let mut m = discovered(Target::Fsroot(p.clone(), cpuid.clone()), &base, pci_names)?;
                // The x86 backend ran after (or before) Linux: its caches
                // carry hwloc 2's `Inclusive` infos.
                if cpuid.is_some() {
                    wloc_xml::hwloc2::add_x86_cache_infos(&mut m);
                }
                m
            }
            Source::Input(Input::Cpuid(p)) => {
                let mut m = discovered(Target::CpuidDump(p.clone()), &base, pci_names)?;
                wloc_xml::hwloc2::add_x86_cache_infos(&mut m);
                m
            }
            Source::Input(Input::ThisSystem | Input::CpuidThisSystem) | Source::Default if noos => {
                let mut m = wloc_core::synthetic::parse(&format!("pu:{}", online_pus()))
                    .map_err(|e| err(&e))?
                    .build(base)
                    .map_err(|e| err(&e))?;
                // hwloc's noos backend names no backend.
                m.infos.clear();
                m
            }
            Source::Input(Input::ThisSystem | Input::CpuidThisSystem) | Source::Default => {
                let mut m = match self.other_process() {
                    // The Linux component reads this process's cgroup: the
                    // whole machine is discovered, then restricted to what
                    // the other process's cgroup allows, as hwloc's Linux
                    // backend does after hwloc_topology_set_pid.
                    Some(pid) => {
                        let include_disallowed = base.include_disallowed;
                        let mut whole = base;
                        whole.include_disallowed = true;
                        let m = discovered(Target::ThisSystem, &whole, pci_names)?;
                        wloc_published::for_process(m, include_disallowed, Some(pid))
                            .map_err(|e| err(&e))?
                    }
                    None => discovered(Target::ThisSystem, &base, pci_names)?,
                };
                wloc_xml::hwloc2::add_x86_cache_infos(&mut m);
                m
            }
        })
    }

    /// Hands every `<userdata>` element read to the import callback, then
    /// forgets them: as in hwloc, the application owns what it imported.
    pub(crate) fn import_userdata(&mut self) {
        let ids: Vec<ObjId> = self.model.iter_dfs();
        let Some(cb) = self.import_cb else {
            for id in ids {
                self.model.obj_mut(id).userdata.clear();
            }
            return;
        };
        let handle = self as *mut hwloc_topology;
        for id in ids {
            let uds: Vec<_> = self.model.obj_mut(id).userdata.drain(..).collect();
            let obj = self.ptr_of(id);
            for u in uds {
                let (name, mut data, len) = if self.userdata_not_decoded {
                    // As written: the encoding in the name, the text raw,
                    // the length attribute as is.
                    let name = format!(
                        "{}{}",
                        if u.base64 { "base64" } else { "normal" },
                        u.name
                            .as_deref()
                            .map_or("-anon".to_string(), |n| format!(":{n}"))
                    );
                    let len = usize::try_from(u.length).unwrap_or(0);
                    let mut data = u.content.into_bytes();
                    // The callback may read `len` bytes: never past the text.
                    let len = len.min(data.len());
                    data.push(0);
                    (Some(name), data, len)
                } else {
                    let mut data = if u.base64 {
                        crate::export::base64_decode(&u.content).unwrap_or_default()
                    } else {
                        u.content.into_bytes()
                    };
                    let len = usize::try_from(u.length)
                        .unwrap_or(data.len())
                        .min(data.len());
                    // hwloc's buffers end with a NUL past the data.
                    data.truncate(len);
                    data.push(0);
                    (u.name.clone(), data, len)
                };
                data.shrink_to_fit();
                let name =
                    name.map(|n| std::ffi::CString::new(n.replace('\0', "")).unwrap_or_default());
                // SAFETY: the application's callback, called as hwloc does
                // (the buffer is only valid during the call).
                unsafe {
                    cb(
                        handle,
                        obj,
                        name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr()),
                        data.as_ptr() as *const c_void,
                        len,
                    )
                };
            }
        }
    }
}

/// A new loaded handle around `model` (topologies made by the library:
/// shmem adoption, diff application on copies).
pub(crate) fn new_loaded(model: Topology, source: Source, flags: u64) -> hwloc_topology_t {
    let mut t = hwloc_topology::new();
    t.model = model;
    t.source = source;
    t.flags = flags;
    t.loaded = true;
    t.sync();
    t.fill_support();
    Box::into_raw(t)
}

/// Discovers `target` in the discovery module (the sandboxed components,
/// then the built-in annotations `wloc ls` runs after discovery: PCI
/// names, as hwloc's PCI backend gives them; DMI infos), the annotations'
/// warnings only shown when asked for.
pub(crate) fn discovered(
    target: Target,
    base: &Topology,
    pci_names: bool,
) -> Result<Topology, LoadFailure> {
    let (m, warnings) = crate::discover::discover(target, base, pci_names).map_err(LoadFailure)?;
    for w in warnings {
        verbose(&format!("annotation skipped: {w}"));
    }
    Ok(m)
}

/// The number of online processors (hwloc's fallback discovery).
pub(crate) fn online_pus() -> usize {
    wloc_bind::raw::online_cpus()
}

/// `hwloc_topology_load`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_topology_load(topology: hwloc_topology_t) -> c_int {
    entry!(topology, -1, |h| {
        let Some(t) = h.get_mut() else {
            return fail(libc::EINVAL);
        };
        if t.loaded {
            return fail(libc::EBUSY);
        }
        match t.load() {
            Ok(()) => 0,
            Err(LoadFailure(msg)) => {
                verbose(&format!("hwloc_topology_load failed: {msg}"));
                fail(libc::EINVAL)
            }
        }
    })
}
