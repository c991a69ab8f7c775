//! How `taskbox job …` shows jobs and attempts to people: tables, detail
//! fields, one-line summaries and the status changes `--wait` prints, each
//! from the API's own view of them.

use super::format::{bytes, duration, thousands};
use super::table::{self, Table};
use crate::api::views::{AttemptView, DebounceView, ErrorView, JobDetail, JobView, StepView};
use crate::attempt_log::{LogLine, Source};
use crate::job::{JobError, JobStatus};
use crate::network_tally::NetworkTally;
use crate::store::TaskRef;

/// The jobs as a table; `tenants`: with each job's tenant (a list of
/// every tenant's).
pub(super) fn jobs_table(jobs: &[JobView], tenants: bool) -> Table {
    let mut heads = vec!["ID", "TASK", "STATUS", "ATTEMPTS", "QUEUE", "CREATED"];
    if tenants {
        heads.insert(1, "TENANT");
    }
    let mut t = Table::new(&heads).right(&[heads.len() - 3]);
    for job in jobs {
        let mut row = vec![job.id.to_string()];
        if tenants {
            row.push(job.tenant.to_string());
        }
        row.extend([
            task_label(&job.task),
            job.status.as_str().to_owned(),
            attempts_of(job),
            job.queue.to_string(),
            table::time_cell(Some(job.created_at.as_str())),
        ]);
        t.row(row);
    }
    t
}

/// `resize v3`, from the task version a job or attempt carries.
pub(super) fn task_label(task: &TaskRef) -> String {
    format!("{} v{}", task.name, task.version)
}

/// `1/3`: attempts used out of attempts allowed.
pub(super) fn attempts_of(job: &JobView) -> String {
    format!("{}/{}", job.attempts, job.max_attempts)
}

/// `timeout: the attempt ran longer than 30000 ms`, with the code when it adds something.
pub(super) fn error_text(error: &ErrorView) -> String {
    let kind = error.kind.as_str();
    match Some(error.code.as_ref()).filter(|c| !c.is_empty() && *c != kind) {
        Some(code) => format!("{kind} {code}: {}", error.message),
        None => format!("{kind}: {}", error.message),
    }
}

/// An event's error (the error its row kept) as `error_text` says the job's.
pub(super) fn job_error_text(error: &JobError) -> String {
    error_text(&ErrorView::of(error))
}

/// What the CLI says right after enqueueing, or after `job run`.
pub(super) fn one_line(job: &JobView) -> String {
    let mut line = format!(
        "{} job {} of task {} on queue {}",
        job.status.as_str(),
        job.id,
        task_label(&job.task),
        job.queue,
    );
    if table::is_future(&job.run_at) {
        line.push_str(&format!(", runs at {}", table::time(&job.run_at)));
    }
    line
}

