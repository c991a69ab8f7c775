//! End to end on PostgreSQL: the real binary as one `serve` (API only) and
//! two `worker`s on one database, sharing one queue.

use crate::e2e::{Client, Served, ADMIN};
use crate::store_pg::test_db;
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A `taskbox worker` process; killed when dropped.
struct Worker {
    child: Child,
}

impl Worker {
    /// Starts a worker and waits until it says it runs.
    fn start(data_dir: &Path, database_url: &str) -> Worker {
        let mut child = Command::new(env!("CARGO_BIN_EXE_taskbox"))
            .args(["worker", "--runners", "2", "--database-url", database_url])
            .arg("--data-dir")
            .arg(data_dir)
            .env_remove("TASKBOX_ADMIN_TOKEN")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start taskbox worker");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                eprintln!("[worker] {line}");
                if line.contains("worker running") {
                    let _ = tx.send(());
                }
            }
        });
        rx.recv_timeout(Duration::from_secs(60))
            .expect("the worker says it runs");
        Worker { child }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_and_two_workers_share_one_queue() {
    let Some(db) = test_db().await else { return };
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    // The server runs no attempts: every job is a worker's.
    let server = Served::spawn(
        dirs[0].path(),
        &["--runners", "0", "--database-url", &db.url],
        Some(ADMIN),
    );
    let _workers = [
        Worker::start(dirs[1].path(), &db.url),
        Worker::start(dirs[2].path(), &db.url),
    ];
    let c = Client::new(&server.url, ADMIN);
    c.task("limits", "limits").await;
    let mut ids = Vec::new();
    for i in 0..40 {
        let (status, job) = c
            .post(
                "/v1/jobs",
                json!({"task": "limits", "input": {"op": "echo", "value": i}}),
            )
            .await;
        assert_eq!(status, 201, "{job}");
        ids.push(job["id"].as_str().unwrap().to_owned());
    }
    // A batch: each item under its own rules, on this backend too.
    let mut items: Vec<_> = (40..60)
        .map(|i| json!({"task": "limits", "input": {"op": "echo", "value": i}}))
        .collect();
    items.insert(5, json!({"task": "missing"}));
    let (status, answer) = c.post("/v1/jobs/batch", json!({"jobs": items})).await;
    assert_eq!(status, 200, "{answer}");
    let answers = answer["jobs"].as_array().unwrap();
    assert_eq!(answers.len(), 21);
    assert_eq!(answers[5]["error"]["code"], "TASK_NOT_FOUND", "{answer}");
    for (k, a) in answers.iter().enumerate().filter(|(k, _)| *k != 5) {
        assert_eq!(a["status"], "queued", "item {k}: {answer}");
        ids.push(a["id"].as_str().unwrap().to_owned());
    }
    for (i, id) in ids.iter().enumerate() {
        let done = c.until(id, |j| j["status"] == "completed").await;
        assert_eq!(done["output"], json!(i));
        let (_, attempts) = c.get(&format!("/v1/jobs/{id}/attempts")).await;
        assert_eq!(
            attempts["attempts"].as_array().map(Vec::len),
            Some(1),
            "each job runs once: {attempts}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_paused_on_the_server_is_not_run_by_a_worker() {
    let Some(db) = test_db().await else { return };
    let dirs: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let server = Served::spawn(
        dirs[0].path(),
        &["--runners", "0", "--database-url", &db.url],
        Some(ADMIN),
    );
    let _worker = Worker::start(dirs[1].path(), &db.url);
    let c = Client::new(&server.url, ADMIN);
    c.task("limits", "limits").await;
    let (status, body) = c.post("/v1/queues/mail/pause", json!({})).await;
    assert_eq!(status, 200, "{body}");
    let echo = |queue: &str, i: i32| json!({"task": "limits", "queue": queue, "input": {"op": "echo", "value": i}});
    let mut mail = Vec::new();
    for i in 0..5 {
        let (status, job) = c.post("/v1/jobs", echo("mail", i)).await;
        assert_eq!(status, 201, "{job}");
        mail.push(job["id"].as_str().unwrap().to_owned());
    }
    let items: Vec<_> = (5..10).map(|i| echo("mail", i)).collect();
    let (status, answer) = c.post("/v1/jobs/batch", json!({"jobs": items})).await;
    assert_eq!(status, 200, "{answer}");
    for a in answer["jobs"].as_array().unwrap() {
        mail.push(a["id"].as_str().unwrap().to_owned());
    }
    // Jobs of another queue, enqueued after, run on the worker; the
    // paused queue's, enqueued one at a time and in a batch, do not.
    let (_, other) = c.post("/v1/jobs", echo("default", 99)).await;
    let other = other["id"].as_str().unwrap().to_owned();
    c.until(&other, |j| j["status"] == "completed").await;
    for id in &mail {
        let (_, job) = c.get(&format!("/v1/jobs/{id}")).await;
        assert_eq!(job["status"], "queued", "{job}");
    }
    let (status, body) = c.post("/v1/queues/mail/resume", json!({})).await;
    assert_eq!(status, 200, "{body}");
    for (i, id) in mail.iter().enumerate() {
        let done = c.until(id, |j| j["status"] == "completed").await;
        assert_eq!(done["output"], json!(i));
    }
}

#[test]
fn a_worker_on_sqlite_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_taskbox"))
        .args(["worker", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--database-url postgres://"), "{err}");
}

/// A cancel reaches the attempt on another process at once, not at its
/// runner's next heartbeat (every 10 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_reaches_a_job_running_on_a_worker() {
    let Some(db) = test_db().await else { return };
    let dirs: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let server = Served::spawn(
        dirs[0].path(),
        &["--runners", "0", "--database-url", &db.url],
        Some(ADMIN),
    );
    let _worker = Worker::start(dirs[1].path(), &db.url);
    let c = Client::new(&server.url, ADMIN);
    c.task("limits", "limits").await;
    // One job first, so that the worker has compiled the component: the
    // first attempt after a compile on a worker notices its cancel only
    // ~150 ms late (the guest runtime's thread is blocked meanwhile; not
    // yet understood), the ones after it in ~10 ms.
    let (_, warm) = c
        .post(
            "/v1/jobs",
            json!({"task": "limits", "input": {"op": "echo", "value": 1}}),
        )
        .await;
    c.until(warm["id"].as_str().unwrap(), |j| j["status"] == "completed")
        .await;
    let (status, job) = c
        .post(
            "/v1/jobs",
            json!({"task": "limits", "input": {"op": "sleep", "ms": 60_000}}),
        )
        .await;
    assert_eq!(status, 201, "{job}");
    let id = job["id"].as_str().unwrap().to_owned();
    c.until(&id, |j| j["status"] == "running").await;
    let asked = std::time::Instant::now();
    // The request itself waits a while for the end it asked for; the job
    // is watched beside it.
    let cancel = {
        let (c, id) = (Client::new(&server.url, ADMIN), id.clone());
        tokio::spawn(async move { c.post(&format!("/v1/jobs/{id}/cancel"), json!({})).await })
    };
    c.until(&id, |j| j["status"] == "cancelled").await;
    let took = asked.elapsed();
    let (status, body) = cancel.await.unwrap();
    assert!(status == 200 || status == 202, "{status} {body}");
    eprintln!("cancel reached the worker's attempt and ended it in {took:?}");
    assert!(
        took < Duration::from_secs(5),
        "the cancel waited for a heartbeat ({took:?}), not for the signal"
    );
}

/// A lease too short to renew, or too long to wait for, is refused with
/// the bounds; one inside them is taken.
#[test]
fn the_lease_flag_has_bounds() {
    let dir = tempfile::tempdir().unwrap();
    for bad in ["999", "600001"] {
        let out = Command::new(env!("CARGO_BIN_EXE_taskbox"))
            .args(["serve", "--listen", "127.0.0.1:0", "--lease-ms", bad])
            .arg("--data-dir")
            .arg(dir.path())
            .env_remove("TASKBOX_ADMIN_TOKEN")
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--lease-ms must be between 1000 and 600000"),
            "{err}"
        );
    }
    let server = Served::spawn(dir.path(), &["--lease-ms", "1000"], Some(ADMIN));
    assert!(server.url.starts_with("http://"));
}

/// The leader's lease as the database holds it: the holder's pid, its
/// term, and whether it is unexpired.
async fn leader_row(c: &mut sqlx::PgConnection) -> Option<(u32, i64, bool)> {
    let row: Option<(String, i64, bool)> = sqlx::query_as(
        "SELECT holder, term, expires_at > (extract(epoch from clock_timestamp()) * 1000)::bigint \
         FROM leases WHERE name = 'leader'",
    )
    .fetch_optional(c)
    .await
    .unwrap();
    row.map(|(holder, term, live)| {
        let pid = holder.split(':').nth(1).and_then(|p| p.parse().ok());
        (pid.expect("a holder names its pid"), term, live)
    })
}

/// Polls the leader's row until `ok` holds, for up to 20 s.
async fn until_leader(
    c: &mut sqlx::PgConnection,
    ok: impl Fn(&(u32, i64, bool)) -> bool,
) -> (u32, i64, bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let row = leader_row(c).await;
        if let Some(r) = row.filter(|r| ok(r)) {
            return r;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the leader's lease never got there: {row:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_process_takes_the_lead_when_the_leader_dies() {
    use sqlx::Connection;
    let Some(db) = test_db().await else { return };
    let dirs: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let mut workers = vec![
        Worker::start(dirs[0].path(), &db.url),
        Worker::start(dirs[1].path(), &db.url),
    ];
    let pids: Vec<u32> = workers.iter().map(|w| w.child.id()).collect();
    let mut c = sqlx::PgConnection::connect(&db.url).await.unwrap();
    let (first, term, _) = until_leader(&mut c, |r| r.2).await;
    assert!(pids.contains(&first), "a worker leads: {first} of {pids:?}");
    // The leader is killed: it cannot let go, so the other waits for its
    // lease to run out (5 s), then takes it in the next term.
    let at = pids.iter().position(|p| *p == first).unwrap();
    let mut dead = workers.remove(at);
    dead.child.kill().unwrap();
    dead.child.wait().unwrap();
    let t0 = std::time::Instant::now();
    let (second, term2, _) = until_leader(&mut c, |r| r.0 != first && r.2).await;
    assert_eq!(second, pids[1 - at]);
    assert!(term2 > term, "a new term: {term} then {term2}");
    eprintln!("took over in {:?}", t0.elapsed());
    // Stopped gracefully, the new leader lets its lease go at once.
    let status = Command::new("kill")
        .args(["-TERM", &second.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    workers[0].child.wait().unwrap();
    let (holder, _, live) = leader_row(&mut c).await.unwrap();
    assert_eq!(holder, second);
    assert!(!live, "the stopped leader's lease ended with it");
}

/// The slots of schedule `name` that made a job, read from the jobs'
/// unique keys, in order; panics on a slot with two jobs.
async fn slots_of(store: &dyn taskbox::store::JobStore, name: &str) -> Vec<i64> {
    let mut slots = Vec::new();
    let mut before = None;
    loop {
        let page = store
            .job_list(taskbox::store::JobQuery {
                tenant: Some("default".into()),
                status: None,
                task: Some("tick".into()),
                queue: None,
                limit: 500,
                before,
                max_bytes: 1 << 24,
            })
            .await
            .unwrap();
        let prefix = format!("schedule:{name}:");
        slots.extend(page.jobs.iter().filter_map(|j| {
            j.unique_key
                .as_deref()?
                .strip_prefix(&prefix)?
                .parse::<i64>()
                .ok()
        }));
        if page.jobs.len() < 500 && !page.cut {
            break;
        }
        before = page.jobs.last().map(|j| j.id.clone());
    }
    slots.sort();
    let n = slots.len();
    slots.dedup();
    assert_eq!(slots.len(), n, "a slot made two jobs");
    slots
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_every_second_schedule_fires_each_slot_once_while_the_leader_is_killed() {
    use taskbox::schedule::cron_expr::CronExpr;
    use taskbox::store::postgres::{PgStore, PostgresOptions};
    use taskbox::store::{JobStore, SchedulePut, ScheduleState};
    let Some(db) = test_db().await else { return };
    let dirs: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let mut workers = vec![
        Worker::start(dirs[0].path(), &db.url),
        Worker::start(dirs[1].path(), &db.url),
    ];
    let pids: Vec<u32> = workers.iter().map(|w| w.child.id()).collect();
    // The test's own store (no candidate: it never takes the lease) makes
    // the task and the schedule, and reads what the workers did.
    let store = PgStore::open(
        &PostgresOptions {
            url: db.url.clone(),
            durability: taskbox::store::Durability::Full,
            quotas: taskbox::quota::Quotas::default(),
            pool: 4,
            migrate: false,
        },
        None,
    )
    .await
    .unwrap();
    let store: std::sync::Arc<dyn JobStore> = std::sync::Arc::new(store);
    let registry = taskbox::registry::Registry::new(
        store.clone(),
        crate::common::sandbox().clone(),
        taskbox::sandbox::Limits::DEFAULT,
        taskbox::quota::Quotas::SERVER_DEFAULTS,
    );
    let (component, _) = registry
        .upload("default", crate::common::guest("noop"))
        .await
        .unwrap();
    let spec = serde_json::from_value(json!({"component": component.digest})).unwrap();
    registry.define("default", "tick", spec).await.unwrap();
    let cron = CronExpr::parse("* * * * * *", None).unwrap();
    store
        .schedule_put(SchedulePut {
            tenant: "default".into(),
            name: "tick".into(),
            spec: json!({"cron": "* * * * * *", "task": "tick", "overlap": "allow"}).to_string(),
            enabled: true,
            state: ScheduleState {
                next_at: cron.next_after(store.now()),
                ..ScheduleState::default()
            },
            rev: None,
        })
        .await
        .unwrap();
    let fired = |min: u64| {
        let store = store.clone();
        async move {
            let deadline = std::time::Instant::now() + Duration::from_secs(40);
            loop {
                let s = store
                    .schedule_get("default", "tick")
                    .await
                    .unwrap()
                    .unwrap();
                if s.state.fired >= min {
                    return s;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "fired {} of {min}",
                    s.state.fired
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    // Five slots under the first leader; then it is killed mid-stride.
    fired(5).await;
    let mut c = {
        use sqlx::Connection;
        sqlx::PgConnection::connect(&db.url).await.unwrap()
    };
    let (leader, _, _) = until_leader(&mut c, |r| r.2).await;
    let at = pids
        .iter()
        .position(|p| *p == leader)
        .expect("a worker leads");
    let mut dead = workers.remove(at);
    dead.child.kill().unwrap();
    dead.child.wait().unwrap();
    let killed_at = store.now();
    // The other takes the lead (within the lease's 5 s) and fires the
    // slots it missed meanwhile, then goes on: at least ten seconds in all.
    let until_after = |s: &taskbox::store::ScheduleRecord| {
        s.state.last_slot.is_some_and(|l| l >= killed_at + 5_000)
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    let last = loop {
        let s = fired(1).await;
        if until_after(&s) {
            break s;
        }
        assert!(std::time::Instant::now() < deadline, "{s:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let (second, _, _) = leader_row(&mut c).await.unwrap();
    assert_eq!(second, pids[1 - at], "the survivor leads");
    // Paused, it fires no more; every slot from the first to the last made
    // exactly one job, and none was skipped.
    let mut put = last.put();
    put.enabled = false;
    let paused = loop {
        match store.schedule_put(put.clone()).await {
            Ok(p) => break p,
            Err(_) => {
                put = store
                    .schedule_get("default", "tick")
                    .await
                    .unwrap()
                    .unwrap()
                    .put();
                put.enabled = false;
            }
        }
    };
    let slots = slots_of(store.as_ref(), "tick").await;
    let (first, last) = (slots[0], *slots.last().unwrap());
    assert!(
        last - first >= 10_000,
        "ten seconds of slots: {first}..{last}"
    );
    let every: Vec<i64> = (0..=(last - first) / 1_000)
        .map(|i| first + i * 1_000)
        .collect();
    assert_eq!(slots, every, "each slot once, none missing");
    assert_eq!(paused.state.fired, slots.len() as u64);
    assert_eq!(paused.state.skipped, 0);
    eprintln!(
        "{} slots, leader {leader} killed at slot {}, {second} took over",
        slots.len(),
        (killed_at - first) / 1_000
    );
    store.close().await;
}
