//! A small blocking HTTP client over `wasi:http`, for tasks whose hosts the task's `--allow`
//! list names. Off the sandbox every request fails with [`HttpError`] kind `unavailable`.
//!
//! ```ignore
//! let page = taskbox_sdk::http::Request::get("https://api.example.com/v1/rates")
//!     .header("accept", "application/json")
//!     .send()?
//!     .error_for_status()?
//!     .json::<Rates>()?;
//! ```

use crate::Failure;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt;
use std::time::Duration;

/// A request, built then sent.
#[derive(Debug, Clone)]
pub struct Request {
    method: String,
    url: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    timeout: Option<Duration>,
    invalid: Option<String>,
}

/// A response, its body read whole.
#[derive(Debug, Clone)]
pub struct Response {
    /// The HTTP status, such as 200.
    pub status: u16,
    /// Its headers in the order sent; names are lowercase.
    pub headers: Vec<(String, String)>,
    /// Its body.
    pub body: Vec<u8>,
}

/// Why a request got no usable response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpError {
    /// `invalid` (the request is wrong: another attempt will not help), `denied` (the task may
    /// not reach the host), `status` (an answer outside 2xx), `unavailable` (not in the
    /// sandbox), or `transport` (DNS, connect, TLS, timeout, reset).
    pub kind: &'static str,
    /// The status, for kind `status`.
    pub status: Option<u16>,
    pub message: String,
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for HttpError {}

/// An HTTP error as the attempt's failure: code `http_error` (retryable) for transport
/// failures and 5xx/429 answers, `http_<status>` final for other answers, `http_invalid` or
/// `http_denied` final for what another attempt would repeat.
impl From<HttpError> for Failure {
    fn from(e: HttpError) -> Self {
        match (e.kind, e.status) {
            ("status", Some(s)) => Failure {
                code: format!("http_{s}"),
                message: e.message,
                retryable: s >= 500 || s == 429,
            },
            ("transport", _) => Failure::retryable("http_error", e.message),
            (kind, _) => Failure::fatal(format!("http_{kind}"), e.message),
        }
    }
}

impl Request {
    /// A request with any method.
    pub fn new(method: &str, url: &str) -> Self {
        Request {
            method: method.to_ascii_uppercase(),
            url: url.into(),
            headers: Vec::new(),
            body: Vec::new(),
            timeout: None,
            invalid: None,
        }
    }

    pub fn get(url: &str) -> Self {
        Self::new("GET", url)
    }

    pub fn post(url: &str) -> Self {
        Self::new("POST", url)
    }

    pub fn put(url: &str) -> Self {
        Self::new("PUT", url)
    }

    pub fn patch(url: &str) -> Self {
        Self::new("PATCH", url)
    }

    pub fn delete(url: &str) -> Self {
        Self::new("DELETE", url)
    }

    /// Adds a header (repeat a name to send it more than once).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_ascii_lowercase(), value.into()));
        self
    }

    /// The body, as bytes.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = body.into();
        self
    }

    /// The body as JSON, with `content-type: application/json`.
    pub fn json(mut self, value: &impl Serialize) -> Self {
        match serde_json::to_vec(value) {
            Ok(body) => {
                self.body = body;
                self.header("content-type", "application/json")
            }
            Err(e) => {
                self.invalid = Some(format!("the body does not serialize as JSON: {e}"));
                self
            }
        }
    }

    /// How long to wait for the connection and then for the first byte of the answer (the
    /// attempt's own timeout bounds it anyway).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sends the request and reads the whole answer. Any status is a response; see
    /// [`Response::error_for_status`].
    pub fn send(self) -> Result<Response, HttpError> {
        if let Some(why) = self.invalid {
            return Err(HttpError {
                kind: "invalid",
                status: None,
                message: why,
            });
        }
        wasi::send(self)
    }
}

impl Response {
    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body parsed as JSON into `T`; a body that does not parse is the error kind `invalid`.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, HttpError> {
        serde_json::from_slice(&self.body).map_err(|e| HttpError {
            kind: "invalid",
            status: Some(self.status),
            message: format!("the answer ({}) is not the JSON expected: {e}", self.status),
        })
    }

    /// This response if its status is 2xx, else the error kind `status`.
    pub fn error_for_status(self) -> Result<Self, HttpError> {
        if (200..300).contains(&self.status) {
            return Ok(self);
        }
        let mut snippet = self.text();
        snippet.truncate(snippet.floor_char_boundary_compat(200));
        Err(HttpError {
            kind: "status",
            status: Some(self.status),
            message: format!("answered {}: {snippet}", self.status),
        })
    }
}

