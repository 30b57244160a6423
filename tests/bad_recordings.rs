//! Damaged Linux recordings: copies of conformance recordings whose files
//! are truncated, emptied, made non-numeric, made huge, removed, replaced
//! with symbolic link loops or FIFOs.  `wloc ls -i COPY --if fsroot` must
//! either describe a topology or fail with a clear error message: never
//! panic, crash or hang.
//!
//! The mutations are drawn from a fixed seed, so every run tries the same
//! ones; `WLOC_BAD_RECORDINGS_SEED` and `WLOC_BAD_RECORDINGS_PER_CASE`
//! change the seed and the number of mutations per recording.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{TempDir, unpack, wloc};

/// Recordings with NUMA nodes and distances, caches, PCI trees with OS
/// devices, cgroups and cpusets, memory-side caches and GPU memory nodes.
const RECORDINGS: &[&str] = &[
    "16amd64-4n4c-cgroup-distance-merge",
    "40intel64-2g2n4c+pcilocality",
    "32em64t-2n8c+dax+nvme+mic+dimms",
    "memorysidecaches",
    "nvidiagpunumanodes",
    "128ia64-17n4s2c",
];

/// Longest a run may take before it counts as a hang.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Parts of paths the discovery reads, where mutations are aimed most often.
const IMPORTANT: &[&str] = &[
    "devices/system/cpu/",
    "devices/system/node/",
    "proc/cpuinfo",
    "proc/meminfo",
    "proc/mounts",
    "proc/self/",
    "proc/hwloc-nofile-info",
    "proc/driver/nvidia",
    "cpuset",
    "cgroup",
    "bus/pci/",
    "/class",
    "/config",
    "local_cpus",
    "numa_node",
    "class/",
    "kernel/mm/hugepages",
    "dmi/",
    "bus/dax",
];

/// One change to a recording, undone after the run.
#[derive(Clone, Debug)]
enum Mutation {
    /// Replace the file's content.
    Content(PathBuf, Content),
    /// Remove a file, link or whole directory.
    Remove(PathBuf),
    /// Replace a file or directory with a link to `target`.
    Link(PathBuf, String),
    /// Replace a file or directory with a link to a new sibling link,
    /// which points back to it.
    LinkPair(PathBuf),
    /// Replace a file with a FIFO that nobody writes.
    Fifo(PathBuf),
}

impl Mutation {
    /// The path (relative to the recording) that the mutation replaces.
    fn path(&self) -> &Path {
        match self {
            Mutation::Content(p, _)
            | Mutation::Remove(p)
            | Mutation::Link(p, _)
            | Mutation::LinkPair(p)
            | Mutation::Fifo(p) => p,
        }
    }
}