/// Every field a person may want, skipping the empty ones; input and output as pretty JSON.
pub(super) fn job_details(detail: &JobDetail) -> anyhow::Result<String> {
    let job = &detail.job;
    let time = |t: &Option<String>| t.as_deref().map(table::time).unwrap_or_default();
    let took = match (&job.started_at, &job.finished_at) {
        (Some(s), Some(f)) => table::between(s, f).map(duration).unwrap_or_default(),
        _ => String::new(),
    };
    let progress = match &job.progress {
        None => String::new(),
        Some(p) => format!("{}% {}", p.percent, p.note).trim_end().to_owned(),
    };
    let mut out = table::fields(&[
        ("id", job.id.to_string()),
        (
            "task",
            format!("{} ({})", task_label(&job.task), job.task.digest),
        ),
        ("status", job.status.as_str().to_owned()),
        ("attempts", attempts_of(job)),
        ("queue", job.queue.to_string()),
        ("priority", job.priority.to_string()),
        ("created", table::time(&job.created_at)),
        // Only a queued job's run_at says something a person needs.
        (
            "run at",
            if job.status == JobStatus::Queued {
                table::time(&job.run_at)
            } else {
                String::new()
            },
        ),
        ("started", time(&job.started_at)),
        ("finished", time(&job.finished_at)),
        ("took", took),
        ("deadline", time(&job.deadline_at)),
        (
            "expires",
            job.expire_after_ms
                .map(|ms| format!("{ms} ms after it comes due, if still queued"))
                .unwrap_or_default(),
        ),
        (
            "unique key",
            job.unique_key.as_deref().unwrap_or_default().to_owned(),
        ),
        (
            "concurrency key",
            job.concurrency_key
                .as_deref()
                .unwrap_or_default()
                .to_owned(),
        ),
        (
            "fairness key",
            job.fairness_key
                .as_deref()
                .map(|k| format!("{k} (weight {})", job.fairness_weight.unwrap_or(1)))
                .unwrap_or_default(),
        ),
        (
            "trace",
            job.traceparent
                .as_deref()
                .map(|t| format!("continues {t}"))
                .unwrap_or_default(),
        ),
        (
            "throttle",
            job.throttle
                .as_ref()
                .map(|t| format!("key {}: {} a {} ms", t.key, t.limit, t.period_ms))
                .unwrap_or_default(),
        ),
        (
            "debounce",
            job.debounce.as_ref().map(debounce_text).unwrap_or_default(),
        ),
        ("progress", progress),
        (
            "waiting for",
            job.waiting_for
                .as_ref()
                .map(|w| table::cell(&w.value()))
                .unwrap_or_default(),
        ),
        (
            "fallback",
            job.fallback.as_deref().map(task_label).unwrap_or_default(),
        ),
        (
            "cancel",
            if job.cancel_requested {
                "requested".to_owned()
            } else {
                String::new()
            },
        ),
        (
            "error",
            job.error.as_ref().map(error_text).unwrap_or_default(),
        ),
        (
            "parent",
            detail.parent.as_deref().unwrap_or_default().to_owned(),
        ),
        ("children", detail.children.join(", ")),
        (
            "callbacks",
            detail
                .callbacks
                .iter()
                .map(|c| format!("{} {} ({})", c.kind, c.job, c.task))
                .collect::<Vec<_>>()
                .join(", "),
        ),
        (
            "callback of",
            detail
                .callback_of
                .as_ref()
                .map(|c| format!("{} of {}", c.kind, c.job))
                .unwrap_or_default(),
        ),
    ]);
    if let Some(w) = &detail.workflow {
        out.push_str(&format!(
            "workflow: {} v{}\n{}",
            w.name,
            w.version,
            steps_table(&detail.steps)
        ));
    }
    let output = job.output.as_ref().map(|o| o.value());
    for (key, value) in [("input", Some(job.input.value())), ("output", output)] {
        if let Some(v) = value.filter(|v| !v.is_null()) {
            out.push_str(&format!("{key}:\n{}\n", serde_json::to_string_pretty(&v)?));
        }
    }
    Ok(out)
}

/// A debounced job's key, its timing and its place in its chain.
fn debounce_text(d: &DebounceView) -> String {
    let mut text = format!(
        "key {}: runs {} ms after the last enqueue, at most {} ms after {}",
        d.key,
        d.period_ms,
        d.max_wait_ms,
        table::time(&d.since)
    );
    if let Some(old) = &d.replaced {
        text.push_str(&format!("; replaced job {old}"));
    }
    if let Some(next) = &d.successor {
        text.push_str(&format!(
            "; replaced by job {next}, which runs in its place"
        ));
    }
    text
}

/// A workflow job's stages, in order: each step, fallback and chain step.
pub(super) fn steps_table(steps: &[StepView]) -> String {
    let mut t = Table::new(&["STEP", "KIND", "TASK", "STATUS", "ATTEMPTS", "ERROR"]).right(&[4]);
    for s in steps {
        t.row(vec![
            s.name.to_string(),
            s.kind.to_string(),
            task_label(&s.task),
            s.status.to_string(),
            format!("{}/{}", s.attempts, s.max_attempts),
            s.error.as_ref().map(error_text).unwrap_or_default(),
        ]);
    }
    t.render()
}

