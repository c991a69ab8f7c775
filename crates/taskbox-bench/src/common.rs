//! What several benches share: a runtime, the guests, an attempt's request,
//! and percentiles of what they timed.

use anyhow::Context;
use serde_json::json;
use std::path::Path;
use std::time::Duration;
use taskbox::sandbox::{AttemptRequest, JobRef, Limits};

/// A runtime of `threads` workers; one thread is a current-thread runtime,
/// so that a bench of one thread measures no work stealing.
pub fn runtime(threads: usize) -> anyhow::Result<tokio::runtime::Runtime> {
    let mut b = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(threads);
        b
    };
    b.enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// A built guest's bytes, or an error that says how to build them.
pub fn read_guest(dir: &Path, name: &str) -> anyhow::Result<Vec<u8>> {
    let path = dir.join(name);
    std::fs::read(&path).with_context(|| {
        format!(
            "cannot read {} (build the guests first: scripts/build-guests)",
            path.display()
        )
    })
}

/// An attempt of a bench's job on `input`.
pub fn request(input: &str, limits: Limits) -> AttemptRequest {
    let job = JobRef {
        id: "bench".into(),
        attempt: 1,
        queue: "default".into(),
    };
    AttemptRequest::new(job, input, limits)
}

/// The `p` quantile of sorted durations (zero for none).
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// p50, p99 and the largest of durations, in ms (`null`s for none).
pub fn percentiles(mut v: Vec<Duration>) -> serde_json::Value {
    if v.is_empty() {
        return json!({"p50_ms": null, "p99_ms": null, "max_ms": null});
    }
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    json!({"p50_ms": ms(percentile(&v, 0.5)), "p99_ms": ms(percentile(&v, 0.99)), "max_ms": ms(percentile(&v, 1.0))})
}
