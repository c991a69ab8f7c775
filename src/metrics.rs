//! Prometheus metrics: what this process counts as it works, and the text a
//! scrape of `GET /metrics` reads (OpenMetrics, by `prometheus-client`).
//!
//! One set per process, in a static: the figures come from deep in the
//! runner, the stores, the sandbox and the webhook sender, and a handle
//! threaded through each of their constructors would buy nothing (a
//! process serves one database). Tests that run several servers in one
//! process see their sums, which only ever grow.
//!
//! Series carry no tenant unless the server runs with
//! `--metrics-per-tenant`: a tenant label multiplies every series by the
//! tenants, which a large installation's Prometheus may not want. Queue
//! names are the tenants' own: past `MAX_QUEUES` of them, the rest count as
//! `_other`, so that a tenant making queues by the thousand cannot grow
//! this process's memory (or its scrape) without bound. The HTTP method
//! label is as bounded: a method the API does not use is `other`.
//!
//! It takes plain numbers and names, never a store's or the sandbox's
//! types (`figures` reads those for it): the store and the sandbox call it,
//! so it sits below them.

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{OnceLock, RwLock};
use std::time::Duration;

/// A series' labels, in the order they are written.
pub type Labels = Vec<(&'static str, String)>;

type Histograms = Family<Labels, Histogram, fn() -> Histogram>;

/// Queues named in series; the rest are `_other`.
pub const MAX_QUEUES: usize = 1000;
/// What queues past `MAX_QUEUES` are counted as.
pub const OTHER_QUEUE: &str = "_other";

/// The content type of what `encode` writes.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Seconds, from half a millisecond to about half a minute.
fn seconds() -> Histogram {
    Histogram::new(exponential_buckets(0.0005, 2.0, 17))
}

/// Bytes, from 64 KiB to 8 GiB.
fn bytes() -> Histogram {
    Histogram::new(exponential_buckets(65_536.0, 2.0, 18))
}

/// Counts of things in one batch, from 1 to 4096.
fn sizes() -> Histogram {
    Histogram::new(exponential_buckets(1.0, 2.0, 13))
}

pub struct Metrics {
    registry: Registry,
    per_tenant: AtomicBool,
    queues: RwLock<HashSet<String>>,
    enqueued: Family<Labels, Counter>,
    ended: Family<Labels, Counter>,
    attempts: Family<Labels, Counter>,
    attempt_seconds: Histograms,
    start_delay_seconds: Histograms,
    fuel: Family<Labels, Counter>,
    outbound_requests: Family<Labels, Counter>,
    outbound_bytes: Family<Labels, Counter>,
    peak_memory: Histogram,
    compile_cache: Family<Labels, Counter>,
    compile_seconds: Histogram,
    write_batch: Histograms,
    commit_seconds: Histograms,
    claim_seconds: Histogram,
    claimed: Counter,
    rescued: Counter,
    deliveries: Family<Labels, Counter>,
    requests: Family<Labels, Counter>,
    request_seconds: Histograms,
    // Read when scraped.
    jobs: Family<Labels, Gauge>,
    rollout_percent: Family<Labels, Gauge>,
    rollout_jobs: Family<Labels, Gauge>,
    rollout_attempts: Family<Labels, Gauge>,
    rollout_fuel: Family<Labels, Gauge>,
    instances: Gauge,
    instances_max: Gauge,
    held: Gauge,
}

/// The process's metrics.
pub fn get() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::new)
}

