//! `taskbox:task/fetch`: one request and its whole answer in one call, for guests that cannot
//! bind `wasi:http`'s resources. It is made into the request a `wasi:http` guest would send
//! and handed to the same hooks (`GuestHttp::send_request`): the grant, the allowlist, the
//! budget, the address checks, the connection slots, the caps and the timeouts are theirs,
//! written once. Only the reading of the whole body is here.

use super::GuestHttp;
use crate::sandbox::bindings::taskbox::task::fetch::{FetchError, Request, Response};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use tokio_util::task::AbortOnDropHandle;
use wasmtime_wasi_http::{Error, WasiHttpHooks};

/// Request headers a guest may not set: the ones the `wasi:http` types refuse (the
/// connection's own, and `host`, which the URL decides).
fn forbidden(name: &http::HeaderName) -> bool {
    wasmtime_wasi_http::DEFAULT_FORBIDDEN_HEADERS.contains(name)
}

fn fail(code: &str, message: impl Into<String>) -> FetchError {
    FetchError {
        code: code.into(),
        message: message.into(),
    }
}

/// The guest's request as a `wasi:http` one: method, absolute URL, headers, `Host` from the
/// URL's authority and the body's length declared.
fn request(req: Request) -> Result<http::Request<wasmtime_wasi_http::WasiBody>, FetchError> {
    let method = http::Method::from_bytes(req.method.as_bytes())
        .map_err(|_| fail("invalid", format!("`{}` is not an HTTP method", req.method)))?;
    let uri: http::Uri = req
        .url
        .parse()
        .map_err(|e| fail("invalid", format!("`{}` is not a URL: {e}", req.url)))?;
    let authority = match (uri.scheme_str(), uri.authority()) {
        (Some("http" | "https"), Some(a)) => a.as_str().to_owned(),
        _ => {
            return Err(fail(
                "invalid",
                format!("`{}` is not an absolute http:// or https:// URL", req.url),
            ))
        }
    };
    let mut builder = http::Request::builder().method(method).uri(uri);
    for (name, value) in &req.headers {
        let name = http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| fail("invalid", format!("`{name}` is not a header name")))?;
        if forbidden(&name) {
            return Err(fail(
                "invalid",
                format!("the `{name}` header is the host's to set"),
            ));
        }
        let value = http::HeaderValue::from_str(value).map_err(|_| {
            fail(
                "invalid",
                format!("the `{name}` header's value is not valid"),
            )
        })?;
        builder = builder.header(name, value);
    }
    let body = Bytes::from(req.body);
    builder
        .header(http::header::HOST, authority)
        .header(http::header::CONTENT_LENGTH, body.len())
        .body(
            Full::new(body)
                .map_err(|never| match never {})
                .boxed_unsync(),
        )
        .map_err(|e| fail("invalid", e.to_string()))
}

/// What a `wasi:http` error is, as `fetch-error`'s code.
fn code_of(e: &Error) -> &'static str {
    match e {
        Error::HttpRequestDenied
        | Error::DestinationIpProhibited
        | Error::ConnectionLimitReached => "denied",
        Error::HttpRequestUriInvalid
        | Error::HttpRequestMethodInvalid
        | Error::HttpRequestUriTooLong
        | Error::HttpRequestHeaderSectionSize(_) => "invalid",
        Error::HttpRequestBodySize(_) | Error::HttpResponseBodySize(_) => "too_large",
        Error::DnsTimeout
        | Error::ConnectionTimeout
        | Error::ConnectionReadTimeout
        | Error::ConnectionWriteTimeout
        | Error::HttpResponseTimeout => "timeout",
        Error::DestinationNotFound
        | Error::DestinationUnavailable
        | Error::DestinationIpUnroutable
        | Error::ConnectionRefused
        | Error::Connect(_)
        | Error::Tls(_)
        | Error::TlsProtocolError
        | Error::TlsCertificateError
        | Error::DnsError { .. } => "unavailable",
        _ => "error",
    }
}

fn failed(e: &Error) -> FetchError {
    let code = code_of(e);
    if code == "denied" {
        // The hooks told the attempt's log which rule refused it; the guest gets the pointer.
        return fail(
            code,
            format!("{e}: the task's `network` settings (its `allow` list and `max_requests`) do not let it through; the attempt's log says which"),
        );
    }
    fail(code, e.to_string())
}

impl GuestHttp {
    /// Sends `req` through this attempt's hooks and reads the whole answer.
    pub async fn fetch(&mut self, req: Request) -> Result<Response, FetchError> {
        let req = request(req)?;
        let sent = Box::into_pin(self.send_request(req, None, Box::new(async { Ok(()) })));
        let (response, io) = sent.await.map_err(|e| failed(&e))?;
        // The connection is driven by `io` once the head is in; it ends with this call.
        let io = AbortOnDropHandle::new(tokio::spawn(Box::into_pin(io)));
        let (parts, body) = response.into_parts();
        let body = body.collect().await.map_err(|e| failed(&e))?.to_bytes();
        drop(io);
        let headers = parts
            .headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        Ok(Response {
            status: parts.status.as_u16(),
            headers,
            body: body.to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(method: &str, url: &str, headers: &[(&str, &str)]) -> Request {
        Request {
            method: method.into(),
            url: url.into(),
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect(),
            body: b"hi".to_vec(),
        }
    }

    #[test]
    fn a_request_is_made_as_wasi_http_would_make_it_or_refused_as_invalid() {
        let ok = request(req(
            "POST",
            "https://api.example.com:8443/v1?q=1",
            &[("x-trace", "a")],
        ))
        .unwrap();
        assert_eq!(ok.headers()["host"], "api.example.com:8443");
        assert_eq!(ok.headers()["content-length"], "2");
        assert_eq!(ok.headers()["x-trace"], "a");
        for bad in [
            req("GE T", "https://a.example", &[]),
            req("GET", "/relative", &[]),
            req("GET", "ftp://a.example/x", &[]),
            req("GET", "https://a.example", &[("bad name", "x")]),
            req("GET", "https://a.example", &[("x", "line\nbreak")]),
            req("GET", "https://a.example", &[("host", "elsewhere.example")]),
            req("GET", "https://a.example", &[("connection", "upgrade")]),
            req(
                "GET",
                "https://a.example",
                &[("transfer-encoding", "chunked")],
            ),
        ] {
            let what = format!("{} {} {:?}", bad.method, bad.url, bad.headers);
            let e = request(bad).unwrap_err();
            assert_eq!(e.code, "invalid", "{what}: {}", e.message);
        }
    }

    #[test]
    fn each_wasi_http_error_has_a_fetch_code() {
        for (e, code) in [
            (Error::HttpRequestDenied, "denied"),
            (Error::HttpRequestUriInvalid, "invalid"),
            (Error::HttpResponseBodySize(Some(9)), "too_large"),
            (Error::ConnectionReadTimeout, "timeout"),
            (Error::ConnectionRefused, "unavailable"),
            (Error::HttpProtocolError, "error"),
        ] {
            assert_eq!(code_of(&e), code, "{e}");
        }
    }
}
