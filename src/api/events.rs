//! `GET /v1/events`: the tenant's job events as server-sent events, each
//! `id: <seq>`, `event: <type>`, `data: <the event's JSON>`. Resumable: a
//! client that reconnects with `Last-Event-ID` (or `?after=`) gets every
//! event after it, from the store, across restarts of the server. A client
//! that reads too slowly gets a last event, `dropped`, naming where to
//! resume, and is cut off: it never holds the queue back. The token is
//! looked up again as the stream goes on (`recheck`): once it is revoked or
//! expired the stream sends a last event, `error`, and ends.

use super::auth::Principal;
use super::body::QueryParams;
use super::error::ApiError;
use super::event_view::{EventJob, EventView};
use super::feed::{follow, follow_every, Item};
use super::openapi::Errors;
use super::recheck::TokenWatch;
use super::stream_notice::{Dropped, Gap, Refused};
use super::ApiState;
use crate::events::{EventFilter, EventType};
use crate::quota::Exceeded;
use crate::store::Scope;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event as Sse, KeepAlive};
use axum::response::{IntoResponse, Response};
use futures_util::stream::Stream;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use utoipa::{IntoParams, ToSchema};

/// Events a stream holds for a client before it is dropped as too slow.
const STREAM_ROOM: usize = 1024;

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    job: Option<String>,
    task: Option<String>,
    queue: Option<String>,
    /// Event types, comma-separated (`job.completed,job.failed`).
    #[serde(rename = "type")]
    types: Option<String>,
    /// Resume after this sequence number (as `Last-Event-ID`, which wins).
    after: Option<u64>,
    /// With `Accept: application/json`: most events in the page.
    #[param(maximum = 1000)]
    limit: Option<u32>,
    /// A stream of every tenant's events from now on, each naming its
    /// tenant and with no `id:` (each tenant numbers its own, so it cannot
    /// be resumed): the admin token's alone.
    all_tenants: Option<bool>,
}

/// The key every-tenant streams share in `Streams` (no tenant is named
/// so: a name has no space).
const EVERY_TENANT: &str = "every tenant";

/// Most events in one JSON page.
const MAX_PAGE: u32 = 1000;
const DEFAULT_PAGE: u32 = 100;

/// Each tenant's open streams, bounded.
pub struct Streams {
    max: u32,
    open: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl Streams {
    pub fn new(max: u32) -> Streams {
        Streams {
            max,
            open: Mutex::new(HashMap::new()),
        }
    }

    fn take(&self, tenant: &str) -> Result<OwnedSemaphorePermit, ApiError> {
        let sem = {
            let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
            // Forget tenants with no stream open, so the map stays small.
            if open.len() > 1024 {
                let max = self.max as usize;
                open.retain(|_, s| s.available_permits() < max);
            }
            open.entry(tenant.to_owned())
                .or_insert_with(|| Arc::new(Semaphore::new(self.max as usize)))
                .clone()
        };
        sem.try_acquire_owned().map_err(|_| {
            ApiError::QuotaExceeded(Exceeded {
                quota: "event_streams",
                limit: u64::from(self.max),
            })
        })
    }
}

fn types(list: &str) -> Result<Vec<EventType>, ApiError> {
    list.split(',')
        .map(|t| t.trim().parse::<EventType>().map_err(ApiError::BadRequest))
        .collect()
}

fn last_event_id(headers: &HeaderMap) -> Result<Option<u64>, ApiError> {
    let Some(v) = headers.get("last-event-id") else {
        return Ok(None);
    };
    let text = v.to_str().unwrap_or("").trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.parse::<u64>().map(Some).map_err(|_| {
        ApiError::BadRequest(format!(
            "Last-Event-ID must be an event's sequence number (the id: of an event this stream sent), not {:?}",
            crate::text::bounded(text, 64)
        ))
    })
}

/// One event: these fields, and what its type adds (`error`,
/// `will_retry`, `run_at`, `reason`, `step`, …).
// The spec's summary of `EventView`, which is what is written: it names
// the fields every event has, as the generated clients know them.
#[derive(ToSchema)]
#[schema(as = Event)]
#[allow(dead_code)]
struct EventShape {
    /// The tenant's sequence number: 1, 2, 3, … for every reader.
    seq: u64,
    #[schema(rename = "type")]
    kind: EventType,
    at: String,
    job: EventJob,
    /// The job's attempts so far.
    attempt: u32,
}

/// One server-sent event of the stream.
#[derive(ToSchema)]
#[allow(dead_code)]
struct StreamFrame {
    /// The event's sequence number (for `Last-Event-ID`); none on `gap`,
    /// `dropped` and `error`.
    id: Option<String>,
    /// The event's type (`job.completed`, …), or `gap` (events were pruned
    /// before this reader read them), `dropped` (the reader was too slow
    /// and is disconnected) or `error` (the stream's token was revoked or
    /// expired, or could not be checked, and the stream ends).
    event: String,
    /// The `Event` as JSON; for `gap` and `dropped` a notice saying what
    /// was lost and where to go on from; for `error` the API's error shape
    /// (`{"error": {code, message, details}}`, `UNAUTHENTICATED` for a
    /// revoked or expired token) and, on a tenant's stream, `last_seq`.
    #[schema(content_media_type = "application/json")]
    data: String,
}

/// A page of events.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct EventPage {
    #[schema(value_type = Vec<EventShape>)]
    pub events: Vec<EventView>,
    /// Where the next page starts (`after`), past events the filter left
    /// out too.
    pub next_after: u64,
    /// The tenant's last event now.
    pub head: u64,
}

