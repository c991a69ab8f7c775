//! A task granted one host and one secret, through the API on both
//! backends: the guest's request reaches the host with the secret, the
//! job's log shows the secret redacted, the attempt's record and the
//! tenant's usage count the request; a secret the task does not declare,
//! and another tenant's of the same name, read as absent.

use crate::server::{TestServer, ADMIN};
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};

const KEY: &str = "sk_test_4e1f0a9b2c7d6e53";

/// A host on 127.0.0.1 that keeps the `x-api-key` of each request.
async fn host() -> (u16, crate::common::Kept) {
    crate::common::host_keeping("x-api-key", "charged").await
}

async fn put_secret(s: &TestServer, token: &str, name: &str, value: &str) {
    let (status, body) = s
        .call(
            Method::PUT,
            &format!("/v1/secrets/{name}"),
            token,
            Some(json!({ "value": value })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

#[tokio::test]
async fn a_task_granted_a_host_and_a_secret_calls_it_and_its_log_is_redacted() {
    TestServer::each_backend_with(
        2,
        |c| c.network.allow_private = true,
        async |s: TestServer| {
            let (port, got) = host().await;
            let scopes = ["tasks:write", "jobs:queue", "jobs:read", "secrets:write"];
            let acme = s.tenant("acme", &scopes).await;
            let other = s.tenant("other", &scopes).await;
            put_secret(&s, &acme, "API_KEY", KEY).await;
            put_secret(&s, &acme, "UNDECLARED", "acme-undeclared-value").await;
            put_secret(&s, &other, "OTHER_KEY", "other-tenants-value").await;
            s.task(
                &acme,
                "charge",
                "http-probe",
                json!({
                    "network": {"allow": [format!("127.0.0.1:{port}")]},
                    "secrets": ["API_KEY", "OTHER_KEY"],
                }),
            )
            .await;
            let job = s
                .enqueue(
                    &acme,
                    json!({"task": "charge", "input": {
                        "requests": [{"method": "POST", "url": format!("http://127.0.0.1:{port}/charge"),
                                      "secret_headers": {"x-api-key": "API_KEY"}, "body": "{}"}],
                        "read_secrets": ["API_KEY", "OTHER_KEY", "UNDECLARED"],
                        "print_secrets": ["API_KEY"],
                    }}),
                )
                .await;
            let id = job["id"].as_str().unwrap();
            let done = s.finished(&acme, id).await;
            assert_eq!(done["status"], "completed", "{done:#}");
            let out = &done["output"];
            assert_eq!(out["results"][0]["status"], 200, "{out}");
            assert_eq!(out["results"][0]["body"], "charged");
            assert_eq!(*got.lock().unwrap(), [Some(KEY.to_owned())]);
            assert_eq!(out["secrets"]["API_KEY"]["present"], true);
            // Declared but another tenant's: absent. Not declared: absent.
            assert_eq!(out["secrets"]["OTHER_KEY"]["present"], false);
            assert_eq!(out["secrets"]["UNDECLARED"]["present"], false);

            let attempts = s.attempts(&acme, id).await;
            let text = attempts[0]["log"].to_string();
            assert!(!text.contains(KEY), "the log leaks the secret: {text}");
            assert!(text.contains("secret API_KEY = [redacted]"), "{text}");
            let net = &attempts[0]["network"];
            assert_eq!((net["requests"].as_u64(), net["refused"].as_u64()), (Some(1), Some(0)), "{net}");
            assert_eq!(net["bytes_sent"], 2);
            assert_eq!(net["bytes_received"], 7);

            // What a replay takes holds the secret's name, never its value.
            let (status, bundle) = s.get(&format!("/v1/jobs/{id}/bundle"), &acme).await;
            assert_eq!(status, StatusCode::OK, "{bundle}");
            assert!(bundle.to_string().contains("API_KEY"));
            assert!(!bundle.to_string().contains(KEY), "the bundle leaks the secret");

            let (status, usage) = s.get("/v1/tenants/acme/usage", ADMIN).await;
            assert_eq!(status, StatusCode::OK, "{usage}");
            assert_eq!(usage["current"]["http_requests"], 1, "{usage}");
            assert_eq!(usage["current"]["http_bytes"], 9, "{usage}");

            // The scrape counts it too (a sum over every server of the test
            // binary: it only has to have moved).
            let scrape = s.metrics_text().await;
            assert!(
                scrape.contains("taskbox_outbound_requests_total{result=\"sent\"}"),
                "{scrape}"
            );

            // A definition whose allowlist does not parse is refused by name.
            let digest = s.upload(&acme, "http-probe").await;
            let (status, body) = s
                .call(
                    Method::PUT,
                    "/v1/tasks/bad",
                    &acme,
                    Some(json!({"component": digest, "network": {"allow": ["https://x.example/path"]}, "secrets": ["1BAD"]})),
                )
                .await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
            let message = body["error"]["message"].as_str().unwrap_or_default();
            assert!(message.contains("https://x.example/path"), "{message}");
            assert!(message.contains("1BAD"), "{message}");
            s.stop().await;
        },
    )
    .await;
}

#[tokio::test]
async fn without_the_servers_leave_a_listed_private_host_is_refused() {
    let s = TestServer::start(1).await;
    let (port, got) = host().await;
    let t = s
        .tenant("acme", &["tasks:write", "jobs:queue", "jobs:read"])
        .await;
    s.task(
        &t,
        "probe",
        "http-probe",
        json!({"network": {"allow": [format!("127.0.0.1:{port}")]}}),
    )
    .await;
    let job = s
        .enqueue(
            &t,
            json!({"task": "probe", "input": {"requests": [{"method": "GET", "url": format!("http://127.0.0.1:{port}/")}]}}),
        )
        .await;
    let done = s.finished(&t, job["id"].as_str().unwrap()).await;
    assert_eq!(
        done["output"]["results"][0]["error"], "destination-IP-prohibited",
        "{done:#}"
    );
    assert!(got.lock().unwrap().is_empty());
    let attempts: Vec<Value> = s.attempts(&t, job["id"].as_str().unwrap()).await;
    assert!(attempts[0]["log"]
        .to_string()
        .contains("--outbound-allow-private"));
    s.stop().await;
}

#[tokio::test]
async fn an_invoked_task_calls_out_with_its_own_grant_and_its_parent_counts_it() {
    let s = TestServer::start_with(1, |c| c.network.allow_private = true).await;
    let (port, got) = host().await;
    let t = s
        .tenant(
            "acme",
            &["tasks:write", "jobs:queue", "jobs:read", "secrets:write"],
        )
        .await;
    put_secret(&s, &t, "API_KEY", KEY).await;
    s.task(
        &t,
        "probe",
        "http-probe",
        json!({"network": {"allow": [format!("127.0.0.1:{port}")]}, "secrets": ["API_KEY"]}),
    )
    .await;
    // The parent has no grant of its own: what it invokes brings its own.
    s.task(&t, "orch", "orchestrator", json!({})).await;
    let probe_input = json!({
        "requests": [{"method": "GET", "url": format!("http://127.0.0.1:{port}/"),
                      "secret_headers": {"x-api-key": "API_KEY"}}],
    });
    let job = s
        .enqueue(&t, json!({"task": "orch", "input": {"calls": [{"invoke": "probe", "input": probe_input}]}}))
        .await;
    let id = job["id"].as_str().unwrap();
    let done = s.finished(&t, id).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    let result = &done["output"]["results"][0]["output"]["results"][0];
    assert_eq!(result["status"], 200, "{done:#}");
    assert_eq!(*got.lock().unwrap(), [Some(KEY.to_owned())]);
    let attempts = s.attempts(&t, id).await;
    assert_eq!(attempts[0]["network"]["requests"], 1, "{:#}", attempts[0]);
    s.stop().await;
}
