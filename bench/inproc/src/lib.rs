//! In-process benchmark of wloc against libhwloc 2 (plugins disabled):
//! the inputs, the loads and queries of both sides, and heap accounting.
//!
//! The libhwloc side is a small C harness (csrc/harness.c) calling hwloc's
//! public API; the benchmark itself is `benches/inproc.rs`, run by
//! `bench/inproc.sh`, which prints the comparison table.  Both sides keep
//! all I/O objects, and every input is checked to give the same number of
//! objects on both sides, and every query the same checksum, before
//! anything is timed.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use wloc_core::object::Depth;
use wloc_core::{CpuSet, ObjType, Topology, TypeFilter};
use wloc_xml::XmlVersion;

/// The system allocator, counting live bytes and calls, to report how
/// many allocations a wloc load makes.
pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static CALLS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size(), Ordering::Relaxed);
        CALLS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract for `alloc` (a non-zero-sized
        // layout) is the system allocator's too.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        // SAFETY: `p` came from `System` through this allocator with
        // layout `l`, as the caller of `dealloc` guarantees.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new, Ordering::Relaxed);
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        CALLS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: `p` came from `System` through this allocator with
        // layout `l`, and `new` is valid for it, as the caller guarantees.
        unsafe { System.realloc(p, l, new) }
    }
}

/// Bytes currently allocated through [`Counting`], and allocation calls so far.
pub fn counted() -> (usize, usize) {
    (LIVE.load(Ordering::Relaxed), CALLS.load(Ordering::Relaxed))
}

/// The conformance XML cases loaded by the benchmark, by name.
pub const XML_CASES: [&str; 4] = [
    "16amd64-4distances",
    "192em64t-12gr2n8c2t",
    "96em64t-4n4d3ca2co-pci",
    "nvidiaDGX2",
];

/// Synthetic descriptions built by both sides: (name, description).
pub const SYNTHETIC: [(&str, &str); 2] = [
    ("synthetic 64 PUs", "pack:2 numa:2 l3:1 core:8 pu:2"),
    ("synthetic 4096 PUs", "pack:16 numa:2 l3:4 core:8 pu:4"),
];

/// Name of the input made by exporting the 4096-PU synthetic topology.
pub const SYNTHETIC_XML: &str = "synthetic 4096 PUs (as XML)";

/// One XML input: its name and its hwloc 2 XML text.
pub struct XmlInput {
    /// The case name.
    pub name: String,
    /// hwloc 2 XML (libhwloc 2.9 cannot read hwloc 3 XML).
    pub xml: String,
}

/// Where the conformance recordings are (`WLOC_CONFORMANCE_DIR`, else
/// the repository's `tests/data/conformance`).
pub fn conformance_dir() -> PathBuf {
    std::env::var_os("WLOC_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/conformance")
        })
}

/// The XML inputs: each conformance case as hwloc 2 XML (read by wloc and
/// written again in version 2), then the 4096-PU synthetic topology as XML.
pub fn xml_inputs() -> Result<Vec<XmlInput>, String> {
    let dir = conformance_dir().join("xml");
    let mut out = Vec::new();
    for name in XML_CASES {
        let path = dir.join(format!("{name}.xml"));
        let topo = wloc_xml::import_file(&path, new_topology())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        out.push(XmlInput {
            name: name.to_string(),
            xml: wloc_xml::export(&topo, XmlVersion::V2),
        });
    }
    let big = wloc_synthetic(SYNTHETIC[1].1);
    out.push(XmlInput {
        name: SYNTHETIC_XML.to_string(),
        xml: wloc_xml::export(&big, XmlVersion::V2),
    });
    Ok(out)
}

/// A fresh topology keeping every I/O object, as the libhwloc side.
pub fn new_topology() -> Topology {
    let mut t = Topology::new();
    t.set_io_types_filter(TypeFilter::KeepAll);
    t
}

/// Loads hwloc XML with wloc.
///
/// # Panics
/// If the document is refused (the inputs are checked beforehand).
pub fn wloc_xml(xml: &str) -> Topology {
    wloc_xml::import_str(xml, new_topology()).expect("wloc loads the input")
}

