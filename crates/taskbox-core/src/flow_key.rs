//! What a throttle and a debounce declaration share: a key that a job's
//! input fills in, as a concurrency key's is, and limits checked alike, so
//! that a task's definition and an enqueue read each of them one way.

/// A flow-control declaration of a task or a job, keyed by its input.
pub trait FlowKey: Clone {
    /// What a task or a job calls it (`throttle`, `debounce`).
    const FIELD: &'static str;
    /// The key as declared: text, a `{field}` template or a JSON pointer.
    fn key(&self) -> &str;
    /// What is wrong with its limits, in words a user can act on.
    fn problems(&self) -> Vec<String>;
    /// Itself, with the key made from a job's input.
    fn with_key(self, key: String) -> Self;
}

impl FlowKey for crate::throttle::Throttle {
    const FIELD: &'static str = "throttle";
    fn key(&self) -> &str {
        &self.key
    }
    fn problems(&self) -> Vec<String> {
        crate::throttle::Throttle::problems(self)
    }
    fn with_key(self, key: String) -> Self {
        Self { key, ..self }
    }
}

impl FlowKey for crate::debounce::Debounce {
    const FIELD: &'static str = "debounce";
    fn key(&self) -> &str {
        &self.key
    }
    fn problems(&self) -> Vec<String> {
        crate::debounce::Debounce::problems(self)
    }
    fn with_key(self, key: String) -> Self {
        Self { key, ..self }
    }
}
