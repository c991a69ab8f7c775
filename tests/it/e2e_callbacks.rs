//! Callbacks and events against the real binary killed with SIGKILL right
//! after jobs end: each ended job's callback exists once and runs once
//! after the restart, and the outbox holds each job's end once, numbered
//! without a gap.

use crate::e2e::{Client, Served, ADMIN};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Every event of the admin's tenant, from the first, as JSON pages.
async fn all_events(c: &Client) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut after = 0;
    loop {
        let resp = taskbox::http::default_client()
            .get(format!("{}/v1/events?after={after}&limit=1000", c.url()))
            .bearer_auth(ADMIN)
            .header("accept", "application/json")
            .send()
            .await
            .unwrap();
        let page: Value = resp.json().await.unwrap();
        let events = page["events"].as_array().unwrap().clone();
        let next = page["next_after"].as_u64().unwrap();
        out.extend(events);
        if next >= page["head"].as_u64().unwrap() || next == after {
            return out;
        }
        after = next;
    }
}

/// The jobs of a task, all of them (a few pages).
pub(crate) async fn jobs_of(c: &Client, task: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(cur) => format!("/v1/jobs?task={task}&limit=500&cursor={cur}"),
            None => format!("/v1/jobs?task={task}&limit=500"),
        };
        let (status, page) = c.get(&path).await;
        assert_eq!(status, 200, "{page}");
        out.extend(page["jobs"].as_array().unwrap().iter().cloned());
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return out,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callbacks_run_once_when_the_server_is_killed_right_after_their_jobs_end() {
    const JOBS: usize = 40;
    let dir = tempfile::tempdir().unwrap();
    // The first server does not serve the callbacks' queue: none of them
    // can have run before the kill.
    let mut server = Served::spawn(
        dir.path(),
        &["--grace-ms", "2000", "--queues", "default"],
        Some(ADMIN),
    );
    let c = Client::new(&server.url, ADMIN);
    let noop = c.upload("noop").await;
    for (name, spec) in [
        ("after", json!({"component": noop, "queue": "callbacks"})),
        ("work", json!({"component": noop, "on_success": "after"})),
    ] {
        let (status, body) = c
            .send(
                reqwest::Method::PUT,
                &format!("/v1/tasks/{name}"),
                Some(spec),
            )
            .await;
        assert_eq!(status, 201, "{body}");
    }
    let jobs: Vec<Value> = (0..JOBS).map(|_| json!({"task": "work"})).collect();
    let (status, body) = c.post("/v1/jobs/batch", json!({"jobs": jobs})).await;
    assert_eq!(status, 200, "{body}");
    let ids: Vec<String> = body["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap().to_owned())
        .collect();
    // Killed as soon as the first job has ended: its end, and its
    // callback's insert, are the last writes of the process.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, page) = c.get("/v1/jobs?task=work&status=completed&limit=1").await;
        if !page["jobs"].as_array().unwrap().is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "no job ended");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    server.kill();

    let server = Served::spawn(dir.path(), &["--grace-ms", "2000"], Some(ADMIN));
    let c = Client::new(&server.url, ADMIN);
    for id in &ids {
        let job = c
            .until(id, |j| {
                matches!(j["status"].as_str(), Some("completed" | "failed"))
            })
            .await;
        assert_eq!(job["status"], "completed", "{job}");
    }
    // Each ended job's callback, once; each ran once.
    let deadline = Instant::now() + Duration::from_secs(60);
    let callbacks = loop {
        let cbs = jobs_of(&c, "after").await;
        let done = cbs.len() >= JOBS && cbs.iter().all(|j| j["status"] == "completed");
        if done {
            break cbs;
        }
        assert!(
            Instant::now() < deadline,
            "{} callbacks, {} completed",
            cbs.len(),
            cbs.iter().filter(|j| j["status"] == "completed").count()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let mut per_job: HashMap<String, usize> = HashMap::new();
    for cb in &callbacks {
        let of = cb["input"]["job"]["id"].as_str().unwrap().to_owned();
        *per_job.entry(of).or_default() += 1;
        assert_eq!(cb["attempts"], 1, "a callback ran once: {cb}");
    }
    assert_eq!(callbacks.len(), JOBS, "one callback per job");
    for id in &ids {
        assert_eq!(per_job.get(id), Some(&1), "the callback of {id}");
    }
    // The outbox holds each job's end once, numbered without a gap.
    let events = all_events(&c).await;
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["seq"], i as u64 + 1, "{e}");
    }
    for id in &ids {
        let ends = events
            .iter()
            .filter(|e| e["job"]["id"] == id.as_str() && e["type"] == "job.completed")
            .count();
        assert_eq!(ends, 1, "job {id} ended once");
    }
    drop(server);
}
