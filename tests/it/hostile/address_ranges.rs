//! Round two, item 11: the IPv6 forms that lead back into the server's
//! own networks are refused like the addresses they lead to: local-use
//! NAT64 (`64:ff9b:1::/48`), 6to4 (`2002::/16`), Teredo (`2001::/32`),
//! IPv4-compatible (`::/96`) and site-local (`fec0::/10`), for a guest's
//! outbound request and for a webhook's URL alike.

use crate::common::{expect_done, guest, job, roomy, small_sandbox};
use crate::server::{TestServer, ALL_SCOPES};
use axum::http::StatusCode;
use serde_json::json;
use std::sync::Arc;
use taskbox::sandbox::{AttemptRequest, NetworkConfig, NetworkGrant, SandboxConfig};

/// Each reaches 127.0.0.1, 10.0.0.1 or 169.254.169.254, or a network the
/// operator routes itself.
const LEADS_HOME: &[&str] = &[
    "[64:ff9b:1::a00:1]",
    "[2002:7f00:1::1]",
    "[2002:a9fe:a9fe::1]",
    "[2001:0:a00:1::1]",
    "[::127.0.0.1]",
    "[fec0::1]",
];

#[tokio::test]
async fn a_guest_cannot_reach_home_through_an_ipv6_form() {
    guest_is_refused(LEADS_HOME).await;
}

/// A guest granted each of `hosts` is refused a request to every one of
/// them for its address.
pub(super) async fn guest_is_refused(hosts: &[&str]) {
    let sandbox = small_sandbox(SandboxConfig::default());
    let allow: Vec<String> = hosts.iter().map(|h| h.to_string()).collect();
    let grant = NetworkGrant::resolve(&allow, None, None, &NetworkConfig::default()).unwrap();
    let requests: Vec<_> = hosts
        .iter()
        .map(|h| json!({"method": "GET", "url": format!("http://{h}/latest/meta-data/")}))
        .collect();
    let program = sandbox.load("test", &guest("http-probe")).await.unwrap();
    let mut req = AttemptRequest::new(job(1), json!({"requests": requests}).to_string(), roomy());
    req.network = Some(Arc::new(grant));
    req.tenant = Arc::from("acme");
    let report = sandbox.run(&program, req).await;
    let out = expect_done(&report);
    for (i, host) in hosts.iter().enumerate() {
        assert_eq!(
            out["results"][i]["error"], "destination-IP-prohibited",
            "{host}: {}",
            out["results"][i]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_cannot_aim_home_through_an_ipv6_form() {
    let s = TestServer::start(0).await;
    let t = s.tenant("acme", ALL_SCOPES).await;
    webhooks_are_refused(&s, &t, LEADS_HOME).await;
    s.stop().await;
}

/// A webhook aimed at each of `hosts` is refused for the server's own
/// network.
pub(super) async fn webhooks_are_refused(s: &TestServer, token: &str, hosts: &[&str]) {
    for host in hosts {
        let url = format!("http://{host}/hook");
        let (status, body) = s
            .post("/v1/webhooks", token, json!({"url": url, "events": ["*"]}))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url}: {body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("server's own network"),
            "{body}"
        );
    }
}
