//! `wloc gather-topology NAME`: records this machine's sysfs and procfs files
//! into `NAME.tar.bz2`, with the console listing in `NAME.output` and the
//! XML in `NAME.xml`, as `hwloc-gather-topology` does.  The tarball holds one
//! top directory `basename(NAME)` with the files under their absolute paths;
//! unpacked, it is read back with `wloc ls -i DIR --if fsroot` (or hwloc's
//! `lstopo -i DIR`).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use cap_std::fs::Dir;
use clap::Args;
use wloc_core::{Topology, TypeFilter};
use wloc_discovery::Discovery;
use wloc_discovery::input::Source;

use super::topology::{Load, LoadErrors, TopologyArgs, keep_all};

/// Options of `wloc gather-topology`.
#[derive(Args, Debug)]
pub struct GatherTopologyArgs {
    /// Do not gather I/O files (PCI devices, block, network, GPU, ... classes).
    #[arg(long)]
    no_io: bool,
    /// Gather I/O files (the default; accepted as hwloc-gather-topology spells it).
    #[arg(long, conflicts_with = "no_io")]
    io: bool,
    /// Also gather SMBIOS memory device entries (/sys/firmware/dmi; readable by root only).
    #[arg(long)]
    dmi: bool,
    /// Do not record the x86 CPUID of every PU into the recording's `cpuid` directory.
    #[arg(long)]
    no_cpuid: bool,
    /// Also keep the gathered tree unpacked, in directory NAME.
    #[arg(long)]
    keep: bool,
    /// Overwrite NAME.tar.bz2, NAME.output and NAME.xml if they exist.
    #[arg(short = 'f', long)]
    force: bool,
    /// Do not print progress messages.
    #[arg(short = 's', long)]
    silent: bool,
    /// Where to save: NAME.tar.bz2, NAME.output and NAME.xml are written (e.g. /tmp/$(uname -n)).
    name: PathBuf,
}

/// Largest file recorded: the discovery reads no more of a file
/// ([`wloc_linux::MAX_FILE_SIZE`]).
const MAX_FILE: usize = wloc_linux::MAX_FILE_SIZE;
/// Deepest directory walked below a gathered root (PCI trees nest bridges).
const MAX_DEPTH: usize = 48;
/// Most entries recorded, so that an odd sysfs cannot fill the disk.
const MAX_ENTRIES: usize = 2_000_000;
/// Most file bytes recorded in total.
const MAX_TOTAL_BYTES: u64 = 1 << 30;

/// One recorded path.
#[derive(Debug, PartialEq, Eq)]
enum Entry {
    Dir,
    File(Vec<u8>),
    Link(PathBuf),
}

/// The files gathered so far, by absolute path.  Kept in memory (sysfs
/// files are small and capped) and written to the tarball in path order,
/// so that every directory comes before its content.
#[derive(Default)]
struct Recording {
    entries: BTreeMap<PathBuf, Entry>,
    bytes: u64,
    full: bool,
}

/// Roots that recorded link targets may lie under: the recording never
/// follows a link out of the trees discovery reads.
const TARGET_ROOTS: &[&str] = &["/sys", "/proc", "/run/udev"];

impl Recording {
    fn has_room(&mut self, more: u64) -> bool {
        if self.entries.len() >= MAX_ENTRIES || self.bytes + more > MAX_TOTAL_BYTES {
            self.full = true;
        }
        !self.full
    }

    /// Records `path` (whose ancestors become directories) unless one of its
    /// ancestors is already a link, which a tarball cannot hold content under.
    fn insert(&mut self, path: &Path, entry: Entry) {
        let mut cur = PathBuf::from("/");
        let comps: Vec<_> = path.components().skip(1).collect();
        for c in &comps[..comps.len().saturating_sub(1)] {
            cur.push(c);
            match self.entries.get(&cur) {
                Some(Entry::Dir) => {}
                Some(_) => return,
                None => {
                    self.entries.insert(cur.clone(), Entry::Dir);
                }
            }
        }
        if comps.is_empty() {
            return;
        }
        let size = match &entry {
            Entry::File(b) => b.len() as u64,
            _ => 0,
        };
        if !self.has_room(size) {
            return;
        }
        match self.entries.get(path) {
            // A directory reached both as a directory and through a walk
            // stays a directory.
            Some(Entry::Dir) if !matches!(entry, Entry::File(_)) => {}
            _ => {
                self.bytes += size;
                self.entries.insert(path.to_path_buf(), entry);
            }
        }
    }

    /// Records a regular file if it can be read; anything else is skipped.
    fn save_file(&mut self, path: &Path) {
        if let Some(bytes) = read_capped(path) {
            self.insert(path, Entry::File(bytes));
        }
    }

    /// Records whatever is at `path` without following a final link.
    fn save_link(&mut self, path: &Path) {
        if let Ok(t) = std::fs::read_link(path) {
            self.insert(path, Entry::Link(t));
        }
    }

    /// Records a directory tree (as `find DIR` sees it: links are recorded
    /// as links, not followed).  A root that is itself a link is recorded
    /// as such and its target walked too.
    fn save_dir(&mut self, path: &Path) {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        if meta.file_type().is_symlink() {
            self.save_link(path);
            if let Some(t) = canonical_target(path) {
                self.walk(&t, 0);
            }
        } else {
            self.walk(path, 0);
        }
    }

    fn walk(&mut self, path: &Path, depth: usize) {
        if depth > MAX_DEPTH || self.full {
            return;
        }
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        let ft = meta.file_type();
        if ft.is_symlink() {
            self.save_link(path);
        } else if ft.is_file() {
            if !skipped_file(path) {
                self.save_file(path);
            }
        } else if ft.is_dir() {
            self.insert(path, Entry::Dir);
            let Ok(rd) = std::fs::read_dir(path) else {
                return;
            };
            let mut names: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
            names.sort();
            for p in names {
                self.walk(&p, depth + 1);
            }
        }
        // FIFOs, sockets and devices are never recorded.
    }

