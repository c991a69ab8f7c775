//! `taskbox run`: one attempt of a local file, reported like the server would.

use super::format::{bytes, duration, thousands};
use crate::attempt_log::AttemptLog;
use crate::sandbox::{
    AttemptReport, AttemptRequest, Ending, JobRef, Limits, Origin, Sandbox, SandboxConfig,
};
use anyhow::{bail, Context};
use clap::Args;
use serde_json::{json, Value};
use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
#[command(after_help = "The default limits are the server's defaults.\n\
Exit status: 0 when the attempt finished (done, snooze or wait), 1 when it failed, \
2 when the component or the flags were refused.")]
pub struct RunArgs {
    /// The task: a component of the task world, or a WASI command (.wasm).
    pub file: PathBuf,
    /// The job's input: JSON text, `@path` to read a file, or `-` for stdin.
    #[arg(long, short, default_value = "{}")]
    pub input: String,
    /// Wall-clock limit of the attempt, in milliseconds.
    #[arg(long, default_value_t = Limits::DEFAULT.timeout_ms)]
    pub timeout_ms: u64,
    /// Fuel budget of the attempt (about one unit per WebAssembly instruction).
    #[arg(long, default_value_t = Limits::DEFAULT.fuel)]
    pub fuel: u64,
    /// Linear memory limit of the attempt, in MiB.
    #[arg(long, default_value_t = Limits::DEFAULT.memory_mb)]
    pub memory_mb: u32,
    /// Which attempt this is, as the guest sees it (test your retry logic).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub attempt: u32,
    /// The job id the guest sees.
    #[arg(long, default_value = "local")]
    pub job_id: String,
    /// The queue the guest sees.
    #[arg(long, default_value = "default")]
    pub queue: String,
    /// Run as a deterministic task's attempt: the clock starts at the job's creation (the
    /// time in --job-id, when it is a job's ULID; the Unix epoch otherwise) and advances
    /// with the fuel spent, and random numbers are seeded from the job id.
    #[arg(long)]
    pub deterministic: bool,
    /// Where compiled components are cached [default: the user cache dir, e.g. ~/.cache/taskbox].
    #[arg(long, env = "TASKBOX_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Compile in memory only; cache nothing.
    #[arg(long, conflicts_with = "cache_dir")]
    pub no_cache: bool,
    /// Run this many attempts in a row (fresh sandbox each) and report their
    /// times and the process's memory; the last attempt's outcome is printed.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub repeat: u64,
    /// Print the whole report (outcome, costs, log) as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub grants: super::grants::GrantArgs,
}

/// Times of repeated attempts and the resident memory around them.
struct Repeat {
    attempts: u64,
    p50: Duration,
    p99: Duration,
    /// After the first tenth of the attempts (at most 100), once pools are warm.
    rss_warm_kib: Option<u64>,
    rss_end_kib: Option<u64>,
}

/// Resident set size of this process, from /proc (Linux only).
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

pub fn main(args: RunArgs) -> anyhow::Result<ExitCode> {
    let input = read_input(&args.input)?;
    let wasm = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let limits = Limits {
        timeout_ms: args.timeout_ms,
        fuel: args.fuel,
        memory_mb: args.memory_mb,
    };
    let config = SandboxConfig {
        cache_dir: if args.no_cache {
            None
        } else {
            args.cache_dir.clone().or_else(default_cache_dir)
        },
        max_instances: 4,
        network: args.grants.network_config(),
        ..SandboxConfig::default()
    };
    if limits.clamped(&config.ceilings) != limits {
        bail!(
            "limits above the ceilings: at most {} ms, {} fuel, {} MiB",
            config.ceilings.max_timeout_ms,
            config.ceilings.max_fuel,
            config.ceilings.max_memory_mb
        );
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let network = config.network.clone();
    rt.block_on(async move {
        let sandbox = Sandbox::new(config)?;
        let loading = Instant::now();
        let program = match sandbox.load(crate::sandbox::LOCAL_TENANT, &wasm).await {
            Ok(p) => p,
            Err(e) => {
                eprintln!("taskbox: {} was refused: {e}", args.file.display());
                return Ok(ExitCode::from(2));
            }
        };
        let how = match &program.origin {
            Origin::DiskCache => "loaded from cache".to_owned(),
            Origin::Compiled { .. } => format!("compiled in {}", duration(loading.elapsed())),
        };
        eprintln!(
            "taskbox: {} ({}, {:?} ABI, {}) {how}",
            args.file.display(),
            program.digest,
            program.abi(),
            bytes(program.size as u64),
        );
        let job = JobRef {
            id: args.job_id.clone(),
            attempt: args.attempt,
            queue: args.queue.clone(),
        };
        let determinism = args
            .deterministic
            .then(|| crate::sandbox::Determinism::of_job(&job.id));
        let mut request = AttemptRequest::new(job, input, limits);
        request.determinism = determinism;
        args.grants.apply(&mut request, &network)?;
        let mut report = sandbox.run(&program, request.clone()).await;
        let repeat = if args.repeat > 1 {
            let warm_at = (args.repeat / 10).clamp(1, 100);
            let mut times = vec![report.duration];
            let mut rss_warm_kib = None;
            for i in 1..args.repeat {
                if i == warm_at {
                    rss_warm_kib = rss_kib();
                }
                report = sandbox.run(&program, request.clone()).await;
                times.push(report.duration);
            }
            times.sort();
            let at = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
            Some(Repeat {
                attempts: args.repeat,
                p50: at(0.5),
                p99: at(0.99),
                rss_warm_kib,
                rss_end_kib: rss_kib(),
            })
        } else {
            None
        };
        print_report(&report, &limits, repeat.as_ref(), args.json)?;
        Ok(match report.ending {
            Ending::Done(_) | Ending::Snooze(_) | Ending::Wait(_) => ExitCode::SUCCESS,
            _ => ExitCode::from(1),
        })
    })
}

fn read_input(arg: &str) -> anyhow::Result<String> {
    let text = if arg == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("cannot read the input from stdin")?;
        s
    } else if let Some(path) = arg.strip_prefix('@') {
        std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the input file {path}"))?
    } else {
        arg.to_owned()
    };
    if let Err(e) = serde_json::from_str::<Value>(&text) {
        bail!("--input is not JSON: {e}");
    }
    Ok(text)
}

