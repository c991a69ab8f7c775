//! taskbox's benchmarks and its fault harness: `taskbox bench …`, a program
//! of its own beside the product, which it drives as a library and starts
//! as servers and workers.

pub mod common;
pub mod faults;
pub mod outbound;
pub mod queue;
pub mod sandbox;
pub mod server;
pub mod tenants;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Measure taskbox on this machine.
#[derive(Debug, Parser)]
#[command(name = "taskbox bench", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub bench: Bench,
}

#[derive(Debug, Subcommand)]
pub enum Bench {
    /// Per-attempt cost, metering overhead and how fast a runaway guest is stopped.
    Sandbox(sandbox::SandboxBench),
    /// Burn-down, enqueue→start latency and HTTP enqueue throughput of the queue.
    Queue(queue::QueueBench),
    /// What one tenant's flood costs another: latency and share.
    Tenants(tenants::TenantsBench),
    /// What the host adds to a guest's outbound HTTP request, against the same request made directly.
    Http(outbound::HttpBench),
    /// The fault harness: serve + workers on a private PostgreSQL while workers are killed, stopped and the database crashes; audits that no job is lost or completed twice.
    Faults(faults::FaultsArgs),
}

/// Runs the chosen bench; its exit code, or an error for status 2.
pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.bench {
        Bench::Sandbox(a) => sandbox::main(a),
        Bench::Queue(a) => queue::main(a),
        Bench::Tenants(a) => tenants::main(a),
        Bench::Http(a) => outbound::main(a),
        Bench::Faults(a) => faults::main(a),
    }
}