/// `str::floor_char_boundary` for the Rust versions this crate supports.
trait FloorCharBoundary {
    fn floor_char_boundary_compat(&self, at: usize) -> usize;
}

impl FloorCharBoundary for String {
    fn floor_char_boundary_compat(&self, at: usize) -> usize {
        (0..=at.min(self.len()))
            .rev()
            .find(|&i| self.is_char_boundary(i))
            .unwrap_or(0)
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod wasi {
    use super::{HttpError, Request, Response};

    pub fn send(req: Request) -> Result<Response, HttpError> {
        Err(HttpError {
            kind: "unavailable",
            status: None,
            message: format!(
                "{} {}: outbound HTTP runs only inside taskbox's sandbox",
                req.method, req.url
            ),
        })
    }
}

#[cfg(target_arch = "wasm32")]
mod wasi {
    use super::{HttpError, Request, Response};
    use wasip2::http::outgoing_handler;
    use wasip2::http::types::{
        ErrorCode, Fields, FutureIncomingResponse, IncomingBody, IncomingResponse, Method,
        OutgoingBody, OutgoingRequest, RequestOptions, Scheme,
    };
    use wasip2::io::poll;
    use wasip2::io::streams::{OutputStream, StreamError};

    /// Bytes asked for per read of the answer.
    const READ: u64 = 64 * 1024;

    pub fn send(req: Request) -> Result<Response, HttpError> {
        let target = format!("{} {}", req.method, req.url);
        let (request, options) = build(&req).map_err(|m| invalid(&target, m))?;
        // Taken before `handle` (which consumes the request), written after it, so that a body
        // of any size streams while the host sends it.
        let body = request
            .body()
            .map_err(|()| invalid(&target, "the request's body was taken"))?;
        let pending =
            outgoing_handler::handle(request, Some(options)).map_err(|c| failed(&target, &c))?;
        let written = write_body(body, &req.body, &pending);
        pending.subscribe().block();
        let response = match pending.get() {
            Some(Ok(Ok(response))) => response,
            Some(Ok(Err(code))) => return Err(failed(&target, &code)),
            _ => return Err(transport(&target, "no response after it was ready")),
        };
        // A body write fails when the exchange does; the response above says why if it can.
        written.map_err(|m| transport(&target, m))?;
        read(response).map_err(|m| transport(&target, m))
    }

    fn build(req: &Request) -> Result<(OutgoingRequest, RequestOptions), String> {
        let (scheme, rest) = match req.url.split_once("://") {
            Some((s, rest)) if s.eq_ignore_ascii_case("https") => (Scheme::Https, rest),
            Some((s, rest)) if s.eq_ignore_ascii_case("http") => (Scheme::Http, rest),
            _ => return Err("not an http(s) URL".into()),
        };
        let (authority, path) = rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()));
        let path = path.split('#').next().unwrap_or("");
        let path = if path.starts_with('/') {
            path.to_owned()
        } else {
            format!("/{path}")
        };
        if authority.is_empty() {
            return Err("the URL has no host".into());
        }
        let fields = Fields::new();
        for (name, value) in &req.headers {
            fields
                .append(name, value.as_bytes())
                .map_err(|e| format!("header {name}: {e:?}"))?;
        }
        if !req.body.is_empty() {
            // With a length the host checks that the whole body was written.
            fields
                .append("content-length", req.body.len().to_string().as_bytes())
                .map_err(|e| format!("content-length: {e:?}"))?;
        }
        let request = OutgoingRequest::new(fields);
        let method = match req.method.as_str() {
            "GET" => Method::Get,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "PATCH" => Method::Patch,
            "DELETE" => Method::Delete,
            "HEAD" => Method::Head,
            "OPTIONS" => Method::Options,
            other => Method::Other(other.into()),
        };
        request
            .set_method(&method)
            .map_err(|()| format!("method {}", req.method))?;
        request
            .set_scheme(Some(&scheme))
            .map_err(|()| "scheme".to_string())?;
        request
            .set_authority(Some(authority))
            .map_err(|()| format!("host {authority}"))?;
        request
            .set_path_with_query(Some(&path))
            .map_err(|()| format!("path {path}"))?;
        let options = RequestOptions::new();
        if let Some(t) = req.timeout {
            let ns = u64::try_from(t.as_nanos()).unwrap_or(u64::MAX);
            options
                .set_connect_timeout(Some(ns))
                .map_err(|()| "connect timeout".to_string())?;
            options
                .set_first_byte_timeout(Some(ns))
                .map_err(|()| "first-byte timeout".to_string())?;
        }
        Ok((request, options))
    }

