//! The opaque `struct hwloc_topology` behind every handle, and the entry
//! prologue that reaches it: [`entry!`] and its [`Handle`].
//!
//! The model ([`wloc_core::Topology`]) is the one source of truth. After
//! every load or change, [`hwloc_topology::sync`] rewrites the C objects
//! (the [`Node`]s of `crate::mirror`) from it.

use std::collections::HashMap;
use std::os::raw::{c_char, c_int, c_uint, c_void};
use std::ptr::null_mut;

use wloc_core::{Bitmap, ObjAttr, ObjId, Topology};
use wloc_input::Source as Input;

use crate::ffi::c_str;
use crate::mirror::*;
use crate::source::Source;
use crate::support::*;
use crate::types::*;

/// `hwloc_topology_t`.
pub type hwloc_topology_t = *mut hwloc_topology;

/// The prologue every exported function taking a topology shares: the
/// [`guard`](crate::ffi::guard) (a panic becomes `$on_panic` with `errno`
/// = `EINVAL`), then the handle as a [`Handle`] whose methods give the
/// topology behind it (`h.loaded()`, ...).
///
/// `entry!(topology, |t: Loaded| body)` (and `LoadedMut`) gives the
/// loaded topology, or returns -1 with `errno` = `EINVAL` for NULL or an
/// unloaded one, hwloc's usual failure; with `|t: Status|` the body
/// returns `Result<(), errno>`, made 0 or -1 with `errno` ([`status`](crate::ffi::status)).
///
/// Only for the body of an exported `unsafe extern "C"` function whose
/// topology argument is hwloc's (see the safety argument below).
macro_rules! entry {
    ($topology:expr_2021, |$t:ident: Loaded| $body:expr_2021) => {
        $crate::handle::entry!($topology, -1, |h| match h.loaded() {
            Some($t) => $body,
            None => $crate::ffi::fail(libc::EINVAL),
        })
    };
    ($topology:expr_2021, |$t:ident: LoadedMut| $body:expr_2021) => {
        $crate::handle::entry!($topology, -1, |h| match h.loaded_mut() {
            Some($t) => $body,
            None => $crate::ffi::fail(libc::EINVAL),
        })
    };
    ($topology:expr_2021, |$t:ident: Status| $body:expr_2021) => {
        $crate::handle::entry!($topology, -1, |h| $crate::ffi::status(
            h.loaded_or_einval()
                .and_then(|$t: &$crate::handle::hwloc_topology| $body)
        ))
    };
    ($topology:expr_2021, $on_panic:expr_2021, |$h:ident| $body:expr_2021) => {
        $crate::ffi::guard($on_panic, || {
            // SAFETY: hwloc's handle contract, which every entry point's
            // C caller accepts (hwloc.h): the topology argument is NULL
            // or a handle from hwloc_topology_init/dup (or an adopted
            // shared-memory one) not yet destroyed, and no other thread
            // calls a function changing it meanwhile (hwloc's thread
            // safety rules). The handle lives for this call only.
            // (Entry points are `unsafe fn`s: rustc may find the block
            // redundant; it is where this argument is made.)
            #[allow(unused_unsafe)]
            let $h = unsafe { $crate::handle::Handle::new($topology) };
            $body
        })
    };
}
pub(crate) use entry;

/// A topology handle as an entry point received it from C, made only by
/// [`entry!`] (whose safety argument covers it): its
/// methods give the topology behind it, or `None` for NULL.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Handle<'a> {
    ptr: hwloc_topology_t,
    _call: std::marker::PhantomData<&'a mut hwloc_topology>,
}

impl<'a> Handle<'a> {
    /// The handle `ptr`.
    ///
    /// # Safety
    /// `ptr` is NULL or a live handle (from `hwloc_topology_init`, `dup`
    /// or an adopted one, not yet destroyed), used by no one else while
    /// the handle lives except through it.
    pub(crate) unsafe fn new(ptr: hwloc_topology_t) -> Self {
        Handle {
            ptr,
            _call: std::marker::PhantomData,
        }
    }

