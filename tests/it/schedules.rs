//! The firer on a manual clock, on both backends: each slot decided once
//! (a job, or skipped and counted past the catch-up window), the overlap
//! policies, and a schedule in Europe/Berlin across both DST changes of
//! 2026. Jobs stay queued here (no runner), which keeps a slot's job
//! active for as long as a test needs.

use crate::common::{guest, sandbox};
use crate::store::sqlite;
use crate::store_pg::{postgres, test_db};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use taskbox::registry::Registry;
use taskbox::sandbox::Limits;
use taskbox::schedule::cron_expr::CronExpr;
use taskbox::schedule::firer::{Firer, Pass};
use taskbox::schedule::leader::Leader;
use taskbox::store::clock::parse_rfc3339;
use taskbox::store::{
    Clock, JobQuery, JobStore, ManualClock, Millis, SchedulePut, ScheduleRecord, ScheduleState,
};
use tokio::sync::Notify;

const TENANT: &str = "acme";

/// A store with a `tick` task, a leader and a firer on one manual clock.
pub struct Rig {
    pub store: Arc<dyn JobStore>,
    pub clock: ManualClock,
    pub registry: Arc<Registry>,
    leader: Arc<Leader>,
    firer: Arc<Firer>,
}

impl Rig {
    pub async fn new(store: Arc<dyn JobStore>, clock: ManualClock) -> Rig {
        store.tenant_insert(TENANT).await.unwrap();
        let registry = Arc::new(Registry::new(
            store.clone(),
            sandbox().clone(),
            Limits::DEFAULT,
            taskbox::quota::Quotas::SERVER_DEFAULTS,
        ));
        let (component, _) = registry.upload(TENANT, guest("noop")).await.unwrap();
        let spec = serde_json::from_value(json!({"component": component.digest})).unwrap();
        registry.define(TENANT, "tick", spec).await.unwrap();
        let leader = Arc::new(Leader::new(
            store.clone(),
            "me".into(),
            Duration::from_secs(5),
        ));
        let firer = Firer::new(
            store.clone(),
            registry.clone(),
            leader.clone(),
            Arc::new(Notify::new()),
            taskbox::schedule::firer::DEFAULT_MIN_INTERVAL,
        );
        Rig {
            store,
            clock,
            registry,
            leader,
            firer,
        }
    }

    /// Moves the clock to `at`.
    pub fn set(&self, at: Millis) {
        self.clock.advance(at - self.clock.now());
    }

    /// One pass, as the leader (renewed first: the clock jumps).
    pub async fn fire(&self) -> Pass {
        assert!(self.leader.run_once().await);
        self.firer.run_once().await
    }

    /// Defines `name` (on `tick`) as the API does: its first slot is the
    /// next after now.
    pub async fn define(&self, name: &str, spec: Value) -> ScheduleRecord {
        let cron =
            CronExpr::parse(spec["cron"].as_str().unwrap(), spec["timezone"].as_str()).unwrap();
        let mut spec = spec;
        spec["task"] = json!("tick");
        self.store
            .schedule_put(SchedulePut {
                tenant: TENANT.into(),
                name: name.into(),
                spec: spec.to_string(),
                enabled: true,
                state: ScheduleState {
                    next_at: cron.next_after(self.clock.now()),
                    ..ScheduleState::default()
                },
                rev: None,
            })
            .await
            .unwrap()
    }

    pub async fn schedule(&self, name: &str) -> ScheduleRecord {
        self.store
            .schedule_get(TENANT, name)
            .await
            .unwrap()
            .unwrap()
    }

    /// The slots of `name` that made a job, in order, read from the
    /// jobs' unique keys (`schedule:{name}:{slot}`).
    pub async fn slots(&self, name: &str) -> Vec<Millis> {
        let page = self
            .store
            .job_list(JobQuery {
                tenant: Some(TENANT.into()),
                status: None,
                task: Some("tick".into()),
                queue: None,
                limit: 1_000,
                before: None,
                max_bytes: 1 << 24,
            })
            .await
            .unwrap();
        let prefix = format!("schedule:{name}:");
        let mut slots: Vec<Millis> = page
            .jobs
            .iter()
            .filter_map(|j| j.unique_key.as_deref()?.strip_prefix(&prefix)?.parse().ok())
            .collect();
        slots.sort();
        slots
    }

    /// Ends the schedule's last job (a cancel: it is queued).
    async fn end_last_job(&self, name: &str) {
        let id = self.schedule(name).await.state.last_job.unwrap();
        self.store.job_cancel(TENANT, &id).await.unwrap();
    }
}

/// Moves the clock to the next whole second.
fn whole_second(clock: &ManualClock) -> Millis {
    let now = clock.now();
    clock.advance(1_000 - now.rem_euclid(1_000));
    clock.now()
}

