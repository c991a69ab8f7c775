//! `taskbox job replay ID`: downloads a finished attempt's bundle
//! (`GET /v1/jobs/{id}/bundle`: its pinned component, its input, its
//! limits) and runs that attempt here, in the sandbox `taskbox run` uses,
//! then sets what it did beside what was recorded. A deterministic guest
//! fails the same way with the same fuel; a deterministic task's attempt
//! runs on the job's own clock and random seed again, and the replay says
//! whether it gave exactly the recorded output and fuel. `--component` runs another
//! build (a fix) on the same input and limits; the exit status says how
//! the replay ended, so `taskbox job replay ID --component fixed.wasm &&
//! echo fixed` works in a script.

use super::client::{connect, ServerArgs};
use super::format::thousands;
use crate::api::bundle::Bundle;
use crate::api::views::AttemptView;
use crate::digest::Digest;
use crate::sandbox::{AttemptRequest, Determinism, Ending, JobRef, Limits, Sandbox, SandboxConfig};
use anyhow::{bail, Context};
use base64::Engine as _;
use clap::Args;
use serde_json::{json, Value};
use std::process::ExitCode;

#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: how the replayed attempt ended, as `taskbox run` says it: \
0 when it completed (or snoozed or waited, as the recorded attempt did), 1 when it failed \
as the recorded attempt did (the same error kind), 3 when it ended otherwise than the record \
(another error kind, or failed where the record did not; for a deterministic task, also another \
output or other fuel), 2 on any other error."
)]
pub struct ReplayArgs {
    /// The job's id.
    pub id: String,
    /// Which of its attempts (1…) [default: the last]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub attempt: Option<u32>,
    /// Run this component (a fixed build, say) on the attempt's input and limits instead
    /// of the one the job was pinned to.
    #[arg(long, value_name = "FILE")]
    pub component: Option<std::path::PathBuf>,
    /// Also save the bundle's component and input here (DIR/component.wasm, DIR/input.json).
    #[arg(long, value_name = "DIR")]
    pub save: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub server: ServerArgs,
    /// What the replay may reach and read. A replay grants none of the task's hosts or
    /// secrets by itself: calling them again may repeat what the attempt did (a charge, a
    /// message), and the secrets' values never leave the server.
    #[command(flatten)]
    pub grants: super::grants::GrantArgs,
    /// Print the recorded attempt and the replay as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// An ending in the terms an attempt record uses: its outcome's kind, and
/// its error's kind.
fn ending_terms(e: &Ending) -> (&'static str, Option<String>) {
    match e {
        Ending::Done(_) => ("completed", None),
        Ending::Snooze(_) => ("snoozed", None),
        Ending::Wait(_) => ("waiting", None),
        Ending::Failed(err) => ("failed", Some(err.kind.as_str().to_owned())),
        Ending::Cancelled => ("cancelled", None),
        Ending::Unavailable(_) => ("unavailable", None),
    }
}

/// The exit status of a replay that ran: 0 completed (or snoozed or
/// waited as the record did: `taskbox run` calls those a success too), 1
/// failed as the record did, 3 ended otherwise than the record, 2 could
/// not run here (the host, not the guest).
fn exit_status(replayed: (&str, &Option<String>), recorded: (&str, &Option<String>)) -> u8 {
    let same = replayed == recorded;
    match replayed.0 {
        "completed" => 0,
        "unavailable" => 2,
        "snoozed" | "waiting" if same => 0,
        "failed" if same => 1,
        _ => 3,
    }
}

/// What the record's outcome means in those terms: an attempt that failed
/// and was retried, or handed to a fallback, failed all the same.
fn recorded_terms(attempt: &AttemptView) -> (String, Option<String>) {
    let kind = attempt.error.as_ref().map(|e| e.kind.as_str().to_owned());
    let outcome = match attempt.outcome.as_ref() {
        "completed" => "completed",
        "snoozed" => "snoozed",
        "waiting" => "waiting",
        "cancelled" => "cancelled",
        _ if kind.is_some() => "failed",
        other => other,
    };
    (outcome.to_owned(), kind)
}

pub fn replay(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let client = connect(&args.server)?;
    let reply = client
        .get(&["v1", "jobs", &args.id, "bundle"])
        .query("attempt", args.attempt)
        .send()
        .map_err(|e| super::client::older_server(e, "job replay"))?;
    let bundle: Bundle = reply.json()?;
    let component = &bundle.component;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&component.base64)
        .context("the bundle's component is not base64")?;
    let digest = Digest::of(&bytes).to_string();
    if component.digest != digest {
        bail!(
            "the bundle's component has digest {digest}, not the {} it was pinned to",
            component.digest
        );
    }
    let input = bundle.input.to_string();
    let pinned = digest;
    let (bytes, digest) = match &args.component {
        Some(path) => {
            let other = std::fs::read(path)
                .with_context(|| format!("cannot read the component {}", path.display()))?;
            let other_digest = Digest::of(&other).to_string();
            eprintln!(
                "taskbox: running {} ({other_digest}) in place of the pinned {pinned}",
                path.display()
            );
            (other, other_digest)
        }
        None => (bytes, pinned),
    };
    if let Some(dir) = &args.save {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        std::fs::write(dir.join("component.wasm"), &bytes)?;
        std::fs::write(dir.join("input.json"), &input)?;
    }
    let limits = Limits {
        timeout_ms: bundle.limits.timeout_ms,
        fuel: bundle.limits.fuel,
        memory_mb: bundle.limits.memory_mb,
    };
    let job = JobRef {
        id: bundle.job.id.to_string(),
        attempt: bundle.job.attempt,
        queue: bundle.job.queue.to_string(),
    };
    let recorded = &bundle.attempt;
    eprintln!(
        "taskbox: replaying attempt {} of job {} ({} v{}, {}) here",
        recorded.attempt, job.id, recorded.task.name, recorded.task.version, digest
    );
    let granted = &bundle.grants;
    let hosts: &[String] = granted.network.as_ref().map_or(&[], |n| &n.allow);
    if (!hosts.is_empty() || !granted.secrets.is_empty())
        && args.grants.allow.is_empty()
        && args.grants.secrets.is_empty()
    {
        eprintln!(
            "taskbox: the task may call {} and read {}; this replay grants neither (--allow HOST, --secret NAME grant them here)",
            json!(hosts),
            json!(granted.secrets)
        );
    }
    let network = args.grants.network_config();
    let determinism = bundle.deterministic.then(|| Determinism::of_job(&job.id));
    let mut request = AttemptRequest::new(job, input, limits);
    request.determinism = determinism;
    args.grants.apply(&mut request, &network)?;
    let report = client.block_on(async {
        let sandbox = Sandbox::new(SandboxConfig {
            cache_dir: super::run::default_cache_dir(),
            max_instances: 4,
            network,
            ..SandboxConfig::default()
        })?;
        let program = sandbox
            .load(crate::sandbox::LOCAL_TENANT, &bytes)
            .await
            .map_err(|e| anyhow::anyhow!("the component was refused here: {e}"))?;
        Ok::<_, anyhow::Error>(sandbox.run(&program, request).await)
    })?;
    let (outcome, kind) = ending_terms(&report.ending);
    let (was_outcome, was_kind) = recorded_terms(recorded);
    let same = outcome == was_outcome && kind == was_kind;
    let recorded_fuel = recorded.fuel_used;
    let output = match &report.ending {
        Ending::Done(text) => {
            Some(serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone())))
        }
        _ => None,
    };
    // What the attempt gave: the output of one that completed the job (the
    // only output on record), the error of one that failed.
    let same_output = match (&report.ending, &recorded.error) {
        (Ending::Failed(e), Some(was)) => e.code == was.code && e.message == was.message,
        _ => bundle.output.is_none() || output == bundle.output,
    };
    let exact = same && same_output && report.fuel_used == recorded_fuel;
    let mut status = exit_status((outcome, &kind), (&was_outcome, &was_kind));
    let owed_exact = bundle.deterministic && args.component.is_none();
    if owed_exact && !exact && status != 2 {
        status = 3;
    }
    if args.json {
        super::client::print_json(&json!({
            "recorded": recorded,
            "replayed": {
                "outcome": outcome,
                "error": match &report.ending {
                    Ending::Failed(e) => e.brief(),
                    _ => Value::Null,
                },
                "output": output,
                "fuel_used": report.fuel_used,
                "peak_memory_bytes": report.peak_memory_bytes,
                "duration_ms": report.duration.as_secs_f64() * 1000.0,
                "log": report.log,
            },
            "deterministic": bundle.deterministic,
            "recorded_output": bundle.output,
            "same_ending": same,
            "same_output": same_output,
            "same_fuel": report.fuel_used == recorded_fuel,
            "exact": exact,
            "exit_status": status,
        }))?;
    } else {
        let show = |o: &str, k: &Option<String>| match k {
            Some(k) => format!("{o} ({k})"),
            None => o.to_owned(),
        };
        println!(
            "recorded: {} · fuel {}",
            show(&was_outcome, &was_kind),
            thousands(recorded_fuel)
        );
        println!(
            "replayed: {} · fuel {}",
            show(outcome, &kind),
            thousands(report.fuel_used)
        );
        if let Ending::Failed(e) = &report.ending {
            println!("error:    {e}");
        }
        if !same_output {
            println!("output:   differs from the recorded output (or error message)");
        }
        println!(
            "{}",
            verdict(
                bundle.deterministic,
                same,
                same_output,
                report.fuel_used == recorded_fuel
            )
        );
    }
    Ok(ExitCode::from(status))
}

