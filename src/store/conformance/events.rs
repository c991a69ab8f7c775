//! Cases of the outbox: each move of a job reports its events in the same
//! write, numbered per tenant without gaps, in the order a job's moves
//! happened, also under concurrent writers; callbacks land with the end
//! they follow; webhooks' deliveries are made once, taken, retried and
//! pruned.

use super::*;
use crate::events::{decode, Event, EventType};

/// Every event of the tenant, as readers see them now, in order.
pub(crate) async fn events_of(h: &Harness, tenant: &str) -> Vec<Event> {
    h.store.event_sequence().await.unwrap();
    let mut out: Vec<Event> = Vec::new();
    loop {
        let after = out.last().map_or(0, |e| e.seq);
        let rows = h.store.event_read_tenant(tenant, after, 7).await.unwrap();
        if rows.is_empty() {
            return out;
        }
        for e in decode(&rows).unwrap() {
            if e.seq > after {
                out.push(e);
            }
        }
    }
}

/// The types of one job's events, in order.
fn of_job(events: &[Event], id: &str) -> Vec<EventType> {
    events
        .iter()
        .filter(|e| e.job == id)
        .map(|e| e.kind)
        .collect()
}

/// The detail of a job's first event of a type, as a JSON object.
fn detail(events: &[Event], id: &str, kind: EventType) -> serde_json::Value {
    events
        .iter()
        .find(|e| e.job == id && e.kind == kind)
        .and_then(|e| e.detail.clone())
        .map(serde_json::Value::Object)
        .unwrap_or_default()
}

/// Numbers run 1, 2, 3, … without a gap.
fn assert_gapless(events: &[Event]) {
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.seq, i as u64 + 1, "event {i} of {events:#?}");
    }
}

