//! Tenants: their settings, gauges and usage windows, and what a token may do.

use super::*;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tenant {
    pub name: String,
    pub created_at: Millis,
    /// Its share of the runners against other tenants'; `None`: the default.
    pub weight: Option<u32>,
    /// The quotas the admin set; the others are the server's defaults.
    pub quotas: Quotas,
}

/// What the admin sets on a tenant; everything left out is the default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantSettings {
    pub name: String,
    pub weight: Option<u32>,
    pub quotas: Quotas,
}

/// How many of a tenant's jobs are in each unfinished state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct JobGauges {
    pub queued: u64,
    pub running: u64,
    pub waiting: u64,
}

/// What a tenant used in one window (a minute, by the store's clock).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct UsageWindow {
    pub start: Millis,
    pub fuel: u64,
    pub wall_ms: u64,
    pub attempts: u64,
    /// Outbound HTTP requests its guests made.
    pub http_requests: u64,
    /// Outbound HTTP body bytes its guests sent and received.
    pub http_bytes: u64,
    /// Jobs that ended in the window, by how.
    pub completed: u64,
    pub failed: u64,
    pub cancelled: u64,
    /// Jobs a result cache completed without an attempt, and the fuel
    /// their sources burned.
    pub cache_hits: u64,
    pub fuel_saved: u64,
}

/// Which usage to export: attempts that ended in [from, to), in buckets
/// `bucket_ms` wide from the epoch; one tenant's, or (`None`) every one's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageExportQuery {
    pub tenant: Option<String>,
    pub from: Millis,
    pub to: Millis,
    pub bucket_ms: i64,
}

/// One line of the usage export: what a tenant's task version cost in one
/// bucket, summed from its attempt records.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UsageLine {
    pub tenant: String,
    pub bucket_start: Millis,
    pub task: String,
    pub version: u32,
    pub attempts: u64,
    pub fuel: u64,
    pub wall_ms: u64,
    /// Each attempt's peak memory times its wall-clock time, in MiB·ms.
    pub memory_mib_ms: f64,
    pub http_requests: u64,
    /// Outbound request and response body bytes.
    pub http_bytes: u64,
    /// Jobs the result cache completed without an attempt, and the fuel
    /// their sources burned.
    pub cache_hits: u64,
    pub fuel_saved: u64,
}

/// A tenant's usage now: its jobs, and the current and the last window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TenantUsage {
    pub jobs: JobGauges,
    pub current: UsageWindow,
    pub last: UsageWindow,
}

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
pub enum Scope {
    #[serde(rename = "tasks:write")]
    TasksWrite,
    #[serde(rename = "jobs:queue")]
    JobsQueue,
    #[serde(rename = "jobs:run")]
    JobsRun,
    #[serde(rename = "jobs:cancel")]
    JobsCancel,
    #[serde(rename = "jobs:read")]
    JobsRead,
    #[serde(rename = "schedules:write")]
    SchedulesWrite,
    #[serde(rename = "webhooks:write")]
    WebhooksWrite,
    /// `GET /metrics`: the process's figures, of every tenant.
    #[serde(rename = "metrics:read")]
    MetricsRead,
    /// Put, list and delete the tenant's secrets (never read their values).
    #[serde(rename = "secrets:write")]
    SecretsWrite,
}

impl Scope {
    pub const ALL: [Scope; 9] = [
        Scope::TasksWrite,
        Scope::JobsQueue,
        Scope::JobsRun,
        Scope::JobsCancel,
        Scope::JobsRead,
        Scope::SchedulesWrite,
        Scope::WebhooksWrite,
        Scope::MetricsRead,
        Scope::SecretsWrite,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::TasksWrite => "tasks:write",
            Scope::JobsQueue => "jobs:queue",
            Scope::JobsRun => "jobs:run",
            Scope::JobsCancel => "jobs:cancel",
            Scope::JobsRead => "jobs:read",
            Scope::SchedulesWrite => "schedules:write",
            Scope::WebhooksWrite => "webhooks:write",
            Scope::MetricsRead => "metrics:read",
            Scope::SecretsWrite => "secrets:write",
        }
    }

    pub fn parse(s: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|x| x.as_str() == s)
    }
}
