//! Round two, item 8: the API waits for a client a bounded time, and for
//! a bounded number of them. A connection that sent half a request's
//! headers was once held 45 s and then answered; one that sends nothing,
//! trickles a body or sits idle between requests is now closed, and the
//! open connections are capped, while others are served meanwhile.

use crate::server::TestServer;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A server whose clients get half a second for headers, a body and an
/// idle pause, and at most `max` connections.
async fn server(max: usize) -> TestServer {
    TestServer::start_with(1, |c| {
        c.http.header_timeout = Duration::from_millis(500);
        c.http.body_timeout = Duration::from_millis(500);
        c.http.idle_timeout = Duration::from_millis(500);
        c.http.max_connections = max;
    })
    .await
}

fn addr(s: &TestServer) -> SocketAddr {
    s.app.as_ref().unwrap().addr.unwrap()
}

/// Reads until the server closes the connection (within 30 s, or the
/// test fails: no timeout held it); what it sent.
async fn until_closed(c: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(30), c.read_to_end(&mut got)).await;
    assert!(
        read.is_ok(),
        "the server kept the connection open 30 s; it sent {:?}",
        String::from_utf8_lossy(&got)
    );
    String::from_utf8_lossy(&got).into_owned()
}

/// A whole request on a connection of its own: the status line.
async fn healthz(a: SocketAddr) -> String {
    let mut c = TcpStream::connect(a).await.unwrap();
    c.write_all(b"GET /healthz HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let got = until_closed(&mut c).await;
    got.lines().next().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_headers_a_trickled_body_and_an_idle_connection_are_closed() {
    let s = server(64).await;
    let a = addr(&s);

    // Half a request's headers: closed, never answered.
    let mut half = TcpStream::connect(a).await.unwrap();
    half.write_all(b"GET /healthz HTTP/1.1\r\nhost: t\r\n")
        .await
        .unwrap();
    // Nothing at all: closed too.
    let mut silent = TcpStream::connect(a).await.unwrap();
    // Meanwhile another client is answered.
    assert_eq!(healthz(a).await, "HTTP/1.1 200 OK");
    assert_eq!(until_closed(&mut half).await, "");
    assert_eq!(until_closed(&mut silent).await, "");

    // A body that stops coming: 408, and the connection closed.
    let mut slow = TcpStream::connect(a).await.unwrap();
    slow.write_all(
        b"POST /v1/jobs HTTP/1.1\r\nhost: t\r\nauthorization: Bearer admin-token-for-the-tests\r\n\
          content-type: application/json\r\ncontent-length: 1000\r\n\r\n{\"task\":",
    )
    .await
    .unwrap();
    let answer = until_closed(&mut slow).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("REQUEST_TIMEOUT"), "{answer}");
    assert!(answer.contains("--http-body-timeout-ms"), "{answer}");

    // A keep-alive connection answered once, then left idle: closed.
    let mut idle = TcpStream::connect(a).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nhost: t\r\n\r\n")
        .await
        .unwrap();
    let answer = until_closed(&mut idle).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_open_connections_are_capped() {
    // Long timeouts here: the connections stay until the test closes them.
    let s = TestServer::start_with(1, |c| {
        c.http.header_timeout = Duration::from_secs(600);
        c.http.idle_timeout = Duration::from_secs(600);
        c.http.max_connections = 3;
    })
    .await;
    let a = addr(&s);
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut c = TcpStream::connect(a).await.unwrap();
        // Answered: the connection is open and counted.
        c.write_all(b"GET /healthz HTTP/1.1\r\nhost: t\r\n\r\n")
            .await
            .unwrap();
        let mut buf = [0u8; 12];
        c.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"HTTP/1.1 200");
        held.push(c);
    }
    // A fourth waits for one of them to close (the kernel holds it).
    let mut fourth = TcpStream::connect(a).await.unwrap();
    fourth
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 12];
    let early = tokio::time::timeout(Duration::from_millis(500), fourth.read(&mut buf)).await;
    assert!(
        early.is_err(),
        "a fourth connection was served past the cap of 3"
    );
    drop(held.pop());
    let answer = until_closed(&mut fourth).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
}
