//! The narrow seam under the store's transactions: a connection (or a
//! transaction) of either backend runs a statement with its arguments and
//! hands rows back as plain values. A transaction written over `Exec` is
//! written once for both backends; what differs between them is the
//! statement text (`dialect`) and the few capabilities named here.

use super::dialect::Dialect;
use super::{StoreError, StoreResult};
use async_trait::async_trait;
use std::sync::Arc;

/// An argument of a statement. Each carries its type even when NULL:
/// PostgreSQL types a parameter by what is bound to it.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg<'a> {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<&'a str>),
    Blob(Option<&'a [u8]>),
    /// A flag: BOOLEAN on PostgreSQL, 0 or 1 on SQLite.
    Bool(Option<bool>),
}

/// `From` for each kind a statement binds: `type => |v| arg` each.
macro_rules! arg_from {
    ($($t:ty => |$v:ident| $e:expr;)*) => {
        $(impl<'a> From<$t> for Arg<'a> {
            fn from($v: $t) -> Self {
                $e
            }
        })*
    };
}

arg_from! {
    &'a str => |v| Arg::Text(Some(v));
    &'a String => |v| Arg::Text(Some(v));
    Option<&'a str> => |v| Arg::Text(v);
    &'a Option<String> => |v| Arg::Text(v.as_deref());
    Option<&'a String> => |v| Arg::Text(v.map(String::as_str));
    &'a [u8] => |v| Arg::Blob(Some(v));
    i64 => |v| Arg::Int(Some(v));
    Option<i64> => |v| Arg::Int(v);
    i32 => |v| Arg::Int(Some(v.into()));
    u32 => |v| Arg::Int(Some(v.into()));
    Option<u32> => |v| Arg::Int(v.map(i64::from));
    f64 => |v| Arg::Real(Some(v));
    Option<f64> => |v| Arg::Real(v);
    bool => |v| Arg::Bool(Some(v));
    Option<bool> => |v| Arg::Bool(v);
}

/// The arguments of a statement, each converted by `Arg::from`.
macro_rules! args {
    ($($a:expr),* $(,)?) => { &[$($crate::store::exec::Arg::from($a)),*] };
}
pub(crate) use args;

/// A statement with its arguments bound, for a backend driven by sqlx
/// (SQLite's readers, PostgreSQL).
pub(crate) fn sqlx_query<'q, DB>(
    sql: &'q str,
    args: &'q [Arg<'q>],
) -> sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments<'q>>
where
    DB: sqlx::Database,
    Option<i64>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<f64>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<&'q str>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<&'q [u8]>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<bool>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
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

/// A column's value as the backend handed it back.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
    Bool(bool),
}

/// One row of a statement's answer: its values, and the statement's
/// column names, shared by every row of the answer.
#[derive(Debug, Clone)]
pub struct Row {
    names: Arc<[String]>,
    values: Vec<Value>,
}

impl Row {
    pub fn new(names: Arc<[String]>, values: Vec<Value>) -> Row {
        Row { names, values }
    }

    /// The column of this name, read as `T`.
    pub fn get<T: FromValue>(&self, name: &str) -> StoreResult<T> {
        let i = self
            .names
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| StoreError::Internal(format!("no column {name:?} in the row")))?;
        self.at(i)
            .map_err(|e| StoreError::Internal(format!("column {name:?}: {e}")))
    }

    /// The `i`th column (from 0), read as `T`.
    pub fn at<T: FromValue>(&self, i: usize) -> StoreResult<T> {
        let v = self
            .values
            .get(i)
            .ok_or_else(|| StoreError::Internal(format!("no column {i} in the row")))?;
        T::from_value(v).ok_or_else(|| {
            StoreError::Internal(format!(
                "column {i} holds {v:?}, not a {}",
                std::any::type_name::<T>()
            ))
        })
    }
}

/// A Rust value read from a column.
pub trait FromValue: Sized {
    fn from_value(v: &Value) -> Option<Self>;
}

impl FromValue for i64 {
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }
}
macro_rules! from_int {
    ($($t:ty),*) => {$(
        impl FromValue for $t {
            fn from_value(v: &Value) -> Option<Self> {
                i64::from_value(v).and_then(|i| <$t>::try_from(i).ok())
            }
        }
    )*};
}
from_int!(i32, u32, u64, usize, u8, u16, i16);

impl FromValue for f64 {
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Real(f) => Some(*f),
            Value::Int(i) => Some(*i as f64),
            _ => None,
        }
    }
}
impl FromValue for bool {
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Bool(b) => Some(*b),
            Value::Int(i) => Some(*i != 0),
            _ => None,
        }
    }
}
impl FromValue for String {
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Text(s) => Some(s.clone()),
            Value::Blob(b) => String::from_utf8(b.clone()).ok(),
            _ => None,
        }
    }
}
impl FromValue for Vec<u8> {
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Blob(b) => Some(b.clone()),
            Value::Text(s) => Some(s.clone().into_bytes()),
            _ => None,
        }
    }
}
impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Null => Some(None),
            v => T::from_value(v).map(Some),
        }
    }
}

