//! The opaque `struct hwloc_topology`, the C mirror of the model's objects,
//! and the topology's life: init, configuration, load, dup, check,
//! destroy.
//!
//! The model ([`wloc_core::Topology`]) is the one source of truth. After
//! every load or change, [`hwloc_topology::sync`] rewrites the C objects
//! from it. Each C object lives in its own allocation keyed by the model's
//! object id, so an object that survives a change keeps its address and
//! its `userdata`, as in hwloc.

use std::collections::{BTreeSet, HashMap};
use std::os::raw::{c_char, c_int, c_uint, c_ulong, c_void};
use std::path::PathBuf;
use std::ptr::null_mut;
use std::sync::Mutex;

use wloc_core::object::BridgeUpstream;
use wloc_core::topology::TypeFilter;
use wloc_core::{Bitmap, ObjAttr, ObjId, ObjType, Object, Topology};

use wloc_input::discover::Target;
use wloc_input::Source as Input;

use crate::bitmap::hwloc_bitmap_s;
use crate::ffi::{c_str, c_strdup, fail, guard, set_errno};
use crate::handle::Handle;
use crate::types::*;

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

/// Where `hwloc_topology_load` reads the topology from: one of wloc's
/// sources (the enum the `wloc` command and the discovery module share),
/// or what only the C API names.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Source {
    /// Not chosen: the environment, else this system.
    Default,
    /// `hwloc_topology_set_xmlbuffer`.
    XmlBuffer(String),
    /// `hwloc_topology_set_xml` (a file), `hwloc_topology_set_synthetic`,
    /// `hwloc_topology_set_fsroot` (`/`: this system), or what the
    /// environment names: an image (`WLOC_IMAGE`), a CPUID dump
    /// (`HWLOC_CPUID_PATH`), ...
    Input(Input),
}

impl Source {
    /// This system, discovered by the sandboxed components.
    const THIS_SYSTEM: Source = Source::Input(Input::ThisSystem);

    /// Whether the source is this system.
    fn is_this_system(&self) -> bool {
        // The C API names no CPUID-only discovery of this machine; if it
        // came, it would be this machine's discovery all the same.
        matches!(
            self,
            Source::Input(Input::ThisSystem | Input::CpuidThisSystem)
        )
    }
}

/// The C view of one object: hwloc's `struct hwloc_obj` first (so a
/// `hwloc_obj_t` is the address of its node), then what it points to.
#[repr(C)]
pub(crate) struct Node {
    pub(crate) obj: hwloc_obj,
    attr: hwloc_obj_attr_u,
    /// The model's id; `None` for a Group allocated by
    /// `hwloc_topology_alloc_group_object` and not inserted yet.
    pub(crate) id: Option<ObjId>,
    /// The topology holding the object: functions that take only an
    /// object (`hwloc_obj_add_info`) reach the model through it.
    pub(crate) topo: *mut hwloc_topology,
    children: Vec<*mut hwloc_obj>,
    page_types: Vec<hwloc_memory_page_type_s>,
}

/// The addresses of the objects this library allocated and has not freed
/// yet. An entry that takes an object alone (`hwloc_obj_add_info`) has
/// only this to tell a library object (a [`Node`], which it may read past
/// the `struct hwloc_obj`) from a program's own `struct hwloc_obj`, which
/// must not be read past its end.
static LIVE_NODES: Mutex<BTreeSet<usize>> = Mutex::new(BTreeSet::new());

fn live_nodes() -> std::sync::MutexGuard<'static, BTreeSet<usize>> {
    LIVE_NODES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Writes zeros over every byte of `v`, padding included, as hwloc's
/// `memset`/`calloc` do: field assignments leave padding undefined, and
/// C reads a union's bytes through whichever member it names.
///
/// # Safety
/// `T` is plain C data (integers, floats, raw pointers) for which all-zero
/// bytes are a valid value.
pub(crate) unsafe fn zero_in_place<T>(v: &mut T) {
    // SAFETY: one T at a valid, exclusive place; all-zero is valid for T.
    unsafe { std::ptr::write_bytes(v as *mut T, 0, 1) }
}

impl Node {
    fn new(id: Option<ObjId>) -> Box<Node> {
        let mut n = Box::new(Node {
            // SAFETY: every field of hwloc_obj is an integer or a raw
            // pointer, for which all-zero is valid (NULL / 0).
            obj: unsafe { std::mem::zeroed() },
            attr: hwloc_obj_attr_u::default(),
            id,
            topo: null_mut(),
            children: Vec::new(),
            page_types: Vec::new(),
        });
        // Zeroed again where they live: a move need not carry padding.
        // SAFETY: plain C data, all-zero valid.
        unsafe {
            zero_in_place(&mut n.obj);
            zero_in_place(&mut n.attr);
        }
        n.obj.attr = &mut n.attr;
        n.obj.os_index = HWLOC_UNKNOWN_INDEX;
        live_nodes().insert(n.addr());
        n
    }

    /// The address C knows the object by.
    fn addr(&self) -> usize {
        &self.obj as *const hwloc_obj as usize
    }

    /// The library's node behind a C object, or `None` for NULL or an
    /// object the library did not allocate (or already freed). Reads
    /// nothing through `obj` unless it is one of the library's.
    ///
    /// # Safety
    /// A registered object is alive; the caller is its only user (hwloc's
    /// thread-safety rules).
    pub(crate) unsafe fn of_c<'a>(obj: *mut hwloc_obj) -> Option<&'a mut Node> {
        if obj.is_null() || !live_nodes().contains(&(obj as usize)) {
            return None;
        }
        // SAFETY: registered addresses are those of live Nodes, whose
        // first field (repr(C)) is the hwloc_obj.
        Some(unsafe { &mut *(obj as *mut Node) })
    }

    /// The node's infos as the model's.
    pub(crate) fn infos_as_model(&self) -> Vec<wloc_core::object::Info> {
        self.c_infos()
            .iter()
            .filter_map(|inf| {
                // SAFETY: NUL-terminated strings or NULL.
                let name = unsafe { c_str(inf.name) }?.into_owned();
                // SAFETY: as for the name.
                let value = unsafe { c_str(inf.value) }.unwrap_or_default().into_owned();
                Some(wloc_core::object::Info { name, value })
            })
            .collect()
    }

    /// The infos array as C sees it: `obj.infos` is a `malloc`'ed array of
    /// `obj.infos_count` entries whose strings are `malloc`'ed, as in
    /// hwloc, because programs edit it in place (`hwloc-annotate --ci`
    /// frees every string and the array itself, then sets it to NULL).
    fn c_infos(&self) -> &[hwloc_info_s] {
        if self.obj.infos.is_null() || self.obj.infos_count == 0 {
            return &[];
        }
        // SAFETY: a non-NULL infos holds infos_count entries (ours, or a
        // program's that follows hwloc's layout).
        unsafe { std::slice::from_raw_parts(self.obj.infos, self.obj.infos_count as usize) }
    }

    fn clear_infos(&mut self) {
        self.truncate_infos(0);
    }

    /// Frees the entries from `keep` on (and the array when none stay).
    fn truncate_infos(&mut self, keep: usize) {
        for inf in &self.c_infos()[keep.min(self.c_infos().len())..] {
            // SAFETY: both strings are malloc'ed (c_strdup, or a program's
            // strdup as hwloc documents) or NULL.
            unsafe {
                libc::free(inf.name as *mut c_void);
                libc::free(inf.value as *mut c_void);
            }
        }
        if keep == 0 {
            // SAFETY: malloc'ed array or NULL.
            unsafe { libc::free(self.obj.infos as *mut c_void) };
            self.obj.infos = null_mut();
        }
        self.obj.infos_count = self.obj.infos_count.min(keep as c_uint);
    }

