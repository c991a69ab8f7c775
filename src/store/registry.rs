//! Components and task versions, for both backends: the statements, the
//! records their rows make, and the transactions. Quota-checked writes
//! lock their tenant's row first, so that two uploads of one tenant are
//! checked one after the other.

use super::exec::{args, Commit, Exec};
use super::records::{
    may_define, ComponentRecord, NewComponent, NewTask, RolloutChange, TaskHead, TaskRecord,
    VersionFigures,
};
use super::tenants::{component_room, lock, policy, within};
use super::{JobStore, Millis, StoreError, StoreResult};
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
/// version and the percent as narrower integers).
pub const TASK_COLUMNS: &str = "tenant, name, CAST(version AS BIGINT) AS version, digest, spec, \
     created_at, CAST(rollout_percent AS BIGINT) AS rollout_percent, rollout_started_at, \
     rolled_back_at";
pub type TaskRow = (
    String,
    String,
    i64,
    String,
    String,
    i64,
    Option<i64>,
    Option<i64>,
    Option<i64>,
);

pub fn task(
    (tenant, name, version, digest, spec, created_at, percent, started, rolled_back): TaskRow,
) -> TaskRecord {
    TaskRecord {
        tenant,
        name,
        version: u32::try_from(version).unwrap_or(0),
        digest,
        spec,
        created_at,
        rollout_percent: percent.map(|p| u8::try_from(p.clamp(0, 100)).unwrap_or(0)),
        rollout_started_at: started,
        rolled_back_at: rolled_back,
    }
}

/// A version new jobs pin without a rollout's choice (`TaskRecord::is_live`).
const LIVE: &str = "rollout_percent IS NULL AND rolled_back_at IS NULL";

/// The task's next version (one more than its last; the caller holds the
/// tenant's writes one at a time), staged at `$6` % from `$7` when `$6`
/// is set.
pub static INSERT_TASK: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT INTO tasks (tenant, name, version, digest, spec, created_at, rollout_percent, \
                            rollout_started_at) \
         VALUES ($1, $2, (SELECT COALESCE(MAX(version), 0) + 1 FROM tasks \
                          WHERE tenant = $1 AND name = $2), $3, $4, $5, $6, $7) \
         RETURNING {TASK_COLUMNS}"
    )
});
/// A version of a task, or its live one when `$3` is NULL.
pub static TASK: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {TASK_COLUMNS} FROM tasks WHERE tenant = $1 AND name = $2 \
         AND (($3 IS NULL AND {LIVE}) OR version = $3) ORDER BY version DESC LIMIT 1"
    )
});
/// The task's newest versions not rolled back: a staged one and the live
/// one before it, or the live one (`head`).
pub static HEAD: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {TASK_COLUMNS} FROM tasks WHERE tenant = $1 AND name = $2 \
         AND rolled_back_at IS NULL ORDER BY version DESC LIMIT 2"
    )
});
pub static VERSIONS: LazyLock<String> = LazyLock::new(|| {
    format!("SELECT {TASK_COLUMNS} FROM tasks WHERE tenant = $1 AND name = $2 ORDER BY version")
});
/// The tenant's tasks (`one`; else every tenant's, $1 NULL), each at its
/// live version, by tenant and name.
pub fn list(one: bool) -> String {
    format!(
        "SELECT {TASK_COLUMNS} FROM tasks t WHERE {} AND {LIVE} \
         AND version = (SELECT MAX(version) FROM tasks \
                        WHERE tenant = t.tenant AND name = t.name AND {LIVE}) \
         ORDER BY tenant, name",
        super::whose::tenant_is(one, "$1")
    )
}
/// The versions being rolled out, the tenant's (`one`; else every
/// tenant's, $1 NULL), the newest rollouts first, at most `$2`.
pub fn staged(one: bool) -> String {
    format!(
        "SELECT {TASK_COLUMNS} FROM tasks WHERE {} AND rollout_percent IS NOT NULL \
         ORDER BY rollout_started_at DESC, tenant, name LIMIT $2",
        super::whose::tenant_is(one, "$1")
    )
}
/// What a define must know of the task first: its staged version, and
/// how many live ones it has (`may_define`).
pub static DEFINE_CHECK: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT CAST(MAX(CASE WHEN rollout_percent IS NOT NULL THEN version END) AS BIGINT), \
         COUNT(CASE WHEN {LIVE} THEN 1 END) FROM tasks WHERE tenant = $1 AND name = $2"
    )
});

/// The rows of `HEAD` as what new jobs pin (`TaskHead::of`).
pub fn head(rows: Vec<TaskRow>) -> Option<TaskHead> {
    TaskHead::of(rows.into_iter().map(task))
}

