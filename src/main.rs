//! The `taskbox` command: parse, set up logging, dispatch.

use clap::Parser;

use std::process::ExitCode;
use taskbox::cli::{self, Cli};

/// glibc's allocator took ~9 % of the server's CPU under HTTP enqueues
/// (many small, short-lived buffers across threads); mimalloc is built for
/// that.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TASKBOX_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    match cli::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("taskbox: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
