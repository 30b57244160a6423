//! hwloc 2.x's public C structures, laid out exactly as hwloc 2.9's
//! `hwloc.h`, `distances.h` and `diff.h` declare them: applications compile
//! hwloc's inline helpers into themselves and walk these fields directly.
//! `tests/layout.c` checks every `sizeof` and `offsetof` against the
//! system's headers.

use std::os::raw::{c_char, c_float, c_int, c_uchar, c_uint, c_ulong, c_ushort, c_void};

use wloc_core::Bitmap;

/// `hwloc_obj_type_t` (a C enum: an `int`).
pub type hwloc_obj_type_t = c_int;
/// `hwloc_bitmap_t`.
pub type hwloc_bitmap_t = *mut hwloc_bitmap_s;
/// `hwloc_const_bitmap_t`.
pub type hwloc_const_bitmap_t = *const hwloc_bitmap_s;
/// `hwloc_obj_t`.
pub type hwloc_obj_t = *mut hwloc_obj;

/// `struct hwloc_bitmap_s`. Opaque in hwloc's public headers, but its
/// first fields are laid out as hwloc's own (a count of `unsigned long`
/// words, the count allocated, the words, and whether bits past them are
/// set) and kept equal to the set after every change: programs built with
/// hwloc's private headers read them (hwloc's `hwloc_topology_abi` test
/// checks them as part of the topology ABI). The set itself is `bits`; the
/// fields are only a view of it, never read back.
#[repr(C)]
pub struct hwloc_bitmap_s {
    ulongs_count: c_uint,
    ulongs_allocated: c_uint,
    ulongs: *mut c_ulong,
    infinite: c_int,
    /// Storage of the words `ulongs` points to.
    view: Vec<c_ulong>,
    bits: Bitmap,
}

// SAFETY: `ulongs` only ever points into this value's own `view`, which is
// written only through `&mut self`; sharing or sending the value is as safe
// as sharing or sending the `Vec` and the `Bitmap` it holds.
unsafe impl Send for hwloc_bitmap_s {}
// SAFETY: see above.
unsafe impl Sync for hwloc_bitmap_s {}

/// `c_ulong`s per 64-bit word of a set (1 here, 2 on 32-bit targets).
const HALVES: usize = std::mem::size_of::<u64>() / std::mem::size_of::<c_ulong>();

impl hwloc_bitmap_s {
    /// A C bitmap holding `bits`.
    pub(crate) fn new(bits: Bitmap) -> Self {
        let mut b = hwloc_bitmap_s {
            ulongs_count: 0,
            ulongs_allocated: 0,
            ulongs: std::ptr::null_mut(),
            infinite: 0,
            view: Vec::new(),
            bits,
        };
        b.refresh_view();
        b
    }

    /// The set.
    pub(crate) fn bits(&self) -> &Bitmap {
        &self.bits
    }

    /// Replaces the set.
    pub(crate) fn set_bits(&mut self, bits: Bitmap) {
        self.bits = bits;
        self.refresh_view();
    }

    /// Changes the set in place with `f`.
    #[inline]
    pub(crate) fn update<R>(&mut self, f: impl FnOnce(&mut Bitmap) -> R) -> R {
        let r = f(&mut self.bits);
        self.refresh_view();
        r
    }

    /// Rewrites hwloc's layout from the set: at least one word, the words
    /// stored (bits past them all equal `infinite`).
    #[inline]
    fn refresh_view(&mut self) {
        let fill: u64 = if self.bits.is_infinite() { !0 } else { 0 };
        if HALVES == 1 && self.view_shows(self.bits.words(), fill) {
            // Most queries answer what the set already held: the view
            // stands (a binding asks millions of times).
            return;
        }
        self.rebuild_view();
    }

