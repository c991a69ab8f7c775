//! `taskbox bench tenants`: what one tenant's flood costs another. A real
//! server (in this process, on a fresh data dir, over HTTP) runs tenant
//! `quiet`, which enqueues one no-op job every 10 ms, first alone, then
//! while tenant `flood` keeps 100,000 jobs queued at the best priority,
//! calls run-now on them and sends inputs that run its hostile schema to
//! the bound, then again while each of flood's guests burns its whole fuel
//! limit. Reported: quiet's enqueue→start latency (from the HTTP request to
//! the attempt's start) and its throughput against its offered rate; and,
//! with both tenants backlogged at weights 1 and 3, each one's share of
//! the starts; and, with both backlogged at equal weights while each of
//! flood's jobs burns 100 times the fuel of quiet's, each one's share of
//! the runners' time.

use crate::common::percentiles;
use anyhow::{bail, Context};
use clap::Args;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use taskbox::app::App;
use taskbox::config::ServeConfig;
use taskbox::enqueue::{JobSpec, MAX_BATCH};
use taskbox::job::JobStatus;
use taskbox::runner::{Observer, RunnerEvent};
use taskbox::store::{Inserted, TaskRef};

const TOKEN: &str = "bench-admin-token-0123456789";
const QUIET: &str = "quiet";
const FLOOD: &str = "flood";

#[derive(Debug, Args)]
pub struct TenantsBench {
    /// Where the built guests are (noop.wasm, limits.wasm).
    #[arg(long, default_value = "target/guests")]
    pub guests: PathBuf,
    /// Attempts run at once [default: the number of cores]
    #[arg(long)]
    pub runners: Option<usize>,
    /// Jobs the quiet tenant enqueues in each phase, one per interval.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(10..=100_000))]
    pub samples: u64,
    /// Between two of the quiet tenant's enqueues, in ms.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub interval_ms: u64,
    /// Jobs the flooding tenant keeps queued.
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1_000..=10_000_000))]
    pub flood: u64,
    /// Clients of the flooding tenant enqueueing over HTTP as fast as they
    /// are answered, besides its backlog, run-now calls and hostile inputs.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(0..=256))]
    pub flood_clients: u64,
    /// Loop rounds of each of the quiet tenant's jobs in the `cost` phase;
    /// each of the flooding tenant's runs 100 times as many.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub cost_iterations: u64,
    /// Fuel each of the flooding tenant's guests burns in the `burn` phase.
    #[arg(long, default_value_t = 20_000_000)]
    pub burn_fuel: u64,
    /// Run only this phase (default: all).
    #[arg(long, value_enum)]
    pub only: Option<Phase>,
    /// Print the figures as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub taskbox: crate::server::Taskbox,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Phase {
    /// The quiet tenant alone.
    Alone,
    /// With a flood of no-op jobs, run-now calls and a hostile schema.
    Flood,
    /// With a flood of guests that each burn their whole fuel limit.
    Burn,
    /// Both backlogged, weights 1 (flood) and 3 (quiet).
    Share,
    /// Both backlogged at equal weights, flood's jobs 100 times heavier.
    Cost,
}

fn progress(what: &str) {
    eprint!("taskbox bench tenants: {what}…");
    let _ = std::io::stderr().flush();
}

/// A server with the two tenants and their tasks, and what it told of
/// its attempts' starts.
struct Bed {
    _dir: tempfile::TempDir,
    app: App,
    url: String,
    client: reqwest::Client,
    tokens: HashMap<&'static str, String>,
    /// When each of the quiet tenant's jobs was claimed and its attempt
    /// started, by job id, and each tenant's count of starts.
    claimed: Arc<Mutex<HashMap<String, Instant>>>,
    started: Arc<Mutex<HashMap<String, Instant>>>,
    starts: Arc<Mutex<HashMap<String, u64>>>,
    /// Each tenant's attempts' time in their slots.
    ran: Arc<Mutex<HashMap<String, Duration>>>,
    guests_dir: PathBuf,
}

