//! Binding (`hwloc_set_cpubind` and friends), done natively.
//!
//! Every function follows hwloc 2.9: its flags, policy and set checks
//! first (hwloc's `bind.c`), then one of two behaviours:
//! - on a topology of this system, hwloc's Linux behaviour: CPU binding of
//!   threads and of every thread of a process, where threads last ran,
//!   memory policies of the calling thread and of memory areas (Linux has
//!   no process-wide memory policy: those calls fail with `ENOSYS`);
//! - on any other topology (XML, synthetic, not declared this system),
//!   hwloc's "dummy" binding: setters succeed and change nothing, getters
//!   report the complete cpuset or nodeset (memory policy
//!   `HWLOC_MEMBIND_MIXED`), allocations come from the heap, and the
//!   support flags say nothing is supported. (Debian's hwloc 2.9 does
//!   exactly this on an XML topology; it does not fail with `ENOSYS`.)
//!
//! With `hwloc_topology_set_pid`, the CPU functions that name no process
//! act on that process, and those acting on "this thread" fail with
//! `ENOSYS`; memory policies, which Linux keeps per thread, stay the
//! calling thread's, as in hwloc.
//!
//! Per-thread calls go through [`wloc_bind::Binder`]; what it has no
//! call for (a `pthread_t`, anonymous pages) through [`wloc_bind::raw`]:
//! the library makes no system call of its own. hwloc's walk over a
//! process's threads and its heap fallback (`posix_memalign`) stay here.

use std::os::raw::{c_int, c_void};

use wloc_bind::{BindError, Binder, CpuBindFlags, MemBindFlags, MemPolicy, MemSet};
use wloc_core::bitmap::{Set, SetKind};
use wloc_core::{Bitmap, CpuSet, NodeSet, ObjType, Topology};

use crate::ffi::{fail, set_errno};
use crate::handle::{
    FLAG_RESTRICT_TO_CPUBINDING, FLAG_RESTRICT_TO_MEMBINDING, hwloc_topology, hwloc_topology_t,
};
use crate::types::{hwloc_bitmap_t, hwloc_const_bitmap_t};

/// `HWLOC_CPUBIND_PROCESS`.
const CPUBIND_PROCESS: c_int = 1 << 0;
/// `HWLOC_CPUBIND_THREAD`.
const CPUBIND_THREAD: c_int = 1 << 1;
/// `HWLOC_CPUBIND_STRICT`.
const CPUBIND_STRICT: c_int = 1 << 2;
/// Every `HWLOC_CPUBIND_*` flag (`NOMEMBIND` is `1 << 3`).
const CPUBIND_ALLFLAGS: c_int = 0xf;

/// `HWLOC_MEMBIND_PROCESS`.
const MEMBIND_PROCESS: c_int = 1 << 0;
/// `HWLOC_MEMBIND_STRICT`.
const MEMBIND_STRICT: c_int = 1 << 2;
/// `HWLOC_MEMBIND_MIGRATE`.
const MEMBIND_MIGRATE: c_int = 1 << 3;
/// `HWLOC_MEMBIND_BYNODESET`.
const MEMBIND_BYNODESET: c_int = 1 << 5;
/// Every `HWLOC_MEMBIND_*` flag (`NOCPUBIND` is `1 << 4`).
const MEMBIND_ALLFLAGS: c_int = 0x3f;

/// `HWLOC_MEMBIND_MIXED`, reported by dummy getters and mixed areas.
const POLICY_MIXED: c_int = -1;

/// How many times hwloc walks a process's threads again when the list
/// changed or only some threads failed, before giving up with `EAGAIN`.
const THREAD_WALK_RETRIES: usize = 10;

/// A failure: the `errno` hwloc sets.
type Res<T> = Result<T, c_int>;

/// The `errno` hwloc reports for a binding error of wloc.
fn errno_of(e: &BindError) -> c_int {
    match e {
        BindError::NotThisSystem { .. } | BindError::Unsupported { .. } => libc::ENOSYS,
        BindError::BadFlags { .. } | BindError::InvalidSet { .. } => libc::EINVAL,
        BindError::Permission { .. } => libc::EPERM,
        BindError::NoSuchTask { .. } => libc::ESRCH,
        BindError::Mixed { .. } => libc::EXDEV,
        BindError::Io { source, .. } => source.raw_os_error().unwrap_or(libc::EINVAL),
        _ => libc::EINVAL,
    }
}

/// The bits of a C bitmap argument.
///
/// # Safety
/// `set` is NULL or a bitmap from `hwloc_bitmap_alloc` (or an object's).
unsafe fn bits_of<'a>(set: hwloc_const_bitmap_t) -> Res<&'a Bitmap> {
    // SAFETY: see above.
    unsafe { set.as_ref() }
        .map(|b| b.bits())
        .ok_or(libc::EINVAL)
}

/// Stores a result into a C bitmap argument.
///
/// # Safety
/// As [`bits_of`], and nobody else borrows the bitmap.
unsafe fn put_bits(set: hwloc_bitmap_t, bits: Bitmap) -> Res<()> {
    // SAFETY: see above.
    let b = unsafe { set.as_mut() }.ok_or(libc::EINVAL)?;
    b.set_bits(bits);
    Ok(())
}

/// Checks a set as hwloc's `hwloc_fix_cpubind` and `hwloc_fix_membind`
/// do: not empty, inside the complete set; a set covering the
/// topology's means all of the complete one.
fn fix_set<K: SetKind>(set: &Bitmap, topo: &Set<K>, complete: &Set<K>) -> Res<Set<K>> {
    let set = Set::from_bitmap(set.clone());
    if set.is_empty() || !set.is_included_in(complete) {
        return Err(libc::EINVAL);
    }
    if set.includes(topo) {
        return Ok(complete.clone());
    }
    Ok(set)
}

/// Checks a CPU set as hwloc's `hwloc_fix_cpubind`.
fn fix_cpubind(m: &Topology, set: &Bitmap) -> Res<CpuSet> {
    fix_set(set, m.cpuset(), m.complete_cpuset())
}

/// Checks a NUMA node set as hwloc's `hwloc_fix_membind`.
fn fix_membind(m: &Topology, set: &Bitmap) -> Res<NodeSet> {
    fix_set(set, m.nodeset(), m.complete_nodeset())
}

/// The nodes a CPU set designates for memory binding, as hwloc's
/// `hwloc_fix_membind_cpuset`: the nodes near its PUs (all nodes for a
/// set covering the topology).
fn fix_membind_cpuset(m: &Topology, set: &Bitmap) -> Res<NodeSet> {
    let set = fix_cpubind(m, set)?;
    if set.includes(m.cpuset()) {
        return Ok(m.complete_nodeset().clone());
    }
    Ok(set.to_nodeset(m))
}