    /// Replaces the infos by `infos`.
    pub(crate) fn set_infos(&mut self, infos: &[wloc_core::object::Info]) {
        // Entries that did not change keep their strings: applications
        // hold pointers to info values (hwloc_obj_get_info_by_name) across
        // hwloc_obj_add_info, which in hwloc only appends.
        let current = self.infos_as_model();
        let keep = if current.len() == self.c_infos().len() {
            current
                .iter()
                .zip(infos)
                .take_while(|(a, b)| a == b)
                .count()
        } else {
            0 // an entry with a NULL name: rebuild all
        };
        self.truncate_infos(keep);
        if infos.len() == keep {
            return;
        }
        let bytes = infos.len() * std::mem::size_of::<hwloc_info_s>();
        // SAFETY: realloc of our malloc'ed array (or NULL) to hold every
        // entry; on failure the old array stays valid and is kept.
        let array = unsafe { libc::realloc(self.obj.infos as *mut c_void, bytes) };
        if array.is_null() {
            return; // out of memory: the infos stay as they were
        }
        let array = array as *mut hwloc_info_s;
        for (k, i) in infos.iter().enumerate().skip(keep) {
            // SAFETY: k < infos.len(), within the array just sized.
            unsafe {
                array.add(k).write(hwloc_info_s {
                    name: c_strdup(&i.name),
                    value: c_strdup(&i.value),
                })
            };
        }
        self.obj.infos = array;
        self.obj.infos_count = infos.len() as c_uint;
    }

    /// Appends one entry to the C infos array as hwloc's `hwloc__add_info`
    /// does (the strings copied with `strdup`), the array growing
    /// geometrically: `realloc` to the capacity the count needs, which is
    /// also correct for an array a program allocated itself.
    ///
    /// # Safety
    /// `name` and `value` are NUL-terminated.
    pub(crate) unsafe fn append_info(
        &mut self,
        name: *const c_char,
        value: *const c_char,
    ) -> Result<(), ()> {
        let count = if self.obj.infos.is_null() {
            0
        } else {
            self.obj.infos_count as usize
        };
        let cap = (count + 1).next_power_of_two().max(8);
        let bytes = cap
            .checked_mul(std::mem::size_of::<hwloc_info_s>())
            .ok_or(())?;
        // SAFETY: our malloc'ed array, a program's, or NULL; on failure the
        // old array stays as it was.
        let array = unsafe { libc::realloc(self.obj.infos as *mut c_void, bytes) };
        if array.is_null() {
            return Err(());
        }
        self.obj.infos = array as *mut hwloc_info_s;
        // SAFETY: NUL-terminated strings (the caller's contract).
        let (n, v) = unsafe { (libc::strdup(name), libc::strdup(value)) };
        if n.is_null() || v.is_null() {
            // SAFETY: strdup'ed or NULL.
            unsafe {
                libc::free(n as *mut c_void);
                libc::free(v as *mut c_void);
            }
            return Err(());
        }
        // SAFETY: count < cap entries fit in the array just sized.
        unsafe {
            self.obj
                .infos
                .add(count)
                .write(hwloc_info_s { name: n, value: v })
        };
        self.obj.infos_count = count as c_uint + 1;
        Ok(())
    }

    fn set_string(slot: &mut *mut c_char, v: Option<&str>) {
        // SAFETY: our strings are malloc'ed (c_strdup) or NULL; a user's
        // are malloc'ed too, as hwloc documents for the fields it frees.
        let same = v.is_some() && unsafe { c_str(*slot) }.as_deref() == v;
        if same {
            return;
        }
        // SAFETY: see above.
        unsafe { libc::free(*slot as *mut c_void) };
        *slot = v.map_or(null_mut(), c_strdup);
    }

    fn set_bitmap(slot: &mut hwloc_bitmap_t, v: Option<&Bitmap>) {
        match (v, slot.is_null()) {
            (None, _) => {
                crate::bitmap::free_raw(*slot);
                *slot = null_mut();
            }
            (Some(b), true) => *slot = crate::bitmap::new_raw(b.clone()),
            (Some(b), false) => {
                // SAFETY: a non-NULL slot holds a bitmap we (or the user,
                // through hwloc_bitmap_alloc) allocated.
                let cur = unsafe { &mut (**slot).bits };
                if cur != b {
                    *cur = b.clone();
                }
            }
        }
    }

    /// Fills the descriptive fields from the model's object.
    fn fill(&mut self, o: &Object, infos: &[wloc_core::object::Info]) {
        self.obj.type_ = o.obj_type.index() as c_int;
        Self::set_string(&mut self.obj.subtype, o.subtype.as_deref());
        Self::set_string(&mut self.obj.name, o.name.as_deref());
        self.obj.os_index = o.os_index.unwrap_or(HWLOC_UNKNOWN_INDEX);
        self.obj.total_memory = o.total_memory;
        self.obj.gp_index = o.gp_index;
        self.obj.depth = o.depth().to_i32();
        self.obj.logical_index = o.logical_index();
        self.obj.sibling_rank = o.sibling_rank();
        self.obj.symmetric_subtree = c_int::from(o.symmetric_subtree());
        Self::set_bitmap(&mut self.obj.cpuset, o.cpuset.as_ref().map(|s| s.bitmap()));
        Self::set_bitmap(
            &mut self.obj.complete_cpuset,
            o.complete_cpuset.as_ref().map(|s| s.bitmap()),
        );
        Self::set_bitmap(
            &mut self.obj.nodeset,
            o.nodeset.as_ref().map(|s| s.bitmap()),
        );
        Self::set_bitmap(
            &mut self.obj.complete_nodeset,
            o.complete_nodeset.as_ref().map(|s| s.bitmap()),
        );
        let same_infos = self.c_infos().len() == infos.len() && self.infos_as_model() == infos;
        if !same_infos {
            self.set_infos(infos);
        }
        self.fill_attr(o);
    }

    fn fill_attr(&mut self, o: &Object) {
        // Zeroed in place, then the member's fields written one by one: a
        // whole-struct assignment would leave its padding undefined, and
        // C reads those bytes through the other members.
        // SAFETY: plain C data, all-zero valid.
        unsafe { zero_in_place(&mut self.attr) };
        self.page_types.clear();
        match &o.attr {
            ObjAttr::None => {}
            ObjAttr::Numa(n) => {
                self.page_types = n
                    .page_types
                    .iter()
                    .map(|p| hwloc_memory_page_type_s {
                        size: p.size,
                        count: p.count,
                    })
                    .collect();
                // SAFETY: writes of Copy fields of the union's member.
                unsafe {
                    let a = &mut self.attr.numanode;
                    a.local_memory = n.local_memory;
                    a.page_types_len = self.page_types.len() as c_uint;
                    a.page_types = if self.page_types.is_empty() {
                        null_mut()
                    } else {
                        self.page_types.as_mut_ptr()
                    };
                }
            }
            ObjAttr::Cache(c) => {
                // SAFETY: as above.
                unsafe {
                    let a = &mut self.attr.cache;
                    a.size = c.size;
                    a.depth = c.depth;
                    a.linesize = c.linesize;
                    a.associativity = c.associativity;
                    a.type_ = c.kind.code() as c_int;
                }
            }
            ObjAttr::Group(g) => {
                // SAFETY: as above.
                unsafe {
                    let a = &mut self.attr.group;
                    a.depth = g.depth;
                    a.kind = g.kind;
                    a.subkind = g.subkind;
                    a.dont_merge = u8::from(g.dont_merge);
                }
            }
            // SAFETY: as above.
            ObjAttr::Pci(p) => unsafe { write_pci(&mut self.attr.pcidev, p) },
            ObjAttr::Bridge(b) => {
                // SAFETY: as above.
                unsafe {
                    let a = &mut self.attr.bridge;
                    match &b.upstream {
                        BridgeUpstream::Host => a.upstream_type = 0,
                        BridgeUpstream::Pci(p) => {
                            write_pci(&mut a.upstream_pci, p);
                            a.upstream_type = 1;
                        }
                    }
                    a.downstream_pci.domain = b.domain as u16;
                    a.downstream_pci.secondary_bus = b.secondary_bus;
                    a.downstream_pci.subordinate_bus = b.subordinate_bus;
                    a.downstream_type = 1;
                    a.depth = b.depth;
                }
            }
            ObjAttr::OsDev(t) => {
                self.attr.osdev.type_ = t.v2_code(o.subtype.as_deref()).unwrap_or(0) as c_int;
            }
        }
    }
}

