// The taskbox dashboard: sign in with a token, then the pages of jobs,
// a job, tasks, queues and (for the admin) tenants, all read from the API
// with the token as the bearer. Every value is written as text, never as
// markup: a job's input or a guest's log cannot become code.

const TOKEN_KEY = "taskbox.token";
const state = {
  token: sessionStorage.getItem(TOKEN_KEY),
  who: null,
  // The live feed of the page shown, stopped when another is.
  feed: null,
};

// ---- small helpers -------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

const main = () => document.getElementById("main");

function show(...nodes) {
  main().replaceChildren(...nodes);
}

function when(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  return isNaN(d) ? iso : d.toLocaleString();
}

function ms(n) {
  if (n === null || n === undefined) return "—";
  return n < 1000 ? `${n} ms` : `${(n / 1000).toFixed(2)} s`;
}

function bytes(n) {
  if (!n) return "0 B";
  const units = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

function pretty(v) {
  return h("pre", { class: "json" }, v === undefined ? "—" : JSON.stringify(v, null, 2));
}

function badge(status) {
  return h("span", { class: `badge ${status}` }, status);
}

function can(scope) {
  return state.who && (state.who.admin || state.who.scopes.includes(scope));
}

function notice(text, kind) {
  return h("p", { class: `notice ${kind || ""}`, role: kind === "error" ? "alert" : "status" }, text);
}

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function api(path, options = {}) {
  const headers = { Authorization: `Bearer ${state.token}` };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(path, {
    method: options.method || "GET",
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await r.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  if (!r.ok) {
    const e = body && body.error;
    throw new ApiError(r.status, e && e.code, (e && e.message) || `HTTP ${r.status}`);
  }
  return body;
}

// ---- live updates --------------------------------------------------------

// Follows the tenant's events (server-sent, read through fetch so that the
// token goes as a header) and calls `changed` after each burst of them;
// where the stream cannot be had, polls instead.
function follow(query, changed) {
  stopFeed();
  const controller = new AbortController();
  let timer = null;
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(changed, 150);
  };
  const poll = setInterval(changed, 5000);
  state.feed = () => {
    controller.abort();
    clearTimeout(timer);
    clearInterval(poll);
  };
  (async () => {
    try {
      const r = await fetch(`/v1/events${query}`, {
        headers: { Authorization: `Bearer ${state.token}`, Accept: "text/event-stream" },
        signal: controller.signal,
      });
      if (!r.ok || !r.body) return;
      const reader = r.body.getReader();
      const decoder = new TextDecoder();
      let buffered = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffered += decoder.decode(value, { stream: true });
        let at;
        while ((at = buffered.indexOf("\n\n")) >= 0) {
          const block = buffered.slice(0, at);
          buffered = buffered.slice(at + 2);
          if (/^event: /m.test(block)) soon();
        }
      }
    } catch {
      // Aborted, or the stream broke: the poll goes on.
    }
  })();
}

function stopFeed() {
  if (state.feed) state.feed();
  state.feed = null;
}

// ---- sign in -------------------------------------------------------------

function signInPage(message) {
  const input = h("input", {
    id: "token",
    type: "password",
    autocomplete: "off",
    placeholder: "tbx_… or the admin token",
    required: true,
  });
  const form = h(
    "form",
    {
      id: "signin-form",
      class: "card narrow",
      onsubmit: async (ev) => {
        ev.preventDefault();
        await signIn(input.value.trim());
      },
    },
    h("h1", {}, "Sign in"),
    h("p", { class: "muted" }, "The dashboard acts with your token's tenant and scopes. It is kept in this browser tab only."),
    h("label", { for: "token" }, "Token"),
    input,
    h("button", { type: "submit", id: "signin" }, "Sign in"),
    message ? notice(message, "error") : null,
  );
  document.getElementById("nav").hidden = true;
  document.getElementById("who").hidden = true;
  show(form);
  input.focus();
}

async function signIn(token) {
  state.token = token;
  try {
    state.who = await api("/v1/whoami");
  } catch (e) {
    state.token = null;
    sessionStorage.removeItem(TOKEN_KEY);
    const why =
      e.status === 401
        ? "That token was not accepted: it is unknown, or mistyped."
        : `Cannot sign in: ${e.message}`;
    signInPage(why);
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, token);
  document.getElementById("nav").hidden = false;
  document.getElementById("nav-tenants").hidden = !state.who.admin;
  document.getElementById("who").hidden = false;
  document.getElementById("who-tenant").textContent = state.who.admin
    ? `admin · ${state.who.tenant}`
    : state.who.tenant;
  if (!location.hash || location.hash === "#/signin") location.hash = "#/jobs";
  else route();
}

function signOut() {
  stopFeed();
  state.token = null;
  state.who = null;
  sessionStorage.removeItem(TOKEN_KEY);
  location.hash = "#/signin";
  signInPage();
}

// ---- pages ---------------------------------------------------------------

async function jobsPage(params) {
  const filters = {
    status: params.get("status") || "",
    task: params.get("task") || "",
    queue: params.get("queue") || "",
  };
  const status = h(
    "select",
    { id: "filter-status", name: "status" },
    ["", "queued", "running", "waiting", "completed", "failed", "cancelled"].map((s) =>
      h("option", { value: s, selected: s === filters.status }, s || "any status"),
    ),
  );
  const task = h("input", { id: "filter-task", name: "task", placeholder: "task", value: filters.task });
  const queue = h("input", { id: "filter-queue", name: "queue", placeholder: "queue", value: filters.queue });
  const form = h(
    "form",
    {
      class: "filters",
      onsubmit: (ev) => {
        ev.preventDefault();
        const q = new URLSearchParams();
        if (status.value) q.set("status", status.value);
        if (task.value.trim()) q.set("task", task.value.trim());
        if (queue.value.trim()) q.set("queue", queue.value.trim());
        location.hash = `#/jobs?${q}`;
      },
    },
    status,
    task,
    queue,
    h("button", { type: "submit" }, "Filter"),
  );
  const body = h("tbody", { id: "jobs-body" });
  const more = h("div", { class: "more" });
  const live = h("span", { class: "muted live" }, "live");
  show(
    h("h1", {}, "Jobs ", live),
    form,
    h(
      "div",
      { class: "scroll" },
      h(
        "table",
        { id: "jobs" },
        h("thead", {}, h("tr", {}, ["Job", "Task", "Status", "Queue", "Attempts", "Created", "Finished"].map((t) => h("th", {}, t)))),
        body,
      ),
    ),
    more,
  );
  if (!can("jobs:read")) {
    body.replaceChildren(h("tr", {}, h("td", { colspan: 7 }, "This token lacks the jobs:read scope.")));
    return;
  }
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) query.set(k, v);
  const row = (j) =>
    h(
      "tr",
      { "data-id": j.id, "data-status": j.status },
      h("td", {}, h("a", { href: `#/job/${j.id}`, class: "mono" }, j.id)),
      h("td", {}, j.task.name, h("span", { class: "muted" }, ` v${j.task.version}`)),
      h("td", {}, badge(j.status)),
      h("td", {}, j.queue),
      h("td", {}, `${j.attempts} / ${j.max_attempts}`),
      h("td", {}, when(j.created_at)),
      h("td", {}, when(j.finished_at)),
    );
  const load = async (cursor, append) => {
    const q = new URLSearchParams(query);
    q.set("limit", "50");
    if (cursor) q.set("cursor", cursor);
    let page;
    try {
      page = await api(`/v1/jobs?${q}`);
    } catch (e) {
      more.replaceChildren(notice(e.message, "error"));
      return;
    }
    const rows = page.jobs.map(row);
    if (append) body.append(...rows);
    else body.replaceChildren(...rows);
    if (!page.jobs.length && !append) {
      body.replaceChildren(h("tr", {}, h("td", { colspan: 7, class: "muted" }, "No jobs.")));
    }
    more.replaceChildren(
      page.next_cursor
        ? h("button", { type: "button", id: "more", onclick: () => load(page.next_cursor, true) }, "Older jobs")
        : "",
    );
  };
  await load(null, false);
  // Live: the first page again after each burst of events.
  follow("", () => load(null, false));
}

