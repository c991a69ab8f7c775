//! Conformance cases of what holds a queued job back: a paused queue's jobs
//! are never claimed, by whatever path they came back to the queue; a job
//! still queued past its `expire_after_ms` fails `expired`; a concurrency
//! key runs at most its limit of jobs at once.

use super::*;

fn on(queue: &str, id: &str) -> NewJob {
    NewJob {
        queue: queue.into(),
        ..new_job(id)
    }
}

fn count(q: &QueueDepth, s: JobStatus) -> u64 {
    q.counts.iter().find(|c| c.0 == s).map_or(0, |c| c.1)
}

pub(super) async fn a_paused_queue_is_not_claimed(h: Harness) {
    setup(&h).await;
    insert(&h, on("mail", "m1")).await;
    insert(&h, on("mail", "m2")).await;
    insert(&h, on("default", "d1")).await;
    assert!(h.store.queue_pause(A, "mail").await.unwrap());
    assert!(
        !h.store.queue_pause(A, "mail").await.unwrap(),
        "paused already"
    );
    // Another tenant's queue of the same name is its own.
    insert(
        &h,
        NewJob {
            queue: "mail".into(),
            ..job_of(B, "b1")
        },
    )
    .await;
    // Enqueue still works, and the job waits with the others.
    insert(&h, on("mail", "m3")).await;
    let claimed = claim(&h, 10).await;
    let mut got = ids(&claimed);
    got.sort_unstable();
    assert_eq!(got, ["b1", "d1"], "only the queues not paused");
    assert!(claim(&h, 10).await.is_empty());
    // Still queued, as the API shows them, and the queue says it is paused.
    assert_eq!(get(&h, "m1").await.status, JobStatus::Queued);
    let queues = h.store.queue_list(Some(A)).await.unwrap();
    let mail = queues.iter().find(|q| q.queue == "mail").unwrap();
    assert!(mail.paused);
    assert_eq!(count(mail, JobStatus::Queued), 3);
    assert!(!queues.iter().find(|q| q.queue == "default").unwrap().paused);
    // A queue with no jobs may be paused ahead, and is listed.
    h.store.queue_pause(A, "later").await.unwrap();
    let queues = h.store.queue_list(Some(A)).await.unwrap();
    let names: Vec<&str> = queues.iter().map(|q| q.queue.as_str()).collect();
    assert_eq!(names, ["default", "later", "mail"]);
    assert!(queues[1].paused && queues[1].counts.iter().all(|c| c.1 == 0));
    // Run-now puts a parked job first, for when its queue resumes.
    h.store.job_run_now(A, "m3").await.unwrap();
    assert!(claim(&h, 10).await.is_empty());
    assert!(h.store.queue_resume(A, "mail").await.unwrap());
    assert!(
        !h.store.queue_resume(A, "mail").await.unwrap(),
        "not paused"
    );
    assert_eq!(ids(&claim(&h, 10).await), ["m3", "m1", "m2"]);
    assert!(!h.store.queue_list(Some(A)).await.unwrap()[2].paused);
}

pub(super) async fn jobs_back_in_a_paused_queue_stay_parked(h: Harness) {
    setup(&h).await;
    for id in ["r", "w", "f", "s"] {
        insert(&h, on("mail", id)).await;
    }
    let claimed = claim(&h, 10).await;
    assert_eq!(claimed.len(), 4);
    h.store.queue_pause(A, "mail").await.unwrap();
    let by = |id: &str| claimed.iter().find(|c| c.id == id).unwrap();
    // A retry, a snooze and a wait come back to the queue while it is paused.
    let retry = Action::Retry {
        delay_ms: 0,
        error: failure(),
    };
    finalize(&h, by("r"), retry).await;
    finalize(&h, by("s"), Action::Snooze { delay_ms: 0 }).await;
    let wait = Action::Wait {
        waiting_for: "{}".into(),
    };
    finalize(&h, by("w"), wait).await;
    h.store.job_resume(A, "w", None).await.unwrap();
    finalize(&h, by("f"), Action::Fail { error: failure() }).await;
    redrive_one(&h, "f", 1).await;
    h.clock.advance(1_000);
    assert!(claim(&h, 10).await.is_empty(), "all four are parked");
    // A parked job can be cancelled.
    let cancelled = h.store.job_cancel(A, "s").await.unwrap();
    assert!(matches!(cancelled, CancelOutcome::Cancelled(_)));
    h.store.queue_resume(A, "mail").await.unwrap();
    let mut got = ids(&claim(&h, 10).await)
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    got.sort_unstable();
    assert_eq!(got, ["f", "r", "w"]);
    assert_eq!(
        h.store.queue_tidy().await.unwrap(),
        0,
        "nothing left parked"
    );
}

pub(super) async fn a_scheduled_job_of_a_paused_queue_waits_for_the_resume(h: Harness) {
    setup(&h).await;
    insert(
        &h,
        NewJob {
            run_at: RunAt::After(5_000),
            ..on("mail", "later")
        },
    )
    .await;
    h.store.queue_pause(A, "mail").await.unwrap();
    h.clock.advance(10_000);
    assert!(claim(&h, 10).await.is_empty());
    h.store.queue_resume(A, "mail").await.unwrap();
    assert_eq!(ids(&claim(&h, 10).await), ["later"]);
}

