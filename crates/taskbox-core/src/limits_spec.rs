//! The limits a task (or a workflow step) asks for, as its definition
//! says them: the store keeps a step's own with its stage, and the sandbox
//! turns them into an attempt's limits (`Limits::resolve`). Data only, below
//! both.

use serde::{Deserialize, Serialize};

/// Limits a task asks for; any left out take the server's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u32>,
}
