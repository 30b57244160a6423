//! The component host: the engine, the compiled code of components, and
//! the one path by which a component of either world is loaded (its
//! interfaces linked, its exports checked) and run (a fresh store and
//! instance, every per-run limit armed, every failure named).  The
//! per-world entry points are in [`crate::discovery`] and
//! [`crate::annotate`].

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use wasmtime::component::{Component, Linker};
use wasmtime::{Engine, Store, Trap};
use wloc_trust::grant::{Admission, Grant};
use wloc_trust::text::sanitize;
use wloc_trust::{ComponentError, ErrorKind, Limits};

use crate::bindings::types::Object;
use crate::builtin;
use crate::cache::{CacheOutcome, CompiledCache};
use crate::code_memory;
use crate::engine_config;
use crate::imports;
use crate::options::RunOptions;
use crate::state::{HostState, HostTrap};
use crate::ticker::{TICK, Ticker};
use crate::world::World;

/// A component ready to run in the world `W`: a
/// [`LoadedComponent`](crate::LoadedComponent) (discovery) or a
/// [`LoadedAnnotator`](crate::LoadedAnnotator) (annotation).
pub struct Loaded<W: World> {
    name: String,
    digest: String,
    pub(crate) pre: W::Pre,
    outcome: CacheOutcome,
    /// What the policy granted; `None` for bytes the host itself trusts
    /// (`Runtime::load`, `Runtime::load_annotator`, for tests).
    pub(crate) grant: Option<Arc<Grant>>,
}

