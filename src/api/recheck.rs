//! An answer that lasts (an event stream, a wait for a run's end) looks its
//! token up again as it goes on, so that a revoke or an expiry ends it as
//! surely as it refuses a new request: at once when this process hears of
//! the revoke (it made it, or PostgreSQL's NOTIFY told it), at the expiry,
//! and otherwise within `RECHECK` + `TOKEN_TTL` (a revoke whose
//! notification was lost), under the `REACH` every server keeps.

use super::auth::{believe, Principal, TokenKey, REACH, TOKEN_TTL};
use super::error::ApiError;
use super::ApiState;
use crate::time::Millis;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// How often an answer that lasts looks its token up again when nothing
/// told it to sooner. Most look-ups are answered by this process's cache
/// (one read of the store per token per `TOKEN_TTL`, however many answers
/// share it), so this costs little, and it bounds what a lost notification
/// of a revoke can leave going on.
pub const RECHECK: Duration = Duration::from_secs(1);

const _: () = assert!(
    RECHECK.as_millis() + TOKEN_TTL.as_millis() < REACH.as_millis(),
    "a revoke heard of by no notification must still end a stream within REACH"
);

/// One answer's hold on its caller's token.
pub struct TokenWatch {
    state: Arc<ApiState>,
    key: TokenKey,
    /// The token's expiry, by the store's clock, as last looked up.
    expires_at: Option<Millis>,
    /// Rung at each forget of this process's token cache (a revoke).
    forgets: watch::Receiver<u64>,
    /// When the token is looked up again unless something comes sooner.
    next: Instant,
}

impl TokenWatch {
    /// Watches the token `who` came with. The first look-up is due at once:
    /// a revoke heard between the request's and this one is not missed (it
    /// is answered by the cache, and so costs nothing, when none was).
    pub fn new(state: Arc<ApiState>, who: &Principal) -> TokenWatch {
        let (key, expires_at) = who.token();
        TokenWatch {
            forgets: state.tokens.forgets(),
            key: key.clone(),
            expires_at,
            state,
            next: Instant::now(),
        }
    }

    /// Whether the token must be looked up again before anything more is
    /// sent: a revoke was heard of, its expiry has come, or `RECHECK` has
    /// passed since the last look-up.
    pub fn due(&self) -> bool {
        self.forgets.has_changed().unwrap_or(false)
            || Instant::now() >= self.next
            || self
                .expires_at
                .is_some_and(|at| self.state.store.now() >= at)
    }

    /// Looks the token up again as a new request would; the refusal
    /// (`UNAUTHENTICATED`) when it is no longer taken. A store that cannot
    /// answer refuses too (`UNAVAILABLE`): a token that cannot be checked
    /// is not believed, and the client resumes once the store is back.
    pub async fn check(&mut self) -> Result<(), ApiError> {
        // Marked before the look-up: a forget during it rings again.
        self.forgets.mark_unchanged();
        self.next = Instant::now() + RECHECK;
        let record = believe(&self.state, &self.key).await?;
        self.expires_at = record.expires_at;
        Ok(())
    }

    /// Waits until the token is `due` to be looked up again. Safe to drop
    /// at any point, so an answer waits for this beside what it sends.
    pub async fn wake(&mut self) {
        let mut at = self.next;
        if let Some(expiry) = self.expires_at {
            let left = expiry.saturating_sub(self.state.store.now()).max(0);
            at = at.min(Instant::now() + Duration::from_millis(left.unsigned_abs()));
        }
        tokio::select! {
            r = self.forgets.changed() => {
                if r.is_err() {
                    // The cache is gone (never while the server serves):
                    // the clock alone wakes this.
                    tokio::time::sleep_until(at).await;
                }
            }
            () = tokio::time::sleep_until(at) => {}
        }
    }

    /// Resolves with the refusal once the token is no longer taken: what
    /// an answer that waits for something else races against.
    pub async fn refused(mut self) -> ApiError {
        loop {
            self.wake().await;
            if let Err(e) = self.check().await {
                return e;
            }
        }
    }
}
