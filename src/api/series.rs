//! `GET /v1/series`: what the dashboard's charts draw, for the last hour
//! (a bucket a minute) or the last day (a bucket each ten): jobs started,
//! completed and failed; how long jobs waited to start (p50, p90, p99);
//! queue depth and the oldest wait, from the sampler's minutes; and fuel
//! and wall-clock time by tenant and by task, from the attempt records the
//! usage export sums. A tenant's own with `jobs:read`; for the admin every
//! tenant's, or one's (`tenant=`).

use super::auth::Principal;
use super::body::QueryParams;
use super::error::ApiError;
use super::openapi::Errors;
use super::ApiState;
use crate::store::clock::rfc3339;
use crate::store::series_sql::{SeriesRows, WAIT_EDGES_MS};
use crate::store::{Scope, UsageExportQuery, UsageLine};
use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use utoipa::{IntoParams, ToSchema};

/// Most named series in a stack; the rest are summed as [`OTHER`].
pub const MAX_STACKS: usize = 8;
/// The name of what the named series of a stack leave out.
pub const OTHER: &str = "(other)";

/// How far back the series reach.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Span {
    /// The last hour, a bucket a minute.
    #[default]
    Hour,
    /// The last day, a bucket each ten minutes.
    Day,
}

impl Span {
    pub fn bucket_ms(self) -> i64 {
        match self {
            Span::Hour => 60_000,
            Span::Day => 600_000,
        }
    }

    pub fn buckets(self) -> usize {
        match self {
            Span::Hour => 60,
            Span::Day => 144,
        }
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SeriesParams {
    /// `hour` (default) or `day`.
    #[param(inline)]
    span: Option<Span>,
    /// The admin's: one tenant only [default: every tenant]. A tenant's
    /// token may name only its own.
    tenant: Option<String>,
}

/// One named series of a stack, a value a bucket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Stack {
    /// A tenant, a task (`tenant/task` across tenants), a queue, or
    /// `(other)` for what the named ones leave out.
    pub name: String,
    pub values: Vec<u64>,
    /// The sum of `values`.
    pub total: u64,
}

/// A figure split by tenant and by task, each a stack of series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Split {
    pub by_tenant: Vec<Stack>,
    pub by_task: Vec<Stack>,
}

/// Jobs a bucket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct JobSeries {
    /// Jobs whose first attempt started in the bucket.
    pub started: Vec<u64>,
    pub completed: Vec<u64>,
    pub failed: Vec<u64>,
}

/// How long the jobs that started in a bucket had waited from when they
/// were due, estimated within the class of a histogram each fell in
/// (classes from 1 ms to an hour); null for a bucket where none started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WaitSeries {
    pub p50: Vec<Option<f64>>,
    pub p90: Vec<Option<f64>>,
    pub p99: Vec<Option<f64>>,
}

/// The charts' series: every array has a value for each of `times`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Series {
    pub span: Span,
    pub bucket_ms: i64,
    /// Whose: a tenant, or null for every tenant (the admin's).
    pub tenant: Option<String>,
    /// The first bucket's start and the end of the last (RFC 3339); the
    /// last is the one now runs in, so far.
    pub from: String,
    pub to: String,
    /// Each bucket's start, in Unix seconds.
    pub times: Vec<i64>,
    pub jobs: JobSeries,
    pub start_wait_ms: WaitSeries,
    /// Jobs due and not started, the most the sampler saw in the bucket:
    /// by queue for one tenant, by tenant across them. 0 where no sample
    /// was taken (the server was down, or the bucket just began).
    pub queue_depth: Vec<Stack>,
    /// The longest any queue's oldest job had waited (ms), as sampled.
    pub oldest_wait_ms: Vec<u64>,
    /// Fuel the attempts that ended in the bucket burned.
    pub fuel: Split,
    /// Their wall-clock time, in ms.
    pub wall_ms: Split,
}

/// Where in the buckets a time falls.
struct Buckets {
    from: i64,
    width: i64,
    n: usize,
}

