//! `taskbox bench faults`: the fault harness. One `serve` and N `worker`s
//! on a private PostgreSQL cluster run thousands of jobs while workers are
//! killed (SIGKILL) and restarted, one is stopped (SIGSTOP) past its lease
//! and continued, and the database is crashed (`-m immediate`) and
//! restarted; then the database's records are audited: every acknowledged
//! job ended, none completed twice, no fallback ran twice, every callback
//! enqueued once, every job's events in the outbox once and in order, and
//! every completed job's end delivered to a webhook; and an every-second
//! cron schedule made one job for each of its slots, whichever process led.

mod audit;
mod cluster;
mod fleet;
mod hook;
mod load;
mod table;

use anyhow::Context;
use clap::Args;
use fleet::{Proc, Said, Setup};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
pub struct FaultsArgs {
    /// Where the built guests are (limits.wasm, noop.wasm).
    #[arg(long, default_value = "target/guests")]
    pub guests: PathBuf,
    /// Jobs enqueued, over --spread-secs.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(100..=1_000_000))]
    pub jobs: u64,
    /// Seconds over which the jobs are enqueued (the faults come meanwhile).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub spread_secs: u64,
    /// Worker processes.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=32))]
    pub workers: u64,
    /// Runners of each worker.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub runners: u64,
    /// Workers killed with SIGKILL (and restarted), one at a time.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(0..=10_000))]
    pub kills: u64,
    /// Time between two kills, on average, in ms.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..=600_000))]
    pub kill_every_ms: u64,
    /// The processes' lease (`--lease-ms`): a killed worker's jobs are rescued this long after.
    #[arg(long, default_value_t = 3000, value_parser = clap::value_parser!(u64).range(1000..=600_000))]
    pub lease_ms: u64,
    /// Do not stop a worker with SIGSTOP past its lease.
    #[arg(long)]
    pub no_stop: bool,
    /// Do not crash and restart the database.
    #[arg(long)]
    pub no_db_crash: bool,
    /// After the faults, how long the jobs get to end before those left are counted lost.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub settle_secs: u64,
    /// The PostgreSQL server programs' directory [default: the newest /usr/lib/postgresql/*/bin]
    #[arg(long)]
    pub pg_bin: Option<PathBuf>,
    /// Seed of the faults' random choices [default: from the clock]
    #[arg(long)]
    pub seed: Option<u64>,
    /// Keep the processes' logs (they are kept anyway when the audit fails).
    #[arg(long)]
    pub keep: bool,
    /// Print the counts as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub taskbox: crate::server::Taskbox,
}

/// What the faults were, as they happened.
#[derive(Debug, Default, serde::Serialize)]
struct Faults {
    seed: u64,
    killed: u64,
    restart_failures: u64,
    stopped: u64,
    stopped_for_ms: u64,
    db_crashes: u64,
    db_down_ms: u64,
}

/// A small deterministic generator: the faults of one seed repeat.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Progress, written to stderr itself: in the integration test's process
/// too, past the test harness's capture, so that a run's output shows it.
fn say(what: &str) {
    let _ = writeln!(std::io::stderr(), "taskbox bench faults: {what}");
}

