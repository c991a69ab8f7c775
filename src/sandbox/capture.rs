//! Bounded capture of what a guest says: its log lines (host `log`, stdout and
//! stderr of a task) and a command's stdout. The excess is dropped and counted,
//! so a chatty guest is never killed for talking and never costs unbounded memory.

use super::redact::Redactor;
pub use crate::attempt_log::{AttemptLog, Level, LogLine, Source};
use bytes::Bytes;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Instant;
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};

/// Longest single log line kept; longer lines are cut and marked.
pub const MAX_LINE_BYTES: usize = 4096;
/// What every kept line costs against the log budget besides its bytes:
/// its record (time, level, source) is not free, so empty lines are not
/// either, and a budget of B bytes keeps at most B / 32 lines.
pub const LINE_OVERHEAD_BYTES: usize = 32;
/// Most stderr kept for a failed command's error message.
pub const STDERR_TAIL_BYTES: usize = 1024;
/// How much a guest may write in one `write` call (the WASI permit).
const WRITE_PERMIT: usize = 64 * 1024;

#[derive(Debug)]
struct LogState {
    log: AttemptLog,
    kept_bytes: usize,
    max_bytes: usize,
    started: Instant,
    stdout_partial: Vec<u8>,
    stderr_partial: Vec<u8>,
    stderr_tail: Vec<u8>,
    /// Whether the tail lost its start (it holds the last bytes only).
    tail_cut: bool,
    redactor: Redactor,
}

/// The attempt's log, shared by the host imports and the stdio pipes.
#[derive(Debug, Clone)]
pub struct LogBuffer(Arc<Mutex<LogState>>);

impl LogBuffer {
    pub fn new(max_bytes: usize, started: Instant) -> Self {
        Self::redacting(max_bytes, started, Redactor::default())
    }

    /// A log that takes the values `redactor` knows out of every line.
    pub fn redacting(max_bytes: usize, started: Instant, redactor: Redactor) -> Self {
        LogBuffer(Arc::new(Mutex::new(LogState {
            log: AttemptLog::default(),
            kept_bytes: 0,
            max_bytes,
            started,
            stdout_partial: Vec::new(),
            stderr_partial: Vec::new(),
            stderr_tail: Vec::new(),
            tail_cut: false,
            redactor,
        })))
    }

    fn state(&self) -> MutexGuard<'_, LogState> {
        // A panic while holding this lock cannot leave the log inconsistent
        // in a way that matters; keep going with what is there.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends one line, cut to [`MAX_LINE_BYTES`], or counts it as dropped.
    pub fn line(&self, level: Level, source: Source, message: &str) {
        self.state().push(level, source, message.as_bytes());
    }

    /// A sink for the guest's stdout or stderr that splits it into lines.
    pub fn stream(&self, source: Source) -> LogStream {
        LogStream {
            buffer: self.clone(),
            source,
        }
    }

    /// The last bytes the guest wrote to stderr, for a failed command's message.
    pub fn stderr_tail(&self) -> String {
        let s = self.state();
        let tail = String::from_utf8_lossy(&s.stderr_tail);
        let tail = if s.tail_cut {
            s.redactor.apply_cut_start(&tail)
        } else {
            s.redactor.apply(&tail).into_owned()
        };
        tail.trim().to_owned()
    }

    /// `text` without the attempt's secret values.
    pub fn redact(&self, text: &str) -> String {
        self.state().redactor.apply(text).into_owned()
    }

    /// Flushes unterminated lines and hands the log over.
    pub fn finish(&self) -> AttemptLog {
        let mut s = self.state();
        for source in [Source::Stdout, Source::Stderr] {
            let rest = std::mem::take(s.partial(source));
            if !rest.is_empty() {
                s.push(level_of(source), source, &rest);
            }
        }
        std::mem::take(&mut s.log)
    }
}

fn level_of(source: Source) -> Level {
    match source {
        Source::Stderr => Level::Warn,
        _ => Level::Info,
    }
}

impl LogState {
    fn partial(&mut self, source: Source) -> &mut Vec<u8> {
        match source {
            Source::Stderr => &mut self.stderr_partial,
            _ => &mut self.stdout_partial,
        }
    }

