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

macro_rules! conformance {
    ($($case:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $case() {
                let dir = tempfile::tempdir().unwrap();
                let clock = ManualClock::default();
                let store: Arc<dyn JobStore> = Arc::new(sqlite(&dir, clock.clone()).await);
                conformance::$case(Harness { store: store.clone(), clock }).await;
                store.close().await;
            }
        )*

        #[test]
        fn every_conformance_case_runs_on_sqlite() {
            assert_eq!([$(stringify!($case)),*].to_vec(), conformance::CASES.to_vec());
        }
    };
}

conformance!(
    registry_records,
    insert_get_and_list,
    one_refused_insert_does_not_undo_the_batch,
    idempotency_keys,
    unique_keys_admit_one_unfinished_job,
    claims_follow_priority_time_and_queues,
    finalize_is_fenced_by_the_lease,
    retries_snoozes_waits_and_resumes,
    cancels,
    heartbeats_extend_leases_and_record_progress,
    rescue_takes_over_expired_leases,
    concurrency_keys_run_one_at_a_time,
    fallbacks_take_over_the_job,
    release_gives_the_attempt_back,
    run_now_puts_a_job_first,
    many_concurrent_writers,
    tenant_settings,
    claims_share_tenants_by_weight,
    a_run_at_in_the_past_is_now,
    quotas_refuse_new_work,
    max_running_caps_claims,
    an_insert_can_claim_for_its_tenant,
    fuel_budgets_hold_claims_until_the_window_refills,
    usage_counts_attempts_and_ended_jobs,
    a_bad_attempt_record_does_not_fail_its_batch,
    snoozes_are_counted,
    pages_are_bounded,
);

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
