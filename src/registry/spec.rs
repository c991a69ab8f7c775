//! A task definition as `PUT /v1/tasks/{name}` takes it (DESIGN §3.4), and
//! the checks that come before it becomes a version: names, limits, the retry
//! policy, and fallback chains without cycles.

use crate::digest::Digest;
use crate::retry::RetryPolicy;
use serde::{Deserialize, Serialize};

// Parts of a definition that other layers keep; below them all.
pub use crate::limits_spec::LimitsSpec;
pub use crate::parent_close::ParentClose;

/// Longest task or queue name.
pub const MAX_NAME_LEN: usize = 64;

/// The body of `PUT /v1/tasks/{name}`. Unknown fields are refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// The component's digest, as `POST /v1/components` answered it.
    #[schema(value_type = String, example = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")]
    pub component: Digest,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<serde_json::Value>,
    /// The queue its jobs go to unless the enqueue names one (default `default`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::strict::optional_object"
    )]
    pub limits: Option<LimitsSpec>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::strict::optional_object"
    )]
    pub retry: Option<RetryPolicy>,
    /// The task that runs when a job of this one fails for good.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// A task enqueued when a job of this one completes, on
    /// `{"job": {…}, "output": …}`, in the same transaction as the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_success: Option<String>,
    /// A task enqueued when a job of this one fails for good, on
    /// `{"job": {…}, "error": {…}}`, in the same transaction as the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_fail: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::strict::optional_object"
    )]
    pub concurrency: Option<Concurrency>,
    /// At most `limit` of its jobs with one key start in any `period_ms`;
    /// the rest wait their turn, in order (a job may declare its own).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::strict::optional_object"
    )]
    pub throttle: Option<crate::store::throttle::Throttle>,
    /// A job enqueued while another of its key is pending replaces it, and
    /// runs `period_ms` after the last enqueue but never later than
    /// `max_wait_ms` after the first (a job may declare its own).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::strict::optional_object"
    )]
    pub debounce: Option<crate::store::debounce::Debounce>,
    /// Bounds a job across all its attempts, from enqueue (`deadline_exceeded`);
    /// an enqueue may set its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<u64>,
    /// What becomes of the unfinished child jobs a job of this task
    /// spawned when the job ends (default `abandon`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_close: Option<ParentClose>,
    /// The outbound HTTP its guests may make (`wasi:http`); without it
    /// every request is refused.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::strict::optional_object"
    )]
    pub network: Option<NetworkSpec>,
    /// The tenant's secrets its guests may read through
    /// `wasi:config/store`, by name; they see no other.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(example = json!(["STRIPE_KEY"]))]
    pub secrets: Vec<String>,
    /// Its guests see a clock that starts at the job's creation and
    /// advances with the fuel spent, and random bytes seeded from the
    /// job's id: every attempt of a job, on any machine, gives the same
    /// output and fuel. Such a task may not declare `network` or `secrets`,
    /// and its guests cannot start other jobs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deterministic: bool,
    /// A deterministic task's result cache: a job due now whose input (in
    /// canonical form) and pinned digest match a job of the same tenant
    /// that completed within `ttl_ms` completes at once with its output.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::strict::optional_object"
    )]
    pub cache: Option<CacheSpec>,
    /// Stages this version beside the live one: this share of new jobs
    /// (chosen by a hash of the job's id) pins it until it is promoted
    /// (`POST /v1/tasks/{name}/promote`) or rolled back. Not kept in the
    /// stored definition: it says how the version goes live.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::strict::optional_object"
    )]
    pub rollout: Option<RolloutSpec>,
}

/// A canary rollout of a new version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RolloutSpec {
    /// The share of new jobs that pins the staged version, 0 to 100.
    #[schema(minimum = 0, maximum = 100)]
    pub percent: u8,
}

/// How long a deterministic task's results are reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CacheSpec {
    /// How long after a job completes its output serves later jobs of the
    /// same input (1 ms to 30 days).
    #[schema(minimum = 1, maximum = 2_592_000_000u64)]
    pub ttl_ms: u64,
}

