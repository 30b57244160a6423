//! `wloc-runtime`: runs wloc's discovery backends as sandboxed WebAssembly
//! components.
//!
//! A [`Runtime`] owns a wasmtime [`Engine`] compiled with fuel metering
//! and epoch interruption, a linker holding the host side of the
//! `wloc:backend@0.1.0` imports, and a thread that advances the epoch.
//! [`Runtime::load`] compiles a component (or takes it from the
//! [compiled cache](cache)) and checks its imports and exports;
//! [`Runtime::discover`] runs its `discover` export in a fresh store and
//! instance, with a deadline, a fuel budget and a memory cap, then checks
//! what it returned and builds the topology from it.
//!
//! What a component gets:
//! * `files`: read-only access to the granted roots only ([`FileAccess`]);
//! * `cpuid`: answers of a [`CpuidProvider`] the host chose, or nothing;
//! * `log`: messages shown on standard error, rate-limited and escaped;
//! * `config`: the settings the host passes.
//! * WASI: clocks, random numbers, an empty environment, no arguments, no
//!   preopened directory, closed standard input, standard output dropped,
//!   standard error kept (8 KiB) for error reports.  Sockets are not
//!   linked at all: a component importing them is refused when loaded.
//!
//! Whatever a component does (trap, spin, exhaust its memory, return bad
//! data) ends as a [`ComponentError`] naming it, and the runtime stays
//! usable for the next run.

pub mod annotate;
pub mod bindings;
pub mod builtin;
pub mod cache;
pub mod code_memory;
pub mod convert;
pub mod enforce;
pub mod engine_config;
pub mod fs;
mod host;
pub mod manifest;
pub mod policy;
pub mod signing;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use wasmtime::component::{Component, Linker};
use wasmtime::{Engine, Store, Trap};
use wloc_core::Topology;

pub use annotate::{LoadedAnnotator, Property};
pub use bindings::types::Discovery;
pub use cache::{CacheOutcome, CompiledCache};
pub use fs::FileAccess;
use host::{HostState, HostTrap};

/// The folder of the hostile test components built with the runtime
/// (`hostile-NAME.wasm`, with manifests), for the end-to-end tests.
#[doc(hidden)]
pub fn test_components_dir() -> &'static str {
    env!("WLOC_TEST_COMPONENTS_DIR")
}

/// CPUID answers for the `cpuid` import: executed natively on a PU, or
/// replayed from a recorded dump.
pub trait CpuidProvider: Send + Sync {
    /// Number of PUs that can be queried.
    fn pu_count(&self) -> u32;
    /// OS index of the PU at a position (`0..pu_count()`).
    fn os_index(&self, pu: u32) -> u32;
    /// Registers `[eax, ebx, ecx, edx]` of `cpuid(leaf, subleaf)` on that PU.
    fn query(&self, pu: u32, leaf: u32, subleaf: u32) -> [u32; 4];
}

/// Where a component's log messages go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogTarget {
    /// Standard error, prefixed with the component's name.
    Stderr,
    /// Kept in [`RunOutput::logs`].
    Capture,
    /// Nowhere.
    Discard,
}

/// Limits of one run.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Wall-clock time before the component is interrupted.
    pub deadline: Duration,
    /// Fuel (about one unit per WebAssembly instruction).
    pub fuel: u64,
    /// Linear memory, in bytes.
    pub memory_bytes: usize,
    /// Table elements.
    pub table_elements: usize,
    /// Core instances (and memories) a component may create.
    pub instances: usize,
    /// Objects returned.
    pub max_objects: usize,
    /// 64-bit words in one returned set (1 << 16 words: 4 Mi PUs).
    pub max_bitmap_words: usize,
    /// Bytes of data returned, all included.
    pub max_returned_bytes: u64,
    /// Bytes of one returned string.
    pub max_string_bytes: usize,
    /// Infos of one object.
    pub max_infos: usize,
    /// Bytes of file contents (and listed names and link targets) read in
    /// one run; charged while reading, so this is also what the host holds
    /// of a run's file data, plus one file per reading thread.
    pub max_read_bytes: u64,
    /// Files read, names listed and paths matched in one run.
    pub max_read_entries: u64,
    /// Bytes of one file.
    pub max_file_bytes: u32,
    /// File operations in one run (files read, directories listed, ...).
    pub max_file_ops: u64,
    /// Paths in one `read-many` call.
    pub max_paths_per_call: usize,
    /// Log messages shown per run.
    pub max_log_messages: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            deadline: Duration::from_secs(10),
            fuel: 20_000_000_000,
            memory_bytes: 256 << 20,
            table_elements: 100_000,
            instances: 16,
            max_objects: 1 << 20,
            max_bitmap_words: 1 << 16,
            max_returned_bytes: 256 << 20,
            max_string_bytes: 64 << 10,
            max_infos: 4096,
            max_read_bytes: 256 << 20,
            max_read_entries: 1 << 22,
            max_file_bytes: 1 << 20,
            max_file_ops: 1 << 20,
            max_paths_per_call: 1 << 16,
            max_log_messages: 100,
        }
    }
}