impl Metrics {
    fn new() -> Metrics {
        let m = Metrics {
            registry: Registry::default(),
            per_tenant: AtomicBool::new(false),
            queues: RwLock::new(HashSet::new()),
            enqueued: Family::default(),
            ended: Family::default(),
            attempts: Family::default(),
            attempt_seconds: Family::new_with_constructor(seconds),
            start_delay_seconds: Family::new_with_constructor(seconds),
            fuel: Family::default(),
            outbound_requests: Family::default(),
            outbound_bytes: Family::default(),
            peak_memory: bytes(),
            compile_cache: Family::default(),
            compile_seconds: seconds(),
            write_batch: Family::new_with_constructor(sizes),
            commit_seconds: Family::new_with_constructor(seconds),
            claim_seconds: seconds(),
            claimed: Counter::default(),
            rescued: Counter::default(),
            deliveries: Family::default(),
            requests: Family::default(),
            request_seconds: Family::new_with_constructor(seconds),
            jobs: Family::default(),
            rollout_percent: Family::default(),
            rollout_jobs: Family::default(),
            rollout_attempts: Family::default(),
            rollout_fuel: Family::default(),
            instances: Gauge::default(),
            instances_max: Gauge::default(),
            held: Gauge::default(),
        };
        let mut r = Registry::with_prefix("taskbox");
        r.register(
            "jobs",
            "Jobs not ended, by queue and status (read from the database when scraped)",
            m.jobs.clone(),
        );
        r.register(
            "rollout_percent",
            "The share of new jobs a staged task version gets, by tenant, task and version \
             (read from the database when scraped; the newest rollouts, at most MAX_ROLLOUTS)",
            m.rollout_percent.clone(),
        );
        r.register(
            "rollout_jobs",
            "Jobs that ended since a rollout began, by tenant, task, version, role (staged, live) \
             and status (completed, failed)",
            m.rollout_jobs.clone(),
        );
        r.register(
            "rollout_attempts",
            "Attempts since a rollout began, by tenant, task, version and role",
            m.rollout_attempts.clone(),
        );
        r.register(
            "rollout_fuel",
            "Fuel burned since a rollout began, by tenant, task, version and role",
            m.rollout_fuel.clone(),
        );
        r.register(
            "jobs_enqueued",
            "Jobs enqueued, by queue",
            m.enqueued.clone(),
        );
        r.register(
            "jobs_ended",
            "Jobs that reached an end (completed, failed, cancelled), by queue, status and error kind",
            m.ended.clone(),
        );
        r.register(
            "attempts",
            "Attempts run by this process's runners, by queue and outcome",
            m.attempts.clone(),
        );
        r.register(
            "attempt_duration_seconds",
            "How long attempts ran, from claim to end, by queue",
            m.attempt_seconds.clone(),
        );
        r.register(
            "start_delay_seconds",
            "From a job's due time (its enqueue, or its retry's) to its attempt's start, by queue",
            m.start_delay_seconds.clone(),
        );
        r.register("fuel_used", "Fuel burned by attempts", m.fuel.clone());
        r.register(
            "outbound_requests",
            "Guests' outbound HTTP requests, by result (sent, refused by the host)",
            m.outbound_requests.clone(),
        );
        r.register(
            "outbound_bytes",
            "Guests' outbound HTTP body bytes, by direction (sent, received)",
            m.outbound_bytes.clone(),
        );
        r.register(
            "attempt_peak_memory_bytes",
            "The most linear memory an attempt's guest had",
            m.peak_memory.clone(),
        );
        r.register(
            "compile_cache",
            "Components loaded to run, by where they came from: memory, disk (the compile cache) or compiled",
            m.compile_cache.clone(),
        );
        r.register(
            "compile_seconds",
            "How long compiling a component took",
            m.compile_seconds.clone(),
        );
        r.register(
            "store_write_batch_size",
            "Writes committed together, by backend and kind",
            m.write_batch.clone(),
        );
        r.register(
            "store_commit_seconds",
            "How long a batch of writes took to commit, by backend and kind",
            m.commit_seconds.clone(),
        );
        r.register(
            "claim_seconds",
            "How long a claim of due jobs took",
            m.claim_seconds.clone(),
        );
        r.register(
            "jobs_claimed",
            "Jobs claimed by this process's runners",
            m.claimed.clone(),
        );
        r.register(
            "leases_rescued",
            "Running jobs whose lease expired (their runner was lost) and that were rescued",
            m.rescued.clone(),
        );
        r.register(
            "webhook_deliveries",
            "Webhook delivery tries, by result",
            m.deliveries.clone(),
        );
        r.register(
            "http_requests",
            "API requests answered, by method, route and status",
            m.requests.clone(),
        );
        r.register(
            "http_request_duration_seconds",
            "How long API requests took to answer, by route",
            m.request_seconds.clone(),
        );
        r.register(
            "sandbox_instances",
            "Guest instances alive now",
            m.instances.clone(),
        );
        r.register(
            "sandbox_instances_max",
            "Guest instances the pooling allocator has room for",
            m.instances_max.clone(),
        );
        r.register(
            "leases_held",
            "Jobs this process's runners hold under lease",
            m.held.clone(),
        );
        Metrics { registry: r, ..m }
    }

    /// Adds a tenant label to the series that take one, from now on.
    pub fn set_per_tenant(&self, on: bool) {
        self.per_tenant.store(on, Ordering::Relaxed);
    }

