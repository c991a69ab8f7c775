//! Round three, item 2: a verification's report is bounded whatever the
//! recorded jobs and the candidate returned. It names each run by its
//! verdict and both outputs' hashes and shows a cut, redacted preview of
//! the first place they differ; it never keeps an output whole. Before,
//! it kept every recorded and candidate output whole (60 runs of 0.9 MB:
//! a 216 MB report), and a candidate that echoed a recorded input showed
//! a secret the recorded output had redacted.

use crate::server::{TestServer, ALL_SCOPES};
use axum::http::{Method, StatusCode};
use serde_json::json;
use taskbox::verify::report::{MAX_KEPT_BYTES, PREVIEW_BYTES};

const SECRET: &str = "verify-s3cr3t-value";
const RUNS: usize = 12;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_of_large_outputs_is_bounded_and_shows_no_secret() {
    TestServer::each_backend(1, async |s| {
        let t = s.tenant("acme", ALL_SCOPES).await;
        let (status, body) = s
            .call(
                Method::PUT,
                "/v1/secrets/KEY",
                &t,
                Some(json!({ "value": SECRET })),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        s.task(
            &t,
            "echo",
            "limits",
            json!({"secrets": ["KEY"], "retry": {"max_attempts": 1}}),
        )
        .await;
        // Its own component again: the digest the task runs.
        let component = s.upload(&t, "limits").await;

        // Jobs whose inputs carry the secret and 0.9 MB: their outputs are
        // kept redacted.
        let mut recorded_bytes = 0;
        for i in 0..RUNS {
            let value = json!({"k": format!("{SECRET}{}", "x".repeat(900_000)), "i": i});
            let job = s
                .enqueue(
                    &t,
                    json!({"task": "echo", "input": {"op": "echo", "value": value}}),
                )
                .await;
            let done = s.finished(&t, job["id"].as_str().unwrap()).await;
            assert_eq!(done["status"], "completed", "{}", done["error"]);
            let out = done["output"].to_string();
            assert!(out.contains("[redacted]") && !out.contains(SECRET));
            recorded_bytes += out.len();
        }

        // The same component as the candidate: it runs without the secret,
        // so it echoes the value the recorded output redacted.
        let (status, job) = s
            .post(
                "/v1/tasks/echo/verify",
                &t,
                json!({"component": component, "sample": RUNS}),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{job}");
        let done = s.finished(&t, job["id"].as_str().unwrap()).await;
        assert_eq!(done["status"], "completed", "{}", done["error"]);
        let report = &done["output"];
        let text = report.to_string();
        assert!(!text.contains(SECRET), "the report shows the secret");
        // Bounded by the runs, not by what they returned.
        assert!(
            text.len() <= (RUNS + 1) * MAX_KEPT_BYTES,
            "a report of {} bytes for {RUNS} runs of {recorded_bytes} bytes of output",
            text.len()
        );
        assert_eq!(report["runs"], RUNS, "{report:#}");
        assert_eq!(report["different"], RUNS, "{report:#}");
        for d in report["differences"].as_array().unwrap() {
            for side in ["recorded", "candidate"] {
                let hash = d[side]["output_sha256"].as_str().unwrap();
                assert!(hash.starts_with("sha256:"), "{d}");
                assert!(d[side].get("output").is_none(), "{d}");
            }
            assert_ne!(
                d["recorded"]["output_sha256"],
                d["candidate"]["output_sha256"]
            );
            let first = &d["first_difference"];
            assert_eq!(first["path"], "/k", "{d}");
            let preview: usize = ["path", "recorded", "candidate"]
                .iter()
                .map(|f| first[f].as_str().unwrap().len())
                .sum();
            assert!(preview <= PREVIEW_BYTES, "a preview of {preview} bytes");
            for f in ["recorded", "candidate"] {
                let shown = first[f].as_str().unwrap();
                assert!(shown.starts_with("\"[redacted]xxx"), "{f}: {shown}");
            }
        }
        // Each run names its job, its verdict and both hashes.
        for r in report["each"].as_array().unwrap() {
            assert_eq!(r["same"], false, "{r}");
            assert!(r["recorded_sha256"].is_string() && r["candidate_sha256"].is_string());
        }
        s.stop().await;
    })
    .await;
}
