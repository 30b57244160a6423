//! What a component's store holds and the host side of its imports:
//! `files`, `cpuid`, `log`, `config`, and the few WASI interfaces Rust's
//! standard library imports, linked with an empty WASI context.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex};

use wasmtime::component::{HasData, Linker, ResourceTable};
use wasmtime::{ResourceLimiter, StoreLimits};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream, WasiCli, WasiCliView as _};
use wasmtime_wasi::clocks::{WasiClocks, WasiClocksView as _};
use wasmtime_wasi::filesystem::{WasiFilesystem, WasiFilesystemView as _};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};
use wasmtime_wasi::random::WasiRandom;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::bindings::{config, cpuid, files, log, types};
use crate::fs::{BudgetKind, FileAccess, FileError, ReadBudget};
use crate::{CpuidProvider, Limits, LogTarget};

/// An error raised by the host to stop a component (a trap).
#[derive(Debug)]
pub(crate) struct HostTrap(pub String);

impl std::fmt::Display for HostTrap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HostTrap {}

/// Memory and table limits: wasmtime's [`StoreLimits`], remembering
/// whether it refused a memory growth so that the trap can be named.
pub(crate) struct Limiter {
    pub inner: StoreLimits,
    pub memory_refused: Option<usize>,
}

impl ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let r = self.inner.memory_growing(current, desired, maximum);
        if !matches!(r, Ok(true)) {
            self.memory_refused = Some(desired);
        }
        r
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.inner.memory_grow_failed(error)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.inner.table_growing(current, desired, maximum)
    }

    fn table_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.inner.table_grow_failed(error)
    }

    fn instances(&self) -> usize {
        self.inner.instances()
    }

    fn tables(&self) -> usize {
        self.inner.tables()
    }

    fn memories(&self) -> usize {
        self.inner.memories()
    }
}

/// Standard error of a component: the first bytes are kept (a panic
/// message), the rest is dropped; writes never fail, so printing cannot
/// crash or stall a component, and nothing reaches the terminal.
#[derive(Clone)]
pub(crate) struct CappedPipe {
    buf: Arc<Mutex<Vec<u8>>>,
    cap: usize,
}

impl CappedPipe {
    pub fn new(cap: usize) -> Self {
        CappedPipe {
            buf: Arc::new(Mutex::new(Vec::new())),
            cap,
        }
    }

    pub fn contents(&self) -> Vec<u8> {
        self.buf.lock().map(|b| b.clone()).unwrap_or_default()
    }
}

impl IsTerminal for CappedPipe {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CappedPipe {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(tokio::io::sink())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CappedPipe {
    async fn ready(&mut self) {}
}

#[wasmtime_wasi::async_trait]
impl OutputStream for CappedPipe {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        if let Ok(mut b) = self.buf.lock() {
            let room = self.cap.saturating_sub(b.len());
            b.extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(64 * 1024)
    }
}

/// Bytes of a component's standard error kept for error messages.
pub(crate) const STDERR_KEPT: usize = 8 * 1024;
/// Longest log message shown, in characters.
const LOG_MESSAGE_CHARS: usize = 1000;

/// Everything a component's store holds for one run.
pub(crate) struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub limiter: Limiter,
    pub stderr: CappedPipe,
    files: Arc<FileAccess>,
    cpuid: Option<Arc<dyn CpuidProvider>>,
    config: Arc<BTreeMap<String, String>>,
    component: Arc<str>,
    limits: Limits,
    log_target: LogTarget,
    log_count: u32,
    pub logs: Vec<String>,
    /// What the run may still read through `files`.
    budget: ReadBudget,
    file_ops: u64,
    /// The current topology, for the `topology` import of annotation
    /// backends (empty for discovery backends).
    pub topology: Arc<Vec<types::Object>>,
}

impl HostState {
    pub fn new(
        component: Arc<str>,
        files: Arc<FileAccess>,
        cpuid: Option<Arc<dyn CpuidProvider>>,
        config: Arc<BTreeMap<String, String>>,
        limits: &Limits,
        log_target: LogTarget,
    ) -> Self {
        let stderr = CappedPipe::new(STDERR_KEPT);
        // No arguments, no environment, no preopened directory, no
        // network, standard input closed, standard output discarded.
        let wasi = WasiCtxBuilder::new()
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .allow_blocking_current_thread(true)
            .build();
        let inner = wasmtime::StoreLimitsBuilder::new()
            .memory_size(limits.memory_bytes)
            .table_elements(limits.table_elements)
            .instances(limits.instances)
            .tables(limits.instances.saturating_mul(4))
            .memories(limits.instances)
            .trap_on_grow_failure(true)
            .build();
        HostState {
            wasi,
            table: ResourceTable::new(),
            limiter: Limiter {
                inner,
                memory_refused: None,
            },
            stderr,
            files,
            cpuid,
            config,
            component,
            limits: limits.clone(),
            log_target,
            log_count: 0,
            logs: Vec::new(),
            budget: ReadBudget::new(limits.max_read_bytes, limits.max_read_entries),
            file_ops: 0,
            topology: Arc::new(Vec::new()),
        }
    }

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

