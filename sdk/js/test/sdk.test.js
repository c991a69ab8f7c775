// The SDK natively: `node --test test/`.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Ctx, Fail, Snooze, Wait, defineTask, runAttempt } from "../src/index.js";
import { QueuedPromise, drain, inspect } from "../src/queued-promise.js";

const JOB = { id: "j1", attempt: 1, queue: "default" };

const task = defineTask(async (input, ctx) => {
  if (!input.name) throw new Fail("empty_name", "say who");
  if (input.name === "later") return new Snooze(2000);
  if (input.name === "approval") return new Wait({ for: "approval" });
  if (input.name === "boom") throw new TypeError("boom");
  if (input.name === "cyclic") {
    const o = {};
    o.o = o;
    return o;
  }
  ctx.info(`greeting ${input.name}`);
  return { greeting: `Hello, ${input.name}!` };
});

async function fails(input, code, retryable) {
  await assert.rejects(runAttempt(task, JOB, input), (e) => {
    assert.ok(e instanceof Fail, String(e));
    assert.deepEqual([e.code, e.retryable], [code, retryable]);
    return true;
  });
}

test("an output is its JSON text; snooze and wait park the job", async () => {
  assert.deepEqual(await runAttempt(task, JOB, '{"name":"Ada"}'), { kind: "done", value: '{"greeting":"Hello, Ada!"}' });
  assert.deepEqual(await runAttempt(task, JOB, '{"name":"later"}'), { kind: "snooze", value: 2000 });
  assert.deepEqual(await runAttempt(task, JOB, '{"name":"approval"}'), { kind: "wait", value: '{"for":"approval"}' });
});

test("failures keep their codes: the task's, bad input, bad output, any other exception", async () => {
  await fails('{"name":""}', "empty_name", false);
  await fails("not json", "bad_input", false);
  await fails('{"name":"cyclic"}', "bad_output", false);
  await fails('{"name":"boom"}', "exception", true);
  await assert.rejects(runAttempt({}, JOB, "{}"), (e) => e.code === "no_task");
});

test("a test context keeps logs and secrets; other tasks only inside taskbox", () => {
  const ctx = Ctx.test({ attempt: 2 }).withSecret("API_KEY", "s3cret");
  ctx.info("hello");
  ctx.progress(150, "nearly");
  assert.equal(ctx.job.attempt, 2);
  assert.equal(ctx.secret("API_KEY"), "s3cret");
  assert.deepEqual(ctx.logs.map((l) => l.message), ["hello", "100% nearly"]);
  assert.throws(() => ctx.secret("OTHER"), (e) => e.code === "missing_secret" && !e.retryable);
  assert.throws(() => ctx.invoke("other", {}), (e) => e.code === "unavailable");
  assert.throws(() => ctx.log("loud", "x"), RangeError);
  assert.throws(() => new Snooze(-1), RangeError);
});

test("spans go to the host, and do nothing natively", () => {
  const native = Ctx.test().span("work", { k: 1 });
  native.event("e");
  native.end();
  const calls = [];
  const host = {
    startSpan: (name, attributes) => (calls.push(["start", name, attributes]), 7),
    addEvent: (span, name, attributes) => calls.push(["event", span, name, attributes]),
    setError: (span, message) => calls.push(["error", span, message]),
    endSpan: (span) => calls.push(["end", span]),
  };
  const span = new Ctx({ id: "j", attempt: 1, queue: "default" }, host).span("charge", { order: 12 });
  span.event("sent", { n: 1 });
  span.error("declined");
  span.end();
  assert.deepEqual(calls, [
    ["start", "charge", [["order", "12"]]],
    ["event", 7, "sent", [["n", "1"]]],
    ["error", 7, "declined"],
    ["end", 7],
  ]);
});

test("queued promises settle when drained, in order, and combine like the standard's", () => {
  const seen = [];
  const p = QueuedPromise.resolve(1).then((v) => {
    seen.push(`then ${v}`);
    return QueuedPromise.all([v + 1, QueuedPromise.resolve(3), { then: (r) => r(4) }]);
  });
  seen.push("sync");
  assert.equal(inspect(p).state, "pending");
  drain();
  assert.deepEqual(seen, ["sync", "then 1"]);
  assert.deepEqual(inspect(p), { state: "fulfilled", value: [2, 3, 4] });

  const settled = QueuedPromise.allSettled([QueuedPromise.reject(new Error("no")), 5]);
  const any = QueuedPromise.any([QueuedPromise.reject(1), QueuedPromise.resolve(2)]);
  const none = QueuedPromise.any([QueuedPromise.reject(1)]);
  const race = QueuedPromise.race([new QueuedPromise(() => {}), QueuedPromise.resolve("fast")]);
  const fin = QueuedPromise.reject(new Error("x")).finally(() => seen.push("finally"));
  drain();
  assert.equal(inspect(settled).value[0].status, "rejected");
  assert.deepEqual(inspect(settled).value[1], { status: "fulfilled", value: 5 });
  assert.equal(inspect(any).value, 2);
  assert.ok(inspect(none).value instanceof AggregateError);
  assert.equal(inspect(race).value, "fast");
  assert.equal(inspect(fin).state, "rejected");
  assert.ok(seen.includes("finally"));

  let resolveSelf;
  const self = new QueuedPromise((r) => {
    resolveSelf = r;
  });
  resolveSelf(self);
  drain();
  assert.ok(inspect(self).value instanceof TypeError);
});

test("a long chain of awaits drains without growing the stack", () => {
  let p = QueuedPromise.resolve(0);
  for (let i = 0; i < 100000; i++) p = p.then((v) => v + 1);
  drain();
  assert.deepEqual(inspect(p), { state: "fulfilled", value: 100000 });
});