pub(crate) fn default_cache_dir() -> Option<PathBuf> {
    Some(crate::project::user_cache_dir()?.join("artifacts"))
}

/// The outcome as JSON: the output itself, or `{"error": …}`, `{"snooze": …}`, `{"wait": …}`.
fn outcome_json(ending: &Ending) -> Value {
    let parse = |text: &str| serde_json::from_str(text).unwrap_or(Value::String(text.to_owned()));
    match ending {
        Ending::Done(text) => parse(text),
        Ending::Snooze(ms) => json!({"snooze": {"delay_ms": ms}}),
        Ending::Wait(text) => json!({"wait": parse(text)}),
        Ending::Failed(e) => {
            let mut error = json!({"kind": e.kind, "code": e.code, "message": e.message});
            if let Some(retryable) = e.retryable {
                error["retryable"] = json!(retryable);
            }
            json!({ "error": error })
        }
        Ending::Cancelled => {
            json!({"error": {"kind": "cancelled", "code": "cancelled", "message": "the attempt was cancelled"}})
        }
        Ending::Unavailable(why) => {
            json!({"error": {"kind": "unavailable", "code": "unavailable", "message": why}})
        }
    }
}

fn print_report(
    report: &AttemptReport,
    limits: &Limits,
    repeat: Option<&Repeat>,
    as_json: bool,
) -> anyhow::Result<()> {
    let outcome = outcome_json(&report.ending);
    let repeat_json = repeat.map(|r| {
        json!({
            "attempts": r.attempts,
            "p50_ms": r.p50.as_secs_f64() * 1e3,
            "p99_ms": r.p99.as_secs_f64() * 1e3,
            "rss_warm_kib": r.rss_warm_kib,
            "rss_end_kib": r.rss_end_kib,
        })
    });
    if as_json {
        let whole = json!({
            "repeat": repeat_json,
            "outcome": outcome,
            "fuel_used": report.fuel_used,
            "peak_memory_bytes": report.peak_memory_bytes,
            "duration_ms": report.duration.as_secs_f64() * 1000.0,
            "progress": report.progress,
            "network": report.network,
            "log": report.log,
        });
        println!("{}", serde_json::to_string_pretty(&whole)?);
        return Ok(());
    }
    print_log(&report.log);
    let verdict = match &report.ending {
        Ending::Done(_) => "done".to_owned(),
        Ending::Snooze(ms) => format!("snooze {ms} ms"),
        Ending::Wait(_) => "wait".to_owned(),
        Ending::Failed(e) => format!("failed: {e}"),
        Ending::Cancelled => "cancelled".to_owned(),
        Ending::Unavailable(why) => format!("could not run: {why}"),
    };
    eprintln!(
        "taskbox: {verdict} · {} wall · fuel {} of {} · peak memory {} of {} MiB",
        duration(report.duration),
        thousands(report.fuel_used),
        thousands(limits.fuel),
        bytes(report.peak_memory_bytes),
        limits.memory_mb,
    );
    if let Some(p) = &report.progress {
        eprintln!("taskbox: last progress {}% {}", p.percent, p.note);
    }
    let n = report.network;
    if !n.is_empty() {
        eprintln!(
            "taskbox: outbound HTTP: {} requests ({} refused) · {} sent · {} received",
            n.requests,
            n.refused,
            bytes(n.bytes_sent),
            bytes(n.bytes_received)
        );
    }
    if let Some(r) = repeat {
        let kib = |k: Option<u64>| k.map_or("?".to_owned(), |k| bytes(k * 1024));
        eprintln!(
            "taskbox: {} attempts · p50 {} · p99 {} · resident memory {} once warm, {} at the end",
            thousands(r.attempts),
            duration(r.p50),
            duration(r.p99),
            kib(r.rss_warm_kib),
            kib(r.rss_end_kib),
        );
    }
    let text = if std::io::stdout().is_terminal() {
        serde_json::to_string_pretty(&outcome)?
    } else {
        serde_json::to_string(&outcome)?
    };
    println!("{text}");
    Ok(())
}

fn print_log(log: &AttemptLog) {
    for line in &log.lines {
        eprintln!("{}", super::job_view::log_line(line));
    }
    if log.dropped_lines > 0 || log.dropped_bytes > 0 {
        eprintln!(
            "taskbox: log over its budget: {} lines and {} dropped",
            thousands(log.dropped_lines),
            bytes(log.dropped_bytes)
        );
    }
}