async fn slots_fire_once_each_within_the_catchup_window(rig: Rig) {
    let t0 = whole_second(&rig.clock);
    rig.define(
        "tick",
        json!({"cron": "* * * * * *", "overlap": "allow", "catchup_window_ms": 5_000}),
    )
    .await;
    assert_eq!(rig.schedule("tick").await.state.next_at, Some(t0 + 1_000));
    rig.set(t0 + 3_000);
    let pass = rig.fire().await;
    assert_eq!((pass.fired, pass.skipped), (3, 0));
    assert_eq!(
        rig.slots("tick").await,
        [t0 + 1_000, t0 + 2_000, t0 + 3_000]
    );
    // Nothing more is due until the next slot.
    assert_eq!(rig.fire().await.fired, 0);
    rig.set(t0 + 3_999);
    assert_eq!(rig.fire().await.fired, 0);
    // After 20 s of downtime, the slots inside the 5 s window fire once
    // each; the 14 before it are counted as skipped.
    rig.set(t0 + 23_000);
    let pass = rig.fire().await;
    assert_eq!((pass.fired, pass.skipped), (6, 14));
    let s = rig.schedule("tick").await;
    assert_eq!((s.state.fired, s.state.skipped), (9, 14));
    assert_eq!(s.state.last_slot, Some(t0 + 23_000));
    assert_eq!(s.state.next_at, Some(t0 + 24_000));
    let slots = rig.slots("tick").await;
    let late: Vec<Millis> = (18..=23).map(|i| t0 + i * 1_000).collect();
    assert_eq!(slots[3..], late[..]);
    assert_eq!(rig.fire().await.fired, 0, "each slot fires once");
}

async fn overlap_policies_hold_while_the_last_job_is_active(rig: Rig) {
    let t0 = whole_second(&rig.clock);
    rig.define("skip", json!({"cron": "* * * * * *"})).await;
    rig.define(
        "buffer",
        json!({"cron": "* * * * * *", "overlap": "buffer_one"}),
    )
    .await;
    rig.set(t0 + 3_000);
    rig.fire().await;
    // skip: the first slot's job is still queued, so the next two make none.
    let s = rig.schedule("skip").await;
    assert_eq!((s.state.fired, s.state.skipped), (1, 2));
    assert_eq!(rig.slots("skip").await, [t0 + 1_000]);
    // buffer_one: the second slot waits, the third is skipped.
    let b = rig.schedule("buffer").await;
    assert_eq!((b.state.fired, b.state.skipped), (1, 1));
    assert_eq!(b.state.buffered, Some(t0 + 2_000));
    // Still active: nothing changes, however often the firer looks.
    rig.fire().await;
    assert_eq!(
        rig.schedule("buffer").await.state.buffered,
        Some(t0 + 2_000)
    );
    // Once the last job ends, the buffered slot fires at once (before the
    // next slot), and skip fires again at its next slot.
    rig.end_last_job("buffer").await;
    rig.end_last_job("skip").await;
    rig.fire().await;
    let b = rig.schedule("buffer").await;
    assert_eq!((b.state.fired, b.state.buffered), (2, None));
    assert_eq!(rig.slots("buffer").await, [t0 + 1_000, t0 + 2_000]);
    assert_eq!(rig.slots("skip").await, [t0 + 1_000]);
    rig.set(t0 + 4_000);
    rig.fire().await;
    assert_eq!(rig.slots("skip").await, [t0 + 1_000, t0 + 4_000]);
    let b = rig.schedule("buffer").await;
    assert_eq!((b.state.fired, b.state.skipped), (2, 1));
    assert_eq!(
        b.state.buffered,
        Some(t0 + 4_000),
        "buffered behind slot 2's job"
    );
}

#[tokio::test]
async fn slots_fire_once_each_within_the_catchup_window_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let store: Arc<dyn JobStore> = sqlite(&dir, clock.clone()).await;
    slots_fire_once_each_within_the_catchup_window(Rig::new(store.clone(), clock).await).await;
    store.close().await;
}

#[tokio::test]
async fn slots_fire_once_each_within_the_catchup_window_on_postgres() {
    let Some(db) = test_db().await else { return };
    let clock = ManualClock::default();
    let store: Arc<dyn JobStore> = postgres(&db, clock.clone()).await;
    slots_fire_once_each_within_the_catchup_window(Rig::new(store.clone(), clock).await).await;
    store.close().await;
}

#[tokio::test]
async fn overlap_policies_hold_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let store: Arc<dyn JobStore> = sqlite(&dir, clock.clone()).await;
    overlap_policies_hold_while_the_last_job_is_active(Rig::new(store.clone(), clock).await).await;
    store.close().await;
}

#[tokio::test]
async fn overlap_policies_hold_on_postgres() {
    let Some(db) = test_db().await else { return };
    let clock = ManualClock::default();
    let store: Arc<dyn JobStore> = postgres(&db, clock.clone()).await;
    overlap_policies_hold_while_the_last_job_is_active(Rig::new(store.clone(), clock).await).await;
    store.close().await;
}

