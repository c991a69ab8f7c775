//! The connection: where the server is, who asks, and one request at a time
//! sent and read, its error answers and lost answers told apart.

use crate::error::{ApiError, Error, Unreachable};
use reqwest::header::{HeaderValue, ACCEPT, CONTENT_TYPE, RETRY_AFTER};
use reqwest::Method;
use serde_json::Value;
use std::time::Duration;
use url::Url;

/// The server `from_env` talks to when `TASKBOX_URL` is not set.
pub const DEFAULT_URL: &str = "http://127.0.0.1:8080";

/// A taskbox server, and the token (and tenant) to ask it with. Cheap to
/// clone: clones share one connection pool.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    base: Url,
    token: String,
    tenant: Option<String>,
}

/// How a [`Client`] is set up.
#[derive(Debug)]
pub struct ClientBuilder {
    url: String,
    token: Option<String>,
    tenant: Option<String>,
    http: Option<reqwest::ClientBuilder>,
    user_agent: String,
}

impl ClientBuilder {
    /// The settings of [`Client::from_env`], to change before building.
    pub fn from_env() -> ClientBuilder {
        let var = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
        let mut builder = Client::builder(
            var("TASKBOX_URL").unwrap_or_else(|| DEFAULT_URL.to_owned()),
            var("TASKBOX_TOKEN"),
        );
        if let Some(tenant) = var("TASKBOX_TENANT") {
            builder = builder.tenant(tenant);
        }
        builder
    }

    /// Acts in this tenant (the admin token only; other tokens belong to one tenant).
    pub fn tenant(mut self, tenant: impl Into<String>) -> Self {
        self.tenant = Some(tenant.into()).filter(|t: &String| !t.is_empty());
        self
    }

    /// Sends this `User-Agent` (default `taskbox-client/VERSION`).
    pub fn user_agent(mut self, agent: impl Into<String>) -> Self {
        self.user_agent = agent.into();
        self
    }

    /// Builds on this reqwest builder (a proxy, other timeouts, your own TLS
    /// provider). Without it, the client installs rustls's ring provider
    /// as the process default, unless another one is there already.
    pub fn http(mut self, builder: reqwest::ClientBuilder) -> Self {
        self.http = Some(builder);
        self
    }

    /// Checks the settings; nothing is sent yet.
    pub fn build(self) -> Result<Client, Error> {
        let base = base_url(&self.url)?;
        let token =
            match self.token.as_deref().map(str::trim) {
                Some(t) if !t.is_empty() => t.to_owned(),
                _ => return Err(Error::Config(
                    "no token: set TASKBOX_TOKEN (or pass --token); `taskbox serve` prints the \
                     admin token at its first start, and `taskbox token create` mints others"
                        .into(),
                )),
            };
        if HeaderValue::from_str(&token).is_err() {
            return Err(Error::Config(
                "the token has characters that cannot go in an HTTP header".into(),
            ));
        }
        if let Some(t) = &self.tenant {
            if HeaderValue::from_str(t).is_err() {
                return Err(Error::Config(format!(
                    "the tenant name {t:?} has characters that cannot go in an HTTP header"
                )));
            }
        }
        let http = self
            .http
            .unwrap_or_else(default_http)
            .user_agent(self.user_agent)
            // No overall timeout: a `?wait=true` run legitimately waits as long as the job runs.
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| Error::Config(format!("cannot set up the HTTP client: {e}")))?;
        Ok(Client {
            http,
            base,
            token,
            tenant: self.tenant,
        })
    }
}