/// New content for a file.
#[derive(Clone, Debug)]
enum Content {
    Truncate(usize),
    Empty,
    Text(&'static str),
    FlipBytes(u64),
    Random(usize, u64),
    /// `unit` repeated up to `len` bytes.
    Huge(&'static str, usize),
}

const TEXTS: &[&str] = &[
    "garbage\n",
    "-1\n",
    "0x\n",
    "abc,def\n",
    "0-4294967295\n",
    "4294967295-0\n",
    "4294967296\n",
    "18446744073709551616999999\n",
    "-9223372036854775808\n",
    "ffffffff,ffffffff,ffffffff,ffffffff,ffffffff,ffffffff,ffffffff,ffffffff,ffffffff\n",
    "0-3,,,-,5-,-7,8--9\n",
    ",\n",
    "\u{fffd}\u{1f600}\n",
    "\0\0\0\0",
    "MemTotal:\n",
    "MemTotal: 18446744073709551615 kB\n",
    "Node 0 MemTotal: -5 kB\n",
    "processor\t: 4294967295\nphysical id\t: -1\ncore id\t: 99999999999\n",
    "0:cpuset:/../../..\n0::/../x\n",
    "none /sys/fs/cgroup cgroup2 rw 0 0\nx /\\040\\777 cpuset rw 0 0\n",
    "10 20\n20\n",
    "10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10\n",
    "0x060400\n",
    "0xffffff\n",
    "0000:zz:99.9\n",
    "PCI_SLOT_NAME=\nPCI_ID=:\n",
    "Architecture: x86_64\nFallbackNbProcessors: 2147483647\nPageSize: 0\n",
];

const HUGE_UNITS: &[&str] = &[
    "1",
    "f",
    "ffffffff,",
    "0,",
    "0-4294967295,",
    "processor\t: 0\n",
    "10 ",
    "MemTotal: 1 kB\n",
    "1:cpuset:/\n",
    "none /x cgroup cpuset 0 0\n",
];

/// A seeded random source: SplitMix64, a few lines that stay the same
/// whatever random crate versions the workspace resolves, so a seed names
/// the same mutations everywhere.
struct Rng(u64);

impl Rng {
    fn new(seed: u64, case: usize) -> Self {
        Rng(seed ^ (case as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

/// Every path below `root` (relative), with whether it is a regular file.
fn list_tree(root: &Path) -> Vec<(PathBuf, bool)> {
    let mut out = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(root.join(&rel)) else {
            continue;
        };
        let mut names: Vec<_> = rd.map(|e| e.unwrap().file_name()).collect();
        names.sort();
        for n in names {
            let r = rel.join(n);
            let meta = std::fs::symlink_metadata(root.join(&r)).unwrap();
            if meta.is_dir() {
                todo.push(r.clone());
            }
            out.push((r, meta.is_file()));
        }
    }
    out
}

fn important(p: &Path) -> bool {
    let s = format!("/{}", p.display());
    IMPORTANT.iter().any(|i| s.contains(i))
}

/// Draws one mutation of the tree listed in `tree`.
fn draw(rng: &mut Rng, tree: &[(PathBuf, bool)]) -> Mutation {
    let files: Vec<&PathBuf> = tree.iter().filter(|(_, f)| *f).map(|(p, _)| p).collect();
    let imp_files: Vec<&PathBuf> = files.iter().copied().filter(|p| important(p)).collect();
    let file = |rng: &mut Rng| -> PathBuf {
        if !imp_files.is_empty() && rng.below(4) != 0 {
            (*rng.pick(&imp_files)).clone()
        } else {
            (*rng.pick(&files)).clone()
        }
    };
    // Directories are aimed at through a file they hold.
    let any = |rng: &mut Rng| -> PathBuf {
        let f = file(rng);
        if rng.below(3) == 0
            && let Some(parent) = f.parent().filter(|p| !p.as_os_str().is_empty())
        {
            return parent.to_path_buf();
        }
        f
    };
    match rng.below(20) {
        0..=2 => {
            let f = file(rng);
            let n = rng.below(64);
            Mutation::Content(f, Content::Truncate(n))
        }
        3..=4 => Mutation::Content(file(rng), Content::Empty),
        5..=8 => {
            let t = *rng.pick(TEXTS);
            Mutation::Content(file(rng), Content::Text(t))
        }
        9 => {
            let s = rng.next_u64();
            Mutation::Content(file(rng), Content::FlipBytes(s))
        }
        10 => {
            let (n, s) = (rng.below(4096), rng.next_u64());
            Mutation::Content(file(rng), Content::Random(n, s))
        }
        11 => {
            let unit = *rng.pick(HUGE_UNITS);
            let len = *rng.pick(&[2 << 20, 10 << 20]);
            Mutation::Content(file(rng), Content::Huge(unit, len))
        }
        12..=13 => Mutation::Remove(any(rng)),
        14 => {
            let p = any(rng);
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            Mutation::Link(p, name)
        }
        15 => {
            let t = *rng.pick(&["..", ".", "../..", "/", "/dev/zero", "/proc/self/fd/0"]);
            Mutation::Link(any(rng), t.to_string())
        }
        16..=17 => Mutation::LinkPair(any(rng)),
        _ => Mutation::Fifo(file(rng)),
    }
}

/// The bytes of a content mutation, given the original bytes.
fn new_content(c: &Content, orig: &[u8]) -> Vec<u8> {
    match c {
        Content::Truncate(n) => orig[..(*n).min(orig.len().saturating_sub(1))].to_vec(),
        Content::Empty => Vec::new(),
        Content::Text(t) => t.as_bytes().to_vec(),
        Content::FlipBytes(seed) => {
            let mut v = orig.to_vec();
            let mut s = *seed;
            for _ in 0..4 {
                if v.is_empty() {
                    break;
                }
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let i = (s >> 33) as usize % v.len();
                v[i] ^= (s >> 8) as u8 | 1;
            }
            v
        }
        Content::Random(n, seed) => {
            let mut s = *seed;
            (0..*n)
                .map(|_| {
                    s = s
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (s >> 33) as u8
                })
                .collect()
        }
        Content::Huge(unit, len) => unit.as_bytes().iter().copied().cycle().take(*len).collect(),
    }
}

fn remove_any(p: &Path) {
    if let Ok(m) = std::fs::symlink_metadata(p) {
        if m.is_dir() {
            std::fs::remove_dir_all(p).unwrap();
        } else {
            std::fs::remove_file(p).unwrap();
        }
    }
}

/// Applies `m` below `root`, moving what it replaces to `backup`; returns
/// the paths to remove before moving the backup back.
fn apply(m: &Mutation, root: &Path, backup: &Path) -> Vec<PathBuf> {
    let created = root.join(m.path());
    std::fs::rename(&created, backup).unwrap();
    let mut made = vec![created.clone()];
    match m {
        Mutation::Content(_, c) => {
            let orig = std::fs::read(backup).unwrap_or_default();
            std::fs::write(&created, new_content(c, &orig)).unwrap();
        }
        Mutation::Remove(_) => made.clear(),
        Mutation::Link(_, t) => std::os::unix::fs::symlink(t, &created).unwrap(),
        Mutation::LinkPair(_) => {
            let name = created.file_name().unwrap().to_string_lossy().into_owned();
            let other = format!("{name}.loop");
            std::os::unix::fs::symlink(&other, &created).unwrap();
            let other_path = created.with_file_name(&other);
            std::os::unix::fs::symlink(&name, &other_path).unwrap();
            made.push(other_path);
        }
        Mutation::Fifo(_) => {
            let c = std::ffi::CString::new(created.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: mkfifo reads a NUL-terminated path.
            let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
            assert_eq!(rc, 0, "mkfifo {}", created.display());
        }
    }
    made
}

fn undo(m: &Mutation, root: &Path, backup: &Path, made: &[PathBuf]) {
    for p in made {
        remove_any(p);
    }
    std::fs::rename(backup, root.join(m.path())).unwrap();
}

/// How a run ended, when it ended badly.
fn run_checked(root: &Path, log: &Path) -> Result<bool, String> {
    let err = std::fs::File::create(log).unwrap();
    let mut child = Command::new(wloc())
        .args(["ls", "-i"])
        .arg(root)
        .args(["--if", "fsroot", "--of", "xml"])
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .expect("wloc starts");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("hung: killed after {TIMEOUT:?}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stderr = std::fs::read_to_string(log).unwrap_or_default();
    if status.success() {
        return Ok(true);
    }
    if stderr.contains("panicked") || status.code() == Some(101) {
        return Err(format!("panicked ({status}): {stderr}"));
    }
    let Some(code) = status.code() else {
        return Err(format!("crashed ({status}): {stderr}"));
    };
    let first = stderr.lines().next().unwrap_or("");
    if !first.starts_with("wloc: ") || first.len() < 12 {
        return Err(format!(
            "failed ({code}) without a clear message: {stderr:?}"
        ));
    }
    Ok(false)
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs every mutation of one recording; returns (runs, successes, failures).
fn mutate_recording(
    name: &str,
    case: usize,
    seed: u64,
    count: usize,
) -> (usize, usize, Vec<String>) {
    let tmp = TempDir::new(&format!("bad-{case}"));
    let root = unpack(name, &tmp.0.join("tree"));
    let log = tmp.0.join("stderr");
    let mut failures = Vec::new();
    match run_checked(&root, &log) {
        Ok(true) => {}
        other => panic!("unmodified {name} does not load: {other:?}"),
    }
    let tree = list_tree(&root);
    let mut rng = Rng::new(seed, case);
    let mut ok = 0;
    for i in 0..count {
        // Some runs combine several mutations.
        let n = if rng.below(8) == 0 { 3 } else { 1 };
        let mut applied = Vec::new();
        let mut descr = Vec::new();
        for j in 0..n {
            let m = draw(&mut rng, &tree);
            // A path removed or replaced by an earlier mutation of this run
            // cannot be mutated again.
            let p = root.join(m.path());
            if std::fs::symlink_metadata(&p).is_err()
                || applied
                    .iter()
                    .any(|(q, _, _): &(Mutation, PathBuf, Vec<PathBuf>)| {
                        let qp = root.join(q.path());
                        p.starts_with(&qp) || qp.starts_with(&p)
                    })
            {
                continue;
            }
            let backup = tmp.0.join(format!("backup{j}"));
            let made = apply(&m, &root, &backup);
            descr.push(format!("{m:?}"));
            applied.push((m, backup, made));
        }
        match run_checked(&root, &log) {
            Ok(true) => ok += 1,
            Ok(false) => {}
            Err(e) => failures.push(format!(
                "{name} #{i} (seed {seed}) {}: {e}",
                descr.join(" + ")
            )),
        }
        for (m, backup, made) in applied.iter().rev() {
            undo(m, &root, backup, made);
        }
    }
    // Every mutation was undone: the recording loads again.
    assert_eq!(run_checked(&root, &log), Ok(true), "{name} restored");
    (count, ok, failures)
}

#[test]
fn damaged_recordings_yield_a_topology_or_a_clear_error() {
    let seed = env_u64("WLOC_BAD_RECORDINGS_SEED", 20261122);
    let per_case = env_u64("WLOC_BAD_RECORDINGS_PER_CASE", 70) as usize;
    let start = Instant::now();
    let results: Vec<(usize, usize, Vec<String>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|w| {
                s.spawn(move || {
                    RECORDINGS
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| i % 2 == w)
                        .map(|(i, name)| mutate_recording(name, i, seed, per_case))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("worker"))
            .collect()
    });
    let runs: usize = results.iter().map(|r| r.0).sum();
    let ok: usize = results.iter().map(|r| r.1).sum();
    let failures: Vec<&String> = results.iter().flat_map(|r| &r.2).collect();
    eprintln!(
        "{runs} damaged recordings: {ok} loaded, {} refused with an error, {} bad, in {:?}",
        runs - ok - failures.len(),
        failures.len(),
        start.elapsed()
    );
    assert!(
        failures.is_empty(),
        "{} damaged recordings panicked, crashed, hung or failed unclearly:\n{}",
        failures.len(),
        failures
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
