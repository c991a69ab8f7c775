//! The admin's view across tenants (`?all_tenants=true`) on both backends:
//! every list names each row's tenant and holds every tenant's rows (jobs,
//! tasks, workflows, schedules, webhooks, secrets, queues), a tenant's
//! token is refused it, the event stream of every tenant carries each
//! tenant's events from its opening on, and a filtered retry of every
//! tenant's failed jobs charges each to its own tenant's enqueue rate.

use crate::api_events::{open, page, try_open};
use crate::server::{TestServer, ADMIN, ALL_SCOPES};
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};
use std::collections::BTreeSet;

const TENANTS: [&str; 2] = ["acme", "other"];

/// Each of `list`'s rows as (tenant, `key`).
fn rows(body: &Value, list: &str, key: &str) -> BTreeSet<(String, String)> {
    body[list]
        .as_array()
        .unwrap_or_else(|| panic!("no {list} in {body}"))
        .iter()
        .map(|r| {
            let tenant = r["tenant"]
                .as_str()
                .unwrap_or_else(|| panic!("no tenant in {r}"));
            (tenant.to_owned(), r[key].as_str().unwrap().to_owned())
        })
        .collect()
}

/// A tenant with a task, a workflow, a schedule, a webhook, a secret, a
/// paused queue and an ended job; the job's id.
async fn furnish(s: &TestServer, tenant: &str) -> (String, String) {
    let mut scopes = ALL_SCOPES.to_vec();
    scopes.push("schedules:write");
    let t = s.tenant(tenant, &scopes).await;
    s.task(&t, "work", "noop", json!({})).await;
    let put = |path: String, body: Value| {
        let t = t.clone();
        async move {
            let (status, answer) = s.call(Method::PUT, &path, &t, Some(body)).await;
            assert!(status.is_success(), "PUT {path}: {answer}");
        }
    };
    put(
        "/v1/workflows/flow".into(),
        json!({"steps": [{"name": "only", "task": "work"}]}),
    )
    .await;
    put(
        "/v1/schedules/nightly".into(),
        json!({"cron": "0 3 * * *", "task": "work"}),
    )
    .await;
    put(
        format!("/v1/secrets/KEY_{}", tenant.to_uppercase()),
        json!({"value": "not-a-real-key"}),
    )
    .await;
    let (status, hook) = s
        .post(
            "/v1/webhooks",
            &t,
            json!({"url": format!("http://127.0.0.1:9/{tenant}"), "events": ["*"]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{hook}");
    let (status, paused) = s
        .post(&format!("/v1/queues/lane-{tenant}/pause"), &t, json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{paused}");
    let job = s.enqueue(&t, json!({"task": "work"})).await;
    let id = job["id"].as_str().unwrap().to_owned();
    assert_eq!(job["tenant"], tenant, "a job names its tenant");
    s.finished(&t, &id).await;
    (t, id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_lists_every_tenants_rows_and_a_tenant_only_its_own() {
    // Webhooks at a refused port of this machine: listed, never delivered.
    let private = |c: &mut taskbox::config::ServeConfig| c.webhooks.allow_private = true;
    TestServer::each_backend_with(1, private, async |s: TestServer| {
        let mut tokens = Vec::new();
        let mut jobs = Vec::new();
        for tenant in TENANTS {
            let (t, job) = furnish(&s, tenant).await;
            tokens.push(t);
            jobs.push((tenant.to_owned(), job));
        }
        let every = |name: &str| -> BTreeSet<(String, String)> {
            TENANTS
                .iter()
                .map(|t| (t.to_string(), name.to_owned()))
                .collect()
        };

        // Every tenant's, each row naming its tenant.
        let (status, all) = s.get("/v1/jobs?all_tenants=true", ADMIN).await;
        assert_eq!(status, StatusCode::OK, "{all}");
        assert_eq!(rows(&all, "jobs", "id"), jobs.iter().cloned().collect());
        let (_, failed) = s
            .get("/v1/jobs?all_tenants=true&status=failed", ADMIN)
            .await;
        assert_eq!(failed["jobs"], json!([]), "the filters hold across tenants");
        let (_, one) = s.get("/v1/jobs?all_tenants=true&limit=1", ADMIN).await;
        assert_eq!(
            one["jobs"][0]["id"], jobs[1].1,
            "newest first, across tenants"
        );
        let (_, older) = s
            .get(
                &format!(
                    "/v1/jobs?all_tenants=true&limit=1&cursor={}",
                    one["next_cursor"].as_str().unwrap()
                ),
                ADMIN,
            )
            .await;
        assert_eq!(older["jobs"][0]["id"], jobs[0].1, "and paged");
        for (path, list, key, want) in [
            ("/v1/tasks", "tasks", "name", every("work")),
            ("/v1/workflows", "workflows", "name", every("flow")),
            ("/v1/schedules", "schedules", "name", every("nightly")),
        ] {
            let (status, body) = s.get(&format!("{path}?all_tenants=true"), ADMIN).await;
            assert_eq!(status, StatusCode::OK, "{path}: {body}");
            assert_eq!(rows(&body, list, key), want, "{path}");
        }
        let (_, secrets) = s.get("/v1/secrets?all_tenants=true", ADMIN).await;
        assert_eq!(
            rows(&secrets, "secrets", "name"),
            [("acme", "KEY_ACME"), ("other", "KEY_OTHER")]
                .map(|(t, n)| (t.to_owned(), n.to_owned()))
                .into()
        );
        assert!(!secrets.to_string().contains("not-a-real-key"));
        let (_, hooks) = s.get("/v1/webhooks?all_tenants=true", ADMIN).await;
        assert_eq!(
            hooks["webhooks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| (w["tenant"].as_str().unwrap(), w["url"].as_str().unwrap()))
                .collect::<BTreeSet<_>>(),
            [
                ("acme", "http://127.0.0.1:9/acme"),
                ("other", "http://127.0.0.1:9/other")
            ]
            .into()
        );
        let (_, queues) = s.get("/v1/queues?all_tenants=true", ADMIN).await;
        let queues = queues["queues"].as_array().unwrap();
        for tenant in TENANTS {
            let of = |name: &str| {
                queues
                    .iter()
                    .find(|q| q["tenant"] == tenant && q["name"] == name)
                    .unwrap_or_else(|| panic!("{tenant}'s {name} in {queues:?}"))
            };
            assert_eq!(of("default")["depth"]["completed"], 1, "{tenant}");
            assert_eq!(of(&format!("lane-{tenant}"))["paused"], true, "{tenant}");
        }
        assert_eq!(queues.len(), 4, "{queues:?}");

        // The admin without it acts in one tenant, as before.
        let (_, own) = s.get("/v1/jobs", ADMIN).await;
        assert_eq!(own["jobs"], json!([]), "the admin's own tenant has no job");
        let (_, false_) = s.get("/v1/tasks?all_tenants=false", ADMIN).await;
        assert_eq!(false_["tasks"], json!([]));

        // A tenant's token: its own rows, and all_tenants refused.
        for (tenant, t) in TENANTS.iter().zip(&tokens) {
            let (_, mine) = s.get("/v1/jobs", t).await;
            assert_eq!(
                rows(&mine, "jobs", "id"),
                jobs.iter().filter(|(x, _)| x == tenant).cloned().collect()
            );
            for path in [
                "/v1/jobs",
                "/v1/tasks",
                "/v1/workflows",
                "/v1/schedules",
                "/v1/webhooks",
                "/v1/secrets",
                "/v1/queues",
            ] {
                let (status, err) = s.get(&format!("{path}?all_tenants=true"), t).await;
                assert_eq!(status, StatusCode::FORBIDDEN, "{path}: {err}");
                assert!(
                    err["error"]["message"]
                        .as_str()
                        .unwrap()
                        .contains("leave out all_tenants"),
                    "{err}"
                );
            }
            let (status, err) = s.get("/v1/jobs?all_tenants=yes", t).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
        }
        s.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admins_stream_of_every_tenant_carries_each_tenants_events() {
    TestServer::each_backend(1, async |s: TestServer| {
        let mut tokens = Vec::new();
        for tenant in TENANTS {
            let t = s.tenant(tenant, ALL_SCOPES).await;
            s.task(&t, "work", "noop", json!({})).await;
            tokens.push(t);
        }
        let mut stream = open(&s, ADMIN, "?all_tenants=true&type=job.completed", None).await;
        let mut made = Vec::new();
        for (tenant, t) in TENANTS.iter().zip(&tokens) {
            let job = s.enqueue(t, json!({"task": "work"})).await;
            made.push((tenant.to_string(), job["id"].as_str().unwrap().to_owned()));
        }
        let mut seen = BTreeSet::new();
        while seen.len() < made.len() {
            let e = stream.next().await.expect("the stream goes on");
            assert_eq!(e.event, "job.completed", "the filter holds: {e:?}");
            assert_eq!(e.id, None, "no id to resume from: {e:?}");
            seen.insert((
                e.data["tenant"].as_str().unwrap().to_owned(),
                e.data["job"]["id"].as_str().unwrap().to_owned(),
            ));
        }
        assert_eq!(seen, made.into_iter().collect());

        // Refused: resuming it, a page of it, and a tenant's token.
        let (status, _) = try_open(&s, ADMIN, "?all_tenants=true&after=1", None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let (status, _) = try_open(&s, ADMIN, "?all_tenants=true", Some(1)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let (status, err) = page(&s, ADMIN, "?all_tenants=true").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
        let (status, _) = try_open(&s, &tokens[0], "?all_tenants=true", None).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        drop(stream);
        s.stop().await;
    })
    .await;
}

/// `n` jobs of `tenant`'s that failed for good; their ids.
async fn failed_jobs(s: &TestServer, token: &str, n: usize) -> Vec<String> {
    let once = json!({"max_attempts": 1});
    s.task(token, "t", "limits", json!({"retry": once})).await;
    let mut ids = Vec::new();
    for _ in 0..n {
        let fail = json!({"task": "t", "input": {"op": "fail", "code": "nope"}});
        ids.push(
            s.enqueue(token, fail).await["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    for id in &ids {
        assert_eq!(s.finished(token, id).await["status"], "failed");
    }
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_retries_every_tenants_failed_jobs_each_on_its_own_rate() {
    TestServer::each_backend(1, async |s: TestServer| {
        let acme = s.tenant("acme", ALL_SCOPES).await;
        let other = s.tenant("other", ALL_SCOPES).await;
        let acme_failed = failed_jobs(&s, &acme, 3).await;
        let other_failed = failed_jobs(&s, &other, 2).await;

        // Only the admin retries across tenants; without it, its own tenant's.
        let across = "/v1/jobs/retry?all_tenants=true";
        let (status, err) = s.post(across, &acme, json!({})).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{err}");
        let (status, err) = s
            .post("/v1/jobs/retry?all_tenants=1", ADMIN, json!({}))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
        let (_, own) = s.post("/v1/jobs/retry", ADMIN, json!({})).await;
        assert_eq!(own, json!({"retried": 0, "refused": 0, "more": false}));

        // other's enqueue rate spent: at most one more token (its burst)
        // while the retry runs; acme's untouched.
        let (status, put) = s
            .call(
                Method::PUT,
                "/v1/tenants/other",
                ADMIN,
                Some(json!({"quotas": {"enqueue_per_second": 1, "enqueue_burst": 1}})),
            )
            .await;
        assert!(status.is_success(), "{put}");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let ok = json!({"task": "t", "input": {"op": "echo", "value": 1}});
            let (status, body) = s.post("/v1/jobs", &other, ok).await;
            if status == StatusCode::TOO_MANY_REQUESTS {
                break;
            }
            assert_eq!(status, StatusCode::CREATED, "{body}");
            assert!(std::time::Instant::now() < deadline, "never rate-limited");
        }

        let (status, r) = s
            .post(across, ADMIN, json!({"filter": {"task": "t"}}))
            .await;
        assert_eq!(status, StatusCode::OK, "{r}");
        assert_eq!(r["more"], true, "other's rate left some: {r}");
        assert_eq!(r["refused"], 0, "{r}");
        let retried = r["retried"].as_u64().unwrap();
        // Every one of acme's ran again (and failed again).
        for id in &acme_failed {
            let j = s.finished(&acme, id).await;
            assert_eq!(j["attempts"], 2, "acme's {id} was retried: {j}");
        }
        // Of other's, what its one token allowed at most; the rest left failed.
        let mut again = 0;
        for id in &other_failed {
            let j = s.finished(&other, id).await;
            match j["attempts"].as_u64() {
                Some(2) => again += 1,
                Some(1) => assert_eq!(j["status"], "failed", "{j}"),
                _ => panic!("{j}"),
            }
        }
        assert!(again <= 1, "other's rate allows one: {again}");
        assert_eq!(retried, 3 + again, "{r}");
        s.stop().await;
    })
    .await;
}