    /// The pointer, for the functions that take one.
    pub(crate) fn raw(self) -> hwloc_topology_t {
        self.ptr
    }

    /// Takes the topology back from C (`hwloc_topology_destroy`; `None`
    /// for NULL): the handle is not used after.
    pub(crate) fn into_box(self) -> Option<Box<hwloc_topology>> {
        if self.ptr.is_null() {
            return None;
        }
        // SAFETY: a live handle, which init/dup/adopt made with
        // Box::into_raw; destroying it is the caller's last use (hwloc's
        // contract), so the box owns it alone.
        Some(unsafe { Box::from_raw(self.ptr) })
    }

    /// The topology (`None` for NULL).
    pub(crate) fn get(self) -> Option<&'a hwloc_topology> {
        // SAFETY: NULL or live, as `new` requires.
        unsafe { self.ptr.as_ref() }
    }

    /// The topology, mutably (`None` for NULL).
    pub(crate) fn get_mut(self) -> Option<&'a mut hwloc_topology> {
        // SAFETY: NULL or live and not otherwise used, as `new` requires.
        unsafe { self.ptr.as_mut() }
    }

    /// The loaded topology (`None` for NULL or not loaded).
    pub(crate) fn loaded(self) -> Option<&'a hwloc_topology> {
        self.get().filter(|t| t.loaded)
    }

    /// The loaded topology, or `EINVAL` (for the entries that return
    /// hwloc's error through a `Result`).
    pub(crate) fn loaded_or_einval(self) -> Result<&'a hwloc_topology, c_int> {
        self.loaded().ok_or(libc::EINVAL)
    }

    /// The loaded topology, mutably. What the program changed in place
    /// in the C objects is taken into the model first
    /// ([`hwloc_topology::pull_from_c`]), before the caller changes the
    /// model and mirrors it back.
    pub(crate) fn loaded_mut(self) -> Option<&'a mut hwloc_topology> {
        let t = self.get_mut().filter(|t| t.loaded)?;
        t.pull_from_c();
        Some(t)
    }
}

/// `HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED`.
pub const FLAG_INCLUDE_DISALLOWED: u64 = 1 << 0;
/// `HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM`.
pub const FLAG_IS_THISSYSTEM: u64 = 1 << 1;
/// `HWLOC_TOPOLOGY_FLAG_THISSYSTEM_ALLOWED_RESOURCES`.
pub const FLAG_THISSYSTEM_ALLOWED_RESOURCES: u64 = 1 << 2;
/// `HWLOC_TOPOLOGY_FLAG_IMPORT_SUPPORT`.
pub const FLAG_IMPORT_SUPPORT: u64 = 1 << 3;
/// `HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_CPUBINDING`.
pub const FLAG_RESTRICT_TO_CPUBINDING: u64 = 1 << 4;
/// `HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_MEMBINDING`.
pub const FLAG_RESTRICT_TO_MEMBINDING: u64 = 1 << 5;
/// `HWLOC_TOPOLOGY_FLAG_DONT_CHANGE_BINDING`.
pub const FLAG_DONT_CHANGE_BINDING: u64 = 1 << 6;
/// `HWLOC_TOPOLOGY_FLAG_NO_DISTANCES`.
pub const FLAG_NO_DISTANCES: u64 = 1 << 7;
/// `HWLOC_TOPOLOGY_FLAG_NO_MEMATTRS`.
pub const FLAG_NO_MEMATTRS: u64 = 1 << 8;
/// `HWLOC_TOPOLOGY_FLAG_NO_CPUKINDS`.
pub const FLAG_NO_CPUKINDS: u64 = 1 << 9;
/// Every topology flag hwloc 2.9 defines.
pub(crate) const ALL_FLAGS: u64 = (1 << 10) - 1;

