//! Conformance cases of a job's attempts: each reads back as it was
//! written, whether a row of `attempts` keeps it (an attempt after which
//! the job runs again) or the job's own row does (the one that ended it).

use super::*;
use crate::attempt_log::{AttemptLog, Level, LogLine, Source};
use crate::network_tally::NetworkTally;

/// An attempt of `c` with every field set, told apart by `fuel`.
fn full(c: &ClaimedJob, outcome: &str, error: Option<JobError>, fuel: u64) -> AttemptRecord {
    AttemptRecord {
        attempt: c.attempts,
        task: c.task.clone(),
        started_at: c.started_at,
        finished_at: c.started_at + 7,
        outcome: outcome.into(),
        error,
        fuel_used: fuel,
        peak_memory_bytes: 1 << 20,
        log: Some(AttemptLog {
            lines: vec![LogLine {
                at_ms: 1.5,
                level: Level::Warn,
                source: Source::Stderr,
                message: format!("attempt {}", c.attempts),
            }],
            dropped_lines: 2,
            dropped_bytes: 30,
        }),
        network: Some(NetworkTally {
            requests: 2,
            refused: 1,
            bytes_sent: 5,
            bytes_received: 9,
        }),
    }
}

/// Ends `c`'s attempt as `action` says, recording `a`.
async fn end(h: &Harness, c: &ClaimedJob, action: Action, a: &AttemptRecord) -> Finalized {
    finalize_recording(h, c, action, Some(a.clone())).await
}

async fn claim_one(h: &Harness, id: &str) -> ClaimedJob {
    claim(h, 10)
        .await
        .into_iter()
        .find(|c| c.id == id)
        .expect("the job is due")
}

fn retry() -> Action {
    Action::Retry {
        delay_ms: 0,
        error: failure(),
    }
}

pub(super) async fn attempts_read_back_as_written(h: Harness) {
    setup(&h).await;
    insert(&h, new_job("j")).await;
    // Two attempts after which the job runs again, then the one ending it.
    let mut written = Vec::new();
    for fuel in [100, 200] {
        let c = claim_one(&h, "j").await;
        let a = full(&c, "retried", Some(failure()), fuel);
        assert_eq!(
            end(&h, &c, retry(), &a).await,
            Finalized::Done(JobStatus::Queued)
        );
        written.push(a);
    }
    let c = claim_one(&h, "j").await;
    let a = full(&c, "completed", None, 300);
    let done = Action::Complete {
        output: "{}".into(),
    };
    assert_eq!(
        end(&h, &c, done.clone(), &a).await,
        Finalized::Done(JobStatus::Completed)
    );
    written.push(a);
    assert_eq!(attempts(&h, A, "j").await, written);

    // Pages cross from the rows of `attempts` to the job's own.
    let page = |after: Option<u32>, limit: u32| {
        let store = h.store.clone();
        async move {
            store
                .attempt_list(AttemptQuery {
                    tenant: A.into(),
                    job_id: "j".into(),
                    after,
                    limit,
                })
                .await
                .unwrap()
                .iter()
                .map(|a| a.attempt)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(page(None, 2).await, [1, 2]);
    assert_eq!(page(Some(1), 1).await, [2]);
    assert_eq!(page(Some(2), 5).await, [3]);
    assert!(page(Some(3), 5).await.is_empty());
    assert!(
        attempts(&h, B, "j").await.is_empty(),
        "another tenant reads none of them"
    );

    // A failed job redriven: the attempt that failed it is still there
    // once the next series' attempt ends the job again.
    insert(&h, new_job("f")).await;
    let c = claim_one(&h, "f").await;
    let failed = full(&c, "failed", Some(failure()), 400);
    end(&h, &c, Action::Fail { error: failure() }, &failed).await;
    redrive_one(&h, "f", 1).await;
    let c = claim_one(&h, "f").await;
    let completed = full(&c, "completed", None, 500);
    end(&h, &c, done, &completed).await;
    assert_eq!(attempts(&h, A, "f").await, [failed, completed]);

    // A retry that a pending cancel turns into the job's end.
    insert(&h, new_job("x")).await;
    let c = claim_one(&h, "x").await;
    h.store.job_cancel(A, "x").await.unwrap();
    let cancelled = full(&c, "cancelled", Some(failure()), 600);
    assert_eq!(
        end(&h, &c, retry(), &cancelled).await,
        Finalized::Done(JobStatus::Cancelled)
    );
    assert_eq!(attempts(&h, A, "x").await, [cancelled]);
}
