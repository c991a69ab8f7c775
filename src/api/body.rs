//! Request bodies read within a limit and a time: a declared length over
//! the limit is refused before anything is read, a streamed body is cut
//! off at it, and one that takes too long is answered 408.
//! JSON that does not parse, or has fields the route does not know, is
//! refused with serde's words (which name the field).

use super::error::ApiError;
use super::ApiState;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::sync::Arc;

/// Reads the whole body, or refuses with 413 past `limit` and 408 when it
/// has not all come within `timeout` (a client that trickles it holds a
/// connection and a task for no longer).
pub async fn read_limited(
    req: Request,
    limit: usize,
    timeout: std::time::Duration,
) -> Result<Bytes, ApiError> {
    let declared = req
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(ApiError::PayloadTooLarge { limit });
    }
    let read = tokio::time::timeout(timeout, axum::body::to_bytes(req.into_body(), limit))
        .await
        .map_err(|_| ApiError::RequestTimeout {
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        })?;
    read.map_err(|e| {
        let too_big = std::error::Error::source(&e)
            .is_some_and(|s| s.is::<http_body_util::LengthLimitError>())
            || e.to_string().contains("length limit");
        if too_big {
            ApiError::PayloadTooLarge { limit }
        } else {
            ApiError::BadRequest(format!("could not read the request body: {e}"))
        }
    })
}

/// Parses JSON text into `T`, naming what is wrong.
pub fn parse_json<'de, T: Deserialize<'de>>(bytes: &'de [u8]) -> Result<T, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::BadRequest(
            "the request body is empty; send a JSON object".into(),
        ));
    }
    // Serde would read a struct from an array of its fields too.
    if !crate::strict::is_object(bytes) {
        return Err(ApiError::BadRequest(
            "the request body must be a JSON object".into(),
        ));
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        // The path of the field at fault, when it is not the body itself.
        match e.path().to_string().as_str() {
            "." => ApiError::BadRequest(format!("invalid JSON body: {}", e.inner())),
            path => ApiError::BadRequest(format!("invalid JSON body at {path}: {}", e.inner())),
        }
    })?;
    de.end()
        .map_err(|e| ApiError::BadRequest(format!("invalid JSON body: {e}")))?;
    Ok(value)
}

/// A JSON body within the configured limit, with its raw bytes (for
/// idempotency hashes).
pub struct JsonBody<T> {
    pub value: T,
    pub raw: Bytes,
}

impl<T: DeserializeOwned> FromRequest<Arc<ApiState>> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &Arc<ApiState>) -> Result<Self, ApiError> {
        let raw = read_limited(req, state.limits.max_json_bytes, state.limits.body_timeout).await?;
        Ok(JsonBody {
            value: parse_json(&raw)?,
            raw,
        })
    }
}

/// A JSON body that may be left out (an empty body reads as `T::default()`).
pub struct OptionalJson<T>(pub T);

impl<T: DeserializeOwned + Default> FromRequest<Arc<ApiState>> for OptionalJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &Arc<ApiState>) -> Result<Self, ApiError> {
        let raw = read_limited(req, state.limits.max_json_bytes, state.limits.body_timeout).await?;
        if raw.iter().all(u8::is_ascii_whitespace) {
            return Ok(OptionalJson(T::default()));
        }
        Ok(OptionalJson(parse_json(&raw)?))
    }
}

/// A query string read as `T`; one that does not parse, or names a
/// parameter the route does not know, is a 400 in the API's error shape.
pub struct QueryParams<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> axum::extract::FromRequestParts<S> for QueryParams<T> {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, ApiError> {
        let axum::extract::Query(value) =
            axum::extract::Query::<T>::from_request_parts(parts, state)
                .await
                .map_err(|e| {
                    ApiError::BadRequest(format!("bad query string: {}", e.body_text()))
                })?;
        Ok(QueryParams(value))
    }
}
