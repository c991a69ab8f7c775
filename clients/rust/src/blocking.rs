//! The same client for code that does not run async: each call blocks on a
//! small runtime of its own (do not use it inside an async runtime).

use crate::client::{self, ClientBuilder, Reply};
use crate::error::Error;
use crate::jobs::{EnqueueOptions, Job, JobSpec, WaitOptions};
use crate::tasks::{Component, Task, TaskDefined, TaskDefinition};
use serde_json::Value;
use std::future::Future;
use std::time::Duration;

/// A [`crate::Client`] with the runtime its requests run on.
#[derive(Debug)]
pub struct Client {
    rt: tokio::runtime::Runtime,
    inner: client::Client,
}

impl Client {
    /// Builds the client as `builder` says, inside its own runtime.
    pub fn build(builder: ClientBuilder) -> Result<Client, Error> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Config(format!("cannot start the async runtime: {e}")))?;
        let inner = {
            let _in_runtime = rt.enter();
            builder.build()?
        };
        Ok(Client { rt, inner })
    }

    /// A client of the server at `url`, asking with `token`.
    pub fn new(url: &str, token: &str) -> Result<Client, Error> {
        Client::build(client::Client::builder(url, Some(token.to_owned())))
    }

    /// As [`crate::Client::from_env`].
    pub fn from_env() -> Result<Client, Error> {
        Client::build(ClientBuilder::from_env())
    }

    /// The async client underneath.
    pub fn inner(&self) -> &client::Client {
        &self.inner
    }

    /// As [`crate::Client::without_tenant`].
    pub fn without_tenant(self) -> Client {
        Client {
            rt: self.rt,
            inner: self.inner.without_tenant(),
        }
    }

    /// Runs a future on this client's runtime: what reads a stream [`Call::open`] opened.
    pub fn block_on<F: Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    /// Sleeps on this thread, between requests.
    pub fn pause(&self, d: Duration) {
        std::thread::sleep(d);
    }

    pub fn get(&self, path: &[&str]) -> Call<'_> {
        self.wrap(self.inner.get(path))
    }

    pub fn post(&self, path: &[&str]) -> Call<'_> {
        self.wrap(self.inner.post(path))
    }

    pub fn put(&self, path: &[&str]) -> Call<'_> {
        self.wrap(self.inner.put(path))
    }

    pub fn delete(&self, path: &[&str]) -> Call<'_> {
        self.wrap(self.inner.delete(path))
    }

    fn wrap<'a>(&'a self, inner: client::Call<'a>) -> Call<'a> {
        Call {
            rt: &self.rt,
            inner,
        }
    }

    /// As [`crate::Client::enqueue`].
    pub fn enqueue(&self, spec: &JobSpec) -> Result<Job, Error> {
        self.block_on(self.inner.enqueue(spec))
    }

    /// As [`crate::Client::enqueue_with`].
    pub fn enqueue_with(&self, spec: &JobSpec, options: &EnqueueOptions<'_>) -> Result<Job, Error> {
        self.block_on(self.inner.enqueue_with(spec, options))
    }

    /// As [`crate::Client::job`].
    pub fn job(&self, id: &str) -> Result<Job, Error> {
        self.block_on(self.inner.job(id))
    }

    /// As [`crate::Client::cancel_job`].
    pub fn cancel_job(&self, id: &str) -> Result<Job, Error> {
        self.block_on(self.inner.cancel_job(id))
    }

    /// As [`crate::Client::wait_for_job`].
    pub fn wait_for_job(&self, id: &str, options: &WaitOptions) -> Result<Job, Error> {
        self.block_on(self.inner.wait_for_job(id, options))
    }

    /// As [`crate::Client::upload_component`].
    pub fn upload_component(&self, wasm: Vec<u8>) -> Result<Component, Error> {
        self.block_on(self.inner.upload_component(wasm))
    }

    /// As [`crate::Client::define_task`].
    pub fn define_task(&self, name: &str, def: &TaskDefinition) -> Result<TaskDefined, Error> {
        self.block_on(self.inner.define_task(name, def))
    }

    /// As [`crate::Client::task`].
    pub fn task(&self, name: &str) -> Result<Task, Error> {
        self.block_on(self.inner.task(name))
    }

    /// As [`crate::Client::set_rollout`].
    pub fn set_rollout(&self, name: &str, percent: u8) -> Result<Task, Error> {
        self.block_on(self.inner.set_rollout(name, percent))
    }

    /// As [`crate::Client::promote_task`].
    pub fn promote_task(&self, name: &str) -> Result<Task, Error> {
        self.block_on(self.inner.promote_task(name))
    }

    /// As [`crate::Client::rollback_task`].
    pub fn rollback_task(&self, name: &str) -> Result<Task, Error> {
        self.block_on(self.inner.rollback_task(name))
    }
}

/// One request being built; [`Call::send`] blocks until its answer.
#[derive(Debug)]
pub struct Call<'a> {
    rt: &'a tokio::runtime::Runtime,
    inner: client::Call<'a>,
}

impl<'a> Call<'a> {
    /// Adds `key=value` to the query when there is a value.
    pub fn query(self, key: &str, value: Option<impl ToString>) -> Self {
        Call {
            inner: self.inner.query(key, value),
            ..self
        }
    }

    /// Adds a request header.
    pub fn header(self, name: &'static str, value: impl Into<String>) -> Self {
        Call {
            inner: self.inner.header(name, value),
            ..self
        }
    }

    /// Sends this JSON as the body.
    pub fn json(self, body: Value) -> Self {
        Call {
            inner: self.inner.json(body),
            ..self
        }
    }

    /// Sends these bytes as an `application/wasm` body.
    pub fn wasm(self, bytes: Vec<u8>) -> Self {
        Call {
            inner: self.inner.wasm(bytes),
            ..self
        }
    }

    /// Sends the request and waits for its answer.
    pub fn send(self) -> Result<Reply, Error> {
        self.rt.block_on(self.inner.send())
    }

    /// As [`client::Call::open`]: to be awaited in [`Client::block_on`].
    pub async fn open(self) -> Result<reqwest::Response, Error> {
        self.inner.open().await
    }
}
