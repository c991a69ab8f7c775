//! `taskbox events`: the tenant's job events, one line each for people or
//! one JSON object each for scripts; those up to now, or followed live.

use super::client::{api_error, connect, Client, ServerArgs};
use super::job_view::job_error_text;
use super::sse::{self, Item, Stream};
use super::table;
use crate::api::events::EventPage;
use crate::event_view::EventView;
use crate::events::EventType;
use anyhow::Context;
use clap::Args;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::io::Write;
use std::process::ExitCode;

/// `taskbox events`.
#[derive(Debug, Args)]
#[command(
    after_help = "Without --follow, prints the events after --after (default: all the \
server still keeps) up to the latest, then exits. With --follow, prints events as they happen \
(from now, or after --after) and survives the server's restarts; Ctrl-C ends it."
)]
pub struct EventsArgs {
    /// Keep printing events as they happen, until Ctrl-C.
    #[arg(long)]
    pub follow: bool,
    /// Only this job's events.
    #[arg(long, value_name = "ID")]
    pub job: Option<String>,
    /// Only events of jobs of this task.
    #[arg(long)]
    pub task: Option<String>,
    /// Only events of jobs on this queue.
    #[arg(long)]
    pub queue: Option<String>,
    /// Only these event types, comma-separated (job.queued, job.started,
    /// job.completed, job.failed, job.retrying, job.cancelled, job.waiting).
    #[arg(long = "type", value_name = "TYPES", value_parser = types_arg)]
    pub types: Option<String>,
    /// Start after this event's sequence number [default: 0, or now with --follow].
    #[arg(long, value_name = "SEQ")]
    pub after: Option<u64>,
    #[command(flatten)]
    pub server: ServerArgs,
    /// Print each event as one line of JSON, exactly as the server sent it.
    #[arg(long)]
    pub json: bool,
}

/// Events asked for per page: the server's most.
const PAGE: u32 = 1000;

pub fn main(args: EventsArgs) -> anyhow::Result<ExitCode> {
    let client = connect(&args.server)?;
    let query = filter(&args);
    if args.follow {
        follow(&client, query, &args)
    } else {
        catch_up(&client, &query, &args)
    }
}

/// `--type`: each name checked against the event types, so a typo is told
/// at once instead of matching nothing.
fn types_arg(text: &str) -> Result<String, String> {
    types_list(text, false)
}

/// Event type names, comma-separated, checked; `*` (every type) when `star`.
pub(super) fn types_list(text: &str, star: bool) -> Result<String, String> {
    let mut names: Vec<String> = Vec::new();
    for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if !(star && name == "*") {
            name.parse::<EventType>()?;
        }
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }
    if names.is_empty() {
        let all: Vec<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
        return Err(format!("name at least one event type: {}", all.join(", ")));
    }
    Ok(names.join(","))
}

/// The query that narrows the events, as `GET /v1/events` spells it.
fn filter(args: &EventsArgs) -> Vec<(&'static str, String)> {
    [
        ("job", &args.job),
        ("task", &args.task),
        ("queue", &args.queue),
        ("type", &args.types),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.clone().map(|v| (k, v)))
    .collect()
}

