//! Conformance cases of workflow definitions: versioned one after the
//! other per name, read by version or newest, listed newest of each, and
//! counted with the tenant's task versions against `max_task_versions`.

use super::tenants::put;
use super::*;
use crate::quota::Quotas;

fn def(tenant: &str, name: &str, spec: &str) -> NewWorkflow {
    NewWorkflow {
        tenant: tenant.into(),
        name: name.into(),
        spec: spec.into(),
    }
}

pub(super) async fn workflow_versions_are_kept_and_counted(h: Harness) {
    setup(&h).await;
    let s = &h.store;
    let t0 = h.clock.now();
    let v1 = s
        .workflow_insert(def(A, "orders", "{\"v\":1}"))
        .await
        .unwrap();
    assert_eq!(
        (v1.version, v1.created_at, v1.spec.as_str()),
        (1, t0, "{\"v\":1}")
    );
    h.clock.advance(5);
    let v2 = s
        .workflow_insert(def(A, "orders", "{\"v\":2}"))
        .await
        .unwrap();
    assert_eq!((v2.version, v2.created_at), (2, t0 + 5));
    s.workflow_insert(def(A, "billing", "{}")).await.unwrap();
    s.workflow_insert(def(B, "orders", "{}")).await.unwrap();
    assert_eq!(
        s.workflow_get(A, "orders", None).await.unwrap(),
        Some(v2.clone())
    );
    assert_eq!(
        s.workflow_get(A, "orders", Some(1)).await.unwrap(),
        Some(v1)
    );
    assert_eq!(s.workflow_get(A, "orders", Some(3)).await.unwrap(), None);
    assert_eq!(s.workflow_get(A, "nope", None).await.unwrap(), None);
    let listed: Vec<(String, i32)> = s
        .workflow_list(A)
        .await
        .unwrap()
        .into_iter()
        .map(|w| (w.name, w.version))
        .collect();
    assert_eq!(listed, [("billing".into(), 1), ("orders".into(), 2)]);
    assert_eq!(
        s.workflow_get(B, "orders", None)
            .await
            .unwrap()
            .unwrap()
            .version,
        1
    );

    // Task and workflow versions count together: A has 3 workflow
    // versions, so with a quota of 4 one task fits and nothing more.
    put(
        &h,
        A,
        None,
        Quotas {
            max_task_versions: Some(4),
            ..Quotas::default()
        },
    )
    .await;
    s.task_insert(NewTask {
        tenant: A.into(),
        name: "t".into(),
        digest: DIGEST.into(),
        spec: "{}".into(),
    })
    .await
    .unwrap();
    for over in [
        s.workflow_insert(def(A, "orders", "{}")).await.map(|_| ()),
        s.task_insert(NewTask {
            tenant: A.into(),
            name: "t".into(),
            digest: DIGEST.into(),
            spec: "{}".into(),
        })
        .await
        .map(|_| ()),
    ] {
        assert!(
            matches!(&over, Err(StoreError::QuotaExceeded(e)) if e.quota == "max_task_versions"),
            "{over:?}"
        );
    }
    // Another tenant's room is its own.
    s.workflow_insert(def(B, "orders", "{}")).await.unwrap();
}
