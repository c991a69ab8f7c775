//! Work whose cost a tenant decides (a costly schema check, a compile),
//! shared in turn between tenants: one at a time per tenant, a few at a
//! time in all. A tenant takes its own lane first and only then a place in
//! the shared line, which is first come first served: so each tenant has
//! at most one request in that line, and tenants are served in turn however
//! many requests one of them sends; a tenant whose work is costly waits
//! behind itself, not others behind it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Tenants whose lanes are remembered; idle lanes are dropped past it.
const MAX_LANES: usize = 10_000;

/// Why no place was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LaneError {
    #[error("no place came free in time")]
    TimedOut,
    #[error("the server is stopping")]
    Closed,
}

pub struct Lanes {
    shared: Arc<Semaphore>,
    tenants: Mutex<HashMap<String, Arc<Semaphore>>>,
}

/// A tenant's lane and a shared place, held together until dropped.
pub struct Place {
    _own: OwnedSemaphorePermit,
    _shared: OwnedSemaphorePermit,
}

impl Lanes {
    /// Lanes with `places` shared places (at least one).
    pub fn new(places: usize) -> Self {
        Lanes {
            shared: Arc::new(Semaphore::new(places.max(1))),
            tenants: Mutex::new(HashMap::new()),
        }
    }

    fn tenant(&self, tenant: &str) -> Arc<Semaphore> {
        let mut lanes = self.tenants.lock().unwrap_or_else(|p| p.into_inner());
        if lanes.len() >= MAX_LANES && !lanes.contains_key(tenant) {
            lanes.retain(|_, s| Arc::strong_count(s) > 1);
        }
        lanes
            .entry(tenant.to_owned())
            .or_insert_with(|| Arc::new(Semaphore::new(1)))
            .clone()
    }

    /// The tenant's lane, then a shared place, both within `wait` (`None`:
    /// as long as it takes).
    pub async fn enter(&self, tenant: &str, wait: Option<Duration>) -> Result<Place, LaneError> {
        let own = self.tenant(tenant);
        let take = async {
            let own = own.acquire_owned().await.map_err(|_| LaneError::Closed)?;
            let shared = self
                .shared
                .clone()
                .acquire_owned()
                .await
                .map_err(|_| LaneError::Closed)?;
            Ok(Place {
                _own: own,
                _shared: shared,
            })
        };
        match wait {
            Some(w) => tokio::time::timeout(w, take)
                .await
                .unwrap_or(Err(LaneError::TimedOut)),
            None => take.await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One tenant's second request waits for its first; another tenant's
    /// takes the other place at once.
    #[tokio::test]
    async fn a_tenant_waits_behind_itself_not_others_behind_it() {
        let lanes = Lanes::new(2);
        let busy = lanes.enter("a", None).await.unwrap();
        let short = Some(Duration::from_millis(50));
        assert_eq!(
            lanes.enter("a", short).await.err(),
            Some(LaneError::TimedOut)
        );
        let other = lanes.enter("b", short).await;
        assert!(other.is_ok());
        // Both places held: a third tenant waits for one.
        assert_eq!(
            lanes.enter("c", short).await.err(),
            Some(LaneError::TimedOut)
        );
        drop(busy);
        assert!(lanes.enter("c", short).await.is_ok());
    }
}
