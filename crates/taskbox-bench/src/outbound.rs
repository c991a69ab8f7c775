//! `taskbox bench http`: what the host adds to a guest's outbound request.
//! The same GET to a server on 127.0.0.1 is made again and again by the
//! `http-probe` guest through `wasi:http` (the grant's checks, the address
//! check, a fresh connection each time, the response through the guest's
//! streams) and by the host directly with hyper (a fresh connection each
//! time too), in alternating rounds so both see the same machine; the
//! difference of the medians is what the sandbox's HTTP costs.

use crate::common::{percentile, read_guest, request, runtime};
use anyhow::{bail, Context};
use clap::Args;
use serde_json::json;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use taskbox::cli::format::duration;
use taskbox::sandbox::{Ending, Limits, NetworkConfig, NetworkGrant, Sandbox, SandboxConfig};

#[derive(Debug, Args)]
pub struct HttpBench {
    /// Where the built guests are (http-probe.wasm).
    #[arg(long, default_value = "target/guests")]
    pub guests: PathBuf,
    /// Requests each way, over all rounds.
    #[arg(long, default_value_t = 5_000, value_parser = clap::value_parser!(u64).range(10..=1_000_000))]
    pub requests: u64,
    /// Rounds, alternating guest and direct.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub rounds: u64,
    /// Print the figures as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

struct Spread {
    p50: Duration,
    p90: Duration,
    p99: Duration,
}

fn spread(mut v: Vec<Duration>) -> Spread {
    v.sort();
    Spread {
        p50: percentile(&v, 0.5),
        p90: percentile(&v, 0.9),
        p99: percentile(&v, 0.99),
    }
}

pub fn main(args: HttpBench) -> anyhow::Result<ExitCode> {
    let wasm = read_guest(&args.guests, "http-probe.wasm")?;
    let rt = runtime(2)?;
    rt.block_on(async move {
        let addr = serve().await?;
        let per_round = args.requests.div_ceil(args.rounds);
        let max_requests = u32::try_from(per_round).context("too many requests in one round")?;
        let sandbox = Sandbox::new(SandboxConfig {
            network: NetworkConfig {
                allow_private: true,
                max_requests,
                ..NetworkConfig::default()
            },
            ..SandboxConfig::default()
        })?;
        let program = sandbox
            .load(taskbox::sandbox::LOCAL_TENANT, &wasm)
            .await
            .map_err(|e| anyhow::anyhow!("http-probe.wasm was refused: {e}"))?;
        let grant = Arc::new(
            NetworkGrant::resolve(
                &[addr.to_string()],
                Some(max_requests),
                None,
                &sandbox.config().network,
            )
            .map_err(|e| anyhow::anyhow!(e.join("; ")))?,
        );
        let url = format!("http://{addr}/");
        // One warm-up of each, not counted: compiles, pools and caches.
        guest_round(&sandbox, &program, &grant, &url, 10).await?;
        direct_round(addr, 10).await?;
        let (mut through, mut direct) = (Vec::new(), Vec::new());
        let (mut attempts_wall, mut direct_wall) = (Duration::ZERO, Duration::ZERO);
        for round in 0..args.rounds {
            eprintln!("round {} of {}", round + 1, args.rounds);
            let (took, wall) = guest_round(&sandbox, &program, &grant, &url, per_round).await?;
            through.extend(took);
            attempts_wall += wall;
            let t0 = Instant::now();
            direct.extend(direct_round(addr, per_round).await?);
            direct_wall += t0.elapsed();
        }
        let n = u32::try_from(per_round * args.rounds).unwrap_or(u32::MAX).max(1);
        // Whole attempts over their requests: the guest's own work on each
        // (building the request, reading the JSON) and the attempt's start
        // and end are in it too.
        let (g_mean, d_mean) = (attempts_wall / n, direct_wall / n);
        let (g, d) = (spread(through), spread(direct));
        let added = g.p50.saturating_sub(d.p50);
        if args.json {
            let us = |d: Duration| d.as_secs_f64() * 1e6;
            println!(
                "{}",
                json!({
                    "requests": per_round * args.rounds,
                    "rounds": args.rounds,
                    "guest_us": {"p50": us(g.p50), "p90": us(g.p90), "p99": us(g.p99)},
                    "direct_us": {"p50": us(d.p50), "p90": us(d.p90), "p99": us(d.p99)},
                    "added_p50_us": us(added),
                    "guest_wall_per_request_us": us(g_mean),
                    "direct_wall_per_request_us": us(d_mean),
                })
            );
        } else {
            println!(
                "{} requests each way, {} rounds, a fresh connection each\n",
                per_round * args.rounds,
                args.rounds
            );
            println!("{:<28} {:>10} {:>10} {:>10}", "", "p50", "p90", "p99");
            for (name, s) in [("guest (wasi:http)", &g), ("host directly (hyper)", &d)] {
                println!(
                    "{:<28} {:>10} {:>10} {:>10}",
                    name,
                    duration(s.p50),
                    duration(s.p90),
                    duration(s.p99)
                );
            }
            println!("\nadded by the sandbox's HTTP, p50: {}", duration(added));
            println!(
                "wall time per request, whole attempts (guest work included): {} through the guest, {} directly",
                duration(g_mean),
                duration(d_mean)
            );
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// A server on 127.0.0.1 that answers every request with a short body.
async fn serve() -> anyhow::Result<SocketAddr> {
    let app = axum::Router::new().fallback(|| async { "ok" });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(addr)
}

/// One attempt of the guest making `n` requests; the guest times each.
/// Also the attempt's whole wall time.
async fn guest_round(
    sandbox: &Sandbox,
    program: &taskbox::sandbox::Program,
    grant: &Arc<NetworkGrant>,
    url: &str,
    n: u64,
) -> anyhow::Result<(Vec<Duration>, Duration)> {
    let input = json!({"requests": [{"method": "GET", "url": url}], "repeat": n});
    let mut req = request(
        &input.to_string(),
        Limits {
            timeout_ms: 600_000,
            fuel: 1_000_000_000_000,
            memory_mb: 256,
        },
    );
    req.network = Some(grant.clone());
    req.tenant = Arc::from("bench");
    let report = sandbox.run(program, req).await;
    let Ending::Done(text) = report.ending else {
        bail!("the guest did not finish: {:?}", report.ending);
    };
    let out: serde_json::Value = serde_json::from_str(&text)?;
    let results = out["results"].as_array().cloned().unwrap_or_default();
    let mut took = Vec::with_capacity(results.len());
    for r in results {
        if r["status"] != 200 {
            bail!("a guest request failed: {r}");
        }
        took.push(Duration::from_micros(r["micros"].as_u64().unwrap_or(0)));
    }
    Ok((took, report.duration))
}

/// `n` requests by the host itself, each on a fresh connection, timed from
/// the connect to the end of the body (the guest's span: it starts its
/// clock before `handle`, which connects, and stops it at the body's end).
async fn direct_round(addr: SocketAddr, n: u64) -> anyhow::Result<Vec<Duration>> {
    use http_body_util::BodyExt;
    let mut took = Vec::new();
    for _ in 0..n {
        let t0 = Instant::now();
        let tcp = tokio::net::TcpStream::connect(addr).await?;
        tcp.set_nodelay(true)?;
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp)).await?;
        let conn = tokio::spawn(conn);
        let req = http::Request::get("/")
            .header(http::header::HOST, addr.to_string())
            .body(http_body_util::Empty::<bytes::Bytes>::new())?;
        let res = sender.send_request(req).await?;
        if res.status() != 200 {
            bail!("the server answered {}", res.status());
        }
        res.into_body().collect().await?;
        // As the guest times it: to the end of the body, not the close.
        took.push(t0.elapsed());
        drop(sender);
        let _ = conn.await;
    }
    Ok(took)
}
