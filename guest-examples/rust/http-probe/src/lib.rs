//! http-probe: a test guest for outbound HTTP (`wasi:http/outgoing-handler` 0.2, through the
//! `wasip2` crate, blocking) and secrets (`wasi:config/store@0.2.0-rc.1`). It never panics on
//! what the host or the network does: every failure of a request becomes a result. Input (every
//! field optional; unknown fields are `bad_input`):
//!
//! ```json
//! {"requests": [{"method": "GET", "url": "http://127.0.0.1:8080/path?x=1",
//!                "headers": {"x-a": "b"}, "secret_headers": {"x-api-key": "API_KEY"},
//!                "body": "text", "body_bytes": 100000,
//!                "connect_timeout_ms": 500, "first_byte_timeout_ms": 500, "between_bytes_timeout_ms": 500}],
//!  "repeat": 1, "read_secrets": ["API_KEY"], "print_secrets": ["API_KEY"], "fail_with_secret": "API_KEY",
//!  "span": {"name": "charge", "attributes": {"k": "v"}, "secret_attributes": {"key": "API_KEY"},
//!           "event": "sent"}}
//! ```
//!
//! - `span`: a span of the guest's own (`taskbox:task/trace`) around the requests, with those
//!   attributes and, under the names of `secret_attributes`, those secrets' values (for testing
//!   the host's redaction), and `event` added once the requests are done.
//!
//! - Requests are sent one after the other, each `repeat` times (default 1) before the next:
//!   `results` has `requests × repeat` entries in that order. `method` defaults to GET (any
//!   case; others are sent verbatim); `url` is required (`scheme://authority/path?query`).
//! - `secret_headers` maps a header name to a config-store key; the key's value is the header's
//!   value, and a missing key (or a store error) leaves the header out.
//! - `body` sends that text, `body_bytes` that many `a` bytes (not both); either adds
//!   `content-length` unless `headers` has one. The body is streamed after `handle`, within
//!   `check-write` permits; if the response arrives while the body is still being written, the
//!   body is abandoned and the response reported.
//! - A result is `{"status", "headers": {name: value}, "body": <lossy UTF-8, first 64 KiB>,
//!   "body_len": <bytes read>, "micros"}`; repeated header names are joined with ", ".
//!   `micros` is monotonic-clock time from just before `handle` to the end of the body.
//! - A failed request is `{"error", "detail", "stage", "micros"}`:
//!   - stage `build` (nothing sent, micros 0): `error` is `invalid-url`, `invalid-method`,
//!     `invalid-request` (a set-* call refused), or a `header-error` variant name (`forbidden`,
//!     `invalid-syntax`, `immutable`), the detail naming the header;
//!   - stage `send` (`handle` failed, or writing the request body did) and `response` (the
//!     response future resolved to an error): `error` is the `wasi:http` `error-code` variant
//!     name as written in the WIT (`HTTP-request-denied`, `connection-refused`,
//!     `destination-IP-prohibited`, `DNS-error`, ...), `detail` its Debug. A body write that
//!     fails without an error code (the stream closed) reports the response future's error
//!     instead if it comes within 5 s, else `"error": "stream"`;
//!   - stage `body` (reading the response body failed): the error code from
//!     `http-error-code(io-error)` when there is one, else `"error": "stream"` with the io
//!     error's debug string; `status` and `body_len` (so far) are included too.
//! - `read_secrets` → `"secrets": {"KEY": {"present": true, "len": n}, "MISSING": {"present":
//!   false}}` (a store error adds `"error"`). Values are never output.
//! - `print_secrets`: for each key, `secret KEY = <value>` on stdout, on stderr, and through the
//!   host `log(info, ...)` — for testing the host's redaction.
//! - `fail_with_secret`: after everything else, `err(failure{code: "leak", message: "the secret
//!   is <value>", retryable: false})` (the host must redact it).
//! - Otherwise `done({"results": [...], "secrets": {...}})`. Malformed input: `bad_input`.