    /// A class or bus directory (`/sys/class/net`): its entries, and the
    /// targets of its links (with the `device` link of each target) unless
    /// they are in a PCI tree, which is gathered whole.  `rel` is a path
    /// below each target to walk instead (`..` for DAX devices).
    fn save_class(&mut self, dir: &Path, rel: &str) {
        self.save_dir(dir);
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for e in entries {
            let Some(target) = canonical_target(&e) else {
                continue;
            };
            let target = if rel.is_empty() {
                target
            } else {
                match canonical_under_roots(&target.join(rel)) {
                    Some(t) => t,
                    None => continue,
                }
            };
            if !in_pci_tree(&target) {
                self.save_dir(&target);
            }
            if let Some(dev) = canonical_target(&target.join("device"))
                && !in_pci_tree(&dev)
            {
                self.save_dir(&dev);
            }
        }
    }

    /// The cgroup (or cpuset) hierarchies holding CPU restrictions: the
    /// files at each mount point's top and along the path of this
    /// process's own group, which is what the discovery reads.
    fn save_cgroups(&mut self) {
        let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
        let groups = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        for line in mounts.lines() {
            let f: Vec<&str> = line.split_ascii_whitespace().collect();
            if f.len() < 4 {
                continue;
            }
            let (dir, kind, opts) = (unescape_mount(f[1]), f[2], f[3]);
            let wanted = match kind {
                "cpuset" => true,
                "cgroup" => opts.split(',').any(|o| o == "cpuset"),
                "cgroup2" => true,
                _ => false,
            };
            if !wanted || dir.contains('\n') {
                continue;
            }
            let own = groups.lines().find_map(|l| {
                let (_, rest) = l.split_once(':')?;
                let (ctrls, path) = rest.split_once(':')?;
                let matches = if kind == "cgroup2" {
                    ctrls.is_empty()
                } else {
                    ctrls.split(',').any(|c| c == "cpuset")
                };
                matches.then(|| path.to_string())
            });
            let mut cur = PathBuf::from(&dir);
            self.save_files_of(&cur);
            for c in own.as_deref().unwrap_or("/").split('/') {
                if c.is_empty() || c == "." || c == ".." {
                    continue;
                }
                cur.push(c);
                self.save_files_of(&cur);
            }
        }
    }

    /// The regular files directly in `dir` (not its subdirectories).
    fn save_files_of(&mut self, dir: &Path) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        self.insert(dir, Entry::Dir);
        let mut files: Vec<PathBuf> = rd
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.path())
            .collect();
        files.sort();
        for f in files {
            self.save_file(&f);
        }
    }

    /// Writes the recording as a bzip2-compressed tar stream with every
    /// path under `top/`.
    fn write_tar(&self, top: &str, out: impl Write) -> std::io::Result<()> {
        let enc = bzip2::write::BzEncoder::new(out, bzip2::Compression::best());
        let mut tar = tar::Builder::new(enc);
        let mtime = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let header = |kind: tar::EntryType, mode: u32, size: u64| {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(kind);
            h.set_mode(mode);
            h.set_size(size);
            h.set_mtime(mtime);
            h
        };
        let mut h = header(tar::EntryType::Directory, 0o755, 0);
        tar.append_data(&mut h, format!("{top}/"), std::io::empty())?;
        for (path, entry) in &self.entries {
            let rel = Path::new(top).join(path.strip_prefix("/").unwrap_or(path));
            match entry {
                Entry::Dir => {
                    let mut h = header(tar::EntryType::Directory, 0o755, 0);
                    tar.append_data(&mut h, &rel, std::io::empty())?;
                }
                Entry::File(b) => {
                    let mut h = header(tar::EntryType::Regular, 0o644, b.len() as u64);
                    tar.append_data(&mut h, &rel, b.as_slice())?;
                }
                Entry::Link(t) => {
                    let mut h = header(tar::EntryType::Symlink, 0o777, 0);
                    tar.append_link(&mut h, &rel, t)?;
                }
            }
        }
        tar.into_inner()?.finish()?.flush()
    }

    /// Writes the recording as a directory tree into `dir`, every entry
    /// created relative to that handle and never through an existing
    /// entry: files with `O_CREAT|O_EXCL`, which refuses a name that exists,
    /// link or not.
    fn write_dir(&self, dir: &Dir) -> std::io::Result<()> {
        let mut new_file = cap_std::fs::OpenOptions::new();
        new_file.write(true).create_new(true);
        for (path, entry) in &self.entries {
            let rel = path.strip_prefix("/").unwrap_or(path);
            match entry {
                Entry::Dir => dir.create_dir(rel)?,
                Entry::File(b) => dir.open_with(rel, &new_file)?.write_all(b)?,
                // Recorded targets are kept as they are, absolute or not.
                Entry::Link(t) => dir.symlink_contents(t, rel)?,
            }
        }
        Ok(())
    }
}

/// Files never read: PCI resource and ROM files map device memory or I/O
/// ports (reading an I/O port BAR touches the device), and the discovery
/// does not use them.
fn skipped_file(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return true;
    };
    name == "rom"
        || name
            .strip_prefix("resource")
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
}

/// Whether a path is in a `/sys/devices/pci*` tree.
fn in_pci_tree(p: &Path) -> bool {
    p.strip_prefix("/sys/devices")
        .ok()
        .and_then(|r| r.components().next())
        .is_some_and(|c| c.as_os_str().to_string_lossy().starts_with("pci"))
}

/// Where a link finally leads, if it is a link and the target exists under
/// one of the [`TARGET_ROOTS`].
fn canonical_target(link: &Path) -> Option<PathBuf> {
    let meta = std::fs::symlink_metadata(link).ok()?;
    if !meta.file_type().is_symlink() {
        return None;
    }
    canonical_under_roots(link)
}

fn canonical_under_roots(p: &Path) -> Option<PathBuf> {
    let t = std::fs::canonicalize(p).ok()?;
    TARGET_ROOTS.iter().any(|r| t.starts_with(r)).then_some(t)
}

