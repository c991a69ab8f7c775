//! Following a job to its end: through its events, or by polling a server
//! older than events, each change a line on stderr; and the end's exit status.

use crate::api::views::JobView;
use crate::cli::client::{api_error, is_transient, print_json, Client, PrintReply, Reply};
use crate::cli::events::ends_job;
use crate::cli::job_view::*;
use crate::cli::sse::{self, Item, Stream};
use crate::cli::table;
use crate::event_view::EventView;
use crate::events::EventType;
use crate::job::JobStatus;
use anyhow::Context;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Polling starts quick, for jobs that take milliseconds, and slows for ones that take minutes.
const POLL_FIRST: Duration = Duration::from_millis(20);
const POLL_MAX: Duration = Duration::from_millis(500);
/// How long to keep polling through a server that does not answer before giving up.
const POLL_OUTAGE: Duration = Duration::from_secs(30);
/// A sighting of a job: the answer as it came (what `--json` prints) and
/// the job read from it (a job's own answer is its detail, which reads as
/// the job too).
pub(in crate::cli) struct Seen {
    pub(in crate::cli) reply: Reply,
    pub(in crate::cli) job: JobView<'static>,
}

impl Seen {
    pub(in crate::cli) fn of(reply: Reply) -> anyhow::Result<Seen> {
        let job = reply.json()?;
        Ok(Seen { reply, job })
    }
}
fn is_final(job: &JobView) -> bool {
    matches!(
        job.status,
        JobStatus::Completed | JobStatus::Failed | JobStatus::Cancelled
    )
}

/// Polls the job until it ends, printing each change on stderr; returns the final sighting.
pub(in crate::cli) fn follow(client: &Client, id: &str, first: Seen) -> anyhow::Result<Seen> {
    let mut seen = first;
    for line in changes(None, &seen.job) {
        eprintln!("{} {line}", table::clock());
    }
    let mut pause = POLL_FIRST;
    let mut told_resume = false;
    let mut outage: Option<Instant> = None;
    while !is_final(&seen.job) {
        if seen.job.status == JobStatus::Waiting && !told_resume {
            eprintln!("  (resume it with `taskbox job resume {id} --input …`)");
            told_resume = true;
        }
        client.pause(pause);
        pause = (pause * 2).min(POLL_MAX);
        let next = match client
            .get(&["v1", "jobs", id])
            .send()
            .map_err(anyhow::Error::from)
        {
            Ok(reply) => Seen::of(reply)?,
            Err(e) if is_transient(&e) => {
                let since = *outage.get_or_insert_with(Instant::now);
                if since.elapsed() > POLL_OUTAGE {
                    return Err(e.context(format!(
                        "lost track of job {id}; see it later with `taskbox job get {id}`"
                    )));
                }
                continue;
            }
            Err(e) => return Err(e),
        };
        outage = None;
        for line in changes(Some(&seen.job), &next.job) {
            eprintln!("{} {line}", table::clock());
        }
        seen = next;
    }
    Ok(seen)
}

/// The tenant's last event now, or `None` from a server older than events
/// (404), whose jobs `--wait` polls instead.
pub(super) fn events_head(client: &Client) -> anyhow::Result<Option<u64>> {
    match crate::cli::events::head(client) {
        Ok(head) => Ok(Some(head)),
        Err(e) => match api_error(&e).map(|a| a.status) {
            Some(404) => Ok(None),
            Some(403) => Err(e.context(
                "--wait follows the job's events (GET /v1/events), which needs the jobs:read \
                 scope; nothing was enqueued",
            )),
            _ => Err(e),
        },
    }
}