wit_bindgen::generate!({
    // task.wit in place, then the workspace's wit dir (the http-task world, wasi:config in deps).
    path: ["../../../wit", "../wit"],
    world: "taskbox:guest-http/http-task",
    // Bindings for interfaces of other packages (taskbox:task, wasi:config) too.
    generate_all,
});

use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use taskbox::task::host::{self, Level};
use taskbox::task::trace;
use wasi::config::store;
use wasip2::clocks::monotonic_clock;
use wasip2::http::outgoing_handler;
use wasip2::http::types::{
    http_error_code, ErrorCode, Fields, FutureIncomingResponse, HeaderError, IncomingBody, IncomingResponse,
    Method, OutgoingBody, OutgoingRequest, RequestOptions, Scheme,
};
use wasip2::io::error::Error as IoError;
use wasip2::io::poll;
use wasip2::io::streams::{OutputStream, StreamError};

/// How long the response may take to explain a request body that could not be written.
const GRACE_NS: u64 = 5_000_000_000;
/// Response body bytes kept for the result; the rest is read and counted only.
const KEEP: usize = 64 * 1024;
/// Bytes asked for per read.
const READ: u64 = 64 * 1024;
/// `body_bytes` are written from a buffer of this many `a`s.
const A_CHUNK: usize = 64 * 1024;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Probe {
    #[serde(default)]
    requests: Vec<Request>,
    #[serde(default = "one")]
    repeat: u32,
    #[serde(default)]
    read_secrets: Vec<String>,
    #[serde(default)]
    print_secrets: Vec<String>,
    fail_with_secret: Option<String>,
    span: Option<SpanSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpanSpec {
    name: String,
    #[serde(default)]
    attributes: BTreeMap<String, String>,
    #[serde(default)]
    secret_attributes: BTreeMap<String, String>,
    event: Option<String>,
}

fn one() -> u32 {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    #[serde(default = "get")]
    method: String,
    url: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    secret_headers: BTreeMap<String, String>,
    body: Option<String>,
    body_bytes: Option<u64>,
    connect_timeout_ms: Option<u64>,
    first_byte_timeout_ms: Option<u64>,
    between_bytes_timeout_ms: Option<u64>,
}

fn get() -> String {
    "GET".into()
}

/// A failed request, as its result reports it.
struct Fail {
    error: String,
    detail: String,
    stage: &'static str,
    /// For a body failure: the status and the bytes read before it.
    partial: Option<(u16, u64)>,
}

impl Fail {
    fn new(error: impl Into<String>, detail: impl Into<String>, stage: &'static str) -> Fail {
        Fail { error: error.into(), detail: detail.into(), stage, partial: None }
    }

    fn code(code: &ErrorCode, stage: &'static str) -> Fail {
        Fail::new(code_name(code), format!("{code:?}"), stage)
    }

    /// A stream's error: the HTTP error code behind it when the host gives one.
    fn stream(err: StreamError, stage: &'static str) -> Fail {
        match err {
            StreamError::Closed => Fail::new("stream", "closed", stage),
            StreamError::LastOperationFailed(e) => Fail::io(&e, stage),
        }
    }

    fn io(err: &IoError, stage: &'static str) -> Fail {
        match http_error_code(err) {
            Some(code) => Fail::code(&code, stage),
            None => Fail::new("stream", err.to_debug_string(), stage),
        }
    }

    fn to_json(&self, micros: u64) -> Value {
        let mut v = json!({ "error": self.error, "detail": self.detail, "stage": self.stage, "micros": micros });
        if let Some((status, body_len)) = self.partial {
            v["status"] = json!(status);
            v["body_len"] = json!(body_len);
        }
        v
    }
}

/// The variant's name as written in the wasi:http WIT.
fn code_name(code: &ErrorCode) -> &'static str {
    use ErrorCode::*;
    match code {
        DnsTimeout => "DNS-timeout",
        DnsError(_) => "DNS-error",
        DestinationNotFound => "destination-not-found",
        DestinationUnavailable => "destination-unavailable",
        DestinationIpProhibited => "destination-IP-prohibited",
        DestinationIpUnroutable => "destination-IP-unroutable",
        ConnectionRefused => "connection-refused",
        ConnectionTerminated => "connection-terminated",
        ConnectionTimeout => "connection-timeout",
        ConnectionReadTimeout => "connection-read-timeout",
        ConnectionWriteTimeout => "connection-write-timeout",
        ConnectionLimitReached => "connection-limit-reached",
        TlsProtocolError => "TLS-protocol-error",
        TlsCertificateError => "TLS-certificate-error",
        TlsAlertReceived(_) => "TLS-alert-received",
        HttpRequestDenied => "HTTP-request-denied",
        HttpRequestLengthRequired => "HTTP-request-length-required",
        HttpRequestBodySize(_) => "HTTP-request-body-size",
        HttpRequestMethodInvalid => "HTTP-request-method-invalid",
        HttpRequestUriInvalid => "HTTP-request-URI-invalid",
        HttpRequestUriTooLong => "HTTP-request-URI-too-long",
        HttpRequestHeaderSectionSize(_) => "HTTP-request-header-section-size",
        HttpRequestHeaderSize(_) => "HTTP-request-header-size",
        HttpRequestTrailerSectionSize(_) => "HTTP-request-trailer-section-size",
        HttpRequestTrailerSize(_) => "HTTP-request-trailer-size",
        HttpResponseIncomplete => "HTTP-response-incomplete",
        HttpResponseHeaderSectionSize(_) => "HTTP-response-header-section-size",
        HttpResponseHeaderSize(_) => "HTTP-response-header-size",
        HttpResponseBodySize(_) => "HTTP-response-body-size",
        HttpResponseTrailerSectionSize(_) => "HTTP-response-trailer-section-size",
        HttpResponseTrailerSize(_) => "HTTP-response-trailer-size",
        HttpResponseTransferCoding(_) => "HTTP-response-transfer-coding",
        HttpResponseContentCoding(_) => "HTTP-response-content-coding",
        HttpResponseTimeout => "HTTP-response-timeout",
        HttpUpgradeFailed => "HTTP-upgrade-failed",
        HttpProtocolError => "HTTP-protocol-error",
        LoopDetected => "loop-detected",
        ConfigurationError => "configuration-error",
        InternalError(_) => "internal-error",
    }
}

