//! `taskbox bench faults`' report as a table, for people.

/// The report, for people.
pub(super) fn print(r: &serde_json::Value) {
    let a = &r["audit"];
    let f = &r["faults"];
    let rows: Vec<(&str, String)> = vec![
        (
            "verdict",
            if r["passed"] == true {
                "PASSED".into()
            } else {
                "FAILED".into()
            },
        ),
        ("jobs", r["jobs"].to_string()),
        ("acknowledged", r["acknowledged"].to_string()),
        ("never acknowledged", r["never_acknowledged"].to_string()),
        (
            "enqueues answered 503 (tried again)",
            r["enqueue_unavailable_503"].to_string(),
        ),
        ("completed", a["completed"].to_string()),
        ("failed", a["failed"].to_string()),
        ("lost", a["lost"].to_string()),
        ("duplicated (completed twice)", a["duplicated"].to_string()),
        ("fallback ran twice", a["fallback_twice"].to_string()),
        (
            "status disagrees with attempts",
            a["inconsistent"].to_string(),
        ),
        ("attempts", a["attempts"].to_string()),
        (
            "callbacks (missing, twice)",
            format!(
                "{} ({}, {})",
                a["callbacks"], a["callback_missing"], a["callback_twice"]
            ),
        ),
        (
            "events (gaps, out of order)",
            format!(
                "{} ({}, {})",
                a["events"], a["event_gaps"], a["events_out_of_order"]
            ),
        ),
        (
            "webhook: ends missing, deliveries not delivered",
            format!("{}, {}", a["webhook_missing"], a["deliveries_unfinished"]),
        ),
        (
            "webhook: requests (refused on purpose, bad signatures)",
            format!(
                "{} ({}, {})",
                r["webhook"]["requests"],
                r["webhook"]["refused_on_purpose"],
                r["webhook"]["bad_signatures"]
            ),
        ),
        (
            "schedule: slots (twice, missing, skipped)",
            format!(
                "{} ({}, {}, {}){}",
                a["slots"],
                a["slots_twice"],
                a["slots_missing"],
                a["slots_skipped"],
                if a["slots_miscounted"] == true {
                    "; its fired count disagrees"
                } else {
                    ""
                }
            ),
        ),
        ("rescued (runner_lost attempts)", a["rescued"].to_string()),
        (
            "fenced writes (ends, renewals)",
            format!(
                "{} ({}, {})",
                r["fenced_writes"], r["fenced_ends"], r["fenced_renewals"]
            ),
        ),
        (
            "ends not written (db down)",
            r["ends_not_written"].to_string(),
        ),
        ("workers killed (SIGKILL)", f["killed"].to_string()),
        (
            "worker stopped (SIGSTOP)",
            format!("{} for {} ms", f["stopped"], f["stopped_for_ms"]),
        ),
        (
            "database crashed (-m immediate)",
            format!("{}, down {} ms", f["db_crashes"], f["db_down_ms"]),
        ),
        ("seed", f["seed"].to_string()),
        (
            "took",
            format!(
                "{:.1} s",
                r["took_ms"].as_u64().unwrap_or(0) as f64 / 1000.0
            ),
        ),
    ];
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in rows {
        println!("{k:<width$}  {v}");
    }
    if let Some(ex) = a["examples"].as_array().filter(|e| !e.is_empty()) {
        println!("examples:");
        for e in ex {
            println!("  {}", e.as_str().unwrap_or_default());
        }
    }
}
