//! Conformance cases of cron schedules: a put made against a rev that
//! moved on is refused, and takes a slot's job with it; schedules are due
//! by their next slot, at once while something waits, never while paused.

use super::*;

fn put(tenant: &str, name: &str, next_at: Option<Millis>) -> SchedulePut {
    SchedulePut {
        tenant: tenant.into(),
        name: name.into(),
        spec: r#"{"cron":"* * * * * *","task":"t"}"#.into(),
        enabled: true,
        state: ScheduleState {
            next_at,
            ..ScheduleState::default()
        },
        rev: None,
    }
}

pub(super) async fn schedules_move_on_against_their_rev(h: Harness) {
    setup(&h).await;
    let s = &h.store;
    let t0 = h.clock.now();
    let a = s
        .schedule_put(put(A, "tick", Some(t0 + 1_000)))
        .await
        .unwrap();
    assert_eq!((a.rev, a.created_at, a.updated_at), (1, t0, t0));
    assert!(a.enabled);
    assert_eq!(s.schedule_get(A, "tick").await.unwrap(), Some(a.clone()));
    // A second create of the same name is refused; another tenant's is its own.
    let again = s.schedule_put(put(A, "tick", None)).await;
    assert!(matches!(again, Err(StoreError::Conflict(_))), "{again:?}");
    s.schedule_put(put(B, "tick", Some(t0 + 5_000)))
        .await
        .unwrap();
    s.schedule_put(put(A, "other", None)).await.unwrap();
    let names: Vec<String> = s
        .schedule_list(Some(A))
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(names, ["other", "tick"]);

    // A write against its rev moves it on, with every field of its state.
    h.clock.advance(1_000);
    let mut w = a.put();
    w.state = ScheduleState {
        next_at: Some(t0 + 2_000),
        last_slot: Some(t0 + 1_000),
        last_job: Some("j1".into()),
        pending: None,
        pending_slot: None,
        buffered: Some(t0 + 500),
        fired: 3,
        skipped: 2,
        last_error: Some("why".into()),
    };
    let b = s.schedule_put(w.clone()).await.unwrap();
    assert_eq!((b.rev, b.created_at, b.updated_at), (2, t0, t0 + 1_000));
    assert_eq!(b.state, w.state);
    assert_eq!(s.schedule_get(A, "tick").await.unwrap(), Some(b.clone()));
    // The same write again is against a rev that moved on: refused, and
    // the slot's job that goes with it is not written.
    let mut job = new_job("slot-job");
    job.unique_key = Some("schedule:tick:1".into());
    let stale = s
        .apply(vec![Write::JobInsert(job.clone()), Write::SchedulePut(w)])
        .await;
    assert!(matches!(stale, Err(StoreError::Conflict(_))), "{stale:?}");
    assert!(s.job_get(A, "slot-job").await.unwrap().is_none());
    assert_eq!(s.schedule_get(A, "tick").await.unwrap(), Some(b.clone()));
    // Against the rev it has, the job and the move land together.
    let mut w = b.put();
    w.state.last_job = Some("slot-job".into());
    let done = s
        .apply(vec![Write::JobInsert(job), Write::SchedulePut(w)])
        .await
        .unwrap();
    assert!(matches!(
        done[0],
        Written::JobInserted(Inserted::Created(_))
    ));
    let Written::SchedulePut(c) = &done[1] else {
        panic!("{done:?}")
    };
    assert_eq!(c.rev, 3);
    assert!(s.job_get(A, "slot-job").await.unwrap().is_some());
    // A delete removes it (its jobs stay), once.
    assert!(s.schedule_delete(A, "tick").await.unwrap());
    assert!(!s.schedule_delete(A, "tick").await.unwrap());
    assert!(s.schedule_get(A, "tick").await.unwrap().is_none());
    assert!(s.job_get(A, "slot-job").await.unwrap().is_some());
    assert_eq!(s.schedule_get(B, "tick").await.unwrap().unwrap().rev, 1);
}

pub(super) async fn schedules_are_due_by_slot_and_waits(h: Harness) {
    setup(&h).await;
    let s = &h.store;
    let t0 = h.clock.now();
    assert_eq!(s.schedule_next_due().await.unwrap(), None);
    s.schedule_put(put(A, "later", Some(t0 + 3_000)))
        .await
        .unwrap();
    s.schedule_put(put(B, "soon", Some(t0 + 1_000)))
        .await
        .unwrap();
    s.schedule_put(put(A, "never", None)).await.unwrap();
    let mut paused = put(A, "paused", Some(t0));
    paused.enabled = false;
    s.schedule_put(paused).await.unwrap();
    assert_eq!(s.schedule_next_due().await.unwrap(), Some(t0 + 1_000));
    assert!(due(s, t0 + 999).await.is_empty());
    assert_eq!(due(s, t0 + 1_000).await, ["soon"]);
    assert_eq!(due(s, t0 + 5_000).await, ["soon", "later"]);
    assert_eq!(s.schedule_due(t0 + 5_000, 1).await.unwrap().len(), 1);
    // A waiting `before` job makes it due at once, whatever its next slot.
    let later = s.schedule_get(A, "later").await.unwrap().unwrap();
    let mut w = later.put();
    w.state.pending = Some("before-job".into());
    w.state.pending_slot = Some(t0 + 3_000);
    s.schedule_put(w).await.unwrap();
    assert_eq!(due(s, t0).await, ["later"]);
    assert_eq!(s.schedule_next_due().await.unwrap(), Some(0));
    // Paused, nothing of it is due.
    let later = s.schedule_get(A, "later").await.unwrap().unwrap();
    let mut w = later.put();
    w.enabled = false;
    s.schedule_put(w).await.unwrap();
    assert!(due(s, t0).await.is_empty());
    assert_eq!(s.schedule_next_due().await.unwrap(), Some(t0 + 1_000));
}

/// The names of the schedules due at `at`, the longest due first.
async fn due(s: &Arc<dyn JobStore>, at: Millis) -> Vec<String> {
    s.schedule_due(at, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect()
}

pub(super) async fn a_tenant_has_at_most_max_schedules(h: Harness) {
    setup(&h).await;
    for i in 0..MAX_SCHEDULES {
        h.store
            .schedule_put(put(A, &format!("s{i}"), None))
            .await
            .unwrap();
    }
    let over = h.store.schedule_put(put(A, "one-more", None)).await;
    assert!(
        matches!(&over, Err(StoreError::QuotaExceeded(e)) if e.quota == "schedules"),
        "{over:?}"
    );
    // Replacing one is no new one; another tenant has its own room.
    let s0 = h.store.schedule_get(A, "s0").await.unwrap().unwrap();
    h.store.schedule_put(s0.put()).await.unwrap();
    h.store
        .schedule_put(put(B, "one-more", None))
        .await
        .unwrap();
}
