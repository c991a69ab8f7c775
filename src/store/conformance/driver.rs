//! The driver's primitives, each once on every backend: what `Exec` binds
//! and hands back, how it tells failures apart, a JSON array read as a
//! table, and a write that fails leaving nothing. The transactions written
//! over `Exec` rely on exactly these.

use super::*;
use crate::store::exec::{args, Arg, Commit, DbError};

/// A value of each kind goes in and comes back as it went, NULL included
/// (typed, as PostgreSQL needs), on a reader's connection and in a write.
pub(super) async fn the_driver_binds_each_kind_and_typed_nulls(h: Harness) {
    let sql = "SELECT CAST($1 AS BIGINT), CAST($2 AS TEXT), CAST($3 AS DOUBLE PRECISION), \
               CAST($4 AS BOOLEAN)";
    type Row = (Option<i64>, Option<String>, Option<f64>, Option<bool>);
    let some: Row = (Some(-7), Some("é x".to_owned()), Some(2.5), Some(true));
    let text = some.1.clone();
    let read: Option<Row> = h
        .store
        .read()
        .await
        .unwrap()
        .optional(sql, args![-7i64, text.as_deref(), 2.5, true])
        .await
        .unwrap();
    assert_eq!(read, Some(some.clone()));
    let nulls: &[Arg<'_>] = &[
        Arg::Int(None),
        Arg::Text(None),
        Arg::Real(None),
        Arg::Bool(None),
    ];
    let read: Option<Row> = h
        .store
        .read()
        .await
        .unwrap()
        .optional(sql, nulls)
        .await
        .unwrap();
    assert_eq!(read, Some((None, None, None, None)));
    let written: Row = h
        .store
        .write(Commit::PROMPT, move |tx, _| {
            Box::pin(async move {
                let args = [
                    Arg::from(-7i64),
                    Arg::from(text.as_deref()),
                    Arg::from(2.5),
                    Arg::from(true),
                ];
                Ok(tx.optional(sql, &args).await?.unwrap_or_default())
            })
        })
        .await
        .unwrap();
    assert_eq!(written, some);
}

/// A `$N` parameter is bound by its number wherever it stands, on a
/// reader's connection and in a write.
pub(super) async fn the_driver_binds_parameters_by_number(h: Harness) {
    let sql = "SELECT CAST($2 AS TEXT), CAST($1 AS TEXT), CAST($2 AS TEXT)";
    let want = Some(("b".to_owned(), "a".to_owned(), "b".to_owned()));
    let read: Option<(String, String, String)> = h
        .store
        .read()
        .await
        .unwrap()
        .optional(sql, args!["a", "b"])
        .await
        .unwrap();
    assert_eq!(read, want);
    let written = h
        .store
        .write(Commit::PROMPT, move |tx, _| {
            Box::pin(async move { tx.optional(sql, args!["a", "b"]).await })
        })
        .await
        .unwrap();
    assert_eq!(written, want);
}

/// What a refused statement was refused for: a uniqueness rule, a
/// foreign key, or something else.
async fn refusal(h: &Harness, sql: &'static str, name: &'static str) -> String {
    let e = h
        .store
        .write(Commit::PROMPT, move |tx, _| {
            Box::pin(async move {
                let kind = match tx.execute(sql, args![name, 0i64]).await {
                    Ok(n) => format!("ok {n}"),
                    Err(DbError::Unique(_)) => "unique".into(),
                    Err(DbError::ForeignKey(_)) => "foreign key".into(),
                    Err(e) => format!("other: {e}"),
                };
                // Refused either way, so that nothing of it stands.
                Err::<(), _>(StoreError::Conflict(kind))
            })
        })
        .await
        .unwrap_err();
    e.to_string()
}

/// A uniqueness rule and a foreign key refuse a statement each as itself.
pub(super) async fn the_driver_tells_unique_and_foreign_key_refusals_apart(h: Harness) {
    setup(&h).await;
    let tenant = "INSERT INTO tenants (name, created_at) VALUES ($1, $2)";
    assert_eq!(refusal(&h, tenant, A).await, "unique");
    let component = "INSERT INTO components (tenant, digest, size, abi, created_at) \
                     VALUES ($1, 'sha256:none', 1, 'component', $2)";
    assert_eq!(
        refusal(&h, component, "no-such-tenant").await,
        "foreign key"
    );
    assert_eq!(refusal(&h, tenant, "fresh").await, "ok 1");
}

/// A write that fails leaves nothing of what it wrote before its failure.
pub(super) async fn a_write_that_fails_leaves_nothing(h: Harness) {
    let e = h
        .store
        .write(Commit::PROMPT, |tx, _| {
            Box::pin(async move {
                let sql = "INSERT INTO tenants (name, created_at) VALUES ($1, $2)";
                assert_eq!(tx.execute(sql, args!["gone", 0i64]).await?, 1);
                Err::<(), _>(StoreError::Conflict("refused".into()))
            })
        })
        .await
        .unwrap_err();
    assert_eq!(e.to_string(), "refused");
    assert!(h.store.tenant_get("gone").await.unwrap().is_none());
    // The next write on the same connection is whole.
    h.store.tenant_insert("kept").await.unwrap();
    assert!(h.store.tenant_get("kept").await.unwrap().is_some());
}

/// A JSON array parameter reads as a table of typed columns in the
/// array's order (`json_rows`), or as a list of texts (`json_texts`).
pub(super) async fn a_json_array_reads_as_a_table_in_its_order(h: Harness) {
    let mut tx = h.store.read().await.unwrap();
    let d = tx.dialect();
    let sql = format!(
        "SELECT a.name, a.n FROM {} ORDER BY a.o",
        d.json_rows(1, "a", &[("name", "text"), ("n", "int8")])
    );
    let array = r#"[{"name":"z","n":2},{"name":"a","n":-1},{"name":"m"}]"#;
    let rows: Vec<(String, Option<i64>)> = tx.all(&sql, args![array]).await.unwrap();
    assert_eq!(
        rows,
        [
            ("z".to_owned(), Some(2)),
            ("a".to_owned(), Some(-1)),
            ("m".to_owned(), None)
        ]
    );
    let sql = format!(
        "SELECT count(*) FROM (SELECT 1 AS one) t WHERE 'b' IN ({})",
        d.json_texts(1)
    );
    let found: Option<i64> = tx.scalar(&sql, args![r#"["a","b"]"#]).await.unwrap();
    assert_eq!(found, Some(1));
    let none: Option<i64> = tx.scalar(&sql, args!["[]"]).await.unwrap();
    assert_eq!(none, Some(0));
}
