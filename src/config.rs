//! The server's settings, from flags and `TASKBOX_*` variables, with their
//! defaults written out, validated before anything starts. A `TASKBOX_*`
//! variable this version does not know is refused, so a misspelling does
//! not pass for a default.

use crate::quota::Quotas;
use crate::runner::decision::AttemptRules;
use crate::store::Durability;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The `TASKBOX_*` variables read without a flag, each with what it sets. Every flag's own
/// variable is named in the command line's parser (`cli::known_variables` joins the two), so
/// that a flag given a variable is known without a second list to keep.
pub const UNFLAGGED_VARIABLES: &[(&str, &str)] = &[
    (
        "TASKBOX_ADMIN_TOKEN",
        "`serve`: the admin token. Absent, the first start makes one and prints it once; set, it replaces the stored one at each start.",
    ),
    (
        "TASKBOX_LOG",
        "What is logged, in `tracing`'s filter syntax (`warn` by default; `info` adds a line per API request). `RUST_LOG` is read when it is absent.",
    ),
    (
        "TASKBOX_GUESTS",
        "The test suite's: where the built example guests are (`target/guests` by default).",
    ),
];

/// Most attempts one process runs at once.
pub const MAX_RUNNERS: usize = 1024;
pub use crate::bounds::MAX_COMPONENT_BYTES_CEILING;
/// Largest JSON body the server can be told to accept.
pub const MAX_BODY_BYTES_CEILING: usize = 64 << 20;
/// Longest grace period on stop.
pub const MAX_GRACE: Duration = Duration::from_secs(3600);
/// Longest snooze floor the server can be told to keep.
pub const MAX_SNOOZE_FLOOR_MS: u64 = 3_600_000;

/// Validated settings of `taskbox serve` and `taskbox worker`.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Where the HTTP API listens; `None` runs no API (a worker).
    pub listen: Option<SocketAddr>,
    /// Migrate the database's schema at start (PostgreSQL; SQLite always
    /// migrates the file it owns).
    pub migrate: bool,
    pub data_dir: PathBuf,
    /// `sqlite://…` or `postgres://…`; defaults to `taskbox.db` in the
    /// data dir.
    pub database_url: String,
    pub runners: usize,
    pub durability: Durability,
    pub queues: Option<Vec<String>>,
    pub grace: Duration,
    /// How long a claim holds a job without a renewal before another
    /// process may rescue it.
    pub lease: Duration,
    /// The runner time, per slot, of one tenant's jobs a runner may hold
    /// claimed ahead (DESIGN §3.4.0d).
    pub claim_ahead: Duration,
    pub max_body_bytes: usize,
    pub max_component_bytes: usize,
    /// From `TASKBOX_ADMIN_TOKEN`; `None` generates one at first start.
    pub admin_token: Option<String>,
    /// Sandbox instance slots (each reserves address space up front).
    pub max_instances: u32,
    /// Where compiled components are cached; default `DATA_DIR/compiled`.
    pub compile_cache: Option<PathBuf>,
    /// The quotas of tenants the admin set none for (`None`: no limit).
    pub quotas: Quotas,
    /// Snooze floor and cap.
    pub rules: AttemptRules,
    /// How long ended jobs are kept before the pruner deletes them.
    pub retention: crate::maintenance::pruner::Retention,
    /// Told of each attempt's start and end (benchmarks, tests).
    pub observer: Option<crate::runner::Observer>,
    /// How webhooks are delivered.
    pub webhooks: crate::webhooks::WebhookConfig,
    /// What guests' outbound HTTP may do at most.
    pub network: crate::sandbox::NetworkConfig,
    /// Event streams one tenant may have open at once.
    pub max_event_streams: u32,
    /// Each tenant's rate of reads that scan its records (`GET /v1/series`,
    /// `GET /v1/usage/export`), a second; a burst of five seconds of it.
    pub reads_per_second: u32,
    /// An address of its own where `/metrics` is served without a token.
    pub metrics_listen: Option<SocketAddr>,
    /// Series by tenant (as many series as tenants).
    pub metrics_per_tenant: bool,
    /// The key tenants' secrets are sealed with; `None`:
    /// `DATA_DIR/secrets.key`. Made at the first start when absent.
    pub secrets_key_file: Option<PathBuf>,
    /// The least time between two slots of a schedule.
    pub schedule_min_interval: Duration,
    /// How tenants' components are compiled.
    pub compile: CompileSettings,
    /// How long the API waits for a client, and for how many at once.
    pub http: HttpSettings,
    /// Where jobs' traces are sent (`--otlp-endpoint`); `None`: nowhere.
    pub otlp: Option<crate::otel::OtlpEndpoint>,
}