impl<W: World> Loaded<W> {
    /// What it was granted, if it went through the policy.
    pub fn grant(&self) -> Option<&Grant> {
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

/// What a run of either world returned, before it is checked.
pub(crate) struct Ran<R> {
    /// The record its export returned.
    pub record: R,
    /// Captured log lines ([`crate::LogTarget::Capture`]).
    pub logs: Vec<String>,
    /// Fuel used.
    pub fuel_used: u64,
    /// Time from the new store to the returned record.
    pub elapsed: Duration,
}

/// The component host.
pub struct Runtime {
    engine: Engine,
    /// Whether built-in code is used where it lies in this executable
    /// ([`code_memory`]) rather than copied.
    code_in_place: bool,
    /// The built-in components this runtime uses in place, by address.
    in_place: Mutex<Vec<(usize, Component)>>,
    /// Everything a world links, for components the host itself trusts
    /// (`Runtime::load`, `Runtime::load_annotator`, for tests), by world; made
    /// on first use, since components loaded through the policy get a
    /// linker of their own grant.
    #[cfg(any(test, feature = "test-support"))]
    trusted: [std::sync::OnceLock<Linker<HostState>>; 3],
    cache: CompiledCache,
    ticker: Ticker,
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
            #[cfg(any(test, feature = "test-support"))]
            trusted: Default::default(),
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

    /// Compiles (or loads from the cache) a component the host itself
    /// trusts, links every interface of its world and checks that the
    /// host gives everything it imports and that it has the world's
    /// export.
    #[cfg(any(test, feature = "test-support"))]
    pub(crate) fn load_trusted<W: World>(
        &self,
        name: &str,
        wasm: &[u8],
    ) -> Result<Loaded<W>, ComponentError> {
        let digest = crate::cache::component_digest(wasm);
        let err = |kind| ComponentError::new(name, &digest, kind);
        let (component, outcome) = self
            .cache
            .load_or_compile(&self.engine, wasm, &digest)
            .map_err(|e| err(ErrorKind::Compile(format!("{e:#}"))))?;
        use wloc_trust::manifest::Kind;
        let slot = &self.trusted[match W::KIND {
            Kind::Discovery => 0,
            Kind::Annotation => 1,
            Kind::Fabric => 2,
        }];
        let linker = match slot.get() {
            Some(l) => l,
            None => {
                let mut l = Linker::new(&self.engine);
                imports::link_granted(&mut l, W::ALL)
                    .map_err(|e| err(ErrorKind::Link(format!("{e:#}"))))?;
                slot.get_or_init(|| l)
            }
        };
        self.prepare(name, digest.clone(), component, outcome, linker, None)
    }

    /// Loads a component the policy admitted ([`crate::enforce::admit`])
    /// in the world `W`, from `precompiled` (a built-in component's code,
    /// when wasmtime accepts it), the cache or the compiler: its bytes
    /// `wasm` (whose sha256 is `digest`) must be the admitted ones, only
    /// its granted interfaces are linked, and every run is narrowed to
    /// its grant.
    pub(crate) fn load_granted<W: World>(
        &self,
        adm: &Admission,
        wasm: &[u8],
        digest: &str,
        precompiled: &'static [u8],
    ) -> Result<Loaded<W>, ComponentError> {
        let name = adm.manifest.name.as_str();
        let err = |kind| ComponentError::new(name, digest, kind);
        if let Some(why) = W::refuses(adm) {
            return Err(err(ErrorKind::Refused(why)));
        }
        if digest != adm.digest {
            return Err(err(ErrorKind::Refused(
                "its bytes are not the ones the policy admitted".into(),
            )));
        }
        let mut linker = Linker::new(&self.engine);
        imports::link_granted(&mut linker, adm.grant.interfaces)
            .map_err(|e| err(ErrorKind::Link(format!("{e:#}"))))?;
        let (component, outcome) = self
            .compiled(wasm, digest, precompiled)
            .map_err(|e| err(ErrorKind::Compile(format!("{e:#}"))))?;
        let grant = Some(Arc::new(adm.grant.clone()));
        self.prepare(name, digest.to_string(), component, outcome, &linker, grant)
    }

    /// The compiled form of `wasm` (sha256 `digest`): `precompiled` when
    /// it is given and wasmtime accepts it for this engine, else from the
    /// cache or the compiler.
    fn compiled(
        &self,
        wasm: &[u8],
        digest: &str,
        precompiled: &'static [u8],
    ) -> wasmtime::Result<(Component, CacheOutcome)> {
        if !precompiled.is_empty() {
            if let Some(c) = self.in_place_component(precompiled) {
                return Ok((c, CacheOutcome::Precompiled));
            }
            // SAFETY: only built-in components pass `precompiled`: bytes
            // that the build script produced from `wasm` with
            // `engine_config()` and that are part of this executable.
            // wasmtime checks its version and the engine settings and
            // refuses code compiled for anything else, which then
            // compiles again below.
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

    fn prepare<W: World>(
        &self,
        name: &str,
        digest: String,
        component: Component,
        outcome: CacheOutcome,
        linker: &Linker<HostState>,
        grant: Option<Arc<Grant>>,
    ) -> Result<Loaded<W>, ComponentError> {
        let err = |kind| ComponentError::new(name, &digest, kind);
        let pre = linker
            .instantiate_pre(&component)
            .map_err(|e| err(ErrorKind::Link(format!("{e:#}"))))?;
        let pre = W::pre(pre).map_err(|e| {
            err(ErrorKind::Link(format!(
                "it is not a {} {} backend: {e:#}",
                W::PACKAGE,
                W::KIND
            )))
        })?;
        Ok(Loaded {
            name: name.to_string(),
            digest,
            pre,
            outcome,
            grant,
        })
    }

    /// Runs a component's export in a fresh store and returns its
    /// record, unchecked; an annotation component is shown `objects`.
    /// A component loaded through the policy gets only what it was
    /// granted, whatever `opts` holds.
    pub(crate) fn run_world<W: World>(
        &self,
        c: &Loaded<W>,
        opts: &RunOptions,
        objects: Option<Arc<Vec<Object>>>,
    ) -> Result<Ran<W::Record>, ComponentError> {
        let narrowed;
        let opts = match &c.grant {
            Some(g) => {
                narrowed = g.narrow(opts);
                &narrowed
            }
            None => opts,
        };
        let start = Instant::now();
        let err = |kind| ComponentError::new(&c.name, &c.digest, kind);
        let limits = &opts.limits;
        let mut state = HostState::new(
            Arc::from(c.name.as_str()),
            opts.files.clone(),
            if W::CPUID { opts.cpuid.clone() } else { None },
            opts.config.clone(),
            limits,
            opts.log,
        );
        if let Some(objects) = objects {
            state.topology = objects;
        }
        let mut store = self
            .limited_store(state, limits)
            .map_err(|e| err(ErrorKind::Trap(format!("{e:#}"))))?;
        let _ticking = self.ticker.running().map_err(|e| {
            err(ErrorKind::Trap(format!(
                "cannot start the epoch thread: {e}"
            )))
        })?;

        let result = W::call(&c.pre, &mut store);
        let fuel_used = limits.fuel.saturating_sub(store.get_fuel().unwrap_or(0));
        match result {
            Ok(Ok(record)) => Ok(Ran {
                record,
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
    fn limited_store(
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
            ErrorKind::Panic(sanitize(stderr.trim(), 2000))
        }
        Some(Trap::UnreachableCodeReached) => {
            ErrorKind::Trap("it executed `unreachable` (an abort)".into())
        }
        Some(t) => ErrorKind::Trap(t.to_string()),
        None if instantiating => ErrorKind::Instantiate(format!("{e:#}")),
        None => ErrorKind::Trap(sanitize(&format!("{e:#}"), 2000)),
    }
}
