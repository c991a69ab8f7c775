//! How the sender's slots are shared among tenants, as claims share the
//! runners: the least-served tenant is looked at first, no tenant holds
//! more than its share, and a tenant with nothing in flight may always
//! start one try from a small spare pool — so one tenant's endpoints that
//! never answer hold its own slots, not everyone's. Pure, table-tested.

use std::collections::HashMap;

/// The bounds the sender shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Tries in flight in all (the shared pool).
    pub concurrency: u32,
    /// Tries in flight for one tenant, whatever else waits.
    pub per_tenant: u32,
    /// Tries in flight to one webhook.
    pub per_webhook: u32,
}

/// What the sender holds when it looks at one webhook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    /// Free slots of the shared pool.
    pub free: u32,
    /// Free slots of the spare pool.
    pub spare: u32,
    /// Tenants with a due delivery or a try in flight.
    pub active: u32,
    /// The webhook's tries in flight.
    pub webhook: u32,
    /// Its tenant's tries in flight.
    pub tenant: u32,
}

/// How many deliveries of the webhook to take now, and whether from the
/// spare pool (then at most one).
pub fn room(b: Bounds, h: Held) -> (u32, bool) {
    let per_webhook = b.per_webhook.max(1);
    // A webhook is taken for once half its room is free, so that a take
    // (a write) carries several deliveries.
    if h.webhook > per_webhook / 2 {
        return (0, false);
    }
    let share = (b.concurrency.max(1) / h.active.max(1))
        .max(1)
        .min(b.per_tenant.max(1));
    let room = (per_webhook - h.webhook)
        .min(share.saturating_sub(h.tenant))
        .min(h.free);
    if room > 0 {
        (room, false)
    } else if h.tenant == 0 && h.spare > 0 {
        (1, true)
    } else {
        (0, false)
    }
}

/// The due webhooks in the order to look at them: tenants by how many
/// tries they have in flight, fewest first (ties turn with `turn`, so no
/// tenant is always first), their webhooks taken in turn, one of each
/// tenant's at a time.
pub fn order(
    due: Vec<(String, String)>,
    in_flight: &HashMap<String, u32>,
    turn: usize,
) -> Vec<(String, String)> {
    let mut tenants: Vec<(String, Vec<String>)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for (webhook, tenant) in due {
        let i = *at.entry(tenant.clone()).or_insert_with(|| {
            tenants.push((tenant, Vec::new()));
            tenants.len() - 1
        });
        tenants[i].1.push(webhook);
    }
    if !tenants.is_empty() {
        let n = tenants.len();
        tenants.rotate_left(turn % n);
    }
    tenants.sort_by_key(|(t, _)| in_flight.get(t).copied().unwrap_or(0));
    let mut out = Vec::new();
    let mut queues: Vec<(String, std::vec::IntoIter<String>)> = tenants
        .into_iter()
        .map(|(t, w)| (t, w.into_iter()))
        .collect();
    while !queues.is_empty() {
        queues.retain_mut(|(t, ws)| match ws.next() {
            Some(w) => {
                out.push((w, t.clone()));
                true
            }
            None => false,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: Bounds = Bounds {
        concurrency: 256,
        per_tenant: 64,
        per_webhook: 8,
    };

    fn held(free: u32, spare: u32, active: u32, webhook: u32, tenant: u32) -> Held {
        Held {
            free,
            spare,
            active,
            webhook,
            tenant,
        }
    }

    #[test]
    fn room_is_the_least_of_the_webhooks_the_tenants_and_the_pools() {
        let cases = [
            // alone: the webhook's room
            (held(256, 64, 1, 0, 0), (8, false)),
            // a webhook more than half busy waits for more room
            (held(256, 64, 1, 5, 5), (0, false)),
            (held(256, 64, 1, 4, 4), (4, false)),
            // the tenant's ceiling, alone or not
            (held(200, 64, 1, 0, 60), (4, false)),
            (held(200, 64, 1, 0, 64), (0, false)),
            // four tenants: a quarter each (64); eight: 32 each
            (held(100, 64, 8, 0, 30), (2, false)),
            (held(100, 64, 8, 0, 32), (0, false)),
            // the shared pool's free slots bound it
            (held(3, 64, 1, 0, 0), (3, false)),
            // a tenant with nothing in flight starts one from the spare pool
            (held(0, 64, 2, 0, 0), (1, true)),
            (held(0, 0, 2, 0, 0), (0, false)),
            // one with tries in flight waits for the shared pool
            (held(0, 64, 2, 0, 1), (0, false)),
            // more tenants than slots: one each still
            (held(10, 64, 1000, 0, 0), (1, false)),
            (held(10, 64, 1000, 0, 1), (0, false)),
        ];
        for (h, want) in cases {
            assert_eq!(room(B, h), want, "{h:?}");
        }
    }

    #[test]
    fn zero_bounds_still_let_one_try_through() {
        let b = Bounds {
            concurrency: 0,
            per_tenant: 0,
            per_webhook: 0,
        };
        assert_eq!(room(b, held(1, 0, 0, 0, 0)), (1, false));
    }

    fn due(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(w, t)| ((*w).to_owned(), (*t).to_owned()))
            .collect()
    }

    #[test]
    fn the_least_served_tenant_comes_first_and_webhooks_interleave() {
        let d = due(&[
            ("a1", "a"),
            ("a2", "a"),
            ("a3", "a"),
            ("b1", "b"),
            ("c1", "c"),
        ]);
        let busy = HashMap::from([("a".to_owned(), 200), ("c".to_owned(), 3)]);
        let got: Vec<String> = order(d, &busy, 0).into_iter().map(|(w, _)| w).collect();
        assert_eq!(got, ["b1", "c1", "a1", "a2", "a3"]);
    }

    #[test]
    fn ties_take_turns() {
        let d = due(&[("a1", "a"), ("a2", "a"), ("b1", "b"), ("b2", "b")]);
        let none = HashMap::new();
        let first: Vec<String> = order(d.clone(), &none, 0)
            .into_iter()
            .map(|(w, _)| w)
            .collect();
        let second: Vec<String> = order(d, &none, 1).into_iter().map(|(w, _)| w).collect();
        assert_eq!(first, ["a1", "b1", "a2", "b2"]);
        assert_eq!(second, ["b1", "a1", "b2", "a2"]);
    }
}
