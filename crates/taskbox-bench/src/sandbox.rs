//! `taskbox bench sandbox`: an attempt's cost, metering's overhead, how
//! soon a runaway guest is stopped, and what a deterministic attempt (the
//! virtual clock and seeded random bytes) costs against a plain one.

use crate::common::{percentile, read_guest, request, runtime};
use anyhow::bail;
use clap::Args;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use taskbox::cli::format::duration;
use taskbox::sandbox::{Determinism, Ending, Limits, Metering, Program, Sandbox, SandboxConfig};

#[derive(Debug, Args)]
pub struct SandboxBench {
    /// Where the built guests are (noop.wasm, wordstats.wasm, hostile-loop.wasm).
    #[arg(long, default_value = "target/guests")]
    pub guests: PathBuf,
    /// Attempts per thread count in the per-attempt measurement.
    #[arg(long, default_value_t = 50_000, value_parser = clap::value_parser!(u64).range(100..=10_000_000))]
    pub attempts: u64,
    /// Runs of the CPU-bound guest per metering mode.
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u64).range(3..=1000))]
    pub cpu_runs: u64,
    /// Measure only this part (default: all of them).
    #[arg(long, value_enum)]
    pub only: Option<Part>,
    /// Print the figures as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// A part of the sandbox benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    PerAttempt,
    Metering,
    Runaway,
    Determinism,
}

fn sandbox_with(metering: Metering) -> anyhow::Result<Sandbox> {
    Ok(Sandbox::new(SandboxConfig {
        metering,
        ..SandboxConfig::default()
    })?)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    percentile(&v, 0.5)
}

struct PerAttempt {
    threads: usize,
    attempts: u64,
    p50: Duration,
    p99: Duration,
    per_second: f64,
}

/// Instantiate + call + drop of the no-op guest, sequentially on each thread.
fn per_attempt(
    sandbox: &Sandbox,
    bytes: &[u8],
    threads: usize,
    attempts: u64,
) -> anyhow::Result<PerAttempt> {
    let limits = Limits::DEFAULT;
    let program = runtime(1)?.block_on(async {
        let program = sandbox.load(taskbox::sandbox::LOCAL_TENANT, bytes).await?;
        // Warm the pool's slots and the caches.
        for _ in 0..1000 {
            expect_done(sandbox.run(&program, request("{}", limits)).await.ending)?;
        }
        anyhow::Ok(program)
    })?;
    // One OS thread with its own single-threaded runtime per measured
    // thread, so this measures the sandbox and not the executor's stealing.
    let per_thread = attempts / threads as u64;
    let started = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let (sandbox, program) = (sandbox.clone(), program.clone());
            std::thread::spawn(move || {
                runtime(1)?.block_on(async {
                    let mut times = Vec::with_capacity(per_thread as usize);
                    for _ in 0..per_thread {
                        let t = Instant::now();
                        let report = sandbox.run(&program, request("{}", limits)).await;
                        times.push(t.elapsed());
                        expect_done(report.ending)?;
                    }
                    anyhow::Ok(times)
                })
            })
        })
        .collect();
    let mut times = Vec::new();
    for w in workers {
        let joined = w
            .join()
            .map_err(|_| anyhow::anyhow!("a benchmark thread panicked"))?;
        times.extend(joined?);
    }
    let wall = started.elapsed();
    times.sort();
    Ok(PerAttempt {
        threads,
        attempts: times.len() as u64,
        p50: percentile(&times, 0.5),
        p99: percentile(&times, 0.99),
        per_second: times.len() as f64 / wall.as_secs_f64(),
    })
}

/// Per-attempt times of one guest, plain and deterministic.
struct DeterminismCost {
    guest: &'static str,
    attempts: u64,
    plain: [Duration; 2],
    deterministic: [Duration; 2],
}

