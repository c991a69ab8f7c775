//! Components and task versions as both backends keep them: the
//! statements both run and the records their rows make.

use super::records::{ComponentRecord, TaskRecord};
use std::sync::LazyLock;

pub const KNOWN: &str = "SELECT 1 FROM components WHERE tenant = $1 AND digest = $2";
/// A tenant's components: how many, and their bytes.
pub const USAGE: &str = "SELECT COUNT(*), CAST(COALESCE(SUM(size), 0) AS BIGINT) \
     FROM components WHERE tenant = $1";
/// The bytes of a digest are kept once, whoever uploads them.
pub const INSERT_BLOB: &str =
    "INSERT INTO blobs (digest, bytes) VALUES ($1, $2) ON CONFLICT (digest) DO NOTHING";
pub const INSERT_COMPONENT: &str = "INSERT INTO components (tenant, digest, size, abi, \
     created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant, digest) DO NOTHING";
pub const COMPONENT: &str =
    "SELECT size, abi, created_at FROM components WHERE tenant = $1 AND digest = $2";
pub const BYTES: &str = "SELECT bytes FROM blobs WHERE digest = $1";

/// A row of `COMPONENT`.
pub type ComponentRow = (i64, String, i64);

pub fn component(digest: String, (size, abi, created_at): ComponentRow) -> ComponentRecord {
    ComponentRecord {
        digest,
        size: u64::try_from(size).unwrap_or(0),
        abi,
        created_at,
    }
}

/// A task version's columns, in `TaskRow`'s order (PostgreSQL keeps the
/// version as a narrower integer).
pub const TASK_COLUMNS: &str =
    "tenant, name, CAST(version AS BIGINT) AS version, digest, spec, created_at";
pub type TaskRow = (String, String, i64, String, String, i64);

pub fn task((tenant, name, version, digest, spec, created_at): TaskRow) -> TaskRecord {
    TaskRecord {
        tenant,
        name,
        version: u32::try_from(version).unwrap_or(0),
        digest,
        spec,
        created_at,
    }
}

/// The task's next version (one more than its last; the caller holds the
/// tenant's writes one at a time).
pub static INSERT_TASK: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT INTO tasks (tenant, name, version, digest, spec, created_at) \
         VALUES ($1, $2, (SELECT COALESCE(MAX(version), 0) + 1 FROM tasks \
                          WHERE tenant = $1 AND name = $2), $3, $4, $5) \
         RETURNING {TASK_COLUMNS}"
    )
});
/// A version of a task, or its newest when `$3` is NULL.
pub static TASK: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {TASK_COLUMNS} FROM tasks WHERE tenant = $1 AND name = $2 \
         AND ($3 IS NULL OR version = $3) ORDER BY version DESC LIMIT 1"
    )
});
pub static VERSIONS: LazyLock<String> = LazyLock::new(|| {
    format!("SELECT {TASK_COLUMNS} FROM tasks WHERE tenant = $1 AND name = $2 ORDER BY version")
});