/// The statement of a rollout change and the value it binds as `$1` (the
/// percent, or `now` for a rollback; unused by a promote); the tenant and
/// the task are `$2` and `$3`. It answers the staged version's row as it
/// is after, or nothing when none is staged.
pub fn rollout_change(change: RolloutChange, now: i64) -> (String, i64) {
    let (set, bind) = match change {
        RolloutChange::Percent(p) => ("rollout_percent = $1", i64::from(p)),
        RolloutChange::Promote => ("rollout_percent = NULL", 0),
        RolloutChange::Rollback => ("rollout_percent = NULL, rolled_back_at = $1", now),
    };
    (
        format!(
            "UPDATE tasks SET {set} WHERE tenant = $2 AND name = $3 \
             AND rollout_percent IS NOT NULL RETURNING {TASK_COLUMNS}"
        ),
        bind,
    )
}

/// What each of two versions of task `$2` of tenant `$1` did in jobs made
/// since `$3` (the least job id of that millisecond; ids sort by time):
/// its jobs that completed and failed, its attempts and their fuel, from
/// the attempt records (`attempts` rows and each job's last).
pub const VERSION_FIGURES: &str =
    "SELECT CAST(version AS BIGINT), CAST(SUM(completed) AS BIGINT), \
     CAST(SUM(failed) AS BIGINT), CAST(SUM(tries) AS BIGINT), CAST(SUM(fuel) AS BIGINT) FROM ( \
       SELECT task_version AS version, \
              CASE WHEN status = 'completed' THEN 1 ELSE 0 END AS completed, \
              CASE WHEN status = 'failed' THEN 1 ELSE 0 END AS failed, 0 AS tries, 0 AS fuel \
       FROM jobs WHERE tenant = $1 AND id >= $3 AND task = $2 AND task_version IN ($4, $5) \
       UNION ALL \
       SELECT last_task_version, 0, 0, 1, COALESCE(last_fuel_used, 0) FROM jobs \
       WHERE tenant = $1 AND id >= $3 AND last_attempt IS NOT NULL AND last_task = $2 \
         AND last_task_version IN ($4, $5) \
       UNION ALL \
       SELECT a.task_version, 0, 0, 1, a.fuel_used FROM attempts a JOIN jobs j ON j.id = a.job_id \
       WHERE j.tenant = $1 AND j.id >= $3 AND a.task = $2 AND a.task_version IN ($4, $5) \
     ) f GROUP BY version ORDER BY version";
pub type FiguresRow = (i64, i64, i64, i64, i64);

/// The least job id made at `since` or after (ids are ULIDs: they start
/// with their millisecond).
pub fn first_id_at(since: i64) -> String {
    ulid::Ulid::from_parts(u64::try_from(since).unwrap_or(0), 0).to_string()
}

/// Both versions' figures, a version with no rows at zero.
pub fn figures(versions: [u32; 2], rows: Vec<FiguresRow>) -> Vec<VersionFigures> {
    let n = |v: i64| u64::try_from(v).unwrap_or(0);
    versions
        .iter()
        .map(|&version| {
            rows.iter()
                .find(|r| r.0 == i64::from(version))
                .map(|&(_, completed, failed, attempts, fuel)| VersionFigures {
                    version,
                    completed: n(completed),
                    failed: n(failed),
                    attempts: n(attempts),
                    fuel: n(fuel),
                })
                .unwrap_or(VersionFigures {
                    version,
                    ..Default::default()
                })
        })
        .collect()
}

impl dyn JobStore {
    /// Records a component for a tenant; the bytes are kept once per digest.
    /// `created` is false when the tenant had it already. A new one counts
    /// against `max_components` and `max_component_bytes`.
    pub async fn component_insert(&self, c: NewComponent) -> StoreResult<(ComponentRecord, bool)> {
        let defaults = self.defaults();
        self.write(Commit::PROMPT, move |tx, now| {
            Box::pin(async move {
                lock(tx, &c.tenant).await?;
                let known: Option<i64> = tx.scalar(KNOWN, args![&c.tenant, &c.digest]).await?;
                if known.is_none() {
                    let q = policy(tx, &c.tenant, &defaults).await?.quotas;
                    let (count, bytes) = usage(tx, &c.tenant).await?;
                    component_room(&q, count, bytes, c.bytes.len() as u64)?;
                }
                tx.execute(INSERT_BLOB, args![&c.digest, &c.bytes[..]])
                    .await?;
                let size = i64::try_from(c.bytes.len()).unwrap_or(i64::MAX);
                let a = args![&c.tenant, &c.digest, size, &c.abi, now];
                let added = tx.execute(INSERT_COMPONENT, a).await?;
                let row: Option<ComponentRow> =
                    tx.optional(COMPONENT, args![&c.tenant, &c.digest]).await?;
                let row = row.ok_or(StoreError::NotFound)?;
                Ok((component(c.digest, row), added == 1))
            })
        })
        .await
    }

