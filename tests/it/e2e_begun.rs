//! A runner killed with SIGKILL while it holds many jobs claimed ahead of
//! its slots: after a restart, only the jobs whose guests it had begun are
//! charged an attempt (`runner_lost`); every job it had claimed and not
//! begun runs with its one attempt intact.

use crate::e2e::{Client, Served, ADMIN};
use crate::e2e_callbacks::jobs_of;
use serde_json::json;
use std::time::{Duration, Instant};

const JOBS: usize = 300;
/// The server's slots (`Served::spawn` starts it with `--runners 2`).
const SLOTS: usize = 2;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_runner_charges_only_the_jobs_it_began() {
    let dir = tempfile::tempdir().unwrap();
    // A second of each tenant's work a slot may be held: its 15 ms jobs
    // are claimed far ahead (the default, 50 ms, holds a few).
    let args = ["--grace-ms", "2000", "--claim-ahead-ms", "1000"];
    let mut server = Served::spawn(dir.path(), &args, Some(ADMIN));
    let c = Client::new(&server.url, ADMIN);
    let limits = c.upload("limits").await;
    let (status, body) = c
        .send(
            reqwest::Method::PUT,
            "/v1/tasks/short",
            Some(json!({"component": limits, "retry": {"max_attempts": 1}})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    // Short attempts: the runner claims far ahead of its two slots. Long
    // enough that the claims ahead last a second or so: a poll of a
    // machine loaded by other tests once missed a shorter window.
    let jobs: Vec<_> = (0..JOBS)
        .map(|_| json!({"task": "short", "input": {"op": "sleep", "ms": 15}}))
        .collect();
    let (status, body) = c.post("/v1/jobs/batch", json!({"jobs": jobs})).await;
    assert_eq!(status, 200, "{body}");
    let deadline = Instant::now() + Duration::from_secs(60);
    let held_ahead = loop {
        let (_, q) = c.get("/v1/queues").await;
        let depth = &q["queues"][0]["depth"];
        let (done, running) = (
            depth["completed"].as_u64().unwrap_or(0),
            depth["running"].as_u64().unwrap_or(0),
        );
        // Killed once most of what is left is claimed, few of it begun.
        if done >= 40 && running >= 100 {
            break running;
        }
        assert!(Instant::now() < deadline, "no claims ahead: {q}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    };
    server.kill();

    let server = Served::spawn(dir.path(), &args, Some(ADMIN));
    let c = Client::new(&server.url, ADMIN);
    let deadline = Instant::now() + Duration::from_secs(120);
    let all = loop {
        let all = jobs_of(&c, "short").await;
        let ended = all
            .iter()
            .filter(|j| matches!(j["status"].as_str(), Some("completed" | "failed")))
            .count();
        if ended == JOBS {
            break all;
        }
        assert!(Instant::now() < deadline, "{ended} of {JOBS} ended");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(all.len(), JOBS, "no job was lost");
    let lost: Vec<_> = all.iter().filter(|j| j["status"] == "failed").collect();
    for j in &lost {
        assert_eq!(j["error"]["kind"], "runner_lost", "{j}");
    }
    for j in all.iter().filter(|j| j["status"] == "completed") {
        assert_eq!(j["attempts"], 1, "a completed job ran once: {j}");
    }
    // Charged: those running at the kill (the slots, and as many beyond
    // them for tenants with nothing running) and those the marker had
    // begun ahead of them: twice what starts in a mark's round trip, a
    // few at 400 starts a second (twice the slots at least, doubled when
    // a slow trip let the starts take all that was begun). Before the
    // marker, every job claimed ahead was charged: the `held_ahead`.
    eprintln!(
        "{} of {held_ahead} running at the kill were charged",
        lost.len()
    );
    assert!(
        lost.len() <= 2 * SLOTS + 16,
        "{} of {held_ahead} jobs held at the kill were charged an attempt",
        lost.len()
    );
}