/// The nodes of a memory binding argument: a nodeset with
/// `HWLOC_MEMBIND_BYNODESET`, else a cpuset.
fn nodes_of(m: &Topology, set: &Bitmap, flags: c_int) -> Res<NodeSet> {
    if flags & MEMBIND_BYNODESET != 0 {
        fix_membind(m, set)
    } else {
        fix_membind_cpuset(m, set).and_then(|n| fix_membind(m, n.bitmap()))
    }
}

/// The PUs of the NUMA nodes of `nodes` (hwloc's
/// `hwloc_cpuset_from_nodeset`).
fn cpuset_from_nodeset(m: &Topology, nodes: &NodeSet) -> CpuSet {
    let mut cpus = CpuSet::new();
    for id in m.objs_by_type(ObjType::NUMANode) {
        let o = m.obj(id);
        if let (Some(os), Some(cs)) = (o.os_index, &o.cpuset)
            && nodes.is_set(os)
        {
            cpus = &cpus | cs;
        }
    }
    cpus
}

/// A node set result as the caller asked it: nodes with
/// `HWLOC_MEMBIND_BYNODESET`, else the PUs of those nodes.
fn mem_result(m: &Topology, nodes: NodeSet, flags: c_int) -> Bitmap {
    if flags & MEMBIND_BYNODESET != 0 {
        nodes.into_bitmap()
    } else {
        cpuset_from_nodeset(m, &nodes).bitmap().clone()
    }
}

/// A policy argument (`hwloc_membind_policy_t`: hwloc 2.14's six).
fn policy_from_c(p: c_int) -> Res<MemPolicy> {
    Ok(match p {
        0 => MemPolicy::Default,
        1 => MemPolicy::FirstTouch,
        2 => MemPolicy::Bind,
        3 => MemPolicy::Interleave,
        4 => MemPolicy::NextTouch,
        5 => MemPolicy::WeightedInterleave,
        _ => return Err(libc::EINVAL),
    })
}

/// A policy result; a Linux policy hwloc does not know fails with
/// `EINVAL`, as in hwloc.
fn policy_to_c(p: MemPolicy) -> Res<c_int> {
    Ok(match p {
        MemPolicy::Default => 0,
        MemPolicy::FirstTouch => 1,
        MemPolicy::Bind => 2,
        MemPolicy::Interleave => 3,
        MemPolicy::NextTouch => 4,
        MemPolicy::WeightedInterleave => 5,
        MemPolicy::Mixed => POLICY_MIXED,
    })
}

/// The wloc flags of a memory operation (those with an effect on Linux).
fn mem_flags(flags: c_int) -> MemBindFlags {
    MemBindFlags::from_bits_truncate((flags & (MEMBIND_STRICT | MEMBIND_MIGRATE | 16)) as u32)
}

/// Checks a requested policy as hwloc's Linux code does before any call:
/// no next-touch on Linux; first-touch takes no node list, so anything
/// but all nodes is refused with `EXDEV`.
fn check_linux_policy(m: &Topology, policy: MemPolicy, nodes: &NodeSet) -> Res<()> {
    match policy {
        MemPolicy::NextTouch => Err(libc::ENOSYS),
        MemPolicy::FirstTouch if nodes != m.complete_nodeset() => Err(libc::EXDEV),
        _ => Ok(()),
    }
}

/// Who a CPU operation acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Who {
    /// A thread id; 0 is the calling thread.
    Thread(i32),
    /// Every thread of a process; 0 is this process.
    Process(i32),
}

/// The target of a CPU function naming no process: the topology's
/// process (hwloc_topology_set_pid) unless `HWLOC_CPUBIND_THREAD` alone
/// asks for the calling thread, which is refused with `ENOSYS` when the
/// topology is another process's.
fn this_target(t: &hwloc_topology, flags: c_int) -> Res<Who> {
    if flags & CPUBIND_PROCESS != 0 || flags & CPUBIND_THREAD == 0 {
        Ok(Who::Process(t.pid))
    } else if t.pid != 0 {
        Err(libc::ENOSYS)
    } else {
        Ok(Who::Thread(0))
    }
}

/// The target of a `_proc_` function: pid 0 is the topology's process;
/// with `HWLOC_CPUBIND_THREAD` the id is a thread's.
fn proc_target(t: &hwloc_topology, pid: libc::pid_t, flags: c_int) -> Who {
    let pid = if pid == 0 { t.pid } else { pid };
    if flags & CPUBIND_THREAD != 0 {
        Who::Thread(pid)
    } else {
        Who::Process(pid)
    }
}

/// The thread ids listed in a `/proc/.../task` directory, sorted.
fn thread_ids(dir: &str) -> Res<Vec<i32>> {
    let entries = std::fs::read_dir(dir).map_err(|e| match e.raw_os_error() {
        // hwloc reports a process that does not exist as EINVAL.
        Some(libc::ENOENT) | None => libc::EINVAL,
        Some(n) => n,
    })?;
    let mut tids: Vec<i32> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    Ok(tids)
}

/// Calls `each(tid, index)` on every thread of process `pid` (0: this
/// process) as hwloc's `hwloc_linux_foreach_proc_tid` does: the list is
/// read again afterwards and the walk restarted if it changed or if only
/// some threads failed, at most [`THREAD_WALK_RETRIES`] times (then
/// `EAGAIN`); if every thread failed, the last error is returned.
fn for_each_thread(pid: i32, mut each: impl FnMut(i32, usize) -> Res<()>) -> Res<()> {
    let dir = if pid != 0 {
        // As hwloc, which prints the id unsigned.
        format!("/proc/{}/task", pid as u32)
    } else {
        "/proc/self/task".to_string()
    };
    let mut tids = thread_ids(&dir)?;
    for _ in 0..=THREAD_WALK_RETRIES {
        let mut failed = 0;
        let mut last_err = 0;
        for (i, &tid) in tids.iter().enumerate() {
            if let Err(e) = each(tid, i) {
                failed += 1;
                last_err = e;
            }
        }
        let now = thread_ids(&dir)?;
        if now == tids && (failed == 0 || failed == tids.len()) {
            return if failed == 0 { Ok(()) } else { Err(last_err) };
        }
        tids = now;
    }
    Err(libc::EAGAIN)
}

/// Binds one thread (0: the calling one).
fn set_thread_binding(b: &Binder, tid: i32, set: &CpuSet) -> Res<()> {
    let r = if tid == 0 {
        b.bind_cpu(set, CpuBindFlags::THREAD)
    } else {
        b.bind_thread_cpu(tid, set)
    };
    r.map_err(|e| errno_of(&e))
}

/// The binding of one thread (0: the calling one).
fn thread_binding(b: &Binder, tid: i32) -> Res<CpuSet> {
    let r = if tid == 0 {
        b.cpu_binding(CpuBindFlags::THREAD)
    } else {
        b.thread_cpu_binding(tid)
    };
    r.map_err(|e| errno_of(&e))
}

