//! Conformance cases of tokens: ids, expiries and times stored and read
//! back, listed (the admin's first, then by tenant) without hashes,
//! revoked by id (never the admin's), and uses recorded, the latest kept.

use super::*;

fn token(id: &str, hash: &str, tenant: Option<&str>, expires_at: Option<Millis>) -> NewToken {
    NewToken {
        id: id.into(),
        hash: hash.into(),
        tenant: tenant.map(str::to_owned),
        scopes: match tenant {
            Some(_) => vec![Scope::JobsRead, Scope::SecretsWrite],
            None => vec![],
        },
        expires_at,
    }
}

async fn ids_listed(h: &Harness) -> Vec<String> {
    let all = h.store.token_list().await.unwrap();
    all.into_iter().map(|t| t.id).collect()
}

pub(super) async fn tokens_are_listed_revoked_and_expire(h: Harness) {
    setup(&h).await;
    let s = &h.store;
    assert!(s.token_list().await.unwrap().is_empty());
    let t0 = h.clock.now();
    let expiry = t0 + 86_400_000;
    s.token_insert(token("tok_b1", "hash-b1", Some(B), None))
        .await
        .unwrap();
    h.clock.advance(1_000);
    s.token_insert(token("tok_a2", "hash-a2", Some(A), Some(expiry)))
        .await
        .unwrap();
    h.clock.advance(1_000);
    s.token_insert(token("tok_a1", "hash-a1", Some(A), None))
        .await
        .unwrap();
    s.token_insert(token("tok_admin", "hash-admin", None, None))
        .await
        .unwrap();

    // What a request's check reads: the id and the expiry with the rest.
    assert_eq!(
        s.token_get("hash-a2").await.unwrap(),
        Some(TokenRecord {
            id: "tok_a2".into(),
            tenant: Some(A.into()),
            scopes: vec![Scope::JobsRead, Scope::SecretsWrite],
            admin: false,
            expires_at: Some(expiry),
        })
    );
    // The admin's first, then by tenant, then by when each was made.
    assert_eq!(
        ids_listed(&h).await,
        ["tok_admin", "tok_a2", "tok_a1", "tok_b1"]
    );
    let all = s.token_list().await.unwrap();
    assert_eq!(
        all[1],
        TokenInfo {
            id: "tok_a2".into(),
            tenant: Some(A.into()),
            scopes: vec![Scope::JobsRead, Scope::SecretsWrite],
            admin: false,
            created_at: t0 + 1_000,
            last_used_at: None,
            expires_at: Some(expiry),
        }
    );
    assert!(all[0].admin && all[0].tenant.is_none());
    assert_eq!((all[3].created_at, all[3].expires_at), (t0, None));

    // An expired token is still the store's (the caller refuses it).
    h.clock.advance(2 * 86_400_000);
    assert!(s.token_get("hash-a2").await.unwrap().is_some());
    assert_eq!(s.token_list().await.unwrap().len(), 4);

    // Revoked by id: gone from every read; a second revoke finds none.
    assert_eq!(s.token_revoke("tok_a2").await.unwrap(), Revocation::Revoked);
    assert_eq!(s.token_get("hash-a2").await.unwrap(), None);
    assert_eq!(ids_listed(&h).await, ["tok_admin", "tok_a1", "tok_b1"]);
    assert_eq!(
        s.token_revoke("tok_a2").await.unwrap(),
        Revocation::NotFound
    );
    assert_eq!(
        s.token_revoke("tok_nobody").await.unwrap(),
        Revocation::NotFound
    );
    // A hash is not an id.
    assert_eq!(
        s.token_revoke("hash-a1").await.unwrap(),
        Revocation::NotFound
    );

    // The admin token is never revoked here.
    assert_eq!(
        s.token_revoke("tok_admin").await.unwrap(),
        Revocation::Admin
    );
    assert!(s.token_get("hash-admin").await.unwrap().unwrap().admin);
    // A new admin token replaces it, under its own id.
    s.token_insert(token("tok_admin2", "hash-admin2", None, None))
        .await
        .unwrap();
    assert_eq!(s.token_get("hash-admin").await.unwrap(), None);
    assert_eq!(ids_listed(&h).await, ["tok_admin2", "tok_a1", "tok_b1"]);
    assert_eq!(
        s.token_revoke("tok_admin").await.unwrap(),
        Revocation::NotFound
    );
}

async fn used(h: &Harness, id: &str) -> Option<Millis> {
    let all = h.store.token_list().await.unwrap();
    all.into_iter().find(|t| t.id == id).unwrap().last_used_at
}

pub(super) async fn a_tokens_use_is_recorded(h: Harness) {
    setup(&h).await;
    let s = &h.store;
    s.token_insert(token("tok_a", "hash-a", Some(A), None))
        .await
        .unwrap();
    s.token_insert(token("tok_b", "hash-b", Some(B), None))
        .await
        .unwrap();
    assert_eq!(used(&h, "tok_a").await, None);

    h.clock.advance(5_000);
    let t1 = h.clock.now();
    s.token_touch("tok_a").await.unwrap();
    assert_eq!(used(&h, "tok_a").await, Some(t1));
    assert_eq!(used(&h, "tok_b").await, None, "only the token named");

    h.clock.advance(60_000);
    s.token_touch("tok_a").await.unwrap();
    assert_eq!(used(&h, "tok_a").await, Some(t1 + 60_000));
    // A use recorded late (another process's, on a clock behind) does not
    // take the time back.
    h.clock.advance(-30_000);
    s.token_touch("tok_a").await.unwrap();
    assert_eq!(used(&h, "tok_a").await, Some(t1 + 60_000));

    // A token revoked meanwhile, or none of that id: nothing to record.
    s.token_touch("tok_nobody").await.unwrap();
    s.token_revoke("tok_b").await.unwrap();
    s.token_touch("tok_b").await.unwrap();
    assert_eq!(ids_listed(&h).await, ["tok_a"]);
}