/// Reads at most [`MAX_FILE`] bytes of a regular file, without blocking on
/// FIFOs; `None` when it is not a regular file or cannot be read.
fn read_capped(path: &Path) -> Option<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let mut buf = Vec::new();
    // sysfs and procfs sizes are not real sizes: read until the end.
    f.take(MAX_FILE as u64).read_to_end(&mut buf).ok()?;
    Some(buf)
}

/// Decodes the octal escapes of `/proc/mounts` (`\040` for a space).
fn unescape_mount(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .is_some_and(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        if b[i] == b'\\' && octal {
            out.push(((b[i + 1] - b'0') << 6) | ((b[i + 2] - b'0') << 3) | (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The system facts a recording cannot hold as files, in the
/// `/proc/hwloc-nofile-info` format hwloc's Linux backend reads back.
fn nofile_info() -> String {
    let k = |f: &str| {
        std::fs::read_to_string(format!("/proc/sys/kernel/{f}"))
            .map(|s| s.lines().next().unwrap_or("").to_string())
            .unwrap_or_default()
    };
    let machine = wloc_discovery::input::linux_options(true)
        .machine
        .unwrap_or_default();
    // SAFETY: sysconf only reads system configuration values.
    let (nproc, page) = unsafe {
        (
            libc::sysconf(libc::_SC_NPROCESSORS_ONLN),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let mut s = String::new();
    for (name, v) in [
        ("OSName", k("ostype")),
        ("OSRelease", k("osrelease")),
        ("OSVersion", k("version")),
        ("HostName", k("hostname")),
        ("Architecture", machine),
    ] {
        if !v.is_empty() {
            s.push_str(&format!("{name}: {v}\n"));
        }
    }
    if nproc > 0 {
        s.push_str(&format!("FallbackNbProcessors: {nproc}\n"));
    }
    if page > 0 {
        s.push_str(&format!("PageSize: {page}\n"));
    }
    s
}

/// Gathers every file the Linux discovery reads.
fn gather(a: &GatherTopologyArgs, say: &dyn Fn(&str)) -> Recording {
    let mut r = Recording::default();
    say("Gathering main files and directories...");
    for f in [
        "/proc/cmdline",
        "/proc/cpuinfo",
        "/proc/meminfo",
        "/proc/mounts",
        "/proc/stat",
        "/proc/version",
        "/proc/self/cpuset",
        "/proc/self/cgroup",
        "/proc/self/mountinfo",
    ] {
        r.save_file(Path::new(f));
    }
    for d in [
        "/proc/driver/nvidia",
        "/sys/devices/system/cpu",
        "/sys/bus/cpu/devices",
        "/sys/devices/system/node",
        "/sys/bus/node/devices",
        "/sys/class/dmi/id",
        "/sys/devices/virtual/dmi/id",
        "/sys/kernel/mm/hugepages",
        "/proc/device-tree/cpus",
        // Intel hybrid PMUs list their CPUs there.
        "/sys/devices/cpu_atom",
        "/sys/devices/cpu_core",
        "/sys/devices/cpu_lowpower",
    ] {
        r.save_dir(Path::new(d));
    }
    r.save_class(Path::new("/sys/bus/soc/devices"), "");
    r.save_cgroups();
    if !a.no_io {
        say("Gathering I/O files...");
        r.save_dir(Path::new("/sys/bus/pci/devices"));
        r.save_dir(Path::new("/sys/bus/pci/slots"));
        if let Ok(rd) = std::fs::read_dir("/sys/devices") {
            let mut pci: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| in_pci_tree(p))
                .collect();
            pci.sort();
            for p in pci {
                r.save_dir(&p);
            }
        }
        for class in [
            "block",
            "dax",
            "dma",
            "drm",
            "infiniband",
            "net",
            "mic",
            "ve",
            "bxi",
            "cxi",
        ] {
            r.save_class(&Path::new("/sys/class").join(class), "");
        }
        r.save_class(Path::new("/sys/bus/dax/devices"), "..");
        r.save_dir(Path::new("/sys/bus/dax/drivers/kmem"));
        r.save_class(Path::new("/sys/bus/cxl/devices"), "");
        if let Ok(rd) = std::fs::read_dir("/run/udev/data") {
            let mut block: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.as_encoded_bytes()[0] == b'b')
                })
                .collect();
            block.sort();
            for p in block {
                r.save_file(&p);
            }
        }
    }
    if a.dmi {
        say("Gathering DMI files...");
        r.save_dir(Path::new("/sys/firmware/dmi"));
    }
    r.insert(
        Path::new("/proc/hwloc-nofile-info"),
        Entry::File(nofile_info().into_bytes()),
    );
    if !a.no_cpuid {
        gather_cpuid(&mut r, say);
    }
    r
}

/// Records the CPUID of every PU under `/cpuid` in the format of
/// `hwloc-gather-cpuid` (x86_64 Linux only; elsewhere nothing is recorded).
fn gather_cpuid(r: &mut Recording, say: &dyn Fn(&str)) {
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    {
        use wloc_discovery::cpuid_native::{CPUID_INFO, LinuxPuRunner, gather_pu};
        let Ok(runner) = LinuxPuRunner::new() else {
            say("Cannot read this thread's CPU affinity: CPUID not recorded.");
            return;
        };
        let n = runner.pus().len();
        let src = wloc_probe::NativeSource::with_runner(runner);
        say("Exporting x86 CPUID...");
        let mut dumps = Vec::new();
        for pu in 0..n {
            if !src.runner().pin(pu) {
                say("Cannot bind to every PU: CPUID not recorded.");
                let _ = src.runner().restore();
                return;
            }
            dumps.push(gather_pu(&src, pu));
        }
        let _ = src.runner().restore();
        for (pu, d) in dumps.into_iter().enumerate() {
            r.insert(
                &PathBuf::from(format!("/cpuid/pu{pu}")),
                Entry::File(d.into_bytes()),
            );
        }
        r.insert(
            &Path::new("/cpuid").join(wloc_probe::CPUID_INFO_FILE),
            Entry::File(CPUID_INFO.as_bytes().to_vec()),
        );
    }
    #[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
    {
        let _ = (r, say);
    }
}

/// This machine's topology with lstopo's default filters, or with
/// `--whole-io --disallowed` for the XML hwloc-gather-topology writes.
fn live_topology(d: &Discovery, whole: bool) -> super::Result<Topology> {
    let mut t = keep_all(if whole {
        TypeFilter::KeepAll
    } else {
        TypeFilter::KeepImportant
    });
    t.include_disallowed = whole;
    Ok(TopologyArgs::default()
        .load_source(d, &Source::ThisSystem, Load::new(t, LoadErrors::Plain))
        .map_err(|e| format!("cannot discover this machine: {e}"))?)
}

/// A private folder in the folder of the outputs, where every output is
/// written before it is moved into place.
///
/// The outputs' folder may be shared (`/tmp`, a scratch folder): another
/// user can create, replace or link names there at any time.  So nothing
/// is created there by a name that could already exist: the private
/// folder is made by `mkdir` (which never follows or reuses a name), is
/// checked to be this user's own with mode 0700 (nobody else can then
/// create, replace or link anything inside it), and everything inside it
/// is created relative to its handle with `O_CREAT|O_EXCL|O_NOFOLLOW`.
/// Each output then moves into place with `renameat2(RENAME_NOREPLACE)`,
/// which fails rather than replace what someone put at its name meanwhile
/// (`-f` replaces the entry itself, never writing through a link).
struct Staging {
    /// The outputs' folder, as named on the command line (for messages).
    parent_path: PathBuf,
    parent: Dir,
    /// The private folder: its name in `parent`, and its handle.
    name: String,
    dir: Dir,
}

/// What went wrong while writing the outputs (each variant names the path).
#[derive(Debug)]
enum StagingError {
    /// An I/O error on the named path.
    Io(PathBuf, std::io::Error),
    /// The private folder is not this user's own, mode 0700.
    NotPrivate(PathBuf),
    /// The output's name was taken by someone else while wloc gathered.
    Appeared(PathBuf),
}

impl std::fmt::Display for StagingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StagingError::Io(p, e) => write!(f, "cannot write '{}': {e}", p.display()),
            StagingError::NotPrivate(p) => write!(
                f,
                "the private folder '{}' was replaced by one wloc did not make; nothing was written",
                p.display()
            ),
            StagingError::Appeared(p) => write!(
                f,
                "'{}' appeared while wloc was gathering (made by someone else?): it was left untouched, and wloc's copy was discarded",
                p.display()
            ),
        }
    }
}

