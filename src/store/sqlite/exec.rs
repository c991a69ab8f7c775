//! `Exec` on SQLite: on the writer's connection (rusqlite, inside the
//! writer thread's batch, where nothing waits) and on a reader's (sqlx).

use super::{constraint, Constraint};
use crate::store::dialect::Dialect;
use crate::store::exec::{sqlx_query, Arg, DbError, Exec, Row, Value};
use async_trait::async_trait;
use rusqlite::types::ValueRef;
use sqlx::{Column, Row as _, TypeInfo, ValueRef as _};
use std::sync::Arc;

/// The writer's connection, for one write of a batch.
pub struct WriterExec<'c> {
    pub conn: &'c mut rusqlite::Connection,
}

fn wexec(e: rusqlite::Error) -> DbError {
    match constraint(&e) {
        Some(Constraint::Unique) => DbError::Unique(e.to_string()),
        Some(Constraint::ForeignKey) => DbError::ForeignKey(e.to_string()),
        None => DbError::Other(e.to_string()),
    }
}

/// Binds each parameter by its number (`$N` or `?N`), so that a statement
/// may name its parameters in any order; an unnumbered `?` takes the next.
/// SQLite gives a `?N` the index N itself, so only a statement with a `$`
/// in it needs its parameters' names read (a `$N` is indexed by its first
/// appearance).
fn bind(
    stmt: &mut rusqlite::CachedStatement<'_>,
    sql: &str,
    args: &[Arg<'_>],
) -> Result<(), DbError> {
    let named = sql.contains('$');
    for i in 1..=stmt.parameter_count() {
        let n = if named {
            stmt.parameter_name(i)
                .and_then(|name| name.get(1..)?.parse::<usize>().ok())
                .unwrap_or(i)
        } else {
            i
        };
        let arg = args.get(n - 1).ok_or_else(|| {
            DbError::Other(format!(
                "the statement wants parameter {n}; {} given",
                args.len()
            ))
        })?;
        let bound = match *arg {
            Arg::Int(v) => stmt.raw_bind_parameter(i, v),
            Arg::Real(v) => stmt.raw_bind_parameter(i, v),
            Arg::Text(v) => stmt.raw_bind_parameter(i, v),
            Arg::Blob(v) => stmt.raw_bind_parameter(i, v),
            Arg::Bool(v) => stmt.raw_bind_parameter(i, v),
        };
        bound.map_err(wexec)?;
    }
    Ok(())
}

fn value(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

impl WriterExec<'_> {
    fn rows(&mut self, sql: &str, args: &[Arg<'_>], first: bool) -> Result<Vec<Row>, DbError> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(wexec)?;
        bind(&mut stmt, sql, args)?;
        let names: Arc<[String]> = stmt.column_names().into_iter().map(String::from).collect();
        let width = names.len();
        let mut rows = stmt.raw_query();
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(wexec)? {
            let mut values = Vec::with_capacity(width);
            for i in 0..width {
                values.push(value(r.get_ref(i).map_err(wexec)?));
            }
            out.push(Row::new(names.clone(), values));
            if first {
                break;
            }
        }
        Ok(out)
    }
}

#[async_trait]
impl Exec for WriterExec<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    async fn execute(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64, DbError> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(wexec)?;
        bind(&mut stmt, sql, args)?;
        Ok(stmt.raw_execute().map_err(wexec)? as u64)
    }

    async fn fetch_all(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Vec<Row>, DbError> {
        self.rows(sql, args, false)
    }

    async fn tally(&mut self, tally: crate::store::tally::Tally) -> crate::store::StoreResult<()> {
        use super::tally::Apply;
        tally.apply(self.conn)
    }

    async fn fetch_optional(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
    ) -> Result<Option<Row>, DbError> {
        Ok(self.rows(sql, args, true)?.into_iter().next())
    }
}

/// Runs to its end a part of a write written over `Exec` (on a
/// `WriterExec`, inside the write that runs now): nothing on the writer's
/// connection waits, so it ends in this one poll.
pub fn block<T>(
    part: impl std::future::Future<Output = crate::store::StoreResult<T>>,
) -> crate::store::StoreResult<T> {
    use futures_util::FutureExt;
    std::pin::pin!(part).now_or_never().unwrap_or_else(|| {
        Err(crate::store::StoreError::Internal(
            "a write on SQLite waited".into(),
        ))
    })
}

/// A reader's connection, from the pool of read-only ones.
pub struct ReaderExec(pub sqlx::pool::PoolConnection<sqlx::Sqlite>);

fn rexec(e: sqlx::Error) -> DbError {
    DbError::Other(e.to_string())
}

fn reader_row(r: &sqlx::sqlite::SqliteRow, names: &Arc<[String]>) -> Result<Row, DbError> {
    let mut values = Vec::with_capacity(names.len());
    for i in 0..names.len() {
        let raw = r.try_get_raw(i).map_err(rexec)?;
        let v = if raw.is_null() {
            Value::Null
        } else {
            match raw.type_info().name() {
                "INTEGER" | "BOOLEAN" => Value::Int(r.try_get_unchecked(i).map_err(rexec)?),
                "REAL" => Value::Real(r.try_get_unchecked(i).map_err(rexec)?),
                "BLOB" => Value::Blob(r.try_get_unchecked(i).map_err(rexec)?),
                _ => Value::Text(r.try_get_unchecked(i).map_err(rexec)?),
            }
        };
        values.push(v);
    }
    Ok(Row::new(names.clone(), values))
}

#[async_trait]
impl Exec for ReaderExec {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    async fn execute(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64, DbError> {
        let done = sqlx_query(sql, args)
            .execute(&mut *self.0)
            .await
            .map_err(rexec)?;
        Ok(done.rows_affected())
    }

    async fn fetch_all(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Vec<Row>, DbError> {
        let rows = sqlx_query(sql, args)
            .fetch_all(&mut *self.0)
            .await
            .map_err(rexec)?;
        let Some(first) = rows.first() else {
            return Ok(Vec::new());
        };
        let names: Arc<[String]> = first
            .columns()
            .iter()
            .map(|c| c.name().to_owned())
            .collect();
        rows.iter().map(|r| reader_row(r, &names)).collect()
    }
}
