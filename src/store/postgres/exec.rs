//! `Exec` on PostgreSQL: inside a transaction, or on the pool (each
//! statement on whichever connection is free).

use super::{pg, violated, Violation};
use crate::store::dialect::Dialect;
use crate::store::exec::{Arg, DbError, Exec, Row, Value};
use crate::store::StoreError;
use async_trait::async_trait;
use sqlx::postgres::{PgArguments, PgRow};
use sqlx::{Column, PgPool, Postgres, Row as _, Transaction, TypeInfo, ValueRef as _};
use std::sync::Arc;

/// A write transaction.
pub struct TxExec<'t>(pub &'t mut Transaction<'static, Postgres>);

/// The pool, for reads that need no transaction.
pub struct PoolExec(pub PgPool);

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

fn query<'q>(sql: &'q str, args: &'q [Arg<'q>]) -> sqlx::query::Query<'q, Postgres, PgArguments> {
    let mut q = sqlx::query(sql);
    for a in args {
        q = match *a {
            Arg::Int(v) => q.bind(v),
            Arg::Real(v) => q.bind(v),
            Arg::Text(v) => q.bind(v),
            Arg::Blob(v) => q.bind(v),
            Arg::Bool(v) => q.bind(v),
        };
    }
    q
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
impl Exec for TxExec<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    async fn execute(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64, DbError> {
        let done = query(sql, args).execute(&mut **self.0).await.map_err(err)?;
        Ok(done.rows_affected())
    }

    async fn fetch_all(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Vec<Row>, DbError> {
        rows(
            query(sql, args)
                .fetch_all(&mut **self.0)
                .await
                .map_err(err)?,
        )
    }

    async fn fetch_optional(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
    ) -> Result<Option<Row>, DbError> {
        let row = query(sql, args)
            .fetch_optional(&mut **self.0)
            .await
            .map_err(err)?;
        Ok(rows(row.into_iter().collect())?.pop())
    }

    async fn tally(&mut self, tally: crate::store::tally::Tally) -> crate::store::StoreResult<()> {
        super::tally::apply(self.0, tally).await
    }

    async fn notify(&mut self, channel: &str, payload: &str) -> Result<(), DbError> {
        // In the transaction: sent when it commits, never without it.
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(channel)
            .bind(payload)
            .execute(&mut **self.0)
            .await
            .map_err(err)?;
        Ok(())
    }
}

#[async_trait]
impl Exec for PoolExec {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    async fn execute(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64, DbError> {
        let done = query(sql, args).execute(&self.0).await.map_err(err)?;
        Ok(done.rows_affected())
    }

    async fn fetch_all(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Vec<Row>, DbError> {
        rows(query(sql, args).fetch_all(&self.0).await.map_err(err)?)
    }

    async fn fetch_optional(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
    ) -> Result<Option<Row>, DbError> {
        let row = query(sql, args)
            .fetch_optional(&self.0)
            .await
            .map_err(err)?;
        Ok(rows(row.into_iter().collect())?.pop())
    }
}
