//! Tokens through the API and the CLI: minted with an id (and an expiry
//! when asked), listed with their tenants, scopes and times (last used
//! recorded off the request's path), expiries refused unless ahead and
//! within ten years; and `taskbox token create|list|revoke` against the
//! real binary. What a hostile caller could do with tokens is in
//! `hostile::token_revocation`.

use crate::server::{TestServer, ADMIN};
use axum::http::StatusCode;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// A time `days` ahead, whole seconds: as given in UTC+1, and as the
/// server answers it (UTC, milliseconds).
fn ahead(days: i64) -> (String, String) {
    use chrono::{DurationRound, FixedOffset, SecondsFormat, Utc};
    let at = (Utc::now() + chrono::Duration::days(days))
        .duration_trunc(chrono::Duration::seconds(1))
        .unwrap();
    let plus_one = FixedOffset::east_opt(3600).unwrap();
    (
        at.with_timezone(&plus_one).to_rfc3339(),
        at.to_rfc3339_opts(SecondsFormat::Millis, true),
    )
}

async fn listed(s: &TestServer) -> Vec<Value> {
    let (status, body) = s.get("/v1/tokens", ADMIN).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["tokens"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_minted_with_an_id_and_listed_with_their_times() {
    TestServer::each_backend(0, async |s| {
        let (status, body) = s.post("/v1/tenants", ADMIN, json!({"name": "acme"})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        // A month ahead, in another zone than UTC: answered in UTC.
        let (given, expected) = ahead(30);
        let (status, minted) = s
            .post(
                "/v1/tokens",
                ADMIN,
                json!({"tenant": "acme", "scopes": ["jobs:read", "jobs:queue"],
                       "expires_at": given}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{minted}");
        let id = minted["id"].as_str().unwrap();
        assert!(
            id.starts_with("tok_")
                && id.len() == 20
                && id[4..].chars().all(|c| c.is_ascii_hexdigit()),
            "{minted}"
        );
        assert_eq!(minted["expires_at"], expected);
        assert_eq!(minted["scopes"], json!(["jobs:read", "jobs:queue"]));
        let token = minted["token"].as_str().unwrap();

        let all = listed(&s).await;
        assert_eq!(all.len(), 2, "{all:?}");
        let admin = &all[0];
        assert_eq!(
            (&admin["admin"], &admin["tenant"], &admin["expires_at"]),
            (&json!(true), &Value::Null, &Value::Null),
            "{admin}"
        );
        assert_eq!(admin["scopes"].as_array().unwrap().len(), 9, "{admin}");
        let mine = &all[1];
        assert_eq!(mine["id"], id);
        assert_eq!(mine["tenant"], "acme");
        assert_eq!(mine["admin"], false);
        assert_eq!(mine["scopes"], json!(["jobs:read", "jobs:queue"]));
        assert_eq!(mine["expires_at"], expected);
        assert_eq!(mine["expired"], false);
        assert!(mine["created_at"].as_str().is_some(), "{mine}");
        assert_eq!(mine["last_used_at"], Value::Null, "not used yet");

        // A use is recorded off the request's path: soon, not at once.
        let (status, body) = s.get("/v1/jobs", token).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let all = listed(&s).await;
            if let Some(at) = all[1]["last_used_at"].as_str() {
                assert!(at >= all[1]["created_at"].as_str().unwrap(), "{all:?}");
                break;
            }
            assert!(Instant::now() < deadline, "the use was never recorded");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        s.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expiry_must_be_a_time_ahead_within_ten_years() {
    let s = TestServer::start(0).await;
    let (status, body) = s.post("/v1/tenants", ADMIN, json!({"name": "acme"})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let past = (chrono::Utc::now() - chrono::Duration::seconds(1)).to_rfc3339();
    let far = (chrono::Utc::now() + chrono::Duration::days(3_700)).to_rfc3339();
    for (at, says) in [
        ("next week", "not an RFC 3339 time"),
        (past.as_str(), "not in the future"),
        (far.as_str(), "more than ten years ahead"),
    ] {
        let (status, body) = s
            .post(
                "/v1/tokens",
                ADMIN,
                json!({"tenant": "acme", "scopes": ["jobs:read"], "expires_at": at}),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{at}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{at}: {message}");
    }
    assert_eq!(listed(&s).await.len(), 1, "nothing was minted");
    s.stop().await;
}

#[test]
fn the_cli_creates_lists_and_revokes_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let server = crate::cli_events::Server::start(dir.path(), "127.0.0.1:0", &[]);
    let (code, _, err) = server.cli(&["tenant", "create", "acme"]);
    assert_eq!(code, Some(0), "{err}");

    let (given, expected) = ahead(365);
    let (code, out, err) = server.cli(&[
        "token",
        "create",
        "--tenant",
        "acme",
        "--scope",
        "jobs:read",
        "--expires-at",
        &given,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let token = out.trim().to_owned();
    assert!(
        token.starts_with("tbx_"),
        "stdout is the token alone: {out}"
    );
    let id = err
        .split_whitespace()
        .find(|w| w.starts_with("tok_"))
        .unwrap_or_else(|| panic!("stderr names the id: {err}"))
        .to_owned();
    assert!(err.contains(&format!("expires {expected}")), "{err}");
    let (code, out, _) = server.cli_as(&token, &["job", "list"]);
    assert_eq!(code, Some(0), "the token works: {out}");

    let (code, out, err) = server.cli(&["token", "list"]);
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("ID")
            && lines[0].contains("LAST USED")
            && lines[0].contains("EXPIRES"),
        "{out}"
    );
    assert!(lines[1].contains("(admin)"), "{out}");
    assert!(
        lines[2].starts_with(&id) && lines[2].contains("acme") && lines[2].contains("jobs:read"),
        "{out}"
    );
    assert!(!out.contains(&token), "{out}");
    let (code, out, _) = server.cli(&["token", "list", "--json"]);
    assert_eq!(code, Some(0));
    let all: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(all["tokens"][1]["id"], id.as_str());
    assert_eq!(all["tokens"][1]["expires_at"], expected.as_str());
    let admin_id = all["tokens"][0]["id"].as_str().unwrap().to_owned();

    let (code, out, err) = server.cli(&["token", "revoke", &id]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), format!("revoked token {id}"));
    let (code, _, err) = server.cli_as(&token, &["job", "list"]);
    assert_ne!(code, Some(0));
    assert!(err.contains("UNAUTHENTICATED"), "{err}");
    let (code, _, err) = server.cli(&["token", "revoke", &id]);
    assert_ne!(code, Some(0));
    assert!(err.contains("taskbox token list"), "{err}");
    let (code, _, err) = server.cli(&["token", "revoke", &admin_id]);
    assert_ne!(code, Some(0));
    assert!(err.contains("TASKBOX_ADMIN_TOKEN"), "{err}");
    let (code, _, err) = server.cli(&[
        "token",
        "create",
        "--tenant",
        "acme",
        "--expires-at",
        "soon",
    ]);
    assert_ne!(code, Some(0));
    assert!(err.contains("not an RFC 3339 time"), "{err}");
}
