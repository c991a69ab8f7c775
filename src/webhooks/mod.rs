//! Webhooks: a tenant's events, signed, POSTed to its endpoints.
//!
//! The dispatcher (`dispatch.rs`) reads the outbox in order and makes one
//! delivery row per event and webhook that wants it, in the same
//! transaction that moves its cursor, so each event becomes deliveries
//! once. The sender (`send.rs`) takes due deliveries and sends them, each
//! on a task of its own, a few per endpoint at once and a fair share of
//! the slots per tenant (`share.rs`), with a timeout, and
//! tries a failed one again after a backoff that doubles, for a day; then
//! it is dead, and listed as such. Neither ever waits for the runners, nor
//! they for it: a slow endpoint holds its own deliveries back, nothing else.

pub mod dispatch;
pub mod guard;
pub mod send;
pub mod share;
pub mod sign;

use crate::store::{JobStore, StoreResult, WebhookRecord};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How webhooks are delivered; the defaults are a day of retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebhookConfig {
    /// Deliveries may go to loopback, link-local and private addresses.
    pub allow_private: bool,
    /// Longest a try waits for the endpoint's answer.
    pub timeout: Duration,
    /// The wait after the first failed try; each next one doubles.
    pub backoff_ms: u64,
    /// Longest wait between two tries.
    pub max_backoff_ms: u64,
    /// A delivery still failing this long after it was made is dead.
    pub give_up_ms: u64,
    /// Tries in flight at once, in all.
    pub concurrency: u32,
    /// Tries in flight at once to one webhook.
    pub per_webhook: u32,
    /// Tries in flight at once for one tenant's webhooks, at most; fewer
    /// when more tenants have deliveries due (`concurrency` shared evenly).
    pub per_tenant: u32,
    /// Tries beyond `concurrency`, one per tenant that has none in flight
    /// when the shared ones are all taken.
    pub spare: u32,
}

impl Default for WebhookConfig {
    fn default() -> Self {
        WebhookConfig {
            allow_private: false,
            timeout: Duration::from_secs(10),
            backoff_ms: 10_000,
            max_backoff_ms: 3_600_000,
            give_up_ms: 24 * 3_600_000,
            concurrency: 256,
            per_webhook: 8,
            per_tenant: 64,
            spare: 64,
        }
    }
}

impl WebhookConfig {
    /// The wait before try `n + 1` after `n` failed ones, without jitter.
    pub fn backoff(&self, failed: u32) -> u64 {
        let doubled = self
            .backoff_ms
            .saturating_mul(1u64 << failed.saturating_sub(1).min(40));
        doubled.min(self.max_backoff_ms).max(1)
    }
}

/// Each tenant's webhooks.
pub type ByTenant = Arc<HashMap<String, Vec<WebhookRecord>>>;

/// Every webhook, by tenant, read again at most once a second (another
/// process may add or delete one; this one's own changes clear it).
pub struct Hooks {
    store: Arc<dyn JobStore>,
    cached: Mutex<Option<(Instant, ByTenant)>>,
}

const HOOKS_FRESH_FOR: Duration = Duration::from_secs(1);

impl Hooks {
    pub fn new(store: Arc<dyn JobStore>) -> Arc<Hooks> {
        Arc::new(Hooks {
            store,
            cached: Mutex::new(None),
        })
    }

    /// Forgets what was read: a webhook was added or deleted here.
    pub fn changed(&self) {
        *self.cached.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    pub async fn by_tenant(&self) -> StoreResult<ByTenant> {
        if let Some((at, hooks)) = &*self.cached.lock().unwrap_or_else(|p| p.into_inner()) {
            if at.elapsed() < HOOKS_FRESH_FOR {
                return Ok(hooks.clone());
            }
        }
        self.fresh().await
    }

    /// Every webhook as the store has it now.
    pub async fn fresh(&self) -> StoreResult<ByTenant> {
        let mut by: HashMap<String, Vec<WebhookRecord>> = HashMap::new();
        for w in self.store.webhook_list(None).await? {
            by.entry(w.tenant.clone()).or_default().push(w);
        }
        let by = Arc::new(by);
        *self.cached.lock().unwrap_or_else(|p| p.into_inner()) = Some((Instant::now(), by.clone()));
        Ok(by)
    }

    /// Each webhook's tenant, by webhook id, from what was read.
    pub async fn owners(&self) -> StoreResult<HashMap<String, String>> {
        Ok(self
            .by_tenant()
            .await?
            .iter()
            .flat_map(|(t, ws)| ws.iter().map(move |w| (w.id.clone(), t.clone())))
            .collect())
    }

    /// A webhook by id, from what was read, or read again when it is not
    /// there (another process made it since).
    pub async fn get(&self, id: &str) -> StoreResult<Option<WebhookRecord>> {
        let find = |by: &HashMap<String, Vec<WebhookRecord>>| {
            by.values().flatten().find(|w| w.id == id).cloned()
        };
        if let Some(w) = find(&*self.by_tenant().await?) {
            return Ok(Some(w));
        }
        Ok(find(&*self.fresh().await?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_its_ceiling() {
        let c = WebhookConfig::default();
        assert_eq!(c.backoff(1), 10_000);
        assert_eq!(c.backoff(2), 20_000);
        assert_eq!(c.backoff(3), 40_000);
        assert_eq!(c.backoff(30), 3_600_000);
        assert_eq!(c.backoff(u32::MAX), 3_600_000);
    }
}
