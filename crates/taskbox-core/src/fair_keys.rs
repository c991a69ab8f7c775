//! Fairness keys: a tenant's claims shared among its keys as claims share
//! the runners among tenants (`fair::Fairness`, one nested in the
//! tenant's account), by the runner time each key's attempts take and its
//! weight. A job's key is its own `fairness_key`, or else its concurrency
//! key; its tenant's jobs without either are one more group, read from the
//! head of the tenant's line. The rules; the statements are the store's.

use crate::fair::Contender;

/// Most keys of one tenant one claim looks at; past it, claims go round
/// them in turn.
pub const MAX_KEYS_PER_CLAIM: usize = 256;

/// Longest fairness key a job may name, in bytes.
pub const MAX_FAIRNESS_KEY_LEN: usize = 64;

/// Greatest fairness weight.
pub const MAX_FAIRNESS_WEIGHT: u32 = 1_000;

pub use crate::fair::UNKEYED;

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
