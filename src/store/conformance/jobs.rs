//! Conformance cases of a job's life once it is queued: claim, finalize,
//! retry, cancel, heartbeat, rescue, concurrency keys, fallbacks, run now,
//! transactions.

use super::*;

pub(super) async fn claims_follow_priority_time_and_queues(h: Harness) {
    setup(&h).await;
    let now = h.clock.now();
    insert(
        &h,
        NewJob {
            priority: 5,
            ..new_job("low")
        },
    )
    .await;
    insert(
        &h,
        NewJob {
            priority: -5,
            ..new_job("high")
        },
    )
    .await;
    insert(
        &h,
        NewJob {
            run_at: RunAt::After(10_000),
            priority: -10,
            ..new_job("later")
        },
    )
    .await;
    insert(
        &h,
        NewJob {
            queue: "other".into(),
            ..new_job("elsewhere")
        },
    )
    .await;
    let only_other = h
        .store
        .job_claim(ClaimParams {
            owner: "r1".into(),
            queues: Some(vec!["other".into()]),
            limit: 10,
            lease_ms: 30_000,
            only_tenants: None,
            begin_each: u32::MAX,
            caps: Default::default(),
        })
        .await
        .unwrap()
        .jobs;
    assert_eq!(ids(&only_other), ["elsewhere"]);
    let got = claim(&h, 1).await;
    assert_eq!(got[0].id, "high", "lower priority numbers run first");
    assert_eq!(got[0].attempt, 1);
    assert_eq!(got[0].attempts, 1);
    assert_eq!(ids(&claim(&h, 10).await), ["low"]);
    assert!(claim(&h, 10).await.is_empty(), "`later` is not due");
    assert_eq!(
        h.store.job_next_run_at(0).await.unwrap(),
        Some(now + 10_000)
    );
    insert(
        &h,
        NewJob {
            run_at: RunAt::At(now + 5_000),
            priority: 7,
            ..new_job("sooner")
        },
    )
    .await;
    assert_eq!(
        h.store.job_next_run_at(0).await.unwrap(),
        Some(now + 5_000),
        "the next due time is the earliest of every priority"
    );
    h.clock.advance(10_000);
    assert_eq!(ids(&claim(&h, 10).await), ["later", "sooner"]);
    assert_eq!(h.store.job_next_run_at(0).await.unwrap(), None);
    let j = get(&h, "later").await;
    assert_eq!(j.status, JobStatus::Running);
    assert_eq!(j.started_at, Some(h.clock.now()));
}

