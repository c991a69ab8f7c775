//! The callbacks of a job that ended (its task's `on_success` and
//! `on_fail`): their jobs built under the enqueue's rules, as deep as the
//! chain allows and charged to the tenant's rate, to be inserted with the
//! end they follow.

use crate::bounds::{MAX_CALLBACK_DEPTH, MAX_DELAY_MS};
use crate::enqueue::{prepare_job, EnqueueError, JobSpec};
use crate::registry::{Registry, RegistryError, TaskVersion};
use crate::store::{Action, Callbacks, ClaimedJob, Finalize, NewJob};
use serde_json::json;
use std::time::Duration;

/// A callback to make: task `name` of `tenant`'s, for the job `about`
/// says, whose input is `{"job": about, key: value}`.
pub struct Callback<'a> {
    pub tenant: &'a str,
    pub name: &'a str,
    pub about: serde_json::Value,
    pub key: &'a str,
    pub value: serde_json::Value,
}

/// The job of callback `call` for a job that ended, its input checked
/// against the callback's schema. `Ok(None)`: it can never be built
/// (logged), and the job ends without it; `Err`: the store did not answer,
/// so not now.
///
/// `depth` is the new job's callback depth: past `MAX_CALLBACK_DEPTH` it
/// is not made. It is charged to its tenant's enqueue rate, owed when the
/// bucket is empty: made all the same (an end must not lose it), due when
/// its token would have come. Either is what the note says.
pub async fn callback_job(
    registry: &Registry,
    call: Callback<'_>,
    depth: u32,
) -> Result<(Option<NewJob>, Option<String>), ()> {
    let Callback { tenant, name, .. } = call;
    let of = call.about["id"].as_str().unwrap_or_default().to_owned();
    if depth > MAX_CALLBACK_DEPTH {
        let note = format!(
            "callback task {name:?} was not enqueued: it would be {depth} callbacks deep, and a \
             chain of callbacks is at most {MAX_CALLBACK_DEPTH} long (do the tasks' callbacks \
             lead back to each other?)"
        );
        tracing::warn!(job = %of, callback = %name, depth, "a callback chain reached its most");
        return Ok((None, Some(note)));
    }
    let Some(mut new) = prepared_callback(registry, call, &of).await? else {
        return Ok((None, None));
    };
    new.callback_depth = depth;
    match registry.admission().owe(tenant).await {
        Ok(wait) if wait.is_zero() => Ok((Some(new), None)),
        Ok(wait) => {
            let ms = u64::try_from(wait.as_millis())
                .unwrap_or(u64::MAX)
                .min(MAX_DELAY_MS);
            new.run_at = crate::store::RunAt::After(ms);
            let note = format!(
                "callback task {name:?} was enqueued to run in {ms} ms: the tenant's enqueue \
                 rate is used up, and callbacks are charged to it"
            );
            Ok((Some(new), Some(note)))
        }
        Err(e) => {
            tracing::warn!(job = %of, error = %e, "the tenant's quotas cannot be read; the end is not written now");
            Err(())
        }
    }
}

/// The callback's job, its input checked, with a few tries while the store
/// is busy.
async fn prepared_callback(
    registry: &Registry,
    call: Callback<'_>,
    of: &str,
) -> Result<Option<NewJob>, ()> {
    let Callback {
        tenant,
        name,
        about,
        key,
        value,
    } = call;
    let mut input = json!({ "job": about });
    input[key] = value;
    let spec = JobSpec::of(name.to_owned(), input);
    let id = crate::job::new_id();
    let mut tries = 0;
    loop {
        match prepare_job(registry, id.clone(), tenant, spec.clone(), None, None).await {
            Ok(new) => return Ok(Some(new)),
            // The store was busy: worth another look.
            Err(EnqueueError::Store(e) | EnqueueError::Registry(RegistryError::Store(e))) => {
                if tries == 3 {
                    tracing::warn!(job = %of, callback = %name, error = %e, "a callback's task cannot be read; the job's end is not written now");
                    return Err(());
                }
                tries += 1;
                tracing::debug!(job = %of, callback = %name, error = %e, "a callback's task cannot be read now; trying again");
                tokio::time::sleep(Duration::from_millis(100 << tries)).await;
            }
            Err(e) => {
                tracing::warn!(job = %of, callback = %name, error = %e, "the task's callback cannot be enqueued; the job ends without it");
                return Ok(None);
            }
        }
    }
}

