//! Where a workflow job goes after an attempt of its active stage, decided
//! from its stage rows alone (they pin every task and setting): the next
//! step on the merged context, the step's fallback, the `on_error` or
//! `on_cancel` chain, or the job's end. No I/O: the executor reads the
//! rows, and writes what this answers with the attempt's end.

use crate::job::{ErrorKind, JobError};
use crate::store::{Action, StepKind, StepRecord, StepStatus, StepWrite};
use serde_json::{json, Map, Value};

/// A workflow job's stages as its attempt found them.
#[derive(Debug, Clone)]
pub struct Plan {
    rows: Vec<StepRecord>,
    /// The active stage.
    cur: usize,
}

/// Which chain a stage is in: a fallback is in its step's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chain {
    Main,
    OnError,
    OnCancel,
}

impl Plan {
    /// The plan of a job with these rows; `None` when none is active (a
    /// job of one task, or rows that do not match the job's stage).
    pub fn of(rows: Vec<StepRecord>) -> Option<Plan> {
        // A job of one task keeps rows of its fallbacks, and no plan.
        if !rows.iter().any(|r| r.kind == StepKind::Step) {
            return None;
        }
        let cur = rows.iter().position(|r| r.status == StepStatus::Active)?;
        Some(Plan { rows, cur })
    }

    pub fn current(&self) -> &StepRecord {
        &self.rows[self.cur]
    }

    fn chain_of(&self, i: usize) -> Chain {
        let mut i = i;
        while self.rows[i].kind == StepKind::Fallback && i > 0 {
            i -= 1;
        }
        match self.rows[i].kind {
            StepKind::OnError => Chain::OnError,
            StepKind::OnCancel => Chain::OnCancel,
            StepKind::Step | StepKind::Fallback | StepKind::Task => Chain::Main,
        }
    }

    /// The context the active stage was given, from its input: a step
    /// gets the context itself, a chain step `{"context", …}`, a fallback
    /// `{"input": what its step got, "error"}`.
    pub fn context(&self, input: &str) -> Value {
        let mut v: Value = serde_json::from_str(input).unwrap_or(Value::Null);
        let mut i = self.cur;
        while self.rows[i].kind == StepKind::Fallback && i > 0 {
            v = v.get("input").cloned().unwrap_or(Value::Null);
            i -= 1;
        }
        match self.rows[i].kind {
            StepKind::OnError | StepKind::OnCancel => {
                v.get("context").cloned().unwrap_or(Value::Null)
            }
            _ => v,
        }
    }

    /// The next primary stage after the active one in its chain.
    fn next_in_chain(&self) -> Option<&StepRecord> {
        let chain = self.chain_of(self.cur);
        self.rows[self.cur + 1..]
            .iter()
            .enumerate()
            .find(|(_, r)| r.kind != StepKind::Fallback)
            .map(|(off, r)| (self.cur + 1 + off, r))
            .filter(|(i, _)| self.chain_of(*i) == chain)
            .map(|(_, r)| r)
    }

    fn first_of(&self, kind: StepKind) -> Option<&StepRecord> {
        self.rows.iter().find(|r| r.kind == kind)
    }

    /// The error the main chain failed with, which the `on_error` chain
    /// answers and the job ends with.
    fn main_error(&self) -> JobError {
        self.rows
            .iter()
            .enumerate()
            .filter(|(i, r)| self.chain_of(*i) == Chain::Main && r.status == StepStatus::Failed)
            .filter_map(|(_, r)| r.error.clone())
            .next_back()
            .unwrap_or_else(|| JobError::new(ErrorKind::TaskFailed, "a step failed"))
    }

    /// Every stage still pending, skipped: the job will not reach them.
    fn skip_rest(&self, writes: &mut Vec<StepWrite>, from: usize) {
        for r in &self.rows[from..] {
            if r.status == StepStatus::Pending {
                writes.push(r.write(StepStatus::Skipped, None, None, None));
            }
        }
    }