impl Bed {
    /// Stops the bench's server once nothing else holds it.
    async fn stop(b: Arc<Bed>) -> anyhow::Result<()> {
        Arc::try_unwrap(b)
            .map_err(|_| anyhow::anyhow!("the bench still holds its server"))?
            .app
            .stop()
            .await;
        Ok(())
    }

    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        body: Option<Value>,
    ) -> anyhow::Result<(u16, Value)> {
        let mut req = self
            .client
            .request(method, format!("{}{path}", self.url))
            .bearer_auth(token);
        if let Some(b) = body {
            req = req.body(b.to_string());
        }
        let resp = req.send().await?;
        let status = resp.status().as_u16();
        let body = resp.json().await.unwrap_or(Value::Null);
        Ok((status, body))
    }

    async fn upload(&self, token: &str, guest: &str) -> anyhow::Result<String> {
        let path = self.guests_dir.join(format!("{guest}.wasm"));
        let bytes = std::fs::read(&path).with_context(|| {
            format!(
                "cannot read {} (build the guests first: scripts/build-guests)",
                path.display()
            )
        })?;
        let resp = self
            .client
            .post(format!("{}/v1/components", self.url))
            .bearer_auth(token)
            .body(bytes)
            .send()
            .await?;
        let body: Value = resp.json().await?;
        body["digest"]
            .as_str()
            .map(str::to_owned)
            .with_context(|| format!("upload refused: {body}"))
    }

    async fn define(&self, token: &str, name: &str, spec: Value) -> anyhow::Result<TaskRef> {
        let (status, body) = self
            .call(
                reqwest::Method::PUT,
                &format!("/v1/tasks/{name}"),
                token,
                Some(spec),
            )
            .await?;
        if status != 201 {
            bail!("cannot define {name}: {body}");
        }
        Ok(serde_json::from_value(body)?)
    }
}

async fn bed(args: &TenantsBench, runners: usize) -> anyhow::Result<Bed> {
    let dir = tempfile::tempdir().context("cannot make a temporary data dir")?;
    let started: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let claimed: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let starts: Arc<Mutex<HashMap<String, u64>>> = Arc::default();
    let ran: Arc<Mutex<HashMap<String, Duration>>> = Arc::default();
    let (s, n, r) = (started.clone(), starts.clone(), ran.clone());
    let c = claimed.clone();
    let hook = Arc::new(move |e: RunnerEvent| match e {
        RunnerEvent::Started { id, tenant, at } => {
            *n.lock()
                .unwrap_or_else(|p| p.into_inner())
                .entry(tenant.clone())
                .or_default() += 1;
            if tenant == QUIET {
                s.lock().unwrap_or_else(|p| p.into_inner()).insert(id, at);
            }
        }
        RunnerEvent::Ran {
            tenant, ran_for, ..
        } => {
            *r.lock()
                .unwrap_or_else(|p| p.into_inner())
                .entry(tenant)
                .or_default() += ran_for;
        }
        RunnerEvent::Claimed {
            ids,
            tenant: Some(tenant),
            at,
        } if tenant == QUIET => {
            let mut c = c.lock().unwrap_or_else(|p| p.into_inner());
            for id in ids {
                c.insert(id, at);
            }
        }
        _ => {}
    });
    let app = App::start(ServeConfig {
        runners,
        grace: Duration::from_secs(2),
        observer: Some(Observer(hook)),
        ..crate::server::serve_config(
            dir.path(),
            format!("sqlite://{}", dir.path().join("taskbox.db").display()),
            TOKEN,
            &args.taskbox,
        )?
    })
    .await?
    .app;
    let url = format!(
        "http://{}",
        app.addr.context("the bench server has no API")?
    );
    let mut b = Bed {
        _dir: dir,
        app,
        url,
        client: taskbox::http::default_client(),
        tokens: HashMap::new(),
        claimed,
        started,
        starts,
        ran,
        guests_dir: args.guests.clone(),
    };
    for tenant in [QUIET, FLOOD] {
        b.call(
            reqwest::Method::POST,
            "/v1/tenants",
            TOKEN,
            Some(json!({"name": tenant})),
        )
        .await?;
        let (_, t) = b
            .call(
                reqwest::Method::POST,
                "/v1/tokens",
                TOKEN,
                Some(json!({"tenant": tenant, "scopes": ["tasks:write", "jobs:queue", "jobs:run", "jobs:read"]})),
            )
            .await?;
        let token = t["token"].as_str().context("no token")?.to_owned();
        b.tokens.insert(tenant, token);
    }
    Ok(b)
}

