//! `taskbox workflow …`: push a workflow definition (a JSON file, the body
//! `PUT /v1/workflows/{name}` takes) as the workflow's next version, list
//! the tenant's workflows and show one.

use super::client::{print_json, ApiError, Client, ServerArgs};
use super::table::{self, Table};
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
            let client = Client::new(&server)?;
            let w = client
                .put(&["v1", "workflows", &name])
                .json(body)
                .send()
                .map_err(not_found)?
                .body;
            if json {
                print_json(&w)?;
            } else {
                println!(
                    "workflow {name} version {}: {}",
                    table::cell(&w["version"]),
                    step_names(&w["steps"])
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        WorkflowCmd::List { server, json } => super::client::list(
            &server,
            "workflows",
            json,
            "no workflows; define one with `taskbox workflow push FILE.json`",
            workflows_table,
        ),
        WorkflowCmd::Show {
            name,
            version,
            server,
            json,
        } => {
            let client = Client::new(&server)?;
            let w = client
                .get(&["v1", "workflows", &name])
                .query("version", version)
                .send()
                .map_err(|e| match e.downcast_ref::<ApiError>() {
                    Some(a) if a.code.as_deref() == Some("WORKFLOW_NOT_FOUND") => e.context(
                        format!("no workflow {name:?} in this tenant; `taskbox workflow list` shows them"),
                    ),
                    _ => not_found(e),
                })?
                .body;
            if json {
                print_json(&w)?;
                return Ok(ExitCode::SUCCESS);
            }
            println!(
                "workflow {} version {} ({})",
                table::cell(&w["name"]),
                table::cell(&w["version"]),
                table::time_cell(&w["created_at"])
            );
            let mut t = Table::new(&["CHAIN", "STEP", "TASK", "RETRY", "TIMEOUT", "FALLBACK"]);
            for chain in ["steps", "on_error", "on_cancel"] {
                for s in w[chain].as_array().map_or(&[][..], Vec::as_slice) {
                    t.row(vec![
                        chain.to_owned(),
                        table::cell(&s["name"]),
                        table::cell(&s["task"]),
                        match &s["retry"]["max_attempts"] {
                            Value::Null => "task's".to_owned(),
                            n => format!("{n} attempts"),
                        },
                        match &s["timeout_ms"] {
                            Value::Null => "-".to_owned(),
                            ms => format!("{ms} ms"),
                        },
                        table::cell(&s["fallback"]),
                    ]);
                }
            }
            t.print();
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `a → b → c`.
fn step_names(steps: &Value) -> String {
    steps
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .map(|s| table::cell(&s["name"]))
        .collect::<Vec<_>>()
        .join(" → ")
}

fn workflows_table(all: &[Value]) -> Table {
    let mut t = Table::new(&["NAME", "VERSION", "STEPS", "CREATED"]).right(&[1]);
    for w in all {
        t.row(vec![
            table::cell(&w["name"]),
            table::cell(&w["version"]),
            step_names(&w["steps"]),
            table::time_cell(&w["created_at"]),
        ]);
    }
    t
}

fn not_found(e: anyhow::Error) -> anyhow::Error {
    super::client::older_server(e, "workflows")
}
