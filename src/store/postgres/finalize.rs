//! Attempts' ends on PostgreSQL. A batch goes in a handful of statements
//! whatever its size (`many`): the rows locked in id order, one UPDATE per
//! shape of move (`store::ending_sql`, its arguments as arrays, the
//! attempt that ended a job among them), one INSERT of the attempt rows of
//! jobs that run again (`store::ending`), then the tenants' counts.
//! Per-job statements cost a round trip each, and a runner ends thousands
//! of short attempts a second; they are for a batch that names a job
//! twice, a transaction's writes (`apply`) and an end written again on its
//! own.

use super::exec::PgExec;
use super::{pg, tally};
use crate::job::JobStatus;
use crate::store::attempt_sql;
use crate::store::ending::Ending;
use crate::store::ending_sql::{ending, Arg, Dialect};
use crate::store::records::landing;
use crate::store::records::{AttemptRecord, Finalize, Finalized};
use crate::store::rows::to_json;
use crate::store::tally::Tally;
use crate::store::transition::Move;
use crate::store::{finalize, insert, stages};
use crate::store::{Millis, StoreError, StoreResult};
use sqlx::Row;
use std::collections::HashMap;
use std::sync::Arc;

use super::db::Tx;

/// One statement's text, the batch positions it writes, and their
/// arguments (a row each).
struct Group<'a> {
    text: Arc<str>,
    members: Vec<usize>,
    rows: Vec<Vec<Arg<'a>>>,
}

/// Writes the batch's ends, fenced by their lease tokens; `None` when the
/// batch names a job twice (then each is written on its own).
pub async fn many(
    tx: &mut Tx,
    now: Millis,
    batch: &[Finalize],
) -> StoreResult<Option<Vec<Finalized>>> {
    let mut ids: Vec<&str> = batch.iter().map(|f| f.id.as_str()).collect();
    ids.sort_unstable();
    if ids.windows(2).any(|w| w[0] == w[1]) {
        return Ok(None);
    }
    // Group by the statement's text: one shape, one statement.
    // Each statement's rows in id order: it locks them in that order, as
    // the heartbeat does, through the plan PostgreSQL takes for it (a
    // nested loop over its arrays into the primary key). Were it to take
    // another on some table, a cycle with a heartbeat is a deadlock the
    // server breaks, and the finalizer writes the batch again.
    let ends: Vec<Ending<'_>> = batch
        .iter()
        .map(|f| Ending::of(f, true))
        .collect::<StoreResult<_>>()?;
    let moves: Vec<Move<'_>> = ends.iter().map(Ending::job_move).collect();
    let mut order: Vec<usize> = (0..batch.len()).collect();
    order.sort_unstable_by(|a, b| batch[*a].id.cmp(&batch[*b].id));
    let mut groups: Vec<Group<'_>> = Vec::new();
    let mut group_of: HashMap<Arc<str>, usize> = HashMap::new();
    for i in order {
        let (f, mv) = (&batch[i], &moves[i]);
        let (text, args) = ending(mv, Dialect::PostgresMany, now, &f.id, &f.lease_token);
        let g = *group_of.entry(text.clone()).or_insert_with(|| {
            groups.push(Group {
                text,
                members: Vec::new(),
                rows: Vec::new(),
            });
            groups.len() - 1
        });
        groups[g].members.push(i);
        groups[g].rows.push(args);
    }
    if groups.len() > 1 {
        // Several statements would lock their rows in several runs of id
        // order: all of them first, in one run, as the heartbeat does, so
        // that the two never wait for each other's rows in a cycle. (A
        // batch of one shape, the common one, locks in its UPDATE.)
        sqlx::query("SELECT 1 FROM jobs WHERE id = ANY($1) ORDER BY id FOR UPDATE")
            .bind(&ids)
            .execute(&mut **tx)
            .await
            .map_err(pg)?;
    }
    let mut status: Vec<Option<JobStatus>> = vec![None; batch.len()];
    for Group {
        text,
        members,
        rows,
    } in groups
    {
        let mut q = sqlx::query(&text);
        for col in 0..rows[0].len() {
            q = match rows[0][col] {
                Arg::Int(_) => q.bind(
                    rows.iter()
                        .map(|r| match r[col] {
                            Arg::Int(v) => v,
                            _ => 0,
                        })
                        .collect::<Vec<i64>>(),
                ),
                Arg::Bool(_) => q.bind(
                    rows.iter()
                        .map(|r| matches!(r[col], Arg::Bool(true)))
                        .collect::<Vec<bool>>(),
                ),
                Arg::Text(_) | Arg::Owned(_) => q.bind(
                    rows.iter()
                        .map(|r| match &r[col] {
                            Arg::Text(t) => t,
                            Arg::Owned(t) => t.as_str(),
                            _ => "",
                        })
                        .collect::<Vec<&str>>(),
                ),
                Arg::OptText(_) => q.bind(
                    rows.iter()
                        .map(|r| match &r[col] {
                            Arg::OptText(t) => t.as_deref(),
                            _ => None,
                        })
                        .collect::<Vec<Option<&str>>>(),
                ),
            };
        }
        let written = q.fetch_all(&mut **tx).await.map_err(pg)?;
        let mut by_id: HashMap<String, Option<String>> = HashMap::with_capacity(written.len());
        for r in &written {
            let id: String = r.try_get(0).map_err(pg)?;
            let to: Option<String> = if r.len() > 1 {
                Some(r.try_get(1).map_err(pg)?)
            } else {
                None
            };
            by_id.insert(id, to);
        }
        for i in members {
            if let Some(to) = by_id.remove(&batch[i].id) {
                status[i] = Some(match to {
                    Some(s) => s.parse::<JobStatus>().map_err(StoreError::Internal)?,
                    None => moves[i].to,
                });
            }
        }
    }

    let mut tally = Tally::new(now);
    let mut attempts: Vec<(&str, &AttemptRecord, Option<&str>)> = Vec::new();
    let mut out = Vec::with_capacity(batch.len());
    for (((f, s), end), mv) in batch.iter().zip(&status).zip(&ends).zip(&moves) {
        if let Some(u) = &f.usage {
            tally.charge(&f.tenant, u);
        }
        match s {
            Some(s) => {
                // Its stage rows are written below.
                tally.landed(f, *s);
                if let Some((a, log)) = end.attempt_row(mv) {
                    attempts.push((&f.id, a, log));
                }
                out.push(Finalized::Done(*s));
            }
            None => out.push(Finalized::Fenced),
        }
    }
    for (f, s) in batch.iter().zip(&status) {
        if let (Some(s), false) = (s, f.steps.is_empty()) {
            stages::write(&mut PgExec(&mut *tx), now, &f.id, &landing(&f.steps, *s)).await?;
        }
        let landed = s.and_then(|s| Some((s, f.callbacks.as_ref()?.landing(s)?)));
        if let Some((s, cb)) = landed {
            insert::callback(&mut PgExec(&mut *tx), now, &f.id, s, cb, &mut tally).await?;
        }
    }
    insert_attempts(tx, &attempts, tally).await?;
    Ok(Some(out))
}

