//! Conformance cases of debounce keys: a burst of enqueues of one key runs
//! once, with the last input, a period after the last; each job replaced
//! ends `cancelled` naming its successor (and says so in its event); a
//! steady stream still runs within `max_wait_ms` of its chain's first
//! enqueue; a job that started, another key and another tenant are never
//! replaced; and a tenant at its `max_queued` may still debounce.

use super::events::events_of;
use super::*;
use crate::events::EventType;
use crate::quota::Quotas;
use crate::store::debounce::{Debounce, Debounced};

fn debounced(id: &str, key: &str, period_ms: u64, max_wait_ms: u64) -> NewJob {
    NewJob {
        debounce: Some(Box::new(Debounced::new(Debounce {
            key: key.into(),
            period_ms,
            max_wait_ms: Some(max_wait_ms),
        }))),
        input: format!(r#"{{"n":"{id}"}}"#),
        ..new_job(id)
    }
}

pub(super) async fn a_debounced_burst_runs_once_with_the_last_input(h: Harness) {
    setup(&h).await;
    // One job a tenant may queue: replacing one costs none of it.
    h.store
        .tenant_put(TenantSettings {
            name: A.into(),
            weight: None,
            quotas: Quotas {
                max_queued: Some(2),
                ..Quotas::default()
            },
        })
        .await
        .unwrap();
    let t0 = h.store.now();
    insert(&h, new_job("plain")).await;
    // Ten enqueues in 900 ms: each replaces the one before.
    let mut made = Vec::new();
    for n in 0..10 {
        let j = insert(&h, debounced(&format!("d{n}"), "k", 1000, 5000)).await;
        let d = j.debounce.clone().expect("the job keeps its debounce");
        let replaced = (n > 0).then(|| format!("d{}", n - 1));
        assert_eq!(
            d.replaced, replaced,
            "d{n}'s answer names the job it replaced"
        );
        assert_eq!(d.since, t0, "d{n}'s chain began with d0");
        assert_eq!(j.run_at, t0 + 100 * n + 1000, "d{n} runs a period on");
        made.push(j);
        h.clock.advance(100);
    }
    // Another tenant's job of the same key is a chain of its own.
    let other = insert(
        &h,
        NewJob {
            tenant: B.into(),
            ..debounced("b0", "k", 1000, 5000)
        },
    )
    .await;
    assert_eq!(other.debounce.unwrap().replaced, None);
    for n in 0..9 {
        let j = get(&h, &format!("d{n}")).await;
        assert_eq!(j.status, JobStatus::Cancelled, "d{n}");
        let e = j.error.expect("a replaced job says why");
        assert_eq!(e.code, "debounced", "d{n}");
        let successor = format!("d{}", n + 1);
        assert_eq!(
            j.debounce.and_then(|d| d.successor),
            Some(successor.clone()),
            "d{n} names its successor"
        );
        assert!(e.message.contains(&successor), "{}", e.message);
    }
    let events = events_of(&h, A).await;
    let cancel = events
        .iter()
        .find(|e| e.job == "d3" && e.kind == EventType::Cancelled)
        .and_then(|e| e.detail.clone())
        .expect("d3's cancel is reported");
    assert_eq!(
        (cancel["reason"].as_str(), cancel["by"].as_str()),
        (Some("debounced"), Some("d4"))
    );
    // Only the plain job now; the last a period after its enqueue, with
    // its input; never before.
    assert_eq!(ids(&claim(&h, 10).await), ["plain"]);
    h.clock.advance(t0 + 900 + 999 - h.store.now());
    assert!(claim(&h, 10).await.iter().all(|c| c.tenant != A));
    h.clock.advance(1);
    let last: Vec<_> = claim(&h, 10)
        .await
        .into_iter()
        .filter(|c| c.tenant == A)
        .collect();
    assert_eq!(ids(&last), ["d9"]);
    assert_eq!(last[0].input, r#"{"n":"d9"}"#);
    // Started, it is not pending: the next enqueue begins a chain.
    let next = insert(&h, debounced("e0", "k", 1000, 5000)).await;
    let d = next.debounce.unwrap();
    assert_eq!((d.replaced, d.since), (None, t0 + 1900));
    assert_eq!(get(&h, "d9").await.status, JobStatus::Running);
}

pub(super) async fn a_steady_stream_runs_within_its_max_wait(h: Harness) {
    setup(&h).await;
    let t0 = h.store.now();
    // An enqueue every 500 ms, each inside the 1 s period of the last:
    // the chain's job runs 3 s after its first, not a period after the
    // last.
    let mut ran = Vec::new();
    for n in 0..14 {
        let now = h.store.now();
        let j = insert(&h, debounced(&format!("s{n:02}"), "k", 1000, 3000)).await;
        let since = j.debounce.as_ref().unwrap().since;
        assert_eq!(
            j.run_at,
            (now + 1000).min(since + 3000),
            "s{n:02} at {}",
            now - t0
        );
        h.clock.advance(500);
        for c in claim(&h, 10).await {
            ran.push((c.id.clone(), h.store.now() - t0));
        }
    }
    // The chains s00..s05 (run at 3000, the wait's end) and s06..s11 (the
    // chain that began at 3000 once s05 had started, run at 6000).
    assert_eq!(
        ran,
        [("s05".to_owned(), 3000), ("s11".to_owned(), 6000)],
        "{ran:?}"
    );
    let s06 = get(&h, "s06").await;
    assert_eq!(s06.debounce.unwrap().since, t0 + 3000);
}

pub(super) async fn concurrent_enqueues_of_a_key_replace_one_another_in_turn(h: Harness) {
    setup(&h).await;
    let writers = 8;
    let per = 5;
    let mut tasks = Vec::new();
    for w in 0..writers {
        let store = h.store.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..per {
                let job = debounced(&format!("w{w}-{i}"), "k", 60_000, 600_000);
                match store.job_insert(vec![job]).await.unwrap().pop().unwrap() {
                    Ok(Inserted::Created(_)) => {}
                    other => panic!("expected a created job, got {other:?}"),
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    // One job is left pending; every other one was replaced by exactly
    // one successor and replaced exactly one, in one unbroken chain.
    let all: Vec<JobRecord> = {
        let mut v = Vec::new();
        for w in 0..writers {
            for i in 0..per {
                v.push(get(&h, &format!("w{w}-{i}")).await);
            }
        }
        v
    };
    let queued: Vec<&JobRecord> = all
        .iter()
        .filter(|j| j.status == JobStatus::Queued)
        .collect();
    assert_eq!(queued.len(), 1, "one pending job is left");
    let by_id: std::collections::HashMap<&str, &JobRecord> =
        all.iter().map(|j| (j.id.as_str(), j)).collect();
    let mut at = queued[0];
    let mut seen = 1;
    while let Some(prev) = at.debounce.as_ref().and_then(|d| d.replaced.as_deref()) {
        let p = by_id[prev];
        assert_eq!(p.status, JobStatus::Cancelled, "{prev}");
        assert_eq!(
            p.debounce.as_ref().and_then(|d| d.successor.as_deref()),
            Some(at.id.as_str()),
            "{prev} names the job that replaced it"
        );
        at = p;
        seen += 1;
    }
    assert_eq!(seen, writers * per, "the chain holds every job once");
    assert!(at.debounce.as_ref().unwrap().replaced.is_none());
}
