//! Server-sent events from `GET /v1/events`, read as they come: open the
//! stream, parse its frames, and open it again after the last event handed
//! out when the connection breaks or the server drops a slow reader. Shared
//! by `taskbox events --follow` and `taskbox job enqueue --wait`.

use super::client::Client;
use super::table;
use crate::api::stream_notice::{Dropped, Gap, Refused};
use crate::event_view::EventView;
use serde::Deserialize;
use serde_json::Value;
use std::collections::VecDeque;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The pause before opening the stream again starts short (a blip) and
/// grows to a bound (a server restarting), so a restart is noticed within
/// seconds without hammering a server that is down.
const PAUSE_FIRST: Duration = Duration::from_millis(200);
const PAUSE_MAX: Duration = Duration::from_secs(5);
/// A connection that broke sooner than this after it opened did not really
/// work: the next one waits its pause, so a server that accepts and hangs
/// up at once is not asked again in a tight loop.
const STEADY: Duration = Duration::from_secs(1);
/// The server sends a keep-alive comment every 15 s; a stream silent for
/// this long is dead (a peer that vanished without closing the connection).
const IDLE: Duration = Duration::from_secs(45);
/// Longest event accepted. The server's events are a few KiB; more means
/// the other end is not a taskbox server, and buffering it would be unbounded.
const MAX_EVENT_BYTES: usize = 8 << 20;

/// One frame as the server sent it, up to its blank line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frame {
    pub id: Option<String>,
    /// The `event:` field; empty when the frame had none (a `message`).
    pub event: String,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// Turns bytes, however the network splits them, into frames
/// (the WHATWG rules: `\n`, `\r\n` or `\r` end a line, a blank line ends a
/// frame, `:` starts a comment, one space after a field's colon is dropped).
#[derive(Debug, Default)]
pub struct Parser {
    /// The line read so far.
    line: Vec<u8>,
    /// The last byte fed ended a line with `\r`: a `\n` first in the next
    /// chunk is the rest of that `\r\n`, not a blank line.
    after_cr: bool,
    frame: Frame,
    has_data: bool,
    /// Bytes in `frame` so far, against `MAX_EVENT_BYTES`.
    size: usize,
    ready: VecDeque<Frame>,
}

impl Parser {
    /// Reads these bytes; the frames they complete wait in [`Parser::pop`].
    pub fn feed(&mut self, mut bytes: &[u8]) -> Result<(), String> {
        while !bytes.is_empty() {
            if std::mem::take(&mut self.after_cr) && bytes.first() == Some(&b'\n') {
                bytes = &bytes[1..];
                continue;
            }
            match bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(i) => {
                    self.line.extend_from_slice(&bytes[..i]);
                    self.after_cr = bytes[i] == b'\r';
                    bytes = &bytes[i + 1..];
                    self.end_line();
                }
                None => {
                    self.line.extend_from_slice(bytes);
                    bytes = &[];
                }
            }
            if self.size + self.line.len() > MAX_EVENT_BYTES {
                return Err(format!(
                    "the server sent an event over {} MiB; is TASKBOX_URL (or --url) a taskbox server?",
                    MAX_EVENT_BYTES >> 20
                ));
            }
        }
        Ok(())
    }

    /// The next complete frame, in order.
    pub fn pop(&mut self) -> Option<Frame> {
        self.ready.pop_front()
    }

    fn end_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            let mut frame = std::mem::take(&mut self.frame);
            // A frame without data (only an id, say) dispatches nothing.
            if std::mem::take(&mut self.has_data) {
                if frame.data.ends_with('\n') {
                    frame.data.pop();
                }
                self.ready.push_back(frame);
            }
            self.size = 0;
            return;
        }
        if line.first() == Some(&b':') {
            return; // a keep-alive comment
        }
        self.size += line.len();
        let text = String::from_utf8_lossy(&line);
        let (field, value) = match text.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (&*text, ""),
        };
        match field {
            "id" if !value.contains('\0') => self.frame.id = Some(value.to_owned()),
            "event" => value.clone_into(&mut self.frame.event),
            "data" => {
                self.frame.data.push_str(value);
                self.frame.data.push('\n');
                self.has_data = true;
            }
            // `retry:` and fields of later versions: nothing for us.
            _ => {}
        }
    }
}

/// A job event as the stream carried it.
#[derive(Debug, Clone)]
pub struct Event {
    /// The event's JSON exactly as sent (what `--json` prints).
    pub text: String,
    /// The same, as a value: `--json` prints it on one line when the
    /// data came in several; never read field by field.
    pub json: Value,
    /// The event read as the API writes it: what people are shown.
    pub view: EventView,
}

