//! Round three, item 3: an answer that lasts must not outlive its token.
//! An event stream (`GET /v1/events`) was authenticated once, at connect:
//! one whose token was revoked went on delivering the tenant's events (24
//! of jobs enqueued 10 s and more after the revoke), and one whose token
//! expired too. Now the stream looks its token up again as it goes on: a
//! revoke (on this server or another of the database) or an expiry ends it
//! within 5 s with a last `error` event, and once the server refuses the
//! token to a new request the stream sends nothing more; a `run?wait=true`
//! is answered 401 the same way; a stream whose token is taken goes on.

use super::token_revocation::mint;
use crate::api_events::{open, Sse, Stream};
use crate::server::{TestServer, ADMIN};
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::time::Duration;
use tokio::time::Instant;

/// The longest a revoked or expired token's answer may go on.
const REACH: Duration = Duration::from_secs(5);

/// Tenant `acme` with the task `noop`, and a token of it to enqueue with.
async fn acme(s: &TestServer) -> String {
    let (_, writer) = mint(s, "acme", json!({})).await;
    s.task(&writer, "noop", "noop", json!({})).await;
    writer
}

async fn enqueue(s: &TestServer, writer: &str) -> String {
    let job = s
        .enqueue(writer, json!({"task": "noop", "input": {}}))
        .await;
    job["id"].as_str().expect("a job has an id").to_owned()
}

/// Whether `s` refuses `token` to a new request now.
async fn refused(s: &TestServer, token: &str) -> bool {
    let (status, body) = s.get("/v1/jobs", token).await;
    if status == StatusCode::UNAUTHORIZED {
        return true;
    }
    assert_eq!(status, StatusCode::OK, "{body}");
    false
}

/// The stream's next event; the test fails if none comes by `deadline`.
async fn next(stream: &mut Stream, deadline: Instant, waiting: &str) -> Option<Sse> {
    tokio::time::timeout_at(deadline, stream.next())
        .await
        .unwrap_or_else(|_| panic!("{waiting}"))
}

/// What reading the stream for one job came to.
enum Read {
    /// An event of the job came.
    Delivered,
    /// The stream ended: its `error` event's data.
    Ended(Value),
}

/// Reads the stream until an event of job `id` or its end (an `error`
/// event, then nothing). Fails on an event of a job in `barred`, enqueued
/// once the server refused the token, and on a stream still going on at
/// `deadline`.
async fn read_for(
    stream: &mut Stream,
    id: &str,
    barred: &HashSet<String>,
    deadline: Instant,
) -> Read {
    let waiting = "the stream still goes on after the token was revoked or expired";
    loop {
        let Some(e) = next(stream, deadline, waiting).await else {
            panic!("the stream ended without an `error` event saying why");
        };
        if e.event == "error" {
            let after = next(
                stream,
                deadline,
                "the stream goes on after its `error` event",
            )
            .await;
            assert!(after.is_none(), "an event after `error`: {after:?}");
            return Read::Ended(e.data);
        }
        let job = e.data["job"]["id"].as_str().unwrap_or_default();
        assert!(
            !barred.contains(job),
            "the stream delivered {} of job {job}, enqueued after the server refused the token",
            e.event
        );
        if job == id {
            return Read::Delivered;
        }
    }
}

/// Enqueues one job at a time on `on` and reads the stream until its
/// event, until the stream ends, by `deadline`; no event of a job enqueued
/// once `server` refused `token` to a request may come. The `error`
/// event's data.
async fn until_ended(
    stream: &mut Stream,
    (on, writer): (&TestServer, &str),
    (server, token): (&TestServer, &str),
    deadline: Instant,
) -> Value {
    let mut barred = HashSet::new();
    let mut seen = false;
    loop {
        seen = seen || refused(server, token).await;
        let id = enqueue(on, writer).await;
        if seen {
            barred.insert(id.clone());
        }
        if let Read::Ended(data) = read_for(stream, &id, &barred, deadline).await {
            return data;
        }
    }
}

/// The `error` event of a stream ended by its token: `UNAUTHENTICATED`, in
/// the API's error shape, with where to resume.
fn assert_unauthenticated(data: &Value) {
    assert_eq!(data["error"]["code"], "UNAUTHENTICATED", "{data}");
    assert!(data["error"]["message"].is_string(), "{data}");
    assert!(data["last_seq"].is_u64(), "{data}");
}