async function jobPage(id) {
  // A render that was still waiting for the API when the viewer went to
  // another page (its live updates or its cancel button started it) must
  // not draw over that page, nor follow its job's events again.
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
    attempts = (await api(`/v1/jobs/${encodeURIComponent(id)}/attempts?limit=100`)).attempts;
  } catch {
    attempts = [];
  }
  const message = h("div", { id: "job-message" });
  const act = (label, path, body, idAttr) =>
    h(
      "button",
      {
        type: "button",
        id: idAttr,
        onclick: async () => {
          try {
            await api(`/v1/jobs/${encodeURIComponent(id)}/${path}`, { method: "POST", body });
            message.replaceChildren(notice(`${label}: done.`));
            jobPage(id);
          } catch (e) {
            message.replaceChildren(notice(`${label}: ${e.message}`, "error"));
          }
        },
      },
      label,
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
  const facts = [
    ["Status", badge(s)],
    ["Task", `${job.task.name} v${job.task.version}`],
    ["Pinned digest", h("span", { class: "mono", id: "digest" }, job.task.digest)],
    ["Queue", job.queue],
    ["Priority", job.priority],
    ["Attempts", `${job.attempts} of ${job.max_attempts}`],
    ["Created", when(job.created_at)],
    ["Due", when(job.run_at)],
    ["Started", when(job.started_at)],
    ["Finished", when(job.finished_at)],
  ];
  if (job.fallback) facts.push(["Fallback", `${job.fallback.name} v${job.fallback.version}`]);
  if (job.progress) facts.push(["Progress", `${job.progress.percent}% ${job.progress.note}`]);
  if (job.parent) facts.push(["Parent", h("a", { href: `#/job/${job.parent}`, class: "mono" }, job.parent)]);
  if (job.cached_from)
    facts.push([
      "Cached from",
      h("a", { href: `#/job/${job.cached_from}`, class: "mono", id: "cached-from" }, job.cached_from),
    ]);
  if (job.cancel_requested && s !== "cancelled") facts.push(["Cancel", "requested"]);
  const sections = [
    h("h1", {}, "Job ", h("span", { class: "mono" }, job.id)),
    actions,
    message,
    h("dl", { class: "facts card" }, facts.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
    h("h2", {}, "Input"),
    pretty(job.input),
  ];
  if (job.output !== null && job.output !== undefined) sections.push(h("h2", {}, "Output"), pretty(job.output));
  if (job.error) {
    sections.push(
      h("h2", {}, "Error"),
      h("p", { class: "notice error", id: "job-error" }, `${job.error.kind} (${job.error.code}): ${job.error.message}`),
    );
  }
  if (job.steps) {
    sections.push(
      h("h2", {}, "Steps"),
      h(
        "div",
        { class: "scroll" },
        h(
          "table",
          {},
          h("thead", {}, h("tr", {}, ["Step", "Kind", "Task", "Status", "Attempts"].map((t) => h("th", {}, t)))),
          h(
            "tbody",
            {},
            job.steps.map((st) =>
              h(
                "tr",
                {},
                h("td", {}, st.name),
                h("td", {}, st.kind),
                h("td", {}, st.task ? `${st.task.name} v${st.task.version}` : "—"),
                h("td", {}, badge(st.status)),
                h("td", {}, `${st.attempts} / ${st.max_attempts}`),
              ),
            ),
          ),
        ),
      ),
    );
  }
  if (job.children) {
    sections.push(
      h("h2", {}, "Children"),
      h("ul", {}, job.children.map((c) => h("li", {}, h("a", { href: `#/job/${c}`, class: "mono" }, c)))),
    );
  }
  sections.push(h("h2", {}, "Attempts"));
  if (!attempts.length) sections.push(h("p", { class: "muted" }, "No attempt has ended yet."));
  for (const a of attempts) {
    const lines = (a.log && a.log.lines) || [];
    sections.push(
      h(
        "details",
        { class: "attempt card", open: a === attempts[attempts.length - 1], "data-attempt": a.attempt },
        h(
          "summary",
          {},
          `Attempt ${a.attempt} · `,
          badge(a.outcome),
          ` · ${ms(a.duration_ms)} · fuel ${Number(a.fuel_used).toLocaleString()} · peak memory ${bytes(a.peak_memory_bytes)}`,
        ),
        h(
          "p",
          { class: "muted" },
          `${a.task.name} v${a.task.version} · ${when(a.started_at)} → ${when(a.finished_at)}`,
        ),
        a.error ? h("p", { class: "notice error" }, `${a.error.kind} (${a.error.code}): ${a.error.message}`) : null,
        h(
          "pre",
          { class: "log" },
          lines.length
            ? lines.map((l) => `[${Number(l.at_ms).toFixed(3)} ms] ${l.level} ${l.source} ${l.message}\n`).join("")
            : "(no log)",
        ),
      ),
    );
  }
  if (gone()) return;
  show(...sections);
  if (!["completed", "failed", "cancelled"].includes(s)) {
    follow(`?job=${encodeURIComponent(id)}`, () => jobPage(id));
  }
}

async function tasksPage(name) {
  if (name) {
    let t;
    try {
      t = await api(`/v1/tasks/${encodeURIComponent(name)}`);
    } catch (e) {
      show(h("h1", {}, "Task"), notice(e.status === 404 ? `Task ${name} was not found.` : e.message, "error"));
      return;
    }
    const d = t.definition || {};
    const r = t.rollout;
    const rollout = r
      ? [
          h("h2", {}, "Rollout"),
          h(
            "p",
            {},
            `Version ${r.version} gets ${r.percent} % of new jobs beside version ${r.live_version}, since `,
            when(r.started_at),
            ".",
          ),
          h(
            "div",
            { class: "scroll" },
            h(
              "table",
              {},
              h(
                "thead",
                {},
                h("tr", {}, ["Version", "Role", "Completed", "Failed", "Attempts", "Fuel", "Fuel per attempt"].map((x) => h("th", {}, x))),
              ),
              h(
                "tbody",
                {},
                r.figures.map((f) =>
                  h(
                    "tr",
                    {},
                    h("td", {}, f.version),
                    h("td", {}, f.version === r.version ? "staged" : "live"),
                    h("td", {}, f.completed),
                    h("td", {}, f.failed),
                    h("td", {}, f.attempts),
                    h("td", {}, f.fuel),
                    h("td", {}, f.attempts ? Math.round(f.fuel / f.attempts) : "—"),
                  ),
                ),
              ),
            ),
          ),
        ]
      : [];
    show(
      h("h1", {}, `Task ${t.name}`),
      h(
        "dl",
        { class: "facts card" },
        [
          ["Live version", t.version],
          ["Digest", h("span", { class: "mono" }, t.digest)],
          ["Queue", d.queue || "default"],
          ["Fallback", d.fallback || "—"],
          ["Created", when(t.created_at)],
        ].flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]),
      ),
      ...rollout,
      h("h2", {}, "Limits"),
      pretty(d.limits || "server defaults"),
      h("h2", {}, "Retry policy"),
      pretty(d.retry || "server defaults"),
      h("h2", {}, "Input schema"),
      pretty(d.input_schema || "none"),
      h("h2", {}, "Output schema"),
      pretty(d.output_schema || "none"),
      h("h2", {}, "Versions"),
      h(
        "div",
        { class: "scroll" },
        h(
          "table",
          {},
          h("thead", {}, h("tr", {}, ["Version", "State", "Digest", "Created"].map((x) => h("th", {}, x)))),
          h(
            "tbody",
            {},
            t.versions.map((v) =>
              h(
                "tr",
                {},
                h("td", {}, v.version),
                h("td", {}, (v.state || "").replace("_", " ")),
                h("td", { class: "mono" }, v.digest),
                h("td", {}, when(v.created_at)),
              ),
            ),
          ),
        ),
      ),
    );
    return;
  }
  let list;
  try {
    list = await api("/v1/tasks");
  } catch (e) {
    show(h("h1", {}, "Tasks"), notice(e.message, "error"));
    return;
  }
  show(
    h("h1", {}, "Tasks"),
    list.tasks.length
      ? h(
          "div",
          { class: "scroll" },
          h(
            "table",
            { id: "tasks" },
            h("thead", {}, h("tr", {}, ["Task", "Version", "Queue", "Digest", "Created"].map((x) => h("th", {}, x)))),
            h(
              "tbody",
              {},
              list.tasks.map((t) =>
                h(
                  "tr",
                  {},
                  h("td", {}, h("a", { href: `#/tasks/${encodeURIComponent(t.name)}` }, t.name)),
                  h("td", {}, t.version),
                  h("td", {}, t.queue),
                  h("td", { class: "mono" }, t.digest),
                  h("td", {}, when(t.created_at)),
                ),
              ),
            ),
          ),
        )
      : h("p", { class: "muted" }, "No tasks yet."),
  );
}

