//! Conformance cases of workflow definitions: versioned one after the
//! other per name, read by version or newest, listed newest of each, and
//! counted with the tenant's task versions against `max_task_versions`.

use super::tenants::put;
use super::*;
use crate::quota::Quotas;

fn def(tenant: &str, name: &str, spec: &str) -> NewWorkflow {
    NewWorkflow {
        tenant: tenant.into(),
        name: name.into(),
        spec: spec.into(),
    }
}

pub(super) async fn workflow_versions_are_kept_and_counted(h: Harness) {
    setup(&h).await;
    let s = &h.store;
    let t0 = h.clock.now();
    let v1 = s
        .workflow_insert(def(A, "orders", "{\"v\":1}"))
        .await
        .unwrap();
    assert_eq!(
        (v1.version, v1.created_at, v1.spec.as_str()),
        (1, t0, "{\"v\":1}")
    );
    h.clock.advance(5);
    let v2 = s
        .workflow_insert(def(A, "orders", "{\"v\":2}"))
        .await
        .unwrap();
    assert_eq!((v2.version, v2.created_at), (2, t0 + 5));
    s.workflow_insert(def(A, "billing", "{}")).await.unwrap();
    s.workflow_insert(def(B, "orders", "{}")).await.unwrap();
    assert_eq!(
        s.workflow_get(A, "orders", None).await.unwrap(),
        Some(v2.clone())
    );
    assert_eq!(
        s.workflow_get(A, "orders", Some(1)).await.unwrap(),
        Some(v1)
    );
    assert_eq!(s.workflow_get(A, "orders", Some(3)).await.unwrap(), None);
    assert_eq!(s.workflow_get(A, "nope", None).await.unwrap(), None);
    let listed: Vec<(String, i32)> = s
        .workflow_list(Some(A))
        .await
        .unwrap()
        .into_iter()
        .map(|w| (w.name, w.version))
        .collect();
    assert_eq!(listed, [("billing".into(), 1), ("orders".into(), 2)]);
    assert_eq!(
        s.workflow_get(B, "orders", None)
            .await
            .unwrap()
            .unwrap()
            .version,
        1
    );

    // Task and workflow versions count together: A has 3 workflow
    // versions, so with a quota of 4 one task fits and nothing more.
    put(
        &h,
        A,
        None,
        Quotas {
            max_task_versions: Some(4),
            ..Quotas::default()
        },
    )
    .await;
    s.task_insert(NewTask {
        tenant: A.into(),
        name: "t".into(),
        digest: DIGEST.into(),
        spec: "{}".into(),
        rollout: None,
    })
    .await
    .unwrap();
    for over in [
        s.workflow_insert(def(A, "orders", "{}")).await.map(|_| ()),
        s.task_insert(NewTask {
            tenant: A.into(),
            name: "t".into(),
            digest: DIGEST.into(),
            spec: "{}".into(),
            rollout: None,
        })
        .await
        .map(|_| ()),
    ] {
        assert!(
            matches!(&over, Err(StoreError::QuotaExceeded(e)) if e.quota == "max_task_versions"),
            "{over:?}"
        );
    }
    // Another tenant's room is its own.
    s.workflow_insert(def(B, "orders", "{}")).await.unwrap();
}

fn stage(seq: u32, kind: StepKind, name: &str) -> StepRecord {
    StepRecord {
        seq,
        kind,
        name: name.into(),
        task: TaskRef {
            name: format!("t-{name}"),
            version: 1,
            digest: DIGEST.into(),
        },
        max_attempts: 2,
        config: StepConfig {
            budget_ms: Some(1_000),
            ..StepConfig::default()
        },
        status: if seq == 0 {
            StepStatus::Active
        } else {
            StepStatus::Pending
        },
        attempts: 0,
        output: None,
        error: None,
        started_at: None,
        finished_at: None,
    }
}

fn start(id: &str) -> WorkflowStart {
    WorkflowStart {
        id: id.into(),
        tenant: A.into(),
        queue: "default".into(),
        workflow: "wf".into(),
        version: 1,
        steps: vec![
            stage(0, StepKind::Step, "a"),
            stage(1, StepKind::Step, "b"),
            stage(2, StepKind::OnError, "e"),
        ],
    }
}

fn statuses(rows: &[StepRecord]) -> Vec<(&str, StepStatus, u32)> {
    rows.iter()
        .map(|r| (r.name.as_str(), r.status, r.attempts))
        .collect()
}

