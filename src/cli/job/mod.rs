//! `taskbox job …`: the subcommands and their dispatch; list, cancel, run,
//! resume, retry and attempts, each a request and its answer shown.

mod enqueue;
mod follow;

pub(super) use follow::{follow, Seen};

use super::client::{api_error, connect, PrintReply, Reply, ServerArgs};
use super::job_view::*;
use crate::api::jobs::{AttemptPage, JobPage, RetriedMany};
use crate::api::views::{JobDetail, JobView};
use crate::job::JobStatus;
use anyhow::Context;
use clap::{Args, Subcommand};
use enqueue::{enqueue, read_input, EnqueueArgs};
use follow::finish;
use serde_json::{json, Value};
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum JobCmd {
    /// Enqueue a job of a task; print its id, or follow it with --wait.
    Enqueue(EnqueueArgs),
    /// Enqueue many jobs from JSON lines, a thousand per request.
    Batch(super::job_batch::BatchArgs),
    /// Show one job.
    Get {
        /// The job's id.
        id: String,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the job as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List jobs, newest first.
    List(ListArgs),
    /// Cancel a queued or waiting job; a running one is interrupted.
    Cancel {
        /// The job's id.
        id: String,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the job as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run a job now, ahead of queue order (needs the jobs:run scope).
    #[command(
        after_help = "Exit status with --wait: 0 when the job completed, 1 when it failed \
or was cancelled, 2 on any other error."
    )]
    Run {
        /// The job's id.
        id: String,
        /// Wait for the run to end and print its output.
        #[arg(long)]
        wait: bool,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the job as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Resume a job that is waiting, optionally with new input.
    Resume {
        /// The job's id.
        id: String,
        /// Input for the resumed job: JSON text, `@path` to read a file, or `-` for stdin.
        #[arg(long, short)]
        input: Option<String>,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the job as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Retry a failed job: a new series of attempts, on the version it pinned
    /// or, with --latest, on its task's newest.
    Retry {
        /// The job's id.
        id: String,
        /// Run the task's newest version instead of the one the job pinned.
        #[arg(long)]
        latest: bool,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the job as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Retry many failed jobs at once (dead letters), newest first.
    RetryFailed {
        /// Only jobs of this task.
        #[arg(long)]
        task: Option<String>,
        /// Only jobs on this queue.
        #[arg(long)]
        queue: Option<String>,
        /// Only jobs whose error is of this kind (timeout, task_failed, fuel_exhausted, …).
        #[arg(long)]
        kind: Option<String>,
        /// Only jobs whose error has this code.
        #[arg(long)]
        code: Option<String>,
        /// Run each task's newest version instead of the one each job pinned.
        #[arg(long)]
        latest: bool,
        /// At most this many jobs [server default and ceiling: 10000].
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000))]
        limit: Option<u32>,
        /// Every tenant's failed jobs, each charged to its own tenant's
        /// enqueue rate (the admin token only).
        #[arg(long)]
        all_tenants: bool,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show a job's attempts: outcome, error, time, fuel and memory of each.
    Attempts {
        /// The job's id.
        id: String,
        /// Print each attempt's log lines under it.
        #[arg(long)]
        logs: bool,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run a finished attempt again here, on its pinned component, input and
    /// limits, and compare it with what was recorded.
    Replay(super::replay::ReplayArgs),
}
/// `job list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only jobs in this status (queued, running, waiting, completed, failed, cancelled).
    #[arg(long)]
    pub status: Option<crate::job::JobStatus>,
    /// Only jobs of this task.
    #[arg(long)]
    pub task: Option<String>,
    /// Only jobs on this queue.
    #[arg(long)]
    pub queue: Option<String>,
    /// At most this many jobs (the server caps it).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub limit: Option<u32>,
    /// Where the previous page ended (printed under it).
    #[arg(long)]
    pub cursor: Option<String>,
    /// Every tenant's jobs, each naming its tenant (the admin token only).
    #[arg(long)]
    pub all_tenants: bool,
    #[command(flatten)]
    pub server: ServerArgs,
    /// Print the server's answer as JSON.
    #[arg(long)]
    pub json: bool,
}
pub fn main(cmd: JobCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        JobCmd::Enqueue(args) => enqueue(args),
        JobCmd::Batch(args) => super::job_batch::batch(args),
        JobCmd::Get { id, server, json } => {
            let client = connect(&server)?;
            let reply = client.get(&["v1", "jobs", &id]).send()?;
            if json {
                reply.print()?;
            } else {
                print!("{}", job_details(&reply.json::<JobDetail>()?)?);
            }
            Ok(ExitCode::SUCCESS)
        }
        JobCmd::List(args) => list(args),
        JobCmd::Replay(args) => super::replay::replay(args),
        JobCmd::Cancel { id, server, json } => {
            let client = connect(&server)?;
            let reply = client.post(&["v1", "jobs", &id, "cancel"]).send()?;
            if json {
                reply.print()?;
                return Ok(ExitCode::SUCCESS);
            }
            let job: JobView = reply.json()?;
            if job.status == JobStatus::Cancelled {
                println!("cancelled job {id}");
            } else if job.cancel_requested {
                println!("cancel requested for job {id}; its running attempt is being interrupted");
            } else {
                println!("job {id} is {}", job.status.as_str());
            }
            Ok(ExitCode::SUCCESS)
        }
        JobCmd::Run {
            id,
            wait,
            server,
            json,
        } => run(&id, wait, &server, json),
        JobCmd::Retry {
            id,
            latest,
            server,
            json,
        } => {
            let body = if latest {
                json!({"digest": "latest"})
            } else {
                json!({})
            };
            let reply = post_to_job(&server, &id, "retry", body)?;
            if json {
                reply.print()?;
            } else {
                let job: JobView = reply.json()?;
                println!(
                    "retrying job {id} on {} version {}: {}",
                    job.task.name,
                    job.task.version,
                    job.status.as_str()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        JobCmd::RetryFailed {
            task,
            queue,
            kind,
            code,
            latest,
            limit,
            all_tenants,
            server,
            json,
        } => {
            let mut body = json!({
                "filter": {"task": task, "queue": queue, "kind": kind, "code": code},
            });
            if latest {
                body["digest"] = json!("latest");
            }
            if let Some(n) = limit {
                body["limit"] = json!(n);
            }
            let client = connect(&server)?;
            let reply = client
                .post(&["v1", "jobs", "retry"])
                .query("all_tenants", all_tenants.then_some("true"))
                .json(body)
                .send()?;
            if json {
                reply.print()?;
            } else {
                let done: RetriedMany = reply.json()?;
                println!(
                    "retried {} failed jobs{}{}",
                    done.retried,
                    match done.refused {
                        0 => String::new(),
                        n => format!(
                            "; {n} refused (a unique key taken since, or the tenant's max_queued)"
                        ),
                    },
                    if done.more {
                        "; more match: run it again"
                    } else {
                        ""
                    }
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        JobCmd::Resume {
            id,
            input,
            server,
            json,
        } => {
            let body = match input {
                Some(arg) => json!({ "input": read_input(&arg, std::io::stdin())? }),
                None => json!({}),
            };
            let reply = post_to_job(&server, &id, "resume", body)?;
            if json {
                reply.print()?;
            } else {
                let job: JobView = reply.json()?;
                println!("resumed job {id}: {}", job.status.as_str());
            }
            Ok(ExitCode::SUCCESS)
        }
        JobCmd::Attempts {
            id,
            logs,
            server,
            json,
        } => {
            let client = connect(&server)?;
            let reply = client.get(&["v1", "jobs", &id, "attempts"]).send()?;
            if json {
                reply.print()?;
                return Ok(ExitCode::SUCCESS);
            }
            let page: AttemptPage = reply.json()?;
            if page.attempts.is_empty() {
                eprintln!("job {id} has not run yet");
                return Ok(ExitCode::SUCCESS);
            }
            print!("{}", attempts_table(&page.attempts, logs));
            Ok(ExitCode::SUCCESS)
        }
    }
}
/// `POST /v1/jobs/{id}/{action}` with `body`: the answer, a job.
fn post_to_job(server: &ServerArgs, id: &str, action: &str, body: Value) -> anyhow::Result<Reply> {
    let client = connect(server)?;
    Ok(client.post(&["v1", "jobs", id, action]).json(body).send()?)
}
fn list(args: ListArgs) -> anyhow::Result<ExitCode> {
    let client = connect(&args.server)?;
    let status = args.status.map(|s| s.as_str());
    let reply = client
        .get(&["v1", "jobs"])
        .query("status", status)
        .query("task", args.task.as_ref())
        .query("queue", args.queue.as_ref())
        .query("limit", args.limit)
        .query("cursor", args.cursor.as_ref())
        .query("all_tenants", args.all_tenants.then_some("true"))
        .send()?;
    if args.json {
        reply.print()?;
        return Ok(ExitCode::SUCCESS);
    }
    let page: JobPage = reply.json()?;
    if page.jobs.is_empty() {
        eprintln!("no jobs");
    } else {
        jobs_table(&page.jobs, args.all_tenants).print();
    }
    if let Some(cursor) = &page.next_cursor {
        eprintln!("next page: --cursor {cursor}");
    }
    Ok(ExitCode::SUCCESS)
}
fn run(id: &str, wait: bool, server: &ServerArgs, as_json: bool) -> anyhow::Result<ExitCode> {
    let client = connect(server)?;
    let call = client
        .post(&["v1", "jobs", id, "run"])
        .query("wait", wait.then_some("true"));
    let seen = match call.send().map_err(anyhow::Error::from) {
        Ok(reply) => Seen::of(reply)?,
        // A run that failed is an answer about the job, not an error of the CLI.
        Err(e) => match api_error(&e) {
            Some(api)
                if api.code.as_deref() == Some("JOB_EXECUTION_ERROR")
                    && api.details.is_object() =>
            {
                if as_json {
                    // The job, as the error's details carry it.
                    println!("{}", serde_json::to_string(&api.details)?);
                }
                let job: JobView = serde_json::from_value(api.details.clone())
                    .context("the server's failed run carries a job this taskbox cannot read")?;
                let what = match &job.error {
                    None => api.message.clone(),
                    Some(e) => error_text(e),
                };
                eprintln!("job {id} {}: {what}", job.status.as_str());
                return Ok(ExitCode::from(1));
            }
            _ => return Err(e),
        },
    };
    if wait {
        return finish(&seen, as_json);
    }
    if as_json {
        seen.reply.print()?;
    } else {
        println!("{}", one_line(&seen.job));
    }
    Ok(ExitCode::SUCCESS)
}
