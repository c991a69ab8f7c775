//! signed-webhook: a taskbox task that POSTs an event to a webhook, signed with HMAC-SHA256 of
//! the tenant secret `WEBHOOK_SECRET` (the way GitHub and Stripe sign theirs).
//!
//! Input `{"url": "https://hooks.example.org/x", "event": <any JSON>}` → output `{"status": 200}`.
//! The request carries the event as its JSON body, `content-type: application/json`,
//! `x-signature: sha256=<hex HMAC of the body>` and `idempotency-key: <job id>`.
//! Failures: `missing_secret`, `bad_input` (also for a URL that is not http(s)) and `http_4xx`
//! are final; `http_5xx` and `http_error` (no answer: DNS, connect, TLS, timeout, refused by the
//! host's policy; the wasi:http error code in the message) are retryable. Any other status that
//! is not 2xx is final too (`http_3xx`: redirects are not followed).

wit_bindgen::generate!({
    // The task world plus wasi:config/store (see ../wit/http-task.wit).
    path: ["../../../wit", "../wit"],
    world: "taskbox:guest-http/http-task",
    // Bindings for interfaces of other packages (taskbox:task, wasi:config) too.
    generate_all,
});

use hmac::{Hmac, Mac};
use serde::Deserialize;
use sha2::Sha256;
use std::io::Write;
use taskbox::task::host::{self, Level};
use wasi::config::store;
use wasip2::http::outgoing_handler;
use wasip2::http::types::{ErrorCode, Fields, Method, OutgoingBody, OutgoingRequest, Scheme};

#[derive(Deserialize)]
struct Input {
    url: String,
    event: serde_json::Value,
}

fn fail(code: &str, message: impl Into<String>, retryable: bool) -> Failure {
    Failure { code: code.into(), message: message.into(), retryable }
}

struct SignedWebhook;

impl Guest for SignedWebhook {
    fn run(job: Job, input: String) -> Result<Outcome, Failure> {
        let input: Input = serde_json::from_str(&input).map_err(|e| fail("bad_input", e.to_string(), false))?;

        // Secrets come from the host's config store, not from the input, which is stored and
        // shown with the job. Only the secrets a task declares are visible to it.
        let secret = match store::get("WEBHOOK_SECRET") {
            Ok(Some(secret)) => secret,
            Ok(None) => {
                let message = "WEBHOOK_SECRET is not set: PUT /v1/secrets/WEBHOOK_SECRET, \
                               and declare it in the task's \"secrets\"";
                return Err(fail("missing_secret", message, false));
            }
            Err(e) => return Err(fail("config_error", format!("{e:?}"), true)),
        };

        // Sign exactly the bytes that are sent: the receiver computes the HMAC of the raw body.
        let body = input.event.to_string().into_bytes();
        let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes keys of any length");
        mac.update(&body);
        let signature = format!("sha256={}", hex(&mac.finalize().into_bytes()));

        // The job id is the same on every attempt: a receiver can drop a delivery it has seen.
        let headers = [
            ("content-type", "application/json"),
            ("x-signature", signature.as_str()),
            ("idempotency-key", job.id.as_str()),
        ];
        let status = post(&input.url, &headers, &body).map_err(|code| match code {
            // The same URL would be just as wrong on the next attempt.
            ErrorCode::HttpRequestUriInvalid => fail("bad_input", format!("not an http(s) URL: {}", input.url), false),
            code => fail("http_error", format!("POST {}: {code:?}", input.url), true),
        })?;
        host::log(Level::Info, &format!("posted {} bytes to {}: {status}", body.len(), input.url));

        match status {
            200..=299 => Ok(Outcome::Done(format!("{{\"status\":{status}}}"))),
            // A 5xx may pass if tried again later; a 4xx (or a redirect) will not.
            _ => {
                let code = format!("http_{}xx", status / 100);
                Err(fail(&code, format!("POST {} answered {status}", input.url), status >= 500))
            }
        }
    }
}

/// POSTs `body` to `url` and returns the response's status (its body is not read).
/// Blocking calls: the attempt has nothing else to do meanwhile.
fn post(url: &str, headers: &[(&str, &str)], body: &[u8]) -> Result<u16, ErrorCode> {
    let (scheme, rest) = match url.split_once("://") {
        Some(("https", rest)) => (Scheme::Https, rest),
        Some(("http", rest)) => (Scheme::Http, rest),
        _ => return Err(ErrorCode::HttpRequestUriInvalid),
    };
    let (authority, path) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
    let path = format!("/{}", path.strip_prefix('/').unwrap_or(path));

    let fields = Fields::new();
    for (name, value) in headers {
        fields.append(name, value.as_bytes()).map_err(|e| internal(format!("header {name}: {e:?}")))?;
    }
    // With a content-length the host checks that the whole body was written before it ends it.
    fields.append("content-length", body.len().to_string().as_bytes()).map_err(|e| internal(format!("{e:?}")))?;

    let request = OutgoingRequest::new(fields);
    request.set_method(&Method::Post).map_err(|()| internal("method"))?;
    request
        .set_scheme(Some(&scheme))
        .and_then(|()| request.set_authority(Some(authority)))
        .and_then(|()| request.set_path_with_query(Some(&path)))
        .map_err(|()| ErrorCode::HttpRequestUriInvalid)?;
    let out = request.body().map_err(|()| internal("body taken twice"))?;

    // Send first, then write the body: the host streams it out as it is written, so a body of
    // any size gets through (written before `handle`, a large one would fill the host's buffer
    // and block for good).
    let pending = outgoing_handler::handle(request, None)?;
    let written = write_body(out, body);
    pending.subscribe().block();
    let response = match pending.get() {
        Some(Ok(response)) => response?,
        _ => return Err(internal("no response after it was ready")),
    };
    // When the exchange fails the write fails too; the response's error above says why.
    written?;
    Ok(response.status())
}

fn write_body(out: OutgoingBody, body: &[u8]) -> Result<(), ErrorCode> {
    let mut stream = out.write().map_err(|()| internal("body stream taken twice"))?;
    // `write_all` on a wasip2 stream waits for the host's write permits (check-write).
    let written = stream.write_all(body).and_then(|()| Write::flush(&mut stream));
    // The stream belongs to the body: it must be gone before the body is finished.
    drop(stream);
    written.map_err(|e| internal(e.to_string()))?;
    OutgoingBody::finish(out, None)
}

fn internal(message: impl Into<String>) -> ErrorCode {
    ErrorCode::InternalError(Some(message.into()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

export!(SignedWebhook);
