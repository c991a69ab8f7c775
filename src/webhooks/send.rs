//! The sender: takes due deliveries and POSTs each, signed, on a task of
//! its own, at most `per_webhook` to one endpoint, a tenant's share
//! (`share.rs`) to one tenant and `concurrency` in all at once, each for at
//! most `timeout`; records how each went, in batches: delivered (2xx), due
//! again after its backoff, or dead once it has failed for `give_up_ms`.

use super::share::{self, Bounds, Held};
use super::{guard, sign, Hooks, WebhookConfig};
use crate::otel::TraceParent;
use crate::store::{Delivery, DeliveryTry, JobStore, Millis, StoreResult};
use reqwest::header::{CONTENT_TYPE, USER_AGENT};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::sync::{mpsc, Notify, Semaphore};
use tokio_util::sync::CancellationToken;

/// Tries recorded in one write.
const RECORD_BATCH: usize = 256;
/// Longest an error's text kept on a delivery.
const MAX_ERROR_LEN: usize = 500;
/// Webhooks looked at in one round.
const MAX_WEBHOOKS_PER_ROUND: u32 = 1000;

pub struct Sender {
    store: Arc<dyn JobStore>,
    hooks: Arc<Hooks>,
    cfg: WebhookConfig,
    client: reqwest::Client,
    slots: Arc<Semaphore>,
    /// For a tenant with nothing in flight when the shared slots are all
    /// taken: one try each.
    spare: Arc<Semaphore>,
    busy: Mutex<Busy>,
    /// Turns the order of tenants served equally.
    turn: AtomicUsize,
    /// Rung when deliveries were made, or a try ended.
    wake: Arc<Notify>,
    tries: mpsc::Sender<DeliveryTry>,
    recorded: Mutex<Option<mpsc::Receiver<DeliveryTry>>>,
    /// Where each try's span goes, in the trace of the job its event is of.
    traces: OnceLock<crate::otel::Traces>,
}

