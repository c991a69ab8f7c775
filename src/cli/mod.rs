//! Command-line interface: the flags, and which subcommand runs.

mod bench;
mod format;
mod run;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

pub use bench::BenchArgs;
pub use run::RunArgs;

/// taskbox: a durable job queue whose jobs are sandboxed WebAssembly.
#[derive(Debug, Parser)]
#[command(name = "taskbox", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one attempt of a task locally, in the same sandbox the server uses.
    Run(RunArgs),
    /// Measure taskbox on this machine.
    #[command(subcommand)]
    Bench(BenchArgs),
}

/// Runs the chosen subcommand; its exit code, or an error for status 2.
pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Run(args) => run::main(args),
        Command::Bench(args) => bench::main(args),
    }
}
