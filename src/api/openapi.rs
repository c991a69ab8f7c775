//! The OpenAPI 3.1 document of the API, served at `GET /openapi.json`. It is
//! made from the handlers' own `#[utoipa::path]` annotations and answer
//! types as `router` registers them (`utoipa-axum`): a route is in the
//! spec because it was registered from its annotation.

use super::error::{ErrorAnswer, ErrorCode};
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use std::collections::BTreeMap;
use std::sync::LazyLock;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, RefOr, ResponseBuilder};
use utoipa::{Modify, OpenApi};

/// What the document says beyond the routes: who made it, how to sign in,
/// the error shape.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "taskbox",
        description = "A job queue whose jobs are WebAssembly components, each attempt run in a fresh sandbox. \
            Every request but /healthz, /openapi.json and the dashboard's files carries `Authorization: Bearer <token>`. \
            The admin token acts in the tenant its `Taskbox-Tenant` header names (default `default`); a tenant's token only in its own. \
            Every error answer has one shape, `{\"error\": {\"code\", \"message\", \"details\"}}`; `ErrorCode` lists the codes.",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    modifiers(&Bearer),
    security(("bearer" = [])),
    components(schemas(ErrorAnswer, ErrorCode, crate::verify::report::Report)),
    tags(
        (name = "jobs", description = "Enqueue, read, cancel, run, resume and retry jobs"),
        (name = "tasks", description = "Components and the tasks that run them"),
        (name = "workflows", description = "Named steps run one after another on a shared context"),
        (name = "schedules", description = "Cron schedules"),
        (name = "queues", description = "Queues: depth, pause, resume"),
        (name = "events", description = "Job events, as a stream or pages, and webhooks"),
        (name = "secrets", description = "Write-only secrets that the tasks declaring them read"),
        (name = "tenants", description = "Tenants, their quotas and usage, and tokens (mostly the admin's)"),
        (name = "operate", description = "Health, metrics, this document and the dashboard"),
    )
)]
pub struct Doc;

struct Bearer;

impl Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
}

/// Every error answer an operation may give, each in the one error shape.
/// Operations list them all: which of them a request meets depends on its
/// token, its tenant's quotas and the server's state as much as on the route.
pub struct Errors;

impl utoipa::IntoResponses for Errors {
    fn responses() -> BTreeMap<String, RefOr<utoipa::openapi::Response>> {
        [
            ("400", "The request is malformed: `BAD_REQUEST`, or `JOB_INVALID_INPUT` with the input's violations in `details`"),
            ("401", "No token, or an unknown one: `UNAUTHENTICATED`"),
            ("403", "The token lacks the scope, or is not the admin's: `JOB_ACCESS_DENIED`"),
            ("404", "What the path names does not exist in the tenant: `*_NOT_FOUND`"),
            ("409", "The request conflicts with the resource's state: `CONFLICT`"),
            ("408", "The body did not arrive within the server's body timeout: `REQUEST_TIMEOUT` (the connection is closed)"),
            ("413", "The body is over its limit: `PAYLOAD_TOO_LARGE`"),
            ("422", "A definition or component is refused: `INVALID_TASK`, `INVALID_WORKFLOW`, `INVALID_SCHEDULE`, `INVALID_COMPONENT`"),
            ("429", "Over the tenant's enqueue rate or its rate of series and usage reads (`RATE_LIMITED`, with `Retry-After`), or another quota (`QUOTA_EXCEEDED`)"),
            ("500", "`JOB_EXECUTION_ERROR` (a waited-for run failed; the job is in `details`) or `INTERNAL_ERROR`"),
            ("503", "The database does not answer, or the server is stopping: `UNAVAILABLE`"),
        ]
        .into_iter()
        .map(|(status, description)| {
            let content = ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("ErrorAnswer")))
                .build();
            let response = ResponseBuilder::new()
                .description(description)
                .content("application/json", content)
                .build();
            (status.to_owned(), RefOr::T(response))
        })
        .collect()
    }
}

/// The document, made once from the router's registrations.
static SPEC: LazyLock<String> = LazyLock::new(|| {
    let mut doc = super::api().split_for_parts().1;
    name_operations(&mut doc);
    let mut value = serde_json::to_value(&doc).unwrap_or_default();
    mend(&mut value);
    serde_json::to_string_pretty(&value).unwrap_or_default()
});

/// Operation ids are `{tag}_{handler}` (`jobs_show`, `schedules_pause`):
/// a handler's name alone is unique only within its file, and an id must
/// be unique in the document (links name operations by it).
fn name_operations(doc: &mut utoipa::openapi::OpenApi) {
    for item in doc.paths.paths.values_mut() {
        let ops = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ];
        for op in ops.into_iter().flatten() {
            let tag = op.tags.as_ref().and_then(|t| t.first()).cloned();
            if let (Some(tag), Some(id)) = (tag, op.operation_id.as_mut()) {
                if !id.starts_with(&format!("{tag}_")) {
                    *id = format!("{tag}_{id}");
                }
            }
        }
    }
}