/// Where one thread (0: the calling one) last ran. hwloc reports a thread
/// whose `stat` it cannot read with `ENOSYS`.
fn thread_last_cpu(b: &Binder, tid: i32) -> Res<CpuSet> {
    let r = if tid == 0 {
        b.last_cpu_location(CpuBindFlags::THREAD)
    } else {
        b.thread_last_cpu_location(tid)
    };
    r.map_err(|e| match e {
        BindError::NoSuchTask { .. } | BindError::Io { .. } => libc::ENOSYS,
        e => errno_of(&e),
    })
}

/// Binds `who` to `set` on this system.
fn set_cpubind_on(m: &Topology, who: Who, set: &CpuSet) -> Res<()> {
    let b = Binder::new(m);
    match who {
        Who::Thread(tid) => set_thread_binding(&b, tid, set),
        Who::Process(pid) => for_each_thread(pid, |tid, _| set_thread_binding(&b, tid, set)),
    }
}

/// The binding of `who` on this system: the union over a process's
/// threads or, with `HWLOC_CPUBIND_STRICT`, their common binding (a
/// process whose threads differ then fails as in hwloc).
fn get_cpubind_on(m: &Topology, who: Who, flags: c_int) -> Res<CpuSet> {
    let b = Binder::new(m);
    match who {
        Who::Thread(tid) => thread_binding(&b, tid),
        Who::Process(pid) => {
            let mut all = CpuSet::new();
            for_each_thread(pid, |tid, i| {
                let s = thread_binding(&b, tid)?;
                if i == 0 {
                    all = s;
                } else if flags & CPUBIND_STRICT != 0 {
                    if s != all {
                        return Err(libc::EXDEV);
                    }
                } else {
                    all = &all | &s;
                }
                Ok(())
            })?;
            Ok(all)
        }
    }
}

/// Where `who` last ran on this system (the union over a process's
/// threads).
fn last_cpu_on(m: &Topology, who: Who) -> Res<CpuSet> {
    let b = Binder::new(m);
    match who {
        Who::Thread(tid) => thread_last_cpu(&b, tid),
        Who::Process(pid) => {
            let mut all = CpuSet::new();
            for_each_thread(pid, |tid, i| {
                let s = thread_last_cpu(&b, tid)?;
                all = if i == 0 { s } else { &all | &s };
                Ok(())
            })?;
            Ok(all)
        }
    }
}

/// `set_cpubind` for a checked target.
fn set_cpubind_impl(
    t: &hwloc_topology,
    set: hwloc_const_bitmap_t,
    flags: c_int,
    who: impl FnOnce(&hwloc_topology) -> Res<Who>,
) -> Res<()> {
    if flags & !CPUBIND_ALLFLAGS != 0 {
        return Err(libc::EINVAL);
    }
    // SAFETY: a C bitmap argument.
    let set = fix_cpubind(&t.model, unsafe { bits_of(set) }?)?;
    if !t.model.is_thissystem {
        return Ok(());
    }
    set_cpubind_on(&t.model, who(t)?, &set)
}

/// `get_cpubind` (or last location) for a checked target.
fn get_cpu_impl(
    t: &hwloc_topology,
    set: hwloc_bitmap_t,
    flags: c_int,
    who: impl FnOnce(&hwloc_topology) -> Res<Who>,
    last: bool,
) -> Res<()> {
    if flags & !CPUBIND_ALLFLAGS != 0 {
        return Err(libc::EINVAL);
    }
    let r = if !t.model.is_thissystem {
        t.model.complete_cpuset().clone()
    } else if last {
        last_cpu_on(&t.model, who(t)?)?
    } else {
        get_cpubind_on(&t.model, who(t)?, flags)?
    };
    // SAFETY: a C bitmap argument.
    unsafe { put_bits(set, r.bitmap().clone()) }
}

/// `hwloc_set_cpubind`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_set_cpubind(
    topology: hwloc_topology_t,
    set: hwloc_const_bitmap_t,
    flags: c_int,
) -> c_int {
    entry!(topology, |t: Status| {
        set_cpubind_impl(t, set, flags, |t| this_target(t, flags))
    })
}

/// `hwloc_get_cpubind`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_get_cpubind(
    topology: hwloc_topology_t,
    set: hwloc_bitmap_t,
    flags: c_int,
) -> c_int {
    entry!(topology, |t: Status| {
        get_cpu_impl(t, set, flags, |t| this_target(t, flags), false)
    })
}

/// `hwloc_set_proc_cpubind`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_set_proc_cpubind(
    topology: hwloc_topology_t,
    pid: libc::pid_t,
    set: hwloc_const_bitmap_t,
    flags: c_int,
) -> c_int {
    entry!(topology, |t: Status| {
        set_cpubind_impl(t, set, flags, |t| Ok(proc_target(t, pid, flags)))
    })
}

/// `hwloc_get_proc_cpubind`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_get_proc_cpubind(
    topology: hwloc_topology_t,
    pid: libc::pid_t,
    set: hwloc_bitmap_t,
    flags: c_int,
) -> c_int {
    entry!(topology, |t: Status| {
        get_cpu_impl(t, set, flags, |t| Ok(proc_target(t, pid, flags)), false)
    })
}

/// The `errno` of a failed system call.
fn os_errno(e: &std::io::Error) -> c_int {
    e.raw_os_error().unwrap_or(libc::EINVAL)
}

/// Binds a `pthread_t` of this process.
fn set_pthread_binding(thread: libc::pthread_t, set: &CpuSet) -> Res<()> {
    wloc_bind::raw::set_pthread_affinity(thread, set).map_err(|e| os_errno(&e))
}

/// The binding of a `pthread_t` of this process.
fn pthread_binding(thread: libc::pthread_t) -> Res<CpuSet> {
    wloc_bind::raw::pthread_affinity(thread).map_err(|e| os_errno(&e))
}

/// Whether `thread` is the calling thread.
fn is_self(thread: libc::pthread_t) -> bool {
    wloc_bind::raw::is_calling_thread(thread)
}

/// `hwloc_set_thread_cpubind`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_set_thread_cpubind(
    topology: hwloc_topology_t,
    thread: libc::pthread_t,
    set: hwloc_const_bitmap_t,
    flags: c_int,
) -> c_int {
    entry!(topology, |t: Status| {
        if flags & !CPUBIND_ALLFLAGS != 0 {
            return Err(libc::EINVAL);
        }
        // SAFETY: a C bitmap argument.
        let set = fix_cpubind(&t.model, unsafe { bits_of(set) }?)?;
        if !t.model.is_thissystem {
            return Ok(());
        }
        if t.pid != 0 {
            return Err(libc::ENOSYS);
        }
        if is_self(thread) {
            set_cpubind_on(&t.model, Who::Thread(0), &set)
        } else {
            set_pthread_binding(thread, &set)
        }
    })
}