/// Writes a PCI device's attributes field by field into a zeroed place.
fn write_pci(a: &mut hwloc_pcidev_attr_s, p: &wloc_core::object::PciAttr) {
    a.domain = p.domain as u16;
    a.bus = p.bus;
    a.dev = p.dev;
    a.func = p.func;
    a.class_id = p.class_id;
    a.vendor_id = p.vendor_id;
    a.device_id = p.device_id;
    a.subvendor_id = p.subvendor_id;
    a.subdevice_id = p.subdevice_id;
    a.revision = p.revision;
    a.linkspeed = p.linkspeed;
}

impl Drop for Node {
    fn drop(&mut self) {
        live_nodes().remove(&self.addr());
        self.clear_infos();
        // SAFETY: malloc'ed strings or NULL.
        unsafe {
            libc::free(self.obj.subtype as *mut c_void);
            libc::free(self.obj.name as *mut c_void);
        }
        for b in [
            self.obj.cpuset,
            self.obj.complete_cpuset,
            self.obj.nodeset,
            self.obj.complete_nodeset,
        ] {
            crate::bitmap::free_raw(b);
        }
    }
}

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
    blacklist: Vec<String>,
    nodes: HashMap<ObjId, Box<Node>>,
    /// Group objects allocated and not inserted yet (boxed: C holds
    /// their addresses while the list grows).
    #[allow(clippy::vec_box)]
    pending: Vec<Box<Node>>,
    by_addr: HashMap<usize, ObjId>,
    support_parts: Box<(
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
    sets: [hwloc_bitmap_t; 6],
    /// C copies handed out by pointer (names, initiator cpusets, CPU kind
    /// infos), kept as long as the topology.
    pub(crate) kept: crate::cpukinds::Kept,
}

impl hwloc_topology {
    fn new() -> Box<hwloc_topology> {
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
        if let ObjAttr::Numa(a) = &self.model.obj(id).attr {
            if a.local_memory != local_memory {
                if let ObjAttr::Numa(a) = &mut self.model.obj_mut(id).attr {
                    a.local_memory = local_memory;
                }
            }
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
            n.topo = me;
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
    fn fill_support(&mut self) {
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
            Source::Input(Input::Fsroot(_)) => true,
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
            crate::bind::fill_support(&mut self.support_parts.1, &mut self.support_parts.2);
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
    fn support_names(&mut self) -> Vec<String> {
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
    fn import_support(&mut self) {
        let names = self.model.support.clone();
        if names.is_empty() {
            return;
        }
        // As hwloc: the recorded support replaces the whole structure.
        self.support_parts.3.imported_support = 1;
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

fn discovery_field<'a>(d: &'a mut hwloc_topology_discovery_support, f: &str) -> Option<&'a mut u8> {
    Some(match f {
        "pu" => &mut d.pu,
        "numa" => &mut d.numa,
        "numa_memory" => &mut d.numa_memory,
        "disallowed_pu" => &mut d.disallowed_pu,
        "disallowed_numa" => &mut d.disallowed_numa,
        "cpukind_efficiency" => &mut d.cpukind_efficiency,
        _ => return None,
    })
}

fn cpubind_field<'a>(c: &'a mut hwloc_topology_cpubind_support, f: &str) -> Option<&'a mut u8> {
    Some(match f {
        "set_thisproc_cpubind" => &mut c.set_thisproc_cpubind,
        "get_thisproc_cpubind" => &mut c.get_thisproc_cpubind,
        "set_proc_cpubind" => &mut c.set_proc_cpubind,
        "get_proc_cpubind" => &mut c.get_proc_cpubind,
        "set_thisthread_cpubind" => &mut c.set_thisthread_cpubind,
        "get_thisthread_cpubind" => &mut c.get_thisthread_cpubind,
        "set_thread_cpubind" => &mut c.set_thread_cpubind,
        "get_thread_cpubind" => &mut c.get_thread_cpubind,
        "get_thisproc_last_cpu_location" => &mut c.get_thisproc_last_cpu_location,
        "get_proc_last_cpu_location" => &mut c.get_proc_last_cpu_location,
        "get_thisthread_last_cpu_location" => &mut c.get_thisthread_last_cpu_location,
        _ => return None,
    })
}

fn membind_field<'a>(m: &'a mut hwloc_topology_membind_support, f: &str) -> Option<&'a mut u8> {
    Some(match f {
        "set_thisproc_membind" => &mut m.set_thisproc_membind,
        "get_thisproc_membind" => &mut m.get_thisproc_membind,
        "set_proc_membind" => &mut m.set_proc_membind,
        "get_proc_membind" => &mut m.get_proc_membind,
        "set_thisthread_membind" => &mut m.set_thisthread_membind,
        "get_thisthread_membind" => &mut m.get_thisthread_membind,
        "set_area_membind" => &mut m.set_area_membind,
        "get_area_membind" => &mut m.get_area_membind,
        "alloc_membind" => &mut m.alloc_membind,
        "firsttouch_membind" => &mut m.firsttouch_membind,
        "bind_membind" => &mut m.bind_membind,
        "interleave_membind" => &mut m.interleave_membind,
        "nexttouch_membind" => &mut m.nexttouch_membind,
        "migrate_membind" => &mut m.migrate_membind,
        "get_area_memlocation" => &mut m.get_area_memlocation,
        "weighted_interleave_membind" => &mut m.weighted_interleave_membind,
        _ => return None,
    })
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

/// `hwloc_topology_init`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_init(topologyp: *mut hwloc_topology_t) -> c_int {
    guard(-1, || {
        if topologyp.is_null() {
            return fail(libc::EINVAL);
        }
        let t = Box::into_raw(hwloc_topology::new());
        // SAFETY: the caller gives a place for the handle.
        unsafe { *topologyp = t };
        0
    })
}

/// `hwloc_topology_destroy`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_destroy(topology: hwloc_topology_t) {
    guard((), || {
        if topology.is_null() {
            return;
        }
        // SAFETY: the handle came from Box::into_raw in init/dup/adopt.
        let t = unsafe { Box::from_raw(topology) };
        for s in t.sets {
            crate::bitmap::free_raw(s);
        }
        drop(t);
    })
}

/// `hwloc_topology_abi_check`: 0 when the library's ABI is the
/// application's (hwloc 2.x).
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_abi_check(_topology: hwloc_topology_t) -> c_int {
    0
}

/// `hwloc_topology_set_flags`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_set_flags(
    topology: hwloc_topology_t,
    flags: c_ulong,
) -> c_int {
    entry!(topology, -1, |h| {
        let Some(t) = h.get_mut() else {
            return fail(libc::EINVAL);
        };
        if t.loaded {
            return fail(libc::EBUSY);
        }
        // Restricting to the binding needs a topology of this system,
        // which the flags must say (hwloc refuses them alone).
        let restricts = FLAG_RESTRICT_TO_CPUBINDING | FLAG_RESTRICT_TO_MEMBINDING;
        if flags & !ALL_FLAGS != 0 || (flags & restricts != 0 && flags & FLAG_IS_THISSYSTEM == 0) {
            return fail(libc::EINVAL);
        }
        t.flags = flags;
        0
    })
}

/// `hwloc_topology_get_flags`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_get_flags(topology: hwloc_topology_t) -> c_ulong {
    entry!(topology, 0, |h| {
        h.get().map_or(0, |t| t.flags as c_ulong)
    })
}

