//! `GET /openapi.json` of the real binary: the spec and the router agree
//! route for route and method for method, the error shape lists every
//! code, and Schemathesis (PyPI, installed by `scripts/schemathesis-setup`)
//! holds the live API to it: no 5xx, every answer as the spec says.

use crate::e2e::{Client, Served, ADMIN};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Command;

const METHODS: [&str; 5] = ["GET", "POST", "PUT", "DELETE", "PATCH"];

async fn spec(url: &str) -> Value {
    let resp = taskbox::http::default_client()
        .get(format!("{url}/openapi.json"))
        .send()
        .await
        .expect("the server answers");
    assert_eq!(resp.status().as_u16(), 200, "served without a token");
    resp.json().await.expect("the spec is JSON")
}

/// A path of the spec with each `{param}` filled in.
fn filled(path: &str) -> String {
    let mut out = String::new();
    let mut in_param = false;
    for c in path.chars() {
        match c {
            '{' => in_param = true,
            '}' => {
                in_param = false;
                out.push_str("nothing-here");
            }
            _ if in_param => {}
            _ => out.push(c),
        }
    }
    out
}

#[tokio::test]
async fn the_spec_has_exactly_the_routes_the_router_has() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    let spec = spec(&served.url).await;
    assert_eq!(spec["openapi"], "3.1.0");

    // Every code of the error shape is listed.
    let codes = spec["components"]["schemas"]["ErrorCode"]["enum"]
        .as_array()
        .expect("ErrorCode is an enum");
    for code in [
        "JOB_INVALID_INPUT",
        "BAD_REQUEST",
        "UNAUTHENTICATED",
        "JOB_ACCESS_DENIED",
        "JOB_NOT_FOUND",
        "CONFLICT",
        "PAYLOAD_TOO_LARGE",
        "RATE_LIMITED",
        "QUOTA_EXCEEDED",
        "JOB_EXECUTION_ERROR",
        "INTERNAL_ERROR",
        "UNAVAILABLE",
    ] {
        assert!(codes.contains(&json!(code)), "{code} is missing: {codes:?}");
    }

    // Each path and method of the spec is routed, and each other method on
    // its path is refused as not allowed (405), not as no route (404).
    let client = Client::new(&served.url, ADMIN);
    let http = taskbox::http::default_client();
    let paths = spec["paths"].as_object().expect("paths");
    assert!(paths.len() >= 35, "{} paths", paths.len());
    let mut operations = 0;
    for (path, item) in paths {
        for method in METHODS {
            let in_spec = item.get(method.to_lowercase()).is_some();
            operations += usize::from(in_spec);
            let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
            // An empty JSON object: no route reads it as a valid request
            // that changes something real (every name is made up). JSON is
            // asked for, so that the event stream answers a page.
            let mut req = http
                .request(m, format!("{}{}", served.url, filled(path)))
                .bearer_auth(ADMIN)
                .header("accept", "application/json");
            if method != "GET" {
                req = req.body("{}");
            }
            let resp = req.send().await.expect("the server answers");
            let status = resp.status().as_u16();
            let answer: Value = resp.json().await.unwrap_or(Value::Null);
            if in_spec {
                assert_ne!(status, 405, "{method} {path} is in the spec but not routed");
                assert!(
                    !(status == 404 && answer["error"]["code"] == "NOT_FOUND"),
                    "{method} {path} is in the spec but has no route: {answer}"
                );
            } else {
                assert_eq!(
                    status, 405,
                    "{method} {path} is routed but not in the spec: {answer}"
                );
            }
        }
    }
    assert!(operations >= 40, "{operations} operations");

    // A path the spec lacks has no route.
    let (status, answer) = client.get("/v1/nothing-here").await;
    assert_eq!(status, 404, "{answer}");
    assert_eq!(answer["error"]["code"], "NOT_FOUND");
}

fn schemathesis() -> Option<PathBuf> {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/toolchains/schemathesis/bin/schemathesis");
    bin.exists().then_some(bin)
}

#[tokio::test]
async fn schemathesis_finds_no_server_error_and_no_answer_off_the_spec() {
    let Some(bin) = schemathesis() else {
        assert!(
            std::env::var("CI").is_err(),
            "Schemathesis is missing under CI; scripts/schemathesis-setup installs it"
        );
        eprintln!("SKIPPED: Schemathesis is not installed; run scripts/schemathesis-setup");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let served = Served::spawn(dir.path(), &[], Some(ADMIN));
    // Something to find: a task (whose guest echoes), a job of it, a
    // schedule and a workflow, so that the stateful phase's links lead to
    // real resources as well as made-up ones.
    let admin = Client::new(&served.url, ADMIN);
    admin.task("echo", "limits").await;
    let (status, job) = admin
        .post(
            "/v1/jobs",
            json!({"task": "echo", "input": {"op": "echo", "value": 1}}),
        )
        .await;
    assert_eq!(status, 201, "{job}");
    admin
        .until(job["id"].as_str().unwrap(), |j| j["status"] == "completed")
        .await;

    // What it checks, and how hard, is in tests/schemathesis/schemathesis.toml.
    let config =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/schemathesis/schemathesis.toml");
    let out = Command::new(&bin)
        .arg("--config-file")
        .arg(&config)
        .arg("--no-color")
        .args(["run", &format!("{}/openapi.json", served.url)])
        .args(["--header", &format!("Authorization: Bearer {ADMIN}")])
        .current_dir(dir.path())
        .output()
        .expect("schemathesis runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The run's summary goes into the test's output, and to a file that
    // scripts/test prints after the tests (cargo shows a passing test's
    // output only with --nocapture).
    println!("{stdout}");
    eprintln!("{stderr}");
    let summary = stdout
        .find("=== SUMMARY ===")
        .and_then(|at| stdout[..at].rfind('\n').map(|line| &stdout[line + 1..]))
        .unwrap_or(&stdout);
    let saved = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/schemathesis-summary.txt");
    std::fs::write(&saved, summary).expect("write the summary");
    assert!(
        out.status.success(),
        "Schemathesis found failures (above); status {:?}",
        out.status
    );
}
