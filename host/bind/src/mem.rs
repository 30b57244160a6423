//! Memory binding: thread policies, memory areas, bound allocations and
//! migration, through the kernel's NUMA system calls.

use std::fmt;
use std::io;
use std::ptr::NonNull;
use std::str::FromStr;

use libc::c_ulong;
use wloc_core::{Bitmap, CpuSet, NodeSet, ObjType, Topology};

use crate::error::BindError;
use crate::{Binder, MemBindFlags, check_id, sys};

/// A memory binding policy (hwloc's `hwloc_membind_policy_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemPolicy {
    /// The system's default policy (`MPOL_DEFAULT`).  Linux reports it,
    /// like local allocation, as [`MemPolicy::FirstTouch`].
    Default,
    /// Allocate on the node of the CPU that first touches the page
    /// (`MPOL_LOCAL`).
    FirstTouch,
    /// Allocate on the given nodes: `MPOL_PREFERRED_MANY` (or
    /// `MPOL_PREFERRED` on kernels before 5.15, which takes one node), or
    /// `MPOL_BIND` with [`MemBindFlags::STRICT`].
    Bind,
    /// Spread pages round-robin over the nodes (`MPOL_INTERLEAVE`).
    Interleave,
    /// Spread pages over the nodes in proportion to the weights of
    /// `/sys/kernel/mm/mempolicy/weighted_interleave`
    /// (`MPOL_WEIGHTED_INTERLEAVE`, Linux 6.9 and later).
    WeightedInterleave,
    /// Move pages to the node of the next CPU touching them.  Linux has
    /// no such policy: binding with it is [`BindError::Unsupported`].
    NextTouch,
    /// Reported by area queries when pages are under different policies.
    Mixed,
}

impl MemPolicy {
    /// Every policy that can be requested, in hwloc-bind's order.
    pub const ALL: [MemPolicy; 6] = [
        MemPolicy::Default,
        MemPolicy::FirstTouch,
        MemPolicy::Bind,
        MemPolicy::Interleave,
        MemPolicy::WeightedInterleave,
        MemPolicy::NextTouch,
    ];

    /// The name hwloc-bind uses (`firsttouch`, `bind`, ...).
    pub fn name(self) -> &'static str {
        match self {
            MemPolicy::Default => "default",
            MemPolicy::FirstTouch => "firsttouch",
            MemPolicy::Bind => "bind",
            MemPolicy::Interleave => "interleave",
            MemPolicy::WeightedInterleave => "weighted",
            MemPolicy::NextTouch => "nexttouch",
            MemPolicy::Mixed => "mixed",
        }
    }
}

impl fmt::Display for MemPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MemPolicy {
    type Err = String;

    /// Parses a policy name or, as hwloc-bind accepts, any prefix of at
    /// least two letters (`inter`, `fi`).  `weighted_interleave` is also
    /// accepted.
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "weighted_interleave" {
            return Ok(MemPolicy::WeightedInterleave);
        }
        if s.len() >= 2
            && let Some(p) = MemPolicy::ALL.iter().find(|p| p.name().starts_with(s))
        {
            return Ok(*p);
        }
        Err(format!(
            "unknown memory binding policy '{s}' (expected default, firsttouch, bind, interleave, weighted or nexttouch)"
        ))
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for wloc_core::CpuSet {}
    impl Sealed for wloc_core::NodeSet {}
}

/// A set that memory can be bound to: a [`NodeSet`] as is, or a
/// [`CpuSet`], which stands for the NUMA nodes local to its PUs.
pub trait MemSet: sealed::Sealed {
    /// The NUMA nodes this set designates in `topo`.
    fn to_nodeset(&self, topo: &Topology) -> NodeSet;
}

impl MemSet for NodeSet {
    fn to_nodeset(&self, _topo: &Topology) -> NodeSet {
        self.clone()
    }
}

impl MemSet for CpuSet {
    /// The nodes whose CPU set intersects this one.
    fn to_nodeset(&self, topo: &Topology) -> NodeSet {
        let mut nodes = NodeSet::new();
        for id in topo.objs_by_type(ObjType::NUMANode) {
            let o = topo.obj(id);
            if let (Some(cs), Some(os)) = (&o.cpuset, o.os_index)
                && cs.intersects(self)
            {
                nodes.set(os);
            }
        }
        nodes
    }
}

