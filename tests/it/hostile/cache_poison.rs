//! Round three, item 4: a result cache key always says what the job's
//! output is the output of: its pinned digest on its canonical input. A
//! job once kept the key it was enqueued with when a resume gave it a new
//! input, when a redrive ran it on a newer version's digest, and when it
//! ended through a fallback, so a later job of the first digest and input
//! was served another input's, another component's or another task's
//! output. Each path here is shown closed (the later job runs) and obeyed
//! (an honest hit still hits), on both backends; and a canary's jobs,
//! pinned to another digest at the insert, are keyed by it.

use crate::server::{TestServer, ALL_SCOPES};
use axum::http::StatusCode;
use serde_json::{json, Value};

/// A deterministic task with a result cache, each job given one attempt.
fn cached(extra: Value) -> Value {
    let mut spec = json!({
        "deterministic": true,
        "cache": {"ttl_ms": 600_000},
        "retry": {"max_attempts": 1, "backoff": {"kind": "fixed", "delay_ms": 1}},
    });
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    spec
}

/// The input on which `limits` fails for good.
fn failing() -> Value {
    json!({"op": "fail", "code": "old_fails", "retryable": false})
}

fn id_of(job: &Value) -> String {
    job["id"].as_str().unwrap().to_owned()
}

/// Enqueues a job of `task` on `input`; the job as the enqueue answered.
async fn job_of(s: &TestServer, t: &str, task: &str, input: Value) -> Value {
    s.enqueue(t, json!({"task": task, "input": input})).await
}

/// The job was not served from the cache: it went in to run.
fn ran(job: &Value) {
    assert!(job["cached_from"].is_null(), "served from the cache: {job}");
    assert_ne!(job["status"], "completed", "{job}");
}

