//! Tasks, typed: upload a component, define a task version on it, roll a
//! version out beside the live one.

use crate::client::Client;
use crate::error::Error;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A stored component, as `POST /v1/components` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Component {
    /// `sha256:` and the hex of its bytes' sha256: what a task names.
    pub digest: String,
    /// Bytes.
    pub size: u64,
    /// `task` (the WIT world) or `command` (a preview-1 command).
    pub abi: String,
    /// False when the server held these bytes already (it answered 200, not 201).
    #[serde(default = "yes", skip_serializing)]
    pub new: bool,
}

fn yes() -> bool {
    true
}

/// The body of `PUT /v1/tasks/{name}`: the component and the settings
/// most tasks set, plus `more` for the rest (`limits`, `retry`, `network`,
/// `secrets`, `concurrency`, `on_success`, …; DESIGN §4 lists them).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TaskDefinition {
    pub component: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    #[serde(flatten)]
    pub more: Map<String, Value>,
}

impl TaskDefinition {
    /// A definition on this component digest, every setting the server's default.
    pub fn of(component: impl Into<String>) -> TaskDefinition {
        TaskDefinition {
            component: component.into(),
            ..TaskDefinition::default()
        }
    }
}

/// A task version, as its definition made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskDefined {
    pub name: String,
    pub version: u32,
    pub digest: String,
    /// Set when the version was staged (`"rollout": {"percent": P}` in
    /// the definition's `more`): the share of new jobs it gets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout_percent: Option<u8>,
}

/// A task as `GET /v1/tasks/{name}` shows it: its live version, and the
/// rollout of a staged one; `more` holds the rest (its definition, its
/// versions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub name: String,
    /// The live version: what new jobs pin outside a rollout's share.
    pub version: u32,
    pub digest: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<Rollout>,
    #[serde(flatten)]
    pub more: Map<String, Value>,
}

/// A version being rolled out beside the live one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rollout {
    /// The staged version.
    pub version: u32,
    pub live_version: u32,
    /// The share of new jobs that pins the staged version, 0 to 100.
    pub percent: u8,
    pub started_at: String,
    /// The staged version's figures, then the live one's, over the jobs
    /// made since the rollout began.
    pub figures: Vec<VersionFigures>,
}

/// What one version did since a rollout began.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionFigures {
    pub version: u32,
    pub completed: u64,
    pub failed: u64,
    pub attempts: u64,
    pub fuel: u64,
}

impl Client {
    /// Stores a component (a `.wasm` file's bytes); the server checks it
    /// and compiles it before it answers.
    pub async fn upload_component(&self, wasm: Vec<u8>) -> Result<Component, Error> {
        let reply = self.post(&["v1", "components"]).wasm(wasm).send().await?;
        let mut component: Component = reply.json()?;
        component.new = reply.status == 201;
        Ok(component)
    }

    /// Defines the next version of task `name`; jobs enqueued from now on run it.
    pub async fn define_task(
        &self,
        name: &str,
        definition: &TaskDefinition,
    ) -> Result<TaskDefined, Error> {
        let body = serde_json::to_value(definition)
            .map_err(|e| Error::Config(format!("the definition cannot be written as JSON: {e}")))?;
        self.put(&["v1", "tasks", name])
            .json(body)
            .send()
            .await?
            .json()
    }

    /// Task `name`: its live version and a rollout in progress.
    pub async fn task(&self, name: &str) -> Result<Task, Error> {
        self.get(&["v1", "tasks", name]).send().await?.json()
    }

    /// Sets the share of new jobs that pins task `name`'s staged version.
    pub async fn set_rollout(&self, name: &str, percent: u8) -> Result<Task, Error> {
        self.post(&["v1", "tasks", name, "rollout"])
            .json(serde_json::json!({ "percent": percent }))
            .send()
            .await?
            .json()
    }

    /// Makes task `name`'s staged version the live one.
    pub async fn promote_task(&self, name: &str) -> Result<Task, Error> {
        self.post(&["v1", "tasks", name, "promote"])
            .send()
            .await?
            .json()
    }

    /// Drops task `name`'s staged version; jobs pinned to it still run it.
    pub async fn rollback_task(&self, name: &str) -> Result<Task, Error> {
        self.post(&["v1", "tasks", name, "rollback"])
            .send()
            .await?
            .json()
    }

    /// Uploads the component and defines task `name` on it: what `taskbox
    /// task push` does with a built `.wasm`. `definition.component` is set
    /// to the upload's digest.
    pub async fn push_task(
        &self,
        name: &str,
        wasm: Vec<u8>,
        mut definition: TaskDefinition,
    ) -> Result<(Component, TaskDefined), Error> {
        let component = self.upload_component(wasm).await?;
        definition.component.clone_from(&component.digest);
        let defined = self.define_task(name, &definition).await?;
        Ok((component, defined))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_task_reads_its_rollout() {
        let task: Task = serde_json::from_value(json!({
            "name": "invoice", "version": 3, "digest": "sha256:a",
            "created_at": "2026-01-01T00:00:00.000Z", "definition": {}, "versions": [],
            "rollout": {"version": 4, "live_version": 3, "percent": 10,
                        "started_at": "2026-01-01T00:00:00.000Z",
                        "figures": [{"version": 4, "completed": 1, "failed": 0, "attempts": 1, "fuel": 9},
                                    {"version": 3, "completed": 9, "failed": 1, "attempts": 11, "fuel": 99}]}
        }))
        .unwrap();
        let r = task.rollout.unwrap();
        assert_eq!((r.version, r.percent, r.figures[1].failed), (4, 10, 1));
        assert!(task.more.contains_key("versions"));
        let defined: TaskDefined =
            serde_json::from_value(json!({"name": "t", "version": 1, "digest": "d"})).unwrap();
        assert_eq!(defined.rollout_percent, None);
    }

    #[test]
    fn a_definition_sends_what_was_set_and_the_rest_as_given() {
        let mut def = TaskDefinition::of("sha256:ab");
        def.queue = Some("images".into());
        def.more
            .insert("limits".into(), json!({"timeout_ms": 5000}));
        assert_eq!(
            serde_json::to_value(&def).unwrap(),
            json!({"component": "sha256:ab", "queue": "images", "limits": {"timeout_ms": 5000}})
        );
    }
}
