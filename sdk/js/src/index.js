// Write a taskbox task in JavaScript or TypeScript: `export default defineTask(async (input,
// ctx) => output)`. The function's result is the job's output; `new Snooze(ms)` or
// `new Wait(reason)` park the job; throwing `Fail` fails the attempt with a code. Nothing here
// imports the component's world, so a task's logic tests natively with `Ctx.test()`.

export class Fail extends Error {
  /**
   * @param {string} code machine-readable: a task's `non_retryable` list matches it
   * @param {string} [message]
   * @param {{retryable?: boolean}} [options] `retryable: false` (the default) fails the job now
   */
  constructor(code, message = "", { retryable = false } = {}) {
    super(message ? `${code}: ${message}` : code);
    this.name = "Fail";
    this.code = String(code);
    this.detail = String(message);
    this.retryable = Boolean(retryable);
  }

  /** A failure another attempt may get past. */
  static retry(code, message = "") {
    return new Fail(code, message, { retryable: true });
  }
}

/** Run again after `ms` milliseconds; it does not use up an attempt. */
export class Snooze {
  constructor(ms) {
    if (!Number.isSafeInteger(ms) || ms < 0) {
      throw new RangeError(`Snooze takes whole milliseconds, 0 or more, not ${ms}`);
    }
    this.ms = ms;
  }
}

/** Park the job until it is resumed through the API; `reason` (JSON) says what it waits for. */
export class Wait {
  constructor(reason = null) {
    this.reason = reason;
  }
}

const LEVELS = ["trace", "debug", "info", "warn", "error"];

function native(task) {
  return new Fail("unavailable", `${task}: other tasks run only inside taskbox, not in a native test`);
}

/** The attempt's side of the sandbox: the job, logs, progress, secrets, other tasks. */
export class Ctx {
  /** @param {{id: string, attempt: number, queue: string}} job */
  constructor(job, host = null, secrets = {}) {
    this.job = Object.freeze({ ...job });
    this.logs = [];
    this._host = host;
    this._secrets = { ...secrets };
  }

  /** A context for running a task's function natively: attempt `attempt` of job `test`. */
  static test({ attempt = 1, secrets = {} } = {}) {
    return new Ctx({ id: "test", attempt, queue: "default" }, null, secrets);
  }

  withSecret(name, value) {
    this._secrets[name] = value;
    return this;
  }

  log(level, message) {
    if (!LEVELS.includes(level)) throw new RangeError(`log level ${level} is none of ${LEVELS.join(", ")}`);
    message = String(message);
    if (this._host) this._host.log(level, message);
    else {
      this.logs.push({ level, message });
      console.error(`[${level}] ${message}`);
    }
  }
  debug(message) { this.log("debug", message); }
  info(message) { this.log("info", message); }
  warn(message) { this.log("warn", message); }
  error(message) { this.log("error", message); }

  /** Progress (0-100; more is taken as 100) with a short note; it also extends the job's lease. */
  progress(percent, note = "") {
    percent = Math.max(0, Math.min(100, Math.trunc(Number(percent)) || 0));
    if (this._host) this._host.progress(percent, String(note));
    else {
      this.logs.push({ level: "progress", message: `${percent}% ${note}`.trimEnd() });
      console.error(`[progress] ${percent}% ${note}`);
    }
  }

  /** The tenant's secret `name`, which the task declares; else the final failure `missing_secret`. */
  secret(name) {
    const found = this._host ? this._host.secret(name) : this._secrets[name];
    if (found === undefined || found === null) {
      throw new Fail(
        "missing_secret",
        `secret ${name} is not set: set it with \`taskbox secret set ${name}\` and declare it in the task's secrets`,
      );
    }
    return found;
  }

  /** Runs task `task` of this tenant to completion on `input` and returns its output. */
  invoke(task, input) {
    if (!this._host) throw native(task);
    return JSON.parse(this._host.invoke(task, toJson(input, "bad_input")));
  }

  /** Enqueues a job of task `task` on `input` as this job's child; its id. */
  spawn(task, input) {
    if (!this._host) throw native(task);
    return this._host.spawn(task, toJson(input, "bad_input"));
  }

  /** Starts a span of the task's own in its attempt's trace; `end()` it (spans started inside
   * nest under it and end with it). The host redacts the task's secrets and bounds what it
   * keeps; natively, and without a trace collector on the server, it does nothing. */
  span(name, attributes = {}) {
    const host = this._host;
    const handle = host ? host.startSpan(String(name), pairs(attributes)) : 0;
    return {
      event(eventName, eventAttributes = {}) {
        if (handle) host.addEvent(handle, String(eventName), pairs(eventAttributes));
      },
      error(message) {
        if (handle) host.setError(handle, String(message));
      },
      end() {
        if (handle) host.endSpan(handle);
      },
    };
  }
}

function pairs(attributes) {
  return Object.entries(attributes || {}).map(([k, v]) => [String(k), String(v)]);
}

function toJson(value, code) {
  let text;
  try {
    text = JSON.stringify(value === undefined ? null : value);
  } catch (e) {
    throw new Fail(code, `not JSON: ${e && e.message ? e.message : e}`);
  }
  return text;
}

/** Marks `fn(input, ctx)` as the task; `export default` what it returns. */
export function defineTask(fn) {
  if (typeof fn !== "function") throw new TypeError("defineTask takes a function of (input, ctx)");
  return Object.freeze({ __taskbox: 1, run: fn });
}

/**
 * One attempt from JSON text, as the component runs it: `{kind: "done" | "snooze" | "wait",
 * value}`, or a thrown `Fail` (the task's own; a final `bad_input` for input that is not
 * JSON; a final `bad_output` for an output that is not; a retryable `exception` for any
 * other exception).
 */
export async function runAttempt(task, job, inputText, host = null) {
  if (!task || task.__taskbox !== 1) {
    throw new Fail("no_task", "the module's default export is not a task: `export default defineTask(...)`");
  }
  const ctx = new Ctx(job, host);
  let input;
  try {
    input = JSON.parse(inputText);
  } catch (e) {
    throw new Fail("bad_input", `the input is not JSON: ${e.message}`);
  }
  let result;
  try {
    result = await task.run(input, ctx);
  } catch (e) {
    if (e instanceof Fail) throw e;
    const text = e && e.stack ? String(e.stack) : String(e);
    ctx.error(text);
    throw Fail.retry("exception", e && e.message ? `${e.name || "Error"}: ${e.message}` : String(e));
  }
  if (result instanceof Snooze) return { kind: "snooze", value: result.ms };
  if (result instanceof Wait) return { kind: "wait", value: toJson(result.reason, "bad_output") };
  return { kind: "done", value: toJson(result, "bad_output") };
}