/// `hwloc_get_thread_cpubind`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_get_thread_cpubind(
    topology: hwloc_topology_t,
    thread: libc::pthread_t,
    set: hwloc_bitmap_t,
    flags: c_int,
) -> c_int {
    entry!(topology, |t: Status| {
        if flags & !CPUBIND_ALLFLAGS != 0 {
            return Err(libc::EINVAL);
        }
        let r = if !t.model.is_thissystem {
            t.model.complete_cpuset().clone()
        } else if t.pid != 0 {
            return Err(libc::ENOSYS);
        } else if is_self(thread) {
            get_cpubind_on(&t.model, Who::Thread(0), flags)?
        } else {
            pthread_binding(thread)?
        };
        // SAFETY: a C bitmap argument.
        unsafe { put_bits(set, r.bitmap().clone()) }
    })
}

/// `hwloc_get_last_cpu_location`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_get_last_cpu_location(
    topology: hwloc_topology_t,
    set: hwloc_bitmap_t,
    flags: c_int,
) -> c_int {
    entry!(topology, |t: Status| {
        get_cpu_impl(t, set, flags, |t| this_target(t, flags), true)
    })
}

/// `hwloc_get_proc_last_cpu_location`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_get_proc_last_cpu_location(
    topology: hwloc_topology_t,
    pid: libc::pid_t,
    set: hwloc_bitmap_t,
    flags: c_int,
) -> c_int {
    entry!(topology, |t: Status| {
        get_cpu_impl(t, set, flags, |t| Ok(proc_target(t, pid, flags)), true)
    })
}

/// The checks every memory setter starts with: flags, policy, then the
/// set (as nodes).
fn mem_request(
    t: &hwloc_topology,
    set: hwloc_const_bitmap_t,
    policy: c_int,
    flags: c_int,
) -> Res<(NodeSet, MemPolicy)> {
    // SAFETY: a C bitmap argument.
    let bits = unsafe { bits_of(set) }?;
    // hwloc converts a cpuset (and fails on it) before checking flags.
    if flags & MEMBIND_BYNODESET == 0 {
        fix_membind_cpuset(&t.model, bits)?;
    }
    if flags & !MEMBIND_ALLFLAGS != 0 {
        return Err(libc::EINVAL);
    }
    let policy = policy_from_c(policy)?;
    Ok((nodes_of(&t.model, bits, flags)?, policy))
}

/// The memory policy of the calling thread, as hwloc reports it: the
/// default and first-touch policies cover the topology's nodes.
fn thread_membind(m: &Topology, flags: c_int) -> Res<(NodeSet, c_int)> {
    let (nodes, pol) = Binder::new(m)
        .memory_binding(mem_flags(flags) & MemBindFlags::STRICT)
        .map_err(|e| errno_of(&e))?;
    Ok((nodes, policy_to_c(pol)?))
}

/// Writes a memory binding result into the caller's set and policy.
///
/// # Safety
/// `set` as [`put_bits`]; `policy` NULL or writable.
unsafe fn put_membind(
    m: &Topology,
    set: hwloc_bitmap_t,
    policy: *mut c_int,
    flags: c_int,
    (nodes, pol): (NodeSet, c_int),
) -> Res<()> {
    if policy.is_null() {
        return Err(libc::EINVAL);
    }
    // SAFETY: see above.
    unsafe {
        put_bits(set, mem_result(m, nodes, flags))?;
        *policy = pol;
    }
    Ok(())
}

/// Runs a memory-binding query of this system straight into the caller's
/// node set and policy: the set's storage is reused and nothing is
/// copied on the way (a binding's suite asks millions of times).
///
/// # Safety
/// As [`put_membind`].
#[inline]
unsafe fn query_membind_into(
    m: &Topology,
    set: hwloc_bitmap_t,
    policy: *mut c_int,
    query: impl FnOnce(&Binder, &mut Bitmap) -> Result<MemPolicy, BindError>,
) -> Res<()> {
    if policy.is_null() {
        return Err(libc::EINVAL);
    }
    // SAFETY: see above.
    let out = unsafe { set.as_mut() }.ok_or(libc::EINVAL)?;
    let pol = out.update(|nodes| query(&Binder::new(m), nodes));
    // SAFETY: see above.
    unsafe { *policy = policy_to_c(pol.map_err(|e| errno_of(&e))?)? };
    Ok(())
}

/// `hwloc_set_membind`: on Linux, the calling thread's policy (there is
/// no process-wide one: `HWLOC_MEMBIND_PROCESS` fails with `ENOSYS`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_set_membind(
    topology: hwloc_topology_t,
    set: hwloc_const_bitmap_t,
    policy: c_int,
    flags: c_int,
) -> c_int {
    entry!(topology, |t: Status| {
        let (nodes, pol) = mem_request(t, set, policy, flags)?;
        if !t.model.is_thissystem {
            return Ok(());
        }
        if flags & MEMBIND_PROCESS != 0 {
            return Err(libc::ENOSYS);
        }
        check_linux_policy(&t.model, pol, &nodes)?;
        Binder::new(&t.model)
            .bind_memory(&nodes, pol, mem_flags(flags))
            .map_err(|e| errno_of(&e))
    })
}

/// `hwloc_get_membind`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_get_membind(
    topology: hwloc_topology_t,
    set: hwloc_bitmap_t,
    policy: *mut c_int,
    flags: c_int,
) -> c_int {
    entry!(topology, |t: Status| {
        if flags & !MEMBIND_ALLFLAGS != 0 {
            return Err(libc::EINVAL);
        }
        let m = &t.model;
        let r = if !m.is_thissystem {
            (m.complete_nodeset().clone(), POLICY_MIXED)
        } else if flags & MEMBIND_PROCESS != 0 {
            return Err(libc::ENOSYS);
        } else if flags & MEMBIND_BYNODESET != 0 {
            let strict = mem_flags(flags) & MemBindFlags::STRICT;
            // SAFETY: the caller's set and policy.
            return unsafe {
                query_membind_into(m, set, policy, |b, nodes| {
                    b.memory_binding_into(strict, nodes)
                })
            };
        } else {
            thread_membind(m, flags)?
        };
        // SAFETY: the caller's set and policy.
        unsafe { put_membind(m, set, policy, flags, r) }
    })
}

/// `hwloc_set_proc_membind`: Linux cannot set another process's memory
/// policy (`ENOSYS` after the checks).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_set_proc_membind(
    topology: hwloc_topology_t,
    _pid: libc::pid_t,
    set: hwloc_const_bitmap_t,
    policy: c_int,
    flags: c_int,
) -> c_int {
    entry!(topology, |t: Status| {
        mem_request(t, set, policy, flags)?;
        if t.model.is_thissystem {
            Err(libc::ENOSYS)
        } else {
            Ok(())
        }
    })
}

/// `hwloc_get_proc_membind`: Linux cannot read another process's memory
/// policy (`ENOSYS` after the checks).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_get_proc_membind(
    topology: hwloc_topology_t,
    _pid: libc::pid_t,
    set: hwloc_bitmap_t,
    policy: *mut c_int,
    flags: c_int,
) -> c_int {
    entry!(topology, |t: Status| {
        if flags & !MEMBIND_ALLFLAGS != 0 {
            return Err(libc::EINVAL);
        }
        if t.model.is_thissystem {
            return Err(libc::ENOSYS);
        }
        let r = (t.model.complete_nodeset().clone(), POLICY_MIXED);
        // SAFETY: the caller's set and policy.
        unsafe { put_membind(&t.model, set, policy, flags, r) }
    })
}

