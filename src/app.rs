//! Wires one server together — store, sandbox, registry, runner,
//! maintenance, and the HTTP API unless it is a worker — on one data dir,
//! and takes it apart gracefully.

use crate::api::{self, auth, ApiLimits, ApiState};
use crate::config::ServeConfig;
use crate::enqueue::Enqueuer;
use crate::maintenance::{self, pruner::Pruner, queue_keeper::QueueKeeper, rescuer::Rescuer};
use crate::registry::Registry;
use crate::runner::{Runner, RunnerConfig};
use crate::sandbox::{Limits, Sandbox, SandboxConfig};
use crate::schedule::firer::Firer;
use crate::schedule::leader::{self, Candidacy, Leader, LeaderOnly};
use crate::store::{self, JobStore, NewToken, StoreError, StoreOptions, SystemClock};
use anyhow::Context;
use std::fs::File;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// A started server.
pub struct App {
    /// Where the HTTP API listens; `None` for a worker, which has none.
    pub addr: Option<SocketAddr>,
    /// Where `/metrics` is served without a token, if anywhere.
    pub metrics_addr: Option<SocketAddr>,
    pub state: Arc<ApiState>,
    runner: Arc<Runner>,
    store: Arc<dyn JobStore>,
    stop_http: CancellationToken,
    stop_maintenance: CancellationToken,
    http: Option<JoinHandle<()>>,
    services: Vec<JoinHandle<()>>,
    grace: Duration,
    /// This process's candidacy for the leader's lease.
    pub leader: Arc<Leader>,
    /// Held while the server runs: one process per data dir.
    _lock: File,
}

/// What the first start prints once: the admin token it generated.
pub struct Started {
    pub app: App,
    pub generated_admin_token: Option<String>,
    /// The secrets key file this start made (there was none): say so, it
    /// must be backed up and shared.
    pub created_secrets_key: Option<std::path::PathBuf>,
}

/// How long a start waits for the data dir's lock to come free. A server
/// that has just stopped lets go of it at once, but a child process being
/// started meanwhile (by any thread of the process that held the lock)
/// holds a copy of its descriptors, the lock's among them, until it runs
/// its program.
const LOCK_WAIT: Duration = Duration::from_secs(2);

/// Takes the data dir for this process alone: a second server on the same
/// SQLite file would rescue the first one's running jobs.
async fn lock_data_dir(dir: &std::path::Path) -> anyhow::Result<File> {
    let path = dir.join("taskbox.lock");
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let deadline = tokio::time::Instant::now() + LOCK_WAIT;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(std::fs::TryLockError::WouldBlock) => anyhow::bail!(
                "another taskbox serve is using the data dir {}; stop it, or give this one its own --data-dir",
                dir.display()
            ),
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", path.display()))
            }
        }
    }
}

