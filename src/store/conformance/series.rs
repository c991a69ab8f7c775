//! Cases of what the dashboard's charts read: jobs started (classed by how
//! long they waited from when they were due) and ended, by tenant; and the
//! queue samples, one a queue a minute, replaced within it and deleted
//! once old.

use super::*;
use crate::store::series_sql::{minute_of, SeriesRows};

/// Everything in one bucket: the clock starts at today's time, and a case
/// must not care where a minute or a day begins.
const WIDE: i64 = 1 << 50;

async fn series(h: &Harness, tenant: Option<&str>) -> SeriesRows {
    let mut rows = h
        .store
        .series(UsageExportQuery {
            tenant: tenant.map(str::to_owned),
            from: 0,
            to: h.clock.now() + 60_000,
            bucket_ms: WIDE,
        })
        .await
        .unwrap();
    rows.started.sort();
    rows.ended.sort();
    rows.samples.sort();
    rows
}

pub(super) async fn the_series_count_starts_by_their_wait_and_ends_by_tenant(h: Harness) {
    setup(&h).await;
    let t0 = h.clock.now();
    insert(&h, new_job("s-now")).await;
    let later = NewJob {
        run_at: RunAt::At(t0 + 5_000),
        ..new_job("s-later")
    };
    insert(&h, later).await;
    insert(&h, NewJob::plain("s-b", B, task_ref(), "{}")).await;
    h.clock.advance(7);
    let first = claim(&h, 10).await;
    assert_eq!(ids(&first).len(), 2, "the later one is not due");
    for c in &first {
        let action = if c.tenant == B {
            Action::Fail { error: failure() }
        } else {
            Action::Complete {
                output: "{}".into(),
            }
        };
        finalize(&h, c, action).await;
    }
    // Due at t0 + 5 s, started 20 ms after.
    h.clock.advance(5_000 - 7 + 20);
    let second = claim(&h, 10).await;
    assert_eq!(ids(&second), ["s-later"]);
    let complete = Action::Complete {
        output: "{}".into(),
    };
    finalize(&h, &second[0], complete).await;

    // 7 ms is in [5, 10), class 3; 20 ms in [20, 50), class 5.
    let a = series(&h, Some(A)).await;
    assert_eq!(a.started, [(0, 3, 1), (0, 5, 1)], "{a:?}");
    assert_eq!(a.ended, [(0, "completed".to_owned(), 2)], "{a:?}");
    let b = series(&h, Some(B)).await;
    assert_eq!(b.started, [(0, 3, 1)]);
    assert_eq!(b.ended, [(0, "failed".to_owned(), 1)]);
    let all = series(&h, None).await;
    assert_eq!(all.started, [(0, 3, 2), (0, 5, 1)]);
    assert_eq!(
        all.ended,
        [(0, "completed".to_owned(), 2), (0, "failed".to_owned(), 1)]
    );
    // A range that ends before them has none.
    let before = h
        .store
        .series(UsageExportQuery {
            tenant: None,
            from: 0,
            to: t0,
            bucket_ms: 60_000,
        })
        .await
        .unwrap();
    assert_eq!(before, SeriesRows::default());
}

pub(super) async fn a_queue_sample_is_kept_a_minute_replaced_and_let_go(h: Harness) {
    setup(&h).await;
    let t0 = h.clock.now();
    insert(&h, new_job("q-1")).await;
    insert(&h, new_job("q-2")).await;
    let mail = NewJob {
        queue: "mail".into(),
        ..NewJob::plain("q-b", B, task_ref(), "{}")
    };
    insert(&h, mail).await;
    let not_due = NewJob {
        run_at: RunAt::At(t0 + 3_600_000),
        ..new_job("q-later")
    };
    insert(&h, not_due).await;
    h.clock.advance(3);
    let keep = 3_600_000;
    assert_eq!(
        h.store.queue_sample(keep).await.unwrap(),
        2,
        "two queues have jobs due"
    );
    let rows = series(&h, None).await;
    assert_eq!(
        rows.samples,
        [
            (0, A.to_owned(), "default".to_owned(), 2, 3),
            (0, B.to_owned(), "mail".to_owned(), 1, 3)
        ],
        "{rows:?}"
    );
    assert_eq!(series(&h, Some(B)).await.samples.len(), 1);

    // A later sample in the same minute replaces the minute's: B's queue
    // is empty now, so it has no row.
    let claimed = h
        .store
        .job_claim(ClaimParams {
            owner: "r1".into(),
            queues: Some(vec!["mail".into()]),
            limit: 10,
            lease_ms: 30_000,
            only_tenants: None,
            begin_each: u32::MAX,
            caps: Default::default(),
        })
        .await
        .unwrap()
        .jobs;
    assert_eq!(ids(&claimed), ["q-b"]);
    h.store.queue_sample(keep).await.unwrap();
    let rows = series(&h, None).await;
    assert_eq!(
        rows.samples,
        [(0, A.to_owned(), "default".to_owned(), 2, 3)],
        "{rows:?}"
    );

    // Another minute's sample is its own row; one older than `keep` goes.
    let minute = minute_of(h.clock.now());
    h.clock.advance(60_000);
    h.store.queue_sample(keep).await.unwrap();
    let by_minute = |h: &Harness| {
        let store = h.store.clone();
        let to = h.clock.now() + 60_000;
        async move {
            let rows = store
                .series(UsageExportQuery {
                    tenant: Some(A.to_owned()),
                    from: 0,
                    to,
                    bucket_ms: 60_000,
                })
                .await
                .unwrap();
            rows.samples
                .into_iter()
                .map(|(bucket, _, _, depth, _)| (bucket, depth))
                .collect::<Vec<_>>()
        }
    };
    let mut two = by_minute(&h).await;
    two.sort();
    assert_eq!(two, [(minute, 2), (minute + 60_000, 2)]);
    h.clock.advance(keep + 60_000);
    h.store.queue_sample(keep).await.unwrap();
    let left = by_minute(&h).await;
    assert_eq!(
        left,
        [(minute_of(h.clock.now()), 3)],
        "q-later is due by now"
    );
}