/// Called for every object at export, to add its userdata
/// (`hwloc_topology_set_userdata_export_callback`).
pub(crate) type ExportCallback =
    unsafe extern "C" fn(reserved: *mut c_void, topology: hwloc_topology_t, obj: hwloc_obj_t);
/// Called for every userdata element at import
/// (`hwloc_topology_set_userdata_import_callback`).
pub(crate) type ImportCallback = unsafe extern "C" fn(
    topology: hwloc_topology_t,
    obj: hwloc_obj_t,
    name: *const c_char,
    buffer: *const c_void,
    length: usize,
);

/// `struct hwloc_topology`: opaque to C.
pub struct hwloc_topology {
    /// Before load: an empty model holding the type filters. After: the
    /// loaded topology.
    pub(crate) model: Topology,
    pub(crate) loaded: bool,
    pub(crate) flags: u64,
    pub(crate) source: Source,
    /// The process binding functions act on by default
    /// (`hwloc_topology_set_pid`; 0 = this process).
    pub(crate) pid: libc::pid_t,
    /// Components named by `hwloc_topology_set_components(BLACKLIST)`.
    pub(crate) blacklist: Vec<String>,
    pub(crate) nodes: HashMap<ObjId, Box<Node>>,
    /// Group objects allocated and not inserted yet (boxed: C holds
    /// their addresses while the list grows).
    #[allow(clippy::vec_box)]
    pub(crate) pending: Vec<Box<Node>>,
    pub(crate) by_addr: HashMap<usize, ObjId>,
    pub(crate) support_parts: Box<(
        hwloc_topology_discovery_support,
        hwloc_topology_cpubind_support,
        hwloc_topology_membind_support,
        hwloc_topology_misc_support,
    )>,
    pub(crate) support: hwloc_topology_support,
    pub(crate) userdata: *mut c_void,
    pub(crate) export_cb: Option<ExportCallback>,
    pub(crate) import_cb: Option<ImportCallback>,
    /// `HWLOC_XML_USERDATA_NOT_DECODED` (hwloc's tools set it to copy
    /// userdata through): the callbacks see userdata as it is written,
    /// names prefixed with `base64`/`normal`.
    pub(crate) userdata_not_decoded: bool,
    /// Topology-wide cpusets and nodesets handed out by
    /// `hwloc_topology_get_*set` (complete, topology, allowed).
    pub(crate) sets: [hwloc_bitmap_t; 6],
    /// C copies handed out by pointer (names, initiator cpusets, CPU kind
    /// infos), kept as long as the topology.
    pub(crate) kept: crate::kept::Kept,
}

impl hwloc_topology {
    pub(crate) fn new() -> Box<hwloc_topology> {
        let mut t = Box::new(hwloc_topology {
            model: Topology::new(),
            loaded: false,
            flags: 0,
            source: Source::Default,
            pid: 0,
            blacklist: Vec::new(),
            nodes: HashMap::new(),
            pending: Vec::new(),
            by_addr: HashMap::new(),
            support_parts: Box::default(),
            support: hwloc_topology_support {
                discovery: null_mut(),
                cpubind: null_mut(),
                membind: null_mut(),
                misc: null_mut(),
            },
            userdata: null_mut(),
            export_cb: None,
            import_cb: None,
            userdata_not_decoded: false,
            sets: [null_mut(); 6],
            kept: Default::default(),
        });
        t.support = hwloc_topology_support {
            discovery: &mut t.support_parts.0,
            cpubind: &mut t.support_parts.1,
            membind: &mut t.support_parts.2,
            misc: &mut t.support_parts.3,
        };
        // The root Machine exists before a load, as in hwloc.
        t.sync();
        t
    }

    /// The model id of a C object of this topology; `None` for NULL, an
    /// object of another topology or a pending Group.
    pub(crate) fn id_of(&self, obj: *const hwloc_obj) -> Option<ObjId> {
        self.by_addr.get(&(obj as usize)).copied()
    }

