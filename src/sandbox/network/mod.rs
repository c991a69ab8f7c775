//! Outbound HTTP for component guests (`wasi:http/outgoing-handler`, and
//! `taskbox:task/fetch` over the same hooks): what
//! the server allows, what a task is granted, what an attempt used, and
//! the per-tenant cap on connections. The checks themselves are in
//! `hooks` (each request) and `dial` (each connection).

mod allow;
mod body;
mod dial;
mod fetch;
mod hooks;
mod span;

pub use allow::{Allowlist, HostPattern, MAX_PATTERNS};
pub use hooks::GuestHttp;

use crate::network_tally::NetworkTally;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Semaphore;

/// What the server allows guests' outbound HTTP, for every task; a task's
/// own `network` settings are clamped to these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkConfig {
    /// Loopback, private, link-local, CGNAT, multicast and unspecified
    /// addresses may be reached (on-premises use and tests).
    pub allow_private: bool,
    /// Most requests one attempt may make (a task's `max_requests` is
    /// clamped to it).
    pub max_requests: u32,
    /// A task's `max_requests` when it sets none.
    pub default_requests: u32,
    /// Largest response body one request may read.
    pub max_response_bytes: u64,
    /// A task's `max_response_bytes` when it sets none.
    pub default_response_bytes: u64,
    /// Largest request body a guest may send.
    pub max_request_bytes: u64,
    /// Longest wait for DNS and the connection (TCP and TLS) together.
    pub connect_timeout: Duration,
    /// Longest wait from the request sent to the response's head.
    pub first_byte_timeout: Duration,
    /// Longest wait between two pieces of a response body.
    pub idle_timeout: Duration,
    /// Most connections one tenant's guests hold open at once, in this
    /// process.
    pub max_connections_per_tenant: u32,
}

/// Ceiling of `--outbound-max-connections-per-tenant`.
pub const MAX_CONNECTIONS_PER_TENANT: u32 = 10_000;
/// Ceiling of `--outbound-max-requests`.
pub const MAX_REQUESTS_CEILING: u32 = 100_000;
/// Ceiling of `--outbound-max-response-bytes` (1 GiB).
pub const MAX_RESPONSE_BYTES_CEILING: u64 = 1 << 30;

impl Default for NetworkConfig {
    fn default() -> Self {
        NetworkConfig {
            allow_private: false,
            max_requests: 1_000,
            default_requests: 100,
            max_response_bytes: 64 << 20,
            default_response_bytes: 8 << 20,
            max_request_bytes: 8 << 20,
            connect_timeout: Duration::from_secs(10),
            first_byte_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(30),
            max_connections_per_tenant: 32,
        }
    }
}

/// What one task's guests may do: resolved from its `network` settings
/// and clamped by the server's [`NetworkConfig`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkGrant {
    pub allow: Allowlist,
    pub max_requests: u32,
    pub max_response_bytes: u64,
}

impl NetworkGrant {
    /// The grant of a task's settings: the list parsed (the task's
    /// definition was refused if it did not parse), the caps clamped.
    pub fn resolve(
        allow: &[String],
        max_requests: Option<u32>,
        max_response_bytes: Option<u64>,
        config: &NetworkConfig,
    ) -> Result<NetworkGrant, Vec<String>> {
        Ok(NetworkGrant {
            allow: Allowlist::parse(allow)?,
            max_requests: max_requests
                .unwrap_or(config.default_requests)
                .min(config.max_requests),
            max_response_bytes: max_response_bytes
                .unwrap_or(config.default_response_bytes)
                .clamp(1, config.max_response_bytes),
        })
    }
}

/// The live counters behind a [`NetworkTally`], shared by an attempt's
/// requests (their bodies are read on other tasks).
#[derive(Debug, Default)]
pub struct NetworkUsage {
    /// Requests weighed against the grant's `max_requests`: each one the
    /// guest made, gone out or refused.
    taken: AtomicU64,
    requests: AtomicU64,
    refused: AtomicU64,
    bytes_sent: AtomicU64,
    bytes_received: AtomicU64,
}

impl NetworkUsage {
    pub fn tally(&self) -> NetworkTally {
        NetworkTally {
            requests: self.requests.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
            bytes_sent: self.bytes_sent.load(Ordering::Relaxed),
            bytes_received: self.bytes_received.load(Ordering::Relaxed),
        }
    }

    /// Takes one of the attempt's `max` requests: false once all are
    /// taken.
    fn take(&self, max: u32) -> bool {
        self.taken
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < u64::from(max)).then_some(n + 1)
            })
            .is_ok()
    }

    /// A request the host turned away before anything went out.
    fn refuse(&self) {
        self.refused.fetch_add(1, Ordering::Relaxed);
    }

    /// A request that went out.
    fn went_out(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    fn sent(&self, n: u64) {
        self.bytes_sent.fetch_add(n, Ordering::Relaxed);
    }

    fn received(&self, n: u64) {
        self.bytes_received.fetch_add(n, Ordering::Relaxed);
    }
}

/// The process's outbound side: its settings, the TLS client settings, and
/// each tenant's connection slots.
pub struct Outbound {
    config: NetworkConfig,
    tls: std::sync::OnceLock<Result<Arc<rustls::ClientConfig>, String>>,
    tenants: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl std::fmt::Debug for Outbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbound")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Outbound {
    pub fn new(config: NetworkConfig) -> Outbound {
        Outbound {
            config,
            tls: std::sync::OnceLock::new(),
            tenants: Mutex::new(HashMap::new()),
        }
    }

    pub fn config(&self) -> &NetworkConfig {
        &self.config
    }

    /// The tenant's connection slots, made at its first request.
    fn slots(&self, tenant: &str) -> Arc<Semaphore> {
        let mut map = self.tenants.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = map.get(tenant) {
            return s.clone();
        }
        let permits = self.config.max_connections_per_tenant.max(1) as usize;
        let s = Arc::new(Semaphore::new(permits));
        map.insert(tenant.to_owned(), s.clone());
        s
    }

    /// Connections the tenant's guests hold open now, in this process.
    pub fn open_connections(&self, tenant: &str) -> u32 {
        let map = self.tenants.lock().unwrap_or_else(|e| e.into_inner());
        map.get(tenant).map_or(0, |s| {
            let free = u32::try_from(s.available_permits()).unwrap_or(u32::MAX);
            self.config
                .max_connections_per_tenant
                .max(1)
                .saturating_sub(free)
        })
    }

    /// Web PKI roots from the platform, with ring; built at the first
    /// https request, since most servers never make one.
    fn tls(&self) -> Result<Arc<rustls::ClientConfig>, String> {
        self.tls
            .get_or_init(|| {
                use rustls_platform_verifier::BuilderVerifierExt;
                let provider = Arc::new(rustls::crypto::ring::default_provider());
                rustls::ClientConfig::builder_with_provider(provider)
                    .with_safe_default_protocol_versions()
                    .map_err(|e| e.to_string())?
                    .with_platform_verifier()
                    .map(|b| Arc::new(b.with_no_client_auth()))
                    .map_err(|e| format!("the platform's TLS roots cannot be loaded: {e}"))
            })
            .clone()
    }
}
