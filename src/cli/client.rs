//! The HTTP client the CLI's server commands share: where the server is, who we are, what it said.

use anyhow::{bail, Context};
use reqwest::header::{HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::{Method, StatusCode, Url};
use serde_json::Value;
use std::fmt;
use std::time::Duration;

/// Where the server is and who is asking; every server subcommand flattens these.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerArgs {
    /// The taskbox server's base URL (plain http).
    #[arg(long, env = "TASKBOX_URL", default_value = "http://127.0.0.1:8080")]
    pub url: String,
    /// The bearer token: the admin token, or one minted by `taskbox token create`.
    #[arg(long, env = "TASKBOX_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Act in this tenant (admin token only; other tokens belong to one tenant).
    #[arg(long, env = "TASKBOX_TENANT")]
    pub tenant: Option<String>,
}

/// A connection to one server, with the runtime its requests run on.
pub struct Client {
    // Commands are sync; each owns a small runtime and blocks on one request at a time.
    rt: tokio::runtime::Runtime,
    http: reqwest::Client,
    base: Url,
    token: String,
    tenant: Option<String>,
}

/// A successful answer: its status (e.g. 201 against 200) and its body,
/// as sent (empty, or JSON).
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    /// The body's bytes: `--json` prints them as they came.
    pub raw: bytes::Bytes,
    /// `METHOD /path`, to name the request in an error.
    what: String,
}

impl Reply {
    /// The body as `T`, the API's own view of it: a field the CLI reads that
    /// the API renames no longer builds, rather than printing nothing.
    pub fn view<'a, T: serde::Deserialize<'a>>(&'a self) -> anyhow::Result<T> {
        serde_json::from_slice(&self.raw).with_context(|| {
            format!(
                "{} answered {} with JSON this taskbox cannot read; is the server another version?",
                self.what, self.status
            )
        })
    }

    /// Prints the body as the server sent it (and a newline, when it ends
    /// without one): what `--json` shows.
    pub fn print(&self) -> anyhow::Result<()> {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        out.write_all(&self.raw)?;
        if !self.raw.ends_with(b"\n") {
            out.write_all(b"\n")?;
        }
        out.flush()?;
        Ok(())
    }
}

/// The server could not be reached at all (nothing listening, wrong host, timeout).
#[derive(Debug)]
pub struct Unreachable {
    pub url: String,
    pub cause: String,
}

impl fmt::Display for Unreachable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot reach the taskbox server at {} ({}); start one with `taskbox serve`, \
             or point TASKBOX_URL (or --url) at a running server",
            self.url, self.cause
        )
    }
}

impl std::error::Error for Unreachable {}

/// An error answer. `code` is `None` when the body was not taskbox's error shape
/// (a proxy's page, an empty body).
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: u16,
    pub code: Option<String>,
    pub message: String,
    pub details: Value,
}

impl ApiError {
    /// Reads `{"error": {"code", "message", "details"}}`, or makes the best of any other body.
    pub fn from_body(status: u16, body: &[u8]) -> ApiError {
        let parsed: Option<Value> = serde_json::from_slice(body).ok();
        if let Some(error) = parsed.as_ref().and_then(|v| v.get("error")) {
            if let Some(code) = error.get("code").and_then(Value::as_str) {
                return ApiError {
                    status,
                    code: Some(code.to_owned()),
                    message: error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    details: error.get("details").cloned().unwrap_or(Value::Null),
                };
            }
        }
        let text = String::from_utf8_lossy(body);
        let text = text.trim();
        // A proxy's HTML error page can be long; its first line says enough.
        let mut message: String = text
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(200)
            .collect();
        if message.len() < text.len() {
            message.push('…');
        }
        ApiError {
            status,
            code: None,
            message,
            details: Value::Null,
        }
    }