    /// Writes the body within the host's write permits, giving up when the answer comes
    /// first (a server may answer before it has read everything).
    fn write_body(
        body: OutgoingBody,
        mut data: &[u8],
        answer: &FutureIncomingResponse,
    ) -> Result<(), String> {
        let stream = body
            .write()
            .map_err(|()| "the body's stream was taken".to_string())?;
        let pumped = pump(&stream, &mut data, answer);
        drop(stream);
        pumped?;
        OutgoingBody::finish(body, None).map_err(|c| format!("{c:?}"))
    }

    fn pump(
        stream: &OutputStream,
        data: &mut &[u8],
        answer: &FutureIncomingResponse,
    ) -> Result<(), String> {
        while !data.is_empty() {
            let permit = stream.check_write().map_err(|e| stream_error(&e))?;
            if permit == 0 {
                let writable = stream.subscribe();
                let answered = answer.subscribe();
                let ready = poll::poll(&[&writable, &answered]);
                if !ready.contains(&0) {
                    return Ok(());
                }
                continue;
            }
            let n = usize::try_from(permit)
                .unwrap_or(usize::MAX)
                .min(data.len());
            stream.write(&data[..n]).map_err(|e| stream_error(&e))?;
            *data = &data[n..];
        }
        stream.flush().map_err(|e| stream_error(&e))
    }

    fn read(response: IncomingResponse) -> Result<Response, String> {
        let status = response.status();
        let headers = response
            .headers()
            .entries()
            .into_iter()
            .map(|(n, v)| (n, String::from_utf8_lossy(&v).into_owned()))
            .collect();
        let body = response
            .consume()
            .map_err(|()| "the answer's body was taken".to_string())?;
        let stream = body
            .stream()
            .map_err(|()| "the answer's body stream was taken".to_string())?;
        let mut bytes = Vec::new();
        let read = loop {
            match stream.blocking_read(READ) {
                Ok(chunk) => bytes.extend_from_slice(&chunk),
                Err(StreamError::Closed) => break Ok(()),
                Err(e) => break Err(stream_error(&e)),
            }
        };
        // Children before parents: the stream, then the body.
        drop(stream);
        drop(IncomingBody::finish(body));
        read.map(|()| Response {
            status,
            headers,
            body: bytes,
        })
    }

    fn stream_error(e: &StreamError) -> String {
        match e {
            StreamError::Closed => "the connection closed".into(),
            StreamError::LastOperationFailed(e) => e.to_debug_string(),
        }
    }

    fn invalid(target: &str, why: impl std::fmt::Display) -> HttpError {
        HttpError {
            kind: "invalid",
            status: None,
            message: format!("{target}: {why}"),
        }
    }

    fn transport(target: &str, why: impl std::fmt::Display) -> HttpError {
        HttpError {
            kind: "transport",
            status: None,
            message: format!("{target}: {why}"),
        }
    }

    /// The host's error code, sorted: what another attempt would repeat, or not.
    fn failed(target: &str, code: &ErrorCode) -> HttpError {
        let kind = match code {
            ErrorCode::HttpRequestDenied => "denied",
            ErrorCode::HttpRequestUriInvalid
            | ErrorCode::HttpRequestMethodInvalid
            | ErrorCode::HttpRequestHeaderSize(_)
            | ErrorCode::HttpRequestBodySize(_) => "invalid",
            _ => "transport",
        };
        HttpError {
            kind,
            status: None,
            message: format!("{target}: {code:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_outside_2xx_is_an_error_that_says_whether_to_retry() {
        let answer = |status| Response {
            status,
            headers: vec![],
            body: b"nope".to_vec(),
        };
        assert!(answer(204).error_for_status().is_ok());
        let f: Failure = answer(503).error_for_status().unwrap_err().into();
        assert_eq!((f.code.as_str(), f.retryable), ("http_503", true));
        let f: Failure = answer(404).error_for_status().unwrap_err().into();
        assert_eq!((f.code.as_str(), f.retryable), ("http_404", false));
        let f: Failure = answer(429).error_for_status().unwrap_err().into();
        assert!(f.retryable);
    }

    #[test]
    fn off_the_sandbox_a_request_is_unavailable_and_final() {
        let e = Request::get("https://example.com/").send().unwrap_err();
        assert_eq!(e.kind, "unavailable");
        assert!(!Failure::from(e).retryable);
    }

    #[test]
    fn headers_are_found_in_any_case() {
        let r = Response {
            status: 200,
            headers: vec![("content-type".into(), "text/plain".into())],
            body: vec![],
        };
        assert_eq!(r.header("Content-Type"), Some("text/plain"));
        assert_eq!(r.header("x-none"), None);
    }
}
