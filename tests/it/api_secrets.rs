//! Secrets through the API and the CLI: put, replace (the version goes
//! up), list and delete; no answer ever holds a value; the scope and the
//! tenant hold; bad names and values are refused with reasons; the key
//! file is made owner-only at the first start and kept after; another key
//! opens nothing; the value on disk is sealed. And `taskbox secret …`
//! against the real binary.

use crate::server::{TestServer, ADMIN, ALL_SCOPES};
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use serde_json::{json, Value};
use std::path::Path;
use taskbox::secrets::{self, Sealed, SecretsError, SecretsKey, Vault};

const VALUE: &str = "sk_live_canary_5f2c9a7e1b";

async fn put(s: &TestServer, token: &str, name: &str, value: &str) -> (StatusCode, Value) {
    s.call(
        Method::PUT,
        &format!("/v1/secrets/{name}"),
        token,
        Some(json!({ "value": value })),
    )
    .await
}

async fn names(s: &TestServer, token: &str) -> Vec<String> {
    let (status, body) = s.get("/v1/secrets", token).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["secrets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Every byte of every file in `dir` (the database, its WAL, …).
fn every_byte(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            out.push((path.display().to_string(), std::fs::read(&path).unwrap()));
        } else if path.is_dir() {
            out.extend(every_byte(&path));
        }
    }
    out
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// What the runner will do for an attempt: the tenant's declared secrets.
async fn reveal(s: &TestServer, tenant: &str, names: &[&str]) -> Vec<(String, String)> {
    let app = s.app.as_ref().unwrap();
    let vault = app.state.registry.vault().expect("the server has a vault");
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    secrets::reveal(&*app.state.store, vault, tenant, &names)
        .await
        .unwrap()
}

#[tokio::test]
async fn secrets_are_put_replaced_listed_and_deleted_and_never_shown() {
    TestServer::each_backend(0, async |s: TestServer| {
        let t = s.tenant("acme", &["secrets:write"]).await;
        let (status, made) = put(&s, &t, "STRIPE_KEY", VALUE).await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
        assert_eq!(made["name"], "STRIPE_KEY");
        assert_eq!(made["version"], 1);
        assert_eq!(made["created_at"], made["updated_at"]);
        let keys: Vec<&String> = made.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["tenant", "name", "version", "created_at", "updated_at"]
        );
        assert_eq!(made["tenant"], "acme");

        // A replace: 200, the version one more, made when it was.
        let (status, again) = put(&s, &t, "STRIPE_KEY", "sk_live_second").await;
        assert_eq!(status, StatusCode::OK, "{again}");
        assert_eq!(again["version"], 2);
        assert_eq!(again["created_at"], made["created_at"]);
        let (status, other) = put(&s, &t, "_db.password-2", "hunter2-canary").await;
        assert_eq!(status, StatusCode::CREATED, "{other}");

        // Listed by name, with versions and times, and no value anywhere.
        let (status, list) = s.get("/v1/secrets", &t).await;
        assert_eq!(status, StatusCode::OK, "{list}");
        assert_eq!(
            list["secrets"][1],
            json!({"tenant": "acme", "name": "_db.password-2", "version": 1,
                   "created_at": other["created_at"], "updated_at": other["updated_at"]})
        );
        assert_eq!(names(&s, &t).await, ["STRIPE_KEY", "_db.password-2"]);
        for answer in [&made, &again, &other, &list] {
            let text = answer.to_string();
            for value in [VALUE, "sk_live_second", "hunter2-canary"] {
                assert!(!text.contains(value), "{text}");
            }
        }
        // The runner's view: what the tenant has of the names asked.
        assert_eq!(
            reveal(&s, "acme", &["STRIPE_KEY", "NOT_THERE"]).await,
            [("STRIPE_KEY".to_owned(), "sk_live_second".to_owned())]
        );

        // Deleted once, then 404.
        let (status, body) = s
            .call(Method::DELETE, "/v1/secrets/STRIPE_KEY", &t, None)
            .await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
        let (status, body) = s
            .call(Method::DELETE, "/v1/secrets/STRIPE_KEY", &t, None)
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        assert_eq!(body["error"]["code"], "SECRET_NOT_FOUND");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("GET /v1/secrets"),
            "{body}"
        );
        assert_eq!(names(&s, &t).await, ["_db.password-2"]);
        assert!(reveal(&s, "acme", &["STRIPE_KEY"]).await.is_empty());
        s.stop().await;
    })
    .await;
}

