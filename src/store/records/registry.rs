//! Components and task versions as the registry keeps them, and a version pinned into a job.

use super::*;

#[derive(Debug, Clone)]
pub struct NewComponent {
    pub tenant: String,
    pub digest: String,
    pub abi: String,
    pub bytes: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ComponentRecord {
    pub digest: String,
    pub size: u64,
    pub abi: String,
    #[serde(skip)]
    pub created_at: Millis,
}

#[derive(Debug, Clone)]
pub struct NewTask {
    pub tenant: String,
    pub name: String,
    pub digest: String,
    /// The task definition, JSON text (a `registry::spec::TaskSpec`).
    pub spec: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRecord {
    pub tenant: String,
    pub name: String,
    pub version: u32,
    pub digest: String,
    pub spec: String,
    pub created_at: Millis,
}

/// A task version pinned into a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TaskRef {
    pub name: String,
    pub version: u32,
    pub digest: String,
}
