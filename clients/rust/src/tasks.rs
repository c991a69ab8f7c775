//! Tasks, typed: upload a component, define a task version on it.

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
