// {{name}}: a taskbox task. `taskbox build` bundles it with its npm packages (esbuild), makes
// dist/task.wasm (componentize-qjs, the QuickJS engine), and derives dist/schema.json from
// `Input`, which the server checks every job's input against.
import { defineTask, Fail } from "@taskbox/sdk";

/** A job's input. Its types and doc comments become the task's JSON Schema. */
export interface Input {
  /** Who to greet. */
  name: string;
  /**
   * How many times.
   * @minimum 1
   * @maximum 10
   * @default 1
   */
  times?: number;
}

/** What a finished job returns. */
export interface Output {
  greeting: string;
}

/**
 * One attempt. Throw `new Fail(code, message)` for a failure another attempt will not get
 * past, `Fail.retry(code, message)` for one it may.
 */
export default defineTask(async (input: Input, ctx): Promise<Output> => {
  const name = input.name.trim();
  if (!name) throw new Fail("empty_name", "say who to greet: `name` is empty");
  const times = Math.max(1, Math.min(10, input.times ?? 1));
  ctx.info(`greeting ${name} ${times} time(s)`);
  return { greeting: Array(times).fill(`Hello, ${name}!`).join(" ") };
});
