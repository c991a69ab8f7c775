//! Fairness keys: a tenant's claims shared among its keys as claims share
//! the runners among tenants (`fair::Fairness`, one nested in the
//! tenant's account), by the runner time each key's attempts take and its
//! weight. A job's key is its own `fairness_key`, or else its concurrency
//! key; its tenant's jobs without either are one more group, read from the
//! head of the tenant's line. The statements here serve both backends;
//! the rules are the core's (`taskbox_core::fair_keys`).

use super::dialect::Dialect;
use std::sync::LazyLock;
pub use taskbox_core::fair_keys::*;

/// A job's key, as the `jobs_fair` index has it.
pub const KEY: &str = "coalesce(fairness_key, concurrency_key)";

/// The jobs table read through `jobs_fair`: SQLite's planner, left to
/// itself, reads the tenant's whole line by its claim index instead, and
/// evaluates each row's key.
pub fn by_key_index(d: Dialect) -> &'static str {
    match d {
        Dialect::Sqlite => "jobs INDEXED BY jobs_fair",
        Dialect::Postgres | Dialect::PostgresMany => "jobs",
    }
}

/// What is claimable in the dialect's claim index.
fn claimable(d: Dialect) -> &'static str {
    match d {
        Dialect::Sqlite => "status = 'queued' AND available = 1",
        Dialect::Postgres | Dialect::PostgresMany => "status = 'queued' AND NOT paused",
    }
}

/// Up to ?3 keys of tenant ?1 with claimable jobs, after key ?2 in the
/// index's order, each with the weight its next job carries: one seek of
/// `jobs_fair` per key (a skip scan). Built once per dialect: every claim
/// of a tenant with keys runs it.
pub fn active_keys(d: Dialect) -> &'static str {
    static SQLITE: LazyLock<String> = LazyLock::new(|| active_keys_sql(Dialect::Sqlite));
    static POSTGRES: LazyLock<String> = LazyLock::new(|| active_keys_sql(Dialect::Postgres));
    match d {
        Dialect::Sqlite => &SQLITE,
        Dialect::Postgres | Dialect::PostgresMany => &POSTGRES,
    }
}

fn active_keys_sql(d: Dialect) -> String {
    let (p1, p2, p3) = (d.param(1), d.param(2), d.param(3));
    let line = claimable(d);
    let jobs = by_key_index(d);
    format!(
        "WITH RECURSIVE k(key) AS ( \
           SELECT (SELECT MIN({KEY}) FROM {jobs} WHERE tenant = {p1} AND {line} \
                   AND {KEY} IS NOT NULL AND {KEY} > {p2}) \
           UNION ALL \
           SELECT (SELECT MIN({KEY}) FROM {jobs} WHERE tenant = {p1} AND {line} \
                   AND {KEY} IS NOT NULL AND {KEY} > k.key) \
           FROM k WHERE k.key IS NOT NULL), \
         keys AS (SELECT key FROM k WHERE key IS NOT NULL LIMIT {p3}) \
         SELECT key, (SELECT fairness_weight FROM {jobs} WHERE tenant = {p1} AND {line} \
                      AND {KEY} IS NOT NULL AND {KEY} = keys.key \
                      ORDER BY urgent DESC, priority, run_at, id LIMIT 1) \
         FROM keys"
    )
}

/// Whether tenant ?1 has a claimable job without a key among the first ?2
/// of its line: where a claim reads its unkeyed group from.
pub fn has_unkeyed(d: Dialect) -> &'static str {
    static SQLITE: LazyLock<String> = LazyLock::new(|| has_unkeyed_sql(Dialect::Sqlite));
    static POSTGRES: LazyLock<String> = LazyLock::new(|| has_unkeyed_sql(Dialect::Postgres));
    match d {
        Dialect::Sqlite => &SQLITE,
        Dialect::Postgres | Dialect::PostgresMany => &POSTGRES,
    }
}

fn has_unkeyed_sql(d: Dialect) -> String {
    format!(
        "SELECT EXISTS (SELECT 1 FROM (SELECT fairness_key, concurrency_key FROM jobs \
           WHERE tenant = {} AND {} ORDER BY urgent DESC, priority, run_at, id LIMIT {}) h \
         WHERE fairness_key IS NULL AND concurrency_key IS NULL)",
        d.param(1),
        claimable(d),
        d.param(2)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_scan_reads_the_fair_index_in_each_dialect() {
        let lite = active_keys(Dialect::Sqlite);
        assert!(
            lite.contains("WHERE tenant = ?1 AND status = 'queued' AND available = 1 AND coalesce(fairness_key, concurrency_key) IS NOT NULL AND coalesce(fairness_key, concurrency_key) > ?2"),
            "{lite}"
        );
        let pg = active_keys(Dialect::Postgres);
        assert!(pg.contains("NOT paused"), "{pg}");
        assert!(
            pg.contains("MIN(coalesce(fairness_key, concurrency_key))"),
            "{pg}"
        );
        assert!(pg.contains("LIMIT $3"), "{pg}");
    }
}