pub(super) async fn queued_jobs_expire(h: Harness) {
    setup(&h).await;
    let expiring = |id: &str| NewJob {
        expire_after_ms: Some(1_000),
        ..new_job(id)
    };
    insert(&h, expiring("gone")).await;
    insert(
        &h,
        NewJob {
            run_at: RunAt::After(5_000),
            ..expiring("later")
        },
    )
    .await;
    insert(&h, expiring("runs")).await;
    insert(&h, new_job("plain")).await;
    assert_eq!(get(&h, "gone").await.expire_after_ms, Some(1_000));
    let c = claim(&h, 1).await.pop().unwrap();
    assert_eq!(c.id, "gone");
    // A job that started is not expired: its time ran out while queued.
    finalize(&h, &c, Action::Complete { output: "1".into() }).await;
    h.clock.advance(999);
    assert_eq!(expire_all(&h).await, 0, "not yet");
    h.clock.advance(1);
    // Past it, a claim passes it over (the keeper may not have run yet).
    let c = claim(&h, 10).await;
    assert_eq!(ids(&c), ["plain"]);
    // The keeper reads what expired, builds their tasks' `on_fail` jobs,
    // then fails them with those, each once.
    let expiring = h.store.job_expiring(100).await.unwrap();
    assert_eq!(
        expiring,
        [ExpiringJob {
            id: "runs".into(),
            tenant: A.into(),
            task: "t".into(),
            task_version: 1,
            queue: "default".into(),
            attempts: 0,
        }]
    );
    let on_fail = NewJob::plain("runs-failed", A, task_ref(), r#"{"of":"runs"}"#);
    let with = |id: &str| Expire {
        id: id.into(),
        on_fail: Some(NewJob {
            id: format!("{}-again", on_fail.id),
            ..on_fail.clone()
        }),
    };
    assert_eq!(
        h.store
            .job_expire(vec![Expire {
                id: "runs".into(),
                on_fail: Some(on_fail.clone()),
            }])
            .await
            .unwrap(),
        1
    );
    assert_eq!(get(&h, "runs-failed").await.status, JobStatus::Queued);
    // Recorded as the expired job's on_fail, with the expiry.
    let of = h
        .store
        .job_callback_of("runs-failed")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (of.job_id.as_str(), of.callback_kind(), of.kind),
        ("runs", "on_fail", CallKind::Callback)
    );
    // Expired already, and one never past its time ("plain"): neither
    // fails, and no callback comes of them.
    assert_eq!(
        h.store
            .job_expire(vec![with("runs"), with("plain")])
            .await
            .unwrap(),
        0
    );
    assert!(h
        .store
        .job_get(A, "runs-failed-again")
        .await
        .unwrap()
        .is_none());
    assert!(h
        .store
        .job_callback_of("runs-failed-again")
        .await
        .unwrap()
        .is_none());
    assert_eq!(
        h.store.job_calls("runs").await.unwrap().len(),
        1,
        "one callback recorded"
    );
    let runs = get(&h, "runs").await;
    assert_eq!(runs.status, JobStatus::Failed);
    let error = runs.error.unwrap();
    assert_eq!(
        (error.kind, error.code.as_str()),
        (ErrorKind::Expired, "expired")
    );
    assert_eq!(runs.finished_at, Some(h.store.now()));
    assert_eq!(runs.attempts, 0, "it never ran");
    // Counted as failed, no longer queued (its callback is).
    let usage = h.store.tenant_usage(A).await.unwrap();
    assert_eq!((usage.jobs.queued, usage.jobs.running), (2, 1));
    // The expiry counts from when the job came due.
    h.clock.advance(4_500);
    assert_eq!(expire_all(&h).await, 0);
    h.clock.advance(500);
    assert_eq!(expire_all(&h).await, 1);
    assert_eq!(get(&h, "later").await.status, JobStatus::Failed);
    // An expired job can be re-driven: due now, with the time again.
    let r = redrive_one(&h, "later", 1).await;
    assert_eq!(r.status, JobStatus::Queued);
    assert_eq!(ids(&claim(&h, 10).await), ["runs-failed", "later"]);
}

pub(super) async fn a_concurrency_key_runs_up_to_its_limit(h: Harness) {
    setup(&h).await;
    let keyed = |id: &str, limit: Option<u32>| NewJob {
        concurrency_key: Some("acct".into()),
        concurrency_limit: limit,
        ..new_job(id)
    };
    for n in 1..=5 {
        insert(&h, keyed(&format!("k{n}"), Some(3))).await;
    }
    let first = claim_whole(&h, 10).await;
    assert_eq!(
        ids(&first.jobs),
        ["k1", "k2", "k3"],
        "three of the key at once"
    );
    assert!(first.passed_over, "it passed k4 and k5 over");
    assert!(claim(&h, 10).await.is_empty(), "the key is full");
    assert!(matches!(
        h.store.job_run_now(A, "k4").await,
        Err(StoreError::Conflict(_))
    ));
    // One ends: one more starts, in the slot it freed.
    let ended = &first.jobs[1];
    finalize(&h, ended, Action::Complete { output: "1".into() }).await;
    assert_eq!(ids(&claim(&h, 10).await), ["k4"]);
    assert!(claim(&h, 10).await.is_empty());
    // Claims one at a time fill the slots the same way.
    for c in [&first.jobs[0], &first.jobs[2]] {
        finalize(&h, c, Action::Complete { output: "1".into() }).await;
    }
    assert_eq!(ids(&claim(&h, 1).await), ["k5"]);
    // A job of the key whose own limit is 1 waits while any runs.
    insert(&h, keyed("one", None)).await;
    assert!(claim(&h, 10).await.is_empty(), "two of the key run");
}
