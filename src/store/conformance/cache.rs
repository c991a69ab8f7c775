//! Cases of a deterministic task's result cache: an insert with a key finds
//! the newest job of its tenant that completed with that key inside the TTL
//! and went in completed with its output, no attempt made; a hit is counted
//! in usage with the fuel its source burned, and reported; failed jobs,
//! hits, other tenants' jobs and jobs past the TTL are never sources, and a
//! job due later does not look.

use super::events::events_of;
use super::*;
use crate::events::EventType;

fn keyed(id: &str, tenant: &str, key: &str) -> NewJob {
    NewJob {
        cache: Some(CacheProbe {
            key: key.into(),
            ttl_ms: 60_000,
        }),
        ..NewJob::plain(id, tenant, task_ref(), r#"{"n":1}"#)
    }
}

pub(super) async fn the_result_cache_serves_a_tenants_completed_jobs_within_the_ttl(h: Harness) {
    setup(&h).await;
    // Nothing completed with the key yet: the jobs go in queued.
    let first = insert(&h, keyed("c-1", A, "k")).await;
    assert_eq!(
        (first.status, first.cached_from.as_deref()),
        (JobStatus::Queued, None)
    );
    insert(&h, keyed("c-fails", A, "k-failed")).await;
    // c-1 is retried once, then completes (42 fuel each attempt); the
    // other fails for good.
    for c in claim(&h, 10).await {
        let action = match c.id.as_str() {
            "c-1" => Action::Retry {
                delay_ms: 0,
                error: failure(),
            },
            _ => Action::Fail { error: failure() },
        };
        finalize(&h, &c, action).await;
    }
    let again = claim(&h, 10).await;
    assert_eq!(ids(&again), ["c-1"]);
    finalize(
        &h,
        &again[0],
        Action::Complete {
            output: r#"{"v":7}"#.into(),
        },
    )
    .await;
    let source = get(&h, "c-1").await;
    assert_eq!(source.status, JobStatus::Completed);

    // A job with the key completes at once, with c-1's output.
    h.clock.advance(1_000);
    let hit = insert(&h, keyed("c-2", A, "k")).await;
    assert_eq!(hit.status, JobStatus::Completed);
    assert_eq!(hit.output.as_deref(), Some(r#"{"v":7}"#));
    assert_eq!(hit.cached_from.as_deref(), Some("c-1"));
    assert_eq!(hit.attempts, 0);
    assert_eq!(hit.finished_at, Some(h.clock.now()));
    let read = get(&h, "c-2").await;
    assert_eq!(
        (
            read.status,
            read.output,
            read.cached_from,
            read.attempts,
            read.finished_at
        ),
        (
            JobStatus::Completed,
            hit.output.clone(),
            hit.cached_from.clone(),
            0,
            hit.finished_at
        )
    );
    assert!(attempts(&h, A, "c-2").await.is_empty());
    assert!(claim(&h, 10).await.is_empty(), "a hit is in no line");

    // Counted: one hit, the 84 fuel its source burned; jobs completed.
    let u = h.store.tenant_usage(A).await.unwrap();
    let (hits, saved) = (
        u.current.cache_hits + u.last.cache_hits,
        u.current.fuel_saved + u.last.fuel_saved,
    );
    assert_eq!((hits, saved), (1, 84));
    assert_eq!(u.jobs.queued, 0);
    // Reported: enqueued, then completed naming its source.
    let events = events_of(&h, A).await;
    let of_hit: Vec<_> = events.iter().filter(|e| e.job == "c-2").collect();
    assert_eq!(
        of_hit.iter().map(|e| e.kind).collect::<Vec<_>>(),
        [EventType::Queued, EventType::Completed]
    );
    let detail = of_hit[1].detail.clone().unwrap_or_default();
    assert_eq!(detail.get("cached_from"), Some(&serde_json::json!("c-1")));

    // Not a source: another tenant's job, a failed job, a job due later.
    let other = insert(&h, keyed("c-b", B, "k")).await;
    assert_eq!(other.status, JobStatus::Queued, "never across tenants");
    let after_failure = insert(&h, keyed("c-f2", A, "k-failed")).await;
    assert_eq!(after_failure.status, JobStatus::Queued);
    let later = insert(
        &h,
        NewJob {
            run_at: RunAt::After(5_000),
            ..keyed("c-later", A, "k")
        },
    )
    .await;
    assert_eq!(later.status, JobStatus::Queued);

    // Past the TTL from c-1's end the key misses, though the hit c-2
    // finished later: a hit is never a source.
    h.clock.advance(60_000);
    let late = insert(&h, keyed("c-3", A, "k")).await;
    assert_eq!((late.status, late.cached_from), (JobStatus::Queued, None));
}