    /// Skips the pending stages of `chain` and of the fallbacks in it.
    fn skip_chain(&self, writes: &mut Vec<StepWrite>, chain: Chain) {
        for (i, r) in self.rows.iter().enumerate() {
            if i != self.cur && r.status == StepStatus::Pending && self.chain_of(i) == chain {
                writes.push(r.write(StepStatus::Skipped, None, None, None));
            }
        }
    }

    /// What `action`, decided for the active stage's attempt number
    /// `attempt` on `input`, becomes for the job, and the stage rows it
    /// changes.
    pub fn settle(&self, action: Action, input: &str, attempt: u32) -> (Action, Vec<StepWrite>) {
        let cur = self.current();
        match action {
            Action::Complete { output } => match merge(self.context(input), &output) {
                Ok(ctx) => {
                    let done = cur.write(StepStatus::Completed, Some(attempt), Some(output), None);
                    self.go_on(ctx, vec![done])
                }
                Err(e) => self.fail(e, input, attempt),
            },
            Action::Fail { error } | Action::Fallback { error, .. } => {
                self.fail(error, input, attempt)
            }
            Action::Cancel => self.cancel(input, attempt),
            // Another attempt of the same stage: its count moves on.
            a @ (Action::Retry { .. }
            | Action::Snooze { .. }
            | Action::Wait { .. }
            | Action::Release { .. }) => {
                let n = if matches!(a, Action::Release { .. }) {
                    attempt.saturating_sub(1)
                } else {
                    attempt
                };
                (a, vec![cur.write(StepStatus::Active, Some(n), None, None)])
            }
            a @ (Action::Advance { .. } | Action::Conclude { .. }) => (a, Vec::new()),
        }
    }

    /// The active stage is done and the context is `ctx`: the next stage
    /// of its chain, or the chain's end.
    fn go_on(&self, ctx: Value, mut writes: Vec<StepWrite>) -> (Action, Vec<StepWrite>) {
        let chain = self.chain_of(self.cur);
        if let Some(next) = self.next_in_chain() {
            let input = match chain {
                Chain::Main => ctx,
                Chain::OnError => json!({"context": ctx, "error": self.main_error()}),
                Chain::OnCancel => json!({"context": ctx}),
            };
            writes.push(next.activate());
            // A step's fallback that was not needed is not reached.
            self.skip_between(&mut writes, next.seq);
            return (self.advance(next, input, None, false), writes);
        }
        self.skip_chain(&mut writes, chain);
        let output = ctx.to_string();
        let action = match chain {
            Chain::Main => {
                self.skip_rest(&mut writes, self.cur + 1);
                Action::Complete { output }
            }
            Chain::OnError => {
                self.skip_rest(&mut writes, self.cur + 1);
                Action::Conclude {
                    output,
                    error: Some(self.main_error()),
                }
            }
            Chain::OnCancel => {
                self.skip_rest(&mut writes, 0);
                Action::Conclude {
                    output,
                    error: None,
                }
            }
        };
        (action, dedup(writes))
    }

    /// Skips the pending stages between the active one and `seq`.
    fn skip_between(&self, writes: &mut Vec<StepWrite>, seq: u32) {
        for r in &self.rows[self.cur + 1..] {
            if r.seq >= seq {
                break;
            }
            if r.status == StepStatus::Pending {
                writes.push(r.write(StepStatus::Skipped, None, None, None));
            }
        }
    }

