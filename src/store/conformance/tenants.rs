//! Conformance cases of tenants against each other: claims shared by
//! weight, quotas that refuse new work, fuel budgets that hold claims until
//! the window refills, usage, and attempts that cannot be recorded.

use super::*;
use crate::attempt_log::{AttemptLog, Level, LogLine, Source};
use crate::network_tally::NetworkTally;
use crate::quota::{Exceeded, Quotas, WINDOW_MS};
use std::collections::HashMap;
use std::sync::Mutex;

pub(super) async fn put(h: &Harness, tenant: &str, weight: Option<u32>, quotas: Quotas) {
    h.store
        .tenant_put(TenantSettings {
            name: tenant.into(),
            weight,
            quotas,
        })
        .await
        .unwrap();
}

async fn cap_running(h: &Harness, tenant: &str, max_running: u64) {
    let quotas = Quotas {
        max_running: Some(max_running),
        ..Quotas::default()
    };
    put(h, tenant, None, quotas).await;
}

pub(super) fn job_of(tenant: &str, id: &str) -> NewJob {
    NewJob {
        tenant: tenant.into(),
        ..new_job(id)
    }
}

async fn insert_many(h: &Harness, tenant: &str, prefix: &str, n: usize, priority: i32) {
    let jobs = (0..n)
        .map(|i| NewJob {
            priority,
            ..job_of(tenant, &format!("{prefix}{i:04}"))
        })
        .collect();
    for r in h.store.job_insert(jobs).await.unwrap() {
        r.unwrap();
    }
}

fn count(claimed: &[ClaimedJob], tenant: &str) -> usize {
    claimed.iter().filter(|c| c.tenant == tenant).count()
}

/// The gauges the store keeps agree with the jobs it has.
pub(super) async fn gauges_agree(h: &Harness, tenant: &str) {
    let mut counted = JobGauges::default();
    for (status, slot) in [
        (JobStatus::Queued, &mut counted.queued),
        (JobStatus::Running, &mut counted.running),
        (JobStatus::Waiting, &mut counted.waiting),
    ] {
        let page = h
            .store
            .job_list(JobQuery {
                tenant: Some(tenant.into()),
                status: Some(status),
                limit: 100_000,
                max_bytes: usize::MAX,
                ..JobQuery::default()
            })
            .await
            .unwrap();
        *slot = page.jobs.len() as u64;
    }
    let usage = h.store.tenant_usage(tenant).await.unwrap();
    assert_eq!(usage.jobs, counted, "the gauges of {tenant}");
}

pub(super) async fn tenant_settings(h: Harness) {
    setup(&h).await;
    let t = h.store.tenant_get(A).await.unwrap().unwrap();
    assert_eq!((t.weight, t.quotas), (None, Quotas::default()));
    let q = Quotas {
        max_queued: Some(10),
        fuel_per_minute: Some(1_000),
        ..Quotas::default()
    };
    put(&h, A, Some(3), q).await;
    let t = h.store.tenant_get(A).await.unwrap().unwrap();
    assert_eq!((t.weight, t.quotas), (Some(3), q));
    // A put replaces what was set.
    put(&h, A, None, Quotas::default()).await;
    let t = h.store.tenant_get(A).await.unwrap().unwrap();
    assert_eq!((t.weight, t.quotas), (None, Quotas::default()));
    // A put creates a tenant that is new.
    let (c, created) = h
        .store
        .tenant_put(TenantSettings {
            name: "c".into(),
            weight: Some(2),
            quotas: Quotas::default(),
        })
        .await
        .unwrap();
    assert!(created);
    assert_eq!(c.weight, Some(2));
    let names: Vec<String> = h
        .store
        .tenant_list()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["c", A, B]);
}

