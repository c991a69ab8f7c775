//! `taskbox bench queue`: burn-down of pre-inserted no-op jobs, enqueue→start
//! latency, and HTTP enqueue throughput, each on a fresh data dir.

use crate::api::auth::DEFAULT_TENANT;
use crate::app::App;
use crate::config::ServeConfig;
use crate::enqueue::{Caller, Enqueuer, JobSpec};
use crate::quota::Quotas;
use crate::registry::spec::TaskSpec;
use crate::registry::Registry;
use crate::runner::{Runner, RunnerConfig, RunnerEvent};
use crate::sandbox::{Limits, Sandbox, SandboxConfig};
use crate::store::{
    self, Durability, Finalized, JobStore, NewJob, StoreOptions, SystemClock, TaskRef,
};
use anyhow::{bail, Context};
use clap::Args;
use serde_json::json;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, Notify};

#[derive(Debug, Args)]
pub struct QueueBench {
    /// Where the built guests are (noop.wasm).
    #[arg(long, default_value = "target/guests")]
    pub guests: PathBuf,
    /// Jobs pre-inserted for the burn-down.
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(100..=10_000_000))]
    pub jobs: u64,
    /// How hard commits are kept.
    #[arg(long, value_enum, default_value = "full")]
    pub durability: super::serve::DurabilityArg,
    /// Attempts run at once [default: the number of cores]
    #[arg(long)]
    pub runners: Option<usize>,
    /// Enqueue→start samples (after 100 warm-up ones).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..=1_000_000))]
    pub samples: u64,
    /// Concurrent HTTP clients enqueueing.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub clients: u64,
    /// Jobs enqueued over HTTP.
    #[arg(long, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(100..=10_000_000))]
    pub http_jobs: u64,
    /// Jobs enqueued in batches of 1000 by one client (rounded up to a
    /// whole batch).
    #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1_000..=10_000_000))]
    pub batch_jobs: u64,
    /// Finished jobs pruned by `--only prune`.
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1_000..=10_000_000))]
    pub prune_jobs: u64,
    /// Run on PostgreSQL: each part on a database of its own, made on
    /// this server and dropped after (default: SQLite in a temporary dir).
    #[arg(long)]
    pub database_url: Option<String>,
    /// Burn down with this many `taskbox worker` processes instead of
    /// runners in this process (PostgreSQL only; timed from their spawn).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=64))]
    pub workers: u64,
    /// Measure only this part (default: all but `store` and `prune`).
    #[arg(long, value_enum)]
    pub only: Option<QueuePart>,
    /// Print the figures as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum QueuePart {
    BurnDown,
    Latency,
    Http,
    Batch,
    Store,
    /// Pruning `--prune-jobs` finished jobs, and enqueue→start meanwhile.
    Prune,
    /// The burn-down without webhooks, with one that wants one event
    /// (refused three times), and with one that wants every completion,
    /// interleaved, three times.
    Webhooks,
    /// Plain jobs against one-step and three-step workflow jobs of the
    /// same no-op task, interleaved, three times.
    Workflows,
}

/// A store, registry and no-op task on a fresh data dir.
/// A database of its own for one part: SQLite in the part's temporary
/// dir, or one made on the PostgreSQL server given.
pub(super) struct Db {
    pub(super) url: String,
    /// The server and the database's name, to drop it after.
    made: Option<(String, String)>,
}

impl Db {
    async fn new(args: &QueueBench, dir: &std::path::Path) -> anyhow::Result<Db> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let Some(server) = &args.database_url else {
            return Ok(Db {
                url: format!("sqlite://{}", dir.join("taskbox.db").display()),
                made: None,
            });
        };
        if crate::store::Backend::of(server) != Some(crate::store::Backend::Postgres) {
            bail!("--database-url takes a postgres:// URL; without it the bench uses SQLite");
        }
        let name = format!(
            "taskbox_bench_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let url = crate::store::postgres::admin::create_database(server, &name)
            .await
            .with_context(|| format!("cannot make a database for the bench on {server}"))?;
        Ok(Db {
            url,
            made: Some((server.clone(), name)),
        })
    }