    /// [`Self::refresh_view`] when the view changes.
    #[cold]
    fn rebuild_view(&mut self) {
        let words = self.bits.words();
        let fill: u64 = if self.bits.is_infinite() { !0 } else { 0 };
        let wanted = words.len().max(1) * HALVES;
        self.view.clear();
        // The view is an extra; when its memory cannot be had, it shows one
        // word of the fill value rather than failing the change to the set.
        if self.view.try_reserve(wanted).is_ok() {
            for &w in if words.is_empty() {
                std::slice::from_ref(&fill)
            } else {
                words
            } {
                for half in 0..HALVES {
                    self.view
                        .push((w >> (half * 8 * std::mem::size_of::<c_ulong>())) as c_ulong);
                }
            }
        } else if self.view.try_reserve(HALVES).is_ok() {
            self.view
                .extend(std::iter::repeat_n(fill as c_ulong, HALVES));
        }
        self.ulongs_count = self.view.len() as c_uint;
        self.ulongs_allocated = self.view.capacity() as c_uint;
        self.ulongs = self.view.as_mut_ptr();
        self.infinite = c_int::from(self.bits.is_infinite());
    }
}

impl hwloc_bitmap_s {
    /// Whether the view (one `c_ulong` per word) already shows `words`
    /// followed by `fill`.
    #[inline]
    fn view_shows(&self, words: &[u64], fill: u64) -> bool {
        let shown = if words.is_empty() {
            std::slice::from_ref(&fill)
        } else {
            words
        };
        self.infinite == c_int::from(fill != 0)
            && std::ptr::eq(self.ulongs, self.view.as_ptr())
            && self.view.len() == shown.len()
            // c_ulong is u64 here, u32 on 32-bit targets.
            && self.view.iter().zip(shown).all(|(&v, &w)| {
                #[allow(clippy::unnecessary_cast)]
                let v = v as u64;
                v == w
            })
    }
}

impl Default for hwloc_bitmap_s {
    fn default() -> Self {
        Self::new(Bitmap::new())
    }
}

impl Clone for hwloc_bitmap_s {
    fn clone(&self) -> Self {
        Self::new(self.bits.clone())
    }
}

impl std::fmt::Debug for hwloc_bitmap_s {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.bits.fmt(f)
    }
}

/// A new C bitmap holding `bits`.
pub(crate) fn new_raw(bits: Bitmap) -> *mut hwloc_bitmap_s {
    Box::into_raw(Box::new(hwloc_bitmap_s::new(bits)))
}

/// Frees a C bitmap from [`new_raw`] (NULL is fine).
pub(crate) fn free_raw(b: *mut hwloc_bitmap_s) {
    if !b.is_null() {
        // SAFETY: every C bitmap is a Box from new_raw.
        drop(unsafe { Box::from_raw(b) });
    }
}

/// `HWLOC_UNKNOWN_INDEX`.
pub const HWLOC_UNKNOWN_INDEX: c_uint = c_uint::MAX;

/// `struct hwloc_obj`.
#[repr(C)]
pub struct hwloc_obj {
    /// Type of object (`type` in C).
    pub type_: hwloc_obj_type_t,
    /// Subtype string that describes the type better (`Die`, `GPU`...), or NULL.
    pub subtype: *mut c_char,
    /// OS-provided physical index, or `HWLOC_UNKNOWN_INDEX`.
    pub os_index: c_uint,
    /// Object-specific name, or NULL.
    pub name: *mut c_char,
    /// Total memory in bytes in the NUMA nodes below this object.
    pub total_memory: u64,
    /// Type-specific attributes, or NULL for types that have none.
    pub attr: *mut hwloc_obj_attr_u,
    /// Vertical index in the hierarchy (negative for the special levels: NUMA nodes, bridges, PCI and OS devices, Misc, memory-side caches).
    pub depth: c_int,
    /// Horizontal index among the objects of the same depth.
    pub logical_index: c_uint,
    /// Next object of the same depth, or NULL.
    pub next_cousin: *mut hwloc_obj,
    /// Previous object of the same depth, or NULL.
    pub prev_cousin: *mut hwloc_obj,
    /// Parent object, or NULL for the root.
    pub parent: *mut hwloc_obj,
    /// Index in the parent's list of children of the same kind (normal, memory, I/O or Misc).
    pub sibling_rank: c_uint,
    /// Next object below the same parent in the same list, or NULL.
    pub next_sibling: *mut hwloc_obj,
    /// Previous object below the same parent in the same list, or NULL.
    pub prev_sibling: *mut hwloc_obj,
    /// Number of normal children.
    pub arity: c_uint,
    /// The `arity` normal children, in order.
    pub children: *mut *mut hwloc_obj,
    /// First normal child, or NULL.
    pub first_child: *mut hwloc_obj,
    /// Last normal child, or NULL.
    pub last_child: *mut hwloc_obj,
    /// Non-zero if the normal subtree below is symmetric (all children alike, recursively).
    pub symmetric_subtree: c_int,
    /// Number of memory children (NUMA nodes, memory-side caches).
    pub memory_arity: c_uint,
    /// First memory child, or NULL.
    pub memory_first_child: *mut hwloc_obj,
    /// Number of I/O children (bridges, PCI and OS devices).
    pub io_arity: c_uint,
    /// First I/O child, or NULL.
    pub io_first_child: *mut hwloc_obj,
    /// Number of Misc children.
    pub misc_arity: c_uint,
    /// First Misc child, or NULL.
    pub misc_first_child: *mut hwloc_obj,
    /// The PUs below this object (NULL for I/O and Misc objects).
    pub cpuset: hwloc_bitmap_t,
    /// All the PUs below, offline and disallowed ones included.
    pub complete_cpuset: hwloc_bitmap_t,
    /// The NUMA nodes local to this object (NULL for I/O and Misc objects).
    pub nodeset: hwloc_bitmap_t,
    /// All the NUMA nodes local to it, disallowed ones included.
    pub complete_nodeset: hwloc_bitmap_t,
    /// The `infos_count` (name, value) pairs of the object.
    pub infos: *mut hwloc_info_s,
    /// Number of entries in `infos`.
    pub infos_count: c_uint,
    /// The application's pointer: the library never reads it.
    pub userdata: *mut c_void,
    /// Global persistent index: unique and stable for the topology's lifetime, kept in XML.
    pub gp_index: u64,
}

