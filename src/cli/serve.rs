//! `taskbox serve` and `taskbox worker`: the flags (each also a
//! `TASKBOX_*` variable), then the process until SIGINT or SIGTERM. A
//! worker is a server without the HTTP API: runners and maintenance on a
//! PostgreSQL queue that other processes share.

use crate::app::App;
use crate::config::{self, ServeConfig};
use crate::maintenance::pruner::Retention;
use crate::quota::Quotas;
use crate::runner::decision::AttemptRules;
use crate::store::Durability;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DurabilityArg {
    /// Each acknowledged write is on disk (synchronous=FULL).
    Full,
    /// A power cut may lose the last acknowledged writes (synchronous=NORMAL).
    Normal,
}

impl From<DurabilityArg> for Durability {
    fn from(d: DurabilityArg) -> Durability {
        match d {
            DurabilityArg::Full => Durability::Full,
            DurabilityArg::Normal => Durability::Normal,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Address and port of the HTTP API (port 0 picks a free one).
    #[arg(long, env = "TASKBOX_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Largest JSON request body, in bytes.
    #[arg(long, env = "TASKBOX_MAX_BODY_BYTES", default_value_t = 1 << 20)]
    pub max_body_bytes: usize,
    #[command(flatten)]
    pub http: HttpArgs,
    #[command(flatten)]
    pub node: NodeArgs,
}

/// How long the API waits for its clients, and for how many.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "HTTP connections")]
pub struct HttpArgs {
    /// A request's headers must arrive within this many ms of the connection's start (or of their
    /// first byte, after a keep-alive pause); past it the connection is closed (100 to 3,600,000).
    #[arg(long, env = "TASKBOX_HTTP_HEADER_TIMEOUT_MS", default_value_t = 10_000)]
    pub http_header_timeout_ms: u64,
    /// A request's body must arrive within this many ms of its first read; past it the answer is
    /// 408 and the connection is closed (100 to 3,600,000).
    #[arg(long, env = "TASKBOX_HTTP_BODY_TIMEOUT_MS", default_value_t = 60_000)]
    pub http_body_timeout_ms: u64,
    /// A keep-alive connection with no request for this many ms is closed (100 to 3,600,000).
    #[arg(long, env = "TASKBOX_HTTP_IDLE_TIMEOUT_MS", default_value_t = 60_000)]
    pub http_idle_timeout_ms: u64,
    /// Connections open at once; past it new ones wait to be accepted (1 to 1,000,000).
    #[arg(long, env = "TASKBOX_HTTP_MAX_CONNECTIONS", default_value_t = 4096)]
    pub http_max_connections: usize,
}

impl HttpArgs {
    fn settings(&self) -> config::HttpSettings {
        config::HttpSettings {
            header_timeout: Duration::from_millis(self.http_header_timeout_ms),
            body_timeout: Duration::from_millis(self.http_body_timeout_ms),
            idle_timeout: Duration::from_millis(self.http_idle_timeout_ms),
            max_connections: self.http_max_connections,
        }
    }
}

/// `taskbox worker`: runners and maintenance, no API.
#[derive(Debug, clap::Args)]
pub struct WorkerArgs {
    #[command(flatten)]
    pub node: NodeArgs,
}

/// What a server and a worker both take.
#[derive(Debug, clap::Args)]
pub struct NodeArgs {
    /// Where the database (SQLite) and compiled components live; one process each.
    #[arg(long, env = "TASKBOX_DATA_DIR", default_value = "./taskbox-data")]
    pub data_dir: PathBuf,
    /// Database URL [default: sqlite://DATA_DIR/taskbox.db]
    #[arg(long, env = "TASKBOX_DATABASE_URL")]
    pub database_url: Option<String>,
    /// Attempts run at once; 0 serves the API only [default: the number of cores]
    #[arg(long, env = "TASKBOX_RUNNERS")]
    pub runners: Option<usize>,
    /// How hard each acknowledged write is kept.
    #[arg(long, env = "TASKBOX_DURABILITY", value_enum, default_value = "full")]
    pub durability: DurabilityArg,
    /// Queues the runners serve, comma-separated [default: all]
    #[arg(long, env = "TASKBOX_QUEUES", default_value = "")]
    pub queues: String,
    /// On stop, how long running attempts get to finish before their jobs are given back.
    #[arg(long, env = "TASKBOX_GRACE_MS", default_value_t = 10_000)]
    pub grace_ms: u64,
    /// How long a runner's claim holds a job without a renewal (renewed three times a lease); a process that dies loses its jobs to a rescue this long after.
    #[arg(long, env = "TASKBOX_LEASE_MS", default_value_t = crate::runner::LEASE_MS)]
    pub lease_ms: u64,
    /// How much of one tenant's work, in runner time per slot, a runner may hold claimed ahead of
    /// its attempts (1 to 10,000 ms): more keeps slots busier between claims, less lets another
    /// tenant's jobs in sooner.
    #[arg(
        long,
        env = "TASKBOX_CLAIM_AHEAD_MS",
        default_value_t = 50,
        value_parser = clap::value_parser!(u64).range(1..=10_000)
    )]
    pub claim_ahead_ms: u64,
    /// The least time between two slots of any schedule, in ms: a cron expression whose slots
    /// come closer is refused (1,000 to 86,400,000).
    #[arg(
        long,
        env = "TASKBOX_SCHEDULE_MIN_INTERVAL_MS",
        default_value_t = 1_000
    )]
    pub schedule_min_interval_ms: u64,
    /// Longest a component's compile may take, in ms; past it the compile is stopped and the
    /// upload refused (1,000 to 3,600,000).
    #[arg(long, env = "TASKBOX_COMPILE_TIMEOUT_MS", default_value_t = 300_000)]
    pub compile_timeout_ms: u64,
    /// Most memory a component's compile may use, in MiB; past it the compile is stopped and the
    /// upload refused (256 to 1,048,576).
    #[arg(long, env = "TASKBOX_COMPILE_MAX_MEMORY_MB", default_value_t = crate::sandbox::compiler::DEFAULT_MAX_MEMORY_MB)]
    pub compile_max_memory_mb: u64,
    /// Compiles at once, each of another tenant (1 to 64).
    #[arg(long, env = "TASKBOX_COMPILE_SLOTS", default_value_t = crate::sandbox::compiler::DEFAULT_SLOTS)]
    pub compile_slots: usize,
    /// Most compiled artifacts kept on disk, in MiB; the least recently used go first (64 to
    /// 16,777,216).
    #[arg(long, env = "TASKBOX_COMPILE_CACHE_MAX_MB", default_value_t = crate::sandbox::ArtifactCache::DEFAULT_MAX_BYTES >> 20)]
    pub compile_cache_max_mb: u64,
    /// Largest component, in bytes (uploads, and what a worker compiles).
    #[arg(long, env = "TASKBOX_MAX_COMPONENT_BYTES", default_value_t = crate::bounds::DEFAULT_MAX_COMPONENT_BYTES)]
    pub max_component_bytes: usize,
    #[command(flatten)]
    pub quotas: QuotaArgs,
    /// A guest's snooze shorter than this counts as this long, in ms.
    #[arg(long, env = "TASKBOX_SNOOZE_FLOOR_MS", default_value_t = crate::runner::decision::DEFAULT_SNOOZE_FLOOR_MS)]
    pub snooze_floor_ms: u64,
    /// Snoozes one job may make; the next one fails it (`trap`, `too_many_snoozes`).
    #[arg(long, env = "TASKBOX_MAX_SNOOZES", default_value_t = crate::runner::decision::DEFAULT_MAX_SNOOZES)]
    pub max_snoozes: u32,
    /// Hours completed and cancelled jobs are kept after they end (and
    /// components no task uses after their upload); 0 keeps them for ever.
    #[arg(long, env = "TASKBOX_RETAIN_COMPLETED_HOURS", default_value_t = 7 * 24)]
    pub retain_completed_hours: u64,
    /// Hours failed jobs are kept after they end; 0 keeps them for ever.
    #[arg(long, env = "TASKBOX_RETAIN_FAILED_HOURS", default_value_t = 30 * 24)]
    pub retain_failed_hours: u64,
    /// Do not migrate the PostgreSQL schema at start (run `taskbox migrate` first).
    #[arg(long, env = "TASKBOX_NO_MIGRATE")]
    pub no_migrate: bool,
    /// Also serve GET /metrics here, without a token (on the API it needs the admin token or `metrics:read`); a worker's only way to be scraped.
    #[arg(long, env = "TASKBOX_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
    /// Give the metrics a `tenant` label (one series per tenant: mind Prometheus's cardinality).
    #[arg(long, env = "TASKBOX_METRICS_PER_TENANT")]
    pub metrics_per_tenant: bool,
    /// The key tenants' secrets are sealed with: 32 bytes, made (mode 0600) at the first start when absent. Every server and worker sharing one database needs the same file; lost, every secret must be put again [default: DATA_DIR/secrets.key]
    #[arg(long, env = "TASKBOX_SECRETS_KEY_FILE", value_name = "PATH")]
    pub secrets_key_file: Option<PathBuf>,
    /// Send every job's trace (its enqueue, waits, attempts, outbound requests, webhook deliveries and the guest's own spans) to this OTLP collector: for HTTP its traces URL or base URL (`http://127.0.0.1:4318` gets `/v1/traces`), for gRPC its address. Off when not given. The batch interval follows `OTEL_BSP_SCHEDULE_DELAY` (ms, default 1000).
    #[arg(long, env = "TASKBOX_OTLP_ENDPOINT", value_name = "URL")]
    pub otlp_endpoint: Option<String>,
    /// How traces travel to `--otlp-endpoint`.
    #[arg(long, env = "TASKBOX_OTLP_PROTOCOL", value_enum, default_value_t = crate::otel::OtlpProtocol::Http)]
    pub otlp_protocol: crate::otel::OtlpProtocol,
    #[command(flatten)]
    pub events: EventArgs,
    #[command(flatten)]
    pub outbound: OutboundArgs,
}

