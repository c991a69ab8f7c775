//! Round three (issue 65), item 7: an IPv4-translated address
//! (`::ffff:0:a.b.c.d`, SIIT) is judged as the IPv4 address it carries,
//! like the mapped, NAT64, 6to4 and Teredo forms: one that leads to
//! 127.0.0.1, 10.0.0.1 or 169.254.169.254 is refused for a guest's
//! outbound request and for a webhook's URL alike, and one that carries a
//! public address is not refused for its form.

use super::address_ranges::{guest_is_refused, webhooks_are_refused};
use crate::server::{TestServer, ALL_SCOPES};
use axum::http::StatusCode;
use serde_json::json;

/// 127.0.0.1, 10.0.0.1 and 169.254.169.254, IPv4-translated.
const TRANSLATED_HOME: &[&str] = &[
    "[::ffff:0:7f00:1]",
    "[::ffff:0:a00:1]",
    "[::ffff:0:a9fe:a9fe]",
];

#[tokio::test]
async fn a_guest_cannot_reach_home_through_an_ipv4_translated_address() {
    guest_is_refused(TRANSLATED_HOME).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_cannot_aim_home_through_an_ipv4_translated_address() {
    let s = TestServer::start(0).await;
    let t = s.tenant("acme", ALL_SCOPES).await;
    webhooks_are_refused(&s, &t, TRANSLATED_HOME).await;
    // A public address (8.8.8.8) in the same form is judged as itself:
    // the form alone refuses nothing. (Made, never delivered to: no
    // event happens here.)
    let url = "http://[::ffff:0:808:808]/hook";
    let (status, body) = s
        .post("/v1/webhooks", &t, json!({"url": url, "events": ["*"]}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{url}: {body}");
    s.stop().await;
}