    pub async fn component_get(
        &self,
        tenant: &str,
        digest: &str,
    ) -> StoreResult<Option<ComponentRecord>> {
        let row: Option<ComponentRow> = self
            .read()
            .await?
            .optional(COMPONENT, args![tenant, digest])
            .await?;
        Ok(row.map(|r| component(digest.to_owned(), r)))
    }

    /// The bytes of a component, for the runner; not scoped to a tenant.
    pub async fn component_bytes(&self, digest: &str) -> StoreResult<Option<Vec<u8>>> {
        self.read().await?.scalar(BYTES, args![digest]).await
    }

    /// How many components the tenant keeps, and their bytes in all: what
    /// an upload is held to before it is compiled
    /// (`tenants::component_room`).
    pub async fn component_usage(&self, tenant: &str) -> StoreResult<(u64, u64)> {
        let (count, bytes) = usage(&mut *self.read().await?, tenant).await?;
        Ok((count.max(0) as u64, bytes.max(0) as u64))
    }

    /// Adds the next version of a task (1 for a new task), within the
    /// tenant's `max_task_versions`; staged when `t.rollout` says so
    /// (`may_define` says when a define is refused).
    pub async fn task_insert(&self, t: NewTask) -> StoreResult<TaskRecord> {
        let defaults = self.defaults();
        self.write(Commit::PROMPT, move |tx, now| {
            Box::pin(async move {
                // Versions are numbered one after the other, never twice.
                lock(tx, &t.tenant).await?;
                let q = policy(tx, &t.tenant, &defaults).await?.quotas;
                let count = super::workflows::COUNT_VERSIONS;
                let versions: Option<i64> = tx.scalar(count, args![&t.tenant]).await?;
                within(
                    "max_task_versions",
                    q.max_task_versions,
                    versions.unwrap_or(0),
                    1,
                )?;
                let known: Option<(Option<i64>, i64)> = tx
                    .optional(&DEFINE_CHECK, args![&t.tenant, &t.name])
                    .await?;
                may_define(&t.name, known.unwrap_or((None, 0)), t.rollout.is_some())?;
                let percent = t.rollout.map(i64::from);
                let started = t.rollout.map(|_| now);
                let a = args![&t.tenant, &t.name, &t.digest, &t.spec, now, percent, started];
                let row: Option<TaskRow> = tx.optional(&INSERT_TASK, a).await?;
                row.map(task).ok_or(StoreError::NotFound)
            })
        })
        .await
    }

    /// A version of a task; `version: None` is the live one (the newest
    /// neither staged nor rolled back).
    pub async fn task_get(
        &self,
        tenant: &str,
        name: &str,
        version: Option<u32>,
    ) -> StoreResult<Option<TaskRecord>> {
        let a = args![tenant, name, version];
        let row: Option<TaskRow> = self.read().await?.optional(&TASK, a).await?;
        Ok(row.map(task))
    }

    /// What new jobs of a task pin: its live version and a staged one.
    pub async fn task_head(&self, tenant: &str, name: &str) -> StoreResult<Option<TaskHead>> {
        let rows: Vec<TaskRow> = self.read().await?.all(&HEAD, args![tenant, name]).await?;
        Ok(head(rows))
    }

    /// Changes the rollout of a task's staged version, answering its row
    /// as it is after; `NotFound` when none is staged. The tenant's row is
    /// locked, as a define's is, so that a define and a change of the same
    /// task are one after the other.
    pub async fn task_rollout(
        &self,
        tenant: &str,
        name: &str,
        change: RolloutChange,
    ) -> StoreResult<TaskRecord> {
        let (tenant, name) = (tenant.to_owned(), name.to_owned());
        self.write(Commit::PROMPT, move |tx, now| {
            Box::pin(async move {
                lock(tx, &tenant).await?;
                let (sql, value) = rollout_change(change, now);
                let row: Option<TaskRow> = tx.optional(&sql, args![value, &tenant, &name]).await?;
                row.map(task).ok_or(StoreError::NotFound)
            })
        })
        .await
    }

    /// The versions being rolled out (at most one a task), one tenant's
    /// or (`None`) every tenant's, newest rollouts first, at most `limit`.
    pub async fn tasks_staged(
        &self,
        tenant: Option<&str>,
        limit: u32,
    ) -> StoreResult<Vec<TaskRecord>> {
        let sql = staged(tenant.is_some());
        let rows: Vec<TaskRow> = self.read().await?.all(&sql, args![tenant, limit]).await?;
        Ok(rows.into_iter().map(task).collect())
    }