    /// The C object of a model id (NULL if the object is gone).
    pub(crate) fn ptr_of(&self, id: ObjId) -> *mut hwloc_obj {
        self.nodes
            .get(&id)
            .map_or(null_mut(), |n| &n.obj as *const hwloc_obj as *mut hwloc_obj)
    }

    /// Takes into the model what programs changed in place in the C
    /// objects (infos, subtype, name, a NUMA node's local memory):
    /// hwloc's tools edit these fields
    /// directly (`hwloc-annotate` frees and replaces them), and hwloc
    /// exports, compares and copies what the fields hold.
    pub(crate) fn pull_from_c(&mut self) {
        let ids: Vec<ObjId> = self.nodes.keys().copied().collect();
        for id in ids {
            self.pull_node(id);
        }
    }

    /// [`pull_from_c`](Self::pull_from_c) for one object.
    pub(crate) fn pull_node(&mut self, id: ObjId) {
        let (Some(n), Some(_)) = (self.nodes.get(&id), self.model.get(id)) else {
            return;
        };
        let infos = n.infos_as_model();
        // SAFETY: malloc'ed NUL-terminated strings or NULL.
        let subtype = unsafe { c_str(n.obj.subtype) }.map(|s| s.into_owned());
        // SAFETY: as above.
        let name = unsafe { c_str(n.obj.name) }.map(|s| s.into_owned());
        if infos != wloc_xml::v2_infos(&self.model, id) {
            if id == self.model.root() {
                // The C root shows the topology's infos after its own.
                self.model.infos.clear();
            }
            self.model.obj_mut(id).infos = infos;
        }
        if subtype != self.model.obj(id).subtype {
            self.model.obj_mut(id).subtype = subtype;
        }
        if name != self.model.obj(id).name {
            self.model.obj_mut(id).name = name;
        }
        // SAFETY: a NUMA node's attr holds its numanode member.
        let local_memory = unsafe { n.attr.numanode.local_memory };
        if let ObjAttr::Numa(a) = &self.model.obj(id).attr
            && a.local_memory != local_memory
            && let ObjAttr::Numa(a) = &mut self.model.obj_mut(id).attr
        {
            a.local_memory = local_memory;
        }
    }