/// `struct hwloc_memory_page_type_s`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hwloc_memory_page_type_s {
    /// Size of these pages in bytes.
    pub size: u64,
    /// Number of pages of this size.
    pub count: u64,
}

/// `struct hwloc_numanode_attr_s`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hwloc_numanode_attr_s {
    /// Local memory in bytes.
    pub local_memory: u64,
    /// Number of entries in `page_types`.
    pub page_types_len: c_uint,
    /// The node's page sizes and counts, or NULL.
    pub page_types: *mut hwloc_memory_page_type_s,
}

/// `struct hwloc_cache_attr_s`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hwloc_cache_attr_s {
    /// Size of the cache in bytes.
    pub size: u64,
    /// Level of the cache (1 for L1...).
    pub depth: c_uint,
    /// Cache-line size in bytes, 0 if unknown.
    pub linesize: c_uint,
    /// Ways of associativity: -1 fully associative, 0 unknown.
    pub associativity: c_int,
    /// `hwloc_obj_cache_type_t`: unified 0, data 1, instruction 2.
    pub type_: c_int,
}

/// `struct hwloc_group_attr_s`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hwloc_group_attr_s {
    /// Depth among Group objects (0 for the highest).
    pub depth: c_uint,
    /// Internal kind of the group (what made it), for merging decisions.
    pub kind: c_uint,
    /// Internal subkind, telling apart levels of groups of the same kind.
    pub subkind: c_uint,
    /// Non-zero if the group must not be merged with an identical parent or child.
    pub dont_merge: c_uchar,
}

/// `struct hwloc_pcidev_attr_s` (16-bit PCI domains, hwloc's default ABI).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hwloc_pcidev_attr_s {
    /// PCI domain.
    pub domain: c_ushort,
    /// PCI bus number.
    pub bus: c_uchar,
    /// PCI device number.
    pub dev: c_uchar,
    /// PCI function number.
    pub func: c_uchar,
    /// PCI class (and subclass) of the device.
    pub class_id: c_ushort,
    /// PCI vendor id.
    pub vendor_id: c_ushort,
    /// PCI device id.
    pub device_id: c_ushort,
    /// PCI subsystem vendor id.
    pub subvendor_id: c_ushort,
    /// PCI subsystem device id.
    pub subdevice_id: c_ushort,
    /// PCI revision.
    pub revision: c_uchar,
    /// Link speed in GB/s (0 if unknown).
    pub linkspeed: c_float,
}

/// The downstream side of a PCI bridge.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hwloc_bridge_downstream_pci_s {
    /// PCI domain below the bridge.
    pub domain: c_ushort,
    /// First bus number below the bridge.
    pub secondary_bus: c_uchar,
    /// Last bus number below the bridge.
    pub subordinate_bus: c_uchar,
}

