//! Command-line interface: the flags, and which subcommand runs.

mod admin;
mod bench;
mod build;
mod client;
mod events;
pub mod format;
mod grants;
mod health;
mod init;
mod job;
mod job_batch;
mod job_view;
mod migrate;
mod queue;
mod replay;
mod run;
mod schedule;
mod secret;
mod serve;
mod sse;
mod table;
mod task;
mod task_verify;
mod tenant;
mod token;
mod webhook;
mod workflow;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

pub use bench::BenchArgs;
pub use run::RunArgs;
pub use serve::{DurabilityArg, ServeArgs};

/// taskbox: a durable job queue whose jobs are sandboxed WebAssembly.
#[derive(Debug, Parser)]
#[command(name = "taskbox", version, about, long_about = None)]
pub struct Cli {
    /// How log lines are written to stderr: `pretty` for people, `json` (one object a line) for collectors.
    #[arg(
        long,
        global = true,
        env = "TASKBOX_LOG_FORMAT",
        value_enum,
        default_value = "pretty"
    )]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Pretty,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the queue: the HTTP API, runners and maintenance, on one data dir.
    Serve(ServeArgs),
    /// Run runners and maintenance, no API, on a PostgreSQL queue others share.
    Worker(serve::WorkerArgs),
    /// Migrate a database's schema to this version, then exit.
    Migrate(migrate::MigrateArgs),
    /// Start a task project (rust, js, ts, python or go) with the guest SDK, an example input and a test.
    Init(init::InitArgs),
    /// Build a task project into dist/task.wasm (and dist/schema.json) with its toolchain.
    Build(build::BuildArgs),
    /// Upload and inspect tasks on a server (TASKBOX_URL, TASKBOX_TOKEN).
    #[command(subcommand)]
    Task(task::TaskCmd),
    /// Enqueue, follow, list and cancel jobs on a server.
    #[command(subcommand)]
    Job(job::JobCmd),
    /// The tenant's job events: those up to now, or followed as they happen.
    Events(events::EventsArgs),
    /// Webhooks: send job events to a URL, see how their deliveries went.
    #[command(subcommand)]
    Webhook(webhook::WebhookCmd),
    /// Workflows: push a definition, list them, show one.
    #[command(subcommand)]
    Workflow(workflow::WorkflowCmd),
    /// Cron schedules: define, list, trigger, pause, resume and delete them.
    #[command(subcommand)]
    Schedule(schedule::ScheduleCmd),
    /// Secrets: write-only values the tasks that declare them read.
    #[command(subcommand)]
    Secret(secret::SecretCmd),
    /// Queues: their depths and how long their oldest due job has waited.
    #[command(subcommand)]
    Queue(queue::QueueCmd),
    /// Tenants: create them, set their weights and quotas, see their usage.
    #[command(subcommand)]
    Tenant(admin::TenantCmd),
    /// Tokens: mint, list and revoke them (admin token).
    #[command(subcommand)]
    Token(token::TokenCmd),
    /// Run one attempt of a task locally, in the same sandbox the server uses.
    Run(RunArgs),
    /// Ask a server whether it and its database answer (exit status 0 or 1).
    Health(health::HealthArgs),
    /// Compile one component from stdin into an artifact on stdout, within limits: what a
    /// server runs in a child process for each compile (not for people).
    #[command(name = "__compile", hide = true)]
    Compile(crate::sandbox::compiler::ChildArgs),
    /// Measure taskbox on this machine: runs `taskbox-bench`, built beside this program
    /// (`taskbox bench --help` lists the benches).
    #[command(disable_help_flag = true)]
    Bench(BenchArgs),
}

/// Every `TASKBOX_*` variable taskbox reads: each flag's (of every command) and those read
/// without a flag, sorted. The server refuses any other, so a misspelling does not pass for a
/// default.
pub fn known_variables() -> Vec<String> {
    fn walk(cmd: &clap::Command, names: &mut std::collections::BTreeSet<String>) {
        names.extend(
            cmd.get_arguments()
                .filter_map(|arg| arg.get_env())
                .map(|env| env.to_string_lossy().into_owned()),
        );
        for sub in cmd.get_subcommands() {
            walk(sub, names);
        }
    }
    let mut names = std::collections::BTreeSet::new();
    walk(&<Cli as clap::CommandFactory>::command(), &mut names);
    names.extend(
        crate::config::UNFLAGGED_VARIABLES
            .iter()
            .map(|(name, _)| (*name).to_owned()),
    );
    names.into_iter().collect()
}

/// Logs to stderr, filtered by `TASKBOX_LOG`, else `RUST_LOG`, else
/// warnings only (the benches' program sets them up the same way).
pub fn init_logs(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TASKBOX_LOG")
        .or_else(|_| tracing_subscriber::EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Pretty => logs.init(),
        // The spans' fields (tenant, job, attempt, task) on every line.
        LogFormat::Json => logs
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .init(),
    }
}

/// Runs the chosen subcommand; its exit code, or an error for status 2.
pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve(args) => serve::main(args),
        Command::Worker(args) => serve::worker(args),
        Command::Migrate(args) => migrate::main(args),
        Command::Init(args) => init::main(args),
        Command::Build(args) => build::main(args),
        Command::Task(cmd) => task::main(cmd),
        Command::Job(cmd) => job::main(cmd),
        Command::Events(args) => events::main(args),
        Command::Webhook(cmd) => webhook::main(cmd),
        Command::Workflow(cmd) => workflow::main(cmd),
        Command::Schedule(cmd) => schedule::main(cmd),
        Command::Secret(cmd) => secret::main(cmd),
        Command::Queue(cmd) => queue::main(cmd),
        Command::Tenant(cmd) => admin::tenant_main(cmd),
        Command::Token(cmd) => token::main(cmd),
        Command::Run(args) => run::main(args),
        Command::Health(args) => health::main(args),
        Command::Compile(args) => Ok(crate::sandbox::compiler::child_main(args)),
        Command::Bench(args) => bench::main(args),
    }
}

#[cfg(test)]
mod tests {
    use super::known_variables;
    use crate::config::check_environment;

    /// Each flag's variable is known because the flag names it: one a list once forgot
    /// (`TASKBOX_CLAIM_AHEAD_MS` was refused as unknown) passes, a misspelling of it does not.
    #[test]
    fn every_flags_variable_is_known_and_a_misspelling_is_not() {
        let known = known_variables();
        for name in [
            "TASKBOX_CLAIM_AHEAD_MS",
            "TASKBOX_COMPILE_SLOTS",
            "TASKBOX_OTLP_ENDPOINT",
            "TASKBOX_URL",
            "TASKBOX_CACHE_DIR",
            "TASKBOX_ADMIN_TOKEN",
            "TASKBOX_LOG",
        ] {
            assert!(known.iter().any(|k| k == name), "{name} is not known");
            let vars = [(name.to_owned(), "1".to_owned())];
            assert!(
                check_environment(vars.into_iter(), &known).is_ok(),
                "{name}"
            );
        }
        let vars = [("TASKBOX_CLAIM_AHEAD".to_owned(), "1".to_owned())];
        let err = check_environment(vars.into_iter(), &known).unwrap_err();
        assert!(err.contains("did you mean TASKBOX_CLAIM_AHEAD_MS"), "{err}");
    }
}
