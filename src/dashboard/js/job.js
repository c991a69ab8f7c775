// A job as what it is: its facts, then a timeline of its stages (a
// workflow's steps and the chain that ran, a task and the fallback that
// took over, or a job of one task as one stage), each with its pinned
// task and digest, the context it handed on and its attempts (times,
// outcome, fuel, memory, log), the job's parent and children, and the
// callbacks its end made (or the job whose end made it one).

import { api, can, follow } from "./api.js";
import { action, badge, bytes, count, facts, h, jobLink, ms, notice, pretty, show, task, when } from "./dom.js";

const CHILDREN_SHOWN = 50;

const ENDED = ["completed", "failed", "cancelled"];
// Stages that did not run: nothing to draw but their place.
const NOT_RUN = ["pending", "skipped"];
const MOST_ATTEMPTS = 1000;

async function allAttempts(id) {
  const out = [];
  let cursor = null;
  while (out.length < MOST_ATTEMPTS) {
    const q = new URLSearchParams({ limit: "100" });
    if (cursor !== null) q.set("cursor", String(cursor));
    const page = await api(`/v1/jobs/${encodeURIComponent(id)}/attempts?${q}`);
    out.push(...page.attempts);
    if (page.next_cursor === null || page.next_cursor === undefined) break;
    cursor = page.next_cursor;
  }
  return out;
}

function attemptCard(a, open) {
  const lines = (a.log && a.log.lines) || [];
  const net = a.network;
  return h(
    "details",
    { class: "attempt", open, "data-attempt": a.attempt, "data-outcome": a.outcome },
    h(
      "summary",
      {},
      `Attempt ${a.attempt} · `,
      badge(a.outcome),
      ` · ${ms(a.duration_ms)} · fuel ${count(a.fuel_used)} · peak memory ${bytes(a.peak_memory_bytes)}`,
    ),
    h("p", { class: "muted" }, `${task(a.task)} · `, when(a.started_at), " → ", when(a.finished_at)),
    net ? h("p", { class: "muted" }, `outbound HTTP: ${net.requests} requests, ${bytes(net.bytes_sent + net.bytes_received)}`) : null,
    a.error ? h("p", { class: "notice error" }, `${a.error.kind} (${a.error.code}): ${a.error.message}`) : null,
    h(
      "pre",
      { class: "log" },
      lines.length
        ? lines.map((l) => `[${Number(l.at_ms).toFixed(3)} ms] ${l.level} ${l.source} ${l.message}\n`).join("")
        : "(no log)",
    ),
  );
}

const KIND_WORDS = {
  task: "task",
  step: "step",
  fallback: "fallback",
  on_error: "on_error",
  on_cancel: "on_cancel",
};

function stageCard(stage, attempts, last) {
  const ran = !NOT_RUN.includes(stage.status);
  const span = ran
    ? [when(stage.started_at), " → ", stage.finished_at ? when(stage.finished_at) : "now"]
    : [stage.status === "skipped" ? "did not run" : "not reached"];
  return h(
    "li",
    {
      class: `stage ${ran ? "ran" : "not-run"}`,
      "data-seq": stage.seq,
      "data-kind": stage.kind,
      "data-step": stage.name,
      "data-status": stage.status,
    },
    h(
      "div",
      { class: "stage-head" },
      h("span", { class: `kind ${stage.kind}` }, KIND_WORDS[stage.kind] || stage.kind),
      h("strong", {}, ` ${stage.name} `),
      badge(stage.status),
      h("span", { class: "muted" }, ` ${task(stage.task)} · attempts ${stage.attempts} / ${stage.max_attempts} · `, ...span),
    ),
    h("p", { class: "mono muted digest" }, stage.task.digest),
    stage.error ? h("p", { class: "notice error" }, `${stage.error.kind} (${stage.error.code}): ${stage.error.message}`) : null,
    stage.output !== null && stage.output !== undefined
      ? h("details", { class: "context" }, h("summary", {}, "Output handed on"), pretty(stage.output))
      : null,
    attempts.map((a) => attemptCard(a, last && a === attempts[attempts.length - 1])),
  );
}

