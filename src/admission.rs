//! Each tenant's enqueue rate, taken by every path that makes a job: a
//! client's enqueue or batch, a schedule's slot or trigger, a guest's
//! spawn, a task's callbacks, a redrive. One per process (the buckets are
//! in memory, as `quota::RateMeter` says); the registry holds it, since
//! every one of those paths holds the registry.
//!
//! A path that can refuse takes what the bucket holds and refuses the
//! rest (`take`); a callback, which comes with a job's end and must not be
//! lost, is owed instead (`owe`): it is made at once, due when its token
//! would have come.

use crate::quota::{QuotaCache, Quotas, RateMeter};
use crate::store::{JobStore, StoreResult};
use std::sync::Arc;
use std::time::Duration;

/// Over the tenant's enqueue rate: what a refusal says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Over {
    /// Enqueues a second.
    pub limit: u64,
    pub burst: u64,
    /// When the next one is allowed.
    pub retry_after_ms: u64,
}

impl std::fmt::Display for Over {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the tenant's enqueue rate ({} per second, {} at once) is used up; the next is \
             allowed in {} ms",
            self.limit, self.burst, self.retry_after_ms
        )
    }
}

pub struct Admission {
    store: Arc<dyn JobStore>,
    /// Each tenant's quotas, as enqueues are metered by them.
    pub quotas: QuotaCache,
    meter: RateMeter,
}

impl Admission {
    pub fn new(store: Arc<dyn JobStore>, defaults: Quotas) -> Self {
        Admission {
            store,
            quotas: QuotaCache::new(defaults),
            meter: RateMeter::default(),
        }
    }

    /// The tenant's quotas over the server's defaults, remembered a second.
    pub async fn quotas_of(&self, tenant: &str) -> StoreResult<Quotas> {
        if let Some(q) = self.quotas.get(tenant) {
            return Ok(q);
        }
        let own = self
            .store
            .tenant_get(tenant)
            .await?
            .map(|t| t.quotas)
            .unwrap_or_default();
        Ok(self.quotas.put(tenant, own))
    }

    /// Takes up to `n` enqueues from the tenant's bucket: how many it
    /// held, and what to say to those it did not.
    pub async fn take(&self, tenant: &str, n: usize) -> StoreResult<(usize, Option<Over>)> {
        let quotas = self.quotas_of(tenant).await?;
        let Some((rate, burst)) = quotas.enqueue_bucket() else {
            return Ok((n, None));
        };
        let (granted, wait) = self.meter.take_up_to(tenant, rate, burst, n as u64);
        if granted == n as u64 {
            return Ok((n, None));
        }
        let over = Over {
            limit: quotas.enqueue_per_second.unwrap_or(0),
            burst: burst as u64,
            retry_after_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
        };
        Ok((granted as usize, Some(over)))
    }

    /// Takes one, or refuses: `Err` says when the next comes.
    pub async fn take_one(&self, tenant: &str) -> StoreResult<Result<(), Over>> {
        Ok(match self.take(tenant, 1).await? {
            (1, _) => Ok(()),
            (_, over) => Err(over.unwrap_or(Over {
                limit: 0,
                burst: 0,
                retry_after_ms: u64::MAX,
            })),
        })
    }

    /// Takes one whether the bucket holds it or not: how long until it
    /// would have come (zero when it held it). The tenant's later
    /// enqueues wait for what it owes.
    pub async fn owe(&self, tenant: &str) -> StoreResult<Duration> {
        let quotas = self.quotas_of(tenant).await?;
        Ok(match quotas.enqueue_bucket() {
            Some((rate, burst)) => self.meter.owe_one(tenant, rate, burst),
            None => Duration::ZERO,
        })
    }
}
