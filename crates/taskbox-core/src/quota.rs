//! What a tenant may take: its weight in the fair share of the runners and
//! its quotas (each set by the admin per tenant, or the server's default),
//! the fixed windows fuel budgets and usage are counted in, and the token
//! bucket that meters enqueues.

use crate::time::Millis;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Fuel budgets and usage are counted per minute, in windows aligned to
/// the minute by the store's clock.
pub const WINDOW_MS: i64 = 60_000;
/// A tenant's weight when the admin set none.
pub const DEFAULT_WEIGHT: u32 = 1;
/// The heaviest weight a tenant can be given.
pub const MAX_WEIGHT: u32 = 10_000;

/// The start of the window `now` falls in.
pub fn window_start(now: Millis) -> Millis {
    now - now.rem_euclid(WINDOW_MS)
}

/// A tenant's quotas. `None` is no limit here; on a tenant it means the
/// server's default applies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Quotas {
    /// Enqueues per second, sustained (a token bucket).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enqueue_per_second: Option<u64>,
    /// Enqueues at once above the rate (the bucket's size; default: one
    /// second of the rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enqueue_burst: Option<u64>,
    /// Jobs queued or waiting at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_queued: Option<u64>,
    /// Jobs running at once, across every runner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_running: Option<u64>,
    /// Fuel the tenant's attempts may burn per minute; past it, its jobs
    /// wait for the next minute (they never fail for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel_per_minute: Option<u64>,
    /// Components stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_components: Option<u64>,
    /// Bytes of components stored, in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_component_bytes: Option<u64>,
    /// Task versions stored, over all the tenant's tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_task_versions: Option<u64>,
}

impl Quotas {
    /// What the server applies when neither the admin nor a flag says otherwise.
    pub const SERVER_DEFAULTS: Quotas = Quotas {
        enqueue_per_second: None,
        enqueue_burst: None,
        max_queued: Some(1_000_000),
        max_running: None,
        fuel_per_minute: None,
        max_components: Some(1_000),
        max_component_bytes: Some(4 << 30),
        max_task_versions: Some(10_000),
    };

    /// The quota names, as the API spells them.
    pub const NAMES: [&'static str; 8] = [
        "enqueue_per_second",
        "enqueue_burst",
        "max_queued",
        "max_running",
        "fuel_per_minute",
        "max_components",
        "max_component_bytes",
        "max_task_versions",
    ];

    /// These quotas, each filled from `defaults` where unset.
    pub fn or(self, defaults: &Quotas) -> Quotas {
        Quotas {
            enqueue_per_second: self.enqueue_per_second.or(defaults.enqueue_per_second),
            enqueue_burst: self.enqueue_burst.or(defaults.enqueue_burst),
            max_queued: self.max_queued.or(defaults.max_queued),
            max_running: self.max_running.or(defaults.max_running),
            fuel_per_minute: self.fuel_per_minute.or(defaults.fuel_per_minute),
            max_components: self.max_components.or(defaults.max_components),
            max_component_bytes: self.max_component_bytes.or(defaults.max_component_bytes),
            max_task_versions: self.max_task_versions.or(defaults.max_task_versions),
        }
    }

    /// Each quota by name, for rendering.
    pub fn entries(&self) -> [(&'static str, Option<u64>); 8] {
        [
            ("enqueue_per_second", self.enqueue_per_second),
            ("enqueue_burst", self.enqueue_burst),
            ("max_queued", self.max_queued),
            ("max_running", self.max_running),
            ("fuel_per_minute", self.fuel_per_minute),
            ("max_components", self.max_components),
            ("max_component_bytes", self.max_component_bytes),
            ("max_task_versions", self.max_task_versions),
        ]
    }

    /// The bucket size enqueues are metered with, if they are.
    pub fn enqueue_bucket(&self) -> Option<(f64, f64)> {
        let rate = self.enqueue_per_second? as f64;
        let burst = self.enqueue_burst.map_or(rate, |b| b as f64).max(1.0);
        Some((rate, burst))
    }
}

/// A quota that refused a request: its name and limit, for the 429.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the tenant's {quota} quota ({limit}) is used up")]
pub struct Exceeded {
    pub quota: &'static str,
    pub limit: u64,
}

/// How long a tenant's quotas are remembered by a process that meters its
/// enqueues; a change made through this process applies at once.
pub const POLICY_FRESH_FOR: Duration = Duration::from_secs(1);
/// Most tenants' quotas remembered.
const MAX_REMEMBERED: usize = 100_000;

/// Each tenant's quotas (its own over the server's defaults), remembered
/// for a second: an enqueue should not cost a lookup of them.
pub struct QuotaCache {
    pub defaults: Quotas,
    entries: Mutex<HashMap<String, (Quotas, Instant)>>,
}

impl QuotaCache {
    pub fn new(defaults: Quotas) -> Self {
        QuotaCache {
            defaults,
            entries: Mutex::new(HashMap::new()),
        }
    }

    pub fn get(&self, tenant: &str) -> Option<Quotas> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .get(tenant)
            .filter(|(_, at)| at.elapsed() < POLICY_FRESH_FOR)
            .map(|(q, _)| *q)
    }

    /// Remembers a tenant's own quotas, filled from the defaults.
    pub fn put(&self, tenant: &str, own: Quotas) -> Quotas {
        let q = own.or(&self.defaults);
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= MAX_REMEMBERED {
            entries.clear();
        }
        entries.insert(tenant.to_owned(), (q, Instant::now()));
        q
    }
}

