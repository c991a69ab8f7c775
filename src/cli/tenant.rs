//! `taskbox tenant set|show|list|usage`: a tenant's weight and quotas (the
//! admin's), and what a tenant used (its own, or any for the admin).

use super::client::{api_error, connect, PrintReply, ServerArgs};
use super::table::{self, Table};
use crate::api::tenants::{QuotaSource, TenantList, TenantView};
use crate::api::usage::Usage;
use crate::quota::Quotas;
use anyhow::Context;
use serde_json::{json, Map, Value};
use std::process::ExitCode;

/// `NAME=VALUE` for `--quota`: a number, or `default` for the server's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotaSetting {
    pub name: &'static str,
    pub value: Option<u64>,
}

fn parse_quota(s: &str) -> Result<QuotaSetting, String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?} is not NAME=VALUE; e.g. --quota max_queued=10000"))?;
    let name = Quotas::NAMES
        .into_iter()
        .find(|n| *n == name.trim())
        .ok_or_else(|| {
            format!(
                "unknown quota {:?}; quotas are {}",
                name.trim(),
                Quotas::NAMES.join(", ")
            )
        })?;
    let value = match value.trim() {
        "default" => None,
        v => Some(v.replace('_', "").parse::<u64>().map_err(|_| {
            format!("{name}={v:?}: give a whole number, or `default` for the server's")
        })?),
    };
    Ok(QuotaSetting { name, value })
}

#[derive(Debug, clap::Args)]
pub struct Output {
    #[command(flatten)]
    pub server: ServerArgs,
    /// Print the server's answer as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct SetArgs {
    /// The tenant (created if it is new).
    pub name: String,
    /// Its share of the runners against other tenants' (1 to 10000; `default` is 1).
    #[arg(long)]
    pub weight: Option<String>,
    /// A quota, NAME=VALUE (`default`: the server's); repeat for more. The
    /// others stay as they are.
    #[arg(long = "quota", value_name = "NAME=VALUE", value_parser = parse_quota)]
    pub quotas: Vec<QuotaSetting>,
    /// Forget every quota and the weight set before (the server's defaults).
    #[arg(long)]
    pub reset: bool,
    #[command(flatten)]
    pub out: Output,
}

/// The tenant's own settings as `GET /v1/tenants/{name}` shows them: its
/// weight if set, and the quotas whose source is the tenant.
fn own_settings(view: &TenantView) -> (Option<u32>, Map<String, Value>) {
    let own = view
        .quotas
        .iter()
        .filter(|(_, q)| matches!(q.source, QuotaSource::Tenant))
        .map(|(name, q)| (name.clone(), json!(q.limit)))
        .collect();
    let weight = Some(view.weight).filter(|w| *w != 1);
    (weight, own)
}

pub fn set(args: SetArgs) -> anyhow::Result<ExitCode> {
    let client = connect(&args.out.server)?.without_tenant();
    let current: Option<TenantView> = match client
        .get(&["v1", "tenants", &args.name])
        .send()
        .map_err(anyhow::Error::from)
    {
        Ok(reply) => Some(reply.json()?),
        Err(e) if api_error(&e).is_some_and(|a| a.status == 404) => None,
        Err(e) => return Err(e),
    };
    let (mut weight, mut own) = match (&current, args.reset) {
        (Some(view), false) => own_settings(view),
        _ => (None, Map::new()),
    };
    match args.weight.as_deref() {
        None => {}
        Some("default") => weight = None,
        Some(w) => {
            weight = Some(w.parse().with_context(|| {
                format!("--weight {w:?}: give a whole number from 1 to 10000, or `default`")
            })?)
        }
    }
    for q in &args.quotas {
        match q.value {
            Some(v) => own.insert(q.name.to_owned(), json!(v)),
            None => own.remove(q.name),
        };
    }
    let mut body = json!({ "quotas": own });
    if let Some(w) = weight {
        body["weight"] = json!(w);
    }
    let reply = client
        .put(&["v1", "tenants", &args.name])
        .json(body)
        .send()?;
    if args.out.json {
        reply.print()?;
    } else {
        let verb = if reply.status == 201 {
            "created"
        } else {
            "updated"
        };
        eprintln!("{verb} tenant {}", args.name);
        print!("{}", tenant_view(&reply.json()?));
    }
    Ok(ExitCode::SUCCESS)
}

