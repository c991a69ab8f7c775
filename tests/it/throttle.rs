//! Throttle keys on the real binary: a task's throttle made from each
//! job's input lets at most its limit of one key's jobs start in any
//! period, in order, while another key's jobs go on; a job's own throttle
//! takes the task's place; bad throttles are refused with what to fix.

use crate::e2e::{Client, Served, ADMIN};
use crate::replay::ended;
use serde_json::{json, Value};

fn millis(rfc3339: &Value) -> i64 {
    let t = chrono::DateTime::parse_from_rfc3339(rfc3339.as_str().unwrap()).unwrap();
    t.timestamp_millis()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_throttled_task_starts_its_limit_a_period_per_key() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &["--runners", "4"], Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    let digest = admin.upload("limits").await;

    for (throttle, says) in [
        (
            json!({"key": "k", "limit": 0, "period_ms": 1000}),
            "throttle.limit must be between 1 and 1000",
        ),
        (
            json!({"key": "k", "limit": 1, "period_ms": 86_400_001}),
            "throttle.period_ms must be between 1 and 86400000",
        ),
        (
            json!({"key": "{account", "limit": 1, "period_ms": 10}),
            "throttle.key",
        ),
    ] {
        let (status, body) = admin
            .send(
                reqwest::Method::PUT,
                "/v1/tasks/paced",
                Some(json!({"component": digest, "throttle": throttle})),
            )
            .await;
        assert_eq!(status, 422, "{body}");
        assert!(body.to_string().contains(says), "{says}: {body}");
    }
    let period = 800;
    let (status, body) = admin
        .send(
            reqwest::Method::PUT,
            "/v1/tasks/paced",
            Some(json!({
                "component": digest,
                "throttle": {"key": "{account}", "limit": 2, "period_ms": period}
            })),
        )
        .await;
    assert_eq!(status, 201, "{body}");

    // Six jobs of one account and two of another, in one batch.
    let inputs: Vec<Value> = (0..6)
        .map(|i| json!({"op": "echo", "value": i, "account": "x"}))
        .chain((0..2).map(|i| json!({"op": "echo", "value": i, "account": "y"})))
        .collect();
    let jobs: Vec<Value> = inputs
        .iter()
        .map(|i| json!({"task": "paced", "input": i}))
        .collect();
    let (status, body) = admin.post("/v1/jobs/batch", json!({ "jobs": jobs })).await;
    assert_eq!(status, 200, "{body}");
    let mut x = Vec::new();
    let mut y = Vec::new();
    for (j, input) in body["jobs"].as_array().unwrap().iter().zip(&inputs) {
        let done = ended(&admin, j["id"].as_str().unwrap()).await;
        assert_eq!(done["status"], "completed", "{done}");
        assert_eq!(
            done["throttle"],
            json!({"key": input["account"], "limit": 2, "period_ms": period}),
            "{done}"
        );
        let started = millis(&done["started_at"]);
        if input["account"] == "x" {
            x.push(started);
        } else {
            y.push(started);
        }
    }
    // In order, and no window of a period holds three starts of x.
    assert!(x.windows(2).all(|w| w[0] <= w[1]), "{x:?}");
    for w in x.windows(3) {
        assert!(
            w[2] - w[0] >= period,
            "three starts within {period} ms: {x:?}"
        );
    }
    // x's line held nothing of y's up.
    assert!(y.iter().all(|&s| s < x[2]), "x {x:?} y {y:?}");

    // A job's own throttle in place of its task's: the second waits its
    // turn, a minute on, queued.
    let solo = json!({"key": "solo", "limit": 1, "period_ms": 60_000});
    let mut ids = Vec::new();
    for i in 0..2 {
        let (status, job) = admin
            .post(
                "/v1/jobs",
                json!({"task": "paced", "input": {"op": "echo", "value": i, "account": "x"},
                       "throttle": solo}),
            )
            .await;
        assert_eq!(status, 201, "{job}");
        assert_eq!(job["throttle"], solo, "{job}");
        ids.push(job["id"].as_str().unwrap().to_owned());
    }
    let first = ended(&admin, &ids[0]).await;
    let second = admin
        .until(&ids[1], |j| {
            j["status"] == "queued" && millis(&j["run_at"]) >= millis(&first["started_at"]) + 60_000
        })
        .await;
    assert_eq!(second["attempts"], 0, "{second}");
    let (status, body) = admin
        .post(
            "/v1/jobs",
            json!({"task": "paced", "input": {"op": "echo", "value": 1, "account": "x"},
                   "throttle": {"key": "k", "limit": 1, "period_ms": 0}}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(body.to_string().contains("throttle.period_ms"), "{body}");
}
