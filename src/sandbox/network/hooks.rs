//! Each guest request, in order: is there a grant, is the budget of
//! requests left (every request takes one, refused or not), is the host
//! and port on the task's list, is the declared body small enough; then a
//! connection slot of the tenant's, the dial (`dial`), the request with
//! its body bounded, the response's head by the first-byte timeout, and
//! its body bounded and timed (`body`). Every wait ends by the attempt's
//! deadline. Redirects are answers, never followed. Each request ends in
//! one count: `refused` if the host turned it away before anything went
//! out, `requests` if it went out (one the guest dropped while it waited
//! for a connection slot is in neither).

use super::body::{Incoming, Outgoing};
use super::dial::{dial, Target};
use super::span::{begin, RequestSpan};
use super::{NetworkGrant, NetworkUsage, Outbound};
use crate::sandbox::attempt_spans::AttemptSpans;
use crate::sandbox::capture::{Level, LogBuffer, Source};
use http_body_util::BodyExt;
use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

type IoFuture = Box<dyn Future<Output = Result<(), Error>> + Send>;
type Sent = Result<(http::Response<WasiBody>, IoFuture), Error>;

/// One attempt's outbound HTTP: the store's `wasi:http` hooks.
pub struct GuestHttp {
    outbound: Arc<Outbound>,
    /// `None`: the task has no `network` settings; every request is refused.
    grant: Option<Arc<NetworkGrant>>,
    tenant: Arc<str>,
    usage: Arc<NetworkUsage>,
    deadline: Instant,
    log: LogBuffer,
    /// The attempt's spans, under which each request is a span of its own
    /// (while the attempt has places left) whose context goes out in the
    /// request's `traceparent`.
    spans: Option<AttemptSpans>,
}

impl GuestHttp {
    pub fn new(
        outbound: Arc<Outbound>,
        grant: Option<Arc<NetworkGrant>>,
        tenant: Arc<str>,
        deadline: Instant,
        log: LogBuffer,
    ) -> GuestHttp {
        GuestHttp {
            outbound,
            grant,
            tenant,
            usage: Arc::default(),
            deadline,
            log,
            spans: None,
        }
    }

    /// Each request a span under the attempt's.
    pub fn traced(mut self, spans: Option<AttemptSpans>) -> GuestHttp {
        self.spans = spans;
        self
    }

    /// The counters the attempt's record is made from.
    pub fn usage(&self) -> Arc<NetworkUsage> {
        self.usage.clone()
    }

    /// Whether the request may go out, and where to; a refusal is told to
    /// the attempt's log in words.
    fn admit(
        &self,
        req: &http::Request<WasiBody>,
    ) -> Result<(Arc<NetworkGrant>, Destination), Error> {
        let uri = req.uri();
        let (tls, default_port) = match uri.scheme_str() {
            Some("http") => (false, 80),
            Some("https") => (true, 443),
            _ => return Err(Error::HttpRequestUriInvalid),
        };
        let host = uri
            .host()
            .map(|h| {
                h.trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_ascii_lowercase()
            })
            .ok_or(Error::HttpRequestUriInvalid)?;
        let port = uri.port_u16().unwrap_or(default_port);
        // Scheme, host and port only: a path or user info may carry what
        // the log should not.
        let shown = format!("{}://{host}:{port}", if tls { "https" } else { "http" });
        let Some(grant) = self.grant.clone() else {
            return Err(self.refuse(&shown, "the task grants no network access; its definition needs `\"network\": {\"allow\": [\"<host>\"]}`"));
        };
        // Before any other check, so that a refused request spends the
        // budget too: otherwise refusals (each a log line and a span)
        // would have none.
        if !self.usage.take(grant.max_requests) {
            return Err(self.refuse(
                &shown,
                &format!(
                    "the attempt has made its {} requests, refused ones included (the task's network.max_requests)",
                    grant.max_requests
                ),
            ));
        }
        if !grant.allow.allows(&host, port, default_port) {
            return Err(self.refuse(
                &shown,
                &format!("{host}:{port} is not in the task's network.allow"),
            ));
        }
        let cap = self.outbound.config().max_request_bytes;
        if declared_length(req.headers()).is_some_and(|n| n > cap) {
            self.usage.refuse();
            self.note(&format!("outbound request to {shown} refused: its body is larger than the server's {cap} bytes"));
            return Err(Error::HttpRequestBodySize(Some(cap)));
        }
        Ok((grant, Destination { host, port, tls }))
    }

    fn refuse(&self, shown: &str, why: &str) -> Error {
        self.usage.refuse();
        self.note(&format!("outbound request to {shown} refused: {why}"));
        Error::HttpRequestDenied
    }

    fn note(&self, line: &str) {
        self.log.line(Level::Warn, Source::Host, line);
    }
}

/// Where an admitted request goes.
struct Destination {
    host: String,
    port: u16,
    tls: bool,
}