/// A struct read from a row by column name (`db_row!` writes these).
pub trait FromRow: Sized {
    fn from_row(row: &Row) -> StoreResult<Self>;
}

/// What a statement can fail with, as the transactions over `Exec` tell
/// failures apart.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// A uniqueness rule refused the write: its constraint's name where the
    /// backend tells it (PostgreSQL), else the database's message.
    #[error("unique constraint violated: {0}")]
    Unique(String),
    #[error("foreign key violated: {0}")]
    ForeignKey(String),
    /// The database is not there now (a lost connection, a shutdown); the
    /// caller may try again.
    #[error("{0}")]
    Unavailable(String),
    #[error("{0}")]
    Other(String),
}

impl From<DbError> for StoreError {
    fn from(e: DbError) -> StoreError {
        match e {
            DbError::Unavailable(m) => StoreError::Unavailable(m),
            e => StoreError::Internal(e.to_string()),
        }
    }
}

/// A connection or a transaction of one backend.
#[async_trait]
pub trait Exec: Send {
    /// Which statement text this connection reads.
    fn dialect(&self) -> Dialect;

    /// Runs a statement; answers how many rows it changed.
    async fn execute(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64, DbError>;

    /// Runs a statement; answers every row it returns.
    async fn fetch_all(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Vec<Row>, DbError>;

    /// Runs a statement; answers its first row, if any.
    async fn fetch_optional(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
    ) -> Result<Option<Row>, DbError> {
        Ok(self.fetch_all(sql, args).await?.into_iter().next())
    }

    /// Writes a write's per-tenant counts and events (`store::tally`), in
    /// this transaction: how counters and the outbox are kept is each
    /// backend's own (PostgreSQL stripes the counters and numbers events
    /// after they commit; SQLite numbers them as it writes).
    async fn tally(&mut self, _tally: super::tally::Tally) -> StoreResult<()> {
        Err(StoreError::Internal(
            "counts written on a connection that only reads".into(),
        ))
    }

    /// Tells the other processes on this database `payload` on `channel`
    /// when the transaction commits (PostgreSQL's NOTIFY). Nothing where
    /// this process has the database alone (SQLite).
    async fn notify(&mut self, _channel: &str, _payload: &str) -> Result<(), DbError> {
        Ok(())
    }
}

impl dyn Exec + '_ {
    /// The first row's `FromRow`, if there is a row.
    pub async fn optional<T: FromRow>(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
    ) -> StoreResult<Option<T>> {
        self.fetch_optional(sql, args)
            .await?
            .map(|r| T::from_row(&r))
            .transpose()
    }

    /// Every row's `FromRow`.
    pub async fn all<T: FromRow>(&mut self, sql: &str, args: &[Arg<'_>]) -> StoreResult<Vec<T>> {
        self.fetch_all(sql, args)
            .await?
            .iter()
            .map(T::from_row)
            .collect()
    }

    /// The first column of the first row, if there is a row.
    pub async fn scalar<T: FromValue>(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
    ) -> StoreResult<Option<T>> {
        self.fetch_optional(sql, args)
            .await?
            .map(|r| r.at(0))
            .transpose()
    }
}

/// Who waits for a write, and so how soon it must be committed (SQLite's
/// group commit reads it; PostgreSQL commits each write alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Commit {
    /// A request waits for it: SQLite's writer runs it first.
    pub prompt: bool,
    /// Losing it in a power cut would lose what was acknowledged.
    pub durable: bool,
}

impl Commit {
    /// A request's write.
    pub const PROMPT: Commit = Commit {
        prompt: true,
        durable: true,
    };
    /// A request's write whose loss in a power cut costs nothing (a
    /// lease's renewal).
    pub const QUICK: Commit = Commit {
        prompt: true,
        durable: false,
    };
    /// A runner's or a service's write that must survive a power cut.
    pub const BULK: Commit = Commit {
        prompt: false,
        durable: true,
    };
    /// A write nobody waits for whose loss costs nothing (a token's use).
    pub const LAZY: Commit = Commit {
        prompt: false,
        durable: false,
    };
}

/// A write transaction's body, run on the backend's write connection (on
/// SQLite, the writer's thread) with the time it decides by. It answers
/// through `Any` so that the seam stays object-safe; `dyn JobStore::write`
/// gives it back its type.
pub type WriteWork = Box<
    dyn for<'t> FnOnce(
            &'t mut dyn Exec,
            super::Millis,
        ) -> futures_util::future::BoxFuture<
            't,
            StoreResult<Box<dyn std::any::Any + Send>>,
        > + Send,
>;

macro_rules! tuple_from_row {
    ($($t:ident $i:tt),*) => {
        impl<$($t: FromValue),*> FromRow for ($($t,)*) {
            fn from_row(row: &Row) -> StoreResult<Self> {
                Ok(($(row.at::<$t>($i)?,)*))
            }
        }
    };
}
tuple_from_row!(A 0);
tuple_from_row!(A 0, B 1);
tuple_from_row!(A 0, B 1, C 2);
tuple_from_row!(A 0, B 1, C 2, D 3);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15);
