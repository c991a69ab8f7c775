//! Sub-tasks from code, run by the real runner on SQLite and PostgreSQL:
//! `invoke` results recorded on the job survive its retry; `spawn` makes
//! child jobs the parent lists; a parent's `parent_close` cancels its
//! running children or leaves them; depth and fan-out are bounded.

use crate::server::{TestServer, ADMIN};
use serde_json::{json, Value};
use taskbox::store::CallKind;

async fn each_backend(run: impl AsyncFn(TestServer)) {
    TestServer::each_backend(2, run).await;
}

fn quick(max: u32) -> Value {
    json!({"retry": {"max_attempts": max, "backoff": {"kind": "fixed", "delay_ms": 1}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invoke_results_survive_a_retry_of_the_parent() {
    each_backend(async |s: TestServer| {
        s.task(ADMIN, "nonce", "limits", json!({})).await;
        s.task(ADMIN, "orch", "orchestrator", quick(3)).await;
        let calls = json!([
            {"invoke": "nonce", "input": {"op": "nonce"}},
            {"invoke": "nonce", "input": {"op": "nonce"}},
            {"invoke": "missing", "input": {}},
        ]);
        let job = s
            .enqueue(
                ADMIN,
                json!({"task": "orch", "input": {"calls": calls, "fail_on_attempt": 1}}),
            )
            .await;
        let id = job["id"].as_str().unwrap();
        let done = s.finished(ADMIN, id).await;
        assert_eq!(done["status"], "completed", "{done:#}");
        let out = &done["output"];
        assert_eq!(out["attempt"], 2, "the first attempt failed: {out:#}");
        // Each call's own result: two runs of the task, each recorded at
        // its place, and the second attempt given what the first recorded.
        let store = s.app.as_ref().unwrap().state.store.clone();
        let recorded = store.job_calls(id).await.unwrap();
        assert_eq!(
            recorded
                .iter()
                .map(|c| (c.call.as_str(), c.kind, c.task.as_str()))
                .collect::<Vec<_>>(),
            [
                ("1", CallKind::Invoke, "nonce"),
                ("2", CallKind::Invoke, "nonce")
            ],
            "a failed call is not recorded"
        );
        for (i, c) in recorded.iter().enumerate() {
            let got = &out["results"][i]["output"];
            assert_eq!(
                got,
                &serde_json::from_str::<Value>(&c.result).unwrap(),
                "{out:#}"
            );
        }
        assert_ne!(
            out["results"][0]["output"]["nonce"], out["results"][1]["output"]["nonce"],
            "two calls are two runs"
        );
        assert_eq!(out["results"][2]["error"]["code"], "task_not_found");
        // Two attempts of the parent; the sub-tasks are not jobs.
        assert_eq!(s.attempts(ADMIN, id).await.len(), 2);
        s.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parent_ending_with_request_cancel_cancels_its_running_children() {
    each_backend(async |s: TestServer| {
        s.task(ADMIN, "sleepy", "limits", json!({})).await;
        s.task(
            ADMIN,
            "strict",
            "orchestrator",
            json!({"parent_close": "request_cancel"}),
        )
        .await;
        s.task(ADMIN, "loose", "orchestrator", json!({})).await;
        // The parent spawns a long child, then waits in an invoke long
        // enough for the child to start running, and ends.
        let calls = |ms: u64| {
            json!([
                {"spawn": "sleepy", "input": {"op": "sleep", "ms": ms}},
                {"invoke": "sleepy", "input": {"op": "sleep", "ms": 1500}},
            ])
        };
        let job = s
            .enqueue(
                ADMIN,
                json!({"task": "strict", "input": {"calls": calls(60_000)}}),
            )
            .await;
        let id = job["id"].as_str().unwrap();
        let done = s.finished(ADMIN, id).await;
        assert_eq!(done["status"], "completed", "{done:#}");
        let child = done["output"]["results"][0]["child"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(done["children"], json!([child]), "{done:#}");
        let ended = s.finished(ADMIN, &child).await;
        assert_eq!(ended["status"], "cancelled", "{ended:#}");
        assert_eq!(ended["parent"], id);
        let attempts = s.attempts(ADMIN, &child).await;
        assert_eq!(
            attempts.last().unwrap()["outcome"],
            "cancelled",
            "it was running: {attempts:#?}"
        );

        // The default, abandon: the child goes on to its end.
        let job = s
            .enqueue(
                ADMIN,
                json!({"task": "loose", "input": {"calls": calls(1)}}),
            )
            .await;
        let done = s.finished(ADMIN, job["id"].as_str().unwrap()).await;
        let child = done["output"]["results"][0]["child"].as_str().unwrap();
        let ended = s.finished(ADMIN, child).await;
        assert_eq!(ended["status"], "completed", "{ended:#}");
        s.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invokes_nest_and_spawns_fan_out_only_so_far() {
    let s = TestServer::start(2).await;
    s.task(ADMIN, "orch", "orchestrator", json!({})).await;
    s.task(ADMIN, "noop", "noop", json!({})).await;
    // orch invoking orch invoking … six deep: the fifth is refused.
    let mut input = json!({"calls": []});
    for _ in 0..6 {
        input = json!({"calls": [{"invoke": "orch", "input": input}]});
    }
    let job = s
        .enqueue(ADMIN, json!({"task": "orch", "input": input}))
        .await;
    let done = s.finished(ADMIN, job["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    let mut level = &done["output"];
    let mut depth = 0;
    while let Some(out) = level["results"][0].get("output") {
        level = out;
        depth += 1;
    }
    assert_eq!(depth, 4, "{done:#}");
    assert_eq!(level["results"][0]["error"]["code"], "too_deep", "{done:#}");

    // A hundred children, and no more.
    let calls: Vec<Value> = (0..101)
        .map(|i| json!({"spawn": "noop", "input": {"i": i}}))
        .collect();
    let job = s
        .enqueue(ADMIN, json!({"task": "orch", "input": {"calls": calls}}))
        .await;
    let done = s.finished(ADMIN, job["id"].as_str().unwrap()).await;
    let results = done["output"]["results"].as_array().unwrap();
    assert!(results[..100].iter().all(|r| r["child"].is_string()));
    assert_eq!(results[100]["error"]["code"], "too_many_children");
    assert_eq!(done["children"].as_array().unwrap().len(), 100);
    s.stop().await;
}

/// The Rust guest SDK's typed `invoke` and `spawn` (`sdk-tour`), as a task author writes
/// them: the invoked task's output comes back as a value, the child is the parent's, and an
/// invoked task's failure is the caller's failure, with its code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_sdk_invokes_and_spawns() {
    each_backend(async |s: TestServer| {
        s.task(ADMIN, "nonce", "limits", json!({})).await;
        s.task(ADMIN, "noop", "noop", json!({})).await;
        s.task(ADMIN, "tour", "sdk-tour", quick(1)).await;
        let input = json!({
            "invoke": {"task": "nonce", "input": {"op": "nonce"}},
            "spawn": {"task": "noop", "input": {}},
        });
        let job = s
            .enqueue(ADMIN, json!({"task": "tour", "input": input}))
            .await;
        let done = s.finished(ADMIN, job["id"].as_str().unwrap()).await;
        assert_eq!(done["status"], "completed", "{done:#}");
        let out = &done["output"];
        assert!(out["invoked"]["nonce"].is_string(), "{out:#}");
        let child = out["spawned"].as_str().expect("a child's id");
        assert_eq!(done["children"], json!([child]), "{done:#}");

        let input = json!({"invoke": {"task": "missing", "input": {}}});
        let job = s
            .enqueue(ADMIN, json!({"task": "tour", "input": input}))
            .await;
        let done = s.finished(ADMIN, job["id"].as_str().unwrap()).await;
        assert_eq!(done["status"], "failed", "{done:#}");
        assert_eq!(done["error"]["code"], "task_not_found", "{done:#}");
        s.stop().await;
    })
    .await;
}