/// The body length a request or response declares, if it declares one.
fn declared_length(headers: &http::HeaderMap) -> Option<u64> {
    headers
        .get(http::header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

impl WasiHttpHooks for GuestHttp {
    fn send_request(
        &mut self,
        mut request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _fut: IoFuture,
    ) -> Box<dyn Future<Output = Sent> + Send> {
        let span: Option<RequestSpan> = begin(self.spans.as_ref(), &mut request);
        let sending = match self.admit(&request) {
            Err(e) => {
                if let Some(span) = span {
                    span.end(None, Err(&e));
                }
                return Box::new(std::future::ready(Err(e)));
            }
            Ok((grant, to)) => Sending {
                outbound: self.outbound.clone(),
                grant,
                tenant: self.tenant.clone(),
                usage: self.usage.clone(),
                deadline: self.deadline,
                log: self.log.clone(),
                options: options.unwrap_or_default(),
            }
            .send(request, to),
        };
        let Some(span) = span else {
            return Box::new(sending);
        };
        Box::new(async move {
            let sent = sending.await;
            let status = sent.as_ref().ok().map(|(r, _)| r.status().as_u16());
            span.end(status, sent.as_ref().map(|_| ()));
            sent
        })
    }
}

/// An admitted request on its way, off the store.
struct Sending {
    outbound: Arc<Outbound>,
    grant: Arc<NetworkGrant>,
    tenant: Arc<str>,
    usage: Arc<NetworkUsage>,
    deadline: Instant,
    log: LogBuffer,
    options: RequestOptions,
}

impl Sending {
    /// The sooner of `own` (the guest's, if it set one, no longer than the
    /// server's) from now and the attempt's deadline.
    fn by(&self, own: Option<Duration>, server: Duration) -> tokio::time::Instant {
        let wait = own.map_or(server, |o| o.min(server));
        tokio::time::Instant::from_std((Instant::now() + wait).min(self.deadline))
    }

    async fn send(self, mut request: http::Request<WasiBody>, to: Destination) -> Sent {
        let config = self.outbound.config().clone();
        let connect_by = self.by(self.options.connect_timeout, config.connect_timeout);
        let slots = self.outbound.slots(&self.tenant);
        // Until it is dialled, nothing has gone out: a request turned away
        // here is refused.
        let permit = match tokio::time::timeout_at(connect_by, slots.acquire_owned()).await {
            Ok(Ok(p)) => p,
            Ok(Err(_)) => {
                self.usage.refuse();
                return Err(Error::InternalError(Some("the server is stopping".into())));
            }
            Err(_) => {
                self.usage.refuse();
                self.log.line(
                    Level::Warn,
                    Source::Host,
                    &format!(
                        "outbound request to {}:{} waited too long for a connection: the tenant's guests hold {} at once already (the server's --outbound-max-connections-per-tenant)",
                        to.host, to.port, config.max_connections_per_tenant
                    ),
                );
                return Err(Error::ConnectionLimitReached);
            }
        };
        let target = Target {
            host: &to.host,
            port: to.port,
            tls: to.tls,
        };
        let stream = dial(&self.outbound, &target, connect_by, &self.log).await;
        // Refused for where it leads, it never went out; any other end of
        // the dial is a request that did (a lookup or a connection tried).
        match &stream {
            Err(Error::DestinationIpProhibited) => self.usage.refuse(),
            _ => self.usage.went_out(),
        }
        let stream = stream?;
        let io = hyper_util::rt::TokioIo::new(stream);
        let (mut sender, conn) = tokio::time::timeout_at(
            connect_by,
            hyper::client::conn::http1::Builder::new().handshake::<_, Outgoing>(io),
        )
        .await
        .map_err(|_| Error::ConnectionTimeout)??;

        // The request names its origin in `Host`; the line names the path.
        let path = request
            .uri()
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_owned();
        *request.uri_mut() = http::Uri::try_from(path).map_err(|_| Error::HttpRequestUriInvalid)?;
        let (parts, body) = request.into_parts();
        let body = Outgoing::new(body, config.max_request_bytes, self.usage.clone());
        let over = body.over.clone();
        let request = http::Request::from_parts(parts, body);

        let first_byte_by = self.by(self.options.first_byte_timeout, config.first_byte_timeout);
        let mut conn = Some(Box::pin(conn));
        let mut send = std::pin::pin!(sender.send_request(request));
        // The connection is driven here until the head arrives; after, by
        // the task wasi-http spawns for the returned future.
        let head = std::future::poll_fn(|cx| {
            if let Poll::Ready(r) = send.as_mut().poll(cx) {
                return Poll::Ready(r.map_err(Error::from));
            }
            let Some(c) = conn.as_mut() else {
                return Poll::Pending;
            };
            match c.as_mut().poll(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(done) => {
                    conn = None;
                    match done {
                        Ok(()) => send.as_mut().poll(cx).map_err(Error::from),
                        Err(e) => Poll::Ready(Err(Error::from(e))),
                    }
                }
            }
        });
        let head = match tokio::time::timeout_at(first_byte_by, head).await {
            Err(_) => Err(Error::ConnectionReadTimeout),
            Ok(r) => r,
        };
        drop(sender);
        let response = head.map_err(|e| {
            if over.load(Ordering::Relaxed) {
                Error::HttpRequestBodySize(Some(config.max_request_bytes))
            } else {
                e
            }
        })?;

        let cap = self.grant.max_response_bytes;
        if let Some(n) = declared_length(response.headers()).filter(|n| *n > cap) {
            self.log.line(
                Level::Warn,
                Source::Host,
                &format!(
                    "outbound response from {}:{} refused: its body is {n} bytes, over the task's network.max_response_bytes ({cap})",
                    to.host, to.port
                ),
            );
            return Err(Error::HttpResponseBodySize(Some(n)));
        }
        let idle = self
            .options
            .between_bytes_timeout
            .map_or(config.idle_timeout, |o| o.min(config.idle_timeout));
        let usage = self.usage.clone();
        let deadline = self.deadline;
        let response =
            response.map(|b| Incoming::new(b, cap, usage, idle, deadline).boxed_unsync());
        // The slot is held until the connection closes; dropping the
        // response (or the attempt's store) aborts this, and frees it.
        let io: IoFuture = Box::new(async move {
            let _slot = permit;
            match conn {
                Some(c) => c.await.map_err(Error::from),
                None => Ok(()),
            }
        });
        Ok((response, io))
    }
}
