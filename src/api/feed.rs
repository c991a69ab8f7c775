//! One process's live view of the outbox: a pump reads the event rows as
//! they become readable (once, whatever the number of readers), decodes
//! them and hands them to every subscriber through a broadcast channel,
//! which never waits for a slow one: a subscriber that falls a channel's
//! length behind is told it lagged, and its stream ends (`follow`).
//!
//! A subscriber first reads what it missed from the store (from its
//! tenant's sequence number on), then goes on with the broadcast,
//! dropping what it has already seen: it subscribes before it reads, so
//! nothing falls between the two. A pump that rested (nobody listened)
//! starts again from the outbox's head, so a subscriber also waits until
//! the pump has its place before it reads: else rows written between its
//! read and the pump's start were neither read nor sent, and a follower
//! that got nothing more of its tenant's never saw them.

use crate::events::{decode, Event, EventFilter};
use crate::store::{EventRow, JobStore, StoreError};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, Notify};
use tokio_util::sync::CancellationToken;

/// Rows the broadcast keeps for subscribers that are behind.
const CHANNEL_ROWS: usize = 4096;
/// Rows read at once, by the pump and by a subscriber catching up.
const READ_ROWS: u32 = 256;
/// How often the pump looks for rows where the store gives no signal
/// (PostgreSQL, whose other processes write too).
pub const DEFAULT_POLL: Duration = Duration::from_millis(25);

/// The events of one row: one tenant's, in order.
#[derive(Debug)]
pub struct Batch {
    pub tenant: String,
    pub events: Vec<Event>,
}

pub struct Feed {
    store: Arc<dyn JobStore>,
    tx: broadcast::Sender<Arc<Batch>>,
    poll: Duration,
    /// Rung when the first subscriber comes: the pump rests without one.
    subscribed: Notify,
    started: std::sync::Once,
    /// Whether the pump has its place in the outbox (it lets go of it
    /// while nobody listens); a subscriber takes its receiver under it.
    placed: std::sync::Mutex<bool>,
    /// Rung when the pump has its place again.
    placed_again: Notify,
    /// Ends every follower (the server is stopping).
    closed: CancellationToken,
}

impl Feed {
    pub fn new(store: Arc<dyn JobStore>, poll: Duration) -> Arc<Feed> {
        let (tx, _) = broadcast::channel(CHANNEL_ROWS);
        Arc::new(Feed {
            store,
            tx,
            poll,
            subscribed: Notify::new(),
            started: std::sync::Once::new(),
            placed: std::sync::Mutex::new(false),
            placed_again: Notify::new(),
            closed: CancellationToken::new(),
        })
    }

    /// Ends every follower and the pump.
    pub fn close(&self) {
        self.closed.cancel();
    }

    pub fn store(&self) -> &Arc<dyn JobStore> {
        &self.store
    }

    fn placed(&self) -> std::sync::MutexGuard<'_, bool> {
        self.placed.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A receiver of every row the pump reads from now on; starts the
    /// pump the first time. Answers once the pump has its place: every
    /// row after it comes to the receiver, and every row up to it is in
    /// the store for a reader that reads after this.
    pub async fn subscribe(self: &Arc<Self>) -> broadcast::Receiver<Arc<Batch>> {
        let (rx, placed) = {
            let placed = self.placed();
            (self.tx.subscribe(), *placed)
        };
        self.started.call_once(|| {
            tokio::spawn(pump(Arc::downgrade(self)));
        });
        self.subscribed.notify_one();
        if !placed {
            loop {
                let again = self.placed_again.notified();
                tokio::pin!(again);
                again.as_mut().enable();
                if *self.placed() {
                    break;
                }
                tokio::select! {
                    () = again => {}
                    () = self.closed.cancelled() => break,
                }
            }
        }
        rx
    }
}

