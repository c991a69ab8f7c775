//! `GET /v1/events` through the router: a job's events in order, a stream
//! resumed after a reconnect and after a server restart, filters, pages of
//! JSON, a client too slow to read dropped with a last event, the bound on
//! a tenant's streams, scopes and tenants kept apart.

use crate::server::{TestServer, ADMIN, ALL_SCOPES};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use std::time::Duration;

/// One server-sent event.
#[derive(Debug, Clone)]
pub struct Sse {
    pub id: Option<u64>,
    pub event: String,
    pub data: Value,
}

/// A stream of server-sent events being read.
pub struct Stream {
    body: Body,
    buf: String,
}

impl Stream {
    /// The next event (keep-alive comments skipped); panics after 30 s.
    pub async fn next(&mut self) -> Option<Sse> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let (mut id, mut event, mut data) = (None, String::from("message"), String::new());
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        id = v.trim().parse().ok();
                    } else if let Some(v) = line.strip_prefix("event:") {
                        event = v.trim().to_owned();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim_start());
                    }
                }
                if data.is_empty() {
                    continue;
                }
                return Some(Sse {
                    id,
                    event,
                    data: serde_json::from_str(&data).unwrap(),
                });
            }
            let frame = tokio::time::timeout_at(deadline, self.body.frame())
                .await
                .expect("an event within 30 s");
            match frame {
                None => return None,
                Some(f) => {
                    if let Ok(bytes) = f.unwrap().into_data() {
                        self.buf.push_str(std::str::from_utf8(&bytes).unwrap());
                    }
                }
            }
        }
    }

    /// Events until one of job `id` of type `until`; all of them.
    pub async fn until(&mut self, id: &str, until: &str) -> Vec<Sse> {
        let mut got = Vec::new();
        loop {
            let e = self.next().await.expect("the stream goes on");
            let done = e.data["job"]["id"] == id && e.event == until;
            got.push(e);
            if done {
                return got;
            }
        }
    }
}

/// Opens a stream with these query parameters and `Last-Event-ID`.
pub async fn open(s: &TestServer, token: &str, query: &str, last: Option<u64>) -> Stream {
    let (status, stream) = try_open(s, token, query, last).await;
    assert_eq!(status, StatusCode::OK);
    stream.unwrap()
}