/// `hwloc_topology_is_thissystem`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_is_thissystem(topology: hwloc_topology_t) -> c_int {
    entry!(topology, 0, |h| {
        h.get().map_or(0, |t| c_int::from(t.model.is_thissystem))
    })
}

fn set_source(h: Handle<'_>, s: Option<Source>) -> c_int {
    let Some(t) = h.get_mut() else {
        return fail(libc::EINVAL);
    };
    if t.loaded {
        return fail(libc::EBUSY);
    }
    match s {
        Some(s) => {
            t.source = s;
            0
        }
        None => fail(libc::EINVAL),
    }
}

/// `hwloc_topology_set_xml`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_set_xml(
    topology: hwloc_topology_t,
    xmlpath: *const c_char,
) -> c_int {
    entry!(topology, -1, |h| {
        // SAFETY: a NUL-terminated path or NULL.
        let p = unsafe { crate::ffi::c_path(xmlpath) }.map(|p| Source::Input(Input::Xml(p)));
        set_source(h, p)
    })
}

/// `hwloc_topology_set_xmlbuffer`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_set_xmlbuffer(
    topology: hwloc_topology_t,
    buffer: *const c_char,
    size: c_int,
) -> c_int {
    entry!(topology, -1, |h| {
        let s = guard(Err(libc::EINVAL), || {
            if buffer.is_null() || size <= 0 {
                return Err(libc::EINVAL);
            }
            // SAFETY: the caller's buffer holds size bytes (the terminator
            // included, as hwloc's export gives it).
            let bytes = unsafe { std::slice::from_raw_parts(buffer as *const u8, size as usize) };
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            crate::ffi::try_text(&bytes[..end])
                .map(Source::XmlBuffer)
                .map_err(|_| libc::ENOMEM)
        });
        match s {
            Ok(s) => set_source(h, Some(s)),
            Err(e) => fail(e),
        }
    })
}

/// `hwloc_topology_set_synthetic`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_set_synthetic(
    topology: hwloc_topology_t,
    description: *const c_char,
) -> c_int {
    entry!(topology, -1, |h| {
        // SAFETY: a NUL-terminated string or NULL.
        let d = unsafe { c_str(description) }.map(|d| d.into_owned());
        // hwloc checks the description when it is given.
        if let Some(desc) = &d {
            if wloc_core::synthetic::parse(desc).is_err() {
                return fail(libc::EINVAL);
            }
        }
        set_source(h, d.map(|d| Source::Input(Input::Synthetic(d))))
    })
}

/// `hwloc_topology_set_fsroot`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_set_fsroot(
    topology: hwloc_topology_t,
    fsroot_path: *const c_char,
) -> c_int {
    entry!(topology, -1, |h| {
        // SAFETY: a NUL-terminated path or NULL.
        let p = unsafe { crate::ffi::c_path(fsroot_path) }.map(|p| {
            if p.as_os_str() == "/" {
                Source::THIS_SYSTEM
            } else {
                Source::Input(Input::Fsroot(p))
            }
        });
        set_source(h, p)
    })
}

/// `hwloc_topology_set_pid`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_set_pid(
    topology: hwloc_topology_t,
    pid: libc::pid_t,
) -> c_int {
    entry!(topology, -1, |h| {
        let Some(t) = h.get_mut() else {
            return fail(libc::EINVAL);
        };
        if t.loaded {
            return fail(libc::EBUSY);
        }
        t.pid = pid;
        0
    })
}

/// The discovery components hwloc 2.9 knows (its plugins included), by
/// the names `hwloc_topology_set_components` and `HWLOC_COMPONENTS` take.
const COMPONENT_NAMES: [&str; 15] = [
    "noos",
    "linux",
    "linuxio",
    "x86",
    "synthetic",
    "xml",
    "xml_nolibxml",
    "xml_libxml",
    "pci",
    "gl",
    "opencl",
    "cuda",
    "nvml",
    "rsmi",
    "levelzero",
];

/// Whether hwloc has its x86 backend here: it is built for x86 targets
/// only, so elsewhere the `x86` component is unknown and
/// `HWLOC_CPUID_PATH` is not read.
const X86_BACKEND: bool = cfg!(any(target_arch = "x86", target_arch = "x86_64"));

/// `hwloc_topology_set_components`: wloc runs no plugin; blacklisting
/// `linux` makes this system's discovery hwloc's `noos` one (a Machine of
/// the online PUs), other names are checked and recorded.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_set_components(
    topology: hwloc_topology_t,
    flags: c_ulong,
    name: *const c_char,
) -> c_int {
    entry!(topology, -1, |h| {
        let Some(t) = h.get_mut() else {
            return fail(libc::EINVAL);
        };
        if t.loaded {
            return fail(libc::EBUSY);
        }
        // HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST is the only flag, and
        // the only use.
        // SAFETY: a NUL-terminated name or NULL.
        let Some(name) = (unsafe { c_str(name) }) else {
            return fail(libc::EINVAL);
        };
        if flags != 1 {
            return fail(libc::EINVAL);
        }
        let base = name.split(':').next().unwrap_or_default();
        if !COMPONENT_NAMES.contains(&base) || (base == "x86" && !X86_BACKEND) {
            return fail(libc::EINVAL);
        }
        t.blacklist.push(base.to_owned());
        0
    })
}

fn filter_from_c(f: c_int) -> Option<TypeFilter> {
    Some(match f {
        0 => TypeFilter::KeepAll,
        1 => TypeFilter::KeepNone,
        2 => TypeFilter::KeepStructure,
        3 => TypeFilter::KeepImportant,
        _ => return None,
    })
}

fn filter_to_c(f: TypeFilter) -> c_int {
    match f {
        TypeFilter::KeepAll => 0,
        TypeFilter::KeepNone => 1,
        TypeFilter::KeepStructure => 2,
        TypeFilter::KeepImportant => 3,
    }
}

/// The model type of a C type value.
pub(crate) fn type_from_c(t: hwloc_obj_type_t) -> Option<ObjType> {
    usize::try_from(t)
        .ok()
        .and_then(|i| ObjType::ALL.get(i).copied())
}

fn with_filters(
    h: Handle<'_>,
    f: c_int,
    apply: impl FnOnce(&mut Topology, TypeFilter) -> bool,
) -> c_int {
    let Some(t) = h.get_mut() else {
        return fail(libc::EINVAL);
    };
    if t.loaded {
        return fail(libc::EBUSY);
    }
    let Some(f) = filter_from_c(f) else {
        return fail(libc::EINVAL);
    };
    if apply(&mut t.model, f) {
        0
    } else {
        fail(libc::EINVAL)
    }
}

/// `hwloc_topology_set_type_filter`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_set_type_filter(
    topology: hwloc_topology_t,
    type_: hwloc_obj_type_t,
    filter: c_int,
) -> c_int {
    entry!(topology, -1, |h| {
        with_filters(h, filter, |m, f| {
            type_from_c(type_).is_some_and(|t| m.set_type_filter(t, f).is_ok())
        })
    })
}

/// `hwloc_topology_get_type_filter`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_get_type_filter(
    topology: hwloc_topology_t,
    type_: hwloc_obj_type_t,
    filter: *mut c_int,
) -> c_int {
    entry!(topology, -1, |h| {
        let (Some(t), Some(ty)) = (h.get(), type_from_c(type_)) else {
            return fail(libc::EINVAL);
        };
        if filter.is_null() {
            return fail(libc::EINVAL);
        }
        // SAFETY: the caller gives a place for the filter.
        unsafe { *filter = filter_to_c(t.model.type_filter(ty)) };
        0
    })
}

/// `hwloc_topology_set_all_types_filter`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_set_all_types_filter(
    topology: hwloc_topology_t,
    filter: c_int,
) -> c_int {
    entry!(topology, -1, |h| {
        with_filters(h, filter, |m, f| {
            m.set_all_types_filter(f);
            true
        })
    })
}

