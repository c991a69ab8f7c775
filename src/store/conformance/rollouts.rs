//! Cases of canary rollouts: a version defined with a rollout is staged
//! beside the live one (a define is refused while it is, and a rollout
//! needs a live version); its share changes, promote makes it live,
//! rollback drops it for good; each version's figures since the rollout
//! began come from the job and attempt records.

use super::*;

fn task(name: &str, spec: &str, rollout: Option<u8>) -> NewTask {
    NewTask {
        tenant: A.into(),
        name: name.into(),
        digest: DIGEST.into(),
        spec: spec.into(),
        rollout,
    }
}

/// A job of version `version` of task "t", made `after_ms` after now (its
/// id says when: ids sort by time).
fn job_of(h: &Harness, version: u32, after_ms: i64, n: u128) -> NewJob {
    let at = u64::try_from(h.clock.now() + after_ms).unwrap();
    let id = ulid::Ulid::from_parts(at, n).to_string();
    NewJob::plain(
        id,
        A,
        TaskRef {
            name: "t".into(),
            version,
            digest: DIGEST.into(),
        },
        "{}",
    )
}

async fn head(h: &Harness) -> (u32, Option<(u32, Option<u8>)>) {
    let head = h.store.task_head(A, "t").await.unwrap().expect("a head");
    (
        head.live.version,
        head.staged.map(|s| (s.version, s.rollout_percent)),
    )
}

pub(super) async fn a_staged_version_is_promoted_or_rolled_back(h: Harness) {
    setup(&h).await;
    // A first version cannot be staged: there is nothing to share with.
    assert!(matches!(
        h.store.task_insert(task("t", "v1", Some(10))).await,
        Err(StoreError::Conflict(m)) if m.contains("no live version")
    ));
    assert!(h.store.task_head(A, "t").await.unwrap().is_none());
    h.store.task_insert(task("t", "v1", None)).await.unwrap();
    let started = h.clock.now();
    let v2 = h
        .store
        .task_insert(task("t", "v2", Some(25)))
        .await
        .unwrap();
    assert_eq!(
        (v2.version, v2.rollout_percent, v2.rollout_started_at),
        (2, Some(25), Some(started))
    );
    assert!(!v2.is_live());
    assert_eq!(head(&h).await, (1, Some((2, Some(25)))));
    // The live version is what a lookup without a version answers, and
    // what the task list shows; the staged one is found by its number.
    assert_eq!(
        h.store
            .task_get(A, "t", None)
            .await
            .unwrap()
            .unwrap()
            .version,
        1
    );
    assert_eq!(
        h.store
            .task_get(A, "t", Some(2))
            .await
            .unwrap()
            .unwrap()
            .spec,
        "v2"
    );
    let listed = h.store.task_list(Some(A)).await.unwrap();
    assert_eq!(
        listed.iter().map(|t| t.version).collect::<Vec<_>>(),
        vec![1]
    );
    // No other version while one is staged, staged or not.
    for rollout in [None, Some(50)] {
        assert!(matches!(
            h.store.task_insert(task("t", "v3", rollout)).await,
            Err(StoreError::Conflict(m)) if m.contains("being rolled out")
        ));
    }
    // Another tenant, another task: untouched.
    assert!(h.store.task_head(B, "t").await.unwrap().is_none());
    assert!(matches!(
        h.store.task_rollout(B, "t", RolloutChange::Promote).await,
        Err(StoreError::NotFound)
    ));

    // The share moves; rollback drops the version for good.
    let moved = h
        .store
        .task_rollout(A, "t", RolloutChange::Percent(60))
        .await
        .unwrap();
    assert_eq!((moved.version, moved.rollout_percent), (2, Some(60)));
    assert_eq!(head(&h).await, (1, Some((2, Some(60)))));
    h.clock.advance(10);
    let dropped = h
        .store
        .task_rollout(A, "t", RolloutChange::Rollback)
        .await
        .unwrap();
    assert_eq!(
        (dropped.rollout_percent, dropped.rolled_back_at),
        (None, Some(h.clock.now()))
    );
    assert_eq!(head(&h).await, (1, None));
    assert_eq!(
        h.store
            .task_get(A, "t", None)
            .await
            .unwrap()
            .unwrap()
            .version,
        1
    );
    // Jobs pinned to it still find it.
    assert_eq!(
        h.store
            .task_get(A, "t", Some(2))
            .await
            .unwrap()
            .unwrap()
            .spec,
        "v2"
    );
    for change in [
        RolloutChange::Promote,
        RolloutChange::Rollback,
        RolloutChange::Percent(5),
    ] {
        assert!(matches!(
            h.store.task_rollout(A, "t", change).await,
            Err(StoreError::NotFound)
        ));
    }

    // The next version is 3; promoted, it is live and v2 never is.
    let v3 = h.store.task_insert(task("t", "v3", Some(0))).await.unwrap();
    assert_eq!((v3.version, v3.rollout_percent), (3, Some(0)));
    assert_eq!(head(&h).await, (1, Some((3, Some(0)))));
    let promoted = h
        .store
        .task_rollout(A, "t", RolloutChange::Promote)
        .await
        .unwrap();
    assert!(promoted.is_live());
    assert!(promoted.rollout_started_at.is_some(), "kept after promote");
    assert_eq!(head(&h).await, (3, None));
    assert_eq!(
        h.store.task_list(Some(A)).await.unwrap()[0].version,
        3,
        "the list shows the live version"
    );
    let versions = h.store.task_versions(A, "t").await.unwrap();
    let states: Vec<_> = versions
        .iter()
        .map(|v| (v.version, v.is_live(), v.rolled_back_at.is_some()))
        .collect();
    assert_eq!(
        states,
        vec![(1, true, false), (2, false, true), (3, true, false)]
    );
    // Defines go on as before.
    let v4 = h.store.task_insert(task("t", "v4", None)).await.unwrap();
    assert_eq!(head(&h).await, (v4.version, None));
    let staged = h.store.tasks_staged(None, 10).await.unwrap();
    assert!(staged.is_empty(), "{staged:?}");
    h.store
        .task_insert(task("t", "v5", Some(30)))
        .await
        .unwrap();
    let staged = h.store.tasks_staged(None, 10).await.unwrap();
    assert_eq!(
        staged
            .iter()
            .map(|t| (t.tenant.as_str(), t.version))
            .collect::<Vec<_>>(),
        vec![(A, 5)]
    );
    // One tenant's: its own, and none of another's.
    let mine = h.store.tasks_staged(Some(A), 10).await.unwrap();
    assert_eq!(mine.iter().map(|t| t.version).collect::<Vec<_>>(), [5]);
    assert!(h.store.tasks_staged(Some(B), 10).await.unwrap().is_empty());
}

