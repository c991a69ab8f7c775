//! `taskbox bench queue`'s report as a table, for people.

pub(super) fn print(report: &serde_json::Value) {
    println!(
        "queue benchmark · durability {} · {} runners",
        report["durability"].as_str().unwrap_or_default(),
        report["runners"]
    );
    if let Some(b) = report.get("burn_down") {
        println!(
            "  burn-down         {:>9.0} jobs/s   ({} no-op jobs in {:.2} s, {})",
            b["jobs_per_second"].as_f64().unwrap_or_default(),
            b["jobs"],
            b["seconds"].as_f64().unwrap_or_default(),
            match b["workers"].as_u64() {
                Some(w) => format!(
                    "{w} worker processes from their spawn; steady 10→90 % {:.0} jobs/s",
                    b["steady_10_90_jobs_per_second"]
                        .as_f64()
                        .unwrap_or_default()
                ),
                None => format!(
                    "{:.0} µs CPU per job",
                    b["cpu_us_per_job"].as_f64().unwrap_or_default()
                ),
            }
        );
    }
    if let Some(l) = report.get("latency") {
        for (name, s, how) in [
            (
                "enqueue→start",
                &l["enqueue_call_to_start"],
                "through the enqueue path, as POST /v1/jobs",
            ),
            (
                "ack→start",
                &l["acknowledged_to_start"],
                "0 when it started before its answer",
            ),
            (
                "  by the loop",
                &l["by_the_claim_loop"]["enqueue_call_to_start"],
                "inserted, then claimed by the claim loop",
            ),
            (
                "  ack→start",
                &l["by_the_claim_loop"]["acknowledged_to_start"],
                "",
            ),
        ] {
            println!(
                "  {name:<17} p50 {:.3} ms · p99 {:.3} ms · max {:.3} ms   ({} samples{}{how})",
                s["p50_ms"].as_f64().unwrap_or_default(),
                s["p99_ms"].as_f64().unwrap_or_default(),
                s["max_ms"].as_f64().unwrap_or_default(),
                l["samples"],
                if how.is_empty() { "" } else { "; " },
            );
        }
    }
    if let Some(h) = report.get("http_enqueue") {
        println!(
            "  HTTP enqueue      {:>9.0} jobs/s   ({} jobs from {} clients, all 201)",
            h["jobs_per_second"].as_f64().unwrap_or_default(),
            h["jobs"],
            h["clients"]
        );
    }
    if let Some(h) = report.get("batch_enqueue") {
        println!(
            "  batch enqueue     {:>9.0} jobs/s   ({} jobs in batches of {} from one client; a request p50 {:.1} ms, p99 {:.1} ms)",
            h["jobs_per_second"].as_f64().unwrap_or_default(),
            h["jobs"],
            h["per_batch"],
            h["request"]["p50_ms"].as_f64().unwrap_or_default(),
            h["request"]["p99_ms"].as_f64().unwrap_or_default(),
        );
    }
    if let Some(p) = report.get("prune") {
        println!(
            "  prune             {:>9.0} jobs/s   ({} finished jobs and {} attempts in {:.1} s)",
            p["jobs_per_second"].as_f64().unwrap_or_default(),
            p["pruned"],
            p["attempts_pruned"],
            p["seconds"].as_f64().unwrap_or_default(),
        );
        for (name, s) in [
            ("enqueue→start", &p["alone"]),
            ("  while pruning", &p["during"]["enqueue_call_to_start"]),
        ] {
            println!(
                "  {name:<17} p50 {:.3} ms · p99 {:.3} ms · max {:.3} ms",
                s["p50_ms"].as_f64().unwrap_or_default(),
                s["p99_ms"].as_f64().unwrap_or_default(),
                s["max_ms"].as_f64().unwrap_or_default(),
            );
        }
    }
    if let Some(w) = report.get("webhooks") {
        for (i, r) in w["rounds"].as_array().into_iter().flatten().enumerate() {
            let rate = |k: &str| r[k]["jobs_per_second"].as_f64().unwrap_or_default();
            println!(
                "  webhooks, round {}: burn-down {:.0} jobs/s without · {:.0} with one rare event ({:.3}×) · {:.0} with every completion ({:.3}×, all {} delivered {:.1} s after the start)",
                i + 1,
                rate("without"),
                rate("rare"),
                r["rare_ratio"].as_f64().unwrap_or_default(),
                rate("every_completion"),
                r["every_completion_ratio"].as_f64().unwrap_or_default(),
                r["every_completion"]["webhook_requests"],
                r["every_completion"]["all_delivered_after_s"].as_f64().unwrap_or_default(),
            );
        }
    }
    if let Some(w) = report.get("workflows") {
        for (i, r) in w["rounds"].as_array().into_iter().flatten().enumerate() {
            let f = |k: &str| r[k].as_f64().unwrap_or_default();
            println!(
                "  workflows, round {}: plain {:.0} jobs/s · one-step {:.0} jobs/s ({:.2}× a plain job's time) · three-step {:.0} jobs/s, {:.0} stages/s ({:.2}× a plain job's time a stage)",
                i + 1,
                f("plain_jobs_per_second"),
                f("one_step_jobs_per_second"),
                f("one_step_vs_plain"),
                f("three_step_jobs_per_second"),
                f("three_step_stages_per_second"),
                f("three_step_stage_vs_plain"),
            );
        }
    }
    if let Some(t) = report.get("throttle") {
        for (i, r) in t["rounds"].as_array().into_iter().flatten().enumerate() {
            let f = |k: &str| r[k].as_f64().unwrap_or_default();
            println!(
                "  throttle, round {}: plain {:.0} jobs/s · throttled ({} keys) {:.0} jobs/s ({:.2}× a plain job's time, {:+.1} µs a job)",
                i + 1,
                f("plain_jobs_per_second"),
                t["keys"],
                f("throttled_jobs_per_second"),
                f("throttled_vs_plain"),
                f("us_per_job_added"),
            );
        }
    }
    if let Some(t) = report.get("traces") {
        for (i, r) in t["rounds"].as_array().into_iter().flatten().enumerate() {
            let f = |k: &str| r[k].as_f64().unwrap_or_default();
            println!(
                "  traces, round {}: off {:.0} jobs/s · dropped {:.0} jobs/s ({:.2}×, {:+.1} µs a job) · sent to a local receiver {:.0} jobs/s ({:.2}×, {:+.1} µs a job, {:.0} B of OTLP a job)",
                i + 1,
                f("off_jobs_per_second"),
                f("dropped_jobs_per_second"),
                f("dropped_vs_off"),
                f("us_per_job_dropped"),
                f("sent_jobs_per_second"),
                f("sent_vs_off"),
                f("us_per_job_sent"),
                f("otlp_bytes_per_job"),
            );
        }
    }
    if let Some(t) = report.get("debounce") {
        for (i, r) in t["rounds"].as_array().into_iter().flatten().enumerate() {
            let f = |k: &str| r[k].as_f64().unwrap_or_default();
            println!(
                "  debounce, round {}: enqueue plain {:.1} µs · own key {:.1} µs · replacing ({} keys) {:.1} µs a job; enqueue and run plain {:.0} jobs/s · own key {:.0} jobs/s ({:.2}× a plain job's time)",
                i + 1,
                f("plain_enqueue_us"),
                f("own_keys_enqueue_us"),
                t["keys"],
                f("replacing_enqueue_us"),
                f("plain_jobs_per_second"),
                f("own_keys_jobs_per_second"),
                f("own_keys_vs_plain"),
            );
        }
    }
}