    pub(super) async fn drop(self) {
        if let Some((server, name)) = self.made {
            if let Err(e) = crate::store::postgres::admin::drop_database(&server, &name).await {
                eprintln!("taskbox bench queue: cannot drop the database {name}: {e}");
            }
        }
    }
}

pub(super) struct Bed {
    _dir: tempfile::TempDir,
    pub(super) db: Db,
    pub(super) store: Arc<dyn JobStore>,
    pub(super) registry: Arc<Registry>,
    pub(super) task: TaskRef,
}

pub(super) async fn bed(args: &QueueBench, durability: Durability) -> anyhow::Result<Bed> {
    let dir = tempfile::tempdir().context("cannot make a temporary data dir")?;
    let db = Db::new(args, dir.path()).await?;
    let store = store::open(
        &StoreOptions {
            url: db.url.clone(),
            durability,
            quotas: Quotas::SERVER_DEFAULTS,
            migrate: true,
        },
        Arc::new(SystemClock),
    )
    .await?;
    store.tenant_insert(DEFAULT_TENANT).await?;
    let sandbox = Sandbox::new(SandboxConfig {
        cache_dir: Some(dir.path().join("compiled")),
        ..SandboxConfig::default()
    })?;
    let registry = Arc::new(Registry::new(
        store.clone(),
        sandbox,
        Limits::DEFAULT,
        Quotas::default(),
    ));
    let path = args.guests.join("noop.wasm");
    let bytes = std::fs::read(&path).with_context(|| {
        format!(
            "cannot read {} (build the guests first: scripts/build-guests)",
            path.display()
        )
    })?;
    let (component, _) = registry.upload(DEFAULT_TENANT, bytes).await?;
    let spec: TaskSpec = serde_json::from_value(json!({"component": component.digest}))?;
    let tv = registry.define(DEFAULT_TENANT, "noop", spec).await?;
    let task = TaskRef {
        name: tv.record.name.clone(),
        version: tv.record.version,
        digest: tv.record.digest.clone(),
    };
    Ok(Bed {
        _dir: dir,
        db,
        store,
        registry,
        task,
    })
}

/// Inserts `n` plain jobs due now, 2000 per write.
pub(super) async fn insert_plain(b: &Bed, n: u64) -> anyhow::Result<()> {
    let mut ids = ulid::Generator::new();
    let mut left = n;
    while left > 0 {
        let n = left.min(2000);
        let batch = (0..n)
            .map(|_| {
                job(
                    &b.task,
                    ids.generate().map(|u| u.to_string()).unwrap_or_default(),
                )
            })
            .collect();
        for r in b.store.job_insert(batch).await? {
            r?;
        }
        left -= n;
    }
    Ok(())
}

/// The end of a claimed job's attempt as a runner writes it: completed,
/// with its attempt and usage, as a no-op guest leaves it.
pub(super) fn completed(c: &crate::store::ClaimedJob) -> crate::store::Finalize {
    crate::store::Finalize {
        id: c.id.clone(),
        tenant: c.tenant.clone(),
        lease_token: c.lease_token.clone(),
        action: crate::store::Action::Complete {
            output: "{}".into(),
        },
        attempt: Some(crate::store::AttemptRecord {
            attempt: c.attempts,
            task: c.task.clone(),
            started_at: c.started_at,
            finished_at: c.started_at,
            outcome: "completed".into(),
            error: None,
            fuel_used: 1000,
            peak_memory_bytes: 65536,
            log: None,
            network: None,
        }),
        usage: Some(crate::store::Usage {
            fuel: 1000,
            wall_ms: 0,
            http_requests: 0,
            http_bytes: 0,
        }),
        callbacks: None,
        names: c.names(),
        steps: Vec::new(),
        close_children: None,
    }
}