    /// True for the error codes a caller may simply retry after a pause.
    pub fn is_transient(&self) -> bool {
        matches!(self.status, 429 | 502 | 503 | 504)
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.code {
            Some(code) => write!(f, "{code} ({}): {}", self.status, self.message)?,
            None => {
                let reason = StatusCode::from_u16(self.status)
                    .ok()
                    .and_then(|s| s.canonical_reason())
                    .unwrap_or("");
                let message = if self.message.is_empty() {
                    "the server gave no explanation"
                } else {
                    &self.message
                };
                write!(f, "HTTP {} {reason}: {message}", self.status)?;
            }
        }
        write_details(f, self.code.as_deref(), &self.details)?;
        if self.status == 401 {
            write!(
                f,
                "\n  the token was refused: check TASKBOX_TOKEN (or --token)"
            )?;
        }
        Ok(())
    }
}

/// Invalid-input details are a list of `{pointer, message}`: one line each reads best.
fn write_details(f: &mut fmt::Formatter<'_>, code: Option<&str>, details: &Value) -> fmt::Result {
    if details.is_null() {
        return Ok(());
    }
    if code == Some("JOB_INVALID_INPUT") {
        if let Some(items) = details.as_array() {
            for item in items {
                let pointer = item.get("pointer").and_then(Value::as_str).unwrap_or("");
                let message = item.get("message").and_then(Value::as_str);
                let at = if pointer.is_empty() {
                    "(the input)"
                } else {
                    pointer
                };
                match message {
                    Some(m) => write!(f, "\n  {at}: {m}")?,
                    None => write!(f, "\n  {item}")?,
                }
            }
            return Ok(());
        }
    }
    write!(f, "\n  details: {details}")
}

impl std::error::Error for ApiError {}

/// What a request carries.
enum Body {
    None,
    Json(Value),
    Wasm(Vec<u8>),
}

/// One request being built; `send` runs it to completion.
pub struct Call<'a> {
    client: &'a Client,
    method: Method,
    url: Url,
    headers: Vec<(&'static str, String)>,
    body: Body,
}

impl Client {
    /// Checks the flags and prepares a client; nothing is sent yet.
    pub fn new(args: &ServerArgs) -> anyhow::Result<Client> {
        let base = base_url(&args.url)?;
        let token = match args.token.as_deref().map(str::trim) {
            Some(t) if !t.is_empty() => t.to_owned(),
            _ => bail!(
                "no token: set TASKBOX_TOKEN (or pass --token); `taskbox serve` prints the \
                 admin token at its first start, and `taskbox token create` mints others"
            ),
        };
        if HeaderValue::from_str(&token).is_err() {
            bail!("the token (TASKBOX_TOKEN or --token) has characters that cannot go in an HTTP header");
        }
        let tenant = args.tenant.clone().filter(|t| !t.is_empty());
        if let Some(t) = &tenant {
            if HeaderValue::from_str(t).is_err() {
                bail!("the tenant name {t:?} has characters that cannot go in an HTTP header");
            }
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        let http = {
            let _in_runtime = rt.enter();
            crate::http::client()
                .user_agent(concat!("taskbox-cli/", env!("CARGO_PKG_VERSION")))
                // No overall timeout: `job run --wait` legitimately waits as long as the job runs.
                .connect_timeout(Duration::from_secs(10))
                .build()
                .context("cannot set up the HTTP client")?
        };
        Ok(Client {
            rt,
            http,
            base,
            token,
            tenant,
        })
    }

    /// `GET` the path made of these segments (each is percent-encoded).
    pub fn get(&self, path: &[&str]) -> Call<'_> {
        self.call(Method::GET, path)
    }