/// Memory mapped by [`Binder::allocate_bound_memory`], unmapped on drop.
/// Anonymous mappings start zeroed, so the bytes can be read at once.
pub struct BoundMemory {
    ptr: NonNull<u8>,
    len: usize,
    bound: bool,
}

// SAFETY: the mapping is owned exclusively by this value.
unsafe impl Send for BoundMemory {}
// SAFETY: shared access only hands out shared slices.
unsafe impl Sync for BoundMemory {}

impl BoundMemory {
    /// The memory, as bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: the mapping holds `len` initialised (zeroed) bytes.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The memory, as mutable bytes.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the length is zero (never true: empty allocations fail).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the binding was applied.  Without [`MemBindFlags::STRICT`]
    /// an allocation whose binding the kernel refused is still returned,
    /// unbound, as hwloc does.
    pub fn is_bound(&self) -> bool {
        self.bound
    }
}

impl Drop for BoundMemory {
    fn drop(&mut self) {
        // SAFETY: the range was mapped by map_anonymous with this length
        // and is no longer used. Unmapping a whole mapping cannot fail.
        let _ = unsafe { crate::raw::unmap(self.ptr.as_ptr(), self.len) };
    }
}

impl fmt::Debug for BoundMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BoundMemory")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .field("bound", &self.bound)
            .finish()
    }
}

/// Whether this kernel has `MPOL_WEIGHTED_INTERLEAVE` (its sysfs knobs
/// appeared with it, in Linux 6.9).
pub fn kernel_has_weighted_interleave() -> bool {
    std::path::Path::new("/sys/kernel/mm/mempolicy/weighted_interleave").is_dir()
}

/// The Linux policy and nodes a request maps to.
fn linux_mode(policy: MemPolicy, strict: bool) -> i32 {
    match policy {
        MemPolicy::Default => sys::MPOL_DEFAULT,
        MemPolicy::FirstTouch => sys::MPOL_LOCAL,
        MemPolicy::Bind if strict => sys::MPOL_BIND,
        MemPolicy::Bind => sys::MPOL_PREFERRED_MANY,
        MemPolicy::Interleave => sys::MPOL_INTERLEAVE,
        MemPolicy::WeightedInterleave => sys::MPOL_WEIGHTED_INTERLEAVE,
        // Rejected before any call.
        MemPolicy::NextTouch | MemPolicy::Mixed => -1,
    }
}

/// The policy hwloc reports for a Linux mode and node mask; `nodes`
/// becomes the mask, or `all` (the topology's node set as hwloc reports
/// it) when the policy has none.
fn policy_from_linux(
    mode: i32,
    mask: &[c_ulong],
    nodes: &mut Bitmap,
    all: &NodeSet,
) -> Option<MemPolicy> {
    let (policy, has_nodes) = match mode & !sys::MPOL_MODE_FLAGS {
        sys::MPOL_DEFAULT | sys::MPOL_LOCAL => (MemPolicy::FirstTouch, false),
        sys::MPOL_PREFERRED if mask.iter().all(|&w| w == 0) => (MemPolicy::FirstTouch, false),
        sys::MPOL_PREFERRED | sys::MPOL_PREFERRED_MANY | sys::MPOL_BIND => (MemPolicy::Bind, true),
        sys::MPOL_INTERLEAVE => (MemPolicy::Interleave, true),
        sys::MPOL_WEIGHTED_INTERLEAVE => (MemPolicy::WeightedInterleave, true),
        _ => return None,
    };
    if has_nodes {
        sys::kernel_mask_into(mask, nodes);
    } else {
        nodes.clone_from(all.bitmap());
    }
    Some(policy)
}

/// The policy of this thread (`flags` 0) or of the page at `addr`
/// (`MPOL_F_ADDR`), its nodes written into `nodes` in place.  Inlined:
/// after the system call each return costs (the CPU forgets its return
/// predictions in the kernel), and a binding asks millions of times.
#[inline(always)]
fn query_policy(
    op: &str,
    addr: *const u8,
    flags: c_ulong,
    nodes: &mut Bitmap,
    all: &NodeSet,
) -> Result<MemPolicy, BindError> {
    sys::get_mempolicy(addr, flags, |mode, mask| {
        policy_from_linux(mode, mask, nodes, all).ok_or(mode)
    })
    .map_err(|e| BindError::from_os(op, e, None))?
    .map_err(|mode| BindError::Unsupported {
        op: op.into(),
        reason: format!("unknown Linux memory policy {mode}"),
    })
}