/// The job of the task's callback for where `action` takes the job (its
/// `on_success` for a completion, its `on_fail` for a failure for good),
/// built now, its input checked against the callback's schema, to be
/// inserted with the end. One that can never be built (its input breaks
/// the callback's schema) is logged and left out. One that cannot be
/// built for now (the store does not answer) is `Err`: the end is not
/// written at all, and the job is rescued and run again when its lease
/// runs out, rather than end without its callback.
///
/// A callback is one callback deeper than its job; past
/// `MAX_CALLBACK_DEPTH` it is not made. It is charged to its tenant's
/// enqueue rate, owed when the bucket is empty: it is made all the same
/// (the end must not lose it), due when its token would have come. Either
/// is said in the attempt's log.
pub(super) async fn attach_callbacks(
    registry: &Registry,
    task: &TaskVersion,
    (job, attempt_span): (&ClaimedJob, Option<&crate::otel::TraceParent>),
    f: &mut Finalize,
) -> Result<(), ()> {
    let (mut callbacks, note) = callbacks(registry, task, job, &f.action).await?;
    // They continue the trace of the attempt that made them.
    if let (Some(c), Some(span)) = (callbacks.as_mut(), attempt_span) {
        for new in [c.on_success.as_mut(), c.on_fail.as_mut()]
            .into_iter()
            .flatten()
        {
            new.traceparent = crate::otel::TraceParent::stored_for(&new.id, Some(span));
        }
        c.made_under = Some(*span);
    }
    f.callbacks = callbacks;
    if let (Some(note), Some(attempt)) = (note, f.attempt.as_mut()) {
        let log = attempt.log.get_or_insert_with(Default::default);
        log.lines.push(crate::attempt_log::LogLine {
            at_ms: (attempt.finished_at - attempt.started_at).max(0) as f64,
            level: crate::attempt_log::Level::Warn,
            source: crate::attempt_log::Source::Host,
            message: note,
        });
    }
    Ok(())
}

/// The callbacks `attach_callbacks` attaches, and what to say of them.
async fn callbacks(
    registry: &Registry,
    task: &TaskVersion,
    job: &ClaimedJob,
    action: &Action,
) -> Result<(Option<Box<Callbacks>>, Option<String>), ()> {
    let none = Ok((None, None));
    let (name, key, value) = match action {
        Action::Complete { output } => (
            match task.spec.on_success.as_ref() {
                Some(n) => n,
                None => return none,
            },
            "output",
            serde_json::from_str(output).unwrap_or(serde_json::Value::Null),
        ),
        Action::Fail { error } => (
            match task.spec.on_fail.as_ref() {
                Some(n) => n,
                None => return none,
            },
            "error",
            error.brief(),
        ),
        _ => return none,
    };
    let about = json!({
        "id": job.id,
        "task": job.own_task.as_deref().unwrap_or(&job.task.name),
        "queue": job.queue,
        "attempts": job.attempts,
    });
    let depth = job.callback_depth + 1;
    let call = Callback {
        tenant: &job.tenant,
        name,
        about,
        key,
        value,
    };
    let (new, note) = callback_job(registry, call, depth).await?;
    let Some(new) = new else {
        return Ok((None, note));
    };
    let callbacks = Box::new(match action {
        Action::Complete { .. } => Callbacks {
            on_success: Some(new),
            on_fail: None,
            made_under: None,
        },
        _ => Callbacks {
            on_success: None,
            on_fail: Some(new),
            made_under: None,
        },
    });
    Ok((Some(callbacks), note))
}
