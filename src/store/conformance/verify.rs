//! Cases of what a verification reads: a task's ended jobs whose last
//! attempt ran it, newest first (never a queued job, another task's or
//! tenant's, or a cache hit), and each one's recorded end.

use super::*;

pub(super) async fn a_verification_reads_a_tasks_own_ended_jobs(h: Harness) {
    setup(&h).await;
    let of = |id: &str, tenant: &str, task: &str| {
        NewJob::plain(
            id,
            tenant,
            TaskRef {
                name: task.into(),
                version: 1,
                digest: DIGEST.into(),
            },
            format!(r#"{{"id":"{id}"}}"#),
        )
    };
    for j in [
        of("v-1", A, "t"),
        of("v-2", A, "t"),
        of("v-4", B, "t"),
        of("v-5", A, "u"),
    ] {
        insert(&h, j).await;
    }
    for c in claim(&h, 10).await {
        let action = match c.id.as_str() {
            "v-2" => Action::Fail { error: failure() },
            _ => Action::Complete {
                output: r#"{"ok":true}"#.into(),
            },
        };
        finalize(&h, &c, action).await;
    }
    // A cache hit of v-1's: not a run of its own.
    let keyed = |id: &str| NewJob {
        cache: Some(CacheProbe {
            key: "k".into(),
            ttl_ms: 60_000,
        }),
        ..of(id, A, "t")
    };
    insert(&h, keyed("v-6")).await;
    let c = claim(&h, 10).await;
    for c in c {
        finalize(
            &h,
            &c,
            Action::Complete {
                output: "{}".into(),
            },
        )
        .await;
    }
    // Still queued: not ended.
    insert(&h, of("v-3", A, "t")).await;
    let hit = insert(&h, keyed("v-7")).await;
    assert_eq!(hit.cached_from.as_deref(), Some("v-6"));

    let sample = h.store.ended_sample(A, "t", 10).await.unwrap();
    assert_eq!(sample, ["v-6", "v-2", "v-1"]);
    assert_eq!(h.store.ended_sample(A, "t", 1).await.unwrap(), ["v-6"]);
    assert!(h
        .store
        .ended_sample(A, "none", 10)
        .await
        .unwrap()
        .is_empty());

    let done = h.store.recorded_run(A, "v-1").await.unwrap().unwrap();
    assert_eq!(
        (done.status, done.output.as_deref(), done.fuel, done.version),
        (JobStatus::Completed, Some(r#"{"ok":true}"#), 42, 1)
    );
    assert_eq!(done.input, r#"{"id":"v-1"}"#);
    let failed = h.store.recorded_run(A, "v-2").await.unwrap().unwrap();
    assert_eq!(failed.status, JobStatus::Failed);
    assert_eq!(failed.error.unwrap().code, "boom");
    assert!(h.store.recorded_run(B, "v-1").await.unwrap().is_none());
    assert!(h.store.recorded_run(A, "gone").await.unwrap().is_none());
}
