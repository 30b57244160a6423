//! CPU binding of processes and threads, and where they last ran.

use std::io;

use wloc_core::CpuSet;

use crate::error::BindError;
use crate::{Binder, CpuBindFlags, check_id, sys};

/// Whom a CPU binding operation acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    ThisProcess,
    ThisThread,
    Process(i32),
    Thread(i32),
}

impl Target {
    fn from_flags(op: &str, flags: CpuBindFlags, id: Option<i32>) -> Result<Target, BindError> {
        if flags.contains(CpuBindFlags::PROCESS | CpuBindFlags::THREAD) {
            return Err(BindError::BadFlags {
                op: op.into(),
                reason: "PROCESS and THREAD cannot be combined",
            });
        }
        let thread = flags.contains(CpuBindFlags::THREAD);
        Ok(match id {
            None if thread => Target::ThisThread,
            None => Target::ThisProcess,
            Some(i) => {
                check_id(op, i)?;
                if thread {
                    Target::Thread(i)
                } else {
                    Target::Process(i)
                }
            }
        })
    }

    fn describe(self) -> String {
        match self {
            Target::ThisProcess => "this process".into(),
            Target::ThisThread => "this thread".into(),
            Target::Process(p) => format!("process {p}"),
            Target::Thread(t) => format!("thread {t}"),
        }
    }

    fn id(self) -> Option<i32> {
        match self {
            Target::Process(i) | Target::Thread(i) => Some(i),
            _ => None,
        }
    }
}

/// The thread ids of a process, from `/proc/PID/task`.
pub(crate) fn thread_ids(pid: i32) -> io::Result<Vec<i32>> {
    let mut tids: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map_err(|e| {
            if e.kind() == io::ErrorKind::NotFound {
                io::Error::from_raw_os_error(libc::ESRCH)
            } else {
                e
            }
        })?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    Ok(tids)
}

fn this_pid() -> i32 {
    std::process::id() as i32
}

/// The CPU a thread last ran on: field 39 of `/proc/TID/stat`.
pub(crate) fn stat_last_cpu(path: &str) -> io::Result<u32> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            io::Error::from_raw_os_error(libc::ESRCH)
        } else {
            e
        }
    })?;
    parse_stat_cpu(&text).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("unexpected content in {path}"),
        )
    })
}

/// Field 39 (`processor`) of a stat line.  The command name (field 2)
/// may hold spaces and parentheses, so fields are counted after the
/// last `)`, where field 3 starts.
fn parse_stat_cpu(text: &str) -> Option<u32> {
    let rest = &text[text.rfind(')')? + 1..];
    rest.split_whitespace().nth(39 - 3)?.parse().ok()
}