/// Follows the job through its events until it ends, printing each change
/// on stderr as the polling `follow` does; then reads the job once and
/// returns it.
pub(super) fn follow_events(
    client: &Client,
    id: &str,
    first: Seen,
    head: u64,
) -> anyhow::Result<Seen> {
    for line in changes(None, &first.job) {
        eprintln!("{} {line}", table::clock());
    }
    // An idempotent replay may answer a job that ended long ago.
    if is_final(&first.job) {
        return Ok(first);
    }
    let resume_note = || eprintln!("  (resume it with `taskbox job resume {id} --input …`)");
    let mut told_resume = first.job.status == JobStatus::Waiting;
    if told_resume {
        resume_note();
    }
    let lost = || format!("lost track of job {id}; see it later with `taskbox job get {id}`");
    let mut max_attempts = Some(u64::from(first.job.max_attempts));
    let mut stream =
        Stream::new(client, vec![("job", id.to_owned())], head).give_up_after(POLL_OUTAGE);
    loop {
        let look = match stream.next().with_context(lost)? {
            // Not without a stop token; but should it end, the job says where it is.
            None => return get_job(client, id).with_context(lost),
            Some(Item::Gap { message }) => {
                // The job's end may be among the pruned events.
                sse::note(&message);
                true
            }
            Some(Item::Event(e)) => {
                let e = &e.view;
                if let Some(line) = event_line(e, max_attempts) {
                    eprintln!("{} {line}", table::clock());
                }
                if e.kind == EventType::Waiting && !told_resume {
                    resume_note();
                    told_resume = true;
                }
                if moves_max_attempts(e) {
                    let seen = get_job(client, id).with_context(lost)?;
                    max_attempts = Some(u64::from(seen.job.max_attempts));
                }
                ends_job(e)
            }
        };
        if !look {
            continue;
        }
        let seen = get_job(client, id).with_context(lost)?;
        if is_final(&seen.job) {
            // The status line the polling `follow` would end with (it has the attempt's time).
            if let Some(line) = changes(None, &seen.job).into_iter().next() {
                eprintln!("{} {line}", table::clock());
            }
            return Ok(seen);
        }
        // Re-driven between its end and our look: it goes on.
    }
}

/// An event of the job as a line for people, in the words of `changes`;
/// none for its end (the job, read once, says it) or for the enqueue
/// (said already).
fn event_line(e: &EventView, max_attempts: Option<u64>) -> Option<String> {
    if ends_job(e) {
        return None;
    }
    let d = &e.detail;
    let attempt = u64::from(e.attempt);
    let of = |n: u64| match max_attempts {
        Some(max) => format!("{n}/{max}"),
        None => n.to_string(),
    };
    let runs_at = || {
        d.run_at
            .as_deref()
            .filter(|at| table::is_future(at))
            .map(|at| format!(", runs at {}", table::time(at)))
            .unwrap_or_default()
    };
    // A field the event lacks reads `-`, as a missing cell does.
    let text = |t: &Option<String>| t.clone().unwrap_or_else(|| "-".to_owned());
    Some(match e.kind {
        EventType::Queued => match d.reason.as_deref() {
            // A workflow's next stage: its step lines say so.
            Some("next_step") => return None,
            Some(reason) => format!("queued again ({reason}){}", runs_at()),
            None => return None,
        },
        EventType::Started => format!("running (attempt {})", of(attempt)),
        EventType::Failed => format!(
            "attempt {} failed: {}",
            of(attempt),
            d.error
                .as_ref()
                .map_or_else(|| "-".to_owned(), job_error_text)
        ),
        EventType::Retrying => match &d.fallback {
            Some(task) => format!("fallback task {task} took over"),
            None => format!("queued for attempt {}{}", of(attempt + 1), runs_at()),
        },
        EventType::Waiting => format!(
            "waiting for {}",
            d.waiting_for
                .as_ref()
                .map_or_else(|| "-".to_owned(), table::cell)
        ),
        EventType::StepStarted => format!(
            "{} {} started (task {})",
            step_kind(e),
            text(&d.step),
            text(&d.task)
        ),
        EventType::StepEnded => {
            let mut line = format!("{} {} {}", step_kind(e), text(&d.step), text(&d.status));
            if let Some(n) = d.attempts.filter(|n| *n > 0) {
                line.push_str(&format!(
                    " after {n} attempt{}",
                    if n == 1 { "" } else { "s" }
                ));
            }
            line
        }
        EventType::Completed | EventType::Cancelled => e.kind.as_str().to_owned(),
    })
}

/// How a stage's line names it: `step`, `fallback`, `on_error step`, …
fn step_kind(e: &EventView) -> String {
    match e.detail.step_kind.as_deref().unwrap_or("step") {
        "step" => "step".into(),
        "fallback" => "fallback of".into(),
        other => format!("{other} step"),
    }
}

/// Whether the job's attempts allowed may have changed with this event: a
/// wait or a snooze spares the attempt it used, a fallback brings its own.
/// Rare, so the job is read again rather than the server's rules copied.
fn moves_max_attempts(e: &EventView) -> bool {
    match e.kind {
        EventType::Waiting => true,
        EventType::Queued => e.detail.reason.is_some(),
        EventType::Retrying => e.detail.fallback.is_some(),
        _ => false,
    }
}