/// `struct hwloc_bridge_attr_s`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hwloc_bridge_attr_s {
    /// `upstream.pci` (the only member of hwloc's union).
    pub upstream_pci: hwloc_pcidev_attr_s,
    /// `hwloc_obj_bridge_type_t`: host 0, PCI 1.
    pub upstream_type: c_int,
    /// `downstream.pci`.
    pub downstream_pci: hwloc_bridge_downstream_pci_s,
    /// `hwloc_obj_bridge_type_t` of the downstream side: PCI 1.
    pub downstream_type: c_int,
    /// Depth of the bridge among bridges (0 for host bridges).
    pub depth: c_uint,
}

/// `struct hwloc_osdev_attr_s`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hwloc_osdev_attr_s {
    /// `hwloc_obj_osdev_type_t`.
    pub type_: c_int,
}

/// `union hwloc_obj_attr_u`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union hwloc_obj_attr_u {
    /// Attributes of a NUMA node.
    pub numanode: hwloc_numanode_attr_s,
    /// Attributes of a cache.
    pub cache: hwloc_cache_attr_s,
    /// Attributes of a Group.
    pub group: hwloc_group_attr_s,
    /// Attributes of a PCI device.
    pub pcidev: hwloc_pcidev_attr_s,
    /// Attributes of a bridge.
    pub bridge: hwloc_bridge_attr_s,
    /// Attributes of an OS device.
    pub osdev: hwloc_osdev_attr_s,
}

impl Default for hwloc_obj_attr_u {
    fn default() -> Self {
        // Zeroed as hwloc's calloc'ed attributes are.
        hwloc_obj_attr_u {
            bridge: hwloc_bridge_attr_s::default(),
        }
    }
}

/// `struct hwloc_info_s`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hwloc_info_s {
    /// The info's name (NUL-terminated).
    pub name: *mut c_char,
    /// The info's value (NUL-terminated).
    pub value: *mut c_char,
}

/// `struct hwloc_topology_discovery_support`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hwloc_topology_discovery_support {
    /// Counting the PUs is supported.
    pub pu: c_uchar,
    /// Counting the NUMA nodes is supported.
    pub numa: c_uchar,
    /// Reading the memory of NUMA nodes is supported.
    pub numa_memory: c_uchar,
    /// Finding the PUs the process may not use is supported.
    pub disallowed_pu: c_uchar,
    /// Finding the NUMA nodes the process may not use is supported.
    pub disallowed_numa: c_uchar,
    /// Ranking CPU kinds by efficiency is supported.
    pub cpukind_efficiency: c_uchar,
}

/// `struct hwloc_topology_cpubind_support`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hwloc_topology_cpubind_support {
    /// Binding the whole current process to CPUs is supported.
    pub set_thisproc_cpubind: c_uchar,
    /// Getting the CPU binding of the whole current process is supported.
    pub get_thisproc_cpubind: c_uchar,
    /// Binding a given process to CPUs is supported.
    pub set_proc_cpubind: c_uchar,
    /// Getting the CPU binding of a given process is supported.
    pub get_proc_cpubind: c_uchar,
    /// Binding the current thread to CPUs is supported.
    pub set_thisthread_cpubind: c_uchar,
    /// Getting the CPU binding of the current thread is supported.
    pub get_thisthread_cpubind: c_uchar,
    /// Binding a given thread to CPUs is supported.
    pub set_thread_cpubind: c_uchar,
    /// Getting the CPU binding of a given thread is supported.
    pub get_thread_cpubind: c_uchar,
    /// Getting the CPUs the whole current process last ran on is supported.
    pub get_thisproc_last_cpu_location: c_uchar,
    /// Getting the CPUs a given process last ran on is supported.
    pub get_proc_last_cpu_location: c_uchar,
    /// Getting the CPUs the current thread last ran on is supported.
    pub get_thisthread_last_cpu_location: c_uchar,
}

