//! The `files` import: batched, read-only reads of the granted roots
//! through [`FileAccess`], each charged to the run's read budget, with
//! per-run caps on file operations and paths per call.

use crate::bindings::files;
use crate::fs::{BudgetKind, FileAccess, FileError, ReadBudget};
use crate::state::{HostState, HostTrap};

impl HostState {
    fn count_ops(&mut self, n: usize) -> wasmtime::Result<()> {
        self.file_ops = self.file_ops.saturating_add(n as u64);
        if self.file_ops > self.limits.max_file_ops {
            return Err(HostTrap(format!(
                "more than {} file operations in one run",
                self.limits.max_file_ops
            ))
            .into());
        }
        Ok(())
    }

    fn check_path_count(&self, n: usize) -> wasmtime::Result<()> {
        if n > self.limits.max_paths_per_call {
            return Err(HostTrap(format!(
                "read-many with {n} paths (at most {} per call)",
                self.limits.max_paths_per_call
            ))
            .into());
        }
        Ok(())
    }

    /// The trap that ends a run whose read budget is spent, naming the
    /// limit and the policy setting that raises it.
    fn over_budget(&self, kind: BudgetKind) -> wasmtime::Error {
        HostTrap(match kind {
            BudgetKind::Bytes => format!(
                "it read more than its budget of {} bytes of files in one run ([limits] max_read_mib in the policy)",
                self.limits.max_read_bytes
            ),
            BudgetKind::Entries => format!(
                "it read more than its budget of {} files, names and paths in one run",
                self.limits.max_read_entries
            ),
        })
        .into()
    }

    /// A file operation's result for the component; a spent budget
    /// stops the run instead.
    fn answer<T>(&self, r: Result<T, FileError>) -> wasmtime::Result<Result<T, files::FileError>> {
        match r {
            Err(FileError::OverBudget(kind)) => Err(self.over_budget(kind)),
            Err(e) => Ok(Err(file_error(e))),
            Ok(v) => Ok(Ok(v)),
        }
    }
}

fn file_error(e: FileError) -> files::FileError {
    match e {
        FileError::NotFound => files::FileError::NotFound,
        FileError::Denied => files::FileError::Denied,
        FileError::TooLarge => files::FileError::TooLarge,
        // Stops the run before it gets here (`HostState::answer`).
        FileError::OverBudget(_) => files::FileError::TooLarge,
        FileError::Io(s) => files::FileError::Io(s),
    }
}

impl files::Host for HostState {
    fn read_many(
        &mut self,
        paths: Vec<String>,
        max_bytes: u32,
    ) -> wasmtime::Result<Vec<Result<Vec<u8>, files::FileError>>> {
        self.check_path_count(paths.len())?;
        self.count_ops(paths.len())?;
        let max = max_bytes.min(self.limits.max_file_bytes) as usize;
        let results = read_parallel(&self.files, &paths, max, &self.budget);
        let mut out = Vec::with_capacity(results.len());
        for r in results {
            out.push(self.answer(r)?);
        }
        Ok(out)
    }

    fn list_dir(
        &mut self,
        path: String,
    ) -> wasmtime::Result<Result<Vec<String>, files::FileError>> {
        self.count_ops(1)?;
        let r = self.files.list_dir_within(&path, &self.budget);
        if let Ok(names) = &r {
            self.count_ops(names.len() / 64)?;
        }
        self.answer(r)
    }

    fn read_link(&mut self, path: String) -> wasmtime::Result<Result<String, files::FileError>> {
        self.count_ops(1)?;
        let r = self.files.read_link_within(&path, &self.budget);
        self.answer(r)
    }

    fn glob(&mut self, pattern: String) -> wasmtime::Result<Result<Vec<String>, files::FileError>> {
        let mut listings = 0;
        let r = self
            .files
            .glob_counted(&pattern, &mut listings, &self.budget);
        self.count_ops(1 + listings + r.as_ref().map_or(0, Vec::len))?;
        self.answer(r)
    }
}

/// Batches smaller than this are read on the calling thread: starting
/// threads costs more than the system calls they would share.
const PARALLEL_READ_MIN: usize = 64;

/// Most threads reading one batch: with the budget, what bounds the
/// file data a run holds beyond it (one file of `max` bytes per thread).
pub(crate) const MAX_READ_THREADS: usize = 8;

/// Reads a batch of files, spreading large batches over the machine's
/// cores: file reads are system calls, and a batch is what lets the
/// host overlap them.  Results keep the order of `paths`.  Every read
/// is charged to `budget` while it happens; once it is spent, the files
/// left are not read (they answer [`FileError::OverBudget`]).
fn read_parallel(
    files: &FileAccess,
    paths: &[String],
    max: usize,
    budget: &ReadBudget,
) -> Vec<Result<Vec<u8>, FileError>> {
    // Asked once: the answer reads cgroup files every time.
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let threads = *THREADS.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_READ_THREADS)
    });
    let read = |p: &String| files.read_within(p, max, budget);
    if threads < 2 || paths.len() < PARALLEL_READ_MIN {
        return paths.iter().map(read).collect();
    }
    let chunk = paths.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let workers: Vec<_> = paths
            .chunks(chunk)
            .skip(1)
            .map(|part| scope.spawn(move || part.iter().map(read).collect::<Vec<_>>()))
            .collect();
        let mut out: Vec<_> = paths[..chunk.min(paths.len())].iter().map(read).collect();
        for w in workers {
            match w.join() {
                Ok(part) => out.extend(part),
                // Reading never panics; should it, the files count as unreadable.
                Err(_) => out.extend(
                    std::iter::repeat_with(|| Err(FileError::Io("read failed".into()))).take(chunk),
                ),
            }
        }
        out.truncate(paths.len());
        out
    })
}