impl Sender {
    pub fn new(
        store: Arc<dyn JobStore>,
        hooks: Arc<Hooks>,
        cfg: WebhookConfig,
        wake: Arc<Notify>,
    ) -> Result<Arc<Sender>, String> {
        let mut client = crate::http::client()
            .timeout(cfg.timeout)
            .connect_timeout(cfg.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy();
        if !cfg.allow_private {
            client = client.dns_resolver(guard::GuardedResolver);
        }
        let client = client
            .build()
            .map_err(|e| format!("cannot build the webhooks' HTTP client: {e}"))?;
        let (tries, recorded) = mpsc::channel(4 * RECORD_BATCH);
        Ok(Arc::new(Sender {
            store,
            hooks,
            slots: Arc::new(Semaphore::new(cfg.concurrency.max(1) as usize)),
            spare: Arc::new(Semaphore::new(cfg.spare.max(1) as usize)),
            cfg,
            client,
            busy: Mutex::new(Busy::default()),
            turn: AtomicUsize::new(0),
            wake,
            tries,
            recorded: Mutex::new(Some(recorded)),
            traces: OnceLock::new(),
        }))
    }

    /// Each try is a span in the trace of the job its event is of, and its
    /// request carries that span's `traceparent`.
    pub fn traced(self: Arc<Self>, traces: crate::otel::Traces) -> Arc<Self> {
        let _ = self.traces.set(traces);
        self
    }

    /// The span a try of `d` is, when traces are on and its event is of a
    /// job: its place (a child of the job's enqueue), the job's, and the
    /// job's id.
    async fn try_span(&self, d: &Delivery) -> Option<(TraceParent, TraceParent, String)> {
        self.traces.get().filter(|t| t.is_on())?;
        let body: serde_json::Value = serde_json::from_str(&d.body).ok()?;
        let id = body.get("job")?.get("id")?.as_str()?;
        // A job that continues a client's trace keeps it in its row.
        let stored = match self.store.job_get(&d.tenant, id).await {
            Ok(Some(job)) => job.traceparent,
            _ => None,
        };
        let job = TraceParent::of_job(id, stored.as_deref());
        Some((job.child(), job, id.to_owned()))
    }

    /// Sends until `stop`; then the tries in flight are dropped, and their
    /// deliveries are taken again once their hold runs out.
    pub fn spawn(self: Arc<Self>, stop: CancellationToken) -> Vec<tokio::task::JoinHandle<()>> {
        let recorded = self
            .recorded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let mut tasks = Vec::new();
        if let Some(rx) = recorded {
            tasks.push(tokio::spawn(record(self.store.clone(), rx, stop.clone())));
        }
        tasks.push(tokio::spawn(async move {
            loop {
                let started = match self.send_due().await {
                    Ok(n) => n,
                    Err(e) => {
                        tracing::warn!(error = %e, "the webhook sender cannot take deliveries");
                        0
                    }
                };
                let next = self.wait_for(started).await;
                tokio::select! {
                    () = self.wake.notified() => {}
                    () = tokio::time::sleep(next) => {}
                    () = stop.cancelled() => return,
                }
            }
        }));
        tasks
    }

    /// How long to rest: until the next due delivery, a second at most.
    /// When a round started nothing, what is due waits for room (a try's
    /// end rings), not for the clock: resting nought would spin.
    async fn wait_for(&self, started: usize) -> Duration {
        let max = Duration::from_secs(1);
        if self.slots.available_permits() == 0 {
            return max;
        }
        match self.store.delivery_next_at().await {
            Ok(Some(at)) => {
                let left = u64::try_from(at - self.store.now()).unwrap_or(0);
                if left == 0 && started == 0 {
                    return max;
                }
                Duration::from_millis(left).min(max)
            }
            _ => max,
        }
    }

    /// Takes what is due and room allows, and starts sending it; answers
    /// how many. Each webhook's are taken apart, a few at a time, so that
    /// one endpoint's backlog never holds another's deliveries back, and
    /// tenants in the order and up to the share `share.rs` decides, so
    /// that one tenant's never hold another's back.
    pub async fn send_due(self: &Arc<Self>) -> StoreResult<usize> {
        let mut started = 0;
        let bounds = Bounds {
            concurrency: self.cfg.concurrency,
            per_tenant: self.cfg.per_tenant,
            per_webhook: self.cfg.per_webhook,
        };
        // Held for as long as a try can take, and some: another sender
        // takes it only if this one died.
        let hold = u64::try_from(self.cfg.timeout.as_millis())
            .unwrap_or(u64::MAX)
            .saturating_mul(2)
            .saturating_add(30_000);
        let due = self
            .store
            .delivery_due_webhooks(MAX_WEBHOOKS_PER_ROUND)
            .await?;
        if due.is_empty() {
            return Ok(0);
        }
        let mut owners = self.hooks.owners().await?;
        if due.iter().any(|w| !owners.contains_key(w)) {
            // Made by another process since the webhooks were read.
            self.hooks.fresh().await?;
            owners = self.hooks.owners().await?;
        }
        let due: Vec<(String, String)> = due
            .into_iter()
            .map(|w| {
                // A webhook deleted since: its deliveries fail on their own.
                let t = owners.get(&w).cloned().unwrap_or_default();
                (w, t)
            })
            .collect();
        let (order, active) = {
            let busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
            let mut active: std::collections::HashSet<&str> =
                busy.tenants.keys().map(String::as_str).collect();
            active.extend(due.iter().map(|(_, t)| t.as_str()));
            let active = u32::try_from(active.len()).unwrap_or(u32::MAX);
            let turn = self.turn.fetch_add(1, Ordering::Relaxed);
            (share::order(due, &busy.tenants, turn), active)
        };
        for (webhook, tenant) in order {
            let held = {
                let busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
                Held {
                    free: permits(&self.slots),
                    spare: permits(&self.spare),
                    active,
                    webhook: busy.webhooks.get(&webhook).copied().unwrap_or(0),
                    tenant: busy.tenants.get(&tenant).copied().unwrap_or(0),
                }
            };
            let (room, spare) = share::room(bounds, held);
            if room == 0 {
                continue;
            }
            let pool = if spare { &self.spare } else { &self.slots };
            for d in self.store.delivery_take(&webhook, room, hold).await? {
                let Ok(permit) = pool.clone().try_acquire_owned() else {
                    // Taken beyond the room (none should be): it is held,
                    // and taken again when the hold runs out.
                    break;
                };
                self.busy
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .add(&d.webhook, &tenant);
                started += 1;
                let me = self.clone();
                let tenant = tenant.clone();
                tokio::spawn(async move {
                    let t = me.try_once(&d).await;
                    let _ = me.tries.send(t).await;
                    me.busy
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .done(&d.webhook, &tenant);
                    drop(permit);
                    me.wake.notify_one();
                });
            }
        }
        Ok(started)
    }

    /// One try of a delivery, and what becomes of it.
    async fn try_once(&self, d: &Delivery) -> DeliveryTry {
        let span = self.try_span(d).await;
        let started = std::time::SystemTime::now();
        let posted = self.post(d, span.as_ref().map(|(at, _, _)| at)).await;
        if let (Some((at, job, id)), Some(traces)) = (span, self.traces.get()) {
            let mut s = crate::otel::Span::new(
                "webhook delivery",
                at,
                Some(&job),
                started,
                std::time::SystemTime::now(),
            )
            .kind(opentelemetry::trace::SpanKind::Client)
            .text("taskbox.job.id", &id)
            .text("taskbox.webhook", &d.webhook)
            .text("taskbox.event", d.kind.as_str())
            .attr("taskbox.delivery", d.id)
            .attr("taskbox.attempt", i64::from(d.attempts + 1));
            match &posted {
                Ok(code) => {
                    s = s.attr("http.response.status_code", i64::from(*code));
                    if !(200..300).contains(code) {
                        s.error = Some(format!("HTTP {code}"));
                    }
                }
                Err(e) => s.error = Some(crate::otel::cut(e).to_owned()),
            }
            traces.emit(s);
        }
        let (status, error) = match posted {
            Ok(s) if (200..300).contains(&s) => (Some(s), None),
            Ok(s) => (Some(s), Some(format!("the endpoint answered HTTP {s}"))),
            Err(e) => (None, Some(crate::text::bounded(&e, MAX_ERROR_LEN))),
        };
        let at = self.store.now();
        let next_at = error.as_ref().and_then(|_| self.next_try(d, at));
        crate::metrics::get().delivery(match (&error, next_at) {
            (None, _) => "delivered",
            (Some(_), Some(_)) => "failed",
            (Some(_), None) => "dead",
        });
        DeliveryTry {
            id: d.id,
            at,
            status,
            error,
            next_at,
        }
    }

    /// When a delivery that just failed is tried again; `None`: never.
    fn next_try(&self, d: &Delivery, now: Millis) -> Option<Millis> {
        let give_up = crate::time::after(d.created_at, self.cfg.give_up_ms);
        let wait = self.cfg.backoff(d.attempts + 1);
        // ±10 %, so that many failures at once do not come back at once.
        let jitter = {
            let mut b = [0u8; 2];
            let _ = getrandom::fill(&mut b);
            let unit = f64::from(u16::from_le_bytes(b)) / f64::from(u16::MAX);
            0.9 + 0.2 * unit
        };
        let wait = ((wait as f64) * jitter) as i64;
        let at = now.saturating_add(wait.max(1));
        (at < give_up).then_some(at)
    }

    async fn post(&self, d: &Delivery, trace: Option<&TraceParent>) -> Result<u16, String> {
        let Some(hook) = self
            .hooks
            .get(&d.webhook)
            .await
            .map_err(|e| e.to_string())?
        else {
            return Err("the webhook was deleted".into());
        };
        let url = guard::check_url(&hook.url, self.cfg.allow_private)?;
        if !self.cfg.allow_private {
            if let Some(why) = guard::literal_forbidden(&url) {
                return Err(format!("the url is {why}"));
            }
        }
        let t = self.store.now() / 1000;
        let signature = sign::signature(&hook.secret, t, d.body.as_bytes());
        let mut post = self.client.post(url);
        if let Some(t) = trace {
            post = post.header("traceparent", t.to_string());
        }
        let sent = post
            .header(CONTENT_TYPE, "application/json")
            .header(
                USER_AGENT,
                concat!("taskbox-webhooks/", env!("CARGO_PKG_VERSION")),
            )
            .header("taskbox-event", d.kind.as_str())
            .header("taskbox-delivery", d.id.to_string())
            .header(sign::HEADER, signature)
            .body(d.body.clone())
            .send()
            .await
            .map_err(describe)?;
        Ok(sent.status().as_u16())
    }
}

/// Tries in flight, by webhook and by tenant.
#[derive(Default)]
struct Busy {
    webhooks: HashMap<String, u32>,
    tenants: HashMap<String, u32>,
}

impl Busy {
    fn add(&mut self, webhook: &str, tenant: &str) {
        *self.webhooks.entry(webhook.to_owned()).or_default() += 1;
        *self.tenants.entry(tenant.to_owned()).or_default() += 1;
    }