/// `struct hwloc_topology_membind_support`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hwloc_topology_membind_support {
    /// Binding the memory of the whole current process is supported.
    pub set_thisproc_membind: c_uchar,
    /// Getting the memory binding of the whole current process is supported.
    pub get_thisproc_membind: c_uchar,
    /// Binding the memory of a given process is supported.
    pub set_proc_membind: c_uchar,
    /// Getting the memory binding of a given process is supported.
    pub get_proc_membind: c_uchar,
    /// Binding the memory of the current thread is supported.
    pub set_thisthread_membind: c_uchar,
    /// Getting the memory binding of the current thread is supported.
    pub get_thisthread_membind: c_uchar,
    /// Binding a given memory area is supported.
    pub set_area_membind: c_uchar,
    /// Getting the binding of a given memory area is supported.
    pub get_area_membind: c_uchar,
    /// Allocating bound memory is supported.
    pub alloc_membind: c_uchar,
    /// The first-touch policy is supported.
    pub firsttouch_membind: c_uchar,
    /// The bind policy is supported.
    pub bind_membind: c_uchar,
    /// The interleave policy is supported.
    pub interleave_membind: c_uchar,
    /// The next-touch policy is supported.
    pub nexttouch_membind: c_uchar,
    /// Migrating memory already allocated is supported.
    pub migrate_membind: c_uchar,
    /// Finding where the pages of a memory area are is supported.
    pub get_area_memlocation: c_uchar,
    /// The weighted interleave policy is supported (hwloc 2.14; programs
    /// built with older headers see the structure without it).
    pub weighted_interleave_membind: c_uchar,
}

/// `struct hwloc_topology_misc_support`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hwloc_topology_misc_support {
    /// The support flags were imported with the topology (from XML), not found on this machine.
    pub imported_support: c_uchar,
}

/// `struct hwloc_topology_support`.
#[repr(C)]
pub struct hwloc_topology_support {
    /// What discovery supports.
    pub discovery: *mut hwloc_topology_discovery_support,
    /// Which CPU binding calls are supported.
    pub cpubind: *mut hwloc_topology_cpubind_support,
    /// Which memory binding calls and policies are supported.
    pub membind: *mut hwloc_topology_membind_support,
    /// Miscellaneous support flags.
    pub misc: *mut hwloc_topology_misc_support,
}

/// `struct hwloc_distances_s`.
#[repr(C)]
pub struct hwloc_distances_s {
    /// Number of objects the matrix describes.
    pub nbobjs: c_uint,
    /// The `nbobjs` objects, in matrix order.
    pub objs: *mut hwloc_obj_t,
    /// OR of `hwloc_distances_kind_e` flags: what the values mean and where they come from.
    pub kind: c_ulong,
    /// The `nbobjs * nbobjs` values, row-major: `values[i * nbobjs + j]` goes from `objs[i]` to `objs[j]`.
    pub values: *mut u64,
}

/// `union hwloc_topology_diff_obj_attr_u`: every member starts with the
/// attribute type (size 0, name 1, info 2); `uint64` and `string` follow.
#[repr(C)]
#[derive(Clone, Copy)]
pub union hwloc_topology_diff_obj_attr_u {
    /// The attribute type alone, to tell which member holds.
    pub generic: hwloc_topology_diff_obj_attr_generic_s,
    /// A change of an integer attribute (the local memory size).
    pub uint64: hwloc_topology_diff_obj_attr_uint64_s,
    /// A change of a string attribute (the name, or an info's value).
    pub string: hwloc_topology_diff_obj_attr_string_s,
}

/// `struct hwloc_topology_diff_obj_attr_generic_s`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hwloc_topology_diff_obj_attr_generic_s {
    /// Attribute type: size 0, name 1, info 2.
    pub type_: c_int,
}

/// `struct hwloc_topology_diff_obj_attr_uint64_s`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hwloc_topology_diff_obj_attr_uint64_s {
    /// Attribute type: size 0.
    pub type_: c_int,
    /// Which value of that type changes (unused for the size: 0).
    pub index: u64,
    /// The value in the old topology.
    pub oldvalue: u64,
    /// The value in the new topology.
    pub newvalue: u64,
}

/// `struct hwloc_topology_diff_obj_attr_string_s`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hwloc_topology_diff_obj_attr_string_s {
    /// Attribute type: name 1, info 2.
    pub type_: c_int,
    /// The info's name (NULL for the object's name).
    pub name: *mut c_char,
    /// The value in the old topology.
    pub oldvalue: *mut c_char,
    /// The value in the new topology.
    pub newvalue: *mut c_char,
}