fn header_error_name(err: &HeaderError) -> &'static str {
    match err {
        HeaderError::InvalidSyntax => "invalid-syntax",
        HeaderError::Forbidden => "forbidden",
        HeaderError::Immutable => "immutable",
    }
}

fn now() -> u64 {
    monotonic_clock::now()
}

fn micros_since(start: u64) -> u64 {
    now().saturating_sub(start) / 1000
}

/// `wasi:config/store.get`, with a store error as text (it holds no value).
fn secret(key: &str) -> Result<Option<String>, String> {
    store::get(key).map_err(|e| format!("{e:?}"))
}

/// What a request body is made of: `text`, then `a_bytes` bytes from `a` (all `a`s).
struct BodySource<'a> {
    text: &'a [u8],
    a_bytes: u64,
    a: Vec<u8>,
}

impl BodySource<'_> {
    fn len(&self) -> u64 {
        self.text.len() as u64 + self.a_bytes
    }

    /// The next bytes to write, at most `max`.
    fn next(&self, max: usize) -> &[u8] {
        if !self.text.is_empty() {
            &self.text[..self.text.len().min(max)]
        } else {
            let n = (self.a_bytes.min(self.a.len() as u64) as usize).min(max);
            &self.a[..n]
        }
    }

    fn advance(&mut self, n: usize) {
        if !self.text.is_empty() {
            self.text = &self.text[n..];
        } else {
            self.a_bytes -= n as u64;
        }
    }
}

/// Splits `scheme://authority/path?query#fragment` (the fragment is not sent).
fn split_url(url: &str) -> Option<(Scheme, &str, String)> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "http" => Scheme::Http,
        "https" => Scheme::Https,
        "" => return None,
        other => Scheme::Other(other.to_string()),
    };
    let rest = rest.split('#').next().unwrap_or("");
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    if authority.is_empty() {
        return None;
    }
    let path = if path.starts_with('/') { path.to_string() } else { format!("/{path}") };
    Some((scheme, authority, path))
}

