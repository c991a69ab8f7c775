//! Conformance cases of throttle keys: at most a key's limit of its jobs
//! start in a period, the rest are parked till their turn in order and
//! none starts early, other keys and plain jobs go on meanwhile, and a
//! long line of one key at the head of the queue holds nothing up.

use super::*;
use crate::store::throttle::Throttle;

fn throttled(id: &str, key: &str, limit: u32, period_ms: u64) -> NewJob {
    NewJob {
        throttle: Some(Throttle {
            key: key.into(),
            limit,
            period_ms,
        }),
        ..new_job(id)
    }
}

pub(super) async fn a_throttle_key_starts_its_limit_a_period_and_parks_the_rest(h: Harness) {
    setup(&h).await;
    let t0 = h.store.now();
    for n in 1..=5 {
        insert(&h, throttled(&format!("a{n}"), "acct", 2, 1000)).await;
    }
    insert(&h, throttled("b1", "bulk", 2, 1000)).await;
    insert(&h, throttled("b2", "bulk", 2, 1000)).await;
    insert(&h, new_job("c")).await;
    assert_eq!(
        get(&h, "a1").await.throttle,
        Some(Throttle {
            key: "acct".into(),
            limit: 2,
            period_ms: 1000
        }),
        "the job keeps its throttle"
    );

    // Two of each key, and the plain job; the rest wait their turns.
    let first = claim_whole(&h, 10).await;
    assert_eq!(ids(&first.jobs), ["a1", "a2", "b1", "b2", "c"]);
    assert!(first.passed_over, "it parked three");
    for (id, turn) in [("a3", 1000), ("a4", 1000), ("a5", 2000)] {
        let j = get(&h, id).await;
        assert_eq!(j.status, JobStatus::Queued, "{id}");
        assert_eq!(j.run_at, t0 + turn, "{id} waits for its turn");
    }
    // Nothing starts before its turn.
    assert!(claim(&h, 10).await.is_empty());
    h.clock.advance(999);
    assert!(claim(&h, 10).await.is_empty());
    h.clock.advance(1);
    assert_eq!(ids(&claim(&h, 10).await), ["a3", "a4"]);
    h.clock.advance(999);
    assert!(claim(&h, 10).await.is_empty());
    h.clock.advance(1);
    assert_eq!(ids(&claim(&h, 10).await), ["a5"]);

    // At t0+2000 one slot started a job this moment (a5), the other a
    // period ago (a4): one new job starts, the next waits a period.
    insert(&h, throttled("a6", "acct", 2, 1000)).await;
    insert(&h, throttled("a7", "acct", 2, 1000)).await;
    assert_eq!(ids(&claim(&h, 10).await), ["a6"]);
    assert_eq!(get(&h, "a7").await.run_at, t0 + 3000);

    // A key's row goes once it holds nothing; a key still holding a slot
    // stays.
    assert_eq!(h.store.throttle_tidy().await.unwrap(), 1, "bulk's row went");
    h.clock.advance(1000);
    assert_eq!(ids(&claim(&h, 10).await), ["a7"]);
    h.clock.advance(1000);
    assert_eq!(h.store.throttle_tidy().await.unwrap(), 1, "acct's row went");
    assert_eq!(h.store.throttle_tidy().await.unwrap(), 0);
    // Gone, a key starts afresh.
    insert(&h, throttled("a8", "acct", 2, 1000)).await;
    insert(&h, throttled("a9", "acct", 2, 1000)).await;
    assert_eq!(ids(&claim(&h, 10).await), ["a8", "a9"]);
}

pub(super) async fn a_throttled_key_at_the_head_of_the_line_holds_nothing_up(h: Harness) {
    setup(&h).await;
    let t0 = h.store.now();
    let jobs: Vec<NewJob> = (0..200)
        .map(|n| throttled(&format!("hot-{n:03}"), "hot", 1, 60_000))
        .chain([new_job("z-after")])
        .collect();
    for r in h.store.job_insert(jobs).await.unwrap() {
        assert!(matches!(r, Ok(Inserted::Created(_))), "{r:?}");
    }
    // Claims of one job at a time: the first hot job, then the plain job
    // behind the other 199 within a few claims.
    let mut got = Vec::new();
    for _ in 0..6 {
        got.extend(
            claim(&h, 1)
                .await
                .into_iter()
                .map(|c| c.id)
                .collect::<Vec<_>>(),
        );
        if got.iter().any(|g| g == "z-after") {
            break;
        }
    }
    assert_eq!(got, ["hot-000", "z-after"]);
    // The hot key's line is parked a minute apart, in order.
    for n in [1, 2, 100, 199] {
        let j = get(&h, &format!("hot-{n:03}")).await;
        assert_eq!(j.run_at, t0 + 60_000 * n, "hot-{n:03}");
    }
    assert!(claim(&h, 10).await.is_empty());
    h.clock.advance(60_000);
    assert_eq!(ids(&claim(&h, 10).await), ["hot-001"]);
}