/// The stages that ran, in order, as one line: "first → middle → last
/// (failed) → on_error tell".
function chainWords(steps) {
  return steps
    .filter((s) => !NOT_RUN.includes(s.status))
    .map((s) => {
      const kind = s.kind === "step" || s.kind === "task" ? "" : `${s.kind} `;
      const end = s.status === "completed" ? "" : ` (${s.status})`;
      return `${kind}${s.name}${end}`;
    })
    .join(" → ");
}

export async function jobPage(id) {
  // A render that was still waiting for the API when the viewer went to
  // another page (its live updates or its buttons started it) must not
  // draw over that page, nor follow its job's events again.
  const here = location.hash;
  const gone = () => location.hash !== here;
  let job;
  try {
    job = await api(`/v1/jobs/${encodeURIComponent(id)}`);
  } catch (e) {
    if (gone()) return;
    show(
      h("h1", {}, "Job"),
      notice(e.status === 404 ? `Job ${id} was not found.` : e.message, "error"),
      h("p", {}, h("a", { href: "#/jobs" }, "All jobs")),
    );
    return;
  }
  let attempts = [];
  try {
    attempts = await allAttempts(id);
  } catch {
    attempts = [];
  }
  const message = h("div", { id: "job-message" });
  const act = (label, path, body, idAttr) =>
    action(
      label,
      message,
      async () => {
        await api(`/v1/jobs/${encodeURIComponent(id)}/${path}`, { method: "POST", body });
        jobPage(id);
      },
      { id: idAttr },
    );
  const s = job.status;
  const actions = h(
    "div",
    { class: "actions" },
    can("jobs:cancel") && ["queued", "running", "waiting"].includes(s) && !job.cancel_requested
      ? act("Cancel", "cancel", undefined, "cancel")
      : null,
    can("jobs:run") && s === "queued" ? act("Run now", "run", undefined, "run-now") : null,
    can("jobs:queue") && s === "waiting" ? act("Resume", "resume", {}, "resume") : null,
    can("jobs:queue") && s === "failed" ? act("Retry", "retry", {}, "retry") : null,
  );
  const steps = job.steps || [];
  const workflow = job.workflow;
  const fuel = attempts.reduce((n, a) => n + Number(a.fuel_used || 0), 0);
  const wall = attempts.reduce((n, a) => n + Number(a.duration_ms || 0), 0);
  const pairs = [
    ["Status", badge(s)],
    workflow
      ? ["Workflow", h("span", { id: "job-workflow" }, `${workflow.name} v${workflow.version}`)]
      : ["Task", h("span", { id: "job-task" }, task(job.task))],
    workflow ? null : ["Pinned digest", h("span", { class: "mono", id: "digest" }, job.task.digest)],
    ["Queue", job.queue],
    ["Priority", job.priority],
    workflow
      ? ["Attempts", `${job.attempts} over ${steps.filter((st) => !NOT_RUN.includes(st.status)).length} stages`]
      : ["Attempts", `${job.attempts} of ${job.max_attempts}`],
    ["Fuel", h("span", { id: "job-fuel" }, count(fuel))],
    ["Wall time", ms(wall)],
    ["Created", when(job.created_at)],
    ["Due", when(job.run_at)],
    ["Started", when(job.started_at)],
    ["Finished", when(job.finished_at)],
    job.fallback ? ["Fallback", h("span", { id: "job-fallback" }, task(job.fallback))] : null,
    steps.length ? ["Ran", h("span", { id: "job-chain" }, chainWords(steps) || "nothing yet")] : null,
    job.progress ? ["Progress", `${job.progress.percent}% ${job.progress.note}`] : null,
    job.parent ? ["Parent", jobLink(job.parent)] : null,
    job.callback_of
      ? ["Callback of", h("span", { id: "callback-of", "data-job": job.callback_of.job }, `${job.callback_of.kind} of `, jobLink(job.callback_of.job))]
      : null,
    job.cached_from ? ["Cached from", h("span", { id: "cached-from" }, jobLink(job.cached_from))] : null,
    job.concurrency_key ? ["Concurrency key", job.concurrency_key] : null,
    job.throttle ? ["Throttle", `${job.throttle.key}: ${job.throttle.limit} per ${ms(job.throttle.period_ms)}`] : null,
    job.debounce ? ["Debounce", `${job.debounce.key} (${ms(job.debounce.period_ms)})`] : null,
    job.fairness_key ? ["Fairness key", `${job.fairness_key} × ${job.fairness_weight || 1}`] : null,
    job.traceparent ? ["Trace", h("span", { class: "mono" }, job.traceparent)] : null,
    job.cancel_requested && s !== "cancelled" ? ["Cancel", "requested"] : null,
  ];
  const sections = [
    h("h1", {}, workflow ? "Workflow job " : "Job ", h("span", { class: "mono" }, job.id)),
    actions,
    message,
    facts(pairs, { id: "job-facts" }),
    h("h2", {}, "Input"),
    pretty(job.input, { id: "job-input" }),
  ];
  if (job.output !== null && job.output !== undefined) sections.push(h("h2", {}, "Output"), pretty(job.output, { id: "job-output" }));
  if (job.error) {
    sections.push(
      h("h2", {}, "Error"),
      h("p", { class: "notice error", id: "job-error" }, `${job.error.kind} (${job.error.code}): ${job.error.message}`),
    );
  }
  sections.push(h("h2", {}, workflow ? "Steps" : "Timeline"));
  // A job of one task has no stage rows: its task is its one stage.
  const stages = steps.length
    ? steps
    : [
        {
          seq: 0,
          kind: "task",
          name: job.task.name,
          task: job.task,
          status: s,
          attempts: job.attempts,
          max_attempts: job.max_attempts,
          output: null,
          error: null,
          started_at: job.started_at,
          finished_at: job.finished_at,
        },
      ];
  const bySeq = new Map(stages.map((st) => [st.seq, []]));
  const unplaced = [];
  for (const a of attempts) {
    const seq = a.step ? a.step.seq : steps.length ? null : 0;
    if (bySeq.has(seq)) bySeq.get(seq).push(a);
    else unplaced.push(a);
  }
  const lastRan = [...stages].reverse().find((st) => !NOT_RUN.includes(st.status));
  sections.push(
    h(
      "ol",
      { class: "timeline", id: "timeline" },
      stages.map((st) => stageCard(st, bySeq.get(st.seq), st === lastRan)),
    ),
  );
  if (unplaced.length) {
    sections.push(h("h3", {}, "Attempts of no stage"), ...unplaced.map((a) => attemptCard(a, false)));
  }
  if (!attempts.length) sections.push(h("p", { class: "muted" }, "No attempt has ended yet."));
  // Jobs linked to this one, each with its status (a job may spawn
  // thousands: the first CHILDREN_SHOWN are read, the rest listed as
  // links only): a list under `title` of `items`, `ids` each's job,
  // `describe` its item (given the job read, or null).
  const linked = async (title, listId, items, ids, describe) => {
    if (!items || !items.length) return;
    const read = await Promise.all(ids.slice(0, CHILDREN_SHOWN).map((c) => api(`/v1/jobs/${encodeURIComponent(c)}`).catch(() => null)));
    sections.push(h("h2", {}, `${title} (${items.length})`), h("ul", { id: listId }, items.map((x, i) => describe(x, read[i] || null))));
  };
  await linked("Callbacks", "callbacks", job.callbacks, (job.callbacks || []).map((c) => c.job), (c, made) =>
    h(
      "li",
      { "data-callback": c.job, "data-kind": c.kind, "data-status": made ? made.status : null },
      `${c.kind} → ${c.task}: `,
      jobLink(c.job),
      made ? [" ", badge(made.status)] : " (pruned)",
    ),
  );
  await linked("Children", "children", job.children, job.children || [], (c, child) =>
    h("li", { "data-child": c, "data-status": child ? child.status : null }, jobLink(c), child ? [" ", badge(child.status), " ", task(child.task)] : null),
  );
  if (gone()) return;
  show(...sections);
  if (!ENDED.includes(s)) {
    follow(`?job=${encodeURIComponent(id)}`, () => jobPage(id));
  }
}
