//! What can go wrong talking to a taskbox server, in words that say what to do.

use serde_json::Value;
use std::fmt;
use std::time::Duration;

/// Every failure of this client.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The client was set up wrong (a URL, a token, a header value); nothing was sent.
    #[error("{0}")]
    Config(String),
    /// The server could not be reached at all.
    #[error(transparent)]
    Unreachable(#[from] Unreachable),
    /// The server answered with an error (boxed: it is the largest, and results carry it).
    #[error(transparent)]
    Api(Box<ApiError>),
    /// The request was sent but its answer was lost on the way (a reset connection, a cut body).
    #[error("{what} to {base} failed: {cause}")]
    Transport {
        what: String,
        base: String,
        cause: String,
    },
    /// A 2xx answer whose body is not JSON: something other than taskbox answered.
    #[error("{what} answered {status} with a body that is not JSON; is {base} a taskbox server?")]
    NotJson {
        what: String,
        status: u16,
        base: String,
    },
    /// JSON that does not fit the type asked for: a server of another version, most likely.
    #[error("{what} answered {status} with JSON this client cannot read; is the server another version?")]
    Decode {
        what: String,
        status: u16,
        #[source]
        source: serde_json::Error,
    },
    /// [`crate::Client::wait_for_job`] gave up.
    #[error("job {id} is still {status} after {waited:?}")]
    WaitTimedOut {
        id: String,
        status: String,
        waited: Duration,
    },
}

impl Error {
    /// The server's error answer, when that is what this is.
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            Error::Api(e) => Some(e.as_ref()),
            _ => None,
        }
    }

    /// True for failures a caller may simply retry after a pause: no answer, or
    /// the server asking for one (429, 502, 503, 504).
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Unreachable(_) => true,
            Error::Api(e) => e.is_transient(),
            _ => false,
        }
    }
}

impl From<ApiError> for Error {
    fn from(e: ApiError) -> Error {
        Error::Api(Box::new(e))
    }
}

/// The server could not be reached at all (nothing listening, wrong host, timeout).
#[derive(Debug, Clone, PartialEq)]
pub struct Unreachable {
    pub url: String,
    pub cause: String,
}

impl fmt::Display for Unreachable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot reach the taskbox server at {} ({}); start one with `taskbox serve`, \
             or point TASKBOX_URL (or --url) at a running server",
            self.url, self.cause
        )
    }
}

impl std::error::Error for Unreachable {}

/// An error answer. `code` is `None` when the body was not taskbox's error
/// shape (a proxy's page, an empty body).
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: u16,
    pub code: Option<String>,
    pub message: String,
    pub details: Value,
    /// How long the server asked us to wait (a 429 `RATE_LIMITED`'s
    /// `Retry-After`, or its `details.retry_after_ms` when finer).
    pub retry_after: Option<Duration>,
}

impl ApiError {
    /// Reads `{"error": {"code", "message", "details"}}`, or makes the best of any other body.
    pub fn from_body(status: u16, body: &[u8]) -> ApiError {
        let parsed: Option<Value> = serde_json::from_slice(body).ok();
        if let Some(error) = parsed.as_ref().and_then(|v| v.get("error")) {
            if let Some(code) = error.get("code").and_then(Value::as_str) {
                return ApiError {
                    status,
                    code: Some(code.to_owned()),
                    message: error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    details: error.get("details").cloned().unwrap_or(Value::Null),
                    retry_after: None,
                };
            }
        }
        let text = String::from_utf8_lossy(body);
        let text = text.trim();
        // A proxy's HTML error page can be long; its first line says enough.
        let mut message: String = text
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(200)
            .collect();
        if message.len() < text.len() {
            message.push('…');
        }
        ApiError {
            status,
            code: None,
            message,
            details: Value::Null,
            retry_after: None,
        }
    }

