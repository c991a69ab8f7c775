//! The `taskbox` command: parse, set up logging, dispatch.

use clap::Parser;

use std::process::ExitCode;
use taskbox::cli::{self, Cli};

/// glibc's malloc and free took ~9 % of the process's CPU under HTTP
/// enqueues. jemalloc, measured against glibc and mimalloc in interleaved
/// runs: HTTP enqueue on SQLite +20 %, the SQLite burn-down's CPU per job
/// 30 -> 26 µs; mimalloc gained as much on HTTP but slowed worker processes'
/// start by ~100 ms (the burn-down's first 10 % by a third).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // TASKBOX_LOG, else RUST_LOG, else warnings only.
    let filter = tracing_subscriber::EnvFilter::try_from_env("TASKBOX_LOG")
        .or_else(|_| tracing_subscriber::EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match cli.log_format {
        cli::LogFormat::Pretty => logs.init(),
        // The spans' fields (tenant, job, attempt, task) on every line.
        cli::LogFormat::Json => logs
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .init(),
    }
    match cli::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("taskbox: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
