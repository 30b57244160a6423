//! Running code on chosen PUs of a Linux machine by pinning the calling
//! thread, and CPUID of this machine answered on demand.

use std::cell::Cell;
use std::io;
use std::marker::PhantomData;

use wloc_bind::{set_thread_affinity, thread_affinity};

use wloc_probe::PuRunner;

use wloc_core::CpuSet;

/// Largest CPU list accepted, in PUs.
const MAX_MASK_BITS: usize = 1 << 22;

/// Pins the calling thread on `cpu` and checks that it runs there.
fn move_to(cpu: u32) -> bool {
    wloc_bind::pin_thread_to_pu(cpu).unwrap_or(false)
}

/// Parses a kernel CPU list such as `0-3,8,10-11`.
pub(crate) fn parse_cpu_list(s: &str) -> Option<Vec<u32>> {
    let mut v = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.parse::<u32>().ok()?, b.parse::<u32>().ok()?),
            None => {
                let a = part.parse::<u32>().ok()?;
                (a, a)
            }
        };
        if b < a || b - a > MAX_MASK_BITS as u32 {
            return None;
        }
        v.extend(a..=b);
    }
    Some(v)
}

/// CPUID of this machine, answered on demand for the PUs a component
/// asks about: the asking thread is pinned on each PU in turn (once
/// per PU in a row) and answers are kept.  [`restore`](Self::restore),
/// called by the thread that asked, gives it its affinity back.
///
/// Components that ask a few leaves of a few PUs (the Linux
/// component's cache inclusiveness) get them without the cost of a
/// whole-machine dump.
#[cfg(target_arch = "x86_64")]
pub struct LiveProvider {
    pus: Vec<u32>,
    state: std::sync::Mutex<LiveState>,
}

#[cfg(target_arch = "x86_64")]
#[derive(Default)]
struct LiveState {
    /// The pinned thread, its original affinity and the PU it is on.
    pinned: Option<(std::thread::ThreadId, CpuSet, usize)>,
    answers: std::collections::HashMap<(usize, u32, u32), [u32; 4]>,
}

#[cfg(target_arch = "x86_64")]
impl LiveProvider {
    /// A provider over the online PUs the calling thread may use.
    pub fn new() -> io::Result<Self> {
        Ok(LiveProvider {
            pus: LinuxPuRunner::new()?.pus().to_vec(),
            state: std::sync::Mutex::new(LiveState::default()),
        })
    }

    /// Gives the pinned thread its original affinity back; a no-op
    /// when nothing is pinned or another thread asks.
    pub fn restore(&self) -> io::Result<()> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match st.pinned.take() {
            Some((t, original, _)) if t == std::thread::current().id() => {
                set_thread_affinity(&original)
            }
            other => {
                st.pinned = other;
                Ok(())
            }
        }
    }

    /// Pins the calling thread on PU position `pu`; false if that failed.
    fn pin(&self, st: &mut LiveState, pu: usize) -> bool {
        let me = std::thread::current().id();
        if matches!(&st.pinned, Some((t, _, p)) if *t == me && *p == pu) {
            return true;
        }
        let original = match st.pinned.take() {
            Some((t, original, _)) if t == me => original,
            _ => match thread_affinity() {
                Ok(m) => m,
                Err(_) => return false,
            },
        };
        let Some(&cpu) = self.pus.get(pu) else {
            let _ = set_thread_affinity(&original);
            return false;
        };
        let here = move_to(cpu);
        if here {
            st.pinned = Some((me, original, pu));
        } else {
            let _ = set_thread_affinity(&original);
        }
        here
    }
}

#[cfg(target_arch = "x86_64")]
impl Drop for LiveProvider {
    fn drop(&mut self) {
        let _ = self.restore();
    }
}

#[cfg(target_arch = "x86_64")]
impl wloc_probe::CpuidSource for LiveProvider {
    fn pu_count(&self) -> usize {
        self.pus.len()
    }
    fn os_index(&self, pu: usize) -> u32 {
        self.pus.get(pu).copied().unwrap_or(0)
    }
    fn cpuid(&self, pu: usize, leaf: u32, subleaf: u32) -> [u32; 4] {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&r) = st.answers.get(&(pu, leaf, subleaf)) {
            return r;
        }
        if !self.pin(&mut st, pu) {
            return [0; 4];
        }
        let r =
            wloc_probe::CpuidSource::cpuid(&wloc_probe::NativeSource::current(), 0, leaf, subleaf);
        st.answers.insert((pu, leaf, subleaf), r);
        r
    }
}

/// Runs code on chosen PUs of this Linux machine by pinning the
/// calling thread.
///
/// The PUs are those of the thread's affinity mask when the runner is
/// created that are also online, in increasing OS index.  To pin once
/// per PU rather than once per call, the thread stays on the last PU
/// used; its original affinity comes back with
/// [`restore`](Self::restore) or when the runner is dropped.  The
/// runner belongs to the thread that created it (it is not `Send`).
pub struct LinuxPuRunner {
    pus: Vec<u32>,
    original: CpuSet,
    pinned: Cell<Option<usize>>,
    _thread_bound: PhantomData<*const ()>,
}

impl LinuxPuRunner {
    /// A runner over the PUs the calling thread may use.
    pub fn new() -> io::Result<Self> {
        let original = thread_affinity()?;
        let online = std::fs::read_to_string("/sys/devices/system/cpu/online")
            .ok()
            .and_then(|s| parse_cpu_list(&s));
        let mut pus: Vec<u32> = original.iter().collect();
        if let Some(online) = online {
            pus.retain(|p| online.binary_search(p).is_ok());
        }
        Ok(LinuxPuRunner {
            pus,
            original,
            pinned: Cell::new(None),
            _thread_bound: PhantomData,
        })
    }

    /// OS indexes of the PUs, increasing.
    pub fn pus(&self) -> &[u32] {
        &self.pus
    }

    /// Moves the calling thread to PU `pu` (a position in
    /// [`pus`](Self::pus)); false if that failed.
    pub fn pin(&self, pu: usize) -> bool {
        if self.pinned.get() == Some(pu) {
            return true;
        }
        let Some(&cpu) = self.pus.get(pu) else {
            return false;
        };
        let ok = move_to(cpu);
        self.pinned.set(ok.then_some(pu));
        ok
    }

    /// Gives the calling thread its original affinity back.
    pub fn restore(&self) -> io::Result<()> {
        if self.pinned.take().is_some() {
            set_thread_affinity(&self.original)?;
        }
        Ok(())
    }
}

impl Drop for LinuxPuRunner {
    fn drop(&mut self) {
        let _ = self.restore();
    }
}

impl PuRunner for LinuxPuRunner {
    fn pu_count(&self) -> usize {
        self.pus.len()
    }
    fn os_index(&self, pu: usize) -> u32 {
        self.pus.get(pu).copied().unwrap_or(u32::MAX)
    }
    fn run_on(&self, pu: usize, f: &mut dyn FnMut()) {
        if self.pin(pu) {
            f();
        }
    }
}
