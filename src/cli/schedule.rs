//! `taskbox schedule …`: define, list, show, trigger, pause, resume and
//! delete the tenant's cron schedules (changing one needs the
//! schedules:write scope).

use super::client::{api_error, connect, PrintReply, Reply, ServerArgs};
use super::table::{self, Table};
use crate::api::schedules::{ScheduleList, ScheduleView};
use anyhow::Context;
use clap::{Args, Subcommand};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum ScheduleCmd {
    /// Define a schedule (or replace its definition; its counts and next
    /// slot stand unless the expression or time zone changed).
    #[command(after_help = "Examples:
  taskbox schedule put nightly --cron '0 3 * * *' --task report --timezone Europe/Berlin
  taskbox schedule put tick --cron '*/10 * * * * *' --task ping --overlap allow
  taskbox schedule put nightly --file nightly.json   (the JSON that PUT /v1/schedules/{name} takes)")]
    Put {
        /// The schedule's name (a-z, 0-9, '_', '.', '-').
        name: String,
        #[command(flatten)]
        def: Box<Definition>,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The tenant's schedules: next slot, last job, fired and skipped.
    List {
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// One schedule, whole.
    Show {
        name: String,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Fire a schedule now, outside its slots, whatever its overlap policy.
    Trigger {
        name: String,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop firing a schedule until it is resumed.
    Pause {
        name: String,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Fire a paused schedule again, from its next slot after now.
    Resume {
        name: String,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Delete a schedule (the jobs it made stay).
    Delete {
        name: String,
        #[command(flatten)]
        server: ServerArgs,
    },
}

/// A schedule's definition: a JSON file, or flags.
#[derive(Debug, Args)]
pub struct Definition {
    /// The definition as a JSON file (`-` for standard input), instead of
    /// the flags below.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["cron", "task", "workflow"])]
    file: Option<PathBuf>,
    /// 5 fields (minute hour day-of-month month day-of-week), or 6–7 with
    /// seconds first and a year last.
    #[arg(long, value_name = "EXPR", required_unless_present = "file")]
    cron: Option<String>,
    /// The task each slot runs.
    #[arg(long, required_unless_present_any = ["file", "workflow"])]
    task: Option<String>,
    /// The workflow each slot runs, instead of a task.
    #[arg(long, value_name = "NAME", conflicts_with = "task")]
    workflow: Option<String>,
    /// The jobs' input, as JSON [default: {}].
    #[arg(long, value_name = "JSON", value_parser = json_arg)]
    input: Option<Value>,
    /// The jobs' queue [default: the task's].
    #[arg(long)]
    queue: Option<String>,
    /// An IANA time zone the expression is read in [default: UTC].
    #[arg(long, value_name = "ZONE")]
    timezone: Option<String>,
    /// What a slot does while the last job is still active.
    #[arg(long, value_parser = ["skip", "allow", "buffer_one"])]
    overlap: Option<String>,
    /// How late a missed slot may still fire, in ms [server default: 60000].
    #[arg(long, value_name = "MS")]
    catchup_window_ms: Option<u64>,
    /// A task run first: its output is the job's input, or {"skip": true}.
    #[arg(long, value_name = "TASK")]
    before: Option<String>,
    /// Define it paused.
    #[arg(long)]
    paused: bool,
}

fn json_arg(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))
}

impl Definition {
    fn body(self) -> anyhow::Result<Value> {
        if let Some(path) = self.file {
            let text = if path.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin()).context("cannot read standard input")?
            } else {
                std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?
            };
            return serde_json::from_str(&text)
                .with_context(|| format!("{} is not JSON", path.display()));
        }
        let mut body = json!({"cron": self.cron});
        match (self.task, self.workflow) {
            (Some(t), _) => body["task"] = t.into(),
            (None, Some(w)) => body["workflow"] = w.into(),
            (None, None) => {}
        }
        let optional = [
            ("input", self.input),
            ("queue", self.queue.map(Value::from)),
            ("timezone", self.timezone.map(Value::from)),
            ("overlap", self.overlap.map(Value::from)),
            ("catchup_window_ms", self.catchup_window_ms.map(Value::from)),
            ("before", self.before.map(Value::from)),
        ];
        for (k, v) in optional {
            if let Some(v) = v {
                body[k] = v;
            }
        }
        if self.paused {
            body["enabled"] = json!(false);
        }
        Ok(body)
    }
}

pub fn main(cmd: ScheduleCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        ScheduleCmd::Put {
            name,
            def,
            server,
            json,
        } => {
            let client = connect(&server)?;
            let reply = client
                .put(&["v1", "schedules", &name])
                .json(def.body()?)
                .send()
                .map_err(not_found)?;
            if json {
                reply.print()?;
            } else {
                let s: ScheduleView = reply.json()?;
                let verb = if reply.status == 201 {
                    "defined"
                } else {
                    "updated"
                };
                println!(
                    "{verb} schedule {} ({} {}): next slot {}",
                    name,
                    s.cron,
                    s.timezone,
                    table::time_cell(s.next_slot.as_deref())
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        ScheduleCmd::List { server, json } => super::client::list(
            &server,
            "schedules",
            json,
            "no schedules; define one with `taskbox schedule put NAME --cron … --task …`",
            |l: ScheduleList| l.schedules,
            list_table,
        ),
        ScheduleCmd::Show { name, server, json } => {
            let client = connect(&server)?;
            let reply = client
                .get(&["v1", "schedules", &name])
                .send()
                .map_err(|e| unknown(e, &name))?;
            if json {
                reply.print()?;
            } else {
                print!("{}", details(&reply.json()?));
            }
            Ok(ExitCode::SUCCESS)
        }
        ScheduleCmd::Trigger { name, server, json } => {
            let reply = post(&server, &name, "trigger")?;
            if json {
                reply.print()?;
                return Ok(ExitCode::SUCCESS);
            }
            let s: ScheduleView = reply.json()?;
            if let Some(before) = &s.before_job {
                println!("triggered {name}: its before job {} runs first", before.id);
            } else {
                println!(
                    "triggered {name}: job {}",
                    s.last_job.as_ref().map_or("-", |j| j.id.as_str())
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        ScheduleCmd::Pause { name, server, json } => {
            let reply = post(&server, &name, "pause")?;
            if json {
                reply.print()?;
            } else {
                println!("paused {name}");
            }
            Ok(ExitCode::SUCCESS)
        }
        ScheduleCmd::Resume { name, server, json } => {
            let reply = post(&server, &name, "resume")?;
            if json {
                reply.print()?;
            } else {
                let s: ScheduleView = reply.json()?;
                println!(
                    "resumed {name}: next slot {}",
                    table::time_cell(s.next_slot.as_deref())
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        ScheduleCmd::Delete { name, server } => {
            let client = connect(&server)?;
            client
                .delete(&["v1", "schedules", &name])
                .send()
                .map_err(|e| unknown(e, &name))?;
            println!("deleted schedule {name}");
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn post(server: &ServerArgs, name: &str, action: &str) -> anyhow::Result<Reply> {
    let client = connect(server)?;
    client
        .post(&["v1", "schedules", name, action])
        .send()
        .map_err(|e| unknown(e, name))
}

/// A 404 naming a schedule: say where the names are.
fn unknown(e: impl Into<anyhow::Error>, name: &str) -> anyhow::Error {
    let e: anyhow::Error = e.into();
    match api_error(&e) {
        Some(a) if a.code.as_deref() == Some("SCHEDULE_NOT_FOUND") => e.context(format!(
            "no schedule {name:?} in this tenant; `taskbox schedule list` shows them"
        )),
        _ => not_found(e),
    }
}

fn not_found(e: impl Into<anyhow::Error>) -> anyhow::Error {
    let e: anyhow::Error = e.into();
    super::client::older_server(e, "schedules")
}

fn last_job_cell(s: &ScheduleView) -> String {
    match &s.last_job {
        Some(j) => format!(
            "{} ({})",
            j.id,
            j.status.map_or("-", |status| status.as_str())
        ),
        None => "-".into(),
    }
}

/// What a schedule runs: its task, or `workflow NAME`.
fn runs(s: &ScheduleView) -> String {
    match (&s.workflow, &s.task) {
        (Some(w), _) => format!("workflow {w}"),
        (None, Some(t)) => t.clone(),
        (None, None) => "-".into(),
    }
}

fn list_table(all: &[ScheduleView]) -> Table {
    let mut t = Table::new(&[
        "NAME",
        "CRON",
        "ZONE",
        "TASK",
        "ENABLED",
        "NEXT SLOT",
        "LAST JOB",
        "FIRED",
        "SKIPPED",
    ])
    .right(&[7, 8]);
    for s in all {
        t.row(vec![
            s.name.clone(),
            s.cron.clone(),
            s.timezone.clone(),
            runs(s),
            s.enabled.to_string(),
            table::time_cell(s.next_slot.as_deref()),
            last_job_cell(s),
            s.fired.to_string(),
            s.skipped.to_string(),
        ]);
    }
    t
}

fn details(s: &ScheduleView) -> String {
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    let time = |v: &Option<String>| v.as_deref().map(table::time).unwrap_or_default();
    let before_job = match &s.before_job {
        Some(b) => format!("{} (slot {})", b.id, table::time_cell(b.slot.as_deref())),
        None => String::new(),
    };
    table::fields(&[
        ("name", s.name.clone()),
        ("cron", s.cron.clone()),
        ("timezone", s.timezone.clone()),
        ("task", text(&s.task)),
        ("workflow", text(&s.workflow)),
        ("input", s.input.to_string()),
        ("queue", text(&s.queue)),
        ("overlap", s.overlap.as_str().to_owned()),
        ("catch-up window", format!("{} ms", s.catchup_window_ms)),
        ("before", text(&s.before)),
        ("enabled", s.enabled.to_string()),
        ("next slot", time(&s.next_slot)),
        ("last slot", time(&s.last_slot)),
        ("last job", last_job_cell(s)),
        ("before job", before_job),
        ("buffered slot", time(&s.buffered_slot)),
        ("fired", s.fired.to_string()),
        ("skipped", s.skipped.to_string()),
        ("last error", text(&s.last_error)),
        ("created", table::time(&s.created_at)),
        ("updated", table::time(&s.updated_at)),
    ])
}
