//! `taskbox job batch FILE`: enqueue many jobs from JSON lines, a thousand
//! per request, with progress on stderr and one result per line.

use super::client::{connect, ServerArgs};
use super::table::Table;
use crate::api::batch::{Answered, BatchAnswer, ItemErrorBody};
use anyhow::{bail, Context};
use clap::Args;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, IsTerminal, Read, Write};
use std::process::ExitCode;

/// The most jobs one request carries (the server's bound).
const MAX_CHUNK: usize = 1_000;

/// `job batch`.
#[derive(Debug, Args)]
#[command(
    after_help = "Each line of FILE is one job, as POST /v1/jobs takes it \
(e.g. {\"task\": \"resize\", \"input\": {...}, \"priority\": 5}); with --task, each line is \
only the input of a job of that task. Blank lines are skipped. Exit status: 0 when every job \
was enqueued, 1 when the server refused some (they are listed), 2 on any other error."
)]
pub struct BatchArgs {
    /// JSON lines to read, or `-` for stdin.
    pub file: String,
    /// Every line is the input of a job of this task.
    #[arg(long)]
    pub task: Option<String>,
    /// Jobs per request, at most 1000.
    #[arg(long, default_value_t = MAX_CHUNK as u64, value_parser = clap::value_parser!(u64).range(1..=MAX_CHUNK as u64))]
    pub chunk: u64,
    /// Makes a retried run answer the jobs of the first instead of new
    /// ones: request `n` sends `<KEY>-<n>`.
    #[arg(long, value_name = "KEY")]
    pub idempotency_key: Option<String>,
    #[command(flatten)]
    pub server: ServerArgs,
    /// Print every result as JSON (one array, in the order of the lines).
    #[arg(long)]
    pub json: bool,
}

/// One job of the file, with the line it came from.
#[derive(Debug)]
struct Line {
    number: usize,
    body: Value,
}

fn read_lines(args: &BatchArgs, reader: impl Read) -> anyhow::Result<Vec<Line>> {
    let mut lines = Vec::new();
    for (i, text) in BufReader::new(reader).lines().enumerate() {
        let number = i + 1;
        let text = text.with_context(|| format!("cannot read line {number}"))?;
        if text.trim().is_empty() {
            continue;
        }
        let value: Value =
            serde_json::from_str(&text).with_context(|| format!("line {number} is not JSON"))?;
        let body = match &args.task {
            Some(task) => json!({"task": task, "input": value}),
            None if value.is_object() => value,
            None => bail!(
                "line {number} is not a JSON object; give each line as a job body \
                 ({{\"task\": ..., \"input\": ...}}), or pass --task to read each line as an input"
            ),
        };
        lines.push(Line { number, body });
    }
    Ok(lines)
}

