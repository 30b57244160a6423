//! The C mirror of the model's objects: each [`Node`] is hwloc's `struct
//! hwloc_obj` first (a `hwloc_obj_t` is its address), then what it points
//! to; its own allocation keyed by the model's object id, so that an
//! object surviving a change keeps its address and `userdata`, as in
//! hwloc.

use std::collections::BTreeSet;
use std::os::raw::{c_char, c_int, c_uint, c_void};
use std::ptr::null_mut;
use std::sync::Mutex;

use wloc_core::object::BridgeUpstream;
use wloc_core::{Bitmap, ObjAttr, ObjId, ObjType, Object};

use crate::ffi::{c_str, c_strdup};
use crate::types::*;

/// The C view of one object: hwloc's `struct hwloc_obj` first (so a
/// `hwloc_obj_t` is the address of its node), then what it points to.
#[repr(C)]
pub(crate) struct Node {
    pub(crate) obj: hwloc_obj,
    pub(crate) attr: hwloc_obj_attr_u,
    /// The model's id; `None` for a Group allocated by
    /// `hwloc_topology_alloc_group_object` and not inserted yet.
    pub(crate) id: Option<ObjId>,
    /// The topology holding the object (a `*mut hwloc_topology`, untyped
    /// here: the mirror sits below the handle): functions that take only
    /// an object (`hwloc_obj_add_info`) reach the model through it.
    pub(crate) topo: *mut c_void,
    pub(crate) children: Vec<*mut hwloc_obj>,
    pub(crate) page_types: Vec<hwloc_memory_page_type_s>,
}

/// The addresses of the objects this library allocated and has not freed
/// yet. An entry that takes an object alone (`hwloc_obj_add_info`) has
/// only this to tell a library object (a [`Node`], which it may read past
/// the `struct hwloc_obj`) from a program's own `struct hwloc_obj`, which
/// must not be read past its end.
pub(crate) static LIVE_NODES: Mutex<BTreeSet<usize>> = Mutex::new(BTreeSet::new());

pub(crate) fn live_nodes() -> std::sync::MutexGuard<'static, BTreeSet<usize>> {
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
    pub(crate) fn new(id: Option<ObjId>) -> Box<Node> {
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
    pub(crate) fn addr(&self) -> usize {
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
    pub(crate) fn c_infos(&self) -> &[hwloc_info_s] {
        if self.obj.infos.is_null() || self.obj.infos_count == 0 {
            return &[];
        }
        // SAFETY: a non-NULL infos holds infos_count entries (ours, or a
        // program's that follows hwloc's layout).
        unsafe { std::slice::from_raw_parts(self.obj.infos, self.obj.infos_count as usize) }
    }

    pub(crate) fn clear_infos(&mut self) {
        self.truncate_infos(0);
    }

    /// Frees the entries from `keep` on (and the array when none stay).
    pub(crate) fn truncate_infos(&mut self, keep: usize) {
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

    pub(crate) fn set_string(slot: &mut *mut c_char, v: Option<&str>) {
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

    pub(crate) fn set_bitmap(slot: &mut hwloc_bitmap_t, v: Option<&Bitmap>) {
        match (v, slot.is_null()) {
            (None, _) => {
                crate::types::free_raw(*slot);
                *slot = null_mut();
            }
            (Some(b), true) => *slot = crate::types::new_raw(b.clone()),
            (Some(b), false) => {
                // SAFETY: a non-NULL slot holds a bitmap we (or the user,
                // through hwloc_bitmap_alloc) allocated.
                let cur = unsafe { &mut **slot };
                if cur.bits() != b {
                    cur.set_bits(b.clone());
                }
            }
        }
    }

    /// Fills the descriptive fields from the model's object.
    pub(crate) fn fill(&mut self, o: &Object, infos: &[wloc_core::object::Info]) {
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

    pub(crate) fn fill_attr(&mut self, o: &Object) {
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
pub(crate) fn write_pci(a: &mut hwloc_pcidev_attr_s, p: &wloc_core::object::PciAttr) {
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
            crate::types::free_raw(b);
        }
    }
}

/// The model type of a C type value.
pub(crate) fn type_from_c(t: hwloc_obj_type_t) -> Option<ObjType> {
    usize::try_from(t)
        .ok()
        .and_then(|i| ObjType::ALL.get(i).copied())
}
