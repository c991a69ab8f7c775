//! `Exec` on PostgreSQL: on a transaction's connection, or on one of the
//! pool's for reads.

use super::{pg, violated, Violation};
use crate::store::dialect::Dialect;
use crate::store::exec::{sqlx_query, Arg, DbError, Exec, Row, Value};
use crate::store::StoreError;
use async_trait::async_trait;
use sqlx::pool::PoolConnection;
use sqlx::postgres::PgRow;
use sqlx::{Column, PgConnection, Postgres, Row as _, Transaction, TypeInfo, ValueRef as _};
use std::sync::Arc;

/// A connection statements run on: a write transaction's, or one taken
/// from the pool for reads.
pub struct PgExec<C>(pub C);

/// What `PgExec` runs its statements on.
pub trait Conn: Send {
    /// A transaction's: what it writes commits or rolls back together.
    const IN_TRANSACTION: bool;
    fn conn(&mut self) -> &mut PgConnection;
}

impl Conn for &mut Transaction<'_, Postgres> {
    const IN_TRANSACTION: bool = true;
    fn conn(&mut self) -> &mut PgConnection {
        self
    }
}

impl Conn for PoolConnection<Postgres> {
    const IN_TRANSACTION: bool = false;
    fn conn(&mut self) -> &mut PgConnection {
        self
    }
}

/// A write's counts or a NOTIFY outside a transaction would not go with
/// what they describe: refused.
fn in_transaction<C: Conn>() -> Result<(), DbError> {
    match C::IN_TRANSACTION {
        true => Ok(()),
        false => Err(DbError::Other(
            "a write's counts or notice on a connection that only reads".into(),
        )),
    }
}

fn err(e: sqlx::Error) -> DbError {
    match violated(&e) {
        Some((Violation::Unique, c)) => DbError::Unique(c),
        Some((Violation::ForeignKey, c)) => DbError::ForeignKey(c),
        None => match pg(e) {
            StoreError::Unavailable(m) => DbError::Unavailable(m),
            other => DbError::Other(other.to_string()),
        },
    }
}

fn value(r: &PgRow, i: usize) -> Result<Value, sqlx::Error> {
    let raw = r.try_get_raw(i)?;
    if raw.is_null() {
        return Ok(Value::Null);
    }
    let ty = raw.type_info().name().to_owned();
    Ok(match ty.as_str() {
        "INT8" => Value::Int(r.try_get::<i64, _>(i)?),
        "INT4" => Value::Int(r.try_get::<i32, _>(i)?.into()),
        "INT2" => Value::Int(r.try_get::<i16, _>(i)?.into()),
        "FLOAT8" => Value::Real(r.try_get::<f64, _>(i)?),
        "FLOAT4" => Value::Real(r.try_get::<f32, _>(i)?.into()),
        "BOOL" => Value::Bool(r.try_get::<bool, _>(i)?),
        "BYTEA" => Value::Blob(r.try_get::<Vec<u8>, _>(i)?),
        "TEXT" | "VARCHAR" | "BPCHAR" | "NAME" => Value::Text(r.try_get::<String, _>(i)?),
        "JSON" | "JSONB" => Value::Text(
            r.try_get::<sqlx::types::Json<Box<serde_json::value::RawValue>>, _>(i)?
                .0
                .get()
                .to_owned(),
        ),
        other => {
            return Err(sqlx::Error::ColumnDecode {
                index: i.to_string(),
                source: format!("a {other} column: cast it to a plain type in the statement")
                    .into(),
            })
        }
    })
}

fn rows(rows: Vec<PgRow>) -> Result<Vec<Row>, DbError> {
    let Some(first) = rows.first() else {
        return Ok(Vec::new());
    };
    let names: Arc<[String]> = first
        .columns()
        .iter()
        .map(|c| c.name().to_owned())
        .collect();
    rows.iter()
        .map(|r| {
            let values = (0..names.len())
                .map(|i| value(r, i))
                .collect::<Result<Vec<_>, _>>()
                .map_err(err)?;
            Ok(Row::new(names.clone(), values))
        })
        .collect()
}

#[async_trait]
impl<C: Conn> Exec for PgExec<C> {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    async fn execute(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64, DbError> {
        let done = sqlx_query(sql, args)
            .execute(self.0.conn())
            .await
            .map_err(err)?;
        Ok(done.rows_affected())
    }

    async fn fetch_all(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Vec<Row>, DbError> {
        rows(
            sqlx_query(sql, args)
                .fetch_all(self.0.conn())
                .await
                .map_err(err)?,
        )
    }

    async fn fetch_optional(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
    ) -> Result<Option<Row>, DbError> {
        let row = sqlx_query(sql, args)
            .fetch_optional(self.0.conn())
            .await
            .map_err(err)?;
        Ok(rows(row.into_iter().collect())?.pop())
    }

    async fn tally(&mut self, tally: crate::store::tally::Tally) -> crate::store::StoreResult<()> {
        in_transaction::<C>()?;
        super::tally::apply_on(self.0.conn(), tally).await
    }

    async fn notify(&mut self, channel: &str, payload: &str) -> Result<(), DbError> {
        in_transaction::<C>()?;
        // In the transaction: sent when it commits, never without it.
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(channel)
            .bind(payload)
            .execute(self.0.conn())
            .await
            .map_err(err)?;
        Ok(())
    }
}