/// A tenant with a backlog at the best priority gets its share of a claim
/// and no more; priority orders jobs within a tenant, not across them.
pub(super) async fn claims_share_tenants_by_weight(h: Harness) {
    setup(&h).await;
    insert_many(&h, A, "a", 200, -1000).await;
    insert_many(&h, B, "b", 200, 1000).await;
    let got = claim(&h, 10).await;
    assert_eq!((count(&got, A), count(&got, B)), (5, 5), "{:?}", ids(&got));
    assert_eq!(got[0].id.chars().next(), got[2].id.chars().next(), "turns");
    put(&h, B, Some(3), Quotas::default()).await;
    let mut a = 0;
    let mut b = 0;
    for _ in 0..5 {
        let got = claim(&h, 8).await;
        a += count(&got, A);
        b += count(&got, B);
    }
    assert_eq!((a, b), (10, 30), "weights 1 and 3");
    // A tenant that comes later is served at once.
    insert(&h, job_of("late", "late1")).await;
    h.store.tenant_insert("late").await.unwrap();
    let got = claim(&h, 3).await;
    assert!(ids(&got).contains(&"late1"), "{:?}", ids(&got));
    // A claim for named tenants (a runner's for those that just got a
    // job) takes theirs and no one else's.
    insert(&h, job_of("late", "late2")).await;
    let only = |tenants: &[&str]| ClaimParams {
        owner: "r1".into(),
        queues: None,
        limit: 5,
        lease_ms: 30_000,
        only_tenants: Some(tenants.iter().map(|t| t.to_string()).collect()),
        begin_each: u32::MAX,
        caps: Default::default(),
    };
    let got = h
        .store
        .job_claim(only(&["late", "nobody"]))
        .await
        .unwrap()
        .jobs;
    assert_eq!(ids(&got), ["late2"]);
    let got = h.store.job_claim(only(&[A])).await.unwrap().jobs;
    assert_eq!(count(&got, A), 5, "{:?}", ids(&got));
    assert!(h.store.job_claim(only(&[])).await.unwrap().jobs.is_empty());
    gauges_agree(&h, A).await;
    gauges_agree(&h, B).await;
}

/// Two runner slots on a clock of the test's own: each claims a job as it
/// frees and ends it with the runner time `took` gives it. Answers each
/// label's runner time within `horizon_us` and its starts.
async fn run_slots(
    h: &Harness,
    took: impl Fn(&ClaimedJob) -> (String, u64),
    horizon_us: u64,
) -> (HashMap<String, u64>, HashMap<String, u64>) {
    let (mut ran, mut starts) = (HashMap::new(), HashMap::new());
    // Each slot: when it frees, and the attempt ending then.
    let mut slots: Vec<(u64, Option<ClaimedJob>)> = vec![(0, None), (0, None)];
    loop {
        let slot = (0..slots.len()).min_by_key(|&i| slots[i].0).unwrap();
        let at = slots[slot].0;
        if at >= horizon_us {
            return (ran, starts);
        }
        if let Some(job) = slots[slot].1.take() {
            let us = took(&job).1;
            let r = h
                .store
                .job_finalize(vec![Finalize {
                    id: job.id.clone(),
                    tenant: job.tenant.clone(),
                    lease_token: job.lease_token.clone(),
                    action: Action::Complete {
                        output: "{}".into(),
                    },
                    attempt: attempt(&job, "completed", None),
                    usage: Some(Usage {
                        fuel: us,
                        wall_ms: us / 1_000,
                        runner_us: us,
                        http_requests: 0,
                        http_bytes: 0,
                    }),
                    callbacks: None,
                    names: job.names(),
                    steps: Vec::new(),
                    close_children: None,
                }])
                .await
                .unwrap();
            assert_eq!(r, vec![Finalized::Done(JobStatus::Completed)]);
        }
        let [job] = <[ClaimedJob; 1]>::try_from(claim(h, 1).await).expect("one job");
        let (label, us) = took(&job);
        *ran.entry(label.clone()).or_default() += us.min(horizon_us - at);
        *starts.entry(label).or_default() += 1;
        slots[slot] = (at + us, Some(job));
    }
}

fn share_of(ran: &HashMap<String, u64>, label: &str) -> f64 {
    ran.get(label).copied().unwrap_or(0) as f64 / ran.values().sum::<u64>().max(1) as f64
}