/// What the stream hands out.
#[derive(Debug, Clone)]
pub enum Item {
    /// Boxed: an event's fields dwarf a gap's message.
    Event(Box<Event>),
    /// Events the reader asked for were pruned; the stream goes on after them.
    Gap { message: String },
}

/// What became of one wait for the next chunk.
enum Read {
    Bytes(bytes::Bytes),
    End,
    Broke(String),
    Idle,
    Stopped,
}

/// How long the stream has been lost, and what was last said about it.
struct Outage {
    since: Instant,
    said: String,
}

/// A followed stream of the tenant's events after a sequence number,
/// filtered by the query; opened on the first [`Stream::next`].
pub struct Stream<'a> {
    client: &'a Client,
    query: Vec<(&'static str, String)>,
    /// Where a new connection starts (`Last-Event-ID`): the last event
    /// handed out, or past what the server said it skipped.
    last: u64,
    stop: Option<CancellationToken>,
    give_up: Option<Duration>,
    conn: Option<reqwest::Response>,
    opened: Instant,
    parser: Parser,
    /// Whether a connection was ever opened: a server never reached is
    /// an error at once (a wrong URL), one that went away is waited for.
    connected: bool,
    outage: Option<Outage>,
    pause: Duration,
    /// Wait this long before opening the stream again.
    pause_before: Option<Duration>,
}

