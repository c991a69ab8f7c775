//! The SQL of tenants, tokens, components and task versions on SQLite
//! (the writes; they run on the writer's connection).

use super::rows::TaskRow;
use super::{constraint, wdb, Constraint};
use crate::store::records::*;
use crate::store::{Millis, StoreError, StoreResult};
use rusqlite::{params, Connection};

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
    })
}

pub fn token_insert(conn: &Connection, now: Millis, t: NewToken) -> StoreResult<()> {
    let admin = t.tenant.is_none();
    if admin {
        conn.execute("DELETE FROM tokens WHERE admin = 1", [])
            .map_err(wdb)?;
    }
    let scopes: Vec<&str> = t.scopes.iter().map(|s| s.as_str()).collect();
    conn.prepare_cached(
        "INSERT OR REPLACE INTO tokens (hash, tenant, scopes, admin, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
    )
    .and_then(|mut s| s.execute(params![t.hash, t.tenant, scopes.join(" "), admin, now]))
    .map_err(|e| match constraint(&e) {
        Some(Constraint::ForeignKey) => StoreError::NotFound,
        _ => wdb(e),
    })?;
    Ok(())
}

pub fn token_from_row(tenant: Option<String>, scopes: String, admin: bool) -> TokenRecord {
    TokenRecord {
        tenant,
        // A scope this version does not know grants nothing.
        scopes: scopes.split_whitespace().filter_map(Scope::parse).collect(),
        admin,
    }
}

pub fn component_insert(
    conn: &Connection,
    now: Millis,
    c: NewComponent,
) -> StoreResult<(ComponentRecord, bool)> {
    conn.execute(
        "INSERT OR IGNORE INTO blobs (digest, bytes) VALUES (?1, ?2)",
        params![c.digest, c.bytes],
    )
    .map_err(wdb)?;
    let added = conn
        .execute(
            "INSERT OR IGNORE INTO components (tenant, digest, size, abi, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![c.tenant, c.digest, c.bytes.len() as i64, c.abi, now],
        )
        .map_err(wdb)?;
    let (size, abi, created_at): (i64, String, i64) = conn
        .query_row(
            "SELECT size, abi, created_at FROM components WHERE tenant = ?1 AND digest = ?2",
            params![c.tenant, c.digest],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .map_err(wdb)?;
    Ok((
        ComponentRecord {
            digest: c.digest,
            size: u64::try_from(size).unwrap_or(0),
            abi,
            created_at,
        },
        added == 1,
    ))
}

pub fn task_insert(conn: &Connection, now: Millis, t: NewTask) -> StoreResult<TaskRecord> {
    let row = conn
        .query_row(
            "INSERT INTO tasks (tenant, name, version, digest, spec, created_at) \
             VALUES (?1, ?2, (SELECT COALESCE(MAX(version), 0) + 1 FROM tasks WHERE tenant = ?1 AND name = ?2), ?3, ?4, ?5) \
             RETURNING tenant, name, version, digest, spec, created_at",
            params![t.tenant, t.name, t.digest, t.spec, now],
            TaskRow::read,
        )
        .map_err(wdb)?;
    Ok(row.into())
}