#[tokio::test]
async fn secrets_need_their_scope_and_stay_in_their_tenant() {
    let s = TestServer::start(0).await;
    let everything_else: Vec<&str> = ALL_SCOPES
        .iter()
        .copied()
        .filter(|x| *x != "secrets:write")
        .collect();
    let a = s.tenant("acme", &["secrets:write"]).await;
    let b = s.tenant("globex", &["secrets:write"]).await;
    let a_other = s.token("acme", &everything_else).await;

    assert_eq!(
        put(&s, &a, "STRIPE_KEY", "acme-value").await.0,
        StatusCode::CREATED
    );
    // Without the scope: 403 on every route, naming it.
    for (method, path) in [
        (Method::PUT, "/v1/secrets/STRIPE_KEY"),
        (Method::GET, "/v1/secrets"),
        (Method::DELETE, "/v1/secrets/STRIPE_KEY"),
    ] {
        let body = (method == Method::PUT).then(|| json!({"value": "x"}));
        let (status, answer) = s.call(method.clone(), path, &a_other, body).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{method} {path}: {answer}");
        assert_eq!(answer["error"]["code"], "JOB_ACCESS_DENIED");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("secrets:write"),
            "{answer}"
        );
    }
    // Another tenant sees none of acme's, deletes none, and has its own.
    assert!(names(&s, &b).await.is_empty());
    let (status, _) = s
        .call(Method::DELETE, "/v1/secrets/STRIPE_KEY", &b, None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, theirs) = put(&s, &b, "STRIPE_KEY", "globex-value").await;
    assert_eq!(
        (status, theirs["version"].clone()),
        (StatusCode::CREATED, json!(1))
    );
    // The admin acts in the tenant its header names.
    let req = Request::put("/v1/secrets/ADMIN_PUT")
        .header("authorization", format!("Bearer {ADMIN}"))
        .header("taskbox-tenant", "acme")
        .body(Body::from(json!({"value": "from-admin"}).to_string()))
        .unwrap();
    assert_eq!(s.raw(req).await.0, StatusCode::CREATED);
    assert_eq!(names(&s, &a).await, ["ADMIN_PUT", "STRIPE_KEY"]);
    assert!(names(&s, ADMIN).await.is_empty(), "the admin's own tenant");
    // Each tenant's task reads its own, whatever the names asked.
    let both = ["STRIPE_KEY", "ADMIN_PUT"];
    assert_eq!(
        reveal(&s, "acme", &both).await,
        [
            ("ADMIN_PUT".to_owned(), "from-admin".to_owned()),
            ("STRIPE_KEY".to_owned(), "acme-value".to_owned())
        ]
    );
    assert_eq!(
        reveal(&s, "globex", &both).await,
        [("STRIPE_KEY".to_owned(), "globex-value".to_owned())]
    );
    // Mintable, and shown by whoami.
    let (status, who) = s.get("/v1/whoami", &a).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(who["scopes"], json!(["secrets:write"]));
    s.stop().await;
}

#[tokio::test]
async fn bad_names_and_values_are_refused_with_reasons() {
    let s = TestServer::start(0).await;
    let t = s.tenant("acme", &["secrets:write"]).await;
    let long = "A".repeat(65);
    for (name, says) in [
        ("1KEY", "starts with '1'"),
        ("a%20b", "has ' ' at byte 1"),
        ("a%2Fb", "has '/' at byte 1"),
        ("%C3%A9t%C3%A9", "has 'é' at byte 0"),
        (long.as_str(), "is 65 characters long"),
    ] {
        let (status, body) = put(&s, &t, name, "v").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{name}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{name}: {message}");
        assert!(message.contains("like STRIPE_KEY"), "{message}");
    }
    let max = "v".repeat(64 * 1024);
    assert_eq!(put(&s, &t, "BIG", &max).await.0, StatusCode::CREATED);
    let over = format!("{max}v");
    for (body, says) in [
        (json!({"value": ""}), "the secret's value is empty"),
        (
            json!({"value": "seven b"}),
            "is 7 bytes; a value is at least 8",
        ),
        (
            json!({"value": over}),
            "is 65537 bytes; a value is at most 65536",
        ),
        (json!({"value": 42}), "expected a string"),
        (json!({}), "missing field `value`"),
        (json!({"value": "v", "name": "X"}), "unknown field `name`"),
        (json!(["v"]), "must be a JSON object"),
    ] {
        let (status, answer) = s.call(Method::PUT, "/v1/secrets/K", &t, Some(body)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{message}");
        assert!(!message.contains("vvvv"), "no value in a message");
    }
    assert_eq!(names(&s, &t).await, ["BIG"]);
    s.stop().await;
}

#[tokio::test]
async fn a_tenant_keeps_at_most_a_thousand_secrets() {
    let s = TestServer::start(0).await;
    let t = s.tenant("acme", &["secrets:write"]).await;
    let puts = (0..1000).map(|i| {
        let (s, t) = (&s, &t);
        async move { put(s, t, &format!("S{i:04}"), "value-of-8").await.0 }
    });
    for status in futures_util::future::join_all(puts).await {
        assert_eq!(status, StatusCode::CREATED);
    }
    let (status, body) = put(&s, &t, "ONE_MORE", "value-of-8").await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("1000 secrets") && message.contains("DELETE /v1/secrets/"),
        "{message}"
    );
    // A replace is no new one.
    assert_eq!(put(&s, &t, "S0000", "other-value").await.0, StatusCode::OK);
    s.stop().await;
}