/// A stream that delivers: opened with `reader`, one job's event read.
async fn live_stream(s: &TestServer, writer: &str, reader: &str) -> Stream {
    let mut stream = open(s, reader, "", None).await;
    let id = enqueue(s, writer).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    assert!(matches!(
        read_for(&mut stream, &id, &HashSet::new(), deadline).await,
        Read::Delivered
    ));
    stream
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_tokens_stream_ends_and_sends_nothing_after_the_revoke() {
    TestServer::each_backend(0, async |s| {
        let writer = acme(&s).await;
        let (id, reader) = mint(&s, "acme", json!({})).await;
        let mut stream = live_stream(&s, &writer, &reader).await;
        let (status, body) = s
            .call(Method::DELETE, &format!("/v1/tokens/{id}"), ADMIN, None)
            .await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
        let revoked = Instant::now();
        let data = until_ended(&mut stream, (&s, &writer), (&s, &reader), revoked + REACH).await;
        assert_unauthenticated(&data);
        eprintln!("the stream ended {:?} after the revoke", revoked.elapsed());
        s.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_tokens_stream_ends_at_its_expiry() {
    TestServer::each_backend(0, async |s| {
        let writer = acme(&s).await;
        let at = chrono::Utc::now() + chrono::Duration::seconds(3);
        let expiry = at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let (_, reader) = mint(&s, "acme", json!({"expires_at": expiry})).await;
        let mut stream = live_stream(&s, &writer, &reader).await;
        let left = (at - chrono::Utc::now()).to_std().unwrap_or_default();
        let data = until_ended(
            &mut stream,
            (&s, &writer),
            (&s, &reader),
            Instant::now() + left + REACH,
        )
        .await;
        assert_unauthenticated(&data);
        let message = data["error"]["message"].as_str().unwrap();
        assert!(message.contains("this token expired at"), "{message}");
        s.stop().await;
    })
    .await;
}

/// Two servers of one PostgreSQL database: the token revoked on A, the
/// stream on B ends within 5 s, and sends nothing once B refuses the
/// token to a request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_on_another_server_of_the_database_ends_within_5_s_of_the_revoke() {
    let Some(db) = crate::store_pg::test_db().await else {
        return;
    };
    let on_db = |c: &mut taskbox::config::ServeConfig| c.database_url = db.url.clone();
    let a = TestServer::start_with(0, on_db).await;
    let b = TestServer::start_with(0, on_db).await;
    let writer = acme(&a).await;
    let (id, reader) = mint(&a, "acme", json!({})).await;
    let mut stream = open(&b, &reader, "", None).await;
    // Delivered on B, of a job enqueued on A.
    let first = enqueue(&a, &writer).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    assert!(matches!(
        read_for(&mut stream, &first, &HashSet::new(), deadline).await,
        Read::Delivered
    ));
    let (status, body) = a
        .call(Method::DELETE, &format!("/v1/tokens/{id}"), ADMIN, None)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let revoked = Instant::now();
    let data = until_ended(&mut stream, (&a, &writer), (&b, &reader), revoked + REACH).await;
    assert_unauthenticated(&data);
    eprintln!(
        "B's stream ended {:?} after the revoke on A",
        revoked.elapsed()
    );
    a.stop().await;
    b.stop().await;
    drop(db);
}

/// The obeyed half: a stream whose token is taken goes on past the 5 s in
/// which a refused one ends (its token looked up again meanwhile, from the
/// store too), and past a revoke of another token, which wakes every
/// stream to look its own up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_whose_token_is_taken_goes_on_past_its_rechecks() {
    TestServer::each_backend(0, async |s| {
        let writer = acme(&s).await;
        let (_, reader) = mint(&s, "acme", json!({})).await;
        let (other, _) = mint(&s, "acme", json!({})).await;
        let mut stream = live_stream(&s, &writer, &reader).await;
        let (status, body) = s
            .call(Method::DELETE, &format!("/v1/tokens/{other}"), ADMIN, None)
            .await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
        let opened = Instant::now();
        let until = opened + REACH + Duration::from_secs(1);
        let mut delivered = 0;
        while Instant::now() < until || delivered < 2 {
            let id = enqueue(&s, &writer).await;
            let deadline = Instant::now() + Duration::from_secs(30);
            match read_for(&mut stream, &id, &HashSet::new(), deadline).await {
                Read::Delivered => delivered += 1,
                Read::Ended(data) => panic!(
                    "the stream of a token that is taken ended after {:?}: {data}",
                    opened.elapsed()
                ),
            }
        }
        assert!(!refused(&s, &reader).await);
        s.stop().await;
    })
    .await;
}

/// `POST /v1/jobs/{id}/run?wait=true` waits for the attempt's end, up to
/// the task's timeout and a minute: a revoke answers it 401 within 5 s,
/// and the attempt goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_waited_for_is_answered_401_within_5_s_of_the_revoke() {
    let s = TestServer::start(1).await;
    let (_, writer) = mint(&s, "acme", json!({})).await;
    s.task(&writer, "limits", "limits", json!({})).await;
    let (id, reader) = mint(&s, "acme", json!({})).await;
    let job = s
        .enqueue(
            &writer,
            json!({"task": "limits", "input": {"op": "sleep", "ms": 20_000}, "delay_ms": 3_600_000}),
        )
        .await;
    let job = job["id"].as_str().unwrap().to_owned();
    let router = s.router.clone();
    let run = format!("/v1/jobs/{job}/run?wait=true");
    let waiting = tokio::spawn(async move {
        let req = axum::http::Request::post(run)
            .header("authorization", format!("Bearer {reader}"))
            .body(axum::body::Body::empty())
            .unwrap();
        let resp = tower::ServiceExt::oneshot(router, req).await.unwrap();
        let status = resp.status();
        let body = http_body_util::BodyExt::collect(resp.into_body())
            .await
            .unwrap()
            .to_bytes();
        (
            status,
            serde_json::from_slice::<Value>(&body).unwrap_or(Value::Null),
        )
    });
    s.until(&writer, &job, |j| j["status"] == "running").await;
    let (status, body) = s
        .call(Method::DELETE, &format!("/v1/tokens/{id}"), ADMIN, None)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (status, body) = tokio::time::timeout(REACH, waiting)
        .await
        .expect("the wait still goes on 5 s after the revoke")
        .unwrap();
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"]["code"], "UNAUTHENTICATED");
    // The attempt goes on, as when a client goes away.
    let (_, running) = s.get(&format!("/v1/jobs/{job}"), &writer).await;
    assert_eq!(running["status"], "running", "{running}");
    let (status, body) = s
        .post(&format!("/v1/jobs/{job}/cancel"), &writer, json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    s.stop().await;
}