    fn push(&mut self, level: Level, source: Source, message: &[u8]) {
        let redacted;
        let message = if self.redactor.is_empty() {
            message
        } else {
            redacted = self
                .redactor
                .apply(&String::from_utf8_lossy(message))
                .into_owned();
            redacted.as_bytes()
        };
        let (kept, cut) = if message.len() > MAX_LINE_BYTES {
            (&message[..MAX_LINE_BYTES], message.len() - MAX_LINE_BYTES)
        } else {
            (message, 0)
        };
        let cost = kept.len() + LINE_OVERHEAD_BYTES;
        if self.kept_bytes + cost > self.max_bytes {
            self.log.dropped_lines += 1;
            self.log.dropped_bytes += message.len() as u64;
            return;
        }
        self.kept_bytes += cost;
        self.log.dropped_bytes += cut as u64;
        let mut text = String::from_utf8_lossy(kept).into_owned();
        if cut > 0 {
            // What was dropped past the cap may have held the rest of a
            // secret whose start is kept.
            text = self.redactor.apply_cut(&text);
            text.push_str(&format!(" … [{cut} bytes cut]"));
        }
        self.log.lines.push(LogLine {
            at_ms: self.started.elapsed().as_secs_f64() * 1000.0,
            level,
            source,
            message: text,
        });
    }

    fn write(&mut self, source: Source, mut bytes: &[u8]) {
        if source == Source::Stderr {
            self.tail_cut |= remember_tail(&mut self.stderr_tail, bytes);
        }
        while let Some(pos) = bytes.iter().position(|&b| b == b'\n') {
            let (line, rest) = bytes.split_at(pos);
            bytes = &rest[1..];
            let mut whole = std::mem::take(self.partial(source));
            if whole.is_empty() {
                self.push(level_of(source), source, trim_cr(line));
            } else {
                whole.extend_from_slice(line);
                self.push(level_of(source), source, trim_cr(&whole));
            }
        }
        if !bytes.is_empty() {
            let partial = self.partial(source);
            // Keep one byte past the line cap so `push` still sees it as cut.
            let room = (MAX_LINE_BYTES + 1).saturating_sub(partial.len());
            let take = bytes.len().min(room);
            partial.extend_from_slice(&bytes[..take]);
            self.log.dropped_bytes += (bytes.len() - take) as u64;
        }
    }
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Keeps the last bytes; answers whether any were let go.
fn remember_tail(tail: &mut Vec<u8>, bytes: &[u8]) -> bool {
    if bytes.len() >= STDERR_TAIL_BYTES {
        tail.clear();
        tail.extend_from_slice(&bytes[bytes.len() - STDERR_TAIL_BYTES..]);
        return bytes.len() > STDERR_TAIL_BYTES;
    }
    let overflow = (tail.len() + bytes.len()).saturating_sub(STDERR_TAIL_BYTES);
    tail.drain(..overflow);
    tail.extend_from_slice(bytes);
    overflow > 0
}

/// A guest's stdout or stderr, written into the attempt log line by line.
#[derive(Debug, Clone)]
pub struct LogStream {
    buffer: LogBuffer,
    source: Source,
}

impl IsTerminal for LogStream {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for LogStream {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[async_trait::async_trait]
impl Pollable for LogStream {
    async fn ready(&mut self) {}
}

impl OutputStream for LogStream {
    fn write(&mut self, bytes: Bytes) -> Result<(), StreamError> {
        self.buffer.state().write(self.source, &bytes);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        Ok(WRITE_PERMIT)
    }
}

impl AsyncWrite for LogStream {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.buffer.state().write(self.source, buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[derive(Debug, Default)]
struct OutputState {
    bytes: Vec<u8>,
    overflowed: bool,
}

/// A command's stdout: its output. Past the cap the guest is stopped, since
/// the attempt has failed with `output_too_large` whatever it does next.
#[derive(Debug, Clone)]
pub struct OutputCapture {
    state: Arc<Mutex<OutputState>>,
    cap: usize,
}

impl OutputCapture {
    pub fn new(cap: usize) -> Self {
        OutputCapture {
            state: Arc::new(Mutex::new(OutputState::default())),
            cap,
        }
    }

    fn state(&self) -> MutexGuard<'_, OutputState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn overflowed(&self) -> bool {
        self.state().overflowed
    }

    /// Everything written so far (at most the cap).
    pub fn take(&self) -> Vec<u8> {
        std::mem::take(&mut self.state().bytes)
    }

    fn accept(&self, bytes: &[u8]) -> Result<(), StreamError> {
        let mut s = self.state();
        if s.bytes.len() + bytes.len() > self.cap {
            s.overflowed = true;
            return Err(StreamError::Trap(wasmtime::format_err!(
                "stdout passed the output cap of {} bytes",
                self.cap
            )));
        }
        s.bytes.extend_from_slice(bytes);
        Ok(())
    }
}

impl IsTerminal for OutputCapture {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for OutputCapture {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[async_trait::async_trait]
impl Pollable for OutputCapture {
    async fn ready(&mut self) {}
}

impl OutputStream for OutputCapture {
    fn write(&mut self, bytes: Bytes) -> Result<(), StreamError> {
        self.accept(&bytes)
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        Ok(WRITE_PERMIT)
    }
}

impl AsyncWrite for OutputCapture {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.accept(buf) {
            Ok(()) => Poll::Ready(Ok(buf.len())),
            Err(_) => Poll::Ready(Err(io::Error::other("stdout passed the output cap"))),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_lines_and_flushes_the_rest() {
        let log = LogBuffer::new(1024, Instant::now());
        let mut out = log.stream(Source::Stdout);
        OutputStream::write(&mut out, Bytes::from_static(b"one\ntw")).unwrap();
        OutputStream::write(&mut out, Bytes::from_static(b"o\r\nthree")).unwrap();
        let got = log.finish();
        let lines: Vec<_> = got.lines.iter().map(|l| l.message.as_str()).collect();
        assert_eq!(lines, ["one", "two", "three"]);
    }

