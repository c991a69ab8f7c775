//! `taskbox job …`: enqueue jobs, follow them to the end, list, cancel, run, resume, inspect attempts.

use super::client::{
    api_error, connect, is_transient, print_json, Client, PrintReply, Reply, ServerArgs,
};
use super::events::ends_job;
use super::job_view::*;
use super::sse::{self, Item, Stream};
use super::table;
use crate::api::jobs::{AttemptPage, JobPage, RetriedMany};
use crate::api::views::{JobDetail, JobView};
use crate::job::JobStatus;
use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use serde_json::{json, Map, Value};
use std::io::Read;
use std::process::ExitCode;
use std::time::{Duration, Instant};

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

/// `job enqueue`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status with --wait: 0 when the job completed, 1 when it failed or \
was cancelled, 2 on any other error."
)]
pub struct EnqueueArgs {
    /// The task to run.
    #[arg(required_unless_present = "workflow")]
    pub task: Option<String>,
    /// Run this workflow's newest version instead of a task.
    #[arg(long, value_name = "NAME", conflicts_with = "task")]
    pub workflow: Option<String>,
    /// The job's input: JSON text, `@path` to read a file, or `-` for stdin.
    #[arg(long, short)]
    pub input: String,
    /// The queue, instead of the task's default.
    #[arg(long)]
    pub queue: Option<String>,
    /// Among due jobs of a queue, lower numbers run first [server default: 0].
    #[arg(long, allow_negative_numbers = true)]
    pub priority: Option<i32>,
    /// Run no sooner than this many milliseconds from now.
    #[arg(long, value_name = "N", conflicts_with = "run_at")]
    pub delay_ms: Option<u64>,
    /// Run no sooner than this time (RFC 3339, e.g. 2030-01-02T15:04:05Z).
    #[arg(long, value_name = "TIME")]
    pub run_at: Option<String>,
    /// Fail the job with kind `expired`, without running it, if it is still
    /// queued this many milliseconds after it came due.
    #[arg(long, value_name = "N")]
    pub expire_after_ms: Option<u64>,
    /// At most one unfinished job of this task holds this key.
    #[arg(long, value_name = "KEY")]
    pub unique_key: Option<String>,
    /// When an unfinished job holds the unique key: error (the default) or
    /// use-existing (answer that job).
    #[arg(long, value_enum, requires = "unique_key")]
    pub on_conflict: Option<OnConflictArg>,
    /// Whether finished jobs' unique key may be used again: allow (the
    /// default), allow-failed-only, reject.
    #[arg(long, value_enum, requires = "unique_key")]
    pub reuse: Option<ReuseArg>,
    /// Jobs with the same key never run at the same time.
    #[arg(long, value_name = "KEY")]
    pub concurrency_key: Option<String>,
    /// The key the tenant's jobs share the runners' time by (its
    /// concurrency key when left out), e.g. the customer it serves.
    #[arg(long, value_name = "KEY")]
    pub fairness_key: Option<String>,
    /// The fairness key's weight, 1 to 1000 [default: 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub fairness_weight: Option<u32>,
    /// Sending the same key again returns the job of the first request instead of a new one.
    #[arg(long, value_name = "KEY")]
    pub idempotency_key: Option<String>,
    /// Follow the job until it ends: changes on stderr, the output on stdout.
    #[arg(long)]
    pub wait: bool,
    #[command(flatten)]
    pub server: ServerArgs,
    /// Print the job as JSON (the final job with --wait).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum OnConflictArg {
    Error,
    UseExisting,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ReuseArg {
    Allow,
    AllowFailedOnly,
    Reject,
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

/// Polling starts quick, for jobs that take milliseconds, and slows for ones that take minutes.
const POLL_FIRST: Duration = Duration::from_millis(20);
const POLL_MAX: Duration = Duration::from_millis(500);
/// How long to keep polling through a server that does not answer before giving up.
const POLL_OUTAGE: Duration = Duration::from_secs(30);

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
            let reply = client.post(&["v1", "jobs", "retry"]).json(body).send()?;
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

fn enqueue(args: EnqueueArgs) -> anyhow::Result<ExitCode> {
    let input = read_input(&args.input, std::io::stdin())?;
    let body = enqueue_body(&args, input)?;
    let client = connect(&args.server)?;
    // Where the tenant's events stand before the job exists: following
    // from there misses none of the job's events. Read before enqueueing,
    // so that a token that cannot follow enqueues nothing.
    let head = if args.wait {
        events_head(&client)?
    } else {
        None
    };
    let mut call = client.post(&["v1", "jobs"]).json(body);
    if let Some(key) = &args.idempotency_key {
        call = call.header("Idempotency-Key", key.as_str());
    }
    let first = Seen::of(call.send()?)?;
    let id = first.job.id.to_string();
    if !args.wait {
        let replay = if first.reply.status == 200 {
            " (already enqueued with this idempotency key)".to_owned()
        } else {
            match first
                .job
                .debounce
                .as_ref()
                .and_then(|d| d.replaced.as_deref())
            {
                Some(old) => format!(" (in place of job {old}, debounced)"),
                None => String::new(),
            }
        };
        eprintln!("{}{replay}", one_line(&first.job));
        if args.json {
            first.reply.print()?;
        } else {
            println!("{id}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut last = match head {
        Some(head) => follow_events(&client, &id, first, head)?,
        None => follow(&client, &id, first)?,
    };
    // A debounced job's successor runs in its place: follow it instead.
    while let Some(next) = successor(&last.job) {
        eprintln!(
            "{} debounced: job {next} runs in its place; following it",
            table::clock()
        );
        let head = match head {
            Some(_) => events_head(&client)?,
            None => None,
        };
        let first = get_job(&client, &next)?;
        last = match head {
            Some(head) => follow_events(&client, &next, first, head)?,
            None => follow(&client, &next, first)?,
        };
    }
    finish(&last, args.json)
}

/// The job that replaced a job its debounce key cancelled, if it was.
fn successor(job: &JobView) -> Option<String> {
    let d = job.debounce.as_ref()?;
    (job.status == JobStatus::Cancelled)
        .then(|| d.successor.as_deref().map(str::to_owned))
        .flatten()
}

/// `POST /v1/jobs/{id}/{action}` with `body`: the answer, a job.
fn post_to_job(server: &ServerArgs, id: &str, action: &str, body: Value) -> anyhow::Result<Reply> {
    let client = connect(server)?;
    Ok(client.post(&["v1", "jobs", id, action]).json(body).send()?)
}

/// A sighting of a job: the answer as it came (what `--json` prints) and
/// the job read from it (a job's own answer is its detail, which reads as
/// the job too).
pub(super) struct Seen {
    pub(super) reply: Reply,
    pub(super) job: JobView<'static>,
}

impl Seen {
    pub(super) fn of(reply: Reply) -> anyhow::Result<Seen> {
        let job = reply.json()?;
        Ok(Seen { reply, job })
    }
}

/// The `POST /v1/jobs` body: the task, the input, and only the options given.
fn enqueue_body(args: &EnqueueArgs, input: Value) -> anyhow::Result<Value> {
    if let Some(at) = &args.run_at {
        if chrono::DateTime::parse_from_rfc3339(at).is_err() {
            bail!("--run-at {at:?} is not an RFC 3339 time; write e.g. 2030-01-02T15:04:05Z");
        }
    }
    let mut body = Map::new();
    match (&args.task, &args.workflow) {
        (Some(task), _) => body.insert("task".into(), json!(task)),
        (None, Some(workflow)) => body.insert("workflow".into(), json!(workflow)),
        (None, None) => bail!("name the task to run, or --workflow NAME"),
    };
    body.insert("input".into(), input);
    let options = [
        ("queue", args.queue.as_ref().map(|v| json!(v))),
        ("priority", args.priority.map(|v| json!(v))),
        ("delay_ms", args.delay_ms.map(|v| json!(v))),
        ("run_at", args.run_at.as_ref().map(|v| json!(v))),
        ("expire_after_ms", args.expire_after_ms.map(|v| json!(v))),
        ("unique_key", args.unique_key.as_ref().map(|v| json!(v))),
        (
            "on_conflict",
            args.on_conflict.map(|v| match v {
                OnConflictArg::Error => json!("error"),
                OnConflictArg::UseExisting => json!("use_existing"),
            }),
        ),
        (
            "reuse",
            args.reuse.map(|v| match v {
                ReuseArg::Allow => json!("allow"),
                ReuseArg::AllowFailedOnly => json!("allow_failed_only"),
                ReuseArg::Reject => json!("reject"),
            }),
        ),
        (
            "concurrency_key",
            args.concurrency_key.as_ref().map(|v| json!(v)),
        ),
        ("fairness_key", args.fairness_key.as_ref().map(|v| json!(v))),
        ("fairness_weight", args.fairness_weight.map(|v| json!(v))),
    ];
    for (key, value) in options {
        if let Some(v) = value {
            body.insert(key.into(), v);
        }
    }
    Ok(Value::Object(body))
}

/// An `--input` argument: JSON text, `@path`, or `-` for `stdin`; it must parse as JSON.
fn read_input(arg: &str, mut stdin: impl Read) -> anyhow::Result<Value> {
    let (text, from) = if arg == "-" {
        let mut s = String::new();
        stdin
            .read_to_string(&mut s)
            .context("cannot read the input from stdin")?;
        (s, "the input on stdin".to_owned())
    } else if let Some(path) = arg.strip_prefix('@') {
        let s = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the input file {path}"))?;
        (s, format!("the input file {path}"))
    } else {
        (arg.to_owned(), "--input".to_owned())
    };
    if text.trim().is_empty() {
        bail!("{from} is empty; give JSON, e.g. --input '{{}}'");
    }
    serde_json::from_str(&text).map_err(|e| {
        let hint = if from == "--input" {
            " (give JSON text such as '{\"n\": 1}' or '\"a string\"', @path for a file, or - for stdin)"
        } else {
            ""
        };
        anyhow::anyhow!("{from} is not JSON: {e}{hint}")
    })
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

fn is_final(job: &JobView) -> bool {
    matches!(
        job.status,
        JobStatus::Completed | JobStatus::Failed | JobStatus::Cancelled
    )
}

/// Polls the job until it ends, printing each change on stderr; returns the final sighting.
pub(super) fn follow(client: &Client, id: &str, first: Seen) -> anyhow::Result<Seen> {
    let mut seen = first;
    for line in changes(None, &seen.job) {
        eprintln!("{} {line}", table::clock());
    }
    let mut pause = POLL_FIRST;
    let mut told_resume = false;
    let mut outage: Option<Instant> = None;
    while !is_final(&seen.job) {
        if seen.job.status == JobStatus::Waiting && !told_resume {
            eprintln!("  (resume it with `taskbox job resume {id} --input …`)");
            told_resume = true;
        }
        client.pause(pause);
        pause = (pause * 2).min(POLL_MAX);
        let next = match client
            .get(&["v1", "jobs", id])
            .send()
            .map_err(anyhow::Error::from)
        {
            Ok(reply) => Seen::of(reply)?,
            Err(e) if is_transient(&e) => {
                let since = *outage.get_or_insert_with(Instant::now);
                if since.elapsed() > POLL_OUTAGE {
                    return Err(e.context(format!(
                        "lost track of job {id}; see it later with `taskbox job get {id}`"
                    )));
                }
                continue;
            }
            Err(e) => return Err(e),
        };
        outage = None;
        for line in changes(Some(&seen.job), &next.job) {
            eprintln!("{} {line}", table::clock());
        }
        seen = next;
    }
    Ok(seen)
}

/// The tenant's last event now, or `None` from a server older than events
/// (404), whose jobs `--wait` polls instead.
fn events_head(client: &Client) -> anyhow::Result<Option<u64>> {
    match super::events::head(client) {
        Ok(head) => Ok(Some(head)),
        Err(e) => match api_error(&e).map(|a| a.status) {
            Some(404) => Ok(None),
            Some(403) => Err(e.context(
                "--wait follows the job's events (GET /v1/events), which needs the jobs:read \
                 scope; nothing was enqueued",
            )),
            _ => Err(e),
        },
    }
}

/// Follows the job through its events until it ends, printing each change
/// on stderr as the polling `follow` does; then reads the job once and
/// returns it.
fn follow_events(client: &Client, id: &str, first: Seen, head: u64) -> anyhow::Result<Seen> {
    for line in changes(None, &first.job) {
        eprintln!("{} {line}", table::clock());
    }
    // An idempotent replay may answer a job that ended long ago.
    if is_final(&first.job) {
        return Ok(first);
    }
    let resume_note = || eprintln!("  (resume it with `taskbox job resume {id} --input …`)");
    let mut told_resume = first.job.status == JobStatus::Waiting;
    if told_resume {
        resume_note();
    }
    let lost = || format!("lost track of job {id}; see it later with `taskbox job get {id}`");
    let mut max_attempts = Some(u64::from(first.job.max_attempts));
    let mut stream =
        Stream::new(client, vec![("job", id.to_owned())], head).give_up_after(POLL_OUTAGE);
    loop {
        let look = match stream.next().with_context(lost)? {
            // Not without a stop token; but should it end, the job says where it is.
            None => return get_job(client, id).with_context(lost),
            Some(Item::Gap { message }) => {
                // The job's end may be among the pruned events.
                sse::note(&message);
                true
            }
            Some(Item::Event(e)) => {
                if let Some(line) = event_line(&e.json, max_attempts) {
                    eprintln!("{} {line}", table::clock());
                }
                if e.kind == "job.waiting" && !told_resume {
                    resume_note();
                    told_resume = true;
                }
                if moves_max_attempts(&e.json) {
                    let seen = get_job(client, id).with_context(lost)?;
                    max_attempts = Some(u64::from(seen.job.max_attempts));
                }
                ends_job(&e.json)
            }
        };
        if !look {
            continue;
        }
        let seen = get_job(client, id).with_context(lost)?;
        if is_final(&seen.job) {
            // The status line the polling `follow` would end with (it has the attempt's time).
            if let Some(line) = changes(None, &seen.job).into_iter().next() {
                eprintln!("{} {line}", table::clock());
            }
            return Ok(seen);
        }
        // Re-driven between its end and our look: it goes on.
    }
}

/// An event of the job as a line for people, in the words of `changes`;
/// none for its end (the job, read once, says it) or for the enqueue
/// (said already).
fn event_line(e: &Value, max_attempts: Option<u64>) -> Option<String> {
    if ends_job(e) {
        return None;
    }
    let attempt = e["attempt"].as_u64().unwrap_or(0);
    let of = |n: u64| match max_attempts {
        Some(max) => format!("{n}/{max}"),
        None => n.to_string(),
    };
    let runs_at = || {
        e["run_at"]
            .as_str()
            .filter(|at| table::is_future(at))
            .map(|at| format!(", runs at {}", table::time(at)))
            .unwrap_or_default()
    };
    Some(match e["type"].as_str().unwrap_or("?") {
        "job.queued" => match e["reason"].as_str() {
            // A workflow's next stage: its step lines say so.
            Some("next_step") => return None,
            Some(reason) => format!("queued again ({reason}){}", runs_at()),
            None => return None,
        },
        "job.started" => format!("running (attempt {})", of(attempt)),
        "job.failed" => format!(
            "attempt {} failed: {}",
            of(attempt),
            error_value_text(&e["error"])
        ),
        "job.retrying" => match e["fallback"].as_str() {
            Some(task) => format!("fallback task {task} took over"),
            None => format!("queued for attempt {}{}", of(attempt + 1), runs_at()),
        },
        "job.waiting" => format!("waiting for {}", table::cell(&e["waiting_for"])),
        "job.step_started" => format!(
            "{} {} started (task {})",
            step_kind(e),
            table::cell(&e["step"]),
            table::cell(&e["task"])
        ),
        "job.step_ended" => {
            let mut line = format!(
                "{} {} {}",
                step_kind(e),
                table::cell(&e["step"]),
                table::cell(&e["status"])
            );
            if let Some(n) = e["attempts"].as_u64().filter(|n| *n > 0) {
                line.push_str(&format!(
                    " after {n} attempt{}",
                    if n == 1 { "" } else { "s" }
                ));
            }
            line
        }
        other => other.to_owned(),
    })
}

/// How a stage's line names it: `step`, `fallback`, `on_error step`, …
fn step_kind(e: &Value) -> String {
    match e["kind"].as_str().unwrap_or("step") {
        "step" => "step".into(),
        "fallback" => "fallback of".into(),
        other => format!("{other} step"),
    }
}

/// Whether the job's attempts allowed may have changed with this event: a
/// wait or a snooze spares the attempt it used, a fallback brings its own.
/// Rare, so the job is read again rather than the server's rules copied.
fn moves_max_attempts(e: &Value) -> bool {
    match e["type"].as_str() {
        Some("job.waiting") => true,
        Some("job.queued") => e["reason"].is_string(),
        Some("job.retrying") => e["fallback"].is_string(),
        _ => false,
    }
}

/// `GET` the job, waiting out a server that does not answer for a while.
fn get_job(client: &Client, id: &str) -> anyhow::Result<Seen> {
    let mut pause = POLL_FIRST;
    let mut outage: Option<Instant> = None;
    loop {
        match client
            .get(&["v1", "jobs", id])
            .send()
            .map_err(anyhow::Error::from)
        {
            Ok(reply) => return Seen::of(reply),
            Err(e) if is_transient(&e) => {
                let since = *outage.get_or_insert_with(Instant::now);
                if since.elapsed() > POLL_OUTAGE {
                    return Err(e);
                }
                client.pause(pause);
                pause = (pause * 2).min(POLL_MAX);
            }
            Err(e) => return Err(e),
        }
    }
}

/// The end of `--wait`: the output (or the job) on stdout and 0, or the error on stderr and 1.
fn finish(last: &Seen, as_json: bool) -> anyhow::Result<ExitCode> {
    if as_json {
        last.reply.print()?;
    }
    let job = &last.job;
    match job.status {
        JobStatus::Completed => {
            if !as_json {
                print_json(&job.output.as_ref().map(|o| o.value()).unwrap_or_default())?;
            }
            Ok(ExitCode::SUCCESS)
        }
        JobStatus::Failed | JobStatus::Cancelled => {
            let (id, status) = (&job.id, job.status.as_str());
            match &job.error {
                None => eprintln!("job {id} {status}"),
                Some(e) => eprintln!("job {id} {status}: {}", error_text(e)),
            }
            Ok(ExitCode::from(1))
        }
        _ => {
            // Not over (e.g. `job run` that snoozed or waits): say where it stands.
            if !as_json {
                eprintln!("{}", one_line(job));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(subcommand)]
        cmd: JobCmd,
    }

    fn parse(argv: &[&str]) -> Result<JobCmd, clap::Error> {
        Cli::try_parse_from(["taskbox"].iter().chain(argv).copied()).map(|c| c.cmd)
    }

    fn enqueue_args(flags: &[&str]) -> EnqueueArgs {
        let argv: Vec<&str> = ["enqueue", "echo", "--input", "{}", "--token", "t"]
            .into_iter()
            .chain(flags.iter().copied())
            .collect();
        match parse(&argv) {
            Ok(JobCmd::Enqueue(args)) => args,
            other => panic!("not an enqueue: {other:?}"),
        }
    }

    #[test]
    fn unique_key_rules_are_sent_as_the_api_spells_them() -> anyhow::Result<()> {
        let args = enqueue_args(&[
            "--unique-key",
            "k",
            "--on-conflict",
            "use-existing",
            "--reuse",
            "allow-failed-only",
        ]);
        let body = enqueue_body(&args, json!({}))?;
        assert_eq!(body["on_conflict"], "use_existing");
        assert_eq!(body["reuse"], "allow_failed_only");
        // Rules of a key need the key.
        let argv = ["enqueue", "echo", "--input", "{}", "--reuse", "reject"];
        assert!(parse(&argv).is_err());
        Ok(())
    }

    #[test]
    fn a_workflow_is_enqueued_by_name_instead_of_a_task() -> anyhow::Result<()> {
        let argv = ["enqueue", "--workflow", "orders", "--input", "{}"];
        let Ok(JobCmd::Enqueue(args)) = parse(&argv) else {
            panic!("not an enqueue")
        };
        let body = enqueue_body(&args, json!({}))?;
        assert_eq!(body["workflow"], "orders");
        assert!(body.get("task").is_none());
        assert!(parse(&["enqueue", "echo", "--workflow", "w", "--input", "{}"]).is_err());
        assert!(parse(&["enqueue", "--input", "{}"]).is_err());
        let started =
            json!({"type": "job.step_started", "step": "price", "kind": "step", "task": "pricing"});
        assert_eq!(
            event_line(&started, None).as_deref(),
            Some("step price started (task pricing)")
        );
        let ended = json!({"type": "job.step_ended", "step": "tell", "kind": "on_error", "status": "completed", "attempts": 1});
        assert_eq!(
            event_line(&ended, None).as_deref(),
            Some("on_error step tell completed after 1 attempt")
        );
        Ok(())
    }

    #[test]
    fn events_read_as_the_changes_polling_printed() {
        let line = |e: Value| event_line(&e, Some(3));
        let failed = json!({"type": "job.failed", "attempt": 1, "will_retry": true,
                            "error": {"kind": "task_failed", "code": "E", "message": "boom"}});
        assert_eq!(
            line(failed).as_deref(),
            Some("attempt 1/3 failed: task_failed E: boom")
        );
        let retry = json!({"type": "job.retrying", "attempt": 1, "run_at": "2000-01-01T00:00:00Z"});
        assert_eq!(line(retry).as_deref(), Some("queued for attempt 2/3"));
        let started = json!({"type": "job.started", "attempt": 2});
        assert_eq!(line(started).as_deref(), Some("running (attempt 2/3)"));
        assert_eq!(
            event_line(&json!({"type": "job.started", "attempt": 2}), None).as_deref(),
            Some("running (attempt 2)")
        );
        let resumed = json!({"type": "job.queued", "attempt": 1, "reason": "resumed"});
        assert_eq!(
            line(resumed.clone()).as_deref(),
            Some("queued again (resumed)")
        );
        assert!(moves_max_attempts(&resumed));
        let fallback = json!({"type": "job.retrying", "attempt": 3, "fallback": "slow"});
        assert_eq!(
            line(fallback.clone()).as_deref(),
            Some("fallback task slow took over")
        );
        assert!(moves_max_attempts(&fallback));
        // The enqueue and the end are said from the job itself.
        for quiet in [
            json!({"type": "job.queued", "attempt": 0}),
            json!({"type": "job.completed", "attempt": 1}),
            json!({"type": "job.failed", "attempt": 3, "will_retry": false}),
            json!({"type": "job.cancelled", "attempt": 0}),
        ] {
            assert_eq!(line(quiet.clone()), None, "{quiet}");
            assert!(!moves_max_attempts(&quiet), "{quiet}");
        }
    }

    #[test]
    fn input_from_text_file_and_stdin() -> anyhow::Result<()> {
        assert_eq!(read_input("{\"n\": 1}", std::io::empty())?, json!({"n": 1}));
        assert_eq!(read_input("-", &b"[1, 2]"[..])?, json!([1, 2]));
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("in.json");
        std::fs::write(&path, "\"hello\"\n")?;
        let arg = format!("@{}", path.display());
        assert_eq!(read_input(&arg, std::io::empty())?, json!("hello"));
        Ok(())
    }

    #[test]
    fn input_that_is_not_json_says_so() {
        let err = read_input("hello", std::io::empty())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("--input is not JSON"), "{err}");
        assert!(err.contains("@path"), "{err}");
        let err = read_input("-", &b"  "[..]).unwrap_err().to_string();
        assert!(err.contains("stdin is empty"), "{err}");
        let err = format!(
            "{:#}",
            read_input("@/no/such/file", std::io::empty()).unwrap_err()
        );
        assert!(
            err.contains("cannot read the input file /no/such/file"),
            "{err}"
        );
    }

    #[test]
    fn enqueue_body_has_only_the_options_given() -> anyhow::Result<()> {
        let body = enqueue_body(&enqueue_args(&[]), json!({"n": 1}))?;
        assert_eq!(body, json!({"task": "echo", "input": {"n": 1}}));
        let args = enqueue_args(&[
            "--queue",
            "q",
            "--priority",
            "-5",
            "--run-at",
            "2030-01-02T15:04:05Z",
            "--unique-key",
            "u",
            "--concurrency-key",
            "c",
            "--idempotency-key",
            "i",
            "--fairness-key",
            "f",
            "--fairness-weight",
            "2",
        ]);
        assert_eq!(
            enqueue_body(&args, json!(null))?,
            json!({"task": "echo", "input": null, "queue": "q", "priority": -5,
                   "run_at": "2030-01-02T15:04:05Z", "unique_key": "u", "concurrency_key": "c",
                   "fairness_key": "f", "fairness_weight": 2})
        );
        let args = enqueue_args(&["--run-at", "tomorrow"]);
        assert!(enqueue_body(&args, json!({})).is_err());
        assert!(parse(&[
            "enqueue",
            "echo",
            "-i",
            "{}",
            "--delay-ms",
            "1",
            "--run-at",
            "x"
        ])
        .is_err());
        Ok(())
    }
}