fn method(name: &str) -> Method {
    match name.to_ascii_uppercase().as_str() {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        "POST" => Method::Post,
        "PUT" => Method::Put,
        "DELETE" => Method::Delete,
        "CONNECT" => Method::Connect,
        "OPTIONS" => Method::Options,
        "TRACE" => Method::Trace,
        "PATCH" => Method::Patch,
        _ => Method::Other(name.to_string()),
    }
}

/// Builds the request resource and its options; nothing is sent yet.
fn build(req: &Request, body_len: Option<u64>) -> Result<(OutgoingRequest, RequestOptions), Fail> {
    let (scheme, authority, path) =
        split_url(&req.url).ok_or_else(|| Fail::new("invalid-url", format!("cannot split {:?}", req.url), "build"))?;
    if req.method.is_empty() {
        return Err(Fail::new("invalid-method", "empty method", "build"));
    }

    let headers = Fields::new();
    let append = |name: &str, value: &str| {
        headers
            .append(name, value.as_bytes())
            .map_err(|e| Fail::new(header_error_name(&e), format!("header {name:?}: {e:?}"), "build"))
    };
    for (name, value) in &req.headers {
        append(name, value)?;
    }
    for (name, key) in &req.secret_headers {
        if let Ok(Some(value)) = secret(key) {
            append(name, &value)?;
        }
    }
    if let Some(len) = body_len {
        if !req.headers.keys().any(|k| k.eq_ignore_ascii_case("content-length")) {
            append("content-length", &len.to_string())?;
        }
    }

    let request = OutgoingRequest::new(headers);
    let refused = |what: &str| Fail::new("invalid-request", format!("{what} refused"), "build");
    request.set_method(&method(&req.method)).map_err(|()| refused("set-method"))?;
    request.set_scheme(Some(&scheme)).map_err(|()| refused("set-scheme"))?;
    request.set_authority(Some(authority)).map_err(|()| refused("set-authority"))?;
    request.set_path_with_query(Some(&path)).map_err(|()| refused("set-path-with-query"))?;

    let options = RequestOptions::new();
    let ns = |ms: u64| ms.saturating_mul(1_000_000);
    if let Some(ms) = req.connect_timeout_ms {
        options.set_connect_timeout(Some(ns(ms))).map_err(|()| refused("set-connect-timeout"))?;
    }
    if let Some(ms) = req.first_byte_timeout_ms {
        options.set_first_byte_timeout(Some(ns(ms))).map_err(|()| refused("set-first-byte-timeout"))?;
    }
    if let Some(ms) = req.between_bytes_timeout_ms {
        options.set_between_bytes_timeout(Some(ns(ms))).map_err(|()| refused("set-between-bytes-timeout"))?;
    }
    Ok((request, options))
}

/// Blocks until the stream may be written again (true) or, first, the response has arrived
/// (false): a server may answer (or the connection fail) before it has read the whole body,
/// and a stream that is never drained again would block forever.
fn wait_writable(stream: &OutputStream, response: &FutureIncomingResponse) -> bool {
    let writable = stream.subscribe();
    let answered = response.subscribe();
    let ready = poll::poll(&[&writable, &answered]);
    ready.contains(&0) || !ready.contains(&1)
}

/// Streams the body within `check-write` permits. Ok(true): all written; Ok(false): the
/// response came first and the rest was not written.
fn pump(stream: &OutputStream, mut source: BodySource, response: &FutureIncomingResponse) -> Result<bool, Fail> {
    while source.len() > 0 {
        let permit = stream.check_write().map_err(|e| Fail::stream(e, "send"))?;
        if permit == 0 {
            if !wait_writable(stream, response) {
                return Ok(false);
            }
            continue;
        }
        let chunk = source.next(permit.min(usize::MAX as u64) as usize);
        let n = chunk.len();
        stream.write(chunk).map_err(|e| Fail::stream(e, "send"))?;
        source.advance(n);
    }
    stream.flush().map_err(|e| Fail::stream(e, "send"))?;
    // A flush is done when the stream is writable again; check-write then reports how it went.
    // Everything has been handed over either way, so the body is finished even if the
    // response comes first.
    if wait_writable(stream, response) {
        stream.check_write().map_err(|e| Fail::stream(e, "send"))?;
    }
    Ok(true)
}

