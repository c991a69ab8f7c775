//! The reads that scan a tenant's records rather than look one up — the
//! charts' series (`GET /v1/series`) and the usage export (`GET
//! /v1/usage/export`) — charged so that one tenant's dashboards cannot
//! slow another tenant's API (issue 65: 50 parallel series callers of one
//! tenant took another's `GET /v1/jobs/{id}` p99 from 2 ms to 4.5 s).
//!
//! Each tenant's calls take from its own rate (`--reads-per-second`, a
//! burst of five seconds of it; past it 429 with `Retry-After`); a tenant
//! runs one such read at a time (its others wait their turn); and the
//! process runs at most [`AT_ONCE`] of them whoever asks, so the store's
//! readers stay free for everyone's lookups. The admin's reads (across
//! tenants, the operator's own) take no rate but wait their turn the same.

use super::error::ApiError;
use crate::quota::RateMeter;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Most heavy reads the process runs at once, whoever asks.
pub const AT_ONCE: usize = 2;
pub use crate::config::{
    DEFAULT_READS_PER_SECOND as DEFAULT_PER_SECOND, MAX_READS_PER_SECOND as MAX_PER_SECOND,
};
/// A tenant's burst, in seconds of its rate.
const BURST_SECONDS: f64 = 5.0;
/// Most tenants' turns remembered; idle ones are forgotten past it.
const MAX_TURNS: usize = 10_000;
/// The admin's turn, apart from every tenant's (no tenant is named so).
const ADMIN: &str = "\0admin";

/// The gate every heavy read passes.
pub struct HeavyReads {
    per_second: f64,
    meter: RateMeter,
    /// Each tenant's turn: one read at a time.
    turns: Mutex<HashMap<String, Arc<Semaphore>>>,
    all: Arc<Semaphore>,
}

/// Held while a heavy read runs.
pub struct Admitted {
    _own: OwnedSemaphorePermit,
    _all: OwnedSemaphorePermit,
}

impl HeavyReads {
    pub fn new(per_second: u32) -> Self {
        HeavyReads {
            per_second: f64::from(per_second.clamp(1, MAX_PER_SECOND)),
            meter: RateMeter::default(),
            turns: Mutex::new(HashMap::new()),
            all: Arc::new(Semaphore::new(AT_ONCE)),
        }
    }

    /// Charges a read to `tenant`'s rate (none for the admin), then waits
    /// for its turn and a place among the process's heavy reads.
    pub async fn admit(&self, tenant: &str, admin: bool) -> Result<Admitted, ApiError> {
        let burst = (self.per_second * BURST_SECONDS).max(1.0);
        if !admin {
            let (took, wait) = self.meter.take_up_to(tenant, self.per_second, burst, 1);
            if took == 0 {
                return Err(ApiError::ReadRateLimited {
                    limit: self.per_second as u64,
                    burst: burst as u64,
                    retry_after_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                });
            }
        }
        let turn = self.turn(if admin { ADMIN } else { tenant });
        let closed = |_| ApiError::Unavailable("the server is stopping".into());
        // A tenant's own turn first: its waiting reads hold no place in
        // the process's few.
        let own = turn.acquire_owned().await.map_err(closed)?;
        let all = self.all.clone().acquire_owned().await.map_err(closed)?;
        Ok(Admitted {
            _own: own,
            _all: all,
        })
    }

    fn turn(&self, key: &str) -> Arc<Semaphore> {
        let mut turns = self.turns.lock().unwrap_or_else(|p| p.into_inner());
        if turns.len() >= MAX_TURNS && !turns.contains_key(key) {
            // A turn no read holds or waits for is the same as none.
            turns.retain(|_, s| Arc::strong_count(s) > 1);
        }
        turns
            .entry(key.to_owned())
            .or_insert_with(|| Arc::new(Semaphore::new(1)))
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_tenant_past_its_rate_is_told_when_to_come_back_and_others_are_not() {
        let gate = HeavyReads::new(1);
        // A burst of five seconds of the rate, then 429.
        for _ in 0..5 {
            drop(gate.admit("a", false).await.unwrap());
        }
        let Err(ApiError::ReadRateLimited { retry_after_ms, .. }) = gate.admit("a", false).await
        else {
            panic!("the sixth read at once was let through");
        };
        assert!((1..=1000).contains(&retry_after_ms), "{retry_after_ms}");
        // Another tenant's rate is its own; the admin's is none.
        drop(gate.admit("b", false).await.unwrap());
        for _ in 0..20 {
            drop(gate.admit("a", true).await.unwrap());
        }
    }

    #[tokio::test]
    async fn a_tenant_reads_one_at_a_time_and_the_process_a_few() {
        let gate = Arc::new(HeavyReads::new(MAX_PER_SECOND));
        let first = gate.admit("a", false).await.unwrap();
        // The same tenant's next waits for the first to end.
        let waiting = tokio::spawn({
            let gate = gate.clone();
            async move { gate.admit("a", false).await.map(drop).is_ok() }
        });
        // Another tenant's goes at once: there is a place for it.
        let other = tokio::time::timeout(Duration::from_secs(10), gate.admit("b", false))
            .await
            .expect("another tenant's read waited for the first's")
            .unwrap();
        assert!(!waiting.is_finished());
        // The places are all taken: a third tenant waits for one.
        let third = tokio::spawn({
            let gate = gate.clone();
            async move { gate.admit("c", false).await.map(drop).is_ok() }
        });
        tokio::task::yield_now().await;
        assert!(!third.is_finished());
        drop(other);
        assert!(third.await.unwrap());
        drop(first);
        assert!(waiting.await.unwrap());
    }
}