/// What a run may use.
#[derive(Clone)]
pub struct RunOptions {
    /// The granted roots.
    pub files: Arc<FileAccess>,
    /// CPUID answers, if granted.
    pub cpuid: Option<Arc<dyn CpuidProvider>>,
    /// Settings (`config.get`).
    pub config: Arc<BTreeMap<String, String>>,
    /// Limits.
    pub limits: Limits,
    /// Where log messages go.
    pub log: LogTarget,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            files: Arc::new(FileAccess::none()),
            cpuid: None,
            config: Arc::new(BTreeMap::new()),
            limits: Limits::default(),
            log: LogTarget::Stderr,
        }
    }
}

impl RunOptions {
    /// Default options with these settings.
    pub fn with_config<I, K, V>(settings: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        RunOptions {
            config: Arc::new(
                settings
                    .into_iter()
                    .map(|(k, v)| (k.into(), v.into()))
                    .collect(),
            ),
            ..RunOptions::default()
        }
    }
}

/// What went wrong with a component.
#[derive(Clone, Debug, PartialEq)]
pub enum ErrorKind {
    /// Not a valid component, or it failed to compile.
    Compile(String),
    /// It imports something the host does not give, or lacks the
    /// expected export (another world or WIT version).
    Link(String),
    /// Instantiation failed (its start code trapped, its memory is too big).
    Instantiate(String),
    /// Its fuel ran out.
    OutOfFuel {
        /// The budget it had.
        budget: u64,
    },
    /// Its deadline passed.
    Deadline(Duration),
    /// It wanted more memory than its cap.
    OutOfMemory {
        /// Bytes it asked for.
        wanted: usize,
        /// The cap.
        cap: usize,
    },
    /// It panicked (the message it printed, if any).
    Panic(String),
    /// Another trap.
    Trap(String),
    /// It called `exit`.
    Exit(i32),
    /// It went over a limit of the host interface.
    HostLimit(String),
    /// It returned an error.
    Failed(String),
    /// It returned data that breaks the rules.
    InvalidData(String),
    /// Its objects do not make a valid topology.
    Topology(String),
    /// The policy or the enforcement point refused it before it ran
    /// (not allowed, bad signature, ungranted import, unknown version).
    Refused(String),
}

/// An error of one component, with its name and digest.
#[derive(Clone, Debug)]
pub struct ComponentError {
    /// The component's name.
    pub component: String,
    /// The sha256 digest of its bytes, in hexadecimal.
    pub digest: String,
    /// What happened.
    pub kind: ErrorKind,
}

impl fmt::Display for ComponentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let short = &self.digest[..self.digest.len().min(12)];
        write!(f, "component {} (sha256 {short}): ", self.component)?;
        match &self.kind {
            ErrorKind::Compile(s) => write!(f, "cannot be compiled: {s}"),
            ErrorKind::Link(s) => write!(f, "refused at load time: {s}"),
            ErrorKind::Instantiate(s) => write!(f, "cannot be instantiated: {s}"),
            ErrorKind::OutOfFuel { budget } => {
                write!(f, "stopped: it used up its fuel ({budget} units)")
            }
            ErrorKind::Deadline(d) => write!(f, "stopped: it ran past its deadline of {d:?}"),
            ErrorKind::OutOfMemory { wanted, cap } => write!(
                f,
                "stopped: it asked for {wanted} bytes of memory, above its cap of {cap}"
            ),
            ErrorKind::Panic(m) => write!(f, "panicked: {m}"),
            ErrorKind::Trap(m) => write!(f, "trapped: {m}"),
            ErrorKind::Exit(c) => write!(f, "exited with status {c}"),
            ErrorKind::HostLimit(m) => write!(f, "stopped: {m}"),
            ErrorKind::Failed(m) => write!(f, "failed: {}", host::sanitize(m, 2000)),
            ErrorKind::InvalidData(m) => write!(f, "returned invalid data: {m}"),
            ErrorKind::Topology(m) => write!(f, "returned an invalid topology: {m}"),
            ErrorKind::Refused(m) => write!(f, "refused: {m}"),
        }
    }
}