pub(super) async fn every_move_reports_its_events(h: Harness) {
    use EventType::*;
    setup(&h).await;
    // A job retried once, then failed for good.
    insert(
        &h,
        NewJob {
            max_attempts: 2,
            ..new_job("r")
        },
    )
    .await;
    let c = claim(&h, 1).await.pop().unwrap();
    finalize(
        &h,
        &c,
        Action::Retry {
            delay_ms: 0,
            error: failure(),
        },
    )
    .await;
    let c = claim(&h, 1).await.pop().unwrap();
    finalize(&h, &c, Action::Fail { error: failure() }).await;
    // One that completes, at a later time.
    h.clock.advance(10);
    insert(&h, new_job("c")).await;
    let c = claim(&h, 1).await.pop().unwrap();
    finalize(&h, &c, Action::Complete { output: "1".into() }).await;
    // One cancelled in the queue; one that waits and is resumed, then
    // snoozes; one re-driven after it failed.
    insert(&h, new_job("x")).await;
    h.store.job_cancel(A, "x").await.unwrap();
    insert(&h, new_job("w")).await;
    let c = claim(&h, 1).await.pop().unwrap();
    finalize(
        &h,
        &c,
        Action::Wait {
            waiting_for: r#"{"for":"ok"}"#.into(),
        },
    )
    .await;
    h.store.job_resume(A, "w", None).await.unwrap();
    let c = claim(&h, 1).await.pop().unwrap();
    finalize(&h, &c, Action::Snooze { delay_ms: 50 }).await;
    let failed_at = h.store.now();
    h.store
        .job_redrive(
            A,
            vec![Redrive {
                id: "r".into(),
                task: None,
                attempts: 1,
                stage: None,
                cache_key: None,
            }],
        )
        .await
        .unwrap();
    // A job that expires in its queue (the store fails it itself).
    insert(
        &h,
        NewJob {
            expire_after_ms: Some(5),
            run_at: RunAt::After(1_000),
            ..new_job("e")
        },
    )
    .await;
    h.clock.advance(2_000);
    assert_eq!(expire_all(&h).await, 1);
    // A job of another tenant's.
    insert(&h, NewJob::plain("b1", B, task_ref(), "{}")).await;

    let events = events_of(&h, A).await;
    assert_gapless(&events);
    assert_eq!(
        of_job(&events, "r"),
        [Queued, Started, Failed, Retrying, Started, Failed, Queued]
    );
    assert_eq!(of_job(&events, "c"), [Queued, Started, Completed]);
    assert_eq!(of_job(&events, "x"), [Queued, Cancelled]);
    assert_eq!(
        of_job(&events, "w"),
        [Queued, Started, Waiting, Queued, Started, Queued]
    );
    assert_eq!(of_job(&events, "e"), [Queued, Failed]);
    assert!(of_job(&events, "b1").is_empty(), "another tenant's");
    // What each says.
    let r: Vec<&Event> = events.iter().filter(|e| e.job == "r").collect();
    assert_eq!(
        r.iter().map(|e| e.attempt).collect::<Vec<_>>(),
        [0, 1, 1, 1, 2, 2, 2]
    );
    let first_fail = r[2].detail.as_ref().unwrap();
    assert_eq!(first_fail["will_retry"], true);
    assert_eq!(first_fail["error"]["code"], "boom");
    assert_eq!(r[5].detail.as_ref().unwrap()["will_retry"], false);
    assert_eq!(r[6].detail.as_ref().unwrap()["reason"], "redriven");
    assert!(r[6].at >= failed_at);
    assert!(r.iter().all(|e| e.task == "t" && e.queue == "default"));
    assert_eq!(detail(&events, "w", Waiting)["waiting_for"]["for"], "ok");
    let w: Vec<&Event> = events.iter().filter(|e| e.job == "w").collect();
    assert_eq!(w[3].detail.as_ref().unwrap()["reason"], "resumed");
    assert_eq!(w[5].detail.as_ref().unwrap()["reason"], "snoozed");
    let e_failed = &detail(&events, "e", Failed)["error"];
    assert_eq!(e_failed["kind"], "expired");
    // A delayed job says when it is due.
    let e_queued = events
        .iter()
        .find(|e| e.job == "e" && e.kind == Queued)
        .unwrap();
    assert!(
        e_queued.detail.as_ref().unwrap()["run_at"]
            .as_i64()
            .unwrap()
            > e_queued.at
    );
    // The other tenant numbers its own from 1.
    let b = events_of(&h, B).await;
    assert_eq!(b.len(), 1);
    assert_eq!((b[0].seq, b[0].kind), (1, Queued));
    let heads = h.store.event_heads(Some(A)).await.unwrap();
    assert_eq!((heads.seq, heads.first), (events.len() as u64, 1));
}

pub(super) async fn superseded_and_pending_cancels_report_cancels(h: Harness) {
    use EventType::*;
    setup(&h).await;
    let keyed = |id: &str| NewJob {
        concurrency_key: Some("k".into()),
        supersedes: true,
        ..new_job(id)
    };
    insert(&h, keyed("old")).await;
    insert(&h, keyed("new")).await;
    // A running job asked to stop: its failure lands as a cancel.
    insert(&h, new_job("run")).await;
    let c = claim(&h, 10).await;
    let run = c.iter().find(|c| c.id == "run").unwrap();
    h.store.job_cancel(A, "run").await.unwrap();
    finalize(&h, run, Action::Fail { error: failure() }).await;
    let events = events_of(&h, A).await;
    assert_gapless(&events);
    assert_eq!(of_job(&events, "old"), [Queued, Cancelled]);
    let old = events
        .iter()
        .find(|e| e.job == "old" && e.kind == Cancelled)
        .unwrap();
    let d = old.detail.as_ref().unwrap();
    assert_eq!(
        (d["reason"].as_str(), d["by"].as_str()),
        (Some("superseded"), Some("new"))
    );
    assert_eq!(of_job(&events, "run"), [Queued, Started, Cancelled]);
    // A fenced end reports nothing.
    let before = events.len();
    let stale = c.iter().find(|c| c.id == "run").unwrap();
    assert_eq!(
        finalize(&h, stale, Action::Complete { output: "1".into() }).await,
        Finalized::Fenced
    );
    assert_eq!(events_of(&h, A).await.len(), before);
}