    /// The label of queue `q`: its name, unless `MAX_QUEUES` others were
    /// named first.
    fn queue(&self, q: &str) -> String {
        let known = self.queues.read().unwrap_or_else(|p| p.into_inner());
        if known.contains(q) {
            return q.to_owned();
        }
        let full = known.len() >= MAX_QUEUES;
        drop(known);
        if full {
            return OTHER_QUEUE.to_owned();
        }
        let mut known = self.queues.write().unwrap_or_else(|p| p.into_inner());
        if known.len() < MAX_QUEUES {
            known.insert(q.to_owned());
            return q.to_owned();
        }
        OTHER_QUEUE.to_owned()
    }

    fn tenant(&self, mut labels: Labels, tenant: &str) -> Labels {
        if self.per_tenant.load(Ordering::Relaxed) {
            labels.push(("tenant", tenant.to_owned()));
        }
        labels
    }

    pub fn enqueued(&self, tenant: &str, queue: &str, n: u64) {
        let labels = self.tenant(vec![("queue", self.queue(queue))], tenant);
        self.enqueued.get_or_create(&labels).inc_by(n);
    }

    /// A job reached an end: `error_kind` is empty for one that completed
    /// or was cancelled.
    pub fn ended(&self, tenant: &str, queue: &str, status: &str, error_kind: &str) {
        let labels = self.tenant(
            vec![
                ("queue", self.queue(queue)),
                ("status", status.to_owned()),
                ("error_kind", error_kind.to_owned()),
            ],
            tenant,
        );
        self.ended.get_or_create(&labels).inc();
    }

    /// An attempt ran here: its outcome (`completed`, or its error kind),
    /// how long it took, its fuel and its peak memory.
    pub fn attempt(&self, a: AttemptFigures<'_>) {
        let queue = self.queue(a.queue);
        self.attempts
            .get_or_create(&vec![
                ("queue", queue.clone()),
                ("outcome", a.outcome.to_owned()),
            ])
            .inc();
        self.attempt_seconds
            .get_or_create(&vec![("queue", queue)])
            .observe(a.ran_for.as_secs_f64());
        self.fuel
            .get_or_create(&self.tenant(Vec::new(), a.tenant))
            .inc_by(a.fuel);
        if let Some(peak) = a.peak_memory {
            self.peak_memory.observe(peak as f64);
        }
        if [
            a.requests_sent,
            a.requests_refused,
            a.bytes_sent,
            a.bytes_received,
        ] != [0; 4]
        {
            for (result, v) in [("sent", a.requests_sent), ("refused", a.requests_refused)] {
                self.outbound_requests
                    .get_or_create(&self.tenant(vec![("result", result.to_owned())], a.tenant))
                    .inc_by(v);
            }
            for (direction, v) in [("sent", a.bytes_sent), ("received", a.bytes_received)] {
                self.outbound_bytes
                    .get_or_create(
                        &self.tenant(vec![("direction", direction.to_owned())], a.tenant),
                    )
                    .inc_by(v);
            }
        }
    }

    /// An attempt started `delay` after its job was due.
    pub fn started(&self, queue: &str, delay: Duration) {
        self.start_delay_seconds
            .get_or_create(&vec![("queue", self.queue(queue))])
            .observe(delay.as_secs_f64());
    }

    /// A component was loaded to run: from `memory`, `disk` or `compiled`
    /// (with how long that took).
    pub fn loaded(&self, from: &'static str, compiling: Option<Duration>) {
        self.compile_cache
            .get_or_create(&vec![("from", from.to_owned())])
            .inc();
        if let Some(d) = compiling {
            self.compile_seconds.observe(d.as_secs_f64());
        }
    }

    /// A batch of `n` writes of `kind` committed on `backend` in `took`.
    pub fn committed(&self, backend: &'static str, kind: &'static str, n: usize, took: Duration) {
        let labels = vec![("backend", backend.to_owned()), ("kind", kind.to_owned())];
        self.write_batch.get_or_create(&labels).observe(n as f64);
        self.commit_seconds
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
    }

    /// A claim loop's claim took `took`.
    pub fn claim_took(&self, took: Duration) {
        self.claim_seconds.observe(took.as_secs_f64());
    }

    /// Jobs claimed, by a claim loop or with their insert.
    pub fn claimed(&self, n: usize) {
        self.claimed.inc_by(n as u64);
    }

