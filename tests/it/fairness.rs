//! Fairness keys on the real binary, on SQLite and on PostgreSQL: a
//! tenant's backlog of one key queued first does not hold up its other
//! keys' jobs nor its jobs without a key (the order the attempts started
//! in, from the tenant's `job.started` events); a job shows the key and
//! weight it named; bad keys and weights are refused with what to fix;
//! the CLI enqueues with a key and shows it.

use crate::e2e::{Client, Served, ADMIN};
use crate::replay::ended;
use crate::store_pg::test_db;
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenants_keys_are_served_in_turn() {
    let dir = tempfile::tempdir().unwrap();
    in_turn(dir.path(), &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenants_keys_are_served_in_turn_on_postgres() {
    let Some(db) = test_db().await else { return };
    let dir = tempfile::tempdir().unwrap();
    in_turn(dir.path(), &["--database-url", &db.url]).await;
}

/// The ids of the tenant's jobs in the order their attempts started.
async fn started_order(client: &Client) -> Vec<String> {
    let resp = taskbox::http::default_client()
        .get(format!(
            "{}/v1/events?type=job.started&limit=1000",
            client.url()
        ))
        .bearer_auth(ADMIN)
        .header("accept", "application/json")
        .send()
        .await
        .unwrap();
    let page: Value = resp.json().await.unwrap();
    page["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["job"]["id"].as_str().unwrap().to_owned())
        .collect()
}

async fn in_turn(dir: &std::path::Path, extra: &[&str]) {
    let args: Vec<&str> = ["--runners", "1"]
        .iter()
        .copied()
        .chain(extra.iter().copied())
        .collect();
    let served = Served::spawn(dir, &args, Some(ADMIN));
    let admin = Client::new(&served.url, ADMIN);
    admin.task("echo", "limits").await;

    for (field, value, says) in [
        (
            "fairness_key",
            json!(""),
            "fairness_key must be 1 to 64 bytes long",
        ),
        (
            "fairness_key",
            json!("k".repeat(65)),
            "fairness_key must be 1 to 64 bytes long",
        ),
        (
            "fairness_weight",
            json!(0),
            "fairness_weight must be between 1 and 1000",
        ),
        (
            "fairness_weight",
            json!(1001),
            "fairness_weight must be between 1 and 1000",
        ),
        ("fairness_keys", json!("k"), "unknown field `fairness_keys`"),
    ] {
        let mut body = json!({"task": "echo", "input": {"op": "echo", "value": 1}});
        body[field] = value;
        let (status, answer) = admin.post("/v1/jobs", body).await;
        assert_eq!(status, 400, "{field}: {answer}");
        assert!(answer.to_string().contains(says), "{says}: {answer}");
    }

    // While the queue is paused: 30 of key `big`, then 3 of `small`, then
    // 3 with no key.
    let (status, body) = admin.post("/v1/queues/default/pause", json!({})).await;
    assert_eq!(status, 200, "{body}");
    let job = |key: Option<&str>, n: usize| {
        let mut j = json!({"task": "echo", "input": {"op": "echo", "value": n}});
        if let Some(k) = key {
            j["fairness_key"] = json!(k);
        }
        j
    };
    let mut jobs: Vec<Value> = (0..30).map(|n| job(Some("big"), n)).collect();
    jobs.extend((0..3).map(|n| job(Some("small"), n)));
    jobs.extend((0..3).map(|n| job(None, n)));
    jobs[30]["fairness_weight"] = json!(2);
    let (status, body) = admin.post("/v1/jobs/batch", json!({ "jobs": jobs })).await;
    assert_eq!(status, 200, "{body}");
    let ids: Vec<String> = body["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(body["jobs"][0]["fairness_key"], "big", "{body}");
    assert_eq!(body["jobs"][30]["fairness_weight"], 2, "{body}");
    assert!(body["jobs"][33].get("fairness_key").is_none(), "{body}");
    let (status, body) = admin.post("/v1/queues/default/resume", json!({})).await;
    assert_eq!(status, 200, "{body}");
    for id in &ids {
        assert_eq!(ended(&admin, id).await["status"], "completed");
    }
    let order = started_order(&admin).await;
    assert_eq!(order.len(), 36, "{order:?}");
    let place = |id: &String| order.iter().position(|o| o == id).unwrap();
    // In turn: each small and unkeyed job starts among the first dozen,
    // though 30 of big's were queued before them (in the tenant's order
    // they would have started 31st to 36th).
    for id in &ids[30..] {
        assert!(
            place(id) < 12,
            "{id} started {}th: {order:?}",
            place(id) + 1
        );
    }
    // Within a key, the tenant's order.
    let big: Vec<usize> = ids[..30].iter().map(place).collect();
    assert!(big.windows(2).all(|w| w[0] < w[1]), "{big:?}");

    // The CLI names a key and shows it.
    let (code, out, err) = served.cli(&[
        "job",
        "enqueue",
        "echo",
        "--input",
        r#"{"op": "echo", "value": 7}"#,
        "--fairness-key",
        "cli-customer",
        "--fairness-weight",
        "3",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let job: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (&job["fairness_key"], &job["fairness_weight"]),
        (&json!("cli-customer"), &json!(3))
    );
    let id = job["id"].as_str().unwrap();
    ended(&admin, id).await;
    let (code, text, err) = served.cli(&["job", "get", id]);
    assert_eq!(code, Some(0), "{err}");
    assert!(text.contains("cli-customer (weight 3)"), "{text}");
    let (code, _, err) = served.cli(&["job", "enqueue", "echo", "--fairness-weight", "0"]);
    assert_eq!(code, Some(2), "{err}");
}
