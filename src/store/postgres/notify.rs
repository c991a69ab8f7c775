//! Wake-ups between processes: LISTEN on one connection, and NOTIFY sent
//! after commits, batched. A NOTIFY takes a database-wide lock when its
//! transaction commits, so this process sends at most one per
//! `NOTIFY_EVERY` for however many jobs it enqueued or ended, outside any
//! transaction of its jobs. A lost notification costs at most the runner's
//! poll interval.
//!
//! Two channels carry an id, sent in the transaction of what they report:
//! `CANCEL` a running job's, `TOKENS` a revoked token's.
//!
//! A process does not wake itself through the database: its own runner
//! already heard of what it enqueued or ended (as on SQLite, which has no
//! NOTIFY), and an echo only woke its claim loop for nothing. Each NOTIFY
//! on `JOBS` carries its process's token, and a listener drops those with
//! its own.

use crate::store::Signal;
use sqlx::postgres::PgListener;
use sqlx::PgPool;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, Notify};
use tokio::task::JoinHandle;

/// The channel that says jobs may be claimable.
pub const JOBS: &str = "taskbox_jobs";
/// The channel that carries the id of a running job whose cancel was asked.
pub const CANCEL: &str = crate::store::job_control::CANCEL_CHANNEL;
/// The channel that carries the id of a token just revoked, so that every
/// process forgets it at once (its cache's TTL bounds a lost one).
pub const TOKENS: &str = crate::store::tokens::REVOKED_CHANNEL;
/// Shortest time between two of this process's NOTIFYs on `JOBS`.
const NOTIFY_EVERY: Duration = Duration::from_millis(2);
/// Signals kept for a slow receiver before it misses some (it then looks
/// anyway: a lagged receiver is told `Jobs`).
const BACKLOG: usize = 1024;

/// The listening and notifying tasks of one store.
pub struct Notifier {
    /// Asks the sender task for a NOTIFY on `JOBS`.
    poke: Arc<Notify>,
    signals: broadcast::Sender<Signal>,
    tasks: std::sync::Mutex<Vec<JoinHandle<()>>>,
}

impl Notifier {
    pub fn start(pool: PgPool) -> Notifier {
        let poke = Arc::new(Notify::new());
        let (signals, _) = broadcast::channel(BACKLOG);
        let ours: Arc<str> = crate::store::transition::random_token().into();
        let sender = {
            let (pool, poke, ours) = (pool.clone(), poke.clone(), ours.clone());
            tokio::spawn(async move {
                loop {
                    poke.notified().await;
                    if let Err(e) = sqlx::query("SELECT pg_notify($1, $2)")
                        .bind(JOBS)
                        .bind(&*ours)
                        .execute(&pool)
                        .await
                    {
                        tracing::debug!(error = %e, "a wake-up NOTIFY failed; runners will poll");
                    }
                    // Pokes meanwhile are one permit: one NOTIFY after this.
                    tokio::time::sleep(NOTIFY_EVERY).await;
                }
            })
        };
        let listener = {
            let signals = signals.clone();
            tokio::spawn(listen(pool, signals, ours))
        };
        Notifier {
            poke,
            signals,
            tasks: std::sync::Mutex::new(vec![sender, listener]),
        }
    }

    /// Tells the other processes, soon and batched, that jobs may be
    /// claimable.
    pub fn poke(&self) {
        self.poke.notify_one();
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Signal> {
        self.signals.subscribe()
    }

    pub fn stop(&self) {
        let mut tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        for t in tasks.drain(..) {
            t.abort();
        }
    }
}

impl Drop for Notifier {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Listens until aborted, reconnecting with a jittered backoff.
async fn listen(pool: PgPool, signals: broadcast::Sender<Signal>, ours: Arc<str>) {
    let mut backoff = Duration::from_millis(100);
    loop {
        let mut listener = match PgListener::connect_with(&pool).await {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(error = %e, "cannot LISTEN for wake-ups; retrying");
                tokio::time::sleep(jittered(backoff)).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
                continue;
            }
        };
        if let Err(e) = listener.listen_all([JOBS, CANCEL, TOKENS]).await {
            tracing::warn!(error = %e, "cannot LISTEN for wake-ups; retrying");
            tokio::time::sleep(jittered(backoff)).await;
            backoff = (backoff * 2).min(Duration::from_secs(5));
            continue;
        }
        backoff = Duration::from_millis(100);
        // Whatever was sent while this was not listening is lost: look.
        let _ = signals.send(Signal::Jobs);
        loop {
            match listener.try_recv().await {
                Ok(Some(n)) => {
                    let signal = match n.channel() {
                        CANCEL => Signal::Cancel(n.payload().to_owned()),
                        TOKENS => Signal::TokenRevoked(n.payload().to_owned()),
                        _ if n.payload() == &*ours => continue,
                        _ => Signal::Jobs,
                    };
                    let _ = signals.send(signal);
                }
                // The connection was lost; the listener reconnects on the
                // next call, and what was sent meanwhile is lost.
                Ok(None) => {
                    let _ = signals.send(Signal::Jobs);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the wake-up listener failed; reconnecting");
                    tokio::time::sleep(jittered(backoff)).await;
                    break;
                }
            }
        }
    }
}

/// `d` give or take a quarter, so that many processes that lost the
/// database together do not come back in step.
fn jittered(d: Duration) -> Duration {
    let mut b = [0u8; 2];
    let r = getrandom::fill(&mut b).map_or(0.5, |()| f64::from(u16::from_le_bytes(b)) / 65535.0);
    d.mul_f64(0.75 + r / 2.0)
}
