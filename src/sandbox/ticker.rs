//! The epoch ticker: one thread that advances the engine's epoch, which is
//! when running guests check their deadline and cancellation.
//!
//! It ticks every [`EPOCH_PERIOD`] while attempts run, and also exactly at
//! each running attempt's deadline, so a runaway guest is stopped within the
//! thread's wake-up latency of its deadline without a fast periodic tick
//! (which costs every busy core a preemption per tick). After a second with
//! no attempt it sleeps until one starts.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};
use wasmtime::{Engine, EngineWeak};

/// How often running guests check for cancellation and yield to the executor.
pub const EPOCH_PERIOD: Duration = Duration::from_millis(5);

/// While a running attempt is past its deadline (its guest may have been
/// between checks, or blocked in a host call until its outer timer fires),
/// tick again this often until it ends.
const RETICK: Duration = Duration::from_micros(250);

/// After this long with no attempt the thread stops ticking and sleeps
/// (waking once per this period to notice a dropped engine); waking it again
/// costs the next attempt a syscall, so it is not done after every attempt.
const IDLE_AFTER: Duration = Duration::from_secs(1);

struct Shared {
    active: AtomicUsize,
    /// Deadlines of running attempts, made unique by a sequence number.
    deadlines: Mutex<BTreeSet<(Instant, u64)>>,
    seq: AtomicU64,
    /// When the thread will next wake, as nanoseconds since `base`.
    next_wake: AtomicU64,
    base: Instant,
}

impl Shared {
    fn deadlines(&self) -> MutexGuard<'_, BTreeSet<(Instant, u64)>> {
        self.deadlines.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn nanos(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.base).as_nanos()).unwrap_or(u64::MAX)
    }
}

/// Handle to the ticker thread; cheap to clone.
#[derive(Clone)]
pub struct Ticker {
    shared: Arc<Shared>,
    thread: Thread,
}

/// An attempt's registration: keeps the ticker running and its deadline
/// scheduled until dropped.
pub struct Ticking {
    ticker: Ticker,
    key: (Instant, u64),
}

impl Ticker {
    /// Starts the thread; it ends once the engine is dropped.
    pub fn spawn(engine: &Engine) -> std::io::Result<Ticker> {
        let base = Instant::now();
        let shared = Arc::new(Shared {
            active: AtomicUsize::new(0),
            deadlines: Mutex::new(BTreeSet::new()),
            seq: AtomicU64::new(0),
            next_wake: AtomicU64::new(u64::MAX),
            base,
        });
        let weak = engine.weak();
        let state = shared.clone();
        let handle = thread::Builder::new()
            .name("taskbox-epoch".into())
            .spawn(move || run(&weak, &state))?;
        Ok(Ticker {
            shared,
            thread: handle.thread().clone(),
        })
    }

    /// Registers a running attempt whose deadline is `deadline`.
    pub fn start(&self, deadline: Instant) -> Ticking {
        let s = &self.shared;
        let key = (deadline, s.seq.fetch_add(1, Ordering::Relaxed));
        s.deadlines().insert(key);
        s.active.fetch_add(1, Ordering::AcqRel);
        // Wake the thread only if it would otherwise sleep past this
        // deadline or past one period (it is asleep for idleness).
        let next_wake = s.next_wake.load(Ordering::Acquire);
        let soon = s.nanos(Instant::now() + EPOCH_PERIOD);
        if s.nanos(deadline) < next_wake || soon < next_wake {
            self.thread.unpark();
        }
        Ticking {
            ticker: self.clone(),
            key,
        }
    }
}

impl Drop for Ticking {
    fn drop(&mut self) {
        let s = &self.ticker.shared;
        s.deadlines().remove(&self.key);
        s.active.fetch_sub(1, Ordering::AcqRel);
    }
}

fn run(engine: &EngineWeak, s: &Shared) {
    let mut last_tick = Instant::now();
    let mut last_busy = last_tick;
    loop {
        let now = Instant::now();
        let busy = s.active.load(Ordering::Acquire) > 0;
        if busy {
            last_busy = now;
        }
        let wake = if !busy && now.duration_since(last_busy) >= IDLE_AFTER {
            now + IDLE_AFTER
        } else {
            let periodic = last_tick + EPOCH_PERIOD;
            match s.deadlines().first() {
                Some(&(deadline, _)) => periodic.min(deadline.max(last_tick + RETICK)),
                None => periodic,
            }
        };
        s.next_wake.store(s.nanos(wake), Ordering::Release);
        if wake > now {
            thread::park_timeout(wake - now);
        }
        let Some(engine) = engine.upgrade() else {
            return;
        };
        engine.increment_epoch();
        last_tick = Instant::now();
    }
}