impl Buckets {
    fn ending_at(span: Span, now: i64) -> Buckets {
        let width = span.bucket_ms();
        let n = span.buckets();
        let last = now.div_euclid(width) * width;
        Buckets {
            from: last - (n as i64 - 1) * width,
            width,
            n,
        }
    }

    fn to(&self) -> i64 {
        self.from + self.n as i64 * self.width
    }

    fn index(&self, bucket: i64) -> Option<usize> {
        let i = (bucket - self.from).div_euclid(self.width);
        usize::try_from(i).ok().filter(|i| *i < self.n)
    }
}

/// The value at quantile `q` of a histogram classed by [`WAIT_EDGES_MS`]:
/// found in its class and placed in it linearly; a value in the open class
/// past the last edge reads as that edge. `None` for an empty histogram.
pub fn quantile(counts: &[u64], q: f64) -> Option<f64> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let rank = q * total as f64;
    let mut below = 0u64;
    for (class, &n) in counts.iter().enumerate() {
        if n > 0 && (below + n) as f64 >= rank {
            let lo = if class == 0 {
                0.0
            } else {
                WAIT_EDGES_MS[class - 1] as f64
            };
            let Some(&hi) = WAIT_EDGES_MS.get(class) else {
                return Some(lo);
            };
            let within = ((rank - below as f64) / n as f64).clamp(0.0, 1.0);
            return Some(lo + within * (hi as f64 - lo));
        }
        below += n;
    }
    Some(*WAIT_EDGES_MS.last().unwrap_or(&0) as f64)
}

/// Series by name made a stack: the `MAX_STACKS` largest by total, by
/// name among equals, then the rest summed as `(other)`.
pub fn stack(named: BTreeMap<String, Vec<u64>>) -> Vec<Stack> {
    let mut all: Vec<Stack> = named
        .into_iter()
        .map(|(name, values)| Stack {
            total: values.iter().sum(),
            name,
            values,
        })
        .collect();
    all.sort_by(|a, b| b.total.cmp(&a.total).then_with(|| a.name.cmp(&b.name)));
    if all.len() > MAX_STACKS {
        let rest = all.split_off(MAX_STACKS);
        let mut values = vec![0; rest[0].values.len()];
        for s in &rest {
            for (v, x) in values.iter_mut().zip(&s.values) {
                *v += x;
            }
        }
        all.push(Stack {
            name: OTHER.to_owned(),
            total: values.iter().sum(),
            values,
        });
    }
    all
}

