//! The SQL of tenants on SQLite: their settings (weight and quotas), the
//! policy a write applies to one (its settings over the server's defaults),
//! and its usage.

use super::wdb;
use crate::quota::{window_start, Quotas};
use crate::store::records::*;
pub use crate::store::tenants::{
    policy_from, tenant_from, within, Policy, TenantRow, POLICY, TENANT_COLUMNS, TENANT_GET,
    TENANT_LIST,
};
use crate::store::{Millis, StoreError, StoreResult};
use rusqlite::{params, Connection, OptionalExtension};

pub fn tenant_insert(conn: &Connection, now: Millis, name: String) -> StoreResult<Tenant> {
    let added = conn
        .prepare_cached("INSERT OR IGNORE INTO tenants (name, created_at) VALUES (?1, ?2)")
        .and_then(|mut s| s.execute(params![name, now]))
        .map_err(wdb)?;
    if added == 0 {
        return Err(StoreError::Conflict(format!(
            "tenant {name:?} exists already"
        )));
    }
    Ok(Tenant {
        name,
        created_at: now,
        weight: None,
        quotas: Quotas::default(),
    })
}

pub fn tenant_put(
    conn: &Connection,
    now: Millis,
    t: TenantSettings,
) -> StoreResult<(Tenant, bool)> {
    let quotas = (t.quotas != Quotas::default())
        .then(|| serde_json::to_string(&t.quotas))
        .transpose()
        .map_err(|e| StoreError::Internal(e.to_string()))?;
    let added = conn
        .prepare_cached("INSERT OR IGNORE INTO tenants (name, created_at) VALUES (?1, ?2)")
        .and_then(|mut s| s.execute(params![t.name, now]))
        .map_err(wdb)?;
    let row: TenantRow = conn
        .prepare_cached(&format!(
            "UPDATE tenants SET weight = ?1, quotas = ?2 WHERE name = ?3 RETURNING {TENANT_COLUMNS}"
        ))
        .and_then(|mut s| {
            s.query_row(params![t.weight, quotas, t.name], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
        })
        .map_err(wdb)?;
    Ok((tenant_from(row)?, added == 1))
}

/// What the store enforces for one tenant: its weight and its quotas, each
/// its own or the server's default.
pub fn policy(conn: &Connection, tenant: &str, defaults: &Quotas) -> StoreResult<Policy> {
    let row: Option<(Option<i64>, Option<String>)> = super::shared(conn, POLICY)?
        .query_row(params![tenant], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()
        .map_err(wdb)?;
    policy_from(tenant, row, defaults)
}

pub fn queued(conn: &Connection, tenant: &str) -> StoreResult<i64> {
    conn.prepare_cached("SELECT queued + waiting FROM tenant_jobs WHERE tenant = ?1")
        .and_then(|mut s| s.query_row(params![tenant], |r| r.get(0)).optional())
        .map(|n: Option<i64>| n.unwrap_or(0))
        .map_err(wdb)
}

/// The tenant's running jobs and the fuel it used in the window `now` is in.
pub fn running_and_fuel(conn: &Connection, tenant: &str, now: Millis) -> StoreResult<(i64, i64)> {
    conn.prepare_cached(
        "SELECT (SELECT running FROM tenant_jobs WHERE tenant = ?1), \
                (SELECT fuel FROM tenant_usage WHERE tenant = ?1 AND window_start = ?2)",
    )
    .and_then(|mut s| {
        s.query_row(params![tenant, window_start(now)], |r| {
            Ok((
                r.get::<_, Option<i64>>(0)?.unwrap_or(0),
                r.get::<_, Option<i64>>(1)?.unwrap_or(0),
            ))
        })
    })
    .map_err(wdb)
}