/// Writes and finishes the body. A body left unfinished (the response came first, or writing
/// failed) is dropped, which tells the host the body was aborted.
fn send_body(body: OutgoingBody, source: BodySource, response: &FutureIncomingResponse) -> Result<(), Fail> {
    let stream = body.write().map_err(|()| Fail::new("invalid-request", "outgoing-body.write refused", "send"))?;
    let pumped = pump(&stream, source, response);
    // The stream is the body's child: it must go first.
    drop(stream);
    match pumped {
        Ok(true) => OutgoingBody::finish(body, None).map_err(|code| Fail::code(&code, "send")),
        Ok(false) => Ok(()),
        Err(fail) => Err(fail),
    }
}

/// Waits for the response; with a limit (ns), Ok(None) if it has not come by then.
fn await_response(response: &FutureIncomingResponse, limit: Option<u64>) -> Result<Option<IncomingResponse>, Fail> {
    let timer = limit.map(monotonic_clock::subscribe_duration);
    loop {
        match response.get() {
            Some(Ok(Ok(r))) => return Ok(Some(r)),
            Some(Ok(Err(code))) => return Err(Fail::code(&code, "response")),
            Some(Err(())) => return Err(Fail::new("internal", "response already taken", "response")),
            None => {
                let answered = response.subscribe();
                match &timer {
                    None => answered.block(),
                    Some(timer) => {
                        if !poll::poll(&[&answered, timer]).contains(&0) {
                            return Ok(None);
                        }
                    }
                }
            }
        }
    }
}

/// Reads the whole response: status, headers, the first 64 KiB of the body and its length.
fn read_response(response: IncomingResponse, start: u64) -> Result<Value, Fail> {
    let status = response.status();
    let mut headers: Map<String, Value> = Map::new();
    {
        let fields = response.headers();
        let mut joined: BTreeMap<String, String> = BTreeMap::new();
        for (name, value) in fields.entries() {
            let value = String::from_utf8_lossy(&value).into_owned();
            joined.entry(name).and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            }).or_insert(value);
        }
        headers.extend(joined.into_iter().map(|(k, v)| (k, Value::String(v))));
        // `fields` (the response's child) is dropped here.
    }

    let body = response.consume().map_err(|()| Fail::new("internal", "incoming-response.consume refused", "body"))?;
    let stream = body.stream().map_err(|()| Fail::new("internal", "incoming-body.stream refused", "body"))?;
    let mut kept: Vec<u8> = Vec::new();
    let mut body_len: u64 = 0;
    let read = loop {
        match stream.blocking_read(READ) {
            Ok(chunk) => {
                body_len += chunk.len() as u64;
                let room = KEEP.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Err(StreamError::Closed) => break Ok(()),
            Err(StreamError::LastOperationFailed(e)) => break Err(Fail::io(&e, "body")),
        }
    };
    let micros = micros_since(start);
    // Children before parents: the stream, then the body (finished, trailers ignored).
    drop(stream);
    drop(IncomingBody::finish(body));
    drop(response);
    match read {
        Ok(()) => Ok(json!({
            "status": status,
            "headers": headers,
            "body": String::from_utf8_lossy(&kept),
            "body_len": body_len,
            "micros": micros,
        })),
        Err(mut fail) => {
            fail.partial = Some((status, body_len));
            Err(fail)
        }
    }
}