/// What changed between two sightings of a job, as lines for people (`prev` is `None` at first).
pub(super) fn changes(prev: Option<&JobView>, job: &JobView) -> Vec<String> {
    let mut lines = Vec::new();
    if prev.is_none_or(|p| p.status != job.status || p.attempts != job.attempts) {
        let attempt = format!("attempt {}", attempts_of(job));
        let line = match job.status {
            JobStatus::Queued => {
                let mut line = match job.attempts {
                    0 => "queued".to_owned(),
                    n => format!("queued for attempt {}/{}", n + 1, job.max_attempts),
                };
                if table::is_future(&job.run_at) {
                    line.push_str(&format!(", runs at {}", table::time(&job.run_at)));
                }
                if let Some(e) = &job.error {
                    line.push_str(&format!(" (last: {})", error_text(e)));
                }
                line
            }
            JobStatus::Running => format!("running ({attempt})"),
            JobStatus::Waiting => format!(
                "waiting for {}",
                job.waiting_for
                    .as_ref()
                    .map_or_else(|| "-".to_owned(), |w| table::cell(&w.value()))
            ),
            JobStatus::Completed => match (&job.started_at, &job.finished_at) {
                (Some(s), Some(f)) => match table::between(s, f) {
                    Some(d) => format!("completed ({attempt}, {})", duration(d)),
                    None => format!("completed ({attempt})"),
                },
                _ => format!("completed ({attempt})"),
            },
            JobStatus::Failed => format!("failed ({attempt})"),
            other => other.as_str().to_owned(),
        };
        lines.push(line);
    }
    if let Some(fallback) = &job.fallback {
        if prev.is_none_or(|p| p.fallback.as_ref() != Some(fallback)) {
            lines.push(format!("fallback task {} took over", task_label(fallback)));
        }
    }
    if let Some(p) = &job.progress {
        if prev.is_none_or(|prev| prev.progress.as_ref() != Some(p)) {
            lines.push(
                format!("progress {}% {}", p.percent, p.note)
                    .trim_end()
                    .to_owned(),
            );
        }
    }
    if job.cancel_requested
        && job.status == JobStatus::Running
        && prev.is_none_or(|p| !p.cancel_requested)
    {
        lines.push("cancel requested; interrupting the running attempt".to_owned());
    }
    lines
}

/// The attempts table; with `logs`, each attempt's error message and log lines under its row.
pub(super) fn attempts_table(attempts: &[AttemptView], logs: bool) -> String {
    // The HTTP column only for a job whose attempts made requests.
    let http = attempts.iter().any(|a| a.network.is_some());
    let mut head = vec![
        "ATTEMPT", "TASK", "OUTCOME", "ERROR", "DURATION", "FUEL", "PEAK-MEM",
    ];
    if http {
        head.push("HTTP");
    }
    let mut t = Table::new(&head).right(&[0, 4, 5, 6, 7]);
    for a in attempts {
        let error = match &a.error {
            None => "-".to_owned(),
            Some(e) => {
                let kind = e.kind.as_str();
                match Some(e.code.as_ref()).filter(|c| !c.is_empty() && *c != kind) {
                    Some(code) => format!("{kind} {code}"),
                    None => kind.to_owned(),
                }
            }
        };
        let mut row = vec![
            a.attempt.to_string(),
            task_label(&a.task),
            a.outcome.to_string(),
            error,
            table::millis(Some(a.duration_ms as f64)),
            thousands(a.fuel_used),
            bytes(a.peak_memory_bytes),
        ];
        if http {
            row.push(http_cell(a.network.as_ref()));
        }
        t.row(row);
    }
    let lines = t.lines();
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        out.push_str(line);
        out.push('\n');
        let Some(a) = i.checked_sub(1).and_then(|i| attempts.get(i)) else {
            continue;
        };
        if logs {
            out.push_str(&attempt_log(a));
        }
    }
    out
}

/// Under an attempt's row: its error message in full, then its log.
pub(super) fn attempt_log(a: &AttemptView) -> String {
    let mut out = String::new();
    if let Some(e) = &a.error {
        out.push_str(&format!("    error: {}\n", error_text(e)));
    }
    let Some(log) = &a.log else {
        return out;
    };
    for line in &log.lines {
        out.push_str(&format!("    {}\n", log_line(line)));
    }
    if log.dropped_lines > 0 || log.dropped_bytes > 0 {
        out.push_str(&format!(
            "    (log over its budget: {} lines and {} dropped)\n",
            thousands(log.dropped_lines),
            bytes(log.dropped_bytes)
        ));
    }
    if log.lines.is_empty() && log.dropped_lines == 0 {
        out.push_str("    (no log lines)\n");
    }
    out
}

/// `[    1.500 ms] info  guest  hi`: a log line as `job attempts --logs`
/// and `taskbox run` print it.
pub(super) fn log_line(line: &LogLine) -> String {
    let source = match line.source {
        Source::Guest => "guest",
        Source::Stdout => "stdout",
        Source::Stderr => "stderr",
        Source::Host => "host",
    };
    let level = format!("{:?}", line.level).to_lowercase();
    format!(
        "[{:>9.3} ms] {level:<5} {source:<6} {}",
        line.at_ms, line.message
    )
}