/// `hwloc_topology_set_cache_types_filter`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_set_cache_types_filter(
    topology: hwloc_topology_t,
    filter: c_int,
) -> c_int {
    entry!(topology, -1, |h| {
        with_filters(h, filter, |m, f| {
            m.set_cache_types_filter(f);
            true
        })
    })
}

/// `hwloc_topology_set_icache_types_filter`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_set_icache_types_filter(
    topology: hwloc_topology_t,
    filter: c_int,
) -> c_int {
    entry!(topology, -1, |h| {
        with_filters(h, filter, |m, f| {
            m.set_icache_types_filter(f);
            true
        })
    })
}

/// `hwloc_topology_set_io_types_filter`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_set_io_types_filter(
    topology: hwloc_topology_t,
    filter: c_int,
) -> c_int {
    entry!(topology, -1, |h| {
        with_filters(h, filter, |m, f| {
            m.set_io_types_filter(f);
            true
        })
    })
}

/// `hwloc_topology_set_userdata`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_set_userdata(
    topology: hwloc_topology_t,
    userdata: *const c_void,
) {
    entry!(topology, (), |h| {
        if let Some(t) = h.get_mut() {
            t.userdata = userdata as *mut c_void;
        }
    })
}

/// `hwloc_topology_get_userdata`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_get_userdata(topology: hwloc_topology_t) -> *mut c_void {
    entry!(topology, std::ptr::null_mut(), |h| {
        h.get().map_or(null_mut(), |t| t.userdata)
    })
}

/// `hwloc_topology_get_support`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_get_support(
    topology: hwloc_topology_t,
) -> *const hwloc_topology_support {
    entry!(topology, std::ptr::null(), |h| {
        h.get().map_or(std::ptr::null(), |t| &t.support as *const _)
    })
}

/// Where the environment sends a load whose source was not chosen, in
/// hwloc's order (fsroot, CPUID dump, synthetic, XML), after a launcher's
/// topology image.
fn source_from_env() -> Source {
    // A privileged process (setuid, capabilities) ignores wloc's and
    // hwloc's input variables: its caller may not choose its topology.
    if wloc_trust::env::secure_mode() {
        return Source::THIS_SYSTEM;
    }
    match wloc_input::resolve(None, None) {
        // hwloc's fsroot `/` is this system; its CPUID dumps are read by
        // the x86 backend, which only x86 builds have.
        Ok(Input::Fsroot(p)) if p.as_os_str() == "/" => Source::THIS_SYSTEM,
        Ok(Input::Cpuid(_)) if !X86_BACKEND => Source::THIS_SYSTEM,
        Ok(s) => Source::Input(s),
        Err(_) => Source::THIS_SYSTEM,
    }
}

/// The source when `HWLOC_COMPONENTS` chooses the components: an `xml=` or
/// `synthetic=` entry names its input; otherwise the machine, read by
/// the Linux and x86 components, which still honour `HWLOC_FSROOT` and
/// `HWLOC_CPUID_PATH` (as hwloc's do), while `HWLOC_XMLFILE` and
/// `HWLOC_SYNTHETIC` are ignored.
fn source_from_components() -> Source {
    if wloc_trust::env::secure_mode() {
        return Source::THIS_SYSTEM;
    }
    let list = wloc_trust::env::var("HWLOC_COMPONENTS").unwrap_or_default();
    for entry in list.split(',') {
        if let Some(p) = entry.strip_prefix("xml=").filter(|p| !p.is_empty()) {
            return Source::Input(Input::Xml(PathBuf::from(p)));
        }
        if let Some(d) = entry.strip_prefix("synthetic=").filter(|d| !d.is_empty()) {
            return Source::Input(Input::Synthetic(d.to_string()));
        }
    }
    let var = |n: &str| wloc_trust::env::var(n).filter(|v| !v.is_empty());
    match (var("HWLOC_FSROOT"), var("HWLOC_CPUID_PATH")) {
        (Some(f), _) if f != "/" => Source::Input(Input::Fsroot(PathBuf::from(f))),
        (_, Some(c)) if X86_BACKEND => Source::Input(Input::Cpuid(PathBuf::from(c))),
        _ => Source::THIS_SYSTEM,
    }
}

/// Prints a diagnostic when `WLOC_CAPI_VERBOSE` is set (never in a
/// privileged process): the library is otherwise silent, as libhwloc.
fn verbose(msg: &str) {
    if wloc_trust::env::var_os("WLOC_CAPI_VERBOSE").is_some() {
        eprintln!("wloc: {msg}");
    }
}

/// Why a load failed: the message, kept for `HWLOC_DEBUG_VERBOSE`-style
/// diagnostics, and hwloc's `errno`.
struct LoadFailure(String);

impl hwloc_topology {
    fn load(&mut self) -> Result<(), LoadFailure> {
        let mut base = self.model.clone();
        base.include_disallowed = self.flags & FLAG_INCLUDE_DISALLOWED != 0;
        // Read when the topology is loaded, as hwloc's XML reader does
        // (tools set it after creating their topology).
        self.userdata_not_decoded = wloc_trust::env::var("HWLOC_XML_USERDATA_NOT_DECODED")
            .and_then(|v| v.trim().parse::<i64>().ok())
            .is_some_and(|v| v != 0);
        // HWLOC_COMPONENTS chooses the components itself: hwloc then
        // ignores the variables that name an input.
        let components_env =
            wloc_trust::env::var("HWLOC_COMPONENTS").is_some_and(|v| !v.is_empty());
        let from_env = self.source == Source::Default && !components_env;
        let source = match &self.source {
            Source::Default if components_env => source_from_components(),
            Source::Default => source_from_env(),
            s => s.clone(),
        };
        let (source, mut m) = match self.read_source(&source, base.clone()) {
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

    /// Reads the topology of a source into `base` (whose filters and flags
    /// the program set).
    fn read_source(&self, source: &Source, base: Topology) -> Result<Topology, LoadFailure> {
        let err = |e: &dyn std::fmt::Display| LoadFailure(e.to_string());
        let noos = source.is_this_system() && self.blacklist.iter().any(|b| b == "linux");
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
            Source::Input(Input::Fsroot(p)) => discovered(Target::Fsroot(p.clone()), &base)?,
            Source::Input(Input::Cpuid(p)) => discovered(Target::CpuidDump(p.clone()), &base)?,
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
                let mut m = discovered(Target::ThisSystem, &base)?;
                wloc_xml::hwloc2::add_x86_cache_infos(&mut m);
                m
            }
        })
    }

    /// Hands every `<userdata>` element read to the import callback, then
    /// forgets them: as in hwloc, the application owns what it imported.
    fn import_userdata(&mut self) {
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

/// The root's infos as hwloc 2.9 shows them ([`wloc_xml::hwloc2::present`]);
/// for a topology wloc discovered (or a launcher's image of it), with the
/// `hwlocVersion` and `ProcessName` infos hwloc adds when it discovers
/// (none with `HWLOC_DONT_ADD_VERSION_INFO`, any value, as in hwloc).
/// `hwlocVersion` is the API version this library implements (README).
fn hwloc2_infos(m: &mut Topology, discovered: bool) {
    let mut added = Vec::new();
    if discovered && wloc_trust::env::var_os("HWLOC_DONT_ADD_VERSION_INFO").is_none() {
        added.push(wloc_core::object::Info {
            name: "hwlocVersion".into(),
            value: "2.9.0".into(),
        });
        if let Some(value) = process_name() {
            added.push(wloc_core::object::Info {
                name: "ProcessName".into(),
                value,
            });
        }
    }
    wloc_xml::hwloc2::present(m, discovered, added);
}

/// hwloc 2's ABI holds 16-bit PCI domains (Debian's libhwloc is built
/// without `--enable-32bits-pci-domain`), and its discovery leaves out the
/// PCI devices and bridges of wider domains rather than truncating them;
/// their OS devices end up below the root.  wloc discovers them (as hwloc
/// 3 does); this library answers as libhwloc does.
fn hwloc2_pci_domains(m: &mut Topology) {
    let wide = |o: &wloc_core::Object| {
        o.pci().is_some_and(|p| p.domain > 0xffff) || o.bridge().is_some_and(|b| b.domain > 0xffff)
    };
    // One walk: the wide objects with no wide ancestor go, with all below
    // them; the OS devices among those move to the root (what hangs below
    // such a device, which hwloc's discovery never makes, goes with it).
    let root = m.root();
    let (mut tops, mut osdevs) = (Vec::new(), Vec::new());
    let mut stack = vec![(root, false)];
    while let Some((id, inside)) = stack.pop() {
        let o = m.obj(id);
        let here = inside || wide(o);
        if here && !inside {
            tops.push(id);
        }
        if here && o.obj_type == ObjType::OSDevice {
            osdevs.push(o.clone());
            continue;
        }
        let below = o
            .children()
            .iter()
            .chain(o.memory_children())
            .chain(o.io_children());
        let below: Vec<ObjId> = below.copied().collect();
        stack.extend(below.into_iter().rev().map(|c| (c, here)));
    }
    if tops.is_empty() {
        return;
    }
    m.remove_subtrees(&tops);
    for o in osdevs {
        let _ = m.insert_by_parent(root, o);
    }
    if let Err(e) = m.finish() {
        verbose(&format!("leaving out PCI objects of 32-bit domains: {e}"));
    }
}

/// The program's short name, as glibc's `program_invocation_short_name`.
fn process_name() -> Option<String> {
    extern "C" {
        static program_invocation_short_name: *const c_char;
    }
    // SAFETY: glibc sets this pointer before main to a string that lives
    // for the whole process.
    let p = unsafe { program_invocation_short_name };
    // SAFETY: NULL or a NUL-terminated string.
    unsafe { c_str(p) }
        .map(|s| s.into_owned())
        .filter(|s| !s.is_empty())
}

/// Discovers `target` in the discovery module (the sandboxed components,
/// then the built-in annotations `wloc ls` runs after discovery: PCI
/// names, as hwloc's PCI backend gives them; DMI infos), the annotations'
/// warnings only shown when asked for.
fn discovered(target: Target, base: &Topology) -> Result<Topology, LoadFailure> {
    let (m, warnings) = crate::discover::discover(target, base).map_err(LoadFailure)?;
    for w in warnings {
        verbose(&format!("annotation skipped: {w}"));
    }
    Ok(m)
}

/// The number of online processors (hwloc's fallback discovery).
fn online_pus() -> usize {
    wloc_bind::raw::online_cpus()
}

/// `hwloc_topology_load`.
#[no_mangle]
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

/// `hwloc_topology_check`: aborts, as hwloc's assertions do, when the
/// topology breaks an invariant.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_check(topology: hwloc_topology_t) {
    entry!(topology, (), |h| {
        let Some(t) = h.loaded() else {
            return;
        };
        if let Err(e) = t.model.check_hwloc() {
            eprintln!("wloc: h.raw() check failed: {}", e.message());
            std::process::abort();
        }
    })
}