/// The tenant's job events: a stream of server-sent events (`id:` is the
/// sequence number, `event:` the type; `gap` and `dropped` say what was
/// lost), or with `Accept: application/json` a page of them. Needs
/// `jobs:read`. The stream's token is checked as it goes on: within 5 s of
/// its revoke (on any server of the database) or at its expiry, the stream
/// sends a last event, `error` (`UNAUTHENTICATED`), and ends.
#[utoipa::path(get, path = "/v1/events", tag = "events",
    params(EventsQuery, ("Last-Event-ID" = Option<String>, Header, description = "Resume the stream after this event")),
    responses(
        (status = 200, description = "The stream, or a page with `Accept: application/json`",
            content(
                (StreamFrame = "text/event-stream"),
                (EventPage = "application/json"),
            )),
        Errors
    ))]
pub async fn stream(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    headers: HeaderMap,
    QueryParams(q): QueryParams<EventsQuery>,
) -> Result<Response, ApiError> {
    who.require(Scope::JobsRead)?;
    let filter = EventFilter {
        job: q.job,
        task: q.task,
        queue: q.queue,
        types: q.types.as_deref().map(types).transpose()?,
    };
    if who.listing(q.all_tenants)?.is_none() {
        let token = TokenWatch::new(state.clone(), &who);
        return every_tenant(&state, &headers, (q.after, q.limit), filter, token).await;
    }
    if wants_json(&headers) {
        return page(&state, &who.tenant, q.after.unwrap_or(0), q.limit, &filter).await;
    }
    if q.limit.is_some() {
        return Err(ApiError::BadRequest(
            "limit is for a page of events (Accept: application/json); a stream has none".into(),
        ));
    }
    let from = match last_event_id(&headers)?.or(q.after) {
        Some(s) => s,
        // Read before the answer, not by the follower once it runs: a
        // client that enqueues once the stream is open sees all of that
        // job's events (the follower read its start after them now and
        // then, and sent only the job's end).
        None => state.store.event_heads(Some(&who.tenant)).await?.seq,
    };
    let permit = state.streams.take(&who.tenant)?;
    let (tx, rx) = mpsc::channel(STREAM_ROOM);
    let feed = state.feed.clone();
    let tenant = who.tenant.clone();
    tokio::spawn(async move {
        if let Err(e) = follow(feed, tenant, from, filter, tx).await {
            tracing::warn!(error = %e, "an event stream ended on a store error");
        }
    });
    let out = Out::new(rx, permit, TokenWatch::new(state.clone(), &who), Some(from));
    Ok(axum::response::Sse::new(sse(out))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response())
}

/// The admin's stream of every tenant's events from now on.
async fn every_tenant(
    state: &ApiState,
    headers: &HeaderMap,
    (after, limit): (Option<u64>, Option<u32>),
    filter: EventFilter,
    token: TokenWatch,
) -> Result<Response, ApiError> {
    if wants_json(headers) || limit.is_some() {
        return Err(ApiError::BadRequest(
            "all_tenants is for the live stream: a page of events is one tenant's (each tenant \
             numbers its own); name the tenant with Taskbox-Tenant instead"
                .into(),
        ));
    }
    if after.is_some() || last_event_id(headers)?.is_some() {
        return Err(ApiError::BadRequest(
            "a stream of every tenant's events starts now and cannot be resumed (each tenant \
             numbers its own events); leave out after and Last-Event-ID, or follow one tenant"
                .into(),
        ));
    }
    let permit = state.streams.take(EVERY_TENANT)?;
    // Subscribed before the answer, as a tenant's stream reads its head
    // then: what happens once the client has its answer reaches it.
    let live = state.feed.subscribe().await;
    let (tx, rx) = mpsc::channel(STREAM_ROOM);
    tokio::spawn(follow_every(state.feed.clone(), live, filter, tx));
    Ok(
        axum::response::Sse::new(sse(Out::new(rx, permit, token, None)))
            .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
            .into_response(),
    )
}

/// Whether the client asked for a page of JSON rather than a stream.
fn wants_json(headers: &HeaderMap) -> bool {
    headers
        .get(axum::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("application/json") && !a.contains("text/event-stream"))
}

