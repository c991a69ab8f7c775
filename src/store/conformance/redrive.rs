//! Conformance cases of redrive: failed jobs sent back for a new series of
//! attempts, and the rules a redrive keeps (keys, quotas, fallbacks).

use super::*;

/// Fails `id` for good: claimed, and its attempt failed and not retried.
async fn fail(h: &Harness, id: &str) -> ClaimedJob {
    let c = claim(h, 10)
        .await
        .into_iter()
        .find(|c| c.id == id)
        .expect("the job is claimed");
    let r = finalize(h, &c, Action::Fail { error: failure() }).await;
    assert_eq!(r, Finalized::Done(JobStatus::Failed));
    c
}

/// Re-drives one failed job of tenant A for `attempts` more; the job.
pub(super) async fn redrive_one(h: &Harness, id: &str, attempts: u32) -> JobRecord {
    h.store
        .job_redrive(A, vec![redrive(id, None, attempts)])
        .await
        .unwrap()
        .pop()
        .unwrap()
        .unwrap()
}

pub(super) fn redrive(id: &str, task: Option<TaskRef>, attempts: u32) -> Redrive {
    Redrive {
        id: id.into(),
        task,
        attempts,
        stage: None,
        cache_key: None,
    }
}

pub(super) async fn failed_jobs_can_be_redriven(h: Harness) {
    setup(&h).await;
    insert(&h, new_job("j")).await;
    fail(&h, "j").await;
    h.clock.advance(1_000);
    let r = redrive_one(&h, "j", 2).await;
    assert_eq!(r.status, JobStatus::Queued);
    assert_eq!(
        (r.attempts, r.max_attempts),
        (1, 3),
        "two more after the one made"
    );
    assert!(r.error.is_none() && r.finished_at.is_none() && r.output.is_none());
    assert_eq!(r.run_at, h.store.now());
    assert_eq!(r.task, task_ref(), "on the version it pinned");
    assert_eq!(h.store.tenant_usage(A).await.unwrap().jobs.queued, 1);
    // A new series: its first attempt, the job's second.
    let c = claim(&h, 1).await.pop().unwrap();
    assert_eq!((c.id.as_str(), c.attempt, c.attempts), ("j", 1, 2));
    assert_eq!(c.task, task_ref());
    finalize(&h, &c, Action::Fail { error: failure() }).await;
    // Again, on a newer version of its task; the history is kept.
    let newer = TaskRef {
        version: 7,
        ..task_ref()
    };
    h.store
        .job_redrive(A, vec![redrive("j", Some(newer.clone()), 1)])
        .await
        .unwrap()
        .pop()
        .unwrap()
        .unwrap();
    let c = claim(&h, 1).await.pop().unwrap();
    assert_eq!(c.task, newer);
    finalize(&h, &c, Action::Complete { output: "1".into() }).await;
    let j = get(&h, "j").await;
    assert_eq!(
        (j.status, j.attempts, j.task.version),
        (JobStatus::Completed, 3, 7)
    );
    let numbers: Vec<u32> = attempts(&h, A, "j")
        .await
        .iter()
        .map(|a| a.attempt)
        .collect();
    assert_eq!(numbers, [1, 2, 3]);

    // Only a failed job, and only the tenant's own; each answered alone.
    insert(&h, new_job("q")).await;
    insert(&h, job_of(B, "b")).await;
    let answers = h
        .store
        .job_redrive(
            A,
            vec![
                redrive("j", None, 1),
                redrive("q", None, 1),
                redrive("b", None, 1),
                redrive("nope", None, 1),
            ],
        )
        .await
        .unwrap();
    assert!(
        matches!(&answers[0], Err(StoreError::Conflict(m)) if m.contains("completed")),
        "{answers:?}"
    );
    assert!(
        matches!(&answers[1], Err(StoreError::Conflict(m)) if m.contains("queued")),
        "{answers:?}"
    );
    assert!(
        matches!(answers[2], Err(StoreError::NotFound)),
        "{answers:?}"
    );
    assert!(
        matches!(answers[3], Err(StoreError::NotFound)),
        "{answers:?}"
    );
}

pub(super) async fn a_redrive_keeps_keys_and_quotas(h: Harness) {
    setup(&h).await;
    // A fallback that failed too: the redrive starts on the job's own task.
    insert(&h, new_job("f")).await;
    let c = claim(&h, 1).await.pop().unwrap();
    let fb = TaskRef {
        name: "fb".into(),
        ..task_ref()
    };
    finalize(
        &h,
        &c,
        Action::Fallback {
            task: fb,
            input: "{}".into(),
            max_attempts: 1,
            error: failure(),
        },
    )
    .await;
    fail(&h, "f").await;
    assert!(get(&h, "f").await.fallback.is_some());
    // A unique key taken by another unfinished job since.
    insert(
        &h,
        NewJob {
            unique_key: Some("u".into()),
            ..new_job("u1")
        },
    )
    .await;
    fail(&h, "u1").await;
    insert(
        &h,
        NewJob {
            unique_key: Some("u".into()),
            ..new_job("u2")
        },
    )
    .await;
    let answers = h
        .store
        .job_redrive(A, vec![redrive("u1", None, 1), redrive("f", None, 1)])
        .await
        .unwrap();
    assert!(
        matches!(&answers[0], Err(StoreError::Conflict(m)) if m.contains("unique_key")),
        "{answers:?}"
    );
    let f = answers[1].as_ref().unwrap();
    assert!(f.fallback.is_none());
    let c = claim(&h, 10)
        .await
        .into_iter()
        .find(|c| c.id == "f")
        .unwrap();
    assert_eq!(c.task, task_ref());
    assert_eq!(c.fallback_depth, 0);
    // The refused one is still failed, and counted so.
    assert_eq!(get(&h, "u1").await.status, JobStatus::Failed);
    assert_eq!(h.store.tenant_usage(A).await.unwrap().jobs.running, 2);

    // Within max_queued: a redrive queues a job like an enqueue does.
    insert(&h, job_of(B, "b1")).await;
    fail(&h, "b1").await;
    insert(&h, job_of(B, "b2")).await;
    super::tenants::put(
        &h,
        B,
        None,
        crate::quota::Quotas {
            max_queued: Some(1),
            ..Default::default()
        },
    )
    .await;
    let over = h
        .store
        .job_redrive(B, vec![redrive("b1", None, 1)])
        .await
        .unwrap();
    assert!(
        matches!(&over[0], Err(StoreError::QuotaExceeded(e)) if e.quota == "max_queued"),
        "{over:?}"
    );
    let b1 = h.store.job_get(B, "b1").await.unwrap().unwrap();
    assert_eq!(b1.status, JobStatus::Failed);
}