/// `hwloc_topology_dup`: a copy with the same objects, userdata pointers
/// and topology userdata.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_dup(
    newtopology: *mut hwloc_topology_t,
    oldtopology: hwloc_topology_t,
) -> c_int {
    entry!(oldtopology, -1, |h| {
        let Some(old) = h.loaded_mut() else {
            return fail(libc::EINVAL);
        };
        let old = &*old;
        if newtopology.is_null() {
            return fail(libc::EINVAL);
        }
        let mut t = hwloc_topology::new();
        t.model = old.model.clone();
        t.loaded = true;
        t.flags = old.flags;
        t.source = old.source.clone();
        t.pid = old.pid;
        t.userdata = old.userdata;
        t.export_cb = old.export_cb;
        t.import_cb = old.import_cb;
        t.sync();
        for (id, n) in &old.nodes {
            if let Some(m) = t.nodes.get_mut(id) {
                m.obj.userdata = n.obj.userdata;
            }
        }
        *t.support_parts = *old.support_parts;
        // SAFETY: the caller gives a place for the handle.
        unsafe { *newtopology = Box::into_raw(t) };
        0
    })
}

/// `hwloc_topology_refresh`: the mirror is always current, nothing to do.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_refresh(topology: hwloc_topology_t) -> c_int {
    entry!(topology, -1, |h| {
        if h.get().is_none() {
            return fail(libc::EINVAL);
        }
        0
    })
}

/// The topology-wide sets, in the order of `hwloc_topology::sets`.
fn topo_set(h: Handle<'_>, i: usize) -> hwloc_const_bitmap_t {
    h.loaded()
        .map_or(std::ptr::null(), |t| t.sets[i] as *const hwloc_bitmap_s)
}

/// `hwloc_topology_get_complete_cpuset`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_get_complete_cpuset(
    topology: hwloc_topology_t,
) -> hwloc_const_bitmap_t {
    entry!(topology, std::ptr::null(), |h| topo_set(h, 0))
}
/// `hwloc_topology_get_topology_cpuset`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_get_topology_cpuset(
    topology: hwloc_topology_t,
) -> hwloc_const_bitmap_t {
    entry!(topology, std::ptr::null(), |h| topo_set(h, 1))
}
/// `hwloc_topology_get_allowed_cpuset`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_get_allowed_cpuset(
    topology: hwloc_topology_t,
) -> hwloc_const_bitmap_t {
    entry!(topology, std::ptr::null(), |h| topo_set(h, 2))
}
/// `hwloc_topology_get_complete_nodeset`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_get_complete_nodeset(
    topology: hwloc_topology_t,
) -> hwloc_const_bitmap_t {
    entry!(topology, std::ptr::null(), |h| topo_set(h, 3))
}
/// `hwloc_topology_get_topology_nodeset`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_get_topology_nodeset(
    topology: hwloc_topology_t,
) -> hwloc_const_bitmap_t {
    entry!(topology, std::ptr::null(), |h| topo_set(h, 4))
}
/// `hwloc_topology_get_allowed_nodeset`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_get_allowed_nodeset(
    topology: hwloc_topology_t,
) -> hwloc_const_bitmap_t {
    entry!(topology, std::ptr::null(), |h| topo_set(h, 5))
}

/// `hwloc_topology_restrict`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_restrict(
    topology: hwloc_topology_t,
    set: hwloc_const_bitmap_t,
    flags: c_ulong,
) -> c_int {
    entry!(
        topology,
        loaded_mut | t | {
            // SAFETY: a bitmap from hwloc_bitmap_alloc or an object's.
            let Some(set) = (unsafe { set.as_ref() }) else {
                return fail(libc::EINVAL);
            };
            let Some(f) = wloc_core::topology::RestrictFlags::from_bits(flags) else {
                return fail(libc::EINVAL);
            };
            let mut m = t.model.clone();
            match m.restrict_with_flags(&set.bits, f) {
                Ok(()) => {
                    t.model = m;
                    t.sync();
                    0
                }
                Err(_) => fail(libc::EINVAL),
            }
        }
    )
}

