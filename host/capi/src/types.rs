//! hwloc 2.x's public C structures, laid out exactly as hwloc 2.9's
//! `hwloc.h`, `distances.h` and `diff.h` declare them: applications compile
//! hwloc's inline helpers into themselves and walk these fields directly.
//! `tests/layout.c` checks every `sizeof` and `offsetof` against the
//! system's headers.

use std::os::raw::{c_char, c_float, c_int, c_uchar, c_uint, c_ulong, c_ushort, c_void};

use crate::bitmap::hwloc_bitmap_s;

/// `hwloc_obj_type_t` (a C enum: an `int`).
pub type hwloc_obj_type_t = c_int;
/// `hwloc_bitmap_t`.
pub type hwloc_bitmap_t = *mut hwloc_bitmap_s;
/// `hwloc_const_bitmap_t`.
pub type hwloc_const_bitmap_t = *const hwloc_bitmap_s;
/// `hwloc_obj_t`.
pub type hwloc_obj_t = *mut hwloc_obj;
/// `hwloc_topology_t`.
pub type hwloc_topology_t = *mut crate::topology::hwloc_topology;

/// `HWLOC_UNKNOWN_INDEX`.
pub const HWLOC_UNKNOWN_INDEX: c_uint = c_uint::MAX;

/// `struct hwloc_obj`.
#[repr(C)]
pub struct hwloc_obj {
    pub type_: hwloc_obj_type_t,
    pub subtype: *mut c_char,
    pub os_index: c_uint,
    pub name: *mut c_char,
    pub total_memory: u64,
    pub attr: *mut hwloc_obj_attr_u,
    pub depth: c_int,
    pub logical_index: c_uint,
    pub next_cousin: *mut hwloc_obj,
    pub prev_cousin: *mut hwloc_obj,
    pub parent: *mut hwloc_obj,
    pub sibling_rank: c_uint,
    pub next_sibling: *mut hwloc_obj,
    pub prev_sibling: *mut hwloc_obj,
    pub arity: c_uint,
    pub children: *mut *mut hwloc_obj,
    pub first_child: *mut hwloc_obj,
    pub last_child: *mut hwloc_obj,
    pub symmetric_subtree: c_int,
    pub memory_arity: c_uint,
    pub memory_first_child: *mut hwloc_obj,
    pub io_arity: c_uint,
    pub io_first_child: *mut hwloc_obj,
    pub misc_arity: c_uint,
    pub misc_first_child: *mut hwloc_obj,
    pub cpuset: hwloc_bitmap_t,
    pub complete_cpuset: hwloc_bitmap_t,
    pub nodeset: hwloc_bitmap_t,
    pub complete_nodeset: hwloc_bitmap_t,
    pub infos: *mut hwloc_info_s,
    pub infos_count: c_uint,
    pub userdata: *mut c_void,
    pub gp_index: u64,
}

/// `struct hwloc_memory_page_type_s`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hwloc_memory_page_type_s {
    pub size: u64,
    pub count: u64,
}

/// `struct hwloc_numanode_attr_s`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hwloc_numanode_attr_s {
    pub local_memory: u64,
    pub page_types_len: c_uint,
    pub page_types: *mut hwloc_memory_page_type_s,
}

/// `struct hwloc_cache_attr_s`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hwloc_cache_attr_s {
    pub size: u64,
    pub depth: c_uint,
    pub linesize: c_uint,
    pub associativity: c_int,
    /// `hwloc_obj_cache_type_t`: unified 0, data 1, instruction 2.
    pub type_: c_int,
}

/// `struct hwloc_group_attr_s`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hwloc_group_attr_s {
    pub depth: c_uint,
    pub kind: c_uint,
    pub subkind: c_uint,
    pub dont_merge: c_uchar,
}

/// `struct hwloc_pcidev_attr_s` (16-bit PCI domains, hwloc's default ABI).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hwloc_pcidev_attr_s {
    pub domain: c_ushort,
    pub bus: c_uchar,
    pub dev: c_uchar,
    pub func: c_uchar,
    pub class_id: c_ushort,
    pub vendor_id: c_ushort,
    pub device_id: c_ushort,
    pub subvendor_id: c_ushort,
    pub subdevice_id: c_ushort,
    pub revision: c_uchar,
    pub linkspeed: c_float,
}

/// The downstream side of a PCI bridge.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hwloc_bridge_downstream_pci_s {
    pub domain: c_ushort,
    pub secondary_bus: c_uchar,
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
    pub downstream_type: c_int,
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
    pub numanode: hwloc_numanode_attr_s,
    pub cache: hwloc_cache_attr_s,
    pub group: hwloc_group_attr_s,
    pub pcidev: hwloc_pcidev_attr_s,
    pub bridge: hwloc_bridge_attr_s,
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
    pub name: *mut c_char,
    pub value: *mut c_char,
}

/// `struct hwloc_topology_discovery_support`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hwloc_topology_discovery_support {
    pub pu: c_uchar,
    pub numa: c_uchar,
    pub numa_memory: c_uchar,
    pub disallowed_pu: c_uchar,
    pub disallowed_numa: c_uchar,
    pub cpukind_efficiency: c_uchar,
}