/// `GET` the job, waiting out a server that does not answer for a while.
pub(super) fn get_job(client: &Client, id: &str) -> anyhow::Result<Seen> {
    let mut pause = POLL_FIRST;
    let mut outage: Option<Instant> = None;
    loop {
        match client
            .get(&["v1", "jobs", id])
            .send()
            .map_err(anyhow::Error::from)
        {
            Ok(reply) => return Seen::of(reply),
            Err(e) if is_transient(&e) => {
                let since = *outage.get_or_insert_with(Instant::now);
                if since.elapsed() > POLL_OUTAGE {
                    return Err(e);
                }
                client.pause(pause);
                pause = (pause * 2).min(POLL_MAX);
            }
            Err(e) => return Err(e),
        }
    }
}

/// The end of `--wait`: the output (or the job) on stdout and 0, or the error on stderr and 1.
pub(super) fn finish(last: &Seen, as_json: bool) -> anyhow::Result<ExitCode> {
    if as_json {
        last.reply.print()?;
    }
    let job = &last.job;
    match job.status {
        JobStatus::Completed => {
            if !as_json {
                print_json(&job.output.as_ref().map(|o| o.value()).unwrap_or_default())?;
            }
            Ok(ExitCode::SUCCESS)
        }
        JobStatus::Failed | JobStatus::Cancelled => {
            let (id, status) = (&job.id, job.status.as_str());
            match &job.error {
                None => eprintln!("job {id} {status}"),
                Some(e) => eprintln!("job {id} {status}: {}", error_text(e)),
            }
            Ok(ExitCode::from(1))
        }
        _ => {
            // Not over (e.g. `job run` that snoozed or waits): say where it stands.
            if !as_json {
                eprintln!("{}", one_line(job));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::events::test_event;
    use serde_json::{json, Value};

    #[test]
    fn stage_events_name_their_kind() {
        let started =
            json!({"type": "job.step_started", "step": "price", "kind": "step", "task": "pricing"});
        assert_eq!(
            event_line(&test_event(started), None).as_deref(),
            Some("step price started (task pricing)")
        );
        let ended = json!({"type": "job.step_ended", "step": "tell", "kind": "on_error", "status": "completed", "attempts": 1});
        assert_eq!(
            event_line(&test_event(ended), None).as_deref(),
            Some("on_error step tell completed after 1 attempt")
        );
    }

    #[test]
    fn events_read_as_the_changes_polling_printed() {
        let line = |e: Value| event_line(&test_event(e), Some(3));
        let failed = json!({"type": "job.failed", "attempt": 1, "will_retry": true,
                            "error": {"kind": "task_failed", "code": "E", "message": "boom"}});
        assert_eq!(
            line(failed).as_deref(),
            Some("attempt 1/3 failed: task_failed E: boom")
        );
        let retry = json!({"type": "job.retrying", "attempt": 1, "run_at": "2000-01-01T00:00:00Z"});
        assert_eq!(line(retry).as_deref(), Some("queued for attempt 2/3"));
        let started = json!({"type": "job.started", "attempt": 2});
        assert_eq!(line(started).as_deref(), Some("running (attempt 2/3)"));
        assert_eq!(
            event_line(
                &test_event(json!({"type": "job.started", "attempt": 2})),
                None
            )
            .as_deref(),
            Some("running (attempt 2)")
        );
        let resumed = json!({"type": "job.queued", "attempt": 1, "reason": "resumed"});
        assert_eq!(
            line(resumed.clone()).as_deref(),
            Some("queued again (resumed)")
        );
        assert!(moves_max_attempts(&test_event(resumed)));
        let fallback = json!({"type": "job.retrying", "attempt": 3, "fallback": "slow"});
        assert_eq!(
            line(fallback.clone()).as_deref(),
            Some("fallback task slow took over")
        );
        assert!(moves_max_attempts(&test_event(fallback)));
        // The enqueue and the end are said from the job itself.
        for quiet in [
            json!({"type": "job.queued", "attempt": 0}),
            json!({"type": "job.completed", "attempt": 1}),
            json!({"type": "job.failed", "attempt": 3, "will_retry": false}),
            json!({"type": "job.cancelled", "attempt": 0}),
        ] {
            assert_eq!(line(quiet.clone()), None, "{quiet}");
            assert!(!moves_max_attempts(&test_event(quiet.clone())), "{quiet}");
        }
    }
}