/// Most tenants' buckets kept; idle ones are forgotten past it.
const MAX_BUCKETS: usize = 100_000;

struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Token buckets, one per tenant, in this process: of enqueues (the
/// admission), and of the reads that scan a tenant's records (the API's
/// heavy reads).
#[derive(Default)]
pub struct RateMeter {
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl RateMeter {
    /// Takes up to `n` whole tokens from the tenant's bucket of `rate` per
    /// second and `burst` deep: as many as it holds. Answers how many it
    /// took and, when fewer than `n`, how long until the next one comes
    /// (`Duration::MAX` for a rate of nothing).
    pub fn take_up_to(&self, tenant: &str, rate: f64, burst: f64, n: u64) -> (u64, Duration) {
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let b = refilled(&mut buckets, tenant, rate, burst);
        // Whole tokens only; `as` saturates a float past u64's range.
        let took = (b.tokens.floor().max(0.0) as u64).min(n);
        b.tokens -= took as f64;
        if took == n {
            return (took, Duration::ZERO);
        }
        if rate <= 0.0 {
            return (took, Duration::MAX);
        }
        (
            took,
            Duration::from_secs_f64((1.0 - b.tokens).max(0.0) / rate),
        )
    }

    /// Takes one token whether the bucket holds it or not (it goes below
    /// empty): how long until that token would have come, zero when it
    /// was there. What is owed is paid back before anything else is taken.
    pub fn owe_one(&self, tenant: &str, rate: f64, burst: f64) -> Duration {
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let b = refilled(&mut buckets, tenant, rate, burst);
        b.tokens -= 1.0;
        if b.tokens >= 0.0 {
            return Duration::ZERO;
        }
        if rate <= 0.0 {
            return Duration::MAX;
        }
        Duration::from_secs_f64(-b.tokens / rate)
    }
}

/// The tenant's bucket, filled by the time since it was last looked at
/// (a new one full); when there are too many, full ones are forgotten
/// first (a full bucket is the same as none).
fn refilled<'a>(
    buckets: &'a mut HashMap<String, Bucket>,
    tenant: &str,
    rate: f64,
    burst: f64,
) -> &'a mut Bucket {
    let now = Instant::now();
    if buckets.len() >= MAX_BUCKETS && !buckets.contains_key(tenant) {
        buckets.retain(|_, b| b.tokens + now.duration_since(b.at).as_secs_f64() * rate < burst);
    }
    let b = buckets.entry(tenant.to_owned()).or_insert(Bucket {
        tokens: burst,
        at: now,
    });
    let refill = now.duration_since(b.at).as_secs_f64() * rate;
    b.tokens = (b.tokens + refill).min(burst);
    b.at = now;
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What is owed delays what comes after it: two owed past a burst of
    /// one at one a second are due in one and two seconds, and a take
    /// meanwhile finds nothing.
    #[test]
    fn an_owed_token_is_paid_back_first() {
        let m = RateMeter::default();
        assert_eq!(m.owe_one("t", 1.0, 1.0), Duration::ZERO);
        let first = m.owe_one("t", 1.0, 1.0);
        let second = m.owe_one("t", 1.0, 1.0);
        assert!(
            first > Duration::from_millis(900) && first <= Duration::from_secs(1),
            "{first:?}"
        );
        assert!(second > Duration::from_millis(1900), "{second:?}");
        let (took, wait) = m.take_up_to("t", 1.0, 1.0, 1);
        assert_eq!(took, 0);
        assert!(wait > Duration::from_secs(2), "{wait:?}");
        // Another tenant's bucket is its own.
        assert_eq!(m.take_up_to("u", 1.0, 1.0, 1).0, 1);
    }

    #[test]
    fn windows_align_to_the_minute() {
        assert_eq!(window_start(0), 0);
        assert_eq!(window_start(59_999), 0);
        assert_eq!(window_start(60_000), 60_000);
        assert_eq!(window_start(125_000), 120_000);
    }

    #[test]
    fn tenant_quotas_fall_back_to_the_defaults() {
        let set = Quotas {
            max_queued: Some(5),
            ..Quotas::default()
        };
        let q = set.or(&Quotas::SERVER_DEFAULTS);
        assert_eq!(q.max_queued, Some(5));
        assert_eq!(q.max_components, Some(1_000));
        assert_eq!(q.max_running, None);
    }

    #[test]
    fn the_bucket_refuses_past_its_burst_and_says_when() {
        let m = RateMeter::default();
        for _ in 0..3 {
            assert_eq!(m.take_up_to("a", 1.0, 3.0, 1).0, 1);
        }
        let (took, wait) = m.take_up_to("a", 1.0, 3.0, 1);
        assert_eq!(took, 0);
        assert!(wait > Duration::from_millis(900) && wait <= Duration::from_secs(1));
        // Another tenant's bucket is its own.
        assert_eq!(m.take_up_to("b", 1.0, 3.0, 1).0, 1);
        // A batch larger than the bucket takes what it holds.
        let (took, wait) = m.take_up_to("c", 1.0, 3.0, 5);
        assert_eq!(took, 3);
        assert!(wait > Duration::ZERO);
        // A rate of nothing never refills.
        let (took, wait) = m.take_up_to("d", 0.0, 1.0, 2);
        assert_eq!((took, wait), (1, Duration::MAX));
    }
}
