//! Conformance cases of what is written before a job runs: the registry's
//! records, inserts (one, a batch, many at once), idempotency and unique
//! keys.

use super::*;

pub(super) async fn registry_records(h: Harness) {
    setup(&h).await;
    assert!(matches!(
        h.store.tenant_insert(A).await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(h.store.tenant_get(A).await.unwrap().unwrap().name, A);
    assert!(h.store.tenant_get("nobody").await.unwrap().is_none());

    h.store
        .token_insert(NewToken {
            id: "tok_1".into(),
            hash: "h1".into(),
            tenant: Some(A.into()),
            scopes: vec![Scope::JobsRead, Scope::JobsQueue],
            expires_at: None,
        })
        .await
        .unwrap();
    let t = h.store.token_get("h1").await.unwrap().unwrap();
    assert_eq!(t.tenant.as_deref(), Some(A));
    assert_eq!(t.scopes, vec![Scope::JobsRead, Scope::JobsQueue]);
    assert!(!t.admin);
    assert!(!h.store.token_admin_exists().await.unwrap());
    for hash in ["admin1", "admin2"] {
        h.store
            .token_insert(NewToken {
                id: format!("tok_{hash}"),
                hash: hash.into(),
                tenant: None,
                scopes: vec![],
                expires_at: None,
            })
            .await
            .unwrap();
    }
    assert!(
        h.store.token_get("admin1").await.unwrap().is_none(),
        "a new admin token replaces the old"
    );
    assert!(h.store.token_get("admin2").await.unwrap().unwrap().admin);

    let comp = |tenant: &str| NewComponent {
        tenant: tenant.into(),
        digest: DIGEST.into(),
        abi: "task".into(),
        bytes: vec![0, 97, 115, 109],
    };
    let (c, created) = h.store.component_insert(comp(A)).await.unwrap();
    assert!(created);
    assert_eq!(c.size, 4);
    let (_, again) = h.store.component_insert(comp(A)).await.unwrap();
    assert!(!again, "the same bytes twice are one component");
    assert!(
        h.store.component_get(B, DIGEST).await.unwrap().is_none(),
        "B has not uploaded it"
    );
    assert!(h.store.component_insert(comp(B)).await.unwrap().1);
    assert_eq!(
        h.store.component_bytes(DIGEST).await.unwrap().unwrap(),
        vec![0, 97, 115, 109]
    );

    for spec in ["v1", "v2"] {
        h.store
            .task_insert(NewTask {
                tenant: A.into(),
                name: "t".into(),
                digest: DIGEST.into(),
                spec: format!("{{\"s\":\"{spec}\"}}"),
                rollout: None,
            })
            .await
            .unwrap();
    }
    let newest = h.store.task_get(A, "t", None).await.unwrap().unwrap();
    assert_eq!(newest.version, 2);
    assert_eq!(
        h.store
            .task_get(A, "t", Some(1))
            .await
            .unwrap()
            .unwrap()
            .spec,
        "{\"s\":\"v1\"}"
    );
    assert_eq!(h.store.task_versions(A, "t").await.unwrap().len(), 2);
    assert_eq!(h.store.task_list(Some(A)).await.unwrap().len(), 1);
    assert!(
        h.store.task_get(B, "t", None).await.unwrap().is_none(),
        "tasks are per tenant"
    );
}

pub(super) async fn insert_get_and_list(h: Harness) {
    setup(&h).await;
    for i in 0..5 {
        insert(&h, new_job(&format!("job{i}"))).await;
    }
    let j = get(&h, "job3").await;
    assert_eq!(j.status, JobStatus::Queued);
    assert_eq!(j.input, r#"{"n":1}"#);
    assert_eq!(j.attempts, 0);
    assert_eq!(j.max_attempts, 3);
    assert_eq!(j.run_at, h.clock.now());
    assert_eq!(j.deadline_at, None, "no deadline was asked for");
    // (B's, so that A's list below is only A's five.)
    let d = insert(
        &h,
        NewJob {
            deadline_ms: Some(5_000),
            tenant: B.into(),
            ..new_job("deadline")
        },
    )
    .await;
    assert_eq!(d.deadline_at, Some(h.clock.now() + 5_000));
    let stored = h.store.job_get(B, "deadline").await.unwrap().unwrap();
    assert_eq!(stored.deadline_at, d.deadline_at);
    assert!(
        h.store.job_get(B, "job3").await.unwrap().is_none(),
        "B cannot see A's job"
    );

    let page = |before: Option<String>| JobQuery {
        tenant: Some(A.into()),
        limit: 2,
        before,
        max_bytes: usize::MAX,
        ..JobQuery::default()
    };
    let p1 = h.store.job_list(page(None)).await.unwrap().jobs;
    assert_eq!(
        p1.iter().map(|j| j.id.as_str()).collect::<Vec<_>>(),
        ["job4", "job3"]
    );
    let p2 = h
        .store
        .job_list(page(Some("job3".into())))
        .await
        .unwrap()
        .jobs;
    assert_eq!(
        p2.iter().map(|j| j.id.as_str()).collect::<Vec<_>>(),
        ["job2", "job1"]
    );
    let filtered = h
        .store
        .job_list(JobQuery {
            tenant: Some(A.into()),
            status: Some(JobStatus::Completed),
            limit: 10,
            max_bytes: usize::MAX,
            ..JobQuery::default()
        })
        .await
        .unwrap();
    assert!(filtered.jobs.is_empty());
    let other = h
        .store
        .job_list(JobQuery {
            tenant: Some(B.into()),
            limit: 10,
            max_bytes: usize::MAX,
            ..JobQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(
        other.jobs.iter().map(|j| j.id.as_str()).collect::<Vec<_>>(),
        ["deadline"],
        "B lists only its own job, none of A's"
    );
    // Every tenant's (the admin's view), newest first, filtered and paged
    // as one tenant's is.
    let every = |before: Option<String>, limit| JobQuery {
        tenant: None,
        limit,
        before,
        max_bytes: usize::MAX,
        ..JobQuery::default()
    };
    let all = h.store.job_list(every(None, 10)).await.unwrap().jobs;
    let mut ids: Vec<(&str, &str)> = all
        .iter()
        .map(|j| (j.tenant.as_str(), j.id.as_str()))
        .collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        [
            (A, "job0"),
            (A, "job1"),
            (A, "job2"),
            (A, "job3"),
            (A, "job4"),
            (B, "deadline")
        ]
    );
    assert!(all.windows(2).all(|w| w[0].id > w[1].id), "newest first");
    let first = h.store.job_list(every(None, 2)).await.unwrap().jobs;
    let rest = h
        .store
        .job_list(every(Some(first[1].id.clone()), 10))
        .await
        .unwrap()
        .jobs;
    assert_eq!(first.len() + rest.len(), all.len(), "paged without a gap");
    let failed = h
        .store
        .job_list(JobQuery {
            status: Some(JobStatus::Completed),
            ..every(None, 10)
        })
        .await
        .unwrap();
    assert!(failed.jobs.is_empty());
}

/// Single-job enqueues sent at once (a backend may commit them together):
/// each gets its own answer, a taken id is refused alone, a tenant's quota
/// refuses only what passes it, and every accepted job is stored once.
pub(super) async fn many_enqueues_at_once_each_get_their_own_answer(h: Harness) {
    setup(&h).await;
    insert(&h, new_job("taken")).await;
    super::tenants::put(
        &h,
        B,
        None,
        crate::quota::Quotas {
            max_queued: Some(5),
            ..crate::quota::Quotas::default()
        },
    )
    .await;
    let mut calls = Vec::new();
    for i in 0..64 {
        let store = h.store.clone();
        let job = match i {
            0 => new_job("taken"),
            i if i % 4 == 0 => super::tenants::job_of(B, &format!("b{i}")),
            i => new_job(&format!("m{i}")),
        };
        calls.push(tokio::spawn(async move {
            store.job_insert(vec![job]).await.unwrap().pop().unwrap()
        }));
    }
    let mut b_ok = 0;
    for (i, call) in calls.into_iter().enumerate() {
        let r = call.await.unwrap();
        match (i, r) {
            (0, Err(StoreError::Conflict(_))) => {}
            (i, Ok(Inserted::Created(j))) if i % 4 == 0 => {
                assert_eq!(j.id, format!("b{i}"));
                b_ok += 1;
            }
            (i, Err(StoreError::QuotaExceeded(_))) if i % 4 == 0 => {}
            (i, Ok(Inserted::Created(j))) => assert_eq!(j.id, format!("m{i}")),
            (i, other) => panic!("enqueue {i}: {other:?}"),
        }
    }
    // Checked against a count read as the enqueues commit, B's quota may
    // be passed by enqueues in flight together, never by others.
    assert!(b_ok >= 5, "B had room for five: {b_ok}");
    let counts = h.store.job_counts().await.unwrap();
    let queued = counts
        .iter()
        .find(|(s, _)| *s == JobStatus::Queued)
        .map_or(0, |c| c.1);
    assert_eq!(queued, 1 + 48 + b_ok, "each accepted job once: {counts:?}");
}

pub(super) async fn one_refused_insert_does_not_undo_the_batch(h: Harness) {
    setup(&h).await;
    let results = h
        .store
        .job_insert(vec![new_job("x1"), new_job("x1"), new_job("x2")])
        .await
        .unwrap();
    assert!(matches!(results[0], Ok(Inserted::Created(_))));
    assert!(matches!(results[1], Err(StoreError::Conflict(_))));
    assert!(matches!(results[2], Ok(Inserted::Created(_))));
    get(&h, "x2").await;
    // A batch with an id taken before it (a backend that writes a batch in
    // one statement must still answer each job on its own).
    let results = h
        .store
        .job_insert(vec![new_job("x3"), new_job("x2"), new_job("x4")])
        .await
        .unwrap();
    assert!(matches!(results[0], Ok(Inserted::Created(_))));
    assert!(matches!(results[1], Err(StoreError::Conflict(_))));
    assert!(matches!(results[2], Ok(Inserted::Created(_))));
    get(&h, "x4").await;
    let plain = h
        .store
        .job_insert(vec![new_job("x5"), new_job("x6")])
        .await
        .unwrap();
    for (r, id) in plain.iter().zip(["x5", "x6"]) {
        match r {
            Ok(Inserted::Created(j)) => {
                assert_eq!(j.id, id);
                assert_eq!(j.status, JobStatus::Queued);
                assert_eq!(j.created_at, h.clock.now());
            }
            other => panic!("{other:?}"),
        }
    }
}

/// Jobs of one batch that continue traces keep each its own, whichever
/// way the backend writes the batch, and a job beside them none.
pub(super) async fn a_batch_keeps_each_jobs_trace(h: Harness) {
    setup(&h).await;
    let client =
        crate::otel::TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
            .unwrap();
    let traced = |id: &str| NewJob {
        traceparent: crate::otel::TraceParent::stored_for(id, Some(&client)),
        ..new_job(id)
    };
    let batch = vec![traced("t1"), new_job("t2"), traced("t3")];
    let want: Vec<Option<String>> = batch
        .iter()
        .map(|j| j.traceparent.as_ref().map(|t| t.to_string()))
        .collect();
    assert_ne!(want[0], want[2], "each job's enqueue span is its own");
    let results = h.store.job_insert(batch).await.unwrap();
    for ((r, id), want) in results.iter().zip(["t1", "t2", "t3"]).zip(&want) {
        match r {
            Ok(Inserted::Created(j)) => assert_eq!(&j.traceparent, want, "{id}"),
            other => panic!("{id}: {other:?}"),
        }
        assert_eq!(&get(&h, id).await.traceparent, want, "{id} read back");
    }
}

pub(super) async fn idempotency_keys(h: Harness) {
    setup(&h).await;
    let with = |id: &str, tenant: &str, hash: &str| NewJob {
        tenant: tenant.into(),
        idempotency: Some(Idempotency {
            key: "k1".into(),
            body_hash: hash.into(),
        }),
        ..new_job(id)
    };
    insert(&h, with("first", A, "h")).await;
    match h
        .store
        .job_insert(vec![with("second", A, "h")])
        .await
        .unwrap()
        .pop()
        .unwrap()
    {
        Ok(Inserted::Existing(j)) => assert_eq!(j.id, "first"),
        other => panic!("same key and body: the same job, got {other:?}"),
    }
    let other_body = h
        .store
        .job_insert(vec![with("third", A, "other")])
        .await
        .unwrap()
        .pop()
        .unwrap();
    assert!(
        matches!(other_body, Err(StoreError::Conflict(_))),
        "{other_body:?}"
    );
    // Keys are per tenant.
    let b = h
        .store
        .job_insert(vec![with("fourth", B, "h")])
        .await
        .unwrap()
        .pop()
        .unwrap();
    assert!(matches!(b, Ok(Inserted::Created(_))), "{b:?}");
}

pub(super) async fn unique_keys_admit_one_unfinished_job(h: Harness) {
    setup(&h).await;
    let with = |id: &str| NewJob {
        unique_key: Some("u".into()),
        ..new_job(id)
    };
    insert(&h, with("u1")).await;
    let dup = h
        .store
        .job_insert(vec![with("u2")])
        .await
        .unwrap()
        .pop()
        .unwrap();
    assert!(matches!(dup, Err(StoreError::Conflict(_))), "{dup:?}");
    let c = claim(&h, 1).await.pop().unwrap();
    finalize(
        &h,
        &c,
        Action::Complete {
            output: "{}".into(),
        },
    )
    .await;
    insert(&h, with("u3")).await;
}

/// `on_conflict` and `reuse`: what a held key answers, and whether the key
/// of finished jobs may be used again.
pub(super) async fn unique_keys_follow_their_rules(h: Harness) {
    setup(&h).await;
    let keyed = |id: &str, key: &str, on_conflict: OnConflict, reuse: Reuse| NewJob {
        unique_key: Some(key.into()),
        on_conflict,
        reuse,
        ..new_job(id)
    };
    let one = |job: NewJob| {
        let store = h.store.clone();
        async move { store.job_insert(vec![job]).await.unwrap().pop().unwrap() }
    };
    // use_existing answers the unfinished holder, and writes nothing.
    insert(&h, keyed("a1", "a", OnConflict::Error, Reuse::Allow)).await;
    match one(keyed("a2", "a", OnConflict::UseExisting, Reuse::Allow)).await {
        Ok(Inserted::Existing(j)) => assert_eq!(j.id, "a1"),
        other => panic!("expected the holder, got {other:?}"),
    }
    let held = one(keyed("a3", "a", OnConflict::Error, Reuse::Allow)).await;
    assert!(
        matches!(&held, Err(StoreError::Conflict(m)) if m.contains("use_existing")),
        "{held:?}"
    );
    assert!(h.store.job_get(A, "a2").await.unwrap().is_none());

    // Finish a1 (completed) and, for key "f", f1 (failed).
    insert(&h, keyed("f1", "f", OnConflict::Error, Reuse::Allow)).await;
    for c in claim(&h, 10).await {
        let action = if c.id == "a1" {
            Action::Complete { output: "1".into() }
        } else {
            Action::Fail { error: failure() }
        };
        finalize(&h, &c, action).await;
    }
    // allow_failed_only: refused after a completion, taken after a failure.
    let r = one(keyed("a4", "a", OnConflict::Error, Reuse::AllowFailedOnly)).await;
    assert!(
        matches!(&r, Err(StoreError::Conflict(m)) if m.contains("allow_failed_only")),
        "{r:?}"
    );
    insert(
        &h,
        keyed("f2", "f", OnConflict::Error, Reuse::AllowFailedOnly),
    )
    .await;
    // reject: refused after any finished job, even with the holder gone.
    let r = one(keyed("f3", "f", OnConflict::UseExisting, Reuse::Reject)).await;
    match r {
        // f2 is unfinished: use_existing answers it first.
        Ok(Inserted::Existing(j)) => assert_eq!(j.id, "f2"),
        other => panic!("expected f2, got {other:?}"),
    }
    let r = one(keyed("a5", "a", OnConflict::Error, Reuse::Reject)).await;
    assert!(
        matches!(&r, Err(StoreError::Conflict(m)) if m.contains("reject")),
        "{r:?}"
    );
    // allow (the default) takes a finished key; a new key is always free.
    insert(&h, keyed("a6", "a", OnConflict::Error, Reuse::Allow)).await;
    insert(&h, keyed("n1", "new", OnConflict::Error, Reuse::Reject)).await;
    // Another tenant's keys are its own.
    insert(
        &h,
        NewJob {
            tenant: B.into(),
            ..keyed("b1", "a", OnConflict::Error, Reuse::Reject)
        },
    )
    .await;
}

/// Many enqueues of one unique key at once with `use_existing`: one job,
/// and every answer is that job.
pub(super) async fn concurrent_use_existing_enqueues_make_one_job(h: Harness) {
    setup(&h).await;
    let mut tasks = Vec::new();
    for i in 0..50 {
        let store = h.store.clone();
        let job = NewJob {
            unique_key: Some("once".into()),
            on_conflict: OnConflict::UseExisting,
            ..new_job(&format!("u{i:02}"))
        };
        tasks.push(tokio::spawn(
            async move { store.job_insert(vec![job]).await },
        ));
    }
    let mut ids = std::collections::HashSet::new();
    let mut created = 0;
    for t in tasks {
        match t.await.unwrap().unwrap().pop().unwrap() {
            Ok(Inserted::Created(j)) => {
                created += 1;
                ids.insert(j.id);
            }
            Ok(Inserted::Existing(j)) => {
                ids.insert(j.id);
            }
            Err(e) => panic!("an enqueue was refused: {e}"),
        }
    }
    assert_eq!((created, ids.len()), (1, 1), "{ids:?}");
    assert_eq!(
        h.store.job_counts().await.unwrap(),
        vec![(JobStatus::Queued, 1)]
    );
}

pub(super) async fn queues_are_listed_with_their_depths(h: Harness) {
    setup(&h).await;
    insert(&h, new_job("d1")).await;
    h.clock.advance(10);
    insert(&h, new_job("d2")).await;
    insert(
        &h,
        NewJob {
            queue: "mail".into(),
            run_at: RunAt::After(60_000),
            ..new_job("m1")
        },
    )
    .await;
    insert(&h, job_of(B, "b1")).await;
    let c = claim(&h, 1).await.pop().unwrap();
    assert_eq!(c.id, "d1");
    let queues = h.store.queue_list(Some(A)).await.unwrap();
    let names: Vec<&str> = queues.iter().map(|q| q.queue.as_str()).collect();
    assert_eq!(names, ["default", "mail"], "A's own, by name");
    let count = |q: &QueueDepth, s: JobStatus| q.counts.iter().find(|c| c.0 == s).unwrap().1;
    assert_eq!(queues[0].counts.len(), JobStatus::ALL.len());
    assert_eq!(count(&queues[0], JobStatus::Queued), 1);
    assert_eq!(count(&queues[0], JobStatus::Running), 1);
    assert_eq!(count(&queues[0], JobStatus::Failed), 0);
    let d2 = get(&h, "d2").await;
    assert_eq!(queues[0].oldest_due_run_at, Some(d2.run_at));
    // A job not due yet is queued, but no line has waited for it.
    assert_eq!(count(&queues[1], JobStatus::Queued), 1);
    assert_eq!(queues[1].oldest_due_run_at, None);
    assert!(h.store.queue_list(Some("nobody")).await.unwrap().is_empty());
    // Every tenant's, by tenant and name; a paused queue with no job is
    // listed, under its tenant.
    h.store.queue_pause(B, "held").await.unwrap();
    let every = h.store.queue_list(None).await.unwrap();
    let named: Vec<(&str, &str, bool)> = every
        .iter()
        .map(|q| (q.tenant.as_str(), q.queue.as_str(), q.paused))
        .collect();
    assert_eq!(
        named,
        [
            (A, "default", false),
            (A, "mail", false),
            (B, "default", false),
            (B, "held", true)
        ]
    );
    assert_eq!(every[..2], queues[..], "A's rows as A's own list has them");
    assert_eq!(
        c.due_at,
        get(&h, "d1").await.run_at,
        "a claim says when its job was due"
    );
    // Every tenant's jobs not ended, by queue and status (the metrics').
    assert_eq!(
        h.store.job_depths().await.unwrap(),
        vec![
            ("default".to_owned(), JobStatus::Queued, 2),
            ("default".to_owned(), JobStatus::Running, 1),
            ("mail".to_owned(), JobStatus::Queued, 1),
        ]
    );
}

/// A job's callback depth is kept as inserted, alone or in a batch, and
/// a claim reads it back (its callbacks are one deeper).
pub(super) async fn callback_depth_is_kept(h: Harness) {
    setup(&h).await;
    let deep = |id: &str, depth: u32| NewJob {
        callback_depth: depth,
        ..new_job(id)
    };
    insert(&h, deep("d-one", 3)).await;
    for r in h
        .store
        .job_insert(vec![deep("d-two", 16), new_job("d-zero")])
        .await
        .unwrap()
    {
        assert!(matches!(r, Ok(Inserted::Created(_))), "{r:?}");
    }
    let mut depths: Vec<(String, u32)> = claim(&h, 10)
        .await
        .into_iter()
        .map(|c| (c.id, c.callback_depth))
        .collect();
    depths.sort();
    assert_eq!(
        depths,
        [
            ("d-one".to_owned(), 3),
            ("d-two".to_owned(), 16),
            ("d-zero".to_owned(), 0)
        ]
    );
}
