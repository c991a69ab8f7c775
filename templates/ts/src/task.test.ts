// The task's logic, natively: `npm test` (node --test, TypeScript through tsx).
import assert from "node:assert/strict";
import { test } from "node:test";
import { Ctx, Fail } from "@taskbox/sdk";
import task from "./task.js";

test("greets by name", async () => {
  const out = await task.run({ name: "Ada", times: 2 }, Ctx.test());
  assert.deepEqual(out, { greeting: "Hello, Ada! Hello, Ada!" });
});

test("an empty name fails for good", async () => {
  await assert.rejects(
    Promise.resolve().then(() => task.run({ name: " " }, Ctx.test())),
    (e: unknown) => e instanceof Fail && e.code === "empty_name" && !e.retryable,
  );
});
