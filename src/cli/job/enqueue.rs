//! `taskbox job enqueue`: its flags, the request body built from them, the
//! input read from text, a file or stdin, and `--wait`'s following to the end
//! (a debounced job's successor too).

use super::follow::{events_head, finish, follow, follow_events, get_job, Seen};
use crate::api::views::JobView;
use crate::cli::client::{connect, PrintReply, ServerArgs};
use crate::cli::job_view::one_line;
use crate::cli::table;
use crate::job::JobStatus;
use anyhow::{bail, Context};
use clap::Args;
use serde_json::{json, Map, Value};
use std::io::Read;
use std::process::ExitCode;

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
pub(super) fn enqueue(args: EnqueueArgs) -> anyhow::Result<ExitCode> {
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
pub(super) fn read_input(arg: &str, mut stdin: impl Read) -> anyhow::Result<Value> {
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
#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::job::JobCmd;
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
        Ok(())
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
