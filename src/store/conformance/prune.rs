//! Conformance cases of retention: ended jobs deleted after their age with
//! their attempts, a bounded step at a time, and components no task uses.

use super::*;

const DAY: i64 = 24 * 3600 * 1000;

/// A job whose id is a ULID of the store's time now, as the API makes them.
fn job_now(h: &Harness, n: u128) -> NewJob {
    let at = u64::try_from(h.store.now()).unwrap();
    new_job(&ulid::Ulid::from_parts(at, n).to_string())
}

fn step(h: &Harness, after: &str, scan: u32) -> PruneParams {
    let now = h.store.now();
    let completed_before = Some(now - 7 * DAY);
    let failed_before = Some(now - 30 * DAY);
    PruneParams {
        after_id: after.into(),
        below_id: PruneParams::id_floor(now - 7 * DAY),
        completed_before,
        failed_before,
        scan,
    }
}

/// Runs steps of a pass to its end; what they did in all.
async fn pass(h: &Harness, scan: u32) -> (u64, u64, usize) {
    let (mut jobs, mut attempts, mut steps) = (0, 0, 0);
    let mut after = String::new();
    loop {
        let p = h.store.job_prune(step(h, &after, scan)).await.unwrap();
        steps += 1;
        jobs += p.jobs;
        attempts += p.attempts;
        match p.last_id {
            Some(id) => after = id,
            None => return (jobs, attempts, steps),
        }
    }
}

pub(super) async fn ended_jobs_are_pruned_after_their_age(h: Harness) {
    setup(&h).await;
    let mut ids = Vec::new();
    for n in 0..6 {
        ids.push(insert(&h, job_now(&h, n)).await.id);
    }
    let [done, cancelled, failed, running, waiting, queued] =
        <[String; 6]>::try_from(ids.clone()).unwrap();
    let claimed = claim(&h, 4).await;
    let by = |id: &str| claimed.iter().find(|c| c.id == id).unwrap();
    finalize(&h, by(&done), Action::Complete { output: "1".into() }).await;
    finalize(&h, by(&cancelled), Action::Cancel).await;
    finalize(&h, by(&failed), Action::Fail { error: failure() }).await;
    let _ = by(&running);
    h.store.job_cancel(A, &waiting).await.unwrap();
    assert_eq!(get(&h, &waiting).await.status, JobStatus::Cancelled);
    let waiting_cancelled = waiting;
    h.clock.advance(7 * DAY - 1);
    // Not yet: a pass looks at nothing that may not go.
    assert_eq!(pass(&h, 100).await, (0, 0, 1));
    h.clock.advance(2);
    // A job made now is too young to be looked at.
    let young = insert(&h, job_now(&h, 0)).await.id;
    // In steps of two jobs: six ids old enough, three steps and the end.
    let (jobs, attempts, steps) = pass(&h, 2).await;
    assert_eq!((jobs, attempts, steps), (3, 2, 4));
    for id in [&done, &cancelled, &waiting_cancelled] {
        assert!(
            h.store.job_get(A, id).await.unwrap().is_none(),
            "{id} is gone"
        );
        assert!(
            h.store
                .attempt_list(AttemptQuery {
                    tenant: A.into(),
                    job_id: id.clone(),
                    after: None,
                    limit: 10
                })
                .await
                .map_or(true, |a| a.is_empty()),
            "and its attempts"
        );
    }
    for id in [&failed, &running, &queued, &young] {
        assert!(
            h.store.job_get(A, id).await.unwrap().is_some(),
            "{id} stays"
        );
    }
    assert_eq!(attempts_of(&h, &failed).await, 1);
    // A failed job goes after its own, longer age; a re-driven one stays.
    h.clock.advance(23 * DAY);
    let redriven = failed.clone();
    redrive_one(&h, &redriven, 1).await;
    let c = claim(&h, 10).await;
    let again = c.iter().find(|c| c.id == redriven).unwrap();
    finalize(&h, again, Action::Fail { error: failure() }).await;
    h.clock.advance(7 * DAY);
    assert_eq!(pass(&h, 100).await.0, 0, "its new end is recent");
    h.clock.advance(30 * DAY);
    let (jobs, attempts, _) = pass(&h, 100).await;
    assert_eq!(
        (jobs, attempts),
        (1, 2),
        "the failed job with both attempts"
    );
    // The running and queued ones are never pruned.
    assert!(h.store.job_get(A, &running).await.unwrap().is_some());
    assert!(h.store.job_get(A, &queued).await.unwrap().is_some());
}

async fn attempts_of(h: &Harness, id: &str) -> usize {
    attempts(h, A, id).await.len()
}

pub(super) async fn components_no_task_uses_are_collected(h: Harness) {
    setup(&h).await;
    let digest = |n: u8| format!("sha256:{:064x}", n);
    let comp = |tenant: &str, n: u8| NewComponent {
        tenant: tenant.into(),
        digest: digest(n),
        abi: "task".into(),
        bytes: vec![0, 97, 115, 109, n],
    };
    for c in [comp(A, 1), comp(A, 2), comp(B, 2), comp(A, 3)] {
        h.store.component_insert(c).await.unwrap();
    }
    h.store
        .task_insert(NewTask {
            tenant: A.into(),
            name: "t".into(),
            digest: digest(1),
            spec: "{}".into(),
            rollout: None,
        })
        .await
        .unwrap();
    let uploaded = h.store.now();
    h.clock.advance(10);
    // Uploaded after the cutoff: kept, even if unused.
    h.store.component_insert(comp(B, 4)).await.unwrap();
    assert_eq!(h.store.component_usage(A).await.unwrap(), (3, 15));
    let collected = h.store.component_collect(uploaded + 1).await.unwrap();
    assert_eq!(collected.components, 3);
    // Digest 2 went from both its tenants, digest 3 from its one: their
    // bytes went; digest 1 is still used.
    let mut gone = collected.digests.clone();
    gone.sort();
    assert_eq!(gone, [digest(2), digest(3)]);
    assert_eq!(h.store.component_usage(A).await.unwrap(), (1, 5));
    assert!(
        h.store
            .component_get(A, &digest(1))
            .await
            .unwrap()
            .is_some(),
        "a task uses it"
    );
    for (t, n) in [(A, 2), (B, 2), (A, 3)] {
        assert!(h
            .store
            .component_get(t, &digest(n))
            .await
            .unwrap()
            .is_none());
    }
    assert!(
        h.store.component_bytes(&digest(2)).await.unwrap().is_none(),
        "bytes go too"
    );
    assert!(h.store.component_bytes(&digest(1)).await.unwrap().is_some());
    assert!(h
        .store
        .component_get(B, &digest(4))
        .await
        .unwrap()
        .is_some());
    assert_eq!(
        h.store.component_collect(uploaded + 1).await.unwrap(),
        Collected::default()
    );
    assert_eq!(h.store.component_usage("nobody").await.unwrap(), (0, 0));
}
