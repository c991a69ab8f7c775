//! `GET /v1/usage/export`: what attempts cost, per task version and per
//! hour or day, as JSON or CSV: a tenant's own (`jobs:read`), or, for the
//! admin, every tenant's (or one's, `tenant=`). Every figure is a sum of
//! the attempt records the jobs keep (`GET /v1/jobs/{id}/attempts`), so a
//! tenant can check its bill against them.

use super::auth::Principal;
use super::body::QueryParams;
use super::error::ApiError;
use super::openapi::Errors;
use super::ApiState;
use crate::store::clock::rfc3339;
use crate::store::{Scope, UsageExportQuery, UsageLine};
use crate::time::{parse_rfc3339, Millis};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use utoipa::{IntoParams, ToSchema};

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;
/// Most buckets one export spans: a month of hours, a year of days.
const MAX_HOURS: i64 = 31 * 24;
const MAX_DAYS: i64 = 366;

/// How wide each line's bucket is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum By {
    #[default]
    Hour,
    Day,
}

impl By {
    fn width(self) -> i64 {
        match self {
            By::Hour => HOUR_MS,
            By::Day => DAY_MS,
        }
    }

    fn most(self) -> i64 {
        match self {
            By::Hour => MAX_HOURS,
            By::Day => MAX_DAYS,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    #[default]
    Json,
    Csv,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ExportParams {
    /// RFC 3339; attempts that ended at or after it, from the start of its
    /// bucket [default: a day (by hour) or 30 days (by day) before `to`].
    from: Option<String>,
    /// RFC 3339; attempts that ended before it [default: now].
    to: Option<String>,
    /// `hour` (default; at most 744 of them) or `day` (at most 366).
    #[param(inline)]
    by: Option<By>,
    /// `json` (default) or `csv`.
    #[param(inline)]
    format: Option<Format>,
    /// The admin's: one tenant only [default: every tenant]. A tenant's
    /// token may name only its own.
    tenant: Option<String>,
}

/// One line: a tenant's task version in one bucket (UTC).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ExportLine {
    pub tenant: String,
    /// The bucket's start, RFC 3339.
    pub start: String,
    pub task: String,
    pub version: u32,
    pub attempts: u64,
    pub fuel: u64,
    pub wall_ms: u64,
    /// Each attempt's peak memory times its wall-clock time, in MiB·s.
    pub memory_mib_seconds: f64,
    pub http_requests: u64,
    pub http_bytes: u64,
    pub cache_hits: u64,
    pub fuel_saved: u64,
}

/// The export: its range, its buckets, its lines.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct UsageExport {
    pub from: String,
    pub to: String,
    pub by: By,
    /// Each tenant's, task's and version's lines, by bucket.
    pub lines: Vec<ExportLine>,
}

fn line(l: UsageLine) -> ExportLine {
    ExportLine {
        tenant: l.tenant,
        start: rfc3339(l.bucket_start),
        task: l.task,
        version: l.version,
        attempts: l.attempts,
        fuel: l.fuel,
        wall_ms: l.wall_ms,
        memory_mib_seconds: l.memory_mib_ms / 1000.0,
        http_requests: l.http_requests,
        http_bytes: l.http_bytes,
        cache_hits: l.cache_hits,
        fuel_saved: l.fuel_saved,
    }
}

/// The range asked for, its start moved back to its bucket's; refused when
/// a time does not parse, ends before it starts, or spans too many buckets.
fn range(p: &ExportParams, by: By, now: Millis) -> Result<(Millis, Millis), ApiError> {
    let time = |field: &str, text: &Option<String>| -> Result<Option<Millis>, ApiError> {
        text.as_deref()
            .map(|t| {
                parse_rfc3339(t).ok_or_else(|| {
                    ApiError::BadRequest(format!(
                        "{field} {t:?} is not an RFC 3339 time, e.g. 2026-11-28T00:00:00Z"
                    ))
                })
            })
            .transpose()
    };
    let to = time("to", &p.to)?.unwrap_or(now);
    let width = by.width();
    let default_span = match by {
        By::Hour => DAY_MS,
        By::Day => 30 * DAY_MS,
    };
    let from = time("from", &p.from)?.unwrap_or(to - default_span);
    let from = from.div_euclid(width) * width;
    if to <= from {
        return Err(ApiError::BadRequest(format!(
            "to ({}) must come after from ({})",
            rfc3339(to),
            rfc3339(from)
        )));
    }
    let buckets = (to - from + width - 1) / width;
    if buckets > by.most() {
        return Err(ApiError::BadRequest(format!(
            "the range spans {buckets} buckets; at most {} by {} (ask by day, or for less)",
            by.most(),
            match by {
                By::Hour => "hour",
                By::Day => "day",
            }
        )));
    }
    Ok((from, to))
}

/// A CSV field: quoted when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// The lines as CSV, a header first (what `format=csv` answers, and what
/// `taskbox tenant usage --export --csv` prints).
pub fn csv(lines: &[ExportLine]) -> String {
    let mut out = String::from(
        "tenant,start,task,version,attempts,fuel,wall_ms,memory_mib_seconds,http_requests,http_bytes,cache_hits,fuel_saved\n",
    );
    for l in lines {
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{:.6},{},{},{},{}\n",
            csv_field(&l.tenant),
            l.start,
            csv_field(&l.task),
            l.version,
            l.attempts,
            l.fuel,
            l.wall_ms,
            l.memory_mib_seconds,
            l.http_requests,
            l.http_bytes,
            l.cache_hits,
            l.fuel_saved
        ));
    }
    out
}