    /// The active stage failed for good with `error`.
    fn fail(&self, error: JobError, input: &str, attempt: u32) -> (Action, Vec<StepWrite>) {
        let cur = self.current();
        let mut writes =
            vec![cur.write(StepStatus::Failed, Some(attempt), None, Some(error.clone()))];
        // A step's fallback takes over, on `{input, error}`.
        if cur.kind != StepKind::Fallback {
            if let Some(fb) = self
                .rows
                .get(self.cur + 1)
                .filter(|r| r.kind == StepKind::Fallback && r.status == StepStatus::Pending)
            {
                let given: Value = serde_json::from_str(input).unwrap_or(Value::Null);
                let fb_input = json!({"input": given, "error": error.brief()});
                writes.push(fb.activate());
                return (self.advance(fb, fb_input, Some(error), false), writes);
            }
        }
        let ctx = self.context(input);
        let chain = self.chain_of(self.cur);
        match (chain, self.first_of(StepKind::OnError)) {
            (Chain::Main, Some(first)) => {
                self.skip_chain(&mut writes, Chain::Main);
                writes.push(first.activate());
                let input = json!({"context": ctx, "error": error.brief()});
                (
                    self.advance(first, input, Some(error), false),
                    dedup(writes),
                )
            }
            (Chain::Main, None) => {
                self.skip_rest(&mut writes, 0);
                (Action::Fail { error }, dedup(writes))
            }
            // A failing chain ends it: the job ends as the chain would have.
            (Chain::OnError, _) => {
                self.skip_rest(&mut writes, 0);
                let action = Action::Conclude {
                    output: ctx.to_string(),
                    error: Some(self.main_error()),
                };
                (action, dedup(writes))
            }
            (Chain::OnCancel, _) => {
                self.skip_rest(&mut writes, 0);
                let action = Action::Conclude {
                    output: ctx.to_string(),
                    error: None,
                };
                (action, dedup(writes))
            }
        }
    }

    /// The context as the job's stages made it: its input with the output
    /// of every completed stage merged in, in order (what the active
    /// stage's input holds, for a job that is not running).
    pub fn context_of_rows(&self, job_input: &str) -> Value {
        let mut ctx: Value = serde_json::from_str(job_input).unwrap_or(Value::Null);
        for (i, r) in self.rows.iter().enumerate() {
            if r.status == StepStatus::Completed && self.chain_of(i) != Chain::OnCancel {
                if let Some(out) = &r.output {
                    ctx = merge(ctx.clone(), out).unwrap_or(ctx);
                }
            }
        }
        ctx
    }

    /// A cancel of the job while it is queued or waiting: its `on_cancel`
    /// chain's first stage (task, input, attempts), if it is to run, and
    /// the rows that settle.
    pub fn cancel_waiting(
        &self,
        job_input: &str,
    ) -> (Option<(crate::store::TaskRef, String, u32)>, Vec<StepWrite>) {
        let input = json!({"context": self.context_of_rows(job_input)}).to_string();
        let (action, writes) = self.cancel_with(&input, None);
        match action {
            Action::Advance {
                task,
                input,
                max_attempts,
                ..
            } => (Some((task, input, max_attempts)), writes),
            _ => (None, writes),
        }
    }

    /// The active stage was stopped by the job's cancellation: its
    /// `on_cancel` chain runs, unless the job is in it already.
    fn cancel(&self, input: &str, attempt: u32) -> (Action, Vec<StepWrite>) {
        let ctx = json!({"context": self.context(input)}).to_string();
        self.cancel_with(&ctx, Some(attempt))
    }

    /// `cancel`, given the chain's input (`{"context"}`) and the attempts
    /// the stopped stage made, if it was running.
    fn cancel_with(&self, chain_input: &str, attempt: Option<u32>) -> (Action, Vec<StepWrite>) {
        let cur = self.current();
        let mut writes = vec![cur.write(StepStatus::Cancelled, attempt, None, None)];
        let chain = self.chain_of(self.cur);
        match self.first_of(StepKind::OnCancel) {
            Some(first) if chain != Chain::OnCancel => {
                for (i, r) in self.rows.iter().enumerate() {
                    if i != self.cur
                        && r.status == StepStatus::Pending
                        && self.chain_of(i) != Chain::OnCancel
                    {
                        writes.push(r.write(StepStatus::Skipped, None, None, None));
                    }
                }
                writes.push(first.activate());
                let input: Value = serde_json::from_str(chain_input).unwrap_or(Value::Null);
                (self.advance(first, input, None, true), writes)
            }
            _ => {
                self.skip_rest(&mut writes, 0);
                (Action::Cancel, dedup(writes))
            }
        }
    }