pub(crate) async fn try_open(
    s: &TestServer,
    token: &str,
    query: &str,
    last: Option<u64>,
) -> (StatusCode, Option<Stream>) {
    let mut req = Request::get(format!("/v1/events{query}"))
        .header("authorization", format!("Bearer {token}"))
        .header("accept", "text/event-stream");
    if let Some(l) = last {
        req = req.header("last-event-id", l.to_string());
    }
    let resp = tower::ServiceExt::oneshot(s.router.clone(), req.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = resp.status();
    if status != StatusCode::OK {
        return (status, None);
    }
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    (
        status,
        Some(Stream {
            body: resp.into_body(),
            buf: String::new(),
        }),
    )
}

/// A page of events as JSON.
pub(crate) async fn page(s: &TestServer, token: &str, query: &str) -> (StatusCode, Value) {
    let req = Request::get(format!("/v1/events{query}"))
        .header("authorization", format!("Bearer {token}"))
        .header("accept", "application/json")
        .body(Body::empty())
        .unwrap();
    s.raw(req).await
}

fn kinds(events: &[Sse], job: &str) -> Vec<String> {
    events
        .iter()
        .filter(|e| e.data["job"]["id"] == job)
        .map(|e| e.event.clone())
        .collect()
}

#[tokio::test]
async fn a_stream_delivers_a_jobs_events_in_order_and_resumes_after_a_reconnect_and_a_restart() {
    let s = TestServer::start(2).await;
    let t = s.tenant("acme", ALL_SCOPES).await;
    s.task(&t, "echo", "noop", json!({})).await;
    let mut stream = open(&s, &t, "", None).await;
    let j = s.enqueue(&t, json!({"task": "echo"})).await;
    let j = j["id"].as_str().unwrap();
    let got = stream.until(j, "job.completed").await;
    assert_eq!(
        kinds(&got, j),
        ["job.queued", "job.started", "job.completed"]
    );
    let ids: Vec<u64> = got.iter().map(|e| e.id.unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    for e in &got {
        assert_eq!(e.data["seq"], e.id.unwrap());
        assert_eq!(e.data["type"], e.event.as_str());
        assert_eq!(e.data["job"]["task"], "echo");
    }
    assert_eq!(got.last().unwrap().data["attempt"], 1);
    let last = *ids.last().unwrap();

    // Gone while a job ran: a reconnect from the last event seen gets all
    // of what was missed, once, and goes on live.
    drop(stream);
    let k = s.enqueue(&t, json!({"task": "echo"})).await;
    let k = k["id"].as_str().unwrap();
    s.finished(&t, k).await;
    let mut stream = open(&s, &t, "", Some(last)).await;
    let got = stream.until(k, "job.completed").await;
    assert_eq!(
        kinds(&got, k),
        ["job.queued", "job.started", "job.completed"]
    );
    assert!(
        kinds(&got, j).is_empty(),
        "nothing seen before is sent again"
    );
    assert_eq!(got[0].id, Some(last + 1), "no gap");
    let k_queued = got[0].id.unwrap();
    drop(stream);

    // After a restart, from the middle of k's events (`after` as a query
    // parameter works as Last-Event-ID does).
    let s = s.restart(2).await;
    let mut stream = open(&s, &t, &format!("?after={k_queued}"), None).await;
    let first = stream.next().await.unwrap();
    assert_eq!(
        (first.id, first.event.as_str()),
        (Some(k_queued + 1), "job.started")
    );
    let second = stream.next().await.unwrap();
    assert_eq!(second.event, "job.completed");
    let l = s.enqueue(&t, json!({"task": "echo"})).await;
    let l = l["id"].as_str().unwrap();
    let got = stream.until(l, "job.completed").await;
    assert_eq!(
        kinds(&got, l),
        ["job.queued", "job.started", "job.completed"]
    );
    assert_eq!(got[0].id, Some(k_queued + 3));
    drop(stream);
    s.stop().await;
}

#[tokio::test]
async fn filters_pages_and_tenants() {
    let s = TestServer::start(2).await;
    let t = s.tenant("acme", ALL_SCOPES).await;
    let other = s.tenant("other", ALL_SCOPES).await;
    s.task(&t, "echo", "noop", json!({})).await;
    s.task(&t, "flaky", "flaky", json!({"retry": {"max_attempts": 1}}))
        .await;
    s.task(&other, "echo", "noop", json!({})).await;
    let mut failures = open(&s, &t, "?type=job.failed,job.completed&task=flaky", None).await;
    let mut theirs = open(&s, &other, "", None).await;
    let ok = s.enqueue(&t, json!({"task": "echo"})).await;
    let bad = s
        .enqueue(
            &t,
            json!({"task": "flaky", "input": {"succeed_on_attempt": 2}}),
        )
        .await;
    let bad = bad["id"].as_str().unwrap();
    let mine = s.enqueue(&other, json!({"task": "echo"})).await;
    let mine = mine["id"].as_str().unwrap();
    let got = failures.until(bad, "job.failed").await;
    assert_eq!(got.len(), 1, "only the flaky job's failure: {got:?}");
    let failed = &got[0].data;
    assert_eq!(failed["will_retry"], false);
    assert_eq!(failed["error"]["code"], "not_yet");
    // The other tenant sees its own job alone, numbered from 1.
    let got = theirs.until(mine, "job.completed").await;
    assert_eq!(got[0].id, Some(1));
    assert!(got.iter().all(|e| e.data["job"]["id"] == mine));

    // Pages of JSON: everything from the start, then filtered, then in steps.
    s.finished(&t, ok["id"].as_str().unwrap()).await;
    let (status, p) = page(&s, &t, "").await;
    assert_eq!(status, StatusCode::OK, "{p}");
    let events = p["events"].as_array().unwrap();
    assert_eq!(events.len(), 6, "{p:#}");
    assert_eq!(p["head"], 6);
    assert_eq!(p["next_after"], 6);
    let (_, p) = page(&s, &t, "?type=job.started").await;
    assert_eq!(p["events"].as_array().unwrap().len(), 2);
    assert_eq!(p["next_after"], 6, "the page read past what it left out");
    let (_, p) = page(&s, &t, "?after=2&limit=2").await;
    let seqs: Vec<&Value> = p["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["seq"])
        .collect();
    assert_eq!(seqs, [3, 4]);
    assert_eq!(p["next_after"], 4);
    // Mistakes are named.
    let (status, body) = page(&s, &t, "?type=job.done").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("job.completed"),
        "{body}"
    );
    let (status, _) = page(&s, &t, "?limit=5000").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, body) = page(&s, &t, "?colour=red").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, _) = try_open(&s, &t, "", None).await;
    assert_eq!(status, StatusCode::OK);
    let req = Request::get("/v1/events")
        .header("authorization", format!("Bearer {t}"))
        .header("last-event-id", "twelve")
        .body(Body::empty())
        .unwrap();
    let (status, body) = s.raw(req).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("Last-Event-ID"));
    // A token without jobs:read reads none.
    let writer = s.token("acme", &["jobs:queue"]).await;
    let (status, _) = page(&s, &writer, "").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    drop((failures, theirs));
    s.stop().await;
}