    /// Adds the wait a `Retry-After` header (delta-seconds, as taskbox sends
    /// it) asked for; the error's `details.retry_after_ms`, when there, is
    /// the same wait to the millisecond and wins.
    pub fn with_retry_after(mut self, header: Option<&str>) -> ApiError {
        let from_details = self
            .details
            .get("retry_after_ms")
            .and_then(Value::as_u64)
            .map(Duration::from_millis);
        let from_header = header
            .and_then(|h| h.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        self.retry_after = from_header.and(from_details).or(from_header);
        self
    }

    /// True for the answers a caller may simply retry after a pause.
    pub fn is_transient(&self) -> bool {
        matches!(self.status, 429 | 502 | 503 | 504)
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.code {
            Some(code) => write!(f, "{code} ({}): {}", self.status, self.message)?,
            None => {
                let reason = reqwest::StatusCode::from_u16(self.status)
                    .ok()
                    .and_then(|s| s.canonical_reason())
                    .unwrap_or("");
                let message = if self.message.is_empty() {
                    "the server gave no explanation"
                } else {
                    &self.message
                };
                write!(f, "HTTP {} {reason}: {message}", self.status)?;
            }
        }
        write_details(f, self.code.as_deref(), &self.details)?;
        if self.status == 401 {
            write!(
                f,
                "\n  the token was refused: check TASKBOX_TOKEN (or --token)"
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for ApiError {}

/// Invalid-input details are a list of `{pointer, message}`: one line each reads best.
fn write_details(f: &mut fmt::Formatter<'_>, code: Option<&str>, details: &Value) -> fmt::Result {
    if details.is_null() {
        return Ok(());
    }
    if code == Some("JOB_INVALID_INPUT") {
        if let Some(items) = details.as_array() {
            for item in items {
                let pointer = item.get("pointer").and_then(Value::as_str).unwrap_or("");
                let message = item.get("message").and_then(Value::as_str);
                let at = if pointer.is_empty() {
                    "(the input)"
                } else {
                    pointer
                };
                match message {
                    Some(m) => write!(f, "\n  {at}: {m}")?,
                    None => write!(f, "\n  {item}")?,
                }
            }
            return Ok(());
        }
    }
    write!(f, "\n  details: {details}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn invalid_input_details_read_as_lines() {
        let body = json!({"error": {"code": "JOB_INVALID_INPUT", "message": "the input does not match the task's schema",
            "details": [{"pointer": "/width", "message": "\"x\" is not of type \"integer\""},
                        {"pointer": "", "message": "\"height\" is a required property"}]}});
        let e = ApiError::from_body(400, body.to_string().as_bytes());
        assert_eq!(
            e.to_string(),
            "JOB_INVALID_INPUT (400): the input does not match the task's schema\n  \
             /width: \"x\" is not of type \"integer\"\n  (the input): \"height\" is a required property"
        );
    }

    #[test]
    fn other_details_are_compact_json() {
        let body = json!({"error": {"code": "CONFLICT", "message": "unique key taken", "details": {"job": "01J"}}});
        let e = ApiError::from_body(409, body.to_string().as_bytes());
        assert_eq!(
            e.to_string(),
            "CONFLICT (409): unique key taken\n  details: {\"job\":\"01J\"}"
        );
        let body = json!({"error": {"code": "TASK_NOT_FOUND", "message": "no task resize"}});
        let e = ApiError::from_body(404, body.to_string().as_bytes());
        assert_eq!(e.to_string(), "TASK_NOT_FOUND (404): no task resize");
        assert!(!e.is_transient());
    }

    #[test]
    fn bodies_of_another_shape_still_say_something() {
        let e = ApiError::from_body(502, b"<html>bad gateway</html>\n<body>...</body>");
        assert_eq!(e.code, None);
        assert_eq!(
            e.to_string(),
            "HTTP 502 Bad Gateway: <html>bad gateway</html>…"
        );
        assert!(e.is_transient());
        let e = ApiError::from_body(500, b"");
        assert_eq!(
            e.to_string(),
            "HTTP 500 Internal Server Error: the server gave no explanation"
        );
    }

    #[test]
    fn refused_token_hints_at_the_variable() {
        let body = json!({"error": {"code": "UNAUTHENTICATED", "message": "bad token"}});
        let e = ApiError::from_body(401, body.to_string().as_bytes());
        assert!(e.to_string().contains("check TASKBOX_TOKEN"));
    }

    #[test]
    fn retry_after_is_read_from_the_header_and_refined_by_the_details() {
        let limited = json!({"error": {"code": "RATE_LIMITED", "message": "slow down",
            "details": {"retry_after_ms": 250}}});
        let e = ApiError::from_body(429, limited.to_string().as_bytes());
        assert_eq!(
            e.clone().with_retry_after(Some("1")).retry_after,
            Some(Duration::from_millis(250))
        );
        // Without the header there is no wait to honour: a quota, not a rate.
        assert_eq!(e.with_retry_after(None).retry_after, None);
        let bare = ApiError::from_body(429, b"");
        assert_eq!(
            bare.clone().with_retry_after(Some(" 2 ")).retry_after,
            Some(Duration::from_secs(2))
        );
        assert_eq!(bare.with_retry_after(Some("soon")).retry_after, None);
    }
}