/// Builds a synthetic topology with wloc.
///
/// # Panics
/// If the description is refused.
pub fn wloc_synthetic(desc: &str) -> Topology {
    wloc_core::synthetic::parse(desc)
        .and_then(|d| d.build(new_topology()))
        .expect("wloc builds the synthetic description")
}

/// Every object of the topology, I/O and misc included.
pub fn wloc_count_objects(t: &Topology) -> u64 {
    t.ids().count() as u64
}

fn pu(t: &Topology, i: usize) -> &CpuSet {
    let id = t.obj_by_type(ObjType::PU, i).expect("PU exists");
    t.obj(id).cpuset.as_ref().expect("PU has a cpuset")
}

/// Same as the harness's `wb_q_by_depth_type`.
pub fn wloc_q_by_depth_type(t: &Topology) -> u64 {
    let mut sum = 0u64;
    for d in 0..t.depth() {
        let n = t.level(Depth::Normal(d)).len();
        for i in 0..n {
            let id = t.obj_by_depth(Depth::Normal(d), i).expect("object");
            sum += u64::from(t.obj(id).logical_index());
        }
    }
    for ty in [ObjType::PU, ObjType::Core] {
        let n = t.nb_objs_by_type(ty).unwrap_or(0);
        for i in 0..n {
            let id = t.obj_by_type(ty, i).expect("object");
            sum += u64::from(t.obj(id).logical_index());
        }
    }
    sum
}

/// Same as the harness's `wb_q_covering`.
pub fn wloc_q_covering(t: &Topology, step: usize) -> u64 {
    let n = t.nb_objs_by_type(ObjType::PU).unwrap_or(0);
    let mut sum = 0u64;
    let mut set = CpuSet::new();
    for i in 0..n {
        set.clear();
        set.or_assign(pu(t, i));
        set.or_assign(pu(t, (i + step) % n));
        sum += match t.obj_covering_cpuset(&set).map(|c| t.obj(c).depth()) {
            Some(Depth::Normal(d)) => u64::from(d),
            _ => 1000,
        };
    }
    sum
}

/// Same as the harness's `wb_q_ancestor`.
pub fn wloc_q_ancestor(t: &Topology) -> u64 {
    let at = if t.nb_objs_by_type(ObjType::Package).unwrap_or(0) > 0 {
        ObjType::Package
    } else {
        ObjType::Machine
    };
    let mut sum = 0u64;
    let mut cur = None;
    while let Some(pu) = t.next_obj_by_type(ObjType::PU, cur) {
        if let Some(a) = t.ancestor_by_type(pu, at) {
            sum += u64::from(t.obj(a).logical_index()) + 1;
        }
        cur = Some(pu);
    }
    sum
}

/// Same as the harness's `wb_q_next`.
pub fn wloc_q_next(t: &Topology) -> u64 {
    let mut sum = 0u64;
    for ty in [ObjType::PU, ObjType::Core] {
        let mut cur = None;
        while let Some(o) = t.next_obj_by_type(ty, cur) {
            sum += u64::from(t.obj(o).os_index.unwrap_or(u32::MAX));
            cur = Some(o);
        }
    }
    sum
}

/// Same as the harness's `wb_q_nodeset`.
pub fn wloc_q_nodeset(t: &Topology) -> u64 {
    let mut sum = 0u64;
    let mut cur = None;
    while let Some(core) = t.next_obj_by_type(ObjType::Core, cur) {
        let cs = t.obj(core).cpuset.as_ref().expect("core cpuset");
        sum += u64::from(t.cpuset_to_nodeset(cs).weight().unwrap_or(0));
        cur = Some(core);
    }
    let n = t.nb_objs_by_type(ObjType::PU).unwrap_or(0);
    let mut set = CpuSet::new();
    for i in 0..n {
        set.clear();
        set.or_assign(pu(t, i));
        set.or_assign(pu(t, (i + n / 2) % n));
        sum += u64::from(t.cpuset_to_nodeset(&set).weight().unwrap_or(0));
    }
    sum
}