/// Claims share the runners' time, not their starts: with A's attempts
/// taking 100 times as long as B's and B weighing 3, two slots give B
/// three quarters of the runner time.
pub(super) async fn claims_share_runner_time_not_starts(h: Harness) {
    setup(&h).await;
    put(&h, B, Some(3), Quotas::default()).await;
    insert_many(&h, A, "a", 100, 0).await;
    insert_many(&h, B, "b", 3_000, 0).await;
    let took = |j: &ClaimedJob| (j.tenant.clone(), if j.tenant == A { 10_000 } else { 100 });
    let (ran, starts) = run_slots(&h, took, 150_000).await;
    let b = share_of(&ran, B);
    assert!(
        (b - 0.75).abs() <= 0.075,
        "B had {b:.3} of the runner time (fair: 0.75); runner µs {ran:?}, starts {starts:?}"
    );
    // Counting starts, A would have had a quarter of them and so nearly
    // all of the time.
    assert!(starts[B] > 50 * starts[A], "starts {starts:?}");
}

fn keyed(tenant: &str, id: &str, key: Option<&str>, weight: Option<u32>) -> NewJob {
    NewJob {
        fairness_key: key.map(str::to_owned),
        fairness_weight: weight,
        ..job_of(tenant, id)
    }
}

async fn insert_all(h: &Harness, jobs: Vec<NewJob>) {
    for r in h.store.job_insert(jobs).await.unwrap() {
        r.unwrap();
    }
}

/// A tenant's claims take its fairness keys in turn, and its jobs without
/// a key as one more, whatever order they were queued in; a key's weight
/// divides them; a job's concurrency key is its fairness key unless it
/// names one; and the keys share the runners' time, not their starts.
pub(super) async fn a_tenants_fairness_keys_are_served_in_turn(h: Harness) {
    setup(&h).await;
    // k1's backlog first, then k2's, then jobs with no key.
    let mut jobs = Vec::new();
    for (prefix, key) in [("k1-", Some("k1")), ("k2-", Some("k2")), ("none-", None)] {
        jobs.extend((0..20).map(|i| keyed(A, &format!("{prefix}{i:02}"), key, None)));
    }
    insert_all(&h, jobs).await;
    let group = |j: &ClaimedJob| j.id.split('-').next().unwrap().to_owned();
    let mut got: HashMap<String, usize> = HashMap::new();
    for _ in 0..2 {
        for j in claim(&h, 6).await {
            *got.entry(group(&j)).or_default() += 1;
        }
    }
    let want: HashMap<String, usize> =
        HashMap::from([("k1".into(), 4), ("k2".into(), 4), ("none".into(), 4)]);
    assert_eq!(got, want, "three groups in turn");
    // Each key's jobs in the tenant's order.
    let page = h
        .store
        .job_list(JobQuery {
            tenant: Some(A.into()),
            status: Some(JobStatus::Running),
            limit: 100,
            max_bytes: usize::MAX,
            ..JobQuery::default()
        })
        .await
        .unwrap();
    let mut running: Vec<String> = page.jobs.into_iter().map(|j| j.id).collect();
    running.sort();
    assert_eq!(
        running,
        [
            "k1-00", "k1-01", "k1-02", "k1-03", "k2-00", "k2-01", "k2-02", "k2-03", "none-00",
            "none-01", "none-02", "none-03"
        ]
    );

    // Weights: w3 weighs 3, w1 1 (B's jobs, w1's first; claims of every
    // tenant's, A's too).
    let mut jobs = Vec::new();
    for (prefix, key, weight) in [("w1-", "w1", None), ("w3-", "w3", Some(3))] {
        jobs.extend((0..80).map(|i| keyed(B, &format!("{prefix}{i:02}"), Some(key), weight)));
    }
    insert_all(&h, jobs).await;
    let mut got: HashMap<String, usize> = HashMap::new();
    for _ in 0..12 {
        for j in claim(&h, 8).await.into_iter().filter(|j| j.tenant == B) {
            *got.entry(group(&j)).or_default() += 1;
        }
    }
    // A quarter and three quarters of B's, give or take the one pick a
    // turn may lead by.
    let b = got["w1"] + got["w3"];
    assert!(b >= 40, "{got:?}");
    assert!(got["w1"].abs_diff(b / 4) <= 1, "{got:?}");

    // Concurrency keys stand for fairness keys: c1's backlog first, yet
    // c2 has its turn (a claim of c's alone: it is new, so due).
    let concurrent = |id: &str, key: &str| NewJob {
        concurrency_key: Some(key.into()),
        concurrency_limit: Some(50),
        ..job_of("c", id)
    };
    h.store.tenant_insert("c").await.unwrap();
    let mut jobs: Vec<NewJob> = (0..20)
        .map(|i| concurrent(&format!("c1-{i:02}"), "c1"))
        .collect();
    jobs.extend((0..20).map(|i| concurrent(&format!("c2-{i:02}"), "c2")));
    insert_all(&h, jobs).await;
    let only_c = ClaimParams {
        owner: "r1".into(),
        queues: None,
        limit: 4,
        lease_ms: 30_000,
        only_tenants: Some(vec!["c".to_string()]),
        begin_each: u32::MAX,
        caps: Default::default(),
    };
    let got = h.store.job_claim(only_c).await.unwrap().jobs;
    let mut ids: Vec<&str> = got.iter().map(|j| j.id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, ["c1-00", "c1-01", "c2-00", "c2-01"]);
    assert_eq!(got[0].fair_key.as_deref().map(|k| &k[..1]), Some("c"));
}

