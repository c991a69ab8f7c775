//! An in-process server for API tests: the real `App` (store, runner,
//! rescuer) on a temporary data dir, called through its router.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::Duration;
use taskbox::app::App;
use taskbox::config::ServeConfig;
use taskbox::runner::decision::AttemptRules;
use tower::ServiceExt;

pub const ADMIN: &str = "admin-token-for-the-tests";

pub struct TestServer {
    pub app: Option<App>,
    pub router: axum::Router,
    _dir: tempfile::TempDir,
}

/// The settings a test server starts with.
pub fn config(dir: &std::path::Path, runners: usize) -> ServeConfig {
    ServeConfig {
        runners,
        admin_token: Some(ADMIN.into()),
        max_instances: 16,
        compile_cache: Some(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts"),
        ),
        // Short snoozes, so that tests of them do not wait a second each.
        rules: AttemptRules {
            snooze_floor_ms: 1,
            ..AttemptRules::default()
        },
        // Compiles run in children of the real binary, as a server's do.
        compile: taskbox::config::CompileSettings {
            exe: Some(PathBuf::from(env!("CARGO_BIN_EXE_taskbox"))),
            ..Default::default()
        },
        ..ServeConfig::embedded(
            dir,
            format!("sqlite://{}", dir.join("taskbox.db").display()),
        )
    }
}

impl TestServer {
    /// Runs `run` on a server on SQLite, then on one on a fresh PostgreSQL
    /// database (skipped when none answers and this is not CI).
    pub async fn each_backend(runners: usize, run: impl AsyncFn(TestServer)) {
        Self::each_backend_with(runners, |_| {}, run).await
    }

    /// [`each_backend`](Self::each_backend), each server's settings
    /// `tweak`ed.
    pub async fn each_backend_with(
        runners: usize,
        tweak: impl Fn(&mut ServeConfig),
        run: impl AsyncFn(TestServer),
    ) {
        run(TestServer::start_with(runners, &tweak).await).await;
        let Some(db) = crate::store_pg::test_db().await else {
            return;
        };
        let url = db.url.clone();
        run(TestServer::start_with(runners, move |c| {
            tweak(c);
            c.database_url = url
        })
        .await)
        .await;
        drop(db);
    }

    pub async fn start(runners: usize) -> TestServer {
        Self::start_with(runners, |_| {}).await
    }

