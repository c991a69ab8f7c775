//! The statements that write and read a job's attempts, for both backends:
//! the rows of `attempts`, and the attempt that ended the job, which the
//! job's own row keeps (`transition::Move::keeps_attempt`) in a `last_`
//! column for each field. All of them are spelled from `FIELDS`.

use std::sync::LazyLock;

/// An attempt's fields, in the order every write binds them, each with
/// whether it is a 4-byte INTEGER (which readers widen to BIGINT). A row
/// of `attempts` has `job_id` and these; a job's row has `last_` and each.
pub const FIELDS: [(&str, bool); 12] = [
    ("attempt", true),
    ("task", false),
    ("task_version", true),
    ("digest", false),
    ("started_at", false),
    ("finished_at", false),
    ("outcome", false),
    ("error", false),
    ("fuel_used", false),
    ("peak_memory_bytes", false),
    ("log", false),
    ("network", false),
];

/// The fields, each written by `f`, joined by commas.
fn each(f: impl Fn(&str) -> String) -> String {
    FIELDS
        .iter()
        .map(|(c, _)| f(c))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The columns of a row of `attempts`, for a backend's own form of the insert.
pub static COLUMNS: LazyLock<String> = LazyLock::new(|| format!("job_id, {}", each(str::to_owned)));

/// What a second write of one attempt does: it replaces the first, for a
/// released attempt's number is the next one's too.
pub static REPLACES: LazyLock<String> = LazyLock::new(|| {
    let set: Vec<String> = FIELDS[1..]
        .iter()
        .map(|(c, _)| format!("{c} = excluded.{c}"))
        .collect();
    format!(
        " ON CONFLICT (job_id, attempt) DO UPDATE SET {}",
        set.join(", ")
    )
});

/// One attempt's row ($1 job, then the fields from $2 in `FIELDS`' order).
pub static INSERT: LazyLock<String> = LazyLock::new(|| {
    let params: Vec<String> = (1..=FIELDS.len() + 1).map(|n| format!("${n}")).collect();
    format!(
        "INSERT INTO attempts ({}) VALUES ({}){}",
        *COLUMNS,
        params.join(", "),
        *REPLACES
    )
});

/// Moves the attempt job $1's row keeps into `attempts`, before anything
/// that runs the job again (a redrive) writes over it.
pub static KEEP_LAST: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT INTO attempts ({}) SELECT id, {} FROM jobs \
         WHERE id = $1 AND last_attempt IS NOT NULL{}",
        *COLUMNS,
        each(|c| format!("last_{c}")),
        *REPLACES
    )
});

/// What a job's row keeps of no attempt, for the write that runs it again.
pub static NO_LAST: LazyLock<String> = LazyLock::new(|| each(|c| format!("last_{c} = NULL")));

/// A page of a job's attempts, oldest first ($1 job, $2 its tenant, $3
/// after this attempt number, $4 at most this many): its rows of
/// `attempts` and the one its row keeps, which is newer than a row of the
/// same number (a released attempt's). Its columns are `rows::AttemptRow`'s.
pub static PAGE: LazyLock<String> = LazyLock::new(|| {
    let out: Vec<String> = FIELDS
        .iter()
        .map(|(c, int4)| {
            if *int4 {
                format!("CAST({c} AS BIGINT) AS {c}")
            } else {
                (*c).to_owned()
            }
        })
        .collect();
    format!(
        "SELECT {} FROM ( \
         SELECT {} FROM attempts a JOIN jobs j ON j.id = a.job_id \
         WHERE a.job_id = $1 AND j.tenant = $2 AND a.attempt > $3 \
           AND (j.last_attempt IS NULL OR a.attempt <> j.last_attempt) \
         UNION ALL \
         SELECT {} FROM jobs WHERE id = $1 AND tenant = $2 AND last_attempt > $3) t \
         ORDER BY attempt LIMIT $4",
        out.join(", "),
        each(|c| format!("a.{c}")),
        each(|c| format!("last_{c}")),
    )
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::dialect::numbered_in_order;

    #[test]
    fn each_statement_reads_alike_on_both_backends() {
        for sql in [&*INSERT, &*KEEP_LAST, &*PAGE] {
            assert!(numbered_in_order(sql), "{sql}");
        }
    }

    #[test]
    fn a_second_write_replaces_every_field_but_the_key() {
        assert!(
            !REPLACES.contains("attempt = excluded.attempt"),
            "{}",
            *REPLACES
        );
        for (c, _) in &FIELDS[1..] {
            assert!(REPLACES.contains(&format!("{c} = excluded.{c}")), "{c}");
        }
    }
}
