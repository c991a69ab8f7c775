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
    cli::init_logs(cli.log_format);
    match cli::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("taskbox: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
