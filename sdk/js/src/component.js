// The component's export, `run`, over the `taskbox:sdk/guest` world's imports: bundled into
// the component by `taskbox build` (never imported natively, where those imports do not exist).
import host from "taskbox:task/host@0.1.0";
import orchestration from "taskbox:task/orchestration@0.1.0";
import trace from "taskbox:task/trace@0.1.0";
import store from "wasi:config/store@0.2.0-rc.1";
import { drain, inspect } from "./queued-promise.js";
import { Fail, runAttempt } from "./index.js";

function failure(f) {
  return { code: f.code, message: f.detail, retryable: f.retryable };
}

/** What an import threw: componentize-qjs throws a WIT error as an Error whose `payload` is
 * the record. */
function payload(thrown) {
  return thrown && thrown.payload !== undefined ? thrown.payload : thrown;
}

function fromHost(thrown) {
  // A WIT `failure` record thrown by an import.
  const e = payload(thrown);
  if (e && typeof e === "object" && typeof e.code === "string") {
    return new Fail(e.code, e.message || "", { retryable: Boolean(e.retryable) });
  }
  return Fail.retry("host_error", String(e));
}

const sandbox = {
  log: (level, message) => host.log(level, message),
  progress: (percent, note) => host.progress(percent, note),
  secret(name) {
    try {
      return store.get(name);
    } catch (e) {
      throw Fail.retry("secret_error", `reading secret ${name}: ${JSON.stringify(payload(e))}`);
    }
  },
  invoke(task, input) {
    try {
      return orchestration.invoke(task, input);
    } catch (e) {
      throw fromHost(e);
    }
  },
  spawn(task, input) {
    try {
      return orchestration.spawn(task, input);
    } catch (e) {
      throw fromHost(e);
    }
  },
  startSpan: (name, attributes) => trace.startSpan(name, attributes),
  addEvent: (span, name, attributes) => trace.addEvent(span, name, attributes),
  setError: (span, message) => trace.setError(span, message),
  endSpan: (span) => trace.endSpan(span),
};

/** The world's `run` for `task`: one attempt, its promises settled before it returns. */
export function componentRun(task) {
  return function run(job, input) {
    const attempt = runAttempt(task, { id: job.id, attempt: job.attempt, queue: job.queue }, input, sandbox);
    drain();
    const { state, value } = inspect(attempt);
    if (state === "fulfilled") {
      if (value.kind === "snooze") return { tag: "snooze", val: value.value };
      if (value.kind === "wait") return { tag: "wait", val: value.value };
      return { tag: "done", val: value.value };
    }
    if (state === "rejected") {
      throw failure(value instanceof Fail ? value : Fail.retry("exception", String(value)));
    }
    throw failure(
      new Fail(
        "never_settled",
        "the task's promise never settled: it awaited something that does not finish inside the attempt (a timer, or I/O the sandbox does not provide)",
      ),
    );
  };
}