    fn advance(
        &self,
        next: &StepRecord,
        input: Value,
        error: Option<JobError>,
        cancelled: bool,
    ) -> Action {
        Action::Advance {
            task: next.task.clone(),
            input: input.to_string(),
            max_attempts: next.max_attempts.max(1),
            error,
            cancelled,
            cancel_wins: self.first_of(StepKind::OnCancel).is_none(),
        }
    }
}

/// Where a failed workflow job starts again when it is retried (re-driven):
/// at the main-chain step that failed, on the context its completed steps
/// made (`restore`), or from its first step on its input. Answers the
/// stage, its input and attempts, and the rows to write: that step active,
/// those after it pending again.
pub fn restart(
    rows: &[StepRecord],
    job_input: &str,
    restore: bool,
) -> Option<(crate::store::TaskRef, String, u32, Vec<StepWrite>)> {
    let plan = Plan {
        rows: rows.to_vec(),
        cur: 0,
    };
    let main = |i: usize| plan.chain_of(i) == Chain::Main;
    let failed = rows
        .iter()
        .enumerate()
        .filter(|(i, r)| main(*i) && r.kind == StepKind::Step && r.status != StepStatus::Completed)
        .map(|(i, _)| i)
        .next();
    let from = if restore { failed.unwrap_or(0) } else { 0 };
    let mut ctx: Value = serde_json::from_str(job_input).ok()?;
    for (i, r) in rows.iter().enumerate().take(from) {
        if main(i) && r.status == StepStatus::Completed {
            if let Some(out) = &r.output {
                ctx = merge(ctx, out).ok()?;
            }
        }
    }
    let first = rows.get(from)?;
    let mut writes = vec![StepWrite {
        attempts: Some(0),
        ..first.activate()
    }];
    for r in &rows[from + 1..] {
        writes.push(r.write(StepStatus::Pending, Some(0), None, None));
    }
    Some((
        first.task.clone(),
        ctx.to_string(),
        first.max_attempts.max(1),
        writes,
    ))
}

/// The same stage written twice keeps its first write.
fn dedup(writes: Vec<StepWrite>) -> Vec<StepWrite> {
    let mut seen = std::collections::HashSet::new();
    writes.into_iter().filter(|w| seen.insert(w.seq)).collect()
}