pub fn main(args: FaultsArgs) -> anyhow::Result<ExitCode> {
    let json = args.json;
    let report = report(args)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        table::print(&report);
    }
    Ok(if report["passed"] == true {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Runs the harness and answers its report, whose `passed` says whether
/// all was well (the integration test calls it, with its own `--taskbox`).
pub fn report(args: FaultsArgs) -> anyhow::Result<serde_json::Value> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(run(args))
}

async fn run(args: FaultsArgs) -> anyhow::Result<serde_json::Value> {
    let t0 = Instant::now();
    let bin = cluster::find_bin(args.pg_bin.as_deref())?;
    say(&format!(
        "a private PostgreSQL cluster from {}",
        bin.display()
    ));
    let workers = args.workers as usize;
    // The server's pool, each worker's (twice: a killed one's connections
    // linger until the server notices), the harness's, and spare.
    let connections = 16 * (2 * workers as u32 + 1) + 40;
    let cluster = Arc::new(cluster::Cluster::start(&bin, connections)?);
    let work = tempfile::Builder::new()
        .prefix("taskbox-faults-")
        .tempdir()?;
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    }) | 1;
    let setup = Setup {
        database_url: cluster.url(),
        admin_token: format!("faults-admin-{seed:016x}"),
        lease_ms: args.lease_ms,
        runners: args.runners as usize,
        dir: work.path().to_path_buf(),
        taskbox: args.taskbox.clone(),
    };
    let said = Arc::new(Said::default());
    let (serve, api) = setup.serve(&said)?;
    let mut procs: Vec<Option<Proc>> = Vec::with_capacity(workers);
    for n in 0..workers {
        procs.push(Some(setup.worker(n, &said)?));
    }
    say(&format!(
        "serve at {api} and {workers} workers of {} runners, lease {} ms; logs in {}",
        args.runners,
        args.lease_ms,
        work.path().display()
    ));
    let client = taskbox::http::default_client();
    let hook_got = Arc::new(hook::Got::default());
    let hook_url = hook::start(hook_got.clone()).await?;
    load::define(&client, &api, &setup.admin_token, &args.guests, &hook_url).await?;
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect(&cluster.url())
        .await
        .context("cannot connect to the private cluster")?;

    let enqueued = Arc::new(load::Enqueued::default());
    let enqueuer = tokio::spawn(load::enqueue(
        load::Load {
            client: client.clone(),
            api: api.clone(),
            token: setup.admin_token.clone(),
            jobs: args.jobs,
            clients: 16,
            spread: Duration::from_secs(args.spread_secs),
            give_up_after: Duration::from_secs(120),
        },
        enqueued.clone(),
    ));
    say(&format!(
        "enqueuing {} jobs over {} s; faults meanwhile (seed {seed})",
        args.jobs, args.spread_secs
    ));
    let chaos = {
        let (setup, said, cluster) = (setup.clone(), said.clone(), cluster.clone());
        let plan = Plan {
            kills: args.kills,
            kill_every: Duration::from_millis(args.kill_every_ms),
            stop: !args.no_stop,
            crash: !args.no_db_crash,
            lease: Duration::from_millis(args.lease_ms),
        };
        tokio::task::spawn_blocking(move || faults(plan, seed, &setup, &said, &cluster, procs))
    };
    let (procs, faults) = chaos.await.context("the fault thread failed")??;
    let _ = enqueuer.await;
    load::pause_schedule(&client, &api, &setup.admin_token).await?;
    say(&format!(
        "{} of {} jobs acknowledged; waiting for them to end",
        enqueued.acknowledged.load(Ordering::Relaxed),
        args.jobs
    ));
    let settle = Instant::now();
    let mut last_said = Instant::now();
    loop {
        let left = audit::unfinished(&pool).await.unwrap_or(u64::MAX);
        if left == 0 || settle.elapsed() > Duration::from_secs(args.settle_secs) {
            break;
        }
        if last_said.elapsed() > Duration::from_secs(5) {
            say(&format!("{left} jobs not ended yet"));
            last_said = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // The outbox put in order and every delivery made (after a failed
    // try, another comes within a second).
    let outbox = Instant::now();
    loop {
        let behind = audit::outbox_behind(&pool).await.unwrap_or(u64::MAX);
        if behind == 0 || outbox.elapsed() > Duration::from_secs(120) {
            break;
        }
        if last_said.elapsed() > Duration::from_secs(5) {
            say(&format!("{behind} event rows or deliveries not done yet"));
            last_said = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let ids: Vec<String> = enqueued
        .ids
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .flatten()
        .cloned()
        .collect();
    let delivered = hook_got
        .ends
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let audit = audit::audit(&pool, &ids, &delivered).await?;
    drop(procs);
    serve.kill();
    pool.close().await;
    drop(cluster);

    let fenced_ends = said.fenced_ends.load(Ordering::Relaxed);
    let fenced_renewals = said.fenced_renewals.load(Ordering::Relaxed);
    let unavailable = enqueued.unavailable.load(Ordering::Relaxed);
    let given_up = enqueued.given_up.load(Ordering::Relaxed);
    let passed = audit.clean()
        && hook_got.bad_signatures.load(Ordering::Relaxed) == 0
        && given_up == 0
        && faults.killed >= args.kills
        && (args.no_stop || faults.stopped == 1)
        && (args.no_db_crash || faults.db_crashes == 1);
    let report = json!({
        "passed": passed,
        "jobs": args.jobs,
        "acknowledged": ids.len(),
        "never_acknowledged": given_up,
        "enqueue_unavailable_503": unavailable,
        "enqueue_errors": enqueued.errors.load(Ordering::Relaxed),
        "audit": audit,
        "fenced_writes": fenced_ends + fenced_renewals,
        "fenced_ends": fenced_ends,
        "fenced_renewals": fenced_renewals,
        "ends_not_written": said.unwritten.load(Ordering::Relaxed),
        "webhook": {
            "requests": hook_got.requests.load(Ordering::Relaxed),
            "refused_on_purpose": hook_got.refused.load(Ordering::Relaxed),
            "bad_signatures": hook_got.bad_signatures.load(Ordering::Relaxed),
            "ends_delivered_more_than_once": delivered.values().filter(|n| **n > 1).count(),
        },
        "faults": faults,
        "took_ms": t0.elapsed().as_millis() as u64,
    });
    if !passed {
        // What the processes warned of, where a failed run's logs are not
        // kept (CI): on stderr, beside the report.
        say(&format!(
            "what the processes warned of, most often first:\n{}",
            serde_json::to_string_pretty(&said.warnings())?
        ));
    }
    if !passed || args.keep {
        let kept = work.keep();
        say(&format!(
            "the processes' logs are kept in {}",
            kept.display()
        ));
    }
    Ok(report)
}

/// The faults to bring.
struct Plan {
    kills: u64,
    kill_every: Duration,
    stop: bool,
    crash: bool,
    lease: Duration,
}

/// Brings the faults, one at a time: the kills, with the stop a third of
/// the way through and the database crash two thirds of the way.
fn faults(
    plan: Plan,
    seed: u64,
    setup: &Setup,
    said: &Arc<Said>,
    cluster: &cluster::Cluster,
    mut procs: Vec<Option<Proc>>,
) -> anyhow::Result<(Vec<Option<Proc>>, Faults)> {
    let mut rng = Rng(seed);
    let mut f = Faults {
        seed,
        ..Faults::default()
    };
    let n = procs.len() as u64;
    let pause = |rng: &mut Rng| {
        // Half to one and a half times the average.
        let ms = plan.kill_every.as_millis() as u64;
        std::thread::sleep(Duration::from_millis(ms / 2 + rng.next() % ms.max(1)));
    };
    for k in 0..plan.kills.max(1) {
        if plan.stop && k == plan.kills / 3 {
            let w = (rng.next() % n) as usize;
            if let Some(p) = &procs[w] {
                // Past the lease, and past the rescue that comes after it
                // (maintenance looks three times a lease).
                let hold = plan.lease * 2 + Duration::from_secs(1);
                say(&format!("SIGSTOP worker-{w} for {} ms", hold.as_millis()));
                p.signal(libc::SIGSTOP)?;
                std::thread::sleep(hold);
                p.signal(libc::SIGCONT)?;
                f.stopped += 1;
                f.stopped_for_ms = hold.as_millis() as u64;
            }
        }
        if plan.crash && k == 2 * plan.kills / 3 {
            say("crashing the database (pg_ctl stop -m immediate) and starting it again");
            let down = cluster.crash_and_restart()?;
            f.db_crashes += 1;
            f.db_down_ms = down.as_millis() as u64;
            say(&format!("the database was down {} ms", f.db_down_ms));
        }
        if k >= plan.kills {
            break;
        }
        pause(&mut rng);
        let w = (rng.next() % n) as usize;
        if let Some(p) = procs[w].take() {
            p.kill();
            f.killed += 1;
        }
        // A worker that cannot start (the database restarting) is tried
        // again; one that never starts fails the run.
        let mut tries = 0;
        procs[w] = loop {
            match setup.worker(w, said) {
                Ok(p) => break Some(p),
                Err(e) if tries < 5 => {
                    tries += 1;
                    f.restart_failures += 1;
                    say(&format!("worker-{w} did not start ({e:#}); again"));
                    std::thread::sleep(Duration::from_secs(1));
                }
                Err(e) => return Err(e),
            }
        };
        if (k + 1) % 5 == 0 {
            say(&format!("{} of {} kills", k + 1, plan.kills));
        }
    }
    Ok((procs, f))
}