/// Per-attempt p50 and p99 of `input` on a guest, run plainly and
/// deterministically (a job's clock and seed, made per attempt as the
/// runner makes them), in alternating blocks on one thread so that drift
/// weighs on both alike.
fn determinism_cost(
    sandbox: &Sandbox,
    guest: &'static str,
    bytes: &[u8],
    input: &str,
    attempts: u64,
) -> anyhow::Result<DeterminismCost> {
    const BLOCK: u64 = 500;
    let limits = Limits::DEFAULT;
    let job_id = taskbox::job::new_id();
    runtime(1)?.block_on(async {
        let program = sandbox.load(taskbox::sandbox::LOCAL_TENANT, bytes).await?;
        let run = |deterministic: bool| {
            let mut req = request(input, limits);
            if deterministic {
                req.determinism = Some(Determinism::of_job(&job_id));
            }
            sandbox.run(&program, req)
        };
        for _ in 0..BLOCK {
            expect_done(run(false).await.ending)?;
            expect_done(run(true).await.ending)?;
        }
        let mut times = [Vec::new(), Vec::new()];
        for block in 0..attempts.div_ceil(BLOCK) {
            for side in [block % 2 == 1, block % 2 == 0] {
                for _ in 0..BLOCK {
                    let t = Instant::now();
                    let report = run(side).await;
                    times[usize::from(side)].push(t.elapsed());
                    expect_done(report.ending)?;
                }
            }
        }
        let [mut plain, mut det] = times;
        plain.sort();
        det.sort();
        Ok(DeterminismCost {
            guest,
            attempts: plain.len() as u64,
            plain: [percentile(&plain, 0.5), percentile(&plain, 0.99)],
            deterministic: [percentile(&det, 0.5), percentile(&det, 0.99)],
        })
    })
}

fn expect_done(ending: Ending) -> anyhow::Result<()> {
    match ending {
        Ending::Done(_) => Ok(()),
        other => bail!("the benchmark guest did not finish: {other:?}"),
    }
}

/// A text of about `words` words, varied enough for real hashing work.
fn sample_text(words: usize) -> String {
    const VOCAB: &[&str] = &[
        "queue",
        "sandbox",
        "runner",
        "lease",
        "fuel",
        "epoch",
        "tenant",
        "digest",
        "attempt",
        "retry",
        "backoff",
        "schedule",
        "workflow",
        "component",
        "memory",
        "deadline",
        "output",
    ];
    let mut text = String::with_capacity(words * 8);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..words {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        text.push_str(VOCAB[(x % VOCAB.len() as u64) as usize]);
        text.push_str(if i % 12 == 11 { ". " } else { " " });
    }
    text
}

/// A CPU-bound workload for the metering comparison.
struct Workload {
    name: &'static str,
    bytes: Vec<u8>,
    input: String,
}

/// The workloads: string processing and hashing (word statistics of a long
/// text), JSON in and out (an invoice of thousands of lines), and an
/// interpreter (the JavaScript article task on a long body).
fn workloads(dir: &Path) -> anyhow::Result<Vec<Workload>> {
    let items: Vec<_> = (0..5000)
        .map(|i| {
            json!({"sku": format!("SKU-{i:05}"), "description": format!("item number {i} of the big order"),
                   "quantity": 1 + i % 7, "unit_price_cents": 100 + (i * 37) % 9000})
        })
        .collect();
    let order = json!({"order_id": "BENCH-1", "customer": {"name": "Bench", "email": "bench@example.com"},
                       "currency": "EUR", "items": items, "tax_rate_percent": 19, "discount_percent": 5});
    let body: String = (0..400)
        .map(|i| {
            format!(
                "# Section {i}\n{}\nSee https://example.com/page/{i} for more.\n",
                sample_text(60)
            )
        })
        .collect();
    Ok(vec![
        Workload {
            name: "wordstats (200,000 words)",
            bytes: read_guest(dir, "wordstats.wasm")?,
            input: json!({"text": sample_text(200_000), "top": 10}).to_string(),
        },
        Workload {
            name: "invoice (5,000 lines)",
            bytes: read_guest(dir, "invoice.wasm")?,
            input: order.to_string(),
        },
        Workload {
            name: "js-article (24,000 words)",
            bytes: read_guest(dir, "js-article.wasm")?,
            input: json!({"title": "A long article", "body": body}).to_string(),
        },
    ])
}

const MODES: [Metering; 3] = [
    Metering::Unmetered,
    Metering::EpochOnly,
    Metering::FuelAndEpoch,
];