    /// What each of two versions of a task did in the jobs made since
    /// `since`, in the order given.
    pub async fn version_figures(
        &self,
        tenant: &str,
        name: &str,
        versions: [u32; 2],
        since: Millis,
    ) -> StoreResult<Vec<VersionFigures>> {
        let first = first_id_at(since);
        let a = args![tenant, name, &first, versions[0], versions[1]];
        let rows: Vec<FiguresRow> = self.read().await?.all(VERSION_FIGURES, a).await?;
        Ok(figures(versions, rows))
    }

    /// Every version of a task, oldest first.
    pub async fn task_versions(&self, tenant: &str, name: &str) -> StoreResult<Vec<TaskRecord>> {
        let rows: Vec<TaskRow> = self
            .read()
            .await?
            .all(&VERSIONS, args![tenant, name])
            .await?;
        Ok(rows.into_iter().map(task).collect())
    }

    /// The live version of each task: one tenant's, or (`None`) every
    /// tenant's.
    pub async fn task_list(&self, tenant: Option<&str>) -> StoreResult<Vec<TaskRecord>> {
        let sql = list(tenant.is_some());
        let rows: Vec<TaskRow> = self.read().await?.all(&sql, args![tenant]).await?;
        Ok(rows.into_iter().map(task).collect())
    }
}

/// A tenant's components: how many, and their bytes.
async fn usage(c: &mut dyn Exec, tenant: &str) -> StoreResult<(i64, i64)> {
    let row: Option<(i64, i64)> = c.optional(USAGE, args![tenant]).await?;
    Ok(row.unwrap_or((0, 0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(version: i64, percent: Option<i64>, rolled_back: Option<i64>) -> TaskRow {
        let t = String::from;
        (
            t("a"),
            t("t"),
            version,
            t("d"),
            t("{}"),
            1,
            percent,
            percent.map(|_| 1),
            rolled_back,
        )
    }

    #[test]
    fn a_rollout_change_binds_what_it_sets() {
        let (sql, v) = rollout_change(RolloutChange::Rollback, 7);
        assert!(sql.contains("rolled_back_at = $1"), "{sql}");
        assert_eq!(v, 7);
        let (sql, v) = rollout_change(RolloutChange::Percent(5), 7);
        assert!(sql.contains("rollout_percent = $1"), "{sql}");
        assert_eq!(v, 5);
        let (sql, _) = rollout_change(RolloutChange::Promote, 7);
        assert!(!sql.contains("$1"), "{sql}");
    }

    #[test]
    fn the_head_is_a_staged_version_and_the_live_one_before_it() {
        assert_eq!(head(Vec::new()), None);
        let live = head(vec![row(3, None, None), row(2, None, None)]).unwrap();
        assert_eq!((live.live.version, live.staged), (3, None));
        let staged = head(vec![row(4, Some(25), None), row(3, None, None)]).unwrap();
        assert_eq!(staged.live.version, 3);
        assert_eq!(staged.staged.unwrap().rollout_percent, Some(25));
        // A staged version alone (never made) pins nothing rather than it.
        assert_eq!(head(vec![row(1, Some(25), None)]), None);
    }

    #[test]
    fn a_define_waits_for_a_rollout_and_a_rollout_needs_a_live_version() {
        assert!(may_define("t", (None, 0), false).is_ok());
        assert!(may_define("t", (None, 1), true).is_ok());
        for (known, rollout, says) in [
            ((Some(4), 3), false, "being rolled out"),
            ((Some(4), 3), true, "being rolled out"),
            ((None, 0), true, "no live version"),
        ] {
            match may_define("t", known, rollout) {
                Err(StoreError::Conflict(m)) => assert!(m.contains(says), "{m}"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn figures_answer_both_versions_in_order() {
        let f = figures([5, 4], vec![(4, 2, 1, 3, 300)]);
        assert_eq!(
            f[0],
            VersionFigures {
                version: 5,
                ..Default::default()
            }
        );
        assert_eq!(
            f[1],
            VersionFigures {
                version: 4,
                completed: 2,
                failed: 1,
                attempts: 3,
                fuel: 300
            }
        );
        // The least id of a millisecond sorts before every id made in it.
        let id = ulid::Ulid::from_parts(1_700_000_000_123, 1).to_string();
        assert!(first_id_at(1_700_000_000_123) < id);
        assert!(first_id_at(1_700_000_000_124) > id);
    }
}