/// Within a tenant, a key whose attempts take 100 times as long has the
/// same share of the runners' time as a light one, not 100 times more.
pub(super) async fn fairness_keys_share_runner_time_not_starts(h: Harness) {
    setup(&h).await;
    let mut jobs: Vec<NewJob> = (0..100)
        .map(|i| keyed(A, &format!("heavy-{i:04}"), Some("heavy"), None))
        .collect();
    jobs.extend((0..2_000).map(|i| keyed(A, &format!("light-{i:04}"), Some("light"), None)));
    insert_all(&h, jobs).await;
    let took = |j: &ClaimedJob| {
        let key = j.fair_key.clone().expect("a keyed job says its key");
        let us = if key == "heavy" { 10_000 } else { 100 };
        (key, us)
    };
    let (ran, starts) = run_slots(&h, took, 100_000).await;
    let light = share_of(&ran, "light");
    assert!(
        (light - 0.5).abs() <= 0.05,
        "light had {light:.3} of the runner time (fair: 0.5); runner µs {ran:?}, starts {starts:?}"
    );
}

/// A time in the past is now, and buys no place in the line.
pub(super) async fn a_run_at_in_the_past_is_now(h: Harness) {
    setup(&h).await;
    let now = h.clock.now();
    // Ids are in the order of enqueue (ULIDs), as the API makes them.
    insert(&h, new_job("j1-older")).await;
    let j = insert(
        &h,
        NewJob {
            run_at: RunAt::At(now - 3_600_000),
            ..new_job("j2-backdated")
        },
    )
    .await;
    assert_eq!(j.run_at, now);
    assert_eq!(ids(&claim(&h, 1).await), ["j1-older"]);
}