/// What the replay says of itself, beside the record.
fn verdict(deterministic: bool, same: bool, same_output: bool, same_fuel: bool) -> &'static str {
    match (deterministic, same && same_output, same_fuel) {
        (true, true, true) => {
            "the replay reproduced the attempt exactly: the same ending, output and fuel"
        }
        (true, _, _) => {
            "the replay did NOT reproduce the attempt, though the task is deterministic: \
             another component, other limits, or a host that differs"
        }
        (false, true, true) => "the replay ended as the attempt did, with the same fuel",
        (false, true, false) => {
            "the replay ended as the attempt did, with other fuel (the task is not deterministic, \
             or its deadline cut it short)"
        }
        (false, false, _) => "the replay did not end as the attempt did",
    }
}

#[cfg(test)]
mod tests {
    use super::{exit_status, verdict};

    #[test]
    fn a_deterministic_replay_says_whether_it_was_exact() {
        assert!(verdict(true, true, true, true).contains("exactly"));
        for (same, output, fuel) in [
            (true, true, false),
            (true, false, true),
            (false, true, true),
        ] {
            assert!(
                verdict(true, same, output, fuel).contains("NOT"),
                "{same} {output} {fuel}"
            );
        }
        assert!(verdict(false, true, true, false).contains("other fuel"));
    }

    #[test]
    fn the_exit_status_says_how_the_replay_ended() {
        let failed = |k: &str| ("failed", Some(k.to_owned()));
        let plain = |o: &'static str| (o, None::<String>);
        let cases = [
            // (replayed, recorded, status)
            (plain("completed"), plain("completed"), 0),
            (plain("completed"), failed("task_failed"), 0),
            (plain("snoozed"), plain("snoozed"), 0),
            (plain("waiting"), plain("waiting"), 0),
            (failed("task_failed"), failed("task_failed"), 1),
            (failed("fuel_exhausted"), failed("fuel_exhausted"), 1),
            (failed("trap"), failed("task_failed"), 3),
            (failed("task_failed"), plain("completed"), 3),
            (plain("snoozed"), plain("completed"), 3),
            (plain("cancelled"), plain("cancelled"), 3),
            (plain("unavailable"), failed("timeout"), 2),
        ];
        for (replayed, recorded, want) in cases {
            assert_eq!(
                exit_status((replayed.0, &replayed.1), (recorded.0, &recorded.1)),
                want,
                "{replayed:?} after {recorded:?}"
            );
        }
    }
}
