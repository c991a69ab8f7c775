//! The `taskbox-bench` program, which `taskbox bench` runs: parse, set up
//! logging, dispatch.

use clap::Parser;
use std::process::ExitCode;

/// The product's allocator (see its `main.rs`): the benches that run a
/// queue in this process measure it as `taskbox` runs it.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let cli = taskbox_bench::Cli::parse();
    taskbox::cli::init_logs(taskbox::cli::LogFormat::Pretty);
    match taskbox_bench::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("taskbox bench: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