/// `struct hwloc_topology_cpubind_support`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hwloc_topology_cpubind_support {
    pub set_thisproc_cpubind: c_uchar,
    pub get_thisproc_cpubind: c_uchar,
    pub set_proc_cpubind: c_uchar,
    pub get_proc_cpubind: c_uchar,
    pub set_thisthread_cpubind: c_uchar,
    pub get_thisthread_cpubind: c_uchar,
    pub set_thread_cpubind: c_uchar,
    pub get_thread_cpubind: c_uchar,
    pub get_thisproc_last_cpu_location: c_uchar,
    pub get_proc_last_cpu_location: c_uchar,
    pub get_thisthread_last_cpu_location: c_uchar,
}

/// `struct hwloc_topology_membind_support`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hwloc_topology_membind_support {
    pub set_thisproc_membind: c_uchar,
    pub get_thisproc_membind: c_uchar,
    pub set_proc_membind: c_uchar,
    pub get_proc_membind: c_uchar,
    pub set_thisthread_membind: c_uchar,
    pub get_thisthread_membind: c_uchar,
    pub set_area_membind: c_uchar,
    pub get_area_membind: c_uchar,
    pub alloc_membind: c_uchar,
    pub firsttouch_membind: c_uchar,
    pub bind_membind: c_uchar,
    pub interleave_membind: c_uchar,
    pub nexttouch_membind: c_uchar,
    pub migrate_membind: c_uchar,
    pub get_area_memlocation: c_uchar,
}

/// `struct hwloc_topology_misc_support`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hwloc_topology_misc_support {
    pub imported_support: c_uchar,
}

/// `struct hwloc_topology_support`.
#[repr(C)]
pub struct hwloc_topology_support {
    pub discovery: *mut hwloc_topology_discovery_support,
    pub cpubind: *mut hwloc_topology_cpubind_support,
    pub membind: *mut hwloc_topology_membind_support,
    pub misc: *mut hwloc_topology_misc_support,
}

/// `struct hwloc_distances_s`.
#[repr(C)]
pub struct hwloc_distances_s {
    pub nbobjs: c_uint,
    pub objs: *mut hwloc_obj_t,
    pub kind: c_ulong,
    pub values: *mut u64,
}

/// `union hwloc_topology_diff_obj_attr_u`: every member starts with the
/// attribute type (size 0, name 1, info 2); `uint64` and `string` follow.
#[repr(C)]
#[derive(Clone, Copy)]
pub union hwloc_topology_diff_obj_attr_u {
    pub generic: hwloc_topology_diff_obj_attr_generic_s,
    pub uint64: hwloc_topology_diff_obj_attr_uint64_s,
    pub string: hwloc_topology_diff_obj_attr_string_s,
}

/// `struct hwloc_topology_diff_obj_attr_generic_s`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hwloc_topology_diff_obj_attr_generic_s {
    pub type_: c_int,
}

/// `struct hwloc_topology_diff_obj_attr_uint64_s`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hwloc_topology_diff_obj_attr_uint64_s {
    pub type_: c_int,
    pub index: u64,
    pub oldvalue: u64,
    pub newvalue: u64,
}

/// `struct hwloc_topology_diff_obj_attr_string_s`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hwloc_topology_diff_obj_attr_string_s {
    pub type_: c_int,
    pub name: *mut c_char,
    pub oldvalue: *mut c_char,
    pub newvalue: *mut c_char,
}

/// `union hwloc_topology_diff_u`: every member starts with the diff type
/// (object attribute 0, too complex 1) and the next diff.
#[repr(C)]
#[derive(Clone, Copy)]
pub union hwloc_topology_diff_u {
    pub generic: hwloc_topology_diff_generic_s,
    pub obj_attr: hwloc_topology_diff_obj_attr_s,
    pub too_complex: hwloc_topology_diff_too_complex_s,
}

/// `hwloc_topology_diff_t`.
pub type hwloc_topology_diff_t = *mut hwloc_topology_diff_u;

/// `struct hwloc_topology_diff_generic_s`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hwloc_topology_diff_generic_s {
    pub type_: c_int,
    pub next: *mut hwloc_topology_diff_u,
}

/// `struct hwloc_topology_diff_obj_attr_s`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hwloc_topology_diff_obj_attr_s {
    pub type_: c_int,
    pub next: *mut hwloc_topology_diff_u,
    pub obj_depth: c_int,
    pub obj_index: c_uint,
    pub diff: hwloc_topology_diff_obj_attr_u,
}

/// `struct hwloc_topology_diff_too_complex_s`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hwloc_topology_diff_too_complex_s {
    pub type_: c_int,
    pub next: *mut hwloc_topology_diff_u,
    pub obj_depth: c_int,
    pub obj_index: c_uint,
}

/// `struct hwloc_location` (memattrs.h): a type (cpuset 1, object 0) and
/// a union of a cpuset and an object.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hwloc_location {
    pub type_: c_int,
    pub location: hwloc_location_u,
}

/// `union hwloc_location_u`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union hwloc_location_u {
    pub cpuset: hwloc_const_bitmap_t,
    pub object: *mut hwloc_obj,
}
