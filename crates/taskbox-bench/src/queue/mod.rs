//! `taskbox bench queue`: burn-down of pre-inserted no-op jobs, enqueue→start
//! latency, and HTTP enqueue throughput, each on a fresh data dir.

mod bed;
mod burn;
mod debounce;
mod http;
mod latency;
mod prune;
mod table;
mod throttle;
mod traces;
mod webhooks;
mod workers;
mod workflows;

use anyhow::bail;
use anyhow::Context;
use clap::Args;
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use taskbox::store::Durability;

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
    pub durability: taskbox::cli::DurabilityArg,
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
    #[command(flatten)]
    pub taskbox: crate::server::Taskbox,
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
    /// Plain jobs against throttled ones (100 keys, none at its limit),
    /// interleaved, three times.
    Throttle,
    /// Plain enqueues against debounced ones (each of its own key, and
    /// over 100 keys, each replacing the one before), interleaved, three
    /// times.
    Debounce,
    /// The burn-down with traces off, made and dropped, and sent over OTLP
    /// to a local receiver, interleaved, three times.
    Traces,
}

pub(super) fn runners(args: &QueueBench) -> usize {
    args.runners
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

pub(super) fn durability(args: &QueueBench) -> Durability {
    args.durability.into()
}

pub(super) fn progress(what: &str) {
    eprint!("taskbox bench queue: {what}…");
    let _ = std::io::stderr().flush();
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
            report.insert("burn_down".into(), burn::burn_down(&args).await?);
        }
        if want(QueuePart::Latency) {
            report.insert("latency".into(), latency::latency(&args).await?);
        }
        if want(QueuePart::Http) {
            report.insert("http_enqueue".into(), http::http(&args).await?);
        }
        if want(QueuePart::Batch) {
            report.insert("batch_enqueue".into(), http::batch(&args).await?);
        }
        if args.only == Some(QueuePart::Store) {
            report.insert("store".into(), burn::store_only(&args).await?);
        }
        if args.only == Some(QueuePart::Prune) {
            report.insert("prune".into(), prune::prune(&args).await?);
        }
        if args.only == Some(QueuePart::Workflows) {
            report.insert("workflows".into(), workflows::workflows(&args, 3).await?);
        }
        if args.only == Some(QueuePart::Throttle) {
            report.insert("throttle".into(), throttle::throttle(&args, 3).await?);
        }
        if args.only == Some(QueuePart::Debounce) {
            report.insert("debounce".into(), debounce::debounce(&args, 3).await?);
        }
        if args.only == Some(QueuePart::Traces) {
            report.insert("traces".into(), traces::traces(&args, 3).await?);
        }
        if args.only == Some(QueuePart::Webhooks) {
            report.insert("webhooks".into(), webhooks::webhooks(&args, 3).await?);
        }
        Ok::<_, anyhow::Error>(())
    })?;
    let report = serde_json::Value::Object(report);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    table::print(&report);
    Ok(ExitCode::SUCCESS)
}