/// The context with a step's output merged in: each key of the output
/// object set, a `null` one removed. `null` output changes nothing;
/// anything but an object or `null` is the step's failure.
pub fn merge(ctx: Value, output: &str) -> Result<Value, JobError> {
    let bad = |what: &str| {
        JobError::with_code(
            ErrorKind::InvalidOutput,
            "invalid_output",
            format!(
                "a workflow step's output is merged into the context, so it must be a JSON \
                 object (or null); this one is {what}"
            ),
        )
    };
    let out: Value = serde_json::from_str(output).map_err(|_| bad("not JSON"))?;
    let mut ctx = match ctx {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    match out {
        Value::Null => {}
        Value::Object(m) => {
            for (k, v) in m {
                if v.is_null() {
                    ctx.remove(&k);
                } else {
                    ctx.insert(k, v);
                }
            }
        }
        Value::Array(_) => return Err(bad("an array")),
        _ => return Err(bad("a scalar")),
    }
    Ok(Value::Object(ctx))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::store::{StepConfig, TaskRef};

    /// A stage of step `name`, running task `t-{name}` (the runner's
    /// decision tests make their stages with it too).
    pub(crate) fn row(seq: u32, kind: StepKind, name: &str, status: StepStatus) -> StepRecord {
        StepRecord {
            seq,
            kind,
            name: name.into(),
            task: TaskRef {
                name: format!("t-{name}"),
                version: 1,
                digest: "d".into(),
            },
            max_attempts: 3,
            config: StepConfig::default(),
            status,
            attempts: 0,
            output: None,
            error: None,
            started_at: None,
            finished_at: None,
        }
    }

    fn pipeline(active: usize) -> Plan {
        use StepKind::*;
        let mut rows = vec![
            row(0, Step, "a", StepStatus::Completed),
            row(1, Step, "b", StepStatus::Pending),
            row(2, Fallback, "b", StepStatus::Pending),
            row(3, Step, "c", StepStatus::Pending),
            row(4, OnError, "alert", StepStatus::Pending),
            row(5, OnCancel, "undo", StepStatus::Pending),
        ];
        rows[active].status = StepStatus::Active;
        Plan::of(rows).unwrap()
    }

    fn status_of(w: &[StepWrite], seq: u32) -> Option<StepStatus> {
        w.iter().find(|w| w.seq == seq).map(|w| w.status)
    }

    #[test]
    fn outputs_merge_into_the_context_and_null_removes_a_key() {
        let ctx = json!({"a": 1, "b": 2});
        let got = merge(ctx, r#"{"b": null, "c": 3}"#).unwrap();
        assert_eq!(got, json!({"a": 1, "c": 3}));
        assert_eq!(merge(json!({"a": 1}), "null").unwrap(), json!({"a": 1}));
        assert!(merge(json!({}), "[1]").is_err());
        assert!(merge(json!({}), "7").is_err());
    }

    #[test]
    fn a_completed_step_hands_the_merged_context_to_the_next_skipping_its_fallback() {
        let p = pipeline(1);
        let (a, w) = p.settle(
            Action::Complete {
                output: r#"{"price": 5}"#.into(),
            },
            r#"{"order": 1}"#,
            2,
        );
        match a {
            Action::Advance { task, input, .. } => {
                assert_eq!(task.name, "t-c");
                assert_eq!(
                    serde_json::from_str::<Value>(&input).unwrap(),
                    json!({"order": 1, "price": 5})
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(status_of(&w, 1), Some(StepStatus::Completed));
        assert_eq!(status_of(&w, 2), Some(StepStatus::Skipped));
        assert_eq!(status_of(&w, 3), Some(StepStatus::Active));
    }

    #[test]
    fn a_failed_step_goes_to_its_fallback_then_to_on_error() {
        let err = JobError::new(ErrorKind::TaskFailed, "no");
        let p = pipeline(1);
        let (a, w) = p.settle(Action::Fail { error: err.clone() }, r#"{"o":1}"#, 3);
        let Action::Advance { task, input, .. } = a else {
            panic!()
        };
        assert_eq!(task.name, "t-b");
        assert_eq!(status_of(&w, 2), Some(StepStatus::Active));
        // The fallback fails too: on_error gets the context and the error.
        let mut rows = pipeline(1).rows;
        rows[1].status = StepStatus::Failed;
        rows[1].error = Some(err.clone());
        rows[2].status = StepStatus::Active;
        let p = Plan::of(rows).unwrap();
        assert_eq!(p.context(&input), json!({"o": 1}));
        let (a, w) = p.settle(Action::Fail { error: err }, &input, 1);
        let Action::Advance { task, input, .. } = a else {
            panic!()
        };
        assert_eq!(task.name, "t-alert");
        let v: Value = serde_json::from_str(&input).unwrap();
        assert_eq!(v["context"], json!({"o": 1}));
        assert_eq!(v["error"]["message"], "no");
        assert_eq!(status_of(&w, 3), Some(StepStatus::Skipped));
        assert_eq!(status_of(&w, 4), Some(StepStatus::Active));
        assert_eq!(status_of(&w, 5), None, "on_cancel may still run");
    }

    #[test]
    fn the_on_error_chain_ends_the_job_failed_with_the_steps_error_and_the_context() {
        let mut rows = pipeline(4).rows;
        rows[1].status = StepStatus::Failed;
        rows[1].error = Some(JobError::new(ErrorKind::TaskFailed, "first"));
        let p = Plan::of(rows).unwrap();
        let input = r#"{"context": {"o": 1}, "error": {}}"#;
        let (a, w) = p.settle(
            Action::Complete {
                output: r#"{"alerted": true}"#.into(),
            },
            input,
            1,
        );
        let Action::Conclude { output, error } = a else {
            panic!()
        };
        assert_eq!(error.unwrap().message, "first");
        assert_eq!(
            serde_json::from_str::<Value>(&output).unwrap(),
            json!({"o": 1, "alerted": true})
        );
        assert_eq!(status_of(&w, 5), Some(StepStatus::Skipped));
    }

    #[test]
    fn a_cancel_runs_on_cancel_and_clears_the_request() {
        let p = pipeline(3);
        let (a, w) = p.settle(Action::Cancel, r#"{"o": 2}"#, 1);
        let Action::Advance {
            task,
            input,
            cancelled,
            ..
        } = a
        else {
            panic!()
        };
        assert!(cancelled);
        assert_eq!(task.name, "t-undo");
        assert_eq!(
            serde_json::from_str::<Value>(&input).unwrap(),
            json!({"context": {"o": 2}})
        );
        assert_eq!(status_of(&w, 3), Some(StepStatus::Cancelled));
        assert_eq!(status_of(&w, 4), Some(StepStatus::Skipped));
        // The chain's end: the job is cancelled with the context.
        let p = pipeline(5);
        let (a, _) = p.settle(
            Action::Complete {
                output: "null".into(),
            },
            r#"{"context": {"o": 2}}"#,
            1,
        );
        assert!(matches!(a, Action::Conclude { error: None, .. }), "{a:?}");
    }

    #[test]
    fn a_retried_job_restarts_at_its_failed_step_on_the_restored_context() {
        let mut rows = pipeline(1).rows;
        rows[0].output = Some(r#"{"valid": true}"#.into());
        rows[1].status = StepStatus::Failed;
        rows[2].status = StepStatus::Failed;
        rows[4].status = StepStatus::Completed;
        let (task, input, _, w) = restart(&rows, r#"{"o": 1}"#, true).unwrap();
        assert_eq!(task.name, "t-b");
        assert_eq!(
            serde_json::from_str::<Value>(&input).unwrap(),
            json!({"o": 1, "valid": true})
        );
        assert_eq!(status_of(&w, 1), Some(StepStatus::Active));
        assert_eq!(status_of(&w, 0), None, "the completed step stays completed");
        assert_eq!(status_of(&w, 4), Some(StepStatus::Pending));
        // Without restore it starts over.
        let (task, input, _, w) = restart(&rows, r#"{"o": 1}"#, false).unwrap();
        assert_eq!(task.name, "t-a");
        assert_eq!(input, r#"{"o":1}"#);
        assert_eq!(status_of(&w, 0), Some(StepStatus::Active));
    }

    #[test]
    fn the_last_step_completes_the_job_with_the_context() {
        let p = pipeline(3);
        let (a, w) = p.settle(
            Action::Complete {
                output: r#"{"invoice": "I-1"}"#.into(),
            },
            r#"{"o": 1}"#,
            1,
        );
        let Action::Complete { output } = a else {
            panic!()
        };
        assert_eq!(
            serde_json::from_str::<Value>(&output).unwrap(),
            json!({"o": 1, "invoice": "I-1"})
        );
        assert_eq!(status_of(&w, 4), Some(StepStatus::Skipped));
        assert_eq!(status_of(&w, 5), Some(StepStatus::Skipped));
    }
}