/// A tenant as people read it: its weight, then its quotas in a table.
pub fn tenant_view(t: &TenantView) -> String {
    let mut out = table::fields(&[
        ("tenant", t.name.clone()),
        ("created", table::time_cell(Some(t.created_at.as_str()))),
        ("weight", t.weight.to_string()),
    ]);
    let mut quotas = Table::new(&["QUOTA", "LIMIT", "SET BY"]).right(&[1]);
    for (name, q) in &t.quotas {
        let limit = match q.limit {
            Some(n) => super::format::thousands(n),
            None => "none".to_owned(),
        };
        let by = match q.source {
            QuotaSource::Tenant => "tenant",
            QuotaSource::Server => "server",
        };
        quotas.row(vec![name.clone(), limit, by.to_owned()]);
    }
    out.push('\n');
    out.push_str(&quotas.render());
    out
}

pub fn show(name: String, out: Output) -> anyhow::Result<ExitCode> {
    let client = connect(&out.server)?.without_tenant();
    let reply = client.get(&["v1", "tenants", &name]).send()?;
    if out.json {
        reply.print()?;
    } else {
        print!("{}", tenant_view(&reply.json()?));
    }
    Ok(ExitCode::SUCCESS)
}

pub fn list(out: Output) -> anyhow::Result<ExitCode> {
    let client = connect(&out.server)?.without_tenant();
    let reply = client.get(&["v1", "tenants"]).send()?;
    if out.json {
        reply.print()?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = Table::new(&["NAME", "WEIGHT", "OWN QUOTAS", "CREATED"]).right(&[1]);
    let list: TenantList = reply.json()?;
    for tenant in &list.tenants {
        let (_, own) = own_settings(tenant);
        let own: Vec<String> = own
            .iter()
            .map(|(k, v)| format!("{k}={}", table::cell(v)))
            .collect();
        t.row(vec![
            tenant.name.clone(),
            tenant.weight.to_string(),
            if own.is_empty() {
                "-".to_owned()
            } else {
                own.join(" ")
            },
            table::time_cell(Some(tenant.created_at.as_str())),
        ]);
    }
    t.print();
    Ok(ExitCode::SUCCESS)
}

pub fn usage(name: Option<String>, out: Output) -> anyhow::Result<ExitCode> {
    let client = connect(&out.server)?;
    let reply = match &name {
        Some(n) => client
            .without_tenant()
            .get(&["v1", "tenants", n, "usage"])
            .send()?,
        None => client.get(&["v1", "usage"]).send()?,
    };
    if out.json {
        reply.print()?;
    } else {
        print!("{}", usage_view(&reply.json()?));
    }
    Ok(ExitCode::SUCCESS)
}

/// `--export` and what it takes.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// Export usage per task version and per hour or day (`GET /v1/usage/export`).
    #[arg(long)]
    pub export: bool,
    /// With --export: attempts that ended at or after this RFC 3339 time
    /// [default: a day before --to by hour, 30 days by day].
    #[arg(long, requires = "export")]
    pub from: Option<String>,
    /// With --export: attempts that ended before this RFC 3339 time [default: now].
    #[arg(long, requires = "export")]
    pub to: Option<String>,
    /// With --export: each line's bucket.
    #[arg(long, requires = "export", value_parser = ["hour", "day"])]
    pub by: Option<String>,
    /// With --export: print CSV (the columns `format=csv` answers).
    #[arg(long, requires = "export", conflicts_with = "json")]
    pub csv: bool,
}

