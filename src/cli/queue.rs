//! `taskbox queue …`: the tenant's queues, their depths and how long the
//! head of each line has waited; pausing and resuming one.

use super::client::{connect, PrintReply, ServerArgs};
use super::table::{millis, Table};
use crate::api::queues::{QueueList, QueueSwitched};
use clap::Subcommand;
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum QueueCmd {
    /// Each queue with jobs: jobs by status, and the oldest due job's wait.
    List {
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop claiming a queue's jobs (those running go on); enqueue still
    /// works. A queue with no jobs yet may be paused.
    Pause {
        /// The queue's name.
        name: String,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Claim a paused queue's jobs again.
    Resume {
        /// The queue's name.
        name: String,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
}

const STATUSES: [&str; 6] = [
    "queued",
    "running",
    "waiting",
    "completed",
    "failed",
    "cancelled",
];

pub fn main(cmd: QueueCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        QueueCmd::List { server, json } => {
            let client = connect(&server)?;
            let reply = client.get(&["v1", "queues"]).send()?;
            if json {
                reply.print()?;
            } else {
                print!("{}", table(&reply.json()?));
            }
            Ok(ExitCode::SUCCESS)
        }
        QueueCmd::Pause { name, server, json } => switch(&server, &name, "pause", json),
        QueueCmd::Resume { name, server, json } => switch(&server, &name, "resume", json),
    }
}

/// `pause` or `resume`, and a line that says what it did.
fn switch(server: &ServerArgs, name: &str, action: &str, json: bool) -> anyhow::Result<ExitCode> {
    let client = connect(server)?;
    let reply = client.post(&["v1", "queues", name, action]).send()?;
    if json {
        reply.print()?;
    } else {
        let answer: QueueSwitched = reply.json()?;
        let state = if answer.paused {
            "paused"
        } else {
            "not paused"
        };
        let was = if answer.changed {
            ""
        } else {
            " (it was already)"
        };
        println!("queue {name} is {state}{was}");
    }
    Ok(ExitCode::SUCCESS)
}

fn table(answer: &QueueList) -> String {
    let queues = &answer.queues;
    if queues.is_empty() {
        return "no queues have jobs or are paused\n".into();
    }
    let mut header = vec!["QUEUE"];
    header.extend(STATUSES.iter().map(|s| match *s {
        "queued" => "QUEUED",
        "running" => "RUNNING",
        "waiting" => "WAITING",
        "completed" => "COMPLETED",
        "failed" => "FAILED",
        _ => "CANCELLED",
    }));
    header.push("OLDEST WAIT");
    header.push("PAUSED");
    let mut t = Table::new(&header).right(&[1, 2, 3, 4, 5, 6, 7]);
    for q in queues {
        let mut row = vec![q.name.clone()];
        row.extend(
            STATUSES
                .iter()
                .map(|s| q.depth.get(*s).copied().unwrap_or(0).to_string()),
        );
        row.push(millis(q.oldest_queued_age_ms.map(|ms| ms as f64)));
        row.push(if q.paused { "yes" } else { "" }.to_owned());
        t.row(row);
    }
    t.render()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn queues_print_as_a_table() {
        let answer = json!({"queues": [
            {"tenant": "acme", "name": "default", "depth": {"queued": 3, "running": 1, "waiting": 0, "completed": 10,
             "failed": 2, "cancelled": 0}, "oldest_queued_age_ms": 1500, "paused": false},
            {"tenant": "acme", "name": "mail", "depth": {"queued": 1, "running": 0, "waiting": 0, "completed": 0,
             "failed": 0, "cancelled": 0}, "oldest_queued_age_ms": null, "paused": true},
        ]});
        let text = table(&serde_json::from_value(answer).unwrap());
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("QUEUE"), "{text}");
        assert!(
            lines[1].starts_with("default") && lines[1].contains("10"),
            "{text}"
        );
        assert!(
            lines[2].starts_with("mail") && lines[2].trim_end().ends_with("yes"),
            "{text}"
        );
        assert_eq!(
            table(&serde_json::from_value(json!({"queues": []})).unwrap()),
            "no queues have jobs or are paused\n"
        );
    }
}