pub(super) async fn quotas_refuse_new_work(h: Harness) {
    setup(&h).await;
    put(
        &h,
        A,
        None,
        Quotas {
            max_queued: Some(2),
            max_components: Some(1),
            max_component_bytes: Some(10),
            max_task_versions: Some(2),
            ..Quotas::default()
        },
    )
    .await;
    insert(&h, new_job("q1")).await;
    insert(&h, new_job("q2")).await;
    let over = h
        .store
        .job_insert(vec![new_job("q3"), job_of(B, "b1")])
        .await
        .unwrap();
    match &over[0] {
        Err(StoreError::QuotaExceeded(e)) => assert_eq!(
            e,
            &Exceeded {
                quota: "max_queued",
                limit: 2
            }
        ),
        other => panic!("expected max_queued, got {other:?}"),
    }
    assert!(over[1].is_ok(), "B has its own quota");
    assert!(h.store.job_get(A, "q3").await.unwrap().is_none());
    // A running job is not queued: there is room again.
    claim(&h, 1).await;
    insert(&h, new_job("q3")).await;
    gauges_agree(&h, A).await;

    let comp = |digest: &str, bytes: usize| NewComponent {
        tenant: A.into(),
        digest: digest.into(),
        abi: "task".into(),
        bytes: vec![0; bytes],
    };
    let too_big = h.store.component_insert(comp(DIGEST, 11)).await;
    assert!(
        matches!(&too_big, Err(StoreError::QuotaExceeded(e)) if e.quota == "max_component_bytes"),
        "{too_big:?}"
    );
    h.store.component_insert(comp(DIGEST, 4)).await.unwrap();
    assert!(
        !h.store.component_insert(comp(DIGEST, 4)).await.unwrap().1,
        "one it has already costs nothing"
    );
    let second = h.store.component_insert(comp("sha256:2", 1)).await;
    assert!(
        matches!(&second, Err(StoreError::QuotaExceeded(e)) if e.quota == "max_components" && e.limit == 1),
        "{second:?}"
    );
    let task = |name: &str| NewTask {
        tenant: A.into(),
        name: name.into(),
        digest: DIGEST.into(),
        spec: "{}".into(),
        rollout: None,
    };
    h.store.task_insert(task("t1")).await.unwrap();
    h.store.task_insert(task("t1")).await.unwrap();
    let third = h.store.task_insert(task("t2")).await;
    assert!(
        matches!(&third, Err(StoreError::QuotaExceeded(e)) if e.quota == "max_task_versions"),
        "{third:?}"
    );
}

pub(super) async fn max_running_caps_claims(h: Harness) {
    setup(&h).await;
    cap_running(&h, A, 2).await;
    insert_many(&h, A, "a", 5, 0).await;
    insert_many(&h, B, "b", 5, 0).await;
    let got = claim(&h, 10).await;
    assert_eq!((count(&got, A), count(&got, B)), (2, 5));
    assert!(claim(&h, 10).await.is_empty(), "A is at its max_running");
    let first_a = got.iter().find(|c| c.tenant == A).unwrap();
    finalize(
        &h,
        first_a,
        Action::Complete {
            output: "{}".into(),
        },
    )
    .await;
    assert_eq!(ids(&claim(&h, 10).await).len(), 1);
    gauges_agree(&h, A).await;
}

/// A claim says whether it left behind a due job that an end may free:
/// not when every tenant it saw ran out of jobs; when it was full, when a
/// tenant was at its `max_running`, and when a job waits for its
/// concurrency key. (A runner makes no claim on an end of its own after
/// one that passed nothing over.)
pub(super) async fn claims_say_whether_they_passed_jobs_over(h: Harness) {
    setup(&h).await;
    let claim_all = |limit: u32| claim_whole(&h, limit);
    let c = claim_all(10).await;
    assert!(c.jobs.is_empty() && !c.passed_over, "nothing is queued");
    insert_many(&h, A, "a", 3, 0).await;
    let c = claim_all(10).await;
    assert_eq!(c.jobs.len(), 3);
    assert!(!c.passed_over, "it took every job there was");
    insert_many(&h, B, "b", 3, 0).await;
    let c = claim_all(2).await;
    assert_eq!(c.jobs.len(), 2);
    assert!(c.passed_over, "a full claim may have left some");
    let c = claim_all(10).await;
    assert_eq!(c.jobs.len(), 1);
    assert!(!c.passed_over);
    // A runs 3: at a max_running of 3, its next job waits for an end.
    cap_running(&h, A, 3).await;
    insert_many(&h, A, "c", 1, 0).await;
    let c = claim_all(10).await;
    assert!(c.jobs.is_empty());
    assert!(c.passed_over, "A is at its max_running");
    cap_running(&h, A, 10).await;
    assert_eq!(claim_all(10).await.jobs.len(), 1);
    // A job whose concurrency key runs waits for that job's end.
    let keyed = |id: &str| NewJob {
        concurrency_key: Some("k".into()),
        ..job_of(B, id)
    };
    insert(&h, keyed("k1")).await;
    assert_eq!(ids(&claim_all(10).await.jobs), ["k1"]);
    insert(&h, keyed("k2")).await;
    let c = claim_all(10).await;
    assert!(c.jobs.is_empty());
    assert!(c.passed_over, "k2 waits for k1's key");
    gauges_agree(&h, A).await;
    gauges_agree(&h, B).await;
}

