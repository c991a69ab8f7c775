//! `taskbox webhook …`: make, list and delete the tenant's webhooks, and
//! see how each one's deliveries went (needs the webhooks:write scope).

use super::client::{api_error, connect, PrintReply, ServerArgs};
use super::table::{self, Table};
use crate::api::webhooks::{DeliveryPage, DeliveryView, Webhook, WebhookList};
use crate::events::EventType;
use clap::Subcommand;
use serde_json::json;
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum WebhookCmd {
    /// Send the tenant's job events to a URL, each signed with the webhook's secret.
    #[command(
        after_help = "The secret is shown only once, when the webhook is made: keep it \
to check each delivery's signature."
    )]
    Add {
        /// Where deliveries go (http:// or https://).
        // Not `url`: that is the server's (--url, TASKBOX_URL).
        #[arg(value_name = "URL")]
        endpoint: String,
        /// The event types to send, comma-separated (job.queued, job.started,
        /// job.completed, job.failed, job.retrying, job.cancelled,
        /// job.waiting), or * for all.
        #[arg(long, value_name = "TYPES", value_parser = events_arg)]
        events: String,
        /// The key deliveries are signed with (16 characters or more)
        /// [default: the server makes one].
        #[arg(long, env = "TASKBOX_WEBHOOK_SECRET", hide_env_values = true)]
        secret: Option<String>,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the tenant's webhooks.
    List {
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Delete a webhook; deliveries not yet made are dropped.
    Delete {
        /// The webhook's id (wh_…).
        id: String,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// A webhook's deliveries, newest first: status, attempts, the last error.
    Deliveries {
        /// The webhook's id (wh_…).
        id: String,
        /// At most this many deliveries [server default: 50].
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=500))]
        limit: Option<u32>,
        /// Where the previous page ended (printed under it).
        #[arg(long)]
        cursor: Option<i64>,
        #[command(flatten)]
        server: ServerArgs,
        /// Print the server's answer as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `--events`: checked here so that a typo is told before anything is sent.
fn events_arg(text: &str) -> Result<String, String> {
    super::events::types_list(text, true)
}

pub fn main(cmd: WebhookCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        WebhookCmd::Add {
            endpoint,
            events,
            secret,
            server,
            json,
        } => {
            let client = connect(&server)?;
            let mut body =
                json!({"url": endpoint, "events": events.split(',').collect::<Vec<_>>()});
            if let Some(s) = secret {
                body["secret"] = json!(s);
            }
            let reply = client
                .post(&["v1", "webhooks"])
                .json(body)
                .send()
                .map_err(not_found)?;
            if json {
                reply.print()?;
            } else {
                let hook: Webhook = reply.json()?;
                println!(
                    "webhook {} sends {} to {}",
                    hook.id,
                    events_cell(&hook.events),
                    hook.url
                );
                println!("secret: {}", hook.secret.as_deref().unwrap_or("-"));
            }
            eprintln!(
                "the secret is shown only now: keep it to check each delivery's signature; \
                 it cannot be read again (delete the webhook and add it again for a new one)"
            );
            Ok(ExitCode::SUCCESS)
        }
        WebhookCmd::List { server, json } => super::client::list(
            &server,
            "webhooks",
            json,
            "no webhooks; add one with `taskbox webhook add URL --events …`",
            |l: WebhookList| l.webhooks,
            hooks_table,
        ),
        WebhookCmd::Delete { id, server } => {
            let client = connect(&server)?;
            client
                .delete(&["v1", "webhooks", &id])
                .send()
                .map_err(|e| unknown_hook(e, &id))?;
            println!("deleted webhook {id}");
            Ok(ExitCode::SUCCESS)
        }
        WebhookCmd::Deliveries {
            id,
            limit,
            cursor,
            server,
            json,
        } => {
            let client = connect(&server)?;
            let reply = client
                .get(&["v1", "webhooks", &id, "deliveries"])
                .query("limit", limit)
                .query("cursor", cursor)
                .send()
                .map_err(|e| unknown_hook(e, &id))?;
            if json {
                reply.print()?;
                return Ok(ExitCode::SUCCESS);
            }
            let page: DeliveryPage = reply.json()?;
            if page.deliveries.is_empty() {
                eprintln!("no deliveries yet");
            } else {
                deliveries_table(&page.deliveries).print();
            }
            if let Some(next) = page.next_cursor {
                eprintln!("next page: --cursor {next}");
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// A 404 naming a webhook: say where the ids are.
fn unknown_hook(e: impl Into<anyhow::Error>, id: &str) -> anyhow::Error {
    let e: anyhow::Error = e.into();
    match api_error(&e) {
        Some(a) if a.code.as_deref() == Some("WEBHOOK_NOT_FOUND") => e.context(format!(
            "no webhook {id} in this tenant; `taskbox webhook list` shows their ids"
        )),
        _ => not_found(e),
    }
}

fn not_found(e: impl Into<anyhow::Error>) -> anyhow::Error {
    let e: anyhow::Error = e.into();
    super::client::older_server(e, "webhooks")
}

/// A webhook's event types; `*` when it has every one.
fn events_cell(events: &[EventType]) -> String {
    if EventType::ALL.iter().all(|t| events.contains(t)) {
        "*".to_owned()
    } else if events.is_empty() {
        "-".to_owned()
    } else {
        let names: Vec<&str> = events.iter().map(|t| t.as_str()).collect();
        names.join(",")
    }
}

fn hooks_table(hooks: &[Webhook]) -> Table {
    let mut t = Table::new(&["ID", "URL", "EVENTS", "CREATED"]);
    for h in hooks {
        t.row(vec![
            h.id.clone(),
            h.url.clone(),
            events_cell(&h.events),
            table::time_cell(Some(h.created_at.as_str())),
        ]);
    }
    t
}

/// Longest last error in the table; `--json` has it whole.
const ERROR_WIDTH: usize = 60;

fn deliveries_table(deliveries: &[DeliveryView]) -> Table {
    let mut t = Table::new(&[
        "ID",
        "SEQ",
        "TYPE",
        "STATUS",
        "ATTEMPTS",
        "LAST STATUS",
        "LAST ERROR",
        "NEXT TRY",
    ])
    .right(&[0, 1, 4, 5]);
    for d in deliveries {
        let error = match d.last_error.as_deref() {
            Some(e) if !e.is_empty() => shorten(e, ERROR_WIDTH),
            _ => "-".to_owned(),
        };
        t.row(vec![
            d.id.to_string(),
            d.seq.to_string(),
            d.kind.as_str().to_owned(),
            d.status.as_str().to_owned(),
            d.attempts.to_string(),
            d.last_status.map_or("-".to_owned(), |s| s.to_string()),
            error,
            table::time_cell(d.next_at.as_deref()),
        ]);
    }
    t
}

/// The first line of `text`, at most `max` characters, `…` when cut.
fn shorten(text: &str, max: usize) -> String {
    let first = text.lines().next().unwrap_or("");
    if first.chars().count() <= max && first.len() == text.trim_end().len() {
        return first.to_owned();
    }
    let mut out: String = first.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_checked_before_sending() {
        assert_eq!(
            events_arg("job.completed, job.failed"),
            Ok("job.completed,job.failed".into())
        );
        assert_eq!(events_arg("*"), Ok("*".into()));
        let err = events_arg("job.complete").unwrap_err();
        assert!(err.contains("job.completed"), "{err}");
    }

    #[test]
    fn webhooks_and_deliveries_print_as_tables() {
        let all: Vec<&str> = crate::events::EventType::ALL
            .iter()
            .map(|t| t.as_str())
            .collect();
        let hooks: Vec<Webhook> = serde_json::from_value(json!([
            {"id": "wh_1", "tenant": "acme", "url": "https://a.example/hook", "events": ["job.completed", "job.failed"],
             "created_at": "2000-01-01T00:00:00.000Z"},
            {"id": "wh_2", "tenant": "acme", "url": "https://b.example/", "events": all,
             "created_at": "2000-01-02T00:00:00.000Z"},
        ]))
        .unwrap();
        assert_eq!(
            hooks_table(&hooks).lines(),
            vec![
                "ID    URL                     EVENTS                    CREATED",
                "wh_1  https://a.example/hook  job.completed,job.failed  2000-01-01T00:00:00.000Z",
                "wh_2  https://b.example/      *                         2000-01-02T00:00:00.000Z",
            ]
        );
        let long = "x".repeat(100);
        let deliveries: Vec<DeliveryView> = serde_json::from_value(json!([
            {"id": 7, "seq": 12, "type": "job.failed", "status": "pending", "attempts": 2,
             "created_at": "2000-01-01T00:00:00.000Z", "next_at": "2000-01-01T00:00:10.000Z",
             "last_at": null, "last_status": 503, "last_error": long},
            {"id": 6, "seq": 11, "type": "job.completed", "status": "delivered", "attempts": 1,
             "created_at": "2000-01-01T00:00:00.000Z", "next_at": null, "last_at": null,
             "last_status": 200, "last_error": null},
        ]))
        .unwrap();
        let lines = deliveries_table(&deliveries).lines();
        assert!(lines[0].starts_with("ID  SEQ  TYPE"), "{lines:?}");
        assert!(
            lines[1].contains("pending") && lines[1].contains(&format!("{}…", "x".repeat(59))),
            "{lines:?}"
        );
        assert!(
            lines[2].contains("delivered")
                && lines[2].contains(" 200  - ")
                && lines[2].ends_with('-'),
            "{lines:?}"
        );
    }

    #[test]
    fn errors_shorten_to_their_first_line() {
        assert_eq!(shorten("refused", 60), "refused");
        assert_eq!(shorten("abcdef", 4), "abc…");
        assert_eq!(shorten("one\ntwo", 60), "one…");
    }
}
