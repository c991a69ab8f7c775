//! How `taskbox job …` shows jobs and attempts to people: tables, detail
//! fields, one-line summaries and the status changes `--wait` prints.

use super::format::{bytes, duration, thousands};
use super::table::{self, Table};
use serde_json::Value;

pub(super) fn jobs_table(jobs: &[Value]) -> Table {
    let mut t = Table::new(&["ID", "TASK", "STATUS", "ATTEMPTS", "QUEUE", "CREATED"]).right(&[3]);
    for job in jobs {
        t.row(vec![
            table::cell(&job["id"]),
            task_label(&job["task"]),
            table::cell(&job["status"]),
            attempts_of(job),
            table::cell(&job["queue"]),
            table::time_cell(job["created_at"].as_str()),
        ]);
    }
    t
}

/// `resize v3`, from the `{name, version, digest}` a job or attempt carries.
pub(super) fn task_label(task: &Value) -> String {
    match (task["name"].as_str(), task["version"].as_u64()) {
        (Some(name), Some(v)) => format!("{name} v{v}"),
        (Some(name), None) => name.to_owned(),
        _ => table::cell(task),
    }
}

/// `1/3`: attempts used out of attempts allowed.
pub(super) fn attempts_of(job: &Value) -> String {
    format!(
        "{}/{}",
        table::cell(&job["attempts"]),
        table::cell(&job["max_attempts"])
    )
}

/// `timeout: the attempt ran longer than 30000 ms`, with the code when it adds something.
pub(super) fn error_text(error: &Value) -> String {
    let kind = error["kind"].as_str().unwrap_or("error");
    let code = error["code"]
        .as_str()
        .filter(|c| !c.is_empty() && *c != kind);
    let message = error["message"].as_str().unwrap_or("");
    match code {
        Some(code) => format!("{kind} {code}: {message}"),
        None => format!("{kind}: {message}"),
    }
}

/// What the CLI says right after enqueueing, or after `job run`.
pub(super) fn one_line(job: &Value) -> String {
    let mut line = format!(
        "{} job {} of task {} on queue {}",
        table::cell(&job["status"]),
        table::cell(&job["id"]),
        task_label(&job["task"]),
        table::cell(&job["queue"]),
    );
    if let Some(at) = job["run_at"].as_str().filter(|at| table::is_future(at)) {
        line.push_str(&format!(", runs at {}", table::time(at)));
    }
    line
}