impl std::error::Error for ComponentError {}

/// A component ready to run.
pub struct LoadedComponent {
    name: String,
    digest: String,
    pre: bindings::DiscoveryBackendPre<HostState>,
    outcome: CacheOutcome,
    /// What the policy granted; `None` for bytes the host itself trusts
    /// ([`Runtime::load`]).
    grant: Option<Arc<enforce::Grant>>,
}

impl LoadedComponent {
    /// What it was granted, if it went through the policy.
    pub fn grant(&self) -> Option<&enforce::Grant> {
        self.grant.as_deref()
    }
    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The sha256 digest of its bytes, in hexadecimal.
    pub fn digest(&self) -> &str {
        &self.digest
    }
    /// Whether it came from the compiled cache.
    pub fn cache_outcome(&self) -> CacheOutcome {
        self.outcome
    }
}

/// What a run returned, before it is turned into a topology.
pub struct RunOutput {
    /// The record.
    pub discovery: Discovery,
    /// Captured log lines ([`LogTarget::Capture`]).
    pub logs: Vec<String>,
    /// Fuel used.
    pub fuel_used: u64,
    /// Time from the new store to the returned record.
    pub elapsed: Duration,
}

/// Interval of the epoch ticker.
const TICK: Duration = Duration::from_millis(2);

/// A thread advancing the engine's epoch while runs are under way (it
/// sleeps otherwise), until dropped.
struct Ticker {
    stop: Arc<AtomicBool>,
    active: Arc<AtomicUsize>,
    handle: Option<JoinHandle<()>>,
}

impl Ticker {
    fn start(engine: Engine) -> std::io::Result<Ticker> {
        let stop = Arc::new(AtomicBool::new(false));
        let active = Arc::new(AtomicUsize::new(0));
        let (s, a) = (stop.clone(), active.clone());
        let handle = std::thread::Builder::new()
            .name("wloc-epoch".into())
            .spawn(move || {
                while !s.load(Ordering::Relaxed) {
                    if a.load(Ordering::Acquire) == 0 {
                        std::thread::park();
                    } else {
                        std::thread::park_timeout(TICK);
                        engine.increment_epoch();
                    }
                }
            })?;
        Ok(Ticker {
            stop,
            active,
            handle: Some(handle),
        })
    }

    /// Keeps the ticker going until the guard is dropped.
    fn running(&self) -> TickerGuard<'_> {
        self.active.fetch_add(1, Ordering::AcqRel);
        if let Some(h) = &self.handle {
            h.thread().unpark();
        }
        TickerGuard(self)
    }
}

struct TickerGuard<'a>(&'a Ticker);

impl Drop for TickerGuard<'_> {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

/// The component host.
pub struct Runtime {
    engine: Engine,
    /// Whether built-in code is used where it lies in this executable
    /// ([`code_memory`]) rather than copied.
    code_in_place: bool,
    /// The built-in components this runtime uses in place, by address.
    in_place: std::sync::Mutex<Vec<(usize, Component)>>,
    /// Everything linked, for components the host itself trusts
    /// ([`Runtime::load`]); made on first use, since components loaded
    /// through the policy get a linker of their own grant.
    linker: std::sync::OnceLock<Linker<HostState>>,
    cache: CompiledCache,
    ticker: Ticker,
}

fn component_error(name: &str, digest: &str, kind: ErrorKind) -> ComponentError {
    ComponentError {
        component: name.to_string(),
        digest: digest.to_string(),
        kind,
    }
}

impl Runtime {
    /// A runtime with the user's compiled cache ([`CompiledCache::from_env`]).
    pub fn new() -> wasmtime::Result<Runtime> {
        Self::with_cache(CompiledCache::from_env())
    }

