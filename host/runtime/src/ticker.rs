//! The thread that advances the engine's epoch while runs are under way:
//! what makes run deadlines (epoch interruption) fire.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::Engine;

/// Interval of the epoch ticker.
pub(crate) const TICK: Duration = Duration::from_millis(2);

/// A thread advancing the engine's epoch while runs are under way (it
/// sleeps otherwise), until dropped.
pub(crate) struct Ticker {
    stop: Arc<AtomicBool>,
    active: Arc<AtomicUsize>,
    handle: Option<JoinHandle<()>>,
}

impl Ticker {
    pub(crate) fn start(engine: Engine) -> std::io::Result<Ticker> {
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
    pub(crate) fn running(&self) -> TickerGuard<'_> {
        self.active.fetch_add(1, Ordering::AcqRel);
        if let Some(h) = &self.handle {
            h.thread().unpark();
        }
        TickerGuard(self)
    }
}

pub(crate) struct TickerGuard<'a>(&'a Ticker);

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
