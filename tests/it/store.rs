//! The store conformance suite on SQLite, plus what only a file-backed
//! store can show: acknowledged writes survive a reopen.

use std::sync::Arc;
use taskbox::quota::Quotas;
use taskbox::store::conformance::{self, Harness};
use taskbox::store::sqlite::{Durability, SqliteOptions, SqliteStore};
use taskbox::store::{JobStore, ManualClock};

/// A fresh SQLite store in its own directory, on a manual clock.
pub async fn sqlite(dir: &tempfile::TempDir, clock: ManualClock) -> SqliteStore {
    SqliteStore::open(
        &SqliteOptions {
            url: format!("sqlite://{}", dir.path().join("taskbox.db").display()),
            durability: Durability::Full,
            quotas: Quotas::default(),
        },
        Arc::new(clock),
    )
    .await
    .expect("open the store")
}

/// Makes a test of each conformance case, on a fresh store of its own.
macro_rules! on_sqlite {
    ($($case:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $case() {
                let dir = tempfile::tempdir().unwrap();
                let clock = ManualClock::default();
                let store: Arc<dyn JobStore> = Arc::new(sqlite(&dir, clock.clone()).await);
                conformance::run(stringify!($case), Harness { store: store.clone(), clock }).await;
                store.close().await;
            }
        )*
    };
}

taskbox::conformance_cases!(on_sqlite);

#[tokio::test]
async fn acknowledged_jobs_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let store = sqlite(&dir, clock.clone()).await;
    store.tenant_insert("tenant-a").await.unwrap();
    let jobs = (0..50)
        .map(|i| conformance::new_job(&format!("j{i:02}")))
        .collect();
    for r in store.job_insert(jobs).await.unwrap() {
        r.unwrap();
    }
    // Dropped without close, as a killed process would leave it.
    drop(store);
    let again = sqlite(&dir, clock).await;
    assert_eq!(
        again.job_counts().await.unwrap(),
        vec![(taskbox::job::JobStatus::Queued, 50)]
    );
    again.close().await;
}

#[tokio::test]
async fn a_closed_store_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite(&dir, ManualClock::default()).await;
    store.close().await;
    assert!(matches!(
        store.tenant_insert("x").await,
        Err(taskbox::store::StoreError::Unavailable(_))
    ));
}
