//! Where the SQL of the two backends differs: parameters, flags and
//! casts. Each statement both backends run is written once, in a
//! `*_sql.rs` file of `store/`, and asks its dialect for these points;
//! one that differs in none of them is written once with `$N` parameters
//! numbered in order (`numbered_in_order`), which both read alike.

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

    /// A text parameter that may be NULL (PostgreSQL cannot infer the type
    /// of one only compared with NULL).
    pub fn text(self, n: usize) -> String {
        match self {
            Dialect::Sqlite => self.param(n),
            Dialect::Postgres | Dialect::PostgresMany => format!("{}::text", self.param(n)),
        }
    }

    /// `column` is tenant ?`n`'s (`one`), or, for a read of every tenant's
    /// rows, nothing is asked of it (?`n` is bound NULL). Two statements,
    /// not `(?n IS NULL OR column = ?n)`: no planner reads that through an
    /// index, so one tenant's read would cost every tenant's rows.
    pub fn tenant_is(self, column: &str, n: usize, one: bool) -> String {
        if one {
            format!("{column} = {}", self.text(n))
        } else {
            format!("{} IS NULL", self.text(n))
        }
    }

    /// What makes a text column order as bytes, as Rust and SQLite order
    /// it (PostgreSQL's default collation does not).
    pub fn bytewise(self) -> &'static str {
        match self {
            Dialect::Sqlite => "",
            Dialect::Postgres | Dialect::PostgresMany => " COLLATE \"C\"",
        }
    }

    /// What a subquery that picks rows to update adds so that rows another
    /// transaction holds are passed over (SQLite's one writer holds them all).
    pub fn skip_locked(self) -> &'static str {
        match self {
            Dialect::Sqlite => "",
            Dialect::Postgres | Dialect::PostgresMany => " FOR UPDATE SKIP LOCKED",
        }
    }

    /// What a read adds to lock the rows it reads until the transaction
    /// ends (SQLite's one writer holds them all).
    pub fn for_update(self) -> &'static str {
        match self {
            Dialect::Sqlite => "",
            Dialect::Postgres | Dialect::PostgresMany => " FOR UPDATE",
        }
    }

    /// What a read adds to lock the rows of table `alias` it reads until
    /// the transaction ends (SQLite's one writer holds them all).
    pub fn lock_rows_of(self, alias: &str) -> String {
        match self {
            Dialect::Sqlite => String::new(),
            Dialect::Postgres | Dialect::PostgresMany => format!(" FOR UPDATE OF {alias}"),
        }
    }

    /// A flag's literal value.
    pub fn flag(self, on: bool) -> &'static str {
        match (self, on) {
            (Dialect::Sqlite, true) => "1",
            (Dialect::Sqlite, false) => "0",
            (Dialect::Postgres | Dialect::PostgresMany, true) => "TRUE",
            (Dialect::Postgres | Dialect::PostgresMany, false) => "FALSE",
        }
    }

    /// A subquery of the texts in the JSON array parameter `n`: one
    /// statement for a list of any length.
    pub fn json_texts(self, n: usize) -> String {
        match self {
            Dialect::Sqlite => format!("SELECT value FROM json_each(${n})"),
            Dialect::Postgres | Dialect::PostgresMany => {
                format!("SELECT jsonb_array_elements_text(${n}::jsonb)")
            }
        }
    }

    /// A table `alias` of the objects in the JSON array parameter `n`: one
    /// column of each `(name, PostgreSQL type)`, and `o`, the object's
    /// place in the array. One statement writes a list of any length.
    pub fn json_rows(self, n: usize, alias: &str, cols: &[(&str, &str)]) -> String {
        match self {
            Dialect::Sqlite => {
                let picks: Vec<String> = cols
                    .iter()
                    .map(|(c, _)| format!("json_extract(value, '$.{c}') AS {c}"))
                    .collect();
                // `$N`, not `?N`: a `$N` is bound by its name wherever it is.
                format!(
                    "(SELECT {}, key AS o FROM json_each(${n})) AS {alias}",
                    picks.join(", ")
                )
            }
            Dialect::Postgres | Dialect::PostgresMany => {
                let typed: Vec<String> = cols.iter().map(|(c, t)| format!("{c} {t}")).collect();
                let names: Vec<&str> = cols.iter().map(|(c, _)| *c).collect();
                format!(
                    "ROWS FROM (jsonb_to_recordset(${n}::jsonb) AS ({})) \
                     WITH ORDINALITY AS {alias}({}, o)",
                    typed.join(", "),
                    names.join(", ")
                )
            }
        }
    }

    /// Whether writes that must see each other take a lock first (`hold`):
    /// PostgreSQL's transactions run side by side; SQLite's one writer
    /// runs them one after the other.
    pub fn runs_writes_together(self) -> bool {
        self != Dialect::Sqlite
    }

    pub fn cancel_requested(self) -> &'static str {
        match self {
            Dialect::Sqlite => "cancel_requested = 1",
            Dialect::Postgres | Dialect::PostgresMany => "jobs.cancel_requested",
        }
    }
}

/// Whether each `$N` parameter of a statement first appears after those
/// numbered below it. SQLite numbers a `$N` by its first appearance (only
/// sqlx's SQLite driver reads the number), so a statement written once for
/// both backends binds by position on the SQLite writer's connection only
/// when they come in order.
pub fn numbered_in_order(sql: &str) -> bool {
    let mut highest = 0;
    let mut rest = sql;
    while let Some(at) = rest.find('$') {
        rest = &rest[at + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let Ok(n) = rest[..digits].parse::<usize>() else {
            continue;
        };
        if n > highest + 1 {
            return false;
        }
        highest = highest.max(n);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::numbered_in_order;

    #[test]
    fn parameters_numbered_in_order_are_told_from_others() {
        assert!(numbered_in_order("SELECT 1"));
        assert!(numbered_in_order(
            "UPDATE t SET a = $1 WHERE b = $2 AND c = $1"
        ));
        assert!(numbered_in_order("INSERT INTO t VALUES ($1, $2, $3, $3)"));
        assert!(!numbered_in_order("UPDATE t SET a = $2 WHERE b = $1"));
        assert!(!numbered_in_order("SELECT $1, $3"));
    }
}
