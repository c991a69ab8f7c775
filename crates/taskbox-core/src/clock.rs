//! The store's clock: Unix milliseconds, injectable so that tests of
//! backoff, leases and rescue move time instead of sleeping.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

// Unix ms and their text live below every layer; the store's paths to
// them stand.
pub use crate::time::{parse_rfc3339, rfc3339, Millis};

pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> Millis;
}

/// The system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Millis {
        chrono::Utc::now().timestamp_millis()
    }
}

/// A clock that moves only when told; starts at the system time.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<AtomicI64>);

impl Default for ManualClock {
    fn default() -> Self {
        ManualClock(Arc::new(AtomicI64::new(SystemClock.now())))
    }
}

impl ManualClock {
    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Millis {
        self.0.load(Ordering::SeqCst)
    }
}
