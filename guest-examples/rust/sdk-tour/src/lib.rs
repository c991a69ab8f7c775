//! sdk-tour: a task written with taskbox-sdk, as a task author would, that uses what the SDK
//! offers against the host: a secret (`ctx.secret`), outbound HTTP (`http::Request`, GET with
//! a header, then an optional POST of a JSON body of `post_bytes` bytes), other tasks
//! (`ctx.invoke`, `ctx.spawn`), progress and logs, and the SDK's failures (`missing_secret`,
//! `http_<status>`, `http_denied`, `bad_input`, and an invoked task's own).
//!
//! Input `{"url": "http://…/ok"?, "secret": "API_KEY"?, "post_bytes": n?,
//!   "invoke": {"task", "input"}?, "spawn": {"task", "input"}?}` → output
//! `{"status": 200, "body": "<the answer's text>", "secret_len": n, "posted": n,
//!   "invoked": <its output>, "spawned": "<child id>", "job": "<job id>", "attempt": 1}`
//! (status 0 and body "" without a url); the secret goes out as `x-api-key`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use taskbox_sdk::http::Request;
use taskbox_sdk::{Ctx, Failure};

#[derive(Deserialize, JsonSchema)]
pub struct Input {
    /// Where to GET.
    pub url: Option<String>,
    /// The name of a secret to send as `x-api-key`.
    pub secret: Option<String>,
    /// POST a JSON body of about this many bytes to `url` after the GET.
    pub post_bytes: Option<usize>,
    /// A task to run to completion, and its input.
    pub invoke: Option<Call>,
    /// A task to enqueue as a child, and its input.
    pub spawn: Option<Call>,
}

#[derive(Deserialize, JsonSchema)]
pub struct Call {
    pub task: String,
    pub input: serde_json::Value,
}

#[derive(Serialize)]
pub struct Output {
    pub status: u16,
    pub body: String,
    pub secret_len: usize,
    pub posted: usize,
    pub invoked: Option<serde_json::Value>,
    pub spawned: Option<String>,
    pub job: String,
    pub attempt: u32,
}

pub fn tour(input: Input, ctx: &Ctx) -> Result<Output, Failure> {
    let key = input.secret.as_deref().map(|name| ctx.secret(name)).transpose()?;
    ctx.progress(30, "secret read");
    let (mut status, mut body, mut posted) = (0, String::new(), 0);
    if let Some(url) = &input.url {
        let mut get = Request::get(url);
        if let Some(key) = &key {
            get = get.header("x-api-key", key);
        }
        let answer = get.send()?.error_for_status()?;
        ctx.info(&format!("GET {url}: {}", answer.status));
        (status, body) = (answer.status, answer.text());
        if let Some(n) = input.post_bytes {
            let pad = serde_json::json!({"pad": "p".repeat(n)});
            let sent = Request::post(url).json(&pad).send()?.error_for_status()?;
            posted = n;
            ctx.info(&format!("POST {url}: {}", sent.status));
        }
    }
    let invoked = match &input.invoke {
        Some(call) => Some(ctx.invoke::<serde_json::Value>(&call.task, &call.input)?),
        None => None,
    };
    let spawned = match &input.spawn {
        Some(call) => Some(ctx.spawn(&call.task, &call.input)?),
        None => None,
    };
    ctx.progress(100, "done");
    Ok(Output {
        status,
        body,
        secret_len: key.map_or(0, |k| k.len()),
        posted,
        invoked,
        spawned,
        job: ctx.job().id.clone(),
        attempt: ctx.job().attempt,
    })
}

taskbox_sdk::task!(tour);
