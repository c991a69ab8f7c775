//! `taskbox job …`: enqueue jobs, follow them to the end, list, cancel, run, resume, inspect attempts.

use super::client::{print_json, ApiError, Client, ServerArgs, Unreachable};
use super::format::{bytes, duration, thousands};
use super::table::{self, Table};
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
}

/// `job enqueue`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status with --wait: 0 when the job completed, 1 when it failed or \
was cancelled, 2 on any other error."
)]
pub struct EnqueueArgs {
    /// The task to run.
    pub task: String,
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
    /// At most one unfinished job of this task holds this key.
    #[arg(long, value_name = "KEY")]
    pub unique_key: Option<String>,
    /// Jobs with the same key never run at the same time.
    #[arg(long, value_name = "KEY")]
    pub concurrency_key: Option<String>,
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
        JobCmd::Get { id, server, json } => {
            let client = Client::new(&server)?;
            let job = client.get(&["v1", "jobs", &id]).send()?.body;
            if json {
                print_json(&job)?;
            } else {
                print!("{}", job_details(&job)?);
            }
            Ok(ExitCode::SUCCESS)
        }
        JobCmd::List(args) => list(args),
        JobCmd::Cancel { id, server, json } => {
            let client = Client::new(&server)?;
            let job = client.post(&["v1", "jobs", &id, "cancel"]).send()?.body;
            if json {
                print_json(&job)?;
            } else if job["status"] == "cancelled" {
                println!("cancelled job {id}");
            } else if job["cancel_requested"] == true {
                println!("cancel requested for job {id}; its running attempt is being interrupted");
            } else {
                println!("job {id} is {}", table::cell(&job["status"]));
            }
            Ok(ExitCode::SUCCESS)
        }
        JobCmd::Run {
            id,
            wait,
            server,
            json,
        } => run(&id, wait, &server, json),
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
            let client = Client::new(&server)?;
            let job = client
                .post(&["v1", "jobs", &id, "resume"])
                .json(body)
                .send()?
                .body;
            if json {
                print_json(&job)?;
            } else {
                println!("resumed job {id}: {}", table::cell(&job["status"]));
            }
            Ok(ExitCode::SUCCESS)
        }
        JobCmd::Attempts {
            id,
            logs,
            server,
            json,
        } => {
            let client = Client::new(&server)?;
            let reply = client.get(&["v1", "jobs", &id, "attempts"]).send()?.body;
            if json {
                print_json(&reply)?;
                return Ok(ExitCode::SUCCESS);
            }
            let attempts = reply["attempts"].as_array().cloned().unwrap_or_default();
            if attempts.is_empty() {
                eprintln!("job {id} has not run yet");
                return Ok(ExitCode::SUCCESS);
            }
            print!("{}", attempts_table(&attempts, logs));
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn enqueue(args: EnqueueArgs) -> anyhow::Result<ExitCode> {
    let input = read_input(&args.input, std::io::stdin())?;
    let body = enqueue_body(&args, input)?;
    let client = Client::new(&args.server)?;
    let mut call = client.post(&["v1", "jobs"]).json(body);
    if let Some(key) = &args.idempotency_key {
        call = call.header("Idempotency-Key", key.as_str());
    }
    let reply = call.send()?;
    let job = reply.body;
    let id = job["id"]
        .as_str()
        .context("the server's answer has no job id")?
        .to_owned();
    if !args.wait {
        let replay = if reply.status == 200 {
            " (already enqueued with this idempotency key)"
        } else {
            ""
        };
        eprintln!("{}{replay}", one_line(&job));
        if args.json {
            print_json(&job)?;
        } else {
            println!("{id}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let last = follow(&client, &id, job)?;
    finish(&last, args.json)
}

/// The `POST /v1/jobs` body: the task, the input, and only the options given.
fn enqueue_body(args: &EnqueueArgs, input: Value) -> anyhow::Result<Value> {
    if let Some(at) = &args.run_at {
        if chrono::DateTime::parse_from_rfc3339(at).is_err() {
            bail!("--run-at {at:?} is not an RFC 3339 time; write e.g. 2030-01-02T15:04:05Z");
        }
    }
    let mut body = Map::new();
    body.insert("task".into(), json!(args.task));
    body.insert("input".into(), input);
    let options = [
        ("queue", args.queue.as_ref().map(|v| json!(v))),
        ("priority", args.priority.map(|v| json!(v))),
        ("delay_ms", args.delay_ms.map(|v| json!(v))),
        ("run_at", args.run_at.as_ref().map(|v| json!(v))),
        ("unique_key", args.unique_key.as_ref().map(|v| json!(v))),
        (
            "concurrency_key",
            args.concurrency_key.as_ref().map(|v| json!(v)),
        ),
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
    let client = Client::new(&args.server)?;
    let status = args.status.map(|s| s.as_str());
    let reply = client
        .get(&["v1", "jobs"])
        .query("status", status)
        .query("task", args.task.as_ref())
        .query("queue", args.queue.as_ref())
        .query("limit", args.limit)
        .query("cursor", args.cursor.as_ref())
        .send()?
        .body;
    if args.json {
        print_json(&reply)?;
        return Ok(ExitCode::SUCCESS);
    }
    let jobs = reply["jobs"].as_array().cloned().unwrap_or_default();
    if jobs.is_empty() {
        eprintln!("no jobs");
    } else {
        jobs_table(&jobs).print();
    }
    if let Some(cursor) = reply["next_cursor"].as_str() {
        eprintln!("next page: --cursor {cursor}");
    }
    Ok(ExitCode::SUCCESS)
}

fn jobs_table(jobs: &[Value]) -> Table {
    let mut t = Table::new(&["ID", "TASK", "STATUS", "ATTEMPTS", "QUEUE", "CREATED"]).right(&[3]);
    for job in jobs {
        t.row(vec![
            table::cell(&job["id"]),
            task_label(&job["task"]),
            table::cell(&job["status"]),
            attempts_of(job),
            table::cell(&job["queue"]),
            table::time_cell(&job["created_at"]),
        ]);
    }
    t
}

/// `resize v3`, from the `{name, version, digest}` a job or attempt carries.
fn task_label(task: &Value) -> String {
    match (task["name"].as_str(), task["version"].as_u64()) {
        (Some(name), Some(v)) => format!("{name} v{v}"),
        (Some(name), None) => name.to_owned(),
        _ => table::cell(task),
    }
}

/// `1/3`: attempts used out of attempts allowed.
fn attempts_of(job: &Value) -> String {
    format!(
        "{}/{}",
        table::cell(&job["attempts"]),
        table::cell(&job["max_attempts"])
    )
}

/// `timeout: the attempt ran longer than 30000 ms`, with the code when it adds something.
fn error_text(error: &Value) -> String {
    let kind = error["kind"].as_str().unwrap_or("error");
    let code = error["code"]
        .as_str()
        .filter(|c| !c.is_empty() && *c != kind);
    let message = error["message"].as_str().unwrap_or("");
    match code {
        Some(code) => format!("{kind} {code}: {message}"),
        None => format!("{kind}: {message}"),
    }
}

/// What the CLI says right after enqueueing, or after `job run`.
fn one_line(job: &Value) -> String {
    let mut line = format!(
        "{} job {} of task {} on queue {}",
        table::cell(&job["status"]),
        table::cell(&job["id"]),
        task_label(&job["task"]),
        table::cell(&job["queue"]),
    );
    if let Some(at) = job["run_at"].as_str().filter(|at| table::is_future(at)) {
        line.push_str(&format!(", runs at {}", table::time(at)));
    }
    line
}

/// Every field a person may want, skipping the empty ones; input and output as pretty JSON.
fn job_details(job: &Value) -> anyhow::Result<String> {
    let text = |v: &Value| {
        if v.is_null() {
            String::new()
        } else {
            table::cell(v)
        }
    };
    let time = |v: &Value| v.as_str().map(table::time).unwrap_or_default();
    let took = match (job["started_at"].as_str(), job["finished_at"].as_str()) {
        (Some(s), Some(f)) => table::between(s, f).map(duration).unwrap_or_default(),
        _ => String::new(),
    };
    let progress = match &job["progress"] {
        Value::Null => String::new(),
        p => format!("{}% {}", table::cell(&p["percent"]), text(&p["note"]))
            .trim_end()
            .to_owned(),
    };
    let digest = job["task"]["digest"].as_str().unwrap_or_default();
    let task = if digest.is_empty() {
        task_label(&job["task"])
    } else {
        format!("{} ({digest})", task_label(&job["task"]))
    };
    let fallback = if job["fallback"].is_null() {
        String::new()
    } else {
        task_label(&job["fallback"])
    };
    let error = if job["error"].is_null() {
        String::new()
    } else {
        error_text(&job["error"])
    };
    let mut out = table::fields(&[
        ("id", text(&job["id"])),
        ("task", task),
        ("status", text(&job["status"])),
        ("attempts", attempts_of(job)),
        ("queue", text(&job["queue"])),
        ("priority", text(&job["priority"])),
        ("created", time(&job["created_at"])),
        // Only a queued job's run_at says something a person needs.
        (
            "run at",
            if job["status"] == "queued" {
                time(&job["run_at"])
            } else {
                String::new()
            },
        ),
        ("started", time(&job["started_at"])),
        ("finished", time(&job["finished_at"])),
        ("took", took),
        ("deadline", time(&job["deadline_at"])),
        ("unique key", text(&job["unique_key"])),
        ("concurrency key", text(&job["concurrency_key"])),
        ("progress", progress),
        ("waiting for", text(&job["waiting_for"])),
        ("fallback", fallback),
        (
            "cancel",
            if job["cancel_requested"] == true {
                "requested".to_owned()
            } else {
                String::new()
            },
        ),
        ("error", error),
    ]);
    for key in ["input", "output"] {
        if !job[key].is_null() {
            out.push_str(&format!(
                "{key}:\n{}\n",
                serde_json::to_string_pretty(&job[key])?
            ));
        }
    }
    Ok(out)
}

/// What changed between two sightings of a job, as lines for people (`prev` is `None` at first).
fn changes(prev: Option<&Value>, job: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    let differs = |key: &str| prev.is_none_or(|p| p[key] != job[key]);
    if differs("status") || differs("attempts") {
        let attempt = format!(
            "attempt {}/{}",
            table::cell(&job["attempts"]),
            table::cell(&job["max_attempts"])
        );
        let line = match job["status"].as_str().unwrap_or("?") {
            "queued" => {
                let mut line = match job["attempts"].as_u64() {
                    Some(n) if n > 0 => format!(
                        "queued for attempt {}/{}",
                        n + 1,
                        table::cell(&job["max_attempts"])
                    ),
                    _ => "queued".to_owned(),
                };
                if let Some(at) = job["run_at"].as_str().filter(|at| table::is_future(at)) {
                    line.push_str(&format!(", runs at {}", table::time(at)));
                }
                if !job["error"].is_null() {
                    line.push_str(&format!(" (last: {})", error_text(&job["error"])));
                }
                line
            }
            "running" => format!("running ({attempt})"),
            "waiting" => format!("waiting for {}", table::cell(&job["waiting_for"])),
            "completed" => match (job["started_at"].as_str(), job["finished_at"].as_str()) {
                (Some(s), Some(f)) => match table::between(s, f) {
                    Some(d) => format!("completed ({attempt}, {})", duration(d)),
                    None => format!("completed ({attempt})"),
                },
                _ => format!("completed ({attempt})"),
            },
            "failed" => format!("failed ({attempt})"),
            other => other.to_owned(),
        };
        lines.push(line);
    }
    if differs("fallback") && !job["fallback"].is_null() {
        lines.push(format!(
            "fallback task {} took over",
            task_label(&job["fallback"])
        ));
    }
    if differs("progress") && !job["progress"].is_null() {
        let p = &job["progress"];
        let note = p["note"].as_str().unwrap_or("");
        lines.push(
            format!("progress {}% {note}", table::cell(&p["percent"]))
                .trim_end()
                .to_owned(),
        );
    }
    if differs("cancel_requested") && job["cancel_requested"] == true && job["status"] == "running"
    {
        lines.push("cancel requested; interrupting the running attempt".to_owned());
    }
    lines
}

fn is_final(job: &Value) -> bool {
    matches!(
        job["status"].as_str(),
        Some("completed" | "failed" | "cancelled")
    )
}

/// Polls the job until it ends, printing each change on stderr; returns the final job.
fn follow(client: &Client, id: &str, first: Value) -> anyhow::Result<Value> {
    let mut job = first;
    for line in changes(None, &job) {
        eprintln!("{} {line}", table::clock());
    }
    let mut pause = POLL_FIRST;
    let mut told_resume = false;
    let mut outage: Option<Instant> = None;
    while !is_final(&job) {
        if job["status"] == "waiting" && !told_resume {
            eprintln!("  (resume it with `taskbox job resume {id} --input …`)");
            told_resume = true;
        }
        client.pause(pause);
        pause = (pause * 2).min(POLL_MAX);
        let next = match client.get(&["v1", "jobs", id]).send() {
            Ok(reply) => reply.body,
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
        for line in changes(Some(&job), &next) {
            eprintln!("{} {line}", table::clock());
        }
        job = next;
    }
    Ok(job)
}

/// A failure worth waiting out while following a job: no answer, or the server asking for a pause.
fn is_transient(e: &anyhow::Error) -> bool {
    e.downcast_ref::<Unreachable>().is_some()
        || e.downcast_ref::<ApiError>()
            .is_some_and(ApiError::is_transient)
}

/// The end of `--wait`: the output (or the job) on stdout and 0, or the error on stderr and 1.
fn finish(job: &Value, as_json: bool) -> anyhow::Result<ExitCode> {
    if as_json {
        print_json(job)?;
    }
    match job["status"].as_str() {
        Some("completed") => {
            if !as_json {
                print_json(&job["output"])?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(status @ ("failed" | "cancelled")) => {
            let id = table::cell(&job["id"]);
            if job["error"].is_null() {
                eprintln!("job {id} {status}");
            } else {
                eprintln!("job {id} {status}: {}", error_text(&job["error"]));
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
    let client = Client::new(server)?;
    let call = client
        .post(&["v1", "jobs", id, "run"])
        .query("wait", wait.then_some("true"));
    let job = match call.send() {
        Ok(reply) => reply.body,
        // A run that failed is an answer about the job, not an error of the CLI.
        Err(e) => match e.downcast_ref::<ApiError>() {
            Some(api)
                if api.code.as_deref() == Some("JOB_EXECUTION_ERROR")
                    && api.details.is_object() =>
            {
                let job = &api.details;
                if as_json {
                    print_json(job)?;
                }
                let what = if job["error"].is_null() {
                    api.message.clone()
                } else {
                    error_text(&job["error"])
                };
                eprintln!("job {id} {}: {what}", table::cell(&job["status"]));
                return Ok(ExitCode::from(1));
            }
            _ => return Err(e),
        },
    };
    if wait {
        return finish(&job, as_json);
    }
    if as_json {
        print_json(&job)?;
    } else {
        println!("{}", one_line(&job));
    }
    Ok(ExitCode::SUCCESS)
}

/// The attempts table; with `logs`, each attempt's error message and log lines under its row.
fn attempts_table(attempts: &[Value], logs: bool) -> String {
    let mut t = Table::new(&[
        "ATTEMPT", "TASK", "OUTCOME", "ERROR", "DURATION", "FUEL", "PEAK-MEM",
    ])
    .right(&[0, 4, 5, 6]);
    for a in attempts {
        let error = match &a["error"] {
            Value::Null => "-".to_owned(),
            e => {
                let kind = e["kind"].as_str().unwrap_or("error");
                match e["code"].as_str().filter(|c| !c.is_empty() && *c != kind) {
                    Some(code) => format!("{kind} {code}"),
                    None => kind.to_owned(),
                }
            }
        };
        t.row(vec![
            table::cell(&a["attempt"]),
            task_label(&a["task"]),
            table::cell(&a["outcome"]),
            error,
            table::millis(&a["duration_ms"]),
            a["fuel_used"]
                .as_u64()
                .map(thousands)
                .unwrap_or_else(|| "-".into()),
            a["peak_memory_bytes"]
                .as_u64()
                .map(bytes)
                .unwrap_or_else(|| "-".into()),
        ]);
    }
    let lines = t.lines();
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        out.push_str(line);
        out.push('\n');
        let Some(a) = i.checked_sub(1).and_then(|i| attempts.get(i)) else {
            continue;
        };
        if logs {
            out.push_str(&attempt_log(a));
        }
    }
    out
}

/// Under an attempt's row: its error message in full, then its log.
fn attempt_log(a: &Value) -> String {
    let mut out = String::new();
    if !a["error"].is_null() {
        out.push_str(&format!("    error: {}\n", error_text(&a["error"])));
    }
    let log = &a["log"];
    let lines = log["lines"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    for line in lines {
        let at = line["at_ms"].as_f64().unwrap_or(0.0);
        let level = line["level"].as_str().unwrap_or("");
        let source = line["source"].as_str().unwrap_or("");
        let message = line["message"].as_str().unwrap_or("");
        out.push_str(&format!(
            "    [{at:>9.3} ms] {level:<5} {source:<6} {message}\n"
        ));
    }
    let dropped_lines = log["dropped_lines"].as_u64().unwrap_or(0);
    let dropped_bytes = log["dropped_bytes"].as_u64().unwrap_or(0);
    if dropped_lines > 0 || dropped_bytes > 0 {
        out.push_str(&format!(
            "    (log over its budget: {} lines and {} dropped)\n",
            thousands(dropped_lines),
            bytes(dropped_bytes)
        ));
    }
    if lines.is_empty() && log.is_object() && dropped_lines == 0 {
        out.push_str("    (no log lines)\n");
    }
    out
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
        ]);
        assert_eq!(
            enqueue_body(&args, json!(null))?,
            json!({"task": "echo", "input": null, "queue": "q", "priority": -5,
                   "run_at": "2030-01-02T15:04:05Z", "unique_key": "u", "concurrency_key": "c"})
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

    fn job(status: &str, attempts: u64) -> Value {
        json!({"id": "01J", "task": {"name": "echo", "version": 2, "digest": "sha256:ab"},
               "status": status, "queue": "default", "attempts": attempts, "max_attempts": 3,
               "run_at": "2000-01-01T00:00:00.000Z", "error": null, "progress": null,
               "fallback": null, "cancel_requested": false})
    }

    #[test]
    fn status_changes_become_lines() {
        let queued = job("queued", 0);
        assert_eq!(changes(None, &queued), vec!["queued"]);
        assert!(changes(Some(&queued), &queued).is_empty());
        let running = job("running", 1);
        assert_eq!(
            changes(Some(&queued), &running),
            vec!["running (attempt 1/3)"]
        );

        let mut retry = job("queued", 1);
        retry["error"] = json!({"kind": "trap", "code": "trap", "message": "unreachable"});
        assert_eq!(
            changes(Some(&running), &retry),
            vec!["queued for attempt 2/3 (last: trap: unreachable)"]
        );
        // Missed the queued state between two attempts: the attempt number still moved.
        assert_eq!(
            changes(Some(&running), &job("running", 2)),
            vec!["running (attempt 2/3)"]
        );

        let mut progressed = running.clone();
        progressed["progress"] = json!({"percent": 40, "note": "resizing"});
        assert_eq!(
            changes(Some(&running), &progressed),
            vec!["progress 40% resizing"]
        );

        let mut done = job("completed", 1);
        done["started_at"] = json!("2000-01-01T00:00:00.000Z");
        done["finished_at"] = json!("2000-01-01T00:00:00.250Z");
        assert_eq!(
            changes(Some(&progressed), &done),
            vec!["completed (attempt 1/3, 250.00 ms)"]
        );

        let mut fell_back = job("running", 3);
        fell_back["fallback"] = json!({"name": "echo-slow", "version": 1, "digest": "d"});
        assert_eq!(
            changes(Some(&running), &fell_back),
            vec![
                "running (attempt 3/3)",
                "fallback task echo-slow v1 took over"
            ]
        );

        let mut cancelling = running.clone();
        cancelling["cancel_requested"] = json!(true);
        assert_eq!(
            changes(Some(&running), &cancelling),
            vec!["cancel requested; interrupting the running attempt"]
        );

        let mut waiting = job("waiting", 1);
        waiting["waiting_for"] = json!({"approval": "alice"});
        assert_eq!(
            changes(Some(&running), &waiting),
            vec!["waiting for {\"approval\":\"alice\"}"]
        );
    }

    #[test]
    fn errors_read_as_kind_code_message() {
        assert_eq!(
            error_text(&json!({"kind": "task_failed", "code": "E_SIZE", "message": "too big"})),
            "task_failed E_SIZE: too big"
        );
        assert_eq!(
            error_text(&json!({"kind": "timeout", "code": "timeout", "message": "over 30 s"})),
            "timeout: over 30 s"
        );
    }

    #[test]
    fn tables_of_jobs_and_attempts() {
        let lines = jobs_table(&[job("failed", 3)]).lines();
        assert_eq!(
            lines,
            vec![
                "ID   TASK     STATUS  ATTEMPTS  QUEUE    CREATED",
                "01J  echo v2  failed       3/3  default  -",
            ]
        );
        let attempts = [
            json!({"attempt": 1, "task": {"name": "echo", "version": 2}, "outcome": "retried",
                   "error": {"kind": "task_failed", "code": "E", "message": "boom"},
                   "duration_ms": 12.5, "fuel_used": 12345, "peak_memory_bytes": 2097152,
                   "log": {"lines": [{"at_ms": 1.5, "level": "info", "source": "guest", "message": "hi"}],
                           "dropped_lines": 2, "dropped_bytes": 10}}),
            json!({"attempt": 2, "task": {"name": "echo", "version": 2}, "outcome": "completed",
                   "error": null, "duration_ms": 3, "fuel_used": 10, "peak_memory_bytes": 65536,
                   "log": null}),
        ];
        assert_eq!(
            attempts_table(&attempts, false),
            "ATTEMPT  TASK     OUTCOME    ERROR          DURATION    FUEL  PEAK-MEM\n\
             \x20     1  echo v2  retried    task_failed E  12.50 ms  12,345   2.0 MiB\n\
             \x20     2  echo v2  completed  -               3.00 ms      10  64.0 KiB\n"
        );
        let with_logs = attempts_table(&attempts, true);
        assert!(
            with_logs.contains(
                "2.0 MiB\n    error: task_failed E: boom\n    [    1.500 ms] info  guest  hi\n    (log over its budget: 2 lines and 10 B dropped)\n      2"
            ),
            "{with_logs}"
        );
    }

    #[test]
    fn details_skip_what_is_empty() -> anyhow::Result<()> {
        let mut j = job("completed", 1);
        j["output"] = json!({"ok": true});
        let text = job_details(&j)?;
        assert!(
            text.starts_with("id        01J\ntask      echo v2 (sha256:ab)\nstatus    completed\n"),
            "{text}"
        );
        assert!(!text.contains("error"), "{text}");
        assert!(text.ends_with("output:\n{\n  \"ok\": true\n}\n"), "{text}");
        Ok(())
    }
}