impl<'a> Stream<'a> {
    /// The events after `after` that match `query` (`job`, `task`, `queue`, `type`).
    pub fn new(client: &'a Client, query: Vec<(&'static str, String)>, after: u64) -> Self {
        Stream {
            client,
            query,
            last: after,
            stop: None,
            give_up: None,
            conn: None,
            opened: Instant::now(),
            parser: Parser::default(),
            connected: false,
            outage: None,
            pause: PAUSE_FIRST,
            pause_before: None,
        }
    }

    /// Ends the stream (`next` answers `None`) when this token is cancelled.
    pub fn stop_on(mut self, token: CancellationToken) -> Self {
        self.stop = Some(token);
        self
    }

    /// Fails instead of trying again once the stream has been lost this long.
    pub fn give_up_after(mut self, d: Duration) -> Self {
        self.give_up = Some(d);
        self
    }

    /// Opens the stream now rather than at the first [`Stream::next`];
    /// `false` when stopped meanwhile.
    pub fn open(&mut self) -> anyhow::Result<bool> {
        if self.conn.is_some() {
            return Ok(true);
        }
        self.connect()
    }

    /// The next event (or gap), waiting as long as it takes and opening the
    /// stream again when it breaks; `None` once stopped.
    pub fn next(&mut self) -> anyhow::Result<Option<Item>> {
        loop {
            while let Some(frame) = self.parser.pop() {
                if let Some(item) = self.take(frame) {
                    return Ok(Some(item));
                }
            }
            if self.conn.is_none() {
                if !self.connect()? {
                    return Ok(None);
                }
                continue;
            }
            match self.read() {
                Read::Bytes(b) => self.parser.feed(&b).map_err(anyhow::Error::msg)?,
                Read::End => self.lose("the server ended the event stream", false),
                Read::Broke(cause) => {
                    self.lose(&format!("the event stream broke ({cause})"), false)
                }
                Read::Idle => self.lose(
                    &format!(
                        "nothing came from the server for {} s, not even a keep-alive",
                        IDLE.as_secs()
                    ),
                    false,
                ),
                Read::Stopped => return Ok(None),
            }
        }
    }

    /// What a frame means to the reader, if anything.
    fn take(&mut self, frame: Frame) -> Option<Item> {
        match frame.event.as_str() {
            "gap" => {
                let gap = serde_json::from_str::<Gap>(&frame.data).ok();
                if let Some(gap) = &gap {
                    self.last = self.last.max(gap.first.saturating_sub(1));
                }
                let message =
                    gap.map_or_else(|| "older events were pruned".to_owned(), |g| g.message);
                Some(Item::Gap { message })
            }
            "dropped" => {
                // Every event up to last_seq was sent before this frame, or
                // left out by the filter: none is lost by resuming after it.
                let dropped = serde_json::from_str::<Dropped>(&frame.data).ok();
                if let Some(last) = dropped.and_then(|d| d.last_seq) {
                    self.last = self.last.max(last);
                }
                self.lose("the server dropped this stream: it read too slowly", true);
                None
            }
            "error" => {
                // The server ended the stream: its token was revoked or
                // expired (opening it again is refused, and says so), or
                // could not be checked (opening it again goes on once it can).
                let refused = serde_json::from_str::<Refused>(&frame.data).ok();
                if let Some(last) = refused.as_ref().and_then(|r| r.last_seq) {
                    self.last = self.last.max(last);
                }
                let why = refused.map_or_else(|| "no reason given".to_owned(), |r| r.error.message);
                self.lose(
                    &format!(
                        "the server ended the event stream ({})",
                        crate::text::bounded(&why, 200)
                    ),
                    true,
                );
                None
            }
            _ => {
                let json: Value = match serde_json::from_str(&frame.data) {
                    Ok(v) => v,
                    Err(e) => {
                        note(&format!("skipped an event that is not JSON ({e})"));
                        return None;
                    }
                };
                let view = match EventView::deserialize(&json) {
                    Ok(v) => v,
                    Err(e) => {
                        note(&format!(
                            "skipped an event this taskbox does not read ({e})"
                        ));
                        return None;
                    }
                };
                let seq = frame
                    .id
                    .as_deref()
                    .and_then(|id| id.trim().parse::<u64>().ok())
                    .unwrap_or(view.seq);
                if seq <= self.last {
                    return None; // seen before the stream was opened again
                }
                self.last = seq;
                Some(Item::Event(Box::new(Event {
                    text: frame.data,
                    json,
                    view,
                })))
            }
        }
    }

    /// Waits for the next chunk of the open connection.
    fn read(&mut self) -> Read {
        let Some(conn) = self.conn.as_mut() else {
            return Read::End;
        };
        let stop = self.stop.clone();
        self.client.block_on(async move {
            tokio::select! {
                r = tokio::time::timeout(IDLE, conn.chunk()) => match r {
                    Ok(Ok(Some(b))) => Read::Bytes(b),
                    Ok(Ok(None)) => Read::End,
                    Ok(Err(e)) => Read::Broke(innermost(&e)),
                    Err(_) => Read::Idle,
                },
                () = stopped(stop.as_ref()) => Read::Stopped,
            }
        })
    }

    /// Forgets the connection, says why on stderr, and plans the next one.
    fn lose(&mut self, why: &str, at_once: bool) {
        self.conn = None;
        self.parser = Parser::default();
        note(&format!("{why}; reconnecting after event {}", self.last));
        if at_once || self.opened.elapsed() >= STEADY {
            self.pause = PAUSE_FIRST;
        } else {
            self.pause_before = Some(self.pause);
            self.pause = (self.pause * 2).min(PAUSE_MAX);
        }
        self.outage.get_or_insert_with(|| Outage {
            since: Instant::now(),
            said: String::new(),
        });
    }

    /// Opens the stream after `last`, trying again through outages;
    /// `false` when stopped meanwhile.
    fn connect(&mut self) -> anyhow::Result<bool> {
        if let Some(p) = self.pause_before.take() {
            if self.sleep(p) {
                return Ok(false);
            }
        }
        loop {
            let mut call = self.client.get(&["v1", "events"]);
            for (key, value) in &self.query {
                call = call.query(key, Some(value));
            }
            let call = call.header("Last-Event-ID", self.last.to_string());
            let stop = self.stop.clone();
            let opened = self.client.block_on(async move {
                tokio::select! {
                    r = call.open() => Some(r),
                    () = stopped(stop.as_ref()) => None,
                }
            });
            let e = match opened {
                None => return Ok(false),
                Some(Ok(resp)) => {
                    let kind = resp
                        .headers()
                        .get(reqwest::header::CONTENT_TYPE)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("");
                    if !kind.starts_with("text/event-stream") {
                        anyhow::bail!(
                            "GET /v1/events answered {:?}, not an event stream; \
                             is TASKBOX_URL (or --url) a taskbox server?",
                            crate::text::bounded(kind, 64)
                        );
                    }
                    if let Some(o) = self.outage.take() {
                        note(&format!(
                            "reconnected after {:.1} s; going on after event {}",
                            o.since.elapsed().as_secs_f64(),
                            self.last
                        ));
                    }
                    self.connected = true;
                    self.opened = Instant::now();
                    self.conn = Some(resp);
                    return Ok(true);
                }
                Some(Err(e)) => e,
            };
            let unreachable = match &e {
                taskbox_client::Error::Unreachable(u) => Some(u),
                _ => None,
            };
            if !e.is_transient() || (unreachable.is_some() && !self.connected) {
                return Err(e.into());
            }
            let cause = match unreachable {
                Some(u) => format!("cannot reach {} ({})", u.url, u.cause),
                None => e.to_string().lines().next().unwrap_or("").to_owned(),
            };
            let outage = self.outage.get_or_insert_with(|| Outage {
                since: Instant::now(),
                said: String::new(),
            });
            if let Some(limit) = self.give_up {
                if outage.since.elapsed() >= limit {
                    return Err(anyhow::Error::from(e).context(format!(
                        "the event stream could not be opened again for {} s",
                        limit.as_secs()
                    )));
                }
            }
            if cause != outage.said {
                note(&format!(
                    "{cause}; trying again every {} s at most",
                    PAUSE_MAX.as_secs()
                ));
                outage.said = cause;
            }
            if self.sleep(self.pause) {
                return Ok(false);
            }
            self.pause = (self.pause * 2).min(PAUSE_MAX);
        }
    }

    /// Sleeps; `true` when stopped meanwhile.
    fn sleep(&self, d: Duration) -> bool {
        let stop = self.stop.clone();
        self.client.block_on(async move {
            tokio::select! {
                () = tokio::time::sleep(d) => false,
                () = stopped(stop.as_ref()) => true,
            }
        })
    }
}