    /// A try ended; a count that reaches nought is forgotten, so that the
    /// maps hold only what is in flight.
    fn done(&mut self, webhook: &str, tenant: &str) {
        for (map, key) in [(&mut self.webhooks, webhook), (&mut self.tenants, tenant)] {
            if let Some(n) = map.get_mut(key) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    map.remove(key);
                }
            }
        }
    }
}

fn permits(s: &Semaphore) -> u32 {
    u32::try_from(s.available_permits()).unwrap_or(u32::MAX)
}

/// A transport error in words, with its causes (reqwest's own text is
/// often only "error sending request").
fn describe(e: reqwest::Error) -> String {
    let mut text = if e.is_timeout() {
        "the endpoint did not answer in time".to_owned()
    } else if e.is_connect() {
        "cannot connect to the endpoint".to_owned()
    } else {
        "the request failed".to_owned()
    };
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Records tries in batches as they end.
async fn record(
    store: Arc<dyn JobStore>,
    mut rx: mpsc::Receiver<DeliveryTry>,
    stop: CancellationToken,
) {
    let mut batch = Vec::with_capacity(RECORD_BATCH);
    loop {
        let got = tokio::select! {
            n = rx.recv_many(&mut batch, RECORD_BATCH) => n,
            () = stop.cancelled() => 0,
        };
        if got == 0 && batch.is_empty() {
            return;
        }
        let tries = std::mem::take(&mut batch);
        let mut delay = Duration::from_millis(100);
        for _ in 0..5 {
            match store.delivery_record(tries.clone()).await {
                Ok(()) => break,
                Err(e) => {
                    // Unrecorded, a try is made again when its hold ends.
                    tracing::warn!(error = %e, tries = tries.len(), "cannot record webhook tries");
                    tokio::time::sleep(delay).await;
                    delay *= 2;
                }
            }
        }
        if got == 0 {
            return;
        }
    }
}