/// One request, start to end; always a result.
fn send(req: &Request) -> Value {
    let a_bytes = req.body_bytes.unwrap_or(0);
    let source = BodySource {
        text: req.body.as_deref().unwrap_or("").as_bytes(),
        a_bytes,
        a: vec![b'a'; a_bytes.min(A_CHUNK as u64) as usize],
    };
    let has_body = req.body.is_some() || req.body_bytes.is_some();
    let (request, options) = match build(req, has_body.then(|| source.len())) {
        Ok(built) => built,
        Err(fail) => return fail.to_json(0),
    };
    // Taken before `handle` (which consumes the request), written after it, so that a body of
    // any size streams while the host sends it. No body: not taken, and the request has none.
    let body = if has_body {
        match request.body() {
            Ok(body) => Some(body),
            Err(()) => return Fail::new("invalid-request", "outgoing-request.body refused", "build").to_json(0),
        }
    } else {
        None
    };

    let start = now();
    let response = match outgoing_handler::handle(request, Some(options)) {
        Ok(response) => response,
        Err(code) => return Fail::code(&code, "send").to_json(micros_since(start)),
    };
    let sent = match body {
        Some(body) => send_body(body, source, &response),
        None => Ok(()),
    };
    let result = match sent {
        Ok(()) => match await_response(&response, None) {
            Ok(Some(r)) => read_response(r, start),
            Ok(None) => Err(Fail::new("internal", "no response", "response")),
            Err(fail) => Err(fail),
        },
        // The host said what was wrong with the body (e.g. HTTP-request-body-size).
        Err(fail) if fail.error != "stream" => Err(fail),
        // The body stream just closed: the exchange failed, and the response future should say
        // why (connection-refused, ...); it is given a little time to, not forever.
        Err(fail) => match await_response(&response, Some(GRACE_NS)) {
            Err(response_fail) => Err(response_fail),
            Ok(_) => Err(fail),
        },
    };
    drop(response);
    result.unwrap_or_else(|fail| fail.to_json(micros_since(start)))
}

fn run(probe: Probe) -> Result<Outcome, Failure> {
    if probe.requests.iter().any(|r| r.body.is_some() && r.body_bytes.is_some()) {
        return Err(bad_input("a request has both body and body_bytes"));
    }
    let span = probe.span.as_ref().map(|s| {
        let mut attributes: Vec<(String, String)> = s.attributes.clone().into_iter().collect();
        for (name, key) in &s.secret_attributes {
            if let Ok(Some(value)) = secret(key) {
                attributes.push((name.clone(), value));
            }
        }
        (trace::start_span(&s.name, &attributes), s)
    });
    let mut results = Vec::new();
    for req in &probe.requests {
        for _ in 0..probe.repeat {
            results.push(send(req));
        }
    }
    if let Some((handle, s)) = span {
        if let Some(event) = &s.event {
            trace::add_event(handle, event, &[("requests".into(), results.len().to_string())]);
        }
        trace::end_span(handle);
    }

    let mut secrets = Map::new();
    for key in &probe.read_secrets {
        let entry = match secret(key) {
            Ok(Some(value)) => json!({ "present": true, "len": value.len() }),
            Ok(None) => json!({ "present": false }),
            Err(e) => json!({ "present": false, "error": e }),
        };
        secrets.insert(key.clone(), entry);
    }

    for key in &probe.print_secrets {
        let line = match secret(key) {
            Ok(Some(value)) => format!("secret {key} = {value}"),
            _ => format!("secret {key} is not set"),
        };
        println!("{line}");
        eprintln!("{line}");
        host::log(Level::Info, &line);
    }

    if let Some(key) = &probe.fail_with_secret {
        let message = match secret(key) {
            Ok(Some(value)) => format!("the secret is {value}"),
            _ => format!("the secret {key} is not set"),
        };
        return Err(Failure { code: "leak".into(), message, retryable: false });
    }

    Ok(Outcome::Done(json!({ "results": results, "secrets": secrets }).to_string()))
}

fn bad_input(message: impl Into<String>) -> Failure {
    Failure { code: "bad_input".into(), message: message.into(), retryable: false }
}

struct HttpProbe;

impl Guest for HttpProbe {
    fn run(_job: Job, input: String) -> Result<Outcome, Failure> {
        let probe: Probe = serde_json::from_str(&input).map_err(|e| bad_input(format!("malformed input: {e}")))?;
        run(probe)
    }
}

export!(HttpProbe);