/// An insert with a claim for its tenant: the claim sees the new job and
/// takes jobs in the tenant's own order, within its quotas, and nobody
/// else's; what it leaves stays queued.
pub(super) async fn an_insert_can_claim_for_its_tenant(h: Harness) {
    setup(&h).await;
    let insert_claim = |id: &'static str, limit: u32| {
        let store = h.store.clone();
        async move {
            let claim = ClaimParams {
                owner: "r1".into(),
                queues: None,
                limit,
                lease_ms: 30_000,
                only_tenants: Some(vec![A.to_string()]),
                begin_each: u32::MAX,
                caps: Default::default(),
            };
            let handed: Arc<Mutex<Option<Vec<ClaimedJob>>>> = Arc::default();
            let h = handed.clone();
            let inserted = store
                .job_insert_claim(
                    vec![job_of(A, id)],
                    claim,
                    Box::new(move |c| *h.lock().unwrap() = Some(c)),
                )
                .await
                .unwrap();
            let got = handed.lock().unwrap().take();
            (inserted, got.expect("the claimed jobs were handed on"))
        }
    };
    insert(&h, job_of(B, "b1")).await;
    let (inserted, got) = insert_claim("a1", 2).await;
    assert!(
        matches!(&inserted[..], [Ok(Inserted::Created(j))] if j.id == "a1"),
        "{inserted:?}"
    );
    assert_eq!(ids(&got), ["a1"]);
    assert_eq!(get(&h, "a1").await.status, JobStatus::Running);
    // A job queued before it comes first in the tenant's line.
    insert(
        &h,
        NewJob {
            priority: -5,
            ..job_of(A, "a2")
        },
    )
    .await;
    let (_, got) = insert_claim("a3", 1).await;
    assert_eq!(ids(&got), ["a2"]);
    assert_eq!(get(&h, "a3").await.status, JobStatus::Queued);
    // At its max_running, the tenant's job is inserted and left queued.
    cap_running(&h, A, 2).await;
    let (inserted, got) = insert_claim("a4", 2).await;
    assert!(matches!(&inserted[..], [Ok(Inserted::Created(_))]));
    assert!(got.is_empty(), "{:?}", ids(&got));
    assert_eq!(get(&h, "a4").await.status, JobStatus::Queued);
    // B's job was never anyone's to take but a claim for B.
    let b1 = h.store.job_get(B, "b1").await.unwrap().unwrap();
    assert_eq!(b1.status, JobStatus::Queued);
    gauges_agree(&h, A).await;
    gauges_agree(&h, B).await;
}

pub(super) async fn fuel_budgets_hold_claims_until_the_window_refills(h: Harness) {
    setup(&h).await;
    // Start at the beginning of a window, so that the case does not cross one.
    let now = h.clock.now();
    h.clock.advance(WINDOW_MS - now.rem_euclid(WINDOW_MS));
    put(
        &h,
        A,
        None,
        Quotas {
            fuel_per_minute: Some(100),
            ..Quotas::default()
        },
    )
    .await;
    insert_many(&h, A, "a", 3, 0).await;
    insert_many(&h, B, "b", 3, 0).await;
    let got = claim(&h, 2).await;
    let a = got.iter().find(|c| c.tenant == A).unwrap();
    let fuel = a
        .fuel
        .expect("a budgeted tenant's claim says how much is left");
    assert_eq!((fuel.budget, fuel.used), (100, 0));
    assert!(got.iter().find(|c| c.tenant == B).unwrap().fuel.is_none());
    // The attempt overdraws the budget: it is charged all the same.
    let r = h
        .store
        .job_finalize(vec![Finalize {
            id: a.id.clone(),
            tenant: a.tenant.clone(),
            lease_token: a.lease_token.clone(),
            action: Action::Complete {
                output: "{}".into(),
            },
            attempt: attempt(a, "completed", None),
            usage: Some(Usage {
                fuel: 150,
                wall_ms: 7,
                runner_us: 7_000,
                http_requests: 0,
                http_bytes: 0,
            }),
            callbacks: None,
            names: a.names(),
            steps: Vec::new(),
            close_children: None,
        }])
        .await
        .unwrap();
    assert_eq!(r, vec![Finalized::Done(JobStatus::Completed)]);
    let got = claim(&h, 10).await;
    assert_eq!(
        (count(&got, A), count(&got, B)),
        (0, 2),
        "A's jobs wait; B's do not"
    );
    let j = get(&h, "a0001").await;
    assert_eq!(j.status, JobStatus::Queued, "waiting is not failing");
    h.clock.advance(WINDOW_MS);
    let got = claim(&h, 10).await;
    assert_eq!(count(&got, A), 2, "the next window refills it");
    let usage = h.store.tenant_usage(A).await.unwrap();
    assert_eq!(
        (usage.last.fuel, usage.last.attempts, usage.last.wall_ms),
        (150, 1, 7)
    );
    assert_eq!((usage.current.fuel, usage.current.attempts), (0, 0));
}

