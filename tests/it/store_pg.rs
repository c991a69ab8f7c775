//! The store conformance suite on PostgreSQL: every case on a database of
//! its own, made for it (a copy of one migrated once) and dropped after it, on the server at
//! `TASKBOX_TEST_DATABASE_URL` or else this machine's at 127.0.0.1:5432.
//! With `CI=true` a server that cannot be reached fails the suite; without
//! it, each case says so and passes, so a laptop without PostgreSQL can
//! run the rest.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use taskbox::quota::Quotas;
use taskbox::store::conformance::{self, Harness};
use taskbox::store::postgres::{admin, PgStore, PostgresOptions};
use taskbox::store::{Durability, JobStore, ManualClock, NewJob, StoreError};

const DEFAULT_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";
/// Databases this suite makes are named with this and the process id.
const PREFIX: &str = "taskbox_it_";

/// The server to make databases on.
pub fn admin_url() -> String {
    std::env::var("TASKBOX_TEST_DATABASE_URL").unwrap_or_else(|_| DEFAULT_URL.to_owned())
}

/// A database made for one test, dropped when this is.
pub struct TestDb {
    pub url: String,
    name: String,
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let name = self.name.clone();
        // Drop may run inside a runtime; the drop gets one of its own.
        let dropped = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for the drop");
            rt.block_on(admin::drop_database(&admin_url(), &name))
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            eprintln!("could not drop the test database {}", self.name);
        }
    }
}

/// Databases left by runs of this suite whose process is gone (a run that
/// was killed), dropped once per run.
async fn sweep(c: &mut sqlx::PgConnection) {
    let names: Vec<String> =
        sqlx::query_scalar("SELECT datname FROM pg_database WHERE datname LIKE $1")
            .bind(format!("{PREFIX}%"))
            .fetch_all(&mut *c)
            .await
            .unwrap_or_default();
    for name in names {
        let pid = name
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.split('_').next())
            .and_then(|p| p.parse::<u32>().ok());
        let alive = pid.is_some_and(|p| std::path::Path::new(&format!("/proc/{p}")).exists());
        if !alive {
            let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                .execute(&mut *c)
                .await;
        }
    }
}

/// The server to make databases on, once it answers (and its databases
/// left by killed runs are swept); `None` when none answers and this is
/// not CI.
async fn server() -> Option<String> {
    use sqlx::Connection;
    static SWEPT: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    let admin = admin_url();
    let mut c = match sqlx::PgConnection::connect(&admin).await {
        Ok(c) => c,
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("CI=true and no PostgreSQL server answers at {admin}: {e}; start one, or set TASKBOX_TEST_DATABASE_URL")
        }
        Err(e) => {
            eprintln!("skipped: no PostgreSQL server answers at {admin} ({e}); set TASKBOX_TEST_DATABASE_URL to run this");
            return None;
        }
    };
    SWEPT.get_or_init(|| sweep(&mut c)).await;
    Some(admin)
}

