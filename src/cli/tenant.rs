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
