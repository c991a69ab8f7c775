//! A bench's bed: a fresh database (SQLite, or one made on a PostgreSQL
//! server), a store and registry on it, and the no-op task defined.

use super::QueueBench;
use anyhow::bail;
use anyhow::Context;
use serde_json::json;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use taskbox::api::auth::DEFAULT_TENANT;
use taskbox::quota::Quotas;
use taskbox::registry::spec::TaskSpec;
use taskbox::registry::Registry;
use taskbox::runner::Runner;
use taskbox::runner::RunnerConfig;
use taskbox::runner::RunnerEvent;
use taskbox::sandbox::Limits;
use taskbox::sandbox::Sandbox;
use taskbox::sandbox::SandboxConfig;
use taskbox::store;
use taskbox::store::Durability;
use taskbox::store::Finalized;
use taskbox::store::JobStore;
use taskbox::store::NewJob;
use taskbox::store::StoreOptions;
use taskbox::store::SystemClock;
use taskbox::store::TaskRef;
use tokio::sync::Notify;

/// A database of its own for one part: SQLite in the part's temporary
/// dir, or one made on the PostgreSQL server given.
pub(super) struct Db {
    pub(super) url: String,
    /// The server and the database's name, to drop it after.
    made: Option<(String, String)>,
}

impl Db {
    pub(super) async fn new(args: &QueueBench, dir: &std::path::Path) -> anyhow::Result<Db> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let Some(server) = &args.database_url else {
            return Ok(Db {
                url: format!("sqlite://{}", dir.join("taskbox.db").display()),
                made: None,
            });
        };
        if taskbox::store::Backend::of(server) != Some(taskbox::store::Backend::Postgres) {
            bail!("--database-url takes a postgres:// URL; without it the bench uses SQLite");
        }
        let name = format!(
            "taskbox_bench_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let url = taskbox::store::postgres::admin::create_database(server, &name)
            .await
            .with_context(|| format!("cannot make a database for the bench on {server}"))?;
        Ok(Db {
            url,
            made: Some((server.clone(), name)),
        })
    }

    pub(super) async fn drop(self) {
        if let Some((server, name)) = self.made {
            if let Err(e) = taskbox::store::postgres::admin::drop_database(&server, &name).await {
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
    insert_shaped(b, n, |_, _| {}).await
}

/// Inserts `n` jobs due now, 2000 per write, each plain job shaped by
/// `shape` (given its number, from 0) before it goes in.
pub(super) async fn insert_shaped(
    b: &Bed,
    n: u64,
    mut shape: impl FnMut(u64, &mut NewJob),
) -> anyhow::Result<()> {
    let mut ids = ulid::Generator::new();
    let mut left = n;
    let mut i = 0u64;
    while left > 0 {
        let n = left.min(2000);
        let batch = (0..n)
            .map(|_| {
                let mut j = job(
                    &b.task,
                    ids.generate().map(|u| u.to_string()).unwrap_or_default(),
                );
                shape(i, &mut j);
                i += 1;
                j
            })
            .collect();
        for r in b.store.job_insert(batch).await? {
            r?;
        }
        left -= n;
    }
    Ok(())
}

/// Runs the bed's `jobs` jobs left to run to completion: the seconds it
/// took. Fails unless each of them completed (jobs cancelled before, as a
/// debounce's replaced ones are, aside); the bed is closed and dropped.
pub(super) async fn burn_down(b: Bed, runners: usize, jobs: u64) -> anyhow::Result<f64> {
    use taskbox::job::JobStatus::{Cancelled, Completed};
    let started = std::time::Instant::now();
    let runner = run_until_completed(&b, runners, jobs).await;
    let seconds = started.elapsed().as_secs_f64();
    runner.stop(std::time::Duration::from_secs(5)).await;
    let counts = b.store.job_counts().await?;
    let ran: Vec<_> = counts.iter().filter(|(s, _)| *s != Cancelled).collect();
    if ran != [&(Completed, jobs)] {
        anyhow::bail!("not every job completed: {counts:?}");
    }
    b.store.close().await;
    b.db.drop().await;
    Ok(seconds)
}

/// The end of a claimed job's attempt as a runner writes it: completed,
/// with its attempt and usage, as a no-op guest leaves it.
pub(super) fn completed(c: &taskbox::store::ClaimedJob) -> taskbox::store::Finalize {
    taskbox::store::Finalize {
        id: c.id.clone(),
        tenant: c.tenant.clone(),
        lease_token: c.lease_token.clone(),
        action: taskbox::store::Action::Complete {
            output: "{}".into(),
        },
        attempt: Some(taskbox::store::AttemptRecord {
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
        usage: Some(taskbox::store::Usage {
            fuel: 1000,
            wall_ms: 0,
            runner_us: 10,
            http_requests: 0,
            http_bytes: 0,
        }),
        callbacks: None,
        names: c.names(),
        steps: Vec::new(),
        close_children: None,
    }
}

pub(super) fn job(task: &TaskRef, id: String) -> NewJob {
    NewJob::plain(id, DEFAULT_TENANT, task.clone(), "{}")
}

/// Starts a runner on the bed and answers it once `target` jobs have
/// completed.
pub(super) async fn run_until_completed(b: &Bed, runners: usize, target: u64) -> Runner {
    let completed = Arc::new(AtomicU64::new(0));
    let all_done = Arc::new(Notify::new());
    let (count, done) = (completed.clone(), all_done.clone());
    let hook = Arc::new(move |e: RunnerEvent| {
        if let RunnerEvent::Finalized {
            result: Finalized::Done(taskbox::job::JobStatus::Completed),
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