    pub async fn start_with(runners: usize, tweak: impl FnOnce(&mut ServeConfig)) -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config(dir.path(), runners);
        tweak(&mut cfg);
        let app = App::start(cfg).await.expect("the server starts").app;
        let router = taskbox::api::router(app.state.clone());
        TestServer {
            app: Some(app),
            router,
            _dir: dir,
        }
    }

    /// Stops the server and starts another on the same data dir.
    pub async fn restart(self, runners: usize) -> TestServer {
        self.restart_with(runners, |_| {}).await
    }

    /// Stops the server and starts another on the same data dir, with
    /// `tweak`ed settings.
    pub async fn restart_with(
        mut self,
        runners: usize,
        tweak: impl FnOnce(&mut ServeConfig),
    ) -> TestServer {
        if let Some(app) = self.app.take() {
            app.stop().await;
        }
        let mut cfg = config(self._dir.path(), runners);
        tweak(&mut cfg);
        let app = App::start(cfg).await.expect("the server starts again").app;
        self.router = taskbox::api::router(app.state.clone());
        self.app = Some(app);
        self
    }

    /// The data dir.
    pub fn dir(&self) -> &std::path::Path {
        self._dir.path()
    }

    pub async fn stop(mut self) {
        if let Some(app) = self.app.take() {
            app.stop().await;
        }
    }

    /// One request; answers the status and the JSON body (Null if none).
    pub async fn raw(&self, req: Request<Body>) -> (StatusCode, Value) {
        let resp = self.router.clone().oneshot(req).await.unwrap();
        let status = resp.status();
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&bytes)))
        };
        (status, body)
    }

    /// `GET /metrics` as the admin scrapes it: the text.
    pub async fn metrics_text(&self) -> String {
        let req = Request::get("/metrics")
            .header("authorization", format!("Bearer {ADMIN}"))
            .body(Body::empty())
            .unwrap();
        let resp = self.router.clone().oneshot(req).await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    pub async fn call(
        &self,
        method: Method,
        path: &str,
        token: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut req = Request::builder().method(method).uri(path);
        if !token.is_empty() {
            req = req.header("authorization", format!("Bearer {token}"));
        }
        let body = match body {
            Some(v) => Body::from(v.to_string()),
            None => Body::empty(),
        };
        self.raw(req.body(body).unwrap()).await
    }

    pub async fn get(&self, path: &str, token: &str) -> (StatusCode, Value) {
        self.call(Method::GET, path, token, None).await
    }

    pub async fn post(&self, path: &str, token: &str, body: Value) -> (StatusCode, Value) {
        self.call(Method::POST, path, token, Some(body)).await
    }

    /// Uploads a built guest; its digest.
    pub async fn upload(&self, token: &str, guest: &str) -> String {
        let req = Request::post("/v1/components")
            .header("authorization", format!("Bearer {token}"))
            .body(Body::from(crate::common::guest(guest)))
            .unwrap();
        let (status, body) = self.raw(req).await;
        assert!(status.is_success(), "{status} {body}");
        body["digest"].as_str().unwrap().to_owned()
    }

    /// Uploads `guest` and defines task `name` on it; `extra` adds fields.
    pub async fn task(&self, token: &str, name: &str, guest: &str, extra: Value) -> Value {
        let digest = self.upload(token, guest).await;
        let mut spec = json!({"component": digest});
        if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
            s.extend(e.clone());
        }
        let (status, body) = self
            .call(Method::PUT, &format!("/v1/tasks/{name}"), token, Some(spec))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body
    }

    /// Enqueues and expects 201; the job.
    pub async fn enqueue(&self, token: &str, body: Value) -> Value {
        let (status, job) = self.post("/v1/jobs", token, body).await;
        assert_eq!(status, StatusCode::CREATED, "{job}");
        job
    }

    /// Polls the job until `done` holds (or panics after 30 s).
    pub async fn until(&self, token: &str, id: &str, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let (status, job) = self.get(&format!("/v1/jobs/{id}"), token).await;
            assert_eq!(status, StatusCode::OK, "{job}");
            if done(&job) {
                return job;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "job never got there: {job:#}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Polls until the job has ended (completed, failed or cancelled).
    pub async fn finished(&self, token: &str, id: &str) -> Value {
        self.until(token, id, |j| {
            matches!(
                j["status"].as_str(),
                Some("completed" | "failed" | "cancelled")
            )
        })
        .await
    }

    pub async fn attempts(&self, token: &str, id: &str) -> Vec<Value> {
        let (status, body) = self.get(&format!("/v1/jobs/{id}/attempts"), token).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body["attempts"].as_array().unwrap().clone()
    }

    /// A tenant and a token for it with these scopes.
    pub async fn tenant(&self, name: &str, scopes: &[&str]) -> String {
        let (status, body) = self.post("/v1/tenants", ADMIN, json!({"name": name})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        self.token(name, scopes).await
    }

    pub async fn token(&self, tenant: &str, scopes: &[&str]) -> String {
        let (status, body) = self
            .post(
                "/v1/tokens",
                ADMIN,
                json!({"tenant": tenant, "scopes": scopes}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["token"].as_str().unwrap().to_owned()
    }
}

/// Every scope a tenant token can have.
pub const ALL_SCOPES: &[&str] = &[
    "tasks:write",
    "jobs:queue",
    "jobs:run",
    "jobs:cancel",
    "jobs:read",
    "webhooks:write",
    "secrets:write",
];