/// Mends what utoipa 5.5 writes off the OpenAPI spec: a link's fields in
/// snake case (`operation_id`, which no reader knows), and unsigned
/// integers as the made-up formats `u-int32` and the like. An unsigned
/// integer becomes what it is: at least 0, at most its type's largest
/// (unless the field says less), so that a fuzzer sends neither a value the
/// server must refuse as in range, nor one it must accept as out of it.
fn mend(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            if let Some(Value::Object(links)) = map.get_mut("links") {
                for link in links.values_mut().filter_map(Value::as_object_mut) {
                    for (from, to) in [
                        ("operation_id", "operationId"),
                        ("operation_ref", "operationRef"),
                        ("request_body", "requestBody"),
                    ] {
                        if let Some(x) = link.remove(from) {
                            link.insert(to.into(), x);
                        }
                    }
                }
            }
            let unsigned = match map.get("format").and_then(Value::as_str) {
                Some("u-int8") => Some(u64::from(u8::MAX)),
                Some("u-int16") => Some(u64::from(u16::MAX)),
                Some("u-int32") => Some(u64::from(u32::MAX)),
                Some("u-int64") => Some(u64::MAX),
                _ => None,
            };
            if let Some(max) = unsigned {
                map.remove("format");
                map.entry("minimum").or_insert(Value::from(0));
                map.entry("maximum").or_insert(Value::from(max));
            }
            map.values_mut().for_each(mend);
        }
        Value::Array(items) => items.iter_mut().for_each(mend),
        _ => {}
    }
}

/// The OpenAPI document as text.
pub fn spec() -> &'static str {
    &SPEC
}

/// This document.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "operate",
    security(()),
    responses((status = 200, description = "The OpenAPI 3.1 document of this API", content_type = "application/json", body = Object))
)]
pub async fn document() -> Response {
    ([(CONTENT_TYPE, "application/json")], spec()).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Routes reach the router only through `routes!`, which puts each in
    /// the document too: a plain `.route(` would be a route the spec lacks.
    #[test]
    fn every_route_is_registered_from_its_annotation() {
        for (file, text) in [
            ("src/api/mod.rs", include_str!("mod.rs")),
            ("src/dashboard/mod.rs", include_str!("../dashboard/mod.rs")),
        ] {
            assert!(
                !text.contains(concat!(".route", "(")),
                "{file} registers a route outside routes!()"
            );
        }
    }

    #[test]
    fn the_document_is_openapi_3_1_with_every_error_code() {
        let doc: serde_json::Value = serde_json::from_str(spec()).unwrap();
        assert_eq!(doc["openapi"], "3.1.0");
        let codes = doc["components"]["schemas"]["ErrorCode"]["enum"]
            .as_array()
            .unwrap()
            .len();
        assert_eq!(codes, 26, "one per ApiError::code");
        assert!(doc["paths"]["/v1/jobs"]["post"]["responses"]["429"].is_object());
    }

    #[test]
    fn every_reference_resolves() {
        fn refs<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
            match v {
                serde_json::Value::Object(m) => {
                    if let Some(r) = m.get("$ref").and_then(|r| r.as_str()) {
                        out.push(r);
                    }
                    m.values().for_each(|x| refs(x, out));
                }
                serde_json::Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
                _ => {}
            }
        }
        let doc: serde_json::Value = serde_json::from_str(spec()).unwrap();
        let mut all = Vec::new();
        refs(&doc, &mut all);
        assert!(all.len() > 50, "{}", all.len());
        for r in all {
            let name = r
                .strip_prefix("#/components/schemas/")
                .unwrap_or_else(|| panic!("{r} is not a schema"));
            assert!(
                doc["components"]["schemas"][name].is_object(),
                "{r} is referenced but not in the document"
            );
        }
    }

    #[test]
    fn operation_ids_are_unique_and_links_name_real_ones() {
        let doc: serde_json::Value = serde_json::from_str(spec()).unwrap();
        let mut ids = std::collections::BTreeSet::new();
        let mut linked = Vec::new();
        for item in doc["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                let id = op["operationId"]
                    .as_str()
                    .expect("every operation has an id");
                assert!(ids.insert(id.to_owned()), "{id} twice");
                for response in op["responses"].as_object().unwrap().values() {
                    if let Some(links) = response["links"].as_object() {
                        for link in links.values() {
                            linked.push(link["operationId"].as_str().unwrap().to_owned());
                        }
                    }
                }
            }
        }
        assert!(linked.len() >= 7, "{linked:?}");
        for id in linked {
            assert!(
                ids.contains(&id),
                "a link names {id}, which is no operation"
            );
        }
    }
}