fn job(task: &TaskRef, id: String) -> NewJob {
    NewJob::plain(id, DEFAULT_TENANT, task.clone(), "{}")
}

pub(super) fn runners(args: &QueueBench) -> usize {
    args.runners
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

pub(super) fn durability(args: &QueueBench) -> Durability {
    match args.durability {
        super::serve::DurabilityArg::Full => Durability::Full,
        super::serve::DurabilityArg::Normal => Durability::Normal,
    }
}

/// User + system CPU time of this process so far (Linux), in seconds.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

pub(super) fn progress(what: &str) {
    eprint!("taskbox bench queue: {what}…");
    let _ = std::io::stderr().flush();
}

async fn burn_down(args: &QueueBench) -> anyhow::Result<serde_json::Value> {
    let b = bed(args, durability(args)).await?;
    progress(&format!("inserting {} jobs", args.jobs));
    insert_plain(&b, args.jobs).await?;
    eprintln!(" done");
    if args.workers > 0 {
        progress(&format!(
            "burning down with {} worker processes",
            args.workers
        ));
        let r = super::bench_workers::burn_down(
            &b.db.url,
            args.jobs,
            args.workers as usize,
            runners(args),
            &format!("{:?}", durability(args)).to_lowercase(),
        )
        .await?;
        eprintln!(" done");
        b.store.close().await;
        b.db.drop().await;
        return Ok(r);
    }
    progress("burning down");
    let cpu0 = cpu_seconds();
    let started = Instant::now();
    let runner = run_until_completed(&b, runners(args), args.jobs).await;
    let elapsed = started.elapsed();
    let cpu = cpu_seconds().zip(cpu0).map(|(a, b)| a - b);
    eprintln!(" done");
    runner.stop(Duration::from_secs(5)).await;
    let counts = b.store.job_counts().await?;
    if counts != vec![(crate::job::JobStatus::Completed, args.jobs)] {
        bail!("not every job completed: {counts:?}");
    }
    b.store.close().await;
    b.db.drop().await;
    let rate = args.jobs as f64 / elapsed.as_secs_f64();
    Ok(json!({
        "jobs": args.jobs,
        "seconds": elapsed.as_secs_f64(),
        "jobs_per_second": rate,
        // CPU time of the whole process over the burn-down: how busy the cores were.
        "cpu_seconds": cpu,
        "cpu_us_per_job": cpu.map(|c| c / args.jobs as f64 * 1e6),
    }))
}

/// Starts a runner on the bed and answers it once `target` jobs have
/// completed.
pub(super) async fn run_until_completed(b: &Bed, runners: usize, target: u64) -> Runner {
    let completed = Arc::new(AtomicU64::new(0));
    let all_done = Arc::new(Notify::new());
    let (count, done) = (completed.clone(), all_done.clone());
    let hook = Arc::new(move |e: RunnerEvent| {
        if let RunnerEvent::Finalized {
            result: Finalized::Done(crate::job::JobStatus::Completed),
            ..
        } = e
        {
            if count.fetch_add(1, Ordering::Relaxed) + 1 == target {
                done.notify_one();
            }
        }
    });
    let runner = Runner::start(
        b.registry.clone(),
        RunnerConfig {
            on_event: Some(hook),
            ..RunnerConfig::new(runners)
        },
        Arc::new(Notify::new()),
    );
    all_done.notified().await;
    runner
}

async fn latency(args: &QueueBench) -> anyhow::Result<serde_json::Value> {
    let b = bed(args, durability(args)).await?;
    let waiting: Arc<Mutex<HashMap<String, oneshot::Sender<Instant>>>> = Arc::default();
    // Through the enqueue path the id is not known before the call; the
    // enqueues are one at a time, so the next start is the one.
    let next: Arc<Mutex<Option<oneshot::Sender<Instant>>>> = Arc::default();
    let (w, n) = (waiting.clone(), next.clone());
    let hook = Arc::new(move |e: RunnerEvent| {
        if let RunnerEvent::Started { id, at, .. } = e {
            let tx = w.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
            let tx = tx.or_else(|| n.lock().unwrap_or_else(|p| p.into_inner()).take());
            if let Some(tx) = tx {
                let _ = tx.send(at);
            }
        }
    });
    let wake = Arc::new(Notify::new());
    let runner = Arc::new(Runner::start(
        b.registry.clone(),
        RunnerConfig {
            on_event: Some(hook),
            ..RunnerConfig::new(runners(args))
        },
        wake.clone(),
    ));
    let enqueuer = Enqueuer::new(b.registry.clone(), runner.clone());
    // Two ways a job reaches a runner, each timed from its enqueue call to
    // its attempt's start: through the enqueue path (`Enqueuer`, which
    // `POST /v1/jobs` calls: the task's rules, then the runner's insert
    // and a claim for its tenant); and inserted by the store alone, then claimed by the claim
    // loop once woken (a job enqueued by another process, or while the
    // runner was full).
    let mut ids = ulid::Generator::new();
    let mut timed = Vec::new();
    for by_runner in [true, false] {
        progress(&format!(
            "{} sequential enqueues{}",
            args.samples + 100,
            if by_runner {
                " through the enqueue path"
            } else {
                ", claimed by the claim loop"
            }
        ));
        let (mut from_call, mut from_ack) = (Vec::new(), Vec::new());
        for i in 0..(args.samples + 100) {
            let (tx, rx) = oneshot::channel();
            let t0;
            if by_runner {
                *next.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx);
                t0 = Instant::now();
                let spec = JobSpec::of(b.task.name.clone(), json!({}));
                enqueuer
                    .enqueue(DEFAULT_TENANT, spec, None, Caller::Tenant)
                    .await?;
            } else {
                let id = ids.generate().map(|u| u.to_string()).unwrap_or_default();
                waiting
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(id.clone(), tx);
                t0 = Instant::now();
                let jobs = vec![job(&b.task, id)];
                b.store
                    .job_insert(jobs)
                    .await?
                    .into_iter()
                    .next()
                    .context("no answer")??;
            }
            let acked = Instant::now();
            if !by_runner {
                wake.notify_one();
            }
            let at = tokio::time::timeout(Duration::from_secs(10), rx)
                .await
                .context("a job did not start within 10 s")??;
            if i >= 100 {
                from_call.push(at.saturating_duration_since(t0));
                from_ack.push(at.saturating_duration_since(acked));
            }
        }
        eprintln!(" done");
        timed.push((from_call, from_ack));
    }
    runner.stop(Duration::from_secs(5)).await;
    b.store.close().await;
    b.db.drop().await;
    let mut timed = timed.into_iter();
    let (api_call, api_ack) = timed.next().unwrap_or_default();
    let (loop_call, loop_ack) = timed.next().unwrap_or_default();
    Ok(json!({
        "samples": args.samples,
        "enqueue_call_to_start": percentiles(api_call),
        "acknowledged_to_start": percentiles(api_ack),
        "by_the_claim_loop": {
            "enqueue_call_to_start": percentiles(loop_call),
            "acknowledged_to_start": percentiles(loop_ack),
        },
    }))
}