/// The caller's memory area as bytes (never read, only passed to the
/// kernel's NUMA calls by address and length).
///
/// # Safety
/// hwloc's contract: `addr..addr + len` is memory of the calling process.
unsafe fn area<'a>(addr: *const c_void, len: usize) -> Res<&'a [u8]> {
    if addr.is_null() {
        return Err(libc::EFAULT);
    }
    if len > isize::MAX as usize {
        return Err(libc::EINVAL);
    }
    // SAFETY: see above; the bytes are never read through the slice.
    Ok(unsafe { std::slice::from_raw_parts(addr as *const u8, len) })
}

/// Binds a non-empty area on this system.
///
/// # Safety
/// As [`area`].
unsafe fn bind_area(
    m: &Topology,
    addr: *const c_void,
    len: usize,
    nodes: &NodeSet,
    pol: MemPolicy,
    flags: c_int,
) -> Res<()> {
    check_linux_policy(m, pol, nodes)?;
    // SAFETY: see above.
    let bytes = unsafe { area(addr, len) }?;
    Binder::new(m)
        .bind_memory_area(bytes, nodes, pol, mem_flags(flags))
        .map_err(|e| errno_of(&e))
}

/// `hwloc_set_area_membind`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_set_area_membind(
    topology: hwloc_topology_t,
    addr: *const c_void,
    len: usize,
    set: hwloc_const_bitmap_t,
    policy: c_int,
    flags: c_int,
) -> c_int {
    entry!(topology, |t: Status| {
        // SAFETY: a C bitmap argument.
        let bits = unsafe { bits_of(set) }?;
        if flags & MEMBIND_BYNODESET == 0 {
            fix_membind_cpuset(&t.model, bits)?;
        }
        if flags & !MEMBIND_ALLFLAGS != 0 {
            return Err(libc::EINVAL);
        }
        let pol = policy_from_c(policy)?;
        // An empty area is fine before its set is checked, as in hwloc.
        if len == 0 {
            return Ok(());
        }
        let nodes = nodes_of(&t.model, bits, flags)?;
        if !t.model.is_thissystem {
            return Ok(());
        }
        // SAFETY: hwloc's contract on the area.
        unsafe { bind_area(&t.model, addr, len, &nodes, pol, flags) }
    })
}

/// `hwloc_get_area_membind`: the union of the pages' nodes, and
/// `HWLOC_MEMBIND_MIXED` when their policies differ. (hwloc ignores
/// `HWLOC_MEMBIND_PROCESS` and `_THREAD` here.)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_get_area_membind(
    topology: hwloc_topology_t,
    addr: *const c_void,
    len: usize,
    set: hwloc_bitmap_t,
    policy: *mut c_int,
    flags: c_int,
) -> c_int {
    entry!(topology, |t: Status| {
        if flags & !MEMBIND_ALLFLAGS != 0 || len == 0 {
            return Err(libc::EINVAL);
        }
        let m = &t.model;
        let r = if !m.is_thissystem {
            (m.complete_nodeset().clone(), POLICY_MIXED)
        } else if flags & MEMBIND_BYNODESET != 0 {
            // SAFETY: hwloc's contract on the area.
            let bytes = unsafe { area(addr, len) }?;
            // SAFETY: the caller's set and policy.
            return unsafe {
                query_membind_into(m, set, policy, |b, nodes| {
                    b.area_memory_binding_into(bytes, MemBindFlags::empty(), nodes)
                })
            };
        } else {
            // SAFETY: hwloc's contract on the area.
            let bytes = unsafe { area(addr, len) }?;
            let (nodes, pol) = Binder::new(m)
                .area_memory_binding(bytes, MemBindFlags::empty())
                .map_err(|e| errno_of(&e))?;
            (nodes, policy_to_c(pol)?)
        };
        // SAFETY: the caller's set and policy.
        unsafe { put_membind(m, set, policy, flags, r) }
    })
}

/// `hwloc_get_area_memlocation`: the nodes holding the area's pages that
/// were touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_get_area_memlocation(
    topology: hwloc_topology_t,
    addr: *const c_void,
    len: usize,
    set: hwloc_bitmap_t,
    flags: c_int,
) -> c_int {
    entry!(topology, |t: Status| {
        if flags & !MEMBIND_ALLFLAGS != 0 {
            return Err(libc::EINVAL);
        }
        let m = &t.model;
        let nodes = if len == 0 {
            // hwloc leaves a node set alone; a cpuset is converted
            // from no node, hence emptied.
            if flags & MEMBIND_BYNODESET != 0 {
                return Ok(());
            }
            NodeSet::new()
        } else if !m.is_thissystem {
            m.complete_nodeset().clone()
        } else {
            // SAFETY: hwloc's contract on the area.
            let bytes = unsafe { area(addr, len) }?;
            Binder::new(m)
                .area_memory_location(bytes, MemBindFlags::empty())
                .map_err(|e| errno_of(&e))?
        };
        // SAFETY: a C bitmap argument.
        unsafe { put_bits(set, mem_result(m, nodes, flags)) }
    })
}

/// Allocates `len` bytes as hwloc does: anonymous pages on this system
/// (freed with `munmap`), page-aligned heap memory otherwise (freed with
/// `free`). NULL with `errno` on failure.
fn alloc_for(t: &hwloc_topology, len: usize) -> *mut c_void {
    if t.model.is_thissystem {
        match wloc_bind::raw::map_anonymous(len) {
            Ok(p) => p.as_ptr().cast(),
            Err(e) => {
                set_errno(os_errno(&e));
                std::ptr::null_mut()
            }
        }
    } else {
        let mut p = std::ptr::null_mut();
        let page = wloc_bind::raw::page_size().max(64);
        // SAFETY: posix_memalign writes p; page is a power of two.
        let r = unsafe { libc::posix_memalign(&mut p, page, len) };
        // hwloc stores posix_memalign's result in errno, 0 included.
        set_errno(r);
        if r != 0 {
            return std::ptr::null_mut();
        }
        p
    }
}

/// `hwloc_alloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_alloc(topology: hwloc_topology_t, len: usize) -> *mut c_void {
    entry!(topology, std::ptr::null_mut(), |h| {
        match h.loaded_or_einval() {
            Ok(t) => alloc_for(t, len),
            Err(e) => {
                set_errno(e);
                std::ptr::null_mut()
            }
        }
    })
}

