//! The statements of the usage export, for both backends: what each
//! tenant's attempts cost, by task version and by hour or day, read from
//! the records they come from (the rows of `attempts`, and the last attempt
//! on each job's row), and the jobs a result cache completed. A figure is
//! the sum of the attempt records in its bucket, nothing kept beside them,
//! so the export adds up to the job records by construction.

use super::dialect::Dialect;

/// A JSON object's whole-number field as an integer, 0 when absent.
fn json_int(d: Dialect, column: &str, field: &str) -> String {
    match d {
        Dialect::Sqlite => format!("coalesce(json_extract({column}, '$.{field}'), 0)"),
        Dialect::Postgres | Dialect::PostgresMany => {
            format!("coalesce(({column}::jsonb ->> '{field}')::int8, 0)")
        }
    }
}

/// One attempt record's figures as the export sums them, from columns
/// named with `p` (`a.` for a row of `attempts`, `last_` for a job's last).
fn attempt_figures(d: Dialect, col: impl Fn(&str) -> String) -> String {
    let float = match d {
        Dialect::Sqlite => "REAL",
        Dialect::Postgres | Dialect::PostgresMany => "float8",
    };
    let wall = format!("({} - {})", col("finished_at"), col("started_at"));
    format!(
        "{task} AS task, {version} AS version, {fuel} AS fuel, {wall} AS wall, \
         CAST({peak} AS {float}) * {wall} / 1048576 AS mem, {req} AS req, {sent} + {received} AS bytes",
        task = col("task"),
        version = col("task_version"),
        fuel = col("fuel_used"),
        peak = col("peak_memory_bytes"),
        req = json_int(d, &col("network"), "requests"),
        sent = json_int(d, &col("network"), "bytes_sent"),
        received = json_int(d, &col("network"), "bytes_received"),
    )
}

/// Attempts that ended in [?1, ?2), by tenant, bucket (?3 ms wide, from
/// the epoch), task and version: count, fuel, wall-clock ms, peak memory ×
/// time (MiB·ms), outbound requests and body bytes. ?4 a tenant, or NULL
/// for every one.
pub fn attempts(d: Dialect, one: bool) -> String {
    let (from, to, width) = (d.param(1), d.param(2), d.param(3));
    let (j_tenant, tenant) = (
        d.tenant_is("j.tenant", 4, one),
        d.tenant_is("tenant", 4, one),
    );
    let (int8, float8) = match d {
        Dialect::Sqlite => ("", ""),
        Dialect::Postgres | Dialect::PostgresMany => ("::int8", "::float8"),
    };
    let rows = format!(
        "SELECT j.tenant AS tenant, a.finished_at AS ended, {} \
         FROM attempts a JOIN jobs j ON j.id = a.job_id \
         WHERE a.finished_at >= {from} AND a.finished_at < {to} \
         AND {j_tenant} \
         UNION ALL \
         SELECT tenant, last_finished_at, {} FROM jobs \
         WHERE last_attempt IS NOT NULL AND last_finished_at >= {from} AND last_finished_at < {to} \
         AND {tenant}",
        attempt_figures(d, |c| format!("a.{c}")),
        attempt_figures(d, |c| format!("last_{c}")),
    );
    format!(
        "SELECT tenant, (ended / {width}) * {width} AS bucket, task, version{int8}, \
         count(*){int8}, sum(fuel){int8}, sum(wall){int8}, sum(mem){float8}, sum(req){int8}, \
         sum(bytes){int8} FROM ({rows}) u \
         GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4"
    )
}

/// Jobs a result cache completed in [?1, ?2), by tenant, bucket (?3),
/// task and version; ?4 as in [`attempts`].
pub fn cache_hits(d: Dialect, one: bool) -> String {
    let (from, to, width) = (d.param(1), d.param(2), d.param(3));
    let tenant = d.tenant_is("tenant", 4, one);
    let int8 = match d {
        Dialect::Sqlite => "",
        Dialect::Postgres | Dialect::PostgresMany => "::int8",
    };
    format!(
        "SELECT tenant, (finished_at / {width}) * {width} AS bucket, task, task_version{int8}, \
         count(*){int8}, coalesce(sum(cached_fuel), 0){int8} FROM jobs \
         WHERE cached_from IS NOT NULL AND finished_at >= {from} AND finished_at < {to} \
         AND {tenant} \
         GROUP BY 1, 2, 3, 4"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_dialects_read_the_attempt_records_and_the_jobs_last() {
        for d in [Dialect::Sqlite, Dialect::Postgres] {
            let sql = attempts(d, true);
            assert!(
                sql.contains("FROM attempts a JOIN jobs j ON j.id = a.job_id"),
                "{sql}"
            );
            assert!(sql.contains("WHERE last_attempt IS NOT NULL"), "{sql}");
            assert!(sql.contains("last_peak_memory_bytes"), "{sql}");
        }
        assert!(attempts(Dialect::Sqlite, true).contains("json_extract(a.network, '$.bytes_sent')"));
        assert!(attempts(Dialect::Postgres, false)
            .contains("(last_network::jsonb ->> 'requests')::int8"));
        // One tenant's read names it, so that an index on the tenant serves it.
        assert!(cache_hits(Dialect::Postgres, true).contains("AND tenant = $4::text GROUP"));
        assert!(attempts(Dialect::Sqlite, true).contains("AND j.tenant = ?4 UNION"));
        assert!(cache_hits(Dialect::Sqlite, false).contains("AND ?4 IS NULL GROUP"));
    }
}
