//! Bodies on their way out and in, bounded and counted: a request body
//! larger than the server allows and a response body larger than the task
//! allows are errors, and a response that stalls between two pieces for
//! longer than the idle timeout (or past the attempt's deadline) ends.

use super::NetworkUsage;
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use wasmtime_wasi_http::{Error, WasiBody};

/// The guest's request body, counted; past `cap` bytes it fails, and says
/// so through `over` (hyper reports a failed body as its own error).
pub struct Outgoing {
    inner: WasiBody,
    sent: u64,
    cap: u64,
    usage: Arc<NetworkUsage>,
    pub over: Arc<AtomicBool>,
}

impl Outgoing {
    pub fn new(inner: WasiBody, cap: u64, usage: Arc<NetworkUsage>) -> Outgoing {
        Outgoing {
            inner,
            sent: 0,
            cap,
            usage,
            over: Arc::new(AtomicBool::new(false)),
        }
    }
}

impl Body for Outgoing {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                let n = frame.data_ref().map_or(0, |d| d.len() as u64);
                this.sent = this.sent.saturating_add(n);
                if this.sent > this.cap {
                    this.over.store(true, Ordering::Relaxed);
                    return Poll::Ready(Some(Err(Error::HttpRequestBodySize(Some(this.cap)))));
                }
                this.usage.sent(n);
                Poll::Ready(Some(Ok(frame)))
            }
            other => other,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The response body as the guest reads it: counted, at most `cap` bytes,
/// and ended when no piece comes for `idle` (or by `deadline`).
pub struct Incoming {
    inner: hyper::body::Incoming,
    received: u64,
    cap: u64,
    usage: Arc<NetworkUsage>,
    idle: Duration,
    deadline: Instant,
    timer: Pin<Box<tokio::time::Sleep>>,
    done: bool,
}

impl Incoming {
    pub fn new(
        inner: hyper::body::Incoming,
        cap: u64,
        usage: Arc<NetworkUsage>,
        idle: Duration,
        deadline: Instant,
    ) -> Incoming {
        let timer = Box::pin(tokio::time::sleep_until(wake_at(idle, deadline)));
        Incoming {
            inner,
            received: 0,
            cap,
            usage,
            idle,
            deadline,
            timer,
            done: false,
        }
    }
}

/// The sooner of `idle` from now and the deadline.
fn wake_at(idle: Duration, deadline: Instant) -> tokio::time::Instant {
    tokio::time::Instant::from_std((Instant::now() + idle).min(deadline))
}

impl Body for Incoming {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                let n = frame.data_ref().map_or(0, |d| d.len() as u64);
                this.received = this.received.saturating_add(n);
                this.usage.received(n);
                if this.received > this.cap {
                    this.done = true;
                    return Poll::Ready(Some(Err(Error::HttpResponseBodySize(Some(this.cap)))));
                }
                let next = wake_at(this.idle, this.deadline);
                this.timer.as_mut().reset(next);
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => {
                this.done = true;
                let e = if e.is_timeout() {
                    Error::HttpResponseTimeout
                } else {
                    Error::from(e)
                };
                Poll::Ready(Some(Err(e)))
            }
            Poll::Ready(None) => {
                this.done = true;
                Poll::Ready(None)
            }
            Poll::Pending => match this.timer.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    this.done = true;
                    Poll::Ready(Some(Err(Error::ConnectionReadTimeout)))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