/// p50, p99 and the largest of durations, in ms (`null`s for none).
pub(super) fn percentiles(mut v: Vec<Duration>) -> serde_json::Value {
    if v.is_empty() {
        return json!({"p50_ms": null, "p99_ms": null, "max_ms": null});
    }
    v.sort();
    let pick = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1000.0;
    json!({"p50_ms": pick(0.5), "p99_ms": pick(0.99), "max_ms": pick(1.0)})
}

/// A server on a fresh database with no runners, and the no-op task
/// defined on it: what the HTTP parts enqueue into.
struct HttpBed {
    _dir: tempfile::TempDir,
    db: Db,
    app: App,
    url: String,
    client: reqwest::Client,
}

const TOKEN: &str = "bench-admin-token-0123456789";

async fn http_bed(args: &QueueBench) -> anyhow::Result<HttpBed> {
    let dir = tempfile::tempdir()?;
    let db = Db::new(args, dir.path()).await?;
    let started = App::start(ServeConfig {
        listen: Some("127.0.0.1:0".parse()?),
        migrate: true,
        data_dir: dir.path().to_path_buf(),
        database_url: db.url.clone(),
        runners: 0,
        durability: durability(args),
        queues: None,
        grace: Duration::from_secs(5),
        lease: Duration::from_millis(crate::runner::LEASE_MS),
        max_body_bytes: 1 << 20,
        max_component_bytes: 64 << 20,
        admin_token: Some(TOKEN.into()),
        max_instances: 64,
        compile_cache: None,
        quotas: Quotas::SERVER_DEFAULTS,
        rules: Default::default(),
        retention: Default::default(),
        observer: None,
        webhooks: crate::webhooks::WebhookConfig::default(),
        network: crate::sandbox::NetworkConfig::default(),
        max_event_streams: crate::api::DEFAULT_MAX_EVENT_STREAMS,
        metrics_listen: None,
        metrics_per_tenant: false,
        secrets_key_file: None,
        schedule_min_interval: crate::schedule::firer::DEFAULT_MIN_INTERVAL,
        compile: crate::config::CompileSettings::default(),
        http: crate::config::HttpSettings::default(),
    })
    .await?;
    let app = started.app;
    let url = format!(
        "http://{}",
        app.addr.context("the bench server has no API")?
    );
    let client = crate::http::default_client();
    let noop = std::fs::read(args.guests.join("noop.wasm")).context("cannot read noop.wasm")?;
    let up: serde_json::Value = client
        .post(format!("{url}/v1/components"))
        .bearer_auth(TOKEN)
        .body(noop)
        .send()
        .await?
        .json()
        .await?;
    let put = client
        .put(format!("{url}/v1/tasks/noop"))
        .bearer_auth(TOKEN)
        .body(json!({"component": up["digest"], "input_schema": {"type": "object"}}).to_string())
        .send()
        .await?;
    if !put.status().is_success() {
        bail!("cannot define the task: {}", put.text().await?);
    }
    Ok(HttpBed {
        _dir: dir,
        db,
        app,
        url,
        client,
    })
}