fn at(text: &str) -> Millis {
    parse_rfc3339(text).unwrap()
}

/// Steps the clock an hour at a time from `from` to `to`, firing at each.
async fn walk(rig: &Rig, from: &str, to: &str) {
    rig.set(at(from));
    while rig.clock.now() < at(to) {
        rig.clock.advance(3_600_000);
        rig.fire().await;
    }
}

#[tokio::test]
async fn a_schedule_in_berlin_fires_at_the_right_instants_across_dst() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let store: Arc<dyn JobStore> = sqlite(&dir, clock.clone()).await;
    let rig = Rig::new(store.clone(), clock).await;
    // Spring: 2026-03-29 02:00 CET → 03:00 CEST; 02:30 does not happen
    // that day, so the daily slot is left out; the hourly one has 23 slots.
    rig.set(at("2026-03-27T12:00:00Z"));
    let berlin = |cron: &str| {
        json!({"cron": cron, "timezone": "Europe/Berlin", "overlap": "allow",
               "catchup_window_ms": 7_200_000})
    };
    rig.define("daily-spring", berlin("30 2 * * *")).await;
    rig.define("hourly-spring", berlin("0 * * * *")).await;
    walk(&rig, "2026-03-27T12:00:00Z", "2026-03-31T00:00:00Z").await;
    assert_eq!(
        rig.slots("daily-spring").await,
        [at("2026-03-28T01:30:00Z"), at("2026-03-30T00:30:00Z")]
    );
    let hourly = rig.slots("hourly-spring").await;
    let on_the_day: Vec<_> = hourly
        .iter()
        .filter(|s| (at("2026-03-28T23:00:00Z")..at("2026-03-29T22:00:00Z")).contains(s))
        .collect();
    assert_eq!(on_the_day.len(), 23, "a 23-hour day");
    assert!(
        hourly.windows(2).all(|w| w[1] - w[0] == 3_600_000),
        "every real hour, once"
    );

    // Autumn: 2026-10-25 03:00 CEST → 02:00 CET; 02:30 happens twice and
    // the daily slot fires once, at the first; the hourly one has 25.
    rig.set(at("2026-10-23T12:00:00Z"));
    rig.define("daily-autumn", berlin("30 2 * * *")).await;
    rig.define("hourly-autumn", berlin("0 * * * *")).await;
    walk(&rig, "2026-10-23T12:00:00Z", "2026-10-27T00:00:00Z").await;
    assert_eq!(
        rig.slots("daily-autumn").await,
        [
            at("2026-10-24T00:30:00Z"),
            at("2026-10-25T00:30:00Z"),
            at("2026-10-26T01:30:00Z")
        ]
    );
    let hourly = rig.slots("hourly-autumn").await;
    let on_the_day: Vec<_> = hourly
        .iter()
        .filter(|s| (at("2026-10-24T22:00:00Z")..at("2026-10-25T23:00:00Z")).contains(s))
        .collect();
    assert_eq!(on_the_day.len(), 25, "a 25-hour day");
    assert!(
        hourly.windows(2).all(|w| w[1] - w[0] == 3_600_000),
        "every real hour, once"
    );
    let s = rig.schedule("hourly-autumn").await;
    assert_eq!(s.state.skipped, 0);
    store.close().await;
}

#[tokio::test]
async fn a_slot_whose_key_is_taken_makes_no_second_job() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::default();
    let store: Arc<dyn JobStore> = sqlite(&dir, clock.clone()).await;
    let rig = Rig::new(store.clone(), clock).await;
    let t0 = whole_second(&rig.clock);
    rig.define("tick", json!({"cron": "* * * * * *", "overlap": "allow"}))
        .await;
    // A job the tenant made with the next slot's key (reuse: reject keeps
    // it from being used again).
    let task = store.task_get(TENANT, "tick", None).await.unwrap().unwrap();
    let mut mine = taskbox::store::NewJob::plain(
        "mine",
        TENANT,
        taskbox::store::TaskRef {
            name: task.name,
            version: task.version,
            digest: task.digest,
        },
        "{}",
    );
    mine.unique_key = Some(format!("schedule:tick:{}", t0 + 1_000));
    mine.reuse = taskbox::store::Reuse::Reject;
    store
        .job_insert(vec![mine])
        .await
        .unwrap()
        .pop()
        .unwrap()
        .unwrap();
    rig.set(t0 + 1_000);
    rig.fire().await;
    let s = rig.schedule("tick").await;
    assert_eq!(s.state.last_job.as_deref(), Some("mine"), "{s:?}");
    assert_eq!(
        rig.slots("tick").await,
        [t0 + 1_000],
        "one job for the slot"
    );
    store.close().await;
}