    fn emit(&mut self, line: String) {
        match self.log_target {
            LogTarget::Stderr => {
                let _ = writeln!(std::io::stderr().lock(), "{line}");
            }
            LogTarget::Capture => self.logs.push(line),
            LogTarget::Discard => {}
        }
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
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

impl cpuid::Host for HostState {
    fn pu_count(&mut self) -> wasmtime::Result<u32> {
        Ok(self.cpuid.as_ref().map_or(0, |c| c.pu_count()))
    }

    fn os_index(&mut self, pu: u32) -> wasmtime::Result<u32> {
        Ok(match &self.cpuid {
            Some(c) if pu < c.pu_count() => c.os_index(pu),
            _ => 0,
        })
    }

    fn query(
        &mut self,
        pu: u32,
        leaf: u32,
        subleaf: u32,
    ) -> wasmtime::Result<(u32, u32, u32, u32)> {
        Ok(match &self.cpuid {
            Some(c) if pu < c.pu_count() => {
                let [a, b, c2, d] = c.query(pu, leaf, subleaf);
                (a, b, c2, d)
            }
            _ => (0, 0, 0, 0),
        })
    }
}

/// Makes a component's text safe for a terminal: control characters
/// (escape sequences included) and bidirectional or zero-width formatting
/// characters are shown escaped, and long text is cut.
pub(crate) fn sanitize(s: &str, max_chars: usize) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i >= max_chars {
            out.push('…');
            break;
        }
        // Control characters (escape sequences) and the invisible
        // formatting ones that reorder or hide text on a terminal.
        let invisible = matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}');
        if (c.is_control() && c != '\t') || invisible {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

impl log::Host for HostState {
    fn log(&mut self, level: log::Level, message: String) -> wasmtime::Result<()> {
        // Debug messages reach the terminal only on request: they explain
        // ordinary situations (a recording without pci.ids, say).
        if level == log::Level::Debug
            && self.log_target == LogTarget::Stderr
            && std::env::var_os("WLOC_COMPONENT_DEBUG").is_none_or(|v| v.is_empty() || v == "0")
        {
            return Ok(());
        }
        self.log_count = self.log_count.saturating_add(1);
        let max = self.limits.max_log_messages;
        if self.log_count > max.saturating_add(1) {
            return Ok(());
        }
        let line = if self.log_count == max.saturating_add(1) {
            format!(
                "wloc: component {}: more than {max} messages; the rest are dropped",
                self.component
            )
        } else {
            let level = match level {
                log::Level::Debug => "debug",
                log::Level::Info => "info",
                log::Level::Warning => "warning",
                log::Level::Error => "error",
            };
            format!(
                "wloc: component {} {level}: {}",
                self.component,
                sanitize(&message, LOG_MESSAGE_CHARS)
            )
        };
        self.emit(line);
        Ok(())
    }
}

impl config::Host for HostState {
    fn get(&mut self, name: String) -> wasmtime::Result<Option<String>> {
        Ok(self.config.get(&name).cloned())
    }
}

impl types::Host for HostState {}

struct HasIo;

impl HasData for HasIo {
    type Data<'a> = &'a mut ResourceTable;
}

/// Links the backend's imports and the WASI interfaces Rust's standard
/// library needs (I/O streams, clocks, random numbers, the command-line
/// environment and the filesystem types), never sockets: a component that
/// imports them is refused when it is loaded.
pub(crate) fn link(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    link_granted(linker, crate::enforce::Interfaces::DISCOVERY_ALL)
}

/// Links the WASI interfaces above and, of wloc's, `types`, `log` and the
/// granted ones only: a component importing anything else cannot be
/// instantiated.  Every WIT version the host speaks is linked here, from
/// the same grant.
pub(crate) fn link_granted(
    linker: &mut Linker<HostState>,
    granted: crate::enforce::Interfaces,
) -> wasmtime::Result<()> {
    use crate::bindings::{config, cpuid, files, log, types};
    use wasmtime::component::HasSelf;
    use wasmtime_wasi::p2::bindings::{cli, clocks, filesystem, random, sync};
    type T = HostState;
    types::add_to_linker::<T, HasSelf<T>>(linker, |s| s)?;
    log::add_to_linker::<T, HasSelf<T>>(linker, |s| s)?;
    if granted.files {
        files::add_to_linker::<T, HasSelf<T>>(linker, |s| s)?;
    }
    if granted.cpuid {
        cpuid::add_to_linker::<T, HasSelf<T>>(linker, |s| s)?;
    }
    if granted.config {
        config::add_to_linker::<T, HasSelf<T>>(linker, |s| s)?;
    }
    if granted.topology {
        crate::annotate::bindings::topology::add_to_linker::<T, HasSelf<T>>(linker, |s| s)?;
    }
    let l = linker;
    sync::io::error::add_to_linker::<T, HasIo>(l, |t| &mut t.table)?;
    sync::io::poll::add_to_linker::<T, HasIo>(l, |t| &mut t.table)?;
    sync::io::streams::add_to_linker::<T, HasIo>(l, |t| &mut t.table)?;
    clocks::wall_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
    clocks::monotonic_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
    random::random::add_to_linker::<T, WasiRandom>(l, |t| t.wasi.random())?;
    random::insecure::add_to_linker::<T, WasiRandom>(l, |t| t.wasi.random())?;
    random::insecure_seed::add_to_linker::<T, WasiRandom>(l, |t| t.wasi.random())?;
    cli::exit::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::environment::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stdin::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stdout::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stderr::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_input::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_output::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stdin::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stdout::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stderr::add_to_linker::<T, WasiCli>(l, T::cli)?;
    filesystem::preopens::add_to_linker::<T, WasiFilesystem>(l, T::filesystem)?;
    sync::filesystem::types::add_to_linker::<T, WasiFilesystem>(l, T::filesystem)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn sanitize_escapes_what_a_terminal_would_act_on() {
        assert_eq!(super::sanitize("a\x1b[2Jb", 100), "a\\u{1b}[2Jb");
        assert_eq!(super::sanitize("x\u{202e}y", 100), "x\\u{202e}y");
        assert_eq!(super::sanitize("tab\tok é", 100), "tab\tok é");
        assert_eq!(super::sanitize("abcdef", 3), "abc…");
    }
}