#[tokio::test]
async fn a_client_too_slow_to_read_is_dropped_with_a_last_event() {
    let s = TestServer::start(2).await;
    let t = s.tenant("acme", ALL_SCOPES).await;
    s.task(&t, "echo", "noop", json!({})).await;
    // Opened, then not read while 1,200 events happen.
    let mut slow = open(&s, &t, "", None).await;
    let jobs: Vec<Value> = (0..400).map(|_| json!({"task": "echo"})).collect();
    let (status, body) = s.post("/v1/jobs/batch", &t, json!({"jobs": jobs})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let last_job = body["jobs"][399]["id"].as_str().unwrap().to_owned();
    s.finished(&t, &last_job).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    // The queue did not wait for it: every job ended while it slept.
    loop {
        let (_, p) = page(&s, &t, "?type=job.completed&limit=1000").await;
        if p["events"].as_array().unwrap().len() == 400 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{p}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut read = 0;
    let dropped = loop {
        let e = slow.next().await.expect("a last event before the end");
        if e.event == "dropped" {
            break e;
        }
        read += 1;
    };
    assert!(read < 1200, "it was cut off before the end ({read} read)");
    let last = dropped.data["last_seq"].as_u64().unwrap();
    assert_eq!(last, read as u64, "the last event it was sent");
    assert!(dropped.data["message"]
        .as_str()
        .unwrap()
        .contains("Last-Event-ID"));
    assert!(slow.next().await.is_none(), "the stream ends");
    // Reconnecting from there gets the rest.
    let (_, p) = page(&s, &t, &format!("?after={last}&limit=1000")).await;
    assert_eq!(p["events"][0]["seq"], last + 1);
    let mut again = open(&s, &t, "", Some(last)).await;
    assert_eq!(again.next().await.unwrap().id, Some(last + 1));
    drop(again);
    s.stop().await;
}

#[tokio::test]
async fn a_tenants_streams_are_bounded() {
    let s = TestServer::start_with(1, |c| c.max_event_streams = 2).await;
    let t = s.tenant("acme", ALL_SCOPES).await;
    let other = s.tenant("other", ALL_SCOPES).await;
    let one = open(&s, &t, "", None).await;
    let two = open(&s, &t, "", None).await;
    let req = Request::get("/v1/events")
        .header("authorization", format!("Bearer {t}"))
        .body(Body::empty())
        .unwrap();
    let (status, body) = s.raw(req).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"]["code"], "QUOTA_EXCEEDED");
    assert_eq!(body["error"]["details"]["quota"], "event_streams");
    assert_eq!(body["error"]["details"]["limit"], 2);
    // Another tenant's streams are its own.
    let theirs = open(&s, &other, "", None).await;
    // A stream closed gives its place back.
    drop(one);
    let three = open(&s, &t, "", None).await;
    drop((two, three, theirs));
    let admin = open(&s, ADMIN, "", None).await;
    drop(admin);
    s.stop().await;
}