    /// `POST` to the path made of these segments.
    pub fn post(&self, path: &[&str]) -> Call<'_> {
        self.call(Method::POST, path)
    }

    /// `PUT` to the path made of these segments.
    pub fn put(&self, path: &[&str]) -> Call<'_> {
        self.call(Method::PUT, path)
    }

    /// `DELETE` the path made of these segments.
    pub fn delete(&self, path: &[&str]) -> Call<'_> {
        self.call(Method::DELETE, path)
    }

    fn call(&self, method: Method, path: &[&str]) -> Call<'_> {
        Call {
            client: self,
            method,
            url: join(&self.base, path),
            headers: Vec::new(),
            body: Body::None,
        }
    }

    /// Runs a future on this client's runtime: what reads a stream [`Call::open`] opened.
    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    /// Sleeps on this thread; callers poll between requests.
    pub fn pause(&self, d: Duration) {
        std::thread::sleep(d);
    }

    /// Forgets the `Taskbox-Tenant` header, for requests that name their tenant in the body.
    pub fn without_tenant(mut self) -> Client {
        self.tenant = None;
        self
    }
}

impl Call<'_> {
    /// Adds `key=value` to the query when there is a value.
    pub fn query(mut self, key: &str, value: Option<impl ToString>) -> Self {
        if let Some(v) = value {
            self.url.query_pairs_mut().append_pair(key, &v.to_string());
        }
        self
    }

    /// Adds a request header.
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// Sends this JSON as the body.
    pub fn json(mut self, body: Value) -> Self {
        self.body = Body::Json(body);
        self
    }

    /// Sends these bytes as an `application/wasm` body.
    pub fn wasm(mut self, bytes: Vec<u8>) -> Self {
        self.body = Body::Wasm(bytes);
        self
    }

    /// The request as reqwest builds it, asking for `accept`; and `METHOD /path`, to name it.
    fn build(self, accept: &str) -> anyhow::Result<(reqwest::RequestBuilder, String)> {
        let client = self.client;
        let mut req = client
            .http
            .request(self.method.clone(), self.url.clone())
            .bearer_auth(&client.token)
            .header(ACCEPT, accept);
        if let Some(t) = &client.tenant {
            req = req.header("Taskbox-Tenant", t);
        }
        for (name, value) in self.headers {
            if HeaderValue::from_str(&value).is_err() {
                bail!("the {name} value {value:?} has characters that cannot go in an HTTP header");
            }
            req = req.header(name, value);
        }
        req = match self.body {
            Body::None => req,
            Body::Json(v) => req.json(&v),
            Body::Wasm(bytes) => req.header(CONTENT_TYPE, "application/wasm").body(bytes),
        };
        Ok((req, format!("{} {}", self.method, self.url.path())))
    }

    /// Opens a server-sent-event stream: the answer, its body still to be
    /// read chunk by chunk (`Response::chunk`) on this client's runtime
    /// ([`Client::block_on`]). A non-2xx answer becomes an [`ApiError`], no
    /// answer an [`Unreachable`], as with [`Call::send`].
    pub async fn open(self) -> anyhow::Result<reqwest::Response> {
        let client = self.client;
        let (req, what) = self.build("text/event-stream")?;
        let resp = req
            .send()
            .await
            .map_err(|e| transport_error(e, &client.base, &what))?;
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            let body = resp
                .bytes()
                .await
                .map_err(|e| transport_error(e, &client.base, &what))?;
            return Err(ApiError::from_body(status, &body).into());
        }
        Ok(resp)
    }

    /// Sends the request; a non-2xx answer becomes an [`ApiError`], no answer an [`Unreachable`].
    pub fn send(self) -> anyhow::Result<Reply> {
        let client = self.client;
        let (req, what) = self.build("application/json")?;
        client.rt.block_on(async {
            let resp = req
                .send()
                .await
                .map_err(|e| transport_error(e, &client.base, &what))?;
            let status = resp.status().as_u16();
            let body = resp
                .bytes()
                .await
                .map_err(|e| transport_error(e, &client.base, &what))?;
            if !(200..300).contains(&status) {
                return Err(ApiError::from_body(status, &body).into());
            }
            // Checked here, so that a body that is not JSON is told as such
            // (not as a view it does not fit), whoever reads it.
            if !body.iter().all(u8::is_ascii_whitespace) {
                serde_json::from_slice::<serde::de::IgnoredAny>(&body).with_context(|| {
                    format!(
                        "{what} answered {status} with a body that is not JSON; \
                         is {} a taskbox server?",
                        client.base
                    )
                })?;
            }
            Ok(Reply {
                status,
                raw: body,
                what,
            })
        })
    }
}