    #[test]
    fn drops_and_counts_past_the_budget() {
        let log = LogBuffer::new(10 + LINE_OVERHEAD_BYTES, Instant::now());
        log.line(Level::Info, Source::Guest, "12345678");
        log.line(Level::Info, Source::Guest, "abcdef");
        let got = log.finish();
        assert_eq!(got.lines.len(), 1);
        assert_eq!(got.dropped_lines, 1);
        assert_eq!(got.dropped_bytes, 6);
    }

    #[test]
    fn empty_lines_cost_their_overhead() {
        let log = LogBuffer::new(10 * LINE_OVERHEAD_BYTES, Instant::now());
        let mut out = log.stream(Source::Stdout);
        for _ in 0..1000 {
            log.line(Level::Info, Source::Guest, "");
            OutputStream::write(&mut out, Bytes::from_static(b"\n")).unwrap();
        }
        let got = log.finish();
        assert_eq!(got.lines.len(), 10);
        assert_eq!(got.dropped_lines, 1990);
    }

    #[test]
    fn cuts_long_lines() {
        let log = LogBuffer::new(1 << 20, Instant::now());
        let mut err = log.stream(Source::Stderr);
        let long = vec![b'x'; MAX_LINE_BYTES * 3];
        OutputStream::write(&mut err, Bytes::from(long)).unwrap();
        OutputStream::write(&mut err, Bytes::from_static(b"\n")).unwrap();
        let got = log.finish();
        assert_eq!(got.lines.len(), 1);
        assert!(got.lines[0].message.ends_with("bytes cut]"));
        // The tail ends with the newline, which is trimmed.
        assert_eq!(log.stderr_tail().len(), STDERR_TAIL_BYTES - 1);
    }

    #[test]
    fn output_capture_stops_at_the_cap() {
        let cap = OutputCapture::new(4);
        let mut s = cap.clone();
        OutputStream::write(&mut s, Bytes::from_static(b"1234")).unwrap();
        assert!(OutputStream::write(&mut s, Bytes::from_static(b"5")).is_err());
        assert!(cap.overflowed());
        assert_eq!(cap.take(), b"1234");
    }
}
