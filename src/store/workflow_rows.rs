//! Workflow definitions as the seam keeps them: versioned like tasks (a
//! new version per PUT, counted with the tenant's task versions against
//! `max_task_versions`), with the SQL both backends share.

use super::db_row::db_row;
use super::Millis;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewWorkflow {
    pub tenant: String,
    pub name: String,
    /// The definition, JSON text (a `registry::workflow::WorkflowSpec`).
    pub spec: String,
}

db_row! {
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct WorkflowRecord {
        pub tenant: String,
        pub name: String,
        pub version: i32,
        pub spec: String,
        pub created_at: Millis,
    }
}

/// The columns of a workflow row, in `WorkflowRecord`'s order.
pub const COLUMNS: &str = "tenant, name, version, spec, created_at";

/// How many definitions (task and workflow versions) the tenant has:
/// parameter 1 is the tenant.
pub fn count_versions(p: &str) -> String {
    format!(
        "SELECT (SELECT COUNT(*) FROM tasks WHERE tenant = {p}) \
              + (SELECT COUNT(*) FROM workflows WHERE tenant = {p})"
    )
}

/// Inserts the next version: parameters tenant, name, spec, now.
pub fn insert(p: [&str; 4]) -> String {
    let [tenant, name, spec, now] = p;
    format!(
        "INSERT INTO workflows (tenant, name, version, spec, created_at) \
         VALUES ({tenant}, {name}, (SELECT COALESCE(MAX(version), 0) + 1 FROM workflows \
                                    WHERE tenant = {tenant} AND name = {name}), {spec}, {now}) \
         RETURNING {COLUMNS}"
    )
}

/// A version (parameter 3, NULL for the newest): tenant, name, version.
pub fn get(p: [&str; 3]) -> String {
    let [tenant, name, version] = p;
    format!(
        "SELECT {COLUMNS} FROM workflows WHERE tenant = {tenant} AND name = {name} \
         AND ({version} IS NULL OR version = {version}) ORDER BY version DESC LIMIT 1"
    )
}

/// The newest version of each of a tenant's workflows (`one`; else every
/// tenant's, parameter `tenant` NULL), by tenant and name.
pub fn list(one: bool, tenant: &str) -> String {
    format!(
        "SELECT {COLUMNS} FROM workflows w WHERE {} \
         AND version = (SELECT MAX(version) FROM workflows v \
                        WHERE v.tenant = w.tenant AND v.name = w.name) \
         ORDER BY tenant, name",
        super::whose::tenant_is(one, tenant)
    )
}

/// Every version of a workflow, oldest first: version and when it was
/// made (tenant, name).
pub fn versions(p: [&str; 2]) -> String {
    let [tenant, name] = p;
    format!(
        "SELECT version, created_at FROM workflows WHERE tenant = {tenant} AND name = {name} \
         ORDER BY version"
    )
}