/// Applies a policy with `apply(mode, nodes)`, falling back where older
/// kernels lack a mode: `MPOL_PREFERRED` (first node only) for
/// `MPOL_PREFERRED_MANY`, `MPOL_PREFERRED` without nodes for `MPOL_LOCAL`.
fn apply_policy(
    op: &str,
    policy: MemPolicy,
    flags: MemBindFlags,
    nodes: &NodeSet,
    apply: impl Fn(i32, Option<&[c_ulong]>) -> io::Result<()>,
) -> Result<(), BindError> {
    let mode = linux_mode(policy, flags.contains(MemBindFlags::STRICT));
    let mask = sys::to_kernel_mask(nodes, 0);
    let first = NodeSet::from_index(nodes.first().unwrap_or(0));
    let first_mask = sys::to_kernel_mask(&first, 0);
    let einval = |e: &io::Error| e.raw_os_error() == Some(libc::EINVAL);
    let res = match mode {
        sys::MPOL_DEFAULT => apply(mode, None),
        sys::MPOL_LOCAL => match apply(mode, None) {
            Err(e) if einval(&e) => apply(sys::MPOL_PREFERRED, None),
            r => r,
        },
        sys::MPOL_PREFERRED_MANY => match apply(mode, Some(&mask)) {
            Err(e) if einval(&e) => apply(sys::MPOL_PREFERRED, Some(&first_mask)),
            r => r,
        },
        _ => apply(mode, Some(&mask)),
    };
    res.map_err(|e| match e.raw_os_error() {
        Some(libc::EINVAL)
            if policy == MemPolicy::WeightedInterleave && !kernel_has_weighted_interleave() =>
        {
            BindError::Unsupported {
                op: op.into(),
                reason: "weighted interleave needs Linux 6.9 or later".into(),
            }
        }
        Some(libc::EINVAL) => BindError::InvalidSet {
            op: op.into(),
            reason: format!(
                "the kernel refused nodes {} for policy {policy}",
                nodes.bitmap().to_list_string()
            ),
        },
        _ => BindError::from_os(op, e, None),
    })
}

/// The whole pages of an area.
struct Pages {
    start: *const u8,
    len: usize,
    /// The page size (asked once: it is a library call).
    size: usize,
}

/// Page-aligned bounds of an area.
fn page_range(area: &[u8]) -> Pages {
    let page = sys::page_size();
    let start = area.as_ptr() as usize;
    let aligned = start & !(page - 1);
    let end = (start + area.len()).div_ceil(page) * page;
    Pages {
        start: aligned as *const u8,
        len: end - aligned,
        size: page,
    }
}