/// The series from what the store read: its rows and the usage lines,
/// into `b`'s buckets (anything outside them is left out).
fn build(
    span: Span,
    tenant: Option<String>,
    b: &Buckets,
    rows: SeriesRows,
    usage: Vec<UsageLine>,
) -> Series {
    let n = b.n;
    let count = |v: i64| u64::try_from(v).unwrap_or(0);
    let mut waits = vec![vec![0u64; WAIT_EDGES_MS.len() + 1]; n];
    let mut started = vec![0; n];
    for (bucket, class, jobs) in rows.started {
        if let Some(i) = b.index(bucket) {
            let class = usize::try_from(class).unwrap_or(0).min(WAIT_EDGES_MS.len());
            waits[i][class] += count(jobs);
            started[i] += count(jobs);
        }
    }
    let (mut completed, mut failed) = (vec![0; n], vec![0; n]);
    for (bucket, status, jobs) in rows.ended {
        if let Some(i) = b.index(bucket) {
            match status.as_str() {
                "completed" => completed[i] += count(jobs),
                "failed" => failed[i] += count(jobs),
                _ => {}
            }
        }
    }
    let across = tenant.is_none();
    let mut depth: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut oldest = vec![0; n];
    for (bucket, t, queue, d, wait) in rows.samples {
        if let Some(i) = b.index(bucket) {
            let name = if across { t } else { queue };
            depth.entry(name).or_insert_with(|| vec![0; n])[i] += count(d);
            oldest[i] = oldest[i].max(count(wait));
        }
    }
    let mut fuel = (BTreeMap::new(), BTreeMap::new());
    let mut wall = (BTreeMap::new(), BTreeMap::new());
    for l in usage {
        let Some(i) = b.index(l.bucket_start) else {
            continue;
        };
        let task = if across {
            format!("{}/{}", l.tenant, l.task)
        } else {
            l.task.clone()
        };
        for ((by_tenant, by_task), v) in [(&mut fuel, l.fuel), (&mut wall, l.wall_ms)] {
            by_tenant
                .entry(l.tenant.clone())
                .or_insert_with(|| vec![0; n])[i] += v;
            by_task.entry(task.clone()).or_insert_with(|| vec![0; n])[i] += v;
        }
    }
    let split = |(by_tenant, by_task)| Split {
        by_tenant: stack(by_tenant),
        by_task: stack(by_task),
    };
    let at = |q: f64| waits.iter().map(|h| quantile(h, q)).collect();
    Series {
        span,
        bucket_ms: b.width,
        tenant,
        from: rfc3339(b.from),
        to: rfc3339(b.to()),
        times: (0..n as i64)
            .map(|i| (b.from + i * b.width) / 1000)
            .collect(),
        jobs: JobSeries {
            started,
            completed,
            failed,
        },
        start_wait_ms: WaitSeries {
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
        },
        queue_depth: stack(depth),
        oldest_wait_ms: oldest,
        fuel: split(fuel),
        wall_ms: split(wall),
    }
}

/// The charts' series for the last hour or day: jobs, waits to start,
/// queue depths, and fuel and wall time by tenant and task. A tenant's own
/// with `jobs:read`; every tenant's (or one's) for the admin. Each call
/// takes from the tenant's rate of series and usage reads (the server's
/// `--reads-per-second`): past it, 429 with `Retry-After`.
#[utoipa::path(get, path = "/v1/series", tag = "tenants",
    params(SeriesParams),
    responses((status = 200, body = Series), Errors))]
