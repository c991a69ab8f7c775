//! Leadership between candidates on one database: one leads at a time; a
//! leader that stops renewing stops acting before another takes over
//! (in a higher term); one that resigns is replaced at once.

use crate::store::sqlite;
use crate::store_pg::{postgres, test_db};
use std::sync::Arc;
use std::time::Duration;
use taskbox::schedule::leader::Leader;
use taskbox::store::{JobStore, ManualClock};

const TTL: Duration = Duration::from_secs(5);

/// Candidates `a` and `b`, each on its own store (as two processes are)
/// over one database, on one manual clock.
async fn contend(a: Arc<dyn JobStore>, b: Arc<dyn JobStore>, clock: &ManualClock) {
    let a = Leader::new(a, "a".into(), TTL);
    let b = Leader::new(b, "b".into(), TTL);
    assert!(!a.leads(), "nobody leads before a renewal");
    assert!(a.run_once().await);
    assert!(!b.run_once().await);
    assert_eq!((a.term_now(), b.term_now()), (Some(1), None));
    // Renewed every third of its time, it stays a's.
    for _ in 0..5 {
        clock.advance(1_600);
        assert!(a.run_once().await);
        assert!(!b.run_once().await);
    }
    // a stalls. Before its lease runs out it stops acting (a third of the
    // time is its margin), and b cannot take it until it has run out.
    clock.advance(3_400);
    assert!(!a.leads(), "a stops acting before its lease runs out");
    assert!(!b.run_once().await);
    clock.advance(1_600);
    assert!(b.run_once().await, "b takes over once it ran out");
    assert_eq!(b.term_now(), Some(2));
    assert!(!a.run_once().await, "a's renewal comes too late");
    assert!(!a.leads());
    // b resigns (its process stops): a takes over at once.
    b.resign().await;
    assert!(!b.leads());
    assert!(a.run_once().await);
    assert_eq!(a.term_now(), Some(3));
}

#[tokio::test]
async fn one_candidate_leads_at_a_time_on_sqlite() {
    // SQLite is one process's, but two candidates on its store hold to the
    // same rule.
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let store: Arc<dyn JobStore> = sqlite(&dir, clock.clone()).await;
    contend(store.clone(), store.clone(), &clock).await;
    store.close().await;
}

#[tokio::test]
async fn one_candidate_leads_at_a_time_on_postgres() {
    let Some(db) = test_db().await else { return };
    let clock = ManualClock::default();
    let a: Arc<dyn JobStore> = postgres(&db, clock.clone()).await;
    let b: Arc<dyn JobStore> = postgres(&db, clock.clone()).await;
    contend(a.clone(), b.clone(), &clock).await;
    a.close().await;
    b.close().await;
}

/// Counts its rounds.
struct Counting(std::sync::atomic::AtomicU32);

#[async_trait::async_trait]
impl taskbox::maintenance::Service for Counting {
    fn name(&self) -> &'static str {
        "counting"
    }
    fn interval(&self) -> Duration {
        Duration::from_secs(1)
    }
    async fn run_once(&self) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[tokio::test]
async fn leader_only_maintenance_runs_on_the_leader_alone() {
    use taskbox::maintenance::Service;
    use taskbox::schedule::leader::LeaderOnly;
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let store: Arc<dyn JobStore> = sqlite(&dir, clock.clone()).await;
    let a = Arc::new(Leader::new(store.clone(), "a".into(), TTL));
    let b = Arc::new(Leader::new(store.clone(), "b".into(), TTL));
    let on = |leader: &Arc<Leader>| LeaderOnly {
        leader: leader.clone(),
        service: Counting(Default::default()),
    };
    let (on_a, on_b) = (on(&a), on(&b));
    let rounds = |s: &LeaderOnly<Counting>| s.service.0.load(std::sync::atomic::Ordering::SeqCst);
    // Before any candidacy, nobody leads: neither runs.
    on_a.run_once().await;
    assert_eq!(rounds(&on_a), 0);
    assert!(a.run_once().await);
    assert!(!b.run_once().await);
    for _ in 0..3 {
        on_a.run_once().await;
        on_b.run_once().await;
    }
    assert_eq!((rounds(&on_a), rounds(&on_b)), (3, 0));
    assert_eq!(on_a.name(), "counting");
    // a resigns; b leads, and its service runs from then.
    a.resign().await;
    assert!(b.run_once().await);
    on_a.run_once().await;
    on_b.run_once().await;
    assert_eq!((rounds(&on_a), rounds(&on_b)), (3, 1));
    store.close().await;
}