    /// A runtime with a given compiled cache.
    pub fn with_cache(cache: CompiledCache) -> wasmtime::Result<Runtime> {
        let mut config = engine_config::engine_config();
        let in_place = code_memory::ProtectInPlace::new();
        let code_in_place = in_place.is_some();
        if let Some(m) = in_place {
            config.with_custom_code_memory(Some(Arc::new(m)));
        }
        let engine = Engine::new(&config)?;
        let ticker = Ticker::start(engine.clone())
            .map_err(|e| wasmtime::format_err!("cannot start the epoch thread: {e}"))?;
        Ok(Runtime {
            engine,
            code_in_place,
            in_place: std::sync::Mutex::new(Vec::new()),
            linker: std::sync::OnceLock::new(),
            cache,
            ticker,
        })
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The compiled cache.
    pub fn cache(&self) -> &CompiledCache {
        &self.cache
    }

    /// Compiles (or loads from the cache) a component and checks that the
    /// host gives everything it imports and that it exports `discover`.
    pub fn load(&self, name: &str, wasm: &[u8]) -> Result<LoadedComponent, ComponentError> {
        let digest = cache::sha256_hex(wasm);
        let err = |kind| component_error(name, &digest, kind);
        let (component, outcome) = self
            .cache
            .load_or_compile(&self.engine, wasm, &digest)
            .map_err(|e| err(ErrorKind::Compile(format!("{e:#}"))))?;
        let linker = match self.linker.get() {
            Some(l) => l,
            None => {
                let mut l = Linker::new(&self.engine);
                host::link(&mut l).map_err(|e| err(ErrorKind::Link(format!("{e:#}"))))?;
                self.linker.get_or_init(|| l)
            }
        };
        self.prepare(name, digest.clone(), component, outcome, linker, None)
    }

    /// Loads a component the policy admitted ([`enforce::admit`]): only
    /// its granted interfaces are linked, and every run is narrowed to
    /// its grant.  `wasm` must be the admitted bytes.
    pub fn load_admitted(
        &self,
        adm: &enforce::Admission,
        wasm: &[u8],
    ) -> Result<LoadedComponent, ComponentError> {
        let digest = cache::sha256_hex(wasm);
        self.load_admitted_code(adm, wasm, &digest, &[])
    }

    /// Loads a built-in component the policy admitted, from the code
    /// precompiled when wloc was built when wasmtime accepts it.
    pub fn load_builtin(
        &self,
        adm: &enforce::Admission,
        b: &builtin::Builtin,
    ) -> Result<LoadedComponent, ComponentError> {
        self.load_admitted_code(adm, b.wasm, b.digest, b.precompiled)
    }

    /// Links the granted interfaces and loads `wasm` (whose sha256 is
    /// `digest`) from `precompiled`, the cache or the compiler.
    fn load_admitted_code(
        &self,
        adm: &enforce::Admission,
        wasm: &[u8],
        digest: &str,
        precompiled: &'static [u8],
    ) -> Result<LoadedComponent, ComponentError> {
        let (component, outcome, linker) = self.admitted_code(adm, wasm, digest, precompiled)?;
        let grant = Some(Arc::new(adm.grant.clone()));
        let name = adm.manifest.name.as_str();
        self.prepare(name, digest.to_string(), component, outcome, &linker, grant)
    }

    /// What every admitted component goes through before it is prepared
    /// for its world: its bytes must be the admitted ones, only its
    /// granted interfaces are linked, and its code comes precompiled,
    /// from the cache or from the compiler.
    pub(crate) fn admitted_code(
        &self,
        adm: &enforce::Admission,
        wasm: &[u8],
        digest: &str,
        precompiled: &'static [u8],
    ) -> Result<(Component, CacheOutcome, Linker<HostState>), ComponentError> {
        let err = |kind| component_error(&adm.manifest.name, digest, kind);
        if digest != adm.digest {
            return Err(err(ErrorKind::Refused(
                "its bytes are not the ones the policy admitted".into(),
            )));
        }
        let mut linker = Linker::new(&self.engine);
        host::link_granted(&mut linker, adm.grant.interfaces)
            .map_err(|e| err(ErrorKind::Link(format!("{e:#}"))))?;
        let (component, outcome) = self
            .compiled(wasm, digest, precompiled)
            .map_err(|e| err(ErrorKind::Compile(format!("{e:#}"))))?;
        Ok((component, outcome, linker))
    }

    /// The compiled form of `wasm` (sha256 `digest`): `precompiled` when
    /// it is given and wasmtime accepts it for this engine, else from the
    /// cache or the compiler.
    pub(crate) fn compiled(
        &self,
        wasm: &[u8],
        digest: &str,
        precompiled: &'static [u8],
    ) -> wasmtime::Result<(Component, CacheOutcome)> {
        if !precompiled.is_empty() {
            // SAFETY: only built-in components pass `precompiled`: bytes
            // that the build script produced from `wasm` with
            // `engine_config()` and that are part of this executable.
            // wasmtime checks its version and the engine settings and
            // refuses code compiled for anything else, which then
            // compiles again below.
            if let Some(c) = self.in_place_component(precompiled) {
                return Ok((c, CacheOutcome::Precompiled));
            }
            if let Ok(c) = unsafe { Component::deserialize(&self.engine, precompiled) } {
                return Ok((c, CacheOutcome::Precompiled));
            }
        }
        self.cache.load_or_compile(&self.engine, wasm, digest)
    }

    /// The built-in component whose precompiled code is `precompiled`,
    /// using that code where it lies in this executable
    /// ([`code_memory`]), if this runtime may.
    ///
    /// wasmtime registers every piece of code by its address, once per
    /// process, so in-place code backs one [`Component`] at a time: the
    /// first runtime that asks keeps it for good and gives out clones;
    /// other runtimes of the process copy the code as usual.
    fn in_place_component(&self, precompiled: &'static [u8]) -> Option<Component> {
        static CLAIMED: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());
        if !self.code_in_place || !builtin::is_embedded_code(precompiled) {
            return None;
        }
        let key = precompiled.as_ptr() as usize;
        let mut mine = self.in_place.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, c)) = mine.iter().find(|(k, _)| *k == key) {
            return Some(c.clone());
        }
        let mut claimed = CLAIMED.lock().unwrap_or_else(|e| e.into_inner());
        if claimed.contains(&key) {
            return None;
        }
        // SAFETY: the bytes are the precompiled code of a built-in
        // component (see `compiled`), a static of this executable:
        // page-aligned, never written and never freed, which is what
        // using them in place requires.  No other component uses them
        // (the claim above).
        let c = unsafe {
            Component::deserialize_raw(&self.engine, std::ptr::NonNull::from(precompiled))
        }
        .ok()?;
        claimed.push(key);
        mine.push((key, c.clone()));
        Some(c)
    }

    fn prepare(
        &self,
        name: &str,
        digest: String,
        component: Component,
        outcome: CacheOutcome,
        linker: &Linker<HostState>,
        grant: Option<Arc<enforce::Grant>>,
    ) -> Result<LoadedComponent, ComponentError> {
        let err = |kind| component_error(name, &digest, kind);
        let pre = linker
            .instantiate_pre(&component)
            .map_err(|e| err(ErrorKind::Link(format!("{e:#}"))))?;
        let pre = bindings::DiscoveryBackendPre::new(pre).map_err(|e| {
            err(ErrorKind::Link(format!(
                "it is not a wloc:backend@0.1.0 discovery backend: {e:#}"
            )))
        })?;
        Ok(LoadedComponent {
            name: name.to_string(),
            digest,
            pre,
            outcome,
            grant,
        })
    }

    /// Runs a component's `discover` in a fresh store and returns its
    /// record, unchecked.  A component loaded through the policy gets
    /// only what it was granted, whatever `opts` holds.
    pub fn run(&self, c: &LoadedComponent, opts: &RunOptions) -> Result<RunOutput, ComponentError> {
        let narrowed;
        let opts = match &c.grant {
            Some(g) => {
                narrowed = g.narrow(opts);
                &narrowed
            }
            None => opts,
        };
        let start = Instant::now();
        let err = |kind| component_error(&c.name, &c.digest, kind);
        let limits = &opts.limits;
        let state = HostState::new(
            Arc::from(c.name.as_str()),
            opts.files.clone(),
            opts.cpuid.clone(),
            opts.config.clone(),
            limits,
            opts.log,
        );
        let mut store = self
            .limited_store(state, limits)
            .map_err(|e| err(ErrorKind::Trap(format!("{e:#}"))))?;
        let _ticking = self.ticker.running();

        let result = c
            .pre
            .instantiate(&mut store)
            .map_err(|e| (true, e))
            .and_then(|b| b.call_discover(&mut store).map_err(|e| (false, e)));
        let fuel_used = limits.fuel.saturating_sub(store.get_fuel().unwrap_or(0));
        match result {
            Ok(Ok(discovery)) => Ok(RunOutput {
                discovery,
                logs: std::mem::take(&mut store.data_mut().logs),
                fuel_used,
                elapsed: start.elapsed(),
            }),
            Ok(Err(msg)) => Err(err(ErrorKind::Failed(msg))),
            Err((instantiating, e)) => Err(err(classify(&e, store.data(), limits, instantiating))),
        }
    }

    /// A fresh store for one run, with every per-run limit armed: memory
    /// and table caps, the fuel budget and the epoch deadline.  Discovery
    /// and annotation runs both start here, so limits are set in one place.
    pub(crate) fn limited_store(
        &self,
        state: HostState,
        limits: &Limits,
    ) -> wasmtime::Result<Store<HostState>> {
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limiter);
        store.set_fuel(limits.fuel)?;
        let ticks = limits.deadline.as_nanos().div_ceil(TICK.as_nanos()).max(1) + 1;
        store.set_epoch_deadline(u64::try_from(ticks).unwrap_or(u64::MAX));
        store.epoch_deadline_trap();
        Ok(store)
    }

    /// Runs a component and adds what it found to `topo` (whose type
    /// filters the caller has set), then finishes and checks the topology.
    pub fn discover(
        &self,
        c: &LoadedComponent,
        opts: &RunOptions,
        topo: Topology,
    ) -> Result<Topology, ComponentError> {
        let out = self.run(c, opts)?;
        let limits = c.grant.as_ref().map_or(&opts.limits, |g| &g.limits);
        build_topology(c.name(), c.digest(), &out.discovery, limits, topo)
    }
}