/// Longest a result is reused: a month.
pub const MAX_CACHE_TTL_MS: u64 = 30 * 24 * 3600 * 1000;

/// A task's grant of outbound HTTP. The server clamps the caps to its
/// own, and refuses addresses of its own networks whatever is listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    /// Hosts its guests may call: `api.example.com` (on the scheme's
    /// default port), `*.stripe.com` (any name under it), a port named
    /// (`hooks.example.org:8443`), an IP address, or `*` for any host.
    #[schema(example = json!(["api.example.com", "*.stripe.com", "hooks.example.org:8443"]))]
    pub allow: Vec<String>,
    /// Most requests one attempt may make (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1)]
    pub max_requests: Option<u32>,
    /// Largest response body one request may read, in bytes (default 8 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1)]
    pub max_response_bytes: Option<u64>,
}

/// Most secrets one task may declare.
pub const MAX_TASK_SECRETS: usize = 64;

/// At most one job per key runs at once (`exclusive`), or a newer job
/// replaces a queued one with the same key (`supersedes`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Concurrency {
    pub key: String,
    pub mode: ConcurrencyMode,
    /// How many jobs of one key may run at once (1 to `MAX_KEY_LIMIT`;
    /// default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// Most jobs of one concurrency key that may run at once.
pub const MAX_KEY_LIMIT: u32 = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConcurrencyMode {
    Exclusive,
    Supersedes,
}

/// Whether `name` can name a task or a queue: 1 to 64 of `a-z 0-9 _ . -`,
/// starting with a letter or digit. Returns why not.
pub fn check_name(what: &str, name: &str) -> Result<(), String> {
    let ok_start = name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    let ok_rest = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'.' | b'-'));
    if name.len() <= MAX_NAME_LEN && ok_start && ok_rest {
        Ok(())
    } else {
        Err(format!(
            "{what} name {:?} is not allowed: use 1 to {MAX_NAME_LEN} characters of a-z, 0-9, '_', '.', '-', starting with a letter or digit",
            name.chars().take(80).collect::<String>()
        ))
    }
}

/// What is wrong with a task's throttle or debounce: its limits, and its
/// key when it is a template that does not parse.
fn flow_problems<T: crate::store::flow_key::FlowKey>(f: Option<&T>, problems: &mut Vec<String>) {
    let Some(f) = f else { return };
    problems.extend(f.problems());
    if super::key_template::is_template(f.key()) {
        if let Err(e) = super::key_template::parse(f.key()) {
            problems.push(format!("{}.key: {e}", T::FIELD));
        }
    }
}

