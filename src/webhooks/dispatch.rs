//! The dispatcher: reads the outbox after its cursor and records a
//! delivery for each event and each of its tenant's webhooks that wants
//! it (made no later than the event), moving the cursor in the same
//! transaction; another process's dispatcher that moved it first wins, and
//! this one reads again from there.

use super::Hooks;
use crate::event_view::EventView;
use crate::events::decode;
use crate::maintenance::Service;
use crate::store::{JobStore, NewDelivery, StoreResult};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// The dispatcher's cursor in the store.
pub const CURSOR: &str = "webhooks";
/// Event rows read at once.
const READ_ROWS: u32 = 512;
/// Most reads in one round, so that a long backlog does not hold the round.
const MAX_READS: usize = 64;
/// How often the dispatcher looks, where the store gives no signal.
pub const INTERVAL: Duration = Duration::from_millis(50);

pub struct Dispatcher {
    store: Arc<dyn JobStore>,
    hooks: Arc<Hooks>,
    /// Rung when deliveries were made: the sender looks.
    made: Arc<Notify>,
}

impl Dispatcher {
    pub fn new(store: Arc<dyn JobStore>, hooks: Arc<Hooks>, made: Arc<Notify>) -> Dispatcher {
        Dispatcher { store, hooks, made }
    }

    /// Makes the deliveries of what the outbox holds after the cursor;
    /// answers how many.
    pub async fn dispatch(&self) -> StoreResult<u64> {
        let mut made = 0u64;
        for _ in 0..MAX_READS {
            self.store.event_sequence().await?;
            let from = self.store.event_cursor(CURSOR).await?;
            let head = self.store.event_heads(None).await?.gseq;
            // Read after the head, uncached: a webhook made after this read
            // was made after every event up to the head.
            let hooks = self.hooks.fresh().await?;
            let Some(after) = from else {
                // The first round starts at the outbox's end: a webhook
                // gets the events from when it was made.
                self.store
                    .delivery_insert(CURSOR, None, head, Vec::new())
                    .await?;
                continue;
            };
            if hooks.is_empty() {
                // No one to deliver to: skip what was written, unread.
                if head > after {
                    self.store
                        .delivery_insert(CURSOR, Some(after), head, Vec::new())
                        .await?;
                }
                break;
            }
            let rows = self.store.event_read(after, READ_ROWS).await?;
            let Some(last) = rows.last().map(|r| r.gseq) else {
                break;
            };
            let mut deliveries = Vec::new();
            for r in rows.iter() {
                let Some(wanting) = hooks.get(&r.tenant) else {
                    continue;
                };
                // Most rows hold no type its webhooks want (a claim's rows
                // hold only `started`): passed over without parsing them.
                if !wanting.iter().any(|w| mentions_any(&r.body, &w.events)) {
                    continue;
                }
                let events = match decode(std::slice::from_ref(r)) {
                    Ok(e) => e,
                    Err(e) => {
                        tracing::error!(gseq = r.gseq, error = %e, "an event row is unreadable; its events are not delivered");
                        continue;
                    }
                };
                for e in &events {
                    let mut body = None;
                    for w in wanting {
                        if !w.events.contains(&e.kind) || e.at < w.created_at {
                            continue;
                        }
                        let body = body.get_or_insert_with(|| {
                            serde_json::to_string(&EventView::of(e)).unwrap_or_default()
                        });
                        deliveries.push(NewDelivery {
                            webhook: w.id.clone(),
                            tenant: r.tenant.clone(),
                            seq: e.seq,
                            kind: e.kind,
                            body: body.clone(),
                        });
                    }
                }
            }
            let n = deliveries.len() as u64;
            if self
                .store
                .delivery_insert(CURSOR, Some(after), last, deliveries)
                .await?
            {
                made += n;
            }
            if rows.len() < READ_ROWS as usize {
                break;
            }
        }
        if made > 0 {
            self.made.notify_one();
        }
        Ok(made)
    }
}

/// Whether an event row's body may hold an event of one of `types`: it
/// names the type as a JSON string (`"completed"`). A job, task or queue
/// of that name makes it parse the row for nothing, never miss one.
fn mentions_any(body: &str, types: &[crate::events::EventType]) -> bool {
    types.iter().any(|t| {
        let short = t.short();
        body.match_indices(short)
            .any(|(i, _)| body[..i].ends_with('"') && body[i + short.len()..].starts_with('"'))
    })
}

#[async_trait::async_trait]
impl Service for Dispatcher {
    fn name(&self) -> &'static str {
        "webhook dispatcher"
    }

    fn interval(&self) -> Duration {
        INTERVAL
    }

    async fn run_once(&self) {
        match self.dispatch().await {
            Ok(0) => {}
            Ok(n) => tracing::debug!(deliveries = n, "webhook deliveries made"),
            Err(e) => tracing::warn!(error = %e, "the webhook dispatcher cannot read the outbox"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventType;

    #[test]
    fn a_row_is_parsed_only_when_it_may_hold_a_wanted_type() {
        let claim = r#"[["started", "j1", "t", "q", 1, null]]"#;
        assert!(!mentions_any(
            claim,
            &[EventType::Completed, EventType::Failed]
        ));
        assert!(mentions_any(claim, &[EventType::Started]));
        // A queue named as a type costs a parse, not a miss.
        let odd = r#"[["queued","j1","t","completed",0,null]]"#;
        assert!(mentions_any(odd, &[EventType::Completed]));
        // Part of a longer word is not the type.
        let word = r#"[["queued","j1","uncompleted","q",0,null]]"#;
        assert!(!mentions_any(word, &[EventType::Completed]));
    }
}