/// Prints JSON pretty on stdout: what `--json` shows.
pub fn print_json(v: &Value) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

/// Parses the base URL; `host:port` alone means plain http.
fn base_url(text: &str) -> anyhow::Result<Url> {
    let text = text.trim();
    let with_scheme = if text.contains("://") {
        text.to_owned()
    } else {
        format!("http://{text}")
    };
    let url = Url::parse(&with_scheme)
        .with_context(|| format!("TASKBOX_URL (or --url) {text:?} is not a URL"))?;
    match url.scheme() {
        "http" => {}
        "https" => bail!(
            "TASKBOX_URL (or --url) {text:?} uses https, but this taskbox speaks plain http only; \
             put a TLS-terminating proxy in front of the server and use its http address"
        ),
        other => {
            bail!("TASKBOX_URL (or --url) {text:?} has scheme {other:?}; use http://host:port")
        }
    }
    if url.cannot_be_a_base() || url.host().is_none() {
        bail!("TASKBOX_URL (or --url) {text:?} has no host; use http://host:port");
    }
    Ok(url)
}

/// The base URL (which may carry a path prefix) followed by these segments.
fn join(base: &Url, path: &[&str]) -> Url {
    let mut url = base.clone();
    url.set_query(None);
    if let Ok(mut segments) = url.path_segments_mut() {
        segments.pop_if_empty().extend(path);
    }
    url
}

/// Words for a request that got no answer; the innermost cause is the useful one.
fn transport_error(e: reqwest::Error, base: &Url, what: &str) -> anyhow::Error {
    let mut cause: &dyn std::error::Error = &e;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    let cause = cause.to_string();
    if e.is_connect() || e.is_timeout() {
        Unreachable {
            url: base.to_string(),
            cause,
        }
        .into()
    } else {
        anyhow::anyhow!("{what} to {base} failed: {cause}")
    }
}