/// The job was served at once from `source`, with `output`.
fn hit(job: &Value, source: &str, output: &Value) {
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(job["cached_from"], source, "{job}");
    assert_eq!(&job["output"], output, "{job}");
    assert_eq!(job["attempts"], 0, "{job}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_jobs_output_is_keyed_by_its_new_input() {
    TestServer::each_backend(1, async |s| {
        let t = s.tenant("acme", ALL_SCOPES).await;
        s.task(&t, "pure", "limits", cached(json!({}))).await;
        let first = json!({"op": "wait", "for": "approval"});
        let resumed = json!({"op": "echo", "value": "the resumed input's"});
        let job = id_of(&job_of(&s, &t, "pure", first.clone()).await);
        s.until(&t, &job, |j| j["status"] == "waiting").await;
        let (status, body) = s
            .post(
                &format!("/v1/jobs/{job}/resume"),
                &t,
                json!({"input": resumed}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let done = s.finished(&t, &job).await;
        assert_eq!(done["status"], "completed", "{done}");
        assert_eq!(done["output"], "the resumed input's", "{done}");

        // A new job on the first input runs (and waits), as the first did.
        let fresh = job_of(&s, &t, "pure", first).await;
        ran(&fresh);
        s.until(&t, &id_of(&fresh), |j| j["status"] == "waiting")
            .await;
        // The resumed run is its new input's output, and is served for it
        // (the keys in another order).
        let again = job_of(
            &s,
            &t,
            "pure",
            json!({"value": "the resumed input's", "op": "echo"}),
        )
        .await;
        hit(&again, &job, &json!("the resumed input's"));
        s.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_redriven_onto_a_newer_version_is_keyed_by_its_digest() {
    TestServer::each_backend(1, async |s| {
        let t = s.tenant("acme", ALL_SCOPES).await;
        // Version 1 fails on the input; version 2, another component, does not.
        s.task(&t, "pure", "limits", cached(json!({}))).await;
        let job = id_of(&job_of(&s, &t, "pure", failing()).await);
        assert_eq!(s.finished(&t, &job).await["status"], "failed");
        s.task(&t, "pure", "noop", cached(json!({}))).await;
        let (status, body) = s
            .post(
                &format!("/v1/jobs/{job}/retry"),
                &t,
                json!({"digest": "latest"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let done = s.finished(&t, &job).await;
        assert_eq!(done["status"], "completed", "{done}");
        assert_eq!(done["task"]["version"], 2, "{done}");

        // Version 3 is version 1's component again: a job of it on the
        // input runs, and fails as version 1 does.
        s.task(&t, "pure", "limits", cached(json!({}))).await;
        let fresh = job_of(&s, &t, "pure", failing()).await;
        ran(&fresh);
        let fresh = s.finished(&t, &id_of(&fresh)).await;
        assert_eq!(fresh["status"], "failed", "{fresh}");
        assert_eq!(fresh["error"]["code"], "old_fails", "{fresh}");
        // Version 4 is version 2's component: a job of it on the input is
        // served the redriven run, which ran that digest.
        s.task(&t, "pure", "noop", cached(json!({}))).await;
        let again = job_of(&s, &t, "pure", failing()).await;
        hit(&again, &job, &json!({}));

        s.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fallbacks_output_is_not_served_for_the_failed_task() {
    TestServer::each_backend(1, async |s| {
        let t = s.tenant("acme", ALL_SCOPES).await;
        s.task(&t, "rescue", "noop", json!({})).await;
        s.task(&t, "pure", "limits", cached(json!({"fallback": "rescue"})))
            .await;
        // The task fails on the input; its fallback completes the job.
        let job = id_of(&job_of(&s, &t, "pure", failing()).await);
        let done = s.finished(&t, &job).await;
        assert_eq!(done["status"], "completed", "{done}");
        assert_eq!(done["output"], json!({}), "{done}");

        // A later job of the task on the input is not served the
        // fallback's output: it runs its own task, and falls back again.
        let fresh = job_of(&s, &t, "pure", failing()).await;
        ran(&fresh);
        let fresh = id_of(&fresh);
        assert_eq!(s.finished(&t, &fresh).await["status"], "completed");
        let tasks: Vec<Value> = s
            .attempts(&t, &fresh)
            .await
            .iter()
            .map(|a| a["task"]["name"].clone())
            .collect();
        assert_eq!(tasks, [json!("pure"), json!("rescue")]);

        // A job the task itself completed is served as ever.
        let input = json!({"op": "echo", "value": 7});
        let own = id_of(&job_of(&s, &t, "pure", input.clone()).await);
        assert_eq!(s.finished(&t, &own).await["status"], "completed");
        hit(&job_of(&s, &t, "pure", input).await, &own, &json!(7));
        s.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_canary_is_keyed_by_its_own_digest() {
    TestServer::each_backend(1, async |s| {
        let t = s.tenant("acme", ALL_SCOPES).await;
        // Version 1 echoes the input's value; version 2, staged for half
        // the new jobs (by their ids), answers `{}` whatever the input.
        s.task(&t, "pure", "limits", cached(json!({}))).await;
        s.task(
            &t,
            "pure",
            "noop",
            cached(json!({"rollout": {"percent": 50}})),
        )
        .await;
        let input = json!({"op": "echo", "value": "live"});
        let expected = |version: &Value| match version.as_u64() {
            Some(1) => json!("live"),
            _ => json!({}),
        };
        // Each job ends with its own version's output, run or served; of
        // eight jobs on two versions, six at least are served.
        let mut served = 0;
        for _ in 0..8 {
            let job = job_of(&s, &t, "pure", input.clone()).await;
            served += usize::from(!job["cached_from"].is_null());
            let done = s.finished(&t, &id_of(&job)).await;
            assert_eq!(done["status"], "completed", "{done}");
            assert_eq!(done["output"], expected(&done["task"]["version"]), "{done}");
        }
        assert!(served >= 6, "{served} of 8 served");
        s.stop().await;
    })
    .await;
}
