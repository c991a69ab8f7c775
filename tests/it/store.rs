//! The store conformance suite on SQLite, plus what only a file-backed
//! store can show: acknowledged writes survive a reopen.

use std::sync::Arc;
use taskbox::quota::Quotas;
use taskbox::store::conformance::{self, Harness};
use taskbox::store::sqlite::{SqliteOptions, SqliteStore};
use taskbox::store::{Durability, StoreOptions};
use taskbox::store::{JobStore, ManualClock};

/// A fresh SQLite store in its own directory, on a manual clock.
pub async fn sqlite(dir: &tempfile::TempDir, clock: ManualClock) -> Arc<dyn JobStore> {
    let store = SqliteStore::open(
        &SqliteOptions {
            url: format!("sqlite://{}", dir.path().join("taskbox.db").display()),
            durability: Durability::Full,
            quotas: Quotas::default(),
        },
        Arc::new(clock),
    )
    .await
    .expect("open the store");
    Arc::new(store)
}

/// Makes a test of each conformance case, on a fresh store of its own.
macro_rules! on_sqlite {
    ($($case:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $case() {
                let dir = tempfile::tempdir().unwrap();
                let clock = ManualClock::default();
                let store: Arc<dyn JobStore> = sqlite(&dir, clock.clone()).await;
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

#[tokio::test]
async fn one_process_at_a_time_opens_a_database_file() {
    let dir = tempfile::tempdir().unwrap();
    let first = sqlite(&dir, ManualClock::default()).await;
    assert!(first.capabilities().owns_database);
    let url = format!("sqlite://{}", dir.path().join("taskbox.db").display());
    let second = SqliteStore::open(
        &SqliteOptions {
            url: url.clone(),
            durability: Durability::Full,
            quotas: Quotas::default(),
        },
        Arc::new(ManualClock::default()),
    )
    .await;
    let err = second
        .err()
        .expect("a second open of the same file is refused");
    assert!(
        err.to_string()
            .contains("another taskbox process has the database"),
        "{err}"
    );
    // Closed, it lets go of the file even while the value lives on.
    first.close().await;
    let again = sqlite(&dir, ManualClock::default()).await;
    again.close().await;
    drop(first);
}

#[tokio::test]
async fn the_url_picks_the_backend() {
    let dir = tempfile::tempdir().unwrap();
    let opts = |url: String| StoreOptions {
        url,
        durability: Durability::Normal,
        quotas: Quotas::default(),
        migrate: true,
    };
    let store = taskbox::store::open(
        &opts(format!("sqlite://{}", dir.path().join("x.db").display())),
        Arc::new(ManualClock::default()),
    )
    .await
    .expect("a SQLite URL opens SQLite");
    assert!(store.capabilities().owns_database);
    store.close().await;
    let err = taskbox::store::open(
        &opts("mysql://h/db".into()),
        Arc::new(ManualClock::default()),
    )
    .await
    .err()
    .expect("an unknown scheme is refused");
    assert!(
        err.to_string().contains("sqlite://PATH or postgres://"),
        "{err}"
    );
}

/// However short the retention, a component is kept an hour after its
/// upload while no task uses it: its task's PUT comes after the upload.
#[tokio::test]
async fn an_unused_upload_is_kept_an_hour_whatever_the_retention() {
    use std::time::Duration;
    use taskbox::maintenance::pruner::{Pruner, Retention, UNUSED_COMPONENT_GRACE};
    use taskbox::store::NewComponent;
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let store: Arc<dyn JobStore> = sqlite(&dir, clock.clone()).await;
    store.tenant_insert("tenant-a").await.unwrap();
    store
        .component_insert(NewComponent {
            tenant: "tenant-a".into(),
            digest: format!("sha256:{:064x}", 7),
            abi: "task".into(),
            bytes: vec![0, 97, 115, 109, 7],
        })
        .await
        .unwrap();
    let pruner = Pruner::new(
        store.clone(),
        Retention {
            completed: Some(Duration::from_millis(1)),
            failed: None,
        },
    );
    clock.advance(1_000);
    assert_eq!(
        pruner.collect().await.unwrap(),
        0,
        "a second after its upload"
    );
    clock.advance(UNUSED_COMPONENT_GRACE.as_millis() as i64);
    assert_eq!(pruner.collect().await.unwrap(), 1, "an hour after, unused");
    store.close().await;
}

/// `m` cut to the migrations before `version`: the schema an older release
/// left (both backends' migration tests).
pub fn before(mut m: sqlx::migrate::Migrator, version: i64) -> sqlx::migrate::Migrator {
    m.migrations = m
        .migrations
        .iter()
        .filter(|m| m.version < version)
        .cloned()
        .collect::<Vec<_>>()
        .into();
    m
}

/// A new SQLite database in `dir` at the schema before `version`: how to
/// connect to it, and a connection.
async fn sqlite_before(
    dir: &tempfile::TempDir,
    version: i64,
) -> (sqlx::sqlite::SqliteConnectOptions, sqlx::SqliteConnection) {
    use sqlx::Connection;
    let opts = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(dir.path().join("taskbox.db"))
        .create_if_missing(true);
    let mut c = sqlx::SqliteConnection::connect_with(&opts).await.unwrap();
    before(taskbox::store::migrations::sqlite().await.unwrap(), version)
        .run(&mut c)
        .await
        .unwrap();
    (opts, c)
}

/// Tokens made before tokens had ids (migration 0015) keep working, each
/// with an id derived from its hash, and can be listed and revoked.
#[tokio::test]
async fn tokens_made_before_ids_get_ids_from_their_hash() {
    use sqlx::Connection;
    let dir = tempfile::tempdir().unwrap();
    let (_, mut c) = sqlite_before(&dir, 15).await;
    let (tenant_hash, admin_hash) = ("a".repeat(64), "b".repeat(64));
    sqlx::query("INSERT INTO tenants (name, created_at) VALUES ('acme', 1)")
        .execute(&mut c)
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO tokens (hash, tenant, scopes, admin, created_at) VALUES \
         (?1, 'acme', 'jobs:read', 0, 10), (?2, NULL, '', 1, 20)",
    )
    .bind(&tenant_hash)
    .bind(&admin_hash)
    .execute(&mut c)
    .await
    .unwrap();
    c.close().await.unwrap();

    let store = sqlite(&dir, ManualClock::default()).await;
    tokens_got_ids(&*store, &tenant_hash, &admin_hash).await;
    store.close().await;
}

/// The jobs' result cache keys made before issue 65 (kept across a
/// resume's new input, a redrive's newer digest, a fallback) cannot be
/// told apart from good ones: migration 0026 drops every one, and a job
/// without a key keeps none.
#[tokio::test]
async fn the_rekeying_migration_drops_every_result_cache_key() {
    use sqlx::Connection;
    let dir = tempfile::tempdir().unwrap();
    let (opts, mut c) = sqlite_before(&dir, 26).await;
    sqlx::query(CACHED_JOBS).execute(&mut c).await.unwrap();
    c.close().await.unwrap();

    sqlite(&dir, ManualClock::default()).await.close().await;
    let mut c = sqlx::SqliteConnection::connect_with(&opts).await.unwrap();
    let keys: Vec<(String, Option<String>)> =
        sqlx::query_as("SELECT id, cache_key FROM jobs ORDER BY id")
            .fetch_all(&mut c)
            .await
            .unwrap();
    assert_eq!(keys, [("j1".into(), None), ("j2".into(), None)]);
}

/// Two completed jobs, one keyed in the result cache, as the schema
/// before the rekeying migration had them (both backends' tests).
pub const CACHED_JOBS: &str = "INSERT INTO jobs (id, tenant, task, task_version, digest, status, \
     queue, priority, input, max_attempts, run_at, created_at, finished_at, output, cache_key) \
     VALUES ('j1', 'acme', 't', 1, 'sha256:aa', 'completed', 'default', 0, '{}', 1, 0, 0, 5, '{}', 'k1'), \
            ('j2', 'acme', 't', 1, 'sha256:aa', 'completed', 'default', 0, '{}', 1, 0, 0, 5, '{}', NULL)";

/// What a store migrated past tokens' ids answers of a tenant's token and
/// the admin's made before them (both backends' migration tests).
pub async fn tokens_got_ids(store: &dyn JobStore, tenant_hash: &str, admin_hash: &str) {
    use taskbox::store::Revocation;
    let t = store.token_get(tenant_hash).await.unwrap().unwrap();
    assert_eq!(t.id, format!("tok_{}", &tenant_hash[..16]));
    assert_eq!(t.tenant.as_deref(), Some("acme"));
    assert_eq!(t.expires_at, None);
    let listed: Vec<(String, i64)> = store
        .token_list()
        .await
        .unwrap()
        .into_iter()
        .map(|t| (t.id, t.created_at))
        .collect();
    assert_eq!(
        listed,
        [
            (format!("tok_{}", &admin_hash[..16]), 20),
            (t.id.clone(), 10)
        ]
    );
    assert_eq!(
        store.token_revoke(&t.id).await.unwrap(),
        Revocation::Revoked
    );
    assert_eq!(store.token_get(tenant_hash).await.unwrap(), None);
}
