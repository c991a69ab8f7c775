//! Cases of the usage export: its lines, by tenant, bucket, task and
//! version, add up to the attempt records they come from (those of
//! `attempts` and each job's last), whichever tenant asks, and count the
//! jobs a result cache completed.

use super::*;
use crate::network_tally::NetworkTally;

fn export(tenant: Option<&str>, to: Millis) -> UsageExportQuery {
    UsageExportQuery {
        tenant: tenant.map(str::to_owned),
        from: 0,
        to,
        bucket_ms: 3_600_000,
    }
}

pub(super) async fn the_usage_export_adds_up_to_the_attempt_records(h: Harness) {
    setup(&h).await;
    let keyed = |id: &str| NewJob {
        cache: Some(CacheProbe {
            key: "same".into(),
            ttl_ms: 60_000,
        }),
        ..new_job(id)
    };
    insert(&h, new_job("u-retried")).await;
    insert(&h, new_job("u-failed")).await;
    insert(&h, keyed("u-source")).await;
    insert(&h, NewJob::plain("u-b", B, task_ref(), "{}")).await;
    let with = |c: &ClaimedJob, fuel: u64, ms: i64, requests: u64| {
        Some(AttemptRecord {
            fuel_used: fuel,
            finished_at: c.started_at + ms,
            peak_memory_bytes: 3 << 20,
            network: (requests > 0).then_some(NetworkTally {
                requests,
                refused: 0,
                bytes_sent: 100,
                bytes_received: 1_000,
            }),
            ..attempt(c, "x", None).unwrap()
        })
    };
    for c in claim(&h, 10).await {
        let (action, fuel, ms, requests) = match c.id.as_str() {
            "u-retried" => (
                Action::Retry {
                    delay_ms: 0,
                    error: failure(),
                },
                1_000,
                7,
                2,
            ),
            "u-failed" => (Action::Fail { error: failure() }, 300, 3, 0),
            _ => (
                Action::Complete {
                    output: "{}".into(),
                },
                50,
                11,
                1,
            ),
        };
        finalize_recording(&h, &c, action, with(&c, fuel, ms, requests)).await;
    }
    let again = claim(&h, 10).await;
    assert_eq!(ids(&again), ["u-retried"]);
    let complete = Action::Complete {
        output: "{}".into(),
    };
    finalize_recording(&h, &again[0], complete, with(&again[0], 2_000, 13, 0)).await;
    h.clock.advance(10);
    let hit = insert(&h, keyed("u-hit")).await;
    assert_eq!(hit.cached_from.as_deref(), Some("u-source"));

    // What the records say, tenant by tenant.
    let mut records: Vec<(String, AttemptRecord)> = Vec::new();
    for (tenant, id) in [
        (A, "u-retried"),
        (A, "u-failed"),
        (A, "u-source"),
        (A, "u-hit"),
        (B, "u-b"),
    ] {
        for a in attempts(&h, tenant, id).await {
            records.push((tenant.to_owned(), a));
        }
    }
    assert_eq!(records.len(), 5, "two of u-retried, one each of three more");
    // The records end a few ms after their start, by the clock: after now.
    let to = h.clock.now() + 60_000;
    for asked in [Some(A), Some(B), None] {
        let lines = h.store.usage_export(export(asked, to)).await.unwrap();
        let mine: Vec<&AttemptRecord> = records
            .iter()
            .filter(|(t, _)| asked.is_none_or(|a| a == t))
            .map(|(_, a)| a)
            .collect();
        let sum = |f: &dyn Fn(&UsageLine) -> u64| lines.iter().map(f).sum::<u64>();
        assert_eq!(
            sum(&|l| l.attempts),
            mine.len() as u64,
            "{asked:?}: {lines:#?}"
        );
        assert_eq!(
            sum(&|l| l.fuel),
            mine.iter().map(|a| a.fuel_used).sum::<u64>()
        );
        let wall = |a: &AttemptRecord| (a.finished_at - a.started_at) as u64;
        assert_eq!(
            sum(&|l| l.wall_ms),
            mine.iter().map(|a| wall(a)).sum::<u64>()
        );
        let mem: f64 = mine
            .iter()
            .map(|a| a.peak_memory_bytes as f64 * wall(a) as f64 / 1_048_576.0)
            .sum();
        let got: f64 = lines.iter().map(|l| l.memory_mib_ms).sum();
        assert!((got - mem).abs() < 1e-6, "{asked:?}: {got} against {mem}");
        let net = |a: &AttemptRecord| a.network.unwrap_or_default();
        assert_eq!(
            sum(&|l| l.http_requests),
            mine.iter().map(|a| net(a).requests).sum::<u64>()
        );
        assert_eq!(
            sum(&|l| l.http_bytes),
            mine.iter()
                .map(|a| net(a).bytes_sent + net(a).bytes_received)
                .sum::<u64>()
        );
        let hits = if asked == Some(B) { 0 } else { 1 };
        assert_eq!(sum(&|l| l.cache_hits), hits, "{asked:?}");
        assert_eq!(sum(&|l| l.fuel_saved), hits * 50, "{asked:?}");
        for l in &lines {
            assert!(asked.is_none_or(|a| a == l.tenant), "{l:?}");
            assert_eq!(l.bucket_start % 3_600_000, 0, "{l:?}");
            assert_eq!((l.task.as_str(), l.version), ("t", 1), "{l:?}");
        }
    }
    // An empty range has no lines.
    let none = h.store.usage_export(export(Some(A), 1)).await.unwrap();
    assert!(none.is_empty(), "{none:?}");
}
