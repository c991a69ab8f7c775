//! `taskbox bench queue --only webhooks`: the burn-down of no-op jobs with
//! webhooks on, against the same burn-down without, in one sitting,
//! interleaved: with none; with a webhook that wants `job.cancelled`,
//! whose one event (a job cancelled at the start) reaches an endpoint
//! that answers 500 three times and 200 on the fourth try, while the
//! dispatcher reads every other event of the burn-down and delivers none
//! of them; and with a webhook that wants every `job.completed`, each
//! delivered to an endpoint that answers 200 (the dear case: a POST per
//! job).

use super::bed::{bed, insert_plain, run_until_completed};
use super::{durability, progress, runners, QueueBench};
use anyhow::{bail, Context};
use axum::http::StatusCode;
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use taskbox::api::auth::DEFAULT_TENANT;
use taskbox::maintenance;
use taskbox::store::NewWebhook;
use taskbox::webhooks::{dispatch::Dispatcher, send::Sender, Hooks, WebhookConfig};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Which webhook a burn-down runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hooked {
    None,
    /// One event wanted, refused three times.
    Rare,
    /// Every completion wanted.
    Every,
}

/// An endpoint on 127.0.0.1 that refuses its first `refuse` requests.
async fn endpoint(refuse: u64) -> anyhow::Result<(String, Arc<AtomicU64>)> {
    let got = Arc::new(AtomicU64::new(0));
    let count = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let n = count.fetch_add(1, Ordering::Relaxed) + 1;
            async move {
                if n <= refuse {
                    StatusCode::INTERNAL_SERVER_ERROR
                } else {
                    StatusCode::OK
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok((format!("http://{addr}/hook"), got))
}

async fn burn_down(args: &QueueBench, hooked: Hooked) -> anyhow::Result<serde_json::Value> {
    let b = bed(args, durability(args)).await?;
    insert_plain(&b, args.jobs).await?;
    let stop = CancellationToken::new();
    let mut services = Vec::new();
    let mut got = None;
    if hooked != Hooked::None {
        let (url, count) = endpoint(if hooked == Hooked::Rare { 3 } else { 0 }).await?;
        got = Some(count);
        let events = match hooked {
            Hooked::Rare => vec![taskbox::events::EventType::Cancelled],
            _ => vec![taskbox::events::EventType::Completed],
        };
        b.store
            .webhook_insert(NewWebhook {
                id: "wh_bench".into(),
                tenant: DEFAULT_TENANT.into(),
                url,
                events,
                secret: "bench-webhook-secret".into(),
            })
            .await?;
        let hooks = Hooks::new(b.store.clone());
        let made = Arc::new(Notify::new());
        let cfg = WebhookConfig {
            allow_private: true,
            backoff_ms: 20,
            ..WebhookConfig::default()
        };
        let dispatcher = Dispatcher::new(b.store.clone(), hooks.clone(), made.clone());
        services.extend(maintenance::spawn(vec![Box::new(dispatcher)], stop.clone()));
        let sender = Sender::new(b.store.clone(), hooks, cfg, made).map_err(anyhow::Error::msg)?;
        services.extend(sender.spawn(stop.clone()));
    }
    // One job cancelled before the start: the rare webhook's one event.
    let page = b
        .store
        .job_list(taskbox::store::JobQuery {
            tenant: Some(DEFAULT_TENANT.into()),
            limit: 1,
            max_bytes: 1 << 20,
            ..Default::default()
        })
        .await?;
    let cancelled = page.jobs.first().context("no job to cancel")?.id.clone();
    b.store.job_cancel(DEFAULT_TENANT, &cancelled).await?;
    let target = args.jobs - 1;
    let started = Instant::now();
    let runner = run_until_completed(&b, runners(args), target).await;
    let elapsed = started.elapsed();
    runner.stop(Duration::from_secs(5)).await;
    // What reached the endpoint by the burn-down's end, and then how long
    // the rest took (the webhook's delivery of every completion).
    let at_end = got.as_ref().map_or(0, |g| g.load(Ordering::Relaxed));
    let want = match hooked {
        Hooked::None => 0,
        Hooked::Rare => 4,
        Hooked::Every => target,
    };
    let deadline = Instant::now() + Duration::from_secs(600);
    while got.as_ref().map_or(0, |g| g.load(Ordering::Relaxed)) < want {
        if Instant::now() > deadline {
            bail!(
                "the webhook got {} of {want} requests",
                got.map_or(0, |g| g.load(Ordering::Relaxed))
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let drained = started.elapsed();
    if hooked == Hooked::Rare {
        let d = b
            .store
            .delivery_list(DEFAULT_TENANT, "wh_bench", None, 10)
            .await?;
        let delivered = d.len() == 1
            && d[0].attempts == 4
            && d[0].status == taskbox::store::DeliveryStatus::Delivered;
        if !delivered {
            bail!("the cancel's delivery is not delivered on its fourth try: {d:?}");
        }
    }
    stop.cancel();
    for s in services {
        let _ = s.await;
    }
    b.store.close().await;
    b.db.drop().await;
    Ok(json!({
        "jobs": target,
        "seconds": elapsed.as_secs_f64(),
        "jobs_per_second": target as f64 / elapsed.as_secs_f64(),
        "webhook_requests_by_the_end": at_end,
        "webhook_requests": want,
        "all_delivered_after_s": drained.as_secs_f64(),
    }))
}

/// `rounds` interleaved sittings of the three burn-downs.
pub async fn webhooks(args: &QueueBench, rounds: u32) -> anyhow::Result<serde_json::Value> {
    let mut out = Vec::new();
    for round in 0..rounds {
        let mut row = serde_json::Map::new();
        for (name, hooked) in [
            ("without", Hooked::None),
            ("rare", Hooked::Rare),
            ("every_completion", Hooked::Every),
        ] {
            progress(&format!(
                "round {}: burning down {} jobs, webhooks: {name}",
                round + 1,
                args.jobs
            ));
            let r = burn_down(args, hooked).await?;
            eprintln!(
                " {:.0} jobs/s",
                r["jobs_per_second"].as_f64().unwrap_or_default()
            );
            row.insert(name.into(), r);
        }
        let rate = |k: &str| row[k]["jobs_per_second"].as_f64().unwrap_or(0.0);
        let (base, rare, every) = (rate("without"), rate("rare"), rate("every_completion"));
        let ratio = |r: f64| if base > 0.0 { r / base } else { 0.0 };
        row.insert("rare_ratio".into(), json!(ratio(rare)));
        row.insert("every_completion_ratio".into(), json!(ratio(every)));
        out.push(serde_json::Value::Object(row));
    }
    Ok(json!({ "rounds": out }))
}
