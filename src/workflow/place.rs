//! Which stage of a job each of its attempts ran in, for the pages that
//! show a job as a timeline of its stages. An attempt record does not
//! keep its stage (the hot path writes nothing for a reader's sake); its
//! stage is found again from what both records do keep: the stage's
//! pinned task (name, version and digest) and its start and end, since a
//! job runs one stage at a time and each attempt inside its stage's span.

use crate::store::{AttemptRecord, StepRecord};

/// The `seq` of the stage each attempt ran in, in the attempts' order:
/// of the stages whose pinned task the attempt ran, the one whose span
/// holds the attempt's start and end; failing that (a stage redriven
/// later starts its span again), the latest that began at or before the
/// attempt. `None` when no stage ran its task (a job with no stages).
pub fn stages_of(steps: &[StepRecord], attempts: &[AttemptRecord]) -> Vec<Option<u32>> {
    attempts.iter().map(|a| stage_of(steps, a)).collect()
}

fn stage_of(steps: &[StepRecord], a: &AttemptRecord) -> Option<u32> {
    let ran = || steps.iter().filter(|s| s.task == a.task);
    let holds = |s: &&StepRecord| {
        s.started_at.is_some_and(|t| t <= a.started_at)
            && s.finished_at.is_none_or(|t| a.finished_at <= t)
    };
    let began_before = |s: &&StepRecord| s.started_at.is_some_and(|t| t <= a.started_at);
    ran()
        .filter(holds)
        .max_by_key(|s| (s.started_at, s.seq))
        .or_else(|| {
            ran()
                .filter(began_before)
                .max_by_key(|s| (s.started_at, s.seq))
        })
        .or_else(|| ran().next())
        .map(|s| s.seq)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{StepKind, StepStatus, TaskRef};

    fn task(name: &str) -> TaskRef {
        TaskRef {
            name: name.into(),
            version: 1,
            digest: format!("sha256:{name}"),
        }
    }

    fn step(seq: u32, name: &str, span: Option<(i64, Option<i64>)>) -> StepRecord {
        StepRecord {
            seq,
            kind: StepKind::Step,
            name: format!("s{seq}"),
            task: task(name),
            max_attempts: 3,
            config: Default::default(),
            status: StepStatus::Completed,
            attempts: 1,
            output: None,
            error: None,
            started_at: span.map(|s| s.0),
            finished_at: span.and_then(|s| s.1),
        }
    }

    fn attempt(name: &str, started: i64, finished: i64) -> AttemptRecord {
        AttemptRecord {
            attempt: 1,
            task: task(name),
            started_at: started,
            finished_at: finished,
            outcome: "completed".into(),
            error: None,
            fuel_used: 0,
            peak_memory_bytes: 0,
            log: None,
            network: None,
        }
    }

    #[test]
    fn each_attempt_goes_to_the_stage_that_ran_its_task_at_its_time() {
        // The same task in steps 0 and 2, another in 1; step 3 (on_error)
        // never started; step 2 still runs.
        let steps = [
            step(0, "a", Some((100, Some(200)))),
            step(1, "b", Some((200, Some(300)))),
            step(2, "a", Some((300, None))),
            step(3, "c", None),
        ];
        let cases: &[(&str, i64, i64, Option<u32>)] = &[
            ("a", 100, 150, Some(0)),
            ("a", 150, 200, Some(0)),
            ("b", 200, 200, Some(1)),
            ("b", 250, 300, Some(1)),
            // The same millisecond as the next stage's start: its own task decides.
            ("a", 300, 300, Some(2)),
            ("a", 400, 450, Some(2)),
            // Outside every span of its task (a redriven stage began again
            // later): the latest of its task that began before it.
            ("b", 350, 360, Some(1)),
            // Before any stage of its task began: the first of them.
            ("a", 50, 60, Some(0)),
            // A task no stage ran.
            ("z", 100, 150, None),
            ("c", 500, 510, Some(3)),
        ];
        for &(name, started, finished, want) in cases {
            let got = stages_of(&steps, &[attempt(name, started, finished)]);
            assert_eq!(got, vec![want], "{name} {started}..{finished}");
        }
    }

    #[test]
    fn a_job_with_no_stages_places_nothing() {
        assert_eq!(stages_of(&[], &[attempt("a", 1, 2)]), vec![None]);
    }
}