/// A name for a database of this process's, not used before.
fn next_name() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{PREFIX}{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A fresh database with this version's schema, or `None` when no server
/// answers and this is not CI: a copy of one this process migrated once
/// (one statement, where each of the ~250 databases a run makes took every
/// migration). It is named like the others, so a later run sweeps it.
pub async fn test_db() -> Option<TestDb> {
    static TEMPLATE: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();
    let admin = server().await?;
    let template = TEMPLATE
        .get_or_init(|| async {
            let name = format!("{PREFIX}{}_template", std::process::id());
            let url = admin::create_database(&admin, &name)
                .await
                .unwrap_or_else(|e| panic!("cannot create the template database {name}: {e}"));
            admin::migrate(&url)
                .await
                .unwrap_or_else(|e| panic!("cannot migrate the template database {name}: {e}"));
            name
        })
        .await;
    let name = next_name();
    let url = admin::create_database_from(&admin, &name, template)
        .await
        .unwrap_or_else(|e| panic!("cannot create the test database {name}: {e}"));
    Some(TestDb { url, name })
}

/// A fresh database with no schema at all (for a test of the migrations
/// themselves), or `None` as `test_db`.
pub async fn empty_test_db() -> Option<TestDb> {
    let admin = server().await?;
    let name = next_name();
    let url = admin::create_database(&admin, &name)
        .await
        .unwrap_or_else(|e| panic!("cannot create the test database {name}: {e}"));
    Some(TestDb { url, name })
}

/// A store on a fresh database, on a manual clock.
pub async fn postgres(db: &TestDb, clock: ManualClock) -> Arc<dyn JobStore> {
    let store = PgStore::open(
        &PostgresOptions {
            url: db.url.clone(),
            durability: Durability::Full,
            quotas: Quotas::default(),
            pool: 8,
            migrate: true,
        },
        Some(Arc::new(clock)),
    )
    .await
    .expect("open the store");
    Arc::new(store)
}

/// Makes a test of each conformance case, on a database of its own.
macro_rules! on_postgres {
    ($($case:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $case() {
                let Some(db) = test_db().await else { return };
                let clock = ManualClock::default();
                let store: Arc<dyn JobStore> = postgres(&db, clock.clone()).await;
                conformance::run(stringify!($case), Harness { store: store.clone(), clock }).await;
                store.close().await;
            }
        )*
    };
}

taskbox::conformance_cases!(on_postgres);

/// The next signal, within a deadline.
async fn next_signal(
    rx: &mut tokio::sync::broadcast::Receiver<taskbox::store::Signal>,
    want: impl Fn(&taskbox::store::Signal) -> bool,
) {
    let deadline = std::time::Duration::from_secs(20);
    tokio::time::timeout(deadline, async {
        loop {
            match rx.recv().await {
                Ok(s) if want(&s) => return,
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(e) => panic!("the signals ended: {e}"),
            }
        }
    })
    .await
    .expect("the signal came");
}

/// Two stores on one database, as two processes would have them: what one
/// enqueues and cancels, the other hears of; a store does not hear its own
/// enqueues (its runner knows of them already).
#[tokio::test]
async fn signals_reach_the_other_processes() {
    use taskbox::store::{ClaimParams, Signal};
    let Some(db) = test_db().await else { return };
    let clock = ManualClock::default();
    let a = postgres(&db, clock.clone()).await;
    let b = postgres(&db, clock.clone()).await;
    let mut heard = b.signals().expect("a shared store signals");
    let mut mine = a.signals().expect("a shared store signals");
    b.tenant_insert("tenant-a").await.unwrap();
    b.job_insert(vec![conformance::new_job("j0")])
        .await
        .unwrap()
        .pop()
        .unwrap()
        .unwrap();
    // A's listener is up once it says anything: a listener looks (sends
    // `Jobs`) as soon as it listens, and hears B's enqueue after.
    next_signal(&mut mine, |s| *s == Signal::Jobs).await;
    // Which of those two it was is not known, and B's enqueue may still be
    // on its way. One connection hears commits in order: B cancels a job
    // of its own, and what A hears up to that cancel is behind it.
    b.job_insert(vec![conformance::new_job("a-sync")])
        .await
        .unwrap()
        .pop()
        .unwrap()
        .unwrap();
    let sync = b
        .job_claim(ClaimParams {
            owner: "r0".into(),
            queues: None,
            limit: 1,
            lease_ms: 30_000,
            only_tenants: None,
            begin_each: u32::MAX,
            caps: Default::default(),
        })
        .await
        .unwrap()
        .jobs;
    assert_eq!(sync[0].id, "a-sync");
    b.job_cancel("tenant-a", "a-sync").await.unwrap();
    next_signal(&mut mine, |s| *s == Signal::Cancel("a-sync".into())).await;
    next_signal(&mut heard, |s| *s == Signal::Cancel("a-sync".into())).await;
    a.job_insert(vec![conformance::new_job("j1")])
        .await
        .unwrap()
        .pop()
        .unwrap()
        .unwrap();
    next_signal(&mut heard, |s| *s == Signal::Jobs).await;
    let claimed = a
        .job_claim(ClaimParams {
            owner: "r1".into(),
            queues: None,
            limit: 2,
            lease_ms: 30_000,
            only_tenants: None,
            begin_each: u32::MAX,
            caps: Default::default(),
        })
        .await
        .unwrap()
        .jobs;
    assert_eq!(claimed.len(), 2);
    let asked = std::time::Instant::now();
    a.job_cancel("tenant-a", "j1").await.unwrap();
    next_signal(&mut heard, |s| *s == Signal::Cancel("j1".into())).await;
    eprintln!("the cancel was heard in {:?}", asked.elapsed());
    // A's own listener hears the cancel after its enqueue's NOTIFY (one
    // connection hears commits in order), and nothing else before it.
    let mut before_cancel = Vec::new();
    tokio::time::timeout(std::time::Duration::from_secs(20), async {
        loop {
            match mine.recv().await.expect("the signals go on") {
                Signal::Cancel(id) if id == "j1" => return,
                s => before_cancel.push(s),
            }
        }
    })
    .await
    .expect("A heard its own cancel");
    assert_eq!(before_cancel, vec![], "A heard its own enqueue");
    a.close().await;
    b.close().await;
}

/// The id of the next revoked token `rx` hears, within `ms`.
async fn next_revoke(
    rx: &mut tokio::sync::broadcast::Receiver<taskbox::store::Signal>,
    ms: u64,
) -> Result<String, tokio::time::error::Elapsed> {
    use taskbox::store::Signal;
    tokio::time::timeout(std::time::Duration::from_millis(ms), async {
        loop {
            match rx.recv().await {
                Ok(Signal::TokenRevoked(x)) => return x,
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(e) => panic!("the signals ended: {e}"),
            }
        }
    })
    .await
}

/// A revoke on one store is heard by another on the same database (and by
/// the store that made it: its process forgot the token already, and a
/// second forget is harmless), with the token's id.
#[tokio::test]
async fn a_revoke_is_heard_by_the_other_processes() {
    use taskbox::store::{NewToken, Revocation};
    let Some(db) = test_db().await else { return };
    let clock = ManualClock::default();
    let a = postgres(&db, clock.clone()).await;
    let b = postgres(&db, clock.clone()).await;
    let mut heard = a.signals().expect("a shared store signals");
    b.tenant_insert("tenant-a").await.unwrap();
    // A's listener may not listen yet when the first revoke commits (what
    // is sent before is lost, and its cache's TTL covers that): revoke
    // one token after another until A hears one, then it hears each.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    for i in 0.. {
        assert!(std::time::Instant::now() < deadline, "A heard no revoke");
        let id = format!("tok_{i:016x}");
        b.token_insert(NewToken {
            id: id.clone(),
            hash: format!("hash-{i}"),
            tenant: Some("tenant-a".into()),
            scopes: vec![],
            expires_at: None,
        })
        .await
        .unwrap();
        assert_eq!(b.token_revoke(&id).await.unwrap(), Revocation::Revoked);
        if let Ok(x) = next_revoke(&mut heard, 500).await {
            assert!(x.starts_with("tok_0"), "{x}");
            break;
        }
    }
    // Now that A listens: a revoke refused (the admin's, or none) says nothing.
    b.token_insert(NewToken {
        id: "tok_admin".into(),
        hash: "hash-admin".into(),
        tenant: None,
        scopes: vec![],
        expires_at: None,
    })
    .await
    .unwrap();
    assert_eq!(
        b.token_revoke("tok_admin").await.unwrap(),
        Revocation::Admin
    );
    assert_eq!(
        b.token_revoke("tok_none").await.unwrap(),
        Revocation::NotFound
    );
    b.token_insert(NewToken {
        id: "tok_last".into(),
        hash: "hash-last".into(),
        tenant: Some("tenant-a".into()),
        scopes: vec![],
        expires_at: None,
    })
    .await
    .unwrap();
    b.token_revoke("tok_last").await.unwrap();
    // Late echoes of the first revokes may come first; nothing else does.
    loop {
        let x = next_revoke(&mut heard, 20_000)
            .await
            .expect("A heard the last revoke");
        if x == "tok_last" {
            break;
        }
        assert!(x.starts_with("tok_0"), "a refused revoke was told: {x}");
    }
    a.close().await;
    b.close().await;
}