pub(super) async fn events_are_numbered_per_tenant_in_one_write(h: Harness) {
    setup(&h).await;
    // One batch of both tenants' jobs: one write, two rows.
    let jobs: Vec<NewJob> = (0..6)
        .map(|i| {
            let tenant = if i % 2 == 0 { A } else { B };
            NewJob::plain(format!("j{i}"), tenant, task_ref(), "{}")
        })
        .collect();
    for r in h.store.job_insert(jobs).await.unwrap() {
        r.unwrap();
    }
    claim(&h, 10).await;
    let (a, b) = (events_of(&h, A).await, events_of(&h, B).await);
    assert_gapless(&a);
    assert_gapless(&b);
    assert_eq!((a.len(), b.len()), (6, 6));
    // Every row, every tenant's, in order, page by page.
    let mut rows = Vec::new();
    let mut after = 0;
    loop {
        let page = h.store.event_read(after, 1).await.unwrap();
        let Some(last) = page.last() else { break };
        after = last.gseq;
        rows.extend(page);
    }
    assert!(rows.windows(2).all(|w| w[0].gseq < w[1].gseq));
    let total: u32 = rows.iter().map(|r| r.n).sum();
    assert_eq!(total, 12);
    assert_eq!(h.store.event_heads(None).await.unwrap().gseq, after);
    // A reader asking past the head gets nothing; from the middle, the rest.
    assert!(h
        .store
        .event_read_tenant(A, 6, 10)
        .await
        .unwrap()
        .is_empty());
    let rest = decode(&h.store.event_read_tenant(A, 4, 10).await.unwrap()).unwrap();
    assert!(rest.iter().any(|e| e.seq == 5));
}