/// `taskbox tenant usage --export`.
pub fn export(name: Option<String>, args: ExportArgs, out: Output) -> anyhow::Result<ExitCode> {
    for (flag, time) in [("--from", &args.from), ("--to", &args.to)] {
        if let Some(t) = time {
            if crate::time::parse_rfc3339(t).is_none() {
                anyhow::bail!("{flag} {t:?} is not an RFC 3339 time, e.g. 2026-11-28T00:00:00Z");
            }
        }
    }
    let client = connect(&out.server)?;
    let client = if name.is_some() {
        client.without_tenant()
    } else {
        client
    };
    let reply = client
        .get(&["v1", "usage", "export"])
        .query("from", args.from.as_deref())
        .query("to", args.to.as_deref())
        .query("by", args.by.as_deref())
        .query("tenant", name.as_deref())
        .send()
        .map_err(|e| super::client::older_server(e, "tenant usage --export"))?;
    if args.csv {
        // Written here as the server writes it, so the reply stays JSON.
        let export: crate::api::usage_export::UsageExport = reply.json()?;
        print!("{}", crate::api::usage_export::csv(&export.lines));
    } else if out.json {
        reply.print()?;
    } else {
        print!("{}", export_view(&reply.json()?));
    }
    Ok(ExitCode::SUCCESS)
}

/// A bucket's start as its day, or its day and hour (UTC, as the export).
fn bucket_cell(start: &str, by: crate::api::usage_export::By) -> String {
    let (day, rest) = start.split_once('T').unwrap_or((start, ""));
    match by {
        crate::api::usage_export::By::Day => day.to_owned(),
        crate::api::usage_export::By::Hour => format!("{day} {}", rest.get(..5).unwrap_or(rest)),
    }
}

/// The export as people read it: a line per tenant, bucket, task and
/// version, then the totals.
pub fn export_view(e: &crate::api::usage_export::UsageExport) -> String {
    let num = super::format::thousands;
    let mut t = Table::new(&[
        "TENANT",
        "START",
        "TASK",
        "VERSION",
        "ATTEMPTS",
        "FUEL",
        "WALL",
        "MEMORY MiB·s",
        "HTTP REQ",
        "HTTP BYTES",
        "CACHE HITS",
        "FUEL SAVED",
    ])
    .right(&[3, 4, 5, 6, 7, 8, 9, 10, 11]);
    let mut total = [0u64; 7];
    let mut memory = 0.0;
    for l in &e.lines {
        for (sum, v) in total.iter_mut().zip([
            l.attempts,
            l.fuel,
            l.wall_ms,
            l.http_requests,
            l.http_bytes,
            l.cache_hits,
            l.fuel_saved,
        ]) {
            *sum += v;
        }
        memory += l.memory_mib_seconds;
        t.row(vec![
            l.tenant.clone(),
            bucket_cell(&l.start, e.by),
            l.task.clone(),
            l.version.to_string(),
            num(l.attempts),
            num(l.fuel),
            table::millis(Some(l.wall_ms as f64)),
            format!("{:.3}", l.memory_mib_seconds),
            num(l.http_requests),
            super::format::bytes(l.http_bytes),
            num(l.cache_hits),
            num(l.fuel_saved),
        ]);
    }
    t.row(vec![
        "total".into(),
        String::new(),
        String::new(),
        String::new(),
        num(total[0]),
        num(total[1]),
        table::millis(Some(total[2] as f64)),
        format!("{memory:.3}"),
        num(total[3]),
        super::format::bytes(total[4]),
        num(total[5]),
        num(total[6]),
    ]);
    format!(
        "usage by {} from {} to {}\n\n{}",
        match e.by {
            crate::api::usage_export::By::Hour => "hour",
            crate::api::usage_export::By::Day => "day",
        },
        e.from,
        e.to,
        t.render()
    )
}