/// An attempt's outbound HTTP: requests, refusals and bytes in, or `-`.
fn http_cell(n: Option<&NetworkTally>) -> String {
    let Some(n) = n else {
        return "-".into();
    };
    if n.refused > 0 {
        format!(
            "{} req ({} refused), {} in",
            n.requests,
            n.refused,
            bytes(n.bytes_received)
        )
    } else {
        format!("{} req, {} in", n.requests, bytes(n.bytes_received))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::views::Embedded;
    use crate::job::ErrorKind;
    use crate::store::ProgressRecord;
    use serde_json::{json, Value};
    use std::borrow::Cow;

    /// A job as the API answers it, to be changed field by field.
    fn job(status: &str, attempts: u64) -> JobView<'static> {
        serde_json::from_value(json!({"id": "01J", "task": {"name": "echo", "version": 2, "digest": "sha256:ab"},
               "status": status, "queue": "default", "priority": 0, "input": {}, "output": null,
               "attempts": attempts, "max_attempts": 3, "run_at": "2000-01-01T00:00:00.000Z",
               "created_at": "2000-01-01T00:00:00.000Z", "started_at": null, "finished_at": null,
               "concurrency_key": null, "unique_key": null, "error": null, "progress": null,
               "waiting_for": null, "fallback": null, "deadline_at": null, "cancel_requested": false}))
        .unwrap()
    }

    fn changes_of(prev: Option<&JobView>, job: &JobView) -> Vec<String> {
        changes(prev, job)
    }

    /// A job's page, for one that has no stages nor callbacks.
    fn detail(job: JobView<'static>) -> JobDetail<'static> {
        JobDetail {
            job,
            parent: None,
            children: Vec::new(),
            callbacks: Vec::new(),
            callback_of: None,
            workflow: None,
            steps: Vec::new(),
        }
    }

    #[test]
    fn status_changes_become_lines() {
        let queued = job("queued", 0);
        assert_eq!(changes_of(None, &queued), vec!["queued"]);
        assert!(changes_of(Some(&queued), &queued).is_empty());
        let running = job("running", 1);
        assert_eq!(
            changes_of(Some(&queued), &running),
            vec!["running (attempt 1/3)"]
        );

        let mut retry = job("queued", 1);
        retry.error = Some(ErrorView {
            kind: ErrorKind::Trap,
            code: "trap".into(),
            message: "unreachable".into(),
        });
        assert_eq!(
            changes_of(Some(&running), &retry),
            vec!["queued for attempt 2/3 (last: trap: unreachable)"]
        );
        // Missed the queued state between two attempts: the attempt number still moved.
        assert_eq!(
            changes_of(Some(&running), &job("running", 2)),
            vec!["running (attempt 2/3)"]
        );

        let mut progressed = job("running", 1);
        progressed.progress = Some(Cow::Owned(ProgressRecord {
            percent: 40,
            note: "resizing".into(),
        }));
        assert_eq!(
            changes_of(Some(&running), &progressed),
            vec!["progress 40% resizing"]
        );

        let mut done = job("completed", 1);
        done.started_at = Some("2000-01-01T00:00:00.000Z".into());
        done.finished_at = Some("2000-01-01T00:00:00.250Z".into());
        assert_eq!(
            changes_of(Some(&progressed), &done),
            vec!["completed (attempt 1/3, 250.00 ms)"]
        );

        let mut fell_back = job("running", 3);
        fell_back.fallback = Some(Cow::Owned(TaskRef {
            name: "echo-slow".into(),
            version: 1,
            digest: "d".into(),
        }));
        assert_eq!(
            changes_of(Some(&running), &fell_back),
            vec![
                "running (attempt 3/3)",
                "fallback task echo-slow v1 took over"
            ]
        );

        let mut cancelling = job("running", 1);
        cancelling.cancel_requested = true;
        assert_eq!(
            changes_of(Some(&running), &cancelling),
            vec!["cancel requested; interrupting the running attempt"]
        );

        let mut waiting = job("waiting", 1);
        waiting.waiting_for = Some(Embedded::Read(json!({"approval": "alice"})));
        assert_eq!(
            changes_of(Some(&running), &waiting),
            vec!["waiting for {\"approval\":\"alice\"}"]
        );
    }

    #[test]
    fn errors_read_as_kind_code_message() {
        let text = |v: Value| error_text(&serde_json::from_value(v).unwrap());
        assert_eq!(
            text(json!({"kind": "task_failed", "code": "E_SIZE", "message": "too big"})),
            "task_failed E_SIZE: too big"
        );
        assert_eq!(
            text(json!({"kind": "timeout", "code": "timeout", "message": "over 30 s"})),
            "timeout: over 30 s"
        );
    }

    #[test]
    fn tables_of_jobs_and_attempts() {
        let lines = jobs_table(&[job("failed", 3)], false).lines();
        assert_eq!(
            lines,
            vec![
                "ID   TASK     STATUS  ATTEMPTS  QUEUE    CREATED",
                "01J  echo v2  failed       3/3  default  2000-01-01T00:00:00.000Z",
            ]
        );
        let mut theirs = job("failed", 3);
        theirs.tenant = "acme".into();
        assert_eq!(
            jobs_table(&[theirs], true).lines(),
            vec![
                "ID   TENANT  TASK     STATUS  ATTEMPTS  QUEUE    CREATED",
                "01J  acme    echo v2  failed       3/3  default  2000-01-01T00:00:00.000Z",
            ]
        );
        let attempts: Vec<AttemptView> = serde_json::from_value(json!([
            {"attempt": 1, "task": {"name": "echo", "version": 2, "digest": "d"}, "outcome": "retried",
             "started_at": "2000-01-01T00:00:00.000Z", "finished_at": "2000-01-01T00:00:00.012Z",
             "error": {"kind": "task_failed", "code": "E", "message": "boom"},
             "duration_ms": 12, "fuel_used": 12345, "peak_memory_bytes": 2097152,
             "log": {"lines": [{"at_ms": 1.5, "level": "info", "source": "guest", "message": "hi"}],
                     "dropped_lines": 2, "dropped_bytes": 10}},
            {"attempt": 2, "task": {"name": "echo", "version": 2, "digest": "d"}, "outcome": "completed",
             "started_at": "2000-01-01T00:00:01.000Z", "finished_at": "2000-01-01T00:00:01.003Z",
             "error": null, "duration_ms": 3, "fuel_used": 10, "peak_memory_bytes": 65536,
             "log": null},
        ]))
        .unwrap();
        assert_eq!(
            attempts_table(&attempts, false),
            "ATTEMPT  TASK     OUTCOME    ERROR          DURATION    FUEL  PEAK-MEM\n\
             \x20     1  echo v2  retried    task_failed E  12.00 ms  12,345   2.0 MiB\n\
             \x20     2  echo v2  completed  -               3.00 ms      10  64.0 KiB\n"
        );
        let with_logs = attempts_table(&attempts, true);
        assert!(
            with_logs.contains(
                "2.0 MiB\n    error: task_failed E: boom\n    [    1.500 ms] info  guest  hi\n    (log over its budget: 2 lines and 10 B dropped)\n      2"
            ),
            "{with_logs}"
        );
    }

    #[test]
    fn details_skip_what_is_empty() -> anyhow::Result<()> {
        let mut j = job("completed", 1);
        j.input = Embedded::Read(Value::Null);
        j.output = Some(Embedded::Read(json!({"ok": true})));
        let text = job_details(&detail(j))?;
        assert!(
            text.starts_with("id        01J\ntask      echo v2 (sha256:ab)\nstatus    completed\n"),
            "{text}"
        );
        assert!(!text.contains("error"), "{text}");
        assert!(!text.contains("input"), "{text}");
        assert!(text.ends_with("output:\n{\n  \"ok\": true\n}\n"), "{text}");
        assert!(
            !text.contains("throttle") && !text.contains("debounce"),
            "{text}"
        );
        Ok(())
    }

    #[test]
    fn details_say_a_jobs_throttle_and_its_place_in_a_debounce_chain() -> anyhow::Result<()> {
        let mut j = job("cancelled", 0);
        j.throttle = Some(Cow::Owned(crate::store::throttle::Throttle {
            key: "acct-1".into(),
            limit: 10,
            period_ms: 60000,
        }));
        j.debounce = Some(DebounceView {
            key: "doc-7".into(),
            period_ms: 2000,
            max_wait_ms: 30000,
            since: "2000-01-01T00:00:00.000Z".into(),
            replaced: Some("01A".into()),
            successor: Some("01C".into()),
        });
        let text = job_details(&detail(j))?;
        assert!(
            text.contains("throttle  key acct-1: 10 a 60000 ms\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "debounce  key doc-7: runs 2000 ms after the last enqueue, at most 30000 ms after "
            ),
            "{text}"
        );
        assert!(
            text.contains("; replaced job 01A; replaced by job 01C, which runs in its place\n"),
            "{text}"
        );
        Ok(())
    }
}