/// One batch of ends of every shape (a backend may write them together):
/// each lands as it would alone, a pending cancel turns only the ends it
/// may, a forged token and a job named twice are fenced.
pub(super) async fn a_batch_of_ends_lands_each_as_it_would_alone(h: Harness) {
    setup(&h).await;
    for i in 0..6 {
        insert(&h, new_job(&format!("b{i}"))).await;
    }
    let got = claim(&h, 6).await;
    let c = |id: &str| got.iter().find(|c| c.id == id).unwrap().clone();
    // Asked to cancel while they run: the retry gives way, the completion
    // does not.
    h.store.job_cancel(A, "b2").await.unwrap();
    h.store.job_cancel(A, "b3").await.unwrap();
    let end = |c: &ClaimedJob, action: Action| Finalize {
        id: c.id.clone(),
        tenant: c.tenant.clone(),
        lease_token: c.lease_token.clone(),
        attempt: attempt(c, "other", None),
        action,
        usage: None,
        callbacks: None,
        names: c.names(),
        steps: Vec::new(),
        close_children: None,
    };
    let forged = ClaimedJob {
        lease_token: "not-it".into(),
        ..c("b4")
    };
    let done = |o: &str| Action::Complete { output: o.into() };
    let retry = Action::Retry {
        delay_ms: 1000,
        error: failure(),
    };
    let r = h
        .store
        .job_finalize(vec![
            end(&c("b0"), done(r#"{"n":0}"#)),
            end(&c("b1"), retry.clone()),
            end(&c("b2"), retry.clone()),
            end(&c("b3"), done(r#"{"n":3}"#)),
            end(&forged, done("{}")),
            end(&c("b5"), Action::Fail { error: failure() }),
        ])
        .await
        .unwrap();
    assert_eq!(
        r,
        [
            Finalized::Done(JobStatus::Completed),
            Finalized::Done(JobStatus::Queued),
            Finalized::Done(JobStatus::Cancelled),
            Finalized::Done(JobStatus::Completed),
            Finalized::Fenced,
            Finalized::Done(JobStatus::Failed),
        ]
    );
    // A batch that names one job twice: the second end finds it ended.
    let again = h
        .store
        .job_finalize(vec![end(&c("b0"), done("{}")), end(&c("b0"), done("{}"))])
        .await
        .unwrap();
    assert_eq!(again, [Finalized::Fenced, Finalized::Fenced]);
    let b0 = get(&h, "b0").await;
    assert_eq!(b0.output.as_deref(), Some(r#"{"n":0}"#));
    let b1 = get(&h, "b1").await;
    assert_eq!(b1.status, JobStatus::Queued);
    assert_eq!(b1.run_at, h.clock.now() + 1000, "the retry's own delay");
    assert_eq!(get(&h, "b2").await.status, JobStatus::Cancelled);
    assert_eq!(get(&h, "b3").await.output.as_deref(), Some(r#"{"n":3}"#));
    assert_eq!(get(&h, "b4").await.status, JobStatus::Running);
    assert_eq!(get(&h, "b5").await.status, JobStatus::Failed);
    for (id, n) in [("b0", 1), ("b1", 1), ("b2", 1), ("b4", 0), ("b5", 1)] {
        assert_eq!(attempts(&h, A, id).await.len(), n, "attempts of {id}");
    }
    let counts = h.store.job_counts().await.unwrap();
    assert!(
        counts.contains(&(JobStatus::Running, 1)),
        "only the fenced one still runs: {counts:?}"
    );
}

pub(super) async fn finalize_is_fenced_by_the_lease(h: Harness) {
    setup(&h).await;
    insert(&h, new_job("j")).await;
    let c = claim(&h, 1).await.pop().unwrap();
    let forged = ClaimedJob {
        lease_token: "not-the-token".into(),
        ..c.clone()
    };
    assert_eq!(
        finalize(
            &h,
            &forged,
            Action::Complete {
                output: "{}".into()
            }
        )
        .await,
        Finalized::Fenced
    );
    assert_eq!(
        get(&h, "j").await.status,
        JobStatus::Running,
        "a fenced write changes nothing"
    );
    assert_eq!(
        finalize(
            &h,
            &c,
            Action::Complete {
                output: r#"{"ok":true}"#.into()
            }
        )
        .await,
        Finalized::Done(JobStatus::Completed)
    );
    let j = get(&h, "j").await;
    assert_eq!(j.status, JobStatus::Completed);
    assert_eq!(j.output.as_deref(), Some(r#"{"ok":true}"#));
    assert!(j.finished_at.is_some());
    assert_eq!(
        finalize(&h, &c, Action::Fail { error: failure() }).await,
        Finalized::Fenced,
        "a job completes once"
    );
    let list = attempts(&h, A, "j").await;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].outcome, "completed");
    assert_eq!(list[0].fuel_used, 42);
    assert!(
        attempts(&h, B, "j").await.is_empty(),
        "B sees no attempts of A's"
    );
}

pub(super) async fn retries_snoozes_waits_and_resumes(h: Harness) {
    setup(&h).await;
    insert(&h, new_job("j")).await;
    let c = claim(&h, 1).await.pop().unwrap();
    let r = finalize(
        &h,
        &c,
        Action::Retry {
            delay_ms: 1000,
            error: failure(),
        },
    )
    .await;
    assert_eq!(r, Finalized::Done(JobStatus::Queued));
    let j = get(&h, "j").await;
    assert_eq!(j.run_at, h.clock.now() + 1000);
    assert_eq!(j.error.as_ref().map(|e| e.code.as_str()), Some("boom"));
    assert!(claim(&h, 1).await.is_empty(), "backing off");
    h.clock.advance(1000);
    let c = claim(&h, 1).await.pop().unwrap();
    assert_eq!(c.attempt, 2);
    finalize(&h, &c, Action::Snooze { delay_ms: 50 }).await;
    let j = get(&h, "j").await;
    assert_eq!(j.max_attempts, 4, "a snooze does not use up an attempt");
    h.clock.advance(50);
    wait_for_approval(&h).await;
    assert!(claim(&h, 1).await.is_empty());
    let j = h
        .store
        .job_resume(A, "j", Some(NewInput::plain(r#"{"n":2}"#)))
        .await
        .unwrap();
    assert_eq!(j.status, JobStatus::Queued);
    assert_eq!(j.input, r#"{"n":2}"#);
    assert!(matches!(
        h.store.job_resume(A, "j", None).await,
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        h.store.job_resume(B, "j", None).await,
        Err(StoreError::NotFound)
    ));
    let c = claim(&h, 1).await.pop().unwrap();
    assert_eq!(c.input, r#"{"n":2}"#);
    finalize(&h, &c, Action::Fail { error: failure() }).await;
    assert_eq!(get(&h, "j").await.status, JobStatus::Failed);
}

pub(super) async fn cancels(h: Harness) {
    setup(&h).await;
    insert(&h, new_job("queued")).await;
    match h.store.job_cancel(A, "queued").await.unwrap() {
        CancelOutcome::Cancelled(j) => assert_eq!(j.status, JobStatus::Cancelled),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        h.store.job_cancel(A, "queued").await.unwrap(),
        CancelOutcome::AlreadyEnded(_)
    ));
    assert!(matches!(
        h.store.job_cancel(B, "queued").await,
        Err(StoreError::NotFound)
    ));

    insert(&h, new_job("running")).await;
    let c = claim(&h, 1).await.pop().unwrap();
    match h.store.job_cancel(A, "running").await.unwrap() {
        CancelOutcome::Requested(j) => {
            assert_eq!(j.status, JobStatus::Running);
            assert!(j.cancel_requested);
        }
        other => panic!("{other:?}"),
    }
    let beat = h
        .store
        .job_heartbeat(HeartbeatParams {
            owner: "r1".into(),
            leases: vec![(c.id.clone(), c.lease_token.clone())],
            lease_ms: 30_000,
            progress: vec![],
        })
        .await
        .unwrap();
    assert_eq!(
        beat.cancel,
        vec!["running".to_string()],
        "the runner learns of the cancel"
    );
    // A retry of a job asked to cancel ends it instead.
    let r = finalize(
        &h,
        &c,
        Action::Retry {
            delay_ms: 0,
            error: failure(),
        },
    )
    .await;
    assert_eq!(r, Finalized::Done(JobStatus::Cancelled));
    // So does a failure: the user asked for it to stop, and it has.
    insert(&h, new_job("failing")).await;
    let c = claim(&h, 1).await.pop().unwrap();
    h.store.job_cancel(A, "failing").await.unwrap();
    let r = finalize(&h, &c, Action::Fail { error: failure() }).await;
    assert_eq!(r, Finalized::Done(JobStatus::Cancelled));
    let j = get(&h, "failing").await;
    assert!(j.finished_at.is_some() && j.error.is_some());

    insert(&h, new_job("waiting")).await;
    let c = claim(&h, 1).await.pop().unwrap();
    finalize(
        &h,
        &c,
        Action::Wait {
            waiting_for: "{}".into(),
        },
    )
    .await;
    assert!(matches!(
        h.store.job_cancel(A, "waiting").await.unwrap(),
        CancelOutcome::Cancelled(_)
    ));
}

pub(super) async fn heartbeats_extend_leases_and_record_progress(h: Harness) {
    setup(&h).await;
    insert(&h, new_job("j")).await;
    let c = h
        .store
        .job_claim(ClaimParams {
            owner: "r1".into(),
            queues: None,
            limit: 1,
            lease_ms: 1000,
            only_tenants: None,
            begin_each: u32::MAX,
            caps: Default::default(),
        })
        .await
        .unwrap()
        .jobs
        .pop()
        .unwrap();
    h.clock.advance(800);
    let beat = h
        .store
        .job_heartbeat(HeartbeatParams {
            owner: "r1".into(),
            leases: vec![
                (c.id.clone(), c.lease_token.clone()),
                ("ghost".into(), "t".into()),
            ],
            lease_ms: 1000,
            progress: vec![(
                c.id.clone(),
                c.lease_token.clone(),
                ProgressRecord {
                    percent: 40,
                    note: "half".into(),
                },
            )],
        })
        .await
        .unwrap();
    assert_eq!(beat.lost, vec!["ghost".to_string()]);
    assert!(beat.cancel.is_empty());
    assert_eq!(get(&h, "j").await.progress.unwrap().percent, 40);
    h.clock.advance(800);
    assert!(rescue(&h, false).await.is_empty(), "the lease was extended");
    h.clock.advance(300);
    assert_eq!(rescue(&h, false).await.len(), 1);
    let beat = h
        .store
        .job_heartbeat(HeartbeatParams {
            owner: "r1".into(),
            leases: vec![(c.id.clone(), c.lease_token.clone())],
            lease_ms: 1000,
            progress: vec![],
        })
        .await
        .unwrap();
    assert_eq!(
        beat.lost,
        vec!["j".to_string()],
        "a rescued job's lease is gone"
    );
    assert_eq!(
        finalize(
            &h,
            &c,
            Action::Complete {
                output: "{}".into()
            }
        )
        .await,
        Finalized::Fenced
    );
}

pub(super) async fn rescue_takes_over_expired_leases(h: Harness) {
    setup(&h).await;
    insert(&h, new_job("a-lost")).await;
    insert(&h, new_job("b-alive")).await;
    let lost = claim(&h, 1).await.remove(0);
    h.clock.advance(20_000);
    let alive = claim(&h, 1).await.remove(0);
    assert!(rescue(&h, false).await.is_empty(), "leases still live");
    h.clock.advance(10_001);
    let taken = rescue(&h, false).await;
    assert_eq!(taken.len(), 1, "only the expired lease is taken over");
    let t = &taken[0];
    assert_eq!(t.id, "a-lost");
    assert_ne!(t.lease_token, lost.lease_token);
    assert_eq!(
        (t.attempt, t.attempts, t.started_at),
        (lost.attempt, lost.attempts, lost.started_at),
        "the lost attempt is the one taken over, not a new one"
    );
    let j = get(&h, "a-lost").await;
    assert_eq!((j.status, j.attempts), (JobStatus::Running, 1));
    // The dead runner's token is fenced out; the rescuer's writes.
    assert_eq!(
        finalize(
            &h,
            &lost,
            Action::Complete {
                output: "{}".into()
            }
        )
        .await,
        Finalized::Fenced
    );
    let error = JobError::new(ErrorKind::RunnerLost, "lost");
    assert_eq!(
        finalize(
            &h,
            t,
            Action::Retry {
                delay_ms: 0,
                error: error.clone()
            }
        )
        .await,
        Finalized::Done(JobStatus::Queued)
    );
    assert_eq!(
        get(&h, "a-lost").await.error.unwrap().kind,
        ErrorKind::RunnerLost
    );
    // At start, a store that owns its database takes over every running job.
    let all = rescue(&h, true).await;
    assert_eq!(ids(&all), ["b-alive"]);
    assert_ne!(all[0].lease_token, alive.lease_token);
    // A round takes at most its limit, the longest expired first.
    assert_eq!(ids(&claim(&h, 1).await), ["a-lost"], "queued again");
    for id in ["c1", "c2"] {
        h.clock.advance(10);
        insert(&h, new_job(id)).await;
        assert_eq!(ids(&claim(&h, 1).await), [id]);
    }
    h.clock.advance(60_000);
    let round = |taken: Vec<ClaimedJob>| {
        let mut got: Vec<String> = taken.into_iter().map(|c| c.id).collect();
        got.sort_unstable();
        got
    };
    assert_eq!(
        round(rescue_up_to(&h, false, 2).await),
        ["a-lost", "b-alive"]
    );
    assert_eq!(round(rescue_up_to(&h, false, 2).await), ["c1", "c2"]);
    assert!(rescue_up_to(&h, false, 2).await.is_empty());
}

pub(super) async fn concurrency_keys_run_one_at_a_time(h: Harness) {
    setup(&h).await;
    let keyed = |id: &str| NewJob {
        concurrency_key: Some("customer-1".into()),
        ..new_job(id)
    };
    insert(&h, keyed("k1")).await;
    insert(&h, keyed("k2")).await;
    insert(&h, new_job("free")).await;
    let first = claim(&h, 10).await;
    let mut first_ids = ids(&first);
    // The key's and the unkeyed group's in turn (§3.4.0c).
    first_ids.sort_unstable();
    assert_eq!(
        first_ids,
        ["free", "k1"],
        "one job per key at a time (same time: id order)"
    );
    assert!(claim(&h, 10).await.is_empty(), "k2 waits for k1");
    assert!(matches!(
        h.store.job_run_now(A, "k2").await,
        Err(StoreError::Conflict(_))
    ));
    let k1 = first.iter().find(|j| j.id == "k1").unwrap();
    finalize(
        &h,
        k1,
        Action::Complete {
            output: "{}".into(),
        },
    )
    .await;
    assert_eq!(claim(&h, 10).await[0].id, "k2");
    // Another tenant's key of the same name is another key.
    insert(
        &h,
        NewJob {
            tenant: B.into(),
            ..keyed("b1")
        },
    )
    .await;
    insert(&h, keyed("k3")).await;
    let got = claim(&h, 10).await;
    assert_eq!(ids(&got), ["b1"]);

    insert(&h, keyed("s1")).await;
    insert(
        &h,
        NewJob {
            supersedes: true,
            ..keyed("s2")
        },
    )
    .await;
    assert_eq!(
        get(&h, "s1").await.status,
        JobStatus::Cancelled,
        "s2 supersedes s1"
    );
    assert_eq!(get(&h, "k3").await.status, JobStatus::Cancelled);
    assert_eq!(get(&h, "s2").await.status, JobStatus::Queued);
}

/// Claims the next job and ends its attempt waiting for an approval.
async fn wait_for_approval(h: &Harness) {
    let c = claim(h, 1).await.pop().unwrap();
    let r = finalize(
        h,
        &c,
        Action::Wait {
            waiting_for: r#"{"approval":true}"#.into(),
        },
    )
    .await;
    assert_eq!(r, Finalized::Done(JobStatus::Waiting));
}

/// A superseding job cancels its key's waiting job as well as its queued
/// ones (the cancel's from-statuses), and the gauges follow.
pub(super) async fn a_superseding_job_cancels_the_keys_waiting_job(h: Harness) {
    setup(&h).await;
    let keyed = |id: &str| NewJob {
        concurrency_key: Some("customer-1".into()),
        ..new_job(id)
    };
    insert(&h, keyed("w")).await;
    wait_for_approval(&h).await;
    insert(&h, keyed("q")).await;
    insert(
        &h,
        NewJob {
            supersedes: true,
            ..keyed("new")
        },
    )
    .await;
    for id in ["w", "q"] {
        let j = get(&h, id).await;
        assert_eq!(j.status, JobStatus::Cancelled, "{id} is superseded");
        assert!(j.finished_at.is_some(), "{id}");
        assert!(j.error.is_some(), "{id} says why");
    }
    assert_eq!(get(&h, "new").await.status, JobStatus::Queued);
    super::tenants::gauges_agree(&h, A).await;
    assert!(matches!(
        h.store.job_resume(A, "w", None).await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(ids(&claim(&h, 10).await), ["new"]);
}

pub(super) async fn fallbacks_take_over_the_job(h: Harness) {
    setup(&h).await;
    insert(&h, new_job("j")).await;
    let c = claim(&h, 1).await.pop().unwrap();
    let fb = TaskRef {
        name: "rescue-task".into(),
        version: 2,
        digest: DIGEST.into(),
    };
    let r = finalize(
        &h,
        &c,
        Action::Fallback {
            task: fb.clone(),
            input: r#"{"input":{"n":1},"error":{}}"#.into(),
            max_attempts: 2,
            error: failure(),
        },
    )
    .await;
    assert_eq!(r, Finalized::Done(JobStatus::Queued));
    let j = get(&h, "j").await;
    assert_eq!(j.fallback.as_ref(), Some(&fb));
    assert_eq!(j.max_attempts, 3, "one attempt used, two for the fallback");
    let c = claim(&h, 1).await.pop().unwrap();
    assert_eq!(c.task, fb);
    assert_eq!(c.input, r#"{"input":{"n":1},"error":{}}"#);
    assert_eq!(c.attempt, 1, "the fallback's first attempt");
    assert_eq!(c.attempts, 2);
    assert_eq!(c.fallback_depth, 1);
    finalize(
        &h,
        &c,
        Action::Complete {
            output: r#""served""#.into(),
        },
    )
    .await;
    let j = get(&h, "j").await;
    assert_eq!(j.status, JobStatus::Completed);
    assert_eq!(j.task, task_ref(), "the job still names its own task");
    let a = attempts(&h, A, "j").await;
    assert_eq!(a[1].task.name, "rescue-task");
}

pub(super) async fn release_gives_the_attempt_back(h: Harness) {
    setup(&h).await;
    insert(&h, new_job("j")).await;
    let release = |c: ClaimedJob, delay_ms: u64| {
        h.store.job_finalize(vec![Finalize {
            names: c.names(),
            id: c.id,
            tenant: c.tenant,
            lease_token: c.lease_token,
            action: Action::Release { delay_ms },
            attempt: None,
            usage: None,
            callbacks: None,
            steps: Vec::new(),
            close_children: None,
        }])
    };
    let c = claim(&h, 1).await.remove(0);
    let r = release(c, 0).await.unwrap();
    assert_eq!(r, vec![Finalized::Done(JobStatus::Queued)]);
    let j = get(&h, "j").await;
    assert_eq!(j.attempts, 0);
    assert!(attempts(&h, A, "j").await.is_empty());
    let c = claim(&h, 1).await.remove(0);
    assert_eq!(c.attempt, 1);
    // Given back with a delay, it is not claimable before then.
    release(c, 1_000).await.unwrap();
    assert!(claim(&h, 1).await.is_empty());
    h.clock.advance(1_000);
    assert_eq!(claim(&h, 1).await[0].attempt, 1);
}

/// A claim takes begun only the first `begin_each` of each tenant's jobs;
/// `job_begin` marks the others under their lease; a rescued job that
/// never began goes back to the queue uncounted. Both claim paths: plain
/// jobs, then with a concurrency key among them (PostgreSQL's general
/// claim).
pub(super) async fn claims_ahead_begin_only_when_marked(h: Harness) {
    setup(&h).await;
    let b_job = |id: &str| NewJob {
        tenant: B.into(),
        ..new_job(id)
    };
    for keyed in [false, true] {
        let p = if keyed { "k" } else { "p" };
        for n in 1..=3 {
            insert(&h, new_job(&format!("{p}-a{n}"))).await;
        }
        insert(
            &h,
            NewJob {
                concurrency_key: keyed.then(|| "key".to_string()),
                ..b_job(&format!("{p}-b1"))
            },
        )
        .await;
        let claimed = h
            .store
            .job_claim(ClaimParams {
                owner: "r1".into(),
                queues: None,
                limit: 10,
                lease_ms: 10_000,
                only_tenants: None,
                begin_each: 1,
                caps: Default::default(),
            })
            .await
            .unwrap()
            .jobs;
        let mut begun: Vec<(&str, bool)> =
            claimed.iter().map(|c| (c.id.as_str(), c.begun)).collect();
        begun.sort();
        let want = |a2: bool| {
            vec![
                (format!("{p}-a1"), true),
                (format!("{p}-a2"), a2),
                (format!("{p}-a3"), false),
                (format!("{p}-b1"), true),
            ]
        };
        let owned = |v: &[(&str, bool)]| -> Vec<(String, bool)> {
            v.iter().map(|(i, b)| (i.to_string(), *b)).collect()
        };
        assert_eq!(owned(&begun), want(false), "keyed: {keyed}");
        let by_id = |id: String| claimed.iter().find(|c| c.id == id).unwrap().clone();
        let a2 = by_id(format!("{p}-a2"));
        let a3 = by_id(format!("{p}-a3"));
        // a3's mark names a token that is not its lease's: refused.
        h.store
            .job_begin(vec![
                (a2.id.clone(), a2.lease_token.clone()),
                (a3.id.clone(), "not-its-lease".into()),
            ])
            .await
            .unwrap();
        h.clock.advance(10_001);
        let taken = rescue(&h, false).await;
        let mut seen: Vec<(&str, bool)> = taken.iter().map(|c| (c.id.as_str(), c.begun)).collect();
        seen.sort();
        assert_eq!(owned(&seen), want(true), "keyed: {keyed}");
        // The rescuer gives back the one that never began: queued, its
        // attempt uncounted, no attempt recorded.
        let t3 = taken.iter().find(|c| c.id == a3.id).unwrap();
        assert_eq!(
            h.store
                .job_finalize(vec![Finalize::release(t3, 0)])
                .await
                .unwrap(),
            [Finalized::Done(JobStatus::Queued)]
        );
        let j = get(&h, &a3.id).await;
        assert_eq!((j.status, j.attempts), (JobStatus::Queued, 0));
        assert!(attempts(&h, A, &a3.id).await.is_empty());
        // The rest end; the next round starts clean.
        for t in taken.iter().filter(|c| c.id != a3.id) {
            let ended = finalize(
                &h,
                t,
                Action::Complete {
                    output: "{}".into(),
                },
            )
            .await;
            assert_eq!(ended, Finalized::Done(JobStatus::Completed));
        }
        let again = claim(&h, 10).await;
        assert_eq!(ids(&again), [a3.id.as_str()]);
        assert_eq!((again[0].attempts, again[0].begun), (1, true));
        finalize(
            &h,
            &again[0],
            Action::Complete {
                output: "{}".into(),
            },
        )
        .await;
    }
}

pub(super) async fn run_now_puts_a_job_first(h: Harness) {
    setup(&h).await;
    insert(&h, new_job("first")).await;
    insert(
        &h,
        NewJob {
            run_at: RunAt::After(3_600_000),
            priority: 100,
            ..new_job("j")
        },
    )
    .await;
    assert!(matches!(
        h.store.job_run_now(B, "j").await,
        Err(StoreError::NotFound)
    ));
    let marked = h.store.job_run_now(A, "j").await.unwrap();
    assert_eq!(marked.status, JobStatus::Queued);
    assert_eq!(marked.run_at, h.clock.now(), "due now");
    // Ahead of its tenant's line, whatever its priority and time.
    assert_eq!(ids(&claim(&h, 1).await), ["j"]);
    assert!(
        matches!(
            h.store.job_run_now(A, "j").await,
            Err(StoreError::Conflict(_))
        ),
        "it runs already"
    );
    // A claim of several hands them over in their tenant's order: run-now
    // first, then by priority, then by time.
    insert(
        &h,
        NewJob {
            priority: 5,
            ..new_job("p5")
        },
    )
    .await;
    insert(
        &h,
        NewJob {
            priority: -5,
            ..new_job("pm5")
        },
    )
    .await;
    h.store.job_run_now(A, "p5").await.unwrap();
    assert_eq!(ids(&claim(&h, 3).await), ["p5", "pm5", "first"]);
}

pub(super) async fn many_concurrent_writers(h: Harness) {
    setup(&h).await;
    let mut tasks = Vec::new();
    for i in 0..200 {
        let store = h.store.clone();
        tasks.push(tokio::spawn(async move {
            store.job_insert(vec![new_job(&format!("c{i:03}"))]).await
        }));
    }
    for t in tasks {
        let r = t.await.unwrap().unwrap().pop().unwrap();
        assert!(r.is_ok(), "{r:?}");
    }
    let counts = h.store.job_counts().await.unwrap();
    assert_eq!(counts, vec![(JobStatus::Queued, 200)]);
}

/// An attempt's end as one write of a transaction.
fn ending(c: &ClaimedJob, token: &str, action: Action) -> Write {
    Write::JobFinalize(Box::new(Finalize {
        id: c.id.clone(),
        tenant: c.tenant.clone(),
        lease_token: token.into(),
        attempt: attempt(c, "completed", None),
        action,
        usage: None,
        callbacks: None,
        names: c.names(),
        steps: Vec::new(),
        close_children: None,
    }))
}

pub(super) async fn a_transaction_applies_all_or_nothing(h: Harness) {
    setup(&h).await;
    insert(&h, new_job("j")).await;
    let c = claim(&h, 1).await.pop().unwrap();
    let done = || Action::Complete {
        output: "{}".into(),
    };

    // A fenced end undoes the insert before it, and changes nothing.
    let err = h
        .store
        .apply(vec![
            Write::JobInsert(new_job("before")),
            ending(&c, "not-the-token", done()),
        ])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Fenced), "{err:?}");
    assert!(h.store.job_get(A, "before").await.unwrap().is_none());
    assert_eq!(get(&h, "j").await.status, JobStatus::Running);

    // A refused insert (a duplicate id) undoes the end and the other insert.
    let err = h
        .store
        .apply(vec![
            ending(&c, &c.lease_token, done()),
            Write::JobInsert(new_job("x")),
            Write::JobInsert(new_job("x")),
        ])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    assert!(h.store.job_get(A, "x").await.unwrap().is_none());
    assert_eq!(get(&h, "j").await.status, JobStatus::Running);
    assert!(attempts(&h, A, "j").await.is_empty(), "no attempt recorded");

    // All together: the end, a job it enqueues, and a write that reads
    // what the one before it wrote.
    let written = h
        .store
        .apply(vec![
            ending(&c, &c.lease_token, done()),
            Write::JobInsert(new_job("callback")),
            Write::JobCancel {
                tenant: A.into(),
                id: "callback".into(),
            },
        ])
        .await
        .unwrap();
    assert!(matches!(
        written.as_slice(),
        [
            Written::JobFinalized(JobStatus::Completed),
            Written::JobInserted(Inserted::Created(_)),
            Written::JobCancelled(CancelOutcome::Cancelled(_)),
        ]
    ));
    assert_eq!(get(&h, "j").await.status, JobStatus::Completed);
    assert_eq!(get(&h, "callback").await.status, JobStatus::Cancelled);
    assert_eq!(attempts(&h, A, "j").await.len(), 1);
    let mut counts = h.store.job_counts().await.unwrap();
    counts.sort_by_key(|(s, _)| s.as_str());
    assert_eq!(
        counts,
        [(JobStatus::Cancelled, 1), (JobStatus::Completed, 1)],
        "nothing of the undone transactions is left"
    );
    assert_eq!(
        h.store.tenant_usage(A).await.unwrap().jobs,
        JobGauges::default(),
        "the tenant's gauges count only what was committed"
    );
}