impl Binder<'_> {
    /// The checks of a query on the pages of `area` (its flags, and that
    /// it is not empty), then its whole pages: their start and length.
    fn check_area_query(
        &self,
        op: &str,
        flags: MemBindFlags,
        area: &[u8],
    ) -> Result<Pages, BindError> {
        self.check_mem(op, flags, None, true)?;
        if area.is_empty() {
            return Err(BindError::InvalidSet {
                op: op.into(),
                reason: "the area is empty".into(),
            });
        }
        Ok(page_range(area))
    }

    /// Checks memory flags and the policy before any call.  `area`
    /// operations take neither PROCESS nor THREAD.
    fn check_mem(
        &self,
        op: &str,
        flags: MemBindFlags,
        policy: Option<MemPolicy>,
        area: bool,
    ) -> Result<(), BindError> {
        if flags.contains(MemBindFlags::PROCESS | MemBindFlags::THREAD) {
            return Err(BindError::BadFlags {
                op: op.into(),
                reason: "PROCESS and THREAD cannot be combined",
            });
        }
        if area && flags.intersects(MemBindFlags::PROCESS | MemBindFlags::THREAD) {
            return Err(BindError::BadFlags {
                op: op.into(),
                reason: "PROCESS and THREAD do not apply to memory areas",
            });
        }
        match policy {
            Some(MemPolicy::NextTouch) => {
                return Err(BindError::Unsupported {
                    op: op.into(),
                    reason: "Linux has no next-touch policy".into(),
                });
            }
            Some(MemPolicy::Mixed) => {
                return Err(BindError::BadFlags {
                    op: op.into(),
                    reason: "the mixed policy is only reported, never requested",
                });
            }
            _ => {}
        }
        self.check_system(op)?;
        if !area && flags.contains(MemBindFlags::PROCESS) {
            return Err(BindError::Unsupported {
                op: op.into(),
                reason: "Linux memory policies belong to threads, not processes".into(),
            });
        }
        Ok(())
    }

    /// Sets the memory policy of the calling thread (Linux policies are
    /// per thread and inherited by threads and processes it creates).
    /// With [`MemBindFlags::MIGRATE`], pages this process already has
    /// are moved to the nodes too.
    pub fn bind_memory<S: MemSet>(
        &self,
        set: &S,
        policy: MemPolicy,
        flags: MemBindFlags,
    ) -> Result<(), BindError> {
        let op = "set the memory binding of this thread";
        self.check_mem(op, flags, Some(policy), false)?;
        let nodes = self.fix_nodeset(op, &set.to_nodeset(self.topo))?;
        apply_policy(op, policy, flags, &nodes, |mode, mask| {
            sys::set_mempolicy(mode, mask)
        })?;
        if flags.contains(MemBindFlags::MIGRATE) {
            let left = self.migrate_process_memory(None, self.topo.complete_nodeset(), &nodes)?;
            if left > 0 && flags.contains(MemBindFlags::STRICT) {
                return Err(BindError::Io {
                    op: op.into(),
                    source: io::Error::other(format!("{left} pages could not be migrated")),
                });
            }
        }
        Ok(())
    }

    /// The memory policy of the calling thread and its nodes (the topology's node set,
    /// as hwloc reports it, for the default and first-touch policies).
    pub fn memory_binding(&self, flags: MemBindFlags) -> Result<(NodeSet, MemPolicy), BindError> {
        let mut nodes = Bitmap::new();
        let policy = self.memory_binding_into(flags, &mut nodes)?;
        Ok((NodeSet::from_bitmap(nodes), policy))
    }

    /// [`Binder::memory_binding`], writing the node set into `nodes` in
    /// place, as the C library's callers hand it (a binding asking a
    /// million times allocates and moves nothing).
    #[inline]
    pub fn memory_binding_into(
        &self,
        flags: MemBindFlags,
        nodes: &mut Bitmap,
    ) -> Result<MemPolicy, BindError> {
        let op = "get the memory binding of this thread";
        self.check_mem(op, flags, None, false)?;
        query_policy(op, std::ptr::null(), 0, nodes, self.topo.nodeset())
    }

    /// Linux cannot set the memory policy of another process: this checks
    /// the request and reports [`BindError::Unsupported`] (use
    /// [`Binder::migrate_process_memory`] to move its pages).
    pub fn bind_process_memory<S: MemSet>(
        &self,
        pid: i32,
        set: &S,
        policy: MemPolicy,
        flags: MemBindFlags,
    ) -> Result<(), BindError> {
        let op = format!("set the memory binding of process {pid}");
        check_id(&op, pid)?;
        self.check_mem(&op, flags, Some(policy), false)?;
        self.fix_nodeset(&op, &set.to_nodeset(self.topo))?;
        Err(BindError::Unsupported {
            op,
            reason: "Linux cannot change the memory policy of another process".into(),
        })
    }

    /// Linux cannot read the memory policy of another process: this
    /// reports [`BindError::Unsupported`].
    pub fn process_memory_binding(
        &self,
        pid: i32,
        flags: MemBindFlags,
    ) -> Result<(NodeSet, MemPolicy), BindError> {
        let op = format!("get the memory binding of process {pid}");
        check_id(&op, pid)?;
        self.check_mem(&op, flags, None, false)?;
        Err(BindError::Unsupported {
            op,
            reason: "Linux cannot read the memory policy of another process".into(),
        })
    }

    /// Binds the pages spanning `area` (rounded out to whole pages).
    /// [`MemBindFlags::MIGRATE`] moves pages already allocated;
    /// with [`MemBindFlags::STRICT`] too, failing to move one is an error.
    pub fn bind_memory_area<S: MemSet>(
        &self,
        area: &[u8],
        set: &S,
        policy: MemPolicy,
        flags: MemBindFlags,
    ) -> Result<(), BindError> {
        let op = "bind a memory area";
        self.check_mem(op, flags, Some(policy), true)?;
        let nodes = self.fix_nodeset(op, &set.to_nodeset(self.topo))?;
        if area.is_empty() {
            return Ok(());
        }
        let Pages { start, len, .. } = page_range(area);
        let mut mflags = 0;
        if flags.contains(MemBindFlags::MIGRATE) {
            mflags |= sys::MPOL_MF_MOVE;
            if flags.contains(MemBindFlags::STRICT) {
                mflags |= sys::MPOL_MF_STRICT;
            }
        }
        apply_policy(op, policy, flags, &nodes, |mode, mask| {
            sys::mbind(start, len, mode, mask, mflags)
        })
    }

    /// The policy and nodes of the pages spanning `area`: the union of
    /// their nodes, and [`MemPolicy::Mixed`] if their policies differ
    /// ([`BindError::Mixed`] with [`MemBindFlags::STRICT`], also when
    /// their nodes differ).
    pub fn area_memory_binding(
        &self,
        area: &[u8],
        flags: MemBindFlags,
    ) -> Result<(NodeSet, MemPolicy), BindError> {
        let mut nodes = Bitmap::new();
        let policy = self.area_memory_binding_into(area, flags, &mut nodes)?;
        Ok((NodeSet::from_bitmap(nodes), policy))
    }

    /// [`Binder::area_memory_binding`], writing the node set into `nodes`
    /// in place.
    #[inline]
    pub fn area_memory_binding_into(
        &self,
        area: &[u8],
        flags: MemBindFlags,
        nodes: &mut Bitmap,
    ) -> Result<MemPolicy, BindError> {
        let op = "get the memory binding of an area";
        let Pages {
            start,
            len,
            size: page,
        } = self.check_area_query(op, flags, area)?;
        let all = self.topo.nodeset();
        let mut policy = query_policy(op, start, sys::MPOL_F_ADDR, nodes, all)?;
        let mut page_nodes = Bitmap::new();
        for off in (page..len).step_by(page) {
            let addr = start.wrapping_add(off);
            let page_policy = query_policy(op, addr, sys::MPOL_F_ADDR, &mut page_nodes, all)?;
            if flags.contains(MemBindFlags::STRICT)
                && (*nodes != page_nodes || policy != page_policy)
            {
                return Err(BindError::Mixed { op: op.into() });
            }
            if policy != page_policy {
                policy = MemPolicy::Mixed;
            }
            nodes.or_assign(&page_nodes);
        }
        Ok(policy)
    }

    /// The NUMA nodes holding the pages of `area` that are allocated
    /// (pages never touched have no node yet and are skipped).
    pub fn area_memory_location(
        &self,
        area: &[u8],
        flags: MemBindFlags,
    ) -> Result<NodeSet, BindError> {
        let op = "get the memory location of an area";
        let Pages {
            start,
            len,
            size: page,
        } = self.check_area_query(op, flags, area)?;
        let pages: Vec<*const u8> = (0..len)
            .step_by(page)
            .map(|o| start.wrapping_add(o))
            .collect();
        let status =
            sys::move_pages(&pages, None, 0).map_err(|e| BindError::from_os(op, e, None))?;
        let mut nodes = NodeSet::new();
        // Negative statuses are errors such as -ENOENT for untouched pages.
        for s in status.into_iter().filter(|&s| s >= 0) {
            nodes.set(s as u32);
        }
        Ok(nodes)
    }

    /// Maps `len` bytes of anonymous memory bound to `set` with `policy`.
    /// Without [`MemBindFlags::STRICT`] the memory is returned even if
    /// the kernel refuses the binding (see [`BoundMemory::is_bound`]).
    pub fn allocate_bound_memory<S: MemSet>(
        &self,
        len: usize,
        set: &S,
        policy: MemPolicy,
        flags: MemBindFlags,
    ) -> Result<BoundMemory, BindError> {
        let op = format!("allocate {len} bytes of bound memory");
        self.check_mem(&op, flags, Some(policy), true)?;
        let nodes = self.fix_nodeset(&op, &set.to_nodeset(self.topo))?;
        if len == 0 {
            return Err(BindError::Io {
                op,
                source: io::Error::new(io::ErrorKind::InvalidInput, "the length is zero"),
            });
        }
        let ptr = crate::raw::map_anonymous(len).map_err(|e| BindError::from_os(&op, e, None))?;
        let mut mem = BoundMemory {
            ptr,
            len,
            bound: false,
        };
        let start = mem.ptr.as_ptr() as *const u8;
        match apply_policy(&op, policy, flags, &nodes, |mode, mask| {
            sys::mbind(start, len, mode, mask, 0)
        }) {
            Ok(()) => mem.bound = true,
            Err(e) if flags.contains(MemBindFlags::STRICT) => return Err(e),
            Err(_) => {}
        }
        Ok(mem)
    }

    /// Moves the pages of process `pid` (this one when `None`) that are
    /// on the nodes `from` to the nodes `to` (`migrate_pages`).  Returns
    /// how many pages could not be moved.
    pub fn migrate_process_memory(
        &self,
        pid: Option<i32>,
        from: &NodeSet,
        to: &NodeSet,
    ) -> Result<usize, BindError> {
        let op = match pid {
            Some(p) => format!("migrate the memory of process {p}"),
            None => "migrate the memory of this process".into(),
        };
        if let Some(p) = pid {
            check_id(&op, p)?;
        }
        self.check_system(&op)?;
        let from = self.fix_nodeset(&op, from)?;
        let to = self.fix_nodeset(&op, to)?;
        sys::migrate_pages(
            pid.unwrap_or(0),
            &sys::to_kernel_mask(&from, 0),
            &sys::to_kernel_mask(&to, 0),
        )
        .map_err(|e| match e.raw_os_error() {
            Some(libc::EINVAL) => BindError::InvalidSet {
                op: op.clone(),
                reason: "the kernel refused the node sets".into(),
            },
            _ => BindError::from_os(&op, e, pid),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_names_parse_like_hwloc_bind() {
        for p in MemPolicy::ALL {
            assert_eq!(p.name().parse::<MemPolicy>(), Ok(p));
        }
        assert_eq!("fi".parse::<MemPolicy>(), Ok(MemPolicy::FirstTouch));
        assert_eq!("inter".parse::<MemPolicy>(), Ok(MemPolicy::Interleave));
        assert_eq!(
            "weighted_interleave".parse::<MemPolicy>(),
            Ok(MemPolicy::WeightedInterleave)
        );
        assert!("b".parse::<MemPolicy>().is_err());
        assert!("bogus".parse::<MemPolicy>().unwrap_err().contains("bogus"));
    }

    #[test]
    fn linux_modes_map_both_ways() {
        assert_eq!(linux_mode(MemPolicy::Bind, true), sys::MPOL_BIND);
        assert_eq!(linux_mode(MemPolicy::Bind, false), sys::MPOL_PREFERRED_MANY);
        assert_eq!(linux_mode(MemPolicy::FirstTouch, false), sys::MPOL_LOCAL);
        let all = NodeSet::from_range(0, Some(3));
        let one = NodeSet::from_index(1);
        let from_linux = |mode, mask: NodeSet| {
            // A set holding something else: every answer replaces it.
            let mut nodes = Bitmap::from_index(7);
            let mask = sys::to_kernel_mask(&mask, 0);
            policy_from_linux(mode, &mask, &mut nodes, &all)
                .map(|p| (NodeSet::from_bitmap(nodes), p))
        };
        assert_eq!(
            from_linux(sys::MPOL_DEFAULT, one.clone()),
            Some((all.clone(), MemPolicy::FirstTouch))
        );
        assert_eq!(
            from_linux(sys::MPOL_PREFERRED, NodeSet::new()),
            Some((all.clone(), MemPolicy::FirstTouch))
        );
        assert_eq!(
            from_linux(sys::MPOL_PREFERRED_MANY, one.clone()),
            Some((one.clone(), MemPolicy::Bind))
        );
        // Mode flags such as MPOL_F_STATIC_NODES are ignored.
        assert_eq!(
            from_linux(sys::MPOL_INTERLEAVE | (1 << 15), one.clone()),
            Some((one, MemPolicy::Interleave))
        );
        assert_eq!(from_linux(42, NodeSet::new()), None);
    }

    #[test]
    fn page_ranges_cover_the_area() {
        let page = sys::page_size();
        let buf = vec![0u8; 3 * page];
        let Pages {
            start: s,
            len: l,
            size,
        } = page_range(&buf[10..page + 20]);
        assert_eq!(size, page);
        assert_eq!(s as usize % page, 0);
        assert!(s as usize <= buf.as_ptr() as usize + 10);
        assert!(s as usize + l >= buf.as_ptr() as usize + page + 20);
        assert_eq!(l % page, 0);
    }
}