/// Guests' outbound HTTP (a task grants it with `"network": {"allow": [...]}`).
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Guests' outbound HTTP")]
pub struct OutboundArgs {
    /// Let guests reach loopback, private, link-local (cloud metadata), CGNAT and other
    /// addresses of the server's own networks, when their task lists the host; for
    /// on-premises use and tests. Off, such requests are refused whatever is listed.
    #[arg(long, env = "TASKBOX_OUTBOUND_ALLOW_PRIVATE")]
    pub outbound_allow_private: bool,
    /// Most connections one tenant's guests hold open at once, in this process.
    #[arg(
        long,
        env = "TASKBOX_OUTBOUND_MAX_CONNECTIONS_PER_TENANT",
        default_value_t = 32
    )]
    pub outbound_max_connections_per_tenant: u32,
    /// Most requests one attempt may make, whatever its task asks (tasks get 100 unless they say).
    #[arg(long, env = "TASKBOX_OUTBOUND_MAX_REQUESTS", default_value_t = 1_000)]
    pub outbound_max_requests: u32,
    /// Largest response body one request may read, in bytes, whatever its task asks (tasks
    /// get 8 MiB unless they say) [default: 64 MiB]
    #[arg(long, env = "TASKBOX_OUTBOUND_MAX_RESPONSE_BYTES", default_value_t = 64 << 20)]
    pub outbound_max_response_bytes: u64,
}