async function queuesPage() {
  let list;
  try {
    list = await api("/v1/queues");
  } catch (e) {
    show(h("h1", {}, "Queues"), notice(e.message, "error"));
    return;
  }
  const message = h("div", {});
  const statuses = ["queued", "running", "waiting", "completed", "failed", "cancelled"];
  show(
    h("h1", {}, "Queues"),
    message,
    list.queues.length
      ? h(
          "div",
          { class: "scroll" },
          h(
            "table",
            { id: "queues" },
            h(
              "thead",
              {},
              h("tr", {}, ["Queue", ...statuses, "Oldest queued", "", ""].map((x) => h("th", {}, x))),
            ),
            h(
              "tbody",
              {},
              list.queues.map((q) =>
                h(
                  "tr",
                  {},
                  h("td", {}, q.name),
                  statuses.map((st) => h("td", { class: "num" }, q.depth[st] ?? 0)),
                  h("td", {}, ms(q.oldest_queued_age_ms)),
                  h("td", {}, q.paused ? badge("paused") : ""),
                  h(
                    "td",
                    {},
                    can("jobs:run")
                      ? h(
                          "button",
                          {
                            type: "button",
                            onclick: async () => {
                              try {
                                await api(`/v1/queues/${encodeURIComponent(q.name)}/${q.paused ? "resume" : "pause"}`, {
                                  method: "POST",
                                });
                                queuesPage();
                              } catch (e) {
                                message.replaceChildren(notice(e.message, "error"));
                              }
                            },
                          },
                          q.paused ? "Resume" : "Pause",
                        )
                      : "",
                  ),
                ),
              ),
            ),
          ),
        )
      : h("p", { class: "muted" }, "No queues yet: a queue appears with its first job."),
  );
  follow("", () => queuesPage());
}

