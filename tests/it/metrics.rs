//! `GET /metrics` of the real binary: who may scrape it on the API, the
//! open scrape of `--metrics-listen`, and the figures moving as jobs run
//! (enqueues, ends by status and error kind, attempts, fuel, claims, the
//! store's commits, the compile cache, requests by route).

use crate::e2e::{Client, Served, ADMIN};
use serde_json::json;
use std::time::{Duration, Instant};

/// The value of the series written exactly `series` (name and labels), or
/// 0 when there is none yet.
fn value(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.split_whitespace().next().unwrap().parse().unwrap())
        .unwrap_or(0.0)
}

async fn scrape(url: &str, token: Option<&str>) -> (u16, String, String) {
    let http = taskbox::http::default_client();
    let mut req = http.get(url);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req.send().await.expect("the server answers");
    let status = resp.status().as_u16();
    let kind = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, kind, resp.text().await.unwrap())
}

#[tokio::test]
async fn a_scrape_shows_the_figures_move_as_jobs_run() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(
        dir.path(),
        &["--metrics-listen", "127.0.0.1:0", "--metrics-per-tenant"],
        Some(ADMIN),
    );
    let admin = Client::new(&served.url, ADMIN);
    let on_api = format!("{}/metrics", served.url);

    // On the API: a token, and one allowed to read them.
    let (status, _, _) = scrape(&on_api, None).await;
    assert_eq!(status, 401);
    let (status, _, body) = scrape(&on_api, Some(&admin.mint("acme", &["jobs:read"]).await)).await;
    assert_eq!(status, 403, "a tenant token without metrics:read: {body}");
    let reader = admin.mint("acme", &["metrics:read"]).await;
    let reader = reader.as_str();
    let (status, kind, before) = scrape(&on_api, Some(reader)).await;
    assert_eq!(status, 200, "{before}");
    assert!(kind.starts_with("application/openmetrics-text"), "{kind}");
    assert!(before.ends_with("# EOF\n"), "{before}");

    // The same on --metrics-listen's address, without a token.
    let open = served.metrics_url();
    assert!(open.ends_with("/metrics"), "{open}");
    let (status, _, _) = scrape(&open, None).await;
    assert_eq!(status, 200);

    admin.task("limits", "limits").await;
    let mut ids = Vec::new();
    for input in [
        json!({"op": "spin", "iterations": 1000}),
        json!({"op": "spin", "iterations": 2000}),
        json!({"op": "echo", "value": 1}),
        json!({"op": "fail", "code": "nope", "retryable": false}),
    ] {
        let (status, job) = admin
            .post("/v1/jobs", json!({"task": "limits", "input": input}))
            .await;
        assert_eq!(status, 201, "{job}");
        ids.push(job["id"].as_str().unwrap().to_owned());
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    for id in &ids {
        loop {
            let (_, job) = admin.get(&format!("/v1/jobs/{id}")).await;
            if matches!(job["status"].as_str(), Some("completed" | "failed")) {
                break;
            }
            assert!(Instant::now() < deadline, "job {id} did not end: {job}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    // Ends are counted as their writes land: polled, not assumed.
    let ended_ok = "taskbox_jobs_ended_total{queue=\"default\",status=\"completed\",error_kind=\"\",tenant=\"default\"}";
    let ended_failed = "taskbox_jobs_ended_total{queue=\"default\",status=\"failed\",error_kind=\"task_failed\",tenant=\"default\"}";
    let after = loop {
        let (_, _, text) = scrape(&open, None).await;
        if value(&text, ended_ok) - value(&before, ended_ok) >= 3.0
            && value(&text, ended_failed) - value(&before, ended_failed) >= 1.0
        {
            break text;
        }
        assert!(
            Instant::now() < deadline,
            "the ends were not counted: {text}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let moved = |series: &str| value(&after, series) - value(&before, series);
    assert_eq!(
        moved("taskbox_jobs_enqueued_total{queue=\"default\",tenant=\"default\"}"),
        4.0,
        "{after}"
    );
    assert_eq!(moved(ended_ok), 3.0, "{after}");
    assert_eq!(moved(ended_failed), 1.0, "{after}");
    assert_eq!(
        moved("taskbox_attempts_total{queue=\"default\",outcome=\"completed\"}"),
        3.0,
        "{after}"
    );
    assert_eq!(
        moved("taskbox_attempt_duration_seconds_count{queue=\"default\"}"),
        4.0,
        "{after}"
    );
    assert!(
        moved("taskbox_start_delay_seconds_count{queue=\"default\"}") >= 4.0,
        "{after}"
    );
    assert!(
        moved("taskbox_fuel_used_total{tenant=\"default\"}") > 0.0,
        "{after}"
    );
    assert!(moved("taskbox_jobs_claimed_total") >= 1.0, "{after}");
    // The claim loop claimed at least at its start (these jobs may all
    // have been claimed with their inserts).
    assert!(
        value(&after, "taskbox_claim_seconds_count") >= 1.0,
        "{after}"
    );
    assert!(
        moved("taskbox_store_write_batch_size_count{backend=\"sqlite\",kind=\"writer\"}") > 0.0,
        "{after}"
    );
    // The component was compiled (or found on disk) once, then found in
    // memory for each attempt.
    let loaded_once = moved("taskbox_compile_cache_total{from=\"compiled\"}")
        + moved("taskbox_compile_cache_total{from=\"disk\"}");
    assert!(loaded_once >= 1.0, "{after}");
    assert!(
        moved("taskbox_compile_cache_total{from=\"memory\"}") >= 1.0,
        "{after}"
    );
    assert_eq!(
        moved("taskbox_http_requests_total{method=\"POST\",route=\"/v1/jobs\",status=\"201\"}"),
        4.0,
        "{after}"
    );
    assert!(
        value(
            &after,
            "taskbox_http_requests_total{method=\"GET\",route=\"/metrics\",status=\"401\"}"
        ) >= 1.0,
        "{after}"
    );
    assert!(
        value(&after, "taskbox_sandbox_instances_max") > 0.0,
        "{after}"
    );
    // Nothing is left unfinished, and the gauge read at the scrape says so.
    assert!(!after.contains("taskbox_jobs{"), "{after}");
}
