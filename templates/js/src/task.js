// {{name}}: a taskbox task. `taskbox build` bundles it with its npm packages (esbuild) and
// makes dist/task.wasm (componentize-qjs, the QuickJS engine).
import { defineTask, Fail } from "@taskbox/sdk";

/**
 * One attempt: `input` is the job's JSON input. Throw `new Fail(code, message)` for a failure
 * another attempt will not get past, `Fail.retry(code, message)` for one it may.
 */
export default defineTask(async (input, ctx) => {
  const name = String(input.name ?? "").trim();
  if (!name) throw new Fail("empty_name", "say who to greet: `name` is empty");
  const times = Math.max(1, Math.min(10, Number(input.times ?? 1)));
  ctx.info(`greeting ${name} ${times} time(s)`);
  return { greeting: Array(times).fill(`Hello, ${name}!`).join(" ") };
});