async function tenantsPage() {
  if (!state.who.admin) {
    show(h("h1", {}, "Tenants"), notice("Only the admin token sees the tenants.", "error"));
    return;
  }
  let list;
  try {
    list = await api("/v1/tenants");
  } catch (e) {
    show(h("h1", {}, "Tenants"), notice(e.message, "error"));
    return;
  }
  const rows = await Promise.all(
    list.tenants.map(async (t) => {
      let u = null;
      try {
        u = await api(`/v1/tenants/${encodeURIComponent(t.name)}/usage`);
      } catch {
        u = null;
      }
      const now = u && u.current;
      return h(
        "tr",
        {},
        h("td", {}, t.name),
        h("td", { class: "num" }, t.weight),
        h("td", { class: "num" }, now ? Number(now.fuel_used).toLocaleString() : "—"),
        h("td", { class: "num" }, now ? now.attempts : "—"),
        h("td", { class: "num" }, now ? now.jobs_ended.completed : "—"),
        h("td", { class: "num" }, now ? now.jobs_ended.failed : "—"),
        h("td", {}, when(t.created_at)),
      );
    }),
  );
  show(
    h("h1", {}, "Tenants"),
    h("p", { class: "muted" }, "Usage in the current minute."),
    h(
      "div",
      { class: "scroll" },
      h(
        "table",
        { id: "tenants" },
        h(
          "thead",
          {},
          h("tr", {}, ["Tenant", "Weight", "Fuel", "Attempts", "Completed", "Failed", "Created"].map((x) => h("th", {}, x))),
        ),
        h("tbody", {}, rows),
      ),
    ),
  );
}

// ---- routing -------------------------------------------------------------

async function route() {
  stopFeed();
  if (!state.token || !state.who) {
    signInPage();
    return;
  }
  const [path, query] = (location.hash.slice(1) || "/jobs").split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(query || "");
  for (const a of document.querySelectorAll("#nav a")) {
    a.classList.toggle("current", a.dataset.page === parts[0] || (a.dataset.page === "jobs" && parts[0] === "job"));
  }
  switch (parts[0]) {
    case "job":
      return jobPage(parts[1] || "");
    case "tasks":
      return tasksPage(parts[1]);
    case "queues":
      return queuesPage();
    case "tenants":
      return tenantsPage();
    default:
      return jobsPage(params);
  }
}

window.addEventListener("hashchange", () => {
  route().catch((e) => show(notice(e.message, "error")));
});
document.getElementById("signout").addEventListener("click", signOut);

if (state.token) signIn(state.token);
else signInPage();