/// Median wall time of a workload under each metering mode, runs
/// interleaved so drift on a noisy machine hits all three alike.
fn metering_overhead(w: &Workload, runs: u64) -> anyhow::Result<[Duration; 3]> {
    let rt = runtime(1)?;
    let limits = Limits {
        timeout_ms: 60_000,
        fuel: 1_000_000_000_000,
        memory_mb: 512,
    };
    rt.block_on(async {
        let mut loaded: Vec<(Sandbox, Arc<Program>)> = Vec::new();
        for m in MODES {
            let s = sandbox_with(m)?;
            let p = s.load(taskbox::sandbox::LOCAL_TENANT, &w.bytes).await?;
            expect_done(s.run(&p, request(&w.input, limits)).await.ending)?;
            loaded.push((s, p));
        }
        let mut times = vec![Vec::new(); MODES.len()];
        for _ in 0..runs {
            for (i, (s, p)) in loaded.iter().enumerate() {
                let t = Instant::now();
                let report = s.run(p, request(&w.input, limits)).await;
                times[i].push(t.elapsed());
                expect_done(report.ending)?;
            }
        }
        let mut out = [Duration::ZERO; 3];
        for (i, t) in times.into_iter().enumerate() {
            out[i] = median(t);
        }
        Ok(out)
    })
}

/// How long an infinite loop really runs against its deadline.
fn runaway(sandbox: &Sandbox, bytes: &[u8]) -> anyhow::Result<Vec<(u64, Duration)>> {
    let rt = runtime(1)?;
    rt.block_on(async {
        let program = sandbox.load(taskbox::sandbox::LOCAL_TENANT, bytes).await?;
        let mut out = Vec::new();
        for deadline_ms in [10, 50, 100, 250, 1000] {
            let mut worst = Duration::ZERO;
            for _ in 0..3 {
                let limits = Limits {
                    timeout_ms: deadline_ms,
                    fuel: 1_000_000_000_000,
                    memory_mb: 64,
                };
                let report = sandbox.run(&program, request("{}", limits)).await;
                match report.ending {
                    Ending::Failed(e) if e.kind == taskbox::job::ErrorKind::Timeout => {}
                    other => bail!("the runaway guest ended {other:?}, not in a timeout"),
                }
                worst = worst.max(report.duration);
            }
            out.push((deadline_ms, worst));
        }
        Ok(out)
    })
}