    /// Rewrites the C mirror from the model: objects that survived keep
    /// their address and userdata, new ones are allocated, removed ones
    /// freed.
    pub(crate) fn sync(&mut self) {
        let me = self as *mut hwloc_topology;
        let m = &self.model;
        let live = m.iter_dfs();
        let mut old = std::mem::take(&mut self.nodes);
        let mut nodes = HashMap::with_capacity(live.len());
        for &id in &live {
            let mut n = old.remove(&id).unwrap_or_else(|| Node::new(Some(id)));
            n.fill(m.obj(id), &wloc_xml::v2_infos(m, id));
            nodes.insert(id, n);
        }
        drop(old);
        let ptr = |id: ObjId| -> *mut hwloc_obj {
            nodes
                .get(&id)
                .map_or(null_mut(), |n| &n.obj as *const hwloc_obj as *mut hwloc_obj)
        };
        // Links in a second pass: every node has its final address now.
        let mut links = Vec::with_capacity(live.len());
        for &id in &live {
            let o = m.obj(id);
            let lists = [
                o.children(),
                o.memory_children(),
                o.io_children(),
                o.misc_children(),
            ];
            let level = m.level(o.depth());
            let li = o.logical_index() as usize;
            let cousin = |i: Option<usize>| {
                i.and_then(|i| level.get(i))
                    .filter(|&&c| c != id || level.len() == 1)
                    .map_or(null_mut(), |&c| ptr(c))
            };
            let same_level = level.get(li) == Some(&id);
            let (next_cousin, prev_cousin) = if same_level {
                (cousin(li.checked_add(1)), cousin(li.checked_sub(1)))
            } else {
                (null_mut(), null_mut())
            };
            let parent = o.parent();
            let (prev_sibling, next_sibling) = parent
                .map(|p| {
                    let po = m.obj(p);
                    let list: &[ObjId] = match o.kind() {
                        wloc_core::ObjKind::Normal => po.children(),
                        wloc_core::ObjKind::Memory => po.memory_children(),
                        wloc_core::ObjKind::Io => po.io_children(),
                        wloc_core::ObjKind::Misc => po.misc_children(),
                    };
                    let r = o.sibling_rank() as usize;
                    let at = |i: Option<usize>| {
                        i.and_then(|i| list.get(i)).map_or(null_mut(), |&c| ptr(c))
                    };
                    (at(r.checked_sub(1)), at(r.checked_add(1)))
                })
                .unwrap_or((null_mut(), null_mut()));
            links.push((
                id,
                parent.map_or(null_mut(), ptr),
                next_cousin,
                prev_cousin,
                next_sibling,
                prev_sibling,
                lists.map(|l| l.iter().map(|&c| ptr(c)).collect::<Vec<_>>()),
            ));
        }
        let mut by_addr = HashMap::with_capacity(live.len());
        for (id, parent, nc, pc, ns, ps, [children, memory, io, misc]) in links {
            let n = nodes.get_mut(&id).expect("node made above");
            n.topo = me.cast();
            n.obj.parent = parent;
            n.obj.next_cousin = nc;
            n.obj.prev_cousin = pc;
            n.obj.next_sibling = ns;
            n.obj.prev_sibling = ps;
            n.obj.arity = children.len() as c_uint;
            n.obj.first_child = children.first().copied().unwrap_or(null_mut());
            n.obj.last_child = children.last().copied().unwrap_or(null_mut());
            n.children = children;
            n.obj.children = if n.children.is_empty() {
                null_mut()
            } else {
                n.children.as_mut_ptr()
            };
            n.obj.memory_arity = memory.len() as c_uint;
            n.obj.memory_first_child = memory.first().copied().unwrap_or(null_mut());
            n.obj.io_arity = io.len() as c_uint;
            n.obj.io_first_child = io.first().copied().unwrap_or(null_mut());
            n.obj.misc_arity = misc.len() as c_uint;
            n.obj.misc_first_child = misc.first().copied().unwrap_or(null_mut());
            by_addr.insert(&n.obj as *const hwloc_obj as usize, id);
        }
        self.nodes = nodes;
        self.by_addr = by_addr;
        let sets: [Option<&Bitmap>; 6] = [
            m.complete_cpuset().bitmap().into(),
            m.cpuset().bitmap().into(),
            Some(m.allowed_cpuset.bitmap()),
            m.complete_nodeset().bitmap().into(),
            m.nodeset().bitmap().into(),
            Some(m.allowed_nodeset.bitmap()),
        ];
        for (slot, v) in self.sets.iter_mut().zip(sets) {
            Node::set_bitmap(slot, v);
        }
    }

