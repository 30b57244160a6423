//! A hostile discovery component for the host's tests: granted `/proc`
//! and `/sys`, it tries every spelling of files private to a process
//! (the environment, command line, memory map, open files of `wloc` and
//! of other processes) and every way to learn other processes' PIDs.
//! The host must answer `denied` to all of them and still serve the few
//! files discovery needs.  Never shipped.

use wloc_hostile_kit::*;

/// Paths that must never be served, in many spellings.
const PRIVATE: &[&str] = &[
    "/proc/self/environ",
    "/proc/./self/environ",
    "/proc//self/environ",
    "/proc/self/./environ",
    "/proc/self//environ",
    "/proc/self/cmdline",
    "/proc/self/status",
    "/proc/self/stat",
    "/proc/self/maps",
    "/proc/self/smaps",
    "/proc/self/auxv",
    "/proc/self/stack",
    "/proc/self/syscall",
    "/proc/self/mem",
    "/proc/self/fd",
    "/proc/self/fd/0",
    "/proc/self/fd/3",
    "/proc/self/fdinfo",
    "/proc/self/cwd",
    "/proc/self/exe",
    "/proc/self/root/etc/passwd",
    "/proc/self/task",
    "/proc/self/task/1/environ",
    "/proc/self/net/tcp",
    "/proc/self",
    "/proc/thread-self",
    "/proc/thread-self/environ",
    "/proc/thread-self/cgroup",
    "/proc/1",
    "/proc/1/environ",
    "/proc/1/cmdline",
    "/proc/1/cgroup",
    "/proc/1/task/1/environ",
    "/proc/net/unix",
    "/proc/net/tcp",
    "/proc/kcore",
    "/proc/kmsg",
    "/proc/loadavg",
    "/proc/locks",
    "/proc/sys/kernel/ns_last_pid",
];

/// Files discovery needs: they must still read.
const SERVED: &[&str] = &[
    "/proc/self/cgroup",
    "/proc/self/mounts",
    "/proc/mounts",
    "/proc/cpuinfo",
    "/proc/meminfo",
];

fn is_process_folder(name: &str) -> bool {
    let last = name.rsplit('/').next().unwrap_or(name);
    last == "self"
        || last == "thread-self"
        || (!last.is_empty() && last.bytes().all(|b| b.is_ascii_digit()))
}

fn discover() -> Result<Discovery, String> {
    let mut d = small();
    let served: Vec<String> = SERVED.iter().map(|p| p.to_string()).collect();
    for (p, r) in SERVED.iter().zip(files::read_many(&served, 1 << 16)) {
        let v = match r {
            Ok(b) => format!("read {} bytes", b.len()),
            Err(e) => describe_err(&e),
        };
        d.infos.push(info(format!("control {p}"), v));
    }
    probe(&mut d, PRIVATE);
    for p in PRIVATE {
        let v = match files::read_link(p) {
            Ok(t) => format!("LEAKED link to {t}"),
            Err(e) => describe_err(&e),
        };
        d.infos.push(info(format!("readlink {p}"), v));
    }
    // Ways to enumerate processes: listings and globs of /proc.
    let folders = match files::list_dir("/proc") {
        Ok(names) => names
            .iter()
            .filter(|n| is_process_folder(n))
            .count()
            .to_string(),
        Err(e) => describe_err(&e),
    };
    d.infos.push(info("process folders in list /proc", folders));
    for pattern in [
        "/proc/*",
        "/proc/*/cmdline",
        "/proc/*/environ",
        "/proc/*/task/*/environ",
    ] {
        let v = match files::glob(pattern) {
            Ok(found) => found
                .iter()
                .filter(|p| p.split('/').nth(2).is_some_and(is_process_folder))
                .count()
                .to_string(),
            Err(e) => describe_err(&e),
        };
        d.infos
            .push(info(format!("process folders in glob {pattern}"), v));
    }
    // A PID oracle: does any answer differ between PIDs?
    let stats: Vec<String> = (1..=4096).map(|pid| format!("/proc/{pid}/stat")).collect();
    let answers = files::read_many(&stats, 64);
    let not_denied = answers
        .iter()
        .filter(|r| !matches!(r, Err(files::FileError::Denied)))
        .count();
    d.infos.push(info(
        "pids answered other than denied",
        not_denied.to_string(),
    ));
    Ok(d)
}

component!(discover);