pub fn main(args: SandboxBench) -> anyhow::Result<ExitCode> {
    let noop = read_guest(&args.guests, "noop.wasm")?;
    let workloads = workloads(&args.guests)?;
    let hostile = read_guest(&args.guests, "hostile-loop.wasm")?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());

    let wanted = |p: Part| args.only.is_none_or(|o| o == p);
    let sandbox = sandbox_with(Metering::FuelAndEpoch)?;
    let mut attempts = Vec::new();
    if wanted(Part::PerAttempt) {
        eprintln!(
            "bench: per-attempt cost of the no-op guest ({} attempts)…",
            args.attempts
        );
        attempts.push(per_attempt(&sandbox, &noop, 1, args.attempts)?);
        attempts.push(per_attempt(&sandbox, &noop, 2, args.attempts)?);
    }
    let mut overhead = Vec::new();
    if wanted(Part::Metering) {
        for w in &workloads {
            eprintln!(
                "bench: metering overhead on {} ({} runs)…",
                w.name, args.cpu_runs
            );
            overhead.push((w.name, metering_overhead(w, args.cpu_runs)?));
        }
    }
    let mut determinism = Vec::new();
    if wanted(Part::Determinism) {
        let n = (args.attempts / 5).max(1000);
        eprintln!("bench: deterministic attempts against plain ones ({n} attempts each)…");
        let clock = read_guest(&args.guests, "limits.wasm")?;
        determinism.push(determinism_cost(&sandbox, "no-op", &noop, "{}", n)?);
        determinism.push(determinism_cost(
            &sandbox,
            "clock (reads both clocks and random)",
            &clock,
            r#"{"op":"clock","iterations":0}"#,
            n,
        )?);
    }
    let mut stops = Vec::new();
    if wanted(Part::Runaway) {
        eprintln!("bench: stopping an infinite loop…");
        stops = runaway(&sandbox, &hostile)?;
    }

    let ratio = |t: &[Duration; 3], i: usize| t[i].as_secs_f64() / t[0].as_secs_f64() - 1.0;
    let worst_stop = stops
        .iter()
        .map(|(ms, d)| d.as_secs_f64() * 1000.0 / *ms as f64)
        .fold(0.0, f64::max);

    if args.json {
        let pa = |p: &PerAttempt| {
            json!({"threads": p.threads, "attempts": p.attempts, "p50_us": p.p50.as_secs_f64() * 1e6,
                   "p99_us": p.p99.as_secs_f64() * 1e6, "attempts_per_s": p.per_second})
        };
        let out = json!({
            "cores": cores,
            "per_attempt": attempts.iter().map(pa).collect::<Vec<_>>(),
            "metering": overhead.iter().map(|(name, t)| json!({
                "workload": name,
                "unmetered_ms": t[0].as_secs_f64() * 1e3,
                "epoch_ms": t[1].as_secs_f64() * 1e3,
                "fuel_and_epoch_ms": t[2].as_secs_f64() * 1e3,
                "epoch_overhead": ratio(t, 1),
                "fuel_and_epoch_overhead": ratio(t, 2),
            })).collect::<Vec<_>>(),
            "runaway": stops.iter().map(|(ms, d)| json!({"deadline_ms": ms, "stopped_after_ms": d.as_secs_f64() * 1e3})).collect::<Vec<_>>(),
            "runaway_worst_ratio": worst_stop,
            "determinism": determinism.iter().map(|d| json!({
                "guest": d.guest,
                "attempts": d.attempts,
                "plain_p50_us": d.plain[0].as_secs_f64() * 1e6,
                "plain_p99_us": d.plain[1].as_secs_f64() * 1e6,
                "deterministic_p50_us": d.deterministic[0].as_secs_f64() * 1e6,
                "deterministic_p99_us": d.deterministic[1].as_secs_f64() * 1e6,
            })).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }

    println!("taskbox bench sandbox · {cores} cores");
    if !attempts.is_empty() {
        println!();
        println!("per attempt (instantiate + call + drop, no-op guest, fuel + epoch on)");
        println!("  threads   attempts      p50       p99    attempts/s   target");
        for p in &attempts {
            println!(
                "  {:>7}  {:>9}  {:>8}  {:>8}  {:>11.0}   p50 ≤ 10 µs, ≥ 150,000/s",
                p.threads,
                p.attempts,
                duration(p.p50),
                duration(p.p99),
                p.per_second
            );
        }
    }
    if !overhead.is_empty() {
        println!();
        println!(
            "metering overhead (median of {} runs each; targets: epoch ≤ 10 %, fuel + epoch ≤ 30 %)",
            args.cpu_runs
        );
        println!("  workload                      neither       epoch            fuel + epoch");
        for (name, t) in &overhead {
            println!(
                "  {name:<27} {:>10} {:>10} {:>+6.1} % {:>10} {:>+6.1} %",
                duration(t[0]),
                duration(t[1]),
                ratio(t, 1) * 100.0,
                duration(t[2]),
                ratio(t, 2) * 100.0
            );
        }
    }
    if !stops.is_empty() {
        println!();
        println!("runaway guest (infinite loop) stopped after, worst of 3");
        for (ms, d) in &stops {
            println!(
                "  deadline {:>5} ms   {:>10}   {:.3}×",
                ms,
                duration(*d),
                d.as_secs_f64() * 1000.0 / *ms as f64
            );
        }
        println!("  worst ratio {worst_stop:.3}×   target ≤ 1.1×");
    }
    if !determinism.is_empty() {
        println!();
        println!(
            "deterministic attempts (virtual clock, seeded random) against plain ones, one thread"
        );
        println!("  guest                                  attempts   plain p50   p99    deterministic p50   p99");
        for d in &determinism {
            println!(
                "  {:<38} {:>8}  {:>9} {:>8}   {:>9} {:>8}   {:+.1} %",
                d.guest,
                d.attempts,
                duration(d.plain[0]),
                duration(d.plain[1]),
                duration(d.deterministic[0]),
                duration(d.deterministic[1]),
                (d.deterministic[0].as_secs_f64() / d.plain[0].as_secs_f64() - 1.0) * 100.0
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