/// How long the API waits for a client's request, and how many
/// connections it keeps open: a client that sends slowly, or not at all,
/// holds a connection for a bounded time and one of a bounded number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpSettings {
    /// A request's headers arrive within this, from the connection's start
    /// or from their first byte after a keep-alive pause.
    pub header_timeout: Duration,
    /// A request's body arrives within this, from when it is first read.
    pub body_timeout: Duration,
    /// A keep-alive connection with no request for this long is closed.
    pub idle_timeout: Duration,
    /// Connections open at once; past it, new ones wait to be accepted.
    pub max_connections: usize,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(60),
            max_connections: 4096,
        }
    }
}

/// The range of `--http-header-timeout-ms`, `--http-body-timeout-ms` and
/// `--http-idle-timeout-ms`.
pub const HTTP_TIMEOUT_MS: std::ops::RangeInclusive<u64> = 100..=3_600_000;
/// The range of `--http-max-connections`.
pub const HTTP_MAX_CONNECTIONS: std::ops::RangeInclusive<usize> = 1..=1_000_000;

/// How tenants' components are compiled: each in a child process held to
/// a time and a memory limit, a few at once, each of another tenant, the
/// artifacts cached on disk up to a size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileSettings {
    pub timeout: Duration,
    pub max_memory_mb: u64,
    pub slots: usize,
    pub cache_max_bytes: u64,
    /// The binary whose `__compile` command compiles; `None`: this
    /// process's own.
    pub exe: Option<PathBuf>,
}

impl Default for CompileSettings {
    fn default() -> Self {
        CompileSettings {
            timeout: crate::sandbox::compiler::DEFAULT_TIMEOUT,
            max_memory_mb: crate::sandbox::compiler::DEFAULT_MAX_MEMORY_MB,
            slots: crate::sandbox::compiler::DEFAULT_SLOTS,
            cache_max_bytes: crate::sandbox::ArtifactCache::DEFAULT_MAX_BYTES,
            exe: None,
        }
    }
}

/// The range of `--compile-timeout-ms`.
pub const COMPILE_TIMEOUT_MS: std::ops::RangeInclusive<u64> = 1_000..=3_600_000;
/// The range of `--compile-max-memory-mb`.
pub const COMPILE_MAX_MEMORY_MB: std::ops::RangeInclusive<u64> = 256..=1 << 20;
/// The range of `--compile-slots`.
pub const COMPILE_SLOTS: std::ops::RangeInclusive<usize> = 1..=64;
/// The range of `--compile-cache-max-mb`.
pub const COMPILE_CACHE_MAX_MB: std::ops::RangeInclusive<u64> = 64..=1 << 24;

/// The range of `--schedule-min-interval-ms`: cron's finest slot is a
/// second apart, and a floor past a day would refuse daily schedules.
pub const SCHEDULE_MIN_INTERVAL_MS: std::ops::RangeInclusive<u64> = 1_000..=86_400_000;