/// A page of the tenant's events after `after`: `{events, next_after,
/// head}`. `next_after` is where the next page starts (past events the
/// filter left out too); `head` the tenant's last event now.
async fn page(
    state: &ApiState,
    tenant: &str,
    after: u64,
    limit: Option<u32>,
    filter: &EventFilter,
) -> Result<Response, ApiError> {
    let limit = limit.unwrap_or(DEFAULT_PAGE);
    if limit > MAX_PAGE {
        return Err(ApiError::BadRequest(format!(
            "limit must be at most {MAX_PAGE}"
        )));
    }
    let store = &state.store;
    store.event_sequence().await?;
    let heads = store.event_heads(Some(tenant)).await?;
    let mut events = Vec::new();
    let mut next = after.max(heads.first.saturating_sub(1));
    // Rows read per look; a filter that matches little reads on, up to a
    // bound, so that a page never costs more than this many rows.
    let mut budget = 64u32;
    'read: while (events.len() as u32) < limit && budget > 0 && next < heads.seq {
        let rows = store.event_read_tenant(tenant, next, 64).await?;
        budget = budget.saturating_sub(1);
        if rows.is_empty() {
            break;
        }
        for e in crate::events::decode(&rows).map_err(ApiError::Internal)? {
            if e.seq <= next {
                continue;
            }
            if (events.len() as u32) >= limit {
                break 'read;
            }
            next = e.seq;
            if filter.matches(&e) {
                events.push(EventView::of(&e));
            }
        }
    }
    Ok(axum::Json(EventPage {
        events,
        next_after: next,
        head: heads.seq,
    })
    .into_response())
}

/// What a stream's answer holds while it is read: the follower's items,
/// its place among the tenant's streams, and its token, looked up again as
/// it goes on.
struct Out {
    rx: mpsc::Receiver<Item>,
    _permit: OwnedSemaphorePermit,
    token: TokenWatch,
    /// The last event sent, where the client resumes (a tenant's stream;
    /// one of every tenant's cannot be resumed).
    last: Option<u64>,
    ended: bool,
}

impl Out {
    fn new(
        rx: mpsc::Receiver<Item>,
        permit: OwnedSemaphorePermit,
        token: TokenWatch,
        last: Option<u64>,
    ) -> Out {
        Out {
            rx,
            _permit: permit,
            token,
            last,
            ended: false,
        }
    }

    /// The next item, unless the token is no longer taken: it is looked up
    /// again before anything more is sent whenever it is due (a revoke
    /// heard of, its expiry, `RECHECK`), so nothing reaches a client after
    /// this process refuses its token.
    async fn next(&mut self) -> Result<Option<Item>, ApiError> {
        loop {
            if self.token.due() {
                self.token.check().await?;
            }
            tokio::select! {
                biased;
                () = self.token.wake() => {}
                item = self.rx.recv() => {
                    // Asked again as it leaves: a timer not fired yet (at
                    // the expiry, say) lets nothing past the token's end.
                    if self.token.due() {
                        self.token.check().await?;
                    }
                    return Ok(item);
                }
            }
        }
    }
}

/// The follower's items as SSE, ended by a last event when the client is
/// too slow (`dropped`) or its token is no longer taken (`error`).
fn sse(out: Out) -> impl Stream<Item = Result<Sse, Infallible>> {
    futures_util::stream::unfold(out, |mut out| async move {
        if out.ended {
            return None;
        }
        let item = match out.next().await {
            Ok(item) => item?,
            Err(e) => {
                out.ended = true;
                return Some((Ok(refused(&e, out.last)), out));
            }
        };
        if let Item::Event(e) = &item {
            out.last = Some(e.seq);
        }
        let (event, last) = frame(item);
        out.ended = last;
        Some((Ok(event), out))
    })
}

/// The last event of a stream whose token is no longer taken: the API's
/// error shape, and on a tenant's stream where to resume (with a token
/// that is taken).
fn refused(e: &ApiError, last: Option<u64>) -> Sse {
    tracing::info!(error = %e, "an event stream ended: its token is no longer taken");
    let data = Refused {
        error: e.body(),
        last_seq: last,
    };
    Sse::default().event("error").data(text(&data))
}

/// One item as SSE, and whether it is the stream's last.
fn frame(item: Item) -> (Sse, bool) {
    match item {
        Item::Event(e) => (
            Sse::default()
                .id(e.seq.to_string())
                .event(e.kind.as_str())
                .data(text(&EventView::of(&e))),
            false,
        ),
        Item::Gap { after, first } => (
            Sse::default().event("gap").data(text(&Gap {
                after,
                first,
                message: format!(
                    "events {} to {} were pruned (retention); the stream goes on from {first}",
                    after + 1,
                    first - 1
                ),
            })),
            false,
        ),
        Item::Across { tenant, event } => (
            Sse::default()
                .event(event.kind.as_str())
                .data(text(&EventView::across(&event, tenant))),
            false,
        ),
        Item::DroppedAcross => (
            Sse::default().event("dropped").data(text(&Dropped {
                last_seq: None,
                message: "this client read its events too slowly and is disconnected; \
                          reconnect to follow every tenant's events from then on"
                    .into(),
            })),
            true,
        ),
        Item::Dropped { last } => (
            Sse::default().event("dropped").data(text(&Dropped {
                last_seq: Some(last),
                message: format!(
                    "this client read its events too slowly and is disconnected; reconnect with Last-Event-ID: {last} to go on"
                ),
            })),
            true,
        ),
    }
}

/// A frame's data: its JSON on one line.
fn text(data: &impl Serialize) -> String {
    serde_json::to_string(data).unwrap_or_default()
}
