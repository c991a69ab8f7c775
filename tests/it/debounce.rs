//! Debounce keys on the real binary, on SQLite and on PostgreSQL: a burst
//! of ten enqueues of one key runs once, with the last input, a period
//! after the last enqueue; each answer says which job it replaced; each job
//! replaced ends cancelled naming its successor; `job enqueue --wait` on
//! the first follows the chain to the job that ran and prints its output;
//! another key is not touched; bad debounces are refused with what to fix.

use crate::e2e::{repo, Client, Served, ADMIN};
use crate::replay::ended;
use crate::store_pg::test_db;
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn millis(rfc3339: &Value) -> i64 {
    let t = chrono::DateTime::parse_from_rfc3339(rfc3339.as_str().unwrap()).unwrap();
    t.timestamp_millis()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_debounced_burst_runs_once_with_the_last_input() {
    let dir = tempfile::tempdir().unwrap();
    burst(dir.path(), &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_debounced_burst_runs_once_with_the_last_input_on_postgres() {
    let Some(db) = test_db().await else { return };
    let dir = tempfile::tempdir().unwrap();
    burst(dir.path(), &["--database-url", &db.url]).await;
}

async fn burst(dir: &std::path::Path, extra: &[&str]) {
    let args: Vec<&str> = ["--runners", "2"]
        .iter()
        .copied()
        .chain(extra.iter().copied())
        .collect();
    let served = Served::spawn(dir, &args, Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    let digest = admin.upload("limits").await;

    for (debounce, code, says) in [
        (
            json!({"key": "k", "period_ms": 0}),
            422,
            "debounce.period_ms must be between 1 and 86400000",
        ),
        (
            json!({"key": "k", "period_ms": 1000, "max_wait_ms": 999}),
            422,
            "debounce.max_wait_ms must be between period_ms (1000)",
        ),
        (
            json!({"key": "{account", "period_ms": 10}),
            422,
            "debounce.key",
        ),
        (
            json!({"key": "k", "period": 10}),
            400,
            "unknown field `period`",
        ),
    ] {
        let (status, body) = admin
            .send(
                reqwest::Method::PUT,
                "/v1/tasks/settled",
                Some(json!({"component": digest, "debounce": debounce})),
            )
            .await;
        assert_eq!(status, code, "{body}");
        assert!(body.to_string().contains(says), "{says}: {body}");
    }
    // The whole burst lands well inside one period, even on a busy machine.
    let period = 3000;
    let (status, body) = admin
        .send(
            reqwest::Method::PUT,
            "/v1/tasks/settled",
            Some(json!({
                "component": digest,
                "debounce": {"key": "{account}", "period_ms": period, "max_wait_ms": 60_000}
            })),
        )
        .await;
    assert_eq!(status, 201, "{body}");

    // The first enqueue is the CLI's, which waits for the job's end.
    let waiting = Command::new(env!("CARGO_BIN_EXE_taskbox"))
        .args(["job", "enqueue", "settled", "--wait", "--input"])
        .arg(json!({"op": "echo", "value": 0, "account": "x"}).to_string())
        .current_dir(repo())
        .env("TASKBOX_URL", &served.url)
        .env("TASKBOX_TOKEN", ADMIN)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let first = {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let (_, page) = admin.get("/v1/jobs?task=settled").await;
            if let Some(j) = page["jobs"].as_array().and_then(|j| j.first()) {
                break j.clone();
            }
            assert!(Instant::now() < deadline, "the CLI enqueued nothing");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    assert_eq!(first["debounce"]["replaced"], Value::Null, "{first}");
    let mut ids = vec![first["id"].as_str().unwrap().to_owned()];
    // Another key's job, in the middle of the burst.
    let (status, other) = admin
        .post(
            "/v1/jobs",
            json!({"task": "settled", "input": {"op": "echo", "value": 100, "account": "y"}}),
        )
        .await;
    assert_eq!(status, 201, "{other}");
    let mut last_at = 0;
    for value in 1..10 {
        let (status, job) = admin
            .post(
                "/v1/jobs",
                json!({"task": "settled", "input": {"op": "echo", "value": value, "account": "x"}}),
            )
            .await;
        assert_eq!(status, 201, "{job}");
        assert_eq!(
            job["debounce"]["replaced"].as_str(),
            Some(ids.last().unwrap().as_str()),
            "each answer names the job it replaced: {job}"
        );
        assert_eq!(job["debounce"]["key"], "x", "{job}");
        last_at = millis(&job["created_at"]);
        ids.push(job["id"].as_str().unwrap().to_owned());
    }

    // The last ran, once, with its input, a period after its enqueue.
    let done = ended(&admin, ids.last().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["output"], 9, "{done}");
    assert!(millis(&done["started_at"]) >= last_at + period, "{done}");
    for (n, id) in ids[..9].iter().enumerate() {
        let (_, j) = admin.get(&format!("/v1/jobs/{id}")).await;
        assert_eq!(j["status"], "cancelled", "{j}");
        assert_eq!(j["attempts"], 0, "{j}");
        assert_eq!(j["error"]["code"], "debounced", "{j}");
        assert_eq!(
            j["debounce"]["successor"].as_str(),
            Some(ids[n + 1].as_str()),
            "{j}"
        );
    }
    let y = ended(&admin, other["id"].as_str().unwrap()).await;
    assert_eq!(
        (y["status"].as_str(), y["output"].as_i64()),
        (Some("completed"), Some(100)),
        "{y}"
    );

    // The CLI followed the chain to the job that ran.
    let out = tokio::task::spawn_blocking(move || waiting.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let printed: Value = serde_json::from_str(&stdout).expect("the output, as JSON");
    assert_eq!(printed, 9, "{stdout}");
    assert!(
        stderr.contains(&format!("job {} runs in its place", ids[1])),
        "{stderr}"
    );

    // A job's own debounce in place of its task's; a bad one is a 400.
    let (status, body) = admin
        .post(
            "/v1/jobs",
            json!({"task": "settled", "input": {"op": "echo", "value": 1, "account": "x"},
                   "debounce": {"key": "k", "period_ms": 0}}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(body.to_string().contains("debounce.period_ms"), "{body}");
    let (status, own) = admin
        .post(
            "/v1/jobs",
            json!({"task": "settled", "input": {"op": "echo", "value": 1, "account": "x"},
                   "debounce": {"key": "own", "period_ms": 10}}),
        )
        .await;
    assert_eq!(status, 201, "{own}");
    assert_eq!(
        (
            own["debounce"]["key"].as_str(),
            own["debounce"]["max_wait_ms"].as_u64()
        ),
        (Some("own"), Some(100)),
        "{own}"
    );
}