/// `union hwloc_topology_diff_u`: every member starts with the diff type
/// (object attribute 0, too complex 1) and the next diff.
#[repr(C)]
#[derive(Clone, Copy)]
pub union hwloc_topology_diff_u {
    /// The diff type and next diff alone, to tell which member holds.
    pub generic: hwloc_topology_diff_generic_s,
    /// A change of one object's attribute.
    pub obj_attr: hwloc_topology_diff_obj_attr_s,
    /// A difference the format cannot express.
    pub too_complex: hwloc_topology_diff_too_complex_s,
}

/// `hwloc_topology_diff_t`.
pub type hwloc_topology_diff_t = *mut hwloc_topology_diff_u;

/// `struct hwloc_topology_diff_generic_s`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hwloc_topology_diff_generic_s {
    /// Diff type: object attribute 0, too complex 1.
    pub type_: c_int,
    /// The next diff of the list, or NULL.
    pub next: *mut hwloc_topology_diff_u,
}

/// `struct hwloc_topology_diff_obj_attr_s`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hwloc_topology_diff_obj_attr_s {
    /// Diff type: object attribute 0.
    pub type_: c_int,
    /// The next diff of the list, or NULL.
    pub next: *mut hwloc_topology_diff_u,
    /// Depth of the changed object in the old topology.
    pub obj_depth: c_int,
    /// Logical index of the changed object within its depth.
    pub obj_index: c_uint,
    /// What changes in that object.
    pub diff: hwloc_topology_diff_obj_attr_u,
}

/// `struct hwloc_topology_diff_too_complex_s`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hwloc_topology_diff_too_complex_s {
    /// Diff type: too complex 1.
    pub type_: c_int,
    /// The next diff of the list, or NULL.
    pub next: *mut hwloc_topology_diff_u,
    /// Depth of the object where the difference was found.
    pub obj_depth: c_int,
    /// Logical index of that object within its depth.
    pub obj_index: c_uint,
}

/// `struct hwloc_location` (memattrs.h): a type (cpuset 1, object 0) and
/// a union of a cpuset and an object.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hwloc_location {
    /// Which member of `location` holds: object 0, cpuset 1.
    pub type_: c_int,
    /// The object or the cpuset.
    pub location: hwloc_location_u,
}

/// `union hwloc_location_u`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union hwloc_location_u {
    /// A set of PUs.
    pub cpuset: hwloc_const_bitmap_t,
    /// An object of the topology.
    pub object: *mut hwloc_obj,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// hwloc's private layout, read as programs built with its private
    /// headers read it: count at 0, allocated at 4, words at 8, infinite
    /// at 16.
    fn layout(b: &hwloc_bitmap_s) -> (u32, u32, Vec<c_ulong>, c_int) {
        let base = (b as *const hwloc_bitmap_s).cast::<u8>();
        // SAFETY: the offsets are those of the repr(C) fields above.
        unsafe {
            let count = *base.cast::<c_uint>();
            let allocated = *base.add(4).cast::<c_uint>();
            let words = *base.add(8).cast::<*const c_ulong>();
            let infinite = *base.add(16).cast::<c_int>();
            let words = std::slice::from_raw_parts(words, count as usize).to_vec();
            (count, allocated, words, infinite)
        }
    }

    #[test]
    fn hwloc_private_layout_follows_every_change() {
        let mut b = hwloc_bitmap_s::new(Bitmap::new());
        let (count, allocated, words, infinite) = layout(&b);
        assert!(count >= 1 && allocated >= count);
        assert_eq!((words[0], infinite), (0, 0));

        b.update(|s| s.set(260));
        let (count, allocated, words, infinite) = layout(&b);
        assert!(count >= 5 && allocated >= count);
        assert_eq!(&words[..5], &[0, 0, 0, 0, 0x10]);
        assert_eq!(infinite, 0);

        b.set_bits(Bitmap::from_range(0, None));
        let (_, _, words, infinite) = layout(&b);
        assert_eq!((words[0], infinite), (!0, 1));

        let copy = b.clone();
        drop(b);
        let (_, _, words, infinite) = layout(&copy);
        assert_eq!((words[0], infinite), (!0, 1));
    }
}