/// A token cancelled by Ctrl-C: from now on Ctrl-C ends what watches it
/// (and the command, with status 0) instead of killing the process.
pub fn ctrl_c(client: &Client) -> CancellationToken {
    let token = CancellationToken::new();
    let cancel = token.clone();
    client.block_on(async move {
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        });
        // Lets the task run up to its wait, which installs the handler now.
        tokio::task::yield_now().await;
    });
    token
}

async fn stopped(stop: Option<&CancellationToken>) {
    match stop {
        Some(t) => t.cancelled().await,
        None => std::future::pending().await,
    }
}

/// The innermost cause of a transport error: the one that says what happened.
fn innermost(e: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    cause.to_string()
}

/// A line on stderr about the stream, stamped like `--wait`'s.
pub fn note(text: &str) {
    eprintln!("{} {text}", table::clock());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(chunks: &[&[u8]]) -> Vec<Frame> {
        let mut p = Parser::default();
        let mut out = Vec::new();
        for c in chunks {
            p.feed(c).expect("small frames parse");
            while let Some(f) = p.pop() {
                out.push(f);
            }
        }
        out
    }

    fn frame(id: Option<&str>, event: &str, data: &str) -> Frame {
        Frame {
            id: id.map(str::to_owned),
            event: event.to_owned(),
            data: data.to_owned(),
        }
    }

    #[test]
    fn frames_split_anywhere_read_the_same() {
        let text = b": keep-alive\n\nid: 12\nevent: job.failed\ndata: {\"seq\":12}\n\n\
                     event: gap\ndata: {\"first\":3}\n\n";
        let want = vec![
            frame(Some("12"), "job.failed", "{\"seq\":12}"),
            frame(None, "gap", "{\"first\":3}"),
        ];
        assert_eq!(frames(&[text]), want);
        for cut in 0..text.len() {
            let (a, b) = text.split_at(cut);
            assert_eq!(frames(&[a, b]), want, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(frames(&bytes), want);
    }

    #[test]
    fn line_ends_data_lines_and_odd_fields() {
        // \r\n split between chunks is one line end, not a blank line.
        assert_eq!(
            frames(&[b"id: 1\r", b"\ndata: a\r\ndata:b\r\r\n"]),
            vec![frame(Some("1"), "", "a\nb")]
        );
        // A frame without data dispatches nothing; unknown fields are ignored.
        assert_eq!(
            frames(&[b"id: 5\nretry: 10\n\nfoo\ndata\n\n"]),
            vec![frame(None, "", "")]
        );
        // Bytes that are not UTF-8 do not stop the parser.
        assert_eq!(
            frames(&[b"data: \xff\xfe\n\n"]),
            vec![frame(None, "", "\u{fffd}\u{fffd}")]
        );
    }

    #[test]
    fn an_endless_event_is_an_error_not_unbounded_memory() {
        let mut p = Parser::default();
        let chunk = vec![b'x'; 1 << 20];
        assert!(p.feed(b"data: ").is_ok());
        let mut err = None;
        for _ in 0..16 {
            if let Err(e) = p.feed(&chunk) {
                err = Some(e);
                break;
            }
        }
        assert!(err.is_some_and(|e| e.contains("taskbox server")));
    }
}