/// What attempts cost, per task version and per hour or day, summed from
/// the attempt records; with the jobs a result cache completed. A tenant's
/// own with `jobs:read`; every tenant's for the admin. Each call takes from
/// the tenant's rate of series and usage reads (the server's
/// `--reads-per-second`): past it, 429 with `Retry-After`.
#[utoipa::path(get, path = "/v1/usage/export", tag = "tenants",
    params(ExportParams),
    responses(
        (status = 200, description = "The export: JSON, or with `format=csv` the same lines as CSV", content(
            (UsageExport = "application/json"),
            (String = "text/csv")
        )),
        Errors
    ))]
pub async fn export(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    QueryParams(p): QueryParams<ExportParams>,
) -> Result<Response, ApiError> {
    who.require(Scope::JobsRead)?;
    let tenant = who.whose(p.tenant.as_deref())?;
    let by = p.by.unwrap_or_default();
    let (from, to) = range(&p, by, state.store.now())?;
    let _admitted = state.heavy_reads.admit(&who.tenant, who.admin).await?;
    let lines: Vec<ExportLine> = state
        .store
        .usage_export(UsageExportQuery {
            tenant,
            from,
            to,
            bucket_ms: by.width(),
        })
        .await?
        .into_iter()
        .map(line)
        .collect();
    Ok(match p.format.unwrap_or_default() {
        Format::Json => Json(UsageExport {
            from: rfc3339(from),
            to: rfc3339(to),
            by,
            lines,
        })
        .into_response(),
        Format::Csv => (
            [(header::CONTENT_TYPE, "text/csv; charset=utf-8")],
            csv(&lines),
        )
            .into_response(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(from: Option<&str>, to: Option<&str>) -> ExportParams {
        ExportParams {
            from: from.map(str::to_owned),
            to: to.map(str::to_owned),
            by: None,
            format: None,
            tenant: None,
        }
    }

    #[test]
    fn a_range_starts_at_its_bucket_and_is_bounded() {
        let now = parse_rfc3339("2026-11-28T12:30:00Z").unwrap();
        let (from, to) = range(&params(None, None), By::Hour, now).unwrap();
        assert_eq!(
            (rfc3339(from), to),
            ("2026-11-27T12:00:00.000Z".to_owned(), now)
        );
        let (from, _) = range(&params(Some("2026-11-01T05:10:00Z"), None), By::Day, now).unwrap();
        assert_eq!(rfc3339(from), "2026-11-01T00:00:00.000Z");
        let month_and_more = params(Some("2026-10-01T00:00:00Z"), None);
        assert!(range(&month_and_more, By::Hour, now).is_err());
        assert!(range(&month_and_more, By::Day, now).is_ok());
        assert!(range(&params(Some("yesterday"), None), By::Hour, now).is_err());
        let backwards = params(Some("2026-11-28T12:00:00Z"), Some("2026-11-28T11:00:00Z"));
        assert!(range(&backwards, By::Hour, now).is_err());
    }

    #[test]
    fn csv_quotes_what_needs_it() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        let out = csv(&[]);
        assert!(
            out.starts_with("tenant,start,task,version,attempts,fuel"),
            "{out}"
        );
    }
}
