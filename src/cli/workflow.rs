//! `taskbox workflow …`: push a workflow definition (a JSON file, the body
//! `PUT /v1/workflows/{name}` takes) as the workflow's next version, list
//! the tenant's workflows and show one.

use super::client::{api_error, connect, PrintReply, ServerArgs};
use super::table::{self, Table};
use crate::api::workflows::{WorkflowList, WorkflowView};
use crate::registry::workflow::{StepSpec, WorkflowSpec};
use anyhow::Context;
use clap::Subcommand;
use serde_json::Value;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum WorkflowCmd {
    /// Define a workflow's next version from a JSON file.
    #[command(
        after_help = "The file holds {\"steps\": [{\"name\", \"task\", \"retry\"?, \"limits\"?, \
\"timeout_ms\"?, \"fallback\"?}], \"on_error\"?: [steps], \"on_cancel\"?: [steps], \"deadline_ms\"?, \
\"input_schema\"?, \"restore\"?, \"queue\"?}. Every task it names must be defined first."
    )]
    Push {
        /// The definition (`-` for standard input).
        file: PathBuf,
        /// The workflow's name [default: the file's name without .json].
        #[arg(long)]
        name: Option<String>,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The tenant's workflows, newest version of each.
    List {
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// A workflow's definition (the newest version, or --version).
    Show {
        name: String,
        #[arg(long, value_name = "N")]
        version: Option<u32>,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
}

pub fn main(cmd: WorkflowCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        WorkflowCmd::Push {
            file,
            name,
            server,
            json,
        } => {
            let name = match name {
                Some(n) => n,
                None => file
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .filter(|s| *s != "-")
                    .map(str::to_owned)
                    .context("give the workflow's name with --name")?,
            };
            let text = if file.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin()).context("cannot read standard input")?
            } else {
                std::fs::read_to_string(&file)
                    .with_context(|| format!("cannot read {}", file.display()))?
            };
            let body: Value = serde_json::from_str(&text)
                .with_context(|| format!("{} is not JSON", file.display()))?;
            let client = connect(&server)?;
            let reply = client
                .put(&["v1", "workflows", &name])
                .json(body)
                .send()
                .map_err(not_found)?;
            if json {
                reply.print()?;
            } else {
                let w: WorkflowView = reply.json()?;
                println!(
                    "workflow {name} version {}: {}",
                    w.version,
                    step_names(&spec_of(&w)?.steps)
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        WorkflowCmd::List { server, json } => super::client::list(
            &server,
            "workflows",
            json,
            "no workflows; define one with `taskbox workflow push FILE.json`",
            |l: WorkflowList| l.workflows,
            workflows_table,
        ),
        WorkflowCmd::Show {
            name,
            version,
            server,
            json,
        } => {
            let client = connect(&server)?;
            let reply = client
                .get(&["v1", "workflows", &name])
                .query("version", version)
                .send()
                .map_err(anyhow::Error::from)
                .map_err(|e| match api_error(&e) {
                    Some(a) if a.code.as_deref() == Some("WORKFLOW_NOT_FOUND") => e.context(
                        format!("no workflow {name:?} in this tenant; `taskbox workflow list` shows them"),
                    ),
                    _ => not_found(e),
                })?;
            if json {
                reply.print()?;
                return Ok(ExitCode::SUCCESS);
            }
            let w: WorkflowView = reply.json()?;
            let spec = spec_of(&w)?;
            println!(
                "workflow {} version {} ({})",
                w.name,
                w.version,
                table::time_cell(Some(w.created_at.as_str()))
            );
            let mut t = Table::new(&["CHAIN", "STEP", "TASK", "RETRY", "TIMEOUT", "FALLBACK"]);
            for (chain, steps) in [
                ("steps", &spec.steps),
                ("on_error", &spec.on_error),
                ("on_cancel", &spec.on_cancel),
            ] {
                for s in steps {
                    t.row(vec![
                        chain.to_owned(),
                        s.name.clone(),
                        s.task.clone(),
                        match &s.retry {
                            None => "task's".to_owned(),
                            Some(r) => format!("{} attempts", r.max_attempts),
                        },
                        match s.timeout_ms {
                            None => "-".to_owned(),
                            Some(ms) => format!("{ms} ms"),
                        },
                        s.fallback.clone().unwrap_or_else(|| "-".to_owned()),
                    ]);
                }
            }
            t.print();
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The version's definition, read as the workflow spec it was defined as.
fn spec_of(w: &WorkflowView) -> anyhow::Result<WorkflowSpec> {
    serde_json::from_value(Value::Object(w.definition.clone())).with_context(|| {
        format!(
            "workflow {} version {}: the server's definition is not one this taskbox reads",
            w.name, w.version
        )
    })
}

/// `a → b → c`.
fn step_names(steps: &[StepSpec]) -> String {
    steps
        .iter()
        .map(|s| s.name.as_str())
        .collect::<Vec<_>>()
        .join(" → ")
}

fn workflows_table(all: &[WorkflowView]) -> Table {
    let mut t = Table::new(&["NAME", "VERSION", "STEPS", "CREATED"]).right(&[1]);
    for w in all {
        // A definition this taskbox cannot read still lists, without its steps.
        let steps = spec_of(w).map_or_else(|_| "?".to_owned(), |s| step_names(&s.steps));
        t.row(vec![
            w.name.clone(),
            w.version.to_string(),
            steps,
            table::time_cell(Some(w.created_at.as_str())),
        ]);
    }
    t
}

fn not_found(e: impl Into<anyhow::Error>) -> anyhow::Error {
    let e: anyhow::Error = e.into();
    super::client::older_server(e, "workflows")
}
