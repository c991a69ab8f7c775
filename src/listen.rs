//! The HTTP listener: each connection served by hyper under a watch that
//! closes it when a request's headers take longer than the header timeout
//! (counted from the connection's start, or from the first byte after a
//! keep-alive pause) or when it sits idle between requests past the idle
//! timeout; at most a number of connections open at once (past it the
//! listener accepts no more until one closes). A body's time is
//! `api::body::read_limited`'s. A stop lets each connection finish the
//! request it serves.

use crate::config::HttpSettings;
use axum::body::Body;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// Serves `router` on `listener` until `stop`, then waits for the
/// connections to finish what they serve.
pub async fn serve(
    listener: TcpListener,
    router: axum::Router,
    settings: HttpSettings,
    stop: CancellationToken,
) {
    let open = Arc::new(Semaphore::new(settings.max_connections.max(1)));
    let mut connections = tokio::task::JoinSet::new();
    loop {
        while connections.try_join_next().is_some() {}
        let permit = tokio::select! {
            p = open.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            () = stop.cancelled() => break,
        };
        let (socket, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors, mostly: wait for some to close.
                    tracing::warn!(error = %e, "cannot accept an HTTP connection");
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(100)) => continue,
                        () = stop.cancelled() => break,
                    }
                }
            },
            () = stop.cancelled() => break,
        };
        let _ = socket.set_nodelay(true);
        let router = router.clone();
        let stop = stop.clone();
        connections.spawn(async move {
            connection(socket, router, settings, stop).await;
            drop(permit);
        });
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
}

/// Where a connection is, for its watch.
struct Watch {
    start: Instant,
    /// Requests being answered.
    serving: AtomicUsize,
    /// Milliseconds from `start`: when the connection last went idle.
    idle_since: AtomicU64,
    /// Milliseconds from `start` when the first byte of the next request's
    /// headers came; `NONE` while idle.
    head_since: AtomicU64,
    changed: Notify,
}

const NONE: u64 = u64::MAX;

impl Watch {
    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(NONE - 1)
    }

    fn begin(self: &Arc<Self>) -> Serving {
        self.serving.fetch_add(1, Ordering::SeqCst);
        self.head_since.store(NONE, Ordering::SeqCst);
        self.changed.notify_one();
        Serving(self.clone())
    }

    fn read(&self) {
        if self.serving.load(Ordering::SeqCst) == 0
            && self.head_since.load(Ordering::SeqCst) == NONE
        {
            self.head_since.store(self.now(), Ordering::SeqCst);
            self.changed.notify_one();
        }
    }

    /// When the connection is to be closed as things stand; `None`: not
    /// while they stand (a request is being answered).
    fn deadline(&self, s: &HttpSettings) -> Option<Instant> {
        if self.serving.load(Ordering::SeqCst) > 0 {
            return None;
        }
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(NONE / 2);
        let at = match self.head_since.load(Ordering::SeqCst) {
            NONE => self
                .idle_since
                .load(Ordering::SeqCst)
                .saturating_add(ms(s.idle_timeout)),
            head => head.saturating_add(ms(s.header_timeout)),
        };
        Some(self.start + Duration::from_millis(at))
    }

    /// Ends when the connection is to be closed.
    async fn expired(&self, s: &HttpSettings) {
        loop {
            let changed = self.changed.notified();
            match self.deadline(s) {
                None => changed.await,
                Some(at) => tokio::select! {
                    () = changed => {}
                    () = tokio::time::sleep_until(at) => {
                        if self.deadline(s).is_some_and(|d| d <= Instant::now()) {
                            return;
                        }
                    }
                },
            }
        }
    }
}

/// A request being answered, until its response's body is sent or dropped.
struct Serving(Arc<Watch>);

impl Drop for Serving {
    fn drop(&mut self) {
        let w = &self.0;
        if w.serving.fetch_sub(1, Ordering::SeqCst) == 1 {
            w.idle_since.store(w.now(), Ordering::SeqCst);
        }
        w.changed.notify_one();
    }
}

async fn connection(
    socket: TcpStream,
    router: axum::Router,
    settings: HttpSettings,
    stop: CancellationToken,
) {
    let watch = Arc::new(Watch {
        start: Instant::now(),
        serving: AtomicUsize::new(0),
        idle_since: AtomicU64::new(0),
        // A new connection owes its first request's headers at once.
        head_since: AtomicU64::new(0),
        changed: Notify::new(),
    });
    let io = TokioIo::new(Watched {
        inner: socket,
        watch: watch.clone(),
    });
    let service = {
        let watch = watch.clone();
        hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
            let serving = watch.begin();
            let router = router.clone();
            async move {
                let response = router
                    .oneshot(req.map(Body::new))
                    .await
                    .unwrap_or_else(|e: Infallible| match e {});
                Ok::<_, Infallible>(response.map(|body| {
                    Body::new(Tracked {
                        inner: body,
                        _serving: serving,
                    })
                }))
            }
        })
    };
    let conn = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        .serve_connection(io, service);
    tokio::pin!(conn);
    tokio::select! {
        r = conn.as_mut() => {
            if let Err(e) = r {
                tracing::debug!(error = %e, "an HTTP connection ended in error");
            }
        }
        // Dropped mid-headers or idle: nothing is being answered.
        () = watch.expired(&settings) => {}
        () = stop.cancelled() => {
            conn.as_mut().graceful_shutdown();
            tokio::select! {
                _ = conn.as_mut() => {}
                () = watch.expired(&settings) => {}
            }
        }
    }
}

/// A connection's socket, telling its watch when bytes come.
struct Watched {
    inner: TcpStream,
    watch: Arc<Watch>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.watch.read();
        }
        r
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// A response's body, holding its request's place until sent or dropped.
struct Tracked {
    inner: Body,
    _serving: Serving,
}

impl http_body::Body for Tracked {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}
