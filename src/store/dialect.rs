//! Where the SQL of the two backends differs: parameters, flags and
//! casts. Each statement both backends run is written once, in a
//! `*_sql.rs` file of `store/`, and asks its dialect for these points.

/// Where the SQL of two backends differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// `?N` parameters, flags as integers, and an `available` column that
    /// the claim's index reads.
    Sqlite,
    /// `$N` parameters, booleans, typed integer columns.
    Postgres,
    /// PostgreSQL, one statement for many attempts' ends of one shape:
    /// each parameter is an array with one element per attempt, read
    /// through `unnest` as column `v.pN`.
    PostgresMany,
}

impl Dialect {
    pub fn param(self, n: usize) -> String {
        match self {
            Dialect::Sqlite => format!("?{n}"),
            Dialect::Postgres => format!("${n}"),
            Dialect::PostgresMany => format!("v.p{n}"),
        }
    }

    /// A parameter bound to an INTEGER column.
    pub fn int4(self, n: usize) -> String {
        match self {
            Dialect::Sqlite => self.param(n),
            Dialect::Postgres | Dialect::PostgresMany => format!("{}::int4", self.param(n)),
        }
    }

    pub fn cancel_requested(self) -> &'static str {
        match self {
            Dialect::Sqlite => "cancel_requested = 1",
            Dialect::Postgres | Dialect::PostgresMany => "jobs.cancel_requested",
        }
    }
}
