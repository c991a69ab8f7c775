//! Fairness keys: a tenant's claims shared among its keys as claims share
//! the runners among tenants (`fair::Fairness`, one nested in the
//! tenant's account), by the runner time each key's attempts take and its
//! weight. A job's key is its own `fairness_key`, or else its concurrency
//! key; its tenant's jobs without either are one more group, read from the
//! head of the tenant's line. The statements here serve both backends.

use super::dialect::Dialect;
use super::fair::Contender;
use std::sync::LazyLock;

/// A job's key, as the `jobs_fair` index has it.
pub const KEY: &str = "coalesce(fairness_key, concurrency_key)";
/// Most keys of one tenant one claim looks at; past it, claims go round
/// them in turn.
pub const MAX_KEYS_PER_CLAIM: usize = 256;
/// Longest fairness key a job may name, in bytes.
pub const MAX_FAIRNESS_KEY_LEN: usize = 64;
/// Greatest fairness weight.
pub const MAX_FAIRNESS_WEIGHT: u32 = 1_000;
pub use super::fair::UNKEYED;

/// Which of a tenant's jobs a claim reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group<'a> {
    /// All of them, in its order: a tenant with no keyed jobs.
    All,
    /// Those of one key.
    Key(&'a str),
    /// Those with no key, from the head of its line.
    Unkeyed,
}

impl<'a> Group<'a> {
    /// The group a contender of `contenders` stands for.
    pub fn of(name: &'a str) -> Group<'a> {
        if name == UNKEYED {
            Group::Unkeyed
        } else {
            Group::Key(name)
        }
    }
}

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

/// How far down a tenant's line a claim that wants `n` of its jobs looks.
pub fn head_of_line(n: usize) -> usize {
    n * 4 + 64
}

/// A tenant's keys as contenders for `room` of its picks, weight 1 unless
/// a job says, and its unkeyed jobs as one more (`UNKEYED`) when it has
/// some.
pub fn contenders(keys: Vec<(String, Option<i64>)>, unkeyed: bool, room: u64) -> Vec<Contender> {
    let weight = |w: Option<i64>| {
        w.and_then(|w| u32::try_from(w).ok())
            .map_or(1, |w| w.clamp(1, MAX_FAIRNESS_WEIGHT))
    };
    keys.into_iter()
        .map(|(key, w)| (key, weight(w)))
        .chain(unkeyed.then(|| (UNKEYED.to_owned(), 1)))
        .map(|(tenant, weight)| Contender {
            tenant,
            weight,
            room,
            ran_out: false,
        })
        .collect()
}

/// The next claim's place among a tenant's keys, when this one looked at
/// as many as it may, and the keys to look at: those after where the last
/// claim stopped, then from the start up to there.
/// How many keys to read again from the start, after a scan from the
/// cursor `after` found `found`: none unless that scan ran out before a
/// claim's worth (the keys go round, so those up to the cursor come next).
pub fn wrap_limit(found: usize, after: &str) -> Option<usize> {
    (found < MAX_KEYS_PER_CLAIM && !after.is_empty()).then(|| MAX_KEYS_PER_CLAIM - found)
}

/// A claim's keys: those after the cursor `after`, then those from the
/// start up to it (`from_start`, read as `wrap_limit` says).
pub fn wrapped<W>(
    mut keys: Vec<(String, W)>,
    from_start: Vec<(String, W)>,
    after: &str,
) -> Vec<(String, W)> {
    keys.extend(
        from_start
            .into_iter()
            .take_while(|(k, _)| k.as_str() <= after),
    );
    keys
}

pub fn next_cursor(scanned: &[(String, Option<i64>)]) -> Option<String> {
    (scanned.len() >= MAX_KEYS_PER_CLAIM)
        .then(|| scanned.last().map(|(k, _)| k.clone()))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keys_go_round_from_the_cursor() {
        let keys = |ks: &[&str]| ks.iter().map(|k| ((*k).to_owned(), ())).collect::<Vec<_>>();
        // No cursor, or a full claim's worth after it: no second scan.
        assert_eq!(wrap_limit(3, ""), None);
        assert_eq!(wrap_limit(MAX_KEYS_PER_CLAIM, "k"), None);
        assert_eq!(wrap_limit(3, "k"), Some(MAX_KEYS_PER_CLAIM - 3));
        // After "m": "n", "p"; then from the start up to "m" and no further.
        let got = wrapped(keys(&["n", "p"]), keys(&["a", "m", "n"]), "m");
        assert_eq!(got, keys(&["n", "p", "a", "m"]));
    }

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

    #[test]
    fn keys_contend_with_their_weights_and_the_unkeyed_group_last() {
        let keys = vec![
            ("a".into(), None),
            ("b".into(), Some(5)),
            ("c".into(), Some(0)),
        ];
        assert_eq!(contenders(keys.clone(), false, 7).len(), 3);
        let cs = contenders(keys, true, 7);
        let got: Vec<(&str, u32, u64)> = cs
            .iter()
            .map(|c| (c.tenant.as_str(), c.weight, c.room))
            .collect();
        assert_eq!(got, [("a", 1, 7), ("b", 5, 7), ("c", 1, 7), ("", 1, 7)]);
        assert_eq!(Group::of(""), Group::Unkeyed);
        assert_eq!(Group::of("a"), Group::Key("a"));
    }
}