impl From<StagingError> for super::Error {
    fn from(e: StagingError) -> Self {
        e.to_string().into()
    }
}

/// A name no other run is likely to pick; `mkdir` refuses it anyway if it
/// exists.  The standard library's hasher keys are random per process.
fn random_suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    format!("{:016x}", h.finish())
}

/// The most links [`open_outputs_folder`] follows, as the kernel's own
/// limit (`MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// Opens the outputs' folder `dir`, making the folders that are missing,
/// one component at a time through descriptors (so that no rename during
/// the walk changes where it leads), following only links made by root or
/// this user: a link of another user, planted in a shared folder, would
/// move root's outputs (or, with `-f`, the files they replace) into a
/// folder of its maker's choosing, as the kernel's `protected_symlinks`
/// refuses in sticky folders.
fn open_outputs_folder(dir: &Path) -> Result<std::os::fd::OwnedFd, String> {
    use rustix::fs::{self as rfs, FileType, Mode, OFlags};
    use std::collections::VecDeque;
    use std::os::unix::ffi::OsStringExt;
    use std::path::Component;
    let shown = dir.display();
    let me = rustix::process::geteuid().as_raw();
    let place = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let fail = |what: &str, e: rustix::io::Errno| format!("cannot use '{shown}' ({what}): {e}");
    let mut cur = rfs::open(
        if dir.is_absolute() { "/" } else { "." },
        place,
        Mode::empty(),
    )
    .map_err(|e| fail("its start", e))?;
    let mut todo: VecDeque<std::ffi::OsString> = dir
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_owned()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    let mut links = 0;
    while let Some(part) = todo.pop_front() {
        let open = |cur: &std::os::fd::OwnedFd| {
            rfs::openat(
                cur,
                part.as_os_str(),
                OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
        };
        let fd = match open(&cur) {
            Err(rustix::io::Errno::NOENT) => {
                match rfs::mkdirat(&cur, part.as_os_str(), Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(format!("cannot create directory '{shown}': {e}")),
                }
                open(&cur).map_err(|e| fail("a folder on the way", e))?
            }
            r => r.map_err(|e| fail("a folder on the way", e))?,
        };
        let st = rfs::fstat(&fd).map_err(|e| fail("a folder on the way", e))?;
        match FileType::from_raw_mode(st.st_mode) {
            FileType::Directory => cur = fd,
            FileType::Symlink => {
                if st.st_uid != me && st.st_uid != 0 {
                    return Err(format!(
                        "'{shown}' passes through a link of another user (uid {}, '{}'): give a path without it",
                        st.st_uid,
                        Path::new(&part).display()
                    ));
                }
                links += 1;
                if links > MAX_LINKS {
                    return Err(fail("too many links", rustix::io::Errno::LOOP));
                }
                let target = rfs::readlinkat(&fd, "", Vec::new())
                    .map_err(|e| fail("a link on the way", e))?;
                let target = PathBuf::from(std::ffi::OsString::from_vec(target.into_bytes()));
                if target.is_absolute() {
                    cur = rfs::open("/", place, Mode::empty()).map_err(|e| fail("its start", e))?;
                }
                for c in target.components().rev() {
                    match c {
                        Component::Normal(n) => todo.push_front(n.to_owned()),
                        Component::ParentDir => todo.push_front("..".into()),
                        _ => {}
                    }
                }
            }
            _ => {
                return Err(format!(
                    "cannot use '{shown}': '{}' is not a folder",
                    Path::new(&part).display()
                ));
            }
        }
    }
    // A descriptor that can also be read and synced, of the same folder.
    rfs::openat(
        &cur,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| fail("the folder itself", e))
}

/// The file in a staging folder that names it (see [`Staging::sweep_stale`]).
const STAGING_MARK: &str = ".wloc-gather-topology";

impl Staging {
    /// Makes the private folder `.BASE.PID-XXXXXXXXXXXXXXXX` in
    /// `parent_path` (first removing those killed runs left).
    fn new(parent_path: &Path, base: &str) -> Result<Staging, StagingError> {
        use rustix::fs::{Mode, OFlags};
        let io = |p: &Path| {
            let p = p.to_path_buf();
            move |e: std::io::Error| StagingError::Io(p, e)
        };
        let parent = open_outputs_folder(parent_path)
            .map(|fd| Dir::from_std_file(std::fs::File::from(fd)))
            .map_err(|e| io(parent_path)(std::io::Error::other(e)))?;
        Self::sweep_stale(&parent, base);
        let mut tries = 0;
        let pid = std::process::id();
        let name = loop {
            let name = format!(".{base}.{pid}-{}", random_suffix());
            match rustix::fs::mkdirat(&parent, name.as_str(), Mode::from_raw_mode(0o700)) {
                Ok(()) => break name,
                Err(rustix::io::Errno::EXIST) if tries < 16 => tries += 1,
                Err(e) => return Err(io(&parent_path.join(&name))(e.into())),
            }
        };
        let path = parent_path.join(&name);
        let fd = rustix::fs::openat(
            &parent,
            name.as_str(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| io(&path)(e.into()))?;
        // Someone may have renamed ours away and put their folder (or a
        // link, refused by O_NOFOLLOW) at its name before it was opened.
        let st = rustix::fs::fstat(&fd).map_err(|e| io(&path)(e.into()))?;
        if st.st_uid != rustix::process::geteuid().as_raw() || st.st_mode & 0o077 != 0 {
            return Err(StagingError::NotPrivate(path));
        }
        let staging = Staging {
            parent_path: parent_path.to_path_buf(),
            parent,
            name,
            dir: Dir::from_std_file(std::fs::File::from(fd)),
        };
        // What tells a later run that this folder is one of ours, if a kill
        // leaves it: only this user can write inside a private folder.
        staging
            .dir
            .write(STAGING_MARK, staging.name.as_bytes())
            .map_err(io(&path.join(STAGING_MARK)))?;
        Ok(staging)
    }

    /// Removes the private folders `.BASE.PID-XXXXXXXXXXXXXXXX` that
    /// earlier runs for the same NAME left when SIGKILL ended them (no
    /// handler runs then). A name proves nothing (in a folder without the
    /// sticky bit anyone may rename another folder of this user's to it),
    /// so a folder goes only if, looked at through the descriptor that
    /// removes it: it is this user's, private, and holds the mark a run
    /// writes into its own folder, naming that folder; and only if the
    /// run it names is gone. Anything else is left as it is.
    fn sweep_stale(parent: &Dir, base: &str) {
        use rustix::fs::{Mode, OFlags};
        let Ok(entries) = parent.entries() else {
            return;
        };
        let prefix = format!(".{base}.");
        let uid = rustix::process::geteuid().as_raw();
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some(rest) = name.strip_prefix(prefix.as_str()) else {
                continue;
            };
            let Some((pid, suffix)) = rest.split_once('-') else {
                continue;
            };
            let Some(pid) = pid
                .parse::<i32>()
                .ok()
                .and_then(rustix::process::Pid::from_raw)
            else {
                continue;
            };
            if suffix.len() != 16 || !suffix.bytes().all(|b| b.is_ascii_hexdigit()) {
                continue;
            }
            if rustix::process::test_kill_process(pid) != Err(rustix::io::Errno::SRCH) {
                continue;
            }
            let Ok(fd) = rustix::fs::openat(
                parent,
                name,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) else {
                continue;
            };
            let private =
                rustix::fs::fstat(&fd).is_ok_and(|st| st.st_uid == uid && st.st_mode & 0o077 == 0);
            let dir = Dir::from_std_file(std::fs::File::from(fd));
            if private && Self::marked(&dir, name, uid) {
                // Removed through the descriptor just checked: a folder
                // swapped in at the name meanwhile is not the one removed.
                let _ = dir.remove_open_dir_all();
            }
        }
    }

    /// Whether `dir` holds the mark of the staging folder `name`: a regular
    /// file of this user's, not a link, whose content is that name.
    fn marked(dir: &Dir, name: &str, uid: u32) -> bool {
        use rustix::fs::{Mode, OFlags};
        let Ok(fd) = rustix::fs::openat(
            dir,
            STAGING_MARK,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            return false;
        };
        let ok = rustix::fs::fstat(&fd).is_ok_and(|st| {
            rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile
                && st.st_uid == uid
                && st.st_size as usize == name.len()
        });
        let mut content = String::new();
        ok && std::io::Read::read_to_string(&mut std::fs::File::from(fd), &mut content).is_ok()
            && content == name
    }

    /// What removes the private folder if SIGINT, SIGTERM or SIGHUP end
    /// the run (drop does it otherwise), so that no `.BASE.*` folder stays.
    fn remover(&self) -> wloc_trust::atomic::Cleanup {
        let name = self.name.clone();
        match self.parent.try_clone() {
            Ok(parent) => Box::new(move || {
                let _ = parent.remove_dir_all(&name);
            }),
            Err(_) => Box::new(|| {}),
        }
    }

    /// Where `file` goes in the outputs' folder (for messages).
    fn target(&self, file: &str) -> PathBuf {
        self.parent_path.join(file)
    }

    /// Creates the new file `file` in the private folder.
    fn create_file(&self, file: &str) -> Result<std::fs::File, StagingError> {
        use rustix::fs::{Mode, OFlags};
        rustix::fs::openat(
            &self.dir,
            file,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        )
        .map(std::fs::File::from)
        .map_err(|e| StagingError::Io(self.target(file), e.into()))
    }

    /// Writes the new file `file` in the private folder and moves it into
    /// place.
    fn write_file(
        &self,
        file: &str,
        replace: bool,
        data: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
    ) -> Result<(), StagingError> {
        let mut f = self.create_file(file)?;
        let written = data(&mut f)
            .and_then(|_| f.sync_all())
            .map_err(|e| StagingError::Io(self.target(file), e));
        drop(f);
        // A file that did not move stays private to this run: it goes, so
        // that a later attempt under the same name can stage it afresh.
        let done = written.and_then(|_| self.publish(file, replace));
        if done.is_err() {
            let _ = rustix::fs::unlinkat(&self.dir, file, rustix::fs::AtFlags::empty());
        }
        done
    }

    /// Creates the folder `top` in the private folder, for [`Recording::write_dir`].
    fn create_tree(&self, top: &str) -> Result<Dir, StagingError> {
        use rustix::fs::{Mode, OFlags};
        let err = |e: rustix::io::Errno| StagingError::Io(self.target(top), e.into());
        rustix::fs::mkdirat(&self.dir, top, Mode::from_raw_mode(0o777)).map_err(err)?;
        let fd = rustix::fs::openat(
            &self.dir,
            top,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(err)?;
        Ok(Dir::from_std_file(std::fs::File::from(fd)))
    }

    /// Moves `entry` of the private folder to the same name in the outputs'
    /// folder: never over an existing name unless `replace` (which replaces
    /// the name itself, not what a link there leads to).
    fn publish(&self, entry: &str, replace: bool) -> Result<(), StagingError> {
        use rustix::fs::{AtFlags, RenameFlags};
        use rustix::io::Errno;
        let target = self.target(entry);
        let io = |e: Errno| StagingError::Io(target.clone(), e.into());
        if replace {
            return rustix::fs::renameat(&self.dir, entry, &self.parent, entry).map_err(io);
        }
        match rustix::fs::renameat_with(
            &self.dir,
            entry,
            &self.parent,
            entry,
            RenameFlags::NOREPLACE,
        ) {
            Ok(()) => Ok(()),
            Err(Errno::EXIST) => Err(StagingError::Appeared(target)),
            // A filesystem without RENAME_NOREPLACE: a file gets a second
            // name (link refuses an existing one), then loses its first.
            Err(Errno::INVAL | Errno::NOSYS) => {
                match rustix::fs::linkat(&self.dir, entry, &self.parent, entry, AtFlags::empty()) {
                    Ok(()) => {
                        let _ = rustix::fs::unlinkat(&self.dir, entry, AtFlags::empty());
                        Ok(())
                    }
                    Err(Errno::EXIST) => Err(StagingError::Appeared(target)),
                    Err(e) => Err(io(e)),
                }
            }
            Err(e) => Err(io(e)),
        }
    }
}

impl Drop for Staging {
    /// Removes what is left in the private folder (through its handle), then
    /// the folder itself (by name: a folder someone else put at that name
    /// is removed only if empty, and a file or link there not at all).
    fn drop(&mut self) {
        if let Ok(entries) = self.dir.entries() {
            for e in entries.flatten() {
                let name = e.file_name();
                let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
                let _ = if is_dir {
                    self.dir.remove_dir_all(&name)
                } else {
                    self.dir.remove_file(&name)
                };
            }
        }
        let _ = rustix::fs::unlinkat(
            &self.parent,
            self.name.as_str(),
            rustix::fs::AtFlags::REMOVEDIR,
        );
    }
}

/// Runs `wloc gather-topology`.
pub fn run(d: &Discovery, a: &GatherTopologyArgs) -> super::Result {
    if !cfg!(target_os = "linux") {
        return Err(
            "gather-topology records Linux sysfs and procfs files: only Linux is supported".into(),
        );
    }
    let name = &a.name;
    let base = name
        .file_name()
        .and_then(|b| b.to_str())
        .filter(|b| !b.is_empty() && *b != "." && *b != "..")
        .ok_or_else(|| {
            format!(
                "invalid recording name '{}': expected a path ending in a file name",
                name.display()
            )
        })?
        .to_string();
    let with_ext = |ext: &str| {
        let mut s = name.as_os_str().to_owned();
        s.push(ext);
        PathBuf::from(s)
    };
    let (tarball, output, xml) = (with_ext(".tar.bz2"), with_ext(".output"), with_ext(".xml"));
    // A link counts as existing, even one that leads nowhere.
    let exists = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    if !a.force {
        for p in [&tarball, &output, &xml] {
            if exists(p) {
                return Err(format!("'{}' exists; use -f to overwrite it", p.display()).into());
            }
        }
    }
    if a.keep && exists(name) {
        return Err(format!(
            "cannot keep the gathered tree in '{}': it exists",
            name.display()
        )
        .into());
    }
    let parent = match name.parent().filter(|p| !p.as_os_str().is_empty()) {
        // Opened (and made where missing) by Staging::new, link by link.
        Some(parent) => parent,
        None => Path::new("."),
    };
    // The signals are held from before the folder is made.
    let (_on_signal, staging) = wloc_trust::atomic::SignalCleanup::around(|| {
        let s = Staging::new(parent, &base)?;
        let remover = s.remover();
        Ok::<_, StagingError>((s, remover))
    })?;
    let progress = super::Progress::new(a.silent);
    let say = |s: &str| progress.say(s);
    if a.no_io {
        say("I/O files won't be saved (--no-io given).");
    }
    if !a.dmi {
        say("DMI memory device files won't be saved (--dmi not given).");
    }
    let rec = gather(a, &say);
    if rec.full {
        eprintln!(
            "wloc: warning: the recording was cut at {MAX_ENTRIES} entries or {MAX_TOTAL_BYTES} bytes"
        );
    }
    staging.write_file(&format!("{base}.tar.bz2"), a.force, |f| {
        rec.write_tar(&base, std::io::BufWriter::new(f))
    })?;
    say(&format!(
        "Topology files gathered in {} ({} entries)",
        tarball.display(),
        rec.entries.len()
    ));
    if a.keep {
        let tree = staging.create_tree(&base)?;
        rec.write_dir(&tree)
            .map_err(|e| format!("cannot write the tree into '{}': {e}", name.display()))?;
        drop(tree);
        staging.publish(&base, false).map_err(|e| match e {
            StagingError::Appeared(_) => {
                format!("cannot keep the gathered tree in '{}': {e}", name.display())
            }
            e => e.to_string(),
        })?;
        say(&format!("Gathered tree kept in {}", name.display()));
    }

    let topo = live_topology(d, false)?;
    let opts = wloc::console::ConsoleOptions {
        verbose: true,
        ..wloc::console::ConsoleOptions::default()
    };
    let text = wloc::console::render(&topo, &opts);
    staging.write_file(&format!("{base}.output"), a.force, |f| {
        f.write_all(text.as_bytes())
    })?;
    say(&format!(
        "Expected topology output stored in {}",
        output.display()
    ));
    let topo = live_topology(d, true)?;
    let text = wloc::xml::export(&topo, wloc::xml::XmlVersion::V2);
    staging.write_file(&format!("{base}.xml"), a.force, |f| {
        f.write_all(text.as_bytes())
    })?;
    say(&format!("XML topology stored in {}", xml.display()));
    drop(staging);
    say("");
    say("WARNING: Do not post these files on a public list or website unless you");
    say("WARNING: are sure that no information about this platform is sensitive.");
    progress.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_escapes_are_decoded() {
        assert_eq!(unescape_mount(r"/a\040b\134c"), r"/a b\c");
        assert_eq!(unescape_mount(r"/x\04"), r"/x\04");
        assert_eq!(unescape_mount(r"\"), r"\");
    }

    #[test]
    fn pci_trees_and_skipped_files() {
        assert!(in_pci_tree(Path::new(
            "/sys/devices/pci0000:00/0000:00:01.0"
        )));
        assert!(!in_pci_tree(Path::new("/sys/devices/virtual/net/lo")));
        assert!(!in_pci_tree(Path::new("/sys/devices")));
        assert!(skipped_file(Path::new(
            "/sys/devices/pci0000:00/x/resource0"
        )));
        assert!(skipped_file(Path::new("/sys/devices/pci0000:00/x/rom")));
        assert!(!skipped_file(Path::new(
            "/sys/devices/pci0000:00/x/resource"
        )));
        assert!(!skipped_file(Path::new("/sys/devices/pci0000:00/x/config")));
    }

    #[test]
    fn entries_below_links_are_not_recorded() {
        let mut r = Recording::default();
        r.insert(Path::new("/sys/a/l"), Entry::Link("../b".into()));
        r.insert(Path::new("/sys/a/l/f"), Entry::File(b"x".to_vec()));
        r.insert(Path::new("/sys/a/d/f"), Entry::File(b"y".to_vec()));
        r.insert(Path::new("/sys/a/d"), Entry::Link("x".into()));
        let keys: Vec<_> = r.entries.keys().map(|k| k.display().to_string()).collect();
        assert_eq!(
            keys,
            ["/sys", "/sys/a", "/sys/a/d", "/sys/a/d/f", "/sys/a/l"]
        );
        assert_eq!(r.entries[Path::new("/sys/a/d")], Entry::Dir);
        assert_eq!(r.bytes, 1);
    }

    /// A fresh folder for one test, removed at the end.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(tag: &str) -> Scratch {
            let p = std::env::temp_dir().join(format!(
                "wloc-gather-unit-{tag}-{}-{}",
                std::process::id(),
                random_suffix()
            ));
            std::fs::create_dir(&p).unwrap();
            Scratch(p)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn the_outputs_folder_is_reached_through_trusted_links_only() {
        let s = Scratch::new("links");
        let real = s.0.join("real");
        std::fs::create_dir(&real).unwrap();
        // A link of this user's is followed; missing folders are made.
        std::os::unix::fs::symlink(&real, s.0.join("mine")).unwrap();
        let fd = open_outputs_folder(&s.0.join("mine/new/deeper")).unwrap();
        assert!(real.join("new/deeper").is_dir());
        let st = rustix::fs::fstat(&fd).unwrap();
        let want = std::fs::metadata(real.join("new/deeper")).unwrap();
        assert_eq!(st.st_ino, std::os::unix::fs::MetadataExt::ino(&want));
        // A link of another user's is refused, wherever it is on the way.
        let theirs = s.0.join("theirs");
        std::os::unix::fs::symlink(&real, &theirs).unwrap();
        let c = std::ffi::CString::new(theirs.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path; lchown changes the link itself.
        if unsafe { libc::lchown(c.as_ptr(), 4321, 4321) } == 0 {
            let e = open_outputs_folder(&theirs).unwrap_err();
            assert!(e.contains("link of another user"), "{e}");
            let e = open_outputs_folder(&theirs.join("new")).unwrap_err();
            assert!(e.contains("link of another user"), "{e}");
            let e = open_outputs_folder(&s.0.join("theirs/../real")).unwrap_err();
            assert!(e.contains("link of another user"), "{e}");
        }
        // Not a folder: refused.
        std::fs::write(s.0.join("file"), "x").unwrap();
        assert!(open_outputs_folder(&s.0.join("file")).is_err());
    }

    #[test]
    fn folders_of_killed_runs_are_swept_and_nothing_else() {
        use std::os::unix::fs::PermissionsExt;
        let s = Scratch::new("sweep");
        // A folder as a killed run leaves it (`mark`: the name its mark
        // holds, if any).
        let mk = |name: &str, mode: u32, mark: Option<&str>| {
            let p = s.0.join(name);
            std::fs::create_dir(&p).unwrap();
            std::fs::write(p.join("rec.tar.bz2"), "x").unwrap();
            if let Some(m) = mark {
                std::fs::write(p.join(STAGING_MARK), m).unwrap();
            }
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        // A pid above the kernel's largest (2^22) names no process.
        let dead = ".rec.4194999-0123456789abcdef";
        let live = format!(".rec.{}-0123456789abcdef", std::process::id());
        mk(dead, 0o700, Some(dead));
        mk(&live, 0o700, Some(&live));
        let open = ".rec.4194998-0123456789abcdef";
        mk(open, 0o755, Some(open)); // not private
        let other = ".other.4194999-0123456789abcdef";
        mk(other, 0o700, Some(other)); // another NAME
        mk(".rec.4194999-notours", 0o700, Some(".rec.4194999-notours")); // not a name wloc makes
        // The user's own private folder renamed to the pattern by someone
        // who may rename in this folder: no mark, kept.
        let renamed = ".rec.4194997-0123456789abcdef";
        mk(renamed, 0o700, None);
        // A mark naming another folder (ours, renamed): kept.
        let moved = ".rec.4194996-0123456789abcdef";
        mk(moved, 0o700, Some(".rec.4194995-0123456789abcdef"));
        let st = Staging::new(&s.0, "rec").unwrap();
        drop(st);
        let mut left: Vec<String> = std::fs::read_dir(&s.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut want: Vec<String> = [other, open, ".rec.4194999-notours", renamed, moved]
            .iter()
            .map(|n| n.to_string())
            .chain([live])
            .collect();
        want.sort();
        assert_eq!(left, want);
    }

    #[test]
    fn staging_is_private_and_removed_at_the_end() {
        use std::os::unix::fs::PermissionsExt;
        let s = Scratch::new("private");
        let st = Staging::new(&s.0, "rec").unwrap();
        let made = s.0.join(&st.name);
        assert!(st.name.starts_with(".rec."), "{}", st.name);
        let mode = std::fs::metadata(&made).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        st.create_file("left").unwrap();
        let tree = st.create_tree("rec").unwrap();
        tree.create_dir("sub").unwrap();
        drop(tree);
        drop(st);
        assert!(!made.exists(), "the private folder is left");
    }

    #[test]
    fn outputs_never_replace_or_follow_what_appeared() {
        let s = Scratch::new("appeared");
        let victim = s.0.join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let st = Staging::new(&s.0, "rec").unwrap();
        // Someone links the output names, and makes the tree's name a folder.
        std::os::unix::fs::symlink(&victim, s.0.join("rec.xml")).unwrap();
        std::os::unix::fs::symlink("/nonexistent", s.0.join("rec.output")).unwrap();
        std::fs::create_dir(s.0.join("rec")).unwrap();
        for file in ["rec.xml", "rec.output"] {
            let e = st
                .write_file(file, false, |f| f.write_all(b"new"))
                .unwrap_err();
            assert!(matches!(e, StagingError::Appeared(_)), "{e}");
            assert!(e.to_string().contains(file), "{e}");
        }
        let mut r = Recording::default();
        r.insert(Path::new("/proc/meminfo"), Entry::File(b"x".to_vec()));
        r.write_dir(&st.create_tree("rec").unwrap()).unwrap();
        assert!(matches!(
            st.publish("rec", false),
            Err(StagingError::Appeared(_))
        ));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(std::fs::read_dir(s.0.join("rec")).unwrap().next().is_none());
        // -f replaces the link itself, not the file it leads to.
        st.write_file("rec.xml", true, |f| f.write_all(b"new"))
            .unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        let m = std::fs::symlink_metadata(s.0.join("rec.xml")).unwrap();
        assert!(m.is_file());
        assert_eq!(std::fs::read_to_string(s.0.join("rec.xml")).unwrap(), "new");
        // A free name is taken.
        st.write_file("rec.tar.bz2", false, |f| f.write_all(b"t"))
            .unwrap();
        assert_eq!(std::fs::read(s.0.join("rec.tar.bz2")).unwrap(), b"t");
    }

    #[test]
    fn kept_trees_hold_files_folders_and_links() {
        let s = Scratch::new("tree");
        let st = Staging::new(&s.0, "rec").unwrap();
        let mut r = Recording::default();
        r.insert(
            Path::new("/proc/meminfo"),
            Entry::File(b"MemTotal".to_vec()),
        );
        r.insert(Path::new("/proc/mounts"), Entry::Link("self/mounts".into()));
        r.insert(Path::new("/sys/a/abs"), Entry::Link("/sys/b".into()));
        r.write_dir(&st.create_tree("rec").unwrap()).unwrap();
        st.publish("rec", false).unwrap();
        let k = s.0.join("rec");
        assert_eq!(std::fs::read(k.join("proc/meminfo")).unwrap(), b"MemTotal");
        assert_eq!(
            std::fs::read_link(k.join("proc/mounts")).unwrap(),
            Path::new("self/mounts")
        );
        assert_eq!(
            std::fs::read_link(k.join("sys/a/abs")).unwrap(),
            Path::new("/sys/b")
        );
    }

    #[test]
    fn tarball_holds_the_tree_under_its_top_directory() {
        let mut r = Recording::default();
        r.insert(
            Path::new("/proc/meminfo"),
            Entry::File(b"MemTotal: 1 kB\n".to_vec()),
        );
        r.insert(
            Path::new("/sys/class/net/lo"),
            Entry::Link("../../devices/virtual/net/lo".into()),
        );
        let mut out = Vec::new();
        r.write_tar("rec", &mut out).unwrap();
        let mut ar = tar::Archive::new(bzip2::read::BzDecoder::new(out.as_slice()));
        let mut seen = Vec::new();
        for e in ar.entries().unwrap() {
            let mut e = e.unwrap();
            let path = e.path().unwrap().display().to_string();
            let kind = e.header().entry_type();
            let mut content = String::new();
            if kind.is_file() {
                e.read_to_string(&mut content).unwrap();
            } else if kind.is_symlink() {
                content = e.link_name().unwrap().unwrap().display().to_string();
            }
            seen.push(format!("{path}={content}"));
        }
        assert_eq!(
            seen,
            [
                "rec/=",
                "rec/proc=",
                "rec/proc/meminfo=MemTotal: 1 kB\n",
                "rec/sys=",
                "rec/sys/class=",
                "rec/sys/class/net=",
                "rec/sys/class/net/lo=../../devices/virtual/net/lo",
            ]
        );
    }
}