async fn http(args: &QueueBench) -> anyhow::Result<serde_json::Value> {
    let HttpBed {
        _dir,
        db,
        app,
        url,
        client,
    } = http_bed(args).await?;
    progress(&format!(
        "{} enqueues from {} clients",
        args.http_jobs, args.clients
    ));
    let next = Arc::new(AtomicU64::new(0));
    let failures = Arc::new(AtomicU64::new(0));
    // Parsed once: the clients share this process's cores with the server,
    // and parsing the URL for every request showed in its profile.
    let endpoint = reqwest::Url::parse(&format!("{url}/v1/jobs"))?;
    let t0 = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..args.clients {
        let (client, url, next, failures, total) = (
            client.clone(),
            endpoint.clone(),
            next.clone(),
            failures.clone(),
            args.http_jobs,
        );
        tasks.push(tokio::spawn(async move {
            while next.fetch_add(1, Ordering::Relaxed) < total {
                let r = client
                    .post(url.clone())
                    .bearer_auth(TOKEN)
                    .body(r#"{"task": "noop", "input": {"n": 1}}"#)
                    .send()
                    .await;
                if !matches!(r, Ok(ref resp) if resp.status() == 201) {
                    failures.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for t in tasks {
        t.await?;
    }
    let elapsed = t0.elapsed();
    eprintln!(" done");
    app.stop().await;
    db.drop().await;
    let failed = failures.load(Ordering::Relaxed);
    if failed > 0 {
        bail!("{failed} enqueues were not acknowledged with 201");
    }
    Ok(json!({
        "jobs": args.http_jobs,
        "clients": args.clients,
        "seconds": elapsed.as_secs_f64(),
        "jobs_per_second": args.http_jobs as f64 / elapsed.as_secs_f64(),
    }))
}

#[derive(serde::Deserialize)]
struct BatchAnswer {
    jobs: Vec<BatchItem>,
}

#[derive(serde::Deserialize)]
struct BatchItem {
    id: Option<String>,
}

/// One client sending `POST /v1/jobs/batch` of a thousand jobs, one
/// request after another's answer: jobs written per second, and how long
/// each request took.
async fn batch(args: &QueueBench) -> anyhow::Result<serde_json::Value> {
    let bed = http_bed(args).await?;
    const PER_BATCH: u64 = crate::enqueue::MAX_BATCH as u64;
    let total = args.batch_jobs.div_ceil(PER_BATCH) * PER_BATCH;
    progress(&format!(
        "{total} jobs in batches of {PER_BATCH} from one client"
    ));
    let endpoint = reqwest::Url::parse(&format!("{}/v1/jobs/batch", bed.url))?;
    // Each batch's text made before the clock starts: the client's work
    // is not the server's.
    let bodies: Vec<String> = (0..total / PER_BATCH)
        .map(|b| {
            let jobs: Vec<serde_json::Value> = (0..PER_BATCH)
                .map(|i| json!({"task": "noop", "input": {"n": b * PER_BATCH + i}}))
                .collect();
            json!({ "jobs": jobs }).to_string()
        })
        .collect();
    let mut took = Vec::with_capacity(bodies.len());
    let t0 = Instant::now();
    for body in bodies {
        let t = Instant::now();
        let resp = bed
            .client
            .post(endpoint.clone())
            .bearer_auth(TOKEN)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await?;
        let status = resp.status();
        let text = resp.bytes().await?;
        took.push(t.elapsed());
        // Read only what is checked: every item a job with an id.
        let answer: BatchAnswer = match serde_json::from_slice(&text) {
            Ok(a) if status.is_success() => a,
            _ => bail!(
                "a batch was refused ({status}): {}",
                String::from_utf8_lossy(&text)
            ),
        };
        if answer.jobs.len() as u64 != PER_BATCH || answer.jobs.iter().any(|j| j.id.is_none()) {
            bail!(
                "a job of a batch was refused: {}",
                String::from_utf8_lossy(&text)
            );
        }
    }
    let elapsed = t0.elapsed();
    eprintln!(" done");
    let queued = bed.app.state.store.job_counts().await?;
    bed.app.stop().await;
    bed.db.drop().await;
    if queued != vec![(crate::job::JobStatus::Queued, total)] {
        bail!("not every job was written: {queued:?}");
    }
    Ok(json!({
        "jobs": total,
        "per_batch": PER_BATCH,
        "seconds": elapsed.as_secs_f64(),
        "jobs_per_second": total as f64 / elapsed.as_secs_f64(),
        "request": percentiles(took),
    }))
}

pub fn main(args: QueueBench) -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    if args.workers > 0 && args.database_url.is_none() {
        bail!(
            "--workers runs worker processes on a shared queue: give --database-url postgres://…"
        );
    }
    let want = |p: QueuePart| args.only.is_none_or(|o| o == p);
    let mut report = serde_json::Map::new();
    report.insert(
        "durability".into(),
        json!(format!("{:?}", durability(&args)).to_lowercase()),
    );
    report.insert("runners".into(), json!(runners(&args)));
    rt.block_on(async {
        if want(QueuePart::BurnDown) {
            report.insert("burn_down".into(), burn_down(&args).await?);
        }
        if want(QueuePart::Latency) {
            report.insert("latency".into(), latency(&args).await?);
        }
        if want(QueuePart::Http) {
            report.insert("http_enqueue".into(), http(&args).await?);
        }
        if want(QueuePart::Batch) {
            report.insert("batch_enqueue".into(), batch(&args).await?);
        }
        if args.only == Some(QueuePart::Store) {
            report.insert("store".into(), store_only(&args).await?);
        }
        if args.only == Some(QueuePart::Prune) {
            report.insert("prune".into(), super::bench_prune::prune(&args).await?);
        }
        if args.only == Some(QueuePart::Workflows) {
            report.insert(
                "workflows".into(),
                super::bench_workflows::workflows(&args, 3).await?,
            );
        }
        if args.only == Some(QueuePart::Webhooks) {
            report.insert(
                "webhooks".into(),
                super::bench_webhooks::webhooks(&args, 3).await?,
            );
        }
        Ok::<_, anyhow::Error>(())
    })?;
    let report = serde_json::Value::Object(report);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "queue benchmark · durability {} · {} runners",
        report["durability"].as_str().unwrap_or_default(),
        report["runners"]
    );
    if let Some(b) = report.get("burn_down") {
        println!(
            "  burn-down         {:>9.0} jobs/s   ({} no-op jobs in {:.2} s, {})",
            b["jobs_per_second"].as_f64().unwrap_or_default(),
            b["jobs"],
            b["seconds"].as_f64().unwrap_or_default(),
            match b["workers"].as_u64() {
                Some(w) => format!(
                    "{w} worker processes from their spawn; steady 10→90 % {:.0} jobs/s",
                    b["steady_10_90_jobs_per_second"]
                        .as_f64()
                        .unwrap_or_default()
                ),
                None => format!(
                    "{:.0} µs CPU per job",
                    b["cpu_us_per_job"].as_f64().unwrap_or_default()
                ),
            }
        );
    }
    if let Some(l) = report.get("latency") {
        for (name, s, how) in [
            (
                "enqueue→start",
                &l["enqueue_call_to_start"],
                "through the enqueue path, as POST /v1/jobs",
            ),
            (
                "ack→start",
                &l["acknowledged_to_start"],
                "0 when it started before its answer",
            ),
            (
                "  by the loop",
                &l["by_the_claim_loop"]["enqueue_call_to_start"],
                "inserted, then claimed by the claim loop",
            ),
            (
                "  ack→start",
                &l["by_the_claim_loop"]["acknowledged_to_start"],
                "",
            ),
        ] {
            println!(
                "  {name:<17} p50 {:.3} ms · p99 {:.3} ms · max {:.3} ms   ({} samples{}{how})",
                s["p50_ms"].as_f64().unwrap_or_default(),
                s["p99_ms"].as_f64().unwrap_or_default(),
                s["max_ms"].as_f64().unwrap_or_default(),
                l["samples"],
                if how.is_empty() { "" } else { "; " },
            );
        }
    }
    if let Some(h) = report.get("http_enqueue") {
        println!(
            "  HTTP enqueue      {:>9.0} jobs/s   ({} jobs from {} clients, all 201)",
            h["jobs_per_second"].as_f64().unwrap_or_default(),
            h["jobs"],
            h["clients"]
        );
    }
    if let Some(h) = report.get("batch_enqueue") {
        println!(
            "  batch enqueue     {:>9.0} jobs/s   ({} jobs in batches of {} from one client; a request p50 {:.1} ms, p99 {:.1} ms)",
            h["jobs_per_second"].as_f64().unwrap_or_default(),
            h["jobs"],
            h["per_batch"],
            h["request"]["p50_ms"].as_f64().unwrap_or_default(),
            h["request"]["p99_ms"].as_f64().unwrap_or_default(),
        );
    }
    if let Some(p) = report.get("prune") {
        println!(
            "  prune             {:>9.0} jobs/s   ({} finished jobs and {} attempts in {:.1} s)",
            p["jobs_per_second"].as_f64().unwrap_or_default(),
            p["pruned"],
            p["attempts_pruned"],
            p["seconds"].as_f64().unwrap_or_default(),
        );
        for (name, s) in [
            ("enqueue→start", &p["alone"]),
            ("  while pruning", &p["during"]["enqueue_call_to_start"]),
        ] {
            println!(
                "  {name:<17} p50 {:.3} ms · p99 {:.3} ms · max {:.3} ms",
                s["p50_ms"].as_f64().unwrap_or_default(),
                s["p99_ms"].as_f64().unwrap_or_default(),
                s["max_ms"].as_f64().unwrap_or_default(),
            );
        }
    }
    if let Some(w) = report.get("webhooks") {
        for (i, r) in w["rounds"].as_array().into_iter().flatten().enumerate() {
            let rate = |k: &str| r[k]["jobs_per_second"].as_f64().unwrap_or_default();
            println!(
                "  webhooks, round {}: burn-down {:.0} jobs/s without · {:.0} with one rare event ({:.3}×) · {:.0} with every completion ({:.3}×, all {} delivered {:.1} s after the start)",
                i + 1,
                rate("without"),
                rate("rare"),
                r["rare_ratio"].as_f64().unwrap_or_default(),
                rate("every_completion"),
                r["every_completion_ratio"].as_f64().unwrap_or_default(),
                r["every_completion"]["webhook_requests"],
                r["every_completion"]["all_delivered_after_s"].as_f64().unwrap_or_default(),
            );
        }
    }
    if let Some(w) = report.get("workflows") {
        for (i, r) in w["rounds"].as_array().into_iter().flatten().enumerate() {
            let f = |k: &str| r[k].as_f64().unwrap_or_default();
            println!(
                "  workflows, round {}: plain {:.0} jobs/s · one-step {:.0} jobs/s ({:.2}× a plain job's time) · three-step {:.0} jobs/s, {:.0} stages/s ({:.2}× a plain job's time a stage)",
                i + 1,
                f("plain_jobs_per_second"),
                f("one_step_jobs_per_second"),
                f("one_step_vs_plain"),
                f("three_step_jobs_per_second"),
                f("three_step_stages_per_second"),
                f("three_step_stage_vs_plain"),
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Store alone: claim and complete every job, no runner, no sandbox.
pub async fn store_only(args: &QueueBench) -> anyhow::Result<serde_json::Value> {
    let b = bed(args, durability(args)).await?;
    insert_plain(&b, args.jobs).await?;
    progress("store claims");
    let t0 = Instant::now();
    let mut done = 0u64;
    let (mut tc, mut tf) = (Duration::ZERO, Duration::ZERO);
    while done < args.jobs {
        let c0 = Instant::now();
        let claimed = b
            .store
            .job_claim(crate::store::ClaimParams {
                owner: "bench".into(),
                queues: None,
                limit: 512,
                lease_ms: 30_000,
                only_tenants: None,
                begin_each: u32::MAX,
            })
            .await?
            .jobs;
        let fin = claimed.iter().map(completed).collect();
        let f0 = Instant::now();
        tc += f0 - c0;
        done += b.store.job_finalize(fin).await?.len() as u64;
        tf += f0.elapsed();
    }
    let s = t0.elapsed().as_secs_f64();
    b.store.close().await;
    b.db.drop().await;
    Ok(
        json!({"jobs": args.jobs, "seconds": s, "jobs_per_second": args.jobs as f64 / s,
              "claim_us_per_job": tc.as_secs_f64() * 1e6 / args.jobs as f64,
              "finalize_us_per_job": tf.as_secs_f64() * 1e6 / args.jobs as f64}),
    )
}
