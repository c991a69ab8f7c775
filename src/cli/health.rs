//! `taskbox health`: asks a server's `/healthz` whether it and its database
//! answer; exit status 0 when they do, 1 when not. The image's HEALTHCHECK
//! runs it (the image has no curl).

use anyhow::Context;
use clap::Args;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct HealthArgs {
    /// The taskbox server's base URL (http, or https behind a TLS proxy).
    #[arg(long, env = "TASKBOX_URL", default_value = taskbox_client::DEFAULT_URL)]
    pub url: String,
    /// How long to wait for the answer, in ms.
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub timeout_ms: u64,
}

pub fn main(args: HealthArgs) -> anyhow::Result<ExitCode> {
    let url = format!("{}/healthz", args.url.trim_end_matches('/'));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let client = crate::http::client()
        .timeout(Duration::from_millis(args.timeout_ms))
        .build()
        .context("cannot build the HTTP client")?;
    let answer = rt.block_on(async {
        let resp = client.get(&url).send().await?;
        let status = resp.status();
        Ok::<_, reqwest::Error>((status, resp.text().await.unwrap_or_default()))
    });
    match answer {
        Ok((status, body)) if status.is_success() => {
            println!("{body}");
            Ok(ExitCode::SUCCESS)
        }
        Ok((status, body)) => {
            eprintln!("taskbox: {url} answered HTTP {}: {body}", status.as_u16());
            Ok(ExitCode::from(1))
        }
        Err(e) => {
            eprintln!("taskbox: cannot reach {url}: {e}");
            Ok(ExitCode::from(1))
        }
    }
}