impl App {
    /// Opens everything, rescues what a previous run left running, and
    /// starts serving.
    pub async fn start(cfg: ServeConfig) -> anyhow::Result<Started> {
        cfg.validate().map_err(anyhow::Error::msg)?;
        std::fs::create_dir_all(&cfg.data_dir)
            .with_context(|| format!("cannot create the data dir {}", cfg.data_dir.display()))?;
        let lock = lock_data_dir(&cfg.data_dir).await?;
        // Before the database: a key file that is wrong stops the start
        // before anything is written.
        let key_path = cfg.secrets_key_path();
        let (key, made_key) = crate::secrets::load_or_create(&key_path)?;
        let vault = Arc::new(crate::secrets::Vault::new(&key));
        drop(key);
        let store = store::open(
            &StoreOptions {
                url: cfg.database_url.clone(),
                durability: cfg.durability,
                quotas: cfg.quotas,
                migrate: cfg.migrate,
            },
            Arc::new(SystemClock),
        )
        .await?;
        let dyn_store = store.clone();
        match dyn_store.tenant_insert(auth::DEFAULT_TENANT).await {
            Ok(_) | Err(StoreError::Conflict(_)) => {}
            Err(e) => return Err(e).context("cannot create the default tenant"),
        }
        let generated_admin_token = match &cfg.admin_token {
            // A worker has no API to sign in to.
            _ if cfg.listen.is_none() => None,
            Some(t) => {
                dyn_store.token_insert(admin_token(t)).await?;
                None
            }
            None if dyn_store.token_admin_exists().await? => None,
            None => {
                let t = auth::new_token();
                dyn_store.token_insert(admin_token(&t)).await?;
                Some(t)
            }
        };
        let compiler_exe = match &cfg.compile.exe {
            Some(exe) => exe.clone(),
            None => std::env::current_exe()
                .context("cannot find this binary, whose `__compile` compiles components")?,
        };
        let sandbox = Sandbox::new(SandboxConfig {
            cache_dir: Some(
                cfg.compile_cache
                    .clone()
                    .unwrap_or_else(|| cfg.data_dir.join("compiled")),
            ),
            max_component_bytes: cfg.max_component_bytes,
            // Each slot, each start beyond the slots, and a few to spare.
            max_instances: cfg.max_instances.max(2 * cfg.runners as u32 + 8),
            network: cfg.network.clone(),
            compiler: crate::sandbox::Compiler::Child {
                exe: compiler_exe,
                max_memory_mb: cfg.compile.max_memory_mb,
            },
            compile_timeout: cfg.compile.timeout,
            compile_slots: cfg.compile.slots,
            cache_max_bytes: cfg.compile.cache_max_bytes,
            ..SandboxConfig::default()
        })?;
        let registry = Arc::new(Registry::new(
            dyn_store.clone(),
            sandbox,
            Limits::DEFAULT,
            cfg.quotas,
        ));
        registry.set_vault(vault);
        if let Some(endpoint) = &cfg.otlp {
            registry.set_traces(crate::otel::Traces::start(endpoint)?);
        }
        let wake = Arc::new(Notify::new());
        let lease_ms = u64::try_from(cfg.lease.as_millis()).unwrap_or(u64::MAX);
        let rescuer = Rescuer::new(registry.clone(), wake.clone(), lease_ms);
        // Where this process owns the database alone, whatever is still
        // running was left by a previous run that did not stop cleanly.
        // Where others share it, their jobs are rescued only when their
        // leases expire, by the rescuer's rounds.
        if dyn_store.capabilities().owns_database {
            let rescued = rescuer.rescue(true).await?;
            if rescued > 0 {
                tracing::warn!(jobs = rescued, "rescued jobs a previous run left running");
            }
        }
        let runner = Arc::new(Runner::start(
            registry.clone(),
            RunnerConfig {
                queues: cfg.queues.clone(),
                rules: cfg.rules,
                lease_ms,
                claim_ahead: cfg.claim_ahead,
                on_event: cfg.observer.clone().map(|o| o.0),
                ..RunnerConfig::new(cfg.runners)
            },
            wake.clone(),
        ));
        let stop_maintenance = CancellationToken::new();
        let keeper = QueueKeeper::new(registry.clone(), wake.clone());
        let pruner =
            Pruner::new(dyn_store.clone(), cfg.retention).forgetting(registry.sandbox().clone());
        let hooks = crate::webhooks::Hooks::new(dyn_store.clone());
        let delivered = Arc::new(Notify::new());
        let dispatcher = crate::webhooks::dispatch::Dispatcher::new(
            dyn_store.clone(),
            hooks.clone(),
            delivered.clone(),
        );
        // Every process is a candidate; the leader runs what must run once
        // per database (cron slots) and what need not run more (pruning,
        // expiry).
        let leader = Arc::new(Leader::new(
            dyn_store.clone(),
            Leader::holder_for_this_process(),
            leader::DEFAULT_TTL,
        ));
        let mut services = maintenance::spawn(
            vec![
                Box::new(Candidacy(leader.clone())),
                Box::new(rescuer),
                // Safe anywhere, but once per database is enough.
                Box::new(LeaderOnly {
                    leader: leader.clone(),
                    service: keeper,
                }),
                Box::new(LeaderOnly {
                    leader: leader.clone(),
                    service: pruner,
                }),
                Box::new(LeaderOnly {
                    leader: leader.clone(),
                    service: maintenance::sampler::Sampler::new(dyn_store.clone()),
                }),
                Box::new(dispatcher),
            ],
            stop_maintenance.clone(),
        );
        let sender = crate::webhooks::send::Sender::new(
            dyn_store.clone(),
            hooks.clone(),
            cfg.webhooks,
            delivered,
        )
        .map_err(anyhow::Error::msg)?
        .traced(registry.traces().clone());
        services.extend(sender.spawn(stop_maintenance.clone()));
        let tokens = Arc::new(auth::TokenCache::default());
        if let Some(signals) = dyn_store.signals() {
            services.push(tokio::spawn(follow_signals(
                signals,
                runner.clone(),
                wake.clone(),
                tokens.clone(),
                stop_maintenance.clone(),
            )));
        }
        let firer = Firer::new(
            dyn_store.clone(),
            registry.clone(),
            leader.clone(),
            wake.clone(),
            cfg.schedule_min_interval,
        );
        services.push(firer.clone().spawn(stop_maintenance.clone()));
        let enqueuer = Arc::new(Enqueuer::new(registry.clone(), runner.clone()));
        let state = Arc::new(
            ApiState::new(
                dyn_store,
                registry,
                runner.clone(),
                wake,
                ApiLimits {
                    max_json_bytes: cfg.max_body_bytes,
                    max_batch_bytes: cfg.max_body_bytes.max(ApiLimits::default().max_batch_bytes),
                    max_component_bytes: cfg.max_component_bytes,
                    max_event_streams: cfg.max_event_streams,
                    reads_per_second: cfg.reads_per_second,
                    webhook_allow_private: cfg.webhooks.allow_private,
                    body_timeout: cfg.http.body_timeout,
                    ..ApiLimits::default()
                },
                enqueuer,
                hooks,
            )
            .with_leader(leader.clone())
            .with_firer(firer)
            .with_tokens(tokens),
        );
        let stop_http = CancellationToken::new();
        crate::metrics::get().set_per_tenant(cfg.metrics_per_tenant);
        let metrics_addr = match cfg.metrics_listen {
            Some(listen) => {
                let listener = tokio::net::TcpListener::bind(listen)
                    .await
                    .with_context(|| format!("cannot listen on {listen} for the metrics"))?;
                let addr = listener.local_addr()?;
                let router = api::metrics::open_router(state.clone());
                let stop = stop_http.clone();
                let http = cfg.http;
                services.push(tokio::spawn(crate::listen::serve(
                    listener, router, http, stop,
                )));
                Some(addr)
            }
            None => None,
        };
        let (addr, http) = match cfg.listen {
            Some(listen) => {
                let listener = tokio::net::TcpListener::bind(listen)
                    .await
                    .with_context(|| format!("cannot listen on {listen}"))?;
                let addr = listener.local_addr()?;
                let router = api::router(state.clone());
                let stop = stop_http.clone();
                let http = tokio::spawn(crate::listen::serve(listener, router, cfg.http, stop));
                (Some(addr), Some(http))
            }
            None => (None, None),
        };
        Ok(Started {
            app: App {
                addr,
                metrics_addr,
                state,
                runner,
                store,
                stop_http,
                stop_maintenance,
                http,
                services,
                grace: cfg.grace,
                leader,
                _lock: lock,
            },
            generated_admin_token,
            created_secrets_key: made_key.then_some(key_path),
        })
    }

