//! Round two, item 4: naming a secret in a task needs `secrets:write`. A
//! token with `tasks:write` alone, which cannot list a secret, could once
//! define a task that declares one and send it to a host it granted.

use crate::server::{TestServer, ALL_SCOPES};
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declaring_a_secret_needs_the_secrets_scope() {
    let s = TestServer::start(1).await;
    let owner = s.tenant("acme", ALL_SCOPES).await;
    let deployer = s.token("acme", &["tasks:write", "jobs:queue"]).await;
    let (status, body) = s
        .call(
            Method::PUT,
            "/v1/secrets/STRIPE_KEY",
            &owner,
            Some(json!({"value": "sk_live_0123456789"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let digest = s.upload(&owner, "http-probe").await;
    let define = |token: String, spec: Value| {
        let s = &s;
        async move {
            s.call(Method::PUT, "/v1/tasks/charge", &token, Some(spec))
                .await
        }
    };
    let with_secret = |allow: &str| {
        json!({"component": digest, "secrets": ["STRIPE_KEY"],
               "network": {"allow": [allow]}})
    };

    // tasks:write alone: refused, naming the scope.
    let (status, body) = define(deployer.clone(), with_secret("attacker.example")).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("secrets:write"), "{message}");

    // With the scope: defined.
    let (status, body) = define(owner.clone(), with_secret("api.stripe.com")).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    // Keeping the secret while changing where it may go, or dropping it:
    // both change what the secret is exposed to, so both need the scope.
    let (status, body) = define(deployer.clone(), with_secret("attacker.example")).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (status, body) = define(deployer.clone(), json!({"component": digest})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");

    // A task with no secrets, before or now, needs only tasks:write.
    let (status, body) = s
        .call(
            Method::PUT,
            "/v1/tasks/plain",
            &deployer,
            Some(json!({"component": digest})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = s.get("/v1/tasks/charge", &owner).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["version"], 1, "no refused version was stored: {body}");
    assert_eq!(
        body["definition"]["network"]["allow"],
        json!(["api.stripe.com"]),
        "{body}"
    );
    s.stop().await;
}