impl TaskSpec {
    /// Checks what can be checked without the store; each problem in words
    /// a user can act on. (Schemas are compiled, and the component and the
    /// fallback looked up, where those live.)
    pub fn validate(&self, name: &str) -> Result<(), Vec<String>> {
        let mut problems = Vec::new();
        problems.extend(check_name("task", name).err());
        if let Some(q) = &self.queue {
            problems.extend(check_name("queue", q).err());
        }
        if let Some(f) = &self.fallback {
            problems.extend(check_name("fallback task", f).err());
            if f == name {
                problems.push(format!("task {name:?} cannot be its own fallback"));
            }
        }
        for (field, callback) in [("on_success", &self.on_success), ("on_fail", &self.on_fail)] {
            if let Some(c) = callback {
                problems.extend(check_name(&format!("{field} task"), c).err());
                if c == name {
                    problems.push(format!(
                        "task {name:?} cannot be its own {field} callback: each job would enqueue another for ever"
                    ));
                }
            }
        }
        if let Some(l) = &self.limits {
            for (field, zero) in [
                ("timeout_ms", l.timeout_ms == Some(0)),
                ("fuel", l.fuel == Some(0)),
                ("memory_mb", l.memory_mb == Some(0)),
            ] {
                if zero {
                    problems.push(format!("limits.{field} must be at least 1"));
                }
            }
        }
        if let Some(r) = &self.retry {
            if let Err(p) = r.validate() {
                problems.extend(p);
            }
        }
        if self.deadline_ms == Some(0) {
            problems.push("deadline_ms must be at least 1".into());
        }
        if let Some(c) = &self.concurrency {
            if c.limit.is_some_and(|l| l == 0 || l > MAX_KEY_LIMIT) {
                problems.push(format!(
                    "concurrency.limit must be between 1 and {MAX_KEY_LIMIT}"
                ));
            }
            if c.key.trim().is_empty() {
                problems.push("concurrency.key must not be empty".into());
            } else if super::key_template::is_template(&c.key) {
                if let Err(e) = super::key_template::parse(&c.key) {
                    problems.push(format!("concurrency.key: {e}"));
                }
            }
        }
        flow_problems(self.throttle.as_ref(), &mut problems);
        flow_problems(self.debounce.as_ref(), &mut problems);
        if let Some(n) = &self.network {
            if let Err(p) = crate::sandbox::network::Allowlist::parse(&n.allow) {
                problems.extend(p);
            }
            if n.max_requests == Some(0) {
                problems.push("network.max_requests must be at least 1".into());
            }
            if n.max_response_bytes == Some(0) {
                problems.push("network.max_response_bytes must be at least 1".into());
            }
        }
        if self.secrets.len() > MAX_TASK_SECRETS {
            problems.push(format!(
                "secrets names {} secrets; a task may declare at most {MAX_TASK_SECRETS}",
                self.secrets.len()
            ));
        }
        for name in &self.secrets {
            if let Err(e) = crate::secrets::rules::check_name(name) {
                problems.push(format!("secrets: {e}"));
            }
        }
        if self.deterministic {
            // What the network answers and what a secret holds come from
            // outside the attempt: a replay could not give them again.
            if self.network.is_some() {
                problems.push(
                    "a deterministic task may not declare network: what a host answers differs between attempts; drop one of the two".into(),
                );
            }
            if !self.secrets.is_empty() {
                problems.push(
                    "a deterministic task may not declare secrets: their values change outside the attempt; drop one of the two".into(),
                );
            }
        }
        if let Some(c) = &self.cache {
            if !self.deterministic {
                problems.push(
                    "cache needs \"deterministic\": true: only a deterministic task gives the same output for the same input".into(),
                );
            }
            if !(1..=MAX_CACHE_TTL_MS).contains(&c.ttl_ms) {
                problems.push(format!(
                    "cache.ttl_ms must be between 1 and {MAX_CACHE_TTL_MS} (30 days)"
                ));
            }
            // A hit completes without the end a callback follows.
            if self.on_success.is_some() || self.on_fail.is_some() {
                problems.push(
                    "cache cannot be combined with on_success or on_fail yet: a cached job completes without running its callbacks; drop one of them".into(),
                );
            }
        }
        if let Some(r) = &self.rollout {
            if r.percent > 100 {
                problems.push(format!(
                    "rollout.percent must be between 0 and 100, not {}",
                    r.percent
                ));
            }
        }
        for (field, schema) in [
            ("input_schema", &self.input_schema),
            ("output_schema", &self.output_schema),
        ] {
            if let Some(s) = schema {
                if !(s.is_object() || s.is_boolean()) {
                    problems.push(format!(
                        "{field} must be a JSON Schema: an object or a boolean"
                    ));
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}

/// Where a job of a task may lead to a new job or stage: its fallback
/// (the same job, another task) and its callbacks (new jobs), by kind.
pub fn successors(spec: &TaskSpec) -> Vec<(&'static str, String)> {
    [
        ("fallback", &spec.fallback),
        ("on_success", &spec.on_success),
        ("on_fail", &spec.on_fail),
    ]
    .into_iter()
    .filter_map(|(kind, t)| t.clone().map(|t| (kind, t)))
    .collect()
}

/// If `task`, leading to `first` (its fallback and callbacks, by kind),
/// can be reached again through the others' (`next_of`), the loop as
/// text: `a -on_success-> b -on_fail-> a`. Every task is looked at once.
pub fn cycle_through(
    task: &str,
    first: &[(&'static str, String)],
    next_of: impl Fn(&str) -> Vec<(&'static str, String)>,
) -> Option<String> {
    use std::collections::HashMap;
    // Each task reached, by the task and kind it was reached from.
    let mut from: HashMap<String, (String, &'static str)> = HashMap::new();
    let mut stack: Vec<String> = Vec::new();
    for (kind, t) in first {
        if !from.contains_key(t) {
            from.insert(t.clone(), (task.to_owned(), kind));
            stack.push(t.clone());
        }
    }
    while let Some(at) = stack.pop() {
        if at == task {
            let mut path = vec![task.to_owned()];
            let mut cur = task.to_owned();
            loop {
                let (prev, kind) = from[&cur].clone();
                path.push(format!("-{kind}->"));
                path.push(prev.clone());
                if prev == task {
                    break;
                }
                cur = prev;
            }
            path.reverse();
            return Some(path.join(" "));
        }
        for (kind, t) in next_of(&at) {
            if !from.contains_key(&t) {
                from.insert(t.clone(), (at.clone(), kind));
                stack.push(t);
            }
        }
    }
    None
}

/// If making `fallback` the fallback of `task` closes a loop, the loop, e.g.
/// `["a", "b", "c", "a"]`. `fallback_of` gives each existing task's current
/// fallback. Chains longer than `limit` count as a loop too, so a lookup
/// cannot run forever.
pub fn fallback_cycle(
    task: &str,
    fallback: &str,
    limit: usize,
    fallback_of: impl Fn(&str) -> Option<String>,
) -> Option<Vec<String>> {
    let mut chain = vec![task.to_owned(), fallback.to_owned()];
    let mut next = fallback.to_owned();
    while next != task {
        if chain.len() > limit {
            return Some(chain);
        }
        next = fallback_of(&next)?;
        chain.push(next.clone());
    }
    Some(chain)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const DIGEST: &str = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

    #[test]
    fn the_contract_shape_parses() {
        let body = format!(
            r#"{{"component": "{DIGEST}", "input_schema": {{"type": "object"}}, "queue": "emails",
                "limits": {{"timeout_ms": 5000}}, "retry": {{"max_attempts": 5, "backoff": {{"kind": "fixed", "delay_ms": 100}}}},
                "fallback": "email-fallback", "concurrency": {{"key": "customer", "mode": "exclusive"}}}}"#
        );
        let spec: TaskSpec = serde_json::from_str(&body).unwrap();
        assert_eq!(spec.component.to_string(), DIGEST);
        assert_eq!(
            spec.concurrency.as_ref().unwrap().mode,
            ConcurrencyMode::Exclusive
        );
        assert!(spec.validate("send-email").is_ok());
    }

    #[test]
    fn unknown_fields_and_bad_digests_are_refused_by_name() {
        let err = serde_json::from_str::<TaskSpec>(&format!(
            r#"{{"component": "{DIGEST}", "retires": 3}}"#
        ))
        .unwrap_err()
        .to_string();
        assert!(err.contains("retires"), "{err}");
        let err = serde_json::from_str::<TaskSpec>(r#"{"component": "sha1:abc"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a digest"), "{err}");
        let err = serde_json::from_str::<TaskSpec>(&format!(
            r#"{{"component": "{DIGEST}", "limits": {{"ram": 1}}}}"#
        ))
        .unwrap_err()
        .to_string();
        assert!(err.contains("ram"), "{err}");
    }

    #[test]
    fn validation_lists_every_problem() {
        let spec = TaskSpec {
            component: DIGEST.parse().unwrap(),
            input_schema: Some(serde_json::json!(42)),
            output_schema: None,
            queue: Some("Bad Queue".into()),
            limits: Some(LimitsSpec {
                timeout_ms: Some(0),
                fuel: None,
                memory_mb: Some(0),
            }),
            retry: Some(RetryPolicy {
                max_attempts: 0,
                ..RetryPolicy::default()
            }),
            fallback: Some("x".into()),
            on_success: Some("x".into()),
            on_fail: Some("Bad".into()),
            concurrency: Some(Concurrency {
                key: " ".into(),
                mode: ConcurrencyMode::Supersedes,
                limit: Some(0),
            }),
            throttle: Some(crate::store::throttle::Throttle {
                key: "{bad".into(),
                limit: 0,
                period_ms: crate::store::throttle::MAX_THROTTLE_PERIOD_MS + 1,
            }),
            debounce: Some(crate::store::debounce::Debounce {
                key: "{bad".into(),
                period_ms: 0,
                max_wait_ms: None,
            }),
            deadline_ms: None,
            parent_close: None,
            network: Some(NetworkSpec {
                allow: vec!["https://x.com".into(), "ok.example.com".into()],
                max_requests: Some(0),
                max_response_bytes: None,
            }),
            secrets: vec!["OK_KEY".into(), "1bad".into()],
            deterministic: true,
            cache: None,
            rollout: Some(RolloutSpec { percent: 101 }),
        };
        let problems = spec.validate("x").unwrap_err();
        assert_eq!(problems.len(), 21, "{problems:#?}");
    }

    #[test]
    fn a_deterministic_task_reads_nothing_from_outside_the_attempt() {
        let parse = |extra: &str| {
            serde_json::from_str::<TaskSpec>(&format!(
                r#"{{"component": "{DIGEST}", "deterministic": true{extra}}}"#
            ))
            .unwrap()
        };
        let alone = parse("");
        assert!(alone.deterministic);
        assert!(alone.validate("pure").is_ok());
        let with_network = parse(r#", "network": {"allow": ["api.example.com"]}"#);
        let problems = with_network.validate("pure").unwrap_err();
        assert!(
            problems[0].contains("may not declare network"),
            "{problems:?}"
        );
        let with_secrets = parse(r#", "secrets": ["KEY"]"#);
        let problems = with_secrets.validate("pure").unwrap_err();
        assert!(
            problems[0].contains("may not declare secrets"),
            "{problems:?}"
        );
        // Not deterministic: neither is a problem, and the field is not written.
        let mut plain = with_network.clone();
        plain.deterministic = false;
        assert!(plain.validate("pure").is_ok());
        assert!(!serde_json::to_string(&plain)
            .unwrap()
            .contains("deterministic"));
    }

    #[test]
    fn a_cache_needs_a_deterministic_task_a_ttl_in_range_and_no_callbacks() {
        let parse = |fields: &str| {
            serde_json::from_str::<TaskSpec>(&format!(r#"{{"component": "{DIGEST}"{fields}}}"#))
                .unwrap()
        };
        let ok = parse(r#", "deterministic": true, "cache": {"ttl_ms": 60000}"#);
        assert!(ok.validate("pure").is_ok());
        assert_eq!(ok.cache, Some(CacheSpec { ttl_ms: 60_000 }));
        let longest =
            format!(r#", "deterministic": true, "cache": {{"ttl_ms": {MAX_CACHE_TTL_MS}}}"#);
        assert!(parse(&longest).validate("pure").is_ok());
        for (fields, named) in [
            (
                r#", "cache": {"ttl_ms": 60000}"#.to_owned(),
                "deterministic",
            ),
            (
                r#", "deterministic": true, "cache": {"ttl_ms": 0}"#.to_owned(),
                "ttl_ms",
            ),
            (
                format!(
                    r#", "deterministic": true, "cache": {{"ttl_ms": {}}}"#,
                    MAX_CACHE_TTL_MS + 1
                ),
                "ttl_ms",
            ),
            (
                r#", "deterministic": true, "on_success": "next", "cache": {"ttl_ms": 1}"#
                    .to_owned(),
                "on_success",
            ),
        ] {
            let problems = parse(&fields).validate("pure").unwrap_err();
            assert_eq!(problems.len(), 1, "{fields}: {problems:?}");
            assert!(problems[0].contains(named), "{fields}: {problems:?}");
        }
        let err = serde_json::from_str::<TaskSpec>(&format!(
            r#"{{"component": "{DIGEST}", "cache": {{"ttl": 1}}}}"#
        ))
        .unwrap_err();
        assert!(err.to_string().contains("ttl"), "{err}");
    }

    #[test]
    fn a_rollout_takes_a_share_from_0_to_100() {
        let parse = |fields: &str| {
            serde_json::from_str::<TaskSpec>(&format!(r#"{{"component": "{DIGEST}"{fields}}}"#))
        };
        for ok in [0, 25, 100] {
            let spec = parse(&format!(r#", "rollout": {{"percent": {ok}}}"#)).unwrap();
            assert!(spec.validate("t").is_ok(), "{ok}");
            assert_eq!(spec.rollout, Some(RolloutSpec { percent: ok }));
        }
        let over = parse(r#", "rollout": {"percent": 101}"#).unwrap();
        let problems = over.validate("t").unwrap_err();
        assert!(problems[0].contains("rollout.percent"), "{problems:?}");
        for refused in [
            r#", "rollout": {"percent": 300}"#,
            r#", "rollout": {"percent": -1}"#,
            r#", "rollout": {"share": 5}"#,
            r#", "rollout": 5"#,
        ] {
            assert!(parse(refused).is_err(), "{refused}");
        }
    }

    #[test]
    fn names() {
        for good in ["a", "send-email", "v2.resize_image", "0day"] {
            assert!(check_name("task", good).is_ok(), "{good}");
        }
        let long = "a".repeat(MAX_NAME_LEN + 1);
        for bad in ["", "-x", "Upper", "with space", "ünï", "a/b", long.as_str()] {
            assert!(check_name("task", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn cycles_through_callbacks_are_found() {
        let edges: HashMap<&str, Vec<(&'static str, String)>> = [
            ("b", vec![("on_success", "a".to_owned())]),
            ("c", vec![("fallback", "d".to_owned())]),
            ("d", vec![("on_fail", "a".to_owned())]),
            ("e", vec![]),
        ]
        .into();
        let next = |t: &str| edges.get(t).cloned().unwrap_or_default();
        assert_eq!(
            cycle_through("a", &[("on_success", "b".into())], next).as_deref(),
            Some("a -on_success-> b -on_success-> a")
        );
        assert_eq!(
            cycle_through("a", &[("on_fail", "c".into())], next).as_deref(),
            Some("a -on_fail-> c -fallback-> d -on_fail-> a")
        );
        assert_eq!(
            cycle_through("a", &[("on_success", "e".into())], next),
            None
        );
        assert_eq!(
            cycle_through("x", &[("on_success", "b".into())], next),
            None
        );
        // A graph with a loop that does not pass through the task ends.
        let looped: HashMap<&str, Vec<(&'static str, String)>> = [
            ("p", vec![("on_success", "q".to_owned())]),
            ("q", vec![("on_success", "p".to_owned())]),
        ]
        .into();
        let next = |t: &str| looped.get(t).cloned().unwrap_or_default();
        assert_eq!(
            cycle_through("a", &[("on_success", "p".into())], next),
            None
        );
    }

    #[test]
    fn fallback_cycles_are_found() {
        let existing: HashMap<&str, &str> = [("b", "c"), ("c", "a"), ("d", "e")].into();
        let of = |t: &str| existing.get(t).map(|f| f.to_string());
        assert_eq!(
            fallback_cycle("a", "b", 10, of),
            Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
        );
        assert_eq!(fallback_cycle("a", "d", 10, of), None, "d → e ends");
        assert_eq!(
            fallback_cycle("a", "a", 10, of),
            Some(vec!["a".into(), "a".into()])
        );
        let chain: HashMap<String, String> = (0..100)
            .map(|i| (format!("t{i}"), format!("t{}", i + 1)))
            .collect();
        let long = |t: &str| chain.get(t).cloned();
        assert!(
            fallback_cycle("x", "t0", 16, long).is_some(),
            "too long a chain is refused"
        );
    }
}