/// hwloc's `hwloc_alloc_membind_by_nodeset` once the set is nodes.
fn alloc_membind_nodes(
    t: &hwloc_topology,
    len: usize,
    nodes: Res<NodeSet>,
    policy: c_int,
    flags: c_int,
) -> *mut c_void {
    let strict = flags & MEMBIND_STRICT != 0;
    let bound = (|| {
        if flags & !MEMBIND_ALLFLAGS != 0 {
            return Err(Err(libc::EINVAL));
        }
        let pol = policy_from_c(policy).map_err(Err)?;
        // From here on, a failure falls back to plain memory unless strict.
        let nodes = nodes.map_err(Ok)?;
        if flags & MEMBIND_MIGRATE != 0 {
            return Err(Ok(libc::EINVAL));
        }
        Ok((nodes, pol))
    })();
    let (nodes, pol) = match bound {
        Ok(b) => b,
        Err(Err(e)) => {
            set_errno(e);
            return std::ptr::null_mut();
        }
        Err(Ok(e)) => {
            set_errno(e);
            return if strict {
                std::ptr::null_mut()
            } else {
                alloc_for(t, len)
            };
        }
    };
    let p = alloc_for(t, len);
    if p.is_null() || !t.model.is_thissystem {
        return p;
    }
    // SAFETY: p..p+len was just mapped.
    if let Err(e) = unsafe { bind_area(&t.model, p, len, &nodes, pol, flags) } {
        if strict {
            // SAFETY: the mapping made above, not handed out.
            let _ = unsafe { wloc_bind::raw::unmap(p.cast(), len) };
            set_errno(e);
            return std::ptr::null_mut();
        }
        set_errno(e);
    }
    p
}

/// `hwloc_alloc_membind`: without `HWLOC_MEMBIND_STRICT`, memory that
/// could not be bound is still returned, as in hwloc.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_alloc_membind(
    topology: hwloc_topology_t,
    len: usize,
    set: hwloc_const_bitmap_t,
    policy: c_int,
    flags: c_int,
) -> *mut c_void {
    entry!(topology, std::ptr::null_mut(), |h| {
        let t = match h.loaded_or_einval() {
            Ok(t) => t,
            Err(e) => {
                set_errno(e);
                return std::ptr::null_mut();
            }
        };
        // SAFETY: a C bitmap argument.
        let nodes = unsafe { bits_of(set) }.and_then(|bits| {
            if flags & MEMBIND_BYNODESET != 0 {
                fix_membind(&t.model, bits)
            } else {
                fix_membind_cpuset(&t.model, bits)
            }
        });
        // hwloc gives up at once on a cpuset it cannot convert.
        if let (Err(e), 0) = (&nodes, flags & MEMBIND_BYNODESET) {
            set_errno(*e);
            return if flags & MEMBIND_STRICT != 0 {
                std::ptr::null_mut()
            } else {
                alloc_for(t, len)
            };
        }
        let nodes = nodes.and_then(|n| fix_membind(&t.model, n.bitmap()));
        alloc_membind_nodes(t, len, nodes, policy, flags)
    })
}

/// `hwloc_free`: releases memory from `hwloc_alloc` or
/// `hwloc_alloc_membind` of the same topology.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hwloc_free(
    topology: hwloc_topology_t,
    addr: *mut c_void,
    len: usize,
) -> c_int {
    entry!(topology, -1, |h| {
        let t = match h.loaded_or_einval() {
            Ok(t) => t,
            Err(e) => return fail(e),
        };
        if t.model.is_thissystem {
            if addr.is_null() {
                return 0;
            }
            // SAFETY: the caller frees what hwloc_alloc* mapped, whole.
            match unsafe { wloc_bind::raw::unmap(addr.cast(), len) } {
                Ok(()) => 0,
                Err(e) => fail(os_errno(&e)),
            }
        } else {
            // SAFETY: memory from posix_memalign in alloc_for (or NULL).
            unsafe { libc::free(addr) };
            0
        }
    })
}