/// Longest a webhook's try may wait for its answer.
pub const MAX_WEBHOOK_TIMEOUT_MS: u64 = 60_000;
/// Longest first backoff of a webhook's delivery.
pub const MAX_WEBHOOK_BACKOFF_MS: u64 = 3_600_000;
/// Longest a delivery is tried for (a week).
pub const MAX_WEBHOOK_GIVE_UP_MS: u64 = 7 * 24 * 3_600_000;
/// Most event streams one tenant may be allowed at once.
pub const MAX_EVENT_STREAMS: u32 = 10_000;
/// Event streams one tenant may have open at once, by default.
pub const DEFAULT_MAX_EVENT_STREAMS: u32 = 32;
/// A tenant's series and usage-export reads a second, by default: a
/// dashboard's charts refresh every few seconds.
pub const DEFAULT_READS_PER_SECOND: u32 = 2;
/// The highest `--reads-per-second`.
pub const MAX_READS_PER_SECOND: u32 = 1_000;

/// Refuses unknown `TASKBOX_*` variables, suggesting the known one nearest.
pub fn check_environment(
    vars: impl Iterator<Item = (String, String)>,
    known: &[String],
) -> Result<(), String> {
    for (name, _) in vars {
        if name.starts_with("TASKBOX_") && !known.contains(&name) {
            let nearest = known
                .iter()
                .min_by_key(|k| edit_distance(k, &name))
                .filter(|k| edit_distance(k, &name) <= 3);
            let hint = nearest
                .map(|k| format!(" (did you mean {k}?)"))
                .unwrap_or_default();
            return Err(format!(
                "unknown environment variable {name}{hint}; taskbox reads {}",
                known.join(", ")
            ));
        }
    }
    Ok(())
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Parses a comma-separated queue list; empty means every queue.
pub fn parse_queues(s: &str) -> Result<Option<Vec<String>>, String> {
    let queues: Vec<String> = s
        .split(',')
        .map(str::trim)
        .filter(|q| !q.is_empty())
        .map(str::to_owned)
        .collect();
    for q in &queues {
        crate::registry::spec::check_name("queue", q)?;
    }
    Ok((!queues.is_empty()).then_some(queues))
}

impl ServeConfig {
    /// A server run inside another program (tests, benchmarks) on
    /// `data_dir` and `database_url`: its API on a free loopback port,
    /// migrated, no runners, no admin token yet, every other setting the
    /// server's default. Callers change what they need with `..` over it.
    pub fn embedded(data_dir: &std::path::Path, database_url: String) -> ServeConfig {
        ServeConfig {
            listen: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
            migrate: true,
            data_dir: data_dir.to_path_buf(),
            database_url,
            runners: 0,
            durability: Durability::Full,
            queues: None,
            grace: Duration::from_secs(5),
            lease: Duration::from_millis(crate::runner::LEASE_MS),
            claim_ahead: crate::runner::share::AHEAD_PER_SLOT,
            max_body_bytes: 1 << 20,
            max_component_bytes: crate::bounds::DEFAULT_MAX_COMPONENT_BYTES,
            admin_token: None,
            max_instances: crate::sandbox::engine::DEFAULT_MAX_INSTANCES,
            compile_cache: None,
            quotas: Quotas::SERVER_DEFAULTS,
            rules: AttemptRules::default(),
            retention: Default::default(),
            observer: None,
            webhooks: crate::webhooks::WebhookConfig::default(),
            network: crate::sandbox::NetworkConfig::default(),
            max_event_streams: DEFAULT_MAX_EVENT_STREAMS,
            reads_per_second: DEFAULT_READS_PER_SECOND,
            metrics_listen: None,
            metrics_per_tenant: false,
            secrets_key_file: None,
            schedule_min_interval: crate::schedule::firer::DEFAULT_MIN_INTERVAL,
            compile: CompileSettings::default(),
            http: HttpSettings::default(),
            otlp: None,
        }
    }

    /// Where the secrets key is (`--secrets-key-file`, or the data dir's).
    pub fn secrets_key_path(&self) -> PathBuf {
        self.secrets_key_file
            .clone()
            .unwrap_or_else(|| self.data_dir.join(crate::secrets::key::DEFAULT_FILE))
    }

    /// Checks the settings together; each problem in words to act on.
    pub fn validate(&self) -> Result<(), String> {
        if self.runners > MAX_RUNNERS {
            return Err(format!(
                "--runners must be at most {MAX_RUNNERS}, not {}",
                self.runners
            ));
        }
        if self.max_component_bytes == 0 || self.max_component_bytes > MAX_COMPONENT_BYTES_CEILING {
            return Err(format!(
                "--max-component-bytes must be between 1 and {MAX_COMPONENT_BYTES_CEILING}"
            ));
        }
        if self.max_body_bytes < 1024 || self.max_body_bytes > MAX_BODY_BYTES_CEILING {
            return Err(format!(
                "--max-body-bytes must be between 1024 and {MAX_BODY_BYTES_CEILING}"
            ));
        }
        if self.grace > MAX_GRACE {
            return Err(format!(
                "--grace-ms must be at most {}",
                MAX_GRACE.as_millis()
            ));
        }
        let lease = crate::runner::LEASE_MS_RANGE;
        if !lease.contains(&u64::try_from(self.lease.as_millis()).unwrap_or(u64::MAX)) {
            return Err(format!(
                "--lease-ms must be between {} and {}, not {}",
                lease.start(),
                lease.end(),
                self.lease.as_millis()
            ));
        }
        if let Some(t) = &self.admin_token {
            if t.len() < 16
                || t.len() > 256
                || t.chars().any(|c| c.is_whitespace() || c.is_control())
            {
                return Err(
                    "TASKBOX_ADMIN_TOKEN must be 16 to 256 characters with no spaces".into(),
                );
            }
        }
        let c = &self.compile;
        for (flag, v, range) in [
            (
                "--compile-timeout-ms",
                u64::try_from(c.timeout.as_millis()).unwrap_or(u64::MAX),
                &COMPILE_TIMEOUT_MS,
            ),
            (
                "--compile-max-memory-mb",
                c.max_memory_mb,
                &COMPILE_MAX_MEMORY_MB,
            ),
            (
                "--compile-cache-max-mb",
                c.cache_max_bytes >> 20,
                &COMPILE_CACHE_MAX_MB,
            ),
        ] {
            if !range.contains(&v) {
                return Err(format!(
                    "{flag} must be between {} and {}, not {v}",
                    range.start(),
                    range.end()
                ));
            }
        }
        let h = &self.http;
        for (flag, d) in [
            ("--http-header-timeout-ms", h.header_timeout),
            ("--http-body-timeout-ms", h.body_timeout),
            ("--http-idle-timeout-ms", h.idle_timeout),
        ] {
            let v = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
            if !HTTP_TIMEOUT_MS.contains(&v) {
                return Err(format!(
                    "{flag} must be between {} and {}, not {v}",
                    HTTP_TIMEOUT_MS.start(),
                    HTTP_TIMEOUT_MS.end()
                ));
            }
        }
        if !HTTP_MAX_CONNECTIONS.contains(&h.max_connections) {
            return Err(format!(
                "--http-max-connections must be between {} and {}, not {}",
                HTTP_MAX_CONNECTIONS.start(),
                HTTP_MAX_CONNECTIONS.end(),
                h.max_connections
            ));
        }
        if !COMPILE_SLOTS.contains(&c.slots) {
            return Err(format!(
                "--compile-slots must be between {} and {}, not {}",
                COMPILE_SLOTS.start(),
                COMPILE_SLOTS.end(),
                c.slots
            ));
        }
        let floor = u64::try_from(self.schedule_min_interval.as_millis()).unwrap_or(u64::MAX);
        if !SCHEDULE_MIN_INTERVAL_MS.contains(&floor) {
            return Err(format!(
                "--schedule-min-interval-ms must be between {} (a second) and {} (a day), not {floor}",
                SCHEDULE_MIN_INTERVAL_MS.start(),
                SCHEDULE_MIN_INTERVAL_MS.end()
            ));
        }
        if self.rules.snooze_floor_ms > MAX_SNOOZE_FLOOR_MS {
            return Err(format!(
                "--snooze-floor-ms must be at most {MAX_SNOOZE_FLOOR_MS} (an hour)"
            ));
        }
        if self.quotas.enqueue_burst.is_some() && self.quotas.enqueue_per_second.is_none() {
            return Err(
                "--quota-enqueue-burst needs --quota-enqueue-per-second: a burst is the size of the rate's bucket"
                    .into(),
            );
        }
        let w = &self.webhooks;
        for (flag, v, lo, hi) in [
            (
                "--webhook-timeout-ms",
                u64::try_from(w.timeout.as_millis()).unwrap_or(u64::MAX),
                100,
                MAX_WEBHOOK_TIMEOUT_MS,
            ),
            (
                "--webhook-backoff-ms",
                w.backoff_ms,
                1,
                MAX_WEBHOOK_BACKOFF_MS,
            ),
            (
                "--webhook-give-up-ms",
                w.give_up_ms,
                1,
                MAX_WEBHOOK_GIVE_UP_MS,
            ),
            (
                "--max-event-streams",
                u64::from(self.max_event_streams),
                1,
                u64::from(MAX_EVENT_STREAMS),
            ),
            (
                "--reads-per-second",
                u64::from(self.reads_per_second),
                1,
                u64::from(MAX_READS_PER_SECOND),
            ),
            (
                "--outbound-max-connections-per-tenant",
                u64::from(self.network.max_connections_per_tenant),
                1,
                u64::from(crate::sandbox::network::MAX_CONNECTIONS_PER_TENANT),
            ),
            (
                "--outbound-max-requests",
                u64::from(self.network.max_requests),
                1,
                u64::from(crate::sandbox::network::MAX_REQUESTS_CEILING),
            ),
            (
                "--outbound-max-response-bytes",
                self.network.max_response_bytes,
                1,
                crate::sandbox::network::MAX_RESPONSE_BYTES_CEILING,
            ),
        ] {
            if !(lo..=hi).contains(&v) {
                return Err(format!("{flag} must be between {lo} and {hi}, not {v}"));
            }
        }
        let max = crate::maintenance::pruner::MAX_RETENTION;
        for (flag, keep) in [
            ("--retain-completed-hours", self.retention.completed),
            ("--retain-failed-hours", self.retention.failed),
        ] {
            if keep.is_some_and(|k| k > max) {
                return Err(format!(
                    "{flag} must be at most {} (ten years), or 0 to keep them for ever",
                    max.as_secs() / 3600
                ));
            }
        }
        match crate::store::Backend::of(&self.database_url) {
            None => Err(crate::store::OpenError::UnknownScheme(self.database_url.clone()).to_string()),
            Some(crate::store::Backend::Sqlite) if self.listen.is_none() => Err(format!(
                "taskbox worker shares a queue with other processes, and a SQLite database ({}) belongs to one process; give it --database-url postgres://…, or run taskbox serve",
                self.database_url
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspelled_variables_are_refused_with_a_suggestion() {
        let known = ["TASKBOX_RUNNERS".to_string(), "TASKBOX_LOG".to_string()];
        let vars = [("TASKBOX_RUNNER".to_string(), "2".to_string())];
        let err = check_environment(vars.into_iter(), &known).unwrap_err();
        assert!(err.contains("did you mean TASKBOX_RUNNERS"), "{err}");
        let ok = [
            ("TASKBOX_RUNNERS".to_string(), "2".to_string()),
            ("PATH".into(), "/".into()),
        ];
        assert!(check_environment(ok.into_iter(), &known).is_ok());
    }

    #[test]
    fn queue_lists() {
        assert_eq!(parse_queues("").unwrap(), None);
        assert_eq!(
            parse_queues("a, b").unwrap(),
            Some(vec!["a".to_string(), "b".to_string()])
        );
        assert!(parse_queues("Bad Queue").is_err());
    }
}