/// Tokens made before tokens had ids (migration 0016) keep working, each
/// with an id derived from its hash, and can be listed and revoked.
#[tokio::test]
async fn tokens_made_before_ids_get_ids_from_their_hash() {
    use sqlx::Connection;
    let Some(db) = empty_test_db().await else {
        return;
    };
    let mut c = sqlx::PgConnection::connect(&db.url).await.unwrap();
    crate::store::before(taskbox::store::migrations::postgres().await.unwrap(), 16)
        .run(&mut c)
        .await
        .unwrap();
    let (tenant_hash, admin_hash) = ("a".repeat(64), "b".repeat(64));
    sqlx::query("INSERT INTO tenants (name, created_at) VALUES ('acme', 1)")
        .execute(&mut c)
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO tokens (hash, tenant, scopes, admin, created_at) VALUES \
         ($1, 'acme', 'jobs:read', FALSE, 10), ($2, NULL, '', TRUE, 20)",
    )
    .bind(&tenant_hash)
    .bind(&admin_hash)
    .execute(&mut c)
    .await
    .unwrap();
    c.close().await.unwrap();

    let store = postgres(&db, ManualClock::default()).await;
    crate::store::tokens_got_ids(&*store, &tenant_hash, &admin_hash).await;
    store.close().await;
}