#[tokio::test]
async fn the_key_is_made_owner_only_kept_across_restarts_and_no_other_opens() {
    let s = TestServer::start(0).await;
    let path = s.dir().join("secrets.key");
    let key = std::fs::read(&path).expect("the first start made the key");
    assert_eq!(key.len(), 32);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
    let t = s.tenant("acme", &["secrets:write"]).await;
    assert_eq!(
        put(&s, &t, "STRIPE_KEY", VALUE).await.0,
        StatusCode::CREATED
    );

    // The value on disk is sealed: not in any file of the data dir, and
    // the row holds a 24-byte nonce and the value's length and a tag.
    let s = s.restart(0).await;
    for (file, bytes) in every_byte(s.dir()) {
        assert!(
            !contains(&bytes, VALUE.as_bytes()),
            "{file} holds the value"
        );
    }
    let db = rusqlite::Connection::open_with_flags(
        s.dir().join("taskbox.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let (nonce, sealed): (Vec<u8>, Vec<u8>) = db
        .query_row(
            "SELECT nonce, ciphertext FROM secrets WHERE tenant = 'acme' AND name = 'STRIPE_KEY'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    drop(db);
    assert_eq!((nonce.len(), sealed.len()), (24, VALUE.len() + 16));
    assert!(!contains(&sealed, VALUE.as_bytes()));

    // The restart read the same key, and the secret still opens.
    assert_eq!(std::fs::read(&path).unwrap(), key, "the key is kept");
    assert_eq!(
        reveal(&s, "acme", &["STRIPE_KEY"]).await,
        [("STRIPE_KEY".to_owned(), VALUE.to_owned())]
    );
    // Another key opens nothing, and says what to check.
    let other = Vault::new(&SecretsKey::generate().unwrap());
    let store = s.app.as_ref().unwrap().state.store.clone();
    let err = secrets::reveal(&*store, &other, "acme", &["STRIPE_KEY".to_owned()])
        .await
        .unwrap_err();
    assert!(matches!(err, SecretsError::WrongKey { .. }), "{err}");
    let said = err.to_string();
    assert!(
        said.contains("was --secrets-key-file changed?")
            && said.contains("every server sharing a database needs the same key"),
        "{said}"
    );
    assert!(!said.contains(VALUE));
    // Sealed bytes moved to another tenant's row do not open there.
    let sealed = Sealed {
        nonce: nonce.try_into().unwrap(),
        ciphertext: sealed,
    };
    let vault = Vault::new(&secrets::load_or_create(&path).unwrap().0);
    assert_eq!(vault.open("acme", "STRIPE_KEY", &sealed).unwrap(), VALUE);
    assert!(vault.open("globex", "STRIPE_KEY", &sealed).is_err());

    // A server given another key file makes it, and cannot open the old
    // secret (names still list; a new put opens under the new key).
    let elsewhere = s.dir().join("other.key");
    let moved = elsewhere.clone();
    let s = s
        .restart_with(0, move |c| c.secrets_key_file = Some(moved))
        .await;
    assert_ne!(std::fs::read(&elsewhere).unwrap(), key);
    assert_eq!(names(&s, &t).await, ["STRIPE_KEY"]);
    let app = s.app.as_ref().unwrap();
    let err = secrets::reveal(
        &*app.state.store,
        app.state.registry.vault().unwrap(),
        "acme",
        &["STRIPE_KEY".to_owned()],
    )
    .await
    .unwrap_err();
    assert!(matches!(err, SecretsError::WrongKey { .. }), "{err}");
    assert_eq!(
        put(&s, &t, "STRIPE_KEY", "new-value").await.0,
        StatusCode::OK
    );
    assert_eq!(
        reveal(&s, "acme", &["STRIPE_KEY"]).await,
        [("STRIPE_KEY".to_owned(), "new-value".to_owned())]
    );
    s.stop().await;
}

#[tokio::test]
async fn a_key_file_of_the_wrong_length_stops_the_start_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secrets.key");
    std::fs::write(&path, b"too short").unwrap();
    let cfg = crate::server::config(dir.path(), 0);
    let err = match taskbox::app::App::start(cfg).await {
        Ok(_) => panic!("a server started with a 9-byte key"),
        Err(e) => format!("{e:#}"),
    };
    assert!(
        err.contains(&path.display().to_string())
            && err.contains("holds 9 bytes, not the 32")
            && err.contains("move it away"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        b"too short",
        "left as it was"
    );
}

#[test]
fn the_cli_puts_from_stdin_lists_and_removes() {
    let dir = tempfile::tempdir().unwrap();
    let server = crate::cli_events::Server::start(dir.path(), "127.0.0.1:0", &[]);

    let (code, out, err) = server.cli_stdin(&["secret", "put", "STRIPE_KEY"], b"sk_cli_canary\n");
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), "made secret STRIPE_KEY (version 1)");
    let file = dir.path().join("value.txt");
    std::fs::write(&file, "sk_cli_second\n").unwrap();
    let (code, out, err) = server.cli(&[
        "secret",
        "put",
        "STRIPE_KEY",
        "--value-file",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), "replaced secret STRIPE_KEY (version 2)");
    let (code, _, err) = server.cli_stdin(&["secret", "put", "db.url", "--json"], b"postgres://x");
    assert_eq!(code, Some(0), "{err}");

    // Refused before anything is sent: a bad name, an empty value, and a
    // value on the command line.
    let (code, _, err) = server.cli_stdin(&["secret", "put", "BAD!"], b"v");
    assert_ne!(code, Some(0));
    assert!(err.contains("has '!'"), "{err}");
    let (code, _, err) = server.cli_stdin(&["secret", "put", "EMPTY"], b"\n");
    assert_ne!(code, Some(0));
    assert!(
        err.contains("value is empty") && err.contains("stdin"),
        "{err}"
    );
    let (code, _, err) = server.cli(&["secret", "put", "K", "--value", "v"]);
    assert_ne!(code, Some(0));
    assert!(err.contains("--value"), "{err}");

    let (code, out, err) = server.cli(&["secret", "list"]);
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("NAME") && lines[0].contains("VERSION"),
        "{out}"
    );
    assert!(
        lines[1].starts_with("STRIPE_KEY") && lines[1].contains(" 2 "),
        "{out}"
    );
    assert!(lines[2].starts_with("db.url"), "{out}");
    let (code, out, _) = server.cli(&["secret", "list", "--json"]);
    assert_eq!(code, Some(0));
    let all: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(all["secrets"][0]["name"], "STRIPE_KEY");
    assert_eq!(all["secrets"][0]["version"], 2);
    for shown in [&out, &lines.join("\n")] {
        assert!(
            !shown.contains("sk_cli") && !shown.contains("postgres://"),
            "{shown}"
        );
    }

    let (code, out, _) = server.cli(&["secret", "rm", "db.url"]);
    assert_eq!((code, out.trim()), (Some(0), "removed secret db.url"));
    let (code, _, err) = server.cli(&["secret", "rm", "db.url"]);
    assert_ne!(code, Some(0));
    assert!(err.contains("taskbox secret list"), "{err}");

    // The value the server sealed is the one sent, its line ending dropped,
    // and it is nowhere on disk in the clear.
    drop(server);
    let key = secrets::load_or_create(&dir.path().join("secrets.key"))
        .unwrap()
        .0;
    let db = rusqlite::Connection::open(dir.path().join("taskbox.db")).unwrap();
    let (nonce, ciphertext): (Vec<u8>, Vec<u8>) = db
        .query_row(
            "SELECT nonce, ciphertext FROM secrets WHERE tenant = 'default' AND name = 'STRIPE_KEY'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    drop(db);
    let sealed = Sealed {
        nonce: nonce.try_into().unwrap(),
        ciphertext,
    };
    assert_eq!(
        Vault::new(&key)
            .open("default", "STRIPE_KEY", &sealed)
            .unwrap(),
        "sk_cli_second"
    );
    for (file, bytes) in every_byte(dir.path()) {
        for value in ["sk_cli_canary", "sk_cli_second"] {
            if file.ends_with("value.txt") {
                continue;
            }
            assert!(!contains(&bytes, value.as_bytes()), "{file} holds {value}");
        }
    }
}
