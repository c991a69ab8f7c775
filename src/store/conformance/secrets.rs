//! Conformance cases of secrets: put at version 1, replaced with the
//! version one more, listed by name without their bytes, read back sealed
//! by name, deleted; each tenant's apart; at most `MAX_SECRETS` a tenant;
//! puts of one name at once make one row.

use super::*;

fn secret(tenant: &str, name: &str, bytes: &[u8]) -> NewSecret {
    NewSecret {
        tenant: tenant.into(),
        name: name.into(),
        nonce: vec![7; 24],
        ciphertext: bytes.to_vec(),
    }
}

async fn names(h: &Harness, tenant: &str) -> Vec<String> {
    h.store
        .secret_list(Some(tenant))
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect()
}

pub(super) async fn secrets_are_put_replaced_listed_and_deleted(h: Harness) {
    setup(&h).await;
    let s = &h.store;
    let t0 = h.clock.now();
    let (made, new) = s.secret_put(secret(A, "b", b"one")).await.unwrap();
    assert!(new);
    assert_eq!(
        made,
        SecretRecord {
            tenant: A.into(),
            name: "b".into(),
            version: 1,
            created_at: t0,
            updated_at: t0,
        }
    );
    // A replace keeps when it was made and counts the put.
    h.clock.advance(1_000);
    let (again, new) = s.secret_put(secret(A, "b", b"two")).await.unwrap();
    assert!(!new);
    assert_eq!(
        (again.version, again.created_at, again.updated_at),
        (2, t0, t0 + 1_000)
    );
    // Any bytes are kept as they were given, zeros and all.
    let odd = [0u8, 255, 0, 1, 128];
    for name in ["a.b", "_z", "A"] {
        s.secret_put(secret(A, name, &odd)).await.unwrap();
    }
    // By name as bytes: upper case before `_` before lower case.
    assert_eq!(names(&h, A).await, ["A", "_z", "a.b", "b"]);
    let listed = s.secret_list(Some(A)).await.unwrap();
    assert_eq!(listed[3], again, "the list shows what the put answered");

    // Read back sealed: only the names asked for that exist, by name.
    let asked: Vec<String> = ["b", "missing", "A"].map(String::from).to_vec();
    let sealed = s.secret_get_many(A, &asked).await.unwrap();
    let got: Vec<(&str, u32, &[u8])> = sealed
        .iter()
        .map(|x| (x.name.as_str(), x.version, x.ciphertext.as_slice()))
        .collect();
    assert_eq!(got, [("A", 1, &odd[..]), ("b", 2, &b"two"[..])]);
    assert!(sealed.iter().all(|x| x.nonce == vec![7; 24]));
    assert!(s.secret_get_many(A, &[]).await.unwrap().is_empty());

    // Another tenant sees none of them, reads none and deletes none.
    assert!(s.secret_list(Some(B)).await.unwrap().is_empty());
    assert!(s.secret_get_many(B, &asked).await.unwrap().is_empty());
    assert!(!s.secret_delete(B, "b").await.unwrap());
    // Its own secret of the same name is its own.
    let (theirs, new) = s.secret_put(secret(B, "b", b"bee")).await.unwrap();
    assert!(new && theirs.version == 1);
    let mine = s.secret_get_many(A, &asked[..1]).await.unwrap();
    assert_eq!(mine[0].ciphertext, b"two");

    // Deleted once; put again, it starts over.
    assert!(s.secret_delete(A, "b").await.unwrap());
    assert!(!s.secret_delete(A, "b").await.unwrap());
    assert_eq!(names(&h, A).await, ["A", "_z", "a.b"]);
    assert!(s.secret_get_many(A, &asked[..1]).await.unwrap().is_empty());
    assert_eq!(names(&h, B).await, ["b"]);
    h.clock.advance(1_000);
    let (back, new) = s.secret_put(secret(A, "b", b"three")).await.unwrap();
    assert!(new);
    assert_eq!(
        (back.version, back.created_at),
        (1, t0 + 2_000),
        "a deleted secret's versions are gone with it"
    );
}

pub(super) async fn a_tenant_has_at_most_max_secrets(h: Harness) {
    setup(&h).await;
    // All at once, so that the SQLite writer commits them in a few batches.
    let puts = (0..MAX_SECRETS).map(|i| {
        let s = h.store.clone();
        tokio::spawn(async move { s.secret_put(secret(A, &format!("s{i:04}"), b"x")).await })
    });
    for p in puts {
        assert!(p.await.unwrap().unwrap().1);
    }
    let over = h.store.secret_put(secret(A, "one_more", b"x")).await;
    assert!(
        matches!(&over, Err(StoreError::QuotaExceeded(e)) if e.quota == "secrets" && e.limit == MAX_SECRETS),
        "{over:?}"
    );
    assert_eq!(
        h.store.secret_list(Some(A)).await.unwrap().len() as u64,
        MAX_SECRETS
    );
    // Replacing one is no new one; another tenant has its own room; a
    // delete makes room.
    let (r, new) = h.store.secret_put(secret(A, "s0000", b"y")).await.unwrap();
    assert!(!new && r.version == 2);
    h.store
        .secret_put(secret(B, "one_more", b"x"))
        .await
        .unwrap();
    assert!(h.store.secret_delete(A, "s0001").await.unwrap());
    h.store
        .secret_put(secret(A, "one_more", b"x"))
        .await
        .unwrap();
}

pub(super) async fn puts_of_one_secret_at_once_make_one_row(h: Harness) {
    setup(&h).await;
    let puts = (0..16u8).map(|i| {
        let s = h.store.clone();
        tokio::spawn(async move { s.secret_put(secret(A, "race", &[i])).await })
    });
    let mut made = 0;
    let mut versions = Vec::new();
    for p in puts {
        let (r, new) = p.await.unwrap().unwrap();
        made += usize::from(new);
        versions.push(r.version);
    }
    versions.sort_unstable();
    assert_eq!(made, 1, "one put made it, the others replaced it");
    assert_eq!(
        versions,
        (1..=16).collect::<Vec<u32>>(),
        "each put one version"
    );
    let listed = h.store.secret_list(Some(A)).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].version, 16);
}
