//! `taskbox task verify NAME FILE_OR_DIR`: uploads a candidate, asks the
//! server to run it on the task's recorded jobs, follows the verification
//! job, and prints its report; exits 0 when every run matched, 1 when one
//! did not.

use super::client::{connect, ServerArgs};
use super::job::{follow, Seen};
use super::table::{self, short_digest, Table};
use crate::api::registry::Component;
use crate::job::JobStatus;
use crate::verify::report::{Outcome, Report};
use anyhow::{bail, Context};
use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

/// Most differences the table lists; `--json` has them all.
const SHOWN: usize = 20;

#[derive(Debug, Args)]
#[command(
    after_help = "The candidate runs on each recorded job's input under the task's \
limits, as a job of the tenant's (charged to its fuel), with no outbound HTTP, no secrets and \
no sub-tasks. Exits 0 when every run matched its record, 1 when one did not."
)]
pub struct VerifyArgs {
    /// The task to verify against.
    pub name: String,
    /// The candidate (.wasm), or a task project's directory (built first).
    pub file: PathBuf,
    /// How many of the task's last ended jobs to run again [server default: 100].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub sample: Option<u32>,
    #[command(flatten)]
    pub server: ServerArgs,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn verify(mut args: VerifyArgs) -> anyhow::Result<ExitCode> {
    if args.file.is_dir() {
        args.file = super::build::build(&args.file)?.component;
    }
    let wasm = std::fs::read(&args.file)
        .with_context(|| format!("cannot read the component {}", args.file.display()))?;
    let client = connect(&args.server)?;
    let uploaded: Component = client
        .post(&["v1", "components"])
        .wasm(wasm)
        .send()
        .with_context(|| format!("the server refused {}", args.file.display()))?
        .json()?;
    let mut body = json!({ "component": uploaded.digest });
    if let Some(n) = args.sample {
        body["sample"] = json!(n);
    }
    let first = Seen::of(
        client
            .post(&["v1", "tasks", &args.name, "verify"])
            .json(body)
            .send()
            .with_context(|| format!("the server refused to verify task {}", args.name))?,
    )?;
    let id = first.job.id.to_string();
    eprintln!(
        "verifying {} against task {}: job {id}",
        short_digest(&uploaded.digest),
        args.name
    );
    let last = follow(&client, &id, first)?;
    if last.job.status != JobStatus::Completed {
        bail!(
            "the verification ended {} without a report; see `taskbox job get {id}`",
            last.job.status.as_str()
        );
    }
    let output = last.job.output.as_ref().map(|o| o.value());
    let report: Report = serde_json::from_value(output.unwrap_or_default())
        .context("the verification's output is not a report")?;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", render(&report));
    }
    Ok(if report.all_same() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The report for people: its figures, then each run that differed.
fn render(r: &Report) -> String {
    let ratio = r
        .fuel
        .ratio
        .map_or_else(|| "-".to_owned(), |x| format!("{x:.3}"));
    let mut out = table::fields(&[
        (
            "task",
            format!("{} (limits of version {})", r.task, r.version),
        ),
        ("candidate", r.component.clone()),
        ("runs", r.runs.to_string()),
        ("same", r.same.to_string()),
        ("different", r.different.to_string()),
        ("candidate failures", r.candidate_failures.to_string()),
        (
            "fuel",
            format!(
                "{} recorded, {} now (× {ratio})",
                r.fuel.recorded, r.fuel.candidate
            ),
        ),
    ]);
    if r.requests_refused {
        out.push_str(
            "note: the task declares outbound HTTP or secrets; the candidate ran with every \
             request refused and no secret\n",
        );
    }
    if !r.missing.is_empty() {
        out.push_str(&format!(
            "missing: {} recorded job(s) pruned before they ran again\n",
            r.missing.len()
        ));
    }
    if !r.differences.is_empty() {
        let mut t = Table::new(&["JOB", "RECORDED", "CANDIDATE", "WHERE"]);
        for d in r.differences.iter().take(SHOWN) {
            // The first place they differ, and how many more there are.
            let mut at = d
                .first_difference
                .as_ref()
                .map_or_else(String::new, |p| p.path.clone());
            if d.diff_total > 1 {
                at.push_str(&format!(" (+{})", d.diff_total - 1));
            }
            t.row(vec![
                d.job.clone(),
                outcome(&d.recorded),
                outcome(&d.candidate),
                if at.is_empty() { "-".into() } else { at },
            ]);
        }
        out.push_str("differences:\n");
        out.push_str(&t.render());
        if r.differences.len() > SHOWN {
            out.push_str(&format!(
                "… and {} more (--json lists them all)\n",
                r.differences.len() - SHOWN
            ));
        }
    }
    out
}

fn outcome(o: &Outcome) -> String {
    match o {
        Outcome::Completed { .. } => "completed".into(),
        Outcome::Failed { kind, code, .. } if kind == code => format!("failed: {kind}"),
        Outcome::Failed { kind, code, .. } => format!("failed: {kind}/{code}"),
        Outcome::Stopped { reason } => reason.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Redactor;
    use crate::verify::report::{Ended, Pair, Side, Subject};
    use serde_json::Value;

    #[test]
    fn a_report_renders_its_figures_and_differences() {
        let done = |v: Value| Ended::Completed(v);
        let pair = |job: &str, recorded: Ended, candidate: Ended| {
            Pair::of(
                job.into(),
                1,
                Side {
                    ended: &recorded,
                    fuel: 100,
                },
                Side {
                    ended: &candidate,
                    fuel: 150,
                },
                &Redactor::default(),
            )
        };
        let r = Report::of(
            Subject {
                task: "invoice".into(),
                version: 3,
                component: "sha256:c".into(),
                requests_refused: true,
            },
            vec![
                pair("j1", done(json!({"a": 1})), done(json!({"a": 1}))),
                pair(
                    "j2",
                    done(json!({"a": 1, "b": 2})),
                    done(json!({"a": 2, "b": 3})),
                ),
                pair(
                    "j3",
                    done(json!({})),
                    Ended::Failed {
                        kind: "task_failed".into(),
                        code: "bad_total".into(),
                        message: "no".into(),
                    },
                ),
            ],
            Vec::new(),
        );
        let shown = render(&r);
        for line in [
            "runs                3\n",
            "different           2\n",
            "candidate failures  1\n",
            "fuel                300 recorded, 450 now (× 1.500)\n",
            "note: the task declares outbound HTTP",
            "j2   completed  completed                      /a (+1)\n",
            "j3   completed  failed: task_failed/bad_total  -\n",
        ] {
            assert!(shown.contains(line), "{line:?} in\n{shown}");
        }
    }
}