/// What the quiet tenant saw of each of its jobs, from the enqueue request.
struct QuietTimes {
    to_start: Vec<Duration>,
    /// The 201.
    to_ack: Vec<Duration>,
    /// Held by the runner (claimed), and from then to the start.
    to_claim: Vec<Duration>,
    claim_to_start: Vec<Duration>,
    /// How long the phase's enqueues took.
    offered: Duration,
}

/// The quiet tenant's part of a phase: one no-op job every interval, each
/// request sent without waiting for the one before.
async fn quiet_tenant(b: Arc<Bed>, samples: u64, interval_ms: u64) -> anyhow::Result<QuietTimes> {
    let token = b.tokens[QUIET].clone();
    let digest = b.upload(&token, "noop").await?;
    b.define(&token, "noop", json!({"component": digest}))
        .await?;
    let sent: Arc<Mutex<Vec<(String, Instant, Instant)>>> = Arc::default();
    let failures = Arc::new(AtomicU64::new(0));
    let mut tick = tokio::time::interval(Duration::from_millis(interval_ms));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let t0 = Instant::now();
    let mut requests = Vec::new();
    for _ in 0..samples {
        tick.tick().await;
        let (client, url, token, sent, failures) = (
            b.client.clone(),
            b.url.clone(),
            token.clone(),
            sent.clone(),
            failures.clone(),
        );
        requests.push(tokio::spawn(async move {
            let at = Instant::now();
            let r = client
                .post(format!("{url}/v1/jobs"))
                .bearer_auth(&token)
                .body(r#"{"task": "noop", "input": {}}"#)
                .send()
                .await;
            let id = match r {
                Ok(resp) if resp.status() == 201 => resp
                    .json::<Value>()
                    .await
                    .ok()
                    .and_then(|j| j["id"].as_str().map(str::to_owned)),
                _ => None,
            };
            let acked = Instant::now();
            match id {
                Some(id) => sent
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((id, at, acked)),
                None => {
                    failures.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for r in requests {
        r.await?;
    }
    let offered = t0.elapsed();
    if failures.load(Ordering::Relaxed) > 0 {
        bail!(
            "{} of the quiet tenant's enqueues failed",
            failures.load(Ordering::Relaxed)
        );
    }
    // Every job has started (or the phase failed).
    let deadline = Instant::now() + Duration::from_secs(60);
    let sent = std::mem::take(&mut *sent.lock().unwrap_or_else(|p| p.into_inner()));
    loop {
        let waits: Option<Vec<Duration>> = {
            let started = b.started.lock().unwrap_or_else(|p| p.into_inner());
            sent.iter()
                .map(|(id, at, _)| started.get(id).map(|s| s.saturating_duration_since(*at)))
                .collect()
        };
        if let Some(to_start) = waits {
            let to_ack = sent
                .iter()
                .map(|(_, at, acked)| acked.saturating_duration_since(*at))
                .collect();
            let claimed = b.claimed.lock().unwrap_or_else(|p| p.into_inner());
            // A job claimed in a batch with other tenants' is not counted.
            let started = b.started.lock().unwrap_or_else(|p| p.into_inner());
            let (to_claim, claim_to_start) = sent
                .iter()
                .filter_map(|(id, at, _)| {
                    let c = claimed.get(id)?;
                    let s = started.get(id)?;
                    Some((
                        c.saturating_duration_since(*at),
                        s.saturating_duration_since(*c),
                    ))
                })
                .unzip();
            return Ok(QuietTimes {
                to_start,
                to_ack,
                to_claim,
                claim_to_start,
                offered,
            });
        }
        if Instant::now() > deadline {
            bail!("some of the quiet tenant's jobs did not start within a minute");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Puts `n` jobs of `task` in `tenant`'s backlog at `priority`, through
/// the enqueue path a thousand per write; the ids of the last thousand.
async fn backlog(
    b: &Bed,
    (tenant, task, priority): (&str, &TaskRef, i32),
    input: &Value,
    n: u64,
) -> anyhow::Result<Vec<String>> {
    let mut last = Vec::new();
    let mut left = n;
    while left > 0 {
        let k = left.min(MAX_BATCH as u64);
        let items = (0..k)
            .map(|_| {
                let spec = JobSpec {
                    priority: Some(priority),
                    ..JobSpec::of(task.name.clone(), input.clone())
                };
                (spec, None)
            })
            .collect();
        last.clear();
        for r in b.app.state.enqueuer.enqueue_batch(tenant, items).await? {
            let (Inserted::Created(j) | Inserted::Existing(j)) = r?;
            last.push(j.id);
        }
        left -= k;
    }
    Ok(last)
}

/// How the flooding tenant keeps at it while the quiet one is measured:
/// clients enqueueing as fast as they are answered (at the best priority,
/// the past as run_at), run-now calls on its queued jobs, and inputs that
/// its hostile schema takes to the bound. Stops at `stop`.
async fn flood(
    b: Arc<Bed>,
    (task, input): (TaskRef, Value),
    backlog_size: u64,
    clients: u64,
    stop: Arc<AtomicBool>,
    ready: tokio::sync::oneshot::Sender<()>,
) -> anyhow::Result<Value> {
    let token = b.tokens[FLOOD].clone();
    let queued = backlog(&b, (FLOOD, &task, -1000), &input, backlog_size).await?;
    let _ = ready.send(());
    let ready = Instant::now();
    let enqueued = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (b, stop, token, enqueued) = (b.clone(), stop.clone(), token.clone(), enqueued.clone());
        let body = json!({"task": task.name, "input": input, "priority": -1000,
                          "run_at": "2000-01-01T00:00:00Z"});
        tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let body = body.clone();
                if let Ok((201, _)) = b
                    .call(reqwest::Method::POST, "/v1/jobs", &token, Some(body))
                    .await
                {
                    enqueued.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    let (b2, stop2, token2) = (b.clone(), stop.clone(), token.clone());
    let run_nows = tokio::spawn(async move {
        let mut calls = 0u64;
        for id in queued.iter().cycle() {
            if stop2.load(Ordering::Relaxed) {
                break;
            }
            let path = format!("/v1/jobs/{id}/run");
            let _ = b2.call(reqwest::Method::POST, &path, &token2, None).await;
            calls += 1;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        calls
    });
    let (b3, stop3, token3) = (b.clone(), stop.clone(), token.clone());
    let hostile = tokio::spawn(async move {
        let mut refused = 0u64;
        while !stop3.load(Ordering::Relaxed) {
            let body = json!({"task": "hostile", "input": 1});
            if let Ok((400, _)) = b3
                .call(reqwest::Method::POST, "/v1/jobs", &token3, Some(body))
                .await
            {
                refused += 1;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        refused
    });
    // The backlog kept at least half full, a thousand jobs per write.
    let mut topped_up = 0;
    while !stop.load(Ordering::Relaxed) {
        let queued = b.app.state.store.tenant_usage(FLOOD).await?.jobs.queued;
        if queued < backlog_size / 2 {
            backlog(&b, (FLOOD, &task, -1000), &input, backlog_size / 2).await?;
            topped_up += backlog_size / 2;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for t in tasks {
        t.await?;
    }
    Ok(json!({
        "backlog": backlog_size,
        "topped_up": topped_up,
        "seconds": ready.elapsed().as_secs_f64(),
        "clients": clients,
        "enqueued_over_http": enqueued.load(Ordering::Relaxed),
        "run_now_calls": run_nows.await?,
        "hostile_inputs_refused": hostile.await?,
    }))
}

/// The flooding tenant's tasks: no-op jobs, guests that burn `fuel`, and a
/// schema whose checks run to the bound.
async fn flood_tasks(b: &Bed, fuel: u64) -> anyhow::Result<(TaskRef, TaskRef)> {
    let token = b.tokens[FLOOD].clone();
    let noop = b.upload(&token, "noop").await?;
    let limits = b.upload(&token, "limits").await?;
    let noop = b.define(&token, "noop", json!({"component": noop})).await?;
    let burn = b
        .define(
            &token,
            "burn",
            json!({"component": limits, "limits": {"fuel": fuel}, "retry": {"max_attempts": 1}}),
        )
        .await?;
    let mut defs = Map::new();
    for i in 0..40 {
        let r = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({"oneOf": [{"$ref": r}, {"$ref": r}]}),
        );
    }
    defs.insert("d40".into(), json!(false));
    b.define(
        &token,
        "hostile",
        json!({"component": noop.digest, "input_schema": {"$defs": defs, "$ref": "#/$defs/d0"}}),
    )
    .await?;
    Ok((noop, burn))
}

/// Where each tenant's clients run.
struct Clients {
    flood: tokio::runtime::Handle,
    quiet: tokio::runtime::Handle,
}

/// One phase: the quiet tenant measured, with the flood `which` says. Each
/// tenant's clients run on a thread of their own, as they would on
/// machines of their own: a quiet request's send must not wait behind
/// the flood's, or the client's queue would be measured, not the server.
async fn phase(
    args: &TenantsBench,
    runners: usize,
    which: Phase,
    clients: &Clients,
) -> anyhow::Result<Value> {
    let b = Arc::new(bed(args, runners).await?);
    let (noop, burn) = flood_tasks(&b, args.burn_fuel).await?;
    let stop = Arc::new(AtomicBool::new(false));
    let spin = json!({"op": "spin", "iterations": 1_000_000_000_000u64});
    let (task, input) = match which {
        Phase::Burn => (burn, spin),
        _ => (noop, json!({})),
    };
    let (ready_tx, ready) = tokio::sync::oneshot::channel();
    let flooding = match which {
        Phase::Alone | Phase::Share | Phase::Cost => None,
        Phase::Flood | Phase::Burn => Some(clients.flood.spawn(flood(
            b.clone(),
            (task, input),
            args.flood,
            args.flood_clients,
            stop.clone(),
            ready_tx,
        ))),
    };
    if flooding.is_some() {
        // The backlog in, and the flood under way.
        ready
            .await
            .context("the flood stopped before its backlog was in")?;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let a0 = started_of(&b, FLOOD);
    let quiet = clients
        .quiet
        .spawn(quiet_tenant(b.clone(), args.samples, args.interval_ms))
        .await??;
    let a1 = started_of(&b, FLOOD);
    stop.store(true, Ordering::Relaxed);
    let flood_report = match flooding {
        Some(f) => f.await??,
        None => Value::Null,
    };
    let n = quiet.to_start.len() as f64;
    let offered = quiet.offered;
    let report = json!({
        "quiet_enqueue_to_start": percentiles(quiet.to_start),
        "quiet_enqueue_to_ack": percentiles(quiet.to_ack),
        "quiet_claimed_alone": quiet.to_claim.len(),
        "quiet_enqueue_to_claim": percentiles(quiet.to_claim),
        "quiet_claim_to_start": percentiles(quiet.claim_to_start),
        "quiet_jobs": n,
        "quiet_offered_per_second": n / offered.as_secs_f64(),
        "quiet_started_per_second": n / offered.as_secs_f64(),
        "flood_started_per_second": (a1 - a0) as f64 / offered.as_secs_f64(),
        "flood": flood_report,
    });
    Bed::stop(b).await?;
    Ok(report)
}

fn started_of(b: &Bed, tenant: &str) -> u64 {
    b.starts
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(tenant)
        .copied()
        .unwrap_or(0)
}

/// Both tenants backlogged, weights 1 (flood) and 3 (quiet): how the jobs
/// started while both had work were shared.
async fn share(args: &TenantsBench, runners: usize) -> anyhow::Result<Value> {
    let b = Arc::new(bed(args, runners).await?);
    let (noop, _) = flood_tasks(&b, args.burn_fuel).await?;
    let quiet_token = b.tokens[QUIET].clone();
    let digest = b.upload(&quiet_token, "noop").await?;
    let quiet = b
        .define(&quiet_token, "noop", json!({"component": digest}))
        .await?;
    b.call(
        reqwest::Method::PUT,
        &format!("/v1/tenants/{QUIET}"),
        TOKEN,
        Some(json!({"weight": 3})),
    )
    .await?;
    let store = b.app.state.store.clone();
    let each = args.flood / 2;
    // A write of each in turn, so that both lines grow together while the
    // runners already start the first jobs.
    let mut left = each;
    while left > 0 {
        let k = left.min(MAX_BATCH as u64);
        for (tenant, task, priority) in [(FLOOD, &noop, -1000), (QUIET, &quiet, 1000)] {
            backlog(&b, (tenant, task, priority), &json!({}), k).await?;
        }
        left -= k;
    }
    progress("both tenants backlogged");
    // Count starts over a span in which both still have work queued.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (f0, q0) = (started_of(&b, FLOOD), started_of(&b, QUIET));
    let (fr0, qr0) = (ran_of(&b, FLOOD), ran_of(&b, QUIET));
    let t0 = Instant::now();
    let mut span = Duration::ZERO;
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (f, q) = (
            store.tenant_usage(FLOOD).await?.jobs.queued,
            store.tenant_usage(QUIET).await?.jobs.queued,
        );
        if f < each / 10 || q < each / 10 || t0.elapsed() > Duration::from_secs(3) {
            break;
        }
        span = t0.elapsed();
    }
    let (f1, q1) = (started_of(&b, FLOOD), started_of(&b, QUIET));
    let (fr, qr) = (
        (ran_of(&b, FLOOD) - fr0).as_secs_f64(),
        (ran_of(&b, QUIET) - qr0).as_secs_f64(),
    );
    eprintln!(" done");
    let (fs, qs) = ((f1 - f0) as f64, (q1 - q0) as f64);
    let report = json!({
        "weights": {"flood": 1, "quiet": 3},
        "seconds": span.as_secs_f64(),
        "flood_started": fs,
        "quiet_started": qs,
        "quiet_share": qs / (fs + qs).max(1.0),
        "quiet_runner_share": qr / (fr + qr).max(f64::MIN_POSITIVE),
        "flood_runner_us_per_start": fr * 1e6 / fs.max(1.0),
        "quiet_runner_us_per_start": qr * 1e6 / qs.max(1.0),
        "quiet_fair_share": 0.75,
    });
    let counts = store.job_counts().await?;
    if counts.iter().any(|(s, _)| *s == JobStatus::Failed) {
        bail!("jobs failed: {counts:?}");
    }
    Bed::stop(b).await?;
    Ok(report)
}

fn ran_of(b: &Bed, tenant: &str) -> Duration {
    b.ran
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(tenant)
        .copied()
        .unwrap_or_default()
}

/// Both tenants backlogged at equal weights, each of flood's jobs running
/// 100 times the loop rounds of quiet's (and burning 100 times the fuel):
/// how the runners' time was shared while both had work. Counting starts,
/// flood would have had 100/101 of it.
async fn cost(args: &TenantsBench, runners: usize) -> anyhow::Result<Value> {
    let b = Arc::new(bed(args, runners).await?);
    let light = args.cost_iterations;
    let heavy = light.saturating_mul(100);
    let mut tasks = Vec::new();
    for tenant in [FLOOD, QUIET] {
        let token = b.tokens[tenant].clone();
        let digest = b.upload(&token, "limits").await?;
        let spec = json!({"component": digest, "limits": {"fuel": 10_000_000_000u64},
                          "retry": {"max_attempts": 1}});
        tasks.push(b.define(&token, "spin", spec).await?);
    }
    let store = b.app.state.store.clone();
    // Enough of each for the span at the fair share: flood's heavy jobs
    // are few, quiet's many.
    let (flood_jobs, quiet_jobs) = (args.flood / 50, args.flood);
    let mut left = (flood_jobs, quiet_jobs);
    while left != (0, 0) {
        for (tenant, task, iterations, n) in [
            (FLOOD, &tasks[0], heavy, &mut left.0),
            (QUIET, &tasks[1], light, &mut left.1),
        ] {
            let k = (*n).min(MAX_BATCH as u64 / 10);
            if k > 0 {
                let input = json!({"op": "spin", "iterations": iterations});
                backlog(&b, (tenant, task, 0), &input, k).await?;
                *n -= k;
            }
        }
    }
    progress("both tenants backlogged");
    // Measure over a span in which both still have work queued, after the
    // first attempts have ended and each tenant's cost is known.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let snapshot = |b: &Bed| {
        (
            ran_of(b, FLOOD),
            ran_of(b, QUIET),
            started_of(b, FLOOD),
            started_of(b, QUIET),
        )
    };
    let before = snapshot(&b);
    let t0 = Instant::now();
    let span = loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (f, q) = (
            store.tenant_usage(FLOOD).await?.jobs.queued,
            store.tenant_usage(QUIET).await?.jobs.queued,
        );
        let span = t0.elapsed();
        if f < flood_jobs / 10 || q < quiet_jobs / 10 || span > Duration::from_secs(5) {
            break span;
        }
    };
    let after = snapshot(&b);
    eprintln!(" done");
    let (fr, qr) = (
        (after.0 - before.0).as_secs_f64(),
        (after.1 - before.1).as_secs_f64(),
    );
    let report = json!({
        "weights": {"flood": 1, "quiet": 1},
        "iterations": {"flood": heavy, "quiet": light},
        "seconds": span.as_secs_f64(),
        "flood_runner_seconds": fr,
        "quiet_runner_seconds": qr,
        "flood_started": after.2 - before.2,
        "quiet_started": after.3 - before.3,
        "quiet_share": qr / (fr + qr).max(f64::MIN_POSITIVE),
        "quiet_fair_share": 0.5,
    });
    let counts = store.job_counts().await?;
    if counts.iter().any(|(s, _)| *s == JobStatus::Failed) {
        bail!("jobs failed: {counts:?}");
    }
    Bed::stop(b).await?;
    Ok(report)
}

pub fn main(args: TenantsBench) -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let client_thread = |name: &str| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name(name)
            .enable_all()
            .build()
            .context("cannot start a client's runtime")
    };
    let (flood_rt, quiet_rt) = (client_thread("bench-flood")?, client_thread("bench-quiet")?);
    let clients = Clients {
        flood: flood_rt.handle().clone(),
        quiet: quiet_rt.handle().clone(),
    };
    let runners = args
        .runners
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let want = |p: Phase| args.only.is_none_or(|o| o == p);
    let mut report = Map::new();
    report.insert("runners".into(), json!(runners));
    rt.block_on(async {
        for (p, name) in [
            (Phase::Alone, "alone"),
            (Phase::Flood, "flood"),
            (Phase::Burn, "burn"),
        ] {
            if want(p) {
                progress(&format!("phase {name}"));
                report.insert(name.into(), phase(&args, runners, p, &clients).await?);
                eprintln!(" done");
            }
        }
        if want(Phase::Share) {
            report.insert("share".into(), share(&args, runners).await?);
        }
        if want(Phase::Cost) {
            report.insert("cost".into(), cost(&args, runners).await?);
        }
        Ok::<_, anyhow::Error>(())
    })?;
    flood_rt.shutdown_background();
    quiet_rt.shutdown_background();
    let p99 = |report: &Map<String, Value>, phase: &str| {
        report
            .get(phase)
            .and_then(|p| p["quiet_enqueue_to_start"]["p99_ms"].as_f64())
    };
    if let Some(alone) = p99(&report, "alone") {
        for phase in ["flood", "burn"] {
            if let Some(under) = p99(&report, phase) {
                report.insert(format!("{phase}_p99_ratio"), json!(under / alone));
            }
        }
    }
    let report = Value::Object(report);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "tenants benchmark · {runners} runners · the quiet tenant enqueues every {} ms",
        args.interval_ms
    );
    for phase in ["alone", "flood", "burn"] {
        let Some(p) = report.get(phase) else { continue };
        let l = &p["quiet_enqueue_to_start"];
        println!(
            "  {phase:<6} quiet enqueue→start p50 {:.3} ms · p99 {:.3} ms · max {:.3} ms · {:.0} jobs/s offered, all started · flood {:.0} starts/s",
            l["p50_ms"].as_f64().unwrap_or_default(),
            l["p99_ms"].as_f64().unwrap_or_default(),
            l["max_ms"].as_f64().unwrap_or_default(),
            p["quiet_offered_per_second"].as_f64().unwrap_or_default(),
            p["flood_started_per_second"].as_f64().unwrap_or_default(),
        );
        let ms = |k: &str, q: &str| p[k][q].as_f64().unwrap_or_default();
        println!(
            "         the 201: p50 {:.3} ms · p99 {:.3} ms",
            ms("quiet_enqueue_to_ack", "p50_ms"),
            ms("quiet_enqueue_to_ack", "p99_ms"),
        );
        println!(
            "         the {} jobs claimed in claims of their own: enqueue→claim p50 {:.3} ms · p99 {:.3} ms; claim→start p50 {:.3} ms · p99 {:.3} ms",
            p["quiet_claimed_alone"].as_u64().unwrap_or_default(),
            ms("quiet_enqueue_to_claim", "p50_ms"),
            ms("quiet_enqueue_to_claim", "p99_ms"),
            ms("quiet_claim_to_start", "p50_ms"),
            ms("quiet_claim_to_start", "p99_ms"),
        );
    }
    for phase in ["flood", "burn"] {
        if let Some(r) = report.get(format!("{phase}_p99_ratio")) {
            println!(
                "  p99 under {phase} / alone: {:.2}× (bar: ≤ 2×)",
                r.as_f64().unwrap_or_default()
            );
        }
    }
    if let Some(s) = report.get("share") {
        println!(
            "  share  both backlogged, weights 1:3 → quiet got {:.1} % of {} starts and {:.1} % of the runner time in {:.2} s (fair: 75 %)",
            s["quiet_share"].as_f64().unwrap_or_default() * 100.0,
            s["flood_started"].as_f64().unwrap_or_default() + s["quiet_started"].as_f64().unwrap_or_default(),
            s["quiet_runner_share"].as_f64().unwrap_or_default() * 100.0,
            s["seconds"].as_f64().unwrap_or_default(),
        );
    }
    if let Some(c) = report.get("cost") {
        let f = |k: &str| c[k].as_f64().unwrap_or_default();
        println!(
            "  cost   both backlogged, weights 1:1, flood's jobs 100× quiet's → quiet had {:.1} % of {:.2} s of runner time in {:.2} s (fair: 50 %); starts flood {} · quiet {}",
            f("quiet_share") * 100.0,
            f("flood_runner_seconds") + f("quiet_runner_seconds"),
            f("seconds"),
            c["flood_started"],
            c["quiet_started"],
        );
    }
    Ok(ExitCode::SUCCESS)
}