pub(super) async fn usage_counts_attempts_and_ended_jobs(h: Harness) {
    setup(&h).await;
    let now = h.clock.now();
    h.clock.advance(WINDOW_MS - now.rem_euclid(WINDOW_MS));
    insert_many(&h, A, "a", 4, 0).await;
    let got = claim(&h, 4).await;
    let charge = |c: &ClaimedJob, action: Action| Finalize {
        id: c.id.clone(),
        tenant: c.tenant.clone(),
        lease_token: c.lease_token.clone(),
        attempt: attempt(c, "x", None).map(|a| AttemptRecord {
            network: Some(NetworkTally {
                requests: 3,
                refused: 1,
                bytes_sent: 10,
                bytes_received: 90,
            }),
            ..a
        }),
        action,
        usage: Some(Usage {
            fuel: 10,
            wall_ms: 2,
            runner_us: 2_000,
            http_requests: 3,
            http_bytes: 100,
        }),
        callbacks: None,
        names: c.names(),
        steps: Vec::new(),
        close_children: None,
    };
    let forged = ClaimedJob {
        lease_token: "not-it".into(),
        ..got[3].clone()
    };
    let r = h
        .store
        .job_finalize(vec![
            charge(
                &got[0],
                Action::Complete {
                    output: "{}".into(),
                },
            ),
            charge(&got[1], Action::Fail { error: failure() }),
            charge(
                &got[2],
                Action::Wait {
                    waiting_for: "{}".into(),
                },
            ),
            // Fenced out, but the guest ran: its tenant pays.
            charge(&forged, Action::Cancel),
        ])
        .await
        .unwrap();
    assert_eq!(r[3], Finalized::Fenced);
    h.store.job_cancel(A, &got[2].id).await.unwrap();
    let u = h.store.tenant_usage(A).await.unwrap();
    assert_eq!(
        (u.current.fuel, u.current.attempts, u.current.wall_ms),
        (40, 4, 8)
    );
    assert_eq!(
        (u.current.completed, u.current.failed, u.current.cancelled),
        (1, 1, 1)
    );
    assert_eq!((u.current.http_requests, u.current.http_bytes), (12, 400));
    let tried = super::attempts(&h, A, &got[0].id).await;
    assert_eq!(
        tried[0]
            .network
            .map(|n| (n.requests, n.refused, n.bytes_received)),
        Some((3, 1, 90)),
        "an attempt keeps what its outbound HTTP did"
    );
    assert_eq!(
        u.jobs,
        JobGauges {
            queued: 0,
            running: 1,
            waiting: 0
        }
    );
    assert_eq!(u.current.start % WINDOW_MS, 0);
    assert_eq!(u.last.start, u.current.start - WINDOW_MS);
    gauges_agree(&h, A).await;
    let b = h.store.tenant_usage(B).await.unwrap();
    assert_eq!((b.current.fuel, b.jobs), (0, JobGauges::default()));
}