/// Migration 0028 drops every result cache key made before issue 65
/// (`store::the_rekeying_migration_drops_every_result_cache_key`).
#[tokio::test]
async fn the_rekeying_migration_drops_every_result_cache_key() {
    use sqlx::Connection;
    let Some(db) = empty_test_db().await else {
        return;
    };
    let mut c = sqlx::PgConnection::connect(&db.url).await.unwrap();
    crate::store::before(taskbox::store::migrations::postgres().await.unwrap(), 28)
        .run(&mut c)
        .await
        .unwrap();
    sqlx::query(crate::store::CACHED_JOBS)
        .execute(&mut c)
        .await
        .unwrap();
    postgres(&db, ManualClock::default()).await.close().await;
    let keys: Vec<(String, Option<String>)> =
        sqlx::query_as("SELECT id, cache_key FROM jobs ORDER BY id")
            .fetch_all(&mut c)
            .await
            .unwrap();
    assert_eq!(keys, [("j1".into(), None), ("j2".into(), None)]);
    c.close().await.unwrap();
}

/// The server's default `max_queued` holds for a tenant that set none, on
/// the one-statement insert path too (its `least` once read a quota that
/// was not set as no limit).
#[tokio::test]
async fn the_default_max_queued_holds_on_every_insert_path() {
    let Some(db) = test_db().await else { return };
    let store = PgStore::open(
        &PostgresOptions {
            url: db.url.clone(),
            durability: Durability::Full,
            quotas: Quotas {
                max_queued: Some(2),
                ..Quotas::default()
            },
            pool: 8,
            migrate: true,
        },
        None,
    )
    .await
    .expect("open the store");
    let store: Arc<dyn JobStore> = Arc::new(store);
    store.tenant_insert("t").await.unwrap();
    let task = taskbox::store::TaskRef {
        name: "x".into(),
        version: 1,
        digest: "sha256:00".into(),
    };
    let one = |id: &str| vec![NewJob::plain(id, "t", task.clone(), "{}")];
    for id in ["a", "b"] {
        store
            .job_insert(one(id))
            .await
            .unwrap()
            .pop()
            .unwrap()
            .unwrap();
    }
    let third = store.job_insert(one("c")).await.unwrap().pop().unwrap();
    assert!(
        matches!(&third, Err(StoreError::QuotaExceeded(e)) if e.quota == "max_queued" && e.limit == 2),
        "{third:?}"
    );
    // And a batch: none past the default.
    let batch = store
        .job_insert(vec![
            NewJob::plain("d", "t", task.clone(), "{}"),
            NewJob::plain("e", "t", task.clone(), "{}"),
        ])
        .await
        .unwrap();
    assert!(batch.iter().all(|r| r.is_err()), "{batch:?}");
    store.close().await;
}