    /// Stops taking requests and claims, lets running attempts finish
    /// within the grace period, gives the rest back, and closes the store.
    pub async fn stop(self) {
        self.stop_http.cancel();
        // Event streams never end by themselves.
        self.state.feed.close();
        self.runner.stop(self.grace).await;
        self.stop_maintenance.cancel();
        for s in self.services {
            let _ = s.await;
        }
        // Another process takes over at once, not when the lease runs out.
        self.leader.resign().await;
        // In-flight requests finish; a slow client does not hold the stop.
        if let Some(http) = self.http {
            let _ = tokio::time::timeout(Duration::from_secs(5), http).await;
        }
        // The last attempts' spans go out before the process does.
        self.state.registry.traces().shutdown().await;
        self.store.close().await;
    }
}

/// The admin token's row: every scope, any tenant, no expiry. Stored
/// again at each start with `TASKBOX_ADMIN_TOKEN` (replacing the one
/// before), under a new id.
fn admin_token(text: &str) -> NewToken {
    NewToken {
        id: auth::new_token_id(),
        hash: auth::token_hash(text),
        tenant: None,
        scopes: Vec::new(),
        expires_at: None,
    }
}

/// Acts on what other processes on the same database say: jobs to look
/// for wake the claim loop, a cancel stops the attempt if it runs here, a
/// revoked token is forgotten.
async fn follow_signals(
    mut signals: tokio::sync::broadcast::Receiver<store::Signal>,
    runner: Arc<Runner>,
    wake: Arc<Notify>,
    tokens: Arc<auth::TokenCache>,
    stop: CancellationToken,
) {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        let signal = tokio::select! {
            s = signals.recv() => s,
            _ = stop.cancelled() => return,
        };
        match signal {
            Ok(store::Signal::Jobs) => wake.notify_one(),
            // Whatever was missed: look for jobs, and forget every token
            // (a revoke may have been among them).
            Err(RecvError::Lagged(_)) => {
                wake.notify_one();
                tokens.forget_all();
            }
            Ok(store::Signal::Cancel(id)) => {
                runner.interrupt(&id);
            }
            Ok(store::Signal::TokenRevoked(id)) => tokens.forget(&id),
            Err(RecvError::Closed) => return,
        }
    }
}
