//! Workflow definitions, for both backends: versioned like tasks (a new
//! version per PUT, counted with the tenant's task versions against
//! `max_task_versions`).

use super::db_row::db_row;
use super::exec::{args, Commit};
use super::tenants::{lock, policy, within};
use super::{JobStore, Millis, StoreResult};

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

/// How many definitions (task and workflow versions) the tenant ($1) has.
pub const COUNT_VERSIONS: &str = "SELECT (SELECT COUNT(*) FROM tasks WHERE tenant = $1) \
     + (SELECT COUNT(*) FROM workflows WHERE tenant = $1)";

/// Inserts the next version: $1 tenant, $2 name, $3 spec, $4 now.
const INSERT: &str = "INSERT INTO workflows (tenant, name, version, spec, created_at) \
     VALUES ($1, $2, (SELECT COALESCE(MAX(version), 0) + 1 FROM workflows \
                      WHERE tenant = $1 AND name = $2), $3, $4) \
     RETURNING tenant, name, version, spec, created_at";

/// A version ($3, NULL for the newest) of the tenant's ($1) workflow $2.
const GET: &str = "SELECT tenant, name, version, spec, created_at FROM workflows \
     WHERE tenant = $1 AND name = $2 AND ($3 IS NULL OR version = $3) \
     ORDER BY version DESC LIMIT 1";

/// The newest version of each of a tenant's workflows (`one`; else every
/// tenant's, $1 NULL), by tenant and name.
fn list(one: bool) -> String {
    format!(
        "SELECT {COLUMNS} FROM workflows w WHERE {} \
         AND version = (SELECT MAX(version) FROM workflows v \
                        WHERE v.tenant = w.tenant AND v.name = w.name) \
         ORDER BY tenant, name",
        super::whose::tenant_is(one, "$1")
    )
}

/// Every version of the tenant's ($1) workflow ($2), oldest first.
const VERSIONS: &str = "SELECT version, created_at FROM workflows \
     WHERE tenant = $1 AND name = $2 ORDER BY version";

impl dyn JobStore {
    /// Adds the next version of a workflow (1 for a new one); task and
    /// workflow versions count together against `max_task_versions`.
    pub async fn workflow_insert(&self, w: NewWorkflow) -> StoreResult<WorkflowRecord> {
        let defaults = self.defaults();
        self.write(Commit::PROMPT, move |tx, now| {
            Box::pin(async move {
                // Versions are numbered one after the other, never twice.
                lock(tx, &w.tenant).await?;
                let q = policy(tx, &w.tenant, &defaults).await?.quotas;
                let versions: Option<i64> = tx.scalar(COUNT_VERSIONS, args![&w.tenant]).await?;
                within(
                    "max_task_versions",
                    q.max_task_versions,
                    versions.unwrap_or(0),
                    1,
                )?;
                let a = args![&w.tenant, &w.name, &w.spec, now];
                let row: Option<WorkflowRecord> = tx.optional(INSERT, a).await?;
                row.ok_or(super::StoreError::NotFound)
            })
        })
        .await
    }

    /// A version of a workflow; `version: None` is the newest.
    pub async fn workflow_get(
        &self,
        tenant: &str,
        name: &str,
        version: Option<u32>,
    ) -> StoreResult<Option<WorkflowRecord>> {
        let a = args![tenant, name, version];
        self.read().await?.optional(GET, a).await
    }

    /// The newest version of each workflow: one tenant's, or (`None`)
    /// every tenant's, by tenant and name.
    pub async fn workflow_list(&self, tenant: Option<&str>) -> StoreResult<Vec<WorkflowRecord>> {
        self.read()
            .await?
            .all(&list(tenant.is_some()), args![tenant])
            .await
    }

    /// Every version of a workflow, oldest first, and when it was made.
    pub async fn workflow_versions(
        &self,
        tenant: &str,
        name: &str,
    ) -> StoreResult<Vec<(u32, Millis)>> {
        let mut c = self.read().await?;
        let rows: Vec<(u32, Millis)> = c.all(VERSIONS, args![tenant, name]).await?;
        Ok(rows)
    }
}