/// A reqwest builder with a TLS provider installed: reqwest (built without
/// one of its own) refuses to build a client before.
fn default_http() -> reqwest::ClientBuilder {
    static PROVIDER: std::sync::Once = std::sync::Once::new();
    PROVIDER.call_once(|| {
        // Another provider installed first (the application's) serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    #[allow(clippy::disallowed_methods)] // this crate's one client builder, provider installed
    reqwest::Client::builder()
}

impl Client {
    /// Starts setting up a client of the server at `url` (`http://host:port`,
    /// or `https://` behind a TLS proxy; `host:port` alone means http).
    pub fn builder(url: impl Into<String>, token: Option<String>) -> ClientBuilder {
        ClientBuilder {
            url: url.into(),
            token,
            tenant: None,
            http: None,
            user_agent: concat!("taskbox-client/", env!("CARGO_PKG_VERSION")).to_owned(),
        }
    }

    /// A client of the server at `url`, asking with `token`.
    pub fn new(url: &str, token: &str) -> Result<Client, Error> {
        Client::builder(url, Some(token.to_owned())).build()
    }

    /// A client set up as the CLI is: `TASKBOX_URL` (default
    /// `http://127.0.0.1:8080`), `TASKBOX_TOKEN`, and `TASKBOX_TENANT` if set.
    pub fn from_env() -> Result<Client, Error> {
        ClientBuilder::from_env().build()
    }

    /// The server's base URL.
    pub fn url(&self) -> &Url {
        &self.base
    }

    /// This client without its `Taskbox-Tenant` header, for requests that
    /// name their tenant in the path or body (the admin's tenant routes).
    pub fn without_tenant(mut self) -> Client {
        self.tenant = None;
        self
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
}

/// A successful answer: its status (e.g. 201 against 200) and its body as
/// sent (empty, or JSON: checked when it came).
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: bytes::Bytes,
    /// `METHOD /path`, to name the request in an error.
    what: String,
}

impl Reply {
    /// The body as `T`. Borrowing types (`Cow`, `&str`) read without a copy.
    pub fn json<'a, T: serde::Deserialize<'a>>(&'a self) -> Result<T, Error> {
        serde_json::from_slice(&self.body).map_err(|source| Error::Decode {
            what: self.what.clone(),
            status: self.status,
            source,
        })
    }
}

/// What a request carries.
#[derive(Debug)]
enum Body {
    None,
    Json(Value),
    Wasm(Vec<u8>),
}

/// One request being built; [`Call::send`] runs it to its answer.
#[derive(Debug)]
pub struct Call<'a> {
    client: &'a Client,
    method: Method,
    url: Url,
    headers: Vec<(&'static str, String)>,
    body: Body,
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
    fn build(self, accept: &str) -> Result<(reqwest::RequestBuilder, String), Error> {
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
                return Err(Error::Config(format!(
                    "the {name} value {value:?} has characters that cannot go in an HTTP header"
                )));
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
    /// read (`Response::chunk`). A non-2xx answer is an [`Error::Api`], no
    /// answer an [`Error::Unreachable`], as with [`Call::send`].
    pub async fn open(self) -> Result<reqwest::Response, Error> {
        let client = self.client;
        let (req, what) = self.build("text/event-stream")?;
        let resp = req
            .send()
            .await
            .map_err(|e| transport_error(e, &client.base, &what))?;
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            let retry_after = retry_after(&resp);
            let body = resp
                .bytes()
                .await
                .map_err(|e| transport_error(e, &client.base, &what))?;
            return Err(ApiError::from_body(status, &body)
                .with_retry_after(retry_after.as_deref())
                .into());
        }
        Ok(resp)
    }

    /// Sends the request; a non-2xx answer is an [`Error::Api`], no answer an [`Error::Unreachable`].
    pub async fn send(self) -> Result<Reply, Error> {
        let client = self.client;
        let (req, what) = self.build("application/json")?;
        let resp = req
            .send()
            .await
            .map_err(|e| transport_error(e, &client.base, &what))?;
        let status = resp.status().as_u16();
        let retry_after = retry_after(&resp);
        let body = resp
            .bytes()
            .await
            .map_err(|e| transport_error(e, &client.base, &what))?;
        if !(200..300).contains(&status) {
            return Err(ApiError::from_body(status, &body)
                .with_retry_after(retry_after.as_deref())
                .into());
        }
        // Checked here, so that a body that is not JSON is told as such
        // (not as a type it does not fit), whoever reads it.
        if !body.iter().all(u8::is_ascii_whitespace)
            && serde_json::from_slice::<serde::de::IgnoredAny>(&body).is_err()
        {
            return Err(Error::NotJson {
                what,
                status,
                base: client.base.to_string(),
            });
        }
        Ok(Reply { status, body, what })
    }
}

fn retry_after(resp: &reqwest::Response) -> Option<String> {
    resp.headers()
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// Parses the base URL; `host:port` alone means plain http.
fn base_url(text: &str) -> Result<Url, Error> {
    let text = text.trim();
    let with_scheme = if text.contains("://") {
        text.to_owned()
    } else {
        format!("http://{text}")
    };
    let bad = |why: &str| {
        Error::Config(format!(
            "the server URL {text:?} (TASKBOX_URL or --url) {why}; use http://host:port"
        ))
    };
    let url = Url::parse(&with_scheme).map_err(|e| bad(&format!("is not a URL ({e})")))?;
    match url.scheme() {
        "http" | "https" => {}
        other => return Err(bad(&format!("has scheme {other:?}"))),
    }
    if url.cannot_be_a_base() || url.host().is_none() {
        return Err(bad("has no host"));
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
fn transport_error(e: reqwest::Error, base: &Url, what: &str) -> Error {
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
        Error::Transport {
            what: what.to_owned(),
            base: base.to_string(),
            cause,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls() -> Result<(), Error> {
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
        // A TLS-terminating proxy in front of the server.
        assert_eq!(
            base_url("https://tasks.example")?.as_str(),
            "https://tasks.example/"
        );
        let refused = base_url("ftp://h").unwrap_err().to_string();
        assert!(refused.contains("\"ftp\""), "{refused}");
        let refused = base_url("http://").unwrap_err().to_string();
        assert!(refused.contains("TASKBOX_URL"), "{refused}");
        Ok(())
    }

    #[test]
    fn a_missing_or_unsendable_token_is_refused_before_anything_is_sent() {
        let no_token = Client::builder("http://127.0.0.1:1", None).build();
        assert!(no_token
            .unwrap_err()
            .to_string()
            .contains("set TASKBOX_TOKEN"));
        let blank = Client::new("http://127.0.0.1:1", "  ").unwrap_err();
        assert!(blank.to_string().contains("no token"));
        let newline = Client::new("http://127.0.0.1:1", "a\nb").unwrap_err();
        assert!(newline.to_string().contains("HTTP header"));
        let tenant = Client::builder("http://127.0.0.1:1", Some("t".into()))
            .tenant("a\u{7f}b")
            .build()
            .unwrap_err();
        assert!(tenant.to_string().contains("tenant name"));
    }

    #[tokio::test]
    async fn a_closed_port_names_the_url() {
        // Port 1 on loopback: nothing listens there in a test environment.
        let client = Client::new("http://127.0.0.1:1", "t").expect("settings are valid");
        let err = client
            .get(&["v1", "tasks"])
            .send()
            .await
            .expect_err("nothing listens");
        assert!(matches!(err, Error::Unreachable(_)), "{err:?}");
        assert!(err.is_transient());
        let text = err.to_string();
        assert!(text.contains("http://127.0.0.1:1/"), "{text}");
        assert!(text.contains("taskbox serve"), "{text}");
    }
}