/// Writers at once, as runners and requests write: every tenant's events
/// are numbered without a gap, each once, and each job's in the order its
/// moves happened.
pub(super) async fn concurrent_writers_number_events_in_order(h: Harness) {
    use EventType::*;
    setup(&h).await;
    let writers = 8;
    let per = 25;
    let mut tasks = Vec::new();
    for w in 0..writers {
        let store = h.store.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..per {
                let tenant = if (w + i) % 3 == 0 { B } else { A };
                let id = format!("w{w}-{i}");
                store
                    .job_insert(vec![NewJob::plain(&id, tenant, task_ref(), "{}")])
                    .await
                    .unwrap()
                    .pop()
                    .unwrap()
                    .unwrap();
                let claimed = store
                    .job_claim(ClaimParams {
                        owner: format!("r{w}"),
                        queues: None,
                        limit: 2,
                        lease_ms: 30_000,
                        only_tenants: None,
                        begin_each: u32::MAX,
                        caps: Default::default(),
                    })
                    .await
                    .unwrap()
                    .jobs;
                let ends = claimed
                    .iter()
                    .map(|c| Finalize {
                        id: c.id.clone(),
                        tenant: c.tenant.clone(),
                        lease_token: c.lease_token.clone(),
                        action: Action::Complete { output: "1".into() },
                        attempt: attempt(c, "completed", None),
                        usage: None,
                        callbacks: None,
                        names: c.names(),
                        steps: Vec::new(),
                        close_children: None,
                    })
                    .collect();
                store.job_finalize(ends).await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    // What is left, claimed and ended by one.
    loop {
        let c = claim(&h, 50).await;
        if c.is_empty() {
            break;
        }
        for c in c {
            finalize(&h, &c, Action::Complete { output: "1".into() }).await;
        }
    }
    let mut seen = 0;
    for tenant in [A, B] {
        let events = events_of(&h, tenant).await;
        assert_gapless(&events);
        let jobs: std::collections::BTreeSet<&str> =
            events.iter().map(|e| e.job.as_str()).collect();
        for j in &jobs {
            assert_eq!(of_job(&events, j), [Queued, Started, Completed], "job {j}");
        }
        seen += jobs.len();
    }
    assert_eq!(seen, writers * per);
}

pub(super) async fn callbacks_land_with_the_end(h: Harness) {
    setup(&h).await;
    // Callbacks are not held to max_queued: they come of granted jobs.
    h.store
        .tenant_put(TenantSettings {
            name: A.into(),
            weight: None,
            quotas: crate::quota::Quotas {
                max_queued: Some(3),
                ..Default::default()
            },
        })
        .await
        .unwrap();
    for id in ["ok", "bad", "stopped"] {
        insert(
            &h,
            NewJob {
                max_attempts: 1,
                ..new_job(id)
            },
        )
        .await;
    }
    let cb = |id: &str| {
        Some(Box::new(Callbacks {
            on_success: Some(new_job(&format!("{id}-on-success"))),
            on_fail: Some(new_job(&format!("{id}-on-fail"))),
            made_under: None,
        }))
    };
    let claimed = claim(&h, 10).await;
    let end = |c: &ClaimedJob, action: Action| Finalize {
        id: c.id.clone(),
        tenant: c.tenant.clone(),
        lease_token: c.lease_token.clone(),
        action,
        attempt: attempt(c, "x", None),
        usage: None,
        callbacks: cb(&c.id),
        names: c.names(),
        steps: Vec::new(),
        close_children: None,
    };
    let by = |id: &str| claimed.iter().find(|c| c.id == id).unwrap();
    h.store.job_cancel(A, "stopped").await.unwrap();
    let r = h
        .store
        .job_finalize(vec![
            end(by("ok"), Action::Complete { output: "7".into() }),
            end(by("bad"), Action::Fail { error: failure() }),
            end(by("stopped"), Action::Fail { error: failure() }),
        ])
        .await
        .unwrap();
    assert_eq!(
        r,
        [
            Finalized::Done(JobStatus::Completed),
            Finalized::Done(JobStatus::Failed),
            Finalized::Done(JobStatus::Cancelled)
        ]
    );
    let exists = |id: String| {
        let store = h.store.clone();
        async move { store.job_get(A, &id).await.unwrap().is_some() }
    };
    assert!(exists("ok-on-success".into()).await);
    assert!(!exists("ok-on-fail".into()).await);
    assert!(exists("bad-on-fail".into()).await);
    assert!(!exists("bad-on-success".into()).await);
    assert!(
        !exists("stopped-on-fail".into()).await,
        "a cancel runs none"
    );
    assert!(!exists("stopped-on-success".into()).await);
    // A fenced end enqueues nothing.
    let again = h
        .store
        .job_finalize(vec![end(by("ok"), Action::Complete { output: "7".into() })])
        .await
        .unwrap();
    assert_eq!(again, [Finalized::Fenced]);
    let page = h
        .store
        .job_list(JobQuery {
            tenant: Some(A.into()),
            limit: 100,
            max_bytes: 1 << 20,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(page.jobs.len(), 5, "three jobs and two callbacks");
    // Each callback is a queued job with its events.
    let events = events_of(&h, A).await;
    assert_eq!(of_job(&events, "ok-on-success"), [EventType::Queued]);

    // Each end's callback is recorded as its call, and names its maker.
    let made = |id: &'static str| {
        let store = h.store.clone();
        async move {
            let calls = store.job_calls(id).await.unwrap();
            calls
                .iter()
                .filter(|c| c.kind == CallKind::Callback)
                .map(|c| {
                    (
                        c.callback_kind().to_owned(),
                        c.result.clone(),
                        c.task.clone(),
                    )
                })
                .collect::<Vec<_>>()
        }
    };
    let task = new_job("x").task.name;
    assert_eq!(
        made("ok").await,
        [("on_success".into(), "ok-on-success".into(), task.clone())]
    );
    assert_eq!(
        made("bad").await,
        [("on_fail".into(), "bad-on-fail".into(), task.clone())]
    );
    assert_eq!(made("stopped").await, [], "a cancel made none");
    let of = h
        .store
        .job_callback_of("bad-on-fail")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((of.job_id.as_str(), of.callback_kind()), ("bad", "on_fail"));
    assert!(h.store.job_callback_of("bad").await.unwrap().is_none());

    // A batch naming a job twice is written one end at a time (on
    // PostgreSQL, another path): the first end's callback is recorded once.
    insert(
        &h,
        NewJob {
            max_attempts: 1,
            ..new_job("twice")
        },
    )
    .await;
    let twice = claim(&h, 10).await;
    let twice = twice.iter().find(|c| c.id == "twice").unwrap();
    let r = h
        .store
        .job_finalize(vec![
            end(twice, Action::Complete { output: "1".into() }),
            end(twice, Action::Complete { output: "2".into() }),
        ])
        .await
        .unwrap();
    assert_eq!(
        r,
        [Finalized::Done(JobStatus::Completed), Finalized::Fenced]
    );
    assert_eq!(
        made("twice").await,
        [("on_success".into(), "twice-on-success".into(), task)]
    );
    let of = h
        .store
        .job_callback_of("twice-on-success")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (of.job_id.as_str(), of.callback_kind()),
        ("twice", "on_success")
    );
}

pub(super) async fn old_events_are_pruned(h: Harness) {
    setup(&h).await;
    insert(&h, new_job("a")).await;
    insert(&h, new_job("b")).await;
    h.clock.advance(1_000);
    let cutoff = h.store.now();
    insert(&h, new_job("c")).await;
    h.store.event_sequence().await.unwrap();
    assert_eq!(h.store.event_prune(cutoff, 1).await.unwrap(), 1);
    assert_eq!(h.store.event_prune(cutoff, 100).await.unwrap(), 1);
    assert_eq!(h.store.event_prune(cutoff, 100).await.unwrap(), 0);
    let events = events_of(&h, A).await;
    assert_eq!(events.iter().map(|e| e.seq).collect::<Vec<_>>(), [3]);
    let heads = h.store.event_heads(Some(A)).await.unwrap();
    assert_eq!((heads.seq, heads.first), (3, 3));
    // Numbers go on after a prune.
    insert(&h, new_job("d")).await;
    assert_eq!(events_of(&h, A).await.last().unwrap().seq, 4);
}

pub(super) async fn webhook_deliveries_are_made_once_and_retried(h: Harness) {
    setup(&h).await;
    let hook = |id: &str, tenant: &str| NewWebhook {
        id: id.into(),
        tenant: tenant.into(),
        url: "https://example.com/hook".into(),
        events: vec![EventType::Completed, EventType::Failed],
        secret: "0123456789abcdef".into(),
    };
    let w1 = h.store.webhook_insert(hook("w1", A)).await.unwrap();
    assert_eq!(w1.events, [EventType::Completed, EventType::Failed]);
    h.store.webhook_insert(hook("w2", A)).await.unwrap();
    h.store.webhook_insert(hook("wb", B)).await.unwrap();
    let mine = h.store.webhook_list(Some(A)).await.unwrap();
    assert_eq!(
        mine.iter().map(|w| w.id.as_str()).collect::<Vec<_>>(),
        ["w1", "w2"]
    );
    assert_eq!(h.store.webhook_list(None).await.unwrap().len(), 3);
    for i in 2..MAX_WEBHOOKS {
        h.store
            .webhook_insert(hook(&format!("more{i}"), A))
            .await
            .unwrap();
    }
    match h.store.webhook_insert(hook("one-too-many", A)).await {
        Err(StoreError::QuotaExceeded(e)) => assert_eq!(e.quota, "webhooks"),
        other => panic!("expected the webhooks quota, got {other:?}"),
    }
    // The cursor moves once from where it was: a second mover loses.
    assert_eq!(h.store.event_cursor("webhooks").await.unwrap(), None);
    let d = |w: &str, seq: u64| NewDelivery {
        webhook: w.into(),
        tenant: A.into(),
        seq,
        kind: EventType::Completed,
        body: format!(r#"{{"seq":{seq}}}"#),
    };
    assert!(h
        .store
        .delivery_insert(
            "webhooks",
            None,
            10,
            vec![d("w1", 1), d("w1", 2), d("w1", 3), d("w2", 1)]
        )
        .await
        .unwrap());
    assert!(!h
        .store
        .delivery_insert("webhooks", None, 10, vec![d("w1", 9)])
        .await
        .unwrap());
    assert!(!h
        .store
        .delivery_insert("webhooks", Some(5), 20, vec![d("w1", 9)])
        .await
        .unwrap());
    assert_eq!(h.store.event_cursor("webhooks").await.unwrap(), Some(10));
    // The webhooks with due deliveries; each one's taken apart, oldest
    // first, a few at a time.
    assert_eq!(
        h.store.delivery_due_webhooks(10).await.unwrap(),
        ["w1", "w2"]
    );
    let taken = h.store.delivery_take("w1", 2, 60_000).await.unwrap();
    let pairs: Vec<(&str, u64)> = taken.iter().map(|d| (d.webhook.as_str(), d.seq)).collect();
    assert_eq!(pairs, [("w1", 1), ("w1", 2)]);
    assert!(taken
        .iter()
        .all(|d| d.attempts == 0 && d.body.contains("seq")));
    let w2 = h.store.delivery_take("w2", 5, 60_000).await.unwrap();
    assert_eq!(w2.iter().map(|d| d.seq).collect::<Vec<_>>(), [1]);
    // Held: nobody takes them again before the hold ends.
    let more = h.store.delivery_take("w1", 10, 60_000).await.unwrap();
    assert_eq!(more.iter().map(|d| d.seq).collect::<Vec<_>>(), [3]);
    assert!(h
        .store
        .delivery_take("w1", 10, 60_000)
        .await
        .unwrap()
        .is_empty());
    assert!(h.store.delivery_due_webhooks(10).await.unwrap().is_empty());
    // Another tenant's webhook id takes nothing of these.
    assert!(h
        .store
        .delivery_take("wb", 10, 60_000)
        .await
        .unwrap()
        .is_empty());
    let now = h.store.now();
    let id_of = |w: &str, seq: u64| {
        taken
            .iter()
            .chain(&more)
            .chain(&w2)
            .find(|d| d.webhook == w && d.seq == seq)
            .unwrap()
            .id
    };
    h.store
        .delivery_record(vec![
            DeliveryTry {
                id: id_of("w1", 1),
                at: now,
                status: Some(200),
                error: None,
                next_at: None,
            },
            DeliveryTry {
                id: id_of("w1", 2),
                at: now,
                status: Some(500),
                error: Some("HTTP 500".into()),
                next_at: Some(now + 100),
            },
            DeliveryTry {
                id: id_of("w1", 3),
                at: now,
                status: None,
                error: Some("refused".into()),
                next_at: None,
            },
        ])
        .await
        .unwrap();
    assert_eq!(h.store.delivery_next_at().await.unwrap(), Some(now + 100));
    let list = h.store.delivery_list(A, "w1", None, 10).await.unwrap();
    let states: Vec<(u64, DeliveryStatus, u32, Option<u16>)> = list
        .iter()
        .map(|d| (d.seq, d.status, d.attempts, d.last_status))
        .collect();
    assert_eq!(
        states,
        [
            (3, DeliveryStatus::Dead, 1, None),
            (2, DeliveryStatus::Pending, 1, Some(500)),
            (1, DeliveryStatus::Delivered, 1, Some(200)),
        ]
    );
    assert_eq!(list[0].last_error.as_deref(), Some("refused"));
    // Paged, newest first; another tenant sees none of them.
    let page = h
        .store
        .delivery_list(A, "w1", Some(list[0].id), 1)
        .await
        .unwrap();
    assert_eq!(page[0].seq, 2);
    assert!(h
        .store
        .delivery_list(B, "w1", None, 10)
        .await
        .unwrap()
        .is_empty());
    // Due again after its backoff.
    h.clock.advance(100);
    assert_eq!(h.store.delivery_due_webhooks(10).await.unwrap(), ["w1"]);
    let again = h.store.delivery_take("w1", 10, 60_000).await.unwrap();
    assert_eq!(again.iter().map(|d| d.seq).collect::<Vec<_>>(), [2]);
    assert_eq!(again[0].attempts, 1);
    // Delivered and dead ones are pruned by age; a deleted webhook's with them.
    h.clock.advance(1_000);
    assert!(!h.store.webhook_delete(B, "w1").await.unwrap(), "not B's");
    assert!(h.store.webhook_delete(A, "w2").await.unwrap());
    assert!(!h.store.webhook_delete(A, "w2").await.unwrap());
    // A deleted webhook's pending delivery is never taken, even once due,
    // and the pruner deletes it (the delete itself leaves it: SQLite's
    // deleted some with the webhook, PostgreSQL's none).
    h.clock.advance(60_000);
    assert!(h
        .store
        .delivery_take("w2", 10, 60_000)
        .await
        .unwrap()
        .is_empty());
    let pruned = h.store.delivery_prune(h.store.now(), 100).await.unwrap();
    assert_eq!(pruned, 3, "w1's delivered and dead, w2's pending");
    let left = h.store.delivery_list(A, "w1", None, 10).await.unwrap();
    assert_eq!(left.iter().map(|d| d.seq).collect::<Vec<_>>(), [2]);
    assert!(h
        .store
        .delivery_list(A, "w2", None, 10)
        .await
        .unwrap()
        .is_empty());
}

/// A delivery is made due again on demand, whatever came of it; only by
/// its own tenant, and only through its own webhook.
pub(super) async fn a_delivery_is_redelivered_on_demand(h: Harness) {
    setup(&h).await;
    let hook = |id: &str, tenant: &str| NewWebhook {
        id: id.into(),
        tenant: tenant.into(),
        url: "https://example.com/hook".into(),
        events: vec![EventType::Failed],
        secret: "0123456789abcdef".into(),
    };
    h.store.webhook_insert(hook("w1", A)).await.unwrap();
    h.store.webhook_insert(hook("w2", A)).await.unwrap();
    let d = |seq: u64| NewDelivery {
        webhook: "w1".into(),
        tenant: A.into(),
        seq,
        kind: EventType::Failed,
        body: format!(r#"{{"seq":{seq}}}"#),
    };
    assert!(h
        .store
        .delivery_insert("webhooks", None, 2, vec![d(1), d(2)])
        .await
        .unwrap());
    let taken = h.store.delivery_take("w1", 10, 60_000).await.unwrap();
    let now = h.store.now();
    h.store
        .delivery_record(
            taken
                .iter()
                .map(|t| DeliveryTry {
                    id: t.id,
                    at: now,
                    status: None,
                    error: Some("refused".into()),
                    next_at: None,
                })
                .collect(),
        )
        .await
        .unwrap();
    let dead = h.store.delivery_list(A, "w1", None, 10).await.unwrap();
    assert!(dead.iter().all(|d| d.status == DeliveryStatus::Dead));
    assert!(h.store.delivery_due_webhooks(10).await.unwrap().is_empty());
    let one = dead.iter().find(|d| d.seq == 1).unwrap().id;
    // Not another tenant's, not through another webhook, not one unknown.
    assert!(!h.store.delivery_redeliver(B, "w1", one).await.unwrap());
    assert!(!h.store.delivery_redeliver(A, "w2", one).await.unwrap());
    assert!(!h
        .store
        .delivery_redeliver(A, "w1", one + 1000)
        .await
        .unwrap());
    assert!(h.store.delivery_due_webhooks(10).await.unwrap().is_empty());
    // Its own: pending and due now, its tries still counted.
    assert!(h.store.delivery_redeliver(A, "w1", one).await.unwrap());
    let list = h.store.delivery_list(A, "w1", None, 10).await.unwrap();
    let states: Vec<(u64, DeliveryStatus, u32)> =
        list.iter().map(|d| (d.seq, d.status, d.attempts)).collect();
    assert_eq!(
        states,
        [
            (2, DeliveryStatus::Dead, 1),
            (1, DeliveryStatus::Pending, 1)
        ]
    );
    assert_eq!(h.store.delivery_due_webhooks(10).await.unwrap(), ["w1"]);
    let again = h.store.delivery_take("w1", 10, 60_000).await.unwrap();
    assert_eq!(again.iter().map(|d| d.seq).collect::<Vec<_>>(), [1]);
}