pub async fn series(
    State(state): State<Arc<ApiState>>,
    who: Principal,
    QueryParams(p): QueryParams<SeriesParams>,
) -> Result<Json<Series>, ApiError> {
    who.require(Scope::JobsRead)?;
    let tenant = who.whose(p.tenant.as_deref())?;
    let span = p.span.unwrap_or_default();
    let b = Buckets::ending_at(span, state.store.now());
    let q = UsageExportQuery {
        tenant: tenant.clone(),
        from: b.from,
        to: b.to(),
        bucket_ms: b.width,
    };
    let _admitted = state.heavy_reads.admit(&who.tenant, who.admin).await?;
    let rows = state.store.series(q.clone()).await?;
    let usage = state.store.usage_export(q).await?;
    Ok(Json(build(span, tenant, &b, rows, usage)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(pairs: &[(usize, u64)]) -> Vec<u64> {
        let mut h = vec![0; WAIT_EDGES_MS.len() + 1];
        for &(class, n) in pairs {
            h[class] = n;
        }
        h
    }

    #[test]
    fn a_quantile_is_placed_within_its_class() {
        // (histogram as (class, count) pairs, quantile, value)
        type Case = (&'static [(usize, u64)], f64, Option<f64>);
        let cases: &[Case] = &[
            (&[], 0.5, None),
            // All in [0, 1): the median halfway.
            (&[(0, 10)], 0.5, Some(0.5)),
            // 10 in [1, 2), 10 in [2, 5): p50 is the top of the first.
            (&[(1, 10), (2, 10)], 0.5, Some(2.0)),
            (&[(1, 10), (2, 10)], 0.75, Some(3.5)),
            // The p99 of 99 fast and 1 slow is the last fast one's class top.
            (&[(3, 99), (12, 1)], 0.99, Some(10.0)),
            (&[(3, 99), (12, 1)], 1.0, Some(10_000.0)),
            // Past the last edge: the edge.
            (&[(18, 3)], 0.5, Some(3_600_000.0)),
        ];
        for (pairs, q, want) in cases {
            assert_eq!(quantile(&hist(pairs), *q), *want, "{pairs:?} at {q}");
        }
    }

    #[test]
    fn a_stack_keeps_the_largest_and_sums_the_rest() {
        let named: BTreeMap<String, Vec<u64>> =
            (0..10u64).map(|i| (format!("t{i}"), vec![i, 1])).collect();
        let s = stack(named);
        assert_eq!(s.len(), MAX_STACKS + 1);
        assert_eq!(s[0].name, "t9");
        assert_eq!(s[0].total, 10);
        let other = s.last().unwrap();
        // t0 and t1 are the smallest two: [0,1] + [1,1].
        assert_eq!(
            (other.name.as_str(), &other.values, other.total),
            (OTHER, &vec![1, 2], 3)
        );
        let few = stack(BTreeMap::from([
            ("b".into(), vec![1]),
            ("a".into(), vec![1]),
        ]));
        assert_eq!(
            few.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
    }

    #[test]
    fn rows_fall_in_their_buckets_and_outside_ones_are_left_out() {
        let b = Buckets::ending_at(Span::Hour, 3_600_000 * 10 + 30_000);
        assert_eq!((b.n, b.to() - b.from), (60, 3_600_000));
        let last = b.from + 59 * 60_000;
        let rows = SeriesRows {
            started: vec![(last, 0, 2), (last, 18, 1), (b.from - 60_000, 0, 5)],
            ended: vec![
                (b.from, "completed".into(), 3),
                (b.from, "failed".into(), 1),
            ],
            samples: vec![
                (last, "acme".into(), "a".into(), 4, 900),
                (last, "other".into(), "a".into(), 1, 2000),
            ],
        };
        let line = |tenant: &str, task: &str, fuel| UsageLine {
            tenant: tenant.into(),
            bucket_start: last,
            task: task.into(),
            version: 1,
            fuel,
            wall_ms: 7,
            ..UsageLine::default()
        };
        let usage = vec![line("acme", "x", 100), line("other", "x", 5)];
        let s = build(Span::Hour, None, &b, rows.clone(), usage);
        assert_eq!(s.times.len(), 60);
        assert_eq!(
            (s.jobs.started[59], s.jobs.started.iter().sum::<u64>()),
            (3, 3)
        );
        assert_eq!((s.jobs.completed[0], s.jobs.failed[0]), (3, 1));
        assert_eq!(s.start_wait_ms.p50[0], None);
        assert_eq!(s.start_wait_ms.p99[59], Some(3_600_000.0));
        assert_eq!(s.oldest_wait_ms[59], 2000);
        let names = |st: &[Stack]| {
            st.iter()
                .map(|s| (s.name.clone(), s.total))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(&s.queue_depth),
            [("acme".into(), 4), ("other".into(), 1)]
        );
        assert_eq!(
            names(&s.fuel.by_tenant),
            [("acme".into(), 100), ("other".into(), 5)]
        );
        assert_eq!(names(&s.fuel.by_task)[0], ("acme/x".into(), 100));
        assert_eq!(
            names(&s.wall_ms.by_tenant),
            [("acme".into(), 7), ("other".into(), 7)]
        );
        // One tenant's: depth by queue, tasks by their own names.
        let rows = SeriesRows {
            samples: vec![
                (last, "acme".into(), "a".into(), 4, 900),
                (last, "acme".into(), "b".into(), 6, 100),
            ],
            ..SeriesRows::default()
        };
        let own = build(
            Span::Hour,
            Some("acme".into()),
            &b,
            rows,
            vec![line("acme", "x", 1)],
        );
        assert_eq!(names(&own.queue_depth), [("b".into(), 6), ("a".into(), 4)]);
        assert_eq!(own.oldest_wait_ms[59], 900);
        assert_eq!(names(&own.fuel.by_task), [("x".into(), 1)]);
    }
}