/// Checks a record, adds it to `topo`, finishes and checks the topology.
pub fn build_topology(
    name: &str,
    digest: &str,
    d: &Discovery,
    limits: &Limits,
    mut topo: Topology,
) -> Result<Topology, ComponentError> {
    let err = |kind| component_error(name, digest, kind);
    // The core is not expected to panic on checked data; if it does, the
    // component's data still must not take the host down.
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        convert::apply(d, &mut topo, limits).map_err(ErrorKind::InvalidData)?;
        topo.finish()
            .map_err(|e| ErrorKind::Topology(e.to_string()))?;
        topo.check()
            .map_err(|e| ErrorKind::Topology(e.to_string()))?;
        Ok::<_, ErrorKind>(())
    }));
    match r {
        Ok(Ok(())) => Ok(topo),
        Ok(Err(kind)) => Err(err(kind)),
        Err(_) => Err(err(ErrorKind::Topology(
            "the topology could not be built from its objects (internal error)".into(),
        ))),
    }
}

/// Names a failure of a run.
fn classify(e: &wasmtime::Error, s: &HostState, limits: &Limits, instantiating: bool) -> ErrorKind {
    if let Some(exit) = e.downcast_ref::<wasmtime_wasi::I32Exit>() {
        return ErrorKind::Exit(exit.0);
    }
    if let Some(h) = e.downcast_ref::<HostTrap>() {
        return ErrorKind::HostLimit(h.0.clone());
    }
    if let Some(wanted) = s.limiter.memory_refused {
        return ErrorKind::OutOfMemory {
            wanted,
            cap: limits.memory_bytes,
        };
    }
    let stderr = String::from_utf8_lossy(&s.stderr.contents()).into_owned();
    match e.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => ErrorKind::OutOfFuel {
            budget: limits.fuel,
        },
        Some(Trap::Interrupt) => ErrorKind::Deadline(limits.deadline),
        Some(Trap::UnreachableCodeReached) if stderr.contains("panicked") => {
            ErrorKind::Panic(host::sanitize(stderr.trim(), 2000))
        }
        Some(Trap::UnreachableCodeReached) => {
            ErrorKind::Trap("it executed `unreachable` (an abort)".into())
        }
        Some(t) => ErrorKind::Trap(t.to_string()),
        None if instantiating => ErrorKind::Instantiate(format!("{e:#}")),
        None => ErrorKind::Trap(host::sanitize(&format!("{e:#}"), 2000)),
    }
}