/// Reads rows as they become readable and broadcasts them, while anyone
/// listens; ends when the feed is dropped.
async fn pump(feed: Weak<Feed>) {
    let mut cursor: Option<i64> = None;
    loop {
        let Some(f) = feed.upgrade() else { return };
        if f.closed.is_cancelled() {
            return;
        }
        let idle = {
            let mut placed = f.placed();
            let idle = f.tx.receiver_count() == 0;
            if idle {
                *placed = false;
            }
            idle
        };
        if idle {
            // Nobody listens: what is written meanwhile is read from the
            // store by whoever comes next.
            cursor = None;
            tokio::select! {
                () = f.subscribed.notified() => {}
                () = tokio::time::sleep(Duration::from_secs(5)) => {}
            }
            // Letting go of the feed between rests, so that a dropped feed
            // ends the pump at its next wake-up.
            drop(f);
            continue;
        }
        let signal = f.store.event_signal();
        let mut signal = signal;
        if let Some(s) = &mut signal {
            s.mark_unchanged();
        }
        let got = match step(&f, &mut cursor).await {
            Ok(n) => n,
            Err(e) => {
                tracing::warn!(error = %e, "the event feed cannot read the outbox; trying again");
                0
            }
        };
        if got == READ_ROWS as usize {
            continue;
        }
        let poll = f.poll;
        drop(f);
        match &mut signal {
            Some(s) => {
                tokio::select! {
                    _ = s.changed() => {}
                    () = tokio::time::sleep(Duration::from_secs(1)) => {}
                }
            }
            None => tokio::time::sleep(poll).await,
        }
    }
}

/// Reads and broadcasts the rows after `cursor`; answers how many.
async fn step(f: &Feed, cursor: &mut Option<i64>) -> Result<usize, StoreError> {
    f.store.event_sequence().await?;
    let after = match *cursor {
        Some(c) => c,
        None => {
            let head = f.store.event_heads(None).await?.gseq;
            *f.placed() = true;
            f.placed_again.notify_waiters();
            head
        }
    };
    *cursor = Some(after);
    let rows = f.store.event_read(after, READ_ROWS).await?;
    for r in &rows {
        *cursor = Some(r.gseq);
        match decode(std::slice::from_ref(r)) {
            Ok(events) => {
                let _ = f.tx.send(Arc::new(Batch {
                    tenant: r.tenant.clone(),
                    events,
                }));
            }
            Err(e) => tracing::error!(gseq = r.gseq, error = %e, "an event row is unreadable"),
        }
    }
    Ok(rows.len())
}

/// What a follower is sent: its events in order, then maybe why it ended.
#[derive(Debug)]
pub enum Item {
    Event(Event),
    /// The tenant's events before `first` were pruned: the follower asked
    /// for some of them.
    Gap {
        after: u64,
        first: u64,
    },
    /// The follower read too slowly and is dropped; `last` is the last
    /// sequence number it was sent, to resume from.
    Dropped {
        last: u64,
    },
    /// An event of a follower of every tenant's: whose it is.
    Across {
        tenant: String,
        event: Event,
    },
    /// A follower of every tenant's read too slowly and is dropped.
    DroppedAcross,
}

/// Follows a tenant's events after its sequence number `after` (a stream
/// from now reads the tenant's head before it answers, so that nothing
/// written after it answered is missed), filtered: sends them, in order,
/// to `out` until the receiver is gone, or the follower is too slow for
/// `out`'s room or the broadcast, when it sends `Dropped` and ends.
pub async fn follow(
    feed: Arc<Feed>,
    tenant: String,
    after: u64,
    filter: EventFilter,
    out: mpsc::Sender<Item>,
) -> Result<(), StoreError> {
    let mut live = feed.subscribe().await;
    let store = feed.store().clone();
    let closed = feed.closed.clone();
    store.event_sequence().await?;
    let heads = store.event_heads(Some(&tenant)).await?;
    let mut last = after;
    if heads.first > last + 1 && heads.seq >= heads.first {
        let gap = Item::Gap {
            after: last,
            first: heads.first,
        };
        if out.send(gap).await.is_err() {
            return Ok(());
        }
        last = heads.first - 1;
    }
    let sender = Sender { out, filter };
    // What was written before the subscription, from the store.
    if !catch_up(&*store, &tenant, &mut last, &sender).await? {
        return Ok(());
    }
    loop {
        let batch = tokio::select! {
            r = live.recv() => match r {
                Ok(b) => b,
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    sender.drop_slow(last).await;
                    return Ok(());
                }
                Err(broadcast::error::RecvError::Closed) => return Ok(()),
            },
            // The client went away while nothing came.
            () = sender.out.closed() => return Ok(()),
            () = closed.cancelled() => return Ok(()),
        };
        if batch.tenant != tenant {
            continue;
        }
        let (Some(first), Some(end)) = (batch.events.first(), batch.events.last()) else {
            continue;
        };
        if end.seq <= last {
            continue;
        }
        if first.seq > last + 1 {
            // Rows the pump sent before this follower subscribed, or that
            // it has not sent yet: read them from the store.
            if !catch_up(&*store, &tenant, &mut last, &sender).await? {
                return Ok(());
            }
        }
        for e in &batch.events {
            if e.seq <= last {
                continue;
            }
            last = e.seq;
            match sender.send(e) {
                Sent::Ok => {}
                Sent::Gone => return Ok(()),
                Sent::Full => {
                    sender.drop_slow(last - 1).await;
                    return Ok(());
                }
            }
        }
    }
}

