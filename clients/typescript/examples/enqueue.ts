// Enqueue a job, wait for its result, and wait out a 429 with its Retry-After.
//
//   TASKBOX_URL=http://127.0.0.1:8080 TASKBOX_TOKEN=… node dist/examples/enqueue.js TASK '{"name":"Ada"}' [COUNT]
//
// COUNT jobs (default 1) are enqueued one after another, so that a tenant with
// a low `enqueue_per_second` meets its rate limit and the client waits.

import { createTaskboxClient, TaskboxError } from "../src/index.js";

const [task, input = "{}", count = "1"] = process.argv.slice(2);
const baseUrl = process.env.TASKBOX_URL;
const token = process.env.TASKBOX_TOKEN;
if (!task || !baseUrl || !token) {
  console.error("usage: TASKBOX_URL=… TASKBOX_TOKEN=… node dist/examples/enqueue.js TASK [INPUT-JSON] [COUNT]");
  process.exit(2);
}

const taskbox = createTaskboxClient({ baseUrl, token });

try {
  const ids: string[] = [];
  for (let i = 0; i < Number(count); i++) {
    const job = await taskbox.enqueue(
      { task, input: JSON.parse(input) },
      { onRateLimited: (ms) => console.error(`rate limited: retrying after ${ms} ms`) },
    );
    console.error(`enqueued ${job.id}`);
    ids.push(job.id);
  }
  for (const id of ids) {
    const done = await taskbox.waitForJob(id, { timeoutMs: 30_000 });
    if (done.status !== "completed") {
      console.error(`job ${id} ${done.status}: ${JSON.stringify(done.error)}`);
      process.exit(1);
    }
    console.log(JSON.stringify(done.output));
  }
} catch (e) {
  if (e instanceof TaskboxError) {
    console.error(`taskbox said ${e.status} ${e.code}: ${e.message}`);
    process.exit(1);
  }
  throw e;
}
