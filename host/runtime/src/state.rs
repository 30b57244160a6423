//! What a component's store holds for one run ([`HostState`]): its WASI
//! context, the limiter of its memory and tables, its standard error and
//! what its imports answer from (files, CPUID, settings, the topology).
//! The imports themselves are implemented in [`crate::imports`].

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, StoreLimits};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder};
use wloc_trust::Limits;

use crate::bindings::types;
use crate::fs::{FileAccess, ReadBudget};
use crate::options::{LogTarget, SharedCpuid};

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
    pub(crate) inner: StoreLimits,
    pub(crate) memory_refused: Option<usize>,
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
    pub(crate) fn new(cap: usize) -> Self {
        CappedPipe {
            buf: Arc::new(Mutex::new(Vec::new())),
            cap,
        }
    }

    pub(crate) fn contents(&self) -> Vec<u8> {
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

/// Everything a component's store holds for one run.
pub struct HostState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) limiter: Limiter,
    pub(crate) stderr: CappedPipe,
    pub(crate) files: Arc<FileAccess>,
    pub(crate) cpuid: Option<SharedCpuid>,
    pub(crate) config: Arc<BTreeMap<String, String>>,
    pub(crate) component: Arc<str>,
    pub(crate) limits: Limits,
    pub(crate) log_target: LogTarget,
    pub(crate) log_count: u32,
    pub(crate) logs: Vec<String>,
    /// What the run may still read through `files`.
    pub(crate) budget: ReadBudget,
    pub(crate) file_ops: u64,
    /// The current topology, for the `topology` import of annotation
    /// backends (empty for discovery backends).
    pub(crate) topology: Arc<Vec<types::Object>>,
}

impl HostState {
    pub(crate) fn new(
        component: Arc<str>,
        files: Arc<FileAccess>,
        cpuid: Option<SharedCpuid>,
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
}
