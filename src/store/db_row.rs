//! `db_row!`: a struct that both backends read a row into, by column name
//! (sqlx's `FromRow`, for SQLite's rows and PostgreSQL's), written without
//! sqlx's derive, whose proc-macro crate builds sqlx and SQLite a second
//! time for the host.
//!
//! A field reads the column of its name, or `= "column"`'s; `as T` reads
//! the column as `T` and converts it with `TryFrom`.

macro_rules! db_row {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $fvis:vis $field:ident : $ty:ty $(= $column:literal)? $(as $via:ty)?
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $(
                $(#[$fmeta])*
                $fvis $field: $ty,
            )*
        }
        $crate::store::db_row::db_row!(@from_row ::sqlx::sqlite::SqliteRow, $name {
            $($field $(= $column)? $(as $via)?),*
        });
        $crate::store::db_row::db_row!(@from_row ::sqlx::postgres::PgRow, $name {
            $($field $(= $column)? $(as $via)?),*
        });
        impl $crate::store::exec::FromRow for $name {
            fn from_row(row: &$crate::store::exec::Row) -> $crate::store::StoreResult<Self> {
                Ok(Self {
                    $($field: $crate::store::db_row::db_row!(
                        @exec row, $crate::store::db_row::db_row!(@column $field $($column)?)
                        $(, $via)?
                    ),)*
                })
            }
        }
    };
    (@from_row $row:ty, $name:ident {
        $($field:ident $(= $column:literal)? $(as $via:ty)?),*
    }) => {
        impl<'r> ::sqlx::FromRow<'r, $row> for $name {
            fn from_row(row: &'r $row) -> ::sqlx::Result<Self> {
                Ok(Self {
                    $($field: $crate::store::db_row::db_row!(
                        @get row, $crate::store::db_row::db_row!(@column $field $($column)?)
                        $(, $via)?
                    ),)*
                })
            }
        }
    };
    (@column $field:ident) => { stringify!($field) };
    (@column $field:ident $column:literal) => { $column };
    (@exec $row:ident, $column:expr) => { $row.get($column)? };
    (@exec $row:ident, $column:expr, $via:ty) => {{
        let read: $via = $row.get($column)?;
        ::core::convert::TryFrom::try_from(read).map_err(|e| {
            $crate::store::StoreError::Internal(format!("column {}: {e}", $column))
        })?
    }};
    (@get $row:ident, $column:expr) => { ::sqlx::Row::try_get($row, $column)? };
    (@get $row:ident, $column:expr, $via:ty) => {{
        let read: $via = ::sqlx::Row::try_get($row, $column)?;
        ::core::convert::TryFrom::try_from(read).map_err(|e| ::sqlx::Error::ColumnDecode {
            index: ($column).to_string(),
            source: Box::new(e),
        })?
    }};
}
pub(crate) use db_row;
