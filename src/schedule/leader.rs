//! Leadership: the work that must run in one process at a time per
//! database (cron slots, and maintenance that must not run twice) is done
//! by the holder of the lease `leader`. Every process is a candidate: it
//! takes or renews the lease every third of its time, and acts only while
//! its lease has a margin left, so that a leader that stalls stops acting
//! before another can take over. On SQLite the process owns the database,
//! so it is always the leader; the lease is the same row on both.

use crate::maintenance::Service;
use crate::store::{JobStore, Lease, Millis};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// The lease's name.
pub const LEASE: &str = "leader";
/// How long a taken lease lasts: another process takes over within this
/// (plus a renewal interval) when the leader stops renewing it.
pub const DEFAULT_TTL: Duration = Duration::from_secs(5);

/// One process's candidacy.
pub struct Leader {
    store: Arc<dyn JobStore>,
    holder: String,
    ttl: Duration,
    lease: watch::Sender<Option<Lease>>,
}

impl Leader {
    /// A candidate named `holder` (unique among the database's processes).
    pub fn new(store: Arc<dyn JobStore>, holder: String, ttl: Duration) -> Leader {
        Leader {
            store,
            holder,
            ttl,
            lease: watch::channel(None).0,
        }
    }

    /// A holder name for this process: host, pid and a random part (a
    /// restarted process is a new candidate, in a new term).
    pub fn holder_for_this_process() -> String {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_owned())
            .ok()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "host".into());
        format!("{host}:{}:{}", std::process::id(), ulid::Ulid::generate())
    }

    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// Takes or renews the lease; answers whether this process leads now.
    /// A store error leaves the lease as it was known: it runs out on its
    /// own, and the process stops leading then.
    pub async fn run_once(&self) -> bool {
        match self
            .store
            .lease_take(LEASE, &self.holder, self.ttl_ms())
            .await
        {
            Ok(lease) => {
                if lease.is_none() && self.lease.borrow().is_some() {
                    tracing::info!(holder = %self.holder, "no longer the leader");
                } else if lease.is_some() && self.lease.borrow().is_none() {
                    tracing::info!(holder = %self.holder, "leading");
                }
                self.lease.send_replace(lease);
            }
            Err(e) => tracing::warn!(error = %e, "cannot take or renew the leader's lease"),
        }
        self.leads()
    }

    /// Whether this process may act as the leader now: it holds the lease
    /// with more than a third of its time left (a renewal is due before
    /// then; one that failed leaves the margin for the clocks' distance).
    pub fn leads(&self) -> bool {
        self.term_now().is_some()
    }

    /// The term this process leads in, if it leads now: work done for the
    /// leader can carry it, so that a later term's leader can tell.
    pub fn term_now(&self) -> Option<i64> {
        let margin = (self.ttl_ms() / 3) as Millis;
        let now = self.store.now();
        self.lease
            .borrow()
            .as_ref()
            .filter(|l| l.expires_at - margin > now)
            .map(|l| l.term)
    }

    /// Lets the lease go (the process stops), so another takes it at once.
    pub async fn resign(&self) {
        if self.lease.send_replace(None).is_some() {
            if let Err(e) = self.store.lease_drop(LEASE, &self.holder).await {
                tracing::warn!(error = %e, "cannot drop the leader's lease; it runs out on its own");
            }
        }
    }

    fn ttl_ms(&self) -> u64 {
        u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX)
    }
}

/// The candidacy as a background service: renewed every third of the
/// lease's time.
pub struct Candidacy(pub Arc<Leader>);

#[async_trait::async_trait]
impl Service for Candidacy {
    fn name(&self) -> &'static str {
        "leader"
    }

    fn interval(&self) -> Duration {
        (self.0.ttl / 3).max(Duration::from_millis(10))
    }

    async fn run_once(&self) {
        self.0.run_once().await;
    }
}

/// A service that runs only on the leader: maintenance that is safe
/// anywhere but wasted when every process of a database does it (pruning,
/// expiry), so that N processes do it once, not N times.
pub struct LeaderOnly<S> {
    pub leader: Arc<Leader>,
    pub service: S,
}

#[async_trait::async_trait]
impl<S: Service> Service for LeaderOnly<S> {
    fn name(&self) -> &'static str {
        self.service.name()
    }

    fn interval(&self) -> Duration {
        self.service.interval()
    }

    async fn run_once(&self) {
        if self.leader.leads() {
            self.service.run_once().await;
        }
    }
}
