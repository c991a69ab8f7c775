//! The sender: takes due deliveries and POSTs each, signed, on a task of
//! its own, at most `per_webhook` to one endpoint and `concurrency` in all
//! at once, each for at most `timeout`; records how each went, in
//! batches: delivered (2xx), due again after its backoff, or dead once it
//! has failed for `give_up_ms`.

use super::{guard, sign, Hooks, WebhookConfig};
use crate::store::{Delivery, DeliveryTry, JobStore, Millis, StoreResult};
use reqwest::header::{CONTENT_TYPE, USER_AGENT};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
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
    /// Tries in flight, by webhook.
    busy: Mutex<HashMap<String, u32>>,
    /// Rung when deliveries were made, or a try ended.
    wake: Arc<Notify>,
    tries: mpsc::Sender<DeliveryTry>,
    recorded: Mutex<Option<mpsc::Receiver<DeliveryTry>>>,
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
            cfg,
            client,
            busy: Mutex::new(HashMap::new()),
            wake,
            tries,
            recorded: Mutex::new(Some(recorded)),
        }))
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
                if let Err(e) = self.send_due().await {
                    tracing::warn!(error = %e, "the webhook sender cannot take deliveries");
                }
                let next = self.wait_for().await;
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
    async fn wait_for(&self) -> Duration {
        let max = Duration::from_secs(1);
        if self.slots.available_permits() == 0 {
            return max;
        }
        match self.store.delivery_next_at().await {
            Ok(Some(at)) => {
                let left = at - self.store.now();
                Duration::from_millis(u64::try_from(left).unwrap_or(0)).min(max)
            }
            _ => max,
        }
    }

    /// Takes what is due and room allows, and starts sending it; answers
    /// how many. Each webhook's are taken apart, a few at a time, so that
    /// one endpoint's backlog never holds another's deliveries back; a
    /// webhook is taken for once half its room is free, so that takes
    /// (each a write) carry several deliveries.
    pub async fn send_due(self: &Arc<Self>) -> StoreResult<usize> {
        let mut started = 0;
        let per = self.cfg.per_webhook.max(1);
        // Held for as long as a try can take, and some: another sender
        // takes it only if this one died.
        let hold = u64::try_from(self.cfg.timeout.as_millis())
            .unwrap_or(u64::MAX)
            .saturating_mul(2)
            .saturating_add(30_000);
        for webhook in self
            .store
            .delivery_due_webhooks(MAX_WEBHOOKS_PER_ROUND)
            .await?
        {
            let free = self.slots.available_permits();
            if free == 0 {
                break;
            }
            let busy = self
                .busy
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(&webhook)
                .copied()
                .unwrap_or(0);
            if busy > per / 2 {
                continue;
            }
            let room = (per - busy).min(u32::try_from(free).unwrap_or(u32::MAX));
            for d in self.store.delivery_take(&webhook, room, hold).await? {
                let Ok(permit) = self.slots.clone().try_acquire_owned() else {
                    // Taken beyond the room (none should be): it is held,
                    // and taken again when the hold runs out.
                    break;
                };
                *self
                    .busy
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .entry(d.webhook.clone())
                    .or_default() += 1;
                started += 1;
                let me = self.clone();
                tokio::spawn(async move {
                    let t = me.try_once(&d).await;
                    let _ = me.tries.send(t).await;
                    if let Some(n) = me
                        .busy
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .get_mut(&d.webhook)
                    {
                        *n = n.saturating_sub(1);
                    }
                    drop(permit);
                    me.wake.notify_one();
                });
            }
        }
        Ok(started)
    }

    /// One try of a delivery, and what becomes of it.
    async fn try_once(&self, d: &Delivery) -> DeliveryTry {
        let (status, error) = match self.post(d).await {
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
        let give_up = d
            .created_at
            .saturating_add(i64::try_from(self.cfg.give_up_ms).unwrap_or(i64::MAX));
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

    async fn post(&self, d: &Delivery) -> Result<u16, String> {
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
        let sent = self
            .client
            .post(url)
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