pub fn batch(args: BatchArgs) -> anyhow::Result<ExitCode> {
    let lines = if args.file == "-" {
        read_lines(&args, std::io::stdin())?
    } else {
        let f = std::fs::File::open(&args.file)
            .with_context(|| format!("cannot open {}", args.file))?;
        read_lines(&args, f)?
    };
    if lines.is_empty() {
        bail!("{} holds no jobs", args.file);
    }
    let client = connect(&args.server)?;
    let show_progress = std::io::stderr().is_terminal();
    let mut results: Vec<Sent> = Vec::with_capacity(lines.len());
    for (n, chunk) in lines.chunks(args.chunk as usize).enumerate() {
        let jobs: Vec<&Value> = chunk.iter().map(|l| &l.body).collect();
        let mut call = client
            .post(&["v1", "jobs", "batch"])
            .json(json!({ "jobs": jobs }));
        if let Some(key) = &args.idempotency_key {
            call = call.header("Idempotency-Key", format!("{key}-{n}"));
        }
        let reply = call.send().with_context(|| {
            format!(
                "the request for lines {}-{} failed; {} jobs before them were enqueued",
                chunk[0].number,
                chunk[chunk.len() - 1].number,
                results.len()
            )
        })?;
        let answer: BatchAnswer = reply.json()?;
        let raw: RawItems = reply.json()?;
        if answer.jobs.len() != chunk.len() || raw.jobs.len() != chunk.len() {
            bail!(
                "the server answered {} results for {} jobs",
                answer.jobs.len(),
                chunk.len()
            );
        }
        for ((l, item), raw) in chunk.iter().zip(answer.jobs).zip(raw.jobs) {
            results.push(Sent {
                line: l.number,
                refused: match item {
                    Answered::Job(_) => None,
                    Answered::Refused(e) => Some(e.error),
                },
                raw,
            });
        }
        if show_progress {
            eprint!("\rsent {} of {} jobs", results.len(), lines.len());
            let _ = std::io::stderr().flush();
        }
    }
    if show_progress {
        eprintln!();
    }
    let refused = results.iter().filter(|r| r.refused.is_some()).count();
    if args.json {
        // Every item as the server sent it, in the order of the lines.
        let items: Vec<&str> = results.iter().map(|r| r.raw.get()).collect();
        println!("[{}]", items.join(","));
    } else {
        println!(
            "enqueued {} of {} jobs{}",
            results.len() - refused,
            results.len(),
            if refused > 0 {
                format!("; {refused} refused:")
            } else {
                String::new()
            }
        );
        if refused > 0 {
            let mut t = Table::new(&["LINE", "STATUS", "CODE", "MESSAGE"]).right(&[0, 1]);
            for r in &results {
                let Some(e) = &r.refused else { continue };
                t.row(vec![
                    r.line.to_string(),
                    e.status.to_string(),
                    super::table::cell(&json!(e.body.code)),
                    e.body.message.clone(),
                ]);
            }
            t.print();
        }
    }
    Ok(if refused > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// One job sent: its line, the server's item for it as sent (for
/// `--json`), and why it was refused, if it was.
struct Sent {
    line: usize,
    raw: Box<RawValue>,
    refused: Option<ItemErrorBody>,
}

/// A batch's answer's items as they came.
#[derive(serde::Deserialize)]
struct RawItems {
    jobs: Vec<Box<RawValue>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: BatchArgs,
    }

    fn args(flags: &[&str]) -> BatchArgs {
        let argv = ["taskbox"].iter().chain(flags).copied();
        Cli::try_parse_from(argv).unwrap().args
    }

    #[test]
    fn lines_are_job_bodies_or_inputs_of_one_task() {
        let text = "{\"task\": \"a\", \"input\": 1}\n\n{\"task\": \"b\"}\n";
        let lines = read_lines(&args(&["-"]), text.as_bytes()).unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1].number, 3);
        assert_eq!(lines[1].body, json!({"task": "b"}));
        let lines = read_lines(&args(&["-", "--task", "t"]), "[1]\n7\n".as_bytes()).unwrap();
        assert_eq!(lines[0].body, json!({"task": "t", "input": [1]}));
        assert_eq!(lines[1].body, json!({"task": "t", "input": 7}));
    }

    #[test]
    fn a_bad_line_is_named() {
        let e = read_lines(&args(&["-"]), "{}\n{oops\n".as_bytes()).unwrap_err();
        assert!(format!("{e:#}").contains("line 2"), "{e:#}");
        let e = read_lines(&args(&["-"]), "[1]\n".as_bytes()).unwrap_err();
        assert!(e.to_string().contains("--task"), "{e}");
    }

    #[test]
    fn a_chunk_is_one_to_a_thousand() {
        let parse =
            |c: &str| Cli::try_parse_from(["taskbox", "-", "--chunk", c]).map(|c| c.args.chunk);
        assert_eq!(parse("10").unwrap(), 10);
        assert!(parse("0").is_err());
        assert!(parse("1001").is_err());
    }
}