    /// Fills the support structure after a load.
    pub(crate) fn fill_support(&mut self) {
        let m = &self.model;
        let xml = matches!(
            self.source,
            Source::Input(Input::Xml(_)) | Source::XmlBuffer(_)
        );
        let d = &mut self.support_parts.0;
        *d = hwloc_topology_discovery_support::default();
        // hwloc's Linux discovery says what it found (no NUMA support
        // without NUMA nodes in sysfs, say), also from a recorded root;
        // the Linux component records the same names.  An image adopted
        // as this machine stands for that discovery.
        let linux_discovery = match &self.source {
            Source::Input(Input::Fsroot(..)) => true,
            Source::Input(Input::Image(_)) => m.is_thissystem,
            s => s.is_this_system(),
        };
        if linux_discovery {
            for name in &m.support {
                if let Some(slot) = name
                    .strip_prefix("discovery.")
                    .and_then(|f| discovery_field(d, f))
                {
                    *slot = 1;
                }
            }
        } else {
            // As hwloc's synthetic and XML backends, whatever the sizes;
            // an XML document records the allowed sets.
            d.pu = 1;
            d.numa = 1;
            d.numa_memory = 1;
            d.disallowed_pu = u8::from(xml);
            d.disallowed_numa = u8::from(xml);
            d.cpukind_efficiency = u8::from(!xml && m.cpukinds.iter().any(|k| k.efficiency >= 0));
        }
        self.support_parts.1 = hwloc_topology_cpubind_support::default();
        self.support_parts.2 = hwloc_topology_membind_support::default();
        self.support_parts.3 = hwloc_topology_misc_support::default();
        if m.is_thissystem {
            crate::support::fill_support(&mut self.support_parts.1, &mut self.support_parts.2);
        } else if xml && self.flags & FLAG_IMPORT_SUPPORT != 0 {
            // As hwloc: only an XML document records support.
            self.import_support();
        }
        self.support_changed();
    }

    /// Records the support structure's flags in the model, where an XML
    /// export finds them (after a change of the structure).
    pub(crate) fn support_changed(&mut self) {
        self.model.support = self.support_names();
    }

    /// The names (`part.field`, hwloc's order) of the support flags set,
    /// which is what an XML export writes, as hwloc writes its structure.
    pub(crate) fn support_names(&mut self) -> Vec<String> {
        let (d, c, mb, _) = &mut *self.support_parts;
        wloc_xml::SUPPORT_ORDER
            .iter()
            .filter(|name| {
                let Some((part, field)) = name.split_once('.') else {
                    return false;
                };
                let slot = match part {
                    "discovery" => discovery_field(d, field),
                    "cpubind" => cpubind_field(c, field),
                    "membind" => membind_field(mb, field),
                    _ => None,
                };
                slot.is_some_and(|v| *v != 0)
            })
            .map(|n| n.to_string())
            .collect()
    }

    /// `HWLOC_TOPOLOGY_FLAG_IMPORT_SUPPORT`: the support recorded in XML.
    pub(crate) fn import_support(&mut self) {
        let names = self.model.support.clone();
        // As hwloc: the recorded support replaces the whole structure, and
        // a document that records none (hwloc 1.x documents, or a version 2
        // one written without it) leaves every flag unset; the marker
        // `custom.exported_support` says that the writer recorded it.
        self.support_parts.3.imported_support =
            u8::from(names.iter().any(|n| n == "custom.exported_support"));
        self.support_parts.0 = hwloc_topology_discovery_support::default();
        let (d, c, mb) = (
            &mut self.support_parts.0,
            &mut self.support_parts.1,
            &mut self.support_parts.2,
        );
        for n in &names {
            let Some((part, field)) = n.split_once('.') else {
                continue;
            };
            let slot: Option<&mut u8> = match part {
                "discovery" => discovery_field(d, field),
                "cpubind" => cpubind_field(c, field),
                "membind" => membind_field(mb, field),
                _ => None,
            };
            if let Some(s) = slot {
                *s = 1;
            }
        }
    }
}

/// [`Handle::get_mut`], for what has a handle outside an entry's
/// prologue (tests).
///
/// # Safety
/// As [`Handle::new`].
#[cfg(test)]
pub(crate) unsafe fn topo_mut<'a>(t: hwloc_topology_t) -> Option<&'a mut hwloc_topology> {
    // SAFETY: see above.
    unsafe { Handle::new(t) }.get_mut()
}

/// [`Handle::loaded`], for what has a handle outside an entry's
/// prologue (tests).
///
/// # Safety
/// As [`Handle::new`].
pub(crate) unsafe fn loaded<'a>(t: hwloc_topology_t) -> Option<&'a hwloc_topology> {
    // SAFETY: see above.
    unsafe { Handle::new(t) }.loaded()
}