impl OutboundArgs {
    fn config(&self) -> crate::sandbox::NetworkConfig {
        let d = crate::sandbox::NetworkConfig::default();
        crate::sandbox::NetworkConfig {
            allow_private: self.outbound_allow_private,
            max_connections_per_tenant: self.outbound_max_connections_per_tenant,
            max_requests: self.outbound_max_requests,
            default_requests: d.default_requests.min(self.outbound_max_requests),
            max_response_bytes: self.outbound_max_response_bytes,
            default_response_bytes: d
                .default_response_bytes
                .min(self.outbound_max_response_bytes),
            ..d
        }
    }
}

/// Event streams, webhooks, and the reads that scan a tenant's records.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Events, webhooks and heavy reads")]
pub struct EventArgs {
    /// Let webhooks reach loopback, link-local and private addresses (the
    /// server's own network); off, such a webhook is refused.
    #[arg(long, env = "TASKBOX_WEBHOOK_ALLOW_PRIVATE")]
    pub webhook_allow_private: bool,
    /// Longest a webhook delivery waits for the endpoint's answer, in ms.
    #[arg(long, env = "TASKBOX_WEBHOOK_TIMEOUT_MS", default_value_t = 10_000)]
    pub webhook_timeout_ms: u64,
    /// Wait after a delivery's first failed try, in ms; each next one doubles (up to an hour).
    #[arg(long, env = "TASKBOX_WEBHOOK_BACKOFF_MS", default_value_t = 10_000)]
    pub webhook_backoff_ms: u64,
    /// A delivery still failing this long after its event, in ms, is dead [default: a day]
    #[arg(long, env = "TASKBOX_WEBHOOK_GIVE_UP_MS", default_value_t = 24 * 3_600_000)]
    pub webhook_give_up_ms: u64,
    /// Event streams (GET /v1/events) one tenant may have open at once.
    #[arg(long, env = "TASKBOX_MAX_EVENT_STREAMS", default_value_t = config::DEFAULT_MAX_EVENT_STREAMS)]
    pub max_event_streams: u32,
    /// Each tenant's series and usage-export reads (GET /v1/series, GET /v1/usage/export) a second, 5 s of it at once; past it 429 (1 to 1,000).
    #[arg(long, env = "TASKBOX_READS_PER_SECOND", default_value_t = config::DEFAULT_READS_PER_SECOND)]
    pub reads_per_second: u32,
}

