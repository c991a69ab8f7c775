//! `taskbox task …`: upload a component as a new task version, list tasks, show one.

use super::client::{connect, PrintReply, ServerArgs};
use super::format::bytes;
use super::table::{self, short_digest, Table};
use crate::api::registry::{Component, TaskDefined, TaskList};
use crate::api::views::{TaskSummary, TaskView};
use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum TaskCmd {
    /// Upload a component and make it the new version of a task.
    Push(Box<PushArgs>),
    /// List the tasks, latest version of each.
    List {
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show a task: its live definition, every version, and a rollout's figures.
    Show {
        /// The task's name.
        name: String,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run a candidate component on the task's recorded jobs and report where it differs.
    Verify(Box<super::task_verify::VerifyArgs>),
    /// Change the share of new jobs that pins a task's staged version (see `push --rollout`).
    Rollout {
        /// The task's name.
        name: String,
        /// The share of new jobs, 0 to 100.
        #[arg(value_parser = clap::value_parser!(u8).range(0..=100))]
        percent: u8,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Make a task's staged version its live one: every new job pins it.
    Promote {
        /// The task's name.
        name: String,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Drop a task's staged version: every new job pins the live one again.
    Rollback {
        /// The task's name.
        name: String,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// How a retry's delay grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backoff {
    /// The same delay before every retry.
    Fixed,
    /// The delay doubles after each attempt.
    Exponential,
}

impl Backoff {
    fn as_str(self) -> &'static str {
        match self {
            Backoff::Fixed => "fixed",
            Backoff::Exponential => "exponential",
        }
    }
}

/// `task push`: flags left out are left to the server's defaults.
#[derive(Debug, Args)]
#[command(
    after_help = "Each push makes a new version; jobs already enqueued keep the version \
they were enqueued with. Uploading the same bytes again reuses the stored component."
)]
pub struct PushArgs {
    /// The task's name.
    pub name: String,
    /// The component (.wasm): a component of the task world, or a WASI command. Or a task
    /// project's directory: it is built first (`taskbox build`), then its dist/task.wasm and
    /// dist/schema.json are pushed.
    pub file: PathBuf,
    /// JSON Schema file that every job's input must match [default for a project: the one
    /// its build derives].
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
    /// JSON Schema file that the task's output must match.
    #[arg(long, value_name = "FILE")]
    pub output_schema: Option<PathBuf>,
    /// The queue jobs of this task go to unless they name one.
    #[arg(long)]
    pub queue: Option<String>,
    /// Wall-clock limit of one attempt, in milliseconds.
    #[arg(long, value_name = "N")]
    pub timeout_ms: Option<u64>,
    /// Fuel budget of one attempt (about one unit per WebAssembly instruction).
    #[arg(long, value_name = "N")]
    pub fuel: Option<u64>,
    /// Linear memory limit of one attempt, in MiB.
    #[arg(long, value_name = "N")]
    pub memory_mb: Option<u32>,
    /// Attempts a job gets before it fails.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_attempts: Option<u32>,
    /// How the delay between attempts grows [default with --delay-ms: exponential].
    #[arg(long)]
    pub backoff: Option<Backoff>,
    /// The first delay between attempts, in milliseconds [default with --backoff: 1000].
    #[arg(long, value_name = "N")]
    pub delay_ms: Option<u64>,
    /// A host its guests' outbound HTTP may reach (`api.example.com`, `*.stripe.com`,
    /// `hooks.example.org:8443`); repeat for more. Without any, every request is refused.
    #[arg(long = "allow", value_name = "HOST")]
    pub allow: Vec<String>,
    /// Most requests one attempt may make [server default: 100].
    #[arg(long, value_name = "N", requires = "allow", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_requests: Option<u32>,
    /// Largest response body one request may read, in bytes [server default: 8 MiB].
    #[arg(long, value_name = "N", requires = "allow", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_response_bytes: Option<u64>,
    /// A secret of the tenant's its guests may read (`taskbox secret put NAME`); repeat for more.
    #[arg(long = "secret", value_name = "NAME")]
    pub secrets: Vec<String>,
    /// The task that takes over a job once this one has failed it for good.
    #[arg(long, value_name = "TASK")]
    pub fallback: Option<String>,
    /// Stage the version beside the live one for this share of new jobs (0 to 100), until
    /// `taskbox task promote` or `rollback`.
    #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub rollout: Option<u8>,
    #[command(flatten)]
    pub server: ServerArgs,
    /// Print the server's answer as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Delay of a backoff given only its kind.
const DEFAULT_DELAY_MS: u64 = 1000;

pub fn main(cmd: TaskCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        TaskCmd::Push(args) => push(*args),
        TaskCmd::List { server, json } => list(&server, json),
        TaskCmd::Show { name, server, json } => show(&name, &server, json),
        TaskCmd::Verify(args) => super::task_verify::verify(*args),
        TaskCmd::Rollout {
            name,
            percent,
            server,
            json,
        } => change(
            &name,
            "rollout",
            Some(json!({ "percent": percent })),
            &server,
            json,
        ),
        TaskCmd::Promote { name, server, json } => change(&name, "promote", None, &server, json),
        TaskCmd::Rollback { name, server, json } => change(&name, "rollback", None, &server, json),
    }
}

/// A change to a task's rollout, then the task as it is after.
fn change(
    name: &str,
    action: &str,
    body: Option<Value>,
    server: &ServerArgs,
    as_json: bool,
) -> anyhow::Result<ExitCode> {
    let client = connect(server)?;
    let reply = client
        .post(&["v1", "tasks", name, action])
        .json(body.unwrap_or_else(|| json!({})))
        .send()?;
    if as_json {
        reply.print()?;
        return Ok(ExitCode::SUCCESS);
    }
    let task: TaskView = reply.json()?;
    match action {
        "promote" => println!("version {} of task {name} is live", task.version),
        "rollback" => println!(
            "rolled back; version {} of task {name} is live for every new job",
            task.version
        ),
        _ => {}
    }
    print!("{}", summary(&task)?);
    Ok(ExitCode::SUCCESS)
}

fn push(mut args: PushArgs) -> anyhow::Result<ExitCode> {
    if args.file.is_dir() {
        let built = super::build::build(&args.file)?;
        args.file = built.component;
        args.schema = args.schema.or(built.schema);
    }
    // Read everything local first: a typo in a path should not leave a stray upload behind.
    let wasm = std::fs::read(&args.file)
        .with_context(|| format!("cannot read the component {}", args.file.display()))?;
    let input_schema = args
        .schema
        .as_deref()
        .map(|p| read_json_file(p, "input schema"))
        .transpose()?;
    let output_schema = args
        .output_schema
        .as_deref()
        .map(|p| read_json_file(p, "output schema"))
        .transpose()?;
    let client = connect(&args.server)?;
    let component = client
        .post(&["v1", "components"])
        .wasm(wasm)
        .send()
        .with_context(|| format!("the server refused {}", args.file.display()))?;
    let uploaded: Component = component.json()?;
    let body = definition(&args, &uploaded.digest, input_schema, output_schema);
    let task = client
        .put(&["v1", "tasks", &args.name])
        .json(body)
        .send()
        .with_context(|| format!("the server refused the definition of task {}", args.name))?;
    if args.json {
        task.print()?;
        return Ok(ExitCode::SUCCESS);
    }
    let defined = task.json::<TaskDefined>()?;
    let version = defined.version;
    let mut about = vec![
        short_digest(&uploaded.digest),
        bytes(uploaded.size),
        format!("abi {}", uploaded.abi),
    ];
    if component.status == 200 {
        about.push("component already stored".to_owned());
    }
    println!(
        "pushed task {} version {version} ({})",
        args.name,
        about.join(", ")
    );
    if let Some(p) = defined.rollout_percent {
        println!(
            "staged for {p} % of new jobs; watch it with `taskbox task show {0}`, then \
             `taskbox task promote {0}` or `taskbox task rollback {0}`",
            args.name
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The `PUT /v1/tasks/{name}` body: only what the flags gave, so the server's defaults stand.
fn definition(
    args: &PushArgs,
    digest: &str,
    input_schema: Option<Value>,
    output_schema: Option<Value>,
) -> Value {
    let mut body = Map::new();
    body.insert("component".into(), json!(digest));
    put(&mut body, "input_schema", input_schema);
    put(&mut body, "output_schema", output_schema);
    put(&mut body, "queue", args.queue.as_ref().map(|q| json!(q)));
    let mut limits = Map::new();
    put(&mut limits, "timeout_ms", args.timeout_ms.map(|n| json!(n)));
    put(&mut limits, "fuel", args.fuel.map(|n| json!(n)));
    put(&mut limits, "memory_mb", args.memory_mb.map(|n| json!(n)));
    if !limits.is_empty() {
        body.insert("limits".into(), Value::Object(limits));
    }
    let mut retry = Map::new();
    put(
        &mut retry,
        "max_attempts",
        args.max_attempts.map(|n| json!(n)),
    );
    // The server wants kind and delay together; one alone means "this, with the usual other half".
    if args.backoff.is_some() || args.delay_ms.is_some() {
        let kind = args.backoff.unwrap_or(Backoff::Exponential);
        let delay_ms = args.delay_ms.unwrap_or(DEFAULT_DELAY_MS);
        retry.insert(
            "backoff".into(),
            json!({"kind": kind.as_str(), "delay_ms": delay_ms}),
        );
    }
    if !retry.is_empty() {
        body.insert("retry".into(), Value::Object(retry));
    }
    put(
        &mut body,
        "fallback",
        args.fallback.as_ref().map(|f| json!(f)),
    );
    if !args.allow.is_empty() {
        let mut network = Map::new();
        network.insert("allow".into(), json!(args.allow));
        put(
            &mut network,
            "max_requests",
            args.max_requests.map(|n| json!(n)),
        );
        put(
            &mut network,
            "max_response_bytes",
            args.max_response_bytes.map(|n| json!(n)),
        );
        body.insert("network".into(), Value::Object(network));
    }
    if !args.secrets.is_empty() {
        body.insert("secrets".into(), json!(args.secrets));
    }
    put(
        &mut body,
        "rollout",
        args.rollout.map(|p| json!({ "percent": p })),
    );
    Value::Object(body)
}

fn put(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(v) = value {
        map.insert(key.to_owned(), v);
    }
}

/// A JSON file given by a flag; its errors name the file.
fn read_json_file(path: &Path, what: &str) -> anyhow::Result<Value> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the {what} {}", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("the {what} {} is not JSON", path.display()))
}

fn list(server: &ServerArgs, as_json: bool) -> anyhow::Result<ExitCode> {
    let client = connect(server)?;
    let reply = client.get(&["v1", "tasks"]).send()?;
    if as_json {
        reply.print()?;
        return Ok(ExitCode::SUCCESS);
    }
    let list: TaskList = reply.json()?;
    if list.tasks.is_empty() {
        eprintln!("no tasks yet; add one with `taskbox task push NAME FILE.wasm`");
        return Ok(ExitCode::SUCCESS);
    }
    tasks_table(&list.tasks).print();
    Ok(ExitCode::SUCCESS)
}

fn tasks_table(tasks: &[TaskSummary]) -> Table {
    let mut t = Table::new(&["NAME", "VERSION", "DIGEST", "CREATED"]).right(&[1]);
    for task in tasks {
        t.row(vec![
            task.name.to_string(),
            task.version.to_string(),
            short_digest(&task.digest),
            table::time_cell(Some(task.created_at.as_str())),
        ]);
    }
    t
}

fn show(name: &str, server: &ServerArgs, as_json: bool) -> anyhow::Result<ExitCode> {
    let client = connect(server)?;
    let reply = client.get(&["v1", "tasks", name]).send()?;
    if as_json {
        reply.print()?;
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", summary(&reply.json()?)?);
    Ok(ExitCode::SUCCESS)
}

/// The live version's facts, its definition, a rollout's figures, then
/// the versions newest first.
fn summary(task: &TaskView) -> anyhow::Result<String> {
    let mut out = table::fields(&[
        ("task", task.name.to_string()),
        ("version", task.version.to_string()),
        ("digest", task.digest.to_string()),
        ("created", table::time_cell(Some(task.created_at.as_str()))),
    ]);
    if !task.definition.is_null() {
        out.push_str("definition:\n");
        out.push_str(&serde_json::to_string_pretty(&task.definition)?);
        out.push('\n');
    }
    if let Some(r) = &task.rollout {
        out.push_str(&format!(
            "rollout: version {} for {} % of new jobs beside version {}, since {}\n",
            r.version,
            r.percent,
            r.live_version,
            table::time_cell(Some(r.started_at.as_str()))
        ));
        let mut t = Table::new(&[
            "VERSION",
            "ROLE",
            "COMPLETED",
            "FAILED",
            "ATTEMPTS",
            "FUEL",
            "FUEL/ATTEMPT",
        ])
        .right(&[0, 2, 3, 4, 5, 6]);
        for f in &r.figures {
            let role = if f.version == r.version {
                "staged"
            } else {
                "live"
            };
            t.row(vec![
                f.version.to_string(),
                role.to_owned(),
                f.completed.to_string(),
                f.failed.to_string(),
                f.attempts.to_string(),
                f.fuel.to_string(),
                f.fuel
                    .checked_div(f.attempts)
                    .map_or("-".to_owned(), |n| n.to_string()),
            ]);
        }
        out.push_str(&t.render());
    }
    if !task.versions.is_empty() {
        let mut versions: Vec<_> = task.versions.iter().collect();
        versions.sort_by_key(|v| std::cmp::Reverse(v.version));
        let mut t = Table::new(&["VERSION", "STATE", "DIGEST", "CREATED"]).right(&[0]);
        for v in versions {
            let state = serde_json::to_value(v.state)?;
            t.row(vec![
                v.version.to_string(),
                state.as_str().unwrap_or_default().replace('_', " "),
                v.digest.to_string(),
                table::time_cell(Some(v.created_at.as_str())),
            ]);
        }
        out.push_str("versions:\n");
        out.push_str(&t.render());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(subcommand)]
        cmd: TaskCmd,
    }

    fn push_args(flags: &[&str]) -> PushArgs {
        let argv = ["taskbox", "push", "resize", "resize.wasm", "--token", "t"]
            .into_iter()
            .chain(flags.iter().copied());
        match Cli::try_parse_from(argv).map(|c| c.cmd) {
            Ok(TaskCmd::Push(args)) => *args,
            other => panic!("not a push: {other:?}"),
        }
    }

    #[test]
    fn only_given_flags_go_in_the_definition() {
        let body = definition(&push_args(&[]), "sha256:ab", None, None);
        assert_eq!(body, json!({"component": "sha256:ab"}));
    }

    #[test]
    fn every_flag_goes_in_the_definition() {
        let args = push_args(&[
            "--queue",
            "images",
            "--timeout-ms",
            "5000",
            "--fuel",
            "1000000",
            "--memory-mb",
            "64",
            "--max-attempts",
            "5",
            "--backoff",
            "fixed",
            "--delay-ms",
            "250",
            "--fallback",
            "resize-slow",
        ]);
        let body = definition(
            &args,
            "sha256:ab",
            Some(json!({"type": "object"})),
            Some(json!(true)),
        );
        assert_eq!(
            body,
            json!({
                "component": "sha256:ab",
                "input_schema": {"type": "object"},
                "output_schema": true,
                "queue": "images",
                "limits": {"timeout_ms": 5000, "fuel": 1000000, "memory_mb": 64},
                "retry": {"max_attempts": 5, "backoff": {"kind": "fixed", "delay_ms": 250}},
                "fallback": "resize-slow",
            })
        );
    }

    #[test]
    fn half_a_backoff_gets_the_other_half() {
        let body = definition(&push_args(&["--delay-ms", "50"]), "d", None, None);
        assert_eq!(
            body["retry"],
            json!({"backoff": {"kind": "exponential", "delay_ms": 50}})
        );
        let body = definition(&push_args(&["--backoff", "fixed"]), "d", None, None);
        assert_eq!(
            body["retry"],
            json!({"backoff": {"kind": "fixed", "delay_ms": 1000}})
        );
        let body = definition(&push_args(&["--max-attempts", "2"]), "d", None, None);
        assert_eq!(body["retry"], json!({"max_attempts": 2}));
        assert_eq!(body.get("limits"), None);
    }

    #[test]
    fn schema_errors_name_the_file() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let bad = dir.path().join("schema.json");
        std::fs::write(&bad, "{\"type\": ")?;
        let err = format!("{:#}", read_json_file(&bad, "input schema").unwrap_err());
        assert!(err.contains("schema.json is not JSON"), "{err}");
        let missing = dir.path().join("nope.json");
        let err = format!(
            "{:#}",
            read_json_file(&missing, "output schema").unwrap_err()
        );
        assert!(err.contains("cannot read the output schema"), "{err}");
        std::fs::write(&bad, "{\"type\": \"object\"}")?;
        assert_eq!(
            read_json_file(&bad, "input schema")?,
            json!({"type": "object"})
        );
        Ok(())
    }

    #[test]
    fn list_and_show_render() -> anyhow::Result<()> {
        let tasks: Vec<TaskSummary> =
            serde_json::from_value(json!([{"tenant": "acme", "name": "resize", "version": 3,
            "digest": "sha256:0123456789abcdef0123456789abcdef", "queue": "default",
            "created_at": "2000-01-01T00:00:00.000Z"}]))?;
        assert_eq!(
            tasks_table(&tasks).lines(),
            vec![
                "NAME    VERSION  DIGEST                CREATED",
                "resize        3  sha256:0123456789ab…  2000-01-01T00:00:00.000Z",
            ]
        );
        let shown = summary(&serde_json::from_value(
            json!({"name": "resize", "version": 2, "digest": "sha256:b",
            "created_at": "2000-01-02T00:00:00.000Z", "definition": {"component": "sha256:b"},
            "versions": [{"version": 1, "digest": "sha256:a", "created_at": "2000-01-01T00:00:00.000Z", "state": "superseded"},
                         {"version": 2, "digest": "sha256:b", "created_at": "2000-01-02T00:00:00.000Z", "state": "live"},
                         {"version": 3, "digest": "sha256:c", "created_at": "2000-01-03T00:00:00.000Z", "state": "staged"}],
            "rollout": {"version": 3, "live_version": 2, "percent": 25,
                        "started_at": "2000-01-03T00:00:00.000Z",
                        "figures": [{"version": 3, "completed": 9, "failed": 1, "attempts": 10, "fuel": 1000},
                                    {"version": 2, "completed": 0, "failed": 0, "attempts": 0, "fuel": 0}]}}),
        )?)?;
        assert!(
            shown.starts_with("task     resize\nversion  2\n"),
            "{shown}"
        );
        assert!(
            shown.contains("definition:\n{\n  \"component\": \"sha256:b\"\n}\n"),
            "{shown}"
        );
        assert!(
            shown.contains("rollout: version 3 for 25 % of new jobs beside version 2, since 2000-01-03T00:00:00.000Z\n"),
            "{shown}"
        );
        assert!(
            shown.contains("      3  staged          9       1        10  1000           100\n"),
            "{shown}"
        );
        assert!(
            shown.contains("      2  live            0       0         0     0             -\n"),
            "{shown}"
        );
        assert!(
            shown.ends_with("VERSION  STATE       DIGEST    CREATED\n      3  staged      sha256:c  2000-01-03T00:00:00.000Z\n      2  live        sha256:b  2000-01-02T00:00:00.000Z\n      1  superseded  sha256:a  2000-01-01T00:00:00.000Z\n"),
            "{shown}"
        );
        Ok(())
    }
}