/// Usage as people read it: jobs now, then the two windows side by side.
pub fn usage_view(u: &Usage) -> String {
    let mut out = table::fields(&[
        ("tenant", u.tenant.clone()),
        (
            "jobs now",
            format!(
                "{} queued · {} running · {} waiting",
                u.jobs.queued, u.jobs.running, u.jobs.waiting
            ),
        ),
    ]);
    let mut t = Table::new(&[
        "WINDOW",
        "FUEL USED",
        "BUDGET",
        "LEFT",
        "WALL",
        "ATTEMPTS",
        "HTTP REQ",
        "HTTP BYTES",
        "COMPLETED",
        "FAILED",
        "CANCELLED",
        "CACHE HITS",
        "FUEL SAVED",
    ])
    .right(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    for (key, w) in [("current", &u.current), ("last", &u.last)] {
        let num = super::format::thousands;
        t.row(vec![
            format!("{key} ({})", table::time_cell(Some(w.start.as_str()))),
            num(w.fuel_used),
            w.fuel_budget.map_or("none".to_owned(), num),
            w.fuel_left.map_or("-".to_owned(), num),
            table::millis(Some(w.wall_ms as f64)),
            num(w.attempts),
            num(w.http_requests),
            super::format::bytes(w.http_bytes),
            num(w.jobs_ended.completed),
            num(w.jobs_ended.failed),
            num(w.jobs_ended.cancelled),
            num(w.cache_hits),
            num(w.fuel_saved),
        ]);
    }
    out.push('\n');
    out.push_str(&t.render());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_parse_by_name_and_refuse_the_unknown() {
        assert_eq!(
            parse_quota("max_queued=10_000").unwrap(),
            QuotaSetting {
                name: "max_queued",
                value: Some(10_000)
            }
        );
        assert_eq!(parse_quota("fuel_per_minute=default").unwrap().value, None);
        assert!(parse_quota("max_quued=1")
            .unwrap_err()
            .contains("max_queued"));
        assert!(parse_quota("max_queued").is_err());
        assert!(parse_quota("max_queued=-1").is_err());
    }

    #[test]
    fn own_settings_are_those_the_tenant_set() {
        let view = serde_json::from_value(json!({"name": "acme",
            "created_at": "2026-11-23T10:00:00Z", "weight": 3, "quotas": {
            "max_queued": {"limit": 5, "source": "tenant"},
            "max_components": {"limit": 1000, "source": "server"}}}))
        .unwrap();
        let (w, own) = own_settings(&view);
        assert_eq!(w, Some(3));
        assert_eq!(Value::Object(own), json!({"max_queued": 5}));
    }

    #[test]
    fn a_bucket_reads_as_its_day_or_hour() {
        use crate::api::usage_export::By;
        assert_eq!(
            bucket_cell("2026-11-28T19:00:00.000Z", By::Hour),
            "2026-11-28 19:00"
        );
        assert_eq!(
            bucket_cell("2026-11-28T00:00:00.000Z", By::Day),
            "2026-11-28"
        );
    }

    #[test]
    fn usage_reads_as_a_table() {
        let u = serde_json::from_value(json!({"tenant": "acme", "window_ms": 60000,
            "jobs": {"queued": 2, "running": 1, "waiting": 0},
            "current": {"start": "2026-11-23T10:00:00Z", "end": "2026-11-23T10:01:00Z",
                        "fuel_used": 1500, "fuel_budget": 2000,
                        "fuel_left": 500, "wall_ms": 12, "attempts": 3,
                        "http_requests": 0, "http_bytes": 0, "cache_hits": 4, "fuel_saved": 77_000,
                        "jobs_ended": {"completed": 2, "failed": 1, "cancelled": 0}},
            "last": {"start": "2026-11-23T09:59:00Z", "end": "2026-11-23T10:00:00Z",
                     "fuel_used": 0, "fuel_budget": 2000,
                     "fuel_left": 2000, "wall_ms": 0, "attempts": 0,
                     "http_requests": 0, "http_bytes": 0,
                     "jobs_ended": {"completed": 0, "failed": 0, "cancelled": 0}}}))
        .unwrap();
        let out = usage_view(&u);
        assert!(out.contains("2 queued · 1 running · 0 waiting"), "{out}");
        assert!(out.contains("1,500"), "{out}");
        assert!(out.contains("77,000"), "{out}");
        assert!(serde_json::from_value::<Usage>(json!({})).is_err());
    }
}