/// Every tenant's quotas unless the admin sets its own (PUT /v1/tenants/NAME); 0 is no limit.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Tenant quotas (defaults; 0 is no limit)")]
pub struct QuotaArgs {
    /// Enqueues per second, sustained.
    #[arg(long, env = "TASKBOX_QUOTA_ENQUEUE_PER_SECOND", default_value_t = 0)]
    pub quota_enqueue_per_second: u64,
    /// Enqueues at once above the rate [default: one second of the rate]
    #[arg(long, env = "TASKBOX_QUOTA_ENQUEUE_BURST", default_value_t = 0)]
    pub quota_enqueue_burst: u64,
    /// Jobs queued or waiting at once.
    #[arg(long, env = "TASKBOX_QUOTA_MAX_QUEUED", default_value_t = default(Quotas::SERVER_DEFAULTS.max_queued))]
    pub quota_max_queued: u64,
    /// Jobs running at once.
    #[arg(long, env = "TASKBOX_QUOTA_MAX_RUNNING", default_value_t = 0)]
    pub quota_max_running: u64,
    /// Fuel per minute; past it a tenant's jobs wait for the next minute.
    #[arg(long, env = "TASKBOX_QUOTA_FUEL_PER_MINUTE", default_value_t = 0)]
    pub quota_fuel_per_minute: u64,
    /// Components stored.
    #[arg(long, env = "TASKBOX_QUOTA_MAX_COMPONENTS", default_value_t = default(Quotas::SERVER_DEFAULTS.max_components))]
    pub quota_max_components: u64,
    /// Bytes of components stored, in all.
    #[arg(long, env = "TASKBOX_QUOTA_MAX_COMPONENT_BYTES", default_value_t = default(Quotas::SERVER_DEFAULTS.max_component_bytes))]
    pub quota_max_component_bytes: u64,
    /// Task versions stored, over all of a tenant's tasks.
    #[arg(long, env = "TASKBOX_QUOTA_MAX_TASK_VERSIONS", default_value_t = default(Quotas::SERVER_DEFAULTS.max_task_versions))]
    pub quota_max_task_versions: u64,
}

const fn default(q: Option<u64>) -> u64 {
    match q {
        Some(v) => v,
        None => 0,
    }
}

impl QuotaArgs {
    pub fn quotas(&self) -> Quotas {
        let limit = |v: u64| (v > 0).then_some(v);
        Quotas {
            enqueue_per_second: limit(self.quota_enqueue_per_second),
            enqueue_burst: limit(self.quota_enqueue_burst),
            max_queued: limit(self.quota_max_queued),
            max_running: limit(self.quota_max_running),
            fuel_per_minute: limit(self.quota_fuel_per_minute),
            max_components: limit(self.quota_max_components),
            max_component_bytes: limit(self.quota_max_component_bytes),
            max_task_versions: limit(self.quota_max_task_versions),
        }
    }
}