/// `taskbox RESOURCE list`: `GET /v1/RESOURCE`; the answer as it came
/// (`--json`), or read as the API's list type `L`, whose items `items`
/// takes out and `table` shows (or `empty` on stderr when there is none).
pub fn list<L: serde::de::DeserializeOwned, I>(
    server: &ServerArgs,
    resource: &str,
    json: bool,
    empty: &str,
    items: impl FnOnce(L) -> Vec<I>,
    table: impl Fn(&[I]) -> super::table::Table,
) -> anyhow::Result<std::process::ExitCode> {
    let reply = Client::new(server)?
        .get(&["v1", resource])
        .send()
        .map_err(|e| older_server(e, resource))?;
    if json {
        reply.print()?;
    } else {
        let all = items(reply.view()?);
        if all.is_empty() {
            eprintln!("{empty}");
        } else {
            table(&all).print();
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// A 404 for the route itself (no error code) is a server from before
/// `what` (webhooks, schedules, …): say so, and what to do.
pub fn older_server(e: anyhow::Error, what: &str) -> anyhow::Error {
    if e.downcast_ref::<ApiError>()
        .is_some_and(|a| a.status == 404 && a.code.is_none())
    {
        e.context(format!(
            "this server has no {what} (404): it is older than this taskbox; upgrade it"
        ))
    } else {
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn invalid_input_details_read_as_lines() {
        let body = json!({"error": {"code": "JOB_INVALID_INPUT", "message": "the input does not match the task's schema",
            "details": [{"pointer": "/width", "message": "\"x\" is not of type \"integer\""},
                        {"pointer": "", "message": "\"height\" is a required property"}]}});
        let e = ApiError::from_body(400, body.to_string().as_bytes());
        assert_eq!(
            e.to_string(),
            "JOB_INVALID_INPUT (400): the input does not match the task's schema\n  \
             /width: \"x\" is not of type \"integer\"\n  (the input): \"height\" is a required property"
        );
    }

    #[test]
    fn other_details_are_compact_json() {
        let body = json!({"error": {"code": "CONFLICT", "message": "unique key taken", "details": {"job": "01J"}}});
        let e = ApiError::from_body(409, body.to_string().as_bytes());
        assert_eq!(
            e.to_string(),
            "CONFLICT (409): unique key taken\n  details: {\"job\":\"01J\"}"
        );
        let body = json!({"error": {"code": "TASK_NOT_FOUND", "message": "no task resize"}});
        let e = ApiError::from_body(404, body.to_string().as_bytes());
        assert_eq!(e.to_string(), "TASK_NOT_FOUND (404): no task resize");
        assert!(!e.is_transient());
    }

    #[test]
    fn bodies_of_another_shape_still_say_something() {
        let e = ApiError::from_body(502, b"<html>bad gateway</html>\n<body>...</body>");
        assert_eq!(e.code, None);
        assert_eq!(
            e.to_string(),
            "HTTP 502 Bad Gateway: <html>bad gateway</html>…"
        );
        assert!(e.is_transient());
        let e = ApiError::from_body(500, b"");
        assert_eq!(
            e.to_string(),
            "HTTP 500 Internal Server Error: the server gave no explanation"
        );
    }

    #[test]
    fn refused_token_hints_at_the_variable() {
        let body = json!({"error": {"code": "UNAUTHENTICATED", "message": "bad token"}});
        let e = ApiError::from_body(401, body.to_string().as_bytes());
        assert!(e.to_string().contains("check TASKBOX_TOKEN"));
    }

    #[test]
    fn base_urls() -> anyhow::Result<()> {
        assert_eq!(
            base_url("localhost:8080")?.as_str(),
            "http://localhost:8080/"
        );
        assert_eq!(
            join(&base_url("http://h:1/prefix/")?, &["v1", "tasks", "a b/c"]).as_str(),
            "http://h:1/prefix/v1/tasks/a%20b%2Fc"
        );
        assert_eq!(
            join(&base_url("http://h:1")?, &["v1", "jobs"]).as_str(),
            "http://h:1/v1/jobs"
        );
        assert!(base_url("https://h")
            .unwrap_err()
            .to_string()
            .contains("plain http"));
        Ok(())
    }

    #[test]
    fn server_flags_clash_with_no_subcommand_flag() {
        use clap::CommandFactory;
        // clap checks duplicate flags only when a command is built; build them all.
        crate::cli::Cli::command().debug_assert();
    }

    #[test]
    fn a_missing_token_says_what_to_set() {
        let args = ServerArgs {
            url: "http://127.0.0.1:1".into(),
            token: None,
            tenant: None,
        };
        let err = Client::new(&args).err().map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("set TASKBOX_TOKEN")));
    }

    #[test]
    fn a_closed_port_names_the_url() {
        // Port 1 on loopback: nothing listens there in a test environment.
        let args = ServerArgs {
            url: "http://127.0.0.1:1".into(),
            token: Some("t".into()),
            tenant: None,
        };
        let client = Client::new(&args).expect("flags are valid");
        let err = client
            .get(&["v1", "tasks"])
            .send()
            .expect_err("nothing listens");
        let text = err.to_string();
        assert!(err.downcast_ref::<Unreachable>().is_some(), "{text}");
        assert!(text.contains("http://127.0.0.1:1/"), "{text}");
        assert!(text.contains("taskbox serve"), "{text}");
    }
}