/// libhwloc through the C harness.
#[cfg(not(no_hwloc))]
pub mod hwloc {
    use std::ffi::{CString, c_char, c_int, c_uint, c_ulong, c_void};

    unsafe extern "C" {
        fn wb_heap_in_use() -> usize;
        fn wb_load_xml(buf: *const c_char, len: c_int) -> *mut c_void;
        fn wb_load_synthetic(desc: *const c_char) -> *mut c_void;
        fn wb_destroy(t: *mut c_void);
        fn wb_count_objects(t: *mut c_void) -> c_ulong;
        fn wb_q_by_depth_type(t: *mut c_void) -> c_ulong;
        fn wb_q_covering(t: *mut c_void, step: c_uint) -> c_ulong;
        fn wb_q_ancestor(t: *mut c_void) -> c_ulong;
        fn wb_q_next(t: *mut c_void) -> c_ulong;
        fn wb_q_nodeset(t: *mut c_void) -> c_ulong;
    }

    /// Bytes held by live blocks of glibc's allocator (`mallinfo2`), which
    /// both libhwloc and Rust's system allocator use.
    pub fn heap_in_use() -> usize {
        // SAFETY: no arguments; reads allocator statistics.
        unsafe { wb_heap_in_use() }
    }

    /// A loaded libhwloc topology, destroyed on drop.
    pub struct Topo(*mut c_void);

    impl Drop for Topo {
        fn drop(&mut self) {
            // SAFETY: the pointer came from a successful load and is freed once.
            unsafe { wb_destroy(self.0) }
        }
    }

    /// Makes libhwloc load no plugin (its XML reader is then the built-in
    /// one, and no I/O discovery plugin is tried).  Must be called before
    /// the first load, while the process has a single thread.
    pub fn disable_plugins() {
        let dir = std::env::temp_dir().join("wloc-bench-no-hwloc-plugins");
        let _ = std::fs::create_dir_all(&dir);
        // SAFETY: the benchmark sets this before starting any thread, so
        // no other thread reads the environment meanwhile.
        unsafe { std::env::set_var("HWLOC_PLUGINS_PATH", &dir) };
    }

    /// Loads hwloc XML; `None` when libhwloc refuses it.
    pub fn load_xml(xml: &str) -> Option<Topo> {
        let len = c_int::try_from(xml.len()).ok()?;
        // SAFETY: the buffer outlives the call (libhwloc copies what it keeps).
        let p = unsafe { wb_load_xml(xml.as_ptr().cast(), len) };
        (!p.is_null()).then_some(Topo(p))
    }

    /// Builds a synthetic topology; `None` when libhwloc refuses it.
    pub fn load_synthetic(desc: &str) -> Option<Topo> {
        let c = CString::new(desc).ok()?;
        // SAFETY: a valid C string for the duration of the call.
        let p = unsafe { wb_load_synthetic(c.as_ptr()) };
        (!p.is_null()).then_some(Topo(p))
    }

    impl Topo {
        /// Every object, I/O and misc included.
        pub fn count_objects(&self) -> u64 {
            // SAFETY: a live topology.
            unsafe { wb_count_objects(self.0) as u64 }
        }
        /// See the harness.
        pub fn q_by_depth_type(&self) -> u64 {
            // SAFETY: a live topology.
            unsafe { wb_q_by_depth_type(self.0) as u64 }
        }
        /// See the harness.
        pub fn q_covering(&self, step: usize) -> u64 {
            // SAFETY: a live topology.
            unsafe { wb_q_covering(self.0, step as c_uint) as u64 }
        }
        /// See the harness.
        pub fn q_ancestor(&self) -> u64 {
            // SAFETY: a live topology.
            unsafe { wb_q_ancestor(self.0) as u64 }
        }
        /// See the harness.
        pub fn q_next(&self) -> u64 {
            // SAFETY: a live topology.
            unsafe { wb_q_next(self.0) as u64 }
        }
        /// See the harness.
        pub fn q_nodeset(&self) -> u64 {
            // SAFETY: a live topology.
            unsafe { wb_q_nodeset(self.0) as u64 }
        }
    }
}
