//! The outbox on PostgreSQL: the sequencer, and the reads of what it put in
//! order.
//!
//! Writers commit in an order none of them sees, so a row cannot take its
//! tenant's next number when it is written without every write of the
//! tenant waiting for the one before it to commit (a counter row held to
//! COMMIT: one fsync at a time per tenant). Instead a row is written
//! without numbers, and a pass of the sequencer, one at a time (an
//! advisory lock), numbers every row it can see that has none, in the
//! order of `id`. That order keeps cause before effect: a row written
//! after reading another write's committed result (a claim after the
//! enqueue, an end after the claim) took its `id` after that write
//! committed, so it is larger, and is seen in the same pass or a later
//! one. A row committed late gets the numbers of when it was seen. The
//! pass commits synchronously, after every commit it numbered, so a
//! numbered row is durable even when its writer committed without
//! waiting for its flush (a claim).

use super::pg;
use crate::store::records::EventHeads;
use crate::store::StoreResult;
use sqlx::PgPool;

/// Most rows one pass numbers.
const PASS_ROWS: i64 = 10_000;
/// The advisory lock a pass holds (`hashtext('taskbox/event-sequencer')`
/// would do as well; a constant needs no hashing).
const SEQUENCER_LOCK: i64 = 0x7461_736b_6576_7301;

/// Numbers the rows no pass has numbered yet (up to `PASS_ROWS`); answers
/// how many. A pass another process is making answers 0 at once: it
/// numbers the same rows.
pub async fn sequence(pool: &PgPool) -> StoreResult<u64> {
    let waiting: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM events WHERE gseq IS NULL)")
            .fetch_one(pool)
            .await
            .map_err(pg)?;
    if !waiting {
        return Ok(0);
    }
    let mut tx = pool.begin().await.map_err(pg)?;
    let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_xact_lock($1)")
        .bind(SEQUENCER_LOCK)
        .fetch_one(&mut *tx)
        .await
        .map_err(pg)?;
    if !locked {
        return Ok(0);
    }
    // Each tenant's rows take its numbers in `id` order (`run` is the
    // running sum of their sizes, `total` the sum), after its head; every
    // row a place after the last given.
    let n: i64 = sqlx::query_scalar(
        "WITH todo AS MATERIALIZED ( \
           SELECT id, tenant, n FROM events WHERE gseq IS NULL ORDER BY id LIMIT $1), \
         numbered AS MATERIALIZED ( \
           SELECT id, tenant, row_number() OVER (ORDER BY id) AS g, \
             sum(n) OVER (PARTITION BY tenant ORDER BY id) AS run, \
             sum(n) OVER (PARTITION BY tenant) AS total \
           FROM todo), \
         heads AS (INSERT INTO event_heads (tenant, seq) \
           SELECT tenant, sum(n) FROM todo GROUP BY tenant ORDER BY tenant \
           ON CONFLICT (tenant) DO UPDATE SET seq = event_heads.seq + excluded.seq \
           RETURNING tenant, seq), \
         places AS (UPDATE event_gseq SET gseq = gseq + c.k \
           FROM (SELECT count(*) AS k FROM todo) c RETURNING gseq - c.k AS base), \
         done AS (UPDATE events e SET gseq = (SELECT base FROM places) + nb.g, \
             seq = h.seq - nb.total + nb.run \
           FROM numbered nb JOIN heads h ON h.tenant = nb.tenant \
           WHERE e.id = nb.id RETURNING 1) \
         SELECT count(*) FROM done",
    )
    .bind(PASS_ROWS)
    .fetch_one(&mut *tx)
    .await
    .map_err(pg)?;
    tx.commit().await.map_err(pg)?;
    Ok(u64::try_from(n).unwrap_or(0))
}

pub async fn heads(pool: &PgPool, tenant: Option<&str>) -> StoreResult<EventHeads> {
    let (gseq, seq, first): (i64, Option<i64>, Option<i64>) = sqlx::query_as(
        "SELECT (SELECT gseq FROM event_gseq), \
           (SELECT seq FROM event_heads WHERE tenant = $1), \
           (SELECT min(seq - n + 1) FROM events WHERE tenant = $1 AND seq IS NOT NULL)",
    )
    .bind(tenant)
    .fetch_one(pool)
    .await
    .map_err(pg)?;
    let seq = seq.and_then(|s| u64::try_from(s).ok()).unwrap_or(0);
    Ok(EventHeads {
        gseq,
        seq,
        first: first.and_then(|f| u64::try_from(f).ok()).unwrap_or(seq + 1),
    })
}