/// A workflow job's stages: written with its insert (an idempotent repeat
/// starts nothing twice), its first stage claimed, the next one taken
/// over with the end that completed it (rows and job in one write, fenced
/// like any end), and gone with the job when it is pruned.
pub(super) async fn workflow_stages_move_with_their_ends(h: Harness) {
    setup(&h).await;
    let s = &h.store;
    let mut job = new_job("w");
    job.idempotency = Some(Idempotency {
        key: "k".into(),
        body_hash: "h".into(),
    });
    let written = s
        .apply(vec![
            Write::JobInsert(job.clone()),
            Write::WorkflowStart(start("w")),
        ])
        .await
        .unwrap();
    assert!(matches!(written[1], Written::WorkflowStarted(true)));
    // A repeat answers the job, and starts nothing.
    let mut again = job.clone();
    again.id = "w2".into();
    let written = s
        .apply(vec![
            Write::JobInsert(again),
            Write::WorkflowStart(start("w2")),
        ])
        .await
        .unwrap();
    assert!(matches!(written[1], Written::WorkflowStarted(false)));
    assert!(s.job_steps("w2").await.unwrap().is_empty());
    let rows = s.job_steps("w").await.unwrap();
    assert_eq!(
        statuses(&rows),
        [
            ("a", StepStatus::Active, 0),
            ("b", StepStatus::Pending, 0),
            ("e", StepStatus::Pending, 0)
        ]
    );
    assert_eq!(rows[0].started_at, Some(h.clock.now()));
    assert_eq!(rows[0].config.budget_ms, Some(1_000));
    assert_eq!(rows[2].kind, StepKind::OnError);

    // The claim runs the first stage, on the job's input.
    let c = claim(&h, 1).await.remove(0);
    assert_eq!(c.task.name, "t-a");
    assert_eq!(c.input, r#"{"n":1}"#);
    assert_eq!(c.own_task.as_deref(), Some("t"));
    let steps = vec![
        rows[0].write(
            StepStatus::Completed,
            Some(1),
            Some("{\"x\":1}".into()),
            None,
        ),
        rows[1].activate(),
    ];
    let advance = Action::Advance {
        task: rows[1].task.clone(),
        input: r#"{"n":1,"x":1}"#.into(),
        max_attempts: 2,
        error: None,
        cancelled: false,
        cancel_wins: true,
    };
    // Fenced out (another token): neither the job nor its rows move.
    let mut f = Finalize {
        names: c.names(),
        id: c.id.clone(),
        tenant: c.tenant.clone(),
        lease_token: "not-the-token".into(),
        action: advance.clone(),
        attempt: attempt(&c, "completed", None),
        usage: None,
        callbacks: None,
        steps,
        close_children: None,
    };
    assert_eq!(
        s.job_finalize(vec![f.clone()]).await.unwrap(),
        [Finalized::Fenced]
    );
    assert_eq!(
        s.job_steps("w").await.unwrap()[0].status,
        StepStatus::Active
    );
    h.clock.advance(10);
    f.lease_token = c.lease_token.clone();
    assert_eq!(
        s.job_finalize(vec![f]).await.unwrap(),
        [Finalized::Done(JobStatus::Queued)]
    );
    let rows = s.job_steps("w").await.unwrap();
    assert_eq!(
        statuses(&rows),
        [
            ("a", StepStatus::Completed, 1),
            ("b", StepStatus::Active, 0),
            ("e", StepStatus::Pending, 0)
        ]
    );
    assert_eq!(rows[0].output.as_deref(), Some("{\"x\":1}"));
    assert_eq!(rows[0].finished_at, Some(h.clock.now()));
    assert_eq!(rows[1].started_at, Some(h.clock.now()));

    // The next claim runs the next stage on the merged context, its
    // attempts counted from 1 within the job's.
    let c = claim(&h, 1).await.remove(0);
    assert_eq!((c.task.name.as_str(), c.attempt, c.attempts), ("t-b", 1, 2));
    assert_eq!(c.input, r#"{"n":1,"x":1}"#);
    let error = JobError::new(ErrorKind::TaskFailed, "no");
    let steps = vec![
        rows[1].write(StepStatus::Failed, Some(1), None, Some(error.clone())),
        rows[2].write(StepStatus::Skipped, None, None, None),
    ];
    let end = Finalize {
        names: c.names(),
        id: c.id.clone(),
        tenant: c.tenant.clone(),
        lease_token: c.lease_token.clone(),
        action: Action::Conclude {
            output: r#"{"n":1,"x":1}"#.into(),
            error: Some(error),
        },
        attempt: attempt(&c, "failed", None),
        usage: None,
        callbacks: None,
        steps,
        close_children: None,
    };
    assert_eq!(
        s.job_finalize(vec![end]).await.unwrap(),
        [Finalized::Done(JobStatus::Failed)]
    );
    let j = get(&h, "w").await;
    assert_eq!(j.output.as_deref(), Some(r#"{"n":1,"x":1}"#));
    assert_eq!(j.error.as_ref().map(|e| e.message.as_str()), Some("no"));
    let rows = s.job_steps("w").await.unwrap();
    assert_eq!(
        rows[1].error.as_ref().map(|e| e.code.as_str()),
        Some("task_failed")
    );
    assert_eq!(rows[2].status, StepStatus::Skipped);

    // Re-driven at its failed stage: that stage active, the job queued on it.
    let restart = vec![StepWrite {
        attempts: Some(0),
        ..rows[1].activate()
    }];
    let r = Redrive {
        id: "w".into(),
        task: None,
        attempts: 2,
        stage: Some(Box::new((
            rows[1].task.clone(),
            r#"{"n":1,"x":1}"#.into(),
            restart,
        ))),
        cache_key: None,
    };
    let j = s
        .job_redrive(A, vec![r])
        .await
        .unwrap()
        .pop()
        .unwrap()
        .unwrap();
    assert_eq!(j.status, JobStatus::Queued);
    let c = claim(&h, 1).await.remove(0);
    assert_eq!((c.task.name.as_str(), c.attempt), ("t-b", 1));
    assert_eq!(c.input, r#"{"n":1,"x":1}"#);
    assert_eq!(
        s.job_steps("w").await.unwrap()[1].status,
        StepStatus::Active
    );
    finalize(
        &h,
        &c,
        Action::Complete {
            output: "{}".into(),
        },
    )
    .await;

    // Pruned, the job's stages go with it.
    h.clock.advance(10_000);
    let pruned = s
        .job_prune(PruneParams {
            after_id: String::new(),
            below_id: "~".into(),
            scan: 100,
            completed_before: Some(h.clock.now()),
            failed_before: Some(h.clock.now()),
        })
        .await
        .unwrap();
    assert_eq!(pruned.jobs, 1);
    assert!(s.job_steps("w").await.unwrap().is_empty());
}

/// A job of one task has no stage rows until a fallback takes over; then
/// the end that hands over makes them (the task failed, the fallback
/// active), and the fallback's end settles its own.
pub(super) async fn a_fallbacks_stages_are_made_as_it_takes_over(h: Harness) {
    setup(&h).await;
    let s = &h.store;
    insert(&h, new_job("j")).await;
    assert!(s.job_steps("j").await.unwrap().is_empty());
    let c = claim(&h, 1).await.remove(0);
    let fb = TaskRef {
        name: "fb".into(),
        version: 1,
        digest: DIGEST.into(),
    };
    let mut own = stage(0, StepKind::Task, "t");
    own.task = task_ref();
    let mut next = stage(1, StepKind::Fallback, "fb");
    next.task = fb.clone();
    let error = JobError::new(ErrorKind::TaskFailed, "down");
    let steps = vec![
        StepWrite {
            row: Some(Box::new(own.clone())),
            ..own.write(StepStatus::Failed, Some(1), None, Some(error.clone()))
        },
        StepWrite {
            row: Some(Box::new(next.clone())),
            ..next.activate()
        },
    ];
    let handover = Finalize {
        names: c.names(),
        id: c.id.clone(),
        tenant: c.tenant.clone(),
        lease_token: c.lease_token.clone(),
        action: Action::Fallback {
            task: fb,
            input: "{}".into(),
            max_attempts: 2,
            error,
        },
        attempt: attempt(&c, "fallback", None),
        usage: None,
        callbacks: None,
        steps,
        close_children: None,
    };
    s.job_finalize(vec![handover]).await.unwrap();
    let rows = s.job_steps("j").await.unwrap();
    assert_eq!(
        statuses(&rows),
        [("t", StepStatus::Failed, 1), ("fb", StepStatus::Active, 0)]
    );
    assert_eq!(rows[0].kind, StepKind::Task);
    assert_eq!(
        rows[0].error.as_ref().map(|e| e.message.as_str()),
        Some("down")
    );
    assert_eq!(rows[1].started_at, Some(h.clock.now()));
    // The fallback's end: its row, made already, is settled.
    let c = claim(&h, 1).await.remove(0);
    let done = vec![StepWrite {
        row: Some(Box::new(next.clone())),
        ..next.write(StepStatus::Completed, Some(1), None, None)
    }];
    let end = Finalize {
        names: c.names(),
        id: c.id.clone(),
        tenant: c.tenant.clone(),
        lease_token: c.lease_token.clone(),
        action: Action::Complete {
            output: "{}".into(),
        },
        attempt: attempt(&c, "completed", None),
        usage: None,
        callbacks: None,
        steps: done,
        close_children: None,
    };
    s.job_finalize(vec![end]).await.unwrap();
    let rows = s.job_steps("j").await.unwrap();
    assert_eq!(
        statuses(&rows),
        [
            ("t", StepStatus::Failed, 1),
            ("fb", StepStatus::Completed, 1)
        ]
    );
    assert!(rows[1].started_at.is_some(), "its start is kept");
}
