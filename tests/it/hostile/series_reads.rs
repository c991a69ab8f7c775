//! Round three, item 8: the reads that scan a tenant's records (the
//! charts' series, the usage export) are charged to that tenant. Before,
//! 50 parallel series callers of one tenant were all answered (no 429)
//! and took another tenant's `GET /v1/jobs/{id}` p99 from 2 ms to 4.5 s:
//! each call read every tenant's job rows, as many at once as asked.
//!
//! Now each tenant's calls take from its own rate (429 with `Retry-After`
//! past it, the other tenant's untouched), a tenant runs one at a time and
//! the process a few, and one tenant's read goes by its own rows through
//! an index. Timings are not asserted (tests never do); the test prints
//! the other tenant's lookups under the flood for the record.

use crate::server::{TestServer, ALL_SCOPES};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::json;
use std::time::{Duration, Instant};
use taskbox::store::dialect::Dialect;
use tower::ServiceExt;

/// One GET: its status and `Retry-After`, if any.
async fn get(s: &TestServer, path: &str, token: &str) -> (StatusCode, Option<u64>) {
    let req = Request::get(path)
        .header("authorization", format!("Bearer {token}"))
        .body(Body::empty())
        .unwrap();
    let resp = s.router.clone().oneshot(req).await.unwrap();
    let retry = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok()?.parse().ok());
    (resp.status(), retry)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_tenants_dashboards_take_from_its_own_read_rate() {
    TestServer::each_backend(1, async |s| {
        let a = s.tenant("dashboards", ALL_SCOPES).await;
        let b = s.tenant("quiet", ALL_SCOPES).await;
        s.task(&b, "echo", "limits", json!({})).await;
        let job = s
            .enqueue(
                &b,
                json!({"task": "echo", "input": {"op": "echo", "value": 1}}),
            )
            .await;
        let id = job["id"].as_str().unwrap().to_owned();
        s.finished(&b, &id).await;

        // 50 series and export calls of one tenant at once: its burst (5 s
        // of 2 a second) is answered, the rest told when to come back.
        let started = Instant::now();
        let flood: Vec<_> = (0..50)
            .map(|i| {
                let (router, a) = (s.router.clone(), a.clone());
                let path = if i % 2 == 0 {
                    "/v1/series?span=day"
                } else {
                    "/v1/usage/export?by=day"
                };
                tokio::spawn(async move {
                    let req = Request::get(path)
                        .header("authorization", format!("Bearer {a}"))
                        .body(Body::empty())
                        .unwrap();
                    let resp = router.oneshot(req).await.unwrap();
                    let retry = resp.headers().get("retry-after").is_some();
                    (resp.status(), retry)
                })
            })
            .collect();
        // Meanwhile the other tenant's lookups and its own charts.
        let mut lookups = Vec::new();
        for _ in 0..20 {
            let t = Instant::now();
            let (status, _) = get(&s, &format!("/v1/jobs/{id}"), &b).await;
            assert_eq!(status, StatusCode::OK);
            lookups.push(t.elapsed());
        }
        let (status, _) = get(&s, "/v1/series", &b).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "the quiet tenant's charts took the other's rate"
        );
        let mut answered = 0;
        let mut refused = 0;
        for call in flood {
            match call.await.unwrap() {
                (StatusCode::OK, _) => answered += 1,
                (StatusCode::TOO_MANY_REQUESTS, true) => refused += 1,
                other => panic!("a flooding call was answered {other:?}"),
            }
        }
        // The burst is 10; a slow machine refills a few more meanwhile
        // (2 a second), but not 40 more.
        assert!(
            answered >= 10 && refused >= 10 && answered + refused == 50,
            "{answered} answered, {refused} refused"
        );
        lookups.sort();
        eprintln!(
            "series_reads: the quiet tenant's lookups under 50 calls of another's: \
             p50 {:?}, max {:?} (the flood took {:?})",
            lookups[lookups.len() / 2],
            lookups[lookups.len() - 1],
            started.elapsed()
        );

        // Past the rate: 429 with the wait; after it, answered again.
        let mut retry = None;
        for _ in 0..50 {
            if let (StatusCode::TOO_MANY_REQUESTS, r) = get(&s, "/v1/series", &a).await {
                retry = Some(r);
                break;
            }
        }
        let wait = retry
            .expect("50 calls in a row were all answered")
            .expect("a Retry-After");
        assert!((1..=5).contains(&wait), "Retry-After: {wait}");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let (status, _) = get(&s, "/v1/series", &a).await;
            if status == StatusCode::OK {
                break;
            }
            assert!(Instant::now() < deadline, "the rate never came back");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // The admin reads across tenants with no rate of its own.
        for _ in 0..15 {
            let (status, _) = get(&s, "/v1/series", crate::server::ADMIN).await;
            assert_eq!(status, StatusCode::OK);
        }
        s.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_tenants_read_goes_by_its_own_rows() {
    let s = TestServer::start(1).await;
    let db = rusqlite::Connection::open_with_flags(
        s.dir().join("taskbox.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let d = Dialect::Sqlite;
    use taskbox::store::{series_sql, usage_sql};
    for (name, sql) in [
        ("started", series_sql::started(d, true)),
        ("ended", series_sql::ended(d, true)),
        ("attempts", usage_sql::attempts(d, true)),
        ("cache_hits", usage_sql::cache_hits(d, true)),
    ] {
        let mut stmt = db.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let plan: Vec<String> = stmt
            .query_map(rusqlite::params![0_i64, 1_i64, 60_000_i64, "acme"], |r| {
                r.get::<_, String>(3)
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        // Every read of the job rows goes through an index on the tenant;
        // none scans the table (a `SCAN jobs` with no index).
        let on_jobs: Vec<&String> = plan
            .iter()
            .filter(|l| l.contains(" jobs") || l.contains(" j "))
            .collect();
        assert!(!on_jobs.is_empty(), "{name}: {plan:#?}");
        for line in on_jobs {
            assert!(
                line.contains("USING INDEX") || line.contains("USING COVERING INDEX"),
                "{name} reads the jobs without an index: {plan:#?}"
            );
        }
    }
    s.stop().await;
}