/// `hwloc_topology_allow`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_allow(
    topology: hwloc_topology_t,
    cpuset: hwloc_const_bitmap_t,
    nodeset: hwloc_const_bitmap_t,
    flags: c_ulong,
) -> c_int {
    entry!(
        topology,
        loaded_mut | t | {
            // As hwloc: EINVAL without HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED.
            if t.flags & FLAG_INCLUDE_DISALLOWED == 0 {
                return fail(libc::EINVAL);
            }
            // As hwloc: ALL and LOCAL_RESTRICTIONS take no set.
            if matches!(flags, 1 | 2) && (!cpuset.is_null() || !nodeset.is_null()) {
                return fail(libc::EINVAL);
            }
            let m = &mut t.model;
            let (cc, cn) = (m.complete_cpuset().clone(), m.complete_nodeset().clone());
            match flags {
                1 => {
                    m.allowed_cpuset = cc;
                    m.allowed_nodeset = cn;
                }
                2 => {
                    if !m.is_thissystem {
                        return fail(libc::EINVAL);
                    }
                    match wloc_bind::thread_affinity() {
                        Ok(c) => m.allowed_cpuset = &c & &cc,
                        Err(_) => return fail(libc::EINVAL),
                    }
                }
                4 => {
                    // SAFETY: bitmaps from hwloc_bitmap_alloc or NULL.
                    let (c, n) = unsafe { (cpuset.as_ref(), nodeset.as_ref()) };
                    if c.is_none() && n.is_none() {
                        return fail(libc::EINVAL);
                    }
                    if let Some(c) = c {
                        let c = wloc_core::CpuSet::from_bitmap(c.bits.clone());
                        let c = &c & &cc;
                        if c.is_empty() {
                            return fail(libc::EINVAL);
                        }
                        m.allowed_cpuset = c;
                    }
                    if let Some(n) = n {
                        let n = wloc_core::NodeSet::from_bitmap(n.bits.clone());
                        let n = &n & &cn;
                        if n.is_empty() {
                            return fail(libc::EINVAL);
                        }
                        m.allowed_nodeset = n;
                    }
                }
                _ => return fail(libc::EINVAL),
            }
            t.sync();
            0
        }
    )
}

/// Completes the model after an object was added to a loaded topology,
/// then refreshes the mirror.
pub(crate) fn refinish(t: &mut hwloc_topology) -> Result<(), ()> {
    let mut m = t.model.clone();
    match m.finish() {
        Ok(()) => {
            t.model = m;
            t.sync();
            Ok(())
        }
        Err(_) => Err(()),
    }
}

/// `hwloc_topology_insert_misc_object`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_insert_misc_object(
    topology: hwloc_topology_t,
    parent: hwloc_obj_t,
    name: *const c_char,
) -> hwloc_obj_t {
    entry!(topology, null_mut(), |h| {
        let Some(t) = h.loaded_mut() else {
            set_errno(libc::EINVAL);
            return null_mut();
        };
        if !t.model.keeps_type(ObjType::Misc) {
            set_errno(libc::EINVAL);
            return null_mut();
        }
        let Some(pid) = t.id_of(parent) else {
            set_errno(libc::EINVAL);
            return null_mut();
        };
        let mut o = Object::new(ObjType::Misc, None);
        // SAFETY: a NUL-terminated name or NULL.
        o.name = unsafe { c_str(name) }.map(|n| n.into_owned());
        o.gp_index = t.model.alloc_gp_index();
        let gp = o.gp_index;
        if t.model.insert_by_parent(pid, o).is_err() {
            set_errno(libc::EINVAL);
            return null_mut();
        }
        if refinish(t).is_err() {
            set_errno(libc::EINVAL);
            return null_mut();
        }
        t.model
            .obj_by_gp_index(gp)
            .map_or(null_mut(), |id| t.ptr_of(id))
    })
}

/// `hwloc_topology_alloc_group_object`: a Group the caller fills
/// (cpuset, nodeset, subtype, infos, group attributes) before
/// `hwloc_topology_insert_group_object`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_alloc_group_object(
    topology: hwloc_topology_t,
) -> hwloc_obj_t {
    entry!(topology, null_mut(), |h| {
        let Some(t) = h.loaded_mut() else {
            set_errno(libc::EINVAL);
            return null_mut();
        };
        let mut n = Node::new(None);
        n.topo = t as *mut hwloc_topology;
        n.obj.type_ = ObjType::Group.index() as c_int;
        // As hwloc's: everything else zero (the Group's depth too) and a
        // new global persistent index.
        n.obj.gp_index = t.model.alloc_gp_index();
        let p = &mut n.obj as *mut hwloc_obj;
        t.pending.push(n);
        p
    })
}

/// Reads a pending Group's fields as the caller filled them.
fn group_from_node(n: &Node) -> Object {
    let bits = |b: hwloc_bitmap_t| {
        // SAFETY: NULL or a bitmap from hwloc_bitmap_alloc.
        unsafe { b.as_ref() }.map(|b| b.bits.clone())
    };
    let mut o = Object::new(ObjType::Group, None);
    o.cpuset = bits(n.obj.cpuset).map(wloc_core::CpuSet::from_bitmap);
    o.complete_cpuset = bits(n.obj.complete_cpuset).map(wloc_core::CpuSet::from_bitmap);
    o.nodeset = bits(n.obj.nodeset).map(wloc_core::NodeSet::from_bitmap);
    o.complete_nodeset = bits(n.obj.complete_nodeset).map(wloc_core::NodeSet::from_bitmap);
    // SAFETY: malloc'ed strings or NULL, as hwloc documents for subtype.
    o.subtype = unsafe { c_str(n.obj.subtype) }.map(|s| s.into_owned());
    // SAFETY: as for the subtype.
    o.name = unsafe { c_str(n.obj.name) }.map(|s| s.into_owned());
    o.infos = n.infos_as_model();
    // SAFETY: the group member is the one a Group's attributes use.
    let g = unsafe { n.attr.group };
    o.attr = ObjAttr::Group(wloc_core::object::GroupAttr {
        depth: if g.depth == u32::MAX { 0 } else { g.depth },
        kind: g.kind,
        subkind: g.subkind,
        dont_merge: g.dont_merge != 0,
    });
    o
}

/// `hwloc_topology_insert_group_object`, as hwloc 2.14's: the Group goes
/// where its sets say and the caller's own pointer is returned, the object
/// keeping its address, userdata and the bitmaps the caller set; when an
/// object with the same sets is there already, the Group is merged into
/// it, freed, and that object returned; when it cannot be inserted (no
/// set, Groups filtered out, a conflict with the tree) it is freed and
/// NULL returned.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_insert_group_object(
    topology: hwloc_topology_t,
    group: hwloc_obj_t,
) -> hwloc_obj_t {
    entry!(topology, null_mut(), |h| {
        let Some(t) = h.loaded_mut() else {
            set_errno(libc::EINVAL);
            return null_mut();
        };
        let Some(pos) = t.pending.iter().position(|n| std::ptr::eq(&n.obj, group)) else {
            set_errno(libc::EINVAL);
            return null_mut();
        };
        // From here on the Group is the library's to keep or free.
        let node = t.pending.swap_remove(pos);
        match insert_group(t, &node) {
            Ok(GroupPlace::Inserted(id)) => {
                // The caller's object becomes the model object's mirror.
                let mut node = node;
                node.id = Some(id);
                t.nodes.insert(id, node);
                t.sync();
                t.ptr_of(id)
            }
            Ok(GroupPlace::Merged(id)) => {
                drop(node);
                t.ptr_of(id)
            }
            Err(()) => {
                drop(node);
                set_errno(libc::EINVAL);
                null_mut()
            }
        }
    })
}

/// `hwloc_topology_free_group_object` (hwloc 2.12): frees a Group from
/// `hwloc_topology_alloc_group_object` that will not be inserted.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_free_group_object(
    topology: hwloc_topology_t,
    group: hwloc_obj_t,
) -> c_int {
    entry!(
        topology,
        loaded_mut | t | {
            // Only a Group this topology handed out and still holds: anything
            // else is refused, never freed.
            let Some(pos) = t.pending.iter().position(|n| std::ptr::eq(&n.obj, group)) else {
                return fail(libc::EINVAL);
            };
            drop(t.pending.swap_remove(pos));
            0
        }
    )
}