/// One attempt whose record the store refuses (here: a log past what the
/// store keeps) is written without its log; the others in its batch are
/// written as they are.
pub(super) async fn a_bad_attempt_record_does_not_fail_its_batch(h: Harness) {
    setup(&h).await;
    insert_many(&h, A, "a", 3, 0).await;
    insert(&h, job_of(B, "b")).await;
    let mut got = claim(&h, 4).await;
    got.sort_by(|x, y| x.id.cmp(&y.id));
    let huge = AttemptLog {
        lines: vec![LogLine {
            at_ms: 0.0,
            level: Level::Info,
            source: Source::Guest,
            message: "x".repeat(5 << 20),
        }],
        dropped_lines: 0,
        dropped_bytes: 0,
    };
    let batch = got
        .iter()
        .map(|c| {
            let mut a = attempt(c, "completed", None);
            if c.id == "a0001" {
                a.as_mut().unwrap().log = Some(huge.clone());
            }
            Finalize {
                id: c.id.clone(),
                tenant: c.tenant.clone(),
                lease_token: c.lease_token.clone(),
                action: Action::Complete {
                    output: "{}".into(),
                },
                attempt: a,
                usage: None,
                callbacks: None,
                names: c.names(),
                steps: Vec::new(),
                close_children: None,
            }
        })
        .collect();
    let r = h.store.job_finalize(batch).await.unwrap();
    assert_eq!(r, vec![Finalized::Done(JobStatus::Completed); 4]);
    for c in &got {
        assert_eq!(
            h.store
                .job_get(&c.tenant, &c.id)
                .await
                .unwrap()
                .unwrap()
                .status,
            JobStatus::Completed
        );
    }
    let bad = attempts(&h, A, "a0001").await;
    let log = bad[0].log.as_ref().expect("a note instead of the log");
    assert!(
        log.lines[0].message.contains("could not be stored"),
        "{log:?}"
    );
    assert!(attempts(&h, A, "a0000").await[0].log.is_none());
    gauges_agree(&h, A).await;
}

pub(super) async fn snoozes_are_counted(h: Harness) {
    setup(&h).await;
    insert(&h, new_job("j")).await;
    for n in 0..3 {
        let c = claim(&h, 1).await.pop().unwrap();
        assert_eq!(c.snoozes, n);
        finalize(&h, &c, Action::Snooze { delay_ms: 0 }).await;
    }
    assert_eq!(claim(&h, 1).await[0].snoozes, 3);
}

pub(super) async fn pages_are_bounded(h: Harness) {
    setup(&h).await;
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(10_000));
    for i in 0..5 {
        insert(
            &h,
            NewJob {
                input: big.clone(),
                ..new_job(&format!("j{i}"))
            },
        )
        .await;
    }
    let page = h
        .store
        .job_list(JobQuery {
            tenant: Some(A.into()),
            limit: 5,
            max_bytes: 25_000,
            ..JobQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(page.jobs.len(), 2, "two fit in the page's bytes");
    assert!(page.cut);
    let page = h
        .store
        .job_list(JobQuery {
            tenant: Some(A.into()),
            limit: 5,
            max_bytes: 1,
            ..JobQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(page.jobs.len(), 1, "one at least");

    let c = claim(&h, 1).await.pop().unwrap();
    let mut c = c;
    for _ in 0..4 {
        finalize(
            &h,
            &c,
            Action::Retry {
                delay_ms: 0,
                error: failure(),
            },
        )
        .await;
        c = claim(&h, 5)
            .await
            .into_iter()
            .find(|x| x.id == c.id)
            .expect("retried at once");
    }
    let page = |after: Option<u32>| AttemptQuery {
        tenant: A.into(),
        job_id: c.id.clone(),
        after,
        limit: 2,
    };
    let numbers = |list: Vec<AttemptRecord>| list.iter().map(|a| a.attempt).collect::<Vec<_>>();
    assert_eq!(
        numbers(h.store.attempt_list(page(None)).await.unwrap()),
        [1, 2]
    );
    assert_eq!(
        numbers(h.store.attempt_list(page(Some(2))).await.unwrap()),
        [3, 4]
    );
}
