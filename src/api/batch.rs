//! Jobs: `POST /v1/jobs/batch`, many enqueues in one request and one write,
//! each under its own rules, answered one result per item, in order.

use super::auth::Principal;
use super::body::{parse_json, read_limited};
use super::error::ApiError;
use super::error::ErrorBody;
use super::openapi::Errors;
use super::{views, ApiState};
use crate::enqueue::{JobSpec, MAX_BATCH};
use crate::store::{Idempotency, Inserted, JobRecord, Scope};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};
use std::sync::Arc;
use utoipa::openapi::schema::{OneOfBuilder, Schema};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchBody<'a> {
    #[serde(borrow)]
    jobs: Vec<&'a RawValue>,
}

/// An item's error: the error shape of a whole answer, with the status
/// the item would have had on its own.
/// A batch item that was refused: the error shape, with the status the
/// item alone would have been answered with.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct ItemError {
    pub error: ItemErrorBody,
}

#[derive(Serialize, Deserialize, ToSchema)]
pub struct ItemErrorBody {
    #[serde(flatten)]
    pub body: ErrorBody,
    pub status: u16,
}

/// A batch's answer as a client reads it: an item for each job sent, in
/// order, the job or why it was refused.
#[derive(Deserialize)]
pub struct BatchAnswer<'a> {
    pub jobs: Vec<Answered<'a>>,
}

/// One item of a batch's answer, read.
#[derive(Deserialize)]
#[serde(untagged)]
pub enum Answered<'a> {
    Job(Box<views::JobView<'a>>),
    Refused(ItemError),
}

fn item_error(e: ApiError) -> ItemError {
    if let ApiError::Internal(detail) = &e {
        tracing::error!(%detail, "internal error answered in a batch item");
    }
    ItemError {
        error: ItemErrorBody {
            body: e.body(),
            status: e.status_code().as_u16(),
        },
    }
}

/// The body of `POST /v1/jobs/batch`.
#[derive(ToSchema)]
#[allow(dead_code)]
struct BatchRequest {
    /// 1 to 1000 job bodies, each a `JobSpec` as `POST /v1/jobs` takes
    /// it. Each is checked on its own: one that is not a valid job body
    /// (not even an object) is answered with its error in its place, and
    /// the others are enqueued.
    #[schema(min_items = 1, max_items = 1000, value_type = Vec<Value>)]
    jobs: Vec<JobSpec>,
}

/// `POST /v1/jobs/batch` `{"jobs": [...]}`: up to `MAX_BATCH` of the bodies
/// `POST /v1/jobs` takes. Answers 200 `{"jobs": [...]}`, each item the
/// job (created, or the one its idempotency key names) or, with no `id`,
/// `{"error": {code, message, details, status}}`. With an
/// `Idempotency-Key` header, item `i` carries the key `<key>/<i>` and the
/// hash of its own text, so that a retried batch answers the same jobs.
#[utoipa::path(post, path = "/v1/jobs/batch", tag = "jobs", request_body = BatchRequest,
    params(
        ("Idempotency-Key" = Option<String>, Header, description = "Each item's key is this key, `/` and its index"),
        ("traceparent" = Option<String>, Header, description = "A W3C trace context: each job's trace continues it, under this span")
    ),
    responses((status = 200, description = "Each item's job, or why it was refused, in the order given", body = Batch), Errors))]
pub async fn enqueue_batch(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    headers: HeaderMap,
    req: Request,
) -> Result<Response, ApiError> {
    who.require(Scope::JobsQueue)?;
    let start = std::time::SystemTime::now();
    let client = super::traced::request_trace(&headers);
    let key = super::jobs::idempotency_key(&headers)?;
    let raw = read_limited(req, state.limits.max_batch_bytes, state.limits.body_timeout).await?;
    let BatchBody { jobs } = parse_json(&raw)?;
    if jobs.is_empty() {
        return Err(ApiError::BadRequest(
            "\"jobs\" is empty; send 1 to 1000 job bodies".into(),
        ));
    }
    if jobs.len() > MAX_BATCH {
        return Err(ApiError::BadRequest(format!(
            "a batch holds at most {MAX_BATCH} jobs, not {}; send the rest in another",
            jobs.len()
        )));
    }
    let mut answers: Vec<Option<Answer>> = Vec::with_capacity(jobs.len());
    let mut items = Vec::with_capacity(jobs.len());
    let mut slots = Vec::with_capacity(jobs.len());
    for (i, item) in jobs.into_iter().enumerate() {
        let idempotency = key.as_ref().map(|k| Idempotency {
            key: format!("{k}/{i}"),
            body_hash: hex::encode(Sha256::digest(item.get())),
        });
        let parsed = if crate::strict::is_object(item.get().as_bytes()) {
            serde_json::from_str::<JobSpec>(item.get())
        } else {
            Err(serde::de::Error::custom("a job body must be a JSON object"))
        };
        match parsed {
            Ok(mut spec) => {
                spec.trace = client;
                slots.push(i);
                items.push((spec, idempotency));
                answers.push(None);
            }
            Err(e) => answers.push(Some(Err(item_error(ApiError::BadRequest(format!(
                "jobs[{i}]: {e}"
            )))))),
        }
    }
    if !items.is_empty() {
        let results = state.enqueuer.enqueue_batch(&who.tenant, items).await?;
        let traces = state.registry.traces();
        for (slot, r) in slots.into_iter().zip(results) {
            answers[slot] = Some(match r {
                Ok(Inserted::Created(j)) => {
                    let by = crate::enqueue::traced::MadeBy {
                        parent: client.as_ref(),
                        remote: client.is_some(),
                        via: "request",
                    };
                    crate::enqueue::traced::enqueued(traces, &j, by, start);
                    Ok(j)
                }
                Ok(Inserted::Existing(j)) => Ok(j),
                Err(e) => Err(item_error(e.into())),
            });
        }
    }
    let items: Vec<Item> = answers.iter().map(Item).collect();
    // Written straight to text: a thousand jobs as values first cost more
    // than the insert.
    let text = serde_json::to_vec(&Batch { jobs: items })
        .map_err(|e| ApiError::Internal(format!("cannot write a batch's answer: {e}")))?;
    Ok(([(header::CONTENT_TYPE, "application/json")], text).into_response())
}

/// A batch's answer.
#[derive(Serialize, ToSchema)]
pub struct Batch<'a> {
    jobs: Vec<Item<'a>>,
}

/// An item's answer: the job, or its error's body.
type Answer = Result<JobRecord, ItemError>;

/// An item as the answer writes it (`None`: never left so).
pub struct Item<'a>(&'a Option<Answer>);

impl utoipa::PartialSchema for Item<'_> {
    fn schema() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(Ref::from_schema_name("Job"))
            .item(Ref::from_schema_name("ItemError"))
            .into()
    }
}

impl ToSchema for Item<'_> {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push(("Job".into(), views::JobView::schema()));
        schemas.push(("ItemError".into(), ItemError::schema()));
        <views::JobView as ToSchema>::schemas(schemas);
        <ItemError as ToSchema>::schemas(schemas);
    }
}

impl Serialize for Item<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Some(Ok(j)) => views::JobView::of(j).serialize(s),
            Some(Err(e)) => e.serialize(s),
            None => s.serialize_none(),
        }
    }
}
