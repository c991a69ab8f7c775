//! A token that leaked must stop working: revoked, it is refused at once
//! by the server that revoked it and within 5 s by every other server of
//! the database (PostgreSQL, two processes of the real binary); one past
//! its expiry is refused, cached or not; a tenant's token can neither list
//! nor revoke tokens (a stolen one could lock its tenant's other clients
//! out); the admin token cannot be revoked through the API (which would
//! lock the admin out); and the list never shows a secret or a hash.

use crate::e2e::{Client, Served, ADMIN as E2E_ADMIN};
use crate::server::{TestServer, ADMIN, ALL_SCOPES};
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::time::{Duration, Instant};

/// The longest a revoke may take to reach another server.
const REACH: Duration = Duration::from_secs(5);

/// A tenant and a token minted for it: (id, token).
pub(super) async fn mint(s: &TestServer, tenant: &str, extra: Value) -> (String, String) {
    let (status, body) = s.post("/v1/tenants", ADMIN, json!({"name": tenant})).await;
    assert!(
        status == StatusCode::CREATED || status == StatusCode::CONFLICT,
        "{body}"
    );
    let mut ask = json!({"tenant": tenant, "scopes": ALL_SCOPES});
    if let (Some(a), Some(e)) = (ask.as_object_mut(), extra.as_object()) {
        a.extend(e.clone());
    }
    let (status, body) = s.post("/v1/tokens", ADMIN, ask).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    (
        body["id"]
            .as_str()
            .expect("the answer has an id")
            .to_owned(),
        body["token"].as_str().unwrap().to_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_token_is_refused_at_once_by_the_server_that_revoked_it() {
    TestServer::each_backend(0, async |s| {
        let (id, token) = mint(&s, "acme", json!({})).await;
        let (other_id, other) = mint(&s, "acme", json!({})).await;
        // Used, so that this server remembers both.
        for t in [&token, &other] {
            let (status, body) = s.get("/v1/jobs", t).await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        let (status, body) = s
            .call(Method::DELETE, &format!("/v1/tokens/{id}"), ADMIN, None)
            .await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
        let (status, body) = s.get("/v1/jobs", &token).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
        assert_eq!(body["error"]["code"], "UNAUTHENTICATED");
        // The tenant's other token goes on working.
        let (status, body) = s.get("/v1/jobs", &other).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        // Gone from the list; a second revoke finds nothing.
        let (_, list) = s.get("/v1/tokens", ADMIN).await;
        let ids: Vec<&str> = list["tokens"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["id"].as_str())
            .collect();
        assert!(!ids.contains(&id.as_str()) && ids.contains(&other_id.as_str()));
        let (status, body) = s
            .call(Method::DELETE, &format!("/v1/tokens/{id}"), ADMIN, None)
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        assert_eq!(body["error"]["code"], "TOKEN_NOT_FOUND");
        s.stop().await;
    })
    .await;
}

/// Two processes of the real binary on one PostgreSQL database: the one
/// that did not revoke the token, which had it remembered, refuses it
/// within `REACH`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_token_is_refused_by_every_server_of_the_database_within_5_s() {
    let Some(db) = crate::store_pg::test_db().await else {
        return;
    };
    let dirs: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let args = ["--runners", "0", "--database-url", &db.url];
    let a = Served::spawn(dirs[0].path(), &args, Some(E2E_ADMIN));
    let b = Served::spawn(dirs[1].path(), &args, Some(E2E_ADMIN));
    let on_a = Client::new(&a.url, E2E_ADMIN);
    let (status, body) = on_a.post("/v1/tenants", json!({"name": "acme"})).await;
    assert_eq!(status, 201, "{body}");
    let (status, minted) = on_a
        .post(
            "/v1/tokens",
            json!({"tenant": "acme", "scopes": ["jobs:read"]}),
        )
        .await;
    assert_eq!(status, 201, "{minted}");
    let id = minted["id"].as_str().unwrap();
    let token = minted["token"].as_str().unwrap();
    let (with_a, with_b) = (Client::new(&a.url, token), Client::new(&b.url, token));
    // Both servers remember it.
    for c in [&with_a, &with_b] {
        let (status, body) = c.get("/v1/jobs").await;
        assert_eq!(status, 200, "{body}");
    }
    let (status, body) = on_a
        .send(reqwest::Method::DELETE, &format!("/v1/tokens/{id}"), None)
        .await;
    assert_eq!(status, 204, "{body}");
    let revoked = Instant::now();
    let (status, body) = with_a.get("/v1/jobs").await;
    assert_eq!(status, 401, "A revoked it: {body}");
    loop {
        let (status, body) = with_b.get("/v1/jobs").await;
        if status == 401 {
            assert_eq!(body["error"]["code"], "UNAUTHENTICATED", "{body}");
            break;
        }
        assert_eq!(status, 200, "{body}");
        assert!(
            revoked.elapsed() < REACH,
            "B still takes the revoked token {:?} after the revoke",
            revoked.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    eprintln!(
        "B refused the revoked token {:?} after the revoke",
        revoked.elapsed()
    );
    drop((a, b));
    drop(db);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_past_its_expiry_is_refused() {
    TestServer::each_backend(0, async |s| {
        // The expiry as sent, to the millisecond: the server refuses from
        // that instant, which may be up to a millisecond before a finer one.
        let at = (chrono::Utc::now() + chrono::Duration::seconds(3))
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let expiry = chrono::DateTime::parse_from_rfc3339(&at).unwrap();
        let (_, token) = mint(&s, "acme", json!({"expires_at": at})).await;
        // Taken until then (and remembered: the check is made on every
        // request, remembered or not).
        let (status, body) = s.get("/v1/jobs", &token).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let deadline = Instant::now() + Duration::from_secs(30);
        let refused = loop {
            let (status, body) = s.get("/v1/jobs", &token).await;
            if status == StatusCode::UNAUTHORIZED {
                break body;
            }
            assert_eq!(status, StatusCode::OK, "{body}");
            assert!(Instant::now() < deadline, "the token never expired");
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        // The server judges by the store's clock (the database's, on
        // PostgreSQL), which may stand some milliseconds off this process's;
        // a refusal a whole second early would still be a bug.
        assert!(
            chrono::Utc::now() + chrono::Duration::seconds(1) >= expiry,
            "refused before its expiry: {refused}"
        );
        assert_eq!(refused["error"]["code"], "UNAUTHENTICATED");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("this token expired at") && message.contains(&at),
            "{message}"
        );
        s.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_token_can_neither_list_nor_revoke_tokens() {
    TestServer::each_backend(0, async |s| {
        let (id, token) = mint(&s, "acme", json!({})).await;
        let (sibling, sibling_token) = mint(&s, "acme", json!({})).await;
        let (status, body) = s.get("/v1/tokens", &token).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert_eq!(body["error"]["code"], "JOB_ACCESS_DENIED");
        for victim in [&sibling, &id] {
            let (status, body) = s
                .call(
                    Method::DELETE,
                    &format!("/v1/tokens/{victim}"),
                    &token,
                    None,
                )
                .await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        }
        // Nothing was revoked.
        for t in [&token, &sibling_token] {
            let (status, body) = s.get("/v1/jobs", t).await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        s.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_token_cannot_be_revoked_through_the_api() {
    TestServer::each_backend(0, async |s| {
        let (status, list) = s.get("/v1/tokens", ADMIN).await;
        assert_eq!(status, StatusCode::OK, "{list}");
        let admin: Vec<&Value> = list["tokens"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["admin"] == true)
            .collect();
        assert_eq!(admin.len(), 1, "{list}");
        let id = admin[0]["id"].as_str().unwrap();
        let (status, body) = s
            .call(Method::DELETE, &format!("/v1/tokens/{id}"), ADMIN, None)
            .await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
        assert_eq!(body["error"]["code"], "CONFLICT");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("TASKBOX_ADMIN_TOKEN"), "{message}");
        let (status, body) = s.get("/v1/tokens", ADMIN).await;
        assert_eq!(status, StatusCode::OK, "the admin still signs in: {body}");
        s.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_list_never_shows_a_secret_or_a_hash() {
    TestServer::each_backend(0, async |s| {
        let mut secrets = vec![ADMIN.to_owned()];
        for tenant in ["acme", "globex"] {
            secrets.push(mint(&s, tenant, json!({})).await.1);
        }
        let (status, list) = s.get("/v1/tokens", ADMIN).await;
        assert_eq!(status, StatusCode::OK, "{list}");
        assert_eq!(list["tokens"].as_array().unwrap().len(), 3, "{list}");
        let text = list.to_string();
        for secret in &secrets {
            let hash = hex::encode(Sha256::digest(secret.as_bytes()));
            assert!(
                !text.contains(secret.as_str()),
                "the list shows a token: {text}"
            );
            // Not the hash, nor any part of it an id could be made of.
            assert!(!text.contains(&hash[..16]), "the list shows a hash: {text}");
        }
        for t in list["tokens"].as_array().unwrap() {
            let fields: Vec<&str> = t.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(
                fields,
                [
                    "id",
                    "tenant",
                    "admin",
                    "scopes",
                    "created_at",
                    "last_used_at",
                    "expires_at",
                    "expired"
                ],
                "{t}"
            );
        }
        s.stop().await;
    })
    .await;
}