/// Every field a person may want, skipping the empty ones; input and output as pretty JSON.
pub(super) fn job_details(job: &Value) -> anyhow::Result<String> {
    let text = |v: &Value| {
        if v.is_null() {
            String::new()
        } else {
            table::cell(v)
        }
    };
    let time = |v: &Value| v.as_str().map(table::time).unwrap_or_default();
    let took = match (job["started_at"].as_str(), job["finished_at"].as_str()) {
        (Some(s), Some(f)) => table::between(s, f).map(duration).unwrap_or_default(),
        _ => String::new(),
    };
    let progress = match &job["progress"] {
        Value::Null => String::new(),
        p => format!("{}% {}", table::cell(&p["percent"]), text(&p["note"]))
            .trim_end()
            .to_owned(),
    };
    let digest = job["task"]["digest"].as_str().unwrap_or_default();
    let task = if digest.is_empty() {
        task_label(&job["task"])
    } else {
        format!("{} ({digest})", task_label(&job["task"]))
    };
    let fallback = if job["fallback"].is_null() {
        String::new()
    } else {
        task_label(&job["fallback"])
    };
    let error = if job["error"].is_null() {
        String::new()
    } else {
        error_text(&job["error"])
    };
    let mut out = table::fields(&[
        ("id", text(&job["id"])),
        ("task", task),
        ("status", text(&job["status"])),
        ("attempts", attempts_of(job)),
        ("queue", text(&job["queue"])),
        ("priority", text(&job["priority"])),
        ("created", time(&job["created_at"])),
        // Only a queued job's run_at says something a person needs.
        (
            "run at",
            if job["status"] == "queued" {
                time(&job["run_at"])
            } else {
                String::new()
            },
        ),
        ("started", time(&job["started_at"])),
        ("finished", time(&job["finished_at"])),
        ("took", took),
        ("deadline", time(&job["deadline_at"])),
        (
            "expires",
            job["expire_after_ms"]
                .as_u64()
                .map(|ms| format!("{ms} ms after it comes due, if still queued"))
                .unwrap_or_default(),
        ),
        ("unique key", text(&job["unique_key"])),
        ("concurrency key", text(&job["concurrency_key"])),
        ("progress", progress),
        ("waiting for", text(&job["waiting_for"])),
        ("fallback", fallback),
        (
            "cancel",
            if job["cancel_requested"] == true {
                "requested".to_owned()
            } else {
                String::new()
            },
        ),
        ("error", error),
        ("parent", text(&job["parent"])),
        (
            "children",
            job["children"]
                .as_array()
                .map(|c| {
                    c.iter()
                        .filter_map(|v| v.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default(),
        ),
    ]);
    if let Some(steps) = job["steps"].as_array() {
        out.push_str(&format!(
            "workflow: {} v{}\n{}",
            text(&job["workflow"]["name"]),
            text(&job["workflow"]["version"]),
            steps_table(steps)
        ));
    }
    for key in ["input", "output"] {
        if !job[key].is_null() {
            out.push_str(&format!(
                "{key}:\n{}\n",
                serde_json::to_string_pretty(&job[key])?
            ));
        }
    }
    Ok(out)
}

/// A workflow job's stages, in order: each step, fallback and chain step.
pub(super) fn steps_table(steps: &[Value]) -> String {
    let mut t = Table::new(&["STEP", "KIND", "TASK", "STATUS", "ATTEMPTS", "ERROR"]).right(&[4]);
    for s in steps {
        t.row(vec![
            table::cell(&s["name"]),
            table::cell(&s["kind"]),
            task_label(&s["task"]),
            table::cell(&s["status"]),
            format!(
                "{}/{}",
                table::cell(&s["attempts"]),
                table::cell(&s["max_attempts"])
            ),
            match &s["error"] {
                Value::Null => String::new(),
                e => error_text(e),
            },
        ]);
    }
    t.render()
}

/// What changed between two sightings of a job, as lines for people (`prev` is `None` at first).
pub(super) fn changes(prev: Option<&Value>, job: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    let differs = |key: &str| prev.is_none_or(|p| p[key] != job[key]);
    if differs("status") || differs("attempts") {
        let attempt = format!(
            "attempt {}/{}",
            table::cell(&job["attempts"]),
            table::cell(&job["max_attempts"])
        );
        let line = match job["status"].as_str().unwrap_or("?") {
            "queued" => {
                let mut line = match job["attempts"].as_u64() {
                    Some(n) if n > 0 => format!(
                        "queued for attempt {}/{}",
                        n + 1,
                        table::cell(&job["max_attempts"])
                    ),
                    _ => "queued".to_owned(),
                };
                if let Some(at) = job["run_at"].as_str().filter(|at| table::is_future(at)) {
                    line.push_str(&format!(", runs at {}", table::time(at)));
                }
                if !job["error"].is_null() {
                    line.push_str(&format!(" (last: {})", error_text(&job["error"])));
                }
                line
            }
            "running" => format!("running ({attempt})"),
            "waiting" => format!("waiting for {}", table::cell(&job["waiting_for"])),
            "completed" => match (job["started_at"].as_str(), job["finished_at"].as_str()) {
                (Some(s), Some(f)) => match table::between(s, f) {
                    Some(d) => format!("completed ({attempt}, {})", duration(d)),
                    None => format!("completed ({attempt})"),
                },
                _ => format!("completed ({attempt})"),
            },
            "failed" => format!("failed ({attempt})"),
            other => other.to_owned(),
        };
        lines.push(line);
    }
    if differs("fallback") && !job["fallback"].is_null() {
        lines.push(format!(
            "fallback task {} took over",
            task_label(&job["fallback"])
        ));
    }
    if differs("progress") && !job["progress"].is_null() {
        let p = &job["progress"];
        let note = p["note"].as_str().unwrap_or("");
        lines.push(
            format!("progress {}% {note}", table::cell(&p["percent"]))
                .trim_end()
                .to_owned(),
        );
    }
    if differs("cancel_requested") && job["cancel_requested"] == true && job["status"] == "running"
    {
        lines.push("cancel requested; interrupting the running attempt".to_owned());
    }
    lines
}

/// The attempts table; with `logs`, each attempt's error message and log lines under its row.
pub(super) fn attempts_table(attempts: &[Value], logs: bool) -> String {
    // The HTTP column only for a job whose attempts made requests.
    let http = attempts.iter().any(|a| a["network"].is_object());
    let mut head = vec![
        "ATTEMPT", "TASK", "OUTCOME", "ERROR", "DURATION", "FUEL", "PEAK-MEM",
    ];
    if http {
        head.push("HTTP");
    }
    let mut t = Table::new(&head).right(&[0, 4, 5, 6, 7]);
    for a in attempts {
        let error = match &a["error"] {
            Value::Null => "-".to_owned(),
            e => {
                let kind = e["kind"].as_str().unwrap_or("error");
                match e["code"].as_str().filter(|c| !c.is_empty() && *c != kind) {
                    Some(code) => format!("{kind} {code}"),
                    None => kind.to_owned(),
                }
            }
        };
        let mut row = vec![
            table::cell(&a["attempt"]),
            task_label(&a["task"]),
            table::cell(&a["outcome"]),
            error,
            table::millis(a["duration_ms"].as_f64()),
            a["fuel_used"]
                .as_u64()
                .map(thousands)
                .unwrap_or_else(|| "-".into()),
            a["peak_memory_bytes"]
                .as_u64()
                .map(bytes)
                .unwrap_or_else(|| "-".into()),
        ];
        if http {
            row.push(http_cell(&a["network"]));
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
pub(super) fn attempt_log(a: &Value) -> String {
    let mut out = String::new();
    if !a["error"].is_null() {
        out.push_str(&format!("    error: {}\n", error_text(&a["error"])));
    }
    let log = &a["log"];
    let lines = log["lines"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    for line in lines {
        let at = line["at_ms"].as_f64().unwrap_or(0.0);
        let level = line["level"].as_str().unwrap_or("");
        let source = line["source"].as_str().unwrap_or("");
        let message = line["message"].as_str().unwrap_or("");
        out.push_str(&format!(
            "    [{at:>9.3} ms] {level:<5} {source:<6} {message}\n"
        ));
    }
    let dropped_lines = log["dropped_lines"].as_u64().unwrap_or(0);
    let dropped_bytes = log["dropped_bytes"].as_u64().unwrap_or(0);
    if dropped_lines > 0 || dropped_bytes > 0 {
        out.push_str(&format!(
            "    (log over its budget: {} lines and {} dropped)\n",
            thousands(dropped_lines),
            bytes(dropped_bytes)
        ));
    }
    if lines.is_empty() && log.is_object() && dropped_lines == 0 {
        out.push_str("    (no log lines)\n");
    }
    out
}

/// An attempt's outbound HTTP: requests, refusals and bytes in, or `-`.
fn http_cell(n: &Value) -> String {
    let Some(requests) = n["requests"].as_u64() else {
        return "-".into();
    };
    let refused = n["refused"].as_u64().unwrap_or(0);
    let received = n["bytes_received"].as_u64().unwrap_or(0);
    if refused > 0 {
        format!("{requests} req ({refused} refused), {} in", bytes(received))
    } else {
        format!("{requests} req, {} in", bytes(received))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn job(status: &str, attempts: u64) -> Value {
        json!({"id": "01J", "task": {"name": "echo", "version": 2, "digest": "sha256:ab"},
               "status": status, "queue": "default", "attempts": attempts, "max_attempts": 3,
               "run_at": "2000-01-01T00:00:00.000Z", "error": null, "progress": null,
               "fallback": null, "cancel_requested": false})
    }

    #[test]
    fn status_changes_become_lines() {
        let queued = job("queued", 0);
        assert_eq!(changes(None, &queued), vec!["queued"]);
        assert!(changes(Some(&queued), &queued).is_empty());
        let running = job("running", 1);
        assert_eq!(
            changes(Some(&queued), &running),
            vec!["running (attempt 1/3)"]
        );

        let mut retry = job("queued", 1);
        retry["error"] = json!({"kind": "trap", "code": "trap", "message": "unreachable"});
        assert_eq!(
            changes(Some(&running), &retry),
            vec!["queued for attempt 2/3 (last: trap: unreachable)"]
        );
        // Missed the queued state between two attempts: the attempt number still moved.
        assert_eq!(
            changes(Some(&running), &job("running", 2)),
            vec!["running (attempt 2/3)"]
        );

        let mut progressed = running.clone();
        progressed["progress"] = json!({"percent": 40, "note": "resizing"});
        assert_eq!(
            changes(Some(&running), &progressed),
            vec!["progress 40% resizing"]
        );

        let mut done = job("completed", 1);
        done["started_at"] = json!("2000-01-01T00:00:00.000Z");
        done["finished_at"] = json!("2000-01-01T00:00:00.250Z");
        assert_eq!(
            changes(Some(&progressed), &done),
            vec!["completed (attempt 1/3, 250.00 ms)"]
        );

        let mut fell_back = job("running", 3);
        fell_back["fallback"] = json!({"name": "echo-slow", "version": 1, "digest": "d"});
        assert_eq!(
            changes(Some(&running), &fell_back),
            vec![
                "running (attempt 3/3)",
                "fallback task echo-slow v1 took over"
            ]
        );

        let mut cancelling = running.clone();
        cancelling["cancel_requested"] = json!(true);
        assert_eq!(
            changes(Some(&running), &cancelling),
            vec!["cancel requested; interrupting the running attempt"]
        );

        let mut waiting = job("waiting", 1);
        waiting["waiting_for"] = json!({"approval": "alice"});
        assert_eq!(
            changes(Some(&running), &waiting),
            vec!["waiting for {\"approval\":\"alice\"}"]
        );
    }

    #[test]
    fn errors_read_as_kind_code_message() {
        assert_eq!(
            error_text(&json!({"kind": "task_failed", "code": "E_SIZE", "message": "too big"})),
            "task_failed E_SIZE: too big"
        );
        assert_eq!(
            error_text(&json!({"kind": "timeout", "code": "timeout", "message": "over 30 s"})),
            "timeout: over 30 s"
        );
    }

    #[test]
    fn tables_of_jobs_and_attempts() {
        let lines = jobs_table(&[job("failed", 3)]).lines();
        assert_eq!(
            lines,
            vec![
                "ID   TASK     STATUS  ATTEMPTS  QUEUE    CREATED",
                "01J  echo v2  failed       3/3  default  -",
            ]
        );
        let attempts = [
            json!({"attempt": 1, "task": {"name": "echo", "version": 2}, "outcome": "retried",
                   "error": {"kind": "task_failed", "code": "E", "message": "boom"},
                   "duration_ms": 12.5, "fuel_used": 12345, "peak_memory_bytes": 2097152,
                   "log": {"lines": [{"at_ms": 1.5, "level": "info", "source": "guest", "message": "hi"}],
                           "dropped_lines": 2, "dropped_bytes": 10}}),
            json!({"attempt": 2, "task": {"name": "echo", "version": 2}, "outcome": "completed",
                   "error": null, "duration_ms": 3, "fuel_used": 10, "peak_memory_bytes": 65536,
                   "log": null}),
        ];
        assert_eq!(
            attempts_table(&attempts, false),
            "ATTEMPT  TASK     OUTCOME    ERROR          DURATION    FUEL  PEAK-MEM\n\
             \x20     1  echo v2  retried    task_failed E  12.50 ms  12,345   2.0 MiB\n\
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
        j["output"] = json!({"ok": true});
        let text = job_details(&j)?;
        assert!(
            text.starts_with("id        01J\ntask      echo v2 (sha256:ab)\nstatus    completed\n"),
            "{text}"
        );
        assert!(!text.contains("error"), "{text}");
        assert!(text.ends_with("output:\n{\n  \"ok\": true\n}\n"), "{text}");
        Ok(())
    }
}
