//! Conformance cases of named leases: one holder at a time, renewed by
//! its holder, taken over once expired (the term going up), dropped by a
//! holder that stops.

use super::*;

pub(super) async fn a_lease_has_one_holder_at_a_time(h: Harness) {
    let s = &h.store;
    assert_eq!(s.lease_get("leader").await.unwrap(), None);
    let t0 = h.clock.now();
    let a = s.lease_take("leader", "a", 5_000).await.unwrap().unwrap();
    assert_eq!((a.holder.as_str(), a.term), ("a", 1));
    assert_eq!((a.taken_at, a.expires_at), (t0, t0 + 5_000));
    // Another candidate is refused while it is held, and changes nothing.
    assert_eq!(s.lease_take("leader", "b", 5_000).await.unwrap(), None);
    assert_eq!(s.lease_get("leader").await.unwrap(), Some(a.clone()));
    // Its holder renews it: the same term, a later end.
    h.clock.advance(4_000);
    let renewed = s.lease_take("leader", "a", 5_000).await.unwrap().unwrap();
    assert_eq!((renewed.term, renewed.taken_at), (1, t0));
    assert_eq!(renewed.expires_at, t0 + 9_000);
    // Another lease is another row.
    let other = s.lease_take("other", "b", 1_000).await.unwrap().unwrap();
    assert_eq!((other.holder.as_str(), other.term), ("b", 1));
    // Up to its last millisecond it is a's; then anyone's, in a new term.
    h.clock.advance(4_999);
    assert_eq!(s.lease_take("leader", "b", 5_000).await.unwrap(), None);
    h.clock.advance(1);
    let b = s.lease_take("leader", "b", 5_000).await.unwrap().unwrap();
    assert_eq!((b.holder.as_str(), b.term), ("b", 2));
    assert_eq!((b.taken_at, b.expires_at), (t0 + 9_000, t0 + 14_000));
    // The holder that lost it cannot renew it, nor drop it.
    assert_eq!(s.lease_take("leader", "a", 5_000).await.unwrap(), None);
    assert!(!s.lease_drop("leader", "a").await.unwrap());
    // A holder that stops drops it, and another takes it at once.
    assert!(s.lease_drop("leader", "b").await.unwrap());
    assert!(
        !s.lease_drop("leader", "b").await.unwrap(),
        "dropped already"
    );
    let a2 = s.lease_take("leader", "a", 5_000).await.unwrap().unwrap();
    assert_eq!((a2.holder.as_str(), a2.term), ("a", 3));
    // A holder taking its own expired lease again starts a new term: what
    // it did in the old one may have been overlapped.
    h.clock.advance(5_000);
    let again = s.lease_take("leader", "a", 5_000).await.unwrap().unwrap();
    assert_eq!(again.term, 4);
    assert!(again.live_at(h.clock.now()) && !again.live_at(again.expires_at));
}

/// Sixteen candidates named `prefix0`… take `race` at once; the winners.
async fn race(h: &Harness, prefix: &str) -> Vec<Lease> {
    let takes = (0..16).map(|i| {
        let s = h.store.clone();
        let holder = format!("{prefix}{i}");
        tokio::spawn(async move { s.lease_take("race", &holder, 5_000).await })
    });
    let mut won = Vec::new();
    for t in takes {
        if let Some(l) = t.await.unwrap().unwrap() {
            won.push(l);
        }
    }
    won
}

pub(super) async fn concurrent_candidates_get_one_lease(h: Harness) {
    // On a lease never taken, one wins.
    let won = race(&h, "c").await;
    assert_eq!(won.len(), 1, "one holder: {won:?}");
    assert_eq!(won[0].term, 1);
    // Once it expires, again one of them wins, in term 2.
    h.clock.advance(5_000);
    let won = race(&h, "d").await;
    assert_eq!(won.len(), 1, "one holder: {won:?}");
    assert_eq!(won[0].term, 2);
}