/// `HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_CPUBINDING` / `..._MEMBINDING`:
/// restricts the freshly loaded model of this system to the CPU binding of
/// the topology's process and to the calling thread's memory binding, as
/// `hwloc_topology_restrict` would (by cpuset, then by nodeset). A binding
/// that cannot be read leaves the model whole, as in hwloc. The caller
/// re-syncs the mirror.
pub(crate) fn restrict_to_binding(t: &mut hwloc_topology) {
    use wloc_core::topology::RestrictFlags;
    if !t.model.is_thissystem {
        return;
    }
    if t.flags & FLAG_RESTRICT_TO_CPUBINDING != 0
        && let Ok(cpus) = get_cpubind_on(&t.model, Who::Process(t.pid), 0)
    {
        let mut m = t.model.clone();
        if m.restrict_with_flags(cpus.bitmap(), RestrictFlags::NONE)
            .is_ok()
        {
            t.model = m;
        }
    }
    if t.flags & FLAG_RESTRICT_TO_MEMBINDING != 0
        && let Ok((nodes, _)) = thread_membind(&t.model, MEMBIND_STRICT)
    {
        let mut m = t.model.clone();
        if m.restrict_with_flags(nodes.bitmap(), RestrictFlags::BYNODESET)
            .is_ok()
        {
            t.model = m;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitmap::{free_raw, new_raw};
    use crate::handle::topo_mut;
    use crate::load::new_loaded;
    use crate::source::Source;
    use crate::topology::hwloc_topology_destroy;

    fn errno() -> c_int {
        // SAFETY: the calling thread's errno slot.
        unsafe { *libc::__errno_location() }
    }

    /// A loaded handle around a synthetic topology.
    fn synthetic(desc: &str, thissystem: bool) -> hwloc_topology_t {
        let mut m = wloc_core::synthetic::parse(desc)
            .unwrap()
            .build(Topology::new())
            .unwrap();
        m.is_thissystem = thissystem;
        new_loaded(
            m,
            Source::Input(wloc_input::Source::Synthetic(desc.into())),
            0,
        )
    }

    /// A topology standing for this system: one NUMA node (node 0 exists
    /// on every Linux system) and PUs up to the last this thread may use.
    fn this_system() -> (hwloc_topology_t, CpuSet) {
        let allowed = wloc_bind::thread_affinity().unwrap();
        let n = allowed.last().unwrap() + 1;
        (synthetic(&format!("pu:{n}"), true), allowed)
    }

    fn cpus(list: &str) -> CpuSet {
        CpuSet::from_bitmap(Bitmap::parse_list(list).unwrap())
    }

    fn bitmap(b: &Bitmap) -> hwloc_bitmap_t {
        new_raw(b.clone())
    }

    fn read(b: hwloc_bitmap_t) -> Bitmap {
        // SAFETY: a bitmap from new_raw.
        unsafe { (*b).bits().clone() }
    }

    #[test]
    fn foreign_topologies_bind_nothing_and_report_everything() {
        let t = synthetic("numa:2 pu:4", false);
        let all = bitmap(&Bitmap::parse_list("0-7").unwrap());
        let out = new_raw(Bitmap::new());
        let mut pol = 7;
        // SAFETY: live handle and bitmaps.
        unsafe {
            assert_eq!(hwloc_set_cpubind(t, all, 0), 0);
            assert_eq!(hwloc_set_cpubind(t, all, CPUBIND_THREAD), 0);
            assert_eq!(hwloc_set_proc_cpubind(t, 999_999, all, 0), 0);
            assert_eq!(hwloc_get_cpubind(t, out, 0), 0);
            assert_eq!(read(out).to_list_string(), "0-7");
            assert_eq!(hwloc_get_last_cpu_location(t, out, 0), 0);
            assert_eq!(read(out).to_list_string(), "0-7");
            assert_eq!(hwloc_set_membind(t, all, 4, MEMBIND_PROCESS), 0);
            assert_eq!(hwloc_get_membind(t, out, &mut pol, MEMBIND_BYNODESET), 0);
            assert_eq!((read(out).to_list_string(), pol), ("0-1".into(), -1));
            assert_eq!(hwloc_get_proc_membind(t, 1, out, &mut pol, 0), 0);
            assert_eq!((read(out).to_list_string(), pol), ("0-7".into(), -1));
            // Checks still apply.
            assert_eq!(hwloc_set_cpubind(t, all, 0x10), -1);
            assert_eq!(errno(), libc::EINVAL);
            assert_eq!(hwloc_set_membind(t, all, 9, 0), -1);
            assert_eq!(errno(), libc::EINVAL);
            let empty = new_raw(Bitmap::new());
            assert_eq!(hwloc_set_cpubind(t, empty, 0), -1);
            assert_eq!(errno(), libc::EINVAL);
            let far = bitmap(&Bitmap::parse_list("100").unwrap());
            assert_eq!(hwloc_set_cpubind(t, far, 0), -1);
            assert_eq!(errno(), libc::EINVAL);
            // Heap memory, freed with free().
            let p = hwloc_alloc_membind(t, 100, all, 2, MEMBIND_STRICT);
            assert!(!p.is_null());
            assert_eq!(hwloc_free(t, p, 100), 0);
            assert!(hwloc_alloc_membind(t, 100, empty, 2, MEMBIND_STRICT).is_null());
            let p = hwloc_alloc_membind(t, 100, empty, 2, 0);
            assert!(!p.is_null());
            assert_eq!(hwloc_free(t, p, 100), 0);
            for b in [all, out, empty, far] {
                free_raw(b);
            }
            hwloc_topology_destroy(t);
        }
    }

    #[test]
    fn null_arguments_fail_cleanly() {
        let t = synthetic("pu:2", false);
        let out = new_raw(Bitmap::new());
        // SAFETY: NULL handles and bitmaps are refused before any use.
        unsafe {
            assert_eq!(hwloc_get_cpubind(std::ptr::null_mut(), out, 0), -1);
            assert_eq!(errno(), libc::EINVAL);
            assert_eq!(hwloc_set_cpubind(t, std::ptr::null(), 0), -1);
            assert_eq!(hwloc_get_cpubind(t, std::ptr::null_mut(), 0), -1);
            assert_eq!(hwloc_get_membind(t, out, std::ptr::null_mut(), 0), -1);
            assert!(hwloc_alloc(std::ptr::null_mut(), 10).is_null());
            assert_eq!(
                hwloc_free(std::ptr::null_mut(), std::ptr::null_mut(), 0),
                -1
            );
            free_raw(out);
            hwloc_topology_destroy(t);
        }
    }

    #[test]
    fn sets_are_fixed_as_hwloc_does() {
        let m = wloc_core::synthetic::parse("numa:2 pu:2")
            .unwrap()
            .build(Topology::new())
            .unwrap();
        assert_eq!(fix_cpubind(&m, cpus("1-2").bitmap()), Ok(cpus("1-2")));
        assert_eq!(fix_cpubind(&m, &Bitmap::full()), Err(libc::EINVAL));
        assert_eq!(fix_cpubind(&m, cpus("0-3").bitmap()), Ok(cpus("0-3")));
        assert_eq!(
            fix_membind_cpuset(&m, cpus("2").bitmap()),
            Ok(NodeSet::from_index(1))
        );
        assert_eq!(
            fix_membind_cpuset(&m, cpus("0-3").bitmap()),
            Ok(m.complete_nodeset().clone())
        );
        assert_eq!(
            cpuset_from_nodeset(&m, &NodeSet::from_index(1)),
            cpus("2-3")
        );
        assert_eq!(
            fix_membind(&m, NodeSet::from_index(2).bitmap()),
            Err(libc::EINVAL)
        );
    }

    #[test]
    fn binds_and_reads_the_calling_thread() {
        // The handle is made and used in a thread of its own, whose
        // binding the test changes.
        std::thread::spawn(move || {
            let (t, allowed) = this_system();
            let first = CpuSet::from_index(allowed.first().unwrap());
            let one = bitmap(first.bitmap());
            let out = new_raw(Bitmap::new());
            // SAFETY: live handle and bitmaps; only this thread is bound.
            unsafe {
                assert_eq!(hwloc_set_cpubind(t, one, CPUBIND_THREAD), 0);
                assert_eq!(hwloc_get_cpubind(t, out, CPUBIND_THREAD), 0);
                assert_eq!(read(out), *first.bitmap());
                assert_eq!(hwloc_get_thread_cpubind(t, libc::pthread_self(), out, 0), 0);
                assert_eq!(read(out), *first.bitmap());
                assert_eq!(hwloc_get_last_cpu_location(t, out, CPUBIND_THREAD), 0);
                assert_eq!(read(out), *first.bitmap());
                assert_eq!(
                    hwloc_get_proc_last_cpu_location(t, 0, out, CPUBIND_THREAD),
                    0
                );
                assert_eq!(read(out), *first.bitmap());
                // The process-wide binding is the union over its threads.
                assert_eq!(
                    hwloc_get_proc_cpubind(t, std::process::id() as i32, out, 0),
                    0
                );
                assert!(first.is_included_in(&CpuSet::from_bitmap(read(out))));
                free_raw(one);
                free_raw(out);
                hwloc_topology_destroy(t);
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn strict_process_query_fails_when_threads_differ() {
        let (t, allowed) = this_system();
        if allowed.weight().unwrap_or(0) < 2 {
            return;
        }
        let first = CpuSet::from_index(allowed.first().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let h = std::thread::spawn(move || {
            wloc_bind::set_thread_affinity(&first).unwrap();
            tx.send(()).unwrap();
            let _ = done_rx.recv();
        });
        rx.recv().unwrap();
        let out = new_raw(Bitmap::new());
        // SAFETY: live handle and bitmap.
        unsafe {
            assert_eq!(hwloc_get_cpubind(t, out, CPUBIND_STRICT), -1);
            // hwloc walks the threads again while only some fail, then
            // gives up with EAGAIN.
            assert_eq!(errno(), libc::EAGAIN);
            assert_eq!(hwloc_get_cpubind(t, out, 0), 0);
            assert!(allowed.is_included_in(&CpuSet::from_bitmap(read(out))));
        }
        done_tx.send(()).unwrap();
        h.join().unwrap();
        free_raw(out);
        // SAFETY: the handle made above.
        unsafe { hwloc_topology_destroy(t) };
    }

    #[test]
    fn another_process_is_the_target_of_non_proc_calls() {
        let (t, allowed) = this_system();
        let mut child = std::process::Command::new("sleep")
            .arg("10")
            .spawn()
            .unwrap();
        // SAFETY: the handle made above.
        unsafe { topo_mut(t) }.unwrap().pid = child.id() as i32;
        let out = new_raw(Bitmap::new());
        // SAFETY: live handle and bitmap.
        unsafe {
            assert_eq!(hwloc_get_cpubind(t, out, 0), 0);
            assert!(CpuSet::from_bitmap(read(out)).is_included_in(&allowed));
            assert_eq!(hwloc_get_cpubind(t, out, CPUBIND_THREAD), -1);
            assert_eq!(errno(), libc::ENOSYS);
            assert_eq!(hwloc_get_last_cpu_location(t, out, 0), 0);
            assert_eq!(
                hwloc_get_thread_cpubind(t, libc::pthread_self(), out, 0),
                -1
            );
            assert_eq!(errno(), libc::ENOSYS);
            let one = bitmap(CpuSet::from_index(allowed.first().unwrap()).bitmap());
            assert_eq!(hwloc_set_cpubind(t, one, 0), 0);
            assert_eq!(hwloc_get_proc_cpubind(t, 0, out, 0), 0);
            assert_eq!(read(out), read(one));
            free_raw(one);
        }
        let _ = child.kill();
        let _ = child.wait();
        // A process that is gone is EINVAL for hwloc.
        // SAFETY: live handle and bitmap.
        unsafe {
            assert_eq!(hwloc_get_cpubind(t, out, 0), -1);
            assert_eq!(errno(), libc::EINVAL);
            free_raw(out);
            hwloc_topology_destroy(t);
        }
    }

    #[test]
    fn memory_policies_of_the_calling_thread() {
        std::thread::spawn(move || {
            let (t, _) = this_system();
            let node0 = bitmap(NodeSet::from_index(0).bitmap());
            let out = new_raw(Bitmap::new());
            let mut pol = 7;
            // SAFETY: live handle and bitmaps; the policy is this thread's.
            unsafe {
                assert_eq!(hwloc_set_membind(t, node0, 2, MEMBIND_BYNODESET), 0);
                assert_eq!(hwloc_get_membind(t, out, &mut pol, MEMBIND_BYNODESET), 0);
                assert_eq!((read(out), pol), (read(node0), 2));
                assert_eq!(
                    hwloc_set_membind(t, node0, 2, MEMBIND_PROCESS | MEMBIND_BYNODESET),
                    -1
                );
                assert_eq!(errno(), libc::ENOSYS);
                assert_eq!(hwloc_set_membind(t, node0, 4, MEMBIND_BYNODESET), -1);
                assert_eq!(errno(), libc::ENOSYS);
                assert_eq!(hwloc_get_proc_membind(t, 1, out, &mut pol, 0), -1);
                assert_eq!(errno(), libc::ENOSYS);
                assert_eq!(hwloc_set_membind(t, node0, 0, MEMBIND_BYNODESET), 0);
                assert_eq!(hwloc_get_membind(t, out, &mut pol, MEMBIND_BYNODESET), 0);
                assert_eq!((read(out), pol), (read(node0), 1));
                free_raw(node0);
                free_raw(out);
                hwloc_topology_destroy(t);
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn first_touch_takes_all_nodes_or_fails_with_exdev() {
        // The check comes before any system call: a model with two nodes.
        let t = synthetic("numa:2 pu:1", true);
        let node1 = bitmap(NodeSet::from_index(1).bitmap());
        // SAFETY: live handle and bitmap.
        unsafe {
            assert_eq!(hwloc_set_membind(t, node1, 1, MEMBIND_BYNODESET), -1);
            assert_eq!(errno(), libc::EXDEV);
            free_raw(node1);
            hwloc_topology_destroy(t);
        }
    }

    #[test]
    fn bound_memory_is_located_on_its_node() {
        let (t, _) = this_system();
        let node0 = bitmap(NodeSet::from_index(0).bitmap());
        let out = new_raw(Bitmap::new());
        let mut pol = 7;
        let len = 1 << 16;
        // SAFETY: live handle, bitmaps and the mapping made here.
        unsafe {
            let p = hwloc_alloc_membind(t, len, node0, 2, MEMBIND_BYNODESET | MEMBIND_STRICT);
            assert!(!p.is_null());
            std::ptr::write_bytes(p as *mut u8, 1, len);
            assert_eq!(
                hwloc_get_area_memlocation(t, p, len, out, MEMBIND_BYNODESET),
                0
            );
            assert_eq!(read(out), read(node0));
            assert_eq!(
                hwloc_get_area_membind(t, p, len, out, &mut pol, MEMBIND_BYNODESET),
                0
            );
            assert_eq!((read(out), pol), (read(node0), 2));
            // hwloc takes (and ignores) PROCESS and THREAD for areas.
            assert_eq!(hwloc_get_area_membind(t, p, len, out, &mut pol, 3), 0);
            assert_eq!(hwloc_get_area_membind(t, p, 0, out, &mut pol, 0), -1);
            assert_eq!(errno(), libc::EINVAL);
            assert_eq!(
                hwloc_set_area_membind(t, p, 0, node0, 2, MEMBIND_BYNODESET),
                0
            );
            // hwloc refuses to allocate with MIGRATE, and strictly fails.
            assert!(
                hwloc_alloc_membind(
                    t,
                    len,
                    node0,
                    2,
                    MEMBIND_BYNODESET | MEMBIND_MIGRATE | MEMBIND_STRICT
                )
                .is_null()
            );
            assert_eq!(errno(), libc::EINVAL);
            assert_eq!(hwloc_free(t, p, len), 0);
            // Nothing to locate in an empty area: a cpuset becomes empty.
            let cpus = new_raw(Bitmap::full());
            assert_eq!(hwloc_get_area_memlocation(t, p, 0, cpus, 0), 0);
            assert!(read(cpus).is_empty());
            free_raw(cpus);
            free_raw(node0);
            free_raw(out);
            hwloc_topology_destroy(t);
        }
    }

    #[test]
    fn restricts_to_the_process_binding() {
        let (t, _) = this_system();
        // SAFETY: the handle made above.
        let th = unsafe { topo_mut(t) }.unwrap();
        // A model larger than the machine.
        let mut big = wloc_core::synthetic::parse("pu:300")
            .unwrap()
            .build(Topology::new())
            .unwrap();
        big.is_thissystem = true;
        th.model = big;
        th.flags = FLAG_RESTRICT_TO_CPUBINDING;
        let bound = get_cpubind_on(&th.model, Who::Process(0), 0).unwrap();
        restrict_to_binding(th);
        assert_eq!(th.model.cpuset(), &bound);
        assert_eq!(th.model.complete_cpuset(), &bound);
        // SAFETY: the handle made above.
        unsafe { hwloc_topology_destroy(t) };
    }
}