/// Pages through the events after `--after` up to the tenant's latest when
/// the first page was read, then stops.
fn catch_up(
    client: &Client,
    query: &[(&'static str, String)],
    args: &EventsArgs,
) -> anyhow::Result<ExitCode> {
    let mut after = args.after.unwrap_or(0);
    let mut target = None;
    loop {
        let mut call = client
            .get(&["v1", "events"])
            .query("after", Some(after))
            .query("limit", Some(PAGE));
        for (key, value) in query {
            call = call.query(key, Some(value));
        }
        let reply = call.send().map_err(no_feed)?;
        let page: EventPage = reply.json()?;
        let next = page.next_after;
        // Up to where the tenant was when we began: a busy tenant's new
        // events would otherwise keep this going for ever.
        let target = *target.get_or_insert(page.head);
        let texts: Vec<String> = if args.json {
            let raw: RawEvents = reply.json()?;
            raw.events.iter().map(|e| e.get().to_owned()).collect()
        } else {
            page.events.iter().map(line).collect()
        };
        for text in texts {
            if !emit(&text)? {
                return Ok(ExitCode::SUCCESS);
            }
        }
        // An empty page is not the end when the filter left a stretch out
        // (the server reads a bounded number of rows per page): only a page
        // that made no progress is.
        if next >= target || next <= after {
            return Ok(ExitCode::SUCCESS);
        }
        after = next;
    }
}

/// A page's events as the server wrote them, which `--json` prints.
#[derive(Deserialize)]
struct RawEvents {
    events: Vec<Box<RawValue>>,
}

/// Streams the events as they happen until Ctrl-C, through the server's
/// restarts.
fn follow(
    client: &Client,
    query: Vec<(&'static str, String)>,
    args: &EventsArgs,
) -> anyhow::Result<ExitCode> {
    let stop = sse::ctrl_c(client);
    // "Now" as a number, so that a reconnect before the first event still
    // resumes from here rather than from a later now.
    let after = match args.after {
        Some(a) => a,
        None => head(client)?,
    };
    let mut stream = Stream::new(client, query, after).stop_on(stop);
    if !stream.open().map_err(no_feed)? {
        return Ok(ExitCode::SUCCESS);
    }
    sse::note(&format!(
        "following the events after event {after}; Ctrl-C ends"
    ));
    while let Some(item) = stream.next()? {
        match item {
            Item::Event(e) => {
                let text = match (args.json, e.text.contains('\n')) {
                    (true, false) => e.text,
                    // Data of several lines would break the one-per-line form.
                    (true, true) => e.json.to_string(),
                    (false, _) => line(&e.view),
                };
                if !emit(&text)? {
                    break;
                }
            }
            Item::Gap { message } => sse::note(&message),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The tenant's last event's sequence number now (`GET /v1/events` with
/// `limit=0`: no events, only `head`).
pub(super) fn head(client: &Client) -> anyhow::Result<u64> {
    let page: EventPage = client
        .get(&["v1", "events"])
        .query("limit", Some(0))
        .send()
        .map_err(no_feed)?
        .json()?;
    Ok(page.head)
}

/// A 404 for `/v1/events` is a server from before events.
fn no_feed(e: impl Into<anyhow::Error>) -> anyhow::Error {
    let e: anyhow::Error = e.into();
    if api_error(&e).is_some_and(|a| a.status == 404) {
        e.context(
            "this server has no event feed (GET /v1/events answered 404): it is older than \
             this taskbox; upgrade the server",
        )
    } else {
        e
    }
}

/// Writes a line on stdout; `false` when stdout is closed (`| head`),
/// which ends the command quietly.
fn emit(text: &str) -> anyhow::Result<bool> {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(e).context("cannot write to stdout"),
    }
}

/// One event for people: seq, time, type, job, task, attempt, and what
/// the type adds.
pub(super) fn line(e: &EventView) -> String {
    let text = format!(
        "{:>6}  {:<12}  {:<13}  {}  {:<12}  attempt {}  {}",
        e.seq,
        table::time(&e.at),
        e.kind.as_str(),
        e.job.id,
        e.job.task,
        e.attempt,
        detail(e),
    );
    text.trim_end().to_owned()
}

/// What an event's type adds, in words: the error and whether the job goes
/// on, when it runs next, why it was queued or cancelled, what it waits for.
pub(super) fn detail(e: &EventView) -> String {
    let d = &e.detail;
    let mut parts = Vec::new();
    if let Some(error) = &d.error {
        parts.push(job_error_text(error));
    }
    match (d.will_retry, d.fallback.as_deref()) {
        (_, Some(task)) => parts.push(format!("fallback task {task} takes over")),
        (Some(true), None) => parts.push("will retry".to_owned()),
        (Some(false), None) => parts.push("failed for good".to_owned()),
        (None, None) => {}
    }
    if let Some(reason) = &d.reason {
        match &d.by {
            Some(by) => parts.push(format!("{reason} by {by}")),
            None => parts.push(reason.clone()),
        }
    }
    if let Some(at) = &d.run_at {
        parts.push(format!("runs at {}", table::time(at)));
    }
    if let Some(waiting_for) = d.waiting_for.as_ref().filter(|w| !w.is_null()) {
        parts.push(format!("waiting for {}", table::cell(waiting_for)));
    }
    parts.join("; ")
}

/// Whether the job may have ended with this event: completed, cancelled,
/// or failed with no retry or fallback to come (or not saying so: the
/// caller looks at the job to be sure).
pub(super) fn ends_job(e: &EventView) -> bool {
    match e.kind {
        EventType::Completed | EventType::Cancelled => true,
        EventType::Failed => e.detail.will_retry != Some(true),
        _ => false,
    }
}

/// An event for a test, from the fields it is about; the rest (seq, at,
/// job, attempt) filled in when it does not name them.
#[cfg(test)]
pub(super) fn test_event(mut v: serde_json::Value) -> EventView {
    let head = serde_json::json!({"seq": 1, "at": "2000-01-01T00:00:00.000Z",
                                  "job": {"id": "01J", "task": "t", "queue": "q"}, "attempt": 0});
    use serde_json::Value;
    if let (Value::Object(e), Value::Object(head)) = (&mut v, head) {
        for (k, x) in head {
            e.entry(k).or_insert(x);
        }
    }
    serde_json::from_value(v).expect("an event")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn types_are_checked_and_tidied() {
        assert_eq!(
            types_arg(" job.completed,job.failed,job.completed"),
            Ok("job.completed,job.failed".to_owned())
        );
        let err = types_arg("job.completed,job.done").unwrap_err();
        assert!(
            err.contains("\"job.done\" is not an event type") && err.contains("job.waiting"),
            "{err}"
        );
        assert!(types_arg(",").is_err());
        assert!(types_arg("*").is_err());
        assert_eq!(types_list("*", true), Ok("*".to_owned()));
    }

    #[test]
    fn an_event_reads_as_one_line() {
        let e = json!({"seq": 12, "type": "job.failed", "at": "2000-01-01T00:00:00.000Z",
                       "job": {"id": "01J", "task": "resize", "queue": "q"}, "attempt": 2,
                       "error": {"kind": "task_failed", "code": "E_SIZE", "message": "too big"},
                       "will_retry": true});
        assert_eq!(
            line(&test_event(e)),
            "    12  2000-01-01T00:00:00.000Z  job.failed     01J  resize        attempt 2  \
             task_failed E_SIZE: too big; will retry"
        );
        let e = json!({"type": "job.cancelled", "reason": "superseded", "by": "01K"});
        assert_eq!(detail(&test_event(e)), "superseded by 01K");
        let e = json!({"type": "job.waiting", "waiting_for": {"approval": "alice"}});
        assert_eq!(
            detail(&test_event(e)),
            "waiting for {\"approval\":\"alice\"}"
        );
        let e = json!({"type": "job.failed", "will_retry": true, "fallback": "slow",
                       "error": {"kind": "timeout", "code": "timeout", "message": "late"}});
        assert_eq!(
            detail(&test_event(e)),
            "timeout: late; fallback task slow takes over"
        );
    }

    #[test]
    fn which_events_end_a_job() {
        let ends = |v: Value| ends_job(&test_event(v));
        assert!(ends(json!({"type": "job.completed"})));
        assert!(ends(json!({"type": "job.cancelled"})));
        assert!(ends(json!({"type": "job.failed", "will_retry": false})));
        assert!(!ends(json!({"type": "job.failed", "will_retry": true})));
        assert!(ends(json!({"type": "job.failed"})));
        assert!(!ends(json!({"type": "job.retrying"})));
    }
}
