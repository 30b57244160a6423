//! The thread that advances the engine's epoch while runs are under way:
//! what makes run deadlines (epoch interruption) fire.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::Engine;

/// Interval of the epoch ticker.
pub(crate) const TICK: Duration = Duration::from_millis(2);

/// A thread advancing the engine's epoch while runs are under way. It
/// exists only then: the first run starts it and it ends once no run is
/// left, so a process that loaded a topology (a program on the C library)
/// keeps no thread of wloc's afterwards (hwloc's tests count a process's
/// threads, and a parked thread's stale CPU shows in its last location).
pub(crate) struct Ticker {
    engine: Engine,
    /// Runs under way, and whether a thread is ticking for them: changed
    /// together under the lock, so that a run never starts just as the
    /// thread decides to end.
    state: Arc<Mutex<TickerState>>,
}

#[derive(Default)]
struct TickerState {
    active: usize,
    /// The ticking thread and the flag that ends it.
    thread: Option<(JoinHandle<()>, Arc<AtomicBool>)>,
}

fn lock(s: &Mutex<TickerState>) -> std::sync::MutexGuard<'_, TickerState> {
    // The state stays consistent even if a holder panicked.
    s.lock().unwrap_or_else(|e| e.into_inner())
}

impl Ticker {
    pub(crate) fn start(engine: Engine) -> std::io::Result<Ticker> {
        Ok(Ticker {
            engine,
            state: Arc::default(),
        })
    }

    /// Keeps a ticking thread going until the guard is dropped.
    pub(crate) fn running(&self) -> std::io::Result<TickerGuard<'_>> {
        let mut st = lock(&self.state);
        if st.thread.is_none() {
            let engine = self.engine.clone();
            let stop = Arc::new(AtomicBool::new(false));
            let s = stop.clone();
            let handle = std::thread::Builder::new()
                .name("wloc-epoch".into())
                .spawn(move || {
                    while !s.load(Ordering::Acquire) {
                        std::thread::park_timeout(TICK);
                        engine.increment_epoch();
                    }
                })?;
            st.thread = Some((handle, stop));
        }
        st.active += 1;
        Ok(TickerGuard(self))
    }
}

pub(crate) struct TickerGuard<'a>(&'a Ticker);

impl Drop for TickerGuard<'_> {
    fn drop(&mut self) {
        let mut st = lock(&self.0.state);
        st.active -= 1;
        let last = if st.active == 0 {
            st.thread.take()
        } else {
            None
        };
        drop(st);
        // The last run ends the thread before returning: none is left
        // behind once the caller goes on (a new run starts its own).
        if let Some((h, stop)) = last {
            stop.store(true, Ordering::Release);
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_lives_only_while_runs_are_under_way() {
        let t = Ticker::start(Engine::default()).unwrap();
        assert!(lock(&t.state).thread.is_none());
        let a = t.running().unwrap();
        let b = t.running().unwrap();
        assert!(lock(&t.state).thread.is_some());
        drop(a);
        std::thread::sleep(TICK * 5);
        assert!(lock(&t.state).thread.is_some(), "one run is still going");
        drop(b);
        assert!(
            lock(&t.state).thread.is_none(),
            "the thread ended with the last run"
        );
        // A later run starts a new one.
        let _c = t.running().unwrap();
        assert!(lock(&t.state).thread.is_some());
    }
}