impl Binder<'_> {
    fn set_target_cpubind(&self, op: &str, target: Target, set: &CpuSet) -> Result<(), BindError> {
        self.check_system(op)?;
        let set = self.fix_cpuset(op, set)?;
        let mask = sys::to_kernel_mask(&set, 0);
        let fail = |e: io::Error| {
            if e.raw_os_error() == Some(libc::EINVAL) {
                BindError::InvalidSet {
                    op: op.into(),
                    reason: "no PU of the set is online and allowed for this process".into(),
                }
            } else {
                BindError::from_os(op, e, target.id())
            }
        };
        match target {
            Target::ThisThread => sys::sched_setaffinity(0, &mask).map_err(fail),
            Target::Thread(t) => sys::sched_setaffinity(t, &mask).map_err(fail),
            Target::ThisProcess | Target::Process(_) => {
                let pid = target.id().unwrap_or_else(this_pid);
                // Threads may start while we walk the list: walk it again
                // until a pass finds no thread left to bind.
                let mut done: Vec<i32> = Vec::new();
                for _ in 0..16 {
                    let tids = thread_ids(pid).map_err(|e| BindError::from_os(op, e, Some(pid)))?;
                    let todo: Vec<i32> = tids.into_iter().filter(|t| !done.contains(t)).collect();
                    if todo.is_empty() {
                        break;
                    }
                    for t in todo {
                        match sys::sched_setaffinity(t, &mask) {
                            Ok(()) => done.push(t),
                            // The thread exited meanwhile.
                            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                            Err(e) => return Err(fail(e)),
                        }
                    }
                }
                if done.is_empty() {
                    return Err(BindError::NoSuchTask {
                        op: op.into(),
                        id: pid,
                    });
                }
                Ok(())
            }
        }
    }

    fn get_target_cpubind(&self, op: &str, target: Target) -> Result<CpuSet, BindError> {
        self.check_system(op)?;
        let fail = |e| BindError::from_os(op, e, target.id());
        match target {
            Target::ThisThread => sys::sched_getaffinity(0).map_err(fail),
            Target::Thread(t) => sys::sched_getaffinity(t).map_err(fail),
            Target::ThisProcess | Target::Process(_) => {
                let pid = target.id().unwrap_or_else(this_pid);
                let mut all = CpuSet::new();
                let mut found = false;
                for t in thread_ids(pid).map_err(fail)? {
                    match sys::sched_getaffinity::<wloc_core::bitmap::CpuKind>(t) {
                        Ok(s) => {
                            all |= s;
                            found = true;
                        }
                        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                        Err(e) => return Err(fail(e)),
                    }
                }
                if !found {
                    return Err(BindError::NoSuchTask {
                        op: op.into(),
                        id: pid,
                    });
                }
                Ok(all)
            }
        }
    }

    fn get_target_last_cpu(&self, op: &str, target: Target) -> Result<CpuSet, BindError> {
        self.check_system(op)?;
        let fail = |e| BindError::from_os(op, e, target.id());
        match target {
            Target::ThisThread => sys::getcpu().map(CpuSet::from_index).map_err(fail),
            Target::Thread(t) => stat_last_cpu(&format!("/proc/{t}/stat"))
                .map(CpuSet::from_index)
                .map_err(fail),
            Target::ThisProcess | Target::Process(_) => {
                let pid = target.id().unwrap_or_else(this_pid);
                let mut all = CpuSet::new();
                for t in thread_ids(pid).map_err(fail)? {
                    match stat_last_cpu(&format!("/proc/{pid}/task/{t}/stat")) {
                        Ok(c) => all.set(c),
                        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                        Err(e) => return Err(fail(e)),
                    }
                }
                if all.is_empty() {
                    return Err(BindError::NoSuchTask {
                        op: op.into(),
                        id: pid,
                    });
                }
                Ok(all)
            }
        }
    }

    /// Binds this process (all its threads; the default) or, with
    /// [`CpuBindFlags::THREAD`], the calling thread to the PUs of `set`.
    pub fn bind_cpu(&self, set: &CpuSet, flags: CpuBindFlags) -> Result<(), BindError> {
        let op = "set the CPU binding";
        let target = Target::from_flags(op, flags, None)?;
        self.set_target_cpubind(&format!("{op} of {}", target.describe()), target, set)
    }

    /// The CPU binding of this process (the union over its threads) or,
    /// with [`CpuBindFlags::THREAD`], of the calling thread.
    pub fn cpu_binding(&self, flags: CpuBindFlags) -> Result<CpuSet, BindError> {
        let op = "get the CPU binding";
        let target = Target::from_flags(op, flags, None)?;
        self.get_target_cpubind(&format!("{op} of {}", target.describe()), target)
    }

    /// Binds every thread of process `pid` or, with
    /// [`CpuBindFlags::THREAD`], the single thread whose id is `pid`.
    pub fn bind_process_cpu(
        &self,
        pid: i32,
        set: &CpuSet,
        flags: CpuBindFlags,
    ) -> Result<(), BindError> {
        let op = "set the CPU binding";
        let target = Target::from_flags(op, flags, Some(pid))?;
        self.set_target_cpubind(&format!("{op} of {}", target.describe()), target, set)
    }

    /// The CPU binding of process `pid` (the union over its threads) or,
    /// with [`CpuBindFlags::THREAD`], of thread `pid`.
    pub fn process_cpu_binding(&self, pid: i32, flags: CpuBindFlags) -> Result<CpuSet, BindError> {
        let op = "get the CPU binding";
        let target = Target::from_flags(op, flags, Some(pid))?;
        self.get_target_cpubind(&format!("{op} of {}", target.describe()), target)
    }

    /// Binds the thread `tid` (of any process).
    pub fn bind_thread_cpu(&self, tid: i32, set: &CpuSet) -> Result<(), BindError> {
        self.bind_process_cpu(tid, set, CpuBindFlags::THREAD)
    }

    /// The CPU binding of thread `tid` (of any process).
    pub fn thread_cpu_binding(&self, tid: i32) -> Result<CpuSet, BindError> {
        self.process_cpu_binding(tid, CpuBindFlags::THREAD)
    }

    /// The PUs this process's threads last ran on or, with
    /// [`CpuBindFlags::THREAD`], the PU the calling thread runs on.
    pub fn last_cpu_location(&self, flags: CpuBindFlags) -> Result<CpuSet, BindError> {
        let op = "get the last CPU location";
        let target = Target::from_flags(op, flags, None)?;
        self.get_target_last_cpu(&format!("{op} of {}", target.describe()), target)
    }

    /// The PUs the threads of process `pid` last ran on or, with
    /// [`CpuBindFlags::THREAD`], the PU thread `pid` last ran on.
    pub fn process_last_cpu_location(
        &self,
        pid: i32,
        flags: CpuBindFlags,
    ) -> Result<CpuSet, BindError> {
        let op = "get the last CPU location";
        let target = Target::from_flags(op, flags, Some(pid))?;
        self.get_target_last_cpu(&format!("{op} of {}", target.describe()), target)
    }

    /// The PU thread `tid` (of any process) last ran on.
    pub fn thread_last_cpu_location(&self, tid: i32) -> Result<CpuSet, BindError> {
        self.process_last_cpu_location(tid, CpuBindFlags::THREAD)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_processor_field() {
        let mut line = String::from("42 (a) b) (c) S");
        for i in 4..=52 {
            line.push_str(&format!(" {}", if i == 39 { 7 } else { 1000 + i }));
        }
        assert_eq!(parse_stat_cpu(&line), Some(7));
        assert_eq!(parse_stat_cpu("42 (x) S 1 2"), None);
        assert_eq!(parse_stat_cpu("garbage"), None);
    }

    #[test]
    fn own_stat_names_an_allowed_cpu() {
        let cpu = stat_last_cpu("/proc/self/stat").unwrap();
        let allowed: CpuSet = sys::sched_getaffinity(0).unwrap();
        assert!(allowed.is_set(cpu));
    }

    #[test]
    fn flags_are_checked_first() {
        let e = Target::from_flags("x", CpuBindFlags::PROCESS | CpuBindFlags::THREAD, None);
        assert!(matches!(e, Err(BindError::BadFlags { .. })));
        assert!(matches!(
            Target::from_flags("x", CpuBindFlags::empty(), Some(0)),
            Err(BindError::NoSuchTask { id: 0, .. })
        ));
        assert_eq!(
            Target::from_flags("x", CpuBindFlags::THREAD, Some(5)).unwrap(),
            Target::Thread(5)
        );
    }

    #[test]
    fn lists_own_threads() {
        let tids = thread_ids(std::process::id() as i32).unwrap();
        assert!(tids.contains(&(std::process::id() as i32)));
        assert!(thread_ids(i32::MAX).is_err());
    }
}
