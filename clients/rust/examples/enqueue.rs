//! Enqueue jobs, wait out a 429 with its `Retry-After`, and print the outputs.
//!
//!   TASKBOX_URL=http://127.0.0.1:8080 TASKBOX_TOKEN=… \
//!     cargo run -p taskbox-client --example enqueue -- TASK '{"name":"Ada"}' [COUNT]
//!
//! COUNT jobs (default 1) are enqueued one after another, so that a tenant
//! with a low `enqueue_per_second` meets its rate limit and the client waits.

use std::process::ExitCode;
use std::time::Duration;
use taskbox_client::{Client, EnqueueOptions, Error, JobSpec, JobStatus, WaitOptions};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(task), input, count) = (args.first(), args.get(1), args.get(2)) else {
        eprintln!("usage: TASKBOX_URL=… TASKBOX_TOKEN=… enqueue TASK [INPUT-JSON] [COUNT]");
        return ExitCode::from(2);
    };
    let input: serde_json::Value = match serde_json::from_str(input.map_or("{}", String::as_str)) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("the input is not JSON: {e}");
            return ExitCode::from(2);
        }
    };
    let Ok(count) = count.map_or(Ok(1), |c| c.parse::<u32>()) else {
        eprintln!("COUNT is a whole number");
        return ExitCode::from(2);
    };
    match run(task, input, count).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(task: &str, input: serde_json::Value, count: u32) -> Result<ExitCode, Error> {
    let taskbox = Client::from_env()?;
    let told = |wait: Duration, _try: u32| {
        eprintln!("rate limited: retrying after {} ms", wait.as_millis());
    };
    let options = EnqueueOptions {
        on_rate_limited: Some(&told),
        ..EnqueueOptions::default()
    };
    let mut ids = Vec::new();
    for _ in 0..count {
        let job = taskbox
            .enqueue_with(&JobSpec::task(task, &input)?, &options)
            .await?;
        eprintln!("enqueued {}", job.id);
        ids.push(job.id);
    }
    let wait = WaitOptions {
        timeout: Duration::from_secs(30),
        ..WaitOptions::default()
    };
    for id in ids {
        let done = taskbox.wait_for_job(&id, &wait).await?;
        if done.status != JobStatus::Completed {
            eprintln!("job {id} {}: {:?}", done.status, done.error);
            return Ok(ExitCode::FAILURE);
        }
        println!("{}", done.output.unwrap_or_default());
    }
    Ok(ExitCode::SUCCESS)
}