impl NodeArgs {
    /// The settings of a process whose API listens on `listen` (`None`: a
    /// worker) with requests of at most `max_body_bytes`, its clients
    /// waited for as `http` says.
    fn config(
        self,
        listen: Option<SocketAddr>,
        max_body_bytes: usize,
        http: config::HttpSettings,
    ) -> Result<ServeConfig, String> {
        config::check_environment(std::env::vars(), &super::known_variables())?;
        let database_url = self
            .database_url
            .unwrap_or_else(|| format!("sqlite://{}", self.data_dir.join("taskbox.db").display()));
        let cfg = ServeConfig {
            listen,
            migrate: !self.no_migrate,
            runners: self
                .runners
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
            durability: self.durability.into(),
            queues: config::parse_queues(&self.queues)?,
            grace: Duration::from_millis(self.grace_ms),
            lease: Duration::from_millis(self.lease_ms),
            claim_ahead: Duration::from_millis(self.claim_ahead_ms),
            max_body_bytes,
            max_component_bytes: self.max_component_bytes,
            admin_token: std::env::var("TASKBOX_ADMIN_TOKEN")
                .ok()
                .filter(|t| !t.is_empty()),
            max_instances: crate::sandbox::engine::DEFAULT_MAX_INSTANCES,
            compile_cache: None,
            quotas: self.quotas.quotas(),
            rules: AttemptRules {
                snooze_floor_ms: self.snooze_floor_ms,
                max_snoozes: self.max_snoozes,
            },
            retention: Retention {
                completed: hours(self.retain_completed_hours),
                failed: hours(self.retain_failed_hours),
            },
            observer: None,
            webhooks: crate::webhooks::WebhookConfig {
                allow_private: self.events.webhook_allow_private,
                timeout: Duration::from_millis(self.events.webhook_timeout_ms),
                backoff_ms: self.events.webhook_backoff_ms,
                give_up_ms: self.events.webhook_give_up_ms,
                ..crate::webhooks::WebhookConfig::default()
            },
            network: self.outbound.config(),
            max_event_streams: self.events.max_event_streams,
            reads_per_second: self.events.reads_per_second,
            metrics_listen: self.metrics_listen,
            metrics_per_tenant: self.metrics_per_tenant,
            secrets_key_file: self.secrets_key_file,
            schedule_min_interval: Duration::from_millis(self.schedule_min_interval_ms),
            compile: config::CompileSettings {
                timeout: Duration::from_millis(self.compile_timeout_ms),
                max_memory_mb: self.compile_max_memory_mb,
                slots: self.compile_slots,
                cache_max_bytes: self.compile_cache_max_mb.saturating_mul(1 << 20),
                exe: None,
            },
            http,
            otlp: self
                .otlp_endpoint
                .as_deref()
                .map(|e| crate::otel::OtlpEndpoint::parse(e, self.otlp_protocol))
                .transpose()
                .map_err(|e| e.to_string())?,
            data_dir: self.data_dir,
            database_url,
        };
        cfg.validate()?;
        Ok(cfg)
    }
}

/// A retention in hours; 0 is for ever. Capped where it cannot overflow,
/// so that `validate` refuses it in words.
fn hours(h: u64) -> Option<Duration> {
    (h > 0).then(|| Duration::from_secs(h.min(u64::MAX / 7200) * 3600))
}

pub fn main(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let cfg = args
        .node
        .config(Some(args.listen), args.max_body_bytes, args.http.settings())
        .map_err(anyhow::Error::msg)?;
    run(cfg)
}

pub fn worker(args: WorkerArgs) -> anyhow::Result<ExitCode> {
    // A worker reads no request bodies; the bound is the default's.
    let cfg = args
        .node
        .config(None, 1 << 20, config::HttpSettings::default())
        .map_err(anyhow::Error::msg)?;
    run(cfg)
}

/// What a first start says to do next: where the dashboard is, and a
/// first task from nothing but rustup (the build adds its target).
fn first_steps(addr: std::net::SocketAddr) -> String {
    format!(
        "taskbox: the dashboard is at http://{addr}/ (sign in with the token above)\n\
         taskbox: a first task, in another shell, after that export:\n  \
         export TASKBOX_URL=http://{addr}\n  \
         taskbox init rust hello && cd hello && taskbox build\n  \
         taskbox task push hello . && taskbox job enqueue hello --input '{{\"name\": \"Grace\"}}' --wait"
    )
}

fn run(cfg: ServeConfig) -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let started = App::start(cfg.clone()).await?;
        if let Some(token) = &started.generated_admin_token {
            eprintln!("taskbox: generated the admin token; it is shown only this once, keep it:");
            eprintln!("  export TASKBOX_TOKEN={token}");
        }
        if let Some(path) = &started.created_secrets_key {
            eprintln!(
                "taskbox: made the secrets key {}; back it up with the database (without it no \
                 secret can be read), and give every server sharing the database this same file",
                path.display()
            );
        }
        let app = started.app;
        match app.addr {
            Some(addr) => println!(
                "taskbox listening on http://{addr} (data dir {}, {} runners, durability {:?})",
                cfg.data_dir.display(),
                cfg.runners,
                cfg.durability
            ),
            None => println!(
                "taskbox worker running (data dir {}, {} runners, durability {:?})",
                cfg.data_dir.display(),
                cfg.runners,
                cfg.durability
            ),
        }
        if let Some(addr) = app.metrics_addr {
            println!("taskbox metrics at http://{addr}/metrics");
        }
        let _ = std::io::stdout().flush();
        if let (Some(_), Some(addr)) = (&started.generated_admin_token, app.addr) {
            eprintln!("{}", first_steps(addr));
        }
        shutdown_signal().await;
        eprintln!(
            "taskbox: stopping (grace period {} ms)",
            cfg.grace.as_millis()
        );
        app.stop().await;
        Ok::<_, anyhow::Error>(())
    })?;
    Ok(ExitCode::SUCCESS)
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