/// `hwloc_obj_set_subtype` (hwloc 2.11): replaces the object's subtype
/// with a copy of `subtype` (NULL removes it).
#[no_mangle]
pub unsafe extern "C" fn hwloc_obj_set_subtype(
    topology: hwloc_topology_t,
    obj: hwloc_obj_t,
    subtype: *const c_char,
) -> c_int {
    guard(-1, || {
        if topology.is_null() || obj.is_null() {
            return fail(libc::EINVAL);
        }
        let copy = if subtype.is_null() {
            null_mut()
        } else {
            // SAFETY: a NUL-terminated string (the caller's contract).
            let c = unsafe { libc::strdup(subtype) };
            if c.is_null() {
                return fail(libc::ENOMEM);
            }
            c
        };
        // SAFETY: the caller's object; its subtype is malloc'ed or NULL,
        // as hwloc documents (it frees it too). Only the field inside the
        // struct is touched; the model takes it as it takes any edit of
        // the C fields (`pull_from_c`).
        unsafe {
            libc::free((*obj).subtype as *mut c_void);
            (*obj).subtype = copy;
        }
        0
    })
}

/// `hwloc_obj_add_other_obj_sets`: ORs each set `src` has into `dst`'s
/// (allocating it), to build a Group's sets from the objects it will hold.
#[no_mangle]
pub unsafe extern "C" fn hwloc_obj_add_other_obj_sets(dst: hwloc_obj_t, src: hwloc_obj_t) -> c_int {
    guard(-1, || {
        if dst.is_null() || src.is_null() {
            return fail(libc::EINVAL);
        }
        // SAFETY: two objects of the caller's (maybe the same one); their
        // set fields are NULL or bitmaps of this library
        // (hwloc_bitmap_alloc), as hwloc requires. The sets of `src` are
        // read as pointers first, so no reference aliases `dst`.
        let from = unsafe {
            [
                (*src).cpuset,
                (*src).complete_cpuset,
                (*src).nodeset,
                (*src).complete_nodeset,
            ]
        };
        // SAFETY: as above.
        let to = unsafe {
            [
                &raw mut (*dst).cpuset,
                &raw mut (*dst).complete_cpuset,
                &raw mut (*dst).nodeset,
                &raw mut (*dst).complete_nodeset,
            ]
        };
        for (to, from) in to.into_iter().zip(from) {
            if from.is_null() {
                continue;
            }
            // SAFETY: `to` points at a field of `dst` (see above).
            unsafe {
                if (*to).is_null() {
                    *to = crate::bitmap::new_raw(wloc_core::Bitmap::new());
                } else if *to == from {
                    continue; // the same bitmap: OR-ing changes nothing
                }
                let bits = &(*from).bits | &(**to).bits;
                (**to).bits = bits;
            }
        }
        0
    })
}

/// Where [`insert_group`] put a Group.
enum GroupPlace {
    /// In the tree under this id: the caller's object stands for it.
    Inserted(ObjId),
    /// Merged into this existing object.
    Merged(ObjId),
}

/// Inserts the Group `node` describes into the model (which is left as it
/// was on failure); the mirror is synced but for the Group's own node.
fn insert_group(t: &mut hwloc_topology, node: &Node) -> Result<GroupPlace, ()> {
    let mut o = group_from_node(node);
    // Sets the caller left out are derived as hwloc does: a nodeset
    // only gives the PUs of those nodes.
    // An empty set counts as none, as in hwloc.
    let empty = |c: &Option<wloc_core::CpuSet>| c.as_ref().is_none_or(|c| c.is_empty());
    if empty(&o.cpuset) && empty(&o.complete_cpuset) {
        if let Some(ns) = o.nodeset.clone().or_else(|| o.complete_nodeset.clone()) {
            let mut cs = wloc_core::CpuSet::new();
            for n in t.model.objs_by_type(ObjType::NUMANode) {
                let no = t.model.obj(n);
                if no.os_index.is_some_and(|i| ns.is_set(i)) {
                    if let Some(c) = &no.cpuset {
                        cs = &cs | c;
                    }
                }
            }
            o.cpuset = Some(cs);
        }
    }
    // Each set is narrowed to the machine's, as hwloc does: a wider
    // complete set or nodeset would reach past the tree (indexes of
    // nodes or CPUs that are not there).
    let topo_cpuset = t.model.cpuset().clone();
    if let Some(c) = &mut o.cpuset {
        *c = &*c & &topo_cpuset;
    }
    if let Some(c) = &mut o.complete_cpuset {
        *c = &*c & t.model.complete_cpuset();
    }
    if let Some(n) = &mut o.nodeset {
        *n = &*n & t.model.nodeset();
    }
    if let Some(n) = &mut o.complete_nodeset {
        *n = &*n & t.model.complete_nodeset();
    }
    if o.complete_cpuset.is_none() {
        o.complete_cpuset = o.cpuset.clone();
    }
    // Only a complete cpuset given: the Group's cpuset is what of it the
    // machine has (hwloc places such a Group by its complete set).
    if empty(&o.cpuset) {
        o.cpuset = o.complete_cpuset.as_ref().map(|c| c & &topo_cpuset);
    }
    if o.cpuset.as_ref().is_none_or(|c| c.is_empty()) || !t.model.keeps_type(ObjType::Group) {
        return Err(());
    }
    // hwloc compares the Group with the root by complete cpusets when it
    // has one (hwloc_obj_cmp_sets): a Group not strictly inside the root
    // is merged into the root, which is returned.
    let key = o.complete_cpuset.as_ref().or(o.cpuset.as_ref());
    let root_set = t.model.complete_cpuset();
    if key.is_some_and(|k| !k.is_included_in(root_set) || k == root_set) {
        return Ok(GroupPlace::Merged(t.model.root()));
    }
    let cpuset = o.cpuset.clone();
    o.gp_index = node.obj.gp_index;
    let gp = o.gp_index;
    let mut m = t.model.clone();
    let placed = match m.insert_by_cpuset(o) {
        Ok(Some(i)) => i,
        _ => return Err(()),
    };
    if m.finish().is_err() {
        return Err(());
    }
    // Inserting a Group never removes an object that was there: callers
    // hold pointers to them (hwloc keeps every one). Sets that do not
    // agree with each other could make completion drop one; refuse those.
    let kept: std::collections::HashSet<u64> = m.ids().map(|i| m.obj(i).gp_index).collect();
    if t.model
        .ids()
        .any(|i| !kept.contains(&t.model.obj(i).gp_index))
    {
        return Err(());
    }
    t.model = m;
    // The Group itself, if it is still in the tree after completion.
    if let wloc_core::topology::Inserted::New(id) = placed {
        if t.model.get(id).is_some_and(|o| o.gp_index == gp) {
            return Ok(GroupPlace::Inserted(id));
        }
    }
    t.sync();
    // The object it was merged into (an identical one already there, as
    // hwloc returns).
    t.model
        .get(placed.id())
        .map(|_| placed.id())
        .or_else(|| cpuset.as_ref().and_then(|c| t.model.obj_covering_cpuset(c)))
        .map(GroupPlace::Merged)
        .ok_or(())
}

/// `hwloc_topology_set_userdata_export_callback`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_set_userdata_export_callback(
    topology: hwloc_topology_t,
    export_cb: Option<ExportCallback>,
) {
    entry!(topology, (), |h| {
        if let Some(t) = h.get_mut() {
            t.export_cb = export_cb;
        }
    })
}

/// `hwloc_topology_set_userdata_import_callback`.
#[no_mangle]
pub unsafe extern "C" fn hwloc_topology_set_userdata_import_callback(
    topology: hwloc_topology_t,
    import_cb: Option<ImportCallback>,
) {
    entry!(topology, (), |h| {
        if let Some(t) = h.get_mut() {
            t.import_cb = import_cb;
        }
    })
}

/// The loaded model behind a handle (for tests and the property checks).
///
/// # Safety
/// `topology` is a live handle.
pub unsafe fn model<'a>(topology: hwloc_topology_t) -> Option<&'a Topology> {
    // SAFETY: see above.
    unsafe { loaded(topology) }.map(|t| &t.model)
}
