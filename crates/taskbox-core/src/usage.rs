//! A tenant's usage figures, made from what its statements read: its
//! counters' windows (the current and the last) and, for the usage export,
//! its attempt records and cache hits by task version and bucket.

use crate::quota::{window_start, WINDOW_MS};
use crate::records::{JobGauges, TenantUsage, UsageLine, UsageWindow};
use crate::time::Millis;

/// window_start, fuel, wall_ms, attempts, completed, failed, cancelled,
/// http_requests, http_bytes, cache_hits, fuel_saved.
pub type UsageRow = (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64);

/// A row of `usage_sql::attempts`: tenant, bucket, task, version, attempts,
/// fuel, wall ms, MiB·ms, requests, bytes.
pub type AttemptUsageRow = (String, i64, String, i64, i64, i64, i64, f64, i64, i64);

/// A row of `usage_sql::cache_hits`: tenant, bucket, task, version, hits,
/// fuel saved.
pub type CacheHitRow = (String, i64, String, i64, i64, i64);

type LineKey = (String, i64, String, i64);

/// The line of a tenant's task version in a bucket, made when missing.
fn line_of(
    lines: &mut std::collections::BTreeMap<LineKey, UsageLine>,
    (tenant, bucket, task, version): LineKey,
) -> &mut UsageLine {
    lines
        .entry((tenant.clone(), bucket, task.clone(), version))
        .or_insert_with(|| UsageLine {
            tenant,
            bucket_start: bucket,
            task,
            version: u32::try_from(version).unwrap_or(0),
            ..UsageLine::default()
        })
}

/// The export's lines from both statements' rows, one per tenant, bucket,
/// task and version, in that order.
pub fn usage_lines(attempts: Vec<AttemptUsageRow>, hits: Vec<CacheHitRow>) -> Vec<UsageLine> {
    let n = |v: i64| u64::try_from(v).unwrap_or(0);
    let mut lines = std::collections::BTreeMap::new();
    for (tenant, bucket, task, version, count, fuel, wall, mem, req, bytes) in attempts {
        let l = line_of(&mut lines, (tenant, bucket, task, version));
        l.attempts += n(count);
        l.fuel += n(fuel);
        l.wall_ms += n(wall);
        l.memory_mib_ms += mem;
        l.http_requests += n(req);
        l.http_bytes += n(bytes);
    }
    for (tenant, bucket, task, version, count, saved) in hits {
        let l = line_of(&mut lines, (tenant, bucket, task, version));
        l.cache_hits += n(count);
        l.fuel_saved += n(saved);
    }
    lines.into_values().collect()
}

/// The start of the window before the current one, which `usage_from`
/// also wants.
pub fn last_window(now: Millis) -> Millis {
    window_start(now) - WINDOW_MS
}

/// A tenant's usage from its gauges (queued, running, waiting) and the rows
/// of its current and last windows.
pub fn usage_from(jobs: Option<(i64, i64, i64)>, windows: &[UsageRow], now: Millis) -> TenantUsage {
    let n = |v: i64| u64::try_from(v).unwrap_or(0);
    let window = |start: Millis| {
        windows.iter().find(|w| w.0 == start).map_or(
            UsageWindow {
                start,
                ..UsageWindow::default()
            },
            |w| UsageWindow {
                start,
                fuel: n(w.1),
                wall_ms: n(w.2),
                attempts: n(w.3),
                completed: n(w.4),
                failed: n(w.5),
                cancelled: n(w.6),
                http_requests: n(w.7),
                http_bytes: n(w.8),
                cache_hits: n(w.9),
                fuel_saved: n(w.10),
            },
        )
    };
    TenantUsage {
        jobs: jobs.map_or(JobGauges::default(), |(q, r, w)| JobGauges {
            queued: n(q),
            running: n(r),
            waiting: n(w),
        }),
        current: window(window_start(now)),
        last: window(last_window(now)),
    }
}