pub(super) async fn a_rollouts_figures_count_each_versions_jobs_since_it_began(h: Harness) {
    setup(&h).await;
    h.store.task_insert(task("t", "v1", None)).await.unwrap();
    // A job of v1 made before the rollout began is not counted.
    let before = insert(&h, job_of(&h, 1, -5, 1)).await;
    h.store
        .task_insert(task("t", "v2", Some(50)))
        .await
        .unwrap();
    let since = h.clock.now();
    // v1: two jobs complete (one after a retry); v2: one completes, one
    // fails for good after two attempts, one is still queued.
    let (one_a, one_b) = (job_of(&h, 1, 1, 1), job_of(&h, 1, 1, 2));
    let (two_a, two_b, two_c) = (
        job_of(&h, 2, 2, 1),
        job_of(&h, 2, 2, 2),
        job_of(&h, 2, 2, 3),
    );
    let two_c = NewJob {
        run_at: RunAt::After(3_600_000),
        ..two_c
    };
    for j in [&one_a, &one_b, &two_a, &two_b, &two_c] {
        insert(&h, j.clone()).await;
    }
    let retry = Action::Retry {
        delay_ms: 0,
        error: failure(),
    };
    let complete = || Action::Complete {
        output: "{}".into(),
    };
    // Round one: every job due (the one before the rollout too).
    for c in claim(&h, 10).await {
        let action = if c.id == one_b.id || c.id == two_b.id {
            retry.clone()
        } else {
            complete()
        };
        finalize(&h, &c, action).await;
    }
    for c in claim(&h, 10).await {
        let action = if c.id == two_b.id {
            Action::Fail { error: failure() }
        } else {
            complete()
        };
        finalize(&h, &c, action).await;
    }
    assert_eq!(get(&h, &before.id).await.status, JobStatus::Completed);
    let figures = h
        .store
        .version_figures(A, "t", [2, 1], since)
        .await
        .unwrap();
    // Each attempt records 42 fuel (`attempt`).
    assert_eq!(
        figures,
        vec![
            VersionFigures {
                version: 2,
                completed: 1,
                failed: 1,
                attempts: 3,
                fuel: 3 * 42,
            },
            VersionFigures {
                version: 1,
                completed: 2,
                failed: 0,
                attempts: 3,
                fuel: 3 * 42,
            },
        ]
    );
    // Another tenant's figures are its own, and a version with no jobs
    // is at zero.
    let none = h
        .store
        .version_figures(B, "t", [2, 1], since)
        .await
        .unwrap();
    assert_eq!(none.iter().map(|f| f.attempts).sum::<u64>(), 0);
    assert_eq!(none[0].version, 2);
}