    pub fn rescued(&self, n: usize) {
        self.rescued.inc_by(n as u64);
    }

    /// A webhook delivery try: `delivered`, `failed` (tried again later)
    /// or `dead` (given up).
    pub fn delivery(&self, result: &'static str) {
        self.deliveries
            .get_or_create(&vec![("result", result.to_owned())])
            .inc();
    }

    /// An API request answered; `route` is its matched path
    /// (`/v1/jobs/{id}`), never the raw one (cardinality).
    pub fn request(&self, method: &str, route: &str, status: u16, took: Duration) {
        // hyper takes any token as a method: only the API's own are named.
        let method = match method {
            "GET" | "POST" | "PUT" | "DELETE" | "HEAD" | "OPTIONS" | "PATCH" => method,
            _ => "other",
        };
        self.requests
            .get_or_create(&vec![
                ("method", method.to_owned()),
                ("route", route.to_owned()),
                ("status", status.to_string()),
            ])
            .inc();
        self.request_seconds
            .get_or_create(&vec![("route", route.to_owned())])
            .observe(took.as_secs_f64());
    }

    /// The text of a scrape, with what is read when scraped.
    pub fn encode(&self, now: Scraped) -> String {
        self.jobs.clear();
        for (queue, status, n) in now.jobs {
            // Added, not set: many queues may count as `_other`.
            self.jobs
                .get_or_create(&vec![
                    ("queue", self.queue(&queue)),
                    ("status", status.to_owned()),
                ])
                .inc_by(i64::try_from(n).unwrap_or(i64::MAX));
        }
        for family in [
            &self.rollout_percent,
            &self.rollout_jobs,
            &self.rollout_attempts,
            &self.rollout_fuel,
        ] {
            family.clear();
        }
        let n = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        for r in now.rollouts.iter().take(MAX_ROLLOUTS) {
            for v in &r.versions {
                let labels = |more: &[(&'static str, &str)]| -> Labels {
                    let mut l = vec![
                        ("tenant", r.tenant.clone()),
                        ("task", r.task.clone()),
                        ("version", v.version.to_string()),
                        ("role", v.role.to_owned()),
                    ];
                    l.extend(more.iter().map(|(k, v)| (*k, (*v).to_owned())));
                    l
                };
                if v.role == "staged" {
                    self.rollout_percent
                        .get_or_create(&labels(&[]))
                        .set(i64::from(r.percent));
                }
                for (status, count) in [("completed", v.completed), ("failed", v.failed)] {
                    self.rollout_jobs
                        .get_or_create(&labels(&[("status", status)]))
                        .set(n(count));
                }
                self.rollout_attempts
                    .get_or_create(&labels(&[]))
                    .set(n(v.attempts));
                self.rollout_fuel.get_or_create(&labels(&[])).set(n(v.fuel));
            }
        }
        self.instances.set(now.instances);
        self.instances_max.set(now.instances_max);
        self.held.set(now.held);
        let mut out = String::new();
        // Writing to a String does not fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}

/// One attempt's figures.
pub struct AttemptFigures<'a> {
    pub tenant: &'a str,
    pub queue: &'a str,
    pub outcome: &'a str,
    pub ran_for: Duration,
    pub fuel: u64,
    pub peak_memory: Option<u64>,
    /// Its outbound HTTP: requests that went out, requests the host
    /// refused, body bytes sent and received (all 0: it made none).
    pub requests_sent: u64,
    pub requests_refused: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
}

/// What a scrape reads at its time.
#[derive(Debug, Default)]
pub struct Scraped {
    /// (queue, status, jobs) of jobs not ended.
    pub jobs: Vec<(String, &'static str, u64)>,
    /// The rollouts in progress, newest first (at most `MAX_ROLLOUTS` are
    /// written).
    pub rollouts: Vec<RolloutScraped>,
    pub instances: i64,
    pub instances_max: i64,
    pub held: i64,
}

/// Most rollouts a scrape shows: each is a handful of series per version,
/// and a tenant's tasks are its own to name.
pub const MAX_ROLLOUTS: usize = 50;

/// A rollout in progress as a scrape shows it.
#[derive(Debug)]
pub struct RolloutScraped {
    pub tenant: String,
    pub task: String,
    pub percent: u8,
    pub versions: Vec<VersionScraped>,
}

/// What one version of a rollout did since it began.
#[derive(Debug)]
pub struct VersionScraped {
    pub version: u32,
    /// `staged` or `live`.
    pub role: &'static str,
    pub completed: u64,
    pub failed: u64,
    pub attempts: u64,
    pub fuel: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scrape_shows_what_was_counted() {
        let m = Metrics::new();
        m.enqueued("acme", "default", 3);
        m.ended("acme", "default", "failed", "trap");
        m.set_per_tenant(true);
        m.enqueued("acme", "default", 1);
        let text = m.encode(Scraped {
            jobs: vec![("default".into(), "queued", 7)],
            rollouts: vec![RolloutScraped {
                tenant: "acme".into(),
                task: "invoice".into(),
                percent: 25,
                versions: vec![
                    VersionScraped {
                        version: 3,
                        role: "staged",
                        completed: 9,
                        failed: 1,
                        attempts: 11,
                        fuel: 500,
                    },
                    VersionScraped {
                        version: 2,
                        role: "live",
                        completed: 30,
                        failed: 0,
                        attempts: 30,
                        fuel: 1200,
                    },
                ],
            }],
            instances: 2,
            instances_max: 100,
            held: 1,
        });
        for line in [
            "taskbox_rollout_percent{tenant=\"acme\",task=\"invoice\",version=\"3\",role=\"staged\"} 25",
            "taskbox_rollout_jobs{tenant=\"acme\",task=\"invoice\",version=\"3\",role=\"staged\",status=\"failed\"} 1",
            "taskbox_rollout_jobs{tenant=\"acme\",task=\"invoice\",version=\"2\",role=\"live\",status=\"completed\"} 30",
            "taskbox_rollout_attempts{tenant=\"acme\",task=\"invoice\",version=\"3\",role=\"staged\"} 11",
            "taskbox_rollout_fuel{tenant=\"acme\",task=\"invoice\",version=\"2\",role=\"live\"} 1200",
        ] {
            assert!(text.contains(line), "{line}\n{text}");
        }
        assert!(!text
            .contains("taskbox_rollout_percent{tenant=\"acme\",task=\"invoice\",version=\"2\""));
        assert!(
            text.contains("taskbox_jobs_enqueued_total{queue=\"default\"} 3"),
            "{text}"
        );
        assert!(
            text.contains("taskbox_jobs_enqueued_total{queue=\"default\",tenant=\"acme\"} 1"),
            "{text}"
        );
        assert!(
            text.contains(
                "taskbox_jobs_ended_total{queue=\"default\",status=\"failed\",error_kind=\"trap\"} 1"
            ),
            "{text}"
        );
        assert!(
            text.contains("taskbox_jobs{queue=\"default\",status=\"queued\"} 7"),
            "{text}"
        );
        assert!(text.contains("taskbox_sandbox_instances 2"), "{text}");
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    #[test]
    fn queues_past_the_cap_count_as_one() {
        let m = Metrics::new();
        for n in 0..MAX_QUEUES + 5 {
            m.enqueued("t", &format!("q{n}"), 1);
        }
        m.request("FOO", "/v1/jobs", 405, Duration::ZERO);
        let text = m.encode(Scraped {
            jobs: vec![
                ("q0".into(), "queued", 1),
                ("late-1".into(), "queued", 2),
                ("late-2".into(), "queued", 3),
            ],
            ..Scraped::default()
        });
        assert!(
            text.contains("taskbox_jobs_enqueued_total{queue=\"_other\"} 5"),
            "{text}"
        );
        assert!(
            text.contains("taskbox_jobs{queue=\"_other\",status=\"queued\"} 5"),
            "{text}"
        );
        assert!(
            text.contains("taskbox_jobs{queue=\"q0\",status=\"queued\"} 1"),
            "{text}"
        );
        assert!(text.contains("method=\"other\""), "{text}");
        assert!(!text.contains("FOO"), "{text}");
    }

    #[test]
    fn gauges_read_at_a_scrape_forget_what_is_gone() {
        let m = Metrics::new();
        m.encode(Scraped {
            jobs: vec![("a".into(), "running", 1)],
            rollouts: vec![RolloutScraped {
                tenant: "t".into(),
                task: "gone".into(),
                percent: 5,
                versions: Vec::new(),
            }],
            ..Scraped::default()
        });
        let text = m.encode(Scraped::default());
        assert!(!text.contains("queue=\"a\""), "{text}");
        assert!(!text.contains("task=\"gone\""), "{text}");
    }
}