/// Follows every tenant's events from the subscription `live` on (the
/// admin's view across tenants), filtered, until the receiver is gone or
/// too slow. Each tenant numbers its own events, so such a stream has no
/// one place to resume from: nothing is read from the store, and a
/// follower that falls behind is dropped (`DroppedAcross`).
pub async fn follow_every(
    feed: Arc<Feed>,
    mut live: broadcast::Receiver<Arc<Batch>>,
    filter: EventFilter,
    out: mpsc::Sender<Item>,
) {
    let closed = feed.closed.clone();
    let sender = Sender { out, filter };
    loop {
        let batch = tokio::select! {
            r = live.recv() => match r {
                Ok(b) => b,
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    sender.give_up(|| Item::DroppedAcross).await;
                    return;
                }
                Err(broadcast::error::RecvError::Closed) => return,
            },
            () = sender.out.closed() => return,
            () = closed.cancelled() => return,
        };
        for e in &batch.events {
            let item = || Item::Across {
                tenant: batch.tenant.clone(),
                event: e.clone(),
            };
            match sender.send_as(e, item) {
                Sent::Ok => {}
                Sent::Gone => return,
                Sent::Full => {
                    sender.give_up(|| Item::DroppedAcross).await;
                    return;
                }
            }
        }
    }
}

enum Sent {
    Ok,
    Gone,
    Full,
}

struct Sender {
    out: mpsc::Sender<Item>,
    filter: EventFilter,
}

impl Sender {
    /// Sends the event if the filter wants it, without waiting for room:
    /// a follower whose client does not read is dropped, not waited for.
    fn send(&self, e: &Event) -> Sent {
        self.send_as(e, || Item::Event(e.clone()))
    }

    /// Sends `item` if the filter wants its event `e`, as `send` does.
    fn send_as(&self, e: &Event, item: impl FnOnce() -> Item) -> Sent {
        if !self.filter.matches(e) {
            return Sent::Ok;
        }
        // The last place is kept for the `Dropped` that ends a slow one.
        if self.out.capacity() <= 1 {
            return if self.out.is_closed() {
                Sent::Gone
            } else {
                Sent::Full
            };
        }
        match self.out.try_send(item()) {
            Ok(()) => Sent::Ok,
            Err(mpsc::error::TrySendError::Full(_)) => Sent::Full,
            Err(mpsc::error::TrySendError::Closed(_)) => Sent::Gone,
        }
    }

    /// Tells the follower it is dropped, in the place kept for it (or, if
    /// a lag of the broadcast came first, when there is room, for a while).
    async fn drop_slow(&self, last: u64) {
        self.give_up(|| Item::Dropped { last }).await;
    }

    /// Sends the follower its last item, `why` it is dropped, as
    /// `drop_slow` does.
    async fn give_up(&self, why: impl Fn() -> Item) {
        if self.out.try_send(why()).is_err() {
            let _ = tokio::time::timeout(Duration::from_secs(30), self.out.send(why())).await;
        }
    }
}

/// Sends the tenant's events after `last` that the store has; `false`
/// when the follower is gone or dropped.
async fn catch_up(
    store: &dyn JobStore,
    tenant: &str,
    last: &mut u64,
    sender: &Sender,
) -> Result<bool, StoreError> {
    loop {
        let rows: Vec<EventRow> = store.event_read_tenant(tenant, *last, READ_ROWS).await?;
        for r in &rows {
            let events = decode(std::slice::from_ref(r)).map_err(StoreError::Internal)?;
            for e in &events {
                if e.seq <= *last {
                    continue;
                }
                *last = e.seq;
                match sender.send(e) {
                    Sent::Ok => {}
                    Sent::Gone => return Ok(false),
                    Sent::Full => {
                        // Catching up, the reader sets the pace: wait for room.
                        if sender.out.send(Item::Event(e.clone())).await.is_err() {
                            return Ok(false);
                        }
                    }
                }
            }
        }
        if rows.len() < READ_ROWS as usize {
            return Ok(true);
        }
    }
}