/// All the attempt rows in one INSERT, and the tenants' counts in the same
/// statement.
async fn insert_attempts(
    tx: &mut Tx,
    rows: &[(&str, &AttemptRecord, Option<&str>)],
    tally: Tally,
) -> StoreResult<()> {
    if rows.is_empty() {
        return tally::apply(tx, tally).await;
    }
    let int4 = |v: u32| i32::try_from(v).unwrap_or(i32::MAX);
    let int8 = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    let counts = tally::Counts::of(&tally);
    let sql = format!(
        "WITH tried AS (INSERT INTO attempts ({}) \
         SELECT * FROM unnest($1::text[], $2::int4[], $3::text[], $4::int4[], $5::text[], \
         $6::int8[], $7::int8[], $8::text[], $9::text[], $10::int8[], $11::int8[], $12::text[], \
         $13::text[]){}), {} \
         SELECT 1",
        *attempt_sql::COLUMNS,
        *attempt_sql::REPLACES,
        tally::ctes(14)
    );
    let q = sqlx::query(&sql)
        .bind(rows.iter().map(|(id, _, _)| *id).collect::<Vec<&str>>())
        .bind(
            rows.iter()
                .map(|(_, a, _)| int4(a.attempt))
                .collect::<Vec<i32>>(),
        )
        .bind(
            rows.iter()
                .map(|(_, a, _)| a.task.name.as_str())
                .collect::<Vec<&str>>(),
        )
        .bind(
            rows.iter()
                .map(|(_, a, _)| int4(a.task.version))
                .collect::<Vec<i32>>(),
        )
        .bind(
            rows.iter()
                .map(|(_, a, _)| a.task.digest.as_str())
                .collect::<Vec<&str>>(),
        )
        .bind(
            rows.iter()
                .map(|(_, a, _)| a.started_at)
                .collect::<Vec<i64>>(),
        )
        .bind(
            rows.iter()
                .map(|(_, a, _)| a.finished_at)
                .collect::<Vec<i64>>(),
        )
        .bind(
            rows.iter()
                .map(|(_, a, _)| a.outcome.as_str())
                .collect::<Vec<&str>>(),
        )
        .bind(
            rows.iter()
                .map(|(_, a, _)| a.error.as_ref().map(to_json))
                .collect::<Vec<Option<String>>>(),
        )
        .bind(
            rows.iter()
                .map(|(_, a, _)| int8(a.fuel_used))
                .collect::<Vec<i64>>(),
        )
        .bind(
            rows.iter()
                .map(|(_, a, _)| int8(a.peak_memory_bytes))
                .collect::<Vec<i64>>(),
        )
        .bind(
            rows.iter()
                .map(|(_, _, log)| *log)
                .collect::<Vec<Option<&str>>>(),
        )
        .bind(
            rows.iter()
                .map(|(_, a, _)| a.network.as_ref().map(to_json))
                .collect::<Vec<Option<String>>>(),
        );
    counts.bind(q).execute(&mut **tx).await.map_err(pg)?;
    Ok(())
}

/// Writes each attempt's end, fenced by its lease token, the attempt rows
/// of those written, and what each attempt cost its tenant: a batch that
/// names each job once in a few statements (`many`), else each on its own
/// (`store::finalize`).
pub async fn finalize(tx: &mut Tx, now: Millis, batch: &[Finalize]) -> StoreResult<Vec<Finalized>> {
    if let Some(out) = many(tx, now, batch).await? {
        return Ok(out);
    }
    finalize::all(&mut PgExec(tx), now, batch).await
}
